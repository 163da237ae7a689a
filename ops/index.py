"""Indexing by tensors: gather_elements and gather_nd, each declared with its legalization
(negative indices count from the end; each index is checked to lie in ``[-size, size)`` first)."""
from __future__ import annotations

from typing import Any

from .. import te, topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, can_prove_not_equal, format_shape, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.dtype import parse_dtype
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ._common import normalize_axis, op_name, tensor_arg, tensor_like, to_int
from .legalization import Check, arg_text, call_te_checked, dim_text, register_legalize, require_indices, \
    shape_text, site_text


def _require_index_dtype(call: rx.Call, sinfo: rx.TensorStructInfo, i: int, only_int64: bool = False) -> None:
    """OpError unless the indices are signed integers (int64 only when ``only_int64``), as TVM."""
    if sinfo.dtype == "void":
        return
    d = parse_dtype(sinfo.dtype)
    ok = sinfo.dtype == "int64" if only_int64 else (d.is_integer and not sinfo.dtype.startswith("uint"))
    if not ok:
        want = "int64" if only_int64 else "a signed integer dtype"
        raise OpError(f"{op_name(call)}: the indices must have {want}, got dtype {sinfo.dtype}", i)


def _index_message(call: rx.Call, where: str, x: Any, size: Any) -> str:
    """The message of an index check: which indices, which axis, the valid range."""
    return (f"{site_text(call)}: an index in {arg_text(call.args[1])} is out of range for {where} of "
            f"{arg_text(call.args[0])} {shape_text(x.shape)}, of size {dim_text(size)} (valid indices: "
            f"-{dim_text(size)} to {dim_text(simplify(tir.Sub(size, tir.IntImm(size.dtype, 1))))})")


# ---------------------------------------------------------------- gather_elements
@register_op("relax.gather_elements", inputs=("data", "indices"), attrs=(AttrField("axis", 0, to_int),),
             pattern=OpPattern.INJECTIVE)
def _gather_elements(call: rx.Call) -> rx.StructInfo:
    """The indices' shape: ``out[i...]`` is ``data`` at ``i...`` with ``i[axis]`` replaced by the index."""
    x, idx = tensor_arg(call, 0), tensor_arg(call, 1)
    _require_index_dtype(call, idx, 1)
    if x.ndim >= 0 and idx.ndim >= 0 and x.ndim != idx.ndim:
        raise OpError(f"{op_name(call)}: data and indices need the same rank, got {x.ndim} and {idx.ndim}", 1)
    if x.ndim >= 0:
        normalize_axis(call, call.attrs["axis"], x.ndim, "axis")
    if x.ndim < 0:
        return tensor_like(x, None, ndim=-1)  # as TVM: nothing is known without the data's rank
    return tensor_like(x, idx.shape, ndim=idx.ndim)


@register_legalize("relax.gather_elements")
def _legalize_gather_elements(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's ``T_gather``, after a loop checking every index against the size of ``axis``."""

    def checks(x: te.Tensor, axis: int, indices: te.Tensor) -> list[Check]:
        a = axis + x.ndim if axis < 0 else axis
        return require_indices(indices, x.shape[a], lambda: _index_message(call, f"axis {a}", x, x.shape[a]),
                               "T_gather_check")

    return call_te_checked(bb, checks, topi.gather, call.args[0], call.attrs["axis"], call.args[1],
                           primfunc_name_hint="gather")


# ---------------------------------------------------------------- gather_nd
@register_op("relax.gather_nd", inputs=("data", "indices"), attrs=(AttrField("batch_dims", 0, to_int),),
             pattern=OpPattern.INJECTIVE)
def _gather_nd(call: rx.Call) -> rx.StructInfo:
    """``indices.shape[:-1] + data.shape[batch_dims + M:]``, ``M = indices.shape[-1]`` the length of
    each index tuple (the first ``batch_dims`` axes are shared by data and indices)."""
    x, idx = tensor_arg(call, 0), tensor_arg(call, 1)
    _require_index_dtype(call, idx, 1, only_int64=True)
    b = call.attrs["batch_dims"]
    if b < 0:
        raise OpError(f"{op_name(call)}: batch_dims must not be negative, got {b}", "batch_dims")
    if idx.ndim >= 0 and b > idx.ndim - 1:
        raise OpError(f"{op_name(call)}: batch_dims {b} exceeds the indices' rank minus 1 ({idx.ndim - 1})",
                      "batch_dims")
    if x.ndim < 0 or idx.shape is None or as_const_int(idx.shape[-1]) is None:
        return tensor_like(x, None, ndim=-1)
    m = as_const_int(idx.shape[-1])
    if m > x.ndim - b:
        raise OpError(f"{op_name(call)}: index tuples of length {m} (indices {format_shape(idx.shape)}) exceed the "
                      f"data's rank {x.ndim} minus batch_dims {b}", 1)
    if x.shape is None:
        return tensor_like(x, None, ndim=idx.ndim - 1 + x.ndim - b - m)
    for k in range(b):
        if can_prove_not_equal(x.shape[k], idx.shape[k]):
            raise OpError(f"{op_name(call)}: batch dim {k} is {format_shape(x.shape)}[{k}] in the data but "
                          f"{format_shape(idx.shape)}[{k}] in the indices", 1)
    return tensor_like(x, [*idx.shape[:-1], *x.shape[b + m:]])


def _te_gather_nd(data: te.Tensor, indices: te.Tensor, batch_dims: int) -> te.Tensor:
    """TVM's legalization: the index tuples moved to the first axis, then topi's gather_nd."""
    n = indices.ndim
    return topi.gather_nd(data, topi.transpose(indices, [n - 1, *range(n - 1)]), batch_dims)


@register_legalize("relax.gather_nd")
def _legalize_gather_nd(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``T_transpose`` of the indices then ``T_gather_nd``, after a loop checking each index against
    the dim it picks."""

    def checks(x: te.Tensor, indices: te.Tensor, batch_dims: int) -> list[Check]:
        dims = x.shape[batch_dims:]

        def size(bvars: list) -> tir.PrimExpr:
            # Position k of an index tuple indexes dim batch_dims + k.
            out = dims[as_const_int(indices.shape[-1]) - 1]
            for k in range(as_const_int(indices.shape[-1]) - 2, -1, -1):
                out = tir.Select(tir.EQ(bvars[-1], tir.IntImm(bvars[-1].dtype, k)), dims[k], out)
            return out

        shown = [f"{dim_text(d)}" for d in dims[:as_const_int(indices.shape[-1])]]
        message = (f"{site_text(call)}: an index in {arg_text(call.args[1])} is out of range for the dims "
                   f"({', '.join(shown)}) of {arg_text(call.args[0])} {shape_text(x.shape)} it picks (valid "
                   f"indices: -size to size - 1)")
        return require_indices(indices, size, message, "T_gather_nd_check")

    return call_te_checked(bb, checks, _te_gather_nd, call.args[0], call.args[1], call.attrs["batch_dims"],
                           primfunc_name_hint="te_gather_nd")
