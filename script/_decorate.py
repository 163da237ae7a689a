"""What the ``@I.ir_module`` / ``@R.function`` / ``@T.prim_func`` decorators share: reading the
decorated source text, parsing it with the caller's Python names in scope, and harmless
stand-ins for everything else a script names (Python evaluates annotations at definition time)."""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import sys
import textwrap
from types import FrameType
from typing import Any, Callable


class Harmless:
    """Stands for ``R.Tensor(...)``, ``T.Buffer[...]``, ``T.int64(1)`` etc. when Python evaluates them.

    The decorators re-read the source text, so these values are never used; they only have to
    survive being called, indexed, combined with operators and looked into.
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> "Harmless":
        return Harmless(f"{self._name}(...)")

    def __getattr__(self, name: str) -> "Harmless":
        if name.startswith("__"):
            raise AttributeError(name)
        return Harmless(f"{self._name}.{name}")

    def __getitem__(self, key: Any) -> "Harmless":
        return Harmless(f"{self._name}[...]")

    def __repr__(self) -> str:
        return f"<script name {self._name}>"

    def _op(self, *_: Any) -> "Harmless":
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _op
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = _op


def _in_class_body(frame: FrameType | None) -> bool:
    # A class body's namespace has __module__ and __qualname__ while it is being executed.
    return frame is not None and "__qualname__" in frame.f_locals and "__module__" in frame.f_locals


def _caller_names(frame: FrameType | None) -> dict[str, Any]:
    names: dict[str, Any] = {}
    while frame is not None and _in_class_body(frame):
        frame = frame.f_back  # names of the enclosing function or module, not of the class body
    if frame is not None:
        names.update(frame.f_globals)
        names.update(frame.f_locals)
    return names


def _class_in_frame_source(cls: type, frame: FrameType | None) -> tuple[list[str], int, str] | None:
    """The source lines, first line and file name of class ``cls`` as the code running in ``frame``
    defines it, or None.

    ``inspect`` finds a class through its module's file, which a notebook cell or an ``exec``
    does not have; the defining frame's code does know its file name, and IPython keeps cell
    texts in ``linecache`` under it. The frame's current line also tells apart several classes
    of the same name in one file.
    """
    if frame is None or not isinstance(cls, type) or cls.__module__ != frame.f_globals.get("__name__"):
        return None
    filename = frame.f_code.co_filename
    linecache.checkcache(filename)  # as inspect does: a file edited since it was cached is re-read
    lines = linecache.getlines(filename, frame.f_globals)
    if not lines:
        return None
    spans = _class_spans("".join(lines)).get(cls.__name__, ())
    line = frame.f_lineno or 0
    # The class being decorated spans the running line; `I.ir_module(Cls)` called later takes
    # the last definition above it.
    inside = [s for s in spans if s[0] <= line <= s[1]]
    above = [s for s in spans if s[1] < line]
    if inside:
        first, last = max(inside)  # the innermost: nested classes start later
    elif above:
        first, last = max(above, key=lambda s: s[1])
    else:
        return None
    return lines[first - 1:last], first, filename


@functools.lru_cache(maxsize=16)
def _class_spans(source: str) -> dict[str, list[tuple[int, int]]]:
    """Class name -> (first line with decorators, last line) of every class defined in ``source``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    spans: dict[str, list[tuple[int, int]]] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ClassDef):
            first = min([n.lineno] + [d.lineno for d in n.decorator_list])
            spans.setdefault(n.name, []).append((first, n.end_lineno or n.lineno))
    return spans


def parse_object(obj: Any, frame: FrameType | None) -> Any:
    """Parse the source text of a decorated class or function, resolving free names in ``frame``."""
    from .errors import ScriptError
    from .parser import from_source

    found = _class_in_frame_source(obj, frame)
    if found is not None:
        lines, start, filename = found
    else:
        try:
            lines, start = inspect.getsourcelines(obj)
            filename = inspect.getsourcefile(obj) or "<unknown>"
        except (OSError, TypeError) as err:
            raise ScriptError(f"cannot read the source of {getattr(obj, '__name__', obj)!r}: {err} (define it "
                              f"in a file or a notebook cell, or parse its text with from_source)") from None
    # Blank lines keep the line numbers of error messages equal to the file's.
    source = "\n" * (start - 1) + textwrap.dedent("".join(lines))
    try:
        return from_source(source, filename=filename, extra_vars=_caller_names(frame))
    except ScriptError as err:
        # The message locates the mistake in the user's file; parser frames would only be noise.
        raise err.with_traceback(None) from None


def make_function_decorator(kind: str) -> Callable[..., Any]:
    """The ``R.function`` / ``T.prim_func`` decorator (also usable with keyword arguments)."""

    def decorator(func: Any = None, **_options: Any) -> Any:
        if func is None:  # @R.function(private=True)
            frame = sys._getframe(1)
            return lambda f: _apply(f, frame)
        return _apply(func, sys._getframe(1))

    def _apply(func: Any, frame: FrameType) -> Any:
        if _in_class_body(frame):
            return func  # @I.ir_module re-reads the whole class
        return parse_object(func, frame)

    decorator.__name__ = kind
    decorator.__doc__ = f"Parse the decorated Python function as a {kind} (outside a module class)."
    return decorator
