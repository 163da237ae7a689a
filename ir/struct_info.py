"""Struct-info helpers shared by the parser, BlockBuilder, the op inference rules and the printer:
leaf inference, unification, compatibility of annotations (TVM's "fail L0"), and the result of
calling a function whose signature has symbolic variables."""
from __future__ import annotations

from typing import Any, Sequence

from . import relax as rx
from . import tir
from .node import replace

from .structural import structural_equal

__all__ = ["has_known_shapes", "static_shape", "sinfo_of", "infer_leaf_sinfo", "with_sinfo", "unify_sinfo", "is_base_of", "incompatible",
           "collect_vars", "derive_call_ret", "erase_to", "sinfo_vars", "derive_function_ret"]


def sinfo_of(expr: rx.Expr) -> rx.StructInfo:
    """The struct info of an expression (ObjectStructInfo when nothing is known)."""
    sinfo = getattr(expr, "struct_info", None)
    if sinfo is not None:
        return sinfo
    return infer_leaf_sinfo(expr)


def has_known_shapes(sinfo: rx.StructInfo | None) -> bool:
    """True when every shape in ``sinfo`` is known (TVM's KnowAllShapeValues)."""
    if isinstance(sinfo, rx.TensorStructInfo):
        return sinfo.shape is not None
    if isinstance(sinfo, rx.DTensorStructInfo):
        return sinfo.tensor_sinfo.shape is not None
    if isinstance(sinfo, rx.ShapeStructInfo):
        return sinfo.values is not None
    if isinstance(sinfo, rx.TupleStructInfo):
        return all(has_known_shapes(f) for f in sinfo.fields)
    return True


def static_shape(sinfo: rx.StructInfo | None) -> tuple[int, ...] | None:
    """The integer shape of a tensor struct info, None when it is not a tensor of known shape."""
    if not isinstance(sinfo, rx.TensorStructInfo) or sinfo.shape is None:
        return None
    if not all(isinstance(d, tir.IntImm) for d in sinfo.shape):
        return None
    return tuple(int(d.value) for d in sinfo.shape)


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
    if isinstance(a, rx.DTensorStructInfo) and isinstance(b, rx.DTensorStructInfo) and _same_layout(a, b):
        tensor = unify_sinfo(a.tensor_sinfo, b.tensor_sinfo)
        assert isinstance(tensor, rx.TensorStructInfo)
        try:
            return rx.DTensorStructInfo(tensor, a.device_mesh, a.placement)
        except ValueError:  # the unified tensor lost the rank a sharding axis needs
            return rx.ObjectStructInfo()
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
    if isinstance(base, rx.DTensorStructInfo):
        assert isinstance(derived, rx.DTensorStructInfo)
        return _same_layout(base, derived) and is_base_of(base.tensor_sinfo, derived.tensor_sinfo)
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


def _same_layout(a: rx.DTensorStructInfo, b: rx.DTensorStructInfo) -> bool:
    """True when two distributed tensors share their device mesh and placement."""
    return structural_equal(a.device_mesh, b.device_mesh) and structural_equal(a.placement, b.placement)


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
    if isinstance(anno, rx.DTensorStructInfo):
        return not _same_layout(anno, value) or incompatible(anno.tensor_sinfo, value.tensor_sinfo)
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
    elif isinstance(sinfo, rx.DTensorStructInfo):
        collect_vars(sinfo.tensor_sinfo, out)
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
    if isinstance(sinfo, rx.DTensorStructInfo):
        tensor = _apply(sinfo.tensor_sinfo, m)
        return sinfo if tensor is sinfo.tensor_sinfo else rx.DTensorStructInfo(tensor, sinfo.device_mesh,
                                                                              sinfo.placement)
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
    elif isinstance(param, rx.DTensorStructInfo) and isinstance(arg, rx.DTensorStructInfo):
        _bind(param.tensor_sinfo, arg.tensor_sinfo, m)
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


def sinfo_vars(sinfo: rx.StructInfo | None) -> list:
    """The symbolic (TIR) variables a struct info mentions, in order."""
    return collect_vars(sinfo, [])


def derive_function_ret(params: Sequence[rx.Var], body_sinfo: rx.StructInfo) -> rx.StructInfo:
    """A function's return struct info: the body's, with dims the parameters do not define erased."""
    defined: list = []
    for p in params:
        defined.extend(sinfo_vars(p.struct_info))
    return erase_to(body_sinfo, defined)


def function_ret(params: Sequence[rx.Var], body_sinfo: rx.StructInfo,
                 declared: rx.StructInfo | None) -> rx.StructInfo:
    """The return struct info a function stores, as TVM's Function does: the body's
    (``derive_function_ret``) when nothing is declared or the declared one is less specific
    (``-> R.Tensor(ndim=2)`` for a ``(2, 3)`` body narrows), else the declared one."""
    derived = derive_function_ret(params, body_sinfo)
    if declared is None or is_base_of(declared, derived):
        return derived
    return declared
