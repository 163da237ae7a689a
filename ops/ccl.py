"""Collective communication (``R.ccl.*``, TVM's ``relax.op.ccl``): allreduce, allgather,
broadcast_from_worker0 and scatter_from_worker0, each declared with its legalization.

As TVM's, the legalizations are destination-passing calls of the runtime's
``runtime.disco.<op>`` functions (scatter first moves the scattered axis to the front); tvmlite's
runtime (``backend/runtime.py``) runs them as the single worker it is: allreduce and broadcast copy,
allgather and scatter over one worker copy too, and more workers are refused when the call runs."""
from __future__ import annotations

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, can_prove_equal, int64, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ..ir.op_api import call_dps_packed
from ..ir.struct_info import sinfo_of
from .. import topi
from ._common import normalize_axis, op_name, tensor_arg, tensor_like, to_bool, to_int, to_str
from .legalization import register_legalize

# TVM's reduction codes of runtime.disco.allreduce
REDUCE_CODES = {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}
__all__ = ["REDUCE_CODES"]


def _to_op_type(value: object) -> str:
    """One of sum, prod, min, max, avg."""
    text = to_str(value)
    if text not in REDUCE_CODES:
        raise OpError(f"allreduce supports the reductions {', '.join(REDUCE_CODES)}, got {text!r}")
    return text


def _to_workers(value: object) -> int:
    """A positive number of workers."""
    n = to_int(value)
    if n < 1:
        raise OpError(f"num_workers must be at least 1, got {n}")
    return n


def _flag(value: bool) -> rx.PrimValue:
    """A flag argument of a runtime.disco function, as TVM passes it (an int64 0 or 1)."""
    return rx.PrimValue(int64(int(value)))


def _disco(name: str, args: list[rx.Expr], out: rx.StructInfo) -> rx.Call:
    """``R.call_dps_packed("runtime.disco.<name>", args, out_sinfo=out)``."""
    return call_dps_packed(f"runtime.disco.{name}", rx.Tuple(tuple(args)), out)


@register_op("relax.ccl.allreduce", attrs=(AttrField("op_type", "sum", _to_op_type),
                                          AttrField("in_group", True, to_bool)), pattern=OpPattern.OPAQUE)
def _allreduce(call: rx.Call) -> rx.StructInfo:
    """The input's struct info (every worker gets the reduction of all workers' tensors)."""
    return tensor_arg(call, 0)


@register_legalize("relax.ccl.allreduce")
def _legalize_allreduce(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``runtime.disco.allreduce(x, R.shape([code]), in_group)``."""
    x = call.args[0]
    code = rx.ShapeExpr((int64(REDUCE_CODES[call.attrs["op_type"]]),))
    return _disco("allreduce", [x, code, _flag(call.attrs["in_group"])], sinfo_of(x))


@register_op("relax.ccl.allgather", attrs=(AttrField("num_workers", convert=_to_workers),
                                          AttrField("in_group", True, to_bool)), pattern=OpPattern.OPAQUE)
def _allgather(call: rx.Call) -> rx.StructInfo:
    """The workers' tensors concatenated along axis 0: its size times ``num_workers``."""
    x = tensor_arg(call, 0)
    if x.ndim == 0:
        raise OpError(f"{op_name(call)}: gathers along axis 0, got a tensor of no dimensions", 0)
    if x.shape is None:
        return x
    return tensor_like(x, (simplify(tir.Mul(x.shape[0], int64(call.attrs["num_workers"]))), *x.shape[1:]))


@register_legalize("relax.ccl.allgather")
def _legalize_allgather(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``runtime.disco.allgather(x, in_group)`` into the gathered tensor."""
    if sinfo_of(call).shape is None:
        return call
    return _disco("allgather", [call.args[0], _flag(call.attrs["in_group"])], sinfo_of(call))


@register_op("relax.ccl.broadcast_from_worker0", pattern=OpPattern.OPAQUE)
def _broadcast_from_worker0(call: rx.Call) -> rx.StructInfo:
    """The input's struct info (worker 0's tensor, on every worker)."""
    return tensor_arg(call, 0)


@register_legalize("relax.ccl.broadcast_from_worker0")
def _legalize_broadcast(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``runtime.disco.broadcast_from_worker0(x, 0)`` (TVM passes in_group False)."""
    x = call.args[0]
    return _disco("broadcast_from_worker0", [x, _flag(False)], sinfo_of(x))


@register_op("relax.ccl.scatter_from_worker0", attrs=(AttrField("num_workers", convert=_to_workers),
                                                     AttrField("axis", 0, to_int)), pattern=OpPattern.OPAQUE)
def _scatter_from_worker0(call: rx.Call) -> rx.StructInfo:
    """Worker 0's tensor cut into ``num_workers`` equal parts along ``axis``: one part."""
    x = tensor_arg(call, 0)
    workers = call.attrs["num_workers"]
    if x.ndim >= 0:
        axis = normalize_axis(call, call.attrs["axis"], x.ndim)
    if x.shape is None:
        return x
    size = x.shape[axis]
    known = as_const_int(size)
    if known is not None and known % workers:
        raise OpError(f"{op_name(call)}: axis {axis} of size {known} does not divide among {workers} workers", 0)
    part = size if workers == 1 else simplify(tir.FloorDiv(size, int64(workers)))
    return tensor_like(x, (*x.shape[:axis], part, *x.shape[axis + 1:]))


@register_legalize("relax.ccl.scatter_from_worker0")
def _legalize_scatter(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The parts moved to a leading axis (``reshape`` to ``(..., workers, size / workers, ...)``,
    then ``transpose`` unless the axis is 0), then ``runtime.disco.scatter_from_worker0(parts, 0)``;
    a size not provably divisible is left alone (TVM refuses it)."""
    x = call.args[0]
    xs = sinfo_of(x)
    workers = call.attrs["num_workers"]
    if xs.shape is None:
        return call
    axis = call.attrs["axis"] % len(xs.shape)
    size = xs.shape[axis]
    if not can_prove_equal(simplify(tir.FloorMod(size, int64(workers))), int64(0)):
        return call
    part = sinfo_of(call).shape[axis]
    split = [*xs.shape[:axis], int64(workers), part, *xs.shape[axis + 1:]]
    parts = bb.emit(bb.call_te(topi.reshape, x, split, primfunc_name_hint="reshape"))
    if axis:
        order = [axis, *range(axis), *range(axis + 1, len(split))]
        parts = bb.emit(bb.call_te(topi.transpose, parts, order, primfunc_name_hint="transpose"))
    return _disco("scatter_from_worker0", [parts, _flag(False)], sinfo_of(call))


