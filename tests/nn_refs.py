"""numpy references of the R.nn ops of tests/test_ops_nn.py (shared with test_legalize's CASES)."""
import itertools

import numpy as np


def conv_nd(x, w, strides, pad, dil, groups=1, out_dtype=None):
    """N-d grouped convolution of NC... data with an OI... kernel; ``pad`` is (begins..., ends...)."""
    d = x.ndim - 2
    out_dtype = out_dtype or x.dtype
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pad[k], pad[k + d]) for k in range(d)]).astype(out_dtype)
    w = w.astype(out_dtype)
    o, cg = w.shape[:2]
    ks = w.shape[2:]
    outs = [(xp.shape[2 + k] - dil[k] * (ks[k] - 1) - 1) // strides[k] + 1 for k in range(d)]
    out = np.zeros((x.shape[0], o, *outs), dtype=out_dtype)
    per = o // groups
    for pos in itertools.product(*(range(n) for n in outs)):
        window = tuple(slice(p * s, p * s + dl * (k - 1) + 1, dl) for p, s, dl, k in zip(pos, strides, dil, ks))
        for g in range(groups):
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + window]
            wg = w[g * per:(g + 1) * per]
            out[(slice(None), slice(g * per, (g + 1) * per)) + pos] = np.tensordot(
                patch, wg, axes=(list(range(1, d + 2)), list(range(1, d + 2))))
    return out



def conv_transpose_nd(x, w, strides, pad, out_pad, dil, groups=1, out_dtype=None):
    """N-d transposed convolution (IO... kernel) by its definition: each input element scatters
    its kernel-weighted values into the output; ``pad`` is (begins..., ends...)."""
    d = x.ndim - 2
    out_dtype = out_dtype or x.dtype
    x, w = x.astype(out_dtype), w.astype(out_dtype)
    ipg, opg = x.shape[1] // groups, w.shape[1]
    ks = w.shape[2:]
    full = [(x.shape[2 + k] - 1) * strides[k] + dil[k] * (ks[k] - 1) + 1 + out_pad[k] for k in range(d)]
    out = np.zeros((x.shape[0], opg * groups, *full), dtype=out_dtype)
    for pos in itertools.product(*(range(n) for n in x.shape[2:])):
        for kpos in itertools.product(*(range(k) for k in ks)):
            at = tuple(p * s + kp * dl for p, s, kp, dl in zip(pos, strides, kpos, dil))
            for g in range(groups):
                xs = x[(slice(None), slice(g * ipg, (g + 1) * ipg)) + pos]
                ws = w[(slice(g * ipg, (g + 1) * ipg), slice(None)) + kpos]
                out[(slice(None), slice(g * opg, (g + 1) * opg)) + at] += xs @ ws
    crop = tuple(slice(pad[k], full[k] - pad[k + d]) for k in range(d))
    return out[(slice(None), slice(None)) + crop]


def pool_nd(x, kind, k, s, pad, dil=None, ceil=False, include_pad=False):
    """Max or average pooling over the axes after N and C; ``pad`` is (begins..., ends...)."""
    d = x.ndim - 2
    dil = dil or (1,) * d
    spans = [dl * (kk - 1) + 1 for kk, dl in zip(k, dil)]
    outs = []
    for a in range(d):
        num = x.shape[2 + a] + pad[a] + pad[a + d] - spans[a] + (s[a] - 1 if ceil else 0)
        outs.append(num // s[a] + 1)
    out = np.zeros(x.shape[:2] + tuple(outs), dtype=x.dtype)
    for pos in itertools.product(*(range(n) for n in outs)):
        idx = [np.arange(p * st - pad[a], p * st - pad[a] + spans[a], dil[a])
               for a, (p, st) in enumerate(zip(pos, s))]
        inside = [i[(i >= 0) & (i < x.shape[2 + a])] for a, i in enumerate(idx)]
        win = x[(slice(None), slice(None)) + np.ix_(*inside)] if all(len(i) for i in inside) else None
        if kind == "max":
            # a window wholly in the padding reads only the padding: the lowest finite value
            lowest = (np.finfo if x.dtype.kind == "f" else np.iinfo)(x.dtype).min
            out[(slice(None), slice(None)) + pos] = win.reshape(*x.shape[:2], -1).max(axis=-1) if win is not None \
                else lowest
            continue
        if include_pad:
            cnt = np.prod([((i >= -pad[a]) & (i < x.shape[2 + a] + pad[a + d])).sum() for a, i in enumerate(idx)])
        else:
            cnt = np.prod([len(i) for i in inside])
        total = win.reshape(*x.shape[:2], -1).sum(axis=-1) if win is not None else 0
        out[(slice(None), slice(None)) + pos] = total / max(cnt, 1)
    return out


def adaptive_avg_nd(x, outs):
    """Adaptive average pooling: output ``o`` of an axis of length ``n`` averages
    ``[floor(o * n / out), ceil((o + 1) * n / out))``."""
    out = np.zeros(x.shape[:2] + tuple(outs), dtype=x.dtype)
    for pos in itertools.product(*(range(n) for n in outs)):
        window = tuple(slice(p * n // o, -(-(p + 1) * n // o)) for p, n, o in zip(pos, x.shape[2:], outs))
        out[(slice(None), slice(None)) + pos] = x[(slice(None), slice(None)) + window].mean(
            axis=tuple(range(2, x.ndim)))
    return out


def group_norm(x, g, b, groups, channel, axes, eps=1e-5):
    """Normalised over each group of channels and ``axes``; gamma and beta per channel."""
    c = channel % x.ndim
    shape = x.shape[:c] + (groups, x.shape[c] // groups) + x.shape[c + 1:]
    xg = x.reshape(shape).astype("float64")
    red = (c + 1,) + tuple(a % x.ndim + (a % x.ndim > c) for a in axes)
    out = ((xg - xg.mean(axis=red, keepdims=True)) / np.sqrt(xg.var(axis=red, keepdims=True) + eps)).reshape(x.shape)
    bshape = [1] * x.ndim
    bshape[c] = x.shape[c]
    return (out * g.reshape(bshape) + b.reshape(bshape)).astype(x.dtype)


def rms_norm(x, w, axes, eps=1e-5):
    x64 = x.astype("float64")
    return (x64 / np.sqrt((x64 * x64).mean(axis=tuple(axes), keepdims=True) + eps) * w).astype(x.dtype)


def selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return (scale * np.where(x > 0, x, alpha * (np.exp(x) - 1))).astype(x.dtype)


def softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta).astype(x.dtype)


def nll_loss(pred, targets, weights=None, reduction="mean", ignore_index=-100):
    """``-pred[n, t, ...] * w[t]`` per target (0 for ``ignore_index``), reduced."""
    w = np.ones(pred.shape[0 if pred.ndim == 1 else 1], pred.dtype) if weights is None else weights
    if pred.ndim == 1:
        picked = pred[targets]
    else:
        moved = np.moveaxis(pred, 1, -1)
        picked = np.take_along_axis(moved, np.clip(targets, 0, None)[..., None], axis=-1)[..., 0]
    kept = targets != ignore_index
    wt = np.where(kept, w[np.clip(targets, 0, None)], 0).astype(pred.dtype)
    losses = np.where(kept, -picked * wt, 0).astype(pred.dtype)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.array(losses.sum(), pred.dtype)
    return np.array(losses.sum() / wt.sum(), pred.dtype)


def pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (..., C, H, r, W, r)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def attention(q, k, v, bias=None, scale=None, causal=None):
    """softmax(Q K^T * scale + bias) V of BSNH tensors, masked after i + offset when causal."""
    qh, kh, vh = (np.moveaxis(t, 2, 1).astype("float64") for t in (q, k, v))
    p = qh @ np.swapaxes(kh, -1, -2) * (scale if scale is not None else 1 / np.sqrt(q.shape[-1]))
    if bias is not None:
        p = p + bias
    if causal is not None:
        s, skv = p.shape[-2:]
        offset = 0 if causal == "TopLeft" else abs(s - skv)
        allowed = np.arange(skv)[None, :] <= np.arange(s)[:, None] + offset
        p = np.where(allowed, p, -np.inf)
    e = np.exp(p - p.max(axis=-1, keepdims=True))
    out = (e / e.sum(axis=-1, keepdims=True)) @ vh
    return np.moveaxis(out, 1, 2).astype(q.dtype)

# ------------------------------------------------------------------ legalization cases
from tvmlite import relax  # noqa: E402

op = relax.op
rng = np.random.default_rng(16)


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype("float32")


# name: (make(*params), inputs, numpy reference), merged into test_legalize.CASES
NN_CASES = {
    "nn.conv1d": (lambda x, w: op.nn.conv1d(x, w, strides=2, padding=1, dilation=2), [f32(2, 4, 9), f32(6, 4, 3)],
                  lambda x, w: conv_nd(x, w, (2,), (1, 1), (2,))),
    "nn.conv3d": (lambda x, w: op.nn.conv3d(x, w, padding=(1, 0, 1), groups=2),
                  [f32(1, 4, 4, 5, 3), f32(6, 2, 3, 2, 2)],
                  lambda x, w: conv_nd(x, w, (1, 1, 1), (1, 0, 1, 1, 0, 1), (1, 1, 1), groups=2)),
    "nn.conv1d_transpose": (lambda x, w: op.nn.conv1d_transpose(x, w, strides=2, padding=1, output_padding=1,
                                                                dilation=2, groups=2), [f32(2, 4, 5), f32(4, 3, 3)],
                            lambda x, w: conv_transpose_nd(x, w, (2,), (1, 1), (1,), (2,), groups=2)),
    "nn.conv2d_transpose": (lambda x, w: op.nn.conv2d_transpose(x, w, strides=(2, 1), padding=(1, 0, 0, 1),
                                                                output_padding=(1, 0)),
                            [f32(1, 3, 4, 3), f32(3, 2, 3, 2)],
                            lambda x, w: conv_transpose_nd(x, w, (2, 1), (1, 0, 0, 1), (1, 0), (1, 1))),
    "nn.pad": (lambda x: op.nn.pad(x, pad_width=[1, 0, 2, 1, 0, 0], pad_value=1.5), [f32(2, 3, 4)],
               lambda x: np.pad(x, [(1, 0), (2, 1), (0, 0)], constant_values=1.5)),
    "nn.max_pool1d": (lambda x: op.nn.max_pool1d(x, pool_size=3, strides=2, padding=1, dilation=2), [f32(2, 3, 11)],
                      lambda x: pool_nd(x, "max", (3,), (2,), (1, 1), (2,))),
    "nn.avg_pool1d": (lambda x: op.nn.avg_pool1d(x, pool_size=3, strides=2, padding=(1, 0), ceil_mode=True),
                      [f32(2, 3, 10)], lambda x: pool_nd(x, "avg", (3,), (2,), (1, 0), ceil=True, include_pad=True)),
    "nn.max_pool3d": (lambda x: op.nn.max_pool3d(x, pool_size=(2, 3, 2), strides=2, ceil_mode=True),
                      [f32(1, 2, 5, 6, 4)], lambda x: pool_nd(x, "max", (2, 3, 2), (2, 2, 2), (0,) * 6, ceil=True)),
    "nn.avg_pool3d": (lambda x: op.nn.avg_pool3d(x, pool_size=2, strides=(1, 2, 2), padding=1,
                                                 count_include_pad=False),
                      [f32(1, 2, 3, 4, 5)], lambda x: pool_nd(x, "avg", (2, 2, 2), (1, 2, 2), (1,) * 6)),
    "nn.adaptive_avg_pool1d": (lambda x: op.nn.adaptive_avg_pool1d(x, output_size=3), [f32(2, 3, 10)],
                               lambda x: adaptive_avg_nd(x, (3,))),
    "nn.adaptive_avg_pool3d": (lambda x: op.nn.adaptive_avg_pool3d(x, output_size=(2, 3, 2)), [f32(1, 2, 4, 7, 6)],
                               lambda x: adaptive_avg_nd(x, (2, 3, 2))),
    "nn.group_norm": (lambda x, g, b: op.nn.group_norm(x, g, b, num_groups=2, channel_axis=1, axes=[2, 3]),
                      [f32(2, 4, 3, 5), f32(4), f32(4)], lambda x, g, b: group_norm(x, g, b, 2, 1, (2, 3))),
    "nn.instance_norm": (lambda x, g, b: op.nn.instance_norm(x, g, b, channel_axis=-1, axes=[1]),
                         [f32(2, 5, 3), f32(3), f32(3)], lambda x, g, b: group_norm(x, g, b, 3, -1, (1,))),
    "nn.rms_norm": (lambda x, w: op.nn.rms_norm(x, w, axes=[1, 2]), [f32(2, 3, 4), f32(3, 4)],
                    lambda x, w: rms_norm(x, w, (1, 2))),
    "nn.prelu": (lambda x, a: op.nn.prelu(x, a, axis=-1), [f32(2, 3, 4), f32(4)],
                 lambda x, a: np.where(x > 0, x, x * a)),
    "nn.selu": (op.nn.selu, [f32(2, 3)], lambda x: selu(x)),
    "nn.softplus": (lambda x: op.nn.softplus(x, beta=2.0, threshold=3.0), [f32(2, 3)],
                    lambda x: softplus(x, 2.0, 3.0)),
    "nn.nll_loss": (lambda p, t, w: op.nn.nll_loss(p, t, w, reduction="mean", ignore_index=1),
                    [f32(3, 5, 2), np.array([[0, 1], [4, 2], [1, 3]], "int64"), f32(5, lo=0.5, hi=2.0)],
                    lambda p, t, w: nll_loss(p, t, w, "mean", 1)),
    "nn.cross_entropy_with_logits": (op.nn.cross_entropy_with_logits, [f32(3, 4), f32(3, 4)],
                                     lambda x, y: np.array(-(x * y).sum() / 3, "float32")),
    "nn.pixel_shuffle": (lambda x: op.nn.pixel_shuffle(x, upscale_factor=2), [f32(2, 8, 3, 2)],
                         lambda x: pixel_shuffle(x, 2)),
    "nn.batch_flatten": (op.nn.batch_flatten, [f32(2, 3, 4)], lambda x: x.reshape(2, 12)),
    "nn.attention": (op.nn.attention, [f32(2, 4, 3, 8), f32(2, 5, 3, 8), f32(2, 5, 3, 6)], attention),
    "nn.attention_bias": (lambda q, k, v, b: op.nn.attention_bias(q, k, v, b, scale=0.3,
                                                                  causal_mask="BottomRight"),
                          [f32(1, 3, 2, 4), f32(1, 5, 2, 4), f32(1, 5, 2, 2), f32(2, 1, 5)],
                          lambda q, k, v, b: attention(q, k, v, b, 0.3, "BottomRight")),
}
