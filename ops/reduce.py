"""Reductions: sum, mean, max, min, prod, variance, std and argmax/argmin, each declared
with its legalization (sum/max/min/prod become ``<x>_red`` kernels, as in topi)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import topi
from ..ir import relax as rx
from ..ir.arith import int64
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpPattern, register_op
from ._common import normalize_axes, tensor_arg, tensor_like, to_bool, to_opt_int, to_opt_int_tuple
from .legalization import LegalizeFunc, register_legalize


def _reduced(call: rx.Call, x: rx.TensorStructInfo, axes: Sequence[int] | None, keepdims: bool,
             dtype: str | None = None) -> rx.TensorStructInfo:
    """``x`` with ``axes`` (all when None) reduced away, or kept as size 1 with ``keepdims``."""
    if x.ndim < 0:
        if axes is None and not keepdims:
            return tensor_like(x, (), dtype)
        return tensor_like(x, None, dtype, -1)
    reduced = set(range(x.ndim)) if axes is None else set(normalize_axes(call, axes, x.ndim, "axis"))
    if x.shape is None:
        return tensor_like(x, None, dtype, x.ndim if keepdims else x.ndim - len(reduced))
    out = []
    for i, d in enumerate(x.shape):
        if i not in reduced:
            out.append(d)
        elif keepdims:
            out.append(int64(1))
    return tensor_like(x, out, dtype)


def _statistical(name: str) -> None:
    """Register ``relax.<name>(x, axis=None, keepdims=False)`` reducing over a list of axes."""

    def infer(call: rx.Call) -> rx.StructInfo:
        return _reduced(call, tensor_arg(call, 0), call.attrs["axis"], call.attrs["keepdims"])

    infer.__doc__ = f"Struct info of R.{name}: the input with the reduced axes removed (or kept as 1)."
    register_op(f"relax.{name}", inputs=("x",),
                attrs=(AttrField("axis", None, to_opt_int_tuple), AttrField("keepdims", False, to_bool)),
                pattern=OpPattern.COMM_REDUCE)(infer)


def _arg_reduce(name: str) -> None:
    """Register ``relax.<name>(x, axis=None, keepdims=False)``: int64 indices over one axis (or all)."""

    def infer(call: rx.Call) -> rx.StructInfo:
        axis = call.attrs["axis"]
        return _reduced(call, tensor_arg(call, 0), None if axis is None else (axis,),
                        call.attrs["keepdims"], "int64")

    infer.__doc__ = f"Struct info of R.{name}: int64 indices with the axis reduced."
    register_op(f"relax.{name}", inputs=("x",),
                attrs=(AttrField("axis", None, to_opt_int), AttrField("keepdims", False, to_bool)),
                pattern=OpPattern.COMM_REDUCE)(infer)


for _name in ("sum", "mean", "max", "min", "prod", "variance", "std"):
    _statistical(_name)
for _name in ("argmax", "argmin"):
    _arg_reduce(_name)


# Legalizations: each op's topi compute, as LegalizeOps turns its calls into R.call_tir.

def _legalize_statistical(te_func: Callable[..., Any]) -> LegalizeFunc:
    """A reduction over the ``axis`` attribute (all axes when None)."""
    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        axis = call.attrs["axis"]
        return bb.call_te(te_func, call.args[0], None if axis is None else list(axis), call.attrs["keepdims"],
                          primfunc_name_hint=te_func.__name__)

    return legalize


for _name in ("sum", "max", "min", "prod", "mean", "variance", "std"):
    register_legalize(f"relax.{_name}", _legalize_statistical(getattr(topi, _name)))


def _legalize_arg_reduce(te_func: Callable[..., Any]) -> LegalizeFunc:
    """argmax/argmin over the ``axis`` attribute."""
    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        return bb.call_te(te_func, call.args[0], call.attrs["axis"], call.attrs["keepdims"])

    return legalize


register_legalize("relax.argmax", _legalize_arg_reduce(topi.argmax))
register_legalize("relax.argmin", _legalize_arg_reduce(topi.argmin))
