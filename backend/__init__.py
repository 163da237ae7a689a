"""Backend: LLVM code generation (llvmlite) and the runtime that runs modules on numpy arrays.

Names load on first use, so touching ``tvmlite.backend`` (or ``tvmlite.runtime``) does not import
llvmlite until code is actually compiled.
"""
from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Target": "target", "TargetError": "target",
    "codegen": "llvm_codegen", "LLVMModule": "llvm_codegen", "FuncSignature": "llvm_codegen",
    "CodegenError": "llvm_codegen",
    "build": "executable", "Executable": "executable", "PrimFuncHandle": "executable",
    "KernelError": "executable", "thread_pool_info": "thread_pool", "load_module": "executable",
    "LoadedModule": "executable",
    "ArgumentError": "runtime",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    """Load a backend name from its module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tvmlite.backend' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tvmlite.backend.{module}"), name)
