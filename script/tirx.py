"""TVM 0.27's name of the ``T`` namespace (``from tvmlite.script import tirx as T``): the same as
``tvmlite.script.tir``."""
from __future__ import annotations

from ._decorate import Harmless
from .tir import prim_func

__all__ = ["prim_func"]


def __getattr__(name: str) -> Harmless:
    # as in tir.py: annotations Python evaluates; the parser reads the text
    return Harmless(f"T.{name}")
