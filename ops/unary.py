"""Elementwise one-input ops: arithmetic (``R.exp``), checks (``R.isnan``), ``R.astype``, ``R.clip``,
``R.wrap_param``.

Each is declared with its legalization: the unary math ops become ``tir_<op>`` PrimFuncs (as TVM
names them, to avoid libc names)."""
from __future__ import annotations

from typing import Any

from .. import topi
from ..ir import relax as rx
from ..ir.block_builder import BlockBuilder
from ..ir.dtype import to_numpy_dtype
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ._common import (arg_sinfo, describe, op_name, register_unary, tensor_arg, tensor_like, to_dtype,
                      unary_sinfo)
from .legalization import call_topi, register_legalize

# Ops that need a float input, as TVM requires (exp of an int tensor is rejected).
_FLOAT_ONLY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "log",
               "rsqrt", "sigmoid", "sin", "sinh", "sqrt", "tan", "tanh", "erf")
_ANY_DTYPE = ("abs", "ceil", "floor", "negative", "round", "sign", "square", "trunc", "logical_not")

for _name in _FLOAT_ONLY:
    register_unary(_name, require="float")
for _name in _ANY_DTYPE:
    register_unary(_name)
register_unary("bitwise_not", require="int")
for _name in ("isnan", "isinf", "isfinite"):
    register_unary(_name, out_dtype="bool")


@register_op("relax.astype", inputs=("x",), attrs=(AttrField("dtype", convert=to_dtype),),
             pattern=OpPattern.ELEMWISE)
def _astype(call: rx.Call) -> rx.StructInfo:
    """The input's shape with the new dtype."""
    dtype = call.attrs["dtype"]
    if dtype == "void":
        raise OpError(f"{op_name(call)}: needs a dtype to convert to", "dtype")
    return unary_sinfo(call, out_dtype=dtype)


@register_op("relax.clip", inputs=("x", "min", "max"), pattern=OpPattern.ELEMWISE)
def _clip(call: rx.Call) -> rx.StructInfo:
    """The input's struct info; the bounds are scalars (``R.prim_value``)."""
    x = tensor_arg(call, 0)
    for i in (1, 2):
        bound = arg_sinfo(call, i)
        if not isinstance(bound, rx.PrimStructInfo):
            raise OpError(f"{op_name(call)}: the {('min', 'max')[i - 1]} bound must be a scalar "
                          f"(R.prim_value), got {describe(bound)}", i)
    return tensor_like(x, x.shape)


# Legalizations: each op's topi compute, as LegalizeOps turns its calls into R.call_tir.

_UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not", "ceil", "cos", "cosh", "exp",
          "floor", "isfinite", "isinf", "isnan", "log", "logical_not", "negative", "round", "rsqrt", "sigmoid",
          "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
for _name in _UNARY:
    register_legalize(f"relax.{_name}", call_topi(getattr(topi, _name), f"tir_{_name}"))
register_legalize("relax.square", call_topi(lambda x: topi.multiply(x, x), "tir_square"))
register_legalize("relax.clip", call_topi(topi.clip, "tir_clip"))


@register_legalize("relax.erf")
def _legalize_erf(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """erf, computed in float32 for float16 inputs."""

    def te_erf(x: Any) -> Any:
        if x.dtype == "float16":
            return topi.cast(topi.erf(topi.cast(x, "float32")), "float16")
        return topi.erf(x)

    return bb.call_te(te_erf, call.args[0], primfunc_name_hint="erf")


@register_legalize("relax.astype")
def _legalize_astype(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.cast`` to the ``dtype`` attribute; a scalar constant is converted here, to an
    ``R.const`` (as TVM's legalization does)."""
    x = call.args[0]
    if isinstance(x, rx.Constant) and x.data.ndim == 0:
        return rx.Constant(x.data.astype(to_numpy_dtype(call.attrs["dtype"])))
    return bb.call_te(topi.cast, x, call.attrs["dtype"])


@register_op("relax.wrap_param", inputs=("data",), attrs=(AttrField("dtype", "float32", to_dtype),),
             pattern=OpPattern.ELEMWISE)
def _wrap_param(call: rx.Call) -> rx.StructInfo:
    """A model parameter in ``dtype`` (TVM's mixed-precision wrapper): the input's shape."""
    dtype = call.attrs["dtype"]
    if dtype == "void":
        raise OpError(f"{op_name(call)}: needs a dtype to convert to", "dtype")
    x = tensor_arg(call, 0)
    return tensor_like(x, x.shape, dtype)


@register_legalize("relax.wrap_param")
def _legalize_wrap_param(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The parameter itself in its own dtype, else ``topi.cast`` (TVM 0.27 leaves the call, which its
    VM cannot run)."""
    x = call.args[0]
    if tensor_arg(call, 0).dtype == call.attrs["dtype"]:
        return x
    return bb.call_te(topi.cast, x, call.attrs["dtype"], primfunc_name_hint="wrap_param")
