"""Scans: ``R.cumsum``, ``R.cumprod``, each declared with its legalization.

TVM leaves the scans to DispatchSortScan; tvmlite legalizes them to the computes of
``topi/sort.py`` (block ``cumsum``/``cumprod``)."""
from __future__ import annotations

from typing import Any

from .. import topi
from ..ir import relax as rx
from ..ir.arith import int64, simplify
from ..ir import tir
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpPattern, register_op
from ._common import normalize_axis, tensor_arg, tensor_like, to_bool, to_dtype, to_opt_int
from .legalization import register_legalize


def _opt_dtype(value: Any) -> str | None:
    """A dtype, or None for the input's."""
    return None if value is None else to_dtype(value)


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
