"""The fusion pattern of a PrimFunc (TVM's ``AnalyzeOpPatternKind``), derived from its blocks'
loads and stores; AnnotateTIROpPattern records it, legalizations keep it past their checks.

Per block (one store ``C[idx] = ...``): every load compared with the store is elementwise (same
indices), broadcast (a subsequence of them, unit dims at 0), or injective (only their
variables); the block takes the loosest, except that an elementwise load makes a broadcast
block elementwise. A block whose loads fit none of these is a reduction when it has reduce
iterators: multiply-accumulate (matmul, conv2d) is out-elementwise-fusable, a reduction whose
reduce indices are plain reduce variables is comm-reduce, any other (pooling) out-elementwise-
fusable; without reduce iterators it is opaque. The function takes the loosest pattern of its
blocks (an elementwise output block after a reduction makes it out-elementwise-fusable, as
softmax)."""
from __future__ import annotations

from typing import Any

from . import tir
from .arith import is_const_int
from .node import node_fields
from .op import OpPattern
from .stmt_functor import StmtExprVisitor

__all__ = ["analyze_op_pattern"]


def _same(a: tuple, b: tuple) -> bool:
    """The same index expressions (by identity, as TVM's ``same_as``)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _uses(e: Any, pred: Any) -> bool:
    """True when ``e`` uses a variable ``pred`` accepts."""
    if isinstance(e, tir.Var):
        return pred(e)
    if isinstance(e, tir.PrimExpr):
        for f in node_fields(type(e)):
            v = getattr(e, f)
            for item in v if isinstance(v, tuple) else (v,):
                if isinstance(item, tir.PrimExpr) and _uses(item, pred):
                    return True
    return False


def _is_broadcast(store: tir.BufferStore, load: tir.BufferLoad) -> bool:
    """The load's indices are the store's, in order, with some left out (unit dims may read 0)."""
    j = 0
    n = len(store.indices)
    for dim, idx in zip(load.buffer.shape, load.indices):
        if is_const_int(dim, 1) and isinstance(idx, tir.IntImm) and idx.value == 0:
            continue
        while j < n and store.indices[j] is not idx:
            j += 1
        if j == n:
            return False
    return True


def _store_vars(store: tir.BufferStore) -> set[int] | None:
    """The ids of the store's index variables; None when an index is not a variable."""
    out = set()
    for i in store.indices:
        if not isinstance(i, tir.Var):
            return None
        out.add(id(i))
    return out


def _is_injective(store: tir.BufferStore, load: tir.BufferLoad) -> bool:
    """The load's indices use only the store's index variables."""
    names = _store_vars(store)
    return names is not None and not any(_uses(i, lambda v: id(v) not in names) for i in load.indices)


def _allows_reuse(store: tir.BufferStore, load: tir.BufferLoad) -> bool:
    """Some store index variable is not used by the load (the loaded value is reused across it)."""
    names = _store_vars(store)
    if names is None:
        return False
    left = set(names)
    for i in load.indices:
        _uses(i, lambda v: left.discard(id(v)) or False)
    return bool(left)


def _strip_cast(e: tir.PrimExpr) -> tir.PrimExpr:
    """``e`` without enclosing casts."""
    while isinstance(e, tir.Cast):
        e = e.value
    return e


def _is_fma(body: tir.Stmt) -> bool:
    """``C[idx] = C[idx] + A[...] * B[...]`` where both loads are reused (matmul, conv)."""
    if not isinstance(body, tir.BufferStore):
        return False
    add = _strip_cast(body.value)
    if not isinstance(add, tir.Add):
        return False
    mul = _strip_cast(add.b)
    acc = _strip_cast(add.a)
    if not isinstance(mul, tir.Mul) or not isinstance(acc, tir.BufferLoad):
        return False
    if acc.buffer is not body.buffer or not _same(acc.indices, body.indices):
        return False
    lhs, rhs = _strip_cast(mul.a), _strip_cast(mul.b)
    if not isinstance(lhs, tir.BufferLoad) or not isinstance(rhs, tir.BufferLoad):
        return False
    return _allows_reuse(body, lhs) and _allows_reuse(body, rhs)


def _is_pure_reduce(reduce_vars: list[tir.Var], indices: tuple) -> bool:
    """Every index that uses a reduce variable is exactly that variable."""
    ids = {id(v) for v in reduce_vars}
    for e in indices:
        if _uses(e, lambda v: id(v) in ids) and not (isinstance(e, tir.Var) and id(e) in ids):
            return False
    return True


class _PatternAnalyzer(StmtExprVisitor):
    """Walks the blocks of a PrimFunc and keeps the loosest pattern seen."""

    def __init__(self, func: tir.PrimFunc) -> None:
        self.params = {id(b) for b in func.buffer_map.values()}
        self.kind = OpPattern.ELEMWISE
        self.store: tir.BufferStore | None = None
        self.loads: list[tir.BufferLoad] = []

    def visit_buffer_store_(self, op: tir.BufferStore) -> None:
        """Record the block's store (a second one with other indices is opaque)."""
        if self.store is not None and not _same(op.indices, self.store.indices):
            self.kind = OpPattern.OPAQUE  # several stores in one block
            return
        self.store = op
        self.generic_visit(op)

    def visit_buffer_load_(self, op: tir.BufferLoad) -> None:
        """Record a load."""
        self.loads.append(op)
        self.generic_visit(op)

    def visit_block_(self, block: tir.Block) -> None:
        """Classify one block and merge it into the result."""
        if block.name_hint == "root":
            self.visit_stmt(block.body)
            return
        self.loads, self.store = [], None
        self.visit_stmt(block.body)
        store = self.store
        if store is None:
            self.kind = OpPattern.OPAQUE
            return
        pattern = OpPattern.ELEMWISE
        has_elemwise = False
        for load in self.loads:
            if _same(store.indices, load.indices):
                has_elemwise = True
            elif _is_broadcast(store, load):
                pattern = max(pattern, OpPattern.BROADCAST)
            elif _is_injective(store, load):
                pattern = max(pattern, OpPattern.INJECTIVE)
            else:
                pattern = OpPattern.OPAQUE
                break
        if pattern == OpPattern.BROADCAST and has_elemwise:
            pattern = OpPattern.ELEMWISE
        if pattern != OpPattern.OPAQUE:
            writes_param = any(id(w.buffer) in self.params for w in block.writes)
            if writes_param and self.kind == OpPattern.COMM_REDUCE:
                self.kind = OpPattern.OUT_ELEMWISE_FUSABLE  # reduce then elementwise output: softmax
            else:
                self.kind = max(self.kind, pattern)
            return
        reduce_vars = [iv.var for iv in block.iter_vars if iv.iter_type == tir.IterType.CommReduce]
        if not reduce_vars:
            self.kind = OpPattern.OPAQUE
            return
        if _is_fma(block.body) or not all(_is_pure_reduce(reduce_vars, ld.indices) for ld in self.loads):
            self.kind = max(self.kind, OpPattern.OUT_ELEMWISE_FUSABLE)
            return
        self.kind = max(self.kind, OpPattern.COMM_REDUCE)


def analyze_op_pattern(func: tir.PrimFunc) -> int:
    """The fusion pattern of a PrimFunc (``OpPattern``: 0 elementwise ... 8 opaque)."""
    analyzer = _PatternAnalyzer(func)
    analyzer.visit_stmt(func.body)
    return analyzer.kind
