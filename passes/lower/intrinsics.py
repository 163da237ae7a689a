"""LowerIntrinsics (TVM's ``LowerIntrin`` for the llvm target): math intrinsics that are neither an
LLVM intrinsic nor a libm function become arithmetic on ones that are.

- ``T.sigmoid(x)`` -> ``1 / (1 + T.exp(0 - x))`` (TVM's llvm.FLegalize rule, ``-x`` as ``0 - x``)
- ``T.rsqrt(x)`` -> ``1 / T.sqrt(x)``
- ``T.exp10(x)`` -> ``T.pow(10, x)``

Everything else stays: ``LLVM_INTRINSICS`` lists those the code generator maps to LLVM intrinsics,
``LIBM_FUNCTIONS`` those it calls from libm (``erf``, ``tanh``... with an ``f`` suffix for
float32), and ``T.if_then_else``, ``T.Select``, ``T.likely``, ``T.isnan``/``T.isinf``/``T.isfinite``,
``T.reinterpret``, the bitwise and shift intrinsics are single instructions."""
from __future__ import annotations

from typing import Callable

from ...ir import tir
from ...ir.module import IRModule
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprMutator
from ..infra import PassContext, PrimFuncPass, register_pass

__all__ = ["LowerIntrinsics", "lower_intrinsics", "LLVM_INTRINSICS", "LIBM_FUNCTIONS"]

# TIR intrinsic -> LLVM intrinsic (overloaded on the operand type).
LLVM_INTRINSICS: dict[str, str] = {
    "tir.exp": "llvm.exp", "tir.exp2": "llvm.exp2", "tir.log": "llvm.log", "tir.log2": "llvm.log2",
    "tir.log10": "llvm.log10", "tir.sqrt": "llvm.sqrt", "tir.sin": "llvm.sin", "tir.cos": "llvm.cos",
    "tir.fabs": "llvm.fabs", "tir.floor": "llvm.floor", "tir.ceil": "llvm.ceil", "tir.trunc": "llvm.trunc",
    "tir.round": "llvm.nearbyint", "tir.nearbyint": "llvm.nearbyint", "tir.pow": "llvm.pow",
    "tir.copysign": "llvm.copysign", "tir.popcount": "llvm.ctpop", "tir.clz": "llvm.ctlz",
}

# TIR intrinsic -> libm function (double version; float32 calls the ``f``-suffixed one).
LIBM_FUNCTIONS: dict[str, str] = {
    "tir.tan": "tan", "tir.tanh": "tanh", "tir.sinh": "sinh", "tir.cosh": "cosh", "tir.asin": "asin",
    "tir.acos": "acos", "tir.atan": "atan", "tir.asinh": "asinh", "tir.acosh": "acosh", "tir.atanh": "atanh",
    "tir.erf": "erf", "tir.log1p": "log1p", "tir.expm1": "expm1", "tir.atan2": "atan2", "tir.hypot": "hypot",
    "tir.fmod": "fmod", "tir.nextafter": "nextafter", "tir.ldexp": "ldexp",
}


def _float(dtype: str, value: float) -> tir.FloatImm:
    """A literal of the operand's dtype."""
    return tir.FloatImm(dtype, value)


def _sigmoid(call: tir.Call) -> tir.PrimExpr:
    """``1 / (1 + exp(-x))``."""
    (x,) = call.args
    one = _float(x.dtype, 1.0)
    neg = tir.Sub(_float(x.dtype, 0.0), x)
    return tir.Div(one, tir.Add(one, tir.Call(x.dtype, "tir.exp", (neg,))))


def _rsqrt(call: tir.Call) -> tir.PrimExpr:
    """``1 / sqrt(x)``."""
    (x,) = call.args
    return tir.Div(_float(x.dtype, 1.0), tir.Call(x.dtype, "tir.sqrt", (x,)))


def _exp10(call: tir.Call) -> tir.PrimExpr:
    """``pow(10, x)`` (more accurate than ``exp(x * ln 10)``)."""
    (x,) = call.args
    return tir.Call(x.dtype, "tir.pow", (_float(x.dtype, 10.0), x))


_RULES: dict[str, Callable[[tir.Call], tir.PrimExpr]] = {
    "tir.sigmoid": _sigmoid, "tir.rsqrt": _rsqrt, "tir.exp10": _exp10,
}


class _IntrinsicLowerer(StmtExprMutator):
    """Applies the rules to every call (arguments first)."""

    def visit_call_(self, call: tir.Call) -> tir.PrimExpr:
        """A rule's expansion, or the call with lowered arguments."""
        new = super().visit_call_(call)
        rule = _RULES.get(new.op) if isinstance(new.op, str) else None
        return new if rule is None else rule(new)


def lower_intrinsics(func: tir.PrimFunc) -> tir.PrimFunc:
    """``func`` with sigmoid, rsqrt and exp10 expanded."""
    body = _IntrinsicLowerer().visit_stmt(func.body)
    return func if body is func.body else replace(func, body=body)


class LowerIntrinsics(PrimFuncPass):
    """Expand the math intrinsics that are neither LLVM intrinsics nor libm functions."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        new = lower_intrinsics(func)
        if new is not func:
            self.stats["lowered_functions"] += 1
        return new


register_pass("LowerIntrinsics", LowerIntrinsics)
