"""Default-schedule rules for packed convolutions that the general packed-convolution rule
(``packed_conv_rule`` in default_cpu.py) leaves slow.

- ``shallow_conv_rule``: a conv whose input block is a few channels (an RGB stem, NCHW3c): per
  output tile the reduction is only kh x kw x 3 taps, so the loop overhead of its kw and channel
  loops weighs as much as the multiply-adds; those two loops are unrolled into the tile's
  straight-line code. With a single block of output channels (the small CNN's RGB conv) its own
  tile: up to SHALLOW_COLUMNS columns, tasks of a band of rows reading the input in place (the pad inlined
  into the conv's loads, as the packed-pool rule does): a separate pass over a 3-channel layout
  vectorises badly, and a copy of the band's padded rows cost more than the conditional loads.
  With an even number of output
  channel blocks (resnet's 7x7 stride-2 stem: 4 blocks of 16) the wide tile below serves it
  instead, kw unrolled, in tasks of a band of rows that pad their input rows themselves: each
  broadcast input feeds two multiply-adds (the 1-block tile is bound by those loads), about 1.8x
  faster than the 1-block tile with a separate pad.
- ``wide_conv_rule``: a packed conv whose input block is a reduction loop of its own (NCHW{x}c
  with x <= 16 loaded at ``ic``; not resnet's NCHW16c convs, which load ``ic % 16`` and are at
  the machine's peak with the 1-block tile already): two channel blocks x up to 12 columns.
  A 3x3 stride-2 conv over blocks of 16 input channels takes it too when its rows are 8 columns
  or wider: the stride leaves few broadcast inputs that neighbouring kw taps share. With 1 MB of
  weights or more it prefetches them, as the one-block tile does. With one
  pair of output blocks (32 channels) each task computes the padded input rows it reads, as
  no other pair would repeat them. A padded conv that takes neither tile, with at most
  BANDED_PAD_MAX_BLOCKS output blocks and a padded input of BANDED_PAD_MIN_BYTES or more
  (resnet18's 56x56 64-channel 3x3 convs), gets the banded tile: tasks of a band of rows, the
  output blocks inside a task, each task computing its band's padded rows (no separate pad pass
  whose output has left the cache when the conv reads it).

Every tile reduces over (ic_outer, kh, kw, ic_inner) (``channels_inside_taps``), so the weights
stream in memory order."""
from __future__ import annotations

from ...ir import tir
from ...ir.arith import as_const_int
from ...ir.stmt_functor import post_order_visit
from .schedule import Schedule
from .state import BlockRV, LoopRV
from .generic_rules import conv_columns, packed_conv_rule
from .rule_support import (PARALLEL_MIN_BYTES, buffer_bytes, channels_inside_taps, conv_weights, elem_bytes,
                           inline_blocks, is_reduction, iter_bindings, local_tile, loop_bound_to, loop_extent,
                           loop_roles, matmul_loads, output_dtype, prefetch_weights, spatial_producers, vector_lanes,
                           vectorize_tile, work_bytes_of)

__all__ = ["shallow_conv_rule", "wide_conv_rule", "SHALLOW_CHANNELS", "SHALLOW_UNROLL", "SHALLOW_COLUMNS",
           "SHALLOW_MIN_TASKS", "SHALLOW_PAD_BYTES", "WIDE_STEM_BAND_BYTES", "WIDE_BLOCKS", "WIDE_COLUMNS", "WIDE_ROW_TASK_BYTES",
           "WIDE_STRIDED_MIN_WIDTH", "WIDE_STRIDED_MAX_BYTES",
           "WIDE_PREFETCH_MIN_BYTES", "BANDED_PAD_MAX_BLOCKS", "BANDED_PAD_MIN_BYTES",
           "BANDED_PAD_MIN_TASKS", "BANDED_PAD_BAND_BYTES"]

SHALLOW_CHANNELS = 4  # input channels per packed block at most (RGB: 3)
# Multiply-adds of the unrolled kh x kw taps at most (kh x kw x the tile's columns): a 7x7 stem's
# 7 x 7 x 14 fits; beyond, the code outgrows the instruction cache.
SHALLOW_UNROLL = 1024


def _compute_pads_at(sch: Schedule, producers: list[tir.Block], loop: LoopRV, lanes: int | None = None) -> None:
    """Compute each pad producer under ``loop`` (a task makes the padded rows it reads); its
    innermost loop vectorised when it fits in ``lanes``, else (or without ``lanes``) unrolled."""
    for producer in producers:
        pad = sch.get_block(producer.name_hint)
        sch.compute_at(pad, loop)
        innermost = sch.get_loops(pad)[-1]
        if lanes is None:
            sch.unroll(innermost)
        elif (loop_extent(sch, innermost) or 0) <= lanes:
            sch.vectorize(innermost)


def _input_block(sch: Schedule, block_rv: BlockRV, loops: list[LoopRV], modulo: bool = False) -> int | None:
    """Extent of the reduction loop bound to an operand's innermost (channel) index, or None;
    ``modulo``: also when that index is ``ic % C`` over an ``ic`` of extent C."""
    block = sch.get(block_rv)
    loads = matmul_loads(block)
    if loads is None:
        return None
    bound = iter_bindings(sch, block_rv, block)
    reduce_vars = {iv.var for iv in block.iter_vars if iv.iter_type == tir.IterType.CommReduce}
    extents = {id(iv.var): iv.dom.extent.value for iv in block.iter_vars
               if iv.dom is not None and isinstance(iv.dom.extent, tir.IntImm)}
    for load in loads:
        index = load.indices[-1]
        if modulo and isinstance(index, tir.FloorMod) and isinstance(index.b, tir.IntImm) \
                and extents.get(id(index.a)) == index.b.value:
            index = index.a  # ``ic % 3`` over an ic of 3 (the zero pipeline leaves it unsimplified)
        if index in reduce_vars:
            loop = loop_bound_to(sch, loops, bound.get(index))
            return loop_extent(sch, loop) if loop is not None else None
    return None


def shallow_conv_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A packed conv with at most SHALLOW_CHANNELS input channels per block: with an even number
    of output blocks the wide tile, kw unrolled and the pad per task; with one output block the
    banded one-block tile; else the packed-conv tile with its kh and kw loops unrolled."""
    block = sch.get(block_rv)
    if not is_reduction(block):
        return False
    outer = sch.get_loops(block_rv)
    # The zero pipeline's stem reads ``ic % 3``, the default's ``ic``: both forms get the same steps.
    channels = _input_block(sch, block_rv, outer, modulo=True)
    if channels is None or channels > SHALLOW_CHANNELS:
        return False
    producers = spatial_producers(sch, block_rv)
    chunks = loop_extent(sch, outer[1]) if len(outer) > 1 else None  # NCHW{x}c: n, the output's channel blocks
    if chunks is not None and chunks % WIDE_BLOCKS == 0 and _wide_tile(sch, block_rv, outer, shallow=True):
        return True
    if chunks == 1 and _one_block_tile(sch, block_rv, outer):
        return True
    if not packed_conv_rule(sch, block_rv):
        return False
    loops = sch.get_loops(block_rv)  # task, column block, reductions..., columns, channels
    reduction = loops[2:-2]
    if len(reduction) < 2:
        return False
    kh, kw = reduction[-2:]
    columns = loop_extent(sch, loops[-2]) or 1
    if (loop_extent(sch, kh) or SHALLOW_UNROLL) * (loop_extent(sch, kw) or SHALLOW_UNROLL) * columns > SHALLOW_UNROLL:
        return False
    sch.unroll(kh)
    sch.unroll(kw)
    if chunks == 1:  # one block of output channels: nothing repeats the padded rows of a task
        _compute_pads_at(sch, producers, loops[0])
    return True


# Output channel blocks of the two-block tile and its columns at most: 2 x 12 accumulators, two
# weight vectors and the broadcast input within AVX-512's 32 registers. Each broadcast input
# value then feeds two multiply-adds, so the loads no longer bound the loop (one per FMA before).
WIDE_BLOCKS = 2
# A wide tile whose weights are this small or smaller (they stay in L2 while a task runs every pair)
# and the RGB stem take tasks of one output row, every pair of blocks inside, each task computing the
# row's padded input once (no separate pad pass, no row padded once per pair): resnet18's stem
# 1145 -> ~1050 us, its 3x3 stride-2 64 -> 128 conv (295 KB) 566-573 -> 512-532 us at 1 thread; the
# 128 -> 256 one (1.18 MB) was no faster.
WIDE_ROW_TASK_BYTES = 512 * 1024
WIDE_COLUMNS = 12
# The two-block tile prefetches its weights (as the one-block tile does) when they are this large:
# resnet18's 4.7 MB stride-2 256 -> 512 conv streams them from memory; its 64 -> 128 one (295 KB)
# ran 565 -> 640 us with the prefetch (two weight vectors per tap take two prefetches beside the
# loads the stride leaves).
WIDE_PREFETCH_MIN_BYTES = 1024 * 1024


def wide_conv_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A packed conv with an even number of output channel blocks whose input block is a reduction
    loop of its own or a strided one (``_strided_blocked``): a register tile of two channel
    blocks x up to WIDE_COLUMNS output columns (the packed-conv tile, doubled along the output
    channels), tasks of (outer, channel pair, row) in parallel, the epilogue folded. Else a padded
    conv with few output blocks and a large padded input: the banded tile (``_banded_pad_tile``)."""
    block = sch.get(block_rv)
    if not is_reduction(block) or matmul_loads(block) is None:
        return False
    outer = sch.get_loops(block_rv)
    if len(outer) < 6:
        return False
    if _input_block(sch, block_rv, outer) is None and not _strided_blocked(sch, block_rv, outer):
        return _banded_pad_tile(sch, block_rv, outer)
    return _wide_tile(sch, block_rv, outer)


def _output_loops(sch: Schedule, block_rv: BlockRV, block: tir.Block, outer: list[LoopRV],
                  unit_chunk: bool = False) -> tuple[LoopRV, LoopRV, LoopRV, LoopRV] | None:
    """The (channel block, row, column, lane) loops of a reduction into ``out[n, chunk, y, x, c]``
    when they are ``outer[1:5]`` in that order and every loop after them a reduction; None when the
    block is not of that form. ``unit_chunk``: one block of output channels, ``outer[1]`` a unit
    loop whose index Simplify made a constant (so nothing binds it)."""
    store = block.body
    if len(store.indices) != 5:
        return None
    bound = iter_bindings(sch, block_rv, block)
    found = [loop_bound_to(sch, outer, bound.get(index)) for index in store.indices[1:]]
    if unit_chunk:
        if loop_extent(sch, outer[1]) != 1:
            return None
        found[0] = outer[1]
    if any(lp is None for lp in found):
        return None
    roles = loop_roles(sch, block_rv, outer)
    position = {id(lp): n for n, lp in enumerate(outer)}
    if roles is None or [position[id(lp)] for lp in found] != [1, 2, 3, 4] or roles[:5] != ["S"] * 5 \
            or roles[5:] != ["R"] * (len(outer) - 5):
        return None
    return found[0], found[1], found[2], found[3]


def _band_rows(height: int, halo: int, pad_row: int, min_tasks: int, max_bytes: int, batch: int = 1) -> int:
    """Output rows per band: the most that divide ``height`` and leave at least ``min_tasks``
    tasks (``batch`` x bands) whose padded rows (the band's and ``halo`` more, ``pad_row`` bytes
    each) fit in ``max_bytes``; 1 when none do."""
    return max(r for r in range(1, height + 1) if height % r == 0 and (
        r == 1 or (batch * height // r >= min_tasks and (r + halo) * pad_row <= max_bytes)))


# The banded tile: a conv of at most BANDED_PAD_MAX_BLOCKS output blocks whose padded input is
# BANDED_PAD_MIN_BYTES or more (past L2 with the input beside it). Tasks of a band of rows (at least
# BANDED_PAD_MIN_TASKS bands, the band's padded rows within BANDED_PAD_BAND_BYTES) compute those
# rows once and run every output block over them. resnet18's 56x56 64 -> 64 convs: 950 -> 915 us
# each alone at 1 thread; with 8 output blocks (28x28, 128 channels) 1-3% slower, with 16 or 32
# blocks (14x14, 7x7) 5-25% slower: each band streams all the weights again.
BANDED_PAD_MAX_BLOCKS = 4
BANDED_PAD_MIN_BYTES = 512 * 1024
BANDED_PAD_MIN_TASKS = 4
BANDED_PAD_BAND_BYTES = 256 * 1024


def _banded_pad_tile(sch: Schedule, block_rv: BlockRV, outer: list[LoopRV]) -> bool:
    """The packed-conv tile (one block x up to PACKED_CONV_COLUMNS columns) in tasks of (outer, a
    band of rows), the output blocks and the band's rows inside a task, each task computing the
    padded input rows of its band; only for a padded conv of BANDED_PAD_MAX_BLOCKS output blocks
    at most whose padded input is BANDED_PAD_MIN_BYTES or more."""
    block = sch.get(block_rv)
    producers = spatial_producers(sch, block_rv)
    loops = _output_loops(sch, block_rv, block, outer)
    if not producers or loops is None or _pad_bytes(producers) < BANDED_PAD_MIN_BYTES:
        return False
    chunk, row, col, lane = loops
    dtype = output_dtype(block)
    lanes = vector_lanes(dtype)
    chunks, height, width = loop_extent(sch, chunk), loop_extent(sch, row), loop_extent(sch, col)
    if chunks is None or chunks > BANDED_PAD_MAX_BLOCKS or height is None or width is None \
            or loop_extent(sch, lane) != lanes:
        return False
    pad_row = _block_row_bytes(producers)
    halo = (loop_extent(sch, outer[-2]) or 1) - 1  # kh - 1 rows beyond the band
    rows = _band_rows(height, halo, pad_row, BANDED_PAD_MIN_TASKS, BANDED_PAD_BAND_BYTES)
    work_bytes = work_bytes_of(sch, outer[:5], dtype)
    b0, b1 = sch.split(row, [None, rows])
    x0, x1 = sch.split(col, [None, conv_columns(width)])
    reduction = outer[5:]
    sch.reorder(outer[0], b0, chunk, b1, x0, *reduction, x1, lane)
    reduction = channels_inside_taps(sch, block_rv, reduction)
    task = sch.fuse(outer[0], b0)
    init, write_back = local_tile(sch, block_rv, x0, reduction[0])
    sch.unroll(x1)
    sch.vectorize(lane)
    for other in (init, write_back):
        vectorize_tile(sch, other, x0)
    _compute_pads_at(sch, producers, task, lanes)  # the band's padded rows, a vector of channels at a time
    if work_bytes >= PARALLEL_MIN_BYTES:
        sch.parallel(task)
    prefetch_weights(sch, block_rv, reduction)
    return True


# A strided conv over blocks of input channels takes the two-block tile when its output rows are
# this wide or wider: resnet18's 3x3 stride-2 convs to 28 and 14 columns ran 2-12% faster (alone,
# CPU time, A/B); the one to 7 columns (512 outputs) ran as fast or slower with it. And when its
# weights are WIDE_STRIDED_MAX_BYTES or less: larger ones stream from memory inside a model, where
# the one-block tile's weight prefetch pays more (resnet18's 128 -> 256 one, 1.18 MB: 588-602 ->
# 505-527 us inside the model at 1 thread; its 64 -> 128 one, 295 KB, is faster wide: 503-518 us
# against 544-557).
WIDE_STRIDED_MIN_WIDTH = 8
WIDE_STRIDED_MAX_BYTES = 512 * 1024


def _strided_blocked(sch: Schedule, block_rv: BlockRV, outer: list[LoopRV]) -> bool:
    """Whether a packed conv reads its input at ``ic % B`` with a column stride over 1 and a
    kernel wider than 1 (a 3x3 stride-2 conv) into rows of WIDE_STRIDED_MIN_WIDTH columns or
    more, with WIDE_STRIDED_MAX_BYTES of weights or less: the one-block tile loads a broadcast
    input per multiply-add there (the stride leaves few inputs that neighbouring kw taps share),
    the two-block tile halves those loads."""
    block = sch.get(block_rv)
    if matmul_loads(block) is None or len(block.body.indices) != 5:
        return False
    weights = conv_weights(block)
    if weights is None or buffer_bytes(weights) > WIDE_STRIDED_MAX_BYTES:
        return False
    bound = iter_bindings(sch, block_rv, block)
    col = block.body.indices[3]
    col_loop = loop_bound_to(sch, outer, bound.get(col))
    width = loop_extent(sch, col_loop) if col_loop is not None else None
    if width is None or width < WIDE_STRIDED_MIN_WIDTH:
        return False
    # the reduction variables of more than one step (a 1x1 kernel's unit kw does not count)
    taps = {iv.var for iv in block.iter_vars if iv.iter_type == tir.IterType.CommReduce
            and not (isinstance(iv.dom.extent, tir.IntImm) and iv.dom.extent.value == 1)}
    return any(any(isinstance(n, tir.Var) and n in taps for n in found) for found in _strided_columns(block))


def _strided_columns(block: tir.Block) -> list[list[object]]:
    """The nodes of the column index of each packed input load (``ic % B`` last) that steps more
    than one input column per output column (a strided conv's)."""
    col = block.body.indices[3]
    strided = []
    for load in matmul_loads(block) or []:
        if len(load.indices) != 5 or not isinstance(load.indices[-1], tir.FloorMod):
            continue
        found: list = []
        post_order_visit(load.indices[3], found.append)
        if any(isinstance(n, tir.Mul) and any(x is col for x in (n.a, n.b))
               and any(isinstance(x, tir.IntImm) and x.value > 1 for x in (n.a, n.b)) for n in found):
            strided.append(found)
    return strided


def _wide_tile(sch: Schedule, block_rv: BlockRV, outer: list[LoopRV], shallow: bool = False) -> bool:
    """wide_conv_rule's steps once its block is known to be a conv; ``shallow`` (an RGB stem) also
    unrolls the kw loop. Convs of at most WIDE_ROW_TASK_BYTES of weights make each task one output
    row of every channel pair, the stem a band of rows (``_stem_band_rows``), computing the padded
    input rows it reads."""
    block = sch.get(block_rv)
    loops = _output_loops(sch, block_rv, block, outer)
    if loops is None:
        return False
    chunk, row, col, lane = loops
    chunks, width, lanes = loop_extent(sch, chunk), loop_extent(sch, col), loop_extent(sch, lane)
    if chunks is None or chunks % WIDE_BLOCKS or width is None or lanes != vector_lanes(output_dtype(block)):
        return False
    work_bytes = work_bytes_of(sch, outer[:5], output_dtype(block))
    columns = conv_columns(width, WIDE_COLUMNS)
    # One pair of output blocks: no other pair would repeat the padded rows, so each task computes
    # the rows it reads (the small CNN's 16 -> 32 conv: 81 -> 75 us at 1 thread without the pass).
    weights = conv_weights(block)
    row_tasks = shallow or (chunks > WIDE_BLOCKS and weights is not None
                            and buffer_bytes(weights) <= WIDE_ROW_TASK_BYTES)
    pad_per_task = row_tasks or chunks == WIDE_BLOCKS
    producers = spatial_producers(sch, block_rv) if pad_per_task else []
    c0, c1 = sch.split(chunk, [None, WIDE_BLOCKS])
    x0, x1 = sch.split(col, [None, columns])
    reduction = outer[5:]
    rows = _stem_band_rows(sch, outer, row, producers) if shallow else 1
    if rows > 1:  # the stem: tasks of a band of rows, its padded input rows computed once per band
        r0, r1 = sch.split(row, [None, rows])
        sch.reorder(outer[0], r0, r1, c0, x0, *reduction, c1, x1, lane)
        task = sch.fuse(outer[0], r0)
    elif row_tasks:  # tasks of a row, every pair inside: the row's padded input computed once, not per pair
        sch.reorder(outer[0], row, c0, x0, *reduction, c1, x1, lane)
        task = sch.fuse(outer[0], row)
    else:
        sch.reorder(outer[0], c0, row, x0, *reduction, c1, x1, lane)
        task = sch.fuse(outer[0], c0, row)
    reduction = channels_inside_taps(sch, block_rv, reduction)
    init, write_back = local_tile(sch, block_rv, x0, reduction[0])
    sch.unroll(c1)
    sch.unroll(x1)
    sch.vectorize(lane)
    for other in (init, write_back):
        tile = sch.get_loops(other)[-3:]  # channel blocks, columns, channels
        sch.unroll(tile[0])
        sch.unroll(tile[1])
        sch.vectorize(tile[2])
    if shallow:
        sch.unroll(reduction[-1])  # kw: a 7x7 stem's 7 x 2 x 8 multiply-adds in straight-line code
        _compute_pads_at(sch, producers, task)  # a separate pass over a 3-channel layout vectorises badly
    else:
        _compute_pads_at(sch, producers, task, lanes)  # the task's padded rows, a vector of channels at a time
    if work_bytes >= PARALLEL_MIN_BYTES:
        sch.parallel(task)
    prefetch_weights(sch, block_rv, reduction, WIDE_PREFETCH_MIN_BYTES)
    return True


# The stem's two-block tile runs tasks of a band of output rows (at least SHALLOW_MIN_TASKS of them),
# the band's padded input rows within WIDE_STEM_BAND_BYTES (counted as rows + kh - 1, as the
# one-block tile counts them): a 7x7 stride-2 stem's one-row tasks padded 7 input rows for 2 new
# ones, so each row was padded three or four times. resnet18's stem (bands of 7 rows, 16 tasks):
# 1032 -> ~980 us at 1 thread, 499 -> 473 us at 2 threads.
WIDE_STEM_BAND_BYTES = 64 * 1024


def _stem_band_rows(sch: Schedule, outer: list[LoopRV], row: LoopRV, producers: list[tir.Block]) -> int:
    """Output rows per task of the stem's two-block tile (``_band_rows`` within WIDE_STEM_BAND_BYTES)."""
    batch, height, kh = loop_extent(sch, outer[0]), loop_extent(sch, row), loop_extent(sch, outer[-2])
    if batch is None or height is None or kh is None:
        return 1
    return _band_rows(height, kh - 1, _pad_row_bytes(producers), SHALLOW_MIN_TASKS, WIDE_STEM_BAND_BYTES, batch)


# The one-block tile: up to 8 output columns, tasks of several rows (at least SHALLOW_MIN_TASKS
# for the threads, the input rows a task reads within SHALLOW_PAD_BYTES: L1; counted as rows + kh - 1,
# a strided conv reads a few more). With its padded rows copied per task, 16 columns ran faster
# (the small CNN's RGB conv 43 -> 39 us on a znver5 machine); with the pad inlined, each of the
# tile's 16 x 27 loads a conditional one, LLVM took 0.1 s longer over 16 columns than over 8 (the
# small CNN's compile 0.36 -> 0.24 s) for 2 us of speed (64.5 against 66.7 us at 1 thread, znver4).
SHALLOW_COLUMNS = 8
SHALLOW_MIN_TASKS = 16
SHALLOW_PAD_BYTES = 16 * 1024


def _one_block_tile(sch: Schedule, block_rv: BlockRV, outer: list[LoopRV]) -> bool:
    """The shallow conv's tile with one block of output channels: tasks of (outer, a band of
    rows), the padded input read in place; in each task's rows a register tile of up to
    SHALLOW_COLUMNS columns x the block of channels, kh and kw unrolled."""
    block = sch.get(block_rv)
    loops = _output_loops(sch, block_rv, block, outer, unit_chunk=True) if len(outer) >= 7 else None
    if loops is None:
        return False
    chunk, row, col, lane = loops
    dtype = output_dtype(block)
    batch, height, width = loop_extent(sch, outer[0]), loop_extent(sch, row), loop_extent(sch, col)
    kh, kw = outer[-2:]
    taps = (loop_extent(sch, kh) or SHALLOW_UNROLL) * (loop_extent(sch, kw) or SHALLOW_UNROLL)
    if batch is None or height is None or width is None or loop_extent(sch, lane) != vector_lanes(dtype):
        return False
    columns = conv_columns(width, SHALLOW_COLUMNS)
    if taps * columns > SHALLOW_UNROLL:
        return False
    producers = spatial_producers(sch, block_rv)
    pad_row = _pad_row_bytes(producers)
    halo = (loop_extent(sch, kh) or 1) - 1
    rows = _band_rows(height, halo, pad_row, SHALLOW_MIN_TASKS, SHALLOW_PAD_BYTES, batch)
    work_bytes = work_bytes_of(sch, outer[:5], dtype)
    bands = sch.split(row, [None, rows]) if rows > 1 else [row]
    x0, x1 = sch.split(col, [None, columns])
    reduction = outer[5:]
    sch.reorder(outer[0], chunk, *bands, x0, *reduction, x1, lane)
    reduction = channels_inside_taps(sch, block_rv, reduction)
    r0 = bands[0]
    task = sch.fuse(outer[0], chunk, r0)
    init, write_back = local_tile(sch, block_rv, x0, reduction[0])
    sch.unroll(x1)
    sch.vectorize(lane)
    for other in (init, write_back):
        tile = sch.get_loops(other)[-2:]  # columns, channels
        sch.unroll(tile[0])
        sch.vectorize(tile[1])
    sch.unroll(kh)
    sch.unroll(kw)
    # The input read in place (the pad inlined: a conditional load per broadcast), not copied into
    # padded rows per band, three channels interleaved one float at a time: the small CNN's RGB conv
    # 72.9 -> 65.2 us at 1 thread, 40.0 -> 37.5 us at 2 (AMD EPYC znver4). The stem's two-block tile
    # keeps its copy: inlined, each load feeds two blocks and it ran 5% slower.
    inline_blocks(sch, producers)
    if work_bytes >= PARALLEL_MIN_BYTES:
        sch.parallel(task)
    prefetch_weights(sch, block_rv, reduction)
    return True


def _pad_bytes(producers: list[tir.Block]) -> int:
    """Bytes of the conv's padded inputs (its spatial producers' output buffers)."""
    return sum(buffer_bytes(p.body.buffer) for p in producers if isinstance(p.body, tir.BufferStore))


def _block_row_bytes(producers: list[tir.Block]) -> int:
    """Bytes of one padded input row over every channel block (NCHW{x}c: dimensions 1, 3, 4)."""
    total = 0
    for producer in producers:
        store = producer.body
        if isinstance(store, tir.BufferStore) and len(store.buffer.shape) == 5:
            blocks, _, width, channels = (as_const_int(d) or 1 for d in store.buffer.shape[1:])
            total += blocks * width * channels * elem_bytes(store.buffer.dtype)
    return total


def _pad_row_bytes(producers: list[tir.Block]) -> int:
    """Bytes of one padded input row (its last two dimensions) of the conv's producers."""
    total = 0
    for producer in producers:
        store = producer.body
        if isinstance(store, tir.BufferStore) and len(store.buffer.shape) >= 2:
            width, channels = (as_const_int(d) or 1 for d in store.buffer.shape[-2:])
            total += width * channels * elem_bytes(store.buffer.dtype)
    return total
