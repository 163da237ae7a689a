"""The pass infrastructure: PassInfo, passes and decorators as the seeds use them, PassContext
gating, required passes, the registry, statistics, input immutability, and the two real passes
(DeadCodeElimination, ToNonDataflow)."""
import tempfile
import threading

import numpy as np
import pytest

from tvmlite import passes as P
from tvmlite.ir import IRModule, Mutator, post_order_visit, structural_equal
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.node import replace
from tvmlite.ir.op import make_call
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.script import from_source

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)

SMALL = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def zero(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0.0)

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            lv = R.nn.relu(x)
            lv1 = R.multiply(lv, R.const(2.0, "float32"))
            gv = R.add(lv1, x)
            R.output(gv)
        return gv
'''

HEADER = "# from tvmlite.script import ir as I\n# from tvmlite.script import tir as T\n" \
         "# from tvmlite.script import relax as R\n\n@I.ir_module\nclass Module:\n"
ZERO = '''    @T.prim_func(private=True)
    def zero(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0.0)

'''


@pytest.fixture(autouse=True)
def _reproducers_in_tmp_path(tmp_path, monkeypatch):
    """Reproducers of failing passes default to a new temp dir: keep them in the test's tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def small():
    return from_source(SMALL)


def ops_of(func):
    """Names of the ops called in ``func``, in post order."""
    names = []
    post_order_visit(func, lambda n: names.append(n.op.name)
                     if isinstance(n, rx.Call) and isinstance(n.op, rx.Op) else None)
    return names


# ==================================================================== PassInfo
def test_pass_info_prints_as_tvm():
    assert str(P.PassInfo("FoldConstant", 2)) == \
        "The meta data of the pass - pass name: FoldConstant, opt_level: 2, required passes: []\n"
    assert str(P.PassInfo("EliminateCommonSubexpr", 3, ["InferType"])) == \
        ("The meta data of the pass - pass name: EliminateCommonSubexpr, opt_level: 3, "
         "required passes: [\nInferType, ]\n")


def test_pass_info_accepts_tvm_argument_order():
    info = P.PassInfo(3, "EliminateCommonSubexpr", ["InferType"])
    assert (info.name, info.opt_level, info.required) == ("EliminateCommonSubexpr", 3, ("InferType",))


# ==================================================================== calling passes
def test_pass_returns_new_module_and_leaves_input_alone():
    mod = small()
    before = mod.script()

    @P.module_pass(opt_level=2, name="MyCustomPass")
    class MyCustomPass:
        """Updates the module in place, as seed 002's MyCustomPass does."""

        def transform_module(self, mod, ctx):
            for gvar, func in mod.functions.items():
                if isinstance(func, rx.Function):
                    mod.update_func(gvar, func.with_attr("optimized", True))
            return mod

    out = MyCustomPass()(mod)
    assert out is not mod
    assert mod.script() == before
    assert out["main"].attrs["optimized"] is True
    assert "optimized" not in mod["main"].attrs


def test_pass_that_mutates_its_real_input_is_caught():
    mod = small()
    original_main = mod["main"]

    @P.module_pass
    def sneaky(m, ctx):
        mod.update_func(mod.get_global_var("main"), original_main.with_attr("x", 1))  # the caller's module
        return m

    with pytest.raises(P.PassError, match='pass "sneaky" failed: RuntimeError: the pass changed its input module'):
        sneaky(mod)


def test_pass_must_return_a_module():
    @P.module_pass(name="ReturnsFunction")
    def returns_function(mod, ctx):
        return mod["main"]

    with pytest.raises(P.PassError, match='pass "ReturnsFunction" failed: TypeError: transform returned Function'):
        returns_function(small())


def test_pass_error_names_pass_chains_cause_and_keeps_input(tmp_path):
    mod = small()
    text = mod.script()

    @P.function_pass(opt_level=0)
    def explode(func, mod, ctx):
        raise ZeroDivisionError("boom")

    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError) as info:
            P.Sequential([P.ToNonDataflow(), explode])(mod)
    err = info.value
    assert err.pass_name == "explode"
    assert str(err).startswith('pass "explode" failed: ZeroDivisionError: boom\n')
    assert isinstance(err.__cause__, ZeroDivisionError)
    assert mod.script() == text
    # The reproducer holds the module the failing pass was given (after ToNonDataflow).
    assert "with R.dataflow()" not in err.module.script()


# ==================================================================== decorators, as the seeds use them
class ReluRewriter(Mutator):
    """Seed 001's ReluRewriter, written with the generic Mutator."""

    def visit_call_(self, call):
        if isinstance(call.op, rx.Op) and call.op.name == "relax.nn.relu":
            return make_call("relax.nn.gelu", (self.visit(call.args[0]),))
        return self.generic_visit(call)


@P.module_pass(opt_level=0, name="ReluToGelu")
class ReluToGelu:  # pylint: disable=too-few-public-methods
    def transform_module(self, mod, _ctx):
        """IRModule-level transformation"""
        rewriter = ReluRewriter()
        for g_var, func in mod.functions_items():
            if isinstance(func, rx.Function):
                mod.update_func(g_var, rewriter.visit(func))
        return mod


def _tvmlite_header(text):
    return text.replace("# from tvm.script import", "# from tvmlite.script import")


def test_seed001_relu_to_gelu_module_pass_on_a_class():
    origin_mod = from_source(read_corpus("seed001_mlp_dynamic.py"))
    pass_ = ReluToGelu()
    assert isinstance(pass_, P.ModulePass)
    assert (pass_.info.name, pass_.info.opt_level) == ("ReluToGelu", 0)
    mod = pass_(origin_mod)
    expected = _tvmlite_header(read_corpus("seed001_mlp_dynamic_gelu.py"))
    assert mod.script() + "\n" == expected
    assert "R.nn.relu(add)" in origin_mod.script()


def test_seed000_custom_pipeline_function_pass_with_init_arguments():
    @P.function_pass(opt_level=1)
    class CustomPipeline:
        """Simple test function to replace one argument to another."""

        def __init__(self, multiplier):
            self.multiplier = multiplier

        # This function can define a pass.
        def transform_function(self, func, mod, ctx):
            obj = self

            class ReplaceConstant(Mutator):
                def visit_constant_(self, c):
                    return make_call("relax.multiply", (obj.multiplier, c))

            return ReplaceConstant().visit(func)

    mod = small()
    custom_pass = CustomPipeline(multiplier=rx.Constant(np.array(3, "float32")))
    assert custom_pass.info.name == "CustomPipeline"
    assert custom_pass.info.opt_level == 1
    assert isinstance(custom_pass, P.FunctionPass)
    assert custom_pass.multiplier.data == 3  # attributes of the wrapped instance are reachable
    assert CustomPipeline.__doc__ == "Simple test function to replace one argument to another."
    mod3 = custom_pass(mod)
    assert ('lv1: R.Tensor((2, 3), dtype="float32") = '
            'R.multiply(lv, R.multiply(R.const(3.0, "float32"), R.const(2.0, "float32")))') in mod3.script()
    assert mod3["zero"] is mod["zero"]  # PrimFuncs are not given to a function pass


def test_seed002_count_and_report_in_a_sequential(capsys):
    reports = []

    @P.function_pass(opt_level=1)
    class ReluReplacer:
        """Replace nn.relu with clip(0, inf) — a custom pass example."""

        def transform_function(self, func, mod, ctx):
            class Replacer(Mutator):
                def visit_call_(self, call):
                    call = self.generic_visit(call)
                    if isinstance(call.op, rx.Op) and call.op.name == "relax.nn.relu":
                        return make_call("relax.clip", (call.args[0], rx.PrimValue(tir.FloatImm("float64", 0.0)),
                                                         rx.PrimValue(tir.FloatImm("float64", float("inf")))))
                    return call

            return Replacer().visit(func)

    @P.function_pass(opt_level=1)
    class CountAndReport:
        """Report statistics about each function (analysis pass)."""

        def transform_function(self, func, mod, ctx):
            op_counts = {}

            def count(node):
                if isinstance(node, rx.Call) and isinstance(node.op, rx.Op):
                    name = node.op.name
                    op_counts[name] = op_counts.get(name, 0) + 1

            post_order_visit(func, count)
            total = sum(op_counts.values())
            print(f" Function has {total} ops: {dict(op_counts)}")
            reports.append(op_counts)
            return func  # analysis only — return unchanged

    pipeline = P.Sequential([CountAndReport(), ReluReplacer(), CountAndReport()])
    with P.PassContext(opt_level=3):
        out = pipeline(small())
    assert reports == [{"relax.nn.relu": 1, "relax.multiply": 1, "relax.add": 1},
                       {"relax.clip": 1, "relax.multiply": 1, "relax.add": 1}]
    assert capsys.readouterr().out == (
        " Function has 3 ops: {'relax.nn.relu': 1, 'relax.multiply': 1, 'relax.add': 1}\n"
        " Function has 3 ops: {'relax.clip': 1, 'relax.multiply': 1, 'relax.add': 1}\n")
    assert "R.clip(x, R.prim_value(T.float64(0.0)), R.prim_value(T.float64(" in out.script()


def test_module_pass_on_functions_with_and_without_arguments():
    @P.module_pass
    def bare(mod, ctx):
        return mod.with_attr("bare", True)

    @P.module_pass(opt_level=3, name="Named", required=["ToNonDataflow"])
    def named(mod, ctx):
        return mod

    assert isinstance(bare, P.ModulePass)
    assert (bare.info.name, bare.info.opt_level, bare.info.required) == ("bare", 0, ())
    assert (named.info.name, named.info.opt_level, named.info.required) == ("Named", 3, ("ToNonDataflow",))
    assert bare(small()).attrs["bare"] is True
    direct = P.module_pass(lambda mod, ctx: mod, opt_level=2, name="Direct")
    assert (direct.info.name, direct.info.opt_level) == ("Direct", 2)


def test_function_pass_on_a_function_and_removal_by_none():
    @P.function_pass(opt_level=1)
    def tag(func, mod, ctx):
        return func.with_attr("tagged", 1)

    out = tag(small())
    assert out["main"].attrs["tagged"] == 1
    assert "tagged" not in out["zero"].attrs  # a PrimFunc: not visited by a function pass

    @P.prim_func_pass
    def drop(func, mod, ctx):
        return None

    assert [gv.name_hint for gv in drop(small()).get_global_vars()] == ["main"]


def test_prim_func_pass_on_a_class():
    @P.prim_func_pass(opt_level=0, name="AddNoAlias")
    class AddNoAlias:
        def __init__(self, value=True):
            self.value = value

        def transform_function(self, func, mod, ctx):
            self.stats["functions"] += 1
            return replace(func, attrs=func.attrs.set("tir.noalias", self.value))

    p = AddNoAlias()
    assert isinstance(p, P.PrimFuncPass) and p.info.name == "AddNoAlias"
    out = p(small())
    assert out["zero"].attrs["tir.noalias"] is True
    assert 'T.func_attr({"tir.noalias": True})' in out.script()
    assert "tir.noalias" not in out["main"].attrs
    assert p.stats["functions"] == 1


def test_decorator_rejects_class_without_transform_method():
    with pytest.raises(TypeError, match="must define transform_module"):
        @P.module_pass(opt_level=0)
        class Nothing:
            pass


# ==================================================================== gating and required passes
def _recorder(log, name, opt_level, required=()):
    @P.module_pass(opt_level=opt_level, name=name, required=required)
    def run(mod, ctx):
        log.append(name)
        return mod

    return run


def test_opt_level_gating_required_and_disabled():
    log = []
    seq = P.Sequential([_recorder(log, "L1", 1), _recorder(log, "L2", 2), _recorder(log, "L3", 3)])
    seq(small())
    assert log == ["L1", "L2"]  # default context: opt_level 2

    log.clear()
    with P.PassContext(opt_level=3):
        seq(small())
    assert log == ["L1", "L2", "L3"]

    log.clear()
    with P.PassContext(opt_level=1, required_pass=["L3"]):
        seq(small())
    assert log == ["L1", "L3"]

    log.clear()
    with P.PassContext(opt_level=3, required_pass=["L2"], disabled_pass=["L2", "L1"]):
        seq(small())
    assert log == ["L3"]


def test_single_pass_runs_whatever_its_opt_level():
    log = []
    _recorder(log, "High", 4)(small())
    assert log == ["High"]


def test_required_passes_run_first_by_registered_name():
    log = []
    P.register_pass("RecordedRequirement", lambda: _recorder(log, "RecordedRequirement", 3), override=True)
    seq = P.Sequential([_recorder(log, "A", 0, required=["RecordedRequirement"]), _recorder(log, "B", 0),
                        _recorder(log, "C", 0, required=["RecordedRequirement"])])
    seq(small())
    # Required passes run even above the opt level (as TVM's Sequential does).
    assert log == ["RecordedRequirement", "A", "B", "RecordedRequirement", "C"]


def test_unregistered_required_pass_is_a_clear_error():
    seq = P.Sequential([_recorder([], "Needy", 0, required=["NoSuchPass"])])
    with pytest.raises(P.PassError, match='pass "Needy" requires "NoSuchPass", which is not a registered pass '
                                          r"\(registered: .*DeadCodeElimination"):
        seq(small())


def test_sequential_rejects_non_passes():
    with pytest.raises(TypeError, match="Sequential takes Pass objects, got function"):
        P.Sequential([lambda mod: mod])


# ==================================================================== PassContext
def test_pass_context_current_is_a_thread_local_stack():
    default = P.PassContext.current()
    assert default.opt_level == 2 and P.PassContext.current() is default
    seen = []
    with P.PassContext(opt_level=3, config={"relax.FuseOps.max_depth": 5}) as outer:
        assert P.PassContext.current() is outer
        with P.PassContext(opt_level=1) as inner:
            assert P.PassContext.current() is inner
            thread = threading.Thread(target=lambda: seen.append(P.PassContext.current().opt_level))
            thread.start()
            thread.join()
        assert P.PassContext.current() is outer
        assert outer.config["relax.FuseOps.max_depth"] == 5
    assert P.PassContext.current() is default
    assert seen == [2]  # another thread does not see this thread's contexts


def test_pass_sees_the_current_context():
    seen = []

    @P.module_pass
    def look(mod, ctx):
        seen.append((ctx.opt_level, ctx.config.get("relax.FuseOps.max_depth")))
        return mod

    with P.PassContext(opt_level=3, config={"relax.FuseOps.max_depth": 5}):
        look(small())
    assert seen == [(3, 5)]


# ==================================================================== statistics
def test_statistics_from_self_stats_and_ctx_stats():
    @P.module_pass(name="Counting")
    class Counting:
        def transform_module(self, mod, ctx):
            self.stats["functions"] += len(mod)
            return mod

    @P.module_pass(name="FnCounting")
    def fn_counting(mod, ctx):
        ctx.stats["FnCounting"]["calls"] += 1
        return mod

    counting = Counting()
    with P.PassContext() as ctx:
        P.Sequential([counting, fn_counting, counting])(small())
    assert dict(ctx.stats["Counting"]) == {"functions": 4}
    assert dict(ctx.stats["FnCounting"]) == {"calls": 1}
    assert counting.stats["functions"] == 4
    assert P.render_statistics(ctx.stats) == \
        "pass statistics:\n  Counting: functions=4\n  FnCounting: calls=1"


# ==================================================================== PrintIR, registry, str
def test_print_ir_prints_and_returns_module_unchanged(capsys):
    mod = small()
    out = P.Sequential([P.PrintIR("after nothing")])(mod)
    assert capsys.readouterr().out == "# ---- after nothing ----\n" + mod.script() + "\n"
    assert out["main"] is mod["main"]
    assert P.PrintIR().info.name == "PrintIR" and str(P.PrintIR()) == "PrintIR"


def test_registry_lists_builds_and_checks_options():
    assert {"DeadCodeElimination", "ToNonDataflow", "PrintIR"} <= set(P.list_passes())
    dce = P.get_pass("DeadCodeElimination", entry_functions="main")
    assert isinstance(dce, P.DeadCodeElimination) and dce.entry_functions == ["main"]
    assert str(dce) == "DeadCodeElimination{entry_functions=main}"
    with pytest.raises(P.PipelineError, match=r"unknown pass 'Nope' \(registered passes: .*ToNonDataflow"):
        P.get_pass("Nope")
    with pytest.raises(P.PipelineError, match=r"pass PrintIR has no option 'head' \(options: header\)"):
        P.get_pass("PrintIR", head="x")
    with pytest.raises(P.PipelineError, match=r"option header of PrintIR expects a str \(default \"\"\), got 3"):
        P.get_pass("PrintIR", header=3)
    with pytest.raises(ValueError, match="already registered"):
        P.register_pass("PrintIR", P.DeadCodeElimination)


def test_str_of_passes_shows_options_in_given_order():
    assert str(P.ToNonDataflow()) == "ToNonDataflow"
    assert str(P.PrintIR(header="x y")) == 'PrintIR{header="x y"}'
    seq = P.Sequential([P.ToNonDataflow(), P.Sequential([P.PrintIR("a"), P.DeadCodeElimination()])])
    assert str(seq) == "ToNonDataflow,PrintIR{header=a},DeadCodeElimination"

    @P.module_pass(name="Opts")
    class Opts:
        def __init__(self, b=1, a=False):
            self.b, self.a = b, a

        def transform_module(self, mod, ctx):
            return mod

    assert str(Opts(a=True, b=2)) == "Opts{a=true,b=2}"
    assert str(Opts(3)) == "Opts{b=3}"


# ==================================================================== DeadCodeElimination
DCE_INPUT = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def unused_tir(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0.0)

    @R.function(private=True)
    def helper(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        y = R.nn.relu(x)
        return y

    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), dtype="float32"), c: R.Tensor((), dtype="bool")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        dead = cls.helper(x)
        a = R.add(x, x)
        b = R.multiply(a, a)
        p = R.print(x, format="{}")
        if c:
            t = R.add(x, x)
            u = R.nn.relu(x)
            r = t
        else:
            r = x
        m = R.match_cast(r, R.Tensor(("k", 3), dtype="float32"))
        m2 = R.match_cast(r, R.Tensor((2, 3), dtype="float32"))
        return r
'''

DCE_EXPECTED = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), dtype="float32"), c: R.Tensor((), dtype="bool")) -> R.Tensor((2, 3), dtype="float32"):
        k = T.int64()
        R.print(x, format=R.str("{}"))
        if c:
            t: R.Tensor((2, 3), dtype="float32") = R.add(x, x)
            r: R.Tensor((2, 3), dtype="float32") = t
        else:
            r: R.Tensor((2, 3), dtype="float32") = x
        m: R.Tensor((k, 3), dtype="float32") = R.match_cast(r, R.Tensor((k, 3), dtype="float32"))
        return r'''


def test_dead_code_elimination():
    mod = from_source(DCE_INPUT)
    dce = P.DeadCodeElimination()
    with P.PassContext() as ctx:
        out = P.Sequential([dce])(mod)
    # Removed: the chain a -> b, u in a branch, the call of helper (then helper itself, only
    # reachable through it), the unused PrimFunc, and the match_cast defining nothing new.
    # Kept: the impure print and the match_cast that defines k.
    assert out.script() == DCE_EXPECTED
    assert dict(ctx.stats["DeadCodeElimination"]) == {"removed_bindings": 5, "removed_functions": 2}
    assert len(mod) == 3


def test_dead_code_elimination_entry_functions_and_dataflow_outputs():
    mod = small()
    out = P.DeadCodeElimination(entry_functions=["zero"])(mod)
    assert [gv.name_hint for gv in out.get_global_vars()] == ["zero", "main"]
    assert P.DeadCodeElimination()(mod).get_global_vars()[0].name_hint == "main"

    unused_output = from_source('''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
    with R.dataflow():
        lv = R.nn.relu(x)
        gv = R.add(lv, lv)
        other = R.exp(x)
        R.output(gv, other)
    return gv
''')
    out = P.DeadCodeElimination()(IRModule.from_expr(unused_output))
    assert ops_of(out["main"]) == ["relax.nn.relu", "relax.add"]
    assert well_formed_errors(out) == []


def test_dead_code_elimination_leaves_live_code_alone():
    mod = small()
    out = P.DeadCodeElimination(entry_functions=["zero"])(mod)
    assert out["main"] is mod["main"] and out["zero"] is mod["zero"]


# ==================================================================== ToNonDataflow
TO_NON_DATAFLOW_EXPECTED = HEADER + ZERO + '''    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
        lv1: R.Tensor((2, 3), dtype="float32") = R.multiply(lv, R.const(2.0, "float32"))
        gv: R.Tensor((2, 3), dtype="float32") = R.add(lv1, x)
        return gv'''


def test_to_non_dataflow():
    mod = small()
    out = P.ToNonDataflow()(mod)
    assert out.script() == TO_NON_DATAFLOW_EXPECTED
    block = out["main"].body.blocks[0]
    assert type(block) is rx.BindingBlock
    assert all(type(b.var) is rx.Var for b in block.bindings)
    # Each DataflowVar became one Var, used at every former use.
    lv = block.bindings[0].var
    assert block.bindings[1].value.args[0] is lv
    assert well_formed_errors(out) == []
    assert type(mod["main"].body.blocks[0]) is rx.DataflowBlock
    # Running it again changes nothing.
    again = P.ToNonDataflow()(out)
    assert again["main"] is out["main"]
    assert structural_equal(again, out)
