"""Legalizations of the elementwise ops: unary math (``tir_<op>`` functions, as TVM names them to
avoid libc names), the broadcasting binary ops, ``where``, ``astype``, ``clip`` and ``ewise_fma``."""
from __future__ import annotations

from typing import Any, Callable

from ... import topi
from ...ir import relax as rx
from ...ir.block_builder import BlockBuilder
from ...ir.struct_info import has_known_shapes, sinfo_of
from .common import (Check, LegalizeFunc, arg_text, call_te_checked, call_topi, dim_text, register_legalize,
                     require_broadcast, require_equal, scalar_const, shape_text, site_text)

_UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not", "ceil", "cos", "cosh", "exp",
          "floor", "isfinite", "isinf", "isnan", "log", "logical_not", "negative", "round", "rsqrt", "sigmoid",
          "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
for _name in _UNARY:
    register_legalize(f"relax.{_name}", call_topi(getattr(topi, _name), f"tir_{_name}"))
register_legalize("relax.square", call_topi(lambda x: topi.multiply(x, x), "tir_square"))
register_legalize("relax.clip", call_topi(topi.clip, "tir_clip"))
register_legalize("relax.where", call_topi(topi.where))


@register_legalize("relax.ewise_fma")
def _ewise_fma(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``x * y + z`` of three tensors of one shape."""

    def checks(x: Any, y: Any, z: Any) -> list[Check]:
        out: list[Check] = []
        for t, arg in ((y, call.args[1]), (z, call.args[2])):
            for j, (d, want) in enumerate(zip(t.shape, x.shape)):
                out += require_equal(d, want, lambda j=j, d=d, want=want, t=t, arg=arg: (
                    f"{site_text(call)}: dim {j} of {arg_text(arg)} {shape_text(t.shape)} is {dim_text(d)} but dim "
                    f"{j} of {arg_text(call.args[0])} {shape_text(x.shape)} is {dim_text(want)}; they must be equal"))
        return out

    return call_te_checked(bb, checks, topi.ewise_fma, *call.args)


@register_legalize("relax.erf")
def _erf(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """erf, computed in float32 for float16 inputs."""

    def te_erf(x: Any) -> Any:
        if x.dtype == "float16":
            return topi.cast(topi.erf(topi.cast(x, "float32")), "float16")
        return topi.erf(x)

    return bb.call_te(te_erf, call.args[0], primfunc_name_hint="erf")


@register_legalize("relax.astype")
def _astype(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.cast`` to the ``dtype`` attribute."""
    return bb.call_te(topi.cast, call.args[0], call.attrs["dtype"])


def _binary(te_func: Callable[..., Any]) -> LegalizeFunc:
    """A broadcasting binary op; a scalar constant operand is inlined into the PrimFunc. When the
    result's shape is unknown (symbolic dims whose relation is not known, ``(n,)`` with ``(m,)``),
    the kernel computes the broadcast shape and first checks that the dims broadcast."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        arg0, arg1 = call.args[0], scalar_const(call.args[1])
        if isinstance(arg1, rx.Expr):  # only one side is inlined, the right one first (as TVM)
            arg0 = scalar_const(arg0)
        if has_known_shapes(sinfo_of(call)):
            return bb.call_te(te_func, arg0, arg1)

        def checks(a: Any, b: Any, checked_at_run_time: bool) -> list[Check]:
            if not (hasattr(a, "shape") and hasattr(b, "shape")):
                return []
            out: list[Check] = []
            for k in range(1, min(a.ndim, b.ndim) + 1):
                da, db = a.shape[-k], b.shape[-k]
                out += require_broadcast(da, db, lambda da=da, db=db, k=k: (
                    f"{site_text(call)}: dim {a.ndim - k} of {arg_text(call.args[0])} {shape_text(a.shape)} is "
                    f"{dim_text(da)} and dim {b.ndim - k} of {arg_text(call.args[1])} {shape_text(b.shape)} is "
                    f"{dim_text(db)}; they do not broadcast (they must be equal, or one of them 1)"))
            return out

        return call_te_checked(bb, checks, te_func, arg0, arg1, checked_at_run_time=True)

    legalize.handles_unknown_result = True  # type: ignore[attr-defined]
    return legalize


for _name in ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum", "mod",
              "floor_mod", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
              "bitwise_xor", "left_shift", "right_shift", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal"):
    register_legalize(f"relax.{_name}", _binary(getattr(topi, _name)))
