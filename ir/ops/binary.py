"""Broadcasting two-input ops (``R.add``, ``R.less``, ...), ``R.where`` and the legacy ``R.ewise_fma``."""
from __future__ import annotations

from .. import relax as rx
from ..arith import can_prove_not_equal, format_shape
from ..op import OpError, OpPattern, register_op
from ._common import (arg_sinfo, binary_dtype, broadcast_shapes, op_name, require_integer,
                      tensor_arg, tensor_like)


def _broadcast_sinfo(call: rx.Call, tensors: list[rx.TensorStructInfo], dtype: str) -> rx.TensorStructInfo:
    """The broadcast of several tensors' shapes, with ``dtype``; shape unknown when undecidable."""
    ndims = [t.ndim for t in tensors]
    ndim = -1 if -1 in ndims else max(ndims)
    shape = tensors[0].shape
    for i, t in enumerate(tensors[1:], 1):
        if shape is None or t.shape is None:
            shape = None
            break
        shape = broadcast_shapes(call, shape, t.shape, i)
    if shape is not None:
        return rx.TensorStructInfo(shape, dtype, vdevice=tensors[0].vdevice)
    return rx.TensorStructInfo(None, dtype, ndim, vdevice=tensors[0].vdevice)


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
    register_op(f"relax.{name}", inputs=("x1", "x2"), pattern=OpPattern.BROADCAST)(infer)


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
