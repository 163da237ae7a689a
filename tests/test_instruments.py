"""Pass instruments: the hook protocol, the printing instruments' exact output, DumpIR files,
the timing table, verification after each pass, and reproducer files for failing passes."""
import difflib
import os
import re
import tempfile

import pytest

from tvmlite import passes as P
from tvmlite.cli import main as cli_main
from tvmlite.ir import IRModule
from tvmlite.ir.node import replace
from tvmlite.script import from_source, parse_file

from dce_texts import CLEAN, INPUT, NON_DATAFLOW, SRC



@pytest.fixture(autouse=True)
def _reproducers_in_tmp_path(tmp_path, monkeypatch):
    """Reproducers of failing passes default to a new temp dir: keep them in the test's tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def module():
    return IRModule.from_expr(from_source(SRC))


def pipeline():
    return P.Sequential([P.ToNonDataflow(), P.DeadCodeElimination()])


@P.module_pass(name="Nothing")
def nothing(mod, ctx):
    """An analysis pass: returns its module unchanged."""
    return mod


@P.module_pass(name="DropFirstBinding")
def drop_first_binding(mod, ctx):
    """A broken pass: removes the definition of a variable that is still used."""
    f = mod["main"]
    block = f.body.blocks[0]
    mod["main"] = replace(f, body=replace(f.body, blocks=(replace(block, bindings=block.bindings[1:]),)))
    return mod


# ==================================================================== the hook protocol
def test_pass_instrument_decorator_and_hook_order():
    calls = []

    @P.pass_instrument
    class Recorder:
        def enter_pass_ctx(self):
            calls.append("enter")

        def exit_pass_ctx(self):
            calls.append("exit")

        def should_run(self, mod, info):
            calls.append(f"should_run {info.name}")
            return True

        def run_before_pass(self, mod, info):
            calls.append(f"before {info.name} {info.kind}")

        def run_after_pass(self, mod, info):
            calls.append(f"after {info.name}")

    rec = Recorder()
    assert isinstance(rec, P.PassInstrument) and rec.name == "Recorder"
    with P.PassContext(instruments=[rec]):
        pipeline()(module())
    assert calls == ["enter", "should_run sequential", "before sequential sequential",
                     "should_run ToNonDataflow", "before ToNonDataflow function", "after ToNonDataflow",
                     "should_run DeadCodeElimination", "before DeadCodeElimination module",
                     "after DeadCodeElimination", "after sequential", "exit"]


def test_seed000_instrument_printing_ir_before_each_pass(capsys):
    @P.pass_instrument
    class PrintIR:
        """Print the name of the pass, the IR, only before passes execute."""

        def run_before_pass(self, mod, info):
            print("Running pass: {}", info)
            print(mod)

    mod = module()
    with P.PassContext(opt_level=3, instruments=[PrintIR()]):
        pipeline()(mod)
    out = capsys.readouterr().out
    assert out == (
        "Running pass: {} The meta data of the pass - pass name: sequential, opt_level: 0, required passes: []\n\n"
        + INPUT
        + "Running pass: {} The meta data of the pass - pass name: ToNonDataflow, opt_level: 0, required passes: []\n\n"
        + INPUT
        + "Running pass: {} The meta data of the pass - pass name: DeadCodeElimination, opt_level: 1, "
          "required passes: []\n\n"
        + NON_DATAFLOW)


def test_should_run_false_skips_the_pass_and_its_hooks():
    calls = []

    class SkipDCE(P.PassInstrument):
        def should_run(self, mod, info):
            return info.name != "DeadCodeElimination"

        def run_before_pass(self, mod, info):
            calls.append(info.name)

    with P.PassContext(instruments=[SkipDCE()]):
        out = pipeline()(module())
    assert calls == ["sequential", "ToNonDataflow"]
    assert out.script() + "\n" == NON_DATAFLOW


def test_run_after_failure_gets_the_input_and_the_error(tmp_path):
    seen = []

    class OnFailure(P.PassInstrument):
        def run_after_failure(self, mod, info, error):
            seen.append((info.name, mod.script() + "\n", type(error).__name__))

    with P.PassContext(instruments=[OnFailure()], config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError):
            P.Sequential([P.ToNonDataflow(), drop_first_binding])(module())
    # The failing pass first (its input), then the Sequential around it (its input).
    assert seen == [("DropFirstBinding", NON_DATAFLOW, "IllFormedIRError"),
                    ("sequential", INPUT, "PassError")]


# ==================================================================== printing instruments
def test_print_before_all_and_after_all(capsys):
    with P.PassContext(instruments=[P.PrintBeforeAll(), P.PrintAfterAll()]):
        pipeline()(module())
    assert capsys.readouterr().out == (
        "# ---- IR before ToNonDataflow ----\n" + INPUT + "\n"
        "# ---- IR after ToNonDataflow ----\n" + NON_DATAFLOW + "\n"
        "# ---- IR before DeadCodeElimination ----\n" + NON_DATAFLOW + "\n"
        "# ---- IR after DeadCodeElimination ----\n" + CLEAN + "\n")


def test_print_after_change_prints_a_diff_only_for_changing_passes(capsys):
    with P.PassContext(instruments=[P.PrintAfterChange()]):
        P.Sequential([nothing, P.ToNonDataflow(), nothing, P.DeadCodeElimination(), P.DeadCodeElimination()])(module())
    assert capsys.readouterr().out == '''\
--- before ToNonDataflow
+++ after ToNonDataflow
@@ -5,9 +5,7 @@
 class Module:
     @R.function
     def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
-        with R.dataflow():
-            lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
-            unused: R.Tensor((2, 3), dtype="float32") = R.exp(x)
-            gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
-            R.output(gv)
+        lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
+        unused: R.Tensor((2, 3), dtype="float32") = R.exp(x)
+        gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
         return gv
--- before DeadCodeElimination
+++ after DeadCodeElimination
@@ -6,6 +6,5 @@
     @R.function
     def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
         lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
-        unused: R.Tensor((2, 3), dtype="float32") = R.exp(x)
         gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
         return gv
'''


def test_print_instruments_write_to_a_given_file(tmp_path, capsys):
    path = tmp_path / "log.txt"
    with open(path, "w") as f:
        with P.PassContext(instruments=[P.PrintAfterAll(file=f)]):
            P.ToNonDataflow()(module())
    assert path.read_text() == "# ---- IR after ToNonDataflow ----\n" + NON_DATAFLOW + "\n"
    assert capsys.readouterr().out == ""


# ==================================================================== DumpIR
def test_dump_ir_writes_numbered_files_that_diff_cleanly(tmp_path):
    dump = P.DumpIR(tmp_path / "dump")
    with P.PassContext(instruments=[dump]):
        pipeline()(module())
    names = sorted(os.listdir(tmp_path / "dump"))
    assert names == ["000_input.py", "001_ToNonDataflow.py", "002_DeadCodeElimination.py"]
    texts = [(tmp_path / "dump" / n).read_text() for n in names]
    assert texts == [INPUT, NON_DATAFLOW, CLEAN]
    diff = list(difflib.unified_diff(texts[1].splitlines(), texts[2].splitlines(), lineterm="", n=0))
    assert diff[2:] == ["@@ -9 +8,0 @@", '-        unused: R.Tensor((2, 3), dtype="float32") = R.exp(x)']
    assert all(parse_file(str(tmp_path / "dump" / n)) is not None for n in names)  # each file is a script


def test_dump_ir_refresh_removes_earlier_dumps(tmp_path):
    with P.PassContext(instruments=[P.DumpIR(tmp_path)]):
        pipeline()(module())
    (tmp_path / "notes.txt").write_text("keep me")
    with P.PassContext(instruments=[P.DumpIR(tmp_path, refresh=True)]):
        P.ToNonDataflow()(module())
    assert sorted(os.listdir(tmp_path)) == ["000_input.py", "001_ToNonDataflow.py", "notes.txt"]


# ==================================================================== timing
def test_timing_table_rows_are_nested_with_statistics():
    timing = P.PassTimingInstrument()
    with P.PassContext(instruments=[timing]):
        pipeline()(module())
    lines = timing.render().splitlines()
    number = r"\s+\d+\.\d{3}\s+\d+\.\d%"
    assert re.fullmatch(r"pass\s+time \(ms\)\s+share", lines[0])
    assert re.fullmatch(r"sequential" + number, lines[1]) and lines[1].endswith("100.0%")
    assert re.fullmatch(r"  ToNonDataflow" + number, lines[2])
    assert re.fullmatch(r"  DeadCodeElimination" + number, lines[3])
    assert re.fullmatch(r"  \(rest\)" + number, lines[4])
    assert re.fullmatch(r"total" + number, lines[5])
    assert lines[6:] == ["pass statistics:", "  ToNonDataflow: blocks=1, vars=2",
                         "  DeadCodeElimination: removed_bindings=1"]  # zero counts are not shown
    # Children's times add up to the parent's (the rest row makes up the difference).
    ms = [float(line.split()[-2]) for line in lines[1:5]]
    assert abs(ms[0] - sum(ms[1:])) < 0.01


def test_timing_marks_failed_passes(tmp_path):
    timing = P.PassTimingInstrument()
    with P.PassContext(instruments=[timing], config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError):
            P.Sequential([drop_first_binding])(module())
    names = [re.sub(r"\s+[\d.]+\s+[\d.]+%$", "", line).strip() for line in timing.render().splitlines()[1:]]
    assert names == ["sequential (failed)", "DropFirstBinding (failed)", "(rest)", "total"]


# ==================================================================== verification
def test_sequential_verifies_each_pass_and_names_the_culprit(tmp_path):
    mod = module()
    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError) as info:
            P.Sequential([P.ToNonDataflow(), drop_first_binding, P.DeadCodeElimination()])(mod)
    message = str(info.value)
    assert message.startswith('pass "DropFirstBinding" produced ill-formed IR:\n')
    assert "variable lv used before definition" in message.splitlines()[1]
    assert info.value.pass_name == "DropFirstBinding"
    assert isinstance(info.value.__cause__, P.IllFormedIRError)
    assert info.value.__cause__.output is not None  # the broken module, for inspection
    assert mod.script() + "\n" == INPUT


def test_verify_each_can_be_switched_off():
    with P.PassContext(config={"tvmlite.verify_each": False}):
        out = P.Sequential([P.ToNonDataflow(), drop_first_binding])(module())
    assert "R.nn.relu" not in out.script()  # the broken result went through unchecked


def test_verification_is_off_by_default_as_in_tvm(monkeypatch, tmp_path):
    # The suite sets TVMLITE_VERIFY_EACH=1 (conftest.py); a user's default is TVM's: no checks.
    monkeypatch.delenv("TVMLITE_VERIFY_EACH", raising=False)
    out = P.Sequential([P.ToNonDataflow(), drop_first_binding])(module())
    assert "R.nn.relu" not in out.script()  # unchecked, as TVM's Sequential
    P.ToNonDataflow()(out)  # ill-formed input is not refused either
    with P.PassContext(config={"tvmlite.verify_each": True, "tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError, match='pass "DropFirstBinding" produced ill-formed IR'):
            P.Sequential([P.ToNonDataflow(), drop_first_binding])(module())
    monkeypatch.setenv("TVMLITE_VERIFY_EACH", "1")
    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError, match='pass "DropFirstBinding" produced ill-formed IR'):
            P.Sequential([P.ToNonDataflow(), drop_first_binding])(module())


def test_verify_each_instrument_checks_passes_run_alone(tmp_path):
    drop_first_binding(module())  # alone and without the instrument: not checked
    with P.PassContext(instruments=[P.VerifyEach()], config={"tvmlite.reproducer_dir": str(tmp_path)}):
        P.ToNonDataflow()(module())
        with pytest.raises(P.PassError, match='pass "DropFirstBinding" produced ill-formed IR'):
            drop_first_binding(module())


def test_sequential_reports_ill_formed_input_before_any_pass():
    broken = P.Sequential([drop_first_binding], name="inner")
    with P.PassContext(config={"tvmlite.verify_each": False}):
        bad = broken(module())
    with pytest.raises(P.PassError, match=r'the input of "sequential" is not well formed \(before any pass ran\):\n'
                                          r"  .*variable lv used before definition"):
        pipeline()(bad)


# ==================================================================== reproducers
def test_reproducer_file_content(tmp_path):
    mod = module()
    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError) as info:
            P.Sequential([P.ToNonDataflow(), drop_first_binding])(mod)
    path = tmp_path / "repro_DropFirstBinding.py"
    assert info.value.reproducer == str(path)
    assert f"reproducer: {path}\nreplay: tvmlite opt {path} --passes \"DropFirstBinding\"" in str(info.value)
    text = path.read_text()
    header, body = text.split("# from tvmlite.script import ir as I\n", 1)
    assert header.splitlines()[:4] == [
        "# tvmlite reproducer: the module before the failing pass",
        '# pipeline: "DropFirstBinding"',
        "# failed: DropFirstBinding",
        '# error: IllFormedIRError: pass "DropFirstBinding" produced ill-formed IR:',
    ]
    assert '# in pipeline: "ToNonDataflow,DropFirstBinding"' in header
    assert "# note: DropFirstBinding is not a registered pass" in header
    assert header.endswith(f'# replay: tvmlite opt {path} --passes "DropFirstBinding"\n')
    assert "# from tvmlite.script import ir as I\n" + body == NON_DATAFLOW
    # A second failure in the same directory does not overwrite the first reproducer.
    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError):
            P.Sequential([drop_first_binding])(module())
    assert sorted(os.listdir(tmp_path)) == ["repro_DropFirstBinding.py", "repro_DropFirstBinding_1.py"]


def test_reproducer_in_a_temp_dir_by_default_and_can_be_disabled():
    with pytest.raises(P.PassError) as info:
        P.Sequential([drop_first_binding])(module())
    assert os.path.basename(os.path.dirname(info.value.reproducer)).startswith("tvmlite-repro-")
    assert os.path.exists(info.value.reproducer)
    with P.PassContext(config={"tvmlite.reproducer_dir": False}):
        with pytest.raises(P.PassError) as info:
            P.Sequential([drop_first_binding])(module())
    assert info.value.reproducer is None and "reproducer" not in str(info.value)


class FailOnExp(P.FunctionPass):
    """Fails on functions that call R.exp (registered, so that reproducers replay)."""

    opt_level = 3

    def __init__(self, message: str = "exp is not supported") -> None:
        super().__init__()
        self.message = message

    def transform_function(self, func, mod, ctx):
        if "R.exp" in func.script():
            raise NotImplementedError(self.message)
        return func


def test_reproducer_replays_with_tvmlite_opt(tmp_path, capsys):
    P.register_pass("FailOnExp", FailOnExp, override=True)
    with P.PassContext(opt_level=3, config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError) as info:
            P.Sequential([P.ToNonDataflow(), FailOnExp(message="no exp")])(module())
    path = info.value.reproducer
    command = f"tvmlite opt {path} --passes 'FailOnExp{{message=\"no exp\"}}' --opt-level 3"
    assert str(info.value) == (f'pass "FailOnExp" failed: NotImplementedError: no exp\n'
                               f"reproducer: {path}\nreplay: {command}")
    assert "# note:" not in open(path).read()  # registered: the replay works as is
    capsys.readouterr()
    # Replay the command (in-process, where FailOnExp is registered).
    assert cli_main(["opt", path, "--passes", 'FailOnExp{message="no exp"}', "--opt-level", "3",
                     "--reproducer-dir", str(tmp_path / "again")]) == 1
    err = capsys.readouterr().err
    assert err.startswith('tvmlite opt: error: pass "FailOnExp" failed: NotImplementedError: no exp\n')
    replayed = tmp_path / "again" / "repro_FailOnExp.py"
    # The replay fails on the same module, so it writes the same module text.
    assert replayed.read_text().split("# from tvmlite")[1:] == open(path).read().split("# from tvmlite")[1:]
