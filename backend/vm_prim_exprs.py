"""TIR scalar expressions of a Relax function (symbolic sizes, ``R.prim_value``) compiled into
closures over the VM's frame."""
from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any, Callable

from ..ir import tir
from ..ir.arith import format_expr
from ..ir.scalar_ops import trunc_div, trunc_mod
from ..ir.dtype import parse_dtype
from ..ir.functor import Visitor
from ..ir.intrinsics import intrinsic_of_op
from .vm_frame import Fn, Frame, VMError, const_fn

if TYPE_CHECKING:  # the planner owns these compilers: a run-time import would be a cycle
    from .vm_plan import Planner


def scalar_kind(dtype: str) -> Callable[[Any], Any]:
    """The Python type a scalar of ``dtype`` becomes: int, float or bool."""
    d = parse_dtype(dtype)
    return bool if d.is_bool else float if d.is_float else int


def _binary_visitor(fn: Callable[[Any, Any], Any], text: str) -> Callable[["PrimExprCompiler", Any], Fn]:
    """A ``visit_<op>_`` method computing ``fn`` of both operands."""
    def visit(self: "PrimExprCompiler", expr: tir.BinaryOp) -> Fn:
        return self._binary(expr, fn)

    visit.__doc__ = f"``{text}``."
    return visit


class PrimExprCompiler(Visitor):
    """Compiles a TIR expression (a symbolic size, an ``R.prim_value``) into ``fn(frame)``
    returning a Python scalar; symbolic variables are read from their frame slots."""

    def __init__(self, planner: "Planner") -> None:
        self.planner = planner

    def compile(self, expr: tir.PrimExpr) -> Fn:
        """The closure computing ``expr``."""
        return self._handler(expr)(expr)

    def generic_visit(self, expr: Any) -> Fn:
        """Anything else cannot appear in a size or a prim value the VM computes."""
        raise VMError(f"{self.planner.name}: cannot compute {format_expr(expr)} ({type(expr).__name__}) "
                      f"in a Relax function")

    def visit_int_imm_(self, expr: tir.IntImm) -> Fn:
        """A literal (bool for ``T.bool``)."""
        return const_fn(bool(expr.value) if expr.dtype == "bool" else int(expr.value))

    def visit_float_imm_(self, expr: tir.FloatImm) -> Fn:
        """A float literal."""
        return const_fn(float(expr.value))

    def visit_tir_var_(self, var: tir.Var) -> Fn:
        """A symbolic variable: its slot."""
        return operator.itemgetter(self.planner.sym_slot(var))

    def _binary(self, expr: tir.BinaryOp, fn: Callable[[Any, Any], Any]) -> Fn:
        """Both operands, then ``fn``."""
        a, b = self.compile(expr.a), self.compile(expr.b)
        return lambda frame: fn(a(frame), b(frame))

    def visit_div_(self, expr: tir.Div) -> Fn:
        """True division on floats, C division on ints."""
        return self._binary(expr, operator.truediv if parse_dtype(expr.dtype).is_float else trunc_div)

    def visit_mod_(self, expr: tir.Mod) -> Fn:
        """C remainder (``fmod`` on floats)."""
        return self._binary(expr, math.fmod if parse_dtype(expr.dtype).is_float else trunc_mod)

    # Python's // and % floor (on ints and floats), as FloorDiv/FloorMod do.
    visit_add_ = _binary_visitor(operator.add, "a + b")
    visit_sub_ = _binary_visitor(operator.sub, "a - b")
    visit_mul_ = _binary_visitor(operator.mul, "a * b")
    visit_floor_div_ = _binary_visitor(operator.floordiv, "a // b (floor)")
    visit_floor_mod_ = _binary_visitor(operator.mod, "a % b (floor)")
    visit_min_ = _binary_visitor(min, "T.min")
    visit_max_ = _binary_visitor(max, "T.max")
    visit_eq_ = _binary_visitor(operator.eq, "a == b")
    visit_ne_ = _binary_visitor(operator.ne, "a != b")
    visit_lt_ = _binary_visitor(operator.lt, "a < b")
    visit_le_ = _binary_visitor(operator.le, "a <= b")
    visit_gt_ = _binary_visitor(operator.gt, "a > b")
    visit_ge_ = _binary_visitor(operator.ge, "a >= b")
    visit_and_ = _binary_visitor(lambda a, b: bool(a and b), "a and b")
    visit_or_ = _binary_visitor(lambda a, b: bool(a or b), "a or b")

    def visit_not_(self, expr: tir.Not) -> Fn:
        """Logical not."""
        a = self.compile(expr.a)
        return lambda frame: not a(frame)

    def visit_cast_(self, expr: tir.Cast) -> Fn:
        """int() truncates towards zero, as a C cast does."""
        kind, value = scalar_kind(expr.dtype), self.compile(expr.value)
        return lambda frame: kind(value(frame))

    def visit_select_(self, expr: tir.Select) -> Fn:
        """``T.Select``: one side, by the condition."""
        cond, a, b = self.compile(expr.condition), self.compile(expr.true_value), self.compile(expr.false_value)
        return lambda frame: a(frame) if cond(frame) else b(frame)

    def visit_tir_call_(self, expr: tir.Call) -> Fn:
        """``T.if_then_else``, one side by its condition (other intrinsics have no place in a size)."""
        info = intrinsic_of_op(expr.op)
        if info is None or not info.conditional:
            return self.generic_visit(expr)
        cond, a, b = (self.compile(x) for x in expr.args)
        return lambda frame: a(frame) if cond(frame) else b(frame)

    def visit_tir_let_(self, expr: tir.Let) -> Fn:
        """``T.let``: the value goes to a slot of its own for the body."""
        value = self.compile(expr.value)
        slot = self.planner.define_sym(expr.var, "a T.let")
        body = self.compile(expr.body)

        def run(frame: Frame) -> Any:
            frame[slot] = value(frame)
            return body(frame)

        return run
