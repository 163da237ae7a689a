"""The arithmetic of ``te.Tensor``: ``A + B``, ``A - 1``, ``-A``... are the broadcasting computes
``T_add``, ``T_subtract``... (TVM overloads te.Tensor's operators with topi's the same way), and
the building blocks topi's computes share with them: C++-style computes (axes ``ax0, ax1...``),
numpy broadcasting of shapes and indices, elementwise computes."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..ir import tir
from ..ir.arith import as_const_int, can_prove_equal, is_const_int
from .expr import Expr, ExprLike, wrap
from .tensor import Tensor, compute, make_compute

__all__ = ["cpp_compute", "is_tensor", "broadcast_shape", "broadcast_index", "broadcast_shape_index", "make_binary", "elemwise", "add",
           "subtract", "multiply", "divide", "negative"]


def cpp_compute(shape: Sequence[ExprLike], fcompute: Callable[[list], Any], name: str, tag: str = "",
                attrs: dict[str, Any] | None = None) -> Any:
    """A compute whose function takes the list of axes, named ``ax0, ax1...`` as TVM's C++ topi names them."""
    return make_compute(shape, lambda *ax: fcompute(list(ax)), [f"ax{i}" for i in range(len(shape))],
                        name, tag, attrs)


def is_tensor(x: Any) -> bool:
    """True for a TE tensor (not a scalar operand)."""
    return isinstance(x, Tensor)


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


def broadcast_index(t: Tensor, out_shape: Sequence[tir.PrimExpr], axes: Sequence[Any]) -> list[Any]:
    """The indices of ``t`` at output point ``axes`` (see ``broadcast_shape_index``)."""
    return broadcast_shape_index(t.shape, out_shape, axes)


def broadcast_shape_index(shape: Sequence[tir.PrimExpr], out_shape: Sequence[tir.PrimExpr],
                          axes: Sequence[Any]) -> list[Any]:
    """The indices into a tensor of ``shape`` at output point ``axes``: aligned to the right, 0 on
    broadcast dims. A dim that may or may not broadcast (its relation to the output's is checked at
    run time) is read at ``min(axis, dim - 1)``: the axis when the sizes are equal, 0 when the dim
    is 1."""
    offset = len(out_shape) - len(shape)
    idx: list[Any] = []
    for j, d in enumerate(shape):
        o = out_shape[j + offset]
        if is_const_int(d, 1) and not is_const_int(o, 1):
            idx.append(tir.IntImm(d.dtype, 0))
        elif not (is_const_int(d, 1) or d is o or can_prove_equal(d, o)):
            ax = getattr(axes[j + offset], "expr", axes[j + offset])
            idx.append(tir.Min(ax, tir.Sub(d, tir.IntImm(d.dtype, 1))))
        else:
            idx.append(axes[j + offset])
    return idx


def make_binary(name: str, fcombine: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A broadcasting binary op over tensors and scalars, computed as ``T_<name>``."""

    def op(lhs: Any, rhs: Any, checked_at_run_time: bool = False) -> Any:
        if not is_tensor(lhs) and not is_tensor(rhs):
            return fcombine(wrap(lhs), wrap(rhs))  # two scalars: an expression, as in TVM
        if not is_tensor(rhs):
            t = lhs
            return cpp_compute(t.shape, lambda ax: fcombine(t(*ax), rhs), f"T_{name}", "elemwise")
        if not is_tensor(lhs):
            t = rhs
            return cpp_compute(t.shape, lambda ax: fcombine(lhs, t(*ax)), f"T_{name}", "elemwise")
        shape = broadcast_shape(lhs.shape, rhs.shape, checked_at_run_time)
        return cpp_compute(shape, lambda ax: fcombine(lhs(*broadcast_index(lhs, shape, ax)),
                                                      rhs(*broadcast_index(rhs, shape, ax))),
                           f"T_{name}", "broadcast")

    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}`` with numpy broadcasting (block ``T_{name}``); with "
                  f"``checked_at_run_time`` symbolic dims of unknown relation broadcast as the caller "
                  f"checks at run time.")
    return op


def _divide(a: Any, b: Any) -> Expr:
    """True division on floats, division rounding towards zero on integers (TVM's ``div``)."""
    return wrap(a) / b



add = make_binary("add", lambda a, b: wrap(a) + b)
subtract = make_binary("subtract", lambda a, b: wrap(a) - b)
multiply = make_binary("multiply", lambda a, b: wrap(a) * b)
divide = make_binary("divide", _divide)


def elemwise(fn: Callable[[Expr], Any], name: str) -> Callable[[Tensor], Tensor]:
    """The compute applying ``fn`` to every element (topi's unary ops are these)."""

    def op(x: Tensor) -> Tensor:
        return compute(x.shape, lambda *i: fn(x(*i)), tag="elemwise")

    op.__name__ = name
    op.__doc__ = f"``{name}`` of every element (block ``compute``)."
    return op


negative = elemwise(lambda v: -v, "negative")


# Bound here rather than defined on the class: these computes build on tensor.py's ``compute``.
Tensor.__add__ = lambda self, o: add(self, o)  # type: ignore[method-assign]
Tensor.__radd__ = lambda self, o: add(o, self)  # type: ignore[method-assign]
Tensor.__sub__ = lambda self, o: subtract(self, o)  # type: ignore[method-assign]
Tensor.__rsub__ = lambda self, o: subtract(o, self)  # type: ignore[method-assign]
Tensor.__mul__ = lambda self, o: multiply(self, o)  # type: ignore[method-assign]
Tensor.__rmul__ = lambda self, o: multiply(o, self)  # type: ignore[method-assign]
Tensor.__truediv__ = lambda self, o: divide(self, o)  # type: ignore[method-assign]
Tensor.__rtruediv__ = lambda self, o: divide(o, self)  # type: ignore[method-assign]
Tensor.__neg__ = lambda self: negative(self)  # type: ignore[method-assign]
