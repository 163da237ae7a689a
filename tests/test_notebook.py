"""The decorators in a Jupyter notebook: cells run in a real IPython kernel (nbclient + ipykernel),
where a cell's text lives only in ``linecache``, not in a file."""
from __future__ import annotations

import textwrap

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook test needs nbformat (pip install nbclient ipykernel)")
nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbclient (pip install nbclient ipykernel)")
pytest.importorskip("ipykernel", reason="the notebook test needs ipykernel (pip install nbclient ipykernel)")

CELLS = [
    "from tvmlite.script import ir as I\nfrom tvmlite.script import relax as R",
    # A module in a cell of its own, with a symbolic size from the cell above's Python scope.
    '''\
    @I.ir_module
    class MyModule:
        @R.function
        def main(x: R.Tensor(("n", 4), dtype="float32")):
            with R.dataflow():
                y = R.nn.relu(R.add(x, x))
                R.output(y)
            return y
    print(MyModule.script())''',
    # The same class name again in a later cell: the new definition is the one parsed.
    '''\
    @I.ir_module
    class MyModule:
        @R.function
        def main(x: R.Tensor((2,), dtype="float32")):
            return x
    print(MyModule.script())''',
    # A lone function, and a module defined inside a function body.
    '''\
    @R.function
    def f(x: R.Tensor((3,), dtype="float32")):
        return R.exp(x)
    def make():
        @I.ir_module
        class Inner:
            @R.function
            def main(x: R.Tensor((5,), dtype="int32")):
                return x
        return Inner
    print(f.script())
    print(make().script())''',
    # A mistake is reported at its line in the cell, with the caret under it.
    '''\
    @I.ir_module
    class Broken:
        @R.function
        def main(x: R.Tensor((2,), dtype="float32")):
            return R.ad(x, x)''',
]

HEADER = "# from tvmlite.script import ir as I\n# from tvmlite.script import relax as R\n\n"
WANT_1 = "# from tvmlite.script import ir as I\n# from tvmlite.script import tir as T\n" \
    "# from tvmlite.script import relax as R\n\n" + '''\
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, 4), dtype="float32") = R.add(x, x)
            y: R.Tensor((n, 4), dtype="float32") = R.nn.relu(lv)
            R.output(y)
        return y
'''
WANT_2 = HEADER + '''\
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        return x
'''
WANT_3 = '''\
# from tvmlite.script import relax as R

@R.function
def f(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
    gv: R.Tensor((3,), dtype="float32") = R.exp(x)
    return gv
''' + HEADER + '''\
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((5,), dtype="int32")) -> R.Tensor((5,), dtype="int32"):
        return x
'''


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201 - a notebook node
    """The notebook above, run in a fresh kernel (errors in cells are kept as outputs)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent(c)) for c in CELLS]
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path_factory.mktemp("nb"))}})
    client.execute()
    return nb


def stdout(cell) -> str:  # noqa: ANN001 - a notebook cell
    """What a cell printed."""
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def errors(cell) -> list:  # noqa: ANN001 - a notebook cell
    """The error outputs of a cell."""
    return [o for o in cell.outputs if o.output_type == "error"]


def test_module_class_in_a_cell_prints(executed) -> None:  # noqa: ANN001
    assert not errors(executed.cells[1]), errors(executed.cells[1])
    assert stdout(executed.cells[1]) == WANT_1


def test_redefined_class_in_a_later_cell_is_the_new_one(executed) -> None:  # noqa: ANN001
    assert not errors(executed.cells[2]), errors(executed.cells[2])
    assert stdout(executed.cells[2]) == WANT_2


def test_function_and_module_in_a_function_body(executed) -> None:  # noqa: ANN001
    assert not errors(executed.cells[3]), errors(executed.cells[3])
    assert stdout(executed.cells[3]) == WANT_3


def test_mistake_is_located_in_the_cell(executed) -> None:  # noqa: ANN001
    (err,) = errors(executed.cells[4])
    assert err.ename == "ScriptError"
    # line 5 of the cell, column 16: `R.ad`, with the caret line under it
    assert err.evalue.split("\n")[0].endswith(":5:16: error: R.ad is not a known Relax function (did you mean 'R.add'?)")
    assert err.evalue.split("\n")[1:] == ["            return R.ad(x, x)", "                   ^^^^"]
