"""Sorting and scans as TE computes: ``argsort``, ``sort``, ``topk``, ``cumsum``, ``cumprod``.

TVM sorts through an extern library call and scans through hand-written loops; tvmlite writes
both as plain computes so every backend (TE evaluation, the interpreter, LLVM) runs them. A sort
first ranks each element (``<x>_rank``: how many elements come before it, ties in index order, so
the sort is stable as TVM's ``std::stable_sort``) and then places the element of each rank (a
reduction over the axis); a scan sums (multiplies) the elements up to its position. Both are
quadratic in the length of the axis, which is what a block-level compute without scatter allows."""
from __future__ import annotations

from typing import Any

from ..ir import tir
from ..te import expr as E
from ..te import tensor as T
from ..te.expr import Expr
from ..te.tensor import Tensor
from ..te.tensor_arith import cpp_compute
from .transform import reshape
from .utils import prod

__all__ = ["argsort", "sort", "topk", "cumsum", "cumprod", "searchsorted", "median",
           "multinomial_from_uniform"]


def _axis(axis: int, ndim: int) -> int:
    """``axis`` counted from the front."""
    a = axis + ndim if axis < 0 else axis
    if not 0 <= a < ndim:
        raise ValueError(f"axis {axis} is out of range for {ndim} dimensions")
    return a


def _at(ax: list, axis: int, i: Any) -> list:
    """``ax`` with position ``axis`` replaced by ``i``."""
    return ax[:axis] + [i] + ax[axis + 1:]


def _rank(x: Tensor, axis: int, is_ascend: bool) -> Tensor:
    """The sorted position of each element along ``axis`` (block ``<x>_rank``, int64)."""
    j = T.reduce_axis((0, x.shape[axis]), "j")

    def f(ax: list) -> Any:
        me, other = x(*ax), x(*_at(ax, axis, j))
        first = other < me if is_ascend else other > me
        tie_before = E.all(other == me, E.cast(j, "int64") < E.cast(ax[axis], "int64"))
        return T.sum(E.select(E.any(first, tie_before), E.const(1, "int64"), E.const(0, "int64")), axis=j)

    return cpp_compute(x.shape, f, f"{x.op.name}_rank", "sort")


def _positions(x: Tensor, axis: int, is_ascend: bool, dtype: str, name: str) -> Tensor:
    """For each sorted position, the index along ``axis`` of the element placed there."""
    rank = _rank(x, axis, is_ascend)
    i = T.reduce_axis((0, x.shape[axis]), "i")

    def f(ax: list) -> Any:
        placed = rank(*_at(ax, axis, i)) == E.cast(ax[axis], "int64")
        return T.sum(E.select(placed, E.cast(i, dtype), E.const(0, dtype)), axis=i)

    return cpp_compute(x.shape, f, name, "sort")


def argsort(x: Tensor, axis: int = -1, is_ascend: bool = True, dtype: str = "float32") -> Tensor:
    """The indices that sort ``x`` along ``axis`` (stable) (blocks ``<x>_rank``, ``argsort``)."""
    return _positions(x, _axis(axis, x.ndim), is_ascend, dtype, "argsort")


def _gather(x: Tensor, idx: Tensor, axis: int, count: Any, name: str) -> Tensor:
    """``x`` read at the first ``count`` positions of ``idx`` along ``axis``."""
    shape = _at(list(x.shape), axis, count)
    return cpp_compute(shape, lambda ax: x(*_at(ax, axis, idx(*ax))), name, "sort")


def sort(x: Tensor, axis: int = -1, is_ascend: bool = True) -> Tensor:
    """``x`` sorted along ``axis`` (blocks ``<x>_rank``, ``argsort``, ``sort``)."""
    a = _axis(axis, x.ndim)
    return _gather(x, _positions(x, a, is_ascend, "int64", "argsort"), a, x.shape[a], "sort")


def topk(x: Tensor, k: int = 1, axis: int = -1, ret_type: str = "both", is_ascend: bool = False,
         dtype: str = "int64") -> Any:
    """The ``k`` largest (smallest with ``is_ascend``) elements along ``axis`` and/or their indices, sorted."""
    # k < 1, or k past the end of the axis, takes the whole axis (TVM's rule)
    a = _axis(axis, x.ndim)
    n = x.shape[a]
    count = n if k < 1 or (isinstance(n, tir.IntImm) and k >= n.value) else tir.IntImm(n.dtype, k)
    idx = _positions(x, a, is_ascend, "int64", "topk_order")
    values = _gather(x, idx, a, count, "topk_values")
    indices = cpp_compute(_at(list(x.shape), a, count), lambda ax: E.cast(idx(*ax), dtype), "topk_indices", "sort")
    return {"both": [values, indices], "values": values, "indices": indices}[ret_type]


def _scan(x: Tensor, axis: int | None, dtype: str | None, exclusive: bool, product: bool) -> Tensor:
    """The running sum (product) of ``x`` along ``axis`` (of the flattened ``x`` when None)."""
    if axis is None:
        x = reshape(x, [prod(x.shape).expr])
        axis = 0
    a = _axis(axis, x.ndim)
    out_dtype = dtype or x.dtype
    j = T.reduce_axis((0, x.shape[a]), "j")
    identity = E.const(1 if product else 0, out_dtype)

    def f(ax: list) -> Any:
        here = E.cast(j, "int64") < E.cast(ax[a], "int64") if exclusive else \
            E.cast(j, "int64") <= E.cast(ax[a], "int64")
        term: Expr = E.select(here, E.cast(x(*_at(ax, a, j)), out_dtype), identity)
        return (T.prod if product else T.sum)(term, axis=j)

    return cpp_compute(x.shape, f, "cumprod" if product else "cumsum", "scan")


def cumsum(x: Tensor, axis: int | None = None, dtype: str | None = None, exclusive: bool = False) -> Tensor:
    """The cumulative sum along ``axis`` (of the flattened ``x`` when None) (block ``cumsum``)."""
    return _scan(x, axis, dtype, exclusive, False)


def cumprod(x: Tensor, axis: int | None = None, dtype: str | None = None, exclusive: bool = False) -> Tensor:
    """The cumulative product along ``axis`` (of the flattened ``x`` when None) (block ``cumprod``)."""
    return _scan(x, axis, dtype, exclusive, True)


def searchsorted(sorted_sequence: Tensor, values: Tensor, right: bool = False, out_dtype: str = "int64") -> Tensor:
    """Where each value goes in the increasing 1-D ``sorted_sequence`` (block ``searchsorted``):
    the count of elements below it (at most it with ``right``)."""
    j = T.reduce_axis((0, sorted_sequence.shape[0]), "j")
    common = sorted_sequence.dtype if sorted_sequence.dtype == values.dtype else "float64"

    def f(ax: list) -> Any:
        b, v = E.cast(sorted_sequence(j), common), E.cast(values(*ax), common)
        below = b <= v if right else b < v
        return T.sum(E.select(below, E.const(1, out_dtype), E.const(0, out_dtype)), axis=j)

    return cpp_compute(values.shape, f, "searchsorted", "searchsorted")


def median(x: Tensor, axis: list[int] | None = None, keepdims: bool = False) -> Any:
    """The lower median over one axis and its index (TVM's rule), or the median of all elements."""
    ndim, whole = x.ndim, not axis
    if whole:
        x = reshape(x, [prod(x.shape).expr])
    a = 0 if whole else _axis(axis[0], ndim)  # type: ignore[index]
    n = x.shape[a]
    zero, one = tir.IntImm(n.dtype, 0), tir.IntImm(n.dtype, 1)
    order = _positions(x, a, True, "int64", "argsort")
    mid = (E.cast(n, "int64") - 1) // 2
    kept = _at(list(x.shape), a, one)
    value = cpp_compute(kept, lambda ax: x(*_at(ax, a, order(*_at(ax, a, mid)))), "median", "sort")
    if whole:
        shape = [one] * ndim if keepdims else []
        return cpp_compute(shape, lambda ax: value(zero), "T_reshape" if keepdims else "T_squeeze", "injective")
    index = cpp_compute(kept, lambda ax: order(*_at(ax, a, mid)), "median_index", "sort")
    if keepdims:
        return [value, index]
    out = [d for i, d in enumerate(x.shape) if i != a]
    return [cpp_compute(out, lambda ax, t=t: t(*(ax[:a] + [zero] + ax[a:])), name, "injective")
            for t, name in ((value, "T_squeeze"), (index, "T_squeeze_1"))]


def multinomial_from_uniform(prob: Tensor, uniform_sample: Tensor, sample_indices: Tensor,
                             dtype: str = "int64") -> Tensor:
    """For each sample, the first class whose cumulative probability exceeds its uniform draw
    (the last class when none does), in the row ``sample_indices`` picks (TVM's CPU kernel)."""
    cdf = cumsum(prob, 1)
    vocab = prob.shape[1]
    j = T.reduce_axis((0, vocab), "j")

    def f(ax: list) -> Any:
        row = sample_indices(ax[0], tir.IntImm(sample_indices.shape[1].dtype, 0))
        u = E.cast(uniform_sample(ax[0], tir.IntImm(uniform_sample.shape[1].dtype, 0)), prob.dtype)
        passed = E.all(cdf(row, j) <= u, E.cast(j, "int64") < E.cast(vocab, "int64") - 1)
        return T.sum(E.select(passed, E.const(1, dtype), E.const(0, dtype)), axis=j)

    return cpp_compute(list(uniform_sample.shape), f, "T_get_sample_index", "sampling")
