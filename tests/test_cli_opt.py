"""``tvmlite opt``: run a textual pipeline on a script file, with the debugging flags."""
import os
import re
import subprocess
import sys

import pytest

from tvmlite import passes as P
from tvmlite.cli import main
from tvmlite.ir import structural_equal
from tvmlite.script import from_source, parse_file

from dce_texts import CLEAN, INPUT, NON_DATAFLOW, SRC

SCRIPT = "from tvmlite.script import relax as R\n" + SRC
SPEC = "ToNonDataflow,DeadCodeElimination"


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SCRIPT)
    return str(path)


def run(capsys, *argv):
    status = main(["opt", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_opt_prints_the_result(script, capsys):
    assert run(capsys, script, "--passes", SPEC) == (0, CLEAN, "")


def test_opt_writes_output_file(script, tmp_path, capsys):
    out_path = tmp_path / "out.py"
    assert run(capsys, script, "--passes", SPEC, "-o", str(out_path)) == (0, "", "")
    assert out_path.read_text() == CLEAN


def test_opt_level_and_disable_skip_passes_with_a_note(script, capsys):
    assert run(capsys, script, "--passes", SPEC, "--opt-level", "0") == (
        0, NON_DATAFLOW, "tvmlite opt: note: skipping DeadCodeElimination (opt_level 1 > --opt-level 0)\n")
    assert run(capsys, script, "--passes", SPEC, "--disable", "DeadCodeElimination") == (
        0, NON_DATAFLOW, "tvmlite opt: note: DeadCodeElimination is disabled\n")
    status, out, _ = run(capsys, script, "--disable", "ToNonDataflow,DeadCodeElimination", "--passes", SPEC)
    assert (status, out) == (0, INPUT)


def test_print_before_and_after_all_go_to_stderr(script, capsys):
    status, out, err = run(capsys, script, "--passes", SPEC, "--print-before-all", "--print-after-all")
    assert (status, out) == (0, CLEAN)
    assert err == ("# ---- IR before ToNonDataflow ----\n" + INPUT + "\n"
                   "# ---- IR after ToNonDataflow ----\n" + NON_DATAFLOW + "\n"
                   "# ---- IR before DeadCodeElimination ----\n" + NON_DATAFLOW + "\n"
                   "# ---- IR after DeadCodeElimination ----\n" + CLEAN + "\n")


def test_print_after_change(script, capsys):
    status, out, err = run(capsys, script, "--passes", "DeadCodeElimination,ToNonDataflow,DeadCodeElimination",
                           "--print-after-change")
    assert (status, out) == (0, CLEAN)
    # The second DeadCodeElimination changes nothing, so it prints no diff.
    assert err == '''\
--- before DeadCodeElimination
+++ after DeadCodeElimination
@@ -7,7 +7,6 @@
     def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
         with R.dataflow():
             lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
-            unused: R.Tensor((2, 3), dtype="float32") = R.exp(x)
             gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
             R.output(gv)
         return gv
--- before ToNonDataflow
+++ after ToNonDataflow
@@ -5,8 +5,6 @@
 class Module:
     @R.function
     def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
-        with R.dataflow():
-            lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
-            gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
-            R.output(gv)
+        lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
+        gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
         return gv
'''


def test_dump_dir(script, tmp_path, capsys):
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "007_Stale.py").write_text("old")
    assert run(capsys, script, "--passes", SPEC, "--dump-dir", str(dump))[0] == 0
    assert sorted(os.listdir(dump)) == ["000_input.py", "001_ToNonDataflow.py", "002_DeadCodeElimination.py"]
    assert [(dump / n).read_text() for n in sorted(os.listdir(dump))] == [INPUT, NON_DATAFLOW, CLEAN]


def test_timing_and_statistics(script, capsys):
    status, out, err = run(capsys, script, "--passes", SPEC, "--timing")
    assert (status, out) == (0, CLEAN)
    lines = err.splitlines()
    assert [re.sub(r"\s+[\d.]+\s+[\d.]+%$", "", line) for line in lines[1:6]] == [
        "sequential", "  ToNonDataflow", "  DeadCodeElimination", "  (rest)", "total"]
    assert lines[6:] == ["pass statistics:", "  ToNonDataflow: blocks=1, vars=2",
                         "  DeadCodeElimination: removed_bindings=1"]
    assert run(capsys, script, "--passes", SPEC, "--statistics") == (
        0, CLEAN, "pass statistics:\n  ToNonDataflow: blocks=1, vars=2\n  DeadCodeElimination: removed_bindings=1\n")


def test_unknown_pass_is_a_usage_error(script, capsys):
    status, out, err = run(capsys, script, "--passes", "ToNonDataflow,DCE")
    assert (status, out) == (2, "")
    assert err.startswith("tvmlite opt: error: unknown pass 'DCE' (registered passes: ")
    assert err.endswith("(at position 14 of the pipeline)\n  ToNonDataflow,DCE\n                ^^^\n")


class DropLastBinding(P.FunctionPass):
    """A broken pass: drops the last binding of every function (its variable is still returned)."""

    def transform_function(self, func, mod, ctx):
        from tvmlite.ir.node import replace

        block = func.body.blocks[-1]
        blocks = func.body.blocks[:-1] + (replace(block, bindings=block.bindings[:-1]),)
        return replace(func, body=replace(func.body, blocks=blocks))


def test_failing_pass_reports_reproducer_that_replays(script, tmp_path, capsys):
    P.register_pass("DropLastBinding", DropLastBinding, override=True)
    repro_dir = tmp_path / "repro"
    status, out, err = run(capsys, script, "--passes", "ToNonDataflow,DropLastBinding,DeadCodeElimination",
                           "--reproducer-dir", str(repro_dir))
    repro = repro_dir / "repro_DropLastBinding.py"
    assert (status, out) == (1, "")
    assert err.startswith('tvmlite opt: error: pass "DropLastBinding" produced ill-formed IR:\n')
    assert err.endswith(f'reproducer: {repro}\nreplay: tvmlite opt {repro} --passes "DropLastBinding"\n')
    assert repro.read_text().endswith(NON_DATAFLOW)
    # Replaying it fails the same way, on the same module.
    status, _, err2 = run(capsys, str(repro), "--passes", "DropLastBinding", "--reproducer-dir", str(repro_dir))
    assert status == 1 and err2.splitlines()[0] == err.splitlines()[0]
    assert err2.splitlines()[1].endswith(": variable gv used before definition")
    assert (repro_dir / "repro_DropLastBinding_1.py").read_text().endswith(NON_DATAFLOW)
    # Without verification the broken module goes through.
    status, out, _ = run(capsys, str(repro), "--passes", "DropLastBinding", "--no-verify")
    assert status == 0 and "gv: R.Tensor((2, 3), dtype=\"float32\") = R.add" not in out


def test_constants_survive_in_the_output(tmp_path, capsys):
    path = tmp_path / "const.py"
    mod = from_source('''
@R.function
def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
    y = R.add(x, R.const([1.5, -2.25], "float32"))
    return y
''')
    path.write_text(mod.script(show_meta=True))
    out_path = tmp_path / "out.py"
    assert run(capsys, str(path), "--passes", "ToNonDataflow", "-o", str(out_path))[0] == 0
    assert out_path.read_text().startswith("metadata = tvmlite.load_json(")
    assert structural_equal(parse_file(str(out_path))["main"], mod)


def test_python_dash_m_tvmlite_opt(script):
    proc = subprocess.run([sys.executable, "-m", "tvmlite", "opt", script, "--passes", SPEC],
                          capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, CLEAN, "")
