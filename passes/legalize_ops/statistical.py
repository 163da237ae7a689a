"""Legalizations of the reductions: sum/max/min/prod (``<x>_red``), mean, variance, std and
argmax/argmin."""
from __future__ import annotations

from typing import Any, Callable

from ... import topi
from ...ir import relax as rx
from ...ir.block_builder import BlockBuilder
from .common import LegalizeFunc, register_legalize


def _statistical(te_func: Callable[..., Any]) -> LegalizeFunc:
    """A reduction over the ``axis`` attribute (all axes when None)."""
    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        axis = call.attrs["axis"]
        return bb.call_te(te_func, call.args[0], None if axis is None else list(axis), call.attrs["keepdims"],
                          primfunc_name_hint=te_func.__name__)

    return legalize


for _name in ("sum", "max", "min", "prod", "mean", "variance", "std"):
    register_legalize(f"relax.{_name}", _statistical(getattr(topi, _name)))


def _arg_reduce(te_func: Callable[..., Any]) -> LegalizeFunc:
    """argmax/argmin over the ``axis`` attribute."""
    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        return bb.call_te(te_func, call.args[0], call.attrs["axis"], call.attrs["keepdims"])

    return legalize


register_legalize("relax.argmax", _arg_reduce(topi.argmax))
register_legalize("relax.argmin", _arg_reduce(topi.argmin))
