"""Every pass output prints as text that parses back structurally equal (and prints the same again).

For every built-in registered pass, and for every pass of every named pipeline applied one after
another, on every module of tests/data/corpus (legacy/ included) and on a few small modules that
exercise vector code, symbolic shapes, layouts and ``T.attr``: ``parse(print(out))`` is structurally
equal to ``out`` and ``print(parse(print(out))) == print(out)`` (printed with ``show_meta=True`` so
constants survive). The passes and pipelines are read from the registry, so a newly registered one
is covered without editing this file. Pass outputs are computed once per module and chain.
"""
from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import pytest

from tvmlite import passes as P
from tvmlite.ir import structural_equal, tir
from tvmlite.ir.dtype import parse_dtype
from tvmlite.ir.functor import post_order_visit
from tvmlite.ir.module import IRModule
from tvmlite.ir.structural import assert_structural_equal
from tvmlite.passes.infra import _REGISTRY, pass_options
from tvmlite.passes.pipeline_registry import list_pipelines
from tvmlite.script import ScriptError, from_source
from tvmlite.testing import text_diff

from corpus_files import CORPUS_DIR as CORPUS, corpus_files  # noqa: E402  (tests/data/corpus)

# The legacy MLP texts refer to four constants they do not carry (meta[relay.Constant][i]): the
# dense weights and biases of a 784-128-10 MLP. Any values of those shapes make them parse.
_RNG = np.random.default_rng(0)
LEGACY_CONSTANTS = {"relay.Constant": [_RNG.standard_normal(s).astype("float32")
                                       for s in ((128, 784), (128,), (10, 128), (10,))]}

# Small modules: vector code after default_tir (length-64 elementwise ops, a matmul), symbolic
# shapes, a conv2d for the layout passes, strided and reversed vector loops, a block annotation
# that LowerBlocks keeps as T.attr.
SMALL = {
    "ewise64": '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64,), dtype="float32"), y: R.Tensor((64,), dtype="float32")) -> R.Tensor((64,), dtype="float32"):
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, x)
            c = R.exp(b)
            d = R.subtract(c, R.const(1.0, "float32"))
            e = R.maximum(d, y)
            R.output(e)
        return e
''',
    "matmul": '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((16, 32), dtype="float32"), w: R.Tensor((32, 64), dtype="float32"), b: R.Tensor((64,), dtype="float32")) -> R.Tensor((16, 64), dtype="float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(R.add(y, b))
            R.output(z)
        return z
''',
    "symbolic": '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 64), dtype="float32"), w: R.Tensor((64, "m"), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(y)
            s = R.sum(z, axis=[1])
            R.output(s)
        return s
''',
    "conv2d": '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 8, 8, 8), dtype="float32"), w: R.Tensor((8, 8, 3, 3), dtype="float32")) -> R.Tensor((1, 8, 6, 6), dtype="float32"):
        with R.dataflow():
            y = R.nn.conv2d(x, w)
            z = R.nn.relu(y)
            R.output(z)
        return z
''',
    "vector_loops": '''
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((128,), "float32"), B: T.Buffer((64,), "float32"), n: T.int32):
        for i in range(4):
            for j in T.vectorized(16):
                B[i * 16 + j] = A[i * 32 + j * 2] + A[n + j * 3] + A[127 - i * 16 - j]
''',
    "reassoc_block": '''
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 64):
            with T.block("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.block_attr({"tvmlite.reassoc": 1})
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
''',
}

CORPUS_FILES = corpus_files("*.py") + corpus_files("legacy/*.py")
MODULES = [f"corpus/{p.relative_to(CORPUS)}" for p in CORPUS_FILES] + [f"small/{k}" for k in SMALL]

# Options for registered passes that cannot run without them.
PASS_OPTIONS: dict[str, dict[str, Any]] = {
    "ConvertLayout": {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "OHWI"]}},
}


def _builtin_passes() -> list[str]:
    """The registered passes defined by tvmlite itself (tests may register their own), pipelines aside."""
    out = []
    for name, factory in _REGISTRY.items():
        module = getattr(getattr(factory, "func", factory), "__module__", "") or ""
        if module.startswith("tvmlite.passes") and name not in list_pipelines():
            out.append(name)
    return sorted(out)


def _flat(p: P.Pass) -> list[P.Pass]:
    """The leaf passes of a (possibly nested) Sequential, in order."""
    if isinstance(p, P.Sequential):
        return [leaf for inner in p.passes for leaf in _flat(inner)]
    return [p]


def _chains() -> list[str]:
    """Each pipeline; a pipeline that does not legalize also runs after ``zero`` (on PrimFuncs)."""
    out = []
    for name in list_pipelines():
        out.append(name)
        if "LegalizeOps" not in [p.info.name for p in _flat(P.get_pipeline(name))]:
            out.append(f"zero+{name}")
    return out


def _context() -> P.PassContext:
    """opt_level 3 so every pass runs; no reproducer files for the refusals we expect."""
    return P.PassContext(opt_level=3, config={"tvmlite.reproducer_dir": False})


@functools.cache
def load(name: str) -> IRModule:
    """The module named in MODULES (a lone function is wrapped in a module, as passes take)."""
    if name.startswith("small/"):
        ir = from_source(SMALL[name[len("small/"):]])
    else:
        text = (CORPUS / name[len("corpus/"):]).read_text()
        ir = from_source(text, extra_vars={"meta": LEGACY_CONSTANTS} if "meta[relay.Constant]" in text else None)
    return ir if isinstance(ir, IRModule) else IRModule.from_expr(ir)


@functools.cache
def chain_outputs(name: str, chain: str) -> tuple[tuple[str, IRModule], ...]:
    """The module after each pass of ``chain`` (``"zero+lower"``: the lower pipeline on zero's result)."""
    first, _, rest = chain.rpartition("+")
    start = chain_outputs(name, first)[-1][1] if first else load(name)
    out = []
    mod = start
    with _context():
        for p in _flat(P.get_pipeline(rest)):
            mod = p(mod)
            out.append((f"{chain} after {p.info.name}", mod))
    return tuple(out)


@functools.cache
def stages(name: str) -> tuple[tuple[str, IRModule], ...]:
    """Inputs for single passes: the module, after ``zero`` (PrimFuncs with blocks), and after
    ``zero`` + LowerBlocks (block-free loops, which FlattenBuffer and later passes take)."""
    zero = chain_outputs(name, "zero")[-1][1]
    with _context():
        lowered = P.get_pass("LowerBlocks")(zero)
    return (("input", load(name)), ("after zero", zero), ("after zero+LowerBlocks", lowered))


def ill_formed_tir(mod: IRModule) -> list[str]:
    """TIR that TVM's constructors refuse, so no text can reproduce it: a store whose index has lanes
    but whose value is a scalar, and a binary operation on operands of different dtypes."""
    found: list[str] = []

    def visit(n: Any) -> None:
        if isinstance(n, tir.BufferStore):
            lanes = max((parse_dtype(i.dtype).lanes for i in n.indices), default=1)
            if lanes > 1 and parse_dtype(n.value.dtype).lanes == 1:
                found.append(f"{n.buffer.name}[<{lanes} lanes>] = <a {n.value.dtype} scalar>: {n.value.script()}")
        elif isinstance(n, tir.BinaryOp) and n.a.dtype != n.b.dtype:
            found.append(f"{type(n).__name__} of {n.a.dtype} and {n.b.dtype}: {n.script()}")

    for f in mod.functions.values():
        if isinstance(f, tir.PrimFunc):
            post_order_visit(f.body, visit)
    return found


@functools.lru_cache(maxsize=512)
def parse_and_reprint(text: str) -> tuple[Any, str]:
    """``from_source(text)`` and its printed form; many steps leave a module unchanged, so each
    distinct text is parsed once."""
    again = from_source(text)
    return again, again.script(show_meta=True)


def round_trip_failure(mod: IRModule) -> str | None:
    """None when parse(print(mod)) == mod and printing is a fixed point, else what went wrong."""
    text = mod.script(show_meta=True)
    try:
        again, reprinted = parse_and_reprint(text)
    except ScriptError as err:
        return f"the printed text does not parse: {err}\nprinted text:\n{text}"
    if not structural_equal(mod, again):
        try:
            assert_structural_equal(mod, again)
        except AssertionError as err:
            return f"parse(print(ir)) differs from ir: {err}\nprinted text:\n{text}"
    if reprinted != text:
        return "printing is not a fixed point:\n" + text_diff(text, reprinted, "print(ir)", "print(parse(print(ir)))")
    return None


def report(failures: list[str]) -> None:
    """Fail naming every step whose output is ill-formed or does not round-trip."""
    assert not failures, "\n\n".join(failures)


def check(label: str, mod: IRModule, failures: list[str]) -> None:
    """Record in ``failures`` why ``mod`` (the result of the step ``label``) is ill-formed TIR
    (lanes or dtypes that disagree) or does not round-trip."""
    bad = ill_formed_tir(mod)
    if bad:
        failures.append(f"{label}: the pass built ill-formed TIR, e.g. {bad[0]}")
    why = round_trip_failure(mod)
    if why is not None:
        failures.append(f"{label}: {why}")


@pytest.mark.parametrize("chain", _chains())
@pytest.mark.parametrize("name", MODULES)
def test_pipeline_steps_reparse(name, chain):
    failures: list[str] = []
    for label, mod in chain_outputs(name, chain):
        check(f"{name}: {label}", mod, failures)
    report(failures)


@pytest.mark.parametrize("pass_name", _builtin_passes())
@pytest.mark.parametrize("name", MODULES)
def test_single_pass_output_reparses(name, pass_name):
    options = dict(PASS_OPTIONS.get(pass_name, {}))
    required = [k for k, p in (pass_options(pass_name) or {}).items()
                if p.default is p.empty and k not in options]
    assert not required, f"add options for {pass_name} ({', '.join(required)}) to PASS_OPTIONS"
    ran, failures = [], []
    for stage, mod in stages(name):
        with _context():
            try:
                out = P.get_pass(pass_name, **options)(mod)
            except P.PassError:
                continue  # the pass refuses this kind of input (e.g. FlattenBuffer before LowerBlocks)
        ran.append(stage)
        check(f"{name}: {pass_name} on the module {stage}", out, failures)
    assert ran, f"{pass_name} refused every stage of {name}"
    report(failures)


def test_every_registered_pass_and_pipeline_is_covered():
    assert {"LegalizeOps", "LowerBlocks", "VectorizeLoop", "DefaultCPUSchedule"} <= set(_builtin_passes())
    assert {"zero", "default", "lower", "default_tir"} <= set(list_pipelines())
    assert {"zero+lower", "zero+default_tir"} <= set(_chains())
    assert any(n.startswith("corpus/legacy/") for n in MODULES) and len(CORPUS_FILES) >= 18


def test_vector_code_and_attr_are_exercised():
    """The small modules really produce what this file is about: vector slices and T.attr."""
    vector_store = re.compile(r"\w+\[[^\[\]]+:[^\[\]]+\] = ")  # a store through a slice: B[i * 16:i * 16 + 16] =
    for name in ("small/ewise64", "small/matmul"):
        assert vector_store.search(chain_outputs(name, "zero+default_tir")[-1][1].script()), name
    reversed_text = chain_outputs("small/vector_loops", "lower")[-1][1].script()
    assert "A[i * 32:i * 32 + 32:2]" in reversed_text and ":-1]" in reversed_text
    attr = chain_outputs("small/reassoc_block", "lower")[0][1].script()
    assert 'T.attr("update", "tvmlite.reassoc", 1)' in attr
    symbolic = chain_outputs("small/symbolic", "zero+default_tir")[-1][1].script()
    assert "n = T.int64()" in symbolic


def test_vector_index_forms_round_trip():
    """Every Ramp/Broadcast index the printer can meet: slices of stride 1, s and -s on symbolic
    int32 and int64 bases, and the T.Ramp / T.Broadcast forms that have no slice spelling."""
    text = '''
@T.prim_func
def f(A: T.Buffer((256,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((T.int64(64),), "float32"), n: T.int32, m: T.int64):
    for i in range(4):
        B[i * 16:i * 16 + 16] = A[i * 32:i * 32 + 32:2] + A[n + 48:n:-3]
        B[T.Ramp(i, 0, 4)] = A[T.Ramp(n, i, 4)] + A[T.Broadcast(n, 4)]
        C[m:m + T.int64(8)] = T.Broadcast(A[i], 8)
'''
    f = from_source(text)
    printed = f.script()
    assert "B[i * 16:i * 16 + 16] = A[i * 32:i * 32 + 32:2] + A[n + 48:n + 48 + -48:-3]" in printed
    assert "B[T.Ramp(i, 0, 4)] = A[T.Ramp(n, i, 4)] + A[T.Broadcast(n, 4)]" in printed
    assert "C[m:m + T.int64(8)] = T.Broadcast(A[i], 8)" in printed
    assert round_trip_failure(IRModule.from_expr(f)) is None
