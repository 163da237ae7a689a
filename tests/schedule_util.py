"""Test helpers for schedule primitives: exact printed text after a step, numerical equality of a
scheduled function with the unscheduled one (both compiled with LLVM and run on the same random
inputs), and trace replay."""
from __future__ import annotations

import numpy as np

import tvmlite
from tvmlite.ir import tir
from tvmlite.ir.module import IRModule
from tvmlite.script import from_source


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
