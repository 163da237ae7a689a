#!/usr/bin/env python3
"""Fuzz the TVMScript parser (a script; its mutation engine is imported by the tests).

Every text given to ``tvmlite.script.from_source`` must either parse or raise ``ScriptError``
whose line and column lie inside the text, in bounded time. This script mutates the seed
corpus (``tests/data/corpus/**/*.py`` in the repository) and adds pathological inputs
(deep nesting, huge literals, odd unicode and line endings), parses each, and reports any
input that breaks the rule, writing it to a reproducer file:

    python bench/fuzz_parser.py --seconds 300 --seed 1 [--time-limit 2] [--corpus DIR] [--out DIR]

Exit status 0 when nothing failed, 1 otherwise.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["load_corpus", "Mutator", "special_inputs", "check_text", "Outcome", "run_fuzz",
           "location_inside", "DEFAULT_CORPUS"]

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO / "tests" / "data" / "corpus"

# A small built-in sample, used when the corpus folder given holds no text.
_BUILTIN_CORPUS = [
    '''from tvm.script import ir as I
from tvm.script import tir as T
from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), B: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        for i, j in T.grid(T.int64(4), T.int64(8)):
            with T.block("add"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(A[v_i, v_j])
                T.writes(B[v_i, v_j])
                B[v_i, v_j] = A[v_i, v_j] + T.float32(1.0)

    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((4, 8), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((4, 8), dtype="float32"))
            gv: R.Tensor((4, 8), dtype="float32") = R.nn.relu(lv)
            R.output(gv)
        return gv
''',
]


def _corpus_dir(corpus: str | os.PathLike | None = None) -> Path | None:
    folder = Path(corpus) if corpus else DEFAULT_CORPUS
    return folder if folder.is_dir() else None


def load_corpus(corpus: str | os.PathLike | None = None) -> list[str]:
    """The seed texts: every ``*.py`` under the corpus folder (sorted), else a built-in sample."""
    folder = _corpus_dir(corpus)
    texts: list[str] = []
    if folder is not None:
        for path in sorted(folder.rglob("*.py")):
            try:
                texts.append(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                continue
    return texts or list(_BUILTIN_CORPUS)


# =============================================================================================
# Tokens
# =============================================================================================

_TOKEN = re.compile(r'''
      (?P<str>[rRbBuU]{0,2}(?:"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"[^"\n]*"|'[^'\n]*'))
    | (?P<num>\d[\w.]*(?:[eE][-+]?\d+)?|\.\d+)
    | (?P<name>[^\W\d]\w*)
    | (?P<nl>\r?\n[ \t]*)
    | (?P<ws>[ \t\f]+)
    | (?P<comment>\#[^\n]*)
    | (?P<op>\*\*=?|//=?|<<=?|>>=?|->|\.\.\.|[-+*/%@&|^<>=!]=|[^\s\w])
    | (?P<other>.)
''', re.VERBOSE | re.DOTALL)


def tokenize(text: str) -> list[tuple[str, str]]:
    """Split ``text`` into (kind, text) pieces whose concatenation is ``text``."""
    return [(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(text)]


def _significant(tokens: list[tuple[str, str]]) -> list[int]:
    return [i for i, (kind, _) in enumerate(tokens) if kind not in ("ws", "nl")]


# Pieces of text worth inserting: grammar tokens, keywords, odd characters.
_TOKEN_POOL = [
    "(", ")", "[", "]", "{", "}", ",", ":", ".", "...", "->", "=", "@", "+", "-", "*", "**", "/",
    "//", "%", "<<", ">>", "&", "|", "^", "~", "<", ">", "<=", ">=", "==", "!=", "+=", ":=",
    ";", "\\", "\\\n", "#", "'", '"', '"""', "'''", "`", "$", "?", "!",
    "if", "else", "elif", "for", "in", "while", "with", "as", "def", "class", "return", "pass",
    "break", "continue", "lambda", "not", "and", "or", "is", "import", "from", "assert", "yield",
    "del", "global", "try", "except", "raise", "async", "await", "True", "False", "None",
    "T", "R", "I", "T.int64", "T.Buffer", "R.Tensor", "T.block", "R.dataflow()", "T.grid",
    "metadata", "meta", "cls", "x", "_", "0", "1", "-1", "0x", "0b2", "1e", "1.5e-3", "00", "1_",
    "\n", "\r\n", "\r", "\t", "\f", "\v", "    ", "\n    ", "\n\t",
]
_ODD_CHARS = [
    "\x00", "\x01", "\x1b", "\x7f", "\x85", "\xa0", "\ufeff", "\u200b", "\u200c", "\u200d",
    "\u202e", "\u202d", "\u2028", "\u2029", "\u00e9", "\u0394", "\u4e2d", "\U0001f600",
    "\ud800", "\udfff", "\ufffd", "\uffff", "\u0301", "\u2160", "\uff10", "\u0660", "\u00b2",
    "\u2003", "\u3000", "\u180e", "\U000e0001",
]
_HUGE_NUMBERS = [
    "1e400", "-1e400", "1e-400", "1" + "0" * 5000, "9" * 5000, "0x" + "f" * 5000,
    "99999999999999999999999", "-9223372036854775809", "9223372036854775808", "2147483648",
    "1.7976931348623157e309", "0" * 300 + "1", "1" + "_0" * 3000, "0." + "0" * 5000 + "1",
    "1e99999999999999999999", "10 ** 5000", "2 ** 10000000", "1 << 100000000",
]
_HUGE_CALLS = [
    "T.int64(99999999999999999999999)", "T.int32(2147483648)", "T.int8(1000)",
    "T.uint8(-1)", "T.float32(1e400)", "T.float16(1e10)", "T.int64(" + "9" * 5000 + ")",
    "R.const(" + "9" * 5000 + ", 'int64')", "R.const(1e400, 'float32')",
    "R.shape([99999999999999999999999])", "T.Buffer((" + "9" * 30 + ",), 'float32')",
    "R.Tensor((99999999999999999999999,), 'float32')", "R.Tensor((-1,), 'float32')",
    "T.bool(2)", "T.float32('nan')", "T.int64(-9223372036854775809)",
]
_ODD_STRINGS = [
    '"\\ud800"', '"\\udfff"', '"\\U0010ffff"', '"\\U00110000"', '"\\N{BOGUS}"', '"\\x"',
    '"\\u12"', '"\\777"', 'b"\\xff"', 'b"\u00e9"', '"\u202e\u200b"', '"\x00"', 'rb"\\"',
    '"""' + "\n" * 5 + '"""', "'" + "a" * 10000 + "'", '"\\\n"', 'f"x"', 'u"x"', 'ub"x"',
]
_UNICODE_NAMES = ["\u00e9t\u00e9", "\u0394x", "\u4e2d\u6587", "x\u200by", "x\u0301", "\u2160",
                  "\uff58", "\u00aa", "_\u0660", "\U0001d4b3", "x\u00b7y", "\u1885"]


# =============================================================================================
# Deep nesting and other generated inputs
# =============================================================================================

_RELAX_HEAD = ('from tvm.script import relax as R\n\n@R.function\n'
               'def main(x: R.Tensor((2, 3), dtype="float32"), c: R.Tensor((), dtype="bool")):\n')
_TIR_HEAD = ('from tvm.script import tir as T\n\n@T.prim_func\n'
             'def main(A: T.Buffer((8,), "float32"), n: T.int32):\n')


def nested_statements(kind: str, depth: int, dialect: str = "tir") -> str:
    """A function whose body nests ``depth`` ``for``/``if``/``with``/``while`` statements."""
    head = _TIR_HEAD if dialect == "tir" else _RELAX_HEAD
    header = {
        "for": "for i{i} in range(2):", "if": "if n > {i}:", "while": "while n > {i}:",
        "with": 'with T.block("b{i}"):', "let": "with T.LetStmt({i}) as v{i}:",
        "rif": "if c:", "dataflow": "with R.dataflow():",
    }[kind]
    lines = [head]
    for i in range(depth):
        lines.append("    " * (i + 1) + header.format(i=i) + "\n")
    inner = "A[0] = T.float32(1)" if dialect == "tir" else "y = x"
    lines.append("    " * (depth + 1) + inner + "\n")
    if dialect != "tir":
        lines.append("    return x\n")
    return "".join(lines)


def nested_expression(kind: str, depth: int, dialect: str = "tir") -> str:
    """A function with one statement whose expression nests ``depth`` levels."""
    leaf = "A[0]" if dialect == "tir" else "x"
    expr = {
        "paren": "(" * depth + leaf + ")" * depth,
        "list": "[" * depth + "]" * depth,
        "dict": "{1: " * depth + leaf + "}" * depth,
        "tuple": "(" + (leaf + ", (") * depth + leaf + ")" * (depth + 1),
        "call": "R.add(x, " * depth + leaf + ")" * depth if dialect != "tir"
                else "T.max(A[0], " * depth + leaf + ")" * depth,
        "rparen_add": (leaf + " + (") * depth + leaf + ")" * depth,
        "chain_add": " + ".join([leaf] * (depth + 1)),
        "power": " ** ".join([leaf] * (depth + 1)),
        "minus": "-" * depth + leaf,
        "not": "not " * depth + leaf,
        "ifexp": (leaf + " if n > 0 else ") * depth + leaf,
        "lambda": "lambda: " * depth + leaf,
        "attr": leaf + ".a" * depth,
        "subscript": leaf + "[0]" * depth,
        "calls": leaf + "()" * depth,
        "compare": " < ".join([leaf] * (depth + 1)),
        "and": " and ".join([leaf] * (depth + 1)),
    }[kind]
    if dialect == "tir":
        return _TIR_HEAD + f"    A[0] = {expr}\n"
    return _RELAX_HEAD + f"    y = {expr}\n    return y\n"


NEST_STMT_KINDS = ("for", "if", "while", "with", "let", "rif", "dataflow")
NEST_EXPR_KINDS = ("paren", "list", "dict", "tuple", "call", "rparen_add", "chain_add", "power",
                   "minus", "not", "ifexp", "lambda", "attr", "subscript", "calls", "compare",
                   "and")


def special_inputs() -> list[tuple[str, str]]:
    """Named pathological inputs (deterministic): nesting, huge literals, unicode, whitespace."""
    out: list[tuple[str, str]] = [
        ("empty", ""), ("newline", "\n"), ("spaces", "   "), ("crlf-only", "\r\n\r\n"),
        ("cr-only", "\r"), ("tab", "\t"), ("comment", "# nothing\n"), ("bom", "\ufeff"),
        ("bom-bom", "\ufeff\ufeff"), ("nul", "\x00"), ("nuls", "\x00" * 100),
        ("surrogate", "\ud800"), ("ff", "\f"), ("backslash", "\\"), ("bs-nl", "\\\n"),
        ("quote", "'"), ("triple", '"""'), ("x", "x"), ("colon", ":"), ("at", "@"),
        ("dedent-first", "  x = 1\n"), ("indent-tab", "if x:\n\tpass\n"),
    ]
    for n in (10000,):
        out += [(f"parens-{n}", "(" * n + ")" * n), (f"lsqb-{n}", "x = " + "[" * n + "]" * n),
                (f"lbrace-{n}", "x = " + "{" * n), (f"open-{n}", "(" * n),
                (f"close-{n}", ")" * n), (f"mixed-{n}", "([{" * (n // 3)),
                (f"indent-{n}", "".join(" " * i + "if x:\n" for i in range(0, n, 1000))),
                (f"minus-{n}", "x = " + "-" * n + "1"), (f"not-{n}", "x = " + "not " * n + "a"),
                (f"lambda-{n}", "x = " + "lambda: " * n + "1"),
                (f"attr-{n}", "x = a" + ".b" * n), (f"sub-{n}", "x = a" + "[0]" * n),
                (f"pow-{n}", "x = " + " ** ".join(["a"] * n)),
                (f"plus-{n}", "x = " + " + ".join(["a"] * n)),
                (f"calls-{n}", "x = " + "f(" * n + ")" * n)]
    for dialect in ("tir", "relax"):
        for kind in NEST_EXPR_KINDS:
            for depth in (50, 199, 200, 201, 1000, 10000):
                out.append((f"{dialect}-expr-{kind}-{depth}", nested_expression(kind, depth, dialect)))
        kinds = ("for", "if", "while", "with", "let") if dialect == "tir" else ("rif", "dataflow")
        for kind in kinds:
            for depth in (20, 99, 100, 101, 500):
                out.append((f"{dialect}-stmt-{kind}-{depth}", nested_statements(kind, depth, dialect)))
    for i, num in enumerate(_HUGE_NUMBERS):
        out.append((f"tir-huge-{i}", _TIR_HEAD + f"    A[0] = {num}\n"))
        out.append((f"relax-huge-{i}", _RELAX_HEAD + f"    y = R.const({num}, 'float32')\n    return y\n"))
        out.append((f"shape-huge-{i}", _RELAX_HEAD.replace("(2, 3)", f"({num}, 3)") + "    return x\n"))
    for i, call in enumerate(_HUGE_CALLS):
        out.append((f"tir-hugecall-{i}", _TIR_HEAD + f"    A[0] = {call}\n"))
        out.append((f"relax-hugecall-{i}", _RELAX_HEAD + f"    y = {call}\n    return y\n"))
    for i, s in enumerate(_ODD_STRINGS):
        out.append((f"string-{i}", _RELAX_HEAD + f"    R.func_attr({{{s}: {s}}})\n    return x\n"))
        out.append((f"string-attr-{i}", _TIR_HEAD + f"    T.func_attr({{\"k\": {s}}})\n"))
    for i, ch in enumerate(_ODD_CHARS):
        out.append((f"char-{i}", _RELAX_HEAD + f"    y{ch} = x\n    return y\n"))
        out.append((f"char-start-{i}", ch + _RELAX_HEAD + "    return x\n"))
    for i, name in enumerate(_UNICODE_NAMES):
        out.append((f"uname-{i}", _RELAX_HEAD + f"    {name} = x\n    return {name}\n"))
    relax = _RELAX_HEAD + "    y = x\n    return y\n"
    out += [("crlf", relax.replace("\n", "\r\n")), ("cr", relax.replace("\n", "\r")),
            ("tabs", relax.replace("    ", "\t")), ("mixed-tabs", relax.replace("    y", "\ty")),
            ("bom-text", "\ufeff" + relax), ("ff-text", relax.replace("    ", "\f    ")),
            ("vt-text", relax.replace("    ", "\v")), ("ls-text", relax.replace("\n", "\u2028")),
            ("nel-text", relax.replace("\n", "\x85")), ("no-final-nl", relax.rstrip("\n")),
            ("trailing-bs", relax + "\\"), ("long-line", _TIR_HEAD + "    A[0] = " + "1 + " * 20000 + "1\n")]
    return out


# =============================================================================================
# Mutations
# =============================================================================================

class Mutator:
    """Random mutations of corpus texts (deterministic for a given ``random.Random``)."""

    def __init__(self, corpus: list[str], rng: random.Random) -> None:
        self.corpus = corpus
        self.rng = rng
        self._tokens = [tokenize(t) for t in corpus]
        self.mutations: list[tuple[str, Callable[[str], str]]] = [
            ("delete-tokens", self.delete_tokens), ("swap-tokens", self.swap_tokens),
            ("duplicate-tokens", self.duplicate_tokens), ("replace-token", self.replace_token),
            ("insert-token", self.insert_token), ("truncate", self.truncate),
            ("truncate-token", self.truncate_at_token), ("insert-chars", self.insert_chars),
            ("insert-odd", self.insert_odd), ("delete-chars", self.delete_chars),
            ("nest", self.nest), ("huge-literal", self.huge_literal), ("unicode", self.unicode),
            ("whitespace", self.whitespace), ("indent", self.indent),
            ("splice", self.splice), ("duplicate-lines", self.duplicate_lines),
            ("odd-string", self.odd_string), ("empty", self.empty),
        ]

    # ------------------------------------------------------------------ driver
    def seed_text(self) -> str:
        return self.rng.choice(self.corpus)

    def mutate(self, text: str | None = None) -> tuple[str, str]:
        """(description, mutated text): one to three stacked mutations of a corpus text."""
        rng = self.rng
        text = self.seed_text() if text is None else text
        names = []
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            name, fn = rng.choice(self.mutations)
            text = fn(text)
            names.append(name)
            if len(text) > 400_000:   # keep single inputs bounded
                text = text[:400_000]
        return "+".join(names), text

    def inputs(self, count: int) -> Iterator[tuple[str, str]]:
        for _ in range(count):
            yield self.mutate()

    # ------------------------------------------------------------------ helpers
    def _pos(self, text: str) -> int:
        return self.rng.randint(0, len(text))

    def _split(self, text: str) -> tuple[list[tuple[str, str]], list[int]]:
        toks = tokenize(text)
        return toks, _significant(toks)

    @staticmethod
    def _join(toks: list[tuple[str, str]]) -> str:
        return "".join(t for _, t in toks)

    # ------------------------------------------------------------------ token level
    def delete_tokens(self, text: str) -> str:
        toks, sig = self._split(text)
        if not sig:
            return text
        for _ in range(self.rng.choice((1, 1, 2, 3, 8))):
            i = self.rng.choice(sig)
            toks[i] = ("ws", "")
        return self._join(toks)

    def swap_tokens(self, text: str) -> str:
        toks, sig = self._split(text)
        if len(sig) < 2:
            return text
        k = self.rng.randrange(len(sig))
        if self.rng.random() < 0.6 and k + 1 < len(sig):
            i, j = sig[k], sig[k + 1]
        else:
            i, j = self.rng.sample(sig, 2)
        toks[i], toks[j] = toks[j], toks[i]
        return self._join(toks)

    def duplicate_tokens(self, text: str) -> str:
        toks, sig = self._split(text)
        if not sig:
            return text
        i = self.rng.choice(sig)
        span = self.rng.choice((1, 1, 2, 3, 5))
        piece = self._join(toks[i:i + span])
        toks.insert(i, ("other", piece * self.rng.choice((1, 1, 2, 50))))
        return self._join(toks)

    def replace_token(self, text: str) -> str:
        toks, sig = self._split(text)
        if not sig:
            return text
        i = self.rng.choice(sig)
        toks[i] = ("other", self.rng.choice(_TOKEN_POOL))
        return self._join(toks)

    def insert_token(self, text: str) -> str:
        toks, sig = self._split(text)
        i = self.rng.choice(sig) if sig else 0
        sep = self.rng.choice(("", " "))
        toks.insert(i, ("other", self.rng.choice(_TOKEN_POOL) + sep))
        return self._join(toks)

    def truncate_at_token(self, text: str) -> str:
        """Cut before, after or inside a token of a random kind."""
        toks, _ = self._split(text)
        if not toks:
            return text
        kind = self.rng.choice(sorted({k for k, _ in toks}))
        idx = [i for i, (k, _) in enumerate(toks) if k == kind]
        i = self.rng.choice(idx)
        head = self._join(toks[:i])
        tok = toks[i][1]
        where = self.rng.random()
        if where < 0.33:
            return head
        if where < 0.66:
            return head + tok
        return head + tok[:self.rng.randint(0, len(tok))]

    # ------------------------------------------------------------------ character level
    def truncate(self, text: str) -> str:
        return text[:self._pos(text)]

    def insert_chars(self, text: str) -> str:
        rng = self.rng
        p = self._pos(text)
        n = rng.choice((1, 1, 2, 4, 16))
        pool = rng.random()
        if pool < 0.4:
            chars = "".join(chr(rng.randrange(32, 127)) for _ in range(n))
        elif pool < 0.7:
            chars = "".join(chr(rng.randrange(0, 256)) for _ in range(n))
        else:
            chars = bytes(rng.randrange(256) for _ in range(n)).decode("utf-8", "surrogateescape")
        return text[:p] + chars + text[p:]

    def insert_odd(self, text: str) -> str:
        p = self._pos(text)
        return text[:p] + self.rng.choice(_ODD_CHARS) + text[p:]

    def delete_chars(self, text: str) -> str:
        if not text:
            return text
        p = self._pos(text)
        return text[:p] + text[p + self.rng.choice((1, 1, 2, 5, 40)):]

    # ------------------------------------------------------------------ structure
    def nest(self, text: str) -> str:
        """Replace an expression token by a deeply nested one, or wrap a line in deep blocks."""
        rng = self.rng
        depth = rng.choice((10, 50, 150, 199, 200, 201, 300, 1000, 3000, 10000))
        toks, sig = self._split(text)
        names = [i for i in sig if toks[i][0] in ("name", "num")]
        style = rng.randrange(9)
        if style == 0 or not names:
            return nested_statements(rng.choice(NEST_STMT_KINDS[:5]), min(depth, 600),
                                     rng.choice(("tir", "relax")))
        if style == 1:
            return nested_expression(rng.choice(NEST_EXPR_KINDS), depth,
                                     rng.choice(("tir", "relax")))
        i = rng.choice(names)
        leaf = toks[i][1]
        open_, close = rng.choice([("(", ")"), ("[", "]"), ("{", "}"), ("f(", ")"),
                                   (leaf + " + (", ")"), ("-", ""), ("not ", ""),
                                   ("T.max(" + leaf + ", ", ")"), ("(" + leaf + ", ", ")")])
        unbalanced = rng.random() < 0.2
        toks[i] = ("other", open_ * depth + leaf + close * (depth - (1 if unbalanced else 0)))
        return self._join(toks)

    def huge_literal(self, text: str) -> str:
        toks, sig = self._split(text)
        nums = [i for i in sig if toks[i][0] == "num"] or sig
        if not nums:
            return text
        i = self.rng.choice(nums)
        toks[i] = ("other", self.rng.choice(_HUGE_NUMBERS + _HUGE_CALLS))
        return self._join(toks)

    def unicode(self, text: str) -> str:
        rng = self.rng
        toks, sig = self._split(text)
        names = [i for i in sig if toks[i][0] == "name"]
        choice = rng.randrange(4)
        if choice == 0 and names:
            i = rng.choice(names)
            name = rng.choice(_UNICODE_NAMES)
            old = toks[i][1]
            # Rename every occurrence (so the text may stay valid) or just this one.
            if rng.random() < 0.5:
                return self._join([(k, name if t == old else t) for k, t in toks])
            toks[i] = ("name", name)
            return self._join(toks)
        if choice == 1:
            return "\ufeff" + text if rng.random() < 0.7 else text + "\ufeff"
        if choice == 2 and names:
            i = rng.choice(names)
            word = toks[i][1]
            cut = rng.randint(0, len(word))
            toks[i] = ("name", word[:cut] + rng.choice(_ODD_CHARS) + word[cut:])
            return self._join(toks)
        return self.insert_odd(text)

    def odd_string(self, text: str) -> str:
        toks, sig = self._split(text)
        strs = [i for i in sig if toks[i][0] == "str"] or sig
        if not strs:
            return text
        i = self.rng.choice(strs)
        toks[i] = ("str", self.rng.choice(_ODD_STRINGS))
        return self._join(toks)

    def whitespace(self, text: str) -> str:
        rng = self.rng
        choice = rng.randrange(7)
        if choice == 0:
            return text.replace("\n", "\r\n")
        if choice == 1:
            return text.replace("\n", "\r")
        if choice == 2:   # some line endings only
            return "".join(ch if ch != "\n" or rng.random() < 0.7 else "\r\n" for ch in text)
        if choice == 3:
            return text.replace("    ", "\t", rng.randint(1, 5))
        if choice == 4:
            return text.replace("    ", "\t")
        if choice == 5:
            return text.replace(" ", rng.choice(("\f", "\t", "\v", "\xa0", "  ")), rng.randint(1, 3))
        return text.replace("\n", rng.choice(("\n\n", "\n \n", "\n\\\n", " \\\n")), rng.randint(1, 3))

    def indent(self, text: str) -> str:
        lines = text.split("\n")
        i = self.rng.randrange(len(lines))
        delta = self.rng.choice((-4, -2, -1, 1, 2, 4, 8))
        if delta > 0:
            lines[i] = " " * delta + lines[i]
        else:
            lines[i] = lines[i][min(-delta, len(lines[i]) - len(lines[i].lstrip(" "))):]
        return "\n".join(lines)

    def splice(self, text: str) -> str:
        other = self.rng.choice(self.corpus).split("\n")
        lines = text.split("\n")
        a = self.rng.randrange(len(other))
        b = min(len(other), a + self.rng.choice((1, 2, 5, 20)))
        p = self.rng.randrange(len(lines) + 1)
        return "\n".join(lines[:p] + other[a:b] + lines[p:])

    def duplicate_lines(self, text: str) -> str:
        lines = text.split("\n")
        a = self.rng.randrange(len(lines))
        b = min(len(lines), a + self.rng.choice((1, 2, 4)))
        times = self.rng.choice((1, 2, 100))
        return "\n".join(lines[:b] + lines[a:b] * times + lines[b:])

    def empty(self, text: str) -> str:
        return self.rng.choice(("", "\n", " ", "\ufeff", "# c", "pass", "\r\n", text[:1]))


# =============================================================================================
# Checking one input
# =============================================================================================

@dataclass
class Outcome:
    kind: str            # "ok", "error" (a ScriptError inside the text) or "fail"
    seconds: float
    detail: str = ""     # for "error": the message; for "fail": what went wrong


class _Timeout(BaseException):
    pass


def location_inside(err: object, text: str) -> bool:
    """Whether a ScriptError's line and column lie inside ``text`` (the column may point
    just past the end of its line, as for "unexpected end of input")."""
    line, col = getattr(err, "line", None), getattr(err, "col", None)
    if not isinstance(line, int) or not isinstance(col, int):
        return False
    body = text[1:] if text.startswith("\ufeff") else text
    lines = body.split("\n")
    if not 1 <= line <= len(lines):
        return False
    return 1 <= col <= len(lines[line - 1]) + 1


def check_text(text: str, time_limit: float = 2.0) -> Outcome:
    """Parse ``text`` and classify the result; a parse over ``time_limit`` seconds fails
    (interrupted with SIGALRM when run in the main thread on POSIX)."""
    from tvmlite.script import from_source
    from tvmlite.script.errors import ScriptError

    use_alarm = (hasattr(signal, "setitimer")
                 and threading.current_thread() is threading.main_thread())
    old_handler = None
    if use_alarm:
        def on_alarm(signum: int, frame: object) -> None:
            raise _Timeout()
        old_handler = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, time_limit * 2 + 1)
    start = time.perf_counter()
    try:
        try:
            from_source(text)
            outcome = Outcome("ok", 0.0)
        except ScriptError as err:
            try:
                rendered = str(err)
            except Exception as exc:   # noqa: BLE001 - rendering must never fail either
                outcome = Outcome("fail", 0.0, f"str(ScriptError) raised {type(exc).__name__}: {exc}")
            else:
                if not location_inside(err, text):
                    outcome = Outcome("fail", 0.0, f"ScriptError location {err.line}:{err.col} "
                                                   f"outside the text: {rendered}")
                elif not err.message or "internal" in err.message:
                    outcome = Outcome("fail", 0.0, f"internal error: {rendered}\n"
                                      + "".join(traceback.format_exception(err)))
                else:
                    outcome = Outcome("error", 0.0, err.message)
        except _Timeout:
            outcome = Outcome("fail", 0.0, f"interrupted after {time_limit * 2 + 1:.0f} s (hang)")
        except RecursionError as exc:
            outcome = Outcome("fail", 0.0, "RecursionError: " + "".join(traceback.format_exception(exc))[-3000:])
        except Exception as exc:   # noqa: BLE001 - that is what the fuzzer looks for
            outcome = Outcome("fail", 0.0, "".join(traceback.format_exception(exc))[-5000:])
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
    outcome.seconds = time.perf_counter() - start
    if outcome.kind != "fail" and outcome.seconds > time_limit:
        outcome = Outcome("fail", outcome.seconds,
                          f"took {outcome.seconds:.2f} s (limit {time_limit} s); {outcome.kind}: "
                          f"{outcome.detail[:200]}")
    return outcome


# =============================================================================================
# Driver
# =============================================================================================

@dataclass
class Stats:
    tried: int = 0
    parsed: int = 0
    errors: int = 0
    failures: list[tuple[str, str, Outcome]] = None  # type: ignore[assignment]
    slowest: tuple[float, str] = (0.0, "")

    def __post_init__(self) -> None:
        if self.failures is None:
            self.failures = []

    def add(self, name: str, text: str, outcome: Outcome) -> None:
        self.tried += 1
        if outcome.kind == "ok":
            self.parsed += 1
        elif outcome.kind == "error":
            self.errors += 1
        else:
            self.failures.append((name, text, outcome))
        if outcome.seconds > self.slowest[0]:
            self.slowest = (outcome.seconds, name)


def run_fuzz(*, seconds: float | None = None, count: int | None = None, seed: int = 0,
             time_limit: float = 2.0, corpus: str | None = None, specials: bool = True,
             on_failure: Callable[[str, str, Outcome], None] | None = None) -> Stats:
    """Parse the special inputs and mutated corpus texts until ``seconds`` pass or ``count``
    mutated inputs were tried."""
    rng = random.Random(seed)
    mutator = Mutator(load_corpus(corpus), rng)
    stats = Stats()
    deadline = time.monotonic() + seconds if seconds is not None else None

    def one(name: str, text: str) -> None:
        outcome = check_text(text, time_limit)
        stats.add(name, text, outcome)
        if outcome.kind == "fail" and on_failure is not None:
            on_failure(name, text, outcome)

    if specials:
        for name, text in special_inputs():
            one(name, text)
    for text in mutator.corpus:
        one("corpus", text)
    i = 0
    while True:
        if count is not None and i >= count:
            break
        if deadline is not None and time.monotonic() > deadline:
            break
        name, text = mutator.mutate()
        one(f"#{i} {name}", text)
        i += 1
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to fuzz")
    ap.add_argument("--count", type=int, default=None, help="stop after this many mutated inputs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=2.0, help="seconds allowed per input")
    ap.add_argument("--corpus", default=None, help="folder of seed texts (default: tests/data/corpus)")
    ap.add_argument("--out", default=None, help="folder for reproducers (default: a new temp dir)")
    args = ap.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    if str(REPO.parent) not in sys.path:
        try:
            import tvmlite  # noqa: F401
        except ImportError:
            sys.path.insert(0, str(REPO.parent))
    out_dir: list[Path] = []

    def on_failure(name: str, text: str, outcome: Outcome) -> None:
        if not out_dir:
            out_dir.append(Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="tvmlite-fuzz-")))
            out_dir[0].mkdir(parents=True, exist_ok=True)
        index = len(list(out_dir[0].glob("failure-*.py")))
        path = out_dir[0] / f"failure-{index:04d}.py"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        (out_dir[0] / f"failure-{index:04d}.txt").write_text(
            f"input: {name}\n{outcome.detail}\n", encoding="utf-8", errors="replace")
        first = outcome.detail.strip().splitlines()[0] if outcome.detail.strip() else ""
        print(f"FAIL {name}: {first[:200]} -> {path}", flush=True)

    start = time.monotonic()
    stats = run_fuzz(seconds=args.seconds if args.count is None else None, count=args.count,
                     seed=args.seed, time_limit=args.time_limit, corpus=args.corpus,
                     on_failure=on_failure)
    elapsed = time.monotonic() - start
    print(f"tried {stats.tried} inputs in {elapsed:.1f} s: {stats.parsed} parsed, "
          f"{stats.errors} ScriptError, {len(stats.failures)} failures "
          f"(slowest {stats.slowest[0]:.3f} s: {stats.slowest[1]})")
    if out_dir:
        print(f"reproducers in {out_dir[0]} (read with encoding='utf-8', errors='surrogatepass')")
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
