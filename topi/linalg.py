"""Matrix multiplication with numpy semantics (Relax's ``R.matmul``): block ``matmul`` over
``i0, i1...`` and reduce axis ``k``, batch dimensions broadcast."""
from __future__ import annotations

from typing import Any

from ..ir import tir
from ..te import tensor as T
from ..te.tensor import Tensor, compute
from ..te.tensor_arith import broadcast_shape, broadcast_shape_index

__all__ = ["matmul"]


def matmul(a: Tensor, b: Tensor, out_dtype: str | None = None, checked_at_run_time: bool = False) -> Tensor:
    """``a @ b`` as numpy computes it: a 1-D ``a`` is a row, a 1-D ``b`` a column (both dropped from
    the result); leading dimensions broadcast (with ``checked_at_run_time``, symbolic ones of unknown
    relation broadcast as the caller checks at run time). ``out_dtype`` converts the operands first."""
    a_shape, b_shape = list(a.shape), list(b.shape)
    a_prepended, b_appended = len(a_shape) == 1, len(b_shape) == 1
    if a_prepended:
        a_shape.insert(0, tir.IntImm(a_shape[0].dtype, 1))
    if b_appended:
        b_shape.append(tir.IntImm(b_shape[0].dtype, 1))
    batch = broadcast_shape(a_shape[:-2], b_shape[:-2], checked_at_run_time)
    out_shape = [*batch] + ([] if a_prepended else [a_shape[-2]]) + ([] if b_appended else [b_shape[-1]])
    k = T.reduce_axis((0, a_shape[-1]), "k")
    cast = out_dtype not in (None, "", "void")

    def f(*idx: Any) -> Any:
        a_idx = broadcast_shape_index(a_shape[:-2], batch, idx)
        b_idx = broadcast_shape_index(b_shape[:-2], batch, idx)
        if not a_prepended:
            a_idx.append(idx[len(batch)])
        a_idx.append(k)
        b_idx.append(k)
        if not b_appended:
            b_idx.append(idx[-1])
        av, bv = a(*a_idx), b(*b_idx)
        if cast:
            av, bv = av.astype(out_dtype), bv.astype(out_dtype)
        return T.sum(av * bv, axis=k)

    return compute(out_shape, f, name="matmul")
