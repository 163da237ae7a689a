"""The vision family (``R.vision.*``, issue 16): roi_align, roi_pool, each declared with its legalization
(``topi/vision.py``)."""
from __future__ import annotations

from typing import Any

from .. import topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, format_shape, int64, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.node import Map
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ..ir.op_api import call_tir
from ..ir.struct_info import sinfo_of
from ..ir.stmt_functor import substitute
from ..te.expr import expr_vars
from ._common import op_name, tensor_arg, tensor_like, to_bool, to_float, to_int, to_n_tuple
from .image import _one_of
from .legalization import register_legalize


def _pooled_size(value: Any) -> tuple[int, int]:
    """One int or two: the (height, width) of each ROI's pooled output."""
    size = to_n_tuple(2)(value)
    if any(v <= 0 for v in size):
        raise OpError(f"pooled_size must be positive, got {list(size)}")
    return size


def _rois(call: rx.Call, x: rx.TensorStructInfo) -> rx.TensorStructInfo:
    """The ``(num_roi, 5)`` box tensor (``batch_index, x1, y1, x2, y2``) in the data's dtype."""
    rois = tensor_arg(call, 1)
    if rois.ndim not in (-1, 2):
        raise OpError(f"{op_name(call)}: the rois must be 2-D (num_roi, 5), got {rois.ndim}-D", 1)
    if rois.shape is not None and as_const_int(rois.shape[1]) not in (None, 5):
        raise OpError(f"{op_name(call)}: the rois must be (num_roi, 5) boxes [batch_index, x1, y1, x2, y2], "
                      f"got {format_shape(rois.shape)}", 1)
    if "void" not in (x.dtype, rois.dtype) and x.dtype != rois.dtype:
        raise OpError(f"{op_name(call)}: the rois must have the data's dtype {x.dtype}, got {rois.dtype}", 1)
    if x.dtype != "void" and not x.dtype.startswith(("float", "bfloat")):
        raise OpError(f"{op_name(call)}: expected float data, got dtype {x.dtype}", 0)
    return rois


def _pooled_sinfo(call: rx.Call) -> rx.StructInfo:
    """``(num_roi, C, pooled_h, pooled_w)`` (NHWC: ``(num_roi, pooled_h, pooled_w, C)``)."""
    x = tensor_arg(call, 0)
    if x.ndim not in (-1, 4):
        raise OpError(f"{op_name(call)}: expected 4-D data ({call.attrs['layout']}), got {x.ndim}-D", 0)
    rois = _rois(call, x)
    if x.shape is None or rois.shape is None:
        return tensor_like(x, None, ndim=4)
    ph, pw = (int64(v) for v in call.attrs["pooled_size"])
    if call.attrs["layout"] == "NCHW":
        return tensor_like(x, [rois.shape[0], x.shape[1], ph, pw])
    return tensor_like(x, [rois.shape[0], ph, pw, x.shape[3]])


# ---------------------------------------------------------------- roi_align
@register_op("relax.vision.roi_align", inputs=("data", "rois"),
             attrs=(AttrField("pooled_size", convert=_pooled_size), AttrField("spatial_scale", convert=to_float),
                    AttrField("sample_ratio", -1, to_int), AttrField("aligned", False, to_bool),
                    AttrField("layout", "NCHW", _one_of(("NCHW", "NHWC"), "layout")),
                    AttrField("mode", "avg", _one_of(("avg", "max"), "mode"))),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _roi_align(call: rx.Call) -> rx.StructInfo:
    """Each ROI's bins, bilinearly sampled and averaged (or maximised)."""
    return _pooled_sinfo(call)


@register_legalize("relax.vision.roi_align")
def _legalize_roi_align(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's block ``compute`` over a fixed sampling grid; an adaptive grid (``sample_ratio <= 0``)
    depends on each ROI, so its kernel is built with the grid loops inside one block."""
    a = call.attrs
    if a["sample_ratio"] > 0:
        return bb.call_te(topi.vision.roi_align, call.args[0], call.args[1], list(a["pooled_size"]),
                          a["spatial_scale"], a["sample_ratio"], a["aligned"], a["layout"], a["mode"],
                          primfunc_name_hint="roi_align")
    return _kernel_call(bb, call, "roi_align", ("data", "rois"), ("compute",), lambda data, rois, out: (
        topi.vision.roi_align_kernel(data, rois, out, a["pooled_size"], a["spatial_scale"], a["aligned"],
                                     a["layout"], a["mode"])))


def _kernel_call(bb: BlockBuilder, call: rx.Call, name: str, in_names: tuple[str, ...], out_names: tuple[str, ...],
                 build: Any) -> rx.Expr:
    """``R.call_tir`` of a kernel ``build(*inputs, *outputs)`` writes directly (one opaque block of
    loops, as TVM's ir_builder kernels); the call stays when a shape is unknown."""
    out_sinfo = sinfo_of(call)
    outs = list(out_sinfo.fields) if isinstance(out_sinfo, rx.TupleStructInfo) else [out_sinfo]
    sinfos = [sinfo_of(x) for x in call.args]
    if any(not isinstance(s, rx.TensorStructInfo) or s.shape is None for s in (*sinfos, *outs)):
        return call
    copies: dict[tir.Var, tir.Var] = {}  # the kernel has its own copies of the caller's sizes
    for s in sinfos:
        for d in s.shape:  # type: ignore[union-attr]
            for v in expr_vars(d):
                copies.setdefault(v, tir.Var(v.name, v.dtype))
    names = [x.name_hint if isinstance(x, rx.Var) else n for x, n in zip(call.args, in_names)]
    bufs = [topi.vision.make_buffer(n, s.dtype, tuple(substitute(d, copies) for d in s.shape))  # type: ignore
            for n, s in zip(names, sinfos)]
    bufs += [topi.vision.make_buffer(n, s.dtype, tuple(substitute(d, copies) for d in s.shape))  # type: ignore
             for n, s in zip(out_names, outs)]
    body = build(*bufs)
    params = tuple(_param(b) for b in bufs)
    func = tir.PrimFunc(params, body, None, Map(zip(params, bufs)), Map({"tir.noalias": True}))
    return call_tir(bb.add_func(func, name), list(call.args), outs)


def _param(buf: tir.Buffer) -> tir.Var:
    """A buffer parameter: inline ``T.Buffer`` for constant shapes, else a handle (``var_<name>``)."""
    if all(isinstance(d, tir.IntImm) for d in buf.shape):
        return tir.Var(buf.name, "handle", tir.PointerType(buf.dtype, "global"))
    return tir.Var(f"var_{buf.name}", "handle")


# ---------------------------------------------------------------- roi_pool
@register_op("relax.vision.roi_pool", inputs=("data", "rois"),
             attrs=(AttrField("pooled_size", convert=_pooled_size), AttrField("spatial_scale", convert=to_float),
                    AttrField("layout", "NCHW", _one_of(("NCHW",), "layout"))),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _roi_pool(call: rx.Call) -> rx.StructInfo:
    """Each ROI's bins, max-pooled (NCHW only, as TVM)."""
    return _pooled_sinfo(call)


@register_legalize("relax.vision.roi_pool")
def _legalize_roi_pool(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's blocks ``compute`` (masked maximum) and ``compute_1`` (0 for an empty bin)."""
    a = call.attrs
    return bb.call_te(topi.vision.roi_pool, call.args[0], call.args[1], list(a["pooled_size"]), a["spatial_scale"],
                      primfunc_name_hint="roi_pool")


# ---------------------------------------------------------------- get_valid_counts
def _boxes_3d(call: rx.Call) -> rx.TensorStructInfo:
    """The ``(batch, num_anchors, elem_length)`` box data."""
    data = tensor_arg(call, 0)
    if data.ndim not in (-1, 3):
        raise OpError(f"{op_name(call)}: expects 3-D data (batch_size, num_anchors, elem_length), got {data.ndim}-D", 0)
    return data


def _box_fields(call: rx.Call, data: rx.TensorStructInfo, **fields: int) -> None:
    """OpError when a field index (score_index...) lies past a known ``elem_length``."""
    length = as_const_int(data.shape[2]) if data.shape is not None else None
    for name, index in fields.items():
        if index < -1 or (length is not None and index >= length):
            raise OpError(f"{op_name(call)}: {name} {index} is out of range for boxes of {length} values", name)


@register_op("relax.vision.get_valid_counts", inputs=("data",),
             attrs=(AttrField("score_threshold", 0.0, to_float), AttrField("id_index", 0, to_int),
                    AttrField("score_index", 1, to_int)),
             pattern=OpPattern.OPAQUE)
def _get_valid_counts(call: rx.Call) -> rx.StructInfo:
    """``(valid_count (batch,) int32, out_tensor like data, out_indices (batch, num_anchors) int32)``."""
    data = _boxes_3d(call)
    a = call.attrs
    _box_fields(call, data, id_index=a["id_index"], score_index=a["score_index"])
    if a["score_index"] < 0:
        raise OpError(f"{op_name(call)}: score_index must not be negative, got {a['score_index']}", "score_index")
    if data.shape is None:
        return rx.TupleStructInfo((tensor_like(data, None, "int32", 1), data, tensor_like(data, None, "int32", 2)))
    b, n, _ = data.shape
    return rx.TupleStructInfo((tensor_like(data, [b], "int32"), data, tensor_like(data, [b, n], "int32")))


@register_legalize("relax.vision.get_valid_counts")
def _legalize_get_valid_counts(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's sequential kernel (block ``get_valid_counts``, a parallel loop over the batch)."""
    a = call.attrs
    return _kernel_call(bb, call, "get_valid_counts", ("data",), ("valid_count", "out_tensor", "out_indices"),
                        lambda data, count, out, idx: topi.vision.get_valid_counts_kernel(
                            data, count, out, idx, a["score_threshold"], a["id_index"], a["score_index"]))


# ---------------------------------------------------------------- non_max_suppression
@register_op("relax.vision.non_max_suppression", inputs=("data", "valid_count", "indices"),
             attrs=(AttrField("max_output_size", -1, to_int), AttrField("iou_threshold", 0.5, to_float),
                    AttrField("force_suppress", False, to_bool), AttrField("top_k", -1, to_int),
                    AttrField("coord_start", 2, to_int), AttrField("score_index", 1, to_int),
                    AttrField("id_index", 0, to_int), AttrField("return_indices", True, to_bool),
                    AttrField("invalid_to_bottom", False, to_bool), AttrField("soft_nms_sigma", 0.0, to_float),
                    AttrField("score_threshold", 0.0, to_float)),
             pattern=OpPattern.OPAQUE)
def _non_max_suppression(call: rx.Call) -> rx.StructInfo:
    """With ``return_indices``, ``(box_indices (batch, num_anchors), valid_box_count (batch, 1))``
    int32, the decayed boxes first for soft-NMS; else the boxes themselves."""
    data = _boxes_3d(call)
    a = call.attrs
    _box_fields(call, data, score_index=a["score_index"], id_index=a["id_index"])
    length = as_const_int(data.shape[2]) if data.shape is not None else None
    if a["coord_start"] < 0 or (length is not None and a["coord_start"] + 4 > length):
        raise OpError(f"{op_name(call)}: coord_start {a['coord_start']} leaves no 4 coordinates in boxes of "
                      f"{length} values", "coord_start")
    if a["soft_nms_sigma"] < 0:
        raise OpError(f"{op_name(call)}: soft_nms_sigma must not be negative, got {a['soft_nms_sigma']}",
                      "soft_nms_sigma")
    count, indices = tensor_arg(call, 1), tensor_arg(call, 2)
    for i, t, nd, what in ((1, count, 1, "valid_count (batch,)"), (2, indices, 2, "indices (batch, num_anchors)")):
        if t.ndim not in (-1, nd):
            raise OpError(f"{op_name(call)}: {what} must be {nd}-D, got {t.ndim}-D", i)
        if t.dtype not in ("void", "int32"):
            raise OpError(f"{op_name(call)}: {what.split()[0]} must be int32, got {t.dtype}", i)
    if not a["return_indices"]:
        return data
    if data.shape is None:
        out = [tensor_like(data, None, "int32", 2), tensor_like(data, None, "int32", 2)]
    else:
        out = [tensor_like(data, data.shape[:2], "int32"), tensor_like(data, [data.shape[0], int64(1)], "int32")]
    return rx.TupleStructInfo(tuple(([data] if a["soft_nms_sigma"] > 0 else []) + out))


@register_legalize("relax.vision.non_max_suppression")
def _legalize_non_max_suppression(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Hard NMS or soft-NMS as TVM's kernels (block ``non_max_suppression``; the ranking, which TVM
    leaves to its ``argsort_nms`` library call, counted in the kernel)."""
    a = call.attrs
    if a["soft_nms_sigma"] > 0:
        outs = ("out_data", "out_box_indices", "out_valid_box_count") if a["return_indices"] else ("out_data",)
        return _kernel_call(bb, call, "non_max_suppression", ("data", "valid_count", "indices"), outs,
                            lambda data, count, indices, *out: topi.vision.soft_nms_kernel(
                                data, count, indices, out, a["max_output_size"], a["iou_threshold"],
                                a["force_suppress"], a["top_k"], a["coord_start"], a["score_index"], a["id_index"],
                                a["soft_nms_sigma"], a["score_threshold"]))
    outs = ("out_box_indices", "out_valid_box_count") if a["return_indices"] else ("out_data",)
    return _kernel_call(bb, call, "non_max_suppression", ("data", "valid_count", "indices"), outs,
                        lambda data, count, indices, *out: topi.vision.non_max_suppression_kernel(
                            data, count, indices, out, a["max_output_size"], a["iou_threshold"],
                            a["force_suppress"], a["top_k"], a["coord_start"], a["score_index"], a["id_index"],
                            a["return_indices"], a["invalid_to_bottom"]))


# ---------------------------------------------------------------- all_class_non_max_suppression
@register_op("relax.vision.all_class_non_max_suppression",
             inputs=("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"),
             attrs=(AttrField("output_format", "onnx", _one_of(("onnx", "tensorflow"), "output_format")),),
             pattern=OpPattern.OPAQUE)
def _all_class_nms(call: rx.Call) -> rx.StructInfo:
    """ONNX: ``(selected (batch * classes * boxes, 3) int64, total (1,) int64)``; TensorFlow:
    ``(indices (batch, classes * boxes, 2) int64, scores (batch, classes * boxes), counts (batch,) int64)``."""
    boxes, scores = tensor_arg(call, 0), tensor_arg(call, 1)
    for i, t, what in ((0, boxes, "boxes (batch, num_boxes, 4)"),
                       (1, scores, "scores (batch, num_classes, num_boxes)")):
        if t.ndim not in (-1, 3):
            raise OpError(f"{op_name(call)}: {what} must be 3-D, got {t.ndim}-D", i)
    if boxes.shape is not None and as_const_int(boxes.shape[2]) not in (None, 4):
        raise OpError(f"{op_name(call)}: boxes must hold 4 coordinates per box, got {format_shape(boxes.shape)}", 0)
    for i, want in ((2, "integer"), (3, "float"), (4, "float")):
        t = tensor_arg(call, i)
        if t.ndim not in (-1, 0, 1) or (t.dtype != "void" and (t.dtype.startswith("float") != (want == "float"))):
            raise OpError(f"{op_name(call)}: {_ACNMS_INPUTS[i]} must be a scalar {want} tensor, got "
                          f"{t.ndim}-D {t.dtype}", i)
    if boxes.shape is None or scores.shape is None:
        n = None
    else:
        b, c, n = scores.shape
    if call.attrs["output_format"] == "onnx":
        if n is None:
            return rx.TupleStructInfo((tensor_like(boxes, None, "int64", 2), tensor_like(boxes, [int64(1)], "int64")))
        return rx.TupleStructInfo((tensor_like(boxes, [simplify(tir.Mul(tir.Mul(b, c), n)), int64(3)], "int64"),
                                   tensor_like(boxes, [int64(1)], "int64")))
    if n is None:
        return rx.TupleStructInfo((tensor_like(boxes, None, "int64", 3), tensor_like(scores, None, ndim=2),
                                   tensor_like(boxes, None, "int64", 1)))
    return rx.TupleStructInfo((tensor_like(boxes, [b, simplify(tir.Mul(c, n)), int64(2)], "int64"),
                               tensor_like(scores, [b, simplify(tir.Mul(c, n))]), tensor_like(boxes, [b], "int64")))


_ACNMS_INPUTS = ("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold")


@register_legalize("relax.vision.all_class_non_max_suppression")
def _legalize_all_class_nms(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """One kernel (block ``all_class_nms``) writing the padded results the struct info declares (TVM
    0.27 ranks with its ``argsort`` library call and trims the ONNX rows with a dynamic slice)."""
    fmt = call.attrs["output_format"]
    outs = ("selected_indices", "num_total_detections") if fmt == "onnx" else \
        ("selected_indices", "selected_scores", "num_detections")
    return _kernel_call(bb, call, "all_class_non_max_suppression", _ACNMS_INPUTS, outs,
                        lambda boxes, scores, max_out, iou, thr, *out: topi.vision.all_class_nms_kernel(
                            boxes, scores, max_out, iou, thr, out, fmt))


# ---------------------------------------------------------------- multibox_transform_loc
def _variances(value: Any) -> tuple[float, float, float, float]:
    """Four floats: the x, y, w, h scales of the encodings."""
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        raise OpError(f"variances must be 4 floats (x, y, w, h), got {value!r}")
    return tuple(to_float(v) for v in value)  # type: ignore[return-value]


@register_op("relax.vision.multibox_transform_loc", inputs=("cls_pred", "loc_pred", "anchor"),
             attrs=(AttrField("clip", False, to_bool), AttrField("threshold", 0.0, to_float),
                    AttrField("variances", (1.0, 1.0, 1.0, 1.0), _variances),
                    AttrField("keep_background", True, to_bool), AttrField("apply_softmax", True, to_bool)),
             pattern=OpPattern.OPAQUE)
def _multibox_transform_loc(call: rx.Call) -> rx.StructInfo:
    """``(boxes (B, N, 4), scores (B, C, N))`` for class predictions ``(B, C, N)``, encodings
    ``(B, 4 N)`` and anchors ``(1, N, 4)`` of one dtype (TVM's checks where the sizes are known)."""
    cls, loc, anchor = (tensor_arg(call, i) for i in range(3))
    for i, t, nd, what in ((0, cls, 3, "cls_pred (B, C, N)"), (1, loc, 2, "loc_pred (B, 4 * N)"),
                           (2, anchor, 3, "anchor (1, N, 4)")):
        if t.ndim not in (-1, nd):
            raise OpError(f"{op_name(call)}: {what} must be {nd}-D, got {t.ndim}-D", i)
    dtypes = {t.dtype for t in (cls, loc, anchor)} - {"void"}
    if len(dtypes) > 1:
        raise OpError(f"{op_name(call)}: cls_pred, loc_pred and anchor must share one dtype, got "
                      f"{', '.join(t.dtype for t in (cls, loc, anchor))}", 1)
    if dtypes and not next(iter(dtypes)).startswith(("float", "bfloat")):
        raise OpError(f"{op_name(call)}: expected float tensors, got dtype {next(iter(dtypes))}", 0)
    if loc.shape is not None and as_const_int(loc.shape[1]) is not None and as_const_int(loc.shape[1]) % 4:
        raise OpError(f"{op_name(call)}: loc_pred's second dim must be divisible by 4, got "
                      f"{format_shape(loc.shape)}", 1)
    if cls.shape is None:
        return rx.TupleStructInfo((tensor_like(cls, None, ndim=3), tensor_like(cls, None, ndim=3)))
    b, _, n = cls.shape
    checks = []
    if loc.shape is not None:
        checks += [(loc.shape[0], b, 1, "loc_pred's batch"), (loc.shape[1], simplify(tir.Mul(n, int64(4))), 1,
                                                                 "loc_pred's second dim (4 * N)")]
    if anchor.shape is not None:
        checks += [(anchor.shape[0], int64(1), 2, "anchor's first dim"), (anchor.shape[1], n, 2, "anchor's N"),
                   (anchor.shape[2], int64(4), 2, "anchor's last dim")]
    for got, want, i, what in checks:
        g, w = as_const_int(got), as_const_int(want)
        if g is not None and w is not None and g != w:
            raise OpError(f"{op_name(call)}: {what} must be {w}, got {g}", i)
    return rx.TupleStructInfo((tensor_like(cls, [b, n, int64(4)]), cls))


@register_legalize("relax.vision.multibox_transform_loc")
def _legalize_multibox_transform_loc(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's chain of blocks (``T_reshape``, ``multibox_boxes``, ``T_softmax_*``, the threshold mask)."""
    a = call.attrs
    return bb.call_te(topi.vision.multibox_transform_loc, *call.args, a["clip"], a["threshold"], list(a["variances"]),
                      a["keep_background"], a["apply_softmax"], primfunc_name_hint="multibox_transform_loc")
