"""The semantic parser: TVMScript syntax trees to IR (``IRModule``, ``relax.Function``, ``tir.PrimFunc``).

``from_source(text)`` parses a whole script: an ``@I.ir_module`` class gives an IRModule, a lone
``@R.function``/``@T.prim_func`` gives that function. Names the script does not define are looked
up in ``extra_vars`` (the caller's Python names): numbers become literals, numpy arrays become
Relax constants, and ``extra_vars={"metadata": {...}}`` / ``{"meta": {"relay.Constant": [...]}}``
supply the constants that ``metadata[...][i]`` / ``meta[relay.Constant][i]`` refer to.
"""
from __future__ import annotations

import gc
import os
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from ...ir import relax, tir
from ...ir.module import IRModule
from ..errors import ScriptError
from ..source_text import read_source
from ..syntax.limits import MAX_DEPTH
from ..syntax.parse import parse_syntax
from .module import parse_script

__all__ = ["from_source", "parse_file", "ScriptError"]


# Python frames the IR builder may need per level of syntax-tree depth (measured: at most ~5
# for nested calls and blocks), so that a tree of MAX_DEPTH levels never meets the recursion
# limit: the syntax layer refuses deeper trees with a ScriptError first.
_FRAMES_PER_LEVEL = 8
_HEADROOM = MAX_DEPTH * _FRAMES_PER_LEVEL + 400
_limit_lock = threading.Lock()
_limit_users = 0
_limit_saved: int | None = None
_limit_set: int | None = None


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


@contextmanager
def _recursion_headroom() -> Iterator[None]:
    """Make sure the recursion limit leaves room for a tree of MAX_DEPTH levels below the
    caller; the limit is restored when the last parse running in any thread ends."""
    global _limit_users, _limit_saved, _limit_set
    needed = _stack_depth() + _HEADROOM
    with _limit_lock:
        current = sys.getrecursionlimit()
        if needed > current:
            if _limit_saved is None:
                _limit_saved = current
            sys.setrecursionlimit(needed)
            _limit_set = needed
        _limit_users += 1
    try:
        yield
    finally:
        with _limit_lock:
            _limit_users -= 1
            if _limit_users == 0 and _limit_saved is not None:
                if sys.getrecursionlimit() == _limit_set:   # nobody else changed it meanwhile
                    sys.setrecursionlimit(_limit_saved)
                _limit_saved = _limit_set = None


def from_source(source: str, filename: str = "<string>", extra_vars: dict[str, Any] | None = None
                ) -> IRModule | relax.Function | tir.PrimFunc:
    """Parse TVMScript text into an IRModule (a module class) or a function (a lone function).

    Any text either parses or raises ScriptError located inside the text."""
    tree = parse_syntax(source, filename)
    # The IR is many small objects that all stay alive: pause the cyclic GC while building it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with _recursion_headroom():
            return parse_script(tree, source, filename, extra_vars)
    except ScriptError:
        raise
    except RecursionError as err:   # last resort: MAX_DEPTH should make this unreachable
        raise _fallback_error("nesting too deep: the script is nested too deeply to parse",
                              tree, source, filename) from err
    except Exception as err:   # last resort: a parser bug must still point into the script
        raise _fallback_error(f"internal error while parsing: {type(err).__name__}: {err}",
                              tree, source, filename) from err
    finally:
        if gc_was_enabled:
            gc.enable()


def _fallback_error(message: str, tree: Any, source: str, filename: str) -> ScriptError:
    """A ScriptError for an unexpected failure, at the first statement (else at 1:1)."""
    first = tree.body[0] if getattr(tree, "body", None) else None
    if first is not None and getattr(first, "line", 0) > 0:
        return ScriptError.at(first, message, source, filename)
    return ScriptError(message, source=source, filename=filename, line=1, col=1)


def parse_file(path: str | os.PathLike, extra_vars: dict[str, Any] | None = None
               ) -> IRModule | relax.Function | tir.PrimFunc:
    """Parse a TVMScript file (its path is the file name in error messages)."""
    return from_source(read_source(path), os.fspath(path), extra_vars)
