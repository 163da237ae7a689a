"""Attention over a batch of sequences of different lengths (``R.nn.attention_var_len``), which
TVM 0.27 does not legalize (it hands the op to CUTLASS): a compute over the concatenated
sequences, each query position attending to the keys of its own sequence.

The sequences are given by the cumulative starts ``seqstart`` (``[0, 2, 7, 10]``: lengths 2, 5, 3);
every (query, key) pair is scored and pairs from different sequences are masked out, so the work is
quadratic in the total length, as one padded attention over the batch would be."""
from __future__ import annotations

from typing import Any

from ..ir.arith import simplify
from ..te import expr as E
from ..te import tensor as T
from ..te.expr import wrap
from ..te.tensor import Tensor, compute

__all__ = ["attention_var_len"]


def attention_var_len(q: Tensor, k: Tensor, v: Tensor, seqstart_q: Tensor, seqstart_k: Tensor,
                      scale: float | None = None, causal_mask: str | None = None) -> Tensor:
    """``softmax(Q K^T * scale) V`` within each sequence, of ``(1, total, heads, dim)`` tensors:
    ``T_seq_index`` (the sequence of each query row), ``T_batch_matmul_NT`` (every score),
    ``T_var_len_mask`` (same sequence; under a causal mask the keys after ``i + offset``, offset 0
    for ``TopLeft``, ``|len_q - len_kv|`` for ``BottomRight``, excluded), a masked softmax over the
    keys (a row without keys gives zeros) and ``T_batch_matmul_NN`` back in BSNH."""
    _, total_q, heads, head_dim = q.shape
    total_k, head_dim_v = k.shape[1], v.shape[3]
    dtype = q.dtype
    last = simplify((wrap(seqstart_q.shape[0]) - 2).expr)  # the number of sequences, less one
    r = T.reduce_axis((0, last), "r")
    # the sequence of row i: how many sequences after the first start at or before it
    seq = compute((total_q,), lambda i: T.sum(E.cast(seqstart_q[r + 1] <= i, "int64"), axis=r),
                  name="T_seq_index")
    d = T.reduce_axis((0, head_dim), "d")
    score = compute((heads, total_q, total_k), lambda h, i, j: T.sum(q[0, i, h, d] * k[0, j, h, d], axis=d),
                    name="T_batch_matmul_NT")

    def same_sequence(i: Any, j: Any) -> Any:
        b = seq[i]
        q0, q1, k0, k1 = seqstart_q[b], seqstart_q[b + 1], seqstart_k[b], seqstart_k[b + 1]
        inside = E.all(q0 <= i, wrap(i) < q1, k0 <= j, wrap(j) < k1)
        if causal_mask is None:
            return inside
        offset: Any = 0 if causal_mask == "TopLeft" else E.abs((q1 - q0) - (k1 - k0))
        return E.all(inside, wrap(j) - k0 <= wrap(i) - q0 + offset)

    mask = compute((total_q, total_k), same_sequence, name="T_var_len_mask")
    factor = E.const(float(scale), dtype) if scale is not None else 1 / E.sqrt(E.cast(head_dim, dtype))
    lowest = E.min_value(dtype)
    scaled = compute(score.shape, lambda h, i, j: E.select(mask[i, j], score[h, i, j] * factor, lowest),
                     name="T_masked_score")
    k1, k2 = T.reduce_axis((0, total_k), "k1"), T.reduce_axis((0, total_k), "k2")
    top = compute((heads, total_q), lambda h, i: T.max(scaled[h, i, k1], axis=k1), name="T_softmax_maxelem")
    exp = compute(score.shape, lambda h, i, j: E.select(mask[i, j], E.exp(scaled[h, i, j] - top[h, i]),
                                                        E.const(0, dtype)), name="T_softmax_exp")
    expsum = compute((heads, total_q), lambda h, i: T.sum(exp[h, i, k2], axis=k2), name="T_softmax_expsum")
    prob = compute(score.shape, lambda h, i, j: E.select(expsum[h, i] > 0, exp[h, i, j] / expsum[h, i],
                                                         E.const(0, dtype)), name="T_softmax_norm")
    kv = T.reduce_axis((0, total_k), "k")
    return compute((1, total_q, heads, head_dim_v),
                   lambda b, i, h, e: T.sum(prob[h, i, kv] * v[b, kv, h, e], axis=kv), name="T_batch_matmul_NN")
