"""Legalizations of the elementwise ops: unary math (``tir_<op>`` functions, as TVM names them to
avoid libc names), the broadcasting binary ops, ``where``, ``astype``, ``clip`` and ``ewise_fma``."""
from __future__ import annotations

from typing import Any, Callable

from ... import topi
from ...ir import relax as rx
from ...ir.block_builder import BlockBuilder
from .common import LegalizeFunc, call_topi, register_legalize, scalar_const

_UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not", "ceil", "cos", "cosh", "exp",
          "floor", "isfinite", "isinf", "isnan", "log", "logical_not", "negative", "round", "rsqrt", "sigmoid",
          "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
for _name in _UNARY:
    register_legalize(f"relax.{_name}", call_topi(getattr(topi, _name), f"tir_{_name}"))
register_legalize("relax.square", call_topi(lambda x: topi.multiply(x, x), "tir_square"))
register_legalize("relax.clip", call_topi(topi.clip, "tir_clip"))
register_legalize("relax.where", call_topi(topi.where))
register_legalize("relax.ewise_fma", call_topi(topi.ewise_fma))


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
    """A broadcasting binary op; a scalar constant operand is inlined into the PrimFunc."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        arg0, arg1 = call.args[0], scalar_const(call.args[1])
        if isinstance(arg1, rx.Expr):  # only one side is inlined, the right one first (as TVM)
            arg0 = scalar_const(arg0)
        return bb.call_te(te_func, arg0, arg1)

    return legalize


for _name in ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum", "mod",
              "floor_mod", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
              "bitwise_xor", "left_shift", "right_shift", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal"):
    register_legalize(f"relax.{_name}", _binary(getattr(topi, _name)))
