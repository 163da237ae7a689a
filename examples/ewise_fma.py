"""Fuse ``multiply`` + ``add`` into ``ewise_fma`` with a pattern-matching mutator.

``EwiseFMARewriter`` visits each call after its arguments, and when an ``add`` takes the result
of a ``multiply`` (found with ``lookup_binding``) it builds one ``R.ewise_fma`` call instead.
The ``multiply`` binding is left behind, unused, until ``remove_all_unused`` deletes it.
Run ``python examples/ewise_fma.py``: it prints the function before, after the rewrite and
after the clean-up."""
from tvmlite import relax
from tvmlite.relax import Op
from tvmlite.script import ir as I
from tvmlite.script import relax as R


@I.ir_module
class MyModule:
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv0 = R.add(lv0, y)
            R.output(gv0)
        return gv0


@relax.expr_functor.mutator
class EwiseFMARewriter(relax.PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        add_op = Op.get("relax.add")
        multiply_op = Op.get("relax.multiply")
        ewise_fma_op = Op.get("relax.ewise_fma")

        if call.op != add_op:
            return call

        value = self.lookup_binding(call.args[0])
        if not isinstance(value, relax.Call) or value.op != multiply_op:
            return call

        fma_call = relax.Call(ewise_fma_op, [value.args[0], value.args[1], call.args[1]], None, None)
        return fma_call


if __name__ == "__main__":
    print("# ==== MyModule[\"main\"]")
    MyModule["main"].show()

    updated_fn = EwiseFMARewriter().visit_expr(MyModule["main"])
    print("\n# ==== after EwiseFMARewriter: gv0 is an ewise_fma, lv0 is now unused")
    updated_fn.show()

    print("\n# ==== after relax.analysis.remove_all_unused")
    relax.analysis.remove_all_unused(updated_fn).show()
