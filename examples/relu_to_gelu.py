"""Rewrite every ``relu`` into ``gelu`` with a custom module pass.

The model is written with the ``nn.Module`` frontend and exported to Relax (batch size ``n`` is
symbolic); a ``@mutator`` replaces the calls and a ``@module_pass`` applies it to each function.
Run ``python examples/relu_to_gelu.py``: it prints the module before and after the pass."""
import tvmlite.passes
from tvmlite import IRModule, relax
from tvmlite.frontend import nn
from tvmlite.relax.expr_functor import PyExprMutator, mutator


class NNModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        return x


@mutator
class ReluRewriter(PyExprMutator):
    def __init__(self, mod):
        super().__init__(mod)

    def visit_call_(self, call: relax.Call) -> relax.Expr:
        # visit the relax.Call expr, and only handle the case when op is relax.nn.relu
        if call.op.name == "relax.nn.relu":
            return relax.op.nn.gelu(call.args[0])
        return super().visit_call_(call)


@tvmlite.passes.module_pass(opt_level=0, name="ReluToGelu")
class ReluToGelu:  # pylint: disable=too-few-public-methods
    def transform_module(self, mod: IRModule, _ctx: tvmlite.passes.PassContext) -> IRModule:
        """IRModule-level transformation"""
        rewriter = ReluRewriter(mod)
        for g_var, func in mod.functions_items():
            if isinstance(func, relax.Function):
                func = rewriter.visit_expr(func)
                rewriter.builder_.update_func(g_var, func)
        return rewriter.builder_.get()


if __name__ == "__main__":
    origin_mod, params = NNModule().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})
    print("# ==== exported from nn.Module; parameters:", ", ".join(name for name, _ in params))
    origin_mod.show()

    mod = ReluToGelu()(origin_mod)
    print("\n# ==== after ReluToGelu")
    mod.show()
