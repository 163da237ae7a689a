"""Build an MLP with ``BlockBuilder`` and fuse each ``dense`` + ``add`` pair into a
``fused_dense_add<i>`` sub-function marked ``Primitive``.

The model's weights are numpy arrays, embedded as constants (printed as ``metadata[...]``).
``DenseAddFusor`` finds ``add(dense(x, w), b)``, builds the sub-function with its own
``BlockBuilder``, adds it to the module with ``builder_.add_func`` and calls it instead.
Run ``python examples/fuse_dense_add.py``: it prints the model before and after the pass."""
import numpy as np

import tvmlite.passes
from tvmlite import IRModule, relax
from tvmlite.relax import Op


def create_model(mlp_params: dict[str, np.ndarray]) -> IRModule:
    """A FashionMNIST-sized MLP (784 -> 128 -> 10) with constant weights."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    w0 = relax.const(mlp_params["w0"], "float32")
    b0 = relax.const(mlp_params["b0"], "float32")
    w1 = relax.const(mlp_params["w1"], "float32")
    b1 = relax.const(mlp_params["b1"], "float32")
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.nn.dense(x, w0))
            lv1 = bb.emit(relax.op.add(lv0, b0))
            lv2 = bb.emit(relax.op.nn.relu(lv1))
            lv3 = bb.emit(relax.op.nn.dense(lv2, w1))
            lv4 = bb.emit(relax.op.add(lv3, b1))
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get()


@relax.expr_functor.mutator
class DenseAddFusor(relax.PyExprMutator):
    def __init__(self, mod: IRModule) -> None:
        super().__init__()
        self.mod_ = mod
        # cache pre-defined ops
        self.add_op = Op.get("relax.add")
        self.dense_op = Op.get("relax.nn.dense")
        self.counter = 0

    def transform(self) -> IRModule:
        for global_var, func in self.mod_.functions.items():
            if not isinstance(func, relax.Function):
                continue
            # avoid already fused primitive functions
            if "Primitive" in func.attrs.keys() and func.attrs["Primitive"] != 0:
                continue
            updated_func = self.visit_expr(func)
            updated_func = relax.analysis.remove_all_unused(updated_func)
            self.builder_.update_func(global_var, updated_func)
        return self.builder_.get()

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)

        def match_call(node, op):
            if not isinstance(node, relax.Call):
                return False
            return node.op == op

        # pattern match dense => add
        if not match_call(call, self.add_op):
            return call

        value = self.lookup_binding(call.args[0])
        if value is None:
            return call

        if not match_call(value, self.dense_op):
            return call

        x = value.args[0]
        w = value.args[1]
        b = call.args[1]

        # construct a new fused primitive function
        param_x = relax.Var("x", x.struct_info)
        param_w = relax.Var("w", w.struct_info)
        param_b = relax.Var("b", b.struct_info)

        bb = relax.BlockBuilder()

        fn_name = "fused_dense_add%d" % (self.counter)
        self.counter += 1
        with bb.function(fn_name, [param_x, param_w, param_b]):
            with bb.dataflow():
                lv0 = bb.emit(relax.op.nn.dense(param_x, param_w))
                gv = bb.emit_output(relax.op.add(lv0, param_b))
            bb.emit_func_output(gv)

        # Add Primitive attribute to the fused funtions
        fused_fn = bb.get()[fn_name].with_attr("Primitive", 1)
        global_var = self.builder_.add_func(fused_fn, fn_name)

        # construct call into the fused function
        return relax.Call(global_var, [x, w, b], None, None)


@tvmlite.passes.module_pass(opt_level=2, name="DenseAddFuse")
class FuseDenseAddPass:
    """The wrapper for the DenseAddFusor mutator."""

    def transform_module(self, mod, ctx):
        return DenseAddFusor(mod).transform()


if __name__ == "__main__":
    # Stand-ins for the course's trained FashionMNIST weights (fasionmnist_mlp_params.pkl).
    rng = np.random.default_rng(0)
    mlp_params = {"w0": rng.standard_normal((128, 784)), "b0": rng.standard_normal(128),
                  "w1": rng.standard_normal((10, 128)), "b1": rng.standard_normal(10)}

    MLPModel = create_model(mlp_params)
    print("# ==== MLPModel, built with BlockBuilder")
    MLPModel.show()

    MLPFused = FuseDenseAddPass()(MLPModel)
    print("\n# ==== after FuseDenseAddPass")
    MLPFused.show()
