"""The generic rules of the default CPU schedule (see ``default_cpu`` for the order they are tried
in): inlining, elementwise blocks, reductions, matmul tiles, dot-product tiles, NCHW and packed
convolutions, packed pools and unpacking. Each takes ``(sch, block)`` and returns whether it
scheduled the block."""
from __future__ import annotations

from ...ir import tir
from ...ir.arith import as_const_int
from ...ir.node import node_fields
from ...ir.stmt_functor import post_order_visit
from .schedule import Schedule
from .state import BlockRV, LoopRV
from .rule_support import (CONV_CHANNELS, DOT_COLS, DOT_ROWS, MATMUL_COLS, NARROW_COLS, NARROW_MIN_K,
                           MATMUL_ROW_BLOCK, MATMUL_ROWS, MATMUL_TASK_ROWS, MAX_INLINE_DEPTH, MAX_INLINE_SIZE, PACKED_CONV_COLUMNS,
                           PARALLEL_MIN_BYTES, REASSOC_ANNOTATION, SCHEDULE_RULE_KEY, attempt_rule, cache_read_of,
                           channels_inside_taps, elem_bytes, local_tile, inline_blocks, inline_layout_producers,
                           is_reduction, is_spatial, iter_bindings, loop_bound_to, loop_extent, loop_roles, Matmul,
                           matmul_loads, moves_data_only, only_block_under, output_dtype, parallelize,
                           prefetch_weights, producer_block, root_blocks, spatial_producers, vector_lanes,
                           vectorize_innermost, vectorize_tile, work_bytes_of)


def inline_producers(sch: Schedule) -> None:
    """Inline every elementwise block writing an intermediate buffer into its consumers (into
    reductions only when the block just moves data)."""
    for name in reversed(root_blocks(sch)):
        probe = BlockRV("main", "probe", name)  # an inspection only: not recorded in the trace
        block = sch.get(probe)
        if not is_spatial(block):
            continue
        consumers = sch.scope_neighbours(probe, producers=False)
        if not consumers:
            continue
        if any(not is_spatial(c) for c in consumers) and not moves_data_only(block):
            continue
        depth = value_depth(block)
        if any(depth + value_depth(c) > MAX_INLINE_DEPTH for c in consumers):
            continue
        size = value_size(block, None)[0]
        buf = block.writes[0].buffer if len(block.writes) == 1 else None
        if any(c_size + reads * (size - 1) > MAX_INLINE_SIZE
               for c_size, reads in (value_size(c, buf) for c in consumers)):
            continue
        attempt_rule(sch, inline_rule, probe)


def value_size(block: tir.Block, buf: tir.Buffer | None) -> tuple[int, int]:
    """The nodes of the expression a block stores and its loads of ``buf``, a subexpression shared
    n times counting n times (0, 0 when it stores no single value)."""
    if not isinstance(block.body, tir.BufferStore):
        return 0, 0
    root = block.body.value
    counts: dict[int, tuple[int, int]] = {}
    stack: list[tuple[tir.PrimExpr, bool]] = [(root, False)]
    while stack:  # post-order without recursion, each shared subexpression counted once
        expr, ready = stack.pop()
        if id(expr) in counts:
            continue
        children = [c for name in node_fields(type(expr)) for v in (getattr(expr, name),)
                    for c in (v if isinstance(v, tuple) else (v,)) if isinstance(c, tir.PrimExpr)]
        if not ready:
            stack.append((expr, True))
            stack.extend((c, False) for c in children if id(c) not in counts)
            continue
        size = 1 + sum(counts[id(c)][0] for c in children)
        reads = int(isinstance(expr, tir.BufferLoad) and expr.buffer is buf) + sum(counts[id(c)][1] for c in children)
        counts[id(expr)] = (size, reads)
    return counts[id(root)]


def value_depth(block: tir.Block) -> int:
    """The nesting depth of the expression a block stores (0 when it stores no single value)."""
    if not isinstance(block.body, tir.BufferStore):
        return 0
    # Level by level, each shared subexpression once: the value may be deep, and a DAG (x + x).
    depth, level = 0, {id(block.body.value): block.body.value}
    while level:
        depth += 1
        below: dict[int, tir.PrimExpr] = {}
        for expr in level.values():
            for name in node_fields(type(expr)):
                value = getattr(expr, name)
                for child in (value if isinstance(value, tuple) else (value,)):
                    if isinstance(child, tir.PrimExpr):
                        below[id(child)] = child
        level = below
    return depth


def inline_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """``compute_inline`` as a rule."""
    sch.compute_inline(block_rv)
    return True


def elementwise_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """Parallel outer loops, vectorized inner loop."""
    block = sch.get(block_rv)
    if not is_spatial(block):
        return False
    loops = sch.get_loops(block_rv)
    if not loops or not only_block_under(sch, loops[0]):
        return not loops
    if any(sch.get(lp).kind != tir.ForKind.SERIAL for lp in loops):  # type: ignore[union-attr]
        return False  # scheduled by a reduction rule already (an init block)
    dtype = output_dtype(block)
    lanes = vector_lanes(dtype)
    work_bytes = work_bytes_of(sch, loops, dtype)
    last = loop_extent(sch, loops[-1])
    if last is not None and last < lanes and len(loops) > 1:
        loops = [sch.fuse(*loops)]  # a short last dimension: vectorize across the fused loop
    rest = vectorize_innermost(sch, loops[-1], lanes)
    outer = loops[:-1] + ([rest] if rest is not None else [])
    parallelize(sch, outer, work_bytes)
    return True


def reduction_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """Spatial loops outside, reductions inside, the init split off; vectorize along the
    output's contiguous dimension, or reassociate the innermost reduction."""
    block = sch.get(block_rv)
    if not is_reduction(block):
        return False
    loops = sch.get_loops(block_rv)
    if not loops or not only_block_under(sch, loops[0]):
        return False
    roles = loop_roles(sch, block_rv, loops)
    if roles is None or "R" not in roles:
        return False
    spatial = [lp for lp, r in zip(loops, roles) if r == "S"]
    reduction = [lp for lp, r in zip(loops, roles) if r == "R"]
    dtype = output_dtype(block)
    lanes = vector_lanes(dtype)
    store = block.body
    vector_loop = None
    if spatial and isinstance(store, tir.BufferStore) and store.indices:  # a rank-0 output has no last index
        innermost_var = sch.get(spatial[-1]).loop_var  # type: ignore[union-attr]
        # The output is contiguous along the innermost spatial loop when its last index is that loop.
        if iter_bindings(sch, block_rv, block).get(store.indices[-1]) is innermost_var \
                and (loop_extent(sch, spatial[-1]) or 0) >= 4:
            vector_loop = spatial[-1]
    work_bytes = work_bytes_of(sch, loops, dtype)
    if vector_loop is not None:
        outer_spatial = spatial[:-1]
        sch.reorder(*outer_spatial, *reduction, vector_loop)
        init_rv = sch.decompose_reduction(block_rv, reduction[0])
        init_loops = sch.get_loops(init_rv)
        vectorize_innermost(sch, vector_loop, lanes)
        if init_loops:
            vectorize_innermost(sch, init_loops[-1], lanes)
        parallelize(sch, outer_spatial, work_bytes)
        return True
    sch.reorder(*spatial, *reduction)
    sch.decompose_reduction(block_rv, reduction[0])
    sch.annotate(block_rv, REASSOC_ANNOTATION, 1)
    parallelize(sch, spatial, work_bytes)
    return True


def dot_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A matmul whose operands both run along k (``x @ W.T`` with W stored [out, in]): a tile of
    MR x NR dot products (unrolled, so each sum is one vector register), vectorised along k by
    reassociating the sums; the epilogue computed per tile; tiles in parallel."""
    if not is_reduction(sch.get(block_rv)):
        return False
    inline_layout_producers(sch, block_rv)
    mm = Matmul(sch, block_rv)
    if mm.b_along_j or not (mm.a_along_k and mm.b_along_k) or mm.m is None or mm.n is None:
        return False
    _dot_tile(sch, block_rv, mm, DOT_COLS)
    return True


def narrow_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A matmul with fewer output columns than a vector has lanes and B contiguous along them
    (``x @ W`` with W [K, N], N < 16: an MLP's 10-way classifier, as FoldConstant leaves a constant
    ``permute_dims(W)``): vectors along j would leave most lanes idle (8 + 2 lanes for N = 10), so
    B is copied transposed ([N, K], once per call) and the matmul runs as dot_rule's tile of dot
    products along k, NARROW_COLS columns wide (the MLP's 64 x 256 x 10 layer 4.5 -> 2.6 us)."""
    block = sch.get(block_rv)
    if not is_reduction(block):
        return False
    mm = Matmul(sch, block_rv)
    lanes = vector_lanes(output_dtype(block))
    if not mm.b_along_j or not mm.a_along_k or mm.batch or mm.m is None or mm.n is None or mm.kk is None:
        return False
    if mm.m < 2 or mm.n < 2 or mm.n >= lanes or mm.kk < NARROW_MIN_K or len(mm.b.buffer.shape) != 2:
        return False  # one row: gemv_rule's; a short k: nothing to vectorise along it
    pack = cache_read_of(sch, block_rv, mm.b.buffer)
    sch.transform_layout(pack, ("write", 0), lambda k, j: (j, k))
    # The copy stays a plain loop nest: scheduled as a data move it gathers 16 k at a time, lane by
    # lane, which took LLVM 80 ms to compile against 30 (and ran no faster: 2.4 us the kernel).
    sch.annotate(pack, SCHEDULE_RULE_KEY, "None")
    _dot_tile(sch, block_rv, Matmul(sch, block_rv), NARROW_COLS)
    return True


def _dot_tile(sch: Schedule, block_rv: BlockRV, mm: Matmul, most_cols: int) -> None:
    """dot_rule's steps: MR x NR dot products (NR the largest divisor of n up to ``most_cols``),
    unrolled, k reassociated, the epilogue per tile, the tiles in parallel when worth it."""
    rows = next(r for r in (DOT_ROWS, 2, 1) if mm.m % r == 0)
    cols = max(d for d in range(1, most_cols + 1) if mm.n % d == 0)
    i0, i1 = sch.split(mm.i, [None, rows])
    j0, j1 = sch.split(mm.j, [None, cols])
    sch.reorder(*mm.batch, i0, j0, mm.k, i1, j1)
    tile = sch.fuse(*mm.batch, i0, j0)
    epilogues = sch.scope_neighbours(block_rv, producers=False)
    if len(epilogues) == 1 and is_spatial(epilogues[0]):
        sch.reverse_compute_at(sch.get_block(epilogues[0].name_hint), tile)
    sch.unroll(i1)
    sch.unroll(j1)
    sch.annotate(mm.k, REASSOC_ANNOTATION, 1)
    sch.decompose_reduction(block_rv, mm.k)
    work = mm.m * mm.n * (mm.kk or 1) * elem_bytes(output_dtype(mm.block))
    if work >= PARALLEL_MIN_BYTES and mm.m * mm.n > rows * cols:
        sch.parallel(tile)


def tile_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A matmul ``C[i, j] += A[i, k] * B[k, j]``: a register tile of MR x NR accumulators
    (``cache_write`` to "local"), tasks of a row block x a column panel run in parallel, each
    copying its K x NR panel of B once (``cache_read``, or B's producer computed there), the
    elementwise epilogue folded into the tile's write-back, columns vectorized, rows unrolled."""
    mm = Matmul(sch, block_rv)
    if not mm.b_along_j or mm.m is None or mm.n is None:
        return False
    rows = next((r for r in (MATMUL_ROWS, 4, 2, 1) if mm.m % r == 0), 1)
    cols = next((c for c in MATMUL_COLS if mm.n % c == 0), min(mm.n, MATMUL_COLS[-1]))
    # Rows: [tasks, tiles per task, MR]; columns: [panels, NR]; one task = one panel of B.
    block_rows = next((b for b in (MATMUL_TASK_ROWS, MATMUL_ROW_BLOCK) if mm.m % b == 0), rows)
    i0, i1, i2 = sch.split(mm.i, [None, block_rows // rows, rows])
    j0, j1 = sch.split(mm.j, [None, cols])
    sch.reorder(*mm.batch, i0, j0, i1, mm.k, i2, j1)
    task = sch.fuse(*mm.batch, i0, j0)
    block = sch.get(block_rv)
    init, write_back = local_tile(sch, block_rv, i1, mm.k)
    b_buffer = mm.b.buffer
    producer = producer_block(sch, block_rv, b_buffer)
    if producer is not None:
        pack = sch.get_block(producer.name_hint)
    else:
        pack = cache_read_of(sch, block_rv, b_buffer)
    sch.compute_at(pack, task)
    sch.unroll(i2)
    sch.vectorize(j1)
    for other in (init, write_back):
        vectorize_tile(sch, other, i1)
    pack_loops = sch.get_loops(pack)
    if len(pack_loops) >= 2 and stores_along(sch, pack, pack_loops[-2]):  # a transposing copy
        sch.reorder(pack_loops[-1], pack_loops[-2])
        pack_loops = pack_loops[:-2] + [pack_loops[-1], pack_loops[-2]]
    if pack_loops:
        sch.vectorize(pack_loops[-1])
    work = mm.m * mm.n * (mm.kk or 1) * elem_bytes(output_dtype(block))
    parallelize(sch, [task], work)
    return True


def stores_along(sch: Schedule, block_rv: BlockRV, loop: LoopRV) -> bool:
    """The block's store is contiguous along ``loop`` (its last index is the iterator bound to it)."""
    block = sch.get(block_rv)
    store = block.body
    if not isinstance(store, tir.BufferStore) or not store.indices:
        return False
    var = sch.get(loop).loop_var  # type: ignore[union-attr]
    value = iter_bindings(sch, block_rv, block).get(store.indices[-1])  # type: ignore[arg-type]
    used: list = []
    if value is not None:
        post_order_visit(value, lambda n: used.append(n) if n is var else None)
    return bool(used)


def conv_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A reduction writing ``out[.., c, y, x]`` with a short contiguous x (NCHW convolutions,
    pooling-like sums): a register tile of CONV_CHANNELS channels x the whole row, tasks of
    (outer, y) in parallel, each computing the rows of the padded input it needs."""
    block = sch.get(block_rv)
    if not is_reduction(block) or not isinstance(block.body, tir.BufferStore):
        return False
    loops = sch.get_loops(block_rv)
    roles = loop_roles(sch, block_rv, loops)
    if roles is None or roles != sorted(roles, key=lambda r: r == "R") or "R" not in roles:
        return False  # spatial loops first, then the reductions, as LegalizeOps writes them
    spatial = [lp for lp, r in zip(loops, roles) if r == "S"]
    reduction = [lp for lp, r in zip(loops, roles) if r == "R"]
    store = block.body
    bound = iter_bindings(sch, block_rv, block)
    if len(spatial) < 3 or len(store.indices) < 3:
        return False
    channel, row, col = spatial[-3:]
    for index, loop in zip(store.indices[-3:], (channel, row, col)):
        if bound.get(index) is not sch.get(loop).loop_var:  # type: ignore[union-attr]
            return False
    width, channels = loop_extent(sch, col), loop_extent(sch, channel)
    if width is None or not 8 <= width <= 64 or channels is None or channels % CONV_CHANNELS:
        return False
    work_bytes = work_bytes_of(sch, loops, output_dtype(block))
    c0, c1 = sch.split(channel, [None, CONV_CHANNELS])
    sch.reorder(*spatial[:-3], row, c0, *reduction, c1, col)
    task = sch.fuse(*spatial[:-3], row) if spatial[:-3] else row
    producers = spatial_producers(sch, block_rv)
    init, write_back = local_tile(sch, block_rv, c0, reduction[0])
    for producer in producers:  # the padded input: only the rows this task reads
        sch.compute_at(sch.get_block(producer.name_hint), task)
    sch.unroll(c1)
    sch.vectorize(col)
    for other in (init, write_back):
        vectorize_tile(sch, other, c0)
    if work_bytes >= PARALLEL_MIN_BYTES:
        sch.parallel(task)
    return True


def conv_columns(width: int, most: int = PACKED_CONV_COLUMNS) -> int:
    """Output columns of a packed convolution's register tile: the largest divisor of the width
    up to ``most`` (so no tile is partial)."""
    return max(d for d in range(1, min(width, most) + 1) if width % d == 0)


def _packed_output_loops(sch: Schedule, block_rv: BlockRV, block: tir.Block
                         ) -> tuple[list[LoopRV], list[LoopRV], list[LoopRV], list[LoopRV]] | None:
    """The loops of a reduction into ``out[.., y, x, c]`` whose c (a packed block of channels) fits
    a vector: (all loops, the non-unit ones, their spatial ones ending in y, x, c, the reduction
    ones), or None when the block is not of that form."""
    store = block.body
    if len(store.indices) < 5:
        return None
    bound = iter_bindings(sch, block_rv, block)
    # Unit loops stay where they are (batch 1, a 1x1 kernel's kh and kw, bound or made constants
    # by Simplify; a global pool's 1 x 1 output), so both pipelines' forms get the same steps;
    # the output's y, x, c loops count.
    tile_values = [bound.get(index) for index in store.indices[-3:]]
    all_loops = sch.get_loops(block_rv)
    loops = [lp for lp in all_loops
             if loop_extent(sch, lp) != 1 or any(v is sch.get(lp).loop_var for v in tile_values)]  # type: ignore[union-attr]
    roles = loop_roles(sch, block_rv, loops)
    if roles is None or roles != sorted(roles, key=lambda r: r == "R") or "R" not in roles:
        return None  # spatial loops first, then the reductions, as LegalizeOps writes them
    spatial = [lp for lp, r in zip(loops, roles) if r == "S"]
    reduction = [lp for lp, r in zip(loops, roles) if r == "R"]
    if len(spatial) < 3:
        return None
    for value, loop in zip(tile_values, spatial[-3:]):
        if value is not sch.get(loop).loop_var:  # type: ignore[union-attr]
            return None
    width, lanes = loop_extent(sch, spatial[-2]), loop_extent(sch, spatial[-1])
    if width is None or lanes is None or not 4 <= lanes <= vector_lanes(output_dtype(block)):
        return None
    return all_loops, loops, spatial, reduction


def _finish_column_tile(sch: Schedule, init_and_write_back: tuple[BlockRV, BlockRV], x0: LoopRV, x1: LoopRV,
                        lane: LoopRV, task: LoopRV, work_bytes: int) -> None:
    """The last steps of a packed conv's or pool's tile: its columns unrolled, its channels a
    vector, the init and write-back tiled the same way, the tasks parallel when worth it."""
    sch.unroll(x1)
    sch.vectorize(lane)
    for other in init_and_write_back:
        vectorize_tile(sch, other, x0)
    if work_bytes >= PARALLEL_MIN_BYTES:
        sch.parallel(task)


def packed_conv_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A convolution in a packed layout, ``out[.., y, x, c]`` += data * weight with the output
    channels innermost (NCHW{o}c, as PackConv2d and ConvertLayout write it): a register tile of a few output
    columns x one block of channels (one vector per column; the input read as a broadcast scalar,
    so any stride works), accumulated over every reduction loop; tasks of (outer, y) in parallel;
    the epilogue folded into the write-back. The padded input stays a pass of its own (scheduled
    as elementwise): computing its rows per task repeats them for every block of channels."""
    block = sch.get(block_rv)
    if not is_reduction(block) or matmul_loads(block) is None:
        return False
    found = _packed_output_loops(sch, block_rv, block)
    if found is None:
        return False
    all_loops, loops, spatial, reduction = found
    row, col, lane = spatial[-3:]
    width = loop_extent(sch, col)
    work_bytes = work_bytes_of(sch, loops, output_dtype(block))
    x0, x1 = sch.split(col, [None, conv_columns(width)])
    sch.reorder(*spatial[:-3], row, x0, *reduction, x1, lane)
    reduction = channels_inside_taps(sch, block_rv, reduction)
    # A unit loop left between the outer loops (one block of output channels) is fused with them.
    task = sch.fuse(*all_loops[all_loops.index(spatial[0]):all_loops.index(row) + 1]) if spatial[:-3] else row
    init, write_back = local_tile(sch, block_rv, x0, reduction[0])
    _finish_column_tile(sch, (init, write_back), x0, x1, lane, task, work_bytes)
    prefetch_weights(sch, block_rv, reduction)
    return True


def packed_pool_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A reduction over a window into an output with its channels innermost and short (max, avg
    and adaptive pooling in NCHW16c): a tile of output columns x the vector of channels (one
    register per column), accumulated over the window; tasks of (outer, row) in parallel, the
    padded input inlined (read in place); the epilogue (the average's division) folded."""
    block = sch.get(block_rv)
    if not is_reduction(block) or not isinstance(block.body, tir.BufferStore) or matmul_loads(block) is not None:
        return False
    found = _packed_output_loops(sch, block_rv, block)
    if found is None:
        return False
    all_loops, loops, spatial, reduction = found
    row, col, lane = spatial[-3:]
    width = loop_extent(sch, col)
    work_bytes = work_bytes_of(sch, loops, output_dtype(block))
    x0, x1 = sch.split(col, [None, conv_columns(width)])
    sch.reorder(*spatial[:-3], row, x0, *reduction, x1, lane)
    # A unit loop between the outer loops (one block of channels) is fused with them, as in
    # packed_conv_rule (else the fuse is refused and conv_rule took the pool: tiles down a column).
    task = sch.fuse(*all_loops[all_loops.index(spatial[0]):all_loops.index(row) + 1]) if spatial[:-3] else row
    # The padded input is read in place: each window load takes the input or the pad value (a vector
    # load behind a branch on the row and column), with no copy of padded rows per task (resnet18's 3x3 stride-2 max pool inside the
    # model, AMD EPYC znver4: 207 -> 118 us at 1 thread, 104 -> 53 us at 2; ORT 135 and 75 us).
    inline_blocks(sch, spatial_producers(sch, block_rv))
    init, write_back = local_tile(sch, block_rv, x0, reduction[0])
    _finish_column_tile(sch, (init, write_back), x0, x1, lane, task, work_bytes)
    return True


def unpack_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A block that only moves data and whose short innermost loop (the channels of a packed block,
    NCHW16c -> NCHW) is not the one its store runs along: tiles of a vector of output columns x
    the short loop unrolled, so each store is a whole vector; the outer loops parallel. Stores
    along the short loop would scatter a vector over rows that are often 4 KB apart."""
    block = sch.get(block_rv)
    if not is_spatial(block) or not moves_data_only(block) or not block.body.indices:
        return False
    loops = sch.get_loops(block_rv)
    if len(loops) < 2 or not only_block_under(sch, loops[0]):
        return False
    bound = iter_bindings(sch, block_rv, block)
    last, block_size = block.body.indices[-1], None
    if isinstance(last, tir.FloorMod) and as_const_int(last.b) is not None:
        last, block_size = last.a, as_const_int(last.b)  # c % 16: contiguous along c within a block
    along = bound.get(last)  # type: ignore[arg-type]
    col = loop_bound_to(sch, loops[:-1], along)
    dtype = output_dtype(block)
    lanes, short, width = vector_lanes(dtype), loop_extent(sch, loops[-1]), loop_extent(sch, col) if col else None
    if col is None or short is None or short > lanes or width is None or width < 4:
        return False
    work_bytes = work_bytes_of(sch, loops, dtype)
    c0, c1 = sch.split(col, [None, min(lanes, width, block_size or lanes)])
    outer = [lp for lp in loops[:-1] if lp is not col]
    sch.reorder(*outer, c0, loops[-1], c1)
    sch.vectorize(c1)
    sch.unroll(loops[-1])
    parallelize(sch, [*outer, c0], work_bytes)
    return True
