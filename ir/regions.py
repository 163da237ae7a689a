"""Block read/write regions for blocks whose ``T.reads``/``T.writes`` the source omits
(TVM's ScriptComplete): the regions of every buffer load and store in the block, with loop
variables of loops inside the block relaxed over their ranges."""
from __future__ import annotations

from typing import Any

from . import tir
from .arith import expr_key, simplify
from .bounds import Bound, IntervalRelaxer
from .node import Node, node_fields

__all__ = ["infer_access_regions"]

class _BlockRelaxer(IntervalRelaxer):
    """Bounds of an index with the loop variables inside a block over their ranges, folded as
    they are built; variables defined outside the block stay symbolic."""

    def __init__(self, ranges: dict[int, Bound]) -> None:
        self.ranges = ranges  # loop var id -> bounds inside the block

    def var_bound(self, v: tir.Var) -> Bound | None:
        return self.ranges.get(id(v), (v, v))

    def fold(self, e: tir.PrimExpr) -> tir.PrimExpr:
        return _simp(e)


class _Collector:
    """Walks a block body, recording per buffer the bounds of each access, in first-use order."""

    def __init__(self, skip: set[int], matched: dict[int, tir.BufferRegion]) -> None:
        self.skip = skip  # ids of buffers allocated by the block itself
        self.matched = matched  # match_buffer targets -> the source regions they view
        self.ranges: dict[int, Bound] = {}  # loop var id -> bounds inside the block
        self.reads: dict[int, tuple[tir.Buffer, list[list[Bound | None]]]] = {}
        self.writes: dict[int, tuple[tir.Buffer, list[list[Bound | None]]]] = {}

    # ---------------------------------------------------------------- recording
    def record(self, table: dict, buf: tir.Buffer, bounds: list[Bound | None]) -> None:
        """Note one access of ``buf`` (match_buffer views count as their source)."""
        if id(buf) in self.skip:
            return
        source = self.matched.get(id(buf))
        if source is not None:  # an access through a match_buffer counts as its whole source region
            buf = source.buffer
            bounds = [(r.min, _simp(tir.Sub(tir.Add(r.min, r.extent), tir.IntImm(r.extent.dtype, 1))))
                      for r in source.region]
        entry = table.get(id(buf))
        if entry is None:
            table[id(buf)] = (buf, [bounds])
        else:
            entry[1].append(bounds)

    def bounds(self, e: tir.PrimExpr) -> Bound | None:
        """Inclusive bounds of an index over the loop variables inside the block (None: unknown)."""
        if not self.ranges or not self._uses_loop_var(e):
            return (e, e)
        return _BlockRelaxer(self.ranges).relax_bounds(e)

    def _uses_loop_var(self, e: Any) -> bool:
        """True when ``e`` mentions a loop variable of the block body."""
        if isinstance(e, tir.Var):
            return id(e) in self.ranges
        if isinstance(e, (tir.IntImm, tir.FloatImm)):
            return False
        if isinstance(e, tir.BinaryOp):
            return self._uses_loop_var(e.a) or self._uses_loop_var(e.b)
        if isinstance(e, Node):
            return any(self._uses_loop_var(getattr(e, f)) for f in node_fields(type(e)))
        if isinstance(e, tuple):
            return any(self._uses_loop_var(x) for x in e)
        return False

    # ---------------------------------------------------------------- walking
    def stmt(self, s: Any) -> None:
        """Walk a statement."""
        t = type(s)
        if t is tir.SeqStmt:
            for x in s.seq:
                self.stmt(x)
        elif t is tir.BufferStore:
            self.record(self.writes, s.buffer, [self.bounds(i) for i in s.indices])
            self.expr(s.value)
            for i in s.indices:
                self.expr(i)
        elif t is tir.For:
            self.expr(s.min)
            self.expr(s.extent)
            lo = s.min
            hi = _simp(tir.Sub(tir.Add(s.min, s.extent), tir.IntImm(s.extent.dtype, 1)))
            self.ranges[id(s.loop_var)] = (lo, hi)
            self.stmt(s.body)
            del self.ranges[id(s.loop_var)]
        elif t is tir.BlockRealize:
            self.child_block(s)
        elif t is tir.IfThenElse:
            self.expr(s.condition)
            self.stmt(s.then_case)
            if s.else_case is not None:
                self.stmt(s.else_case)
        elif t is tir.Evaluate:
            self.expr(s.value)
        elif t in (tir.LetStmt,):
            self.expr(s.value)
            self.stmt(s.body)
        elif isinstance(s, Node):
            for f in node_fields(t):
                v = getattr(s, f)
                if isinstance(v, tir.Stmt):
                    self.stmt(v)
                elif isinstance(v, tir.PrimExpr):
                    self.expr(v)

    def expr(self, e: Any) -> None:
        """Walk an expression, recording buffer loads."""
        t = type(e)
        if t is tir.BufferLoad:
            self.record(self.reads, e.buffer, [self.bounds(i) for i in e.indices])
            for i in e.indices:
                self.expr(i)
        elif t in (tir.Var, tir.IntImm, tir.FloatImm, tir.SizeVar, tir.StringImm):
            return
        elif isinstance(e, tir.BinaryOp):
            self.expr(e.a)
            self.expr(e.b)
        elif isinstance(e, Node):
            for f in node_fields(t):
                v = getattr(e, f)
                if isinstance(v, tir.PrimExpr):
                    self.expr(v)
                elif isinstance(v, tuple):
                    for x in v:
                        if isinstance(x, tir.PrimExpr):
                            self.expr(x)

    def child_block(self, realize: tir.BlockRealize) -> None:
        """A nested block contributes its own regions, with its iterators replaced by their bindings."""
        block = realize.block
        subst = {id(iv.var): v for iv, v in zip(block.iter_vars, realize.iter_values)}
        for v in realize.iter_values:
            self.expr(v)
        own = {id(b) for b in block.alloc_buffers}
        for table, regions in ((self.reads, block.reads), (self.writes, block.writes)):
            for region in regions:
                if id(region.buffer) in own:
                    continue
                bounds: list[Bound | None] = []
                for r in region.region:
                    lo = self.bounds(_substitute(r.min, subst))
                    last = _simp(tir.Sub(tir.Add(r.min, r.extent), tir.IntImm(r.extent.dtype, 1)))
                    hi = self.bounds(_substitute(last, subst))
                    bounds.append(None if lo is None or hi is None else (lo[0], hi[1]))
                self.record(table, region.buffer, bounds)


def _simp(e: tir.PrimExpr) -> tir.PrimExpr:
    """Fold an index bound (only bounds computed here, never user expressions)."""
    if isinstance(e, tir.BinaryOp) and isinstance(e.a, tir.IntImm) and isinstance(e.b, tir.IntImm):
        return simplify(e)
    if isinstance(e, (tir.Add, tir.Sub)) and isinstance(e.b, tir.IntImm) and e.b.value == 0:
        return e.a
    try:
        return simplify(e)
    except Exception:  # an expression the simplifier does not model: keep it as is
        return e


def _substitute(e: Any, subst: dict[int, tir.PrimExpr]) -> Any:
    """``e`` with block iterators replaced by their bindings."""
    if isinstance(e, tir.Var):
        return subst.get(id(e), e)
    if isinstance(e, tir.BinaryOp):
        a, b = _substitute(e.a, subst), _substitute(e.b, subst)
        return e if a is e.a and b is e.b else type(e)(a, b)
    return e


def _region(buf: tir.Buffer, accesses: list[list[Bound | None]]) -> tir.BufferRegion:
    """The region covering every access of ``buf``: exact when they agree, the bounding box
    when their bounds are constants, the whole dimension otherwise."""
    ranges = []
    for dim, extent in enumerate(buf.shape):
        bounds = [acc[dim] if dim < len(acc) else None for acc in accesses]
        ranges.append(_dim_range(bounds, extent))
    return tir.BufferRegion(buf, tuple(ranges))


def _dim_range(bounds: list[Bound | None], extent: tir.PrimExpr) -> tir.Range:
    """The Range covering the bounds of one dimension over all accesses."""
    if any(b is None for b in bounds):
        return tir.Range(tir.IntImm(extent.dtype, 0), extent)
    first = bounds[0]
    assert first is not None
    key = (expr_key(first[0]), expr_key(first[1]))
    same = all(b is first or (expr_key(b[0]), expr_key(b[1])) == key for b in bounds[1:])  # type: ignore[index]
    if same:
        lo, hi = first
    elif all(isinstance(b[0], tir.IntImm) and isinstance(b[1], tir.IntImm) for b in bounds):  # type: ignore[index]
        lo = min((b[0] for b in bounds), key=lambda x: x.value)  # type: ignore[index]
        hi = max((b[1] for b in bounds), key=lambda x: x.value)  # type: ignore[index]
    else:
        return tir.Range(tir.IntImm(extent.dtype, 0), extent)
    if lo is hi or expr_key(lo) == expr_key(hi):
        return tir.Range(lo, tir.IntImm(lo.dtype, 1))
    if isinstance(lo, tir.IntImm) and isinstance(hi, tir.IntImm):
        return tir.Range(lo, tir.IntImm(lo.dtype, hi.value - lo.value + 1))
    return tir.Range(lo, _simp(tir.Add(tir.Sub(hi, lo), tir.IntImm(lo.dtype, 1))))


def infer_access_regions(body: tir.Stmt, init: tir.Stmt | None, alloc_buffers: tuple[tir.Buffer, ...],
                         match_buffers: tuple[tir.MatchBufferRegion, ...] = ()
                         ) -> tuple[tuple[tir.BufferRegion, ...], tuple[tir.BufferRegion, ...]]:
    """(reads, writes) of a block; with an init, the written buffers are not counted as reads."""
    c = _Collector({id(b) for b in alloc_buffers}, {id(m.buffer): m.source for m in match_buffers})
    if init is not None:
        c.stmt(init)
    c.stmt(body)
    writes = tuple(_region(buf, acc) for buf, acc in c.writes.values())
    reads = tuple(_region(buf, acc) for key, (buf, acc) in c.reads.items()
                  if init is None or key not in c.writes)
    return reads, writes
