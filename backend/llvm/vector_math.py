"""Vector float32 ``exp``, ``tanh`` and ``erf`` as straight-line LLVM IR: x86 has no vector
``expf``/``tanhf``/``erff``, so LLVM splits ``llvm.exp.v16f32`` (and the libm calls of tanh and erf)
into 16 scalar calls, the bulk of a softmax's or a GELU's time.

``exp``: the classic range reduction ``x = n ln2 + r`` (ln2 in two parts, so ``r`` is exact), a
degree-6 polynomial for ``e**r`` on |r| <= ln2/2 (Cephes' coefficients), and ``2**n`` built from
exponent bits in two halves so overflow gives inf and underflow rounds gradually to 0. Within 2
ulp of libm.

``tanh``: ``x + x z h(z)`` (z = x*x) below 0.625, else ``1 - 2 / (exp(2|x|) + 1)`` with x's sign.
``erf``: ``x P(x*x)`` below 1, else ``1 - exp(-x*x) G(1/|x|)`` with x's sign (|x| capped at 4,
where erf is 1 in float32). h, P and G are least-squares fits in relative error made for this
module (h: degree 4 on [0, 0.39]; P: degree 5 on [0, 1]; G ~ erfc(x) exp(x*x): degree 9 in 1/x on
[1, 4]), each within 2e-7 of the function in exact arithmetic; evaluated in float32 the results are
within a few ulp (tests/test_vector_math.py checks 1e-6 relative against Python's math)."""
from __future__ import annotations

from llvmlite import ir

__all__ = ["vector_exp_f32", "vector_tanh_f32", "vector_erf_f32"]

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


_TANH_H = (-0.3333332879211718, 0.1333275744099396, -0.05384935861968535, 0.020990891441617233,
           -0.006088725053422913)  # (tanh(x) / x - 1) / x**2 as a polynomial in x**2, lowest first
_TANH_SMALL = 0.625
_ERF_P = (1.1283791211856538, -0.37612319818438883, 0.11280130624142587, -0.026709955242709235,
          0.004916026605519791, -0.0005625398986486285)  # erf(x) / x in x**2, lowest first
_ERF_G = (0.00011467243508125415, 0.5618856566811706, 0.019604565596115814, -0.37169698576573773,
          0.21877616818638204, 0.2593049183403883, -0.5614756513167012, 0.4561911922407373,
          -0.18718474119182443, 0.03206378829724581)  # erfc(x) exp(x**2) in 1/x, lowest first
_ERF_CAP = 4.0  # erf(x) rounds to 1 in float32 from 3.92 on


def _horner(b: ir.IRBuilder, coefficients: tuple[float, ...], x: ir.Value) -> ir.Value:
    """``c0 + c1 x + c2 x**2 + ...`` of a float vector, in Horner's form."""
    vt = x.type
    acc = ir.Constant(vt, [coefficients[-1]] * vt.count)
    for c in reversed(coefficients[:-1]):
        acc = b.fadd(b.fmul(acc, x), ir.Constant(vt, [c] * vt.count))
    return acc


def _with_sign_of(b: ir.IRBuilder, intrinsic, magnitude: ir.Value, x: ir.Value) -> ir.Value:
    return b.call(intrinsic("llvm.copysign", x.type, 2), [magnitude, x])


def vector_tanh_f32(b: ir.IRBuilder, intrinsic, x: ir.Value) -> ir.Value:
    """``tanh(x)`` of a <N x float> ``x`` (``intrinsic`` as for :func:`vector_exp_f32`)."""
    vt = x.type
    one = ir.Constant(vt, [1.0] * vt.count)
    ax = b.call(intrinsic("llvm.fabs", vt, 1), [x])
    z = b.fmul(x, x)
    small = b.fadd(ax, b.fmul(b.fmul(ax, z), _horner(b, _TANH_H, z)))
    e = vector_exp_f32(b, intrinsic, b.fadd(ax, ax))  # inf beyond 44: 2 / inf is 0, tanh is 1
    large = b.fsub(one, b.fdiv(ir.Constant(vt, [2.0] * vt.count), b.fadd(e, one)))
    result = b.select(b.fcmp_ordered("<", ax, ir.Constant(vt, [_TANH_SMALL] * vt.count)), small, large)
    # |tanh| from |x|, then x's sign (tanh(-0) is -0); NaN stays NaN.
    return b.select(b.fcmp_unordered("uno", x, x), x, _with_sign_of(b, intrinsic, result, x))


def vector_erf_f32(b: ir.IRBuilder, intrinsic, x: ir.Value) -> ir.Value:
    """``erf(x)`` of a <N x float> ``x`` (``intrinsic`` as for :func:`vector_exp_f32`)."""
    vt = x.type
    one = ir.Constant(vt, [1.0] * vt.count)
    ax = b.call(intrinsic("llvm.fabs", vt, 1), [x])
    z = b.fmul(x, x)
    small = b.fmul(ax, _horner(b, _ERF_P, z))
    capped = b.call(intrinsic("llvm.minnum", vt, 2), [ax, ir.Constant(vt, [_ERF_CAP] * vt.count)])
    zc = b.fmul(capped, capped)
    tail = b.fmul(vector_exp_f32(b, intrinsic, b.fneg(zc)), _horner(b, _ERF_G, b.fdiv(one, capped)))
    result = b.select(b.fcmp_ordered("<", ax, one), small, b.fsub(one, tail))
    return b.select(b.fcmp_unordered("uno", x, x), x, _with_sign_of(b, intrinsic, result, x))
