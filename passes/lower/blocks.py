"""LowerBlocks (TVM's LowerInitBlock + ConvertBlocksToOpaque + LowerMatchBuffer +
LowerOpaqueBlock in one pass): every ``BlockRealize`` becomes the plain statements it stands for.

- The block's iterators are replaced by their bindings (``iter_values``).
- ``T.init()`` becomes ``if v_k == k_min [and ...]: init`` before the body, one condition per
  reduction (``CommReduce``) iterator, as TVM's LowerInitBlock writes it. That never runs when a
  reduction loop is empty (``K = 0``), so a block whose reduction extents are not positive
  constants also gets its init run on its own in that case (``ir.empty_reductions``): unlike
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
from ...ir.arith import as_dtype, is_const_int
from ...ir.empty_reductions import guard_empty_reductions
from ...ir.functor import deep_recursion
from ...ir.module import IRModule
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprMutator, post_order_visit, substitute
from ..infra import PassContext, PrimFuncPass, register_pass
from .compact import compact_allocations

REASSOC_KEY = "tvmlite.reassoc"  # the same key as backend.llvm_codegen.REASSOC_KEY

__all__ = ["LowerBlocks", "lower_blocks", "init_condition", "inline_match_buffers"]


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
        # In program order (a dict, not a set of buffers hashed by address): the compacted
        # declarations come out in the same order in every run.
        self.allocated: dict[tir.Buffer, None] = {}
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
        self.allocated.update(dict.fromkeys(block.alloc_buffers))
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
