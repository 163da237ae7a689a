"""topi: every compute evaluated with ``te.evaluate`` against numpy, over dtypes and shapes
(symbolic ones where they make sense); each is also lowered with ``create_prim_func`` and run
with ``evaluate_prim_func``, which must agree; block names follow TVM's topi."""
import math

import numpy as np
import pytest

from tvmlite import te, topi
from tvmlite.ir import tir
from tvmlite.ir.well_formed import well_formed_errors

rng = np.random.default_rng(11)
_erf = np.vectorize(math.erf)


def arr(shape, dtype="float32", lo=-2.0, hi=2.0):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if "int" in dtype:
        return rng.integers(int(lo * 5), int(hi * 5) + 1, shape).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


def placeholders(arrays, symbolic=None):
    """A placeholder per array; ``symbolic[i][d] = name`` makes a dim symbolic (int64 sizes)."""
    names = {}
    out = []
    with te.index_dtype("int64"):
        for i, a in enumerate(arrays):
            dims = list(a.shape)
            for d, name in (symbolic or {}).get(i, {}).items():
                dims[d] = names.setdefault(name, tir.Var(name, "int64"))
            out.append(te.placeholder(dims, str(a.dtype), f"p{i}"))
    return out


def check(build, arrays, ref, symbolic=None, rtol=1e-5, atol=1e-6):
    """``build(*placeholders)`` evaluated by TE and by its PrimFunc, both equal to ``ref(*arrays)``."""
    ps = placeholders(arrays, symbolic)
    with te.index_dtype("int64"):
        out = build(*ps)
    outs = out if isinstance(out, (list, tuple)) else [out]
    want = ref(*arrays)
    wants = want if isinstance(want, tuple) else (want,)
    got_te = te.evaluate(list(outs), dict(zip(ps, arrays)))
    func = te.create_prim_func([*ps, *outs])
    assert well_formed_errors(func) == []
    got_tir = te.evaluate_prim_func(func, arrays)
    for g_te, g_tir, w in zip(got_te, got_tir, wants):
        w = np.asarray(w)
        assert g_te.shape == w.shape and g_tir.shape == w.shape
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g_te, w, rtol=rtol, atol=atol)
            np.testing.assert_allclose(g_tir, w, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g_te, w)
            np.testing.assert_array_equal(g_tir, w)
    return outs


# ------------------------------------------------------------------ elementwise
UNARY = {
    "exp": np.exp, "erf": _erf, "tanh": np.tanh, "tan": np.tan, "cos": np.cos, "cosh": np.cosh, "sin": np.sin,
    "sinh": np.sinh, "atan": np.arctan, "asinh": np.arcsinh, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": np.round, "abs": np.abs, "sign": np.sign, "negative": np.negative,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "identity": lambda x: x, "square": np.square,
}
POSITIVE = {"log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
            "acosh": lambda x: np.arccosh(x + 1)}
UNIT = {"acos": np.arccos, "asin": np.arcsin, "atanh": np.arctanh}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary(name, dtype):
    outs = check(getattr(topi, name), [arr((3, 4), dtype)], UNARY[name], rtol=1e-5 if dtype == "float32" else 1e-12)
    if name not in ("square",):
        # Python-defined topi ops: a "compute" block; sign is C++ topi's T_sign
        assert outs[0].op.name == ("T_sign" if name == "sign" else "compute")


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_unary_positive_domain(name):
    fn = topi.acosh if name == "acosh" else getattr(topi, name)
    build = (lambda x: fn(topi.add(x, 1.0))) if name == "acosh" else fn
    check(build, [arr((5,), lo=0.1, hi=3.0)], POSITIVE[name])


@pytest.mark.parametrize("name", sorted(UNIT))
def test_unary_unit_domain(name):
    check(getattr(topi, name), [arr((5,), lo=-0.9, hi=0.9)], UNIT[name])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_unary(dtype):
    check(topi.abs, [arr((6,), dtype)], np.abs)
    check(topi.negative, [arr((6,), dtype)], np.negative)
    check(topi.bitwise_not, [arr((6,), dtype)], np.invert)
    check(topi.sign, [arr((6,), dtype)], np.sign)
    check(topi.floor, [arr((6,), dtype)], lambda x: x)


def test_checks_cast_clip():
    special = np.array([np.nan, np.inf, -np.inf, 1.0], "float32")
    check(topi.isnan, [special], np.isnan)
    check(topi.isinf, [special], np.isinf)
    check(topi.isfinite, [special], np.isfinite)
    check(topi.logical_not, [arr((4,), "bool")], np.logical_not)
    check(lambda x: topi.cast(x, "int32"), [arr((5,)) * 3], lambda x: x.astype("int32"))
    check(lambda x: topi.cast(x, "float16"), [arr((5,), "int32")], lambda x: x.astype("float16"))
    check(lambda x: topi.clip(x, -0.5, 1), [arr((3, 3))], lambda x: np.clip(x, -0.5, 1.0))
    check(lambda x: topi.clip(x, 0, 3), [arr((3, 3), "int32")], lambda x: np.clip(x, 0, 3))


# ------------------------------------------------------------------ broadcasting binary ops
FLOAT_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
                "maximum": np.maximum, "minimum": np.minimum, "less": np.less, "greater": np.greater,
                "floor_divide": lambda a, b: np.floor(a / b), "floor_mod": lambda a, b: a - np.floor(a / b) * b,
                "mod": np.fmod}
INT_BINARY = {"add": np.add, "multiply": np.multiply, "floor_divide": np.floor_divide, "floor_mod": np.remainder,
              "mod": np.fmod, "divide": lambda a, b: np.trunc(a / b).astype(a.dtype), "equal": np.equal,
              "not_equal": np.not_equal, "less_equal": np.less_equal, "greater_equal": np.greater_equal,
              "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
              "left_shift": lambda a, b: np.left_shift(a, b % 4), "right_shift": lambda a, b: np.right_shift(a, b % 4)}


@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((2, 1, 4), (3, 1)), ((1,), (2, 2))])
def test_float_binary_broadcast(name, shapes):
    a, b = arr(shapes[0]), arr(shapes[1], lo=0.5, hi=2.0)
    outs = check(getattr(topi, name), [a, b], FLOAT_BINARY[name])
    assert outs[0].op.name == f"T_{name}"


@pytest.mark.parametrize("name", sorted(INT_BINARY))
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_binary(name, dtype):
    a, b = arr((3, 4), dtype), arr((4,), dtype, lo=0.2, hi=2.0)
    fn = getattr(topi, name)
    build = (lambda x, y: fn(x, topi.floor_mod(y, 4))) if "shift" in name else fn
    check(build, [a, b], INT_BINARY[name])


def test_logical_power_and_scalars():
    a, b = arr((2, 3), "bool"), arr((3,), "bool")
    check(topi.logical_and, [a, b], np.logical_and)
    check(topi.logical_or, [a, b], np.logical_or)
    check(topi.logical_xor, [a, b], np.logical_xor)
    check(topi.power, [arr((4,), lo=0.5, hi=2), arr((4,))], np.power)
    check(lambda x: topi.add(x, 1.5), [arr((4,))], lambda x: x + np.float32(1.5))
    check(lambda x: topi.subtract(2, x), [arr((4,), "int32")], lambda x: 2 - x)
    check(lambda x: x * 2.0 + x / 4.0, [arr((3,))], lambda x: x * 2 + x / 4)  # te.Tensor operators
    assert isinstance(topi.add(te.const(1), te.const(2)), te.Expr)  # two scalars: an expression


def test_where_and_broadcast_to():
    outs = check(topi.where, [arr((2, 3), "bool"), arr((3,)), arr((2, 1))], np.where)
    assert outs[0].op.name == "T_where"
    check(lambda c, x, y: topi.where(c, x, y), [arr((4,), "int32"), arr((4,)), arr((4,))],
          lambda c, x, y: np.where(c != 0, x, y))
    check(lambda x: topi.broadcast_to(x, (2, 3, 4)), [arr((3, 1))], lambda x: np.broadcast_to(x, (2, 3, 4)))


def test_symbolic_broadcast():
    check(topi.add, [arr((5, 3)), arr((3,))], np.add, symbolic={0: {0: "n"}})
    check(topi.multiply, [arr((5, 3)), arr((5, 1))], np.multiply, symbolic={0: {0: "n"}, 1: {0: "n"}})


# ------------------------------------------------------------------ reductions
@pytest.mark.parametrize("name, ref", [("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod),
                                       ("mean", np.mean), ("variance", np.var), ("std", np.std)])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), ([0, 2], True), (-1, True)])
def test_reductions(name, ref, axis, keepdims):
    x = arr((3, 4, 2), lo=0.5, hi=1.5)
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    outs = check(lambda p: getattr(topi, name)(p, axis, keepdims), [x],
                 lambda v: ref(v, axis=np_axis, keepdims=keepdims), rtol=2e-5)
    if name in ("sum", "max", "min", "prod"):
        assert outs[0].op.name == "p0_red"


@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_integer_and_double_reductions(dtype):
    x = arr((4, 5), dtype)
    check(lambda p: topi.sum(p, 0), [x], lambda v: v.sum(0))
    check(lambda p: topi.max(p), [x], lambda v: v.max())


@pytest.mark.parametrize("name, ref", [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize("axis", [None, 0, 2])
def test_arg_reductions(name, ref, axis):
    x = np.round(arr((3, 4, 5)), 1)  # ties: the first index wins, as numpy
    outs = check(lambda p: getattr(topi, name)(p, axis), [x], lambda v: ref(v, axis=axis))
    assert outs[0].op.name == "p0_red" and outs[0].dtype == "int64"
    check(lambda p: getattr(topi, name)(p, axis, True), [x], lambda v: np.expand_dims(ref(v, axis=axis), axis)
          if axis is not None else ref(v).reshape(1, 1, 1))


def test_symbolic_reduction():
    check(lambda p: topi.sum(p, 0), [arr((6, 3))], lambda v: v.sum(0), symbolic={0: {0: "n"}})
    check(lambda p: topi.mean(p, 1), [arr((6, 3))], lambda v: v.mean(1), symbolic={0: {0: "n", 1: "m"}})
    check(lambda p: topi.argmax(p, 0), [arr((6, 3))], lambda v: v.argmax(0), symbolic={0: {0: "n"}})


# ------------------------------------------------------------------ shape operators
def test_transpose_reshape_expand_squeeze_flatten():
    x = arr((2, 3, 4))
    outs = check(lambda p: topi.transpose(p, [2, 0, 1]), [x], lambda v: v.transpose(2, 0, 1))
    assert outs[0].op.name == "T_transpose"
    check(topi.transpose, [x], lambda v: v.transpose())
    check(lambda p: topi.reshape(p, (4, 6)), [x], lambda v: v.reshape(4, 6))
    check(lambda p: topi.reshape(p, (2, -1)), [x], lambda v: v.reshape(2, -1))
    check(lambda p: topi.reshape(p, (24,)), [x], lambda v: v.reshape(24))
    check(lambda p: topi.expand_dims(p, [1, -1]), [x], lambda v: v[:, None, :, :, None])
    check(lambda p: topi.squeeze(p), [arr((1, 3, 1))], lambda v: v.squeeze())
    check(lambda p: topi.squeeze(p, [2]), [arr((1, 3, 1))], lambda v: v.squeeze(2))
    check(topi.flatten, [x], lambda v: v.reshape(-1))
    check(lambda p: topi.reshape(p, (te.const(3, "int64") * p.shape[0],)), [arr((4, 3))], lambda v: v.reshape(-1),
          symbolic={0: {0: "n"}})


def test_concatenate_split():
    a, b, c = arr((2, 3)), arr((2, 1)), arr((2, 2))
    outs = check(lambda x, y, z: topi.concatenate([x, y, z], 1), [a, b, c], lambda x, y, z: np.concatenate([x, y, z], 1))
    assert outs[0].op.name == "T_concat"
    check(lambda x, y: topi.concatenate([x, y], None), [a, c], lambda x, y: np.concatenate([x.ravel(), y.ravel()]))
    check(lambda x: topi.split(x, 3, 1), [arr((2, 7))], lambda v: (v[:, :3], v[:, 3:6], v[:, 6:]))
    check(lambda x: topi.split(x, [1, 5], 0), [arr((6, 2))], lambda v: tuple(np.split(v, [1, 5], 0)))
    check(lambda x, y: topi.concatenate([x, y], 0), [arr((3, 2)), arr((2, 2))], lambda x, y: np.concatenate([x, y]),
          symbolic={0: {0: "n"}})


@pytest.mark.parametrize("begin, end, strides, axes, ref", [
    ([1], [3], None, [0], lambda v: v[1:3]),
    ([0, 3], [4, 0], [2, -1], [0, 1], lambda v: v[0:4:2, 3:0:-1]),
    ([-3], [100], [1], [1], lambda v: v[:, -3:100]),
    ([5], [-10], [-2], [1], lambda v: v[:, 5:-10:-2]),
])
def test_strided_slice(begin, end, strides, axes, ref):
    outs = check(lambda p: topi.strided_slice(p, begin, end, strides, axes), [arr((5, 6))], ref)
    assert outs[0].op.name == "T_strided_slice_with_axes"


def test_strided_slice_symbolic():
    check(lambda p: topi.strided_slice(p, [1], [-1], [1], [0]), [arr((6, 2))], lambda v: v[1:-1],
          symbolic={0: {0: "n"}})
    check(lambda p: topi.strided_slice(p, [2], [100], [2], [0]), [arr((7, 2))], lambda v: v[2:100:2],
          symbolic={0: {0: "n"}})


@pytest.mark.parametrize("mode, indices, ref", [
    ("fast", np.array([[0, 2], [1, 1]], "int64"), lambda v, i: np.take(v, i, axis=1)),
    ("clip", np.array([-3, 9], "int32"), lambda v, i: np.take(v, np.clip(i, 0, 3), axis=1)),
    ("wrap", np.array([-1, 5], "int64"), lambda v, i: np.take(v, i % 4, axis=1)),
])
def test_take(mode, indices, ref):
    outs = check(lambda p, i: topi.take(p, i, 1, mode), [arr((3, 4)), indices], ref)
    assert outs[0].op.name == "T_take"
    check(lambda p, i: topi.take(p, i), [arr((3, 4)), np.array([11, 0], "int64")], lambda v, i: v.ravel()[i])
    check(lambda p, i: topi.take(p, i, 0, "nan"), [arr((3,)), np.array([1, 5], "int64")],
          lambda v, i: np.where(i < 3, v[np.clip(i, 0, 2)], np.nan))


def test_creation():
    with te.index_dtype("int64"):
        outs = [topi.full((2, 3), "float32", 1.5), topi.full((4,), "int32", 7),
                topi.arange(2, 11, 3, "int64"), topi.arange(0.5, 2.0, 0.5, "float32")]
    got = te.evaluate(outs, {})
    np.testing.assert_array_equal(got[0], np.full((2, 3), 1.5, "float32"))
    np.testing.assert_array_equal(got[1], np.full((4,), 7, "int32"))
    np.testing.assert_array_equal(got[2], np.arange(2, 11, 3))
    np.testing.assert_allclose(got[3], np.arange(0.5, 2.0, 0.5))
    assert outs[0].op.name == "T_full" and outs[2].op.name == "T_arange"
    check(lambda x: topi.full_like(x, 3), [arr((2, 2), "int32")], lambda v: np.full_like(v, 3))
    check(lambda v: topi.full((2,), "float32", v), [np.array(4.0, "float32")], lambda v: np.full(2, 4.0, "float32"))
    check(lambda a, b, c: topi.ewise_fma(a, b, c), [arr((3,)), arr((3,)), arr((3,))], lambda a, b, c: a * b + c)


# ------------------------------------------------------------------ linear algebra
@pytest.mark.parametrize("sa, sb", [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2)),
                                    ((7, 3, 4), (4, 6))])
def test_matmul(sa, sb):
    outs = check(topi.matmul, [arr(sa), arr(sb)], np.matmul, rtol=1e-4)
    assert outs[0].op.name == "matmul"


def test_matmul_symbolic_and_out_dtype():
    check(topi.matmul, [arr((5, 4)), arr((4, 3))], np.matmul, symbolic={0: {0: "n"}}, rtol=1e-4)
    check(lambda a, b: topi.matmul(a, b, "float64"), [arr((2, 3)), arr((3, 2))],
          lambda a, b: a.astype("float64") @ b.astype("float64"))


def test_dense_and_nn_matmul():
    outs = check(topi.nn.dense, [arr((3, 8)), arr((5, 8))], lambda x, w: x @ w.T, rtol=1e-4)
    assert outs[0].op.name == "T_matmul_NT" and [a.var.name for a in outs[0].op.axis] == ["i", "j"]
    check(lambda x, w, b: topi.nn.dense(x, w, b), [arr((3, 8)), arr((5, 8)), arr((5,))], lambda x, w, b: x @ w.T + b,
          rtol=1e-4)
    check(topi.nn.dense, [arr((2, 3, 8)), arr((5, 8))], lambda x, w: x @ w.T, rtol=1e-4)
    for ta, tb in [(False, False), (True, False), (True, True)]:
        a = arr((4, 3)) if ta else arr((3, 4))
        b = arr((5, 4)) if tb else arr((4, 5))
        outs = check(lambda x, y: topi.nn.matmul(x, y, transpose_a=ta, transpose_b=tb), [a, b],
                     lambda x, y: (x.T if ta else x) @ (y.T if tb else y), rtol=1e-4)
        assert outs[0].op.name == f"T_matmul_{'T' if ta else 'N'}{'T' if tb else 'N'}"


# ------------------------------------------------------------------ nn
def _softmax(v, axis):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_activations():
    x = arr((3, 4))
    check(topi.nn.relu, [x], lambda v: np.maximum(v, 0))
    check(lambda p: topi.nn.leaky_relu(p, 0.1), [x], lambda v: np.where(v > 0, v, 0.1 * v))
    check(topi.nn.gelu, [x], lambda v: 0.5 * v * (1 + _erf(v / np.sqrt(2))))
    check(topi.nn.gelu_tanh, [x], lambda v: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3))))
    check(topi.nn.silu, [x], lambda v: v / (1 + np.exp(-v)))
    check(topi.nn.dropout, [x], lambda v: v)
    check(topi.nn.relu, [arr((4,), "int32")], lambda v: np.maximum(v, 0))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax(axis):
    x = arr((3, 4, 5))
    outs = check(lambda p: topi.nn.softmax(p, axis), [x], lambda v: _softmax(v, axis))
    assert outs[0].op.name == "T_softmax_norm"
    check(lambda p: topi.nn.log_softmax(p, axis), [x], lambda v: np.log(_softmax(v, axis)), rtol=1e-4, atol=1e-5)


def test_softmax_symbolic():
    check(lambda p: topi.nn.softmax(p, 1), [arr((2, 6))], lambda v: _softmax(v, 1), symbolic={0: {1: "n"}})


def test_layer_norm():
    x, g, b = arr((2, 3, 4)), arr((4,)), arr((4,))

    def ref(v, gg, bb, axes):
        m = v.mean(axis=axes, keepdims=True)
        return (v - m) / np.sqrt(v.var(axis=axes, keepdims=True) + 1e-5) * gg + bb

    outs = check(lambda p, q, r: topi.nn.layer_norm(p, q, r, [-1]), [x, g, b], lambda v, q, r: ref(v, q, r, -1),
                 rtol=1e-4, atol=1e-5)
    assert outs[0].op.name == "T_layer_norm"
    check(lambda p, q, r: topi.nn.layer_norm(p, q, r, [1, 2]), [x, arr((3, 4)), arr((3, 4))],
          lambda v, q, r: ref(v, q, r, (1, 2)), rtol=1e-4, atol=1e-5)
    check(lambda p, q, r: topi.nn.layer_norm(p, q, r, [0, 1, 2]), [x, arr((2, 3, 4)), arr((2, 3, 4))],
          lambda v, q, r: ref(v, q, r, (0, 1, 2)), rtol=1e-4, atol=1e-5)
    check(lambda p, q, r: topi.nn.layer_norm(p, q, r, [1]), [arr((5, 4)), arr((4,)), arr((4,))],
          lambda v, q, r: ref(v, q, r, 1), symbolic={0: {0: "n"}}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm(training):
    x, g, b, m, v = arr((2, 3, 4, 4)), arr((3,)), arr((3,)), arr((3,)), arr((3,), lo=0.5, hi=2.0)

    def ref(x, g, b, m, v):
        if training:
            mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
            new_m, new_v = m * 0.9 + mean * 0.1, v * 0.9 + var * 0.1
        else:
            mean, var, new_m, new_v = m, v, m, v
        r = lambda t: t[None, :, None, None]  # noqa: E731
        return (x - r(mean)) / np.sqrt(r(var) + 1e-5) * r(g) + r(b), new_m, new_v

    check(lambda *ps: topi.nn.batch_norm(*ps, axis=1, training=training), [x, g, b, m, v], ref,
          rtol=1e-4, atol=1e-5)


def _conv_ref(x, w, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (h + pad[0] + pad[2] - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + pad[1] + pad[3] - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow), "float64")
    for f in range(o):
        g = f // (o // groups)
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dil:i * dil + stride * (oh - 1) + 1:stride,
                           j * dil:j * dil + stride * (ow - 1) + 1:stride]
                out[:, f] += np.einsum("nchw,c->nhw", patch, w[f, :, i, j])
    return out.astype(x.dtype)


@pytest.mark.parametrize("stride, pad, dil, groups", [(1, (0, 0, 0, 0), 1, 1), (2, (1, 1, 1, 1), 1, 1),
                                                      (1, (1, 2, 0, 1), 2, 2), (2, (0, 0, 0, 0), 1, 4)])
def test_conv2d(stride, pad, dil, groups):
    x, w = arr((2, 4, 8, 7)), arr((8, 4 // groups, 3, 3))
    outs = check(lambda p, q: topi.nn.conv2d(p, q, stride, pad, dil, groups), [x, w],
                 lambda a, b: _conv_ref(a, b, stride, pad, dil, groups), rtol=1e-4, atol=1e-4)
    assert outs[0].op.name == ("group_conv2d_nchw" if groups > 1 else "conv2d_nchw")


def test_conv2d_nhwc_layout():
    x, w = arr((1, 6, 5, 3)), arr((3, 3, 3, 4))  # NHWC data, HWIO kernel
    check(lambda p, q: topi.nn.conv2d(p, q, 1, 1, 1, 1, "NHWC", "HWIO"), [x, w],
          lambda a, b: _conv_ref(a.transpose(0, 3, 1, 2), b.transpose(3, 2, 0, 1), 1, (1, 1, 1, 1), 1, 1)
          .transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


def _pool_ref(x, k, s, pad, kind, ceil=False, include_pad=False):
    n, c, h, w = x.shape
    oh = (h + pad[0] + pad[2] - k + ((s - 1) if ceil else 0)) // s + 1
    ow = (w + pad[1] + pad[3] - k + ((s - 1) if ceil else 0)) // s + 1
    out = np.zeros((n, c, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s - pad[0], j * s - pad[1]
            win = x[:, :, max(h0, 0):min(h0 + k, h), max(w0, 0):min(w0 + k, w)]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = ((min(h0 + k, h + pad[2]) - max(h0, -pad[0])) * (min(w0 + k, w + pad[3]) - max(w0, -pad[1]))
                       if include_pad else win.shape[2] * win.shape[3])
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("k, s, pad, ceil, include", [(2, 2, (0, 0, 0, 0), False, False),
                                                      (3, 2, (1, 1, 1, 1), False, False),
                                                      (3, 2, (1, 1, 1, 1), False, True),
                                                      (2, 2, (0, 0, 0, 0), True, False),
                                                      (3, 1, (1, 0, 1, 0), False, True)])
def test_pool2d(kind, k, s, pad, ceil, include):
    x = arr((2, 3, 7, 7))
    outs = check(lambda p: topi.nn.pool2d(p, (k, k), (s, s), (1, 1), pad, kind, ceil, "NCHW", include), [x],
                 lambda v: _pool_ref(v, k, s, pad, kind, ceil, include))
    assert outs[0].op.name == ("pool_max" if kind == "max" else "pool_avg")


def test_pool2d_nhwc_and_symbolic():
    x = arr((1, 6, 6, 2))
    check(lambda p: topi.nn.pool2d(p, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max", layout="NHWC"), [x],
          lambda v: _pool_ref(v.transpose(0, 3, 1, 2), 2, 2, (0, 0, 0, 0), "max").transpose(0, 2, 3, 1))
    check(lambda p: topi.nn.pool2d(p, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "avg"), [arr((1, 2, 6, 4))],
          lambda v: _pool_ref(v, 2, 2, (0, 0, 0, 0), "avg"), symbolic={0: {2: "h"}})


def _adaptive_ref(x, oh, ow, kind="avg"):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, (i * h) // oh:-((-(i + 1) * h) // oh), (j * w) // ow:-((-(j + 1) * w) // ow)]
            out[:, :, i, j] = win.mean(axis=(2, 3)) if kind == "avg" else win.max(axis=(2, 3))
    return out


@pytest.mark.parametrize("out_size", [(1, 1), (2, 3), (3, 5), (7, 7)])
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool(out_size, kind):
    x = arr((1, 2, 7, 6))
    outs = check(lambda p: topi.nn.adaptive_pool(p, out_size, kind), [x], lambda v: _adaptive_ref(v, *out_size, kind))
    assert outs[0].op.name == f"adaptive_pool_{kind}"


def test_adaptive_pool_symbolic():
    check(lambda p: topi.nn.adaptive_pool(p, (2, 2)), [arr((1, 1, 5, 4))], lambda v: _adaptive_ref(v, 2, 2),
          symbolic={0: {2: "h"}})


def test_pad():
    outs = check(lambda p: topi.nn.pad(p, [0, 1], [2, 0], 5.0), [arr((2, 3))],
                 lambda v: np.pad(v, ((0, 2), (1, 0)), constant_values=5.0))
    assert outs[0].op.name == "PadInput"
