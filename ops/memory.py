"""The lowered memory ops TVM's passes write and its test scripts use: ``R.memory.*`` (storage,
tensors placed in storage, views), ``R.builtin.*`` (a plain allocation, a lifting barrier) and
``R.vm.*`` (the VM's allocation, kill and dynamic TIR call). Their inputs are all Relax values (TVM
passes dtypes as ``R.dtype``, scopes as ``R.str``, device indices as ``R.prim_value``), so they
print positionally; none has a legalization."""
from __future__ import annotations

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import can_prove_ge, format_expr, format_shape, prod, simplify
from ..ir.dtype import parse_dtype
from ..ir.op import InputForm, OpError, OpPattern, make_call, register_op
from ._common import arg, arg_sinfo, describe, op_name, shape_arg, tensor_arg

_VOID = rx.TupleStructInfo(())
_GLOBAL = rx.StringImm("global", struct_info=rx.ObjectStructInfo())
_DEVICE_0 = rx.PrimValue(tir.IntImm("int64", 0), struct_info=rx.PrimStructInfo("int64", tir.IntImm("int64", 0)))
_NO_CHANGE = rx.Tuple((), struct_info=_VOID)  # a view argument that keeps the input's value


def _dtype_input(call: rx.Call, i: int) -> str:
    """The dtype a ``R.dtype(...)`` argument names; "void" when it is another object value."""
    value = arg(call, i)
    if isinstance(value, rx.DataTypeImm):
        return value.value
    if not isinstance(arg_sinfo(call, i), rx.ObjectStructInfo):
        raise OpError(f"{op_name(call)}: the dtype must be a data type (R.dtype(\"float32\")), "
                      f"got {describe(arg_sinfo(call, i))}", i)
    return "void"


def _prim_input(call: rx.Call, i: int, what: str) -> None:
    """OpError unless argument ``i`` is an integer scalar (``R.prim_value``)."""
    sinfo = arg_sinfo(call, i)
    if not (isinstance(sinfo, rx.PrimStructInfo) and sinfo.dtype.startswith(("int", "uint"))):
        raise OpError(f"{op_name(call)}: the {what} must be an integer (R.prim_value), got {describe(sinfo)}", i)


def _string_input(call: rx.Call, i: int, what: str) -> None:
    """OpError unless argument ``i`` is a string (``R.str``)."""
    if not isinstance(arg(call, i), rx.StringImm):
        raise OpError(f"{op_name(call)}: the {what} must be a string (R.str(\"global\")), "
                      f"got {type(arg(call, i)).__name__}", i)


def _tensor_of(call: rx.Call, shape_i: int, dtype_i: int) -> rx.TensorStructInfo:
    """A tensor of the shape argument ``shape_i`` and the dtype argument ``dtype_i``."""
    shape = shape_arg(call, shape_i)
    dtype = _dtype_input(call, dtype_i)
    if shape.values is not None:
        return rx.TensorStructInfo(tuple(shape.values), dtype)
    return rx.TensorStructInfo(None, dtype, shape.ndim)


# ---------------------------------------------------------------- R.memory
@register_op("relax.memory.alloc_storage", inputs=("size", "virtual_device_index", "storage_scope", "dtype"),
             input_forms={"size": InputForm.SHAPE, "dtype": InputForm.DTYPE})
def _memory_alloc_storage(call: rx.Call) -> rx.StructInfo:
    """A storage object of ``size`` bytes (a shape) on a device, in a scope, for a dtype."""
    shape_arg(call, 0)
    _prim_input(call, 1, "virtual device index")
    _string_input(call, 2, "storage scope")
    _dtype_input(call, 3)
    return rx.ObjectStructInfo()


_ALLOC_TENSOR = dict(inputs=("storage", "offset", "shape", "dtype", "runtime_device_index"),
                     input_forms={"shape": InputForm.SHAPE, "dtype": InputForm.DTYPE},
                     input_defaults={"runtime_device_index": _DEVICE_0})


def _alloc_tensor_in_storage(call: rx.Call) -> rx.StructInfo:
    """A tensor of the given shape and dtype placed at ``offset`` in a storage (TVM does not check
    the storage argument's type)."""
    arg(call, 0)
    _prim_input(call, 1, "offset")
    out = _tensor_of(call, 2, 3)
    _prim_input(call, 4, "runtime device index")
    return out


register_op("relax.memory.alloc_tensor", **_ALLOC_TENSOR)(_alloc_tensor_in_storage)


@register_op("relax.memory.kill_storage", inputs=("storage",), pure=False)
def _kill_storage(call: rx.Call) -> rx.StructInfo:
    """Nothing: frees a storage."""
    arg(call, 0)
    return _VOID


@register_op("relax.memory.kill_tensor", inputs=("tensor",), pure=False)
def _kill_tensor(call: rx.Call) -> rx.StructInfo:
    """Nothing: frees a tensor."""
    arg(call, 0)
    return _VOID


def _element_bytes(dtype: str) -> int | None:
    """Bytes per (vector) element; None for an unknown dtype."""
    if dtype == "void":
        return None
    parsed = parse_dtype(dtype)
    return (parsed.bits * parsed.lanes + 7) // 8


def _num_elements(shape: tuple | None) -> tir.PrimExpr | None:
    """The element count of a shape; None when it is unknown."""
    return None if shape is None else prod(shape)


def _i64(v: int) -> tir.PrimExpr:
    """An int64 literal."""
    return tir.IntImm("int64", v)


def _exceeds(a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
    """True when ``a > b`` provably."""
    return can_prove_ge(a, tir.Add(b, _i64(1)))


def _is_void(sinfo: rx.StructInfo) -> bool:
    """True for the empty tuple, which view arguments use for "no change"."""
    return isinstance(sinfo, rx.TupleStructInfo) and not sinfo.fields


@register_op("relax.memory.view", inputs=("data", "shape", "dtype", "relative_byte_offset"),
             input_forms={"shape": InputForm.SHAPE, "dtype": InputForm.DTYPE},
             input_defaults={"shape": _NO_CHANGE, "dtype": make_call("relax.null_value", ()),
                             "relative_byte_offset": _NO_CHANGE})
def _view(call: rx.Call) -> rx.StructInfo:
    """The same bytes seen with another shape, dtype or byte offset (an empty tuple keeps the
    input's); a view proven to reach past the end of its input is refused."""
    data = tensor_arg(call, 0)
    shape_s = None if _is_void(arg_sinfo(call, 1)) else shape_arg(call, 1)
    new_dtype = None if _is_void(arg_sinfo(call, 2)) else _dtype_input(call, 2)
    offset: tir.PrimExpr | None = _i64(0)
    if not _is_void(arg_sinfo(call, 3)):
        off = arg_sinfo(call, 3)
        if not isinstance(off, rx.PrimStructInfo) or off.dtype != "int64":
            raise OpError(f"{op_name(call)}: the relative byte offset must be an int64 scalar "
                          f"(R.prim_value), got {describe(off)}", 3)
        offset = off.value
    if shape_s is not None and shape_s.values is not None:
        out_shape, out_ndim = tuple(shape_s.values), len(shape_s.values)
    elif shape_s is not None:
        out_shape, out_ndim = None, shape_s.ndim
    else:
        out_shape, out_ndim = data.shape, data.ndim
    out_dtype = new_dtype if new_dtype is not None else data.dtype
    in_n, out_n = _num_elements(data.shape), _num_elements(out_shape)
    in_size, out_size = _element_bytes(data.dtype), _element_bytes(out_dtype)
    too_big = "a view must not reach past the end of the tensor it views"
    if None not in (in_n, out_n, in_size, out_size):
        in_bytes = tir.Mul(in_n, _i64(in_size))
        out_bytes = tir.Mul(out_n, _i64(out_size))
        end = tir.Add(out_bytes, offset) if offset is not None else out_bytes
        if _exceeds(end, in_bytes):
            changed = 1 if shape_s is not None else 2 if new_dtype is not None else 3
            raise OpError(f"{op_name(call)}: {too_big}: a view of {format_shape(out_shape)} {out_dtype} "
                          f"at byte offset {format_expr(offset) if offset is not None else 'unknown'} ends at "
                          f"byte {format_expr(simplify(end))}, but the tensor has {format_expr(simplify(in_bytes))} "
                          f"bytes", changed)
    elif None not in (in_size, out_size) and shape_s is None:
        if out_size > in_size:
            raise OpError(f"{op_name(call)}: {too_big}: changing the dtype from {data.dtype} to "
                          f"{out_dtype} grows each element from {in_size} to {out_size} bytes "
                          f"(give the view a new shape)", 2)
    elif None not in (in_n, out_n) and new_dtype is None:
        if _exceeds(out_n, in_n):
            raise OpError(f"{op_name(call)}: {too_big}: {format_shape(out_shape)} has {format_expr(out_n)} "
                          f"elements, the tensor {format_shape(data.shape)} only {format_expr(in_n)}", 1)
    elif offset is not None and shape_s is None and new_dtype is None:
        if _exceeds(offset, _i64(0)):
            raise OpError(f"{op_name(call)}: {too_big}: an offset of {format_expr(offset)} bytes with the "
                          f"same shape and dtype", 3)
    if out_shape is not None:
        return rx.TensorStructInfo(out_shape, out_dtype, vdevice=data.vdevice)
    return rx.TensorStructInfo(None, out_dtype, out_ndim, vdevice=data.vdevice)


@register_op("relax.memory.ensure_zero_offset", inputs=("data",))
def _ensure_zero_offset(call: rx.Call) -> rx.StructInfo:
    """The argument's own struct info (a tensor is copied when its element offset is not zero)."""
    return arg_sinfo(call, 0)


# ---------------------------------------------------------------- R.builtin
@register_op("relax.builtin.alloc_tensor", inputs=("shape", "dtype", "runtime_device_index", "storage_scope"),
             input_forms={"shape": InputForm.SHAPE, "dtype": InputForm.DTYPE},
             input_defaults={"storage_scope": _GLOBAL})
def _builtin_alloc_tensor(call: rx.Call) -> rx.StructInfo:
    """A fresh tensor of the given shape and dtype."""
    out = _tensor_of(call, 0, 1)
    _prim_input(call, 2, "runtime device index")
    _string_input(call, 3, "storage scope")
    return out


@register_op("relax.builtin.stop_lift_params", inputs=("x",))
def _stop_lift_params(call: rx.Call) -> rx.StructInfo:
    """The input itself: marks that its consumers stay out of the lifted parameter transform."""
    return arg_sinfo(call, 0)


# ---------------------------------------------------------------- R.vm
@register_op("relax.vm.alloc_storage", inputs=("size", "runtime_device_index", "dtype", "storage_scope"),
             input_forms={"size": InputForm.SHAPE, "dtype": InputForm.DTYPE},
             input_defaults={"storage_scope": _GLOBAL})
def _vm_alloc_storage(call: rx.Call) -> rx.StructInfo:
    """A VM storage object of ``prod(size)`` elements of the dtype."""
    shape_arg(call, 0)
    _prim_input(call, 1, "runtime device index")
    _dtype_input(call, 2)
    _string_input(call, 3, "storage scope")
    return rx.ObjectStructInfo()


register_op("relax.vm.alloc_tensor", **_ALLOC_TENSOR)(_alloc_tensor_in_storage)


@register_op("relax.vm.kill_object", inputs=("obj",), pure=False)
def _kill_object(call: rx.Call) -> rx.StructInfo:
    """Nothing: clears the VM register holding the object."""
    arg(call, 0)
    return _VOID


@register_op("relax.vm.call_tir_dyn", inputs=("func", "args"), input_forms={"args": InputForm.ARGS},
             pure=False, pattern=OpPattern.OPAQUE)
def _call_tir_dyn(call: rx.Call) -> rx.StructInfo:
    """Nothing: calls a TIR function on tensors (outputs included) and a trailing shape of its
    symbolic arguments, writing the outputs in place."""
    if not isinstance(arg_sinfo(call, 1), rx.TupleStructInfo):
        raise OpError(f"{op_name(call)}: the arguments must be a tuple, got {describe(arg_sinfo(call, 1))}", 1)
    return _VOID
