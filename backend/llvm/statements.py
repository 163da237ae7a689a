"""Lowering of TIR statements: sequences, bindings, attributes, asserts (a status code, never an
abort), branches, while loops and serial/unrolled/vectorised for loops with their LLVM loop hints."""
from __future__ import annotations

from typing import Any, Callable

from llvmlite import ir

from ...ir import tir
from ...ir.dtype import parse_dtype
from ...ir.intrinsics import intrinsic_of_op
from ...ir.stmt_functor import post_order_visit, stmt_children
from ...te.expr import expr_vars
from .errors import CodegenError, excerpt
from .types import const_int, llvm_type

__all__ = ["StatementLowering", "REASSOC_KEY"]

# Loop annotation (``T.serial(n, annotations={"tvmlite.reassoc": 1})``, set by the schedule with
# ``sch.annotate(loop, "tvmlite.reassoc", 1)``) and AttrStmt key (a block annotation, kept by
# LowerBlocks): float arithmetic inside may be reassociated, so reductions there vectorise.
REASSOC_KEY = "tvmlite.reassoc"


def _truthy(value: Any) -> bool:
    """An annotation value that switches a hint on (a non-zero IntImm, True, 1)."""
    if isinstance(value, tir.IntImm):
        return value.value != 0
    return bool(value) if isinstance(value, (bool, int)) else False


class StatementLowering:
    """The ``visit_<stmt>_`` handlers of :class:`~.function_builder.FunctionBuilder` (parallel
    loops go to :class:`~.parallel.ParallelLowering`)."""

    # ---- statements
    def visit_seq_stmt_(self, op: tir.SeqStmt) -> None:
        """Each statement in order."""
        for s in op.seq:
            self.stmt(s)

    def visit_evaluate_(self, op: tir.Evaluate) -> None:
        """Evaluate for side effects (constants are dropped)."""
        if not isinstance(op.value, (tir.IntImm, tir.FloatImm)):
            self.expr(op.value)

    def visit_let_stmt_(self, op: tir.LetStmt) -> None:
        """Bind the variable for the body, then unbind it."""
        self.bind(op.var, self.expr(op.value))
        known = op.var.dtype.startswith("int") and self._nonneg(op.value)
        if known:
            self.nonneg.add(op.var)
        try:
            self.stmt(op.body)
        finally:
            del self.vars[op.var]
            if known:
                self.nonneg.discard(op.var)

    def visit_attr_stmt_(self, op: tir.AttrStmt) -> None:
        """Attributes are hints: ``tvmlite.reassoc`` allows reassociation in its body; the others
        the CPU backend does not need."""
        if op.attr_key in ("thread_extent", "virtual_thread") and isinstance(op.node, tir.IterVar):
            raise CodegenError(f"{self.func_name}: T.launch_thread(\"{op.node.thread_tag}\", ...) binds a GPU "
                               f"thread; the LLVM backend compiles CPU code only")
        on = op.attr_key == REASSOC_KEY and _truthy(op.value)
        self.reassoc += on
        try:
            self.stmt(op.body)
        finally:
            self.reassoc -= on

    def visit_assert_stmt_(self, op: tir.AssertStmt) -> None:
        """A failed assert returns its message's code (the wrapper raises it); never aborts."""
        msg = op.message.value if isinstance(op.message, tir.StringImm) else excerpt(op.message)
        shown = tuple((v.name, self.reported[v]) for v in expr_vars(op.condition) if v in self.reported)
        code = self.mb.message_code(f"{self.func_name}: assertion failed: {msg}"
                                    if msg else f"{self.func_name}: assertion failed: {excerpt(op.condition)}", shown)
        ok = self.expr(op.condition)
        with self.b.if_then(self.b.not_(ok), likely=False):
            self._fail(code)
        self.stmt(op.body)

    def visit_if_then_else_(self, op: tir.IfThenElse) -> None:
        """A branch on a scalar condition."""
        c = self.expr(op.condition)
        if self._lanes_of(c) > 1:
            raise CodegenError(f"{self.func_name}: an if condition must be a scalar bool, got {op.condition.dtype}")
        if op.else_case is None:
            with self.b.if_then(c):
                self.stmt(op.then_case)
            return
        with self.b.if_else(c) as (then, otherwise):
            with then:
                self.stmt(op.then_case)
            with otherwise:
                self.stmt(op.else_case)

    def visit_while_(self, op: tir.While) -> None:
        """A top-tested loop: ``while.cond`` -> ``while.body`` -> back."""
        head = self.fn.append_basic_block("while.cond")
        body = self.fn.append_basic_block("while.body")
        done = self.fn.append_basic_block("while.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(self.expr(op.condition), body, done)
        self.b.position_at_end(body)
        self.jump_targets.append((head, done))
        try:
            self.stmt(op.body)
        finally:
            self.jump_targets.pop()
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(done)

    def _jump(self, op: tir.Stmt, which: int) -> None:
        """``break`` (``which`` 1) or ``continue`` (0): a branch out of the innermost loop's body;
        what follows it in the same sequence is unreachable."""
        if not self.jump_targets:
            raise CodegenError(f"{self.func_name}: {excerpt(op)} outside a serial loop")
        self.b.branch(self.jump_targets[-1][which])
        self.b.position_at_end(self.fn.append_basic_block("unreachable"))

    def visit_break_(self, op: tir.Break) -> None:
        """Leave the innermost loop."""
        self._jump(op, 1)

    def visit_continue_(self, op: tir.Continue) -> None:
        """The innermost loop's next iteration."""
        self._jump(op, 0)

    def visit_for_(self, op: tir.For) -> None:
        """Serial loops; ``unroll``/``vectorized`` add loop hints; ``parallel`` is outlined onto the
        thread pool (serial when already inside a parallel worker)."""
        if op.kind == tir.ForKind.THREAD_BINDING:
            raise CodegenError(f"{self.func_name}: loop '{op.loop_var.name}' is bound to a GPU thread "
                               f"({op.thread_binding.thread_tag if op.thread_binding else '?'}); the LLVM "
                               f"backend compiles CPU code only")
        on = _truthy(op.annotations.get(REASSOC_KEY)) if op.annotations else False
        self.reassoc += on
        try:
            self._for(op, on)
        finally:
            self.reassoc -= on

    def _for(self, op: tir.For, reassoc: bool) -> None:
        """A loop of any CPU kind (``reassoc``: the loop carries a reassociable reduction)."""
        if op.kind == tir.ForKind.PARALLEL and not self.in_parallel:
            self._parallel(op)
            return
        hints: list[tuple[str, Any]] = []
        if reassoc and op.kind == tir.ForKind.SERIAL:
            # Vectorised (and interleaved for ILP) but not unrolled further: fully unrolling a long
            # reduction only grows the code, doubling compile time for no speed.
            hints.append(("llvm.loop.vectorize.enable", True))
            hints.append(("llvm.loop.unroll.disable", None))
        elif op.kind == tir.ForKind.SERIAL and _holds_unrolled_loop(op.body):
            # A serial loop around a register tile the schedule unrolled itself (a conv's reduction
            # loops): LLVM unrolling it as well copies the tile's straight-line code, which its loop
            # passes then chew on for little speed (resnet18's compile 1.25 -> 1.10 s; its call the
            # same within 0.5%).
            hints.append(("llvm.loop.unroll.disable", None))
        elif op.kind == tir.ForKind.SERIAL and _guards_vector_loads(op.body):
            # A loop copying padded rows a vector at a time (each load behind a branch): unrolled,
            # its copies of the branch cost LLVM's loop passes more than they gain (resnet18's
            # 56x56 convs 116 -> 78 and 79 -> 46 ms of LLVM each; the call the same within 0.1%).
            hints.append(("llvm.loop.unroll.disable", None))
        if op.kind == tir.ForKind.UNROLLED:
            hints.append(("llvm.loop.unroll.full", None) if isinstance(op.extent, tir.IntImm)
                         else ("llvm.loop.unroll.enable", None))
        elif op.kind == tir.ForKind.VECTORIZED:
            hints.append(("llvm.loop.vectorize.enable", True))
            if isinstance(op.extent, tir.IntImm) and 1 < op.extent.value <= 64:
                width = 1 << (op.extent.value.bit_length() - 1)  # a power of two not above the extent
                hints.append(("llvm.loop.vectorize.width", width))
        dt = op.loop_var.dtype
        lo = self._cast(self.expr(op.min), op.min.dtype, dt)
        ext = self._cast(self.expr(op.extent), op.extent.dtype, dt)
        step = self._cast(self.expr(op.step), op.step.dtype, dt) if op.step is not None else ir.Constant(lo.type, 1)
        jumps = self.may_jump and any(isinstance(n, (tir.Break, tir.Continue)) for n in _walk_stmts(op.body))
        known = self._counts_up_from_nonneg(op)
        if known:
            self.nonneg.add(op.loop_var)
        try:
            self._loop(op.loop_var, lo, ext, step, lambda: self.stmt(op.body), hints, jumps)
        finally:
            if known:
                self.nonneg.discard(op.loop_var)

    def _counts_up_from_nonneg(self, op: tir.For) -> bool:
        """Whether loop ``op``'s counter is never negative (a non-negative start, a positive step)."""
        if not op.loop_var.dtype.startswith("int") or not self._nonneg(op.min):
            return False
        return op.step is None or (isinstance(op.step, tir.IntImm) and op.step.value > 0)

    def _loop(self, var: tir.Var, lo: ir.Value, ext: ir.Value, step: ir.Value, body: Callable[[], None],
              hints: list[tuple[str, Any]], jumps: bool = False) -> None:
        """A guarded bottom-tested loop ``for var in range(lo, lo + ext, step)`` (values of the var's
        type); ``jumps``: the body has ``break``/``continue``."""
        d = parse_dtype(var.dtype)
        t = llvm_type(var.dtype)
        flags = self._int_flags(d)
        hi = ext if const_int(lo) == 0 else self.b.add(lo, ext, flags=flags)
        less = self.b.icmp_signed if d.is_int else self.b.icmp_unsigned
        pre = self.b.block
        body_bb = self.fn.append_basic_block(f"for.{var.name}")
        done = self.fn.append_basic_block(f"for.{var.name}.end")
        c_lo, c_hi = const_int(lo), const_int(hi)
        if d.is_int and c_lo is not None and c_hi is not None and c_lo < c_hi:
            self.b.branch(body_bb)  # runs at least once: no guard for LLVM to fold
        else:
            self.b.cbranch(less("<", lo, hi), body_bb, done)
        self.b.position_at_end(body_bb)
        iv = self.b.phi(t, name=var.name)
        iv.add_incoming(lo, pre)
        self.vars[var] = iv
        # break/continue branch to the loop's end or to a latch block of its own.
        latch = self.fn.append_basic_block(f"for.{var.name}.next") if jumps else None
        self.jump_targets.append((latch, done))
        try:
            body()
        finally:
            del self.vars[var]
            self.jump_targets.pop()
        if latch is not None:
            if not self.b.block.is_terminated:
                self.b.branch(latch)
            self.b.position_at_end(latch)
        if not self.b.block.is_terminated:
            nxt = self.b.add(iv, step, flags=flags)
            latch = self.b.cbranch(less("<", nxt, hi), body_bb, done)
            iv.add_incoming(nxt, self.b.block)
            latch.set_metadata("llvm.loop", self.mb.loop_id([("llvm.loop.mustprogress", None), *hints]))
        self.b.position_at_end(done)

    def _blocks_left(self, op: tir.Stmt) -> None:
        """Blocks must have been lowered away."""
        raise CodegenError(f"{self.func_name}: the LLVM backend needs block-free TIR, but the function "
                           f"still has blocks; run the lowering passes (tvmlite.passes.get_pipeline"
                           f"(\"lower\")) first")

    visit_block_ = visit_block_realize_ = _blocks_left


def _holds_unrolled_loop(stmt: tir.Stmt) -> bool:
    """Whether ``stmt`` is or contains a loop the schedule marked for unrolling (statements only,
    stopping at the first found)."""
    if isinstance(stmt, tir.For) and stmt.kind == tir.ForKind.UNROLLED:
        return True
    return any(_holds_unrolled_loop(child) for _, _, child in stmt_children(stmt))


def _guards_vector_loads(stmt: tir.Stmt) -> bool:
    """Whether ``stmt`` holds a ``T.if_then_else`` of vectors (a vector load behind a branch)."""
    found: list = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, tir.Call) and _is_conditional(n)
                     and parse_dtype(n.dtype).lanes > 1 else None)
    return bool(found)


def _is_conditional(call: tir.Call) -> bool:
    """Whether ``call`` evaluates only the operand its condition picks (``T.if_then_else``)."""
    info = intrinsic_of_op(call.op) if isinstance(call.op, str) else None
    return info is not None and info.conditional


def _walk_stmts(stmt: tir.Stmt) -> list:
    """Every statement and expression under ``stmt``."""
    out: list = []
    post_order_visit(stmt, out.append)
    return out
