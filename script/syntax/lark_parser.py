"""Building the Lark LALR parser of TVMScript (one per thread, its analysis cached on disk)."""
from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import lark
from lark import Lark

from .builder import SyntaxBuilder
from .lexer import TVMScriptIndenter, thread_state

GRAMMAR_PATH = Path(__file__).resolve().parents[2] / "grammar" / "tvmscript.lark"

_build_lock = threading.Lock()


def _cache_file(grammar: str) -> str | None:
    """A per-user cache file for the analysed grammar, keyed by its hash; None if unwritable."""
    key = hashlib.sha256(
        f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()).hexdigest()[:24]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    try:
        user = str(os.getuid())
    except AttributeError:   # not on POSIX
        user = os.environ.get("USERNAME", "user")
    for folder in (os.path.join(base, "tvmlite"),
                   os.path.join(tempfile.gettempdir(), f"tvmlite-{user}")):
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            info = os.stat(folder)
        except OSError:
            continue
        # The cache is a pickle: only trust a folder that is ours and that others cannot write.
        owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if owned and not info.st_mode & 0o022 and os.access(folder, os.W_OK | os.X_OK):
            return os.path.join(folder, f"tvmscript-{key}.lark.cache")
    return None


def new_parser(*, debug: bool = False, cache: bool = True) -> Lark:
    """Build the LALR parser (``debug=True`` logs LALR conflicts to ``lark.logger``)."""
    grammar = GRAMMAR_PATH.read_text(encoding="utf-8")
    options: dict[str, Any] = dict(
        parser="lalr", lexer="contextual", postlex=TVMScriptIndenter(), transformer=SyntaxBuilder(),
        maybe_placeholders=True, propagate_positions=False, debug=debug)
    path = _cache_file(grammar) if cache else None
    if path is not None:
        try:
            return Lark(grammar, cache=path, **options)
        except OSError:
            pass   # unreadable or unwritable cache: build without it
    return Lark(grammar, **options)


def thread_parser() -> Lark:
    """This thread's parser (callbacks and post-lexer keep per-parse state, so one per thread)."""
    parser = getattr(thread_state, "parser", None)
    if parser is None:
        with _build_lock:   # threads starting together share one cache write
            parser = new_parser()
        thread_state.parser = parser
    return parser
