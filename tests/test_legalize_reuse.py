"""LegalizeOps' reuse of a legalization for calls structurally equal up to their arguments: the
module is the one each call's own legalization gives (functions shared as before), a call passing
one variable twice and PrimFuncs with run-time checks (whose messages name their binding) are
legalized on their own. The expected text is that of LegalizeOps legalizing every call."""
from tvmlite import passes as P
from tvmlite.ir.block_builder import BlockBuilder
from tvmlite.ops import get_op_def
from tvmlite.script import from_source

TEXT = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 3), "float32"), i: R.Tensor((2,), "int64"), j: R.Tensor((2,), "int64"), y: R.Tensor((4, 3), "float32")):
        with R.dataflow():
            a = R.take(x, i, axis=0)
            b = R.take(y, j, axis=0)
            c = R.add(a, b)
            d = R.add(b, a)
            e = R.add(c, c)
            gv = (c, d, e)
            R.output(gv)
        return gv
"""

EXPECTED = '# from tvmlite.script import ir as I\n# from tvmlite.script import tir as T\n# from tvmlite.script import relax as R\n\n@I.ir_module\nclass Module:\n    @T.prim_func(private=True)\n    def add(a: T.Buffer((T.int64(2), T.int64(3)), "float32"), b: T.Buffer((T.int64(2), T.int64(3)), "float32"), T_add: T.Buffer((T.int64(2), T.int64(3)), "float32")):\n        T.func_attr({"tir.noalias": True})\n        # with T.block("root"):\n        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):\n            with T.block("T_add"):\n                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])\n                T.reads(a[v_ax0, v_ax1], b[v_ax0, v_ax1])\n                T.writes(T_add[v_ax0, v_ax1])\n                T_add[v_ax0, v_ax1] = a[v_ax0, v_ax1] + b[v_ax0, v_ax1]\n\n    @T.prim_func(private=True)\n    def take(x: T.Buffer((T.int64(4), T.int64(3)), "float32"), i: T.Buffer((T.int64(2),), "int64"), T_take: T.Buffer((T.int64(2), T.int64(3)), "float32")):\n        T.func_attr({"op_pattern": 2, "tir.noalias": True})\n        # with T.block("root"):\n        for i0 in range(T.int64(2)):\n            with T.block("T_take_check"):\n                v_i0 = T.axis.spatial(T.int64(2), i0)\n                T.reads(i[v_i0])\n                T.writes()\n                assert T.int64(-4) <= i[v_i0] and i[v_i0] < T.int64(4), "main: a = R.take(x, i, axis=0, mode=\\"fast\\"): an index in i is out of range for axis 0 of x (4, 3), of size 4 (valid indices: -4 to 3)"\n                T.evaluate(0)\n        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):\n            with T.block("T_take"):\n                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])\n                T.reads(x[T.if_then_else(i[v_ax0] < T.int64(0), i[v_ax0] + T.int64(4), i[v_ax0]), v_ax1], i[v_ax0])\n                T.writes(T_take[v_ax0, v_ax1])\n                T_take[v_ax0, v_ax1] = x[T.if_then_else(i[v_ax0] < T.int64(0), i[v_ax0] + T.int64(4), i[v_ax0]), v_ax1]\n\n    @T.prim_func(private=True)\n    def take1(y: T.Buffer((T.int64(4), T.int64(3)), "float32"), j: T.Buffer((T.int64(2),), "int64"), T_take: T.Buffer((T.int64(2), T.int64(3)), "float32")):\n        T.func_attr({"op_pattern": 2, "tir.noalias": True})\n        # with T.block("root"):\n        for i0 in range(T.int64(2)):\n            with T.block("T_take_check"):\n                v_i0 = T.axis.spatial(T.int64(2), i0)\n                T.reads(j[v_i0])\n                T.writes()\n                assert T.int64(-4) <= j[v_i0] and j[v_i0] < T.int64(4), "main: b = R.take(y, j, axis=0, mode=\\"fast\\"): an index in j is out of range for axis 0 of y (4, 3), of size 4 (valid indices: -4 to 3)"\n                T.evaluate(0)\n        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):\n            with T.block("T_take"):\n                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])\n                T.reads(y[T.if_then_else(j[v_ax0] < T.int64(0), j[v_ax0] + T.int64(4), j[v_ax0]), v_ax1], j[v_ax0])\n                T.writes(T_take[v_ax0, v_ax1])\n                T_take[v_ax0, v_ax1] = y[T.if_then_else(j[v_ax0] < T.int64(0), j[v_ax0] + T.int64(4), j[v_ax0]), v_ax1]\n\n    @R.function\n    def main(x: R.Tensor((4, 3), dtype="float32"), i: R.Tensor((2,), dtype="int64"), j: R.Tensor((2,), dtype="int64"), y: R.Tensor((4, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")):\n        cls = Module\n        with R.dataflow():\n            a = R.call_tir(cls.take, (x, i), out_sinfo=R.Tensor((2, 3), dtype="float32"))\n            b = R.call_tir(cls.take1, (y, j), out_sinfo=R.Tensor((2, 3), dtype="float32"))\n            c = R.call_tir(cls.add, (a, b), out_sinfo=R.Tensor((2, 3), dtype="float32"))\n            d = R.call_tir(cls.add, (b, a), out_sinfo=R.Tensor((2, 3), dtype="float32"))\n            e = R.call_tir(cls.add, (c, c), out_sinfo=R.Tensor((2, 3), dtype="float32"))\n            gv: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")) = c, d, e\n            R.output(gv)\n        return gv'


def test_reused_legalizations_give_the_same_module(monkeypatch):
    added: list[str] = []
    real_add = BlockBuilder.add_func

    def counting(self, func, name):  # type: ignore[no-untyped-def]
        added.append(name)
        return real_add(self, func, name)

    monkeypatch.setattr(BlockBuilder, "add_func", counting)
    with P.PassContext() as ctx:
        out = P.LegalizeOps()(from_source(TEXT))
    assert out.script() == EXPECTED
    assert ctx.stats["LegalizeOps"]["legalized"] == 5
    # Both takes on their own (their checks name the binding), add(b, a) reuses add(a, b)'s
    # legalization, add(c, c) passes one variable twice: a key of its own.
    assert added == ["take", "take", "add", "add"]


def test_custom_legalizations_are_not_reused(monkeypatch):
    calls: list[str] = []
    add = get_op_def("relax.add").legalize

    def custom(bb, call):  # type: ignore[no-untyped-def]
        calls.append(call.op.name)
        return add(bb, call)

    with P.PassContext():
        out = P.LegalizeOps(customize_legalize_map={"relax.add": custom})(from_source(TEXT))
    assert out.script() == EXPECTED
    assert calls == ["relax.add"] * 3
