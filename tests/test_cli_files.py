"""The command line on files as users keep them: ``fmt`` keeps a script a working Python file,
Python code beside the module, files that are not UTF-8, standard input (``-``), several files
at once, ``--version``."""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

import tvmlite
from tvmlite.cli import main

USER_SCRIPT = '''\
# An MLP layer, written by hand.
import numpy as np

from tvmlite.script import ir as I
from tvmlite.script import relax as R


@I.ir_module
class MyLayer:
    # the comment inside the module goes: only TVMScript is kept there
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"),
             w: R.Tensor((4, 3), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        y = R.nn.relu(R.matmul(x, w))
        return y


def helper() -> int:
    return 41 + 1  # a comment in Python code stays


if __name__ == "__main__":
    print(type(MyLayer).__name__, list(MyLayer.get_global_vars()), helper())
'''

FORMATTED = '''\
# An MLP layer, written by hand.
import numpy as np

from tvmlite.script import ir as I
from tvmlite.script import relax as R
from tvmlite.script import tir as T


@I.ir_module
class MyLayer:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((4, 3), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        n = T.int64()
        gv: R.Tensor((n, 3), dtype="float32") = R.matmul(x, w, out_dtype="void")
        y: R.Tensor((n, 3), dtype="float32") = R.nn.relu(gv)
        return y


def helper() -> int:
    return 41 + 1  # a comment in Python code stays


if __name__ == "__main__":
    print(type(MyLayer).__name__, list(MyLayer.get_global_vars()), helper())
'''

RAN = "IRModule [I.GlobalVar(\"main\")] 42\n"


def run_python(path) -> str:  # noqa: ANN001 - a path
    """Run a file with Python; its stdout."""
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_fmt_keeps_a_users_script_working_and_is_idempotent(tmp_path, capsys):
    path = tmp_path / "layer.py"
    path.write_text(USER_SCRIPT)
    assert run_python(path) == RAN
    assert main(["fmt", "--in-place", str(path)]) == 0
    assert f"reformatted {path}" in capsys.readouterr().err
    assert path.read_text() == FORMATTED
    assert run_python(path) == RAN  # imports, class name, comments and the __main__ block stayed
    assert main(["fmt", "--check", str(path)]) == 0  # formatting again changes nothing
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == FORMATTED


def test_fmt_bare_script_gets_the_header_show_prints(tmp_path, capsys):
    path = tmp_path / "bare.py"
    path.write_text(textwrap.dedent('''\
        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((2,), dtype="float32")):
                return R.exp(x)
        '''))
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == shown
    assert shown.startswith("# from tvmlite.script import ir as I\n# from tvmlite.script import relax as R\n\n")


def test_fmt_keeps_constants_in_the_metadata_line(tmp_path, capsys):
    import numpy as np

    text = tvmlite.from_source('@R.function\ndef f(x: R.Tensor((2,), "float32")):\n    return R.add(x, c)\n',
                               extra_vars={"c": np.array([1.5, -0.0], "float32")}).script(show_meta=True)
    meta, rest = text.split("\n", 1)
    body = rest.split("\n\n", 1)[1]
    path = tmp_path / "consts.py"
    path.write_text("import tvmlite\nfrom tvmlite.script import relax as R\n\n" + meta + "\n\n"
                    + body.replace("R.add(x, ", "R.add(x,   ") + "\n\nprint(f.script(show_meta=True).split('\\n')[0])\n")
    assert main(["fmt", "--in-place", str(path)]) == 0
    formatted = path.read_text()
    assert meta in formatted and "R.add(x, metadata" in formatted
    assert run_python(path) == meta + "\n"  # the decorator still finds the constants: bit for bit
    assert main(["fmt", "--check", str(path)]) == 0


def test_fmt_keeps_line_endings_and_declared_encoding(tmp_path):
    path = tmp_path / "latin.py"
    text = ("# -*- coding: latin-1 -*-\r\n# caf\xe9\r\nfrom tvmlite.script import relax as R\r\n\r\n"
            "@R.function\r\ndef f(x: R.Tensor((2,), dtype=\"float32\")):\r\n    return x\r\n")
    path.write_bytes(text.encode("latin-1"))
    assert run_python(path) == ""
    assert main(["fmt", "--in-place", str(path)]) == 0
    data = path.read_bytes()
    assert b"# caf\xe9\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert b'def f(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):\r\n' in data
    assert main(["fmt", "--check", str(path)]) == 0


NOT_UTF8 = b'@R.function\ndef f(x: R.Tensor((2,), "float32")):\n    # caf\xe9\n    return x\n'


@pytest.mark.parametrize("argv", [["check"], ["show"], ["fmt"], ["fmt", "--check"], ["opt", "--passes", "zero"],
                                  ["build"]])
def test_file_that_is_not_utf8_is_a_located_error(tmp_path, capsys, argv):
    path = tmp_path / "bad.py"
    path.write_bytes(NOT_UTF8)
    assert main([*argv, str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:3:10: error: the file is not valid utf-8 text: byte 0xe9 at offset 58 "
                          f"cannot be decoded (invalid continuation byte; ")
    assert err.rstrip("\n").endswith("\n        # caf\ufffd\n             ^")
    assert "Traceback" not in err


def test_parse_file_raises_script_error_for_bad_bytes(tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(NOT_UTF8)
    with pytest.raises(tvmlite.script.ScriptError) as info:
        tvmlite.parse_file(path)
    assert (info.value.filename, info.value.line, info.value.col) == (str(path), 3, 10)
    assert "offset 58" in info.value.message


def test_python_code_after_the_module_is_accepted(tmp_path, capsys):
    path = tmp_path / "layer.py"
    path.write_text(USER_SCRIPT)
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"
    assert main(["show", str(path)]) == 0
    assert "class Module:" in capsys.readouterr().out
    assert main(["opt", str(path), "--passes", "ToNonDataflow"]) == 0
    assert "R.nn.relu(gv)" in capsys.readouterr().out
    assert tvmlite.structural_equal(tvmlite.parse_file(path), tvmlite.from_source(FORMATTED.split("\n\n\ndef")[0]))


def test_a_mistake_in_a_file_with_python_code_is_located(tmp_path, capsys):
    path = tmp_path / "layer.py"
    path.write_text(USER_SCRIPT.replace("R.nn.relu(", "R.nn.rleu("))
    assert main(["check", str(path)]) == 1
    assert f"{path}:14:13: error: R.nn.rleu is not a known Relax function" in capsys.readouterr().err


def test_stdin_dash(monkeypatch, capsys):
    def stdin(text: str) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))

    stdin(USER_SCRIPT)
    assert main(["check", "-"]) == 0
    assert capsys.readouterr().out == "<stdin>: ok\n"
    stdin(USER_SCRIPT)
    assert main(["show", "--color", "never", "-"]) == 0
    assert "class Module:" in capsys.readouterr().out
    stdin(USER_SCRIPT)
    assert main(["fmt", "-"]) == 0
    assert capsys.readouterr().out == FORMATTED
    stdin(USER_SCRIPT.replace("R.nn.relu(", "R.nn.rleu("))
    assert main(["check", "-"]) == 1
    assert "<stdin>:14:13: error: R.nn.rleu is not a known Relax function" in capsys.readouterr().err
    assert main(["fmt", "--in-place", "-"]) == 2
    assert "--in-place cannot rewrite standard input" in capsys.readouterr().err


def test_several_files_each_reported(tmp_path, capsys):
    good, bad, other = tmp_path / "good.py", tmp_path / "bad.py", tmp_path / "other.py"
    good.write_text(FORMATTED)
    bad.write_text(USER_SCRIPT.replace("R.nn.relu(", "R.nn.rleu("))
    other.write_text(USER_SCRIPT)
    missing = tmp_path / "missing.py"
    assert main(["check", str(good), str(bad), str(missing), str(other)]) == 1
    captured = capsys.readouterr()
    assert captured.out == f"{good}: ok\n{other}: ok\n"
    assert f"{bad}:14:13: error:" in captured.err and f"No such file or directory: {missing}" in captured.err
    assert main(["check", str(good), str(other)]) == 0
    capsys.readouterr()
    assert main(["fmt", "--check", str(good), str(other)]) == 1  # other is not canonical
    out = capsys.readouterr().out
    assert f"--- {other}\n" in out and str(good) not in out
    assert main(["fmt", "--in-place", str(good), str(bad), str(other)]) == 1  # bad fails, the others go on
    assert other.read_text() == FORMATTED and "rleu" in bad.read_text()
    assert main(["fmt", str(good), str(other)]) == 2
    assert "several files need --check or --in-place" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"tvmlite {tvmlite.__version__}\n"
