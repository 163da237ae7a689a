"""Tensor creation: zeros, ones, full, their ``*_like`` forms and arange, each declared with
its legalization."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, ceildiv, int64, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.dtype import parse_dtype, to_numpy_dtype
from ..ir.op import AttrField, InputForm, OpError, OpPattern, register_op
from ..ir.struct_info import sinfo_of
from ._common import (arg_sinfo, describe, op_name, shape_arg, shape_values, tensor_arg, tensor_like,
                      to_dtype)
from .legalization import LegalizeFunc, python_scalar, register_legalize


def _new_tensor(call: rx.Call, dtype: str) -> rx.TensorStructInfo:
    """A tensor of the shape given by argument 0."""
    shape = shape_arg(call, 0)
    values = shape_values(shape)
    return rx.TensorStructInfo(values, dtype, shape.ndim if values is None else len(values))


def _fill_value(call: rx.Call, i: int) -> rx.TensorStructInfo:
    """The scalar fill value: a 0-d tensor (``R.const(v, dtype)``)."""
    v = tensor_arg(call, i, allow_prim=True)
    if v.ndim not in (-1, 0):
        raise OpError(f"{op_name(call)}: the fill value must be a scalar (0-d) tensor, got {describe(v)}", i)
    return v


def _filled(name: str, with_value: bool) -> None:
    """Register ``relax.<name>``: ``zeros``/``ones`` (dtype required) or ``full`` (dtype optional)."""
    inputs = ("shape", "fill_value") if with_value else ("shape",)
    dtype_field = AttrField("dtype", "void", to_dtype) if with_value else AttrField("dtype", convert=to_dtype)

    def infer(call: rx.Call) -> rx.StructInfo:
        dtype = call.attrs["dtype"]
        if with_value:
            value = _fill_value(call, 1)
            dtype = value.dtype if dtype == "void" else dtype
        elif dtype == "void":
            raise OpError(f"{op_name(call)}: needs a dtype", "dtype")
        return _new_tensor(call, dtype)

    infer.__doc__ = f"Struct info of R.{name}: a tensor of the given shape."
    register_op(f"relax.{name}", inputs=inputs, attrs=(dtype_field,), input_forms={"shape": InputForm.SHAPE},
                pattern=OpPattern.ELEMWISE)(infer)


def _like(name: str, with_value: bool) -> None:
    """Register ``relax.<name>_like``: the shape of ``x``, the dtype of ``dtype`` or else of ``x``."""
    inputs = ("x", "fill_value") if with_value else ("x",)

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        if with_value:
            _fill_value(call, 1)
        dtype = call.attrs["dtype"]
        return tensor_like(x, x.shape, x.dtype if dtype == "void" else dtype)

    infer.__doc__ = f"Struct info of R.{name}: shaped like the input."
    register_op(f"relax.{name}", inputs=inputs, attrs=(AttrField("dtype", "void", to_dtype),),
                pattern=OpPattern.ELEMWISE, shape_only_inputs=("x",))(infer)


_filled("zeros", False)
_filled("ones", False)
_filled("full", True)
_like("zeros_like", False)
_like("ones_like", False)
_like("full_like", True)


@register_op("relax.arange", inputs=("start", "end", "step"), attrs=(AttrField("dtype", "void", to_dtype),),
             pattern=OpPattern.INJECTIVE)
def _arange(call: rx.Call) -> rx.StructInfo:
    """A 1-D tensor of ``ceil((end - start) / step)`` values (int64 for integers, else float32)."""
    bounds = []
    for i in range(3):
        s = arg_sinfo(call, i)
        if not isinstance(s, rx.PrimStructInfo):
            raise OpError(f"{op_name(call)}: {('start', 'end', 'step')[i]} must be a scalar "
                          f"(R.prim_value), got {describe(s)}", i)
        bounds.append(s)
    dtype = call.attrs["dtype"]
    if dtype == "void":
        dtype = "int64" if all(parse_dtype(b.dtype).is_integer for b in bounds) else "float32"
    values = [b.value for b in bounds]
    if any(v is None for v in values):
        return rx.TensorStructInfo(None, dtype, 1)
    start, end, step = values
    consts = [v.value if isinstance(v, (tir.IntImm, tir.FloatImm)) else None for v in values]
    if None not in consts:
        if consts[2] == 0:
            raise OpError(f"{op_name(call)}: step must not be 0", 2)
        n = max(0, math.ceil((consts[1] - consts[0]) / consts[2]))  # type: ignore[operator]
        return rx.TensorStructInfo((int64(n),), dtype)
    c_step = as_const_int(step)
    integral = all(parse_dtype(b.dtype).is_integer for b in bounds)
    if c_step is None or c_step <= 0 or not integral:
        return rx.TensorStructInfo(None, dtype, 1)
    length = ceildiv(simplify(tir.Sub(_i64(end), _i64(start))), int64(c_step))
    return rx.TensorStructInfo((length,), dtype)


def _i64(e: tir.PrimExpr) -> tir.PrimExpr:
    """An integer expression in int64 (shape dims are int64)."""
    if isinstance(e, tir.IntImm):
        return int64(e.value)
    return e if e.dtype == "int64" else tir.Cast("int64", e)


# Legalizations: each op's topi compute, as LegalizeOps turns its calls into R.call_tir.

def _legalize_full(fill_value: float | None, name: str) -> LegalizeFunc:
    """``R.full``/``ones``/``zeros`` and their ``_like`` forms (the fill value is inlined when constant)."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        value: Any = python_scalar(call.args[1]) if fill_value is None else fill_value
        out = sinfo_of(call)  # the shape of the result is the given shape, or the tensor's
        return bb.call_te(topi.full, list(out.shape), out.dtype, value,  # type: ignore[attr-defined]
                          primfunc_name_hint=name)

    return legalize


register_legalize("relax.full", _legalize_full(None, "full"))
register_legalize("relax.full_like", _legalize_full(None, "full"))
register_legalize("relax.ones", _legalize_full(1.0, "ones"))
register_legalize("relax.ones_like", _legalize_full(1.0, "ones"))
register_legalize("relax.zeros", _legalize_full(0.0, "zeros"))
register_legalize("relax.zeros_like", _legalize_full(0.0, "zeros"))


@register_legalize("relax.arange")
def _legalize_arange(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """A constant array when start, end and step are literals; else ``T_arange``."""
    dtype = sinfo_of(call).dtype  # type: ignore[attr-defined]
    values = [sinfo_of(a).value for a in call.args]  # type: ignore[attr-defined]
    if all(isinstance(v, (tir.IntImm, tir.FloatImm)) for v in values):
        start, end, step = (v.value for v in values)
        return rx.Constant(np.arange(start, end, step).astype(to_numpy_dtype(dtype)))
    return bb.call_te(topi.arange, *call.args, dtype=dtype, primfunc_name_hint="arange")


# issue 16: eye, eye_like, hamming_window (their sizes and scalars are R.prim_value inputs, as TVM's)

def _prim(call: rx.Call, i: int, what: str, kind: str = "int") -> tir.PrimExpr | None:
    """The value of scalar input ``i`` (None when not known); OpError unless it is a scalar of ``kind``."""
    s = arg_sinfo(call, i)
    ok = isinstance(s, rx.PrimStructInfo) and (parse_dtype(s.dtype).is_integer or parse_dtype(s.dtype).is_bool
                                                if kind == "int" else not parse_dtype(s.dtype).is_bool)
    if not ok:
        raise OpError(f"{op_name(call)}: {what} must be {'an integer' if kind == 'int' else 'a number'} "
                      f"(R.prim_value), got {describe(s)}", i)
    return s.value  # type: ignore[union-attr]


def _dim(v: tir.PrimExpr | None) -> tir.PrimExpr | None:
    """A size as an int64 shape dimension."""
    if v is None:
        return None
    return int64(v.value) if isinstance(v, tir.IntImm) else (v if v.dtype == "int64" else tir.Cast("int64", v))


def _eye_shape(call: rx.Call, n: tir.PrimExpr | None, m: tir.PrimExpr | None, dtype: str) -> rx.TensorStructInfo:
    """An ``(n, m)`` tensor (ndim 2 when a size is not known)."""
    for i, v in ((0, n), (1, m)):
        if isinstance(v, tir.IntImm) and v.value < 0:
            raise OpError(f"{op_name(call)}: {'nm'[i]} must not be negative, got {v.value}", i)
    if n is None or m is None:
        return rx.TensorStructInfo(None, dtype, 2)
    return rx.TensorStructInfo((_dim(n), _dim(m)), dtype)


@register_op("relax.eye", inputs=("n", "m", "k"), num_optional=2, attrs=(AttrField("dtype", "float32", to_dtype),),
             pattern=OpPattern.INJECTIVE)
def _eye(call: rx.Call) -> rx.StructInfo:
    """An ``(n, m)`` matrix (``m`` defaults to ``n``) with ones on the ``k``-th diagonal."""
    n = _prim(call, 0, "n")
    m = _prim(call, 1, "m") if len(call.args) > 1 else n
    if len(call.args) > 2:
        _prim(call, 2, "k")
    return _eye_shape(call, n, m, call.attrs["dtype"])


def _opt_dtype(value: Any) -> str | None:
    """A dtype, or None (also for "void") for the input's."""
    dtype = None if value is None else to_dtype(value)
    return None if dtype == "void" else dtype


@register_op("relax.eye_like", inputs=("x", "k"), input_defaults={"k": rx.PrimValue(
                 int64(0), struct_info=rx.PrimStructInfo("int64", int64(0)))},
             attrs=(AttrField("dtype", None, _opt_dtype),), pattern=OpPattern.INJECTIVE, shape_only_inputs=("x",))
def _eye_like(call: rx.Call) -> rx.StructInfo:
    """The 2-D input's shape, its dtype unless ``dtype`` is given (TVM needs the shape known)."""
    x = tensor_arg(call, 0)
    if x.ndim != 2 or x.shape is None:
        got = f"{x.ndim} dimensions" if x.ndim >= 0 else "an unknown number of dimensions"
        raise OpError(f"{op_name(call)}: expects a 2-D tensor of known shape, got "
                      f"{got if x.ndim != 2 else 'an unknown shape'}", 0)
    if len(call.args) > 1:
        _prim(call, 1, "k")
    dtype = call.attrs["dtype"]
    return tensor_like(x, x.shape, x.dtype if dtype in (None, "void") else dtype)


@register_op("relax.hamming_window", inputs=("window_size", "periodic", "alpha", "beta"),
             attrs=(AttrField("dtype", convert=to_dtype),), pattern=OpPattern.INJECTIVE)
def _hamming_window(call: rx.Call) -> rx.StructInfo:
    """A float vector of ``window_size`` values."""
    size = _prim(call, 0, "window_size")
    _prim(call, 1, "periodic")
    _prim(call, 2, "alpha", "float")
    _prim(call, 3, "beta", "float")
    dtype = call.attrs["dtype"]
    if dtype == "void" or not parse_dtype(dtype).is_float:
        raise OpError(f"{op_name(call)}: the window's dtype must be a float dtype, got {dtype}", "dtype")
    if isinstance(size, tir.IntImm) and size.value < 1:
        raise OpError(f"{op_name(call)}: window_size must be at least 1, got {size.value}", 0)
    return rx.TensorStructInfo(None if size is None else (_dim(size),), dtype, 1)


def _scalar(e: rx.Expr) -> Any:
    """A scalar input's value: a Python number when literal, else its expression."""
    v = sinfo_of(e).value  # type: ignore[attr-defined]
    return v.value if isinstance(v, (tir.IntImm, tir.FloatImm)) else v


@register_legalize("relax.eye")
def _legalize_eye(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.eye`` (PrimFunc ``eye``)."""
    n = _scalar(call.args[0])
    m = _scalar(call.args[1]) if len(call.args) > 1 else n
    k = _scalar(call.args[2]) if len(call.args) > 2 else 0
    return bb.call_te(topi.eye, n, m, k, call.attrs["dtype"], primfunc_name_hint="eye")


@register_legalize("relax.eye_like")
def _legalize_eye_like(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.eye`` of the input's shape (PrimFunc ``eye_like``)."""
    out = sinfo_of(call)
    k = _scalar(call.args[1]) if len(call.args) > 1 else 0
    return bb.call_te(topi.eye, out.shape[0], out.shape[1], k, out.dtype,  # type: ignore[attr-defined]
                      primfunc_name_hint="eye_like")


@register_legalize("relax.hamming_window")
def _legalize_hamming_window(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.hamming_window``; a window of one value is the constant ``[1]`` (as TVM's)."""
    size, periodic, alpha, beta = (_scalar(a) for a in call.args)
    dtype = call.attrs["dtype"]
    if size == 1:
        return rx.Constant(np.array([1], dtype=to_numpy_dtype(dtype)))
    if not isinstance(periodic, int):
        raise OpError(f"{op_name(call)}: LegalizeOps needs a literal periodic flag", 1)
    return bb.call_te(topi.hamming_window, size, bool(periodic), sinfo_of(call.args[2]).value,  # type: ignore
                      sinfo_of(call.args[3]).value, dtype, primfunc_name_hint="hamming_window")  # type: ignore
