"""RemovePurityChecking (TVM's ``relax.transform.RemovePurityChecking``): every pure function
gets ``"relax.force_pure": True`` and the pure wrappers become the plain calls they wrap
(``R.call_pure_packed`` -> ``R.call_packed``, ``R.invoke_pure_closure`` -> ``R.invoke_closure``),
so later passes may insert impure calls (kills, allocations) into pure functions."""
from __future__ import annotations

from ...ir import relax as rx
from ...ir.expr_functor import ExprMutator
from ...ir.module import IRModule
from ...ir.node import replace
from ..infra import FunctionPass, PassContext, register_pass

__all__ = ["RemovePurityChecking"]


class _Unwrap(ExprMutator):
    """The pure wrappers replaced by the calls they wrap; nested pure functions marked too."""

    def visit_call_(self, call: rx.Call) -> rx.Expr:
        call = self.visit_expr_post_order(call)
        if isinstance(call.op, rx.Op) and call.op.name == "relax.call_pure_packed":
            return rx.Call(call.args[0], call.args[1:], sinfo_args=call.sinfo_args, struct_info=call.struct_info,
                           span=call.span)
        if isinstance(call.op, rx.Op) and call.op.name == "relax.invoke_pure_closure":
            return replace(call, op=rx.Op.get("relax.invoke_closure"))
        return call

    def visit_function_(self, func: rx.Function) -> rx.Expr:
        new = self.visit_expr_post_order(func)
        return _force_pure(new)


def _force_pure(func: rx.Function) -> rx.Function:
    """A pure function with ``"relax.force_pure": True``; an impure one as it is."""
    if not func.is_pure or func.attrs.get("relax.force_pure") is True:
        return func
    return func.with_attr("relax.force_pure", True)


class RemovePurityChecking(FunctionPass):
    """Mark pure functions ``relax.force_pure`` and unwrap the pure call wrappers."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        body = _Unwrap(mod).visit_expr(func.body)
        new = func if body is func.body else replace(func, body=body)
        return _force_pure(new)


register_pass("RemovePurityChecking", RemovePurityChecking)
