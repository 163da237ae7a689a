"""Struct-info helpers shared by the parser, the op inference rules and the printer."""
from __future__ import annotations

from . import relax as rx

from .structural import structural_equal

__all__ = ["sinfo_of", "infer_leaf_sinfo", "with_sinfo", "unify_sinfo", "is_base_of"]


def sinfo_of(expr: rx.Expr) -> rx.StructInfo:
    """The struct info of an expression (ObjectStructInfo when nothing is known)."""
    sinfo = getattr(expr, "struct_info", None)
    if sinfo is not None:
        return sinfo
    return infer_leaf_sinfo(expr)


def infer_leaf_sinfo(expr: rx.Expr) -> rx.StructInfo:
    """Struct info of an expression that is not an op call, derived from its parts."""
    if isinstance(expr, rx.Tuple):
        return rx.TupleStructInfo(tuple(sinfo_of(f) for f in expr.fields))
    if isinstance(expr, rx.TupleGetItem):
        tup = sinfo_of(expr.tuple_value)
        if isinstance(tup, rx.TupleStructInfo) and 0 <= expr.index < len(tup.fields):
            return tup.fields[expr.index]
        return rx.ObjectStructInfo()
    if isinstance(expr, rx.ShapeExpr):
        return rx.ShapeStructInfo(tuple(expr.values), len(expr.values))
    if isinstance(expr, rx.PrimValue):
        return rx.PrimStructInfo(expr.value.dtype, expr.value)
    if isinstance(expr, rx.SeqExpr):
        return sinfo_of(expr.body)
    if isinstance(expr, rx.If):
        return unify_sinfo(sinfo_of(expr.true_branch), sinfo_of(expr.false_branch))
    if isinstance(expr, rx.ExternFunc):
        return rx.FuncStructInfo(None, rx.ObjectStructInfo(), False)
    return rx.ObjectStructInfo()


def with_sinfo(expr: rx.Expr) -> rx.Expr:
    """``expr`` with its struct_info field filled (leaf inference) when it is missing."""
    if getattr(expr, "struct_info", None) is not None:
        return expr
    from .node import replace

    return replace(expr, struct_info=infer_leaf_sinfo(expr))


def unify_sinfo(a: rx.StructInfo, b: rx.StructInfo) -> rx.StructInfo:
    """The most specific struct info that covers both ``a`` and ``b`` (for if/else results)."""
    if structural_equal(a, b):
        return a
    if isinstance(a, rx.TensorStructInfo) and isinstance(b, rx.TensorStructInfo):
        dtype = a.dtype if a.dtype == b.dtype else "void"
        if a.ndim == b.ndim and a.shape is not None and b.shape is not None:
            shape = tuple(x if structural_equal(x, y) else None for x, y in zip(a.shape, b.shape))
            if all(s is not None for s in shape):
                return rx.TensorStructInfo(shape, dtype)  # type: ignore[arg-type]
        return rx.TensorStructInfo(None, dtype, a.ndim if a.ndim == b.ndim else -1)
    if isinstance(a, rx.TupleStructInfo) and isinstance(b, rx.TupleStructInfo) and len(a.fields) == len(b.fields):
        return rx.TupleStructInfo(tuple(unify_sinfo(x, y) for x, y in zip(a.fields, b.fields)))
    if isinstance(a, rx.ShapeStructInfo) and isinstance(b, rx.ShapeStructInfo):
        return rx.ShapeStructInfo(None, a.ndim if a.ndim == b.ndim else -1)
    if isinstance(a, rx.PrimStructInfo) and isinstance(b, rx.PrimStructInfo) and a.dtype == b.dtype:
        return rx.PrimStructInfo(a.dtype)
    return rx.ObjectStructInfo()


def is_base_of(base: rx.StructInfo, derived: rx.StructInfo) -> bool:
    """True when every value described by ``derived`` is also described by ``base``."""
    if isinstance(base, rx.ObjectStructInfo):
        return True
    if type(base) is not type(derived):
        return False
    if isinstance(base, rx.TensorStructInfo):
        assert isinstance(derived, rx.TensorStructInfo)
        if base.dtype != "void" and base.dtype != derived.dtype:
            return False
        if base.ndim != -1 and base.ndim != derived.ndim:
            return False
        if base.shape is not None:
            if derived.shape is None:
                return False
            return all(structural_equal(x, y) for x, y in zip(base.shape, derived.shape))
        return True
    if isinstance(base, rx.TupleStructInfo):
        assert isinstance(derived, rx.TupleStructInfo)
        return len(base.fields) == len(derived.fields) and all(
            is_base_of(x, y) for x, y in zip(base.fields, derived.fields))
    if isinstance(base, rx.ShapeStructInfo):
        assert isinstance(derived, rx.ShapeStructInfo)
        if base.ndim != -1 and base.ndim != derived.ndim:
            return False
        if base.values is not None:
            return derived.values is not None and all(
                structural_equal(x, y) for x, y in zip(base.values, derived.values))
        return True
    if isinstance(base, rx.PrimStructInfo):
        assert isinstance(derived, rx.PrimStructInfo)
        return base.dtype == derived.dtype and (base.value is None or (
            derived.value is not None and structural_equal(base.value, derived.value)))
    return structural_equal(base, derived)


