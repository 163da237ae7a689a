"""Test helpers for schedule primitives: exact printed text after a step, numerical equality of a
scheduled function with the unscheduled one (both compiled with LLVM and run on the same random
inputs), trace replay, refusals, and the TVMScript programs several schedule tests start from."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tvmlite
from tvmlite.ir import tir
from tvmlite.ir.module import IRModule
from tvmlite.script import from_source
from tvmlite.tir import Schedule, ScheduleError

from corpus_files import CORPUS_DIR  # noqa: E402  (tests/data/corpus)
CORPUS = CORPUS_DIR / "seed004_mlp_torch_zero.py"

# ---------------------------------------------------------------------------- shared programs
ELEMWISE = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0
'''

SAME_LOOP = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i in range(128):
        for j in range(128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for j in range(128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0
'''

MATMUL = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


# ---------------------------------------------------------------------------- modules and checks
def module(text: str) -> IRModule:
    """The text's PrimFunc as the module's main."""
    return IRModule({"main": from_source(textwrap.dedent(text))})


def mlp_layer() -> IRModule:
    """The corpus's fused_matmul_add_relu (matmul with T.init, then T_add, then compute)."""
    return IRModule({"main": from_source(CORPUS.read_text())["fused_matmul_add_relu"]})


def expect(sch: Schedule, text: str) -> None:
    """The scheduled main prints exactly as ``text``."""
    assert sch.mod["main"].script() == textwrap.dedent(text).strip("\n")


def check(sch: Schedule, original: IRModule, rtol: float = 1e-5) -> None:
    """Same numbers, replayable trace, re-parseable text."""
    assert_same_numbers(original, sch.mod, rtol=rtol)
    assert_replays(sch, original)


def refused(sch: Schedule, call, match: str) -> None:
    """``call`` raises a ScheduleError matching ``match`` and leaves the module untouched."""
    before = sch.mod
    text = before.script()
    with pytest.raises(ScheduleError, match=match):
        call()
    assert sch.mod is before
    assert sch.mod.script() == text


def prim_func_text(mod: IRModule, name: str = "main") -> str:
    """The printed PrimFunc ``name`` of ``mod`` (as ``print(mod[name])``)."""
    return mod[name].script()


def random_args(func: tir.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    """One random array per buffer parameter (static shapes only)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for p in func.params:
        buf = func.buffer_map[p]
        shape = tuple(int(d.value) for d in buf.shape)
        if buf.dtype.startswith("float"):
            arrays.append(rng.standard_normal(shape).astype(buf.dtype))
        elif buf.dtype == "bool":
            arrays.append(rng.integers(0, 2, shape).astype(bool))
        else:
            arrays.append(rng.integers(-8, 8, shape).astype(buf.dtype))
    return arrays


def run(mod: IRModule, name: str, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Compile ``mod``'s PrimFunc ``name`` alone (no default schedule), run it on copies of
    ``arrays``, return them (outputs written in place)."""
    one = IRModule({name: mod[name]})
    ex = tvmlite.compile(one, tir_pipeline="lower")
    out = [a.copy() for a in arrays]
    ex[name](*out)
    return out


def assert_same_numbers(before: IRModule, after: IRModule, name: str = "main", rtol: float = 1e-5,
                        atol: float = 1e-5) -> None:
    """The scheduled ``after[name]`` computes what ``before[name]`` does, on random inputs."""
    arrays = random_args(before[name])
    for want, got in zip(run(before, name, arrays), run(after, name, arrays)):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def assert_replays(sch: "tvmlite.tir.Schedule", original: IRModule) -> None:
    """Running the printed trace on a fresh schedule of ``original`` gives the same module text,
    and the scheduled module re-parses to the same text."""
    namespace: dict = {}
    exec(str(sch.trace), namespace)  # noqa: S102  (the trace is Python by design)
    fresh = tvmlite.tir.Schedule(original)
    namespace["apply_trace"](fresh)
    assert fresh.mod.script() == sch.mod.script()
    assert from_source(sch.mod.script()).script() == sch.mod.script()
