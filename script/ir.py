"""The ``I`` namespace of scripts: ``@I.ir_module`` parses a decorated class into an IRModule."""
from __future__ import annotations

import sys
from typing import Any

from ._decorate import Harmless, parse_object

__all__ = ["ir_module"]


def ir_module(cls: Any = None, **_options: Any) -> Any:
    """Parse the decorated class (its source text) into an IRModule."""
    if cls is None:  # @I.ir_module(check_well_formed=False)
        frame = sys._getframe(1)
        return lambda c: parse_object(c, frame)
    return parse_object(cls, sys._getframe(1))


def __getattr__(name: str) -> Harmless:
    # I.module_attrs(...), I.GlobalVar(...) etc. only need to be harmless when Python runs them.
    return Harmless(f"I.{name}")
