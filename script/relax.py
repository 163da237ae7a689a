"""The ``R`` namespace of scripts: ``@R.function`` parses a decorated Python function."""
from __future__ import annotations

from ._decorate import Harmless, make_function_decorator

__all__ = ["function"]

function = make_function_decorator("R.function")


def __getattr__(name: str) -> Harmless:
    # R.Tensor(...), R.add etc. are evaluated by Python in annotations; the parser reads the text.
    return Harmless(f"R.{name}")
