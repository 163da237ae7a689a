"""Padding and the pooling ops other than the 2-D ones (``R.nn.pad``...), each declared with its
legalization."""
from __future__ import annotations

from .. import topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, format_expr, int64, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ._common import op_name, tensor_arg, tensor_like, to_float, to_int_tuple, to_str
from .legalization import register_legalize

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
