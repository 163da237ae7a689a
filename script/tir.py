"""The ``T`` namespace of scripts: ``@T.prim_func`` parses a decorated Python function."""
from __future__ import annotations

from ._decorate import Harmless, make_function_decorator

__all__ = ["prim_func"]

prim_func = make_function_decorator("T.prim_func")


def __getattr__(name: str) -> Harmless:
    # T.Buffer(...), T.int64(...) etc. are evaluated by Python in annotations; the parser reads the text.
    return Harmless(f"T.{name}")
