"""The located syntax error raised while TVMScript text is read (made a ScriptError after)."""
from __future__ import annotations

from lark import Token

from .nodes import Node


class SyntaxFailure(Exception):
    """A syntax error found by the post-lexer or a rule callback (turned into ScriptError)."""

    def __init__(self, message: str, line: int, col: int, end_line: int | None = None,
                 end_col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.end_line = line if end_line is None else end_line
        self.end_col = col + 1 if end_col is None else end_col


def fail_at(node: Node, message: str) -> SyntaxFailure:
    """The failure ``message`` spanning syntax node ``node``."""
    return SyntaxFailure(message, node.line, node.col, node.end_line, node.end_col)


def fail_tok(tok: Token, message: str) -> SyntaxFailure:
    """The failure ``message`` spanning token ``tok``."""
    return SyntaxFailure(message, tok.line, tok.column, tok.end_line, tok.end_column)
