"""AnnotateTIROpPattern (TVM's ``relax.transform.AnnotateTIROpPattern``): record each PrimFunc's
fusion pattern as ``T.func_attr({"op_pattern": k})``, as ``ir/tir_pattern.py`` derives it from the
blocks' loads and stores (TVM's ``AnalyzeOpPatternKind``). Functions already annotated with a
non-zero pattern keep it."""
from __future__ import annotations

from ..ir import tir
from ..ir.module import IRModule
from ..ir.tir_pattern import analyze_op_pattern
from .infra import PassContext, PrimFuncPass, register_pass

__all__ = ["AnnotateTIROpPattern"]


class AnnotateTIROpPattern(PrimFuncPass):
    """Annotate every PrimFunc with its fusion pattern (``"op_pattern"``)."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        """The function with its ``op_pattern`` (kept when already non-zero)."""
        current = func.attrs.get("op_pattern")
        if current is not None and current != 0:
            return func
        self.stats["annotated"] += 1
        return func.with_attr("op_pattern", analyze_op_pattern(func))


register_pass("AnnotateTIROpPattern", AnnotateTIROpPattern)
