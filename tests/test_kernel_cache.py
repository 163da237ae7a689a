"""The on-disk kernel cache (backend/kernel_cache.py): a second compile of the same IR loads the
machine code instead of running LLVM, gives the same numbers, and refuses what a fresh compile
refuses; a changed target is another entry; ``TVMLITE_CACHE_DIR=off`` writes nothing."""
from __future__ import annotations

import numpy as np
import pytest

from tvmlite.backend import CodegenError, build, kernel_cache
from tvmlite.backend.llvm_codegen import LLVMModule
from tvmlite.script import from_source

SAXPY = '''
@T.prim_func
def saxpy(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    for i in range(64):
        C[i] = A[i] * T.float32(2) + T.exp(B[i])
'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private kernel cache directory for the test."""
    monkeypatch.setenv("TVMLITE_CACHE_DIR", str(tmp_path))
    return tmp_path / "kernels"


def run_saxpy(target: str = "llvm") -> np.ndarray:
    ex = build(from_source(SAXPY), target)
    a, b = np.arange(64, dtype="float32"), np.linspace(-1, 1, 64, dtype="float32")
    c = np.zeros(64, "float32")
    ex["saxpy"](a, b, c)
    np.testing.assert_allclose(c, a * 2 + np.exp(b), rtol=1e-6)
    return c


def test_second_compile_loads_the_machine_code(cache, monkeypatch):
    first = run_saxpy()
    entries = sorted(p.suffix for p in cache.iterdir())
    assert entries == [".json", ".o"]
    calls = kernel_cache.load(next(cache.glob("*.json")).stem)[1]
    assert "expf" in calls  # T.exp becomes a libm call, recorded for the symbol check of a hit

    def no_llvm(self, tm=None):
        raise AssertionError("a cached kernel must not be optimised again")

    monkeypatch.setattr(LLVMModule, "optimized_module", no_llvm)
    np.testing.assert_array_equal(run_saxpy(), first)


def test_optimized_source_is_still_available_after_a_hit(cache):
    run_saxpy()
    ex = build(from_source(SAXPY))
    assert "define" in ex.get_source("ll", optimized=True)


def test_another_target_is_another_entry(cache):
    run_saxpy()
    run_saxpy("llvm -opt-level=1")
    assert len(list(cache.glob("*.o"))) == 2


def test_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("TVMLITE_CACHE_DIR", "off")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert kernel_cache.cache_dir() is None
    run_saxpy()
    assert not list(tmp_path.iterdir())


def test_damaged_entry_is_compiled_again(cache):
    run_saxpy()
    for description in cache.glob("*.json"):
        description.write_text("{not json")
    run_saxpy()
    assert all(kernel_cache.load(p.stem) is not None for p in cache.glob("*.json"))


def test_hit_calling_a_missing_function_is_refused(cache):
    run_saxpy()
    key = next(cache.glob("*.json")).stem
    obj, _ = kernel_cache.load(key)
    kernel_cache.store(key, obj, ["no_such_function_tvmlite"])
    with pytest.raises(CodegenError, match="calls no_such_function_tvmlite, which this process does not provide"):
        run_saxpy()


def test_oldest_entries_are_pruned(cache, monkeypatch):
    monkeypatch.setattr(kernel_cache, "MAX_ENTRIES", 3)
    monkeypatch.setattr(kernel_cache, "_PRUNE_EVERY", 1)
    for n in range(6):
        kernel_cache.store(f"{n:064x}", b"object", [])
    assert len(list(cache.glob("*.json"))) == len(list(cache.glob("*.o"))) == 3
