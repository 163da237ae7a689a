"""Loop primitives: split, fuse, reorder, the loop kinds (parallel, vectorize, unroll) and
annotations on loops and blocks."""
from __future__ import annotations

from typing import Any, Sequence

from ...ir import tir
from ...ir.arith import as_const_int, as_dtype, simplify
from ...ir.dtype import parse_dtype
from ...ir.node import Map, replace
from ...ir.stmt_functor import StmtExprMutator, substitute, vars_of
from .state import BlockRV, LoopLoc, LoopRV, ScheduleError, ScheduleState
from .tree import child_realizes, find_first, replace_at

__all__ = ["split", "fuse", "reorder", "set_kind", "annotate"]


def _const(value: int, dtype: str) -> tir.IntImm:
    return tir.IntImm(dtype, value)


def _check_starts_at_zero(loc: LoopLoc, what: str) -> None:
    """Split and fuse rewrite ``i`` as ``i_0 * f + i_1``: the loop must count from 0."""
    if as_const_int(loc.loop.min) != 0:
        raise ScheduleError(f"{what} {loc.loop.loop_var.name!r} starts at {loc.loop.min}, not 0")


def _with_predicate(body: tir.Stmt, condition: tir.PrimExpr) -> tir.Stmt:
    """``body`` with ``condition`` and-ed into the predicate of the blocks directly under it (a
    body without blocks is wrapped in an ``if``)."""
    realizes = [r for r, _ in child_realizes(tir.SeqStmt((body,)))]
    if not realizes:
        return tir.IfThenElse(condition, body)
    for realize in realizes:
        old = realize.predicate
        always = isinstance(old, tir.IntImm) and bool(old.value)
        new = replace(realize, predicate=condition if always else tir.And(old, condition))
        hit = find_first(body, lambda s, r=realize: s is r)
        assert hit is not None  # untouched siblings keep their identity
        body = replace_at(hit[1], new, body)
    return body


def _fold(e: tir.PrimExpr) -> tir.PrimExpr:
    """``e`` with unit-loop leftovers folded (``0 * 10 + j`` is ``j``, ``x // 1`` is ``x``), and
    nothing else reordered, so bindings print as TVM prints them."""
    if not isinstance(e, (tir.Add, tir.Sub, tir.Mul, tir.FloorDiv, tir.FloorMod)):
        return e
    a, b = _fold(e.a), _fold(e.b)
    ca, cb = as_const_int(a), as_const_int(b)
    if ca is not None and cb is not None:
        return simplify(type(e)(a, b))
    if isinstance(e, tir.Add):
        return b if ca == 0 else a if cb == 0 else tir.Add(a, b)
    if isinstance(e, tir.Sub):
        return a if cb == 0 else tir.Sub(a, b)
    if isinstance(e, tir.Mul):
        if ca == 0 or cb == 0:
            return tir.IntImm(e.dtype, 0)
        return b if ca == 1 else a if cb == 1 else tir.Mul(a, b)
    if cb == 1:
        return a if isinstance(e, tir.FloorDiv) else tir.IntImm(e.dtype, 0)
    return type(e)(a, b)


class _SimplifyBindings(StmtExprMutator):
    """Fold the constant arithmetic a substitution leaves in block bindings and predicates."""

    def visit_block_realize_(self, realize: tir.BlockRealize) -> tir.Stmt:
        block = self.visit_stmt(realize.block)
        values = tuple(_fold(v) for v in realize.iter_values)
        return replace(realize, iter_values=values, predicate=_fold(realize.predicate), block=block)


def _substitute_loops(body: tir.Stmt, vmap: dict[tir.Var, tir.PrimExpr]) -> tir.Stmt:
    """``body`` with loop variables replaced, the affected bindings simplified."""
    return _SimplifyBindings().visit_stmt(substitute(body, vmap))


def split(state: ScheduleState, rv: LoopRV, factors: Sequence[Any], preserve_unit_iters: bool,
          disable_predication: bool) -> list[LoopRV]:
    """Split a loop into ``len(factors)`` nested loops (outermost first)."""
    loc = state.locate_loop(rv)
    loop = loc.loop
    _check_starts_at_zero(loc, "loop")
    if len(factors) < 2:
        raise ScheduleError(f"needs at least two factors, got {len(factors)}")
    dtype = loop.loop_var.dtype
    holes = [i for i, f in enumerate(factors) if f is None]
    if len(holes) > 1:
        raise ScheduleError("at most one factor may be None (the one inferred from the loop's extent)")
    known: list[int | None] = []
    for f in factors:
        if f is None:
            known.append(None)
            continue
        value = as_const_int(f) if isinstance(f, tir.PrimExpr) else f
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ScheduleError(f"factors must be positive integers or None, got {f!r}")
        known.append(value)
    product = 1
    for f in known:
        product *= f or 1
    extent = as_const_int(loop.extent)
    extents: list[tir.PrimExpr] = []
    if holes:
        if extent is None:
            outer = simplify(tir.FloorDiv(tir.Add(loop.extent, _const(product - 1, dtype)), _const(product, dtype)))
        else:
            outer = _const(-(-extent // product), dtype)
        extents = [outer if f is None else _const(f, dtype) for f in known]
    else:
        if extent is None:
            raise ScheduleError(f"the loop {loop.loop_var.name!r} has the symbolic extent {loop.extent}: "
                                f"give one factor as None")
        if product < extent:
            raise ScheduleError(f"the factors {list(factors)} multiply to {product}, less than the extent {extent} "
                                f"of loop {loop.loop_var.name!r}")
        extents = [_const(f, dtype) for f in known]  # type: ignore[arg-type]
    name = loop.loop_var.name
    new_vars = [tir.Var(f"{name}_{i}", dtype) for i in range(len(extents))]
    # i = ((i_0 * e1 + i_1) * e2 + i_2) ...; unit loops contribute 0 unless preserved.
    value: tir.PrimExpr | None = None
    for var, ext in zip(new_vars, extents):
        term: tir.PrimExpr = var
        if not preserve_unit_iters and as_const_int(ext) == 1:
            term = _const(0, dtype)
        value = term if value is None else tir.Add(tir.Mul(value, ext), term)
    value = simplify(value)
    body = _substitute_loops(loop.body, {loop.loop_var: value})
    exact = extent is not None and product == extent and not holes or (
        holes and extent is not None and extent % product == 0)
    if not exact and not disable_predication:
        body = _with_predicate(body, tir.LT(value, loop.extent))
    for var, ext in reversed(list(zip(new_vars, extents))):
        body = tir.For(var, _const(0, dtype), ext, tir.ForKind.SERIAL, body)
    state.replace_stmt(loc.func_name, loc.path, body)
    return [state.loop_rv(loc.func_name, v) for v in new_vars]


def _nest(state: ScheduleState, rvs: Sequence[LoopRV], what: str) -> list[LoopLoc]:
    """The located loops, checking each is given once."""
    if not rvs:
        raise ScheduleError(f"{what} needs at least one loop")
    locs = [state.locate_loop(rv) for rv in rvs]
    seen: set[int] = set()
    for loc in locs:
        if id(loc.loop) in seen:
            raise ScheduleError(f"the loop {loc.loop.loop_var.name!r} is given twice")
        seen.add(id(loc.loop))
    if len({rv.func_name for rv in rvs}) > 1:
        raise ScheduleError("the loops belong to different functions")
    return locs


def fuse(state: ScheduleState, rvs: Sequence[LoopRV], preserve_unit_iters: bool) -> LoopRV:
    """Fuse consecutive, perfectly nested loops into one."""
    locs = _nest(state, rvs, "fuse")
    for outer, inner in zip(locs, locs[1:]):
        if outer.loop.body is not inner.loop:
            raise ScheduleError(f"the loops must be perfectly nested, outermost first: {inner.loop.loop_var.name!r} "
                                f"is not the only statement in the body of {outer.loop.loop_var.name!r}")
    for loc in locs:
        _check_starts_at_zero(loc, "loop")
    loops = [loc.loop for loc in locs]
    # As TVM: the fused variable takes the widest loop dtype, and narrower loop variables are
    # recovered from it with a cast, so no arithmetic mixes int32 and int64.
    dtype = max((lp.loop_var.dtype for lp in loops), key=lambda d: parse_dtype(d).bits)
    fused = tir.Var("_".join(lp.loop_var.name for lp in loops) + "_fused", dtype)
    extents = [as_dtype(lp.extent, dtype) for lp in loops]
    total: tir.PrimExpr = extents[0]
    for extent in extents[1:]:
        total = tir.Mul(total, extent)
    total = simplify(total)
    # Innermost: fused % e_n; next: fused // e_n % e_{n-1}; outermost: fused // (e_2 ... e_n).
    # Loops of extent 1 outside the outermost other one leave its quotient below its extent: no
    # modulo there (as TVM's bound-aware simplifier gives), so every block under the fused loop
    # binds it alike and region compaction can see their accesses share a base.
    outermost = next((i for i, e in enumerate(extents) if as_const_int(e) != 1), 0)
    vmap: dict[tir.Var, tir.PrimExpr] = {}
    stride: tir.PrimExpr = _const(1, dtype)
    for i in range(len(loops) - 1, -1, -1):
        lp, extent = loops[i], extents[i]
        if as_const_int(lp.extent) == 1 and not preserve_unit_iters:
            vmap[lp.loop_var] = _const(0, lp.loop_var.dtype)
            continue
        quotient = fused if as_const_int(stride) == 1 else tir.FloorDiv(fused, stride)
        vmap[lp.loop_var] = as_dtype(simplify(quotient if i <= outermost else tir.FloorMod(quotient, extent)),
                                      lp.loop_var.dtype)
        stride = simplify(tir.Mul(stride, extent))
    body = _substitute_loops(loops[-1].body, vmap)
    new = tir.For(fused, _const(0, dtype), total, tir.ForKind.SERIAL, body)
    state.replace_stmt(locs[0].func_name, locs[0].path, new)
    return state.loop_rv(locs[0].func_name, fused)


def reorder(state: ScheduleState, rvs: Sequence[LoopRV]) -> None:
    """Reorder loops of one nest: the given loops take each other's places, in the given order."""
    locs = _nest(state, rvs, "reorder")
    if len(locs) == 1:
        return
    by_depth = sorted(locs, key=lambda loc: len(loc.path))
    top, bottom = by_depth[0], by_depth[-1]
    chain: list[tir.For] = [top.loop]
    while chain[-1] is not bottom.loop:
        body = chain[-1].body
        if not isinstance(body, tir.For):
            raise ScheduleError(f"the loops are not one nest: {chain[-1].loop_var.name!r} holds "
                                f"{'several statements' if isinstance(body, tir.SeqStmt) else 'a ' + type(body).__name__} "
                                f"between the given loops")
        chain.append(body)
    given = {id(loc.loop) for loc in locs}
    if any(id(lp) not in {id(c) for c in chain} for lp in (loc.loop for loc in locs)):
        raise ScheduleError("the loops are not one nest (some are not above the others)")
    slots = [i for i, lp in enumerate(chain) if id(lp) in given]
    order = [loc.loop for loc in locs]
    new_chain = list(chain)
    for slot, lp in zip(slots, order):
        new_chain[slot] = lp
    # A loop whose bounds use another loop's variable must stay inside that loop.
    for i, lp in enumerate(new_chain):
        inner_vars = {id(c.loop_var) for c in new_chain[i:]}
        for bound in (lp.min, lp.extent):
            used = vars_of(bound)
            if any(id(v) in inner_vars for v in used):
                raise ScheduleError(f"the bounds of loop {lp.loop_var.name!r} use a loop that would be inside it")
    body = chain[-1].body
    for lp in reversed(new_chain):
        body = replace(lp, body=body)
    state.replace_stmt(top.func_name, top.path, body)


_ITER_NAMES = {tir.IterType.CommReduce: "reduction", tir.IterType.Ordered: "ordered",
               tir.IterType.Opaque: "opaque", tir.IterType.ThreadIndex: "thread"}


def set_kind(state: ScheduleState, rv: LoopRV, kind: str) -> None:
    """Make a loop parallel, vectorized or unrolled (a parallel or vector loop may only carry
    data-parallel block iterators: iterations of a reduction depend on each other)."""
    loc = state.locate_loop(rv)
    loop = loc.loop
    if kind in (tir.ForKind.PARALLEL, tir.ForKind.VECTORIZED):
        for realize, _ in child_realizes(loop):
            for iv, value in zip(realize.block.iter_vars, realize.iter_values):
                if iv.iter_type != tir.IterType.DataPar and any(v is loop.loop_var for v in vars_of(value)):
                    raise ScheduleError(
                        f"the loop {loop.loop_var.name!r} is bound to the {_ITER_NAMES.get(iv.iter_type, 'non-spatial')} "
                        f"iterator {iv.var.name!r} of block {realize.block.name_hint!r}: only loops over data-parallel "
                        f"iterators can be {'parallel' if kind == tir.ForKind.PARALLEL else 'vectorized'}")
    state.replace_stmt(loc.func_name, loc.path, replace(loop, kind=kind))


def annotate(state: ScheduleState, rv: BlockRV | LoopRV, key: str, value: Any, remove: bool = False) -> None:
    """Set (or remove) the annotation ``key`` of a block or a loop."""
    if not isinstance(key, str) or not key:
        raise ScheduleError(f"the annotation key must be a non-empty string, got {key!r}")
    if isinstance(rv, BlockRV):
        bloc = state.locate_block(rv, "block_or_loop")
        block = bloc.block
        anns = _updated(block.annotations, key, value, remove, f"block {block.name_hint!r}")
        state.replace_stmt(bloc.func_name, bloc.path, replace(bloc.realize, block=replace(block, annotations=anns)))
        return
    loc = state.locate_loop(rv, "block_or_loop")
    anns = _updated(loc.loop.annotations, key, value, remove, f"loop {loc.loop.loop_var.name!r}")
    state.replace_stmt(loc.func_name, loc.path, replace(loc.loop, annotations=anns))


def _updated(anns: Map, key: str, value: Any, remove: bool, where: str) -> Map:
    """``anns`` with ``key`` set to ``value`` (or removed)."""
    if remove:
        if key not in anns:
            raise ScheduleError(f"{where} has no annotation {key!r}")
        return anns.without(key)
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, dict):
        value = Map(value)
    if not isinstance(value, (bool, int, float, str, tuple, Map, tir.PrimExpr)):
        raise ScheduleError(f"cannot annotate {where} with a {type(value).__name__} (use a number, string, "
                            f"list, dict or PrimExpr)")
    return anns.set(key, value)
