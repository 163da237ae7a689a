"""Syntax highlighting for TVMScript text.

`TVMScriptLexer` is Pygments' Python lexer with rules for the DSL put in
front: the decorators (``@I.ir_module``, ``@R.function``, ``@T.prim_func``),
the ``I.`` / ``R.`` / ``T.`` namespaces and everything reached through them
(``R.call_tir``, ``R.nn.relu``, ``T.axis.remap`` are builtins; ``R.Tensor``,
``T.Buffer``, ``T.int64`` are types), dtype strings such as ``"float32"``,
``cls.<function>`` references, ``metadata[...]`` and the comments the printer
writes (``# from tvm.script import ...``, ``# with T.block("root"):``).

Token types produced for the DSL:

=======================================  ==========================
``@I.ir_module``, ``@T.prim_func``       ``Name.Decorator`` (one token)
``R`` / ``T`` / ``I`` and their members  ``Name.Builtin``
type members (``Tensor``, ``int64``...)  ``Keyword.Type``
``"float32"`` (whole literal)            ``DTYPE_STRING`` (``String.Symbol``)
``cls`` / name after ``cls.``            ``Name.Builtin.Pseudo`` / ``Name.Function``
``metadata`` before ``[``                ``Name.Constant``
``# from tvm.script import ...``         ``Comment.Preproc``
``# with T.block("root"):``              ``Comment.Special``
=======================================  ==========================

The lexer is registered under the Pygments alias ``tvmscript`` by the
project's entry point, so ``pygmentize -l tvmscript file.py`` works after
installation.  It claims no file names: TVMScript files are ``.py`` files.
"""

from __future__ import annotations

import os
import re

from pygments import highlight as _pygments_highlight
from pygments.formatters import HtmlFormatter, TerminalFormatter
from pygments.formatters.terminal import TERMINAL_COLORS
from pygments.lexer import bygroups, default, include, inherit, words
from pygments.lexers.python import PythonLexer
from pygments.style import Style
from pygments.styles.default import DefaultStyle
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Operator,
    String,
    Whitespace,
)

__all__ = [
    "DTYPE_STRING",
    "TVMScriptLexer",
    "TVMScriptStyle",
    "highlight",
    "should_color",
]

#: Token type of a string literal that is exactly a dtype, e.g. ``"float32"``.
#: ``String.Symbol`` is a standard type, so any Pygments style can give it its
#: own colour, and styles that do not still show it as a string.
DTYPE_STRING = String.Symbol

_IDENT = r"[A-Za-z_]\w*"

# A TVM dtype: int8..int64, uint1, float16/32/64, bfloat16, float8/float4
# variants (float8_e4m3fn, e4m3_float8, ...), with an optional vector suffix
# (float32x4, float32xvscalex4), plus bool / handle / void.
_DTYPE = (
    r"(?:"
    r"(?:u?int|bfloat|float)\d+(?:_e\d+m\d+\w*)?"
    r"|e\d+m\d+_float\d+"
    r"|bool|handle|void"
    r")(?:x(?:vscalex)?\d+)?"
)

# Members of I./R./T. that denote types rather than operations.
_TYPE_MEMBERS = (
    "Tensor", "Buffer", "Tuple", "Shape", "Object", "Prim", "Callable",
    "Ptr", "PrimType", "TupleType", "Var", "Any",
)


class TVMScriptLexer(PythonLexer):
    """Pygments lexer for TVMScript (Relax + TensorIR in Python syntax)."""

    name = "TVMScript"
    aliases = ["tvmscript"]
    filenames: list[str] = []
    alias_filenames: list[str] = []
    mimetypes: list[str] = []
    url = "https://tvm.apache.org/docs/"

    tokens = {
        "root": [
            # Printer header lines and the implicit root block marker.
            (r"#[ \t]*from[ \t]+tvm\S*[ \t]+import\b.*$", Comment.Preproc),
            (r"#[ \t]*with[ \t]+T\.block\(\s*[\"']root[\"']\s*\)\s*:.*$",
             Comment.Special),
            inherit,
        ],
        "expr": [
            include("tvmscript"),
            inherit,
        ],
        "tvmscript": [
            # @I.ir_module, @R.function, @T.prim_func(private=True), and any
            # other dotted decorator (@tvm.script.ir_module) as one token.
            (r"@" + _IDENT + r"(?:\." + _IDENT + r")*", Name.Decorator),
            # String literals that are exactly a dtype.
            (r"([\"'])" + _DTYPE + r"\1", DTYPE_STRING),
            # cls.<global function>
            (r"(?<![\w.])(cls)(\.)(" + _IDENT + r")",
             bygroups(Name.Builtin.Pseudo, Operator, Name.Function)),
            # metadata["relax.expr.Constant"][0] (and legacy meta[...][...])
            (r"(?<![\w.])(?:metadata|meta)(?=\s*\[)", Name.Constant),
            # The DSL namespaces; members are lexed in "dsl-member".
            (r"(?<![\w.])[IRT](?=\.[A-Za-z_])", Name.Builtin, "dsl-member"),
        ],
        "dsl-member": [
            (r"\.", Operator),
            (words(_TYPE_MEMBERS, suffix=r"\b(?!\.)"), Keyword.Type, "#pop"),
            (_DTYPE + r"\b(?!\.)", Keyword.Type, "#pop"),
            # Intermediate module (R.nn., T.axis.): stay for the next member.
            (_IDENT + r"(?=\.[A-Za-z_])", Name.Builtin),
            (_IDENT, Name.Builtin, "#pop"),
            default("#pop"),
        ],
    }

    def analyse_text(text):  # noqa: N805  (pygments makes this static)
        if re.search(r"^\s*@(?:I\.ir_module|R\.function|T\.prim_func)\b",
                     text[:10000], re.M):
            return 0.9
        return 0.0


class TVMScriptStyle(Style):
    """Pygments' default style with the DSL token types kept apart."""

    name = "tvmscript"
    background_color = DefaultStyle.background_color
    highlight_color = DefaultStyle.highlight_color
    styles = dict(DefaultStyle.styles)
    styles.update({
        Name.Decorator: "#AA22FF",
        Name.Builtin: "#008000",
        Keyword.Type: "bold #0066BB",
        DTYPE_STRING: "#B8860B",
        Name.Constant: "#880000",
        Comment.Special: "italic #3D7B7B",
        Comment.Preproc: "italic #9C6500",
    })


# ANSI colours for TerminalFormatter: (light background, dark background).
# Named ANSI colours follow the terminal's own theme, which keeps the output
# readable on both light and dark terminals.
_TERMINAL_SCHEME = dict(TERMINAL_COLORS)
_TERMINAL_SCHEME.update({
    Whitespace: ("", ""),  # no empty colour sequences around newlines
    Name.Decorator: ("magenta", "brightmagenta"),
    Name.Function: ("**", "**"),
    Name.Builtin: ("cyan", "brightcyan"),
    Name.Builtin.Pseudo: ("cyan", "brightcyan"),
    Keyword.Type: ("green", "brightgreen"),
    DTYPE_STRING: ("red", "brightred"),
    Name.Constant: ("_red_", "_brightred_"),
    Comment.Preproc: ("gray", "brightblack"),
    Comment.Special: ("gray", "brightblack"),
})


def _terminal_background() -> str:
    """'light' or 'dark', from COLORFGBG ("fg;bg") when the terminal sets it."""
    colorfgbg = os.environ.get("COLORFGBG", "")
    try:
        bg = int(colorfgbg.rsplit(";", 1)[-1])
    except ValueError:
        return "dark"
    return "light" if bg in (7, 15) else "dark"


def highlight(text: str, *, html: bool = False) -> str:
    """Highlight TVMScript `text` as ANSI escapes, or as HTML if `html`.

    The HTML form is a self-contained ``<div class="highlight">`` with inline
    styles (no stylesheet needed), suitable for ``_repr_html_`` in notebooks.
    Leading/trailing blank lines are kept; no newline is added at the end.
    """
    lexer = TVMScriptLexer(stripnl=False)
    if html:
        formatter = HtmlFormatter(style=TVMScriptStyle, noclasses=True)
    else:
        formatter = TerminalFormatter(
            bg=_terminal_background(), colorscheme=_TERMINAL_SCHEME)
    out = _pygments_highlight(text, lexer, formatter)
    if not html and not text.endswith("\n") and out.endswith("\n"):
        out = out[:-1]
    return out


def should_color(stream) -> bool:
    """True if `stream` is a terminal and the user has not set NO_COLOR."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    if isatty is None:
        return False
    try:
        return bool(isatty())
    except (ValueError, OSError):  # closed or detached stream
        return False
