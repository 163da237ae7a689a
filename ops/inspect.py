"""``R.inspect.*``: the fields of a tensor's DLTensor (dtype code, bits and lanes, ndim, one
extent or stride, byte and element offset) as scalars. Each infers the value when the tensor's
struct info fixes it (a compact tensor with a known shape has compact strides and zero offsets, as
TVM assumes); the call itself stays (TVM's normalizer would replace it by that value, but tvmlite
builds IR without one, and TVM 0.27 prints the call). The VM reads the fields from the array.
``R.size`` (the number of elements) is here too, legalized as TVM legalizes it with these ops."""
from __future__ import annotations

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import prod
from ..ir.dtype import parse_dtype
from ..ir.block_builder import BlockBuilder
from ..ir.op import OpError, OpPattern, make_call, register_op
from ._common import arg_sinfo, describe, op_name, tensor_arg
from .legalization import register_legalize

# DLPack's type codes (DLDataTypeCode); bool is a 1-bit uint, as in TVM.
DLPACK_TYPE_CODES = {"int": 0, "uint": 1, "bool": 1, "float": 2, "handle": 3, "bfloat": 4}

# The tensor properties a Relax script may read (TVM's ``ExprWithOp`` properties) and the op each
# calls; None marks a field read further: ``x.dtype.<DTYPE_PROPERTIES>``, ``x.shape[i]``, ``x.strides[i]``.
TENSOR_PROPERTIES = {"ndim": "relax.inspect.tensor_ndim", "byte_offset": "relax.inspect.tensor_byte_offset",
                     "elem_offset": "relax.inspect.tensor_elem_offset", "dtype": None, "shape": None, "strides": None}
DTYPE_PROPERTIES = {"type_code": "relax.inspect.tensor_dtype_code", "bits": "relax.inspect.tensor_dtype_bits",
                    "lanes": "relax.inspect.tensor_dtype_lanes"}
INDEXED_PROPERTIES = {"shape": "relax.inspect.tensor_shape_i", "strides": "relax.inspect.tensor_stride_i"}


def _prim(dtype: str, value: int | tir.PrimExpr | None) -> rx.PrimStructInfo:
    """A scalar struct info of ``dtype``, with its value when known."""
    if isinstance(value, int):
        value = tir.IntImm(dtype, value)
    return rx.PrimStructInfo(dtype, value)


def _register_dtype_field(name: str, dtype: str, field: str) -> None:
    """``R.inspect.tensor_dtype_<field>``: a field of the tensor's dtype."""

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        if x.dtype == "void":
            return _prim(dtype, None)
        parsed = parse_dtype(x.dtype)
        value = {"code": DLPACK_TYPE_CODES[parsed.code], "bits": parsed.bits, "lanes": parsed.lanes}[field]
        return _prim(dtype, value)

    infer.__doc__ = f"The {field} of the tensor's dtype ({dtype})."
    register_op(f"relax.inspect.{name}", inputs=("tensor",))(infer)


_register_dtype_field("tensor_dtype_code", "uint8", "code")
_register_dtype_field("tensor_dtype_bits", "uint8", "bits")
_register_dtype_field("tensor_dtype_lanes", "uint16", "lanes")


@register_op("relax.inspect.tensor_ndim", inputs=("tensor",))
def _tensor_ndim(call: rx.Call) -> rx.StructInfo:
    """The tensor's number of dimensions (int32)."""
    x = tensor_arg(call, 0)
    return _prim("int32", x.ndim if x.ndim >= 0 else None)


def _axis(call: rx.Call) -> tuple[rx.TensorStructInfo, int | None]:
    """The tensor and, when constant, the axis (argument 1, an int64 scalar within the tensor's rank)."""
    x = tensor_arg(call, 0)
    axis = arg_sinfo(call, 1)
    if not isinstance(axis, rx.PrimStructInfo):
        raise OpError(f"{op_name(call)}: the axis must be a scalar (R.prim_value), got {describe(axis)}", 1)
    if not isinstance(axis.value, tir.IntImm):
        return x, None
    value = axis.value.value
    if value < 0:
        raise OpError(f"{op_name(call)}: the axis must not be negative, got {value}", 1)
    if x.ndim >= 0 and value >= x.ndim:
        raise OpError(f"{op_name(call)}: axis {value} is out of range for a tensor of {x.ndim} "
                      f"dimension{'s' if x.ndim != 1 else ''}", 1)
    return x, value


@register_op("relax.inspect.tensor_shape_i", inputs=("tensor", "axis"))
def _tensor_shape_i(call: rx.Call) -> rx.StructInfo:
    """The extent of one axis (int64)."""
    x, axis = _axis(call)
    if axis is None or x.shape is None:
        return _prim("int64", None)
    return _prim("int64", x.shape[axis])


@register_op("relax.inspect.tensor_stride_i", inputs=("tensor", "axis"))
def _tensor_stride_i(call: rx.Call) -> rx.StructInfo:
    """The stride of one axis in elements (int64): compact strides when the shape is known."""
    x, axis = _axis(call)
    if axis is None or x.shape is None:
        return _prim("int64", None)
    return _prim("int64", prod(x.shape[axis + 1:]))


def _register_offset(name: str, what: str) -> None:
    """``R.inspect.tensor_<what>_offset``: zero for a tensor of known shape (uint64)."""

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        return _prim("uint64", 0 if x.shape is not None else None)

    infer.__doc__ = f"The tensor's {what} offset (uint64)."
    register_op(f"relax.inspect.{name}", inputs=("tensor",))(infer)


_register_offset("tensor_byte_offset", "byte")
_register_offset("tensor_elem_offset", "element")


# R.size (TVM declares it with shape_of and legalizes it with the inspect ops): the number of
# elements, an int64 scalar tensor.
@register_op("relax.size", inputs=("input",), pattern=OpPattern.OPAQUE)
def _size(call: rx.Call) -> rx.StructInfo:
    """A 0-d int64 tensor: the product of the tensor's dims."""
    tensor_arg(call, 0)
    return rx.TensorStructInfo((), "int64")


@register_legalize("relax.size")
def _legalize_size(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """As TVM: ``R.prod(R.shape_to_tensor(R.shape_of(x)))`` (the shape bound first, then its
    tensor; LegalizeOps goes on to legalize the product)."""
    shape = bb.emit(make_call("relax.shape_of", (call.args[0],), {}))
    dims = bb.emit(make_call("relax.shape_to_tensor", (shape,), {}))
    return make_call("relax.prod", (dims,), {})
