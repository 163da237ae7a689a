"""Sorting and scans (issue 16): sort, argsort, topk, cumsum and cumprod legalized to TE computes,
compiled with LLVM and run by the VM against numpy for every dtype, ties, symbolic lengths; the
legalized text of sort pinned."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tvmlite import relax  # noqa: E402
from tvmlite.passes import LegalizeOps  # noqa: E402
from test_compiled_ops import compile_and_run  # noqa: E402
from legalize_util import build, params_for  # noqa: E402

op = relax.op
rng = np.random.default_rng(16)
DTYPES = ["float32", "float64", "float16", "int8", "int32", "int64", "uint8"]


def data(dtype, shape=(3, 5)):
    """Values with ties (integers drawn from a small range), in ``dtype``."""
    return rng.integers(0, 6, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_every_dtype(dtype):
    x = data(dtype)
    np.testing.assert_array_equal(compile_and_run(lambda a: op.sort(a, axis=0), [x]), np.sort(x, axis=0))
    np.testing.assert_array_equal(compile_and_run(lambda a: op.sort(a, descending=True), [x]),
                                  -np.sort(-x.astype("float64"), axis=-1).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_argsort_is_stable_for_every_dtype(dtype):
    x = data(dtype)
    got = compile_and_run(lambda a: op.argsort(a), [x])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.argsort(x, axis=-1, kind="stable"))
    got = compile_and_run(lambda a: op.argsort(a, axis=0, descending=True, dtype="int64"), [x])
    # descending keeps equal elements in their order, as a stable sort on the negated values
    np.testing.assert_array_equal(got, np.argsort(-x.astype("float64"), axis=0, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_topk_every_dtype(dtype):
    x = data(dtype)
    order = np.argsort(-x.astype("float64"), axis=1, kind="stable")[:, :3]
    vals, idx = compile_and_run(lambda a: op.topk(a, k=3), [x])
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, order, 1))
    small = compile_and_run(lambda a: op.topk(a, k=2, axis=0, ret_type="values", largest=False), [x])
    np.testing.assert_array_equal(small, np.sort(x, axis=0)[:2])
    whole = compile_and_run(lambda a: op.topk(a, k=0, ret_type="indices", dtype="int64"), [x])
    np.testing.assert_array_equal(whole, np.argsort(-x.astype("float64"), axis=1, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum_and_cumprod_every_dtype(dtype):
    x = data(dtype, (2, 3, 2)) % 3
    np.testing.assert_array_equal(compile_and_run(lambda a: op.cumsum(a, axis=1), [x]), np.cumsum(x, axis=1))
    np.testing.assert_array_equal(compile_and_run(op.cumsum, [x]), np.cumsum(x))
    np.testing.assert_array_equal(compile_and_run(lambda a: op.cumprod(a, axis=-1), [x]), np.cumprod(x, axis=-1))
    excl = compile_and_run(lambda a: op.cumsum(a, axis=0, dtype="float64", exclusive=True), [x])
    want = np.concatenate([np.zeros_like(x[:1]), np.cumsum(x, axis=0)[:-1]]).astype("float64")
    np.testing.assert_array_equal(excl, want)
    excl = compile_and_run(lambda a: op.cumprod(a, axis=2, exclusive=True), [x])
    np.testing.assert_array_equal(excl, np.concatenate([np.ones_like(x[..., :1]), x[..., :1]], axis=2))


def test_symbolic_lengths():
    x = rng.uniform(-1, 1, (4, 3)).astype("float32")
    np.testing.assert_array_equal(compile_and_run(lambda a: op.sort(a, axis=0), [x], {0: {0: "n"}}),
                                  np.sort(x, axis=0))
    vals, idx = compile_and_run(lambda a: op.topk(a, k=2, axis=0), [x], {0: {0: "n"}})
    np.testing.assert_array_equal(idx, np.argsort(-x, axis=0)[:2])
    np.testing.assert_allclose(compile_and_run(op.cumsum, [x], {0: {0: "n"}}), np.cumsum(x), rtol=1e-6)


SORT_TEXT = '''\
@T.prim_func(private=True)
def main(x0: T.Buffer((T.int64(2), T.int64(3)), "float32"), sort: T.Buffer((T.int64(2), T.int64(3)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    x0_rank = T.alloc_buffer((T.int64(2), T.int64(3)), "int64")
    argsort = T.alloc_buffer((T.int64(2), T.int64(3)), "int64")
    for ax0, ax1, j in T.grid(T.int64(2), T.int64(3), T.int64(3)):
        with T.block("x0_rank"):
            v_ax0, v_ax1, v_j = T.axis.remap("SSR", [ax0, ax1, j])
            T.reads(x0[v_ax0, T.int64(0):T.int64(3)])
            T.writes(x0_rank[v_ax0, v_ax1])
            with T.init():
                x0_rank[v_ax0, v_ax1] = T.int64(0)
            x0_rank[v_ax0, v_ax1] = x0_rank[v_ax0, v_ax1] + T.Select(x0[v_ax0, v_j] < x0[v_ax0, v_ax1] or x0[v_ax0, v_j] == x0[v_ax0, v_ax1] and v_j < v_ax1, T.int64(1), T.int64(0))
    for ax0, ax1, i in T.grid(T.int64(2), T.int64(3), T.int64(3)):
        with T.block("argsort"):
            v_ax0, v_ax1, v_i = T.axis.remap("SSR", [ax0, ax1, i])
            T.reads(x0_rank[v_ax0, v_i])
            T.writes(argsort[v_ax0, v_ax1])
            with T.init():
                argsort[v_ax0, v_ax1] = T.int64(0)
            argsort[v_ax0, v_ax1] = argsort[v_ax0, v_ax1] + T.Select(x0_rank[v_ax0, v_i] == v_ax1, v_i, T.int64(0))
    for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
        with T.block("sort"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(x0[v_ax0, argsort[v_ax0, v_ax1]], argsort[v_ax0, v_ax1])
            T.writes(sort[v_ax0, v_ax1])
            sort[v_ax0, v_ax1] = x0[v_ax0, argsort[v_ax0, v_ax1]]'''


def test_sort_legalized_text():
    """Rank, then the index of each rank, then the gather (TVM leaves sort to an extern library)."""
    x = np.zeros((2, 3), "float32")
    mod = LegalizeOps()(build(lambda a: op.sort(a), params_for([x])))
    text = mod["sort"].script()
    assert "\n".join(line for line in text.split("\n") if not line.startswith("# from")).strip() == SORT_TEXT


def test_cumsum_legalized_text():
    x = np.zeros((2, 3), "int32")
    mod = LegalizeOps()(build(lambda a: op.cumsum(a, axis=1, exclusive=True), params_for([x])))
    body = mod["cumsum"].script().split("\n")
    assert "        with T.block(\"cumsum\"):" in body
    assert ("            cumsum[v_ax0, v_ax1] = cumsum[v_ax0, v_ax1] + "
            "T.Select(v_j < v_ax1, x0[v_ax0, v_j], 0)") in body


@pytest.mark.parametrize("dtype", DTYPES)
def test_bucketize_every_dtype(dtype):
    x = data(dtype, (3, 4)) * 2 % 9
    bounds = np.array([1, 3, 3, 6], dtype)
    for right, side in ((False, "left"), (True, "right")):
        got = compile_and_run(lambda a, b: op.bucketize(a, b, right=right), [x, bounds])
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.searchsorted(bounds, x, side=side))
    got = compile_and_run(lambda a, b: op.bucketize(a, b, out_int32=True), [x, bounds.astype("float32") + 0.5])
    assert got.dtype == np.int32  # an input of another dtype than the boundaries compares by value
    np.testing.assert_array_equal(got, np.searchsorted(bounds + 0.5, x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_median_every_dtype(dtype):
    x = data(dtype, (4, 3, 2))
    flat = np.sort(x.ravel())
    np.testing.assert_array_equal(compile_and_run(op.median, [x]), flat[(x.size - 1) // 2])
    np.testing.assert_array_equal(compile_and_run(lambda a: op.median(a, keepdims=True), [x]),
                                  flat[(x.size - 1) // 2].reshape(1, 1, 1))
    vals, idx = compile_and_run(lambda a: op.median(a, axis=0), [x])
    order = np.argsort(x, axis=0, kind="stable")[1]  # the lower median of 4: position 1
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(vals, np.sort(x, axis=0)[1])
    vals, idx = compile_and_run(lambda a: op.median(a, axis=[-1], keepdims=True), [x])
    np.testing.assert_array_equal(vals, x.min(axis=-1, keepdims=True))
    np.testing.assert_array_equal(idx, np.argsort(x, axis=-1, kind="stable")[..., :1])


@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
def test_nonzero_every_dtype(dtype):
    x = (data("int32", (3, 4)) % 3).astype(dtype)
    got = compile_and_run(op.nonzero, [x])
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.stack(np.nonzero(x)))
    np.testing.assert_array_equal(compile_and_run(op.nonzero, [np.array(x[0, 0])]), np.zeros((1, int(x[0, 0] != 0)), "int64"))


def _first_seen(x, axis=None):
    """numpy.unique's outputs reordered by first occurrence (unique(sorted=False))."""
    vals, first, inv, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    order = np.argsort(first, kind="stable")
    rank = np.argsort(order)
    return np.take(vals, order, axis=0 if axis is None else axis), first[order], rank[inv.reshape(-1)], counts[order]


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_every_dtype(dtype):
    x = data(dtype, (3, 4)) % 4
    np.testing.assert_array_equal(compile_and_run(op.unique, [x]), np.unique(x))
    vals, index, inverse, counts = compile_and_run(
        lambda a: op.unique(a, return_index=True, return_inverse=True, return_counts=True), [x])
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for got, w in zip((vals, index, inverse, counts), want):
        np.testing.assert_array_equal(got, w.reshape(-1) if w.ndim else w)
    got = compile_and_run(lambda a: op.unique(a, sorted=False, return_index=True, return_inverse=True,
                                              return_counts=True), [x])
    for g, w in zip(got, _first_seen(x)):
        np.testing.assert_array_equal(g, w)
    rows = np.array([[1, 2], [0, 1], [1, 2], [0, 0]], dtype)
    got = compile_and_run(lambda a: op.unique(a, sorted=False, return_inverse=True, axis=0), [rows])
    np.testing.assert_array_equal(got[0], np.array([[1, 2], [0, 1], [0, 0]], dtype))
    np.testing.assert_array_equal(got[1], [0, 1, 0, 2])


def test_unique_legalizes_to_the_runtime_function():
    x = np.zeros((2, 3), "float32")
    mod = LegalizeOps()(build(lambda a: op.unique(a, return_counts=True), params_for([x])))
    assert ('R.call_pure_packed("relax.run.unique", x0, R.prim_value(True), R.prim_value(False), '
            'R.prim_value(False), R.prim_value(True), sinfo_args=(R.Tuple(R.Tensor(dtype="float32", ndim=1), '
            'R.Tensor(dtype="int64", ndim=1)),))') in mod.script()


@pytest.mark.parametrize("prob_dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_multinomial_from_uniform_every_dtype(prob_dtype, index_dtype):
    prob = np.array([[0.5, 0.25, 0.25, 0.0], [0.0, 0.0, 0.5, 0.5], [0.125, 0.125, 0.25, 0.5]], prob_dtype)
    u = np.array([[0.0], [0.49], [0.5], [0.8], [0.99], [0.2], [0.7], [0.2]], prob_dtype)
    rows = np.array([[0], [0], [0], [0], [0], [1], [1], [2]], index_dtype)
    got = compile_and_run(lambda p, s, i: op.multinomial_from_uniform(p, s, i, dtype=index_dtype), [prob, u, rows])
    cdf = np.cumsum(prob.astype("float64"), axis=1)
    want = [[min(int(np.searchsorted(cdf[r[0]], s[0], side="right")), prob.shape[1] - 1)] for s, r in zip(u, rows)]
    assert got.dtype == np.dtype(index_dtype)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, 0], [0, 0, 1, 2, 2, 2, 3, 1])


def test_multinomial_legalized_blocks():
    args = [np.zeros((2, 3), "float32"), np.zeros((4, 1), "float32"), np.zeros((4, 1), "int64")]
    mod = LegalizeOps()(build(op.multinomial_from_uniform, params_for(args)))
    text = mod["multinomial_from_uniform"].script()
    assert 'with T.block("cumsum"):' in text and 'with T.block("T_get_sample_index"):' in text
    assert ("T.Select(cumsum[x2[v_ax0, T.int64(0)], v_j] <= x1[v_ax0, T.int64(0)] and v_j < T.int64(2), "
            "T.int64(1), T.int64(0))") in text


ATAN2_TEXT = '''\
@T.prim_func(private=True)
def main(x0: T.Buffer((T.int64(2), T.int64(3)), "float32"), x1: T.Buffer((T.int64(3),), "float32"), T_atan2: T.Buffer((T.int64(2), T.int64(3)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
        with T.block("T_atan2"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(x0[v_ax0, v_ax1], x1[v_ax1])
            T.writes(T_atan2[v_ax0, v_ax1])
            T_atan2[v_ax0, v_ax1] = T.atan2(x0[v_ax0, v_ax1], x1[v_ax1])'''


def _prim_text(mod, name):
    return "\n".join(line for line in mod[name].script().split("\n") if not line.startswith("# from")).strip()


def test_atan2_and_log_add_exp_legalize_as_tvm():
    """TVM 0.27's LegalizeOps output (T.sblock/tirx spelt in the classic printer's words)."""
    args = params_for([np.zeros((2, 3), "float32"), np.zeros((3,), "float32")])
    assert _prim_text(LegalizeOps()(build(op.atan2, args)), "atan2") == ATAN2_TEXT
    text = _prim_text(LegalizeOps()(build(op.log_add_exp, args)), "log_add_exp")
    assert ("T_log_add_exp[v_ax0, v_ax1] = T.log(T.exp(x0[v_ax0, v_ax1]) + T.exp(x1[v_ax1]))") in text


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
def test_atan2_and_log_add_exp_every_dtype(dtype):
    a = rng.uniform(-3, 3, (2, 3)).astype(dtype)
    b = rng.uniform(-3, 3, (3,)).astype(dtype)
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == "float16" else dict(rtol=1e-6, atol=1e-6)
    for make, ref in ((op.atan2, np.arctan2), (op.log_add_exp, np.logaddexp)):
        got = compile_and_run(make, [a, b])
        assert got.dtype == np.dtype(dtype)
        want = ref(a.astype("float64"), b.astype("float64"))
        if dtype.startswith("int"):  # TVM keeps the integer dtype: computed in float64, truncated
            np.testing.assert_array_equal(got, want.astype(dtype))
        else:
            np.testing.assert_allclose(got.astype("float64"), want, **tol)


EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
           ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("i,j->ij", [(3,), (2,)]), ("...j,j->...", [(2, 2, 3), (3,)]),
           ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 2)]), ("ij,ij,ij->i", [(2, 3)] * 3), ("ij->", [(2, 3)])]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("subscripts, shapes", EINSUMS)
def test_einsum_every_dtype(subscripts, shapes, dtype):
    xs = [rng.integers(-3, 4, s).astype(dtype) for s in shapes]
    got = compile_and_run(lambda *ts: op.einsum(ts, subscripts), xs)
    want = np.einsum(subscripts, *xs)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "int64", "uint8"])
def test_outer_every_dtype(dtype):
    a, b = rng.integers(0, 9, 3).astype(dtype), rng.integers(0, 9, 4).astype(dtype)
    np.testing.assert_array_equal(compile_and_run(op.outer, [a, b]), np.outer(a, b))
    got = compile_and_run(op.outer, [a, b.astype("float64") + 0.5])  # the product in the first one's dtype
    np.testing.assert_array_equal(got, np.outer(a, (b + 0.5).astype(dtype)))


EINSUM_TEXT = '''\
@T.prim_func(private=True)
def main(x0: T.Buffer((T.int64(2), T.int64(3)), "float32"), x1: T.Buffer((T.int64(3),), "float32"), T_einsum: T.Buffer((T.int64(2),), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for ax0, j in T.grid(T.int64(2), T.int64(3)):
        with T.block("T_einsum"):
            v_ax0, v_j = T.axis.remap("SR", [ax0, j])
            T.reads(x0[v_ax0, v_j], x1[v_j])
            T.writes(T_einsum[v_ax0])
            with T.init():
                T_einsum[v_ax0] = T.float32(0.0)
            T_einsum[v_ax0] = T_einsum[v_ax0] + x0[v_ax0, v_j] * x1[v_j]'''


def test_einsum_and_outer_legalize_as_tvm():
    """TVM 0.27's LegalizeOps output of einsum("ij,j->i") and outer."""
    args = params_for([np.zeros((2, 3), "float32"), np.zeros((3,), "float32")])
    assert _prim_text(LegalizeOps()(build(lambda a, b: op.einsum((a, b), "ij,j->i"), args)), "einsum") == EINSUM_TEXT
    args = params_for([np.zeros((3,), "float32"), np.zeros((4,), "float32")])
    text = _prim_text(LegalizeOps()(build(op.outer, args)), "outer")
    assert ('    for i, j in T.grid(T.int64(3), T.int64(4)):\n        with T.block("outer"):\n'
            '            v_i, v_j = T.axis.remap("SS", [i, j])') in text
    assert "outer[v_i, v_j] = x0[v_i] * x1[v_j]" in text


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"])
def test_eye_and_eye_like_every_dtype(dtype):
    for n, m, k in ((3, 3, 0), (3, 4, 1), (4, 2, -1), (2, 3, 5)):
        got = compile_and_run(lambda: op.eye(n, m, k, dtype=dtype), [])
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, np.eye(n, m, k, dtype=dtype))
    x = np.zeros((3, 5), dtype)
    np.testing.assert_array_equal(compile_and_run(lambda a: op.eye_like(a, 2), [x]), np.eye(3, 5, 2, dtype=dtype))
    got = compile_and_run(lambda a: op.eye_like(a, -1, dtype="float32"), [x], {0: {0: "n"}})
    np.testing.assert_array_equal(got, np.eye(3, 5, -1, dtype="float32"))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_hamming_window_every_dtype(dtype, periodic):
    for size in (1, 2, 7):
        got = compile_and_run(lambda: op.hamming_window(size, periodic, 0.54, 0.46, dtype=dtype), [])
        total = size + periodic
        want = np.ones(1) if size == 1 else (0.54 - 0.46 * np.cos(2 * np.pi * np.arange(total) / (total - 1)))[:size]
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.astype("float64"), want, rtol=2e-3 if dtype == "float16" else 1e-6, atol=1e-3)


def test_eye_legalizes_as_tvm():
    mod = LegalizeOps()(build(lambda: op.eye(3, 4, 1, dtype="float32"), []))
    assert _prim_text(mod, "eye") == '''\
@T.prim_func(private=True)
def main(eye: T.Buffer((T.int64(3), T.int64(4)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i, j in T.grid(T.int64(3), T.int64(4)):
        with T.block("eye"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(eye[v_i, v_j])
            eye[v_i, v_j] = T.if_then_else(v_i == v_j - T.int64(1), T.float32(1.0), T.float32(0.0))'''
    x = np.zeros((2, 3), "float32")
    text = _prim_text(LegalizeOps()(build(lambda a: op.eye_like(a, -1), params_for([x]))), "eye_like")
    assert "eye[v_i, v_j] = T.if_then_else(v_i == v_j + T.int64(1), T.float32(1.0), T.float32(0.0))" in text
