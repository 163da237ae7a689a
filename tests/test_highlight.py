"""Tests for the TVMScript Pygments lexer and the highlight helpers."""

import io
import re

import pytest
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, String

from tvmlite.script.highlight import (
    DTYPE_STRING,
    TVMScriptLexer,
    highlight,
    should_color,
)

SAMPLE = '''\
# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(var_matmul: T.handle, fc1_bias: T.Buffer((T.int64(128),), "float32"), var_T_add: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        matmul = T.match_buffer(var_matmul, (n, T.int64(128)))
        T_add = T.match_buffer(var_T_add, (n, T.int64(128)))
        # with T.block("root"):
        for ax0, ax1 in T.grid(n, T.int64(128)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(matmul[v_ax0, v_ax1], fc1_bias[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                with T.init():
                    T_add[v_ax0, v_ax1] = T.float32(0.0)
                T_add[v_ax0, v_ax1] = matmul[v_ax0, v_ax1] + fc1_bias[v_ax1]

    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32"), w: R.Tensor((128,), dtype="float32")) -> R.Tensor(("n", 128), dtype="float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, w), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            lv1: R.Tensor((n, 128), dtype="float32") = R.nn.relu(lv)
            c = metadata["relax.expr.Constant"][0]
            gv: R.Tensor((n, 128), dtype="float32") = R.add(lv1, c)
            R.output(gv)
        return gv
'''

from corpus_files import corpus_files  # noqa: E402  (tests/data/corpus)
CORPUS_FILES = corpus_files()


def tokens(text):
    return [(t, v) for t, v in TVMScriptLexer().get_tokens(text) if v.strip()]


def type_of(text, value):
    """Token type of the first token whose text is exactly `value`."""
    for t, v in tokens(text):
        if v == value:
            return t
    raise AssertionError(f"no token {value!r} in {tokens(text)!r}")


def test_sample_has_no_error_tokens():
    toks = list(TVMScriptLexer().get_tokens(SAMPLE))
    assert [v for t, v in toks if t in Error] == []
    assert "".join(v for _, v in toks) == SAMPLE  # lossless


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_has_no_error_tokens(path):
    text = path.read_text()
    assert [v for t, v in TVMScriptLexer().get_tokens(text) if t in Error] == []


def test_decorators_are_single_tokens():
    toks = tokens(SAMPLE)
    for deco in ("@I.ir_module", "@T.prim_func", "@R.function"):
        assert (Name.Decorator, deco) in toks


def test_r_tensor_is_a_type():
    assert tokens('x: R.Tensor((1,), dtype="float32")')[2:5] == [
        (Name.Builtin, "R"), (Operator, "."), (Keyword.Type, "Tensor")]


@pytest.mark.parametrize("member", ["Buffer", "int64", "handle", "float32"])
def test_t_type_members(member):
    assert type_of(f"y = T.{member}(1)", member) in Keyword.Type


@pytest.mark.parametrize("expr,names", [
    ("R.call_tir(f, (x,))", ["R", "call_tir"]),
    ("R.nn.relu(x)", ["R", "nn", "relu"]),
    ('T.axis.remap("SS", [i, j])', ["T", "axis", "remap"]),
    ('with T.block("b"):', ["T", "block"]),
    ("I.ir_module", ["I", "ir_module"]),
])
def test_dsl_names_are_builtins(expr, names):
    got = [v for t, v in tokens(expr) if t in Name.Builtin]
    assert got[:len(names)] == names


def test_prim_func_decorator_token_type():
    assert type_of("@T.prim_func\ndef f():\n    pass\n", "@T.prim_func") is Name.Decorator


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16x4", "bfloat16", "uint8"])
def test_dtype_strings_are_distinct(dtype):
    text = f'a = T.Buffer((4,), "{dtype}")\nb = R.Tensor((4,), dtype=\'{dtype}\')\n'
    dtype_tokens = [v for t, v in tokens(text) if t is DTYPE_STRING]
    assert dtype_tokens == [f'"{dtype}"', f"'{dtype}'"]
    assert DTYPE_STRING in String and DTYPE_STRING is not String.Double


def test_other_strings_are_ordinary():
    toks = tokens('with T.block("T_add"):\n    s = "float32 array"\n    r = "n"\n')
    assert not [v for t, v in toks if t is DTYPE_STRING]


def test_cls_and_metadata():
    toks = tokens(SAMPLE)
    assert (Name.Function, "add") in toks  # the def and cls.add
    i = toks.index((Name.Builtin.Pseudo, "cls"), toks.index((Name.Builtin, "call_tir")))
    assert toks[i + 2] == (Name.Function, "add")
    assert (Name.Constant, "metadata") in toks


def test_comments():
    toks = tokens(SAMPLE)
    assert (Comment.Special, '# with T.block("root"):') in toks
    assert (Comment.Preproc, "# from tvm.script import relax as R") in toks
    assert type_of("x = 1  # plain\n", "# plain") in Comment


def test_numbers():
    toks = tokens("a = T.int64(128) + T.float32(0.5)\n")
    assert [(t, v) for t, v in toks if t in Number] == [
        (Number.Integer, "128"), (Number.Float, "0.5")]


def test_highlight_ansi_roundtrips():
    out = highlight(SAMPLE)
    assert "\x1b[" in out
    assert re.sub(r"\x1b\[[0-9;]*m", "", out) == SAMPLE
    assert highlight("x = 1").endswith("1\x1b[39;49;00m")  # no newline added


def test_highlight_html():
    out = highlight(SAMPLE, html=True)
    assert out.lstrip().startswith("<div")
    assert "style=" in out
    q = r'(?:"|&quot;|&#34;)'
    dtype_style = re.search(rf'<span style="([^"]*)">{q}float32{q}</span>', out)
    plain_style = re.search(rf'<span style="([^"]*)">{q}T_add{q}</span>', out)
    assert dtype_style and plain_style
    assert dtype_style.group(1) != plain_style.group(1)


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


def test_should_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert should_color(_Stream(True)) is True
    assert should_color(_Stream(False)) is False
    assert should_color(io.StringIO()) is False
    assert should_color(object()) is False
    closed = _Stream(True)
    closed.close()
    closed.isatty = io.StringIO.isatty.__get__(closed)  # raises ValueError
    assert should_color(closed) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert should_color(_Stream(True)) is False


def test_entry_point_registered():
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name("tvmscript")
    except ClassNotFound:
        pytest.skip("the pygments.lexers entry point is not installed")
    assert isinstance(lexer, TVMScriptLexer)
    assert lexer.name == "TVMScript"


def test_does_not_claim_py_files():
    assert TVMScriptLexer.filenames == []
