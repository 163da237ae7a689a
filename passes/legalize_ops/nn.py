"""Legalizations of matmul, dense and the ``R.nn`` ops. Convolution and pooling are legalized
when the output layout is the input's (as TVM's topi requires), or, for convolution, when the
channels are packed (NCHW8c / OIHW8i8o, through ``topi.nn.conv2d_NCHWc``); dropout is left alone (a
frontend removes it for inference, as in TVM)."""
from __future__ import annotations

from typing import Any

from ... import te, topi
from ...ir import relax as rx
from ...ir import tir
from ...ir.block_builder import BlockBuilder
from ...ir.arith import can_prove_equal, simplify
from ...ir.layout import Layout
from ...ir.struct_info import has_known_shapes, sinfo_of
from .common import (Check, arg_text, call_te_checked, call_topi, dim_text, register_legalize, require_broadcast,
                     require_equal, shape_text, site_text)


@register_legalize("relax.matmul")
def _matmul(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Numpy-style matmul; ``out_dtype`` converts the operands. The contracted dims must agree, and
    batch dims broadcast (when the result's shape is unknown, the kernel computes it and checks)."""
    out_dtype = call.attrs["out_dtype"]
    x_name, y_name = arg_text(call.args[0]), arg_text(call.args[1])

    def checks(a: Any, b: Any, out_dtype: Any, checked_at_run_time: bool = False) -> list[Check]:
        ka, kb = a.shape[-1], b.shape[0] if b.ndim == 1 else b.shape[-2]
        ia, ib = a.ndim - 1, 0 if b.ndim == 1 else b.ndim - 2
        out = require_equal(ka, kb, lambda: (
            f"{site_text(call)}: dim {ia} of {x_name} {shape_text(a.shape)} is {dim_text(ka)} but "
            f"dim {ib} of {y_name} {shape_text(b.shape)} is {dim_text(kb)}; matmul needs them equal"))
        for k in range(1, min(a.ndim, b.ndim) - 1):
            da, db = a.shape[-2 - k], b.shape[-2 - k]
            out += require_broadcast(da, db, lambda da=da, db=db, k=k: (
                f"{site_text(call)}: batch dim {a.ndim - 2 - k} of {x_name} {shape_text(a.shape)} is {dim_text(da)} "
                f"and batch dim {b.ndim - 2 - k} of {y_name} {shape_text(b.shape)} is {dim_text(db)}; they do not "
                f"broadcast (they must be equal, or one of them 1)"))
        return out

    extra = {} if has_known_shapes(sinfo_of(call)) else {"checked_at_run_time": True}
    return call_te_checked(bb, checks, topi.matmul, call.args[0], call.args[1],
                           None if out_dtype == "void" else out_dtype, primfunc_name_hint="matmul", **extra)


_matmul.handles_unknown_result = True  # type: ignore[attr-defined]


@register_legalize("relax.nn.dense")
def _dense(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``x @ w.T``: the last dims of the data and the weight must agree."""

    def checks(x: Any, w: Any) -> list[Check]:
        kx, kw = x.shape[-1], w.shape[-1]
        return require_equal(kx, kw, lambda: (
            f"{site_text(call)}: the last dim of {arg_text(call.args[0])} {shape_text(x.shape)} is {dim_text(kx)} "
            f"but the last dim of {arg_text(call.args[1])} {shape_text(w.shape)} is {dim_text(kw)}; dense needs "
            f"them equal"))

    return call_te_checked(bb, checks, topi.nn.dense, *call.args)


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
def _batch_norm(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
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

    def checks(data: Any, kernel: Any, *args: Any) -> list[Check]:
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
                           out_dtype, primfunc_name_hint="conv2d")


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
