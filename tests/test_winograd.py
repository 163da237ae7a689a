"""WinogradConv2d: packed 3x3 stride-1 convs with constant weights become one Winograd F(2x2, 3x3)
kernel with the element-wise ops after them folded in; checked by numbers against a direct
convolution in numpy, by the weights transform against its definition, by which convs it leaves
alone, and by the printed module reading back."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.ir import IRModule
from tvmlite.ir import relax as rx
from tvmlite.ir.structural import structural_equal
from tvmlite.passes.winograd import winograd_weights
from tvmlite.script import from_source

CONV = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((N, C, H, W), "float32"), r: R.Tensor((N, K, H, W), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, R.const(w), strides=[S, S], padding=[1, 1, 1, 1])
            a = R.add(c, R.const(b))
            s = R.multiply(a, R.const(g))
            t = R.add(s, r)
            gv = R.nn.relu(t)
            R.output(gv)
        return gv
'''


def conv_text(n: int = 1, c: int = 32, k: int = 32, h: int = 16, w: int = 16, stride: int = 1) -> str:
    text = CONV.replace("S, S", f"{stride}, {stride}").replace("(N, C, H, W)", f"({n}, {c}, {h}, {w})")
    return text.replace("(N, K, H, W)", f"({n}, {k}, {(h - 1) // stride + 1}, {(w - 1) // stride + 1})")


def params(c: int = 32, k: int = 32, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"w": (rng.standard_normal((k, c, 3, 3)) / np.sqrt(9 * c)).astype("float32"),
            "b": rng.standard_normal((1, k, 1, 1)).astype("float32"),
            "g": rng.uniform(0.5, 2.0, (1, k, 1, 1)).astype("float32")}


def conv_numpy(x: np.ndarray, w: np.ndarray, stride: int = 1) -> np.ndarray:
    """NCHW x OIHW direct convolution, padding 1, in float64."""
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64))


def expected(x: np.ndarray, r: np.ndarray, p: dict[str, np.ndarray], stride: int = 1) -> np.ndarray:
    return np.maximum((conv_numpy(x, p["w"], stride) + p["b"]) * p["g"] + r, 0)


def winograd_calls(mod: IRModule) -> list[rx.Call]:
    return [b.value for blk in mod["main"].body.blocks for b in blk.bindings if isinstance(b.value, rx.Call)
            and b.value.op.name == "relax.call_tir" and b.value.args[0].name_hint.startswith("winograd_conv2d")]


def default(mod: IRModule) -> IRModule:
    return P.get_pipeline("default")(mod)


def run(mod: IRModule, *args: np.ndarray) -> np.ndarray:
    return tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())["main"](*args).numpy()


# Row tasks (U smaller than V), odd output sizes (the last tiles in part), and block tasks (U more
# than WINOGRAD_ROW_TASKS_MAX_RATIO times V: few tiles, many channels).
SHAPES = [(1, 32, 32, 16, 16), (2, 16, 48, 12, 8), (1, 64, 16, 14, 14), (1, 32, 32, 7, 9), (1, 64, 512, 8, 8)]


@pytest.mark.parametrize("shape", SHAPES)
def test_conv_and_its_epilogue_match_a_direct_convolution(shape) -> None:
    """The conv, its bias, a per-channel scale, a residual add and relu: one Winograd kernel, and
    the numbers of a direct convolution (channel counts of one and several packed blocks)."""
    n, c, k, h, w = shape
    p = params(c, k)
    mod = from_source(conv_text(n, c, k, h, w), extra_vars=p)
    lowered = P.Sequential([P.PackConv2d(), P.FoldConstant(), P.WinogradConv2d()])(mod)
    calls = winograd_calls(lowered)
    assert len(calls) == 1 and not any(b.value.op.name == "relax.nn.conv2d" for blk in lowered["main"].body.blocks
                                       for b in blk.bindings if isinstance(b.value, rx.Call))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, c, h, w)).astype("float32")
    r = rng.standard_normal((n, k, h, w)).astype("float32")
    got = run(default(mod), x, r)
    np.testing.assert_allclose(got, expected(x, r, p), rtol=1e-4, atol=1e-4)


def test_weights_transform_is_g_w_g_transposed() -> None:
    """U[4a + b, c, k] = sum_ij G[a, i] w[k, c, i, j] G[b, j] (F(2x2, 3x3)'s G), in packed order."""
    rng = np.random.default_rng(2)
    w = rng.standard_normal((32, 48, 3, 3))
    packed = w.reshape(2, 16, 3, 16, 3, 3).transpose(0, 2, 4, 5, 3, 1).astype("float32")  # OIHW16i16o
    u = winograd_weights(packed)
    assert u.shape == (16, 2, 48, 16)
    g = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
    for a in range(4):
        for b in range(4):
            want = np.zeros((48, 32))
            for i in range(3):
                for j in range(3):
                    want += g[a, i] * g[b, j] * w[:, :, i, j].T
            np.testing.assert_allclose(u[4 * a + b].transpose(1, 0, 2).reshape(48, 32), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["stride 2", "no padding", "few tiles", "few channels", "weights not constant"])
def test_convs_it_leaves_alone(case: str) -> None:
    """Strided or unpadded convs, fewer tiles or channels than pays, and non-constant weights keep
    the direct conv (and their numbers)."""
    n, c, k, h, w, stride = 1, 32, 32, 16, 16, 1
    if case == "stride 2":
        stride = 2
    elif case == "few tiles":
        h = w = 6
    elif case == "few channels":
        c = 8
    p = params(c, k, seed=3)
    text = conv_text(n, c, k, h, w, stride)
    if case == "weights not constant":
        text = text.replace("R.const(w)", "wp").replace('r: R.Tensor(', f'wp: R.Tensor(({k}, {c}, 3, 3), "float32"), r: R.Tensor(')
    if case == "no padding":
        text = text.replace("padding=[1, 1, 1, 1]", "padding=[0, 0, 0, 0]").replace(
            f"r: R.Tensor(({n}, {k}, {h}, {w})", f"r: R.Tensor(({n}, {k}, {h - 2}, {w - 2})")
    mod = from_source(text, extra_vars=p)
    out = default(mod)
    assert not winograd_calls(out)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((n, c, h, w)).astype("float32")
    if case == "no padding":
        r = rng.standard_normal((n, k, h - 2, w - 2)).astype("float32")
        # a padded conv's inner outputs are the unpadded conv's
        want = np.maximum((conv_numpy(x, p["w"])[:, :, 1:-1, 1:-1] + p["b"]) * p["g"] + r, 0)
    else:
        r = rng.standard_normal((n, k, (h - 1) // stride + 1, (w - 1) // stride + 1)).astype("float32")
        want = expected(x, r, p, stride)
    args = (x, p["w"], r) if case == "weights not constant" else (x, r)
    np.testing.assert_allclose(run(out, *args), want, rtol=1e-4, atol=1e-4)


def test_an_epilogue_value_used_twice_stays_outside() -> None:
    """The chain folds up to a value with a second use: after it the ops run as usual."""
    p = params()
    text = conv_text().replace("gv = R.nn.relu(t)", "gv = R.add(R.nn.relu(t), a)")
    mod = from_source(text, extra_vars=p)
    out = P.Sequential([P.PackConv2d(), P.FoldConstant(), P.WinogradConv2d()])(mod)
    (call,) = winograd_calls(out)
    assert len(call.args[1].fields) == 3  # x, U and the bias: ``a`` is used twice, so the chain ends there
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 32, 16, 16)).astype("float32")
    r = rng.standard_normal((1, 32, 16, 16)).astype("float32")
    want = expected(x, r, p) + conv_numpy(x, p["w"]) + p["b"]
    np.testing.assert_allclose(run(default(mod), x, r), want, rtol=1e-4, atol=1e-4)


def test_printed_module_reads_back() -> None:
    """The Winograd kernel prints as TVMScript that parses to the same module."""
    mod = from_source(conv_text(), extra_vars=params())
    out = P.Sequential([P.PackConv2d(), P.FoldConstant(), P.WinogradConv2d()])(mod)
    func = out[winograd_calls(out)[0].args[0]]
    again = from_source(func.script())
    assert structural_equal(again, func)


def test_pass_can_be_disabled() -> None:
    """PassContext(disabled_pass=["WinogradConv2d"]) keeps the direct conv in the default pipeline."""
    mod = from_source(conv_text(), extra_vars=params())
    with P.PassContext(disabled_pass=["WinogradConv2d"]):
        out = default(mod)
    assert not winograd_calls(out)
    assert winograd_calls(default(mod))


@pytest.mark.parametrize("shape, loops", [((1, 32, 32, 16, 16), [8]), ((1, 64, 512, 8, 8), [4, 32])])
def test_task_layout_follows_the_larger_operand(shape, loops) -> None:
    """Large maps: one parallel loop over the rows of tiles. Few tiles and many output channels (U
    larger than V by more than WINOGRAD_ROW_TASKS_MAX_RATIO): the input transform over the rows,
    then a parallel loop over the blocks of output channels."""
    from tvmlite.ir import tir
    from tvmlite.ir.stmt_functor import post_order_visit

    n, c, k, h, w = shape
    out = P.Sequential([P.PackConv2d(), P.FoldConstant(), P.WinogradConv2d()])(
        from_source(conv_text(n, c, k, h, w), extra_vars=params(c, k)))
    func = out[winograd_calls(out)[0].args[0]]
    found: list = []
    post_order_visit(func.body, lambda s: found.append(s) if isinstance(s, tir.For) and s.kind == tir.ForKind.PARALLEL
                     else None)
    assert sorted(int(f.extent.value) for f in found) == loops
