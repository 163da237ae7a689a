"""``from_onnx``'s image and detection converters (Resize, GridSample, AffineGrid, RoiAlign,
NonMaxSuppression): each imported, compiled after the default pipeline, run and compared with
ONNX's reference evaluator; the Relax op each maps to checked in the printed module; refusals
named."""
import numpy as np
import pytest

import tvmlite
from frontend_util import need  # skips without the package, fails with TVMLITE_REQUIRE_FRONTENDS=1
from test_frontend_onnx import check, make_model, node, rand, run
from tvmlite.frontend import FrontendError

RNG = np.random.default_rng(2026)


@pytest.fixture(scope="module")
def onnx():
    return need("onnx")


def model_of(onnx, op, inputs, initializers=None, opset=20, **attrs):
    """A model of one node reading the graph inputs then the initializers, in order."""
    names = list(inputs) + list(initializers or {})
    return make_model(onnx, [node(onnx, op, names, ["y"], **attrs)], inputs, ["y"], initializers, opset)


def resize_model(onnx, shape, sizes=None, scales=None, roi=None, opset=19, **attrs):
    empty = np.zeros(0, "float32")
    inits = {"roi": empty if roi is None else np.array(roi, "float32"),
             "scales": empty if scales is None else np.array(scales, "float32")}
    if sizes is not None:
        inits["sizes"] = np.array(sizes, "int64")
    return model_of(onnx, "Resize", {"x": (shape, "float32")}, inits, opset=opset, **attrs)


# ---------------------------------------------------------------- Resize
@pytest.mark.parametrize("mode, coord, nearest", [
    ("nearest", "asymmetric", "floor"), ("nearest", "half_pixel", "round_prefer_floor"),
    ("nearest", "align_corners", "round_prefer_ceil"), ("nearest", "pytorch_half_pixel", "ceil"),
    ("linear", "half_pixel", None), ("linear", "align_corners", None), ("linear", "pytorch_half_pixel", None),
    ("cubic", "half_pixel", None), ("cubic", "asymmetric", None),
])
@pytest.mark.parametrize("sizes", [(2, 3, 8, 10), (2, 3, 2, 3)])
def test_resize_2d(onnx, mode, coord, nearest, sizes):
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    if nearest:
        attrs["nearest_mode"] = nearest
    mod = check(onnx, resize_model(onnx, (2, 3, 4, 5), sizes=sizes, **attrs), {"x": rand(2, 3, 4, 5)})
    method = {"nearest": "nearest_neighbor"}.get(mode, mode)
    assert (f'R.image.resize2d(x, R.shape([{sizes[2]}, {sizes[3]}]), roi=[T.float32(0.0), T.float32(0.0), '
            f'T.float32(0.0), T.float32(0.0)], layout="NCHW", method="{method}", coordinate_transformation_mode='
            f'"{coord}", rounding_method="{nearest or "round_prefer_floor"}"') in mod.script()


def test_resize_scales_cubic_options_and_crop(onnx):
    x = rand(2, 3, 4, 5)
    check(onnx, resize_model(onnx, (2, 3, 4, 5), scales=(1, 1, 2, 0.6), mode="linear"), {"x": x})
    check(onnx, resize_model(onnx, (2, 3, 4, 5), sizes=(2, 3, 6, 3), mode="cubic", cubic_coeff_a=-0.5,
                             exclude_outside=1), {"x": x})
    mod = check(onnx, resize_model(onnx, (2, 3, 4, 5), sizes=(2, 3, 3, 4), roi=(0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7),
                                   mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                                   extrapolation_value=-1.0), {"x": x})
    assert ("roi=[T.float32(0.10000000149011612), T.float32(0.20000000298023224), T.float32(0.89999997615814209), "
            "T.float32(0.69999998807907104)]") in mod.script()
    # opset 18's axes: sizes of the listed axes only
    check(onnx, resize_model(onnx, (2, 3, 4, 5), sizes=(6, 7), axes=[2, 3], opset=18, mode="linear"), {"x": x})


def test_resize_3d(onnx):
    x = rand(1, 2, 3, 4, 5)
    mod = check(onnx, resize_model(onnx, x.shape, sizes=(1, 2, 5, 3, 7), mode="linear"), {"x": x})
    assert 'R.image.resize3d(x, R.shape([5, 3, 7])' in mod.script()
    # resize3d reads its roi from the W axis inwards
    check(onnx, resize_model(onnx, x.shape, sizes=(1, 2, 2, 3, 4), roi=(0, 0, 0.1, 0.2, 0, 1, 1, 0.9, 0.7, 0.5),
                             mode="nearest", coordinate_transformation_mode="tf_crop_and_resize"), {"x": x})


def test_resize_opset_10_is_upsample(onnx):
    # opset 10: inputs (X, scales), asymmetric coordinates and nearest rounding down, as Upsample
    model = model_of(onnx, "Resize", {"x": ((1, 2, 3, 3), "float32")}, {"scales": np.array([1, 1, 2, 1.5], "float32")},
                     opset=10)
    x = np.arange(18, dtype="float32").reshape(1, 2, 3, 3)
    got = run(tvmlite.frontend.from_onnx(model), x)[0]
    rows, cols = np.arange(6) // 2, (np.arange(4) / 1.5).astype(int)  # floor(out / scale)
    np.testing.assert_array_equal(got, x[:, :, rows][:, :, :, cols])


@pytest.mark.parametrize("attrs, message", [
    ({"mode": "linear", "antialias": 1}, "antialias=1 is not supported"),
    ({"coordinate_transformation_mode": "half_pixel_symmetric"}, "coordinate_transformation_mode "
                                                                 "'half_pixel_symmetric' is not supported"),
    ({"mode": "area"}, "mode 'area' is not one of nearest, linear, cubic"),
    ({"keep_aspect_ratio_policy": "not_larger"}, "keep_aspect_ratio_policy other than 'stretch'"),
])
def test_resize_refusals(onnx, attrs, message):
    with pytest.raises(FrontendError, match=message):
        tvmlite.frontend.from_onnx(resize_model(onnx, (1, 2, 4, 4), sizes=(1, 2, 8, 8), **attrs))


def test_resize_refuses_other_ranks_and_channel_resizes(onnx):
    with pytest.raises(FrontendError, match="only 4-D .* and 5-D .* inputs are supported, got rank 3"):
        tvmlite.frontend.from_onnx(resize_model(onnx, (1, 2, 4), sizes=(1, 2, 8)))
    with pytest.raises(FrontendError, match=r"only the spatial axes can be resized: the input's batch and channels "
                                            r"\[1, 2\] would become \[1, 4\]"):
        tvmlite.frontend.from_onnx(resize_model(onnx, (1, 2, 4, 4), sizes=(1, 4, 8, 8)))


# ---------------------------------------------------------------- GridSample, AffineGrid
@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample(onnx, mode, padding, align_corners):
    x = rand(2, 3, 5, 6)
    grid = RNG.uniform(-1.2, 1.2, (2, 4, 3, 2)).astype("float32")  # points outside the image too
    model = model_of(onnx, "GridSample", {"x": ((2, 3, 5, 6), "float32"), "g": ((2, 4, 3, 2), "float32")},
                     mode=mode, padding_mode=padding, align_corners=align_corners)
    mod = check(onnx, model, {"x": x, "g": grid})
    method = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
    assert (f'method="{method}", layout="NCHW", padding_mode="{padding}", '
            f'align_corners={bool(align_corners)})') in mod.script()


def test_grid_sample_3d_and_opset_16_names(onnx):
    x, grid = rand(1, 2, 3, 4, 5), RNG.uniform(-1, 1, (1, 2, 3, 4, 3)).astype("float32")
    check(onnx, model_of(onnx, "GridSample", {"x": (x.shape, "float32"), "g": (grid.shape, "float32")}),
          {"x": x, "g": grid})
    # opset 16 names the modes bilinear (its default) and bicubic
    model = model_of(onnx, "GridSample", {"x": ((1, 1, 2, 2), "float32"), "g": ((1, 1, 1, 2), "float32")}, opset=16,
                     mode="bicubic")
    assert 'R.image.grid_sample(x, lv, method="bicubic"' in tvmlite.frontend.from_onnx(model).script()
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], "float32")
    model = model_of(onnx, "GridSample", {"x": ((1, 1, 2, 2), "float32"), "g": ((1, 1, 1, 2), "float32")}, opset=16,
                     align_corners=1)
    got = run(tvmlite.frontend.from_onnx(model), x, np.array([[[[0.0, 0.0]]]], "float32"))[0]
    np.testing.assert_allclose(got, [[[[2.5]]]])  # bilinear: the centre of the four pixels


@pytest.mark.parametrize("align_corners", [0, 1])
def test_affine_grid(onnx, align_corners):
    theta = RNG.uniform(-1, 1, (2, 2, 3)).astype("float32")
    model = model_of(onnx, "AffineGrid", {"t": ((2, 2, 3), "float32")}, {"s": np.array([2, 3, 4, 5], "int64")},
                     align_corners=align_corners)
    mod = check(onnx, model, {"t": theta})
    assert "R.permute_dims(lv, axes=[0, 2, 3, 1])" in mod.script()
    theta = RNG.uniform(-1, 1, (1, 3, 4)).astype("float32")
    check(onnx, model_of(onnx, "AffineGrid", {"t": ((1, 3, 4), "float32")}, {"s": np.array([1, 3, 2, 4, 5], "int64")},
                         align_corners=align_corners), {"t": theta})


# ---------------------------------------------------------------- RoiAlign
ROIS = np.array([[0.5, 1.0, 9.0, 8.0], [-2.0, 3.0, 4.0, 5.5], [6.0, 6.0, 6.5, 6.2], [1, 1, 11, 9]], "float32")
BATCH = np.array([1, 0, 1, 0], "int64")
ROI_INPUTS = {"x": ((2, 3, 10, 12), "float32"), "r": ((4, 4), "float32"), "b": ((4,), "int64")}


@pytest.mark.parametrize("coord", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
def test_roi_align(onnx, coord, sampling_ratio):
    model = model_of(onnx, "RoiAlign", ROI_INPUTS, opset=16, coordinate_transformation_mode=coord, output_height=3,
                     output_width=2, sampling_ratio=sampling_ratio, spatial_scale=0.5)
    mod = check(onnx, model, {"x": rand(2, 3, 10, 12), "r": ROIS, "b": BATCH})
    assert (f"R.vision.roi_align(x, lv{3 if coord == 'half_pixel' else 2}, pooled_size=[3, 2], spatial_scale=0.5, "
            f"sample_ratio={sampling_ratio}, aligned={coord == 'half_pixel'}, layout=\"NCHW\", mode=\"avg\")"
            ) in mod.script()


def test_roi_align_opset_10_boxes_are_output_half_pixel(onnx):
    # opset 10 has no coordinate_transformation_mode: its boxes are opset 16's output_half_pixel
    feeds = [rand(2, 3, 10, 12), ROIS, BATCH]
    old = model_of(onnx, "RoiAlign", ROI_INPUTS, opset=10, output_height=2, output_width=2)
    new = model_of(onnx, "RoiAlign", ROI_INPUTS, opset=16, output_height=2, output_width=2,
                   coordinate_transformation_mode="output_half_pixel")
    from onnx.reference import ReferenceEvaluator
    expected = ReferenceEvaluator(new).run(None, dict(zip("xrb", feeds)))[0]
    np.testing.assert_allclose(run(tvmlite.frontend.from_onnx(old), *feeds)[0], expected, rtol=1e-4, atol=1e-4)


def test_roi_align_refuses_max(onnx):
    with pytest.raises(FrontendError, match="mode 'max' is not supported .only avg: ONNX's max takes the largest "
                                            "weighted corner"):
        tvmlite.frontend.from_onnx(model_of(onnx, "RoiAlign", ROI_INPUTS, opset=16, mode="max"))


# ---------------------------------------------------------------- NonMaxSuppression
def nms_case(batch=2, classes=3, count=6):
    corner = RNG.uniform(0, 10, (batch, count, 2))
    size = RNG.uniform(1, 5, (batch, count, 2))
    scores = RNG.uniform(0, 1, (batch, classes, count)).astype("float32")
    return corner, size, scores


NMS_INPUTS = {"b": ((2, 6, 4), "float32"), "s": ((2, 3, 6), "float32")}


def nms_model(onnx, args, initializers=None, inputs=NMS_INPUTS, **attrs):
    return make_model(onnx, [node(onnx, "NonMaxSuppression", args, ["y"], **attrs)], inputs, ["y"], initializers, 17)


def limits(max_boxes, iou, score=None):
    out = {"m": np.array([max_boxes], "int64"), "i": np.array([iou], "float32")}
    if score is not None:
        out["t"] = np.array([score], "float32")
    return out


@pytest.mark.parametrize("max_boxes, iou, score", [(2, 0.3, 0.2), (10, 0.5, None), (3, 0.0, 0.9)])
def test_non_max_suppression(onnx, max_boxes, iou, score):
    corner, size, scores = nms_case()
    boxes = np.concatenate([corner, corner + size], -1).astype("float32")
    inits = limits(max_boxes, iou, score)
    mod = check(onnx, nms_model(onnx, ["b", "s", *inits], inits), {"b": boxes, "s": scores})
    assert 'R.vision.all_class_non_max_suppression(b, s, ' in mod.script()
    assert "R.dynamic_strided_slice(" in mod.script()


def test_non_max_suppression_centre_boxes_flipped_corners_and_run_time_limits(onnx):
    corner, size, scores = nms_case()
    centre = np.concatenate([corner + size / 2, size], -1).astype("float32")
    inits = limits(3, 0.4, 0.1)
    check(onnx, nms_model(onnx, ["b", "s", *inits], inits, center_point_box=1), {"b": centre, "s": scores})
    flipped = np.concatenate([corner + size, corner], -1).astype("float32")  # any diagonal pair of corners
    check(onnx, nms_model(onnx, ["b", "s", *inits], inits), {"b": flipped, "s": scores})
    boxes = np.concatenate([corner, corner + size], -1).astype("float32")
    inputs = {**NMS_INPUTS, "m": ((1,), "int64"), "i": ((1,), "float32"), "t": ((1,), "float32")}
    check(onnx, nms_model(onnx, ["b", "s", "m", "i", "t"], inputs=inputs), {"b": boxes, "s": scores, **inits})


def test_non_max_suppression_keeps_no_box_by_default(onnx):
    # max_output_boxes_per_class defaults to 0: no box is selected
    corner, size, scores = nms_case()
    boxes = np.concatenate([corner, corner + size], -1).astype("float32")
    got = run(tvmlite.frontend.from_onnx(nms_model(onnx, ["b", "s"])), boxes, scores)[0]
    assert got.shape == (0, 3) and got.dtype == np.int64
