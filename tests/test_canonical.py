"""ir/canonical.py: the normal form TVM's create_prim_func gives stored values. Each expected
form is what TVM 0.27's ``arith.Analyzer().simplify`` prints for the same expression."""
import pytest

from tvmlite.ir import tir
from tvmlite.ir.arith import format_expr
from tvmlite.ir.canonical import canonical_simplify


def I(v):
    return tir.IntImm("int64", v)


x, y, b, c, z = (tir.Var(n, "int64") for n in "xybcz")
f = tir.Var("f", "float32")
fd, fm = tir.FloorDiv, tir.FloorMod

CASES = [
    # sums: positive terms by scale, then the constant, then the negative terms
    (tir.Sub(I(0), x), "0 - x"),
    (tir.Mul(x, I(-1)), "x * -1"),
    (tir.Add(tir.Mul(x, I(-1)), y), "y - x"),
    (tir.Add(tir.Mul(x, I(-3)), I(8)), "8 - x * 3"),
    (tir.Sub(x, tir.Add(b, c)), "x - b - c"),
    (tir.Add(x, tir.Mul(b, I(2))), "b * 2 + x"),
    (tir.Add(tir.Mul(x, tir.Mul(b, I(2))), y), "x * b * 2 + y"),
    (tir.Mul(I(2), x), "x * 2"),
    (tir.Sub(tir.Sub(x, I(1)), y), "x - y - 1"),
    (tir.Sub(I(1), x), "1 - x"),
    (tir.Sub(tir.Sub(b, I(1)), x), "b - x - 1"),
    (tir.Mul(tir.Mul(x, b), tir.Mul(y, I(2))), "x * b * y * 2"),
    (tir.Mul(tir.Add(x, y), I(2)), "x * 2 + y * 2"),
    (tir.Mul(tir.Add(x, I(1)), tir.Add(y, I(1))), "(x + 1) * (y + 1)"),
    # floor division and modulo by constants
    (fm(fd(fd(x, I(4)), I(3)), I(2)), "x % 24 // 12"),
    (fm(fd(x, I(4)), I(3)), "x % 12 // 4"),
    (fm(fd(fd(x, c), b), z), "x // c // b % z"),
    (fm(fd(fd(fd(tir.Add(tir.Mul(x, I(3)), y), I(4)), I(3)), I(2)), I(1)), "0"),
    (fd(tir.Add(x, I(8)), I(4)), "x // 4 + 2"),
    (fd(tir.Add(tir.Mul(x, I(4)), y), I(4)), "y // 4 + x"),
    (fm(tir.Add(tir.Mul(x, I(4)), y), I(4)), "y % 4"),
    (fd(tir.Add(x, I(3)), I(4)), "(x + 3) // 4"),
    (tir.Mul(fd(x, I(2)), I(2)), "x // 2 * 2"),
    (fd(tir.Sub(I(0), x), I(4)), "(0 - x) // 4"),
    (fd(tir.Mul(x, I(3)), I(4)), "x * 3 // 4"),
    (fm(tir.Mul(x, I(3)), I(4)), "x * 3 % 4"),
    # comparisons
    (tir.LT(tir.Add(x, I(3)), tir.Add(y, I(5))), "T.LT(x, y + 2)"),
    (tir.LT(tir.Add(x, I(5)), tir.Add(y, I(3))), "T.LT(x + 2, y)"),
    (tir.LE(tir.Add(x, I(3)), y), "T.LE(x + 3, y)"),
    (tir.LE(x, tir.Add(y, I(3))), "T.LE(x, y + 3)"),
    (tir.LT(x, tir.Add(y, I(1))), "T.LE(x, y)"),
    (tir.GE(x, tir.Add(y, I(1))), "T.LT(y, x)"),
    (tir.GE(x, tir.Add(y, I(2))), "T.LE(y + 2, x)"),
    (tir.GT(x, tir.Sub(y, I(2))), "T.LT(y, x + 2)"),
    (tir.GE(tir.Sub(x, b), I(0)), "T.LE(0, x - b)"),
    (tir.EQ(I(3), x), "T.EQ(x, 3)"),
    (tir.Not(tir.LT(x, y)), "T.LE(y, x)"),
    (tir.Not(tir.And(tir.EQ(x, y), tir.LT(x, c))), "T.Or(T.NE(x, y), T.LE(c, x))"),
    (tir.Not(tir.Not(tir.EQ(x, y))), "T.EQ(x, y)"),
    (tir.GT(f, tir.FloatImm("float32", 0.0)), "T.LT(0.0, f)"),
]


@pytest.mark.parametrize("expr,expected", CASES, ids=[e for _, e in CASES])
def test_tvm_normal_form(expr, expected):
    assert format_expr(canonical_simplify(expr)) == expected


def test_float_arithmetic_is_left_as_built():
    # TVM v0.23's legalized divide keeps ``x / 1.0`` (the Expected of test_divide_with_arg0_constant_scalar).
    e = tir.Div(f, tir.FloatImm("float32", 1.0))
    assert canonical_simplify(e) is e


def test_values_are_kept():
    # The normal form computes the same values (floor semantics) on a grid of integers.
    import itertools

    from tvmlite.ir.scalar_eval import ScalarCompiler

    class ById(ScalarCompiler):
        def var_key(self, var):
            return id(var)

    for expr, _ in CASES:
        if isinstance(expr, tir.CmpOp) and expr.a.dtype == "float32":
            continue  # the one float case: nothing to evaluate on integers
        fn_a = ById().compile(expr)
        fn_b = ById().compile(canonical_simplify(expr))
        for vals in itertools.product((-7, -1, 0, 3, 13), repeat=2):
            frame = {id(x): vals[0], id(y): vals[1], id(b): 5, id(c): 3, id(z): 4}
            assert fn_a(frame) == fn_b(frame), (format_expr(expr), vals)


def test_float_orderings_are_not_negated():
    # not (f < 0.0) holds for NaN, 0.0 <= f does not: only integer orderings flip under ``not``.
    e = tir.Not(tir.LT(f, tir.FloatImm("float32", 0.0)))
    assert format_expr(canonical_simplify(e)) == format_expr(e)
