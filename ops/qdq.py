"""Quantization: ``R.quantize`` and ``R.dequantize`` (TVM's ``relax.op.qdq``), each declared with
its legalization through ``topi.qdq``.

TVM 0.27's rules: quantize takes float16/float32 data to int8, uint8, int16 or uint16;
dequantize takes those integers, int32 or float16/float32 data to float16 or float32. The scale is
float16/float32, the zero point one of int8, uint8, int16, uint16, int32, uint32, float16; each is
one value (every dim 1) or a vector as long as the data's ``axis``. (TVM's float8 dtypes are not
tvmlite dtypes.)"""
from __future__ import annotations

from typing import Callable

from .. import topi
from ..ir import relax as rx
from ..ir.arith import can_prove_equal, format_expr, is_const_int
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ._common import normalize_axis, op_name, tensor_arg, tensor_like, to_dtype, to_int
from .legalization import register_legalize, scalar_const

_QUANTIZED = ("int8", "uint8", "int16", "uint16")
_FLOATS = ("float16", "float32")
_SCALE = _FLOATS
_ZERO_POINT = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16")
_NAMES = {1: "scale", 2: "zero_point"}


def _one_of(call: rx.Call, what: str, dtype: str, allowed: tuple[str, ...], arg: int | str) -> None:
    """OpError unless ``dtype`` (known) is one of ``allowed``."""
    if dtype != "void" and dtype not in allowed:
        raise OpError(f"{op_name(call)}: {what} must be one of {', '.join(allowed)}, got {dtype}", arg)


def _qdq_infer(data_dtypes: tuple[str, ...], out_dtypes: tuple[str, ...]) -> Callable[[rx.Call], rx.StructInfo]:
    """The inference of quantize or dequantize: the data's shape in ``out_dtype``."""

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        axis, out_dtype = call.attrs["axis"], call.attrs["out_dtype"]
        _one_of(call, "the data's dtype", x.dtype, data_dtypes, 0)
        _one_of(call, "out_dtype", out_dtype, out_dtypes, "out_dtype")
        if x.ndim >= 0:
            axis = normalize_axis(call, axis, max(x.ndim, 1))
        for i, allowed in ((1, _SCALE), (2, _ZERO_POINT)):
            p = tensor_arg(call, i)
            _one_of(call, f"the {_NAMES[i]}'s dtype", p.dtype, allowed, i)
            if p.shape is None or all(is_const_int(d, 1) for d in p.shape):
                continue  # one value for the whole tensor (or a shape only known at run time)
            if len(p.shape) != 1:
                raise OpError(f"{op_name(call)}: the {_NAMES[i]} must be one value or a vector along the axis, "
                              f"got {len(p.shape)} dimensions", i)
            if x.ndim == 0:
                raise OpError(f"{op_name(call)}: a scalar takes one {_NAMES[i]}, got a vector", i)
            if x.shape is not None and not can_prove_equal(p.shape[0], x.shape[axis]):
                raise OpError(f"{op_name(call)}: the data has {format_expr(x.shape[axis])} elements along axis "
                              f"{axis} but the {_NAMES[i]} has {format_expr(p.shape[0])}", i)
        return tensor_like(x, x.shape, out_dtype)

    return infer


def _register(name: str, data_dtypes: tuple[str, ...], out_dtypes: tuple[str, ...], default: str) -> None:
    """Register ``relax.<name>(data, scale, zero_point, axis=-1, out_dtype=default)``."""
    infer = _qdq_infer(data_dtypes, out_dtypes)
    infer.__doc__ = f"Struct info of R.{name}: the data's shape in ``out_dtype``."
    # TVM prints out_dtype before axis; its Python signature takes axis first.
    register_op(f"relax.{name}", inputs=("data", "scale", "zero_point"),
                attrs=(AttrField("out_dtype", default, to_dtype), AttrField("axis", -1, to_int)),
                script_order=("data", "scale", "zero_point", "axis", "out_dtype"),
                pattern=OpPattern.ELEMWISE)(infer)

    compute = getattr(topi.qdq, name)

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        # Rank-0 constants are inlined as literals, as TVM's legalization does.
        return bb.call_te(compute, call.args[0], scalar_const(call.args[1]), scalar_const(call.args[2]),
                          axis=a["axis"], out_dtype=a["out_dtype"], primfunc_name_hint=name)

    legalize.__doc__ = f"``topi.qdq.{name}``: one block ``{name}d``."
    register_legalize(f"relax.{name}", legalize)


_register("quantize", _FLOATS, _QUANTIZED, "int8")
_register("dequantize", _QUANTIZED + ("int32",) + _FLOATS, _FLOATS, "float32")
