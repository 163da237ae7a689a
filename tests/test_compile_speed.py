"""Compile-time work of issue 17 (no timings here, only behaviour): index math by powers of two on
non-negative values is a shift or a mask, loops that surely run skip their entry guard, LLVM's
long calls run without llvmlite's lock on a thread's own context (same machine code), and the
compiling thread makes the LLVM modules still queued when lowering is done."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend import overlapped_build
from tvmlite.backend.executable import machine_code
from tvmlite.backend.llvm_codegen import codegen
from tvmlite.backend.target import Target, llvm_binding
from tvmlite.backend.thread_pool import ensure_pool
from tvmlite.script import from_source

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv("TVMLITE_CACHE_DIR", "off")


SHIFTS = '''
from tvmlite.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((64,), "float32"), n: T.int64):
    for i in range(T.int64(64)):
        B[i] = A[i // T.int64(16), i % T.int64(16)] + T.Cast("float32", (i + n) // T.int64(4) + (i + n) % T.int64(8))
'''


def function_body(ir_text: str, symbol: str) -> str:
    """The text of one LLVM function definition."""
    start = ir_text.index(f"@{symbol}(")
    return ir_text[start:ir_text.index("\n}\n", start)]


def test_power_of_two_index_math_on_loop_counters_is_a_shift_or_mask():
    lm = codegen(from_source(SHIFTS))
    body = function_body(lm.llvm_ir, "tvmlite_main")
    # i // 16 and i % 16 of the counter (from 0): one shift, one mask
    assert body.count("lshr i64 %i, 4") == 1 and body.count("and i64 %i, 15") == 1
    # i + n may be negative (n is any integer): both keep the floor sequence (sdiv and srem each)
    assert body.count("sdiv i64") == 2 and body.count("srem i64") == 2
    assert "lshr i64 %.1" not in body


@pytest.mark.parametrize("n", [-37, -1, 0, 5])
def test_shifted_index_math_gives_numpys_numbers(n):
    ex = tvmlite.compile(from_source(SHIFTS))
    a = np.arange(64, dtype=np.float32).reshape(4, 16)
    b = np.zeros(64, dtype=np.float32)
    ex["main"](a, b, n)
    i = np.arange(64)
    want = a[i // 16, i % 16] + (np.floor_divide(i + n, 4) + np.mod(i + n, 8)).astype(np.float32)
    np.testing.assert_array_equal(b, want)


GUARDS = '''
from tvmlite.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), n: T.int64):
    for i in range(T.int64(8)):
        A[i] = T.float32(1)
    for j in range(n):
        A[j] = T.float32(2)
'''


def test_a_loop_that_surely_runs_has_no_entry_guard():
    body = function_body(codegen(from_source(GUARDS)).llvm_ir, "tvmlite_main")
    entry = body[body.index("entry:"):body.index("for.i:")]
    assert entry.strip().splitlines()[-1].strip() == "br label %for.i"
    assert "icmp slt i64 0, 8" not in body
    assert "icmp slt i64 0, %n" in body  # a loop of n iterations keeps its guard


def test_private_context_gives_the_same_machine_code():
    lm = codegen(P.parse_pipeline("default_tir")(prim_funcs()))
    if lm.uses_parallel:
        ensure_pool()  # its symbol must exist before the calls are checked
    tgt = Target.of("llvm")
    shared, calls = machine_code(lm, tgt.create_target_machine(jit=True))
    objs: list = [None, None]

    def make(k: int) -> None:
        context = llvm_binding().create_context()
        objs[k] = machine_code(lm, tgt.create_target_machine(jit=True), context)

    threads = [threading.Thread(target=make, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert objs[0] == objs[1] == (shared, calls)


def mlp_module():
    return from_source(read_corpus("seed004_mlp_torch.py"))


def prim_funcs():
    """The MLP's PrimFuncs after the default pipeline."""
    from tvmlite.ir import tir
    from tvmlite.ir.module import IRModule

    mod = P.get_pipeline("default")(mlp_module())
    return IRModule({gv: f for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)})


def test_compiling_thread_makes_the_parts_left_when_lowering_is_done(monkeypatch):
    mod = P.get_pipeline("default")(mlp_module())
    seq_ll = None
    with monkeypatch.context() as m:
        m.setattr(overlapped_build, "build_overlapped", lambda *a: None)
        seq = tvmlite.compile(mod)
        seq_ll = seq.get_source("ll")
    made: list[str] = []
    started, helped = threading.Event(), threading.Event()
    real_make, real_help = overlapped_build.OverlappedBuild._make, overlapped_build.OverlappedBuild._help

    def make(self, part, own):
        if threading.current_thread() is not threading.main_thread():
            started.set()
            helped.wait(30)  # the worker's first part waits until the compiling thread has helped
        made.append(threading.current_thread().name)
        real_make(self, part, own)

    def help_(self):
        started.wait(30)  # the worker holds the first part
        try:
            real_help(self)
        finally:
            helped.set()

    monkeypatch.setattr(overlapped_build.OverlappedBuild, "_make", make)
    monkeypatch.setattr(overlapped_build.OverlappedBuild, "_help", help_)
    monkeypatch.setattr(overlapped_build, "MAX_GROUPS", 100)  # a part per PrimFunc
    ex = tvmlite.compile(mod)
    n_parts = len(ex.lowered.functions_items())
    assert n_parts >= 2
    # The worker took the first part and waited; the compiling thread made all the others.
    assert made.count("tvmlite-llvm") == 1 and made.count("MainThread") == n_parts - 1
    assert ex.get_source("ll") == seq_ll
    rng = np.random.default_rng(1)
    args = [rng.standard_normal([int(d.value) for d in p.struct_info.shape], dtype=np.float32)
            for p in mod["main"].params]
    got = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](*args).numpy()
    want = tvmlite.VirtualMachine(seq, tvmlite.cpu())["main"](*args).numpy()
    np.testing.assert_array_equal(got, want)


PARALLEL = '''
from tvmlite.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), n: T.int64):
    for i in T.parallel(T.int64(64)):
        A[i // T.int64(16) * T.int64(16) + i % T.int64(16)] = T.float32(1)
    for j in T.parallel(n, T.int64(64)):
        A[j] = T.float32(2)
'''


def test_parallel_counter_from_a_literal_start_is_the_workers_index():
    text = codegen(from_source(PARALLEL)).llvm_ir
    body = function_body(text, "tvmlite_main.parallel0.body")
    loop = body[body.index("for.i.k:"):body.index("store float")]
    # i is the worker's k itself (start 0, step 1), so the index math sees a counter from 0
    assert [line.strip() for line in loop.splitlines()[1:] if line.strip()] == [
        "%i.k = phi i64 [ %begin, %entry ], [ %.17, %for.i.k ]",
        "%.11 = lshr i64 %i.k, 4",
        "%.12 = mul nsw i64 %.11, 16",
        "%.13 = and i64 %i.k, 15",
        "%.14 = add nsw i64 %.12, %.13",
        "%.15 = getelementptr inbounds float, ptr %A, i64 %.14",
    ]
    # a start known only at run time still comes through the closure
    other = function_body(text, "tvmlite_main.parallel1.body")
    assert "mul nsw i64 %j.k, %step" in other and "add nsw i64 %lo, %.12" in other


@pytest.mark.parametrize("n", [0, 5, 63])
def test_parallel_loops_give_the_right_numbers(n):
    ex = tvmlite.compile(from_source(PARALLEL))
    a = np.zeros(64, dtype=np.float32)
    ex["main"](a, n)
    want = np.ones(64, dtype=np.float32)
    want[n:] = 2
    np.testing.assert_array_equal(a, want)


def test_lowering_groups_start_with_one_function_and_end_small():
    groups = overlapped_build._groups(list(range(22)), 10)  # ResNet-18's 22 kernels
    assert [len(g) for g in groups] == [1, 3, 3, 3, 3, 3, 2, 2, 1, 1]
    assert [x for g in groups for x in g] == list(range(22))  # in order, each once
    assert [len(g) for g in overlapped_build._groups(list(range(100)), 10)] == [1, 19, 19, 19, 18, 18, 2, 2, 1, 1]
    assert overlapped_build._groups(list(range(8)), 10) == [[i] for i in range(8)]  # few: one each
