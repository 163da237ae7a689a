"""TIR Simplify: index arithmetic and constants fold in their dtype, loop and block ranges
decide divisions and comparisons, constant conditions pick their branch, single-valued
variables are replaced; exact printed text. Also the range-aware ``arith.Analyzer`` it uses."""
import pytest

from tvmlite import passes as P
from tvmlite.ir import tir
from tvmlite.ir.arith import Analyzer, format_expr, simplify
from tvmlite.script import from_source

HEADER = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T

@I.ir_module
class Module:
'''


def simplified(text: str) -> str:
    return P.Simplify()(from_source(text)).script()


def test_arithmetic_folds_in_the_expression_dtype():
    before = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def main(A: T.Buffer((64,), "float32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((4,), "int8"), n: T.int64):
        for i, j in T.grid(8, 8):
            A[i * 8 + j + 0] = A[(j + i * 8) * 1] * T.float32(2.0) + (T.float32(0.25) * T.float32(2.0) - T.float32(0.5))
            B[i, j] = (2 + 3) * i + 0 * j + T.min(4, 9) - T.max(1, 2)
        for k in range(T.int64(16)):
            A[T.Cast("int32", k // T.int64(16) + n * T.int64(1) - n)] = T.float32(1.5) + T.float32(2.25)
        C[0] = T.int8(100) + T.int8(100)
'''
    assert simplified(before) == HEADER + '''    @T.prim_func(private=True)
    def main(A: T.Buffer((64,), "float32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((4,), "int8"), n: T.int64):
        for i, j in T.grid(8, 8):
            A[i * 8 + j] = T.Add(A[i * 8 + j] * T.float32(2.0), T.float32(0.0))
            B[i, j] = i * 5 + 2
        for k in range(T.int64(16)):
            A[0] = T.float32(3.75)
        C[0] = T.int8(-56)'''


def test_block_ranges_simplify_reshape_indices():
    before = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def reshape(A: T.Buffer((4, 16), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("T_reshape"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi % 64 // 16, (vi + 16) % 16]
'''
    assert simplified(before) == HEADER + '''    @T.prim_func(private=True)
    def reshape(A: T.Buffer((4, 16), "float32"), B: T.Buffer((64,), "float32")):
        # with T.block("root"):
        for i in range(64):
            with T.block("T_reshape"):
                vi = T.axis.spatial(64, i)
                T.reads(A[vi // 16, vi % 16])
                T.writes(B[vi])
                B[vi] = A[vi // 16, vi % 16]'''


def test_single_valued_loop_and_block_variables_are_their_value():
    before = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(1), T.int64(8)), "float32"), B: T.Buffer((T.int64(8),), "float32"),
            C: T.Buffer((T.int64(1), T.int64(8)), "float32")):
        for ax0, ax1 in T.grid(T.int64(1), T.int64(8)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1], B[v_ax1])
                T.writes(C[v_ax0, v_ax1])
                C[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[v_ax1]
'''
    # As TVM: the loop stays, its variable (and the block's) is replaced by the one value.
    assert simplified(before) == HEADER + '''    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(1), T.int64(8)), "float32"), B: T.Buffer((T.int64(8),), "float32"), C: T.Buffer((T.int64(1), T.int64(8)), "float32")):
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(1), T.int64(8)):
            with T.block("T_add"):
                v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
                v_ax1 = T.axis.spatial(T.int64(8), ax1)
                T.reads(A[T.int64(0), v_ax1], B[v_ax1])
                T.writes(C[T.int64(0), v_ax1])
                C[T.int64(0), v_ax1] = A[T.int64(0), v_ax1] + B[v_ax1]'''


def test_constant_conditions_pick_their_branch():
    before = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def main(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in range(16):
            if i < 16:
                A[i] = T.Select(n * 0 == 0, T.float32(1.0), T.float32(2.0))
            if i >= 16:
                A[i] = T.float32(3.0)
            else:
                A[i] = T.if_then_else(i < 8 or True, T.float32(4.0), T.float32(5.0))
            if i >= 16:
                A[i] = T.float32(6.0)
            if i > 8 and n > 0:
                A[i] = A[i]
        for j in range(1):
            A[j + n] = T.float32(0.0)
'''
    assert simplified(before) == HEADER + '''    @T.prim_func(private=True)
    def main(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in range(16):
            A[i] = T.float32(1.0)
            A[i] = T.float32(4.0)
            T.evaluate(0)
            if 8 < i and 0 < n:
                T.evaluate(0)
        for j in range(1):
            A[n] = T.float32(0.0)'''


def test_let_statements_and_min_max_with_ranges():
    before = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "int32")):
        for i in range(16):
            k = i * 2 + 0
            A[T.min(k, 30) // 2 + 16] = A[T.max(i, 15) - 15 + i]
            B[i] = T.Cast("int32", T.float32(7.9)) + T.Cast("int32", T.int64(3))
            v = B[i]
            B[i + 16] = v + v
'''
    # `k` is inlined (pure integer value); `v` loads from memory, so it stays.
    assert simplified(before) == HEADER + '''    @T.prim_func(private=True)
    def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "int32")):
        for i in range(16):
            A[i + 16] = A[i]
            B[i] = 10
            v: T.int32 = B[i]
            B[i + 16] = v * 2'''


def test_float_identities_and_casts():
    before = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float16")):
        A[0] = A[1] + T.float32(-0.0)
        A[1] = T.float32(1.0) * A[2] / T.float32(1.0) - T.float32(0.0)
        A[2] = A[3] * T.float32(0.0)
        A[3] = T.Cast("float32", 3) + T.Cast("float32", A[0])
        B[0] = T.float16(0.1) + T.float16(0.2)
'''
    # Only identities exact in IEEE arithmetic fold (unlike TVM, x * 0.0 stays: inf * 0.0 is NaN);
    # float16 literals add in float16.
    assert simplified(before) == HEADER + '''    @T.prim_func(private=True)
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float16")):
        A[0] = A[1]
        A[1] = A[2]
        A[2] = T.Mul(A[3], T.float32(0.0))
        A[3] = T.float32(3.0) + A[0]
        B[0] = T.float16(0.2998046875)'''


def test_unchanged_function_is_kept_and_changes_are_counted():
    text = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def same(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] * T.float32(2.0)

    @T.prim_func(private=True)
    def other(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i * 1] = A[i] * T.float32(2.0)
'''
    mod = from_source(text)
    with P.PassContext() as ctx:
        out = P.Sequential([P.Simplify()])(mod)
    assert out["same"] is mod["same"]
    assert out["other"] is not mod["other"]
    assert ctx.stats["Simplify"]["simplified_functions"] == 1


def test_relax_functions_are_left_alone_and_pass_is_registered():
    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        return x
''')
    assert P.Simplify()(mod)["main"] is mod["main"]
    assert P.get_pass("Simplify").info.kind == "prim_func"


# ---------------------------------------------------------------- arith.Analyzer
def _int(v: int) -> tir.IntImm:
    return tir.IntImm("int32", v)


@pytest.fixture
def analyzer():
    a = Analyzer()
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    a.bind(i, _int(0), _int(16))
    a.bind(j, _int(0), _int(4))
    return a, i, j


@pytest.mark.parametrize("make, text", [
    (lambda i, j: tir.FloorDiv(i, _int(16)), "0"),
    (lambda i, j: tir.FloorMod(i, _int(16)), "i"),
    (lambda i, j: tir.FloorDiv(tir.Add(tir.Mul(j, _int(16)), i), _int(16)), "j"),
    (lambda i, j: tir.FloorMod(tir.Add(tir.Mul(j, _int(16)), i), _int(16)), "i"),
    (lambda i, j: tir.Div(tir.Add(i, _int(1)), _int(17)), "0"),
    (lambda i, j: tir.FloorDiv(tir.Add(i, _int(1)), _int(16)), "(i + 1) // 16"),  # i + 1 may be 16
    (lambda i, j: tir.FloorMod(tir.Add(i, _int(16)), _int(16)), "i"),
    (lambda i, j: tir.FloorDiv(tir.Sub(i, _int(16)), _int(16)), "-1"),
    (lambda i, j: tir.FloorDiv(tir.Add(tir.Var("n", "int32"), _int(32)), _int(16)), "n // 16 + 2"),
    (lambda i, j: tir.FloorDiv(tir.Sub(tir.Var("n", "int32"), _int(1)), _int(2)), "(n - 1) // 2"),
    (lambda i, j: tir.Mod(tir.Add(i, _int(32)), _int(16)), "i"),  # truncated, but i + 32 >= 0
    (lambda i, j: tir.LT(i, _int(16)), "True"),
    (lambda i, j: tir.LT(i, _int(12)), "T.LT(i, 12)"),
    (lambda i, j: tir.GE(tir.FloorMod(i, _int(4)), _int(0)), "True"),
    (lambda i, j: tir.Min(i, _int(20)), "i"),
    (lambda i, j: tir.Max(tir.Mul(j, _int(4)), _int(12)), "12"),
])
def test_analyzer_uses_the_ranges(analyzer, make, text):
    a, i, j = analyzer
    assert format_expr(a.simplify(make(i, j))) == text


def test_analyzer_bounds_and_scoping(analyzer):
    a, i, j = analyzer
    assert a.const_int_bound(tir.Add(tir.Mul(j, _int(16)), i)) == (0, 63)
    assert a.can_prove(tir.LE(tir.Add(i, j), _int(18)))
    previous = a.bind(i, _int(0), _int(4))
    assert a.can_prove(tir.LT(i, _int(4)))
    a.restore(i, previous)
    assert not a.can_prove(tir.LT(i, _int(4)))
    n = tir.Var("n", "int32")
    assert a.bind(n, _int(0), n) is None and a.const_int_bound(n) is None  # symbolic: not recorded


def test_analyzer_leaves_plain_simplify_alone():
    i = tir.Var("i", "int32")
    a = Analyzer()
    a.bind(i, _int(0), _int(16))
    assert format_expr(simplify(tir.FloorDiv(i, _int(16)))) == "i // 16"  # no ranges outside the analyzer
    assert format_expr(a.simplify(tir.FloorDiv(i, _int(16)))) == "0"
