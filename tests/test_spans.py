"""Source locations: the parser records them on bindings, calls and TIR statements, and they
survive rewriting where a node replaces another."""
from tvmlite import relax
from tvmlite.ir import tir
from tvmlite.relax.expr_functor import PyExprMutator, mutator
from tvmlite.script import from_source

TEXT = '''\
@R.function
def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
    with R.dataflow():
        y = R.nn.relu(x)
        z = R.add(y, x)
        R.output(z)
    return z
'''


@mutator
class ReluToGelu(PyExprMutator):
    def visit_call_(self, call):
        if call.op.name == "relax.nn.relu":
            return relax.op.nn.gelu(call.args[0])
        return super().visit_call_(call)


def bindings(func):
    return [b for block in func.body.blocks for b in block.bindings]


def test_parser_records_binding_and_call_locations():
    func = from_source(TEXT, "model.py")
    relu, add = bindings(func)
    assert (relu.span.filename, relu.span.line, relu.span.col) == ("model.py", 4, 9)
    assert (relu.value.span.line, relu.value.span.col, relu.value.span.end_col) == (4, 13, 25)
    assert (add.var.span.line, add.value.span.line) == (5, 5)


def test_a_replacement_takes_the_location_of_the_node_it_replaces():
    func = from_source(TEXT, "model.py")
    new = ReluToGelu(None).visit_expr(func)
    gelu = bindings(new)[0].value
    assert gelu.op.name == "relax.nn.gelu"
    assert (str(gelu.span), gelu.span.end_col) == ("model.py:4:13", 25)


def test_tir_statements_carry_locations():
    func = from_source('''\
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = A[i] + T.float32(1.0)
''', "k.py")
    loop = func.body
    assert isinstance(loop, tir.For) and (loop.span.line, loop.span.col) == (3, 5)
    assert (loop.body.span.line, loop.body.span.col) == (4, 9)
