"""LLVM's two long calls (running the optimiser, emitting an object file) without llvmlite's global
lock, so two threads can optimise two modules at once.

llvmlite serialises every C call through one lock, but LLVM itself only needs the objects one call
touches to be used by one thread at a time: a module parsed into an LLVM context of its own, with a
pass builder and target machine of its own, shares nothing mutable with another thread's (LLVM's
parallel code generation relies on exactly this). Only callers that own all three use these; every
other LLVM call still takes the lock. When llvmlite's wrapper does not look as expected, the
locked call is used."""
from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["run_module_passes", "emit_object"]


def _unlocked(fn: Any) -> Any:
    """The raw ctypes function behind llvmlite's locking wrapper (the wrapper itself if none)."""
    return getattr(fn, "_cfn", fn)


def run_module_passes(pb: Any, mod: Any) -> None:
    """Run ``pb``'s module pass pipeline on ``mod`` (a module, pass builder and target machine the
    calling thread owns alone)."""
    from llvmlite.binding import ffi

    mpm = pb.getModulePassManager()
    _unlocked(ffi.lib.LLVMPY_RunNewModulePassManager)(mpm, mod, pb)


def emit_object(tm: Any, mod: Any) -> bytes:
    """The object file of ``mod`` made by ``tm`` (both owned by the calling thread alone)."""
    from llvmlite.binding import ffi

    with ffi.OutputString() as err:
        buf = _unlocked(ffi.lib.LLVMPY_TargetMachineEmitToMemory)(tm, mod, 1, err)
        if not buf:
            raise RuntimeError(str(err))
    try:
        return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buf), ffi.lib.LLVMPY_GetBufferSize(buf))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(buf)
