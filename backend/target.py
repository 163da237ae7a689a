"""Compilation targets: ``Target("llvm")`` is the host CPU; ``"llvm -mcpu=... -mattr=+avx2,+fma"``
is parsed like TVM's target strings."""
from __future__ import annotations

import functools
import shlex
import threading
from typing import Any

from ..ir.target import host_cpu as detect_host_cpu

__all__ = ["Target", "TargetError"]


class TargetError(ValueError):
    """A target string that cannot be parsed or a target LLVM does not know."""


@functools.lru_cache(maxsize=None)
def llvm_binding() -> Any:
    """llvmlite's binding layer with the native target registered (``llvm.initialize()`` raises in 0.50)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    return llvm


@functools.lru_cache(maxsize=None)
def host_cpu() -> tuple[str, str, str]:
    """(triple, cpu name, feature string) of the machine we run on (detected once, in ``ir/target.py``)."""
    llvm_binding()
    host = detect_host_cpu()
    return host.triple, host.name, host.feature_string


# Options a target string may carry: name -> kind ("str", "list", "int", "bool").
_OPTIONS = {"mtriple": "str", "mcpu": "str", "mattr": "list", "opt-level": "int", "fast-math": "bool"}


def _merge_features(base: str, extra: tuple[str, ...]) -> str:
    """``base`` features with ``extra`` (``+avx2``/``-fma``) applied on top, later ones winning."""
    order: dict[str, str] = {}
    for item in [f for f in base.split(",") if f] + list(extra):
        sign, name = (item[0], item[1:]) if item[0] in "+-" else ("+", item)
        order[name] = sign
    return ",".join(sign + name for name, sign in order.items())


class Target:
    """A code-generation target (only the ``llvm`` kind): triple, CPU, features, opt level."""

    _stack = threading.local()

    def __init__(self, target: "str | Target" = "llvm") -> None:
        """Parse a target string (``llvm`` plus ``-option=value`` words) or copy a Target."""
        if isinstance(target, Target):
            self.kind, self.options = target.kind, dict(target.options)
            return
        if not isinstance(target, str) or not target.strip():
            raise TargetError(f"a target is a string such as \"llvm -mcpu=znver3\", got {target!r}")
        words = shlex.split(target)
        self.kind = words[0]
        if self.kind != "llvm":
            raise TargetError(f"unknown target kind {self.kind!r}: tvmlite compiles for \"llvm\" (the CPU) only")
        self.options: dict[str, Any] = {}
        for word in words[1:]:
            if not word.startswith("-"):
                raise TargetError(f"target option {word!r} must start with '-', e.g. -mcpu=znver3")
            name, eq, value = word.lstrip("-").partition("=")
            kind = _OPTIONS.get(name)
            if kind is None:
                raise TargetError(f"unknown llvm target option -{name} (known: "
                                  f"{', '.join('-' + k for k in _OPTIONS)})")
            if kind == "bool":
                if eq and value.lower() not in ("1", "0", "true", "false"):
                    raise TargetError(f"-{name} takes true or false, got {value!r}")
                self.options[name] = not eq or value.lower() in ("1", "true")
            elif not eq or not value:
                raise TargetError(f"-{name} needs a value: -{name}=...")
            elif kind == "int":
                try:
                    self.options[name] = int(value)
                except ValueError:
                    raise TargetError(f"-{name} takes an integer, got {value!r}") from None
            elif kind == "list":
                self.options[name] = tuple(v.strip() for v in value.split(",") if v.strip())
            else:
                self.options[name] = value
        level = self.options.get("opt-level", 3)
        if not 0 <= level <= 3:
            raise TargetError(f"-opt-level must be 0..3, got {level}")

    # ---- the resolved machine
    @property
    def triple(self) -> str:
        """The target triple (the process's unless -mtriple is given)."""
        return self.options.get("mtriple") or host_cpu()[0]

    @property
    def is_host(self) -> bool:
        """True when code for this target runs in this process (same triple)."""
        return self.triple == host_cpu()[0]

    @property
    def mcpu(self) -> str:
        """The CPU name: the host's for plain ``llvm`` and ``-mcpu=native``."""
        cpu = self.options.get("mcpu", "native")
        if cpu == "native":
            return host_cpu()[1] if self.is_host else "generic"
        return cpu

    @property
    def features(self) -> str:
        """The feature string: the host's (for a host CPU) with ``-mattr`` applied on top."""
        native = self.options.get("mcpu", "native") == "native" and self.is_host
        return _merge_features(host_cpu()[2] if native else "", self.options.get("mattr", ()))

    @property
    def opt_level(self) -> int:
        """LLVM optimisation level (``-opt-level``, default 3)."""
        return self.options.get("opt-level", 3)

    @property
    def fast_math(self) -> bool:
        """Whether float ops carry the ``fast`` flags (``-fast-math``); otherwise only ``contract``."""
        return bool(self.options.get("fast-math", False))

    def create_target_machine(self, *, jit: bool = False, pic: bool = False) -> Any:
        """An llvmlite TargetMachine for this target (JIT code model for the engine, PIC for objects)."""
        llvm = llvm_binding()
        if not self.is_host:
            llvm.initialize_all_targets()  # cross compilation: the other backends, on demand
            llvm.initialize_all_asmprinters()
        try:
            tgt = llvm.Target.from_triple(self.triple)
        except RuntimeError as err:
            raise TargetError(f"LLVM cannot generate code for {self.triple!r}: {err}") from None
        return tgt.create_target_machine(cpu=self.mcpu, features=self.features, opt=self.opt_level,
                                         reloc="pic" if pic else "default",
                                         codemodel="jitdefault" if jit else "default", jit=jit)

    # ---- text, equality, context
    def __str__(self) -> str:
        """The canonical target string."""
        parts = [self.kind]
        for name, value in self.options.items():
            if isinstance(value, bool):
                parts.append(f"-{name}" if value else f"-{name}=false")
            elif isinstance(value, tuple):
                parts.append(f"-{name}={','.join(value)}")
            else:
                parts.append(f"-{name}={value}")
        return " ".join(parts)

    def __repr__(self) -> str:
        """``Target('llvm ...')``."""
        return f"Target({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        """Equal when the canonical strings are."""
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self) -> int:
        """Hash of the canonical string."""
        return hash(str(self))

    def describe(self) -> str:
        """The resolved machine: triple, CPU and the vector features that matter most."""
        feats = [f[1:] for f in self.features.split(",") if f.startswith("+")]
        vec = [f for f in ("sse4.2", "avx", "avx2", "fma", "avx512f", "neon", "sve") if f in feats]
        return f"{self.triple}, cpu={self.mcpu}, features: {' '.join(vec) or 'baseline'}"

    def __enter__(self) -> "Target":
        """Make this the current target of the thread."""
        stack = self._stack.__dict__.setdefault("items", [])
        stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        """Restore the previous current target."""
        self._stack.items.pop()

    @staticmethod
    def current(allow_none: bool = False) -> "Target | None":
        """The innermost ``with Target(...)`` of this thread; else ``Target("llvm")`` (or None)."""
        stack = getattr(Target._stack, "items", None)
        if stack:
            return stack[-1]
        return None if allow_none else Target("llvm")

    @staticmethod
    def of(target: "str | Target | None") -> "Target":
        """A Target from a string, a Target, or None (the current one)."""
        if target is None:
            return Target.current()  # type: ignore[return-value]
        return target if isinstance(target, Target) else Target(target)
