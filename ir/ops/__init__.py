"""The built-in Relax ops: importing this package registers every op with :mod:`tvmlite.ir.op`."""
from . import binary, builtin, create, linalg, manipulate, nn, reduce, unary  # noqa: F401

__all__ = ["binary", "builtin", "create", "linalg", "manipulate", "nn", "reduce", "unary"]
