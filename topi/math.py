"""Elementwise one-input computes (TVM's ``topi/math.py``): ``te.compute(x.shape, lambda *i: ...)``,
so the block is ``compute`` and the axes ``i0, i1...``; plus ``cast``, ``clip`` and ``identity``."""
from __future__ import annotations

from typing import Any, Callable

from ..ir import tir
from ..ir.dtype import parse_dtype
from ..te import expr as E
from ..te.expr import Expr, as_prim
from ..te.tensor import Tensor, compute
from ..te.tensor_arith import cpp_compute, elemwise, negative

__all__ = ["identity", "negative", "exp", "erf", "tanh", "tan", "cos", "cosh", "sin", "sinh", "acos", "acosh",
           "asin", "asinh", "atan", "atanh", "floor", "ceil", "sign", "trunc", "abs", "isnan", "isfinite",
           "isinf", "round", "log", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "logical_not", "bitwise_not",
           "cast", "clip", "square", "elemwise"]


def _int_passthrough(fn: Callable[[Expr], Any]) -> Callable[[Expr], Any]:
    """Rounding functions leave integers as they are."""
    return lambda v: v if not parse_dtype(v.dtype).is_float else fn(v)


identity = elemwise(lambda v: v, "identity")
exp = elemwise(E.exp, "exp")
erf = elemwise(E.erf, "erf")
tanh = elemwise(E.tanh, "tanh")
tan = elemwise(E.tan, "tan")
cos = elemwise(E.cos, "cos")
cosh = elemwise(E.cosh, "cosh")
sin = elemwise(E.sin, "sin")
sinh = elemwise(E.sinh, "sinh")
acos = elemwise(E.acos, "acos")
acosh = elemwise(E.acosh, "acosh")
asin = elemwise(E.asin, "asin")
asinh = elemwise(E.asinh, "asinh")
atan = elemwise(E.atan, "atan")
atanh = elemwise(E.atanh, "atanh")
floor = elemwise(_int_passthrough(E.floor), "floor")
ceil = elemwise(_int_passthrough(E.ceil), "ceil")
trunc = elemwise(_int_passthrough(E.trunc), "trunc")
round = elemwise(_int_passthrough(E.round), "round")  # noqa: A001 - TVM's name


def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 of every element (TVM's C++ ``topi.sign``: block ``T_sign``, axes ``ax0...``)."""
    return cpp_compute(x.shape, lambda ax: E.sign(x(*ax)), "T_sign", "elemwise")


abs = elemwise(E.abs, "abs")  # noqa: A001 - TVM's name
log = elemwise(E.log, "log")
log2 = elemwise(E.log2, "log2")
log10 = elemwise(E.log10, "log10")
sqrt = elemwise(E.sqrt, "sqrt")
rsqrt = elemwise(E.rsqrt, "rsqrt")
sigmoid = elemwise(E.sigmoid, "sigmoid")
logical_not = elemwise(E.logical_not, "logical_not")
bitwise_not = elemwise(lambda v: ~v, "bitwise_not")
isnan = elemwise(E.isnan, "isnan")


def _isinf(v: Expr) -> Expr:
    """TVM's ``isinf`` on floats: ``|x| == inf and not isnan(x)`` (an expression, not a call)."""
    if not parse_dtype(v.dtype).is_float:
        return E.isinf(v)
    inf = E.const(float("inf"), v.dtype)
    return E.all(E.binary(tir.EQ, E.fabs(v), inf), E.logical_not(E.isnan(v)))


def _isfinite(v: Expr) -> Expr:
    """TVM's ``isfinite`` on floats: ``not isinf(x) and not isnan(x)``."""
    if not parse_dtype(v.dtype).is_float:
        return E.isfinite(v)
    return E.all(E.logical_not(_isinf(v)), E.logical_not(E.isnan(v)))


isinf = elemwise(_isinf, "isinf")
isfinite = elemwise(_isfinite, "isfinite")
square = elemwise(lambda v: v * v, "square")


def cast(x: Tensor | Any, dtype: str) -> Any:
    """``x`` converted to ``dtype`` (a tensor gives a compute; a scalar an expression)."""
    if isinstance(x, Tensor):
        return compute(x.shape, lambda *i: x(*i).astype(dtype), tag="elemwise")
    return E.cast(x, dtype)


def clip(x: Tensor, a_min: Any, a_max: Any) -> Tensor:
    """``x`` limited to ``[a_min, a_max]`` (bounds are numbers or scalar expressions)."""

    def bound(v: Any, dtype: str) -> tir.PrimExpr:
        if isinstance(v, (bool, int, float)):
            return E.literal(v, dtype)
        return E.cast(as_prim(v), dtype).expr

    def f(*i: Any) -> Expr:
        value = x(*i)
        return E.binary(tir.Max, E.binary(tir.Min, value, bound(a_max, x.dtype)), bound(a_min, x.dtype))

    return compute(x.shape, f, tag="elemwise")
