"""The model benchmark (bench/bench_models.py, bench/peers.py) runs and checks its models; it is
not timed here (a benchmark, not a timed test): only what it prints and that its checks pass."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_models as B  # noqa: E402
import models as M  # noqa: E402


def test_model_rows_print_as_a_markdown_table():
    rows = [{"model": "MLP b1", "threads": 2, "tvmlite": 2e-5, "torch": 4e-5, "ort": 1e-5,
             "compile_cold": 0.5, "compile_warm": 0.125, "peak_bytes": 1064, "tvm_plan_bytes": 1064},
            {"model": "CNN", "threads": 1, "tvmlite": 1e-3, "torch": 2e-3, "compile_cold": 1.5, "compile_warm": 0.25},
            {"model": "big", "threads": 1, "error": "FrontendError: no"}]
    lines = B.format_model_rows(rows, "no ORT", with_tvm=False)
    assert lines[:5] == [
        "| model | threads | tvmlite | PyTorch eager | ORT | tvmlite/torch | tvmlite/ORT | compile cold | compile warm "
        "| peak memory (TVM plan) |",
        "|---|---|---|---|---|---|---|---|---|---|",
        "| MLP b1 | 2 | 20 us | 40 us | 10 us | 0.50 | 2.00 | 500 ms | 125 ms | 1.0 KB (1.0 KB) |",
        "| CNN | 1 | 1 ms | 2 ms | - | 0.50 | - | 1.5 s | 250 ms | - (-) |",
        "| big | 1 | ERROR FrontendError: no |",
    ]
    assert lines[-1].startswith("- no ORT; PyTorch: torch.set_num_threads(threads)")


def test_model_table_lists_the_issue_models():
    names = [m.name for m in M.MODELS]
    assert names == ["MLP 784-256-10 b1", "MLP 784-256-10 b64", "small CNN 8x3x32x32", "resnet18 1x3x224x224",
                     "TransformerEncoderLayer 1x128x256 (torch.export)", "TransformerEncoderLayer 1x128x256 (ONNX)",
                     "encoder layer in plain ops 1x128x256"]
    assert [m.name for m in M.MODELS if m.quick] == names[:3]


def test_plain_encoder_layer_computes_the_encoder_layer():
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(M.model_input(M.MODELS[-1]))
    with torch.no_grad():
        want = M.encoder_layer(torch)(x).numpy()
        got = M.plain_encoder_layer(torch)(x).numpy()
    assert got.shape == (1, 128, 256)
    assert abs(got - want).max() < 1e-4


def test_peers_runs_the_mlp_at_one_thread():
    pytest.importorskip("torch")
    env = dict(os.environ, TVMLITE_NUM_THREADS="1", TVMLITE_CACHE_DIR="off")
    r = subprocess.run([sys.executable, str(BENCH / "peers.py"), "--threads", "1", "--repeat", "1", "--only", "b1"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]
    assert len(rows) == 1, r.stderr
    row = rows[0]
    assert "error" not in row, row  # the outputs matched PyTorch's within 1e-4
    assert (row["model"], row["threads"]) == ("MLP 784-256-10 b1", 1)
    assert all(row[k] > 0 for k in ("tvmlite", "torch", "compile_cold", "compile_warm"))
    # the planned storages: the hidden layer's 1024 bytes and the output's 40, both alive at the end
    assert (row["peak_bytes"], row["storage_bytes"], row["tvm_plan_bytes"]) == (1064, 1064, "-")


def test_peers_wants_the_pool_size_it_is_told():
    env = dict(os.environ, TVMLITE_NUM_THREADS="2")
    r = subprocess.run([sys.executable, str(BENCH / "peers.py"), "--threads", "1"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "run with TVMLITE_NUM_THREADS equal to --threads" in r.stderr
