# A two-layer perceptron with a symbolic batch size `n`, written by hand.
# `tvmlite show examples/mlp.py` prints it in canonical form, every binding annotated.
from tvmlite.script import ir as I
from tvmlite.script import relax as R
from tvmlite.script import tir as T


@I.ir_module
class MLP:
    @T.prim_func(private=True)
    def relu(var_x: T.handle, var_y: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(128)))
        y = T.match_buffer(var_y, (n, T.int64(128)))
        for i, j in T.grid(n, T.int64(128)):
            with T.block("relu"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.max(x[vi, vj], T.float32(0.0))

    @R.function
    def main(
        x: R.Tensor(("n", 784), dtype="float32"),
        w1: R.Tensor((128, 784), dtype="float32"),
        b1: R.Tensor((128,), dtype="float32"),
        w2: R.Tensor((10, 128), dtype="float32"),
        b2: R.Tensor((10,), dtype="float32"),
    ) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        R.func_attr({"num_input": 1})
        cls = MLP
        with R.dataflow():
            w1_t = R.permute_dims(w1)
            h = R.matmul(x, w1_t)
            h_bias = R.add(h, b1)
            r = R.call_tir(cls.relu, (h_bias,), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            w2_t = R.permute_dims(w2)
            logits = R.matmul(r, w2_t)
            out = R.add(logits, b2)
            R.output(out)
        return out
