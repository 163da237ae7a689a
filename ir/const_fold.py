"""The one set of constant-folding rules for TIR expressions.

Three places fold: ``te``'s operators while they build an expression (TVM's ``TryConstFold``:
``x + 0`` is ``x`` as TVM's operator construction makes it), the ``Simplify`` pass (which must keep
every value IEEE arithmetic gives) and the integer canonicaliser of ``ir/arith.py``. They read the
rules here; where they legitimately differ, a parameter says so:

- ``ieee_exact=False`` (TVM's construction): float literals combine in double precision and keep
  that value (a FloatImm holds a Python float, as in TVM), ``x + 0.0``, ``0.0 + x`` and ``x - 0.0``
  are ``x``, integer ``x * 0`` and ``0 / x`` are ``0``.
- ``ieee_exact=True`` (Simplify): float literals combine in their dtype (rounded to it; ``T.min``/
  ``T.max`` as the compiled select, a division by zero left to run time), and of the identities
  only those that give ``x`` back for every ``x`` (NaN, infinities and ``-0.0`` included) apply:
  ``x - 0.0``, ``x + -0.0``, ``-0.0 + x``, ``x * 1.0``, ``1.0 * x``, ``x / 1.0``. ``x * 0.0`` and
  ``x + 0.0`` stay (``-0.0 + 0.0`` is ``0.0``).
- ``truncmod``: whether ``T.truncmod`` of two integer literals folds (te's operators leave it
  as written; the canonicaliser computes it).

Integers wrap to their dtype (two's complement) everywhere (``wrap_int``)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import tir
from .dtype import parse_dtype, to_numpy_dtype
from .scalar_ops import COMPARISONS, INT_BINARY

__all__ = ["wrap_int", "int_imm", "float_imm", "literal_value", "fold_ints", "fold_binary", "fold_logic", "fold_not",
           "fold_choice", "fold_cast"]


def wrap_int(value: int, dtype: str) -> int:
    """``value`` wrapped to the range of integer (or bool) ``dtype``, as two's complement hardware does."""
    d = parse_dtype(dtype)
    if d.is_bool:
        return int(bool(value))
    value &= (1 << d.bits) - 1
    if d.is_int and value >= 1 << (d.bits - 1):
        value -= 1 << d.bits
    return value


def int_imm(value: int, dtype: str) -> tir.IntImm:
    """An integer literal of ``dtype``, wrapped to its range."""
    return tir.IntImm(dtype, wrap_int(value, dtype))


def float_imm(value: float, dtype: str, rounded: bool) -> tir.FloatImm:
    """A float literal; ``rounded``: its value rounded to ``dtype`` (kept as a Python float)."""
    if rounded:
        value = np.array(value, dtype=to_numpy_dtype(dtype))
    return tir.FloatImm(dtype, float(value))


def _bool(value: bool) -> tir.IntImm:
    """A bool literal."""
    return tir.IntImm("bool", int(value))


def literal_value(e: tir.PrimExpr) -> int | float | None:
    """The value of a numeric (not bool) literal, else None."""
    if isinstance(e, tir.IntImm) and e.dtype != "bool":
        return e.value
    if isinstance(e, tir.FloatImm):
        return e.value
    return None


# Float nodes Simplify folds, on numpy scalars of the dtype (so results round as the dtype does).
_EXACT_FLOAT = {
    tir.Add: np.add, tir.Sub: np.subtract, tir.Mul: np.multiply, tir.Div: np.divide,
    # The compiled selects: a NaN first operand gives the second one.
    tir.Min: lambda a, b: a if a < b else b, tir.Max: lambda a, b: a if a > b else b,
}


def _fold_literals(cls: type, va: Any, vb: Any, dtype: str, ieee_exact: bool, truncmod: bool) -> tir.PrimExpr | None:
    """``cls`` of two literal values, or None when the rules leave it."""
    if cls in COMPARISONS:
        return _bool(COMPARISONS[cls](va, vb))
    if parse_dtype(dtype).is_float:
        if ieee_exact:
            if cls not in _EXACT_FLOAT or (cls is tir.Div and vb == 0):
                return None
            dt = to_numpy_dtype(dtype)
            with np.errstate(all="ignore"):  # inf and NaN results are the values, not errors
                return float_imm(_EXACT_FLOAT[cls](np.array(va, dt), np.array(vb, dt)), dtype, True)
        if cls in (tir.Add, tir.Sub, tir.Mul, tir.Min, tir.Max):
            return tir.FloatImm(dtype, float(INT_BINARY[cls](va, vb)))  # Python's operators on floats
        if cls is tir.Div and vb != 0:
            return tir.FloatImm(dtype, float(va / vb))
        return None
    if cls is tir.Mod and not truncmod:
        return None
    value = fold_ints(cls, int(va), int(vb))
    return int_imm(value, dtype) if value is not None else None


def fold_ints(cls: type, a: int, b: int) -> int | None:
    """Integer arithmetic node ``cls`` of two Python ints (not wrapped), or None (a division by
    zero, a node that is not integer arithmetic)."""
    if cls not in INT_BINARY or (b == 0 and cls in (tir.Div, tir.Mod, tir.FloorDiv, tir.FloorMod)):
        return None
    return INT_BINARY[cls](a, b)


def _is_signed_zero(value: Any, negative: bool) -> bool:
    """True for a float ``-0.0`` (``negative``) or ``+0.0``."""
    return isinstance(value, float) and value == 0.0 and (math.copysign(1.0, value) < 0) == negative


def _identity(cls: type, a: tir.PrimExpr, b: tir.PrimExpr, va: Any, vb: Any, ieee_exact: bool) -> tir.PrimExpr | None:
    """The identities with one literal operand (``x * 1`` is ``x``...)."""
    is_float = parse_dtype(a.dtype).is_float
    if ieee_exact and is_float:
        if (cls is tir.Sub and _is_signed_zero(vb, False)) or (cls is tir.Add and _is_signed_zero(vb, True)):
            return a
        if cls is tir.Add and _is_signed_zero(va, True):
            return b
        if cls in (tir.Mul, tir.Div) and vb == 1.0:
            return a
        if cls is tir.Mul and va == 1.0:
            return b
        return None
    if cls is tir.Add:
        if va == 0:
            return b
        if vb == 0:
            return a
    elif cls is tir.Sub:
        if vb == 0:
            return a
    elif cls is tir.Mul:
        if va == 1:
            return b
        if vb == 1:
            return a
        if va == 0 and not is_float:
            return a
        if vb == 0 and not is_float:
            return b
    elif cls in (tir.Div, tir.FloorDiv):
        if vb == 1 and not is_float:  # TVM folds x / 1 on integers only: x / 1.0 stays
            return a
        if va == 0 and not is_float:
            return a
    elif cls is tir.FloorMod:
        if vb == 1:
            return int_imm(0, a.dtype) if not is_float else tir.FloatImm(a.dtype, 0.0)
        if va == 0:
            return a
    return None


def fold_binary(cls: type, a: tir.PrimExpr, b: tir.PrimExpr, *, ieee_exact: bool = False,
                truncmod: bool = True) -> tir.PrimExpr | None:
    """``cls(a, b)`` folded (two literals computed, or an identity applied), else None."""
    va, vb = literal_value(a), literal_value(b)
    if va is not None and vb is not None:
        folded = _fold_literals(cls, va, vb, a.dtype, ieee_exact, truncmod)
        if folded is not None:
            return folded
    if va is None and vb is None:
        return None
    return _identity(cls, a, b, va, vb, ieee_exact)


def fold_logic(cls: type, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr | None:
    """``a and b`` / ``a or b`` with a literal operand: the other operand, or the absorbing literal."""
    absorbing = cls is tir.Or  # False and x, True or x
    for mine, other in ((a, b), (b, a)):
        if isinstance(mine, tir.IntImm):
            return _bool(absorbing) if bool(mine.value) == absorbing else other
    return None


def fold_not(a: tir.PrimExpr) -> tir.PrimExpr | None:
    """``not`` of a literal."""
    return _bool(not a.value) if isinstance(a, tir.IntImm) else None


def fold_choice(cond: Any, then: Any, other: Any) -> Any:
    """``T.Select``/``T.if_then_else`` of a literal condition: the side it picks, else None."""
    if isinstance(cond, tir.IntImm):
        return then if cond.value else other
    return None


def fold_cast(value: tir.PrimExpr, dtype: str, *, ieee_exact: bool = False) -> tir.PrimExpr | None:
    """A literal converted to ``dtype`` (floats to integers truncate towards zero, integers wrap;
    ``ieee_exact``: a float result is rounded to its dtype), else None."""
    if not isinstance(value, (tir.IntImm, tir.FloatImm)):
        return None
    d = parse_dtype(dtype)
    if d.is_float:
        return float_imm(value.value, dtype, ieee_exact)
    return int_imm(int(value.value), dtype)
