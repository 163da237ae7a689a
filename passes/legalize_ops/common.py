"""Registration and shared helpers of the legalization functions.

A legalization function takes the BlockBuilder of the rewrite and a call of its op, and returns
the replacement (usually ``bb.call_te(topi_fn, ...)``, a ``R.call_tir`` of a new PrimFunc), or
the call itself to leave it. It lives in the op registry's ``OpDef.legalize`` slot: the one
table of legalizations."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir import relax as rx
from ...ir import tir
from ...ir.block_builder import BlockBuilder
from ...ir.op import get_op_def
from ...ir.struct_info import sinfo_of

__all__ = ["LegalizeFunc", "register_legalize", "call_topi", "scalar_const", "tuple_fields", "prim_values"]

LegalizeFunc = Callable[[BlockBuilder, rx.Call], rx.Expr]


def register_legalize(op_name: str, legal_func: LegalizeFunc | None = None) -> Any:
    """Set ``legal_func`` as the legalization of op ``op_name`` (usable as a decorator)."""

    def add(f: LegalizeFunc) -> LegalizeFunc:
        get_op_def(op_name).legalize = f
        return f

    return add(legal_func) if legal_func is not None else add


def call_topi(te_func: Callable[..., Any], primfunc_name: str | None = None) -> LegalizeFunc:
    """The legalization passing the call's arguments to ``te_func`` (ops without attributes)."""
    name = primfunc_name or te_func.__name__
    return lambda bb, call: bb.call_te(te_func, *call.args, primfunc_name_hint=name)


def scalar_const(expr: rx.Expr) -> Any:
    """A rank-0 constant as a TIR literal of its dtype (so it is inlined, not passed); other
    expressions unchanged."""
    if isinstance(expr, rx.Constant) and expr.data.ndim == 0:
        value = expr.data[()].item()
        dtype = sinfo_of(expr).dtype
        if dtype.startswith(("float", "bfloat")):
            return tir.FloatImm(dtype, float(value))
        return tir.IntImm(dtype, int(value))
    return expr


def python_scalar(expr: rx.Expr) -> Any:
    """A rank-0 constant's Python value; other expressions unchanged."""
    if isinstance(expr, rx.Constant) and expr.data.ndim == 0:
        return np.asarray(expr.data)[()].item()
    return expr


def tuple_fields(bb: BlockBuilder, t: rx.Expr) -> list[rx.Expr]:
    """The fields of a tuple argument: through variables bound to tuples, else ``t[i]`` bindings."""
    n = len(sinfo_of(t).fields)  # type: ignore[attr-defined]
    seen = t
    while isinstance(seen, rx.Var):
        bound = bb.lookup_binding(seen)
        if not isinstance(bound, (rx.Tuple, rx.Var)):
            break
        seen = bound
    if isinstance(seen, rx.Tuple):
        return list(seen.fields)
    return [bb.emit(rx.TupleGetItem(t, i)) for i in range(n)]


def prim_values(expr: rx.Expr) -> list[tir.PrimExpr] | None:
    """The integers of a tuple of ``R.prim_value``s (or a shape), None when unknown."""
    sinfo = sinfo_of(expr)
    if isinstance(sinfo, rx.ShapeStructInfo):
        return list(sinfo.values) if sinfo.values is not None else None
    if isinstance(sinfo, rx.TupleStructInfo):
        out = []
        for f in sinfo.fields:
            if not isinstance(f, rx.PrimStructInfo) or f.value is None:
                return None
            out.append(f.value)
        return out
    return None
