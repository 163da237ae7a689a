"""Group, instance and RMS normalisation (``R.nn.group_norm``, ``R.nn.instance_norm``,
``R.nn.rms_norm``), each declared with its legalization."""
from __future__ import annotations

from .. import topi
from ..ir import relax as rx
from ..ir.arith import as_const_int, format_expr
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ._common import (normalize_axes, normalize_axis, op_name, require_float, tensor_arg, to_bool, to_float, to_int,
                      to_int_tuple)
from .legalization import register_legalize
from .nn import _check_param


def _channel_norm(call: rx.Call, groups: int | None) -> rx.StructInfo:
    """The data's struct info; gamma and beta hold one value per channel."""
    x = tensor_arg(call, 0)
    require_float(call, x, 0)
    a = call.attrs
    expected = None
    if x.ndim >= 0:
        channel = normalize_axis(call, a["channel_axis"], x.ndim, "channel_axis")
        axes = normalize_axes(call, a["axes"], x.ndim, "axes")
        if channel in axes:
            raise OpError(f"{op_name(call)}: the channel axis {channel} cannot be normalised over (axes "
                          f"{list(a['axes'])})", "axes")
        if x.shape is not None:
            expected = [x.shape[channel]]
            channels = as_const_int(x.shape[channel])
            if groups is not None and channels is not None and channels % groups:
                raise OpError(f"{op_name(call)}: {format_expr(x.shape[channel])} channels cannot be split into "
                              f"{groups} groups", "num_groups")
    if groups is not None and groups <= 0:
        raise OpError(f"{op_name(call)}: num_groups must be positive, got {groups}", "num_groups")
    for i, what in ((1, "gamma"), (2, "beta")):
        _check_param(call, i, what, expected, x.dtype)
    return x


_NORM_ATTRS = (AttrField("epsilon", 1e-5, to_float), AttrField("center", True, to_bool),
               AttrField("scale", True, to_bool))


@register_op("relax.nn.group_norm", inputs=("data", "gamma", "beta"),
             attrs=(AttrField("num_groups", convert=to_int), AttrField("channel_axis", convert=to_int),
                    AttrField("axes", convert=to_int_tuple), *_NORM_ATTRS),
             pattern=OpPattern.OPAQUE)
def _group_norm(call: rx.Call) -> rx.StructInfo:
    """The data's struct info; the channels split evenly into ``num_groups``."""
    return _channel_norm(call, call.attrs["num_groups"])


@register_op("relax.nn.instance_norm", inputs=("data", "gamma", "beta"),
             attrs=(AttrField("channel_axis", convert=to_int), AttrField("axes", convert=to_int_tuple),
                    *_NORM_ATTRS),
             pattern=OpPattern.OPAQUE)
def _instance_norm(call: rx.Call) -> rx.StructInfo:
    """The data's struct info."""
    return _channel_norm(call, None)


@register_op("relax.nn.rms_norm", inputs=("data", "weight"),
             attrs=(AttrField("axes", (-1,), to_int_tuple), AttrField("epsilon", 1e-5, to_float)),
             pattern=OpPattern.OPAQUE)
def _rms_norm(call: rx.Call) -> rx.StructInfo:
    """The data's struct info; the weight has the shape of the normalised axes."""
    x = tensor_arg(call, 0)
    require_float(call, x, 0)
    expected = None
    if x.ndim >= 0:
        axes = normalize_axes(call, call.attrs["axes"], x.ndim, "axes")
        if x.shape is not None:
            expected = [x.shape[a] for a in axes]
    _check_param(call, 1, "weight", expected, x.dtype)
    return x


def _params(call: rx.Call) -> tuple[rx.Expr | None, rx.Expr | None]:
    """gamma and beta, each None when ``scale`` / ``center`` turn it off."""
    return (call.args[1] if call.attrs["scale"] else None), (call.args[2] if call.attrs["center"] else None)


@register_legalize("relax.nn.group_norm")
def _legalize_group_norm(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.nn.group_norm``."""
    a = call.attrs
    return bb.call_te(topi.nn.group_norm, call.args[0], *_params(call), a["num_groups"], a["channel_axis"],
                      list(a["axes"]), a["epsilon"], primfunc_name_hint="group_norm")


@register_legalize("relax.nn.instance_norm")
def _legalize_instance_norm(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.nn.instance_norm``."""
    a = call.attrs
    return bb.call_te(topi.nn.instance_norm, call.args[0], *_params(call), a["channel_axis"], list(a["axes"]),
                      a["epsilon"], primfunc_name_hint="instance_norm")


@register_legalize("relax.nn.rms_norm")
def _legalize_rms_norm(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.nn.rms_norm``."""
    return bb.call_te(topi.nn.rms_norm, call.args[0], call.args[1], list(call.attrs["axes"]), call.attrs["epsilon"],
                      primfunc_name_hint="rms_norm")
