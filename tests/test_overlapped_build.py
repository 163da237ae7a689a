"""tvmlite.compile lowers the PrimFuncs a group at a time while LLVM compiles the groups before on a
thread (backend/overlapped_build.py): the lowered TIR, the LLVM source shown, the numbers and the
errors are those of the sequential path, which still runs when instruments watch the passes."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend import overlapped_build
from tvmlite.backend.executable import Executable
from tvmlite.backend.llvm.errors import CodegenError
from tvmlite.backend.llvm_codegen import codegen
from tvmlite.script import from_source

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv("TVMLITE_CACHE_DIR", "off")


def sequential_compile(monkeypatch, mod, **kwargs):
    """tvmlite.compile with the overlap switched off."""
    with monkeypatch.context() as m:
        m.setattr(overlapped_build, "build_overlapped", lambda *a: None)
        return tvmlite.compile(mod, **kwargs)


def mlp():
    return from_source(read_corpus("seed004_mlp_torch.py"))


def test_overlapped_compile_gives_the_sequential_result(monkeypatch):
    mod = P.get_pipeline("default")(mlp())
    calls = []
    real = overlapped_build.build_overlapped

    def spy(*args):
        out = real(*args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(overlapped_build, "build_overlapped", spy)
    ex = tvmlite.compile(mod)
    assert calls == [True] and len(ex.kernel_names()) >= 2
    seq = sequential_compile(monkeypatch, mod)
    assert ex.get_source("tir") == seq.get_source("tir")
    assert ex.get_source("ll") == seq.get_source("ll") == codegen(ex.lowered).llvm_ir
    assert ex.kernel_names() == seq.kernel_names()
    assert isinstance(ex.kernels, Executable) and ex.kernels.keys() == seq.kernels.keys()
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d.value) for d in p.struct_info.shape], dtype=np.float32)
            for p in mod["main"].params]
    got = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](*args).numpy()
    want = tvmlite.VirtualMachine(seq, tvmlite.cpu())["main"](*args).numpy()
    np.testing.assert_array_equal(got, want)


def test_instruments_see_the_whole_module_once(monkeypatch):
    mod = P.get_pipeline("default")(mlp())
    timing = P.PassTimingInstrument()
    monkeypatch.setattr(overlapped_build.OverlappedBuild, "__init__",
                        lambda *a: pytest.fail("instruments must see the sequential pipeline"))
    with P.PassContext(instruments=[timing]):
        tvmlite.compile(mod)
    rows = [line.split()[0] for line in timing.render().splitlines()[1:]]
    assert rows.count("DefaultCPUSchedule") == 1


def test_module_level_pipelines_are_not_split():
    seen = []

    @P.module_pass(opt_level=0, name="CountFunctions")
    def count(mod, ctx):
        seen.append(len(mod.get_global_vars()))
        return mod

    mod = P.get_pipeline("default")(mlp())
    tvmlite.compile(mod, tir_pipeline=P.Sequential([count, P.get_pipeline("lower")]))
    assert len(seen) == 1 and seen[0] >= 2


def test_a_failure_is_reported_as_the_sequential_path_reports_it(monkeypatch):
    mod = from_source('''
@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.call_extern("float32", "no_such_function_tvmlite", A[i])

    @T.prim_func
    def g(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)
''')
    with pytest.raises(CodegenError, match="calls no_such_function_tvmlite, which this process does not provide"):
        tvmlite.compile(mod)


def test_compiles_in_threads_restore_the_switch_interval():
    import sys
    import threading

    mod = P.get_pipeline("default")(mlp())
    before = sys.getswitchinterval()
    results = []
    threads = [threading.Thread(target=lambda: results.append(tvmlite.compile(mod))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and sys.getswitchinterval() == before
    texts = {ex.get_source("tir") for ex in results}
    assert len(texts) == 1


def test_vm_lowering_runs_while_llvm_works_and_gives_the_sequential_result(monkeypatch):
    mod = P.get_pipeline("default")(mlp())
    seen = []
    real = overlapped_build.build_overlapped

    def spy(*args):
        out = real(*args)
        seen.append(None if out is None else out[2])
        return out

    monkeypatch.setattr(overlapped_build, "build_overlapped", spy)
    ex = tvmlite.compile(mod)
    assert len(seen) == 1 and seen[0] is ex.vm_mod  # the overlapped build made the VM module
    seq = sequential_compile(monkeypatch, mod)
    assert ex.get_source("vm") == seq.get_source("vm")


def test_a_failing_vm_lowering_fails_as_in_the_sequential_compile(monkeypatch):
    mod = P.get_pipeline("default")(mlp())

    @P.module_pass(opt_level=0, name="Boom")
    def boom(m, ctx):
        raise ValueError("no VM for you")

    with pytest.raises(Exception, match="no VM for you") as overlapped_err:
        tvmlite.compile(mod, vm_pipeline=boom)
    with pytest.raises(Exception, match="no VM for you") as seq_err:
        sequential_compile(monkeypatch, mod, vm_pipeline=boom)
    assert type(overlapped_err.value) is type(seq_err.value)
