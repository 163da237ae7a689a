"""LegalizeOps: the seed corpus byte for byte, one numpy-checked legalization per registered op
(the generated PrimFuncs run through ``te.evaluate_prim_func``), symbolic shapes,
``customize_legalize_map``, and the ops that stay as they are."""
import math
import pathlib
import sys

import numpy as np
import pytest

from tvmlite import relax, topi
from tvmlite.ir import relax as rx
from tvmlite.ir import structural_equal, tir
from tvmlite.ir.op import list_ops
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.passes import LegalizeOps, PassContext, get_pass
from tvmlite.script import from_source
from tvmlite.testing import assert_round_trip

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from legalize_util import build, call_tirs, legalize_and_run, params_for, run  # noqa: E402

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)
op = relax.op
rng = np.random.default_rng(7)


def body(text: str) -> str:
    return "\n".join(line for line in text.strip("\n").split("\n") if not line.startswith("# from ")).strip("\n")


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype("float32")


def i32(*shape, lo=-20, hi=20):
    return rng.integers(lo, hi, shape).astype("int32")


# ------------------------------------------------------------------ the seed corpus
@pytest.mark.parametrize("src, want", [("seed001_mlp_dynamic.py", "seed001_mlp_dynamic_legalized.py"),
                                       ("seed004_mlp_torch.py", "seed004_mlp_torch_legalized.py")])
def test_corpus_byte_identical(src, want):
    out = LegalizeOps()(from_source(read_corpus(src)))
    expected = read_corpus(want)
    assert body(out.script()) == body(expected)
    assert structural_equal(out, from_source(expected))


def test_corpus_runs_like_numpy():
    """The legalized dynamic MLP computes the MLP (n = 3)."""
    mod = LegalizeOps()(from_source(read_corpus("seed001_mlp_dynamic.py")))
    x, w1, b1, w2, b2 = f32(3, 784), f32(128, 784), f32(128), f32(10, 128), f32(10)
    out = run(mod, [x, w1, b1, w2, b2], "forward")
    ref = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ one case per op
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_erf = np.vectorize(math.erf)


def _conv2d(x, w, stride=(1, 1), pad=(0, 0, 0, 0), dil=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (h + pad[0] + pad[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pad[1] + pad[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), dtype=x.dtype)
    per = o // groups
    for f in range(o):
        g = f // per
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * stride[0]:i * stride[0] + dil[0] * (kh - 1) + 1:dil[0],
                           j * stride[1]:j * stride[1] + dil[1] * (kw - 1) + 1:dil[1]]
                out[:, f, i, j] = (patch * w[f]).sum(axis=(1, 2, 3))
    return out


def _pool(x, k, s, pad, kind, ceil=False, include_pad=False):
    n, c, h, w = x.shape
    fill = -np.inf if kind == "max" else 0.0
    oh = (h + pad[0] + pad[2] - k[0] + ((s[0] - 1) if ceil else 0)) // s[0] + 1
    ow = (w + pad[1] + pad[3] - k[1] + ((s[1] - 1) if ceil else 0)) // s[1] + 1
    out = np.zeros((n, c, oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - pad[0], j * s[1] - pad[1]
            h1, w1 = h0 + k[0], w0 + k[1]
            hc0, wc0, hc1, wc1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            win = x[:, :, hc0:hc1, wc0:wc1]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3)) if win.size else fill
            else:
                if include_pad:
                    cnt = (min(h1, h + pad[2]) - max(h0, -pad[0])) * (min(w1, w + pad[3]) - max(w0, -pad[1]))
                else:
                    cnt = (hc1 - hc0) * (wc1 - wc0)
                out[:, :, i, j] = win.sum(axis=(2, 3)) / max(cnt, 1)
    return out


def _adaptive_avg(x, oh, ow):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


def _layer_norm(x, g, b, axes, eps=1e-5):
    m = x.mean(axis=axes, keepdims=True)
    v = x.var(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _trunc_div(a, b):
    return (np.trunc(a.astype("float64") / b)).astype(a.dtype)


X = f32(2, 3, 4)
POS = f32(2, 3, lo=0.1, hi=3.0)
UNIT = f32(2, 3, lo=-0.9, hi=0.9)
A, B = f32(2, 3), f32(3)
IA, IB = i32(2, 3), i32(3, lo=1, hi=9)
BA, BB = rng.random((2, 3)) > 0.5, rng.random((3,)) > 0.5
SPECIAL = np.array([[0.5, np.nan, np.inf], [-np.inf, -1.0, 0.0]], dtype="float32")
IMG = f32(2, 4, 7, 7)
W_CONV = f32(6, 4, 3, 3)
W_GROUP = f32(6, 2, 3, 3)
IDX = np.array([[2, 0], [1, 3]], dtype="int64")
TAKEN = np.array([0, 2, 0, -1], dtype="int64")  # gathered twice, once, and once from the end
TARGETS = np.array([[0, 1], [4, 2], [1, 3]], dtype="int64")


def _take_backward(g, x, indices):
    """Each gathered gradient added back where it was taken from (axis 1)."""
    out = np.zeros_like(x)
    np.add.at(out, (slice(None), indices % x.shape[1]), g)
    return out


def _pool2d_backward(g, x, kernel, strides, padding, pool_type, count_include_pad, dilation=(1, 1)):
    """Each window's gradient back to its first maximum (max) or spread over what it averaged."""
    out = np.zeros(x.shape, "float64")
    height, width = x.shape[2:]
    for oh, ow in np.ndindex(*g.shape[2:]):
        cells = [(oh * strides[0] + r * dilation[0] - padding[0], ow * strides[1] + q * dilation[1] - padding[1])
                 for r, q in np.ndindex(*kernel)]
        inside = [(h, w) for h, w in cells if 0 <= h < height and 0 <= w < width]
        if pool_type == "max":
            vals = np.stack([x[:, :, h, w] if (h, w) in inside else np.full(x.shape[:2], -np.inf) for h, w in cells])
            first = vals.argmax(axis=0)
            for j, (h, w) in enumerate(cells):
                if (h, w) in inside:
                    out[:, :, h, w] += np.where(first == j, g[:, :, oh, ow], 0)
        else:
            count = len(cells) if count_include_pad else len(inside)
            for h, w in inside:
                out[:, :, h, w] += g[:, :, oh, ow] / count
    return out.astype(x.dtype)


def _nll_loss_backward(g, pred, targets, weights, reduction, ignore_index):
    """``-weights[t] * g`` at each target class (g spread, or divided by the weight sum for mean)."""
    w = weights.copy()
    if ignore_index >= 0:
        w[ignore_index] = 0
    wt = w[targets]
    scale = g / wt.sum() if reduction == "mean" else np.broadcast_to(g, targets.shape)
    out = np.zeros_like(pred)
    n, rest = np.indices(targets.shape)
    out[n, targets, rest] = -wt * scale
    return out

def _scatter_elements(x, idx, upd, axis, combine):
    """numpy's scatter: each update in order, combined with the value where it lands."""
    out = x.copy()
    for pos in np.ndindex(idx.shape):
        target = list(pos)
        target[axis] = idx[pos] % x.shape[axis]
        out[tuple(target)] = combine(out[tuple(target)], upd[pos])
    return out


def _slice_scatter(x, src, sl, axis):
    out = x.copy()
    index = [slice(None)] * x.ndim
    index[axis] = sl
    out[tuple(index)] = src
    return out


def _index_put(x, indices, values, accumulate):
    """numpy's ``x[indices] = values`` (``+=`` when accumulating, repeated places adding up)."""
    out = x.copy()
    idx = np.broadcast_arrays(*indices)
    vals = np.broadcast_to(values, idx[0].shape)
    for pos in np.ndindex(idx[0].shape):
        target = tuple(int(i[pos]) for i in idx)
        out[target] = out[target] + vals[pos] if accumulate else vals[pos]
    return out


def _scatter_nd(x, idx, upd, combine):
    out = x.copy()
    for pos in np.ndindex(idx.shape[:-1]):
        target = tuple(int(i) % d for i, d in zip(idx[pos], x.shape))
        out[target] = combine(out[target], upd[pos])
    return out


# name: (make(*params), inputs, numpy reference, symbolic dims)
CASES = {
    # elementwise, one input
    "abs": (op.abs, [A], np.abs),
    "acos": (op.acos, [UNIT], np.arccos),
    "acosh": (op.acosh, [POS + 1], np.arccosh),
    "asin": (op.asin, [UNIT], np.arcsin),
    "asinh": (op.asinh, [A], np.arcsinh),
    "atan": (op.atan, [A], np.arctan),
    "atanh": (op.atanh, [UNIT], np.arctanh),
    "bitwise_not": (op.bitwise_not, [IA], np.invert),
    "ceil": (op.ceil, [A], np.ceil),
    "cos": (op.cos, [A], np.cos),
    "cosh": (op.cosh, [A], np.cosh),
    "erf": (op.erf, [A], _erf),
    "exp": (op.exp, [A], np.exp),
    "floor": (op.floor, [A], np.floor),
    "isfinite": (op.isfinite, [SPECIAL], np.isfinite),
    "isinf": (op.isinf, [SPECIAL], np.isinf),
    "isnan": (op.isnan, [SPECIAL], np.isnan),
    "log": (op.log, [POS], np.log),
    "logical_not": (op.logical_not, [BA], np.logical_not),
    "negative": (op.negative, [A], np.negative),
    "round": (op.round, [A * 3], np.round),
    "rsqrt": (op.rsqrt, [POS], lambda x: 1 / np.sqrt(x)),
    "sigmoid": (op.sigmoid, [A], _sigmoid),
    "sign": (op.sign, [np.array([[-2.0, 0.0, 3.0]], "float32")], np.sign),
    "sin": (op.sin, [A], np.sin),
    "sinh": (op.sinh, [A], np.sinh),
    "sqrt": (op.sqrt, [POS], np.sqrt),
    "square": (op.square, [A], np.square),
    "tan": (op.tan, [UNIT], np.tan),
    "tanh": (op.tanh, [A], np.tanh),
    "trunc": (op.trunc, [A * 3], np.trunc),
    "astype": (lambda x: op.astype(x, "int32"), [A * 5], lambda x: x.astype("int32")),
    "clip": (lambda x: op.clip(x, relax.PrimValue(tir.FloatImm("float32", -0.5)),
                               relax.PrimValue(tir.FloatImm("float32", 0.5))), [A], lambda x: np.clip(x, -0.5, 0.5)),
    "nn.relu": (op.nn.relu, [A], lambda x: np.maximum(x, 0)),
    # the Gradient pass's markers are the value itself
    "grad.no_grad": (op.grad.no_grad, [A], lambda x: x),
    "grad.start_checkpoint": (op.grad.start_checkpoint, [A], lambda x: x),
    "grad.end_checkpoint": (op.grad.end_checkpoint, [A], lambda x: x),
    "grad.take_backward": (lambda g, x, i: op.grad.take_backward(g, x, i, axis=1), [f32(2, 4), A, TAKEN],
                           _take_backward),
    "grad.max_pool2d_backward": (
        lambda g, x: op.grad.max_pool2d_backward(g, x, pool_size=3, strides=2, padding=1, ceil_mode=True),
        [f32(2, 4, 4, 4), IMG], lambda g, x: _pool2d_backward(g, x, (3, 3), (2, 2), (1, 1, 1, 1), "max", False)),
    "grad.avg_pool2d_backward": (
        lambda g, x: op.grad.avg_pool2d_backward(g, x, pool_size=2, strides=2, dilation=[1, 2], padding=[0, 1]),
        [f32(2, 4, 3, 4), IMG], lambda g, x: _pool2d_backward(g, x, (2, 2), (2, 2), (0, 1, 0, 1), "avg", False,
                                                               dilation=(1, 2))),
    "grad.nll_loss_backward": (lambda g, p, t, w: op.grad.nll_loss_backward(g, p, t, w, reduction="mean",
                                                                             ignore_index=1),
                               [np.array(2.0, "float32"), f32(3, 5, 2), TARGETS, f32(5, lo=0.5, hi=2.0)],
                               lambda g, p, t, w: _nll_loss_backward(g, p, t, w, "mean", 1)),
    "nn.leakyrelu": (lambda x: op.nn.leakyrelu(x, 0.2), [A], lambda x: np.where(x > 0, x, 0.2 * x)),
    "nn.gelu": (op.nn.gelu, [A], lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "nn.gelu_tanh": (op.nn.gelu_tanh, [A],
                     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "nn.silu": (op.nn.silu, [A], lambda x: x * _sigmoid(x)),
    # elementwise, two or three inputs (broadcasting)
    "add": (op.add, [A, B], np.add),
    "subtract": (op.subtract, [A, B], np.subtract),
    "multiply": (op.multiply, [A, B], np.multiply),
    "divide": (op.divide, [A, B + 3], np.divide),
    "floor_divide": (op.floor_divide, [IA, IB], np.floor_divide),
    "floor_mod": (op.floor_mod, [IA, IB], np.remainder),
    "mod": (op.mod, [IA, IB], np.fmod),
    "power": (op.power, [POS, B], np.power),
    "maximum": (op.maximum, [A, B], np.maximum),
    "minimum": (op.minimum, [A, B], np.minimum),
    "logical_and": (op.logical_and, [BA, BB], np.logical_and),
    "logical_or": (op.logical_or, [BA, BB], np.logical_or),
    "logical_xor": (op.logical_xor, [BA, BB], np.logical_xor),
    "bitwise_and": (op.bitwise_and, [IA, IB], np.bitwise_and),
    "bitwise_or": (op.bitwise_or, [IA, IB], np.bitwise_or),
    "bitwise_xor": (op.bitwise_xor, [IA, IB], np.bitwise_xor),
    "left_shift": (op.left_shift, [IA, IB % 4], np.left_shift),
    "right_shift": (op.right_shift, [IA, IB % 4], np.right_shift),
    "equal": (op.equal, [IA % 3, IB % 3], np.equal),
    "not_equal": (op.not_equal, [IA % 3, IB % 3], np.not_equal),
    "less": (op.less, [A, B], np.less),
    "less_equal": (op.less_equal, [IA % 3, IB % 3], np.less_equal),
    "greater": (op.greater, [A, B], np.greater),
    "greater_equal": (op.greater_equal, [IA % 3, IB % 3], np.greater_equal),
    "where": (op.where, [BA, A, B], np.where),
    "ewise_fma": (op.ewise_fma, [A, A * 2, A + 1], lambda a, b, c: a * b + c),
    # creation
    "full": (lambda: op.full((2, 3), relax.const(1.5, "float32")), [], lambda: np.full((2, 3), 1.5, "float32")),
    "full_like": (lambda x: op.full_like(x, relax.const(2, "int32")), [A], lambda x: np.full_like(x, 2)),
    "ones": (lambda: op.ones((3,), "int32"), [], lambda: np.ones((3,), "int32")),
    "ones_like": (op.ones_like, [A], np.ones_like),
    "zeros": (lambda: op.zeros((2, 2), "float32"), [], lambda: np.zeros((2, 2), "float32")),
    "zeros_like": (op.zeros_like, [IA], np.zeros_like),
    "arange": (lambda: op.arange(1, 10, 2, "int64"), [], lambda: np.arange(1, 10, 2)),
    # reductions
    "sum": (lambda x: op.sum(x, axis=[0, 2]), [X], lambda x: x.sum(axis=(0, 2))),
    "mean": (lambda x: op.mean(x, axis=[1], keepdims=True), [X], lambda x: x.mean(axis=1, keepdims=True)),
    "max": (lambda x: op.max(x), [X], np.max),
    "min": (lambda x: op.min(x, axis=[-1]), [X], lambda x: x.min(axis=-1)),
    "prod": (lambda x: op.prod(x, axis=[1]), [X], lambda x: x.prod(axis=1)),
    "variance": (lambda x: op.variance(x, axis=[1]), [X], lambda x: x.var(axis=1)),
    "std": (lambda x: op.std(x, axis=[0, 1]), [X], lambda x: x.std(axis=(0, 1))),
    "argmax": (lambda x: op.argmax(x, axis=1), [X], lambda x: x.argmax(axis=1)),
    "argmin": (lambda x: op.argmin(x), [X], lambda x: x.argmin()),
    # shapes
    "permute_dims": (lambda x: op.permute_dims(x, [1, 0, 2]), [X], lambda x: x.transpose(1, 0, 2)),
    "reshape": (lambda x: op.reshape(x, (4, -1)), [X], lambda x: x.reshape(4, -1)),
    "flatten": (op.flatten, [X], lambda x: x.reshape(-1)),
    "expand_dims": (lambda x: op.expand_dims(x, [0, 3]), [A], lambda x: x[None, :, :, None]),
    "squeeze": (lambda x: op.squeeze(x, [1]), [f32(3, 1, 2)], lambda x: x.squeeze(1)),
    "concat": (lambda x, y: op.concat((x, y), axis=1), [A, f32(2, 2)], lambda x, y: np.concatenate([x, y], 1)),
    "split": (lambda x: op.split(x, 2, axis=2), [X], lambda x: tuple(np.split(x, 2, axis=2))),
    "strided_slice": (lambda x: op.strided_slice(x, (relax.PrimValue(1), relax.PrimValue(2)),
                                                 (relax.PrimValue(0), relax.PrimValue(-1)),
                                                 (relax.PrimValue(3), relax.PrimValue(-5)),
                                                 (relax.PrimValue(2), relax.PrimValue(-2))),
                      [X], lambda x: x[:, 0:3:2, -1:-5:-2]),
    "take": (lambda x, i: op.take(x, i, axis=2), [X, IDX], lambda x, i: np.take(x, i, axis=2)),
    "broadcast_to": (lambda x: op.broadcast_to(x, (2, 2, 3)), [B], lambda x: np.broadcast_to(x, (2, 2, 3))),
    "layout_transform": (lambda x: op.layout_transform(x, lambda n, c, h, w: (n, c // 2, h, w, c % 2)), [IMG],
                         lambda x: x.reshape(2, 2, 2, 7, 7).transpose(0, 1, 3, 4, 2)),
    # linear algebra and nn
    "matmul": (op.matmul, [f32(2, 1, 3, 4), f32(5, 4, 2)], np.matmul),
    "nn.dense": (op.nn.dense, [A, f32(5, 3)], lambda x, w: x @ w.T),
    "nn.softmax": (lambda x: op.nn.softmax(x, axis=1), [X], lambda x: _softmax(x, 1)),
    "nn.log_softmax": (op.nn.log_softmax, [X], lambda x: np.log(_softmax(x, -1))),
    "nn.layer_norm": (lambda x, g, b: op.nn.layer_norm(x, g, b, axes=[1, 2]), [X, f32(3, 4), f32(3, 4)],
                      lambda x, g, b: _layer_norm(x, g, b, (1, 2))),
    "nn.batch_norm": (lambda x, g, b, m, v: op.nn.batch_norm(x, g, b, m, v, axis=1, training=False),
                      [IMG, f32(4), f32(4), f32(4), f32(4, lo=0.5, hi=2)],
                      lambda x, g, b, m, v: ((x - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-5)
                                             * g[:, None, None] + b[:, None, None], m, v)),
    "nn.conv2d": (lambda x, w: op.nn.conv2d(x, w, strides=2, padding=1, dilation=1), [IMG, W_CONV],
                  lambda x, w: _conv2d(x, w, (2, 2), (1, 1, 1, 1))),
    "nn.max_pool2d": (lambda x: op.nn.max_pool2d(x, pool_size=3, strides=2, padding=1), [IMG],
                      lambda x: _pool(x, (3, 3), (2, 2), (1, 1, 1, 1), "max")),
    "nn.avg_pool2d": (lambda x: op.nn.avg_pool2d(x, pool_size=2, strides=2, ceil_mode=True), [IMG],
                      lambda x: _pool(x, (2, 2), (2, 2), (0, 0, 0, 0), "avg", ceil=True)),
    "nn.adaptive_avg_pool2d": (lambda x: op.nn.adaptive_avg_pool2d(x, output_size=(3, 2)), [IMG],
                               lambda x: _adaptive_avg(x, 3, 2)),
}
# the manipulation family of issue 16
CASES.update({
    "tile": (lambda x: op.tile(x, [2, 1, 2]), [X], lambda x: np.tile(x, [2, 1, 2])),
    "repeat": (lambda x: op.repeat(x, 3, axis=1), [X], lambda x: np.repeat(x, 3, axis=1)),
    "flip": (lambda x: op.flip(x, axis=-1), [X], lambda x: np.flip(x, axis=-1)),
    "stack": (lambda x, y: op.stack((x, y), axis=1), [A, B + A], lambda x, y: np.stack([x, y], axis=1)),
    "meshgrid": (lambda x, y, z: op.meshgrid((x, y, z), indexing="xy"), [B, f32(4), f32(2)],
                 lambda x, y, z: tuple(np.meshgrid(x, y, z, indexing="xy"))),
    "gather_elements": (lambda x, i: op.gather_elements(x, i, axis=1), [X, np.array(
        [[[0, -1, 2, 1], [2, 2, -3, 0]], [[1, 0, 0, 2], [-2, 1, 2, 0]]], "int64")],
                        lambda x, i: np.take_along_axis(x, i, axis=1)),
    "gather_nd": (lambda x, i: op.gather_nd(x, i, batch_dims=1), [X, np.array([[[0], [-1]], [[2], [1]]], "int64")],
                  lambda x, i: np.stack([x[b][i[b, :, 0]] for b in range(2)])),
    "scatter_elements": (lambda x, i, u: op.scatter_elements(x, i, u, axis=1, reduction="add"),
                         [A, np.array([[0, -1, 0], [2, 1, 1]], "int64"), f32(2, 3)],
                         lambda x, i, u: _scatter_elements(x, i, u, 1, np.add)),
    "scatter_nd": (lambda x, i, u: op.scatter_nd(x, i, u, reduction="max"),
                   [X, np.array([[1, -1], [0, 2], [1, 2]], "int64"), f32(3, 4)],
                   lambda x, i, u: _scatter_nd(x, i, u, np.maximum)),
    "slice_scatter": (lambda x, u: op.slice_scatter(x, u, relax.PrimValue(1), relax.PrimValue(4),
                                                    relax.PrimValue(2), axis=2), [X, f32(2, 3, 2)],
                      lambda x, u: _slice_scatter(x, u, slice(1, 4, 2), 2)),
    "index_tensor": (lambda x, i, j: op.index_tensor(x, (i, j)), [X, np.array([[1], [-2]], "int64"),
                                                                 np.array([0, 2, -1], "int64")],
                     lambda x, i, j: x[i, j]),
    "index_put": (lambda x, i, j, v: op.index_put(x, (i, j), v, accumulate=True),
                  [A, np.array([[1], [-1]], "int64"), np.array([0, 2, 0], "int64"), f32(3)],
                  lambda x, i, j, v: _index_put(x, (i, j), v, True)),
    "one_hot": (lambda i: op.one_hot(i, relax.PrimValue(tir.FloatImm("float32", 2.5)),
                                     relax.PrimValue(tir.FloatImm("float32", -1.0)), 4, axis=1),
                [np.array([[0, 3, 1], [2, 2, 0]], "int64")],
                lambda i: np.where(np.arange(4)[None, :, None] == i[:, None, :], 2.5, -1.0).astype("float32")),
    "tril": (lambda x: op.tril(x, relax.PrimValue(1)), [X], lambda x: np.tril(x, 1)),
    "triu": (lambda x: op.triu(x, relax.PrimValue(-1)), [X], lambda x: np.triu(x, -1)),
    "reverse_sequence": (lambda x, n: op.reverse_sequence(x, n, seq_axis=2, batch_axis=0), [X, np.array([3, 7], "int64")],
                         lambda x, n: np.stack([np.concatenate([x[0, :, 2::-1], x[0, :, 3:]], 1), x[1, :, ::-1]])),
    "collapse_sum_like": (lambda x, t: op.collapse_sum_like(x, t), [X, f32(3, 1)],
                          lambda x, t: x.sum(axis=(0, 2))[:, None]),
    "collapse_sum_to": (lambda x: op.collapse_sum_to(x, (1, 4)), [X], lambda x: x.sum(axis=(0, 1))[None]),
    "dynamic_strided_slice": (op.dynamic_strided_slice, [X, np.array([1, -1, 0], "int64"),
                                                         np.array([2, -9, 5], "int64"), np.array([1, -2, 2], "int64")],
                              lambda x, b, e, s: x[1:2, -1:-9:-2, 0:5:2]),
})

from nn_refs import NN_CASES  # noqa: E402  (the R.nn family of tests/test_ops_nn.py)
CASES.update(NN_CASES)
# sorting and scans (issue 16); argsort is stable, as TVM's std::stable_sort
CASES.update({
    "sort": (lambda x: op.sort(x, axis=1), [X], lambda x: np.sort(x, axis=1)),
    "argsort": (lambda x: op.argsort(x, descending=True, dtype="int64"), [X],
                lambda x: np.argsort(-x, axis=-1, kind="stable")),
    "topk": (lambda x: op.topk(x, k=2, axis=0, largest=False), [X],
             lambda x: (np.sort(x, axis=0)[:2], np.argsort(x, axis=0, kind="stable")[:2].astype("int32"))),
    "cumsum": (lambda x: op.cumsum(x, axis=2), [X], lambda x: np.cumsum(x, axis=2)),
    "cumprod": (op.cumprod, [IA % 4], lambda x: np.cumprod(x).astype("int32")),
    "bucketize": (lambda x, b: op.bucketize(x, b, right=True), [IA % 7, np.array([0, 2, 4, 6], "int32")],
                  lambda x, b: np.searchsorted(b, x, side="right")),
    "median": (lambda x: op.median(x, axis=1), [X],
               lambda x: (np.sort(x, axis=1)[:, 1], np.argsort(x, axis=1, kind="stable")[:, 1])),
    # data-dependent sizes: R.call_pure_packed of the runtime's relax.run.nonzero / relax.run.unique
    "nonzero": (op.nonzero, [IA % 3], lambda x: np.stack(np.nonzero(x))),
    "unique": (lambda x: op.unique(x, sorted=False, return_counts=True), [IA % 5],
               lambda x: (np.array(list(dict.fromkeys(x.ravel()))), np.array(
                   [np.count_nonzero(x == v) for v in dict.fromkeys(x.ravel())]))),
    "multinomial_from_uniform": (
        op.multinomial_from_uniform, [np.array([[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]], "float32"),
                                      np.array([[0.1], [0.6], [0.9], [0.3]], "float32"),
                                      np.array([[0], [0], [0], [1]], "int64")],
        lambda p, u, i: np.array([[0], [1], [2], [2]])),
    "atan2": (op.atan2, [A, B], np.arctan2),
    "log_add_exp": (op.log_add_exp, [A, B], np.logaddexp),
    "einsum": (lambda x, y: op.einsum((x, y), "bij,jk->bik"), [X, f32(4, 2)], lambda x, y: np.einsum("bij,jk->bik", x, y)),
    "outer": (op.outer, [f32(3), f32(4)], np.outer),
    "eye": (lambda: op.eye(3, 4, 1, dtype="int32"), [], lambda: np.eye(3, 4, 1, dtype="int32")),
    "eye_like": (lambda x: op.eye_like(x, -1), [A], lambda x: np.eye(2, 3, -1, dtype="float32")),
    "hamming_window": (lambda: op.hamming_window(6, 1, 0.54, 0.46, dtype="float32"), [],
                       lambda: (0.54 - 0.46 * np.cos(2 * np.pi * np.arange(6) / 6)).astype("float32")),
})

# the remaining small ops of issue 16 (tests/test_ops_misc.py); their own generator leaves the
# data of the cases after them as it was
from nn_refs import attention as _attention_ref, conv_transpose_nd  # noqa: E402
_misc_rng = np.random.default_rng(1616)


def _mf32(*shape, lo=-2.0, hi=2.0):
    return _misc_rng.uniform(lo, hi, shape).astype("float32")


def _two_sequences(q, k, v, causal):
    """Attention of queries 0:4 over keys 0:2, then of queries 4:6 over keys 2:5."""
    return np.concatenate([_attention_ref(q[:, :4], k[:, :2], v[:, :2], causal=causal),
                           _attention_ref(q[:, 4:], k[:, 2:], v[:, 2:], causal=causal)], axis=1)


CASES.update({
    "quantize": (lambda x, s, z: op.quantize(x, s, z, axis=1, out_dtype="uint8"),
                 [_mf32(2, 3, lo=-50, hi=300), np.array([0.5, 1.0, 2.0], "float32"), np.array([3, 0, 7], "uint8")],
                 lambda x, s, z: np.clip(np.rint(x / s) + z, 0, 255).astype("uint8")),
    "dequantize": (lambda q, s, z: op.dequantize(q, s, z, axis=0),
                   [np.array([[-128, 0, 5], [127, 3, -9]], "int8"), np.array([0.5, 2.0], "float32"),
                    np.array([1, -2], "int8")],
                   lambda q, s, z: ((q.astype("int32") - z[:, None]) * s[:, None]).astype("float32")),
    "nn.conv3d_transpose": (
        lambda x, w: op.nn.conv3d_transpose(x, w, strides=(2, 1, 1), padding=(1, 0, 0), groups=2),
        [_mf32(1, 4, 2, 3, 2), _mf32(4, 2, 2, 2, 3)],
        lambda x, w: conv_transpose_nd(x, w, (2, 1, 1), (1, 0, 0, 1, 0, 0), (0, 0, 0), (1, 1, 1), groups=2)),
    "nn.attention_var_len": (
        lambda q, k, v, sq, sk, mq, mk: op.nn.attention_var_len(q, k, v, sq, sk, mq, mk, causal_mask="BottomRight"),
        [_mf32(1, 6, 2, 4), _mf32(1, 5, 2, 4), _mf32(1, 5, 2, 3), np.array([0, 4, 6], "int32"),
         np.array([0, 2, 5], "int32"), np.array(4, "int32"), np.array(3, "int32")],
        lambda q, k, v, sq, sk, mq, mk: _two_sequences(q, k, v, "BottomRight")),
    # R.ccl.*: runtime.disco calls, which the runtime runs as a single worker
    "ccl.allreduce": (lambda x: op.ccl.allreduce(x, "max", False), [_mf32(2, 3)], lambda x: x),
    "ccl.allgather": (lambda x: op.ccl.allgather(x, 1), [np.arange(6, dtype="int32").reshape(3, 2)], lambda x: x),
    "ccl.broadcast_from_worker0": (op.ccl.broadcast_from_worker0, [_mf32(2, 3, 4)], lambda x: x),
    "ccl.scatter_from_worker0": (lambda x: op.ccl.scatter_from_worker0(x, 1, axis=2), [_mf32(2, 3, 4)], lambda x: x),
    "size": (op.size, [_mf32(2, 3, 4)], lambda x: np.array(x.size, "int64")),
    "wrap_param": (lambda x: op.wrap_param(x, dtype="float16"), [_mf32(2, 3)], lambda x: x.astype("float16")),
})
# the image family (issue 16; tests/test_ops_image.py checks every mode, layout and dtype compiled)
from image_refs import resize as _resize  # noqa: E402
from vision_refs import get_valid_counts as _get_valid_counts, roi_align as _roi_align, roi_pool as _roi_pool  # noqa: E402,E501
from vision_refs import all_class_non_max_suppression as _all_class_nms, non_max_suppression as _nms  # noqa: E402,E501
from vision_refs import multibox_transform_loc as _multibox  # noqa: E402
_DETECTIONS = np.array([[[0, 0.9, 1, 1, 4, 4], [-1, 0.8, 0, 0, 2, 2], [1, 0.3, 2, 2, 5, 5], [2, 0.5, 1, 0, 3, 3]],
                        [[1, 0.2, 0, 0, 1, 1], [0, 0.7, 1, 1, 3, 3], [0, 0.75, 1.5, 1, 3, 3.5], [1, 0.4, 0, 2, 1, 4]]],
                       "float32")
_ROIS = np.array([[1, 0.5, 1.0, 9.0, 12.0], [0, -2.0, 3.0, 4.0, 5.5], [1, 6.0, 6.0, 6.5, 6.2]], "float32")
CASES.update({
    "image.resize2d": (lambda x: op.image.resize2d(x, (5, 3), method="cubic"), [IMG],
                       lambda x: _resize(x, (5, 3), "cubic")),
    "image.resize3d": (lambda x: op.image.resize3d(x, (2, 3, 5), method="nearest_neighbor"), [f32(1, 2, 3, 4, 2)],
                       lambda x: _resize(x, (2, 3, 5), "nearest_neighbor")),
    "image.affine_grid": (lambda t: op.image.affine_grid(t, (3, 4), align_corners=False),
                          [np.array([[[1.0, 0.5, 0.1], [-0.25, 2.0, 0.0]]], "float32")],
                          lambda t: np.einsum("kj,jhw->khw", t[0], np.stack([
                              *np.meshgrid([-2 / 3, 0, 2 / 3], [-0.75, -0.25, 0.25, 0.75], indexing="ij")[::-1],
                              np.ones((3, 4))]))[None]),
    "vision.roi_align": (lambda x, r: op.vision.roi_align(x, r, (2, 3), 0.5, sample_ratio=2), [IMG, _ROIS],
                         lambda x, r: _roi_align(x, r, (2, 3), 0.5, 2)),
    "vision.roi_pool": (lambda x, r: op.vision.roi_pool(x, r, 2, 0.5), [IMG, _ROIS],
                        lambda x, r: _roi_pool(x, r, (2, 2), 0.5)),
    "vision.get_valid_counts": (lambda d: op.vision.get_valid_counts(d, 0.4), [_DETECTIONS],
                                lambda d: _get_valid_counts(d, 0.4)),
    "vision.non_max_suppression": (
        lambda d, c, i: op.vision.non_max_suppression(d, c, i, iou_threshold=0.3),
        [_DETECTIONS, np.array([4, 3], "int32"), np.array([[3, 2, 1, 0], [0, 1, 2, 3]], "int32")],
        lambda d, c, i: _nms(d, c, i, iou_threshold=0.3)),
    "vision.all_class_non_max_suppression": (
        lambda b, s, m, i, t: op.vision.all_class_non_max_suppression(b, s, m, i, t),
        [_DETECTIONS[:1, :, 2:].copy(), _DETECTIONS[:, :, 1].reshape(1, 2, 4).copy(), np.array(1, "int64"),
         np.array(0.5, "float32"), np.array(0.25, "float32")],
        lambda b, s, m, i, t: _all_class_nms(b, s, 1, 0.5, 0.25)),
    "vision.multibox_transform_loc": (
        lambda c, l, a: op.vision.multibox_transform_loc(c, l, a, clip=True, variances=(0.1, 0.1, 0.2, 0.2)),
        [f32(2, 3, 4), f32(2, 16, lo=-1, hi=1), np.array([[[0.1, 0.1, 0.3, 0.4], [0.2, 0.5, 0.6, 0.9], [0.0, 0.0, 1.0, 1.0],
                                                           [0.5, 0.2, 0.7, 0.3]]], "float32")],
        lambda c, l, a: _multibox(c, l, a, clip=True, variances=(0.1, 0.1, 0.2, 0.2))),
    "image.grid_sample": (lambda x, g: op.image.grid_sample(x, g, method="nearest", align_corners=True),
                          [IMG, np.array([[[[-1.0, 1.0]], [[1.0, -1.0]]]] * 2, "float32")],
                          lambda x, g: np.stack([x[:, :, 6, 0], x[:, :, 0, 6]], axis=-1)[:, :, None]),
})

# Ops that are not computations (or, as dropout in TVM, are left to the frontend): never legalized.
LEFT_ALONE = {"call_tir", "call_tir_inplace", "call_tir_with_grad", "dist.call_tir_local_view", "call_dps_packed",
              "call_pure_packed", "call_builtin_with_ctx", "hint_on_device", "to_vdevice",
              "print", "assert_op", "shape_of", "shape_to_tensor", "null_value", "nn.dropout",
              # distribution plans (tests/test_distributed.py): tvmlite does not run them
              "dist.annotate_sharding", "dist.redistribute", "dist.redistribute_replica_to_shard",
              # the lowered ops and closures the VM runs itself (tests/test_ops_lowered.py)
              "memory.alloc_storage", "memory.alloc_tensor", "memory.kill_storage", "memory.kill_tensor",
              "memory.view", "memory.ensure_zero_offset", "builtin.alloc_tensor", "builtin.stop_lift_params",
              "vm.alloc_storage", "vm.alloc_tensor", "vm.kill_object", "vm.call_tir_dyn", "call_inplace_packed",
              "make_closure", "invoke_closure", "invoke_pure_closure",
              *(f"inspect.tensor_{f}" for f in ("dtype_code", "dtype_bits", "dtype_lanes", "ndim", "shape_i",
                                                 "stride_i", "byte_offset", "elem_offset")),
              }


LEFT_ALONE |= {"tensor_to_shape"}  # the VM converts it, as TVM's builtin does
LEFT_ALONE |= {"call_py_func"}  # the VM calls the registered Python function (tests/test_ops_misc.py)


def test_every_registered_op_is_covered():
    """Each op is either legalized (and has a case here) or deliberately left alone."""
    names = {d.name[len("relax."):] for d in list_ops()}
    legalized = {d.name[len("relax."):] for d in list_ops() if d.legalize is not None}
    assert legalized == names - LEFT_ALONE
    assert set(CASES) == legalized


def _close(got, want):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
        return
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_legalized_op_matches_numpy(name):
    make, inputs, ref = CASES[name]
    mod, out = legalize_and_run(make, inputs)
    assert not any(isinstance(v, rx.Call) and isinstance(v.op, rx.Op) and v.op.name == f"relax.{name}"
                   for block in mod["main"].body.blocks for v in (b.value for b in block.bindings))
    assert well_formed_errors(mod) == []
    assert_round_trip(mod)  # the generated TIR prints and parses back
    _close(out, ref(*inputs))


# ------------------------------------------------------------------ more shapes and dtypes
@pytest.mark.parametrize("make, inputs, ref", [
    (op.divide, [IA, IB], _trunc_div),
    (op.floor_divide, [A, B + 3], lambda a, b: np.floor(a / b)),
    (op.floor_mod, [A, B + 3], lambda a, b: a - np.floor(a / b) * b),
    (op.mod, [A, B + 3], np.fmod),
    (lambda x: op.add(x, relax.const(2.5, "float32")), [A], lambda x: x + np.float32(2.5)),
    (lambda x: op.subtract(relax.const(1.0, "float32"), x), [A], lambda x: 1 - x),
    (lambda x: op.multiply(x, x), [np.float64(1.5) * A.astype("float64")], np.square),
    (lambda x: op.sum(x, axis=[1], keepdims=True), [IA], lambda x: x.sum(axis=1, keepdims=True)),
    (lambda x: op.max(x, axis=[0]), [IA], lambda x: x.max(axis=0)),
    (lambda x: op.argmax(x, axis=0, keepdims=True), [IA % 3], lambda x: x.argmax(axis=0)[None]),
    (lambda x: op.split(x, [1, 3], axis=2), [X], lambda x: tuple(np.split(x, [1, 3], axis=2))),
    (lambda x: op.split(x, 3, axis=2), [X], lambda x: (x[..., :2], x[..., 2:4], x[..., 4:])),
    (lambda x, i: op.take(x, i, axis=0, mode="clip"), [A, np.array([-1, 5, 1], "int64")],
     lambda x, i: x[np.clip(i, 0, 1)]),
    (lambda x, i: op.take(x, i, axis=1, mode="wrap"), [A, np.array([-1, 4], "int64")],
     lambda x, i: x[:, i % 3]),
    (lambda x: op.concat((x, x, x), axis=None), [A], lambda x: np.concatenate([x.ravel()] * 3)),
    (op.matmul, [f32(4), f32(4, 3)], np.matmul),
    (op.matmul, [f32(3, 4), f32(4)], np.matmul),
    (lambda a, b: op.matmul(a, b, out_dtype="float32"), [f32(2, 3), f32(3, 2)], np.matmul),
    (lambda x, w: op.nn.conv2d(x, w, groups=2, padding=(1, 0), dilation=2), [IMG, W_GROUP],
     lambda x, w: _conv2d(x, w, (1, 1), (1, 0, 1, 0), (2, 2), 2)),
    (lambda x: op.nn.avg_pool2d(x, pool_size=3, strides=2, padding=1, count_include_pad=True), [IMG],
     lambda x: _pool(x, (3, 3), (2, 2), (1, 1, 1, 1), "avg", include_pad=True)),
    (lambda x: op.nn.avg_pool2d(x, pool_size=3, strides=2, padding=1), [IMG],
     lambda x: _pool(x, (3, 3), (2, 2), (1, 1, 1, 1), "avg")),
    (lambda x: op.nn.adaptive_avg_pool2d(x, output_size=1), [IMG], lambda x: x.mean(axis=(2, 3), keepdims=True)),
    (lambda x, g, b, m, v: op.nn.batch_norm(x, g, b, m, v, axis=1, momentum=0.25),
     [IMG, f32(4), f32(4), f32(4), f32(4, lo=0.5, hi=2)],
     lambda x, g, b, m, v: (
         (x - x.mean(axis=(0, 2, 3), keepdims=True)) / np.sqrt(x.var(axis=(0, 2, 3), keepdims=True) + 1e-5)
         * g[:, None, None] + b[:, None, None],
         m * 0.75 + x.mean(axis=(0, 2, 3)) * 0.25, v * 0.75 + x.var(axis=(0, 2, 3)) * 0.25)),
    (lambda x, g, b: op.nn.layer_norm(x, g, b, axes=[-1], center=False), [A, f32(3), f32(3)],
     lambda x, g, b: _layer_norm(x, g, 0, (-1,))),
    (lambda x: op.layout_transform(x, lambda i: (i // 4, i % 4), pad_value=0.0), [f32(6)],
     lambda x: np.concatenate([x, np.zeros(2, "float32")]).reshape(2, 4)),
    # index tensors of fewer dims than they index (torch's x[rows, rows]): (4,) picks from (4, 5, 6)
    (lambda x, i: op.index_tensor(x, (i, i)), [f32(4, 5, 6), np.array([2, 0, -1, 3], "int64")],
     lambda x, i: x[i, i]),
])
def test_more_cases(make, inputs, ref):
    _, out = legalize_and_run(make, inputs)
    _close(out, ref(*inputs))


SYMBOLIC_CASES = [
    (op.add, [f32(5, 3), B], {0: {0: "n"}}, np.add),
    (op.matmul, [f32(5, 4), f32(4, 3)], {0: {0: "n"}}, np.matmul),
    (lambda x: op.sum(x, axis=[0]), [f32(5, 3)], {0: {0: "n"}}, lambda x: x.sum(axis=0)),
    (lambda x: op.mean(x, axis=[0]), [f32(5, 3)], {0: {0: "n"}}, lambda x: x.mean(axis=0)),
    (lambda x: op.nn.softmax(x, axis=0), [f32(5, 3)], {0: {0: "n"}}, lambda x: _softmax(x, 0)),
    (op.permute_dims, [f32(5, 3)], {0: {0: "n", 1: "m"}}, np.transpose),
    (lambda x: op.reshape(x, (-1,)), [f32(5, 3)], {0: {0: "n"}}, lambda x: x.reshape(-1)),
    (lambda x, y: op.concat((x, y), axis=0), [f32(5, 3), f32(2, 3)], {0: {0: "n"}, 1: {0: "m"}},
     lambda x, y: np.concatenate([x, y])),
    (lambda x: op.strided_slice(x, (relax.PrimValue(0),), (relax.PrimValue(1),), (relax.PrimValue(-1),)), [f32(6, 3)],
     {0: {0: "n"}}, lambda x: x[1:-1]),
    (lambda x: op.nn.max_pool2d(x, pool_size=2, strides=2), [IMG], {0: {2: "h", 3: "w"}},
     lambda x: _pool(x, (2, 2), (2, 2), (0, 0, 0, 0), "max")),
]


@pytest.mark.parametrize("make, inputs, symbolic, ref", SYMBOLIC_CASES)
def test_symbolic_shapes(make, inputs, symbolic, ref):
    mod, out = legalize_and_run(make, inputs, symbolic)
    assert call_tirs(mod)
    _close(out, ref(*inputs))


def test_symbolic_shape_prim_func_uses_match_buffer():
    mod, _ = legalize_and_run(op.nn.relu, [f32(4, 3)], {0: {0: "n"}})
    # A lone function prints as ``main`` (the printer cannot know its name).
    assert body(mod["relu"].script()) == body('''
@T.prim_func(private=True)
def main(var_x0: T.handle, var_compute: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    x0 = T.match_buffer(var_x0, (n, T.int64(3)))
    compute = T.match_buffer(var_compute, (n, T.int64(3)))
    # with T.block("root"):
    for i0, i1 in T.grid(n, T.int64(3)):
        with T.block("compute"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(x0[v_i0, v_i1])
            T.writes(compute[v_i0, v_i1])
            compute[v_i0, v_i1] = T.max(x0[v_i0, v_i1], T.float32(0.0))
''')


def test_output_size_not_in_inputs_is_passed_as_tir_vars():
    """A size no shape dimension names (zeros of length 2n) makes n a scalar parameter (tir_vars)."""
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n], "float32"))
    length = tir.Mul(n, tir.IntImm("int64", 2))
    mod = LegalizeOps()(build(lambda x: op.zeros(relax.ShapeExpr([length]), "float32"), [x]))
    (call,) = call_tirs(mod)
    assert len(call.args) == 3 and isinstance(call.args[2], rx.ShapeExpr) and call.args[2].values[0] is n
    prim = mod[call.args[0].name_hint]
    assert [p.dtype for p in prim.params] == ["handle", "int64"]
    np.testing.assert_array_equal(run(mod, [f32(3)]), np.zeros(6, "float32"))


def test_function_names_are_deduplicated_and_shared():
    def make(x, y):
        return op.add(op.add(x, y), y)

    mod = LegalizeOps()(build(make, params_for([A, B])))
    names = sorted(gv.name_hint for gv in mod.get_global_vars())
    assert names == ["add", "main"]  # the same computation twice: one function
    mod = LegalizeOps()(build(lambda x, y: op.add(op.add(x, y), op.expand_dims(y, [0])), params_for([A, B])))
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == ["add", "add1", "expand_dims", "main"]


def test_customize_legalize_map_overrides():
    def my_relu(bb, call):
        return bb.call_te(lambda x: topi.clip(x, 0.0, 6.0), call.args[0], primfunc_name_hint="relu6")

    mod = build(op.nn.relu, params_for([A * 5]))
    out = LegalizeOps(customize_legalize_map={"relax.nn.relu": my_relu})(mod)
    assert "relu6" in out
    np.testing.assert_allclose(run(out, [A * 5]), np.clip(A * 5, 0, 6))


def test_custom_legalization_may_keep_the_call():
    mod = build(op.exp, params_for([A]))
    out = LegalizeOps(customize_legalize_map={"relax.exp": lambda bb, call: call})(mod)
    assert body(out.script()) == body(mod.script())


@pytest.mark.parametrize("make, inputs", [
    (lambda x: op.nn.dropout(x, 0.1), [A]),
    (op.shape_of, [A]),
])
def test_ops_without_legalization_stay(make, inputs):
    mod = build(make, params_for(inputs))
    assert body(LegalizeOps()(mod).script()) == body(mod.script())


def test_unknown_shapes_are_left_alone():
    x = relax.Var("x", relax.TensorStructInfo(None, "float32", 2))
    mod = build(op.exp, [x])
    assert body(LegalizeOps()(mod).script()) == body(mod.script())


def test_enable_warning_reports_ops_without_legalization():
    mod = build(lambda x: op.nn.dropout(x, 0.1), params_for([A]))
    with pytest.warns(UserWarning, match="relax.nn.dropout"):
        LegalizeOps(enable_warning=True)(mod)


def test_registered_and_in_pipelines():
    p = get_pass("LegalizeOps")
    assert isinstance(p, LegalizeOps) and p.info.opt_level == 0
    with PassContext(opt_level=0):
        out = p(build(op.exp, params_for([A])))
    assert "tir_exp" in out


def test_call_te_in_a_mutator_as_in_seed_003():
    """seed 003: ``bb.call_te(topi.nn.dense, x, w)`` inside a mutator gives ``dense`` (``T_matmul_NT``)."""
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((128, 784), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            gv = bb.emit_output(bb.call_te(topi.nn.dense, x, w))
        bb.emit_func_output(gv)
    mod = bb.get()
    text = body(mod["dense"].script())
    assert 'T.func_attr({"layout_free_buffers": [1], "tir.noalias": True})' in text
    assert 'with T.block("T_matmul_NT"):' in text
    assert "T_matmul_NT[v_i, v_j] = T_matmul_NT[v_i, v_j] + x[v_i, v_k] * w[v_j, v_k]" in text
    xa, wa = f32(1, 784), f32(128, 784)
    np.testing.assert_allclose(run(mod, [xa, wa]), xa @ wa.T, rtol=1e-4, atol=1e-4)


def test_scalar_tensors_get_one_iterator():
    """0-d computes get TVM's single iterator ``vi = T.axis.spatial(1, T.int64(0))``."""
    a, b = np.array(2.0, "float32"), np.array(3.0, "float32")
    mod, out = legalize_and_run(op.add, [a, b])
    assert out == 5.0
    assert body(mod["add"].script()) == body('''
@T.prim_func(private=True)
def main(x0: T.Buffer((), "float32"), x1: T.Buffer((), "float32"), T_add: T.Buffer((), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    with T.block("T_add"):
        vi = T.axis.spatial(1, T.int64(0))
        T.reads(x0[()], x1[()])
        T.writes(T_add[()])
        T_add[()] = x0[()] + x1[()]
''')
    assert_round_trip(mod)


def test_symbolic_results_keep_the_calls_struct_info():
    """TE may spell a size differently (n + m); the call_tir declares the op's own (m + n)."""
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n], "float32"))
    y = relax.Var("y", relax.TensorStructInfo([m], "float32"))
    before = build(lambda a, b: op.concat((a, b)), [x, y])
    out = LegalizeOps()(before)
    (call,) = call_tirs(out)
    assert call.sinfo_args[0] is before["main"].body.blocks[0].bindings[0].value.struct_info
    np.testing.assert_array_equal(run(out, [np.ones(2, "float32"), np.zeros(3, "float32")]), [1, 1, 0, 0, 0])


def test_arange_with_symbolic_end():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n], "float32"))
    mod = LegalizeOps()(build(lambda x: op.arange(relax.PrimValue(tir.IntImm("int64", 0)), relax.PrimValue(n),
                                                  relax.PrimValue(tir.IntImm("int64", 1)), "int64"), [x]))
    (call,) = call_tirs(mod)
    assert call.sinfo_args[0].shape[0] is n
    np.testing.assert_array_equal(run(mod, [np.zeros(4, "float32")]), np.arange(4))
    const = LegalizeOps()(build(lambda: op.arange(0, 5, 2, "float32"), []))
    assert not call_tirs(const)  # constant bounds: a constant
    np.testing.assert_array_equal(run(const, []), np.arange(0, 5, 2, dtype="float32"))


def test_concat_legalizes_in_tvms_order():
    # TVM's topi: the last input first, each behind ``offset <= i``, the first input the fallback.
    mod = from_source('''
from tvm.script import ir as I
from tvm.script import relax as R
@I.ir_module
class Module:
    @R.function
    def main(x1: R.Tensor((1, 2, 3), "float32"), x2: R.Tensor((1, 3, 3), "float32"), x3: R.Tensor((1, 4, 3), "float32")):
        gv = R.concat((x1, x2, x3), axis=1)
        return gv
''')
    text = LegalizeOps()(mod).script()
    assert ("T_concat[v_ax0, v_ax1, v_ax2] = T.if_then_else(T.int64(5) <= v_ax1, x3[v_ax0, v_ax1 - T.int64(5), v_ax2], "
            "T.if_then_else(T.int64(2) <= v_ax1, x2[v_ax0, v_ax1 - T.int64(2), v_ax2], x1[v_ax0, v_ax1, v_ax2]))") in text
