"""Relax's distributed ops (``R.dist.*``, TVM's ``relax.op.distributed``): annotate_sharding,
redistribute, redistribute_replica_to_shard and call_tir_local_view. They describe how tensors
are spread over a device mesh (``R.DTensor``); none has a legalization, tvmlite reads, infers,
prints and transforms them but does not run them."""
from __future__ import annotations

from typing import Any

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import simplify
from ..ir.global_info import DeviceMesh, Placement, PlacementSpec
from ..ir.op import DTENSOR_NATIVE, AttrField, OpError, register_op
from ._common import arg_sinfo, describe, op_name, to_int
from .builtin import _CALL_TIR_SCRIPT, _check_prim_func_callee, _dps_args

__all__: list[str] = []


def _to_mesh(value: Any) -> DeviceMesh:
    """A device mesh (the script names it ``"mesh[0]"``, which the parser resolves)."""
    if not isinstance(value, DeviceMesh):
        raise OpError(f'expected a device mesh of the module\'s global infos (device_mesh="mesh[0]"), got {value!r}')
    return value


def _to_placement(value: Any) -> Placement:
    """A placement, from its text ``"S[0], R"``."""
    if isinstance(value, Placement):
        return value
    if not isinstance(value, str):
        raise OpError(f'expected a placement such as "S[0], R", got {value!r}')
    return Placement.from_text(value)


_DISTRIBUTION = (AttrField("device_mesh", convert=_to_mesh, reference="device_mesh"),
                 AttrField("placement", convert=_to_placement))


def _dtensor_arg(call: rx.Call, i: int) -> rx.DTensorStructInfo:
    """The struct info of a distributed-tensor argument."""
    s = arg_sinfo(call, i)
    if not isinstance(s, rx.DTensorStructInfo):
        raise OpError(f"{op_name(call)}: the input must be a distributed tensor (R.DTensor), got {describe(s)}", i)
    return s


def _dtensor(call: rx.Call, tensor: rx.TensorStructInfo, mesh: DeviceMesh, placement: Placement) -> rx.DTensorStructInfo:
    """A DTensor struct info; OpError (on the placement) when the placement does not fit."""
    try:
        return rx.DTensorStructInfo(tensor, mesh, placement)
    except ValueError as err:
        raise OpError(f"{op_name(call)}: {err}", "placement") from None


@register_op("relax.dist.annotate_sharding", inputs=("input",), attrs=_DISTRIBUTION, dtensor_rule=DTENSOR_NATIVE)
def _annotate_sharding(call: rx.Call) -> rx.StructInfo:
    """The input's struct info: the annotation only tells sharding propagation the plan."""
    return arg_sinfo(call, 0)


@register_op("relax.dist.redistribute", inputs=("input",), attrs=_DISTRIBUTION, dtensor_rule=DTENSOR_NATIVE)
def _redistribute(call: rx.Call) -> rx.StructInfo:
    """The input tensor on the given mesh with the given placement."""
    x = _dtensor_arg(call, 0)
    return _dtensor(call, x.tensor_sinfo, call.attrs["device_mesh"], call.attrs["placement"])


def _to_positive(value: Any) -> int:
    """A positive integer attribute."""
    n = to_int(value)
    if n <= 0:
        raise OpError(f"expected a positive number, got {n}")
    return n


@register_op("relax.dist.redistribute_replica_to_shard", inputs=("input",),
             attrs=(AttrField("num_workers", convert=_to_positive), AttrField("axis", convert=to_int)),
             dtensor_rule=DTENSOR_NATIVE)
def _replica_to_shard(call: rx.Call) -> rx.StructInfo:
    """Each of ``num_workers`` workers keeps its slice along ``axis``: on a tensor (a worker's
    view) that axis shrinks; on a replicated DTensor of a 1-D mesh the placement becomes
    ``S[axis]``."""
    s = arg_sinfo(call, 0)
    if not isinstance(s, (rx.TensorStructInfo, rx.DTensorStructInfo)):
        raise OpError(f"{op_name(call)}: the input must be a tensor, got {describe(s)}", 0)
    tensor = s.tensor_sinfo if isinstance(s, rx.DTensorStructInfo) else s
    n, axis = call.attrs["num_workers"], call.attrs["axis"]
    if tensor.shape is None:
        raise OpError(f"{op_name(call)}: the input needs a known shape", 0)
    if not 0 <= axis < len(tensor.shape):
        raise OpError(f"{op_name(call)}: axis {axis} is out of range for a tensor of {len(tensor.shape)} "
                      f"dimensions", "axis")
    dim = tensor.shape[axis]
    if isinstance(dim, tir.IntImm) and dim.value % n:
        raise OpError(f"{op_name(call)}: the size of axis {axis} must be divisible by num_workers: "
                      f"it is {dim.value}, num_workers is {n}", "num_workers")
    if isinstance(s, rx.DTensorStructInfo):
        if len(s.device_mesh.shape) != 1 or s.placement.specs[0].axis is not None:
            raise OpError(f"{op_name(call)}: a distributed input must be replicated (\"R\") on a 1-D mesh, "
                          f"got placement \"{s.placement.text()}\" on a {len(s.device_mesh.shape)}-D mesh", 0)
        return _dtensor(call, tensor, s.device_mesh, Placement((PlacementSpec(axis),)))
    shape = list(tensor.shape)
    shape[axis] = simplify(tir.FloorDiv(dim, tir.IntImm(dim.dtype, n)))
    return rx.TensorStructInfo(tuple(shape), tensor.dtype, vdevice=tensor.vdevice)


@register_op("relax.dist.call_tir_local_view", dtensor_rule=DTENSOR_NATIVE, **_CALL_TIR_SCRIPT)
def _call_tir_local_view(call: rx.Call) -> rx.StructInfo:
    """The declared ``out_sinfo`` (distributed tensors, or a tuple of them): a call_tir of the TIR
    function each device runs on its own shard."""
    _check_prim_func_callee(call)
    _dps_args(call)
    if len(call.sinfo_args) != 1:
        raise OpError(f"{op_name(call)}: needs out_sinfo, the struct info of its result "
                      f"(got {len(call.sinfo_args)})", "out_sinfo")
    out = call.sinfo_args[0]
    for f in out.fields if isinstance(out, rx.TupleStructInfo) else (out,):
        if not isinstance(f, (rx.DTensorStructInfo, rx.TensorStructInfo)):
            raise OpError(f"{op_name(call)}: out_sinfo must be a distributed tensor (R.DTensor) or a list of "
                          f"them, got {describe(f)}", "out_sinfo")
    return out
