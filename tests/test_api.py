"""The public API: decorators, IRModule access, printing entry points, structural helpers."""
import io
import textwrap

import numpy as np
import pytest

from tvmlite.ir import IRModule, assert_structural_equal, structural_equal, structural_hash, well_formed
from tvmlite.ir import relax as rx
from tvmlite.script import ScriptError, from_source, parse_file, show
from tvmlite.script import ir as I
from tvmlite.script import relax as R
from tvmlite.script import tir as T


@I.ir_module
class AddOne:
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1.0)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = AddOne
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
        return y


ADD_ONE_TEXT = '''\
# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        # with T.block("root"):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] + T.float32(1.0)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
        return y
'''


def test_ir_module_decorator_parses_the_class():
    assert isinstance(AddOne, IRModule)
    assert [gv.name_hint for gv in AddOne.get_global_vars()] == ["add_one", "main"]
    assert AddOne.script() == ADD_ONE_TEXT.rstrip("\n")  # like TVM: no trailing newline
    assert str(AddOne) == AddOne.script()


def test_module_access_api():
    gv = AddOne.get_global_var("main")
    assert repr(gv) == 'I.GlobalVar("main")'
    assert AddOne[gv] is AddOne["main"]
    assert [g.name_hint for g, _ in AddOne.functions_items()] == ["add_one", "main"]
    mod = AddOne.copy()
    new_main = from_source(ADD_ONE_TEXT)["main"]
    mod.update_func(mod.get_global_var("main"), new_main)
    assert mod["main"] is new_main and AddOne["main"] is not new_main


def test_from_expr_names_the_function_main_or_its_symbol():
    func = AddOne["main"]
    assert [g.name_hint for g in IRModule.from_expr(func).get_global_vars()] == ["main"]


def test_lone_function_decorator_and_caller_scope_constants():
    weight = np.arange(4, dtype="float32")

    @R.function
    def f(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y = R.multiply(x, weight)
        return y

    assert isinstance(f, rx.Function)
    const = f.body.blocks[0].bindings[0].value.args[1]
    assert isinstance(const, rx.Constant)
    np.testing.assert_array_equal(const.data, weight)
    # show_meta keeps the constant bit for bit through a round trip.
    again = from_source(f.script(show_meta=True))
    assert structural_equal(f, again)
    assert structural_hash(f) == structural_hash(again)


def test_prim_func_decorator_with_options():
    @T.prim_func(private=True)
    def scale(A: T.Buffer((8,), "float32")):
        for i in T.parallel(8):
            A[i] = A[i] * T.float32(2.0)

    assert "global_symbol" not in scale.attrs
    assert scale.script().splitlines()[2] == "@T.prim_func(private=True)"


def test_decorator_error_names_the_users_file_and_line():
    src = textwrap.dedent('''\
        from tvmlite.script import relax as R

        @R.function
        def f(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
            y = R.ad(x, x)
            return y
    ''')
    namespace: dict = {}
    with pytest.raises(ScriptError) as info:
        exec(compile(src, "<user>", "exec"), namespace)  # noqa: S102 - inspect can't read <user>
    assert "cannot read the source" in str(info.value)


def test_parse_file_reports_the_path(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("@R.function\ndef f(x: R.Tensor((2,), \"float32\")) -> R.Tensor((2,), \"float32\"):\n    return y\n")
    with pytest.raises(ScriptError) as info:
        parse_file(str(path))
    err = info.value
    assert (err.filename, err.line, err.col) == (str(path), 3, 12)
    assert str(err).startswith(f"{path}:3:12: error: name 'y' is not defined")


def test_show_plain_when_piped_and_colored_on_request():
    buf = io.StringIO()
    show(AddOne, file=buf)
    assert buf.getvalue() == ADD_ONE_TEXT
    colored = io.StringIO()
    show(AddOne, file=colored, color=True)
    assert "\x1b[" in colored.getvalue()
    assert "<div" in AddOne._repr_html_()


def test_structural_equality_ignores_names_but_not_structure():
    a = from_source(ADD_ONE_TEXT)
    # Variables, buffers and blocks match by position: their names are hints (as in TVM, whose
    # equality ignores block names too).
    renamed = from_source(ADD_ONE_TEXT.replace("vi", "v_i").replace("y = ", "out = ").replace("return y", "return out")
                          .replace('T.block("B")', 'T.block("B_renamed")'))
    assert 'T.block("B_renamed")' in renamed.script()
    assert structural_equal(a, renamed)
    assert structural_hash(a) == structural_hash(renamed)
    changed = from_source(ADD_ONE_TEXT.replace("T.float32(1.0)", "T.float32(2.0)"))
    assert not structural_equal(a, changed)
    with pytest.raises(AssertionError, match="add_one"):
        assert_structural_equal(a, changed)


def test_well_formed_on_parsed_module():
    assert well_formed(AddOne)


def test_broadcast_keeps_leading_unit_dims():
    mod = from_source(textwrap.dedent('''\
        @R.function
        def f(x: R.Tensor((1, 256), "float32"), b: R.Tensor((256,), "float32")):
            y = R.add(x, b)
            return y
    '''))
    assert 'y: R.Tensor((1, 256), dtype="float32") = R.add(x, b)' in mod.script()
