"""The conv rules of passes/schedule/conv_rules.py: which rule takes a packed conv (by its trace's
steps) and the numbers of the scheduled kernel against the unscheduled one."""
from __future__ import annotations

import pytest

from tvmlite.ir.module import IRModule
from tvmlite.passes import get_pass, get_pipeline  # noqa: F401
from tvmlite.script import from_source

# The small CNN's two convs: an RGB stem (one block of 16 outputs) and 16 -> 32 channels.
CNN = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 8, 8), "float32"), w1: R.Tensor((16, 3, 3, 3), "float32"), w2: R.Tensor((32, 16, 3, 3), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w1, padding=[1, 1, 1, 1]))
            b = R.nn.relu(R.nn.conv2d(a, w2, padding=[1, 1, 1, 1]))
            R.output(b)
        return b
'''


def kernel(name: str) -> IRModule:
    mod = get_pipeline("zero")(get_pass("PackConv2d")(from_source(CNN)))
    return IRModule({"main": mod[name]})


def test_cnn_default_pipeline_matches_zero() -> None:
    """Both convs scheduled by the default pipeline compute what the unscheduled zero pipeline does."""
    import numpy as np

    import tvmlite

    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in ((2, 3, 8, 8), (16, 3, 3, 3), (32, 16, 3, 3))]
    results = []
    for pipeline in ("default", "zero"):
        vm = tvmlite.VirtualMachine(tvmlite.compile(get_pipeline(pipeline)(from_source(CNN)), target="llvm"), tvmlite.cpu())
        results.append(vm["main"](*args).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-4, atol=1e-4)


# resnet18's stem at a small size: 3 -> 64 channels (4 output blocks of 16), 7x7, stride 2, pad 3;
# and a conv reading two blocks of 16 input channels (resnet's NCHW16c convs load ``ic % 16``).
STEM = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 16, 16), "float32"), w1: R.Tensor((64, 3, 7, 7), "float32"), w2: R.Tensor((32, 64, 3, 3), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w1, strides=[2, 2], padding=[3, 3, 3, 3]))
            b = R.nn.relu(R.nn.conv2d(a, w2, padding=[1, 1, 1, 1]))
            R.output(b)
        return b
'''


def trace_of(source: str, name: str, pipeline: str = "zero") -> str:
    """The default CPU schedule's trace of one kernel of ``source`` after PackConv2d + the zero
    pipeline, or after the default pipeline (whose Simplify turns ``ic % 16`` over 16 into ``ic``)."""
    from tvmlite.passes.schedule.default_cpu import default_schedule

    mod = from_source(source)
    mod = get_pipeline(pipeline)(mod if pipeline == "default" else get_pass("PackConv2d")(mod))
    return str(default_schedule(mod[name]).trace)


def conv_relu(x, w, stride: int, pad: int):  # type: ignore[no-untyped-def]
    """relu(conv2d(x, w)) in numpy (NCHW, OIHW), the reference of the kernels' numbers."""
    import numpy as np

    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    oh, ow = (xp.shape[2] - kh) // stride + 1, (xp.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), "float64")
    for i in range(kh):
        for j in range(kw):
            window = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, i, j])
    return np.maximum(out, 0).astype("float32")


def run_default(source: str, args: list):  # type: ignore[no-untyped-def]
    """The default pipeline's result of ``source`` on ``args``."""
    import tvmlite

    ex = tvmlite.compile(get_pipeline("default")(from_source(source)), target="llvm")
    return tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](*args).numpy()


SHALLOW_ONE_BLOCK = """\
# from tvmlite import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="conv2d_NCHWc", func_name="main")
  l1, l2, l3, l4, l5, l6, l7, l8 = sch.get_loops(block=b0)
  l9, l10 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l1, l2, l3, l9, l6, l7, l8, l10, l5)
  l11 = sch.fuse(l1, l2, l3, preserve_unit_iters=True)
  b12 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
  b13 = sch.get_block(name="compute", func_name="main")
  sch.reverse_compute_inline(block=b13)
  sch.reverse_compute_at(block=b12, loop=l9, preserve_unit_loops=False, index=-1)
  b14 = sch.decompose_reduction(block=b0, loop=l6)
  sch.unroll(loop=l10)
  sch.vectorize(loop=l5)
  l15, l16, l17, l18 = sch.get_loops(block=b14)
  sch.unroll(loop=l17)
  sch.vectorize(loop=l18)
  l19, l20, l21, l22 = sch.get_loops(block=b12)
  sch.unroll(loop=l21)
  sch.vectorize(loop=l22)
  sch.unroll(loop=l7)
  sch.unroll(loop=l8)
  b23 = sch.get_block(name="data_pad", func_name="main")
  sch.compute_inline(block=b23)"""


def test_shallow_rule_one_block_trace() -> None:
    """The small CNN's RGB conv (one block of 16 outputs) at 2x3x8x8: tasks of one row (16 tasks at
    most), a tile of 8 columns, kh and kw unrolled, the padded input inlined (read in place)."""
    assert trace_of(CNN, "fused_conv2d_NCHWc_relu") == SHALLOW_ONE_BLOCK


# At the bench's 8x3x32x32: bands of 16 rows per task (16 tasks), the padded input read in place,
# and a tile of 8 columns.
CNN_BENCH = CNN.replace("(2, 3, 8, 8)", "(8, 3, 32, 32)")

SHALLOW_BANDS = """\
# from tvmlite import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="conv2d_NCHWc", func_name="main")
  l1, l2, l3, l4, l5, l6, l7, l8 = sch.get_loops(block=b0)
  l9, l10 = sch.split(loop=l3, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
  l11, l12 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l1, l2, l9, l10, l11, l6, l7, l8, l12, l5)
  l13 = sch.fuse(l1, l2, l9, preserve_unit_iters=True)
  b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
  b15 = sch.get_block(name="compute", func_name="main")
  sch.reverse_compute_inline(block=b15)
  sch.reverse_compute_at(block=b14, loop=l11, preserve_unit_loops=False, index=-1)
  b16 = sch.decompose_reduction(block=b0, loop=l6)
  sch.unroll(loop=l12)
  sch.vectorize(loop=l5)
  l17, l18, l19, l20, l21 = sch.get_loops(block=b16)
  sch.unroll(loop=l20)
  sch.vectorize(loop=l21)
  l22, l23, l24, l25, l26 = sch.get_loops(block=b14)
  sch.unroll(loop=l25)
  sch.vectorize(loop=l26)
  sch.unroll(loop=l7)
  sch.unroll(loop=l8)
  b27 = sch.get_block(name="data_pad", func_name="main")
  sch.compute_inline(block=b27)
  sch.parallel(loop=l13)"""


def test_shallow_rule_one_block_bands_of_rows() -> None:
    assert trace_of(CNN_BENCH, "fused_conv2d_NCHWc_relu") == SHALLOW_BANDS
    import numpy as np

    rng = np.random.default_rng(5)
    x, w1, w2 = (rng.standard_normal(s).astype("float32") for s in ((8, 3, 32, 32), (16, 3, 3, 3), (32, 16, 3, 3)))
    want = conv_relu(conv_relu(x, w1, 1, 1), w2, 1, 1)
    np.testing.assert_allclose(run_default(CNN_BENCH, [x, w1, w2]), want, rtol=1e-4, atol=1e-4)


WIDE = """\
# from tvmlite import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="conv2d_NCHWc", func_name="main")
  l1, l2, l3, l4, l5, l6, l7, l8 = sch.get_loops(block=b0)
  l9, l10 = sch.split(loop=l2, factors=[None, 2], preserve_unit_iters=True, disable_predication=False)
  l11, l12 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l1, l9, l3, l11, l6, l7, l8, l10, l12, l5)
  l13 = sch.fuse(l1, l9, l3, preserve_unit_iters=True)
  b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
  b15 = sch.get_block(name="compute", func_name="main")
  sch.reverse_compute_inline(block=b15)
  sch.reverse_compute_at(block=b14, loop=l11, preserve_unit_loops=False, index=-1)
  b16 = sch.decompose_reduction(block=b0, loop=l6)
  sch.unroll(loop=l10)
  sch.unroll(loop=l12)
  sch.vectorize(loop=l5)
  l17, l18, l19, l20, l21 = sch.get_loops(block=b16)
  sch.unroll(loop=l19)
  sch.unroll(loop=l20)
  sch.vectorize(loop=l21)
  l22, l23, l24, l25, l26 = sch.get_loops(block=b14)
  sch.unroll(loop=l24)
  sch.unroll(loop=l25)
  sch.vectorize(loop=l26)
  b27 = sch.get_block(name="data_pad", func_name="main")
  sch.compute_at(block=b27, loop=l13, preserve_unit_loops=False, index=-1)
  l28, l29, l30, l31 = sch.get_loops(block=b27)
  sch.vectorize(loop=l31)"""


def test_wide_rule_trace() -> None:
    """The 16 -> 32 conv (two output blocks, its 16 input channels one reduction loop): two blocks x 8 columns (the default pipeline's form), the padded rows per task (one pair of blocks: nothing repeats them)."""
    assert trace_of(CNN, "fused_conv2d_NCHWc1_relu1", "default") == WIDE
    # The zero pipeline's form reads ``ic % 16``: the 1-block tile.
    assert "factors=[None, 2]" not in trace_of(CNN, "fused_conv2d_NCHWc1_relu1")


SHALLOW_WIDE = """\
# from tvmlite import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="conv2d_NCHWc", func_name="main")
  l1, l2, l3, l4, l5, l6, l7, l8 = sch.get_loops(block=b0)
  l9, l10 = sch.split(loop=l2, factors=[None, 2], preserve_unit_iters=True, disable_predication=False)
  l11, l12 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l1, l3, l9, l11, l6, l7, l8, l10, l12, l5)
  l13 = sch.fuse(l1, l3, preserve_unit_iters=True)
  b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
  b15 = sch.get_block(name="compute", func_name="main")
  sch.reverse_compute_inline(block=b15)
  sch.reverse_compute_at(block=b14, loop=l11, preserve_unit_loops=False, index=-1)
  b16 = sch.decompose_reduction(block=b0, loop=l6)
  sch.unroll(loop=l10)
  sch.unroll(loop=l12)
  sch.vectorize(loop=l5)
  l17, l18, l19, l20, l21, l22 = sch.get_loops(block=b16)
  sch.unroll(loop=l20)
  sch.unroll(loop=l21)
  sch.vectorize(loop=l22)
  l23, l24, l25, l26, l27, l28 = sch.get_loops(block=b14)
  sch.unroll(loop=l26)
  sch.unroll(loop=l27)
  sch.vectorize(loop=l28)
  sch.unroll(loop=l8)
  b29 = sch.get_block(name="data_pad", func_name="main")
  sch.compute_at(block=b29, loop=l13, preserve_unit_loops=False, index=-1)
  l30, l31, l32, l33 = sch.get_loops(block=b29)
  sch.unroll(loop=l33)"""


def test_shallow_rule_stem_takes_wide_tile() -> None:
    """The 7x7 stride-2 stem (four output blocks): the wide tile, kw unrolled, the padded rows per task
    (task = a row, both block pairs inside it, so the row's padded input is computed once)."""
    assert trace_of(STEM, "fused_conv2d_NCHWc_relu") == SHALLOW_WIDE


RESNET_STEM = STEM.replace("(1, 3, 16, 16)", "(1, 3, 224, 224)")


def test_stem_takes_bands_of_rows() -> None:
    """resnet18's stem (112 output rows): tasks of bands of 7 rows (16 tasks, the band's 19 padded
    input rows of 230 x 3 floats within WIDE_STEM_BAND_BYTES), not of one row each; the small stem
    above (8 rows) keeps tasks of a row."""
    from tvmlite.passes.schedule.conv_rules import WIDE_STEM_BAND_BYTES

    assert WIDE_STEM_BAND_BYTES == 64 * 1024
    trace = trace_of(RESNET_STEM, "fused_conv2d_NCHWc_relu", "default")
    assert "l13, l14 = sch.split(loop=l3, factors=[None, 7], " in trace
    assert "sch.reorder(l1, l13, l14, l9, l11, l6, l7, l8, l10, l12, l5)" in trace
    assert "l15 = sch.fuse(l1, l13, preserve_unit_iters=True)" in trace


def test_stem_bands_match_numpy() -> None:
    """The banded stem (its padded border rows and columns included) against numpy."""
    import numpy as np

    rng = np.random.default_rng(8)
    x, w1 = rng.standard_normal((1, 3, 224, 224)).astype("float32"), rng.standard_normal((64, 3, 7, 7)).astype("float32")
    w2 = rng.standard_normal((32, 64, 3, 3)).astype("float32")
    want = conv_relu(conv_relu(x, w1, 2, 3), w2, 1, 1)
    np.testing.assert_allclose(run_default(RESNET_STEM, [x, w1, w2]), want, rtol=1e-4, atol=1e-3)


DEEP = """\
# from tvmlite import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="conv2d_NCHWc", func_name="main")
  l1, l2, l3, l4, l5, l6, l7, l8 = sch.get_loops(block=b0)
  l9, l10 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l2, l3, l9, l6, l7, l8, l10, l5)
  l11, l12 = sch.split(loop=l6, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l11, l7, l8, l12)
  l13 = sch.fuse(l2, l3, preserve_unit_iters=True)
  b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
  b15 = sch.get_block(name="compute", func_name="main")
  sch.reverse_compute_inline(block=b15)
  sch.reverse_compute_at(block=b14, loop=l9, preserve_unit_loops=False, index=-1)
  b16 = sch.decompose_reduction(block=b0, loop=l11)
  sch.unroll(loop=l10)
  sch.vectorize(loop=l5)
  l17, l18, l19, l20, l21 = sch.get_loops(block=b16)
  sch.vectorize(loop=l21)
  sch.unroll(loop=l20)
  l22, l23, l24, l25, l26 = sch.get_loops(block=b14)
  sch.vectorize(loop=l26)
  sch.unroll(loop=l25)
  sch.parallel(loop=l13)
  b27 = sch.get_block(name="data_pad", func_name="main")
  l28, l29, l30, l31, l32 = sch.get_loops(block=b27)
  l33, l34 = sch.split(loop=l32, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
  sch.vectorize(loop=l34)
  l35 = sch.fuse(l28, l29, l30, l31, l33, preserve_unit_iters=True)"""


def test_deep_conv_keeps_packed_conv_tile() -> None:
    """64 -> 32 channels (input read at ic % 16): neither new rule, the packed-conv tile of one block x 8 columns."""
    assert trace_of(STEM, "fused_conv2d_NCHWc1_relu1") == DEEP


def test_stem_and_deep_conv_match_numpy() -> None:
    """The stem (wide tile, pad per task) and the conv after it against numpy."""
    import numpy as np

    rng = np.random.default_rng(1)
    x, w1, w2 = (rng.standard_normal(s).astype("float32") for s in ((1, 3, 16, 16), (64, 3, 7, 7), (32, 64, 3, 3)))
    want = conv_relu(conv_relu(x, w1, 2, 3), w2, 1, 1)
    np.testing.assert_allclose(run_default(STEM, [x, w1, w2]), want, rtol=1e-4, atol=1e-4)


def test_cnn_matches_numpy() -> None:
    """The small CNN's two convs (shallow one-block tile, wide tile) against numpy."""
    import numpy as np

    rng = np.random.default_rng(2)
    x, w1, w2 = (rng.standard_normal(s).astype("float32") for s in ((2, 3, 8, 8), (16, 3, 3, 3), (32, 16, 3, 3)))
    want = conv_relu(conv_relu(x, w1, 1, 1), w2, 1, 1)
    np.testing.assert_allclose(run_default(CNN, [x, w1, w2]), want, rtol=1e-4, atol=1e-4)


# 3x3 stride-2 convs over two blocks of 16 input channels (read at ``ic % 16``): to 8 columns (the
# two-block tile), then to 4 columns, and a strided 1x1 conv (both keep the one-block tile).
STRIDED = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 32, 16, 16), "float32"), w1: R.Tensor((32, 32, 3, 3), "float32"), w2: R.Tensor((32, 32, 3, 3), "float32"), w3: R.Tensor((32, 32, 1, 1), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w1, strides=[2, 2], padding=[1, 1, 1, 1]))
            b = R.nn.relu(R.nn.conv2d(a, w2, strides=[2, 2], padding=[1, 1, 1, 1]))
            c = R.nn.relu(R.nn.conv2d(a, w3, strides=[2, 2]))
            y = R.add(b, c)
            R.output(y)
        return y
'''

STRIDED_WIDE = """\
# from tvmlite import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="conv2d_NCHWc", func_name="main")
  l1, l2, l3, l4, l5, l6, l7, l8 = sch.get_loops(block=b0)
  l9, l10 = sch.split(loop=l2, factors=[None, 2], preserve_unit_iters=True, disable_predication=False)
  l11, l12 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l1, l9, l3, l11, l6, l7, l8, l10, l12, l5)
  l13 = sch.fuse(l1, l9, l3, preserve_unit_iters=True)
  l14, l15 = sch.split(loop=l6, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l14, l7, l8, l15)
  b16 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
  b17 = sch.get_block(name="compute", func_name="main")
  sch.reverse_compute_inline(block=b17)
  sch.reverse_compute_at(block=b16, loop=l11, preserve_unit_loops=False, index=-1)
  b18 = sch.decompose_reduction(block=b0, loop=l14)
  sch.unroll(loop=l10)
  sch.unroll(loop=l12)
  sch.vectorize(loop=l5)
  l19, l20, l21, l22, l23 = sch.get_loops(block=b18)
  sch.unroll(loop=l21)
  sch.unroll(loop=l22)
  sch.vectorize(loop=l23)
  l24, l25, l26, l27, l28 = sch.get_loops(block=b16)
  sch.unroll(loop=l26)
  sch.unroll(loop=l27)
  sch.vectorize(loop=l28)
  b29 = sch.get_block(name="data_pad", func_name="main")
  sch.compute_at(block=b29, loop=l13, preserve_unit_loops=False, index=-1)
  l30, l31, l32, l33, l34 = sch.get_loops(block=b29)
  sch.vectorize(loop=l34)"""


def test_strided_conv_takes_wide_tile() -> None:
    """A 3x3 stride-2 conv to 8 columns: the two-block tile (both pipelines' forms); to 4 columns,
    and a strided 1x1 conv: the one-block packed-conv tile."""
    from tvmlite.passes.schedule.conv_rules import WIDE_STRIDED_MIN_WIDTH

    assert WIDE_STRIDED_MIN_WIDTH == 8
    for pipeline in ("zero", "default"):
        assert trace_of(STRIDED, "fused_conv2d_NCHWc_relu", pipeline) == STRIDED_WIDE
    for name in ("fused_conv2d_NCHWc1_relu1_add", "fused_conv2d_NCHWc2_relu1"):  # 3x3 to 4 columns, the 1x1
        trace = trace_of(STRIDED, name)
        assert "factors=[None, 2]" not in trace and "factors=[None, 4]" in trace


@pytest.mark.parametrize("which", ["STRIDED", "STRIDED_ROWS"])
def test_strided_convs_match_numpy(which: str) -> None:
    """The strided convs (two-block tiles, in tasks of a block pair or of a row, and one-block
    tiles) and the add after them against numpy."""
    import numpy as np

    mid = 32 if which == "STRIDED" else 64
    rng = np.random.default_rng(3)
    x, w1, w2, w3 = (rng.standard_normal(s).astype("float32")
                     for s in ((1, 32, 16, 16), (mid, 32, 3, 3), (32, mid, 3, 3), (32, mid, 1, 1)))
    a = conv_relu(x, w1, 2, 1)
    want = conv_relu(a, w2, 2, 1) + conv_relu(a, w3, 2, 0)
    np.testing.assert_allclose(run_default(globals()[which], [x, w1, w2, w3]), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("n, h, k, stride, pad, split", [
    (4, 32, 3, 2, 1, "l9, l10 = sch.split(loop=l3, factors=[None, 4], "),  # stride 2: bands of 4 of 16 rows
    (8, 20, 5, 1, 2, "l9, l10 = sch.split(loop=l3, factors=[None, 10], "),  # a 5x5 kernel: bands of 10 rows
])
def test_shallow_one_block_bands_numbers(n: int, h: int, k: int, stride: int, pad: int, split: str) -> None:
    """The banded one-block tile on strided and wider kernels computes numpy's numbers."""
    import numpy as np

    source = f'''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({n}, 3, {h}, {h}), "float32"), w1: R.Tensor((16, 3, {k}, {k}), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w1, strides=[{stride}, {stride}], padding=[{pad}, {pad}, {pad}, {pad}]))
            R.output(a)
        return a
'''
    assert split in trace_of(source, "fused_conv2d_NCHWc_relu")
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((n, 3, h, h)).astype("float32"), rng.standard_normal((16, 3, k, k)).astype("float32")
    np.testing.assert_allclose(run_default(source, [x, w]), conv_relu(x, w, stride, pad), rtol=1e-4, atol=1e-4)


# resnet18's layer-1 conv (64 -> 64 channels at 56x56, four output blocks, the padded input 861 KB)
# and a layer-2 conv (128 -> 128 at 28x28, eight output blocks).
BANDED = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), w1: R.Tensor((64, 64, 3, 3), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w1, padding=[1, 1, 1, 1]))
            R.output(a)
        return a
'''

LAYER2 = BANDED.replace("(1, 64, 56, 56)", "(1, 128, 28, 28)").replace("(64, 64, 3, 3)", "(128, 128, 3, 3)")


BANDED_TRACE = """\
# from tvmlite import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="conv2d_NCHWc", func_name="main")
  l1, l2, l3, l4, l5, l6, l7, l8 = sch.get_loops(block=b0)
  l9, l10 = sch.split(loop=l3, factors=[None, 14], preserve_unit_iters=True, disable_predication=False)
  l11, l12 = sch.split(loop=l4, factors=[None, 14], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l1, l9, l2, l10, l11, l6, l7, l8, l12, l5)
  l13, l14 = sch.split(loop=l6, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l13, l7, l8, l14)
  l15 = sch.fuse(l1, l9, preserve_unit_iters=True)
  b16 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
  b17 = sch.get_block(name="compute", func_name="main")
  sch.reverse_compute_inline(block=b17)
  sch.reverse_compute_at(block=b16, loop=l11, preserve_unit_loops=False, index=-1)
  b18 = sch.decompose_reduction(block=b0, loop=l13)
  sch.unroll(loop=l12)
  sch.vectorize(loop=l5)
  l19, l20, l21, l22, l23, l24 = sch.get_loops(block=b18)
  sch.vectorize(loop=l24)
  sch.unroll(loop=l23)
  l25, l26, l27, l28, l29, l30 = sch.get_loops(block=b16)
  sch.vectorize(loop=l30)
  sch.unroll(loop=l29)
  b31 = sch.get_block(name="data_pad", func_name="main")
  sch.compute_at(block=b31, loop=l15, preserve_unit_loops=False, index=-1)
  l32, l33, l34, l35, l36 = sch.get_loops(block=b31)
  sch.vectorize(loop=l36)
  sch.parallel(loop=l15)
  sch.annotate(block_or_loop=l14, ann_key="tvmlite.prefetch", ann_val=16384)"""


def test_banded_pad_trace() -> None:
    """The 56x56 64-channel conv: tasks of bands of 14 rows (four tasks), the four output blocks
    inside a task, the band's 16 padded rows computed by the task (no separate pad pass); its 147 KB
    of weights prefetched 16 KB ahead in the inner channel loop (ic_outer, kh, kw, ic_inner)."""
    trace = trace_of(BANDED, "fused_conv2d_NCHWc_relu", "default")
    assert trace == BANDED_TRACE


def local_buffers(source: str, name: str) -> dict[str, int]:
    """The elements of each buffer the lowered kernel ``name`` of ``source`` declares for itself
    (the per-task padded rows, the register tile), after the default pipeline and lowering."""
    from tvmlite.ir import tir
    from tvmlite.ir.stmt_functor import post_order_visit

    lowered = get_pipeline("default_tir")(IRModule({name: get_pipeline("default")(from_source(source))[name]}))
    sizes: dict[str, int] = {}

    def visit(node: object) -> None:
        if isinstance(node, tir.DeclBuffer) and node.buffer.data not in params:
            sizes[node.buffer.name] = int(node.buffer.shape[0].value)

    func = lowered[name]
    params = {func.buffer_map[p].data for p in func.params}
    post_order_visit(func.body, visit)
    return sizes


def test_banded_pad_buffer_holds_one_band() -> None:
    """Each task's padded rows are a buffer of one band (16 rows x 58 columns x 64 channels), not
    the whole padded input at a task's offset: the fused task loop binds the band alike in the pad
    and in the conv, so region compaction sees one base."""
    sizes = local_buffers(BANDED, "fused_conv2d_NCHWc_relu")
    assert sizes["data_pad"] == 16 * 58 * 64
    assert sizes["conv2d_NCHWc_intermediate_local"] == 14 * 16


def test_banded_pad_limits() -> None:
    """Eight output blocks (resnet18's 28x28 128-channel conv) and a small padded input keep the
    packed-conv tile with its separate pad pass."""
    from tvmlite.passes.schedule.conv_rules import BANDED_PAD_MAX_BLOCKS, BANDED_PAD_MIN_BYTES

    assert (BANDED_PAD_MAX_BLOCKS, BANDED_PAD_MIN_BYTES) == (4, 512 * 1024)
    assert "sch.compute_at(" not in trace_of(LAYER2, "fused_conv2d_NCHWc_relu", "default")
    assert trace_of(STEM, "fused_conv2d_NCHWc1_relu1") == DEEP


def test_banded_pad_matches_numpy() -> None:
    """The banded tile's conv (and its padded border rows and columns) against numpy."""
    import numpy as np

    rng = np.random.default_rng(11)
    x, w = rng.standard_normal((1, 64, 56, 56)).astype("float32"), rng.standard_normal((64, 64, 3, 3)).astype("float32")
    np.testing.assert_allclose(run_default(BANDED, [x, w]), conv_relu(x, w, 1, 1), rtol=1e-4, atol=1e-3)


# resnet18's last stage, narrowed to 256 channels: 3x3 convs on a 7x7 map (2.4 MB of weights each).
NARROW = BANDED.replace("(1, 64, 56, 56)", "(1, 256, 7, 7)").replace("(64, 64, 3, 3)", "(256, 256, 3, 3)")


def test_narrow_rows_take_the_one_block_tile_with_channels_inside_taps() -> None:
    """Output rows of 7 columns: the one-block tile (tasks of (block, row), 7 columns), reducing
    over (ic_outer, kh, kw, ic_inner) so the 2.4 MB of weights stream in memory order, prefetched."""
    trace = trace_of(NARROW, "fused_conv2d_NCHWc_relu", "default")
    assert "factors=[None, 2]" not in trace  # no pairs of output blocks
    assert "l9, l10 = sch.split(loop=l4, factors=[None, 7], " in trace  # the row's 7 columns
    assert "l11, l12 = sch.split(loop=l6, factors=[None, 16], " in trace  # ic by the input's blocks
    assert "sch.reorder(l11, l7, l8, l12)" in trace  # ic_outer, kh, kw, ic_inner
    assert 'sch.annotate(block_or_loop=l12, ann_key="tvmlite.prefetch", ann_val=16384)' in trace


def test_narrow_rows_match_numpy() -> None:
    """The 7x7 map's tile (its padded border included) against numpy."""
    import numpy as np

    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 256, 7, 7)).astype("float32"), rng.standard_normal((256, 256, 3, 3)).astype("float32")
    np.testing.assert_allclose(run_default(NARROW, [x, w]), conv_relu(x, w, 1, 1), rtol=1e-4, atol=1e-3)


# A 3x3 stride-2 conv to four output blocks (32 -> 64 channels, 73 KB of weights): the two-block tile
# in tasks of one output row with both pairs inside, each task computing the row's padded input.
STRIDED_ROWS = STRIDED.replace("w1: R.Tensor((32, 32, 3, 3)", "w1: R.Tensor((64, 32, 3, 3)").replace(
    "w2: R.Tensor((32, 32, 3, 3)", "w2: R.Tensor((32, 64, 3, 3)").replace(
    "w3: R.Tensor((32, 32, 1, 1)", "w3: R.Tensor((32, 64, 1, 1)")


def test_wide_tile_with_small_weights_takes_row_tasks() -> None:
    from tvmlite.passes.schedule.conv_rules import WIDE_ROW_TASK_BYTES

    assert WIDE_ROW_TASK_BYTES == 512 * 1024
    trace = trace_of(STRIDED_ROWS, "fused_conv2d_NCHWc_relu", "default")
    assert "sch.reorder(l1, l3, l9, l11, l6, l7, l8, l10, l12, l5)" in trace  # row, then the pairs
    assert "l13 = sch.fuse(l1, l3, preserve_unit_iters=True)" in trace
    assert 'b31 = sch.get_block(name="data_pad", func_name="main")' in trace  # the pad per task
    assert "sch.compute_at(block=b31, loop=l13" in trace


# A 3x3 stride-2 conv to 8 columns with 1.18 MB of weights (128 -> 256 channels): the one-block tile,
# whose weight loop prefetches them, not the two-block tile.
STRIDED_HEAVY = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 128, 16, 16), "float32"), w: R.Tensor((256, 128, 3, 3), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w, strides=[2, 2], padding=[1, 1, 1, 1]))
            R.output(a)
        return a
'''


def test_strided_conv_with_large_weights_takes_the_prefetching_one_block_tile() -> None:
    from tvmlite.passes.schedule.conv_rules import WIDE_STRIDED_MAX_BYTES

    assert WIDE_STRIDED_MAX_BYTES == 512 * 1024
    trace = trace_of(STRIDED_HEAVY, "fused_conv2d_NCHWc_relu", "default")
    assert "factors=[None, 2]" not in trace and "factors=[None, 8]" in trace
    assert 'ann_key="tvmlite.prefetch"' in trace


def test_strided_conv_with_large_weights_matches_numpy() -> None:
    import numpy as np

    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((1, 128, 16, 16)).astype("float32"), rng.standard_normal((256, 128, 3, 3)).astype("float32")
    np.testing.assert_allclose(run_default(STRIDED_HEAVY, [x, w]), conv_relu(x, w, 2, 1), rtol=1e-4, atol=1e-3)
