"""The call family (call_tir, call_tir_inplace, call_tir_with_grad, call_dps_packed,
call_pure_packed, call_builtin_with_ctx, call_py_func) and the built-ins print, assert_op, shape_of,
shape_to_tensor, null_value, hint_on_device and to_vdevice. None has a legalization: the calls run
what they name, and the VM runs the built-ins itself. dist.call_tir_local_view is with the
distributed ops."""
from __future__ import annotations

from collections.abc import Mapping

from ..ir import relax as rx
from ..ir import tir
from ..ir.global_info import VDevice, resolve_vdevice
from ..ir.module import GlobalVar
from ..ir.node import Map
from ..ir.op import AttrField, InputForm, OpError, OpPattern, register_op
from ._common import check_inplace_indices, arg, arg_sinfo, describe, op_name, tensor_arg, to_int_tuple

_EMPTY_TUPLE = rx.TupleStructInfo(())


def _out_sinfo(call: rx.Call) -> rx.StructInfo:
    """The declared result (``out_sinfo=``): a tensor or a tuple of tensors."""
    if len(call.sinfo_args) != 1:
        raise OpError(f"{op_name(call)}: needs out_sinfo, the struct info of its result "
                      f"(got {len(call.sinfo_args)})", "out_sinfo")
    out = call.sinfo_args[0]
    fields = out.fields if isinstance(out, rx.TupleStructInfo) else (out,)
    for f in fields:
        if not isinstance(f, (rx.TensorStructInfo, rx.DTensorStructInfo)):
            raise OpError(f"{op_name(call)}: out_sinfo must be a tensor or a list of tensors, "
                          f"got {describe(f)}", "out_sinfo")
    return out


def _dps_args(call: rx.Call) -> rx.TupleStructInfo:
    """The argument tuple (argument 1) and the optional ``tir_vars`` shape (argument 2)."""
    args = arg_sinfo(call, 1)
    if not isinstance(args, rx.TupleStructInfo):
        raise OpError(f"{op_name(call)}: the arguments must be a tuple such as (x, y), got {describe(args)}", 1)
    if len(call.args) > 2 and not isinstance(arg_sinfo(call, 2), rx.ShapeStructInfo):
        raise OpError(f"{op_name(call)}: tir_vars must be a shape (R.shape([...])), "
                      f"got {describe(arg_sinfo(call, 2))}", 2)
    return args


def _check_prim_func_callee(call: rx.Call) -> None:
    """The callee of call_tir is a module function: a GlobalVar (``cls.f``)."""
    func = arg(call, 0)
    if not isinstance(func, GlobalVar):
        raise OpError(f"{op_name(call)}: the callee must be a TIR function of the module (cls.name), "
                      f"got {type(func).__name__}", 0)


def _check_extern_callee(call: rx.Call) -> None:
    """The callee of the packed-call ops is an extern function (``"name"``) or a callable value."""
    func = arg(call, 0)
    if isinstance(func, rx.ExternFunc):
        return
    sinfo = arg_sinfo(call, 0)
    if not isinstance(sinfo, rx.FuncStructInfo):
        raise OpError(f"{op_name(call)}: the callee must be a packed function name, got {describe(sinfo)}", 0)


def _sinfo_arg_or_object(call: rx.Call) -> rx.StructInfo:
    """The single ``sinfo_args`` entry, R.Object when there is none."""
    if len(call.sinfo_args) > 1:
        raise OpError(f"{op_name(call)}: sinfo_args takes one struct info (use R.Tuple for several "
                      f"results), got {len(call.sinfo_args)}", "sinfo_args")
    return call.sinfo_args[0] if call.sinfo_args else rx.ObjectStructInfo()


# How scripts write the call_tir family: R.call_tir(f, args, out_sinfo=..., <attributes>, tir_vars=...).
_CALL_TIR_SCRIPT = dict(inputs=("func", "args", "tir_vars"), num_optional=1, keyword_inputs=("tir_vars",),
                        input_forms={"func": InputForm.PRIM_FUNC, "args": InputForm.ARGS,
                                     "tir_vars": InputForm.SHAPE},
                        out_sinfo=True, pattern=OpPattern.OPAQUE)


@register_op("relax.call_tir", hide_inferred_annotation=True, dtensor_script_name="dist.call_tir", **_CALL_TIR_SCRIPT)
def _call_tir(call: rx.Call) -> rx.StructInfo:
    """The declared ``out_sinfo``: call_tir allocates its outputs and calls a TIR function."""
    _check_prim_func_callee(call)
    _dps_args(call)
    return _out_sinfo(call)


@register_op("relax.call_tir_inplace", attrs=(AttrField("inplace_indices", convert=to_int_tuple),),
             script_order=("func", "args", "inplace_indices", "out_sinfo", "tir_vars"), **_CALL_TIR_SCRIPT)
def _call_tir_inplace(call: rx.Call) -> rx.StructInfo:
    """The declared ``out_sinfo``; ``inplace_indices[i]`` names the input that output ``i`` overwrites."""
    _check_prim_func_callee(call)
    args = _dps_args(call)
    out = _out_sinfo(call)
    outputs = out.fields if isinstance(out, rx.TupleStructInfo) else (out,)
    check_inplace_indices(call, call.attrs["inplace_indices"], args.fields, outputs, "input")
    return out


def _to_map(value: object) -> Map:
    """A dict attribute (``te_grad_kwargs``): None is the empty dict."""
    if value is None:
        return Map(())
    if not isinstance(value, Mapping):
        raise OpError(f"expected a dict, got {type(value).__name__}")
    return value if isinstance(value, Map) else Map(value)


@register_op("relax.call_tir_with_grad",
             attrs=(AttrField("te_grad_name", convert=str),
                    AttrField("te_grad_kwargs", default=Map(()), convert=_to_map, print_default=False)),
             **_CALL_TIR_SCRIPT)
def _call_tir_with_grad(call: rx.Call) -> rx.StructInfo:
    """The declared ``out_sinfo``: a call_tir whose gradient is the TE function ``te_grad_name``."""
    _check_prim_func_callee(call)
    _dps_args(call)
    return _out_sinfo(call)


_PACKED_FORMS = {"func": InputForm.PACKED_FUNC, "args": InputForm.ARGS}


@register_op("relax.call_dps_packed", inputs=("func", "args"), input_forms=_PACKED_FORMS, out_sinfo=True,
             hide_inferred_annotation=True, pattern=OpPattern.OPAQUE)
def _call_dps_packed(call: rx.Call) -> rx.StructInfo:
    """The declared ``out_sinfo`` of a destination-passing packed function."""
    _check_extern_callee(call)
    _dps_args(call)
    return _out_sinfo(call)


@register_op("relax.call_pure_packed", inputs=("func", "args"), variadic=True,
             input_forms={"func": InputForm.PACKED_FUNC}, takes_sinfo_args=True, pattern=OpPattern.OPAQUE)
def _call_pure_packed(call: rx.Call) -> rx.StructInfo:
    """The ``sinfo_args`` of a packed function declared pure."""
    _check_extern_callee(call)
    return _sinfo_arg_or_object(call)


@register_op("relax.call_builtin_with_ctx", inputs=("func", "args"), input_forms=_PACKED_FORMS,
             takes_sinfo_args=True, pattern=OpPattern.OPAQUE)
def _call_builtin_with_ctx(call: rx.Call) -> rx.StructInfo:
    """The ``sinfo_args`` of a VM builtin called with the VM context."""
    _check_extern_callee(call)
    if not isinstance(arg_sinfo(call, 1), rx.TupleStructInfo):
        raise OpError(f"{op_name(call)}: the arguments must be a tuple, got {describe(arg_sinfo(call, 1))}", 1)
    return _sinfo_arg_or_object(call)


@register_op("relax.call_py_func", inputs=("func_name", "args"), input_forms={"args": InputForm.ARGS},
             out_sinfo=True, pattern=OpPattern.OPAQUE)
def _call_py_func(call: rx.Call) -> rx.StructInfo:
    """The declared ``out_sinfo`` of a Python function the runtime calls by name (TVM 0.27's
    BasePyModule functions; tvmlite's ``register_py_func``)."""
    if not isinstance(arg(call, 0), rx.StringImm):
        raise OpError(f"{op_name(call)}: the function must be named by a string, got {describe(arg_sinfo(call, 0))}",
                      0)
    _dps_args(call)
    return _out_sinfo(call)


def _check_format(call: rx.Call, i: int) -> None:
    """OpError unless argument ``i`` is a string literal (``R.str``)."""
    if not isinstance(arg(call, i), rx.StringImm):
        raise OpError(f"{op_name(call)}: the format must be a string (R.str(\"...\")), "
                      f"got {type(arg(call, i)).__name__}", i)


@register_op("relax.print", inputs=("format", "values"), variadic=True, pure=False, pattern=OpPattern.OPAQUE,
             keyword_inputs=("format",), input_defaults={"format": ""})
def _print(call: rx.Call) -> rx.StructInfo:
    """Nothing (an empty tuple); prints the values with ``format`` (argument 0) at run time."""
    _check_format(call, 0)
    return _EMPTY_TUPLE


@register_op("relax.assert_op", inputs=("condition", "format", "format_args"), variadic=True, pure=False,
             pattern=OpPattern.OPAQUE, keyword_inputs=("format",), input_defaults={"format": ""})
def _assert_op(call: rx.Call) -> rx.StructInfo:
    """Nothing (an empty tuple); fails at run time unless the bool scalar condition holds."""
    cond = arg_sinfo(call, 0)
    ok = (isinstance(cond, rx.PrimStructInfo) and cond.dtype == "bool") or (
        isinstance(cond, rx.TensorStructInfo) and cond.dtype in ("bool", "void") and cond.ndim in (0, -1))
    if not ok:
        raise OpError(f"{op_name(call)}: the condition must be a bool scalar, got {describe(cond)}", 0)
    _check_format(call, 1)
    return _EMPTY_TUPLE


@register_op("relax.shape_of", inputs=("x",), pattern=OpPattern.OPAQUE)
def _shape_of(call: rx.Call) -> rx.StructInfo:
    """The tensor's shape as a shape value."""
    x = tensor_arg(call, 0)
    return rx.ShapeStructInfo(x.shape, x.ndim)


@register_op("relax.shape_to_tensor", inputs=("expr",), pattern=OpPattern.OPAQUE)
def _shape_to_tensor(call: rx.Call) -> rx.StructInfo:
    """A shape value as a 1-D int64 tensor of its dims."""
    shape = arg_sinfo(call, 0)
    if not isinstance(shape, rx.ShapeStructInfo):
        raise OpError(f"{op_name(call)}: expects a shape value (R.shape([...])), got {describe(shape)}", 0)
    if shape.ndim == -1:
        return rx.TensorStructInfo(None, "int64", 1)
    return rx.TensorStructInfo((tir.IntImm("int64", shape.ndim),), "int64")


@register_op("relax.null_value", inputs=(), pattern=OpPattern.OPAQUE)
def _null_value(call: rx.Call) -> rx.StructInfo:
    """A null object."""
    return rx.ObjectStructInfo()


@register_op("relax.hint_on_device", inputs=("data",),
             attrs=(AttrField("device_type", convert=int, script_group="device"),
                    AttrField("index", convert=int, script_group="device"),
                    AttrField("memory_scope", default="global", convert=str)),
             positional_attrs=True, pattern=OpPattern.OPAQUE)
def _hint_on_device(call: rx.Call) -> rx.StructInfo:
    """The data's own struct info: the hint only says on which device (and memory scope) it lives."""
    return arg_sinfo(call, 0)


def _to_vdevice_name(value: object) -> str:
    """A vdevice reference in its printed form (``"llvm"`` -> ``"llvm:0:global"``)."""
    if not isinstance(value, (str, VDevice)):
        raise OpError(f"dst_vdevice is a vdevice reference such as \"cuda:0\", got {type(value).__name__}",
                      "dst_vdevice")
    try:
        return resolve_vdevice(value, None)
    except ValueError as err:
        raise OpError(str(err), "dst_vdevice") from None


@register_op("relax.to_vdevice", inputs=("data",),
             attrs=(AttrField("dst_vdevice", convert=_to_vdevice_name, reference="vdevice"),),
             pattern=OpPattern.OPAQUE)
def _to_vdevice(call: rx.Call) -> rx.StructInfo:
    """The data's struct info on the destination virtual device."""
    data = tensor_arg(call, 0)
    return rx.TensorStructInfo(data.shape, data.dtype, data.ndim, call.attrs["dst_vdevice"])
