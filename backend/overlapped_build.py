"""``tvmlite.compile``'s TIR stage with LLVM overlapped: the PrimFuncs are lowered a group at a
time and each lowered group's LLVM module is optimised and emitted on a background thread while
Python lowers the next group. llvmlite releases the GIL inside LLVM (its own lock serialises LLVM
calls, so a second LLVM thread would not help), and the Python passes do not call LLVM, so on two
cores the passes and LLVM run side by side instead of one after the other.

The result is the one the sequential path gives: the same lowered PrimFuncs (every pass of the
pipeline works on one PrimFunc at a time), the same machine code per function (no code crosses
functions: each kernel is its own external symbol) and the same kernel cache entries per group.
Whenever the overlap could differ (a pipeline with module-level passes, instruments watching the
passes, another machine) or anything fails, the caller compiles the usual way, which then reports
the failure exactly as before."""
from __future__ import annotations

import queue
import sys
import threading
from typing import Any, Callable

from ..ir import tir
from ..ir.functor import deep_recursion
from ..ir.module import IRModule
from .executable import Executable, machine_code
from .llvm_codegen import LLVMModule, generate, generated_module
from .target import Target, llvm_binding
from .thread_pool import ensure_pool

__all__ = ["OverlappedBuild", "build_overlapped", "MAX_GROUPS"]

MAX_GROUPS = 10  # LLVM modules per compile (each costs ~3 ms of LLVM beyond its functions)
# The last groups: small, so that the two threads draining the queue end together (a group of
# three of ResNet-18's kernels is ~150 ms of LLVM that one thread would do while the other waits).
TAIL = (2, 2, 1, 1)
# While both threads run, the GIL changes hands after this many seconds instead of Python's 5 ms:
# the worker needs it back after each of its ~40 short LLVM calls per module, and waiting 5 ms
# each time would cost more than the overlap gains.
SWITCH_INTERVAL = 1e-4


class OverlappedBuild:
    """LLVM modules added one by one (``add``), their machine code made on a background thread;
    ``finish`` gives the Executable of them all."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.parts: list[list[Any]] = []  # [GeneratedCode, then its LLVMModule; object file or None]
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="tvmlite-llvm", daemon=True)
        self._thread.start()

    def add(self, lowered: IRModule) -> None:
        """Generate the LLVM IR of ``lowered`` (here: Python, no LLVM call, so this thread never
        waits for LLVM's lock) and queue the rest of the work (there)."""
        with deep_recursion():  # codegen walks statements recursively
            gen = generate(lowered, self.target)
        if any(s.uses_parallel for s in gen.signatures.values()):
            ensure_pool()  # the pool's symbol must exist before the worker checks the calls
        part = [gen, None]
        self.parts.append(part)
        self._jobs.put(part)

    def _make(self, part: list[Any], own: dict[str, Any]) -> None:
        """The machine code of one queued part, made with the calling thread's own target machine
        and LLVM context (created on first use), so LLVM's long calls need no lock."""
        if not own:
            own["tm"] = self.target.create_target_machine(jit=True)
            own["context"] = llvm_binding().create_context()
        part[0] = generated_module(part[0])
        part[1], _ = machine_code(part[0], own["tm"], own["context"])

    def _work(self) -> None:
        """The background thread: machine code for each queued part until the end marker."""
        self._drain(wait=True)

    def _help(self) -> None:
        """Make the parts still queued here, beside the background thread, once lowering is done."""
        self._drain(wait=False)

    def _drain(self, wait: bool) -> None:
        """Make the machine code of queued parts with this thread's own LLVM objects: the
        background thread (``wait``) until the end marker; the compiling thread (not ``wait``) the
        parts still queued once lowering is done, beside the background thread, so its core does
        not sit waiting for LLVM. A failure is kept for finish() to report in the compiling thread."""
        own: dict[str, Any] = {}
        try:
            while True:
                try:
                    part = self._jobs.get() if wait else self._jobs.get_nowait()
                except queue.Empty:
                    return
                if part is None:
                    return
                if self._error is not None:
                    continue  # drain what is left; finish() raises
                try:
                    self._make(part, own)
                except BaseException as err:
                    self._error = err
        finally:
            _release(own)

    def _stop(self) -> None:
        self._jobs.put(None)
        self._thread.join()

    def finish(self, lowered: IRModule) -> Executable:
        """Wait for the machine code and JIT it as the Executable of ``lowered``."""
        self._help()
        self._stop()
        if self._error is not None:
            raise self._error
        parts: list[tuple[LLVMModule, bytes]] = [(lm, obj) for lm, obj in self.parts]
        return Executable.from_parts(parts, lowered)

    def abandon(self) -> None:
        """Stop the background thread, discarding its work."""
        self._stop()


def _release(own: dict[str, Any]) -> None:
    """Dispose of a thread's LLVM context (its modules are closed already) deterministically: the
    garbage collector could otherwise free it before a module that a traceback still holds."""
    context = own.pop("context", None)
    if context is not None:
        context.close()


def _per_function(p: Any) -> bool:
    """Whether pipeline ``p`` only runs passes that transform one PrimFunc at a time."""
    from ..passes.infra import Pass, Sequential

    if not isinstance(p, Pass) or p.info.required:
        return False
    if isinstance(p, Sequential):
        return all(_per_function(q) for q in p.passes)
    return p.info.kind == "prim_func"


def _groups(items: list, n_groups: int) -> list[list]:
    """``items`` in order, in at most ``n_groups`` groups: the first of one item (LLVM starts as
    soon as it is lowered), the last ones of ``TAIL``'s sizes, those between of nearly equal size
    (at least 3 items, as few groups as that allows); one group per item when there are few."""
    if len(items) <= max(n_groups - 2, len(TAIL) + 4):
        return [[x] for x in items]
    middle = len(items) - 1 - sum(TAIL)
    size = max(3, -(-middle // (n_groups - 1 - len(TAIL))))
    count = -(-middle // size)
    q, r = divmod(middle, count)
    sizes = [1] + [q + 1] * r + [q] * (count - r) + list(TAIL)
    groups, start = [], 0
    for n in sizes:
        groups.append(items[start:start + n])
        start += n
    return groups


def build_overlapped(prims: IRModule, lower: Callable[[IRModule], IRModule] | None, target: Any,
                     meanwhile: Callable[[], Any] | None = None) -> tuple[IRModule, Executable, Any] | None:
    """(lowered PrimFuncs, their Executable, ``meanwhile()``), lowering and LLVM overlapped; None
    when this compile should run the usual way (see the module doc). ``meanwhile`` (the compile's
    other Python work) runs once every group is queued, while LLVM still works on them."""
    from ..passes.infra import PassContext

    items = list(prims.functions_items())
    if lower is None or len(items) < 2 or not _per_function(lower) or PassContext.current().instruments:
        return None
    if not all(isinstance(f, tir.PrimFunc) for _, f in items):
        return None
    try:
        tgt = Target.of(target)
    except Exception:
        return None
    if not tgt.is_host:
        return None
    _short_switches(True)
    build = OverlappedBuild(tgt)
    try:
        functions: dict = {}
        for group in _groups(items, MAX_GROUPS):
            low = lower(IRModule(dict(group)))
            functions.update(low.functions_items())
            build.add(low)
        lowered = IRModule(functions)
        other = meanwhile() if meanwhile is not None else None  # a failure: the usual way reports it
        return lowered, build.finish(lowered), other
    except Exception:
        build.abandon()
        return None
    except BaseException:  # an interrupt: no thread left waiting
        build.abandon()
        raise
    finally:
        _short_switches(False)


_switch_lock = threading.Lock()
_switch_users = [0, 0.0]  # builds running, the interval before the first


def _short_switches(enter: bool) -> None:
    """Shorten the GIL's switch interval while any build runs (compiles in several threads
    restore the interval found before the first of them)."""
    with _switch_lock:
        if enter:
            if _switch_users[0] == 0:
                _switch_users[1] = sys.getswitchinterval()
                sys.setswitchinterval(min(_switch_users[1], SWITCH_INTERVAL))
            _switch_users[0] += 1
        else:
            _switch_users[0] -= 1
            if _switch_users[0] == 0:
                sys.setswitchinterval(_switch_users[1])
