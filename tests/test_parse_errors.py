"""Mistakes in TVMScript: each raises a ScriptError at the offending token (line and column) with
a message saying what was expected."""
from __future__ import annotations

import pytest

from tvmlite.script.errors import ScriptError
from tvmlite.script.parser import from_source

R_HEAD = ('@R.function\n'
          'def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):\n')
T_HEAD = ('@T.prim_func\n'
          'def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):\n')
BLOCK = "    for i in range(16):\n        with T.block('b'):\n"


def module(*lines: str) -> str:
    return "@I.ir_module\nclass M:\n" + "".join(f"    {line}\n" for line in lines)


# (name, source, line, column, message substring)
CASES = [
    ("undefined name with suggestion", R_HEAD + "    z = R.add(x, yy)\n    return z\n", 3, 18,
     "name 'yy' is not defined (did you mean 'y'?)"),
    ("unknown op", R_HEAD + "    z = R.ad(x, y)\n    return z\n", 3, 9, "did you mean 'R.add'?"),
    ("unknown nn op", R_HEAD + "    z = R.nn.rleu(x)\n    return z\n", 3, 9, "did you mean 'R.nn.relu'?"),
    ("unexpected keyword", R_HEAD + "    z = R.add(x, y, foo=1)\n    return z\n", 3, 21,
     "unexpected keyword argument 'foo'"),
    ("too many arguments", R_HEAD + "    z = R.nn.relu(x, y)\n    return z\n", 3, 22, "at most 1 positional"),
    ("broadcast mismatch", R_HEAD + '    z = R.add(x, R.const([1.0, 2.0], "float32"))\n    return z\n', 3, 18,
     "cannot broadcast"),
    ("bad attribute", R_HEAD + "    z = R.permute_dims(x, axes=[1, 0, 2])\n    return z\n", 3, 27, "axes"),
    ("annotation shape mismatch", R_HEAD + '    z: R.Tensor((3, 3), "float32") = R.add(x, y)\n    return z\n', 3, 8,
     "does not match the value"),
    ("annotation dtype mismatch", R_HEAD + '    z: R.Tensor((2, 3), "int32") = R.add(x, y)\n    return z\n', 3, 8,
     'dtype="float32"'),
    ("dataflow var outside its block",
     R_HEAD + "    with R.dataflow():\n        lv = R.add(x, y)\n        gv = R.add(lv, y)\n        R.output(gv)\n"
              "    return lv\n", 7, 12, "dataflow variable"),
    ("missing return", R_HEAD + "    z = R.add(x, y)\n", 2, 5, "has no return statement"),
    ("shape is not a tuple", '@R.function\ndef main(x: R.Tensor((1), "float32")):\n    return x\n', 2, 23,
     "must be a tuple: write (1,)"),
    ("ndim contradicts shape", '@R.function\ndef main(x: R.Tensor((1, 2), "float32", ndim=3)):\n    return x\n', 2, 46,
     "ndim=3 does not match"),
    ("int32 symbolic dim", R_HEAD + '    n = T.int32()\n    z: R.Tensor((n, 3), "float32") = R.add(x, y)\n    return z\n',
     4, 18, "must be int64"),
    ("bad dtype function", T_HEAD + "    B[0] = T.float31(1)\n", 3, 12, "unknown dtype 'float31'"),
    ("bad dtype string", T_HEAD + '    C = T.alloc_buffer((4,), "flaot32")\n', 3, 30, "did you mean 'float32'?"),
    ("undefined loop variable", T_HEAD + "    for i in range(16):\n        B[i] = A[i, j]\n", 4, 21,
     "name 'j' is not defined"),
    ("index count", T_HEAD + "    B[0] = A[0]\n", 3, 12, "has 2 dimensions, got 1 index"),
    ("remap of a non-loop variable", T_HEAD + BLOCK + "            vi, vj = T.axis.remap('SS', [i, 3])\n", 5, 45,
     "binds loop variables"),
    ("remap kind count", T_HEAD + BLOCK + "            vi, vj = T.axis.remap('SSR', [i, i])\n", 5, 35,
     "3 iterator kinds for 2 loop variables"),
    ("unknown iterator kind", T_HEAD + BLOCK + "            vi = T.axis.remap('X', [i])\n", 5, 31,
     "unknown iterator kind 'X'"),
    ("reads outside a block", T_HEAD + "    T.reads(A[0, 0])\n", 3, 5, "must be inside a 'with T.block"),
    ("axis outside a block", T_HEAD + "    vi = T.axis.spatial(16, 0)\n", 3, 10, "must be inside a 'with T.block"),
    ("init twice", T_HEAD + BLOCK + "            with T.init():\n                B[0] = 0.0\n"
                                    "            with T.init():\n                B[0] = 0.0\n", 7, 18,
     "already has an init"),
    ("reads twice", T_HEAD + BLOCK + "            T.reads(A[0, 0])\n            T.reads(A[0, 1])\n", 6, 13,
     "T.reads is given twice"),
    ("grid target count", T_HEAD + "    for i, j in T.grid(4, 4, 4):\n        pass\n", 3, 9,
     "3 loop variables expected, got 2"),
    ("loop over a non-range", T_HEAD + "    for i in A:\n        pass\n", 3, 14, "range(...)"),
    ("int8 literal out of range", T_HEAD + "    B[0] = T.Cast('float32', T.int8(300))\n", 3, 37,
     "out of the range of int8"),
    ("unknown T function", T_HEAD + "    B[0] = T.exq(A[0, 0])\n", 3, 12, "did you mean 'T.exp'?"),
    ("match_buffer of a non-parameter", T_HEAD + "    C = T.match_buffer(B, (4,))\n", 3, 9,
     "must be inside a 'with T.block"),
    ("store into a non-buffer", T_HEAD + "    x = 1\n    x[0] = 1\n", 4, 5, "only buffer elements"),
    ("TIR redefinition", T_HEAD + "    C = T.alloc_buffer((2,))\n    C = T.alloc_buffer((2,))\n", 4, 5,
     "'C' is already defined"),
    ("TIR parameter without annotation", "@T.prim_func\ndef f(A):\n    pass\n", 2, 7, "needs a type annotation"),
    ("call_tir of a Relax function",
     module("@R.function", "def g(x: R.Tensor((2,), 'float32')):", "    return x", "@R.function",
            "def main(x: R.Tensor((2,), 'float32')):",
            "    y = R.call_tir(M.g, (x,), out_sinfo=R.Tensor((2,), 'float32'))", "    return y"),
     8, 24, "'g' is a Relax function"),
    ("call_tir without out_sinfo",
     module("@T.prim_func", "def t(A: T.Buffer((2,), 'float32')):", "    pass", "@R.function",
            "def main(x: R.Tensor((2,), 'float32')):", "    y = R.call_tir(M.t, (x,))", "    return y"),
     8, 13, "needs out_sinfo="),
    ("missing module function",
     module("@R.function", "def main(x: R.Tensor((2,), 'float32')):", "    cls = M",
            "    y = R.call_tir(cls.ad, (x,), out_sinfo=R.Tensor((2,), 'float32'))", "    return y"),
     6, 24, "module M has no function 'ad'"),
    ("function call argument count",
     module("@R.function", "def g(x: R.Tensor((2,), 'float32')) -> R.Tensor((2,), 'float32'):", "    return x",
            "@R.function", "def main(x: R.Tensor((2,), 'float32')):", "    y = M.g(x, x)", "    return y"),
     8, 20, "takes 1 argument, got 2"),
    ("function call argument type",
     module("@R.function", "def g(x: R.Tensor((2,), 'float32')) -> R.Tensor((2,), 'float32'):", "    return x",
            "@R.function", "def main(x: R.Tensor((3,), 'float32')):", "    y = M.g(x)", "    return y"),
     8, 17, "argument 1 of M.g must be"),
    ("duplicate module function",
     module("@R.function", "def f(x: R.Tensor):", "    return x", "@R.function", "def f(x: R.Tensor):",
            "    return x"), 7, 9, "already defines a function named 'f'"),
    ("if branches assign different names",
     R_HEAD + "    if R.const(True, 'bool'):\n        a = x\n    else:\n        b = y\n    return a\n", 6, 9,
     "the 'if' branch assigns 'a', the 'else' branch 'b'"),
    ("if without else", R_HEAD + "    if R.const(True, 'bool'):\n        a = x\n    return a\n", 3, 5,
     "needs an 'else' branch"),
    ("if inside dataflow", R_HEAD + "    with R.dataflow():\n        if x:\n            a = x\n        else:\n"
                                    "            a = y\n    return x\n", 4, 9, "not allowed inside a dataflow block"),
    ("return inside if", R_HEAD + "    if R.const(True, 'bool'):\n        return x\n    else:\n        a = y\n"
                                  "    return a\n", 4, 9, "'return' inside if/else"),
    ("unreachable statement", R_HEAD + "    return x\n    z = R.add(x, y)\n", 4, 5, "unreachable"),
    ("Relax parameter without annotation", "@R.function\ndef main(x):\n    return x\n", 2, 10,
     "needs a type annotation"),
    ("R.output outside dataflow", R_HEAD + "    R.output(x)\n    return x\n", 3, 5, "must be inside 'with R.dataflow()'"),
    ("R.output of an outer variable", R_HEAD + "    with R.dataflow():\n        gv = R.add(x, y)\n        R.output(x)\n"
                                               "    return gv\n", 5, 18, "'x' is not bound in this dataflow block"),
    ("binding after R.output", R_HEAD + "    with R.dataflow():\n        gv = R.add(x, y)\n        R.output(gv)\n"
                                        "        z = R.add(gv, y)\n    return gv\n", 6, 9, "no binding may follow"),
    ("return annotation mismatch", "@R.function\ndef main(x: R.Tensor((2,), 'float32')) -> R.Tensor((3,), 'float32'):\n"
                                   "    return x\n", 3, 12, "its return annotation is"),
    ("impossible match_cast", R_HEAD + "    z = R.match_cast(x, R.Tensor((2, 3), 'int8'))\n    return z\n", 3, 25,
     "can never succeed"),
    ("tuple index out of range", R_HEAD + "    t = (x, y)\n    z = t[2]\n    return z\n", 4, 11, "out of range"),
    ("loop in Relax", R_HEAD + "    for i in range(3):\n        pass\n    return x\n", 3, 5, "no loops"),
    ("private function with global_symbol", "@T.prim_func(private=True)\ndef f(A: T.Buffer((2,), 'float32')):\n"
                                            "    T.func_attr({'global_symbol': 'f'})\n    A[0] = 1.0\n", 1, 2,
     "private function cannot have"),
    ("no decorator", "def f(x):\n    return x\n", 1, 5, "needs a decorator"),
    ("unknown class decorator", "@I.module\nclass M:\n    pass\n", 1, 2, "use @I.ir_module"),
    ("metadata not given", R_HEAD + "    z = R.add(x, metadata['relax.expr.Constant'][0])\n    return z\n", 3, 18,
     "refers to metadata that was not given"),
    ("legacy meta not given", R_HEAD + "    z = relax.add(x, meta[relay.Constant][0])\n    return z\n", 3, 22,
     "meta[relay.Constant][0]"),
    ("nested call in TIR annotation", R_HEAD + "    z = R.add(x, R.Tensor((2, 3)))\n    return z\n", 3, 18,
     "is a type, not a value"),
    ("undefined name in a dimension expression",
     '@R.function\ndef main(x: R.Tensor(("m + 1",), "float32")):\n    return x\n', 2, 23,
     'in the shape dimension "m + 1": name \'m\' is not defined'),
    ("unbound non-void call", R_HEAD + "    R.add(x, y)\n    return x\n", 3, 5,
     'a value of R.Tensor((2, 3), dtype="float32") must be bound to a variable'),
    ("prim_func called with a keyword",
     module("@T.prim_func", "def t(A: T.Buffer((2,), 'float32')):", "    pass", "@R.function",
            "def main(x: R.Tensor((2,), 'float32')):", "    y = M.t(x, k=x)", "    return y"),
     8, 20, "take positional arguments only"),
]


@pytest.mark.parametrize("name,source,line,col,message", CASES, ids=[c[0] for c in CASES])
def test_error(name, source, line, col, message):
    with pytest.raises(ScriptError) as info:
        from_source(source, "bad.py")
    err = info.value
    assert (err.line, err.col) == (line, col), str(err)
    assert message in err.message, str(err)
    text = str(err)
    assert text.startswith(f"bad.py:{line}:{col}: error:")
    assert "^" in text.split("\n")[-1]


def test_enough_distinct_cases():
    assert len({c[0] for c in CASES}) >= 30


def test_caret_underlines_only_the_offending_name():
    with pytest.raises(ScriptError) as info:
        from_source(R_HEAD + "    z = R.add(x, yy)\n    return z\n")
    last = str(info.value).split("\n")[-1]
    assert last.strip() == "^^"


def test_internal_errors_become_script_errors(monkeypatch):
    from tvmlite.script.parser import relax_parser

    def boom(self, node):  # noqa: ANN001, ANN202
        raise ValueError("boom")

    monkeypatch.setattr(relax_parser.RelaxParser, "_func_attr", boom)
    handlers = dict(relax_parser.RelaxParser.stmt_handlers)
    handlers["R.func_attr"] = boom
    monkeypatch.setattr(relax_parser.RelaxParser, "stmt_handlers", handlers)
    with pytest.raises(ScriptError) as info:
        from_source(R_HEAD + "    R.func_attr({'a': 1})\n    return x\n")
    assert info.value.line == 3 and "internal error" in info.value.message
