"""Empty reductions: a reduction block's ``T.init()`` runs even when its reduction loops run
zero times. Every executor of block-level TIR (LowerBlocks before codegen, the TIR interpreter,
TE evaluation) applies ``guard_empty_reductions`` first, so they agree on ``K = 0``."""
from __future__ import annotations

from . import tir
from .arith import as_const_int, as_dtype, is_const_int
from .node import replace
from .stmt_functor import post_order_visit, substitute

__all__ = ["guard_empty_reductions"]


def guard_empty_reductions(stmt: tir.Stmt) -> tir.Stmt:
    """``stmt`` (block-level TIR) where each reduction block whose reduction loops may be empty also
    runs its ``T.init()`` when they are: before the outermost reduction loop comes
    ``if <a reduction extent> <= 0:`` around a copy of the loops down to the block, without the
    reduction loops, whose block (``<name>_init``) runs only the init (TVM's decompose_reduction
    writes the init nest alike). Blocks whose reduction loops all have positive constant extents
    are left alone, so their code stays as it is."""
    return _EmptyReductionGuard().visit(stmt)


class _EmptyReductionGuard:
    """Walks the statements keeping the path from the nearest enclosing block (loops and the other
    statements around), and puts the init nests before the reduction loops they belong to."""

    def __init__(self) -> None:
        self.path: list[tuple[tir.Stmt, bool]] = []  # (statement, inside its else branch)
        self.pending: dict[int, list[tir.Stmt]] = {}  # id(outermost reduction loop) -> init nests

    def visit(self, s: tir.Stmt) -> tir.Stmt:
        """``s`` with the init nests of the reductions inside it in place."""
        t = type(s)
        if t is tir.SeqStmt:
            seq = [self.visit(x) for x in s.seq]
            return s if all(a is b for a, b in zip(seq, s.seq)) else tir.seq(seq)
        if t is tir.BlockRealize:
            return self.visit_realize(s)
        if t is tir.IfThenElse:
            self.path.append((s, False))
            then = self.visit(s.then_case)
            self.path[-1] = (s, True)
            other = self.visit(s.else_case) if s.else_case is not None else None
            self.path.pop()
            return s if then is s.then_case and other is s.else_case else replace(s, then_case=then, else_case=other)
        if t in (tir.For, tir.LetStmt, tir.AttrStmt, tir.AssertStmt, tir.DeclBuffer, tir.Allocate):
            self.path.append((s, False))
            body = self.visit(s.body)
            self.path.pop()
            new = s if body is s.body else replace(s, body=body)
            inits = self.pending.pop(id(s), None) if t is tir.For else None
            return new if not inits else tir.seq([*inits, new])
        return s

    def visit_realize(self, realize: tir.BlockRealize) -> tir.Stmt:
        """Note the block's init nest (when it needs one); its body is a scope of its own."""
        self.note_init(realize)
        block = realize.block
        outer, self.path = self.path, []
        body = self.visit(block.body)
        self.path = outer
        return realize if body is block.body else replace(realize, block=replace(block, body=body))

    def note_init(self, realize: tir.BlockRealize) -> None:
        """Queue the init nest of a reduction block whose reduction loops may be empty."""
        block = realize.block
        if block.init is None or block.alloc_buffers:
            return
        used: set[tir.Var] = set()
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type == tir.IterType.CommReduce:
                post_order_visit(value, lambda n: used.add(n) if isinstance(n, tir.Var) else None)
        loops = [s for s, _ in self.path if type(s) is tir.For]
        red = [lp for lp in loops if lp.loop_var in used]
        if not red or len(red) != len(used):
            return  # no reduction loop, or iterators bound to something else: left as it is
        extents = [as_const_int(lp.extent) for lp in red]
        if all(n is not None and n > 0 for n in extents):
            return  # never empty
        start = next(i for i, (s, _) in enumerate(self.path) if s is red[0])
        if any(type(s) in (tir.DeclBuffer, tir.Allocate) for s, _ in self.path[start:]):
            return  # a copy would allocate again
        red_vars = {lp.loop_var for lp in red}

        def free_of_reduction(e: tir.PrimExpr) -> bool:
            found: list[tir.Var] = []
            post_order_visit(e, lambda n: found.append(n) if isinstance(n, tir.Var) and n in red_vars else None)
            return not found

        conjuncts = [c for c in _conjuncts(realize.predicate) if free_of_reduction(c)]
        pred = conjuncts[0] if conjuncts else tir.IntImm("bool", 1)
        for c in conjuncts[1:]:
            pred = tir.And(pred, c)
        init_block = replace(block, name_hint=f"{block.name_hint}_init", reads=(), body=block.init, init=None)
        nest: tir.Stmt = tir.BlockRealize(realize.iter_values, pred, init_block)
        empty: tir.PrimExpr | None = None
        if not any(n is not None and n <= 0 for n in extents):
            for lp in red:
                test = tir.LE(lp.extent, tir.IntImm(lp.extent.dtype, 0))
                empty = test if empty is None else tir.Or(empty, test)
        inner_vars = {s.loop_var if type(s) is tir.For else s.var for s, _ in self.path[start + 1:]
                      if type(s) in (tir.For, tir.LetStmt)}
        guard_inside = empty is not None and any(v in inner_vars for v in _vars(empty))
        if guard_inside:
            nest = tir.IfThenElse(empty, nest)
        for s, in_else in reversed(self.path[start:]):
            if type(s) is tir.For and s.loop_var in red_vars:
                continue  # the reduction loops go: their variables take their first value
            if type(s) is tir.IfThenElse:
                nest = tir.IfThenElse(tir.Not(s.condition) if in_else else s.condition, nest)
            else:
                nest = replace(s, body=nest)
        if empty is not None and not guard_inside:
            nest = tir.IfThenElse(empty, nest)
        nest = substitute(nest, {lp.loop_var: as_dtype(lp.min, lp.loop_var.dtype) for lp in red})
        self.pending.setdefault(id(red[0]), []).append(nest)


def _conjuncts(e: tir.PrimExpr) -> list[tir.PrimExpr]:
    """The operands of a chain of ``and``s."""
    if isinstance(e, tir.And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [] if is_const_int(e, 1) else [e]


def _vars(e: tir.PrimExpr) -> set[tir.Var]:
    """The variables ``e`` reads."""
    found: set[tir.Var] = set()
    post_order_visit(e, lambda n: found.add(n) if isinstance(n, tir.Var) else None)
    return found
