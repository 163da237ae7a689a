"""TVMScript text: parsing (``from_source``, ``parse_file``, the ``I``/``R``/``T`` decorators)
and printing (``script``, ``show``)."""
from __future__ import annotations

import sys
from typing import Any, TextIO

from ..ir.node import Node
from . import ir, relax, tir, tirx
from .errors import ScriptError
from .parser import from_source
from .source_file import parse_file
from .printer import script

__all__ = ["from_source", "parse_file", "script", "show", "ScriptError", "ir", "relax", "tir", "tirx"]


def _highlight_html(text: str) -> str:
    """``text`` highlighted as HTML (Pygments loads on first use)."""
    from .highlight import highlight

    return highlight(text, html=True)


def show(obj: Any, *, file: TextIO | None = None, color: bool | None = None, **options: Any) -> None:
    """Print ``obj`` as TVMScript: highlighted on a terminal, HTML in a notebook, plain when piped."""
    from .highlight import highlight, should_color

    text = script(obj, **options)
    if file is None and color is None and _in_notebook():
        from IPython.display import HTML, display  # type: ignore[import-not-found]

        display(HTML(highlight(text, html=True)))
        return
    out = file or sys.stdout
    use_color = should_color(out) if color is None else color
    text = text if text.endswith("\n") else text + "\n"
    out.write(highlight(text) if use_color else text)


# The IR prints through these hooks (it does not import this layer).
Node._script_hook = script
Node._show_hook = show
Node._html_hook = _highlight_html


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"
