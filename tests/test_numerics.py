"""The same number everywhere: compiled code (the default schedule and the plain ``lower``
pipeline), the TIR interpreter (on blocks and on lowered loops) and FoldConstant (the numpy
evaluator) give the same results, checked against numpy or against a plain Python model of the
documented semantics (README, "Numerics"): rounding, IEEE-exact float simplification, reductions
over empty axes, layer_norm's variance and NaN through max/min."""
import math

import numpy as np
import pytest

import tvmlite
from tvmlite.backend.compile import VMExecutable
from tvmlite.backend.interpreter import InterpreterExecutor, run_prim_func
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.passes import FoldConstant, Simplify, get_pipeline
from tvmlite.script import from_source

MODES = ("default", "lower", "interpreter", "interpreter_lowered", "fold")


def relax_source(body: str, params: list[tuple[str, tuple, str]], ret: tuple[tuple, str]) -> str:
    """A module whose ``main`` binds ``body`` (its last binding is ``y``) in a dataflow block."""
    sig = ", ".join(f'{n}: R.Tensor({s!r}, dtype="{d}")' for n, s, d in params)
    lines = [line.strip() for line in body.strip().split("\n")]
    return ("@I.ir_module\nclass Module:\n    @R.function\n"
            f"    def main({sig}) -> R.Tensor({ret[0]!r}, dtype=\"{ret[1]}\"):\n        with R.dataflow():\n"
            + "".join(f"            {line}\n" for line in lines) + "            R.output(y)\n        return y\n")


def run(mode: str, body: str, params: list[tuple[str, tuple, str]], ret: tuple[tuple, str], arrays: list):
    """``main`` run one way: compiled, interpreted, or folded with the parameters as constants."""
    if mode == "fold":
        src = relax_source(body, [], ret)
        mod = from_source(src, extra_vars={name: a for (name, _, _), a in zip(params, arrays)})
        out = FoldConstant()(mod)["main"].body.body
        assert isinstance(out, rx.Constant), out  # folded all the way
        return out.data
    mod = from_source(relax_source(body, params, ret))
    if mode in ("default", "lower"):
        ex = tvmlite.compile(mod, tir_pipeline="default_tir" if mode == "default" else "lower")
    else:
        graph = get_pipeline("zero")(mod)
        if mode == "interpreter_lowered":
            graph = get_pipeline("lower")(graph)
        ex = VMExecutable(graph, InterpreterExecutor(graph))
    return tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](*arrays).numpy()


def same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values and dtypes, NaN where NaN, and the sign of every zero (a NaN's sign bit is
    not a value: x86 makes ``0.0 / 0.0`` negative)."""
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got) & ~np.isnan(got), np.signbit(want) & ~np.isnan(want))


# ---------------------------------------------------------------------------------------- rounding
HALVES = [0.5, 1.5, 2.5, -0.5, -2.5, 3.5, -1.5, 0.49, 2.7, -3.2]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_round_is_half_to_even_as_numpy(dtype, mode):
    x = np.array(HALVES, dtype)
    got = run(mode, "y = R.round(x)", [("x", (10,), dtype)], ((10,), dtype), [x])
    same(got, np.round(x))  # 0.5 -> 0, 2.5 -> 2, -0.5 -> -0.0


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_tir_round_and_nearbyint_compiled_and_interpreted(dtype):
    func = from_source(f'''
@T.prim_func
def main(A: T.Buffer((10,), "{dtype}"), B: T.Buffer((10,), "{dtype}"), C: T.Buffer((10,), "{dtype}")):
    for i in range(10):
        B[i] = T.round(A[i])
        C[i] = T.nearbyint(A[i])
''')
    a = np.array(HALVES, dtype)
    ex = tvmlite.compile(func, tir_pipeline="lower")
    for call in (lambda *xs: ex["main"](*xs), lambda *xs: run_prim_func(func, list(xs))):
        b, c = np.full(10, 7, dtype), np.full(10, 7, dtype)
        call(a, b, c)
        same(b, np.round(a))
        same(c, np.rint(a))


# ------------------------------------------------------------------------- float simplification
def _f32(v: float) -> tir.FloatImm:
    return tir.FloatImm("float32", v)


IEEE_CASES = {  # name: (expression of x, what numpy computes)
    "x * 0.0": (lambda x: tir.Mul(x, _f32(0.0)), lambda v: v * np.float32(0.0)),
    "0.0 * x": (lambda x: tir.Mul(_f32(0.0), x), lambda v: np.float32(0.0) * v),
    "x + 0.0": (lambda x: tir.Add(x, _f32(0.0)), lambda v: v + np.float32(0.0)),
    "0.0 + x": (lambda x: tir.Add(_f32(0.0), x), lambda v: np.float32(0.0) + v),
    "x + -0.0": (lambda x: tir.Add(x, _f32(-0.0)), lambda v: v + np.float32(-0.0)),
    "x - 0.0": (lambda x: tir.Sub(x, _f32(0.0)), lambda v: v - np.float32(0.0)),
    "x - -0.0": (lambda x: tir.Sub(x, _f32(-0.0)), lambda v: v - np.float32(-0.0)),
    "x * 1.0": (lambda x: tir.Mul(x, _f32(1.0)), lambda v: v * np.float32(1.0)),
    "1.0 * x": (lambda x: tir.Mul(_f32(1.0), x), lambda v: np.float32(1.0) * v),
    "x / 1.0": (lambda x: tir.Div(x, _f32(1.0)), lambda v: v / np.float32(1.0)),
    "x - x": (lambda x: tir.Sub(x, x), lambda v: v - v),
}
NO_SIMPLIFY = "LowerBlocks,FlattenBuffer,LowerIntrinsics"  # the lower pipeline without Simplify
IEEE_INPUTS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.0, 3e38], "float32")


@pytest.mark.parametrize("name", sorted(IEEE_CASES))
def test_simplify_folds_only_ieee_exact_float_identities(name):
    build, ref = IEEE_CASES[name]
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[i]
''')
    loop = func.body.block.body if isinstance(func.body, tir.BlockRealize) else func.body
    store = loop.body
    new_store = tir.BufferStore(store.buffer, build(store.value), store.indices)
    func = tvmlite.ir.node.replace(func, body=_replace_loop_body(func.body, new_store))
    mod = tvmlite.IRModule.from_expr(func)
    simplified = Simplify()(mod)
    with np.errstate(all="ignore"):
        want = ref(IEEE_INPUTS)
    for m in (mod, simplified):
        for f in (lambda a, b: tvmlite.compile(m, tir_pipeline=NO_SIMPLIFY)["main"](a, b),
                  lambda a, b: run_prim_func(m["main"], [a, b])):
            out = np.full(8, 7.0, "float32")
            with np.errstate(all="ignore"):
                f(IEEE_INPUTS.copy(), out)
            same(out, want)
    folded = simplified["main"].script()
    exact = name in ("x + -0.0", "x - 0.0", "x * 1.0", "1.0 * x", "x / 1.0")
    assert ("B[i] = A[i]\n" in folded + "\n") == exact, folded


def _replace_loop_body(stmt, new_store):
    """``stmt`` (a loop over one store, possibly in the root block) with the store replaced."""
    node = tvmlite.ir.node.replace
    if isinstance(stmt, tir.BlockRealize):
        return node(stmt, block=node(stmt.block, body=_replace_loop_body(stmt.block.body, new_store)))
    if isinstance(stmt, tir.For):
        return node(stmt, body=new_store)
    raise AssertionError(type(stmt))


def test_simplify_keeps_nan_through_constant_min_max_as_compiled():
    """T.max/T.min of two literals fold as the compiled select (``a > b ? a : b``)."""
    nan = float("nan")
    func = from_source('''
@T.prim_func
def main(B: T.Buffer((4,), "float32")):
    B[0] = T.float32(0.0)
    B[1] = T.float32(0.0)
    B[2] = T.float32(0.0)
    B[3] = T.float32(0.0)
''')
    values = [tir.Max(_f32(nan), _f32(1.0)), tir.Max(_f32(1.0), _f32(nan)),
              tir.Min(_f32(nan), _f32(1.0)), tir.Min(_f32(1.0), _f32(nan))]
    body = tir.seq([tvmlite.ir.node.replace(s, value=v) for s, v in zip(stmts_of(func), values)])
    mod = tvmlite.IRModule.from_expr(tvmlite.ir.node.replace(func, body=body))
    want = np.array([1.0, np.nan, 1.0, np.nan], "float32")  # a NaN first operand gives the second
    for m in (mod, Simplify()(mod)):
        for f in (lambda b: tvmlite.compile(m, tir_pipeline=NO_SIMPLIFY)["main"](b),
                  lambda b: run_prim_func(m["main"], [b])):
            out = np.zeros(4, "float32")
            f(out)
            same(out, want)
    assert "T.max" not in Simplify()(mod).script() and "T.min" not in Simplify()(mod).script()


def stmts_of(func):
    """The statements of a straight-line PrimFunc body."""
    body = func.body.block.body if isinstance(func.body, tir.BlockRealize) else func.body
    return body.seq


# ---------------------------------------------------------------------- reductions over nothing
EMPTY_REDUCTIONS = {  # op: the result over an empty axis
    "sum": lambda e: np.sum(e, axis=1),
    "prod": lambda e: np.prod(e, axis=1),
    "mean": lambda e: np.full(e.shape[0], np.nan, e.dtype),  # 0 / 0
    # numpy raises; as TVM, the reducer's identity: the lowest / highest finite value
    "max": lambda e: np.full(e.shape[0], np.finfo(e.dtype).min, e.dtype),
    "min": lambda e: np.full(e.shape[0], np.finfo(e.dtype).max, e.dtype),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", sorted(EMPTY_REDUCTIONS))
def test_reduction_of_an_empty_axis(op, mode):
    e = np.zeros((3, 0), "float32")
    want = EMPTY_REDUCTIONS[op](e).astype("float32")
    with np.errstate(all="ignore"):
        got = run(mode, f"y = R.{op}(x, axis=[1])", [("x", (3, 0), "float32")], ((3,), "float32"), [e])
    same(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_concat_with_an_empty_operand(mode):
    e, z = np.zeros((3, 0), "float32"), np.arange(6, dtype="float32").reshape(3, 2)
    got = run(mode, "y = R.concat((x, z), axis=1)", [("x", (3, 0), "float32"), ("z", (3, 2), "float32")],
              ((3, 2), "float32"), [e, z])
    same(got, np.concatenate([e, z], axis=1))


MATMUL_K = '''
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((4, "k"), dtype="float32"), b: R.Tensor(("k", 3), dtype="float32")):
        with R.dataflow():
            y = R.matmul(a, b)
            z = R.max(a, axis=[1])
            R.output(y, z)
        return (y, z)
'''


def _kernels(mode: str):
    """The legalized matmul / max kernels of MATMUL_K, run one way: ``f(name, *arrays)``."""
    mod = get_pipeline("zero")(from_source(MATMUL_K))
    if mode in ("default", "lower"):
        ex = tvmlite.compile(mod, relax_pipeline=None, tir_pipeline="default_tir" if mode == "default" else "lower")
        return lambda name, *arrays: ex[name](*arrays)
    if mode == "interpreter_lowered":
        mod = get_pipeline("lower")(mod)
    ex = InterpreterExecutor(mod)
    return lambda name, *arrays: ex.call(name, list(arrays))


@pytest.mark.parametrize("mode", ["default", "lower", "interpreter", "interpreter_lowered"])
@pytest.mark.parametrize("k", [0, 5])
def test_reduction_init_runs_when_the_reduction_is_empty(mode, k):
    """The outputs start as garbage: the init must write them even when K = 0."""
    rng = np.random.default_rng(k)
    a, b = rng.standard_normal((4, k)).astype("float32"), rng.standard_normal((k, 3)).astype("float32")
    call = _kernels(mode)
    out = np.full((4, 3), 7.0, "float32")
    call("matmul", a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-6)
    red = np.full(4, 7.0, "float32")
    call("max", a, red)
    same(red, a.max(axis=1) if k else np.full(4, np.finfo("float32").min, "float32"))


def test_static_nonzero_reductions_keep_their_lowered_code():
    """Positive constant extents need no separate init: the lowered text has no extent test."""
    mod = get_pipeline("zero")(from_source(MATMUL_K.replace('"k"', "5")))
    text = get_pipeline("lower")(mod).script()
    assert "<= T.int64(0)" not in text and "_init" not in text
    dynamic = get_pipeline("lower")(get_pipeline("zero")(from_source(MATMUL_K))).script()
    assert dynamic.count("if k <= T.int64(0):") == 2  # one per reduction


def test_init_of_an_empty_static_reduction_is_hoisted():
    """A reduction loop of extent 0 gets its init as a loop nest of its own, as decompose_reduction."""
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((4, 0), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 0):
        with T.block("red"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(1.0)
            B[vi] = B[vi] * A[vi, vk]
''')
    lowered = get_pipeline("lower")(tvmlite.IRModule.from_expr(func))["main"]
    assert lowered.script().endswith('''
    for i in range(4):
        B[i] = T.float32(1.0)
        for k in range(0):
            if k == 0:
                B[i] = T.float32(1.0)
            B[i] = B[i] * A_1[k]''')
    for fn in (lambda b: run_prim_func(func, [np.zeros((4, 0), "float32"), b]),
               lambda b: run_prim_func(lowered, [np.zeros((4, 0), "float32"), b]),
               lambda b: tvmlite.compile(func, tir_pipeline="lower")["main"](np.zeros((4, 0), "float32"), b)):
        out = np.full(4, 7.0, "float32")
        fn(out)
        same(out, np.ones(4, "float32"))


# ------------------------------------------------------------------------------------ layer_norm
@pytest.mark.parametrize("mode", MODES)
def test_layer_norm_of_rows_with_a_large_mean_is_accurate(mode):
    """Rows around 300 with a spread of 0.03: a one-pass variance (E[x^2] - E[x]^2) cancels to
    garbage or NaN in float32; the two-pass one is as accurate as float32 allows."""
    rng = np.random.default_rng(0)
    x = (300 + 0.03 * rng.standard_normal((4, 64))).astype("float32")
    g = rng.uniform(0.5, 1.5, 64).astype("float32")
    b = rng.uniform(-1, 1, 64).astype("float32")
    got = run(mode, "y = R.nn.layer_norm(x, g, b, axes=[-1])",
              [("x", (4, 64), "float32"), ("g", (64,), "float32"), ("b", (64,), "float32")], ((4, 64), "float32"),
              [x, g, b])
    x64 = x.astype("float64")
    want = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5) * g + b
    assert np.isfinite(got).all()
    # float32 holds 300 to 3e-5, a thousandth of the spread: that is the error left
    np.testing.assert_allclose(got, want, atol=5e-3)


@pytest.mark.parametrize("mode", ["default", "fold"])
def test_variance_std_and_batch_norm_statistics_of_a_large_mean(mode):
    rng = np.random.default_rng(1)
    x = (1000 + 0.05 * rng.standard_normal((3, 128))).astype("float32")
    x64 = x.astype("float64")
    for op, want in (("variance", x64.var(1)), ("std", x64.std(1))):
        got = run(mode, f"y = R.{op}(x, axis=[1])", [("x", (3, 128), "float32")], ((3,), "float32"), [x])
        np.testing.assert_allclose(got, want, rtol=0.02)


# -------------------------------------------------------------------------------- NaN semantics
def select_max(a, b):
    """``a > b ? a : b`` elementwise (TVM's lowering of T.max)."""
    return np.where(a > b, a, b)


def select_min(a, b):
    """``a < b ? a : b`` elementwise."""
    return np.where(a < b, a, b)


def fold_rows(x, pick, first=None):
    """The sequential reduction ``acc = pick(acc, x[k])`` of each row."""
    out = []
    for row in x:
        acc = row.dtype.type(first) if first is not None else None
        for v in row:
            acc = v if acc is None else pick(acc, v)
        out.append(acc)
    return np.array(out, x.dtype)


def arg_fold_rows(x, bigger):
    """argmax/argmin as TVM's reducer: ``acc > x`` (or ``<``) keeps the accumulated pair; equal
    values keep the smaller index; anything else (a NaN on either side) takes the new pair."""
    out = []
    for row in x:
        idx, val = -1, np.finfo(row.dtype).min if bigger else np.finfo(row.dtype).max
        for k, v in enumerate(row):
            better = val > v if bigger else val < v
            if not (better or (val == v and idx < k)):
                idx = k
            val = val if better else v
        out.append(idx)
    return np.array(out, "int64")


NAN_X = np.array([np.nan, 1.0, -1.0, np.inf, 8.0, np.nan], "float32")
NAN_Z = np.array([2.0, np.nan, 0.5, np.nan, 9.0, np.nan], "float32")
NAN_M = np.array([[1, np.nan, 3, 0], [np.nan, 2, 0, 1], [1, 2, 0, np.nan], [5, 4, 3, 2], [np.nan] * 4],
                 "float32")
NAN_CASES = {  # op: (body, params, result, inputs, the documented result)
    "relu": ("y = R.nn.relu(x)", [("x", (6,), "float32")], ((6,), "float32"), [NAN_X],
             select_max(NAN_X, np.float32(0))),  # NaN -> 0
    "clip": ("y = R.clip(x, 0, 6)", [("x", (6,), "float32")], ((6,), "float32"), [NAN_X],
             select_max(select_min(NAN_X, np.float32(6)), np.float32(0))),  # NaN -> the upper bound
    "maximum": ("y = R.maximum(x, z)", [("x", (6,), "float32"), ("z", (6,), "float32")], ((6,), "float32"),
                [NAN_X, NAN_Z], select_max(NAN_X, NAN_Z)),
    "minimum": ("y = R.minimum(x, z)", [("x", (6,), "float32"), ("z", (6,), "float32")], ((6,), "float32"),
                [NAN_X, NAN_Z], select_min(NAN_X, NAN_Z)),
    "max": ("y = R.max(x, axis=[1])", [("x", (5, 4), "float32")], ((5,), "float32"), [NAN_M],
            fold_rows(NAN_M, select_max, np.finfo("float32").min)),
    "min": ("y = R.min(x, axis=[1])", [("x", (5, 4), "float32")], ((5,), "float32"), [NAN_M],
            fold_rows(NAN_M, select_min, np.finfo("float32").max)),
    "argmax": ("y = R.argmax(x, axis=1)", [("x", (5, 4), "float32")], ((5,), "int64"), [NAN_M],
               arg_fold_rows(NAN_M, True)),
    "argmin": ("y = R.argmin(x, axis=1)", [("x", (5, 4), "float32")], ((5,), "int64"), [NAN_M],
               arg_fold_rows(NAN_M, False)),
}


def test_documented_nan_results():
    """The README's statements, spelled out."""
    assert NAN_CASES["relu"][4][0] == 0 and NAN_CASES["clip"][4][0] == 6
    np.testing.assert_array_equal(NAN_CASES["maximum"][4], [2.0, np.nan, 0.5, np.nan, 9.0, np.nan])
    # a reduction is NaN when its last element is; otherwise the extreme of what follows the last NaN
    np.testing.assert_array_equal(NAN_CASES["max"][4], [3.0, 2.0, np.nan, 5.0, np.nan])
    np.testing.assert_array_equal(NAN_CASES["argmax"][4], [2, 1, 3, 0, 3])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", sorted(NAN_CASES))
def test_nan_through_max_and_min_agrees_everywhere(op, mode):
    body, params, ret, arrays, want = NAN_CASES[op]
    same(run(mode, body, params, ret, arrays), want)


@pytest.mark.parametrize("mode", ["default", "lower", "fold"])
def test_nan_through_a_long_and_a_full_reduction(mode):
    """Long rows and a reduction over every axis (which the default schedule splits) keep the
    sequential semantics."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 1000)).astype("float32")
    x[0, 3] = x[1, 999] = x[2, 500] = x[3, 0] = x[3, 995] = np.nan
    got = run(mode, "y = R.max(x, axis=[1])", [("x", (8, 1000), "float32")], ((8,), "float32"), [x])
    same(got, fold_rows(x, select_max, np.finfo("float32").min))
    y = x[4:].copy()
    y[1, 17] = np.nan
    got = run(mode, "y = R.max(x)", [("x", (4, 1000), "float32")], ((), "float32"), [y])
    assert got.shape == () and float(got) == float(y.reshape(-1)[1018:].max())  # what follows the NaN
    assert math.isfinite(float(got))


@pytest.mark.parametrize("mode", MODES)
def test_nan_through_a_reduction_over_two_axes(mode):
    """Random NaNs, a reduction over two axes: the row-major sequential fold everywhere."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 3, 4)).astype("float32")
    x[rng.random(x.shape) < 0.15] = np.nan
    for op, pick, first in (("max", select_max, np.finfo("float32").min),
                            ("min", select_min, np.finfo("float32").max)):
        got = run(mode, f"y = R.{op}(x, axis=[1, 2])", [("x", (6, 3, 4), "float32")], ((6,), "float32"), [x])
        same(got, fold_rows(x.reshape(6, 12), pick, first))
