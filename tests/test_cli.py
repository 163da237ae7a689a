"""The ``tvmlite`` command line (run in-process through ``main`` and once as a subprocess)."""
import pathlib
import subprocess
import sys

import pytest

from tvmlite.cli import main

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"

HAND_WRITTEN = '''\
from tvmlite.script import relax as R

@R.function
def f(
    x: R.Tensor((2, 3), dtype="float32"),
) -> R.Tensor((2, 3), dtype="float32"):
    y = R.nn.relu(x)
    return y
'''
CANONICAL = '''\
# from tvmlite.script import relax as R

@R.function
def f(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
    y: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
    return y
'''


def test_show_prints_canonical_text_when_piped(capsys):
    assert main(["show", str(EXAMPLES / "mlp.py")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# from tvmlite.script import ir as I\n")
    assert "\x1b[" not in out
    assert 'h: R.Tensor((n, 128), dtype="float32") = R.matmul(x, w1_t, out_dtype="void")' in out


def test_show_color_always(capsys):
    assert main(["show", "--color", "always", str(EXAMPLES / "mlp.py")]) == 0
    assert "\x1b[" in capsys.readouterr().out


def test_check_ok_and_failing(tmp_path, capsys):
    assert main(["check", str(EXAMPLES / "mlp.py")]) == 0
    bad = tmp_path / "bad.py"
    bad.write_text(HAND_WRITTEN.replace("R.nn.relu(x)", "R.nn.relu(z)"))
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:7:19: error: name 'z' is not defined" in err
    assert err.rstrip().endswith("^")


def test_fmt_stdout_check_and_in_place(tmp_path, capsys):
    path = tmp_path / "f.py"
    path.write_text(HAND_WRITTEN)
    # the file's own import line stays (it is a working Python file); the function is canonical
    formatted = "from tvmlite.script import relax as R\n" + CANONICAL.split("\n", 1)[1]
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == formatted
    assert main(["fmt", "--check", str(path)]) == 1
    assert "+    y: R.Tensor((2, 3)" in capsys.readouterr().out
    assert main(["fmt", "--in-place", str(path)]) == 0
    assert path.read_text() == formatted
    assert main(["fmt", "--check", str(path)]) == 0


def test_missing_file_is_a_clear_error(capsys):
    assert main(["check", "/nonexistent/x.py"]) == 1
    assert "No such file or directory: /nonexistent/x.py" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "tvmlite", "show", str(EXAMPLES / "mlp.py")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "class Module:" in proc.stdout


@pytest.mark.parametrize("argv", [[], ["frobnicate"]])
def test_bad_usage_exits_with_status_2(argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
