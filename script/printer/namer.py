"""Names and scopes of the printer: one namespace for every defined object (variables,
buffers, the module), unique names with ``_1``, ``_2`` suffixes, released when the frame that
defined them is left (so sibling loops may both use ``i``)."""
from __future__ import annotations

import keyword
import re
from typing import Any, Callable, Union

__all__ = ["Frame", "NameTable", "sanitize"]

_BAD = re.compile(r"[^A-Za-z0-9_]")

# What an object prints as: a fixed text, or a function computing it when used (``A.data``,
# ``cls.f``: the text depends on other definitions, or has side effects such as ``cls = Module``).
DocSource = Union[str, Callable[[], str]]


def sanitize(name: str) -> str:
    """A valid identifier from a name hint: every character that is not an ASCII letter, digit or
    ``_`` becomes ``_`` (per UTF-8 byte, as TVM's C++ printer does); empty names become ``v``, and
    Python keywords or names starting with a digit get a ``_`` prefix so the text re-parses."""
    if name.isascii():
        out = _BAD.sub("_", name)
    else:
        out = "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or b == 95) else "_"
                      for b in name.encode("utf-8", "surrogatepass"))
    if not out:
        return "v"
    if out[0].isdigit() or keyword.iskeyword(out):
        return "_" + out
    return out


class Frame:
    """A printing scope: the statements collected so far and what it defined.

    ``kind`` is ``"tir"``, ``"relax"`` or ``"ir"``; ``node`` is the IR object the frame was
    opened for (TIR places implicit definitions in the deepest frame enclosing all uses).
    """

    __slots__ = ("kind", "node", "stmts", "defined", "token", "allow_concise", "is_func",
                 "func_vars", "alias_printed", "for_loop", "sealed")

    def __init__(self, kind: str, node: Any = None, token: str | None = None) -> None:
        self.kind = kind
        self.node = node
        self.stmts: list = []
        self.defined: list = []
        self.token = token
        self.allow_concise = False
        self.is_func = False
        # Relax: TIR variables met while printing the signature (printed as strings there).
        self.func_vars: set | None = None
        self.alias_printed = False
        self.for_loop: Any = None
        # While a loop header is printed, its frame takes no definitions (they would land in
        # the body, after their first use).
        self.sealed = False


class NameTable:
    """Object -> printed text, plus the set of names in use."""

    __slots__ = ("names", "docs")

    def __init__(self, reserved: tuple[str, ...] = ()) -> None:
        self.names: set[str] = set(reserved)
        # object -> (text or factory, name or None)
        self.docs: dict[Any, tuple[DocSource, str | None]] = {}

    def define(self, obj: Any, frame: Frame, hint: str) -> str:
        """Give ``obj`` a unique name derived from ``hint`` in ``frame``; returns the name."""
        entry = self.docs.get(obj)
        if entry is not None:
            # Defined twice: only in ill-formed IR; keep the first name rather than failing.
            src = entry[0]
            return src if isinstance(src, str) else src()
        base = sanitize(hint)
        name = base
        names = self.names
        i = 1
        while name in names:
            name = f"{base}_{i}"
            i += 1
        names.add(name)
        self.docs[obj] = (name, name)
        frame.defined.append(obj)
        return name

    def define_doc(self, obj: Any, frame: Frame, source: DocSource) -> None:
        """Make ``obj`` print as ``source`` (no name is taken) until ``frame`` ends."""
        if obj in self.docs:
            return
        self.docs[obj] = (source, None)
        frame.defined.append(obj)

    def get(self, obj: Any) -> str | None:
        """The text of a defined object, or None."""
        entry = self.docs.get(obj)
        if entry is None:
            return None
        src = entry[0]
        return src if isinstance(src, str) else src()

    def is_defined(self, obj: Any) -> bool:
        """True when ``obj`` has a definition in scope."""
        return obj in self.docs

    def release(self, frame: Frame) -> None:
        """Forget everything ``frame`` defined and free its names."""
        docs = self.docs
        names = self.names
        for obj in frame.defined:
            entry = docs.pop(obj, None)
            if entry is not None and entry[1] is not None:
                names.discard(entry[1])
        frame.defined.clear()
