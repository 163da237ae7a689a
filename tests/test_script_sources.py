"""Where script text comes from outside a plain file: code run by ``exec`` with its text in
``linecache`` (as IPython runs notebook cells), and the package's attributes after a bare
``import tvmlite``."""
from __future__ import annotations

import linecache
import subprocess
import sys

import pytest

from tvmlite.script import ScriptError
from tvmlite.script.source_file import format_source, split_python_file

CELL = '''\
from tvmlite.script import ir as I
from tvmlite.script import relax as R

@I.ir_module
class M:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")):
        return x

first = M

@I.ir_module
class M:
    @R.function
    def main(x: R.Tensor((3,), dtype="int32")):
        return x
'''


def run_cell(text: str, filename: str) -> dict:
    """Run ``text`` as IPython runs a cell: compiled under ``filename``, its lines in linecache."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    try:
        exec(compile(text, filename, "exec"), namespace)
    finally:
        del linecache.cache[filename]
    return namespace


def test_module_class_in_code_without_a_file():
    ns = run_cell(CELL, "<cell-1>")
    # each decorated class is the one at the running line, though both are named M
    assert 'def main(x: R.Tensor((2,), dtype="float32"))' in ns["first"].script()
    assert 'def main(x: R.Tensor((3,), dtype="int32"))' in ns["M"].script()


def test_code_without_any_source_text_is_a_clear_error():
    with pytest.raises(ScriptError, match=r"cannot read the source of 'M'.*define it in a file or a notebook cell"):
        exec(compile(CELL, "<nowhere>", "exec"), {"__name__": "__main__"})


def test_split_python_file_finds_the_script_parts():
    pf = split_python_file(CELL + "\nimport os\nprint(os.sep)\nmetadata = None\n")
    assert [(p.kind, p.name, p.first, p.last) for p in pf.parts] == [("module", "M", 4, 8), ("module", "M", 12, 16)]
    assert pf.imports == [(1, 1), (2, 2), (18, 18)] and pf.metadata == [(20, 20)]
    assert pf.other == [(10, 10), (19, 19)]
    assert split_python_file("def f(:\n") is None


def test_format_source_refuses_two_definitions_with_constants():
    text = '''\
metadata = tvmlite.load_json("""{"relax.expr.Constant":[{"dtype":"float32","shape":[1],"data":"AAAAAA=="}]}""")

@R.function
def f(x: R.Tensor((1,), dtype="float32")):
    return R.add(x, metadata["relax.expr.Constant"][0])

@R.function
def g(x: R.Tensor((1,), dtype="float32")):
    return R.add(x, metadata["relax.expr.Constant"][0])
'''
    with pytest.raises(ScriptError, match="a file can keep the constants .* of one definition only") as info:
        format_source(text, "two.py")
    assert (info.value.filename, info.value.line) == ("two.py", 7)


def python(code: str) -> str:
    """Run ``code`` in a fresh interpreter; its stdout."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_subpackages_after_a_bare_import():
    out = python("import sys, tvmlite\n"
                 "print('llvmlite' in sys.modules, 'tvmlite.backend' in sys.modules)\n"
                 "print(callable(tvmlite.backend.codegen), tvmlite.backend.__name__, tvmlite.cli.main.__name__)\n"
                 "print(all(n in dir(tvmlite) for n in ('backend', 'passes', 'compile', 'cpu')))\n")
    # the backend (and llvmlite) load on first use only, so `import tvmlite` stays fast
    assert out == "False False\nTrue tvmlite.backend main\nTrue\n"
