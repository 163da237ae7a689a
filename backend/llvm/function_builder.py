"""``FunctionBuilder``: emits one LLVM function from TIR. Its state and shared helpers are here; the
handlers come from one lowering mixin per concern (expressions, memory, calls, statements, parallel
loops)."""
from __future__ import annotations

from typing import Any

from llvmlite import ir

from ...ir import tir
from ...ir.dtype import parse_dtype
from ...ir.functor import Visitor
from .calls import CallLowering
from .errors import CodegenError, excerpt
from .expressions import ExpressionLowering
from .memory import MemoryLowering
from .module_builder import ModuleBuilder
from .parallel import ParallelLowering
from .statements import StatementLowering
from .types import ALIGN, I32, PTR, llvm_type

__all__ = ["FunctionBuilder"]


class FunctionBuilder(ExpressionLowering, MemoryLowering, CallLowering, StatementLowering,
                      ParallelLowering, Visitor):
    """Emits one LLVM function from TIR: ``visit_<key>_`` returns an ``ir.Value`` for expressions and
    emits code for statements. Outlined parallel loops get a builder of their own."""

    def __init__(self, mb: ModuleBuilder, fn: ir.Function, func_name: str, in_parallel: bool = False,
                 ret_ptr: ir.Value | None = None, ret_dtype: str | None = None) -> None:
        """A builder positioned at the entry block of ``fn``."""
        self.mb = mb
        self.fn = fn
        self.func_name = func_name
        self.in_parallel = in_parallel  # nested parallel loops run serially inside a worker
        self.ret_ptr, self.ret_dtype = ret_ptr, ret_dtype
        self.entry = fn.append_basic_block("entry")
        self.b = ir.IRBuilder(self.entry)
        self.vars: dict[tir.Var, ir.Value] = {}
        self.noalias_vars: set[int] = set()  # ids of pointer vars known not to alias any other
        self.nonneg: set[tir.Var] = set()  # integer vars known never to be negative (loop counters)
        self.heap: list[ir.Value] = []  # heap allocations in scope, freed on every exit path
        self.parallel_count = 0
        self.reassoc = 0  # depth of enclosing loops/blocks annotated REASSOC_KEY
        self.jump_targets: list = []  # (continue, break) blocks of the enclosing loops
        self.may_jump = True  # False: the function has no break/continue (no loop needs looking into)
        # Sizes and scalar parameters by their position among the arguments: a failed assert
        # reports the values of those in its condition.
        self.reported: dict[tir.Var, int] = {}
        self._reassoc_flags = tuple(dict.fromkeys((*mb.fflags, "reassoc", "contract")))

    @property
    def fflags(self) -> tuple[str, ...]:
        """Fast-math flags of float arithmetic here: the target's, plus ``reassoc`` inside a
        REASSOC_KEY region (so LLVM may vectorise float reductions there)."""
        return self._reassoc_flags if self.reassoc else self.mb.fflags

    # ---- entry points
    def expr(self, e: tir.PrimExpr) -> ir.Value:
        """The value of an expression."""
        return self._dispatch(e)

    def stmt(self, s: tir.Stmt) -> None:
        """Emit a statement."""
        self._dispatch(s)

    def generic_visit(self, node: Any) -> Any:
        """Nodes without a handler are not compilable."""
        raise CodegenError(f"{self.func_name}: the LLVM backend cannot compile a {type(node).__name__} "
                           f"node:\n{excerpt(node)}")

    def finish(self) -> None:
        """Return success from the last block if control can reach the end."""
        if not self.b.block.is_terminated:
            self._free_heap(self.heap)
            self.b.ret(ir.Constant(I32, 0))

    def bind(self, var: tir.Var, value: ir.Value) -> None:
        """Make ``var`` stand for ``value`` (converted to the var's register type)."""
        want = llvm_type(var.dtype)
        if value.type != want:
            value = self._convert_abi(value, want, var.dtype)
        self.vars[var] = value

    def _convert_abi(self, value: ir.Value, want: ir.Type, dtype: str) -> ir.Value:
        """An ABI value (i64 dim, i16 half bits, i8 bool) as the register type of ``dtype``."""
        d = parse_dtype(dtype)
        if d.is_bool:
            return self.b.icmp_unsigned("!=", value, ir.Constant(value.type, 0))
        if d.is_float:
            return self.b.bitcast(value, want)
        if isinstance(value.type, ir.IntType) and isinstance(want, ir.IntType):
            return self.b.trunc(value, want) if value.type.width > want.width else self.b.sext(value, want)
        raise CodegenError(f"{self.func_name}: cannot pass {value.type} as {dtype}")

    # ---- helpers
    def _alloca(self, typ: ir.Type, name: str = "") -> ir.Value:
        """A stack slot in the entry block (so loops never grow the stack)."""
        with self.b.goto_entry_block():
            if self.entry.instructions:
                self.b.position_before(self.entry.instructions[0])
            slot = self.b.alloca(typ, name=name)
        slot.align = ALIGN
        slot.type = PTR  # llvmlite would type it as `T*`, which LLVM 22 (opaque pointers) rejects
        return slot

    def _free_heap(self, allocations: list[ir.Value]) -> None:
        """Free heap allocations (innermost first)."""
        if not allocations:
            return
        free = self.mb.function("free", ir.FunctionType(ir.VoidType(), [PTR]))
        for p in reversed(allocations):
            self.b.call(free, [p])

    def _fail(self, code: int) -> None:
        """Return ``code`` after freeing this function's live heap allocations."""
        self._free_heap(self.heap)
        self.b.ret(ir.Constant(I32, code))

    def _check_status(self, status: ir.Value) -> None:
        """Propagate a non-zero status (from a parallel region) to our caller."""
        failed = self.b.icmp_unsigned("!=", status, ir.Constant(I32, 0))
        with self.b.if_then(failed, likely=False):
            self._free_heap(self.heap)
            self.b.ret(status)

    def _splat(self, value: ir.Value, lanes: int) -> ir.Value:
        """A vector of ``lanes`` copies of a scalar."""
        vty = ir.VectorType(value.type, lanes)
        one = self.b.insert_element(ir.Constant(vty, ir.Undefined), value, ir.Constant(I32, 0))
        mask = ir.Constant(ir.VectorType(I32, lanes), [0] * lanes)
        return self.b.shuffle_vector(one, ir.Constant(vty, ir.Undefined), mask)

    def _lanes_of(self, value: ir.Value) -> int:
        """The vector width of a value (1 for scalars)."""
        return value.type.count if isinstance(value.type, ir.VectorType) else 1

    def _match_lanes(self, a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
        """Broadcast a scalar operand to the other operand's vector width."""
        la, lb = self._lanes_of(a), self._lanes_of(b)
        if la == lb:
            return a, b
        return (self._splat(a, lb), b) if la == 1 else (a, self._splat(b, la))

    def _is_zero_const(self, e: tir.PrimExpr) -> bool:
        """Whether ``e`` is the literal 0."""
        return isinstance(e, tir.IntImm) and e.value == 0
