"""Broadcasting binary operators (``T_add``, ``T_less``...), ``where`` and ``broadcast_to``, as
TVM's C++ topi computes them: output axes ``ax0, ax1...``, size-1 input dims read at index 0."""
from __future__ import annotations

from typing import Any, Callable

from ..ir import tir
from ..ir.dtype import parse_dtype
from ..te import expr as E
from ..te.expr import Expr, as_prim, wrap
from ..te.tensor import Tensor, _shape
from ..te.tensor_arith import (add, broadcast_index, broadcast_shape, cpp_compute, divide, is_tensor, make_binary,
                                multiply, subtract)

__all__ = ["add", "subtract", "multiply", "divide", "floor_divide", "mod", "floor_mod", "power", "maximum",
           "minimum", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
           "left_shift", "right_shift", "equal", "not_equal", "less", "less_equal", "greater",
           "greater_equal", "where", "broadcast_to", "make_binary"]


def _is_float(x: Any) -> bool:
    """True for a float operand."""
    return parse_dtype(as_prim(x).dtype).is_float


def _floor_divide(a: Any, b: Any) -> Expr:
    """Division rounding down (``floor(a / b)`` on floats)."""
    a, b = E.match_types(a, b)
    if _is_float(a):
        return E.floor(wrap(a) / b)
    return E.floordiv(a, b)


def _mod(a: Any, b: Any) -> Expr:
    """The remainder of division rounding towards zero (fmod on floats)."""
    a, b = E.match_types(a, b)
    if _is_float(a):
        return E.fmod(a, b)
    return E.truncmod(a, b)


def _floor_mod(a: Any, b: Any) -> Expr:
    """The remainder of division rounding down."""
    a, b = E.match_types(a, b)
    if _is_float(a):
        return wrap(a) - E.floor(wrap(a) / b) * b
    return E.floormod(a, b)


def _logical(cls: type) -> Callable[[Any, Any], Expr]:
    """A logical combination of two bool operands."""
    def f(a: Any, b: Any) -> Expr:
        return Expr(cls(E.as_prim(a, "bool"), E.as_prim(b, "bool")))

    return f


floor_divide = make_binary("floor_divide", _floor_divide)
mod = make_binary("mod", _mod)
floor_mod = make_binary("floor_mod", _floor_mod)
power = make_binary("power", E.power)
maximum = make_binary("maximum", lambda a, b: E.binary(tir.Max, a, b))
minimum = make_binary("minimum", lambda a, b: E.binary(tir.Min, a, b))
logical_and = make_binary("logical_and", _logical(tir.And))
logical_or = make_binary("logical_or", _logical(tir.Or))
logical_xor = make_binary("logical_xor", lambda a, b: Expr(tir.NE(E.as_prim(a, "bool"), E.as_prim(b, "bool"))))
bitwise_and = make_binary("bitwise_and", lambda a, b: wrap(a) & b)
bitwise_or = make_binary("bitwise_or", lambda a, b: wrap(a) | b)
bitwise_xor = make_binary("bitwise_xor", lambda a, b: wrap(a) ^ b)
left_shift = make_binary("left_shift", lambda a, b: wrap(a) << b)
right_shift = make_binary("right_shift", lambda a, b: wrap(a) >> b)
equal = make_binary("equal", lambda a, b: wrap(a) == b)
not_equal = make_binary("not_equal", lambda a, b: wrap(a) != b)
less = make_binary("less", lambda a, b: wrap(a) < b)
less_equal = make_binary("less_equal", lambda a, b: wrap(a) <= b)
greater = make_binary("greater", lambda a, b: wrap(a) > b)
greater_equal = make_binary("greater_equal", lambda a, b: wrap(a) >= b)


def where(condition: Tensor, x: Any, y: Any) -> Tensor:
    """``x`` where ``condition`` holds, else ``y``, broadcast together (block ``T_where``)."""
    tensors = [t for t in (condition, x, y) if is_tensor(t)]
    shape: tuple = ()
    for t in tensors:
        shape = broadcast_shape(shape, t.shape)

    def read(v: Any, ax: list) -> Any:
        return v(*broadcast_index(v, shape, ax)) if is_tensor(v) else v

    def f(ax: list) -> Any:
        c = as_prim(read(condition, ax))
        if c.dtype == "bool":  # TVM's form: the condition cast to int64 and compared with 0
            c = tir.LT(tir.IntImm("int64", 0), tir.Cast("int64", c))
        else:
            c = tir.NE(c, E.literal(0, c.dtype))
        return E.select(c, read(x, ax), read(y, ax))

    return cpp_compute(shape, f, "T_where", "broadcast")


def broadcast_to(x: Tensor, shape: Any, checked_at_run_time: bool = False) -> Tensor:
    """``x`` broadcast to ``shape`` (block ``T_broadcast_to``); with ``checked_at_run_time`` a
    symbolic dim of ``x`` may be the target's or 1, as the caller checks at run time."""
    out = _shape(shape)
    broadcast_shape(x.shape, out, checked_at_run_time)  # checks compatibility
    return cpp_compute(out, lambda ax: x(*broadcast_index(x, out, ax)), "T_broadcast_to", "broadcast")


def _in_float(fn: Callable[..., Any]) -> Callable[[Any, Any], Expr]:
    """``fn`` on float operands; integer operands go through float64 and back (TVM keeps their dtype)."""

    def f(a: Any, b: Any) -> Expr:
        dtype = as_prim(a).dtype
        if parse_dtype(dtype).is_float:
            return wrap(fn(a, b))
        return E.cast(fn(E.cast(a, "float64"), E.cast(b, "float64")), dtype)

    return f


# issue 16: TVM's topi.atan2 and its log_add_exp, log(exp(a) + exp(b)) as TVM computes it
atan2 = make_binary("atan2", _in_float(E.atan2))
log_add_exp = make_binary("log_add_exp", _in_float(lambda a, b: E.log(E.exp(a) + E.exp(b))))
__all__ += ["atan2", "log_add_exp"]
