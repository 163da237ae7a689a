"""Quantization computes (``R.quantize``, ``R.dequantize``): one elementwise block each,
``quantized`` and ``dequantized``, as TVM 0.27's legalization writes them.

A quantization parameter (scale or zero point) is a literal (a rank-0 constant, inlined), a
tensor of one element (read at index 0, per tensor) or a vector read along ``axis`` (per axis)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ir import tir
from ..ir.dtype import parse_dtype
from ..te import expr as E
from ..te.tensor import Tensor, compute

__all__ = ["quantize", "dequantize"]


def _param(p: Any, indices: Sequence[Any], axis: int) -> Any:
    """The scale or zero point for the element at ``indices``."""
    if not isinstance(p, Tensor):
        return p  # a literal
    if all(isinstance(d, tir.IntImm) and d.value == 1 for d in p.shape):
        return p[tuple(tir.IntImm("int64", 0) for _ in p.shape)]
    return p[indices[axis]]


def _clip_cast(value: Any, dtype: str) -> E.Expr:
    """``value`` clamped to the range of ``dtype`` (TVM's bounds, in ``value``'s dtype), then cast."""
    high = E.max_value(dtype)
    vdtype = E.as_prim(value).dtype
    if parse_dtype(vdtype).is_float and float(high.expr.value) > float(np.finfo(vdtype).max):
        # 65535 is no float16 (TVM's literal would be inf): the largest float16 bounds it instead
        high = E.max_value(vdtype)
    low = E.binary(tir.Min, value, high)
    return E.cast(E.binary(tir.Max, low, E.min_value(dtype)), dtype)


def quantize(data: Tensor, scale: Any, zero_point: Any, axis: int = -1, out_dtype: str = "int8") -> Tensor:
    """``clip(round(data / scale) + zero_point)`` in ``out_dtype`` (block ``quantized``)."""
    axis = axis % len(data.shape) if data.shape else 0

    def f(*i: Any) -> Any:
        scaled = E.wrap(data[i]) / _param(scale, i, axis)
        rounded = E.round(scaled) if parse_dtype(out_dtype).is_integer else scaled
        return _clip_cast(rounded + _param(zero_point, i, axis), out_dtype)

    return compute(data.shape, f, name="quantized")


def dequantize(data: Tensor, scale: Any, zero_point: Any, axis: int = -1, out_dtype: str = "float32") -> Tensor:
    """``(data - zero_point) * scale`` computed in float32 (the difference in int32 for integer
    data), clamped to the range of a narrower ``out_dtype`` (block ``dequantized``)."""
    axis = axis % len(data.shape) if data.shape else 0
    wide = "float32" if parse_dtype(data.dtype).is_float else "int32"

    def f(*i: Any) -> Any:
        diff = E.cast(data[i], wide) - _param(zero_point, i, axis)
        out = diff * E.cast(_param(scale, i, axis), "float32")
        return out if out_dtype == "float32" else _clip_cast(out, out_dtype)

    return compute(data.shape, f, name="dequantized")
