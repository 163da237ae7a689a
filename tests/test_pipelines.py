"""Named pipelines: the zero pipeline byte for byte on the seed corpus (from the legalized MLP and
from the imported one), the default pipeline on every corpus text, ``get_pipeline`` errors, the
pipeline names in textual pipelines and ``tvmlite opt``, and FuseTIR dropping the PrimFuncs that
FoldConstant left unused (as TVM's FuseTIR, which ends with DeadCodeElimination)."""
import pathlib
import re
import sys

import numpy as np
import pytest

from tvmlite import passes as P
from tvmlite.cli import main
from tvmlite.ir.module import IRModule
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.script import from_source
from tvmlite.testing import text_diff

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from legalize_util import run  # noqa: E402
from test_legalize import _conv2d  # noqa: E402

from corpus_files import CORPUS_DIR as CORPUS, read_corpus  # noqa: E402  (tests/data/corpus)
HEADER = re.compile(r"^# from \S+ import \S+ as \S+$")
TEXTS = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.py"))
# The legacy MLP texts refer to four constants they do not carry: the two dense layers' weights and biases.
META = {"relay.Constant": [np.full((128, 784), 0.01, "float32"), np.zeros(128, "float32"),
                           np.full((10, 128), 0.02, "float32"), np.zeros(10, "float32")]}



def body(text: str) -> str:
    """The text without its '# from X import Y as Z' header lines."""
    lines = text.rstrip("\n").split("\n")
    while lines and HEADER.match(lines[0]):
        lines.pop(0)
    return "\n".join(lines).strip("\n") + "\n"


def load(name: str) -> IRModule:
    """A corpus text as a module (a lone function becomes ``main`` of one)."""
    parsed = from_source(read_corpus(name), extra_vars={"meta": META})
    return parsed if isinstance(parsed, IRModule) else IRModule.from_expr(parsed)


# ---------------------------------------------------------------- zero
@pytest.mark.parametrize("src", ["seed004_mlp_torch_legalized.py", "seed004_mlp_torch.py"])
def test_zero_pipeline_gives_the_seed_text(src):
    # Seed 004 applies the zero pipeline after LegalizeOps; LegalizeOps a second time changes nothing.
    out = P.get_pipeline("zero")(load(src))
    want = read_corpus("seed004_mlp_torch_zero.py")
    assert body(out.script()) == body(want), text_diff(body(want), body(out.script()))


def test_zero_pipeline_passes():
    seq = P.get_pipeline("zero")
    assert isinstance(seq, P.Sequential)
    assert [p.info.name for p in seq.passes] == ["LegalizeOps", "AnnotateTIROpPattern", "FoldConstant", "FuseOps",
                                                 "FuseTIR"]
    assert P.get_pipeline().info.name == "zero"


ADDONE = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def addone(A: T.Buffer((T.int64(2), T.int64(2)), "float32"), B: T.Buffer((T.int64(2), T.int64(2)), "float32")):
        for i, j in T.grid(T.int64(2), T.int64(2)):
            with T.block("addone"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)

    @R.function
    def main(x: R.Tensor((2, 2), "float32")) -> R.Tensor((2, 2), "float32"):
        cls = Module
        lv = R.call_tir(cls.addone, (c0,), out_sinfo=R.Tensor((2, 2), "float32"))
        gv = R.add(lv, x)
        return gv
'''


def test_zero_pipeline_drops_the_prim_funcs_folding_left_unused():
    # Regression: FuseTIR returned early when nothing was fused, keeping `addone`, whose only call
    # FoldConstant had folded. TVM's FuseTIR ends with DeadCodeElimination in every case.
    mod = from_source(ADDONE, extra_vars={"c0": np.zeros((2, 2), "float32")})
    assert "addone" in P.FoldConstant()(mod)  # FoldConstant itself keeps it, as TVM's
    out = P.get_pipeline("zero")(mod)
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["add", "main"]
    assert "addone" not in P.FuseTIR()(P.FoldConstant()(mod))


# ---------------------------------------------------------------- default
def test_default_pipeline_passes():
    assert str(P.Sequential(P.get_pipeline("default").passes)) == (
        "CanonicalizeBindings,SimplifyInference,PackConv2d,FoldConstant,FoldScaleAxis,WinogradConv2d,EliminateCommonSubexpr,"
        "DeadCodeElimination,LegalizeOps,AnnotateTIROpPattern,FoldConstant,FuseOps,FuseTIR,Simplify,DeadCodeElimination")


@pytest.mark.parametrize("opt_level", [2, 3])
@pytest.mark.parametrize("name", TEXTS)
def test_default_pipeline_on_every_corpus_text(name, opt_level):
    mod = load(name)
    with P.PassContext(opt_level=opt_level):  # the Sequential verifies every pass's output too
        out = P.get_pipeline("default")(mod)
    assert well_formed_errors(out) == []
    assert from_source(out.script(show_meta=True)).script() == out.script()  # prints and parses back


def test_default_pipeline_computes_what_the_input_computes():
    mod = load("seed004_mlp_torch.py")
    rng = np.random.default_rng(4)
    args = [rng.standard_normal([d.value for d in p.struct_info.shape]).astype("float32") for p in mod["main"].params]
    want = run(P.LegalizeOps()(mod), args)
    out = P.get_pipeline("default")(mod)
    assert all(b.value.op.name == "relax.call_tir" for b in out["main"].body.blocks[0].bindings)
    np.testing.assert_allclose(run(out, args), want, rtol=1e-5, atol=1e-5)


def test_default_pipeline_folds_batch_norm_parameters():
    # Seed 002's conv + batch_norm + relu with constant statistics: SimplifyInference and FoldConstant
    # leave two constants (scale and shift), and one fused PrimFunc computes everything.
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 6, 6), "float32"), w: R.Tensor((4, 4, 3, 3), "float32")):
        with R.dataflow():
            conv = R.nn.conv2d(x, w, padding=[1, 1])
            bn = R.nn.batch_norm(conv, gamma, beta, mean, var, axis=1)
            gv = R.nn.relu(bn[0])
            R.output(gv)
        return gv
'''
    rng = np.random.default_rng(2)
    params = {n: rng.standard_normal(4).astype("float32") for n in ("gamma", "beta", "mean")}
    params["var"] = rng.random(4).astype("float32") + 0.5
    mod = from_source(text, extra_vars=params)
    out = P.get_pipeline("default")(mod)
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["fused_conv2d_multiply_add_relu", "main"]
    (call,) = [b.value for b in out["main"].body.blocks[0].bindings]
    assert [type(a).__name__ for a in call.args[1].fields] == ["Var", "Var", "Constant", "Constant"]
    x, w = rng.standard_normal((1, 4, 6, 6)).astype("float32"), rng.standard_normal((4, 4, 3, 3)).astype("float32")
    c = [params[n][None, :, None, None] for n in ("gamma", "beta", "mean", "var")]
    want = np.maximum((_conv2d(x, w, pad=(1, 1, 1, 1)) - c[2]) / np.sqrt(c[3] + 1e-5) * c[0] + c[1], 0)
    np.testing.assert_allclose(run(out, [x, w]), want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- names
def test_unknown_pipeline_lists_the_pipelines():
    with pytest.raises(P.PipelineError, match=r"unknown pipeline 'fast' \(pipelines: zero, default, lower, default_tir, vm_lower\)"):
        P.get_pipeline("fast")
    with pytest.raises(ValueError):  # PipelineError is a ValueError, as TVM's error
        P.get_pipeline("")


def test_pipeline_names_in_textual_pipelines():
    assert str(P.get_pipeline("zero")) == "zero" and str(P.get_pipeline("default")) == "default"
    spec = "zero,DeadCodeElimination"
    seq = P.parse_pipeline(spec)
    assert str(seq) == spec
    assert [p.info.name for p in seq.passes[0].passes] == [p.info.name for p in P.get_pipeline("zero").passes]
    assert "zero" in P.list_passes() and "default" in P.list_passes()
    with pytest.raises(P.PipelineError, match="has no option"):
        P.parse_pipeline("zero{level=1}")


def test_disabled_pass_inside_a_pipeline():
    mod = load("seed004_mlp_torch_legalized.py")
    with P.PassContext(disabled_pass=["FuseOps"]):
        out = P.get_pipeline("zero")(mod)
    assert not any(gv.name_hint.startswith("fused_") for gv in out.get_global_vars())


def test_tvmlite_opt_runs_a_named_pipeline(capsys):
    assert main(["opt", str(CORPUS / "seed004_mlp_torch_legalized.py"), "--passes", "zero"]) == 0
    printed = capsys.readouterr().out
    want = read_corpus("seed004_mlp_torch_zero.py")
    assert body(printed) == body(want)
