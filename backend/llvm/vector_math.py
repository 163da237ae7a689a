"""Vector float32 ``exp`` as straight-line LLVM IR: x86 has no vector ``expf``, so LLVM splits
``llvm.exp.v16f32`` into 16 libm calls, the bulk of a softmax's time. Here: the classic
range reduction ``x = n ln2 + r`` (ln2 in two parts, so ``r`` is exact), a degree-6 polynomial
for ``e**r`` on |r| <= ln2/2 (Cephes' coefficients), and ``2**n`` built from exponent bits in two
halves so overflow gives inf and underflow rounds gradually to 0. Within 2 ulp of libm."""
from __future__ import annotations

from llvmlite import ir

__all__ = ["vector_exp_f32"]

_LOG2E = 1.44269504088896341
_LN2_HI = 0.693359375  # few mantissa bits: n * _LN2_HI is exact for every n reached here
_LN2_LO = -2.12194440e-4
_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
_LO, _HI = -104.0, 89.0  # exp is 0 below, inf above, in float32


def vector_exp_f32(b: ir.IRBuilder, intrinsic, x: ir.Value) -> ir.Value:
    """``exp(x)`` of a <N x float> ``x``; ``intrinsic(name, type)`` gives a unary or binary
    LLVM intrinsic overloaded on ``type``. No fast-math flags: reassociating the reduction
    would lose its exactness."""
    vt = x.type
    count = vt.count
    it = ir.VectorType(ir.IntType(32), count)

    def f(v: float) -> ir.Constant:
        return ir.Constant(vt, [v] * count)

    def i(v: int) -> ir.Constant:
        return ir.Constant(it, [v] * count)

    clamped = b.call(intrinsic("llvm.minnum", vt, 2), [b.call(intrinsic("llvm.maxnum", vt, 2), [x, f(_LO)]), f(_HI)])
    n = b.call(intrinsic("llvm.floor", vt, 1), [b.fadd(b.fmul(clamped, f(_LOG2E)), f(0.5))])
    r = b.fsub(b.fsub(clamped, b.fmul(n, f(_LN2_HI))), b.fmul(n, f(_LN2_LO)))
    p = f(_POLY[0])
    for c in _POLY[1:]:
        p = b.fadd(b.fmul(p, r), f(c))
    p = b.fadd(b.fadd(b.fmul(p, b.fmul(r, r)), r), f(1.0))
    ni = b.fptosi(n, it)
    half = b.ashr(ni, i(1))  # 2**n = 2**half * 2**(n - half), each a normal float for |n| <= 150
    rest = b.sub(ni, half)
    scale1 = b.bitcast(b.shl(b.add(half, i(127)), i(23)), vt)
    scale2 = b.bitcast(b.shl(b.add(rest, i(127)), i(23)), vt)
    result = b.fmul(b.fmul(p, scale1), scale2)
    return b.select(b.fcmp_unordered("uno", x, x), x, result)  # NaN stays NaN
