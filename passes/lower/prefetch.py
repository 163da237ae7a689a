"""InjectPrefetch: software prefetch for the loops the schedule marks ``"tvmlite.prefetch"``.

A loop annotated ``T.serial(n, annotations={"tvmlite.prefetch": D})`` gets, at the start of its
body, ``T.call_llvm_intrin("void", "llvm.prefetch", T.address_of(W[i + D / bytes]), 0, 3, 1)``
(a read, kept in every cache level, of data) for each contiguous vector load ``W[T.Ramp(i, 1,
lanes)]`` of a function parameter in the body: each iteration asks for the cache line D bytes
ahead of the one it reads. The loads whose index uses a loop nested in the body get one prefetch
per value of those loops when they are unrolled (a tile of two channel blocks reads two weight
vectors) or unit loops, none otherwise, MAX_PREFETCHES at most; the annotation itself is dropped
(and an annotated loop that is not serial gets none: its copies would repeat them).

Why: a conv's packed weights are read once per block of output channels, streaming from memory
when the model's weights outgrow the last-level cache (resnet18: 47 MB). The hardware prefetcher
follows that stream poorly (nine taps interleaved at 1 KB strides), so the first task of each block
waits on memory; fetching a few KB ahead, one line per weight vector read, hides it (resnet18 at
1 thread: 18.6 -> 16.7 ms). A prefetch past the end of the buffer is harmless: x86 prefetches do
not fault, and the address is computed without LLVM's ``inbounds``."""
from __future__ import annotations

import itertools

from ...ir import tir
from ...ir.arith import as_const_int, simplify
from ...ir.dtype import parse_dtype
from ...ir.intrinsics import prefetch_stmt
from ...ir.module import IRModule
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprMutator, post_order_visit, statements_of, substitute, vars_of
from ...ir.structural import structural_equal
from ..infra import PassContext, PrimFuncPass, register_pass

__all__ = ["InjectPrefetch", "inject_prefetch", "PREFETCH_KEY", "MAX_PREFETCHES"]

PREFETCH_KEY = "tvmlite.prefetch"
MAX_PREFETCHES = 8  # prefetches per iteration at most (loads x values of the unrolled loops they use)


class _Injector(StmtExprMutator):
    """Prefetches at the start of every annotated loop's body (inner loops first)."""

    def __init__(self, param_data: set[tir.Var]) -> None:
        super().__init__()
        self.param_data = param_data

    def visit_for_(self, loop: tir.For) -> tir.Stmt:
        new = super().visit_for_(loop)
        if PREFETCH_KEY not in new.annotations:
            return new
        distance = as_const_int(new.annotations[PREFETCH_KEY])
        annotations = {k: v for k, v in new.annotations.items() if k != PREFETCH_KEY}
        # An unrolled loop would repeat its prefetches in every copy of the body: none there.
        calls = self._prefetches(new.body, distance) if distance is not None and new.kind == tir.ForKind.SERIAL else []
        body = tir.SeqStmt((*calls, new.body)) if calls else new.body
        return replace(new, body=body, annotations=annotations)

    def _prefetches(self, body: tir.Stmt, distance: int) -> list[tir.Evaluate]:
        """One prefetch per vector load of a parameter (and value of the unrolled loops it uses)."""
        unrolled: dict[tir.Var, range] = {}  # the values of the loops nested here that are fixed per copy
        inner: set[tir.Var] = set()
        loads: list[tir.BufferLoad] = []

        def note(n: object) -> None:
            if isinstance(n, tir.For):
                inner.add(n.loop_var)
                start, extent = as_const_int(n.min), as_const_int(n.extent)
                if start is not None and extent is not None and (n.kind == tir.ForKind.UNROLLED or extent == 1):
                    unrolled[n.loop_var] = range(start, start + extent)
            elif isinstance(n, tir.BufferLoad) and n.buffer.data in self.param_data and len(n.indices) == 1:
                index = n.indices[0]
                if isinstance(index, tir.Ramp) and as_const_int(index.stride) == 1:
                    loads.append(n)

        post_order_visit(body, note)
        found: list[tir.BufferLoad] = []
        for load in loads:
            base = load.indices[0].base
            used = [v for v in vars_of(base) if v in inner]
            if any(v not in unrolled for v in used):
                continue  # a loop nested here that is not a short unrolled one: no fixed address per iteration
            step = distance // max(1, parse_dtype(load.buffer.dtype).bits // 8)
            ahead = tir.Add(base, tir.IntImm(base.dtype, step))
            for values in itertools.product(*(unrolled[v] for v in used)):
                index = _folded(substitute(ahead, {v: tir.IntImm(v.dtype, k) for v, k in zip(used, values)}))
                candidate = tir.BufferLoad(load.buffer, (index,))
                if not any(structural_equal(candidate, f) for f in found):
                    found.append(candidate)
        return [prefetch_stmt(f) for f in found[:MAX_PREFETCHES]]


def _folded(index: tir.PrimExpr) -> tir.PrimExpr:
    """``index`` with its constants folded (``k * 32 + 0 * 16 + 256`` -> ``k * 32 + 256``); the
    simplifier writes int64, so other index types stay as they are."""
    folded = simplify(index)
    return folded if folded.dtype == index.dtype else index


def inject_prefetch(func: tir.PrimFunc) -> tir.PrimFunc:
    """``func`` with the prefetches its ``"tvmlite.prefetch"`` loops ask for."""
    # Statements only (far fewer than the expressions a full walk visits): unmarked functions cost
    # next to nothing.
    if not any(isinstance(n, tir.For) and PREFETCH_KEY in n.annotations for n in statements_of(func.body)):
        return func
    param_data = {b.data for b in func.buffer_map.values()}
    injector = _Injector(param_data)
    body = injector.visit_stmt(func.body)
    return func if body is func.body else replace(func, body=body)


class InjectPrefetch(PrimFuncPass):
    """Prefetch the cache lines ahead of the parameter vectors that marked loops read."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        new = inject_prefetch(func)
        if new is not func:
            self.stats["prefetching_functions"] += 1
        return new


register_pass("InjectPrefetch", InjectPrefetch)
