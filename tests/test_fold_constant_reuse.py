"""FoldConstant's reuse of one legalization for calls that differ only in their tensor constants'
values: the numbers stay numpy's, calls that differ in shape, attributes or an inlined rank-0
value are legalized apart, a constant passed twice still folds, and the reuse key is structural."""
import numpy as np

from tvmlite import passes as P
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.arith import IndexMap
from tvmlite.ir.node import Map
from tvmlite.passes import fold_constant as fc
from tvmlite.passes import legalize_key
from tvmlite.passes.fold_constant import FoldConstant
from tvmlite.script import from_source

rng = np.random.default_rng(17)


def fold(text: str, **constants: np.ndarray) -> tuple[rx.Function, int, int]:
    """``main`` after FoldConstant, the number of folds and of legalizations it made."""
    calls = []
    original = fc._ConstantFolder._legalize

    def counting(self, call, opdef):  # type: ignore[no-untyped-def]
        calls.append(call.op.name)
        return original(self, call, opdef)

    fc._ConstantFolder._legalize = counting
    try:
        mod = from_source(text, extra_vars=constants)
        with P.PassContext() as ctx:
            out = P.Sequential([FoldConstant()])(mod)
    finally:
        fc._ConstantFolder._legalize = original
    return out["main"], ctx.stats["FoldConstant"]["folded"], len(calls)


def values(func: rx.Function) -> list[np.ndarray]:
    """The tuple of constants ``main`` returns, in order."""
    body = func.body.body
    fields = body.fields if isinstance(body, rx.Tuple) else None
    if fields is None:  # returned through a variable bound to the tuple
        bound = {b.var: b.value for blk in func.body.blocks for b in blk.bindings}
        fields = bound[body].fields
    assert all(isinstance(f, rx.Constant) for f in fields)
    return [f.data for f in fields]


BN_LIKE = """
@I.ir_module
class Module:
    @R.function
    def main():
        with R.dataflow():
            a1 = R.add(v0, R.const(1e-5, "float32"))
            s1 = R.sqrt(a1)
            m1 = R.multiply(g0, s1)
            e1 = R.expand_dims(m1, axis=[1, 2, 3])
            a2 = R.add(v1, R.const(1e-5, "float32"))
            s2 = R.sqrt(a2)
            m2 = R.multiply(g1, s2)
            e2 = R.expand_dims(m2, axis=[1, 2, 3])
            a3 = R.add(v2, R.const(2.0, "float32"))
            m3 = R.multiply(a3, a3)
            m4 = R.multiply(g0, g1)
            gv = (e1, e2, m3, m4)
            R.output(gv)
        return gv
"""


def test_same_shaped_calls_fold_to_their_own_numbers():
    v0, v1, v2, g0, g1 = (rng.random(8, dtype=np.float32) for _ in range(5))
    func, folded, legalized = fold(BN_LIKE, v0=v0, v1=v1, v2=v2, g0=g0, g1=g1)
    e1, e2, m3, m4 = values(func)
    eps = np.float32(1e-5)
    np.testing.assert_array_equal(e1, (g0 * np.sqrt(v0 + eps)).reshape(8, 1, 1, 1))
    np.testing.assert_array_equal(e2, (g1 * np.sqrt(v1 + eps)).reshape(8, 1, 1, 1))
    # Another inlined rank-0 value is another legalization; the same constant twice still folds.
    np.testing.assert_array_equal(m3, (v2 + np.float32(2.0)) * (v2 + np.float32(2.0)))
    np.testing.assert_array_equal(m4, g0 * g1)
    assert folded == 11
    # add(eps), sqrt, multiply, expand_dims once each, and add(2.0); both later multiplies
    # reuse the first one's legalization.
    assert legalized == 5


SQUARE_FIRST = """
@I.ir_module
class Module:
    @R.function
    def main():
        with R.dataflow():
            m1 = R.multiply(c0, c0)
            m2 = R.multiply(c1, c2)
            m3 = R.multiply(c2, c2)
            gv = (m1, m2, m3)
            R.output(gv)
        return gv
"""


def test_a_first_call_passing_one_constant_twice_is_not_reused():
    c0, c1, c2 = (rng.random((3, 4), dtype=np.float32) for _ in range(3))
    func, folded, _ = fold(SQUARE_FIRST, c0=c0, c1=c1, c2=c2)
    m1, m2, m3 = values(func)
    np.testing.assert_array_equal(m1, c0 * c0)
    np.testing.assert_array_equal(m2, c1 * c2)  # not c1 * c1: inputs are not matched by position
    np.testing.assert_array_equal(m3, c2 * c2)
    assert folded == 3


LAYOUTS = """
@I.ir_module
class Module:
    @R.function
    def main():
        with R.dataflow():
            p0 = R.layout_transform(w0, index_map=T.index_map(lambda o, i, h, w: (o // 4, i, h, w, o % 4), index_dtype="int64"))
            p1 = R.layout_transform(w1, index_map=T.index_map(lambda a, b, c, d: (a // 4, b, c, d, a % 4), index_dtype="int64"))
            p2 = R.layout_transform(w2, index_map=T.index_map(lambda o, i, h, w: (o // 2, i, h, w, o % 2), index_dtype="int64"))
            p3 = R.layout_transform(w3, index_map=T.index_map(lambda o, i, h, w: (o // 4, i, h, w, o % 4), index_dtype="int64"))
            gv = (p0, p1, p2, p3)
            R.output(gv)
        return gv
"""


def _packed(w: np.ndarray, lanes: int) -> np.ndarray:
    o, i, h, k = w.shape
    return w.reshape(o // lanes, lanes, i, h, k).transpose(0, 2, 3, 4, 1)


def test_index_maps_are_keyed_by_structure():
    w0, w1, w2 = (rng.random((8, 3, 2, 2), dtype=np.float32) for _ in range(3))
    w3 = rng.random((8, 5, 2, 2), dtype=np.float32)
    func, folded, legalized = fold(LAYOUTS, w0=w0, w1=w1, w2=w2, w3=w3)
    p0, p1, p2, p3 = values(func)
    np.testing.assert_array_equal(p0, _packed(w0, 4))
    np.testing.assert_array_equal(p1, _packed(w1, 4))  # the same map under other names: reused
    np.testing.assert_array_equal(p2, _packed(w2, 2))
    np.testing.assert_array_equal(p3, _packed(w3, 4))
    assert folded == 4 and legalized == 3


def key(x):  # type: ignore[no-untyped-def]
    """The reuse key of one value (``call_key`` applies it to a call's parts)."""
    return legalize_key._key(x, {})


def test_key_follows_structural_equality():
    i, j = tir.Var("i", "int64"), tir.Var("j", "int64")
    k, m = tir.Var("k", "int64"), tir.Var("m", "int64")
    swap = IndexMap((i, j), (j, i))
    assert key(swap) == key(IndexMap((k, m), (m, k)))  # bound variables: names are hints
    assert key(swap) != key(IndexMap((k, m), (k, m)))
    assert key(tir.Add(i, j)) != key(tir.Add(k, m))  # free variables (sizes): by identity
    assert key(Map({"x": 0.0})) != key(Map({"x": -0.0}))  # float bits, as structural equality
    c = rx.Constant(np.zeros((2, 3), "float32"))
    d = rx.Constant(np.ones((2, 3), "float32"))
    assert key(c) == key(d)  # a tensor's values do not shape its legalization
    assert key(c) != key(rx.Constant(np.zeros((3, 2), "float32")))
    half, one = rx.Constant(np.array(0.5, "float32")), rx.Constant(np.array(1.0, "float32"))
    assert key(half) != key(one)  # rank-0 values are inlined: they count
    x = rx.Var("x", rx.TensorStructInfo((tir.IntImm("int64", 4),), "float32"))
    y = rx.Var("y", rx.TensorStructInfo((tir.IntImm("int64", 4),), "float32"))
    assert key((x, x)) == key((y, y)) and key((x, x)) != key((x, y))  # variables by position
