"""The one set of constant-folding rules (``tvmlite.ir.const_fold``): TVM's operator construction
(``ieee_exact=False``, what ``te`` builds), Simplify's IEEE-exact float rules (``ieee_exact=True``)
and the integer canonicaliser, and the three users giving what the rules say."""
import math

import numpy as np
import pytest

from tvmlite import te
from tvmlite.te.expr import wrap
from tvmlite.ir import tir
from tvmlite.ir.arith import simplify
from tvmlite.ir.const_fold import (fold_binary, fold_cast, fold_choice, fold_ints, fold_logic, fold_not,
                                   wrap_int)
from tvmlite.ir.structural import structural_equal
from tvmlite.passes.simplify_tir import simplify_stmt

X = tir.Var("x", "float32")
N = tir.Var("n", "int32")


def f32(v):
    return tir.FloatImm("float32", v)


def i32(v):
    return tir.IntImm("int32", v)


def test_wrap_int_is_twos_complement():
    assert [wrap_int(2**31, "int32"), wrap_int(-1, "uint8"), wrap_int(300, "int8"), wrap_int(2, "bool")] == \
        [-2**31, 255, 44, 1]


@pytest.mark.parametrize("cls, a, b, want", [
    (tir.Div, -7, 2, -3), (tir.Mod, -7, 2, -1), (tir.FloorDiv, -7, 2, -4), (tir.FloorMod, -7, 2, 1),
    (tir.FloorDiv, 1, 0, None), (tir.Mod, 1, 0, None), (tir.LT, 1, 2, None),
])
def test_fold_ints(cls, a, b, want):
    assert fold_ints(cls, a, b) == want


def test_integer_literals_fold_and_wrap_in_both_modes():
    for exact in (False, True):
        assert fold_binary(tir.Add, i32(2**31 - 1), i32(1), ieee_exact=exact).value == -2**31
        assert fold_binary(tir.Div, i32(-7), i32(2), ieee_exact=exact).value == -3
        assert fold_binary(tir.FloorDiv, i32(1), i32(0), ieee_exact=exact) is None
    # te's operators leave T.truncmod of literals as written; the canonicaliser computes it.
    assert fold_binary(tir.Mod, i32(7), i32(2), truncmod=False) is None
    assert fold_binary(tir.Mod, i32(7), i32(2)).value == 1


def test_float_identities_by_mode():
    zero, neg_zero, one = f32(0.0), f32(-0.0), f32(1.0)
    # TVM's construction (checked against TVM 0.27: x + 0.0 and x - 0.0 print as x).
    assert fold_binary(tir.Add, X, zero) is X
    assert fold_binary(tir.Add, zero, X) is X
    assert fold_binary(tir.Sub, X, zero) is X
    # x / 1.0 stays: TVM v0.23's LegalizeOps expectations keep it (0.27 folds it; tvmlite follows v0.23)
    assert fold_binary(tir.Div, X, one) is None
    assert fold_binary(tir.Div, tir.Var("i", "int32"), tir.IntImm("int32", 1)).name == "i"
    # IEEE-exact: x + 0.0 is not x for x = -0.0, x * 0.0 is not 0 for NaN.
    assert fold_binary(tir.Add, X, zero, ieee_exact=True) is None
    assert fold_binary(tir.Add, X, neg_zero, ieee_exact=True) is X
    assert fold_binary(tir.Add, neg_zero, X, ieee_exact=True) is X
    assert fold_binary(tir.Sub, X, zero, ieee_exact=True) is X
    assert fold_binary(tir.Sub, X, neg_zero, ieee_exact=True) is None
    assert fold_binary(tir.Mul, X, zero, ieee_exact=True) is None
    assert fold_binary(tir.Mul, one, X, ieee_exact=True) is X


def test_float_literals_round_only_when_exact():
    a, b = f32(0.1), f32(0.2)
    assert fold_binary(tir.Add, a, b).value == 0.1 + 0.2  # a double, as TVM's FloatImm holds it
    assert fold_binary(tir.Add, a, b, ieee_exact=True).value == float(np.float32(0.1) + np.float32(0.2))
    assert fold_binary(tir.Div, f32(1.0), f32(0.0), ieee_exact=True) is None  # left to run time
    nan_min = fold_binary(tir.Min, f32(math.nan), f32(1.0), ieee_exact=True)
    assert nan_min.value == 1.0  # the compiled select: a NaN on the left gives the right operand
    assert fold_binary(tir.LT, f32(1.0), f32(2.0), ieee_exact=True).value == 1


def test_logic_choice_and_cast():
    b = tir.Var("b", "bool")
    true, false = tir.IntImm("bool", 1), tir.IntImm("bool", 0)
    assert fold_logic(tir.And, true, b) is b
    assert fold_logic(tir.And, b, false).value == 0
    assert fold_logic(tir.Or, b, true).value == 1
    assert fold_logic(tir.Or, b, b) is None
    assert fold_not(true).value == 0 and fold_not(b) is None
    assert fold_choice(true, "then", "else") == "then" and fold_choice(b, 1, 2) is None
    assert fold_cast(f32(-2.7), "int8").value == -2
    assert fold_cast(i32(300), "uint8").value == 44
    assert fold_cast(tir.FloatImm("float64", 0.1), "float32").value == 0.1
    assert fold_cast(tir.FloatImm("float64", 0.1), "float32", ieee_exact=True).value == float(np.float32(0.1))


def test_the_three_users_fold_by_the_rules():
    # te builds with TVM's construction rules.
    assert (wrap(X) + 0.0).expr is X
    assert isinstance((wrap(X) * 0.0).expr, tir.Mul)
    assert (te.const(2**31 - 1, "int32") + 1).expr.value == -2**31
    assert isinstance(te.truncmod(te.const(7), te.const(2)).expr, tir.Mod)
    # Simplify keeps every IEEE value.
    v = tir.Var("v", "float32")
    stmt = tir.Evaluate(tir.Add(tir.Add(v, f32(0.0)), tir.Sub(v, f32(0.0))))
    got = simplify_stmt(stmt)
    assert structural_equal(got.value, tir.Add(tir.Add(v, f32(0.0)), v))
    # The canonicaliser folds integer literals (wrapping to the dtype) and truncmod.
    assert simplify(tir.Mod(i32(-7), i32(2))).value == -1
    assert simplify(tir.Add(tir.IntImm("int8", 127), tir.IntImm("int8", 1))).value == -128
