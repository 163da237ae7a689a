"""``tvmlite.tir``: the Python API of the loop-level IR, as ``tvm.tir`` spells it: node classes,
``stmt_functor`` (``post_order_visit``, ``ir_transform``, ``substitute``) and the
``StmtExprVisitor``/``StmtExprMutator`` functors. Everything is defined in :mod:`tvmlite.ir`."""
from __future__ import annotations

import sys

from tvmlite.ir import stmt_functor
from tvmlite.ir.stmt_functor import (PyStmtExprMutator, PyStmtExprVisitor, StmtExprMutator,
                                     StmtExprVisitor)
from tvmlite.ir.tir import *  # noqa: F403  (the node classes, ``const`` and ``seq``)
from tvmlite.ir.tir import __all__ as _nodes

# ``tir.functor`` holds the visitor classes and their decorators in TVM; here one module has both.
functor = stmt_functor
# Registered so that ``from tvmlite.tir.stmt_functor import substitute`` works as with TVM.
sys.modules.setdefault("tvmlite.tir.stmt_functor", stmt_functor)
sys.modules.setdefault("tvmlite.tir.functor", stmt_functor)

__all__ = [*_nodes, "stmt_functor", "functor", "StmtExprVisitor", "StmtExprMutator",
           "PyStmtExprVisitor", "PyStmtExprMutator"]


_SCHEDULE_NAMES = ("Schedule", "ScheduleError", "BlockRV", "LoopRV", "Trace", "Instruction")


def __getattr__(name: str) -> object:
    """``tir.Schedule`` and friends (and ``tir.schedule``), loaded on first use."""
    if name in _SCHEDULE_NAMES or name == "schedule":
        from tvmlite.passes import schedule

        return schedule if name == "schedule" else getattr(schedule, name)
    raise AttributeError(f"module 'tvmlite.tir' has no attribute {name!r}")
