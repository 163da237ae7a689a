"""The runnable examples in examples/: each runs with ``python examples/<name>.py`` in under 10 s,
exits 0, and prints the IR that shows its transformation."""
import pathlib
import subprocess
import sys
import time

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)


def run(name: str, tmp_path: pathlib.Path) -> str:
    """Run one example from an unrelated directory; its stdout."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, f"{name} failed:\n{proc.stderr}"
    assert proc.stderr == ""
    assert elapsed < 10, f"{name} took {elapsed:.1f} s"
    return proc.stdout


def section(out: str, title: str) -> str:
    """The output after the ``# ==== <title>`` line, up to the next such line."""
    start = out.index(f"# ==== {title}")
    start = out.index("\n", start) + 1
    end = out.find("# ==== ", start)
    return out[start:] if end < 0 else out[start:end]


def body(text: str) -> str:
    """Printed text without the ``# from ... import ...`` header lines."""
    return "\n".join(ln for ln in text.strip("\n").split("\n") if not ln.startswith("# from ")).strip("\n")


RUNNABLE = ["relu_to_gelu.py", "ewise_fma.py", "fuse_dense_add.py", "pass_infra.py"]


@pytest.mark.parametrize("name", RUNNABLE)
def test_example_starts_with_a_docstring(name):
    assert (EXAMPLES / name).read_text().startswith('"""'), name


def test_relu_to_gelu(tmp_path):
    out = run("relu_to_gelu.py", tmp_path)
    before, after = section(out, "exported"), section(out, "after ReluToGelu")
    assert "parameters: fc1.weight, fc1.bias, fc2.weight, fc2.bias" in out
    assert 'relu: R.Tensor((n, 128), dtype="float32") = R.nn.relu(add)' in before
    assert 'relu: R.Tensor((n, 128), dtype="float32") = R.nn.gelu(add)' in after
    assert "R.nn.relu" not in after
    # the whole printed result is seed 001's
    assert body(before) == body(read_corpus("seed001_mlp_dynamic.py"))
    assert body(after) == body(read_corpus("seed001_mlp_dynamic_gelu.py"))


def test_ewise_fma(tmp_path):
    out = run("ewise_fma.py", tmp_path)
    fma = '    gv0: R.Tensor((3, 4), dtype="float32") = R.ewise_fma(x, y, y)'
    multiply = '    lv0: R.Tensor((3, 4), dtype="float32") = R.multiply(x, y)'
    original, rewritten = section(out, 'MyModule["main"]'), section(out, "after EwiseFMARewriter")
    cleaned = section(out, "after relax.analysis.remove_all_unused")
    assert multiply in original and "R.add(lv0, y)" in original
    assert multiply in rewritten and fma in rewritten
    assert fma in cleaned and "lv0" not in cleaned


def test_fuse_dense_add(tmp_path):
    out = run("fuse_dense_add.py", tmp_path)
    model, fused = section(out, "MLPModel"), section(out, "after FuseDenseAddPass")
    assert 'lv: R.Tensor((1, 128), dtype="float32") = R.nn.dense(x, metadata["relax.expr.Constant"][0])' in model
    assert "fused_dense_add" not in model
    assert "    def fused_dense_add0(x: R.Tensor((1, 784), dtype=\"float32\"), w: R.Tensor((128, 784), " \
           "dtype=\"float32\"), b: R.Tensor((128,), dtype=\"float32\")) -> R.Tensor((1, 128), dtype=\"float32\"):" in fused
    assert "    def fused_dense_add1(" in fused
    assert fused.count('        R.func_attr({"Primitive": 1})') == 2  # the example's own pass sets 1, as the seed's
    assert ('lv1: R.Tensor((1, 128), dtype="float32") = cls.fused_dense_add0(x, metadata["relax.expr.Constant"][0], '
            'metadata["relax.expr.Constant"][1])') in fused
    assert "R.nn.dense(lv2" not in fused  # both dense + add pairs were replaced


def test_pass_infra(tmp_path):
    out = run("pass_infra.py", tmp_path)
    custom = section(out, "after CustomPipeline")
    assert 'R.multiply(R.const(3.0, "float32"), metadata["relax.expr.Constant"][0])' in custom
    assert 'R.multiply(R.const(3.0, "float32"), R.const(2.0, "float32"))' in custom
    default = section(out, "Sequential EliminateCommonSubexpr,DeadCodeElimination at the default opt_level 2")
    level3 = section(out, "the same Sequential under PassContext(opt_level=3)")
    disabled = section(out, "opt_level=3, disabled_pass")
    assert "z1: " in default and "z1: " in disabled and "z1: " not in level3
    assert 'z2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z)' in level3
    debug = section(out, "Sequential with PrintIR")
    passes = [ln.split("pass name: ")[1].split(",")[0] for ln in debug.split("\n") if ln.startswith("Running pass: ")]
    assert passes == ["sequential", "CustomPipeline", "PrintIR", "EliminateCommonSubexpr", "DeadCodeElimination"]
    assert "# ---- after CustomPipeline ----" in debug
    assert section(out, "the result").rstrip().endswith("done")
    report = section(out, "running CountAndReport,ReluReplacer,CountAndReport")
    assert report.strip("\n").split("\n") == [
        "  Function has 4 ops: {'relax.nn.conv2d': 1, 'relax.nn.batch_norm': 1, 'relax.nn.relu': 1, 'relax.add': 1}",
        "  Function has 4 ops: {'relax.nn.conv2d': 1, 'relax.nn.batch_norm': 1, 'relax.clip': 1, 'relax.add': 1}"]
    assert ('relu: R.Tensor((1, 64, 56, 56), dtype="float32") = '
            'R.clip(lv, R.prim_value(T.float32(0.0)), R.prim_value(T.float32("inf")))') in section(out, "after ReluReplacer")


@pytest.mark.parametrize("name", RUNNABLE)
def test_examples_import_without_running(name):
    """Importing an example defines its passes and mutators without printing anything."""
    proc = subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({str(EXAMPLES / name)!r})"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
