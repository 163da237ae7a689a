"""ONNX converters of the shape, layout, indexing and reduction ops, and the NumPy folders that
evaluate the exporters' static shape arithmetic (see ``onnx_node``)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tvmlite.frontend.common import as_dim, dim_product
from tvmlite.frontend.onnx_node import (FOLDERS, Converter, OnnxNode, Value, int_list, is_static, normalize_axis,
                                        register, shape_array)
from tvmlite.ir import arith, tir
from tvmlite.ir.op_api import PrimValue, const
from tvmlite.ir.op_api import op as relax_op
from tvmlite.ir.relax import Expr

# ---------------------------------------------------------------- converters: shapes and layout
def _reshape_target(node: OnnxNode, in_shape: Sequence[Any], target: Sequence[Any]) -> list[Any]:
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


@register("Reshape")
def _reshape(node: OnnxNode) -> Value:
    target = int_list(node.const(1, "shape")) if node.has(1) else list(node.attr("shape", []))
    x = node.tensor(0)
    return node.g.reshape(x, _reshape_target(node, node.g.shape_of(x), target))


@register("Flatten")
def _flatten(node: OnnxNode) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    axis = int(node.attr("axis", 1))
    axis = axis + len(shape) if axis < 0 else axis
    return node.g.reshape(x, (dim_product(shape[:axis]), dim_product(shape[axis:])))


@register("Transpose")
def _transpose(node: OnnxNode) -> Value:
    perm = node.attr("perm")
    return node.emit(relax_op.permute_dims(node.tensor(0), axes=None if perm is None else list(perm)))


def _unsqueeze_axes(node: OnnxNode, rank: int) -> list[int]:
    axes = node.axes(1)
    if not axes:
        raise node.fail("needs axes")
    # Unsqueeze axes count in the output's rank.
    return sorted(a % (rank + len(axes)) for a in axes)


@register("Unsqueeze")
def _unsqueeze(node: OnnxNode) -> Value:
    x = node.tensor(0)
    return node.emit(relax_op.expand_dims(x, axis=_unsqueeze_axes(node, len(node.g.shape_of(x)))))


@register("Squeeze")
def _squeeze(node: OnnxNode) -> Value:
    x = node.tensor(0)
    axes = node.axes(1)
    return node.emit(relax_op.squeeze(x, axis=axes if axes else None))


@register("Concat")
def _concat(node: OnnxNode) -> Value:
    tensors = [node.tensor(i) for i in range(node.num_inputs) if node.has(i)]
    return node.emit(relax_op.concat(tensors, axis=int(node.required("axis"))))


@register("Gather")
def _gather(node: OnnxNode) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    axis = normalize_axis(int(node.attr("axis", 0)), len(shape), node)
    value = node.value(1)
    if is_static(value) and isinstance(shape[axis], int):
        # Negative indices count from the end in ONNX; Relax's take wants them in range.
        value = np.where(value < 0, value + shape[axis], value).astype(np.int64)
        indices: Expr = const(value, "int64")
    else:
        indices = node.tensor(1)
    return node.emit(relax_op.take(x, indices, axis=axis))


def _slice_params(node: OnnxNode) -> tuple[list[int], list[int], list[int], list[int]]:
    """(starts, ends, axes, steps): attributes before opset 10, inputs after."""
    if node.opset < 10:
        starts, ends = list(node.required("starts")), list(node.required("ends"))
        axes = list(node.attr("axes", range(len(starts))))
        return starts, ends, axes, [1] * len(starts)
    starts, ends = node.ints(1, "starts"), node.ints(2, "ends")
    axes = node.ints(3, "axes") if node.has(3) else list(range(len(starts)))
    steps = node.ints(4, "steps") if node.has(4) else [1] * len(starts)
    return starts, ends, axes, steps


@register("Slice")
def _slice(node: OnnxNode) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    starts, ends, axes, steps = _slice_params(node)
    begin, end, norm_axes = [], [], []
    for start, stop, axis, step in zip(starts, ends, axes, steps):
        axis = normalize_axis(axis, len(shape), node)
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
    def convert(node: OnnxNode) -> Value:
        x = node.tensor(0)
        axes = node.axes(1)
        if not axes and node.attr("noop_with_empty_axes", 0):
            return x
        return node.emit(make(x, axis=axes or None, keepdims=bool(node.attr("keepdims", 1))))
    return convert


for _op_type, _make in (("ReduceMean", relax_op.mean), ("ReduceSum", relax_op.sum), ("ReduceMax", relax_op.max),
                       ("ReduceMin", relax_op.min), ("ReduceProd", relax_op.prod)):
    register(_op_type)(_reduce(_make))


@register("Shape")
def _shape(node: OnnxNode) -> Value:
    # Shapes are static in the struct info (symbolic dims as tir.Vars): always folded.
    dims = node.shape(0)
    start, end = int(node.attr("start", 0)), node.attr("end")
    return shape_array(dims[start:None if end is None else int(end)])


@register("Constant")
def _constant(node: OnnxNode) -> Value:
    return node.imp.constant_value(node)


# ---------------------------------------------------------------- folding static values
def _fold_unsqueeze(node: OnnxNode, x: np.ndarray, *axes: np.ndarray) -> list[np.ndarray]:
    out = x
    for axis in _unsqueeze_axes(node, x.ndim):
        out = np.expand_dims(out, axis)
    return [out]


def _fold_squeeze(node: OnnxNode, x: np.ndarray, *axes: np.ndarray) -> list[np.ndarray]:
    axes = node.axes(1)
    return [np.squeeze(x, axis=tuple(axes)) if axes else np.squeeze(x)]


def _fold_gather(node: OnnxNode, x: np.ndarray, indices: np.ndarray) -> list[np.ndarray]:
    return [np.take(x, indices.astype(np.int64), axis=int(node.attr("axis", 0)))]


def _fold_concat(node: OnnxNode, *arrays: np.ndarray) -> list[np.ndarray]:
    return [np.concatenate([np.asarray(a) for a in arrays], axis=int(node.required("axis")))]


def _fold_cast(node: OnnxNode, x: np.ndarray) -> list[np.ndarray]:
    dtype = node.imp.elem_dtype(node.required("to"))
    if x.dtype == object and dtype.startswith("int"):
        return [x]  # symbolic dimensions stay symbolic
    return [x.astype(dtype)]


def _fold_reshape(node: OnnxNode, x: np.ndarray, *rest: np.ndarray) -> list[np.ndarray]:
    target = int_list(rest[0]) if rest else list(node.attr("shape", []))
    return [x.reshape(_reshape_target(node, x.shape, target))]


def _fold_slice(node: OnnxNode, x: np.ndarray, *rest: np.ndarray) -> list[np.ndarray]:
    starts, ends, axes, steps = _slice_params(node)
    index = [slice(None)] * x.ndim
    for start, stop, axis, step in zip(starts, ends, axes, steps):
        index[axis] = slice(start, stop, step)
    return [x[tuple(index)]]


def _fold_flatten(node: OnnxNode, x: np.ndarray) -> list[np.ndarray]:
    axis = int(node.attr("axis", 1))
    return [x.reshape(dim_product(x.shape[:axis]), dim_product(x.shape[axis:]))]


FOLDERS.update({
    "Identity": lambda node, x: [x], "Unsqueeze": _fold_unsqueeze, "Squeeze": _fold_squeeze,
    "Gather": _fold_gather, "Concat": _fold_concat, "Cast": _fold_cast, "Reshape": _fold_reshape,
    "Slice": _fold_slice, "Flatten": _fold_flatten,
})
