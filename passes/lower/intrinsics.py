"""LowerIntrinsics (TVM's ``LowerIntrin`` for the llvm target): the intrinsics whose entry in
``ir/intrinsics.py`` has a ``legalize`` rule become arithmetic on others before code generation,
e.g. ``T.sigmoid(x)`` -> ``1 / (1 + T.exp(0 - x))``. Everything else stays for the code generator,
which lowers it as its table entry says."""
from __future__ import annotations

from ...ir import tir
from ...ir.intrinsics import intrinsic_of_op
from ...ir.module import IRModule
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprMutator
from ..infra import PassContext, PrimFuncPass, register_pass

__all__ = ["LowerIntrinsics", "lower_intrinsics"]


class _IntrinsicLowerer(StmtExprMutator):
    """Applies the rules to every call (arguments first)."""

    def visit_call_(self, call: tir.Call) -> tir.PrimExpr:
        """A rule's expansion, or the call with lowered arguments."""
        new = super().visit_call_(call)
        info = intrinsic_of_op(new.op)
        return new if info is None or info.legalize is None else info.legalize(new)


def lower_intrinsics(func: tir.PrimFunc) -> tir.PrimFunc:
    """``func`` with the intrinsics that have a legalize rule expanded."""
    body = _IntrinsicLowerer().visit_stmt(func.body)
    return func if body is func.body else replace(func, body=body)


class LowerIntrinsics(PrimFuncPass):
    """Expand the intrinsics whose table entry has a legalize rule."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        new = lower_intrinsics(func)
        if new is not func:
            self.stats["lowered_functions"] += 1
        return new


register_pass("LowerIntrinsics", LowerIntrinsics)
