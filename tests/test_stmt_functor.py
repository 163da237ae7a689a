"""TIR StmtExprVisitor / StmtExprMutator and tvm.tir.stmt_functor's post_order_visit,
ir_transform and substitute, with the exact text of rewritten functions."""
import textwrap

import pytest

from tvmlite import tir
from tvmlite.ir.node import Span, replace
from tvmlite.script import from_source
from tvmlite.tir import stmt_functor

ADD = from_source('''
@T.prim_func
def add(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = A[vi] + B[vi]
''')

SCALE = from_source('''
@T.prim_func
def scale(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    C = T.alloc_buffer((n,))
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = A[vi] * T.float32(2.0)
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = C[vi] + T.float32(1.0)
''')


def body(text: str) -> str:
    """Printed text without the ``# from ... import ...`` header lines."""
    return "\n".join(line for line in text.strip("\n").split("\n") if not line.startswith("# from ")).strip("\n")


def with_body(func: tir.PrimFunc, new_body: tir.Stmt) -> tir.PrimFunc:
    return replace(func, body=new_body)


def expected_add(loop: str, op: str) -> str:
    return textwrap.dedent(f'''\
        @T.prim_func
        def add(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
            # with T.block("root"):
            for i in {loop}:
                with T.block("C"):
                    vi = T.axis.spatial(128, i)
                    T.reads(A[vi], B[vi])
                    T.writes(C[vi])
                    C[vi] = A[vi] {op} B[vi]''')


# ------------------------------------------------------------------ visitor
class Counter(tir.StmtExprVisitor):
    def __init__(self):
        self.stores, self.loops, self.adds, self.exprs, self.vars = [], 0, 0, 0, []

    def visit_buffer_store_(self, op):
        self.stores.append(op.buffer.name)
        super().visit_buffer_store_(op)

    def visit_for_(self, op):
        self.loops += 1
        super().visit_for_(op)

    def visit_add_(self, op):
        self.adds += 1
        super().visit_add_(op)

    def visit_var_(self, op):
        self.vars.append(op.name)

    def visit_expr(self, expr):
        self.exprs += 1
        super().visit_expr(expr)


def test_visitor_hooks_and_visit_expr_see_everything():
    c = Counter()
    c.visit_stmt(ADD.body)
    assert (c.stores, c.loops, c.adds) == (["C"], 1, 1)
    # Uses only: the loop variable and the block iterator are definitions, not visited there.
    assert c.vars == ["i"] + ["vi"] * 6  # iter value; reads, writes; store index, two load indices
    # Predicates (2), loop bounds (2), iter value, iterator domain (2), regions (3 x 2), the store's
    # value (Add, 2 loads, 2 indices) and index.
    assert c.exprs == 19


def test_visitor_on_a_function_walks_its_body():
    c = Counter()
    c.visit(SCALE)
    assert c.stores == ["C", "B"] and c.loops == 2 and c.adds == 1


def test_post_order_visit_children_first_and_once_each():
    kinds = []
    stmt_functor.post_order_visit(ADD.body, lambda n: kinds.append(type(n).__name__))
    # A node shared between places (vi in the regions and indices, a literal the parser reused)
    # is reported once, where it is first reached.
    assert kinds == ["IntImm", "IntImm", "IntImm", "Var", "IntImm", "IntImm", "Var", "IntImm", "IntImm",
                     "IntImm", "BufferLoad", "BufferLoad", "Add", "BufferStore", "Block", "BlockRealize",
                     "For", "Block", "BlockRealize"]
    seen = []
    stmt_functor.post_order_visit(ADD.body, seen.append)
    assert len({id(n) for n in seen}) == len(seen)  # shared nodes are visited once


# ------------------------------------------------------------------ mutator
class AddToMul(tir.StmtExprMutator):
    def visit_add_(self, op):
        op = super().visit_add_(op)
        return tir.Mul(op.a, op.b)


class Parallel(tir.StmtExprMutator):
    def visit_for_(self, op):
        op = super().visit_for_(op)
        return replace(op, kind=tir.ForKind.PARALLEL)


def test_mutator_rewrites_with_exact_text():
    assert body(with_body(ADD, AddToMul().visit_stmt(ADD.body)).script()) == expected_add("range(128)", "*")
    assert body(with_body(ADD, Parallel().visit_stmt(ADD.body)).script()) == expected_add("T.parallel(128)", "+")


def test_mutator_without_changes_returns_the_same_objects():
    assert tir.StmtExprMutator().visit_stmt(ADD.body) is ADD.body
    assert AddToMul().visit_stmt(SCALE.body).block.body.seq[0] is SCALE.body.block.body.seq[0]


def test_replacing_a_statement_by_a_sequence_flattens():
    class Twice(tir.StmtExprMutator):
        def visit_buffer_store_(self, op):
            return tir.SeqStmt((op, op))

    new = Twice().visit_stmt(SCALE.body)
    seq = new.block.body
    assert isinstance(seq, tir.SeqStmt) and len(seq.seq) == 2  # the two loops, each with two stores
    first_block = seq.seq[0].body.block
    assert isinstance(first_block.body, tir.SeqStmt) and len(first_block.body.seq) == 2


# ------------------------------------------------------------------ ir_transform
def test_ir_transform_postorder_and_only_enable():
    def post(node):
        return tir.Mul(node.a, node.b) if isinstance(node, tir.Add) else None

    assert body(with_body(ADD, stmt_functor.ir_transform(ADD.body, None, post)).script()) == \
        expected_add("range(128)", "*")
    # Only For nodes are handed to the callbacks: the Add stays.
    assert stmt_functor.ir_transform(ADD.body, None, post, ["tir.For"]) is ADD.body
    loops = []
    stmt_functor.ir_transform(ADD.body, None, lambda n: loops.append(n.loop_var.name), ["tir.For"])
    assert loops == ["i"]


def test_ir_transform_preorder_result_is_not_visited():
    visited = []

    def pre(node):
        if isinstance(node, tir.For):
            return replace(node, kind=tir.ForKind.UNROLLED)
        return None

    def post(node):
        visited.append(type(node).__name__)

    new = stmt_functor.ir_transform(ADD.body, pre, post)
    assert body(with_body(ADD, new).script()) == expected_add("T.unroll(128)", "+")
    assert "BufferStore" not in visited and visited[-1] == "BlockRealize"


# ------------------------------------------------------------------ substitute
def test_substitute_an_expression_and_a_callable():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    e = tir.Add(tir.Mul(x, y), x)
    assert str(stmt_functor.substitute(e, {x: tir.IntImm("int32", 3)})) == "3 * y + 3"
    assert str(stmt_functor.substitute(e, lambda v: 5 if v is y else None)) == "x * 5 + x"
    assert stmt_functor.substitute(e, {}) is e


def test_substitute_specialises_a_function_through_buffer_shapes():
    n = SCALE.buffer_map[SCALE.params[0]].shape[0]
    out = stmt_functor.substitute(SCALE, {n: 16})
    assert body(out.script()) == textwrap.dedent('''\
        @T.prim_func
        def scale(A: T.Buffer((T.int64(16),), "float32"), B: T.Buffer((T.int64(16),), "float32")):
            # with T.block("root"):
            C = T.alloc_buffer((T.int64(16),))
            for i in range(T.int64(16)):
                with T.block("C"):
                    vi = T.axis.spatial(T.int64(16), i)
                    T.reads(A[vi])
                    T.writes(C[vi])
                    C[vi] = A[vi] * T.float32(2.0)
            for i in range(T.int64(16)):
                with T.block("B"):
                    vi = T.axis.spatial(T.int64(16), i)
                    T.reads(C[vi])
                    T.writes(B[vi])
                    B[vi] = C[vi] + T.float32(1.0)''')
    # Every use of a buffer names the same new buffer object.
    root = out.body.block
    c_alloc = root.alloc_buffers[0]
    first, second = (loop.body.block for loop in root.body.seq)
    assert first.body.buffer is c_alloc and second.body.value.a.buffer is c_alloc
    assert first.writes[0].buffer is c_alloc
    assert out.buffer_map[out.params[0]] is first.body.value.a.buffer
    assert SCALE.script().count("n") > 0 and "T.int64()" in SCALE.script()  # the input is unchanged


# ------------------------------------------------------------------ locations
def test_spans_survive_mutation():
    span = Span("k.py", 4, 5, 4, 20)
    a = tir.Var("a", "float32")
    expr = tir.Add(a, tir.FloatImm("float32", 1.0), span=span)
    new = AddToMul().visit_expr(expr)
    assert isinstance(new, tir.Mul) and new.span == span

    stmt = tir.Evaluate(expr, span=span)
    assert stmt_functor.ir_transform(stmt, None, lambda n: tir.Evaluate(a) if isinstance(n, tir.Evaluate)
                                     else None).span == span
    # A variable that replaces a node keeps its identity (it is not copied to carry the span).
    b = tir.Var("b", "float32")
    assert stmt_functor.substitute(tir.Evaluate(tir.Var("a", "float32", span=span)), lambda v: b).value is b


def test_tvm_import_spellings():
    from tvmlite.tir.functor import PyStmtExprVisitor
    from tvmlite.tir.stmt_functor import ir_transform, post_order_visit, substitute

    assert (ir_transform, post_order_visit, substitute) == (stmt_functor.ir_transform,
                                                           stmt_functor.post_order_visit, stmt_functor.substitute)
    assert PyStmtExprVisitor is tir.StmtExprVisitor


def test_decorators_and_py_names():
    assert tir.stmt_functor.visitor(Counter) is Counter and tir.stmt_functor.mutator(AddToMul) is AddToMul
    assert tir.PyStmtExprVisitor is tir.StmtExprVisitor and tir.functor.PyStmtExprMutator is tir.StmtExprMutator


@pytest.mark.parametrize("cls", [tir.StmtExprVisitor, tir.StmtExprMutator])
def test_every_tir_node_kind_has_a_hook(cls):
    hooks = ["visit_let_stmt_", "visit_attr_stmt_", "visit_if_then_else_", "visit_for_", "visit_while_",
             "visit_allocate_", "visit_decl_buffer_", "visit_buffer_store_", "visit_assert_stmt_",
             "visit_seq_stmt_", "visit_evaluate_", "visit_block_", "visit_block_realize_", "visit_var_",
             "visit_buffer_load_", "visit_let_", "visit_call_", "visit_add_", "visit_sub_", "visit_mul_",
             "visit_div_", "visit_mod_", "visit_floor_div_", "visit_floor_mod_", "visit_min_", "visit_max_",
             "visit_eq_", "visit_ne_", "visit_lt_", "visit_le_", "visit_gt_", "visit_ge_", "visit_and_",
             "visit_or_", "visit_cast_", "visit_not_", "visit_select_", "visit_ramp_", "visit_broadcast_",
             "visit_int_imm_", "visit_float_imm_", "visit_string_imm_"]
    assert [h for h in hooks if not callable(getattr(cls, h, None))] == []
