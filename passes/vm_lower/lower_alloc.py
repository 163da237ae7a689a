"""LowerAllocTensor (TVM's ``relax.transform.LowerAllocTensor``): each ``R.builtin.alloc_tensor``
the memory planner left (a tensor that outlives the function, or one of unknown size) gets a
storage of its own: ``R.memory.alloc_storage`` of its bytes (dtype ``uint8``) and an
``R.memory.alloc_tensor`` at offset 0 in it."""
from __future__ import annotations

from typing import Iterable

from ...ir import relax as rx
from ...ir.module import IRModule
from ...ir.struct_info import with_sinfo
from ..infra import FunctionPass, PassContext, register_pass
from .common import NameSupply, call, fresh, is_op, nbytes, rewrite_seq, zero

__all__ = ["LowerAllocTensor"]


class _Lower:
    """Rewrites the remaining allocations of one function (names count per function, as TVM's)."""

    def __init__(self) -> None:
        self.names = NameSupply()
        self.count = 0

    def __call__(self, b: rx.Binding) -> Iterable[rx.Binding]:
        value = b.value
        if not is_op(value, "relax.builtin.alloc_tensor") or not isinstance(value.args[0], rx.ShapeExpr) \
                or not isinstance(value.args[1], rx.DataTypeImm):
            return (b,)
        shape, dtype, scope = value.args[0], value.args[1], value.args[3]
        storage = fresh(self.names("storage"), rx.ObjectStructInfo())
        self.count += 1
        return (rx.VarBinding(storage, call("relax.memory.alloc_storage", with_sinfo(rx.ShapeExpr(
                    (nbytes(shape.values, dtype.value),))), zero(), scope, with_sinfo(rx.DataTypeImm("uint8")))),
                rx.VarBinding(b.var, call("relax.memory.alloc_tensor", storage, zero(), shape, dtype, zero())))


class LowerAllocTensor(FunctionPass):
    """Give every remaining ``R.builtin.alloc_tensor`` a storage of its own."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        lower = _Lower()
        body = rewrite_seq(func.body, lower)
        self.stats["storages"] += lower.count
        return func if body is func.body else rx.Function(func.params, body, func.ret_struct_info, func.is_pure,
                                                          func.attrs, span=func.span)


register_pass("LowerAllocTensor", LowerAllocTensor)
