"""The post-lexer of TVMScript text: Python-style indentation, brackets and keywords."""
from __future__ import annotations

import keyword
import re
import threading
from typing import Iterator

from lark import Token
from lark.indenter import Indenter

from .failure import SyntaxFailure, fail_tok
from .limits import MAX_BRACKETS, MAX_INDENT

OPEN_TO_CLOSE = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
CLOSERS = frozenset(OPEN_TO_CLOSE.values())
# Hard keywords that can only ever be lexed as NAME where the grammar does not allow them.
# True/False/None stay names here and become Constant nodes (or errors where a name is needed).
CONSTANT_NAMES = {"True": True, "False": False, "None": None}
_HARD_KEYWORDS = frozenset(keyword.kwlist) - set(CONSTANT_NAMES)
_UNSUPPORTED_KEYWORDS = frozenset({"async", "await", "del", "except", "finally", "global",
                                   "nonlocal", "raise", "try", "yield"})
KEYWORD_TERMINALS = frozenset({
    "AND", "AS", "ASSERT", "BREAK", "CLASS", "CONTINUE", "DEF", "ELIF", "ELSE", "FOR", "FROM",
    "IF", "IMPORT", "IN", "IS", "LAMBDA", "NOT", "OR", "PASS", "RETURN", "WHILE", "WITH"})
_POSTLEX_SPECIAL = frozenset({"_NEWLINE", "NAME", *OPEN_TO_CLOSE, *CLOSERS, *KEYWORD_TERMINALS})
_WORD = re.compile(r"\w+")


def bracket_error(tok: Token, brackets: list[Token]) -> SyntaxFailure | None:
    """The error for closing bracket ``tok`` given the open ``brackets``, if it matches none."""
    if not brackets:
        return fail_tok(tok, f"unexpected '{tok.value}': nothing to close")
    opener = brackets[-1]
    if OPEN_TO_CLOSE[opener.type] != tok.type:
        return fail_tok(tok, f"unexpected '{tok.value}': '{opener.value}' opened at line "
                              f"{opener.line} col {opener.column} is not closed")
    return None


class ScanState:
    """What the post-lexer knows about one parse (kept for error messages)."""

    __slots__ = ("text", "brackets", "eof")

    def __init__(self, text: str) -> None:
        self.text = text
        self.brackets: list[Token] = []   # open brackets, innermost last
        self.eof = False                  # the lexer has reached the end of the text


thread_state = threading.local()


class TVMScriptIndenter(Indenter):
    """Python-style INDENT/DEDENT post-lexer that also checks brackets, tabs and keywords.

    Unlike ``lark.indenter.Indenter`` it gives every error a position, rejects tabs in
    indentation, gives INDENT/DEDENT tokens the position of the line they start, and keeps
    its per-parse state in a thread-local ``ScanState`` so parses may run in threads.
    """

    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        """Wrap the lexer's token stream for one parse."""
        state = getattr(thread_state, "state", None)
        if state is None:
            state = ScanState("")
        return self._scan(stream, state)

    def _scan(self, stream: Iterator[Token], state: ScanState) -> Iterator[Token]:
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
                    raise SyntaxFailure("tab in indentation (indent with spaces)", line, col)
                width = len(ws)
                if width > indents[-1]:
                    if len(indents) > MAX_INDENT:
                        raise SyntaxFailure(f"nesting too deep: more than {MAX_INDENT} indentation "
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
                        raise SyntaxFailure("unindent does not match any outer indentation level",
                                    line, width + 1)
            elif kind == "NAME":
                word = tok.value
                if word in _HARD_KEYWORDS:
                    if word in _UNSUPPORTED_KEYWORDS:
                        raise fail_tok(tok, f"'{word}' is not supported in TVMScript")
                    raise fail_tok(tok, f"unexpected keyword '{word}'")
                yield tok
            # Brackets are pushed and popped only once the parser has accepted them (the code
            # after a yield runs when the next token is requested), so that on a syntax error
            # ``brackets`` lists what is really open.
            elif kind in OPEN_TO_CLOSE:
                if len(brackets) >= MAX_BRACKETS:
                    raise fail_tok(tok, f"nesting too deep: more than {MAX_BRACKETS} brackets "
                                         "open at once")
                yield tok
                brackets.append(tok)
            elif kind in CLOSERS:
                mismatch = bracket_error(tok, brackets)
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
                    raise SyntaxFailure(f"unexpected name '{word}'", tok.line, tok.column, tok.line,
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
