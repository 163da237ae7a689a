"""An on-disk cache of compiled kernels: the machine code LLVM made of a module's IR, so compiling
the same model again skips LLVM's optimiser and code generator (most of a compile's time).

An entry is keyed by a hash of everything that decides the machine code: the LLVM IR text, the
target (triple, CPU, features, opt level), LLVM's and llvmlite's versions and the optimisation
settings (``optimization_settings``). It holds the object file and the C functions the code calls,
so a hit is checked against this process as a fresh compile is.

The cache lives in ``$TVMLITE_CACHE_DIR`` (default ``~/.cache/tvmlite``, or under
``$XDG_CACHE_HOME``), in ``kernels/``; ``TVMLITE_CACHE_DIR=off`` turns it off. It is best effort:
a directory that cannot be written only means no caching. The oldest entries go when it holds more
than ``MAX_ENTRIES``."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "cache_key", "load", "store", "MAX_ENTRIES", "CACHE_FORMAT"]

CACHE_FORMAT = 1  # bump when what an entry holds, or how code is optimised, changes
MAX_ENTRIES = 4000
_PRUNE_EVERY = 64  # stores between two checks of the entry count
_stores = 0


def cache_dir() -> Path | None:
    """The kernel cache's directory, or None when ``TVMLITE_CACHE_DIR=off``."""
    root = os.environ.get("TVMLITE_CACHE_DIR")
    if root is not None and root.strip().lower() in ("off", "0", "none", ""):
        return None
    if root is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tvmlite")
    return Path(root) / "kernels"


def cache_key(llvm_ir: str, target: Any, settings: dict[str, Any]) -> str:
    """The hex digest naming the machine code of ``llvm_ir`` for ``target`` under ``settings``."""
    import llvmlite
    import llvmlite.binding as llvm

    facts = {"format": CACHE_FORMAT, "llvmlite": llvmlite.__version__, "llvm": list(llvm.llvm_version_info),
             "triple": target.triple, "cpu": target.mcpu, "features": target.features,
             "opt_level": target.opt_level, "settings": settings}
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True).encode())
    digest.update(llvm_ir.encode())
    return digest.hexdigest()


def load(key: str) -> tuple[bytes, list[str]] | None:
    """(object file, C functions it calls) stored under ``key``, or None."""
    where = cache_dir()
    if where is None:
        return None
    try:
        obj = (where / f"{key}.o").read_bytes()
        calls = json.loads((where / f"{key}.json").read_text())["calls"]
    except (OSError, ValueError, KeyError):
        return None
    return obj, list(calls)


def store(key: str, obj: bytes, calls: list[str]) -> None:
    """Keep ``obj`` (and the C functions it calls) under ``key``; silently nothing when the
    directory cannot be written."""
    global _stores
    where = cache_dir()
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        # The object first, its description last: an entry counts only once both are whole.
        for name, data in ((f"{key}.o", obj), (f"{key}.json", json.dumps({"calls": calls}).encode())):
            fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, where / name)
    except OSError:
        return
    _stores += 1
    if (_stores - 1) % _PRUNE_EVERY == 0:  # the first store of a process checks too
        _prune(where)


def _prune(where: Path) -> None:
    """Remove the least recently written entries beyond ``MAX_ENTRIES``."""
    try:
        entries = sorted(where.glob("*.json"), key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for old in entries[:max(0, len(entries) - MAX_ENTRIES)]:
        for path in (old, old.with_suffix(".o")):
            try:
                path.unlink()
            except OSError:
                pass
