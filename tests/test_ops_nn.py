"""The R.nn ops of issue 16 (conv1d, conv3d...): their legalized text as TVM 0.27's LegalizeOps
prints it (block and axis names, loop order, index arithmetic; TVM's facts copied as literal
text), and their numbers through compile + VM in every dtype they accept."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tvmlite  # noqa: E402
from legalize_util import build, params_for  # noqa: E402
from nn_refs import conv_nd, conv_transpose_nd  # noqa: E402
from tvmlite import relax  # noqa: E402
from tvmlite.passes import LegalizeOps  # noqa: E402
from tvmlite.script import from_source  # noqa: E402

op = relax.op
rng = np.random.default_rng(3)


def legalized_prim(src: str, name: str) -> str:
    """The text of PrimFunc ``name`` after LegalizeOps of the script ``src``."""
    mod = LegalizeOps()(from_source(src))
    return mod[name].script()


def compile_and_run(make, inputs):
    mod = build(make, params_for(inputs))
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
    out = vm["main"](*inputs)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


def arr(shape, dtype):
    if dtype.startswith("int"):
        return rng.integers(-5, 5, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def close(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape
    if dtype.startswith("int"):
        np.testing.assert_array_equal(got, want)
    else:
        tol = 2e-2 if dtype == "float16" else 1e-4
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


CONV1D = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 10), "float32"), w: R.Tensor((4, 3, 3), "float32")):
        with R.dataflow():
            gv = R.nn.conv1d(x, w, strides=2, padding=1)
            R.output(gv)
        return gv
'''


def test_conv1d_legalized_as_tvm():
    """TVM: pad_temp, then conv1d_ncw over nn, ff, yy with reduce axes rc, ry."""
    text = legalized_prim(CONV1D, "conv1d")
    assert "pad_temp = T.alloc_buffer((T.int64(2), T.int64(3), T.int64(12)))" in text
    assert "for nn, ff, yy, rc, ry in T.grid(T.int64(2), T.int64(4), T.int64(5), T.int64(3), T.int64(3)):" in text
    assert 'with T.block("conv1d_ncw"):' in text
    assert ("conv1d_ncw[v_nn, v_ff, v_yy] = conv1d_ncw[v_nn, v_ff, v_yy] + pad_temp[v_nn, v_rc, v_yy * T.int64(2) "
            "+ v_ry] * w[v_ff, v_rc, v_ry]") in text


def test_conv3d_legalized_as_tvm():
    src = CONV1D.replace("(2, 3, 10)", "(2, 3, 6, 6, 6)").replace("(4, 3, 3)", "(4, 3, 3, 3, 3)").replace(
        "R.nn.conv1d(x, w, strides=2, padding=1)", "R.nn.conv3d(x, w, padding=1)")
    text = legalized_prim(src, "conv3d")
    assert ("for nn, ff, yy, xx, zz, rc, ry, rx, rz in T.grid(T.int64(2), T.int64(4), T.int64(6), T.int64(6), "
            "T.int64(6), T.int64(3), T.int64(3), T.int64(3), T.int64(3)):") in text
    assert ("pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx, v_zz + v_rz] * w[v_ff, v_rc, v_ry, v_rx, v_rz]") in text


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_conv1d_conv3d_compiled(dtype):
    x, w = arr((2, 4, 9), dtype), arr((6, 2, 3), dtype)
    got = compile_and_run(lambda x, w: op.nn.conv1d(x, w, strides=2, padding=(1, 2), groups=2), [x, w])
    close(got, conv_nd(x, w, (2,), (1, 2), (1,), groups=2), dtype)
    x, w = arr((1, 2, 4, 3, 5), dtype), arr((3, 2, 2, 1, 3), dtype)
    got = compile_and_run(lambda x, w: op.nn.conv3d(x, w, padding=1, dilation=(1, 2, 1)), [x, w])
    close(got, conv_nd(x, w, (1, 1, 1), (1,) * 6, (1, 2, 1)), dtype)


CONV1D_TRANSPOSE_TVM = """# from tvmlite.script import tir as T

@T.prim_func(private=True)
def main(x: T.Buffer((T.int64(2), T.int64(4), T.int64(5)), "float32"), w: T.Buffer((T.int64(4), T.int64(3), T.int64(3)), "float32"), compute: T.Buffer((T.int64(2), T.int64(6), T.int64(7)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    data_dilate = T.alloc_buffer((T.int64(2), T.int64(4), T.int64(5)))
    data_pad = T.alloc_buffer((T.int64(2), T.int64(4), T.int64(9)))
    kernel = T.alloc_buffer((T.int64(3), T.int64(4), T.int64(3)))
    for i0, i1, i2 in T.grid(T.int64(2), T.int64(4), T.int64(5)):
        with T.block("data_dilate"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(x[v_i0, v_i1, v_i2])
            T.writes(data_dilate[v_i0, v_i1, v_i2])
            data_dilate[v_i0, v_i1, v_i2] = x[v_i0, v_i1, v_i2]
    for i0, i1, i2 in T.grid(T.int64(2), T.int64(4), T.int64(9)):
        with T.block("data_pad"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(data_dilate[v_i0, v_i1, v_i2 - T.int64(2)])
            T.writes(data_pad[v_i0, v_i1, v_i2])
            data_pad[v_i0, v_i1, v_i2] = T.if_then_else(T.int64(2) <= v_i2 and v_i2 < T.int64(7), data_dilate[v_i0, v_i1, v_i2 - T.int64(2)], T.float32(0.0))
    for o, i, w_1 in T.grid(T.int64(3), T.int64(4), T.int64(3)):
        with T.block("kernel"):
            v_o, v_i, v_w = T.axis.remap("SSS", [o, i, w_1])
            T.reads(w[v_i, v_o, T.int64(2) - v_w])
            T.writes(kernel[v_o, v_i, v_w])
            kernel[v_o, v_i, v_w] = w[v_i, v_o, T.int64(2) - v_w]
    for b, c, w_1, dc, dw in T.grid(T.int64(2), T.int64(6), T.int64(7), T.int64(2), T.int64(3)):
        with T.block("compute"):
            v_b, v_c, v_w, v_dc, v_dw = T.axis.remap("SSSRR", [b, c, w_1, dc, dw])
            T.reads(data_pad[v_b, v_c // T.int64(3) * T.int64(2) + v_dc, v_w + v_dw], kernel[v_c % T.int64(3), v_c // T.int64(3) * T.int64(2) + v_dc, v_dw])
            T.writes(compute[v_b, v_c, v_w])
            with T.init():
                compute[v_b, v_c, v_w] = T.float32(0.0)
            compute[v_b, v_c, v_w] = compute[v_b, v_c, v_w] + data_pad[v_b, v_c // T.int64(3) * T.int64(2) + v_dc, v_w + v_dw] * kernel[v_c % T.int64(3), v_c // T.int64(3) * T.int64(2) + v_dc, v_dw]"""


def test_conv1d_transpose_legalized_as_tvm():
    """TVM 0.27's text (groups=2; a PrimFunc printed alone is "main"), but for the T.block,
    T.alloc_buffer and tir.noalias spellings."""
    src = CONV1D.replace("(2, 3, 10)", "(2, 4, 5)").replace("(4, 3, 3)", "(4, 3, 3)").replace(
        "R.nn.conv1d(x, w, strides=2, padding=1)", "R.nn.conv1d_transpose(x, w, groups=2)")
    assert legalized_prim(src, "conv1d_transpose") == CONV1D_TRANSPOSE_TVM


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_conv_transpose_compiled(dtype):
    x, w = arr((2, 4, 5), dtype), arr((4, 3, 3), dtype)
    got = compile_and_run(lambda x, w: op.nn.conv1d_transpose(x, w, strides=3, padding=(2, 1), output_padding=2,
                                                               groups=2), [x, w])
    close(got, conv_transpose_nd(x, w, (3,), (2, 1), (2,), (1,), groups=2), dtype)
    x, w = arr((1, 2, 3, 4), dtype), arr((2, 3, 2, 3), dtype)
    got = compile_and_run(lambda x, w: op.nn.conv2d_transpose(x, w, strides=2, padding=1, dilation=(2, 1)), [x, w])
    close(got, conv_transpose_nd(x, w, (2, 2), (1, 1, 1, 1), (0, 0), (2, 1)), dtype)


@pytest.mark.parametrize("mode, np_mode", [("constant", "constant"), ("reflect", "reflect"), ("replicate", "edge"),
                                           ("circular", "wrap")])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int8", "bool"])
def test_pad_compiled(mode, np_mode, dtype):
    x = arr((3, 4, 2), dtype) if dtype != "bool" else rng.random((3, 4, 2)) > 0.5
    widths = [(2, 1), (0, 3), (1, 0)]
    got = compile_and_run(lambda x: op.nn.pad(x, pad_width=[w for pair in widths for w in pair], pad_mode=mode), [x])
    close(got, np.pad(x, widths, mode=np_mode), dtype)


def test_pad_crops_with_negative_widths():
    x = arr((3, 4), "float32")
    got = compile_and_run(lambda x: op.nn.pad(x, pad_width=[-1, 1, 2, -2], pad_value=-3), [x])
    close(got, np.pad(x, [(0, 1), (2, 0)], constant_values=-3)[1:, :4], "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_pool1d_pool3d_compiled(dtype):
    from nn_refs import pool_nd
    x = arr((2, 3, 9), dtype)
    got = compile_and_run(lambda x: op.nn.max_pool1d(x, pool_size=2, strides=2, padding=1, ceil_mode=True), [x])
    close(got, pool_nd(x, "max", (2,), (2,), (1, 1), ceil=True), dtype)
    x = arr((1, 2, 3, 4, 3), dtype)
    got = compile_and_run(lambda x: op.nn.max_pool3d(x, pool_size=2, dilation=(1, 2, 1), padding=(0, 1, 1)), [x])
    close(got, pool_nd(x, "max", (2, 2, 2), (1, 1, 1), (0, 1, 1) * 2, (1, 2, 1)), dtype)
    if dtype.startswith("float"):
        x = arr((2, 3, 9), dtype)
        got = compile_and_run(lambda x: op.nn.avg_pool1d(x, pool_size=3, strides=2, padding=1), [x])
        close(got, pool_nd(x, "avg", (3,), (2,), (1, 1), include_pad=True), dtype)
        x = arr((1, 2, 3, 4, 3), dtype)
        got = compile_and_run(lambda x: op.nn.avg_pool3d(x, pool_size=2, strides=2, padding=1, ceil_mode=True,
                                                         count_include_pad=False), [x])
        close(got, pool_nd(x, "avg", (2, 2, 2), (2, 2, 2), (1,) * 6, ceil=True), dtype)


def test_max_pool1d_legalized_as_tvm():
    """TVM: pad_temp padded with the lowest float32, then pool_max over ax0, ax1, ax2 and rv0."""
    src = CONV1D.replace(', w: R.Tensor((4, 3, 3), "float32")', "").replace(
        "R.nn.conv1d(x, w, strides=2, padding=1)", "R.nn.max_pool1d(x, pool_size=3, strides=2, padding=1)")
    text = legalized_prim(src, "max_pool1d")
    assert ("T.if_then_else(T.int64(1) <= v_i2 and v_i2 < T.int64(11), x[v_i0, v_i1, v_i2 - T.int64(1)], "
            "T.float32(-340282346638528859811704183484516925440.0))") in text
    assert "for ax0, ax1, ax2, rv0 in T.grid(T.int64(2), T.int64(3), T.int64(5), T.int64(3)):" in text
    assert ("pool_max[v_ax0, v_ax1, v_ax2] = T.max(pool_max[v_ax0, v_ax1, v_ax2], pad_temp[v_ax0, v_ax1, v_ax2 * "
            "T.int64(2) + v_rv0])") in text


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_adaptive_avg_pool1d_3d_compiled(dtype):
    from nn_refs import adaptive_avg_nd
    x = arr((2, 3, 10), dtype)
    close(compile_and_run(lambda x: op.nn.adaptive_avg_pool1d(x, output_size=4), [x]), adaptive_avg_nd(x, (4,)), dtype)
    x = arr((1, 2, 5, 4, 6), dtype)
    close(compile_and_run(lambda x: op.nn.adaptive_avg_pool3d(x, output_size=(2, 4, 3)), [x]),
          adaptive_avg_nd(x, (2, 4, 3)), dtype)
    close(compile_and_run(lambda x: op.nn.adaptive_avg_pool3d(x), [x]), x, dtype)


def test_adaptive_avg_pool3d_legalized_as_tvm():
    """TVM: exact windows read ``ax * window + rv`` and divide by their constant size."""
    src = CONV1D.replace('x: R.Tensor((2, 3, 10), "float32"), w: R.Tensor((4, 3, 3), "float32")',
                         'x: R.Tensor((1, 2, 4, 6, 6), "float32")').replace(
        "R.nn.conv1d(x, w, strides=2, padding=1)", "R.nn.adaptive_avg_pool3d(x, output_size=[2, 3, 2])")
    text = legalized_prim(src, "adaptive_avg_pool3d")
    assert ("adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] + x[v_ax0, v_ax1, v_ax2 * T.int64(2) + v_rv0, "
            "v_ax3 * T.int64(2) + v_rv1, v_ax4 * T.int64(3) + v_rv2]") in text
    assert "T.grid(T.int64(1), T.int64(2), T.int64(2), T.int64(3), T.int64(2), T.int64(2), T.int64(2), T.int64(3))" in text


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_norms_compiled(dtype):
    from nn_refs import group_norm, rms_norm
    x, g, b = arr((2, 6, 4), dtype), arr((6,), dtype), arr((6,), dtype)
    got = compile_and_run(lambda x, g, b: op.nn.group_norm(x, g, b, num_groups=3, channel_axis=1, axes=[2]), [x, g, b])
    close(got, group_norm(x, g, b, 3, 1, (2,)), dtype)
    got = compile_and_run(lambda x, g, b: op.nn.instance_norm(x, g, b, channel_axis=1, axes=[2], center=False,
                                                              epsilon=0.1), [x, g, b])
    close(got, group_norm(x, g, np.zeros_like(b), 6, 1, (2,), eps=0.1), dtype)
    x, w = arr((3, 5), dtype), arr((5,), dtype)
    close(compile_and_run(lambda x, w: op.nn.rms_norm(x, w), [x, w]), rms_norm(x, w, (1,)), dtype)


def test_rms_norm_legalized_as_tvm():
    """TVM's blocks T_multiply, T_multiply_red, rsqrt and T_rms_norm (TVM also casts float32 to
    float32 around them; tvmlite casts only float16, which both compute in float32)."""
    src = CONV1D.replace(', w: R.Tensor((4, 3, 3), "float32")', ', w: R.Tensor((10,), "float32")').replace(
        "R.nn.conv1d(x, w, strides=2, padding=1)", "R.nn.rms_norm(x, w)")
    text = legalized_prim(src, "rms_norm")
    assert ("rsqrt[v_ax0, v_ax1] = T.rsqrt(T_multiply_red[v_ax0, v_ax1] / T.float32(10.0) + "
            "T.float32(1.0000000000000001e-05))") in text
    assert "T_rms_norm[v_ax0, v_ax1, v_ax2] = rsqrt[v_ax0, v_ax1] * x[v_ax0, v_ax1, v_ax2] * w[v_ax2]" in text


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_activations_compiled(dtype):
    from nn_refs import selu, softplus
    x, a = arr((2, 3, 4), dtype), arr((3,), dtype)
    close(compile_and_run(lambda x, a: op.nn.prelu(x, a), [x, a]), np.where(x > 0, x, x * a[:, None]), dtype)
    close(compile_and_run(op.nn.selu, [x]), selu(x), dtype)
    close(compile_and_run(lambda x: op.nn.softplus(x, beta=1.5, threshold=2.0), [x]), softplus(x, 1.5, 2.0), dtype)


def test_selu_softplus_legalized_as_tvm():
    """TVM's texts: selu op by op (T_maximum ... T_multiply), softplus one select."""
    src = CONV1D.replace(', w: R.Tensor((4, 3, 3), "float32")', "").replace(
        "R.nn.conv1d(x, w, strides=2, padding=1)", "R.nn.softplus(x, beta=2.0, threshold=10.0)")
    assert ("compute[v_i0, v_i1, v_i2] = T.Select(T.float32(10.0) < T.float32(2.0) * x[v_i0, v_i1, v_i2], "
            "x[v_i0, v_i1, v_i2], T.float32(0.5) * T.log(T.float32(1.0) + T.exp(T.float32(2.0) * "
            "x[v_i0, v_i1, v_i2])))") in legalized_prim(src, "softplus")
    text = legalized_prim(src.replace("R.nn.softplus(x, beta=2.0, threshold=10.0)", "R.nn.selu(x)"), "selu")
    blocks = [line.strip() for line in text.splitlines() if line.strip().startswith("with T.block(")]
    assert blocks == [f'with T.block("{b}"):' for b in ("T_maximum", "compute", "T_subtract", "T_multiply",
                                                         "T_minimum", "T_add", "T_multiply_1")]
    assert "T_multiply_1[v_ax0, v_ax1, v_ax2] = T.float32(1.6732632423543772) * T_subtract[v_ax0, v_ax1, v_ax2]" in text


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_nll_loss_compiled(dtype, reduction):
    from nn_refs import nll_loss
    p, t, w = arr((3, 4, 2), dtype), np.array([[0, 3], [2, -100], [1, 1]], "int64"), arr((4,), dtype) + 3
    got = compile_and_run(lambda p, t, w: op.nn.nll_loss(p, t, w, reduction=reduction), [p, t, w])
    close(got, nll_loss(p, t, w, reduction), dtype)
    p, t = arr((4,), dtype), np.array(2, "int32")
    close(compile_and_run(lambda p, t: op.nn.nll_loss(p, t, reduction=reduction, ignore_index=0), [p, t]),
          nll_loss(p, t, None, reduction, 0), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int8", "bool"])
def test_rearrangements_compiled(dtype):
    from nn_refs import pixel_shuffle
    x = arr((2, 18, 2, 3), dtype) if dtype != "bool" else rng.random((2, 18, 2, 3)) > 0.5
    close(compile_and_run(lambda x: op.nn.pixel_shuffle(x, upscale_factor=3), [x]), pixel_shuffle(x, 3), dtype)
    close(compile_and_run(op.nn.batch_flatten, [x]), x.reshape(2, -1), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_cross_entropy_with_logits_compiled(dtype):
    x, y = arr((4, 3), dtype), arr((4, 3), dtype)
    want = -(x * y).sum()
    want = np.array(want / 4 if dtype.startswith("float") else np.trunc(want / 4), dtype)
    close(compile_and_run(op.nn.cross_entropy_with_logits, [x, y]), want, dtype)
    close(compile_and_run(op.nn.cross_entropy_with_logits, [x[0], y[0]]), np.array(-(x[0] * y[0]).sum(), dtype), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("causal", [None, "TopLeft", "BottomRight"])
def test_attention_compiled(dtype, causal):
    from nn_refs import attention
    q, k, v = arr((2, 5, 2, 4), dtype), arr((2, 3, 2, 4), dtype), arr((2, 3, 2, 3), dtype)
    close(compile_and_run(lambda q, k, v: op.nn.attention(q, k, v, causal_mask=causal), [q, k, v]),
          attention(q, k, v, causal=causal), dtype)
    b = arr((2, 1, 5, 3), dtype)
    close(compile_and_run(lambda q, k, v, b: op.nn.attention_bias(q, k, v, b, scale=0.25, causal_mask=causal),
                          [q, k, v, b]), attention(q, k, v, b, 0.25, causal), dtype)


def test_attention_prints_as_tvm_and_window_stays():
    """TVM prints every attribute (None included) and refuses to legalize a sliding window."""
    src = CONV1D.replace('x: R.Tensor((2, 3, 10), "float32"), w: R.Tensor((4, 3, 3), "float32")',
                         'q: R.Tensor((2, 4, 3, 8), "float32"), k: R.Tensor((2, 5, 3, 8), "float32"), '
                         'v: R.Tensor((2, 5, 3, 6), "float32")').replace(
        "R.nn.conv1d(x, w, strides=2, padding=1)", 'R.nn.attention(q, k, v, scale=0.5, window_size=2)')
    mod = from_source(src)
    assert ('R.nn.attention(q, k, v, scale=T.float32(0.5), causal_mask=None, window_size=2)'
            in mod.script())
    assert "R.nn.attention(" in LegalizeOps()(mod).script()
    text = legalized_prim(src.replace(", window_size=2", ""), "attention")
    blocks = [line.strip()[len('with T.block("'):-3] for line in text.splitlines()
              if line.strip().startswith("with T.block(") and "root" not in line]
    assert blocks == ["T_transpose", "T_reshape", "T_transpose_1", "T_reshape_1", "T_batch_matmul_NT", "T_multiply",
                      "T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm", "T_transpose_2",
                      "T_reshape_2", "T_batch_matmul_NN", "T_reshape_3", "T_transpose_3"]
