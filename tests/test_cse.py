"""EliminateCommonSubexpr: seed 000's story (the duplicated add goes only under opt_level 3, and
disabled_pass keeps it), then TVM's rules: aliases, scoping of dataflow blocks, branches and
nested functions, impure calls, call_only, match_cast."""
import numpy as np
import pytest

from tvmlite import passes as P
from tvmlite.ir import IRModule, structural_equal
from tvmlite.passes.cse import identical
from tvmlite.script import from_source
from tvmlite.testing import check_transform

# Seed 000's example program as a Relax script: conv2d on `x`, the constant `c`, `c + c`, `* 2`,
# and the two identical adds `z` and `z1`. (FoldConstant, which folds `c + c` and `* 2`, is
# another pass; here the constant arithmetic stays.)
from seed_programs import SEED000  # noqa: E402  (the program, shared with other tests)

HEADER = '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), dtype="float32"), weight: R.Tensor((64, 64, 3, 3), dtype="float32")) -> R.Tensor((1, 64, 54, 54), dtype="float32"):
        with R.dataflow():
            conv: R.Tensor((1, 64, 54, 54), dtype="float32") = R.nn.conv2d(x, weight, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="void")
            y: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][0])
            y1: R.Tensor((1, 64, 54, 54), dtype="float32") = R.multiply(y, R.const(2.0, "float32"))
            y2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(conv, y1)
            z: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(y2, metadata["relax.expr.Constant"][0])
'''
FOOTER = '''            R.output(z2)
        return z2

# Metadata omitted. Use show_meta=True in script() method to show it.'''

# Both adds are computed.
KEPT = HEADER + '''            z1: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(y2, metadata["relax.expr.Constant"][0])
            z2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z1)
''' + FOOTER

# As TVM: the duplicate becomes an alias of the first variable, whose uses now name `z`.
ELIMINATED = HEADER + '''            z1: R.Tensor((1, 64, 54, 54), dtype="float32") = z
            z2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z)
''' + FOOTER

# DeadCodeElimination then drops the unused alias: the tutorial's `add(%2, %2)`.
ELIMINATED_DCE = HEADER + '''            z2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z)
''' + FOOTER


@pytest.fixture
def seed000():
    return from_source(SEED000, extra_vars={"c": np.ones((1, 64, 54, 54), "float32")})


def test_seed000_module_prints_both_adds(seed000):
    assert seed000.script() == KEPT


def test_opt_level_3_pass_is_skipped_at_the_default_opt_level(seed000):
    assert P.EliminateCommonSubexpr().info.opt_level == 3
    seq = P.Sequential([P.EliminateCommonSubexpr()])
    assert seq(seed000).script() == KEPT  # PassContext() defaults to opt_level 2


def test_opt_level_3_eliminates_the_duplicate(seed000):
    seq = P.Sequential([P.EliminateCommonSubexpr()])
    with P.PassContext(opt_level=3) as ctx:
        out = seq(seed000)
    assert out.script() == ELIMINATED
    assert ctx.stats["EliminateCommonSubexpr"]["eliminated"] == 1
    assert seed000.script() == KEPT  # the input is unchanged


def test_with_dead_code_elimination_the_alias_goes(seed000):
    seq = P.Sequential([P.EliminateCommonSubexpr(), P.DeadCodeElimination()])
    with P.PassContext(opt_level=3):
        assert seq(seed000).script() == ELIMINATED_DCE


def test_disabled_pass_keeps_the_duplicate(seed000):
    seq = P.Sequential([P.EliminateCommonSubexpr(), P.DeadCodeElimination()])
    with P.PassContext(opt_level=3, disabled_pass=["EliminateCommonSubexpr"]):
        assert seq(seed000).script() == KEPT


def test_called_directly_it_runs_whatever_the_opt_level(seed000):
    assert P.EliminateCommonSubexpr()(seed000).script() == ELIMINATED


def test_registered_with_its_option():
    seq = P.parse_pipeline("EliminateCommonSubexpr{call_only=true}")
    assert str(seq) == "EliminateCommonSubexpr{call_only=true}"
    assert seq.passes[0].call_only is True


def test_nothing_to_eliminate_returns_the_same_function():
    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        y = R.add(x, x)
        return y
''')
    assert P.EliminateCommonSubexpr()(mod)["main"] is mod["main"]


# ---------------------------------------------------------------- TVM's rules
def check(before: str, expected: str, **options) -> IRModule:
    return check_transform(before, expected, P.EliminateCommonSubexpr(**options))


def test_dataflow_variables_are_not_reused_after_their_block():
    before = '''
@I.ir_module
class Module:
    @R.function(pure=False)
    def foo(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            lv0 = R.add(x, y)
            lv1 = R.add(x, y)
            gv1 = R.multiply(lv0, lv1)
            R.output(gv1)
        _ = R.print(format="Prevent dataflow block merging")
        with R.dataflow():
            lv2 = R.add(x, y)
            lv3 = R.add(x, y)
            gv2 = R.multiply(lv2, lv3)
            R.output(gv2)
        gv3 = R.add(x, y)
        gv4 = R.add(x, y)
        gv5 = R.multiply(gv3, gv4)
        return R.add(gv2, gv5)
'''
    expected = '''
@I.ir_module
class Module:
    @R.function(pure=False)
    def foo(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            lv0 = R.add(x, y)
            lv1 = lv0
            gv1 = R.multiply(lv0, lv0)
            R.output(gv1)
        _ = R.print(format="Prevent dataflow block merging")
        with R.dataflow():
            lv2 = R.add(x, y)
            lv3 = lv2
            gv2 = R.multiply(lv2, lv2)
            R.output(gv2)
        gv3 = R.add(x, y)
        gv4 = gv3
        gv5 = R.multiply(gv3, gv3)
        return R.add(gv2, gv5)
'''
    check(before, expected)


def test_block_outputs_keep_their_own_name_after_the_block():
    before = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            A = R.add(x, y)
            B = R.add(x, y)
            C = R.multiply(A, B)
            R.output(B, C)
        D = R.add(x, y)
        return (B, C, D)
'''
    # Inside the block B's uses name A; after it only B is visible, so D reuses B.
    expected = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            A = R.add(x, y)
            B = A
            C = R.multiply(A, A)
            R.output(B, C)
        D = B
        return (B, C, B)
'''
    check(before, expected)


def test_operands_must_be_the_same_variables_in_the_same_order():
    before = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        a = R.add(x, y)
        b = R.add(y, x)
        c = R.add(x, x)
        d = R.sum(a, axis=[0])
        e = R.sum(a, axis=[1])
        return (a, b, c, d, e)
'''
    check(before, before)


def test_constants_are_compared_by_value():
    before = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        a = R.add(x, R.const(1.0, "float32"))
        b = R.add(x, R.const(1.0, "float32"))
        c = R.add(x, R.const(2.0, "float32"))
        return (a, b, c)
'''
    expected = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        a = R.add(x, R.const(1.0, "float32"))
        b = a
        c = R.add(x, R.const(2.0, "float32"))
        return (a, a, c)
'''
    check(before, expected)


def test_impure_calls_are_never_merged():
    before = '''
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        p1 = R.print(format="Message")
        p2 = R.print(format="Message")
        a1 = R.assert_op(R.const(False), format="Always fails")
        lv0 = R.add(x, y)
        lv1 = R.add(x, y)
        gv = R.multiply(lv0, lv1)
        a2 = R.assert_op(R.const(False), format="Always fails")
        return gv
'''
    expected = '''
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        p1 = R.print(format="Message")
        p2 = R.print(format="Message")
        a1 = R.assert_op(R.const(False), format="Always fails")
        lv0 = R.add(x, y)
        lv1 = lv0
        gv = R.multiply(lv0, lv0)
        a2 = R.assert_op(R.const(False), format="Always fails")
        return gv
'''
    check(before, expected)


def test_call_only_leaves_other_values():
    before = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        t1 = (x, x)
        t2 = (x, x)
        a = R.add(x, x)
        b = R.add(x, x)
        return (t1, t2, a, b)
'''
    expected_call_only = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        t1 = (x, x)
        t2 = (x, x)
        a = R.add(x, x)
        b = a
        return (t1, t2, a, a)
'''
    expected_all = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        t1 = (x, x)
        t2 = t1
        a = R.add(x, x)
        b = a
        return (t1, t1, a, a)
'''
    check(before, expected_call_only, call_only=True)
    check(before, expected_all)


def test_match_cast_matches_only_the_same_cast():
    before = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(dtype="float32"), y: R.Tensor(dtype="float32")):
        with R.dataflow():
            A1 = R.add(x, y)
            n = T.int64()
            m = T.int64()
            B1 = R.match_cast(A1, R.Tensor([n, m], "float32"))
            A2 = R.add(x, y)
            p = T.int64()
            q = T.int64()
            B2 = R.match_cast(A2, R.Tensor([p, q], "float32"))
            B3 = R.match_cast(A2, R.Tensor([p, q], "float32"))
            gv = R.multiply(B1, B3)
            R.output(gv)
        return gv
'''
    # B2 defines other symbolic variables than B1: it stays (on A1); B3 repeats B2.
    expected = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(dtype="float32"), y: R.Tensor(dtype="float32")):
        with R.dataflow():
            A1 = R.add(x, y)
            n = T.int64()
            m = T.int64()
            B1 = R.match_cast(A1, R.Tensor([n, m], "float32"))
            A2 = A1
            p = T.int64()
            q = T.int64()
            B2 = R.match_cast(A1, R.Tensor([p, q], "float32"))
            B3 = B2
            gv = R.multiply(B1, B2)
            R.output(gv)
        return gv
'''
    check(before, expected)


def test_branches_reuse_bindings_before_the_if_but_not_each_other():
    before = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"), cond: R.Prim("bool")):
        A = R.add(x, y)
        if cond:
            B = R.add(x, y)
            C = R.multiply(x, B)
            D = R.multiply(x, C)
        else:
            C = R.multiply(x, y)
            D = R.multiply(x, C)
        E = R.multiply(x, y)
        return (D, E)
'''
    # Each branch's `R.multiply(x, C)` and the `R.multiply(x, y)` after the if stay.
    expected = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"), cond: R.Prim("bool")):
        A = R.add(x, y)
        if cond:
            B = A
            C = R.multiply(x, A)
            D = R.multiply(x, C)
        else:
            C = R.multiply(x, y)
            D = R.multiply(x, C)
        E = R.multiply(x, y)
        return (D, E)
'''
    check(before, expected)


def test_nested_functions_start_from_a_clean_table():
    before = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
        a = R.add(x, x)
        @R.function
        def inner(y: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
            b = R.add(x, x)
            c = R.add(y, y)
            d = R.add(y, y)
            return R.add(b, d)
        e = inner(a)
        f = inner(a)
        return R.add(e, f)
'''
    expected = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
        a = R.add(x, x)
        @R.function
        def inner(y: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
            b = R.add(x, x)
            c = R.add(y, y)
            d = c
            return R.add(b, c)
        e = inner(a)
        f = e
        return R.add(e, e)
'''
    check(before, expected)


def test_identical_pins_variables():
    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
        a = R.add(x, y)
        b = R.add(y, x)
        c = R.add(x, y)
        return (a, b, c)
''')
    bindings = mod["main"].body.blocks[0].bindings
    a, b, c = (binding.value for binding in bindings)
    assert structural_equal(a, b)  # variables mapped one-to-one
    assert not identical(a, b)
    assert identical(a, c)
