"""Time nn.TransformerEncoderLayer (1x128x256, 8 heads, ffn 1024) compiled by tvmlite (via
torch.export and via ONNX), each compiled kernel on its own, against PyTorch and ONNX Runtime.

Usage: ``python bench/profile_encoder.py [--threads N] [--ort-path DIR] [--kernels]``; ONNX Runtime
is imported from ``--ort-path`` when given (a private ``pip install --target`` directory)."""
from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time


def median_time(fn, repeat: int = 7, number: int = 20) -> float:
    """Median seconds per call of ``fn`` over ``repeat`` rounds of ``number`` calls."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def main() -> None:
    """Measure and print a table (microseconds)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ort-path", default="")
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.environ["TVMLITE_NUM_THREADS"] = str(args.threads)
    if args.ort_path:
        sys.path.append(args.ort_path)
    import numpy as np
    import torch
    import tvmlite
    from tvmlite import passes as P
    from tvmlite.frontend import detach_params, from_exported_program, from_onnx

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True, dropout=0.0).eval()
    x = np.random.default_rng(0).standard_normal((1, 128, 256)).astype("float32")
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
        exported = torch.export.export(model, (torch.from_numpy(x),))
    mod, params = detach_params(from_exported_program(exported, keep_params_as_input=True,
                                                      unwrap_unit_return_tuple=True))
    ex_t = tvmlite.compile(P.get_pipeline("default")(mod), target="llvm")
    f_t = tvmlite.VirtualMachine(ex_t, tvmlite.cpu())["main"]
    p_t = params.get("main", [])
    np.testing.assert_allclose(f_t(x, *p_t).numpy(), want, rtol=1e-4, atol=1e-4)

    buf = io.BytesIO()
    torch.backends.mha.set_fastpath_enabled(False)  # the fused fast path has no ONNX export
    with torch.no_grad():
        onnx_model = torch.onnx.export(model, (torch.from_numpy(x),), input_names=["x"], dynamo=True,
                                       verbose=False).model_proto
    buf.write(onnx_model.SerializeToString())
    ex_o = tvmlite.compile(P.get_pipeline("default")(from_onnx(onnx_model)), target="llvm")
    f_o = tvmlite.VirtualMachine(ex_o, tvmlite.cpu())["main"]
    np.testing.assert_allclose(f_o(x).numpy(), want, rtol=1e-4, atol=1e-4)

    runs = {"tvmlite (torch.export)": lambda: f_t(x, *p_t), "tvmlite (ONNX)": lambda: f_o(x)}
    tx = torch.from_numpy(x)

    def run_torch():
        with torch.no_grad():
            model(tx)
    runs["PyTorch eager"] = run_torch
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(buf.getvalue(), so, providers=["CPUExecutionProvider"])
        runs["ONNX Runtime"] = lambda: sess.run(None, {"x": x})
    except ImportError:
        pass
    results: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(args.rounds):  # alternate, so each side sees the same machine load
        for name, fn in runs.items():
            time.sleep(0.3)  # the previous side's spinning threads go idle first
            results[name].append(median_time(fn))
    print(f"threads={args.threads}")
    for name, ts in results.items():
        print(f"{name:26s} {statistics.median(ts) * 1e6:9.1f} us")
    if args.kernels:
        for label, ex in (("torch.export", ex_t), ("ONNX", ex_o)):
            print(f"-- kernels ({label})")
            rows = []
            for name in ex.kernel_names():
                func = ex.lowered[name]
                arrays = []
                ok = True
                for p in func.params:
                    b = func.buffer_map.get(p)
                    if b is None:
                        ok = False
                        break
                    shape = [int(getattr(s, "value", s)) for s in b.shape]
                    arrays.append(np.random.default_rng(1).standard_normal(shape).astype(b.dtype)
                                  if b.dtype.startswith("float") else np.zeros(shape, b.dtype))
                if not ok:
                    continue
                k = ex[name]
                rows.append((median_time(lambda: k(*arrays), 5, 20) * 1e6, name))
            for t, name in sorted(rows, reverse=True):
                print(f"  {t:9.1f} us  {name}")


if __name__ == "__main__":
    main()
