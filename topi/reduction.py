"""Reductions (TVM's ``topi/reduction.h``): ``sum``/``max``/``min``/``prod`` compute ``<x>_red``
with reduce axes ``k<i>`` (``i`` the reduced dimension); ``argmax``/``argmin`` reduce (index,
value) pairs in ``<x>_red_temp`` and pick the index in ``<x>_red``; ``mean``, ``variance`` and
``std`` are built from them as Relax's legalization builds them."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..ir import tir
from ..te import expr as E
from ..te import tensor as T
from ..te.expr import Expr, wrap
from ..te.tensor import Tensor
from . import broadcast, math
from ..te.tensor_arith import cpp_compute
from .utils import const_int, normalize_axes, prod as dims_prod

__all__ = ["sum", "max", "min", "prod", "argmax", "argmin", "mean", "variance", "std", "collapse_sum"]


def _target_shape(x: Tensor, axes: list[int], keepdims: bool) -> list[tir.PrimExpr]:
    """The output shape: reduced axes removed, or kept with size 1."""
    out = []
    for i, d in enumerate(x.shape):
        if i not in axes:
            out.append(d)
        elif keepdims:
            out.append(tir.IntImm(d.dtype, 1))
    return out


def _source_index(x: Tensor, axes: list[int], keepdims: bool, out_idx: list, red: list) -> list:
    """Indices into ``x`` from the output indices and the reduce axes."""
    idx, it_out, it_red = [], iter(out_idx), iter(red)
    for i in range(x.ndim):
        if i in axes:
            idx.append(next(it_red))
            if keepdims:
                next(it_out)
        else:
            idx.append(next(it_out))
    return idx


def _comm_reduce(reducer: T.CommReducer) -> Callable[..., Tensor]:
    """A ``topi.<reducer>(x, axis=None, keepdims=False)`` reduction."""

    def op(x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        axes = normalize_axes(axis, x.ndim)
        shape = _target_shape(x, axes, keepdims)
        red = [T.reduce_axis((0, x.shape[i]), f"k{i}") for i in axes]

        def f(ax: list) -> Any:
            return reducer(x(*_source_index(x, axes, keepdims, ax, red)), axis=red)

        return cpp_compute(shape, f, f"{x.op.name}_red", "comm_reduce")

    op.__name__ = reducer.name
    op.__doc__ = f"The {reducer.name} over ``axis`` (all axes when None) (block ``<x>_red``)."
    return op


sum = _comm_reduce(T.sum)  # noqa: A001 - TVM's name
max = _comm_reduce(T.max)  # noqa: A001
min = _comm_reduce(T.min)  # noqa: A001
prod = _comm_reduce(T.prod)


def _arg_reducer(bigger: bool) -> T.CommReducer:
    """The (index, value) reducer of argmax (``bigger``) or argmin; ties keep the first index."""

    def combine(lhs: tuple, rhs: tuple) -> tuple:
        lhs_idx, lhs_val = lhs
        rhs_idx, rhs_val = rhs
        better = lhs_val > rhs_val if bigger else lhs_val < rhs_val
        same = lhs_val == rhs_val
        update = E.any(better, E.all(same, lhs_idx < rhs_idx))
        return E.select(update, lhs_idx, rhs_idx), E.select(better, lhs_val, rhs_val)

    def identity(idx_dtype: str, val_dtype: str) -> tuple:
        return E.const(-1, idx_dtype), (E.min_value if bigger else E.max_value)(val_dtype)

    return T.comm_reducer(combine, identity, "argmax" if bigger else "argmin")


def _prod(values: list) -> int:
    """The product of known sizes."""
    out = 1
    for v in values:
        out *= v
    return out


_ARGMAX = _arg_reducer(True)
_ARGMIN = _arg_reducer(False)


def _arg_reduce(reducer: T.CommReducer) -> Callable[..., Tensor]:
    """A ``topi.argmax``/``argmin(x, axis=None, keepdims=False)`` over ``reducer``."""
    def op(x: Tensor, axis: int | None = None, keepdims: bool = False) -> Tensor:
        axes = normalize_axes(axis, x.ndim)
        shape = _target_shape(x, axes, keepdims)
        red = [T.reduce_axis((0, x.shape[i]), f"k{i}") for i in axes]
        dims = [x.shape[i] for i in axes]

        sizes = [const_int(d) for d in dims]

        def f(ax: list) -> Any:
            # The row-major position over the reduced axes: with known sizes a sum of index times
            # stride (k0 * 60 + k1 * 20 + k2 * 5 + k3, as TVM's simplifier leaves it), else nested.
            flat: Expr = wrap(red[0])
            if len(red) > 1 and all(v is not None for v in sizes):
                strides = [_prod(sizes[i + 1:]) for i in range(len(red))]
                flat = wrap(red[0]) * strides[0] if strides[0] != 1 else wrap(red[0])
                for r, st in zip(red[1:], strides[1:]):
                    flat = flat + (wrap(r) * st if st != 1 else r)
            else:
                for r, d in zip(red[1:], dims[1:]):
                    flat = flat * d + r
            return reducer((flat, x(*_source_index(x, axes, keepdims, ax, red))), axis=red)

        temp = cpp_compute(shape, f, f"{x.op.name}_red_temp", "comm_reduce_idx")
        return cpp_compute(shape, lambda ax: temp[0](*ax), f"{x.op.name}_red", "comm_reduce_idx")

    op.__name__ = reducer.name
    op.__doc__ = (f"The index of the {'largest' if reducer is _ARGMAX else 'smallest'} element over ``axis`` "
                  f"(the flat index when None), first one on ties.")
    return op


argmax = _arg_reduce(_ARGMAX)
argmin = _arg_reduce(_ARGMIN)


def _count(x: Tensor, axis: int | Sequence[int] | None) -> Expr:
    """The number of reduced elements."""
    return dims_prod([x.shape[i] for i in normalize_axes(axis, x.ndim)], x.shape[0].dtype if x.shape else None)


def mean(x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """The mean over ``axis``: a sum then a division (blocks ``<x>_red``, ``T_divide``)."""
    return broadcast.divide(sum(x, axis, keepdims), _count(x, axis))


def variance(x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """The (biased) variance over ``axis``: ``mean((x - mean(x)) ** 2)``."""
    dev = broadcast.subtract(x, mean(x, axis, True))
    return mean(broadcast.multiply(dev, dev), axis, keepdims)


def std(x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """The standard deviation over ``axis``: the square root of ``variance``."""
    return math.sqrt(variance(x, axis, keepdims))


def collapse_sum(x: Tensor, shape: Sequence[tir.PrimExpr]) -> Tensor:
    """``x`` summed down to ``shape``, which broadcasts to it: over its leading extra axes and where
    ``shape`` has 1 (block ``<x>_red``, reduce axes ``k<i>``)."""
    lead = x.ndim - len(shape)
    axes = [i for i in range(x.ndim) if i < lead or (tir_is_one(shape[i - lead]) and not tir_is_one(x.shape[i]))]
    red = [T.reduce_axis((0, x.shape[i]), f"k{i}") for i in axes]

    def f(ax: list) -> Any:
        it = iter(red)
        idx = [next(it) if i in axes else ax[i - lead] for i in range(x.ndim)]
        return T.sum(x(*idx), axis=red)

    return cpp_compute(list(shape), f, f"{x.op.name}_red", "comm_reduce")


def tir_is_one(d: tir.PrimExpr) -> bool:
    """True for the constant 1."""
    return isinstance(d, tir.IntImm) and d.value == 1
