"""The default legalizations of the Relax ops, registered into the op registry's
``OpDef.legalize`` slot when this package is imported (``tvmlite.passes`` imports it)."""
from __future__ import annotations

from . import create, elementwise, manipulate, nn, statistical  # noqa: F401  (register on import)
from .common import LegalizeFunc, register_legalize

__all__ = ["LegalizeFunc", "register_legalize"]
