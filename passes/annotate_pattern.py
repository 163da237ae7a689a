"""AnnotateTIROpPattern (TVM's ``relax.transform.AnnotateTIROpPattern``): record each PrimFunc's
fusion pattern as ``T.func_attr({"op_pattern": k})``, derived from its blocks' loads and stores
as TVM's ``AnalyzeOpPatternKind`` does.

Per block (one store ``C[idx] = ...``): every load compared with the store is elementwise (same
indices), broadcast (a subsequence of them, unit dims at 0), or injective (only their
variables); the block takes the loosest, except that an elementwise load makes a broadcast
block elementwise. A block whose loads fit none of these is a reduction when it has reduce
iterators: multiply-accumulate (matmul, conv2d) is out-elementwise-fusable, a reduction whose
reduce indices are plain reduce variables is comm-reduce, any other (pooling) out-elementwise-
fusable; without reduce iterators it is opaque. The function takes the loosest pattern of its
blocks (an elementwise output block after a reduction makes it out-elementwise-fusable, as
softmax). Functions already annotated with a non-zero pattern keep it."""
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
