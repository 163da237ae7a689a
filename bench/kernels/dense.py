#!/usr/bin/env python3
"""Dense layer ``out = [relu](x @ w.T + bias)`` with w in PyTorch's [out, in] layout, hand-scheduled
(docs/cpu_kernels.md, workloads 1 and 2: the MLP layers at batch 64 and batch 1).

Both operands are contiguous along k, so the micro-kernel is MR x NR dot products: the tile loops
(MR, NR) unrolled under the k loop, and k annotated ``"tvmlite.reassoc"``: its float adds may be
reassociated, so LLVM vectorises k (16 lanes) with one vector accumulator per output and a
horizontal sum at the end. The tile itself is the matmul block's intermediate buffer, compacted
to MR x NR by the epilogue (bias + relu) computed at the tile loop; the fused tile loop is parallel.

    python bench/kernels/dense.py --m 64 --n 256 --k 784 --mr 4 --nr 4 --relu [--show]
"""
from __future__ import annotations

import argparse

import numpy as np

from _common import compile_kernel, median_time, report


def dense_text(m: int, n: int, k: int, mr: int, nr: int, relu: bool = True, parallel: bool = True,
               name: str = "dense") -> str:
    """The scheduled TIR of ``out[i, j] = [max](sum_k x[i, k] * w[j, k] + bias[j], 0)``."""
    assert m % mr == 0 and n % nr == 0
    tiles = (m // mr) * (n // nr)
    cols = n // nr
    i = f"i0_0_i1_0_fused // {cols} * {mr}"
    j = f"i0_0_i1_0_fused % {cols} * {nr}"
    kind = "T.parallel" if parallel else "T.serial"
    value = "matmul_intermediate[v0, v1] + bias[v1]"
    if relu:
        value = f"T.max({value}, T.float32(0.0))"
    return f'''
@T.prim_func
def {name}(x: T.Buffer(({m}, {k}), "float32"), w: T.Buffer(({n}, {k}), "float32"), bias: T.Buffer(({n},), "float32"), out: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    # with T.block("root"):
    matmul_intermediate = T.alloc_buffer(({m}, {n}))
    for i0_0_i1_0_fused in {kind}({tiles}):
        for i0_1_init, i1_1_init in T.grid({mr}, {nr}):
            with T.block("matmul_init"):
                v_i0 = T.axis.spatial({m}, {i} + i0_1_init)
                v_i1 = T.axis.spatial({n}, {j} + i1_1_init)
                T.reads()
                T.writes(matmul_intermediate[v_i0, v_i1])
                matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
        for k in T.serial({k}, annotations={{"tvmlite.reassoc": 1}}):
            for i0_1 in T.unroll({mr}):
                for i1_1 in T.unroll({nr}):
                    with T.block("matmul_update"):
                        v_i0 = T.axis.spatial({m}, {i} + i0_1)
                        v_i1 = T.axis.spatial({n}, {j} + i1_1)
                        v_k = T.axis.reduce({k}, k)
                        T.reads(matmul_intermediate[v_i0, v_i1], x[v_i0, v_k], w[v_i1, v_k])
                        T.writes(matmul_intermediate[v_i0, v_i1])
                        matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + x[v_i0, v_k] * w[v_i1, v_k]
        for ax0, ax1 in T.grid({mr}, {nr}):
            with T.block("compute"):
                v0 = T.axis.spatial({m}, {i} + ax0)
                v1 = T.axis.spatial({n}, {j} + ax1)
                T.reads(matmul_intermediate[v0, v1], bias[v1])
                T.writes(out[v0, v1])
                out[v0, v1] = {value}
'''


def reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray, relu: bool) -> np.ndarray:
    """numpy's result."""
    y = x @ w.T + bias
    return np.maximum(y, 0) if relu else y


def main() -> None:
    """Check one layer against numpy, then time both."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt, default in (("m", 64), ("n", 256), ("k", 784), ("mr", 4), ("nr", 4)):
        ap.add_argument(f"--{opt}", type=int, default=default)
    ap.add_argument("--relu", action="store_true")
    ap.add_argument("--serial", action="store_true", help="no parallel loop")
    ap.add_argument("--show", action="store_true", help="print the scheduled and the lowered TIR")
    args = ap.parse_args()
    text = dense_text(args.m, args.n, args.k, args.mr, args.nr, args.relu, not args.serial)
    f = compile_kernel(text, "dense", show=args.show)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.m, args.k), dtype=np.float32)
    w = rng.standard_normal((args.n, args.k), dtype=np.float32)
    bias = rng.standard_normal(args.n, dtype=np.float32)
    out = np.empty((args.m, args.n), np.float32)
    f(x, w, bias, out)
    np.testing.assert_allclose(out, reference(x, w, bias, args.relu), rtol=1e-4, atol=1e-4)
    ours = median_time(lambda: f(x, w, bias, out))
    ref = median_time(lambda: reference(x, w, bias, args.relu))
    report(f"dense {args.m}x{args.n}x{args.k} (MR={args.mr}, NR={args.nr})", ours, ref, "GFLOP/s",
           2.0 * args.m * args.n * args.k)


if __name__ == "__main__":
    main()
