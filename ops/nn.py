"""Neural-network ops (``R.nn.*``): activations, softmax, normalisations, conv2d, pooling, dropout.

Each is declared with its legalization. Convolution and pooling are legalized when the output
layout is the input's (as TVM's topi requires), or, for convolution, when the channels are packed
(NCHW8c / OIHW8i8o, through ``topi.nn.conv2d_NCHWc``); dropout has none (a frontend removes it for
inference, as in TVM)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import te, topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import (as_const_int, can_prove_equal, can_prove_not_equal, format_expr, format_shape, int64,
                        simplify)
from ..ir.block_builder import BlockBuilder
from ..ir.layout import Layout, LayoutError
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ..ir.struct_info import sinfo_of
from ._common import (binary_dtype, normalize_axes, normalize_axis, op_name, register_unary,
                      require_float, tensor_arg, tensor_like, to_bool, to_dtype, to_float, to_int,
                      to_int_tuple, to_n_tuple, to_padding, to_str)
from .legalization import (Check, arg_text, call_te_checked, call_topi, dim_text, register_legalize,
                           require_equal, shape_text, site_text)


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


def conv_operands(call: rx.Call) -> tuple[rx.TensorStructInfo, rx.TensorStructInfo, Any, str, str]:
    """A convolution's data and weight, attributes, result dtype and result layout, after the
    checks every convolution makes (ranks of its layouts, positive groups)."""
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    a = call.attrs
    out_dtype = a["out_dtype"] if a["out_dtype"] != "void" else binary_dtype(call, data.dtype, weight.dtype)
    _check_rank(call, data, 0, a["data_layout"])
    _check_rank(call, weight, 1, a["kernel_layout"])
    if a["groups"] <= 0:
        raise OpError(f"{op_name(call)}: groups must be positive, got {a['groups']}", "groups")
    return data, weight, a, out_dtype, a["out_layout"] or a["data_layout"]


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
    data, weight, a, out_dtype, out_layout = conv_operands(call)
    groups = a["groups"]
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
        (kh, kw), (sh, sw), (dh, dw), pad = a["pool_size"], a["strides"], a["dilation"], a["padding"]
        if Layout.parse(a["layout"]).is_packed:
            return _pool2d_packed(call, x, lambda h, w: (
                _window_out(call, h, pad[0] + pad[2], int64(kh), sh, dh, a["ceil_mode"]),
                _window_out(call, w, pad[1] + pad[3], int64(kw), sw, dw, a["ceil_mode"])))
        _check_4d(call, x, 0, a["layout"])
        if x.shape is None:
            return tensor_like(x, None, ndim=4)
        n, c, h, w = _to_canonical(x.shape, a["layout"], "NCHW")
        out_h, out_w = _window_out(call, h, pad[0] + pad[2], int64(kh), sh, dh, a["ceil_mode"]), \
            _window_out(call, w, pad[1] + pad[3], int64(kw), sw, dw, a["ceil_mode"])
        return tensor_like(x, _from_canonical([n, c, out_h, out_w], a["out_layout"] or a["layout"], "NCHW"))

    infer.__doc__ = f"Struct info of R.nn.{name}: the pooled shape."
    register_op(f"relax.nn.{name}", inputs=("data",),
                attrs=(AttrField("pool_size", (1, 1), to_n_tuple(2)), AttrField("strides", (1, 1), to_n_tuple(2)),
                       AttrField("dilation", (1, 1), to_n_tuple(2)),
                       AttrField("padding", (0, 0, 0, 0), to_padding(2)),
                       AttrField("ceil_mode", False, to_bool),
                       AttrField("count_include_pad", count_include_pad, to_bool),
                       AttrField("layout", "NCHW", _to_packed_layout("NCHW")),
                       AttrField("out_layout", None, _to_packed_layout("NCHW", optional=True), fallback="layout")),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE)(infer)


def _pool2d_packed(call: rx.Call, x: rx.TensorStructInfo, spatial: Callable[[Any, Any], tuple[Any, Any]]
                   ) -> rx.StructInfo:
    """A 2-D pool's struct info in a packed layout (NCHW16c, as TVM pools it): the H and W dims
    become ``spatial(h, w)``; the output layout must be the input's."""
    layout = call.attrs["layout"]
    if (call.attrs["out_layout"] or layout) != layout:
        raise OpError(f"{op_name(call)}: a packed layout ({layout}) pools into the same layout, "
                      f"not {call.attrs['out_layout']}", "out_layout")
    _check_rank(call, x, 0, layout)
    if x.shape is None:
        return tensor_like(x, None, ndim=Layout.parse(layout).ndim)
    names = [ax for ax, _ in Layout.parse(layout).axes]
    shape = list(x.shape)
    hi, wi = names.index("H"), names.index("W")
    shape[hi], shape[wi] = spatial(shape[hi], shape[wi])
    return tensor_like(x, shape)


_pool2d("max_pool2d", False)
_pool2d("avg_pool2d", False)


def _to_output_size(value: object) -> tuple[int, int] | None:
    """None (keep the input size), one int or two ints."""
    return None if value is None else to_n_tuple(2)(value)  # type: ignore[return-value]


@register_op("relax.nn.adaptive_avg_pool2d", inputs=("data",),
             attrs=(AttrField("output_size", None, _to_output_size),
                    AttrField("layout", "NCHW", _to_packed_layout("NCHW")),
                    AttrField("out_layout", None, _to_packed_layout("NCHW", optional=True), fallback="layout")),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _adaptive_avg_pool2d(call: rx.Call) -> rx.StructInfo:
    """H and W become ``output_size`` (unchanged when it is None)."""
    x = tensor_arg(call, 0)
    a = call.attrs
    if Layout.parse(a["layout"]).is_packed:
        size = a["output_size"]
        return _pool2d_packed(call, x, lambda h, w: (h, w) if size is None else (int64(size[0]), int64(size[1])))
    _check_4d(call, x, 0, a["layout"])
    if x.shape is None:
        return tensor_like(x, None, ndim=4)
    n, c, h, w = _to_canonical(x.shape, a["layout"], "NCHW")
    if a["output_size"] is not None:
        h, w = (int64(v) for v in a["output_size"])
    return tensor_like(x, _from_canonical([n, c, h, w], a["out_layout"] or a["layout"], "NCHW"))


# Legalizations: each op's topi compute, as LegalizeOps turns its calls into R.call_tir.

register_legalize("relax.nn.relu", call_topi(topi.nn.relu))
register_legalize("relax.nn.gelu", call_topi(topi.nn.gelu))
register_legalize("relax.nn.gelu_tanh", call_topi(topi.nn.gelu_tanh))
register_legalize("relax.nn.silu", call_topi(topi.nn.silu))


@register_legalize("relax.nn.leakyrelu")
def _legalize_leakyrelu(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``x`` or ``alpha * x``."""
    return bb.call_te(topi.nn.leaky_relu, call.args[0], call.attrs["alpha"])


@register_legalize("relax.nn.softmax")
def _legalize_softmax(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Softmax along ``axis``."""
    return bb.call_te(topi.nn.softmax, call.args[0], call.attrs["axis"])


@register_legalize("relax.nn.log_softmax")
def _legalize_log_softmax(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Log-softmax along ``axis``."""
    return bb.call_te(topi.nn.log_softmax, call.args[0], call.attrs["axis"])


@register_legalize("relax.nn.layer_norm")
def _legalize_layer_norm(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Layer norm over ``axes``; ``center``/``scale`` off drop beta/gamma (whose dims must be the
    normalized ones)."""
    a = call.attrs
    gamma = call.args[1] if a["scale"] else None
    beta = call.args[2] if a["center"] else None

    def checks(data: Any, gamma_t: Any, beta_t: Any, axes: list, epsilon: float) -> list[Check]:
        out: list[Check] = []
        norm = [data.shape[i + data.ndim if i < 0 else i] for i in axes]
        for t, arg in ((gamma_t, call.args[1]), (beta_t, call.args[2])):
            if t is not None:
                out += _same_dims(call, arg, t, norm, f"the normalized dims of {arg_text(call.args[0])} "
                                  f"{shape_text(data.shape)}")
        return out

    return call_te_checked(bb, checks, topi.nn.layer_norm, call.args[0], gamma, beta, list(a["axes"]), a["epsilon"])


def _same_dims(call: rx.Call, arg: rx.Expr, t: Any, dims: list, what: str) -> list[Check]:
    """Each dim of the tensor ``t`` (Relax argument ``arg``) equals the one of ``dims`` (``what``)."""
    out: list[Check] = []
    for j, (d, want) in enumerate(zip(t.shape, dims)):
        out += require_equal(d, want, lambda j=j, d=d, want=want: (
            f"{site_text(call)}: dim {j} of {arg_text(arg)} {shape_text(t.shape)} is {dim_text(d)} but must be "
            f"{dim_text(want)} ({what} are {shape_text(dims)})"))
    return out


@register_legalize("relax.nn.batch_norm")
def _legalize_batch_norm(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Batch norm: the (output, new mean, new variance) tuple. gamma, beta and the moving statistics
    have the data's channels; when that is not provable, it is checked, and they are read through
    copies of the data's channel count (so the computation sees one size)."""
    a = call.attrs
    names = ("gamma", "beta", "moving_mean", "moving_var")

    def channels(data: Any) -> Any:
        axis = 1 if a["axis"] is None else a["axis"] + data.ndim if a["axis"] < 0 else a["axis"]
        return data.shape[axis]

    def checks(data: Any, *params: Any, **_: Any) -> list[Check]:
        c = channels(data)
        return [check for t, arg, name in zip(params, call.args[1:], names) for check in require_equal(
            t.shape[0], c, lambda t=t, arg=arg, name=name: (
                f"{site_text(call)}: {name} {arg_text(arg)} {shape_text(t.shape)} has {dim_text(t.shape[0])} "
                f"elements, but {arg_text(call.args[0])} {shape_text(data.shape)} has {dim_text(c)} channels"))]

    def batch_norm(data: Any, *params: Any, **kwargs: Any) -> Any:
        c = channels(data)
        return topi.nn.batch_norm(data, *(t if can_prove_equal(t.shape[0], c) else _copy(t, c) for t in params),
                                  **kwargs)

    return call_te_checked(bb, checks, batch_norm, *call.args, axis=a["axis"], epsilon=a["epsilon"],
                           center=a["center"], scale=a["scale"], training=a["training"], momentum=a["momentum"])


def _copy(t: Any, size: Any) -> Any:
    """The first ``size`` elements of the 1-D tensor ``t`` (block ``<t>_c``)."""
    return te.compute((size,), lambda i: t(i), name=f"{t.name}_c")


def _conv2d_packed(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Convolution in packed layouts (NCHW8c data, OIHW8i8o kernel): ``topi.nn.conv2d_NCHWc``;
    grouped convolutions and packed spatial axes are left alone."""
    a = call.attrs
    layouts = [Layout.parse(a[k] or a["data_layout"]) for k in ("data_layout", "kernel_layout", "out_layout")]
    if a["groups"] != 1 or any(f is not None and x.upper() not in "COI" for lay in layouts for x, f in lay.axes):
        return call  # conv2d_NCHWc packs channels of ungrouped convolutions only
    out_dtype = sinfo_of(call).dtype  # type: ignore[attr-defined]
    return bb.call_te(topi.nn.conv2d_NCHWc, call.args[0], call.args[1], list(a["strides"]), list(a["padding"]),
                      list(a["dilation"]), layouts[0].name, layouts[2].name, out_dtype,
                      kernel_layout=layouts[1].name, primfunc_name_hint="conv2d_NCHWc")


@register_legalize("relax.nn.conv2d")
def _legalize_conv2d(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Convolution in the data layout (any other output layout is left alone); packed layouts
    go to ``_conv2d_packed``."""
    a = call.attrs
    layouts = (a["data_layout"], a["kernel_layout"], a["out_layout"] or a["data_layout"])
    if any(Layout.parse(layout).is_packed for layout in layouts):
        return _conv2d_packed(bb, call)
    if (a["out_layout"] or a["data_layout"]) != a["data_layout"]:
        return call  # topi's convolution writes in the input's layout
    out_dtype = sinfo_of(call).dtype  # type: ignore[attr-defined]

    def checks(data: Any, kernel: Any, *args: Any, **_: Any) -> list[Check]:
        # The kernel's input channels times the groups are the data's channels.
        c = data.shape[a["data_layout"].index("C")]
        i = kernel.shape[a["kernel_layout"].index("I")]
        groups = a["groups"]
        want = i if groups == 1 else simplify(tir.Mul(i, tir.IntImm(i.dtype, groups)))
        return require_equal(c, want, lambda: (
            f"{site_text(call)}: {arg_text(call.args[0])} {shape_text(data.shape)} has {dim_text(c)} channels but "
            f"{arg_text(call.args[1])} {shape_text(kernel.shape)} takes {dim_text(want)}"
            + (f" ({dim_text(i)} per group, {groups} groups)" if groups != 1 else "")))

    return call_te_checked(bb, checks, topi.nn.conv, call.args[0], call.args[1], list(a["strides"]),
                           list(a["padding"]), list(a["dilation"]), a["groups"], a["data_layout"], a["kernel_layout"],
                           out_dtype, axis_names=("nn", "ff", "yy", "xx"), primfunc_name_hint="conv2d")


def _legalize_pool2d(pool_type: str) -> object:
    """Max or average pooling (left alone when the output layout differs)."""
    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        if (a["out_layout"] or a["layout"]) != a["layout"]:
            return call
        return bb.call_te(topi.nn.pool2d, call.args[0], list(a["pool_size"]), list(a["strides"]),
                          list(a["dilation"]), list(a["padding"]), pool_type, a["ceil_mode"], a["layout"],
                          a["count_include_pad"], primfunc_name_hint=f"{pool_type}_pool2d")

    return legalize


register_legalize("relax.nn.max_pool2d", _legalize_pool2d("max"))
register_legalize("relax.nn.avg_pool2d", _legalize_pool2d("avg"))


@register_legalize("relax.nn.adaptive_avg_pool2d")
def _legalize_adaptive_avg_pool2d(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Adaptive average pooling (to the input size when ``output_size`` is None)."""
    a = call.attrs
    if (a["out_layout"] or a["layout"]) != a["layout"]:
        return call
    x = sinfo_of(call.args[0])
    layout = a["layout"]
    names = [ax for ax, _ in Layout.parse(layout).axes]
    size = a["output_size"] or (x.shape[names.index("H")], x.shape[names.index("W")])  # type: ignore[union-attr]
    return bb.call_te(topi.nn.adaptive_pool, call.args[0], list(size), "avg", layout,
                      primfunc_name_hint="adaptive_avg_pool2d")


# ---------------------------------------------------------------- more activations (issue 16)
register_unary("nn.selu", require="float", inputs=("data",))
register_unary("nn.softplus", require="float", inputs=("data",),
               attrs=(AttrField("beta", 1.0, to_float), AttrField("threshold", 20.0, to_float)))
register_legalize("relax.nn.selu", call_topi(topi.nn.selu))


@register_legalize("relax.nn.softplus")
def _legalize_softplus(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``log(1 + exp(beta * x)) / beta`` below the threshold, else ``x``."""
    return bb.call_te(topi.nn.softplus, call.args[0], call.attrs["beta"], call.attrs["threshold"],
                      primfunc_name_hint="softplus")


@register_op("relax.nn.prelu", inputs=("data", "alpha"), attrs=(AttrField("axis", 1, to_int),),
             pattern=OpPattern.BROADCAST)
def _prelu(call: rx.Call) -> rx.StructInfo:
    """The data's struct info; alpha holds one slope per index of ``axis``."""
    x = tensor_arg(call, 0)
    require_float(call, x, 0)
    expected = None
    if x.ndim >= 0:
        axis = normalize_axis(call, call.attrs["axis"], x.ndim)
        expected = [x.shape[axis]] if x.shape is not None else None
    _check_param(call, 1, "alpha", expected, x.dtype)
    return x


@register_legalize("relax.nn.prelu")
def _legalize_prelu(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``x`` where positive, else ``x * alpha[i_axis]``."""
    return bb.call_te(topi.nn.prelu, call.args[0], call.args[1], call.attrs["axis"], primfunc_name_hint="prelu")
