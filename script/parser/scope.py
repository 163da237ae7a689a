"""Nested name frames for the script parser: definition, lookup and "did you mean" suggestions."""
from __future__ import annotations

import difflib
from typing import Any, Iterable, Iterator

__all__ = ["Scope", "MISSING", "suggest"]


class _Missing:
    """The result of a failed lookup (``None`` is a legitimate script value)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def suggest(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or an empty string."""
    close = difflib.get_close_matches(name, list(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Scope:
    """A stack of frames (dicts name -> value); the innermost frame wins.

    Frames carry a ``kind`` (``"function"``, ``"dataflow"``, ``"block"``, ...) so that the parser can
    find, say, the enclosing block, and names that left their frame can be explained later.
    """

    __slots__ = ("frames", "kinds", "gone")

    def __init__(self, base: dict[str, Any] | None = None) -> None:
        # ``base`` (module-level names) is shared by every function of a module and never
        # written: parsers push their own frame before defining anything.
        self.frames: list[dict[str, Any]] = [base if base is not None else {}]
        self.kinds: list[str] = ["global"]
        # name -> why it is no longer visible (e.g. a dataflow var after its block ended).
        self.gone: dict[str, str] = {}

    def push(self, kind: str) -> dict[str, Any]:
        """Open a frame of ``kind`` and return it."""
        frame: dict[str, Any] = {}
        self.frames.append(frame)
        self.kinds.append(kind)
        return frame

    def pop(self) -> dict[str, Any]:
        """Close the innermost frame and return it."""
        self.kinds.pop()
        return self.frames.pop()

    def define(self, name: str, value: Any) -> None:
        """Bind ``name`` in the innermost frame."""
        self.frames[-1][name] = value
        if self.gone:
            self.gone.pop(name, None)

    def lookup(self, name: str) -> Any:
        """The innermost value of ``name``, or ``MISSING``."""
        frames = self.frames
        for i in range(len(frames) - 1, -1, -1):
            value = frames[i].get(name, MISSING)
            if value is not MISSING:
                return value
        return MISSING

    def innermost(self, kind: str) -> int:
        """The index of the innermost frame of ``kind`` (-1 when there is none)."""
        kinds = self.kinds
        for i in range(len(kinds) - 1, -1, -1):
            if kinds[i] == kind:
                return i
        return -1

    def names(self) -> Iterator[str]:
        """Every visible name (for suggestions)."""
        for frame in self.frames:
            yield from frame

    def suggest(self, name: str, extra: Iterable[str] = ()) -> str:
        """A "did you mean" hint for an undefined ``name``."""
        return suggest(name, [*self.names(), *extra])
