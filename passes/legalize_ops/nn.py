"""Legalizations of matmul, dense and the ``R.nn`` ops. Convolution and pooling are legalized
when the output layout is the input's (as TVM's topi requires), or, for convolution, when the
channels are packed (NCHW8c / OIHW8i8o, through ``topi.nn.conv2d_NCHWc``); dropout is left alone (a
frontend removes it for inference, as in TVM)."""
from __future__ import annotations

from ... import topi
from ...ir import relax as rx
from ...ir.block_builder import BlockBuilder
from ...ir.layout import Layout
from ...ir.struct_info import sinfo_of
from .common import call_topi, register_legalize


@register_legalize("relax.matmul")
def _matmul(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Numpy-style matmul; ``out_dtype`` converts the operands."""
    out_dtype = call.attrs["out_dtype"]
    return bb.call_te(topi.matmul, call.args[0], call.args[1], None if out_dtype == "void" else out_dtype,
                      primfunc_name_hint="matmul")


register_legalize("relax.nn.dense", call_topi(topi.nn.dense))
register_legalize("relax.nn.relu", call_topi(topi.nn.relu))
register_legalize("relax.nn.gelu", call_topi(topi.nn.gelu))
register_legalize("relax.nn.gelu_tanh", call_topi(topi.nn.gelu_tanh))
register_legalize("relax.nn.silu", call_topi(topi.nn.silu))


@register_legalize("relax.nn.leakyrelu")
def _leakyrelu(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``x`` or ``alpha * x``."""
    return bb.call_te(topi.nn.leaky_relu, call.args[0], call.attrs["alpha"])


@register_legalize("relax.nn.softmax")
def _softmax(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Softmax along ``axis``."""
    return bb.call_te(topi.nn.softmax, call.args[0], call.attrs["axis"])


@register_legalize("relax.nn.log_softmax")
def _log_softmax(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Log-softmax along ``axis``."""
    return bb.call_te(topi.nn.log_softmax, call.args[0], call.attrs["axis"])


@register_legalize("relax.nn.layer_norm")
def _layer_norm(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Layer norm over ``axes``; ``center``/``scale`` off drop beta/gamma."""
    a = call.attrs
    gamma = call.args[1] if a["scale"] else None
    beta = call.args[2] if a["center"] else None
    return bb.call_te(topi.nn.layer_norm, call.args[0], gamma, beta, list(a["axes"]), a["epsilon"])


@register_legalize("relax.nn.batch_norm")
def _batch_norm(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Batch norm: the (output, new mean, new variance) tuple."""
    a = call.attrs
    return bb.call_te(topi.nn.batch_norm, *call.args, axis=a["axis"], epsilon=a["epsilon"], center=a["center"],
                      scale=a["scale"], training=a["training"], momentum=a["momentum"])


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
def _conv2d(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Convolution in the data layout (any other output layout is left alone); packed layouts
    go to ``_conv2d_packed``."""
    a = call.attrs
    layouts = (a["data_layout"], a["kernel_layout"], a["out_layout"] or a["data_layout"])
    if any(Layout.parse(layout).is_packed for layout in layouts):
        return _conv2d_packed(bb, call)
    if (a["out_layout"] or a["data_layout"]) != a["data_layout"]:
        return call  # topi's convolution writes in the input's layout
    out_dtype = sinfo_of(call).dtype  # type: ignore[attr-defined]
    return bb.call_te(topi.nn.conv, call.args[0], call.args[1], list(a["strides"]), list(a["padding"]),
                      list(a["dilation"]), a["groups"], a["data_layout"], a["kernel_layout"], out_dtype,
                      primfunc_name_hint="conv2d")


def _pool2d(pool_type: str) -> object:
    """Max or average pooling (left alone when the output layout differs)."""
    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        if (a["out_layout"] or a["layout"]) != a["layout"]:
            return call
        return bb.call_te(topi.nn.pool2d, call.args[0], list(a["pool_size"]), list(a["strides"]),
                          list(a["dilation"]), list(a["padding"]), pool_type, a["ceil_mode"], a["layout"],
                          a["count_include_pad"], primfunc_name_hint=f"{pool_type}_pool2d")

    return legalize


register_legalize("relax.nn.max_pool2d", _pool2d("max"))
register_legalize("relax.nn.avg_pool2d", _pool2d("avg"))


@register_legalize("relax.nn.adaptive_avg_pool2d")
def _adaptive_avg_pool2d(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Adaptive average pooling (to the input size when ``output_size`` is None)."""
    a = call.attrs
    if (a["out_layout"] or a["layout"]) != a["layout"]:
        return call
    x = sinfo_of(call.args[0])
    layout = a["layout"]
    size = a["output_size"] or (x.shape[layout.index("H")], x.shape[layout.index("W")])  # type: ignore[union-attr]
    return bb.call_te(topi.nn.adaptive_pool, call.args[0], list(size), "avg", layout,
                      primfunc_name_hint="adaptive_avg_pool2d")
