"""FuseOps: the seed corpus chain (hand-annotated and, once it exists, with AnnotateTIROpPattern),
each fusion rule of seed 002 as a small script, fuse_opt_level, relax.FuseOps.max_depth, and the
exact printed group functions."""
import re

import pytest

from tvmlite import passes as P
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.passes.fuse_ops import FuseOps
from tvmlite.passes.fuse_tir import FuseTIR
from tvmlite.script import from_source
from tvmlite.testing import assert_round_trip, check_transform

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)
HEADER = re.compile(r"^# from \S+ import \S+ as \S+$")

# The patterns AnnotateTIROpPattern gives the seed's PrimFuncs (the fused texts imply them:
# transpose stays alone with "op_pattern": 2, matmul + add (+ relu) fuse).
SEED_PATTERNS = {"transpose": 2, "matmul": 4, "add": 0, "relu": 0}


def body(text: str) -> str:
    """The text without its leading '# from ... import ...' lines."""
    lines = text.rstrip("\n").split("\n")
    while lines and HEADER.match(lines[0]):
        lines.pop(0)
    return "\n".join(lines).strip("\n") + "\n"


def relax_part(mod) -> str:
    """The printed Relax functions (everything from the first @R.function on)."""
    text = mod.script()
    return text[text.index("    @R.function"):].rstrip("\n") + "\n"


def annotated(name: str):
    """A legalized corpus module with the op_pattern attributes set by hand."""
    mod = from_source(read_corpus(name))
    for gv, func in mod.functions_items():
        if isinstance(func, tir.PrimFunc):
            base = gv.name_hint.rstrip("0123456789")
            mod[gv] = func.with_attr("op_pattern", SEED_PATTERNS[base])
    return mod


def fuse(text: str, **options):
    """FuseOps on a script under a PassContext with ``config``/``opt_level`` from ``options``."""
    config = options.pop("config", {})
    opt_level = options.pop("opt_level", 2)
    with P.PassContext(opt_level=opt_level, config=config):
        return FuseOps(**options)(from_source(text))


def groups(mod) -> dict:
    """name -> the op names inside each Primitive function."""
    out = {}
    for gv, func in mod.functions_items():
        if isinstance(func, rx.Function) and func.attrs.get("Primitive"):
            out[gv.name_hint] = [b.value.op.name for blk in func.body.blocks for b in blk.bindings]
    return out


# ---------------------------------------------------------------------------- the corpus
@pytest.mark.parametrize("src, want", [
    ("seed001_mlp_dynamic_legalized.py", "seed001_mlp_dynamic_fused.py"),
    ("seed004_mlp_torch_legalized.py", "seed004_mlp_torch_zero.py"),
])
def test_corpus_chain_hand_annotated(src, want):
    out = P.Sequential([FuseOps(), FuseTIR()])(annotated(src))
    assert body(out.script()) == body(read_corpus(want))
    assert_round_trip(out)


SEED001_GROUPS = '''    @R.function
    def forward(x: R.Tensor(("n", 784), dtype="float32"), fc1_weight: R.Tensor((128, 784), dtype="float32"), fc1_bias: R.Tensor((128,), dtype="float32"), fc2_weight: R.Tensor((10, 128), dtype="float32"), fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        R.func_attr({"num_input": 1})
        cls = Module
        with R.dataflow():
            permute_dims = R.call_tir(cls.transpose, (fc1_weight,), out_sinfo=R.Tensor((784, 128), dtype="float32"))
            lv: R.Tensor((n, 128), dtype="float32") = cls.fused_matmul_add_relu(x, permute_dims, fc1_bias)
            permute_dims1 = R.call_tir(cls.transpose1, (fc2_weight,), out_sinfo=R.Tensor((128, 10), dtype="float32"))
            gv: R.Tensor((n, 10), dtype="float32") = cls.fused_matmul1_add1(lv, permute_dims1, fc2_bias)
            R.output(gv)
        return gv

    @R.function(private=True)
    def fused_matmul1_add1(relu: R.Tensor(("n", 128), dtype="float32"), permute_dims1: R.Tensor((128, 10), dtype="float32"), fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            matmul1 = R.call_tir(cls.matmul1, (relu, permute_dims1), out_sinfo=R.Tensor((n, 10), dtype="float32"))
            gv = R.call_tir(cls.add1, (matmul1, fc2_bias), out_sinfo=R.Tensor((n, 10), dtype="float32"))
            R.output(gv)
        return gv

    @R.function(private=True)
    def fused_matmul_add_relu(x: R.Tensor(("n", 784), dtype="float32"), permute_dims: R.Tensor((784, 128), dtype="float32"), fc1_bias: R.Tensor((128,), dtype="float32")) -> R.Tensor(("n", 128), dtype="float32"):
        n = T.int64()
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            matmul = R.call_tir(cls.matmul, (x, permute_dims), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            add = R.call_tir(cls.add, (matmul, fc1_bias), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            gv = R.call_tir(cls.relu, (add,), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            R.output(gv)
        return gv
'''


def test_corpus_groups_printed_exactly():
    mod = annotated("seed001_mlp_dynamic_legalized.py")
    out = FuseOps()(mod)
    assert relax_part(out) == SEED001_GROUPS
    # The PrimFuncs stay (FuseTIR merges them); each group has its own symbolic n.
    assert [gv.name_hint for gv in mod.get_global_vars()] == [
        gv.name_hint for gv in out.get_global_vars() if gv.name_hint in mod]
    assert out["fused_matmul_add_relu"].params[0].struct_info.shape[0] is not \
        out["forward"].params[0].struct_info.shape[0]
    assert not well_formed_errors(out)
    assert_round_trip(out)


def test_corpus_without_patterns_fuses_nothing():
    # Without op_pattern every call_tir is opaque (TVM's default).
    mod = from_source(read_corpus("seed001_mlp_dynamic_legalized.py"))
    assert FuseOps()(mod).script() == mod.script()


def _annotate_pass():
    return getattr(P, "AnnotateTIROpPattern", None)


@pytest.mark.skipif(_annotate_pass() is None, reason="AnnotateTIROpPattern is not there yet")
@pytest.mark.parametrize("src, want", [
    ("seed001_mlp_dynamic_legalized.py", "seed001_mlp_dynamic_fused.py"),
    # The zero pipeline's other passes (LegalizeOps, FoldConstant) do nothing to this input.
    ("seed004_mlp_torch_legalized.py", "seed004_mlp_torch_zero.py"),
])
def test_corpus_chain_with_annotate_pass(src, want):
    mod = from_source(read_corpus(src))
    out = P.Sequential([P.AnnotateTIROpPattern(), FuseOps(), FuseTIR()])(mod)
    assert body(out.script()) == body(read_corpus(want))


@pytest.mark.skipif(not hasattr(P, "get_pipeline"), reason="the zero pipeline is not there yet")
def test_corpus_zero_pipeline():
    mod = from_source(read_corpus("seed004_mlp_torch_legalized.py"))
    out = P.get_pipeline("zero")(mod)
    assert body(out.script()) == body(read_corpus("seed004_mlp_torch_zero.py"))


# ---------------------------------------------------------------------------- the rules of seed 002
ELEMWISE_CHAIN = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            a = R.sigmoid(x)
            b = R.nn.relu(a)
            gv = R.exp(b)
            R.output(gv)
        return gv
'''

ELEMWISE_CHAIN_FUSED = '''
@I.ir_module
class Module:
    @R.function(private=True)
    def fused_sigmoid_nn_relu_exp(x: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((4, 8), dtype="float32"):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            a: R.Tensor((4, 8), dtype="float32") = R.sigmoid(x)
            b: R.Tensor((4, 8), dtype="float32") = R.nn.relu(a)
            gv: R.Tensor((4, 8), dtype="float32") = R.exp(b)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((4, 8), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((4, 8), dtype="float32") = cls.fused_sigmoid_nn_relu_exp(x)
            R.output(gv)
        return gv
'''


def test_rule1_elementwise_chain_fuses():
    out = check_transform(ELEMWISE_CHAIN, ELEMWISE_CHAIN_FUSED, FuseOps())
    assert body(out.script()) == body(ELEMWISE_CHAIN_FUSED).lstrip("\n")


MATMUL_ADD_RELU = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 16), "float32"), b: R.Tensor((16,), "float32")) -> R.Tensor((4, 16), "float32"):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv
'''


def test_rule2_matmul_then_elementwise_fuses():
    out = fuse(MATMUL_ADD_RELU)
    assert groups(out) == {"fused_matmul_add_nn_relu": ["relax.matmul", "relax.add", "relax.nn.relu"]}
    main = out["main"].body.blocks[0].bindings
    assert len(main) == 1 and main[0].var.name_hint == "gv"
    assert main[0].value.op.name_hint == "fused_matmul_add_nn_relu"
    assert [a.name_hint for a in main[0].value.args] == ["x", "w", "b"]


def test_rule3_injective_chain_fuses():
    out = fuse('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            lv = R.permute_dims(x)
            gv = R.reshape(lv, R.shape([2, 16]))
            R.output(gv)
        return gv
''')
    assert groups(out) == {"fused_permute_dims_reshape": ["relax.permute_dims", "relax.reshape"]}


def test_rule4_reduction_then_elementwise_fuses():
    out = fuse('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            lv = R.sum(x, axis=[1])
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv
''')
    assert groups(out) == {"fused_sum_nn_relu": ["relax.sum", "relax.nn.relu"]}


def test_elementwise_fuses_into_a_following_reduction():
    out = fuse('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            lv = R.exp(x)
            gv = R.sum(lv, axis=[1])
            R.output(gv)
        return gv
''')
    assert groups(out) == {"fused_exp_sum": ["relax.exp", "relax.sum"]}


def test_rule5_two_complex_ops_never_fuse():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            lv = R.matmul(x, w)
            gv = R.matmul(lv, w)
            R.output(gv)
        return gv
'''
    assert fuse(text).script() == from_source(text).script()
    # matmul + relu fuse, but the next matmul starts a new group; so do two reductions.
    out = fuse('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 8), "float32")) -> R.Tensor((1,), "float32"):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.nn.relu(lv)
            lv2 = R.matmul(lv1, w)
            lv3 = R.sum(lv2, axis=[1])
            lv4 = R.exp(lv3)
            gv = R.sum(lv4, axis=[0], keepdims=True)
            R.output(gv)
        return gv
''')
    assert groups(out) == {"fused_matmul_nn_relu": ["relax.matmul", "relax.nn.relu"],
                           "fused_sum_exp": ["relax.sum", "relax.exp"]}


def test_opaque_ops_and_calls_never_fuse():
    out = fuse('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            lv = R.nn.softmax(x)
            lv1 = R.exp(lv)
            gv = R.nn.softmax(lv1)
            R.output(gv)
        return gv
''')
    assert groups(out) == {}


# ---------------------------------------------------------------------------- seed 000's program
SEED000 = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), weight: R.Tensor((64, 64, 3, 3), "float32")) -> R.Tensor((1, 64, 54, 54), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, weight)
            y = R.add(conv, c1)
            z = R.add(y, c2)
            z1 = R.add(y, c2)
            gv = R.add(z, z1)
            R.output(gv)
        return gv
'''


def seed000():
    import numpy as np

    c1 = np.full((1, 64, 54, 54), 3.0, "float32")
    c2 = np.full((1, 64, 54, 54), 1.0, "float32")
    return from_source(SEED000, extra_vars={"c1": c1, "c2": c2})


def test_fuse_opt_level_0_makes_one_function_per_op():
    out = FuseOps(fuse_opt_level=0)(seed000())
    calls = [b.value for b in out["main"].body.blocks[0].bindings]
    assert len(calls) == 5
    for call in calls:
        func = out[call.op]
        assert func.attrs["Primitive"] is True
        assert len(func.body.blocks[0].bindings) == 1  # one op each
    # Identical one-op functions are shared (as TVM's BlockBuilder deduplicates them).
    assert groups(out) == {"fused_nn_conv2d": ["relax.nn.conv2d"], "fused_add": ["relax.add"]}
    # The constants were lifted to parameters.
    assert [p.name_hint for p in out["fused_add"].params] == ["conv", "param_0"]


def test_fuse_opt_level_2_fuses_conv2d_with_the_adds():
    out = FuseOps(fuse_opt_level=2)(seed000())
    assert groups(out) == {"fused_nn_conv2d_add_add_add_add": ["relax.nn.conv2d"] + ["relax.add"] * 4}
    (call,) = [b.value for b in out["main"].body.blocks[0].bindings]
    assert isinstance(call.args[2], rx.Constant) and isinstance(call.args[3], rx.Constant)
    assert [p.name_hint for p in out[call.op].params] == ["x", "weight", "param_0", "param_1"]


def test_fuse_opt_level_defaults_to_the_pass_context():
    with P.PassContext(opt_level=0):
        level0 = FuseOps()(seed000())
    assert set(groups(level0)) == {"fused_nn_conv2d", "fused_add"}
    assert set(groups(FuseOps()(seed000()))) == {"fused_nn_conv2d_add_add_add_add"}


# ---------------------------------------------------------------------------- max_depth
CHAIN5 = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            a = R.exp(x)
            b = R.nn.relu(a)
            c = R.sigmoid(b)
            d = R.tanh(c)
            gv = R.negative(d)
            R.output(gv)
        return gv
'''


@pytest.mark.parametrize("depth, expected", [
    (1, {}),
    (2, {"fused_exp_nn_relu": 2, "fused_sigmoid_tanh": 2}),
    (3, {"fused_exp_nn_relu_sigmoid": 3, "fused_tanh_negative": 2}),
    (256, {"fused_exp_nn_relu_sigmoid_tanh_negative": 5}),
])
def test_max_depth_limits_group_size(depth, expected):
    out = fuse(CHAIN5, config={"relax.FuseOps.max_depth": depth})
    assert {name: len(ops) for name, ops in groups(out).items()} == expected


def test_max_depth_must_be_positive():
    with pytest.raises(P.PassError, match="max_depth"):
        fuse(CHAIN5, config={"relax.FuseOps.max_depth": 0})


# ---------------------------------------------------------------------------- details
def test_intermediate_used_twice_is_fused_with_its_users():
    out = fuse('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            a = R.exp(x)
            b = R.nn.relu(a)
            c = R.sigmoid(a)
            gv = R.add(b, c)
            R.output(gv)
        return gv
''')
    assert groups(out) == {"fused_exp_nn_relu_sigmoid_add": ["relax.exp", "relax.nn.relu", "relax.sigmoid",
                                                             "relax.add"]}


def test_block_output_in_the_middle_of_a_chain():
    # gv1 leaves the block: it ends a group (it is the group's result) and starts no other.
    out = fuse('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tuple(R.Tensor((4, 8), "float32"), R.Tensor((4, 8), "float32")):
        with R.dataflow():
            a = R.exp(x)
            gv1 = R.nn.relu(a)
            b = R.sigmoid(gv1)
            gv2 = R.tanh(b)
            R.output(gv1, gv2)
        return (gv1, gv2)
''')
    assert groups(out) == {"fused_exp_nn_relu": ["relax.exp", "relax.nn.relu"],
                           "fused_sigmoid_tanh": ["relax.sigmoid", "relax.tanh"]}
    bindings = out["main"].body.blocks[0].bindings
    assert [b.var.name_hint for b in bindings] == ["gv", "gv1"]
    assert not any(isinstance(b.var, rx.DataflowVar) for b in bindings)
    assert not well_formed_errors(out)


def test_match_cast_value_is_not_fused_through():
    out = fuse('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            a = R.exp(x)
            b = R.nn.relu(a)
            c = R.add(a, b)
            m = R.match_cast(a, R.Tensor((4, 8), "float32"))
            gv = R.add(c, m)
            R.output(gv)
        return gv
''')
    assert groups(out) == {"fused_nn_relu_add_add": ["relax.nn.relu", "relax.add", "relax.add"]}
    assert not well_formed_errors(out)


def test_only_dataflow_blocks_are_fused():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        a = R.exp(x)
        gv = R.nn.relu(a)
        return gv
'''
    assert fuse(text).script() == from_source(text).script()


def test_pass_options_registry_and_stats():
    assert str(FuseOps(fuse_opt_level=2)) == "FuseOps{fuse_opt_level=2}"
    assert FuseOps().info.opt_level == 0
    assert isinstance(P.get_pass("FuseOps", fuse_opt_level=1), FuseOps)
    with P.PassContext() as ctx:
        FuseOps()(seed000())
    assert ctx.stats["FuseOps"]["fused_groups"] == 1
