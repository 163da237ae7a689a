"""Lowering of ``T.parallel`` loops: the body is outlined into a worker function that the native
thread pool (``backend/thread_pool.py``) runs on chunks of the iteration space."""
from __future__ import annotations

from llvmlite import ir

from ...ir import tir
from ...ir.stmt_functor import vars_of
from ..thread_pool import PARALLEL_FOR_SYMBOL
from .types import I32, I64, PTR

__all__ = ["ParallelLowering"]

# The worker the pool calls: ``i32 worker(i64 begin, i64 end, ptr closure)``.
_WORKER_TY = ir.FunctionType(I32, [I64, I64, PTR])


class ParallelLowering:
    """Parallel loops of :class:`~.function_builder.FunctionBuilder`, outlined onto the thread pool."""

    def _parallel(self, op: tir.For) -> None:
        """Outline the loop body into ``worker(begin, end, closure)`` and run it on the pool.

        The closure is a stack struct of every bound variable the loop uses; the worker's body is a
        separate function whose buffer pointers keep ``noalias`` (inlining turns it into scoped
        alias metadata, so the loop still vectorises without runtime checks)."""
        used = {id(v) for v in vars_of(op)}
        # One closure field per distinct value (two names of one pointer must not become two
        # noalias arguments), with every variable that names it.
        groups: dict[int, tuple[list[tir.Var], ir.Value]] = {}
        for v, val in self.vars.items():
            if id(v) in used:
                groups.setdefault(id(val), ([], val))[0].append(v)
        free = list(groups.values())
        lo64 = self._cast(self.expr(op.min), op.min.dtype, "int64")
        ext64 = self._cast(self.expr(op.extent), op.extent.dtype, "int64")
        if op.step is not None:
            step64 = self._cast(self.expr(op.step), op.step.dtype, "int64")
            # trip count = ceil(ext / step) for a positive step
            ext64 = self.b.sdiv(self.b.add(ext64, self.b.sub(step64, ir.Constant(I64, 1))), step64)
        else:
            step64 = ir.Constant(I64, 1)
        fields = [val.type for _, val in free] + [I64, I64]  # + lo, step
        struct = ir.LiteralStructType(fields)
        closure = self._alloca(struct, name="closure")
        for k, val in enumerate([val for _, val in free] + [lo64, step64]):
            self.b.store(val, self.b.gep(closure, [ir.Constant(I32, 0), ir.Constant(I32, k)],
                                         inbounds=True, source_etype=struct))
        worker = self._outline(op, free, struct)
        launch = self.mb.function(PARALLEL_FOR_SYMBOL, ir.FunctionType(I32, [PTR, PTR, I64, I64]))
        status = self.b.call(launch, [worker, closure, ir.Constant(I64, 0), ext64])
        self._check_status(status)

    def _outline(self, op: tir.For, free: list[tuple[list[tir.Var], ir.Value]],
                 struct: ir.LiteralStructType) -> ir.Function:
        """The worker ``i32 (i64 begin, i64 end, ptr closure)`` and its body function."""
        base = f"{self.fn.name}.parallel{self.parallel_count}"
        self.parallel_count += 1
        # The body: (begin, end, lo, step, free values...) with noalias on distinct buffers.
        body_ty = ir.FunctionType(I32, [I64, I64, I64, I64, *[val.type for _, val in free]])
        body_fn = ir.Function(self.mb.module, body_ty, name=f"{base}.body")
        body_fn.linkage = "internal"
        body_fn.attributes.add("nounwind")
        # A builder of this builder's class (the mixin cannot import the class it is part of).
        inner = type(self)(self.mb, body_fn, self.func_name, in_parallel=True)
        inner.reassoc = self.reassoc
        inner.nonneg = set(self.nonneg)
        inner.may_jump = self.may_jump
        if self._counts_up_from_nonneg(op):
            inner.nonneg.add(op.loop_var)
        inner.reported = self.reported
        begin, end, lo, step = body_fn.args[:4]
        for arg, arg_name in zip(body_fn.args[:4], ("begin", "end", "lo", "step")):
            arg.name = arg_name
        for (names, _), arg in zip(free, body_fn.args[4:]):
            arg.name = names[0].name
            if len(names) == 1 and id(names[0]) in self.noalias_vars:
                arg.add_attribute("noalias")
                inner.noalias_vars.add(id(names[0]))
            for var in names:
                inner.vars[var] = arg
        loop_var = op.loop_var
        k = tir.Var(f"{loop_var.name}.k", "int64")

        def body() -> None:
            """The loop body with the TIR loop variable bound to ``lo + k * step``."""
            kv = inner.vars[k]
            c_lo, c_step = _literal(op.min), (1 if op.step is None else _literal(op.step))
            if c_lo is not None and c_step is not None:  # the usual case: LLVM sees k itself
                i64 = kv if c_step == 1 else inner.b.mul(kv, ir.Constant(I64, c_step), flags=("nsw",))
                i64 = i64 if c_lo == 0 else inner.b.add(i64, ir.Constant(I64, c_lo), flags=("nsw",))
            else:
                i64 = inner.b.add(lo, inner.b.mul(kv, step, flags=("nsw",)), flags=("nsw",))
            inner.bind(loop_var, i64)
            try:
                inner.stmt(op.body)
            finally:
                del inner.vars[loop_var]

        inner._loop(k, begin, inner.b.sub(end, begin), ir.Constant(I64, 1), body, [])
        inner.finish()
        # The trampoline the pool calls.
        worker = ir.Function(self.mb.module, _WORKER_TY, name=base)
        worker.linkage = "internal"
        worker.attributes.add("nounwind")
        wb = ir.IRBuilder(worker.append_basic_block("entry"))
        wbegin, wend, wclosure = worker.args
        loaded = []
        for idx in range(len(struct.elements)):
            p = wb.gep(wclosure, [ir.Constant(I32, 0), ir.Constant(I32, idx)], inbounds=True, source_etype=struct)
            loaded.append(wb.load(p, typ=struct.elements[idx]))
        values, lo_v, step_v = loaded[:-2], loaded[-2], loaded[-1]
        wb.ret(wb.call(body_fn, [wbegin, wend, lo_v, step_v, *values]))
        return worker


def _literal(e: tir.PrimExpr) -> int | None:
    """The value of an integer literal, else None."""
    return e.value if isinstance(e, tir.IntImm) else None
