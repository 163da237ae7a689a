"""InlineLayoutKernels: layout-only kernels (transpose, reshape ...) read in place by their single
consumer. Exact printed text for seed 004's MLP, numbers against the un-inlined module and numpy,
chains, and the cases it must leave alone (a producer used twice, a kernel that computes, a
function's result)."""
from __future__ import annotations


import numpy as np
import pytest

import tvmlite
from tvmlite.passes import InlineLayoutKernels, get_pass, get_pipeline, list_passes
from tvmlite.passes.inline_layout import layout_index_map
from tvmlite.script import from_source

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)
rng = np.random.default_rng(3)

MLP_INLINED = '''\
# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fused_transpose1_matmul1_add1(lv3: T.Buffer((T.int64(1), T.int64(256)), "float32"), p_fc2_weight: T.Buffer((T.int64(10), T.int64(256)), "float32"), p_fc2_bias: T.Buffer((T.int64(10),), "float32"), T_add_intermediate: T.Buffer((T.int64(1), T.int64(10)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(10)))
        for i0, i1, k in T.grid(T.int64(1), T.int64(10), T.int64(256)):
            with T.block("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(lv3[v_i0, v_k], p_fc2_weight[v_i1, v_k])
                T.writes(matmul_intermediate[v_i0, v_i1])
                with T.init():
                    matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
                matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + lv3[v_i0, v_k] * p_fc2_weight[v_i1, v_k]
        for ax0, ax1 in T.grid(T.int64(1), T.int64(10)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(matmul_intermediate[v_ax0, v_ax1], p_fc2_bias[v_ax1])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = matmul_intermediate[v_ax0, v_ax1] + p_fc2_bias[v_ax1]

    @T.prim_func(private=True)
    def fused_transpose_matmul_add_relu(x: T.Buffer((T.int64(1), T.int64(784)), "float32"), p_fc1_weight: T.Buffer((T.int64(256), T.int64(784)), "float32"), p_fc1_bias: T.Buffer((T.int64(256),), "float32"), compute_intermediate: T.Buffer((T.int64(1), T.int64(256)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
        T_add_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
        for i0, i1, k in T.grid(T.int64(1), T.int64(256), T.int64(784)):
            with T.block("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], p_fc1_weight[v_i1, v_k])
                T.writes(matmul_intermediate[v_i0, v_i1])
                with T.init():
                    matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
                matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + x[v_i0, v_k] * p_fc1_weight[v_i1, v_k]
        for ax0, ax1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(matmul_intermediate[v_ax0, v_ax1], p_fc1_bias[v_ax1])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = matmul_intermediate[v_ax0, v_ax1] + p_fc1_bias[v_ax1]
        for i0, i1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_add_intermediate[v_i0, v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.max(T_add_intermediate[v_i0, v_i1], T.float32(0.0))

    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), p_fc1_weight: R.Tensor((256, 784), dtype="float32"), p_fc1_bias: R.Tensor((256,), dtype="float32"), p_fc2_weight: R.Tensor((10, 256), dtype="float32"), p_fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({"num_input": 1})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.fused_transpose_matmul_add_relu, (x, p_fc1_weight, p_fc1_bias), out_sinfo=R.Tensor((1, 256), dtype="float32"))
            gv = R.call_tir(cls.fused_transpose1_matmul1_add1, (lv, p_fc2_weight, p_fc2_bias), out_sinfo=R.Tensor((1, 10), dtype="float32"))
            R.output(gv)
        return gv'''


def zero(text: str):
    return get_pipeline("zero")(from_source(text))


def run(text: str, args, inline: bool = True) -> np.ndarray:
    ex = tvmlite.compile(from_source(text), inline_layout=inline)
    return tvmlite.VirtualMachine(ex)["main"](*args).numpy()


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype("float32")


def test_mlp_text_after_the_zero_pipeline():
    zeroed = zero(read_corpus("seed004_mlp_torch.py"))
    out = InlineLayoutKernels()(zeroed)
    assert out.script() == MLP_INLINED
    assert from_source(out.script()).script() == MLP_INLINED  # re-parses to the same text
    # The zero pipeline's own output is untouched (the pass runs after it, in tvmlite.compile).
    expected_zero = read_corpus("seed004_mlp_torch_zero.py").replace("tvm.script", "tvmlite.script")
    assert zeroed.script() == expected_zero.rstrip("\n")


def test_compile_runs_it_and_numbers_match():
    text = read_corpus("seed004_mlp_torch.py")
    ex = tvmlite.compile(from_source(text))
    assert ex.get_source("relax") == MLP_INLINED
    assert sorted(ex.kernel_names()) == ["fused_transpose1_matmul1_add1", "fused_transpose_matmul_add_relu"]
    x, w1, b1, w2, b2 = f32(1, 784), f32(256, 784), f32(256), f32(10, 256), f32(10)
    inlined = run(text, (x, w1, b1, w2, b2))
    plain = run(text, (x, w1, b1, w2, b2), inline=False)
    np.testing.assert_allclose(inlined, plain, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(inlined, np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, rtol=1e-4, atol=1e-4)


REPEATED_LAYERS = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 16), "float32"), w0: R.Tensor((16, 16), "float32"), w1: R.Tensor((16, 16), "float32"), w2: R.Tensor((16, 16), "float32")) -> R.Tensor((4, 16), "float32"):
        with R.dataflow():
            h1 = R.nn.relu(R.matmul(x, R.permute_dims(w0)))
            h2 = R.nn.relu(R.matmul(h1, R.permute_dims(w1)))
            h3 = R.nn.relu(R.matmul(h2, R.permute_dims(w2)))
            R.output(h3)
        return h3
"""


def test_repeated_layers_share_one_kernel():
    """Three identical layers: one fused transpose-matmul-relu kernel called three times, so the
    kernel is lowered and compiled once."""
    ex = tvmlite.compile(from_source(REPEATED_LAYERS))
    assert ex.kernel_names() == ["fused_transpose_matmul_relu"]
    assert ex.get_source("relax").count("R.call_tir(cls.fused_transpose_matmul_relu, ") == 3
    x, w0, w1, w2 = f32(4, 16), f32(16, 16), f32(16, 16), f32(16, 16)
    expected = np.maximum(np.maximum(np.maximum(x @ w0.T, 0) @ w1.T, 0) @ w2.T, 0)
    np.testing.assert_allclose(tvmlite.VirtualMachine(ex)["main"](x, w0, w1, w2).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_registered_as_a_pass():
    assert "InlineLayoutKernels" in list_passes()
    assert isinstance(get_pass("InlineLayoutKernels"), InlineLayoutKernels)
    assert str(InlineLayoutKernels()) == "InlineLayoutKernels"


RESHAPE_CHAIN = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 12), "float32"), w: R.Tensor((2, 4, 3), "float32")) -> R.Tensor((2, 2), "float32"):
        with R.dataflow():
            t = R.permute_dims(w, axes=[2, 1, 0])
            a = R.reshape(t, R.shape([12, 2]))
            b = R.matmul(x, a)
            R.output(b)
        return b
"""


def test_reshape_of_a_transpose_folds_into_the_matmul():
    out = InlineLayoutKernels()(zero(RESHAPE_CHAIN))
    text = out.script()
    assert text.count("R.call_tir(") == 1
    # FuseOps made one kernel of the transpose and the reshape; its two maps compose.
    assert "def fused_transpose_reshape_matmul(x: T.Buffer((T.int64(2), T.int64(12)), \"float32\"), " \
           "w: T.Buffer((T.int64(2), T.int64(4), T.int64(3)), \"float32\")" in text
    assert "b = R.call_tir(cls.fused_transpose_reshape_matmul, (x, w), " in text
    assert "T.reads(x[v_i0, v_k], w[v_i1, v_k % T.int64(4), v_k // T.int64(4)])" in text
    assert "x[v_i0, v_k] * w[v_i1, v_k % T.int64(4), v_k // T.int64(4)]" in text
    assert from_source(text).script() == text
    x, w = f32(2, 12), f32(2, 4, 3)
    expected = x @ np.transpose(w, (2, 1, 0)).reshape(12, 2)
    np.testing.assert_allclose(run(RESHAPE_CHAIN, (x, w)), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run(RESHAPE_CHAIN, (x, w), inline=False), expected, rtol=1e-5, atol=1e-5)


USED_TWICE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((4, 3), "float32")) -> R.Tensor((2, 4), "float32"):
        with R.dataflow():
            t = R.permute_dims(w)
            a = R.matmul(x, t)
            b = R.matmul(x, t)
            c = R.add(a, b)
            R.output(c)
        return c
"""

NOT_LAYOUT = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32")) -> R.Tensor((2, 4), "float32"):
        with R.dataflow():
            t = R.negative(w)
            a = R.matmul(x, t)
            R.output(a)
        return a
"""

FUNCTION_OUTPUT = """
@I.ir_module
class Module:
    @R.function
    def main(w: R.Tensor((4, 3), "float32")) -> R.Tensor((3, 4), "float32"):
        with R.dataflow():
            t = R.permute_dims(w)
            R.output(t)
        return t
"""

OUTPUT_AND_CONSUMER = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((4, 3), "float32")) -> R.Tuple(R.Tensor((2, 4), "float32"), R.Tensor((3, 4), "float32")):
        with R.dataflow():
            t = R.permute_dims(w)
            a = R.matmul(x, t)
            R.output(a, t)
        return (a, t)
"""


@pytest.mark.parametrize("text", [USED_TWICE, NOT_LAYOUT, FUNCTION_OUTPUT, OUTPUT_AND_CONSUMER],
                         ids=["used-twice", "not-layout", "function-output", "output-and-consumer"])
def test_left_alone(text):
    zeroed = zero(text)
    assert InlineLayoutKernels()(zeroed).script() == zeroed.script()


def test_layout_index_map_recognises_layouts_only():
    zeroed = zero(RESHAPE_CHAIN)
    assert layout_index_map(zeroed["fused_transpose_reshape"]) is not None
    assert layout_index_map(zeroed["matmul"]) is None
    assert layout_index_map(zero(read_corpus("seed004_mlp_torch.py"))["transpose"]) is not None
    assert layout_index_map(zero(NOT_LAYOUT)["tir_negative"]) is None


# Scatter form (what topi's layout_transform makes): the store's indices permute the iterators,
# with constant 0 for an added unit dimension; the consumer reads x through the inverse map.
SCATTER_PACK = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def pack(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4), T.int64(4)), "float32"), y: T.Buffer((T.int64(2), T.int64(1), T.int64(4), T.int64(4), T.int64(3)), "float32")):
        for a0, a1, a2, a3 in T.grid(T.int64(2), T.int64(3), T.int64(4), T.int64(4)):
            with T.block("pack"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [a0, a1, a2, a3])
                y[v0, T.int64(0), v2, v3, v1] = x[v0, v1, v2, v3]

    @T.prim_func(private=True)
    def scale(y: T.Buffer((T.int64(2), T.int64(1), T.int64(4), T.int64(4), T.int64(3)), "float32"), w: T.Buffer((T.int64(3),), "float32"), out: T.Buffer((T.int64(2), T.int64(1), T.int64(4), T.int64(4), T.int64(3)), "float32")):
        for a0, a1, a2, a3, a4 in T.grid(T.int64(2), T.int64(1), T.int64(4), T.int64(4), T.int64(3)):
            with T.block("scale"):
                v0, v1, v2, v3, v4 = T.axis.remap("SSSSS", [a0, a1, a2, a3, a4])
                out[v0, v1, v2, v3, v4] = y[v0, v1, v2, v3, v4] * w[v4]

    @R.function
    def main(x: R.Tensor((2, 3, 4, 4), "float32"), w: R.Tensor((3,), "float32")) -> R.Tensor((2, 1, 4, 4, 3), "float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.pack, (x,), out_sinfo=R.Tensor((2, 1, 4, 4, 3), "float32"))
            gv = R.call_tir(cls.scale, (lv, w), out_sinfo=R.Tensor((2, 1, 4, 4, 3), "float32"))
            R.output(gv)
        return gv
'''

PACK_INLINED_KERNEL = '''\
    @T.prim_func(private=True)
    def fused_pack_scale(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4), T.int64(4)), "float32"), w: T.Buffer((T.int64(3),), "float32"), out: T.Buffer((T.int64(2), T.int64(1), T.int64(4), T.int64(4), T.int64(3)), "float32")):
        # with T.block("root"):
        for a0, a1, a2, a3, a4 in T.grid(T.int64(2), T.int64(1), T.int64(4), T.int64(4), T.int64(3)):
            with T.block("scale"):
                v0, v1, v2, v3, v4 = T.axis.remap("SSSSS", [a0, a1, a2, a3, a4])
                T.reads(x[v0, v4, v2, v3], w[v4])
                T.writes(out[v0, v1, v2, v3, v4])
                out[v0, v1, v2, v3, v4] = x[v0, v4, v2, v3] * w[v4]
'''


def test_scatter_form_packing_folds_into_its_consumer():
    out = InlineLayoutKernels()(from_source(SCATTER_PACK))
    text = out.script()
    assert PACK_INLINED_KERNEL in text
    assert "def pack(" not in text
    assert "gv = R.call_tir(cls.fused_pack_scale, (x, w), out_sinfo=R.Tensor((2, 1, 4, 4, 3), dtype=\"float32\"))" in text
    assert from_source(text).script() == text
    x, w = f32(2, 3, 4, 4), f32(3)
    expected = np.transpose(x, (0, 2, 3, 1))[:, None] * w
    np.testing.assert_allclose(run(SCATTER_PACK, (x, w)), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(run(SCATTER_PACK, (x, w), inline=False), expected, rtol=1e-6, atol=1e-6)


# NCHW4c back to NCHW: two iterators fused into one output index (mixed radix), read back
# through ``// 4`` and ``% 4``.
SCATTER_UNPACK = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def unpack(y: T.Buffer((T.int64(2), T.int64(2), T.int64(3), T.int64(3), T.int64(4)), "float32"), z: T.Buffer((T.int64(2), T.int64(8), T.int64(3), T.int64(3)), "float32")):
        for a0, a1, a2, a3, a4 in T.grid(T.int64(2), T.int64(2), T.int64(3), T.int64(3), T.int64(4)):
            with T.block("unpack"):
                v0, v1, v2, v3, v4 = T.axis.remap("SSSSS", [a0, a1, a2, a3, a4])
                z[v0, v1 * T.int64(4) + v4, v2, v3] = y[v0, v1, v2, v3, v4]

    @T.prim_func(private=True)
    def shift(z: T.Buffer((T.int64(2), T.int64(8), T.int64(3), T.int64(3)), "float32"), out: T.Buffer((T.int64(2), T.int64(8), T.int64(3), T.int64(3)), "float32")):
        for a0, a1, a2, a3 in T.grid(T.int64(2), T.int64(8), T.int64(3), T.int64(3)):
            with T.block("shift"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [a0, a1, a2, a3])
                out[v0, v1, v2, v3] = z[v0, v1, v2, v3] + T.float32(1.0)

    @R.function
    def main(y: R.Tensor((2, 2, 3, 3, 4), "float32")) -> R.Tensor((2, 8, 3, 3), "float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.unpack, (y,), out_sinfo=R.Tensor((2, 8, 3, 3), "float32"))
            gv = R.call_tir(cls.shift, (lv,), out_sinfo=R.Tensor((2, 8, 3, 3), "float32"))
            R.output(gv)
        return gv
'''


def test_scatter_form_unpacking_reads_through_div_and_mod():
    text = InlineLayoutKernels()(from_source(SCATTER_UNPACK)).script()
    assert "def unpack(" not in text
    assert "T.reads(y[v0, v1 // T.int64(4), v2, v3, v1 % T.int64(4)])" in text
    assert "out[v0, v1, v2, v3] = y[v0, v1 // T.int64(4), v2, v3, v1 % T.int64(4)] + T.float32(1.0)" in text
    y = f32(2, 2, 3, 3, 4)
    expected = np.transpose(y, (0, 1, 4, 2, 3)).reshape(2, 8, 3, 3) + 1
    np.testing.assert_allclose(run(SCATTER_UNPACK, (y,)), expected, rtol=1e-6, atol=1e-6)


def test_scatter_that_is_not_one_to_one_is_left_alone():
    # ``z[v0, v1 * 2 + v2]`` with v2 over 4: strides 1 and 2 overlap, so it is no layout.
    text = SCATTER_UNPACK.replace("v1 * T.int64(4) + v4", "v1 * T.int64(2) + v4")
    mod = from_source(text)
    assert layout_index_map(mod["unpack"]) is None
    assert layout_index_map(from_source(SCATTER_UNPACK)["unpack"]) is not None
    assert InlineLayoutKernels()(mod).script() == from_source(text).script()


# A scatter whose loops bind unit iterators to 0: folded when it fuses iterators (NCHW4c back to
# NCHW after a global pool, as the small CNN's classifier reads it), left as a kernel when it only
# moves unit dimensions (a transpose of unit dimensions, as the encoder layers have).
UNIT_BOUND = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def unpack(y: T.Buffer((T.int64(2), T.int64(2), T.int64(1), T.int64(1), T.int64(4)), "float32"), z: T.Buffer((T.int64(2), T.int64(8), T.int64(1), T.int64(1)), "float32")):
        for a0, a1, a2, a3, a4 in T.grid(T.int64(2), T.int64(2), T.int64(1), T.int64(1), T.int64(4)):
            with T.block("unpack"):
                v0, v1 = T.axis.remap("SS", [a0, a1])
                v2 = T.axis.spatial(T.int64(1), T.int64(0))
                v3 = T.axis.spatial(T.int64(1), T.int64(0))
                v4 = T.axis.spatial(T.int64(4), a4)
                z[v0, v1 * T.int64(4) + v4, T.int64(0), T.int64(0)] = y[v0, v1, T.int64(0), T.int64(0), v4]

    @T.prim_func(private=True)
    def shift(z: T.Buffer((T.int64(2), T.int64(8), T.int64(1), T.int64(1)), "float32"), out: T.Buffer((T.int64(2), T.int64(8), T.int64(1), T.int64(1)), "float32")):
        for a0, a1, a2, a3 in T.grid(T.int64(2), T.int64(8), T.int64(1), T.int64(1)):
            with T.block("shift"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [a0, a1, a2, a3])
                out[v0, v1, v2, v3] = z[v0, v1, v2, v3] + T.float32(1.0)

    @R.function
    def main(y: R.Tensor((2, 2, 1, 1, 4), "float32")) -> R.Tensor((2, 8, 1, 1), "float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.unpack, (y,), out_sinfo=R.Tensor((2, 8, 1, 1), "float32"))
            gv = R.call_tir(cls.shift, (lv,), out_sinfo=R.Tensor((2, 8, 1, 1), "float32"))
            R.output(gv)
        return gv
'''

UNIT_TRANSPOSE = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def unit_transpose(src: T.Buffer((T.int64(1), T.int64(4), T.int64(8)), "float32"), dst: T.Buffer((T.int64(4), T.int64(1), T.int64(8)), "float32")):
        for a0, a1, a2 in T.grid(T.int64(4), T.int64(1), T.int64(8)):
            with T.block("unit_transpose"):
                v0 = T.axis.spatial(T.int64(4), a0)
                v1 = T.axis.spatial(T.int64(1), T.int64(0))
                v2 = T.axis.spatial(T.int64(8), a2)
                dst[v0, T.int64(0), v2] = src[T.int64(0), v0, v2]
'''


def test_unit_bound_scatter_folds_when_it_fuses_iterators():
    text = InlineLayoutKernels()(from_source(UNIT_BOUND)).script()
    assert "def unpack(" not in text
    assert "out[v0, v1, v2, v3] = y[v0, v1 // T.int64(4), T.int64(0), T.int64(0), v1 % T.int64(4)] + T.float32(1.0)" in text
    y = f32(2, 2, 1, 1, 4)
    expected = np.transpose(y, (0, 1, 4, 2, 3)).reshape(2, 8, 1, 1) + 1
    np.testing.assert_allclose(run(UNIT_BOUND, (y,)), expected, rtol=1e-6, atol=1e-6)


def test_unit_bound_transpose_of_unit_dimensions_is_no_layout_kernel():
    assert layout_index_map(from_source(UNIT_TRANSPOSE)["unit_transpose"]) is None
