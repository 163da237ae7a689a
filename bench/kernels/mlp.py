#!/usr/bin/env python3
"""MLP 784-256-10 float32 (as imported from PyTorch: w in [out, in] layout) from two hand-scheduled
dense kernels (bench/kernels/dense.py), batch 64 and batch 1 (docs/cpu_kernels.md, workloads 1-2).

Per batch: each layer alone, then the whole MLP (both kernels back to back on preallocated
outputs) against ``np.maximum(x @ w1.T + b1, 0) @ w2.T + b2``.

    python bench/kernels/mlp.py [--batch 64 1]
"""
from __future__ import annotations

import argparse

import numpy as np

from _common import compile_kernel, median_time, report
from dense import dense_text, reference

# (MR, NR, parallel) per (batch, layer): chosen by measurement on the 2-core znver4 machine.
TILES = {
    (64, 1): (4, 4, True), (64, 2): (4, 5, True),
    (1, 1): (1, 4, True), (1, 2): (1, 10, False),  # 10 outputs: one task, no pool round trip
}


def run(batch: int) -> None:
    """Check and time one batch size."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784), dtype=np.float32)
    w1 = rng.standard_normal((256, 784), dtype=np.float32) * 0.05
    b1 = rng.standard_normal(256, dtype=np.float32)
    w2 = rng.standard_normal((10, 256), dtype=np.float32) * 0.05
    b2 = rng.standard_normal(10, dtype=np.float32)
    mr1, nr1, par1 = TILES[(batch, 1)]
    mr2, nr2, par2 = TILES[(batch, 2)]
    fc1 = compile_kernel(dense_text(batch, 256, 784, mr1, nr1, True, par1, "fc1"), "fc1")
    fc2 = compile_kernel(dense_text(batch, 10, 256, mr2, nr2, False, par2, "fc2"), "fc2")
    h = np.empty((batch, 256), np.float32)
    y = np.empty((batch, 10), np.float32)

    def ours() -> np.ndarray:
        fc1(x, w1, b1, h)
        fc2(h, w2, b2, y)
        return y

    def numpy_mlp() -> np.ndarray:
        return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2

    np.testing.assert_allclose(ours(), numpy_mlp(), rtol=1e-4, atol=1e-4)
    report(f"fc1 {batch}x256x784 +bias relu (MR={mr1}, NR={nr1})", median_time(lambda: fc1(x, w1, b1, h)),
           median_time(lambda: reference(x, w1, b1, True)), "GFLOP/s", 2.0 * batch * 256 * 784)
    report(f"fc2 {batch}x10x256 +bias (MR={mr2}, NR={nr2})", median_time(lambda: fc2(h, w2, b2, y)),
           median_time(lambda: reference(h, w2, b2, False)), "GFLOP/s", 2.0 * batch * 10 * 256)
    report(f"MLP 784-256-10 batch {batch}", median_time(ours), median_time(numpy_mlp))


def main() -> None:
    """Run the requested batch sizes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, nargs="+", default=[64, 1], choices=[1, 64])
    for batch in ap.parse_args().batch:
        run(batch)


if __name__ == "__main__":
    main()
