"""What TIR's operators compute, once for every folder and evaluator: on Python numbers (the
folders, the VM's sizes, the argument checker's shapes) and on numpy scalars and arrays (the
interpreter's values, TE evaluation's index grids).

Truncating division is C's and TIR's ``Div``/``Mod`` on integers (the quotient rounds towards
zero, the remainder has the sign of the dividend); Python's ``//`` and ``%`` floor instead, which
is TIR's ``FloorDiv``/``FloorMod``. ``INT_BINARY`` and ``COMPARISONS`` map node classes to their
meaning on Python numbers (wrapping to the dtype is the caller's business); ``python_division``
adds the float meanings. ``OPERATOR_SYMBOLS`` are the operators that mean the same on Python and
numpy values; ``NUMPY_BINARY`` and ``numpy_division`` give the numpy meaning of every binary node
(``T.min``/``T.max`` as the compiled selects, ``a < b ? a : b``)."""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from . import tir

__all__ = ["trunc_div", "trunc_mod", "trunc_div_array", "INT_BINARY", "COMPARISONS", "python_division",
           "OPERATOR_SYMBOLS", "NUMPY_BINARY", "numpy_division", "select_min", "select_max", "evaluate_index"]


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


# Float division node -> its meaning on Python floats (C's fmod for ``Mod``; Python's ``//`` and
# ``%`` floor on floats too).
_PYTHON_FLOAT_DIVISION: dict[type, Callable[[float, float], float]] = {
    tir.Div: operator.truediv, tir.Mod: math.fmod, tir.FloorDiv: operator.floordiv, tir.FloorMod: operator.mod,
}


def python_division(cls: type, is_float: bool) -> Callable[[Any, Any], Any]:
    """The meaning of a division node (``Div``, ``Mod``, ``FloorDiv``, ``FloorMod``) on Python numbers."""
    return _PYTHON_FLOAT_DIVISION[cls] if is_float else INT_BINARY[cls]


# Nodes whose Python operator means the same on Python numbers and on numpy values of one dtype
# (numpy scalars wrap and round as their dtype does).
OPERATOR_SYMBOLS: dict[type, str] = {
    tir.Add: "+", tir.Sub: "-", tir.Mul: "*", tir.EQ: "==", tir.NE: "!=", tir.LT: "<", tir.LE: "<=",
    tir.GT: ">", tir.GE: ">=",
}


def select_min(a: Any, b: Any) -> Any:
    """``T.min`` as compiled code computes it, ``a < b ? a : b`` (a NaN ``a`` gives ``b``), elementwise."""
    return np.where(np.less(a, b), a, b)


def select_max(a: Any, b: Any) -> Any:
    """``T.max`` as compiled code computes it, ``a > b ? a : b`` (a NaN ``a`` gives ``b``), elementwise."""
    return np.where(np.greater(a, b), a, b)


# Binary node (but the divisions) -> its numpy meaning on arrays.
NUMPY_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    tir.Add: np.add, tir.Sub: np.subtract, tir.Mul: np.multiply, tir.Min: select_min, tir.Max: select_max,
    tir.EQ: np.equal, tir.NE: np.not_equal, tir.LT: np.less, tir.LE: np.less_equal, tir.GT: np.greater,
    tir.GE: np.greater_equal, tir.And: np.logical_and, tir.Or: np.logical_or,
}


def _float_floordiv(a: Any, b: Any) -> Any:
    """``floor(a / b)`` in the operands' dtype."""
    return np.floor(a / b)


def _float_floormod(a: Any, b: Any) -> Any:
    """``a - floor(a / b) * b`` in the operands' dtype."""
    return a - np.floor(a / b) * b


# The operators (not the ufuncs) where they mean the same: on numpy scalars they are several times
# faster, which the interpreter's inner loops feel.
_NUMPY_DIVISION: dict[tuple[type, bool], Callable[[Any, Any], Any]] = {
    (tir.Div, True): operator.truediv, (tir.Mod, True): np.fmod, (tir.FloorDiv, True): _float_floordiv,
    (tir.FloorMod, True): _float_floormod,
    (tir.Div, False): trunc_div_array, (tir.Mod, False): np.fmod, (tir.FloorDiv, False): operator.floordiv,
    (tir.FloorMod, False): operator.mod,
}


def numpy_division(cls: type, is_float: bool) -> Callable[[Any, Any], Any]:
    """The meaning of a division node on numpy values (integer divisors must have no zeros)."""
    return _NUMPY_DIVISION[(cls, is_float)]


# Index arithmetic: what an index expression may hold for ``evaluate_index``.
_INDEX_OPS = (tir.Add, tir.Sub, tir.Mul, tir.FloorDiv, tir.FloorMod, tir.Min, tir.Max)


def evaluate_index(e: tir.PrimExpr, env: dict[int, np.ndarray], total: int) -> np.ndarray | None:
    """An integer index expression at ``total`` points (``env``: id of each variable -> its values),
    or None when it is not one (other nodes, an unbound variable, a zero divisor)."""
    if isinstance(e, tir.IntImm):
        return np.full(total, e.value, np.int64)
    if isinstance(e, tir.Var):
        return env.get(id(e))
    if isinstance(e, tir.Cast):
        return evaluate_index(e.value, env, total) if e.dtype.startswith(("int", "uint")) else None
    if type(e) not in _INDEX_OPS:
        return None
    a, b = evaluate_index(e.a, env, total), evaluate_index(e.b, env, total)
    if a is None or b is None:
        return None
    if isinstance(e, (tir.FloorDiv, tir.FloorMod)):
        return None if (b == 0).any() else numpy_division(type(e), False)(a, b)
    return NUMPY_BINARY[type(e)](a, b)
