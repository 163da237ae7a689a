"""Import an ONNX model as a Relax ``IRModule`` (TVM's ``relax.frontend.onnx.from_onnx``).

The graph becomes one function ``main``: the graph inputs are its parameters (``num_input``), the
initializers are constants or, with ``keep_params_in_input``, parameters after the inputs. Each ONNX
node is translated by the converter registered for its op type (``@_register("Relu")``, as the
PyTorch importer registers its converters) in :data:`_CONVERTERS`; the ops both importers share
(linear, conv2d, batch norm, pooling...) are emitted by
:class:`~tvmlite.frontend.common.GraphEmitter`, so an ONNX export and a PyTorch import of the same
model give the same Relax.

Values computable at import time (initializers, ``Constant``, ``Shape`` of a static tensor and the
``Gather``/``Unsqueeze``/``Concat``... arithmetic exporters build from it) are kept as NumPy arrays
and folded, so the shape inputs of ``Reshape``, ``Unsqueeze``, ``Clip``... are known; a symbolic
dimension stays a ``tir.Var`` inside an object array. The ``onnx`` package is imported only when
:func:`from_onnx` is called (the ``[onnx]`` extra).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence, Union

import numpy as np

from tvmlite.frontend.common import (FrontendError, GraphEmitter, as_dim, dim_product, refuse_unsupported,
                                     require, sanitize_name)
from tvmlite.ir import IRModule, arith, tir
from tvmlite.ir.dtype import from_numpy_dtype
from tvmlite.ir.op import OpError
from tvmlite.ir.op_api import PrimValue, Var, const
from tvmlite.ir.op_api import op as relax_op
from tvmlite.ir.relax import Expr

__all__ = ["from_onnx", "supported_ops", "OnnxNode"]

# A value flowing along a graph edge: a Relax expression, or an array known at import time.
Value = Union[Expr, np.ndarray]
Converter = Callable[["_Node"], Any]

# Nodes this importer creates when it recognises an activation spelled with several ONNX ops.
_FUSED_DOMAIN = "tvmlite.fused"


# ---------------------------------------------------------------- small helpers
def _is_static(value: Value | None) -> bool:
    return isinstance(value, np.ndarray)


def _shape_array(dims: Sequence[Any]) -> np.ndarray:
    """A shape as an int64 array, or an object array when a dimension is symbolic."""
    dims = [as_dim(d) for d in dims]
    if all(isinstance(d, int) for d in dims):
        return np.array(dims, dtype=np.int64)
    out = np.empty(len(dims), dtype=object)
    out[:] = dims
    return out


def _as_array(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    out = np.empty((), dtype=object)  # a symbolic dimension
    out[()] = value
    return out


def _ints(array: np.ndarray) -> list[Any]:
    """A static 0/1-D integer array as Python ints (PrimExprs kept)."""
    return [as_dim(v) for v in np.asarray(array).reshape(-1).tolist()]


def _normalize_axis(axis: int, rank: int, node: "_Node") -> int:
    if not -rank <= axis < rank:
        raise node.fail(f"axis {axis} is out of range for a rank-{rank} tensor")
    return axis % rank


def _near(value: np.ndarray | None, target: float) -> bool:
    """True for a one-element float constant close to ``target`` (pattern matching)."""
    return (value is not None and value.size == 1 and value.dtype.kind == "f"
            and abs(float(value.reshape(-1)[0]) - target) <= 1e-6 * abs(target))


# ---------------------------------------------------------------- one node
class _Node:
    """One ONNX node as a converter sees it: attributes, inputs (Relax or static), the emitter."""

    def __init__(self, imp: "_Importer", proto: Any, index: int) -> None:
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
        return len(self.proto.input)

    def value(self, i: int) -> Value:
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
        if not _is_static(value):
            raise self.fail(f"the {what} input must be a constant (it is computed at run time)")
        return value

    def ints(self, i: int, what: str) -> list[int]:
        """Input ``i`` as Python ints: it must be a constant without symbolic dimensions."""
        values = _ints(self.const(i, what))
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
        return self.g.emit(expr)

    def shape(self, i: int = 0) -> tuple[Any, ...]:
        value = self.value(i)
        return tuple(value.shape) if _is_static(value) else self.g.shape_of(value)

    def dtype(self, i: int = 0) -> str:
        value = self.value(i)
        return from_numpy_dtype(value.dtype) if _is_static(value) else self.g.dtype_of(value)


# ---------------------------------------------------------------- converters
# op type -> converter. Every op the importer accepts is registered here (the unsupported-op check
# reads it).
_CONVERTERS: dict[str, Converter] = {}
# Converters of the nodes the activation fusion creates (domain _FUSED_DOMAIN).
_FUSED_CONVERTERS: dict[str, Converter] = {}


def _register(*op_types: str, table: dict[str, Converter] = _CONVERTERS) -> Callable[[Converter], Converter]:
    """Register a converter under ONNX op types (``table``: the fused-node table, or the main one)."""

    def wrap(fn: Converter) -> Converter:
        for op_type in op_types:
            table[op_type] = fn
        return fn

    return wrap


# ---------------------------------------------------------------- converters: elementwise
def _unary(make: Callable[[Expr], Expr]) -> Converter:
    def convert(node: _Node) -> Value:
        return node.emit(make(node.tensor(0)))
    return convert


_UNARY: dict[str, Callable[[Expr], Expr]] = {
    "Relu": relax_op.nn.relu, "Sigmoid": relax_op.sigmoid, "Tanh": relax_op.tanh, "Exp": relax_op.exp,
    "Log": relax_op.log, "Sqrt": relax_op.sqrt, "Erf": relax_op.erf, "Abs": relax_op.abs,
    "Neg": relax_op.negative, "Floor": relax_op.floor, "Ceil": relax_op.ceil, "Sin": relax_op.sin,
    "Cos": relax_op.cos, "Round": relax_op.round, "Sign": relax_op.sign,
}

# op type -> (Relax op, NumPy function folding static operands)
_BINARY: dict[str, tuple[Callable[..., Expr], Callable[..., Any]]] = {
    "Add": (relax_op.add, np.add), "Sub": (relax_op.subtract, np.subtract),
    "Mul": (relax_op.multiply, np.multiply), "Div": (relax_op.divide, None),  # Div folds via _fold_div
    "Pow": (relax_op.power, np.power), "Max": (relax_op.maximum, np.maximum),
    "Min": (relax_op.minimum, np.minimum),
}


def _fold_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX integer division truncates; shape arithmetic on symbolic dims stays symbolic."""
    if a.dtype == object or b.dtype == object:
        return _shape_array([as_dim(arith.simplify(tir.FloorDiv(arith.to_dim(x), arith.to_dim(y))))
                             for x, y in zip(*np.broadcast_arrays(a, b))])
    if a.dtype.kind in "iu":
        return np.trunc(a / b).astype(a.dtype)
    return np.divide(a, b).astype(a.dtype)


def _binary(op_type: str) -> Converter:
    make = _BINARY[op_type][0]

    def convert(node: _Node) -> Value:
        # Max/Min are variadic in ONNX: chain them pairwise.
        out = node.tensor(0)
        dtype = node.g.dtype_of(out)
        for i in range(1, node.num_inputs):
            other = node.tensor(i)
            if op_type == "Pow" and node.g.dtype_of(other) != dtype:
                # ONNX lets the exponent have another type; Relax wants one dtype.
                other = node.emit(relax_op.astype(other, dtype))
            out = node.emit(make(out, other))
        return out
    return convert


for _op_type, _make in _UNARY.items():
    _register(_op_type)(_unary(_make))
for _op_type in _BINARY:
    _register(_op_type)(_binary(_op_type))


@_register("Gelu")
@_register("Gelu", table=_FUSED_CONVERTERS)
def _gelu(node: _Node) -> Value:
    approximate = node.attr("approximate", "none")
    make = relax_op.nn.gelu_tanh if approximate == "tanh" else relax_op.nn.gelu
    return node.emit(make(node.tensor(0)))


@_register("Silu", table=_FUSED_CONVERTERS)
def _silu(node: _Node) -> Value:
    return node.emit(relax_op.nn.silu(node.tensor(0)))


@_register("LeakyRelu")
def _leaky_relu(node: _Node) -> Value:
    return node.emit(relax_op.nn.leakyrelu(node.tensor(0), alpha=float(node.attr("alpha", 0.01))))


@_register("Reciprocal")
def _reciprocal(node: _Node) -> Value:
    x = node.tensor(0)
    return node.emit(relax_op.divide(node.g.scalar(1, x), x))


def _bound(node: _Node, i: int, attr: str) -> float | Expr | None:
    """A Clip bound: an attribute before opset 11, an optional (maybe run-time) input after."""
    if node.opset < 11:
        return node.attrs.get(attr)
    if not node.has(i):
        return None
    value = node.value(i)
    return float(value.reshape(-1)[0]) if _is_static(value) else node.tensor(i)


@_register("Clip")
def _clip(node: _Node) -> Value:
    x = node.tensor(0)
    dtype = node.g.dtype_of(x)
    low, high = _bound(node, 1, "min"), _bound(node, 2, "max")
    if isinstance(low, Expr) or isinstance(high, Expr):
        # Run-time bounds: maximum/minimum instead of clip's scalar attributes.
        if low is not None:
            x = node.emit(relax_op.maximum(x, low if isinstance(low, Expr) else node.g.scalar(low, x)))
        if high is not None:
            x = node.emit(relax_op.minimum(x, high if isinstance(high, Expr) else node.g.scalar(high, x)))
        return x
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    low = info.min if low is None else low
    high = info.max if high is None else high
    imm = (lambda v: tir.FloatImm(dtype, float(v))) if dtype.startswith("float") else \
        (lambda v: tir.IntImm(dtype, int(v)))
    return node.emit(relax_op.clip(x, PrimValue(imm(low)), PrimValue(imm(high))))


@_register("Cast")
def _cast(node: _Node) -> Value:
    dtype = node.imp.elem_dtype(node.required("to"))
    x = node.tensor(0)
    return x if node.g.dtype_of(x) == dtype else node.emit(relax_op.astype(x, dtype))


@_register("Identity")
def _identity(node: _Node) -> Value:
    return node.value(0)


@_register("Dropout")
def _dropout(node: _Node) -> Value:
    # Inference: the identity (the mask output, if someone reads it, is refused by the importer).
    if node.has(2) and (not _is_static(node.value(2)) or bool(node.value(2).reshape(-1)[0])):
        raise node.fail("training mode is not supported (export the model in eval mode)")
    return node.value(0)


# ---------------------------------------------------------------- converters: linear algebra, nn
@_register("Gemm")
def _gemm(node: _Node) -> Value:
    a, b = node.tensor(0), node.tensor(1)
    c = node.tensor(2) if node.has(2) else None
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    trans_a, trans_b = bool(node.attr("transA", 0)), bool(node.attr("transB", 0))
    if trans_a:
        a = node.emit(relax_op.permute_dims(a, axes=None))
    if trans_b and alpha == 1.0 and beta == 1.0:
        # What torch exports for nn.Linear: emit it the way the PyTorch importer does.
        return node.g.linear(a, b, c)
    if trans_b:
        b = node.emit(relax_op.permute_dims(b, axes=None))
    out = node.emit(relax_op.matmul(a, b, out_dtype=node.g.dtype_of(a)))
    if alpha != 1.0:
        out = node.emit(relax_op.multiply(out, node.g.scalar(alpha, out)))
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = node.emit(relax_op.multiply(c, node.g.scalar(beta, c)))
        out = node.emit(relax_op.add(out, c))
    return out


@_register("MatMul")
def _matmul(node: _Node) -> Value:
    a, b = node.tensor(0), node.tensor(1)
    return node.emit(relax_op.matmul(a, b, out_dtype=node.g.dtype_of(a)))


def _spatial(node: _Node, values: Sequence[int] | None, default: int) -> list[int]:
    return [int(v) for v in values] if values else [default, default]


def _pads(node: _Node, in_hw: Sequence[Any], kernel: Sequence[int], strides: Sequence[int],
          dilation: Sequence[int]) -> list[int]:
    """(top, left, bottom, right) from ``pads`` or ``auto_pad`` (ONNX 2-D pads are in that order)."""
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", "VALID"):
        pads = node.attr("pads") if auto_pad == "NOTSET" else None
        return [int(p) for p in pads] if pads else [0, 0, 0, 0]
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.fail(f"unknown auto_pad {auto_pad!r}")
    begin, end = [], []
    for size, k, s, d in zip(in_hw, kernel, strides, dilation):
        if not isinstance(size, int):
            raise node.fail(f"auto_pad={auto_pad} needs static spatial dimensions")
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


def _require_2d(node: _Node, rank: int) -> None:
    if rank != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got a rank-{rank} input")


@_register("Conv")
def _conv(node: _Node) -> Value:
    x, w = node.tensor(0), node.tensor(1)
    shape, w_shape = node.g.shape_of(x), node.g.shape_of(w)
    _require_2d(node, len(shape))
    kernel = [int(k) for k in node.attr("kernel_shape", w_shape[2:])]
    strides = _spatial(node, node.attr("strides"), 1)
    dilation = _spatial(node, node.attr("dilations"), 1)
    padding = _pads(node, shape[2:], kernel, strides, dilation)
    bias = node.tensor(2) if node.has(2) else None
    return node.g.conv2d(x, w, bias, strides, padding, dilation, int(node.attr("group", 1)))


@_register("BatchNormalization")
def _batch_norm(node: _Node) -> Value:
    if node.attr("training_mode", 0):
        raise node.fail("training mode is not supported (export the model in eval mode)")
    x, gamma, beta, mean, var = (node.tensor(i) for i in range(5))
    # ONNX momentum weighs the old running value, Relax's (PyTorch's) the new batch statistic.
    momentum = round(1.0 - float(node.attr("momentum", 0.9)), 6)
    return node.g.batch_norm(x, gamma, beta, mean, var, float(node.attr("epsilon", 1e-5)), momentum)


@_register("LayerNormalization")
def _layer_norm(node: _Node) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    axis = _normalize_axis(int(node.attr("axis", -1)), len(shape), node)
    norm_shape = tuple(shape[axis:])

    def param(i: int) -> Expr | None:
        if not node.has(i):
            return None
        value = node.value(i)
        if _is_static(value) and tuple(value.shape) != norm_shape:
            # ONNX allows a broadcastable scale/bias; Relax wants the normalised shape.
            return const(np.broadcast_to(value, norm_shape).copy(), node.g.dtype_of(x))
        return node.tensor(i)

    return node.g.layer_norm(x, param(1), param(2), len(norm_shape), float(node.attr("epsilon", 1e-5)))


def _softmax_like(make: Callable[..., Expr]) -> Converter:
    def convert(node: _Node) -> Value:
        x = node.tensor(0)
        shape = node.g.shape_of(x)
        legacy = node.opset < 13
        given = int(node.attr("axis", 1 if legacy else -1))
        axis = _normalize_axis(given, len(shape), node)
        if not legacy or axis == len(shape) - 1:
            return node.emit(make(x, axis=given))
        # Before opset 13 the input is coerced to 2-D at ``axis`` and normalised over the second axis.
        flat = node.g.reshape(x, (dim_product(shape[:axis]), dim_product(shape[axis:])))
        return node.g.reshape(node.emit(make(flat, axis=-1)), shape)
    return convert


_register("Softmax")(_softmax_like(relax_op.nn.softmax))
_register("LogSoftmax")(_softmax_like(relax_op.nn.log_softmax))


def _pool(kind: str) -> Converter:
    def convert(node: _Node) -> Value:
        x = node.tensor(0)
        shape = node.g.shape_of(x)
        _require_2d(node, len(shape))
        if node.attr("storage_order", 0):
            raise node.fail("storage_order=1 is not supported")
        kernel = [int(k) for k in node.required("kernel_shape")]
        strides = _spatial(node, node.attr("strides"), 1)
        dilation = _spatial(node, node.attr("dilations"), 1)
        padding = _pads(node, shape[2:], kernel, strides, dilation)
        return node.g.pool2d(kind, x, kernel, strides, padding, dilation,
                             ceil_mode=bool(node.attr("ceil_mode", 0)),
                             count_include_pad=bool(node.attr("count_include_pad", 0)))
    return convert


_register("MaxPool")(_pool("max"))
_register("AveragePool")(_pool("avg"))


def _global_pool(kind: str) -> Converter:
    def convert(node: _Node) -> Value:
        x = node.tensor(0)
        rank = len(node.g.shape_of(x))
        if kind == "avg" and rank == 4:
            return node.g.adaptive_avg_pool2d(x, (1, 1))
        reduce = relax_op.mean if kind == "avg" else relax_op.max
        return node.emit(reduce(x, axis=list(range(2, rank)), keepdims=True))
    return convert


_register("GlobalAveragePool")(_global_pool("avg"))
_register("GlobalMaxPool")(_global_pool("max"))


# ---------------------------------------------------------------- converters: shapes and layout
def _reshape_target(node: _Node, in_shape: Sequence[Any], target: Sequence[Any]) -> list[Any]:
    """Resolve ONNX's 0 (copy the input dimension, unless allowzero) in a Reshape target."""
    allow_zero = bool(node.attr("allowzero", 0))
    out = []
    for i, d in enumerate(target):
        if isinstance(d, int) and d == 0 and not allow_zero:
            if i >= len(in_shape):
                raise node.fail(f"shape entry {i} is 0 but the input has only {len(in_shape)} dimensions")
            d = in_shape[i]
        out.append(d)
    infer = [i for i, d in enumerate(out) if isinstance(d, int) and d == -1]
    if infer and not all(isinstance(d, int) for d in list(in_shape) + out):
        # Relax infers -1 only for static shapes: divide out the known dimensions here.
        known = dim_product([d for i, d in enumerate(out) if i != infer[0]])
        out[infer[0]] = as_dim(arith.simplify(tir.FloorDiv(arith.to_dim(dim_product(in_shape)),
                                                              arith.to_dim(known))))
    return out


@_register("Reshape")
def _reshape(node: _Node) -> Value:
    target = _ints(node.const(1, "shape")) if node.has(1) else list(node.attr("shape", []))
    x = node.tensor(0)
    return node.g.reshape(x, _reshape_target(node, node.g.shape_of(x), target))


@_register("Flatten")
def _flatten(node: _Node) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    axis = int(node.attr("axis", 1))
    axis = axis + len(shape) if axis < 0 else axis
    return node.g.reshape(x, (dim_product(shape[:axis]), dim_product(shape[axis:])))


@_register("Transpose")
def _transpose(node: _Node) -> Value:
    perm = node.attr("perm")
    return node.emit(relax_op.permute_dims(node.tensor(0), axes=None if perm is None else list(perm)))


def _unsqueeze_axes(node: _Node, rank: int) -> list[int]:
    axes = node.axes(1)
    if not axes:
        raise node.fail("needs axes")
    # Unsqueeze axes count in the output's rank.
    return sorted(a % (rank + len(axes)) for a in axes)


@_register("Unsqueeze")
def _unsqueeze(node: _Node) -> Value:
    x = node.tensor(0)
    return node.emit(relax_op.expand_dims(x, axis=_unsqueeze_axes(node, len(node.g.shape_of(x)))))


@_register("Squeeze")
def _squeeze(node: _Node) -> Value:
    x = node.tensor(0)
    axes = node.axes(1)
    return node.emit(relax_op.squeeze(x, axis=axes if axes else None))


@_register("Concat")
def _concat(node: _Node) -> Value:
    tensors = [node.tensor(i) for i in range(node.num_inputs) if node.has(i)]
    return node.emit(relax_op.concat(tensors, axis=int(node.required("axis"))))


@_register("Gather")
def _gather(node: _Node) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    axis = _normalize_axis(int(node.attr("axis", 0)), len(shape), node)
    value = node.value(1)
    if _is_static(value) and isinstance(shape[axis], int):
        # Negative indices count from the end in ONNX; Relax's take wants them in range.
        value = np.where(value < 0, value + shape[axis], value).astype(np.int64)
        indices: Expr = const(value, "int64")
    else:
        indices = node.tensor(1)
    return node.emit(relax_op.take(x, indices, axis=axis))


def _slice_params(node: _Node) -> tuple[list[int], list[int], list[int], list[int]]:
    """(starts, ends, axes, steps): attributes before opset 10, inputs after."""
    if node.opset < 10:
        starts, ends = list(node.required("starts")), list(node.required("ends"))
        axes = list(node.attr("axes", range(len(starts))))
        return starts, ends, axes, [1] * len(starts)
    starts, ends = node.ints(1, "starts"), node.ints(2, "ends")
    axes = node.ints(3, "axes") if node.has(3) else list(range(len(starts)))
    steps = node.ints(4, "steps") if node.has(4) else [1] * len(starts)
    return starts, ends, axes, steps


@_register("Slice")
def _slice(node: _Node) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    starts, ends, axes, steps = _slice_params(node)
    begin, end, norm_axes = [], [], []
    for start, stop, axis, step in zip(starts, ends, axes, steps):
        axis = _normalize_axis(axis, len(shape), node)
        if not isinstance(shape[axis], int) or step <= 0:
            raise node.fail("only positive steps on static dimensions are supported")
        # ONNX clamps out-of-range bounds (ends are often INT64_MAX): as Python slices do.
        lo, hi, _ = slice(start, stop, step).indices(shape[axis])
        begin.append(lo)
        end.append(max(hi, lo))
        norm_axes.append(axis)
    prim = lambda values: [PrimValue(v) for v in values]  # noqa: E731
    return node.emit(relax_op.strided_slice(x, prim(norm_axes), prim(begin), prim(end), prim(steps)))


def _reduce(make: Callable[..., Expr]) -> Converter:
    def convert(node: _Node) -> Value:
        x = node.tensor(0)
        axes = node.axes(1)
        if not axes and node.attr("noop_with_empty_axes", 0):
            return x
        return node.emit(make(x, axis=axes or None, keepdims=bool(node.attr("keepdims", 1))))
    return convert


for _op_type, _make in (("ReduceMean", relax_op.mean), ("ReduceSum", relax_op.sum), ("ReduceMax", relax_op.max),
                       ("ReduceMin", relax_op.min), ("ReduceProd", relax_op.prod)):
    _register(_op_type)(_reduce(_make))


@_register("Shape")
def _shape(node: _Node) -> Value:
    # Shapes are static in the struct info (symbolic dims as tir.Vars): always folded.
    dims = node.shape(0)
    start, end = int(node.attr("start", 0)), node.attr("end")
    return _shape_array(dims[start:None if end is None else int(end)])


@_register("Constant")
def _constant(node: _Node) -> Value:
    return node.imp.constant_value(node)


# ---------------------------------------------------------------- folding static values
def _fold_unsqueeze(node: _Node, x: np.ndarray, *axes: np.ndarray) -> list[np.ndarray]:
    out = x
    for axis in _unsqueeze_axes(node, x.ndim):
        out = np.expand_dims(out, axis)
    return [out]


def _fold_squeeze(node: _Node, x: np.ndarray, *axes: np.ndarray) -> list[np.ndarray]:
    axes = node.axes(1)
    return [np.squeeze(x, axis=tuple(axes)) if axes else np.squeeze(x)]


def _fold_gather(node: _Node, x: np.ndarray, indices: np.ndarray) -> list[np.ndarray]:
    return [np.take(x, indices.astype(np.int64), axis=int(node.attr("axis", 0)))]


def _fold_concat(node: _Node, *arrays: np.ndarray) -> list[np.ndarray]:
    return [np.concatenate([np.asarray(a) for a in arrays], axis=int(node.required("axis")))]


def _fold_cast(node: _Node, x: np.ndarray) -> list[np.ndarray]:
    dtype = node.imp.elem_dtype(node.required("to"))
    if x.dtype == object and dtype.startswith("int"):
        return [x]  # symbolic dimensions stay symbolic
    return [x.astype(dtype)]


def _fold_reshape(node: _Node, x: np.ndarray, *rest: np.ndarray) -> list[np.ndarray]:
    target = _ints(rest[0]) if rest else list(node.attr("shape", []))
    return [x.reshape(_reshape_target(node, x.shape, target))]


def _fold_slice(node: _Node, x: np.ndarray, *rest: np.ndarray) -> list[np.ndarray]:
    starts, ends, axes, steps = _slice_params(node)
    index = [slice(None)] * x.ndim
    for start, stop, axis, step in zip(starts, ends, axes, steps):
        index[axis] = slice(start, stop, step)
    return [x[tuple(index)]]


def _fold_flatten(node: _Node, x: np.ndarray) -> list[np.ndarray]:
    axis = int(node.attr("axis", 1))
    return [x.reshape(dim_product(x.shape[:axis]), dim_product(x.shape[axis:]))]


def _fold_binary(op_type: str) -> Callable[..., list[np.ndarray]]:
    fold = _BINARY[op_type][1] or _fold_div

    def run(node: _Node, *arrays: np.ndarray) -> list[np.ndarray]:
        out = arrays[0]
        for other in arrays[1:]:
            result = fold(out, other)
            # Keep ONNX's typing: NumPy would promote a float32 tensor times a float64 scalar.
            out = np.asarray(result) if out.dtype == object else np.asarray(result).astype(out.dtype)
        return [out]
    return run


# op type -> NumPy evaluation, used when every input is static (the exporters' shape arithmetic).
_FOLDERS: dict[str, Callable[..., list[np.ndarray]]] = {
    "Identity": lambda node, x: [x], "Unsqueeze": _fold_unsqueeze, "Squeeze": _fold_squeeze,
    "Gather": _fold_gather, "Concat": _fold_concat, "Cast": _fold_cast, "Reshape": _fold_reshape,
    "Slice": _fold_slice, "Flatten": _fold_flatten,
    **{op: _fold_binary(op) for op in ("Add", "Sub", "Mul", "Div", "Max", "Min")},
}


# ---------------------------------------------------------------- fusing multi-op activations
class _Fuser:
    """Finds the activations exporters spell with several ops and replaces each with one node:
    ``x * sigmoid(x)`` -> SiLU, ``x * 0.5 * (1 + erf(x / sqrt(2)))`` (any Mul order) -> GELU, so
    the Relax matches the PyTorch importer's ``nn.silu``/``nn.gelu``."""

    def __init__(self, onnx: Any, nodes: Sequence[Any], outputs: set[str],
                 static: Callable[[str], np.ndarray | None]) -> None:
        self.onnx = onnx
        self.nodes = list(nodes)
        self.static = static
        self.producer = {out: n for n in self.nodes for out in n.output}
        self.uses: dict[str, int] = {name: 1 for name in outputs}
        for n in self.nodes:
            for name in n.input:
                self.uses[name] = self.uses.get(name, 0) + 1
        self.dropped: set[int] = set()
        self.replaced: dict[int, Any] = {}

    def _private(self, name: str, op_type: str) -> Any:
        """The node producing ``name`` when it has type ``op_type`` and ``name`` has one reader."""
        node = self.producer.get(name)
        if node is None or node.op_type != op_type or self.uses.get(name, 0) != 1 or id(node) in self.dropped:
            return None
        return node

    def _silu(self, mul: Any) -> tuple[str, list[Any]] | None:
        for x, s in (mul.input, mul.input[::-1]):
            sig = self._private(s, "Sigmoid")
            if sig is not None and sig.input[0] == x:
                return x, [sig]
        return None

    def _gelu(self, mul: Any) -> tuple[str, list[Any]] | None:
        # The three factors of a two-Mul product, with the inner Mul.
        for first, second in (mul.input, mul.input[::-1]):
            inner = self._private(first, "Mul")
            if inner is None:
                continue
            factors = [*inner.input, second]
            for k, half in enumerate(factors):
                if not _near(self.static(half), 0.5):
                    continue
                rest = factors[:k] + factors[k + 1:]
                for x, one_plus in (rest, rest[::-1]):
                    chain = self._erf_chain(x, one_plus)
                    if chain is not None:
                        return x, [inner, *chain]
        return None

    def _erf_chain(self, x: str, one_plus: str) -> list[Any] | None:
        """``1 + erf(x / sqrt(2))`` (or ``x * (1/sqrt(2))``), its nodes, when ``one_plus`` is that."""
        add = self._private(one_plus, "Add")
        if add is None:
            return None
        for e, one in (add.input, add.input[::-1]):
            erf = self._private(e, "Erf")
            if erf is None or not _near(self.static(one), 1.0):
                continue
            scale = self._private(erf.input[0], "Div") or self._private(erf.input[0], "Mul")
            if scale is None or scale.input[0] != x:
                continue
            target = np.sqrt(2.0) if scale.op_type == "Div" else 1 / np.sqrt(2.0)
            if _near(self.static(scale.input[1]), target):
                return [add, erf, scale]
        return None

    def run(self) -> list[Any]:
        """The node list with the matched activations fused."""
        helper = self.onnx.helper
        for node in self.nodes:
            if node.op_type != "Mul" or node.domain not in ("", "ai.onnx") or id(node) in self.dropped:
                continue
            for op_type, match in (("Gelu", self._gelu), ("Silu", self._silu)):
                found = match(node)
                if found is None:
                    continue
                x, absorbed = found
                self.dropped.update(id(n) for n in absorbed)
                self.replaced[id(node)] = helper.make_node(op_type, [x], list(node.output), name=node.name,
                                                           domain=_FUSED_DOMAIN)
                break
        return [self.replaced.get(id(n), n) for n in self.nodes if id(n) not in self.dropped]


# ---------------------------------------------------------------- the importer
class _Importer:
    """Translates one ONNX graph into the function a GraphEmitter builds."""

    def __init__(self, onnx: Any, model: Any, shape_dict: Mapping[str, Sequence[Any]] | None,
                 dtype_dict: str | Mapping[str, str], opset: int | None, sanitize: bool,
                 custom: Mapping[str, Converter] | None = None) -> None:
        self.onnx = onnx
        self.custom = dict(custom or {})  # the user's converters: they replace tvmlite's, folding included
        self.converters: dict[str, Converter] = {**_CONVERTERS, **self.custom}
        self.graph = model.graph
        self.opset = int(opset) if opset is not None else self._model_opset(model)
        self.shape_dict = dict(shape_dict or {})
        self.dtype_dict = dtype_dict
        self.sanitize = sanitize
        self.initializers = {t.name: self._to_array(t) for t in self.graph.initializer}
        if self.graph.sparse_initializer:
            raise FrontendError("sparse initializers are not supported")
        self.inputs = [i for i in self.graph.input if i.name not in self.initializers]
        self.outputs = [o.name for o in self.graph.output]
        self._sym_dims: dict[str, tir.Var] = {}
        self.emitter: GraphEmitter = GraphEmitter(keep_params=False)
        self.env: dict[str, Value] = {}

    # ------------------------------------------------------------ model facts
    @staticmethod
    def _model_opset(model: Any) -> int:
        for entry in model.opset_import:
            if entry.domain in ("", "ai.onnx"):
                return int(entry.version)
        return 1

    def _to_array(self, tensor: Any) -> np.ndarray:
        return self.onnx.numpy_helper.to_array(tensor)

    def elem_dtype(self, elem_type: int) -> str:
        """The Relax dtype of an ONNX element type."""
        try:
            return from_numpy_dtype(self.onnx.helper.tensor_dtype_to_np_dtype(int(elem_type)))
        except (KeyError, ValueError, TypeError) as err:
            raise FrontendError(f"ONNX element type {elem_type} has no Relax dtype") from err

    def attribute(self, attr: Any) -> Any:
        """An attribute's Python value: strings decoded, tensors as arrays."""
        value = self.onnx.helper.get_attribute_value(attr)
        if attr.type == self.onnx.AttributeProto.FLOAT:
            # Stored as float32: the shortest decimal that rounds to it is what the exporter meant
            # (epsilon 1e-05, not 9.99999974e-06), as the PyTorch importer writes it.
            return float(str(np.float32(value)))
        if attr.type == self.onnx.AttributeProto.FLOATS:
            return [float(str(np.float32(v))) for v in value]
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, self.onnx.TensorProto):
            return self._to_array(value)
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value

    def constant_value(self, node: _Node) -> np.ndarray:
        """The array a Constant node holds."""
        for key in ("value", "value_float", "value_int", "value_floats", "value_ints"):
            if key in node.attrs:
                value = node.attrs[key]
                if key == "value":
                    return value
                return np.asarray(value, dtype=np.float32 if "float" in key else np.int64)
        raise node.fail(f"only tensor and number values are supported, got {sorted(node.attrs)}")

    # ------------------------------------------------------------ checks before emitting
    def nodes(self) -> list[Any]:
        """The graph's nodes after fusing multi-op activations."""
        constants = {n.output[0]: n for n in self.graph.node if n.op_type == "Constant" and n.output}

        def static(name: str) -> np.ndarray | None:
            if name in self.initializers:
                return self.initializers[name]
            node = constants.get(name)
            attrs = {a.name: a for a in node.attribute} if node is not None else {}
            return self._to_array(attrs["value"].t) if "value" in attrs else None

        return _Fuser(self.onnx, self.graph.node, set(self.outputs), static).run()

    def check_supported(self) -> None:
        """Refuse the model naming every op it uses that has no converter, before emitting anything."""
        missing: dict[str, list[str]] = {}
        for n in self.graph.node:
            if n.domain not in ("", "ai.onnx") or n.op_type not in self.converters:
                op = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
                missing.setdefault(op, []).append(n.name)
        refuse_unsupported("from_onnx", missing, "tvmlite.frontend.onnx.supported_ops()")

    def input_signature(self) -> list[tuple[str, list[Any], str]]:
        """(name, shape, dtype) of each graph input, with shape_dict/dtype_dict applied."""
        names = [i.name for i in self.inputs]
        for name in self.shape_dict:
            if name in self.initializers:
                raise FrontendError(f"shape_dict names {name!r}, which is a weight (initializer), not an input")
            if name not in names:
                raise FrontendError(f"shape_dict names {name!r}, which is not an input of the model; "
                                    f"its inputs are {names}")
        return [(i.name, self._input_shape(i), self._input_dtype(i)) for i in self.inputs]

    def _input_shape(self, info: Any) -> list[Any]:
        tensor_type = info.type.tensor_type
        model_dims = list(tensor_type.shape.dim) if tensor_type.HasField("shape") else None
        if info.name in self.shape_dict:
            given = list(self.shape_dict[info.name])
            if model_dims is not None and len(model_dims) != len(given):
                raise FrontendError(f"shape_dict gives input {info.name!r} {len(given)} dimensions, "
                                    f"the model {len(model_dims)}")
            return [self._symbol(d) if isinstance(d, str) else int(d) for d in given]
        if model_dims is None:
            raise FrontendError(f"input {info.name!r} has no shape in the model: give it in shape_dict")
        dims: list[Any] = []
        for axis, d in enumerate(model_dims):
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param"):
                dims.append(self._symbol(d.dim_param))
            else:
                raise FrontendError(f"input {info.name!r} has an unknown dimension {axis}: "
                                    f"give its shape in shape_dict")
        return dims

    def _symbol(self, name: str) -> tir.Var:
        # One variable per dimension name, so inputs sharing a dim_param share the tir.Var.
        if name not in self._sym_dims:
            self._sym_dims[name] = tir.Var(sanitize_name(name), "int64")
        return self._sym_dims[name]

    def _input_dtype(self, info: Any) -> str:
        if isinstance(self.dtype_dict, Mapping) and info.name in self.dtype_dict:
            return str(self.dtype_dict[info.name])
        elem_type = info.type.tensor_type.elem_type
        if elem_type:
            return self.elem_dtype(elem_type)
        return self.dtype_dict if isinstance(self.dtype_dict, str) else "float32"

    # ------------------------------------------------------------ emitting
    def materialize(self, name: str, node: _Node | None = None) -> Expr:
        """The value of edge ``name`` as a Relax expression."""
        value = self.env[name]
        if not _is_static(value):
            return value
        key = id(value)
        if key in self._weight_of:
            self.used_weights.add(self._weight_of[key])
            weight = self._weight_vars.get(self._weight_of[key])
            if weight is not None:
                return weight
        if value.dtype == object:
            where = f" of {node.op_type} node {node.name!r}" if node else ""
            raise FrontendError(f"the shape value {name!r}{where} has symbolic dimensions and is used as a "
                                f"tensor, which is not supported")
        return const(value, from_numpy_dtype(value.dtype))

    def convert(self, keep: Sequence[str] | None) -> IRModule:
        """Emit the function; ``keep`` lists the initializers that become parameters."""
        self.emitter = GraphEmitter(keep_params=keep is not None)
        self.env = {}
        self.used_weights: set[str] = set()
        for name, shape, dtype in self.input_signature():
            if not self.sanitize and sanitize_name(name) != name:
                raise FrontendError(f"input name {name!r} is not a valid Relax variable name "
                                    f"(pass sanitize_input_names=True)")
            self.env[name] = self.emitter.add_input(name, shape, dtype)
        self._weight_of = {id(array): name for name, array in self.initializers.items()}
        self._weight_vars: dict[str, Expr] = {}
        for name in keep or ():
            self._weight_vars[name] = self.emitter.add_weight(name, self.initializers[name])
        self.env.update(self.initializers)
        self.emitter.begin()
        readers = self._readers()
        for index, proto in enumerate(self.nodes()):
            self._convert_node(_Node(self, proto, index), readers)
        outputs = [self.materialize(name) for name in self.outputs]
        return self.emitter.finish(outputs)

    def _readers(self) -> set[str]:
        return {name for n in self.graph.node for name in n.input} | set(self.outputs)

    def _convert_node(self, node: _Node, readers: set[str]) -> None:
        proto = node.proto
        given = [node.value(i) for i in range(node.num_inputs) if node.has(i)]
        try:
            if proto.domain != _FUSED_DOMAIN and node.op_type in _FOLDERS and node.op_type not in self.custom \
                    and all(map(_is_static, given)):
                # NumPy returns scalars (not 0-d arrays) from some functions: keep everything an array.
                results: Any = [_as_array(r) for r in _FOLDERS[node.op_type](node, *given)]
            else:
                table = _FUSED_CONVERTERS if proto.domain == _FUSED_DOMAIN else self.converters
                results = table[node.op_type](node)
        except OpError as err:
            # A Relax op refused its operands (mismatched shapes...): say which ONNX node it was.
            raise node.fail(str(err)) from err
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        for k, name in enumerate(proto.output):
            if not name:
                continue
            if k < len(results):
                self.env[name] = results[k]
            elif name in readers:
                raise node.fail(f"output {k} ({name!r}) is not supported (only inference outputs are)")


OnnxNode = _Node  # the public name of what a custom_convert_map converter receives


def supported_ops() -> list[str]:
    """The ONNX op types :func:`from_onnx` converts."""
    return sorted(_CONVERTERS)


def from_onnx(model: Any, shape_dict: Mapping[str, Sequence[int | str]] | None = None,
              dtype_dict: str | Mapping[str, str] = "float32", opset: int | None = None,
              keep_params_in_input: bool = False, sanitize_input_names: bool = True,
              custom_convert_map: Mapping[str, Converter] | None = None) -> IRModule:
    """Import an ONNX model (``ModelProto`` or file path) as an IRModule with the function ``main``.
    ``custom_convert_map`` maps ONNX op types to converters ``fn(node: OnnxNode)`` that add or replace
    tvmlite's (``node.tensor(i)``, ``node.attr(name)``, ``node.g.emit(...)``), as the torch importer's."""
    onnx = require("onnx", "onnx", "tvmlite.frontend.from_onnx")
    if isinstance(model, (str, os.PathLike)):
        model = onnx.load(os.fspath(model))
    elif isinstance(model, (bytes, bytearray)):
        model = onnx.load_from_string(bytes(model))
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"from_onnx expects an onnx.ModelProto or a path, got {type(model).__name__}")
    importer = _Importer(onnx, model, shape_dict, dtype_dict, opset, sanitize_input_names, custom_convert_map)
    importer.check_supported()
    if not keep_params_in_input:
        return importer.convert(None)
    # Only the initializers the function reads as tensors become parameters (not Reshape's shape or
    # the constants of a fused GELU): a first pass finds them.
    importer.convert(None)
    used = importer.used_weights
    return importer.convert([name for name in importer.initializers if name in used])
