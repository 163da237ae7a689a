"""Broadcasting two-input ops (``R.add``, ``R.less``, ...), ``R.where`` and the legacy ``R.ewise_fma``,
each declared with its legalization (a scalar constant operand is inlined into the kernel)."""
from __future__ import annotations

from typing import Any, Callable

from .. import topi
from ..ir import relax as rx
from ..ir.arith import can_prove_not_equal, format_shape
from ..ir.block_builder import BlockBuilder
from ..ir.op import OpError, OpPattern, register_op
from ..ir.struct_info import has_known_shapes, sinfo_of
from ._common import (arg_sinfo, binary_dtype, broadcast_shapes, dtensor_elementwise, op_name, require_integer,
                      tensor_arg, tensor_like)
from .legalization import (Check, LegalizeFunc, arg_text, call_te_checked, call_topi, dim_text, register_legalize,
                           require_broadcast, require_equal, scalar_const, shape_text, site_text)


def _broadcast_sinfo(call: rx.Call, tensors: list[rx.TensorStructInfo], dtype: str) -> rx.TensorStructInfo:
    """The broadcast of several tensors' shapes, with ``dtype``; shape unknown when undecidable."""
    ndims = [t.ndim for t in tensors]
    ndim = -1 if -1 in ndims else max(ndims)
    devices = {t.vdevice for t in tensors if t.vdevice is not None}
    if len(devices) > 1:  # TVM: the inputs of a broadcasting op live on one device
        raise OpError(f"{op_name(call)}: the inputs are on different virtual devices "
                      f"({', '.join(sorted(devices))})", 1)
    vdevice = next(iter(devices), None)
    shape = tensors[0].shape
    for i, t in enumerate(tensors[1:], 1):
        if shape is None or t.shape is None:
            shape = None
            break
        shape = broadcast_shapes(call, shape, t.shape, i)
    if shape is not None:
        return rx.TensorStructInfo(shape, dtype, vdevice=vdevice)
    return rx.TensorStructInfo(None, dtype, ndim, vdevice=vdevice)


def _binary(name: str, kind: str = "arith") -> None:
    """Register ``relax.<name>``: arith (result in the inputs' dtype), compare (bool result) or
    bitwise (integer inputs)."""

    def infer(call: rx.Call) -> rx.StructInfo:
        a, b = tensor_arg(call, 0, allow_prim=True), tensor_arg(call, 1, allow_prim=True)
        dtype = binary_dtype(call, a.dtype, b.dtype)
        if kind == "bitwise":
            require_integer(call, a, 0)
        out_dtype = "bool" if kind == "compare" else dtype
        if all(isinstance(arg_sinfo(call, i), rx.PrimStructInfo) for i in (0, 1)):
            return rx.PrimStructInfo(out_dtype)
        return _broadcast_sinfo(call, [a, b], out_dtype)

    infer.__doc__ = f"Struct info of R.{name}: the broadcast of both inputs' shapes."
    register_op(f"relax.{name}", inputs=("x1", "x2"), pattern=OpPattern.BROADCAST,
                dtensor_rule=dtensor_elementwise)(infer)


for _name in ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum",
              "mod", "floor_mod", "logical_and", "logical_or", "logical_xor"):
    _binary(_name)
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    _binary(_name, "compare")
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
    _binary(_name, "bitwise")


@register_op("relax.where", inputs=("condition", "x1", "x2"), pattern=OpPattern.BROADCAST)
def _where(call: rx.Call) -> rx.StructInfo:
    """The broadcast of the three shapes, in the branches' dtype; the condition must be bool."""
    cond, a, b = (tensor_arg(call, i) for i in range(3))
    if cond.dtype not in ("bool", "void"):
        raise OpError(f"{op_name(call)}: the condition must be a bool tensor, got dtype {cond.dtype}", 0)
    dtype = binary_dtype(call, a.dtype, b.dtype, 2)
    return _broadcast_sinfo(call, [cond, a, b], dtype)


@register_op("relax.ewise_fma", inputs=("x1", "x2", "x3"), pattern=OpPattern.ELEMWISE)
def _ewise_fma(call: rx.Call) -> rx.StructInfo:
    """``x1 * x2 + x3`` elementwise (legacy op): three tensors of one shape and dtype."""
    x = [tensor_arg(call, i) for i in range(3)]
    dtype = x[0].dtype
    for i in (1, 2):
        dtype = binary_dtype(call, dtype, x[i].dtype, i)
        if x[0].ndim >= 0 and x[i].ndim >= 0 and x[0].ndim != x[i].ndim:
            raise OpError(f"{op_name(call)}: all inputs need the same number of dimensions, "
                          f"got {x[0].ndim} and {x[i].ndim}", i)
        if x[0].shape is not None and x[i].shape is not None and any(
                can_prove_not_equal(p, q) for p, q in zip(x[0].shape, x[i].shape)):
            raise OpError(f"{op_name(call)}: all inputs need the same shape, got "
                          f"{format_shape(x[0].shape)} and {format_shape(x[i].shape)}", i)
    known = next((t for t in x if t.shape is not None), x[0])
    return tensor_like(known, known.shape, dtype)


# Legalizations: each op's topi compute, as LegalizeOps turns its calls into R.call_tir.

register_legalize("relax.where", call_topi(topi.where))


@register_legalize("relax.ewise_fma")
def _legalize_ewise_fma(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``x * y + z`` of three tensors of one shape."""

    def checks(x: Any, y: Any, z: Any) -> list[Check]:
        out: list[Check] = []
        for t, arg in ((y, call.args[1]), (z, call.args[2])):
            for j, (d, want) in enumerate(zip(t.shape, x.shape)):
                out += require_equal(d, want, lambda j=j, d=d, want=want, t=t, arg=arg: (
                    f"{site_text(call)}: dim {j} of {arg_text(arg)} {shape_text(t.shape)} is {dim_text(d)} but dim "
                    f"{j} of {arg_text(call.args[0])} {shape_text(x.shape)} is {dim_text(want)}; they must be equal"))
        return out

    return call_te_checked(bb, checks, topi.ewise_fma, *call.args)


def _legalize_binary(te_func: Callable[..., Any]) -> LegalizeFunc:
    """A broadcasting binary op; a scalar constant operand is inlined into the PrimFunc. When the
    result's shape is unknown (symbolic dims whose relation is not known, ``(n,)`` with ``(m,)``),
    the kernel computes the broadcast shape and first checks that the dims broadcast."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        arg0, arg1 = call.args[0], scalar_const(call.args[1])
        if isinstance(arg1, rx.Expr):  # only one side is inlined, the right one first (as TVM)
            arg0 = scalar_const(arg0)
        if has_known_shapes(sinfo_of(call)):
            return bb.call_te(te_func, arg0, arg1)

        def checks(a: Any, b: Any, checked_at_run_time: bool) -> list[Check]:
            if not (hasattr(a, "shape") and hasattr(b, "shape")):
                return []
            out: list[Check] = []
            for k in range(1, min(a.ndim, b.ndim) + 1):
                da, db = a.shape[-k], b.shape[-k]
                out += require_broadcast(da, db, lambda da=da, db=db, k=k: (
                    f"{site_text(call)}: dim {a.ndim - k} of {arg_text(call.args[0])} {shape_text(a.shape)} is "
                    f"{dim_text(da)} and dim {b.ndim - k} of {arg_text(call.args[1])} {shape_text(b.shape)} is "
                    f"{dim_text(db)}; they do not broadcast (they must be equal, or one of them 1)"))
            return out

        return call_te_checked(bb, checks, te_func, arg0, arg1, checked_at_run_time=True)

    legalize.handles_unknown_result = True  # type: ignore[attr-defined]
    return legalize


for _name in ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum", "mod",
              "floor_mod", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
              "bitwise_xor", "left_shift", "right_shift", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal"):
    register_legalize(f"relax.{_name}", _legalize_binary(getattr(topi, _name)))


# issue 16: atan2 and log_add_exp, broadcasting arithmetic in the inputs' dtype (TVM accepts integers too)
for _name in ("atan2", "log_add_exp"):
    _binary(_name)
    register_legalize(f"relax.{_name}", _legalize_binary(getattr(topi, _name)))
