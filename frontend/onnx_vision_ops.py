"""ONNX converters of the image and detection ops: Resize, GridSample, AffineGrid (``R.image.*``),
RoiAlign and NonMaxSuppression (``R.vision.*``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tvmlite.frontend.onnx_node import OnnxNode, Value, register
from tvmlite.ir.op_api import TupleGetItem, const
from tvmlite.ir.op_api import op as relax_op
from tvmlite.ir.relax import Expr

# ONNX Resize's modes -> R.image.resize's method; its nearest_mode is resize's rounding_method.
_RESIZE_METHODS = {"nearest": "nearest_neighbor", "linear": "linear", "cubic": "cubic"}
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                     "tf_crop_and_resize")


def _resize_sizes(node: OnnxNode, in_shape: tuple[Any, ...]) -> list[int]:
    """The output's shape from the ``sizes`` input, or ``floor(input * scales)``."""
    scales_at, sizes_at = (1, None) if node.opset < 11 else (2, 3)
    if sizes_at is not None and node.has(sizes_at) and node.const(sizes_at, "sizes").size:
        sizes = node.ints(sizes_at, "sizes")
    elif node.has(scales_at):
        scales = [float(s) for s in np.asarray(node.const(scales_at, "scales")).reshape(-1)]
        if not all(isinstance(d, int) for d in in_shape):
            raise node.fail("scales need a static input shape (give `sizes` for symbolic dimensions)")
        sizes = [int(np.floor(d * s)) for d, s in zip(in_shape, scales)] if len(scales) == len(in_shape) else []
    else:
        raise node.fail("one of the scales and sizes inputs must be given")
    axes = node.attr("axes")
    if axes is not None:  # opset 18: sizes of the listed axes only
        full = list(in_shape)
        for axis, size in zip(axes, sizes):
            full[int(axis) % len(in_shape)] = size
        sizes = full
    if len(sizes) != len(in_shape):
        raise node.fail(f"expected {len(in_shape)} sizes or scales (one per axis), got {len(sizes)}")
    return sizes


@register("Resize")
def _resize(node: OnnxNode) -> Value:
    x = node.tensor(0)
    in_shape = node.shape(0)
    rank = len(in_shape)
    if rank not in (4, 5):
        raise node.fail(f"only 4-D (NCHW) and 5-D (NCDHW) inputs are supported, got rank {rank}")
    mode = node.attr("mode", "nearest")
    if mode not in _RESIZE_METHODS:
        raise node.fail(f"mode {mode!r} is not one of {', '.join(_RESIZE_METHODS)}")
    # opset 10's Resize is Upsample's: asymmetric coordinates, nearest rounding down
    default_coord, default_nearest = ("asymmetric", "floor") if node.opset < 11 else ("half_pixel", "round_prefer_floor")
    coord = node.attr("coordinate_transformation_mode", default_coord)
    if coord not in _COORDINATE_MODES:
        raise node.fail(f"coordinate_transformation_mode {coord!r} is not supported (supported: "
                        f"{', '.join(_COORDINATE_MODES)})")
    nearest = node.attr("nearest_mode", default_nearest)
    if nearest not in _NEAREST_MODES:
        raise node.fail(f"nearest_mode {nearest!r} is not one of {', '.join(_NEAREST_MODES)}")
    if node.attr("antialias", 0):
        raise node.fail("antialias=1 is not supported")
    if node.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise node.fail("keep_aspect_ratio_policy other than 'stretch' is not supported")
    sizes = _resize_sizes(node, in_shape)
    if list(sizes[:2]) != list(in_shape[:2]):
        raise node.fail(f"only the spatial axes can be resized: the input's batch and channels {list(in_shape[:2])} "
                        f"would become {list(sizes[:2])}")
    spatial = rank - 2
    roi: tuple[float, ...] = ()
    if coord == "tf_crop_and_resize":
        if node.opset < 11 or not node.has(1):
            raise node.fail("tf_crop_and_resize needs the roi input")
        values = [float(v) for v in np.asarray(node.const(1, "roi")).reshape(-1)]
        if len(values) != 2 * rank:
            raise node.fail(f"the roi needs {2 * rank} values (starts, then ends, of every axis), got {len(values)}")
        starts, ends = values[2:rank], values[rank + 2:]
        if spatial == 3:  # resize3d reads its roi from the W axis inwards, as TVM's
            starts, ends = starts[::-1], ends[::-1]
        roi = (*starts, *ends)
    attrs = dict(method=_RESIZE_METHODS[mode], coordinate_transformation_mode=coord, rounding_method=nearest,
                 cubic_alpha=float(node.attr("cubic_coeff_a", -0.75)),
                 cubic_exclude=int(node.attr("exclude_outside", 0)),
                 extrapolation_value=float(node.attr("extrapolation_value", 0.0)))
    if roi:
        attrs["roi"] = roi
    make = relax_op.image.resize2d if spatial == 2 else relax_op.image.resize3d
    layout = "NCHW" if spatial == 2 else "NCDHW"
    return node.emit(make(x, tuple(sizes[2:]), layout=layout, **attrs))


# GridSample's modes: opset 16 names, then opset 20's
_GRID_METHODS = {"bilinear": "bilinear", "linear": "bilinear", "nearest": "nearest", "bicubic": "bicubic",
                 "cubic": "bicubic"}


@register("GridSample")
def _grid_sample(node: OnnxNode) -> Value:
    rank = len(node.shape(0))
    if rank not in (4, 5):
        raise node.fail(f"only 4-D (NCHW) and 5-D (NCDHW) inputs are supported, got rank {rank}")
    mode = node.attr("mode", "linear" if node.opset >= 20 else "bilinear")
    if mode not in _GRID_METHODS:
        raise node.fail(f"mode {mode!r} is not one of {', '.join(_GRID_METHODS)}")
    padding = node.attr("padding_mode", "zeros")
    grid = node.tensor(1)
    align_corners = bool(node.attr("align_corners", 0))
    if padding == "border" and _GRID_METHODS[mode] == "bicubic":
        # ONNX moves a sampling point outside [-1, 1] to the outer pixel centre before taking its 4x4
        # taps (each tap then clamped), where R.image.grid_sample (PyTorch's) clamps only the taps
        sizes = node.shape(0)[2:][::-1]  # the grid's last axis is x, y[, z]
        if not all(isinstance(d, int) for d in sizes):
            raise node.fail("bicubic sampling with border padding needs static spatial sizes")
        centre = np.array([1.0 if align_corners else 1.0 - 1.0 / d for d in sizes], node.dtype(1))
        one = const(1.0, node.dtype(1))
        above = node.emit(relax_op.where(node.emit(relax_op.greater(grid, one)), const(centre, node.dtype(1)), grid))
        below = node.emit(relax_op.less(grid, node.emit(relax_op.negative(one))))
        grid = node.emit(relax_op.where(below, const(-centre, node.dtype(1)), above))
    # ONNX's grid is (N, H', W', 2) with x first; R.image.grid_sample's is (N, 2, H', W')
    grid = node.emit(relax_op.permute_dims(grid, [0, rank - 1, *range(1, rank - 1)]))
    return node.emit(relax_op.image.grid_sample(node.tensor(0), grid, method=_GRID_METHODS[mode],
                                                layout="NCHW" if rank == 4 else "NCDHW", padding_mode=padding,
                                                align_corners=align_corners))


@register("AffineGrid")
def _affine_grid(node: OnnxNode) -> Value:
    size = node.ints(1, "size")
    if len(size) not in (4, 5):
        raise node.fail(f"size must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got {len(size)}")
    grid = node.emit(relax_op.image.affine_grid(node.tensor(0), tuple(size[2:]),
                                                align_corners=bool(node.attr("align_corners", 0))))
    rank = len(size)  # R.image.affine_grid's (N, 2, H, W) -> ONNX's (N, H, W, 2)
    return node.emit(relax_op.permute_dims(grid, [0, *range(2, rank), 1]))


@register("RoiAlign")
def _roi_align(node: OnnxNode) -> Value:
    x, rois = node.tensor(0), node.tensor(1)
    dtype = node.dtype(1)
    scale = float(node.attr("spatial_scale", 1.0))
    # opset 16's default half_pixel shifts the boxes by half a pixel and does not enlarge them to one
    # pixel: R.vision.roi_align's aligned=True minus the shift; opset 10's boxes are output_half_pixel
    coord = node.attr("coordinate_transformation_mode", "half_pixel" if node.opset >= 16 else "output_half_pixel")
    if coord not in ("half_pixel", "output_half_pixel"):
        raise node.fail(f"coordinate_transformation_mode {coord!r} is not one of half_pixel, output_half_pixel")
    aligned = coord == "half_pixel"
    if aligned:
        rois = node.emit(relax_op.subtract(rois, const(0.5 / scale, dtype)))
    batch = node.emit(relax_op.expand_dims(node.emit(relax_op.astype(node.tensor(2), dtype)), axis=[1]))
    boxes = node.emit(relax_op.concat([batch, rois], axis=1))
    mode = node.attr("mode", "avg")
    if mode != "avg":  # ONNX's max is over each sample's weighted corners, R.vision.roi_align's over samples
        raise node.fail(f"mode {mode!r} is not supported (only avg: ONNX's max takes the largest weighted corner "
                        f"of each sample, which R.vision.roi_align's max does not compute)")
    pooled = (int(node.attr("output_height", 1)), int(node.attr("output_width", 1)))
    return node.emit(relax_op.vision.roi_align(x, boxes, pooled, scale, sample_ratio=int(node.attr("sampling_ratio", 0)),
                                               aligned=aligned, mode=mode))


def _nms_scalar(node: OnnxNode, i: int, dtype: str, default: float) -> Expr:
    """NonMaxSuppression's optional one-value inputs as a scalar tensor."""
    if not node.has(i):
        return const(default, dtype)
    value = node.value(i)
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise node.fail(f"input {i} must hold one value, got {value.size}")
        return const(np.asarray(value, dtype).reshape(()), dtype)
    return node.emit(relax_op.reshape(node.tensor(i), ()))


def _corner_boxes(node: OnnxNode, boxes: Expr) -> Expr:
    """center_point_box=1's ``[x_center, y_center, width, height]`` as corners ``[y1, x1, y2, x2]``."""
    def part(begin: int) -> Expr:
        return node.emit(relax_op.strided_slice(boxes, axes=[2], begin=[begin], end=[begin + 2]))

    centre_xy, size_wh = part(0), part(2)
    half = node.emit(relax_op.multiply(size_wh, const(0.5, node.dtype(0))))
    low = node.emit(relax_op.subtract(centre_xy, half))
    high = node.emit(relax_op.add(centre_xy, half))
    return node.emit(relax_op.concat([low, high], axis=2))  # x1, y1, x2, y2: IoU is the same


@register("NonMaxSuppression")
def _non_max_suppression(node: OnnxNode) -> Value:
    boxes = node.tensor(0)
    if int(node.attr("center_point_box", 0)):
        boxes = _corner_boxes(node, boxes)
    score_dtype = node.dtype(1)
    # a missing score threshold keeps every box
    nms = node.emit(relax_op.vision.all_class_non_max_suppression(
        boxes, node.tensor(1), _nms_scalar(node, 2, "int64", 0), _nms_scalar(node, 3, score_dtype, 0.0),
        _nms_scalar(node, 4, score_dtype, -np.inf), output_format="onnx"))
    # the selected rows, then zeros: keep the first `total` of them (a data-dependent shape, as in TVM)
    rows, total = node.emit(TupleGetItem(nms, 0)), node.emit(TupleGetItem(nms, 1))
    return node.emit(relax_op.dynamic_strided_slice(rows, const(np.array([0, 0]), "int64"),
                                                    node.emit(relax_op.concat([total, const(np.array([3]), "int64")],
                                                                              axis=0)),
                                                    const(np.array([1, 1]), "int64")))
