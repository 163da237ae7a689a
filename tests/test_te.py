"""Tensor expressions: expressions with Python operators, computes, create_prim_func's exact
TIR text, and the numpy evaluators (of TE and of block TIR) against numpy."""
import numpy as np
import pytest

from tvmlite import te
from tvmlite.ir import tir
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.script import from_source
from tvmlite.testing import assert_round_trip

rng = np.random.default_rng(3)


def body(text: str) -> str:
    return "\n".join(line for line in text.strip("\n").split("\n") if not line.startswith("# from ")).strip("\n")


def check_text(func: tir.PrimFunc, expected: str) -> None:
    """The exact printed text; the function is also well formed and round-trips."""
    assert body(func.script()) == body(expected)
    assert well_formed_errors(func) == []
    assert_round_trip(func)


# ------------------------------------------------------------------ expressions
def test_operators_build_tir_nodes():
    i = te.var("i")
    e = (i + 1) * 2 - i // 3 + i % 4
    assert isinstance(e.expr, tir.Add) and isinstance(e.expr.b, tir.FloorMod)
    assert isinstance((i < 3).expr, tir.LT) and (i < 3).dtype == "bool"
    assert isinstance((i == 3).expr, tir.EQ)
    assert isinstance(te.all(i > 0, i < 5).expr, tir.And)


def test_constant_folding_as_tvm():
    i = te.var("i")
    assert (i + 0).expr is i.expr and (0 + i).expr is i.expr
    assert (i * 1).expr is i.expr and (i - 0).expr is i.expr and (i // 1).expr is i.expr
    assert isinstance((i % 1).expr, tir.IntImm) and (i % 1).expr.value == 0
    folded = te.const(3) * 4 + 1
    assert isinstance(folded.expr, tir.IntImm) and folded.expr.value == 13
    assert te.if_then_else(te.const(True), i, i + 1).expr is i.expr
    assert isinstance(te.all(True, i > 0).expr, tir.GT)  # a true operand drops out


def test_dtype_matching():
    i32, i64 = te.var("a", "int32"), te.var("b", "int64")
    assert (i32 + i64).dtype == "int64"
    x = te.var("x", "float16")
    assert (x + 1).dtype == "float16" and (x * 0.5).dtype == "float16"
    assert (i32 + 1.5).dtype == "float32"
    assert te.cast(te.const(3), "float32").expr.value == 3.0
    assert te.exp(1).dtype == "float32"
    with pytest.raises(ValueError):
        bool(i32 < 3)


def test_reducer_called_elementwise():
    a, b = te.var("a", "float32"), te.var("b", "float32")
    assert isinstance(te.max(a, b).expr, tir.Max)
    assert isinstance(te.min(a, 0.0).expr, tir.Min)


# ------------------------------------------------------------------ create_prim_func text
def test_elementwise_axes_named_after_the_lambda():
    A = te.placeholder((4, 8), "float32", "A")
    B = te.compute((4, 8), lambda i, j: A[i, j] * 2.0, name="B")
    check_text(te.create_prim_func([A, B]), '''
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
''')


def test_varargs_axes_are_i0_i1_and_broadcast_reads():
    A = te.placeholder((4, 8), "float32", "A")
    b = te.placeholder((8,), "float32", "b")
    C = te.compute((4, 8), lambda *i: A(*i) + b[i[1]])
    check_text(te.create_prim_func([A, b, C]), '''
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), b: T.Buffer((8,), "float32"), compute: T.Buffer((4, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i0, i1 in T.grid(4, 8):
        with T.block("compute"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(A[v_i0, v_i1], b[v_i1])
            T.writes(compute[v_i0, v_i1])
            compute[v_i0, v_i1] = A[v_i0, v_i1] + b[v_i1]
''')


def test_reduction_with_init_and_symbolic_shape():
    """Seed 001's matmul, written in TE (int64 indices, as Relax shapes)."""
    n = tir.Var("n", "int64")
    with te.index_dtype("int64"):
        x = te.placeholder((n, 784), "float32", "x")
        w = te.placeholder((784, 128), "float32", "permute_dims")
        k = te.reduce_axis((0, 784), "k")
        mm = te.compute((n, 128), lambda *i: te.sum(x[i[0], k] * w[k, i[1]], axis=k), name="matmul")
    check_text(te.create_prim_func([x, w, mm]), '''
@T.prim_func
def main(var_x: T.handle, permute_dims: T.Buffer((T.int64(784), T.int64(128)), "float32"), var_matmul: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    x = T.match_buffer(var_x, (n, T.int64(784)))
    matmul = T.match_buffer(var_matmul, (n, T.int64(128)))
    # with T.block("root"):
    for i0, i1, k in T.grid(n, T.int64(128), T.int64(784)):
        with T.block("matmul"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            T.reads(x[v_i0, v_k], permute_dims[v_k, v_i1])
            T.writes(matmul[v_i0, v_i1])
            with T.init():
                matmul[v_i0, v_i1] = T.float32(0.0)
            matmul[v_i0, v_i1] = matmul[v_i0, v_i1] + x[v_i0, v_k] * permute_dims[v_k, v_i1]
''')


def test_intermediate_tensors_become_root_allocations():
    A = te.placeholder((8,), "float32", "A")
    B = te.compute((8,), lambda i: te.exp(A[i]), name="B")
    k = te.reduce_axis((0, 8), "k")
    C = te.compute((), lambda: te.max(B[k], axis=k), name="C")
    check_text(te.create_prim_func([A, C]), '''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            v_i = T.axis.spatial(8, i)
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = T.exp(A[v_i])
    for k in range(8):
        with T.block("C"):
            v_k = T.axis.reduce(8, k)
            T.reads(B[v_k])
            T.writes(C[()])
            with T.init():
                C[()] = T.float32(-340282346638528859811704183484516925440.0)
            C[()] = T.max(C[()], B[v_k])
''')


def test_conditional_reduction_and_reduce_axis_with_offset():
    A = te.placeholder((10,), "int32", "A")
    k = te.reduce_axis((2, 10), "k")
    S = te.compute((1,), lambda i: te.sum(A[k], axis=k, where=A[k] > 0), name="S")
    f = te.create_prim_func([A, S])
    check_text(f, '''
@T.prim_func
def main(A: T.Buffer((10,), "int32"), S: T.Buffer((1,), "int32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i in range(1):
        for k in range(2, 10):
            with T.block("S"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(A[v_k])
                T.writes(S[v_i])
                with T.init():
                    S[v_i] = 0
                if A[v_k] > 0:
                    S[v_i] = S[v_i] + A[v_k]
''')
    a = rng.integers(-5, 5, 10).astype("int32")
    (out,) = te.evaluate_prim_func(f, [a])
    assert out[0] == a[2:][a[2:] > 0].sum()
    assert te.evaluate(S, {A: a})[0] == out[0]


def test_tuple_reduction_writes_two_buffers():
    A = te.placeholder((3, 5), "float32", "A")
    k = te.reduce_axis((0, 5), "k")
    argmax = te.comm_reducer(
        lambda x, y: (te.select(x[1] >= y[1], x[0], y[0]), te.select(x[1] >= y[1], x[1], y[1])),
        lambda t0, t1: (te.const(-1, t0), te.min_value(t1)), "argmax")
    idx, val = te.compute((3,), lambda i: argmax((k, A[i, k]), axis=k), name="R")
    f = te.create_prim_func([A, idx, val])
    text = body(f.script())
    assert 'T.writes(R_v0[v_i], R_v1[v_i])' in text
    assert "v_R_v0: T.int32 = T.Select(" in text
    a = rng.standard_normal((3, 5)).astype("float32")
    got_idx, got_val = te.evaluate_prim_func(f, [a])
    np.testing.assert_array_equal(got_idx, a.argmax(1))
    np.testing.assert_array_equal(got_val, a.max(1))
    ei, ev = te.evaluate([idx, val], {A: a})
    np.testing.assert_array_equal(ei, a.argmax(1))
    np.testing.assert_array_equal(ev, a.max(1))


def test_duplicate_names_are_made_unique():
    A = te.placeholder((4,), "float32", "x")
    B = te.placeholder((4,), "float32", "x")
    C = te.compute((4,), lambda i: A[i] + B[i], name="x")
    f = te.create_prim_func([A, B, C])
    assert [b.name for b in f.buffer_map.values()] == ["x", "x_1", "x_2"]


def test_scalar_params_and_layout_free_buffers():
    n = te.var("n")
    A = te.placeholder((8,), "float32", "A")
    W = te.placeholder((8,), "float32", "W")
    C = te.compute((8,), lambda i: A[i] * W[i] + te.cast(n, "float32"), name="C",
                   attrs={"layout_free_placeholders": (W,)})
    f = te.create_prim_func([A, W, C, n])
    assert f.params[-1] is n.expr
    assert f.attrs["layout_free_buffers"] == (1,)
    out = te.evaluate_prim_func(f, [np.ones(8), np.full(8, 2.0)], [5])[0]
    np.testing.assert_array_equal(out, np.full(8, 7.0))


# ------------------------------------------------------------------ errors
def test_errors():
    A = te.placeholder((4,), "float32", "A")
    B = te.compute((4,), lambda i: A[i] + 1, name="B")
    with pytest.raises(ValueError, match="not among the arguments"):
        te.create_prim_func([B])
    with pytest.raises(IndexError, match="1 dimensions, indexed with 2"):
        te.compute((4,), lambda i: A[i, i])
    with pytest.raises(ValueError, match="takes 2 indices"):
        te.compute((4,), lambda i, j: A[i])
    k = te.reduce_axis((0, 4), "k")
    with pytest.raises(TypeError, match="whole body of a compute"):
        te.compute((1,), lambda i: te.sum(A[k], axis=k) + 1)
    with pytest.raises(ValueError, match="no array was given for the input A"):
        te.evaluate(B, {})


# ------------------------------------------------------------------ evaluation
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_evaluate_elementwise_and_broadcast(dtype):
    A = te.placeholder((3, 4), dtype, "A")
    b = te.placeholder((4,), dtype, "b")
    C = te.compute((3, 4), lambda i, j: A[i, j] * 2 + b[j] - te.max(A[i, j], b[j]))
    a = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    bb = (rng.standard_normal(4) * 10).astype(dtype)
    got = te.evaluate(C, {A: a, b: bb})
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, a * 2 + bb - np.maximum(a, bb), rtol=1e-6)


@pytest.mark.parametrize("reducer, ref", [(te.sum, np.sum), (te.max, np.max), (te.min, np.min),
                                          (te.prod, np.prod)])
def test_evaluate_reductions(reducer, ref):
    A = te.placeholder((3, 4, 5), "float64", "A")
    k0 = te.reduce_axis((0, 3), "k0")
    k2 = te.reduce_axis((1, 5), "k2")
    C = te.compute((4,), lambda j: reducer(A[k0, j, k2], axis=[k0, k2]))
    a = rng.uniform(0.5, 1.5, (3, 4, 5))
    np.testing.assert_allclose(te.evaluate(C, {A: a}), ref(a[:, :, 1:], axis=(0, 2)))
    f = te.create_prim_func([A, C])
    np.testing.assert_allclose(te.evaluate_prim_func(f, [a])[0], ref(a[:, :, 1:], axis=(0, 2)))


def test_evaluate_custom_reducer_folds():
    A = te.placeholder((5, 3), "float32", "A")
    k = te.reduce_axis((0, 5), "k")
    sumsq = te.comm_reducer(lambda x, y: x + y * y, lambda t: te.const(0.0, t), "sumsq")
    C = te.compute((3,), lambda j: sumsq(A[k, j], axis=k))
    a = rng.standard_normal((5, 3)).astype("float32")
    np.testing.assert_allclose(te.evaluate(C, {A: a}), (a * a).sum(0), rtol=1e-5)
    np.testing.assert_allclose(te.evaluate_prim_func(te.create_prim_func([A, C]), [a])[0], (a * a).sum(0),
                               rtol=1e-5)


def test_evaluate_guarded_padding_reads():
    A = te.placeholder((4,), "float32", "A")
    P = te.compute((6,), lambda i: te.if_then_else(te.all(i >= 1, i < 5), A[i - 1], 0.0), name="P")
    a = np.arange(1, 5, dtype="float32")
    np.testing.assert_array_equal(te.evaluate(P, {A: a}), [0, 1, 2, 3, 4, 0])


def test_evaluate_integer_division_semantics():
    A = te.placeholder((4,), "int32", "A")
    B = te.compute((4,), lambda i: te.truncdiv(A[i], 3) * 100 + A[i] // 3 * 10 + A[i] % 3)
    a = np.array([-7, -3, 4, 8], dtype="int32")
    want = np.trunc(a / 3).astype("int32") * 100 + (a // 3) * 10 + a % 3
    np.testing.assert_array_equal(te.evaluate(B, {A: a}), want)


def test_evaluate_symbolic_sizes():
    n = te.var("n", "int64")
    A = te.placeholder((n, 2), "float32", "A")
    B = te.compute((n * 2,), lambda i: A[i // 2, i % 2] + 1)
    a = rng.standard_normal((3, 2)).astype("float32")
    np.testing.assert_allclose(te.evaluate(B, {A: a}), a.reshape(-1) + 1)
    C = te.compute((n,), lambda i: te.cast(i, "float32"))
    np.testing.assert_array_equal(te.evaluate(C, {}, sizes={n: 4}), [0, 1, 2, 3])
    with pytest.raises(ValueError, match="shape"):
        te.evaluate(B, {A: np.zeros((3, 3), "float32")})


def test_evaluate_math_intrinsics():
    A = te.placeholder((5,), "float32", "A")
    a = rng.uniform(0.1, 0.9, 5).astype("float32")
    fns = {te.exp: np.exp, te.log: np.log, te.sqrt: np.sqrt, te.tanh: np.tanh, te.sigmoid: lambda v: 1 / (1 + np.exp(-v)),
           te.floor: np.floor, te.erf: np.vectorize(__import__("math").erf), te.abs: np.abs}
    for fn, ref in fns.items():
        np.testing.assert_allclose(te.evaluate(te.compute((5,), lambda i: fn(A[i])), {A: a}), ref(a), rtol=1e-5)


# ------------------------------------------------------------------ evaluating hand-written TIR
def test_evaluate_prim_func_parsed_from_text():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        for j in range(4):
            with T.block("row_sum"):
                vi, vj = T.axis.remap("SR", [i, j])
                T.where(j < 3)
                with T.init():
                    B[vi] = T.float32(10.0)
                B[vi] = B[vi] + A[vi, vj] * T.float32(2.0)
''')
    a = rng.standard_normal((4, 4)).astype("float32")
    np.testing.assert_allclose(te.evaluate_prim_func(func, [a])[0], 10 + 2 * a[:, :3].sum(1), rtol=1e-5)


def test_evaluate_prim_func_sequential_fallback():
    """A loop without a block and a running update (a scan) are executed step by step."""
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((5,), "int32"), B: T.Buffer((5,), "int32")):
    B[0] = A[0]
    for i in range(4):
        B[i + 1] = B[i] + A[i + 1]
''')
    a = np.arange(1, 6, dtype="int32")
    np.testing.assert_array_equal(te.evaluate_prim_func(func, [a])[0], np.cumsum(a))


def test_evaluate_prim_func_triangular_and_thread_bound_loops():
    """A loop whose extent depends on an outer loop runs masked; a thread-bound loop is a loop."""
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in range(4):
        for j in range(i + 1):
            with T.block("tri"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(4, j)
                B[vi, vj] = A[vi, vj] + T.float32(1.0)
    for t in T.thread_binding(4, thread="threadIdx.x"):
        with T.block("diag"):
            vt = T.axis.spatial(4, t)
            B[vt, vt] = T.float32(0.0)
''')
    a = np.arange(16, dtype="float32").reshape(4, 4)
    want = np.tril(a + 1, -1)
    np.testing.assert_array_equal(te.evaluate_prim_func(func, [a])[0], want)


def test_evaluate_prim_func_whole_buffer_copies_and_scatters():
    """A packing layout (the store a scatter through floordiv/floormod, the read the whole input in
    order), a transpose (the store in order) and a store past the end, against numpy."""
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((8, 6, 3), "float32"), B: T.Buffer((2, 3, 3, 2, 4), "float32"), C: T.Buffer((3, 6, 8), "float32")):
    for o, i, h in T.grid(8, 6, 3):
        with T.block("pack"):
            vo, vi, vh = T.axis.remap("SSS", [o, i, h])
            B[vo // 4, vi // 2, vh, vi % 2, vo % 4] = A[vo, vi, vh]
    for h, i, o in T.grid(3, 6, 8):
        with T.block("transpose"):
            vh, vi, vo = T.axis.remap("SSS", [h, i, o])
            C[vh, vi, vo] = A[vo, vi, vh] + T.float32(1.0)
''')
    a = rng.standard_normal((8, 6, 3)).astype("float32")
    b, c = te.evaluate_prim_func(func, [a])
    np.testing.assert_array_equal(b, a.reshape(2, 4, 3, 2, 3).transpose(0, 2, 4, 3, 1))
    np.testing.assert_array_equal(c, a.transpose(2, 1, 0) + np.float32(1.0))
    past = from_source('''
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("shift"):
            vi = T.axis.spatial(4, i)
            B[vi + 1] = A[vi]
''')
    with pytest.raises(IndexError):
        te.evaluate_prim_func(past, [np.ones(4, "float32")])
    reverse = from_source('''
@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), B: T.Buffer((4, 3), "float32")):
    for i, j in T.grid(4, 3):
        with T.block("reverse"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[3 - vi, vj] = A[vi, vj] * T.float32(2.0)
''')
    a = rng.standard_normal((4, 3)).astype("float32")
    np.testing.assert_array_equal(te.evaluate_prim_func(reverse, [a])[0], a[::-1] * np.float32(2.0))
