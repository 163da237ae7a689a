"""Gathers and scatters by index tensors (TVM's ``topi/transform.h`` gather, gather_nd and
``topi/scatter*.py``) and slice_scatter. An index may be negative and then counts from the end,
as in numpy and ONNX; the legalizations check first that each lies in ``[-size, size)``."""
from __future__ import annotations

from typing import Any

from ..ir import tir
from ..te import expr as E
from ..te.expr import Expr, wrap
from ..te.tensor import Tensor
from ..te.tensor_arith import broadcast_index, cpp_compute

__all__ = ["gather", "gather_nd", "wrap_index", "slice_scatter", "index_tensor", "dynamic_slice_shape",
           "dynamic_strided_slice"]


def wrap_index(pos: Expr, dim: object) -> Expr:
    """``pos`` in the dtype of ``dim``, a negative one counted from the end."""
    pos = pos.astype(dim.dtype)  # type: ignore[attr-defined]
    if pos.dtype.startswith("uint"):
        return pos
    return E.if_then_else(pos < 0, pos + dim, pos)


def gather(data: Tensor, axis: int, indices: Tensor) -> Tensor:
    """``out[i...] = data[i...]`` with ``i[axis]`` replaced by ``indices[i...]`` (block ``T_gather``)."""
    axis = axis + data.ndim if axis < 0 else axis

    def f(ax: list) -> Expr:
        idx = list(ax)
        idx[axis] = wrap_index(indices(*ax), data.shape[axis])
        return data(*idx)

    return cpp_compute(list(indices.shape), f, "T_gather", "injective")


def gather_nd(data: Tensor, indices: Tensor, batch_dims: int = 0) -> Tensor:
    """TVM's gather_nd: ``indices`` of shape ``(M, Y...)`` (the index tuple first), the first
    ``batch_dims`` of ``Y`` shared with ``data``; the result is ``Y + data.shape[batch_dims + M:]``
    (block ``T_gather_nd``)."""
    m = int(indices.shape[0].value)  # type: ignore[attr-defined]
    ylen = indices.ndim - 1
    shape = [*indices.shape[1:], *data.shape[batch_dims + m:]]

    def f(ax: list) -> Expr:
        y = ax[:ylen]
        picked = [wrap_index(indices(k, *y), data.shape[batch_dims + k]) for k in range(m)]
        return data(*y[:batch_dims], *picked, *ax[ylen:])

    return cpp_compute(shape, f, "T_gather_nd", "injective")


def slice_scatter(data: Tensor, src: Tensor, start: Any, end: Any, step: int, axis: int) -> Tensor:
    """``data`` with ``data[start:end:step]`` along ``axis`` replaced by ``src`` (bounds already
    normalised to ``[0, dim]``) (block ``T_slice_scatter``)."""
    axis = axis + data.ndim if axis < 0 else axis

    def f(ax: list) -> Expr:
        i = wrap(ax[axis])
        offset = i - start
        inside = E.all(i >= start, i < end, offset % step == 0) if step != 1 else E.all(i >= start, i < end)
        idx = list(ax)
        idx[axis] = offset // step if step != 1 else offset
        return E.if_then_else(inside, src(*idx), data(*ax))

    return cpp_compute(list(data.shape), f, "T_slice_scatter", "injective")


def index_tensor(data: Tensor, indices: list, shape: list) -> Tensor:
    """numpy's ``data[I0, I1, ...]``: the index tensors broadcast to ``shape``, followed by the data's
    other axes (block ``advanced_index``)."""
    k, b = len(indices), len(shape)
    out_shape = [*shape, *data.shape[k:]]

    def f(ax: list) -> Expr:
        picked = [wrap_index(t(*broadcast_index(t, shape, ax[:b])), data.shape[j]) for j, t in enumerate(indices)]
        return data(*picked, *ax[b:])

    return cpp_compute(out_shape, f, "advanced_index", "injective")


def _bounds(b: Expr, e: Expr, s: Expr, dim: Any) -> tuple:
    """A slice's start and its length, as Python reads ``b:e:s`` on ``dim`` (0 for a zero step)."""
    d = wrap(dim)
    neg = s < 0

    def canon(v: Expr, lo: Any, hi: Any) -> Expr:
        v = E.if_then_else(v < 0, v + d, v)
        return E.binary(tir.Min, E.binary(tir.Max, v, lo), hi)

    start = E.if_then_else(neg, canon(b, -1, d - 1), canon(b, 0, d))
    stop = E.if_then_else(neg, canon(e, -1, d - 1), canon(e, 0, d))
    span = E.if_then_else(neg, start - stop, stop - start)
    step = E.if_then_else(neg, 0 - s, s)
    length = E.if_then_else(s == 0, wrap(tir.IntImm(d.dtype, 0)),
                            E.binary(tir.Max, (span + step - 1) // E.binary(tir.Max, step, 1), 0))
    return start, length


def dynamic_slice_shape(x: Tensor, begin: Tensor, end: Tensor, strides: Tensor) -> Tensor:
    """The shape of ``x[begin:end:strides]`` (one slice per axis, bounds read at run time) as a 1-D
    int64 tensor (block ``T_shape_func_strided_slice_dynamic``)."""
    def f(i: Any) -> Expr:
        dim: Any = x.shape[-1]
        for k in range(x.ndim - 2, -1, -1):
            dim = tir.Select(tir.EQ(getattr(i, "expr", i), tir.IntImm(i.dtype, k)), x.shape[k], dim)
        return _bounds(begin(i), end(i), strides(i), dim)[1]

    return cpp_compute([tir.IntImm("int64", x.ndim)], lambda ax: f(ax[0]), "T_shape_func_strided_slice_dynamic",
                       "injective")


def dynamic_strided_slice(x: Tensor, begin: Tensor, end: Tensor, strides: Tensor, shape: list) -> Tensor:
    """``x[begin:end:strides]``, each axis' bounds read from the tensors, of the given ``shape``
    (computed at run time) (block ``T_strided_slice_dynamic``)."""
    def f(ax: list) -> Expr:
        idx = []
        for k, a in enumerate(ax):
            pos = tir.IntImm("int64", k)
            start, _ = _bounds(begin(pos), end(pos), strides(pos), x.shape[k])
            idx.append(start + wrap(a) * strides(pos))
        return x(*idx)

    return cpp_compute(list(shape), f, "T_strided_slice_dynamic", "injective")
