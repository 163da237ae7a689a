"""Script files as users keep them: reading them (``source_text``) and finding the TVMScript in a Python file that holds other code too (helpers, a ``__main__`` block).

A script file is also a Python module: beside imports and the ``@I.ir_module`` class (or an
``@R.function`` / ``@T.prim_func``) it may hold any Python code, which tvmlite never runs and
reads past. ``parse_file``, the command line and ``tvmlite fmt`` share this view of a file.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Any

from .errors import ScriptError
from .parser import from_source
from .printer import script
from .source_text import decode_source, read_source

__all__ = ["decode_source", "read_source", "parse_file", "parse_text", "format_source", "PythonFile", "ScriptPart",
           "split_python_file"]

# The last name of a decorator that makes a class or function TVMScript (I.ir_module, R.function,
# T.prim_func, tvm.script.ir_module, ...; a call such as @T.prim_func(private=True) too).
_SCRIPT_DECORATORS = {"ir_module": "module", "function": "function", "prim_func": "function"}
# Top-level assignments that belong to the script: the constants `script(show_meta=True)` prints.
_SCRIPT_ASSIGNMENTS = {"metadata", "meta"}


@dataclass
class ScriptPart:
    """One TVMScript definition in a Python file: lines ``first``..``last`` (1-based, inclusive,
    decorators included)."""

    kind: str  # "module" or "function"
    name: str
    first: int
    last: int


@dataclass
class PythonFile:
    """A script file seen as Python: its TVMScript definitions and the lines of everything else."""

    text: str
    parts: list[ScriptPart] = field(default_factory=list)
    imports: list[tuple[int, int]] = field(default_factory=list)    # import statements
    metadata: list[tuple[int, int]] = field(default_factory=list)   # `metadata = ...` assignments
    other: list[tuple[int, int]] = field(default_factory=list)      # any other Python code
    import_nodes: list[ast.stmt] = field(default_factory=list)

    def script_text(self, parts: list[ScriptPart] | None = None) -> str:
        """The file with only imports, metadata and ``parts`` (default: all of them) left; every
        other line is blank, so positions in error messages stay those of the file."""
        keep = self.imports + self.metadata + [(p.first, p.last) for p in (self.parts if parts is None else parts)]
        lines = self.text.split("\n")
        kept = [False] * len(lines)
        for first, last in keep:
            for i in range(first - 1, min(last, len(lines))):
                kept[i] = True
        # Comment lines stay too (they are harmless and may be a script's header).
        return "\n".join(ln if kept[i] or ln.lstrip().startswith("#") else "" for i, ln in enumerate(lines))


def _script_kind(node: ast.stmt) -> str | None:
    """"module" / "function" for a TVMScript class or function definition, else None."""
    if not isinstance(node, (ast.ClassDef, ast.FunctionDef)):
        return None
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        last = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if last in _SCRIPT_DECORATORS:
            return _SCRIPT_DECORATORS[last]
    return None


def split_python_file(text: str) -> PythonFile | None:
    """The TVMScript definitions and other statements of ``text``, or None if it is not Python."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    pf = PythonFile(text)
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        span = (first, node.end_lineno or node.lineno)
        kind = _script_kind(node)
        if kind is not None:
            pf.parts.append(ScriptPart(kind, node.name, *span))  # type: ignore[attr-defined]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            pf.imports.append(span)
            pf.import_nodes.append(node)
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id in _SCRIPT_ASSIGNMENTS):
            pf.metadata.append(span)
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) and not isinstance(node, ast.Pass):
            pf.other.append(span)
    return pf


def parse_text(text: str, filename: str = "<string>", extra_vars: dict[str, Any] | None = None) -> Any:
    """Parse the TVMScript of a script file's text; Python code beside it is read past."""
    try:
        return from_source(text, filename, extra_vars)
    except ScriptError:
        # Only when the text fails as a script: see whether it is a Python file with other code.
        pf = split_python_file(text)
        if pf is None or not pf.other or not pf.parts:
            raise
    return from_source(pf.script_text(), filename, extra_vars)


def parse_file(path: str | os.PathLike, extra_vars: dict[str, Any] | None = None) -> Any:
    """Parse a TVMScript file into an IRModule or a function (its path is the file name in error
    messages); Python code beside the script, such as a ``__main__`` block, is read past."""
    return parse_text(read_source(path), os.fspath(path), extra_vars)


_HEADER_PREFIX = "# from "


def _header_line(line: str) -> tuple[str, str, str] | None:
    """``("tvmlite.script", "relax", "R")`` for a printed ``# from tvmlite.script import relax as R``."""
    words = line.split()
    if len(words) == 7 and words[:2] == ["#", "from"] and words[3] == "import" and words[5] == "as":
        return words[2], words[4], words[6]
    return None


def _split_printed(printed: str) -> tuple[str | None, list[str], list[str]]:
    """A printed script as (its ``metadata = ...`` line or None, its header comment lines, the
    definition's lines)."""
    lines = printed.rstrip("\n").split("\n")
    metadata = None
    if lines and lines[0].startswith("metadata = "):
        metadata = lines.pop(0)
    header: list[str] = []
    while lines and (_header_line(lines[0]) is not None or not lines[0].strip()):
        line = lines.pop(0)
        if line.strip():
            header.append(line)
    return metadata, header, lines


def _bound_names(nodes: list[ast.stmt]) -> set[str]:
    """The names import statements bind."""
    names: set[str] = set()
    for node in nodes:
        for alias in node.names:  # type: ignore[attr-defined]
            names.add(alias.asname or alias.name.split(".")[0])
    return names


def format_source(text: str, filename: str = "<string>") -> str:
    """``text`` with its TVMScript in canonical form, the rest of the file as it was.

    Only the decorated definitions (the ``@I.ir_module`` class, ``@R.function`` /
    ``@T.prim_func`` functions) and the ``metadata = ...`` line are rewritten: imports, class
    names, comments outside the definitions and other Python code stay, so a runnable file
    stays runnable. An import the canonical text needs (``T`` for ``T.int64()``) is added to a
    file that has imports; a bare script without imports or header comments gets the header
    ``show`` prints. A text that is not Python, or has no decorated definition, is printed whole.
    """

    newline = "\r\n" if "\r\n" in text else "\n"
    text = text.replace("\r\n", "\n")
    pf = split_python_file(text)
    if pf is None or not pf.parts:
        printed = script(parse_text(text, filename), show_meta=True)
        return (printed if printed.endswith("\n") else printed + "\n").replace("\n", newline)
    lines = text.split("\n")
    # (first, last, rank, new lines): lines first..last (1-based, inclusive; last < first inserts
    # before `first`); at one line, higher ranks end up lower (the definition under its header).
    edits: list[tuple[int, int, int, list[str]]] = []
    headers: list[str] = []
    metadata_lines: list[tuple[ScriptPart, str]] = []
    for part in pf.parts:
        obj = from_source(pf.script_text([part]), filename)
        printed = script(obj, show_meta=True, name=part.name) if part.kind == "module" else script(obj, show_meta=True)
        metadata, header, body = _split_printed(printed)
        headers += [h for h in header if h not in headers]
        if metadata is not None:
            metadata_lines.append((part, metadata))
        edits.append((part.first, part.last, 3, body))
    if len(metadata_lines) > 1:
        second = metadata_lines[1][0]
        raise ScriptError(f"'{second.name}' has constants, as has '{metadata_lines[0][0].name}': a file can "
                          f"keep the constants (its 'metadata = ...' line) of one definition only",
                          source=text, filename=filename, line=second.first, col=1)
    first_part = pf.parts[0]
    insert_at = first_part.first  # new lines go before the first definition's decorator
    if metadata_lines:
        part, metadata = metadata_lines[0]
        if pf.metadata:
            first, last = pf.metadata[-1]
            edits.append((first, last, 3, [metadata]))
        else:
            edits.append((part.first, part.first - 1, 1, [metadata]))
    has_header = any(_header_line(ln) is not None for ln in lines)
    if not pf.imports:
        if not has_header:  # a bare script: the header `show` prints
            edits.append((insert_at, insert_at - 1, 2, headers + [""]))
    else:
        bound = _bound_names(pf.import_nodes)
        missing = [h for h in headers if _header_line(h)[2] not in bound]  # type: ignore[index]
        if missing:
            # From the package the file takes the dialects from (tvm.script or tvmlite.script).
            package = next((n.module for n in pf.import_nodes if isinstance(n, ast.ImportFrom) and n.module
                            and n.module.split(".")[-1] == "script"), "tvmlite.script")
            after = max(last for first, last in pf.imports if first < insert_at) \
                if any(first < insert_at for first, _ in pf.imports) else insert_at - 1
            new = [f"from {package} import {_header_line(h)[1]} as {_header_line(h)[2]}" for h in missing]  # type: ignore[index]
            edits.append((after + 1, after, 0, new))
    # From the bottom up, so that earlier line numbers stay valid.
    for first, last, _, new in sorted(edits, key=lambda e: (e[0], e[2]), reverse=True):
        lines[first - 1:last] = new
    out = "\n".join(lines)
    return (out if out.endswith("\n") else out + "\n").replace("\n", newline)
