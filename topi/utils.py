"""Helpers shared by the topi computes: C++-style computes (axes ``ax0, ax1...``), shapes,
broadcasting and axis normalisation."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..ir import tir
from ..ir.arith import as_const_int, can_prove_equal, is_const_int
from ..te import tensor as _t
from ..te.expr import Expr, ExprLike, wrap

__all__ = ["cpp_compute", "const_int", "prod", "broadcast_shape", "broadcast_index", "normalize_axes",
           "is_tensor"]


def cpp_compute(shape: Sequence[ExprLike], fcompute: Callable[[list], Any], name: str, tag: str = "",
                attrs: dict[str, Any] | None = None) -> Any:
    """A compute whose function takes the list of axes, named ``ax0, ax1...`` as TVM's C++ topi names them."""
    return _t.make_compute(shape, lambda *ax: fcompute(list(ax)), [f"ax{i}" for i in range(len(shape))],
                           name, tag, attrs)


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


def is_tensor(x: Any) -> bool:
    """True for a TE tensor (not a scalar operand)."""
    return isinstance(x, _t.Tensor)


def broadcast_shape(a: Sequence[tir.PrimExpr], b: Sequence[tir.PrimExpr],
                    checked_at_run_time: bool = False) -> tuple[tir.PrimExpr, ...]:
    """The numpy broadcast of two shapes (a size-1 dim takes the other's; equal dims keep the first's).
    Two dims whose relation is unknown are an error, unless the caller checks at run time that they
    broadcast (equal, or one is 1): their result is then ``max(a, b) * min(a, b, 1)``, which is that
    broadcast whenever they do (0 with 1 gives 0)."""
    out: list[tir.PrimExpr] = []
    for k in range(1, max(len(a), len(b)) + 1):
        da = a[-k] if k <= len(a) else None
        db = b[-k] if k <= len(b) else None
        if db is None:
            out.append(da)  # type: ignore[arg-type]
        elif da is None:
            out.append(db)
        elif can_prove_equal(da, db) or is_const_int(db, 1):
            out.append(da)
        elif is_const_int(da, 1):
            out.append(db)
        elif checked_at_run_time and (as_const_int(da) is None or as_const_int(db) is None):
            one = tir.IntImm(da.dtype, 1)
            out.append(tir.Mul(tir.Max(da, db), tir.Min(tir.Min(da, db), one)))
        else:
            raise ValueError(f"cannot broadcast dimensions {da} and {db}")
    return tuple(reversed(out))


def broadcast_index(t: _t.Tensor, out_shape: Sequence[tir.PrimExpr], axes: Sequence[Any]) -> list[Any]:
    """The indices of ``t`` at output point ``axes``: aligned to the right, 0 on broadcast dims. A
    dim that may or may not broadcast (its relation to the output's is checked at run time) is read
    at ``min(axis, dim - 1)``: the axis when the sizes are equal, 0 when the dim is 1."""
    offset = len(out_shape) - len(t.shape)
    idx: list[Any] = []
    for j, d in enumerate(t.shape):
        o = out_shape[j + offset]
        if is_const_int(d, 1) and not is_const_int(o, 1):
            idx.append(tir.IntImm(d.dtype, 0))
        elif not (is_const_int(d, 1) or d is o or can_prove_equal(d, o)):
            ax = getattr(axes[j + offset], "expr", axes[j + offset])
            idx.append(tir.Min(ax, tir.Sub(d, tir.IntImm(d.dtype, 1))))
        else:
            idx.append(axes[j + offset])
    return idx


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
