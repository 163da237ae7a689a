"""ToNonDataflow: turn every dataflow block into an ordinary binding block (TVM's
``relax.transform.ToNonDataflow``)."""
from __future__ import annotations

from ..ir import relax as rx
from ..ir.functor import Mutator
from ..ir.module import IRModule
from .infra import FunctionPass, PassContext, register_pass

__all__ = ["ToNonDataflow"]


class _ToNonDataflowMutator(Mutator):
    """DataflowBlock -> BindingBlock and DataflowVar -> Var, the same new Var at every use."""

    def __init__(self) -> None:
        # id(old) -> (old, new); keeping `old` alive keeps its id unique.
        self.vars: dict[int, tuple[rx.DataflowVar, rx.Var]] = {}
        self.blocks = 0

    def visit_dataflow_var_(self, var: rx.DataflowVar) -> rx.Var:
        entry = self.vars.get(id(var))
        if entry is None:
            entry = self.vars[id(var)] = (var, rx.Var(var.name_hint, self.visit(var.struct_info), span=var.span))
        return entry[1]

    def visit_dataflow_block_(self, block: rx.DataflowBlock) -> rx.BindingBlock:
        self.blocks += 1
        return rx.BindingBlock(self.visit(block.bindings), span=block.span)


class ToNonDataflow(FunctionPass):
    """Replace dataflow blocks by binding blocks and dataflow variables by ordinary variables."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        mutator = _ToNonDataflowMutator()
        new = mutator.visit(func)
        self.stats["blocks"] += mutator.blocks
        self.stats["vars"] += len(mutator.vars)
        return new


register_pass("ToNonDataflow", ToNonDataflow)
