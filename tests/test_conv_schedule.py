"""Convolutions for the CPU: PackConv2d (the default pipeline puts float conv2d in packed layouts,
NCHW16c / OIHW16i16o) and the default schedule's packed-convolution rule (a register tile of
output columns x a vector of output channels), pools run in the packed layout with the
packed-pool rule: the printed layouts, the rules' steps, and the numbers against the unpacked,
unscheduled functions and against PyTorch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
from schedule_util import assert_replays, assert_same_numbers

import tvmlite
from tvmlite.ir.module import IRModule
from tvmlite.passes import ConvertLayout, get_pass, get_pipeline
from tvmlite.passes.schedule.default_cpu import default_schedule
from tvmlite.script import from_source

# An RGB stem (3 input channels: the data packed NCHW3c, the output NCHW16c), a scale that follows
# the packed layout, a residual conv (NCHW16c to NCHW16c) and a conv of 12 outputs (no vector of
# output channels: left in NCHW).
SMALL_NET = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 16, 16), "float32"), w1: R.Tensor((16, 3, 3, 3), "float32"), w2: R.Tensor((16, 16, 3, 3), "float32"), w3: R.Tensor((12, 16, 1, 1), "float32"), s: R.Tensor((16, 1, 1), "float32")):
        with R.dataflow():
            a = R.nn.conv2d(x, w1, strides=[2, 2], padding=[1, 1, 1, 1])
            b = R.nn.relu(R.multiply(a, s))
            c = R.nn.conv2d(b, w2, padding=[1, 1, 1, 1])
            d = R.nn.relu(R.add(c, b))
            e = R.nn.conv2d(d, w3)
            R.output(e)
        return e
'''

CONV_BN_RELU = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 12, 12), "float32"), w: R.Tensor((32, 16, 3, 3), "float32"), s: R.Tensor((32, 1, 1), "float32"), b: R.Tensor((32, 1, 1), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            y = R.nn.relu(R.add(R.multiply(c, s), b))
            R.output(y)
        return y
'''


def steps(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def trace_of(sch: tvmlite.tir.Schedule) -> str:
    """The trace's steps, without the two header lines."""
    return "\n".join(line[2:] for line in str(sch.trace).splitlines()[2:])


def packed_kernel(text: str, name: str) -> IRModule:
    """The PrimFunc ``name`` the zero pipeline makes of ``text`` after PackConv2d, as ``main``."""
    mod = get_pipeline("zero")(get_pass("PackConv2d")(from_source(text)))
    return IRModule({"main": mod[name]})


def test_pack_conv2d_layouts() -> None:
    out = get_pass("PackConv2d")(from_source(SMALL_NET))
    assert out.script() == steps('''
        # from tvmlite.script import ir as I
        # from tvmlite.script import tir as T
        # from tvmlite.script import relax as R

        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((1, 3, 16, 16), dtype="float32"), w1: R.Tensor((16, 3, 3, 3), dtype="float32"), w2: R.Tensor((16, 16, 3, 3), dtype="float32"), w3: R.Tensor((12, 16, 1, 1), dtype="float32"), s: R.Tensor((16, 1, 1), dtype="float32")) -> R.Tensor((1, 12, 8, 8), dtype="float32"):
                with R.dataflow():
                    lv: R.Tensor((1, 1, 16, 16, 3), dtype="float32") = R.layout_transform(x, index_map=T.index_map(lambda i0, i1, i2, i3: (i0, i1 // 3, i2, i3, i1 % 3), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    lv1: R.Tensor((1, 1, 3, 3, 3, 16), dtype="float32") = R.layout_transform(w1, index_map=T.index_map(lambda i0, i1, i2, i3: (i0 // 16, i1 // 3, i2, i3, i1 % 3, i0 % 16), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    a: R.Tensor((1, 1, 8, 8, 16), dtype="float32") = R.nn.conv2d(lv, lv1, strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW3c", kernel_layout="OIHW3i16o", out_layout="NCHW16c", out_dtype="void")
                    lv2: R.Tensor((1, 16, 1, 1), dtype="float32") = R.expand_dims(s, axis=[0])
                    lv3: R.Tensor((1, 1, 1, 1, 16), dtype="float32") = R.layout_transform(lv2, index_map=T.index_map(lambda i0, i1, i2, i3: (i0, i1 // 16, i2, i3, i1 % 16), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    lv_1: R.Tensor((1, 1, 8, 8, 16), dtype="float32") = R.multiply(a, lv3)
                    b: R.Tensor((1, 1, 8, 8, 16), dtype="float32") = R.nn.relu(lv_1)
                    lv4: R.Tensor((1, 1, 3, 3, 16, 16), dtype="float32") = R.layout_transform(w2, index_map=T.index_map(lambda i0, i1, i2, i3: (i0 // 16, i1 // 16, i2, i3, i1 % 16, i0 % 16), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    c: R.Tensor((1, 1, 8, 8, 16), dtype="float32") = R.nn.conv2d(b, lv4, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c", out_dtype="void")
                    lv_2: R.Tensor((1, 1, 8, 8, 16), dtype="float32") = R.add(c, b)
                    d: R.Tensor((1, 1, 8, 8, 16), dtype="float32") = R.nn.relu(lv_2)
                    lv5: R.Tensor((1, 16, 8, 8), dtype="float32") = R.layout_transform(d, index_map=T.index_map(lambda i0, i1, i2, i3, i4: (i0, i1 * 16 + i4, i2, i3), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    e: R.Tensor((1, 12, 8, 8), dtype="float32") = R.nn.conv2d(lv5, w3, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="void")
                    R.output(e)
                return e''')


def test_pack_conv2d_leaves_grouped_integer_and_packed_convs() -> None:
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 32, 8, 8), "float32"), w: R.Tensor((32, 1, 3, 3), "float32"), xi: R.Tensor((1, 16, 8, 8), "int32"), wi: R.Tensor((16, 16, 1, 1), "int32")):
        with R.dataflow():
            a = R.nn.conv2d(x, w, groups=32)
            b = R.nn.conv2d(xi, wi)
            R.output(a, b)
        return (a, b)
'''
    mod = from_source(text)
    assert get_pass("PackConv2d")(mod).script() == mod.script()


def test_default_pipeline_packs_convolutions() -> None:
    out = get_pipeline("default")(from_source(SMALL_NET))
    assert out["main"].script() == steps('''
        # from tvmlite.script import relax as R

        @R.function
        def main(x: R.Tensor((1, 3, 16, 16), dtype="float32"), w1: R.Tensor((16, 3, 3, 3), dtype="float32"), w2: R.Tensor((16, 16, 3, 3), dtype="float32"), w3: R.Tensor((12, 16, 1, 1), dtype="float32"), s: R.Tensor((16, 1, 1), dtype="float32")) -> R.Tensor((1, 12, 8, 8), dtype="float32"):
            with R.dataflow():
                lv = R.call_tir(te_layout_transform, (x,), out_sinfo=R.Tensor((1, 1, 16, 16, 3), dtype="float32"))
                lv1 = R.call_tir(te_layout_transform1, (w1,), out_sinfo=R.Tensor((1, 1, 3, 3, 3, 16), dtype="float32"))
                lv2 = R.call_tir(expand_dims, (s,), out_sinfo=R.Tensor((1, 16, 1, 1), dtype="float32"))
                lv3 = R.call_tir(te_layout_transform2, (lv2,), out_sinfo=R.Tensor((1, 1, 1, 1, 16), dtype="float32"))
                lv_1 = R.call_tir(fused_conv2d_NCHWc_multiply_relu, (lv, lv1, lv3), out_sinfo=R.Tensor((1, 1, 8, 8, 16), dtype="float32"))
                lv4 = R.call_tir(te_layout_transform3, (w2,), out_sinfo=R.Tensor((1, 1, 3, 3, 16, 16), dtype="float32"))
                lv1_1 = R.call_tir(fused_conv2d_NCHWc1_add_relu, (lv_1, lv4), out_sinfo=R.Tensor((1, 1, 8, 8, 16), dtype="float32"))
                lv5 = R.call_tir(te_layout_transform4, (lv1_1,), out_sinfo=R.Tensor((1, 16, 8, 8), dtype="float32"))
                e = R.call_tir(conv2d, (lv5, w3), out_sinfo=R.Tensor((1, 12, 8, 8), dtype="float32"))
                R.output(e)
            return e''')
    # The packed module computes what the unpacked one does.
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d.value) for d in p.struct_info.shape]).astype("float32")
            for p in out["main"].params]
    results = []
    for mod in (out, get_pipeline("zero")(from_source(SMALL_NET))):
        vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
        results.append(vm["main"](*args).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-4, atol=1e-4)


def test_packed_conv_rule_trace() -> None:
    mod = packed_kernel(CONV_BN_RELU, "fused_conv2d_NCHWc_multiply_add_relu")
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="T_add", func_name="main")
        sch.compute_inline(block=b0)
        b1 = sch.get_block(name="T_multiply", func_name="main")
        sch.compute_inline(block=b1)
        b2 = sch.get_block(name="conv2d_NCHWc", func_name="main")
        l3, l4, l5, l6, l7, l8, l9, l10 = sch.get_loops(block=b2)
        l11, l12 = sch.split(loop=l6, factors=[None, 12], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l4, l5, l11, l8, l9, l10, l12, l7)
        l13 = sch.fuse(l4, l5, preserve_unit_iters=True)
        b14 = sch.cache_write(block=b2, write_buffer_index=0, storage_scope="local")
        b15 = sch.get_block(name="compute", func_name="main")
        sch.reverse_compute_inline(block=b15)
        sch.reverse_compute_at(block=b14, loop=l11, preserve_unit_loops=False, index=-1)
        b16 = sch.decompose_reduction(block=b2, loop=l8)
        sch.unroll(loop=l12)
        sch.vectorize(loop=l7)
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
        l35 = sch.fuse(l28, l29, l30, l31, l33, preserve_unit_iters=True)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-4, atol=1e-4)
    assert_replays(sch, mod)


UNPACK = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 2, 8, 8, 16), "float32")):
        with R.dataflow():
            y = R.layout_transform(x, index_map=T.index_map(lambda n, c, h, w, ci: (n, c * 16 + ci, h, w)))
            R.output(y)
        return y
'''


def test_unpack_rule_stores_whole_vectors() -> None:
    """NCHW16c -> NCHW: the 16 channels of a block unrolled, a vector of columns stored per
    channel (not one channel vector scattered over 16 rows)."""
    mod = packed_kernel(UNPACK, "te_layout_transform")
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="te_layout_transform", func_name="main")
        l1, l2, l3, l4, l5 = sch.get_loops(block=b0)
        l6, l7 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l1, l2, l3, l6, l5, l7)
        sch.vectorize(loop=l7)
        sch.unroll(loop=l5)
        l8 = sch.fuse(l1, l2, l3, l6, preserve_unit_iters=True)''')
    assert_same_numbers(mod, sch.mod)
    assert_replays(sch, mod)


def conv_text(c: int, o: int, h: int, stride: int, k: int) -> str:
    pad = k // 2
    return f'''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, {c}, {h}, {h}), "float32"), w: R.Tensor(({o}, {c}, {k}, {k}), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, w, strides=[{stride}, {stride}], padding=[{pad}, {pad}, {pad}, {pad}]))
            R.output(y)
        return y
'''


@pytest.mark.parametrize("c, o, h, stride, k, columns", [
    (3, 16, 30, 2, 7, 5),    # an RGB stem: NCHW3c data, stride 2, 15 output columns (the shallow rule's tile of up to 8: 5)
    (32, 32, 7, 1, 3, 7),    # a 7-wide feature map: one tile per row
    (16, 32, 8, 2, 1, 4),    # a strided 1x1 downsampling conv (its unit kh, kw loops stay put)
    (16, 16, 28, 1, 3, 14),  # 28 columns: two tiles of 14
])
def test_packed_conv_rule_shapes(c: int, o: int, h: int, stride: int, k: int, columns: int) -> None:
    mod = packed_kernel(conv_text(c, o, h, stride, k), "fused_conv2d_NCHWc_relu")
    sch = default_schedule(mod["main"])
    trace = trace_of(sch)
    assert f"factors=[None, {columns}]" in trace and 'storage_scope="local"' in trace
    assert "sch.reverse_compute_inline" in trace  # the relu folded into the tile's write-back
    assert_same_numbers(mod, sch.mod, rtol=1e-4, atol=1e-4)


def test_resnet_style_network_matches_pytorch() -> None:
    """A resnet-style network (stem, a residual block with a strided 1x1 downsample, pooling, a
    linear layer) imported with constant weights: the default pipeline packs every conv, folds
    the packed weights into constants and computes PyTorch's numbers."""
    from frontend_util import need
    torch = need("torch")
    nn = torch.nn
    from tvmlite.frontend import from_exported_program

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(16, 32, 3, 2, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(32)
            self.conv2 = nn.Conv2d(32, 32, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(32)
            self.down = nn.Sequential(nn.Conv2d(16, 32, 1, 2, bias=False), nn.BatchNorm2d(32))

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(y)) + self.down(x))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            self.block = Block()
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            y = self.block(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))

    torch.manual_seed(0)
    model = Net().eval()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):  # statistics that matter
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        want = model(x).numpy()
        ep = torch.export.export(model, (x,))
    mod = get_pipeline("default")(from_exported_program(ep))
    main = mod["main"].script()
    convs = [line for line in main.splitlines() if "conv2d_NCHWc" in line]
    winograd = [line for line in main.splitlines() if "winograd_conv2d" in line]
    # stem, the block's strided conv and the downsample packed; its 3x3 stride-1 conv Winograd's
    assert len(convs) == 3 and len(winograd) == 1
    # Only the image is transformed at run time (to NCHW3c) and the pooled features at the end:
    # the pools run packed (NCHW16c) and the packed weights are constants.
    assert main.count("te_layout_transform") == 2
    assert main.count("max_pool2d") == 1 and main.count("adaptive_avg_pool2d") == 1
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
    got = vm["main"](x.numpy())
    got = (got[0] if isinstance(got, (list, tuple)) else got).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("x_shape, w_shape, attrs", [
    ((2, 16, 10, 20), (32, 16, 3, 3), "strides=[1, 2], padding=[1, 1, 1, 1], dilation=[2, 2]"),
    ((1, 24, 9, 9), (48, 24, 3, 3), "padding=[1, 1, 1, 1]"),  # input blocks of 12
    ((1, 32, 13, 13), (16, 32, 5, 5), "strides=[3, 3], padding=[2, 1, 2, 1]"),
    ((1, 16, 5, 5), (16, 16, 5, 5), "padding=[0, 0, 0, 0]"),  # a 1x1 output
    ((3, 8, 6, 6), (8, 8, 1, 1), "padding=[0, 0, 0, 0]"),  # blocks of 8 output channels
], ids=["batch2_dilated_strided", "ic12", "stride3_asymmetric_pad", "one_pixel", "oc8_1x1"])
def test_default_pipeline_packed_convs_compute_the_nchw_numbers(x_shape, w_shape, attrs) -> None:
    text = f'''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor({x_shape}, "float32"), w: R.Tensor({w_shape}, "float32"), b: R.Tensor(({w_shape[0]}, 1, 1), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.add(R.nn.conv2d(x, w, {attrs}), b))
            R.output(y)
        return y
'''
    packed = get_pipeline("default")(from_source(text))
    assert [gv.name_hint for gv, _ in packed.functions_items() if "conv" in gv.name_hint] == ["fused_conv2d_NCHWc_add_relu"]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in (x_shape, w_shape, (w_shape[0], 1, 1))]
    outs = []
    for mod in (packed, get_pipeline("zero")(from_source(text))):
        vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
        outs.append(vm["main"](*args).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- packed pooling
# conv -> relu -> max pool -> conv -> avg pool, a global average pool and a mean over H, W: the
# layout stays NCHW16c through the pools (as TVM's ConvertLayout writes them: layout and
# out_layout "NCHW16c"), so the only transforms are the packings at the start and the unpackings
# of the pooled results.
CONV_POOL_CONV = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 16, 16), "float32"), w1: R.Tensor((16, 3, 3, 3), "float32"), w2: R.Tensor((32, 16, 3, 3), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w1, padding=[1, 1, 1, 1]))
            b = R.nn.max_pool2d(a, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
            c = R.nn.conv2d(b, w2, padding=[1, 1, 1, 1])
            d = R.nn.avg_pool2d(c, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
            e = R.nn.adaptive_avg_pool2d(c, output_size=[1, 1])
            f = R.reshape(e, [1, 32])
            g = R.mean(c, axis=[2, 3], keepdims=False)
            R.output(d, f, g)
        return (d, f, g)
'''


def test_pack_conv2d_carries_the_layout_through_pools() -> None:
    out = get_pass("PackConv2d")(from_source(CONV_POOL_CONV))
    assert out.script() == steps('''
        # from tvmlite.script import ir as I
        # from tvmlite.script import tir as T
        # from tvmlite.script import relax as R

        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((1, 3, 16, 16), dtype="float32"), w1: R.Tensor((16, 3, 3, 3), dtype="float32"), w2: R.Tensor((32, 16, 3, 3), dtype="float32")) -> R.Tuple(R.Tensor((1, 32, 4, 4), dtype="float32"), R.Tensor((1, 32), dtype="float32"), R.Tensor((1, 32), dtype="float32")):
                with R.dataflow():
                    lv: R.Tensor((1, 1, 16, 16, 3), dtype="float32") = R.layout_transform(x, index_map=T.index_map(lambda i0, i1, i2, i3: (i0, i1 // 3, i2, i3, i1 % 3), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    lv1: R.Tensor((1, 1, 3, 3, 3, 16), dtype="float32") = R.layout_transform(w1, index_map=T.index_map(lambda i0, i1, i2, i3: (i0 // 16, i1 // 3, i2, i3, i1 % 3, i0 % 16), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    lv_1: R.Tensor((1, 1, 16, 16, 16), dtype="float32") = R.nn.conv2d(lv, lv1, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW3c", kernel_layout="OIHW3i16o", out_layout="NCHW16c", out_dtype="void")
                    a: R.Tensor((1, 1, 16, 16, 16), dtype="float32") = R.nn.relu(lv_1)
                    b: R.Tensor((1, 1, 8, 8, 16), dtype="float32") = R.nn.max_pool2d(a, pool_size=[3, 3], strides=[2, 2], dilation=[1, 1], padding=[1, 1, 1, 1], ceil_mode=False, count_include_pad=False, layout="NCHW16c", out_layout="NCHW16c")
                    lv2: R.Tensor((2, 1, 3, 3, 16, 16), dtype="float32") = R.layout_transform(w2, index_map=T.index_map(lambda i0, i1, i2, i3: (i0 // 16, i1 // 16, i2, i3, i1 % 16, i0 % 16), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    c: R.Tensor((1, 2, 8, 8, 16), dtype="float32") = R.nn.conv2d(b, lv2, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c", out_dtype="void")
                    lv3: R.Tensor((1, 2, 4, 4, 16), dtype="float32") = R.nn.avg_pool2d(c, pool_size=[3, 3], strides=[2, 2], dilation=[1, 1], padding=[1, 1, 1, 1], ceil_mode=False, count_include_pad=False, layout="NCHW16c", out_layout="NCHW16c")
                    d: R.Tensor((1, 32, 4, 4), dtype="float32") = R.layout_transform(lv3, index_map=T.index_map(lambda i0, i1, i2, i3, i4: (i0, i1 * 16 + i4, i2, i3), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    e: R.Tensor((1, 2, 1, 1, 16), dtype="float32") = R.nn.adaptive_avg_pool2d(c, output_size=[1, 1], layout="NCHW16c", out_layout="NCHW16c")
                    lv4: R.Tensor((1, 32, 1, 1), dtype="float32") = R.layout_transform(e, index_map=T.index_map(lambda i0, i1, i2, i3, i4: (i0, i1 * 16 + i4, i2, i3), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    f: R.Tensor((1, 32), dtype="float32") = R.reshape(lv4, R.shape([1, 32]))
                    lv5: R.Tensor((1, 2, 16), dtype="float32") = R.mean(c, axis=[2, 3], keepdims=False)
                    g: R.Tensor((1, 32), dtype="float32") = R.layout_transform(lv5, index_map=T.index_map(lambda i0, i1, i2: (i0, i1 * 16 + i2), index_dtype="int32"), pad_value=None, axis_separators=[], input_axis_separators=[])
                    R.output(d, f, g)
                return (d, f, g)''')


def test_pools_follow_a_permuted_layout_and_means_keep_split_axes() -> None:
    """ConvertLayout to NHWC: the pool runs in NHWC (TVM's ConvertLayout does the same); a mean
    over the channels of a packed tensor (the split axis) reads it unpacked."""
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 8, 8), "float32"), w: R.Tensor((16, 16, 1, 1), "float32")):
        with R.dataflow():
            a = R.nn.conv2d(x, w)
            b = R.nn.max_pool2d(a, pool_size=[2, 2], strides=[2, 2])
            m = R.mean(a, axis=[1], keepdims=True)
            R.output(b, m)
        return (b, m)
'''
    out = ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(from_source(text))
    assert out["main"].script() == steps('''
        # from tvmlite.script import relax as R

        @R.function
        def main(x: R.Tensor((1, 16, 8, 8), dtype="float32"), w: R.Tensor((16, 16, 1, 1), dtype="float32")) -> R.Tuple(R.Tensor((1, 16, 4, 4), dtype="float32"), R.Tensor((1, 1, 8, 8), dtype="float32")):
            with R.dataflow():
                lv: R.Tensor((1, 8, 8, 16), dtype="float32") = R.permute_dims(x, axes=[0, 2, 3, 1])
                lv1: R.Tensor((16, 1, 1, 16), dtype="float32") = R.permute_dims(w, axes=[0, 2, 3, 1])
                a: R.Tensor((1, 8, 8, 16), dtype="float32") = R.nn.conv2d(lv, lv1, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NHWC", kernel_layout="OHWI", out_layout="NHWC", out_dtype="void")
                lv2: R.Tensor((1, 4, 4, 16), dtype="float32") = R.nn.max_pool2d(a, pool_size=[2, 2], strides=[2, 2], dilation=[1, 1], padding=[0, 0, 0, 0], ceil_mode=False, count_include_pad=False, layout="NHWC", out_layout="NHWC")
                b: R.Tensor((1, 16, 4, 4), dtype="float32") = R.permute_dims(lv2, axes=[0, 3, 1, 2])
                lv3: R.Tensor((1, 8, 8, 1), dtype="float32") = R.mean(a, axis=[3], keepdims=True)
                m: R.Tensor((1, 1, 8, 8), dtype="float32") = R.permute_dims(lv3, axes=[0, 3, 1, 2])
                R.output(b, m)
            return (b, m)''')
    packed = get_pass("PackConv2d")(from_source(text))["main"].script()
    assert 'layout="NCHW16c", out_layout="NCHW16c")' in packed  # the pool
    assert "m: R.Tensor((1, 1, 8, 8), dtype=\"float32\") = R.mean(lv3, axis=[1], keepdims=True)" in packed
    assert "lv3: R.Tensor((1, 16, 8, 8), dtype=\"float32\") = R.layout_transform(a," in packed


def test_packed_pool_rule_trace() -> None:
    """Max pooling in NCHW16c: tasks of output rows, a tile of output columns x the vector of 16
    channels accumulated over the window, the padded input inlined (read in place)."""
    mod = packed_kernel(CONV_POOL_CONV, "max_pool2d")
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="pool_max", func_name="main")
        l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(block=b0)
        l8, l9 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l3, l8, l6, l7, l9, l5)
        b10 = sch.get_block(name="pad_temp", func_name="main")
        sch.compute_inline(block=b10)
        b11 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
        sch.reverse_compute_at(block=b11, loop=l8, preserve_unit_loops=False, index=-1)
        b12 = sch.decompose_reduction(block=b0, loop=l6)
        sch.unroll(loop=l9)
        sch.vectorize(loop=l5)
        l13, l14, l15, l16, l17, l18 = sch.get_loops(block=b12)
        sch.vectorize(loop=l18)
        sch.unroll(loop=l17)
        l19, l20, l21, l22, l23, l24 = sch.get_loops(block=b11)
        sch.vectorize(loop=l24)
        sch.unroll(loop=l23)''')
    assert_same_numbers(mod, sch.mod)
    assert_replays(sch, mod)


def test_packed_pool_rule_batch_with_one_channel_block() -> None:
    """Batch 2, one block of 16 channels: the unit channel-block loop between the batch and the
    rows is fused into the tasks (the small CNN's max pool; conv_rule took it before, tiling down
    a column: 6.5 -> 3 us)."""
    text = CONV_POOL_CONV.replace("(1, 3, 16, 16)", "(2, 3, 16, 16)").replace("[1, 32]", "[2, 32]")
    mod = packed_kernel(text, "max_pool2d")
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="pool_max", func_name="main")
        l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(block=b0)
        l8, l9 = sch.split(loop=l4, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l1, l3, l8, l6, l7, l9, l5)
        l10 = sch.fuse(l1, l2, l3, preserve_unit_iters=True)
        b11 = sch.get_block(name="pad_temp", func_name="main")
        sch.compute_inline(block=b11)
        b12 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
        sch.reverse_compute_at(block=b12, loop=l8, preserve_unit_loops=False, index=-1)
        b13 = sch.decompose_reduction(block=b0, loop=l6)
        sch.unroll(loop=l9)
        sch.vectorize(loop=l5)
        l14, l15, l16, l17 = sch.get_loops(block=b13)
        sch.vectorize(loop=l17)
        sch.unroll(loop=l16)
        l18, l19, l20, l21 = sch.get_loops(block=b12)
        sch.vectorize(loop=l21)
        sch.unroll(loop=l20)
        sch.parallel(loop=l10)''')
    assert_same_numbers(mod, sch.mod)
    assert_replays(sch, mod)


@pytest.mark.parametrize("name", [
    "avg_pool2d",  # a 3 x 3 window, stride 2, the padding not counted
    "adaptive_avg_pool2d",  # a global pool: a 1 x 1 output, the 8 x 8 window summed
])
def test_packed_pool_rule_folds_the_average(name: str) -> None:
    """The division by the window's count is folded into the tile's write-back."""
    mod = packed_kernel(CONV_POOL_CONV, name)
    sch = default_schedule(mod["main"])
    trace = trace_of(sch)
    assert 'storage_scope="local"' in trace and "sch.reverse_compute_inline" in trace
    assert_same_numbers(mod, sch.mod)
    assert_replays(sch, mod)


def test_default_pipeline_conv_pool_conv() -> None:
    out = get_pipeline("default")(from_source(CONV_POOL_CONV))
    assert out["main"].script() == steps('''
        # from tvmlite.script import relax as R

        @R.function
        def main(x: R.Tensor((1, 3, 16, 16), dtype="float32"), w1: R.Tensor((16, 3, 3, 3), dtype="float32"), w2: R.Tensor((32, 16, 3, 3), dtype="float32")) -> R.Tuple(R.Tensor((1, 32, 4, 4), dtype="float32"), R.Tensor((1, 32), dtype="float32"), R.Tensor((1, 32), dtype="float32")):
            with R.dataflow():
                lv = R.call_tir(te_layout_transform, (x,), out_sinfo=R.Tensor((1, 1, 16, 16, 3), dtype="float32"))
                lv1 = R.call_tir(te_layout_transform1, (w1,), out_sinfo=R.Tensor((1, 1, 3, 3, 3, 16), dtype="float32"))
                lv_1 = R.call_tir(fused_conv2d_NCHWc_relu, (lv, lv1), out_sinfo=R.Tensor((1, 1, 16, 16, 16), dtype="float32"))
                b = R.call_tir(max_pool2d, (lv_1,), out_sinfo=R.Tensor((1, 1, 8, 8, 16), dtype="float32"))
                lv2 = R.call_tir(te_layout_transform2, (w2,), out_sinfo=R.Tensor((2, 1, 3, 3, 16, 16), dtype="float32"))
                c = R.call_tir(conv2d_NCHWc1, (b, lv2), out_sinfo=R.Tensor((1, 2, 8, 8, 16), dtype="float32"))
                lv3 = R.call_tir(avg_pool2d, (c,), out_sinfo=R.Tensor((1, 2, 4, 4, 16), dtype="float32"))
                d = R.call_tir(te_layout_transform3, (lv3,), out_sinfo=R.Tensor((1, 32, 4, 4), dtype="float32"))
                e = R.call_tir(adaptive_avg_pool2d, (c,), out_sinfo=R.Tensor((1, 2, 1, 1, 16), dtype="float32"))
                lv4 = R.call_tir(te_layout_transform4, (e,), out_sinfo=R.Tensor((1, 32, 1, 1), dtype="float32"))
                f = R.call_tir(reshape, (lv4,), out_sinfo=R.Tensor((1, 32), dtype="float32"))
                lv5 = R.call_tir(mean, (c,), out_sinfo=R.Tensor((1, 2, 16), dtype="float32"))
                g = R.call_tir(te_layout_transform5, (lv5,), out_sinfo=R.Tensor((1, 32), dtype="float32"))
                R.output(d, f, g)
            return (d, f, g)''')
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d.value) for d in p.struct_info.shape]).astype("float32")
            for p in out["main"].params]
    results = []
    for mod in (out, get_pipeline("zero")(from_source(CONV_POOL_CONV))):
        vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
        results.append([t.numpy() for t in vm["main"](*args)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_small_cnn_matches_pytorch() -> None:
    """The CNN of bench/bench_models.py (conv, batch norm, relu, max pool, conv, global average
    pool, linear) on 8 x 3 x 32 x 32: both pools run packed; PyTorch's numbers."""
    from frontend_util import need
    torch = need("torch")
    nn = torch.nn
    from tvmlite.frontend import from_exported_program

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(32, 10)).eval()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    x = torch.randn(8, 3, 32, 32)
    with torch.no_grad():
        want = model(x).numpy()
        ep = torch.export.export(model, (x,))
    mod = get_pipeline("default")(from_exported_program(ep, unwrap_unit_return_tuple=True))
    main = mod["main"].script()
    assert "max_pool2d" in main and "adaptive_avg_pool2d" in main
    # The image packed and the pooled features unpacked: nothing in between (the packed weights
    # are constants).
    assert main.count("te_layout_transform") == 2
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
    got = vm["main"](x.numpy()).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
