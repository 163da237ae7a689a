#!/usr/bin/env python3
"""Per-kernel profile of a model of bench/models.py: the whole VM call against ONNX Runtime and
PyTorch (alternating rounds, medians; wall and CPU time), then each compiled kernel timed on its
own with random inputs (warm caches), and with ``--cold`` once more after a 64 MB write between
calls (as a model run sees them: weights and activations out of the caches).

    TVMLITE_NUM_THREADS is set from --threads.
    python bench/profile_kernels.py resnet18 --threads 1 [--rounds 3] [--cold] [--ort-path DIR]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))


def timed(fn: Callable[[], Any], number: int, repeat: int = 7) -> tuple[float, float]:
    """Median (wall, CPU) seconds of one call over ``repeat`` batches of ``number`` calls."""
    runs = []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(number):
            fn()
        runs.append(((time.perf_counter() - t0) / number, (time.process_time() - c0) / number))
    runs.sort()
    return runs[repeat // 2]


def kernel_arrays(ex: Any, name: str) -> list[Any]:
    """Random arrays of a kernel's parameter shapes (zeros for integer buffers)."""
    import numpy as np

    func = ex.lowered[name]
    arrays = []
    for param in func.params:
        buf = func.buffer_map[param]
        shape = [int(getattr(s, "value", s)) for s in buf.shape]
        arrays.append(np.random.default_rng(1).standard_normal(shape).astype(buf.dtype)
                      if buf.dtype.startswith("float") else np.zeros(shape, buf.dtype))
    return arrays


def main() -> None:
    """Print the model rows, then the kernels, slowest first (microseconds)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("model", help="a part of a bench/models.py row name (e.g. resnet18, 'small CNN')")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--ort-path", default="")
    args = ap.parse_args()
    os.environ["TVMLITE_NUM_THREADS"] = str(args.threads)
    if args.ort_path:
        sys.path.append(args.ort_path)
    import numpy as np
    import torch

    import models
    import peers
    import tvmlite
    from tvmlite import passes as P
    from tvmlite.frontend import from_exported_program

    torch.set_num_threads(args.threads)
    spec = next(s for s in models.MODELS if args.model in s.name)
    model, x = spec.build(torch), models.model_input(spec)
    tx = torch.from_numpy(x)
    with torch.no_grad():
        want = model(tx).numpy()
        exported = torch.export.export(model, (tx,))
    ex = tvmlite.compile(P.get_pipeline("default")(from_exported_program(exported, unwrap_unit_return_tuple=True)))
    f = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"]
    np.testing.assert_allclose(f(x).numpy(), want, rtol=1e-4, atol=1e-4)

    def run_torch() -> None:
        with torch.no_grad():
            model(tx)

    runs: dict[str, Callable[[], Any]] = {"tvmlite": lambda: f(x), "PyTorch": run_torch}
    try:
        ort = peers.ort_session(peers.onnx_bytes(torch, model, tx), args.threads)
        if ort is not None:
            runs["ONNX Runtime"] = lambda: ort(x)
    except ImportError:
        pass
    number = max(3, int(0.05 / max(timed(runs["tvmlite"], 1, 1)[0], 1e-6)))
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
    for _ in range(args.rounds):  # alternating, so each side sees the same machine load
        for name, fn in runs.items():
            time.sleep(0.2)
            results[name].append(timed(fn, number))
    print(f"{spec.name}, threads={args.threads}")
    for name, ts in results.items():
        print(f"  {name:14s} {statistics.median(w for w, _ in ts) * 1e6:10.1f} us wall"
              f"  {statistics.median(c for _, c in ts) * 1e6:10.1f} us CPU")
    modes = [("warm", None)] + ([("cold", np.ones(16 << 20, np.float32))] if args.cold else [])
    for label, flush in modes:
        rows = []
        for name in ex.kernel_names():
            arrays, kernel = kernel_arrays(ex, name), ex[name]
            if flush is None:
                calls = max(3, min(300, int(0.02 / max(timed(lambda: kernel(*arrays), 1, 1)[0], 1e-6))))
                wall, cpu = timed(lambda: kernel(*arrays), calls)
            else:
                samples = []
                for _ in range(9):
                    flush += 1.0  # evicts the kernel's operands
                    c0, t0 = time.process_time(), time.perf_counter()
                    kernel(*arrays)
                    samples.append((time.perf_counter() - t0, time.process_time() - c0))
                wall, cpu = sorted(samples)[4]
            rows.append((wall * 1e6, cpu * 1e6, name))
        print(f"-- kernels ({label}), sum {sum(r[0] for r in rows):.1f} us wall, {sum(r[1] for r in rows):.1f} us CPU")
        for wall, cpu, name in sorted(rows, reverse=True):
            print(f"  {wall:9.1f} us wall {cpu:9.1f} us CPU  {name}")


if __name__ == "__main__":
    main()
