"""Buffer allocation planning (TVM's PlanAndUpdateBufferAllocationLocation + CompactBufferAllocation),
run by LowerBlocks on the block-free body it produces.

Schedule primitives (``cache_read``, ``cache_write``, ``compute_at``) leave their cache buffers as
full-size ``T.alloc_buffer`` of the root block. Lowered as written, a cache filled inside a
``T.parallel`` loop would be one buffer shared (and raced on) by every thread, and a register tile
(``scope="local"``) would be a whole matrix LLVM cannot keep in registers. So every allocation that
came from a block's ``alloc_buffers`` is

- moved to the body of the innermost loop that encloses all of its accesses (its accesses' lowest
  common ancestor), but never inside a loop that drives a reduction iterator of a block accessing
  the buffer (the values must survive from one iteration of that loop to the next), and
- shrunk, dimension by dimension, to the index range its accesses cover for one iteration of that
  loop (the range is computed by interval arithmetic over the loops below it; a dimension whose
  range is not a constant size keeps its full extent), the indices shifted by the range's start.
"""
from __future__ import annotations

from ...ir import tir
from ...ir.arith import Analyzer, as_const_int, as_dtype, expr_key, simplify
from ...ir.bounds import Bound, IntervalRelaxer
from ...ir.dtype import lanes_of
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprMutator, StmtExprVisitor

__all__ = ["compact_allocations"]



class _IterationRelaxer(IntervalRelaxer):
    """Bounds of an index over the constant ranges of the loops below the allocation's loop;
    other variables are fixed (defined outside it) except let-bound ones, which are unknown.
    Bounds are kept unfolded: ``_union`` compares them by simplified differences."""

    scale_on_left = True
    relaxes_min_max = True

    def __init__(self, inner: dict[tir.Var, tuple[int, int] | None], opaque: set[tir.Var]) -> None:
        self.inner, self.opaque = inner, opaque

    def var_bound(self, v: tir.Var) -> Bound | None:
        if v in self.opaque:
            return None
        if v in self.inner:
            r = self.inner[v]
            if r is None:
                return None
            return tir.IntImm(v.dtype, r[0]), tir.IntImm(v.dtype, r[1])
        return v, v

    def const_int(self, e: tir.PrimExpr) -> int | None:
        return as_const_int(e)

    def accepts_multiplier(self, c: int) -> bool:
        return c >= 0

    def wrap_range(self, e: tir.FloorMod, inner: Bound, c: int, k: tir.PrimExpr) -> Bound | None:
        if _same(inner[0], inner[1]):
            return e, e
        return tir.IntImm(e.dtype, 0), tir.IntImm(e.dtype, c - 1)

    def cast(self, e: tir.Cast) -> Bound | None:
        r = self.relax_bounds(e.value)
        return None if r is None else (as_dtype(r[0], e.dtype), as_dtype(r[1], e.dtype))


def _same(a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
    """Structurally equal after simplification."""
    return expr_key(simplify(a)) == expr_key(simplify(b))


def _const_diff(a: tir.PrimExpr, b: tir.PrimExpr, outer: Analyzer | None = None) -> int | None:
    """``a - b`` when it simplifies to a constant (with the ranges of ``outer``'s loops known)."""
    diff = tir.Sub(a, as_dtype(b, a.dtype))
    return as_const_int(outer.simplify(diff) if outer is not None else simplify(diff))


class _Access:
    """One load or store of a planned buffer: the loops (and lets) around it, and its indices."""

    __slots__ = ("path", "indices")

    def __init__(self, path: tuple[tir.Stmt, ...], indices: tuple[tir.PrimExpr, ...]) -> None:
        self.path, self.indices = path, indices


class _Collector(StmtExprVisitor):
    """Records, for each planned buffer, its accesses and how many loops enclose its declaration."""

    def __init__(self, planned: set[tir.Buffer] | dict[tir.Buffer, None]) -> None:
        self.planned = planned
        self.path: list[tir.Stmt] = []
        self.decl_depth: dict[tir.Buffer, int] = {}
        self.accesses: dict[tir.Buffer, list[_Access]] = {b: [] for b in planned}
        self.by_data = {b.data: b for b in planned}
        self.unsafe: set[tir.Buffer] = set()  # their data is used other than by their own accesses

    def visit_var_(self, var: tir.Var) -> None:
        if var in self.by_data:  # a raw pointer use (an extern call, an address): keep the buffer
            self.unsafe.add(self.by_data[var])

    def visit_for_(self, loop: tir.For) -> None:
        self.path.append(loop)
        try:
            super().visit_for_(loop)
        finally:
            self.path.pop()

    def visit_let_stmt_(self, let: tir.LetStmt) -> None:
        self.path.append(let)
        try:
            super().visit_let_stmt_(let)
        finally:
            self.path.pop()

    def visit_decl_buffer_(self, decl: tir.DeclBuffer) -> None:
        if decl.buffer in self.planned:
            self.decl_depth[decl.buffer] = len(self.path)
        elif decl.buffer.data in self.by_data:  # another view of the same memory
            self.unsafe.add(self.by_data[decl.buffer.data])
        super().visit_decl_buffer_(decl)

    def _record(self, buf: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> None:
        if buf in self.accesses:
            self.accesses[buf].append(_Access(tuple(self.path), indices))

    def visit_buffer_load_(self, load: tir.BufferLoad) -> None:
        self._record(load.buffer, load.indices)
        super().visit_buffer_load_(load)

    def visit_buffer_store_(self, store: tir.BufferStore) -> None:
        self._record(store.buffer, store.indices)
        super().visit_buffer_store_(store)


class _Plan:
    """Where a buffer goes (a loop, or None: where it is declared) and its compacted form."""

    __slots__ = ("loop", "new", "mins")

    def __init__(self, loop: tir.For | None, new: tir.Buffer, mins: list[tir.PrimExpr | None]) -> None:
        self.loop, self.new, self.mins = loop, new, mins


def _plan(buf: tir.Buffer, accesses: list[_Access], depth: int, pinned: set[tir.Var]) -> _Plan | None:
    """The placement and compacted shape of ``buf``; None when nothing would change."""
    if not accesses or buf.strides or buf.axis_separators:
        return None
    common = min(len(a.path) for a in accesses)
    first = accesses[0].path
    lca = depth
    while lca < common and all(a.path[lca] is first[lca] for a in accesses):
        node = first[lca]
        if isinstance(node, tir.For) and (node.loop_var in pinned or node.kind == tir.ForKind.THREAD_BINDING):
            break
        lca += 1
    # Only a loop can hold the allocation: step back over lets.
    while lca > depth and not isinstance(first[lca - 1], tir.For):
        lca -= 1
    loop = first[lca - 1] if lca > depth else None
    # The loops around the allocation are fixed for one allocation, in their ranges: a row index
    # ``task // 4 * 128 + i`` of a task loop of 4 and the write-back's ``i`` are the same rows.
    outer = Analyzer()
    for node in first[:lca]:
        if isinstance(node, tir.For):
            outer.bind(node.loop_var, node.min, node.extent)
    ndim = len(buf.shape)
    regions: list[list[Bound | None]] = [[] for _ in range(ndim)]
    for acc in accesses:
        if len(acc.indices) != ndim:
            return None
        inner: dict[tir.Var, tuple[int, int] | None] = {}
        opaque: set[tir.Var] = set()
        for node in acc.path[lca:]:
            if isinstance(node, tir.LetStmt):
                opaque.add(node.var)
                continue
            lo, ext = as_const_int(simplify(node.min)), as_const_int(simplify(node.extent))
            step = 1 if node.step is None else as_const_int(node.step)
            ok = lo is not None and ext is not None and ext > 0 and step == 1
            inner[node.loop_var] = (lo, lo + ext - 1) if ok else None
        relaxer = _IterationRelaxer(inner, opaque)
        for d, idx in enumerate(acc.indices):
            if lanes_of(idx.dtype) > 1 and not isinstance(idx, tir.Ramp):
                regions[d].append(None)
            else:
                regions[d].append(relaxer.relax_bounds(idx))
    shape: list[tir.PrimExpr] = []
    mins: list[tir.PrimExpr | None] = []
    for d, dim in enumerate(buf.shape):
        region = _union(regions[d], outer)
        full = as_const_int(dim)
        if region is None or (full is not None and region[1] >= full):
            shape.append(dim)
            mins.append(None)
        else:
            shape.append(tir.IntImm(dim.dtype, region[1]))
            mins.append(region[0])
    if loop is None and all(m is None for m in mins):
        return None
    new = replace(buf, data=replace(buf.data), shape=tuple(shape))
    return _Plan(loop, new, mins)


def _union(ranges: list[Bound | None], outer: Analyzer | None = None) -> tuple[tir.PrimExpr, int] | None:
    """(start, constant size) covering every range, when their starts differ by constants."""
    if not ranges or any(r is None for r in ranges):
        return None
    base = simplify(ranges[0][0])
    lo_off, hi_off = 0, None
    for lo, hi in ranges:  # type: ignore[misc]
        size = _const_diff(hi, lo, outer)
        shift = _const_diff(lo, base, outer)
        if size is None or shift is None or size < 0:
            return None
        lo_off = min(lo_off, shift)
        hi_off = shift + size if hi_off is None else max(hi_off, shift + size)
    start = simplify(tir.Add(base, tir.IntImm(base.dtype, lo_off))) if lo_off else base
    return start, hi_off - lo_off + 1  # type: ignore[operator]


class _Rewriter(StmtExprMutator):
    """Moves planned declarations into their loops and shifts the accesses."""

    def __init__(self, plans: dict[tir.Buffer, _Plan]) -> None:
        self.plans = plans
        self.at_loop: dict[int, list[_Plan]] = {}
        for p in plans.values():
            if p.loop is not None:
                self.at_loop.setdefault(id(p.loop), []).append(p)

    def visit_for_(self, loop: tir.For) -> tir.Stmt:
        here = self.at_loop.get(id(loop), ())
        new = super().visit_for_(loop)
        if not here:
            return new
        body = new.body
        for p in reversed(here):
            body = tir.DeclBuffer(p.new, body)
        return replace(new, body=body)

    def visit_decl_buffer_(self, decl: tir.DeclBuffer) -> tir.Stmt:
        plan = self.plans.get(decl.buffer)
        body = self.visit_stmt(decl.body)
        if plan is None:
            return decl if body is decl.body else replace(decl, body=body)
        return body if plan.loop is not None else tir.DeclBuffer(plan.new, body)

    def _indices(self, plan: _Plan, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        out = []
        for idx, lo in zip(indices, plan.mins):
            if lo is None:
                out.append(idx)
            elif isinstance(idx, tir.Ramp):
                base = simplify(tir.Sub(idx.base, as_dtype(lo, idx.base.dtype)))
                out.append(replace(idx, base=as_dtype(base, idx.base.dtype)))
            else:
                out.append(as_dtype(simplify(tir.Sub(idx, as_dtype(lo, idx.dtype))), idx.dtype))
        return tuple(out)

    def visit_buffer_load_(self, load: tir.BufferLoad) -> tir.PrimExpr:
        new = super().visit_buffer_load_(load)
        plan = self.plans.get(new.buffer)
        if plan is None:
            return new
        return tir.BufferLoad(plan.new, self._indices(plan, new.indices))

    def visit_buffer_store_(self, store: tir.BufferStore) -> tir.Stmt:
        new = super().visit_buffer_store_(store)
        plan = self.plans.get(new.buffer)
        if plan is None:
            return new
        return tir.BufferStore(plan.new, new.value, self._indices(plan, new.indices))


def compact_allocations(body: tir.Stmt, planned: set[tir.Buffer] | dict[tir.Buffer, None],
                        pinned: dict[tir.Buffer, set[tir.Var]] | None = None) -> tir.Stmt:
    """``body`` (block-free) with the allocating declarations of ``planned`` moved to the loop of
    their accesses and shrunk to the region those accesses cover; ``pinned`` names, per buffer, the
    loops the allocation must stay outside of (they drive a reduction that accumulates into it)."""
    if not planned:
        return body
    pinned = pinned or {}
    col = _Collector(planned)
    col.visit_stmt(body)
    plans: dict[tir.Buffer, _Plan] = {}
    for buf in planned:
        if buf not in col.decl_depth or buf in col.unsafe:
            continue
        plan = _plan(buf, col.accesses[buf], col.decl_depth[buf], pinned.get(buf, set()))
        if plan is not None:
            plans[buf] = plan
    if not plans:
        return body
    return _Rewriter(plans).visit_stmt(body)
