"""Padding and the pooling ops other than the 2-D ones (``R.nn.pad``...), each declared with its
legalization."""
from __future__ import annotations

from .. import topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, format_expr, int64, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ..ir.struct_info import sinfo_of
from ._common import (op_name, tensor_arg, tensor_like, to_bool, to_float, to_int_tuple, to_layout, to_n_tuple,
                      to_padding, to_str)
from .legalization import register_legalize
from .nn import _from_canonical, _to_canonical, _window_out

# ---------------------------------------------------------------- pad
PAD_MODES = {"constant": (topi.nn.pad, "pad"), "reflect": (topi.nn.reflect_pad, "reflect_pad"),
             "replicate": (topi.nn.replicate_pad, "replicate_pad"),
             "circular": (topi.nn.circular_pad, "circular_pad")}


def _to_pad_mode(value: object) -> str:
    """One of TVM's documented modes (TVM itself pads any other mode with the constant)."""
    mode = to_str(value)
    if mode not in PAD_MODES:
        raise OpError(f"unsupported pad_mode {mode!r} (expected one of {', '.join(map(repr, PAD_MODES))})")
    return mode


@register_op("relax.nn.pad", inputs=("data",),
             attrs=(AttrField("pad_width", convert=to_int_tuple), AttrField("pad_value", 0.0, to_float),
                    AttrField("pad_mode", "constant", _to_pad_mode)),
             pattern=OpPattern.INJECTIVE)
def _pad(call: rx.Call) -> rx.StructInfo:
    """Each axis grows by its (before, after) pair of ``pad_width`` (negative widths crop)."""
    x = tensor_arg(call, 0)
    widths = call.attrs["pad_width"]
    if x.ndim >= 0 and len(widths) != 2 * x.ndim:
        raise OpError(f"{op_name(call)}: pad_width needs a (before, after) pair per axis: {2 * x.ndim} integers "
                      f"for {x.ndim} axes, got {len(widths)}", "pad_width")
    if x.shape is None:
        return x
    shape = []
    for i, d in enumerate(x.shape):
        size = simplify(tir.Add(d, int64(widths[2 * i] + widths[2 * i + 1])))
        known = as_const_int(size)
        if known is not None and known < 0:
            raise OpError(f"{op_name(call)}: the widths {widths[2 * i]}, {widths[2 * i + 1]} crop axis {i} of "
                          f"length {format_expr(d)} to {known}", "pad_width")
        shape.append(size)
    return tensor_like(x, shape)


@register_legalize("relax.nn.pad")
def _legalize_pad(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The topi pad of the mode (``pad``, ``reflect_pad``, ``replicate_pad``, ``circular_pad``)."""
    a = call.attrs
    widths = list(a["pad_width"])
    func, name = PAD_MODES[a["pad_mode"]]
    if a["pad_mode"] == "constant":
        return bb.call_te(func, call.args[0], widths[::2], widths[1::2], a["pad_value"], primfunc_name_hint=name)
    return bb.call_te(func, call.args[0], widths[::2], widths[1::2], primfunc_name_hint=name)


# ---------------------------------------------------------------- pooling over 1 or 3 dimensions
def _check_rank(call: rx.Call, t: rx.TensorStructInfo, layout: str) -> None:
    """OpError unless the data has ``len(layout)`` dimensions (or an unknown rank)."""
    if t.ndim not in (-1, len(layout)):
        raise OpError(f"{op_name(call)}: expected a {len(layout)}-D tensor ({layout}), got {t.ndim}-D", 0)


def _register_pool(dims: int, pool_type: str) -> None:
    """Register ``relax.nn.{max,avg}_pool{dims}d`` and its legalization (``topi.nn.pool_nd``)."""
    canon = "NC" + "DHW"[3 - dims:]
    name = f"nn.{pool_type}_pool{dims}d"

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        a = call.attrs
        _check_rank(call, x, a["layout"])
        if x.shape is None:
            return tensor_like(x, None, ndim=dims + 2)
        n, c, *sizes = _to_canonical(x.shape, a["layout"], canon)
        pad = a["padding"]
        out = [_window_out(call, sizes[k], pad[k] + pad[k + dims], int64(a["pool_size"][k]), a["strides"][k],
                           a["dilation"][k], a["ceil_mode"]) for k in range(dims)]
        return tensor_like(x, _from_canonical([n, c, *out], a["out_layout"] or a["layout"], canon))

    infer.__doc__ = f"Struct info of R.{name}: the pooled shape."
    # TVM's defaults: average pooling counts the padding in 1-D and 3-D (not in 2-D).
    register_op(f"relax.{name}", inputs=("data",),
                attrs=(AttrField("pool_size", (1,) * dims, to_n_tuple(dims)),
                       AttrField("strides", (1,) * dims, to_n_tuple(dims)),
                       AttrField("dilation", (1,) * dims, to_n_tuple(dims)),
                       AttrField("padding", (0,) * (2 * dims), to_padding(dims)),
                       AttrField("ceil_mode", False, to_bool),
                       AttrField("count_include_pad", pool_type == "avg", to_bool),
                       AttrField("layout", canon, to_layout(canon)),
                       AttrField("out_layout", None, to_layout(canon, optional=True), fallback="layout")),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE)(infer)

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        if (a["out_layout"] or a["layout"]) != a["layout"]:
            return call  # topi pools in the input's layout
        return bb.call_te(topi.nn.pool_nd, call.args[0], list(a["pool_size"]), list(a["strides"]),
                          list(a["dilation"]), list(a["padding"]), pool_type, a["ceil_mode"], a["layout"],
                          a["count_include_pad"], primfunc_name_hint=f"{pool_type}_pool{dims}d")

    legalize.__doc__ = f"``topi.nn.pool_nd`` ({pool_type}) in the data layout (another output layout is left alone)."
    register_legalize(f"relax.{name}", legalize)


for _dims in (1, 3):
    for _kind in ("max", "avg"):
        _register_pool(_dims, _kind)


def _register_adaptive_avg_pool(dims: int) -> None:
    """Register ``relax.nn.adaptive_avg_pool{dims}d`` and its legalization (``topi.nn.adaptive_pool``)."""
    canon = "NC" + "DHW"[3 - dims:]
    name = f"nn.adaptive_avg_pool{dims}d"

    def to_output_size(value: object) -> tuple[int, ...] | None:
        return None if value is None else to_n_tuple(dims)(value)

    to_output_size.__doc__ = f"None (keep the input size), one int or {dims} ints."

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        a = call.attrs
        _check_rank(call, x, a["layout"])
        if x.shape is None:
            return tensor_like(x, None, ndim=dims + 2)
        n, c, *sizes = _to_canonical(x.shape, a["layout"], canon)
        if a["output_size"] is not None:
            sizes = [int64(v) for v in a["output_size"]]
        return tensor_like(x, _from_canonical([n, c, *sizes], a["out_layout"] or a["layout"], canon))

    infer.__doc__ = f"The spatial dims of R.{name} become ``output_size`` (unchanged when it is None)."
    register_op(f"relax.{name}", inputs=("data",),
                attrs=(AttrField("output_size", None, to_output_size),
                       AttrField("layout", canon, to_layout(canon)),
                       AttrField("out_layout", None, to_layout(canon, optional=True), fallback="layout")),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE)(infer)

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        if (a["out_layout"] or a["layout"]) != a["layout"]:
            return call
        x = sinfo_of(call.args[0])
        size = a["output_size"] or [x.shape[a["layout"].index(ch)] for ch in canon[2:]]  # type: ignore[union-attr]
        return bb.call_te(topi.nn.adaptive_pool, call.args[0], list(size), "avg", a["layout"],
                          primfunc_name_hint=f"adaptive_avg_pool{dims}d")

    legalize.__doc__ = "Adaptive average pooling (to the input size when ``output_size`` is None)."
    register_legalize(f"relax.{name}", legalize)


_register_adaptive_avg_pool(1)
_register_adaptive_avg_pool(3)
