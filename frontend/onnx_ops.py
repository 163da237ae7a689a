"""ONNX converters of the elementwise, linear-algebra and nn ops (see ``onnx_node`` for what a
converter receives, ``onnx`` for the importer that calls them)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tvmlite.frontend.common import as_dim, dim_product
from tvmlite.frontend.onnx_node import (FOLDERS, FUSED_CONVERTERS, Converter, OnnxNode, Value, is_static,
                                        normalize_axis, register, shape_array)
from tvmlite.ir import arith, tir
from tvmlite.ir.op_api import PrimValue, const
from tvmlite.ir.op_api import op as relax_op
from tvmlite.ir.relax import Expr

# ---------------------------------------------------------------- converters: elementwise
def _unary(make: Callable[[Expr], Expr]) -> Converter:
    def convert(node: OnnxNode) -> Value:
        return node.emit(make(node.tensor(0)))
    return convert


_UNARY: dict[str, Callable[[Expr], Expr]] = {
    "Relu": relax_op.nn.relu, "Sigmoid": relax_op.sigmoid, "Tanh": relax_op.tanh, "Exp": relax_op.exp,
    "Log": relax_op.log, "Sqrt": relax_op.sqrt, "Erf": relax_op.erf, "Abs": relax_op.abs,
    "Neg": relax_op.negative, "Floor": relax_op.floor, "Ceil": relax_op.ceil, "Sin": relax_op.sin,
    "Cos": relax_op.cos, "Round": relax_op.round, "Sign": relax_op.sign, "Tan": relax_op.tan,
    "Asin": relax_op.asin, "Acos": relax_op.acos, "Atan": relax_op.atan, "Sinh": relax_op.sinh,
    "Cosh": relax_op.cosh, "Asinh": relax_op.asinh, "Acosh": relax_op.acosh, "Atanh": relax_op.atanh,
    "IsNaN": relax_op.isnan, "Not": relax_op.logical_not, "BitwiseNot": relax_op.bitwise_not,
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
        return shape_array([as_dim(arith.simplify(tir.FloorDiv(arith.to_dim(x), arith.to_dim(y))))
                             for x, y in zip(*np.broadcast_arrays(a, b))])
    if a.dtype.kind in "iu":
        return np.trunc(a / b).astype(a.dtype)
    return np.divide(a, b).astype(a.dtype)


def _binary(op_type: str) -> Converter:
    make = _BINARY[op_type][0]

    def convert(node: OnnxNode) -> Value:
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
    register(_op_type)(_unary(_make))
for _op_type in _BINARY:
    register(_op_type)(_binary(_op_type))


@register("Gelu")
@register("Gelu", table=FUSED_CONVERTERS)
def _gelu(node: OnnxNode) -> Value:
    approximate = node.attr("approximate", "none")
    make = relax_op.nn.gelu_tanh if approximate == "tanh" else relax_op.nn.gelu
    return node.emit(make(node.tensor(0)))


@register("Silu", table=FUSED_CONVERTERS)
def _silu(node: OnnxNode) -> Value:
    return node.emit(relax_op.nn.silu(node.tensor(0)))


@register("LeakyRelu")
def _leaky_relu(node: OnnxNode) -> Value:
    return node.emit(relax_op.nn.leakyrelu(node.tensor(0), alpha=float(node.attr("alpha", 0.01))))


@register("Reciprocal")
def _reciprocal(node: OnnxNode) -> Value:
    x = node.tensor(0)
    return node.emit(relax_op.divide(node.g.scalar(1, x), x))


def _bound(node: OnnxNode, i: int, attr: str) -> float | Expr | None:
    """A Clip bound: an attribute before opset 11, an optional (maybe run-time) input after."""
    if node.opset < 11:
        return node.attrs.get(attr)
    if not node.has(i):
        return None
    value = node.value(i)
    return float(value.reshape(-1)[0]) if is_static(value) else node.tensor(i)


@register("Clip")
def _clip(node: OnnxNode) -> Value:
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


@register("Cast")
def _cast(node: OnnxNode) -> Value:
    dtype = node.imp.elem_dtype(node.required("to"))
    x = node.tensor(0)
    return x if node.g.dtype_of(x) == dtype else node.emit(relax_op.astype(x, dtype))


@register("CastLike")
def _cast_like(node: OnnxNode) -> Value:
    x, dtype = node.tensor(0), node.dtype(1)
    return x if node.g.dtype_of(x) == dtype else node.emit(relax_op.astype(x, dtype))


@register("Identity")
def _identity(node: OnnxNode) -> Value:
    return node.value(0)


@register("Dropout")
def _dropout(node: OnnxNode) -> Value:
    # Inference: the identity (the mask output, if someone reads it, is refused by the importer).
    if node.has(2) and (not is_static(node.value(2)) or bool(node.value(2).reshape(-1)[0])):
        raise node.fail("training mode is not supported (export the model in eval mode)")
    return node.value(0)


# ---------------------------------------------------------------- converters: linear algebra, nn
@register("Gemm")
def _gemm(node: OnnxNode) -> Value:
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


@register("MatMul")
def _matmul(node: OnnxNode) -> Value:
    a, b = node.tensor(0), node.tensor(1)
    return node.emit(relax_op.matmul(a, b, out_dtype=node.g.dtype_of(a)))


def _spatial(node: OnnxNode, values: Sequence[int] | None, default: int, count: int = 2) -> list[int]:
    return [int(v) for v in values] if values else [default] * count


def _pads(node: OnnxNode, in_hw: Sequence[Any], kernel: Sequence[int], strides: Sequence[int],
          dilation: Sequence[int]) -> list[int]:
    """The begins then the ends (2-D: top, left, bottom, right) from ``pads`` or ``auto_pad``, in
    ONNX's order, which is also Relax's."""
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", "VALID"):
        pads = node.attr("pads") if auto_pad == "NOTSET" else None
        return [int(p) for p in pads] if pads else [0] * (2 * len(in_hw))
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


# Spatial rank -> the data layout of Relax's 1-, 2- and 3-D convolutions and poolings.
_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _spatial_rank(node: OnnxNode, rank: int) -> int:
    if rank - 2 not in _LAYOUTS:
        raise node.fail(f"only 1-, 2- and 3-D (NCW, NCHW, NCDHW) inputs are supported, got a rank-{rank} input")
    return rank - 2


@register("Conv")
def _conv(node: OnnxNode) -> Value:
    x, w = node.tensor(0), node.tensor(1)
    shape, w_shape = node.g.shape_of(x), node.g.shape_of(w)
    n = _spatial_rank(node, len(shape))
    kernel = [int(k) for k in node.attr("kernel_shape", w_shape[2:])]
    strides = _spatial(node, node.attr("strides"), 1, n)
    dilation = _spatial(node, node.attr("dilations"), 1, n)
    padding = _pads(node, shape[2:], kernel, strides, dilation)
    bias = node.tensor(2) if node.has(2) else None
    groups = int(node.attr("group", 1))
    if n == 2:  # the PyTorch importer's spelling
        return node.g.conv2d(x, w, bias, strides, padding, dilation, groups)
    make = relax_op.nn.conv1d if n == 1 else relax_op.nn.conv3d
    out = node.emit(make(x, w, strides=strides, padding=padding, dilation=dilation, groups=groups,
                         data_layout=_LAYOUTS[n], kernel_layout="OI" + _LAYOUTS[n][2:], out_dtype=node.g.dtype_of(x)))
    return node.g.add_channel_bias(out, bias, n + 2)


def _transpose_pads(node: OnnxNode, in_sizes: Sequence[Any], kernel: Sequence[int], strides: Sequence[int],
                    dilation: Sequence[int], output_padding: Sequence[int]) -> list[int]:
    """ConvTranspose's begins and ends: ``pads``, or split from ``output_shape`` / ``auto_pad``."""
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape")
    if output_shape is None and auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        pads = node.attr("pads") if auto_pad == "NOTSET" else None
        return [int(p) for p in pads] if pads else [0] * (2 * len(in_sizes))
    if not all(isinstance(d, int) for d in in_sizes):
        raise node.fail("output_shape and auto_pad need static spatial dimensions")
    wanted = list(output_shape)[-len(in_sizes):] if output_shape is not None else \
        [size * s for size, s in zip(in_sizes, strides)]
    begin, end = [], []
    for size, k, s, d, extra, out in zip(in_sizes, kernel, strides, dilation, output_padding, wanted):
        total = s * (size - 1) + extra + (k - 1) * d + 1 - int(out)
        if total < 0:
            raise node.fail(f"output_shape {list(output_shape)} is larger than the convolution gives")
        # SAME_UPPER puts the smaller half first, anything else the larger one.
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


@register("ConvTranspose")
def _conv_transpose(node: OnnxNode) -> Value:
    x, w = node.tensor(0), node.tensor(1)
    shape, w_shape = node.g.shape_of(x), node.g.shape_of(w)
    n = _spatial_rank(node, len(shape))
    if n == 3:
        raise node.fail("3-D transposed convolution is not supported")
    kernel = [int(k) for k in node.attr("kernel_shape", w_shape[2:])]
    strides = _spatial(node, node.attr("strides"), 1, n)
    dilation = _spatial(node, node.attr("dilations"), 1, n)
    output_padding = _spatial(node, node.attr("output_padding"), 0, n)
    padding = _transpose_pads(node, shape[2:], kernel, strides, dilation, output_padding)
    make = relax_op.nn.conv1d_transpose if n == 1 else relax_op.nn.conv2d_transpose
    # ONNX's weight is (C_in, C_out / group, k...): Relax's IOW / IOHW layouts.
    out = node.emit(make(x, w, strides=strides, padding=padding, output_padding=output_padding, dilation=dilation,
                         groups=int(node.attr("group", 1)), data_layout=_LAYOUTS[n],
                         kernel_layout="IO" + _LAYOUTS[n][2:], out_dtype=node.g.dtype_of(x)))
    return node.g.add_channel_bias(out, node.tensor(2) if node.has(2) else None, n + 2)


@register("BatchNormalization")
def _batch_norm(node: OnnxNode) -> Value:
    if node.attr("training_mode", 0):
        raise node.fail("training mode is not supported (export the model in eval mode)")
    x, gamma, beta, mean, var = (node.tensor(i) for i in range(5))
    # ONNX momentum weighs the old running value, Relax's (PyTorch's) the new batch statistic.
    momentum = round(1.0 - float(node.attr("momentum", 0.9)), 6)
    return node.g.batch_norm(x, gamma, beta, mean, var, float(node.attr("epsilon", 1e-5)), momentum)


@register("LayerNormalization")
def _layer_norm(node: OnnxNode) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    axis = normalize_axis(int(node.attr("axis", -1)), len(shape), node)
    norm_shape = tuple(shape[axis:])

    def param(i: int) -> Expr | None:
        if not node.has(i):
            return None
        value = node.value(i)
        if is_static(value) and tuple(value.shape) != norm_shape:
            # ONNX allows a broadcastable scale/bias; Relax wants the normalised shape.
            return const(np.broadcast_to(value, norm_shape).copy(), node.g.dtype_of(x))
        return node.tensor(i)

    return node.g.layer_norm(x, param(1), param(2), len(norm_shape), float(node.attr("epsilon", 1e-5)))


def _softmax_like(make: Callable[..., Expr]) -> Converter:
    def convert(node: OnnxNode) -> Value:
        x = node.tensor(0)
        shape = node.g.shape_of(x)
        legacy = node.opset < 13
        given = int(node.attr("axis", 1 if legacy else -1))
        axis = normalize_axis(given, len(shape), node)
        if not legacy or axis == len(shape) - 1:
            return node.emit(make(x, axis=given))
        # Before opset 13 the input is coerced to 2-D at ``axis`` and normalised over the second axis.
        flat = node.g.reshape(x, (dim_product(shape[:axis]), dim_product(shape[axis:])))
        return node.g.reshape(node.emit(make(flat, axis=-1)), shape)
    return convert


register("Softmax")(_softmax_like(relax_op.nn.softmax))
register("LogSoftmax")(_softmax_like(relax_op.nn.log_softmax))


def _pool(kind: str) -> Converter:
    def convert(node: OnnxNode) -> Value:
        x = node.tensor(0)
        shape = node.g.shape_of(x)
        n = _spatial_rank(node, len(shape))
        if node.attr("storage_order", 0):
            raise node.fail("storage_order=1 is not supported")
        kernel = [int(k) for k in node.required("kernel_shape")]
        strides = _spatial(node, node.attr("strides"), 1, n)
        dilation = _spatial(node, node.attr("dilations"), 1, n)
        padding = _pads(node, shape[2:], kernel, strides, dilation)
        ceil_mode, include_pad = bool(node.attr("ceil_mode", 0)), bool(node.attr("count_include_pad", 0))
        if n == 2:
            return node.g.pool2d(kind, x, kernel, strides, padding, dilation, ceil_mode=ceil_mode,
                                 count_include_pad=include_pad)
        make = getattr(relax_op.nn, f"{kind}_pool{n}d")
        attrs: dict[str, Any] = dict(pool_size=kernel, strides=strides, dilation=dilation, padding=padding,
                                     ceil_mode=ceil_mode, layout=_LAYOUTS[n])
        if kind == "avg":
            attrs["count_include_pad"] = include_pad
        return node.emit(make(x, **attrs))
    return convert


register("MaxPool")(_pool("max"))
register("AveragePool")(_pool("avg"))


def _global_pool(kind: str) -> Converter:
    def convert(node: OnnxNode) -> Value:
        x = node.tensor(0)
        rank = len(node.g.shape_of(x))
        if kind == "avg" and rank == 4:
            return node.g.adaptive_avg_pool2d(x, (1, 1))
        reduce = relax_op.mean if kind == "avg" else relax_op.max
        return node.emit(reduce(x, axis=list(range(2, rank)), keepdims=True))
    return convert


register("GlobalAveragePool")(_global_pool("avg"))
register("GlobalMaxPool")(_global_pool("max"))


def _fold_binary(op_type: str) -> Callable[..., list[np.ndarray]]:
    fold = _BINARY[op_type][1] or _fold_div

    def run(node: OnnxNode, *arrays: np.ndarray) -> list[np.ndarray]:
        out = arrays[0]
        for other in arrays[1:]:
            result = fold(out, other)
            # Keep ONNX's typing: NumPy would promote a float32 tensor times a float64 scalar.
            out = np.asarray(result) if out.dtype == object else np.asarray(result).astype(out.dtype)
        return [out]
    return run


FOLDERS.update({op: _fold_binary(op) for op in ("Add", "Sub", "Mul", "Div", "Max", "Min")})


# ---------------------------------------------------------------- converters: comparisons, logic, selection
# op type -> (Relax op, NumPy function folding numeric operands)
_COMPARE: dict[str, tuple[Callable[..., Expr], Callable[..., Any]]] = {
    "Equal": (relax_op.equal, np.equal), "Less": (relax_op.less, np.less),
    "Greater": (relax_op.greater, np.greater), "LessOrEqual": (relax_op.less_equal, np.less_equal),
    "GreaterOrEqual": (relax_op.greater_equal, np.greater_equal),
    "And": (relax_op.logical_and, np.logical_and), "Or": (relax_op.logical_or, np.logical_or),
    "Xor": (relax_op.logical_xor, np.logical_xor), "BitwiseAnd": (relax_op.bitwise_and, np.bitwise_and),
    "BitwiseOr": (relax_op.bitwise_or, np.bitwise_or), "BitwiseXor": (relax_op.bitwise_xor, np.bitwise_xor),
}


def _two_operands(make: Callable[..., Expr]) -> Converter:
    def convert(node: OnnxNode) -> Value:
        return node.emit(make(node.tensor(0), node.tensor(1)))
    return convert


def _numeric(arrays: Sequence[np.ndarray]) -> bool:
    """Whether NumPy can fold these (object arrays hold symbolic dimensions, which it cannot compare)."""
    return all(a.dtype != object for a in arrays)


def _fold_numeric(fold: Callable[..., Any]) -> Callable[..., list[np.ndarray] | None]:
    def run(node: OnnxNode, *arrays: np.ndarray) -> list[np.ndarray] | None:
        return [np.asarray(fold(*arrays))] if _numeric(arrays) else None
    return run


for _op_type, (_make, _fold) in _COMPARE.items():
    register(_op_type)(_two_operands(_make))
    FOLDERS[_op_type] = _fold_numeric(_fold)
FOLDERS["Not"] = _fold_numeric(np.logical_not)


@register("Where")
def _where(node: OnnxNode) -> Value:
    return node.emit(relax_op.where(node.tensor(0), node.tensor(1), node.tensor(2)))


FOLDERS["Where"] = _fold_numeric(np.where)


@register("Mod")
def _mod(node: OnnxNode) -> Value:
    # fmod=1 is C's fmod (the sign of the dividend, Relax's mod); fmod=0, for integers only, takes
    # the sign of the divisor (floor_mod).
    fmod = bool(node.attr("fmod", 0))
    a, b = node.tensor(0), node.tensor(1)
    if not fmod and node.g.dtype_of(a).startswith("float"):
        raise node.fail("fmod=0 is defined for integer inputs only (set fmod=1 for floats)")
    return node.emit((relax_op.mod if fmod else relax_op.floor_mod)(a, b))


def _sum_or_mean(node: OnnxNode) -> Value:
    """Sum (and Mean): the inputs added pairwise, divided by their number for Mean."""
    tensors = [node.tensor(i) for i in range(node.num_inputs) if node.has(i)]
    out = tensors[0]
    for other in tensors[1:]:
        out = node.emit(relax_op.add(out, other))
    if node.op_type == "Mean" and len(tensors) > 1:
        out = node.emit(relax_op.divide(out, node.g.scalar(len(tensors), out)))
    return out


register("Sum", "Mean")(_sum_or_mean)


# ---------------------------------------------------------------- converters: activations
def _scalar_clip(node: OnnxNode, x: Expr, low: float, high: float) -> Value:
    dtype = node.g.dtype_of(x)
    return node.emit(relax_op.clip(x, PrimValue(tir.FloatImm(dtype, low)), PrimValue(tir.FloatImm(dtype, high))))


def _hard_sigmoid_of(node: OnnxNode, x: Expr, alpha: float, beta: float) -> Value:
    """``clip(alpha * x + beta, 0, 1)``."""
    scaled = node.emit(relax_op.add(node.emit(relax_op.multiply(x, node.g.scalar(alpha, x))),
                                    node.g.scalar(beta, x)))
    return _scalar_clip(node, scaled, 0.0, 1.0)


@register("HardSigmoid")
def _hard_sigmoid(node: OnnxNode) -> Value:
    return _hard_sigmoid_of(node, node.tensor(0), float(node.attr("alpha", 0.2)), float(node.attr("beta", 0.5)))


@register("HardSwish")
def _hard_swish(node: OnnxNode) -> Value:
    x = node.tensor(0)
    return node.emit(relax_op.multiply(x, _hard_sigmoid_of(node, x, 1.0 / 6.0, 0.5)))


@register("Softplus")
def _softplus(node: OnnxNode) -> Value:
    return node.emit(relax_op.nn.softplus(node.tensor(0)))


@register("Softsign")
def _softsign(node: OnnxNode) -> Value:
    x = node.tensor(0)
    return node.emit(relax_op.divide(x, node.emit(relax_op.add(node.emit(relax_op.abs(x)), node.g.scalar(1, x)))))


def _elu_of(node: OnnxNode, x: Expr, alpha: float) -> Value:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    negative = node.emit(relax_op.multiply(node.g.scalar(alpha, x), node.emit(
        relax_op.subtract(node.emit(relax_op.exp(x)), node.g.scalar(1, x)))))
    return node.emit(relax_op.where(node.emit(relax_op.greater(x, node.g.scalar(0, x))), x, negative))


@register("Elu")
def _elu(node: OnnxNode) -> Value:
    return _elu_of(node, node.tensor(0), float(node.attr("alpha", 1.0)))


# ONNX's Selu defaults are the constants of Relax's nn.selu.
_SELU_ALPHA, _SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


@register("Selu")
def _selu(node: OnnxNode) -> Value:
    x = node.tensor(0)
    alpha, gamma = float(node.attr("alpha", _SELU_ALPHA)), float(node.attr("gamma", _SELU_GAMMA))
    if abs(alpha - _SELU_ALPHA) < 1e-6 and abs(gamma - _SELU_GAMMA) < 1e-6:
        return node.emit(relax_op.nn.selu(x))
    return node.emit(relax_op.multiply(node.g.scalar(gamma, x), _elu_of(node, x, alpha)))


@register("ThresholdedRelu")
def _thresholded_relu(node: OnnxNode) -> Value:
    x = node.tensor(0)
    above = node.emit(relax_op.greater(x, node.g.scalar(float(node.attr("alpha", 1.0)), x)))
    return node.emit(relax_op.where(above, x, node.g.scalar(0, x)))


@register("PRelu")
def _prelu(node: OnnxNode) -> Value:
    # The slope broadcasts to the input (unidirectionally), which Relax's nn.prelu (one slope per
    # channel) does not cover in general: where(x < 0, slope * x, x).
    x, slope = node.tensor(0), node.tensor(1)
    negative = node.emit(relax_op.less(x, node.g.scalar(0, x)))
    return node.emit(relax_op.where(negative, node.emit(relax_op.multiply(x, slope)), x))


# ---------------------------------------------------------------- converters: padding, normalization, layout
# ONNX Pad mode -> Relax nn.pad's pad_mode, with the opset that introduced it.
_PAD_MODES = {"constant": ("constant", 1), "reflect": ("reflect", 2), "edge": ("replicate", 2),
              "wrap": ("circular", 19)}


@register("Pad")
def _pad(node: OnnxNode) -> Value:
    x = node.tensor(0)
    rank = len(node.g.shape_of(x))
    if node.opset < 11:  # pads and value were attributes
        pads, value, axes = [int(p) for p in node.required("pads")], float(node.attr("value", 0.0)), None
    else:
        pads = node.ints(1, "pads")
        value = float(node.const(2, "constant_value").reshape(-1)[0]) if node.has(2) else 0.0
        axes = node.ints(3, "axes") if node.has(3) else None
    mode = node.attr("mode", "constant")
    if mode not in _PAD_MODES or node.opset < _PAD_MODES[mode][1]:
        raise node.fail(f"mode {mode!r} is not supported at opset {node.opset} "
                        f"(constant, reflect, edge; wrap from opset 19)")
    axes = list(range(rank)) if axes is None else [normalize_axis(a, rank, node) for a in axes]
    if len(pads) != 2 * len(axes):
        raise node.fail(f"pads needs a begin and an end per axis: {2 * len(axes)} values, got {len(pads)}")
    width = [0] * (2 * rank)
    for i, axis in enumerate(axes):
        # ONNX lists all begins, then all ends; Relax pairs (begin, end) per axis.
        width[2 * axis], width[2 * axis + 1] = pads[i], pads[i + len(axes)]
    return node.emit(relax_op.nn.pad(x, pad_width=width, pad_value=value, pad_mode=_PAD_MODES[mode][0]))


@register("InstanceNormalization")
def _instance_norm(node: OnnxNode) -> Value:
    x = node.tensor(0)
    rank = len(node.g.shape_of(x))
    return node.emit(relax_op.nn.instance_norm(x, node.tensor(1), node.tensor(2), channel_axis=1,
                                               axes=list(range(2, rank)),
                                               epsilon=float(node.attr("epsilon", 1e-5))))


@register("GroupNormalization")
def _group_norm(node: OnnxNode) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    groups = int(node.required("num_groups"))
    scale, bias = node.tensor(1), node.tensor(2)
    if node.opset < 21 and node.g.shape_of(scale) == (groups,) and shape[1] != groups:
        # Opset 18 scales per group; Relax (and opset 21) per channel: repeat each group's value.
        if not isinstance(shape[1], int):
            raise node.fail("per-group scale and bias need a static channel dimension")
        per = shape[1] // groups
        scale, bias = (node.emit(relax_op.repeat(v, per, axis=0)) for v in (scale, bias))
    return node.emit(relax_op.nn.group_norm(x, scale, bias, num_groups=groups, channel_axis=1,
                                            axes=list(range(2, len(shape))),
                                            epsilon=float(node.attr("epsilon", 1e-5))))


def _static_nchw(node: OnnxNode) -> tuple[int, int, int, int]:
    shape = node.shape(0)
    if len(shape) != 4 or not all(isinstance(d, int) for d in shape):
        raise node.fail(f"needs a static NCHW input, got shape {list(shape)}")
    return shape  # type: ignore[return-value]


@register("DepthToSpace")
def _depth_to_space(node: OnnxNode) -> Value:
    n, c, h, w = _static_nchw(node)
    b = int(node.required("blocksize"))
    mode = node.attr("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise node.fail(f"unknown mode {mode!r} (DCR or CRD)")
    # DCR splits the channels as (block, block, depth), CRD as (depth, block, block).
    x = node.tensor(0)
    if mode == "DCR":
        x = node.g.reshape(x, (n, b, b, c // (b * b), h, w))
        x = node.emit(relax_op.permute_dims(x, axes=[0, 3, 4, 1, 5, 2]))
    else:
        x = node.g.reshape(x, (n, c // (b * b), b, b, h, w))
        x = node.emit(relax_op.permute_dims(x, axes=[0, 1, 4, 2, 5, 3]))
    return node.g.reshape(x, (n, c // (b * b), h * b, w * b))


@register("SpaceToDepth")
def _space_to_depth(node: OnnxNode) -> Value:
    n, c, h, w = _static_nchw(node)
    b = int(node.required("blocksize"))
    x = node.g.reshape(node.tensor(0), (n, c, h // b, b, w // b, b))
    x = node.emit(relax_op.permute_dims(x, axes=[0, 3, 5, 1, 2, 4]))
    return node.g.reshape(x, (n, c * b * b, h // b, w // b))


@register("IsInf")
def _is_inf(node: OnnxNode) -> Value:
    x = node.tensor(0)
    positive, negative = bool(node.attr("detect_positive", 1)), bool(node.attr("detect_negative", 1))
    out = node.emit(relax_op.isinf(x))
    if positive and negative:
        return out
    if not (positive or negative):
        return node.emit(relax_op.logical_and(out, node.emit(relax_op.logical_not(out))))  # all false
    side = relax_op.greater if positive else relax_op.less
    return node.emit(relax_op.logical_and(out, node.emit(side(x, node.g.scalar(0, x)))))


@register("Mish")
def _mish(node: OnnxNode) -> Value:
    x = node.tensor(0)
    return node.emit(relax_op.multiply(x, node.emit(relax_op.tanh(node.emit(relax_op.nn.softplus(x))))))


@register("Celu")
def _celu(node: OnnxNode) -> Value:
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), which is elu(x / alpha) * alpha.
    x = node.tensor(0)
    alpha = float(node.attr("alpha", 1.0))
    scaled = node.emit(relax_op.divide(x, node.g.scalar(alpha, x)))
    return node.emit(relax_op.multiply(node.g.scalar(alpha, x), _elu_of(node, scaled, 1.0)))


@register("Shrink")
def _shrink(node: OnnxNode) -> Value:
    x = node.tensor(0)
    lambd, bias = float(node.attr("lambd", 0.5)), float(node.attr("bias", 0.0))
    low = node.emit(relax_op.less(x, node.g.scalar(-lambd, x)))
    high = node.emit(relax_op.greater(x, node.g.scalar(lambd, x)))
    above = node.emit(relax_op.where(high, node.emit(relax_op.subtract(x, node.g.scalar(bias, x))),
                                     node.g.scalar(0, x)))
    return node.emit(relax_op.where(low, node.emit(relax_op.add(x, node.g.scalar(bias, x))), above))


@register("LpNormalization")
def _lp_normalization(node: OnnxNode) -> Value:
    x = node.tensor(0)
    axis = normalize_axis(int(node.attr("axis", -1)), len(node.g.shape_of(x)), node)
    p = int(node.attr("p", 2))
    if p not in (1, 2):
        raise node.fail(f"p must be 1 or 2, got {p}")
    parts = node.emit(relax_op.abs(x) if p == 1 else relax_op.multiply(x, x))
    norm = node.emit(relax_op.sum(parts, axis=[axis], keepdims=True))
    if p == 2:
        norm = node.emit(relax_op.sqrt(norm))
    return node.emit(relax_op.divide(x, norm))


@register("MeanVarianceNormalization")
def _mean_variance_normalization(node: OnnxNode) -> Value:
    # (x - mean) / sqrt(variance), both over ``axes``; ONNX's function definition adds 1e-9 under
    # the square root.
    x = node.tensor(0)
    axes = [int(a) for a in node.attr("axes", [0, 2, 3])]
    centred = node.emit(relax_op.subtract(x, node.emit(relax_op.mean(x, axis=axes, keepdims=True))))
    variance = node.emit(relax_op.mean(node.emit(relax_op.multiply(centred, centred)), axis=axes, keepdims=True))
    std = node.emit(relax_op.sqrt(node.emit(relax_op.add(variance, node.g.scalar(1e-9, x)))))
    return node.emit(relax_op.divide(centred, std))
