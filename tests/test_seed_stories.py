"""The "done when" stories of the graph-level optimizations, as the seed documents tell them.

- Seed 000 (TVM's pass-infra tutorial): FoldConstant folds the constant arithmetic,
  EliminateCommonSubexpr removes the duplicated add only under opt_level 3 (and not when it is a
  disabled pass), FuseOps with fuse_opt_level 0 makes one function per op and with level 2 fuses
  conv2d with the adds.
- Seed 002: conv + batch_norm + relu + residual add; SimplifyInference, FoldConstant and FuseOps
  in a Sequential, with a CountAndReport analysis pass reporting the ops after each of them.
"""
import pathlib
import sys

import numpy as np

from tvmlite import passes as P
from tvmlite.ir import relax as rx
from tvmlite.ir.module import IRModule
from tvmlite.relax.expr_functor import post_order_visit
from tvmlite.script import from_source

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from seed_programs import SEED000  # noqa: E402
from test_fold_constant import SEED000_FOLDED  # noqa: E402  (the program's folded text)

rng = np.random.default_rng(0)
C = rng.random((1, 64, 54, 54), dtype="float32")
TOP = '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
'''
MAIN = '''    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), dtype="float32"), weight: R.Tensor((64, 64, 3, 3), dtype="float32")) -> R.Tensor((1, 64, 54, 54), dtype="float32"):
'''
CONV = ('conv: R.Tensor((1, 64, 54, 54), dtype="float32") = R.nn.conv2d(x, weight, strides=[1, 1], '
        'padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", '
        'out_layout="NCHW", out_dtype="void")')
NO_META = "\n# Metadata omitted. Use show_meta=True in script() method to show it."


def seed000() -> IRModule:
    """Seed 000's example program with its constant ``c``."""
    return from_source(SEED000, extra_vars={"c": C})


# ======================================================================== seed 000
# After FoldConstant and EliminateCommonSubexpr: the second add is an alias of the first (TVM's
# Relax pass keeps `z1 = z` for CanonicalizeBindings/DeadCodeElimination to remove).
SEED000_CSE = TOP + MAIN + f'''        with R.dataflow():
            {CONV}
            y2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(conv, metadata["relax.expr.Constant"][0])
            z: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(y2, metadata["relax.expr.Constant"][1])
            z1: R.Tensor((1, 64, 54, 54), dtype="float32") = z
            z2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z)
            R.output(z2)
        return z2
''' + NO_META


def test_seed000_fold_constant_folds_the_constant_arithmetic():
    out = P.FoldConstant()(seed000())
    assert out.script() == SEED000_FOLDED
    folded = out["main"].body.blocks[0].bindings[1].value.args[1]
    np.testing.assert_array_equal(folded.data, (C + C) * np.float32(2))


def test_seed000_cse_runs_under_opt_level_3_only():
    seq = P.Sequential([P.FoldConstant(), P.EliminateCommonSubexpr()])
    assert seq(seed000()).script() == SEED000_FOLDED  # opt_level 2 (the default): skipped
    with P.PassContext(opt_level=3):
        assert seq(seed000()).script() == SEED000_CSE
    with P.PassContext(opt_level=3, disabled_pass=["EliminateCommonSubexpr"]):
        assert seq(seed000()).script() == SEED000_FOLDED


SEED000_FUSED_LEVEL0 = TOP + '''    @R.function(private=True)
    def fused_add(conv: R.Tensor((1, 64, 54, 54), dtype="float32"), param_0: R.Tensor((1, 64, 54, 54), dtype="float32")) -> R.Tensor((1, 64, 54, 54), dtype="float32"):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            gv: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(conv, param_0)
            R.output(gv)
        return gv

    @R.function(private=True)
    def fused_add1(z: R.Tensor((1, 64, 54, 54), dtype="float32")) -> R.Tensor((1, 64, 54, 54), dtype="float32"):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            gv: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z)
            R.output(gv)
        return gv

    @R.function(private=True)
    def fused_nn_conv2d(x: R.Tensor((1, 64, 56, 56), dtype="float32"), weight: R.Tensor((64, 64, 3, 3), dtype="float32")) -> R.Tensor((1, 64, 54, 54), dtype="float32"):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            gv: R.Tensor((1, 64, 54, 54), dtype="float32") = R.nn.conv2d(x, weight, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="void")
            R.output(gv)
        return gv

''' + MAIN + '''        cls = Module
        with R.dataflow():
            lv: R.Tensor((1, 64, 54, 54), dtype="float32") = cls.fused_nn_conv2d(x, weight)
            lv1: R.Tensor((1, 64, 54, 54), dtype="float32") = cls.fused_add(lv, metadata["relax.expr.Constant"][0])
            lv2: R.Tensor((1, 64, 54, 54), dtype="float32") = cls.fused_add(lv1, metadata["relax.expr.Constant"][1])
            z1: R.Tensor((1, 64, 54, 54), dtype="float32") = lv2
            gv: R.Tensor((1, 64, 54, 54), dtype="float32") = cls.fused_add1(lv2)
            R.output(gv)
        return gv
''' + NO_META


def test_seed000_fuse_opt_level_0_makes_one_function_per_op():
    # As the tutorial, on the module after FoldConstant and EliminateCommonSubexpr. Every op call
    # becomes a call of its own Primitive function; the two identical adds share one.
    with P.PassContext(opt_level=3):
        mod = P.Sequential([P.FoldConstant(), P.EliminateCommonSubexpr()])(seed000())
    assert P.FuseOps(fuse_opt_level=0)(mod).script() == SEED000_FUSED_LEVEL0


def _fused(group: str, ops: str, call_result: str = "gv") -> str:
    """The module after fusion at level 2: one Primitive function of conv2d and the adds."""
    return TOP + f'''    @R.function(private=True)
    def {group}(x: R.Tensor((1, 64, 56, 56), dtype="float32"), weight: R.Tensor((64, 64, 3, 3), dtype="float32"), param_0: R.Tensor((1, 64, 54, 54), dtype="float32"), param_1: R.Tensor((1, 64, 54, 54), dtype="float32")) -> R.Tensor((1, 64, 54, 54), dtype="float32"):
        R.func_attr({{"Primitive": True}})
        with R.dataflow():
            {CONV}
            y2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(conv, param_0)
{ops}            R.output(gv)
        return gv

''' + MAIN + f'''        cls = Module
        with R.dataflow():
            gv: R.Tensor((1, 64, 54, 54), dtype="float32") = cls.{group}(x, weight, metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1])
            R.output(gv)
        return gv
''' + NO_META


# Both adds of `y2 + c` stay (opt_level 2, or CSE disabled) ...
FUSED_BOTH_ADDS = _fused("fused_nn_conv2d_add_add_add_add", '''            z: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(y2, param_1)
            z1: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(y2, param_1)
            gv: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z1)
''')
# ... or only one is computed (opt_level 3), as the tutorial's last Relay output.
FUSED_ONE_ADD = _fused("fused_nn_conv2d_add_add_add", '''            z: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(y2, param_1)
            gv: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z)
''')


def test_seed000_sequential_fuses_conv2d_with_the_adds():
    # The tutorial's Sequential. Relax's EliminateCommonSubexpr leaves the alias `z1 = z` (as TVM's);
    # DeadCodeElimination removes it so that FuseOps sees the graph the tutorial's Relay pass saw.
    seq = P.Sequential([P.FoldConstant(), P.EliminateCommonSubexpr(), P.DeadCodeElimination(),
                        P.FuseOps(fuse_opt_level=2)])
    assert seq(seed000()).script() == FUSED_BOTH_ADDS
    with P.PassContext(opt_level=3):
        assert seq(seed000()).script() == FUSED_ONE_ADD
    with P.PassContext(opt_level=3, disabled_pass=["EliminateCommonSubexpr"]):
        assert seq(seed000()).script() == FUSED_BOTH_ADDS


# ======================================================================== seed 002
SEED002 = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), w: R.Tensor((64, 64, 3, 3), "float32")):
        with R.dataflow():
            conv = R.nn.conv2d(x, w, padding=[1, 1])
            bn = R.nn.batch_norm(conv, gamma, beta, mean, var, axis=1)
            relu = R.nn.relu(bn[0])
            out = R.add(relu, x)
            R.output(out)
        return out
'''


def seed002() -> IRModule:
    """Seed 002's network with constant batch-norm parameters (so that FoldConstant has work)."""
    params = {name: rng.standard_normal(64).astype("float32") for name in ("gamma", "beta", "mean")}
    params["var"] = rng.random(64).astype("float32") + 0.5
    return from_source(SEED002, extra_vars=params)


@P.function_pass(opt_level=1)
class CountAndReport:
    """Report the op calls of each function (an analysis pass: the function is returned unchanged)."""

    def __init__(self, reports: list) -> None:
        self.reports = reports

    def transform_function(self, func, mod, ctx):
        op_counts: dict[str, int] = {}

        def count(node):
            if isinstance(node, rx.Call) and isinstance(node.op, rx.Op):
                op_counts[node.op.name] = op_counts.get(node.op.name, 0) + 1

        post_order_visit(func, count)
        name = next(gv.name_hint for gv, f in mod.functions_items() if f is func)
        total = sum(op_counts.values())
        print(f"  {name} has {total} ops: {op_counts}")
        self.reports.append((name, total))
        return func


SEED002_FUSED = '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function(private=True)
    def fused_nn_conv2d_multiply_add_nn_relu_add(x: R.Tensor((1, 64, 56, 56), dtype="float32"), w: R.Tensor((64, 64, 3, 3), dtype="float32"), param_0: R.Tensor((1, 64, 1, 1), dtype="float32"), param_1: R.Tensor((1, 64, 1, 1), dtype="float32")) -> R.Tensor((1, 64, 56, 56), dtype="float32"):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            conv: R.Tensor((1, 64, 56, 56), dtype="float32") = R.nn.conv2d(x, w, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="void")
            lv9: R.Tensor((1, 64, 56, 56), dtype="float32") = R.multiply(conv, param_0)
            lv: R.Tensor((1, 64, 56, 56), dtype="float32") = R.add(lv9, param_1)
            relu: R.Tensor((1, 64, 56, 56), dtype="float32") = R.nn.relu(lv)
            gv: R.Tensor((1, 64, 56, 56), dtype="float32") = R.add(relu, x)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), dtype="float32"), w: R.Tensor((64, 64, 3, 3), dtype="float32")) -> R.Tensor((1, 64, 56, 56), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((1, 64, 56, 56), dtype="float32") = cls.fused_nn_conv2d_multiply_add_nn_relu_add(x, w, metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1])
            R.output(gv)
        return gv

# Metadata omitted. Use show_meta=True in script() method to show it.'''

SEED002_REPORT = '''  main has 4 ops: {'relax.nn.conv2d': 1, 'relax.nn.batch_norm': 1, 'relax.nn.relu': 1, 'relax.add': 1}
  main has 14 ops: {'relax.nn.conv2d': 1, 'relax.add': 4, 'relax.sqrt': 1, 'relax.divide': 1, 'relax.multiply': 3, 'relax.negative': 1, 'relax.expand_dims': 2, 'relax.nn.relu': 1}
  main has 5 ops: {'relax.nn.conv2d': 1, 'relax.multiply': 1, 'relax.add': 2, 'relax.nn.relu': 1}
  main has 0 ops: {}
  fused_nn_conv2d_multiply_add_nn_relu_add has 5 ops: {'relax.nn.conv2d': 1, 'relax.multiply': 1, 'relax.add': 2, 'relax.nn.relu': 1}
'''


def test_seed002_simplify_inference_fold_constant_fuse_ops(capsys):
    reports: list = []
    pipeline = P.Sequential([
        CountAndReport(reports),
        P.SimplifyInference(),
        CountAndReport(reports),  # batch_norm became its scale/shift arithmetic and one multiply + add
        P.FoldConstant(),
        CountAndReport(reports),  # the scale/shift arithmetic on constants became two constants
        P.FuseOps(fuse_opt_level=2),
        CountAndReport(reports),  # one fused function does everything
    ])
    with P.PassContext(opt_level=3):
        out = pipeline(seed002())
    # TVM's fusion algorithm (ours follows it) puts the residual add into the conv + bn + relu group:
    # `relu` has one consumer, the add, and the add's other input `x` is a parameter, so the add is
    # relu's post-dominator and an elementwise op. The seed's text keeps the residual add outside;
    # the algorithm, not that sketch, decides.
    assert out.script() == SEED002_FUSED
    assert capsys.readouterr().out == SEED002_REPORT
    assert reports == [("main", 4), ("main", 14), ("main", 5), ("main", 0),
                       ("fused_nn_conv2d_multiply_add_nn_relu_add", 5)]
