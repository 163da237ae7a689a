"""ScriptError: the one exception type for every mistake in TVMScript text."""
from __future__ import annotations

from typing import Any

__all__ = ["ScriptError"]


class ScriptError(Exception):
    """A mistake in TVMScript text, reported as ``file:line:col: error: message`` plus a caret line.

    ``line`` and ``col`` are 1-based; ``end_col`` is exclusive, so the carets cover
    ``col .. end_col - 1`` of the shown line (at least one caret).
    """

    def __init__(self, message: str, *, source: str | None = None, filename: str = "<string>",
                 line: int | None = None, col: int | None = None,
                 end_col: int | None = None) -> None:
        self.message = message
        self.filename = filename
        # 0 means "unknown" for synthesized syntax nodes.
        self.line = line or None
        self.col = (col or None) if self.line is not None else None
        self.end_col = end_col if self.col is not None else None
        self.source_line = _source_line(source, self.line)
        super().__init__(message)

    @classmethod
    def at(cls, node: Any, message: str, source: str | None = None,
           filename: str = "<string>") -> ScriptError:
        """An error whose carets underline ``node`` (any syntax node or Lark token)."""
        line = getattr(node, "line", None)
        col = getattr(node, "col", None)
        if col is None:
            col = getattr(node, "column", None)
        end_line = getattr(node, "end_line", line)
        end_col = getattr(node, "end_col", None)
        if end_col is None:
            end_col = getattr(node, "end_column", None)
        if end_line != line:
            # A span over several lines: underline the rest of its first line.
            text = _source_line(source, line)
            end_col = len(text) + 1 if text is not None else None
        return cls(message, source=source, filename=filename, line=line, col=col, end_col=end_col)

    def with_source(self, source: str, filename: str | None = None) -> ScriptError:
        """The same error, showing the offending line of ``source`` (and ``filename`` if given)."""
        err = ScriptError(self.message, source=source, filename=filename or self.filename,
                          line=self.line, col=self.col, end_col=self.end_col)
        err.__cause__ = self.__cause__
        return err

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.filename}: error: {self.message}"
        if self.col is None:
            return f"{self.filename}:{self.line}: error: {self.message}"
        head = f"{self.filename}:{self.line}:{self.col}: error: {self.message}"
        text = self.source_line
        if text is None:
            return head
        start = min(self.col - 1, len(text))
        width = self.end_col - self.col if self.end_col is not None else 1
        width = max(1, min(width, len(text) - start))
        # Keep tabs so the carets line up under the same characters as in the shown line.
        pad = "".join("\t" if ch == "\t" else " " for ch in text[:start])
        return f"{head}\n    {text}\n    {pad}{'^' * width}"

    def __repr__(self) -> str:
        return (f"ScriptError({self.message!r}, filename={self.filename!r}, line={self.line!r}, "
                f"col={self.col!r}, end_col={self.end_col!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.filename, self.line, self.col,
                           self.end_col, self.source_line))


def _source_line(source: str | None, line: int | None) -> str | None:
    """Line ``line`` (1-based) of ``source`` without its line terminator, or None."""
    if source is None or line is None or line < 1:
        return None
    # split("\n") rather than splitlines(): the lexer only counts "\n" as a line break.
    lines = source.split("\n")
    if line > len(lines):
        return None
    return lines[line - 1].rstrip("\r")


def _rebuild(cls: type[ScriptError], message: str, filename: str, line: int | None,
             col: int | None, end_col: int | None, source_line: str | None) -> ScriptError:
    """Unpickle a ScriptError (its constructor takes keyword arguments)."""
    err = cls(message, filename=filename, line=line, col=col, end_col=end_col)
    err.source_line = source_line
    return err
