#!/usr/bin/env python3
"""Profile tvmlite's compile (import + default pipeline + ``tvmlite.compile``, kernel cache off) of the
models of bench/models.py with cProfile, each after a warm-up compile so process start-up is not
counted, as bench/peers.py times it.

    python bench/profile_compile.py [--only NAME] [--top 40] [--sort cumulative,tottime] [--no-profile]

Without cProfile (``--no-profile``) it prints each model's cold compile seconds, wall and CPU (all
threads), best of --repeat: on a busy machine the CPU seconds compare two versions better."""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import MODELS  # noqa: E402
from peers import onnx_bytes, tvmlite_main, warm_up  # noqa: E402
from models import model_input  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Profile or time each selected model's compile and print the statistics."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="only models whose name contains this")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--sort", default="cumulative,tottime")
    ap.add_argument("--no-profile", action="store_true", help="only time the compiles")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    os.environ.setdefault("TVMLITE_NUM_THREADS", "2")
    import torch

    warm_up()
    for spec in MODELS:
        if args.only and args.only not in spec.name:
            continue
        model = spec.build(torch)
        xt = torch.from_numpy(model_input(spec))
        model_bytes = onnx_bytes(torch, model, xt) if spec.frontend == "onnx" else None
        exported = None
        if spec.frontend == "torch":
            with torch.no_grad():
                exported = torch.export.export(model, (xt,))
        os.environ["TVMLITE_CACHE_DIR"] = "off"
        if args.no_profile:
            times, cpu = [], []
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                tvmlite_main(spec, exported, model_bytes)
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            print(f"{spec.name}: {min(times):.3f} s, CPU {min(cpu):.3f} s (all: "
                  f"{', '.join(f'{t:.3f}' for t in times)})", flush=True)
            continue
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        tvmlite_main(spec, exported, model_bytes)
        prof.disable()
        print(f"==== {spec.name}: {time.perf_counter() - t0:.3f} s under cProfile", flush=True)
        stats = pstats.Stats(prof)
        for key in args.sort.split(","):
            stats.sort_stats(key).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
