"""The wording of syntax errors: Lark's failures turned into located ScriptErrors."""
from __future__ import annotations

from typing import Any

from lark import Token
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedToken

from ..errors import ScriptError
from .failure import SyntaxFailure, fail_tok
from .lark_parser import thread_parser
from .lexer import CLOSERS, KEYWORD_TERMINALS, OPEN_TO_CLOSE, ScanState, bracket_error

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


def display_terminal(name: str) -> str | None:
    """How an expected terminal is named in messages (None for internal terminals)."""
    if not _display_cache:
        for term in thread_parser().terminals:
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
    if kind in KEYWORD_TERMINALS:
        return f"keyword '{value}'"
    return f"'{value}'"


def _summarize(expected: set[str]) -> str:
    """A short English list of what the parser could have accepted ("" if too long)."""
    names = {name for name in expected if display_terminal(name) is not None}
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
    parts.extend(sorted(display_terminal(name) or name for name in names))
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
        if kind in CLOSERS:
            depth += 1
        elif kind in OPEN_TO_CLOSE:
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


def token_error(err: UnexpectedToken, state: ScanState) -> SyntaxFailure:
    """A readable message for an unexpected token."""
    tok = err.token
    kind = tok.type
    text = state.text
    # Blocks are closed by DEDENT tokens at the end of the input too.
    at_end = kind == "$END" or (kind == "_DEDENT"
                                and (state.eof or not text[tok.start_pos:].strip()))
    if at_end and state.brackets:
        b = state.brackets[-1]
        return fail_tok(b, f"unexpected end of input: '{b.value}' opened at line {b.line} "
                            f"col {b.column} is never closed")
    if kind == "_INDENT":
        return SyntaxFailure("unexpected indentation", tok.line, tok.end_column)
    if kind in CLOSERS:
        # Lexed by the fallback lexer, so the post-lexer has not checked it yet.
        mismatch = bracket_error(tok, state.brackets)
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
            and stack[-1].type in KEYWORD_TERMINALS:
        wanted = display_terminal(next(iter(expected)))
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
    return SyntaxFailure(message, line, col, line, end_col)


def char_error(err: UnexpectedCharacters, text: str) -> SyntaxFailure:
    """A readable message for text that matches no token."""
    pos = err.pos_in_stream
    ch = text[pos] if 0 <= pos < len(text) else ""
    line, col = err.line, err.column
    if ch in ("'", '"'):
        if pos >= 2 and text[pos - 2:pos + 1] == ch * 3:
            return SyntaxFailure("unterminated triple-quoted string literal", line, col - 2, line, col + 1)
        return SyntaxFailure("unterminated string literal", line, col)
    if ch == "\\":
        return SyntaxFailure("unexpected character after line continuation character '\\'", line, col)
    if ch == ";":
        return SyntaxFailure("unexpected ';': write one statement per line", line, col)
    if ch == "\r" or ch == "\n":
        return SyntaxFailure("unexpected line break", line, col)
    return SyntaxFailure(f"unexpected character {ch!r}", line, col)


def convert_failure(exc: BaseException, state: ScanState, filename: str) -> ScriptError:
    """The ScriptError for whatever went wrong while parsing ``state.text``."""
    text = state.text
    try:
        if isinstance(exc, SyntaxFailure):
            return to_script_error(exc, text, filename)
        if isinstance(exc, UnexpectedToken):
            return to_script_error(token_error(exc, state), text, filename)
        if isinstance(exc, UnexpectedCharacters):
            return to_script_error(char_error(exc, text), text, filename)
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


def to_script_error(fail: SyntaxFailure, source: str, filename: str) -> ScriptError:
    """The ScriptError for ``fail`` in ``source`` (a multi-line span is cut at its first line)."""
    end_col: int | None = fail.end_col
    if fail.end_line != fail.line:
        lines = source.split("\n")
        end_col = len(lines[fail.line - 1]) + 1 if fail.line <= len(lines) else None
    return ScriptError(fail.message, source=source, filename=filename, line=fail.line,
                       col=fail.col, end_col=end_col)
