"""Default-schedule rules for the kernels of a transformer layer that the general rules of
``default_cpu.py`` do poorly.

**Row reductions** (softmax's max and sum of exponentials, layer_norm's mean and variance):
``out[.., i] = reduce_k f(x[.., i, k])`` with every input contiguous along k. The general
reduction rule vectorises along i (the output is contiguous there), so each vector gathers 16
elements 128 floats apart; here each row is reduced along k instead, the sum reassociated into
vector partial sums, and the rows run in parallel.

**Linear layers with the weight stored [out, in]** (``x @ W.T``, as PyTorch exports them), when
the rows are many: the matmul rule's register tile, each task copying its K x NR panel of W
transposed (``cache_read`` + ``transform_layout``, then computed per task). Tiles of dot
products (the ``x @ W.T`` rule) reduce every 4 x 4 block of outputs horizontally at the end,
which costs more than the copy once there are 128 rows (two row blocks) to share it."""
from __future__ import annotations

from typing import Callable

from ...ir import tir
from ...ir.arith import IndexMap, as_const_int
from ...ir.stmt_functor import post_order_visit
from .schedule import Schedule
from .state import BlockRV, LoopRV, ScheduleError
from .tree import child_realizes
from .generic_rules import (tile_rule)
from .rule_support import (MATMUL_ROW_BLOCK, PARALLEL_MIN_BYTES, REASSOC_ANNOTATION, cache_read_of, elem_bytes,
                           inline_layout_producers, is_reduction, is_spatial, iter_bindings, loop_extent, loop_roles,
                           Matmul, matmul_loads, only_block_under, output_dtype, parallelize, root_blocks,
                           vector_lanes, work_bytes_of)

__all__ = ["row_reduction_rule", "row_chain_rule", "transposed_panel_rule", "ROW_GROUP"]

ROW_GROUP = 4  # rows a task of the row-chain rule computes together


def _loads(expr: tir.PrimExpr) -> list[tir.BufferLoad]:
    found: list[tir.BufferLoad] = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, tir.BufferLoad) else None)
    return found


def row_reduction_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A reduction over one innermost loop whose inputs all run along it: spatial loops fused and
    parallel outside, the reduction inside and reassociated (vector partial sums along the row)."""
    block = sch.get(block_rv)
    if not is_reduction(block) or not isinstance(block.body, tir.BufferStore):
        return False
    loops = sch.get_loops(block_rv)
    if not loops or not only_block_under(sch, loops[0]):
        return False
    roles = loop_roles(sch, block_rv, loops)
    if roles is None or roles[-1] != "R" or roles.count("R") != 1:
        return False
    reduce_ivs = [iv for iv in block.iter_vars if iv.iter_type == tir.IterType.CommReduce]
    k = reduce_ivs[0].var
    dtype = output_dtype(block)
    if (loop_extent(sch, loops[-1]) or 0) < vector_lanes(dtype):
        return False
    store = block.body
    inputs = [ld for ld in _loads(store.value) if ld.buffer is not store.buffer]
    if not inputs or any(not ld.indices or ld.indices[-1] is not k for ld in inputs):
        return False  # some input is not contiguous along the row
    spatial = loops[:-1]
    work_bytes = work_bytes_of(sch, loops, dtype)
    sch.decompose_reduction(block_rv, loops[-1])
    sch.annotate(block_rv, REASSOC_ANNOTATION, 1)
    parallelize(sch, spatial, work_bytes)
    return True


def transposed_panel_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """``x @ W.T`` (or a batched ``q @ k.T``) with B stored [.., n, .., k] and at least
    2 * MATMUL_ROW_BLOCK rows: B's panels copied with n and k swapped, then the register-tiled
    matmul rule."""
    if not is_reduction(sch.get(block_rv)):
        return False
    inline_layout_producers(sch, block_rv)
    mm = Matmul(sch, block_rv)
    if mm.b_along_j or not (mm.a_along_k and mm.b_along_k) or mm.m is None or mm.n is None:
        return False
    if mm.m < 2 * MATMUL_ROW_BLOCK or mm.m % MATMUL_ROW_BLOCK or mm.n % 16:
        return False
    bound = iter_bindings(sch, block_rv, mm.block)
    j_var, k_var = (sch.get(lp).loop_var for lp in (mm.j, mm.k))  # type: ignore[union-attr]
    dims = [next((d for d, index in enumerate(mm.b.indices) if bound.get(index) is var), None)  # type: ignore[arg-type]
            for var in (j_var, k_var)]
    if None in dims:
        return False  # j or k is not a plain index of B
    pack = cache_read_of(sch, block_rv, mm.b.buffer)
    sch.transform_layout(pack, ("write", 0), _swap_map(len(mm.b.indices), *dims))  # type: ignore[arg-type]
    return tile_rule(sch, block_rv)


def _swap_map(ndim: int, a: int, b: int) -> IndexMap | Callable[..., tuple]:
    """The index map swapping dimensions ``a`` and ``b`` of an ``ndim``-D buffer."""
    if ndim == 2:
        return lambda j, k: (k, j)
    args = [tir.Var(f"i{d}", "int64") for d in range(ndim)]
    out: list[tir.PrimExpr] = list(args)
    out[a], out[b] = out[b], out[a]
    return IndexMap(tuple(args), tuple(out))


def row_chain_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A row reduction followed by blocks over the same rows (softmax:
    max, exp, sum, normalise; layer_norm's mean, squared deviations, their sum, the square root):
    one parallel loop over groups of ROW_GROUP rows, each block computed per group inside it
    (``compute_at``), so a row is read from cache by every pass and the intermediates shrink to a
    group; sums reassociated into vector partial sums, a max (an ordered chain of compares) over
    the group's rows side by side, elementwise passes vectorised."""
    names = root_blocks(sch)
    first = sch.get(block_rv).name_hint
    if first not in names or names.index(first) == len(names) - 1:
        return False
    # Inspections first (not recorded in the trace). Unit loops aside, every block of the chain
    # runs over the rows and the row's length K, or over the rows only (a value per row); each has
    # a loop nest of its own, and the last one is elementwise.
    probes = [BlockRV(block_rv.func_name, "probe", n) for n in names[names.index(first):]]
    if not _is_row_reduction(sch, probes[0]):
        return False
    locs = [sch.state.locate_block(rv) for rv in probes]
    full = [as_const_int(lp.extent) for lp in locs[0].loops if as_const_int(lp.extent) != 1]
    if None in full or len(full) < 2:
        return False
    rows_shape = full[:-1]
    size = 1
    for rv, loc in zip(probes[1:], locs[1:]):
        extents = [as_const_int(lp.extent) for lp in loc.loops if as_const_int(lp.extent) != 1]
        if extents not in (full, rows_shape) or not loc.loops or len(child_realizes(loc.loops[0])) != 1:
            break
        if not (is_spatial(loc.block) or (extents == full and _is_row_reduction(sch, rv))):
            break
        size += 1
    while size > 1 and not is_spatial(locs[size - 1].block):
        size -= 1  # the chain ends with an elementwise block (the next kernel, a matmul, stays out)
    if size < 2:
        return False
    probes, locs = probes[:size], locs[:size]
    names_in_chain = {p.block_name for p in probes}
    for rv in probes[:-1]:  # each block feeds the chain and nothing else, so it can move into it
        consumers = {c.name_hint for c in sch.scope_neighbours(rv, producers=False)}
        if not consumers or not consumers <= names_in_chain:
            return False
    chain = [block_rv] + [sch.get_block(p.block_name) for p in probes[1:]]
    dtype = output_dtype(locs[-1].block)
    lanes = vector_lanes(dtype)
    loops = sch.get_loops(chain[-1])
    # The task loop: the loops down to the innermost row loop, whose group of rows is split off
    # first (compute_at's regions see through a split, not through a fused index's division).
    last = [lp for lp in loops if loop_extent(sch, lp) != 1][len(rows_shape) - 1]
    outer = loops[:loops.index(last)]
    group = ROW_GROUP if rows_shape[-1] % ROW_GROUP == 0 and rows_shape[-1] > ROW_GROUP else 1
    outer.append(sch.split(last, [None, group])[0] if group > 1 else last)
    task = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    for rv in reversed(chain[:-1]):
        sch.compute_at(rv, task)
    for rv, loc in zip(chain, locs):
        inner = [lp for lp in sch.get_loops(rv)[1:] if loop_extent(sch, lp) != 1]
        along_k = [as_const_int(lp.extent) for lp in loc.loops if as_const_int(lp.extent) != 1] == full
        if len(inner) != (group > 1) + along_k:
            raise ScheduleError("a block of the chain does not cover its rows once per iteration")
        if not along_k:
            continue  # a value per row
        if is_spatial(sch.get(rv)):
            if full[-1] % lanes == 0:
                sch.vectorize(sch.split(inner[-1], [None, lanes])[1])
        elif group > 1 and _is_select_reduction(sch.get(rv)):
            # A max/min is a chain of compares in order (NaN semantics): the group's rows side by
            # side give independent chains the CPU overlaps.
            sch.reorder(inner[1], inner[0])
            sch.decompose_reduction(rv, inner[1])
            sch.unroll(inner[0])
        else:
            sch.decompose_reduction(rv, inner[-1])
            sch.annotate(rv, REASSOC_ANNOTATION, 1)
    n_rows = 1
    for extent in rows_shape:
        n_rows *= extent
    if n_rows * full[-1] * elem_bytes(dtype) >= PARALLEL_MIN_BYTES and n_rows // group > 1:
        sch.parallel(task)
    return True


def _is_select_reduction(block: tir.Block) -> bool:
    """The update is ``T.max`` / ``T.min`` of the accumulator (compiled as an ordered select)."""
    return isinstance(block.body, tir.BufferStore) and isinstance(block.body.value, (tir.Max, tir.Min))


def _is_row_reduction(sch: Schedule, block_rv: BlockRV) -> bool:
    """A reduction over its innermost loop only, every input contiguous along it (an inspection)."""
    loc = sch.state.locate_block(block_rv)
    block = loc.block
    if not is_reduction(block) or not isinstance(block.body, tir.BufferStore) or not loc.loops:
        return False
    if matmul_loads(block) is not None:
        return False  # a dot product along the row: the matmul rules' business
    loops = [LoopRV(block_rv.func_name, "probe", lp.loop_var) for lp in loc.loops]  # unnamed: not in the trace
    roles = loop_roles(sch, block_rv, loops)
    if roles is None or roles[-1] != "R" or roles.count("R") != 1:
        return False
    k = next(iv.var for iv in block.iter_vars if iv.iter_type == tir.IterType.CommReduce)
    inputs = [ld for ld in _loads(block.body.value) if ld.buffer is not block.body.buffer]
    return bool(inputs) and all(ld.indices and ld.indices[-1] is k for ld in inputs)
