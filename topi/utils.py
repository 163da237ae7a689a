"""Helpers shared by the topi computes: constant dims, products of dims and axis normalisation
(C++-style computes and broadcasting are in ``te/tensor_arith.py``, as te.Tensor's operators use them)."""
from __future__ import annotations

from typing import Sequence

from ..ir import tir
from ..ir.arith import as_const_int
from ..te import tensor as _t
from ..te.expr import Expr, ExprLike, wrap

__all__ = ["const_int", "prod", "normalize_axes"]


def const_int(e: ExprLike) -> int | None:
    """The integer value of a constant dimension, else None."""
    if isinstance(e, Expr):
        e = e.expr
    return as_const_int(e)


def prod(dims: Sequence[ExprLike], dtype: str | None = None) -> Expr:
    """The product of dimensions (folded when constant)."""
    out: Expr = wrap(tir.IntImm(dtype or _t.current_index_dtype(), 1))
    for d in dims:
        out = out * d
    return out


def normalize_axes(axis: int | Sequence[int] | None, ndim: int) -> list[int]:
    """Axes in ``[0, ndim)``, sorted (all axes for None)."""
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else [int(a) for a in axis]
    out = sorted({a + ndim if a < 0 else a for a in axes})
    for a in out:
        if not 0 <= a < ndim:
            raise ValueError(f"axis {a} is out of range for {ndim} dimensions")
    return out
