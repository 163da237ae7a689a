"""Relax ExprVisitor / ExprMutator: the seeds' rewriters (001 ReluRewriter, 003 EwiseFMARewriter
and DenseAddFusor, 002 ReluReplacer), re-normalisation, remove_all_unused, post_order_visit and
source locations kept through rewriting."""
import textwrap

import numpy as np
import pytest

from tvmlite import relax
from tvmlite.ir import get_op, structural_equal
from tvmlite.ir.node import Span
from tvmlite.relax.expr_functor import PyExprMutator, PyExprVisitor, mutator, visitor
from tvmlite.script import from_source, parse_file

from corpus_files import CORPUS_DIR as CORPUS, read_corpus  # noqa: E402  (tests/data/corpus)


def body(text: str) -> str:
    """Printed text without the ``# from ... import ...`` header lines (they name the printer)."""
    return "\n".join(line for line in text.strip("\n").split("\n") if not line.startswith("# from ")).strip("\n")


# ------------------------------------------------------------------ seed 001
@mutator
class ReluRewriter(PyExprMutator):
    def __init__(self, mod):
        super().__init__(mod)

    def visit_call_(self, call: relax.Call) -> relax.Expr:
        # visit the relax.Call expr, and only handle the case when op is relax.nn.relu
        if call.op.name == "relax.nn.relu":
            return relax.op.nn.gelu(call.args[0])
        return super().visit_call_(call)


def relu_to_gelu(mod):
    """The body of seed 001's ReluToGelu module pass."""
    rewriter = ReluRewriter(mod)
    for g_var, func in mod.functions_items():
        if isinstance(func, relax.Function):
            func = rewriter.visit_expr(func)
            rewriter.builder_.update_func(g_var, func)
    return rewriter.builder_.get()


def test_seed001_relu_rewriter_gives_the_gelu_text():
    mod = parse_file(CORPUS / "seed001_mlp_dynamic.py")
    out = relu_to_gelu(mod)
    assert body(out.script()) == body(read_corpus("seed001_mlp_dynamic_gelu.py"))
    assert structural_equal(out, parse_file(CORPUS / "seed001_mlp_dynamic_gelu.py"))


def test_seed001_input_module_is_unchanged_and_untouched_bindings_are_shared():
    mod = parse_file(CORPUS / "seed001_mlp_dynamic.py")
    before = mod.script()
    out = relu_to_gelu(mod)
    assert mod.script() == before
    old, new = mod["forward"], out["forward"]
    assert new is not old
    # Only the relu binding changed; its variable keeps its struct info, so it is the same Var.
    old_b, new_b = old.body.blocks[0].bindings, new.body.blocks[0].bindings
    assert [a is b for a, b in zip(old_b, new_b)] == [True, True, True, False, True, True, True, True]
    assert new_b[3].var is old_b[3].var
    assert new.span == old.span and new.span is not None  # the function keeps its location


def test_mutator_without_changes_returns_the_same_function():
    mod = parse_file(CORPUS / "seed001_mlp_dynamic_legalized.py")
    mutator_ = relax.ExprMutator(mod)
    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            assert mutator_.visit_expr(func) is func


# ------------------------------------------------------------------ seed 003
MY_MODULE = '''
@I.ir_module
class MyModule:
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv0 = R.add(lv0, y)
            R.output(gv0)
        return gv0
'''


@relax.expr_functor.mutator
class EwiseFMARewriter(relax.PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        add_op = get_op("relax.add")
        multiply_op = get_op("relax.multiply")
        ewise_fma_op = get_op("relax.ewise_fma")

        if call.op != add_op:
            return call

        value = self.lookup_binding(call.args[0])
        if not isinstance(value, relax.Call) or value.op != multiply_op:
            return call

        fma_call = relax.Call(ewise_fma_op, [value.args[0], value.args[1], call.args[1]], None, None)
        return fma_call


EWISE_FMA_REWRITTEN = '''\
@R.function
def main(x: R.Tensor((3, 4), dtype="float32"), y: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3, 4), dtype="float32"):
    with R.dataflow():
        lv0: R.Tensor((3, 4), dtype="float32") = R.multiply(x, y)
        gv0: R.Tensor((3, 4), dtype="float32") = R.ewise_fma(x, y, y)
        R.output(gv0)
    return gv0'''

# corpus/legacy/seed003_ewise_fma_cleaned.py in today's spelling; the return annotation is the
# declared one of the input (TVM's old printer showed "Tensor(None, "float32", ndim = 2)").
EWISE_FMA_CLEANED = '''\
@R.function
def main(x: R.Tensor((3, 4), dtype="float32"), y: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3, 4), dtype="float32"):
    with R.dataflow():
        gv0: R.Tensor((3, 4), dtype="float32") = R.ewise_fma(x, y, y)
        R.output(gv0)
    return gv0'''


def test_seed003_ewise_fma_rewriter_and_remove_all_unused():
    my_module = from_source(MY_MODULE)
    updated_fn = EwiseFMARewriter().visit_expr(my_module["main"])
    assert body(updated_fn.script()) == EWISE_FMA_REWRITTEN
    cleaned = relax.analysis.remove_all_unused(updated_fn)
    assert body(cleaned.script()) == EWISE_FMA_CLEANED
    # The legacy text of the course parses to the same function.
    legacy = parse_file(CORPUS / "legacy" / "seed003_ewise_fma_cleaned.py")
    assert body(legacy.script()).split("\n")[2:] == EWISE_FMA_CLEANED.split("\n")[2:]


def _mlp_model():
    """Seed 003's create_model in today's spelling (dense + add + relu with constant weights)."""
    rng = np.random.default_rng(0)
    params = {"w0": rng.random((128, 784)), "b0": rng.random((128,)), "w1": rng.random((10, 128)),
              "b1": rng.random((10,))}
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    w0, b0, w1, b1 = (relax.const(params[k], "float32") for k in ("w0", "b0", "w1", "b1"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.nn.dense(x, w0))
            lv1 = bb.emit(relax.op.add(lv0, b0))
            lv2 = bb.emit(relax.op.nn.relu(lv1))
            lv3 = bb.emit(relax.op.nn.dense(lv2, w1))
            lv4 = bb.emit(relax.op.add(lv3, b1))
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get()


@relax.expr_functor.mutator
class DenseAddFusor(relax.PyExprMutator):
    """Seed 003's fusor: dense + add become a call of a ``Primitive`` sub-function."""

    def __init__(self, mod):
        super().__init__()
        self.mod_ = mod
        self.add_op = get_op("relax.add")
        self.dense_op = get_op("relax.nn.dense")
        self.counter = 0

    def transform(self):
        for global_var, func in self.mod_.functions.items():
            if not isinstance(func, relax.Function):
                continue
            if "Primitive" in func.attrs.keys() and func.attrs["Primitive"] != 0:
                continue
            updated_func = self.visit_expr(func)
            updated_func = relax.analysis.remove_all_unused(updated_func)
            self.builder_.update_func(global_var, updated_func)
        return self.builder_.get()

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)

        def match_call(node, op):
            return isinstance(node, relax.Call) and node.op == op

        if not match_call(call, self.add_op):
            return call
        value = self.lookup_binding(call.args[0])
        if value is None or not match_call(value, self.dense_op):
            return call
        x, w = value.args
        b = call.args[1]
        param_x = relax.Var("x", x.struct_info)
        param_w = relax.Var("w", w.struct_info)
        param_b = relax.Var("b", b.struct_info)
        bb = relax.BlockBuilder()
        fn_name = "fused_dense_add%d" % (self.counter)
        self.counter += 1
        with bb.function(fn_name, [param_x, param_w, param_b]):
            with bb.dataflow():
                lv0 = bb.emit(relax.op.nn.dense(param_x, param_w))
                gv = bb.emit_output(relax.op.add(lv0, param_b))
            bb.emit_func_output(gv)
        fused_fn = bb.get()[fn_name].with_attr("Primitive", 1)
        global_var = self.builder_.add_func(fused_fn, fn_name)
        return relax.Call(global_var, [x, w, b], None, None)


# corpus/legacy/seed003_mlp_fused_subfunctions.py in today's spelling.
MLP_FUSED = '''\
@I.ir_module
class Module:
    @R.function
    def fused_dense_add0(x: R.Tensor((1, 784), dtype="float32"), w: R.Tensor((128, 784), dtype="float32"), b: R.Tensor((128,), dtype="float32")) -> R.Tensor((1, 128), dtype="float32"):
        R.func_attr({"Primitive": 1})
        with R.dataflow():
            lv: R.Tensor((1, 128), dtype="float32") = R.nn.dense(x, w)
            gv: R.Tensor((1, 128), dtype="float32") = R.add(lv, b)
            R.output(gv)
        return gv

    @R.function
    def fused_dense_add1(x: R.Tensor((1, 128), dtype="float32"), w: R.Tensor((10, 128), dtype="float32"), b: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({"Primitive": 1})
        with R.dataflow():
            lv: R.Tensor((1, 10), dtype="float32") = R.nn.dense(x, w)
            gv: R.Tensor((1, 10), dtype="float32") = R.add(lv, b)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv1: R.Tensor((1, 128), dtype="float32") = cls.fused_dense_add0(x, metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1])
            lv2: R.Tensor((1, 128), dtype="float32") = R.nn.relu(lv1)
            lv4: R.Tensor((1, 10), dtype="float32") = cls.fused_dense_add1(lv2, metadata["relax.expr.Constant"][2], metadata["relax.expr.Constant"][3])
            gv: R.Tensor((1, 10), dtype="float32") = lv4
            R.output(gv)
        return gv

# Metadata omitted. Use show_meta=True in script() method to show it.'''


def test_seed003_dense_add_fusor_creates_primitive_subfunctions():
    model = _mlp_model()
    fused = DenseAddFusor(model).transform()
    assert body(fused.script()) == MLP_FUSED
    # The fused calls pass the model's own constant objects, and the text round-trips with them.
    old = [b.value.args[1] for b in model["main"].body.blocks[0].bindings if isinstance(b.value, relax.Call)
           and len(b.value.args) == 2]
    new = [a for b in fused["main"].body.blocks[0].bindings if isinstance(b.value, relax.Call)
           for a in b.value.args[1:]]
    assert len(old) == len(new) == 4 and all(a is b for a, b in zip(old, new))
    again = from_source(fused.script(show_meta=True))
    assert structural_equal(again, fused)


# ------------------------------------------------------------------ seed 002 (Relax spelling)
class ReluReplacer(relax.PyExprMutator):
    """relu(x) = clip(x, 0, inf): the rewrite of seed 002's ReluReplacer."""

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if isinstance(call.op, relax.Op) and call.op.name == "relax.nn.relu":
            return relax.op.clip(call.args[0], 0.0, float("inf"))
        return call


def test_seed002_relu_replacer_gives_clip():
    mod = parse_file(CORPUS / "seed001_mlp_dynamic.py")
    func = ReluReplacer(mod).visit_expr(mod["forward"])
    line = [ln.strip() for ln in func.script().split("\n") if ln.strip().startswith("relu:")]
    assert line == ['relu: R.Tensor((n, 128), dtype="float32") = '
                    'R.clip(add, R.prim_value(T.float32(0.0)), R.prim_value(T.float32("inf")))']
    assert structural_equal(from_source(func.script()), func)


# ------------------------------------------------------------------ visitors
@visitor
class OpCounter(PyExprVisitor):
    """Counts op calls by name (seed 002's count_ops as a visitor)."""

    def __init__(self):
        self.counts = {}

    def visit_call_(self, call):
        if isinstance(call.op, relax.Op):
            self.counts[call.op.name] = self.counts.get(call.op.name, 0) + 1
        super().visit_call_(call)


def test_visitor_counts_ops():
    mod = parse_file(CORPUS / "seed001_mlp_dynamic.py")
    counter = OpCounter()
    counter.visit_expr(mod["forward"])
    assert counter.counts == {"relax.permute_dims": 2, "relax.matmul": 2, "relax.add": 2, "relax.nn.relu": 1}


def test_post_order_visit_counts_ops_and_visits_children_first():
    mod = parse_file(CORPUS / "seed001_mlp_dynamic_legalized.py")
    counts, order = {}, []

    def count(node):
        order.append(type(node).__name__)
        if isinstance(node, relax.Call) and isinstance(node.op, relax.Op):
            counts[node.op.name] = counts.get(node.op.name, 0) + 1

    relax.analysis.post_order_visit(mod["forward"], count)
    assert counts == {"relax.call_tir": 7}
    assert order[-1] == "Function" and order[-2] == "SeqExpr"
    # call_tir(cls.transpose, (fc1_weight,)): op, callee, the argument, its tuple, then the call.
    assert order[:5] == ["Op", "GlobalVar", "Var", "Tuple", "Call"]


def test_visitor_hooks_for_bindings_blocks_and_definitions():
    func = from_source(textwrap.dedent('''
        @R.function
        def f(x: R.Tensor((2, 3), "float32"), c: R.Prim("bool")):
            with R.dataflow():
                lv = R.add(x, x)
                gv = R.match_cast(lv, R.Tensor((2, 3), "float32"))
                R.output(gv)
            if c:
                y = R.exp(gv)
            else:
                y = R.negative(gv)
            t = (y, gv)
            z = t[0]
            return z
    '''))
    seen = []

    class Recorder(relax.ExprVisitor):
        def visit_var_def_(self, var):
            seen.append(("def", var.name_hint))

        def visit_dataflow_var_def_(self, var):
            seen.append(("dfdef", var.name_hint))

        def visit_match_cast_(self, binding):
            seen.append(("match_cast", binding.var.name_hint))
            super().visit_match_cast_(binding)

        def visit_dataflow_block_(self, block):
            seen.append(("dataflow", len(block.bindings)))
            super().visit_dataflow_block_(block)

        def visit_if_(self, node):
            seen.append(("if",))
            super().visit_if_(node)

        def visit_tuple_getitem_(self, item):
            seen.append(("getitem", item.index))
            super().visit_tuple_getitem_(item)

    Recorder().visit_expr(func)
    assert seen == [("def", "x"), ("def", "c"), ("dataflow", 2), ("dfdef", "lv"), ("match_cast", "gv"),
                    ("def", "gv"), ("if",), ("def", "y_then"), ("def", "y_else"), ("def", "y"), ("def", "t"),
                    ("getitem", 0), ("def", "z")]


# ------------------------------------------------------------------ re-normalisation
ADD_EXP = textwrap.dedent('''
    @R.function
    def f(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            lv = R.add(x, x)
            gv = R.exp(lv)
            R.output(gv)
        return gv
''')


def test_changed_struct_info_gives_new_vars_everywhere():
    class ToHalf(relax.PyExprMutator):
        def visit_call_(self, call):
            call = super().visit_call_(call)
            if call.op.name == "relax.add":
                return relax.op.astype(call.args[0], "float16")
            return call

    func = from_source(ADD_EXP)
    out = ToHalf().visit_expr(func)
    assert body(out.script()) == textwrap.dedent('''\
        @R.function
        def f(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float16"):
            with R.dataflow():
                lv: R.Tensor((2, 3), dtype="float16") = R.astype(x, dtype="float16")
                gv: R.Tensor((2, 3), dtype="float16") = R.exp(lv)
                R.output(gv)
            return gv''')
    old_lv = func.body.blocks[0].bindings[0].var
    new_b = out.body.blocks[0].bindings
    assert new_b[0].var is not old_lv and new_b[1].value.args[0] is new_b[0].var
    assert out.body.body is new_b[1].var  # the returned variable is remapped as well


def test_nested_calls_in_a_replacement_are_bound_to_fresh_variables():
    class ExpThenMultiply(relax.PyExprMutator):
        def visit_call_(self, call):
            call = super().visit_call_(call)
            if call.op.name == "relax.add":
                return relax.op.multiply(relax.op.exp(call.args[0]), call.args[1])
            return call

    out = ExpThenMultiply().visit_expr(from_source(ADD_EXP))
    # The new binding is named "lv" by the builder; the printer tells the two "lv" apart.
    assert body(out.script()) == textwrap.dedent('''\
        @R.function
        def f(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
            with R.dataflow():
                lv: R.Tensor((2, 3), dtype="float32") = R.exp(x)
                lv_1: R.Tensor((2, 3), dtype="float32") = R.multiply(lv, x)
                gv: R.Tensor((2, 3), dtype="float32") = R.exp(lv_1)
                R.output(gv)
            return gv''')
    assert isinstance(out.body.blocks[0].bindings[0].var, relax.DataflowVar)


def test_var_def_hook_renames_parameters_and_uses():
    class Rename(relax.PyExprMutator):
        def visit_var_def_(self, var):
            return relax.Var(var.name_hint + "_in", var.struct_info) if var.name_hint == "x" else var

    out = Rename().visit_expr(from_source(ADD_EXP))
    assert "def f(x_in: R.Tensor" in out.script() and "R.add(x_in, x_in)" in out.script()


def test_if_branches_are_rewritten_in_their_own_scope():
    func = from_source(textwrap.dedent('''
        @R.function
        def f(x: R.Tensor((4,), "float32"), c: R.Prim("bool")) -> R.Tensor((4,), "float32"):
            if c:
                y = R.nn.relu(x)
            else:
                y = R.negative(x)
            return y
    '''))
    out = ReluReplacer().visit_expr(func)
    assert body(out.script()) == textwrap.dedent('''\
        @R.function
        def f(x: R.Tensor((4,), dtype="float32"), c: R.Prim("bool")) -> R.Tensor((4,), dtype="float32"):
            if c:
                y_then: R.Tensor((4,), dtype="float32") = R.clip(x, R.prim_value(T.float32(0.0)), R.prim_value(T.float32("inf")))
                y: R.Tensor((4,), dtype="float32") = y_then
            else:
                y_else: R.Tensor((4,), dtype="float32") = R.negative(x)
                y: R.Tensor((4,), dtype="float32") = y_else
            return y''')
    false_branch = out.body.blocks[0].bindings[0].value.false_branch
    assert false_branch is func.body.blocks[0].bindings[0].value.false_branch  # untouched branch kept
    assert structural_equal(from_source(out.script()), out)


# ------------------------------------------------------------------ remove_all_unused
def test_remove_all_unused_is_transitive_and_keeps_side_effects():
    func = from_source(textwrap.dedent('''
        @R.function(pure=False)
        def f(x: R.Tensor((2,), "float32")):
            a = R.add(x, x)
            b = R.multiply(a, a)
            p = R.print(x, format="x={}")
            c = R.exp(x)
            return c
    '''))
    out = relax.analysis.remove_all_unused(func)
    text = body(out.script())
    assert "R.add" not in text and "R.multiply" not in text
    assert "R.print" in text and "R.exp" in text


def test_remove_all_unused_keeps_match_cast_defining_symbolic_vars():
    func = from_source(textwrap.dedent('''
        @R.function
        def f(x: R.Tensor(ndim=1, dtype="float32")):
            m = T.int64()
            y = R.match_cast(x, R.Tensor((m,), "float32"))
            z: R.Tensor((m,), "float32") = R.exp(x)
            return z
    '''))
    assert "R.match_cast" in relax.analysis.remove_all_unused(func).script()


def test_remove_all_unused_without_unused_bindings_returns_the_function():
    func = from_source(ADD_EXP)
    assert relax.analysis.remove_all_unused(func) is func


# ------------------------------------------------------------------ locations
def test_replacement_takes_the_location_of_the_replaced_node():
    span = Span("model.py", 7, 9, 7, 25)
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    relu = relax.op.nn.relu(x, span=span)
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(relu)
        bb.emit_func_output(gv)
    func = bb.get()["main"]
    assert func.body.blocks[0].bindings[0].value.span == span

    out = ReluReplacer().visit_expr(func)
    new_value = out.body.blocks[0].bindings[0].value
    assert new_value.op.name == "relax.clip" and new_value.span == span


def test_a_variable_replacing_a_call_is_not_copied():
    class Identity(relax.PyExprMutator):
        def visit_call_(self, call):
            return call.args[0] if call.op.name == "relax.exp" else super().visit_call_(call)

    span = Span("m.py", 3, 1, 3, 9)
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(relax.op.exp(x, span=span))
        bb.emit_func_output(y)
    out = Identity().visit_expr(bb.get()["main"])
    assert out.body.blocks[0].bindings[0].value is x


def test_visit_expr_post_order_uses_the_default_rules():
    calls = []

    class Post(relax.PyExprMutator):
        def visit_call_(self, call):
            calls.append(call.op.name)
            return self.visit_expr_post_order(call)

    func = from_source(ADD_EXP)
    assert Post().visit_expr(func) is func
    assert calls == ["relax.add", "relax.exp"]


def test_tvm_import_spellings():
    from tvmlite.relax.analysis import post_order_visit, remove_all_unused
    from tvmlite.relax.expr_functor import PyExprMutator as M

    assert M is relax.ExprMutator and remove_all_unused is relax.analysis.remove_all_unused
    assert post_order_visit is relax.analysis.post_order_visit


def test_decorators_return_the_class():
    class A(relax.PyExprVisitor):
        pass

    assert visitor(A) is A and mutator(A) is A
    assert relax.PyExprMutator is relax.ExprMutator


def test_lookup_binding_of_parameters_is_none():
    seen = []

    class Look(relax.PyExprMutator):
        def visit_call_(self, call):
            seen.append([self.lookup_binding(a) for a in call.args])
            return super().visit_call_(call)

    Look().visit_expr(from_source(ADD_EXP))
    assert seen[0] == [None, None]
    assert isinstance(seen[1][0], relax.Call) and seen[1][0].op.name == "relax.add"


@pytest.mark.parametrize("name", ["seed001_mlp_dynamic_fused.py", "seed004_mlp_torch_zero.py"])
def test_identity_mutator_keeps_corpus_modules(name):
    mod = parse_file(CORPUS / name)
    m = relax.ExprMutator(mod)
    for gv, func in mod.functions_items():
        if isinstance(func, relax.Function):
            m.builder_.update_func(gv, m.visit_expr(func))
    assert m.builder_.get().script() == mod.script()
