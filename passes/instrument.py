"""Pass instruments: hooks called around every pass run (TVM's ``tvm.instrument``), and the
built-in ones for debugging a pipeline: printing, diffs, dumps to files, timing, verification.

Hooks (all optional): ``enter_pass_ctx()``, ``exit_pass_ctx()``, ``should_run(mod, info)``
(False skips the pass), ``run_before_pass(mod, info)``, ``run_after_pass(mod, info)`` and
``run_after_failure(mod, info, error)`` (``mod`` is the module the failing pass was given).
Instruments see every pass, a ``Sequential`` included (``info.kind == "sequential"``); the
built-in printing instruments skip those containers, whose children show everything.
"""
from __future__ import annotations

import difflib
import os
import re
import sys
import time
from typing import Any, Sequence, TextIO

from ..ir.module import IRModule
from ..ir.well_formed import well_formed_errors
from .infra import IllFormedIRError, PassContext, PassInfo, render_statistics

__all__ = ["PassInstrument", "pass_instrument", "PrintBeforeAll", "PrintAfterAll", "PrintAfterChange",
           "DumpIR", "PassTimingInstrument", "VerifyEach"]


class PassInstrument:
    """Base class of instruments: every hook does nothing by default."""

    # True for an instrument that checks well-formedness after each pass itself, so Sequential
    # need not (read by ``infra``, which cannot import this module: it imports ``infra``).
    verifies_each_pass = False

    @property
    def name(self) -> str:
        """The instrument's class name."""
        return type(self).__name__

    def enter_pass_ctx(self) -> None:
        """Called when a PassContext holding this instrument is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when that PassContext is exited."""

    def should_run(self, mod: IRModule, info: PassInfo) -> bool:
        """Return False to skip the pass (no other hook is called for it)."""
        return True

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Called before a pass runs."""

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Called after a pass succeeded, with its result."""

    def run_after_failure(self, mod: IRModule, info: PassInfo, error: BaseException) -> None:
        """Called when a pass failed, with the module it was given and the exception."""


def pass_instrument(pi_cls: type | None = None) -> Any:
    """Turn a class with some of the hook methods into a PassInstrument subclass (TVM's decorator)."""

    def create(cls: type) -> type:
        if not isinstance(cls, type):
            raise TypeError(f"pass_instrument decorates a class, not {type(cls).__name__}")
        if issubclass(cls, PassInstrument):
            return cls
        return type(cls.__name__, (cls, PassInstrument),
                    {"__doc__": cls.__doc__, "__module__": cls.__module__, "__qualname__": cls.__qualname__})

    return create(pi_cls) if pi_cls is not None else create


def _text(mod: IRModule) -> str:
    text = mod.script()
    return text if text.endswith("\n") else text + "\n"


class _Printing(PassInstrument):
    """Shared by the printing instruments: where the text goes."""

    def __init__(self, file: TextIO | None = None) -> None:
        self.file = file

    def write(self, text: str) -> None:
        """Write to ``file`` (sys.stdout at the time of writing when None)."""
        (self.file or sys.stdout).write(text)


class PrintBeforeAll(_Printing):
    """Print the module before every pass, under a ``# ---- IR before <pass> ----`` line."""

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        if info.kind != "sequential":
            self.write(f"# ---- IR before {info.name} ----\n{_text(mod)}\n")


class PrintAfterAll(_Printing):
    """Print the module after every pass, under a ``# ---- IR after <pass> ----`` line."""

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        if info.kind != "sequential":
            self.write(f"# ---- IR after {info.name} ----\n{_text(mod)}\n")


class PrintAfterChange(_Printing):
    """Print a unified diff of the module text for each pass that changed it (nothing otherwise)."""

    def __init__(self, file: TextIO | None = None, context: int = 3) -> None:
        super().__init__(file)
        self.context = context
        self._before: list[str] = []

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._before.append(_text(mod) if info.kind != "sequential" else "")

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        before = self._before.pop()
        if info.kind == "sequential":
            return
        after = _text(mod)
        if after != before:
            self.write("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                    f"before {info.name}", f"after {info.name}",
                                                    n=self.context)))

    def run_after_failure(self, mod: IRModule, info: PassInfo, error: BaseException) -> None:
        self._before.pop()


def _file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class DumpIR(PassInstrument):
    """Write the module text to numbered files in ``dump_dir``: ``000_input.py`` (the module
    the outermost pass was given), then ``001_<Pass>.py``, ``002_...`` after each pass.

    Consecutive files diff cleanly (they hold only the module text).  ``refresh`` deletes
    earlier numbered dumps when the PassContext is entered; ``show_meta`` prints constants'
    data so that every file parses back bit for bit.
    """

    def __init__(self, dump_dir: str, refresh: bool = False, show_meta: bool = False) -> None:
        self.dump_dir = str(dump_dir)
        self.refresh = refresh
        self.show_meta = show_meta
        self.counter = 0
        self.files: list[str] = []
        self._depth = 0

    def enter_pass_ctx(self) -> None:
        if self.refresh and os.path.isdir(self.dump_dir):
            for name in os.listdir(self.dump_dir):
                if re.fullmatch(r"\d{3,}_.*\.py", name):
                    os.remove(os.path.join(self.dump_dir, name))
            self.counter = 0
            self.files = []

    def dump(self, mod: IRModule, label: str) -> str:
        """Write one numbered file; returns its path."""
        os.makedirs(self.dump_dir, exist_ok=True)
        path = os.path.join(self.dump_dir, f"{self.counter:03d}_{_file_stem(label)}.py")
        self.counter += 1
        text = mod.script(show_meta=self.show_meta)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        self.files.append(path)
        return path

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        if self._depth == 0:
            self.dump(mod, "input")
        self._depth += 1

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._depth -= 1
        if info.kind != "sequential":
            self.dump(mod, info.name)

    def run_after_failure(self, mod: IRModule, info: PassInfo, error: BaseException) -> None:
        self._depth -= 1


class _Timing:
    """One timed pass run and the runs nested in it."""

    __slots__ = ("name", "start", "seconds", "children", "failed")

    def __init__(self, name: str) -> None:
        self.name = name
        self.start = time.perf_counter()
        self.seconds = 0.0
        self.children: list[_Timing] = []
        self.failed = False


class PassTimingInstrument(PassInstrument):
    """Wall-clock time of every pass run, nested for Sequential; ``render()`` gives the table
    (followed by the statistics counters recorded in the PassContext, if any).

    A pass's time includes its verification and the hooks of instruments listed after this
    one; a ``(rest)`` row under a Sequential holds what its passes do not account for.
    """

    def __init__(self) -> None:
        self.roots: list[_Timing] = []
        self._stack: list[_Timing] = []
        self._ctx: PassContext | None = None

    def enter_pass_ctx(self) -> None:
        self.roots, self._stack = [], []
        self._ctx = PassContext.current()

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        entry = _Timing(info.name)
        (self._stack[-1].children if self._stack else self.roots).append(entry)
        self._stack.append(entry)

    def _close(self, failed: bool) -> None:
        entry = self._stack.pop()
        entry.seconds = time.perf_counter() - entry.start
        entry.failed = failed

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._close(False)

    def run_after_failure(self, mod: IRModule, info: PassInfo, error: BaseException) -> None:
        self._close(True)

    def render(self) -> str:
        """The timing table: one row per pass run (children indented), share of the total time."""
        rows: list[tuple[str, _Timing]] = []

        def walk(entries: Sequence[_Timing], depth: int) -> None:
            for e in entries:
                rows.append(("  " * depth + e.name + (" (failed)" if e.failed else ""), e))
                walk(e.children, depth + 1)
                if e.children:
                    # Time of the container not spent in its passes: verification of its input, hooks.
                    rest = _Timing("(rest)")
                    rest.seconds = max(0.0, e.seconds - sum(c.seconds for c in e.children))
                    rows.append(("  " * (depth + 1) + rest.name, rest))

        walk(self.roots, 0)
        total = sum(e.seconds for e in self.roots)
        width = max([len("pass"), len("total")] + [len(label) for label, _ in rows])
        lines = [f"{'pass':<{width}}  {'time (ms)':>10}  {'share':>6}"]
        for label, e in rows:
            share = 100.0 * e.seconds / total if total > 0 else 0.0
            lines.append(f"{label:<{width}}  {e.seconds * 1e3:>10.3f}  {share:>5.1f}%")
        lines.append(f"{'total':<{width}}  {total * 1e3:>10.3f}  {100.0 if rows else 0.0:>5.1f}%")
        if self._ctx is not None and any(self._ctx.stats.values()):
            lines.append(render_statistics(self._ctx.stats))
        return "\n".join(lines)


class VerifyEach(PassInstrument):
    """Check well-formedness (``tvmlite.ir.well_formed.well_formed_errors``) after every pass.

    A ``Sequential`` does this when config ``"tvmlite.verify_each"`` is True; add this
    instrument to verify passes run on their own too.  A failure becomes a PassError naming
    the pass that broke the IR and listing the problems.
    """

    verifies_each_pass = True

    def __init__(self, check_struct_info: bool = True) -> None:
        self.check_struct_info = check_struct_info

    def check(self, mod: IRModule, info: PassInfo) -> None:
        """Raise IllFormedIRError when ``mod`` (the result of pass ``info``) is not well formed."""
        problems = well_formed_errors(mod, check_struct_info=self.check_struct_info)
        if problems:
            raise IllFormedIRError(info.name, problems, mod)

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        if info.kind != "sequential":  # its passes were checked one by one
            self.check(mod, info)
