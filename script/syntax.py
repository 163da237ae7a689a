"""TVMScript syntax trees: the node classes and ``parse_syntax`` (text -> ``Module``).

The tree mirrors Python's ``ast`` for the subset of Python that TVMScript uses; it is *not*
TVM IR. Every node carries its span: ``line``/``col`` of its first token and
``end_line``/``end_col`` of its last one (1-based, ``end_col`` exclusive). Nodes are frozen
dataclasses; positions are keyword-only, default to 0 ("unknown") and are left out of
``repr`` (use ``dump(node, positions=True)`` to see them).

The parser is a Lark LALR(1) parser (``grammar/tvmscript.lark``) whose rule callbacks build
the nodes during the parse; every mistake is reported as a ``ScriptError``.
"""
from __future__ import annotations

import ast as _pyast
import gc
import hashlib
import keyword
import os
import re
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterator, cast

import lark
from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedToken
from lark.indenter import Indenter

from .errors import ScriptError

__all__ = [
    "parse_syntax", "dump", "walk", "GRAMMAR_PATH", "TVMScriptIndenter",
    "MAX_DEPTH", "MAX_BRACKETS", "MAX_INDENT",
    "Node", "Stmt", "Expr",
    "Module", "ImportFrom", "Import", "ClassDef", "FunctionDef", "Param",
    "Assign", "AnnAssign", "AugAssign", "ExprStmt", "For", "While", "If", "With", "WithItem",
    "Return", "Assert", "Pass", "Break", "Continue",
    "Name", "Attribute", "Call", "Keyword", "Starred", "Subscript", "Slice", "Tuple", "List",
    "Dict", "Constant", "BinOp", "UnaryOp", "BoolOp", "Compare", "IfExp", "Lambda",
]

GRAMMAR_PATH = Path(__file__).resolve().parent.parent / "grammar" / "tvmscript.lark"

# Nesting limits. Deeper texts are refused with a ScriptError ("nesting too deep") while they
# are read, so that nothing after the syntax tree (the recursive IR builder, passes, the
# printer) ever meets a tree deeper than MAX_DEPTH nodes. Python's own parser has similar
# limits (200 nested brackets, 100 indentation levels).
MAX_DEPTH = 200      # nodes from the root of a statement's tree to its deepest leaf
MAX_BRACKETS = 200   # brackets open at the same time
MAX_INDENT = 100     # indentation levels


# =============================================================================================
# Node classes
# =============================================================================================

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


# =============================================================================================
# Errors raised while parsing
# =============================================================================================

class _Fail(Exception):
    """A syntax error found by the post-lexer or a rule callback (turned into ScriptError)."""

    def __init__(self, message: str, line: int, col: int, end_line: int | None = None,
                 end_col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.end_line = line if end_line is None else end_line
        self.end_col = col + 1 if end_col is None else end_col


def _fail_at(node: Node, message: str) -> _Fail:
    return _Fail(message, node.line, node.col, node.end_line, node.end_col)


def _fail_tok(tok: Token, message: str) -> _Fail:
    return _Fail(message, tok.line, tok.column, tok.end_line, tok.end_column)


# =============================================================================================
# Post-lexer: indentation, brackets, keywords
# =============================================================================================

_OPEN_TO_CLOSE = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_CLOSERS = frozenset(_OPEN_TO_CLOSE.values())
# Hard keywords that can only ever be lexed as NAME where the grammar does not allow them.
# True/False/None stay names here and become Constant nodes (or errors where a name is needed).
_CONSTANT_NAMES = {"True": True, "False": False, "None": None}
_HARD_KEYWORDS = frozenset(keyword.kwlist) - set(_CONSTANT_NAMES)
_UNSUPPORTED_KEYWORDS = frozenset({"async", "await", "del", "except", "finally", "global",
                                   "nonlocal", "raise", "try", "yield"})
_KEYWORD_TERMINALS = frozenset({
    "AND", "AS", "ASSERT", "BREAK", "CLASS", "CONTINUE", "DEF", "ELIF", "ELSE", "FOR", "FROM",
    "IF", "IMPORT", "IN", "IS", "LAMBDA", "NOT", "OR", "PASS", "RETURN", "WHILE", "WITH"})
_POSTLEX_SPECIAL = frozenset({"_NEWLINE", "NAME", *_OPEN_TO_CLOSE, *_CLOSERS, *_KEYWORD_TERMINALS})
_WORD = re.compile(r"\w+")


def _bracket_error(tok: Token, brackets: list[Token]) -> _Fail | None:
    """The error for closing bracket ``tok`` given the open ``brackets``, if it matches none."""
    if not brackets:
        return _fail_tok(tok, f"unexpected '{tok.value}': nothing to close")
    opener = brackets[-1]
    if _OPEN_TO_CLOSE[opener.type] != tok.type:
        return _fail_tok(tok, f"unexpected '{tok.value}': '{opener.value}' opened at line "
                              f"{opener.line} col {opener.column} is not closed")
    return None


class _ScanState:
    """What the post-lexer knows about one parse (kept for error messages)."""

    __slots__ = ("text", "brackets", "eof")

    def __init__(self, text: str) -> None:
        self.text = text
        self.brackets: list[Token] = []   # open brackets, innermost last
        self.eof = False                  # the lexer has reached the end of the text


_local = threading.local()


class TVMScriptIndenter(Indenter):
    """Python-style INDENT/DEDENT post-lexer that also checks brackets, tabs and keywords.

    Unlike ``lark.indenter.Indenter`` it gives every error a position, rejects tabs in
    indentation, gives INDENT/DEDENT tokens the position of the line they start, and keeps
    its per-parse state in a thread-local ``_ScanState`` so parses may run in threads.
    """

    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        """Wrap the lexer's token stream for one parse."""
        state = getattr(_local, "state", None)
        if state is None:
            state = _ScanState("")
        return self._scan(stream, state)

    def _scan(self, stream: Iterator[Token], state: _ScanState) -> Iterator[Token]:
        text = state.text
        brackets = state.brackets
        indents = [0]
        special = _POSTLEX_SPECIAL
        last: Token | None = None
        for tok in stream:
            last = tok
            kind = tok.type
            if kind not in special:
                yield tok
            elif kind == "_NEWLINE":
                if brackets:          # a line break inside brackets is just whitespace
                    continue
                yield tok
                value = tok.value
                ws = value[value.rfind("\n") + 1:]
                line = tok.end_line
                if "\t" in ws:
                    col = ws.index("\t") + 1
                    raise _Fail("tab in indentation (indent with spaces)", line, col)
                width = len(ws)
                if width > indents[-1]:
                    if len(indents) > MAX_INDENT:
                        raise _Fail(f"nesting too deep: more than {MAX_INDENT} indentation "
                                    "levels", line, 1, line, width + 1)
                    indents.append(width)
                    yield Token(self.INDENT_type, ws, tok.end_pos - width, line, 1, line,
                                width + 1, tok.end_pos)
                elif width < indents[-1]:
                    while width < indents[-1]:
                        indents.pop()
                        yield Token(self.DEDENT_type, "", tok.end_pos, line, width + 1, line,
                                    width + 1, tok.end_pos)
                    if width != indents[-1]:
                        raise _Fail("unindent does not match any outer indentation level",
                                    line, width + 1)
            elif kind == "NAME":
                word = tok.value
                if word in _HARD_KEYWORDS:
                    if word in _UNSUPPORTED_KEYWORDS:
                        raise _fail_tok(tok, f"'{word}' is not supported in TVMScript")
                    raise _fail_tok(tok, f"unexpected keyword '{word}'")
                yield tok
            # Brackets are pushed and popped only once the parser has accepted them (the code
            # after a yield runs when the next token is requested), so that on a syntax error
            # ``brackets`` lists what is really open.
            elif kind in _OPEN_TO_CLOSE:
                if len(brackets) >= MAX_BRACKETS:
                    raise _fail_tok(tok, f"nesting too deep: more than {MAX_BRACKETS} brackets "
                                         "open at once")
                yield tok
                brackets.append(tok)
            elif kind in _CLOSERS:
                mismatch = _bracket_error(tok, brackets)
                if mismatch is not None:
                    raise mismatch
                yield tok
                brackets.pop()
            else:
                # A keyword lexed where no name is allowed (say "or" in "a orb") must not be
                # glued to the following letters: report the whole word as a name.
                end = tok.end_pos
                if end < len(text) and (text[end].isalnum() or text[end] == "_"):
                    match = _WORD.match(text, tok.start_pos)
                    word = match.group() if match else tok.value
                    raise _Fail(f"unexpected name '{word}'", tok.line, tok.column, tok.line,
                                tok.column + len(word))
                yield tok
        state.eof = True
        # Close the blocks still open at the end of the input.
        line = last.line if last is not None else 1
        col = last.column if last is not None else 1
        pos = last.start_pos if last is not None else 0
        while len(indents) > 1:
            indents.pop()
            yield Token(self.DEDENT_type, "", pos, line, col, line, col, pos)


# =============================================================================================
# Rule callbacks: build nodes during the parse
# =============================================================================================

# Binding strength inside the flat "comparison" rule (higher binds tighter).
_BINARY_PRECEDENCE = {
    "|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5,
    "*": 6, "/": 6, "//": 6, "%": 6, "@": 6, "**": 8,
}
_UNARY_PRECEDENCE = 7   # between "*" and "**": -a * b == (-a) * b, -a ** b == -(a ** b)
_POWER_PRECEDENCE = 8
_PREFIXED_INT = frozenset({"0x", "0X", "0o", "0O", "0b", "0B"})
_COMPARISON_TERMINALS = frozenset({"LT", "GT", "LE", "GE", "EQ", "NE", "IN", "NOT", "IS"})
_TARGET_WORDS = {
    "Call": "a function call", "Constant": "a literal", "BinOp": "an expression",
    "UnaryOp": "an expression", "BoolOp": "an expression", "Compare": "a comparison",
    "Lambda": "a lambda", "IfExp": "a conditional expression", "List": "a list",
    "Dict": "a dict", "Starred": "a starred expression", "Slice": "a slice",
    "Tuple": "a tuple",
}


def _ident(tok: Token) -> str:
    """The text of a NAME token used as an identifier (True/False/None are not)."""
    word = tok.value
    if word in _CONSTANT_NAMES:
        raise _fail_tok(tok, f"'{word}' cannot be used as a name")
    return word


def _check_target(node: Expr, single: bool = False) -> None:
    """Reject what cannot be assigned to (``single``: tuples are not allowed either)."""
    stack: list[Expr] = [node]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is Name or kind is Attribute or kind is Subscript:
            continue
        if isinstance(item, Tuple) and not single:
            stack.extend(item.elts)
            continue
        raise _fail_at(item, f"cannot assign to {_TARGET_WORDS.get(kind.__name__, 'this')}")


_Span = tuple[int, int, int, int]


def _make(cls: type[Any], span: _Span, *args: Any) -> Any:
    """Construct node ``cls(*args)`` with the (line, col, end_line, end_col) ``span``; its
    depth is one more than its deepest child's, and a node deeper than MAX_DEPTH is refused."""
    depth = 0
    for arg in args:
        if type(arg) is tuple:
            for item in arg:
                d = getattr(item, "depth", 0)
                if d > depth:
                    depth = d
        else:
            d = getattr(arg, "depth", 0)
            if d > depth:
                depth = d
    depth += 1
    if depth > MAX_DEPTH:
        raise _Fail(f"nesting too deep: more than {MAX_DEPTH} levels of nested expressions and "
                    "statements (split it into several statements)", span[0], span[1], span[2],
                    span[3])
    return cls(*args, line=span[0], col=span[1], end_line=span[2], end_col=span[3], depth=depth)


def _tok_span(tok: Token) -> _Span:
    return tok.line, tok.column, tok.end_line, tok.end_column


def _string_value(tok: Token) -> str | bytes:
    """The value of one STRING token."""
    text = tok.value
    quote = text[0]
    if (quote == '"' or quote == "'") and "\\" not in text:
        # Fast path: no prefix, no escapes.
        return text[3:-3] if text.startswith(quote * 3) and len(text) >= 6 else text[1:-1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # invalid escapes such as "\q" stay as written
            return _pyast.literal_eval(text)
    except (SyntaxError, ValueError) as exc:
        reason = getattr(exc, "msg", None) or str(exc)
        raise _fail_tok(tok, f"invalid string literal: {reason}") from None


@v_args(inline=True)
class _Builder(Transformer):
    """Rule callbacks (run by Lark during the LALR parse); each returns a syntax node.

    Spans follow Python's ``ast``: grouping parentheses are not part of the grouped node's
    span, but an enclosing node that starts or ends with them includes them
    (``(a + b) * c`` spans from the "(", its left operand from the "a"). ``_groups`` records
    the parenthesised extent of grouped nodes for that, per parse.
    """

    def __init__(self) -> None:
        super().__init__()
        # id(node) -> (node, line, col, end_line, end_col); holding the node keeps the id unique.
        self._groups: dict[int, tuple[Any, int, int, int, int]] = {}

    def _reset(self) -> None:
        self._groups = {}

    # ------------------------------------------------------------------ spans
    def _span(self, first: Any, last: Any) -> _Span:
        """From the start of ``first`` to the end of ``last`` (tokens or nodes)."""
        groups = self._groups
        if type(first) is Token:
            line, col = first.line, first.column
        else:
            group = groups.get(id(first)) if groups else None
            if group is None:
                line, col = first.line, first.col
            else:
                line, col = group[1], group[2]
        if type(last) is Token:
            end_line, end_col = last.end_line, last.end_column
        else:
            group = groups.get(id(last)) if groups else None
            if group is None:
                end_line, end_col = last.end_line, last.end_col
            else:
                end_line, end_col = group[3], group[4]
        return line, col, end_line, end_col

    def _arith(self, items: list[Any]) -> Expr:
        """Apply precedence to ``operand (op operand)*`` with unary prefixes (no recursion)."""
        if len(items) == 1:
            return items[0]
        span = self._span
        out: list[Expr] = []
        ops: list[tuple[int, Token, bool]] = []   # (precedence, token, is_unary)

        def reduce_top() -> None:
            _, tok, unary = ops.pop()
            right = out.pop()
            if unary:
                out.append(_make(UnaryOp, span(tok, right), tok.value, right))
            else:
                left = out.pop()
                out.append(_make(BinOp, span(left, right), tok.value, left, right))

        want_operand = True
        for item in items:
            if type(item) is not Token:
                out.append(item)
                want_operand = False
            elif want_operand:
                ops.append((_UNARY_PRECEDENCE, item, True))
            else:
                prec = _BINARY_PRECEDENCE[item.value]
                if prec == _POWER_PRECEDENCE:   # "**" is right-associative
                    while ops and ops[-1][0] > prec:
                        reduce_top()
                else:
                    while ops and ops[-1][0] >= prec:
                        reduce_top()
                ops.append((prec, item, False))
                want_operand = True
        while ops:
            reduce_top()
        return out[0]

    def _bool(self, op: str, values: list[Expr]) -> Expr:
        if len(values) == 1:
            return values[0]
        return _make(BoolOp, self._span(values[0], values[-1]), op, tuple(values))

    # ------------------------------------------------------------------ module and statements
    def start(self, *stmts: Stmt) -> Module:
        if not stmts:
            return Module((), line=1, col=1, end_line=1, end_col=1)
        return _make(Module, self._span(stmts[0], stmts[-1]), stmts)

    def suite(self, *stmts: Stmt) -> tuple[Stmt, ...]:
        return stmts

    def expr_stmt(self, value: Expr) -> ExprStmt:
        return _make(ExprStmt, self._span(value, value), value)

    def assign(self, target: Expr, value: Expr) -> Assign:
        _check_target(target)
        return _make(Assign, self._span(target, value), target, value)

    def annassign(self, target: Expr, annotation: Expr, value: Expr | None) -> AnnAssign:
        if type(target) is Tuple:
            raise _fail_at(target, "only a single target (not a tuple) can be annotated")
        _check_target(target, single=True)
        last = value if value is not None else annotation
        return _make(AnnAssign, self._span(target, last), target, annotation, value)

    def augassign(self, target: Expr, op: Token, value: Expr) -> AugAssign:
        if type(target) is Tuple:
            raise _fail_at(target, "a tuple cannot be the target of an augmented assignment")
        _check_target(target, single=True)
        return _make(AugAssign, self._span(target, value), target, op.value[:-1], value)

    def pass_stmt(self, tok: Token) -> Pass:
        return _make(Pass, _tok_span(tok))

    def break_stmt(self, tok: Token) -> Break:
        return _make(Break, _tok_span(tok))

    def continue_stmt(self, tok: Token) -> Continue:
        return _make(Continue, _tok_span(tok))

    def return_stmt(self, tok: Token, value: Expr | None) -> Return:
        return _make(Return, self._span(tok, value if value is not None else tok), value)

    def assert_stmt(self, tok: Token, test: Expr, msg: Expr | None) -> Assert:
        return _make(Assert, self._span(tok, msg if msg is not None else test), test, msg)

    # ------------------------------------------------------------------ imports
    def dotted_name(self, *names: Token) -> tuple[Token, ...]:
        for tok in names:
            _ident(tok)
        return names

    def dotted_as_name(self, dotted: tuple[Token, ...],
                       alias: Token | None) -> tuple[str, str | None, Token]:
        name = ".".join(tok.value for tok in dotted)
        if alias is None:
            return name, None, dotted[-1]
        return name, _ident(alias), alias

    def import_name(self, tok: Token, *items: tuple[str, str | None, Token]) -> Import:
        names = tuple((name, alias) for name, alias, _ in items)
        return _make(Import, self._span(tok, items[-1][2]), names)

    def import_module(self, *items: Any) -> str:
        return "".join(item.value if type(item) is Token else ".".join(t.value for t in item)
                       for item in items)

    def import_as_name(self, name: Token, alias: Token | None) -> tuple[str, str | None, Token]:
        if alias is None:
            return _ident(name), None, name
        return _ident(name), _ident(alias), alias

    def import_targets(self, *items: Any) -> tuple[tuple[tuple[str, str | None], ...], Token]:
        last = items[-1]
        if type(last) is Token:
            if last.type == "STAR":
                return (("*", None),), last
            items = items[:-1]   # the closing ")"
        else:
            last = last[2]
        return tuple((name, alias) for name, alias, _ in items), last

    def import_from(self, tok: Token, module: str, targets: tuple[Any, Token]) -> ImportFrom:
        names, last = targets
        return _make(ImportFrom, self._span(tok, last), module, names)

    # ------------------------------------------------------------------ compound statements
    def if_stmt(self, *items: Any) -> If:
        # IF test body (ELIF test body)* ELSE|None else_body|None: nest the elifs inside out.
        orelse: tuple[Stmt, ...] = items[-1] if items[-1] is not None else ()
        node: If | None = None
        for i in range(len(items) - 5, -1, -3):
            tok, test, body = items[i], items[i + 1], items[i + 2]
            node = _make(If, self._span(tok, orelse[-1] if orelse else body[-1]), test, body,
                         orelse)
            orelse = (node,)
        assert node is not None
        return node

    def while_stmt(self, tok: Token, test: Expr, body: tuple[Stmt, ...]) -> While:
        return _make(While, self._span(tok, body[-1]), test, body)

    def target_tuple(self, *items: Any) -> Tuple:
        if items[-1] is None:   # no trailing comma
            items = items[:-1]
        elts = tuple(item for item in items if type(item) is not Token)
        return _make(Tuple, self._span(items[0], items[-1]), elts, False)

    def for_stmt(self, tok: Token, target: Expr, iterable: Expr, body: tuple[Stmt, ...]) -> For:
        _check_target(target)
        return _make(For, self._span(tok, body[-1]), target, iterable, body)

    def with_item(self, context: Expr, target: Expr | None) -> WithItem:
        if target is not None:
            _check_target(target)
        return _make(WithItem, self._span(context, target if target is not None else context),
                     context, target)

    def with_stmt(self, tok: Token, *rest: Any) -> With:
        body = rest[-1]
        return _make(With, self._span(tok, body[-1]), rest[:-1], body)

    def param(self, name: Token, annotation: Expr | None, default: Expr | None) -> Param:
        last: Any = name
        if default is not None:
            last = default
        elif annotation is not None:
            last = annotation
        return _make(Param, self._span(name, last), _ident(name), annotation, default)

    def parameters(self, *params: Param) -> tuple[Param, ...]:
        seen: set[str] = set()
        after_default = False
        for p in params:
            if p.name in seen:
                raise _Fail(f"duplicate parameter '{p.name}'", p.line, p.col, p.line,
                            p.col + len(p.name))
            seen.add(p.name)
            if p.default is not None:
                after_default = True
            elif after_default:
                raise _fail_at(p, f"parameter '{p.name}' without a default follows a "
                                  "parameter with a default")
        return params

    def funcdef(self, tok: Token, name: Token, params: tuple[Param, ...] | None,
                returns: Expr | None, body: tuple[Stmt, ...]) -> FunctionDef:
        return _make(FunctionDef, self._span(tok, body[-1]), _ident(name), params or (),
                     returns, (), body)

    def classdef(self, tok: Token, name: Token, body: tuple[Stmt, ...]) -> ClassDef:
        return _make(ClassDef, self._span(tok, body[-1]), _ident(name), (), body)

    def decorator(self, at: Token, expr: Expr) -> tuple[Token, Expr]:
        return at, expr

    def decorated(self, *items: Any) -> FunctionDef | ClassDef:
        definition = items[-1]
        at = items[0][0]
        return replace(definition, decorators=tuple(expr for _, expr in items[:-1]),
                       line=at.line, col=at.column)

    # ------------------------------------------------------------------ operators
    def or_test(self, *items: Any) -> Expr:
        or_values: list[Expr] = []
        and_values: list[Expr] = []
        nots: list[Token] = []
        for item in items:
            if type(item) is Token:
                kind = item.type
                if kind == "NOT":
                    nots.append(item)
                elif kind == "OR":
                    or_values.append(self._bool("and", and_values))
                    and_values = []
                # "AND" only separates operands
            else:
                while nots:
                    tok = nots.pop()
                    item = _make(UnaryOp, self._span(tok, item), "not", item)
                and_values.append(item)
        or_values.append(self._bool("and", and_values))
        return self._bool("or", or_values)

    def comparison(self, *items: Any) -> Expr:
        operands: list[Expr] = []
        ops: list[str] = []
        segment: list[Any] = []
        i, n = 0, len(items)
        while i < n:
            item = items[i]
            if type(item) is Token and item.type in _COMPARISON_TERMINALS:
                kind = item.type
                if kind == "NOT":            # "not in"
                    op = "not in"
                    i += 1
                elif kind == "IS" and i + 1 < n and type(items[i + 1]) is Token \
                        and items[i + 1].type == "NOT":
                    op = "is not"
                    i += 1
                else:
                    op = item.value
                ops.append(op)
                operands.append(self._arith(segment))
                segment = []
            else:
                segment.append(item)
            i += 1
        operands.append(self._arith(segment))
        if not ops:
            return operands[0]
        first = operands[0]
        return _make(Compare, self._span(first, operands[-1]), first, tuple(ops),
                     tuple(operands[1:]))

    def ifexp(self, body: Expr, test: Expr, orelse: Expr) -> IfExp:
        return _make(IfExp, self._span(body, orelse), test, body, orelse)

    def lambda_params(self, *names: Token) -> tuple[Token, ...]:
        seen: set[str] = set()
        for tok in names:
            word = _ident(tok)
            if word in seen:
                raise _fail_tok(tok, f"duplicate parameter '{word}'")
            seen.add(word)
        return names

    def lambdef(self, tok: Token, params: tuple[Token, ...] | None, body: Expr) -> Lambda:
        return _make(Lambda, self._span(tok, body), tuple(p.value for p in params or ()), body)

    # ------------------------------------------------------------------ primaries
    def name(self, tok: Token) -> Expr:
        word = tok.value
        if word in _CONSTANT_NAMES:
            return Constant(_CONSTANT_NAMES[word], word, line=tok.line, col=tok.column,
                            end_line=tok.end_line, end_col=tok.end_column)
        return Name(word, line=tok.line, col=tok.column, end_line=tok.end_line,
                    end_col=tok.end_column)

    def number(self, tok: Token) -> Constant:
        text = tok.value
        try:
            if text[:2] in _PREFIXED_INT or not any(c in text for c in ".eE"):
                value: int | float = int(text, 0)
            else:
                value = float(text)
        except ValueError:
            digits = text.replace("_", "")
            if digits[:1] == "0" and len(digits) > 1 and digits.isdigit() and len(digits) < 4300:
                raise _fail_tok(tok, "leading zeros in decimal integer literals are not "
                                     "permitted (use an 0o prefix for octal)") from None
            # Python refuses to convert decimal strings of more than 4300 digits.
            raise _fail_tok(tok, f"integer literal too long ({len(digits)} digits; write "
                                 "large numbers in hexadecimal)") from None
        return Constant(value, text, line=tok.line, col=tok.column, end_line=tok.end_line,
                        end_col=tok.end_column)

    def string(self, *toks: Token) -> Constant:
        first, last = toks[0], toks[-1]
        if len(toks) == 1:
            value: Any = _string_value(first)
            text = first.value
        else:
            values = [_string_value(tok) for tok in toks]
            kinds = {type(v) for v in values}
            if len(kinds) > 1:
                raise _Fail("cannot mix bytes and str literals", first.line, first.column,
                            last.end_line, last.end_column)
            value = b"".join(values) if bytes in kinds else "".join(values)  # type: ignore
            text = " ".join(tok.value for tok in toks)
        return _make(Constant, self._span(first, last), value, text)

    def ellipsis(self, tok: Token) -> Constant:
        return _make(Constant, _tok_span(tok), Ellipsis, "...")

    def group(self, lpar: Token, inner: Expr, rpar: Token) -> Expr:
        # The parentheses stay out of ``inner``'s span; remember them for enclosing nodes.
        self._groups[id(inner)] = (inner, lpar.line, lpar.column, rpar.end_line, rpar.end_column)
        return inner

    def tuple_expr(self, *items: Any) -> Tuple:
        if items[-1] is None:   # a bare tuple without a trailing comma
            items = items[:-1]
        first = items[0]
        parenthesized = type(first) is Token and first.type == "LPAR"
        elts = tuple(item for item in items if type(item) is not Token)
        return _make(Tuple, self._span(first, items[-1]), elts, parenthesized)

    def list_expr(self, lsqb: Token, *rest: Any) -> List:
        return _make(List, self._span(lsqb, rest[-1]), rest[:-1])

    def dict_expr(self, lbrace: Token, *rest: Any) -> Dict:
        items = rest[:-1]
        return _make(Dict, self._span(lbrace, rest[-1]), items[0::2], items[1::2])

    def attribute(self, value: Expr, name: Token) -> Attribute:
        return _make(Attribute, self._span(value, name), value, _ident(name))

    def call(self, func: Expr, args: tuple[Any, ...] | None, rpar: Token) -> Call:
        positional: list[Expr] = []
        keywords: list[Keyword] = []
        seen: set[str] = set()
        has_kwstar = False
        for arg in args or ():
            if type(arg) is Keyword:
                if arg.arg is None:
                    has_kwstar = True
                elif arg.arg in seen:
                    raise _fail_at(arg, f"keyword argument repeated: {arg.arg}")
                else:
                    seen.add(arg.arg)
                keywords.append(arg)
            elif type(arg) is Starred:
                if has_kwstar:
                    raise _fail_at(arg, "iterable argument unpacking follows keyword argument "
                                        "unpacking")
                positional.append(arg)
            else:
                if keywords:
                    what = "keyword argument unpacking" if has_kwstar else "keyword argument"
                    raise _fail_at(arg, f"positional argument follows {what}")
                positional.append(arg)
        return _make(Call, self._span(func, rpar), func, tuple(positional), tuple(keywords))

    def arguments(self, *args: Any) -> tuple[Any, ...]:
        return args

    def keyword(self, name: Token, value: Expr) -> Keyword:
        return _make(Keyword, self._span(name, value), _ident(name), value)

    def kwstar(self, tok: Token, value: Expr) -> Keyword:
        return _make(Keyword, self._span(tok, value), None, value)

    def starred(self, tok: Token, value: Expr) -> Starred:
        return _make(Starred, self._span(tok, value), value)

    def subscript(self, value: Expr, index: tuple[Expr, ...], rsqb: Token) -> Subscript:
        return _make(Subscript, self._span(value, rsqb), value, index)

    def subscripts(self, *items: Expr) -> tuple[Expr, ...]:
        return items

    def slice(self, *items: Any) -> Slice:
        # [lower, ":", upper] or [lower, ":", upper, ":", step]; absent parts are None.
        lower, upper = items[0], items[2]
        step = items[4] if len(items) == 5 else None
        first = lower if lower is not None else items[1]
        last = next(item for item in reversed(items) if item is not None)
        return _make(Slice, self._span(first, last), lower, upper, step)


# =============================================================================================
# Building the parser
# =============================================================================================

_build_lock = threading.Lock()


def _cache_file(grammar: str) -> str | None:
    """A per-user cache file for the analysed grammar, keyed by its hash; None if unwritable."""
    key = hashlib.sha256(
        f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()).hexdigest()[:24]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    try:
        user = str(os.getuid())
    except AttributeError:   # not on POSIX
        user = os.environ.get("USERNAME", "user")
    for folder in (os.path.join(base, "tvmlite"),
                   os.path.join(tempfile.gettempdir(), f"tvmlite-{user}")):
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            info = os.stat(folder)
        except OSError:
            continue
        # The cache is a pickle: only trust a folder that is ours and that others cannot write.
        owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if owned and not info.st_mode & 0o022 and os.access(folder, os.W_OK | os.X_OK):
            return os.path.join(folder, f"tvmscript-{key}.lark.cache")
    return None


def _new_parser(*, debug: bool = False, cache: bool = True) -> Lark:
    """Build the LALR parser (``debug=True`` logs LALR conflicts to ``lark.logger``)."""
    grammar = GRAMMAR_PATH.read_text(encoding="utf-8")
    options: dict[str, Any] = dict(
        parser="lalr", lexer="contextual", postlex=TVMScriptIndenter(), transformer=_Builder(),
        maybe_placeholders=True, propagate_positions=False, debug=debug)
    path = _cache_file(grammar) if cache else None
    if path is not None:
        try:
            return Lark(grammar, cache=path, **options)
        except OSError:
            pass   # unreadable or unwritable cache: build without it
    return Lark(grammar, **options)


def _thread_parser() -> Lark:
    """This thread's parser (callbacks and post-lexer keep per-parse state, so one per thread)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        with _build_lock:   # threads starting together share one cache write
            parser = _new_parser()
        _local.parser = parser
    return parser


# =============================================================================================
# Error messages for Lark's errors
# =============================================================================================

_TERMINAL_WORDS = {
    "NAME": "a name", "NUMBER": "a number", "STRING": "a string",
    "AUGASSIGN": "an augmented assignment ('+=', ...)", "_NEWLINE": "end of line",
    "_INDENT": "an indented block", "_DEDENT": "end of the indented block",
    "$END": "end of input",
}
_EXPRESSION_START = frozenset({"NAME", "NUMBER", "STRING", "ELLIPSIS", "LPAR", "LSQB", "LBRACE",
                               "MINUS", "PLUS", "TILDE", "NOT", "LAMBDA"})
_STATEMENT_START = frozenset({"PASS", "BREAK", "CONTINUE", "RETURN", "ASSERT", "IMPORT", "FROM",
                              "IF", "WHILE", "FOR", "WITH", "DEF", "CLASS", "AT"})
_OPERATORS = frozenset({"VBAR", "CIRC", "AMP", "LSHIFT", "RSHIFT", "PLUS", "MINUS", "STAR",
                        "SLASH", "DSLASH", "PERCENT", "AT", "POW", "LT", "GT", "LE", "GE", "EQ",
                        "NE", "IN", "NOT", "IS", "AND", "OR", "IF"})
_HEADERS = {
    "DEF": ("function definition", "after the function signature"),
    "CLASS": ("class definition", "after the class name"),
    "IF": ("'if' statement", "after the 'if' condition"),
    "ELIF": ("'elif' statement", "after the 'elif' condition"),
    "ELSE": ("'else' statement", "after 'else'"),
    "WHILE": ("'while' statement", "after the 'while' condition"),
    "FOR": ("'for' statement", "at the end of the 'for' statement"),
    "WITH": ("'with' statement", "at the end of the 'with' statement"),
}
_CLOSING_TEXT = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}
_display_cache: dict[str, str] = {}


def _display(name: str) -> str | None:
    """How an expected terminal is named in messages (None for internal terminals)."""
    if not _display_cache:
        for term in _thread_parser().terminals:
            pattern = term.pattern
            if term.name in _TERMINAL_WORDS:
                _display_cache[term.name] = _TERMINAL_WORDS[term.name]
            elif type(pattern).__name__ == "PatternStr" and not term.name.startswith("_"):
                _display_cache[term.name] = f"'{pattern.value}'"
        _display_cache.update(_TERMINAL_WORDS)
    return _display_cache.get(name)


def _found(tok: Token) -> str:
    """How the offending token is named in messages."""
    kind = tok.type
    if kind in _TERMINAL_WORDS and kind not in ("NAME", "NUMBER", "STRING", "AUGASSIGN"):
        return {"_INDENT": "indentation", "_DEDENT": "unindent"}.get(kind, _TERMINAL_WORDS[kind])
    value = str(tok.value)
    if kind == "NAME":
        return f"name '{value}'"
    if kind == "NUMBER":
        return f"number {value}"
    if kind == "STRING":
        return f"string {value if len(value) <= 24 else value[:20] + '...'}"
    if kind in _KEYWORD_TERMINALS:
        return f"keyword '{value}'"
    return f"'{value}'"


def _summarize(expected: set[str]) -> str:
    """A short English list of what the parser could have accepted ("" if too long)."""
    names = {name for name in expected if _display(name) is not None}
    parts: list[str] = []
    if len(names & _STATEMENT_START) >= 6:
        parts.append("a statement")
        # Blank lines and the end of the input are always possible between statements.
        names -= _STATEMENT_START | _EXPRESSION_START | {"_NEWLINE", "$END", "_DEDENT"}
    if {"NAME", "NUMBER", "STRING"} <= names:
        parts.append("an expression")
        names -= _EXPRESSION_START
    operators = names & _OPERATORS
    if len(operators) >= 4:
        parts.append("an operator")
        names -= operators
    parts.extend(sorted(_display(name) or name for name in names))
    if not parts or len(parts) > 8:
        return ""
    return parts[0] if len(parts) == 1 else "one of: " + ", ".join(parts)


def _starts_line(tok: Token, text: str) -> bool:
    start = text.rfind("\n", 0, tok.start_pos) + 1
    return not text[start:tok.start_pos].strip()


def _open_header(stack: list[Any], text: str, skip_colon: bool = False) -> Token | None:
    """The keyword of the compound statement whose header is being parsed, if any."""
    depth = 0
    for item in reversed(stack):
        if type(item) is not Token:
            continue
        kind = item.type
        if kind in _CLOSERS:
            depth += 1
        elif kind in _OPEN_TO_CLOSE:
            if not depth:
                return None   # inside an unclosed bracket: not at the header's end
            depth -= 1
        elif kind == "COLON":
            if not skip_colon:
                return None
            skip_colon = False
        elif kind == "LAMBDA":
            return None
        elif kind in _HEADERS and _starts_line(item, text):
            return item
    return None


def _token_error(err: UnexpectedToken, state: _ScanState) -> _Fail:
    """A readable message for an unexpected token."""
    tok = err.token
    kind = tok.type
    text = state.text
    # Blocks are closed by DEDENT tokens at the end of the input too.
    at_end = kind == "$END" or (kind == "_DEDENT"
                                and (state.eof or not text[tok.start_pos:].strip()))
    if at_end and state.brackets:
        b = state.brackets[-1]
        return _fail_tok(b, f"unexpected end of input: '{b.value}' opened at line {b.line} "
                            f"col {b.column} is never closed")
    if kind == "_INDENT":
        return _Fail("unexpected indentation", tok.line, tok.end_column)
    if kind in _CLOSERS:
        # Lexed by the fallback lexer, so the post-lexer has not checked it yet.
        mismatch = _bracket_error(tok, state.brackets)
        if mismatch is not None:
            return mismatch
    expected: set[str] = set()
    try:
        if err.interactive_parser is not None:
            expected = set(err.interactive_parser.accepts())
    except Exception:   # the simulation is best effort; fall back on the state's table
        expected = set()
    if not expected:
        expected = set(err.expected or ())
    stack: list[Any] = []
    parser_state = getattr(err, "state", None)
    if parser_state is not None and hasattr(parser_state, "value_stack"):
        stack = list(parser_state.value_stack)
    found = "end of input" if at_end else _found(tok)
    if at_end:
        # Lark's end token borrows the last token's position; point just past the text instead.
        body = text.rstrip()
        line = body.count("\n") + 1
        col = len(body) - body.rfind("\n")
        end_col = col + 1
    else:
        line, col = tok.line, tok.column
        multi_line = tok.end_line != tok.line or kind in ("_NEWLINE", "_DEDENT")
        end_col = col + 1 if multi_line else tok.end_column

    message = ""
    if "_INDENT" in expected:
        header = _open_header(stack, text, skip_colon=True)
        what = f" after {_HEADERS[header.type][0]} on line {header.line}" if header else ""
        message = f"expected an indented block{what}, found {found}"
    elif "COLON" in expected:
        header = _open_header(stack, text)
        if header is not None:
            message = f"expected ':' {_HEADERS[header.type][1]}, found {found}"
    if not message and len(expected) == 1 and stack and type(stack[-1]) is Token \
            and stack[-1].type in _KEYWORD_TERMINALS:
        wanted = _display(next(iter(expected)))
        if wanted:
            message = f"expected {wanted} after '{stack[-1].value}', found {found}"
    if not message:
        message = f"unexpected {found}"
        inner = state.brackets[-1] if state.brackets and not at_end else None
        if inner is not None and kind in _EXPRESSION_START and "COMMA" in expected:
            # Two expressions in a row inside brackets: a comma or the closing bracket is missing.
            if inner.line < line:
                message += (f" (missing ',' or '{_CLOSING_TEXT[inner.type]}' for the "
                            f"'{inner.value}' opened at line {inner.line} col {inner.column}?)")
            else:
                message += " (missing ','?)"
        else:
            summary = _summarize(expected)
            if summary:
                message += f"; expected {summary}"
            if inner is not None and inner.line < line:
                message += f" (inside the '{inner.value}' opened at line {inner.line} " \
                           f"col {inner.column})"
    return _Fail(message, line, col, line, end_col)


def _char_error(err: UnexpectedCharacters, text: str) -> _Fail:
    """A readable message for text that matches no token."""
    pos = err.pos_in_stream
    ch = text[pos] if 0 <= pos < len(text) else ""
    line, col = err.line, err.column
    if ch in ("'", '"'):
        if pos >= 2 and text[pos - 2:pos + 1] == ch * 3:
            return _Fail("unterminated triple-quoted string literal", line, col - 2, line, col + 1)
        return _Fail("unterminated string literal", line, col)
    if ch == "\\":
        return _Fail("unexpected character after line continuation character '\\'", line, col)
    if ch == ";":
        return _Fail("unexpected ';': write one statement per line", line, col)
    if ch == "\r" or ch == "\n":
        return _Fail("unexpected line break", line, col)
    return _Fail(f"unexpected character {ch!r}", line, col)


# =============================================================================================
# Entry point
# =============================================================================================

def parse_syntax(source: str, filename: str = "<string>") -> Module:
    """Parse TVMScript text into a syntax tree; any mistake raises ``ScriptError``."""
    if not isinstance(source, str):
        raise ScriptError(f"expected TVMScript text (str), got {type(source).__name__}",
                          filename=filename)
    text = source[1:] if source.startswith("\ufeff") else source
    if not text.endswith("\n"):
        text += "\n"   # the grammar ends every statement with a newline
    try:
        _check_first_line(text)
        parser = _thread_parser()
    except _Fail as fail:
        raise _to_script_error(fail, text, filename) from None
    except Exception as exc:
        raise ScriptError(f"cannot build the TVMScript parser: {exc}", filename=filename) from exc

    builder = cast(_Builder, parser.options.transformer)
    state = _ScanState(text)
    builder._reset()
    _local.state = state
    # Parsing allocates many small objects that all stay alive: pause the cyclic GC.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return cast(Module, parser.parse(text))
    except Exception as exc:   # includes RecursionError
        failure: BaseException = exc
    finally:
        _local.state = None
        builder._reset()
        if gc_was_enabled:
            gc.enable()
    error = _convert_failure(failure, state, filename)
    raise error from error.__cause__   # keep Lark's traceback only for internal errors


def _convert_failure(exc: BaseException, state: _ScanState, filename: str) -> ScriptError:
    """The ScriptError for whatever went wrong while parsing ``state.text``."""
    text = state.text
    try:
        if isinstance(exc, _Fail):
            return _to_script_error(exc, text, filename)
        if isinstance(exc, UnexpectedToken):
            return _to_script_error(_token_error(exc, state), text, filename)
        if isinstance(exc, UnexpectedCharacters):
            return _to_script_error(_char_error(exc, text), text, filename)
        # Not expected (the nesting limits and the handlers above cover every case), but still
        # a ScriptError inside the text: at Lark's position if it has one, else at 1:1.
        line = getattr(exc, "line", None)
        col = getattr(exc, "column", None)
        if not (isinstance(line, int) and isinstance(col, int) and line > 0 and col > 0
                and line <= text.count("\n") + 1):
            line, col = 1, 1
        if isinstance(exc, RecursionError):
            error = ScriptError("nesting too deep: the script is nested too deeply to parse",
                                source=text, filename=filename, line=line, col=col)
        elif isinstance(exc, LarkError):
            error = ScriptError("invalid syntax", source=text, filename=filename, line=line,
                                col=col)
        else:   # a bug in a callback must still surface as a ScriptError
            error = ScriptError(f"internal parser error: {type(exc).__name__}: {exc}",
                                source=text, filename=filename, line=line, col=col)
    except Exception as inner:   # never let message building hide the original mistake
        error = ScriptError(f"invalid syntax ({type(inner).__name__} while describing it)",
                            source=text, filename=filename, line=1, col=1)
        error.__cause__ = inner
        return error
    error.__cause__ = exc
    return error


def _check_first_line(text: str) -> None:
    """Reject an indented first line (the post-lexer only sees indentation after a newline)."""
    first = text[:text.find("\n")]
    stripped = first.lstrip(" \t\f")
    if stripped != first and stripped and not stripped.startswith("#"):
        raise _Fail("unexpected indentation", 1, len(first) - len(stripped) + 1)


def _to_script_error(fail: _Fail, source: str, filename: str) -> ScriptError:
    end_col: int | None = fail.end_col
    if fail.end_line != fail.line:
        lines = source.split("\n")
        end_col = len(lines[fail.line - 1]) + 1 if fail.line <= len(lines) else None
    return ScriptError(fail.message, source=source, filename=filename, line=fail.line,
                       col=fail.col, end_col=end_col)
