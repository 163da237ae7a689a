"""FoldConstant: seed 000's constant arithmetic, call_tir of module PrimFuncs, transitive chains
through ops and call_tir, every legalized op against numpy, shape literals, and what stays: calls
with a parameter input, ops outside dataflow blocks, unknown shapes, tuple results, impure
calls, what the evaluator cannot run and results above ``relax.FoldConstant.max_elements``."""
import pathlib
import sys

import numpy as np
import pytest

from tvmlite import passes as P
from tvmlite import relax
from tvmlite.ir import relax as rx
from tvmlite.ir import structural_equal
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.passes.fold_constant import MAX_ELEMENTS_CONFIG, FoldConstant
from tvmlite.script import from_source

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from seed_programs import SEED000  # noqa: E402
from test_legalize import CASES, _close  # noqa: E402  (one op table for LegalizeOps and FoldConstant)

rng = np.random.default_rng(11)


def fold(text: str, config: dict | None = None, **constants: np.ndarray) -> tuple[rx.Function, P.PassContext]:
    """The module of ``text`` (names bound to ``constants``) after FoldConstant, and its context."""
    mod = from_source(text, extra_vars=constants)
    with P.PassContext(config=config or {}) as ctx:
        out = P.Sequential([FoldConstant()])(mod)
    assert well_formed_errors(out) == []
    return out, ctx


def constants(func: rx.Function) -> list[np.ndarray]:
    """The tensor constants of a function, in printing order (``metadata[...][i]``)."""
    found: list[np.ndarray] = []
    relax.analysis.post_order_visit(
        func, lambda e: found.append(e.data) if isinstance(e, rx.Constant) and e.data.ndim and not any(
            e.data is f for f in found) else None)
    return found


# ---------------------------------------------------------------- seed 000


# As the tutorial's Relay output: `(c + c) * 2` is one constant (metadata 0), `c` the other.
SEED000_FOLDED = '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), dtype="float32"), weight: R.Tensor((64, 64, 3, 3), dtype="float32")) -> R.Tensor((1, 64, 54, 54), dtype="float32"):
        with R.dataflow():
            conv: R.Tensor((1, 64, 54, 54), dtype="float32") = R.nn.conv2d(x, weight, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="void")
            y2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(conv, metadata["relax.expr.Constant"][0])
            z: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(y2, metadata["relax.expr.Constant"][1])
            z1: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(y2, metadata["relax.expr.Constant"][1])
            z2: R.Tensor((1, 64, 54, 54), dtype="float32") = R.add(z, z1)
            R.output(z2)
        return z2

# Metadata omitted. Use show_meta=True in script() method to show it.'''


def test_seed000_constant_arithmetic_folds():
    c = rng.random((1, 64, 54, 54), dtype="float32")
    out, ctx = fold(SEED000, c=c)
    assert out.script() == SEED000_FOLDED
    folded, kept = constants(out["main"])
    np.testing.assert_array_equal(folded, (c + c) * np.float32(2))
    np.testing.assert_array_equal(kept, c)
    assert ctx.stats["FoldConstant"]["folded"] == 2  # the add and the multiply


# ---------------------------------------------------------------- call_tir and chains
ADDONE = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def addone(A: T.Buffer((T.int64(2), T.int64(3)), "float32"), B: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        for i, j in T.grid(T.int64(2), T.int64(3)):
            with T.block("addone"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)

    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.addone, (c0,), out_sinfo=R.Tensor((2, 3), "float32"))
            lv1 = R.call_tir(cls.addone, (lv,), out_sinfo=R.Tensor((2, 3), "float32"))
            lv2 = R.multiply(lv1, R.const(2, "float32"))
            lv3 = R.call_tir(cls.addone, (lv2,), out_sinfo=R.Tensor((2, 3), "float32"))
            gv = R.add(x, lv3)
            R.output(gv)
        return gv
'''

ADDONE_PRIM_FUNC = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def addone(A: T.Buffer((T.int64(2), T.int64(3)), "float32"), B: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        # with T.block("root"):
        for i, j in T.grid(T.int64(2), T.int64(3)):
            with T.block("addone"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] + T.float32(1.0)
'''

# The chain call_tir -> call_tir -> op -> call_tir is one constant; the PrimFunc stays (as TVM's
# FoldConstant, a function pass; FuseTIR or DeadCodeElimination remove it).
ADDONE_FOLDED = ADDONE_PRIM_FUNC + '''
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((2, 3), dtype="float32") = R.add(x, metadata["relax.expr.Constant"][0])
            R.output(gv)
        return gv

# Metadata omitted. Use show_meta=True in script() method to show it.'''


def test_call_tir_chains_fold_transitively():
    c0 = np.arange(6, dtype="float32").reshape(2, 3)
    out, ctx = fold(ADDONE, c0=c0)
    assert out.script() == ADDONE_FOLDED
    (value,) = constants(out["main"])
    np.testing.assert_array_equal(value, (c0 + 1 + 1) * 2 + 1)
    assert ctx.stats["FoldConstant"]["folded"] == 4


_PRIM, _MAIN = ADDONE.split("    @R.function")
OUTSIDE_DATAFLOW = _PRIM + "    @R.function" + _MAIN.replace("        with R.dataflow():\n", "").replace(
    "        R.output(gv)\n", "").replace("\n            ", "\n        ")

# Outside a dataflow block call_tir still folds, ops do not (as TVM): the chain stops at multiply.
OUTSIDE_DATAFLOW_FOLDED = ADDONE_PRIM_FUNC + """
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        lv2: R.Tensor((2, 3), dtype="float32") = R.multiply(metadata["relax.expr.Constant"][0], R.const(2.0, "float32"))
        lv3 = R.call_tir(cls.addone, (lv2,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
        gv: R.Tensor((2, 3), dtype="float32") = R.add(x, lv3)
        return gv

# Metadata omitted. Use show_meta=True in script() method to show it."""


def test_ops_fold_only_inside_dataflow_blocks():
    c0 = np.arange(6, dtype="float32").reshape(2, 3)
    out, ctx = fold(OUTSIDE_DATAFLOW, c0=c0)
    assert out.script() == OUTSIDE_DATAFLOW_FOLDED
    (value,) = constants(out["main"])
    np.testing.assert_array_equal(value, c0 + 2)
    assert ctx.stats["FoldConstant"]["folded"] == 2


SYMBOLIC = """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def addone(a: T.handle, b: T.handle):
        n, m = T.int64(), T.int64()
        A = T.match_buffer(a, (n, m))
        B = T.match_buffer(b, (n, m))
        for i, j in T.grid(n, m):
            with T.block("addone"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)

    @R.function
    def main(x: R.Tensor(("n", 3), "float32")) -> R.Tuple(R.Tensor(("n", 3), "float32"), R.Tensor((2, 3), "float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.addone, (x,), out_sinfo=R.Tensor((n, 3), "float32"))
            lv1 = R.call_tir(cls.addone, (c0,), out_sinfo=R.Tensor((2, 3), "float32"))
            lv2 = R.add(lv, lv)
            gv = (lv2, lv1)
            R.output(gv)
        return gv
"""

SYMBOLIC_FOLDED = """# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def addone(a: T.handle, b: T.handle):
        n, m = T.int64(), T.int64()
        A = T.match_buffer(a, (n, m))
        B = T.match_buffer(b, (n, m))
        # with T.block("root"):
        for i, j in T.grid(n, m):
            with T.block("addone"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] + T.float32(1.0)

    @R.function
    def main(x: R.Tensor(("n", 3), dtype="float32")) -> R.Tuple(R.Tensor(("n", 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.addone, (x,), out_sinfo=R.Tensor((n, 3), dtype="float32"))
            lv2: R.Tensor((n, 3), dtype="float32") = R.add(lv, lv)
            gv: R.Tuple(R.Tensor((n, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")) = lv2, metadata["relax.expr.Constant"][0]
            R.output(gv)
        return gv

# Metadata omitted. Use show_meta=True in script() method to show it."""


def test_symbolic_prim_func_folds_on_constants_and_unknown_shapes_stay():
    # A PrimFunc with symbolic sizes runs on constants (its sizes come from their shapes); the call on
    # `x` (size n) and the add of its result stay.
    c0 = rng.random((2, 3), dtype="float32")
    out, _ = fold(SYMBOLIC, c0=c0)
    assert out.script() == SYMBOLIC_FOLDED
    np.testing.assert_array_equal(constants(out["main"])[0], c0 + 1)


def test_int32_values():
    text = """
@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((3,), "int32"):
        with R.dataflow():
            lv = R.multiply(c0, c0)
            gv = R.floor_divide(lv, R.const(4, "int32"))
            R.output(gv)
        return gv
"""
    c0 = np.array([-7, 3, 9], "int32")
    out, _ = fold(text, c0=c0)
    (value,) = constants(out["main"])
    assert value.dtype == np.int32
    np.testing.assert_array_equal(value, (c0 * c0) // 4)
    assert isinstance(out["main"].body.body, rx.Constant)


def test_tir_vars_give_the_scalar_parameters():
    text = """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def shift(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32"), k: T.int64):
        for i in range(T.int64(4)):
            with T.block("shift"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = A[vi] + T.Cast("float32", k)

    @R.function
    def main() -> R.Tensor((4,), "float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.shift, (c0,), out_sinfo=R.Tensor((4,), "float32"), tir_vars=R.shape([3]))
            R.output(gv)
        return gv
"""
    out, _ = fold(text, c0=np.arange(4, dtype="float32"))
    np.testing.assert_array_equal(out["main"].body.body.data, np.arange(4, dtype="float32") + 3)


# ---------------------------------------------------------------- what stays
WITH_PARAMETERS = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32")) -> R.Tensor((2, 4), "float32"):
        with R.dataflow():
            lv = R.add(x, c0)
            lv1 = R.matmul(lv, w)
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv
"""


def test_nothing_folds_when_an_input_is_a_parameter():
    mod = from_source(WITH_PARAMETERS, extra_vars={"c0": np.ones((2, 3), "float32")})
    with P.PassContext() as ctx:
        out = P.Sequential([FoldConstant()])(mod)
    assert out["main"] is mod["main"]  # not even rebuilt
    assert ctx.stats["FoldConstant"]["folded"] == 0


def test_creation_ops_fold_from_shapes_alone():
    # As in TVM: zeros_like only needs its input's (known) shape, so it folds although `lv` is computed.
    text = WITH_PARAMETERS.replace("gv = R.nn.relu(lv1)", "lv2 = R.zeros_like(lv1)\n            gv = R.add(lv1, lv2)")
    out, _ = fold(text, c0=np.ones((2, 3), "float32"))
    assert out["main"].script() == """# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((2, 3), dtype="float32"), w: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
    with R.dataflow():
        lv: R.Tensor((2, 3), dtype="float32") = R.add(x, metadata["relax.expr.Constant"][0])
        lv1: R.Tensor((2, 4), dtype="float32") = R.matmul(lv, w, out_dtype="void")
        gv: R.Tensor((2, 4), dtype="float32") = R.add(lv1, metadata["relax.expr.Constant"][1])
        R.output(gv)
    return gv

# Metadata omitted. Use show_meta=True in script() method to show it."""
    np.testing.assert_array_equal(constants(out["main"])[1], np.zeros((2, 4), "float32"))


def test_a_call_reading_a_runtime_value_is_not_legalized(monkeypatch):
    """Only calls whose read inputs are all constants are legalized to be evaluated: a matmul of a
    parameter never reaches its (costly) legalization; collapse_sum_like only reads its target's
    shape, so it folds beside a computed target."""
    from tvmlite.ir.op import get_op_def

    def refuse(bb, call):
        raise AssertionError(f"{call.op.name} was legalized although an input is a parameter")

    monkeypatch.setattr(get_op_def("relax.matmul"), "legalize", refuse)
    text = WITH_PARAMETERS.replace("gv = R.nn.relu(lv1)", "lv2 = R.collapse_sum_like(c1, lv1)\n            gv = R.add(lv1, lv2)")
    out, ctx = fold(text, c0=np.ones((2, 3), "float32"), c1=np.ones((3, 2, 4), "float32"))
    assert ctx.stats["FoldConstant"]["folded"] == 1  # collapse_sum_like only
    np.testing.assert_array_equal(constants(out["main"])[-1], np.full((2, 4), 3, "float32"))


def test_impure_calls_and_unused_bindings():
    # R.print has effects and stays; an unused pure binding goes (TVM's RemoveAllUnused), even unfolded.
    text = """
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        unused = R.add(c0, c0)
        R.print(c0, format="{}")
        with R.dataflow():
            d = R.multiply(c0, c0)
            gv = R.add(d, x)
            R.output(gv)
        return gv
"""
    out, _ = fold(text, c0=np.full(2, 3, "float32"))
    assert out.script() == """# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        R.print(metadata["relax.expr.Constant"][0], format=R.str("{}"))
        with R.dataflow():
            gv: R.Tensor((2,), dtype="float32") = R.add(metadata["relax.expr.Constant"][1], x)
            R.output(gv)
        return gv

# Metadata omitted. Use show_meta=True in script() method to show it."""
    np.testing.assert_array_equal(constants(out["main"])[1], np.full(2, 9, "float32"))


UNEVALUABLE = """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def ext(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("ext"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = T.call_extern("float32", "my_erf", A[vi])

    @T.prim_func(private=True)
    def two(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32"), C: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("two"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = A[vi]
                C[vi] = A[vi]

    @R.function
    def main() -> R.Tuple(R.Tensor((4,), "float32"), R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32"))):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.ext, (c0,), out_sinfo=R.Tensor((4,), "float32"))
            lv1 = R.call_tir(cls.two, (c0,), out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
            gv = (lv, lv1)
            R.output(gv)
        return gv
"""


def test_extern_calls_and_tuple_results_stay():
    # An intrinsic the evaluator does not know stays a call (TVM skips what it cannot build), and so
    # does a call_tir with several outputs (TVM folds single tensors only).
    mod = from_source(UNEVALUABLE, extra_vars={"c0": np.arange(4, dtype="float32")})
    with P.PassContext() as ctx:
        out = P.Sequential([FoldConstant()])(mod)
    assert out.script() == mod.script()
    assert dict(ctx.stats["FoldConstant"]) == {"not_evaluated": 1}


@pytest.mark.parametrize("limit, folded", [(6, 4), (5, 0)])
def test_max_elements_limits_the_results(limit, folded):
    out, ctx = fold(ADDONE, config={MAX_ELEMENTS_CONFIG: limit}, c0=np.zeros((2, 3), "float32"))
    assert ctx.stats["FoldConstant"]["folded"] == folded
    assert (out.script() == ADDONE_FOLDED) == bool(folded)


def test_max_elements_limits_the_evaluation_grid():
    # A (1, 8) x (8, 4) matmul has 4 results but 32 iterations of its reduction block.
    text = """
@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((1, 4), "float32"):
        with R.dataflow():
            gv = R.matmul(a, b)
            R.output(gv)
        return gv
"""
    a, b = rng.random((1, 8), dtype="float32"), rng.random((8, 4), dtype="float32")
    small, ctx = fold(text, config={MAX_ELEMENTS_CONFIG: 31}, a=a, b=b)
    assert ctx.stats["FoldConstant"] == {"too_large": 1}
    assert not isinstance(small["main"].body.body, rx.Constant)
    big, _ = fold(text, config={MAX_ELEMENTS_CONFIG: 32}, a=a, b=b)
    np.testing.assert_allclose(big["main"].body.body.data, a @ b, rtol=1e-6)


# ---------------------------------------------------------------- shapes
def test_shape_literals_replace_their_variables():
    text = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tensor((4, 2), "float32"):
        with R.dataflow():
            s = R.shape([4, 2])
            gv = R.reshape(x, s)
            R.output(gv)
        return gv
"""
    out, _ = fold(text)
    assert out.script() == """# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((4, 2), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((4, 2), dtype="float32") = R.reshape(x, R.shape([4, 2]))
            R.output(gv)
        return gv"""


def test_shape_ops_on_constants_fold():
    text = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 2), "float32")) -> R.Tensor((3, 2), "float32"):
        with R.dataflow():
            lv = R.permute_dims(c0)
            lv1 = R.reshape(lv, R.shape([6]))
            lv2 = R.strided_slice(lv1, [0], [1], [7], [2])
            lv3 = R.broadcast_to(lv2, R.shape([2, 3]))
            lv4 = R.permute_dims(lv3)
            gv = R.add(x, lv4)
            R.output(gv)
        return gv
"""
    c0 = np.arange(6, dtype="float32").reshape(2, 3)
    out, ctx = fold(text, c0=c0)
    assert ctx.stats["FoldConstant"]["folded"] == 5
    (value,) = constants(out["main"])
    np.testing.assert_array_equal(value, np.broadcast_to(c0.T.reshape(6)[1:7:2], (2, 3)).T)


# ---------------------------------------------------------------- every legalized op
def _constant_module(make, inputs):
    """``main()`` computing ``make`` on the inputs as constants, in a dataflow block."""
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            out = bb.emit_output(make(*[relax.const(a) for a in inputs]))
        bb.emit_func_output(out)
    return bb.get()


# As TVM: tuple results are not folded, and arange's legalization is a constant already (LegalizeOps
# puts it in place; FoldConstant folds call_tir results only).
NOT_FOLDED = {"split", "nn.batch_norm", "arange",
              "grad.no_grad"}  # legalizes to its input, not to a call_tir: TVM leaves it unfolded too
NOT_FOLDED |= {"meshgrid"}  # a tuple of grids
NOT_FOLDED |= {"topk", "median",  # issue 16: their results over one axis are tuples
               "nonzero", "unique"}  # packed calls of the runtime, not call_tir
NOT_FOLDED |= {"ccl.allreduce", "ccl.allgather", "ccl.broadcast_from_worker0",  # runtime.disco calls
               "ccl.scatter_from_worker0"}
NOT_FOLDED |= {"size"}  # legalized to R.shape_of, R.shape_to_tensor and R.prod, not to one call_tir (as TVM's)
NOT_FOLDED |= {"vision.get_valid_counts", "vision.non_max_suppression",  # issue 16: tuple results
               "vision.all_class_non_max_suppression", "vision.multibox_transform_loc"}
# The checkpoint marks take a variable (TVM's rule), so they cannot be written on constants.
ON_VARIABLES_ONLY = {"grad.start_checkpoint", "grad.end_checkpoint"}
# Its bounds must be int64 (TVM's rule), and relax.const makes int32 constants of int64 data.
ON_VARIABLES_ONLY |= {"dynamic_strided_slice"}


@pytest.mark.parametrize("name", sorted(set(CASES) - ON_VARIABLES_ONLY))
def test_every_legalized_op_folds_like_numpy(name):
    make, inputs, ref = CASES[name]
    mod = _constant_module(make, inputs)
    out = FoldConstant()(mod)
    result = out["main"].body.body
    if name in NOT_FOLDED:
        assert isinstance(result, rx.Var)
        return
    assert isinstance(result, rx.Constant) and not out["main"].body.blocks
    _close(result.data, ref(*inputs))
    assert structural_equal(result.struct_info, mod["main"].ret_struct_info)  # the op's dtype and shape


# ---------------------------------------------------------------- the pass
def test_registered_opt_level_and_idempotent():
    assert isinstance(P.get_pass("FoldConstant"), FoldConstant)
    assert str(FoldConstant()) == "FoldConstant" and FoldConstant().info.opt_level == 2
    mod = from_source(ADDONE, extra_vars={"c0": np.zeros((2, 3), "float32")})
    with P.PassContext(opt_level=1):
        assert P.Sequential([FoldConstant()])(mod).script() == mod.script()  # skipped below level 2
    once = FoldConstant()(mod)
    assert FoldConstant()(once)["main"] is once["main"]
