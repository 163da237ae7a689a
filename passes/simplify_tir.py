"""Simplify (TVM's ``tir.transform.Simplify``): simplify the expressions of every PrimFunc and
drop the statements their values decide.

- Integer expressions take the canonical form of ``tvmlite.ir.arith`` (constants folded in the
  expression's dtype, ``x + 0``, ``x * 1``, ``x * 0``, nested constant adds, ``T.min``/``T.max``),
  knowing the ranges of the loop and block variables: in ``for i in range(16)``, ``i // 16`` is
  0, ``(j * 16 + i) % 16`` is ``i`` and ``i < 16`` is True.
- Float constants fold in their dtype (``T.min``/``T.max`` as the compiled select, ``a < b ? a : b``);
  of the identities only those IEEE arithmetic keeps exactly for every ``x`` (NaN, infinities and
  ``-0.0`` included) apply: ``x - 0.0``, ``x + -0.0``, ``-0.0 + x``, ``x * 1.0``, ``1.0 * x`` and
  ``x / 1.0`` are ``x``. Unlike TVM, ``x * 0.0`` stays (NaN or an infinity times zero is NaN, and
  ``-1.0 * 0.0`` is ``-0.0``), and so does ``x + 0.0`` (``-0.0 + 0.0`` is ``0.0``); casts of
  constants fold.
- Comparisons read ``a < b``/``a <= b`` (``k > 3`` is ``3 < k``), as TVM writes them.
- ``and``/``or``/``not`` of constants, ``T.Select`` and ``T.if_then_else`` with a constant
  condition fold; an ``if`` with a constant condition becomes the branch taken
  (``T.evaluate(0)`` when there is none).
- A loop or block variable whose range has one value is that value (the loop itself stays, as
  in TVM); ``x = value`` let statements with a constant, a variable or a pure integer value are
  inlined; ``A[i] = A[i]`` becomes ``T.evaluate(0)``.
"""
from __future__ import annotations

from ..ir import tir
from ..ir.arith import Analyzer, expr_key
from ..ir.const_fold import fold_binary, fold_cast, fold_choice, fold_logic, fold_not
from ..ir.dtype import parse_dtype
from ..ir.intrinsics import intrinsic_of_op
from ..ir.module import IRModule
from ..ir.node import Node, replace
from ..ir.stmt_functor import StmtExprMutator, post_order_visit
from .infra import PassContext, PrimFuncPass, register_pass

__all__ = ["Simplify", "simplify_stmt"]


def _scalar_kind(dtype: str) -> str | None:
    """"int" (integers and bool), "float" or None (vectors, handles...)."""
    try:
        d = parse_dtype(dtype)
    except ValueError:
        return None
    if d.lanes != 1:
        return None
    return "int" if d.is_integer or d.is_bool else "float" if d.is_float else None


def _is_int(dtype: str) -> bool:
    """Scalar integer or bool dtypes (the ones the index arithmetic folds)."""
    return _scalar_kind(dtype) == "int"


def _is_float(dtype: str) -> bool:
    """Scalar floating-point dtypes."""
    return _scalar_kind(dtype) == "float"


def _is_const(expr: tir.PrimExpr, value: float) -> bool:
    """True for a literal equal to ``value``."""
    return isinstance(expr, (tir.IntImm, tir.FloatImm)) and expr.value == value


def _pure_index(expr: tir.PrimExpr) -> bool:
    """An integer expression without loads or calls (safe to copy into every use)."""
    found: list[Node] = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, (tir.BufferLoad, tir.Call)) else None)
    return _is_int(expr.dtype) and not found


class _StmtSimplifier(StmtExprMutator):
    """Simplifies every expression (children first) and the statements their values decide."""

    def __init__(self) -> None:
        self.analyzer = Analyzer()
        self.values: dict[tir.Var, tir.PrimExpr] = {}  # variables replaced by their only value

    # ---- expressions: operands first (generic_visit), then the node itself
    def visit_var_(self, var: tir.Var) -> tir.PrimExpr:
        """A variable with a single value (extent-1 loop, inlined let) is that value."""
        return self.values.get(var, var)

    def visit_logic_(self, expr: tir.PrimExpr) -> tir.PrimExpr:
        """``and``/``or``/``not``."""
        return self.fold_logic(self.generic_visit(expr))

    visit_and_ = visit_or_ = visit_not_ = visit_logic_

    def visit_select_(self, expr: tir.Select) -> tir.PrimExpr:
        """``T.Select``."""
        new = self.generic_visit(expr)
        return self.fold_choice(new.condition, new.true_value, new.false_value, new)

    def visit_call_(self, call: tir.Call) -> tir.PrimExpr:
        """``T.if_then_else`` (a conditional intrinsic); others keep their (simplified) arguments."""
        new = self.generic_visit(call)
        info = intrinsic_of_op(new.op)
        if info is not None and info.conditional and len(new.args) == 3:
            return self.fold_choice(*new.args, new)
        return new

    def visit_cast_(self, expr: tir.Cast) -> tir.PrimExpr:
        """``T.Cast``."""
        return self.fold_cast(self.generic_visit(expr))

    def visit_arith_(self, expr: tir.BinaryOp) -> tir.PrimExpr:
        """``+ - * / % // T.min T.max``: the index arithmetic for integers, folding for floats."""
        new = self.generic_visit(expr)
        return self.fold_float(new) if _is_float(new.dtype) else self.analyzer.simplify(new)

    visit_add_ = visit_sub_ = visit_mul_ = visit_div_ = visit_mod_ = visit_arith_
    visit_floor_div_ = visit_floor_mod_ = visit_min_ = visit_max_ = visit_arith_

    def visit_compare_(self, expr: tir.CmpOp) -> tir.PrimExpr:
        """Comparisons, written ``a < b``/``a <= b`` as TVM writes them (``a > b`` is ``b < a``)."""
        new = self.generic_visit(expr)
        if isinstance(new, (tir.GT, tir.GE)):
            new = (tir.LT if isinstance(new, tir.GT) else tir.LE)(new.b, new.a, span=new.span)
        if not _is_float(new.a.dtype):
            return self.analyzer.simplify(new)
        folded = fold_binary(type(new), new.a, new.b, ieee_exact=True)
        return folded if folded is not None else new

    visit_eq_ = visit_ne_ = visit_lt_ = visit_le_ = visit_gt_ = visit_ge_ = visit_compare_

    @staticmethod
    def fold_logic(expr: tir.PrimExpr) -> tir.PrimExpr:
        """``and``/``or``/``not`` with a constant operand."""
        if isinstance(expr, tir.Not):
            folded = fold_not(expr.a)
        else:
            folded = fold_logic(type(expr), expr.a, expr.b)
        return folded if folded is not None else expr

    @staticmethod
    def fold_choice(cond: tir.PrimExpr, then: tir.PrimExpr, other: tir.PrimExpr,
                    expr: tir.PrimExpr) -> tir.PrimExpr:
        """``T.Select``/``T.if_then_else`` with a constant condition is the value chosen."""
        picked = fold_choice(cond, then, other)
        return picked if picked is not None else expr

    def fold_cast(self, expr: tir.Cast) -> tir.PrimExpr:
        """A cast to the value's own dtype, or of a literal (to a scalar int or float dtype)."""
        value = expr.value
        if value.dtype == expr.dtype:
            return value
        if _is_float(expr.dtype) or (isinstance(value, tir.FloatImm) and _is_int(expr.dtype)):
            folded = fold_cast(value, expr.dtype, ieee_exact=True)
            if folded is not None:
                return folded
        if _is_int(expr.dtype):
            return self.analyzer.simplify(expr)  # integer casts wrap to the target dtype
        return expr

    @staticmethod
    def fold_float(expr: tir.BinaryOp) -> tir.PrimExpr:
        """Float literals fold in their dtype; an identity folds only when IEEE arithmetic gives
        ``x`` back for every ``x`` (``ir/const_fold.py``, ``ieee_exact``)."""
        folded = fold_binary(type(expr), expr.a, expr.b, ieee_exact=True)
        return folded if folded is not None else expr

    # ---- statements
    def visit_for_(self, loop: tir.For) -> tir.Stmt:
        """The body knows the loop variable's range (its value, for an extent of 1)."""
        lo, extent = self.visit_expr(loop.min), self.visit_expr(loop.extent)
        body = self.in_range(loop.loop_var, lo, extent, loop.body)
        if lo is loop.min and extent is loop.extent and body is loop.body:
            return loop
        return replace(loop, min=lo, extent=extent, body=body)

    def in_range(self, var: tir.Var, lo: tir.PrimExpr, extent: tir.PrimExpr, stmt: tir.Stmt) -> tir.Stmt:
        """Simplify ``stmt`` knowing that ``var`` lies in ``[lo, lo + extent)``."""
        if _is_const(extent, 1):
            self.values[var] = lo
            try:
                return self.visit_stmt(stmt)
            finally:
                del self.values[var]
        previous = self.analyzer.bind(var, lo, extent)
        try:
            return self.visit_stmt(stmt)
        finally:
            self.analyzer.restore(var, previous)

    def visit_block_(self, block: tir.Block) -> tir.Stmt:
        """The block knows its iterators' domains (their value, for a domain of one)."""
        single = [iv for iv in block.iter_vars if iv.dom is not None and _is_const(iv.dom.extent, 1)]
        ranged = [iv for iv in block.iter_vars if iv.dom is not None and iv not in single]
        for iv in single:
            self.values[iv.var] = iv.dom.min
        previous = [self.analyzer.bind(iv.var, iv.dom.min, iv.dom.extent) for iv in ranged]
        try:
            return super().visit_block_(block)
        finally:
            for iv in single:
                del self.values[iv.var]
            for iv, prev in zip(ranged, previous):
                self.analyzer.restore(iv.var, prev)

    def visit_if_then_else_(self, stmt: tir.IfThenElse) -> tir.Stmt:
        """A constant condition keeps only the branch taken."""
        cond = self.visit_expr(stmt.condition)
        if isinstance(cond, tir.IntImm):
            if cond.value:
                return self.visit_stmt(stmt.then_case)
            if stmt.else_case is not None:
                return self.visit_stmt(stmt.else_case)
            return tir.Evaluate(tir.IntImm("int32", 0))
        then = self.visit_stmt(stmt.then_case)
        other = self.visit_stmt(stmt.else_case) if stmt.else_case is not None else None
        if cond is stmt.condition and then is stmt.then_case and other is stmt.else_case:
            return stmt
        return tir.IfThenElse(cond, then, other, span=stmt.span)

    def visit_let_stmt_(self, stmt: tir.LetStmt) -> tir.Stmt:
        """A let of a constant, a variable or a pure integer value is inlined."""
        value = self.visit_expr(stmt.value)
        if isinstance(value, (tir.IntImm, tir.FloatImm, tir.Var)) or _pure_index(value):
            self.values[stmt.var] = value
            try:
                return self.visit_stmt(stmt.body)
            finally:
                del self.values[stmt.var]
        body = self.visit_stmt(stmt.body)
        if value is stmt.value and body is stmt.body:
            return stmt
        return replace(stmt, value=value, body=body)

    def visit_buffer_store_(self, store: tir.BufferStore) -> tir.Stmt:
        """Storing what was just loaded from the same place does nothing."""
        new = super().visit_buffer_store_(store)
        load = new.value if isinstance(new, tir.BufferStore) else None
        if (isinstance(load, tir.BufferLoad) and load.buffer is new.buffer
                and expr_key(load.indices) == expr_key(new.indices)):
            return tir.Evaluate(tir.IntImm("int32", 0))
        return new


def simplify_stmt(stmt: tir.Stmt) -> tir.Stmt:
    """``stmt`` with its expressions simplified and the statements they decide removed."""
    return _StmtSimplifier().visit_stmt(stmt)


class Simplify(PrimFuncPass):
    """Simplify the index arithmetic and constant conditions of every PrimFunc."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        body = simplify_stmt(func.body)
        if body is func.body:
            return func
        self.stats["simplified_functions"] += 1
        return replace(func, body=body)


register_pass("Simplify", Simplify)
