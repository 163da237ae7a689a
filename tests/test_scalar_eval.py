"""The one compiler of TIR scalar expressions (``tvmlite.ir.scalar_eval``): its Python-number
rules, and the three evaluators built on it (the VM's sizes, the argument checker's shapes, the
TIR interpreter's expressions), each keeping its own semantics."""
import math

import numpy as np
import pytest

from tvmlite.backend.interpreter import _Compiler, run_prim_func
from tvmlite.backend.signature import _ShapeEval
from tvmlite.backend.vm_prim_exprs import PrimExprCompiler
from tvmlite.ir import tir
from tvmlite.ir.scalar_eval import ScalarCompiler, ScalarEvalError
from tvmlite.script import from_source


class _DictCompiler(ScalarCompiler):
    """Variables and lets keyed by name in a dict frame."""

    def var_key(self, var):
        return var.name

    def let_key(self, var):
        return var.name


def i64(v):
    return tir.IntImm("int64", v)


def f64(v):
    return tir.FloatImm("float64", v)


N, M = tir.Var("n", "int64"), tir.Var("m", "int64")
X = tir.Var("x", "float64")


def run(expr, **frame):
    return _DictCompiler().compile(expr)(frame)


@pytest.mark.parametrize("cls, a, b, want", [
    (tir.Div, -7, 2, -3), (tir.Mod, -7, 2, -1), (tir.FloorDiv, -7, 2, -4), (tir.FloorMod, -7, 2, 1),
    (tir.Add, 2, 3, 5), (tir.Sub, 2, 3, -1), (tir.Mul, -2, 3, -6), (tir.Min, 4, -1, -1), (tir.Max, 4, -1, 4),
    (tir.LT, 1, 2, True), (tir.GE, 1, 2, False), (tir.EQ, 3, 3, True), (tir.NE, 3, 3, False),
])
def test_integer_rules_on_python_ints(cls, a, b, want):
    got = run(cls(N, M), n=a, m=b)
    assert got == want and type(got) is type(want)
    assert run(cls(i64(a), i64(b))) == want  # two literals: computed once, same value


def test_float_rules_cast_and_literals():
    assert run(tir.Div(X, f64(4.0)), x=-7.0) == -1.75
    assert run(tir.Mod(X, f64(2.0)), x=-7.0) == math.fmod(-7.0, 2.0)
    assert run(tir.FloorDiv(X, f64(2.0)), x=-7.0) == -4.0
    got = run(tir.Cast("int64", X), x=-2.7)
    assert got == -2 and type(got) is int  # truncates towards zero, as C
    assert run(tir.Cast("bool", N), n=3) is True
    assert run(tir.IntImm("bool", 1)) is True


def test_if_then_else_and_select_compute_only_the_side_taken():
    guarded = tir.Call("int64", "tir.if_then_else", (tir.NE(M, i64(0)), tir.FloorDiv(N, M), i64(-1)))
    assert run(guarded, n=7, m=0) == -1
    assert run(guarded, n=7, m=2) == 3
    assert run(tir.Select(tir.NE(M, i64(0)), tir.FloorDiv(N, M), i64(-1)), n=7, m=0) == -1


def test_let_binds_for_the_body_and_unknown_nodes_are_refused():
    v = tir.Var("v", "int64")
    assert run(tir.Let(v, tir.Add(N, i64(1)), tir.Mul(v, v)), n=2) == 9
    with pytest.raises(ScalarEvalError, match="Call"):
        run(tir.Call("float64", "tir.exp", (X,)), x=0.0)


def test_the_three_evaluators_are_the_one_compiler():
    assert issubclass(PrimExprCompiler, ScalarCompiler)
    assert issubclass(_Compiler, ScalarCompiler)
    assert all("visit_add_" not in vars(c) for c in (PrimExprCompiler, _Compiler))


def test_shape_evaluation_gives_none_when_not_computable():
    env = {id(N): 6, id(M): 4}
    assert _ShapeEval(env).run(tir.Add(tir.Mul(N, i64(2)), tir.FloorDiv(M, i64(3)))) == 13
    assert _ShapeEval(env).run(tir.Div(tir.Sub(i64(0), N), M)) == -1  # truncating
    assert _ShapeEval(env).run(tir.Cast("int32", N)) == 6
    assert _ShapeEval(env).run(tir.FloorDiv(N, tir.Sub(M, i64(4)))) is None  # by zero
    assert _ShapeEval(env).run(tir.Add(N, tir.Var("k", "int64"))) is None  # unbound
    assert _ShapeEval(env).run(tir.Select(tir.LT(N, M), N, M)) is None  # not shape arithmetic
    assert _ShapeEval(env).run(f64(1.0)) is None


def test_interpreter_keeps_numpy_rules_with_the_shared_walk():
    src = '''
@T.prim_func
def main(out: T.Buffer((5,), "float32"), o8: T.Buffer((2,), "int8"), x: T.float32, k: T.int8, z: T.int32):
    out[0] = T.min(x, T.float32(1))
    out[1] = T.if_then_else(z != 0, T.Cast("float32", 7 // z), T.float32(-1))
    out[2] = T.Select(x < T.float32(0), x, T.float32(2))
    out[3] = T.float32(1) / T.float32(3)
    out[4] = x * T.float32(2)
    o8[0] = k + T.int8(100)
    o8[1] = T.Cast("int8", T.truncdiv(T.int32(0) - 7, 2))
'''
    out, o8 = np.zeros(5, "float32"), np.zeros(2, "int8")
    run_prim_func(from_source(src), [out, o8], [float("nan"), 100, 0])
    # T.min is the compiled select: a NaN on the left gives the right operand (Python's min would not).
    assert out[0] == 1.0
    assert out[1] == -1.0  # lazy: 7 // 0 is never computed
    assert out[2] == 2.0
    assert out[3] == np.float32(1) / np.float32(3)  # float32 rounding
    assert math.isnan(out[4])
    assert o8.tolist() == [-56, -3]  # int8 wraps; division truncates


def test_interpreter_refuses_integer_division_by_zero():
    src = '''
@T.prim_func
def main(out: T.Buffer((1,), "int32"), z: T.int32):
    out[0] = 7 // z
'''
    with pytest.raises(Exception, match="integer division by zero"):
        run_prim_func(from_source(src), [np.zeros(1, "int32")], [0])


def test_python_rules_compute_both_operands_of_and_or():
    """The VM's rule (kept from before the merge): both sides are computed; the interpreter's
    scalars short-circuit instead."""
    divides = tir.GT(tir.FloorDiv(N, M), i64(0))
    with pytest.raises(ZeroDivisionError):
        run(tir.And(tir.NE(N, N), divides), n=1, m=0)  # false and ...: the right side still runs
    with pytest.raises(ZeroDivisionError):
        run(tir.Or(tir.EQ(N, N), divides), n=1, m=0)
    assert run(tir.And(tir.LT(N, M), tir.GT(N, M)), n=1, m=2) is False
    assert run(tir.Or(tir.LT(N, M), tir.GT(N, M)), n=1, m=2) is True
