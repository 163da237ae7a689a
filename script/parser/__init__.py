"""The semantic parser: TVMScript syntax trees to IR (``IRModule``, ``relax.Function``, ``tir.PrimFunc``).

``from_source(text)`` parses a whole script: an ``@I.ir_module`` class gives an IRModule, a lone
``@R.function``/``@T.prim_func`` gives that function. Names the script does not define are looked
up in ``extra_vars`` (the caller's Python names): numbers become literals, numpy arrays become
Relax constants, and ``extra_vars={"metadata": {...}}`` / ``{"meta": {"relay.Constant": [...]}}``
supply the constants that ``metadata[...][i]`` / ``meta[relay.Constant][i]`` refer to.
"""
from __future__ import annotations

import gc
import os
from typing import Any

from ...ir import relax, tir
from ...ir.module import IRModule
from ..errors import ScriptError
from ..syntax import parse_syntax
from .module import parse_script

__all__ = ["from_source", "parse_file", "ScriptError"]


def from_source(source: str, filename: str = "<string>", extra_vars: dict[str, Any] | None = None
                ) -> IRModule | relax.Function | tir.PrimFunc:
    """Parse TVMScript text into an IRModule (a module class) or a function (a lone function)."""
    tree = parse_syntax(source, filename)
    # The IR is many small objects that all stay alive: pause the cyclic GC while building it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return parse_script(tree, source, filename, extra_vars)
    finally:
        if gc_was_enabled:
            gc.enable()


def parse_file(path: str | os.PathLike, extra_vars: dict[str, Any] | None = None
               ) -> IRModule | relax.Function | tir.PrimFunc:
    """Parse a TVMScript file (its path is the file name in error messages)."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    return from_source(source, os.fspath(path), extra_vars)
