#!/usr/bin/env python3
"""conv2d NCHW 1x64x56x56, weight 64x64x3x3, padding 1, with a folded batch-norm + relu epilogue
(``max(conv * scale[c] + shift[c], 0)``), hand-scheduled (docs/cpu_kernels.md, workload 4).

The parallel loop runs over output rows; each task materialises the three padded input rows it
needs (``pad_temp`` computed at the row loop: 64 x 3 x 58, private), then for every block of OCB
output channels accumulates an OCB x 56 tile (output channels unrolled, the row vectorized: 56
lanes) over (ic, ry, rx), broadcasting one weight per channel, and writes the epilogue.

    python bench/kernels/conv2d.py [--ocb 4] [--show]
"""
from __future__ import annotations

import argparse

import numpy as np

from _common import compile_kernel, median_time, report

C, H, W = 64, 56, 56


def conv2d_text(ocb: int = 4) -> str:
    """The scheduled TIR of conv2d (3x3, stride 1, padding 1) + scale/shift + relu."""
    return f'''
@T.prim_func
def conv2d_bn_relu(data: T.Buffer((1, {C}, {H}, {W}), "float32"), weight: T.Buffer(({C}, {C}, 3, 3), "float32"), scale: T.Buffer(({C},), "float32"), shift: T.Buffer(({C},), "float32"), out: T.Buffer((1, {C}, {H}, {W}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    # with T.block("root"):
    pad_temp = T.alloc_buffer((1, {C}, {H + 2}, {W + 2}))
    conv2d_nchw = T.alloc_buffer((1, {C}, {H}, {W}))
    for yy in T.parallel({H}):
        for ax0, ax1 in T.grid({C}, 3):
            for ax2 in T.vectorized({W + 2}):
                with T.block("pad_temp"):
                    v_i1 = T.axis.spatial({C}, ax0)
                    v_i2 = T.axis.spatial({H + 2}, yy + ax1)
                    v_i3 = T.axis.spatial({W + 2}, ax2)
                    T.reads(data[0, v_i1, v_i2 - 1, v_i3 - 1])
                    T.writes(pad_temp[0, v_i1, v_i2, v_i3])
                    pad_temp[0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < {H + 1} and 1 <= v_i3 and v_i3 < {W + 1}, data[0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0.0))
        for ff_0 in range({C // ocb}):
            for ff_1_init in T.unroll({ocb}):
                for xx_init in T.vectorized({W}):
                    with T.block("conv2d_nchw_init"):
                        v_ff = T.axis.spatial({C}, ff_0 * {ocb} + ff_1_init)
                        v_yy = T.axis.spatial({H}, yy)
                        v_xx = T.axis.spatial({W}, xx_init)
                        T.reads()
                        T.writes(conv2d_nchw[0, v_ff, v_yy, v_xx])
                        conv2d_nchw[0, v_ff, v_yy, v_xx] = T.float32(0.0)
            for rc, ry, rx in T.grid({C}, 3, 3):
                for ff_1 in T.unroll({ocb}):
                    for xx in T.vectorized({W}):
                        with T.block("conv2d_nchw_update"):
                            v_ff = T.axis.spatial({C}, ff_0 * {ocb} + ff_1)
                            v_yy = T.axis.spatial({H}, yy)
                            v_xx = T.axis.spatial({W}, xx)
                            v_rc, v_ry, v_rx = T.axis.remap("RRR", [rc, ry, rx])
                            T.reads(conv2d_nchw[0, v_ff, v_yy, v_xx], pad_temp[0, v_rc, v_yy + v_ry, v_xx + v_rx], weight[v_ff, v_rc, v_ry, v_rx])
                            T.writes(conv2d_nchw[0, v_ff, v_yy, v_xx])
                            conv2d_nchw[0, v_ff, v_yy, v_xx] = conv2d_nchw[0, v_ff, v_yy, v_xx] + pad_temp[0, v_rc, v_yy + v_ry, v_xx + v_rx] * weight[v_ff, v_rc, v_ry, v_rx]
            for ax0 in range({ocb}):
                for ax1 in T.vectorized({W}):
                    with T.block("compute"):
                        v_ax1 = T.axis.spatial({C}, ff_0 * {ocb} + ax0)
                        v_ax2 = T.axis.spatial({H}, yy)
                        v_ax3 = T.axis.spatial({W}, ax1)
                        T.reads(conv2d_nchw[0, v_ax1, v_ax2, v_ax3], scale[v_ax1], shift[v_ax1])
                        T.writes(out[0, v_ax1, v_ax2, v_ax3])
                        out[0, v_ax1, v_ax2, v_ax3] = T.max(conv2d_nchw[0, v_ax1, v_ax2, v_ax3] * scale[v_ax1] + shift[v_ax1], T.float32(0.0))
'''


def im2col_reference(data: np.ndarray, weight: np.ndarray, scale: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """numpy: pad, im2col (a strided view copied once), one matmul, the epilogue."""
    padded = np.pad(data[0], ((0, 0), (1, 1), (1, 1)))
    s = padded.strides
    cols = np.lib.stride_tricks.as_strided(padded, (C, 3, 3, H, W), (s[0], s[1], s[2], s[1], s[2]))
    conv = weight.reshape(C, C * 9) @ cols.reshape(C * 9, H * W)
    return np.maximum(conv * scale[:, None] + shift[:, None], 0).reshape(1, C, H, W)


def main() -> None:
    """Check against numpy, then time both."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ocb", type=int, default=4)
    ap.add_argument("--show", action="store_true", help="print the scheduled and the lowered TIR")
    args = ap.parse_args()
    text = conv2d_text(args.ocb)
    f = compile_kernel(text, "conv2d_bn_relu", show=args.show)
    rng = np.random.default_rng(0)
    data = rng.standard_normal((1, C, H, W), dtype=np.float32)
    weight = rng.standard_normal((C, C, 3, 3), dtype=np.float32) * 0.1
    scale = rng.standard_normal(C, dtype=np.float32)
    shift = rng.standard_normal(C, dtype=np.float32)
    out = np.empty((1, C, H, W), np.float32)
    f(data, weight, scale, shift, out)
    np.testing.assert_allclose(out, im2col_reference(data, weight, scale, shift), rtol=1e-3, atol=1e-3)
    ours = median_time(lambda: f(data, weight, scale, shift, out), repeat=11)
    ref = median_time(lambda: im2col_reference(data, weight, scale, shift), repeat=11)
    report(f"conv2d 1x{C}x{H}x{W} 3x3 +bn+relu (OCB={args.ocb})", ours, ref, "GFLOP/s", 2.0 * C * H * W * C * 9)


if __name__ == "__main__":
    main()
