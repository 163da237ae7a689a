"""Linear algebra: ``R.matmul`` (numpy semantics, batched and 1-D) and the legacy ``R.nn.dense``."""
from __future__ import annotations

from .. import relax as rx
from ..arith import can_prove_not_equal, format_expr
from ..op import AttrField, OpError, OpPattern, register_op
from ._common import binary_dtype, broadcast_shapes, op_name, tensor_arg, tensor_like, to_dtype


def _check_inner(call: rx.Call, k1: object, k2: object) -> None:
    """OpError when the contracted dimensions are provably different."""
    if can_prove_not_equal(k1, k2):
        raise OpError(f"{op_name(call)}: inner dimensions differ: {format_expr(k1)} vs {format_expr(k2)}", 1)


@register_op("relax.matmul", inputs=("x1", "x2"), attrs=(AttrField("out_dtype", "void", to_dtype),),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _matmul(call: rx.Call) -> rx.StructInfo:
    """``x1 @ x2`` with numpy broadcasting of batch dims; ``out_dtype="void"`` keeps the inputs' dtype."""
    a, b = tensor_arg(call, 0), tensor_arg(call, 1)
    out_dtype = call.attrs["out_dtype"]
    dtype = binary_dtype(call, a.dtype, b.dtype) if out_dtype == "void" else out_dtype
    for i, t in enumerate((a, b)):
        if t.ndim == 0:
            raise OpError(f"{op_name(call)}: both inputs need at least one dimension, "
                          f"got a 0-d tensor as {('x1', 'x2')[i]}", i)
    if a.ndim < 0 or b.ndim < 0:
        return tensor_like(a, None, dtype, -1)
    prepended, appended = a.ndim == 1, b.ndim == 1
    ndim = max(a.ndim, b.ndim, 2) - prepended - appended
    if a.shape is None or b.shape is None:
        return tensor_like(a, None, dtype, ndim)
    k1 = a.shape[-1]
    k2 = b.shape[0] if appended else b.shape[-2]
    _check_inner(call, k1, k2)
    batch = broadcast_shapes(call, a.shape[:-2], b.shape[:-2])
    if batch is None:
        return tensor_like(a, None, dtype, ndim)
    out = list(batch)
    if not prepended:
        out.append(a.shape[-2])
    if not appended:
        out.append(b.shape[-1])
    return tensor_like(a, out, dtype)


@register_op("relax.nn.dense", inputs=("data", "weight"), pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _dense(call: rx.Call) -> rx.StructInfo:
    """Legacy fully connected layer: ``data (..., k)`` and ``weight (n, k)`` give ``(..., n)``."""
    x, w = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = binary_dtype(call, x.dtype, w.dtype)
    if w.ndim not in (-1, 2):
        raise OpError(f"{op_name(call)}: the weight must be 2-D (units, in_features), got {w.ndim}-D", 1)
    if x.ndim == 0:
        raise OpError(f"{op_name(call)}: the data needs at least one dimension", 0)
    if x.shape is None or w.shape is None:
        return tensor_like(x, None, dtype, x.ndim)
    _check_inner(call, x.shape[-1], w.shape[1])
    return tensor_like(x, (*x.shape[:-1], w.shape[0]), dtype)
