"""Interval relaxation: the inclusive bounds of an integer index expression while some of its
variables take every value of their ranges (``i * 16 + j`` with ``j`` in ``[0, 15]`` lies in
``[i * 16, i * 16 + 15]``).

One evaluator, ``IntervalRelaxer``, walks the expression; its users differ only in how a
variable is bounded, whether bounds are folded as they are built, and how much they trust
(constants written as expressions, negative multipliers, ``min``/``max``, casts, ``%`` that does
not wrap), so those are the hooks a subclass overrides:

- IndexMap.map_shape (ir/arith.py) bounds the final indices of a layout map over the shape,
- block access-region inference (ir/regions.py) fills in omitted ``T.reads``/``T.writes``,
- schedule regions (passes/schedule/regions.py) express a block's regions over outer loops,
- allocation compaction (passes/lower/compact.py) sizes a buffer for one loop iteration.

Each keeps the exact bounds (and so the printed regions and shapes) it computed before.
"""
from __future__ import annotations

from . import tir

__all__ = ["Bound", "IntervalRelaxer"]

Bound = tuple[tir.PrimExpr, tir.PrimExpr]  # inclusive (lo, hi)


class IntervalRelaxer:
    """Inclusive bounds of integer index expressions; a subclass says how variables are bounded."""

    # A constant multiplier may be written first (``16 * i``); the users that do not accept it
    # give up on such a product, as they always have.
    scale_on_left = False
    # ``min``/``max`` of bounded operands are bounded by the min/max of their ends.
    relaxes_min_max = False

    # ---------------------------------------------------------------- hooks
    def is_fixed(self, e: tir.PrimExpr) -> bool:
        """True when ``e`` mentions no relaxed variable, so its bounds are ``(e, e)``."""
        return False

    def var_bound(self, v: tir.Var) -> Bound | None:
        """The bounds of a variable (``(v, v)`` when it is not relaxed)."""
        return v, v

    def literal(self, e: tir.IntImm) -> Bound:
        """The bounds of an integer literal."""
        return e, e

    def fold(self, e: tir.PrimExpr) -> tir.PrimExpr:
        """A bound as it is kept: unfolded unless a subclass simplifies as it goes."""
        return e

    def const_int(self, e: tir.PrimExpr) -> int | None:
        """The value of a constant operand (only literals unless a subclass folds)."""
        return e.value if isinstance(e, tir.IntImm) else None

    def accepts_multiplier(self, c: int) -> bool:
        """True when a product by the constant ``c`` is bounded (by default only positive ones)."""
        return c > 0

    def scale_literal(self, c: int, written: tir.PrimExpr, dtype: str) -> tir.PrimExpr:
        """The constant operand as it appears in the bounds: as written when a literal."""
        return written if isinstance(written, tir.IntImm) else tir.IntImm(dtype, c)

    def wrap_range(self, e: tir.FloorMod, inner: Bound, c: int, k: tir.PrimExpr) -> Bound | None:
        """The bounds of ``x % c`` with ``x`` in ``inner``: by default every remainder."""
        return tir.IntImm(e.dtype, 0), tir.IntImm(e.dtype, c - 1)

    def cast(self, e: tir.Cast) -> Bound | None:
        """The bounds of a cast (unbounded unless a subclass trusts casts)."""
        return None

    # ---------------------------------------------------------------- evaluation
    def relax_bounds(self, e: tir.PrimExpr) -> Bound | None:
        """Inclusive (lo, hi) of ``e`` over the relaxed variables; None when it cannot be bounded."""
        if self.is_fixed(e):
            return e, e
        if isinstance(e, tir.IntImm):
            return self.literal(e)
        if isinstance(e, tir.Var):
            return self.var_bound(e)
        if isinstance(e, (tir.Add, tir.Sub)):
            a, b = self.relax_bounds(e.a), self.relax_bounds(e.b)
            if a is None or b is None:
                return None
            if isinstance(e, tir.Add):
                return self.fold(tir.Add(a[0], b[0])), self.fold(tir.Add(a[1], b[1]))
            return self.fold(tir.Sub(a[0], b[1])), self.fold(tir.Sub(a[1], b[0]))
        if isinstance(e, (tir.Mul, tir.FloorDiv, tir.FloorMod)):
            return self._scaled(e)
        if isinstance(e, (tir.Min, tir.Max)) and self.relaxes_min_max:
            a, b = self.relax_bounds(e.a), self.relax_bounds(e.b)
            if a is None or b is None:
                return None
            kind = type(e)
            return self.fold(kind(a[0], b[0])), self.fold(kind(a[1], b[1]))
        if isinstance(e, tir.Cast):
            return self.cast(e)
        if isinstance(e, tir.Ramp):
            return self._ramp(e)
        return None

    def _scaled(self, e: tir.BinaryOp) -> Bound | None:
        """Bounds of ``x * c``, ``x // c`` or ``x % c`` for a constant ``c``."""
        x, written = e.a, e.b
        c = self.const_int(written)
        if c is None and self.scale_on_left and isinstance(e, tir.Mul):
            x, written = e.b, e.a
            c = self.const_int(written)
        if c is None or not (self.accepts_multiplier(c) if isinstance(e, tir.Mul) else c > 0):
            return None
        inner = self.relax_bounds(x)
        if inner is None:
            return None
        k = self.scale_literal(c, written, e.dtype)
        if isinstance(e, tir.Mul):
            lo, hi = self.fold(tir.Mul(inner[0], k)), self.fold(tir.Mul(inner[1], k))
            return (lo, hi) if c >= 0 else (hi, lo)  # a negative factor swaps the ends
        if isinstance(e, tir.FloorDiv):
            return self.fold(tir.FloorDiv(inner[0], k)), self.fold(tir.FloorDiv(inner[1], k))
        return self.wrap_range(e, inner, c, k)  # type: ignore[arg-type]

    def _ramp(self, e: tir.Ramp) -> Bound | None:
        """Bounds over every lane of a ramp with a non-negative constant stride."""
        stride = self.const_int(e.stride)
        if stride is None or stride < 0:
            return None
        base = self.relax_bounds(e.base)
        if base is None:
            return None
        span = tir.IntImm(e.base.dtype, stride * (e.lanes - 1))
        return base[0], self.fold(tir.Add(base[1], span))
