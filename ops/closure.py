"""Closures (``R.make_closure``, ``R.invoke_closure``, ``R.invoke_pure_closure``), as TVM's
LambdaLift writes them, and ``R.call_inplace_packed``, a packed call that overwrites some of its
arguments and is otherwise pure. None has a legalization."""
from __future__ import annotations

from ..ir import relax as rx
from ..ir.arith import can_prove_not_equal, format_shape
from ..ir.op import AttrField, InputForm, OpError, OpPattern, register_op
from ._common import arg, arg_sinfo, describe, op_name, to_int_tuple
from .builtin import _check_extern_callee


def _declared_result(call: rx.Call) -> rx.StructInfo:
    """The ``sinfo_args`` of the call: one struct info, a tuple of several, R.Object for none."""
    if not call.sinfo_args:
        return rx.ObjectStructInfo()
    if len(call.sinfo_args) == 1:
        return call.sinfo_args[0]
    return rx.TupleStructInfo(tuple(call.sinfo_args))


def _args_tuple(call: rx.Call) -> rx.TupleStructInfo:
    """The argument tuple (argument 1)."""
    args = arg_sinfo(call, 1)
    if not isinstance(args, rx.TupleStructInfo):
        raise OpError(f"{op_name(call)}: the arguments must be a tuple such as (x, y), got {describe(args)}", 1)
    return args


@register_op("relax.make_closure", inputs=("func", "args"), input_forms={"args": InputForm.ARGS})
def _make_closure(call: rx.Call) -> rx.StructInfo:
    """A closure object: the function with its first arguments bound."""
    arg(call, 0)
    _args_tuple(call)
    return rx.ObjectStructInfo()


def _invoke(call: rx.Call) -> rx.StructInfo:
    """The declared ``sinfo_args`` of calling the closure (argument 0) on the argument tuple."""
    arg(call, 0)
    _args_tuple(call)
    return _declared_result(call)


register_op("relax.invoke_closure", inputs=("closure", "args"), input_forms={"args": InputForm.ARGS},
            takes_sinfo_args=True, pure=False)(_invoke)
register_op("relax.invoke_pure_closure", inputs=("closure", "args"), input_forms={"args": InputForm.ARGS},
            takes_sinfo_args=True)(_invoke)


@register_op("relax.call_inplace_packed", inputs=("func", "args"), variadic=True,
             input_forms={"func": InputForm.PACKED_FUNC},
             attrs=(AttrField("inplace_indices", convert=to_int_tuple),), takes_sinfo_args=True,
             pattern=OpPattern.OPAQUE)
def _call_inplace_packed(call: rx.Call) -> rx.StructInfo:
    """The declared ``sinfo_args``; output ``i`` is argument ``inplace_indices[i]`` overwritten
    (-1: a fresh value), so that argument must be a tensor of the output's shape and dtype."""
    _check_extern_callee(call)
    if not call.sinfo_args:
        raise OpError(f"{op_name(call)}: needs sinfo_args, the struct info of its result", "sinfo_args")
    outputs = call.sinfo_args
    indices = call.attrs["inplace_indices"]
    values = call.args[1:]
    if len(indices) != len(outputs):
        raise OpError(f"{op_name(call)}: inplace_indices has {len(indices)} entries for {len(outputs)} "
                      f"output{'s' if len(outputs) != 1 else ''}", "inplace_indices")
    used = [i for i in indices if i != -1]
    if not used:
        raise OpError(f"{op_name(call)}: at least one output must be computed in place "
                      f"(inplace_indices are all -1)", "inplace_indices")
    if len(set(used)) != len(used):
        raise OpError(f"{op_name(call)}: inplace_indices {list(indices)} use an argument twice", "inplace_indices")
    for out_i, in_i in enumerate(indices):
        if in_i == -1:
            continue
        if not 0 <= in_i < len(values):
            raise OpError(f"{op_name(call)}: inplace index {in_i} is out of range for {len(values)} "
                          f"argument{'s' if len(values) != 1 else ''}", "inplace_indices")
        src, dst = arg_sinfo(call, in_i + 1), outputs[out_i]
        if not isinstance(src, rx.TensorStructInfo) or not isinstance(dst, rx.TensorStructInfo):
            raise OpError(f"{op_name(call)}: output {out_i} overwrites argument {in_i} in place, so both "
                          f"must be tensors, got {describe(src)} and {describe(dst)}", "inplace_indices")
        same_dtype = "void" in (src.dtype, dst.dtype) or src.dtype == dst.dtype
        same_shape = src.shape is None or dst.shape is None or (
            len(src.shape) == len(dst.shape)
            and not any(can_prove_not_equal(a, b) for a, b in zip(src.shape, dst.shape)))
        if not (same_dtype and same_shape):
            raise OpError(f"{op_name(call)}: output {out_i} ({format_shape(dst.shape)}, {dst.dtype}) cannot "
                          f"overwrite argument {in_i} ({format_shape(src.shape)}, {src.dtype})", "inplace_indices")
    return _declared_result(call)
