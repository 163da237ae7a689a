"""The one compiler of TIR scalar expressions into closures ``fn(frame)``.

A ``ScalarCompiler`` walks an expression once and returns a closure computing it from a frame (any
subscriptable: the VM's and the interpreter's slot lists, the argument checker's dict of sizes).
The walk and the closures are here; what differs between the evaluators are hooks:

- ``var_key(var)``: where a variable's value is in the frame (its slot, or ``id(var)``);
  ``let_key(var)``: where a ``T.let`` puts the value it binds;
- ``constant(value, dtype)``: what a literal is (a Python number by default);
- ``unknown(node)``: a node the evaluator has no rule for (buffer loads, calls, vectors...),
  which may raise at compile time or return a closure that fails when reached;
- ``call(expr, info)``: a call other than a conditional one (``T.if_then_else``, which evaluates
  only the side its condition picks, is compiled here from its table entry);
- the per-node rules an evaluator computes differently: ``division``, ``visit_min_max_``,
  ``visit_logic_``, ``visit_not_``, ``visit_cast_``, ``visit_select_``.

The defaults compute on Python numbers (``ir/scalar_ops.py``'s meanings): ints, floats and bools,
``/`` truncating on integers, ``T.min``/``T.max`` as Python's, ``and``/``or`` of both operands,
``T.Select`` lazily. The VM's sizes (``backend/vm_prim_exprs.py``) use them as they are, the
argument checker (``backend/signature.py``) a subset on ints, and the TIR interpreter
(``backend/interpreter.py``) overrides the rules for numpy scalars of the TIR dtype.

``+ - *`` and the comparisons are one Python operator each on every kind of value (numpy scalars
wrap and round as their dtype does), written inline in closures specialised to the operands'
shapes (a variable, a literal, an expression): an ``operator.add`` call per evaluation would cost a
third of the time of the interpreter's hottest index arithmetic.

This module holds data and closures only: ``ir/`` must not import ``passes/`` or ``backend/``."""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from . import tir
from .dtype import parse_dtype
from .functor import Visitor
from .intrinsics import Intrinsic, intrinsic_of_op
from .scalar_ops import OPERATOR_SYMBOLS, python_division

__all__ = ["ScalarCompiler", "ScalarEvalError", "python_kind", "Fn"]

Fn = Callable[[Any], Any]  # frame -> value


class ScalarEvalError(ValueError):
    """An expression the compiler has no rule for."""


def python_kind(dtype: str) -> Callable[[Any], Any]:
    """The Python type a scalar of ``dtype`` becomes: int, float or bool."""
    d = parse_dtype(dtype)
    return bool if d.is_bool else float if d.is_float else int


def _operand_factories(op: str) -> dict[str, Callable[[Any, Any], Fn]]:
    """Closure factories for ``a <op> b`` by operand shape: ``e`` an expression closure, ``v`` a
    frame key, ``c`` a constant; the operator is written inline, hence the one-time ``eval``."""
    get = {"e": "{x}(f)", "v": "f[{x}]", "c": "{x}"}
    return {shape: eval(f"lambda a, b: lambda f: {get[shape[0]].format(x='a')} {op} {get[shape[1]].format(x='b')}")
            for shape in ("ee", "ev", "ec", "ve", "vv", "vc", "ce", "cv", "cc")}


_FACTORIES = {cls: _operand_factories(op) for cls, op in OPERATOR_SYMBOLS.items()}


class ScalarCompiler(Visitor):
    """Compiles a TIR scalar expression into ``fn(frame)``; subclasses set the hooks (see the module)."""

    # ---------------------------------------------------------------- hooks
    def var_key(self, var: tir.Var) -> Any:
        """The frame key holding ``var``'s value."""
        raise NotImplementedError

    def let_key(self, var: tir.Var) -> Any:
        """The frame key a ``T.let`` binding ``var`` writes (no lets by default)."""
        raise ScalarEvalError(f"cannot bind {var.name} in this expression")

    def constant(self, value: Any, dtype: str) -> Any:
        """A literal's value: a Python bool, int or float."""
        return python_kind(dtype)(value)

    def unknown(self, node: Any) -> Fn:
        """A node without a rule."""
        raise ScalarEvalError(f"cannot evaluate a {type(node).__name__}")

    def call(self, expr: tir.Call, info: Intrinsic | None) -> Fn:
        """A call of ``info`` (None: a function or an unknown name); other than a conditional one."""
        return self.unknown(expr)

    def division(self, expr: tir.BinaryOp) -> Callable[[Any, Any], Any]:
        """What ``/``, ``T.truncmod``, ``//`` and ``%`` compute on two values."""
        return python_division(type(expr), parse_dtype(expr.dtype).is_float)

    # ---------------------------------------------------------------- the walk
    def compile(self, expr: tir.PrimExpr) -> Fn:
        """The closure computing ``expr``."""
        return self._dispatch(expr)

    def generic_visit(self, node: Any) -> Fn:
        """Nodes without a rule here."""
        return self.unknown(node)

    def visit_tir_var_(self, var: tir.Var) -> Fn:
        """A variable: its frame entry."""
        return operator.itemgetter(self.var_key(var))

    def visit_imm_(self, e: tir.PrimExpr) -> Fn:
        """A literal."""
        value = self.constant(e.value, e.dtype)
        return lambda f: value

    visit_int_imm_ = visit_float_imm_ = visit_imm_

    def operand(self, e: tir.PrimExpr) -> tuple[str, Any]:
        """An operand's shape for the inline operators: ``("v", key)``, ``("c", value)`` or ``("e", closure)``."""
        if type(e) in (tir.Var, tir.SizeVar):
            return "v", self.var_key(e)
        if type(e) in (tir.IntImm, tir.FloatImm):
            return "c", self.constant(e.value, e.dtype)
        return "e", self.compile(e)

    def visit_arith_(self, e: tir.BinaryOp) -> Fn:
        """``+ - *`` and comparisons: the operator inline; two literals are computed once."""
        (sa, a), (sb, b) = self.operand(e.a), self.operand(e.b)
        closure = _FACTORIES[type(e)][sa + sb](a, b)
        if sa + sb == "cc":
            with np.errstate(all="ignore"):  # wraparound and inf/NaN are values, not warnings
                value = closure(None)
            return lambda f: value
        return closure

    visit_add_ = visit_sub_ = visit_mul_ = visit_arith_
    visit_eq_ = visit_ne_ = visit_lt_ = visit_le_ = visit_gt_ = visit_ge_ = visit_arith_

    def visit_division_(self, e: tir.BinaryOp) -> Fn:
        """``/``, ``T.truncmod``, ``//``, ``%`` by ``division``."""
        a, b, fn = self.compile(e.a), self.compile(e.b), self.division(e)
        return lambda f: fn(a(f), b(f))

    visit_div_ = visit_mod_ = visit_floor_div_ = visit_floor_mod_ = visit_division_

    def visit_min_max_(self, e: tir.BinaryOp) -> Fn:
        """``T.min``/``T.max``: Python's."""
        a, b, fn = self.compile(e.a), self.compile(e.b), min if isinstance(e, tir.Min) else max
        return lambda f: fn(a(f), b(f))

    visit_min_ = visit_max_ = visit_min_max_

    def visit_logic_(self, e: tir.BinaryOp) -> Fn:
        """``and``/``or`` of both operands (both are computed)."""
        a, b = self.compile(e.a), self.compile(e.b)
        if isinstance(e, tir.And):
            def both_and(f: Any) -> bool:
                x, y = a(f), b(f)
                return bool(x and y)
            return both_and

        def both_or(f: Any) -> bool:
            x, y = a(f), b(f)
            return bool(x or y)

        return both_or

    visit_and_ = visit_or_ = visit_logic_

    def visit_not_(self, e: tir.Not) -> Fn:
        """Logical not."""
        a = self.compile(e.a)
        return lambda f: not a(f)

    def visit_cast_(self, e: tir.Cast) -> Fn:
        """A conversion to the dtype's Python type (``int()`` truncates towards zero, as C)."""
        kind, value = python_kind(e.dtype), self.compile(e.value)
        return lambda f: kind(value(f))

    def choose(self, cond: Fn, then: Fn, other: Fn) -> Fn:
        """Only the side the condition picks is computed."""
        return lambda f: then(f) if cond(f) else other(f)

    def visit_select_(self, e: tir.Select) -> Fn:
        """``T.Select``: one side, by the condition."""
        return self.choose(self.compile(e.condition), self.compile(e.true_value), self.compile(e.false_value))

    def visit_tir_call_(self, e: tir.Call) -> Fn:
        """A conditional intrinsic (``T.if_then_else``) lazily; other calls through ``call``."""
        info = intrinsic_of_op(e.op)
        if info is not None and info.conditional:
            cond, then, other = (self.compile(x) for x in e.args)
            return self.choose(cond, then, other)
        return self.call(e, info)

    def visit_tir_let_(self, e: tir.Let) -> Fn:
        """``T.let``: the value goes to the bound variable's frame entry for the body."""
        value = self.compile(e.value)
        key = self.let_key(e.var)
        body = self.compile(e.body)

        def let(f: Any) -> Any:
            f[key] = value(f)
            return body(f)

        return let
