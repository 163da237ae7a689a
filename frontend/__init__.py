"""Model frontends: ``tvmlite.frontend.nn`` builds Relax modules from PyTorch-like Python classes
(TVM's ``tvm.relax.frontend.nn``)."""
from __future__ import annotations

from tvmlite.frontend import nn

__all__ = ["nn"]
