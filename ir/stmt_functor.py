"""TIR traversal with TVM's hook names: ``StmtExprVisitor`` / ``StmtExprMutator`` (``visit_stmt``,
``visit_expr``, ``visit_for_``, ``visit_buffer_store_``, ``visit_add_``...), and the
``tvm.tir.stmt_functor`` functions ``post_order_visit``, ``ir_transform`` and ``substitute``.

They dispatch through :mod:`tvmlite.ir.functor`. As in TVM, the walk goes through statements and
expressions (loop bounds, indices, values, block regions) but not into definitions: loop
variables, let-bound variables, buffers and annotations are left alone."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, TypeVar, Union

from . import tir
from .functor import Mutator, Visitor, inherit_span
from .functor import post_order_visit as walk_all
from .node import Node, node_fields, replace

__all__ = ["StmtExprVisitor", "StmtExprMutator", "PyStmtExprVisitor", "PyStmtExprMutator",
           "visitor", "mutator", "post_order_visit", "stmt_children", "statements_of", "vars_of", "ir_transform", "substitute"]

_C = TypeVar("_C", bound=type)
StmtOrExpr = Union[tir.Stmt, tir.PrimExpr]

# Fields that define names or hold buffers/annotations: TVM's StmtExprVisitor does not walk them.
_DEFINITIONS = frozenset({"loop_var", "var", "buffer", "buffer_var", "alloc_buffers", "thread_binding",
                          "annotations", "node", "op", "params", "buffer_map", "attrs"})

class _StmtExprRouting:
    """Sends every statement through ``visit_stmt`` and every expression through ``visit_expr``
    (so overriding either sees all of them), and maps node keys to TVM's hook names."""

    _skip_fields = _DEFINITIONS
    # Whether the class keeps the base visit_stmt/visit_expr: its ``visit`` then dispatches
    # statements and expressions itself (a frame less per node of every walk).
    _direct = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        base = globals().get("StmtExprMutator" if issubclass(cls, Mutator) else "StmtExprVisitor", cls)
        cls._direct = cls.visit_stmt is base.visit_stmt and cls.visit_expr is base.visit_expr

    def visit(self, node: Any) -> Any:
        """Route statements and expressions through ``visit_stmt``/``visit_expr``."""
        if isinstance(node, tir.PrimExpr):
            return self._direct_visit(node) if self._direct else self.visit_expr(node)
        if isinstance(node, tir.Stmt):
            return self._direct_visit(node) if self._direct else self.visit_stmt(node)
        return super().visit(node)  # type: ignore[misc]

    def _direct_visit(self, node: Node) -> Any:
        """What the base ``visit_stmt``/``visit_expr`` do (the mutator's adds the span)."""
        return self._dispatch(node)  # type: ignore[attr-defined]

    def visit_stmt(self, stmt: tir.Stmt) -> Any:
        """Visit a statement (dispatches to ``visit_<kind>_``)."""
        return self._dispatch(stmt)  # type: ignore[attr-defined]

    def visit_expr(self, expr: tir.PrimExpr) -> Any:
        """Visit an expression (dispatches to ``visit_<kind>_``)."""
        return self._dispatch(expr)  # type: ignore[attr-defined]

    # Keys that differ from TVM's hook names (tir.Var is "tir_var" beside Relax's "var").
    def visit_tir_var_(self, var: tir.Var) -> Any:
        """``visit_var_``."""
        return self.visit_var_(var)

    def visit_tir_call_(self, call: tir.Call) -> Any:
        """``visit_call_``."""
        return self.visit_call_(call)

    def visit_tir_let_(self, let: tir.Let) -> Any:
        """``visit_let_``."""
        return self.visit_let_(let)

    def visit_tir_string_imm_(self, imm: tir.StringImm) -> Any:
        """``visit_string_imm_``."""
        return self.visit_string_imm_(imm)


class StmtExprVisitor(_StmtExprRouting, Visitor):
    """Walks TIR; override ``visit_for_``, ``visit_buffer_store_``, ``visit_add_``... and call the
    ``super()`` method to keep walking into the children."""

    def _leaf(self, node: Node) -> None:
        """Leaves have no children."""

    visit_var_ = visit_int_imm_ = visit_float_imm_ = visit_string_imm_ = _leaf

    def visit_block_(self, block: tir.Block) -> None:
        """In TVM's order: iterator domains, regions, match_buffers, init, body."""
        for group in (block.iter_vars, block.reads, block.writes, block.match_buffers):
            self.visit(group)
        if block.init is not None:
            self.visit_stmt(block.init)
        self.visit_stmt(block.body)

    def visit_allocate_(self, alloc: tir.Allocate) -> None:
        """In TVM's order: extents, body, condition."""
        self.visit(alloc.extents)
        self.visit_stmt(alloc.body)
        self.visit_expr(alloc.condition)

    # The other nodes visit their children in field order, which is TVM's order.
    visit_let_stmt_ = visit_attr_stmt_ = visit_if_then_else_ = visit_for_ = Visitor.generic_visit
    visit_while_ = Visitor.generic_visit
    visit_decl_buffer_ = visit_buffer_store_ = visit_assert_stmt_ = Visitor.generic_visit
    visit_seq_stmt_ = visit_evaluate_ = visit_block_realize_ = Visitor.generic_visit
    visit_buffer_load_ = visit_let_ = visit_call_ = visit_cast_ = visit_not_ = Visitor.generic_visit
    visit_select_ = Visitor.generic_visit
    visit_ramp_ = visit_broadcast_ = Visitor.generic_visit
    visit_add_ = visit_sub_ = visit_mul_ = visit_div_ = visit_mod_ = Visitor.generic_visit
    visit_floor_div_ = visit_floor_mod_ = visit_min_ = visit_max_ = Visitor.generic_visit
    visit_eq_ = visit_ne_ = visit_lt_ = visit_le_ = visit_gt_ = visit_ge_ = Visitor.generic_visit
    visit_and_ = visit_or_ = Visitor.generic_visit


class StmtExprMutator(_StmtExprRouting, Mutator):
    """Rewrites TIR bottom-up; override ``visit_for_``, ``visit_add_``... to return a replacement
    (call the ``super()`` method to rewrite the children first). A replacement without a source
    location takes the location of the node it replaces."""

    def _direct_visit(self, node: Node) -> Any:
        """What the base ``visit_stmt``/``visit_expr`` do: dispatch, keep the span."""
        fn = self._handler_fns.get(type(node))
        if fn is None:
            fn = self._resolve(type(node))
        new = fn(self, node)
        if new is node:
            return new
        return inherit_span(node, new)

    def visit_stmt(self, stmt: tir.Stmt) -> Any:
        """Rewrite a statement (dispatches to ``visit_<kind>_``)."""
        return inherit_span(stmt, self._dispatch(stmt))

    def visit_expr(self, expr: tir.PrimExpr) -> Any:
        """Rewrite an expression (dispatches to ``visit_<kind>_``)."""
        return inherit_span(expr, self._dispatch(expr))

    def _leaf(self, node: Node) -> Node:
        """Leaves are kept."""
        return node

    visit_var_ = visit_int_imm_ = visit_float_imm_ = visit_string_imm_ = _leaf

    def visit_seq_stmt_(self, seq: tir.SeqStmt) -> tir.Stmt:
        """Rewritten statements are flattened into one sequence (a single one stands alone)."""
        stmts = tuple(self.visit_stmt(s) for s in seq.seq)
        if all(a is b for a, b in zip(stmts, seq.seq)):
            return seq
        return tir.seq(stmts)

    # The other nodes are rebuilt from their rewritten fields when one changed.
    visit_let_stmt_ = visit_attr_stmt_ = visit_if_then_else_ = visit_for_ = Mutator.generic_visit
    visit_while_ = Mutator.generic_visit
    visit_allocate_ = visit_decl_buffer_ = visit_buffer_store_ = visit_assert_stmt_ = Mutator.generic_visit
    visit_evaluate_ = visit_block_ = visit_block_realize_ = Mutator.generic_visit
    visit_buffer_load_ = visit_let_ = visit_call_ = visit_cast_ = visit_not_ = Mutator.generic_visit
    visit_select_ = Mutator.generic_visit
    visit_ramp_ = visit_broadcast_ = Mutator.generic_visit
    visit_add_ = visit_sub_ = visit_mul_ = visit_div_ = visit_mod_ = Mutator.generic_visit
    visit_floor_div_ = visit_floor_mod_ = visit_min_ = visit_max_ = Mutator.generic_visit
    visit_eq_ = visit_ne_ = visit_lt_ = visit_le_ = visit_gt_ = visit_ge_ = Mutator.generic_visit
    visit_and_ = visit_or_ = Mutator.generic_visit


# TVM's Python API names (tvm.tir.functor): the decorators register a class with the C++ side;
# here the classes are already Python, so they return them as they are.
PyStmtExprVisitor = StmtExprVisitor
PyStmtExprMutator = StmtExprMutator


def visitor(cls: _C) -> _C:
    """``@tir.functor.visitor``: accepted for TVM compatibility; returns the class."""
    return cls


def mutator(cls: _C) -> _C:
    """``@tir.functor.mutator``: accepted for TVM compatibility; returns the class."""
    return cls


# ==================================================================== stmt_functor functions
class _PostOrderApply(StmtExprVisitor):
    """Calls a function once on every statement and expression, children first."""

    def __init__(self, fvisit: Callable[[Node], Any]) -> None:
        self.fvisit = fvisit
        self.seen: set[int] = set()
        self.keep: list[Node] = []  # keeps visited nodes alive so their ids stay unique

    def _once(self, node: Node, walk: Callable[[Node], Any]) -> None:
        """Walk ``node`` and report it, unless it was reached before."""
        if id(node) in self.seen:
            return
        self.seen.add(id(node))
        self.keep.append(node)
        walk(node)
        self.fvisit(node)

    def visit_stmt(self, stmt: tir.Stmt) -> None:
        """Each statement once."""
        self._once(stmt, super().visit_stmt)

    def visit_expr(self, expr: tir.PrimExpr) -> None:
        """Each expression once."""
        self._once(expr, super().visit_expr)


def post_order_visit(stmt: StmtOrExpr, fvisit: Callable[[Node], Any]) -> None:
    """Call ``fvisit`` once on each statement and expression in ``stmt``, children first."""
    _PostOrderApply(fvisit).visit(stmt)


def stmt_children(stmt: tir.Stmt) -> list[tuple[str, int | None, tir.Stmt]]:
    """The statements directly inside ``stmt``: (field, index or None, child)."""
    out = []
    for name in _stmt_fields(type(stmt)):
        value = getattr(stmt, name)
        if isinstance(value, tir.Stmt):
            out.append((name, None, value))
        elif isinstance(value, tuple) and value and isinstance(value[0], tir.Stmt):
            out.extend((name, i, child) for i, child in enumerate(value))
    return out


_STMT_FIELDS: dict[type, tuple[str, ...]] = {}


def _stmt_fields(cls: type) -> tuple[str, ...]:
    """The fields of a statement class that may hold statements (by their annotations: schedules
    walk every statement many times, and most fields hold expressions)."""
    names = _STMT_FIELDS.get(cls)
    if names is None:
        try:
            kinds = {f.name: str(f.type) for f in dataclasses.fields(cls)}
        except TypeError:
            kinds = {}
        names = _STMT_FIELDS[cls] = tuple(
            n for n in node_fields(cls)
            if n not in kinds or any(w in kinds[n] for w in ("Stmt", "Block", "Any")) or kinds[n] == "tuple")
    return names


def statements_of(stmt: tir.Stmt) -> list[tir.Stmt]:
    """Every statement in ``stmt`` (itself included), in pre-order, without entering expressions:
    what a question about statement kinds needs, at a fraction of a full walk's cost."""
    out: list[tir.Stmt] = []
    stack = [stmt]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(child for _, _, child in reversed(stmt_children(n)))
    return out


def vars_of(node: Any) -> list[tir.Var]:
    """The distinct Vars of a TIR expression (or any TIR node: a load's buffer's data and shape
    variables too), in order of first appearance."""
    if isinstance(node, tir.IntImm):  # most dimensions: no walk
        return []
    if isinstance(node, tir.Var):
        return [node]
    found: dict[int, tir.Var] = {}
    walk_all(node, lambda n: found.setdefault(id(n), n) if isinstance(n, tir.Var) else None)
    return list(found.values())


def _type_key(node: Node) -> str:
    """TVM's type key of a TIR node (``"tir.For"``)."""
    return f"tir.{type(node).__name__}"


class _IRTransform(StmtExprMutator):
    """The mutator behind :func:`ir_transform`."""

    def __init__(self, preorder: Callable | None, postorder: Callable | None,
                 only_enable: set[str] | None) -> None:
        self.preorder, self.postorder, self.only_enable = preorder, postorder, only_enable

    def _transform(self, node: Node, rewrite: Callable[[Node], Any]) -> Any:
        """Apply the callbacks around ``rewrite`` (the default rewriting of ``node``)."""
        if self.only_enable is not None and _type_key(node) not in self.only_enable:
            return rewrite(node)
        if self.preorder is not None:
            replaced = self.preorder(node)
            if replaced is not None:
                return inherit_span(node, replaced)
        new = rewrite(node)
        if self.postorder is not None:
            replaced = self.postorder(new)
            if replaced is not None:
                return inherit_span(node, replaced)
        return new

    def visit_stmt(self, stmt: tir.Stmt) -> Any:
        """Statements go through the callbacks."""
        return self._transform(stmt, super().visit_stmt)

    def visit_expr(self, expr: tir.PrimExpr) -> Any:
        """Expressions go through the callbacks."""
        return self._transform(expr, super().visit_expr)


def ir_transform(stmt: StmtOrExpr, preorder: Callable[[Node], Any] | None,
                 postorder: Callable[[Node], Any] | None,
                 only_enable: list[str] | tuple[str, ...] | None = None) -> StmtOrExpr:
    """Rewrite ``stmt`` with ``preorder(node)`` (called first; a non-None result replaces the node
    and its children are not visited) and ``postorder(node)`` (called on the node with rewritten
    children; a non-None result replaces it). ``only_enable`` limits both to type keys such as
    ``"tir.For"``; other nodes are only walked through."""
    enabled = None if only_enable is None else {
        key if key.startswith("tir.") else f"tir.{key}" for key in only_enable}
    return _IRTransform(preorder, postorder, enabled).visit(stmt)


class _Substitute(StmtExprMutator):
    """Replaces variables, including in the shapes of the buffers the statement uses."""

    # Buffers are walked too (their shapes may use the variables); definitions still are not.
    _skip_fields = _DEFINITIONS - {"buffer", "alloc_buffers"}

    def __init__(self, vmap: Callable[[tir.Var], Any]) -> None:
        self.vmap = vmap
        self.buffers: dict[tir.Buffer, tir.Buffer] = {}  # identity-keyed, so each buffer is rebuilt once

    def visit_var_(self, var: tir.Var) -> tir.PrimExpr:
        """A use of a variable: its replacement, if any."""
        new = self.vmap(var)
        if new is None:
            return var
        return new if isinstance(new, tir.PrimExpr) else tir.const(new, var.dtype)

    def visit_buffer_(self, buf: tir.Buffer) -> tir.Buffer:
        """A buffer with its shape rewritten, the same new buffer at every use."""
        new = self.buffers.get(buf)
        if new is None:
            new = self.buffers[buf] = self.generic_visit(buf)
        return new

    def visit_prim_func_(self, func: tir.PrimFunc) -> tir.PrimFunc:
        """The body and the parameter buffers (so both keep naming the same buffers)."""
        buffer_map = self.visit(func.buffer_map)
        body = self.visit_stmt(func.body)
        if buffer_map is func.buffer_map and body is func.body:
            return func
        return replace(func, buffer_map=buffer_map, body=body)


def substitute(node: StmtOrExpr | tir.PrimFunc,
               vmap: Mapping[tir.Var, Any] | Callable[[tir.Var], Any]) -> StmtOrExpr | tir.PrimFunc:
    """``node`` with the variables of ``vmap`` (a dict, or a function returning None to keep a
    variable) replaced by expressions (Python numbers take the variable's dtype). Buffers whose
    shape, strides or offset use a replaced variable are rebuilt, once each; for a PrimFunc
    the parameter buffers too (its parameters themselves stay)."""
    lookup = vmap.get if isinstance(vmap, Mapping) else vmap
    return _Substitute(lookup).visit(node)
