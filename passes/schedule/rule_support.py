"""What the default CPU schedule's rules share: its tile sizes and thresholds, the analyses that
recognise a block (loop roles, matmul operands, work size) and the steps every tiled rule takes
(parallelize, vectorize a tile, fold an epilogue). The rules live in ``generic_rules`` and the
specialised ``*_rules`` modules; ``default_cpu`` orders them."""
from __future__ import annotations

from typing import Callable

from ...ir import tir
from ...ir.arith import as_const_int
from ...ir.dtype import parse_dtype
from ...ir.stmt_functor import post_order_visit
from ..lower.prefetch import PREFETCH_KEY
from .schedule import Schedule
from .state import BlockRV, LoopRV, ScheduleError
from .tree import child_realizes


VECTOR_BYTES = 64  # one AVX-512 register; LLVM picks the machine's width within the loop
PARALLEL_MIN_BYTES = 64 * 1024  # below this, waking the thread pool costs more than it saves
# A block annotation: the block's float arithmetic may be reassociated, so LLVM vectorises its
# reduction into partial sums (read by LowerBlocks and the LLVM backend).
REASSOC_ANNOTATION = "tvmlite.reassoc"
# A loop annotation: InjectPrefetch asks, each iteration, for the cache line this many bytes ahead
# of every parameter vector the loop reads (a conv's packed weights). 16 KB measured best of 1-64 KB
# on resnet18 at 1 thread (18.6 ms without; 9 KB and 16 KB 16.7 ms; 32 KB 17.1; 64 KB 17.4).
PREFETCH_ANNOTATION = PREFETCH_KEY
PREFETCH_BYTES = 16 * 1024
# Only convs with this many bytes of weights or more: resnet18's 64 -> 64 3x3 conv (147 KB) ran 3%
# faster with the prefetches, its 1x1 64 -> 128 (32 KB) 10% slower.
PREFETCH_MIN_BYTES = 128 * 1024
MATMUL_ROWS = 8  # rows of the register tile of a matmul (MR): 8 x 32 floats = 16 AVX-512 registers
MATMUL_COLS = (32, 16)  # its columns (NR), the first that divides N
MATMUL_ROW_BLOCK = 64  # rows a task computes against one packed panel of B
# ... or this many when they divide the rows: the panel is then copied once per 128 rows, not twice
# (the transformer layer's four 128-row matmuls 6% faster at 1 thread, 3% at 2).
MATMUL_TASK_ROWS = 128
CONV_CHANNELS = 4  # output channels of a convolution's register tile (4 x a row of up to 64)
# Output columns of a packed convolution's register tile at most: 14 x one vector of channels
# leaves AVX-512's other registers for the weight vector and the broadcast input.
PACKED_CONV_COLUMNS = 14
DOT_ROWS = 4  # rows of a tile of dot products (a matmul whose operands both run along k)
DOT_COLS = 4  # its columns: 4 x 4 dot products, one vector register each
# A block annotation (MetaSchedule's): "None" keeps the default schedule's rules off the block.
SCHEDULE_RULE_KEY = "schedule_rule"
# A narrow matmul's tile of dot products (narrow_rule): up to 4 x 5 sums (N = 10: 20 registers), over
# a k of NARROW_MIN_K or more (four vectors of float32).
NARROW_COLS = 5
NARROW_MIN_K = 64
# Inlining a chain of elementwise blocks nests their expressions; beyond this depth a producer
# keeps its buffer, so no kernel gets an expression deeper than this for later passes to recurse on.
MAX_INLINE_DEPTH = 64
# Nor one whose expression would count more nodes than this, repeated subexpressions counted each
# time: a block reading its producer twice (x + x) would compute it twice per element, and a chain
# of them a number of times exponential in its length.
MAX_INLINE_SIZE = 1024

Rule = Callable[[Schedule, BlockRV], bool]


def root_blocks(sch: Schedule) -> list[str]:
    """The names of the blocks directly under the root block, in program order."""
    body = sch.mod["main"].body
    root = body.block if isinstance(body, tir.BlockRealize) else body
    return [r.block.name_hint for r, _ in child_realizes(root)]


def is_spatial(block: tir.Block) -> bool:
    return block.init is None and all(iv.iter_type == tir.IterType.DataPar for iv in block.iter_vars)


def is_reduction(block: tir.Block) -> bool:
    return block.init is not None and any(iv.iter_type == tir.IterType.CommReduce for iv in block.iter_vars)


def moves_data_only(block: tir.Block) -> bool:
    """The block's value is a load of another buffer (transpose, reshape, broadcast...)."""
    return isinstance(block.body, tir.BufferStore) and isinstance(block.body.value, tir.BufferLoad)


def elem_bytes(dtype: str) -> int:
    d = parse_dtype(dtype)
    return max(1, d.bits // 8)


def loop_extent(sch: Schedule, loop: LoopRV) -> int | None:
    return as_const_int(sch.get(loop).extent)  # type: ignore[union-attr]


def output_dtype(block: tir.Block) -> str:
    return block.writes[0].buffer.dtype if block.writes else "float32"


def loop_roles(sch: Schedule, block_rv: BlockRV, loops: list[LoopRV]) -> list[str] | None:
    """For each loop, "S" (bound only to spatial iterators) or "R" (only to reduction ones);
    None when a loop mixes them or the block is bound to something else."""
    realize_block = sch.get(block_rv)
    loc = sch.state.locate_block(block_rv)
    roles = []
    for loop_rv in loops:
        var = sch.get(loop_rv).loop_var  # type: ignore[union-attr]
        kinds = set()
        for iv, value in zip(realize_block.iter_vars, loc.realize.iter_values):
            used: list = []
            post_order_visit(value, lambda n: used.append(n) if n is var else None)
            if used:
                kinds.add(iv.iter_type)
        if kinds == {tir.IterType.DataPar} or not kinds:
            roles.append("S")
        elif kinds == {tir.IterType.CommReduce}:
            roles.append("R")
        else:
            return None
    return roles


def only_block_under(sch: Schedule, loop: LoopRV) -> bool:
    return len(child_realizes(sch.get(loop))) == 1


def work_bytes_of(sch: Schedule, loops: list[LoopRV], dtype: str) -> int:
    """Bytes of work the loops do (one element of ``dtype`` per iteration; a symbolic extent
    counts as large), to decide whether a parallel loop pays off."""
    work = 1
    for lp in loops:
        work *= loop_extent(sch, lp) or 1 << 20
    return work * elem_bytes(dtype)


def vector_lanes(dtype: str) -> int:
    return max(1, VECTOR_BYTES // elem_bytes(dtype))


def parallelize(sch: Schedule, loops: list[LoopRV], work_bytes: int) -> None:
    """Fuse ``loops`` (outermost first) into one loop, parallel when there is enough work."""
    if not loops:
        return
    outer = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = loop_extent(sch, outer)
    if work_bytes >= PARALLEL_MIN_BYTES and (extent is None or extent > 1):
        sch.parallel(outer)


def prefetch_weights(sch: Schedule, block_rv: BlockRV, reduction: list[LoopRV],
                     min_bytes: int = PREFETCH_MIN_BYTES) -> None:
    """Mark the innermost reduction loop that is neither unrolled nor a unit loop for prefetching
    the weights it streams (``PREFETCH_ANNOTATION``; InjectPrefetch writes the prefetches), when
    the block's weights (the operand read along the output's last index, its channels) are
    ``min_bytes`` or more: smaller ones stay in the caches between calls."""
    weights = conv_weights(sch.get(block_rv))
    if weights is None or buffer_bytes(weights) < min_bytes:
        return
    for loop in reversed(reduction):
        if sch.get(loop).kind == tir.ForKind.SERIAL and (loop_extent(sch, loop) or 2) > 1:  # type: ignore[union-attr]
            sch.annotate(loop, PREFETCH_ANNOTATION, PREFETCH_BYTES)
            return


# Packed convs reduce over (ic_outer, kh, kw, ic_inner), as TVM's x86 conv2d_NCHWc schedule does,
# not (ic, kh, kw): the weights (OIHW{i}i{o}o) then stream in memory order and a tap's broadcast
# inputs come from the line the previous channel read. resnet18's 512 -> 512 convs on 7x7 maps
# (AMD EPYC, one thread, one-block tile) 2518 -> 2217 us: nine interleaved weight streams 1 KB apart
# had outrun the hardware prefetcher.
CHANNELS_INSIDE_TAPS = True


def channels_inside_taps(sch: Schedule, block_rv: BlockRV, reduction: list[LoopRV]) -> list[LoopRV]:
    """The reduction loops of a conv on packed input channels (``data[.., ic // B, .., ic % B]``,
    ``reduction[0]`` the ``ic`` loop over more than one block B) split and reordered to
    (ic_outer, kh, kw, ic_inner); ``reduction`` unchanged when it is no such conv."""
    if not CHANNELS_INSIDE_TAPS or len(reduction) < 3:
        return reduction
    block = sch.get(block_rv)
    loads = matmul_loads(block)
    if loads is None:
        return reduction
    bound = iter_bindings(sch, block_rv, block)
    ic_loop = sch.get(reduction[0]).loop_var  # type: ignore[union-attr]
    extent = loop_extent(sch, reduction[0])
    for load in loads:
        index = load.indices[-1] if load.indices else None
        if not (isinstance(index, tir.FloorMod) and isinstance(index.b, tir.IntImm)):
            continue
        size = index.b.value
        if bound.get(index.a) is ic_loop and extent is not None and extent > size and extent % size == 0:
            ic_outer, ic_inner = sch.split(reduction[0], [None, size])
            sch.reorder(ic_outer, *reduction[1:], ic_inner)
            return [ic_outer, *reduction[1:], ic_inner]
    return reduction


def conv_weights(block: tir.Block) -> tir.Buffer | None:
    """The weights of a packed conv's block: the operand read along the output's last index (its
    block of output channels); None when the block is no such product."""
    loads = matmul_loads(block)
    if loads is None or not block.body.indices:
        return None
    lane = block.body.indices[-1]
    return next((ld.buffer for ld in loads if ld.indices and ld.indices[-1] is lane), None)


def buffer_bytes(buf: tir.Buffer) -> int:
    """The bytes of a buffer of constant shape (0 when a dimension is symbolic)."""
    size = elem_bytes(buf.dtype)
    for dim in buf.shape:
        extent = as_const_int(dim)
        if extent is None:
            return 0
        size *= extent
    return size


def vectorize_innermost(sch: Schedule, loop: LoopRV, lanes: int) -> LoopRV | None:
    """Split ``loop`` into a vector loop of ``lanes`` (when long enough) and return the outer part."""
    extent = loop_extent(sch, loop)
    if extent is None or extent < lanes:
        if extent is not None and extent >= 4:
            sch.vectorize(loop)
            return None
        return loop
    outer, inner = sch.split(loop, [None, lanes])
    sch.vectorize(inner)
    return outer


# ------------------------------------------------------------------ matmul
def strip_cast(e: tir.PrimExpr) -> tir.PrimExpr:
    return e.value if isinstance(e, tir.Cast) else e


def matmul_loads(block: tir.Block) -> tuple[tir.BufferLoad, tir.BufferLoad] | None:
    """The two operands of ``C[...] = C[...] + a * b`` (casts allowed), or None."""
    store = block.body
    if not isinstance(store, tir.BufferStore) or not isinstance(store.value, tir.Add):
        return None
    acc, prod = store.value.a, store.value.b
    if not (isinstance(acc, tir.BufferLoad) and acc.buffer is store.buffer):
        acc, prod = prod, acc
    if not (isinstance(acc, tir.BufferLoad) and acc.buffer is store.buffer) or not isinstance(prod, tir.Mul):
        return None
    a, b = strip_cast(prod.a), strip_cast(prod.b)
    if isinstance(a, tir.BufferLoad) and isinstance(b, tir.BufferLoad):
        return a, b
    return None


class Matmul:
    """What the matmul rule needs to know about a block ``C[.., i, j] += A[.., i, k] * B[.., k, j]``
    (or ``B[.., j, k]``): its loops by role and its operands. Recognised by the access pattern:
    a unit dimension that Simplify turned into a constant index (``x[T.int64(0), v_k]`` of a
    batch-1 matmul) counts as an extent-1 row or column, scheduled on one of the unit loops left
    without an iterator."""

    def __init__(self, sch: Schedule, block_rv: BlockRV) -> None:
        block = sch.get(block_rv)
        loads = matmul_loads(block) if is_reduction(block) else None
        if loads is None:
            raise ScheduleError("not a matmul")
        loc = sch.state.locate_block(block_rv)
        loops = sch.get_loops(block_rv)
        loop_of: dict[tir.Var, LoopRV] = {}
        for iv, value in zip(block.iter_vars, loc.realize.iter_values):
            if as_const_int(value) is not None and as_const_int(iv.dom.extent) == 1:
                continue  # a unit iterator bound to its only value: no loop of its own
            match = [lp for lp in loops if sch.get(lp).loop_var is value]  # type: ignore[union-attr]
            if len(match) != 1:
                raise ScheduleError("the matmul's iterators are not bound to loops one to one")
            loop_of[iv.var] = match[0]
        bound = set(map(id, loop_of.values()))
        spare = [lp for lp in loops if id(lp) not in bound]
        if any(loop_extent(sch, lp) != 1 for lp in spare):
            raise ScheduleError("a loop of the matmul binds no iterator")
        reduce_vars = [iv.var for iv in block.iter_vars if iv.iter_type == tir.IterType.CommReduce]
        store = block.body
        if len(reduce_vars) != 1 or len(store.indices) < 2 or reduce_vars[0] not in loop_of:
            raise ScheduleError("not a single-reduction matmul with a 2-D output")
        k = reduce_vars[0]
        # A constant row (column) index is a unit dimension: the roles keep None for it.
        i, j = (v if v in loop_of else None for v in store.indices[-2:])
        if any(v is None and as_const_int(index) is None for v, index in zip((i, j), store.indices[-2:])):
            raise ScheduleError("the output's last two indices are neither iterators nor constants")
        if i is None:  # [seq, 1, k] x W: a "batch" dimension that B does not read is the rows
            i = next((v for v in reversed(store.indices[:-2]) if v in loop_of and uses_var(loads[0], v)
                      != uses_var(loads[1], v)), None)
        uses = [{v for v in (i, j, k) if v is not None and uses_var(ld, v)} for ld in loads]
        want_a, want_b = {v for v in (i, k) if v is not None}, {v for v in (j, k) if v is not None}
        if uses[0] == want_b and uses[1] == want_a and want_a != want_b:
            loads = (loads[1], loads[0])
        elif not (uses[0] == want_a and uses[1] == want_b):
            raise ScheduleError("the operands are not A[.., i, k] and B[.., k, j]")
        self.a, self.b = loads
        unit_loops = iter(reversed(spare))  # the innermost unit loops stand in for unit rows/columns
        self.j = loop_of[j] if j is not None else next(unit_loops, None)
        self.i = loop_of[i] if i is not None else next(unit_loops, None)
        if self.i is None or self.j is None:
            raise ScheduleError("a unit dimension of the matmul has no loop left to schedule it on")
        self.k = loop_of[k]
        self.batch = [loop_of[v] for v in (store.indices[:-2]) if v in loop_of and v is not i]  # type: ignore[index]
        # B contiguous along the output's columns, or stored [.., j, k] (a transposed weight);
        # a unit dimension reads as contiguous along either.
        self.b_along_j = self.b.indices[-1] is j if j is not None else self.b.indices[-2] is k
        self.b_along_k = self.b.indices[-1] is k
        self.a_along_k = self.a.indices[-1] is k
        self.m, self.n, self.kk = (loop_extent(sch, lp) for lp in (self.i, self.j, self.k))
        self.block = block


def uses_var(load: tir.BufferLoad, var: tir.Var) -> bool:
    found: list = []
    for index in load.indices:
        post_order_visit(index, lambda n: found.append(n) if n is var else None)
    return bool(found)


def producer_block(sch: Schedule, block_rv: BlockRV, buffer: tir.Buffer) -> tir.Block | None:
    """The block of the same scope that writes ``buffer``, if any."""
    for other in sch.scope_neighbours(block_rv, producers=True):
        if any(w.buffer is buffer for w in other.writes):
            return other
    return None


def inline_layout_producers(sch: Schedule, block_rv: BlockRV) -> None:
    """Inline the data-moving producers (transposes...) of a reduction into it."""
    for producer in sch.scope_neighbours(block_rv, producers=True):
        if is_spatial(producer) and moves_data_only(producer):
            sch.compute_inline(sch.get_block(producer.name_hint))


def spatial_producers(sch: Schedule, block_rv: BlockRV) -> list[tir.Block]:
    """The spatial blocks whose outputs ``block_rv`` reads (a conv's or pool's padded input); taken
    before the block is tiled, whose init block is one too once the reduction is decomposed."""
    return [p for p in sch.scope_neighbours(block_rv, producers=True) if is_spatial(p)]


def inline_blocks(sch: Schedule, blocks: list[tir.Block]) -> None:
    """Inline each of ``blocks`` (a padded input: every load of its consumer then reads the
    ``if_then_else`` of the input and the pad value in place)."""
    for block in blocks:
        sch.compute_inline(sch.get_block(block.name_hint))


def fold_epilogue(sch: Schedule, epilogues: list[tir.Block], write_back: BlockRV, loop: LoopRV) -> None:
    """Put a tile's write-back under ``loop`` and its one elementwise epilogue with it: folded into
    the write-back when ``reverse_compute_inline`` can, else computed right after it per tile."""
    epilogue = epilogues[0] if len(epilogues) == 1 and is_spatial(epilogues[0]) else None
    if epilogue is not None:
        try:
            sch.reverse_compute_inline(sch.get_block(epilogue.name_hint))
            epilogue = None
        except ScheduleError:
            pass  # e.g. it reads the result at a broadcast index: keep it as a block of its own
    sch.reverse_compute_at(write_back, loop)
    if epilogue is not None:
        epilogue_rv = sch.get_block(epilogue.name_hint)
        sch.reverse_compute_at(epilogue_rv, loop)
        vectorize_tile(sch, epilogue_rv, loop)


def cache_read_of(sch: Schedule, block_rv: BlockRV, buffer: tir.Buffer, scope: str = "global") -> BlockRV:
    """``cache_read`` of ``buffer`` by the block, found among its reads as they are now (a
    decompose_reduction puts the accumulator first)."""
    index = next(n for n, r in enumerate(sch.get(block_rv).reads) if r.buffer is buffer)
    return sch.cache_read(block_rv, index, scope)


def local_tile(sch: Schedule, block_rv: BlockRV, loop: LoopRV, reduction: LoopRV) -> tuple[BlockRV, BlockRV]:
    """A reduction's register tile: its result cached in "local", the write-back (with the
    elementwise epilogue, ``fold_epilogue``) under ``loop``, the init split off at ``reduction``;
    (init, write-back)."""
    epilogues = sch.scope_neighbours(block_rv, producers=False)
    write_back = sch.cache_write(block_rv, 0, "local")
    fold_epilogue(sch, epilogues, write_back, loop)
    return sch.decompose_reduction(block_rv, reduction), write_back


def vectorize_tile(sch: Schedule, block_rv: BlockRV, loop: LoopRV) -> None:
    """Vectorize the innermost loop of ``block_rv`` below ``loop`` and unroll the one above it."""
    anchor = sch.get(loop).loop_var  # type: ignore[union-attr]
    loops = sch.get_loops(block_rv)
    below = next((n for n, lp in enumerate(loops) if sch.get(lp).loop_var is anchor), None)  # type: ignore[union-attr]
    tile = loops[below + 1:] if below is not None else []
    if tile and (loop_extent(sch, tile[-1]) or 0) <= 64:
        sch.vectorize(tile[-1])
    if len(tile) > 1:
        sch.unroll(tile[-2])



def iter_bindings(sch: Schedule, block_rv: BlockRV, block: tir.Block) -> dict[tir.Var, tir.PrimExpr]:
    """Each iterator of ``block`` (the block ``block_rv`` names) mapped to the value its realize binds."""
    loc = sch.state.locate_block(block_rv)
    return {iv.var: value for iv, value in zip(block.iter_vars, loc.realize.iter_values)}


def loop_bound_to(sch: Schedule, loops: list[LoopRV], value: tir.PrimExpr | None) -> LoopRV | None:
    """The loop among ``loops`` whose variable is ``value`` (an iterator's binding), or None."""
    return next((lp for lp in loops if sch.get(lp).loop_var is value), None)  # type: ignore[union-attr]


def attempt_rule(sch: Schedule, rule: Rule, block_rv: BlockRV) -> bool:
    """Run ``rule`` on a copy of ``sch`` and keep the result only if it fully succeeded."""
    trial = sch.copy()
    try:
        # A fresh reference per attempt (decompose_reduction renames its own in place), looked
        # up in the trial so the trace records it only when the rule is kept.
        done = rule(trial, trial.get_block(block_rv.block_name))
    except ScheduleError:
        return False
    if done:
        sch.state.mod = trial.state.mod
        sch.state.counter = trial.state.counter
        sch.state.share_indices(trial.state)  # the indexes of the kept body, built by the trial
        sch._trace = trial._trace
    return bool(done)
