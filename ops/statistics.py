"""Scans and order statistics: ``R.cumsum``, ``R.cumprod``, ``R.median``, each declared with its
legalization.

TVM leaves the scans to DispatchSortScan; tvmlite legalizes them to the computes of
``topi/sort.py`` (block ``cumsum``/``cumprod``)."""
from __future__ import annotations

from typing import Any

from .. import topi
from ..ir import relax as rx
from ..ir.arith import int64, simplify
from ..ir import tir
from ..ir.block_builder import BlockBuilder
from ..ir.struct_info import sinfo_of
from ..ir.op import AttrField, OpPattern, register_op
from ..ir.op import OpError
from ._common import normalize_axes, op_name, to_opt_int_tuple
from ._common import normalize_axis, tensor_arg, tensor_like, to_bool, to_dtype, to_opt_int
from .legalization import register_legalize


def _opt_dtype(value: Any) -> str | None:
    """A dtype, or None (also for "void") for the input's."""
    dtype = None if value is None else to_dtype(value)
    return None if dtype == "void" else dtype


def _scan(name: str) -> None:
    """Register ``relax.<name>(data, axis=None, dtype=None, exclusive=False)``."""

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        axis, dtype = call.attrs["axis"], call.attrs["dtype"]
        dtype = x.dtype if dtype in (None, "void") else dtype
        if axis is not None:
            if x.ndim >= 0:
                normalize_axis(call, axis, x.ndim)
            return tensor_like(x, x.shape, dtype)
        if x.shape is None:  # the flattened input (TVM keeps a known ndim here; it is 1)
            return tensor_like(x, None, dtype, -1 if x.ndim < 0 else 1)
        size: tir.PrimExpr = int64(1)
        for d in x.shape:
            size = simplify(tir.Mul(size, d))
        return tensor_like(x, (size,), dtype)

    infer.__doc__ = f"Struct info of R.{name}: the input's shape (flattened when axis is None)."
    register_op(f"relax.{name}", inputs=("data",),
                attrs=(AttrField("axis", None, to_opt_int), AttrField("dtype", None, _opt_dtype),
                       AttrField("exclusive", False, to_bool)),
                pattern=OpPattern.OPAQUE)(infer)

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        return bb.call_te(getattr(topi, name), call.args[0], a["axis"], a["dtype"], a["exclusive"],
                          primfunc_name_hint=name)

    legalize.__doc__ = f"``topi.{name}``."
    register_legalize(f"relax.{name}", legalize)


_scan("cumsum")
_scan("cumprod")


@register_op("relax.median", inputs=("x",),
             attrs=(AttrField("axis", None, to_opt_int_tuple), AttrField("keepdims", False, to_bool)),
             pattern=OpPattern.OPAQUE)
def _median(call: rx.Call) -> rx.StructInfo:
    """The median of all elements, or over one axis the (lower) median and its int64 index."""
    x = tensor_arg(call, 0)
    axis, keepdims = call.attrs["axis"], call.attrs["keepdims"]
    axes = None if axis is None or x.ndim < 0 else normalize_axes(call, axis, x.ndim)
    if axis is None or (axes is not None and len(axes) == x.ndim and len(axes) != 1):
        if x.ndim < 0:
            return tensor_like(x, None, None, -1 if keepdims else 0)
        return tensor_like(x, [int64(1)] * x.ndim if keepdims else [])
    if len(axis) != 1:  # TVM's legalization reads only the first one
        raise OpError(f"{op_name(call)}: reduces over one axis or all of them, got axes {list(axis)}", "axis")
    if axes is None:
        return rx.TupleStructInfo((tensor_like(x, None, None, -1), tensor_like(x, None, "int64", -1)))
    a = axes[0]
    if x.shape is None:
        nd = x.ndim if keepdims else x.ndim - 1
        out = (tensor_like(x, None, None, nd), tensor_like(x, None, "int64", nd))
    else:
        shape = [int64(1) if i == a else d for i, d in enumerate(x.shape) if keepdims or i != a]
        out = (tensor_like(x, shape), tensor_like(x, shape, "int64"))
    return rx.TupleStructInfo(out)


@register_legalize("relax.median")
def _legalize_median(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.median``: an argsort, then the middle element (and its index over one axis)."""
    x = sinfo_of(call.args[0])
    axis = call.attrs["axis"]
    if axis is not None and len(axis) == x.ndim and len(axis) != 1:  # type: ignore[attr-defined]
        axis = None
    return bb.call_te(topi.median, call.args[0], None if axis is None else list(axis), call.attrs["keepdims"],
                      primfunc_name_hint="median")
