"""Neural-network computes (TVM's ``topi.nn``): activations, softmax, normalisations, padding,
convolution, pooling, dense and dropout."""
from __future__ import annotations

import math as _pymath
from typing import Any, Callable, Sequence

from ..ir import tir
from ..ir.arith import simplify
from ..ir.layout import Layout
from ..te import expr as E
from ..te import tensor as T
from ..te.expr import Expr, ExprLike, as_prim, wrap
from ..te.tensor import Tensor, compute
from . import broadcast, math, reduction, transform
from ..te.tensor_arith import cpp_compute
from .utils import const_int, normalize_axes
from .utils import prod as dims_prod

__all__ = ["relu", "leaky_relu", "gelu", "gelu_tanh", "silu", "softmax", "log_softmax", "layer_norm",
           "batch_norm", "pad", "conv", "conv2d", "conv2d_nchw", "conv2d_NCHWc", "pool2d", "pool_nd", "adaptive_pool",
           "dense", "matmul", "dropout", "dilate", "conv_transpose", "reflect_pad", "replicate_pad",
           "circular_pad", "instance_norm", "group_norm", "rms_norm",
           "selu", "softplus", "prelu", "nll_loss", "cross_entropy_with_logits", "pixel_shuffle",
           "batch_flatten", "attention"]


# ---------------------------------------------------------------- activations
def relu(x: Tensor) -> Tensor:
    """``max(x, 0)`` (block ``compute``)."""
    return compute(x.shape, lambda *i: T.max(x(*i), E.const(0, x.dtype)), tag="elemwise")


def leaky_relu(x: Tensor, alpha: float) -> Tensor:
    """``x`` where positive, else ``alpha * x`` (block ``compute``)."""

    def f(*i: Any) -> Expr:
        v = x(*i)
        return E.select(E.binary(tir.LT, E.const(0, x.dtype), v), v, v * E.const(alpha, x.dtype))  # TVM's order

    return compute(x.shape, f, tag="elemwise")


def gelu(x: Tensor) -> Tensor:
    """``x * (0.5 + erf(x / sqrt(2)) * 0.5)`` (Relax's legalization, op by op)."""
    erf = math.erf(broadcast.multiply(x, E.const(0.5 ** 0.5, x.dtype)))
    half = E.const(0.5, x.dtype)
    return broadcast.multiply(x, broadcast.add(half, broadcast.multiply(erf, half)))


def gelu_tanh(x: Tensor) -> Tensor:
    """``0.5 * x * (1 + tanh(sqrt(2 / pi) * x * (1 + 0.044715 * x * x)))``."""
    c = E.const(_pymath.sqrt(2.0 / _pymath.pi), x.dtype)
    inner = broadcast.multiply(broadcast.multiply(c, x),
                               broadcast.add(1, broadcast.multiply(broadcast.multiply(E.const(0.044715, x.dtype), x), x)))
    return broadcast.multiply(broadcast.multiply(E.const(0.5, x.dtype), x),
                              broadcast.add(E.const(1.0, x.dtype), math.tanh(inner)))


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)``."""
    return broadcast.multiply(x, math.sigmoid(x))



def selu(x: Tensor) -> Tensor:
    """``scale * (max(x, 0) + min(0, alpha * (exp(x) - 1)))``, op by op as TVM's legalization."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    zero = E.const(0.0, x.dtype)
    neg = broadcast.multiply(E.const(alpha, x.dtype), broadcast.subtract(math.exp(x), E.const(1.0, x.dtype)))
    return broadcast.multiply(E.const(scale, x.dtype),
                              broadcast.add(broadcast.maximum(x, zero), broadcast.minimum(zero, neg)))


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, or ``x`` where ``beta * x`` exceeds ``threshold``
    (block ``compute``)."""

    def f(*i: Any) -> Expr:
        scaled = E.const(beta, x.dtype) * x(*i)
        smooth = E.const(1.0 / beta, x.dtype) * E.log(E.const(1.0, x.dtype) + E.exp(scaled))
        return E.select(E.const(threshold, x.dtype) < scaled, x(*i), smooth)

    return compute(x.shape, f, tag="elemwise")


def prelu(x: Tensor, slope: Tensor, axis: int = 1) -> Tensor:
    """``x`` where positive, else ``x * slope[i_axis]`` (block ``compute``)."""
    axis = axis % x.ndim

    def f(*i: Any) -> Expr:
        v = x(*i)
        return E.select(E.const(0.0, x.dtype) < v, v, v * slope(i[axis]))

    return compute(x.shape, f, tag="broadcast")

# ---------------------------------------------------------------- softmax
def _reduced_shape(x: Tensor, axis: int) -> list[tir.PrimExpr]:
    """The shape without ``axis``."""
    return [d for i, d in enumerate(x.shape) if i != axis]


def _insert(idx: list, axis: int, value: Any) -> list:
    """``idx`` with ``value`` inserted at ``axis``."""
    return idx[:axis] + [value] + idx[axis:]


def _drop(idx: list, axis: int) -> list:
    """``idx`` without position ``axis``."""
    return idx[:axis] + idx[axis + 1:]


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis`` (blocks ``T_softmax_maxelem``,
    ``T_softmax_exp``, ``T_softmax_expsum``, ``T_softmax_norm``; axes ``i0, i1...``, reduce ``k``;
    the last block's attrs ``{"axis": axis}``, as TVM's)."""
    axis = axis + x.ndim if axis < 0 else axis
    reduced = _reduced_shape(x, axis)
    k1 = T.reduce_axis((0, x.shape[axis]), "k")
    k2 = T.reduce_axis((0, x.shape[axis]), "k")
    maxelem = _icompute(reduced, lambda ax: T.max(x(*_insert(ax, axis, k1)), axis=k1), "T_softmax_maxelem")
    exp = _icompute(x.shape, lambda ax: E.exp(x(*ax) - maxelem(*_drop(ax, axis))), "T_softmax_exp")
    expsum = _icompute(reduced, lambda ax: T.sum(exp(*_insert(ax, axis, k2)), axis=k2), "T_softmax_expsum")
    return _icompute(x.shape, lambda ax: exp(*ax) / expsum(*_drop(ax, axis)), "T_softmax_norm",
                     "softmax_output", {"axis": axis})


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``x - max - log(sum(exp(x - max)))`` along ``axis`` (blocks ``T_softmax_maxelem``, then
    ``compute`` twice -- the sum, the result with attrs ``{"axis": axis}`` -- as TVM's)."""
    axis = axis + x.ndim if axis < 0 else axis
    reduced = _reduced_shape(x, axis)
    k1 = T.reduce_axis((0, x.shape[axis]), "k")
    k2 = T.reduce_axis((0, x.shape[axis]), "k")
    maxelem = _icompute(reduced, lambda ax: T.max(x(*_insert(ax, axis, k1)), axis=k1), "T_softmax_maxelem")
    expsum = _icompute(reduced, lambda ax: T.sum(E.exp(x(*_insert(ax, axis, k2)) - maxelem(*ax)), axis=k2),
                       "compute")
    return _icompute(x.shape, lambda ax: x(*ax) - maxelem(*_drop(ax, axis)) - E.log(expsum(*_drop(ax, axis))),
                     "compute", "log_softmax_output", {"axis": axis})


def _icompute(shape: Sequence[Any], fcompute: Callable[[list], Any], name: str, tag: str = "",
              attrs: dict[str, Any] | None = None) -> Tensor:
    """A compute over axes named ``i0, i1...`` (as TVM's Python-level topi names them)."""
    return T.make_compute(shape, lambda *ax: fcompute(list(ax)), [f"i{i}" for i in range(len(shape))],
                          name, tag, attrs)


# ---------------------------------------------------------------- normalisation
def _two_pass_moments(data: Tensor, kept_shape: Sequence[Any], axes: Sequence[int],
                      source: Callable[[list, list], list], count: Any,
                      acc_dtype: str | None = None) -> tuple[Tensor, Tensor]:
    """The mean over ``axes`` and the sum of squared deviations from it, as TVM's layer norm takes
    them: blocks ``<data>_sum``, ``<data>_mean`` (the sum over ``count``) and ``<data>_var_sum``,
    in ``acc_dtype`` (the data cast to it). Two passes: exact where a one-pass mean of squares
    minus squared mean cancels. ``source(ax, red)`` is the data index of a kept index and reduce axes."""
    acc = acc_dtype or data.dtype

    def value(idx: list) -> Expr:
        v = data(*idx)
        return v.astype(acc) if acc != data.dtype else v

    name = data.op.name
    red = [T.reduce_axis((0, data.shape[i]), f"k{i}") for i in axes]
    total = cpp_compute(kept_shape, lambda ax: T.sum(value(source(ax, red)), axis=red), f"{name}_sum", "comm_reduce")
    mean = cpp_compute(kept_shape, lambda ax: total(*ax) / count, f"{name}_mean", "elemwise")
    dev_red = [T.reduce_axis((0, data.shape[i]), f"k{i}") for i in axes]

    def squares(ax: list) -> Any:
        dev = value(source(ax, dev_red)) - mean(*ax)
        return T.sum(dev * dev, axis=dev_red)

    return mean, cpp_compute(kept_shape, squares, f"{name}_var_sum", "comm_reduce")


def _count(data: Tensor, axes: Sequence[int], dtype: str) -> Expr:
    """The number of elements over ``axes`` as a ``dtype`` value."""
    count = E.const(1, dtype)
    for i in axes:
        count = count * E.cast(data.shape[i], dtype)
    return count


def layer_norm(data: Tensor, gamma: Tensor | None, beta: Tensor | None, axis: Sequence[int],
               epsilon: float = 1e-5) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over ``axis``, as TVM's: ``<x>_sum``,
    ``<x>_mean``, ``<x>_var_sum`` (two passes), then ``T_layer_norm``; float16 data is normalized
    in float32 and cast back before gamma and beta."""
    axes = normalize_axes(list(axis), data.ndim)
    kept_shape = [d for i, d in enumerate(data.shape) if i not in axes]
    acc = "float32" if data.dtype == "float16" else data.dtype
    count = _count(data, axes, acc)

    def source(ax: list, red: list) -> list:
        """Indices into ``data`` from the kept indices and the reduce axes."""
        idx, it_out, it_red = [], iter(ax), iter(red)
        for i in range(data.ndim):
            idx.append(next(it_red) if i in axes else next(it_out))
        return idx

    mean, var_sum = _two_pass_moments(data, kept_shape, axes, source, count, acc)

    def norm(ax: list) -> Expr:
        outer = [a for i, a in enumerate(ax) if i not in axes]
        inner = [a for i, a in enumerate(ax) if i in axes]
        x = data(*ax).astype(acc) if acc != data.dtype else data(*ax)
        out = (x - mean(*outer)) * E.rsqrt(var_sum(*outer) / count + E.const(epsilon, acc))
        if acc != data.dtype:
            out = out.astype(data.dtype)
        if gamma is not None:
            out = out * gamma(*inner)
        if beta is not None:
            out = out + beta(*inner)
        return out

    return cpp_compute(data.shape, norm, "T_layer_norm", "injective")


def _normalize(data: Tensor, axes: Sequence[int], gamma: Tensor | None, beta: Tensor | None, param_index: Any,
               epsilon: float, name: str) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` with the statistics over ``axes`` (two
    passes, as ``layer_norm``), then block ``name``; ``param_index(idx)`` indexes gamma and beta."""
    axes = sorted(a % data.ndim for a in axes)
    kept = [i for i in range(data.ndim) if i not in axes]
    kept_shape = [data.shape[i] for i in kept]
    count = _count(data, axes, data.dtype)

    def source(ax: list, red: list) -> list:
        """Indices into ``data`` from the kept indices and the reduce axes."""
        it_out, it_red = iter(ax), iter(red)
        return [next(it_red) if i in axes else next(it_out) for i in range(data.ndim)]

    mean, var_sum = _two_pass_moments(data, kept_shape, axes, source, count)

    def norm(ax: list) -> Expr:
        outer = [ax[i] for i in kept]
        out = (data(*ax) - mean(*outer)) * E.rsqrt(var_sum(*outer) / count + E.const(epsilon, data.dtype))
        if gamma is not None:
            out = out * gamma(param_index(ax))
        if beta is not None:
            out = out + beta(param_index(ax))
        return out

    return cpp_compute(data.shape, norm, name, "injective")


def instance_norm(data: Tensor, gamma: Tensor | None, beta: Tensor | None, channel_axis: int, axes: Sequence[int],
                  epsilon: float = 1e-5) -> Tensor:
    """Normalisation over ``axes`` per instance and channel, gamma and beta per channel (block
    ``T_instance_norm``)."""
    c = channel_axis % data.ndim
    return _normalize(data, axes, gamma, beta, lambda ax: ax[c], epsilon, "T_instance_norm")


def group_norm(data: Tensor, gamma: Tensor | None, beta: Tensor | None, num_groups: int, channel_axis: int,
               axes: Sequence[int], epsilon: float = 1e-5) -> Tensor:
    """Normalisation over the channels of each of ``num_groups`` groups and ``axes``: the channel
    axis reshaped to (groups, channels / groups) (``T_reshape``), ``T_group_norm``, then reshaped
    back; gamma and beta per channel."""
    c = channel_axis % data.ndim
    per_group = simplify((wrap(data.shape[c]) // num_groups).expr)
    split = [*data.shape[:c], as_prim(num_groups, data.shape[c].dtype), per_group, *data.shape[c + 1:]]
    grouped = transform.reshape(data, split)
    red = [c + 1] + [a % data.ndim + (1 if a % data.ndim > c else 0) for a in axes]
    out = _normalize(grouped, red, gamma, beta, lambda ax: wrap(ax[c]) * per_group + ax[c + 1], epsilon,
                     "T_group_norm")
    return transform.reshape(out, data.shape)


def rms_norm(data: Tensor, weight: Tensor, axes: Sequence[int], epsilon: float = 1e-5) -> Tensor:
    """``x / sqrt(mean(x * x) + eps) * weight`` over ``axes``, as TVM's: the data and the weight
    cast to float32 (``T_cast``, ``T_cast_1``; a copy for float32 data; float64 stays float64),
    ``T_multiply``, ``T_multiply_red``, ``rsqrt``, ``T_rms_norm``, then cast back (``T_cast_2``)."""
    axes = sorted(a % data.ndim for a in axes)

    def cast(t: Tensor, dtype: str) -> Tensor:
        return cpp_compute(t.shape, lambda ax: t(*ax).astype(dtype), "T_cast", "elemwise")

    # TVM computes in float32 whatever the dtype; float64 stays float64 here (not to lose digits).
    acc = "float64" if data.dtype == "float64" else "float32"
    x = cast(data, acc)
    square = broadcast.multiply(x, x)
    total = reduction.sum(square, axes)
    count = E.const(1, x.dtype)
    for i in axes:
        count = count * E.cast(data.shape[i], x.dtype)
    kept = [i for i in range(data.ndim) if i not in axes]
    inv = cpp_compute(total.shape, lambda ax: E.rsqrt(total(*ax) / count + E.const(epsilon, x.dtype)), "rsqrt",
                      "elemwise")
    w = cast(weight, acc)
    out = cpp_compute(data.shape, lambda ax: inv(*[ax[i] for i in kept]) * x(*ax) * w(*[ax[i] for i in axes]),
                      "T_rms_norm", "injective")
    return cast(out, data.dtype)


def batch_norm(data: Tensor, gamma: Tensor, beta: Tensor, moving_mean: Tensor, moving_var: Tensor,
               axis: int | None = None, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
               training: bool = False, momentum: float = 0.1) -> list[Tensor]:
    """Batch normalisation along ``axis`` (1 by default): ``[out, new_mean, new_var]``. In training the
    batch statistics normalise and update the moving ones; otherwise the moving ones normalise and
    are returned unchanged."""
    axis = 1 if axis is None else axis + data.ndim if axis < 0 else axis
    shape = [1] * data.ndim
    shape[axis] = data.shape[axis]
    if training:
        others = [i for i in range(data.ndim) if i != axis]
        count = dims_prod([data.shape[i] for i in others], data.shape[0].dtype)
        mean = broadcast.divide(reduction.sum(data, others), count)
        mean_rs = transform.reshape(mean, shape)
        # TVM's form: the deviation computed twice (T_subtract_1, T_subtract_2), then squared.
        dev = broadcast.multiply(broadcast.subtract(data, mean_rs), broadcast.subtract(data, mean_rs))
        var = broadcast.divide(reduction.sum(dev, others), count)
        var_rs = transform.reshape(var, shape)
    else:
        mean_rs = transform.reshape(moving_mean, shape)
        var_rs = transform.reshape(moving_var, shape)
    out = broadcast.divide(broadcast.subtract(data, mean_rs),
                           math.sqrt(broadcast.add(var_rs, E.const(epsilon, data.dtype))))
    if scale:
        out = broadcast.multiply(out, transform.reshape(gamma, shape))
    if center:
        out = broadcast.add(out, transform.reshape(beta, shape))
    if training:
        keep = E.const(1 - momentum, data.dtype)
        new = E.const(momentum, data.dtype)
        new_mean = broadcast.add(broadcast.multiply(keep, moving_mean), broadcast.multiply(new, mean))
        new_var = broadcast.add(broadcast.multiply(keep, moving_var), broadcast.multiply(new, var))
        return [out, new_mean, new_var]
    # Outputs are computed tensors: the unchanged statistics are copied.
    return [out, math.identity(moving_mean), math.identity(moving_var)]


# ---------------------------------------------------------------- padding and convolution
def pad(data: Tensor, pad_before: Sequence[ExprLike], pad_after: Sequence[ExprLike] | None = None,
        pad_value: ExprLike = 0.0, name: str = "PadInput", cpp_style: bool = False) -> Tensor:
    """``data`` padded with ``pad_value`` (block ``name``; axes ``i0, i1...``). ``cpp_style`` gives
    TVM's C++ pad (the one its pools use): axes ``ax0, ax1...`` and a bound only on a padded side."""
    pad_after = pad_before if pad_after is None else pad_after
    n = data.ndim
    shape = [simplify((wrap(data.shape[i]) + pad_before[i] + pad_after[i]).expr) for i in range(n)]
    value = as_prim(pad_value, data.dtype) if isinstance(pad_value, (int, float)) else as_prim(pad_value)

    def f(*idx: Any) -> Expr:
        conds, index = [], []
        for i in range(n):
            before, after = const_int(pad_before[i]) != 0, const_int(pad_after[i]) != 0
            if not before and not after:
                index.append(idx[i])
                continue
            index.append(wrap(idx[i]) - pad_before[i] if before or not cpp_style else idx[i])
            if before or not cpp_style:
                conds.append(E.binary(tir.LE, pad_before[i], idx[i]))  # TVM's operand order
            if after or not cpp_style:
                conds.append(wrap(idx[i]) < simplify((wrap(data.shape[i]) + pad_before[i]).expr))
        if conds:
            return E.if_then_else(E.all(*conds), data(*index), value)
        return data(*index)

    if cpp_style:
        return cpp_compute(shape, lambda ax: f(*ax), name, "injective,pad")
    return compute(shape, f, name=name, tag="injective,pad")


def _edge_pad(data: Tensor, pad_before: Sequence[ExprLike], pad_after: Sequence[ExprLike], name: str,
              source: Any) -> Tensor:
    """``data`` padded with values read back from inside it: ``source(i, before, n)`` maps the
    output index ``i`` along an axis of length ``n`` to the index read (block ``name``)."""
    shape = [simplify((wrap(d) + b + a).expr) for d, b, a in zip(data.shape, pad_before, pad_after)]

    def f(*idx: Any) -> Expr:
        return data(*[i if const_int(b) == 0 and const_int(a) == 0 else source(wrap(i), as_prim(b, d.dtype), d)
                      for i, b, a, d in zip(idx, pad_before, pad_after, data.shape)])

    return compute(shape, f, name=name, tag="injective,pad")


def reflect_pad(data: Tensor, pad_before: Sequence[ExprLike], pad_after: Sequence[ExprLike] | None = None,
                name: str = "ReflectPadInput") -> Tensor:
    """Padding by mirroring about the edge elements (not repeating them): ``n - 1 - |n - 1 - |j||``."""

    def source(i: Expr, b: Any, n: Any) -> Expr:
        last = wrap(n) - 1
        dist = E.select(wrap(b) <= i, i - b, wrap(b) - i)
        return last - E.select(dist <= last, last - dist, dist - last)

    return _edge_pad(data, pad_before, pad_before if pad_after is None else pad_after, name, source)


def replicate_pad(data: Tensor, pad_before: Sequence[ExprLike], pad_after: Sequence[ExprLike] | None = None,
                  name: str = "ReplicatePadInput") -> Tensor:
    """Padding by repeating the edge elements: ``max(0, min(n - 1, j))``."""

    def source(i: Expr, b: Any, n: Any) -> Expr:
        return E.binary(tir.Max, 0, E.binary(tir.Min, wrap(n) - 1, i - b))

    return _edge_pad(data, pad_before, pad_before if pad_after is None else pad_after, name, source)


def circular_pad(data: Tensor, pad_before: Sequence[ExprLike], pad_after: Sequence[ExprLike] | None = None,
                 name: str = "CircularPadInput") -> Tensor:
    """Padding by wrapping around to the other side: ``j mod n``."""
    return _edge_pad(data, pad_before, pad_before if pad_after is None else pad_after, name,
                     lambda i, b, n: E.floormod(i - b, n))

def conv(inp: Tensor, filt: Tensor, stride: Sequence[int] | int, padding: Sequence[int] | int,
         dilation: Sequence[int] | int, groups: int, data_layout: str = "NCHW", kernel_layout: str = "",
         out_dtype: str | None = None, axis_names: Sequence[str] | None = None) -> Tensor:
    """An N-d (grouped) convolution in any layout (TVM's ``topi.nn.conv``): ``pad_temp`` then
    ``conv<d>d_<layout>`` (``group_`` prefixed when ``groups > 1``), reduce axes ``rc, ry, rx``;
    ``axis_names`` name the output axes in canonical (N, C, spatial...) order."""
    dims = inp.ndim - 2
    kernel_layout = kernel_layout or ("OIHW" if dims == 2 else "OI" + "DHW"[3 - dims:])
    out_dtype = out_dtype or inp.dtype
    spatial = [i for i, c in enumerate(data_layout) if c not in "NC"]
    to_canon = [data_layout.index("N"), data_layout.index("C"), *spatial]
    k_spatial = [i for i, c in enumerate(kernel_layout) if c not in "OI"]
    k_to_canon = [kernel_layout.index("O"), kernel_layout.index("I"), *k_spatial]
    strides = [stride] * dims if isinstance(stride, int) else list(stride)
    dilations = [dilation] * dims if isinstance(dilation, int) else list(dilation)
    pads = [padding] * (2 * dims) if isinstance(padding, int) else list(padding)
    if len(pads) == dims:
        pads = pads * 2
    pad_begin, pad_end = pads[:dims], pads[dims:]
    batch, in_channel, *in_dims = [inp.shape[i] for i in to_canon]
    num_filter, _, *kernel_dims = [filt.shape[i] for i in k_to_canon]
    out_dims = [simplify(((wrap(d) - (wrap(k) - 1) * dil - 1 + pb + pe) // s + 1).expr)
                for d, k, s, dil, pb, pe in zip(in_dims, kernel_dims, strides, dilations, pad_begin, pad_end)]
    from_canon = [to_canon.index(i) for i in range(inp.ndim)]
    k_from_canon = [k_to_canon.index(i) for i in range(filt.ndim)]
    zero = [0, 0]
    temp = pad(inp, [([*zero, *pad_begin])[from_canon[i]] for i in range(inp.ndim)],
               [([*zero, *pad_end])[from_canon[i]] for i in range(inp.ndim)], name="pad_temp")
    groups_in = E.floordiv(in_channel, groups) if groups > 1 else wrap(in_channel)
    rc = T.reduce_axis((0, groups_in.expr), "rc")
    rs = [T.reduce_axis((0, k), f"r{c}") for c, k in zip("yxz", kernel_dims)]
    per_group = E.floordiv(num_filter, groups) if groups > 1 else None

    def f(*args: Any) -> Any:
        canon = [args[i] for i in to_canon]
        nn, ff, *dim_idx = canon
        chan: Any = rc if groups == 1 else E.floordiv(ff, per_group) * groups_in + rc
        data_idx = [nn, chan] + [wrap(di) * s + wrap(r) * dil for di, s, r, dil in zip(dim_idx, strides, rs, dilations)]
        kern_idx = [ff, rc, *rs]
        return T.sum(temp(*[data_idx[k] for k in from_canon]).astype(out_dtype)
                     * filt(*[kern_idx[k] for k in k_from_canon]).astype(out_dtype), axis=reduce_order)

    # The reduce axes go in the data layout's order of C and the spatial axes (TVM's: NHWC reduces
    # ry, rx, rc).
    reduce_order = [r for _, r in sorted(zip([data_layout.index("C"), *spatial], [rc, *rs]), key=lambda p: p[0])]

    out_shape = [[batch, num_filter, *out_dims][k] for k in from_canon]
    name = f"{'group_' if groups > 1 else ''}conv{dims}d_{data_layout.lower()}"
    if axis_names is not None:
        return T.make_compute(out_shape, f, [axis_names[k] for k in from_canon], name, name)
    return compute(out_shape, f, name=name, tag=name)


def conv2d(data: Tensor, kernel: Tensor, strides: Sequence[int] | int = 1, padding: Sequence[int] | int = 0,
           dilation: Sequence[int] | int = 1, groups: int = 1, data_layout: str = "NCHW",
           kernel_layout: str = "OIHW", out_dtype: str | None = None) -> Tensor:
    """2-D convolution (see ``conv``); ``padding`` is one value, (top, left) or (top, left, bottom, right)."""
    return conv(data, kernel, strides, padding, dilation, groups, data_layout, kernel_layout, out_dtype)


def conv2d_nchw(data: Tensor, kernel: Tensor, stride: Sequence[int] | int, padding: Sequence[int] | int,
                dilation: Sequence[int] | int, out_dtype: str | None = None) -> Tensor:
    """2-D convolution of NCHW data with an OIHW kernel (block ``conv2d_nchw``)."""
    return conv(data, kernel, stride, padding, dilation, 1, "NCHW", "OIHW", out_dtype)


def _split_index(full: Expr, factor: int | None,
                 parts: tuple[Any, Any, int] | None = None) -> tuple[Any, Any]:
    """(outer, inner) of index ``full`` split in blocks of ``factor`` (``full``, None when unsplit);
    ``parts`` = (outer, inner, their factor) are axes already split, used as they are when it matches."""
    if factor is None:
        return full, None
    if parts is not None and parts[2] == factor:
        return parts[0], parts[1]
    return full // factor, full % factor


def conv2d_NCHWc(data: Tensor, kernel: Tensor, stride: Sequence[int] | int, padding: Sequence[int] | int,
                 dilation: Sequence[int] | int, layout: str, out_layout: str, out_dtype: str | None = None,
                 kernel_layout: str | None = None) -> Tensor:
    """2-D convolution in packed layouts (TVM's ``topi.nn.conv2d_NCHWc``): data ``NCHW{x}c``, kernel
    ``OIHW{x}i{y}o`` (the default) or any packing of O and I, output ``NCHW{y}c``; any layout whose
    only split axes are the channels works. ``data_pad`` (when padding) then ``conv2d_NCHWc``,
    reducing over ``ic, kh, kw``."""
    dl, ol = Layout.parse(layout), Layout.parse(out_layout)
    if kernel_layout is None:
        ic_bn, oc_bn = dl.factor("C"), ol.factor("C")
        kernel_layout = "OIHW" + (f"{ic_bn}i" if ic_bn else "") + (f"{oc_bn}o" if oc_bn else "")
    kl = Layout.parse(kernel_layout)
    for lay, allowed in ((dl, "C"), (ol, "C"), (kl, "OI")):
        if any(f is not None and a.upper() not in allowed for a, f in lay.axes):
            raise ValueError(f"conv2d_NCHWc: only the channel axes may be packed, got {lay.name!r}")
    out_dtype = out_dtype or data.dtype
    (sh, sw) = (stride, stride) if isinstance(stride, int) else tuple(stride)
    (dh, dw) = (dilation, dilation) if isinstance(dilation, int) else tuple(dilation)
    pads = [padding] * 4 if isinstance(padding, int) else list(padding)
    pad_top, pad_left, pad_bottom, pad_right = pads * 2 if len(pads) == 2 else pads
    full = dict(zip(dl.primal, dl.primal_shape(data.shape)))
    kfull = dict(zip(kl.primal, kl.primal_shape(kernel.shape)))
    out_hw = [simplify(((wrap(full[a]) + pb + pe - (wrap(kfull[a]) - 1) * d - 1) // s + 1).expr)
              for a, pb, pe, d, s in (("H", pad_top, pad_bottom, dh, sh), ("W", pad_left, pad_right, dw, sw))]
    out_primal = {"N": full["N"], "C": kfull["O"], "H": out_hw[0], "W": out_hw[1]}
    out_shape = ol.packed_shape([out_primal[a] for a in ol.primal])
    before = {"H": pad_top, "W": pad_left}
    after = {"H": pad_bottom, "W": pad_right}
    if any(v != 0 for v in pads):
        data_pad = pad(data, [before.get(a, 0) for a, _ in dl.axes], [after.get(a, 0) for a, _ in dl.axes],
                       name="data_pad")
    else:
        data_pad = data
    ic = T.reduce_axis((0, full["C"]), "ic")
    kh = T.reduce_axis((0, kfull["H"]), "kh")
    kw = T.reduce_axis((0, kfull["W"]), "kw")
    oc_packed = ol.factor("C") is not None
    names = {"N": "n", "C": "oc_chunk" if oc_packed else "oc", "H": "oh", "W": "ow", "c": "oc_block"}

    def f(*ax: Any) -> Any:
        idx = {a: v for (a, _), v in zip(ol.axes, ax)}
        oc_parts = (idx["C"], idx["c"], ol.factor("C")) if oc_packed else None
        oc = wrap(idx["C"]) * ol.factor("C") + idx["c"] if oc_packed else wrap(idx["C"])  # type: ignore[operator]
        spatial = {"H": wrap(idx["H"]) * sh + wrap(kh) * dh, "W": wrap(idx["W"]) * sw + wrap(kw) * dw}
        c_out, c_in = _split_index(wrap(ic), dl.factor("C"))
        data_idx = {"N": idx["N"], "C": c_out, "c": c_in, **spatial}
        o_out, o_in = _split_index(oc, kl.factor("O"), oc_parts)
        i_out, i_in = _split_index(wrap(ic), kl.factor("I"))
        kern_idx = {"O": o_out, "o": o_in, "I": i_out, "i": i_in, "H": kh, "W": kw}
        return T.sum(data_pad(*[data_idx[a] for a, _ in dl.axes]).astype(out_dtype)
                     * kernel(*[kern_idx[a] for a, _ in kl.axes]).astype(out_dtype), axis=[ic, kh, kw])

    return T.make_compute(out_shape, f, [names[a] for a, _ in ol.axes], "conv2d_NCHWc", "conv2d_NCHWc")



def dilate(data: Tensor, strides: Sequence[int], name: str = "data_dilate") -> Tensor:
    """``data`` with ``strides[i] - 1`` zeros between neighbours along axis ``i`` (block ``name``;
    a copy when every stride is 1, as TVM's)."""
    shape = [simplify(((wrap(d) - 1) * s + 1).expr) if s != 1 else d for d, s in zip(data.shape, strides)]

    def f(*idx: Any) -> Expr:
        conds = [E.floormod(i, s) == 0 for i, s in zip(idx, strides) if s != 1]
        index = [E.floordiv(i, s) if s != 1 else i for i, s in zip(idx, strides)]
        zero = E.const(0, data.dtype)
        return E.if_then_else(E.all(*conds), data(*index), zero) if conds else data(*index)

    return compute(shape, f, name=name, tag="injective,dilate")


def conv_transpose(data: Tensor, kernel: Tensor, strides: Sequence[int], padding: Sequence[int],
                   output_padding: Sequence[int], dilation: Sequence[int], groups: int = 1,
                   out_dtype: str | None = None) -> Tensor:
    """N-d transposed convolution of NC... data with an IO... kernel (TVM's
    ``conv{1,2}d_transpose_ncw/nchw``): the data dilated by the strides (``data_dilate``) and padded
    by ``dilation * (k - 1) - padding`` (``data_pad``), the kernel dilated (``kernel_dilate``, when a
    dilation is not 1) and flipped with I and O swapped (``kernel`` for 1-D, else
    ``kernel_transform``), then a convolution (``compute`` over ``b, c, ...``, reduce ``dc, ...``)."""
    d = data.ndim - 2
    out_dtype = out_dtype or data.dtype
    spatial = "dhw"[3 - d:]
    pads = list(padding) * 2 if len(padding) == d else list(padding)
    dilated = dilate(data, [1, 1, *strides])
    if any(v != 1 for v in dilation):
        kernel = dilate(kernel, [1, 1, *dilation], name="kernel_dilate")
    ks = list(kernel.shape[2:])
    before = [simplify((wrap(k) - 1 - pads[i]).expr) for i, k in enumerate(ks)]
    after = [simplify((wrap(k) - 1 - pads[i + d] + output_padding[i]).expr) for i, k in enumerate(ks)]
    padded = pad(dilated, [0, 0, *before], [0, 0, *after], name="data_pad")
    in_c, out_per_group = data.shape[1], kernel.shape[1]
    in_per_group = simplify((wrap(in_c) // groups).expr) if groups > 1 else in_c

    def flip(o: Any, i: Any, *sp: Any) -> Expr:
        return kernel(i, o, *[wrap(k) - 1 - x for k, x in zip(ks, sp)])

    flipped = T.make_compute([out_per_group, in_c, *ks], flip, ["o", "i", *spatial],
                             "kernel" if d == 1 else "kernel_transform", "")
    out_shape = [data.shape[0], simplify((wrap(out_per_group) * groups).expr),
                 *[simplify((wrap(p.shape[2 + i]) - ks[i] + 1).expr) for i, p in enumerate([padded] * d)]]
    dc = T.reduce_axis((0, in_per_group), "dc")
    rs = [T.reduce_axis((0, k), f"d{c}") for c, k in zip(spatial, ks)]

    def f(b: Any, c: Any, *sp: Any) -> Any:
        if groups > 1:
            g_in = E.floordiv(c, out_per_group) * in_per_group + dc
            k_out: Any = E.floormod(c, out_per_group)
        else:
            g_in, k_out = dc, c
        window = [wrap(x) + r for x, r in zip(sp, rs)]
        return T.sum(padded(b, g_in, *window).astype(out_dtype) * flipped(k_out, g_in, *rs).astype(out_dtype),
                     axis=[dc, *rs])

    return T.make_compute(out_shape, f, ["b", "c", *spatial], "compute", f"conv{d}d_transpose_n{'c' + spatial}")


# ---------------------------------------------------------------- pooling
def _spatial_axes(layout: str) -> list[int]:
    """The positions of D, H and W (those present) among the axes of ``layout`` (NCHW16c too)."""
    names = [a for a, _ in Layout.parse(layout).axes]
    return [names.index(c) for c in "DHW" if c in names]


def pool2d(data: Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
           padding: Sequence[int], pool_type: str, ceil_mode: bool = False, layout: str = "NCHW",
           count_include_pad: bool = True) -> Tensor:
    """Max or average pooling over H and W (see ``pool_nd``)."""
    return pool_nd(data, kernel, stride, dilation, padding, pool_type, ceil_mode, layout, count_include_pad)


def pool_nd(data: Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
            padding: Sequence[int], pool_type: str, ceil_mode: bool = False, layout: str = "NCHW",
            count_include_pad: bool = True) -> Tensor:
    """Max or average pooling over the spatial axes of ``layout`` (D, H, W: the ones present):
    ``pad_temp``, then ``pool_max`` or ``pool_sum`` + ``pool_avg`` (reduce axes ``rv0, rv1...``);
    ``padding`` is one value per axis or the begins then the ends."""
    hw = _spatial_axes(layout)
    d = len(hw)
    pads = list(padding) if len(padding) == 2 * d else list(padding) * 2
    sizes = [data.shape[a] for a in hw]
    begin = pads[:d]
    end = pads[d:]
    out_sizes = []
    extra = []
    for i in range(d):
        span = (kernel[i] - 1) * dilation[i] + 1
        num = wrap(sizes[i]) + begin[i] + end[i] - span
        if ceil_mode:
            num = num + stride[i] - 1
        out = simplify((num // stride[i] + 1).expr)
        out_sizes.append(out)
        # Ceil mode reads past the padded input: TVM pads the end by ``stride - 1`` more.
        extra.append(stride[i] - 1 if ceil_mode else 0)
    pad_value = E.min_value(data.dtype) if pool_type == "max" else E.const(0, data.dtype)
    before = [0] * data.ndim
    after = [0] * data.ndim
    for i, a in enumerate(hw):
        before[a] = begin[i]
        after[a] = end[i] + extra[i]
    padded = any(const_int(v) != 0 for v in before + after)
    temp = pad(data, before, after, pad_value, name="pad_temp", cpp_style=True) if padded else data
    rv = [T.reduce_axis((0, kernel[i]), f"rv{i}") for i in range(d)]
    shape = list(data.shape)
    for i, a in enumerate(hw):
        shape[a] = out_sizes[i]

    def window(ax: list) -> list:
        idx = list(ax)
        for i, a in enumerate(hw):
            idx[a] = wrap(ax[a]) * stride[i] + wrap(rv[i]) * dilation[i]
        return idx

    if pool_type == "max":
        return cpp_compute(shape, lambda ax: T.max(temp(*window(ax)), axis=rv), "pool_max", "pool_max",
                           {"schedule_rule": "meta_schedule.pool_max"})
    total = cpp_compute(shape, lambda ax: T.sum(temp(*window(ax)), axis=rv), "pool_sum", "pool_sum")

    def avg(ax: list) -> Expr:
        count: Expr = E.const(1, "int32")
        for i, a in enumerate(hw):
            start = wrap(ax[a]) * stride[i] - begin[i]
            stop = start + (kernel[i] - 1) * dilation[i] + 1
            lo, hi = (-begin[i], wrap(sizes[i]) + end[i]) if count_include_pad else (0, sizes[i])
            start_c = E.binary(tir.Max, start, lo)
            stop_c = E.binary(tir.Min, stop, hi)
            n_i = E.floordiv(stop_c - start_c - 1, dilation[i]) + 1
            count = E.cast(n_i, "int32") * count if const_int(count) != 1 else E.cast(n_i, "int32")
        return total(*ax) / E.cast(E.binary(tir.Max, count, 1), data.dtype)

    return cpp_compute(shape, avg, "pool_avg", "elemwise", {"schedule_rule": "meta_schedule.pool_avg"})


def adaptive_pool(data: Tensor, output_size: Sequence[ExprLike], pool_type: str = "avg",
                  layout: str = "NCHW") -> Tensor:
    """Adaptive pooling to ``output_size`` over the spatial axes of ``layout`` (D, H, W: the ones
    present): windows ``[floor(o*in/out), ceil((o+1)*in/out))`` (``adaptive_pool_sum`` +
    ``adaptive_pool_avg``, or ``adaptive_pool_max``)."""
    hw = _spatial_axes(layout)
    sizes = [data.shape[a] for a in hw]
    outs = [as_prim(o, sizes[i].dtype) if isinstance(o, int) else as_prim(o) for i, o in enumerate(output_size)]
    windows, exact = [], []
    for n_in, n_out in zip(sizes, outs):
        ci, co = const_int(n_in), const_int(n_out)
        if ci is not None and co is not None and ci % co == 0:
            windows.append(ci // co)
            exact.append(True)
        elif ci is not None and co is not None:
            windows.append(max(-(-(o + 1) * ci // co) - (o * ci // co) for o in range(co)))
            exact.append(False)
        else:
            windows.append((E.ceildiv(n_in, n_out) + 1).expr)
            exact.append(False)
    rv = [T.reduce_axis((0, w), f"rv{i}") for i, w in enumerate(windows)]
    shape = list(data.shape)
    for i, a in enumerate(hw):
        shape[a] = outs[i]

    def bounds(ax: list, i: int) -> tuple[Expr, Expr]:
        o = wrap(ax[hw[i]])
        start = E.floordiv(o * sizes[i], outs[i])
        stop = E.ceildiv((o + 1) * sizes[i], outs[i])
        return start, stop

    def read(ax: list) -> tuple[Expr, Any]:
        idx = list(ax)
        conds = []
        for i, a in enumerate(hw):
            if exact[i]:
                idx[a] = wrap(ax[a]) * windows[i] + rv[i]
            else:
                start, stop = bounds(ax, i)
                idx[a] = start + rv[i]
                conds.append(wrap(rv[i]) < stop - start)
        return data(*idx), (E.all(*conds) if conds else None)

    if pool_type == "max":
        def fmax(ax: list) -> Any:
            v, cond = read(ax)
            return T.max(v, axis=rv, where=cond)

        return cpp_compute(shape, fmax, "adaptive_pool_max", "adaptive_pool_max",
                           {"schedule_rule": "meta_schedule.adaptive_pool_max"})

    def fsum(ax: list) -> Any:
        v, cond = read(ax)
        return T.sum(v, axis=rv, where=cond)

    total = cpp_compute(shape, fsum, "adaptive_pool_sum", "adaptive_pool_sum")

    if all(exact) and all(w == 1 for w in windows):
        # Every window is one element: TVM's adaptive_pool_avg is then a copy of the sum.
        return cpp_compute(shape, lambda ax: total(*ax), "adaptive_pool_avg", "elemwise",
                           {"schedule_rule": "meta_schedule.adaptive_pool_avg"})

    def avg(ax: list) -> Expr:
        count: Expr = E.const(1, data.dtype)
        for i in range(len(hw)):
            if exact[i]:
                count = count * E.const(windows[i], data.dtype)
            else:
                start, stop = bounds(ax, i)
                count = count * E.cast(stop - start, data.dtype)
        return total(*ax) / count

    return cpp_compute(shape, avg, "adaptive_pool_avg", "elemwise",
                       {"schedule_rule": "meta_schedule.adaptive_pool_avg"})


# ---------------------------------------------------------------- dense and matmul
def matmul(tensor_a: Tensor, tensor_b: Tensor, bias: Tensor | None = None, out_dtype: str | None = None,
           transpose_a: bool = False, transpose_b: bool = False) -> Tensor:
    """2-D ``a @ b`` with optional transposes (TVM's ``topi.nn.matmul``): block ``T_matmul_NN``,
    ``_NT``, ``_TN`` or ``_TT`` over ``i, j`` and reduce axis ``k``; the weight is layout-free."""
    out_dtype = out_dtype or tensor_a.dtype
    batch = tensor_a.shape[1] if transpose_a else tensor_a.shape[0]
    in_dim = tensor_a.shape[0] if transpose_a else tensor_a.shape[1]
    out_dim = tensor_b.shape[0] if transpose_b else tensor_b.shape[1]
    k = T.reduce_axis((0, in_dim), "k")

    def f(i: Any, j: Any) -> Any:
        a = tensor_a[k, i] if transpose_a else tensor_a[i, k]
        b = tensor_b[j, k] if transpose_b else tensor_b[k, j]
        return T.sum(a.astype(out_dtype) * b.astype(out_dtype), axis=k)

    name = f"T_matmul_{'T' if transpose_a else 'N'}{'T' if transpose_b else 'N'}"
    tag = "dense" if (transpose_a, transpose_b) == (False, True) else "matmul"
    mat = compute((batch, out_dim), f, name=name, tag=tag, attrs={"layout_free_placeholders": (tensor_b,)})
    if bias is not None:
        mat = compute((batch, out_dim), lambda i, j: mat[i, j] + bias[j].astype(out_dtype), tag="broadcast")
    return mat


def dense(data: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype: str | None = None) -> Tensor:
    """``data @ weight.T`` (+ bias): block ``T_matmul_NT``. Data with more than two dimensions
    contracts its last one (axes ``i0, i1...``)."""
    if data.ndim == 2:
        return matmul(data, weight, bias, out_dtype, False, True)
    out_dtype = out_dtype or data.dtype
    k = T.reduce_axis((0, data.shape[-1]), "k")
    shape = [*data.shape[:-1], weight.shape[0]]

    def f(*idx: Any) -> Any:
        return T.sum(data(*idx[:-1], k).astype(out_dtype) * weight(idx[-1], k).astype(out_dtype), axis=k)

    out = compute(shape, f, name="T_matmul_NT", tag="dense", attrs={"layout_free_placeholders": (weight,)})
    return broadcast.add(out, bias) if bias is not None else out


def dropout(x: Tensor, rate: float = 0.5) -> Tensor:
    """Dropout at inference: the identity (block ``compute``)."""
    return math.identity(x)


# ---------------------------------------------------------------- losses and rearrangements
def nll_loss(predictions: Tensor, targets: Tensor, weights: Tensor | None, reduction: str = "mean",
             ignore_index: int = -100) -> Tensor:
    """Negative log likelihood of the target classes: ``-pred[n, t, ...] * w[t]`` per target (block
    ``nll_loss``, 0 where the target is ``ignore_index``), then its sum (``nll_loss_red``) or that
    sum divided by the sum of the targets' weights (``T_divide``), as TVM's."""
    dtype = predictions.dtype
    if weights is None:
        # TVM's: a weight of one per class (block ``T_full``), then the weighted computation.
        classes = predictions.shape[0] if predictions.ndim == 1 else predictions.shape[1]
        weights = transform.full([classes], dtype, 1.0)

    def weight(t: Any) -> Expr:
        return weights(t)

    def kept(t: Any) -> Expr:
        return t != E.const(ignore_index, targets.dtype)

    def loss(*i: Any) -> Expr:
        t = targets(*i)
        index = [t] if predictions.ndim == 1 else [i[0], t, *i[1:]]
        return E.select(kept(t), (E.const(0.0, dtype) - predictions(*index)) * weight(t), E.const(0.0, dtype))

    losses = cpp_compute(targets.shape, lambda ax: loss(*ax), "nll_loss", "elemwise")
    if reduction == "none":
        return losses
    total = reduction_sum_all(losses)
    if reduction == "sum":
        return total
    weights_used = cpp_compute(targets.shape, lambda ax: E.select(kept(targets(*ax)), weight(targets(*ax)),
                                                                  E.const(0.0, dtype)), "nll_loss", "elemwise")
    return broadcast.divide(total, reduction_sum_all(weights_used))


def reduction_sum_all(x: Tensor) -> Tensor:
    """The sum of every element of ``x`` (a rank-0 tensor; ``x`` itself when it is one)."""
    return reduction.sum(x, list(range(x.ndim))) if x.ndim else x


def cross_entropy_with_logits(predictions: Tensor, labels: Tensor) -> Tensor:
    """``-sum(predictions * labels)``, divided by the batch size for 2-D inputs, op by op as TVM's."""
    total = broadcast.multiply(reduction_sum_all(broadcast.multiply(predictions, labels)),
                               E.const(-1, predictions.dtype))
    if predictions.ndim == 1:
        return total
    return broadcast.divide(total, E.cast(predictions.shape[0], predictions.dtype))


def pixel_shuffle(data: Tensor, upscale_factor: int) -> Tensor:
    """Channels moved into space: ``(..., C * r * r, H, W) -> (..., C, H * r, W * r)``, output
    ``[c, h, w]`` reading channel ``c * r * r + (h % r) * r + w % r`` at ``(h // r, w // r)``
    (block ``pixel_shuffle``)."""
    r = upscale_factor
    *lead, c, h, w = data.shape
    shape = [*lead, simplify((wrap(c) // (r * r)).expr), simplify((wrap(h) * r).expr), simplify((wrap(w) * r).expr)]

    def f(*i: Any) -> Expr:
        *b, cc, hh, ww = i
        channel = wrap(cc) * (r * r) + E.floormod(hh, r) * r + E.floormod(ww, r)
        return data(*b, channel, E.floordiv(hh, r), E.floordiv(ww, r))

    return compute(shape, f, name="pixel_shuffle", tag="injective")


def batch_flatten(data: Tensor) -> Tensor:
    """``(N, d1, d2...) -> (N, d1 * d2 * ...)`` (a reshape, block ``T_reshape``)."""
    return transform.reshape(data, [data.shape[0], dims_prod(list(data.shape[1:]), data.shape[0].dtype)])


# ---------------------------------------------------------------- attention
def _batch_matmul(x: Tensor, y: Tensor, transpose_y: bool) -> Tensor:
    """``x @ y`` (or ``x @ y^T``) of 3-D tensors (block ``T_batch_matmul_NT`` / ``_NN``)."""
    k = T.reduce_axis((0, x.shape[2]), "k")
    out_dim = y.shape[1] if transpose_y else y.shape[2]

    def f(b: Any, i: Any, j: Any) -> Any:
        return T.sum(x[b, i, k] * (y[b, j, k] if transpose_y else y[b, k, j]), axis=k)

    name = f"T_batch_matmul_{'NT' if transpose_y else 'NN'}"
    return compute((x.shape[0], x.shape[1], out_dim), f, name=name, tag="batch_matmul",
                   attrs={"layout_free_placeholders": (y,)})


def attention(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None = None, scale: Any = None,
              causal_mask: str | None = None) -> Tensor:
    """``softmax(Q K^T * scale + bias) V`` of BSNH tensors, op by op as TVM's legalization: the
    heads moved before the sequence and merged with the batch, ``T_batch_matmul_NT``, the scale
    (``1 / sqrt(head_dim)`` by default), the bias, a softmax (under a causal mask: the positions
    after ``i + offset`` excluded, offset 0 for ``TopLeft``, ``|S - S_kv|`` for ``BottomRight``),
    ``T_batch_matmul_NN`` and back to BSNH."""
    batch, seq, heads, head_dim = q.shape
    seq_kv, head_dim_v = v.shape[1], v.shape[3]
    bs = simplify((wrap(batch) * heads).expr)

    def merged(x: Tensor, length: Any, dim: Any) -> Tensor:
        return transform.reshape(transform.transpose(x, [0, 2, 1, 3]), [bs, length, dim])

    qm, km, vm = merged(q, seq, head_dim), merged(k, seq_kv, head_dim), merged(v, seq_kv, head_dim_v)
    p = _batch_matmul(qm, km, True)
    if scale is not None:
        p = broadcast.multiply(p, E.const(float(scale), p.dtype))
    else:
        p = broadcast.divide(p, E.sqrt(E.cast(head_dim, p.dtype)))
    if bias is not None:
        p = transform.reshape(broadcast.add(transform.reshape(p, [batch, heads, seq, seq_kv]), bias), [bs, seq, seq_kv])
    if causal_mask is None:
        s = softmax(p, 2)
    else:
        offset: Any = 0 if causal_mask == "TopLeft" else E.abs(wrap(seq) - seq_kv)

        def lower(x: Tensor) -> Tensor:
            """``x`` with the positions after ``i + offset`` zeroed (block ``trilu``)."""
            return compute(x.shape, lambda b, i, j: E.select(wrap(j) <= wrap(i) + offset, x[b, i, j],
                                                              E.const(0, x.dtype)), name="trilu", tag="elemwise")

        masked = lower(p)
        top = reduction.max(masked, [2], True)
        exp = lower(math.exp(broadcast.subtract(masked, top)))
        s = broadcast.divide(exp, reduction.sum(exp, [2], True))
    out = transform.reshape(_batch_matmul(s, vm, False), [batch, heads, seq, head_dim_v])
    return transform.transpose(out, [0, 2, 1, 3])
