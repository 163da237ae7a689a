"""Model frontends.

- ``tvmlite.frontend.nn`` builds Relax modules from PyTorch-like Python classes (TVM's
  ``tvm.relax.frontend.nn``).
- ``from_exported_program`` imports a ``torch.export`` program (``tvmlite.frontend.torch``; needs
  the ``[torch]`` extra), ``from_onnx`` an ONNX model (``tvmlite.frontend.onnx``; the ``[onnx]``
  extra). Neither framework is imported until an importer is called.
- ``detach_params`` splits the weights kept as function parameters off an imported module.
"""
from __future__ import annotations

from typing import Any

from tvmlite.frontend import nn
from tvmlite.frontend.common import FrontendError, detach_params

__all__ = ["nn", "detach_params", "from_exported_program", "from_onnx", "FrontendError"]


def from_exported_program(*args: Any, **kwargs: Any) -> Any:
    """Import a ``torch.export.ExportedProgram`` as an IRModule (see ``tvmlite.frontend.torch``)."""
    from tvmlite.frontend.torch import from_exported_program as importer

    return importer(*args, **kwargs)


def from_onnx(*args: Any, **kwargs: Any) -> Any:
    """Import an ONNX model as an IRModule (see ``tvmlite.frontend.onnx``)."""
    from tvmlite.frontend.onnx import from_onnx as importer

    return importer(*args, **kwargs)
