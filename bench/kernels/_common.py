"""Shared helpers of the hand-scheduled kernel scripts: compile one TVMScript PrimFunc, check it
against numpy, and time both in the same run (medians, as bench_models.py)."""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import tvmlite
from tvmlite.script import from_source


def compile_kernel(text: str, name: str, show: bool = False) -> Callable[..., Any]:
    """The compiled PrimFunc ``name`` of a TVMScript text (one ``@T.prim_func`` or a module); with
    ``show``, print the scheduled and the lowered TIR first (the scripts' ``--show``)."""
    if show:
        print(text)
        print(lowered_tir(text))
    return tvmlite.compile(from_source(text))[name]


def lowered_tir(text: str) -> str:
    """The lowered TIR (what LLVM code generation receives) of a TVMScript text."""
    return tvmlite.compile(from_source(text)).get_source("tir")


def median_time(fn: Callable[[], Any], repeat: int = 25, min_time: float = 0.2) -> float:
    """Median seconds of one call of ``fn`` over ``repeat`` batches of calls (each batch at least
    ``min_time / repeat`` long, so microsecond kernels are timed over many calls)."""
    fn()  # warm up: first-touch page faults, pool start
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(min_time / repeat / once))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def report(label: str, ours: float, numpy_s: float, unit: str = "", amount: float = 0.0) -> None:
    """One result line: times, optional throughput, and numpy/ours (> 1: tvmlite is faster)."""
    rate = ""
    if amount:
        rate = f"  {amount / ours / 1e9:7.1f} vs {amount / numpy_s / 1e9:7.1f} {unit}"
    print(f"{label:<44} tvmlite {ours * 1e6:9.1f} us  numpy {numpy_s * 1e6:9.1f} us{rate}"
          f"  ratio {numpy_s / ours:5.2f}")
