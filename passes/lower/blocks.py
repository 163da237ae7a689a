"""LowerBlocks (TVM's LowerInitBlock + ConvertBlocksToOpaque + LowerMatchBuffer +
LowerOpaqueBlock in one pass): every ``BlockRealize`` becomes the plain statements it stands for.

- The block's iterators are replaced by their bindings (``iter_values``).
- ``T.init()`` becomes ``if v_k == k_min [and ...]: init`` before the body, one condition per
  reduction (``CommReduce``) iterator, as TVM's LowerInitBlock writes it. That never runs when a
  reduction loop is empty (``K = 0``), so a block whose reduction extents are not positive
  constants also gets its init run on its own in that case (``guard_empty_reductions``): unlike
  TVM, a matmul over ``K = 0`` gives zeros and a max over an empty axis the reducer's identity.
- ``alloc_buffers`` become allocating ``T.decl_buffer`` statements around the block's body (the
  implicit root block's ones at the top of the function), in declaration order.
- ``T.match_buffer(A[region])`` views are replaced by accesses of ``A`` itself (the view's
  dimensions are the region's trailing ones; the leading ones take the region's minimum).
- ``T.where(p)`` becomes ``if p:`` around the whole block.
- ``T.reads``/``T.writes`` and block annotations are dropped, except ``"tvmlite.reassoc"`` (float
  arithmetic of the block may be reassociated): it becomes ``T.attr(name, "tvmlite.reassoc", 1)``
  around the block's statements, which the LLVM backend reads.
- Then (TVM's PlanAndUpdateBufferAllocationLocation + CompactBufferAllocation, see ``compact.py``)
  every block allocation moves into the innermost loop around all of its accesses and shrinks to
  the region they cover there: a cache filled inside a ``T.parallel`` loop becomes private to each
  iteration, a ``"local"`` accumulator tile becomes a small array LLVM keeps in registers.
"""
from __future__ import annotations

from ...ir import tir
from ...ir.arith import as_const_int, as_dtype, is_const_int
from ...ir.functor import deep_recursion
from ...ir.module import IRModule
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprMutator, post_order_visit, substitute
from ..infra import PassContext, PrimFuncPass, register_pass
from .compact import compact_allocations

REASSOC_KEY = "tvmlite.reassoc"  # the same key as backend.llvm_codegen.REASSOC_KEY

__all__ = ["LowerBlocks", "lower_blocks", "init_condition", "inline_match_buffers", "guard_empty_reductions"]


def init_condition(block: tir.Block) -> tir.PrimExpr | None:
    """``v_k == k_min and ...`` over the block's reduction iterators (None when it has none)."""
    cond: tir.PrimExpr | None = None
    for iv in block.iter_vars:
        if iv.iter_type != tir.IterType.CommReduce:
            continue
        lo = iv.dom.min if iv.dom is not None else tir.IntImm(iv.var.dtype, 0)
        eq = tir.EQ(iv.var, as_dtype(lo, iv.var.dtype))
        cond = eq if cond is None else tir.And(cond, eq)
    return cond


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


def inline_match_buffers(stmt: tir.Stmt, matches: tuple[tir.MatchBufferRegion, ...]) -> tir.Stmt:
    """``stmt`` with the accesses of the ``T.match_buffer`` views in ``matches`` made accesses of
    the buffers they view."""
    return _MatchBufferInliner(matches).visit_stmt(stmt)


class _MatchBufferInliner(StmtExprMutator):
    """Accesses of ``T.match_buffer`` views become accesses of the buffers they view."""

    def __init__(self, matches: tuple[tir.MatchBufferRegion, ...]) -> None:
        self.matches = {m.buffer: m.source for m in matches}

    def source_indices(self, source: tir.BufferRegion, indices: tuple) -> tuple[tir.PrimExpr, ...]:
        """The view's indices as indices of the viewed buffer: its dimensions are the region's
        trailing ones (offset by their minimum); the leading ones are at their minimum."""
        region = source.region
        lead = len(region) - len(indices)
        if lead < 0:
            raise ValueError(f"a match_buffer of rank {len(indices)} views a region of rank {len(region)}")
        out = [r.min for r in region[:lead]]
        for r, idx in zip(region[lead:], indices):
            out.append(idx if is_const_int(r.min, 0) else tir.Add(as_dtype(r.min, idx.dtype), idx))
        return tuple(out)

    def visit_buffer_load_(self, load: tir.BufferLoad) -> tir.PrimExpr:
        """A load of a view reads the viewed buffer."""
        new = super().visit_buffer_load_(load)
        source = self.matches.get(new.buffer)
        if source is None:
            return new
        return tir.BufferLoad(source.buffer, self.source_indices(source, new.indices))

    def visit_buffer_store_(self, store: tir.BufferStore) -> tir.Stmt:
        """A store into a view writes the viewed buffer."""
        new = super().visit_buffer_store_(store)
        source = self.matches.get(new.buffer)
        if source is None:
            return new
        return tir.BufferStore(source.buffer, new.value, self.source_indices(source, new.indices))


class _BlockLowerer(StmtExprMutator):
    """Replaces each BlockRealize (inner ones first) by plain statements; records the allocations
    and, per buffer, the loop variables that drive a reduction of a block accessing it."""

    def __init__(self) -> None:
        self.allocated: set[tir.Buffer] = set()
        self.pinned: dict[tir.Buffer, set[tir.Var]] = {}

    def _pin(self, realize: tir.BlockRealize) -> None:
        """The loops bound to reduction iterators must keep the buffers the block touches alive."""
        block = realize.block
        loops: set[tir.Var] = set()
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type == tir.IterType.CommReduce:
                post_order_visit(value, lambda n: loops.add(n) if isinstance(n, tir.Var) else None)
        if not loops:
            return

        def touch(n: object) -> None:
            """Pin an accessed buffer."""
            if isinstance(n, (tir.BufferLoad, tir.BufferStore)):
                self.pinned.setdefault(n.buffer, set()).update(loops)

        for part in (block.body, block.init):
            if part is not None:
                post_order_visit(part, touch)

    def visit_block_realize_(self, realize: tir.BlockRealize) -> tir.Stmt:
        """One block instance as loops-level statements."""
        block = realize.block
        self._pin(realize)
        self.allocated.update(block.alloc_buffers)
        body = self.visit_stmt(block.body)
        if block.init is not None:
            init = self.visit_stmt(block.init)
            cond = init_condition(block)
            body = tir.seq([init if cond is None else tir.IfThenElse(cond, init), body])
        if block.match_buffers:
            body = inline_match_buffers(body, block.match_buffers)
        for buf in reversed(block.alloc_buffers):
            body = tir.DeclBuffer(buf, body)  # data not defined before: the declaration allocates
        vmap = {iv.var: as_dtype(v, iv.var.dtype) for iv, v in zip(block.iter_vars, realize.iter_values)}
        if vmap:
            body = substitute(body, vmap)
            for loops in self.pinned.values():  # pins by inner blocks name this block's iterators
                for var in [v for v in loops if v in vmap]:
                    post_order_visit(vmap[var], lambda n: loops.add(n) if isinstance(n, tir.Var) else None)
        if not is_const_int(realize.predicate, 1):
            body = tir.IfThenElse(realize.predicate, body)
        if REASSOC_KEY in block.annotations:  # the one block annotation codegen uses
            body = tir.AttrStmt(tir.StringImm(block.name_hint), REASSOC_KEY,
                                _annotation_value(block.annotations[REASSOC_KEY]), body)
        return body


def _annotation_value(value: object) -> tir.PrimExpr:
    """A block annotation's value as an AttrStmt value."""
    if isinstance(value, tir.PrimExpr):
        return value
    return tir.IntImm("int32", int(bool(value)) if not isinstance(value, int) else value)


def lower_blocks(func: tir.PrimFunc) -> tir.PrimFunc:
    """``func`` with its blocks lowered to plain statements."""
    lowerer = _BlockLowerer()
    with deep_recursion():  # one nested declaration per block allocation: as deep as the program is long
        body = lowerer.visit_stmt(guard_empty_reductions(func.body))
        body = compact_allocations(body, lowerer.allocated, lowerer.pinned)
    return func if body is func.body else replace(func, body=body)


class LowerBlocks(PrimFuncPass):
    """Blocks to plain loops: iterators substituted, init and predicates as ``if``, block
    allocations as ``T.decl_buffer``."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        new = lower_blocks(func)
        if new is not func:
            self.stats["lowered_functions"] += 1
        return new


register_pass("LowerBlocks", LowerBlocks)
