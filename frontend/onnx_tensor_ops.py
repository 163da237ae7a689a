"""ONNX converters of the shape, layout, indexing and reduction ops, and the NumPy folders that
evaluate the exporters' static shape arithmetic (see ``onnx_node``)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tvmlite.frontend.common import as_dim, dim_product
from tvmlite.frontend.onnx_node import (FOLDERS, Converter, OnnxNode, Value, as_array, int_list, is_static,
                                        normalize_axis, register, shape_array)
from tvmlite.ir import arith, tir
from tvmlite.ir.dtype import from_numpy_dtype
from tvmlite.ir.op_api import PrimValue, ShapeExpr, TupleGetItem, const
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


def _composite_reduce(node: OnnxNode) -> Value:
    """ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp: a sum with an
    elementwise op before and/or after it."""
    x = node.tensor(0)
    axes = node.axes(1)
    # With no axes and noop_with_empty_axes only the sum is skipped, the elementwise ops stay (as
    # ONNX's reference evaluator computes it): ReduceL1 is then abs(x), ReduceLogSumExp x.
    noop = not axes and bool(node.attr("noop_with_empty_axes", 0))
    op_type = node.op_type
    keep = bool(node.attr("keepdims", 1))
    if op_type == "ReduceLogSumExp":
        if noop:
            return x
        # Shift by the maximum so exp cannot overflow: log(sum(exp(x - m))) + m.
        peak = node.emit(relax_op.max(x, axis=axes or None, keepdims=True))
        total = node.emit(relax_op.sum(node.emit(relax_op.exp(node.emit(relax_op.subtract(x, peak)))),
                                       axis=axes or None, keepdims=keep))
        if not keep:
            peak = node.emit(relax_op.squeeze(peak, axis=axes or None))
        return node.emit(relax_op.add(node.emit(relax_op.log(total)), peak))
    if op_type == "ReduceL1":
        x = node.emit(relax_op.abs(x))
    elif op_type in ("ReduceL2", "ReduceSumSquare"):
        x = node.emit(relax_op.multiply(x, x))
    out = x if noop else node.emit(relax_op.sum(x, axis=axes or None, keepdims=keep))
    if op_type == "ReduceL2":
        return node.emit(relax_op.sqrt(out))
    return node.emit(relax_op.log(out)) if op_type == "ReduceLogSum" else out


register("ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")(_composite_reduce)


def _arg_reduce(node: OnnxNode) -> Value:
    """ArgMax/ArgMin; ``select_last_index`` searches the flipped axis and maps the index back."""
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    axis = normalize_axis(int(node.attr("axis", 0)), len(shape), node)
    keep = bool(node.attr("keepdims", 1))
    make = relax_op.argmax if node.op_type == "ArgMax" else relax_op.argmin
    if not node.attr("select_last_index", 0):
        return node.emit(make(x, axis=axis, keepdims=keep))
    found = node.emit(make(node.emit(relax_op.flip(x, axis=axis)), axis=axis, keepdims=keep))
    last = const(np.array(shape[axis] - 1, dtype=np.int64), "int64") if isinstance(shape[axis], int) else None
    if last is None:
        raise node.fail("select_last_index needs a static dimension on the reduced axis")
    return node.emit(relax_op.subtract(last, found))


register("ArgMax", "ArgMin")(_arg_reduce)


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


# ---------------------------------------------------------------- converters: indexing, scatter, search
def _scalar_input(node: OnnxNode, i: int, what: str) -> int:
    """A one-element constant input (an axis, k...) as an int."""
    values = node.ints(i, what)
    if len(values) != 1:
        raise node.fail(f"the {what} input must hold one value, got {len(values)}")
    return values[0]


@register("Einsum")
def _einsum(node: OnnxNode) -> Value:
    tensors = [node.tensor(i) for i in range(node.num_inputs) if node.has(i)]
    equation = str(node.required("equation")).replace(" ", "")
    return node.emit(relax_op.einsum(tensors, subscripts=equation))


# ONNX reduction attribute -> Relax's (scatter_nd, scatter_elements), with the opset that added it.
_SCATTER_REDUCTIONS = {"none": ("update", 11), "add": ("add", 16), "mul": ("mul", 16), "min": ("min", 18),
                       "max": ("max", 18)}


def _scatter_reduction(node: OnnxNode) -> str:
    reduction = node.attr("reduction", "none")
    if reduction not in _SCATTER_REDUCTIONS or node.opset < _SCATTER_REDUCTIONS[reduction][1]:
        raise node.fail(f"reduction {reduction!r} is not supported at opset {node.opset}")
    return _SCATTER_REDUCTIONS[reduction][0]


@register("ScatterND")
def _scatter_nd(node: OnnxNode) -> Value:
    reduction = _scatter_reduction(node)
    return node.emit(relax_op.scatter_nd(node.tensor(0), node.tensor(1), node.tensor(2), reduction=reduction))


@register("ScatterElements")
def _scatter_elements(node: OnnxNode) -> Value:
    reduction = _scatter_reduction(node)
    return node.emit(relax_op.scatter_elements(node.tensor(0), node.tensor(1), node.tensor(2),
                                               axis=int(node.attr("axis", 0)), reduction=reduction))


@register("GatherND")
def _gather_nd(node: OnnxNode) -> Value:
    return node.emit(relax_op.gather_nd(node.tensor(0), node.tensor(1), batch_dims=int(node.attr("batch_dims", 0))))


@register("GatherElements")
def _gather_elements(node: OnnxNode) -> Value:
    return node.emit(relax_op.gather_elements(node.tensor(0), node.tensor(1), axis=int(node.attr("axis", 0))))


@register("CumSum")
def _cumsum(node: OnnxNode) -> Value:
    x = node.tensor(0)
    axis = normalize_axis(_scalar_input(node, 1, "axis"), len(node.g.shape_of(x)), node)
    reverse = bool(node.attr("reverse", 0))
    if reverse:  # a reversed scan is the scan of the flipped axis, flipped back
        x = node.emit(relax_op.flip(x, axis=axis))
    out = node.emit(relax_op.cumsum(x, axis=axis, exclusive=bool(node.attr("exclusive", 0))))
    return node.emit(relax_op.flip(out, axis=axis)) if reverse else out


@register("Trilu")
def _trilu(node: OnnxNode) -> Value:
    k = _scalar_input(node, 1, "k") if node.has(1) else 0
    make = relax_op.triu if node.attr("upper", 1) else relax_op.tril
    return node.emit(make(node.tensor(0), PrimValue(tir.IntImm("int64", k))))


@register("Tile")
def _tile(node: OnnxNode) -> Value:
    return node.emit(relax_op.tile(node.tensor(0), repeats=node.ints(1, "repeats")))


@register("TopK")
def _topk(node: OnnxNode) -> Value:
    # k is an attribute before opset 10, an input after; largest and sorted came with opset 11.
    k = int(node.required("k")) if node.opset < 10 else _scalar_input(node, 1, "k")
    # sorted=0 leaves the order unspecified, so the sorted result is a valid answer.
    both = node.emit(relax_op.topk(node.tensor(0), k=k, axis=int(node.attr("axis", -1)), ret_type="both",
                                   largest=bool(node.attr("largest", 1)), dtype="int64"))
    return [node.emit(TupleGetItem(both, 0)), node.emit(TupleGetItem(both, 1))]


# ---------------------------------------------------------------- converters: creating and splitting
def _broadcast_dims(node: OnnxNode, shape: Sequence[Any], target: Sequence[Any]) -> list[Any]:
    """Expand's output shape: ``shape`` and ``target`` broadcast both ways, aligned at the right."""
    rank = max(len(shape), len(target))
    a = [1] * (rank - len(shape)) + list(shape)
    b = [1] * (rank - len(target)) + list(target)
    out = []
    for x, y in zip(a, b):
        if isinstance(y, int) and y == 1:
            out.append(x)
        elif isinstance(x, int) and x == 1:
            out.append(y)
        elif isinstance(x, int) and isinstance(y, int) and x != y:
            raise node.fail(f"shape {list(shape)} cannot be expanded to {list(target)}")
        else:
            out.append(x)
    return out


@register("Expand")
def _expand(node: OnnxNode) -> Value:
    x = node.tensor(0)
    target = int_list(node.const(1, "shape"))
    return node.emit(relax_op.broadcast_to(x, _broadcast_dims(node, node.g.shape_of(x), target)))


def _fold_expand(node: OnnxNode, x: np.ndarray, shape: np.ndarray) -> list[np.ndarray] | None:
    if x.dtype == object or shape.dtype == object:
        return None
    return [np.broadcast_to(x, _broadcast_dims(node, x.shape, int_list(shape))).copy()]


@register("Range")
def _range(node: OnnxNode) -> Value:
    raise node.fail("start, limit and delta must be constants (a run-time Range is not supported)")


def _fold_range(node: OnnxNode, start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> list[np.ndarray] | None:
    if any(a.dtype == object for a in (start, limit, delta)):
        return None
    return [np.arange(start.item(), limit.item(), delta.item()).astype(start.dtype)]


@register("ConstantOfShape")
def _constant_of_shape(node: OnnxNode) -> Value:
    value = node.attr("value")
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    dims = int_list(node.const(0, "shape"))
    if all(isinstance(d, int) for d in dims):
        return np.full(dims, fill[0], dtype=fill.dtype)
    # Symbolic dimensions: the filled tensor is built at run time.
    dtype = from_numpy_dtype(fill.dtype)
    return node.emit(relax_op.full(ShapeExpr(dims), const(fill.reshape(()), dtype), dtype=dtype))


def _split_sizes(node: OnnxNode, dim: Any, count: int) -> list[int] | int:
    """The sizes of Split's outputs along the axis, or their number when they are equal."""
    if node.opset >= 13 and node.has(1):
        sizes = node.ints(1, "split")
    elif node.opset < 13 and node.attr("split") is not None:
        sizes = [int(v) for v in node.attr("split")]
    else:
        parts = int(node.attr("num_outputs", count))
        if isinstance(dim, int) and dim % parts:
            if node.opset < 18:
                raise node.fail(f"an axis of length {dim} does not split into {parts} equal parts")
            chunk = -(-dim // parts)  # opset 18: equal chunks, the last one smaller
            sizes = [chunk] * (parts - 1) + [dim - chunk * (parts - 1)]
        else:
            return parts
    if isinstance(dim, int) and sum(sizes) != dim:
        raise node.fail(f"split sizes {sizes} do not add up to the axis length {dim}")
    return sizes


@register("Split")
def _split(node: OnnxNode) -> Value:
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    axis = normalize_axis(int(node.attr("axis", 0)), len(shape), node)
    sizes = _split_sizes(node, shape[axis], len(node.proto.output))
    # Relax takes the number of equal parts or the split points.
    sections = sizes if isinstance(sizes, int) else list(np.cumsum(sizes[:-1]).tolist())
    parts = node.emit(relax_op.split(x, indices_or_sections=sections, axis=axis))
    count = sizes if isinstance(sizes, int) else len(sizes)
    return [node.emit(TupleGetItem(parts, i)) for i in range(count)]


FOLDERS.update({"Expand": _fold_expand, "Range": _fold_range})


@register("Size")
def _size(node: OnnxNode) -> Value:
    # Like Shape, known at import time (a symbolic size stays symbolic).
    return as_array(as_dim(dim_product(node.shape(0))))


@register("NonZero")
def _nonzero(node: OnnxNode) -> Value:
    return node.emit(relax_op.nonzero(node.tensor(0)))


FOLDERS["NonZero"] = lambda node, x: [np.array(np.nonzero(x), dtype=np.int64)] if x.dtype != object else None


@register("OneHot")
def _one_hot(node: OnnxNode) -> Value:
    indices = node.tensor(0)
    depth = node.const(1, "depth").reshape(-1)
    values = node.const(2, "values").reshape(-1)
    if depth.dtype == object or len(values) != 2:
        raise node.fail("depth must be a number and values a pair (off, on)")
    depth = int(depth[0])
    dtype = from_numpy_dtype(values.dtype)
    imm = (lambda v: tir.FloatImm(dtype, float(v))) if values.dtype.kind == "f" else \
        (lambda v: tir.IntImm(dtype, int(v)))
    # ONNX counts negative indices from the end of the depth; Relax leaves them all off.
    idx_dtype = node.g.dtype_of(indices)
    negative = node.emit(relax_op.less(indices, const(np.array(0, idx_dtype), idx_dtype)))
    shifted = node.emit(relax_op.add(indices, const(np.array(depth, idx_dtype), idx_dtype)))
    indices = node.emit(relax_op.where(negative, shifted, indices))
    return node.emit(relax_op.one_hot(indices, PrimValue(imm(values[1])), PrimValue(imm(values[0])), depth=depth,
                                      axis=int(node.attr("axis", -1))))


@register("Hardmax")
def _hardmax(node: OnnxNode) -> Value:
    # one_hot(argmax) along the axis (opset 13; before, the input is coerced to 2-D as in Softmax).
    x = node.tensor(0)
    shape = node.g.shape_of(x)
    if node.opset < 13:
        raise node.fail("Hardmax before opset 13 (2-D coercion) is not supported")
    axis = normalize_axis(int(node.attr("axis", -1)), len(shape), node)
    if not isinstance(shape[axis], int):
        raise node.fail("needs a static dimension on the axis")
    dtype = node.g.dtype_of(x)
    top = node.emit(relax_op.argmax(x, axis=axis, keepdims=False))
    return node.emit(relax_op.one_hot(top, PrimValue(tir.FloatImm(dtype, 1.0)), PrimValue(tir.FloatImm(dtype, 0.0)),
                                      depth=shape[axis], axis=axis))


@register("EyeLike")
def _eye_like(node: OnnxNode) -> Value:
    x = node.tensor(0)
    dtype = node.imp.elem_dtype(node.attr("dtype")) if node.attr("dtype") is not None else node.g.dtype_of(x)
    return node.emit(relax_op.eye_like(x, PrimValue(tir.IntImm("int64", int(node.attr("k", 0)))), dtype=dtype))


@register("ReverseSequence")
def _reverse_sequence(node: OnnxNode) -> Value:
    return node.emit(relax_op.reverse_sequence(node.tensor(0), node.tensor(1),
                                               seq_axis=int(node.attr("time_axis", 0)),
                                               batch_axis=int(node.attr("batch_axis", 1))))
