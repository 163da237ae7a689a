"""Writing passes with decorators, running them in a ``Sequential`` under a
``PassContext``, and watching what each pass does.

Part 1 (TVM's tutorial "How to Use TVM Pass Infra", in Relax): the tutorial's example program as a
script; ``CustomPipeline``, a ``@function_pass`` with ``__init__`` arguments that multiplies every
constant; ``EliminateCommonSubexpr``, an opt_level-3 pass that a ``Sequential`` skips at the
default opt_level 2 unless the context raises it; ``PrintIR`` placed after a pass; and a
``@pass_instrument`` that prints the IR before every pass.
Part 2 (a conv2d + batch_norm + relu residual block): ``CountAndReport``, an analysis pass that
changes nothing, placed around ``ReluReplacer`` (relu -> clip) in a ``Sequential``.
Run ``python examples/pass_infra.py``."""
import numpy as np

import tvmlite.passes
from tvmlite import relax
from tvmlite.ir import structural_equal
from tvmlite.script import ir as I
from tvmlite.script import relax as R

# ==================================================================== part 1: the pass-infra tutorial
c = np.ones((1, 64, 54, 54), "float32")  # the constant `c` the script below refers to


@I.ir_module
class Example:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), weight: R.Tensor((64, 64, 3, 3), "float32")):
        conv = R.nn.conv2d(x, weight)
        y = R.add(c, c)
        y = R.multiply(y, R.const(2, "float32"))
        y = R.add(conv, y)
        z = R.add(y, c)
        z1 = R.add(y, c)
        z2 = R.add(z, z1)
        return z2


@tvmlite.passes.function_pass(opt_level=1)
class CustomPipeline:
    """Simple test function to replace one argument to another."""

    def __init__(self, multiplier):
        self.multiplier = multiplier

    # This function can define a pass.
    def transform_function(self, func, mod, ctx):
        obj = self

        class ReplaceConstant(relax.ExprMutator):
            def visit_constant_(self, c):
                return relax.op.multiply(obj.multiplier, c)

        return ReplaceConstant().visit_expr(func)


@tvmlite.passes.function_pass(opt_level=3)
class EliminateCommonSubexpr:
    """Bind a repeated op call once: later copies (same op, same argument objects, same
    attributes) reuse the first variable. opt_level 3, like TVM's pass of that name."""

    def transform_function(self, func, mod, ctx):
        class Reuse(relax.ExprMutator):
            def __init__(self):
                super().__init__(mod)
                self.seen = []  # (call, variable bound to it)

            def visit_var_binding_(self, binding):
                value = self.visit_expr(binding.value)
                if isinstance(value, relax.Call):
                    for call, var in self.seen:
                        if (call.op == value.op and len(call.args) == len(value.args)
                                and all(a is b for a, b in zip(call.args, value.args))
                                and structural_equal(call.attrs, value.attrs)
                                # a dataflow-local variable cannot stand for a block output
                                and not (isinstance(var, relax.DataflowVar)
                                         and not isinstance(binding.var, relax.DataflowVar))):
                            self.set_var_remap(binding.var, var)
                            return
                self.reemit_binding(binding, value)
                if isinstance(value, relax.Call):
                    self.seen.append((value, self.get_var_remap(binding.var)))

        return Reuse().visit_expr(func)


# Named as in the tutorial; the pass that prints the module is tvmlite.passes.PrintIR.
@tvmlite.passes.pass_instrument
class PrintIR:
    """Print the name of the pass, the IR, only before passes execute."""

    def run_before_pass(self, mod, info):
        print(f"Running pass: {info}")
        print(mod)


def part1() -> None:
    """The pass-infra tutorial's walk through the pass infrastructure."""
    print("# ==== the example program")
    Example.show()

    custom_pass = CustomPipeline(multiplier=relax.const(3, "float32"))
    assert custom_pass.info.name == "CustomPipeline"
    print("\n# ==== after CustomPipeline(multiplier=relax.const(3, \"float32\"))")
    custom_pass(Example).show()

    seq = tvmlite.passes.Sequential([EliminateCommonSubexpr(), tvmlite.passes.DeadCodeElimination()])
    print(f"\n# ==== Sequential {seq} at the default opt_level 2: EliminateCommonSubexpr (opt_level 3) is "
          f"skipped, z1 stays")
    seq(Example).show()
    with tvmlite.passes.PassContext(opt_level=3):
        mod2 = seq(Example)
    print("\n# ==== the same Sequential under PassContext(opt_level=3): z1 is gone, z2 = R.add(z, z)")
    mod2.show()
    with tvmlite.passes.PassContext(opt_level=3, disabled_pass=["EliminateCommonSubexpr"]):
        mod3 = seq(Example)
    print("\n# ==== opt_level=3, disabled_pass=[\"EliminateCommonSubexpr\"]: z1 is back")
    mod3.show()

    # Debug a pass: PrintIR after CustomPipeline, and an instrument printing before every pass.
    seq = tvmlite.passes.Sequential([
        CustomPipeline(multiplier=relax.const(3, "float32")),
        tvmlite.passes.PrintIR("after CustomPipeline"),
        EliminateCommonSubexpr(),
        tvmlite.passes.DeadCodeElimination(),
    ])
    print("\n# ==== Sequential with PrintIR, under PassContext(opt_level=3, instruments=[PrintIR()])")
    with tvmlite.passes.PassContext(opt_level=3, instruments=[PrintIR()]):
        mod = seq(Example)
    print("# ==== the result")
    mod.show()
    print("done")


# ==================================================================== part 2: a residual block
@I.ir_module
class ResidualBlock:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), w: R.Tensor((64, 64, 3, 3), "float32"),
             gamma: R.Tensor((64,), "float32"), beta: R.Tensor((64,), "float32"),
             mean: R.Tensor((64,), "float32"), var: R.Tensor((64,), "float32")):
        with R.dataflow():
            conv = R.nn.conv2d(x, w, padding=(1, 1))
            bn = R.nn.batch_norm(conv, gamma, beta, mean, var, axis=1)
            relu = R.nn.relu(bn[0])  # batch_norm returns a tuple
            out = R.add(relu, x)  # residual connection
            R.output(out)
        return out


@tvmlite.passes.function_pass(opt_level=1)
class ReluReplacer:
    """Replace nn.relu with clip(0, inf) — a custom pass example."""

    def transform_function(self, func, mod, ctx):
        class Replacer(relax.ExprMutator):
            def visit_call_(self, call):
                call = super().visit_call_(call)
                if isinstance(call.op, relax.Op) and call.op.name == "relax.nn.relu":
                    # relu(x) = clip(x, min=0, max=inf)
                    return relax.op.clip(call.args[0], min=0.0, max=float("inf"))
                return call

        return Replacer().visit_expr(func)


@tvmlite.passes.function_pass(opt_level=1)
class CountAndReport:
    """Report statistics about each function (analysis pass)."""

    def transform_function(self, func, mod, ctx):
        op_counts = {}

        def count(node):
            if isinstance(node, relax.Call) and isinstance(node.op, relax.Op):
                name = node.op.name
                op_counts[name] = op_counts.get(name, 0) + 1

        relax.analysis.post_order_visit(func, count)
        total = sum(op_counts.values())
        print(f"  Function has {total} ops: {dict(op_counts)}")
        return func  # analysis only — return unchanged


def part2() -> None:
    """Custom passes on the residual block: an analysis pass around a rewrite."""
    print("\n# ==== the residual block")
    ResidualBlock.show()
    pipeline = tvmlite.passes.Sequential([
        CountAndReport(),  # <- our custom pass
        ReluReplacer(),
        CountAndReport(),  # <- see the difference
    ])
    print(f"\n# ==== running {pipeline}")
    with tvmlite.passes.PassContext(opt_level=3):
        mod = pipeline(ResidualBlock)
    print("\n# ==== after ReluReplacer")
    mod.show()


if __name__ == "__main__":
    part1()
    part2()
