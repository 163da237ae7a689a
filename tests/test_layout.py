"""ConvertLayout / AlterOpLayout: packed conv2d layouts (NCHW8c data, OIHW8i8o kernel) with
``R.layout_transform`` at the edges; the packed conv2d's struct info and legalization
(``topi.nn.conv2d_NCHWc``); converted modules compute what the originals compute (legalized and
run through ``te.evaluate_prim_func``); weight transforms fold into constants."""
import pathlib
import sys

import numpy as np
import pytest

from tvmlite import passes as P
from tvmlite import relax
from tvmlite.ir import relax as rx
from tvmlite.ir import structural_equal
from tvmlite.ir.layout import Layout, LayoutError
from tvmlite.ir.module import IRModule
from tvmlite.ir.op import OpError
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.passes import AlterOpLayout, ConvertLayout, LegalizeOps, PassContext
from tvmlite.ir.target import host_cpu
from tvmlite.passes.layout import VECTOR_WIDTH_CONFIG, host_vector_width
from tvmlite.script import from_source
from tvmlite.testing import assert_round_trip, check_transform

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from legalize_util import build, params_for, run  # noqa: E402

op = relax.op
rng = np.random.default_rng(11)
NCHW8C = {"relax.nn.conv2d": ["NCHW8c", "OIHW8i8o"]}


def f32(*shape):
    return rng.standard_normal(shape).astype("float32")


def body(text: str) -> str:
    """A printed module without the import comments."""
    return "\n".join(line for line in text.strip("\n").split("\n") if not line.startswith("# from ")).strip("\n")


def module(text: str) -> IRModule:
    """A module from a script of a module or of a lone function (which becomes ``main``)."""
    ir = from_source(text)
    return ir if isinstance(ir, IRModule) else IRModule.from_expr(ir)


def calls(mod, name: str, func: str = "main") -> list[rx.Call]:
    """The calls of op ``name`` bound in ``func``."""
    out = []
    for block in mod[func].body.blocks:
        for b in block.bindings:
            v = b.value
            if isinstance(v, rx.Call) and isinstance(v.op, rx.Op) and v.op.name == name:
                out.append(v)
    return out


def _np_layout(arr: np.ndarray, src: str, dst: Layout) -> np.ndarray:
    """``arr`` (in the unpacked layout ``src``) rearranged into ``dst`` with numpy."""
    arr = arr.transpose([src.index(a) for a in dst.primal])  # primal order of dst
    shape: list[int] = []
    for k, a in enumerate(dst.primal):
        f = dst.factor(a)
        shape += [arr.shape[k]] if f is None else [arr.shape[k] // f, f]
    # After the reshape each split axis is (outer, inner): find every dst axis among them.
    pos: dict[str, int] = {}
    for a in dst.primal:
        pos[a] = len(pos)
        if dst.factor(a) is not None:
            pos[a.lower()] = len(pos)
    return arr.reshape(shape).transpose([pos[a] for a, _ in dst.axes])


# ------------------------------------------------------------------ the printed result
CONV_BIAS_RELU = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 8, 8), dtype="float32"), w: R.Tensor((16, 16, 3, 3), dtype="float32"), b: R.Tensor((1, 16, 1, 1), dtype="float32")) -> R.Tensor((1, 16, 8, 8), dtype="float32"):
        with R.dataflow():
            conv: R.Tensor((1, 16, 8, 8), dtype="float32") = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], out_dtype="float32")
            biased: R.Tensor((1, 16, 8, 8), dtype="float32") = R.add(conv, b)
            gv: R.Tensor((1, 16, 8, 8), dtype="float32") = R.nn.relu(biased)
            R.output(gv)
        return gv
'''

CONV_BIAS_RELU_NCHW8C = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 8, 8), dtype="float32"), w: R.Tensor((16, 16, 3, 3), dtype="float32"), b: R.Tensor((1, 16, 1, 1), dtype="float32")) -> R.Tensor((1, 16, 8, 8), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((1, 2, 8, 8, 8), dtype="float32") = R.layout_transform(x, index_map=T.index_map(lambda i0, i1, i2, i3: (i0, i1 // 8, i2, i3, i1 % 8), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
            lv1: R.Tensor((2, 2, 3, 3, 8, 8), dtype="float32") = R.layout_transform(w, index_map=T.index_map(lambda i0, i1, i2, i3: (i0 // 8, i1 // 8, i2, i3, i1 % 8, i0 % 8), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
            conv: R.Tensor((1, 2, 8, 8, 8), dtype="float32") = R.nn.conv2d(lv, lv1, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c", out_dtype="float32")
            lv2: R.Tensor((1, 2, 1, 1, 8), dtype="float32") = R.layout_transform(b, index_map=T.index_map(lambda i0, i1, i2, i3: (i0, i1 // 8, i2, i3, i1 % 8), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
            biased: R.Tensor((1, 2, 8, 8, 8), dtype="float32") = R.add(conv, lv2)
            lv3: R.Tensor((1, 2, 8, 8, 8), dtype="float32") = R.nn.relu(biased)
            gv: R.Tensor((1, 16, 8, 8), dtype="float32") = R.layout_transform(lv3, index_map=T.index_map(lambda i0, i1, i2, i3, i4: (i0, i1 * 8 + i4, i2, i3), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
            R.output(gv)
        return gv
'''


def test_convert_layout_prints_packed_chain():
    """conv2d + bias + relu in NCHW8c: transforms of x, w and b before, one transform back at the end."""
    out = ConvertLayout(NCHW8C)(from_source(CONV_BIAS_RELU))
    assert body(out.script()) == body(CONV_BIAS_RELU_NCHW8C)
    assert structural_equal(out, from_source(CONV_BIAS_RELU_NCHW8C))
    assert not well_formed_errors(out)
    assert_round_trip(out)


def test_matches_tvm_sub_indexed_example():
    """TVM's test_conv2d_relu_sub_indexed (NCHW4c / OIHW4o): the same module."""
    before = '''
@I.ir_module
class Input:
    @R.function
    def main(x: R.Tensor((2, 16, 28, 28), "float32"), w: R.Tensor((4, 16, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(x, w, out_dtype="float32")
            gv2: R.Tensor((2, 4, 26, 26), "float32") = R.nn.relu(gv)
            R.output(gv2)
        return gv2
'''
    expected = '''
@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((2, 16, 28, 28), dtype="float32"), w: R.Tensor((4, 16, 3, 3), dtype="float32")) -> R.Tensor((2, 4, 26, 26), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((2, 4, 28, 28, 4), dtype="float32") = R.layout_transform(
                x,
                index_map=T.index_map(lambda i0, i1, i2, i3: (i0, i1 // 4, i2, i3, i1 % 4), index_dtype="int32"),
            )
            lv1: R.Tensor((1, 16, 3, 3, 4), dtype="float32") = R.layout_transform(
                w,
                index_map=T.index_map(lambda i0, i1, i2, i3: (i0 // 4, i1, i2, i3, i0 % 4), index_dtype="int32"),
            )
            gv: R.Tensor((2, 1, 26, 26, 4), dtype="float32") = R.nn.conv2d(
                lv, lv1, data_layout="NCHW4c", kernel_layout="OIHW4o", out_layout="NCHW4c", out_dtype="float32"
            )
            lv2: R.Tensor((2, 1, 26, 26, 4), dtype="float32") = R.nn.relu(gv)
            gv2: R.Tensor((2, 4, 26, 26), dtype="float32") = R.layout_transform(
                lv2,
                index_map=T.index_map(lambda i0, i1, i2, i3, i4: (i0, i1 * 4 + i4, i2, i3), index_dtype="int32"),
            )
            R.output(gv2)
        return gv2
'''
    check_transform(before, expected, ConvertLayout({"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]}))


# ------------------------------------------------------------------ numbers
CHAIN = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 8, 7, 7), dtype="float32"), w0: R.Tensor((16, 3, 3, 8), dtype="float32"), b: R.Tensor((16,), dtype="float32"), w: R.Tensor((8, 16, 3, 3), dtype="float32")):
        n = T.int64()
        with R.dataflow():
            y = R.permute_dims(x, axes=[0, 2, 3, 1])
            c0 = R.nn.conv2d(y, w0, strides=[2, 1], padding=[1, 0, 1, 2], data_layout="NHWC", kernel_layout="OHWI", out_layout="NHWC")
            c1 = R.add(c0, b)
            c2 = R.nn.relu(c1)
            c2p = R.permute_dims(c2, axes=[0, 3, 1, 2])
            c3 = R.nn.conv2d(c2p, w, padding=[1, 1, 1, 1], dilation=[2, 1])
            c4 = R.multiply(c3, R.const(0.5, "float32"))
            c5 = R.sum(c4, axis=[1])
            gv = (c4, c5)
            R.output(gv)
        return gv
'''


@pytest.mark.parametrize("pass_, layouts", [
    (ConvertLayout(NCHW8C), {("NCHW8c", "OIHW8i8o", "NCHW8c")}),
    (ConvertLayout({"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]}), {("NCHW4c", "OIHW4o", "NCHW4c")}),
    (ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]}), {("NHWC", "OHWI", "NHWC")}),
    (AlterOpLayout(vector_width=4), {("NCHW4c", "OIHW4i4o", "NCHW4c")}),
    (AlterOpLayout(vector_width=16), {("NCHW8c", "OIHW8i16o", "NCHW16c"), ("NCHW16c", "OIHW16i8o", "NCHW8c")}),
], ids=["NCHW8c", "NCHW4c-OIHW4o", "NHWC", "alter-4", "alter-16"])
def test_converted_module_computes_the_original(pass_, layouts):
    """NHWC and NCHW convs, a rank-1 bias, relu, a scalar multiply, a reduction and a tuple output:
    legalized and run, the converted module gives the original's numbers (symbolic batch, n = 2)."""
    mod = from_source(CHAIN)
    out = pass_(mod)
    assert not well_formed_errors(out)
    assert {(c.attrs["data_layout"], c.attrs["kernel_layout"], c.attrs["out_layout"])
            for c in calls(out, "relax.nn.conv2d")} == layouts
    args = [f32(2, 8, 7, 7), f32(16, 3, 3, 8), f32(16), f32(8, 16, 3, 3)]
    want = run(LegalizeOps()(mod), args)
    got = run(LegalizeOps()(out), args)
    assert not calls(LegalizeOps()(out), "relax.nn.conv2d")  # every conv was legalized
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_layout_stays_packed_between_convs():
    """conv -> add -> relu -> conv: no transform between the convs, one transform back at the end."""
    out = ConvertLayout(NCHW8C)(module('''
@R.function
def main(x: R.Tensor((1, 16, 6, 6), dtype="float32"), w1: R.Tensor((16, 16, 3, 3), dtype="float32"), b: R.Tensor((1, 16, 1, 1), dtype="float32"), w2: R.Tensor((8, 16, 1, 1), dtype="float32")):
    with R.dataflow():
        a = R.nn.conv2d(x, w1, padding=[1, 1, 1, 1])
        c = R.nn.relu(R.add(a, b))
        gv = R.nn.conv2d(c, w2)
        R.output(gv)
    return gv
'''))
    sources = [t.args[0].name_hint for t in calls(out, "relax.layout_transform")]
    assert sources == ["x", "w1", "b", "w2", "lv4"]  # inputs, bias, second weight, the result back
    second = calls(out, "relax.nn.conv2d")[1]
    assert second.args[0].name_hint == "c"  # the relu's packed result, as it is


def test_weights_fold_into_constants():
    """With constant weights and bias, FoldConstant folds their layout_transforms into packed constants."""
    w, b = f32(16, 8, 3, 3), f32(16, 1, 1)
    x = relax.Var("x", relax.TensorStructInfo((1, 8, 6, 6), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            conv = bb.emit(op.nn.conv2d(x, relax.const(w), padding=[1, 1, 1, 1]), name_hint="conv")
            gv = bb.emit_output(op.nn.relu(op.add(conv, relax.const(b))))
        bb.emit_func_output(gv)
    mod = bb.get()
    out = ConvertLayout(NCHW8C)(mod)
    assert len(calls(out, "relax.layout_transform")) == 4  # x, w, b (after expand_dims), the result
    FoldConstant = getattr(P, "FoldConstant", None)
    if FoldConstant is not None:
        folded = FoldConstant()(out)
        transforms = calls(folded, "relax.layout_transform")
        assert [t.args[0].name_hint for t in transforms] == ["x", "lv4"]  # only the data's edges remain
        kernel = calls(folded, "relax.nn.conv2d")[0].args[1]
        assert isinstance(kernel, rx.Constant)
        np.testing.assert_array_equal(kernel.data, _np_layout(w, "OIHW", Layout.parse("OIHW8i8o")))
        bias = calls(folded, "relax.add")[0].args[1]
        assert isinstance(bias, rx.Constant)
        np.testing.assert_array_equal(bias.data, _np_layout(b[None], "NCHW", Layout.parse("NCHW8c")))
        out = folded
    data = f32(1, 8, 6, 6)
    np.testing.assert_allclose(run(LegalizeOps()(out), [data]), run(LegalizeOps()(mod), [data]),
                               rtol=1e-5, atol=1e-5)


def test_pipeline_fuses_the_packed_conv_with_its_epilogue():
    """ConvertLayout, (FoldConstant,) LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR: the packed
    conv2d, bias add and relu become one ``fused_conv2d_NCHWc_add_relu`` between two transforms."""
    w, b = f32(16, 8, 3, 3), f32(16, 1, 1)
    mod = build(lambda x: op.nn.relu(op.add(op.nn.conv2d(x, relax.const(w), padding=1), relax.const(b))),
                params_for([np.zeros((1, 8, 6, 6), "float32")]))
    fold = [P.FoldConstant()] if hasattr(P, "FoldConstant") else []
    seq = P.Sequential([ConvertLayout(NCHW8C), *fold, LegalizeOps(), P.AnnotateTIROpPattern(), P.FuseOps(),
                        P.FuseTIR(), P.DeadCodeElimination()])
    with PassContext(opt_level=3):
        out = seq(mod)
    if fold:
        assert sorted(gv.name_hint for gv in out.get_global_vars()) == [
            "fused_conv2d_NCHWc_add_relu", "main", "te_layout_transform", "te_layout_transform1"]
    assert "fused_conv2d_NCHWc_add_relu" in [gv.name_hint for gv in out.get_global_vars()]
    x = f32(1, 8, 6, 6)
    np.testing.assert_allclose(run(out, [x]), run(LegalizeOps()(mod), [x]), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ what stays as it is
def _conv_module(data_shape, weight_shape, **attrs):
    return build(lambda x, w: op.nn.relu(op.nn.conv2d(x, w, **attrs)),
                 params_for([np.zeros(data_shape, "float32"), np.zeros(weight_shape, "float32")]))


@pytest.mark.parametrize("data_shape, weight_shape, attrs", [
    ((1, 3, 8, 8), (16, 3, 3, 3), {}),               # 3 input channels: NCHW8c does not divide them
    ((1, 16, 8, 8), (12, 16, 3, 3), {}),             # 12 output channels
    ((1, 16, 8, 8), (16, 8, 3, 3), {"groups": 2}),   # grouped: a block would straddle groups
], ids=["input-channels", "output-channels", "groups"])
def test_left_alone_when_the_layout_does_not_divide(data_shape, weight_shape, attrs):
    """No padding is inserted: such convolutions keep their layout (as TVM's ConvertLayout)."""
    mod = _conv_module(data_shape, weight_shape, **attrs)
    out = ConvertLayout(NCHW8C)(mod)
    assert structural_equal(out, mod)
    if attrs.get("groups"):
        assert structural_equal(AlterOpLayout(vector_width=8)(mod), mod)


def test_already_packed_and_idempotent():
    """A converted module converts to itself; hand-packed convolutions are kept."""
    once = ConvertLayout(NCHW8C)(from_source(CONV_BIAS_RELU))
    assert structural_equal(ConvertLayout(NCHW8C)(once), once)
    assert structural_equal(ConvertLayout({"relax.nn.conv2d": ["NCHW4c", "OIHW4i4o"]})(once), once)


def test_only_dataflow_blocks_are_rewritten():
    mod = module('''
@R.function
def main(x: R.Tensor((1, 16, 8, 8), dtype="float32"), w: R.Tensor((16, 16, 3, 3), dtype="float32")):
    gv = R.nn.conv2d(x, w)
    return gv
''')
    assert structural_equal(ConvertLayout(NCHW8C)(mod), mod)


MIXED_CONSUMERS = '''
@R.function
def main(x: R.Tensor((1, 16, 4, 4), dtype="float32"), w: R.Tensor((16, 16, 1, 1), dtype="float32"), t: R.Tensor((2, 1, 16, 4, 4), dtype="float32")):
    with R.dataflow():
        c = R.nn.conv2d(x, w)
        s = R.nn.softmax(c, axis=1)
        r = R.sum(c, axis=[1])
        big = R.add(c, t)
        gv = (s, r, big)
        R.output(gv)
    return gv
'''


def test_consumers_that_are_not_layout_agnostic():
    """softmax and sum see the original layout, through one shared transform back; an operand of
    higher rank cannot follow the packed layout, so that add runs in the original layout too."""
    mod = module(MIXED_CONSUMERS)
    out = ConvertLayout(NCHW8C)(mod)
    back = [b.var for block in out["main"].body.blocks for b in block.bindings
            if isinstance(b.value, rx.Call) and b.value.op.name == "relax.layout_transform"
            and b.value.args[0].name_hint == "c"]
    assert len(back) == 1
    for name in ("relax.nn.softmax", "relax.sum", "relax.add"):
        assert calls(out, name)[0].args[0] is back[0]
    args = [f32(1, 16, 4, 4), f32(16, 16, 1, 1), f32(2, 1, 16, 4, 4)]
    for got, want in zip(run(LegalizeOps()(out), args), run(LegalizeOps()(mod), args)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ AlterOpLayout
def _conv_layouts(mod):
    return [(c.attrs["data_layout"], c.attrs["kernel_layout"], c.attrs["out_layout"])
            for c in calls(mod, "relax.nn.conv2d")]


def test_alter_op_layout_picks_the_vector_width():
    """8 floats (AVX2) gives NCHW8c / OIHW8i8o; the argument beats the config key, which beats the host."""
    mod = _conv_module((1, 32, 8, 8), (32, 32, 3, 3), padding=1)
    assert _conv_layouts(AlterOpLayout(vector_width=8)(mod)) == [("NCHW8c", "OIHW8i8o", "NCHW8c")]
    with PassContext(config={VECTOR_WIDTH_CONFIG: 16}):
        assert _conv_layouts(AlterOpLayout()(mod)) == [("NCHW16c", "OIHW16i16o", "NCHW16c")]
        assert _conv_layouts(AlterOpLayout(vector_width=8)(mod)) == [("NCHW8c", "OIHW8i8o", "NCHW8c")]
    host = host_vector_width()
    assert _conv_layouts(AlterOpLayout()(mod)) == [(f"NCHW{host}c", f"OIHW{host}i{host}o", f"NCHW{host}c")]


def test_alter_op_layout_blocks_divide_the_channels():
    """Each block is the largest divisor of its channel count within the width (as TVM's x86
    schedule picks ic_bn / oc_bn), so the first conv of an RGB image packs by 3."""
    mod = _conv_module((1, 3, 8, 8), (12, 3, 3, 3))
    assert _conv_layouts(AlterOpLayout(vector_width=8)(mod)) == [("NCHW3c", "OIHW3i6o", "NCHW6c")]
    x, w = f32(1, 3, 8, 8), f32(12, 3, 3, 3)
    np.testing.assert_allclose(run(LegalizeOps()(AlterOpLayout(vector_width=8)(mod)), [x, w]),
                               run(LegalizeOps()(mod), [x, w]), rtol=1e-5, atol=1e-5)


def test_alter_op_layout_scales_the_width_to_the_dtype():
    """The width counts 32-bit lanes: 8 lanes hold 16 float16 values or 4 float64 values."""
    for dtype, block in (("float16", 16), ("float64", 4)):
        mod = build(lambda x, w: op.nn.conv2d(x, w),
                    params_for([np.zeros((1, 32, 4, 4), dtype), np.zeros((32, 32, 1, 1), dtype)]))
        assert _conv_layouts(AlterOpLayout(vector_width=8)(mod))[0][0] == f"NCHW{block}c"


@pytest.mark.parametrize("features, width", [({"avx512f": True, "avx2": True}, 16), ({"avx2": True}, 8),
                                             ({"avx": True}, 8), ({"sse4.2": True}, 4)])
def test_host_vector_width_from_llvmlite_features(monkeypatch, features, width):
    llvm = pytest.importorskip("llvmlite.binding")
    monkeypatch.setattr(llvm, "get_host_cpu_features", lambda: features)
    host_cpu.cache_clear()
    try:
        assert host_vector_width() == width
    finally:
        host_cpu.cache_clear()


def test_host_cpu_is_asked_in_one_place(monkeypatch):
    """ir/target.py detects the host once; the pass and the code generator read it from there."""
    llvm = pytest.importorskip("llvmlite.binding")
    calls = []
    monkeypatch.setattr(llvm, "get_host_cpu_features", lambda: calls.append(1) or {"avx2": True, "fma": False})
    host_cpu.cache_clear()
    try:
        assert host_vector_width() == 8 and host_vector_width() == 8
        assert host_cpu().feature_string == "+avx2,-fma"
        assert calls == [1]
    finally:
        host_cpu.cache_clear()


def test_passes_are_registered():
    assert {"ConvertLayout", "AlterOpLayout"} <= set(P.list_passes())
    seq = P.parse_pipeline("AlterOpLayout{vector_width=8}")
    mod = _conv_module((1, 16, 8, 8), (16, 16, 3, 3))
    with PassContext(opt_level=3):
        out = seq(mod)
    assert _conv_layouts(out) == [("NCHW8c", "OIHW8i8o", "NCHW8c")]
    with PassContext(opt_level=2):  # AlterOpLayout is an opt_level 3 pass, as in Relay
        assert structural_equal(seq(mod), mod)
    pass_ = ConvertLayout(NCHW8C)
    pass_(from_source(CHAIN))
    assert pass_.stats["converted"] == 2


def test_convert_layout_rejects_bad_desired_layouts():
    with pytest.raises(ValueError, match="only relax.nn.conv2d"):
        ConvertLayout({"relax.nn.max_pool2d": ["NHWC"]})
    with pytest.raises(ValueError, match="takes \\[data_layout, kernel_layout\\]"):
        ConvertLayout({"relax.nn.conv2d": ["NCHW8c"]})
    with pytest.raises(ValueError, match="not a layout of OIHW"):
        ConvertLayout({"relax.nn.conv2d": ["NCHW8c", "NCHW8c"]})
    with pytest.raises(ValueError, match="sub-axis 'x' has no primal axis"):
        ConvertLayout({"relax.nn.conv2d": ["NCHW8x", "OIHW"]})
    with pytest.raises(ValueError, match="must be positive"):
        AlterOpLayout(vector_width=0)


# ------------------------------------------------------------------ packed conv2d: struct info, legalization
def test_packed_conv2d_struct_info():
    x = relax.Var("x", relax.TensorStructInfo((2, 2, 28, 28, 8), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((3, 2, 3, 3, 8, 8), "float32"))
    call = op.nn.conv2d(x, w, padding=1, data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c")
    assert [int(d.value) for d in call.struct_info.shape] == [2, 3, 28, 28, 8]
    unpacked = op.nn.conv2d(x, w, padding=1, data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW")
    assert [int(d.value) for d in unpacked.struct_info.shape] == [2, 24, 28, 28]
    w4o = relax.Var("w", relax.TensorStructInfo((1, 16, 3, 3, 4), "float32"))  # TVM Relax's OIHW4o
    call = op.nn.conv2d(x, w4o, data_layout="NCHW8c", kernel_layout="OIHW4o", out_layout="NCHW4c")
    assert [int(d.value) for d in call.struct_info.shape] == [2, 1, 26, 26, 4]
    with pytest.raises(OpError, match="24 channels of axis C cannot be packed into blocks of 16"):
        op.nn.conv2d(x, w, data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW16c")
    with pytest.raises(OpError, match="expected a 6-D tensor \\(OIHW8i8o\\), got 5-D"):
        op.nn.conv2d(x, w4o, data_layout="NCHW8c", kernel_layout="OIHW8i8o")
    with pytest.raises(OpError, match="the data has 16 input channels but the weight expects 8"):
        op.nn.conv2d(x, relax.Var("v", relax.TensorStructInfo((3, 1, 3, 3, 8, 8), "float32")),
                     data_layout="NCHW8c", kernel_layout="OIHW8i8o")


@pytest.mark.parametrize("layouts, attrs", [
    (("NCHW8c", "OIHW8i8o", "NCHW8c"), {"strides": [1, 2], "padding": [1, 0, 1, 2], "dilation": [2, 1]}),
    (("NCHW4c", "OIHW4i8o", "NCHW8c"), {"padding": [1, 1, 1, 1]}),
    (("NCHW8c", "OIHW8o", "NCHW8c"), {}),
    (("NCHW8c", "OIHW8i8o", "NCHW"), {"strides": [2, 2]}),
    (("NHWC8c", "OHWI8o", "NHWC8c"), {"padding": [0, 1, 0, 1]}),
], ids=["strided-padded-dilated", "ic4-oc8", "OIHW8o", "unpacked-output", "NHWC8c"])
def test_packed_conv2d_legalizes_to_conv2d_NCHWc(layouts, attrs):
    """The legalized packed conv equals the NCHW conv on the same (numpy-packed) data."""
    x, w = f32(2, 16, 7, 9), f32(8, 16, 3, 3)
    data_l, kernel_l, out_l = (Layout.parse(t) for t in layouts)
    px, pw = _np_layout(x, "NCHW", data_l), _np_layout(w, "OIHW", kernel_l)
    mod = LegalizeOps()(build(lambda a, b: op.nn.conv2d(a, b, data_layout=layouts[0], kernel_layout=layouts[1],
                                                        out_layout=layouts[2], **attrs), params_for([px, pw])))
    assert "conv2d_NCHWc" in [gv.name_hint for gv in mod.get_global_vars()]
    text = mod.script()
    assert ('T.block("data_pad")' in text) == any(attrs.get("padding", [0]))
    got = run(mod, [px, pw])
    ref = run(LegalizeOps()(build(lambda a, b: op.nn.conv2d(a, b, **attrs), params_for([x, w]))), [x, w])
    np.testing.assert_allclose(got, _np_layout(ref, "NCHW", out_l), rtol=1e-5, atol=1e-5)


def test_conv2d_NCHWc_prints_as_tvm_names_it():
    """Block ``conv2d_NCHWc`` over ``n, oc_chunk, oh, ow, oc_block`` reducing ``ic, kh, kw``."""
    mod = LegalizeOps()(build(lambda a, b: op.nn.conv2d(a, b, data_layout="NCHW8c", kernel_layout="OIHW8i8o",
                                                        out_layout="NCHW8c"),
                              params_for([f32(1, 2, 5, 5, 8), f32(2, 2, 3, 3, 8, 8)])))
    text = mod.script()
    assert ("for n, oc_chunk, oh, ow, oc_block, ic, kh, kw in T.grid(T.int64(1), T.int64(2), T.int64(3), "
            "T.int64(3), T.int64(8), T.int64(16), T.int64(3), T.int64(3)):") in text
    assert ("conv2d_NCHWc[v_n, v_oc_chunk, v_oh, v_ow, v_oc_block] = conv2d_NCHWc[v_n, v_oc_chunk, v_oh, v_ow, "
            "v_oc_block] + x0[v_n, v_ic // T.int64(8), v_oh + v_kh, v_ow + v_kw, v_ic % T.int64(8)] * "
            "x1[v_oc_chunk, v_ic // T.int64(8), v_kh, v_kw, v_ic % T.int64(8), v_oc_block]") in text
    assert "data_pad" not in text  # no padding, no pad stage (as TVM's conv2d_NCHWc)


# ------------------------------------------------------------------ Layout
def test_layout_parse_shapes_and_index_maps():
    lay = Layout.parse("NCHW8c")
    assert (lay.primal, lay.ndim, lay.factor("C"), lay.factor("H"), lay.is_packed) == ("NCHW", 5, 8, None, True)
    kernel = Layout.parse("OIHW8i4o")
    assert kernel.index_map_to(Layout.parse("OIHW")).script() == (
        'T.index_map(lambda i0, i1, i2, i3, i4, i5: (i0 * 4 + i5, i1 * 8 + i4, i2, i3), index_dtype="int32")')
    assert Layout.parse("NHWC").index_map_to(lay).script() == (
        'T.index_map(lambda i0, i1, i2, i3: (i0, i3 // 8, i1, i2, i3 % 8), index_dtype="int32")')
    assert lay.rename("NCHW", "ABCD").name == "ABCD8b"
    from tvmlite.ir.arith import int64
    dims = [int64(2), int64(16), int64(5), int64(5)]
    assert [int(d.value) for d in lay.packed_shape(dims)] == [2, 2, 5, 5, 8]
    assert [int(d.value) for d in lay.primal_shape(lay.packed_shape(dims))] == [2, 16, 5, 5]
    assert lay.splits_evenly(dims) and not lay.splits_evenly([int64(2), int64(12), int64(5), int64(5)])
    assert lay.splits_evenly([int64(1), int64(1), int64(1), int64(1)], allow_one=True)
    for bad, message in (("NCHW8", "ends with a factor"), ("NCHWc", "needs a positive factor"),
                         ("NCHW8x", "no primal axis 'X'"), ("NCCHW", "repeats an axis"), ("NC-HW", "invalid")):
        with pytest.raises(LayoutError, match=message):
            Layout.parse(bad)


NHWC_SOURCE = '''
from tvm.script import ir as I
from tvm.script import relax as R
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"),
             b: R.Tensor((1, 4, 1, 1), "float32")):
        with R.dataflow():
            y = R.nn.conv2d(x, w)
            z = R.add(y, b)
            r = R.nn.relu(z)
            s = R.sum(r, axis=[1])
            m = R.mean(r, axis=[2], keepdims=True)
            R.output(s, m)
        return (s, m)
'''

# TVM 0.27's ConvertLayout output for the same module (its out_dtype=None is tvmlite's "void").
NHWC_CONVERTED = """            lv: R.Tensor((2, 8, 8, 3), dtype="float32") = R.permute_dims(x, axes=[0, 2, 3, 1])
            lv1: R.Tensor((4, 3, 3, 3), dtype="float32") = R.permute_dims(w, axes=[0, 2, 3, 1])
            y: R.Tensor((2, 6, 6, 4), dtype="float32") = R.nn.conv2d(lv, lv1, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NHWC", kernel_layout="OHWI", out_layout="NHWC", out_dtype="void")
            lv2: R.Tensor((1, 1, 1, 4), dtype="float32") = R.permute_dims(b, axes=[0, 2, 3, 1])
            z: R.Tensor((2, 6, 6, 4), dtype="float32") = R.add(y, lv2)
            r: R.Tensor((2, 6, 6, 4), dtype="float32") = R.nn.relu(z)
            s: R.Tensor((2, 6, 6), dtype="float32") = R.sum(r, axis=[3], keepdims=False)"""


def test_nhwc_conversion_permutes_and_reductions_follow_the_layout():
    mod = from_source(NHWC_SOURCE)
    out = ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(mod)
    text = out.script()
    assert NHWC_CONVERTED in text
    # keepdims keeps the permuted layout: transformed back once, at the block output
    assert 'R.mean(r, axis=[1], keepdims=True)' in text and "layout_transform" not in text
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in ((2, 3, 8, 8), (4, 3, 3, 3), (1, 4, 1, 1))]
    want = run(LegalizeOps()(mod), args)
    got = run(LegalizeOps()(out), args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_nhwc_conversion_carries_through_concat_and_ewise_fma():
    mod = from_source('''
from tvm.script import ir as I
from tvm.script import relax as R
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
        with R.dataflow():
            y = R.nn.conv2d(x, w)
            z = R.nn.conv2d(x, w)
            c = R.concat((y, z), axis=1)
            f = R.ewise_fma(c, c, c)
            R.output(f)
        return f
''')
    out = ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(mod)
    text = out.script()
    # as TVM 0.27 writes it: one transform back, at the block output
    assert 'c: R.Tensor((2, 6, 6, 8), dtype="float32") = R.concat((y, z), axis=3)' in text
    assert 'lv4: R.Tensor((2, 6, 6, 8), dtype="float32") = R.ewise_fma(c, c, c)' in text
    assert 'f: R.Tensor((2, 8, 6, 6), dtype="float32") = R.permute_dims(lv4, axes=[0, 3, 1, 2])' in text
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32") for s in ((2, 3, 8, 8), (4, 3, 3, 3))]
    np.testing.assert_allclose(run(LegalizeOps()(out), args), run(LegalizeOps()(mod), args), rtol=1e-5, atol=1e-5)


def test_concat_follows_its_first_input_as_tvm_does():
    mod = from_source('''
from tvm.script import ir as I
from tvm.script import relax as R
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"),
             b: R.Tensor((1, 4, 6, 6), "float32")):
        with R.dataflow():
            y = R.nn.conv2d(x, w)
            c = R.concat((y, b), axis=1)
            c2 = R.concat((b, y), axis=1)
            R.output(c, c2)
        return (c, c2)
''')
    out = ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(mod)
    # TVM 0.27's output: the first input's layout wins, the others are transformed to it
    assert """            lv2: R.Tensor((1, 6, 6, 4), dtype="float32") = R.permute_dims(b, axes=[0, 2, 3, 1])
            lv3: R.Tensor((1, 6, 6, 8), dtype="float32") = R.concat((y, lv2), axis=3)
            c: R.Tensor((1, 8, 6, 6), dtype="float32") = R.permute_dims(lv3, axes=[0, 3, 1, 2])
            lv4: R.Tensor((1, 4, 6, 6), dtype="float32") = R.permute_dims(y, axes=[0, 3, 1, 2])
            c2: R.Tensor((1, 8, 6, 6), dtype="float32") = R.concat((b, lv4), axis=1)""" in out.script()
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(s).astype("float32") for s in ((1, 3, 8, 8), (4, 3, 3, 3), (1, 4, 6, 6))]
    for g, w in zip(run(LegalizeOps()(out), args), run(LegalizeOps()(mod), args)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
