"""The LLVM Executable: argument checks before native code runs, inspection (IR, assembly,
vectoriser remarks), engine lifetime, concurrent calls, targets."""
import gc
import re
import threading

import numpy as np
import pytest

from tvmlite.backend import ArgumentError, CodegenError, Executable, Target, TargetError, build, codegen
from tvmlite.script import from_source

MODULE = '''
@I.ir_module
class Module:
    @T.prim_func
    def add(a: T.handle, b: T.handle, c: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        C = T.match_buffer(c, (n, 4), "float32")
        for i, j in T.grid(n, 4):
            C[i, j] = A[i, j] + B[i, j]

    @T.prim_func
    def concat(a: T.handle, b: T.handle, c: T.handle):
        n, m = T.int32(), T.int32()
        A = T.match_buffer(a, (n,), "int32")
        B = T.match_buffer(b, (m,), "int32")
        C = T.match_buffer(c, (n + m,), "int32")
        for i in range(n):
            C[i] = A[i]
        for i in range(m):
            C[n + i] = B[i]

    @T.prim_func
    def scale(a: T.handle, alpha: T.float32, k: T.int8):
        A = T.match_buffer(a, (8,), "float32")
        for i in range(8):
            A[i] = A[i] * alpha + T.Cast("float32", k)

    @T.prim_func
    def fma(a: T.handle, b: T.handle, c: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for i in range(n):
            C[i] = A[i] * B[i] + C[i]

    @T.prim_func
    def prow(a: T.handle, b: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(a, (n, 64), "float64")
        B = T.match_buffer(b, (n,), "float64")
        for i in T.parallel(n):
            B[i] = T.float64(0)
            for j in range(64):
                B[i] = B[i] + A[i, j] * A[i, j]
'''


@pytest.fixture(scope="module")
def ex() -> Executable:
    return build(from_source(MODULE))


def f32(*shape):
    return np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)


def refused(fn, *args, match):
    """Call ``fn`` and check that it raises ArgumentError matching ``match``."""
    with pytest.raises(ArgumentError, match=match):
        fn(*args)


# ---------------------------------------------------------------------------------------------
# argument checks: each is refused with a message naming the parameter, before native code runs

def test_good_call_and_executor_interface(ex):
    a, b, c = f32(3, 4), f32(3, 4), np.zeros((3, 4), "float32")
    assert ex["add"](a, b, c) is None
    np.testing.assert_array_equal(c, a + b)
    c[:] = 0
    ex.call("add", [a, b, c])
    np.testing.assert_array_equal(c, a + b)
    x = np.ones(8, "float32")
    ex.call("scale", [x], [2.0, 3])
    np.testing.assert_array_equal(x, 5)
    assert set(ex.keys()) == {"add", "concat", "scale", "fma", "prow"} and "add" in ex


def test_wrong_argument_count(ex):
    refused(ex["add"], f32(3, 4), f32(3, 4), match=r"add\(\) takes 3 arguments \(A, B, C\), got 2")
    with pytest.raises(ArgumentError, match="expected 1 array \\(A\\) and 2 scalars, got 1 and 1"):
        ex.call("scale", [f32(8)], [1.0])


def test_wrong_dtype(ex):
    c = np.zeros((3, 4), "float32")
    refused(ex["add"], f32(3, 4), f32(3, 4).astype("float64"), c,
            match="argument 'B': expected dtype float32, got float64")
    assert not c.any()  # refused before the kernel ran
    refused(ex["add"], f32(3, 4).astype(">f4"), f32(3, 4), c, match="argument 'A': expected dtype float32, got >f4")


def test_wrong_rank(ex):
    refused(ex["add"], f32(12), f32(3, 4), np.zeros((3, 4), "float32"),
            match=r"argument 'A': expected 2 dimensions \(shape \(n, 4\)\), got 1 \(shape \(12,\)\)")


def test_wrong_constant_dimension(ex):
    refused(ex["add"], f32(3, 5), f32(3, 5), np.zeros((3, 5), "float32"),
            match=r"argument 'A': expected shape \(n, 4\), got \(3, 5\): dimension 1 must be 4")


def test_inconsistent_symbolic_dims(ex):
    c = np.zeros((3, 4), "float32")
    refused(ex["add"], f32(3, 4), f32(2, 4), c,
            match=r"argument 'B': expected shape \(n, 4\) with n = 3 \(from A.shape\[0\]\), got \(2, 4\): "
                  r"B.shape\[0\] is 2, not n = 3")
    assert not c.any()


def test_symbolic_expression_dims(ex):
    out = np.zeros(5, "int32")
    ex["concat"](np.arange(2, dtype="int32"), np.arange(3, dtype="int32"), out)
    np.testing.assert_array_equal(out, [0, 1, 0, 1, 2])
    refused(ex["concat"], np.arange(2, dtype="int32"), np.arange(3, dtype="int32"), np.zeros(6, "int32"),
            match=r"argument 'C': expected shape \(n \+ m,\) \(n = 2, m = 3\), got \(6,\): C.shape\[0\] is 6, "
                  r"not n \+ m = 5")


def test_non_contiguous(ex):
    big = f32(3, 8)
    refused(ex["add"], big[:, ::2], f32(3, 4), np.zeros((3, 4), "float32"),
            match=r"argument 'A' must be C-contiguous, got a view with strides \(32, 8\)")
    refused(ex["add"], f32(4, 3).T, f32(3, 4), np.zeros((3, 4), "float32"), match="argument 'A' must be C-contiguous")


def test_misaligned(ex):
    raw = np.zeros(8 * 4 + 1, "uint8")
    view = raw[1:].view("float32")
    assert not view.flags.aligned
    refused(ex["scale"], view, 1.0, 1, match="argument 'A' is not aligned to its 4-byte elements")


def test_read_only_output(ex):
    c = np.zeros((3, 4), "float32")
    c.flags.writeable = False
    refused(ex["add"], f32(3, 4), f32(3, 4), c,
            match="argument 'C' is written by the function, but the array is read-only")
    a = f32(3, 4)
    a.flags.writeable = False  # inputs may be read-only
    ex["add"](a, a.copy(), np.zeros((3, 4), "float32"))


def test_not_an_array_and_bad_scalars(ex):
    refused(ex["add"], [[1.0] * 4] * 3, f32(3, 4), np.zeros((3, 4), "float32"),
            match=r"argument 'A' must be a numpy array \(float32, shape \(n, 4\)\), got list")
    refused(ex["scale"], f32(8), "2", 1, match=r"argument 'alpha' must be a number \(float32\), got str")
    refused(ex["scale"], f32(8), 2.0, 1.5, match=r"argument 'k' must be an integer \(int8\), got float")
    refused(ex["scale"], f32(8), 2.0, 300, match=r"argument 'k' = 300 does not fit in int8 \(-128..127\)")
    x = np.ones(8, "float32")
    ex["scale"](x, np.float32(2), np.int8(1))  # numpy scalars are fine
    np.testing.assert_array_equal(x, 3)


def test_overlap_with_noalias(ex):
    buf = f32(4, 4)
    refused(ex["add"], buf[:3], f32(3, 4), buf[1:],
            match="arguments 'A' and 'C' overlap in memory, but the function is tir.noalias")
    a = f32(3, 4)
    ex["add"](a, a, a)  # the very same array (in-place use) is allowed
    np.testing.assert_array_equal(a, 2 * f32(3, 4))


def test_tensor_like_arguments(ex):
    class Tensor:
        def __init__(self, arr):
            self.arr = arr

        def numpy(self):
            return self.arr

    c = Tensor(np.zeros((3, 4), "float32"))
    ex["add"](Tensor(f32(3, 4)), f32(3, 4), c)
    np.testing.assert_array_equal(c.arr, 2 * f32(3, 4))


def test_unknown_function(ex):
    with pytest.raises(KeyError, match="no compiled function named 'sub'"):
        ex["sub"]


def test_bad_arguments_never_crash(ex):
    rng = np.random.default_rng(1)
    candidates = [f32(3, 4), f32(4, 4), f32(3, 4)[:, ::2], f32(3, 4).astype("float64"), np.zeros((0, 4), "float32"),
                  f32(12), 3, None, "x", f32(3, 4).T]
    for _ in range(300):
        args = [candidates[i] for i in rng.integers(0, len(candidates), rng.integers(0, 5))]
        try:
            ex["add"](*args)
        except ArgumentError:
            pass


# ---------------------------------------------------------------------------------------------
# inspection

def test_get_source_ll_before_and_after_optimisation(ex):
    ll = ex.get_source("ll")
    assert "define i32 @tvmlite_add(ptr noalias %A, ptr noalias %B, ptr noalias %C, i64 %n)" in ll
    assert "fadd contract float" in ll and "<8 x float>" not in ll
    opt = ex.get_source("ll", optimized=True)
    assert re.search(r"<(8|16) x float>", opt)  # the fma loop is vectorised
    assert opt != ll


def test_get_source_asm_uses_the_host_vector_units(ex):
    asm = ex.get_source("asm")
    assert "tvmlite_fma:" in asm
    features = Target("llvm").features.split(",")
    if "+fma" in features:
        assert "vfmadd" in asm
    if "+avx2" in features:
        assert "ymm" in asm or "zmm" in asm


def test_generic_cpu_target_has_no_fma():
    lm = codegen(from_source(MODULE), "llvm -mcpu=x86-64")
    asm = lm.emit_assembly()
    assert "vfmadd" not in asm and "ymm" not in asm
    assert "xmm" in asm


def test_vectorizer_remarks(ex):
    remarks = ex.get_source("remarks")
    assert "vectorized loop" in remarks


def test_get_source_tir_and_unknown_format(ex):
    assert "def add(" in ex.get_source("tir")
    with pytest.raises(ValueError, match="unknown source format 'ptx'"):
        ex.get_source("ptx")


# ---------------------------------------------------------------------------------------------
# lifetime and threads

def test_function_outlives_its_executable():
    add = build(from_source(MODULE))["add"]  # the executable itself is dropped at once
    gc.collect()
    for _ in range(3):
        junk = [build(from_source(MODULE)) for _ in range(2)]  # churn engines
        del junk
        gc.collect()
    a, c = f32(2, 4), np.zeros((2, 4), "float32")
    add(a, a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_concurrent_calls_from_threads(ex):
    errors = []

    def worker(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(30):
                n = int(rng.integers(1, 200))
                a, b, c = (rng.random(n).astype("float32") for _ in range(3))
                ref = a * b + c
                ex["fma"](a, b, c)
                np.testing.assert_allclose(c, ref, rtol=1e-6)
                m = rng.random((n, 64))
                s = np.zeros(n)
                ex["prow"](m, s)
                np.testing.assert_allclose(s, (m * m).sum(axis=1), rtol=1e-12)
        except Exception as err:  # reported below, in the main thread
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---------------------------------------------------------------------------------------------
# targets

def test_target_host_default():
    t = Target("llvm")
    assert t.is_host and t.mcpu and t.opt_level == 3 and not t.fast_math
    assert Target.current() == Target("llvm")
    with Target("llvm -mcpu=x86-64 -opt-level=2") as inner:
        assert Target.current() is inner
    assert Target.current() == Target("llvm")


def test_target_string_parsing():
    t = Target("llvm -mcpu=skylake -mattr=+avx2,+fma,-avx512f -fast-math")
    assert (t.mcpu, t.features, t.fast_math) == ("skylake", "+avx2,+fma,-avx512f", True)
    assert str(t) == "llvm -mcpu=skylake -mattr=+avx2,+fma,-avx512f -fast-math"
    native = Target("llvm -mattr=-avx512f")
    assert "-avx512f" in native.features.split(",") and native.mcpu == Target("llvm").mcpu
    with pytest.raises(TargetError, match="unknown target kind 'cuda'"):
        Target("cuda")
    with pytest.raises(TargetError, match="unknown llvm target option -mcpuu"):
        Target("llvm -mcpuu=x")
    with pytest.raises(TargetError, match="-opt-level takes an integer"):
        Target("llvm -opt-level=fast")


def test_cross_target_emits_but_does_not_run():
    lm = codegen(from_source(MODULE), "llvm -mtriple=aarch64-linux-gnu -mcpu=generic")
    with pytest.raises(TargetError, match="cannot run in this process"):
        Executable(lm)
    try:
        asm = lm.emit_assembly()
    except TargetError:
        pytest.skip("this llvmlite has no AArch64 backend")
    assert "fmla" in asm or "fmadd" in asm or "ldr" in asm


def test_missing_extern_symbol_is_refused_not_crashed():
    src = '''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.call_extern("float32", "no_such_function_tvmlite", A[i])
'''
    with pytest.raises(CodegenError, match="calls no_such_function_tvmlite, which this process does not provide"):
        build(from_source(src))


# ---------------------------------------------------------------------------------------------
# the command line: tvmlite build

def test_cli_build_emits_ll_asm_and_obj(tmp_path, capsys):
    from tvmlite.cli import main

    src = tmp_path / "k.py"
    src.write_text(MODULE)
    assert main(["build", str(src), "--no-opt", "--color", "never"]) == 0
    assert "define i32 @tvmlite_add(" in capsys.readouterr().out
    assert main(["build", str(src), "--emit", "asm", "--target", "llvm -mcpu=x86-64", "--color", "never"]) == 0
    asm = capsys.readouterr().out
    assert "tvmlite_fma:" in asm and "ymm" not in asm
    out = tmp_path / "k.o"
    assert main(["build", str(src), "--emit", "obj", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_cli_build_errors(tmp_path, capsys):
    from tvmlite.cli import main

    src = tmp_path / "k.py"
    src.write_text(MODULE)
    assert main(["build", str(src), "--target", "llvm -mcpu"]) == 1
    assert "tvmlite build: error: -mcpu needs a value" in capsys.readouterr().err
    relax_only = tmp_path / "r.py"
    relax_only.write_text('''
@R.function
def f(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
    return x
''')
    assert main(["build", str(relax_only)]) == 1
    err = capsys.readouterr().err
    assert "skipping f" in err and "has no PrimFunc to build" in err


# ---------------------------------------------------------------------------------------------
# shared libraries

def test_export_library_and_load_module(ex, tmp_path):
    import shutil

    from tvmlite.backend import KernelError, load_module

    if not (shutil.which("gcc") or shutil.which("cc")):
        pytest.skip("no C compiler driver to link a shared library")
    path = ex.export_library(str(tmp_path / "kernels.so"))
    lib = load_module(path)
    assert set(lib.keys()) == set(ex.keys())
    m, s = np.random.default_rng(0).random((50, 64)), np.zeros(50)
    lib["prow"](m, s)  # a parallel loop, on the library's own pool
    np.testing.assert_allclose(s, (m * m).sum(axis=1), rtol=1e-12)
    c = np.zeros((3, 4), "float32")
    lib.call("add", [f32(3, 4), f32(3, 4), c])
    np.testing.assert_array_equal(c, 2 * f32(3, 4))
    refused(lib["add"], f32(3, 4), f32(2, 4), c, match="B.shape\\[0\\] is 2, not n = 3")
    checked = build(from_source('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    assert A[0] == 1, "A[0] must be 1"
    A[1] = 2
'''))
    lib2 = load_module(checked.export_library(str(tmp_path / "checked.so")))
    with pytest.raises(KernelError, match="A\\[0\\] must be 1"):
        lib2["f"](np.zeros(4, "int32"))


def test_variables_solved_from_shape_expressions():
    ex = build(from_source('''
@I.ir_module
class Module:
    @T.prim_func
    def pairs(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n * 2 + 1,), "float32")
        B = T.match_buffer(b, (n * 2,), "float32")
        for i in range(n * 2):
            B[i] = A[i] + A[i + 1]
'''))
    f = ex["pairs"]
    a, b = np.arange(7, dtype="float32"), np.zeros(6, "float32")
    f(a, b)  # n = 3, solved from A's length
    np.testing.assert_array_equal(b, a[:-1] + a[1:])
    refused(f, np.arange(8, dtype="float32"), np.zeros(5, "float32"),
            match=r"cannot determine n from A.shape\[0\] = 8 \(the dimension is n \* T.int64\(2\) \+ T.int64\(1\)\)")
    refused(f, a, np.zeros(8, "float32"),
            match=r"argument 'B': expected shape \(n \* T.int64\(2\),\) \(n = 3\), got \(8,\)")
