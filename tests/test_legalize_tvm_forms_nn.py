"""LegalizeOps of the nn, search and statistical ops in TVM's form: each text below is what TVM
0.27's LegalizeOps prints for the module (written here in tvmlite's spellings: T.block,
T.alloc_buffer, tir.noalias, no s_tir), and tvmlite must print it exactly. Where TVM keeps a
numerically unsafe formula tvmlite does not copy it (see README, "Legalization in TVM's form")."""
import sys
from pathlib import Path

import numpy as np
import pytest

from tvmlite.passes import LegalizeOps
from tvmlite.script import from_source

HEADER = """from tvmlite.script import ir as I
from tvmlite.script import relax as R
from tvmlite.script import tir as T

"""

# te's scalar block is `vi = T.axis.spatial(1, T.int64(0))` where TVM 0.27 gives the extent as
# T.int64(1) (te/create.py's form, outside these legalizations): compared through this spelling.
SCALAR_TE = "vi = T.axis.spatial(1, T.int64(0))"
SCALAR_TVM = "vi = T.axis.spatial(T.int64(1), T.int64(0))"


def legalized(params: str, call: str) -> str:
    """The printed module after LegalizeOps of ``main(params)`` returning ``call``, without its
    import comments."""
    src = HEADER + f"""@I.ir_module
class Mod:
    @R.function
    def main({params}):
        gv = {call}
        return gv
"""
    text = LegalizeOps()(from_source(src)).script()
    return "\n".join(line for line in text.splitlines() if not line.startswith("# from")).strip()


CASES = {
    "softmax": ('x: R.Tensor((2, 3), "float32")',
        'R.nn.softmax(x, axis=0)'),
    "log_softmax": ('x: R.Tensor((2, 3), "float32")',
        'R.nn.log_softmax(x)'),
    "max_pool2d_nhwc": ('x: R.Tensor((1, 4, 4, 1), "float32")',
        'R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], layout="NHWC")'),
    "max_pool1d_ceil": ('x: R.Tensor((1, 1, 5), "float32")',
        'R.nn.max_pool1d(x, pool_size=2, strides=2, ceil_mode=True)'),
    "adaptive_avg_pool2d_copy": ('x: R.Tensor((1, 2, 3, 3), "float32")',
        'R.nn.adaptive_avg_pool2d(x)'),
    "conv2d_nhwc": ('x: R.Tensor((1, 4, 4, 2), "float32"), w: R.Tensor((3, 2, 2, 2), "float32")',
        'R.nn.conv2d(x, w, data_layout="NHWC")'),
    "conv1d_transpose": ('x: R.Tensor((1, 2, 3), "float32"), w: R.Tensor((2, 1, 3), "float32")',
        'R.nn.conv1d_transpose(x, w, padding=1)'),
    "layer_norm_fp16": ('x: R.Tensor((2, 3), "float16"), g: R.Tensor((3,), "float16"), b: R.Tensor((3,), "float16")',
        'R.nn.layer_norm(x, g, b, axes=[-1])'),
    "layer_norm_1d": ('x: R.Tensor((3,), "float32"), g: R.Tensor((3,), "float32"), b: R.Tensor((3,), "float32")',
        'R.nn.layer_norm(x, g, b, axes=[-1])'),
    "argmin_all": ('x: R.Tensor((2, 3, 4), "float32")',
        'R.argmin(x)'),
    # a tuple reduction's let-bound values keep the reducer's `>` (TVM does not simplify them)
    "argmax_axis": ('x: R.Tensor((2, 3), "float32")',
        'R.argmax(x, axis=1)'),
    # a bool condition is cast to int64 and compared with 0
    "where_bool": ('c: R.Tensor((2, 3), "bool"), x: R.Tensor((2, 3), "float32"), y: R.Tensor((3,), "float32")',
        'R.where(c, x, y)'),
    "nll_loss_no_weight": ('p: R.Tensor((2, 3), "float32"), t: R.Tensor((2,), "int64")',
        'R.nn.nll_loss(p, t)'),
    "rms_norm": ('x: R.Tensor((2, 3), "float32"), w: R.Tensor((3,), "float32")',
        'R.nn.rms_norm(x, w, axes=[-1])'),
    "leakyrelu": ('x: R.Tensor((2, 3), "float32")',
        'R.nn.leakyrelu(x, alpha=0.1)'),
    "max_pool2d_nchw4c": ('x: R.Tensor((1, 1, 3, 3, 4), "float32")',
        'R.nn.max_pool2d(x, pool_size=[2, 2], layout="NCHW4c")'),
}

# the last block carries {"axis": 0}; axes i0, i1, reduce k.
SOFTMAX_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def softmax(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), T_softmax_norm: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        T_softmax_maxelem = T.alloc_buffer((T.int64(3),))
        T_softmax_exp = T.alloc_buffer((T.int64(2), T.int64(3)))
        T_softmax_expsum = T.alloc_buffer((T.int64(3),))
        for i0, k in T.grid(T.int64(3), T.int64(2)):
            with T.block("T_softmax_maxelem"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(x[v_k, v_i0])
                T.writes(T_softmax_maxelem[v_i0])
                with T.init():
                    T_softmax_maxelem[v_i0] = T.float32(-340282346638528859811704183484516925440.0)
                T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], x[v_k, v_i0])
        for i0, i1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_softmax_exp"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(x[v_i0, v_i1], T_softmax_maxelem[v_i1])
                T.writes(T_softmax_exp[v_i0, v_i1])
                T_softmax_exp[v_i0, v_i1] = T.exp(x[v_i0, v_i1] - T_softmax_maxelem[v_i1])
        for i0, k in T.grid(T.int64(3), T.int64(2)):
            with T.block("T_softmax_expsum"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(T_softmax_exp[v_k, v_i0])
                T.writes(T_softmax_expsum[v_i0])
                with T.init():
                    T_softmax_expsum[v_i0] = T.float32(0.0)
                T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_k, v_i0]
        for i0, i1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_softmax_norm"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_softmax_exp[v_i0, v_i1], T_softmax_expsum[v_i1])
                T.writes(T_softmax_norm[v_i0, v_i1])
                T.block_attr({"axis": 0})
                T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i1]

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.softmax, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
        return gv"""

# T_softmax_maxelem, then two blocks named compute (the sum, then the result with {"axis": 1}).
LOG_SOFTMAX_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def log_softmax(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), compute: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        T_softmax_maxelem = T.alloc_buffer((T.int64(2),))
        compute_1 = T.alloc_buffer((T.int64(2),))
        for i0, k in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_softmax_maxelem"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(x[v_i0, v_k])
                T.writes(T_softmax_maxelem[v_i0])
                with T.init():
                    T_softmax_maxelem[v_i0] = T.float32(-340282346638528859811704183484516925440.0)
                T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], x[v_i0, v_k])
        for i0, k in T.grid(T.int64(2), T.int64(3)):
            with T.block("compute"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(x[v_i0, v_k], T_softmax_maxelem[v_i0])
                T.writes(compute_1[v_i0])
                with T.init():
                    compute_1[v_i0] = T.float32(0.0)
                compute_1[v_i0] = compute_1[v_i0] + T.exp(x[v_i0, v_k] - T_softmax_maxelem[v_i0])
        for i0, i1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("compute_1"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(x[v_i0, v_i1], T_softmax_maxelem[v_i0], compute_1[v_i0])
                T.writes(compute[v_i0, v_i1])
                T.block_attr({"axis": 1})
                compute[v_i0, v_i1] = x[v_i0, v_i1] - T_softmax_maxelem[v_i0] - T.log(compute_1[v_i0])

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.log_softmax, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
        return gv"""

# C++-style pad (ax0...), bounds as '1 <= v', schedule_rule on pool_max.
MAX_POOL2D_NHWC_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def max_pool2d(x: T.Buffer((T.int64(1), T.int64(4), T.int64(4), T.int64(1)), "float32"), pool_max: T.Buffer((T.int64(1), T.int64(2), T.int64(2), T.int64(1)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        pad_temp = T.alloc_buffer((T.int64(1), T.int64(6), T.int64(6), T.int64(1)))
        for ax0, ax1, ax2, ax3 in T.grid(T.int64(1), T.int64(6), T.int64(6), T.int64(1)):
            with T.block("pad_temp"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(x[v_ax0, v_ax1 - T.int64(1), v_ax2 - T.int64(1), v_ax3])
                T.writes(pad_temp[v_ax0, v_ax1, v_ax2, v_ax3])
                pad_temp[v_ax0, v_ax1, v_ax2, v_ax3] = T.if_then_else(T.int64(1) <= v_ax1 and v_ax1 < T.int64(5) and T.int64(1) <= v_ax2 and v_ax2 < T.int64(5), x[v_ax0, v_ax1 - T.int64(1), v_ax2 - T.int64(1), v_ax3], T.float32(-340282346638528859811704183484516925440.0))
        for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(T.int64(1), T.int64(2), T.int64(2), T.int64(1), T.int64(3), T.int64(3)):
            with T.block("pool_max"):
                v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
                T.reads(pad_temp[v_ax0, v_ax1 * T.int64(2) + v_rv0, v_ax2 * T.int64(2) + v_rv1, v_ax3])
                T.writes(pool_max[v_ax0, v_ax1, v_ax2, v_ax3])
                T.block_attr({"schedule_rule": "meta_schedule.pool_max"})
                with T.init():
                    pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(-340282346638528859811704183484516925440.0)
                pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.max(pool_max[v_ax0, v_ax1, v_ax2, v_ax3], pad_temp[v_ax0, v_ax1 * T.int64(2) + v_rv0, v_ax2 * T.int64(2) + v_rv1, v_ax3])

    @R.function
    def main(x: R.Tensor((1, 4, 4, 1), dtype="float32")) -> R.Tensor((1, 2, 2, 1), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.max_pool2d, (x,), out_sinfo=R.Tensor((1, 2, 2, 1), dtype="float32"))
        return gv"""

# ceil mode pads the end by stride - 1; only the padded side is bounded.
MAX_POOL1D_CEIL_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def max_pool1d(x: T.Buffer((T.int64(1), T.int64(1), T.int64(5)), "float32"), pool_max: T.Buffer((T.int64(1), T.int64(1), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        pad_temp = T.alloc_buffer((T.int64(1), T.int64(1), T.int64(6)))
        for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(1), T.int64(6)):
            with T.block("pad_temp"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(x[v_ax0, v_ax1, v_ax2])
                T.writes(pad_temp[v_ax0, v_ax1, v_ax2])
                pad_temp[v_ax0, v_ax1, v_ax2] = T.if_then_else(v_ax2 < T.int64(5), x[v_ax0, v_ax1, v_ax2], T.float32(-340282346638528859811704183484516925440.0))
        for ax0, ax1, ax2, rv0 in T.grid(T.int64(1), T.int64(1), T.int64(3), T.int64(2)):
            with T.block("pool_max"):
                v_ax0, v_ax1, v_ax2, v_rv0 = T.axis.remap("SSSR", [ax0, ax1, ax2, rv0])
                T.reads(pad_temp[v_ax0, v_ax1, v_ax2 * T.int64(2) + v_rv0])
                T.writes(pool_max[v_ax0, v_ax1, v_ax2])
                T.block_attr({"schedule_rule": "meta_schedule.pool_max"})
                with T.init():
                    pool_max[v_ax0, v_ax1, v_ax2] = T.float32(-340282346638528859811704183484516925440.0)
                pool_max[v_ax0, v_ax1, v_ax2] = T.max(pool_max[v_ax0, v_ax1, v_ax2], pad_temp[v_ax0, v_ax1, v_ax2 * T.int64(2) + v_rv0])

    @R.function
    def main(x: R.Tensor((1, 1, 5), dtype="float32")) -> R.Tensor((1, 1, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.max_pool1d, (x,), out_sinfo=R.Tensor((1, 1, 3), dtype="float32"))
        return gv"""

# windows of one element: the average is a copy of the sum.
ADAPTIVE_AVG_POOL2D_COPY_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def adaptive_avg_pool2d(x: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(3)), "float32"), adaptive_pool_avg: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        adaptive_pool_sum = T.alloc_buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(3)))
        for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(T.int64(1), T.int64(2), T.int64(3), T.int64(3), T.int64(1), T.int64(1)):
            with T.block("adaptive_pool_sum"):
                v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
                T.reads(x[v_ax0, v_ax1, v_ax2 + v_rv0, v_ax3 + v_rv1])
                T.writes(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                with T.init():
                    adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
                adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + x[v_ax0, v_ax1, v_ax2 + v_rv0, v_ax3 + v_rv1]
        for ax0, ax1, ax2, ax3 in T.grid(T.int64(1), T.int64(2), T.int64(3), T.int64(3)):
            with T.block("adaptive_pool_avg"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                T.writes(adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3])
                T.block_attr({"schedule_rule": "meta_schedule.adaptive_pool_avg"})
                adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3]

    @R.function
    def main(x: R.Tensor((1, 2, 3, 3), dtype="float32")) -> R.Tensor((1, 2, 3, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.adaptive_avg_pool2d, (x,), out_sinfo=R.Tensor((1, 2, 3, 3), dtype="float32"))
        return gv"""

# channels-last reduces ry, rx, rc; axes nn, yy, xx, ff.
CONV2D_NHWC_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def conv2d(x: T.Buffer((T.int64(1), T.int64(4), T.int64(4), T.int64(2)), "float32"), w: T.Buffer((T.int64(3), T.int64(2), T.int64(2), T.int64(2)), "float32"), conv2d_nhwc: T.Buffer((T.int64(1), T.int64(3), T.int64(3), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        pad_temp = T.alloc_buffer((T.int64(1), T.int64(4), T.int64(4), T.int64(2)))
        for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(4), T.int64(4), T.int64(2)):
            with T.block("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(x[v_i0, v_i1, v_i2, v_i3])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = x[v_i0, v_i1, v_i2, v_i3]
        for nn, yy, xx, ff, ry, rx, rc in T.grid(T.int64(1), T.int64(3), T.int64(3), T.int64(3), T.int64(2), T.int64(2), T.int64(2)):
            with T.block("conv2d_nhwc"):
                v_nn, v_yy, v_xx, v_ff, v_ry, v_rx, v_rc = T.axis.remap("SSSSRRR", [nn, yy, xx, ff, ry, rx, rc])
                T.reads(pad_temp[v_nn, v_yy + v_ry, v_xx + v_rx, v_rc], w[v_ff, v_rc, v_ry, v_rx])
                T.writes(conv2d_nhwc[v_nn, v_yy, v_xx, v_ff])
                with T.init():
                    conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] = T.float32(0.0)
                conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] = conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] + pad_temp[v_nn, v_yy + v_ry, v_xx + v_rx, v_rc] * w[v_ff, v_rc, v_ry, v_rx]

    @R.function
    def main(x: R.Tensor((1, 4, 4, 2), dtype="float32"), w: R.Tensor((3, 2, 2, 2), dtype="float32")) -> R.Tensor((1, 3, 3, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.conv2d, (x, w), out_sinfo=R.Tensor((1, 3, 3, 3), dtype="float32"))
        return gv"""

# data_pad bounds as '1 <= v_i2'.
CONV1D_TRANSPOSE_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def conv1d_transpose(x: T.Buffer((T.int64(1), T.int64(2), T.int64(3)), "float32"), w: T.Buffer((T.int64(2), T.int64(1), T.int64(3)), "float32"), compute: T.Buffer((T.int64(1), T.int64(1), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        data_dilate = T.alloc_buffer((T.int64(1), T.int64(2), T.int64(3)))
        data_pad = T.alloc_buffer((T.int64(1), T.int64(2), T.int64(5)))
        kernel = T.alloc_buffer((T.int64(1), T.int64(2), T.int64(3)))
        for i0, i1, i2 in T.grid(T.int64(1), T.int64(2), T.int64(3)):
            with T.block("data_dilate"):
                v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
                T.reads(x[v_i0, v_i1, v_i2])
                T.writes(data_dilate[v_i0, v_i1, v_i2])
                data_dilate[v_i0, v_i1, v_i2] = x[v_i0, v_i1, v_i2]
        for i0, i1, i2 in T.grid(T.int64(1), T.int64(2), T.int64(5)):
            with T.block("data_pad"):
                v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
                T.reads(data_dilate[v_i0, v_i1, v_i2 - T.int64(1)])
                T.writes(data_pad[v_i0, v_i1, v_i2])
                data_pad[v_i0, v_i1, v_i2] = T.if_then_else(T.int64(1) <= v_i2 and v_i2 < T.int64(4), data_dilate[v_i0, v_i1, v_i2 - T.int64(1)], T.float32(0.0))
        for o, i, w_1 in T.grid(T.int64(1), T.int64(2), T.int64(3)):
            with T.block("kernel"):
                v_o, v_i, v_w = T.axis.remap("SSS", [o, i, w_1])
                T.reads(w[v_i, v_o, T.int64(2) - v_w])
                T.writes(kernel[v_o, v_i, v_w])
                kernel[v_o, v_i, v_w] = w[v_i, v_o, T.int64(2) - v_w]
        for b, c, w_1, dc, dw in T.grid(T.int64(1), T.int64(1), T.int64(3), T.int64(2), T.int64(3)):
            with T.block("compute"):
                v_b, v_c, v_w, v_dc, v_dw = T.axis.remap("SSSRR", [b, c, w_1, dc, dw])
                T.reads(data_pad[v_b, v_dc, v_w + v_dw], kernel[v_c, v_dc, v_dw])
                T.writes(compute[v_b, v_c, v_w])
                with T.init():
                    compute[v_b, v_c, v_w] = T.float32(0.0)
                compute[v_b, v_c, v_w] = compute[v_b, v_c, v_w] + data_pad[v_b, v_dc, v_w + v_dw] * kernel[v_c, v_dc, v_dw]

    @R.function
    def main(x: R.Tensor((1, 2, 3), dtype="float32"), w: R.Tensor((2, 1, 3), dtype="float32")) -> R.Tensor((1, 1, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.conv1d_transpose, (x, w), out_sinfo=R.Tensor((1, 1, 3), dtype="float32"))
        return gv"""

# two passes (x_sum, x_mean, x_var_sum) in float32, cast back before gamma.
LAYER_NORM_FP16_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def layer_norm(x: T.Buffer((T.int64(2), T.int64(3)), "float16"), g: T.Buffer((T.int64(3),), "float16"), b: T.Buffer((T.int64(3),), "float16"), T_layer_norm: T.Buffer((T.int64(2), T.int64(3)), "float16")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        x_sum = T.alloc_buffer((T.int64(2),))
        x_mean = T.alloc_buffer((T.int64(2),))
        x_var_sum = T.alloc_buffer((T.int64(2),))
        for ax0, k1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("x_sum"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                T.reads(x[v_ax0, v_k1])
                T.writes(x_sum[v_ax0])
                with T.init():
                    x_sum[v_ax0] = T.float32(0.0)
                x_sum[v_ax0] = x_sum[v_ax0] + T.Cast("float32", x[v_ax0, v_k1])
        for ax0 in range(T.int64(2)):
            with T.block("x_mean"):
                v_ax0 = T.axis.spatial(T.int64(2), ax0)
                T.reads(x_sum[v_ax0])
                T.writes(x_mean[v_ax0])
                x_mean[v_ax0] = x_sum[v_ax0] / T.float32(3.0)
        for ax0, k1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("x_var_sum"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                T.reads(x[v_ax0, v_k1], x_mean[v_ax0])
                T.writes(x_var_sum[v_ax0])
                with T.init():
                    x_var_sum[v_ax0] = T.float32(0.0)
                x_var_sum[v_ax0] = x_var_sum[v_ax0] + (T.Cast("float32", x[v_ax0, v_k1]) - x_mean[v_ax0]) * (T.Cast("float32", x[v_ax0, v_k1]) - x_mean[v_ax0])
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_layer_norm"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1], x_mean[v_ax0], x_var_sum[v_ax0], g[v_ax1], b[v_ax1])
                T.writes(T_layer_norm[v_ax0, v_ax1])
                T_layer_norm[v_ax0, v_ax1] = T.Cast("float16", (T.Cast("float32", x[v_ax0, v_ax1]) - x_mean[v_ax0]) * T.rsqrt(x_var_sum[v_ax0] / T.float32(3.0) + T.float32(1.0000000000000001e-05))) * g[v_ax1] + b[v_ax1]

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float16"), g: R.Tensor((3,), dtype="float16"), b: R.Tensor((3,), dtype="float16")) -> R.Tensor((2, 3), dtype="float16"):
        cls = Module
        gv = R.call_tir(cls.layer_norm, (x, g, b), out_sinfo=R.Tensor((2, 3), dtype="float16"))
        return gv"""

# every axis reduced: the statistics are 0-d buffers.
LAYER_NORM_1D_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def layer_norm(x: T.Buffer((T.int64(3),), "float32"), g: T.Buffer((T.int64(3),), "float32"), b: T.Buffer((T.int64(3),), "float32"), T_layer_norm: T.Buffer((T.int64(3),), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        x_sum = T.alloc_buffer(())
        x_mean = T.alloc_buffer(())
        x_var_sum = T.alloc_buffer(())
        for k0 in range(T.int64(3)):
            with T.block("x_sum"):
                v_k0 = T.axis.reduce(T.int64(3), k0)
                T.reads(x[v_k0])
                T.writes(x_sum[()])
                with T.init():
                    x_sum[()] = T.float32(0.0)
                x_sum[()] = x_sum[()] + x[v_k0]
        with T.block("x_mean"):
            vi = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(x_sum[()])
            T.writes(x_mean[()])
            x_mean[()] = x_sum[()] / T.float32(3.0)
        for k0 in range(T.int64(3)):
            with T.block("x_var_sum"):
                v_k0 = T.axis.reduce(T.int64(3), k0)
                T.reads(x[v_k0], x_mean[()])
                T.writes(x_var_sum[()])
                with T.init():
                    x_var_sum[()] = T.float32(0.0)
                x_var_sum[()] = x_var_sum[()] + (x[v_k0] - x_mean[()]) * (x[v_k0] - x_mean[()])
        for ax0 in range(T.int64(3)):
            with T.block("T_layer_norm"):
                v_ax0 = T.axis.spatial(T.int64(3), ax0)
                T.reads(x[v_ax0], x_mean[()], x_var_sum[()], g[v_ax0], b[v_ax0])
                T.writes(T_layer_norm[v_ax0])
                T_layer_norm[v_ax0] = (x[v_ax0] - x_mean[()]) * T.rsqrt(x_var_sum[()] / T.float32(3.0) + T.float32(1.0000000000000001e-05)) * g[v_ax0] + b[v_ax0]

    @R.function
    def main(x: R.Tensor((3,), dtype="float32"), g: R.Tensor((3,), dtype="float32"), b: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.layer_norm, (x, g, b), out_sinfo=R.Tensor((3,), dtype="float32"))
        return gv"""

# the flat index as a sum of index times stride.
ARGMIN_ALL_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def argmin(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "float32"), x_red: T.Buffer((), "int64")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        x_red_temp_v0 = T.alloc_buffer((), "int64")
        x_red_temp_v1 = T.alloc_buffer(())
        for k0, k1, k2 in T.grid(T.int64(2), T.int64(3), T.int64(4)):
            with T.block("x_red_temp"):
                v_k0, v_k1, v_k2 = T.axis.remap("RRR", [k0, k1, k2])
                T.reads(x[v_k0, v_k1, v_k2])
                T.writes(x_red_temp_v0[()], x_red_temp_v1[()])
                with T.init():
                    x_red_temp_v0[()] = T.int64(-1)
                    x_red_temp_v1[()] = T.float32(340282346638528859811704183484516925440.0)
                v_x_red_temp_v0: T.int64 = T.Select(x_red_temp_v1[()] < x[v_k0, v_k1, v_k2] or x_red_temp_v1[()] == x[v_k0, v_k1, v_k2] and x_red_temp_v0[()] < v_k0 * T.int64(12) + v_k1 * T.int64(4) + v_k2, x_red_temp_v0[()], v_k0 * T.int64(12) + v_k1 * T.int64(4) + v_k2)
                v_x_red_temp_v1: T.float32 = T.Select(x_red_temp_v1[()] < x[v_k0, v_k1, v_k2], x_red_temp_v1[()], x[v_k0, v_k1, v_k2])
                x_red_temp_v0[()] = v_x_red_temp_v0
                x_red_temp_v1[()] = v_x_red_temp_v1
        with T.block("x_red"):
            vi = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(x_red_temp_v0[()])
            T.writes(x_red[()])
            x_red[()] = x_red_temp_v0[()]

    @R.function
    def main(x: R.Tensor((2, 3, 4), dtype="float32")) -> R.Tensor((), dtype="int64"):
        cls = Module
        gv = R.call_tir(cls.argmin, (x,), out_sinfo=R.Tensor((), dtype="int64"))
        return gv"""

# no weights: a T_full of ones, then the weighted computation.
NLL_LOSS_NO_WEIGHT_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def nll_loss_without_weight(p: T.Buffer((T.int64(2), T.int64(3)), "float32"), t: T.Buffer((T.int64(2),), "int64"), T_divide: T.Buffer((), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        T_full = T.alloc_buffer((T.int64(3),))
        nll_loss = T.alloc_buffer((T.int64(2),))
        nll_loss_red = T.alloc_buffer(())
        nll_loss_1 = T.alloc_buffer((T.int64(2),))
        nll_loss_red_1 = T.alloc_buffer(())
        for ax0 in range(T.int64(3)):
            with T.block("T_full"):
                v_ax0 = T.axis.spatial(T.int64(3), ax0)
                T.reads()
                T.writes(T_full[v_ax0])
                T_full[v_ax0] = T.float32(1.0)
        for ax0 in range(T.int64(2)):
            with T.block("nll_loss"):
                v_ax0 = T.axis.spatial(T.int64(2), ax0)
                T.reads(t[v_ax0], p[v_ax0, t[v_ax0]], T_full[t[v_ax0]])
                T.writes(nll_loss[v_ax0])
                nll_loss[v_ax0] = T.Select(t[v_ax0] != T.int64(-100), (T.float32(0.0) - p[v_ax0, t[v_ax0]]) * T_full[t[v_ax0]], T.float32(0.0))
        for k0 in range(T.int64(2)):
            with T.block("nll_loss_red"):
                v_k0 = T.axis.reduce(T.int64(2), k0)
                T.reads(nll_loss[v_k0])
                T.writes(nll_loss_red[()])
                with T.init():
                    nll_loss_red[()] = T.float32(0.0)
                nll_loss_red[()] = nll_loss_red[()] + nll_loss[v_k0]
        for ax0 in range(T.int64(2)):
            with T.block("nll_loss_1"):
                v_ax0 = T.axis.spatial(T.int64(2), ax0)
                T.reads(t[v_ax0], T_full[t[v_ax0]])
                T.writes(nll_loss_1[v_ax0])
                nll_loss_1[v_ax0] = T.Select(t[v_ax0] != T.int64(-100), T_full[t[v_ax0]], T.float32(0.0))
        for k0 in range(T.int64(2)):
            with T.block("nll_loss_red_1"):
                v_k0 = T.axis.reduce(T.int64(2), k0)
                T.reads(nll_loss_1[v_k0])
                T.writes(nll_loss_red_1[()])
                with T.init():
                    nll_loss_red_1[()] = T.float32(0.0)
                nll_loss_red_1[()] = nll_loss_red_1[()] + nll_loss_1[v_k0]
        with T.block("T_divide"):
            vi = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(nll_loss_red[()], nll_loss_red_1[()])
            T.writes(T_divide[()])
            T_divide[()] = nll_loss_red[()] / nll_loss_red_1[()]

    @R.function
    def main(p: R.Tensor((2, 3), dtype="float32"), t: R.Tensor((2,), dtype="int64")) -> R.Tensor((), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.nll_loss_without_weight, (p, t), out_sinfo=R.Tensor((), dtype="float32"))
        return gv"""

# a packed layout: the pool runs over H and W of each channel block.
MAX_POOL2D_NCHW4C_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def max_pool2d(x: T.Buffer((T.int64(1), T.int64(1), T.int64(3), T.int64(3), T.int64(4)), "float32"), pool_max: T.Buffer((T.int64(1), T.int64(1), T.int64(2), T.int64(2), T.int64(4)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for ax0, ax1, ax2, ax3, ax4, rv0, rv1 in T.grid(T.int64(1), T.int64(1), T.int64(2), T.int64(2), T.int64(4), T.int64(2), T.int64(2)):
            with T.block("pool_max"):
                v_ax0, v_ax1, v_ax2, v_ax3, v_ax4, v_rv0, v_rv1 = T.axis.remap("SSSSSRR", [ax0, ax1, ax2, ax3, ax4, rv0, rv1])
                T.reads(x[v_ax0, v_ax1, v_ax2 + v_rv0, v_ax3 + v_rv1, v_ax4])
                T.writes(pool_max[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4])
                T.block_attr({"schedule_rule": "meta_schedule.pool_max"})
                with T.init():
                    pool_max[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] = T.float32(-340282346638528859811704183484516925440.0)
                pool_max[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] = T.max(pool_max[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4], x[v_ax0, v_ax1, v_ax2 + v_rv0, v_ax3 + v_rv1, v_ax4])

    @R.function
    def main(x: R.Tensor((1, 1, 3, 3, 4), dtype="float32")) -> R.Tensor((1, 1, 2, 2, 4), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.max_pool2d, (x,), out_sinfo=R.Tensor((1, 1, 2, 2, 4), dtype="float32"))
        return gv"""

# float32 data cast to float32 (TVM's copies), the weight too, and the result cast back.
RMS_NORM_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def rms_norm(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), w: T.Buffer((T.int64(3),), "float32"), T_cast: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        T_cast_1 = T.alloc_buffer((T.int64(2), T.int64(3)))
        T_multiply = T.alloc_buffer((T.int64(2), T.int64(3)))
        T_multiply_red = T.alloc_buffer((T.int64(2),))
        rsqrt = T.alloc_buffer((T.int64(2),))
        T_cast_2 = T.alloc_buffer((T.int64(3),))
        T_rms_norm = T.alloc_buffer((T.int64(2), T.int64(3)))
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_cast"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1])
                T.writes(T_cast_1[v_ax0, v_ax1])
                T_cast_1[v_ax0, v_ax1] = x[v_ax0, v_ax1]
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_multiply"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(T_cast_1[v_ax0, v_ax1])
                T.writes(T_multiply[v_ax0, v_ax1])
                T_multiply[v_ax0, v_ax1] = T_cast_1[v_ax0, v_ax1] * T_cast_1[v_ax0, v_ax1]
        for ax0, k1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_multiply_red"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                T.reads(T_multiply[v_ax0, v_k1])
                T.writes(T_multiply_red[v_ax0])
                with T.init():
                    T_multiply_red[v_ax0] = T.float32(0.0)
                T_multiply_red[v_ax0] = T_multiply_red[v_ax0] + T_multiply[v_ax0, v_k1]
        for ax0 in range(T.int64(2)):
            with T.block("rsqrt"):
                v_ax0 = T.axis.spatial(T.int64(2), ax0)
                T.reads(T_multiply_red[v_ax0])
                T.writes(rsqrt[v_ax0])
                rsqrt[v_ax0] = T.rsqrt(T_multiply_red[v_ax0] / T.float32(3.0) + T.float32(1.0000000000000001e-05))
        for ax0 in range(T.int64(3)):
            with T.block("T_cast_1"):
                v_ax0 = T.axis.spatial(T.int64(3), ax0)
                T.reads(w[v_ax0])
                T.writes(T_cast_2[v_ax0])
                T_cast_2[v_ax0] = w[v_ax0]
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_rms_norm"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(rsqrt[v_ax0], T_cast_1[v_ax0, v_ax1], T_cast_2[v_ax1])
                T.writes(T_rms_norm[v_ax0, v_ax1])
                T_rms_norm[v_ax0, v_ax1] = rsqrt[v_ax0] * T_cast_1[v_ax0, v_ax1] * T_cast_2[v_ax1]
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_cast_2"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(T_rms_norm[v_ax0, v_ax1])
                T.writes(T_cast[v_ax0, v_ax1])
                T_cast[v_ax0, v_ax1] = T_rms_norm[v_ax0, v_ax1]

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), w: R.Tensor((3,), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.rms_norm, (x, w), out_sinfo=R.Tensor((2, 3), dtype="float32"))
        return gv"""

# the test written '0 < x'.
LEAKYRELU_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def leaky_relu(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), compute: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for i0, i1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(x[v_i0, v_i1])
                T.writes(compute[v_i0, v_i1])
                compute[v_i0, v_i1] = T.Select(T.float32(0.0) < x[v_i0, v_i1], x[v_i0, v_i1], x[v_i0, v_i1] * T.float32(0.10000000000000001))

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.leaky_relu, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
        return gv"""

ARGMAX_AXIS_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def argmax(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), x_red: T.Buffer((T.int64(2),), "int64")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        x_red_temp_v0 = T.alloc_buffer((T.int64(2),), "int64")
        x_red_temp_v1 = T.alloc_buffer((T.int64(2),))
        for ax0, k1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("x_red_temp"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                T.reads(x[v_ax0, v_k1])
                T.writes(x_red_temp_v0[v_ax0], x_red_temp_v1[v_ax0])
                with T.init():
                    x_red_temp_v0[v_ax0] = T.int64(-1)
                    x_red_temp_v1[v_ax0] = T.float32(-340282346638528859811704183484516925440.0)
                v_x_red_temp_v0: T.int64 = T.Select(x_red_temp_v1[v_ax0] > x[v_ax0, v_k1] or x_red_temp_v1[v_ax0] == x[v_ax0, v_k1] and x_red_temp_v0[v_ax0] < v_k1, x_red_temp_v0[v_ax0], v_k1)
                v_x_red_temp_v1: T.float32 = T.Select(x_red_temp_v1[v_ax0] > x[v_ax0, v_k1], x_red_temp_v1[v_ax0], x[v_ax0, v_k1])
                x_red_temp_v0[v_ax0] = v_x_red_temp_v0
                x_red_temp_v1[v_ax0] = v_x_red_temp_v1
        for ax0 in range(T.int64(2)):
            with T.block("x_red"):
                v_ax0 = T.axis.spatial(T.int64(2), ax0)
                T.reads(x_red_temp_v0[v_ax0])
                T.writes(x_red[v_ax0])
                x_red[v_ax0] = x_red_temp_v0[v_ax0]

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2,), dtype="int64"):
        cls = Module
        gv = R.call_tir(cls.argmax, (x,), out_sinfo=R.Tensor((2,), dtype="int64"))
        return gv"""

WHERE_BOOL_TVM = """@I.ir_module
class Module:
    @T.prim_func(private=True)
    def where(c: T.Buffer((T.int64(2), T.int64(3)), "bool"), x: T.Buffer((T.int64(2), T.int64(3)), "float32"), y: T.Buffer((T.int64(3),), "float32"), T_where: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_where"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(c[v_ax0, v_ax1], x[v_ax0, v_ax1], y[v_ax1])
                T.writes(T_where[v_ax0, v_ax1])
                T_where[v_ax0, v_ax1] = T.Select(T.int64(0) < T.Cast("int64", c[v_ax0, v_ax1]), x[v_ax0, v_ax1], y[v_ax1])

    @R.function
    def main(c: R.Tensor((2, 3), dtype="bool"), x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((3,), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.where, (c, x, y), out_sinfo=R.Tensor((2, 3), dtype="float32"))
        return gv"""

TVM_TEXT = {"argmax_axis": ARGMAX_AXIS_TVM, "where_bool": WHERE_BOOL_TVM}
TVM_TEXT |= {"leakyrelu": LEAKYRELU_TVM, "rms_norm": RMS_NORM_TVM, "max_pool2d_nchw4c": MAX_POOL2D_NCHW4C_TVM, "softmax": SOFTMAX_TVM, "log_softmax": LOG_SOFTMAX_TVM, "max_pool2d_nhwc": MAX_POOL2D_NHWC_TVM, "max_pool1d_ceil": MAX_POOL1D_CEIL_TVM, "adaptive_avg_pool2d_copy": ADAPTIVE_AVG_POOL2D_COPY_TVM, "conv2d_nhwc": CONV2D_NHWC_TVM, "conv1d_transpose": CONV1D_TRANSPOSE_TVM, "layer_norm_fp16": LAYER_NORM_FP16_TVM, "layer_norm_1d": LAYER_NORM_1D_TVM, "argmin_all": ARGMIN_ALL_TVM, "nll_loss_no_weight": NLL_LOSS_NO_WEIGHT_TVM}


@pytest.mark.parametrize("name", list(CASES))
def test_legalized_as_tvm_prints(name):
    params, call = CASES[name]
    assert legalized(params, call).replace(SCALAR_TE, SCALAR_TVM) == TVM_TEXT[name]


# ---------------------------------------------------------------- the numbers of these forms
sys.path.insert(0, str(Path(__file__).resolve().parent))
from legalize_util import legalize_and_run as _legalize_and_run  # noqa: E402
from nn_refs import conv_nd, pool_nd  # noqa: E402
from tvmlite import relax  # noqa: E402

op = relax.op
rng = np.random.default_rng(16)


def legalize_and_run(make, arrays):
    """The result of the legalized program on ``arrays`` (numpy evaluator)."""
    return _legalize_and_run(make, arrays)[1]


def test_layer_norm_two_pass_is_exact_on_a_large_mean():
    """TVM's older one-pass variance (mean of squares minus squared mean) loses every digit here."""
    x = (1e4 + rng.standard_normal((4, 64))).astype("float32")
    g, b = np.ones(64, "float32"), np.zeros(64, "float32")
    got = legalize_and_run(lambda x, g, b: op.nn.layer_norm(x, g, b, axes=[-1]), [x, g, b])
    x64 = x.astype("float64")
    want = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-3)


def test_layer_norm_float16_normalizes_in_float32():
    x = rng.uniform(-3, 3, (2, 8)).astype("float16")
    g, b = rng.uniform(0.5, 2, 8).astype("float16"), rng.uniform(-1, 1, 8).astype("float16")
    got = legalize_and_run(lambda x, g, b: op.nn.layer_norm(x, g, b, axes=[-1]), [x, g, b])
    x32 = x.astype("float32")
    norm = ((x32 - x32.mean(-1, keepdims=True)) / np.sqrt(x32.var(-1, keepdims=True) + 1e-5)).astype("float16")
    np.testing.assert_allclose(got.astype("float32"), (norm * g + b).astype("float32"), rtol=2e-3, atol=2e-3)


def test_argmin_flat_index_and_nll_loss_without_weights():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    assert legalize_and_run(lambda x: op.argmin(x), [x]) == np.argmin(x)
    p = rng.standard_normal((5, 3)).astype("float32")
    t = np.array([0, 2, -100, 1, 2], "int64")
    got = legalize_and_run(lambda p, t: op.nn.nll_loss(p, t), [p, t])
    kept = t != -100
    np.testing.assert_allclose(got, -p[np.arange(5)[kept], t[kept]].mean(), rtol=1e-6)


def test_pool_ceil_mode_and_channels_last_conv():
    x = rng.standard_normal((1, 2, 7)).astype("float32")
    got = legalize_and_run(lambda x: op.nn.max_pool1d(x, pool_size=2, strides=2, ceil_mode=True), [x])
    np.testing.assert_array_equal(got, pool_nd(x, "max", (2,), (2,), (0, 0), ceil=True))
    x = rng.standard_normal((1, 5, 5, 2)).astype("float32")
    w = rng.standard_normal((3, 2, 2, 2)).astype("float32")
    got = legalize_and_run(lambda x, w: op.nn.conv2d(x, w, data_layout="NHWC"), [x, w])
    want = conv_nd(x.transpose(0, 3, 1, 2), w, (1, 1), (0, 0, 0, 0), (1, 1)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_pools_in_a_packed_layout():
    """NCHW4c pools H and W of each channel block, as TVM's NCHW16c pools."""
    x = rng.standard_normal((1, 2, 5, 6, 4)).astype("float32")
    unpacked = x.transpose(0, 1, 4, 2, 3).reshape(1, 8, 5, 6)

    def repack(y):
        return y.reshape(1, 2, 4, *y.shape[2:]).transpose(0, 1, 3, 4, 2)

    got = legalize_and_run(lambda x: op.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1],
                                                      layout="NCHW4c"), [x])
    np.testing.assert_array_equal(got, repack(pool_nd(unpacked, "max", (3, 3), (2, 2), (1, 1, 1, 1))))
    got = legalize_and_run(lambda x: op.nn.adaptive_avg_pool2d(x, output_size=[1, 1], layout="NCHW4c"), [x])
    np.testing.assert_allclose(got, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)
