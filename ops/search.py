"""Sorting, searching and sampling: ``R.sort``, ``R.argsort``, ``R.topk``, ``R.bucketize``,
``R.multinomial_from_uniform``, each declared with its legalization.

TVM leaves these to DispatchSortScan (an extern sort library); tvmlite legalizes them to the
plain computes of ``topi/sort.py`` (``<x>_rank``, then ``argsort``/``sort``/``topk_*``), so every
backend runs them."""
from __future__ import annotations

from typing import Any

from .. import topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import format_shape
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ._common import (normalize_axis, op_name, require_float, require_integer, tensor_arg, tensor_like, to_bool,
                      to_dtype, to_int, to_str)
from .legalization import register_legalize

_RET_TYPES = ("both", "values", "indices")


def _index_dtype(value: Any) -> str:
    """The dtype of returned indices (an integer dtype)."""
    dtype = to_dtype(value)
    if dtype == "void" or not dtype.startswith(("int", "uint")):
        raise OpError(f"expected an integer dtype for the indices, got {value!r}")
    return dtype


def _checked_axis(call: rx.Call, x: rx.TensorStructInfo) -> None:
    """Refuse an axis outside the tensor's dimensions (TVM finds it only when sorting)."""
    if x.ndim >= 0:
        normalize_axis(call, call.attrs["axis"], x.ndim)


@register_op("relax.sort", inputs=("x",),
             attrs=(AttrField("axis", -1, to_int), AttrField("descending", False, to_bool)),
             pattern=OpPattern.OPAQUE)
def _sort(call: rx.Call) -> rx.StructInfo:
    """The input's struct info."""
    x = tensor_arg(call, 0)
    _checked_axis(call, x)
    return tensor_like(x, x.shape)


@register_op("relax.argsort", inputs=("data",),
             attrs=(AttrField("axis", -1, to_int), AttrField("descending", False, to_bool),
                    AttrField("dtype", "int32", _index_dtype)),
             pattern=OpPattern.OPAQUE)
def _argsort(call: rx.Call) -> rx.StructInfo:
    """The input's shape with the index dtype."""
    x = tensor_arg(call, 0)
    _checked_axis(call, x)
    return tensor_like(x, x.shape, call.attrs["dtype"])


def _ret_type(value: Any) -> str:
    """One of "both", "values", "indices"."""
    text = to_str(value)
    if text not in _RET_TYPES:
        raise OpError(f"ret_type must be one of {', '.join(map(repr, _RET_TYPES))}, got {text!r}")
    return text


@register_op("relax.topk", inputs=("data",),
             attrs=(AttrField("k", 1, to_int), AttrField("axis", -1, to_int), AttrField("ret_type", "both", _ret_type),
                    AttrField("largest", True, to_bool), AttrField("dtype", "int32", _index_dtype)),
             pattern=OpPattern.OPAQUE)
def _topk(call: rx.Call) -> rx.StructInfo:
    """Values and/or indices with the axis cut to ``k`` (kept whole when ``k < 1`` or past its end)."""
    x = tensor_arg(call, 0)
    _checked_axis(call, x)
    k, dtype = call.attrs["k"], call.attrs["dtype"]
    shape = None
    if x.shape is not None:
        axis = call.attrs["axis"] % x.ndim
        dim = x.shape[axis]
        keep = k < 1 or (isinstance(dim, tir.IntImm) and k >= dim.value)
        shape = list(x.shape)
        shape[axis] = dim if keep else tir.IntImm("int64", k)
    values, indices = tensor_like(x, shape), tensor_like(x, shape, dtype)
    ret = call.attrs["ret_type"]
    if ret == "values":
        return values
    if ret == "indices":
        return indices
    return rx.TupleStructInfo((values, indices))


# Legalizations: the computes of topi/sort.py.

@register_legalize("relax.sort")
def _legalize_sort(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.sort`` (stable)."""
    return bb.call_te(topi.sort, call.args[0], call.attrs["axis"], not call.attrs["descending"],
                      primfunc_name_hint="sort")


@register_legalize("relax.argsort")
def _legalize_argsort(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.argsort`` (stable: equal elements keep their order)."""
    return bb.call_te(topi.argsort, call.args[0], call.attrs["axis"], not call.attrs["descending"],
                      call.attrs["dtype"], primfunc_name_hint="argsort")


@register_legalize("relax.topk")
def _legalize_topk(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.topk``: one kernel writing the values and/or the indices."""
    a = call.attrs
    return bb.call_te(topi.topk, call.args[0], a["k"], a["axis"], a["ret_type"], not a["largest"], a["dtype"],
                      primfunc_name_hint="topk")


@register_op("relax.bucketize", inputs=("input_tensor", "boundaries"),
             attrs=(AttrField("out_int32", False, to_bool), AttrField("right", False, to_bool)),
             pattern=OpPattern.OPAQUE)
def _bucketize(call: rx.Call) -> rx.StructInfo:
    """The input's shape, int32 with ``out_int32`` else int64; the boundaries are 1-D."""
    x, b = tensor_arg(call, 0), tensor_arg(call, 1)
    if b.ndim not in (-1, 1):
        raise OpError(f"{op_name(call)}: the boundaries must be a 1-D tensor, got {b.ndim} dimensions", 1)
    return tensor_like(x, x.shape, "int32" if call.attrs["out_int32"] else "int64")


@register_legalize("relax.bucketize")
def _legalize_bucketize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.searchsorted`` of the input in the boundaries (TVM's PrimFunc ``searchsorted``)."""
    return bb.call_te(topi.searchsorted, call.args[1], call.args[0], call.attrs["right"],
                      "int32" if call.attrs["out_int32"] else "int64")


def _column(call: rx.Call, i: int, what: str) -> rx.TensorStructInfo:
    """Input ``i``, a 2-D ``(n, 1)`` tensor."""
    t = tensor_arg(call, i)
    if t.ndim not in (-1, 2) or (t.shape is not None and isinstance(t.shape[1], tir.IntImm) and t.shape[1].value != 1):
        shape = f"shape {format_shape(t.shape)}" if t.shape is not None else f"{t.ndim} dimensions"
        raise OpError(f"{op_name(call)}: {what} must be a 2-D tensor of shape (n, 1), got {shape}", i)
    return t


@register_op("relax.multinomial_from_uniform", inputs=("prob", "uniform_sample", "sample_indices"),
             attrs=(AttrField("dtype", "int64", _index_dtype),), pattern=OpPattern.OPAQUE)
def _multinomial_from_uniform(call: rx.Call) -> rx.StructInfo:
    """One sampled class per row of the uniform samples: an ``(n, 1)`` tensor of ``dtype``."""
    prob = tensor_arg(call, 0)
    if prob.ndim not in (-1, 2):
        raise OpError(f"{op_name(call)}: prob must be a 2-D tensor (batch, vocab_size), got {prob.ndim} "
                      f"dimensions", 0)
    require_float(call, prob, 0)
    u = _column(call, 1, "uniform_sample")
    require_float(call, u, 1)
    idx = _column(call, 2, "sample_indices")
    require_integer(call, idx, 2, allow_bool=False)
    shape = u.shape if u.shape is not None else idx.shape
    return tensor_like(u, shape, call.attrs["dtype"], 2)


@register_legalize("relax.multinomial_from_uniform")
def _legalize_multinomial_from_uniform(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The cumulative probabilities (``cumsum``), then the first class past each sample (TVM's CPU kernel)."""
    return bb.call_te(topi.multinomial_from_uniform, *call.args, call.attrs["dtype"],
                      primfunc_name_hint="multinomial_from_uniform")
