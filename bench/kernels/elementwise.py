#!/usr/bin/env python3
"""Elementwise ``relu(x * 2 + 1)`` on 16M float32 as one fused block, hand-scheduled
(docs/cpu_kernels.md, workload 3): a parallel outer loop (one chunk per task), a serial middle
loop and a 16-lane vectorized inner loop (VectorizeLoop writes it as one <16 x float> statement),
so memory is read and written once.

    python bench/kernels/elementwise.py [--n 16777216] [--tasks 64] [--lanes 16] [--show]
"""
from __future__ import annotations

import argparse

import numpy as np

from _common import compile_kernel, median_time, report


def elementwise_text(n: int = 1 << 24, tasks: int = 64, lanes: int = 16) -> str:
    """The scheduled TIR of ``compute[i] = max(x[i] * 2 + 1, 0)``."""
    assert n % (tasks * lanes) == 0
    chunk = n // tasks
    return f'''
@T.prim_func
def relu_affine(x: T.Buffer(({n},), "float32"), compute: T.Buffer(({n},), "float32")):
    T.func_attr({{"tir.noalias": True}})
    # with T.block("root"):
    for i0_0 in T.parallel({tasks}):
        for i0_1 in range({chunk // lanes}):
            for i0_2 in T.vectorized({lanes}):
                with T.block("compute"):
                    v_i0 = T.axis.spatial({n}, i0_0 * {chunk} + i0_1 * {lanes} + i0_2)
                    T.reads(x[v_i0])
                    T.writes(compute[v_i0])
                    compute[v_i0] = T.max(x[v_i0] * T.float32(2.0) + T.float32(1.0), T.float32(0.0))
'''


def main() -> None:
    """Check against numpy, then time both (output preallocated, and allocated per call)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--lanes", type=int, default=16)
    ap.add_argument("--show", action="store_true", help="print the scheduled and the lowered TIR")
    args = ap.parse_args()
    text = elementwise_text(args.n, args.tasks, args.lanes)
    f = compile_kernel(text, "relu_affine", show=args.show)
    x = np.random.default_rng(0).standard_normal(args.n, dtype=np.float32)
    y = np.empty_like(x)
    f(x, y)
    np.testing.assert_array_equal(y, np.maximum(x * 2 + 1, 0))
    ref = median_time(lambda: np.maximum(x * 2 + 1, 0), repeat=11)
    nbytes = 8.0 * args.n  # one read and one write per element
    report(f"relu(x*2+1) {args.n} float32, output reused", median_time(lambda: f(x, y), repeat=11), ref,
           "GB/s", nbytes)
    report(f"relu(x*2+1) {args.n} float32, np.empty output", median_time(lambda: f(x, np.empty_like(x)), repeat=11),
           ref, "GB/s", nbytes)


if __name__ == "__main__":
    main()
