"""The machine we run on: the one place that asks the host CPU (triple, name, features).

Passes should not know the machine, and the code generator must know it exactly; both read these
facts from here rather than querying LLVM each on its own. ``backend/target.py``'s ``Target("llvm")``
resolves to the host through :func:`host_cpu`; a pass that adapts to the hardware
(``AlterOpLayout``'s vector width) takes an explicit value first (its argument, then a
``PassContext`` config key the caller may fill from its target) and only then the host default
from :func:`host_vector_width`.

Why here and lazily: ``passes/`` cannot import ``backend/`` (layering), and a config filled by the
caller alone would leave a pass run on its own (tests, ``tvmlite opt``) with a guessed default
instead of the machine's. The query runs once, on first use (cached), and imports llvmlite only
then, so ``ir/`` loads without it; without llvmlite (or on a host LLVM cannot describe) the host
is unknown: no features, 4-lane vectors."""
from __future__ import annotations

import dataclasses
import functools

__all__ = ["HostCPU", "host_cpu", "host_vector_width"]


@dataclasses.dataclass(frozen=True)
class HostCPU:
    """The host as LLVM describes it: ``triple`` and ``name`` (empty without llvmlite) and the
    ``features`` flags (``{"avx2": True, ...}``; None when LLVM cannot describe them)."""

    triple: str
    name: str
    features: dict[str, bool] | None

    @property
    def feature_string(self) -> str:
        """The features as LLVM's ``-mattr`` string (``+avx,+avx2,-avx512f,...``, sorted by name);
        RuntimeError when they are unknown (code for an undescribed host would be a guess)."""
        if self.features is None:
            raise RuntimeError("LLVM cannot describe the features of this host CPU")
        return ",".join(("+" if on else "-") + name for name, on in sorted(self.features.items()))


@functools.lru_cache(maxsize=None)
def host_cpu() -> HostCPU:
    """The host CPU, detected once through llvmlite."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        return HostCPU("", "", None)
    try:
        features: dict[str, bool] | None = dict(llvm.get_host_cpu_features())
    except RuntimeError:  # a host LLVM cannot describe
        features = None
    return HostCPU(llvm.get_process_triple(), llvm.get_host_cpu_name(), features)


def host_vector_width() -> int:
    """32-bit lanes of the host's widest vector unit: 16 with AVX-512, 8 with AVX/AVX2, else 4."""
    features = host_cpu().features or {}
    if features.get("avx512f"):
        return 16
    if features.get("avx2") or features.get("avx"):
        return 8
    return 4
