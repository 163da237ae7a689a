"""Ops whose result sizes depend on the data: ``R.nonzero`` and ``R.unique``.

As in TVM, their struct info knows only the ranks, and LegalizeOps turns them into
``R.call_pure_packed("relax.run.nonzero" | "relax.run.unique", ...)``: the runtime functions
(``backend/runtime.py``) compute them on the arrays, as TVM's do with numpy."""
from __future__ import annotations

from ..ir import relax as rx
from ..ir import tir
from ..ir.block_builder import BlockBuilder
from ..ir import op_api
from ..ir.op import OpError, OpPattern, make_call, register_op
from ..ir.struct_info import sinfo_of
from ._common import arg, arg_sinfo, describe, normalize_axis, op_name, tensor_arg, tensor_like
from .legalization import register_legalize


def _bool(value: bool) -> rx.PrimValue:
    """A literal ``R.prim_value`` bool."""
    return rx.PrimValue(tir.IntImm("bool", int(value)),
                        struct_info=rx.PrimStructInfo("bool", tir.IntImm("bool", int(value))))


@register_op("relax.nonzero", inputs=("x",), pattern=OpPattern.OPAQUE)
def _nonzero(call: rx.Call) -> rx.StructInfo:
    """A 2-D int64 tensor: one row per input dimension, one column per nonzero element."""
    x = tensor_arg(call, 0)
    return rx.TensorStructInfo(None, "int64", 2, vdevice=x.vdevice)


_FLAGS = ("sorted", "return_index", "return_inverse", "return_counts")


def _flag(call: rx.Call, i: int) -> bool:
    """The literal bool of input ``i`` (a flag must be known to know what the op returns)."""
    v = arg(call, i)
    value = v.value if isinstance(v, rx.PrimValue) else None
    if not isinstance(value, tir.IntImm):
        raise OpError(f"{op_name(call)}: {_FLAGS[i - 1]} must be a literal bool (R.prim_value), "
                      f"got {describe(arg_sinfo(call, i))}", i)
    return bool(value.value)


def _axis(call: rx.Call, x: rx.TensorStructInfo) -> int | None:
    """The literal axis (input 5), None when absent."""
    if len(call.args) < 6:
        return None
    v = arg(call, 5)
    value = v.value if isinstance(v, rx.PrimValue) else None
    if not isinstance(value, tir.IntImm) or value.dtype == "bool":
        raise OpError(f"{op_name(call)}: axis must be a literal integer (R.prim_value)", 5)
    if x.ndim >= 0:
        normalize_axis(call, value.value, x.ndim, 5)
    return value.value


@register_op("relax.unique", inputs=("x",) + _FLAGS + ("axis",), num_optional=1,
             input_defaults={"sorted": _bool(True), "return_index": _bool(False), "return_inverse": _bool(False),
                             "return_counts": _bool(False)},
             pattern=OpPattern.OPAQUE)
def _unique(call: rx.Call) -> rx.StructInfo:
    """The unique values (1-D, or the input's rank over an axis), then the int64 index, inverse and
    counts vectors that are asked for; a tuple when there is more than the values."""
    x = tensor_arg(call, 0)
    flags = [_flag(call, i) for i in range(1, 5)]
    axis = _axis(call, x)
    values = tensor_like(x, None, None, 1 if axis is None else x.ndim)
    extra = [rx.TensorStructInfo(None, "int64", 1, vdevice=x.vdevice) for f in flags[1:] if f]
    return rx.TupleStructInfo((values, *extra)) if extra else values


def _packed(name: str) -> None:
    """Legalize ``relax.<name>`` to the pure packed call of ``relax.run.<name>``."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        func = op_api.ExternFunc(f"relax.run.{name}")
        return make_call("relax.call_pure_packed", (func, *call.args), sinfo_args=(sinfo_of(call),))

    legalize.handles_unknown_result = True  # type: ignore[attr-defined]  (the runtime sizes the result)
    legalize.__doc__ = f"``R.call_pure_packed(\"relax.run.{name}\", ...)`` with the call's struct info."
    register_legalize(f"relax.{name}", legalize)


_packed("nonzero")
_packed("unique")
