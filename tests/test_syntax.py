"""Tests for the TVMScript grammar, syntax trees and syntax errors (tvmlite.script.syntax)."""
from __future__ import annotations

import ast
import logging
import pathlib
import pickle
import re
import threading
from typing import Any

import lark
import pytest

from tvmlite.script import syntax as S
from tvmlite.script.errors import ScriptError
from tvmlite.script.syntax import dump, parse_syntax
from tvmlite.script.syntax.lark_parser import new_parser, thread_parser
from tvmlite.script.syntax.messages import display_terminal

from corpus_files import corpus_files, read_corpus  # noqa: E402  (tests/data/corpus)
CORPUS_FILES = corpus_files()


def expr(source: str) -> S.Expr:
    """The expression of a one-line ``x = <source>`` script."""
    stmt = parse_syntax(f"x = {source}\n").body[0]
    assert isinstance(stmt, S.Assign)
    return stmt.value


def same(node: Any, expected: Any) -> None:
    """Assert two trees are equal, ignoring positions."""
    assert dump(node) == dump(expected)


# ============================================================================================
# Python's own parser as the oracle: ast -> tvmlite syntax nodes, positions included
# ============================================================================================

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
           ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


class _FromPython:
    """Convert Python's ``ast`` of an ASCII source into the tree parse_syntax should build."""

    def __init__(self, source: str) -> None:
        self.source = source
        starts = [0]
        for line in source.split("\n"):
            starts.append(starts[-1] + len(line) + 1)
        self.starts = starts

    def at(self, line: int, col0: int) -> int:
        return self.starts[line - 1] + col0

    def pos(self, n: Any) -> dict[str, int]:
        return dict(line=n.lineno, col=n.col_offset + 1, end_line=n.end_lineno,
                    end_col=n.end_col_offset + 1)

    def between(self, first: S.Node, last: S.Node) -> dict[str, int]:
        return dict(line=first.line, col=first.col, end_line=last.end_line, end_col=last.end_col)

    def written_parenthesized(self, n: ast.Tuple) -> bool:
        """Whether the tuple's own parentheses enclose it (not just a parenthesised first item)."""
        begin = self.at(n.lineno, n.col_offset)
        end = self.at(n.end_lineno, n.end_col_offset)
        if self.source[begin] != "(":
            return False
        depth = 0
        for i in range(begin, end):
            ch = self.source[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0:
                    return i == end - 1
        return False

    def stmts(self, body: list[ast.stmt]) -> tuple[S.Stmt, ...]:
        return tuple(self.stmt(s) for s in body)

    def module(self, tree: ast.Module) -> S.Module:
        body = self.stmts(tree.body)
        if not body:
            return S.Module((), line=1, col=1, end_line=1, end_col=1)
        return S.Module(body, **self.between(body[0], body[-1]))

    def opt(self, n: ast.expr | None) -> S.Expr | None:
        return None if n is None else self.expr(n)

    def stmt(self, n: ast.stmt) -> S.Stmt:
        e, opt, p = self.expr, self.opt, self.pos(n)
        if isinstance(n, ast.Expr):
            return S.ExprStmt(e(n.value), **p)
        if isinstance(n, ast.Assign):
            return S.Assign(e(n.targets[0]), e(n.value), **p)
        if isinstance(n, ast.AnnAssign):
            return S.AnnAssign(e(n.target), e(n.annotation), opt(n.value), **p)
        if isinstance(n, ast.AugAssign):
            return S.AugAssign(e(n.target), _BINOPS[type(n.op)], e(n.value), **p)
        if isinstance(n, ast.For):
            return S.For(e(n.target), e(n.iter), self.stmts(n.body), **p)
        if isinstance(n, ast.While):
            return S.While(e(n.test), self.stmts(n.body), **p)
        if isinstance(n, ast.If):
            return S.If(e(n.test), self.stmts(n.body), self.stmts(n.orelse), **p)
        if isinstance(n, ast.With):
            items = []
            for item in n.items:
                ctx, target = e(item.context_expr), opt(item.optional_vars)
                items.append(S.WithItem(ctx, target, **self.between(ctx, target or ctx)))
            return S.With(tuple(items), self.stmts(n.body), **p)
        if isinstance(n, ast.Return):
            return S.Return(opt(n.value), **p)
        if isinstance(n, ast.Assert):
            return S.Assert(e(n.test), opt(n.msg), **p)
        if isinstance(n, (ast.Pass, ast.Break, ast.Continue)):
            return getattr(S, type(n).__name__)(**p)
        if isinstance(n, ast.ImportFrom):
            names = tuple((a.name, a.asname) for a in n.names)
            return S.ImportFrom("." * n.level + (n.module or ""), names, **p)
        if isinstance(n, ast.Import):
            return S.Import(tuple((a.name, a.asname) for a in n.names), **p)
        decorators = tuple(e(d) for d in n.decorator_list)
        if decorators:   # our spans start at the "@" (written right before the decorator)
            p.update(line=decorators[0].line, col=decorators[0].col - 1)
        if isinstance(n, ast.ClassDef):
            return S.ClassDef(n.name, decorators, self.stmts(n.body), **p)
        assert isinstance(n, ast.FunctionDef)
        a = n.args
        defaults = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults)
        params = []
        for arg, default in zip(a.args, defaults):
            span = self.pos(arg)
            if default is not None:
                span.update(end_line=default.end_lineno, end_col=default.end_col_offset + 1)
            params.append(S.Param(arg.arg, opt(arg.annotation), opt(default), **span))
        return S.FunctionDef(n.name, tuple(params), opt(n.returns), decorators,
                             self.stmts(n.body), **p)

    def expr(self, n: ast.expr) -> S.Expr:
        e, opt, p = self.expr, self.opt, self.pos(n)
        if isinstance(n, ast.Name):
            return S.Name(n.id, **p)
        if isinstance(n, ast.Attribute):
            return S.Attribute(e(n.value), n.attr, **p)
        if isinstance(n, ast.Call):
            keywords = tuple(S.Keyword(k.arg, e(k.value), **self.pos(k)) for k in n.keywords)
            return S.Call(e(n.func), tuple(e(a) for a in n.args), keywords, **p)
        if isinstance(n, ast.Starred):
            return S.Starred(e(n.value), **p)
        if isinstance(n, ast.Subscript):
            index = n.slice
            if (isinstance(index, ast.Tuple) and index.elts
                    and not self.written_parenthesized(index)):
                items = tuple(e(x) for x in index.elts)
            else:
                items = (e(index),)
            return S.Subscript(e(n.value), items, **p)
        if isinstance(n, ast.Slice):
            return S.Slice(opt(n.lower), opt(n.upper), opt(n.step), **p)
        if isinstance(n, ast.Tuple):
            return S.Tuple(tuple(e(x) for x in n.elts), self.written_parenthesized(n), **p)
        if isinstance(n, ast.List):
            return S.List(tuple(e(x) for x in n.elts), **p)
        if isinstance(n, ast.Dict):
            return S.Dict(tuple(e(k) for k in n.keys), tuple(e(v) for v in n.values), **p)
        if isinstance(n, ast.Constant):
            return S.Constant(n.value, ast.get_source_segment(self.source, n), **p)
        if isinstance(n, ast.BinOp):
            return S.BinOp(_BINOPS[type(n.op)], e(n.left), e(n.right), **p)
        if isinstance(n, ast.UnaryOp):
            return S.UnaryOp(_UNARY[type(n.op)], e(n.operand), **p)
        if isinstance(n, ast.BoolOp):
            op = "and" if isinstance(n.op, ast.And) else "or"
            return S.BoolOp(op, tuple(e(v) for v in n.values), **p)
        if isinstance(n, ast.Compare):
            ops = tuple(_CMPOPS[type(o)] for o in n.ops)
            return S.Compare(e(n.left), ops, tuple(e(c) for c in n.comparators), **p)
        if isinstance(n, ast.IfExp):
            return S.IfExp(e(n.test), e(n.body), e(n.orelse), **p)
        if isinstance(n, ast.Lambda):
            return S.Lambda(tuple(a.arg for a in n.args.args), e(n.body), **p)
        raise TypeError(f"no tvmlite equivalent for {type(n).__name__}")


def python_tree(source: str) -> S.Module:
    """What parse_syntax must return for ``source``, computed with Python's parser."""
    return _FromPython(source).module(ast.parse(source))


# ============================================================================================
# The corpus
# ============================================================================================

@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_file_parses_like_python(path: pathlib.Path) -> None:
    source = path.read_text()
    tree = parse_syntax(source, str(path))
    assert isinstance(tree, S.Module) and tree.body
    assert tree == python_tree(source)   # structure and every span


def test_corpus_present() -> None:
    assert any(p.parent.name == "legacy" for p in CORPUS_FILES)


def test_corpus_statements() -> None:
    tree = parse_syntax(read_corpus("seed004_mlp_script.py"))
    (cls,) = tree.body
    assert isinstance(cls, S.ClassDef) and cls.name == "Module"
    same(cls.decorators, (S.Attribute(S.Name("I"), "ir_module"),))
    (main,) = cls.body
    assert isinstance(main, S.FunctionDef) and main.name == "main"
    assert [p.name for p in main.params] == ["x", "fc1_weight", "fc1_bias", "fc2_weight",
                                             "fc2_bias"]
    assert isinstance(main.body[1], S.With) and isinstance(main.body[2], S.Return)
    binding = main.body[1].body[0]
    assert isinstance(binding, S.AnnAssign) and dump(binding.target) == "Name(id='permute_dims')"


# ============================================================================================
# Trees: precedence and shapes
# ============================================================================================

a, b, c, d = (S.Name(n) for n in "abcd")


def num(text: str) -> S.Constant:
    return S.Constant(ast.literal_eval(text), text)


@pytest.mark.parametrize("source, expected", [
    ("a + b * c", S.BinOp("+", a, S.BinOp("*", b, c))),
    ("a * b + c", S.BinOp("+", S.BinOp("*", a, b), c)),
    ("a - b - c", S.BinOp("-", S.BinOp("-", a, b), c)),
    ("a ** b ** c", S.BinOp("**", a, S.BinOp("**", b, c))),
    ("-a ** b", S.UnaryOp("-", S.BinOp("**", a, b))),
    ("a ** -b", S.BinOp("**", a, S.UnaryOp("-", b))),
    ("-a * b", S.BinOp("*", S.UnaryOp("-", a), b)),
    ("~-a", S.UnaryOp("~", S.UnaryOp("-", a))),
    ("a < b < c", S.Compare(a, ("<", "<"), (b, c))),
    ("a not in b is not c", S.Compare(a, ("not in", "is not"), (b, c))),
    ("a | b ^ c & d", S.BinOp("|", a, S.BinOp("^", b, S.BinOp("&", c, d)))),
    ("a << b + c", S.BinOp("<<", a, S.BinOp("+", b, c))),
    ("a @ b // c % d", S.BinOp("%", S.BinOp("//", S.BinOp("@", a, b), c), d)),
    ("not a and b", S.BoolOp("and", (S.UnaryOp("not", a), b))),
    ("not a == b", S.UnaryOp("not", S.Compare(a, ("==",), (b,)))),
    ("a or b and c or d", S.BoolOp("or", (a, S.BoolOp("and", (b, c)), d))),
    ("a and b and c", S.BoolOp("and", (a, b, c))),
    ("x if c else y", S.IfExp(c, S.Name("x"), S.Name("y"))),
    ("a if b else c if d else a", S.IfExp(b, a, S.IfExp(d, c, a))),
    ("lambda x, y: x + y", S.Lambda(("x", "y"), S.BinOp("+", S.Name("x"), S.Name("y")))),
    ("lambda: 0", S.Lambda((), num("0"))),
    ("(a + b) * c", S.BinOp("*", S.BinOp("+", a, b), c)),
    ("a.b(c)[d]", S.Subscript(S.Call(S.Attribute(a, "b"), (c,), ()), (d,))),
    ("f(a, *b, k=c, **d)", S.Call(S.Name("f"), (a, S.Starred(b)),
                                  (S.Keyword("k", c), S.Keyword(None, d)))),
])
def test_expression_trees(source: str, expected: S.Expr) -> None:
    same(expr(source), expected)
    assert expr(source) == python_tree(f"x = {source}\n").body[0].value


def test_tuples() -> None:
    same(expr("()"), S.Tuple((), True))
    same(expr("(a,)"), S.Tuple((a,), True))
    same(expr("(a, b)"), S.Tuple((a, b), True))
    same(expr("(a, b,)"), S.Tuple((a, b), True))
    same(expr("a, b"), S.Tuple((a, b), False))
    same(expr("a,"), S.Tuple((a,), False))
    same(expr("(a)"), a)
    same(parse_syntax("return a, b\n").body[0], S.Return(S.Tuple((a, b), False)))
    same(parse_syntax("a, b = c, d\n").body[0],
         S.Assign(S.Tuple((a, b), False), S.Tuple((c, d), False)))
    loop = parse_syntax("for a, b in c:\n    pass\n").body[0]
    same(loop, S.For(S.Tuple((a, b), False), c, (S.Pass(),)))


def test_subscripts_and_slices() -> None:
    same(expr("A[0:16, i]"), S.Subscript(S.Name("A"), (S.Slice(num("0"), num("16"), None),
                                                       S.Name("i"))))
    same(expr("A[()]"), S.Subscript(S.Name("A"), (S.Tuple((), True),)))
    same(expr("A[i]"), S.Subscript(S.Name("A"), (S.Name("i"),)))
    same(expr("A[i, j]"), S.Subscript(S.Name("A"), (S.Name("i"), S.Name("j"))))
    same(expr("A[::2]"), S.Subscript(S.Name("A"), (S.Slice(None, None, num("2")),)))
    same(expr("A[:]"), S.Subscript(S.Name("A"), (S.Slice(None, None, None),)))
    same(expr("A[a:, :b, ::]"), S.Subscript(S.Name("A"), (
        S.Slice(a, None, None), S.Slice(None, b, None), S.Slice(None, None, None))))
    same(expr('T.Buffer[(1, 784), "float32"]'), S.Subscript(
        S.Attribute(S.Name("T"), "Buffer"),
        (S.Tuple((num("1"), num("784")), True), S.Constant("float32", '"float32"'))))


def test_lists_and_dicts() -> None:
    same(expr("[]"), S.List(()))
    same(expr("[a, b,]"), S.List((a, b)))
    same(expr("{}"), S.Dict((), ()))
    same(expr('{"a": 1, b: c,}'), S.Dict((S.Constant("a", '"a"'), b), (num("1"), c)))


@pytest.mark.parametrize("text, value", [
    ("0", 0), ("42", 42), ("1_000_000", 1000000), ("0x1F", 31), ("0o17", 15), ("0b101", 5),
    ("0XdeAD_beef", 0xDEADBEEF), ("00", 0),
    ("1.0", 1.0), ("1e-5", 1e-5), (".5", 0.5), ("1.", 1.0), ("1.5E+3", 1500.0),
    ("0.10000000000000001", 0.1), ("1_0.2_5", 10.25), ("-1e30", None),
])
def test_number_literals_keep_their_text(text: str, value: Any) -> None:
    node = expr(text)
    if value is None:   # a negative literal is a unary minus applied to the number
        assert isinstance(node, S.UnaryOp) and node.op == "-"
        node = node.operand
        text = text[1:]
        value = float(text)
    assert isinstance(node, S.Constant)
    assert node.text == text and node.value == value and type(node.value) is type(value)


@pytest.mark.parametrize("text, value", [
    ('"float32"', "float32"), ("'single'", "single"), ('""', ""), ("''", ""),
    (r'"a\tb\n\"q\"\\"', 'a\tb\n"q"\\'), (r"'\x41\u00e9\101'", "Aé" + "A"),
    ('"""tri"ple"""', 'tri"ple'), ("'''a\nb'''", "a\nb"), (r"r'\d+\n'", "\\d+\\n"),
    ("b'by'", b"by"), (r"Rb'\x00'", b"\\x00"), ('"a" \'b\'', "ab"), ('"a" "b" "c"', "abc"),
])
def test_string_literals(text: str, value: str | bytes) -> None:
    node = expr(text)
    assert isinstance(node, S.Constant)
    assert node.value == value and type(node.value) is type(value)
    assert node.text == text


def test_constants_true_false_none_ellipsis() -> None:
    for text, value in [("True", True), ("False", False), ("None", None), ("...", Ellipsis)]:
        node = expr(text)
        assert isinstance(node, S.Constant) and node.value is value and node.text == text


def test_module_level_statements() -> None:
    source = (
        "from tvm.script import ir as I, relax as R\n"
        "from ..pkg.mod import (a, b as c,)\n"
        "from . import x\n"
        "import a.b as c, d\n"
        "@I.ir_module\n"
        "class Module:\n"
        "    cls = Module\n"
        '    f = R.ExternFunc("f")\n'
        '    I.module_attrs({"k": 1})\n'
    )
    imp1, imp2, imp3, imp4, cls = parse_syntax(source).body
    same(imp1, S.ImportFrom("tvm.script", (("ir", "I"), ("relax", "R"))))
    same(imp2, S.ImportFrom("..pkg.mod", (("a", None), ("b", "c"))))
    same(imp3, S.ImportFrom(".", (("x", None),)))
    same(imp4, S.Import((("a.b", "c"), ("d", None))))
    assert isinstance(cls, S.ClassDef)
    assert [type(s).__name__ for s in cls.body] == ["Assign", "Assign", "ExprStmt"]
    assert parse_syntax(source) == python_tree(source)


def test_function_headers() -> None:
    source = (
        "@R.function(pure=False, private=True)\n"
        "# a comment between decorators\n"
        "@T.prim_func(private=True)  # trailing comment\n"
        "def main(\n"
        '    x: R.Tensor((1, 784), dtype="float32"),  # comment inside the brackets\n'
        "    n: T.int64 = 5,\n"
        ") -> R.Tensor((1, 10)):\n"
        "    # a comment in the body\n"
        "    def inner(a, b=1):\n"
        "\n"
        "        return a\n"
        "        # trailing comment\n"
        "    return inner\n"
    )
    (fn,) = parse_syntax(source).body
    assert isinstance(fn, S.FunctionDef) and fn.name == "main"
    assert [dump(d) for d in fn.decorators] == [
        "Call(func=Attribute(value=Name(id='R'), attr='function'), args=(), keywords=("
        "Keyword(arg='pure', value=Constant(value=False, text='False')), "
        "Keyword(arg='private', value=Constant(value=True, text='True'))))",
        "Call(func=Attribute(value=Name(id='T'), attr='prim_func'), args=(), keywords=("
        "Keyword(arg='private', value=Constant(value=True, text='True')),))"]
    x, n = fn.params
    assert (x.name, x.default, n.name) == ("x", None, "n")
    same(n.annotation, S.Attribute(S.Name("T"), "int64"))
    same(n.default, num("5"))
    assert dump(fn.returns).startswith("Call(func=Attribute(value=Name(id='R'), attr='Tensor')")
    inner, ret = fn.body
    assert isinstance(inner, S.FunctionDef) and [p.name for p in inner.params] == ["a", "b"]
    assert isinstance(ret, S.Return)
    assert (fn.line, fn.col, fn.end_line, fn.end_col) == (1, 1, 13, 17)
    assert parse_syntax(source) == python_tree(source)


def test_statements() -> None:
    source = (
        "def f(x):\n"
        "    y: T.int32 = 1\n"
        "    z: T.int32\n"
        "    y += 1\n"
        "    A[i, 0:2] //= y\n"
        "    a.b **= 2\n"
        "    while y < 3:\n"
        "        break\n"
        "    if a:\n"
        "        pass\n"
        "    elif b:\n"
        "        continue\n"
        "    elif c: pass\n"
        "    else:\n"
        "        return\n"
        "    with A as (p, q), B:\n"
        "        with T.block():\n"
        '            assert x, "message"\n'
        "            assert y\n"
    )
    tree = parse_syntax(source)
    assert tree == python_tree(source)
    body = tree.body[0].body
    assert [type(s).__name__ for s in body] == [
        "AnnAssign", "AnnAssign", "AugAssign", "AugAssign", "AugAssign", "While", "If", "With"]
    assert body[1].value is None and body[3].op == "//" and body[4].op == "**"
    if_stmt = body[6]
    # elif becomes an If alone in the else branch, positioned at the "elif".
    (elif1,) = if_stmt.orelse
    assert isinstance(elif1, S.If) and (elif1.line, elif1.col) == (11, 5)
    (elif2,) = elif1.orelse
    assert isinstance(elif2, S.If) and isinstance(elif2.body[0], S.Pass)
    assert isinstance(elif2.orelse[0], S.Return)
    with_stmt = body[7]
    first, second = with_stmt.items
    same(first, S.WithItem(S.Name("A"), S.Tuple((S.Name("p"), S.Name("q")), True)))
    assert second.target is None and dump(second.context) == "Name(id='B')"


def test_positions() -> None:
    source = "x = foo.bar(a, (b + c) * d)[0]\n"
    value = expr(source[4:-1])
    assert value == python_tree(source).body[0].value
    stmt = parse_syntax(source).body[0]
    assert (stmt.line, stmt.col, stmt.end_line, stmt.end_col) == (1, 1, 1, 31)
    call = value.value
    assert isinstance(call, S.Call)
    assert (call.col, call.end_col) == (5, 28)          # foo.bar( ... )
    assert (call.func.col, call.func.end_col) == (5, 12)
    name = call.func.value
    assert (name.line, name.col, name.end_line, name.end_col) == (1, 5, 1, 8)   # just "foo"
    product = call.args[1]
    assert (product.col, product.end_col) == (16, 27)   # (b + c) * d, from the "("
    assert (product.left.col, product.left.end_col) == (17, 22)   # b + c, without parens
    multi = parse_syntax("x = f(a,\n      b)\n").body[0].value
    assert (multi.line, multi.col, multi.end_line, multi.end_col) == (1, 5, 2, 9)


def test_line_continuation_and_blank_lines() -> None:
    source = "\n\n# header\nx = 1 + \\\n    2\n\n\ny = [\n  1,\n\n  2,\n]\n   \n"
    tree = parse_syntax(source)
    assert tree == python_tree(source)
    assert len(tree.body) == 2


def test_crlf_and_missing_final_newline() -> None:
    tree = parse_syntax("if a:\r\n    b = 1\r\nc = 2")
    assert [type(s).__name__ for s in tree.body] == ["If", "Assign"]
    assert parse_syntax("") == S.Module((), line=1, col=1, end_line=1, end_col=1)
    assert parse_syntax("# only a comment").body == ()


def test_walk_and_dump() -> None:
    tree = parse_syntax("x = f(a, b=[1])\n")
    names = [n.id for n in S.walk(tree) if isinstance(n, S.Name)]
    assert names == ["x", "f", "a"]
    assert dump(expr("a[1:]"), positions=True) == (
        "Subscript(value=Name(id='a')@1:5-1:6, index=(Slice(lower=Constant(value=1, text='1')"
        "@1:7-1:8, upper=None, step=None)@1:7-1:9,))@1:5-1:10")


def test_nodes_are_frozen_and_hashable() -> None:
    node = expr("a + 1")
    with pytest.raises(AttributeError):
        node.op = "-"   # type: ignore[misc]
    assert node == expr("a + 1") and hash(node) == hash(expr("a + 1"))
    assert repr(S.Name("a", line=3)) == "Name(id='a')"


# ============================================================================================
# Syntax errors
# ============================================================================================

BAD_INPUTS = [
    # (source, line, col, message substring)
    ("def f(x)\n    return x\n", 1, 9, "expected ':' after the function signature"),
    ("def f(x) -> int\n    pass\n", 1, 16, "expected ':' after the function signature"),
    ("for i in range(3)\n    pass\n", 1, 18, "expected ':' at the end of the 'for' statement"),
    ("if x\n    pass\n", 1, 5, "expected ':' after the 'if' condition"),
    ("class A\n    pass\n", 1, 8, "expected ':' after the class name"),
    ("if x:\n    pass\nelse\n    pass\n", 3, 5, "expected ':' after 'else'"),
    ("x = (1 +\n", 1, 5, "unexpected end of input: '(' opened at line 1 col 5 is never closed"),
    ("y = 1\nz = f(a,\n      b\n", 2, 6, "'(' opened at line 2 col 6 is never closed"),
    ("x = f(a))\n", 1, 9, "unexpected ')'"),
    ("x = )\n", 1, 5, "unexpected ')'"),
    ("x = f(a]\n", 1, 8, "unexpected ']': '(' opened at line 1 col 6 is not closed"),
    ("def f():\n    x = 1\n  y = 2\n", 3, 3, "unindent does not match any outer indentation level"),
    ("class A:\n    def f(self):\n        pass\n   x = 1\n", 4, 4,
     "unindent does not match any outer indentation level"),
    ("def f():\n\tx = 1\n", 2, 1, "tab in indentation"),
    ("x = 1\n  \ty = 2\n", 2, 3, "tab in indentation"),
    ("x = pass\n", 1, 5, "keyword 'pass'"),
    ("def = 3\n", 1, 5, "expected a name after 'def'"),
    ("def (x):\n    pass\n", 1, 5, "expected a name after 'def'"),
    ("x = a $ b\n", 1, 7, "unexpected character '$'"),
    ('x = "abc\n', 1, 5, "unterminated string literal"),
    ('x = """abc\ny = 1\n', 1, 5, "unterminated triple-quoted string literal"),
    ("def f():\nx = 1\n", 2, 1, "expected an indented block after function definition on line 1"),
    ("for x in y:\n\n", 1, 12, "expected an indented block after 'for' statement on line 1"),
    ("  x = 1\n", 1, 3, "unexpected indentation"),
    ("x = 1\n    y = 2\n", 2, 5, "unexpected indentation"),
    ("x = 1 +\n", 1, 8, "unexpected end of line; expected an expression"),
    ("f(a b)\n", 1, 5, "unexpected name 'b' (missing ','?)"),
    ("x = f(a\ny = 2\n", 2, 1, "missing ',' or ')' for the '(' opened at line 1 col 6"),
    ("x = a orb\n", 1, 7, "unexpected name 'orb'"),
    ("x = a if b\n", 1, 11, "expected 'else'"),
    ("@dec\nx = 1\n", 2, 1, "expected one of: '@', 'class', 'def'"),
    ("f(x=1, y)\n", 1, 8, "positional argument follows keyword argument"),
    ("f(x=1, x=2)\n", 1, 8, "keyword argument repeated: x"),
    ("f() = x\n", 1, 1, "cannot assign to a function call"),
    ("a + 1 += 2\n", 1, 1, "cannot assign to an expression"),
    ("for f() in x:\n    pass\n", 1, 5, "cannot assign to a function call"),
    ("x = 007\n", 1, 5, "leading zeros in decimal integer literals"),
    ("def True(): pass\n", 1, 5, "'True' cannot be used as a name"),
    ("x = a.None\n", 1, 7, "'None' cannot be used as a name"),
    ("raise X\n", 1, 1, "'raise' is not supported"),
    ("x = 'a' b'b'\n", 1, 5, "cannot mix bytes and str literals"),
    ("def f(a=1, b):\n    pass\n", 1, 12, "without a default follows a parameter with a default"),
    ("def f(a, a):\n    pass\n", 1, 10, "duplicate parameter 'a'"),
    ("def f():\n    return\n        x\n", 3, 9, "unexpected indentation"),
    ("x = 1; y = 2\n", 1, 6, "unexpected ';'"),
    ("x = a.\n", 1, 7, "expected a name"),
    ("x = {a}\n", 1, 7, "unexpected '}'; expected ':'"),
    ("a, b: int = 1\n", 1, 5, "unexpected ':'"),
    ("x = 1 \\ 2\n", 1, 7, "line continuation"),
    ('x = "\\N{no such name}"\n', 1, 5, "invalid string literal"),
]

INTERNAL_NAMES = re.compile(r"__ANON|\b(LPAR|RPAR|LSQB|RSQB|COLON|COMMA|NAME|NUMBER|STRING)\b|"
                            r"_NEWLINE|_INDENT|_DEDENT|\$END|Token\(|Tree\(")


@pytest.mark.parametrize("source, line, col, fragment", BAD_INPUTS,
                         ids=[repr(case[0])[:40] for case in BAD_INPUTS])
def test_syntax_errors(source: str, line: int, col: int, fragment: str) -> None:
    with pytest.raises(ScriptError) as info:
        parse_syntax(source, "bad.py")
    err = info.value
    assert (err.line, err.col) == (line, col), str(err)
    assert fragment in err.message, str(err)
    assert not INTERNAL_NAMES.search(err.message), err.message
    assert str(err).startswith(f"bad.py:{line}:{col}: error: ")


def test_error_text_layout() -> None:
    with pytest.raises(ScriptError) as info:
        parse_syntax("def f():\n    return foo(1,, 2)\n", "m.py")
    assert str(info.value) == (
        "m.py:2:18: error: unexpected ','; expected one of: an expression, ')', '*', '**'\n"
        "        return foo(1,, 2)\n"
        "                     ^")
    with pytest.raises(ScriptError) as info:
        parse_syntax("x = pass\n")
    assert str(info.value) == (
        "<string>:1:5: error: unexpected keyword 'pass'\n"
        "    x = pass\n"
        "        ^^^^")


def test_unclosed_bracket_at_end_of_input_message() -> None:
    with pytest.raises(ScriptError) as info:
        parse_syntax("a = 1\nb = 2\nc = f(1,\n      2,\n")
    err = info.value
    assert err.message == "unexpected end of input: '(' opened at line 3 col 6 is never closed"
    assert (err.line, err.col, err.end_col) == (3, 6, 7)


def test_not_a_string() -> None:
    with pytest.raises(ScriptError):
        parse_syntax(b"x = 1\n")   # type: ignore[arg-type]


def test_random_corruptions_only_raise_script_errors() -> None:
    import random

    rng = random.Random(1234)
    texts = [p.read_text() for p in CORPUS_FILES]
    pieces = list("()[]{}:,.=+-*/@#'\"\\\t \n$;!~<>") + ["pass", "def ", "else", "\n    ", "  "]
    for _ in range(150):
        text = rng.choice(texts)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(text) + 1)
            if rng.random() < 0.5:
                text = text[:at] + text[at + rng.randrange(1, 20):]
            else:
                text = text[:at] + rng.choice(pieces) + text[at:]
        try:
            tree = parse_syntax(text)
        except ScriptError as err:
            assert err.line is not None and err.col is not None
            assert not INTERNAL_NAMES.search(err.message), err.message
        else:   # whatever we accept, Python accepts too, with the same tree
            assert tree == python_tree(text)


# ============================================================================================
# ScriptError itself
# ============================================================================================

def test_script_error_format() -> None:
    source = "def f():\n    x = foo(1)\n"
    err = ScriptError("bad call", source=source, filename="a.py", line=2, col=9, end_col=15)
    assert str(err) == "a.py:2:9: error: bad call\n        x = foo(1)\n            ^^^^^^"
    assert (err.message, err.filename, err.line, err.col, err.end_col) == (
        "bad call", "a.py", 2, 9, 15)
    assert err.source_line == "    x = foo(1)"
    # At least one caret; never past the end of the line.
    assert str(ScriptError("m", source=source, line=2, col=9)).endswith("\n            ^")
    assert str(ScriptError("m", source=source, line=2, col=9, end_col=99)).endswith("^^^^^^")
    # Tabs in the shown line are kept so that the carets line up.
    tabbed = ScriptError("m", source="\tx = 1\n", line=1, col=2, end_col=3)
    assert str(tabbed).split("\n")[1:] == ["    \tx = 1", "    \t^"]
    assert str(ScriptError("no position", filename="b.py")) == "b.py: error: no position"
    assert str(ScriptError("no source", line=3, col=4)) == "<string>:3:4: error: no source"


def test_script_error_at_node_and_pickle() -> None:
    source = "x = f(a,\n      b)\n"
    call = parse_syntax(source).body[0].value
    err = ScriptError.at(call, "multi-line", source, "c.py")
    assert (err.line, err.col, err.end_col) == (1, 5, 9)
    assert str(err) == "c.py:1:5: error: multi-line\n    x = f(a,\n        ^^^^"
    name = call.args[0]
    assert str(ScriptError.at(name, "here", source)).endswith("\n          ^")
    copy = pickle.loads(pickle.dumps(err))
    assert str(copy) == str(err) and isinstance(copy, ScriptError)


# ============================================================================================
# The grammar and the parser
# ============================================================================================

class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _lark_debug_messages(build: Any) -> list[str]:
    handler = _Records()
    level = lark.logger.level
    lark.logger.addHandler(handler)
    lark.logger.setLevel(logging.DEBUG)
    try:
        build()
    finally:
        lark.logger.removeHandler(handler)
        lark.logger.setLevel(level)
    return handler.messages


def test_conflict_detection_works() -> None:
    # Lark resolves shift/reduce conflicts silently; with debug=True it logs them.
    dangling_else = """
        start: stmt
        stmt: "if" "x" stmt ["else" stmt] | "y"
        %ignore " "
    """
    messages = _lark_debug_messages(lambda: lark.Lark(dangling_else, parser="lalr", debug=True))
    assert any("conflict" in m.lower() for m in messages)


def test_grammar_has_no_lalr_conflicts() -> None:
    messages = _lark_debug_messages(lambda: new_parser(debug=True, cache=False))
    assert [m for m in messages if "conflict" in m.lower()] == []


def test_every_terminal_has_a_readable_name() -> None:
    for term in thread_parser().terminals:
        if term.name in ("COMMENT",) or term.name.startswith("__IGNORE"):
            continue
        shown = display_terminal(term.name)
        assert shown and not INTERNAL_NAMES.search(shown), term.name


# Nesting up to the limits parses without recursion; beyond them is a ScriptError
# ("nesting too deep") located inside the text, never a RecursionError.
_N = 190   # a bit below MAX_DEPTH/MAX_BRACKETS: the statement and module add levels
_DEEP_SOURCES = {
    "parens": lambda n: "x = " + "(" * n + "1" + ")" * n,
    "lists": lambda n: "x = " + "[" * n + "]" * n,
    "calls": lambda n: "x = " + "f(" * n + ")" * n,
    "dicts": lambda n: "x = " + "{1: " * n + "1" + "}" * n,
    "minus": lambda n: "x = " + "-" * n + "1",
    "not": lambda n: "x = " + "not " * n + "a",
    "power": lambda n: "x = " + " ** ".join(["a"] * n),
    "plus": lambda n: "x = " + " + ".join(["a"] * n),
    "ifexp": lambda n: "x = " + " if c else ".join(["a"] * n),
    "lambda": lambda n: "x = " + "lambda: " * n + "1",
    "trailers": lambda n: "x = a" + ".b" * (n // 2) + "[0]" * (n // 2),
    "blocks": lambda n: ("".join("    " * i + "if x:\n" for i in range(min(n, S.MAX_INDENT)))
                         + "    " * min(n, S.MAX_INDENT) + "pass\n"),   # 100 levels at most
    "deep-blocks": lambda n: "".join(" " * i + "if x:\n" for i in range(n)) + " " * n + "pass\n",
}


@pytest.mark.parametrize("kind", sorted(set(_DEEP_SOURCES) - {"deep-blocks"}))
def test_deep_nesting_parses(kind: str) -> None:
    tree = parse_syntax(_DEEP_SOURCES[kind](_N))
    assert isinstance(tree, S.Module) and len(tree.body) == 1
    assert sum(1 for _ in S.walk(tree)) >= 3


@pytest.mark.parametrize("kind", sorted(set(_DEEP_SOURCES) - {"blocks"}))
def test_too_deep_nesting_is_a_script_error(kind: str) -> None:
    source = _DEEP_SOURCES[kind](10_000)
    with pytest.raises(ScriptError, match="nesting too deep") as info:
        parse_syntax(source)
    err = info.value
    lines = source.split("\n")
    assert err.line is not None and 1 <= err.line <= len(lines)
    assert err.col is not None and 1 <= err.col <= len(lines[err.line - 1]) + 1


def test_depth_is_not_part_of_a_node() -> None:
    a = parse_syntax("x = -(-1)\n").body[0]
    b = parse_syntax("x = -1\n").body[0]
    assert a.value.depth == 3 and b.value.depth == 2
    assert S.Name("x") == S.Name("x", depth=7) and "depth" not in dump(a, positions=True)


@pytest.mark.parametrize("source", [
    "x = " + "(" * 150,
    "x = " + "(" * 150 + "1" + ")" * 149,
    "x = " + "[" * 150 + ")" * 150,
    "x = " + "-" * 3000,
], ids=["unclosed", "one-short", "mismatched", "no-operand"])
def test_deep_nesting_errors_are_script_errors(source: str) -> None:
    with pytest.raises(ScriptError):
        parse_syntax(source)


def test_parsing_in_threads() -> None:
    sources = [p.read_text() for p in CORPUS_FILES]
    sources += ["x = (1 +\n", "def f(:\n"]

    def outcome(src: str) -> str:
        try:
            return dump(parse_syntax(src), positions=True)
        except ScriptError as err:
            return str(err)

    expected = [outcome(s) for s in sources]
    results: list[list[str]] = []

    def work(shift: int) -> None:
        # Each thread walks the sources from a different place so that parses overlap.
        order = sources[shift:] + sources[:shift]
        got = [outcome(s) for s in order]
        results.append(got[-shift:] + got[:-shift] if shift else got)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4
