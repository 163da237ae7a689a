"""Run-time checks of the size relations compiled kernels rely on.

LegalizeOps proves what it can (static shapes get no check) and turns every other relation an
op's kernel relies on (equal dims, equal element counts, broadcast compatibility, index ranges)
into a TIR ``assert`` at the top of the generated PrimFunc. A call whose sizes do not fit fails
with an error naming the Relax function, the binding and the sizes (with their values), on the
LLVM backend and on the reference interpreter, before any memory is read; large overruns, which
used to crash the process, run in a subprocess so a crash would fail the test."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.compile import VMExecutable
from tvmlite.backend.interpreter import InterpreterExecutor, TIRAssertError
from tvmlite.ir import tir
from tvmlite.ir.module import IRModule
from tvmlite.script import from_source

RESHAPE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32"), s: R.Shape(["m"])):
        m = T.int64()
        y = R.reshape(x, s)
        return y
"""

MATMUL = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("a", "b"), "float32"), y: R.Tensor(("c", "d"), "float32")):
        with R.dataflow():
            z = R.matmul(x, y)
            w = R.nn.relu(z)
            R.output(w)
        return w
"""

CONCAT = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 2), "float32"), y: R.Tensor(("m", 3), "float32")):
        z = R.concat((x, y), axis=1)
        return z
"""

ADD = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("m",), "float32")):
        z = R.add(x, y)
        return z
"""

TAKE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 3), "float32"), i: R.Tensor(("k",), "int64")):
        z = R.take(x, i, axis=0)
        return z
"""

SLICE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        z = R.strided_slice(x, axes=[0], begin=[1], end=[5], assume_inbound=True)
        return z
"""


def _interpreter_build(mod: IRModule, **_: object) -> VMExecutable:
    """What ``tvmlite.compile`` does, with the TIR reference interpreter running the kernels."""
    mod = P.get_pipeline("zero")(mod)
    prims = IRModule({gv: f for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)})
    lowered = P.get_pipeline("lower")(prims)
    return VMExecutable(mod, InterpreterExecutor(lowered), "interpreter", lowered)


BUILDS = [
    pytest.param(lambda mod: tvmlite.compile(mod), id="llvm"),
    pytest.param(lambda mod: tvmlite.compile(mod, relax_pipeline="default", tir_pipeline="lower"),
                 id="llvm-default-lower"),
    pytest.param(_interpreter_build, id="interpreter"),
]


def _vm(build, text: str):
    return tvmlite.VirtualMachine(build(from_source(text)), tvmlite.cpu())


def _f32(*shape: int) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)


def _fails(fn, *args) -> str:
    """The message of the error ``fn(*args)`` raises (a kernel's failed assert)."""
    with pytest.raises((tvmlite.backend.KernelError, TIRAssertError)) as info:
        fn(*args)
    return str(info.value)


# ------------------------------------------------------------------ the checks, and legal calls
@pytest.mark.parametrize("build", BUILDS)
def test_reshape_element_counts(build):
    vm = _vm(build, RESHAPE)
    np.testing.assert_array_equal(vm["main"](_f32(6), (6,)).numpy(), _f32(6))
    msg = _fails(vm["main"], _f32(6), (8,))
    assert ("main: y = R.reshape(x, s): x of shape (n,) has n elements, but the result shape (m,) has m "
            "(n = 6, m = 8)") in msg
    assert "(n = 8, m = 6)" in _fails(vm["main"], _f32(8), (6,))


@pytest.mark.parametrize("build", BUILDS)
def test_matmul_contracted_dims(build):
    vm = _vm(build, MATMUL)
    x, y = _f32(2, 3) - 2, _f32(3, 4) - 5
    np.testing.assert_allclose(vm["main"](x, y).numpy(), np.maximum(x @ y, 0), rtol=1e-6)
    msg = _fails(vm["main"], _f32(2, 3), _f32(4, 5))
    assert ('main: z = R.matmul(x, y, out_dtype="void"): dim 1 of x (a, b) is b but dim 0 of y (c, d) is c; '
            "matmul needs them equal (b = 3, c = 4)") in msg


@pytest.mark.parametrize("build", BUILDS)
def test_concat_other_dims(build):
    vm = _vm(build, CONCAT)
    x, y = _f32(3, 2), _f32(3, 3) + 100
    np.testing.assert_array_equal(vm["main"](x, y).numpy(), np.concatenate([x, y], axis=1))
    msg = _fails(vm["main"], _f32(2, 2), _f32(4, 3))
    assert ("main: z = R.concat((x, y), axis=1): dim 0 of x (n, 2) is n but dim 0 of y (m, 3) is m; "
            "they must be equal (n = 2, m = 4)") in msg


@pytest.mark.parametrize("build", BUILDS)
def test_add_of_unrelated_sizes_broadcasts_at_run_time(build):
    vm = _vm(build, ADD)
    for a, b in [(3, 3), (1, 4), (4, 1), (0, 1), (1, 0), (0, 0), (1, 1)]:
        x, y = _f32(a), _f32(b) * 10
        np.testing.assert_array_equal(vm["main"](x, y).numpy(), x + y)
    msg = _fails(vm["main"], _f32(3), _f32(4))
    assert ("main: z = R.add(x, y): dim 0 of x (n,) is n and dim 0 of y (m,) is m; they do not broadcast "
            "(they must be equal, or one of them 1) (n = 3, m = 4)") in msg


@pytest.mark.parametrize("build", BUILDS)
def test_take_index_range(build):
    vm = _vm(build, TAKE)
    x = _f32(4, 3)
    idx = np.array([0, 3, -1, -4, 2])
    np.testing.assert_array_equal(vm["main"](x, idx).numpy(), np.take(x, idx, axis=0))
    for bad in ([0, 4], [-5], [10**9]):
        msg = _fails(vm["main"], x, np.array(bad))
        assert ('main: z = R.take(x, i, axis=0, mode="fast"): an index in i is out of range for axis 0 of x (4, 3), '
                "of size 4 (valid indices: -4 to 3)") in msg


@pytest.mark.parametrize("build", BUILDS)
def test_strided_slice_assume_inbound(build):
    vm = _vm(build, SLICE)
    np.testing.assert_array_equal(vm["main"](_f32(7)).numpy(), _f32(7)[1:5])
    msg = _fails(vm["main"], _f32(3))
    assert ("with assume_inbound=True the end 5 of axis 0 must not exceed its size n (x (n,)) (n = 3)") in msg


# ------------------------------------------------------------------ what the IR shows
def test_legalized_text_shows_the_assert():
    mod = P.LegalizeOps()(from_source(RESHAPE))
    assert mod.script() == textwrap.dedent('''\
        # from tvmlite.script import ir as I
        # from tvmlite.script import tir as T
        # from tvmlite.script import relax as R

        @I.ir_module
        class Module:
            @T.prim_func(private=True)
            def reshape(var_x: T.handle, var_T_reshape: T.handle):
                T.func_attr({"tir.noalias": True})
                n = T.int64()
                x = T.match_buffer(var_x, (n,))
                m = T.int64()
                T_reshape = T.match_buffer(var_T_reshape, (m,))
                # with T.block("root"):
                assert n == m, "main: y = R.reshape(x, s): x of shape (n,) has n elements, but the result shape (m,) has m"
                for ax0 in range(m):
                    with T.block("T_reshape"):
                        v_ax0 = T.axis.spatial(m, ax0)
                        T.reads(x[v_ax0 % n])
                        T.writes(T_reshape[v_ax0])
                        T_reshape[v_ax0] = x[v_ax0 % n]

            @R.function
            def main(x: R.Tensor(("n",), dtype="float32"), s: R.Shape(["m"])) -> R.Tensor(("m",), dtype="float32"):
                m = T.int64()
                n = T.int64()
                cls = Module
                y = R.call_tir(cls.reshape, (x,), out_sinfo=R.Tensor((m,), dtype="float32"))
                return y''')


def test_take_checks_every_index_in_a_loop_before_the_compute():
    from tvmlite.ir import structural_equal

    mod = P.LegalizeOps()(from_source(TAKE))
    text = mod.script()
    assert structural_equal(from_source(text), mod)
    assert textwrap.dedent('''\
        for i0 in range(k):
            with T.block("T_take_check"):
                v_i0 = T.axis.spatial(k, i0)
                T.reads(i[v_i0])
                T.writes()
                assert T.int64(-4) <= i[v_i0] and i[v_i0] < T.int64(4), "main: z = R.take(x, i, axis=0, mode=\\"fast\\"): an index in i is out of range for axis 0 of x (4, 3), of size 4 (valid indices: -4 to 3)"
                T.evaluate(0)
        for ax0, ax1 in T.grid(k, T.int64(3)):''') in textwrap.dedent("\n".join(
        line[8:] for line in text.splitlines()))
    # The check loop keeps take's own fusion pattern (injective), so it still fuses.
    assert '"op_pattern": 2' in text


def test_checks_survive_fusion_and_lowering():
    tir_text = tvmlite.compile(from_source(MATMUL)).get_source("tir")
    assert "def fused_matmul_relu(" in tir_text
    # FuseTIR puts the relu after the matmul, so the assert covers the matmul's loops only.
    assert 'with T.Assert(b == c, "main: z = R.matmul(x, y, out_dtype=\\"void\\"): dim 1 of x (a, b)' in tir_text


def test_provable_relations_get_no_assert():
    static = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((3, 4), "float32"), v: R.Tensor(("n", 3), "float32")):
        n = T.int64()
        a = R.reshape(x, R.shape([6]))
        b = R.matmul(x, y)
        c = R.concat((v, v), axis=1)
        d = R.reshape(v, R.shape([n * 3]))
        e = R.add(v, R.const(1.0, "float32"))
        f = R.matmul(v, y)
        return (a, b, c, d, e, f)
"""
    assert "assert" not in P.LegalizeOps()(from_source(static)).script()


def test_kernels_called_directly_report_the_sizes():
    ex = tvmlite.compile(from_source(RESHAPE))
    with pytest.raises(tvmlite.backend.KernelError, match=r"has m \(n = 6, m = 5\)$"):
        ex["reshape"](_f32(6), np.zeros(5, "float32"))
    interp = InterpreterExecutor(P.LegalizeOps()(from_source(RESHAPE)))
    with pytest.raises(TIRAssertError, match=r"has m \(n = 6, m = 5\)$"):
        interp.call("reshape", [_f32(6), np.zeros(5, "float32")])


def test_constant_folding_keeps_an_out_of_range_take_for_run_time():
    from tvmlite import relax

    table = relax.const(_f32(4, 3))
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            good = bb.emit(relax.op.take(table, relax.const(np.array([-1, 0], "int64")), axis=0))
            bad = bb.emit(relax.op.take(table, relax.const(np.array([4], "int64")), axis=0))
            gv = bb.emit_output(relax.Tuple((good, bad)))
        bb.emit_func_output(gv)
    folded = P.get_pipeline("zero")(bb.get())
    assert "R.call_tir(cls.take" in folded.script()  # the bad take is left to run time
    vm = tvmlite.VirtualMachine(tvmlite.compile(bb.get()), tvmlite.cpu())
    assert "an index in" in _fails(vm["main"])
    ok = P.get_pipeline("zero")(_take_only(np.array([-1, 0], "int64")))
    assert "call_tir" not in ok.script()
    np.testing.assert_array_equal(tvmlite.VirtualMachine(tvmlite.compile(ok), tvmlite.cpu())["main"]().numpy(),
                                  _f32(4, 3)[[-1, 0]])


def _take_only(indices: np.ndarray) -> IRModule:
    from tvmlite import relax

    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            gv = bb.emit_output(relax.op.take(relax.const(_f32(4, 3)), relax.const(indices), axis=0))
        bb.emit_func_output(gv)
    return bb.get()


def test_unknown_shape_names_the_fix():
    text = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor("float32", ndim=1)):
        y = R.exp(x)
        return y
"""
    with pytest.raises(tvmlite.backend.vm.VMError) as info:
        tvmlite.VirtualMachine(tvmlite.compile(from_source(text)), tvmlite.cpu())
    assert str(info.value) == (
        "main: R.exp has no kernel: the shape of 'x' is not known at compile time "
        '(R.Tensor(dtype="float32", ndim=1)), and LegalizeOps needs shapes to generate loops; state it with '
        'R.match_cast, e.g. x_1 = R.match_cast(x, R.Tensor(("d0",), dtype="float32"))')


# ------------------------------------------------------------------ large overruns never crash
_LARGE = r'''
import numpy as np, tvmlite
from tvmlite.script import from_source
from tvmlite.backend import KernelError

def run(text, *args):
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(text)), tvmlite.cpu())
    try:
        vm["main"](*args)
    except KernelError as e:
        print("refused:", str(e).splitlines()[0][-40:])
    else:
        print("ran")

run(RESHAPE, np.arange(6, dtype="float32"), (10_000_000,))
run(MATMUL, np.ones((1, 4_000_000), "float32"), np.ones((1, 1), "float32"))
run(CONCAT, np.ones((2_000_000, 2), "float32"), np.ones((1, 3), "float32"))
run(TAKE, np.ones((4, 3), "float32"), np.array([10**9]))
run(ADD, np.ones(1_000_000, "float32"), np.ones(2, "float32"))
run(SLICE, np.ones(3, "float32"))
'''


def test_large_overruns_raise_instead_of_crashing():
    names = dict(RESHAPE=RESHAPE, MATMUL=MATMUL, CONCAT=CONCAT, TAKE=TAKE, ADD=ADD, SLICE=SLICE)
    script = "".join(f"{k} = {v!r}\n" for k, v in names.items()) + _LARGE
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 6 and all(line.startswith("refused:") for line in lines), proc.stdout
    assert "(n = 6, m = 10000000)" in lines[0] and "(b = 4000000, c = 1)" in lines[1]
    assert "(n = 2000000, m = 1)" in lines[2] and "(valid indices: -4 to 3)" in lines[3]
    assert "(n = 1000000, m = 2)" in lines[4] and "(n = 3)" in lines[5]


# ------------------------------------------------------------------ the other ops that relate sizes
def _module(params: str, line: str) -> str:
    return f"""
@I.ir_module
class Module:
    @R.function
    def main({params}):
        z = {line}
        return z
"""


def _layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b


OTHER_OPS = [
    ("dense", 'x: R.Tensor(("n", "c"), "float32"), w: R.Tensor((4, "e"), "float32")', "R.nn.dense(x, w)",
     [_f32(2, 3), _f32(4, 3)], lambda x, w: x @ w.T, [_f32(2, 3), _f32(4, 5)],
     "the last dim of x (n, c) is c but the last dim of w (4, e) is e; dense needs them equal (c = 3, e = 5)"),
    ("ewise_fma", 'x: R.Tensor(("n",), "float32"), y: R.Tensor(("m",), "float32")', "R.ewise_fma(x, y, x)",
     [_f32(3), _f32(3) + 1], lambda x, y: x * y + x, [_f32(3), _f32(2)],
     "dim 0 of y (m,) is m but dim 0 of x (n,) is n; they must be equal (m = 2, n = 3)"),
    ("squeeze", 'x: R.Tensor(("n", 3), "float32")', "R.squeeze(x, axis=[0])",
     [_f32(1, 3)], lambda x: x[0], [_f32(2, 3)],
     "dim 0 of x (n, 3) is n, but squeeze removes only dims of size 1 (n = 2)"),
    ("broadcast_to", 'x: R.Tensor(("n",), "float32"), s: R.Shape(["m"])', "R.broadcast_to(x, s)",
     [_f32(1), (4,)], lambda x, s: np.broadcast_to(x, s), [_f32(3), (4,)],
     "dim 0 of x (n,) is n, which does not broadcast to m (dim 0 of (m,)): it must be equal to it or 1 "
     "(n = 3, m = 4)"),
    ("layer_norm", 'x: R.Tensor(("n", "c"), "float32"), g: R.Tensor(("e",), "float32")',
     "R.nn.layer_norm(x, g, g, axes=[-1])",
     [_f32(2, 3), _f32(3) + 1], lambda x, g: _layer_norm(x, g, g), [_f32(2, 3), _f32(4)],
     "dim 0 of g (e,) is e but must be c (the normalized dims of x (n, c) are (c,)) (e = 4, c = 3)"),
    ("conv2d", 'x: R.Tensor((1, "c", 3, 3), "float32"), w: R.Tensor((2, "e", 1, 1), "float32")', "R.nn.conv2d(x, w)",
     [_f32(1, 3, 3, 3), _f32(2, 3, 1, 1)], lambda x, w: np.einsum("nchw,oc->nohw", x, w[:, :, 0, 0]),
     [_f32(1, 3, 3, 3), _f32(2, 4, 1, 1)], "x (1, c, 3, 3) has c channels but w (2, e, 1, 1) takes e (c = 3, e = 4)"),
    ("batch_norm", 'x: R.Tensor(("n", "c"), "float32"), g: R.Tensor(("e",), "float32")',
     "R.nn.batch_norm(x, g, g, g, g, axis=1, training=False)[0]",
     [_f32(2, 3), _f32(3) + 1], lambda x, g: (x - g) / np.sqrt(g + 1e-5) * g + g, [_f32(2, 3), _f32(2)],
     "gamma g (e,) has e elements, but x (n, c) has c channels (e = 2, c = 3)"),
]


@pytest.mark.parametrize("build", BUILDS[::2])
@pytest.mark.parametrize("name, params, line, good, ref, bad, message", OTHER_OPS, ids=[o[0] for o in OTHER_OPS])
def test_other_ops_check_their_sizes(build, name, params, line, good, ref, bad, message):
    vm = _vm(build, _module(params, line))
    np.testing.assert_allclose(vm["main"](*good).numpy(), ref(*good), rtol=1e-5, atol=1e-5)
    assert message in _fails(vm["main"], *bad)


@pytest.mark.parametrize("axis, indices", [(0, np.array([[0, -1], [2, -3]], "int32")), (1, np.array(-2, "int64")),
                                           (0, np.array([[0, -1], [3, 1]], "int32")), (1, np.array(4, "int64"))])
def test_take_index_tensors_of_any_rank_and_dtype(axis, indices):
    from tvmlite import relax

    x = relax.Var("x", relax.TensorStructInfo((3, 4), "float32"))
    i = relax.Var("i", relax.TensorStructInfo(indices.shape, str(indices.dtype)))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, i]):
        bb.emit_func_output(bb.emit(relax.op.take(x, i, axis=axis)))
    vm = tvmlite.VirtualMachine(tvmlite.compile(bb.get()), tvmlite.cpu())
    data = _f32(3, 4)
    size = data.shape[axis]
    if np.all((-size <= indices) & (indices < size)):
        np.testing.assert_array_equal(vm["main"](data, indices).numpy(), np.take(data, indices, axis=axis))
    else:
        assert f"(valid indices: -{size} to {size - 1})" in _fails(vm["main"], data, indices)


def test_a_shared_library_reports_the_sizes_too(tmp_path):
    import shutil

    from tvmlite.backend import KernelError, build, load_module

    if not (shutil.which("gcc") or shutil.which("cc")):
        pytest.skip("no C compiler driver to link a shared library")
    ex = build(from_source('''
@T.prim_func
def copy(a: T.handle, b: T.handle):
    n, m = T.int64(), T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (m,), "float32")
    assert n == m, "copy: A has n elements, B has m"
    for i in range(m):
        B[i] = A[i]
'''))
    lib = load_module(ex.export_library(str(tmp_path / "copy.so")))
    for f in (ex["copy"], lib["copy"]):
        want = r"^copy: assertion failed: copy: A has n elements, B has m \(n = 3, m = 2\)$"
        with pytest.raises(KernelError, match=want):
            f(_f32(3), np.zeros(2, "float32"))


@pytest.mark.parametrize("build", BUILDS[::2])
def test_matmul_batch_dims_of_unknown_relation_broadcast_at_run_time(build):
    vm = _vm(build, """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("p", 2, 3), "float32"), y: R.Tensor(("q", 3, 4), "float32")):
        z = R.matmul(x, y)
        return z
""")
    for p, q in [(2, 2), (1, 3), (3, 1), (0, 1)]:
        x, y = _f32(p, 2, 3), _f32(q, 3, 4) - 7
        np.testing.assert_allclose(vm["main"](x, y).numpy(), x @ y, rtol=1e-6)
    assert ("main: z = R.matmul(x, y, out_dtype=\"void\"): batch dim 0 of x (p, 2, 3) is p and batch dim 0 of y "
            "(q, 3, 4) is q; they do not broadcast (they must be equal, or one of them 1) (p = 2, q = 3)"
            in _fails(vm["main"], _f32(2, 2, 3), _f32(3, 3, 4)))


def test_unknown_result_shape_names_the_fix():
    text = """
@I.ir_module
class Module:
    @R.function
    def main(c: R.Tensor(("n",), "bool"), x: R.Tensor(("m",), "float32")):
        y = R.where(c, x, x)
        return y
"""
    with pytest.raises(tvmlite.backend.vm.VMError) as info:
        tvmlite.VirtualMachine(tvmlite.compile(from_source(text)), tvmlite.cpu())
    assert str(info.value) == (
        'main: R.where has no kernel: the shape of its result is not known at compile time (R.Tensor(dtype="float32", '
        "ndim=1): the sizes of its arguments may not agree), and LegalizeOps needs shapes to generate loops; state "
        "the arguments' shapes with R.match_cast so that they provably agree")
