"""Closures (``R.make_closure``, ``R.invoke_closure``, ``R.invoke_pure_closure``), as TVM's
LambdaLift writes them, and ``R.call_inplace_packed``, a packed call that overwrites some of its
arguments and is otherwise pure. None has a legalization."""
from __future__ import annotations

from ..ir import relax as rx
from ..ir.op import AttrField, InputForm, OpError, OpPattern, register_op
from ._common import check_inplace_indices, arg, arg_sinfo, describe, op_name, to_int_tuple
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
    check_inplace_indices(call, call.attrs["inplace_indices"], [arg_sinfo(call, i) for i in range(1, len(call.args))],
                          call.sinfo_args)
    return _declared_result(call)
