"""TIR scalar expressions of a Relax function (symbolic sizes, ``R.prim_value``) compiled into
closures over the VM's frame, by the one scalar expression compiler (``ir/scalar_eval.py``) on
Python ints, floats and bools: symbolic variables and ``T.let`` bindings live in frame slots."""
from __future__ import annotations

from typing import Any

from ..ir import tir
from ..ir.arith import format_expr
from ..ir.scalar_eval import Fn, ScalarCompiler
from ..ir.scalar_eval import python_kind as scalar_kind
from .vm_frame import SymbolSlots, VMError

__all__ = ["PrimExprCompiler", "scalar_kind"]


class PrimExprCompiler(ScalarCompiler):
    """Compiles a TIR expression (a symbolic size, an ``R.prim_value``) into ``fn(frame)``
    returning a Python scalar; symbolic variables are read from their frame slots."""

    def __init__(self, planner: SymbolSlots) -> None:
        self.planner = planner

    def var_key(self, var: tir.Var) -> int:
        """A symbolic variable's slot."""
        return self.planner.sym_slot(var)

    def let_key(self, var: tir.Var) -> int:
        """A ``T.let`` value goes to a slot of its own for the body."""
        return self.planner.define_sym(var, "a T.let")

    def unknown(self, expr: Any) -> Fn:
        """Anything else cannot appear in a size or a prim value the VM computes."""
        raise VMError(f"{self.planner.name}: cannot compute {format_expr(expr)} ({type(expr).__name__}) "
                      f"in a Relax function")
