"""Lowering (``tvmlite.passes.lower``): the exact text of LowerBlocks, FlattenBuffer and
LowerIntrinsics on small functions, the ``lower`` pipeline, the round trip of every lowered
output, and numbers: for every PrimFunc that LegalizeOps makes from the corpus and from one module
per registered op, the reference interpreter on the lowered function agrees with
``te.evaluate_prim_func`` on the original (and with the interpreter on the original)."""
import pathlib
import sys

import numpy as np
import pytest

from tvmlite import relax
from tvmlite.backend.interpreter import InterpreterExecutor
from tvmlite.backend.runtime import get_func
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.module import IRModule
from tvmlite.ir.stmt_functor import post_order_visit
from tvmlite.passes import LegalizeOps, PassContext, PassError, Simplify, get_pipeline, parse_pipeline
from tvmlite.passes.lower import FlattenBuffer, LowerBlocks, LowerIntrinsics
from tvmlite.script import from_source
from tvmlite.te import evaluate_prim_func
from tvmlite.te.evaluate import eval_expr
from tvmlite.testing import assert_round_trip

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from legalize_util import build, params_for  # noqa: E402
from test_legalize import CASES  # noqa: E402

from corpus_files import CORPUS_DIR as CORPUS, read_corpus  # noqa: E402  (tests/data/corpus)
op = relax.op


def body(text: str) -> str:
    return "\n".join(line for line in text.strip("\n").split("\n") if not line.startswith("# from ")).strip("\n")


def lowered_stages(mod: IRModule) -> list[IRModule]:
    """The module after each pass of the lower pipeline."""
    out = []
    for p in (LowerBlocks(), FlattenBuffer(), Simplify(), LowerIntrinsics()):
        mod = p(mod)
        out.append(mod)
    return out


SMALL = '''
@I.ir_module
class Module:
    @T.prim_func
    def ew(a: T.handle, b: T.handle):
        n, m = T.int64(), T.int64()
        A = T.match_buffer(a, (n, m))
        B = T.match_buffer(b, (n, m))
        T_sig = T.alloc_buffer((n, m))
        for i, j in T.grid(n, m):
            with T.block("s"):
                vi, vj = T.axis.remap("SS", [i, j])
                T_sig[vi, vj] = T.sigmoid(A[vi, vj])
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T_sig[vi, vj] * T.float32(2.0)

    @T.prim_func
    def matmul(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((4, 4), "float32")):
        for i, j, k in T.grid(4, 4, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

SMALL_BLOCKS_LOWERED = '''
@I.ir_module
class Module:
    @T.prim_func
    def ew(a: T.handle, b: T.handle):
        n, m = T.int64(), T.int64()
        A = T.match_buffer(a, (n, m))
        B = T.match_buffer(b, (n, m))
        T_sig = T.decl_buffer((n, m))
        for i, j in T.grid(n, m):
            T_sig[i, j] = T.sigmoid(A[i, j])
        for i, j in T.grid(n, m):
            B[i, j] = T_sig[i, j] * T.float32(2.0)

    @T.prim_func
    def matmul(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((4, 4), "float32")):
        for i, j, k in T.grid(4, 4, 8):
            if k == 0:
                C[i, j] = T.float32(0.0)
            C[i, j] = C[i, j] + A[i, k] * B[k, j]
'''

SMALL_FLATTENED = '''
@I.ir_module
class Module:
    @T.prim_func
    def ew(a: T.handle, b: T.handle):
        n, m = T.int64(), T.int64()
        A = T.match_buffer(a, (n, m))
        B = T.match_buffer(b, (n, m))
        A_1 = T.decl_buffer((m * n,), data=A.data)
        B_1 = T.decl_buffer((m * n,), data=B.data)
        T_sig = T.decl_buffer((m * n,))
        for i, j in T.grid(n, m):
            T_sig[j + i * m] = T.sigmoid(A_1[j + i * m])
        for i, j in T.grid(n, m):
            B_1[j + i * m] = T_sig[j + i * m] * T.float32(2.0)

    @T.prim_func
    def matmul(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((4, 4), "float32")):
        A_1 = T.decl_buffer((32,), data=A.data)
        B_1 = T.decl_buffer((32,), data=B.data)
        C_1 = T.decl_buffer((16,), data=C.data)
        for i, j, k in T.grid(4, 4, 8):
            if k == 0:
                C_1[i * 4 + j] = T.float32(0.0)
            C_1[i * 4 + j] = C_1[i * 4 + j] + A_1[i * 8 + k] * B_1[j + k * 4]
'''


def test_lower_blocks_text():
    assert body(LowerBlocks()(from_source(SMALL)).script()) == body(SMALL_BLOCKS_LOWERED)


def test_flatten_buffer_text():
    assert body(FlattenBuffer()(from_source(SMALL_BLOCKS_LOWERED)).script()) == body(SMALL_FLATTENED)


def test_lower_pipeline_text():
    out = get_pipeline("lower")(from_source(SMALL))
    want = SMALL_FLATTENED.replace(
        "T.sigmoid(A_1[j + i * m])",
        "T.float32(1.0) / (T.float32(1.0) + T.exp(T.float32(0.0) - A_1[j + i * m]))")
    assert body(out.script()) == body(want)
    for stage in lowered_stages(from_source(SMALL)):
        assert_round_trip(stage)
    assert get_pipeline("lower")(out).script() == out.script()  # lowering lowered code changes nothing


def test_lower_pipeline_is_registered():
    pipeline = get_pipeline("lower")
    assert str(pipeline) == "lower"
    assert [p.info.name for p in pipeline.passes] == ["LowerBlocks", "FlattenBuffer", "Simplify", "LowerIntrinsics",
                                                          "VectorizeLoop", "InjectPrefetch"]
    text = "LowerBlocks,FlattenBuffer,LowerIntrinsics"
    assert str(parse_pipeline(text)) == text


BLOCK_FORMS = '''
@I.ir_module
class Module:
    @T.prim_func
    def pad(A: T.Buffer((5,), "float32"), B: T.Buffer((8,), "float32")):
        for io, ii in T.grid(2, 4):
            with T.block("B"):
                vi = T.axis.spatial(8, io * 4 + ii)
                T.where(io * 4 + ii < 5)
                T.block_attr({"note": 1})
                B[vi] = A[vi] * T.float32(2.0)

    @T.prim_func
    def rows(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("row"):
                vi = T.axis.spatial(4, i)
                row = T.match_buffer(A[vi, 2:8], (6,))
                acc = T.alloc_buffer((1,))
                acc[0] = T.float32(0.0)
                for k in range(6):
                    acc[0] = acc[0] + row[k]
                B[vi] = acc[0]

    @T.prim_func
    def sum2(A: T.Buffer((3, 4, 5), "float32"), B: T.Buffer((3,), "float32")):
        for i, j, k in T.grid(3, 4, 5):
            with T.block("sum"):
                vi, vj, vk = T.axis.remap("SRR", [i, j, k])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vj, vk]
'''

BLOCK_FORMS_LOWERED = '''
@I.ir_module
class Module:
    @T.prim_func
    def pad(A: T.Buffer((5,), "float32"), B: T.Buffer((8,), "float32")):
        for io, ii in T.grid(2, 4):
            if io * 4 + ii < 5:
                B[io * 4 + ii] = A[io * 4 + ii] * T.float32(2.0)

    @T.prim_func
    def rows(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            acc = T.decl_buffer((1,))
            acc[0] = T.float32(0.0)
            for k in range(6):
                acc[0] = acc[0] + A[i, 2 + k]
            B[i] = acc[0]

    @T.prim_func
    def sum2(A: T.Buffer((3, 4, 5), "float32"), B: T.Buffer((3,), "float32")):
        for i, j, k in T.grid(3, 4, 5):
            if j == 0 and k == 0:
                B[i] = T.float32(0.0)
            B[i] = B[i] + A[i, j, k]
'''


def test_lower_blocks_predicates_match_buffers_and_reductions():
    mod = from_source(BLOCK_FORMS)
    out = LowerBlocks()(mod)
    assert body(out.script()) == body(BLOCK_FORMS_LOWERED)
    assert_round_trip(out)
    rng = np.random.default_rng(1)
    cases = {"pad": [rng.standard_normal(5).astype("float32"), np.zeros(8, "float32")],
             "rows": [rng.standard_normal((4, 8)).astype("float32"), np.zeros(4, "float32")],
             "sum2": [rng.standard_normal((3, 4, 5)).astype("float32"), np.zeros(3, "float32")]}
    for name, (a, b) in cases.items():
        want, got, again = b.copy(), b.copy(), b.copy()
        InterpreterExecutor(mod).call(name, [a, want])
        InterpreterExecutor(out).call(name, [a, got])
        InterpreterExecutor(get_pipeline("lower")(mod)).call(name, [a, again])
        np.testing.assert_allclose(got, want, rtol=1e-6)
        np.testing.assert_allclose(again, want, rtol=1e-6)


FLATTEN_FORMS = '''
@I.ir_module
class Module:
    @T.prim_func
    def forms(a: T.handle, B: T.Buffer((), "int32"), c: T.handle):
        A = T.match_buffer(a, (4, 4), strides=(8, 1))
        C = T.match_buffer(c, (8,), elem_offset=2)
        X = T.allocate([6], "float32", "global")
        Xb = T.decl_buffer((2, 3), data=X)
        Y = T.allocate([2, 3], "float32", "global")
        for i, j in T.grid(4, 4):
            A[i, j] = A[i, j] + T.Cast("float32", B[()])
        Xb[1, 2] = A[0, 0]
        C[0:4] = C[4:8]
        B[()] = B[()] + 1

    @T.prim_func
    def mixed(A: T.Buffer((2, T.int64(3)), "float32"), B: T.Buffer((T.int64(6),), "float32")):
        for i, j in T.grid(2, T.int64(3)):
            B[T.Cast("int64", i) * T.int64(3) + j] = A[i, j]
'''

FLATTEN_FORMS_FLAT = '''
@I.ir_module
class Module:
    @T.prim_func
    def forms(a: T.handle, B: T.Buffer((), "int32"), c: T.handle):
        A = T.match_buffer(a, (4, 4), strides=(8, 1))
        C = T.match_buffer(c, (8,), elem_offset=2)
        A_1 = T.decl_buffer((32,), data=A.data)
        B_1 = T.decl_buffer((1,), "int32", data=B.data)
        C_1 = T.decl_buffer((10,), data=C.data)
        Xb = T.decl_buffer((6,))
        Y = T.allocate([6], "float32", "global")
        for i, j in T.grid(4, 4):
            A_1[i * 8 + j] = A_1[i * 8 + j] + T.Cast("float32", B_1[0])
        Xb[5] = A_1[0]
        C_1[2:6] = C_1[6:10]
        B_1[0] = B_1[0] + 1

    @T.prim_func
    def mixed(A: T.Buffer((2, T.int64(3)), "float32"), B: T.Buffer((T.int64(6),), "float32")):
        A_1 = T.decl_buffer((T.int64(6),), data=A.data)
        for i, j in T.grid(2, T.int64(3)):
            B[T.Cast("int64", i) * T.int64(3) + j] = A_1[j + T.Cast("int64", i) * T.int64(3)]
'''


def test_flatten_strides_offsets_scalars_allocations_vectors_and_index_dtypes():
    mod = from_source(FLATTEN_FORMS)
    out = FlattenBuffer()(mod)
    assert body(out.script()) == body(FLATTEN_FORMS_FLAT)
    assert_round_trip(out)
    assert FlattenBuffer()(out).script() == out.script()  # already flat: nothing to do
    a = np.arange(6, dtype="float32").reshape(2, 3)
    want, got = np.zeros(6, "float32"), np.zeros(6, "float32")
    InterpreterExecutor(mod).call("mixed", [a, want])
    InterpreterExecutor(out).call("mixed", [a, got])
    np.testing.assert_array_equal(got, a.reshape(-1))
    np.testing.assert_array_equal(want, got)


def test_flatten_strides_and_offsets_numbers():
    src = """
@T.prim_func
def main(a: T.handle, B: T.Buffer((), "int32"), C: T.Buffer((7,), "float32")):
    A = T.match_buffer(a, (4, 4), strides=(8, 1))
    Cv = T.decl_buffer((2, 3), data=C.data, elem_offset=1)
    for i, j in T.grid(4, 4):
        A[i, j] = A[i, j] * T.Cast("float32", B[()])
    B[()] = B[()] + 1
    for i, j in T.grid(2, 3):
        Cv[i, j] = T.Cast("float32", i * 3 + j + 1)
"""
    mod = IRModule.from_expr(from_source(src))
    flat = FlattenBuffer()(mod)
    assert_round_trip(flat)
    assert "Cv[i * 3 + j + 1] = T.Cast(\"float32\", i * 3 + j + 1)" in flat.script()
    base = np.arange(32, dtype="float32").reshape(4, 8)
    for m in (mod, flat):
        arr, b, c = base.copy(), np.array(3, "int32"), np.zeros(7, "float32")
        InterpreterExecutor(m).call("main", [arr[:, 2:6], b, c])  # the view is written through its strides
        want = base.copy()
        want[:, 2:6] *= 3
        np.testing.assert_array_equal(arr, want)
        assert b == 4
        np.testing.assert_array_equal(c, np.arange(7))


def test_parameter_offsets_are_refused():
    src = """
@T.prim_func
def main(c: T.handle):
    C = T.match_buffer(c, (2, 3), elem_offset=1)
    C[1, 2] = T.float32(5.0)
"""
    # A numpy array cannot start one element into its data: the argument is refused, lowered or not.
    mod = IRModule.from_expr(from_source(src))
    for m in (mod, FlattenBuffer()(mod)):
        with pytest.raises(ValueError, match="argument 'C': elem_offset must be 1, got 0"):
            InterpreterExecutor(m).call("main", [np.zeros((2, 3), "float32")])


def test_flatten_needs_lowered_blocks():
    with PassContext(config={"tvmlite.reproducer_dir": False}):
        with pytest.raises(PassError, match="FlattenBuffer needs block-free TIR: run LowerBlocks first"):
            FlattenBuffer()(from_source(SMALL))


def test_lower_intrinsics_text():
    src = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((3, 4), "float32")):
    for i in range(4):
        B[0, i] = T.sigmoid(A[i]) + T.rsqrt(A[i])
        B[1, i] = T.exp10(A[i]) + T.erf(A[i]) + T.tanh(A[i])
        B[2, i] = T.if_then_else(A[i] < T.float32(0.0), T.exp(A[i]), A[i])
"""
    out = LowerIntrinsics()(IRModule.from_expr(from_source(src)))
    want = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((3, 4), "float32")):
    for i in range(4):
        B[0, i] = T.float32(1.0) / (T.float32(1.0) + T.exp(T.float32(0.0) - A[i])) + T.float32(1.0) / T.sqrt(A[i])
        B[1, i] = T.pow(T.float32(10.0), A[i]) + T.erf(A[i]) + T.tanh(A[i])
        B[2, i] = T.if_then_else(A[i] < T.float32(0.0), T.exp(A[i]), A[i])
"""
    assert body(out["main"].script()) == body(want)
    assert_round_trip(out)
    a = np.array([0.5, 1.0, 2.0, 0.25], "float32")
    want_b, got_b = np.zeros((3, 4), "float32"), np.zeros((3, 4), "float32")
    InterpreterExecutor(from_source(src)).call("main", [a, want_b])
    InterpreterExecutor(out).call("main", [a, got_b])
    np.testing.assert_allclose(got_b, want_b, rtol=1e-5)


def test_lowered_functions_have_no_blocks_and_only_flat_accesses():
    mod = LegalizeOps()(build(lambda x, w: op.nn.conv2d(x, w, padding=1), params_for(
        [np.zeros((1, 2, 5, 5), "float32"), np.zeros((3, 2, 3, 3), "float32")])))
    low = get_pipeline("lower")(mod)
    for gv, f in low.functions_items():
        if not isinstance(f, tir.PrimFunc):
            continue
        found = []
        post_order_visit(f.body, found.append)
        assert not any(isinstance(n, (tir.Block, tir.BlockRealize)) for n in found)
        assert all(len(n.indices) == 1 for n in found if isinstance(n, (tir.BufferLoad, tir.BufferStore)))


# ------------------------------------------------------------------ numbers
def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


def run_both(mod: IRModule, low: IRModule, args: list[np.ndarray], func: str = "main") -> list[str]:
    """Run the Relax function ``func`` of a legalized module; at every ``call_tir`` compare the
    interpreter on the lowered PrimFunc and on the original with ``te.evaluate_prim_func``.
    Returns the names of the PrimFuncs compared."""
    lowered, original = InterpreterExecutor(low), InterpreterExecutor(mod)
    compared = []

    def call_tir(e: rx.Call, value: object, sizes: dict) -> object:
        name = e.args[0].name_hint
        inputs = [np.require(value(x), requirements="C") for x in e.args[1].fields]  # keeps 0-d arrays 0-d
        scalars = [int(eval_expr(v, sizes, None)) for v in e.args[2].values] if len(e.args) > 2 else []
        out = e.sinfo_args[0]
        shapes = [tuple(int(eval_expr(d, sizes, None)) for d in t.shape)
                  for t in (out.fields if isinstance(out, rx.TupleStructInfo) else (out,))]
        want = evaluate_prim_func(mod[name], inputs, scalars, shapes)
        for executor in (lowered, original):
            got = [np.zeros(s, dtype=w.dtype) for s, w in zip(shapes, want)]
            executor.call(name, inputs + got, scalars)
            for g, w in zip(got, want):
                _close(g, w)
        compared.append(name)
        return want[0] if isinstance(e.struct_info, rx.TensorStructInfo) else tuple(want)

    def run_function(f: rx.Function, args: list) -> object:
        env: dict[int, object] = {}
        sizes: dict[int, np.ndarray] = {}
        for p, a in zip(f.params, args):
            env[id(p)] = a
            for dim, n in zip(p.struct_info.shape or (), np.shape(a)):
                if isinstance(dim, tir.Var):
                    sizes[id(dim)] = np.array(n, dtype=np.int64)

        def value(e: rx.Expr) -> object:
            if isinstance(e, rx.Var):
                return env[id(e)]
            if isinstance(e, rx.Constant):
                return e.data
            if isinstance(e, rx.Tuple):
                return tuple(value(x) for x in e.fields)
            if isinstance(e, rx.TupleGetItem):
                return value(e.tuple_value)[e.index]
            if isinstance(e, rx.PrimValue):
                return eval_expr(e.value, sizes, None)
            if isinstance(e, rx.ShapeExpr):  # allreduce's reduction code (issue 16)
                return tuple(int(eval_expr(v, sizes, None)) for v in e.values)
            assert isinstance(e, rx.Call), e
            if isinstance(e.op, rx.Op) and e.op.name == "relax.call_tir":
                return call_tir(e, value, sizes)
            if isinstance(e.op, rx.Op) and e.op.name == "relax.tensor_to_shape":
                return tuple(int(v) for v in np.asarray(value(e.args[0])).reshape(-1))
            if isinstance(e.op, rx.Op) and e.op.name == "relax.call_pure_packed":  # nonzero, unique (issue 16)
                out = get_func(e.args[0].global_symbol)(*(value(a) for a in e.args[1:]))
                return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()
            if isinstance(e.op, rx.Op) and e.op.name == "relax.call_dps_packed":  # R.ccl.* (issue 16)
                out = e.sinfo_args[0]
                dest = np.empty(tuple(int(eval_expr(d, sizes, None)) for d in out.shape), out.dtype)
                get_func(e.args[0].global_symbol)(*(value(a) for a in e.args[1].fields), dest)
                return dest
            if isinstance(e.op, rx.Op) and e.op.name == "relax.shape_of":  # R.size (issue 16)
                return tuple(np.shape(value(e.args[0])))
            if isinstance(e.op, rx.Op) and e.op.name == "relax.shape_to_tensor":
                return np.array(value(e.args[0]), dtype="int64").reshape(-1)
            return run_function(mod[e.op.name_hint], [value(a) for a in e.args])  # a module function

        for block in f.body.blocks:
            for b in block.bindings:
                env[id(b.var)] = value(b.value)
                if isinstance(b, rx.MatchCast) and isinstance(b.struct_info, rx.ShapeStructInfo):
                    for dim, n in zip(b.struct_info.values or (), env[id(b.var)]):  # names a computed shape
                        if isinstance(dim, tir.Var):
                            sizes[id(dim)] = np.array(n, dtype=np.int64)
        return value(f.body.body)

    run_function(mod[func], args)
    return compared


def _args_for(func: rx.Function, rng: np.random.Generator, n: int = 2) -> list[np.ndarray] | None:
    """Random arguments for a Relax function (symbolic dims are ``n``); None when a shape is unknown."""
    out = []
    for p in func.params:
        si = p.struct_info
        if si.shape is None:
            return None
        shape = [n if isinstance(d, tir.Var) else int(d.value) for d in si.shape]
        out.append(rng.standard_normal(shape).astype(si.dtype))
    return out


# The legacy texts use the MLP's weights as ``meta[relay.Constant][i]``.
_LEGACY_META = {"meta": {"relay.Constant": [np.full((128, 784), 0.01, "float32"), np.zeros(128, "float32"),
                                            np.full((10, 128), 0.01, "float32"), np.zeros(10, "float32")]}}
CORPUS_FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.py"))


def _corpus_module(name: str) -> IRModule | None:
    text = read_corpus(name)
    parsed = from_source(text, extra_vars=_LEGACY_META) if "meta[relay.Constant]" in text else from_source(text)
    return parsed if isinstance(parsed, IRModule) else IRModule.from_expr(parsed)


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_lowered_matches_evaluator(name):
    """Every PrimFunc of every corpus module after LegalizeOps: each lowering stage round-trips,
    and the lowered function computes what the original does."""
    mod = LegalizeOps()(_corpus_module(name))
    if not any(isinstance(f, tir.PrimFunc) for _, f in mod.functions_items()):
        pytest.skip("no PrimFunc")
    stages = lowered_stages(mod)
    for stage in stages:
        assert_round_trip(stage)
    low = stages[-1]
    rng = np.random.default_rng(0)
    compared: set[str] = set()
    for gv, f in mod.functions_items():
        args = _args_for(f, rng) if isinstance(f, rx.Function) else None
        if args is not None:
            compared.update(run_both(mod, low, args, gv.name_hint))
    # PrimFuncs no Relax function calls: run on random inputs (outputs are the buffers written).
    for gv, f in mod.functions_items():
        if isinstance(f, tir.PrimFunc) and gv.name_hint not in compared:
            _compare_prim_func(gv.name_hint, f, low[gv.name_hint], rng)


def _compare_prim_func(name: str, func: tir.PrimFunc, lowered: tir.PrimFunc, rng: np.random.Generator) -> None:
    written: set[tir.Buffer] = set()
    post_order_visit(func.body, lambda n: written.add(n.buffer) if isinstance(n, tir.BufferStore) else None)
    buffers = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    n_in = next((i for i, b in enumerate(buffers) if b in written), len(buffers))
    assert all(b in written for b in buffers[n_in:]), f"{name}: outputs are not the trailing parameters"
    inputs = [rng.standard_normal([int(d.value) for d in b.shape]).astype(b.dtype) for b in buffers[:n_in]]
    want = evaluate_prim_func(func, inputs)
    got = [np.zeros_like(w) for w in want]
    InterpreterExecutor(lowered).call(name, inputs + got)
    for g, w in zip(got, want):
        _close(g, w)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_op_lowered_matches_evaluator(name):
    """One module per registered op (test_legalize's cases), legalized, lowered, interpreted."""
    make, inputs, _ = CASES[name]
    mod = LegalizeOps()(build(make, params_for(inputs)))
    low = get_pipeline("lower")(mod)
    assert_round_trip(low)
    compared = run_both(mod, low, list(inputs))
    assert compared or not any(isinstance(f, tir.PrimFunc) for _, f in mod.functions_items())


F32 = np.random.default_rng(3).standard_normal((5, 3)).astype("float32")


@pytest.mark.parametrize("make, inputs, symbolic", [
    (op.add, [F32, F32[0]], {0: {0: "n"}}),
    (op.matmul, [F32, F32.T.copy()], {0: {0: "n"}, 1: {1: "m"}}),
    (lambda x: op.nn.softmax(x, axis=0), [F32], {0: {0: "n"}}),
    (lambda x: op.sum(x, axis=[0]), [F32], {0: {0: "n", 1: "m"}}),
    (lambda x: op.reshape(x, (-1,)), [F32], {0: {0: "n"}}),
    (op.permute_dims, [F32], {0: {0: "n", 1: "m"}}),
    (lambda x: op.nn.max_pool2d(x, pool_size=2, strides=2),
     [np.random.default_rng(4).standard_normal((1, 2, 6, 5)).astype("float32")], {0: {2: "h", 3: "w"}}),
    (lambda x, y: op.concat((x, y), axis=0), [F32, F32[:2]], {0: {0: "n"}, 1: {0: "k"}}),
])
def test_symbolic_shapes_lowered_match_evaluator(make, inputs, symbolic):
    mod = LegalizeOps()(build(make, params_for(inputs, symbolic)))
    low = get_pipeline("lower")(mod)
    assert_round_trip(low)
    assert run_both(mod, low, list(inputs))
