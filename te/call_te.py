"""From Relax to TE and back: ``BlockBuilder.call_te`` (TVM's ``bb.call_te`` / ``emit_te``
without the emit) and ``gen_call_tir_inputs``.

Relax arguments become TE placeholders named after their variables (``A``, ``B``... for
other expressions) with fresh copies of their symbolic sizes, the TE function builds the
computation, ``create_prim_func`` turns it into a private PrimFunc, and the result is a
``R.call_tir`` of it whose ``out_sinfo`` is given in the caller's symbolic sizes."""
from __future__ import annotations

import string
from typing import Any, Callable

from ..ir import relax as rx
from ..ir import tir
from ..ir.block_builder import BlockBuilder
from ..ir.module import GlobalVar
from ..ir.node import Map
from ..ir.op_api import call_tir
from ..ir.stmt_functor import substitute
from ..ir.struct_info import sinfo_of
from .create import create_prim_func
from .expr import Expr, expr_vars
from .tensor import Tensor, index_dtype, placeholder

__all__ = ["gen_call_tir_inputs", "call_te"]


class _Converter:
    """Converts call_te arguments: Relax tensors to placeholders, PrimExprs to fresh variables."""

    def __init__(self) -> None:
        self.var_map: dict[tir.Var, tir.Var] = {}  # caller's symbolic var -> the PrimFunc's copy
        self.call_args: list[rx.Expr] = []
        self.func_args: list[Tensor | tir.Var] = []
        self.extra: list[tir.PrimExpr] = []  # PrimExpr arguments: their variables are used

    def prim(self, e: tir.PrimExpr) -> tir.PrimExpr:
        """``e`` in the PrimFunc's variables (new ones are copied once)."""
        for v in expr_vars(e):
            if v not in self.var_map:
                self.var_map[v] = tir.Var(v.name, v.dtype)
        return substitute(e, self.var_map)  # type: ignore[return-value]

    def convert(self, arg: Any) -> Any:
        """One argument, recursively through lists, tuples and dicts."""
        if isinstance(arg, rx.Expr):
            return self.expr(arg)
        if isinstance(arg, Expr):
            return self.convert(arg.expr)
        if isinstance(arg, tir.PrimExpr):
            new = self.prim(arg)
            self.extra.append(new)
            return new
        if isinstance(arg, list):
            return [self.convert(x) for x in arg]
        if isinstance(arg, tuple):
            return tuple(self.convert(x) for x in arg)
        if isinstance(arg, (dict, Map)):
            return {k: self.convert(arg[k]) for k in arg}
        return arg  # Python values and attribute objects pass through

    def expr(self, arg: rx.Expr) -> Any:
        """A Relax argument: a tensor becomes a placeholder, a shape its dims, a scalar a value or
        a scalar parameter."""
        sinfo = sinfo_of(arg)
        if isinstance(sinfo, rx.TensorStructInfo):
            if sinfo.shape is None or sinfo.dtype == "void":
                raise ValueError(f"call_te needs tensors of known shape and dtype, got {arg!r}")
            n = len(self.func_args)
            if isinstance(arg, rx.Var):
                name = arg.name_hint
            else:
                name = string.ascii_uppercase[n] if n < len(string.ascii_uppercase) else f"tensor_input_{n}"
            t = placeholder(tuple(self.prim(d) for d in sinfo.shape), sinfo.dtype, name)
            self.call_args.append(arg)
            self.func_args.append(t)
            return t
        if isinstance(sinfo, rx.ShapeStructInfo):
            if not isinstance(arg, rx.ShapeExpr):
                raise ValueError("call_te takes shapes as R.shape([...]) values")
            return [self.convert(v) for v in arg.values]
        if isinstance(sinfo, rx.PrimStructInfo):
            if sinfo.value is not None:
                return self.convert(sinfo.value)
            if isinstance(arg, rx.PrimValue):
                return self.convert(arg.value)
            n = len(self.func_args)
            name = arg.name_hint if isinstance(arg, rx.Var) else (
                string.ascii_lowercase[n] if n < len(string.ascii_lowercase) else f"scalar_input_{n}")
            param = tir.Var(name, sinfo.dtype)
            self.call_args.append(arg)
            self.func_args.append(param)
            return param
        if isinstance(arg, (rx.StringImm, rx.DataTypeImm)):
            return arg.value
        raise TypeError(f"call_te cannot pass a value of struct info {type(sinfo).__name__} to TE")


def _unbound_vars(tensors: list[Tensor], extra: list[tir.PrimExpr]) -> list[tir.Var]:
    """Variables used by shapes or PrimExpr arguments that no shape dimension defines."""
    used: list[tir.Var] = []
    bound: set[int] = set()
    for e in [d for t in tensors for d in t.shape] + list(extra):
        used.extend(v for v in expr_vars(e) if v not in used)
    for t in tensors:
        bound.update(id(d) for d in t.shape if isinstance(d, tir.Var))
    return [v for v in used if id(v) not in bound]


def gen_call_tir_inputs(func: Callable[..., Any], *args: Any, **kwargs: Any
                        ) -> tuple[tir.PrimFunc, list[rx.Expr], list[rx.TensorStructInfo], rx.ShapeExpr | None]:
    """The PrimFunc ``func`` builds from the Relax ``args``, the call_tir arguments, the output
    struct infos and the ``tir_vars`` (None when every size comes from a shape)."""
    primfunc_attrs = kwargs.pop("primfunc_attrs", None)
    conv = _Converter()
    te_args = conv.convert(list(args))
    te_kwargs = conv.convert(dict(kwargs))
    with index_dtype("int64"):  # Relax shapes are int64: Python ints in the TE program follow
        out = func(*te_args, **te_kwargs)
    outs = [out] if isinstance(out, Tensor) else list(out) if isinstance(out, (list, tuple)) else None
    if not outs or not all(isinstance(t, Tensor) for t in outs):
        raise TypeError(f"the TE function {getattr(func, '__name__', func)!r} must return a te.Tensor "
                        f"or a list of them, got {type(out).__name__}")
    tensor_args = [a for a in conv.func_args if isinstance(a, Tensor)]
    unbound = [v for v in _unbound_vars(tensor_args + outs, conv.extra)
               if not any(v is a for a in conv.func_args)]
    prim_func = create_prim_func([*conv.func_args, *outs, *unbound], "int64")
    if primfunc_attrs:
        for k, v in dict(primfunc_attrs).items():
            prim_func = prim_func.with_attr(k, v)
    prim_func = prim_func.without_attr("global_symbol")
    inverse = {v: k for k, v in conv.var_map.items()}
    vdevice = next((sinfo_of(a).vdevice for a in conv.call_args
                    if isinstance(sinfo_of(a), rx.TensorStructInfo) and sinfo_of(a).vdevice), None)
    out_sinfo = [rx.TensorStructInfo(tuple(substitute(d, inverse) for d in t.shape), t.dtype, vdevice=vdevice)
                 for t in outs]
    tir_vars = rx.ShapeExpr(tuple(substitute(v, inverse) for v in unbound)) if unbound else None
    return prim_func, conv.call_args, out_sinfo, tir_vars


def call_te(bb: Any, func: Callable[..., Any], *args: Any, **kwargs: Any) -> rx.Call:
    """``bb.call_te(func, *args, primfunc_name_hint=...)``: add the PrimFunc ``func`` builds to the
    module of ``bb`` (named after ``func`` unless a hint is given, de-duplicated) and return the
    ``R.call_tir`` of it."""
    name = kwargs.pop("primfunc_name_hint", None) or getattr(func, "__name__", "te_func")
    prim_func, call_args, out_sinfo, tir_vars = gen_call_tir_inputs(func, *args, **kwargs)
    gvar: GlobalVar = bb.add_func(prim_func, name)
    return call_tir(gvar, call_args, out_sinfo, tir_vars)


BlockBuilder._call_te_hook = call_te  # ``bb.call_te``/``bb.emit_te`` build through this module
