"""``parse_syntax``: TVMScript text -> syntax tree, every mistake a located ``ScriptError``."""
from __future__ import annotations

import gc
from typing import cast

from ..errors import ScriptError
from .builder import SyntaxBuilder
from .failure import SyntaxFailure
from .lark_parser import thread_parser
from .lexer import ScanState, thread_state
from .messages import convert_failure, to_script_error
from .nodes import Module

def parse_syntax(source: str, filename: str = "<string>") -> Module:
    """Parse TVMScript text into a syntax tree; any mistake raises ``ScriptError``."""
    if not isinstance(source, str):
        raise ScriptError(f"expected TVMScript text (str), got {type(source).__name__}",
                          filename=filename)
    text = source[1:] if source.startswith("\ufeff") else source
    if not text.endswith("\n"):
        text += "\n"   # the grammar ends every statement with a newline
    try:
        _check_first_line(text)
        parser = thread_parser()
    except SyntaxFailure as fail:
        raise to_script_error(fail, text, filename) from None
    except Exception as exc:
        raise ScriptError(f"cannot build the TVMScript parser: {exc}", filename=filename) from exc

    builder = cast(SyntaxBuilder, parser.options.transformer)
    state = ScanState(text)
    builder._reset()
    thread_state.state = state
    # Parsing allocates many small objects that all stay alive: pause the cyclic GC.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return cast(Module, parser.parse(text))
    except Exception as exc:   # includes RecursionError
        failure: BaseException = exc
    finally:
        thread_state.state = None
        builder._reset()
        if gc_was_enabled:
            gc.enable()
    error = convert_failure(failure, state, filename)
    raise error from error.__cause__   # keep Lark's traceback only for internal errors


def _check_first_line(text: str) -> None:
    """Reject an indented first line (the post-lexer only sees indentation after a newline)."""
    first = text[:text.find("\n")]
    stripped = first.lstrip(" \t\f")
    if stripped != first and stripped and not stripped.startswith("#"):
        raise SyntaxFailure("unexpected indentation", 1, len(first) - len(stripped) + 1)
