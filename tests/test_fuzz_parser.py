"""The parser on arbitrary text: every input parses or raises ScriptError located inside the
text, in bounded time (issue 7). A bounded, seeded run of the fuzzer in ``bench/fuzz_parser.py``
plus one regression test per class of pathological input."""
from __future__ import annotations

import importlib.util
import random
import sys
import time
from pathlib import Path

import pytest

from tvmlite.script import from_source
from tvmlite.script import syntax as S
from tvmlite.script.errors import ScriptError

_FUZZ_PATH = Path(__file__).resolve().parents[1] / "bench" / "fuzz_parser.py"
_spec = importlib.util.spec_from_file_location("tvmlite_fuzz_parser", _FUZZ_PATH)
assert _spec is not None and _spec.loader is not None
fuzz = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fuzz
_spec.loader.exec_module(fuzz)

TIME_LIMIT = 2.0          # seconds allowed for any single input
MUTATED_PER_CHUNK = 500   # mutated inputs per seed below
SEEDS = (1, 2, 3, 4)
_tried = {"special": 0, "mutated": 0, "regression": 0}


def _describe_failures(failures: list) -> str:
    lines = []
    for name, text, outcome in failures[:5]:
        lines.append(f"--- {name} ({len(text)} chars, {outcome.seconds:.2f} s): {text[:200]!r}\n"
                     f"{outcome.detail[:1500]}")
    return f"{len(failures)} failing inputs:\n" + "\n".join(lines)


def _expect_error(text: str, match: str | None = None) -> ScriptError:
    """``text`` must give a readable ScriptError inside it, quickly."""
    _tried["regression"] += 1
    start = time.perf_counter()
    with pytest.raises(ScriptError) as info:
        from_source(text)
    elapsed = time.perf_counter() - start
    assert elapsed < TIME_LIMIT, f"took {elapsed:.2f} s"
    err = info.value
    assert fuzz.location_inside(err, text), (err.line, err.col, str(err)[:300])
    assert err.message and "internal" not in err.message and "Traceback" not in err.message
    rendered = str(err)
    assert f":{err.line}:{err.col}: error: " in rendered
    if match is not None:
        assert match in err.message, err.message
    return err


def _expect_ok_or_error(text: str) -> None:
    _tried["regression"] += 1
    outcome = fuzz.check_text(text, TIME_LIMIT)
    assert outcome.kind != "fail", outcome.detail[:2000]


# ------------------------------------------------------------------------------- bounded fuzz

def test_special_inputs() -> None:
    specials = fuzz.special_inputs()
    failures = []
    for name, text in specials:
        outcome = fuzz.check_text(text, TIME_LIMIT)
        _tried["special"] += 1
        if outcome.kind == "fail":
            failures.append((name, text, outcome))
    assert not failures, _describe_failures(failures)


@pytest.mark.parametrize("seed", SEEDS)
def test_mutated_corpus(seed: int) -> None:
    stats = fuzz.run_fuzz(count=MUTATED_PER_CHUNK, seed=seed, time_limit=TIME_LIMIT,
                          specials=False)
    _tried["mutated"] += stats.tried
    assert not stats.failures, _describe_failures(stats.failures)
    # The mutations reach both outcomes (a fuzzer that only makes garbage tests little).
    assert stats.parsed > 0 and stats.errors > stats.tried // 4


def test_mutations_are_deterministic() -> None:
    corpus = fuzz.load_corpus()
    a = fuzz.Mutator(corpus, random.Random(7))
    b = fuzz.Mutator(corpus, random.Random(7))
    assert [a.mutate() for _ in range(50)] == [b.mutate() for _ in range(50)]
    assert len(corpus) >= 1 and all(isinstance(t, str) for t in corpus)


# ------------------------------------------------------------------------------- regressions

_RELAX = ('from tvm.script import relax as R\n\n@R.function\n'
          'def main(x: R.Tensor((2, 3), dtype="float32")):\n')
_TIR = ('from tvm.script import tir as T\n\n@T.prim_func\n'
        'def main(A: T.Buffer((8,), "float32")):\n')


@pytest.mark.parametrize("text", [
    "x = " + "(" * 10_000 + "1" + ")" * 10_000,
    "x = " + "[" * 10_000 + "]" * 10_000,
    "(" * 10_000,
    _TIR + "    A[0] = " + "A[0] + (" * 5000 + "A[0]" + ")" * 5000 + "\n",
    _TIR + "    A[0] = " + " + ".join(["A[0]"] * 5000) + "\n",
    _RELAX + "    y = " + "-" * 5000 + "x\n    return y\n",
    _RELAX + "    y = x" + ".a" * 5000 + "\n    return y\n",
    _RELAX + "    y = " + "R.add(x, " * 300 + "x" + ")" * 300 + "\n    return y\n",
    fuzz.nested_statements("for", 500),
    fuzz.nested_statements("if", 500),
    fuzz.nested_statements("with", 500),
    "".join(" " * i + "if x:\n" for i in range(5000)),
], ids=["parens", "lists", "unclosed", "rparen-add", "chain-add", "minus", "attributes",
        "calls", "for", "if", "with", "indent"])
def test_deep_nesting_is_a_located_script_error(text: str) -> None:
    err = _expect_error(text, "nesting too deep")
    assert err.line is not None and err.col is not None


@pytest.mark.parametrize("dialect", ["tir", "relax"])
@pytest.mark.parametrize("kind", fuzz.NEST_EXPR_KINDS)
def test_nesting_below_the_limit_never_recurses_too_far(dialect: str, kind: str) -> None:
    # Deep but within MAX_DEPTH: parses or gives an ordinary error, never a RecursionError.
    text = fuzz.nested_expression(kind, S.MAX_DEPTH - 10, dialect)
    limit = sys.getrecursionlimit()
    _expect_ok_or_error(text)
    assert sys.getrecursionlimit() == limit   # the parser restores the limit it raised


def test_repeated_operands_are_evaluated_once() -> None:
    # Unary minus and chained comparisons used to evaluate their operand twice per level.
    start = time.perf_counter()
    _expect_ok_or_error(_RELAX + "    y = " + "-" * 150 + "x\n    return y\n")
    _expect_ok_or_error(_TIR + "    A[0] = T.Select(" + "(" * 60 + "1 < 2" + " < 3) < 4" * 60
                        + ", A[0], A[1])\n")
    assert time.perf_counter() - start < TIME_LIMIT


@pytest.mark.parametrize("literal, message", [
    ("1" + "0" * 5000, "integer literal too long"),
    ("9" * 5000, "integer literal too long"),
    ("0x" + "f" * 5000, "too large for float32"),
    ("1" + "_0" * 3000, "too large for float32"),
    ("T.int64(99999999999999999999999)", "out of the range of int64"),
    ("T.int32(2147483648)", "out of the range of int32"),
    ("T.int64(0x" + "f" * 5000 + ")", "out of the range of int64"),
])
def test_huge_literals(literal: str, message: str) -> None:
    err = _expect_error(_TIR + f"    A[0] = {literal}\n", message)
    assert len(err.message) < 300


@pytest.mark.parametrize("text, message", [
    (_RELAX.replace("(2, 3)", "(99999999999999999999999, 3)") + "    return x\n", "fit in int64"),
    (_RELAX.replace("(2, 3)", "(0x" + "f" * 5000 + ", 3)") + "    return x\n", "fit in int64"),
    (_RELAX + "    y = R.const(0x" + "f" * 5000 + ", 'float32')\n    return y\n", "constant"),
    (_RELAX + "    y = R.shape([0x" + "f" * 5000 + "])\n    return y\n", "int64"),
])
def test_huge_literals_in_relax(text: str, message: str) -> None:
    err = _expect_error(text, message)
    assert len(err.message) < 300


def test_op_error_of_an_operator_points_at_it() -> None:
    # Found by the fuzzer: a shape mismatch in ``a - b`` (an op call without a callee node)
    # crashed while placing the error.
    err = _expect_error(_RELAX + '    y = x - R.ones((7, 7), "float32")\n    return y\n',
                        "cannot broadcast")
    assert err.line == 5


def test_huge_float_literal_is_infinity() -> None:
    # 1e400 is a valid Python float literal (inf), as in TVM.
    from_source(_TIR + "    A[0] = 1e400\n")


@pytest.mark.parametrize("text, message", [
    (_RELAX + "    y = x\x00\n    return y\n", "unexpected character '\\x00'"),
    (_RELAX + "    y\u200b = x\n    return y\n", "unexpected character '\\u200b'"),
    (_RELAX + "    y = x\u202e\n    return y\n", "unexpected character '\\u202e'"),
    (_RELAX + "    \ufeffy = x\n    return y\n", "unexpected character '\\ufeff'"),
    (_RELAX + "    y = x\n    return y\n\ud800", "unexpected character '\\ud800'"),
    (_RELAX + "    y = '\\N{NO SUCH NAME}'\n    return y\n", "invalid string literal"),
    (_RELAX + "    y = x\n\treturn y\n", "tab in indentation"),
    (_RELAX.replace("\n", "\r") + "    return x\r", "unexpected line break"),
])
def test_unicode_and_odd_characters(text: str, message: str) -> None:
    _expect_error(text, message)


@pytest.mark.parametrize("text", [
    "\ufeff" + _RELAX + "    return x\n",                      # a BOM
    _RELAX.replace("\n", "\r\n") + "    return x\r\n",          # CRLF
    _RELAX + "    \u00e9t\u00e9 = x\n    return \u00e9t\u00e9\n",   # unicode identifiers
    _RELAX + "    R.func_attr({'k': '\\ud800\u202e'})\n    return x\n",   # lone surrogate escape
])
def test_unicode_that_parses(text: str) -> None:
    _tried["regression"] += 1
    from_source(text)


@pytest.mark.parametrize("text", ["", "\n", "   ", "\ufeff", "\r\n", "# comment only\n", "\x00"])
def test_empty_and_blank_texts(text: str) -> None:
    _expect_error(text)


def test_truncation_at_every_kind_of_position() -> None:
    # Every prefix of a module that uses most of the grammar: cut inside tokens, strings,
    # brackets, headers and indented blocks.
    corpus = fuzz.load_corpus()
    text = max(corpus, key=lambda t: len(set(t)))[:3000]
    failures = []
    for end in range(0, len(text), 3):
        outcome = fuzz.check_text(text[:end], TIME_LIMIT)
        _tried["regression"] += 1
        if outcome.kind == "fail":
            failures.append((f"prefix {end}", text[:end], outcome))
    assert not failures, _describe_failures(failures)


def test_internal_errors_keep_their_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    # The last-resort wrapper: an unexpected exception becomes a located ScriptError whose
    # cause is the original exception.
    from tvmlite.script import parser as P

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(P, "parse_script", broken)
    text = _RELAX + "    return x\n"
    with pytest.raises(ScriptError, match="internal error") as info:
        from_source(text)
    assert isinstance(info.value.__cause__, KeyError)
    assert fuzz.location_inside(info.value, text)


def test_report_count(capsys: pytest.CaptureFixture[str]) -> None:
    total = sum(_tried.values())
    with capsys.disabled():
        print(f"\nparser fuzz: {total} inputs tried ({_tried['special']} special, "
              f"{_tried['mutated']} mutated corpus texts, {_tried['regression']} regression "
              f"inputs)")
