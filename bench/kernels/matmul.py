#!/usr/bin/env python3
"""matmul 1024x1024x1024 float32, hand-scheduled (docs/cpu_kernels.md, workload 1).

Register-blocked micro-kernel: an MR x NR tile of C accumulates in a "local" buffer (cache_write,
compute-at the tile loop), the MR loop unrolled and the NR loop vectorized, so LLVM keeps the tile
in MR * NR / 16 AVX-512 registers; per k, MR broadcasts of A and NR/16 vector loads of a packed
K x NR panel of B (cache_read, computed at the parallel loop: one private copy per task). The
parallel loop is the fused (row half, column panel) loop.

    python bench/kernels/matmul.py [--mr 8] [--nr 32] [--show]
"""
from __future__ import annotations

import argparse

import numpy as np

from _common import compile_kernel, median_time, report


def matmul_text(n: int = 1024, mr: int = 8, nr: int = 32, row_blocks: int = 2) -> str:
    """The scheduled TIR of ``matmul[i, j] = sum_k a[i, k] * b[k, j]`` (n x n x n float32)."""
    assert n % (row_blocks * mr) == 0 and n % nr == 0
    rows = n // row_blocks  # rows of one parallel task
    panels = n // nr
    i = f"i_0_j_0_fused // {panels} * {rows} + i_1 * {mr}"
    j = f"i_0_j_0_fused % {panels} * {nr}"
    return f'''
@T.prim_func
def matmul(a: T.Buffer(({n}, {n}), "float32"), b: T.Buffer(({n}, {n}), "float32"), matmul: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    # with T.block("root"):
    b_global = T.alloc_buffer(({n}, {n}))
    matmul_local = T.alloc_buffer(({n}, {n}), scope="local")
    for i_0_j_0_fused in T.parallel({row_blocks * panels}):
        for ax0 in range({n}):
            for ax1 in T.vectorized({nr}):
                with T.block("b_global"):
                    v0 = T.axis.spatial({n}, ax0)
                    v1 = T.axis.spatial({n}, {j} + ax1)
                    T.reads(b[v0, v1])
                    T.writes(b_global[v0, v1])
                    b_global[v0, v1] = b[v0, v1]
        for i_1 in range({rows // mr}):
            for i_2_init in T.unroll({mr}):
                for j_1_init in T.vectorized({nr}):
                    with T.block("matmul_init"):
                        v_i0 = T.axis.spatial({n}, {i} + i_2_init)
                        v_i1 = T.axis.spatial({n}, {j} + j_1_init)
                        T.reads()
                        T.writes(matmul_local[v_i0, v_i1])
                        matmul_local[v_i0, v_i1] = T.float32(0.0)
            for k in range({n}):
                for i_2 in T.unroll({mr}):
                    for j_1 in T.vectorized({nr}):
                        with T.block("matmul_update"):
                            v_i0 = T.axis.spatial({n}, {i} + i_2)
                            v_i1 = T.axis.spatial({n}, {j} + j_1)
                            v_k = T.axis.reduce({n}, k)
                            T.reads(matmul_local[v_i0, v_i1], a[v_i0, v_k], b_global[v_k, v_i1])
                            T.writes(matmul_local[v_i0, v_i1])
                            matmul_local[v_i0, v_i1] = matmul_local[v_i0, v_i1] + a[v_i0, v_k] * b_global[v_k, v_i1]
            for ax0 in range({mr}):
                for ax1 in T.vectorized({nr}):
                    with T.block("matmul_local"):
                        v0 = T.axis.spatial({n}, {i} + ax0)
                        v1 = T.axis.spatial({n}, {j} + ax1)
                        T.reads(matmul_local[v0, v1])
                        T.writes(matmul[v0, v1])
                        matmul[v0, v1] = matmul_local[v0, v1]
'''


def main() -> None:
    """Check against numpy, then time both."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--mr", type=int, default=8)
    ap.add_argument("--nr", type=int, default=32)
    ap.add_argument("--show", action="store_true", help="print the scheduled and the lowered TIR")
    args = ap.parse_args()
    text = matmul_text(args.n, args.mr, args.nr)
    f = compile_kernel(text, "matmul", show=args.show)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.n, args.n), dtype=np.float32)
    b = rng.standard_normal((args.n, args.n), dtype=np.float32)
    c = np.empty((args.n, args.n), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    ours = median_time(lambda: f(a, b, c), repeat=9, min_time=1.0)
    ref = median_time(lambda: a @ b, repeat=9, min_time=1.0)
    report(f"matmul {args.n}^3 (MR={args.mr}, NR={args.nr})", ours, ref, "GFLOP/s", 2.0 * args.n ** 3)


if __name__ == "__main__":
    main()
