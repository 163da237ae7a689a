"""VMBuiltinLower (TVM's ``relax.transform.VMBuiltinLower``, ``LowerRuntimeBuiltin`` since
v0.19): the memory ops become the VM's own: ``R.memory.alloc_storage`` -> ``R.vm.alloc_storage``
(bytes, dtype ``uint8``), ``R.memory.alloc_tensor`` -> ``R.vm.alloc_tensor``, the kills ->
``R.vm.kill_object``; ``R.reshape`` (RewriteDataflowReshape's) -> ``R.call_packed("vm.builtin.reshape",
x, shape)``, a view of the same memory, ``R.shape_of`` -> ``R.call_packed("vm.builtin.shape_of", x)``,
``R.memory.ensure_zero_offset`` -> ``vm.builtin.ensure_zero_offset``.
AttachGlobalSymbol (TVM's ``relax.transform.AttachGlobalSymbol``): every
function gets ``"global_symbol"``, its name in the module, the symbol the VM calls it by."""
from __future__ import annotations

from typing import Iterable

from ...ir import relax as rx
from ...ir import tir
from ...ir.module import IRModule
from ...ir.struct_info import with_sinfo
from ..infra import FunctionPass, ModulePass, PassContext, register_pass
from .common import call, call_packed, is_op, rewrite_seq

__all__ = ["VMBuiltinLower", "LowerRuntimeBuiltin", "AttachGlobalSymbol"]


def _lower(b: rx.Binding) -> Iterable[rx.Binding]:
    """One binding with its memory op replaced by the VM's."""
    v = b.value
    if is_op(v, "relax.memory.alloc_storage"):
        size, device, scope, _ = v.args
        new = call("relax.vm.alloc_storage", size, device, with_sinfo(rx.DataTypeImm("uint8")), scope)
    elif is_op(v, "relax.memory.alloc_tensor"):
        new = call("relax.vm.alloc_tensor", *v.args)
    elif is_op(v, "relax.memory.kill_storage", "relax.memory.kill_tensor"):
        new = call("relax.vm.kill_object", v.args[0])
    elif is_op(v, "relax.reshape") and isinstance(v.struct_info, rx.TensorStructInfo):
        new = call_packed("vm.builtin.reshape", v.args[0], v.args[1], ret=v.struct_info)
    elif is_op(v, "relax.shape_of"):
        new = call_packed("vm.builtin.shape_of", v.args[0], ret=v.struct_info)
    elif is_op(v, "relax.memory.ensure_zero_offset"):
        new = call_packed("vm.builtin.ensure_zero_offset", v.args[0], ret=v.struct_info)
    else:
        return (b,)
    return (rx.VarBinding(b.var, new),)


class VMBuiltinLower(FunctionPass):
    """Lower the memory ops to the VM's built-ins."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        body = rewrite_seq(func.body, _lower)
        return func if body is func.body else rx.Function(func.params, body, func.ret_struct_info, func.is_pure,
                                                          func.attrs, span=func.span)


class LowerRuntimeBuiltin(VMBuiltinLower):
    """VMBuiltinLower under TVM's newer name."""


class AttachGlobalSymbol(ModulePass):
    """Give every function without one the ``"global_symbol"`` of its name."""

    opt_level = 0

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        for gv, func in mod.functions_items():
            if isinstance(func, (rx.Function, tir.PrimFunc)) and "global_symbol" not in func.attrs:
                mod.update_func(gv, func.with_attr("global_symbol", gv.name_hint))
        return mod


register_pass("VMBuiltinLower", VMBuiltinLower)
register_pass("LowerRuntimeBuiltin", LowerRuntimeBuiltin)
register_pass("AttachGlobalSymbol", AttachGlobalSymbol)
