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
from ...ir.stmt_functor import substitute

__all__ = ["Bound", "relax", "block_regions", "union_bounds", "extent_of", "lower_min", "upper_max",
           "one_less", "uses_vars"]

Bound = tuple[tir.PrimExpr, tir.PrimExpr]  # inclusive (lo, hi)


def _int(value: int, dtype: str) -> tir.IntImm:
    return tir.IntImm(dtype, value)


def one_less(e: tir.PrimExpr) -> tir.PrimExpr:
    """``e - 1``, folded for literals."""
    if isinstance(e, tir.IntImm):
        return _int(e.value - 1, e.dtype)
    return tir.Sub(e, _int(1, e.dtype))


def uses_vars(e: tir.PrimExpr, vars_: Iterable[tir.Var]) -> bool:
    """True when ``e`` mentions one of ``vars_``."""
    wanted = set(vars_)
    found = False

    def walk(x: object) -> None:
        nonlocal found
        if found:
            return
        if isinstance(x, tir.Var):
            found = x in wanted
        elif isinstance(x, tir.BinaryOp):
            walk(x.a)
            walk(x.b)
        elif isinstance(x, (tir.IntImm, tir.FloatImm, tir.StringImm)):
            return
        elif isinstance(x, tir.PrimExpr):
            for name in type(x).__dataclass_fields__:  # type: ignore[attr-defined]
                value = getattr(x, name)
                if isinstance(value, tir.PrimExpr):
                    walk(value)
                elif isinstance(value, tuple):
                    for v in value:
                        walk(v)

    walk(e)
    return found


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


def relax(e: tir.PrimExpr, ranges: dict[tir.Var, Bound], analyzer: Analyzer) -> Bound | None:
    """Inclusive bounds of ``e`` while the variables of ``ranges`` take every value of their
    range (the other variables stay symbolic); None when ``e`` cannot be bounded this way."""
    if not ranges or not uses_vars(e, ranges):
        return e, e
    out = _relax(e, ranges, analyzer)
    if out is None:
        return None
    return analyzer.simplify(out[0]), analyzer.simplify(out[1])


def _relax(e: tir.PrimExpr, ranges: dict[tir.Var, Bound], analyzer: Analyzer) -> Bound | None:
    if not uses_vars(e, ranges):
        return e, e
    if isinstance(e, tir.Var):
        return ranges[e]
    if isinstance(e, (tir.Add, tir.Sub)):
        a, b = _relax(e.a, ranges, analyzer), _relax(e.b, ranges, analyzer)
        if a is None or b is None:
            return None
        if isinstance(e, tir.Add):
            return tir.Add(a[0], b[0]), tir.Add(a[1], b[1])
        return tir.Sub(a[0], b[1]), tir.Sub(a[1], b[0])
    if isinstance(e, tir.Mul):
        # One side must be a literal: its sign says which end of the other side is the lower.
        if as_const_int(e.b) is None and as_const_int(e.a) is not None:
            e = tir.Mul(e.b, e.a)
        c = as_const_int(e.b)
        if c is None:
            return None
        a = _relax(e.a, ranges, analyzer)
        if a is None:
            return None
        lo, hi = tir.Mul(a[0], e.b), tir.Mul(a[1], e.b)
        return (lo, hi) if c >= 0 else (hi, lo)
    if isinstance(e, (tir.FloorDiv, tir.FloorMod)):
        c = as_const_int(e.b)
        if c is None or c <= 0:
            return None
        a = _relax(e.a, ranges, analyzer)
        if a is None:
            return None
        if isinstance(e, tir.FloorDiv):
            return tir.FloorDiv(a[0], e.b), tir.FloorDiv(a[1], e.b)
        lo, hi = analyzer.simplify(a[0]), analyzer.simplify(a[1])
        if analyzer.can_prove(tir.EQ(tir.FloorDiv(lo, e.b), tir.FloorDiv(hi, e.b))):
            return tir.FloorMod(lo, e.b), tir.FloorMod(hi, e.b)  # the range does not wrap around
        return _int(0, e.dtype), _int(c - 1, e.dtype)
    if isinstance(e, (tir.Min, tir.Max)):
        a, b = _relax(e.a, ranges, analyzer), _relax(e.b, ranges, analyzer)
        if a is None or b is None:
            return None
        kind = type(e)
        return kind(a[0], b[0]), kind(a[1], b[1])
    if isinstance(e, tir.Cast) and e.dtype.startswith("int"):
        a = _relax(e.value, ranges, analyzer)
        return None if a is None else (tir.Cast(e.dtype, a[0]), tir.Cast(e.dtype, a[1]))
    return None


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
        lo = relax(loop.min, ranges, analyzer)
        hi = relax(analyzer.simplify(tir.Add(loop.min, one_less(loop.extent))), ranges, analyzer)
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
            a, b = relax(first, ranges, analyzer), relax(last, ranges, analyzer)
            dims.append(None if a is None or b is None else (a[0], b[1]))
        out.append(dims)
    return out


def extent_of(bound: Bound, analyzer: Analyzer) -> tir.PrimExpr:
    """The number of values of an inclusive bound."""
    lo, hi = bound
    return analyzer.simplify(tir.Add(tir.Sub(hi, lo), _int(1, hi.dtype)))
