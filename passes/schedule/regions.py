"""Regions of buffers accessed under a loop, as functions of the loops outside it.

compute_at, reverse_compute_at and the cache primitives need, for one iteration of a loop, the
part of a buffer the blocks under that loop read or write. A block's ``T.reads``/``T.writes``
regions are written over its iterators; substituting the realize's bindings expresses them
over loop variables, and interval arithmetic over the ranges of the loops *inside* the chosen
loop leaves them as functions of the outer loop variables only (``i0 * 16`` to ``i0 * 16 + 15``).
Bounds are inclusive; when two accesses disagree their union takes ``min``/``max`` (folded when
the known loop ranges decide which is smaller)."""
from __future__ import annotations

from typing import Iterable, Sequence

from ...ir import tir
from ...ir.arith import Analyzer, as_const_int
from ...ir.bounds import Bound, IntervalRelaxer
from ...ir.stmt_functor import substitute

__all__ = ["Bound", "relax_bounds", "block_regions", "union_bounds", "extent_of", "lower_min", "upper_max",
           "one_less", "uses_vars"]



def _int(value: int, dtype: str) -> tir.IntImm:
    return tir.IntImm(dtype, value)


def one_less(e: tir.PrimExpr) -> tir.PrimExpr:
    """``e - 1``, folded for literals."""
    if isinstance(e, tir.IntImm):
        return _int(e.value - 1, e.dtype)
    return tir.Sub(e, _int(1, e.dtype))


def uses_vars(e: tir.PrimExpr, vars_: Iterable[tir.Var]) -> bool:
    """True when ``e`` mentions one of ``vars_``."""
    return _mentions(e, set(vars_))


def _mentions(x: object, wanted: set[tir.Var]) -> bool:
    """``uses_vars``' walk (a module function: a recursive closure would be a reference cycle left
    to the garbage collector)."""
    if isinstance(x, tir.Var):
        return x in wanted
    if isinstance(x, tir.BinaryOp):
        return _mentions(x.a, wanted) or _mentions(x.b, wanted)
    if isinstance(x, (tir.IntImm, tir.FloatImm, tir.StringImm)):
        return False
    if isinstance(x, tir.PrimExpr):
        for name in type(x).__dataclass_fields__:  # type: ignore[attr-defined]
            value = getattr(x, name)
            if isinstance(value, tir.PrimExpr):
                if _mentions(value, wanted):
                    return True
            elif isinstance(value, tuple):
                if any(_mentions(v, wanted) for v in value):
                    return True
    return False


def lower_min(a: tir.PrimExpr, b: tir.PrimExpr, analyzer: Analyzer) -> tir.PrimExpr:
    """``min(a, b)``, folded when the analyzer can tell which is smaller."""
    if analyzer.can_prove(tir.LE(a, b)):
        return a
    if analyzer.can_prove(tir.LE(b, a)):
        return b
    return tir.Min(a, b)


def upper_max(a: tir.PrimExpr, b: tir.PrimExpr, analyzer: Analyzer) -> tir.PrimExpr:
    """``max(a, b)``, folded when the analyzer can tell which is larger."""
    if analyzer.can_prove(tir.GE(a, b)):
        return a
    if analyzer.can_prove(tir.GE(b, a)):
        return b
    return tir.Max(a, b)


class _LoopRelaxer(IntervalRelaxer):
    """Bounds with the variables of ``ranges`` over their (symbolic) ranges; any constant
    operand counts, ``%`` keeps its exact ends when the analyzer proves the range does not
    wrap around, and the caller simplifies the ends once at the end."""

    scale_on_left = True
    relaxes_min_max = True

    def __init__(self, ranges: dict[tir.Var, Bound], analyzer: Analyzer) -> None:
        self.ranges, self.analyzer = ranges, analyzer

    def is_fixed(self, e: tir.PrimExpr) -> bool:
        return not uses_vars(e, self.ranges)

    def var_bound(self, v: tir.Var) -> Bound | None:
        return self.ranges[v]

    def const_int(self, e: tir.PrimExpr) -> int | None:
        return as_const_int(e)

    def accepts_multiplier(self, c: int) -> bool:
        return True

    def wrap_range(self, e: tir.FloorMod, inner: Bound, c: int, k: tir.PrimExpr) -> Bound | None:
        lo, hi = self.analyzer.simplify(inner[0]), self.analyzer.simplify(inner[1])
        if self.analyzer.can_prove(tir.EQ(tir.FloorDiv(lo, k), tir.FloorDiv(hi, k))):
            return tir.FloorMod(lo, k), tir.FloorMod(hi, k)  # the range does not wrap around
        return _int(0, e.dtype), _int(c - 1, e.dtype)

    def cast(self, e: tir.Cast) -> Bound | None:
        if not e.dtype.startswith("int"):
            return None
        a = self.relax_bounds(e.value)
        return None if a is None else (tir.Cast(e.dtype, a[0]), tir.Cast(e.dtype, a[1]))


def relax_bounds(e: tir.PrimExpr, ranges: dict[tir.Var, Bound], analyzer: Analyzer) -> Bound | None:
    """Inclusive bounds of ``e`` while the variables of ``ranges`` take every value of their
    range (the other variables stay symbolic); None when ``e`` cannot be bounded this way."""
    if not ranges or not uses_vars(e, ranges):
        return e, e
    out = _LoopRelaxer(ranges, analyzer).relax_bounds(e)
    if out is None:
        return None
    return analyzer.simplify(out[0]), analyzer.simplify(out[1])


def union_bounds(bounds: Sequence[Bound], analyzer: Analyzer) -> Bound:
    """The smallest interval holding every interval of ``bounds`` (at least one)."""
    lo, hi = bounds[0]
    for b in bounds[1:]:
        lo = lower_min(lo, b[0], analyzer)
        hi = upper_max(hi, b[1], analyzer)
    return lo, hi


def block_regions(realize: tir.BlockRealize, regions: Sequence[tir.BufferRegion], inner: Sequence[tir.For],
                  analyzer: Analyzer) -> list[list[Bound | None]]:
    """The regions (a block's reads or writes) as inclusive per-dimension bounds over the loop
    variables, with the loops ``inner`` relaxed over their ranges; None for a dimension that
    cannot be bounded."""
    block = realize.block
    binding = {iv.var: value for iv, value in zip(block.iter_vars, realize.iter_values)}
    ranges: dict[tir.Var, Bound] = {}
    for loop in inner:  # outermost first, so a loop's range may use the loops around it
        lo = relax_bounds(loop.min, ranges, analyzer)
        hi = relax_bounds(analyzer.simplify(tir.Add(loop.min, one_less(loop.extent))), ranges, analyzer)
        if lo is None or hi is None:
            ranges[loop.loop_var] = None  # type: ignore[assignment]
            continue
        ranges[loop.loop_var] = (lo[0], hi[1])
    unbounded = {v for v, r in ranges.items() if r is None}
    ranges = {v: r for v, r in ranges.items() if r is not None}
    out: list[list[Bound | None]] = []
    for region in regions:
        dims: list[Bound | None] = []
        for r in region.region:
            first = substitute(r.min, binding)
            last = substitute(analyzer.simplify(tir.Add(r.min, one_less(r.extent))), binding)
            if unbounded and (uses_vars(first, unbounded) or uses_vars(last, unbounded)):
                dims.append(None)
                continue
            a, b = relax_bounds(first, ranges, analyzer), relax_bounds(last, ranges, analyzer)
            dims.append(None if a is None or b is None else (a[0], b[1]))
        out.append(dims)
    return out


def extent_of(bound: Bound, analyzer: Analyzer) -> tir.PrimExpr:
    """The number of values of an inclusive bound."""
    lo, hi = bound
    return analyzer.simplify(tir.Add(tir.Sub(hi, lo), _int(1, hi.dtype)))
