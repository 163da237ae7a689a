"""Legalizations of tensor creation: full/ones/zeros (and ``*_like``) and arange (a constant when
its bounds are)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import topi
from ...ir import relax as rx
from ...ir import tir
from ...ir.block_builder import BlockBuilder
from ...ir.dtype import to_numpy_dtype
from ...ir.struct_info import sinfo_of
from .common import LegalizeFunc, python_scalar, register_legalize


def _full(fill_value: float | None, name: str) -> LegalizeFunc:
    """``R.full``/``ones``/``zeros`` and their ``_like`` forms (the fill value is inlined when constant)."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        value: Any = python_scalar(call.args[1]) if fill_value is None else fill_value
        out = sinfo_of(call)  # the shape of the result is the given shape, or the tensor's
        return bb.call_te(topi.full, list(out.shape), out.dtype, value,  # type: ignore[attr-defined]
                          primfunc_name_hint=name)

    return legalize


register_legalize("relax.full", _full(None, "full"))
register_legalize("relax.full_like", _full(None, "full"))
register_legalize("relax.ones", _full(1.0, "ones"))
register_legalize("relax.ones_like", _full(1.0, "ones"))
register_legalize("relax.zeros", _full(0.0, "zeros"))
register_legalize("relax.zeros_like", _full(0.0, "zeros"))


@register_legalize("relax.arange")
def _arange(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """A constant array when start, end and step are literals; else ``T_arange``."""
    dtype = sinfo_of(call).dtype  # type: ignore[attr-defined]
    values = [sinfo_of(a).value for a in call.args]  # type: ignore[attr-defined]
    if all(isinstance(v, (tir.IntImm, tir.FloatImm)) for v in values):
        start, end, step = (v.value for v in values)
        return rx.Constant(np.arange(start, end, step).astype(to_numpy_dtype(dtype)))
    return bb.call_te(topi.arange, *call.args, dtype=dtype, primfunc_name_hint="arange")
