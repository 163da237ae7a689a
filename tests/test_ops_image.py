"""The image family (issue 16): resize2d and resize3d legalized to TVM's block ``resize``, compiled
with LLVM and run by the VM against numpy references (tests/image_refs.py) and PyTorch's
interpolate, for every method, coordinate mode, layout and dtype; legalized texts pinned as TVM
0.27 prints them."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tvmlite import relax  # noqa: E402
from tvmlite.passes import LegalizeOps  # noqa: E402
from tvmlite.script import from_source  # noqa: E402
from tvmlite.testing import assert_round_trip  # noqa: E402
from test_compiled_ops import compile_and_run  # noqa: E402
from legalize_util import build  # noqa: E402
import image_refs  # noqa: E402

op = relax.op
rng = np.random.default_rng(2016)
DTYPES = ["float32", "float64", "float16", "int8", "int32", "uint8"]
MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"]


def image(dtype, shape):
    """Random pixels in ``dtype`` (small integers for the integer dtypes)."""
    if dtype.startswith("float"):
        return rng.uniform(-2, 2, shape).astype(dtype)
    return rng.integers(0, 50, shape).astype(dtype)


def close(got, want, dtype):
    """Float results to float32 accuracy (float16 to its own); integer ones exactly or, after an
    interpolation truncated to an integer, within one."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if dtype == "float16":
        np.testing.assert_allclose(got.astype("float32"), want.astype("float32"), rtol=2e-3, atol=2e-3)
    elif dtype.startswith("float"):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        assert np.abs(got.astype("int64") - want.astype("int64")).max(initial=0) <= 1


# ---------------------------------------------------------------- resize2d
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
def test_resize2d_every_method_and_dtype(dtype, method):
    x = image(dtype, (2, 3, 5, 4))
    for size, mode in [((7, 9), "half_pixel"), ((3, 2), "align_corners"), ((10, 8), "asymmetric"),
                       ((4, 6), "pytorch_half_pixel"), ((6, 3), "tf_half_pixel_for_nn")]:
        got = compile_and_run(lambda a: op.image.resize2d(a, size, method=method,
                                                          coordinate_transformation_mode=mode, rounding_method=""), [x])
        close(got, image_refs.resize(x, size, method, mode), dtype)


@pytest.mark.parametrize("rounding", ["round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
def test_resize2d_nearest_rounding(rounding):
    x = image("float32", (1, 2, 6, 5))
    for mode in MODES:
        got = compile_and_run(lambda a: op.image.resize2d(a, (9, 4), method="nearest_neighbor",
                                                          coordinate_transformation_mode=mode,
                                                          rounding_method=rounding), [x])
        np.testing.assert_array_equal(got, image_refs.resize(x, (9, 4), "nearest_neighbor", mode, rounding))


def test_resize2d_cubic_alpha_and_exclude():
    x = image("float32", (1, 2, 5, 6))
    for alpha, exclude in [(-0.5, 0), (-0.75, 1), (-0.5, 1)]:
        got = compile_and_run(lambda a: op.image.resize2d(a, (8, 3), method="cubic", cubic_alpha=alpha,
                                                          cubic_exclude=exclude), [x])
        close(got, image_refs.resize(x, (8, 3), "cubic", "half_pixel", alpha=alpha, exclude=bool(exclude)), "float32")


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
def test_resize2d_tf_crop_and_resize_extrapolates(method):
    x = image("float32", (1, 2, 5, 6))
    roi = (-0.2, 0.1, 0.8, 1.3)  # start_h, start_w, end_h, end_w: partly outside the image
    for size in [(4, 7), (1, 1)]:
        got = compile_and_run(lambda a: op.image.resize2d(a, size, roi=roi, method=method,
                                                          coordinate_transformation_mode="tf_crop_and_resize",
                                                          extrapolation_value=-7.0), [x])
        close(got, image_refs.resize(x, size, method, "tf_crop_and_resize", "round", roi=roi,
                                                 extrapolation=-7.0), "float32")


def test_resize2d_layouts():
    x = image("float32", (2, 5, 4, 3))  # NHWC
    got = compile_and_run(lambda a: op.image.resize2d(a, (7, 6), layout="NHWC"), [x])
    want = image_refs.resize(x.transpose(0, 3, 1, 2), (7, 6)).transpose(0, 2, 3, 1)
    close(got, want, "float32")
    packed = image("float32", (1, 2, 5, 4, 4))  # NCHW4c: channel c*4+k at [n, c, h, w, k]
    got = compile_and_run(lambda a: op.image.resize2d(a, (3, 6), layout="NCHW4c", method="cubic"), [packed])
    primal = packed.transpose(0, 1, 4, 2, 3).reshape(1, 8, 5, 4)
    want = image_refs.resize(primal, (3, 6), "cubic").reshape(1, 2, 4, 3, 6).transpose(0, 1, 3, 4, 2)
    close(got, want, "float32")


def test_resize2d_out_dtype_and_symbolic_sizes():
    x = image("float32", (2, 3, 5, 4))
    got = compile_and_run(lambda a: op.image.resize2d(a, (6, 6), out_dtype="float16"), [x])
    close(got, image_refs.resize(x, (6, 6), out_dtype="float16"), "float16")
    got = compile_and_run(lambda a: op.image.resize2d(a, (8, 3), method="nearest_neighbor"), [x],
                          {0: {2: "h", 3: "w"}})
    close(got, image_refs.resize(x, (8, 3), "nearest_neighbor", rounding="round"), "float32")
    got = compile_and_run(lambda a: op.image.resize2d(a, (1, 3), coordinate_transformation_mode="align_corners"),
                          [x], {0: {0: "n", 2: "h"}})
    close(got, image_refs.resize(x, (1, 3), mode="align_corners"), "float32")


def test_resize2d_matches_torch_interpolate():
    torch = pytest.importorskip("torch")
    functional = torch.nn.functional
    x = image("float32", (2, 3, 5, 7))
    t = torch.from_numpy(x)
    for size, kw, mode, method in [
            ((9, 4), dict(mode="bilinear", align_corners=False), "half_pixel", "linear"),
            ((9, 4), dict(mode="bilinear", align_corners=True), "align_corners", "linear"),
            ((3, 11), dict(mode="bicubic", align_corners=False), "half_pixel", "cubic"),
            ((3, 11), dict(mode="bicubic", align_corners=True), "align_corners", "cubic"),
            ((10, 14), dict(mode="nearest"), "asymmetric", "nearest_neighbor"),
            ((8, 3), dict(mode="nearest"), "asymmetric", "nearest_neighbor"),
            ((8, 3), dict(mode="nearest-exact"), "tf_half_pixel_for_nn", "nearest_neighbor")]:
        got = compile_and_run(lambda a: op.image.resize2d(a, size, method=method, coordinate_transformation_mode=mode,
                                                          rounding_method=""), [x])
        np.testing.assert_allclose(got, functional.interpolate(t, size=size, **kw).numpy(), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- resize3d
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
def test_resize3d_every_method_and_dtype(dtype, method):
    x = image(dtype, (1, 2, 3, 4, 5))
    for size, mode in [((5, 3, 7), "half_pixel"), ((2, 6, 3), "align_corners"), ((6, 8, 5), "asymmetric")]:
        got = compile_and_run(lambda a: op.image.resize3d(a, size, method=method,
                                                          coordinate_transformation_mode=mode), [x])
        close(got, image_refs.resize(x, size, method, mode), dtype)


def test_resize3d_roi_layout_and_torch():
    x = image("float32", (1, 2, 3, 4, 5))
    # TVM's resize3d roi: the W, H, D starts, then the W, H, D ends; only H and W extrapolate
    got = compile_and_run(lambda a: op.image.resize3d(a, (4, 3, 6), roi=(0.1, -0.2, 0.3, 1.2, 0.9, 0.7),
                                                      coordinate_transformation_mode="tf_crop_and_resize",
                                                      extrapolation_value=5.0), [x])
    want = image_refs.resize(x, (4, 3, 6), "linear", "tf_crop_and_resize", roi=(0.3, -0.2, 0.1, 0.7, 0.9, 1.2),
                             extrapolation=5.0)
    close(got, want, "float32")
    ndhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 4, 1))
    got = compile_and_run(lambda a: op.image.resize3d(a, (5, 2, 3), layout="NDHWC", method="cubic"), [ndhwc])
    close(got, image_refs.resize(x, (5, 2, 3), "cubic").transpose(0, 2, 3, 4, 1), "float32")
    torch = pytest.importorskip("torch")
    got = compile_and_run(lambda a: op.image.resize3d(a, (5, 7, 3)), [x])
    want = torch.nn.functional.interpolate(torch.from_numpy(x), size=(5, 7, 3), mode="trilinear", align_corners=False)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- printed forms (TVM 0.27's)
RESIZE_SCRIPT = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 4, 6), dtype="float32")) -> R.Tensor((1, 3, 8, 3), dtype="float32"):
        y: R.Tensor((1, 3, 8, 3), dtype="float32") = R.image.resize2d(x, R.shape([8, 3]), roi=[T.float32(0.0), T.float32(0.0), T.float32(0.0), T.float32(0.0)], layout="NCHW", method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="", cubic_alpha=-0.75, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None)
        return y'''

# TVM 0.27's LegalizeOps output (an integer upscale along H is an integer division; its reads
# region for W is the whole axis where tvmlite's region inference gives the exact index)
RESIZE_LEGALIZED = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def resize2d(x: T.Buffer((T.int64(1), T.int64(3), T.int64(4), T.int64(6)), "float32"), resize: T.Buffer((T.int64(1), T.int64(3), T.int64(8), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(3), T.int64(8), T.int64(3)):
            with T.block("resize"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(x[v_i0, v_i1, T.max(T.min(T.Div(v_i2, T.int64(2)), T.int64(3)), T.int64(0)), T.max(T.min(T.Cast("int64", T.floor(T.float32(2.0) * T.Cast("float32", v_i3) + T.float32(1.0000000000000001e-05))), T.int64(5)), T.int64(0))])
                T.writes(resize[v_i0, v_i1, v_i2, v_i3])
                resize[v_i0, v_i1, v_i2, v_i3] = x[v_i0, v_i1, T.max(T.min(T.Div(v_i2, T.int64(2)), T.int64(3)), T.int64(0)), T.max(T.min(T.Cast("int64", T.floor(T.float32(2.0) * T.Cast("float32", v_i3) + T.float32(1.0000000000000001e-05))), T.int64(5)), T.int64(0))]

    @R.function
    def main(x: R.Tensor((1, 3, 4, 6), dtype="float32")) -> R.Tensor((1, 3, 8, 3), dtype="float32"):
        cls = Module
        y = R.call_tir(cls.resize2d, (x,), out_sinfo=R.Tensor((1, 3, 8, 3), dtype="float32"))
        return y'''

# TVM 0.27's value expression of a half-pixel bilinear upscale (float16 data computed in float32)
BILINEAR_VALUE = (
    'resize[v_i0, v_i1, v_i2, v_i3] = T.Cast("float16", (T.Cast("float32", x[v_i0, v_i1, T.max(T.min(T.Cast("'
    'int64", T.floor((T.Cast("float32", v_i2) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), T.int64('
    '3)), T.int64(0)), T.max(T.min(T.Cast("int64", T.floor((T.Cast("float32", v_i3) + T.float32(0.5)) * T.flo'
    'at32(0.5) - T.float32(0.5))), T.int64(3)), T.int64(0))]) * (T.float32(1.0) - ((T.Cast("float32", v_i3) +'
    ' T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("'
    'float32", v_i3) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) + T.Cast("float32", x[v_i0, v_i'
    '1, T.max(T.min(T.Cast("int64", T.floor((T.Cast("float32", v_i2) + T.float32(0.5)) * T.float32(0.5) - T.f'
    'loat32(0.5))), T.int64(3)), T.int64(0)), T.max(T.min(T.Cast("int64", T.floor((T.Cast("float32", v_i3) + '
    'T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + T.int64(1), T.int64(3)), T.int64(0))]) * ((T.Cast('
    '"float32", v_i3) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32",'
    ' T.floor((T.Cast("float32", v_i3) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) * (T.float32('
    '1.0) - ((T.Cast("float32", v_i2) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32",'
    ' T.Cast("int32", T.floor((T.Cast("float32", v_i2) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))))'
    ')) + (T.Cast("float32", x[v_i0, v_i1, T.max(T.min(T.Cast("int64", T.floor((T.Cast("float32", v_i2) + T.f'
    'loat32(0.5)) * T.float32(0.5) - T.float32(0.5))) + T.int64(1), T.int64(3)), T.int64(0)), T.max(T.min(T.C'
    'ast("int64", T.floor((T.Cast("float32", v_i3) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), T.i'
    'nt64(3)), T.int64(0))]) * (T.float32(1.0) - ((T.Cast("float32", v_i3) + T.float32(0.5)) * T.float32(0.5)'
    ' - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", v_i3) + T.float32(0.5))'
    ' * T.float32(0.5) - T.float32(0.5)))))) + T.Cast("float32", x[v_i0, v_i1, T.max(T.min(T.Cast("int64", T.'
    'floor((T.Cast("float32", v_i2) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + T.int64(1), T.int'
    '64(3)), T.int64(0)), T.max(T.min(T.Cast("int64", T.floor((T.Cast("float32", v_i3) + T.float32(0.5)) * T.'
    'float32(0.5) - T.float32(0.5))) + T.int64(1), T.int64(3)), T.int64(0))]) * ((T.Cast("float32", v_i3) + T'
    '.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("fl'
    'oat32", v_i3) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) * ((T.Cast("float32", v_i2) + T.f'
    'loat32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("floa'
    't32", v_i2) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))))))'
)


def test_resize2d_prints_and_legalizes_as_tvm():
    mod = from_source(RESIZE_SCRIPT)
    assert mod.script() == RESIZE_SCRIPT
    out = LegalizeOps()(mod)
    assert out.script() == RESIZE_LEGALIZED
    assert_round_trip(out)


def test_resize_script_defaults_and_forms():
    x = relax.Var("x", relax.TensorStructInfo((1, 2, 3, 4, 5), "float32"))
    text = build(lambda a: op.image.resize3d(a, (2, 3, 4)), [x]).script()
    assert ('R.image.resize3d(x, R.shape([2, 3, 4]), roi=[T.float32(0.0), T.float32(0.0), T.float32(0.0), '
            'T.float32(0.0), T.float32(0.0), T.float32(0.0)], layout="NCDHW", method="linear", '
            'coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.75, cubic_exclude=0, '
            'extrapolation_value=0.0, out_dtype=None)') in text
    short = from_source(RESIZE_SCRIPT.replace(", roi=[T.float32(0.0), T.float32(0.0), T.float32(0.0), T.float32(0.0)]",
                                              "").replace(", out_dtype=None", ""))
    assert short.script() == RESIZE_SCRIPT


def test_resize2d_bilinear_text_follows_tvm():
    x = relax.Var("x", relax.TensorStructInfo((1, 2, 4, 4), "float16"))
    text = LegalizeOps()(build(lambda a: op.image.resize2d(a, (8, 8)), [x])).script()
    assert "                " + BILINEAR_VALUE + "\n" in text


# ---------------------------------------------------------------- affine_grid, grid_sample
FLOATS = ["float32", "float64", "float16"]


def affine_grid_ref(theta, size, align_corners):
    """Numpy: theta @ (x, y[, z], 1) at each point of the normalised grid, as (N, k, *size)."""
    axes = []
    for n in size:
        if align_corners:
            axes.append(-1 + np.arange(n) * ((2 - 1e-7) / (n - 1) if n > 1 else 0.0))
        else:
            axes.append(-1 + 1 / n + np.arange(n) * (2 / n))
    mesh = np.meshgrid(*axes, indexing="ij")  # mesh[k]: the coordinate along spatial axis k
    points = np.stack([*mesh[::-1], np.ones(size)])  # x first, then y (z), then 1
    return np.einsum("nkj,j...->nk...", theta.astype("float64"), points)


@pytest.mark.parametrize("dtype", FLOATS)
def test_affine_grid_every_dtype(dtype):
    tol = 2e-3 if dtype == "float16" else 1e-5
    theta = rng.uniform(-1, 1, (2, 2, 3)).astype(dtype)
    for size, align in [((4, 5), True), ((3, 1), False), ((1, 2), True)]:
        got = compile_and_run(lambda t: op.image.affine_grid(t, size, align_corners=align), [theta])
        assert got.dtype == dtype and got.shape == (2, 2, *size)
        np.testing.assert_allclose(got.astype("float64"), affine_grid_ref(theta, size, align), rtol=tol, atol=tol)
    theta3 = rng.uniform(-1, 1, (1, 3, 4)).astype(dtype)
    got = compile_and_run(lambda t: op.image.affine_grid(t, (2, 3, 4), align_corners=False), [theta3])
    np.testing.assert_allclose(got.astype("float64"), affine_grid_ref(theta3, (2, 3, 4), False), rtol=tol, atol=tol)


def test_affine_grid_matches_torch():
    torch = pytest.importorskip("torch")
    theta = rng.uniform(-1, 1, (2, 2, 3)).astype("float32")
    for align in (False, True):
        got = compile_and_run(lambda t: op.image.affine_grid(t, (4, 5), align_corners=align), [theta])
        want = torch.nn.functional.affine_grid(torch.from_numpy(theta), [2, 1, 4, 5], align_corners=align)
        np.testing.assert_allclose(got, want.permute(0, 3, 1, 2).numpy(), rtol=1e-5, atol=1e-5)
    theta3 = rng.uniform(-1, 1, (2, 3, 4)).astype("float32")
    got = compile_and_run(lambda t: op.image.affine_grid(t, (2, 3, 4), align_corners=False), [theta3])
    want = torch.nn.functional.affine_grid(torch.from_numpy(theta3), [2, 1, 2, 3, 4], align_corners=False)
    np.testing.assert_allclose(got, want.permute(0, 4, 1, 2, 3).numpy(), rtol=1e-5, atol=1e-5)


def sample_grid(*shape):
    """Grid points in (N, k, ...) with some outside [-1, 1], so every padding mode matters."""
    return rng.uniform(-1.6, 1.6, shape).astype("float32")


@pytest.mark.parametrize("method", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_matches_torch(method, padding_mode):
    torch = pytest.importorskip("torch")
    x = image("float32", (2, 3, 5, 6))
    grid = sample_grid(2, 2, 4, 7)
    for align in (False, True):
        got = compile_and_run(lambda a, g: op.image.grid_sample(a, g, method=method, padding_mode=padding_mode,
                                                                align_corners=align), [x, grid])
        want = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid).permute(0, 2, 3, 1),
                                               mode=method, padding_mode=padding_mode, align_corners=align)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("method", ["nearest", "bilinear"])
def test_grid_sample_3d_matches_torch(method):
    torch = pytest.importorskip("torch")
    x = image("float32", (1, 2, 3, 4, 5))
    grid = sample_grid(1, 3, 2, 3, 4)
    for padding_mode, align in [("zeros", False), ("border", True), ("reflection", False)]:
        got = compile_and_run(lambda a, g: op.image.grid_sample(a, g, method=method, layout="NCDHW",
                                                                padding_mode=padding_mode, align_corners=align),
                              [x, grid])
        want = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid).permute(0, 2, 3, 4, 1),
                                               mode=method, padding_mode=padding_mode, align_corners=align)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_grid_sample_every_data_dtype(dtype):
    torch = pytest.importorskip("torch")
    x = image(dtype, (1, 2, 4, 5))
    grid = sample_grid(1, 2, 3, 3)
    got = compile_and_run(lambda a, g: op.image.grid_sample(a, g, padding_mode="border"), [x, grid])
    want = torch.nn.functional.grid_sample(torch.from_numpy(x.astype("float32")),
                                           torch.from_numpy(grid).permute(0, 2, 3, 1), padding_mode="border",
                                           align_corners=False)
    close(got, want.numpy().astype(dtype) if dtype.startswith("float") else
          np.trunc(want.numpy()).astype(dtype), dtype)


AFFINE_GRID_LEGALIZED = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def affine_grid(theta: T.Buffer((T.int64(2), T.int64(2), T.int64(3)), "float32"), compute: T.Buffer((T.int64(2), T.int64(2), T.int64(4), T.int64(5)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for n, dim, i0, i1 in T.grid(T.int64(2), T.int64(2), T.int64(4), T.int64(5)):
            with T.block("compute"):
                v_n, v_dim, v_i0, v_i1 = T.axis.remap("SSSS", [n, dim, i0, i1])
                T.reads(theta[v_n, v_dim, T.int64(0):T.int64(3)])
                T.writes(compute[v_n, v_dim, v_i0, v_i1])
                compute[v_n, v_dim, v_i0, v_i1] = theta[v_n, v_dim, T.int64(2)] + theta[v_n, v_dim, T.int64(1)] * (T.float32(-1.0) + T.Cast("float32", v_i0) * T.float32(0.66666663333333331)) + theta[v_n, v_dim, T.int64(0)] * (T.float32(-1.0) + T.Cast("float32", v_i1) * T.float32(0.49999997499999999))

    @R.function
    def main(theta: R.Tensor((2, 2, 3), dtype="float32")) -> R.Tensor((2, 2, 4, 5), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.affine_grid, (theta,), out_sinfo=R.Tensor((2, 2, 4, 5), dtype="float32"))
        return gv'''

# TVM 0.27's nearest sampling with border padding (coordinates clipped, then T.nearbyint)
GRID_SAMPLE_VALUE = (
    'compute[v_n, v_c, v_h, v_w] = T.if_then_else(T.int64(0) <= T.Cast("int64", T.nearbyint(T.min(T.max((g[v_n, '
    'T.int64(1), v_h, v_w] + T.float32(1.0)) * T.float32(2.0) / T.float32(2.0), T.float32(0.0)), T.float32(2.0)))) '
    'and T.int64(0) <= T.Cast("int64", T.nearbyint(T.min(T.max((g[v_n, T.int64(0), v_h, v_w] + T.float32(1.0)) * '
    'T.float32(3.0) / T.float32(2.0), T.float32(0.0)), T.float32(3.0)))) and T.Cast("int64", T.nearbyint(T.min('
    'T.max((g[v_n, T.int64(1), v_h, v_w] + T.float32(1.0)) * T.float32(2.0) / T.float32(2.0), T.float32(0.0)), '
    'T.float32(2.0)))) < T.int64(3) and T.Cast("int64", T.nearbyint(T.min(T.max((g[v_n, T.int64(0), v_h, v_w] + '
    'T.float32(1.0)) * T.float32(3.0) / T.float32(2.0), T.float32(0.0)), T.float32(3.0)))) < T.int64(4), x[v_n, '
    'v_c, T.Cast("int64", T.nearbyint(T.min(T.max((g[v_n, T.int64(1), v_h, v_w] + T.float32(1.0)) * T.float32(2.0) '
    '/ T.float32(2.0), T.float32(0.0)), T.float32(2.0)))), T.Cast("int64", T.nearbyint(T.min(T.max((g[v_n, '
    'T.int64(0), v_h, v_w] + T.float32(1.0)) * T.float32(3.0) / T.float32(2.0), T.float32(0.0)), T.float32(3.0))))'
    '], T.float32(0.0))')


def test_affine_grid_and_grid_sample_legalize_as_tvm():
    theta = relax.Var("theta", relax.TensorStructInfo((2, 2, 3), "float32"))
    out = LegalizeOps()(_one_binding(lambda t: op.image.affine_grid(t, (4, 5)), [theta]))
    assert out.script() == AFFINE_GRID_LEGALIZED
    assert_round_trip(out)
    x = relax.Var("x", relax.TensorStructInfo((1, 2, 3, 4), "float32"))
    g = relax.Var("g", relax.TensorStructInfo((1, 2, 5, 6), "float32"))
    text = LegalizeOps()(_one_binding(lambda a, b: op.image.grid_sample(a, b, method="nearest", padding_mode="border",
                                                                        align_corners=True), [x, g])).script()
    assert "                " + GRID_SAMPLE_VALUE + "\n" in text


def _one_binding(make, params):
    """``main(params)`` with one ``gv`` binding outside a dataflow block, as TVM's tests build it."""
    bb = relax.BlockBuilder()
    with bb.function("main", list(params)):
        out = bb.emit(make(*params))
        bb.emit_func_output(out)
    return bb.get()
