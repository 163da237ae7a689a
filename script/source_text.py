"""The bytes of a script file as text: decoded as Python decodes a source file, with decoding
errors located (file, line, column, the byte that does not decode)."""
from __future__ import annotations

import codecs
import io
import os
import tokenize

from .errors import ScriptError

__all__ = ["decode_source", "read_source"]


def decode_source(data: bytes, filename: str) -> str:
    """The text of a script file's bytes, decoded as Python decodes a source file (UTF-8 unless
    a BOM or a ``# -*- coding: ... -*-`` line says otherwise); a ScriptError locates bad bytes."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:  # an unknown coding cookie, or a BOM that contradicts it
        raise ScriptError(f"cannot decode the file: {err}", filename=filename, line=1) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        raise _decode_error(data, encoding, err, filename) from None
    if text.startswith("\ufeff"):  # utf-8-sig leaves no BOM; other codecs might
        text = text[1:]
    return text


def _decode_error(data: bytes, encoding: str, err: UnicodeDecodeError, filename: str) -> ScriptError:
    """A ScriptError at the first byte that does not decode: its offset, line and column."""
    start = err.start
    prefix = data[:start].decode(encoding, errors="replace")
    if encoding == "utf-8-sig" and prefix.startswith("\ufeff"):
        prefix = prefix[1:]
    line = prefix.count("\n") + 1
    col = len(prefix) - (prefix.rfind("\n") + 1) + 1
    shown = data.decode(encoding, errors="replace")
    if shown.startswith("\ufeff"):
        shown = shown[1:]
    name = codecs.lookup(encoding).name
    bad = data[start:err.end]
    hint = "save it as UTF-8, or declare its encoding in a '# -*- coding: NAME -*-' first line" \
        if name == "utf-8" else f"the file declares {name}"
    return ScriptError(f"the file is not valid {name} text: byte{'s' if len(bad) > 1 else ''} "
                       f"{' '.join(f'0x{b:02x}' for b in bad)} at offset {start} cannot be decoded "
                       f"({err.reason}; {hint})",
                       source=shown, filename=filename, line=line, col=col, end_col=col + 1)


def read_source(path: str | os.PathLike) -> str:
    """The text of a script file (see ``decode_source``); OSError if it cannot be read."""
    with open(path, "rb") as f:
        data = f.read()
    return decode_source(data, os.fspath(path))
