"""compute_at / reverse_compute_at: move a block under a loop of its scope.

compute_at moves a producer under a loop that encloses its consumers: per iteration of the loop
it computes only the region the consumers under the loop read. reverse_compute_at moves a
consumer under a loop that encloses its producers: per iteration it consumes only the region
they write there. Either way the block's old loops are dropped and new ones (``ax0, ax1...``,
one per iterator whose range is not a single value) cover the iterator ranges solved from its
own regions; the block itself (iterators, reads/writes, body) is unchanged, only its bindings
(``v = T.axis.spatial(extent, min + ax)``) and predicate are new."""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import tir
from ...ir.node import replace
from ...ir.stmt_functor import substitute
from ...ir.arith import Analyzer, as_const_int, as_dtype, can_prove_equal, format_expr, simplify
from .regions import Bound, block_regions, extent_of, one_less, relax_bounds, union_bounds, uses_vars
from .state import BlockLoc, BlockRV, LoopLoc, LoopRV, ScheduleError, ScheduleState
from .tree import Path, child_realizes, enclosing_block_index, find_first, loops_of, replace_at

__all__ = ["compute_at", "reverse_compute_at", "check_stage_block", "scope_blocks", "region_text"]


def compute_at(state: ScheduleState, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool, index: int) -> None:
    """Move a producer block under ``loop``."""
    _move(state, block, loop, preserve_unit_loops, index, reverse=False)


def reverse_compute_at(state: ScheduleState, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool,
                       index: int) -> None:
    """Move a consumer block under ``loop``."""
    _move(state, block, loop, preserve_unit_loops, index, reverse=True)


# ---------------------------------------------------------------------------- shared checks
def scope_blocks(scope: tir.Stmt) -> list[tuple[tir.BlockRealize, Path]]:
    """The blocks of a scope (a Block or a loop): those directly under it, not in child blocks."""
    return child_realizes(scope)


def _bufs(regions: tuple[tir.BufferRegion, ...]) -> list[tir.Buffer]:
    out: list[tir.Buffer] = []
    for r in regions:
        if not any(b is r.buffer for b in out):
            out.append(r.buffer)
    return out


def check_stage_block(block: tir.Block, siblings: list[tuple[tir.BlockRealize, Path]], what: str) -> None:
    """Refuse a block that is neither complete (spatial iterators only, the only writer of its
    outputs, not reading them) nor a reduction (spatial and reduce iterators, a ``T.init()``,
    the only writer, outputs indexed by spatial iterators only)."""
    for buf in _bufs(block.writes):
        others = [r.block.name_hint for r, _ in siblings
                  if r.block is not block and any(w.buffer is buf for w in r.block.writes)]
        if others:
            raise ScheduleError(f"the {what} {block.name_hint!r} is not the only block writing {buf.name!r} "
                                f"(also written by {', '.join(repr(n) for n in others)})")
    kinds = {iv.iter_type for iv in block.iter_vars}
    if kinds <= {tir.IterType.DataPar}:
        written = _bufs(block.writes)
        for r in block.reads:
            if any(r.buffer is b for b in written):
                raise ScheduleError(f"the {what} {block.name_hint!r} is not a complete block: it reads "
                                    f"{r.buffer.name!r}, which it also writes, and has no T.init()")
        return
    if kinds <= {tir.IterType.DataPar, tir.IterType.CommReduce} and block.init is not None:
        reduce_vars = [iv.var for iv in block.iter_vars if iv.iter_type == tir.IterType.CommReduce]
        for w in block.writes:
            for r in w.region:
                if uses_vars(r.min, reduce_vars):
                    raise ScheduleError(f"the {what} {block.name_hint!r} is not a reduction block: it writes "
                                        f"{w.buffer.name!r} at an index that uses a reduction iterator")
        return
    raise ScheduleError(f"the {what} {block.name_hint!r} is neither a complete block (spatial iterators only) "
                        f"nor a reduction block (spatial and reduce iterators with a T.init())")


def region_text(buf: tir.Buffer, bounds: list[Bound]) -> str:
    """``B[i0 * 16:i0 * 16 + 16, 0:128]`` for error messages."""
    parts = []
    for lo, hi in bounds:
        parts.append(format_expr(lo) if can_prove_equal(lo, hi) else
                     f"{format_expr(lo)}:{format_expr(simplify(tir.Add(hi, tir.IntImm(hi.dtype, 1))))}")
    return f"{buf.name}[{', '.join(parts)}]"


# ---------------------------------------------------------------------------- the primitive
_Required = dict[int, tuple[tir.Buffer, list[Bound]]]  # id(buffer) -> (buffer, inclusive bounds per dim)

@dataclass
class _Ctx:
    state: ScheduleState
    bloc: BlockLoc
    lloc: LoopLoc
    reverse: bool

    @property
    def name(self) -> str:
        return self.bloc.block.name_hint

    @property
    def loop_name(self) -> str:
        return self.lloc.loop.loop_var.name


def _locate(state: ScheduleState, block: BlockRV, loop: LoopRV, reverse: bool) -> _Ctx:
    """Find the block and the loop and check they share a scope, the loop not enclosing the block."""
    bloc = state.locate_block(block)
    lloc = state.locate_loop(loop)
    ctx = _Ctx(state, bloc, lloc, reverse)
    if loop.func_name != block.func_name:
        raise ScheduleError(f"the block {ctx.name!r} is in {block.func_name!r} but the loop {ctx.loop_name!r} "
                            f"is in {loop.func_name!r}")
    if any(step.node is lloc.loop for step in bloc.path):
        raise ScheduleError(f"the loop {ctx.loop_name!r} already encloses the block {ctx.name!r}: "
                            f"the target loop must be outside the block's own loop nest")
    li = enclosing_block_index(lloc.path)
    loop_scope = lloc.path[li].node if li >= 0 else None
    if bloc.scope_block is None or loop_scope is not bloc.scope_block:
        raise ScheduleError(f"the block {ctx.name!r} and the loop {ctx.loop_name!r} are not in the same "
                            f"block scope")
    return ctx


def _subtree_index(loop: tir.For, path: Path) -> int:
    """Which statement of the loop's body (a SeqStmt's item, else 0) a path from the loop enters."""
    if isinstance(loop.body, tir.SeqStmt) and len(path) > 1:
        return path[1].index or 0
    return 0


def _move(state: ScheduleState, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool, index: int,
          reverse: bool) -> None:
    ctx = _locate(state, block, loop, reverse)
    moved = ctx.bloc.block
    scope = ctx.bloc.scope_block
    assert scope is not None
    siblings = scope_blocks(scope)
    check_stage_block(moved, siblings, "block")
    if not reverse:
        allocated = list(scope.alloc_buffers)
        for w in moved.writes:
            if not any(w.buffer is b for b in allocated):
                raise ScheduleError(f"the block {ctx.name!r} is an output block: it writes {w.buffer.name!r}, "
                                    f"which its scope does not allocate (compute_at moves intermediate "
                                    f"producers only)")

    # Who depends on whom: producers write what the block reads, consumers read what it writes.
    mine_r, mine_w = _bufs(moved.reads), _bufs(moved.writes)
    producers = [r for r, _ in siblings if r.block is not moved
                 and any(any(w.buffer is b for b in mine_r) for w in r.block.writes)]
    consumers = [r for r, _ in siblings if r.block is not moved
                 and any(any(x.buffer is b for b in mine_w) for x in r.block.reads)]
    under = {id(r.block): (r, p) for r, p in child_realizes(ctx.lloc.loop)}
    needed = producers if reverse else consumers
    missing = [r.block.name_hint for r in needed if id(r.block) not in under]
    if missing:
        kind = "producer" if reverse else "consumer"
        raise ScheduleError(f"the {kind}{'s' if len(missing) > 1 else ''} {', '.join(repr(n) for n in missing)} "
                            f"of {ctx.name!r} {'are' if len(missing) > 1 else 'is'} not under the loop "
                            f"{ctx.loop_name!r}: every {kind} must be inside the loop")
    if not needed:
        kind = "producer" if reverse else "consumer"
        raise ScheduleError(f"the block {ctx.name!r} has no {kind} under the loop {ctx.loop_name!r}, so there "
                            f"is no region to {'consume' if reverse else 'compute'} there")
    if reverse:
        for b in mine_r:
            writers = [r.block.name_hint for r in producers if any(w.buffer is b for w in r.block.writes)]
            if len(writers) > 1:
                raise ScheduleError(f"{b.name!r}, which {ctx.name!r} reads, is written by several blocks "
                                    f"({', '.join(repr(n) for n in writers)}): the region produced per "
                                    f"iteration must come from one block")
    position = _insert_position(ctx, producers, consumers, under, index)

    analyzer = Analyzer()
    outer = [s.node for s in ctx.lloc.path if isinstance(s.node, tir.For)] + [ctx.lloc.loop]
    for lp in outer:
        analyzer.bind(lp.loop_var, lp.min, lp.extent)
    required = _required_regions(ctx, needed, under, mine_r if reverse else mine_w, outer, analyzer)
    provided = moved.reads if reverse else moved.writes
    ranges = _solve_iter_ranges(ctx, moved, provided, required, analyzer)
    _verify_cover(ctx, provided, required, ranges, analyzer)
    if reverse:
        _verify_domain_covered(ctx, moved, ranges, outer, analyzer)
    subtree = _new_nest(ctx, ranges, preserve_unit_loops, analyzer)

    # Take the block out of its old place (with the loops it leaves empty), then insert the new nest.
    func = ctx.bloc.func
    body = replace_at(ctx.bloc.path, None, func.body)
    hit = find_first(body, lambda s: isinstance(s, tir.For) and s.loop_var is ctx.lloc.loop.loop_var)
    assert hit is not None
    target, path = hit
    items = list(target.body.seq) if isinstance(target.body, tir.SeqStmt) else [target.body]
    items.insert(position, subtree)
    new_loop = replace(target, body=tir.SeqStmt(tuple(items)))
    state.set_body(ctx.bloc.func_name, replace_at(path, new_loop, body))


def _insert_position(ctx: _Ctx, producers: list[tir.BlockRealize], consumers: list[tir.BlockRealize],
                     under: dict[int, tuple[tir.BlockRealize, Path]], index: int) -> int:
    """Where among the loop body's statements the block goes: after the last one holding a
    producer, before the first one holding a consumer (-1: the last such place, -2: the first)."""
    loop = ctx.lloc.loop
    n = len(loop.body.seq) if isinstance(loop.body, tir.SeqStmt) else 1
    last_producer, first_consumer = -1, n
    for r in producers:
        if id(r.block) in under:
            last_producer = max(last_producer, _subtree_index(loop, under[id(r.block)][1]))
    for r in consumers:
        if id(r.block) in under:
            first_consumer = min(first_consumer, _subtree_index(loop, under[id(r.block)][1]))
    if last_producer >= first_consumer:
        raise ScheduleError(f"no place under the loop {ctx.loop_name!r} comes after every producer and before "
                            f"every consumer of {ctx.name!r} (statement {last_producer} of the loop body holds "
                            f"a producer, statement {first_consumer} a consumer)")
    if index == -1:
        return first_consumer
    if index == -2:
        return last_producer + 1
    if isinstance(index, int) and last_producer + 1 <= index <= first_consumer:
        return index
    raise ScheduleError(f"index {index} is not a valid position under the loop {ctx.loop_name!r}: valid are -1, -2 "
                        f"and {last_producer + 1}..{first_consumer}")


def _required_regions(ctx: _Ctx, needed: list[tir.BlockRealize], under: dict[int, tuple[tir.BlockRealize, Path]],
                      buffers: list[tir.Buffer], outer: list[tir.For], analyzer: Analyzer) -> _Required:
    """Per buffer the block shares with the blocks under the loop: the union of what they read
    (compute_at) or write (reverse_compute_at) in one iteration of the loop."""
    per_buffer: dict[int, tuple[tir.Buffer, list[list[Bound]]]] = {}
    for r in needed:
        realize, path = under[id(r.block)]
        inner = loops_of(path)[1:]  # the loop itself stays fixed during one iteration
        regions = [x for x in (realize.block.writes if ctx.reverse else realize.block.reads)
                   if any(x.buffer is b for b in buffers)]
        for region, dims in zip(regions, block_regions(realize, regions, inner, analyzer)):
            full = [d if d is not None else (tir.IntImm(extent.dtype, 0), one_less(extent))
                    for d, extent in zip(dims, region.buffer.shape)]
            per_buffer.setdefault(id(region.buffer), (region.buffer, []))[1].append(full)
    # A loop of extent 1 around the target is a constant there (TVM's analyzer binds it so).
    units = {lp.loop_var: lp.min for lp in outer if as_const_int(lp.extent) == 1}
    out: _Required = {}
    for key, (buf, accesses) in per_buffer.items():
        dims = [union_bounds([a[d] for a in accesses], analyzer) for d in range(len(buf.shape))]
        if units:
            dims = [(analyzer.simplify(substitute(lo, units)), analyzer.simplify(substitute(hi, units)))
                    for lo, hi in dims]
        out[key] = (buf, dims)
    return out


def _affine_var(e: tir.PrimExpr, ivars: list[tir.Var]) -> tuple[tir.Var, tir.PrimExpr | None] | None:
    """``(v, c)`` when ``e`` is ``v + c`` (``c`` free of iterators; None for 0), None otherwise."""
    if isinstance(e, tir.Var) and e in ivars:
        return e, None
    if isinstance(e, (tir.Add, tir.Sub)):
        if isinstance(e.a, tir.Var) and e.a in ivars and not uses_vars(e.b, ivars):
            return e.a, (e.b if isinstance(e, tir.Add) else tir.Sub(tir.IntImm(e.b.dtype, 0), e.b))
        if isinstance(e, tir.Add) and isinstance(e.b, tir.Var) and e.b in ivars and not uses_vars(e.a, ivars):
            return e.b, e.a
    return None


def _solve_iter_ranges(ctx: _Ctx, block: tir.Block, provided: tuple[tir.BufferRegion, ...],
                       required: _Required, analyzer: Analyzer) -> list[Bound]:
    """The range of each of the block's iterators: the values whose accesses hit the required
    region (the whole domain for iterators the shared accesses do not pin down)."""
    ivars = [iv.var for iv in block.iter_vars]
    found: dict[tir.Var, list[Bound]] = {}
    for region in provided:
        entry = required.get(id(region.buffer))
        if entry is None:
            continue
        for dim, (r, need) in enumerate(zip(region.region, entry[1])):
            if not uses_vars(r.min, ivars) and not uses_vars(r.extent, ivars):
                continue
            hit = _affine_var(r.min, ivars) if as_const_int(r.extent) == 1 else None
            if hit is None:
                if ctx.reverse:
                    raise ScheduleError(f"cannot tell which iterations of {ctx.name!r} read only the part of "
                                        f"{region.buffer.name!r} produced under the loop {ctx.loop_name!r}: "
                                        f"its index {format_expr(r.min)} (dimension {dim}) is not an iterator "
                                        f"plus an offset")
                continue  # computing the iterator's whole domain stays correct
            var, offset = hit
            lo, hi = need
            if offset is not None:
                lo, hi = analyzer.simplify(tir.Sub(lo, offset)), analyzer.simplify(tir.Sub(hi, offset))
            found.setdefault(var, []).append((lo, hi))
    ranges = []
    for iv in block.iter_vars:
        dom = (iv.dom.min, analyzer.simplify(tir.Add(iv.dom.min, one_less(iv.dom.extent))))
        got = found.get(iv.var)
        ranges.append(union_bounds(got, analyzer) if got else dom)
    return ranges


def _verify_cover(ctx: _Ctx, provided: tuple[tir.BufferRegion, ...], required: _Required, ranges: list[Bound],
                  analyzer: Analyzer) -> None:
    """Check the solved ranges do what the primitive promises: the moved producer writes all its
    consumers read (compute_at); the moved consumer reads only what its producers wrote in
    the same iteration (reverse_compute_at)."""
    block = ctx.bloc.block
    var_ranges = {iv.var: r for iv, r in zip(block.iter_vars, ranges)}
    for region in provided:
        entry = required.get(id(region.buffer))
        if entry is None:
            continue
        buf, need = entry
        got: list[Bound] = []
        ok = True
        for r, (lo, hi) in zip(region.region, need):
            first = relax_bounds(r.min, var_ranges, analyzer)
            last = relax_bounds(analyzer.simplify(tir.Add(r.min, one_less(r.extent))), var_ranges, analyzer)
            if first is None or last is None:
                ok = False
                break
            got.append((first[0], last[1]))
            if ctx.reverse:
                ok = ok and analyzer.can_prove(tir.GE(first[0], lo)) and analyzer.can_prove(tir.LE(last[1], hi))
            else:
                ok = ok and analyzer.can_prove(tir.LE(first[0], lo)) and analyzer.can_prove(tir.GE(last[1], hi))
        if not ok:
            if ctx.reverse:
                raise ScheduleError(f"cannot prove that {ctx.name!r} reads only the region "
                                    f"{region_text(buf, need)} its producers write in one iteration of the loop "
                                    f"{ctx.loop_name!r}")
            raise ScheduleError(f"cannot prove that {ctx.name!r} computes the whole region {region_text(buf, need)} "
                                f"its consumers read in one iteration of the loop {ctx.loop_name!r}")


def _verify_domain_covered(ctx: _Ctx, block: tir.Block, ranges: list[Bound], outer: list[tir.For],
                           analyzer: Analyzer) -> None:
    """reverse_compute_at runs the consumer only for what each iteration produced: check that the
    iterations of the loops around it still reach its whole domain (a concat after a matmul writes
    rows the matmul never produces; a loop that runs no iteration reaches nothing)."""
    loop_ranges = {lp.loop_var: (lp.min, analyzer.simplify(tir.Add(lp.min, one_less(lp.extent)))) for lp in outer}
    for lp in outer:
        if as_const_int(lp.extent) == 0 and not all(as_const_int(iv.dom.extent) == 0 for iv in block.iter_vars):
            raise ScheduleError(f"the loop {lp.loop_var.name!r} runs no iteration, so {ctx.name!r} would never "
                                f"run under the loop {ctx.loop_name!r}")
    for iv, (lo, hi) in zip(block.iter_vars, ranges):
        first, last = relax_bounds(lo, loop_ranges, analyzer), relax_bounds(hi, loop_ranges, analyzer)
        dom_last = analyzer.simplify(tir.Add(iv.dom.min, one_less(iv.dom.extent)))
        if (first is None or last is None or not analyzer.can_prove(tir.LE(first[0], iv.dom.min))
                or not analyzer.can_prove(tir.GE(last[1], dom_last))):
            raise ScheduleError(f"under the loop {ctx.loop_name!r}, {ctx.name!r} would not cover its whole domain: "
                                f"{iv.var.name} takes {format_expr(lo)}..{format_expr(hi)} per iteration, "
                                f"but ranges over {format_expr(iv.dom.min)}..{format_expr(dom_last)}")


def _split_predicate_ok(realize: tir.BlockRealize, analyzer: Analyzer) -> bool:
    """True when the old predicate only keeps the bindings inside the iterators' domains (as
    split's ``T.where`` does), which the new nest enforces itself."""
    pred = realize.predicate
    if isinstance(pred, tir.IntImm) and pred.value:
        return True
    conjuncts: list[tir.PrimExpr] = []

    def flatten(e: tir.PrimExpr) -> None:
        if isinstance(e, tir.And):
            flatten(e.a)
            flatten(e.b)
        else:
            conjuncts.append(e)

    flatten(pred)
    for c in conjuncts:
        if not isinstance(c, tir.LT):
            return False
        limit = as_const_int(c.b)
        matched = False
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            end = as_const_int(analyzer.simplify(tir.Add(iv.dom.min, iv.dom.extent)))
            if limit is not None and end is not None and limit >= end and can_prove_equal(c.a, value):
                matched = True
                break
        if not matched:
            return False
    return True


def _new_nest(ctx: _Ctx, ranges: list[Bound], preserve_unit_loops: bool, analyzer: Analyzer) -> tir.Stmt:
    """The block under new loops ``ax0, ax1...`` over the solved ranges (a ``T.where`` keeps
    the bindings inside the iterators' domains where that cannot be proven)."""
    realize = ctx.bloc.realize
    block = realize.block
    if not _split_predicate_ok(realize, analyzer):
        raise ScheduleError(f"the block {ctx.name!r} has a T.where predicate that does not only bound its "
                            f"iterators to their domains; it would be lost when its loops are rebuilt")
    loop_vars: list[tir.Var] = []
    extents: list[tir.PrimExpr] = []
    values: list[tir.PrimExpr] = []
    conds: list[tir.PrimExpr] = []
    for iv, (lo, hi) in zip(block.iter_vars, ranges):
        dtype = iv.var.dtype
        lo, extent = as_dtype(lo, dtype), as_dtype(extent_of((lo, hi), analyzer), dtype)
        n = as_const_int(extent)
        if n is not None and n <= 0:
            raise ScheduleError(f"the iterator {iv.var.name!r} of {ctx.name!r} would have an empty range "
                                f"[{format_expr(lo)}, {format_expr(hi)}] under the loop {ctx.loop_name!r}")
        if preserve_unit_loops or n != 1:
            var = tir.Var(f"ax{len(loop_vars)}", dtype)
            loop_vars.append(var)
            extents.append(extent)
            value: tir.PrimExpr = var if as_const_int(lo) == 0 else tir.Add(lo, var)
            bound = analyzer.const_int_bound(extent) if n is None else (n, n)
            if bound is not None:  # a symbolic extent: its largest value still bounds the variable
                analyzer.bind(var, tir.IntImm(var.dtype, 0), tir.IntImm(var.dtype, bound[1]))
        else:
            value = lo
        values.append(value)
        # Keep the binding inside the iterator's domain when the required region pokes out of it.
        dom_lo = iv.dom.min
        dom_end = analyzer.simplify(tir.Add(iv.dom.min, iv.dom.extent))
        if not analyzer.can_prove(tir.GE(value, dom_lo)):
            conds.append(tir.GE(value, dom_lo))
        if not analyzer.can_prove(tir.LT(value, dom_end)):
            conds.append(tir.LT(value, dom_end))
    pred: tir.PrimExpr = tir.IntImm("bool", 1)
    for c in conds:
        pred = c if isinstance(pred, tir.IntImm) else tir.And(pred, c)
    stmt: tir.Stmt = tir.BlockRealize(tuple(values), pred, block)
    for var, extent in reversed(list(zip(loop_vars, extents))):
        stmt = tir.For(var, tir.IntImm(var.dtype, 0), extent, tir.ForKind.SERIAL, stmt)
    return stmt
