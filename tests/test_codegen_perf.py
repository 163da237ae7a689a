"""Constructs of hand-scheduled CPU kernels (docs/cpu_kernels.md): compacted cache and accumulator
buffers, reassociated float reductions (``"tvmlite.reassoc"``), VectorizeLoop, unrolled register
tiles and parallel loops compute what numpy does, and the generated code has the expected shape
(vector loads and fmas, no stack slot left for a register tile). Properties only, never timings."""
from __future__ import annotations

import re
import threading

import numpy as np
import pytest

import tvmlite
from tvmlite.backend.target import host_cpu
from tvmlite.ir import tir
from tvmlite.ir.arith import as_const_int
from tvmlite.ir.stmt_functor import post_order_visit
from tvmlite.script import from_source

HAS_AVX512 = "+avx512f" in host_cpu()[2].split(",")


def _compile(text: str):
    return tvmlite.compile(from_source(text))


def _nodes(func: tir.PrimFunc, kind: type) -> list:
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, kind) else None)
    return found


def _body_function(ll: str, name: str) -> str:
    """The text of one function of an LLVM module."""
    m = re.search(r"define [^\n]*@" + re.escape(name) + r"\(.*?\n}\n", ll, re.S)
    assert m, f"no function {name} in the module"
    return m.group(0)


# ---- matmul micro-kernel: packed B panel (cache_read at the parallel loop), local C tile

def _matmul_text(n: int = 64, mr: int = 4, nr: int = 16) -> str:
    rows, panels = n // 2, n // nr
    i = f"f // {panels} * {rows} + i_1 * {mr}"
    j = f"f % {panels} * {nr}"
    return f'''
@T.prim_func
def mm(a: T.Buffer(({n}, {n}), "float32"), b: T.Buffer(({n}, {n}), "float32"), c: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    b_global = T.alloc_buffer(({n}, {n}))
    c_local = T.alloc_buffer(({n}, {n}), scope="local")
    for f in T.parallel({2 * panels}):
        for ax0 in range({n}):
            for ax1 in T.vectorized({nr}):
                with T.block("b_global"):
                    v0 = T.axis.spatial({n}, ax0)
                    v1 = T.axis.spatial({n}, {j} + ax1)
                    b_global[v0, v1] = b[v0, v1]
        for i_1 in range({rows // mr}):
            for i_2_init in T.unroll({mr}):
                for j_1_init in T.vectorized({nr}):
                    with T.block("mm_init"):
                        vi = T.axis.spatial({n}, {i} + i_2_init)
                        vj = T.axis.spatial({n}, {j} + j_1_init)
                        c_local[vi, vj] = T.float32(0)
            for k in range({n}):
                for i_2 in T.unroll({mr}):
                    for j_1 in T.vectorized({nr}):
                        with T.block("mm_update"):
                            vi = T.axis.spatial({n}, {i} + i_2)
                            vj = T.axis.spatial({n}, {j} + j_1)
                            vk = T.axis.reduce({n}, k)
                            c_local[vi, vj] = c_local[vi, vj] + a[vi, vk] * b_global[vk, vj]
            for ax0 in range({mr}):
                for ax1 in T.vectorized({nr}):
                    with T.block("c_local"):
                        v0 = T.axis.spatial({n}, {i} + ax0)
                        v1 = T.axis.spatial({n}, {j} + ax1)
                        c[v0, v1] = c_local[v0, v1]
'''


def test_matmul_micro_kernel_matches_numpy():
    ex = _compile(_matmul_text())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
    c = np.zeros((64, 64), np.float32)
    ex["mm"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_cache_buffers_are_compacted_into_their_loops():
    func = _compile(_matmul_text()).lowered["mm"]
    loops = {loop.loop_var.name: loop for loop in _nodes(func, tir.For)}
    decls = {d.buffer.name: d for d in _nodes(func, tir.DeclBuffer)}
    # b_global: one K x NR panel per parallel iteration; c_local: the MR x NR register tile.
    assert [int(s.value) for s in decls["b_global"].buffer.shape] == [64 * 16]
    assert [int(s.value) for s in decls["c_local"].buffer.shape] == [4 * 16]
    assert any(d.buffer.name == "b_global" for d in _nodes(loops["f"], tir.DeclBuffer))
    assert any(d.buffer.name == "c_local" for d in _nodes(loops["i_1"], tir.DeclBuffer))


def test_register_tile_has_no_stack_slot_and_uses_vector_fma():
    ex = _compile(_matmul_text())
    ll = ex.get_source("ll", optimized=True)
    body = _body_function(ll, "tvmlite_mm.parallel0")
    allocas = re.findall(r"%(\S+) = alloca", body)
    assert allocas and all(a.startswith("b_global") for a in allocas)  # the c_local tile lives in registers
    assert re.search(r"fmul contract <16 x float>", body) or "llvm.fma.v16f32" in body
    assert re.search(r"load <16 x float>", body)
    if HAS_AVX512:
        asm = ex.get_source("asm")
        assert re.search(r"vfmadd\w+\s+.*zmm", asm)


def test_reduction_accumulator_stays_outside_its_reduction_loop():
    # Every access of acc is inside the k loop, but k drives the reduction: acc must survive it.
    text = '''
@T.prim_func
def rowsum(a: T.Buffer((4, 8), "float32"), out: T.Buffer((4,), "float32")):
    acc = T.alloc_buffer((4,))
    for i in range(4):
        for k in range(8):
            with T.block("r"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    acc[vi] = T.float32(0)
                acc[vi] = acc[vi] + a[vi, vk]
            with T.block("w"):
                vi = T.axis.spatial(4, i)
                out[vi] = acc[vi]
'''
    ex = _compile(text)
    func = ex.lowered["rowsum"]
    loops = {loop.loop_var.name: loop for loop in _nodes(func, tir.For)}
    assert not any(d.buffer.name == "acc" for d in _nodes(loops["k"], tir.DeclBuffer))
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = np.zeros(4, np.float32)
    ex["rowsum"](a, out)
    np.testing.assert_allclose(out, a.sum(1))


# ---- dense with w in [out, in] layout: reassociated k reduction

def _dense_text(m: int, n: int, k: int, mr: int, nr: int, annotate: str = "loop") -> str:
    cols = n // nr
    ann = ', annotations={"tvmlite.reassoc": 1}' if annotate == "loop" else ""
    battr = 'T.block_attr({"tvmlite.reassoc": 1})' if annotate == "block" else ""
    return f'''
@T.prim_func
def dense(x: T.Buffer(({m}, {k}), "float32"), w: T.Buffer(({n}, {k}), "float32"), bias: T.Buffer(({n},), "float32"), out: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    acc = T.alloc_buffer(({m}, {n}))
    for f in T.parallel({m // mr * cols}):
        for i_init, j_init in T.grid({mr}, {nr}):
            with T.block("init"):
                vi = T.axis.spatial({m}, f // {cols} * {mr} + i_init)
                vj = T.axis.spatial({n}, f % {cols} * {nr} + j_init)
                acc[vi, vj] = T.float32(0)
        for kk in T.serial({k}{ann}):
            for i_1 in T.unroll({mr}):
                for j_1 in T.unroll({nr}):
                    with T.block("update"):
                        vi = T.axis.spatial({m}, f // {cols} * {mr} + i_1)
                        vj = T.axis.spatial({n}, f % {cols} * {nr} + j_1)
                        vk = T.axis.reduce({k}, kk)
                        {battr}
                        acc[vi, vj] = acc[vi, vj] + x[vi, vk] * w[vj, vk]
        for ax0, ax1 in T.grid({mr}, {nr}):
            with T.block("epilogue"):
                v0 = T.axis.spatial({m}, f // {cols} * {mr} + ax0)
                v1 = T.axis.spatial({n}, f % {cols} * {nr} + ax1)
                out[v0, v1] = T.max(acc[v0, v1] + bias[v1], T.float32(0))
'''


@pytest.mark.parametrize("m, n, k, mr, nr", [(8, 16, 100, 4, 4), (1, 10, 256, 1, 10), (4, 6, 37, 2, 3)])
@pytest.mark.parametrize("annotate", ["loop", "block", "none"])
def test_reassociated_dense_matches_numpy(m, n, k, mr, nr, annotate):
    ex = _compile(_dense_text(m, n, k, mr, nr, annotate))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((n, k), dtype=np.float32)
    bias = rng.standard_normal(n, dtype=np.float32)
    out = np.zeros((m, n), np.float32)
    ex["dense"](x, w, bias, out)
    np.testing.assert_allclose(out, np.maximum(x @ w.T + bias, 0), rtol=1e-4, atol=1e-4)


def test_reassoc_annotation_vectorises_the_reduction():
    with_ann = _compile(_dense_text(8, 16, 256, 4, 4)).get_source("ll", optimized=True)
    without = _compile(_dense_text(8, 16, 256, 4, 4, "none")).get_source("ll", optimized=True)
    assert re.search(r"fadd reassoc contract <\d+ x float>", with_ann)
    assert "llvm.vector.reduce.fadd" in with_ann
    assert "reassoc" not in without  # IEEE order is kept unless the schedule allows otherwise
    assert "llvm.vector.reduce.fadd" not in without


def test_block_reassoc_annotation_reaches_codegen():
    ex = _compile(_dense_text(4, 4, 64, 4, 4, "block"))
    assert 'T.attr("update", "tvmlite.reassoc", 1)' in ex.get_source("tir")
    assert "fadd reassoc" in ex.get_source("ll")


# ---- VectorizeLoop

_EW = '''
@T.prim_func
def ew(x: T.Buffer((4096,), "float32"), y: T.Buffer((4096,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0_0 in T.parallel(4):
        for i0_1 in range(64):
            for i0_2 in T.vectorized(16):
                with T.block("compute"):
                    v = T.axis.spatial(4096, i0_0 * 1024 + i0_1 * 16 + i0_2)
                    y[v] = T.max(x[v] * T.float32(2.0) + T.float32(1.0), T.float32(0.0))
'''


def test_vectorized_loop_becomes_vector_statement():
    ex = _compile(_EW)
    func = ex.lowered["ew"]
    assert not [lp for lp in _nodes(func, tir.For) if lp.kind == tir.ForKind.VECTORIZED]
    stores = _nodes(func, tir.BufferStore)
    assert len(stores) == 1 and isinstance(stores[0].indices[0], tir.Ramp) and stores[0].indices[0].lanes == 16
    ll = ex.get_source("ll", optimized=True)
    assert "load <16 x float>" in ll and "store <16 x float>" in ll
    assert "masked.gather" not in ll and "masked.scatter" not in ll
    x = np.random.default_rng(2).standard_normal(4096, dtype=np.float32)
    y = np.zeros_like(x)
    ex["ew"](x, y)
    np.testing.assert_array_equal(y, np.maximum(x * 2 + 1, 0))


def test_unit_loops_inside_a_vectorized_loop_are_vectorized():
    """Unit loops under the lane loop (a 1x1 conv's kh and kw where the schedule left them) are
    their bodies: the statement is written on vectors, not left to LLVM's SLP vectorizer."""
    text = '''
@T.prim_func
def f(a: T.Buffer((4, 16), "float32"), w: T.Buffer((1, 1, 16), "float32"), b: T.Buffer((4, 16), "float32")):
    for i in range(4):
        for c in T.vectorized(16):
            for kh, kw in T.grid(1, 1):
                with T.block("t"):
                    vi, vc, vh, vw = T.axis.remap("SSSS", [i, c, kh, kw])
                    b[vi, vc] = a[vi, vc] * w[vh, vw, vc] + a[vi, 0]
'''
    ex = _compile(text)
    func = ex.lowered["f"]
    assert not [lp for lp in _nodes(func, tir.For) if lp.kind == tir.ForKind.VECTORIZED or as_const_int(lp.extent) == 1]
    stores = _nodes(func, tir.BufferStore)
    assert len(stores) == 1 and isinstance(stores[0].indices[0], tir.Ramp) and stores[0].indices[0].lanes == 16
    rng = np.random.default_rng(4)
    a, w = rng.standard_normal((4, 16), dtype=np.float32), rng.standard_normal((1, 1, 16), dtype=np.float32)
    b = np.zeros((4, 16), np.float32)
    ex["f"](a, w, b)
    np.testing.assert_allclose(b, a * w[0, 0] + a[:, :1], rtol=1e-5, atol=1e-6)  # FMA contraction


def test_vectorize_ramp_arithmetic_and_gathers():
    # Strided and transposed accesses, a cast and an intrinsic inside the vector statement.
    text = '''
@T.prim_func
def f(a: T.Buffer((8, 8), "float32"), b: T.Buffer((8, 8), "float64"), c: T.Buffer((8, 4), "int32")):
    for i in range(8):
        for j in T.vectorized(8):
            with T.block("t"):
                vi, vj = T.axis.remap("SS", [i, j])
                b[vi, vj] = T.Cast("float64", T.exp(a[vj, vi])) + T.Cast("float64", vj * 2 - 1)
    for i in range(8):
        for j in T.vectorized(4):
            with T.block("s"):
                vi, vj = T.axis.remap("SS", [i, j])
                c[vi, vj] = T.Cast("int32", a[vi, vj * 2]) + (3 - vj) // 2
'''
    ex = _compile(text)
    assert not [lp for lp in _nodes(ex.lowered["f"], tir.For) if lp.kind == tir.ForKind.VECTORIZED]
    a = np.random.default_rng(3).standard_normal((8, 8), dtype=np.float32) * 4
    b = np.zeros((8, 8), np.float64)
    c = np.zeros((8, 4), np.int32)
    ex["f"](a, b, c)
    j = np.arange(8)
    np.testing.assert_allclose(b, np.exp(a.T).astype(np.float64) + (j * 2 - 1), rtol=1e-6)
    np.testing.assert_array_equal(c, a[:, ::2].astype(np.int32) + (3 - np.arange(4)) // 2)


def test_vectorized_reduction_loop_stays_a_loop():
    text = '''
@T.prim_func
def s(a: T.Buffer((64,), "float32"), out: T.Buffer((1,), "float32")):
    for k in T.vectorized(64):
        with T.block("sum"):
            vk = T.axis.reduce(64, k)
            with T.init():
                out[0] = T.float32(0)
            out[0] = out[0] + a[vk]
'''
    ex = _compile(text)
    assert [lp for lp in _nodes(ex.lowered["s"], tir.For) if lp.kind == tir.ForKind.VECTORIZED]
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(1, np.float32)
    ex["s"](a, out)
    assert out[0] == a.sum()


# ---- the thread pool: back-to-back and concurrent launches

def test_parallel_kernel_back_to_back_and_from_threads():
    ex = _compile(_EW)
    f = ex["ew"]
    xs = [np.random.default_rng(s).standard_normal(4096, dtype=np.float32) for s in range(4)]
    for _ in range(200):  # workers polling between launches
        y = np.empty_like(xs[0])
        f(xs[0], y)
    np.testing.assert_array_equal(y, np.maximum(xs[0] * 2 + 1, 0))
    errors: list[BaseException] = []

    def work(x: np.ndarray) -> None:
        try:
            for _ in range(100):
                y = np.empty_like(x)
                f(x, y)
                np.testing.assert_array_equal(y, np.maximum(x * 2 + 1, 0))
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_guarded_load_is_not_vectorized_out_of_bounds():
    # Padding: lanes outside the input must not load (a vector select would read data[-1]).
    text = '''
@T.prim_func
def pad(data: T.Buffer((4, 6), "float32"), out: T.Buffer((6, 8), "float32")):
    for i in range(6):
        for j in T.vectorized(8):
            with T.block("pad"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = T.if_then_else(1 <= vi and vi < 5 and 1 <= vj and vj < 7, data[vi - 1, vj - 1], T.float32(0))
'''
    ex = _compile(text)
    assert [lp for lp in _nodes(ex.lowered["pad"], tir.For) if lp.kind == tir.ForKind.VECTORIZED]
    data = np.arange(24, dtype=np.float32).reshape(4, 6) + 1
    out = np.full((6, 8), -1, np.float32)
    ex["pad"](data, out)
    np.testing.assert_array_equal(out, np.pad(data, 1))


# 256 rows of 16 floats: 16 KB, whole pages (4 KB or 16 KB); the row loop too long for LLVM to unroll
# (unrolled, the border rows' conditions become constants and their loads vanish).
_ROW_PAD_TEXT = '''
@T.prim_func
def pad(data: T.Buffer((256, 16), "float32"), out: T.Buffer((258, 16), "float32")):
    for i0 in T.parallel(2):
        for i1 in range(129):
            for j in T.vectorized(16):
                with T.block("pad"):
                    vi = T.axis.spatial(258, i0 * 129 + i1)
                    vj = T.axis.spatial(16, j)
                    out[vi, vj] = T.if_then_else(1 <= vi and vi < 257, data[vi - 1, vj], T.float32(0))
'''

# Runs the row pad on an input that fills whole pages between two unreadable ones: a load of the
# border rows (data[-1, :], data[256, :]) faults. In a child process, so a fault fails the test only.
_GUARDED_CALL = '''
import ctypes, mmap, sys
import numpy as np
import tvmlite
from tvmlite.script import from_source

page, size = mmap.PAGESIZE, 256 * 16 * 4
inner = -(-size // page) * page
assert inner == size, "the input must fill whole pages"
memory = mmap.mmap(-1, inner + 2 * page, prot=mmap.PROT_READ | mmap.PROT_WRITE)
data = np.frombuffer(memory, np.float32, count=256 * 16, offset=page).reshape(256, 16)
data[:] = np.arange(256 * 16, dtype=np.float32).reshape(256, 16) + 1
base = ctypes.addressof(ctypes.c_char.from_buffer(memory))
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
for start in (base, base + page + inner):
    assert libc.mprotect(start, page, 0) == 0
ex = tvmlite.compile(from_source(sys.stdin.read()))
out = np.full((258, 16), -1, np.float32)
ex["pad"](data, out)
np.testing.assert_array_equal(out, np.pad(data, ((1, 1), (0, 0))))
'''


def test_guarded_rows_are_not_loaded_as_vectors():
    # A condition the same in every lane (the row of a padded input) stays a scalar branch around
    # the vector load: a vector select would load the rows before and after the input.
    import subprocess
    import sys

    ex = _compile(_ROW_PAD_TEXT)
    calls = [c for c in _nodes(ex.lowered["pad"], tir.Call) if c.op == "tir.if_then_else"]
    assert calls and all(c.args[0].dtype == "bool" and c.dtype == "float32x16" for c in calls)
    if not hasattr(__import__("mmap"), "PROT_READ"):
        pytest.skip("no mmap protection flags on this platform")
    run = subprocess.run([sys.executable, "-c", _GUARDED_CALL], input=_ROW_PAD_TEXT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]


def test_non_power_of_two_lanes_become_power_of_two_pieces():
    text = '''
@T.prim_func
def f(a: T.Buffer((3, 57), "float32"), b: T.Buffer((3, 57), "float32")):
    for i in range(3):
        for j in T.vectorized(57):
            with T.block("t"):
                vi, vj = T.axis.remap("SS", [i, j])
                b[vi, vj] = a[vi, vj] * T.float32(3.0) - T.Cast("float32", vj)
'''
    ex = _compile(text)
    stores = _nodes(ex.lowered["f"], tir.BufferStore)
    widths = sorted(s.indices[0].lanes if isinstance(s.indices[0], tir.Ramp) else 1 for s in stores)
    assert widths == [1, 8, 16, 32]  # 57 = 32 + 16 + 8 + 1
    a = np.random.default_rng(4).standard_normal((3, 57), dtype=np.float32)
    b = np.zeros_like(a)
    ex["f"](a, b)
    np.testing.assert_allclose(b, a * 3 - np.arange(57, dtype=np.float32), rtol=1e-6)
