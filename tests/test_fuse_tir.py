"""FuseTIR: each Primitive group becomes one PrimFunc (parameters, intermediate buffers, block
names as TVM names them), called with R.call_tir; unused functions disappear."""
import re

import pytest

from tvmlite import passes as P
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.functor import post_order_visit
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.passes.fuse_ops import FuseOps
from tvmlite.passes.fuse_tir import FuseTIR, fuse_primitive
from tvmlite.script import from_source
from tvmlite.testing import assert_round_trip

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)
HEADER = re.compile(r"^# from \S+ import \S+ as \S+$")


def body(text: str) -> str:
    """The text without its leading '# from ... import ...' lines."""
    lines = text.rstrip("\n").split("\n")
    while lines and HEADER.match(lines[0]):
        lines.pop(0)
    return "\n".join(lines).strip("\n") + "\n"


def fused(text: str):
    """FuseOps then FuseTIR on a script (verified after each pass); the result re-parses equal."""
    out = P.Sequential([FuseOps(), FuseTIR()])(from_source(text))
    assert_round_trip(out)
    return out


EXP_ADD = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def exp(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), compute: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        T.func_attr({"op_pattern": 0, "tir.noalias": True})
        for i0, i1 in T.grid(T.int64(4), T.int64(8)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[v_i0, v_i1])
                T.writes(compute[v_i0, v_i1])
                compute[v_i0, v_i1] = T.exp(A[v_i0, v_i1])

    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), B: T.Buffer((T.int64(4), T.int64(8)), "float32"), T_add: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        T.func_attr({"op_pattern": 0, "tir.noalias": True})
        for ax0, ax1 in T.grid(T.int64(4), T.int64(8)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1], B[v_ax0, v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[v_ax0, v_ax1]

    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((4, 8), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4, 8), dtype="float32"))
            lv1 = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((4, 8), dtype="float32"))
            gv = R.call_tir(cls.add, (lv1, lv1), out_sinfo=R.Tensor((4, 8), dtype="float32"))
            R.output(gv)
        return gv
'''

EXP_ADD_FUSED = '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fused_exp_exp_add(x: T.Buffer((T.int64(4), T.int64(8)), "float32"), T_add_intermediate: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        compute_intermediate = T.alloc_buffer((T.int64(4), T.int64(8)))
        compute_intermediate_1 = T.alloc_buffer((T.int64(4), T.int64(8)))
        for i0, i1 in T.grid(T.int64(4), T.int64(8)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(x[v_i0, v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.exp(x[v_i0, v_i1])
        for i0, i1 in T.grid(T.int64(4), T.int64(8)):
            with T.block("compute_1"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(compute_intermediate[v_i0, v_i1])
                T.writes(compute_intermediate_1[v_i0, v_i1])
                compute_intermediate_1[v_i0, v_i1] = T.exp(compute_intermediate[v_i0, v_i1])
        for ax0, ax1 in T.grid(T.int64(4), T.int64(8)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(compute_intermediate_1[v_ax0, v_ax1])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = compute_intermediate_1[v_ax0, v_ax1] + compute_intermediate_1[v_ax0, v_ax1]

    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((4, 8), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused_exp_exp_add, (x,), out_sinfo=R.Tensor((4, 8), dtype="float32"))
            R.output(gv)
        return gv
'''


def test_one_primfunc_per_group_printed_exactly():
    # The same PrimFunc twice: fresh loop/block variables, "compute_1", "compute_intermediate_1";
    # add(lv1, lv1) reads one buffer, listed once in T.reads.
    out = fused(EXP_ADD)
    assert body(out.script()) == EXP_ADD_FUSED
    assert not well_formed_errors(out)


def test_unused_functions_are_removed_and_used_ones_kept():
    # exp is opaque (no op_pattern): it stays, attributes and all; add is only called from the
    # group now, and "unused" by nobody: both go, as after TVM's FuseTIR (which ends with DCE).
    text = EXP_ADD.replace('"op_pattern": 0, "tir.noalias"', '"tir.noalias"', 1).replace(
        """            lv1 = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((4, 8), dtype="float32"))
            gv = R.call_tir(cls.add, (lv1, lv1), out_sinfo=R.Tensor((4, 8), dtype="float32"))""",
        """            lv1 = R.call_tir(cls.add, (lv, lv), out_sinfo=R.Tensor((4, 8), dtype="float32"))
            gv = R.call_tir(cls.add, (lv1, x), out_sinfo=R.Tensor((4, 8), dtype="float32"))""").replace(
        "    @R.function", """    @T.prim_func(private=True)
    def unused(A: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("zero"):
                vi = T.axis.spatial(T.int64(4), i)
                A[vi] = T.float32(0.0)

    @R.function""")
    out = fused(text)
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["exp", "fused_add_add", "main"]
    assert out["exp"].attrs == {"tir.noalias": True}
    calls = [b.value.args[0].name_hint for b in out["main"].body.blocks[0].bindings]
    assert calls == ["exp", "fused_add_add"]


SYMBOLIC = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def tile(var_A: T.handle, var_B: T.handle, m: T.int64):
        T.func_attr({"op_pattern": 2, "tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(var_A, (n,))
        B = T.match_buffer(var_B, (m,))
        for i in range(m):
            with T.block("B"):
                vi = T.axis.spatial(m, i)
                B[vi] = A[vi % n]

    @T.prim_func(private=True)
    def exp(var_A: T.handle, var_B: T.handle):
        T.func_attr({"op_pattern": 0, "tir.noalias": True})
        k = T.int64()
        A = T.match_buffer(var_A, (k,))
        B = T.match_buffer(var_B, (k,))
        for i in range(k):
            with T.block("compute"):
                vi = T.axis.spatial(k, i)
                B[vi] = T.exp(A[vi])

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32"), s: R.Shape(["m"])) -> R.Tensor(("m",), dtype="float32"):
        n = T.int64()
        m = T.int64()
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.tile, (x,), out_sinfo=R.Tensor((m,), dtype="float32"), tir_vars=R.shape([m]))
            gv = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((m,), dtype="float32"))
            R.output(gv)
        return gv
'''

SYMBOLIC_FUSED = '''    @T.prim_func(private=True)
    def fused_tile_exp(p_x: T.handle, p_output0: T.handle, m: T.int64):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        x = T.match_buffer(p_x, (n,))
        B_intermediate_1 = T.match_buffer(p_output0, (m,))
        # with T.block("root"):
        B_intermediate = T.alloc_buffer((m,))
        for i in range(m):
            with T.block("B"):
                vi = T.axis.spatial(m, i)
                T.reads(x[vi % n])
                T.writes(B_intermediate[vi])
                B_intermediate[vi] = x[vi % n]
        for i in range(m):
            with T.block("compute"):
                vi = T.axis.spatial(m, i)
                T.reads(B_intermediate[vi])
                T.writes(B_intermediate_1[vi])
                B_intermediate_1[vi] = T.exp(B_intermediate[vi])

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32"), s: R.Shape(["m"])) -> R.Tensor(("m",), dtype="float32"):
        m = T.int64()
        n = T.int64()
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused_tile_exp, (x,), out_sinfo=R.Tensor((m,), dtype="float32"), tir_vars=R.shape([m]))
            R.output(gv)
        return gv
'''


def test_symbolic_shapes_and_tir_vars():
    # m is defined by no tensor parameter: the group takes it as a shape (tir_vars), the PrimFunc
    # as a trailing scalar parameter; the callees' own n, k and m become the caller's.
    grouped = FuseOps()(from_source(SYMBOLIC))
    group = grouped["fused_tile_exp"]
    assert [p.name_hint for p in group.params] == ["x", "tir_vars"]
    out = fused(SYMBOLIC)
    text = out.script()
    assert text[text.index("    @T.prim_func"):].rstrip("\n") + "\n" == SYMBOLIC_FUSED


TUPLES = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def split2(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), L: T.Buffer((T.int64(4), T.int64(4)), "float32"), R_: T.Buffer((T.int64(4), T.int64(4)), "float32")):
        T.func_attr({"op_pattern": 2, "tir.noalias": True})
        for i, j in T.grid(T.int64(4), T.int64(4)):
            with T.block("left"):
                vi, vj = T.axis.remap("SS", [i, j])
                L[vi, vj] = A[vi, vj]
        for i, j in T.grid(T.int64(4), T.int64(4)):
            with T.block("right"):
                vi, vj = T.axis.remap("SS", [i, j])
                R_[vi, vj] = A[vi, vj + T.int64(4)]

    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(4), T.int64(4)), "float32"), B: T.Buffer((T.int64(4), T.int64(4)), "float32"), T_add: T.Buffer((T.int64(4), T.int64(4)), "float32")):
        T.func_attr({"op_pattern": 0, "tir.noalias": True})
        for ax0, ax1 in T.grid(T.int64(4), T.int64(4)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_add[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[v_ax0, v_ax1]

    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((4, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            t = R.call_tir(cls.split2, (x,), out_sinfo=[R.Tensor((4, 4), dtype="float32"), R.Tensor((4, 4), dtype="float32")])
            a = t[0]
            b = t[1]
            gv = R.call_tir(cls.add, (a, b), out_sinfo=R.Tensor((4, 4), dtype="float32"))
            R.output(gv)
        return gv
'''


def test_call_tir_with_two_results_inside_a_group():
    out = fused(TUPLES)
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["fused_split2_add", "main"]
    func = out["fused_split2_add"]
    root = func.body.block
    assert [b.name for b in root.alloc_buffers] == ["L_intermediate", "R__intermediate"]
    assert [func.buffer_map[p].name for p in func.params] == ["x", "T_add_intermediate"]
    add_block = root.body.seq[-1].body.body.block
    assert [r.buffer.name for r in add_block.reads] == ["L_intermediate", "R__intermediate"]


def test_tuple_parameter_used_item_by_item_is_split():
    # split2 without a pattern is opaque: the group is t[0], t[1], add; its parameters are the items.
    text = TUPLES.replace('"op_pattern": 2, ', "")
    grouped = FuseOps()(from_source(text))
    assert [p.name_hint for p in grouped["fused_add"].params] == ["t_0", "t_1"]
    out = fused(text)
    func = out["fused_add"]
    assert [func.buffer_map[p].name for p in func.params] == ["t_0", "t_1", "T_add_intermediate"]
    main = out["main"].body.blocks[0].bindings
    assert [type(b.value).__name__ for b in main] == ["Call", "TupleGetItem", "TupleGetItem", "Call"]


def test_groups_of_plain_op_calls_stay_relax_functions():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            a = R.exp(x)
            gv = R.nn.relu(a)
            R.output(gv)
        return gv
'''
    grouped = FuseOps()(from_source(text))
    assert fuse_primitive(grouped, grouped.get_global_var("fused_exp_nn_relu")) is None
    assert FuseTIR()(grouped).script() == grouped.script()


def test_parameter_buffer_and_block_names():
    out = fused(read_corpus("seed001_mlp_dynamic_legalized.py").replace(
        'T.func_attr({"tir.noalias": True})', 'T.func_attr({"op_pattern": 0, "tir.noalias": True})'))
    # Everything annotated elementwise: the whole chain is one group. Handles are p_<name>, buffers
    # keep the Relax parameter names, the result is the last callee's output + "_intermediate".
    func = out["fused_transpose_matmul_add_relu_transpose1_matmul1_add1"]
    names = [(p.name, func.buffer_map[p].name) for p in func.params]
    assert names == [("p_fc1_weight", "fc1_weight"), ("p_x", "x"), ("p_fc1_bias", "fc1_bias"),
                     ("p_fc2_weight", "fc2_weight"), ("p_fc2_bias", "fc2_bias"),
                     ("p_output0", "T_add_intermediate_1")]
    assert func.attrs == {"tir.noalias": True}
    blocks: list = []
    post_order_visit(func.body.block.body, lambda n: blocks.append(n.name_hint) if isinstance(n, tir.Block) else None)
    assert blocks == ["T_transpose", "matmul", "T_add", "compute", "T_transpose_1", "matmul_1", "T_add_1"]


def test_pass_registered_and_counts():
    assert isinstance(P.get_pass("FuseTIR"), FuseTIR)
    with P.PassContext() as ctx:
        FuseTIR()(FuseOps()(from_source(EXP_ADD)))
    assert ctx.stats["FuseTIR"]["fused_functions"] == 1
    assert not any(isinstance(f, rx.Function) and f.attrs.get("Primitive")
                   for f in fused(TUPLES).functions.values())


@pytest.mark.parametrize("name", ["seed001_mlp_dynamic_legalized.py", "seed004_mlp_torch_legalized.py"])
def test_without_groups_nothing_changes(name):
    mod = from_source(read_corpus(name))
    assert FuseTIR()(mod).script() == mod.script()
