"""The small document model between IR and text.

Expressions are ``(text, precedence)`` pairs (Python operator precedence decides the
parentheses). Statements are the classes below; :func:`render` turns a statement list into
text the way TVM's Python doc printer does (4-space indent, no wrapping)."""
from __future__ import annotations

from typing import Sequence

__all__ = [
    "P_LAMBDA", "P_OR", "P_AND", "P_NOT", "P_CMP", "P_ADD", "P_MUL", "P_UNARY", "P_ATOM",
    "P_LITERAL", "Expr", "Line", "Comment", "Scope", "If", "Func", "Class", "render", "paren",
    "binary", "call", "tuple_text",
]

# Python precedences (higher binds tighter); literals are atoms that T.Not wants to recognise.
P_LAMBDA, P_IFELSE, P_OR, P_AND, P_NOT, P_CMP = 1, 2, 3, 4, 5, 6
P_ADD, P_MUL, P_UNARY, P_POW, P_ATOM, P_LITERAL = 11, 12, 13, 14, 15, 16

Expr = tuple  # (text, precedence)


def paren(doc: Expr, parent: int, same: bool = False) -> str:
    """The text of ``doc`` as an operand of an operator of precedence ``parent``."""
    text, prec = doc
    if prec < parent or (same and prec == parent):
        return "(" + text + ")"
    return text


def binary(a: Expr, op: str, b: Expr, prec: int) -> Expr:
    """``a op b``: the left operand keeps equal precedence bare, the right one does not."""
    return (f"{paren(a, prec)} {op} {paren(b, prec, True)}", prec)


def call(callee: str, args: Sequence[str] = (), kwargs: Sequence[tuple[str, str]] = ()) -> Expr:
    """``callee(args, key=value)``."""
    parts = list(args)
    parts.extend(f"{k}={v}" for k, v in kwargs)
    return (f"{callee}({', '.join(parts)})", P_ATOM)


def tuple_text(items: Sequence[str]) -> str:
    """A Python tuple display: ``(a,)`` for one element."""
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


class Line:
    """A one-line statement (assignment, expression, assert, return)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Comment:
    """``# text`` (one line per line of text; an empty text prints an empty line)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Scope:
    """``header:`` followed by an indented body (``with``, ``for``, ``while``)."""

    __slots__ = ("header", "body")

    def __init__(self, header: str, body: list) -> None:
        self.header = header
        self.body = body


class If:
    """``if cond:`` / ``else:`` (an empty else branch is not printed)."""

    __slots__ = ("cond", "then", "orelse")

    def __init__(self, cond: str, then: list, orelse: list) -> None:
        self.cond = cond
        self.then = then
        self.orelse = orelse


class Func:
    """A decorated ``def``; followed by an empty line."""

    __slots__ = ("decorators", "signature", "body")

    def __init__(self, decorators: list[str], signature: str, body: list) -> None:
        self.decorators = decorators
        self.signature = signature
        self.body = body


class Class:
    """A decorated ``class Name:``."""

    __slots__ = ("decorators", "name", "body")

    def __init__(self, decorators: list[str], name: str, body: list) -> None:
        self.decorators = decorators
        self.name = name
        self.body = body


def _comment_lines(text: str) -> list[str]:
    # Like splitting with std::getline: no trailing empty piece.
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


class _Renderer:
    __slots__ = ("out", "unit")

    def __init__(self, indent_spaces: int) -> None:
        self.out: list[str] = []
        self.unit = " " * indent_spaces

    def block(self, stmts: list, level: int) -> None:
        out = self.out
        nl = "\n" + self.unit * level
        if not stmts:
            out.append(nl + "pass")
            return
        for s in stmts:
            out.append(nl)
            self.stmt(s, level)

    def stmt(self, s: object, level: int) -> None:
        out = self.out
        cls = type(s)
        if cls is Line:
            out.append(s.text)  # type: ignore[attr-defined]
        elif cls is Scope:
            out.append(s.header + ":")  # type: ignore[attr-defined]
            self.block(s.body, level + 1)  # type: ignore[attr-defined]
        elif cls is If:
            out.append("if " + s.cond + ":")  # type: ignore[attr-defined]
            self.block(s.then, level + 1)  # type: ignore[attr-defined]
            if s.orelse:  # type: ignore[attr-defined]
                out.append("\n" + self.unit * level + "else:")
                self.block(s.orelse, level + 1)  # type: ignore[attr-defined]
        elif cls is Comment:
            nl = "\n" + self.unit * level
            out.append(nl.join("# " + line for line in _comment_lines(s.text)))  # type: ignore[attr-defined]
        elif cls is Func:
            nl = "\n" + self.unit * level
            for d in s.decorators:  # type: ignore[attr-defined]
                out.append("@" + d + nl)
            out.append(s.signature + ":")  # type: ignore[attr-defined]
            self.block(s.body, level + 1)  # type: ignore[attr-defined]
            out.append("\n")
        elif cls is Class:
            nl = "\n" + self.unit * level
            for d in s.decorators:  # type: ignore[attr-defined]
                out.append("@" + d + nl)
            out.append("class " + s.name + ":")  # type: ignore[attr-defined]
            self.block(s.body, level + 1)  # type: ignore[attr-defined]
        else:  # a stray string: print it as a line
            out.append(str(s))


def render(stmts: list, indent_spaces: int = 4) -> str:
    """Top-level statements as text, one after another, trailing whitespace stripped."""
    r = _Renderer(indent_spaces)
    first = True
    for s in stmts:
        if not first:
            r.out.append("\n")
        first = False
        r.stmt(s, 0)
    return "".join(r.out).rstrip()
