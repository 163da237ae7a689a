"""The manipulation ops of issue 16 (tile, repeat, flip, stack...): their legalized PrimFuncs print as
TVM 0.27's LegalizeOps prints them (block names, loop order, index arithmetic; tvmlite keeps the v0.23
spellings ``T.block``, ``tir.noalias``, ``out_sinfo=``), and each computes numpy's result for every
dtype it accepts, compiled with LLVM and run by the VM, on static and symbolic shapes."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tvmlite  # noqa: E402
from legalize_util import build, params_for  # noqa: E402
from tvmlite import relax  # noqa: E402
from tvmlite.ir import tir  # noqa: E402
from tvmlite.passes import LegalizeOps  # noqa: E402
from tvmlite.script import from_source  # noqa: E402
from tvmlite.testing import assert_round_trip  # noqa: E402

op = relax.op
rng = np.random.default_rng(16)
DTYPES = ["float32", "float64", "float16", "int8", "int32", "int64", "uint8", "bool"]


def data(shape, dtype):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith(("int", "uint")):
        return rng.integers(0 if dtype.startswith("u") else -50, 50, shape).astype(dtype)
    return rng.uniform(-4, 4, shape).astype(dtype)


def compile_and_run(make, inputs, symbolic=None):
    mod = build(make, params_for(inputs, symbolic))
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
    out = vm["main"](*inputs)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


def legalized(src: str) -> str:
    """The legalized module's text without the header comments."""
    mod = LegalizeOps()(from_source(src))
    assert_round_trip(mod)
    return "\n".join(line for line in mod.script().split("\n") if not line.startswith("# from ")).strip("\n")


# (make, input shapes, numpy reference, symbolic dims)
DTYPE_CASES = {
    "tile": (lambda x: op.tile(x, [2, 1, 2]), [(2, 3)], lambda x: np.tile(x, [2, 1, 2]), {0: {0: "n"}}),
    "tile_short": (lambda x: op.tile(x, 3), [(2, 3)], lambda x: np.tile(x, 3), {0: {1: "n"}}),
    "repeat": (lambda x: op.repeat(x, 2, axis=0), [(2, 3)], lambda x: np.repeat(x, 2, axis=0), {0: {0: "n"}}),
    "repeat_flat": (lambda x: op.repeat(x, 3), [(2, 3)], lambda x: np.repeat(x, 3), {0: {0: "n"}}),
    "flip": (lambda x: op.flip(x, axis=0), [(3, 4)], lambda x: np.flip(x, axis=0), {0: {0: "n"}}),
    "stack": (lambda x, y, z: op.stack((x, y, z), axis=-1), [(2, 3)] * 3,
              lambda x, y, z: np.stack([x, y, z], axis=-1), {0: {0: "n"}, 1: {0: "n"}, 2: {0: "n"}}),
    "meshgrid": (lambda x, y: op.meshgrid((x, y)), [(3,), (4,)], lambda x, y: tuple(np.meshgrid(x, y, indexing="ij")),
                 {0: {0: "n"}}),
    "meshgrid_xy": (lambda x, y, z: op.meshgrid((x, y, z), indexing="xy"), [(3,), (4,), (2,)],
                    lambda x, y, z: tuple(np.meshgrid(x, y, z, indexing="xy")), {1: {0: "n"}}),
    "gather_elements": (lambda x, i: op.gather_elements(x, i, axis=0), [(3, 4), np.array([[2, -1, 0, 1]], "int32")],
                        lambda x, i: np.take_along_axis(x, i, axis=0), {0: {0: "n"}}),
    "gather_elements_i64": (lambda x, i: op.gather_elements(x, i, axis=-1),
                            [(3, 4), np.array([[3, -4], [0, 1], [2, 2]], "int64")],
                            lambda x, i: np.take_along_axis(x, i, axis=-1), {0: {1: "n"}, 1: {0: "m"}}),
    "gather_nd": (lambda x, i: op.gather_nd(x, i), [(3, 4, 2), np.array([[2, -1], [0, 1], [1, 3]], "int64")],
                  lambda x, i: x[i[:, 0], i[:, 1]], {0: {0: "n"}}),
    "scatter_elements": (lambda x, i, u: op.scatter_elements(x, i, u, axis=1),
                         [(3, 4), np.array([[0, -1], [2, 2], [3, 0]], "int32"), (3, 2)],
                         lambda x, i, u: scatter_elements_ref(x, i, u, 1, "update"),
                         {0: {0: "n"}, 1: {0: "n"}, 2: {0: "n"}}),
    "scatter_nd": (lambda x, i, u: op.scatter_nd(x, i, u),
                   [(3, 4), np.array([[2], [-3]], "int64"), (2, 4)],
                   lambda x, i, u: scatter_nd_ref(x, i, u, "update"), {0: {0: "n"}}),
    "slice_scatter": (lambda x, u: op.slice_scatter(x, u, relax.PrimValue(-4), relax.PrimValue(9), relax.PrimValue(3),
                                                    axis=1), [(3, 5), (3, 2)], lambda x, u: slice_scatter_ref(x, u, 1),
                      {0: {0: "n"}, 1: {0: "n"}}),
    "index_tensor": (lambda x, i, j: op.index_tensor(x, (i, j)), [(3, 4, 2), np.array([[2], [-3]], "int32"),
                                                                 np.array([0, 3, -1], "int64")],
                     lambda x, i, j: x[i, j], {0: {2: "n"}, 2: {0: "m"}}),
    "index_put": (lambda x, i, j, v: op.index_put(x, (i, j), v), [(3, 4), np.array([[0], [-1]], "int32"),
                                                                  np.array([3, 0, 3], "int64"), (3,)],
                  lambda x, i, j, v: index_put_ref(x, (i, j), v, False), {0: {0: "n"}}),
    "tril": (lambda x: op.tril(x, relax.PrimValue(-1)), [(2, 3, 4)], lambda x: np.tril(x, -1), {0: {1: "n"}}),
    "triu": (lambda x: op.triu(x), [(3, 4)], np.triu, {0: {0: "n", 1: "m"}}),
    "reverse_sequence": (lambda x, n: op.reverse_sequence(x, n, seq_axis=0, batch_axis=1),
                         [(3, 4), np.array([2, -1, 9, 3], "int32")], lambda x, n: reverse_sequence_ref(x, n),
                         {0: {0: "n"}}),
}


def reverse_sequence_ref(x, lengths):
    """Along axis 0, the first lengths[b] elements of column b reversed (all when longer, none when <= 1)."""
    out = x.copy()
    for b, n in enumerate(lengths):
        n = min(int(n), x.shape[0])
        if n > 1:
            out[:n, b] = x[:n, b][::-1]
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32", "int64", "uint8"])
def test_collapse_sum_for_every_dtype(dtype):
    x = data((2, 3, 4), dtype)
    got = compile_and_run(lambda x: op.collapse_sum_to(x, (3, 1)), [x])
    want = x.sum(axis=(0, 2), dtype=dtype)[:, None]
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=2e-3 if dtype == "float16" else 1e-6)
    got = compile_and_run(lambda x, t: op.collapse_sum_like(x, t), [x, data((1, 4), dtype)])
    np.testing.assert_allclose(got.astype("float64"), x.sum(axis=(0, 1), dtype=dtype)[None].astype("float64"),
                               rtol=2e-3 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_hot_for_every_value_dtype(dtype):
    on, off = (True, False) if dtype == "bool" else (3, 1)
    def value(v):
        return relax.PrimValue(tir.FloatImm(dtype, v) if "float" in dtype else tir.IntImm(dtype, v))

    i = np.array([[1, 0], [2, 2]], "int32")
    got = compile_and_run(lambda i: op.one_hot(i, value(on), value(off), 3), [i])
    np.testing.assert_array_equal(got, np.where(np.arange(3) == i[..., None], on, off).astype(dtype))


def index_put_ref(x, indices, values, accumulate):
    out = x.copy()
    idx = np.broadcast_arrays(*indices)
    vals = np.broadcast_to(values, idx[0].shape)
    for pos in np.ndindex(idx[0].shape):
        target = tuple(int(i[pos]) for i in idx)
        out[target] = out[target] + vals[pos] if accumulate else vals[pos]
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "int64"])
def test_index_put_accumulates(dtype):
    x, v = data((3, 4), dtype), data((), dtype)
    i, j = np.array([1, 1, -1], "int64"), np.array([2, 2, 0], "int64")  # one place twice: added twice
    got = compile_and_run(lambda x, i, j, v: op.index_put(x, (i, j), v, accumulate=True), [x, i, j, v])
    np.testing.assert_array_equal(got, index_put_ref(x, (i, j), v, True))


def slice_scatter_ref(x, u, axis):
    out = x.copy()
    out[:, -4:9:3] = u
    return out

COMBINE = {"update": lambda a, b: b, "add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
           "mean": lambda a, b: (a + b) / 2 if a.dtype.kind == "f" else np.trunc((a.astype("int64") + b) / 2)}


def scatter_elements_ref(x, idx, upd, axis, reduction):
    """Each update in order, combined with the value where it lands (as TVM's kernel)."""
    out = x.copy()
    for pos in np.ndindex(idx.shape):
        target = list(pos)
        target[axis] = idx[pos] % x.shape[axis]
        out[tuple(target)] = COMBINE[reduction](out[tuple(target)], upd[pos])
    return out


def scatter_nd_ref(x, idx, upd, reduction):
    out = x.copy()
    for pos in np.ndindex(idx.shape[:-1]):
        target = tuple(int(i) % d for i, d in zip(idx[pos], x.shape))
        out[target] = COMBINE[reduction](out[target], upd[pos])
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int8"])
@pytest.mark.parametrize("reduction", ["add", "mul", "mean", "min", "max"])
def test_scatter_reductions(reduction, dtype):
    x, u = data((3, 4), dtype), data((3, 2), dtype)
    i = np.array([[0, 0], [2, -2], [1, 1]], "int64")  # twice the same place: combined in order
    got = compile_and_run(lambda x, i, u: op.scatter_elements(x, i, u, axis=1, reduction=reduction), [x, i, u])
    np.testing.assert_allclose(got, scatter_elements_ref(x, i, u, 1, reduction).astype(dtype), rtol=1e-6)
    if reduction != "mean":
        j = np.array([[1], [1], [-1]], "int64")
        u3 = data((3, 4), dtype)
        got = compile_and_run(lambda x, i, u: op.scatter_nd(x, i, u, reduction=reduction), [x, j, u3])
        np.testing.assert_allclose(got, scatter_nd_ref(x, j, u3, reduction).astype(dtype), rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
def test_compiled_matches_numpy_for_every_dtype(name, dtype):
    make, shapes, ref, _ = DTYPE_CASES[name]
    inputs = [s if isinstance(s, np.ndarray) else data(s, dtype) for s in shapes]
    out = compile_and_run(make, inputs)
    want = ref(*inputs)
    for got, want in zip(out if isinstance(out, tuple) else [out], want if isinstance(out, tuple) else [want]):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
def test_compiled_with_symbolic_shapes(name):
    make, shapes, ref, symbolic = DTYPE_CASES[name]
    inputs = [s if isinstance(s, np.ndarray) else data(s, "float32") for s in shapes]
    out, want = compile_and_run(make, inputs, symbolic), ref(*inputs)
    for got, expected in zip(out if isinstance(out, tuple) else [out], want if isinstance(out, tuple) else [want]):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("make, inputs, message", [
    (lambda x, i: op.gather_elements(x, i, axis=1), [np.ones((2, 3), "float32"), np.array([[0], [3]], "int64")],
     "main: gv = R.gather_elements(x0, x1, axis=1): an index in x1 is out of range for axis 1 of x0 (2, 3), of "
     "size 3 (valid indices: -3 to 2)"),
    (lambda x, i: op.gather_elements(x, i), [np.ones((2, 3), "float32"), np.array([[-3, 0, 0]], "int32")],
     "out of range for axis 0 of x0 (2, 3), of size 2 (valid indices: -2 to 1)"),
    (lambda x, i: op.gather_nd(x, i), [np.ones((2, 3), "float32"), np.array([[1, 3]], "int64")],
     "main: gv = R.gather_nd(x0, x1, batch_dims=0): an index in x1 is out of range for the dims (2, 3) of x0 (2, 3) "
     "it picks"),
    (lambda x, i: op.gather_nd(x, i), [np.ones((2, 3), "float32"), np.array([[2, 0]], "int64")], "out of range"),
    (lambda x, i, u: op.scatter_elements(x, i, u), [np.ones((2, 3), "float32"), np.array([[0, 2, -3]], "int64"),
                                                    np.ones((1, 3), "float32")],
     "main: gv = R.scatter_elements(x0, x1, x2, axis=0, reduction=\"update\"): an index in x1 is out of range for "
     "axis 0 of x0, of size 2"),
    (lambda x, i, u: op.scatter_nd(x, i, u), [np.ones((2, 3), "float32"), np.array([[1, 3]], "int64"),
                                              np.ones((1,), "float32")], "out of range for dim 1 of x0, of size 3"),
    (lambda x, i, j: op.index_tensor(x, (i, j)), [np.ones((2, 3), "float32"), np.array([1], "int64"),
                                                  np.array([[0], [-4]], "int64")],
     "main: gv = R.index_tensor(x0, (x1, x2)): an index in x2 is out of range for dim 1 of x0 (2, 3), of size 3 "
     "(valid indices: -3 to 2)"),
    (lambda x, i, j, v: op.index_put(x, (i, j), v), [np.ones((2, 3), "float32"), np.array([1], "int64"),
                                                     np.array([-4], "int64"), np.ones((1,), "float32")],
     "main: gv = R.index_put(x0, (x1, x2), x3, accumulate=False): an index in (x1, x2) is out of range for dim 1 "
     "of x0, of size 3"),
])
def test_out_of_range_indices_are_reported(make, inputs, message):
    with pytest.raises(Exception) as info:
        compile_and_run(make, inputs)
    assert message in str(info.value)


def test_stack_of_tensors_whose_sizes_agree_only_at_run_time_has_no_kernel():
    # As TVM: (n, 3) and (m, 3) stack to an unknown shape, which LegalizeOps cannot loop over.
    mod = build(lambda x, y: op.stack((x, y)), params_for([data((2, 3), "float32")] * 2, {0: {0: "n"}, 1: {0: "m"}}))
    with pytest.raises(Exception, match="R.stack has no kernel: the shape of its result is not known"):
        tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())


HEADER = "from tvmlite.script import ir as I, relax as R, tir as T\n\n"

TILE_REPEAT_FLIP_STACK = HEADER + '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), "int32"), y: R.Tensor(("n", 3), "int32"), z: R.Tensor(("n", 3), "int32")):
        a = R.tile(x, [2, 2])
        b = R.repeat(x, 2, axis=1)
        c = R.flip(x, axis=0)
        d = R.stack((x, y, z), axis=0)
        return (a, b, c, d)
'''

# TVM 0.27's LegalizeOps output for the module above, in tvmlite's (v0.23) spellings.
TILE_REPEAT_FLIP_STACK_LEGALIZED = '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def flip(var_x: T.handle, var_T_reverse_sequence: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(3)), "int32")
        T_reverse_sequence = T.match_buffer(var_T_reverse_sequence, (n, T.int64(3)), "int32")
        # with T.block("root"):
        for ax0, ax1 in T.grid(n, T.int64(3)):
            with T.block("T_reverse_sequence"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[n - v_ax0 - T.int64(1), v_ax1])
                T.writes(T_reverse_sequence[v_ax0, v_ax1])
                T_reverse_sequence[v_ax0, v_ax1] = x[n - v_ax0 - T.int64(1), v_ax1]

    @T.prim_func(private=True)
    def repeat(var_x: T.handle, var_T_repeat: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(3)), "int32")
        T_repeat = T.match_buffer(var_T_repeat, (n, T.int64(6)), "int32")
        # with T.block("root"):
        for ax0, ax1 in T.grid(n, T.int64(6)):
            with T.block("T_repeat"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1 // T.int64(2)])
                T.writes(T_repeat[v_ax0, v_ax1])
                T_repeat[v_ax0, v_ax1] = x[v_ax0, v_ax1 // T.int64(2)]

    @T.prim_func(private=True)
    def stack(var_x: T.handle, var_y: T.handle, var_z: T.handle, var_T_stack: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(3)), "int32")
        y = T.match_buffer(var_y, (n, T.int64(3)), "int32")
        z = T.match_buffer(var_z, (n, T.int64(3)), "int32")
        T_stack = T.match_buffer(var_T_stack, (T.int64(3), n, T.int64(3)), "int32")
        # with T.block("root"):
        for ax0, ax1, ax2 in T.grid(T.int64(3), n, T.int64(3)):
            with T.block("T_stack"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(z[v_ax1, v_ax2], y[v_ax1, v_ax2], x[v_ax1, v_ax2])
                T.writes(T_stack[v_ax0, v_ax1, v_ax2])
                T_stack[v_ax0, v_ax1, v_ax2] = T.if_then_else(v_ax0 == T.int64(2), z[v_ax1, v_ax2], T.if_then_else(v_ax0 == T.int64(1), y[v_ax1, v_ax2], x[v_ax1, v_ax2]))

    @T.prim_func(private=True)
    def tile(var_x: T.handle, var_T_tile: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(3)), "int32")
        T_tile = T.match_buffer(var_T_tile, (n * T.int64(2), T.int64(6)), "int32")
        # with T.block("root"):
        for ax0, ax1 in T.grid(n * T.int64(2), T.int64(6)):
            with T.block("T_tile"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0 % n, v_ax1 % T.int64(3)])
                T.writes(T_tile[v_ax0, v_ax1])
                T_tile[v_ax0, v_ax1] = x[v_ax0 % n, v_ax1 % T.int64(3)]

    @R.function
    def main(x: R.Tensor(("n", 3), dtype="int32"), y: R.Tensor(("n", 3), dtype="int32"), z: R.Tensor(("n", 3), dtype="int32")) -> R.Tuple(R.Tensor(("n * 2", 6), dtype="int32"), R.Tensor(("n", 6), dtype="int32"), R.Tensor(("n", 3), dtype="int32"), R.Tensor((3, "n", 3), dtype="int32")):
        n = T.int64()
        cls = Module
        a = R.call_tir(cls.tile, (x,), out_sinfo=R.Tensor((n * 2, 6), dtype="int32"))
        b = R.call_tir(cls.repeat, (x,), out_sinfo=R.Tensor((n, 6), dtype="int32"))
        c = R.call_tir(cls.flip, (x,), out_sinfo=R.Tensor((n, 3), dtype="int32"))
        d = R.call_tir(cls.stack, (x, y, z), out_sinfo=R.Tensor((3, n, 3), dtype="int32"))
        return (a, b, c, d)'''


def test_tile_repeat_flip_stack_legalize_as_tvm():
    assert legalized(TILE_REPEAT_FLIP_STACK) == TILE_REPEAT_FLIP_STACK_LEGALIZED


def test_tile_repeat_flip_stack_print_as_tvm():
    mod = from_source(TILE_REPEAT_FLIP_STACK)
    text = mod.script()
    for line in ('a: R.Tensor((n * 2, 6), dtype="int32") = R.tile(x, repeats=[2, 2])',
                 'b: R.Tensor((n, 6), dtype="int32") = R.repeat(x, repeats=2, axis=1)',
                 'c: R.Tensor((n, 3), dtype="int32") = R.flip(x, axis=0)',
                 'd: R.Tensor((3, n, 3), dtype="int32") = R.stack((x, y, z), axis=0)'):
        assert line in text
    assert_round_trip(mod)


def test_slice_scatter_prints_and_reads_back():
    src = HEADER + """@I.ir_module
class Module:
    @R.function
    def main(d: R.Tensor(("n", 5), "float32"), s: R.Tensor(("n", 2), "float32")):
        a = R.slice_scatter(d, s, 1, 5, 2, axis=1)
        return a
"""
    mod = from_source(src)
    assert ('a: R.Tensor((n, 5), dtype="float32") = R.slice_scatter(d, s, R.prim_value(1), R.prim_value(5), '
            'R.prim_value(2), axis=1)') in mod.script()
    assert_round_trip(mod)
    text = legalized(src)
    assert ("T_slice_scatter[v_ax0, v_ax1] = T.if_then_else(T.int64(1) <= v_ax1 and v_ax1 < T.int64(5) and "
            "(v_ax1 - T.int64(1)) % T.int64(2) == T.int64(0), s[v_ax0, (v_ax1 - T.int64(1)) // T.int64(2)], "
            "d[v_ax0, v_ax1])") in text


def test_tensor_to_shape_runs_in_the_vm():
    src = HEADER + """@I.ir_module
class Module:
    @R.function
    def main(t: R.Tensor((2,), "int64"), x: R.Tensor(("n",), "float32")):
        s = R.tensor_to_shape(t)
        a = R.match_cast(s, R.Shape(["p", "q"]))
        y = R.reshape(x, a)
        return y
"""
    mod = from_source(src)
    assert 's: R.Shape(ndim=2) = R.tensor_to_shape(t)' in mod.script()
    assert_round_trip(mod)
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
    out = vm["main"](np.array([2, 3], "int64"), np.arange(6, dtype="float32")).numpy()
    np.testing.assert_array_equal(out, np.arange(6, dtype="float32").reshape(2, 3))


@pytest.mark.parametrize("begin, end, strides", [([1, -1], [7, -8], [2, -3]), ([0, 0], [100, 9], [3, 1]),
                                                 ([-100, 5], [2, 5], [1, 1]), ([6, 8], [0, 0], [-2, -4])])
def test_dynamic_strided_slice_reads_its_bounds_at_run_time(begin, end, strides):
    x = np.arange(72, dtype="float32").reshape(8, 9)
    bounds = [np.array(v, "int64") for v in (begin, end, strides)]
    got = compile_and_run(op.dynamic_strided_slice, [x, *bounds], {0: {0: "n"}})
    np.testing.assert_array_equal(got, x[begin[0]:end[0]:strides[0], begin[1]:end[1]:strides[1]])


def test_dynamic_strided_slice_legalizes_as_tvm():
    # TVM 0.27's main: a shape function, R.tensor_to_shape, R.match_cast naming the sizes, the slice.
    src = HEADER + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8, 9), "float32"), b: R.Tensor((2,), "int64"), e: R.Tensor((2,), "int64"), s: R.Tensor((2,), "int64")):
        y = R.dynamic_strided_slice(x, b, e, s)
        return y
"""
    text = legalized(src)
    assert text.endswith("""        cls = Module
        s_1 = T.int64()
        s_2 = T.int64()
        gv = R.call_tir(cls.shape_func, (x, b, e, s), out_sinfo=R.Tensor((2,), dtype="int64"))
        gv1: R.Shape(ndim=2) = R.tensor_to_shape(gv)
        gv2: R.Shape([s_1, s_2]) = R.match_cast(gv1, R.Shape([s_1, s_2]))
        y = R.call_tir(cls.dynamic_strided_slice, (x, b, e, s), out_sinfo=R.Tensor((s_1, s_2), dtype="float32"))
        return y""")
    assert 'with T.block("T_shape_func_strided_slice_dynamic"):' in text
    assert 'with T.block("T_strided_slice_dynamic"):' in text


TAKE_PRIM = '''
from tvmlite.script import ir as I
from tvmlite.script import relax as R
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 4), "float32"), index: R.Prim("int64"), j: R.Prim("int32")):
        a = R.take(x, index, axis=1)
        b = R.take(x, j, axis=-1)
        c = R.take(R.reshape(x, (24,)), R.prim_value(5))
        return (a, b, c)
'''


def test_take_of_one_prim_index():
    # TVM's R.take(x, index, axis=1) with an R.Prim index: the axis goes away; checked at run time
    from tvmlite.script import from_source

    mod = from_source(TAKE_PRIM)
    text = mod.script()
    assert 'a: R.Tensor((2, 4), dtype="float32") = R.take(x, index, axis=1, mode="fast")' in text
    assert 'b: R.Tensor((2, 3), dtype="float32") = R.take(x, j, axis=-1, mode="fast")' in text
    assert 'c: R.Tensor((), dtype="float32") = R.take(gv, R.prim_value(5), axis=None, mode="fast")' in text
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    a, b, c = (t.numpy() for t in vm["main"](x, 2, -1))
    np.testing.assert_array_equal(a, x[:, 2])
    np.testing.assert_array_equal(b, x[:, :, -1])
    assert c == 5
    with pytest.raises(Exception, match=r"an index in index is out of range for axis 1 of x \(2, 3, 4\), of size 3 "
                                         r"\(valid indices: -3 to 2\) \(index = 3\)"):
        vm["main"](x, 3, 0)
