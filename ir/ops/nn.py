"""Neural-network ops (``R.nn.*``): activations, softmax, normalisations, conv2d, pooling, dropout."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import relax as rx
from .. import tir
from ..arith import as_const_int, can_prove_not_equal, format_expr, format_shape, int64, simplify
from ..layout import Layout, LayoutError
from ..op import AttrField, OpError, OpPattern, register_op
from ._common import (binary_dtype, normalize_axes, normalize_axis, op_name, register_unary,
                      require_float, tensor_arg, tensor_like, to_bool, to_dtype, to_float, to_int,
                      to_int_tuple, to_layout, to_n_tuple, to_padding, to_str)

# ---------------------------------------------------------------- activations
register_unary("nn.relu", inputs=("data",))
for _name in ("nn.gelu", "nn.gelu_tanh", "nn.silu"):
    register_unary(_name, require="float", inputs=("data",))
register_unary("nn.leakyrelu", require="float", inputs=("data",),
               attrs=(AttrField("alpha", 0.01, to_float),))


def _softmax(name: str) -> None:
    """Register ``relax.nn.<name>(data, axis=-1)`` on float tensors."""

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        require_float(call, x, 0)
        if x.ndim >= 0:
            normalize_axis(call, call.attrs["axis"], x.ndim)
        return x

    infer.__doc__ = f"Struct info of R.nn.{name}: the input's."
    register_op(f"relax.nn.{name}", inputs=("data",), attrs=(AttrField("axis", -1, to_int),),
                pattern=OpPattern.OPAQUE)(infer)


_softmax("softmax")
_softmax("log_softmax")


# ---------------------------------------------------------------- normalisation
def _check_param(call: rx.Call, i: int, what: str, expected: Sequence[tir.PrimExpr] | None,
                 dtype: str) -> rx.TensorStructInfo:
    """A scale/offset/statistics input: its shape must be ``expected`` and its dtype the data's."""
    p = tensor_arg(call, i)
    binary_dtype(call, dtype, p.dtype, i)
    if expected is None:
        return p
    if p.ndim >= 0 and p.ndim != len(expected):
        raise OpError(f"{op_name(call)}: {what} must have shape {format_shape(expected)}, got "
                      f"{p.ndim} dimension{'s' if p.ndim != 1 else ''}", i)
    if p.shape is not None and any(can_prove_not_equal(a, b) for a, b in zip(p.shape, expected)):
        raise OpError(f"{op_name(call)}: {what} must have shape {format_shape(expected)}, got "
                      f"{format_shape(p.shape)}", i)
    return p


@register_op("relax.nn.layer_norm", inputs=("data", "gamma", "beta"),
             attrs=(AttrField("axes", convert=to_int_tuple), AttrField("epsilon", 1e-5, to_float),
                    AttrField("center", True, to_bool), AttrField("scale", True, to_bool)),
             pattern=OpPattern.OPAQUE)
def _layer_norm(call: rx.Call) -> rx.StructInfo:
    """The data's struct info; gamma and beta have the shape of the normalised axes."""
    x = tensor_arg(call, 0)
    expected = None
    if x.ndim >= 0:
        axes = normalize_axes(call, call.attrs["axes"], x.ndim, "axes")
        if x.shape is not None:
            expected = [x.shape[a] for a in axes]
    for i, what in ((1, "gamma"), (2, "beta")):
        _check_param(call, i, what, expected, x.dtype)
    return x


@register_op("relax.nn.batch_norm", inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
             attrs=(AttrField("axis", convert=to_int), AttrField("epsilon", 1e-5, to_float),
                    AttrField("center", True, to_bool), AttrField("scale", True, to_bool),
                    AttrField("momentum", 0.1, to_float), AttrField("training", True, to_bool)),
             pattern=OpPattern.OPAQUE)
def _batch_norm(call: rx.Call) -> rx.StructInfo:
    """A tuple (normalised data, new moving mean, new moving variance)."""
    x = tensor_arg(call, 0)
    expected = None
    if x.ndim >= 0:
        axis = normalize_axis(call, call.attrs["axis"], x.ndim)
        expected = [x.shape[axis]] if x.shape is not None else None
    params = [_check_param(call, i, what, expected, x.dtype)
              for i, what in enumerate(("gamma", "beta", "moving_mean", "moving_var"), 1)]
    return rx.TupleStructInfo((x, params[2], params[3]))


@register_op("relax.nn.dropout", inputs=("data",), attrs=(AttrField("rate", 0.5, to_float),),
             pattern=OpPattern.OPAQUE)
def _dropout(call: rx.Call) -> rx.StructInfo:
    """A tuple (output, mask), both shaped like the data."""
    x = tensor_arg(call, 0)
    return rx.TupleStructInfo((x, x))


# ---------------------------------------------------------------- layouts
def _to_canonical(shape: Sequence[tir.PrimExpr], layout: str, canonical: str) -> list[tir.PrimExpr]:
    """The dims of a tensor in ``layout`` reordered to ``canonical`` (NHWC -> NCHW)."""
    return [shape[layout.index(c)] for c in canonical]


def _from_canonical(dims: Sequence[tir.PrimExpr], layout: str, canonical: str) -> list[tir.PrimExpr]:
    """Dims in ``canonical`` order reordered to ``layout``."""
    return [dims[canonical.index(c)] for c in layout]


def _check_4d(call: rx.Call, t: rx.TensorStructInfo, i: int, layout: str) -> None:
    """OpError unless ``t`` is 4-D (or of unknown rank)."""
    if t.ndim not in (-1, 4):
        raise OpError(f"{op_name(call)}: expected a 4-D tensor ({layout}), got {t.ndim}-D", i)


def _window_out(call: rx.Call, size: tir.PrimExpr, pad: int, kernel: tir.PrimExpr, stride: int,
                dilation: int, ceil_mode: bool = False) -> tir.PrimExpr:
    """Output length of a sliding window: ``(size + pad - dilation*(kernel-1) - 1) // stride + 1``;
    OpError when a known window does not fit the padded input (the output would be empty)."""
    span = simplify(tir.Add(tir.Mul(int64(dilation), tir.Sub(kernel, int64(1))), int64(1)))
    num = tir.Sub(tir.Add(size, int64(pad)), span)
    if ceil_mode:
        num = tir.Add(num, int64(stride - 1))
    out = simplify(tir.Add(tir.FloorDiv(num, int64(stride)), int64(1)))
    known = as_const_int(out)
    if known is not None and known < 1:
        raise OpError(f"{op_name(call)}: the window spans {format_expr(span)} elements (kernel "
                      f"{format_expr(kernel)}, dilation {dilation}) but the padded input has only "
                      f"{format_expr(simplify(tir.Add(size, int64(pad))))}", 0)
    return out


# ---------------------------------------------------------------- packed layouts (NCHW8c, OIHW8i8o)
def _to_packed_layout(canonical: str, optional: bool = False) -> Callable[[Any], str | None]:
    """A converter accepting ``canonical``'s permutations, optionally with packed sub-axes (NCHW8c)."""

    def convert(value: Any) -> str | None:
        if value is None and optional:
            return None
        text = to_str(value)
        try:
            layout = Layout.parse(text)
        except LayoutError as err:
            raise OpError(f"unsupported {err}") from None
        if sorted(layout.primal) != sorted(canonical):
            raise OpError(f"unsupported layout {text!r} (expected a permutation of {canonical!r}, "
                          f"optionally with packed sub-axes such as {canonical}8{canonical[1].lower()})")
        return text

    convert.__doc__ = f"A permutation of {canonical}, possibly packed."
    return convert


def _check_rank(call: rx.Call, t: rx.TensorStructInfo, i: int, layout: str) -> None:
    """OpError unless ``t`` has as many dimensions as ``layout`` (or an unknown rank)."""
    ndim = Layout.parse(layout).ndim
    if t.ndim not in (-1, ndim):
        raise OpError(f"{op_name(call)}: expected a {ndim}-D tensor ({layout}), got {t.ndim}-D", i)


def _packed_to_canonical(shape: Sequence[tir.PrimExpr], layout: str, canonical: str) -> list[tir.PrimExpr]:
    """The full (unpacked) dims of a tensor in ``layout``, in ``canonical`` order."""
    lay = Layout.parse(layout)
    return _to_canonical(lay.primal_shape(shape), lay.primal, canonical)


def _canonical_to_packed(call: rx.Call, dims: Sequence[tir.PrimExpr], layout: str,
                         canonical: str) -> list[tir.PrimExpr]:
    """Dims in ``canonical`` order as the shape in ``layout``; OpError when a split does not divide."""
    lay = Layout.parse(layout)
    primal = _from_canonical(dims, lay.primal, canonical)
    for a, d in zip(lay.primal, primal):
        f, n = lay.factor(a), as_const_int(d)
        if f is not None and n is not None and n % f:
            raise OpError(f"{op_name(call)}: {n} channels of axis {a} cannot be packed into blocks of {f} "
                          f"({layout})", "out_layout")
    return lay.packed_shape(primal)


# ---------------------------------------------------------------- conv2d
@register_op("relax.nn.conv2d", inputs=("data", "weight"),
             attrs=(AttrField("strides", (1, 1), to_n_tuple(2)),
                    AttrField("padding", (0, 0, 0, 0), to_padding(2)),
                    AttrField("dilation", (1, 1), to_n_tuple(2)), AttrField("groups", 1, to_int),
                    AttrField("data_layout", "NCHW", _to_packed_layout("NCHW")),
                    AttrField("kernel_layout", "OIHW", _to_packed_layout("OIHW")),
                    AttrField("out_layout", None, _to_packed_layout("NCHW", optional=True), fallback="data_layout"),
                    AttrField("out_dtype", "void", to_dtype)),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _conv2d(call: rx.Call) -> rx.StructInfo:
    """2-D convolution: ``(N, C, H, W) * (O, C/groups, KH, KW) -> (N, O, H', W')`` in the given layouts."""
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    a = call.attrs
    out_dtype = a["out_dtype"] if a["out_dtype"] != "void" else binary_dtype(call, data.dtype, weight.dtype)
    out_layout = a["out_layout"] or a["data_layout"]
    _check_rank(call, data, 0, a["data_layout"])
    _check_rank(call, weight, 1, a["kernel_layout"])
    groups = a["groups"]
    if groups <= 0:
        raise OpError(f"{op_name(call)}: groups must be positive, got {groups}", "groups")
    if data.shape is None or weight.shape is None:
        return tensor_like(data, None, out_dtype, Layout.parse(out_layout).ndim)
    n, c, h, w = _packed_to_canonical(data.shape, a["data_layout"], "NCHW")
    o, i, kh, kw = _packed_to_canonical(weight.shape, a["kernel_layout"], "OIHW")
    if can_prove_not_equal(c, simplify(tir.Mul(i, int64(groups)))):
        raise OpError(f"{op_name(call)}: the data has {format_expr(c)} input channels but the weight "
                      f"expects {format_expr(i)} x groups {groups}", 1)
    o_c = as_const_int(o)
    if o_c is not None and o_c % groups:
        raise OpError(f"{op_name(call)}: {o_c} output channels are not divisible by groups {groups}", 1)
    (sh, sw), (dh, dw), pad = a["strides"], a["dilation"], a["padding"]
    out_h = _window_out(call, h, pad[0] + pad[2], kh, sh, dh)
    out_w = _window_out(call, w, pad[1] + pad[3], kw, sw, dw)
    return tensor_like(data, _canonical_to_packed(call, [n, o, out_h, out_w], out_layout, "NCHW"), out_dtype)


# ---------------------------------------------------------------- pooling
def _pool2d(name: str, count_include_pad: bool) -> None:
    """Register ``relax.nn.<name>`` (max/avg pooling over H and W)."""

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        a = call.attrs
        _check_4d(call, x, 0, a["layout"])
        if x.shape is None:
            return tensor_like(x, None, ndim=4)
        n, c, h, w = _to_canonical(x.shape, a["layout"], "NCHW")
        (kh, kw), (sh, sw), (dh, dw), pad = a["pool_size"], a["strides"], a["dilation"], a["padding"]
        out_h = _window_out(call, h, pad[0] + pad[2], int64(kh), sh, dh, a["ceil_mode"])
        out_w = _window_out(call, w, pad[1] + pad[3], int64(kw), sw, dw, a["ceil_mode"])
        return tensor_like(x, _from_canonical([n, c, out_h, out_w], a["out_layout"] or a["layout"], "NCHW"))

    infer.__doc__ = f"Struct info of R.nn.{name}: the pooled shape."
    register_op(f"relax.nn.{name}", inputs=("data",),
                attrs=(AttrField("pool_size", (1, 1), to_n_tuple(2)), AttrField("strides", (1, 1), to_n_tuple(2)),
                       AttrField("dilation", (1, 1), to_n_tuple(2)),
                       AttrField("padding", (0, 0, 0, 0), to_padding(2)),
                       AttrField("ceil_mode", False, to_bool),
                       AttrField("count_include_pad", count_include_pad, to_bool),
                       AttrField("layout", "NCHW", to_layout("NCHW")),
                       AttrField("out_layout", None, to_layout("NCHW", optional=True), fallback="layout")),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE)(infer)


_pool2d("max_pool2d", False)
_pool2d("avg_pool2d", False)


def _to_output_size(value: object) -> tuple[int, int] | None:
    """None (keep the input size), one int or two ints."""
    return None if value is None else to_n_tuple(2)(value)  # type: ignore[return-value]


@register_op("relax.nn.adaptive_avg_pool2d", inputs=("data",),
             attrs=(AttrField("output_size", None, _to_output_size),
                    AttrField("layout", "NCHW", to_layout("NCHW")),
                    AttrField("out_layout", None, to_layout("NCHW", optional=True), fallback="layout")),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _adaptive_avg_pool2d(call: rx.Call) -> rx.StructInfo:
    """H and W become ``output_size`` (unchanged when it is None)."""
    x = tensor_arg(call, 0)
    a = call.attrs
    _check_4d(call, x, 0, a["layout"])
    if x.shape is None:
        return tensor_like(x, None, ndim=4)
    n, c, h, w = _to_canonical(x.shape, a["layout"], "NCHW")
    if a["output_size"] is not None:
        h, w = (int64(v) for v in a["output_size"])
    return tensor_like(x, _from_canonical([n, c, h, w], a["out_layout"] or a["layout"], "NCHW"))
