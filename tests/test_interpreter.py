"""The TIR reference interpreter (``tvmlite.backend.interpreter``): every expression and statement
kind against hand-computed numpy results, dtype edge cases (wraparound, truncating and flooring
division, casts, float32 rounding), blocks, the calling convention and its argument checks."""
import math

import numpy as np
import pytest

from tvmlite.backend.interpreter import (CompiledPrimFunc, InterpreterError, InterpreterExecutor, TIRAssertError,
                                         run_prim_func)
from tvmlite.backend.runtime import ArgumentError
from tvmlite.ir import tir
from tvmlite.script import from_source


def prim(src: str) -> tir.PrimFunc:
    return from_source(src)


def values(body: str, dtype: str, n: int, params: str = "", scalars=(), arrays=()) -> np.ndarray:
    """Run ``body`` storing into ``out: T.Buffer((n,), dtype)`` and return ``out``."""
    src = f"@T.prim_func\ndef main(out: T.Buffer(({n},), \"{dtype}\"){params}):\n"
    src += "".join(f"    {line}\n" for line in body.strip("\n").split("\n"))
    out = np.zeros(n, dtype)
    run_prim_func(prim(src), [out, *arrays], scalars)
    return out


# ------------------------------------------------------------------ integer arithmetic
def test_int_wraparound():
    got = values("out[0] = x + 1\nout[1] = x * 2\nout[2] = T.int32(0) - x - 2", "int32", 3,
                 ", x: T.int32", [2**31 - 1])
    assert got.tolist() == [-2**31, -2, 2**31 - 1]


@pytest.mark.parametrize("dtype, body, want", [
    ("int8", "out[0] = T.int8(100) + T.int8(100)", [-56]),
    ("uint8", "out[0] = T.uint8(0) - T.uint8(1)", [255]),
    ("int16", "out[0] = T.int16(300) * T.int16(300)", [np.int16(np.int32(90000).astype(np.int16))]),
    ("uint32", "out[0] = T.uint32(4294967295) + T.uint32(2)", [1]),
    ("int64", "out[0] = T.int64(9223372036854775807) + T.int64(1)", [-2**63]),
])
def test_small_and_unsigned_wraparound(dtype, body, want):
    assert values(body, dtype, 1).tolist() == want


def test_truncating_and_flooring_division():
    body = """
out[0] = T.truncdiv(x, y)
out[1] = T.truncmod(x, y)
out[2] = x // y
out[3] = x % y
out[4] = T.truncdiv(T.int32(0) - x, y)
out[5] = (T.int32(0) - x) // y
"""
    for x, y in [(-7, 2), (7, -2), (-7, -2), (7, 2), (6, 3)]:
        got = values(body, "int32", 6, ", x: T.int32, y: T.int32", [x, y])
        want = [math.trunc(x / y), math.fmod(x, y), x // y, x % y, math.trunc(-x / y), (-x) // y]
        assert got.tolist() == want, (x, y)


@pytest.mark.parametrize("op", ["x // y", "x % y", "T.truncdiv(x, y)", "T.truncmod(x, y)"])
def test_integer_division_by_zero_raises(op):
    with pytest.raises(InterpreterError, match="integer division by zero"):
        values(f"out[0] = {op}", "int32", 1, ", x: T.int32, y: T.int32", [5, 0])


def test_bitwise_shift_and_count_intrinsics():
    body = """
out[0] = x & 12
out[1] = x | 1
out[2] = x ^ 5
out[3] = T.bitwise_not(x)
out[4] = x << 2
out[5] = x >> 1
out[6] = T.popcount(x)
out[7] = T.clz(x)
"""
    assert values(body, "int32", 8, ", x: T.int32", [-7]).tolist() == [8, -7, -4, 6, -28, -4, 30, 0]
    assert values(body, "int32", 8, ", x: T.int32", [6]).tolist() == [4, 7, 3, -7, 24, 3, 2, 29]


# ------------------------------------------------------------------ floats
def test_float32_math_stays_float32():
    got = values("out[0] = x + T.float32(1.0)\nout[1] = x * T.float32(3.0) / T.float32(3.0)", "float32", 2,
                 ", x: T.float32", [16777216.0])
    assert got[0] == np.float32(16777216.0)  # 2**24 + 1 is not a float32
    a = np.float32(16777216.0)
    assert got[1] == a * np.float32(3) / np.float32(3)


def test_float16_and_float64():
    assert values("out[0] = T.float16(2048.0) + T.float16(1.0)", "float16", 1)[0] == 2048
    assert values("out[0] = T.float64(1e16) + T.float64(1.0)", "float64", 1)[0] == 1e16


def test_float_division_kinds():
    body = "out[0] = x / y\nout[1] = T.floordiv(x, y)\nout[2] = T.floormod(x, y)\nout[3] = T.truncmod(x, y)"
    got = values(body, "float32", 4, ", x: T.float32, y: T.float32", [-7.5, 2.0])
    np.testing.assert_array_equal(got, np.array([-3.75, -4.0, 0.5, -1.5], "float32"))
    got = values("out[0] = x / y", "float32", 1, ", x: T.float32, y: T.float32", [1.0, 0.0])
    assert got[0] == np.inf


def test_math_intrinsics_match_numpy():
    x = np.array([0.3, -1.7, 2.5, -2.5, 0.5, 4.0, 1.5, -0.2], "float32")
    body = """
for i in range(8):
    out[i, 0] = T.exp(A[i])
    out[i, 1] = T.sigmoid(A[i])
    out[i, 2] = T.tanh(A[i])
    out[i, 3] = T.erf(A[i])
    out[i, 4] = T.round(A[i])
    out[i, 5] = T.nearbyint(A[i])
    out[i, 6] = T.floor(A[i])
    out[i, 7] = T.fabs(A[i])
    out[i, 8] = T.pow(T.fabs(A[i]), T.float32(1.5))
    out[i, 9] = T.fmod(A[i], T.float32(0.75))
    out[i, 10] = T.rsqrt(T.fabs(A[i]))
    out[i, 11] = T.call_pure_extern("float32", "expf", A[i])
"""
    src = "@T.prim_func\ndef main(out: T.Buffer((8, 12), \"float32\"), A: T.Buffer((8,), \"float32\")):\n"
    src += "".join(f"    {line}\n" for line in body.strip("\n").split("\n"))
    out = np.zeros((8, 12), "float32")
    run_prim_func(prim(src), [out, x])
    erf = np.array([math.erf(v) for v in x.astype("float64")], "float32")
    want = np.stack([np.exp(x), 1 / (1 + np.exp(-x)), np.tanh(x), erf, np.rint(x), np.rint(x), np.floor(x),
                     np.abs(x), np.abs(x) ** np.float32(1.5), np.fmod(x, np.float32(0.75)),
                     1 / np.sqrt(np.abs(x)), np.exp(x)], axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)
    assert out.dtype == np.float32


def test_nan_and_inf_predicates_and_min_max_selects():
    x = np.array([np.nan, np.inf, -1.0], "float32")
    body = """
for i in range(3):
    out[i, 0] = T.Cast("float32", T.isnan(A[i]))
    out[i, 1] = T.Cast("float32", T.isinf(A[i]))
    out[i, 2] = T.Cast("float32", T.isfinite(A[i]))
    out[i, 3] = T.max(A[i], T.float32(0.0))
    out[i, 4] = T.min(T.float32(0.0), A[i])
"""
    src = "@T.prim_func\ndef main(out: T.Buffer((3, 5), \"float32\"), A: T.Buffer((3,), \"float32\")):\n"
    src += "".join(f"    {line}\n" for line in body.strip("\n").split("\n"))
    out = np.zeros((3, 5), "float32")
    run_prim_func(prim(src), [out, x])
    # max(NaN, 0) is ``NaN > 0 ? NaN : 0`` = 0 and min(0, NaN) is ``0 < NaN ? 0 : NaN`` = NaN, as TVM's selects.
    np.testing.assert_array_equal(out, np.array([[1, 0, 0, 0, np.nan], [0, 1, 0, np.inf, 0],
                                                 [0, 0, 1, 0, -1]], "float32"))


# ------------------------------------------------------------------ casts
@pytest.mark.parametrize("src_dtype, value, dst_dtype, want", [
    ("float32", -2.7, "int32", -2),
    ("float32", 2.7, "int32", 2),
    ("int64", 300, "int8", 44),
    ("int32", -1, "uint8", 255),
    ("int32", -1, "uint32", 4294967295),
    ("float32", 0.5, "bool", True),
    ("float32", 0.0, "bool", False),
    ("int32", -3, "bool", True),
    ("bool", True, "float32", 1.0),
    ("float64", 0.1, "float32", float(np.float32(0.1))),
    ("float32", 65520.0, "float16", np.inf),
    ("uint8", 200, "int8", -56),
    ("int8", -56, "int32", -56),
])
def test_casts(src_dtype, value, dst_dtype, want):
    got = values(f'out[0] = T.Cast("{dst_dtype}", x)', dst_dtype, 1, f", x: T.{src_dtype}", [value])
    assert got[0] == want
    assert got.dtype == np.dtype(dst_dtype)


def test_reinterpret():
    got = values('out[0] = T.reinterpret("int32", x)', "int32", 1, ", x: T.float32", [1.0])
    assert got[0] == 0x3F800000


# ------------------------------------------------------------------ logic, select, let
def test_logic_short_circuits_and_if_then_else_is_lazy():
    body = """
for i in range(6):
    if i < 4 and A[i] > T.float32(0.0):
        out[i] = 1
    if i >= 4 or A[i] < T.float32(0.0):
        out[i] = out[i] + 10
    if not i < 4:
        out[i] = out[i] + 100
    out[i] = out[i] + T.Cast("int32", T.if_then_else(i < 4, A[i], T.float32(7.0)))
"""
    a = np.array([1.0, -2.0, 3.0, 0.0], "float32")
    got = values(body, "int32", 6, ', A: T.Buffer((4,), "float32")', arrays=[a])
    assert got.tolist() == [2, 8, 4, 0, 117, 117]


def test_select_evaluates_both_sides():
    body = "for i in range(5):\n    out[i] = T.Select(i < 4, A[i], T.float32(0.0))"
    with pytest.raises(InterpreterError, match="out-of-bounds access of A"):
        values(body, "float32", 5, ', A: T.Buffer((4,), "float32")', arrays=[np.ones(4, "float32")])
    body = "for i in range(4):\n    out[i] = T.Select(A[i] < T.float32(0.0), T.float32(0.0) - A[i], A[i])"
    a = np.array([1.0, -2.0, 3.0, -0.5], "float32")
    got = values(body, "float32", 4, ', A: T.Buffer((4,), "float32")', arrays=[a])
    np.testing.assert_array_equal(got, np.abs(a))


def test_let_expression_and_let_statement():
    body = """
x = T.int32()
out[0] = T.Let(x * x, where={x: 6})
with T.LetStmt(5) as y:
    out[1] = y + y
z: T.int32 = out[0] - 1
out[2] = z
"""
    assert values(body, "int32", 3).tolist() == [36, 10, 35]


# ------------------------------------------------------------------ vectors
def test_ramp_and_broadcast_loads_and_stores():
    body = """
out[0:4] = A[0:4] + A[4:8]
out[4:8] = A[0:8:2] * T.Broadcast(T.float32(2.0), 4)
"""
    a = np.arange(8, dtype="float32")
    got = values(body, "float32", 8, ', A: T.Buffer((8,), "float32")', arrays=[a])
    np.testing.assert_array_equal(got, np.concatenate([a[:4] + a[4:], a[0::2] * 2]))


# ------------------------------------------------------------------ statements
def test_loop_kinds_min_and_nesting():
    body = """
for i in T.serial(2, 5):
    out[i] = out[i] + 1
for i in T.parallel(8):
    out[i] = out[i] + 10
for i in T.vectorized(4):
    out[i] = out[i] + 100
for i in T.unroll(3):
    out[i + 5] = out[i + 5] + 1000
for i in T.thread_binding(2, thread="threadIdx.x"):
    out[i] = out[i] + 10000
"""
    assert values(body, "int32", 8).tolist() == [10110, 10110, 111, 111, 11, 1010, 1010, 1010]


def test_thread_launch_runs_each_thread_index():
    assert values('tx = T.launch_thread("threadIdx.x", 4)\nout[tx] = tx * 2', "int32", 4).tolist() == [0, 2, 4, 6]


def test_while_if_else_assert_attr_and_evaluate():
    body = """
while out[0] < 5:
    out[0] = out[0] + 2
if out[0] == 6:
    out[1] = 1
else:
    out[1] = 2
with T.attr(0, "pragma_unroll", 1):
    out[2] = 3
T.evaluate(0)
assert out[2] == 3, "out[2] is 3"
out[3] = 4
"""
    assert values(body, "int32", 4).tolist() == [6, 1, 3, 4]
    with pytest.raises(TIRAssertError, match="assertion failed: x must be positive"):
        values('assert x > 0, "x must be positive"\nout[0] = x', "int32", 1, ", x: T.int32", [-1])


def test_assume_is_checked():
    with pytest.raises(TIRAssertError, match="T.assume"):
        values("T.evaluate(T.assume(x < 3))\nout[0] = x", "int32", 1, ", x: T.int32", [5])


def test_return_value():
    func = prim("@T.prim_func\ndef main(x: T.int32) -> T.int32:\n    return x * 3\n")
    assert run_prim_func(func, [], [7]) == 21


def test_allocations_and_aliases():
    body = """
tmp = T.decl_buffer((2, 3), "int32")
for i, j in T.grid(2, 3):
    tmp[i, j] = i * 10 + j
flat = T.decl_buffer((6,), "int32", data=tmp.data)
X = T.allocate([4], "int32", "global")
Xb = T.decl_buffer((2, 2), "int32", data=X)
Xb[1, 1] = flat[5] + 1
for k in range(6):
    out[k] = flat[k]
out[6] = Xb[1, 1]
O2 = T.decl_buffer((2, 4), "int32", data=out.data)
O2[1, 3] = 99
"""
    assert values(body, "int32", 8).tolist() == [0, 1, 2, 10, 11, 12, 13, 99]


def test_allocations_are_zeroed_per_execution():
    body = """
for i in range(3):
    acc = T.decl_buffer((1,), "int32")
    acc[0] = acc[0] + i + 1
    out[i] = acc[0]
"""
    assert values(body, "int32", 3).tolist() == [1, 2, 3]


def test_out_of_bounds_accesses_are_refused():
    message = r"in PrimFunc 'main': out-of-bounds access of A: index 4 of dimension 1 \(of size 4\)"
    with pytest.raises(InterpreterError, match=message):
        values("out[0] = A[0, 4]", "float32", 1, ', A: T.Buffer((2, 4), "float32")',
               arrays=[np.zeros((2, 4), "float32")])
    with pytest.raises(InterpreterError, match=r"out-of-bounds access of out: element -1"):
        values("out[0 - 1] = T.float32(1.0)", "float32", 1)
    with pytest.raises(InterpreterError, match=r"element 8 of an allocation of 8 elements"):
        values("A_1 = T.decl_buffer((9,), data=A.data)\nout[0] = A_1[8]", "float32", 1,
               ', A: T.Buffer((2, 4), "float32")', arrays=[np.zeros((2, 4), "float32")])


def test_unsupported_constructs_fail_clearly():
    with pytest.raises(InterpreterError, match="T.call_extern.*|external function 'my_fn'"):
        values('out[0] = T.call_extern("float32", "my_fn", T.float32(1.0))', "float32", 1)
    # An unsupported call in a branch never taken does not prevent the run.
    got = values('if x > 0:\n    out[0] = T.call_extern("float32", "my_fn", T.float32(1.0))\nout[0] = T.float32(2.0)',
                 "float32", 1, ", x: T.int32", [0])
    assert got[0] == 2


# ------------------------------------------------------------------ blocks
MATMUL = """
@T.prim_func
def main(a: T.handle, B: T.Buffer((8, 4), "float32"), c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, 8))
    C = T.match_buffer(c, (n, 4))
    for i, j, k in T.grid(n, 4, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def test_block_matmul_with_init_and_symbolic_shape():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 8)).astype("float32"), rng.standard_normal((8, 4)).astype("float32")
    c = np.full((3, 4), 7.0, "float32")  # init overwrites whatever was there
    run_prim_func(prim(MATMUL), [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)


def test_block_predicate_alloc_buffer_match_buffer_and_opaque_block():
    src = """
@T.prim_func
def main(A: T.Buffer((4, 5), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((6,), "float32")):
    for io, ii in T.grid(2, 4):
        with T.block("pad"):
            vi = T.axis.spatial(6, io * 4 + ii)
            T.where(io * 4 + ii < 6)
            C[vi] = T.float32(1.0)
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            row = T.match_buffer(A[vi, 1:5], (4,))
            acc = T.alloc_buffer((1,))
            for k in range(4):
                acc[0] = acc[0] + row[k]
            B[vi] = acc[0]
    with T.block("opaque"):
        C[5] = C[5] + T.float32(1.0)
"""
    a = np.arange(20, dtype="float32").reshape(4, 5)
    b, c = np.zeros(4, "float32"), np.zeros(6, "float32")
    run_prim_func(prim(src), [a, b, c])
    np.testing.assert_array_equal(b, a[:, 1:].sum(axis=1))
    np.testing.assert_array_equal(c, [1, 1, 1, 1, 1, 2])


# ------------------------------------------------------------------ calling convention
def test_executor_call_getitem_and_in_place():
    mod = from_source("""
@I.ir_module
class Module:
    @T.prim_func
    def scale(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), s: T.float32):
        for i in range(4):
            B[i] = A[i] * s
""")
    ex = InterpreterExecutor(mod)
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    assert ex.call("scale", [a, b], [2.5]) is None
    np.testing.assert_array_equal(b, a * 2.5)
    ex["scale"](a, b, 3)
    np.testing.assert_array_equal(b, a * 3)
    assert "scale" in ex and ex.prim_func_names() == ["scale"]
    assert ex.compiled("scale") is ex.compiled("scale")
    with pytest.raises(KeyError, match="no PrimFunc 'nope' .*PrimFuncs: scale"):
        ex.call("nope", [])
    with pytest.raises(TypeError, match="takes 3 arguments"):
        ex["scale"](a, b)


def _matmul_args(n=3, m=3):
    return [np.zeros((n, 8), "float32"), np.zeros((8, 4), "float32"), np.zeros((m, 4), "float32")]


@pytest.mark.parametrize("args, scalars, error, message", [
    (_matmul_args()[:2], (), TypeError, r"main: expected 3 arrays \(A, B, C\) and 0 scalars, got 2 and 0"),
    (_matmul_args(), (1,), TypeError, r"got 3 and 1"),
    ([[0.0] * 8] + _matmul_args()[1:], (), TypeError,
     r"argument 'A' must be a numpy array \(float32, shape \(n, 8\)\), got list"),
    ([np.zeros((3, 8), "float64")] + _matmul_args()[1:], (), ValueError,
     "argument 'A': expected dtype float32, got float64"),
    ([np.zeros((3, 8, 1), "float32")] + _matmul_args()[1:], (), ValueError,
     r"argument 'A': expected 2 dimensions \(shape \(n, 8\)\), got 3 \(shape \(3, 8, 1\)\)"),
    ([np.zeros((3, 9), "float32")] + _matmul_args()[1:], (), ValueError,
     r"argument 'A': expected shape \(n, 8\), got \(3, 9\): dimension 1 must be 8"),
    (_matmul_args(3, 4), (), ValueError,
     r"argument 'C': expected shape \(n, 4\) with n = 3 \(from A.shape\[0\]\), got \(4, 4\): C.shape\[0\] is 4"),
    ([np.zeros((8, 3), "float32").T] + _matmul_args()[1:], (), ValueError,
     "argument 'A' must be C-contiguous"),
    ([np.zeros((3, 16), "float32")[:, ::2]] + _matmul_args()[1:], (), ValueError,
     "argument 'A' must be C-contiguous"),
])
def test_bad_arguments_are_refused(args, scalars, error, message):
    # The checks (and messages) of the LLVM executable: backend/signature.py serves both.
    fn = CompiledPrimFunc(prim(MATMUL))
    with pytest.raises(ArgumentError, match=message):
        fn(args, scalars)
    with pytest.raises(error, match=message):
        fn(args, scalars)


def test_scalar_parameters_are_checked():
    fn = CompiledPrimFunc(prim("""
@T.prim_func
def main(out: T.Buffer((1,), "int8"), x: T.int8, f: T.float32, b: T.bool):
    out[0] = T.if_then_else(b, x, T.Cast("int8", f))
"""))
    out = np.zeros(1, "int8")
    fn([out], [5, 2.0, True])
    assert out[0] == 5
    with pytest.raises(ValueError, match=r"argument 'x' = 300 does not fit in int8 \(-128..127\)"):
        fn([out], [300, 2.0, True])
    with pytest.raises(TypeError, match=r"argument 'x' must be an integer \(int8\), got float"):
        fn([out], [1.5, 2.0, True])
    with pytest.raises(TypeError, match=r"argument 'b' must be a bool \(bool\), got int"):
        fn([out], [1, 2.0, 1])


def test_scalar_parameter_used_as_a_dimension():
    src = """
@T.prim_func
def main(a: T.handle, n: T.int64):
    A = T.match_buffer(a, (n,), "int64")
    for i in range(n):
        A[i] = i * n
"""
    arr = np.zeros(4, "int64")
    run_prim_func(prim(src), [arr], [4])
    assert arr.tolist() == [0, 4, 8, 12]
    with pytest.raises(ValueError, match=r"argument 'A': expected shape \(n,\) with n = 5 \(from argument 'n'\)"):
        run_prim_func(prim(src), [arr], [5])


def test_declared_strides_accept_a_matching_view():
    src = """
@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, (3, 4), "int32", strides=(8, 1))
    for i, j in T.grid(3, 4):
        A[i, j] = i * 10 + j
"""
    base = np.zeros((3, 8), "int32")
    run_prim_func(prim(src), [base[:, 2:6]])
    np.testing.assert_array_equal(base[:, 2:6], np.arange(3)[:, None] * 10 + np.arange(4))
    assert not base[:, :2].any() and not base[:, 6:].any()
    with pytest.raises(ValueError, match=r"argument 'A': expected strides \(in elements\) \(8, 1\), got \(4, 1\)"):
        run_prim_func(prim(src), [np.zeros((3, 4), "int32")])
