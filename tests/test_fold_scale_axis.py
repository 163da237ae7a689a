"""FoldScaleAxis: constant per-channel scales after a conv2d fold into its weights; checked by the
ops left and by numbers against numpy (plain and packed layouts, the default pipeline)."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.ir import IRModule
from tvmlite.ir import relax as rx
from tvmlite.script import from_source

CONV_BN = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 8, 8), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, R.const(w), padding=[1, 1, 1, 1])
            a = R.add(c, R.const(b))
            y = R.multiply(a, R.const(s))
            z = R.add(y, R.const(t))
            gv = R.nn.relu(z)
            R.output(gv)
        return gv
'''


def conv_bn_params(seed: int = 0, channels: int = 4) -> dict[str, np.ndarray]:
    """Weights (channels x 3 x 3 x 3), bias, scale and shift shaped (1, channels, 1, 1)."""
    rng = np.random.default_rng(seed)
    return {"w": rng.standard_normal((channels, 3, 3, 3)).astype("float32"),
            "b": rng.standard_normal((1, channels, 1, 1)).astype("float32"),
            "s": rng.uniform(0.5, 2.0, (1, channels, 1, 1)).astype("float32"),
            "t": rng.standard_normal((1, channels, 1, 1)).astype("float32")}


def conv_numpy(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NCHW x OIHW convolution, stride 1, padding 1."""
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, w.shape[2:], axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", windows, w)


def ops(mod: IRModule) -> list[str]:
    """The ops of ``main``'s bindings in order."""
    return [b.value.op.name[len("relax."):] for block in mod["main"].body.blocks for b in block.bindings
            if isinstance(b.value, rx.Call)]


def run(mod: IRModule, *args: np.ndarray) -> np.ndarray:
    """``main`` compiled and run on the VM."""
    return tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())["main"](*args).numpy()


def test_bias_scale_and_shift_become_one_add() -> None:
    """conv, add, multiply, add: the scale moves into the weights, the bias and shift into one add."""
    params = conv_bn_params()
    mod = from_source(CONV_BN, extra_vars=params)
    folded = P.FoldScaleAxis()(mod)
    assert ops(folded) == ["nn.conv2d", "add", "nn.relu"]
    conv = folded["main"].body.blocks[0].bindings[0].value
    want_w = params["w"] * params["s"].reshape(4, 1, 1, 1)
    np.testing.assert_array_equal(conv.args[1].data, want_w)
    add = folded["main"].body.blocks[0].bindings[1].value
    np.testing.assert_array_equal(add.args[1].data, params["b"] * params["s"] + params["t"])
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype("float32")
    want = np.maximum((conv_numpy(x, params["w"]) + params["b"]) * params["s"] + params["t"], 0)
    np.testing.assert_allclose(run(folded, x), want, rtol=1e-5, atol=1e-5)


def test_scale_right_after_the_conv_folds_without_a_bias() -> None:
    """conv then multiply (no bias), as resnet's bias-free convs give: the multiply disappears."""
    params = conv_bn_params(2)
    text = CONV_BN.replace("            a = R.add(c, R.const(b))\n", "").replace("R.multiply(a,", "R.multiply(c,")
    folded = P.FoldScaleAxis()(from_source(text, extra_vars=params))
    assert ops(folded) == ["nn.conv2d", "add", "nn.relu"]
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype("float32")
    want = np.maximum(conv_numpy(x, params["w"]) * params["s"] + params["t"], 0)
    np.testing.assert_allclose(run(folded, x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["spatial scale", "conv used twice", "weights not constant", "scalar shift"])
def test_what_does_not_fold(case: str) -> None:
    """A scale varying along a spatial axis, a conv with another use and non-constant weights stay;
    a scalar shift after the bias still merges with it (adds of constants)."""
    params = conv_bn_params(4)
    text = CONV_BN
    if case == "spatial scale":
        params["s"] = np.linspace(0.5, 1.5, 8, dtype="float32").reshape(1, 1, 1, 8)
    elif case == "conv used twice":
        text = text.replace("gv = R.nn.relu(z)", "gv = R.add(R.nn.relu(z), c)")
    elif case == "weights not constant":
        text = text.replace("R.const(w)", "wp").replace('"float32")):', '"float32"), wp: R.Tensor((4, 3, 3, 3), "float32")):')
    else:
        params["t"] = np.array(0.25, dtype="float32")
    mod = from_source(text, extra_vars=params)
    folded = P.FoldScaleAxis()(mod)
    if case == "scalar shift":
        assert ops(folded) == ["nn.conv2d", "add", "nn.relu"]
    elif case == "spatial scale":
        assert ops(folded) == ["nn.conv2d", "add", "multiply", "add", "nn.relu"]
    else:  # the multiply stays; only its shift merges where the add before it has no other use
        assert "multiply" in ops(folded)
    args = [np.random.default_rng(5).standard_normal((2, 3, 8, 8)).astype("float32")]
    if case == "weights not constant":
        args.append(params["w"])
    np.testing.assert_allclose(run(folded, *args), run(mod, *args), rtol=1e-5, atol=1e-5)


BATCH_NORM = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 10, 10), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, R.const(w), padding=[1, 1, 1, 1])
            bn = R.nn.batch_norm(c, R.const(g), R.const(be), R.const(m), R.const(v), axis=1)
            gv = R.nn.relu(bn[0])
            R.output(gv)
        return gv
'''


def test_packed_batch_norm_folds_in_the_default_pipeline() -> None:
    """A batch norm after a packed (NCHW16c / OIHW16i16o) conv: after SimplifyInference, PackConv2d
    and FoldConstant the scale sits on the packed channel axes; the default pipeline's kernel has
    no multiply left, and the result matches numpy."""
    rng = np.random.default_rng(7)
    params = {"w": rng.standard_normal((32, 16, 3, 3)).astype("float32"),
              "g": rng.uniform(0.5, 1.5, 32).astype("float32"), "be": rng.standard_normal(32).astype("float32"),
              "m": rng.standard_normal(32).astype("float32"), "v": rng.uniform(0.5, 2.0, 32).astype("float32")}
    mod = from_source(BATCH_NORM, extra_vars=params)
    graph = P.Sequential([P.CanonicalizeBindings(), P.SimplifyInference(), P.PackConv2d(), P.FoldConstant(),
                          P.FoldScaleAxis()])(mod)
    assert ops(graph) == ["layout_transform", "nn.conv2d", "add", "nn.relu", "layout_transform"]
    lowered = P.get_pipeline("default")(mod)
    kernels = [gv.name_hint for gv, f in lowered.functions_items() if not isinstance(f, rx.Function)]
    assert kernels and not any("multiply" in k for k in kernels)
    x = rng.standard_normal((1, 16, 10, 10)).astype("float32")
    scale = params["g"] / np.sqrt(params["v"] + 1e-5)
    want = (conv_numpy(x, params["w"]) - params["m"][:, None, None]) * scale[:, None, None] + params["be"][:, None, None]
    np.testing.assert_allclose(run(lowered, x), np.maximum(want, 0), rtol=1e-4, atol=1e-4)
