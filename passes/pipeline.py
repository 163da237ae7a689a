"""Textual pipelines: ``"A,B{opt=2,flag=true},C"`` <-> ``Sequential``.

A pipeline is a comma-separated list of registered pass names, each optionally followed by
``{key=value,...}``; the keys are the parameters of the pass's constructor (factory) and the
values are ints, floats, ``true``/``false`` or strings (bare words, or double-quoted with
``\\"`` and ``\\\\`` escapes).  ``str(parse_pipeline(s)) == s`` for every canonical spec:
no spaces, strings quoted only when they would not read back as a bare word.
"""
from __future__ import annotations

import re
from typing import Any

from .infra import (PipelineError, Sequential, format_option, get_pass, list_passes, pass_options,
                    unknown_pass_message)

__all__ = ["parse_pipeline", "PipelineError", "format_option"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+|inf|nan)\Z")


class _Scanner:
    """A cursor over the spec that reports errors with a caret under the position."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.pos = 0

    def error(self, message: str, start: int | None = None, end: int | None = None) -> PipelineError:
        start = self.pos if start is None else start
        end = max(start + 1, end if end is not None else start + 1)
        caret = " " * start + "^" * (min(end, len(self.spec) + 1) - start)
        return PipelineError(f"{message} (at position {start} of the pipeline)\n  {self.spec}\n  {caret}")

    def skip_space(self) -> None:
        while self.pos < len(self.spec) and self.spec[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.spec[self.pos] if self.pos < len(self.spec) else ""

    def expect(self, char: str, what: str) -> None:
        if self.peek() != char:
            found = repr(self.spec[self.pos]) if self.pos < len(self.spec) else "the end"
            raise self.error(f"expected {what}, found {found}")
        self.pos += 1

    def name(self, what: str) -> tuple[str, int]:
        self.skip_space()
        m = _NAME.match(self.spec, self.pos)
        if m is None:
            found = repr(self.spec[self.pos]) if self.pos < len(self.spec) else "the end"
            raise self.error(f"expected {what}, found {found}")
        self.pos = m.end()
        return m.group(), m.start()

    def value(self) -> tuple[Any, int]:
        self.skip_space()
        start = self.pos
        if self.peek() == '"':
            out = []
            self.pos += 1
            while self.pos < len(self.spec) and self.spec[self.pos] != '"':
                if self.spec[self.pos] == "\\" and self.pos + 1 < len(self.spec):
                    self.pos += 1
                out.append(self.spec[self.pos])
                self.pos += 1
            if self.pos >= len(self.spec):
                raise self.error("unterminated string", start)
            self.pos += 1
            return "".join(out), start
        while self.pos < len(self.spec) and self.spec[self.pos] not in ",}":
            self.pos += 1
        word = self.spec[start:self.pos].strip()
        if not word:
            raise self.error("expected an option value", start)
        return _convert(word), start


def _convert(word: str) -> Any:
    """A bare option value: bool, int, float, else the word itself."""
    if word in ("true", "false"):
        return word == "true"
    if _INT.match(word):
        return int(word)
    if _FLOAT.match(word):
        return float(word)
    return word


def parse_pipeline(spec: str, name: str = "sequential") -> Sequential:
    """The Sequential of the passes named in ``spec``; PipelineError (with position) when wrong."""
    scan = _Scanner(spec)
    passes = []
    if scan.peek() == "":
        return Sequential([], name=name)
    while True:
        pass_name, start = scan.name("a pass name")
        if pass_name not in list_passes():
            raise scan.error(unknown_pass_message(pass_name), start, start + len(pass_name))
        options: dict[str, Any] = {}
        option_start: dict[str, int] = {}
        if scan.peek() == "{":
            scan.pos += 1
            allowed = pass_options(pass_name)
            while True:
                key, key_start = scan.name(f"an option name of {pass_name}")
                if allowed is not None and key not in allowed:
                    raise scan.error(f"pass {pass_name} has no option {key!r} "
                                     f"(options: {', '.join(allowed) or 'none'})", key_start, key_start + len(key))
                if key in options:
                    raise scan.error(f"option {key!r} of {pass_name} given twice", key_start, key_start + len(key))
                scan.expect("=", f"'=' after the option name {key!r}")
                options[key], option_start[key] = scan.value()
                if scan.peek() == ",":
                    scan.pos += 1
                    continue
                scan.expect("}", "',' or '}' after an option")
                break
        try:
            passes.append(get_pass(pass_name, **options))
        except PipelineError as err:
            at = next((option_start[k] for k in options if f"option {k} " in str(err)), start)
            raise scan.error(str(err), at) from None
        if scan.peek() == "":
            break
        scan.expect(",", "',' between passes")
    return Sequential(passes, name=name)
