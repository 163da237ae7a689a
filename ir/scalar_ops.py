"""What TIR's binary operators compute on constants, for the folders and evaluators that need it.

Truncating division is C's and TIR's ``Div``/``Mod`` on integers (the quotient rounds towards
zero, the remainder has the sign of the dividend); Python's ``//`` and ``%`` floor instead, which
is TIR's ``FloorDiv``/``FloorMod``. ``INT_BINARY`` and ``COMPARISONS`` map node classes to their
meaning on Python numbers (wrapping to the dtype is the caller's business)."""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from . import tir

__all__ = ["trunc_div", "trunc_mod", "trunc_div_array", "INT_BINARY", "COMPARISONS"]


def trunc_div(a: int, b: int) -> int:
    """``a / b`` rounded towards zero (``T.truncdiv``); ZeroDivisionError when ``b`` is 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def trunc_mod(a: int, b: int) -> int:
    """The remainder of ``trunc_div`` (``T.truncmod``), with the sign of ``a``."""
    return a - b * trunc_div(a, b)


def trunc_div_array(a: Any, b: Any) -> Any:
    """``trunc_div`` elementwise on numpy integers (``b`` must have no zeros)."""
    q = np.floor_divide(a, b)
    return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)


# Integer arithmetic node -> its meaning on Python ints (the division ones raise on a zero divisor).
INT_BINARY: dict[type, Callable[[int, int], int]] = {
    tir.Add: operator.add, tir.Sub: operator.sub, tir.Mul: operator.mul,
    tir.FloorDiv: operator.floordiv, tir.FloorMod: operator.mod, tir.Div: trunc_div, tir.Mod: trunc_mod,
    tir.Min: min, tir.Max: max,
}

# Comparison node -> its meaning on two numbers.
COMPARISONS: dict[type, Callable[[Any, Any], bool]] = {
    tir.EQ: operator.eq, tir.NE: operator.ne, tir.LT: operator.lt, tir.LE: operator.le,
    tir.GT: operator.gt, tir.GE: operator.ge,
}
