"""StmtExprVisitor/StmtExprMutator route nodes straight to their handlers when a class keeps the
base ``visit_stmt``/``visit_expr`` (a frame less per node), and through them when it overrides one;
both walk the same nodes and a mutator's replacements keep their spans either way."""
from tvmlite.ir import tir
from tvmlite.ir.stmt_functor import StmtExprMutator, StmtExprVisitor
from tvmlite.script import from_source

TEXT = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
"""


class _Adds(StmtExprVisitor):
    def __init__(self) -> None:
        self.adds = 0

    def visit_add_(self, e):  # type: ignore[no-untyped-def]
        self.adds += 1
        super().visit_add_(e)


class _Routed(_Adds):
    def __init__(self) -> None:
        super().__init__()
        self.exprs = 0

    def visit_expr(self, e):  # type: ignore[no-untyped-def]
        self.exprs += 1
        return super().visit_expr(e)


class _Sub(StmtExprMutator):
    def visit_add_(self, e):  # type: ignore[no-untyped-def]
        return tir.Sub(e.a, e.b)


class _SubRouted(_Sub):
    def visit_stmt(self, s):  # type: ignore[no-untyped-def]
        return super().visit_stmt(s)


def test_direct_and_routed_walks_agree():
    func = from_source(TEXT)
    assert _Adds._direct and not _Routed._direct and _Sub._direct and not _SubRouted._direct
    direct, routed = _Adds(), _Routed()
    direct.visit_stmt(func.body)
    routed.visit_stmt(func.body)
    assert direct.adds == routed.adds == 1 and routed.exprs > 1
    a, b = _Sub().visit_stmt(func.body), _SubRouted().visit_stmt(func.body)
    assert a.script() == b.script() and "A[vi] - T.float32(1.0)" in a.script()
