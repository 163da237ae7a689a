"""What an ONNX converter works with: :class:`OnnxNode` (one node's attributes and inputs, Relax or
known at import time), the converter and folder tables the converters register in, and small
helpers on static values. The converters are in ``onnx_ops`` (elementwise, nn) and
``onnx_tensor_ops`` (shapes, layout, indexing); the importer in ``onnx``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import numpy as np

from tvmlite.frontend.common import FrontendError, GraphEmitter, as_dim
from tvmlite.ir.dtype import from_numpy_dtype
from tvmlite.ir.op_api import Var
from tvmlite.ir.relax import Expr

# A value flowing along a graph edge: a Relax expression, or an array known at import time.
Value = Union[Expr, np.ndarray]
Converter = Callable[["OnnxNode"], Any]

# Nodes this importer creates when it recognises an activation spelled with several ONNX ops.
FUSED_DOMAIN = "tvmlite.fused"


# ---------------------------------------------------------------- small helpers
def is_static(value: Value | None) -> bool:
    """Whether an edge's value is known at import time (an array, not a Relax expression)."""
    return isinstance(value, np.ndarray)


def shape_array(dims: Sequence[Any]) -> np.ndarray:
    """A shape as an int64 array, or an object array when a dimension is symbolic."""
    dims = [as_dim(d) for d in dims]
    if all(isinstance(d, int) for d in dims):
        return np.array(dims, dtype=np.int64)
    out = np.empty(len(dims), dtype=object)
    out[:] = dims
    return out


def as_array(value: Any) -> np.ndarray:
    """A folder's result as an array (a NumPy scalar or a symbolic dimension as a 0-d array)."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    out = np.empty((), dtype=object)  # a symbolic dimension
    out[()] = value
    return out


def int_list(array: np.ndarray) -> list[Any]:
    """A static 0/1-D integer array as Python ints (PrimExprs kept)."""
    return [as_dim(v) for v in np.asarray(array).reshape(-1).tolist()]


def normalize_axis(axis: int, rank: int, node: "OnnxNode") -> int:
    """``axis`` in ``[0, rank)``, negative axes counting from the end; out of range is an error."""
    if not -rank <= axis < rank:
        raise node.fail(f"axis {axis} is out of range for a rank-{rank} tensor")
    return axis % rank


def near(value: np.ndarray | None, target: float) -> bool:
    """True for a one-element float constant close to ``target`` (pattern matching)."""
    return (value is not None and value.size == 1 and value.dtype.kind == "f"
            and abs(float(value.reshape(-1)[0]) - target) <= 1e-6 * abs(target))


# ---------------------------------------------------------------- one node
class OnnxNode:
    """One ONNX node as a converter sees it: attributes, inputs (Relax or static), the emitter."""

    def __init__(self, imp: Any, proto: Any, index: int) -> None:  # imp: the onnx module's importer
        self.imp = imp
        self.proto = proto
        self.op_type: str = proto.op_type
        self.name: str = proto.name or f"#{index}"
        self.opset: int = imp.opset
        self.g: GraphEmitter = imp.emitter
        self.attrs = {a.name: imp.attribute(a) for a in proto.attribute}

    def fail(self, message: str) -> FrontendError:
        """An error naming this node."""
        return FrontendError(f"ONNX {self.op_type} node {self.name!r}: {message}")

    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute ``name``, or ``default`` when the node does not set it."""
        return self.attrs.get(name, default)

    def required(self, name: str) -> Any:
        """An attribute the op cannot do without."""
        if name not in self.attrs:
            raise self.fail(f"the required attribute {name!r} is missing")
        return self.attrs[name]

    def has(self, i: int) -> bool:
        """Whether optional input ``i`` is given (ONNX leaves a missing one empty)."""
        return i < len(self.proto.input) and self.proto.input[i] != ""

    @property
    def num_inputs(self) -> int:
        """The number of input slots, empty optional ones included."""
        return len(self.proto.input)

    def value(self, i: int) -> Value:
        """Input ``i`` as it flows: a Relax expression or a static array."""
        name = self.proto.input[i]
        if name not in self.imp.env:
            raise self.fail(f"input {name!r} is not a graph input, an initializer or an earlier node's output")
        return self.imp.env[name]

    def tensor(self, i: int) -> Expr:
        """Input ``i`` as a Relax expression (a static array becomes a constant or a weight)."""
        self.value(i)  # a clear error for an undefined name
        return self.imp.materialize(self.proto.input[i], self)

    def const(self, i: int, what: str) -> np.ndarray:
        """Input ``i``, which must be known at import time (a shape, axes, bounds...)."""
        value = self.value(i)
        if not is_static(value):
            raise self.fail(f"the {what} input must be a constant (it is computed at run time)")
        return value

    def ints(self, i: int, what: str) -> list[int]:
        """Input ``i`` as Python ints: it must be a constant without symbolic dimensions."""
        values = int_list(self.const(i, what))
        if not all(isinstance(v, int) for v in values):
            raise self.fail(f"the {what} input depends on a symbolic dimension, which is not supported")
        return values

    def axes(self, input_index: int, default: Any = None) -> list[int] | None:
        """Axes given as an input (newer opsets) or as the ``axes`` attribute (older ones)."""
        if self.has(input_index):
            return self.ints(input_index, "axes")
        axes = self.attr("axes", default)
        return None if axes is None else [int(a) for a in axes]

    def emit(self, expr: Expr) -> Var:
        """Bind ``expr`` in the function being built."""
        return self.g.emit(expr)

    def shape(self, i: int = 0) -> tuple[Any, ...]:
        """Input ``i``'s shape (symbolic dimensions as ``tir.Var``)."""
        value = self.value(i)
        return tuple(value.shape) if is_static(value) else self.g.shape_of(value)

    def dtype(self, i: int = 0) -> str:
        """Input ``i``'s dtype."""
        value = self.value(i)
        return from_numpy_dtype(value.dtype) if is_static(value) else self.g.dtype_of(value)


# ---------------------------------------------------------------- the converter tables
# op type -> converter. Every op the importer accepts is registered here (the unsupported-op check
# reads it).
CONVERTERS: dict[str, Converter] = {}
# Converters of the nodes the activation fusion creates (domain FUSED_DOMAIN).
FUSED_CONVERTERS: dict[str, Converter] = {}
# op type -> NumPy evaluation, used when every input is static (the exporters' shape arithmetic).
# A folder takes the node and its input arrays and returns the output arrays, or None to leave
# the node to its converter (values it cannot fold, such as symbolic dimensions).
FOLDERS: dict[str, Callable[..., list[np.ndarray]]] = {}


def register(*op_types: str, table: dict[str, Converter] = CONVERTERS) -> Callable[[Converter], Converter]:
    """Register a converter under ONNX op types (``table``: the fused-node table, or the main one)."""

    def wrap(fn: Converter) -> Converter:
        for op_type in op_types:
            table[op_type] = fn
        return fn

    return wrap


