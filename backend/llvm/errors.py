"""The code generator's error and the short form of a node its messages show."""
from __future__ import annotations

from typing import Any

__all__ = ["CodegenError", "excerpt"]


class CodegenError(ValueError):
    """A PrimFunc the LLVM backend cannot compile (blocks left, unsupported node or intrinsic)."""


def excerpt(node: Any, limit: int = 200) -> str:
    """A short printed form of a node for error messages."""
    try:
        text = node.script() if hasattr(node, "script") else str(node)
    except Exception:  # printing must not hide the real error
        text = type(node).__name__
    return text if len(text) <= limit else text[:limit] + " ..."
