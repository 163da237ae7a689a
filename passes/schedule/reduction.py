"""decompose_reduction: move a reduction block's ``T.init()`` into a block of its own, placed just
before a loop above the block.

As TVM does, the init block ``<name>_init`` takes the block's data-parallel iterators (same names,
same bindings) and is nested in copies (``<loop>_init``) of the loops between ``loop`` and the
block that those bindings use; the reduction block becomes ``<name>_update``, without an init and
reading what it writes. The BlockRV passed in follows the reduction block to its new name (other
references to it, made earlier, then name a block that no longer exists)."""
from __future__ import annotations

from ...ir import tir
from ...ir.node import replace
from ...ir.stmt_functor import post_order_visit, substitute
from .state import BlockRV, LoopRV, ScheduleError, ScheduleState

__all__ = ["decompose_reduction"]


def _uses(expr: tir.PrimExpr, var: tir.Var) -> bool:
    """True when ``expr`` mentions ``var``."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if node is var:
            found = True

    post_order_visit(expr, visit)
    return found


def _conjuncts(pred: tir.PrimExpr) -> list[tir.PrimExpr]:
    """``a and b and c`` as ``[a, b, c]``."""
    if isinstance(pred, tir.And):
        return _conjuncts(pred.a) + _conjuncts(pred.b)
    return [pred]


def _init_predicate(pred: tir.PrimExpr, discarded: list[tir.Var]) -> tir.PrimExpr:
    """The conditions of ``pred`` that do not involve the discarded loops, last one first (as
    TVM's RemakePredicate builds them)."""
    if isinstance(pred, tir.IntImm) and pred.value:
        return pred
    kept = [c for c in reversed(_conjuncts(pred)) if not any(_uses(c, v) for v in discarded)]
    if not kept:
        return tir.IntImm("bool", 1)
    out = kept[0]
    for c in kept[1:]:
        out = tir.And(out, c)
    return out


def decompose_reduction(state: ScheduleState, block: BlockRV, loop: LoopRV) -> BlockRV:
    """Split the init of a reduction block into its own block before ``loop``; returns its BlockRV."""
    loc = state.locate_block(block)
    lloc = state.locate_loop(loop)
    blk, realize = loc.block, loc.realize
    loops = loc.loops
    name = blk.name_hint
    if lloc.func_name != loc.func_name or all(lp is not lloc.loop for lp in loops):
        raise ScheduleError(f"the loop {lloc.loop.loop_var.name!r} must be an ancestor of the block {name!r} "
                            f"(a loop above it in its scope)")
    if blk.init is None:
        raise ScheduleError(f"the block {name!r} is not a reduction block: it has no init statement (T.init())")
    for iv in blk.iter_vars:
        if iv.iter_type not in (tir.IterType.DataPar, tir.IterType.CommReduce):
            raise ScheduleError(f"the block {name!r} is not a reduction block: its iterator {iv.var.name!r} is "
                                f"neither spatial nor reduction")
    target = next(i for i, lp in enumerate(loops) if lp is lloc.loop)
    # Loops above `loop` must not drive a reduction iterator: the init would then run inside the
    # reduction and reset partial results.
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type != tir.IterType.CommReduce:
            continue
        for lp in loops[:target]:
            if _uses(value, lp.loop_var):
                raise ScheduleError(f"the loop {lloc.loop.loop_var.name!r} must be above every loop bound to a "
                                    f"reduction iterator of {name!r}, but {lp.loop_var.name!r} (above it) drives "
                                    f"{iv.var.name!r}")

    # The init block: the data-parallel iterators (new variables, same names) and their bindings.
    var_map: dict[tir.Var, tir.PrimExpr] = {}
    init_iters: list[tir.IterVar] = []
    init_values: list[tir.PrimExpr] = []
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type != tir.IterType.DataPar:
            continue
        new_var = tir.Var(iv.var.name, iv.var.dtype)
        var_map[iv.var] = new_var
        init_iters.append(tir.IterVar(iv.dom, new_var, iv.iter_type, iv.thread_tag))
        init_values.append(value)
    writes = tuple(tir.BufferRegion(w.buffer, tuple(tir.Range(substitute(r.min, var_map), substitute(r.extent, var_map))
                                                    for r in w.region)) for w in blk.writes)
    init_name = state.fresh_block_name(loc.func_name, f"{name}_init")
    update_name = state.fresh_block_name(loc.func_name, f"{name}_update")
    init_block = tir.Block(init_name, tuple(init_iters), (), writes, substitute(blk.init, var_map),
                           annotations=blk.annotations)

    # Loops from `loop` down to the block: those the init bindings use are copied, innermost first.
    chosen: list[tir.For] = []
    discarded: list[tir.Var] = []
    for lp in reversed(loops[target:]):
        if any(_uses(v, lp.loop_var) for v in init_values):
            chosen.append(lp)
        else:
            discarded.append(lp.loop_var)
    predicate = _init_predicate(realize.predicate, discarded)
    body: tir.Stmt = tir.BlockRealize(tuple(init_values), predicate, init_block)
    loop_map: dict[tir.Var, tir.PrimExpr] = {}
    for lp in chosen:
        new_var = tir.Var(f"{lp.loop_var.name}_init", lp.loop_var.dtype)
        loop_map[lp.loop_var] = new_var
        binding = lp.thread_binding if lp.kind == tir.ForKind.THREAD_BINDING else None
        body = tir.For(new_var, lp.min, lp.extent, lp.kind, body, thread_binding=binding)
    init_nest = substitute(body, loop_map)

    # The update block: no init, and it now reads what it writes (first, as TVM lists them).
    read_bufs = {id(r.buffer) for r in blk.reads}
    reads = tuple(w for w in blk.writes if id(w.buffer) not in read_bufs) + blk.reads
    update = replace(blk, name_hint=update_name, init=None, reads=reads)
    state.replace_stmt(loc.func_name, loc.path, replace(realize, block=update))
    lloc = state.locate_loop(loop)
    state.replace_stmt(lloc.func_name, lloc.path, tir.SeqStmt((init_nest, lloc.loop)))  # type: ignore[arg-type]
    block.block_name = update_name  # the reference follows the reduction block, as TVM's sref does
    return state.block_rv(loc.func_name, init_name)
