"""Lowering of ``tir.Call``: the intrinsics of ``ir/intrinsics.py`` as their entries say (an LLVM
intrinsic, a libm call or an ``_expand_<name>`` method here), the builtins among them (extern
calls, LLVM intrinsics by name, ``reinterpret``, ``assume``, ``ret``) included."""
from __future__ import annotations

from typing import Callable

from llvmlite import ir

from ...ir import tir
from ...ir.dtype import parse_dtype
from ...ir.intrinsics import Intrinsic, intrinsic
from .errors import CodegenError, excerpt
from .vector_math import vector_erf_f32, vector_exp_f32, vector_tanh_f32
from .types import I1, I16, I32, PTR, llvm_type, mem_type, total_bits, type_suffix

__all__ = ["CallLowering"]

# LLVM intrinsics overloaded on a pointer argument: TVM scripts name them without the suffix.
_POINTER_OVERLOADED = frozenset({"llvm.prefetch"})
# float32 vectors of these (an LLVM intrinsic's or a libm function's name) are inline code
# (vector_math.py): x86 has no vector exp, tanh or erf, and per-lane libm calls are slow.
_VECTOR_F32 = {"llvm.exp": vector_exp_f32, "llvm.tanh": vector_tanh_f32, "erf": vector_erf_f32}


class CallLowering:
    """The ``tir.Call`` handler of :class:`~.function_builder.FunctionBuilder` and the intrinsic
    expansions that the intrinsics table names."""

    # ---- calls (intrinsics)
    def visit_tir_call_(self, op: tir.Call) -> ir.Value:
        """An intrinsic of the table, lowered as its entry says."""
        if not isinstance(op.op, str):
            raise CodegenError(f"{self.func_name}: calls between functions ({excerpt(op)}) are not "
                               f"supported by the LLVM backend")
        info = intrinsic(op.op.removeprefix("tir."))
        if info is None or not info.compiled:
            raise CodegenError(f"{self.func_name}: the LLVM backend has no lowering for the intrinsic "
                               f"{op.op} (in {excerpt(op)})")
        return self._lower_intrinsic(op, info)

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
        if name in _VECTOR_F32 and isinstance(x.type, ir.VectorType) and isinstance(x.type.element, ir.FloatType):
            return _VECTOR_F32[name](self.b, self._overloaded, x)
        fn = self.mb.intrinsic(name, x.type, [x.type], [x.type])
        is_float = isinstance(getattr(x.type, "element", x.type), (ir.HalfType, ir.FloatType, ir.DoubleType))
        return self.b.call(fn, [x], fastmath=self.fflags if is_float else ())  # LLVM refuses flags on ints

    def _overloaded(self, name: str, t: ir.Type, arity: int) -> ir.Function:
        """The LLVM intrinsic ``name`` taking and giving ``t`` (for the inline vector math)."""
        return self.mb.intrinsic(name, t, [t] * arity, [t])

    def _per_lane(self, x: ir.Value, fn: Callable[[ir.Value], ir.Value]) -> ir.Value:
        """Apply a scalar function to every lane of a vector."""
        if not isinstance(x.type, ir.VectorType):
            return fn(x)
        out = None
        for k in range(x.type.count):
            kc = ir.Constant(I32, k)
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
            x = args[0]
            if name in _VECTOR_F32 and isinstance(x.type, ir.VectorType) and isinstance(x.type.element, ir.FloatType):
                return _VECTOR_F32[name](self.b, self._overloaded, x)
            return self._per_lane(x, scalar)
        a, b = self._match_lanes(*args)
        if not isinstance(a.type, ir.VectorType):
            return scalar(a, b)
        out = ir.Constant(a.type, ir.Undefined)
        for k in range(a.type.count):
            kc = ir.Constant(I32, k)
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
            kc = ir.Constant(I32, k)
            lane = self._half_nextafter(self.b.extract_element(a, kc), self.b.extract_element(b, kc))
            out = self.b.insert_element(out, lane, kc)
        return out

    def _half_nextafter(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """C's nextafter on scalar halves: NaN if either is, y if equal, the smallest subnormal of y's
        sign from zero, else x's bits one step up in magnitude (towards y) or down."""
        half, zero = ir.HalfType(), ir.Constant(ir.HalfType(), 0.0)
        bits = self.b.bitcast(x, I16)
        grow = self.b.icmp_unsigned("==", self.b.fcmp_ordered(">", y, x), self.b.fcmp_ordered(">", x, zero))
        stepped = self.b.select(grow, self.b.add(bits, ir.Constant(I16, 1)), self.b.sub(bits, ir.Constant(I16, 1)))
        tiny = self.b.or_(self.b.and_(self.b.bitcast(y, I16), ir.Constant(I16, 0x8000)), ir.Constant(I16, 1))
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
        fn = self.mb.intrinsic("llvm.ctlz", x.type, [x.type, I1], [x.type])
        return self.b.call(fn, [x, ir.Constant(I1, 0)])

    def _expand_reinterpret(self, op: tir.Call) -> ir.Value:
        """Bit-for-bit reinterpretation between types of one size."""
        x = self.expr(op.args[0])
        t = llvm_type(op.dtype)
        if parse_dtype(op.dtype).bits * parse_dtype(op.dtype).lanes != total_bits(op.args[0].dtype):
            raise CodegenError(f"{self.func_name}: T.reinterpret from {op.args[0].dtype} to {op.dtype} "
                               f"changes the size")
        if x.type == PTR or t == PTR:
            return self.b.ptrtoint(x, t) if x.type == PTR else self.b.inttoptr(x, t)
        return self.b.bitcast(x, t)

    def _expand_likely(self, op: tir.Call) -> ir.Value:
        """The condition itself (a branch-weight hint only)."""
        return self.expr(op.args[0])

    def _expand_assume(self, op: tir.Call) -> ir.Value:
        """``llvm.assume``; the value is the condition."""
        c = self.expr(op.args[0])
        self.b.call(self.mb.function("llvm.assume", ir.FunctionType(ir.VoidType(), [I1])), [c])
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

    def _expand_extern(self, op: tir.Call) -> ir.Value:
        """``T.call_extern(dtype, "name", args...)``: a C function resolved in the process."""
        if not op.args or not isinstance(op.args[0], tir.StringImm):
            raise CodegenError(f"{self.func_name}: {op.op} needs the function name first")
        args = [self.expr(a) for a in op.args[1:]]
        ret = ir.VoidType() if op.dtype == "void" else llvm_type(op.dtype)
        fn = self.mb.function(op.args[0].value, ir.FunctionType(ret, [a.type for a in args]))
        r = self.b.call(fn, args)
        return ir.Constant(I32, 0) if op.dtype == "void" else r

    def _expand_llvm_intrin(self, op: tir.Call) -> ir.Value:
        """``T.call_llvm_(pure_)intrin(dtype, "llvm.name", nsig, args...)``."""
        if not op.args or not isinstance(op.args[0], tir.StringImm):
            raise CodegenError(f"{self.func_name}: {op.op} needs the LLVM intrinsic name first")
        rest = op.args[1:]
        if rest and isinstance(rest[0], tir.IntImm) and rest[0].dtype.startswith("uint"):
            rest = rest[1:]  # TVM's signature-count argument
        args = [self.expr(a) for a in rest]
        name = op.args[0].value
        if op.dtype == "void":  # an intrinsic called for its effect (T.evaluate(...)): llvm.prefetch
            if name in _POINTER_OVERLOADED:
                name = f"{name}.p0"  # overloaded on its pointer argument's address space
            fn = self.mb.function(name, ir.FunctionType(ir.VoidType(), [a.type for a in args]))
            self.b.call(fn, args)
            return ir.Constant(I32, 0)
        ret = llvm_type(op.dtype)
        if not any(ch.isdigit() for ch in name.rsplit(".", 1)[-1]):
            name = f"{name}.{type_suffix(ret)}"
        fn = self.mb.function(name, ir.FunctionType(ret, [a.type for a in args]))
        return self.b.call(fn, args, fastmath=self.fflags if parse_dtype(op.dtype).is_float else ())

    def _expand_address_of(self, op: tir.Call) -> ir.Value:
        """``T.address_of(A[i])``: the address of the element, computed without ``inbounds`` (a
        prefetch may look past the end of the buffer, which x86 allows)."""
        load = op.args[0] if op.args else None
        if not isinstance(load, tir.BufferLoad) or parse_dtype(load.dtype).lanes > 1:
            raise CodegenError(f"{self.func_name}: T.address_of takes one element of a buffer, got {excerpt(op)}")
        buf = load.buffer
        return self.b.gep(self._data(buf), [self._offset(buf, load.indices)], source_etype=mem_type(buf.dtype))

    def _expand_ret(self, op: tir.Call) -> ir.Value:
        """``return v``: store the value, free the heap, return success."""
        if self.ret_ptr is None:
            raise CodegenError(f"{self.func_name}: 'return' needs a return type on the PrimFunc (-> T.int32 ...)")
        v = self._cast(self.expr(op.args[0]), op.args[0].dtype, self.ret_dtype)
        self.b.store(self._to_mem(v, self.ret_dtype), self.ret_ptr)
        self._fail(0)
        self.b.position_at_end(self.fn.append_basic_block("after.ret"))
        return ir.Constant(I32, 0)
