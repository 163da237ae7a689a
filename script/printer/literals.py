"""Literal spelling shared by both dialects: numbers, strings, booleans and dtypes, written the
way TVM's Python doc printer writes them."""
from __future__ import annotations

import math
import re

__all__ = ["format_float", "format_int", "format_bool", "quote", "escape", "dtype_literal"]

# Characters that never need escaping (printable ASCII except backslash and double quote).
_PLAIN = re.compile(r'[ !#-\[\]-~]*')
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\r": "\\r", "\n": "\\n"}


def format_float(value: float) -> str:
    """A double as TVM prints it: ``%.17g``, fixed ``%.1f`` when integral, quoted inf/nan."""
    v = float(value)
    if math.isnan(v):
        # C's printf writes the sign of a NaN; Python's formatting does not.
        return '"-nan"' if math.copysign(1.0, v) < 0 else '"nan"'
    if math.isinf(v):
        return '"-inf"' if v < 0 else '"inf"'
    if v == math.floor(v):
        # TVM switches the stream to fixed notation with one decimal for integral values.
        return "%.1f" % v
    return "%.17g" % v


def format_int(value: int) -> str:
    """An integer literal."""
    return str(int(value))


def format_bool(value: object) -> str:
    """``True`` or ``False``."""
    return "True" if value else "False"


def escape(text: str) -> str:
    """C-style escaping of a string body (TVM's ``StrEscape``); printable non-ASCII is kept."""
    if _PLAIN.fullmatch(text):
        return text
    out = []
    for ch in text:
        rep = _ESCAPES.get(ch)
        if rep is not None:
            out.append(rep)
        elif " " <= ch <= "~" or (ch > "\x7f" and ch.isprintable()):
            out.append(ch)
        else:
            # Control characters as \xHH bytes (uppercase hex, as TVM); kept readable for
            # non-printable non-ASCII characters through their UTF-8 bytes.
            out.extend("\\x%02X" % b for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def quote(text: str) -> str:
    """A double-quoted, escaped string literal."""
    return '"' + escape(text) + '"'


def dtype_literal(dtype: object) -> str:
    """A dtype as a quoted string (``"float32"``)."""
    return '"' + escape(str(dtype)) + '"'
