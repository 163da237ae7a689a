"""TVMScript syntax tree nodes, and ``walk``/``dump`` over them.

The tree mirrors Python's ``ast`` for the subset of Python that TVMScript uses; it is *not*
TVM IR. Every node carries its span: ``line``/``col`` of its first token and
``end_line``/``end_col`` of its last one (1-based, ``end_col`` exclusive). Nodes are frozen
dataclasses; positions are keyword-only, default to 0 ("unknown") and are left out of
``repr`` (use ``dump(node, positions=True)`` to see them).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Iterator

__all__ = [
    "dump", "walk", "Node", "Stmt", "Expr",
    "Module", "ImportFrom", "Import", "ClassDef", "FunctionDef", "Param",
    "Assign", "AnnAssign", "AugAssign", "ExprStmt", "For", "While", "If", "With", "WithItem",
    "Return", "Assert", "Pass", "Break", "Continue",
    "Name", "Attribute", "Call", "Keyword", "Starred", "Subscript", "Slice", "Tuple", "List",
    "Dict", "Constant", "BinOp", "UnaryOp", "BoolOp", "Compare", "IfExp", "Lambda",
]


@dataclass(frozen=True, slots=True)
class Node:
    """Base of all syntax nodes: a source span (1-based; ``end_col`` exclusive; 0 = unknown)."""

    line: int = field(default=0, kw_only=True, repr=False)
    col: int = field(default=0, kw_only=True, repr=False)
    end_line: int = field(default=0, kw_only=True, repr=False)
    end_col: int = field(default=0, kw_only=True, repr=False)
    # Height of the subtree (1 for a leaf), kept by the parser to enforce MAX_DEPTH; not part
    # of the node's value (ignored by ==, hash, repr and dump).
    depth: int = field(default=1, kw_only=True, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Stmt(Node):
    """Base of statement nodes."""


@dataclass(frozen=True, slots=True)
class Expr(Node):
    """Base of expression nodes."""


# ---------------------------------------------------------------------------- module level

@dataclass(frozen=True, slots=True)
class Module(Node):
    """A whole script: its top-level statements."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class ImportFrom(Stmt):
    """``from module import name as alias, ...`` (``module`` keeps leading dots; name "*")."""

    module: str
    names: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class Import(Stmt):
    """``import a.b as c, d``."""

    names: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class ClassDef(Stmt):
    """A (decorated) class, e.g. ``@I.ir_module class Module: ...``."""

    name: str
    decorators: tuple[Expr, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Param(Node):
    """One function parameter: ``name: annotation = default``."""

    name: str
    annotation: Expr | None
    default: Expr | None


@dataclass(frozen=True, slots=True)
class FunctionDef(Stmt):
    """A function definition; its span starts at the first decorator, if any."""

    name: str
    params: tuple[Param, ...]
    returns: Expr | None
    decorators: tuple[Expr, ...]
    body: tuple[Stmt, ...]


# ---------------------------------------------------------------------------- statements

@dataclass(frozen=True, slots=True)
class Assign(Stmt):
    """``targets = value``; ``targets`` is a Name, Tuple, Subscript or Attribute."""

    targets: Expr
    value: Expr


@dataclass(frozen=True, slots=True)
class AnnAssign(Stmt):
    """``target: annotation = value`` (``value`` is None for a bare ``target: annotation``)."""

    target: Expr
    annotation: Expr
    value: Expr | None


@dataclass(frozen=True, slots=True)
class AugAssign(Stmt):
    """``target op= value``; ``op`` is the binary operator, e.g. "+"."""

    target: Expr
    op: str
    value: Expr


@dataclass(frozen=True, slots=True)
class ExprStmt(Stmt):
    """An expression used as a statement, e.g. ``R.output(gv)``."""

    value: Expr


@dataclass(frozen=True, slots=True)
class For(Stmt):
    """``for target in iter: body``."""

    target: Expr
    iter: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class While(Stmt):
    """``while test: body``."""

    test: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class If(Stmt):
    """``if test: body else: orelse``; an ``elif`` is an If alone in ``orelse``."""

    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class WithItem(Node):
    """One ``context as target`` of a with statement (``target`` may be None)."""

    context: Expr
    target: Expr | None


@dataclass(frozen=True, slots=True)
class With(Stmt):
    """``with item, item: body``."""

    items: tuple[WithItem, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Return(Stmt):
    """``return [value]``."""

    value: Expr | None


@dataclass(frozen=True, slots=True)
class Assert(Stmt):
    """``assert test[, msg]``."""

    test: Expr
    msg: Expr | None


@dataclass(frozen=True, slots=True)
class Pass(Stmt):
    """``pass``."""


@dataclass(frozen=True, slots=True)
class Break(Stmt):
    """``break``."""


@dataclass(frozen=True, slots=True)
class Continue(Stmt):
    """``continue``."""


# ---------------------------------------------------------------------------- expressions

@dataclass(frozen=True, slots=True)
class Name(Expr):
    """An identifier."""

    id: str


@dataclass(frozen=True, slots=True)
class Attribute(Expr):
    """``value.attr``."""

    value: Expr
    attr: str


@dataclass(frozen=True, slots=True)
class Keyword(Node):
    """A keyword argument ``arg=value``; ``arg`` is None for ``**value``."""

    arg: str | None
    value: Expr


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """``func(*args, **keywords)``; ``args`` may hold Starred nodes."""

    func: Expr
    args: tuple[Expr, ...]
    keywords: tuple[Keyword, ...]


@dataclass(frozen=True, slots=True)
class Starred(Expr):
    """``*value`` in a call's arguments."""

    value: Expr


@dataclass(frozen=True, slots=True)
class Slice(Expr):
    """``lower:upper:step`` inside a subscript (absent parts are None)."""

    lower: Expr | None
    upper: Expr | None
    step: Expr | None


@dataclass(frozen=True, slots=True)
class Subscript(Expr):
    """``value[i, j]``: ``index`` holds the comma-separated items (``A[()]`` -> one empty Tuple)."""

    value: Expr
    index: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Tuple(Expr):
    """``(a, b)``, ``(a,)``, ``()`` or a bare ``a, b``."""

    elts: tuple[Expr, ...]
    parenthesized: bool


@dataclass(frozen=True, slots=True)
class List(Expr):
    """``[a, b]``."""

    elts: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Dict(Expr):
    """``{k: v, ...}``."""

    keys: tuple[Expr, ...]
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Constant(Expr):
    """A literal: int, float, str, bytes, bool, None or Ellipsis; ``text`` is its spelling."""

    value: Any
    text: str = ""


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    """``left op right``; ``op`` is the Python operator text ("+", "//", "**", "@", ...)."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class UnaryOp(Expr):
    """``op operand`` with op "-", "+", "~" or "not"."""

    op: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class BoolOp(Expr):
    """``a and b and c`` / ``a or b``: one op, two or more values."""

    op: str
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    """A (chained) comparison ``left op0 c0 op1 c1 ...``; ops include "not in" and "is not"."""

    left: Expr
    ops: tuple[str, ...]
    comparators: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class IfExp(Expr):
    """``body if test else orelse``."""

    test: Expr
    body: Expr
    orelse: Expr


@dataclass(frozen=True, slots=True)
class Lambda(Expr):
    """``lambda a, b: body``."""

    params: tuple[str, ...]
    body: Expr


_POSITION_FIELDS = ("line", "col", "end_line", "end_col")
_NOT_CHILDREN = frozenset(_POSITION_FIELDS + ("depth",))


def walk(node: Node) -> Iterator[Node]:
    """Yield ``node`` and every node below it, parents before children (no recursion)."""
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Node):
            yield item
            children = [getattr(item, f.name) for f in fields(item)
                        if f.name not in _NOT_CHILDREN]
            stack.extend(reversed(children))
        elif isinstance(item, tuple):
            stack.extend(reversed(item))


def dump(node: Any, *, positions: bool = False) -> str:
    """A one-line, ``ast.dump``-like text of a syntax tree (with spans if ``positions``)."""
    if isinstance(node, Node):
        parts = [dump(getattr(node, f.name), positions=positions)
                 if f.name in _POSITION_FIELDS else
                 f"{f.name}={dump(getattr(node, f.name), positions=positions)}"
                 for f in fields(node) if f.name not in _NOT_CHILDREN]
        text = f"{type(node).__name__}({', '.join(parts)})"
        if positions:
            text += f"@{node.line}:{node.col}-{node.end_line}:{node.end_col}"
        return text
    if isinstance(node, tuple):
        inner = ", ".join(dump(item, positions=positions) for item in node)
        return f"({inner},)" if len(node) == 1 else f"({inner})"
    return repr(node)
