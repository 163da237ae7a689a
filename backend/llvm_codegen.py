"""TIR to LLVM: every PrimFunc of an IRModule (block-free; N-D or flat buffer accesses) becomes one
function of a single LLVM module, built with ``llvmlite.ir`` and optimised with LLVM's new pass
manager on the target machine.

Calling convention of ``tvmlite_<name>`` (see docs/design.md, "Backend contracts"): one pointer per
buffer parameter (params order), one int64 per symbolic variable the buffer shapes/strides introduce
(order of first appearance), one value per scalar parameter (float16 as its bits in an i16, bool as
an i8), then a result pointer when the PrimFunc returns a value. It returns an i32 status: 0 for
success, k > 0 for ``LLVMModule.messages[k - 1]`` (a failed ``assert`` or a failed heap allocation),
so a failing kernel never aborts the process."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from llvmlite import ir

from ..ir import tir
from ..ir.dtype import DType, parse_dtype
from ..ir.functor import Visitor, post_order_visit
from ..ir.intrinsics import Intrinsic, intrinsic
from ..ir.module import IRModule
from .signature import ParamInfo, Signature, prim_func_signature, scalar_vars_of, vars_of
from .target import Target, _llvm
from .thread_pool import PARALLEL_FOR_SYMBOL

__all__ = ["CodegenError", "ParamInfo", "FuncSignature", "LLVMModule", "codegen", "signature", "symbol_name",
           "contains_blocks", "REASSOC_KEY"]

# Loop annotation (``T.serial(n, annotations={"tvmlite.reassoc": 1})``, set by the schedule with
# ``sch.annotate(loop, "tvmlite.reassoc", 1)``) and AttrStmt key (a block annotation, kept by
# LowerBlocks): float arithmetic inside may be reassociated, so reductions there vectorise.
REASSOC_KEY = "tvmlite.reassoc"
# Allocations up to this many bytes with a constant size live on the stack; the rest on the heap.
STACK_LIMIT = 32 * 1024
_ALIGN = 64

_I1, _I8, _I16, _I32, _I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
_PTR = ir.PointerType()
_WORKER_TY = ir.FunctionType(_I32, [_I64, _I64, _PTR])


class CodegenError(ValueError):
    """A PrimFunc the LLVM backend cannot compile (blocks left, unsupported node or intrinsic)."""


def symbol_name(name: str) -> str:
    """The LLVM symbol of a PrimFunc: prefixed, so that no kernel can shadow a libc/libm symbol
    (a kernel named ``exp`` would otherwise capture LLVM's own calls to ``exp``)."""
    return f"tvmlite_{name}"


# ---------------------------------------------------------------------------------------------
# Types


def _scalar_type(d: DType) -> ir.Type:
    """The LLVM register type of one lane of ``d``."""
    if d.code == "bool":
        return _I1
    if d.code in ("int", "uint"):
        return ir.IntType(d.bits)
    if d.code == "float":
        return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[d.bits]
    if d.code == "handle":
        return _PTR
    raise CodegenError(f"the LLVM backend does not support dtype {d.name!r}")


def llvm_type(dtype: str) -> ir.Type:
    """The LLVM register type of a TIR dtype (``<N x T>`` for vector dtypes)."""
    d = parse_dtype(dtype)
    t = _scalar_type(d)
    return ir.VectorType(t, d.lanes) if d.lanes > 1 else t


def mem_type(dtype: str) -> ir.Type:
    """The in-memory type: bool is a byte (numpy's layout), everything else its register type."""
    d = parse_dtype(dtype)
    t = _I8 if d.is_bool else _scalar_type(d)
    return ir.VectorType(t, d.lanes) if d.lanes > 1 else t


def abi_type(dtype: str) -> ir.Type:
    """The native type of a scalar parameter: float16 travels as its bits, bool as a byte (ctypes has
    neither a half type nor a 1-bit one)."""
    d = parse_dtype(dtype)
    if d.is_float and d.bits == 16:
        return _I16
    return _I8 if d.is_bool else _scalar_type(d)


def _elem_bytes(dtype: str) -> int:
    """Bytes of one element of ``dtype`` (all lanes)."""
    d = parse_dtype(dtype)
    return max(1, d.bits // 8) * d.lanes


def _type_suffix(t: ir.Type) -> str:
    """The overload suffix of an LLVM intrinsic name (``f32``, ``v8f32``, ``i64``)."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{_type_suffix(t.element)}"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    return t.intrinsic_name


class _LoopID(ir.values.MDValue):
    """A ``distinct !{!self, ...}`` loop-ID node (llvmlite cannot print self-referencing metadata)."""

    def descr(self, buf: list) -> None:
        """Print as a distinct, self-referencing node."""
        ops = ", ".join([self.get_reference()] + [op.get_reference() for op in self.operands])
        buf += (f"distinct !{{{ops}}}", "\n")

    def __hash__(self) -> int:
        """By identity: every loop has a node of its own."""
        return id(self)

    def __eq__(self, other: object) -> bool:
        """By identity."""
        return self is other


# ---------------------------------------------------------------------------------------------
# Signatures (what the executable checks before native code runs)


@dataclasses.dataclass(frozen=True)
class FuncSignature(Signature):
    """The native signature of one compiled PrimFunc: the caller's :class:`Signature` (what the
    argument checks read) plus the symbol, the result and whether it runs on the thread pool."""

    symbol: str
    ret_dtype: str | None
    uses_parallel: bool


def contains_blocks(func: tir.PrimFunc) -> bool:
    """True when the PrimFunc still has blocks (it needs the lowering passes first)."""
    found = []

    def check(n: Any) -> None:
        """Record a block."""
        if isinstance(n, (tir.Block, tir.BlockRealize)):
            found.append(n)

    post_order_visit(func.body, check)
    return bool(found)


def _signature(name: str, func: tir.PrimFunc, uses_parallel: bool) -> FuncSignature:
    """The signature of ``func``: its parameters and the symbolic variables its buffers introduce."""
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            if p.dtype == "handle":
                raise CodegenError(f"{name}: parameter '{p.name}' is a handle without a buffer "
                                   f"(declare it with T.match_buffer or as T.Buffer)")
        elif parse_dtype(buf.dtype).lanes > 1 or buf.dtype in ("handle", "void"):
            raise CodegenError(f"{name}: buffer parameter '{buf.name}' has dtype {buf.dtype}; "
                               f"parameters must be arrays of scalars")
    base = prim_func_signature(name, func)
    ret = func.ret_type if func.ret_type not in (None, "void") else None
    return FuncSignature(base.name, base.params, base.sym_vars, base.noalias, symbol=symbol_name(name),
                         ret_dtype=ret, uses_parallel=uses_parallel)


# ---------------------------------------------------------------------------------------------
# Module-level state


class _ModuleBuilder:
    """One LLVM module for one IRModule: functions, error messages, declarations, metadata."""

    def __init__(self, target: Target, name: str) -> None:
        """An empty module for ``target``."""
        self.target = target
        self.module = ir.Module(name=name)
        self.module.triple = target.triple
        self.messages: list[str] = []
        # Per message: the (name, argument position) of the sizes whose values a failure reports.
        self.message_values: list[tuple[tuple[str, int], ...]] = []
        self.fflags: tuple[str, ...] = ("fast",) if target.fast_math else ("contract",)
        self._strings: dict[str, ir.GlobalVariable] = {}

    def message_code(self, text: str, shown: tuple[tuple[str, int], ...] = ()) -> int:
        """The status code that stands for ``text`` (1-based index into the message table); a failure
        reports the values of the function arguments ``shown`` (name, position) after the text."""
        for i, (t, v) in enumerate(zip(self.messages, self.message_values)):
            if t == text and v == shown:
                return i + 1
        self.messages.append(text)
        self.message_values.append(shown)
        return len(self.messages)

    def function(self, name: str, fnty: ir.FunctionType) -> ir.Function:
        """The declared function ``name`` (declared on first use); an error if types disagree."""
        existing = self.module.globals.get(name)
        if existing is not None:
            if existing.function_type != fnty:
                raise CodegenError(f"'{name}' is called with two different signatures: "
                                   f"{existing.function_type} and {fnty}")
            return existing
        return ir.Function(self.module, fnty, name=name)

    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Type], overload: list[ir.Type]) -> ir.Function:
        """An LLVM intrinsic such as ``llvm.exp`` overloaded on ``overload`` (``llvm.exp.v8f32``)."""
        full = ".".join([name, *(_type_suffix(t) for t in overload)])
        return self.function(full, ir.FunctionType(ret, args))

    def string(self, text: str) -> ir.GlobalVariable:
        """A private NUL-terminated string constant."""
        g = self._strings.get(text)
        if g is None:
            data = bytearray(text.encode("utf-8") + b"\0")
            g = ir.GlobalVariable(self.module, ir.ArrayType(_I8, len(data)), name=f".str{len(self._strings)}")
            g.global_constant = True
            g.linkage = "private"
            g.initializer = ir.Constant(ir.ArrayType(_I8, len(data)), data)
            g.type = _PTR  # opaque pointer, as for allocas
            self._strings[text] = g
        return g

    def loop_id(self, hints: list[tuple[str, Any]]) -> _LoopID:
        """A loop-ID metadata node carrying ``llvm.loop.*`` hints."""
        ops = []
        for key, value in hints:
            items = [ir.MetaDataString(self.module, key)]
            if value is not None:
                items.append(ir.Constant(_I1 if isinstance(value, bool) else _I32, int(value)))
            ops.append(self.module.add_metadata(items))
        return _LoopID(self.module, ops, name=str(len(self.module.metadata)))


# ---------------------------------------------------------------------------------------------
# Function bodies


class _FunctionBuilder(Visitor):
    """Emits one LLVM function from TIR: ``visit_<key>_`` returns an ``ir.Value`` for expressions and
    emits code for statements. Outlined parallel loops get a builder of their own."""

    def __init__(self, mb: _ModuleBuilder, fn: ir.Function, func_name: str, in_parallel: bool = False,
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
        self.heap: list[ir.Value] = []  # heap allocations in scope, freed on every exit path
        self.parallel_count = 0
        self.reassoc = 0  # depth of enclosing loops/blocks annotated REASSOC_KEY
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
        return self._handler(e)(e)

    def stmt(self, s: tir.Stmt) -> None:
        """Emit a statement."""
        self._handler(s)(s)

    def generic_visit(self, node: Any) -> Any:
        """Nodes without a handler are not compilable."""
        raise CodegenError(f"{self.func_name}: the LLVM backend cannot compile a {type(node).__name__} "
                           f"node:\n{_excerpt(node)}")

    def finish(self) -> None:
        """Return success from the last block if control can reach the end."""
        if not self.b.block.is_terminated:
            self._free_heap(self.heap)
            self.b.ret(ir.Constant(_I32, 0))

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
        slot.align = _ALIGN
        slot.type = _PTR  # llvmlite would type it as `T*`, which LLVM 22 (opaque pointers) rejects
        return slot

    def _free_heap(self, allocations: list[ir.Value]) -> None:
        """Free heap allocations (innermost first)."""
        if not allocations:
            return
        free = self.mb.function("free", ir.FunctionType(ir.VoidType(), [_PTR]))
        for p in reversed(allocations):
            self.b.call(free, [p])

    def _fail(self, code: int) -> None:
        """Return ``code`` after freeing this function's live heap allocations."""
        self._free_heap(self.heap)
        self.b.ret(ir.Constant(_I32, code))

    def _check_status(self, status: ir.Value) -> None:
        """Propagate a non-zero status (from a parallel region) to our caller."""
        failed = self.b.icmp_unsigned("!=", status, ir.Constant(_I32, 0))
        with self.b.if_then(failed, likely=False):
            self._free_heap(self.heap)
            self.b.ret(status)

    def _splat(self, value: ir.Value, lanes: int) -> ir.Value:
        """A vector of ``lanes`` copies of a scalar."""
        vty = ir.VectorType(value.type, lanes)
        one = self.b.insert_element(ir.Constant(vty, ir.Undefined), value, ir.Constant(_I32, 0))
        mask = ir.Constant(ir.VectorType(_I32, lanes), [0] * lanes)
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

    # ---- constants and variables
    def visit_int_imm_(self, op: tir.IntImm) -> ir.Value:
        """An integer or bool literal (two's complement for unsigned values above the signed range)."""
        t = llvm_type(op.dtype)
        bits = t.width
        value = op.value & ((1 << bits) - 1)
        if bits > 1 and value >= 1 << (bits - 1):
            value -= 1 << bits
        return ir.Constant(t, value)

    def visit_float_imm_(self, op: tir.FloatImm) -> ir.Value:
        """A float literal (llvmlite writes it in LLVM's exact hex form)."""
        return ir.Constant(llvm_type(op.dtype), op.value)

    def visit_tir_string_imm_(self, op: tir.StringImm) -> ir.Value:
        """A string literal: a pointer to a private constant (for extern calls)."""
        return self.mb.string(op.value)

    def visit_tir_var_(self, op: tir.Var) -> ir.Value:
        """A bound variable."""
        value = self.vars.get(op)
        if value is None:
            raise CodegenError(f"{self.func_name}: variable '{op.name}' is used where it is not defined")
        return value

    # ---- casts
    def visit_cast_(self, op: tir.Cast) -> ir.Value:
        """Conversions between bool, (u)int8..64 and float16/32/64, lane by lane."""
        return self._cast(self.expr(op.value), op.value.dtype, op.dtype)

    def _cast(self, v: ir.Value, src_dtype: str, dst_dtype: str) -> ir.Value:
        """Convert an LLVM value of TIR dtype ``src_dtype`` to ``dst_dtype`` (C semantics, numpy's results)."""
        src, dst = parse_dtype(src_dtype), parse_dtype(dst_dtype)
        if src.lanes != dst.lanes:
            if src.lanes == 1:
                return self._splat(self._cast(v, src_dtype, dst.element), dst.lanes)
            raise CodegenError(f"{self.func_name}: cannot cast {src_dtype} to {dst_dtype} (lane counts differ)")
        t = llvm_type(dst_dtype)
        b = self.b
        if v.type == t and src.code == dst.code:
            return v
        if dst.is_bool:
            zero = ir.Constant(v.type, None)
            if src.is_float:
                return b.fcmp_unordered("!=", v, zero)  # NaN is true, as in numpy
            if src.is_handle:
                return b.icmp_unsigned("!=", b.ptrtoint(v, _I64), ir.Constant(_I64, 0))
            return b.icmp_unsigned("!=", v, zero)
        if src.is_handle or dst.is_handle:
            if src.is_handle and dst.is_handle:
                return v
            return b.ptrtoint(v, t) if src.is_handle else b.inttoptr(v, t)
        signed = src.is_int  # bool and uint extend with zeros
        if not src.is_float and not dst.is_float:
            sw, dw = src.bits, dst.bits
            if sw == dw:
                return v
            if sw > dw:
                return b.trunc(v, t)
            return b.sext(v, t) if signed else b.zext(v, t)
        if not src.is_float:
            return b.sitofp(v, t) if signed else b.uitofp(v, t)
        if not dst.is_float:
            # Narrow integers go through i32/i64 then wrap, as numpy's C casts do on x86.
            if dst.is_int and dst.bits < 32:
                return b.trunc(b.fptosi(v, self._like(v, _I32)), t)
            if dst.is_uint and dst.bits < 64:
                return b.trunc(b.fptosi(v, self._like(v, _I64)), t)
            return b.fptosi(v, t) if dst.is_int else b.fptoui(v, t)
        if src.bits == dst.bits:
            return v
        if src.bits == 64 and dst.bits == 16:
            return self._f64_to_f16(v, t)
        return b.fpext(v, t) if dst.bits > src.bits else b.fptrunc(v, t)

    def _f64_to_f16(self, v: ir.Value, t: ir.Type) -> ir.Value:
        """double -> half, correctly rounded without the ``__truncdfhf2`` libcall (which a JIT process
        may not have): round to odd into float, then round to nearest into half."""
        b = self.b
        f32, i32 = self._like(v, ir.FloatType()), self._like(v, _I32)
        near = b.fptrunc(v, f32)
        back = b.fpext(near, v.type)
        inexact = b.fcmp_unordered("!=", back, v)  # NaN stays as it is below (no bit is cleared)
        abs_fn = self.mb.intrinsic("llvm.fabs", v.type, [v.type], [v.type])
        overshot = b.fcmp_ordered(">", b.call(abs_fn, [back]), b.call(abs_fn, [v]))
        bits = b.bitcast(near, i32)
        one = ir.Constant(i32, 1 if not isinstance(i32, ir.VectorType) else [1] * i32.count)
        toward_zero = b.select(overshot, b.sub(bits, one), bits)
        odd = b.select(inexact, b.or_(toward_zero, one), bits)
        return b.fptrunc(b.bitcast(odd, f32), t)

    def _like(self, v: ir.Value, scalar: ir.Type) -> ir.Type:
        """``scalar``, as a vector when ``v`` is one."""
        return ir.VectorType(scalar, v.type.count) if isinstance(v.type, ir.VectorType) else scalar

    # ---- arithmetic
    def _operands(self, op: tir.BinaryOp) -> tuple[ir.Value, ir.Value, DType]:
        """Both operands (scalar broadcast to the other's width) and the operand dtype."""
        a, b = self._match_lanes(self.expr(op.a), self.expr(op.b))
        return a, b, parse_dtype(op.a.dtype)

    def _int_flags(self, d: DType) -> tuple[str, ...]:
        """``nsw`` on signed 32/64-bit arithmetic (as TVM emits: index math must not wrap); narrow
        integers wrap like numpy."""
        return ("nsw",) if d.is_int and d.bits >= 32 else ()

    def visit_add_(self, op: tir.Add) -> ir.Value:
        a, b, d = self._operands(op)
        if d.is_float:
            return self.b.fadd(a, b, flags=self.fflags)
        return self.b.add(a, b, flags=self._int_flags(d))

    def visit_sub_(self, op: tir.Sub) -> ir.Value:
        a, b, d = self._operands(op)
        if d.is_float:
            return self.b.fsub(a, b, flags=self.fflags)
        return self.b.sub(a, b, flags=self._int_flags(d))

    def visit_mul_(self, op: tir.Mul) -> ir.Value:
        a, b, d = self._operands(op)
        if d.is_float:
            return self.b.fmul(a, b, flags=self.fflags)
        return self.b.mul(a, b, flags=self._int_flags(d))

    def _safe_divisor(self, a: ir.Value, b: ir.Value, divisor: tir.PrimExpr,
                      d: DType) -> tuple[ir.Value, ir.Value | None]:
        """A divisor that cannot trap (x / 0 and INT_MIN / -1 kill the process on x86), and the
        "divided by zero" mask; results then follow numpy (0 for a zero divisor, wrap-around)."""
        lit = divisor.value if isinstance(divisor, tir.IntImm) else None
        if isinstance(divisor, tir.Broadcast) and isinstance(divisor.value, tir.IntImm):
            lit = divisor.value.value
        if lit is not None and lit != 0 and not (d.is_int and lit == -1):
            return b, None
        zero = ir.Constant(b.type, None)
        one_v = ir.Constant(b.type, 1 if not isinstance(b.type, ir.VectorType) else [1] * b.type.count)
        is_zero = self.b.icmp_unsigned("==", b, zero)
        bad = is_zero
        if d.is_int:
            min_int = -(1 << (d.bits - 1))
            minus_one = ir.Constant(b.type, -1 if not isinstance(b.type, ir.VectorType) else [-1] * b.type.count)
            min_c = ir.Constant(a.type, min_int if not isinstance(a.type, ir.VectorType) else [min_int] * a.type.count)
            overflow = self.b.and_(self.b.icmp_signed("==", a, min_c), self.b.icmp_signed("==", b, minus_one))
            bad = self.b.or_(is_zero, overflow)
        return self.b.select(bad, one_v, b), is_zero

    def _zero_where(self, mask: ir.Value | None, value: ir.Value) -> ir.Value:
        """``value`` with the lanes of ``mask`` set to 0 (division by zero)."""
        return value if mask is None else self.b.select(mask, ir.Constant(value.type, None), value)

    def visit_div_(self, op: tir.Div) -> ir.Value:
        """Truncating division for integers, true division for floats."""
        a, b, d = self._operands(op)
        if d.is_float:
            return self.b.fdiv(a, b, flags=self.fflags)
        b2, zero = self._safe_divisor(a, b, op.b, d)
        return self._zero_where(zero, self.b.sdiv(a, b2) if d.is_int else self.b.udiv(a, b2))

    def visit_mod_(self, op: tir.Mod) -> ir.Value:
        """Truncating remainder (``T.truncmod``); ``fmod`` for floats."""
        a, b, d = self._operands(op)
        if d.is_float:
            return self.b.frem(a, b, flags=self.fflags)
        b2, zero = self._safe_divisor(a, b, op.b, d)
        return self._zero_where(zero, self.b.srem(a, b2) if d.is_int else self.b.urem(a, b2))

    def _floor_parts(self, op: tir.BinaryOp) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value, ir.Value | None]:
        """(q, r, b, adjust, zero-mask) with truncating q, r and ``adjust`` true where the signs of
        ``r`` and ``b`` differ (floor division then rounds one further down)."""
        a, b, d = self._operands(op)
        b2, zero = self._safe_divisor(a, b, op.b, d)
        q, r = self.b.sdiv(a, b2), self.b.srem(a, b2)
        zero_c = ir.Constant(r.type, None)
        nonzero = self.b.icmp_signed("!=", r, zero_c)
        signs_differ = self.b.icmp_signed("<", self.b.xor(r, b2), zero_c)
        return q, r, b2, self.b.and_(nonzero, signs_differ), zero

    def visit_floor_div_(self, op: tir.FloorDiv) -> ir.Value:
        """Floor division (rounds toward minus infinity), ``floor(a / b)`` for floats."""
        d = parse_dtype(op.a.dtype)
        if d.is_float:
            a, b, _ = self._operands(op)
            return self._unary_intrinsic("llvm.floor", self.b.fdiv(a, b, flags=self.fflags))
        if d.is_uint or d.is_bool:
            a, b, _ = self._operands(op)
            b2, zero = self._safe_divisor(a, b, op.b, d)
            return self._zero_where(zero, self.b.udiv(a, b2))
        q, _, _, adjust, zero = self._floor_parts(op)
        return self._zero_where(zero, self.b.sub(q, self.b.zext(adjust, q.type)))

    def visit_floor_mod_(self, op: tir.FloorMod) -> ir.Value:
        """Remainder with the divisor's sign; ``a - floor(a / b) * b`` for floats."""
        d = parse_dtype(op.a.dtype)
        if d.is_float:
            a, b, _ = self._operands(op)
            f = self.fflags
            q = self._unary_intrinsic("llvm.floor", self.b.fdiv(a, b, flags=f))
            return self.b.fsub(a, self.b.fmul(q, b, flags=f), flags=f)
        if d.is_uint or d.is_bool:
            a, b, _ = self._operands(op)
            b2, zero = self._safe_divisor(a, b, op.b, d)
            return self._zero_where(zero, self.b.urem(a, b2))
        _, r, b2, adjust, zero = self._floor_parts(op)
        return self._zero_where(zero, self.b.add(r, self.b.select(adjust, b2, ir.Constant(r.type, None))))

    def _min_max(self, op: tir.BinaryOp, less: bool) -> ir.Value:
        """``select(a < b, a, b)`` or ``select(a > b, a, b)``."""
        a, b, d = self._operands(op)
        cmp = "<" if less else ">"
        if d.is_float:
            c = self.b.fcmp_ordered(cmp, a, b, flags=self.fflags if self.mb.target.fast_math else ())
        elif d.is_int:
            c = self.b.icmp_signed(cmp, a, b)
        else:
            c = self.b.icmp_unsigned(cmp, a, b)
        return self.b.select(c, a, b)

    def visit_min_(self, op: tir.Min) -> ir.Value:
        """``select(a < b, a, b)`` (TVM's lowering)."""
        return self._min_max(op, True)

    def visit_max_(self, op: tir.Max) -> ir.Value:
        """``select(a > b, a, b)``."""
        return self._min_max(op, False)

    # ---- comparisons and logic
    def _compare(self, op: tir.CmpOp, symbol: str) -> ir.Value:
        """A comparison: ordered float compares (``!=`` unordered), signed or unsigned integer ones."""
        a, b, d = self._operands(op)
        if d.is_float:
            # Ordered comparisons, except != which holds for NaN (IEEE and numpy).
            if symbol == "!=":
                return self.b.fcmp_unordered("!=", a, b)
            return self.b.fcmp_ordered(symbol, a, b)
        if d.is_handle:
            a, b = self.b.ptrtoint(a, _I64), self.b.ptrtoint(b, _I64)
        return self.b.icmp_signed(symbol, a, b) if d.is_int else self.b.icmp_unsigned(symbol, a, b)

    def visit_eq_(self, op: tir.EQ) -> ir.Value:
        return self._compare(op, "==")

    def visit_ne_(self, op: tir.NE) -> ir.Value:
        return self._compare(op, "!=")

    def visit_lt_(self, op: tir.LT) -> ir.Value:
        return self._compare(op, "<")

    def visit_le_(self, op: tir.LE) -> ir.Value:
        return self._compare(op, "<=")

    def visit_gt_(self, op: tir.GT) -> ir.Value:
        return self._compare(op, ">")

    def visit_ge_(self, op: tir.GE) -> ir.Value:
        return self._compare(op, ">=")

    def visit_and_(self, op: tir.And) -> ir.Value:
        """Both sides evaluated, as TVM does (``T.if_then_else`` is the short-circuiting form)."""
        a, b, _ = self._operands(op)
        return self.b.and_(a, b)

    def visit_or_(self, op: tir.Or) -> ir.Value:
        a, b, _ = self._operands(op)
        return self.b.or_(a, b)

    def visit_not_(self, op: tir.Not) -> ir.Value:
        return self.b.not_(self.expr(op.a))

    def visit_select_(self, op: tir.Select) -> ir.Value:
        """Both branches evaluated, then a ``select``."""
        c = self.expr(op.condition)
        t, f = self._match_lanes(self.expr(op.true_value), self.expr(op.false_value))
        if self._lanes_of(t) > 1 and self._lanes_of(c) == 1:
            c = self._splat(c, self._lanes_of(t))
        return self.b.select(c, t, f)

    def visit_tir_let_(self, op: tir.Let) -> ir.Value:
        """``T.Let``: bind, evaluate the body, unbind."""
        self.bind(op.var, self.expr(op.value))
        try:
            return self.expr(op.body)
        finally:
            del self.vars[op.var]

    # ---- vectors
    def visit_ramp_(self, op: tir.Ramp) -> ir.Value:
        """``base + stride * <0, 1, ..., lanes-1>``."""
        base, stride = self.expr(op.base), self.expr(op.stride)
        d = parse_dtype(op.base.dtype)
        n = op.lanes
        iota = ir.Constant(ir.VectorType(base.type, n), [float(i) if d.is_float else i for i in range(n)])
        if d.is_float:
            return self.b.fadd(self._splat(base, n), self.b.fmul(self._splat(stride, n), iota))
        return self.b.add(self._splat(base, n), self.b.mul(self._splat(stride, n), iota))

    def visit_broadcast_(self, op: tir.Broadcast) -> ir.Value:
        return self._splat(self.expr(op.value), op.lanes)

    # ---- memory
    def _data(self, buf: tir.Buffer) -> ir.Value:
        """The pointer bound to ``buf``'s data variable."""
        ptr = self.vars.get(buf.data)
        if ptr is None:
            raise CodegenError(f"{self.func_name}: buffer '{buf.name}' is used where its data "
                               f"'{buf.data.name}' is not defined")
        return ptr

    def _index64(self, e: tir.PrimExpr) -> ir.Value:
        """An index as i64 (scalar or vector), sign- or zero-extended by its dtype."""
        if isinstance(e, tir.IntImm):
            return ir.Constant(_I64, _wrap64(e.value))
        v = self.expr(e)
        d = parse_dtype(e.dtype)
        if not (d.is_integer or d.is_bool):
            raise CodegenError(f"{self.func_name}: buffer index {_excerpt(e)} has dtype {e.dtype}, not an integer")
        t = self._like(v, _I64)
        if d.bits == 64:
            return v
        return self.b.sext(v, t) if d.is_int else self.b.zext(v, t)

    def _i64(self, fn: Callable[..., ir.Value], a: ir.Value, b: ir.Value) -> ir.Value:
        """``a + b`` or ``a * b`` on i64 index values; constants are folded so the unoptimised IR
        stays readable (``x + 0``, ``x * 1``, ``2 * 8``)."""
        ca, cb = _const_int(a), _const_int(b)
        add = fn == self.b.add
        if ca is not None and cb is not None:
            return ir.Constant(_I64, _wrap64(ca + cb if add else ca * cb))
        for c, other in ((ca, b), (cb, a)):
            if c == (0 if add else 1):
                return other
        a, b = self._match_lanes(a, b)
        return fn(a, b, flags=("nsw",))

    def _offset(self, buf: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> ir.Value:
        """The element offset of an access: row-major over the shape, or through the strides, plus
        ``elem_offset``; one index is always a flat offset."""
        if len(indices) != 1 and len(indices) != len(buf.shape):
            raise CodegenError(f"{self.func_name}: buffer '{buf.name}' has {len(buf.shape)} dimensions "
                               f"but is accessed with {len(indices)} indices")
        if len(indices) == 1 and (len(buf.shape) <= 1 or not buf.strides):
            off = self._index64(indices[0])
            if len(buf.strides) == 1:
                off = self._i64(self.b.mul, off, self._index64(buf.strides[0]))
        elif buf.strides:
            off = None
            for idx, stride in zip(indices, buf.strides):
                term = self._i64(self.b.mul, self._index64(idx), self._index64(stride))
                off = term if off is None else self._i64(self.b.add, off, term)
        else:
            off = self._index64(indices[0])
            for idx, dim in zip(indices[1:], buf.shape[1:]):
                off = self._i64(self.b.add, self._i64(self.b.mul, off, self._index64(dim)), self._index64(idx))
        if buf.elem_offset is not None and not self._is_zero_const(buf.elem_offset):
            off = self._i64(self.b.add, off, self._index64(buf.elem_offset))
        return off

    def _contiguous_base(self, buf: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...] | None:
        """The indices of the first lane when the access is a unit-stride Ramp in the last
        dimension (a plain vector load/store), else None."""
        if not indices or parse_dtype(buf.dtype).lanes > 1:
            return None
        last = indices[-1]
        if not (isinstance(last, tir.Ramp) and isinstance(last.stride, tir.IntImm) and last.stride.value == 1):
            return None
        if any(parse_dtype(i.dtype).lanes > 1 for i in indices[:-1]):
            return None
        if buf.strides and not (isinstance(buf.strides[-1], tir.IntImm) and buf.strides[-1].value == 1):
            return None
        return (*indices[:-1], last.base)

    def _gep(self, buf: tir.Buffer, offset: ir.Value) -> ir.Value:
        """The address of element ``offset`` of ``buf``."""
        return self.b.gep(self._data(buf), [offset], inbounds=True, source_etype=mem_type(buf.dtype))

    def _from_mem(self, v: ir.Value, dtype: str) -> ir.Value:
        """A loaded value in register form (bytes to i1 for bool)."""
        if parse_dtype(dtype).is_bool:
            return self.b.icmp_unsigned("!=", v, ir.Constant(v.type, None))
        return v

    def _to_mem(self, v: ir.Value, dtype: str) -> ir.Value:
        """A register value in memory form (i1 to a byte for bool)."""
        if parse_dtype(dtype).is_bool:
            return self.b.zext(v, self._like(v, _I8))
        return v

    def _align(self, dtype: str) -> int:
        """The natural alignment of one element of ``dtype``."""
        d = parse_dtype(dtype)
        return max(1, d.bits // 8)

    def visit_buffer_load_(self, op: tir.BufferLoad) -> ir.Value:
        """A load: scalar, a contiguous vector (unit-stride Ramp) or a gather lane by lane."""
        buf = op.buffer
        lanes = parse_dtype(op.dtype).lanes
        elem = mem_type(buf.dtype)
        align = self._align(buf.dtype)
        if lanes == 1 or parse_dtype(buf.dtype).lanes == lanes:
            v = self.b.load(self._gep(buf, self._offset(buf, op.indices)), typ=elem, align=align)
            return self._from_mem(v, op.dtype)
        base = self._contiguous_base(buf, op.indices)
        if base is not None:
            vty = ir.VectorType(elem, lanes)
            v = self.b.load(self._gep(buf, self._offset(buf, base)), typ=vty, align=align)
            return self._from_mem(v, op.dtype)
        offsets = self._offset(buf, op.indices)
        out = ir.Constant(ir.VectorType(elem, lanes), ir.Undefined)
        for k in range(lanes):
            off = self.b.extract_element(offsets, ir.Constant(_I32, k))
            lane = self.b.load(self._gep(buf, off), typ=elem, align=align)
            out = self.b.insert_element(out, lane, ir.Constant(_I32, k))
        return self._from_mem(out, op.dtype)

    def visit_buffer_store_(self, op: tir.BufferStore) -> None:
        """A store: scalar, contiguous vector or a scatter lane by lane."""
        buf = op.buffer
        value = self._to_mem(self.expr(op.value), op.value.dtype)
        lanes = self._lanes_of(value)
        align = self._align(buf.dtype)
        idx_lanes = max(parse_dtype(i.dtype).lanes for i in op.indices) if op.indices else 1
        if idx_lanes == 1:
            if lanes > 1 and parse_dtype(buf.dtype).lanes != lanes:
                raise CodegenError(f"{self.func_name}: storing a {op.value.dtype} value into one element "
                                   f"of '{buf.name}' ({buf.dtype})")
            self.b.store(value, self._gep(buf, self._offset(buf, op.indices)), align=align)
            return
        if lanes == 1:
            value = self._splat(value, idx_lanes)
        base = self._contiguous_base(buf, op.indices)
        if base is not None:
            self.b.store(value, self._gep(buf, self._offset(buf, base)), align=align)
            return
        offsets = self._offset(buf, op.indices)
        for k in range(idx_lanes):
            kc = ir.Constant(_I32, k)
            self.b.store(self.b.extract_element(value, kc), self._gep(buf, self.b.extract_element(offsets, kc)),
                         align=align)

    # ---- calls (intrinsics)
    def visit_tir_call_(self, op: tir.Call) -> ir.Value:
        """An intrinsic of the table (lowered as its entry says) or a builtin (``tir.ret`` -> ``_call_ret``)."""
        if not isinstance(op.op, str):
            raise CodegenError(f"{self.func_name}: calls between functions ({_excerpt(op)}) are not "
                               f"supported by the LLVM backend")
        short = op.op[4:] if op.op.startswith("tir.") else op.op
        info = intrinsic(short)
        if info is not None:
            return self._lower_intrinsic(op, info)
        handler = getattr(self, f"_call_{short}", None)  # the builtins: extern calls, ret, assume...
        if handler is None:
            raise CodegenError(f"{self.func_name}: the LLVM backend has no lowering for the intrinsic "
                               f"{op.op} (in {_excerpt(op)})")
        return handler(op)

    def _lower_intrinsic(self, op: tir.Call, info: Intrinsic) -> ir.Value:
        """A table intrinsic, as its entry in ``ir/intrinsics.py`` lowers it."""
        kind, name = info.lowering
        if kind == "expand":
            return getattr(self, f"_expand_{name}")(op)
        if info.args == "float" and not parse_dtype(op.args[0].dtype).is_float:
            what = "a float argument" if info.arity == 1 else "float arguments"
            raise CodegenError(f"{self.func_name}: {op.op} needs {what}, got {op.args[0].dtype}")
        if kind == "libm":
            return self._libm(op, name)
        if info.arity == 1:
            return self._unary_intrinsic(name, self.expr(op.args[0]))
        return self._binary_intrinsic(op, name)

    def _unary_intrinsic(self, name: str, x: ir.Value) -> ir.Value:
        """Call the overloaded LLVM intrinsic ``name`` on ``x``."""
        fn = self.mb.intrinsic(name, x.type, [x.type], [x.type])
        is_float = isinstance(getattr(x.type, "element", x.type), (ir.HalfType, ir.FloatType, ir.DoubleType))
        return self.b.call(fn, [x], fastmath=self.fflags if is_float else ())  # LLVM refuses flags on ints

    def _per_lane(self, x: ir.Value, fn: Callable[[ir.Value], ir.Value]) -> ir.Value:
        """Apply a scalar function to every lane of a vector."""
        if not isinstance(x.type, ir.VectorType):
            return fn(x)
        out = None
        for k in range(x.type.count):
            kc = ir.Constant(_I32, k)
            lane = fn(self.b.extract_element(x, kc))
            if out is None:
                out = ir.Constant(ir.VectorType(lane.type, x.type.count), ir.Undefined)
            out = self.b.insert_element(out, lane, kc)
        return out

    def _libm(self, op: tir.Call, name: str) -> ir.Value:
        """A libm function (``erff``/``erf``); float16 goes through float32."""
        args = [self.expr(a) for a in op.args]
        d = parse_dtype(op.args[0].dtype)
        if not d.is_float:
            raise CodegenError(f"{self.func_name}: {op.op} needs float arguments, got {op.args[0].dtype}")

        def scalar(*xs: ir.Value) -> ir.Value:
            """One libm call on scalars (float16 through float32)."""
            half = xs[0].type == ir.HalfType()
            if half:
                xs = tuple(self.b.fpext(x, ir.FloatType()) for x in xs)
            t = xs[0].type
            sym = name + ("f" if t == ir.FloatType() else "")
            fn = self.mb.function(sym, ir.FunctionType(t, [t] * len(xs)))
            r = self.b.call(fn, list(xs))
            return self.b.fptrunc(r, ir.HalfType()) if half else r

        if len(args) == 1:
            return self._per_lane(args[0], scalar)
        a, b = self._match_lanes(*args)
        if not isinstance(a.type, ir.VectorType):
            return scalar(a, b)
        out = ir.Constant(a.type, ir.Undefined)
        for k in range(a.type.count):
            kc = ir.Constant(_I32, k)
            out = self.b.insert_element(out, scalar(self.b.extract_element(a, kc), self.b.extract_element(b, kc)), kc)
        return out

    def _binary_intrinsic(self, op: tir.Call, name: str) -> ir.Value:
        """A two-operand LLVM intrinsic on matched operands."""
        a, b = self._match_lanes(self.expr(op.args[0]), self.expr(op.args[1]))
        fn = self.mb.intrinsic(name, a.type, [a.type, a.type], [a.type])
        return self.b.call(fn, [a, b], fastmath=self.fflags)

    def _expand_fmod(self, op: tir.Call) -> ir.Value:
        """``frem`` (C's fmod)."""
        a, b = self._match_lanes(self.expr(op.args[0]), self.expr(op.args[1]))
        return self.b.frem(a, b, flags=self.fflags)

    def _expand_ldexp(self, op: tir.Call) -> ir.Value:
        """``x * 2**e`` with an int32 exponent."""
        x = self.expr(op.args[0])
        lanes = self._lanes_of(x)
        e = self._cast(self.expr(op.args[1]), op.args[1].dtype, "int32" if lanes == 1 else f"int32x{lanes}")
        half = parse_dtype(op.args[0].dtype).bits == 16
        if half:  # x86 has no half ldexp (llvm.ldexp.f16 gives garbage): exact in float32, one rounding back
            half_type = x.type
            x = self.b.fpext(x, ir.FloatType() if lanes == 1 else ir.VectorType(ir.FloatType(), lanes))
        fn = self.mb.intrinsic("llvm.ldexp", x.type, [x.type, e.type], [x.type, e.type])
        r = self.b.call(fn, [x, e])
        return self.b.fptrunc(r, half_type) if half else r

    def _expand_nextafter(self, op: tir.Call) -> ir.Value:
        """libm ``nextafter``; float16 steps its own bit pattern (float32's next value rounds back to x)."""
        if parse_dtype(op.args[0].dtype).bits != 16:
            return self._libm(op, "nextafter")
        a, b = self._match_lanes(self.expr(op.args[0]), self.expr(op.args[1]))
        if not isinstance(a.type, ir.VectorType):
            return self._half_nextafter(a, b)
        out = ir.Constant(a.type, ir.Undefined)
        for k in range(a.type.count):
            kc = ir.Constant(_I32, k)
            lane = self._half_nextafter(self.b.extract_element(a, kc), self.b.extract_element(b, kc))
            out = self.b.insert_element(out, lane, kc)
        return out

    def _half_nextafter(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """C's nextafter on scalar halves: NaN if either is, y if equal, the smallest subnormal of y's
        sign from zero, else x's bits one step up in magnitude (towards y) or down."""
        half, zero = ir.HalfType(), ir.Constant(ir.HalfType(), 0.0)
        bits = self.b.bitcast(x, _I16)
        grow = self.b.icmp_unsigned("==", self.b.fcmp_ordered(">", y, x), self.b.fcmp_ordered(">", x, zero))
        stepped = self.b.select(grow, self.b.add(bits, ir.Constant(_I16, 1)), self.b.sub(bits, ir.Constant(_I16, 1)))
        tiny = self.b.or_(self.b.and_(self.b.bitcast(y, _I16), ir.Constant(_I16, 0x8000)), ir.Constant(_I16, 1))
        r = self.b.bitcast(self.b.select(self.b.fcmp_ordered("==", x, zero), tiny, stepped), half)
        r = self.b.select(self.b.fcmp_ordered("==", x, y), y, r)
        return self.b.select(self.b.fcmp_unordered("uno", x, y), self.b.fadd(x, y), r)

    def _expand_rsqrt(self, op: tir.Call) -> ir.Value:
        """``1 / sqrt(x)``."""
        x = self.expr(op.args[0])
        one = ir.Constant(x.type, 1.0 if not isinstance(x.type, ir.VectorType) else [1.0] * x.type.count)
        return self.b.fdiv(one, self._unary_intrinsic("llvm.sqrt", x), flags=self.fflags)

    def _expand_sigmoid(self, op: tir.Call) -> ir.Value:
        """``1 / (1 + exp(-x))``."""
        x = self.expr(op.args[0])
        one = ir.Constant(x.type, 1.0 if not isinstance(x.type, ir.VectorType) else [1.0] * x.type.count)
        e = self._unary_intrinsic("llvm.exp", self.b.fneg(x, flags=self.fflags))
        return self.b.fdiv(one, self.b.fadd(one, e, flags=self.fflags), flags=self.fflags)

    def _fabs(self, x: ir.Value) -> ir.Value:
        """``|x|``."""
        return self._unary_intrinsic("llvm.fabs", x)

    def _inf(self, x: ir.Value) -> ir.Constant:
        """+infinity of ``x``'s type."""
        inf = float("inf")
        return ir.Constant(x.type, inf if not isinstance(x.type, ir.VectorType) else [inf] * x.type.count)

    def _expand_isnan(self, op: tir.Call) -> ir.Value:
        """``x != x`` (unordered)."""
        x = self.expr(op.args[0])
        return self.b.fcmp_unordered("uno", x, x)

    def _expand_isinf(self, op: tir.Call) -> ir.Value:
        """``|x| == inf``."""
        x = self.expr(op.args[0])
        return self.b.fcmp_ordered("==", self._fabs(x), self._inf(x))

    def _expand_isfinite(self, op: tir.Call) -> ir.Value:
        """``|x| < inf`` (false for NaN)."""
        x = self.expr(op.args[0])
        return self.b.fcmp_ordered("<", self._fabs(x), self._inf(x))

    def _int_binary(self, op: tir.Call, fn: Callable[[ir.Value, ir.Value], ir.Value]) -> ir.Value:
        """A two-operand integer instruction on matched operands."""
        a, b = self._match_lanes(self.expr(op.args[0]), self.expr(op.args[1]))
        return fn(a, b)

    def _expand_bitwise_and(self, op: tir.Call) -> ir.Value:
        """``a & b``."""
        return self._int_binary(op, self.b.and_)

    def _expand_bitwise_or(self, op: tir.Call) -> ir.Value:
        """``a | b``."""
        return self._int_binary(op, self.b.or_)

    def _expand_bitwise_xor(self, op: tir.Call) -> ir.Value:
        """``a ^ b``."""
        return self._int_binary(op, self.b.xor)

    def _expand_bitwise_not(self, op: tir.Call) -> ir.Value:
        """``~a``."""
        return self.b.not_(self.expr(op.args[0]))

    def _expand_shift_left(self, op: tir.Call) -> ir.Value:
        """``a << b``."""
        return self._int_binary(op, self.b.shl)

    def _expand_shift_right(self, op: tir.Call) -> ir.Value:
        """Arithmetic shift for signed integers, logical for unsigned ones."""
        return self._int_binary(op, self.b.ashr if parse_dtype(op.args[0].dtype).is_int else self.b.lshr)

    def _expand_clz(self, op: tir.Call) -> ir.Value:
        """``llvm.ctlz`` (defined for 0)."""
        x = self.expr(op.args[0])
        fn = self.mb.intrinsic("llvm.ctlz", x.type, [x.type, _I1], [x.type])
        return self.b.call(fn, [x, ir.Constant(_I1, 0)])

    def _call_reinterpret(self, op: tir.Call) -> ir.Value:
        """Bit-for-bit reinterpretation between types of one size."""
        x = self.expr(op.args[0])
        t = llvm_type(op.dtype)
        if parse_dtype(op.dtype).bits * parse_dtype(op.dtype).lanes != _bits(op.args[0].dtype):
            raise CodegenError(f"{self.func_name}: T.reinterpret from {op.args[0].dtype} to {op.dtype} "
                               f"changes the size")
        if x.type == _PTR or t == _PTR:
            return self.b.ptrtoint(x, t) if x.type == _PTR else self.b.inttoptr(x, t)
        return self.b.bitcast(x, t)

    def _expand_likely(self, op: tir.Call) -> ir.Value:
        """The condition itself (a branch-weight hint only)."""
        return self.expr(op.args[0])

    def _call_assume(self, op: tir.Call) -> ir.Value:
        """``llvm.assume``; the value is the condition."""
        c = self.expr(op.args[0])
        self.b.call(self.mb.function("llvm.assume", ir.FunctionType(ir.VoidType(), [_I1])), [c])
        return c

    def _expand_if_then_else(self, op: tir.Call) -> ir.Value:
        """Short-circuit: only the taken branch is evaluated (a ``select`` for vector conditions)."""
        cond_e, t_e, f_e = op.args
        if parse_dtype(cond_e.dtype).lanes > 1:
            c = self.expr(cond_e)
            t, f = self._match_lanes(self.expr(t_e), self.expr(f_e))
            return self.b.select(c, t, f)
        c = self.expr(cond_e)
        then_bb = self.fn.append_basic_block("ite.then")
        else_bb = self.fn.append_basic_block("ite.else")
        done_bb = self.fn.append_basic_block("ite.end")
        self.b.cbranch(c, then_bb, else_bb)
        self.b.position_at_end(then_bb)
        tv = self.expr(t_e)
        then_end = self.b.block
        self.b.branch(done_bb)
        self.b.position_at_end(else_bb)
        fv = self.expr(f_e)
        else_end = self.b.block
        self.b.branch(done_bb)
        self.b.position_at_end(done_bb)
        phi = self.b.phi(tv.type)
        phi.add_incoming(tv, then_end)
        phi.add_incoming(fv, else_end)
        return phi

    def _extern(self, op: tir.Call) -> ir.Value:
        """``T.call_extern(dtype, "name", args...)``: a C function resolved in the process."""
        if not op.args or not isinstance(op.args[0], tir.StringImm):
            raise CodegenError(f"{self.func_name}: {op.op} needs the function name first")
        args = [self.expr(a) for a in op.args[1:]]
        ret = ir.VoidType() if op.dtype == "void" else llvm_type(op.dtype)
        fn = self.mb.function(op.args[0].value, ir.FunctionType(ret, [a.type for a in args]))
        r = self.b.call(fn, args)
        return ir.Constant(_I32, 0) if op.dtype == "void" else r

    _call_call_extern = _call_call_pure_extern = _extern

    def _llvm_intrin(self, op: tir.Call) -> ir.Value:
        """``T.call_llvm_(pure_)intrin(dtype, "llvm.name", nsig, args...)``."""
        if not op.args or not isinstance(op.args[0], tir.StringImm):
            raise CodegenError(f"{self.func_name}: {op.op} needs the LLVM intrinsic name first")
        rest = op.args[1:]
        if rest and isinstance(rest[0], tir.IntImm) and rest[0].dtype.startswith("uint"):
            rest = rest[1:]  # TVM's signature-count argument
        args = [self.expr(a) for a in rest]
        name = op.args[0].value
        ret = llvm_type(op.dtype)
        if not any(ch.isdigit() for ch in name.rsplit(".", 1)[-1]):
            name = f"{name}.{_type_suffix(ret)}"
        fn = self.mb.function(name, ir.FunctionType(ret, [a.type for a in args]))
        return self.b.call(fn, args, fastmath=self.fflags if parse_dtype(op.dtype).is_float else ())

    _call_call_llvm_intrin = _call_call_llvm_pure_intrin = _llvm_intrin

    def _call_ret(self, op: tir.Call) -> ir.Value:
        """``return v``: store the value, free the heap, return success."""
        if self.ret_ptr is None:
            raise CodegenError(f"{self.func_name}: 'return' needs a return type on the PrimFunc (-> T.int32 ...)")
        v = self._cast(self.expr(op.args[0]), op.args[0].dtype, self.ret_dtype)
        self.b.store(self._to_mem(v, self.ret_dtype), self.ret_ptr)
        self._fail(0)
        self.b.position_at_end(self.fn.append_basic_block("after.ret"))
        return ir.Constant(_I32, 0)

    # ---- statements
    def visit_seq_stmt_(self, op: tir.SeqStmt) -> None:
        for s in op.seq:
            self.stmt(s)

    def visit_evaluate_(self, op: tir.Evaluate) -> None:
        """Evaluate for side effects (constants are dropped)."""
        if not isinstance(op.value, (tir.IntImm, tir.FloatImm)):
            self.expr(op.value)

    def visit_let_stmt_(self, op: tir.LetStmt) -> None:
        self.bind(op.var, self.expr(op.value))
        try:
            self.stmt(op.body)
        finally:
            del self.vars[op.var]

    def visit_attr_stmt_(self, op: tir.AttrStmt) -> None:
        """Attributes are hints: ``tvmlite.reassoc`` allows reassociation in its body; the others
        the CPU backend does not need."""
        on = op.attr_key == REASSOC_KEY and _truthy(op.value)
        self.reassoc += on
        try:
            self.stmt(op.body)
        finally:
            self.reassoc -= on

    def visit_assert_stmt_(self, op: tir.AssertStmt) -> None:
        """A failed assert returns its message's code (the wrapper raises it); never aborts."""
        msg = op.message.value if isinstance(op.message, tir.StringImm) else _excerpt(op.message)
        shown = tuple((v.name, self.reported[v]) for v in scalar_vars_of(op.condition) if v in self.reported)
        code = self.mb.message_code(f"{self.func_name}: assertion failed: {msg}"
                                    if msg else f"{self.func_name}: assertion failed: {_excerpt(op.condition)}", shown)
        ok = self.expr(op.condition)
        with self.b.if_then(self.b.not_(ok), likely=False):
            self._fail(code)
        self.stmt(op.body)

    def visit_if_then_else_(self, op: tir.IfThenElse) -> None:
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
        head = self.fn.append_basic_block("while.cond")
        body = self.fn.append_basic_block("while.body")
        done = self.fn.append_basic_block("while.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(self.expr(op.condition), body, done)
        self.b.position_at_end(body)
        self.stmt(op.body)
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(done)

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
        self._loop(op.loop_var, lo, ext, step, lambda: self.stmt(op.body), hints)

    def _loop(self, var: tir.Var, lo: ir.Value, ext: ir.Value, step: ir.Value, body: Callable[[], None],
              hints: list[tuple[str, Any]]) -> None:
        """A guarded bottom-tested loop ``for var in range(lo, lo + ext, step)`` (values of the var's type)."""
        d = parse_dtype(var.dtype)
        t = llvm_type(var.dtype)
        flags = self._int_flags(d)
        hi = ext if _const_int(lo) == 0 else self.b.add(lo, ext, flags=flags)
        less = self.b.icmp_signed if d.is_int else self.b.icmp_unsigned
        pre = self.b.block
        body_bb = self.fn.append_basic_block(f"for.{var.name}")
        done = self.fn.append_basic_block(f"for.{var.name}.end")
        self.b.cbranch(less("<", lo, hi), body_bb, done)
        self.b.position_at_end(body_bb)
        iv = self.b.phi(t, name=var.name)
        iv.add_incoming(lo, pre)
        self.vars[var] = iv
        try:
            body()
        finally:
            del self.vars[var]
        if not self.b.block.is_terminated:
            nxt = self.b.add(iv, step, flags=flags)
            latch = self.b.cbranch(less("<", nxt, hi), body_bb, done)
            iv.add_incoming(nxt, self.b.block)
            latch.set_metadata("llvm.loop", self.mb.loop_id([("llvm.loop.mustprogress", None), *hints]))
        self.b.position_at_end(done)

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
            ext64 = self.b.sdiv(self.b.add(ext64, self.b.sub(step64, ir.Constant(_I64, 1))), step64)
        else:
            step64 = ir.Constant(_I64, 1)
        fields = [val.type for _, val in free] + [_I64, _I64]  # + lo, step
        struct = ir.LiteralStructType(fields)
        closure = self._alloca(struct, name="closure")
        for k, val in enumerate([val for _, val in free] + [lo64, step64]):
            self.b.store(val, self.b.gep(closure, [ir.Constant(_I32, 0), ir.Constant(_I32, k)],
                                         inbounds=True, source_etype=struct))
        worker = self._outline(op, free, struct)
        launch = self.mb.function(PARALLEL_FOR_SYMBOL, ir.FunctionType(_I32, [_PTR, _PTR, _I64, _I64]))
        status = self.b.call(launch, [worker, closure, ir.Constant(_I64, 0), ext64])
        self._check_status(status)

    def _outline(self, op: tir.For, free: list[tuple[list[tir.Var], ir.Value]],
                 struct: ir.LiteralStructType) -> ir.Function:
        """The worker ``i32 (i64 begin, i64 end, ptr closure)`` and its body function."""
        base = f"{self.fn.name}.parallel{self.parallel_count}"
        self.parallel_count += 1
        # The body: (begin, end, lo, step, free values...) with noalias on distinct buffers.
        body_ty = ir.FunctionType(_I32, [_I64, _I64, _I64, _I64, *[val.type for _, val in free]])
        body_fn = ir.Function(self.mb.module, body_ty, name=f"{base}.body")
        body_fn.linkage = "internal"
        body_fn.attributes.add("nounwind")
        inner = _FunctionBuilder(self.mb, body_fn, self.func_name, in_parallel=True)
        inner.reassoc = self.reassoc
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
            i64 = inner.b.add(lo, inner.b.mul(kv, step, flags=("nsw",)), flags=("nsw",))
            inner.bind(loop_var, i64)
            try:
                inner.stmt(op.body)
            finally:
                del inner.vars[loop_var]

        inner._loop(k, begin, inner.b.sub(end, begin), ir.Constant(_I64, 1), body, [])
        inner.finish()
        # The trampoline the pool calls.
        worker = ir.Function(self.mb.module, _WORKER_TY, name=base)
        worker.linkage = "internal"
        worker.attributes.add("nounwind")
        wb = ir.IRBuilder(worker.append_basic_block("entry"))
        wbegin, wend, wclosure = worker.args
        loaded = []
        for idx in range(len(struct.elements)):
            p = wb.gep(wclosure, [ir.Constant(_I32, 0), ir.Constant(_I32, idx)], inbounds=True, source_etype=struct)
            loaded.append(wb.load(p, typ=struct.elements[idx]))
        values, lo_v, step_v = loaded[:-2], loaded[-2], loaded[-1]
        wb.ret(wb.call(body_fn, [wbegin, wend, lo_v, step_v, *values]))
        return worker

    def _allocate(self, var: tir.Var, dtype: str, extents: tuple[tir.PrimExpr, ...], body: tir.Stmt, name: str) -> None:
        """Storage for ``body``: the stack for small constant sizes, else ``aligned_alloc``/``free``
        (a failed allocation returns an error code instead of crashing)."""
        elem = mem_type(dtype)
        nbytes = _elem_bytes(dtype)
        sizes = [e.value for e in extents if isinstance(e, tir.IntImm)]
        if len(sizes) == len(extents):
            count = 1
            for s in sizes:
                count *= s
            if count * nbytes <= STACK_LIMIT:
                slot = self._alloca(ir.ArrayType(elem, max(count, 1)), name=name)
                self.vars[var] = slot
                self.noalias_vars.add(id(var))
                try:
                    self.stmt(body)
                finally:
                    del self.vars[var]
                return
        total = ir.Constant(_I64, nbytes)
        for e in extents:
            total = self.b.mul(total, self._index64(e), flags=("nsw",))
        # aligned_alloc wants a multiple of the alignment (and at least one block).
        rounded = self.b.and_(self.b.add(total, ir.Constant(_I64, _ALIGN)), ir.Constant(_I64, -_ALIGN))
        alloc = self.mb.function("aligned_alloc", ir.FunctionType(_PTR, [_I64, _I64]))
        ptr = self.b.call(alloc, [ir.Constant(_I64, _ALIGN), rounded], name=name)
        code = self.mb.message_code(f"{self.func_name}: out of memory allocating buffer '{name}'")
        with self.b.if_then(self.b.icmp_unsigned("==", ptr, ir.Constant(_PTR, None)), likely=False):
            self._fail(code)
        self.vars[var] = ptr
        self.noalias_vars.add(id(var))
        self.heap.append(ptr)
        try:
            self.stmt(body)
        finally:
            del self.vars[var]
            self.heap.pop()
        if not self.b.block.is_terminated:
            self._free_heap([ptr])

    def visit_allocate_(self, op: tir.Allocate) -> None:
        self._allocate(op.buffer_var, op.dtype, op.extents, op.body, op.buffer_var.name)

    def visit_decl_buffer_(self, op: tir.DeclBuffer) -> None:
        """A view of existing data, or (when its data is not yet defined) a new allocation."""
        if op.buffer.data in self.vars:
            self.stmt(op.body)
            return
        self._allocate(op.buffer.data, op.buffer.dtype, op.buffer.shape, op.body, op.buffer.name)

    def _blocks_left(self, op: tir.Stmt) -> None:
        """Blocks must have been lowered away."""
        raise CodegenError(f"{self.func_name}: the LLVM backend needs block-free TIR, but the function "
                           f"still has blocks; run the lowering passes (tvmlite.passes.get_pipeline"
                           f"(\"lower\")) first")

    visit_block_ = visit_block_realize_ = _blocks_left


def _truthy(value: Any) -> bool:
    """An annotation value that switches a hint on (a non-zero IntImm, True, 1)."""
    if isinstance(value, tir.IntImm):
        return value.value != 0
    return bool(value) if isinstance(value, (bool, int)) else False


def _const_int(v: ir.Value) -> int | None:
    """The value of a scalar integer constant, else None."""
    if isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType) and isinstance(v.constant, int):
        return v.constant
    return None


def _wrap64(value: int) -> int:
    """``value`` as a signed 64-bit integer."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _bits(dtype: str) -> int:
    """Total bits of ``dtype`` (all lanes)."""
    d = parse_dtype(dtype)
    return d.bits * d.lanes


def _excerpt(node: Any, limit: int = 200) -> str:
    """A short printed form of a node for error messages."""
    try:
        text = node.script() if hasattr(node, "script") else str(node)
    except Exception:  # printing must not hide the real error
        text = type(node).__name__
    return text if len(text) <= limit else text[:limit] + " ..."


# ---------------------------------------------------------------------------------------------
# Entry points


@dataclasses.dataclass
class LLVMModule:
    """The LLVM code of one IRModule: unoptimised IR text, per-function signatures, the message
    table of the status codes; ``optimize``/``emit_*`` run LLVM on a fresh copy each time."""

    target: Target
    llvm_ir: str
    signatures: dict[str, FuncSignature]
    messages: tuple[str, ...]
    # Per message: (name, argument position) of the values a failure reports (see message_code).
    message_values: tuple[tuple[tuple[str, int], ...], ...] = ()
    _optimized: str | None = None

    @property
    def uses_parallel(self) -> bool:
        """Whether any function runs a parallel loop on the thread pool."""
        return any(s.uses_parallel for s in self.signatures.values())

    def parse(self) -> Any:
        """A fresh, verified llvmlite ModuleRef of the unoptimised IR."""
        llvm = _llvm()
        mod = llvm.parse_assembly(self.llvm_ir)
        mod.verify()
        return mod

    def optimized_module(self, tm: Any | None = None) -> Any:
        """A ModuleRef optimised at the target's opt level with the new pass manager."""
        llvm = _llvm()
        tm = tm or self.target.create_target_machine()
        mod = self.parse()
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        level = self.target.opt_level
        if level > 0:
            pto = llvm.create_pipeline_tuning_options(speed_level=level)
            pto.loop_vectorization = level >= 2
            pto.slp_vectorization = level >= 2
            pto.loop_unrolling = level >= 2
            pb = llvm.create_pass_builder(tm, pto)
            pb.getModulePassManager().run(mod, pb)
        return mod

    @property
    def optimized_ir(self) -> str:
        """The optimised IR text (computed once)."""
        if self._optimized is None:
            self._optimized = str(self.optimized_module())
        return self._optimized

    def emit_assembly(self) -> str:
        """Target assembly of the optimised module."""
        tm = self.target.create_target_machine()
        return tm.emit_assembly(self.optimized_module(tm))

    def emit_object(self, pic: bool = True) -> bytes:
        """A relocatable object file of the optimised module (PIC, for shared libraries)."""
        tm = self.target.create_target_machine(pic=pic)
        return tm.emit_object(self.optimized_module(tm))


def codegen(mod: IRModule | tir.PrimFunc, target: str | Target | None = None) -> LLVMModule:
    """Compile every PrimFunc of ``mod`` (block-free TIR) into one LLVM module. Functions of other
    kinds (Relax) are left to the VM."""
    tgt = Target.of(target)
    if isinstance(mod, tir.PrimFunc):
        mod = IRModule.from_expr(mod)
    mb = _ModuleBuilder(tgt, "tvmlite")
    signatures: dict[str, FuncSignature] = {}
    for gv, func in mod.functions_items():
        if not isinstance(func, tir.PrimFunc):
            continue
        signatures[gv.name_hint] = _emit_function(mb, gv.name_hint, func)
    if not signatures:
        raise CodegenError("the module has no PrimFunc to compile")
    text = str(mb.module)
    llvm = _llvm()
    try:
        ref = llvm.parse_assembly(text)
        ref.verify()
        ref.name = "tvmlite"
    except RuntimeError as err:  # a codegen bug: say so with the IR that LLVM rejected
        raise CodegenError(f"internal error: LLVM rejected the generated IR: {err}\n{text}") from None
    return LLVMModule(tgt, str(ref), signatures, tuple(mb.messages), tuple(mb.message_values))


def signature(name: str, func: tir.PrimFunc) -> FuncSignature:
    """The native signature the code generator gives PrimFunc ``name``."""
    has_parallel = [False]

    def find(n: Any) -> None:
        """Note a parallel loop."""
        if isinstance(n, tir.For) and n.kind == tir.ForKind.PARALLEL:
            has_parallel[0] = True

    post_order_visit(func.body, find)
    return _signature(name, func, has_parallel[0])


def _emit_function(mb: _ModuleBuilder, name: str, func: tir.PrimFunc) -> FuncSignature:
    """Emit ``tvmlite_<name>`` for one PrimFunc and return its signature."""
    if contains_blocks(func):
        raise CodegenError(f"{name}: the LLVM backend needs block-free TIR, but the function still has "
                           f"blocks; run the lowering passes (tvmlite.passes.get_pipeline(\"lower\")) first")
    sig = signature(name, func)
    arg_types: list[ir.Type] = [_PTR] * len(sig.buffer_params) + [_I64] * len(sig.sym_vars)
    arg_types += [abi_type(p.dtype) for p in sig.scalar_params]
    if sig.ret_dtype is not None:
        arg_types.append(_PTR)
    fn = ir.Function(mb.module, ir.FunctionType(_I32, arg_types), name=sig.symbol)
    fn.attributes.add("nounwind")
    fb = _FunctionBuilder(mb, fn, name, ret_ptr=fn.args[-1] if sig.ret_dtype else None, ret_dtype=sig.ret_dtype)
    args = iter(fn.args)
    for p in sig.buffer_params:
        arg = next(args)
        arg.name = p.name
        if sig.noalias:
            arg.add_attribute("noalias")
            fb.noalias_vars.add(id(p.buffer.data))
        fb.vars[p.var] = arg
        fb.vars[p.buffer.data] = arg
    for k, v in enumerate(sig.sym_vars, len(sig.buffer_params)):
        arg = next(args)
        arg.name = v.name
        fb.bind(v, arg)
        fb.reported[v] = k
    for k, p in enumerate(sig.scalar_params, len(sig.buffer_params) + len(sig.sym_vars)):
        arg = next(args)
        arg.name = p.name
        fb.bind(p.var, arg)
        if not parse_dtype(p.dtype).is_float:  # sizes are integers; float16 arrives as its bits
            fb.reported[p.var] = k
    if sig.ret_dtype is not None:
        next(args).name = "result"
    # elem_offset variables of parameter buffers: arrays start at their data pointer.
    for p in sig.buffer_params:
        off = p.buffer.elem_offset
        if isinstance(off, tir.Var) and off not in fb.vars:
            fb.bind(off, ir.Constant(llvm_type(off.dtype), 0))
    fb.stmt(func.body)
    fb.finish()
    return sig
