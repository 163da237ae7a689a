#!/usr/bin/env python3
"""Model benchmark: tvmlite's compiled code against numpy (and Apache TVM) on this machine.

A script, not a test. Every workload is first checked against numpy (assert_allclose), then
timed in the same run; the table reports medians and the ratio numpy / tvmlite (> 1 means tvmlite
is faster) next to the performance targets the project set for compiled code:

1. MLP 784-256-10 float32 (the MLP of TVM's IRModule tutorial, imported from PyTorch), batch 1
   and batch 64, compiled with ``tvmlite.compile`` (zero pipeline) and run by ``tvmlite.VirtualMachine``.
2. matmul 1024x1024x1024 float32 (``R.matmul``), GFLOP/s.
3. ``relu(x * 2 + 1)`` on 16M float32, GB/s (8 bytes per element: one read, one write).
4. compile time of the MLP, and parse/print throughput of a large module (bench_parse_print).
5. a conv2d + batch_norm + relu (+ residual add) block on 1x64x56x56, with and without
   SimplifyInference, and conv2d alone against numpy's im2col + matmul.
6. the model table (bench/models.py, run by bench/peers.py in one process per thread count, 2
   and 1 by default): MLP b1/b64, a small CNN, a resnet18-style net, nn.TransformerEncoderLayer
   1x128x256 (torch.export and ONNX) and the same layer in plain ops, each imported with constant
   weights, default pipeline, against PyTorch eager and ONNX Runtime (when installed), with the
   compile time (import + pipeline + compile, kernel cache off and warm), and with
   ``--tvm-python`` Apache TVM's compile time of the same ONNX model. Skipped without torch.

Apache TVM is timed where ``import tvm`` works; otherwise reference figures measured earlier on this machine are shown.

    python bench/bench_models.py [--quick] [--repeat 7] [--corpus DIR] [--threads 2,1] [--models-only]
                                 [--only NAME] [--tvm-python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_parse_print as bpp  # noqa: E402  (the sibling script: corpus loading, module building)

DEFAULT_CORPUS = bpp.DEFAULT_CORPUS
MLP_FILE = "seed004_mlp_torch.py"

# Apache TVM's (untuned) figures measured once on this machine, used when `tvm` is not importable.
TVM_REF_MATMUL_GFLOPS = 0.4  # 1024^3 float32 matmul
TVM_REF_MLP1_SECONDS = 400e-6  # 784-256-10 MLP, one batch-1 call

SLOW_CALL = 1.0  # seconds: a call slower than this is timed with fewer runs
PAUSE = 0.2  # seconds of idle before each measurement
# The model table (bench/peers.py): alternating rounds of tvmlite / torch / ORT, so a busy spell of
# the machine hits each; cold compiles per model, for tvmlite and for Apache TVM alike, the fastest
# reported (one compile per measurement let one busy moment of the machine decide it).
ROUNDS = 5
COMPILE_REPEATS = 3

# The PyTorch-imported MLP (tests/data/corpus/seed004_mlp_torch.py), used when the corpus folder is missing.
MLP_TEXT = '''\
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), p_fc1_weight: R.Tensor((256, 784), dtype="float32"), p_fc1_bias: R.Tensor((256,), dtype="float32"), p_fc2_weight: R.Tensor((10, 256), dtype="float32"), p_fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tensor((784, 256), dtype="float32") = R.permute_dims(p_fc1_weight, axes=None)
            lv1: R.Tensor((1, 256), dtype="float32") = R.matmul(x, lv, out_dtype="float32")
            lv2: R.Tensor((1, 256), dtype="float32") = R.add(lv1, p_fc1_bias)
            lv3: R.Tensor((1, 256), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((256, 10), dtype="float32") = R.permute_dims(p_fc2_weight, axes=None)
            lv5: R.Tensor((1, 10), dtype="float32") = R.matmul(lv3, lv4, out_dtype="float32")
            lv6: R.Tensor((1, 10), dtype="float32") = R.add(lv5, p_fc2_bias)
            gv: R.Tensor((1, 10), dtype="float32") = lv6
            R.output(gv)
        return gv
'''

MATMUL_TEXT = '''\
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(({n}, {n}), dtype="float32"), b: R.Tensor(({n}, {n}), dtype="float32")) -> R.Tensor(({n}, {n}), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor(({n}, {n}), dtype="float32") = R.matmul(a, b, out_dtype="float32")
            R.output(gv)
        return gv
'''

EWISE_TEXT = '''\
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({n},), dtype="float32")) -> R.Tensor(({n},), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor(({n},), dtype="float32") = R.multiply(x, R.const(2.0, "float32"))
            lv1: R.Tensor(({n},), dtype="float32") = R.add(lv, R.const(1.0, "float32"))
            gv: R.Tensor(({n},), dtype="float32") = R.nn.relu(lv1)
            R.output(gv)
        return gv
'''

# The residual block with its batch-norm parameters bound as constants (as relay.build(params=...)).
# training=False: inference batch norm (moving statistics) whether or not SimplifyInference runs.
CONV_BN_TEXT = '''\
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), w: R.Tensor((64, 64, 3, 3), "float32")) -> R.Tensor((1, 64, 56, 56), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w, padding=[1, 1])
            bn = R.nn.batch_norm(conv, gamma, beta, mean, var, axis=1, epsilon=1e-5, training=False)
            relu = R.nn.relu(bn[0])
            out = R.add(relu, x)
            R.output(out)
        return out
'''

CONV_TEXT = '''\
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), w: R.Tensor((64, 64, 3, 3), "float32")) -> R.Tensor((1, 64, 56, 56), "float32"):
        with R.dataflow():
            out = R.nn.conv2d(x, w, padding=[1, 1])
            R.output(out)
        return out
'''


# ------------------------------------------------------------------------------------ timing
@dataclass
class Timing:
    """Median seconds per call, and how it was measured."""

    seconds: float
    runs: int
    number: int  # calls per run
    first: float  # seconds of the first (warm-up) call


def measure(fn: Callable[[], Any], repeat: int, min_run: float = 0.02, slow_budget: float = 10.0) -> Timing:
    """Median seconds per call of fn() over `repeat` runs of `number` calls each (>= min_run s);
    a call slower than SLOW_CALL gets at most slow_budget seconds of runs (the warm-up included).
    A short pause first lets the threads of whatever ran before (numpy's BLAS, tvmlite's pool)
    stop spinning, so neither side is timed against the other's idle threads."""
    time.sleep(PAUSE)
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    if first > SLOW_CALL:  # naive kernels: keep the warm-up as a sample, add a few more
        runs = max(1, min(repeat, int(slow_budget / first)))
        samples = [first]
        for _ in range(runs - 1):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
        return Timing(statistics.median(samples), runs, 1, first)
    # Calls per run from a second call: the first after the pause also wakes the thread pool (and a
    # parked core), which on a 10 us model made runs of a millisecond, timed mostly waking up.
    t0 = time.perf_counter()
    fn()
    second = time.perf_counter() - t0
    number = max(1, int(min_run / max(min(first, second), 1e-9)))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return Timing(statistics.median(samples), repeat, number, first)


def fmt_time(seconds: float) -> str:
    """`seconds` with a readable unit."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if float(f"{seconds / scale:.3g}") >= 1:  # on the rounded value: 0.9996 s is "1 s", not "1e+03 ms"
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


# ------------------------------------------------------------------------------------ table
@dataclass
class Row:
    """One line of the result table."""

    workload: str
    tvmlite: str
    numpy: str = "-"
    ratio: str = "-"
    tvm: str = "-"
    target: str = "-"
    met: str = "-"


class Report:
    """Collects rows and notes, and prints them as a Markdown table."""

    def __init__(self, repeat: int) -> None:
        self.rows: list[Row] = []
        self.notes: list[str] = []
        self.repeat = repeat

    def note_slow(self, what: str, t: Timing) -> None:
        """Record that `what` was timed with fewer runs than asked."""
        if t.runs < self.repeat:
            self.notes.append(f"{what}: {fmt_time(t.first)} per call, so the median of {t.runs} run(s) "
                              f"instead of {self.repeat}")

    def print(self) -> None:
        """The table, then the notes."""
        head = Row("workload", "tvmlite", "numpy", "numpy/tvmlite", "Apache TVM (TVM/tvmlite)", "target", "met")
        rows = [head] + self.rows
        cols = list(vars(head))
        widths = {c: max(len(getattr(r, c)) for r in rows) for c in cols}

        def line(r: Row) -> str:
            return "| " + " | ".join(getattr(r, c).ljust(widths[c]) for c in cols) + " |"

        print(line(head))
        print("|" + "|".join("-" * (widths[c] + 2) for c in cols) + "|")
        for r in self.rows:
            print(line(r))
        for n in self.notes:
            print(f"- {n}")


def ratio_cell(numpy_s: float, tvmlite_s: float) -> str:
    """numpy / tvmlite time (> 1: tvmlite faster)."""
    return f"{numpy_s / tvmlite_s:.3g}x"


def met(ok: bool) -> str:
    """yes/no."""
    return "yes" if ok else "no"


# ------------------------------------------------------------------------------------ tvmlite / TVM
def compile_vm(text: str, relax_pipeline: Any = "zero", extra_vars: dict | None = None) -> Callable[..., Any]:
    """The compiled `main` of a Relax module given as text, as a callable on numpy arrays."""
    import tvmlite
    from tvmlite.script import from_source

    mod = from_source(text, extra_vars=extra_vars) if extra_vars else from_source(text)
    ex = tvmlite.compile(mod, target="llvm", relax_pipeline=relax_pipeline)
    return tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"]


def run_numpy(fn: Callable[..., Any], *args: np.ndarray) -> np.ndarray:
    """fn(*args) as a numpy array (a VM Tensor is converted)."""
    out = fn(*args)
    return out.numpy() if hasattr(out, "numpy") else np.asarray(out)


def tvm_main(text: str) -> Callable[..., Any] | None:
    """Apache TVM's compiled `main` of the same text, or None when TVM is not importable."""
    try:
        import tvm
        from tvm import relax
    except Exception:
        return None
    mod = tvm.script.from_source(text)
    build = getattr(tvm, "compile", None) or relax.build
    vm = relax.VirtualMachine(build(mod, target="llvm"), tvm.cpu())
    to_tvm = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    return lambda *args: vm["main"](*[to_tvm(a) for a in args])


def tvm_cell(text: str, args: tuple, repeat: int, tvmlite_s: float, ref_s: float | None,
             ref_text: str, report: Report) -> str:
    """Apache TVM's time measured here (with TVM/tvmlite), else a reference figure measured earlier here."""
    try:
        f = tvm_main(text)
    except Exception as exc:  # TVM importable but this module does not build
        return f"error: {type(exc).__name__}"
    if f is None:
        if ref_s is None:
            return "-"
        return f"{ref_text} (measured earlier), {ref_s / tvmlite_s:.2f}x"
    t = measure(lambda: f(*args), repeat)
    report.note_slow("Apache TVM", t)
    return f"{fmt_time(t.seconds)}, {t.seconds / tvmlite_s:.2f}x"


# ------------------------------------------------------------------------------------ workloads
def mlp_text(corpus: Path) -> tuple[str, str]:
    """The PyTorch-imported MLP's text and where it came from."""
    path = corpus / MLP_FILE
    if path.is_file():
        return path.read_text(), str(path)
    return MLP_TEXT, "the embedded copy (corpus not found)"


def mlp_numpy(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """The reference MLP."""
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


def bench_mlp(report: Report, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """MLP 784-256-10 at batch 1 and 64, and its compile time."""
    text, source = mlp_text(args.corpus)
    print(f"MLP from {source}")
    params = [((rng.random(s, dtype=np.float32) - 0.5) / 10) for s in [(256, 784), (256,), (10, 256), (10,)]]
    for batch, target, goal in [(1, "no slower than numpy", 1.0), (64, "within 2x of numpy", 0.5)]:
        name = f"MLP 784-256-10, batch {batch}"
        try:
            # The batch dimension is the leading 1 of the (1, 784), (1, 256) and (1, 10) tensors.
            batch_text = text.replace("R.Tensor((1, ", f"R.Tensor(({batch}, ")
            f = compile_vm(batch_text, "zero")
            x = rng.random((batch, 784), dtype=np.float32)
            np.testing.assert_allclose(run_numpy(f, x, *params), mlp_numpy(x, *params), rtol=1e-4, atol=1e-5)
            t = measure(lambda: f(x, *params), args.repeat)
            report.note_slow(name, t)
            n = measure(lambda: mlp_numpy(x, *params), args.repeat)
            tvm = tvm_cell(batch_text, (x, *params), args.repeat, t.seconds,
                           TVM_REF_MLP1_SECONDS if batch == 1 else None, "~400 us", report)
            report.rows.append(Row(name, fmt_time(t.seconds), fmt_time(n.seconds), ratio_cell(n.seconds, t.seconds),
                                   tvm, target, met(n.seconds / t.seconds >= goal)))
        except Exception as exc:
            fail(report, name, exc)

    name = "compile time of the MLP (tvmlite.compile)"
    try:
        import tvmlite
        from tvmlite.script import from_source

        mod = from_source(text)
        runs = []
        for _ in range(args.compile_repeat):
            time.sleep(PAUSE)  # as measure() does: let the thread pool of the previous runs go to sleep
            t0 = time.perf_counter()
            tvmlite.compile(mod, target="llvm", relax_pipeline="zero")
            runs.append(time.perf_counter() - t0)
        s = statistics.median(runs)
        report.rows.append(Row(name, fmt_time(s), target="< 100 ms", met=met(s < 0.1)))
        report.notes.append(f"compile time: median of {args.compile_repeat}, parsed module in, "
                            f"zero pipeline + lowering + LLVM; runs {', '.join(fmt_time(r) for r in runs)}")
    except Exception as exc:
        fail(report, name, exc)


def bench_matmul(report: Report, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Square float32 matmul, GFLOP/s."""
    n = args.matmul
    name = f"matmul {n}x{n}x{n} float32"
    try:
        text = MATMUL_TEXT.format(n=n)
        f = compile_vm(text, "zero")
        a = rng.random((n, n), dtype=np.float32)
        b = rng.random((n, n), dtype=np.float32)
        np.testing.assert_allclose(run_numpy(f, a, b), a @ b, rtol=1e-4, atol=1e-3)
        t = measure(lambda: f(a, b), args.repeat)
        report.note_slow(name, t)
        nt = measure(lambda: a @ b, args.repeat)
        flops = 2.0 * n ** 3
        gf = lambda s: f"{flops / s / 1e9:.3g} GFLOP/s ({fmt_time(s)})"  # noqa: E731
        ref = TVM_REF_MATMUL_GFLOPS if n == 1024 else None  # the reference is for 1024^3 only
        tvm = tvm_cell(text, (a, b), args.repeat, t.seconds, flops / (ref * 1e9) if ref else None,
                       f"{TVM_REF_MATMUL_GFLOPS} GFLOP/s", report)
        report.rows.append(Row(name, gf(t.seconds), gf(nt.seconds), ratio_cell(nt.seconds, t.seconds), tvm,
                               ">= 50% of numpy GFLOP/s", met(nt.seconds / t.seconds >= 0.5)))
    except Exception as exc:
        fail(report, name, exc)


def bench_ewise(report: Report, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """relu(x * 2 + 1) over a large float32 vector, GB/s."""
    n = args.ewise
    name = f"relu(x * 2 + 1), {n / 2 ** 20:g}M float32"
    try:
        f = compile_vm(EWISE_TEXT.format(n=n), "zero")
        x = rng.standard_normal(n, dtype=np.float32)
        ref = lambda: np.maximum(x * 2 + 1, 0)  # noqa: E731
        np.testing.assert_allclose(run_numpy(f, x), ref(), rtol=1e-6, atol=1e-6)
        t = measure(lambda: f(x), args.repeat)
        nt = measure(ref, args.repeat)
        gbs = lambda s: f"{8 * n / s / 1e9:.3g} GB/s ({fmt_time(s)})"  # noqa: E731
        report.rows.append(Row(name, gbs(t.seconds), gbs(nt.seconds), ratio_cell(nt.seconds, t.seconds),
                               target=">= 2x faster than numpy", met=met(nt.seconds / t.seconds >= 2.0)))
    except Exception as exc:
        fail(report, name, exc)


def bench_parse_print(report: Report, args: argparse.Namespace) -> None:
    """Parse and print throughput of a large module built from the corpus (bench_parse_print)."""
    name = "parse/print"
    try:
        from tvmlite.script import from_source

        bodies = bpp.load_bodies(args.corpus) or [bpp.module_body(bpp.BUILTIN_SAMPLE)]
        text = bpp.build_text(bodies, args.parse_kb)
        nbytes = len(text.encode())
        t_parse, mod = bpp.timed(lambda: from_source(text), args.parse_repeat)
        t_print, out = bpp.timed(mod.script, args.parse_repeat)
        kb = nbytes / 1024
        parse_kbs, print_mbs = kb / t_parse, len(out.encode()) / 2 ** 20 / t_print
        tvm_ref = bpp.TVM_REFERENCE_KBPS
        report.rows.append(Row(f"parse a {kb:.0f} KB module (from_source)",
                               f"{parse_kbs:.0f} KB/s ({fmt_time(t_parse)})",
                               tvm=f"~{tvm_ref:.0f} KB/s (TVM parser), {parse_kbs / tvm_ref:.1f}x",
                               target=">= 150 KB/s", met=met(parse_kbs >= 150)))
        report.rows.append(Row("print it (mod.script())", f"{print_mbs:.2f} MB/s ({fmt_time(t_print)})",
                               target=">= 1 MB/s", met=met(print_mbs >= 1)))
    except Exception as exc:
        fail(report, name, exc)


def conv_numpy(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NCHW x OIHW 3x3 convolution, stride 1, padding 1: im2col + one matmul."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(2, 3))  # n c h w kh kw
    cols = windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, h * wd)  # copies: im2col
    return (w.reshape(o, c * kh * kw) @ cols).reshape(n, o, h, wd)


def bench_conv(report: Report, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """The conv + batch_norm + relu + add block with and without SimplifyInference; conv alone."""
    from tvmlite import passes as P

    x = rng.standard_normal((1, 64, 56, 56), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) / 24  # keeps outputs O(1)
    bn = {k: rng.standard_normal(64, dtype=np.float32) for k in ("gamma", "beta", "mean")}
    bn["var"] = rng.random(64, dtype=np.float32) + 0.5
    scale = bn["gamma"] / np.sqrt(bn["var"] + np.float32(1e-5))
    shift = bn["beta"] - bn["mean"] * scale
    c4 = lambda v: v.reshape(1, 64, 1, 1)  # noqa: E731

    def block_numpy() -> np.ndarray:
        return np.maximum(conv_numpy(x, w) * c4(scale) + c4(shift), 0) + x

    default = P.get_pipeline("default")
    without = P.Sequential([p for p in default.passes if p.info.name != "SimplifyInference"],
                           name="default_without_SimplifyInference")
    times: dict[str, float] = {}
    nt_block = None
    for label, pipeline in [("default pipeline (SimplifyInference)", default),
                            ("default pipeline without SimplifyInference", without)]:
        name = f"conv+bn+relu+add 1x64x56x56, {label}"
        try:
            f = compile_vm(CONV_BN_TEXT, pipeline, extra_vars=bn)
            np.testing.assert_allclose(run_numpy(f, x, w), block_numpy(), rtol=1e-4, atol=1e-4)
            t = measure(lambda: f(x, w), args.repeat)
            report.note_slow(name, t)
            nt_block = nt_block or measure(block_numpy, args.repeat)
            times[label] = t.seconds
            report.rows.append(Row(name, fmt_time(t.seconds), fmt_time(nt_block.seconds),
                                   ratio_cell(nt_block.seconds, t.seconds)))
        except Exception as exc:
            fail(report, name, exc)
    if len(times) == 2:
        with_s, without_s = times.values()
        report.rows.append(Row("BN folding: time without / with SimplifyInference", f"{without_s / with_s:.2f}x",
                               target="5-15% faster", met=met(without_s / with_s >= 1.05)))

    name = "conv2d 1x64x56x56, 64x3x3, padding 1"
    try:
        f = compile_vm(CONV_TEXT, "zero")
        np.testing.assert_allclose(run_numpy(f, x, w), conv_numpy(x, w), rtol=1e-4, atol=1e-4)
        t = measure(lambda: f(x, w), args.repeat)
        report.note_slow(name, t)
        nt = measure(lambda: conv_numpy(x, w), args.repeat)
        flops = 2.0 * 64 * 64 * 9 * 56 * 56
        gf = lambda s: f"{fmt_time(s)} ({flops / s / 1e9:.3g} GFLOP/s)"  # noqa: E731
        report.rows.append(Row(name, gf(t.seconds), gf(nt.seconds) + " im2col", ratio_cell(nt.seconds, t.seconds)))
    except Exception as exc:
        fail(report, name, exc)


def model_table(args: argparse.Namespace) -> list[str]:
    """The models of bench/models.py against PyTorch eager and ONNX Runtime at each thread count, each
    count in its own process (bench/peers.py: tvmlite's pool takes its size once); Markdown lines."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return ["torch is not installed: the model table is skipped (pip install 'tvmlite[torch]')"]
    try:
        import onnxruntime
        ort_note = f"ONNX Runtime {onnxruntime.__version__} (CPU provider, intra_op_num_threads = threads)"
    except ImportError:
        ort_note = "onnxruntime is not installed: the ORT columns are empty (pip install onnxruntime)"
    rows: list[dict[str, Any]] = []
    for threads in args.threads:
        cmd = [sys.executable, str(Path(__file__).resolve().parent / "peers.py"), "--threads", str(threads),
               "--repeat", str(args.repeat)] + (["--quick"] if args.quick else [])
        cmd += (["--only", args.only] if args.only else []) + (["--tvm-python", args.tvm_python] if args.tvm_python else [])
        env = dict(os.environ, TVMLITE_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        print(f"models at {threads} thread(s) ...", flush=True)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        got = [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]
        if r.returncode != 0 or any("error" in g for g in got):
            sys.stderr.write(r.stderr)
        if r.returncode != 0 and not got:
            got = [{"model": "(all)", "threads": threads, "error": f"peers.py exited {r.returncode}"}]
        rows += got
    return format_model_rows(rows, ort_note, bool(args.tvm_python))


def format_model_rows(rows: list[dict[str, Any]], ort_note: str, with_tvm: bool) -> list[str]:
    """The model rows as a Markdown table and its notes."""
    def t(row: dict[str, Any], key: str) -> str:
        return fmt_time(row[key]) if isinstance(row.get(key), float) else str(row.get(key, "-"))

    def ratio(row: dict[str, Any], key: str) -> str:
        return f"{row['tvmlite'] / row[key]:.2f}" if isinstance(row.get(key), float) and "tvmlite" in row else "-"

    head = ["model", "threads", "tvmlite", "PyTorch eager", "ORT", "tvmlite/torch", "tvmlite/ORT",
            "compile cold", "compile warm"] + (["TVM compile"] if with_tvm else []) + ["peak memory (TVM plan)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['model']} | {row['threads']} | ERROR {row['error']} |")
            continue
        cells = [row["model"], str(row["threads"]), t(row, "tvmlite"), t(row, "torch"), t(row, "ort"),
                 ratio(row, "torch"), ratio(row, "ort"), t(row, "compile_cold"), t(row, "compile_warm")]
        memory = f"{fmt_bytes(row.get('peak_bytes', '-'))} ({fmt_bytes(row.get('tvm_plan_bytes', '-'))})"
        lines.append("| " + " | ".join(cells + ([t(row, "tvm_compile")] if with_tvm else []) + [memory]) + " |")
    lines += [f"- times: medians of {ROUNDS} alternating rounds, each the median of --repeat runs; ratios are "
              "time / time (< 1: tvmlite faster); every output checked against PyTorch (rtol = atol = 1e-4) first",
              "- compile = import (from_exported_program or from_onnx) + default pipeline + tvmlite.compile; "
              f"cold: TVMLITE_CACHE_DIR=off, the fastest of {COMPILE_REPEATS}; warm: the kernel cache filled by a "
              "previous compile",
              f"- {ort_note}; PyTorch: torch.set_num_threads(threads); tvmlite: TVMLITE_NUM_THREADS=threads"]
    lines.insert(len(lines) - 1, "- peak memory: the most bytes of storage alive at once in one call, measured in the VM running "
                 "the lowered form (StaticPlanBlockMemory's shared storages, KillAfterLastUse's kills; the "
                 "output's storage included); in parentheses the total of the storages Apache TVM's "
                 "StaticPlanBlockMemory + LowerAllocTensor give the same graph-level module (with --tvm-python)")
    if with_tvm:
        lines.append("- TVM compile: Apache TVM's relax.frontend.onnx.from_onnx + tvm.compile of the model's ONNX "
                     f"export, the fastest of {COMPILE_REPEATS} in a subprocess (the torch.export rows too: that "
                     "Python has no torch)")
    return lines


# ------------------------------------------------------------------------------------ memory
# Run by a Python with Apache TVM: the module text (tvmlite's graph-level module, as TVM 0.27
# spells it) on stdin, TVM's VM lowering up to LowerAllocTensor, the bytes of every storage out.
TVM_PLAN_SCRIPT = r'''
import re, sys
import tvm
from tvm import relax
text = sys.stdin.read()
for a, b in (("T.block(", "T.sblock("), ("T.block_attr(", "T.sblock_attr("), ("out_sinfo=", "out_ty="),
             ("sinfo_args=", "ty_args="), ("R.Object", "R.Any")):
    text = text.replace(a, b)
mod = tvm.script.from_source(re.sub(r"^# from .*$", "", text, flags=re.M), check_well_formed=False)
T = relax.transform
try:
    mod = T.RewriteDataflowReshape()(mod)
except tvm.error.InternalError:
    # TVM's reshape-pattern check wants each PrimFunc's body to be its root block, which TVM's
    # parser does not make of every printed kernel: plan without turning reshape kernels into views.
    pass
for p in (T.ToNonDataflow(), T.RemovePurityChecking(), T.CallTIRRewrite(), T.StaticPlanBlockMemory(), T.LowerAllocTensor()):
    mod = p(mod)
total = []
def visit(e):
    if isinstance(e, relax.Call) and isinstance(e.op, tvm.ir.Op) and e.op.name == "relax.memory.alloc_storage":
        total.append(int(e.args[0].values[0]))
for gv, f in mod.functions_items():
    if isinstance(f, relax.Function):
        relax.analysis.post_order_visit(f.body, visit)
print(sum(total))
'''


def storage_bytes(mod: Any) -> int:
    """The bytes of every storage the lowered module allocates (static sizes; ``R.vm.alloc_storage``
    counts bytes of uint8, as VMBuiltinLower writes it)."""
    from tvmlite.ir import relax as rx
    from tvmlite.ir.expr_functor import post_order_visit

    sizes: list[int] = []

    def visit(e: Any) -> None:
        if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name in ("relax.vm.alloc_storage",
                                                                               "relax.memory.alloc_storage"):
            sizes.append(int(np.prod([int(v.value) for v in e.args[0].values])))

    for _, f in mod.functions_items():
        if isinstance(f, rx.Function):
            post_order_visit(f.body, visit)
    return sum(sizes)


def unplanned_bytes(mod: Any) -> int:
    """The bytes of every call_tir output of the graph-level module: what a VM without the memory
    plan holds by the end of a call."""
    from tvmlite.ir import relax as rx
    from tvmlite.ir.dtype import to_numpy_dtype
    from tvmlite.ir.expr_functor import post_order_visit

    sizes: list[int] = []

    def visit(e: Any) -> None:
        if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name.startswith("relax.call_tir"):
            out = e.sinfo_args[0]
            for o in (out.fields if isinstance(out, rx.TupleStructInfo) else (out,)):
                sizes.append(int(np.prod([int(d.value) for d in o.shape])) * to_numpy_dtype(o.dtype).itemsize)

    for _, f in mod.functions_items():
        if isinstance(f, rx.Function):
            post_order_visit(f.body, visit)
    return sum(sizes)


def constants_as_params(mod: Any) -> Any:
    """``mod`` with each constant of its Relax functions made a parameter (the memory plan does not
    depend on their values, and the text then needs no metadata section)."""
    from tvmlite.ir import relax as rx
    from tvmlite.ir.expr_functor import ExprMutator

    class Lift(ExprMutator):
        def __init__(self) -> None:
            super().__init__()
            self.params: list[Any] = []

        def visit_constant_(self, const: Any) -> Any:
            var = rx.Var(f"c{len(self.params)}", const.struct_info)
            self.params.append(var)
            return var

    out = mod.copy()
    for gv, f in mod.functions_items():
        if isinstance(f, rx.Function):
            lift = Lift()
            body = lift.visit_expr(f.body)
            if lift.params:
                out.update_func(gv, rx.Function((*f.params, *lift.params), body, f.ret_struct_info, f.is_pure,
                                                f.attrs.without("num_input") if "num_input" in f.attrs else f.attrs))
    return out


def tvm_plan_bytes(text: str, tvm_python: str | None) -> int | str:
    """The bytes of the storages Apache TVM's StaticPlanBlockMemory + LowerAllocTensor give the same
    graph-level module (run by ``tvm_python``); "-" without one."""
    if not tvm_python:
        return "-"
    env = dict(os.environ, PYTHONPATH=os.environ.get("TVM_PYTHONPATH", ""))
    r = subprocess.run([tvm_python, "-c", TVM_PLAN_SCRIPT], input=text, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return "error: " + (r.stderr.strip().splitlines() or ["?"])[-1][:60]
    return int(r.stdout.split()[-1])


def memory_figures(ex: Any, args: tuple, tvm_python: str | None = None) -> dict[str, Any]:
    """Bytes of one call of ``main``: the peak of live storages measured in the VM (the lowered form,
    kills included), the total of its storages, the graph-level outputs without a plan, TVM's plan."""
    import tvmlite

    vm = tvmlite.VirtualMachine(ex, tvmlite.cpu(), track_memory=True)
    return {"peak_bytes": vm.peak_bytes("main", *args), "storage_bytes": storage_bytes(ex.vm_mod),
            "unplanned_bytes": unplanned_bytes(ex.mod),
            "tvm_plan_bytes": tvm_plan_bytes(constants_as_params(ex.mod).script(), tvm_python)}


def fmt_bytes(n: Any) -> str:
    """Bytes as KB / MB."""
    if not isinstance(n, int):
        return str(n)
    return f"{n / 2 ** 20:.2f} MB" if n >= 2 ** 20 else f"{n / 2 ** 10:.1f} KB"


def fail(report: Report, name: str, exc: BaseException) -> None:
    """Print the error of a failing workload and record it in the table; the script continues."""
    print(f"error in {name}:", file=sys.stderr)
    traceback.print_exception(type(exc), exc, exc.__traceback__, limit=4, file=sys.stderr)
    msg = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")  # assert_allclose starts with \n
    report.rows.append(Row(name, f"ERROR {type(exc).__name__}: {msg[:60]}", met="no"))


# ------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    """Run every workload and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer runs (about 20 s)")
    ap.add_argument("--repeat", type=int, default=None, help="runs per measurement (default 7, --quick 3)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"corpus folder (default {DEFAULT_CORPUS})")
    ap.add_argument("--threads", type=lambda v: [int(n) for n in v.split(",")], default=[2, 1],
                    help="thread counts of the model table, comma-separated (default 2,1)")
    ap.add_argument("--models-only", action="store_true", help="only the model table")
    ap.add_argument("--only", default=None, help="only the models whose name contains this")
    ap.add_argument("--tvm-python", default=None,
                    help="a Python with Apache TVM and onnx (its path from TVM_PYTHONPATH): times TVM's compile")
    args = ap.parse_args(argv)
    args.repeat = args.repeat or (3 if args.quick else 7)
    args.matmul = 256 if args.quick else 1024
    args.ewise = (4 if args.quick else 16) * 2 ** 20
    args.compile_repeat = 3 if args.quick else 5
    args.parse_kb = 64 if args.quick else 256
    args.parse_repeat = 3

    bpp.import_tvmlite()  # tvmlite from this checkout if it is not installed
    import llvmlite.binding as llvm

    threads = os.environ.get("TVMLITE_NUM_THREADS", f"{os.cpu_count()} (CPU count)")
    print(f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs "
          f"({llvm.get_host_cpu_name()}), tvmlite threads {threads}")
    print(f"{'--quick: reduced sizes; ' if args.quick else ''}median of {args.repeat} runs, each of enough "
          f"calls to last >= 20 ms; ratio = numpy time / tvmlite time (> 1: tvmlite faster)")
    try:
        import tvm
        print(f"Apache TVM {getattr(tvm, '__version__', '?')}: timed here, cells show time and TVM/tvmlite")
    except Exception:
        print("Apache TVM is not importable: its cells show figures measured earlier on this machine")

    report = Report(args.repeat)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for step in (lambda: bench_mlp(report, args, rng), lambda: bench_matmul(report, args, rng),
                 lambda: bench_ewise(report, args, rng), lambda: bench_parse_print(report, args),
                 lambda: bench_conv(report, args, rng)):
        if not args.models_only:
            step()
    models = model_table(args)
    print()
    if not args.models_only:
        report.print()
        print()
    print("\n".join(models))
    print(f"total {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
