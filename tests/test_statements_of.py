"""``stmt_functor.statements_of``: every statement, in pre-order, without entering expressions (the
code generator's scans of statement kinds)."""
from tvmlite.ir import tir
from tvmlite.ir.functor import post_order_visit
from tvmlite.ir.stmt_functor import statements_of
from tvmlite.script import from_source

TEXT = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.parallel(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            if vi < 4:
                B[vi] = A[vi] + T.float32(1)
            else:
                B[vi] = A[vi]
"""


def test_statements_in_pre_order_and_only_statements():
    func = from_source(TEXT)
    kinds = [type(s).__name__ for s in statements_of(func.body)]
    assert kinds == ["BlockRealize", "Block", "For", "BlockRealize", "Block", "IfThenElse",
                     "BufferStore", "BufferStore"]
    everything: list = []
    post_order_visit(func.body, everything.append)  # the full walk: the same statements, and more
    stmts = [n for n in everything if isinstance(n, tir.Stmt)]
    assert sorted(map(id, stmts)) == sorted(map(id, statements_of(func.body)))
    assert len(everything) > len(stmts)
