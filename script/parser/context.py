"""What every part of one parse shares: the source text (for error carets), the caller's
Python names (``extra_vars``), the dialect namespaces, and the error helpers."""
from __future__ import annotations

import re
import types
from typing import Any, NoReturn

import numpy as np

from ...ir import relax as rx
from ...ir import tir
from ...ir.node import Span, replace
from ..errors import ScriptError
from .scope import MISSING
from .values import Namespace, namespace_of_module

__all__ = ["ParseContext", "DEFAULT_NAMES"]

# Names a script may use without importing them (the printer's header imports are comments;
# the legacy spellings refer to ``relax``/``tvm``/``tir`` and to a bare ``Tensor``).
DEFAULT_NAMES: dict[str, Any] = {
    "I": Namespace("I"), "T": Namespace("T"), "R": Namespace("R"),
    "relax": Namespace("R"), "tir": Namespace("T"), "tvm": Namespace("tvm"),
    "tvmlite": Namespace("tvm"), "Tensor": Namespace("R.Tensor"), "Shape": Namespace("R.Shape"),
    "Object": Namespace("R.Object"), "range": Namespace("range"),
    "True": True, "False": False, "None": None,
}


class _Loc:
    """A bare source position, for errors about text that has no syntax node of its own."""

    __slots__ = ("line", "col", "end_line", "end_col")

    def __init__(self, line: int, col: int, end_line: int, end_col: int) -> None:
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


# Freshly built values and statements that take the location of their source text.
_LOCATABLE = frozenset({rx.Call, rx.Tuple, rx.TupleGetItem, rx.ShapeExpr, rx.PrimValue, rx.If,
                        rx.SeqExpr, *(c for c in vars(tir).values()
                                      if isinstance(c, type) and issubclass(c, tir.Stmt))})


class ParseContext:
    """Source, file name and free-name resolution for one ``from_source`` call."""

    __slots__ = ("source", "filename", "extra_vars", "_converted", "_lines", "_constants")

    def __init__(self, source: str, filename: str, extra_vars: dict[str, Any] | None) -> None:
        self.source = source
        self.filename = filename
        self.extra_vars = extra_vars or {}
        self._converted: dict[str, Any] = {}
        self._lines: list[str] | None = None
        self._constants: dict[int, rx.Constant] = {}

    # ---------------------------------------------------------------- errors
    def error(self, node: Any, message: str) -> NoReturn:
        """Raise a ScriptError with a caret under ``node``."""
        raise ScriptError.at(node, message, self.source, self.filename)

    def error_at(self, line: int, col: int, end_col: int, message: str) -> NoReturn:
        """Raise a ScriptError at an explicit position."""
        raise ScriptError(message, source=self.source, filename=self.filename, line=line, col=col,
                          end_col=end_col)

    def span_of(self, node: Any) -> Span:
        """The source location of a syntax node, for the IR node built from it."""
        return Span(self.filename, node.line, node.col, node.end_line, node.end_col)

    def located(self, ir_node: Any, node: Any) -> Any:
        """``ir_node`` carrying the location of syntax ``node`` (unless it already has one).

        Only nodes the parser has just built are copied: variables, constants, ops and global
        vars keep their identity (a copy would be another variable or another metadata entry).
        """
        if type(ir_node) in _LOCATABLE and ir_node.span is None:
            return replace(ir_node, span=self.span_of(node))
        return ir_node

    def text(self, node: Any) -> str:
        """The source text a syntax node spans (for messages)."""
        if self._lines is None:
            self._lines = self.source.split("\n")
        lines = self._lines
        try:
            if node.line == node.end_line:
                return lines[node.line - 1][node.col - 1:node.end_col - 1]
            parts = [lines[node.line - 1][node.col - 1:]]
            parts.extend(lines[node.line:node.end_line - 1])
            parts.append(lines[node.end_line - 1][:node.end_col - 1])
            return "\n".join(parts)
        except (IndexError, AttributeError, TypeError):
            return "<?>"

    def def_name(self, fdef: Any) -> Any:
        """The position of ``name`` in ``def name(`` (a function's span starts at its decorators)."""
        if self._lines is None:
            self._lines = self.source.split("\n")
        start = fdef.decorators[-1].end_line if fdef.decorators else fdef.line
        pattern = re.compile(r"\bdef\s+(" + re.escape(fdef.name) + r")\b")
        for line in range(start, min(fdef.end_line, len(self._lines)) + 1):
            m = pattern.search(self._lines[line - 1])
            if m:
                return _Loc(line, m.start(1) + 1, line, m.end(1) + 1)
        return fdef

    # ---------------------------------------------------------------- free names
    def resolve(self, name: str) -> Any:
        """A name the script does not define: the caller's Python value, else a default; MISSING."""
        got = self._converted.get(name, MISSING)
        if got is not MISSING:
            return got
        if name in self.extra_vars:
            got = self._convert(self.extra_vars[name])
        else:
            got = DEFAULT_NAMES.get(name, MISSING)
        self._converted[name] = got
        return got

    def visible_names(self) -> list[str]:
        """Names available without a definition (for suggestions)."""
        return [*DEFAULT_NAMES, *(k for k in self.extra_vars if not k.startswith("_"))]

    def constant(self, array: np.ndarray) -> rx.Constant:
        """The Relax constant of a numpy array (one node per array, however often it is used)."""
        got = self._constants.get(id(array))
        if got is None or got.data is not array:
            got = rx.Constant(array)
            self._constants[id(array)] = got
        return got

    def _convert(self, value: Any) -> Any:
        """A caller's Python value as a script value (numpy arrays become Relax constants)."""
        if isinstance(value, types.ModuleType):
            ns = namespace_of_module(value)
            return ns if ns is not None else value
        if isinstance(value, np.ndarray):
            return self.constant(value)
        if isinstance(value, np.generic):
            return value.item()
        return value
