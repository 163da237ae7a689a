"""Linear algebra: ``R.matmul`` (numpy semantics, batched and 1-D) and the legacy ``R.nn.dense``,
each declared with its legalization (its topi compute, checking the inner dims at run time)."""
from __future__ import annotations

from typing import Any

from .. import topi
from ..ir import relax as rx
from ..ir.arith import can_prove_not_equal, format_expr
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ..ir.struct_info import has_known_shapes, sinfo_of
from ._common import (binary_dtype, broadcast_shapes, op_name, tensor_arg, tensor_like, to_dtype, to_str,
                      tuple_of_tensors)
from .legalization import (Check, arg_text, call_te_checked, call_topi, dim_text, register_legalize, tuple_fields,
                           require_broadcast, require_equal, shape_text, site_text)


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


# Legalizations: each op's topi compute, as LegalizeOps turns its calls into R.call_tir.

@register_legalize("relax.matmul")
def _legalize_matmul(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Numpy-style matmul; ``out_dtype`` converts the operands. The contracted dims must agree, and
    batch dims broadcast (when the result's shape is unknown, the kernel computes it and checks)."""
    out_dtype = call.attrs["out_dtype"]
    x_name, y_name = arg_text(call.args[0]), arg_text(call.args[1])

    def checks(a: Any, b: Any, out_dtype: Any, checked_at_run_time: bool = False) -> list[Check]:
        ka, kb = a.shape[-1], b.shape[0] if b.ndim == 1 else b.shape[-2]
        ia, ib = a.ndim - 1, 0 if b.ndim == 1 else b.ndim - 2
        out = require_equal(ka, kb, lambda: (
            f"{site_text(call)}: dim {ia} of {x_name} {shape_text(a.shape)} is {dim_text(ka)} but "
            f"dim {ib} of {y_name} {shape_text(b.shape)} is {dim_text(kb)}; matmul needs them equal"))
        for k in range(1, min(a.ndim, b.ndim) - 1):
            da, db = a.shape[-2 - k], b.shape[-2 - k]
            out += require_broadcast(da, db, lambda da=da, db=db, k=k: (
                f"{site_text(call)}: batch dim {a.ndim - 2 - k} of {x_name} {shape_text(a.shape)} is {dim_text(da)} "
                f"and batch dim {b.ndim - 2 - k} of {y_name} {shape_text(b.shape)} is {dim_text(db)}; they do not "
                f"broadcast (they must be equal, or one of them 1)"))
        return out

    extra = {} if has_known_shapes(sinfo_of(call)) else {"checked_at_run_time": True}
    return call_te_checked(bb, checks, topi.matmul, call.args[0], call.args[1],
                           None if out_dtype == "void" else out_dtype, primfunc_name_hint="matmul", **extra)


_legalize_matmul.handles_unknown_result = True  # type: ignore[attr-defined]


@register_legalize("relax.nn.dense")
def _legalize_dense(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``x @ w.T``: the last dims of the data and the weight must agree."""

    def checks(x: Any, w: Any) -> list[Check]:
        kx, kw = x.shape[-1], w.shape[-1]
        return require_equal(kx, kw, lambda: (
            f"{site_text(call)}: the last dim of {arg_text(call.args[0])} {shape_text(x.shape)} is {dim_text(kx)} "
            f"but the last dim of {arg_text(call.args[1])} {shape_text(w.shape)} is {dim_text(kw)}; dense needs "
            f"them equal"))

    return call_te_checked(bb, checks, topi.nn.dense, *call.args)


# issue 16: einsum and outer

@register_op("relax.einsum", inputs=("operands",), attrs=(AttrField("subscripts", convert=to_str),),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _einsum(call: rx.Call) -> rx.StructInfo:
    """The Einstein summation's shape (numpy's notation); the operands share one dtype."""
    tensors = tuple_of_tensors(call, "sum over")
    dtypes = {t.dtype for t in tensors if t.dtype != "void"}
    if len(dtypes) > 1:
        raise OpError(f"{op_name(call)}: the operands must share one dtype, got {', '.join(sorted(dtypes))}", 0)
    dtype = dtypes.pop() if dtypes else "void"
    if any(t.ndim < 0 for t in tensors):
        return tensor_like(tensors[0], None, dtype, -1)
    try:
        labels, out = topi.parse_subscripts(call.attrs["subscripts"], [t.ndim for t in tensors])
        if any(t.shape is None for t in tensors):
            return tensor_like(tensors[0], None, dtype, len(out))
        extent = topi.einsum_shape(labels, [t.shape for t in tensors])
    except ValueError as e:
        raise OpError(f"{op_name(call)}: {e}", "subscripts") from None
    return tensor_like(tensors[0], [extent[c] for c in out], dtype)


@register_legalize("relax.einsum")
def _legalize_einsum(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.einsum`` over the tuple's tensors."""
    return bb.call_te(topi.einsum, call.attrs["subscripts"], *tuple_fields(bb, call.args[0]),
                      primfunc_name_hint="einsum")


@register_op("relax.outer", inputs=("x1", "x2"), pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _outer(call: rx.Call) -> rx.StructInfo:
    """The ``(n, m)`` products of two vectors, in the first one's dtype (as TVM infers it)."""
    a, b = tensor_arg(call, 0), tensor_arg(call, 1)
    for i, t in ((0, a), (1, b)):
        if t.ndim not in (-1, 1):
            raise OpError(f"{op_name(call)}: expects 1-D tensors, got {t.ndim} dimensions", i)
    if a.shape is None or b.shape is None:
        return tensor_like(a, None, None, 2)
    return tensor_like(a, [a.shape[0], b.shape[0]])


register_legalize("relax.outer", call_topi(topi.outer, "outer"))
