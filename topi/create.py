"""Creation computes of issue 16: ``eye`` (block ``eye``) and ``hamming_window`` (TVM's chain of
blocks ``T_arange`` ... ``T_strided_slice``)."""
from __future__ import annotations

import math
from typing import Any

from ..ir import tir
from ..ir.arith import simplify
from ..te import expr as E
from ..te.expr import ExprLike, as_prim
from ..te.tensor import Tensor, compute
from ..te.tensor_arith import cpp_compute

__all__ = ["eye", "hamming_window"]


def _int64(v: ExprLike) -> tir.PrimExpr:
    """A dimension in int64."""
    e = as_prim(v) if not isinstance(v, int) else tir.IntImm("int64", v)
    return e if e.dtype == "int64" else tir.Cast("int64", e)


def eye(n: ExprLike, m: ExprLike, k: int | ExprLike = 0, dtype: str = "float32") -> Tensor:
    """Ones on the ``k``-th diagonal of an ``(n, m)`` matrix, zeros elsewhere (block ``eye``)."""
    one, zero = E.const(1, dtype), E.const(0, dtype)

    def f(i: Any, j: Any) -> Any:
        if isinstance(k, int) and k == 0:
            return E.if_then_else(i == j, one, zero)
        if isinstance(k, int):  # TVM writes j - k for an upper diagonal, j + |k| for a lower one
            return E.if_then_else(i == (j - k if k > 0 else j + (-k)), one, zero)
        return E.if_then_else(i == j - E.cast(k, "int64"), one, zero)

    return compute((_int64(n), _int64(m)), f, name="eye")


def hamming_window(window_size: ExprLike, periodic: bool, alpha: ExprLike, beta: ExprLike, dtype: str) -> Tensor:
    """``alpha - beta * cos(2 pi i / (N - 1))`` for ``i < window_size`` (``N`` one more when periodic)."""
    size = _int64(window_size)
    total = simplify(tir.Add(size, tir.IntImm("int64", 1))) if periodic else size
    index = cpp_compute([total], lambda ax: E.cast(ax[0], dtype), "T_arange", "injective")
    turned = cpp_compute([total], lambda ax: E.const(2 * math.pi, dtype) * index(*ax), "T_multiply", "broadcast")
    span = simplify(tir.Sub(total, tir.IntImm("int64", 1)))
    angle = cpp_compute([total], lambda ax: turned(*ax) / E.cast(span, dtype), "T_divide", "broadcast")
    cosine = compute([total], lambda i0: E.cos(angle[i0]), name="compute")
    a, b = as_prim(alpha), as_prim(beta)
    scaled = cpp_compute([total], lambda ax: b * E.cast(cosine(*ax), b.dtype), "T_multiply_1", "broadcast")
    window = cpp_compute([total], lambda ax: a - scaled(*ax), "T_subtract", "broadcast")
    cast = compute([total], lambda i0: E.cast(window[i0], dtype), name="compute_1")
    if not periodic:
        return cast
    return cpp_compute([size], lambda ax: cast(*ax), "T_strided_slice", "injective")
