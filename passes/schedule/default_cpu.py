"""The default CPU schedule: what ``tvmlite.compile`` applies to every PrimFunc that is not
already scheduled, in the spirit of TVM's dlight rules, built only from ``Schedule`` primitives.

1. **Inline** producers: an elementwise block writing an intermediate buffer is substituted into
   its consumers (so a fused elementwise chain is one pass over memory); into a reduction only
   when it merely moves data (transpose, reshape), so no arithmetic is repeated per reduction step.
2. **Elementwise** blocks: the innermost loop split into vector lanes and vectorized, all the
   outer loops fused into one parallel loop (unpacking NCHW16c -> NCHW: a vector along the
   output's contiguous loop, the block's channels unrolled).
3. **Matmuls**: a register tile with a packed panel of B when B runs along the output's columns;
   tiles of dot products reassociated along k when both operands run along k (``x @ W.T``).
   **Convolutions** (NCHW): a tile of a few output channels x a row, the padded input rows
   computed per task; packed (NCHW16c): a tile of output columns x a vector of output channels.
   Epilogues are folded into (or computed right after) each tile. **Packed pools** (a window
   reduction into NCHW16c): a tile of output columns x the vector of channels, per output row.
4. **Other reductions**: spatial loops outside, reduction loops inside; the init split off
   (``decompose_reduction``); the innermost spatial loop vectorized when the output is contiguous
   along it, else the innermost reduction loop marked for a reassociating vector reduction;
   the outer spatial loops fused and parallel.

Reductions are scheduled before the elementwise blocks left over. Each rule either succeeds or
is abandoned as a whole (the function keeps what the earlier rules
did): a refused primitive never leaves a half-scheduled block. ``default_schedule(func)`` returns
the Schedule, so ``print(default_schedule(func).trace)`` shows every step taken."""
from __future__ import annotations

from ...ir import tir
from ...ir.module import IRModule
from ...ir.stmt_functor import post_order_visit
from ..infra import PassContext, PrimFuncPass, register_pass
from .schedule import Schedule
from .state import BlockRV, ScheduleError
from .conv_rules import shallow_conv_rule, wide_conv_rule
from .gemv_rules import few_rows_rule, gemv_rule
from .generic_rules import (conv_rule, dot_rule, elementwise_rule, inline_producers, narrow_rule, packed_conv_rule,
                            packed_pool_rule, reduction_rule, tile_rule, unpack_rule)
from .rule_support import SCHEDULE_RULE_KEY, Rule, attempt_rule, root_blocks
from .transformer_rules import row_chain_rule, row_reduction_rule, transposed_panel_rule

__all__ = ["DefaultCPUSchedule", "default_schedule", "is_scheduled", "REDUCTION_RULES", "ELEMENTWISE_RULES"]


def is_scheduled(func: tir.PrimFunc) -> bool:
    """True when ``func`` says so (``tir.is_scheduled``) or has a parallel, vector, unrolled or
    thread-bound loop: somebody scheduled it by hand, and the default schedule keeps out."""
    if func.attrs.get("tir.is_scheduled"):
        return True
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.For)
                     and n.kind != tir.ForKind.SERIAL else None)
    return bool(found)


def _has_blocks(func: tir.PrimFunc) -> bool:
    return isinstance(func.body, tir.BlockRealize)


# Tried in this order on each reduction block; the first that succeeds schedules it. The special
# cases (GEMV, few rows, transposed panels, the shallow and wide convolution tiles, row chains)
# come before the generic rule they refine.
REDUCTION_RULES: tuple[Rule, ...] = (gemv_rule, few_rows_rule, transposed_panel_rule, dot_rule, narrow_rule,
                                     tile_rule, shallow_conv_rule, wide_conv_rule, packed_conv_rule, packed_pool_rule,
                                     conv_rule, row_chain_rule, row_reduction_rule, reduction_rule)
ELEMENTWISE_RULES: tuple[Rule, ...] = (unpack_rule, elementwise_rule)


def default_schedule(func: tir.PrimFunc) -> Schedule:
    """The default CPU schedule of one PrimFunc, as a Schedule (``.mod["main"]``, ``.trace``)."""
    sch = Schedule(IRModule({"main": func}))
    if not _has_blocks(func):
        return sch
    inline_producers(sch)
    # Reductions first: they take their producers (a padded input) into their tiles and fold
    # their epilogues into the write-back; the elementwise blocks left are scheduled after.
    for rules in (REDUCTION_RULES, ELEMENTWISE_RULES):
        for name in root_blocks(sch):
            block_rv = BlockRV("main", "probe", name)
            try:
                if _left_alone(sch.get(block_rv)):
                    continue
            except ScheduleError:
                continue  # an earlier rule took the block (inlined it, or computed it inside a tile)
            if not any(attempt_rule(sch, rule, block_rv) for rule in rules):
                continue
    return sch


def _left_alone(block: tir.Block) -> bool:
    """A block annotated ``"schedule_rule": "None"`` (MetaSchedule's way to keep a block from the
    auto-scheduler) keeps its loops as they are: a rule that made it for a reason of its own (the
    narrow matmul's transposed copy of B) says so."""
    rule = block.annotations.get(SCHEDULE_RULE_KEY) if block.annotations else None
    return rule is not None and getattr(rule, "value", rule) == "None"


class DefaultCPUSchedule(PrimFuncPass):
    """Apply the default CPU schedule to every PrimFunc not already scheduled (see
    :func:`is_scheduled`); the result is marked ``tir.is_scheduled``."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        if is_scheduled(func) or not _has_blocks(func):
            return func
        scheduled = default_schedule(func).mod["main"]
        self.stats["scheduled_functions"] += 1
        return scheduled.with_attr("tir.is_scheduled", True)  # type: ignore[union-attr]


register_pass("DefaultCPUSchedule", DefaultCPUSchedule)
