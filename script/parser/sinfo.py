"""Struct-info helpers of the Relax parser: the static compatibility check of annotations
(TVM's "fail L0"), call-result derivation for calls of module functions, and short texts
of struct info for error messages."""
from __future__ import annotations

from typing import Any

from ...ir import relax as rx
from ...ir import tir
from ...ir.arith import format_expr

__all__ = ["incompatible", "derive_call_ret", "format_sinfo", "collect_vars", "erase_to"]


def _dims_conflict(a: tuple | None, b: tuple | None) -> bool:
    """True when two dim lists differ in length or in a constant."""
    if a is None or b is None:
        return False
    if len(a) != len(b):
        return True
    for x, y in zip(a, b):
        if isinstance(x, tir.IntImm) and isinstance(y, tir.IntImm) and x.value != y.value:
            return True
    return False


def incompatible(anno: rx.StructInfo, value: rx.StructInfo) -> bool:
    """True when no value can satisfy both (the annotation is statically wrong); symbolic
    differences that need a run-time check are allowed, as in TVM."""
    if isinstance(anno, rx.ObjectStructInfo) or isinstance(value, rx.ObjectStructInfo):
        return False
    if type(anno) is not type(value):
        return True
    if isinstance(anno, rx.TensorStructInfo):
        if anno.dtype != "void" and value.dtype != "void" and anno.dtype != value.dtype:
            return True
        if anno.ndim >= 0 and value.ndim >= 0 and anno.ndim != value.ndim:
            return True
        return _dims_conflict(anno.shape, value.shape)
    if isinstance(anno, rx.ShapeStructInfo):
        if anno.ndim >= 0 and value.ndim >= 0 and anno.ndim != value.ndim:
            return True
        return _dims_conflict(anno.values, value.values)
    if isinstance(anno, rx.PrimStructInfo):
        return anno.dtype != value.dtype
    if isinstance(anno, rx.TupleStructInfo):
        return len(anno.fields) != len(value.fields) or any(
            incompatible(a, b) for a, b in zip(anno.fields, value.fields))
    if isinstance(anno, rx.FuncStructInfo):
        if anno.params is not None and value.params is not None and len(anno.params) != len(value.params):
            return True
        return incompatible(anno.ret, value.ret)
    return False


def collect_vars(sinfo: rx.StructInfo | None, out: list[tir.Var]) -> list[tir.Var]:
    """The symbolic variables of a struct info, in order of appearance."""
    if isinstance(sinfo, rx.TensorStructInfo):
        for d in sinfo.shape or ():
            _expr_vars(d, out)
    elif isinstance(sinfo, rx.ShapeStructInfo):
        for d in sinfo.values or ():
            _expr_vars(d, out)
    elif isinstance(sinfo, rx.PrimStructInfo) and sinfo.value is not None:
        _expr_vars(sinfo.value, out)
    elif isinstance(sinfo, rx.TupleStructInfo):
        for f in sinfo.fields:
            collect_vars(f, out)
    elif isinstance(sinfo, rx.FuncStructInfo):
        for p in sinfo.params or ():
            collect_vars(p, out)
        collect_vars(sinfo.ret, out)
    return out


def _expr_vars(e: Any, out: list[tir.Var]) -> None:
    """Append the variables of an index expression."""
    if isinstance(e, tir.Var):
        if not any(v is e for v in out):
            out.append(e)
    elif isinstance(e, tir.BinaryOp):
        _expr_vars(e.a, out)
        _expr_vars(e.b, out)
    elif isinstance(e, tir.Cast):
        _expr_vars(e.value, out)


def _subst(e: Any, m: dict[int, tir.PrimExpr]) -> Any:
    """``e`` with variables replaced; None when one has no replacement."""
    if isinstance(e, tir.Var):
        return m.get(id(e))
    if isinstance(e, tir.BinaryOp):
        a, b = _subst(e.a, m), _subst(e.b, m)
        if a is None or b is None:
            return None
        return e if a is e.a and b is e.b else type(e)(a, b)
    if isinstance(e, tir.Cast):
        v = _subst(e.value, m)
        return None if v is None else tir.Cast(e.dtype, v)
    return e


def _apply(sinfo: rx.StructInfo, m: dict[int, tir.PrimExpr]) -> rx.StructInfo:
    """``sinfo`` with its symbolic variables replaced (dims that stay unknown are erased)."""
    if isinstance(sinfo, rx.TensorStructInfo) and sinfo.shape is not None:
        dims = [_subst(d, m) for d in sinfo.shape]
        if any(d is None for d in dims):
            return rx.TensorStructInfo(None, sinfo.dtype, sinfo.ndim, sinfo.vdevice)
        return rx.TensorStructInfo(tuple(dims), sinfo.dtype, vdevice=sinfo.vdevice)
    if isinstance(sinfo, rx.ShapeStructInfo) and sinfo.values is not None:
        dims = [_subst(d, m) for d in sinfo.values]
        if any(d is None for d in dims):
            return rx.ShapeStructInfo(None, sinfo.ndim)
        return rx.ShapeStructInfo(tuple(dims), len(dims))
    if isinstance(sinfo, rx.PrimStructInfo) and sinfo.value is not None:
        v = _subst(sinfo.value, m)
        return rx.PrimStructInfo(sinfo.dtype, v)
    if isinstance(sinfo, rx.TupleStructInfo):
        return rx.TupleStructInfo(tuple(_apply(f, m) for f in sinfo.fields))
    return sinfo


def _bind(param: rx.StructInfo, arg: rx.StructInfo, m: dict[int, tir.PrimExpr]) -> None:
    """Map the symbolic dims of a parameter's struct info to the argument's."""
    if isinstance(param, rx.TensorStructInfo) and isinstance(arg, rx.TensorStructInfo):
        if param.shape is not None and arg.shape is not None and len(param.shape) == len(arg.shape):
            for p, a in zip(param.shape, arg.shape):
                if isinstance(p, tir.Var) and id(p) not in m:
                    m[id(p)] = a
    elif isinstance(param, rx.ShapeStructInfo) and isinstance(arg, rx.ShapeStructInfo):
        if param.values is not None and arg.values is not None and len(param.values) == len(arg.values):
            for p, a in zip(param.values, arg.values):
                if isinstance(p, tir.Var) and id(p) not in m:
                    m[id(p)] = a
    elif isinstance(param, rx.PrimStructInfo) and isinstance(arg, rx.PrimStructInfo):
        if isinstance(param.value, tir.Var) and arg.value is not None:
            m.setdefault(id(param.value), arg.value)
    elif isinstance(param, rx.TupleStructInfo) and isinstance(arg, rx.TupleStructInfo):
        for p, a in zip(param.fields, arg.fields):
            _bind(p, a, m)


def derive_call_ret(finfo: rx.FuncStructInfo, args: list[rx.StructInfo]) -> rx.StructInfo:
    """The struct info of calling a function of type ``finfo`` with arguments of ``args``."""
    if finfo.params is None:
        return finfo.ret
    m: dict[int, tir.PrimExpr] = {}
    for p, a in zip(finfo.params, args):
        _bind(p, a, m)
    return _apply(finfo.ret, m)


def erase_to(sinfo: rx.StructInfo, defined: list[tir.Var]) -> rx.StructInfo:
    """``sinfo`` with the dims that use variables other than ``defined`` made unknown (a function's
    result may only mention the symbolic variables of its parameters)."""
    return _apply(sinfo, {id(v): v for v in defined})


def format_sinfo(sinfo: rx.StructInfo | None) -> str:
    """A struct info as script text, for error messages (``R.Tensor((n, 4), dtype="float32")``)."""
    if sinfo is None or isinstance(sinfo, rx.ObjectStructInfo):
        return "R.Object"
    if isinstance(sinfo, rx.TensorStructInfo):
        parts = []
        if sinfo.shape is not None:
            dims = [format_expr(d) for d in sinfo.shape]
            parts.append(f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})")
        if sinfo.dtype != "void":
            parts.append(f'dtype="{sinfo.dtype}"')
        if sinfo.shape is None and sinfo.ndim >= 0:
            parts.append(f"ndim={sinfo.ndim}")
        return f"R.Tensor({', '.join(parts)})" if parts else "R.Tensor"
    if isinstance(sinfo, rx.ShapeStructInfo):
        if sinfo.values is not None:
            return f"R.Shape([{', '.join(format_expr(d) for d in sinfo.values)}])"
        return f"R.Shape(ndim={sinfo.ndim})"
    if isinstance(sinfo, rx.PrimStructInfo):
        return f'R.Prim("{sinfo.dtype}")'
    if isinstance(sinfo, rx.TupleStructInfo):
        return f"R.Tuple({', '.join(format_sinfo(f) for f in sinfo.fields)})"
    if isinstance(sinfo, rx.FuncStructInfo):
        return "R.Callable"
    return type(sinfo).__name__
