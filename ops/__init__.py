"""The built-in Relax ops, one module per family (``unary``, ``binary``, ``manipulate``, ``nn``,
``reduce``, ``create``, ``linalg``, ``builtin``, ``distributed``; the lowered and auxiliary ``memory``,
``closure``, ``inspect``, ``grad``). Each op is declared once: its inputs,
attributes, struct-info inference, fusion pattern and purity (``register_op``) next to its
legalization, the topi compute LegalizeOps emits (``register_legalize``).

Importing this package registers every op with :mod:`tvmlite.ir.op`, legalizations included, so
the registry is complete. The layers that need the whole registry (the parser and printer,
LegalizeOps and the other graph passes, the VM, the facades) import their lookups from here."""
from ..ir.op import find_op_def, get_op, get_op_def, list_ops, make_call
from . import binary, builtin, create, distributed, linalg, manipulate, nn, reduce, unary  # noqa: F401  (register on import)
from . import closure, grad, inspect, memory  # noqa: F401  (after builtin: view's default is R.null_value())
from . import nn_conv, nn_loss, nn_norm, nn_pool  # noqa: F401  (R.nn.conv1d, R.nn.pad..., after nn)
from . import index  # noqa: F401  (the indexing family of issue 16)
from . import search, sets, statistics  # noqa: F401  (sorting, scans, data-dependent sizes: issue 16)
from . import image, vision  # noqa: F401  (R.image.*, R.vision.*: issue 16)
from .legalization import LegalizeFunc, legalize_site, register_legalize

__all__ = ["binary", "builtin", "closure", "create", "distributed", "grad", "inspect", "linalg", "manipulate",
           "memory", "nn", "reduce", "unary", "find_op_def",
           "get_op", "get_op_def", "index", "list_ops", "make_call", "LegalizeFunc", "legalize_site", "register_legalize"]
__all__ += ["search", "sets", "statistics"]  # issue 16
from . import qdq  # noqa: F401,E402  (quantize, dequantize: issue 16)
__all__ += ["qdq"]
from . import ccl  # noqa: F401,E402  (R.ccl.*: issue 16)
__all__ += ["ccl"]
__all__ += ["image", "vision"]  # issue 16: image and vision
