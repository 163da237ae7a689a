"""The one table of ``tir.*`` intrinsics (``tvmlite.ir.intrinsics``): every intrinsic the CPU
backend compiles gives the table's numpy meaning compiled (LLVM), interpreted and TE-evaluated, on
ordinary values and edge cases (signed zeros, halves, infinities, NaN, integer extremes), per dtype
it accepts; the builtins (reinterpret, extern calls, assume, return) give the same numbers compiled
and interpreted and print as their entries say; and every reader finds what the table says it should."""
import itertools

import numpy as np
import pytest

from tvmlite import te
from tvmlite.backend import build
from tvmlite.backend.interpreter import _Compiler, run_prim_func
from tvmlite.backend.llvm.function_builder import FunctionBuilder
from tvmlite.ir import tir
from tvmlite.ir.intrinsics import INTRINSICS, Intrinsic, intrinsic_of_op
from tvmlite.passes.lower import lower_intrinsics
from tvmlite.script import from_source
from tvmlite.script.parser.tir_exprs import TirEvaluator
from tvmlite.te.expr import call_intrin

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int32", "int64", "uint8", "uint32")

FLOAT_VALUES = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 0.25, 3.7, -3.7, 10.0, 1e-3,
                float("inf"), float("-inf"), float("nan")]
# Exponents of ldexp: small integers (a float exponent is truncated; inf/NaN ones are undefined in C).
LDEXP_EXPONENTS = [0.0, 1.0, -1.0, 3.0, -4.0, 2.9]


def _float_inputs(info: Intrinsic, dtype: str) -> list[np.ndarray]:
    """Arguments covering the edge cases: every value for one operand, every pair for two."""
    if info.arity == 1:
        return [np.array(FLOAT_VALUES, dtype)]
    seconds = LDEXP_EXPONENTS if info.name == "ldexp" else FLOAT_VALUES
    a, b = zip(*itertools.product(FLOAT_VALUES, seconds))
    return [np.array(a, dtype), np.array(b, dtype)]


def _int_inputs(info: Intrinsic, dtype: str) -> list[np.ndarray]:
    """Integers incl. 0, -1 (all bits) and the extremes; shift amounts stay below the width."""
    ii = np.iinfo(dtype)
    values = sorted({0, 1, 2, 5, 100 % (ii.max + 1), ii.max, ii.min, ii.min + 1, max(ii.min, -1), max(ii.min, -77)})
    if info.arity == 1:
        return [np.array(values, dtype)]
    seconds = [0, 1, 3, ii.bits - 1] if info.name.startswith("shift") else values
    a, b = zip(*itertools.product(values, seconds))
    return [np.array(a, dtype), np.array(b, dtype)]


def _cases() -> list[tuple[str, str]]:
    """(intrinsic, dtype) for every table intrinsic of value arguments the CPU backend compiles."""
    cases = []
    for name, info in INTRINSICS.items():
        if info.args == "float":
            cases += [(name, d) for d in FLOAT_DTYPES]
        elif info.args == "int":
            cases += [(name, d) for d in INT_DTYPES]
    return cases


def _three_ways(info: Intrinsic, inputs: list[np.ndarray], out_dtype: str) -> dict[str, np.ndarray]:
    """The results compiled, interpreted and TE-evaluated, and the table's numpy meaning."""
    n = len(inputs[0])
    holders = [te.placeholder((n,), str(x.dtype), name=f"A{k}") for k, x in enumerate(inputs)]
    out = te.compute((n,), lambda i: call_intrin(out_dtype, info.op, *(h[i] for h in holders)), name="out")
    func = te.create_prim_func([*holders, out])
    results = {}
    ex = build(func)
    (fname,) = ex.keys()
    results["compiled"] = np.zeros(n, out_dtype)
    ex[fname](*inputs, results["compiled"])
    results["interpreted"] = np.zeros(n, out_dtype)
    run_prim_func(func, [*inputs, results["interpreted"]])
    results["te"] = np.asarray(te.evaluate(out, dict(zip(holders, inputs))))
    with np.errstate(all="ignore"):
        results["numpy"] = np.asarray(info.numpy(*inputs)).astype(out_dtype)
    return results


# Exact except the transcendental functions, whose libm and numpy versions may differ in the last bits.
_EXACT = {"floor", "ceil", "trunc", "round", "nearbyint", "fabs", "sqrt", "copysign", "fmod", "ldexp",
          "nextafter", "isnan", "isinf", "isfinite"}


@pytest.mark.parametrize("name, dtype", _cases())
def test_compiled_interpreted_and_evaluated_agree_with_numpy(name, dtype):
    info = INTRINSICS[name]
    inputs = _float_inputs(info, dtype) if info.args == "float" else _int_inputs(info, dtype)
    out_dtype = info.result_dtype(dtype)
    results = _three_ways(info, inputs, out_dtype)
    want = results.pop("numpy")
    for path, got in results.items():
        assert got.dtype == want.dtype, (path, got.dtype)
        if name in _EXACT or info.args == "int" or out_dtype == "bool":
            ok = (got == want) | (np.isnan(want) & np.isnan(got)) if want.dtype.kind == "f" else got == want
            if want.dtype.kind == "f":  # the sign of a zero counts too
                ok &= (np.signbit(got) == np.signbit(want)) | np.isnan(want)
            bad = np.flatnonzero(~ok)
            assert bad.size == 0, (path, [tuple(x[k] for x in inputs) for k in bad[:5]], got[bad[:5]], want[bad[:5]])
        else:
            eps = np.finfo(dtype).eps
            np.testing.assert_allclose(got, want, rtol=4 * eps, atol=4 * eps, equal_nan=True, err_msg=path)


def test_round_rounds_halves_to_even_everywhere():
    info = INTRINSICS["round"]
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5], "float32")
    for path, got in _three_ways(info, [x], "float32").items():
        assert got.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0], path


def test_control_intrinsics_compile_interpret_and_evaluate():
    c = np.array([True, False, True, False])
    a = np.array([1.0, 2.0, 3.0, 4.0], "float32")
    b = np.array([-1.0, -2.0, -3.0, -4.0], "float32")
    for path, got in _three_ways(INTRINSICS["if_then_else"], [c, a, b], "float32").items():
        assert got.tolist() == [1.0, -2.0, 3.0, -4.0], path
    for path, got in _three_ways(INTRINSICS["likely"], [c], "bool").items():
        assert got.tolist() == c.tolist(), path


def test_every_lowering_is_implemented():
    for name, info in INTRINSICS.items():
        if not info.compiled:
            assert info.kind == "builtin", name
            continue
        kind, target = info.lowering
        if kind == "expand":
            assert hasattr(FunctionBuilder, f"_expand_{target}"), name
        elif kind == "llvm":
            assert target.startswith("llvm."), name


def test_the_parser_builds_every_math_intrinsic_from_the_table():
    for name, info in INTRINSICS.items():
        if info.args not in ("float", "int"):
            continue
        dtype = "float32" if info.args == "float" else "int32"
        args = ", ".join(["x"] * info.arity)
        func = from_source(f"@T.prim_func\ndef f(x: T.{dtype}, out: T.Buffer((1,), \"{info.result_dtype(dtype)}\")):\n"
                           f"    out[0] = T.{name}({args})\n")
        call = func.body.value
        assert isinstance(call, tir.Call) and intrinsic_of_op(call.op) is info, name
        assert func.script().count(f"T.{name}(") == 1, name


def test_legalize_rules_apply_before_codegen():
    func = from_source("@T.prim_func\ndef f(x: T.float32, out: T.Buffer((3,), \"float32\")):\n"
                       "    out[0] = T.sigmoid(x)\n    out[1] = T.rsqrt(x)\n    out[2] = T.exp10(x)\n")
    text = lower_intrinsics(func).script()
    assert "T.sigmoid" not in text and "T.rsqrt" not in text and "T.exp10" not in text
    assert "T.exp(" in text and "T.sqrt(" in text and "T.pow(" in text


def test_every_builtin_implementation_is_found_by_its_readers():
    for name, info in INTRINSICS.items():
        if info.interpret is not None:
            assert hasattr(_Compiler, f"_interpret_{info.interpret}"), name
        if info.parse is not None:
            assert hasattr(TirEvaluator, f"_parse_{info.parse}"), name
        if info.kind == "builtin":
            assert info.numpy is None, name


def _compiled_and_interpreted(source: str, inputs: list[np.ndarray], out: np.ndarray) -> dict[str, np.ndarray]:
    """The output buffer of a parsed PrimFunc compiled and interpreted."""
    func = from_source(source)
    ex = build(func)
    (fname,) = ex.keys()
    results = {"compiled": out.copy(), "interpreted": out.copy()}
    ex[fname](*inputs, results["compiled"])
    run_prim_func(func, [*inputs, results["interpreted"]])
    return results


def test_reinterpret_keeps_the_bits_compiled_and_interpreted():
    x = np.array([1.0, -0.0, np.inf, 3.5], "float32")
    source = ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"int32\")):\n"
              "    for i in range(4):\n        B[i] = T.reinterpret(\"int32\", A[i])\n")
    for path, got in _compiled_and_interpreted(source, [x], np.zeros(4, "int32")).items():
        assert got.tolist() == x.view("int32").tolist(), path


def test_extern_libm_calls_compile_and_interpret_as_the_table_says():
    x = np.array([0.0, 0.5, -1.5, 3.0], "float32")
    source = ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
              "    for i in range(4):\n        B[i] = T.call_pure_extern(\"float32\", \"erff\", A[i])"
              " + T.call_extern(\"float32\", \"expf\", A[i])\n")
    want = INTRINSICS["erf"].numpy(x) + INTRINSICS["exp"].numpy(x)
    for path, got in _compiled_and_interpreted(source, [x], np.zeros(4, "float32")).items():
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=path)


def test_assume_and_ret_compile_and_interpret():
    x = np.array([3], "int32")
    source = ("@T.prim_func\ndef f(A: T.Buffer((1,), \"int32\"), B: T.Buffer((1,), \"int32\")):\n"
              "    T.evaluate(T.assume(A[0] > 0))\n    B[0] = A[0] * 2\n")
    for path, got in _compiled_and_interpreted(source, [x], np.zeros(1, "int32")).items():
        assert got.tolist() == [6], path
    func = from_source("@T.prim_func\ndef g(n: T.int32) -> T.int32:\n    return n + 1\n")
    assert "return n + 1" in func.script()
    (fname,) = (ex := build(func)).keys()
    assert ex[fname](np.int32(4)) == 5
    assert run_prim_func(func, [], [4]) == 5


@pytest.mark.parametrize("name", [n for n, i in INTRINSICS.items() if i.kind == "builtin" and i.parse is not None])
def test_parsed_builtins_print_back_as_written(name):
    info = INTRINSICS[name]
    operands = ", ".join(["x"] * (info.arity if info.arity is not None else 2))
    args = {"dtype_value": '"int32", x', "condition": "x > 0", "extern": '"float32", "expf", y',
            "packed": '"f", x', "shuffle": "x, y, x, x, x",
            "operands": ('"float32", ' if info.dtype_first else "") + operands
            + (', "float32"' if info.dtype_last else "")}[info.parse]
    args = args.removesuffix(", ")
    source = (f"@T.prim_func\ndef f(x: T.int32, y: T.float32):\n    T.evaluate(T.{info.script_name}({args}))\n")
    func = from_source(source)
    assert func.body.value.op == info.op
    assert f"T.{info.script_name}({args})" in func.script()


def test_builtins_print_their_dtype_and_script_name_as_their_entries_say():
    x = tir.Var("x", "int32")
    for name, info in INTRINSICS.items():
        if info.kind != "builtin" or info.statement is not None:
            continue
        dtype = "float32" if info.dtype_first or info.dtype_last else info.result_dtype("int32")
        operands = (x,) * (info.arity if info.arity is not None else 1)
        text = tir.Call(dtype, info.op, operands).script()
        written = (['"float32"'] if info.dtype_first else []) + ["x"] * len(operands) \
            + (['"float32"'] if info.dtype_last else [])
        assert text == f"T.{info.script_name}({', '.join(written)})", (name, text)


# ------------------------------------------------------------------ one name, one place
_ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
# The table itself, and te's Python-facing constructors (te.power, te.if_then_else, the operators).
_NAME_ALLOWED = {"ir/intrinsics.py", "te/expr.py"}


def _literal_intrinsic_names(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each string literal that is exactly ``"tir.<name>"`` of a table entry."""
    import ast
    ops = {info.op for info in INTRINSICS.values()}
    return [(n.lineno, n.value) for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in ops]


def test_the_name_scan_finds_a_literal_op_but_not_prose():
    src = 'def f(call):\n    """Reads ``"tir.exp"`` calls."""\n    return call.op == "tir.if_then_else"\n'
    assert _literal_intrinsic_names(src) == [(3, "tir.if_then_else")]


def test_production_code_names_no_intrinsic_outside_the_table():
    """Facts about an intrinsic are fields of its entry (``conditional``, ``takes_address``,
    ``scalar_only``...), read through ``intrinsic_of_op``; no module tests for its name."""
    found = []
    for path in sorted(_ROOT.rglob("*.py")):
        rel = path.relative_to(_ROOT).as_posix()
        if rel.split("/")[0] in ("tests", "bench", "examples") or rel in _NAME_ALLOWED:
            continue
        found += [f"{rel}:{line}: {text}" for line, text in _literal_intrinsic_names(path.read_text())]
    assert found == []


def test_structural_facts_are_declared_on_their_entries():
    def names(pred):
        return sorted(i.name for i in INTRINSICS.values() if pred(i))

    assert names(lambda i: i.conditional) == ["if_then_else"]
    assert names(lambda i: i.takes_address) == ["address_of"]
    assert names(lambda i: i.scalar_only is not None) == [
        "assume", "call_extern", "call_llvm_intrin", "call_llvm_pure_intrin", "call_pure_extern", "ret"]
