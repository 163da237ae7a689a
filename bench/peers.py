#!/usr/bin/env python3
"""One thread count of the model table of bench/bench_models.py, run in its own process (tvmlite's
thread pool takes its size once, from ``TVMLITE_NUM_THREADS``): for each model, tvmlite (import,
default pipeline, ``tvmlite.compile``, cold with the kernel cache off and warm), PyTorch eager and
ONNX Runtime (when installed), each checked against PyTorch, then timed in alternating rounds.
Prints one JSON object per model on stdout.

    TVMLITE_NUM_THREADS=2 python bench/peers.py --threads 2 [--quick] [--repeat 7] [--tvm-python PATH]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_parse_print as bpp  # noqa: E402
from bench_models import COMPILE_REPEATS, ROUNDS, measure, memory_figures  # noqa: E402
from models import MODELS, ModelSpec, model_input  # noqa: E402

# Run by --tvm-python: Apache TVM's import of the ONNX file and its compile (default pipeline), timed.
TVM_COMPILE_SCRIPT = """
import sys, time
t0 = time.perf_counter()
import onnx, tvm
from tvm.relax.frontend.onnx import from_onnx
t1 = time.perf_counter()
best = float("inf")
for _ in range(int(sys.argv[2])):
    t2 = time.perf_counter()
    mod = from_onnx(onnx.load(sys.argv[1]))
    ex = tvm.compile(mod, target="llvm")
    tvm.relax.VirtualMachine(ex, tvm.cpu())
    best = min(best, time.perf_counter() - t2)
print(best, t1 - t0)
"""

WARM_UP_TEXT = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((4,), dtype="float32") = R.exp(x)
            R.output(gv)
        return gv
"""


def onnx_bytes(torch: Any, model: Any, xt: Any) -> bytes:
    """The model exported by torch.onnx: the TorchScript exporter (no onnxscript needed), else the
    dynamo one (the TorchScript exporter fails on nn.TransformerEncoderLayer's attention)."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(model, (xt,), buf, input_names=["x"], dynamo=False)
            return buf.getvalue()
        except Exception:
            program = torch.onnx.export(model, (xt,), input_names=["x"], dynamo=True, verbose=False)
    return program.model_proto.SerializeToString()


def ort_session(model_bytes: bytes, threads: int) -> Callable[[np.ndarray], Any] | None:
    """ONNX Runtime (CPU provider) on `threads` intra-op threads, or None when it is not installed."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
    return lambda x: session.run(None, {"x": x})[0]


def tvmlite_main(spec: ModelSpec, exported: Any, model_bytes: bytes | None) -> Callable[..., Any]:
    """Import (the ExportedProgram or the ONNX bytes), default pipeline, compile: the VM's ``main``."""
    import tvmlite
    from tvmlite import passes as P
    from tvmlite.frontend import from_exported_program, from_onnx

    if spec.frontend == "onnx":
        import onnx

        mod = from_onnx(onnx.load_model_from_string(model_bytes))
    else:
        mod = from_exported_program(exported, unwrap_unit_return_tuple=True)
    mod = P.get_pipeline("default")(mod)
    ex = tvmlite.compile(mod)
    tvmlite_main.executable = ex  # type: ignore[attr-defined]  (the memory figures measure it)
    return tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"]


def timed_compile(build: Callable[[], Any], cache: str) -> tuple[Any, float]:
    """build() with TVMLITE_CACHE_DIR=cache, and its seconds."""
    os.environ["TVMLITE_CACHE_DIR"] = cache
    time.sleep(0.2)
    t0 = time.perf_counter()
    out = build()
    return out, time.perf_counter() - t0


def tvm_compile_seconds(tvm_python: str, model_bytes: bytes) -> float | str:
    """Apache TVM's from_onnx + tvm.compile of the model, the fastest of COMPILE_REPEATS in a
    subprocess of `tvm_python`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        path.write_bytes(model_bytes)
        # TVM's Python gets its own path (TVM_PYTHONPATH, e.g. where onnx was installed), not ours.
        env = dict(os.environ, PYTHONPATH=os.environ.get("TVM_PYTHONPATH", ""))
        r = subprocess.run([tvm_python, "-c", TVM_COMPILE_SCRIPT, str(path), str(COMPILE_REPEATS)],
                           capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return "error: " + (r.stderr.strip().splitlines() or ["?"])[-1][:80]
    return float(r.stdout.split()[0])


def warm_up() -> None:
    """Compile and run a one-op module, so the first model's compile time does not include what a
    process pays once (importing the passes and the backend, starting LLVM and the thread pool)."""
    import tvmlite
    from tvmlite.script import from_source

    os.environ["TVMLITE_CACHE_DIR"] = "off"
    mod = from_source(WARM_UP_TEXT)
    tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())["main"](np.ones(4, np.float32))


def run_model(spec: ModelSpec, threads: int, repeat: int, tvm_python: str | None) -> dict[str, Any]:
    """One model at one thread count: the row's figures (seconds) as a dict."""
    import torch

    row: dict[str, Any] = {"model": spec.name, "threads": threads}
    model = spec.build(torch)
    x = model_input(spec)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        want = model(xt).numpy()
    needs_onnx = spec.frontend == "onnx" or tvm_python is not None
    try:
        import onnxruntime  # noqa: F401
        needs_onnx = True
    except ImportError:
        pass
    model_bytes = onnx_bytes(torch, model, xt) if needs_onnx else None

    exported = None
    if spec.frontend == "torch":  # torch's own tracing is not part of the import time
        with torch.no_grad():
            exported = torch.export.export(model, (xt,))
    build = lambda: tvmlite_main(spec, exported, model_bytes)  # noqa: E731
    row["compile_cold"] = min(timed_compile(build, "off")[1] for _ in range(COMPILE_REPEATS))
    with tempfile.TemporaryDirectory() as cache:
        timed_compile(build, cache)  # fills the kernel cache
        f, row["compile_warm"] = timed_compile(build, cache)
    os.environ["TVMLITE_CACHE_DIR"] = "off"
    if tvm_python:  # before any model runs here: ORT's intra-op threads spin after a run (TVM took 25% longer)
        time.sleep(0.2)
        row["tvm_compile"] = tvm_compile_seconds(tvm_python, model_bytes)
    np.testing.assert_allclose(f(x).numpy(), want, rtol=1e-4, atol=1e-4)
    ort = ort_session(model_bytes, threads) if model_bytes is not None else None
    if ort is not None:
        np.testing.assert_allclose(ort(x), want, rtol=1e-4, atol=1e-4)
    row.update(memory_figures(tvmlite_main.executable, (x,), tvm_python))  # type: ignore[attr-defined]

    runners = {"tvmlite": lambda: f(x), "torch": lambda: model(xt)}
    if ort is not None:
        runners["ort"] = lambda: ort(x)
    samples: dict[str, list[float]] = {k: [] for k in runners}
    with torch.no_grad():
        for _ in range(ROUNDS):
            for k, fn in runners.items():
                samples[k].append(measure(fn, repeat).seconds)
    row.update({k: statistics.median(v) for k, v in samples.items()})
    return row


def main(argv: list[str] | None = None) -> int:
    """Run the models at one thread count and print their rows as JSON lines."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--quick", action="store_true", help="only the small models")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", default=None, help="only models whose name contains this")
    ap.add_argument("--tvm-python", default=None, help="a Python with Apache TVM and onnx: times TVM's compile")
    args = ap.parse_args(argv)
    if os.environ.get("TVMLITE_NUM_THREADS") != str(args.threads):
        ap.error("run with TVMLITE_NUM_THREADS equal to --threads (the pool takes its size at start)")
    bpp.import_tvmlite()
    import torch

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    warm_up()
    for spec in MODELS:
        if (args.quick and not spec.quick) or (args.only and args.only not in spec.name):
            continue
        try:
            row = run_model(spec, args.threads, args.repeat, args.tvm_python)
        except Exception as exc:
            traceback.print_exc(limit=4, file=sys.stderr)
            msg = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
            row = {"model": spec.name, "threads": args.threads, "error": f"{type(exc).__name__}: {msg[:80]}"}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
