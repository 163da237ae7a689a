"""Lowering of TIR expressions: literals, variables, casts, arithmetic (division that never traps),
comparisons, logic, ``select``/``Let`` and vector ramps and broadcasts."""
from __future__ import annotations

from llvmlite import ir

from ...ir import tir
from ...ir.dtype import DType, parse_dtype
from .errors import CodegenError
from .types import I32, I64, llvm_type

__all__ = ["ExpressionLowering"]


class ExpressionLowering:
    """The ``visit_<expr>_`` handlers of :class:`~.function_builder.FunctionBuilder`: each returns
    the expression's ``ir.Value``."""

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
                return b.icmp_unsigned("!=", b.ptrtoint(v, I64), ir.Constant(I64, 0))
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
                return b.trunc(b.fptosi(v, self._like(v, I32)), t)
            if dst.is_uint and dst.bits < 64:
                return b.trunc(b.fptosi(v, self._like(v, I64)), t)
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
        f32, i32 = self._like(v, ir.FloatType()), self._like(v, I32)
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
        """``a + b`` (``fadd`` with the fast-math flags for floats, ``nsw`` on wide signed ints)."""
        a, b, d = self._operands(op)
        if d.is_float:
            return self.b.fadd(a, b, flags=self.fflags)
        return self.b.add(a, b, flags=self._int_flags(d))

    def visit_sub_(self, op: tir.Sub) -> ir.Value:
        """``a - b``."""
        a, b, d = self._operands(op)
        if d.is_float:
            return self.b.fsub(a, b, flags=self.fflags)
        return self.b.sub(a, b, flags=self._int_flags(d))

    def visit_mul_(self, op: tir.Mul) -> ir.Value:
        """``a * b``."""
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

    def _nonneg(self, e: tir.PrimExpr) -> bool:
        """Whether integer ``e`` is never negative: literals, counters of loops from a non-negative
        start, sums, products and quotients of those, remainders by a positive literal."""
        if isinstance(e, tir.IntImm):
            return e.value >= 0
        if isinstance(e, tir.Var):
            return e in self.nonneg
        if isinstance(e, (tir.Add, tir.Mul)):  # narrow integers wrap (no nsw): not those
            return parse_dtype(e.dtype).bits >= 32 and self._nonneg(e.a) and self._nonneg(e.b)
        if isinstance(e, tir.Min):
            return self._nonneg(e.a) and self._nonneg(e.b)
        if isinstance(e, tir.Max):
            return self._nonneg(e.a) or self._nonneg(e.b)
        if isinstance(e, tir.FloorMod):
            return _positive_literal(e.b) is not None
        if isinstance(e, tir.FloorDiv):
            return _positive_literal(e.b) is not None and self._nonneg(e.a)
        if isinstance(e, tir.Broadcast):
            return self._nonneg(e.value)
        if isinstance(e, tir.Ramp):
            return self._nonneg(e.base) and self._nonneg(e.stride)
        return False

    def _unsigned_floor(self, op: tir.BinaryOp, mod: bool) -> ir.Value | None:
        """Floor division or remainder of a non-negative signed integer by a power of two: a shift
        or a mask, else None. Index math is mostly this, and the general sign-fixing sequence is
        8 instructions LLVM must then simplify."""
        d = parse_dtype(op.a.dtype)
        lit = _positive_literal(op.b)
        # Not for other divisors: udiv/urem would be exact too, but LLVM's loop strength reduction
        # then explores far more formulae (resnet18's code generation took 1.8x as long).
        if not d.is_int or lit is None or lit & (lit - 1) or not self._nonneg(op.a):
            return None
        a, _, _ = self._operands(op)
        if mod:
            return self.b.and_(a, _like_constant(a.type, lit - 1))
        return self.b.lshr(a, _like_constant(a.type, lit.bit_length() - 1))

    def visit_floor_div_(self, op: tir.FloorDiv) -> ir.Value:
        """Floor division (rounds toward minus infinity), ``floor(a / b)`` for floats."""
        d = parse_dtype(op.a.dtype)
        fast = self._unsigned_floor(op, False)
        if fast is not None:
            return fast
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
        fast = self._unsigned_floor(op, True)
        if fast is not None:
            return fast
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
            a, b = self.b.ptrtoint(a, I64), self.b.ptrtoint(b, I64)
        return self.b.icmp_signed(symbol, a, b) if d.is_int else self.b.icmp_unsigned(symbol, a, b)

    def visit_eq_(self, op: tir.EQ) -> ir.Value:
        """``a == b``."""
        return self._compare(op, "==")

    def visit_ne_(self, op: tir.NE) -> ir.Value:
        """``a != b`` (true for NaN)."""
        return self._compare(op, "!=")

    def visit_lt_(self, op: tir.LT) -> ir.Value:
        """``a < b``."""
        return self._compare(op, "<")

    def visit_le_(self, op: tir.LE) -> ir.Value:
        """``a <= b``."""
        return self._compare(op, "<=")

    def visit_gt_(self, op: tir.GT) -> ir.Value:
        """``a > b``."""
        return self._compare(op, ">")

    def visit_ge_(self, op: tir.GE) -> ir.Value:
        """``a >= b``."""
        return self._compare(op, ">=")

    def visit_and_(self, op: tir.And) -> ir.Value:
        """Both sides evaluated, as TVM does (``T.if_then_else`` is the short-circuiting form)."""
        a, b, _ = self._operands(op)
        return self.b.and_(a, b)

    def visit_or_(self, op: tir.Or) -> ir.Value:
        """Both sides evaluated, then ``or``."""
        a, b, _ = self._operands(op)
        return self.b.or_(a, b)

    def visit_not_(self, op: tir.Not) -> ir.Value:
        """Logical not."""
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
        """A scalar splatted to ``lanes`` lanes."""
        return self._splat(self.expr(op.value), op.lanes)


def _positive_literal(e: tir.PrimExpr) -> int | None:
    """The value of a positive integer literal (or a broadcast of one), else None."""
    if isinstance(e, tir.Broadcast):
        e = e.value
    if isinstance(e, tir.IntImm) and e.value > 0 and not parse_dtype(e.dtype).is_bool:
        return e.value
    return None


def _like_constant(t: ir.Type, value: int) -> ir.Constant:
    """``value`` as a constant of type ``t`` (splatted for a vector type)."""
    return ir.Constant(t, [value] * t.count if isinstance(t, ir.VectorType) else value)
