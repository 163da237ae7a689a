"""The vision family (issue 16): roi_align legalized as TVM's (block ``compute`` over a fixed
sampling grid; a kernel with per-ROI grid loops for adaptive sampling), compiled with LLVM and run
by the VM against numpy references (tests/vision_refs.py) for both modes, both layouts and every
float dtype; the legalized text pinned as TVM 0.27 prints it."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tvmlite  # noqa: E402
from tvmlite import relax  # noqa: E402
from tvmlite.passes import LegalizeOps  # noqa: E402
from tvmlite.testing import assert_round_trip  # noqa: E402
from test_compiled_ops import compile_and_run  # noqa: E402
import vision_refs  # noqa: E402

op = relax.op
rng = np.random.default_rng(1616)
FLOATS = ["float32", "float64", "float16"]


def one_binding(make, params):
    """``main(params)`` with one ``gv`` binding, as TVM's tests build it."""
    bb = relax.BlockBuilder()
    with bb.function("main", list(params)):
        out = bb.emit(make(*params))
        bb.emit_func_output(out)
    return bb.get()


def boxes(n, batch, size, dtype="float32"):
    """ROIs ``[batch_index, x1, y1, x2, y2]`` on a ``size`` image, some reaching past its edges."""
    x1, y1 = rng.uniform(-3, size * 0.7, (2, n))
    w, h = rng.uniform(0.2, size * 0.8, (2, n))
    return np.stack([rng.integers(0, batch, n), x1, y1, x1 + w, y1 + h], axis=1).astype(dtype)


def close(got, want, dtype):
    tol = 3e-2 if dtype == "float16" else 1e-4
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=tol, atol=tol)


# ---------------------------------------------------------------- roi_align
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roi_align_fixed_and_adaptive_sampling(dtype, mode):
    x = rng.uniform(-2, 2, (2, 3, 9, 8)).astype(dtype)
    rois = boxes(5, 2, 16, dtype)
    for pooled, scale, ratio, aligned in [((2, 2), 0.5, 2, False), ((3, 2), 0.5, -1, False),
                                          ((2, 3), 0.25, 1, True), ((1, 2), 0.5, 0, True)]:
        got = compile_and_run(lambda a, r: op.vision.roi_align(a, r, pooled, scale, sample_ratio=ratio,
                                                               aligned=aligned, mode=mode), [x, rois])
        close(got, vision_refs.roi_align(x, rois, pooled, scale, ratio, aligned, mode), dtype)


def test_roi_align_nhwc_and_symbolic_counts():
    x = rng.uniform(-2, 2, (2, 3, 9, 8)).astype("float32")
    rois = boxes(4, 2, 16)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    for ratio in (2, -1):
        got = compile_and_run(lambda a, r: op.vision.roi_align(a, r, 2, 0.5, sample_ratio=ratio, layout="NHWC"),
                              [nhwc, rois])
        close(got, vision_refs.roi_align(x, rois, (2, 2), 0.5, ratio).transpose(0, 2, 3, 1), "float32")
        got = compile_and_run(lambda a, r: op.vision.roi_align(a, r, (2, 3), 0.5, sample_ratio=ratio), [x, rois],
                              {0: {0: "n", 2: "h"}, 1: {0: "m"}})
        close(got, vision_refs.roi_align(x, rois, (2, 3), 0.5, ratio), "float32")


ROI_ALIGN_LEGALIZED_HEAD = '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def roi_align(x: T.Buffer((T.int64(1), T.int64(2), T.int64(6), T.int64(6)), "float32"), r: T.Buffer((T.int64(3), T.int64(5)), "float32"), compute: T.Buffer((T.int64(3), T.int64(2), T.int64(2), T.int64(2)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for i, c, ph, pw, rh, rw in T.grid(T.int64(3), T.int64(2), T.int64(2), T.int64(2), T.int64(2), T.int64(2)):
            with T.block("compute"):
                v_i, v_c, v_ph, v_pw, v_rh, v_rw = T.axis.remap("SSSSRR", [i, c, ph, pw, rh, rw])
'''

# TVM 0.27's first terms of the sum: the sample's position and its out-of-map test
ROI_ALIGN_UPDATE = (
    'compute[v_i, v_c, v_ph, v_pw] = compute[v_i, v_c, v_ph, v_pw] + T.if_then_else(r[v_i, T.int64(2)] * '
    'T.float32(0.5) + T.Cast("float32", v_ph) * (T.max(r[v_i, T.int64(4)] * T.float32(0.5) - r[v_i, T.int64(2)] * '
    'T.float32(0.5), T.float32(1.0)) / T.float32(2.0)) + (T.Cast("float32", v_rh) + T.float32(0.5)) * (T.max(r[v_i, '
    'T.int64(4)] * T.float32(0.5) - r[v_i, T.int64(2)] * T.float32(0.5), T.float32(1.0)) / T.float32(2.0)) / '
    'T.float32(2.0) < T.float32(-1.0) or ')


def test_roi_align_legalizes_as_tvm():
    x = relax.Var("x", relax.TensorStructInfo((1, 2, 6, 6), "float32"))
    r = relax.Var("r", relax.TensorStructInfo((3, 5), "float32"))
    mod = one_binding(lambda a, b: op.vision.roi_align(a, b, (2, 2), 0.5, sample_ratio=2), [x, r])
    assert ('R.vision.roi_align(x, r, pooled_size=[2, 2], spatial_scale=0.5, sample_ratio=2, aligned=False, '
            'layout="NCHW", mode="avg")') in mod.script()
    out = LegalizeOps()(mod)
    text = out.script()
    assert ROI_ALIGN_LEGALIZED_HEAD in text and "                " + ROI_ALIGN_UPDATE in text
    assert text.rstrip().endswith("/ T.float32(4.0)\n\n    @R.function\n    def main(x: R.Tensor((1, 2, 6, 6), "
                                  "dtype=\"float32\"), r: R.Tensor((3, 5), dtype=\"float32\")) -> R.Tensor((3, 2, 2, "
                                  "2), dtype=\"float32\"):\n        cls = Module\n        gv = R.call_tir(cls.roi_align, "
                                  "(x, r), out_sinfo=R.Tensor((3, 2, 2, 2), dtype=\"float32\"))\n        return gv")
    assert_round_trip(out)
    adaptive = LegalizeOps()(one_binding(lambda a, b: op.vision.roi_align(a, b, (2, 3), 0.5, mode="max"), [x, r]))
    assert_round_trip(adaptive)
    assert 'with T.block("roi_align"):' in adaptive.script()


# ---------------------------------------------------------------- roi_pool
@pytest.mark.parametrize("dtype", FLOATS)
def test_roi_pool_every_dtype(dtype):
    x = rng.uniform(-2, 2, (2, 3, 9, 8)).astype(dtype)
    rois = boxes(6, 2, 16, dtype)
    rois[0, 1:] = [40.0, 40.0, 50.0, 50.0]  # entirely off the map: every bin is empty
    for pooled, scale in [((2, 2), 0.5), ((3, 1), 0.25), ((4, 5), 1.0)]:
        got = compile_and_run(lambda a, r: op.vision.roi_pool(a, r, pooled, scale), [x, rois])
        close(got, vision_refs.roi_pool(x, rois, pooled, scale), dtype)
    got = compile_and_run(lambda a, r: op.vision.roi_pool(a, r, 2, 0.5), [x, rois], {0: {2: "h"}, 1: {0: "m"}})
    close(got, vision_refs.roi_pool(x, rois, (2, 2), 0.5), dtype)


def test_roi_pool_legalizes_as_tvm():
    x = relax.Var("x", relax.TensorStructInfo((1, 2, 6, 6), "float32"))
    r = relax.Var("r", relax.TensorStructInfo((3, 5), "float32"))
    mod = one_binding(lambda a, b: op.vision.roi_pool(a, b, (2, 3), 0.5), [x, r])
    assert 'R.vision.roi_pool(x, r, pooled_size=[2, 3], spatial_scale=0.5, layout="NCHW")' in mod.script()
    out = LegalizeOps()(mod)
    text = out.script()
    # TVM 0.27's two blocks: the masked maximum into compute_1, then 0 for an empty bin
    for line in ['compute_1 = T.alloc_buffer((T.int64(3), T.int64(2), T.int64(2), T.int64(3)))',
                 'for i, c, ph, pw, rh, rw in T.grid(T.int64(3), T.int64(2), T.int64(2), T.int64(3), T.int64(6), '
                 'T.int64(6)):', 'with T.block("compute"):',
                 'compute_1[v_i, v_c, v_ph, v_pw] = T.float32(-340282346638528859811704183484516925440.0)',
                 'with T.block("compute_1"):', 'T.writes(compute[v_i, v_c, v_ph, v_pw])',
                 'x[T.Cast("int64", r[v_i, T.int64(0)]), v_c, v_rh, v_rw], T.float32("-inf")))']:
        assert line in text, line
    assert_round_trip(out)


# ---------------------------------------------------------------- get_valid_counts
def detections(batch, anchors, classes=3, dtype="float32"):
    """``[class_id, score, x1, y1, x2, y2]`` rows, some with class -1 and ties in the scores."""
    cls = rng.integers(-1, classes, (batch, anchors, 1))
    score = rng.integers(0, 10, (batch, anchors, 1)) / 10
    xy = rng.uniform(0, 10, (batch, anchors, 2))
    wh = rng.uniform(0.5, 6, (batch, anchors, 2))
    return np.concatenate([cls, score, xy, xy + wh], axis=2).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_get_valid_counts_every_dtype(dtype):
    data = detections(2, 7, dtype=dtype)
    for threshold, id_index, score_index in [(0.3, 0, 1), (0.0, -1, 1), (0.5, 1, 0)]:
        got = compile_and_run(lambda d: op.vision.get_valid_counts(d, threshold, id_index, score_index), [data])
        want = vision_refs.get_valid_counts(data, threshold, id_index, score_index)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    got = compile_and_run(lambda d: op.vision.get_valid_counts(d, 0.3), [data], {0: {0: "b", 1: "n"}})
    for g, w in zip(got, vision_refs.get_valid_counts(data, 0.3)):
        np.testing.assert_array_equal(g, w)


# TVM 0.27's kernel (its ir_builder loops in one block)
GET_VALID_COUNTS_KERNEL = '''        with T.block("get_valid_counts"):
            T.reads()
            T.writes()
            for v in T.parallel(T.int64(2)):
                valid_count[v] = 0
                for v_1 in range(T.int64(5)):
                    if d[v, v_1, T.int64(1)] > T.float32(0.29999999999999999) and d[v, v_1, T.int64(0)] >= T.float32(0.0):
                        for v_2 in range(T.int64(6)):
                            out_tensor[v, valid_count[v], v_2] = d[v, v_1, v_2]
                        out_indices[v, valid_count[v]] = T.Cast("int32", v_1)
                        valid_count[v] = valid_count[v] + 1
                for v_1 in range(T.int64(5)):
                    if v_1 >= T.Cast("int64", valid_count[v]):
                        for v_2 in range(T.int64(6)):
                            out_tensor[v, v_1, v_2] = T.float32(-1.0)
                        out_indices[v, v_1] = -1
'''


def test_get_valid_counts_legalizes_as_tvm():
    d = relax.Var("d", relax.TensorStructInfo((2, 5, 6), "float32"))
    mod = one_binding(lambda a: op.vision.get_valid_counts(a, 0.3, 0, 1), [d])
    assert ('gv: R.Tuple(R.Tensor((2,), dtype="int32"), R.Tensor((2, 5, 6), dtype="float32"), R.Tensor((2, 5), '
            'dtype="int32")) = R.vision.get_valid_counts(d, score_threshold=0.29999999999999999, id_index=0, '
            'score_index=1)') in mod.script()
    out = LegalizeOps()(mod)
    assert GET_VALID_COUNTS_KERNEL in out.script()
    assert_round_trip(out)


# ---------------------------------------------------------------- non_max_suppression
def nms_inputs(dtype="float32", batch=2, anchors=8):
    """Detections with overlapping boxes of a few classes, their valid counts and original indices."""
    data = detections(batch, anchors, 2, dtype)
    data[..., 2:] = np.round(data[..., 2:]).astype(dtype)  # overlaps well away from the threshold
    count = np.array([anchors - 2, anchors][:batch], "int32")
    indices = np.tile(np.arange(anchors, dtype="int32")[::-1], (batch, 1))
    return data, count, np.ascontiguousarray(indices)


@pytest.mark.parametrize("dtype", FLOATS)
def test_non_max_suppression_every_dtype(dtype):
    data, count, indices = nms_inputs(dtype)
    for kw in [{}, {"iou_threshold": 0.2, "force_suppress": True}, {"top_k": 4, "max_output_size": 2},
               {"id_index": -1, "iou_threshold": 0.3}]:
        got = compile_and_run(lambda d, c, i: op.vision.non_max_suppression(d, c, i, **kw), [data, count, indices])
        want = vision_refs.non_max_suppression(data, count, indices, **kw)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    for bottom in (False, True):
        got = compile_and_run(lambda d, c, i: op.vision.non_max_suppression(
            d, c, i, return_indices=False, invalid_to_bottom=bottom, iou_threshold=0.3), [data, count, indices])
        np.testing.assert_array_equal(got, vision_refs.non_max_suppression(
            data, count, indices, iou_threshold=0.3, return_indices=False, invalid_to_bottom=bottom))


def test_non_max_suppression_after_get_valid_counts():
    data, _, _ = nms_inputs()
    d = relax.Var("d", relax.TensorStructInfo(data.shape, "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [d]):
        counted = bb.emit(op.vision.get_valid_counts(d, 0.25))
        parts = [bb.emit(relax.TupleGetItem(counted, k)) for k in (1, 0, 2)]
        out = bb.emit(op.vision.non_max_suppression(*parts, iou_threshold=0.4))
        bb.emit_func_output(out)
    vm = tvmlite.VirtualMachine(tvmlite.compile(bb.get(), target="llvm"), tvmlite.cpu())
    got = [o.numpy() for o in vm["main"](data)]
    count, boxes, indices = vision_refs.get_valid_counts(data, 0.25)
    for g, w in zip(got, vision_refs.non_max_suppression(boxes, count, indices, iou_threshold=0.4)):
        np.testing.assert_array_equal(g, w)


def test_non_max_suppression_legalizes_to_one_kernel():
    d = relax.Var("d", relax.TensorStructInfo((1, 5, 6), "float32"))
    c = relax.Var("c", relax.TensorStructInfo((1,), "int32"))
    i = relax.Var("i", relax.TensorStructInfo((1, 5), "int32"))
    mod = one_binding(lambda a, b, e: op.vision.non_max_suppression(a, b, e, top_k=3), [d, c, i])
    assert ('R.vision.non_max_suppression(d, c, i, max_output_size=-1, iou_threshold=0.5, force_suppress=False, '
            'top_k=3, coord_start=2, score_index=1, id_index=0, return_indices=True, invalid_to_bottom=False, '
            'soft_nms_sigma=0.0, score_threshold=0.0)') in mod.script()
    out = LegalizeOps()(mod)
    text = out.script()
    # TVM's steps: the ranked boxes copied (-1 past the kept count), then the suppression loops
    for line in ['with T.block("non_max_suppression"):', 'if T.Cast("int64", nkeep[T.int64(0)]) > T.int64(3):',
                 'out_data[b, j, e] = d[b, T.Cast("int64", out_buf[b, j]), e]',
                 'out_data[b, j, T.int64(1)] = T.float32(-1.0)',
                 'out_valid_box_count[b, T.int64(0)] = num_kept[T.int64(0)]']:
        assert line in text, line
    assert_round_trip(out)
    soft = one_binding(lambda a, b, e: op.vision.non_max_suppression(a, b, e, soft_nms_sigma=0.5), [d, c, i])
    assert "exp(T.float32(-1.0) *" in LegalizeOps()(soft).script()  # the decay exp(-iou^2 / (2 sigma))


# ---------------------------------------------------------------- all_class_non_max_suppression
def class_scores(batch, classes, anchors, dtype="float32"):
    """Boxes on a small grid (overlapping often) and per-class scores with ties."""
    corner = rng.integers(0, 6, (batch, anchors, 2))
    boxes = np.concatenate([corner, corner + rng.integers(1, 5, (batch, anchors, 2))], axis=2).astype(dtype)
    return boxes, (rng.integers(0, 10, (batch, classes, anchors)) / 10).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("output_format", ["onnx", "tensorflow"])
def test_all_class_non_max_suppression(dtype, output_format):
    boxes, scores = class_scores(2, 3, 6, dtype)
    for max_out, iou_threshold, score_threshold in [(2, 0.5, 0.1), (6, 0.3, 0.0), (0, 0.5, 0.0)]:
        args = [boxes, scores, np.array(max_out, "int64"), np.array(iou_threshold, dtype),
                np.array(score_threshold, dtype)]
        got = compile_and_run(lambda *a: op.vision.all_class_non_max_suppression(*a, output_format=output_format),
                              args)
        want = vision_refs.all_class_non_max_suppression(boxes, scores, max_out, dtype == "float16" and
                                                         float(np.float16(iou_threshold)) or iou_threshold,
                                                         float(getattr(np, dtype)(score_threshold)), output_format)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_all_class_non_max_suppression_matches_tvm():
    # TVM 0.27 (compiled and run): rows (batch, class, box), trimmed there to the total 4
    boxes = np.array([[[0, 0, 4, 4], [0.5, 0.5, 4, 4], [5, 5, 8, 8], [0, 0, 1, 1]]], "float32")
    scores = np.array([[[0.9, 0.8, 0.7, 0.05], [0.1, 0.6, 0.6, 0.3]]], "float32")
    args = [boxes, scores, np.array(2, "int64"), np.array(0.5, "float32"), np.array(0.1, "float32")]
    rows, total = compile_and_run(lambda *a: op.vision.all_class_non_max_suppression(*a), args)
    np.testing.assert_array_equal(total, [4])
    np.testing.assert_array_equal(rows[:4], [[0, 0, 0], [0, 0, 2], [0, 1, 1], [0, 1, 2]])
    assert not rows[4:].any()


# ---------------------------------------------------------------- multibox_transform_loc
@pytest.mark.parametrize("dtype", FLOATS)
def test_multibox_transform_loc_every_dtype(dtype):
    cls_pred = rng.uniform(-2, 2, (2, 3, 5)).astype(dtype)
    loc_pred = rng.uniform(-1, 1, (2, 20)).astype(dtype)
    left_top = rng.uniform(0, 0.6, (1, 5, 2))
    anchor = np.concatenate([left_top, left_top + rng.uniform(0.1, 0.4, (1, 5, 2))], axis=2).astype(dtype)
    for kw in [{}, {"clip": True, "threshold": 0.3, "variances": (0.1, 0.2, 0.3, 0.4), "keep_background": False},
               {"apply_softmax": False, "threshold": 0.5}]:
        got = compile_and_run(lambda c, l, a: op.vision.multibox_transform_loc(c, l, a, **kw), [cls_pred, loc_pred, anchor])
        for g, w in zip(got, vision_refs.multibox_transform_loc(cls_pred, loc_pred, anchor, **kw)):
            close(g, w, dtype)


def test_multibox_transform_loc_legalizes_as_tvm():
    c = relax.Var("c", relax.TensorStructInfo((1, 3, 4), "float32"))
    l = relax.Var("l", relax.TensorStructInfo((1, 16), "float32"))
    a = relax.Var("a", relax.TensorStructInfo((1, 4, 4), "float32"))
    mod = one_binding(lambda x, y, z: op.vision.multibox_transform_loc(x, y, z, clip=True, threshold=0.3,
                                                                       variances=(0.1, 0.2, 0.3, 0.4),
                                                                       keep_background=False), [c, l, a])
    assert ('R.vision.multibox_transform_loc(c, l, a, clip=True, threshold=0.29999999999999999, variances=[0.10000000000000001, '
            '0.20000000000000001, 0.29999999999999999, 0.40000000000000002], keep_background=False, apply_softmax=True)'
            in mod.script())
    out = LegalizeOps()(mod)
    text = out.script()
    # TVM 0.27's blocks and its ymin expression (variances scale the encodings, clipped to [0, 1])
    for line in ['with T.block("multibox_boxes"):', 'with T.block("T_softmax_norm"):',
                 'T_greater_equal[v_ax0, v_ax1, v_ax2] = T.float32(0.29999999999999999) <= T_softmax_norm[v_ax0, v_ax1, v_ax2]',
                 'multibox_scores_bg[v_b, v_c, v_n] = T.if_then_else(v_c == T.int64(0), T.float32(0.0), '
                 'T_multiply[v_b, v_c, v_n])',
                 'multibox_boxes[v_b, v_a, v_k] = T.Select(v_k == T.int64(0), T.max(T.float32(0.0), T.min(T.float32(1.0), '
                 'T_reshape[v_b, v_a, T.int64(1)] * T.float32(0.20000000000000001) * (a[T.int64(0), v_a, T.int64(3)] - '
                 'a[T.int64(0), v_a, T.int64(1)]) + (a[T.int64(0), v_a, T.int64(1)] + a[T.int64(0), v_a, T.int64(3)]) * '
                 'T.float32(0.5) - T.float32(0.5) * T.exp(T_reshape[v_b, v_a, T.int64(3)] * T.float32(0.40000000000000002)) '
                 '* (a[T.int64(0), v_a, T.int64(3)] - a[T.int64(0), v_a, T.int64(1)]))),']:
        assert line in text, line
    assert_round_trip(out)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_soft_nms_every_dtype(dtype):
    data, count, indices = nms_inputs(dtype)
    for kw in [{"soft_nms_sigma": 0.5}, {"soft_nms_sigma": 0.25, "score_threshold": 0.2, "iou_threshold": 0.6},
               {"soft_nms_sigma": 0.5, "force_suppress": True, "top_k": 5, "max_output_size": 3}]:
        got = compile_and_run(lambda d, c, i: op.vision.non_max_suppression(d, c, i, **kw), [data, count, indices])
        want = vision_refs.soft_nms(data, count, indices, **kw)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])
    boxes = compile_and_run(lambda d, c, i: op.vision.non_max_suppression(d, c, i, soft_nms_sigma=0.5,
                                                                          return_indices=False), [data, count, indices])
    np.testing.assert_allclose(boxes, vision_refs.soft_nms(data, count, indices)[0], rtol=1e-5, atol=1e-6)


SOFT_NMS_DATA = (
    [[[1.0, 0.6000000238418579, 3.0, 6.0, 8.0, 9.0], [-1.0, 0.699999988079071, 7.0, 3.0, 10.0, 4.0], [-1.0, 0.0,
    0.0, 10.0, 4.0, 12.0], [-1.0, 0.10000000149011612, 3.0, 3.0, 8.0, 5.0], [-1.0, 0.4000000059604645, 9.0, 6.0,
    13.0, 9.0], [1.0, 0.30000001192092896, 5.0, 8.0, 9.0, 9.0], [1.0, 0.800000011920929, 0.0, 7.0, 2.0, 12.0],
    [0.0, 0.5, 4.0, 1.0, 8.0, 5.0]], [[-1.0, 0.4000000059604645, 7.0, 9.0, 12.0, 11.0], [-1.0, 0.4000000059604645,
    2.0, 6.0, 7.0, 8.0], [-1.0, 0.6000000238418579, 3.0, 7.0, 9.0, 11.0], [0.0, 0.5, 7.0, 2.0, 11.0, 8.0], [0.0,
    0.10000000149011612, 8.0, 7.0, 13.0, 11.0], [0.0, 0.699999988079071, 7.0, 8.0, 8.0, 11.0], [-1.0,
    0.699999988079071, 4.0, 8.0, 5.0, 9.0], [-1.0, 0.8999999761581421, 9.0, 1.0, 10.0, 6.0]]])


def test_soft_nms_matches_tvm():
    # TVM 0.27 compiled and run on these detections (sigma 0.5): kept indices, counts, decayed scores
    data = np.array(SOFT_NMS_DATA, "float32")
    count, indices = np.array([6, 8], "int32"), np.ascontiguousarray(np.tile(np.arange(8, dtype="int32")[::-1], (2, 1)))
    boxes, idx, kept = compile_and_run(lambda d, c, i: op.vision.non_max_suppression(d, c, i, soft_nms_sigma=0.5),
                                       [data, count, indices])
    np.testing.assert_array_equal(idx, [[6, 7, 3, 2, 4, -1, -1, -1], [0, 2, 1, 5, 4, 7, 6, 3]])
    np.testing.assert_array_equal(kept, [[5], [8]])
    np.testing.assert_allclose(boxes[..., 1], [[0.7, 0.6, 0.4, 0.289636, 0.099308, -1, -1, -1],
                                               [0.9, 0.7, 0.7, 0.598959, 0.5, 0.392952, 0.392952, 0.099466]], atol=1e-6)
