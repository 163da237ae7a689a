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
from ...ir.arith import IndexMap
from ...ir.stmt_functor import post_order_visit
from .default_cpu import (MATMUL_ROW_BLOCK, REASSOC_ANNOTATION, _inline_layout_producers, _Matmul, _tile_rule, _extent, _is_reduction, _loop_roles, _only_block_under,
                          _output_dtype, _parallelize, _vector_lanes, _work_bytes)
from .schedule import Schedule
from .state import BlockRV

__all__ = ["row_reduction_rule", "transposed_panel_rule"]


def _loads(expr: tir.PrimExpr) -> list[tir.BufferLoad]:
    found: list[tir.BufferLoad] = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, tir.BufferLoad) else None)
    return found


def row_reduction_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """A reduction over one innermost loop whose inputs all run along it: spatial loops fused and
    parallel outside, the reduction inside and reassociated (vector partial sums along the row)."""
    block = sch.get(block_rv)
    if not _is_reduction(block) or not isinstance(block.body, tir.BufferStore):
        return False
    loops = sch.get_loops(block_rv)
    if not loops or not _only_block_under(sch, loops[0]):
        return False
    roles = _loop_roles(sch, block_rv, loops)
    if roles is None or roles[-1] != "R" or roles.count("R") != 1:
        return False
    reduce_ivs = [iv for iv in block.iter_vars if iv.iter_type == tir.IterType.CommReduce]
    k = reduce_ivs[0].var
    dtype = _output_dtype(block)
    if (_extent(sch, loops[-1]) or 0) < _vector_lanes(dtype):
        return False
    store = block.body
    inputs = [ld for ld in _loads(store.value) if ld.buffer is not store.buffer]
    if not inputs or any(not ld.indices or ld.indices[-1] is not k for ld in inputs):
        return False  # some input is not contiguous along the row
    spatial = loops[:-1]
    work_bytes = _work_bytes(sch, loops, dtype)
    sch.decompose_reduction(block_rv, loops[-1])
    sch.annotate(block_rv, REASSOC_ANNOTATION, 1)
    _parallelize(sch, spatial, work_bytes)
    return True


def transposed_panel_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """``x @ W.T`` (or a batched ``q @ k.T``) with B stored [.., n, .., k] and at least
    2 * MATMUL_ROW_BLOCK rows: B's panels copied with n and k swapped, then the register-tiled
    matmul rule."""
    if not _is_reduction(sch.get(block_rv)):
        return False
    _inline_layout_producers(sch, block_rv)
    mm = _Matmul(sch, block_rv)
    if mm.b_along_j or not (mm.a_along_k and mm.b_along_k) or mm.m is None or mm.n is None:
        return False
    if mm.m < 2 * MATMUL_ROW_BLOCK or mm.m % MATMUL_ROW_BLOCK or mm.n % 16:
        return False
    loc = sch.state.locate_block(block_rv)
    bound = {iv.var: value for iv, value in zip(mm.block.iter_vars, loc.realize.iter_values)}
    j_var, k_var = (sch.get(lp).loop_var for lp in (mm.j, mm.k))  # type: ignore[union-attr]
    dims = [next((d for d, index in enumerate(mm.b.indices) if bound.get(index) is var), None)  # type: ignore[arg-type]
            for var in (j_var, k_var)]
    if None in dims:
        return False  # j or k is not a plain index of B
    reads = sch.get(block_rv).reads
    index = next(n for n, r in enumerate(reads) if r.buffer is mm.b.buffer)
    pack = sch.cache_read(block_rv, index, "global")
    sch.transform_layout(pack, ("write", 0), _swap_map(len(mm.b.indices), *dims))  # type: ignore[arg-type]
    return _tile_rule(sch, block_rv)


def _swap_map(ndim: int, a: int, b: int) -> IndexMap | Callable[..., tuple]:
    """The index map swapping dimensions ``a`` and ``b`` of an ``ndim``-D buffer."""
    if ndim == 2:
        return lambda j, k: (k, j)
    args = [tir.Var(f"i{d}", "int64") for d in range(ndim)]
    out: list[tir.PrimExpr] = list(args)
    out[a], out[b] = out[b], out[a]
    return IndexMap(tuple(args), tuple(out))
