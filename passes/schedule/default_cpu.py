"""The default CPU schedule: what ``tvmlite.compile`` applies to every PrimFunc that is not
already scheduled, in the spirit of TVM's dlight rules, built only from ``Schedule`` primitives.

1. **Inline** producers: an elementwise block writing an intermediate buffer is substituted into
   its consumers (so a fused elementwise chain is one pass over memory); into a reduction only
   when it merely moves data (transpose, reshape), so no arithmetic is repeated per reduction step.
2. **Elementwise** blocks: the innermost loop split into vector lanes and vectorized, all the
   outer loops fused into one parallel loop (unpacking NCHW16c -> NCHW: a vector along the
   output's contiguous loop, the block's channels unrolled).
3. **Matmuls**: a register tile with a packed panel of B when B runs along the output's columns;
   tiles of dot products reassociated along k when both operands run along k (``x @ W.T``).
   **Convolutions** (NCHW): a tile of a few output channels x a row, the padded input rows
   computed per task; packed (NCHW16c): a tile of output columns x a vector of output channels.
   Epilogues are folded into (or computed right after) each tile. **Packed pools** (a window
   reduction into NCHW16c): a tile of output columns x the vector of channels, per output row.
4. **Other reductions**: spatial loops outside, reduction loops inside; the init split off
   (``decompose_reduction``); the innermost spatial loop vectorized when the output is contiguous
   along it, else the innermost reduction loop marked for a reassociating vector reduction;
   the outer spatial loops fused and parallel.

Reductions are scheduled before the elementwise blocks left over. Each rule either succeeds or
is abandoned as a whole (the function keeps what the earlier rules
did): a refused primitive never leaves a half-scheduled block. ``default_schedule(func)`` returns
the Schedule, so ``print(default_schedule(func).trace)`` shows every step taken."""
from __future__ import annotations

from typing import Callable

from ...ir import tir
from ...ir.arith import as_const_int
from ...ir.dtype import parse_dtype
from ...ir.module import IRModule
from ...ir.node import node_fields
from ...ir.stmt_functor import post_order_visit
from ..infra import PassContext, PrimFuncPass, register_pass
from .schedule import Schedule
from .state import BlockRV, LoopRV, ScheduleError
from .tree import child_realizes

__all__ = ["DefaultCPUSchedule", "default_schedule", "is_scheduled", "VECTOR_BYTES", "PARALLEL_MIN_BYTES",
           "REASSOC_ANNOTATION"]

VECTOR_BYTES = 64  # one AVX-512 register; LLVM picks the machine's width within the loop
PARALLEL_MIN_BYTES = 64 * 1024  # below this, waking the thread pool costs more than it saves
# A block annotation: the block's float arithmetic may be reassociated, so LLVM vectorises its
# reduction into partial sums (read by LowerBlocks and the LLVM backend).
REASSOC_ANNOTATION = "tvmlite.reassoc"
MATMUL_ROWS = 8  # rows of the register tile of a matmul (MR): 8 x 32 floats = 16 AVX-512 registers
MATMUL_COLS = (32, 16)  # its columns (NR), the first that divides N
MATMUL_ROW_BLOCK = 64  # rows a task computes against one packed panel of B
CONV_CHANNELS = 4  # output channels of a convolution's register tile (4 x a row of up to 64)
# Output columns of a packed convolution's register tile at most: 14 x one vector of channels
# leaves AVX-512's other registers for the weight vector and the broadcast input.
PACKED_CONV_COLUMNS = 14
DOT_ROWS = 4  # rows of a tile of dot products (a matmul whose operands both run along k)
DOT_COLS = 4  # its columns: 4 x 4 dot products, one vector register each
# Inlining a chain of elementwise blocks nests their expressions; beyond this depth a producer
# keeps its buffer, so no kernel gets an expression deeper than this for later passes to recurse on.
MAX_INLINE_DEPTH = 64
# Nor one whose expression would count more nodes than this, repeated subexpressions counted each
# time: a block reading its producer twice (x + x) would compute it twice per element, and a chain
# of them a number of times exponential in its length.
MAX_INLINE_SIZE = 1024

Rule = Callable[[Schedule, BlockRV], bool]


def is_scheduled(func: tir.PrimFunc) -> bool:
    """True when ``func`` says so (``tir.is_scheduled``) or has a parallel, vector, unrolled or
    thread-bound loop: somebody scheduled it by hand, and the default schedule keeps out."""
    if func.attrs.get("tir.is_scheduled"):
        return True
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.For)
                     and n.kind != tir.ForKind.SERIAL else None)
    return bool(found)


def _has_blocks(func: tir.PrimFunc) -> bool:
    return isinstance(func.body, tir.BlockRealize)


def _root_blocks(sch: Schedule) -> list[str]:
    """The names of the blocks directly under the root block, in program order."""
    body = sch.mod["main"].body
    root = body.block if isinstance(body, tir.BlockRealize) else body
    return [r.block.name_hint for r, _ in child_realizes(root)]


def _is_spatial(block: tir.Block) -> bool:
    return block.init is None and all(iv.iter_type == tir.IterType.DataPar for iv in block.iter_vars)


def _is_reduction(block: tir.Block) -> bool:
    return block.init is not None and any(iv.iter_type == tir.IterType.CommReduce for iv in block.iter_vars)


def _moves_data_only(block: tir.Block) -> bool:
    """The block's value is a load of another buffer (transpose, reshape, broadcast...)."""
    return isinstance(block.body, tir.BufferStore) and isinstance(block.body.value, tir.BufferLoad)


def _elem_bytes(dtype: str) -> int:
    d = parse_dtype(dtype)
    return max(1, d.bits // 8)


def _extent(sch: Schedule, loop: LoopRV) -> int | None:
    return as_const_int(sch.get(loop).extent)  # type: ignore[union-attr]


def _output_dtype(block: tir.Block) -> str:
    return block.writes[0].buffer.dtype if block.writes else "float32"


# ------------------------------------------------------------------ rules
def _inline_producers(sch: Schedule) -> None:
    """Inline every elementwise block writing an intermediate buffer into its consumers (into
    reductions only when the block just moves data)."""
    for name in reversed(_root_blocks(sch)):
        probe = BlockRV("main", "probe", name)  # an inspection only: not recorded in the trace
        block = sch.get(probe)
        if not _is_spatial(block):
            continue
        consumers = sch.scope_neighbours(probe, producers=False)
        if not consumers:
            continue
        if any(not _is_spatial(c) for c in consumers) and not _moves_data_only(block):
            continue
        depth = _value_depth(block)
        if any(depth + _value_depth(c) > MAX_INLINE_DEPTH for c in consumers):
            continue
        size = _value_size(block, None)[0]
        buf = block.writes[0].buffer if len(block.writes) == 1 else None
        if any(c_size + reads * (size - 1) > MAX_INLINE_SIZE
               for c_size, reads in (_value_size(c, buf) for c in consumers)):
            continue
        _attempt(sch, _inline_rule, probe)


def _value_size(block: tir.Block, buf: tir.Buffer | None) -> tuple[int, int]:
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


def _value_depth(block: tir.Block) -> int:
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


def _inline_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """``compute_inline`` as a rule."""
    sch.compute_inline(block_rv)
    return True


def _loop_roles(sch: Schedule, block_rv: BlockRV, loops: list[LoopRV]) -> list[str] | None:
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


def _only_block_under(sch: Schedule, loop: LoopRV) -> bool:
    return len(child_realizes(sch.get(loop))) == 1


def _work_bytes(sch: Schedule, loops: list[LoopRV], dtype: str) -> int:
    """Bytes of work the loops do (one element of ``dtype`` per iteration; a symbolic extent
    counts as large), to decide whether a parallel loop pays off."""
    work = 1
    for lp in loops:
        work *= _extent(sch, lp) or 1 << 20
    return work * _elem_bytes(dtype)


def _vector_lanes(dtype: str) -> int:
    return max(1, VECTOR_BYTES // _elem_bytes(dtype))


def _parallelize(sch: Schedule, loops: list[LoopRV], work_bytes: int) -> None:
    """Fuse ``loops`` (outermost first) into one loop, parallel when there is enough work."""
    if not loops:
        return
    outer = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = _extent(sch, outer)
    if work_bytes >= PARALLEL_MIN_BYTES and (extent is None or extent > 1):
        sch.parallel(outer)


def _vectorize_innermost(sch: Schedule, loop: LoopRV, lanes: int) -> LoopRV | None:
    """Split ``loop`` into a vector loop of ``lanes`` (when long enough) and return the outer part."""
    extent = _extent(sch, loop)
    if extent is None or extent < lanes:
        if extent is not None and extent >= 4:
            sch.vectorize(loop)
            return None
        return loop
    outer, inner = sch.split(loop, [None, lanes])
    sch.vectorize(inner)
    return outer


def _elementwise_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """Parallel outer loops, vectorized inner loop."""
    block = sch.get(block_rv)
    if not _is_spatial(block):
        return False
    loops = sch.get_loops(block_rv)
    if not loops or not _only_block_under(sch, loops[0]):
        return not loops
    if any(sch.get(lp).kind != tir.ForKind.SERIAL for lp in loops):  # type: ignore[union-attr]
        return False  # scheduled by a reduction rule already (an init block)
    dtype = _output_dtype(block)
    lanes = _vector_lanes(dtype)
    work_bytes = _work_bytes(sch, loops, dtype)
    last = _extent(sch, loops[-1])
    if last is not None and last < lanes and len(loops) > 1:
        loops = [sch.fuse(*loops)]  # a short last dimension: vectorize across the fused loop
    rest = _vectorize_innermost(sch, loops[-1], lanes)
    outer = loops[:-1] + ([rest] if rest is not None else [])
    _parallelize(sch, outer, work_bytes)
    return True


def _reduction_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """Spatial loops outside, reductions inside, the init split off; vectorize along the
    output's contiguous dimension, or reassociate the innermost reduction."""
    block = sch.get(block_rv)
    if not _is_reduction(block):
        return False
    loops = sch.get_loops(block_rv)
    if not loops or not _only_block_under(sch, loops[0]):
        return False
    roles = _loop_roles(sch, block_rv, loops)
    if roles is None or "R" not in roles:
        return False
    spatial = [lp for lp, r in zip(loops, roles) if r == "S"]
    reduction = [lp for lp, r in zip(loops, roles) if r == "R"]
    dtype = _output_dtype(block)
    lanes = _vector_lanes(dtype)
    store = block.body
    vector_loop = None
    if spatial and isinstance(store, tir.BufferStore) and store.indices:  # a rank-0 output has no last index
        last_index = store.indices[-1]
        loc = sch.state.locate_block(block_rv)
        innermost_var = sch.get(spatial[-1]).loop_var  # type: ignore[union-attr]
        # The output is contiguous along the innermost spatial loop when its last index is that loop.
        for iv, value in zip(block.iter_vars, loc.realize.iter_values):
            if last_index is iv.var and value is innermost_var and (_extent(sch, spatial[-1]) or 0) >= 4:
                vector_loop = spatial[-1]
    work_bytes = _work_bytes(sch, loops, dtype)
    if vector_loop is not None:
        outer_spatial = spatial[:-1]
        sch.reorder(*outer_spatial, *reduction, vector_loop)
        init_rv = sch.decompose_reduction(block_rv, reduction[0])
        init_loops = sch.get_loops(init_rv)
        _vectorize_innermost(sch, vector_loop, lanes)
        if init_loops:
            _vectorize_innermost(sch, init_loops[-1], lanes)
        _parallelize(sch, outer_spatial, work_bytes)
        return True
    sch.reorder(*spatial, *reduction)
    sch.decompose_reduction(block_rv, reduction[0])
    sch.annotate(block_rv, REASSOC_ANNOTATION, 1)
    _parallelize(sch, spatial, work_bytes)
    return True


# ------------------------------------------------------------------ matmul
def _strip_cast(e: tir.PrimExpr) -> tir.PrimExpr:
    return e.value if isinstance(e, tir.Cast) else e


def _matmul_loads(block: tir.Block) -> tuple[tir.BufferLoad, tir.BufferLoad] | None:
    """The two operands of ``C[...] = C[...] + a * b`` (casts allowed), or None."""
    store = block.body
    if not isinstance(store, tir.BufferStore) or not isinstance(store.value, tir.Add):
        return None
    acc, prod = store.value.a, store.value.b
    if not (isinstance(acc, tir.BufferLoad) and acc.buffer is store.buffer):
        acc, prod = prod, acc
    if not (isinstance(acc, tir.BufferLoad) and acc.buffer is store.buffer) or not isinstance(prod, tir.Mul):
        return None
    a, b = _strip_cast(prod.a), _strip_cast(prod.b)
    if isinstance(a, tir.BufferLoad) and isinstance(b, tir.BufferLoad):
        return a, b
    return None


class _Matmul:
    """What the matmul rule needs to know about a block ``C[.., i, j] += A[.., i, k] * B[.., k, j]``
    (or ``B[.., j, k]``): its loops by role and its operands. Recognised by the access pattern:
    a unit dimension that Simplify turned into a constant index (``x[T.int64(0), v_k]`` of a
    batch-1 matmul) counts as an extent-1 row or column, scheduled on one of the unit loops left
    without an iterator."""

    def __init__(self, sch: Schedule, block_rv: BlockRV) -> None:
        block = sch.get(block_rv)
        loads = _matmul_loads(block) if _is_reduction(block) else None
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
        if any(_extent(sch, lp) != 1 for lp in spare):
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
            i = next((v for v in reversed(store.indices[:-2]) if v in loop_of and _uses(loads[0], v)
                      != _uses(loads[1], v)), None)
        uses = [{v for v in (i, j, k) if v is not None and _uses(ld, v)} for ld in loads]
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
        self.m, self.n, self.kk = (_extent(sch, lp) for lp in (self.i, self.j, self.k))
        self.block = block


def _uses(load: tir.BufferLoad, var: tir.Var) -> bool:
    found: list = []
    for index in load.indices:
        post_order_visit(index, lambda n: found.append(n) if n is var else None)
    return bool(found)


def _producer_block(sch: Schedule, block_rv: BlockRV, buffer: tir.Buffer) -> tir.Block | None:
    """The block of the same scope that writes ``buffer``, if any."""
    for other in sch.scope_neighbours(block_rv, producers=True):
        if any(w.buffer is buffer for w in other.writes):
            return other
    return None


def _inline_layout_producers(sch: Schedule, block_rv: BlockRV) -> None:
    """Inline the data-moving producers (transposes...) of a reduction into it."""
    for producer in sch.scope_neighbours(block_rv, producers=True):
        if _is_spatial(producer) and _moves_data_only(producer):
            sch.compute_inline(sch.get_block(producer.name_hint))


def _fold_epilogue(sch: Schedule, epilogues: list[tir.Block], write_back: BlockRV, loop: LoopRV) -> None:
    """Put a tile's write-back under ``loop`` and its one elementwise epilogue with it: folded into
    the write-back when ``reverse_compute_inline`` can, else computed right after it per tile."""
    epilogue = epilogues[0] if len(epilogues) == 1 and _is_spatial(epilogues[0]) else None
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
        _vectorize_tile(sch, epilogue_rv, loop)


def _vectorize_tile(sch: Schedule, block_rv: BlockRV, loop: LoopRV) -> None:
    """Vectorize the innermost loop of ``block_rv`` below ``loop`` and unroll the one above it."""
    anchor = sch.get(loop).loop_var  # type: ignore[union-attr]
    loops = sch.get_loops(block_rv)
    below = next((n for n, lp in enumerate(loops) if sch.get(lp).loop_var is anchor), None)  # type: ignore[union-attr]
    tile = loops[below + 1:] if below is not None else []
    if tile and (_extent(sch, tile[-1]) or 0) <= 64:
        sch.vectorize(tile[-1])
    if len(tile) > 1:
        sch.unroll(tile[-2])


def _dot_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A matmul whose operands both run along k (``x @ W.T`` with W stored [out, in]): a tile of
    MR x NR dot products (unrolled, so each sum is one vector register), vectorised along k by
    reassociating the sums; the epilogue computed per tile; tiles in parallel."""
    if not _is_reduction(sch.get(block_rv)):
        return False
    _inline_layout_producers(sch, block_rv)
    mm = _Matmul(sch, block_rv)
    if mm.b_along_j or not (mm.a_along_k and mm.b_along_k) or mm.m is None or mm.n is None:
        return False
    rows = next(r for r in (DOT_ROWS, 2, 1) if mm.m % r == 0)
    cols = max(d for d in range(1, DOT_COLS + 1) if mm.n % d == 0)
    i0, i1 = sch.split(mm.i, [None, rows])
    j0, j1 = sch.split(mm.j, [None, cols])
    sch.reorder(*mm.batch, i0, j0, mm.k, i1, j1)
    tile = sch.fuse(*mm.batch, i0, j0)
    epilogues = sch.scope_neighbours(block_rv, producers=False)
    if len(epilogues) == 1 and _is_spatial(epilogues[0]):
        sch.reverse_compute_at(sch.get_block(epilogues[0].name_hint), tile)
    sch.unroll(i1)
    sch.unroll(j1)
    sch.annotate(mm.k, REASSOC_ANNOTATION, 1)
    sch.decompose_reduction(block_rv, mm.k)
    work = mm.m * mm.n * (mm.kk or 1) * _elem_bytes(_output_dtype(mm.block))
    if work >= PARALLEL_MIN_BYTES and mm.m * mm.n > rows * cols:
        sch.parallel(tile)
    return True


def _tile_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A matmul ``C[i, j] += A[i, k] * B[k, j]``: a register tile of MR x NR accumulators
    (``cache_write`` to "local"), tasks of a row block x a column panel run in parallel, each
    copying its K x NR panel of B once (``cache_read``, or B's producer computed there), the
    elementwise epilogue folded into the tile's write-back, columns vectorized, rows unrolled."""
    mm = _Matmul(sch, block_rv)
    if not mm.b_along_j or mm.m is None or mm.n is None:
        return False
    rows = next((r for r in (MATMUL_ROWS, 4, 2, 1) if mm.m % r == 0), 1)
    cols = next((c for c in MATMUL_COLS if mm.n % c == 0), min(mm.n, MATMUL_COLS[-1]))
    # Rows: [tasks, tiles per task, MR]; columns: [panels, NR]; one task = one panel of B.
    block_rows = MATMUL_ROW_BLOCK if mm.m % MATMUL_ROW_BLOCK == 0 else rows
    i0, i1, i2 = sch.split(mm.i, [None, block_rows // rows, rows])
    j0, j1 = sch.split(mm.j, [None, cols])
    sch.reorder(*mm.batch, i0, j0, i1, mm.k, i2, j1)
    task = sch.fuse(*mm.batch, i0, j0)
    block = sch.get(block_rv)
    epilogues = sch.scope_neighbours(block_rv, producers=False)
    write_back = sch.cache_write(block_rv, 0, "local")
    _fold_epilogue(sch, epilogues, write_back, i1)
    init = sch.decompose_reduction(block_rv, mm.k)
    b_buffer = mm.b.buffer
    producer = _producer_block(sch, block_rv, b_buffer)
    if producer is not None:
        pack = sch.get_block(producer.name_hint)
    else:
        reads = sch.get(block_rv).reads  # decompose_reduction put the accumulator first: look again
        index = next(n for n, r in enumerate(reads) if r.buffer is b_buffer)
        pack = sch.cache_read(block_rv, index, "global")
    sch.compute_at(pack, task)
    sch.unroll(i2)
    sch.vectorize(j1)
    for other in (init, write_back):
        _vectorize_tile(sch, other, i1)
    pack_loops = sch.get_loops(pack)
    if len(pack_loops) >= 2 and _stores_along(sch, pack, pack_loops[-2]):  # a transposing copy
        sch.reorder(pack_loops[-1], pack_loops[-2])
        pack_loops = pack_loops[:-2] + [pack_loops[-1], pack_loops[-2]]
    if pack_loops:
        sch.vectorize(pack_loops[-1])
    work = mm.m * mm.n * (mm.kk or 1) * _elem_bytes(_output_dtype(block))
    _parallelize(sch, [task], work)
    return True


def _stores_along(sch: Schedule, block_rv: BlockRV, loop: LoopRV) -> bool:
    """The block's store is contiguous along ``loop`` (its last index is the iterator bound to it)."""
    block, loc = sch.get(block_rv), sch.state.locate_block(block_rv)
    store = block.body
    if not isinstance(store, tir.BufferStore) or not store.indices:
        return False
    var = sch.get(loop).loop_var  # type: ignore[union-attr]
    bound = {iv.var: value for iv, value in zip(block.iter_vars, loc.realize.iter_values)}
    value = bound.get(store.indices[-1])  # type: ignore[arg-type]
    used: list = []
    if value is not None:
        post_order_visit(value, lambda n: used.append(n) if n is var else None)
    return bool(used)


def _conv_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A reduction writing ``out[.., c, y, x]`` with a short contiguous x (NCHW convolutions,
    pooling-like sums): a register tile of CONV_CHANNELS channels x the whole row, tasks of
    (outer, y) in parallel, each computing the rows of the padded input it needs."""
    block = sch.get(block_rv)
    if not _is_reduction(block) or not isinstance(block.body, tir.BufferStore):
        return False
    loops = sch.get_loops(block_rv)
    roles = _loop_roles(sch, block_rv, loops)
    if roles is None or roles != sorted(roles, key=lambda r: r == "R") or "R" not in roles:
        return False  # spatial loops first, then the reductions, as LegalizeOps writes them
    spatial = [lp for lp, r in zip(loops, roles) if r == "S"]
    reduction = [lp for lp, r in zip(loops, roles) if r == "R"]
    store = block.body
    loc = sch.state.locate_block(block_rv)
    bound = {iv.var: value for iv, value in zip(block.iter_vars, loc.realize.iter_values)}
    if len(spatial) < 3 or len(store.indices) < 3:
        return False
    channel, row, col = spatial[-3:]
    for index, loop in zip(store.indices[-3:], (channel, row, col)):
        if bound.get(index) is not sch.get(loop).loop_var:  # type: ignore[union-attr]
            return False
    width, channels = _extent(sch, col), _extent(sch, channel)
    if width is None or not 8 <= width <= 64 or channels is None or channels % CONV_CHANNELS:
        return False
    work_bytes = _work_bytes(sch, loops, _output_dtype(block))
    c0, c1 = sch.split(channel, [None, CONV_CHANNELS])
    sch.reorder(*spatial[:-3], row, c0, *reduction, c1, col)
    task = sch.fuse(*spatial[:-3], row) if spatial[:-3] else row
    producers = [p for p in sch.scope_neighbours(block_rv, producers=True) if _is_spatial(p)]
    epilogues = sch.scope_neighbours(block_rv, producers=False)
    write_back = sch.cache_write(block_rv, 0, "local")
    _fold_epilogue(sch, epilogues, write_back, c0)
    init = sch.decompose_reduction(block_rv, reduction[0])
    for producer in producers:  # the padded input: only the rows this task reads
        sch.compute_at(sch.get_block(producer.name_hint), task)
    sch.unroll(c1)
    sch.vectorize(col)
    for other in (init, write_back):
        _vectorize_tile(sch, other, c0)
    if work_bytes >= PARALLEL_MIN_BYTES:
        sch.parallel(task)
    return True


def _conv_columns(width: int) -> int:
    """Output columns of a packed convolution's register tile: the largest divisor of the width
    up to PACKED_CONV_COLUMNS (so no tile is partial)."""
    return max(d for d in range(1, min(width, PACKED_CONV_COLUMNS) + 1) if width % d == 0)


def _packed_conv_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A convolution in a packed layout, ``out[.., y, x, c]`` += data * weight with the output
    channels innermost (NCHW{o}c, as PackConv2d and ConvertLayout write it): a register tile of a few output
    columns x one block of channels (one vector per column; the input read as a broadcast scalar,
    so any stride works), accumulated over every reduction loop; tasks of (outer, y) in parallel;
    the epilogue folded into the write-back. The padded input stays a pass of its own (scheduled
    as elementwise): computing its rows per task repeats them for every block of channels."""
    block = sch.get(block_rv)
    if not _is_reduction(block) or _matmul_loads(block) is None:
        return False
    loc = sch.state.locate_block(block_rv)
    bound = {iv.var: value for iv, value in zip(block.iter_vars, loc.realize.iter_values)}
    store = block.body
    # Unit loops stay where they are (batch 1, a 1x1 kernel's kh and kw, bound or made constants
    # by Simplify), so both pipelines' forms get the same steps; the output's y, x, c loops count.
    tile_values = [bound.get(index) for index in store.indices[-3:]]
    all_loops = sch.get_loops(block_rv)
    loops = [lp for lp in all_loops
             if _extent(sch, lp) != 1 or any(v is sch.get(lp).loop_var for v in tile_values)]  # type: ignore[union-attr]
    roles = _loop_roles(sch, block_rv, loops)
    if roles is None or roles != sorted(roles, key=lambda r: r == "R") or "R" not in roles:
        return False  # spatial loops first, then the reductions, as LegalizeOps writes them
    spatial = [lp for lp, r in zip(loops, roles) if r == "S"]
    reduction = [lp for lp, r in zip(loops, roles) if r == "R"]
    if len(spatial) < 3 or len(store.indices) < 5:
        return False
    row, col, lane = spatial[-3:]
    for index, loop in zip(store.indices[-3:], (row, col, lane)):
        if bound.get(index) is not sch.get(loop).loop_var:  # type: ignore[union-attr]
            return False
    width, lanes = _extent(sch, col), _extent(sch, lane)
    if width is None or lanes is None or not 4 <= lanes <= _vector_lanes(_output_dtype(block)):
        return False
    work_bytes = _work_bytes(sch, loops, _output_dtype(block))
    x0, x1 = sch.split(col, [None, _conv_columns(width)])
    sch.reorder(*spatial[:-3], row, x0, *reduction, x1, lane)
    # A unit loop left between the outer loops (one block of output channels) is fused with them.
    task = sch.fuse(*all_loops[all_loops.index(spatial[0]):all_loops.index(row) + 1]) if spatial[:-3] else row
    epilogues = sch.scope_neighbours(block_rv, producers=False)
    write_back = sch.cache_write(block_rv, 0, "local")
    _fold_epilogue(sch, epilogues, write_back, x0)
    init = sch.decompose_reduction(block_rv, reduction[0])
    sch.unroll(x1)
    sch.vectorize(lane)
    for other in (init, write_back):
        _vectorize_tile(sch, other, x0)
    if work_bytes >= PARALLEL_MIN_BYTES:
        sch.parallel(task)
    return True


def _packed_pool_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A reduction over a window into an output with its channels innermost and short (max, avg
    and adaptive pooling in NCHW16c): a tile of output columns x the vector of channels (one
    register per column), accumulated over the window; tasks of (outer, row) in parallel, each
    computing the padded input rows it reads; the epilogue (the average's division) folded."""
    block = sch.get(block_rv)
    if not _is_reduction(block) or not isinstance(block.body, tir.BufferStore) or _matmul_loads(block) is not None:
        return False
    loc = sch.state.locate_block(block_rv)
    bound = {iv.var: value for iv, value in zip(block.iter_vars, loc.realize.iter_values)}
    store = block.body
    if len(store.indices) < 5:
        return False
    tile_values = [bound.get(index) for index in store.indices[-3:]]
    # Unit loops other than the tile's stay put (a global pool's 1 x 1 output keeps its row, column).
    loops = [lp for lp in sch.get_loops(block_rv)
             if _extent(sch, lp) != 1 or any(v is sch.get(lp).loop_var for v in tile_values)]  # type: ignore[union-attr]
    roles = _loop_roles(sch, block_rv, loops)
    if roles is None or roles != sorted(roles, key=lambda r: r == "R") or "R" not in roles:
        return False
    spatial = [lp for lp, r in zip(loops, roles) if r == "S"]
    reduction = [lp for lp, r in zip(loops, roles) if r == "R"]
    if len(spatial) < 3:
        return False
    row, col, lane = spatial[-3:]
    for value, loop in zip(tile_values, (row, col, lane)):
        if value is not sch.get(loop).loop_var:  # type: ignore[union-attr]
            return False
    width, lanes = _extent(sch, col), _extent(sch, lane)
    if width is None or lanes is None or not 4 <= lanes <= _vector_lanes(_output_dtype(block)):
        return False
    work_bytes = _work_bytes(sch, loops, _output_dtype(block))
    x0, x1 = sch.split(col, [None, _conv_columns(width)])
    sch.reorder(*spatial[:-3], row, x0, *reduction, x1, lane)
    task = sch.fuse(*spatial[:-3], row) if spatial[:-3] else row
    producers = [p for p in sch.scope_neighbours(block_rv, producers=True) if _is_spatial(p)]
    epilogues = sch.scope_neighbours(block_rv, producers=False)
    write_back = sch.cache_write(block_rv, 0, "local")
    _fold_epilogue(sch, epilogues, write_back, x0)
    init = sch.decompose_reduction(block_rv, reduction[0])
    for producer in producers:  # the padded input: only the rows this task reads
        pad = sch.get_block(producer.name_hint)
        sch.compute_at(pad, task)
        pad_loops = sch.get_loops(pad)
        if (_extent(sch, pad_loops[-1]) or 0) <= lanes:
            sch.vectorize(pad_loops[-1])  # the block of channels: contiguous in both buffers
    sch.unroll(x1)
    sch.vectorize(lane)
    for other in (init, write_back):
        _vectorize_tile(sch, other, x0)
    if work_bytes >= PARALLEL_MIN_BYTES:
        sch.parallel(task)
    return True


def _unpack_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A block that only moves data and whose short innermost loop (the channels of a packed block,
    NCHW16c -> NCHW) is not the one its store runs along: tiles of a vector of output columns x
    the short loop unrolled, so each store is a whole vector; the outer loops parallel. Stores
    along the short loop would scatter a vector over rows that are often 4 KB apart."""
    block = sch.get(block_rv)
    if not _is_spatial(block) or not _moves_data_only(block) or not block.body.indices:
        return False
    loops = sch.get_loops(block_rv)
    if len(loops) < 2 or not _only_block_under(sch, loops[0]):
        return False
    loc = sch.state.locate_block(block_rv)
    bound = {iv.var: value for iv, value in zip(block.iter_vars, loc.realize.iter_values)}
    last, block_size = block.body.indices[-1], None
    if isinstance(last, tir.FloorMod) and as_const_int(last.b) is not None:
        last, block_size = last.a, as_const_int(last.b)  # c % 16: contiguous along c within a block
    along = bound.get(last)  # type: ignore[arg-type]
    col = next((lp for lp in loops[:-1] if sch.get(lp).loop_var is along), None)  # type: ignore[union-attr]
    dtype = _output_dtype(block)
    lanes, short, width = _vector_lanes(dtype), _extent(sch, loops[-1]), _extent(sch, col) if col else None
    if col is None or short is None or short > lanes or width is None or width < 4:
        return False
    work_bytes = _work_bytes(sch, loops, dtype)
    c0, c1 = sch.split(col, [None, min(lanes, width, block_size or lanes)])
    outer = [lp for lp in loops[:-1] if lp is not col]
    sch.reorder(*outer, c0, loops[-1], c1)
    sch.vectorize(c1)
    sch.unroll(loops[-1])
    _parallelize(sch, [*outer, c0], work_bytes)
    return True


REDUCTION_RULES: tuple[Rule, ...] = (_dot_rule, _tile_rule, _packed_conv_rule, _packed_pool_rule, _conv_rule,
                                     _reduction_rule)
from .transformer_rules import row_reduction_rule, transposed_panel_rule  # noqa: E402  (uses helpers above)
REDUCTION_RULES = (transposed_panel_rule, *REDUCTION_RULES[:-1], row_reduction_rule, REDUCTION_RULES[-1])
from .gemv_rules import few_rows_rule, gemv_rule  # noqa: E402  (uses helpers above)
from .transformer_rules import row_chain_rule  # noqa: E402
REDUCTION_RULES = (gemv_rule, few_rows_rule, *REDUCTION_RULES[:-2], row_chain_rule, *REDUCTION_RULES[-2:])
from .conv_rules import shallow_conv_rule, wide_conv_rule  # noqa: E402  (uses helpers above)
REDUCTION_RULES = tuple(r for rule in REDUCTION_RULES for r in ((shallow_conv_rule, wide_conv_rule, rule)
                                                               if rule is _packed_conv_rule
                                                               else (rule,)))
ELEMENTWISE_RULES: tuple[Rule, ...] = (_unpack_rule, _elementwise_rule)


def _attempt(sch: Schedule, rule: Callable[[Schedule, BlockRV], bool], block_rv: BlockRV) -> bool:
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


def default_schedule(func: tir.PrimFunc) -> Schedule:
    """The default CPU schedule of one PrimFunc, as a Schedule (``.mod["main"]``, ``.trace``)."""
    sch = Schedule(IRModule({"main": func}))
    if not _has_blocks(func):
        return sch
    _inline_producers(sch)
    # Reductions first: they take their producers (a padded input) into their tiles and fold
    # their epilogues into the write-back; the elementwise blocks left are scheduled after.
    for rules in (REDUCTION_RULES, ELEMENTWISE_RULES):
        for name in _root_blocks(sch):
            block_rv = BlockRV("main", "probe", name)
            if not any(_attempt(sch, rule, block_rv) for rule in rules):
                continue
    return sch


class DefaultCPUSchedule(PrimFuncPass):
    """Apply the default CPU schedule to every PrimFunc not already scheduled (see
    :func:`is_scheduled`); the result is marked ``tir.is_scheduled``."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        if is_scheduled(func) or not _has_blocks(func):
            return func
        scheduled = default_schedule(func).mod["main"]
        self.stats["scheduled_functions"] += 1
        return scheduled.with_attr("tir.is_scheduled", True)  # type: ignore[union-attr]


register_pass("DefaultCPUSchedule", DefaultCPUSchedule)
