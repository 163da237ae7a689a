"""The op registry: struct-info inference of every op on static and symbolic shapes, the errors of
bad calls (message and offending argument), attribute names, order, defaults and normalisation."""
import numpy as np
import pytest

from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.arith import IndexMap, format_shape, int64
from tvmlite.ir.module import GlobalVar
from tvmlite.ir.op import OpError, OpPattern, get_op_def, list_ops, make_call, normalize_attrs

n = tir.Var("n", "int64")
m = tir.Var("m", "int64")
SYM = {"n": n, "m": m, "c": tir.Var("c", "int64"), "h": tir.Var("h", "int64"),
       "w": tir.Var("w", "int64"), "f": tir.Var("f", "int64"), "kh": tir.Var("kh", "int64"),
       "kw": tir.Var("kw", "int64")}


# ---------------------------------------------------------------- building blocks
def dims(shape):
    return tuple(SYM[d] if isinstance(d, str) else int64(d) for d in shape)


def T(shape, dtype="float32"):
    """A tensor variable; names in the shape are the shared symbolic variables."""
    if isinstance(shape, int):
        return rx.Var("t", rx.TensorStructInfo(None, dtype, shape))
    return rx.Var("t", rx.TensorStructInfo(dims(shape), dtype))


def S(*values):
    return rx.ShapeExpr(dims(values))


def P(v, dtype="int64"):
    return rx.PrimValue(tir.IntImm(dtype, v) if isinstance(v, int) else v)


def ints(*values):
    """A tuple of R.prim_value integers (strided_slice's axes/begin/end/strides)."""
    return rx.Tuple(tuple(P(v) for v in values))


def call(op, *args, sinfo_args=(), **attrs):
    """Infer through make_call; call_tir's GlobalVar callee is not an Expr, so it goes directly."""
    if any(isinstance(a, GlobalVar) for a in args):
        opdef = get_op_def(f"relax.{op}")
        c = rx.Call(opdef.op, args, normalize_attrs(opdef, attrs), tuple(sinfo_args))
        return opdef.infer(c)
    return make_call(f"relax.{op}", args, attrs, sinfo_args).struct_info


def fmt(sinfo):
    """Compact text of a struct info: float32(n, 4), float32[ndim=2], (a, b), shape(2, 3), object."""
    if isinstance(sinfo, rx.TensorStructInfo):
        return sinfo.dtype + (format_shape(sinfo.shape) if sinfo.shape is not None else f"[ndim={sinfo.ndim}]")
    if isinstance(sinfo, rx.TupleStructInfo):
        return "(" + ", ".join(fmt(f) for f in sinfo.fields) + ")"
    if isinstance(sinfo, rx.ShapeStructInfo):
        return "shape" + (format_shape(sinfo.values) if sinfo.values is not None else f"[ndim={sinfo.ndim}]")
    if isinstance(sinfo, rx.PrimStructInfo):
        return f"prim {sinfo.dtype}"
    return type(sinfo).__name__


def check(op, args, expected, sinfo_args=(), **attrs):
    assert fmt(call(op, *args, sinfo_args=sinfo_args, **attrs)) == expected


def bad(op, args, message, arg, sinfo_args=(), **attrs):
    with pytest.raises(OpError) as info:
        call(op, *args, sinfo_args=sinfo_args, **attrs)
    assert message in info.value.message, info.value.message
    assert info.value.arg == arg


TESTED: set[str] = set()


def covers(*names):
    """Mark the ops a test covers; test_every_op_is_tested checks nothing is left out."""
    TESTED.update(names)

    def wrap(fn):
        return fn

    return wrap


# ---------------------------------------------------------------- unary
FLOAT_UNARY = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "log", "rsqrt",
               "sigmoid", "sin", "sinh", "sqrt", "tan", "tanh", "erf", "nn.gelu", "nn.gelu_tanh", "nn.silu",
               "nn.leakyrelu"]
ANY_UNARY = ["abs", "ceil", "floor", "negative", "round", "sign", "square", "trunc", "logical_not", "nn.relu"]
CHECK_UNARY = ["isnan", "isinf", "isfinite"]
covers(*FLOAT_UNARY, *ANY_UNARY, *CHECK_UNARY, "bitwise_not")


@pytest.mark.parametrize("op", FLOAT_UNARY + ANY_UNARY)
def test_unary_keeps_shape_and_dtype(op):
    check(op, [T((2, 3))], "float32(2, 3)")
    check(op, [T(("n", 4))], "float32(n, 4)")
    check(op, [T(3)], "float32[ndim=3]")
    bad(op, [S(2, 3)], "must be a tensor, got a shape (R.Shape)", 0)


@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_float_unary_rejects_int(op):
    bad(op, [T((2,), "int32")], f"R.{op}: expected a float tensor, got dtype int32", 0)


@pytest.mark.parametrize("op", ANY_UNARY)
def test_any_dtype_unary_accepts_int(op):
    check(op, [T(("n",), "int32")], "int32(n,)")


@pytest.mark.parametrize("op", CHECK_UNARY)
def test_check_unary_gives_bool(op):
    check(op, [T(("n", 2))], "bool(n, 2)")
    bad(op, [rx.Tuple(())], "must be a tensor", 0)


def test_unary_on_prim_value():
    check("exp", [P(tir.FloatImm("float32", 1.0))], "prim float32")


def test_bitwise_not():
    check("bitwise_not", [T(("n",), "int8")], "int8(n,)")
    bad("bitwise_not", [T((2,))], "R.bitwise_not: expected an integer tensor, got dtype float32", 0)


@covers("astype")
def test_astype():
    check("astype", [T(("n", 3))], "float16(n, 3)", dtype="float16")
    bad("astype", [T((2,))], "attribute 'dtype' of R.astype: expected a dtype", "dtype", dtype="float33")
    bad("astype", [T((2,))], "R.astype needs the attribute 'dtype'", "dtype")


@covers("clip")
def test_clip():
    check("clip", [T(("n", 3)), P(0), P(6)], "float32(n, 3)")
    bad("clip", [T((2,)), T(()), P(6)], "R.clip: the min bound must be a scalar (R.prim_value)", 1)


# ---------------------------------------------------------------- binary
ARITH = ["add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum", "mod",
         "floor_mod", "logical_and", "logical_or", "logical_xor"]
COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
covers(*ARITH, *COMPARE, *BITWISE)


@pytest.mark.parametrize("op", ARITH)
def test_binary_broadcast(op):
    check(op, [T((2, 3)), T((3,))], "float32(2, 3)")
    check(op, [T(("n", 128)), T((128,))], "float32(n, 128)")
    check(op, [T(("n", 1)), T((1, "m"))], "float32(n, m)")
    check(op, [T(("n", 4)), T(("m", 4))], "float32[ndim=2]")  # n vs m: decided at run time
    check(op, [T(2), T(3)], "float32[ndim=3]")
    check(op, [T((2, 3)), T(-1)], "float32[ndim=-1]")
    bad(op, [T(("n", 128)), T((10,))], f"R.{op}: cannot broadcast shapes (n, 128) and (10,)", 1)
    bad(op, [T((2,)), T((2,), "int32")], f"R.{op}: dtypes differ: float32 vs int32", 1)


@pytest.mark.parametrize("op", COMPARE)
def test_comparison_gives_bool(op):
    check(op, [T(("n", 3)), T((1, 3))], "bool(n, 3)")
    bad(op, [T((2,)), S(2)], "argument x2 must be a tensor", 1)


@pytest.mark.parametrize("op", BITWISE)
def test_bitwise_needs_integers(op):
    check(op, [T(("n",), "int32"), T((1,), "int32")], "int32(n,)")
    bad(op, [T((2,)), T((2,))], "expected an integer tensor, got dtype float32", 0)


def test_binary_with_scalars():
    check("add", [T(("n",)), P(tir.FloatImm("float32", 1.0))], "float32(n,)")
    check("add", [P(1), P(2)], "prim int64")
    check("add", [T((2,), "void"), T((2,), "float32")], "void(2,)")


@covers("where")
def test_where():
    check("where", [T((2, 1), "bool"), T((2, 3)), T((3,))], "float32(2, 3)")
    check("where", [T(("n", 1), "bool"), T((1, "m")), T(("n", "m"))], "float32(n, m)")
    bad("where", [T((2,)), T((2,)), T((2,))], "R.where: the condition must be a bool tensor", 0)
    bad("where", [T((2,), "bool"), T((2,)), T((2,), "int32")], "R.where: dtypes differ: float32 vs int32", 2)
    bad("where", [T((2,), "bool"), T((3,)), T((2,))], "cannot broadcast shapes (2,) and (3,)", 1)


@covers("ewise_fma")
def test_ewise_fma():
    check("ewise_fma", [T((3, 4)), T((3, 4)), T((3, 4))], "float32(3, 4)")
    check("ewise_fma", [T(("n", 4)), T(("n", 4)), T(2)], "float32(n, 4)")
    bad("ewise_fma", [T((3, 4)), T((3, 5)), T((3, 4))],
        "R.ewise_fma: all inputs need the same shape, got (3, 4) and (3, 5)", 1)


# ---------------------------------------------------------------- linear algebra
@covers("matmul")
def test_matmul():
    check("matmul", [T(("n", 784)), T((784, 128))], "float32(n, 128)", out_dtype="void")
    check("matmul", [T((2, 1, 3, 4)), T((5, 4, 6))], "float32(2, 5, 3, 6)")
    check("matmul", [T((4,)), T((4, 6))], "float32(6,)")
    check("matmul", [T((3, 4)), T((4,))], "float32(3,)")
    check("matmul", [T((4,)), T((4,))], "float32()")
    check("matmul", [T((2, 4), "int8"), T((4, 3), "int8")], "int32(2, 3)", out_dtype="int32")
    check("matmul", [T(-1), T((4, 3))], "float32[ndim=-1]")
    check("matmul", [T(("n", "m")), T(("m", 5))], "float32(n, 5)")
    bad("matmul", [T(("n", 784)), T((128, 128))], "R.matmul: inner dimensions differ: 784 vs 128", 1)
    bad("matmul", [T(()), T((4,))], "both inputs need at least one dimension", 0)
    bad("matmul", [T((2, 2)), T((2, 2), "float16")], "R.matmul: dtypes differ: float32 vs float16", 1)


def test_matmul_keeps_symbolic_var_identity():
    out = call("matmul", T(("n", 784)), T((784, 128)))
    assert out.shape[0] is n


@covers("nn.dense")
def test_dense_legacy():
    check("nn.dense", [T((1, 784)), T((128, 784))], "float32(1, 128)")
    check("nn.dense", [T(("n", 784)), T((128, 784))], "float32(n, 128)")
    bad("nn.dense", [T((1, 784)), T((128, 10))], "R.nn.dense: inner dimensions differ: 784 vs 10", 1)
    bad("nn.dense", [T((1, 784)), T((784,))], "the weight must be 2-D", 1)


# ---------------------------------------------------------------- manipulation
@covers("permute_dims")
def test_permute_dims():
    check("permute_dims", [T((784, 128))], "float32(128, 784)", axes=None)
    check("permute_dims", [T(("n", 3, 4))], "float32(n, 4, 3)", axes=[0, 2, 1])
    check("permute_dims", [T(("n", 3, 4))], "float32(4, n, 3)", axes=[-1, 0, 1])
    check("permute_dims", [T(-1)], "float32[ndim=2]", axes=[1, 0])
    bad("permute_dims", [T((2, 3))], "R.permute_dims: axes [0, 0] repeat an axis", "axes", axes=[0, 0])
    bad("permute_dims", [T((2, 3))], "axes [0, 1, 2] has 3 entries for a tensor of 2 dimensions", "axes",
        axes=[0, 1, 2])


@covers("reshape")
def test_reshape():
    check("reshape", [T((2, 3)), S(3, 2)], "float32(3, 2)")
    check("reshape", [T(("n", 4)), S(-1)], "float32(n * 4,)")
    check("reshape", [T((2, 6)), S(-1, 3)], "float32(4, 3)")
    check("reshape", [T(("n", 4)), S("n", 2, 2)], "float32(n, 2, 2)")
    check("reshape", [T(2), rx.Var("s", rx.ShapeStructInfo(None, 3))], "float32[ndim=3]")
    bad("reshape", [T((2, 3)), S(4, 2)], "R.reshape: cannot reshape (2, 3) (6 elements) into (4, 2) (8 elements)", 1)
    bad("reshape", [T((2, 3)), S(-1, -1)], "may contain one -1", 1)
    bad("reshape", [T((2, 3)), S(-1, 4)], "cannot reshape (2, 3) (6 elements) into (-1, 4)", 1)
    bad("reshape", [T((2, 3)), T((2,))], "argument shape must be a shape", 1)
    unknown = rx.Var("u", rx.TensorStructInfo(None, "float32", 2))
    bad("reshape", [unknown, S(-1)], "a -1 in the new shape needs the input's shape", 1)


@covers("expand_dims")
def test_expand_dims():
    check("expand_dims", [T((2, 3))], "float32(1, 2, 3, 1)", axis=[0, -1])
    check("expand_dims", [T(("n",))], "float32(n, 1)", axis=1)
    check("expand_dims", [T(2)], "float32[ndim=3]", axis=[0])
    bad("expand_dims", [T((2, 3))], "R.expand_dims: axis 5 is out of range for a tensor of 3 dimensions", "axis",
        axis=[5])


@covers("squeeze")
def test_squeeze():
    check("squeeze", [T((1, 3, 1))], "float32(3,)", axis=None)
    check("squeeze", [T((1, 3, 1))], "float32(3, 1)", axis=[0])
    check("squeeze", [T(("n", 1))], "float32[ndim=-1]")
    check("squeeze", [T(("n", 1))], "float32(n,)", axis=[1])
    bad("squeeze", [T((1, 3, 1))], "R.squeeze: cannot squeeze axis 1 of (1, 3, 1): its size is 3, expected 1",
        "axis", axis=[1])


@covers("flatten")
def test_flatten():
    check("flatten", [T((2, 3))], "float32(6,)")
    check("flatten", [T(("n", 4))], "float32(n * 4,)")
    check("flatten", [T(())], "float32(1,)")
    bad("flatten", [S(2)], "argument x must be a tensor", 0)


@covers("concat")
def test_concat():
    check("concat", [rx.Tuple((T((2, 3)), T((4, 3))))], "float32(6, 3)", axis=0)
    check("concat", [rx.Tuple((T(("n", 3)), T(("m", 3))))], "float32(m + n, 3)")
    check("concat", [rx.Tuple((T((2, 3)), T((2, 1))))], "float32(2, 4)", axis=-1)
    check("concat", [rx.Tuple((T((2, 3)), T((4,))))], "float32(10,)", axis=None)
    bad("concat", [rx.Tuple((T((2, 3)), T((2, 4))))],
        "tensors 0 and 1 have shapes (2, 3) and (2, 4), which differ outside axis 0", 0, axis=0)
    bad("concat", [T((2,))], "R.concat: expected a tuple of tensors, got a tensor", 0)
    bad("concat", [rx.Tuple((T((2,)), T((2, 2))))], "need the same number of dimensions", 0)


@covers("split")
def test_split():
    check("split", [T((10, 4))], "(float32(5, 4), float32(5, 4))", indices_or_sections=2)
    check("split", [T((10, 4))], "(float32(4, 4), float32(4, 4), float32(2, 4))", indices_or_sections=3)
    check("split", [T((10, 4))], "(float32(2, 4), float32(3, 4), float32(5, 4))", indices_or_sections=[2, 5])
    check("split", [T((4, "n"))], "(float32(4, (n + 1) // 2), float32(4, n - (n + 1) // 2))",
          indices_or_sections=2, axis=1)
    check("split", [T((10, 4))], "(float32(10, 4))", indices_or_sections=1)
    bad("split", [T((10, 4))], "the number of sections must be positive", "indices_or_sections",
        indices_or_sections=0)
    bad("split", [T((10, 4))], "axis 2 is out of range", "axis", indices_or_sections=2, axis=2)
    bad("split", [T((1, 4))], "axis 0 of length 1 cannot be split into 3 sections", "indices_or_sections",
        indices_or_sections=3)


@covers("strided_slice")
def test_strided_slice():
    check("strided_slice", [T((8, 9, 10, 10)), ints(0, 1, 3), ints(1, 0, 8), ints(8, 9, 0), ints(2, 1, -3)],
          "float32(4, 9, 10, 3)")
    check("strided_slice", [T((10, "n")), ints(0), ints(1), ints(8), ints(3)], "float32(3, n)")
    check("strided_slice", [T(("n", 4)), ints(0), ints(1), ints(3)], "float32(T.min(n, 3) - T.min(n, 1), 4)")
    check("strided_slice", [T(("n", 4)), ints(0), ints(1), ints(3)], "float32(2, 4)", assume_inbound=True)
    bad("strided_slice", [T((8,)), ints(0), ints(1), ints(8), ints(0)], "a slice stride must not be 0", 4)
    bad("strided_slice", [T((8,)), ints(0), ints(1, 2), ints(8)], "begin has 2 values for 1 axes", 2)
    bad("strided_slice", [T((8,)), ints(1), ints(1), ints(8)], "axis 1 is out of range", 1)


@covers("take")
def test_take():
    check("take", [T((5, 4)), T((3,), "int64")], "float32(3, 4)", axis=0)
    check("take", [T((5,)), T(("n", 2), "int32")], "float32(n, 2)")
    check("take", [T(("n", 4)), T(("m",), "int64")], "float32(n, m)", axis=-1)
    bad("take", [T((5, 4)), T((3,))], "R.take: expected an integer tensor, got dtype float32", 1, axis=0)
    bad("take", [T((5, 4)), T((3,), "int64")], "without an axis the data must be 1-D, got 2-D", "axis")
    bad("take", [T((5,)), T((3,), "int64")], "expected one of", "mode", mode="raise")


@covers("broadcast_to")
def test_broadcast_to():
    check("broadcast_to", [T((1, 3)), S(4, 3)], "float32(4, 3)")
    check("broadcast_to", [T((1, "n")), S("m", "n")], "float32(m, n)")
    bad("broadcast_to", [T((2, 3)), S(4, 3)], "R.broadcast_to: cannot broadcast shape (2, 3) to (4, 3)", 1)
    bad("broadcast_to", [T((2, 3)), S(3)], "cannot broadcast a 2-D tensor to the 1-D shape (3,)", 1)


@covers("layout_transform")
def test_layout_transform():
    check("layout_transform", [T((16,))], "float32(4, 4)", index_map=lambda i: (i // 4, i % 4))
    check("layout_transform", [T(("n", 16))], "float32(16, n)", index_map=lambda i, j: (j, i))
    check("layout_transform", [T((2, 64, 56, 56))], "float32(2, 16, 56, 56, 4)",
          index_map=IndexMap.from_func(lambda a, b, c, d: (a, b // 4, c, d, b % 4)))
    bad("layout_transform", [T((2, 3))], "the index map takes 1 indices but the tensor has 2 dimensions",
        "index_map", index_map=lambda i: (i,))
    bad("layout_transform", [T((2, 3))], "expected an index map", "index_map", index_map=3)


# ---------------------------------------------------------------- reductions
STATISTICAL = ["sum", "mean", "max", "min", "prod", "variance", "std"]
covers(*STATISTICAL, "argmax", "argmin")


@pytest.mark.parametrize("op", STATISTICAL)
def test_statistical(op):
    check(op, [T((2, 3, 4))], "float32(2, 4)", axis=[1])
    check(op, [T((2, 3, 4))], "float32(2, 1, 4)", axis=[1], keepdims=True)
    check(op, [T((2, 3, 4))], "float32()")
    check(op, [T((2, 3, 4))], "float32(1, 1, 1)", keepdims=True)
    check(op, [T(("n", 4))], "float32(n,)", axis=[-1])
    check(op, [T(3)], "float32[ndim=1]", axis=[0, 2])
    check(op, [T(-1)], "float32()")
    bad(op, [T((2, 3))], f"R.{op}: axis 3 is out of range for a tensor of 2 dimensions", "axis", axis=[3])
    bad(op, [T((2, 3))], "repeat an axis", "axis", axis=[1, -1])


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reduce(op):
    check(op, [T(("n", 4))], "int64(n,)", axis=1)
    check(op, [T(("n", 4))], "int64(n, 1)", axis=1, keepdims=True)
    check(op, [T(("n", 4))], "int64()")
    bad(op, [T((2, 3))], "axis -3 is out of range", "axis", axis=-3)
    bad(op, [T((2, 3))], "expected an integer", "axis", axis=[0])


# ---------------------------------------------------------------- nn
@covers("nn.softmax", "nn.log_softmax")
@pytest.mark.parametrize("op", ["nn.softmax", "nn.log_softmax"])
def test_softmax(op):
    check(op, [T(("n", 10))], "float32(n, 10)")
    check(op, [T((2, 10))], "float32(2, 10)", axis=0)
    bad(op, [T((2, 10))], "axis 2 is out of range", "axis", axis=2)
    bad(op, [T((2,), "int32")], "expected a float tensor", 0)


@covers("nn.layer_norm")
def test_layer_norm():
    check("nn.layer_norm", [T(("n", 4, 8)), T((8,)), T((8,))], "float32(n, 4, 8)", axes=[-1])
    check("nn.layer_norm", [T(("n", 4, 8)), T((4, 8)), T((4, 8))], "float32(n, 4, 8)", axes=[1, 2])
    bad("nn.layer_norm", [T(("n", 4, 8)), T((4,)), T((8,))], "R.nn.layer_norm: gamma must have shape (8,), got (4,)",
        1, axes=[-1])
    bad("nn.layer_norm", [T((2, 8)), T((8,)), T((8,), "float16")], "dtypes differ: float32 vs float16", 2, axes=[1])
    bad("nn.layer_norm", [T((2, 8)), T((8,)), T((8,))], "needs the attribute 'axes'", "axes")


@covers("nn.batch_norm")
def test_batch_norm():
    check("nn.batch_norm", [T((2, 3, 8, 8)), T((3,)), T((3,)), T((3,)), T((3,))],
          "(float32(2, 3, 8, 8), float32(3,), float32(3,))", axis=1)
    check("nn.batch_norm", [T(("n", 8, 8, "c")), T(("c",)), T(("c",)), T(("c",)), T(("c",))],
          "(float32(n, 8, 8, c), float32(c,), float32(c,))", axis=-1)
    bad("nn.batch_norm", [T((2, 3, 8, 8)), T((4,)), T((3,)), T((3,)), T((3,))],
        "gamma must have shape (3,), got (4,)", 1, axis=1)
    bad("nn.batch_norm", [T((2, 3)), T((3,)), T((3,)), T((3,)), T((3, 1))], "moving_var must have shape (3,)", 4,
        axis=1)


@covers("nn.dropout")
def test_dropout():
    check("nn.dropout", [T(("n", 4))], "(float32(n, 4), float32(n, 4))", rate=0.2)
    bad("nn.dropout", [T((2,))], "expected a number", "rate", rate="high")


@covers("nn.conv2d")
def test_conv2d():
    check("nn.conv2d", [T((2, 3, 28, 28)), T((4, 3, 3, 3))], "float32(2, 4, 26, 26)")
    check("nn.conv2d", [T((1, 3, 32, 32)), T((16, 3, 3, 3))], "float32(1, 16, 16, 16)", padding=1, strides=2)
    check("nn.conv2d", [T(("n", "c", "h", "w")), T(("f", "c", "kh", "kw"))], "float32(n, f, h - kh + 1, w - kw + 1)")
    check("nn.conv2d", [T((2, 28, 28, 3)), T((4, 3, 3, 3))], "float32(2, 26, 26, 4)",
          data_layout="NHWC", kernel_layout="OHWI")
    check("nn.conv2d", [T((2, 3, 28, 28)), T((4, 3, 3, 3))], "float32(2, 26, 26, 4)", out_layout="NHWC")
    check("nn.conv2d", [T((2, 4, 28, 28)), T((8, 2, 3, 3))], "float32(2, 8, 14, 14)", groups=2, strides=2, padding=1)
    check("nn.conv2d", [T((2, 3, 28, 28), "int8"), T((4, 3, 3, 3), "int8")], "int32(2, 4, 26, 26)",
          out_dtype="int32")
    check("nn.conv2d", [T((1, 3, 10, 10)), T((4, 3, 3, 3))], "float32(1, 4, 6, 6)", dilation=2)
    bad("nn.conv2d", [T((1, 3, 32, 32)), T((16, 4, 3, 3))],
        "R.nn.conv2d: the data has 3 input channels but the weight expects 4 x groups 1", 1)
    bad("nn.conv2d", [T((1, 3, 32)), T((16, 3, 3, 3))], "expected a 4-D tensor (NCHW), got 3-D", 0)
    bad("nn.conv2d", [T((1, 3, 32, 32)), T((16, 3, 3, 3))], "unsupported layout 'NCDHW'", "data_layout",
        data_layout="NCDHW")
    # Packed layouts are supported (tests/test_layout.py); the rank must match the layout's.
    bad("nn.conv2d", [T((1, 3, 32, 32)), T((16, 3, 3, 3))], "expected a 5-D tensor (NCHW4c), got 4-D", 0,
        data_layout="NCHW4c")
    bad("nn.conv2d", [T((1, 3, 32, 32)), T((16, 3, 3, 3))], "expected 1, 2 or 4 integers, got 3", "padding",
        padding=[1, 1, 1])


@covers("nn.max_pool2d", "nn.avg_pool2d")
@pytest.mark.parametrize("op", ["nn.max_pool2d", "nn.avg_pool2d"])
def test_pool2d(op):
    check(op, [T((1, 3, 32, 32))], "float32(1, 3, 16, 16)", pool_size=2, strides=2)
    check(op, [T((1, 64, 112, 112))], "float32(1, 64, 56, 56)", pool_size=[3, 3], strides=[2, 2], padding=1)
    check(op, [T((1, 3, 5, 5))], "float32(1, 3, 3, 3)", pool_size=2, strides=2, ceil_mode=True)
    check(op, [T((1, 3, 5, 5))], "float32(1, 3, 2, 2)", pool_size=2, strides=2)
    check(op, [T(("n", "c", "h", "w"))], "float32(n, c, (h - 1) // 2 + 1, (w - 1) // 2 + 1)",
          pool_size=3, strides=2, padding=1)
    check(op, [T((2, 26, 26, 4))], "float32(2, 13, 13, 4)", pool_size=2, strides=2, layout="NHWC")
    bad(op, [T((1, 3, 32))], "expected a 4-D tensor (NCHW), got 3-D", 0)
    bad(op, [T((1, 3, 32, 32))], "expected 1 or 2 integers, got 3", "pool_size", pool_size=[1, 2, 3])


@covers("nn.adaptive_avg_pool2d")
def test_adaptive_avg_pool2d():
    check("nn.adaptive_avg_pool2d", [T(("n", 512, 7, 7))], "float32(n, 512, 1, 1)", output_size=1)
    check("nn.adaptive_avg_pool2d", [T(("n", 512, "h", "w"))], "float32(n, 512, h, w)")
    check("nn.adaptive_avg_pool2d", [T((1, 7, 7, 8))], "float32(1, 2, 3, 8)", output_size=[2, 3], layout="NHWC")
    bad("nn.adaptive_avg_pool2d", [T((1, 8))], "expected a 4-D tensor", 0)


# ---------------------------------------------------------------- creation
@covers("zeros", "ones")
@pytest.mark.parametrize("op", ["zeros", "ones"])
def test_zeros_ones(op):
    check(op, [S(2, 3)], "float32(2, 3)", dtype="float32")
    check(op, [S("n", 4)], "int32(n, 4)", dtype="int32")
    check(op, [rx.Var("s", rx.ShapeStructInfo(None, 2))], "float16[ndim=2]", dtype="float16")
    bad(op, [T((2,))], "argument shape must be a shape (R.shape([...]))", 0, dtype="float32")
    bad(op, [S(2)], f"R.{op} needs the attribute 'dtype'", "dtype")


@covers("full")
def test_full():
    one = rx.Constant(np.array(1.5, "float32"))
    check("full", [S(2, 3), one], "float32(2, 3)")
    check("full", [S("n"), one], "float16(n,)", dtype="float16")
    bad("full", [S(2), rx.Constant(np.zeros(2, "float32"))], "the fill value must be a scalar (0-d) tensor", 1)


@covers("zeros_like", "ones_like", "full_like")
def test_like():
    check("zeros_like", [T(("n", 4))], "float32(n, 4)")
    check("ones_like", [T(("n", 4))], "int8(n, 4)", dtype="int8")
    check("full_like", [T(("n", 4), "int32"), rx.Constant(np.array(-5, "float32"))], "int32(n, 4)")
    check("full_like", [T((2, 3), "int32"), rx.Constant(np.array(1, "float32"))], "float64(2, 3)", dtype="float64")
    bad("zeros_like", [S(2)], "argument x must be a tensor", 0)
    bad("full_like", [T((2,)), T((2,))], "the fill value must be a scalar", 1)


@covers("arange")
def test_arange():
    check("arange", [P(0), P(10), P(2)], "int64(5,)")
    check("arange", [P(0), P(160), P(1)], "float32(160,)", dtype="float32")
    check("arange", [P(0), P(n), P(1)], "int64(n,)")
    check("arange", [P(0), P(n), P(2)], "int64((n + 1) // 2,)")
    check("arange", [P(tir.FloatImm("float32", 0.0)), P(tir.FloatImm("float32", 1.0)),
                     P(tir.FloatImm("float32", 0.25))], "float32(4,)")
    bad("arange", [P(0), P(10), P(0)], "R.arange: step must not be 0", 2)
    bad("arange", [P(0), T(()), P(1)], "end must be a scalar (R.prim_value)", 1)


# ---------------------------------------------------------------- call family and built-ins
OUT = rx.TensorStructInfo(dims(("n", 4)), "float32")


@covers("call_tir")
def test_call_tir():
    f = GlobalVar("add")
    x = T(("n", 4))
    check("call_tir", [f, rx.Tuple((x, x))], "float32(n, 4)", sinfo_args=(OUT,))
    check("call_tir", [f, rx.Tuple((x,)), S("n")], "(float32(n, 4), float32(2,))",
          sinfo_args=(rx.TupleStructInfo((OUT, rx.TensorStructInfo(dims((2,)), "float32"))),))
    bad("call_tir", [f, rx.Tuple((x,))], "R.call_tir: needs out_sinfo", "out_sinfo")
    bad("call_tir", [f, x], "the arguments must be a tuple such as (x, y), got a tensor", 1, sinfo_args=(OUT,))
    bad("call_tir", [f, rx.Tuple((x,)), x], "tir_vars must be a shape", 2, sinfo_args=(OUT,))
    bad("call_tir", [f, rx.Tuple((x,))], "out_sinfo must be a tensor or a list of tensors", "out_sinfo",
        sinfo_args=(rx.ShapeStructInfo(None, 2),))
    bad("call_tir", [rx.ExternFunc("f"), rx.Tuple((x,))], "the callee must be a TIR function", 0, sinfo_args=(OUT,))


@covers("call_tir_inplace")
def test_call_tir_inplace():
    f = GlobalVar("relu_inplace")
    x, y = T(("n", 4)), T((2,))
    check("call_tir_inplace", [f, rx.Tuple((x, y))], "float32(n, 4)", sinfo_args=(OUT,), inplace_indices=[0])
    pair = rx.TupleStructInfo((OUT, OUT))
    check("call_tir_inplace", [f, rx.Tuple((x, y))], "(float32(n, 4), float32(n, 4))", sinfo_args=(pair,),
          inplace_indices=[-1, 0])
    bad("call_tir_inplace", [f, rx.Tuple((x,))], "at least one output must be computed in place", "inplace_indices",
        sinfo_args=(OUT,), inplace_indices=[-1])
    bad("call_tir_inplace", [f, rx.Tuple((x,))], "inplace index 2 is out of range for 1 argument",
        "inplace_indices", sinfo_args=(OUT,), inplace_indices=[2])
    bad("call_tir_inplace", [f, rx.Tuple((x, y))], "output 0 ((n, 4), float32) cannot overwrite argument 1",
        "inplace_indices", sinfo_args=(OUT,), inplace_indices=[1])
    bad("call_tir_inplace", [f, rx.Tuple((x,))], "inplace_indices has 2 entries for 1 output", "inplace_indices",
        sinfo_args=(OUT,), inplace_indices=[0, -1])


@covers("call_tir_with_grad")
def test_call_tir_with_grad():
    f = GlobalVar("add")
    x = T(("n", 4))
    check("call_tir_with_grad", [f, rx.Tuple((x, x))], "float32(n, 4)", sinfo_args=(OUT,), te_grad_name="add_grad")
    assert normalize_attrs(get_op_def("relax.call_tir_with_grad"),
                           {"te_grad_name": "g", "te_grad_kwargs": {"k": 1}})["te_grad_kwargs"] == {"k": 1}
    bad("call_tir_with_grad", [f, rx.Tuple((x,))], "needs the attribute 'te_grad_name'", "te_grad_name",
        sinfo_args=(OUT,))
    bad("call_tir_with_grad", [f, rx.Tuple((x,))], "R.call_tir_with_grad: needs out_sinfo", "out_sinfo",
        te_grad_name="g")
    bad("call_tir_with_grad", [f, rx.Tuple((x,))], "expected a dict, got int", "te_grad_kwargs",
        sinfo_args=(OUT,), te_grad_name="g", te_grad_kwargs=1)


@covers("dist.call_tir_local_view")
def test_call_tir_local_view():
    f = GlobalVar("add")
    x = T(("n", 4))
    check("dist.call_tir_local_view", [f, rx.Tuple((x,)), S("n")], "float32(n, 4)", sinfo_args=(OUT,))
    bad("dist.call_tir_local_view", [rx.ExternFunc("f"), rx.Tuple((x,))], "the callee must be a TIR function", 0,
        sinfo_args=(OUT,))


@covers("dist.annotate_sharding", "dist.redistribute", "dist.redistribute_replica_to_shard")
def test_distributed_ops():
    """Inference and errors of the R.dist ops (scripts with meshes: tests/test_distributed.py)."""
    from tvmlite.ir.global_info import DeviceMesh, Placement

    mesh = DeviceMesh((2,), (0, 1))
    x = T(("n", 4))
    d = rx.Var("d", rx.DTensorStructInfo(x.struct_info, mesh, Placement.from_text("R")))
    check("dist.annotate_sharding", [x], "float32(n, 4)", device_mesh=mesh, placement="S[0]")
    out = call("dist.redistribute", d, device_mesh=mesh, placement="S[1]")
    assert (out.placement.text(), fmt(out.tensor_sinfo)) == ("S[1]", "float32(n, 4)")
    bad("dist.redistribute", [x], "the input must be a distributed tensor (R.DTensor), got a tensor", 0,
        device_mesh=mesh, placement="R")
    bad("dist.redistribute", [d], "the mesh has 1, the placement 'R, R' 2", "placement",
        device_mesh=mesh, placement="R, R")
    check("dist.redistribute_replica_to_shard", [x], "float32(n, 2)", num_workers=2, axis=1)
    check("dist.redistribute_replica_to_shard", [T((8, 4))], "float32(2, 4)", num_workers=4, axis=0)
    out = call("dist.redistribute_replica_to_shard", d, num_workers=2, axis=0)
    assert (out.placement.text(), fmt(out.tensor_sinfo)) == ("S[0]", "float32(n, 4)")
    bad("dist.redistribute_replica_to_shard", [x], "the size of axis 1 must be divisible by num_workers", "num_workers",
        num_workers=3, axis=1)
    bad("dist.redistribute_replica_to_shard", [T(2)], "the input needs a known shape", 0, num_workers=2, axis=0)


@covers("hint_on_device")
def test_hint_on_device():
    check("hint_on_device", [T(("n", 4))], "float32(n, 4)", device_type=2, index=0)
    assert make_call("relax.hint_on_device", (T((2,)),), {"device_type": 1, "index": 0}).attrs["memory_scope"] == "global"
    bad("hint_on_device", [T((2,))], "needs the attribute 'device_type'", "device_type", index=0)


@covers("shape_to_tensor")
def test_shape_to_tensor():
    s = rx.ShapeExpr((int64(2), tir.Var("n", "int64")), struct_info=rx.ShapeStructInfo((int64(2), tir.Var("n", "int64")), 2))
    assert str(make_call("relax.shape_to_tensor", (s,)).struct_info) == 'R.Tensor((2,), dtype="int64")'
    bad("shape_to_tensor", [T((2,))], "expects a shape value", 0)


@covers("to_vdevice")
def test_to_vdevice():
    x = T(("n", 4))
    out = make_call("relax.to_vdevice", (x,), {"dst_vdevice": "cuda"}).struct_info
    assert (out.vdevice, out.dtype, len(out.shape)) == ("cuda:0:global", "float32", 2)
    bad("to_vdevice", [x], "needs the attribute 'dst_vdevice'", "dst_vdevice")
    bad("to_vdevice", [x], "a vdevice is written 'kind', 'kind:index' or 'kind:index:scope'", "dst_vdevice",
        dst_vdevice="a:1:b:c")


@covers("call_dps_packed")
def test_call_dps_packed():
    x = T(("n", 4))
    check("call_dps_packed", [rx.ExternFunc("my_dps_func"), rx.Tuple((x,))], "float32(n, 4)", sinfo_args=(OUT,))
    bad("call_dps_packed", [rx.ExternFunc("f"), rx.Tuple((x,))], "needs out_sinfo", "out_sinfo")
    bad("call_dps_packed", [x, rx.Tuple((x,))], "the callee must be a packed function name", 0, sinfo_args=(OUT,))


@covers("call_pure_packed")
def test_call_pure_packed():
    x = T(("n", 4))
    f = rx.ExternFunc("vm.builtin.tensor_to_shape")
    check("call_pure_packed", [f, x], "shape[ndim=2]", sinfo_args=(rx.ShapeStructInfo(None, 2),))
    check("call_pure_packed", [f, x, x], "ObjectStructInfo")
    bad("call_pure_packed", [f, x], "sinfo_args takes one struct info", "sinfo_args",
        sinfo_args=(OUT, OUT))
    bad("call_pure_packed", [x], "the callee must be a packed function name", 0)


@covers("call_builtin_with_ctx")
def test_call_builtin_with_ctx():
    f = rx.ExternFunc("vm.builtin.alloc_storage")
    check("call_builtin_with_ctx", [f, rx.Tuple((S(4), P(0)))], "ObjectStructInfo", sinfo_args=(rx.ObjectStructInfo(),))
    check("call_builtin_with_ctx", [f, rx.Tuple(())], "float32(n, 4)", sinfo_args=(OUT,))
    bad("call_builtin_with_ctx", [f, T((2,))], "the arguments must be a tuple, got a tensor", 1)


@covers("print")
def test_print():
    x = T(("n", 4))
    check("print", [rx.StringImm("x: {}"), x], "()")
    check("print", [rx.StringImm("nothing")], "()")
    assert not get_op_def("relax.print").pure
    bad("print", [x, x], "R.print: the format must be a string (R.str(\"...\"))", 0)


@covers("assert_op")
def test_assert_op():
    cond = rx.Constant(np.array(True))
    check("assert_op", [cond, rx.StringImm("x: {}"), T((2,))], "()")
    check("assert_op", [P(tir.IntImm("bool", 1)), rx.StringImm("")], "()")
    assert not get_op_def("relax.assert_op").pure
    bad("assert_op", [T((2,), "bool"), rx.StringImm("")], "the condition must be a bool scalar, got a tensor", 0)
    bad("assert_op", [cond, T(())], "the format must be a string", 1)


@covers("shape_of")
def test_shape_of():
    check("shape_of", [T(("n", 4))], "shape(n, 4)")
    check("shape_of", [T(3)], "shape[ndim=3]")
    bad("shape_of", [S(1)], "argument x must be a tensor", 0)


@covers("null_value")
def test_null_value():
    check("null_value", [], "ObjectStructInfo")
    bad("null_value", [T(())], "R.null_value takes 0 arguments", 0)


def _dtype(name):
    return rx.DataTypeImm(name, struct_info=rx.ObjectStructInfo())


def _str(text):
    return rx.StringImm(text, struct_info=rx.ObjectStructInfo())


# Parsing, printing and located errors of these ops are in tests/test_ops_lowered.py.
@covers("memory.alloc_storage", "memory.alloc_tensor", "memory.kill_storage", "memory.kill_tensor",
        "memory.view", "memory.ensure_zero_offset", "builtin.alloc_tensor", "builtin.stop_lift_params",
        "vm.alloc_storage", "vm.alloc_tensor", "vm.kill_object", "vm.call_tir_dyn")
def test_lowered_memory_ops():
    storage = rx.Var("s", rx.ObjectStructInfo())
    check("memory.alloc_storage", [S(64), P(0), _str("global"), _dtype("uint8")], "ObjectStructInfo")
    check("memory.alloc_tensor", [storage, P(0), S("n", 4), _dtype("float16"), P(0)], "float16(n, 4)")
    check("memory.kill_storage", [storage], "()")
    check("memory.kill_tensor", [T((2,))], "()")
    void = rx.Tuple(())
    check("memory.view", [T((2, 3)), S(6), void, void], "float32(6,)")
    check("memory.view", [T((2, 3)), void, _dtype("int32"), void], "int32(2, 3)")
    check("memory.view", [T((2, 3)), void, void, P(0)], "float32(2, 3)")
    check("memory.view", [T(2, "int8"), void, _dtype("uint8"), void], "uint8[ndim=2]")
    bad("memory.view", [T((2, 3)), S(4), _dtype("float64"), void], "ends at byte 32, but the tensor has 24 bytes", 1)
    bad("memory.view", [T((2, 3), "void"), S(7), void, void], "(7,) has 7 elements, the tensor (2, 3) only 6", 1)
    bad("memory.view", [T(2, "void"), void, void, P(4)], "an offset of 4 bytes with the same shape and dtype", 3)
    bad("memory.view", [T(1, "float16"), void, _dtype("float32"), void], "grows each element from 2 to 4 bytes", 2)
    check("memory.ensure_zero_offset", [T((2, 3))], "float32(2, 3)")
    check("builtin.alloc_tensor", [S(2, 3), _dtype("int8"), P(0), _str("global")], "int8(2, 3)")
    bad("builtin.alloc_tensor", [S(2), _dtype("int8"), P(0), P(1)], "the storage scope must be a string", 3)
    check("builtin.stop_lift_params", [T((2,))], "float32(2,)")
    check("vm.alloc_storage", [S(8), P(0), _dtype("uint8"), _str("global")], "ObjectStructInfo")
    bad("vm.alloc_storage", [S(8), _str("cpu"), _dtype("uint8"), _str("global")],
        "the runtime device index must be an integer", 1)
    check("vm.alloc_tensor", [storage, P(0), S(2), _dtype("float32"), P(0)], "float32(2,)")
    check("vm.kill_object", [storage], "()")
    check("vm.call_tir_dyn", [GlobalVar("f"), rx.Tuple((T((2,)), S(2)))], "()")


@covers("make_closure", "invoke_closure", "invoke_pure_closure", "call_inplace_packed")
def test_closures_and_inplace_packed_calls():
    closure = rx.Var("c", rx.ObjectStructInfo())
    check("make_closure", [GlobalVar("f"), rx.Tuple((T((2,)),))], "ObjectStructInfo")
    check("invoke_closure", [closure, rx.Tuple((T((2,)),))], "ObjectStructInfo")
    check("invoke_pure_closure", [closure, rx.Tuple(())], "float32(2,)", sinfo_args=(rx.TensorStructInfo(dims((2,)), "float32"),))
    out = rx.TensorStructInfo(dims((2,)), "float32")
    check("call_inplace_packed", [rx.ExternFunc("f"), T((2,)), T((3,))], "(float32(2,), float32(2,))",
          sinfo_args=(out, out), inplace_indices=[0, -1])
    bad("call_inplace_packed", [rx.ExternFunc("f"), T((2,))], "inplace index 2 is out of range for 1 argument",
        "inplace_indices", sinfo_args=(out,), inplace_indices=[2])
    bad("call_inplace_packed", [rx.ExternFunc("f"), T((3,))], "output 0 ((2,), float32) cannot overwrite argument 0",
        "inplace_indices", sinfo_args=(out,), inplace_indices=0)


@covers(*(f"inspect.tensor_{f}" for f in ("dtype_code", "dtype_bits", "dtype_lanes", "ndim", "shape_i", "stride_i",
                                          "byte_offset", "elem_offset")))
def test_inspect_ops_know_what_the_struct_info_fixes():
    def value(op, *args):
        return call(f"inspect.tensor_{op}", *args)

    assert value("dtype_code", T((2,), "bfloat16")).value.value == 4  # kDLBfloat
    assert value("dtype_code", T((2,), "bool")).value.value == 1  # a 1-bit uint, as in TVM
    assert value("dtype_bits", T((2,), "bool")).value.value == 1
    assert value("dtype_lanes", T((2,), "float32x4")).value.value == 4
    assert value("dtype_lanes", T((2,), "void")).value is None
    assert value("ndim", T(3)).value.value == 3
    assert fmt(value("shape_i", T(("n", 4)), P(0))) == "prim int64"
    assert value("shape_i", T(("n", 4)), P(0)).value.name == "n"
    assert value("stride_i", T(("n", 4, 5)), P(0)).value.value == 20
    assert value("stride_i", T(("n", 4, 5)), rx.Var("a", rx.PrimStructInfo("int64"))).value is None
    assert value("byte_offset", T((2,))).value.value == 0 and value("elem_offset", T(1)).value is None
    bad("inspect.tensor_stride_i", [T((2,)), P(1)], "axis 1 is out of range for a tensor of 1 dimension", 1)
    bad("inspect.tensor_ndim", [S(2)], "argument tensor must be a tensor, got a shape", 0)


@covers("grad.no_grad", "grad.start_checkpoint", "grad.end_checkpoint", "grad.nll_loss_backward",
        "grad.max_pool2d_backward", "grad.avg_pool2d_backward", "grad.take_backward")
def test_gradient_ops_give_the_struct_info_of_their_input():
    check("grad.no_grad", [T((2,))], "float32(2,)")
    check("grad.start_checkpoint", [T((2,))], "float32(2,)")
    bad("grad.end_checkpoint", [rx.Tuple(())], "the argument must be a variable", 0)
    check("grad.nll_loss_backward", [T(()), T((3, 5)), T((3,), "int64")], "float32(3, 5)", reduction="sum")
    check("grad.max_pool2d_backward", [T((1, 2, 4, 4)), T((1, 2, 8, 8))], "float32(1, 2, 8, 8)", pool_size=2)
    check("grad.avg_pool2d_backward", [T((1, 2, 4, 4)), T((1, 2, 8, 8), "float16")], "float16(1, 2, 8, 8)")
    check("grad.take_backward", [T((2,)), T((5, 3)), T((2,), "int64")], "float32(5, 3)", axis=0)
    assert normalize_attrs(get_op_def("relax.grad.take_backward"), {})["mode"] == ""


def test_argument_count_errors():
    bad("add", [T((2,))], "R.add takes 2 arguments (x1, x2), got 1", None)
    bad("exp", [T((2,)), T((2,))], "R.exp takes 1 argument (x), got 2", 1)
    bad("strided_slice", [T((8,)), ints(0)], "takes 4 to 5 arguments", None)


# ---------------------------------------------------------------- coverage, attributes, patterns
def test_every_op_is_tested():
    registered = {d.script_name for d in list_ops()}
    assert registered - TESTED == set()
    assert TESTED - registered == set()
    assert len(registered) >= 100


# The attribute fields, in TVM's declared (printed) order, with their defaults.
TVM_ATTRS = {
    "matmul": [("out_dtype", "void")],
    "permute_dims": [("axes", None)],
    "astype": [("dtype", "REQUIRED")],
    "expand_dims": [("axis", "REQUIRED")],
    "squeeze": [("axis", None)],
    "concat": [("axis", 0)],
    "split": [("indices_or_sections", "REQUIRED"), ("axis", 0)],
    "strided_slice": [("assume_inbound", False)],
    "take": [("axis", None), ("mode", "fast")],
    "layout_transform": [("index_map", "REQUIRED"), ("pad_value", None), ("axis_separators", ()),
                         ("input_axis_separators", ())],
    "sum": [("axis", None), ("keepdims", False)],
    "argmax": [("axis", None), ("keepdims", False)],
    "nn.softmax": [("axis", -1)],
    "nn.leakyrelu": [("alpha", 0.01)],
    "nn.dropout": [("rate", 0.5)],
    "nn.layer_norm": [("axes", "REQUIRED"), ("epsilon", 1e-5), ("center", True), ("scale", True)],
    "nn.batch_norm": [("axis", "REQUIRED"), ("epsilon", 1e-5), ("center", True), ("scale", True),
                      ("momentum", 0.1), ("training", True)],
    "nn.conv2d": [("strides", (1, 1)), ("padding", (0, 0, 0, 0)), ("dilation", (1, 1)), ("groups", 1),
                  ("data_layout", "NCHW"), ("kernel_layout", "OIHW"), ("out_layout", None),
                  ("out_dtype", "void")],
    "nn.max_pool2d": [("pool_size", (1, 1)), ("strides", (1, 1)), ("dilation", (1, 1)), ("padding", (0, 0, 0, 0)),
                      ("ceil_mode", False), ("count_include_pad", False), ("layout", "NCHW"),
                      ("out_layout", None)],
    "nn.adaptive_avg_pool2d": [("output_size", None), ("layout", "NCHW"), ("out_layout", None)],
    "zeros": [("dtype", "REQUIRED")],
    "full": [("dtype", "void")],
    "full_like": [("dtype", "void")],
    "arange": [("dtype", "void")],
    "call_tir_inplace": [("inplace_indices", "REQUIRED")],
    "call_tir_with_grad": [("te_grad_name", "REQUIRED"), ("te_grad_kwargs", {})],
    "hint_on_device": [("device_type", "REQUIRED"), ("index", "REQUIRED"), ("memory_scope", "global")],
    "add": [], "nn.relu": [], "reshape": [], "call_tir": [], "print": [],
}

# the R.nn ops of issue 16, in the order TVM 0.27 prints them
TVM_ATTRS.update({
    "nn.conv1d": [("strides", (1,)), ("padding", (0, 0)), ("dilation", (1,)), ("groups", 1), ("data_layout", "NCW"),
                  ("kernel_layout", "OIW"), ("out_layout", None), ("out_dtype", "void")],
    "nn.conv2d_transpose": [("strides", (1, 1)), ("padding", (0, 0, 0, 0)), ("output_padding", (0, 0)),
                            ("dilation", (1, 1)), ("groups", 1), ("data_layout", "NCHW"), ("kernel_layout", "IOHW"),
                            ("out_layout", None), ("out_dtype", "void")],
    "nn.pad": [("pad_width", "REQUIRED"), ("pad_value", 0.0), ("pad_mode", "constant")],
    "nn.avg_pool3d": [("pool_size", (1, 1, 1)), ("strides", (1, 1, 1)), ("dilation", (1, 1, 1)),
                      ("padding", (0, 0, 0, 0, 0, 0)), ("ceil_mode", False), ("count_include_pad", True),
                      ("layout", "NCDHW"), ("out_layout", None)],
    "nn.adaptive_avg_pool1d": [("output_size", None), ("layout", "NCW"), ("out_layout", None)],
    "nn.group_norm": [("num_groups", "REQUIRED"), ("channel_axis", "REQUIRED"), ("axes", "REQUIRED"),
                      ("epsilon", 1e-5), ("center", True), ("scale", True)],
    "nn.rms_norm": [("axes", (-1,)), ("epsilon", 1e-5)],
    "nn.prelu": [("axis", 1)], "nn.softplus": [("beta", 1.0), ("threshold", 20.0)],
    "nn.nll_loss": [("reduction", "mean"), ("ignore_index", -100)], "nn.pixel_shuffle": [("upscale_factor", "REQUIRED")],
    "nn.attention_bias": [("scale", None), ("causal_mask", None), ("window_size", None)],
})

# the manipulation family of issue 16 (TVM 0.27's printed attributes)
TVM_ATTRS.update({"tile": [("repeats", "REQUIRED")], "repeat": [("repeats", "REQUIRED"), ("axis", None)],
                  "flip": [("axis", "REQUIRED")], "stack": [("axis", 0)], "meshgrid": [("indexing", "ij")],
                  "gather_elements": [("axis", 0)], "gather_nd": [("batch_dims", 0)],
                  "scatter_elements": [("axis", 0), ("reduction", "update")], "scatter_nd": [("reduction", "update")],
                  "slice_scatter": [("axis", 0)], "index_put": [("accumulate", False)],
                  "one_hot": [("depth", "REQUIRED"), ("axis", -1)], "tril": [], "triu": [],
                  "reverse_sequence": [("seq_axis", 1), ("batch_axis", 0)], "collapse_sum_like": [],
                  "collapse_sum_to": [], "tensor_to_shape": [], "dynamic_strided_slice": []})


@pytest.mark.parametrize("op", sorted(TVM_ATTRS))
def test_attribute_names_order_and_defaults(op):
    fields = [(f.name, repr(f.default) if repr(f.default) == "REQUIRED" else f.default)
              for f in get_op_def(f"relax.{op}").attrs]
    assert fields == TVM_ATTRS[op]


def test_attributes_are_normalised_in_declared_order():
    x, w = T((1, 3, 8, 8)), T((4, 3, 3, 3))
    c = make_call("relax.nn.conv2d", (x, w), {"out_dtype": "float32", "padding": 1, "strides": 2})
    assert list(c.attrs) == ["strides", "padding", "dilation", "groups", "data_layout", "kernel_layout",
                             "out_layout", "out_dtype"]
    assert c.attrs["strides"] == (2, 2) and c.attrs["padding"] == (1, 1, 1, 1)
    assert make_call("relax.nn.conv2d", (x, w), {"padding": [1, 2]}).attrs["padding"] == (1, 2, 1, 2)
    assert make_call("relax.sum", (x,), {"axis": 1}).attrs["axis"] == (1,)
    assert make_call("relax.sum", (x,), {"axis": [1, 2]}).attrs["axis"] == (1, 2)
    assert make_call("relax.permute_dims", (x,), {"axes": [3, 2, 1, 0]}).attrs["axes"] == (3, 2, 1, 0)
    assert make_call("relax.matmul", (x, x), {"out_dtype": None}).attrs["out_dtype"] == "void"
    assert make_call("relax.nn.layer_norm", (x, T((8,)), T((8,))), {"axes": -1}).attrs["epsilon"] == 1e-5
    assert make_call("relax.split", (x,), {"indices_or_sections": [1, 2]}).attrs["indices_or_sections"] == (1, 2)
    imap = make_call("relax.layout_transform", (T((16,)),), {"index_map": lambda i: (i // 4, i % 4)}).attrs
    assert isinstance(imap["index_map"], IndexMap)
    bad("sum", [x], "R.sum has no attribute 'axes' (attributes: axis, keepdims)", "axes", axes=[1])
    bad("sum", [x], "expected True or False", "keepdims", keepdims="yes")
    bad("permute_dims", [x], "expected an integer", "axes", axes=[0.5])
    bad("nn.conv2d", [x, w], "expected an integer", "groups", groups=True)


def test_op_patterns():
    expected = {
        "exp": OpPattern.ELEMWISE, "nn.relu": OpPattern.ELEMWISE, "astype": OpPattern.ELEMWISE,
        "add": OpPattern.BROADCAST, "less": OpPattern.BROADCAST, "where": OpPattern.BROADCAST,
        "broadcast_to": OpPattern.BROADCAST,
        "reshape": OpPattern.INJECTIVE, "permute_dims": OpPattern.INJECTIVE, "concat": OpPattern.INJECTIVE,
        "take": OpPattern.INJECTIVE, "strided_slice": OpPattern.INJECTIVE,
        "sum": OpPattern.COMM_REDUCE, "argmax": OpPattern.COMM_REDUCE,
        "matmul": OpPattern.OUT_ELEMWISE_FUSABLE, "nn.conv2d": OpPattern.OUT_ELEMWISE_FUSABLE,
        "nn.dense": OpPattern.OUT_ELEMWISE_FUSABLE,
        "call_tir": OpPattern.OPAQUE, "print": OpPattern.OPAQUE, "nn.softmax": OpPattern.OPAQUE,
    }
    assert {op: get_op_def(f"relax.{op}").pattern for op in expected} == expected


def test_one_op_object_per_name_and_purity():
    assert get_op_def("relax.add").op is get_op_def("relax.add").op
    impure = {d.script_name for d in list_ops() if not d.pure}
    assert impure == {"print", "assert_op", "memory.kill_storage", "memory.kill_tensor", "vm.kill_object",
                      "vm.call_tir_dyn", "invoke_closure"}
    assert get_op_def("relax.call_pure_packed").variadic and get_op_def("relax.print").variadic


def test_out_layout_falls_back_to_the_input_layout_as_in_tvm():
    conv = get_op_def("relax.nn.conv2d")
    assert normalize_attrs(conv, {})["out_layout"] == "NCHW"
    assert normalize_attrs(conv, {"data_layout": "NHWC", "kernel_layout": "HWIO"})["out_layout"] == "NHWC"
    assert normalize_attrs(conv, {"out_layout": None})["out_layout"] == "NCHW"
    assert normalize_attrs(get_op_def("relax.nn.max_pool2d"), {"layout": "NHWC"})["out_layout"] == "NHWC"


def test_conv2d_window_larger_than_the_input_is_refused():
    bad("nn.conv2d", [T((1, 1, 2, 2)), T((1, 1, 2, 2))], "the window spans 3 elements (kernel 2, dilation 2)", 0,
        dilation=[2, 2])


def test_script_form_declarations_name_inputs_and_attributes():
    # The parser and printer read these fields instead of naming ops, so each must name what exists.
    for d in list_ops():
        assert set(d.keyword_inputs) <= set(d.inputs) and set(d.input_forms) <= set(d.inputs), d.name
        assert set(d.input_defaults) <= set(d.inputs) and set(d.script_order) <= set(d.script_signature.positional)
        assert not d.hide_inferred_annotation or d.out_sinfo, d.name
        assert all(f.script_group is None for f in d.attrs) or d.positional_attrs, d.name
    shaped = {d.script_name for d in list_ops() if "shape" in d.input_forms.values()}
    shaped -= {"image.resize2d", "image.resize3d", "image.affine_grid"}  # issue 16: the image family's output sizes
    assert shaped == {"reshape", "broadcast_to", "zeros", "ones", "full", "call_tir", "call_tir_inplace",
                      "call_tir_with_grad", "dist.call_tir_local_view", "memory.alloc_storage",
                      "memory.alloc_tensor", "memory.view", "builtin.alloc_tensor", "vm.alloc_storage",
                      "vm.alloc_tensor", "collapse_sum_to"}


# ---------------------------------------------------------------- manipulation (issue 16), as TVM 0.27 infers
@covers("tile")
def test_tile():
    check("tile", [T(("n", 3))], "float32(2, n, 6)", repeats=[2, 1, 2])
    check("tile", [T(("n", 3))], "float32(n, 9)", repeats=3)
    check("tile", [T(("n", 3), "int8")], "int8(n, 0)", repeats=[0])
    check("tile", [T(2)], "float32[ndim=2]", repeats=[2])
    check("tile", [T(2)], "float32[ndim=3]", repeats=[2, 2, 2])
    check("tile", [T(-1)], "float32[ndim=-1]", repeats=[2])
    bad("tile", [T((2,))], "repeats must not be negative, got [-1]", "repeats", repeats=[-1])
    bad("tile", [S(2)], "must be a tensor", 0, repeats=[2])


@covers("repeat")
def test_repeat():
    check("repeat", [T(("n", 3))], "float32(n * 2, 3)", repeats=2, axis=0)
    check("repeat", [T(("n", 3))], "float32(n * 6,)", repeats=2)
    check("repeat", [T(("n", 3), "bool")], "bool(n, 0)", repeats=0, axis=-1)
    check("repeat", [T(2)], "float32[ndim=1]", repeats=2)
    check("repeat", [T(2)], "float32[ndim=2]", repeats=2, axis=1)
    bad("repeat", [T(("n", 3))], "R.repeat: axis 2 is out of range for a tensor of 2 dimensions", "axis",
        repeats=2, axis=2)
    bad("repeat", [T(("n", 3))], "repeats must not be negative, got -1", "repeats", repeats=-1, axis=1)


@covers("flip")
def test_flip():
    check("flip", [T(("n", 3))], "float32(n, 3)", axis=1)
    check("flip", [T(("n", 3), "int32")], "int32(n, 3)", axis=-2)
    check("flip", [T(-1)], "float32[ndim=-1]", axis=5)
    bad("flip", [T(("n", 3))], "R.flip: axis 2 is out of range for a tensor of 2 dimensions", "axis", axis=2)


@covers("stack")
def test_stack():
    check("stack", [rx.Tuple((T(("n", 3)), T(("n", 3))))], "float32(n, 2, 3)", axis=1)
    check("stack", [rx.Tuple((T(("n", 3)), T(("n", 3))))], "float32(n, 3, 2)", axis=-1)
    check("stack", [rx.Tuple((T(("n", 3)),))], "float32(1, n, 3)")
    check("stack", [rx.Tuple((T(("n", 3)), T(("m", 3))))], "float32[ndim=3]")  # n == m only at run time
    check("stack", [rx.Tuple((T(("n", 3)), T(2)))], "float32[ndim=3]")
    check("stack", [rx.Tuple((T((2, 3), "int32"), T((2, 3), "int32")))], "int32(2, 3, 2)", axis=2)
    bad("stack", [rx.Tuple((T(("n", 3)), T(("n", 3))))], "R.stack: axis 3 is out of range", "axis", axis=3)
    bad("stack", [rx.Tuple((T(("n", 3)), T(("n", 3), "int32")))],
        "R.stack: all tensors need the same dtype, got float32 and int32", 0)
    bad("stack", [rx.Tuple((T((2, 3)), T((2, 4))))], "tensors 0 and 1 have shapes (2, 3) and (2, 4)", 0)
    bad("stack", [rx.Tuple(())], "R.stack: needs at least one tensor to stack", 0)
    bad("stack", [rx.Tuple((T((2,)), T((2, 2))))], "need the same number of dimensions", 0)


@covers("meshgrid")
def test_meshgrid():
    check("meshgrid", [rx.Tuple((T(("n",)), T(("m",))))], "(float32(n, m), float32(n, m))")
    # numpy's (and TVM's kernel's) xy order; TVM 0.27's inference says (n, m) here
    check("meshgrid", [rx.Tuple((T(("n",)), T(("m",)), T((2,))))], "(float32(m, n, 2), float32(m, n, 2), "
          "float32(m, n, 2))", indexing="xy")
    check("meshgrid", [rx.Tuple((T(("n",)),))], "(float32(n,))")
    check("meshgrid", [rx.Tuple((T(("n",)), T(1)))], "(float32[ndim=2], float32[ndim=2])")
    bad("meshgrid", [rx.Tuple((T(("n",)), T(())))], "R.meshgrid: each tensor must be 1-D, element 1 has ndim 0", 0)
    bad("meshgrid", [rx.Tuple((T(("n",)), T(-1)))], "each tensor must be 1-D, element 1 has ndim -1", 0)
    bad("meshgrid", [rx.Tuple((T((3,), "int32"), T((3,))))], "all tensors need the same dtype, got int32 and float32",
        0)
    bad("meshgrid", [rx.Tuple(())], "R.meshgrid: needs at least one 1-D tensor", 0)
    bad("meshgrid", [rx.Tuple((T((3,)),))], "expected \"ij\" or \"xy\", got 'ab'", "indexing", indexing="ab")


@covers("gather_elements")
def test_gather_elements():
    check("gather_elements", [T(("n", 4)), T((2, 4), "int64")], "float32(2, 4)")
    check("gather_elements", [T(("n", 4), "int8"), T(("m", 4), "int32")], "int8(m, 4)", axis=1)
    check("gather_elements", [T(-1), T((2, 4), "int64")], "float32[ndim=-1]", axis=-1)
    check("gather_elements", [T(("n", 4)), T(2, "int64")], "float32[ndim=2]", axis=-1)
    bad("gather_elements", [T(("n", 4)), T((2, 4))], "R.gather_elements: the indices must have a signed integer "
        "dtype, got dtype float32", 1)
    bad("gather_elements", [T(("n", 4)), T((2, 4), "uint8")], "got dtype uint8", 1)
    bad("gather_elements", [T(("n", 4)), T((2, 4), "bool")], "got dtype bool", 1)
    bad("gather_elements", [T(("n", 4)), T((2,), "int64")], "data and indices need the same rank, got 2 and 1", 1)
    bad("gather_elements", [T(("n", 4)), T((2, 4), "int64")], "axis 2 is out of range", "axis", axis=2)


@covers("gather_nd")
def test_gather_nd():
    check("gather_nd", [T(("n", 3, 4)), T((5, 2), "int64")], "float32(5, 4)")
    check("gather_nd", [T(("n", 3, 4)), T(("m", 5, 2), "int64")], "float32(m, 5, 4)")
    check("gather_nd", [T(("n", 3, 4)), T(("n", 2), "int64")], "float32(n,)", batch_dims=1)
    check("gather_nd", [T(("n", 3, 4)), T(("n", 5, 1), "int64")], "float32(n, 5, 4)", batch_dims=1)
    check("gather_nd", [T(("n", 3, 4)), T((5, 3), "int64")], "float32(5,)")
    check("gather_nd", [T(("n", 3, 4)), T((5, "m"), "int64")], "float32[ndim=-1]")
    check("gather_nd", [T(("n", 3, 4)), T(2, "int64")], "float32[ndim=-1]")
    check("gather_nd", [T(3), T((5, 2), "int64")], "float32[ndim=2]")
    bad("gather_nd", [T(("n", 3, 4)), T((5, 4), "int64")], "R.gather_nd: index tuples of length 4 (indices (5, 4)) "
        "exceed the data's rank 3 minus batch_dims 0", 1)
    bad("gather_nd", [T(("n", 3, 4)), T((5, 2), "int64")], "batch_dims 3 exceeds the indices' rank minus 1 (1)",
        "batch_dims", batch_dims=3)
    bad("gather_nd", [T(("n", 3, 4)), T((5, 2), "int64")], "batch_dims must not be negative, got -1", "batch_dims",
        batch_dims=-1)
    check("gather_nd", [T(("n", 3, 4)), T((5, 2), "int32")], "float32(5, 4)")  # TVM 0.27: int64 only
    bad("gather_nd", [T(("n", 3, 4)), T((5, 2), "uint8")], "R.gather_nd: the indices must have a signed integer "
        "dtype, got dtype uint8", 1)
    bad("gather_nd", [T((2, 3, 4)), T((3, 1), "int64")], "batch dim 0 is (2, 3, 4)[0] in the data but (3, 1)[0]", 1,
        batch_dims=1)


@covers("scatter_elements")
def test_scatter_elements():
    check("scatter_elements", [T(("n", 4)), T((2, 4), "int64"), T((2, 4))], "float32(n, 4)")
    check("scatter_elements", [T(("n", 4)), T((2, 4), "int32"), T((2, 4))], "float32(n, 4)", axis=1,
          reduction="mean")
    check("scatter_elements", [T(("n", 4)), T((2, 4), "uint8"), T(("m", 4))], "float32(n, 4)")  # m == 2 at run time
    check("scatter_elements", [T(-1), T((2, 5), "int64"), T((2, 5))], "float32[ndim=-1]")
    bad("scatter_elements", [T(("n", 4)), T((2, 4)), T((2, 4))], "R.scatter_elements: the indices must have an "
        "integer dtype, got dtype float32", 1)
    bad("scatter_elements", [T(("n", 4)), T((2, 4), "int64"), T((2, 3))], "indices (2, 4) and updates (2, 3) need "
        "one shape", 2)
    bad("scatter_elements", [T(("n", 4)), T((2,), "int64"), T((2,))], "data and indices need the same rank, got 2 "
        "and 1", 1)
    bad("scatter_elements", [T(("n", 4)), T((2, 4), "int64"), T((2, 4), "int32")], "the updates need the data's "
        "dtype float32, got int32", 2)
    bad("scatter_elements", [T(("n", 4)), T((2, 4), "int64"), T((2, 4))], "axis 2 is out of range", "axis", axis=2)
    bad("scatter_elements", [T(("n", 4)), T((2, 4), "int64"), T((2, 4))], "expected one of update, add, mul, mean, "
        "min, max, got 'foo'", "reduction", reduction="foo")


@covers("scatter_nd")
def test_scatter_nd():
    check("scatter_nd", [T(("n", 3, 4)), T((5, 2), "int64"), T((5, 4))], "float32(n, 3, 4)")
    check("scatter_nd", [T(("n", 3, 4)), T((5, 1), "int32"), T((5, 3, 4))], "float32(n, 3, 4)", reduction="mul")
    check("scatter_nd", [T(("n", 3, 4)), T((5, 3), "int64"), T((5,))], "float32(n, 3, 4)")
    check("scatter_nd", [T(("n", 3, 4)), T(2, "int64"), T((5,))], "float32(n, 3, 4)")
    bad("scatter_nd", [T(("n", 3, 4)), T((5, 1), "float32"), T((5, 3, 4))], "the indices must have an integer dtype", 1)
    bad("scatter_nd", [T(("n", 3, 4)), T((5, 1), "int64"), T((5, 3, 5))], "R.scatter_nd: the updates' shape must be "
        "indices.shape[:-1] + data.shape[1:] = (5, 3, 4), got (5, 3, 5)", 2)
    bad("scatter_nd", [T(("n", 3, 4)), T(("m", 1), "int64"), T(("n", 3, 4))], "= (m, 3, 4), got (n, 3, 4)", 2)
    bad("scatter_nd", [T((2, 3)), T((), "int32"), T(())], "the indices need a last dim holding the index tuples' length", 1)
    bad("scatter_nd", [T(("n", 3, 4)), T((5, 4), "int64"), T((5,))], "index tuples of length 4 exceed the data's "
        "rank 3", 1)
    bad("scatter_nd", [T(("n", 3, 4)), T((5, 2), "int64"), T((5,))], "the updates need rank 2", 2)
    bad("scatter_nd", [T(("n", 3, 4)), T((5, "m"), "int64"), T((5, 4))], "must be a constant", 1)
    bad("scatter_nd", [T(("n", 3, 4)), T((5, 1), "int64"), T((5, 3, 4), "int32")], "the updates need the data's "
        "dtype float32, got int32", 2)
    bad("scatter_nd", [T(("n", 3, 4)), T((5, 1), "int64"), T((5, 3, 4))], "got 'mean'", "reduction", reduction="mean")


@covers("slice_scatter")
def test_slice_scatter():
    check("slice_scatter", [T(("n", 5)), T(("n", 2)), P(1), P(5), P(2)], "float32(n, 5)", axis=1)
    check("slice_scatter", [T(("n", 5)), T(("m", 2)), P(1), P(5), P(2)], "float32(n, 5)", axis=1)
    check("slice_scatter", [T(("n", 5)), T(("n", 2)), P(-2), P(5), P(1)], "float32(n, 5)", axis=-1)
    check("slice_scatter", [T(("n", 5)), T((1, 5)), P(m), P(tir.Add(m, int64(1))), P(1)], "float32(n, 5)")
    check("slice_scatter", [T(("n", 5)), T(("n", 2)), P(0), P(10), P(3)], "float32(n, 5)", axis=1)  # clamped
    bad("slice_scatter", [T(("n", 5)), T(("n", 3)), P(1), P(5), P(2)], "R.slice_scatter: src has 3 elements on "
        "axis 1, but the slice 1:5:2 of 5 has 2", 1, axis=1)
    bad("slice_scatter", [T(("n", 5)), T(("n", 2), "int32"), P(1), P(5), P(2)], "src needs the input's dtype "
        "float32, got int32", 1, axis=1)
    bad("slice_scatter", [T(("n", 5)), T((2,)), P(1), P(5), P(2)], "src needs the input's rank 2, got 1", 1, axis=1)
    bad("slice_scatter", [T(("n", 5)), T(("n", 2)), P(1), P(5), P(2)], "axis 2 is out of range", "axis", axis=2)
    bad("slice_scatter", [T(("n", 5)), T(("n", 2)), P(1), P(5), P(0)], "the step must be at least 1, got 0", 4,
        axis=1)
    bad("slice_scatter", [T(("n", 5)), T(("n", 4)), P(1), P(5), P(1)], "src (n, 4) differs from the input (n, 5) in "
        "dim 1, which is not the scatter axis 0", 1)
    bad("slice_scatter", [T(("n", 5)), T(("n", 2)), P(tir.FloatImm("float32", 0.5)), P(5), P(1)],
        "start must be an integer (R.prim_value), got a scalar (R.Prim) of dtype float32", 2, axis=1)


@covers("index_tensor")
def test_index_tensor():
    check("index_tensor", [T(("n", 4)), rx.Tuple((T((2,), "int64"), T((2,), "int64")))], "float32(2,)")
    check("index_tensor", [T(("n", 4)), rx.Tuple((T((2, 1), "int32"), T((3,), "int64")))], "float32(2, 3)")
    check("index_tensor", [T(("n", 4)), rx.Tuple((T(("m",), "int64"),))], "float32(m, 4)")
    check("index_tensor", [T(("n", 4)), rx.Tuple((T((), "int64"),))], "float32(4,)")
    check("index_tensor", [T(("n", 4)), rx.Tuple((T((2,), "int64"), T(("m",), "int64")))], "float32[ndim=1]")
    check("index_tensor", [T(("n", 4)), rx.Tuple((T(2, "int64"),))], "float32[ndim=3]")
    check("index_tensor", [T(("n", 4)), rx.Tuple((T(-1, "int64"),))], "float32[ndim=-1]")
    bad("index_tensor", [T(("n", 4)), rx.Tuple((T((2,), "int64"), T((3,), "int64")))],
        "R.index_tensor: cannot broadcast shapes (2,) and (3,)", 1)
    bad("index_tensor", [T(("n", 4)), rx.Tuple((T((2,)),))], "index tensor 0 must have a signed integer dtype, got "
        "float32", 1)
    bad("index_tensor", [T(("n", 4)), rx.Tuple((T((2,), "bool"),))], "got bool", 1)
    bad("index_tensor", [T(("n", 4)), rx.Tuple((T((2,), "uint8"),))], "got uint8", 1)
    bad("index_tensor", [T(("n", 4)), rx.Tuple((T((2,), "int64"),) * 3)], "3 index tensors for data of 2 dimensions",
        1)
    bad("index_tensor", [T(("n", 4)), rx.Tuple(())], "R.index_tensor: needs at least one index tensor", 1)


@covers("index_put")
def test_index_put():
    two = rx.Tuple((T((2,), "int64"), T((2,), "int64")))
    check("index_put", [T(("n", 4)), two, T((2,))], "float32(n, 4)")
    check("index_put", [T(("n", 4)), two, T(())], "float32(n, 4)", accumulate=True)
    check("index_put", [T(("n", 4)), rx.Tuple((T((2, 1), "int64"), T((3,), "int32"))), T((2, 3))], "float32(n, 4)")
    check("index_put", [T(-1), two, T((2,))], "float32[ndim=-1]")
    bad("index_put", [T(("n", 4)), rx.Tuple((T((2,), "int64"),)), T((2, 4))], "R.index_put: 1 index tensors for data "
        "of 2 dimensions (one per dimension)", 1)
    bad("index_put", [T(("n", 4)), rx.Tuple((T((2,), "int32"), T((2,)))), T((2,))], "index tensor 1 must have a signed "
        "integer dtype, got float32", 1)
    bad("index_put", [T(("n", 4)), two, T((2,), "int32")], "the values need the data's dtype float32, got int32", 2)
    bad("index_put", [T(("n", 4)), two, T((3,))], "cannot broadcast shapes (2,) and (3,)", 2)
    bad("index_put", [T(("n", 4)), two, T((2, 2))], "values (2, 2) do not broadcast to the indices' shape (2,)", 2)
    bad("index_put", [T(("n", 4)), rx.Tuple(()), T((2,))], "0 index tensors for data of 2 dimensions", 1)


@covers("one_hot")
def test_one_hot():
    f1, f0 = P(tir.FloatImm("float32", 1.0)), P(tir.FloatImm("float32", 0.0))
    check("one_hot", [T((2, 3), "int32"), f1, f0], "float32(2, 4, 3)", depth=4, axis=1)
    check("one_hot", [T(("n",), "int64"), P(1), P(0)], "int64(n, 3)", depth=3)
    check("one_hot", [T(("n",), "uint8"), P(1), P(0)], "int64(3, n)", depth=3, axis=-2)
    check("one_hot", [T(2, "int64"), f1, f0], "float32[ndim=3]", depth=3)
    bad("one_hot", [T(("n",), "int64"), P(1), f0], "R.one_hot: on_value and off_value need one dtype, got int64 and "
        "float32", 2, depth=3)
    bad("one_hot", [T(("n",)), P(1), P(0)], "the indices must have an integer dtype, got dtype float32", 0, depth=3)
    bad("one_hot", [T(("n",), "int64"), P(1), P(0)], "must be positive, got 0", "depth", depth=0)
    bad("one_hot", [T(("n",), "int64"), P(1), P(0)], "axis 2 is out of range", "axis", depth=3, axis=2)
    bad("one_hot", [T(("n",), "int64"), T(()), P(0)], "on_value must be a scalar (R.prim_value), got a tensor", 1,
        depth=3)


@covers("tril", "triu")
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu(op):
    check(op, [T(("n", 4)), P(1)], "float32(n, 4)")
    check(op, [T((2, "n", "m"), "bool"), P(m)], "bool(2, n, m)")
    check(op, [T(-1, "int8"), P(-1)], "int8[ndim=-1]")
    bad(op, [T(("n",), "int64"), P(0)], f"R.{op}: the tensor needs at least 2 dimensions, got 1", 0)
    bad(op, [T(("n", 4)), P(tir.FloatImm("float32", 1.0))], "k must be an integer, got dtype float32", 1)


@covers("reverse_sequence")
def test_reverse_sequence():
    check("reverse_sequence", [T(("n", 4)), T((4,), "int32")], "float32(n, 4)", seq_axis=0, batch_axis=1)
    check("reverse_sequence", [T(("n", 4)), T(("m",), "int64")], "float32(n, 4)", seq_axis=0, batch_axis=1)
    check("reverse_sequence", [T(("n", 4)), T((4,), "int64")], "float32(n, 4)", seq_axis=1, batch_axis=1)
    bad("reverse_sequence", [T(("n", 4)), T((4,))], "R.reverse_sequence: seq_lengths must have dtype int32 or "
        "int64, got float32", 1, seq_axis=0, batch_axis=1)
    bad("reverse_sequence", [T(("n", 4)), T((3,), "int64")], "seq_lengths has 3 lengths for the 4 batches of axis 1",
        1, seq_axis=0, batch_axis=1)
    bad("reverse_sequence", [T(("n", 4)), T((4, 2), "int64")], "seq_lengths must be 1-D, got ndim 2", 1)
    bad("reverse_sequence", [T(("n", 4)), T((4,), "int64")], "axis 2 is out of range", "seq_axis", seq_axis=2)


@covers("collapse_sum_like", "collapse_sum_to")
def test_collapse_sum():
    check("collapse_sum_like", [T(("n", 3, 4)), T((3, 1))], "float32(3, 1)")
    check("collapse_sum_like", [T(("n", 3, 4)), T((3, 1), "int32")], "float32(3, 1)")
    check("collapse_sum_like", [T(("n", 3, 4)), T(2)], "float32[ndim=2]")
    bad("collapse_sum_like", [T(("n", 3, 4)), T((2, 1))], "R.collapse_sum_like: the shape (2, 1) does not broadcast "
        "to the data's (n, 3, 4)", 1)
    bad("collapse_sum_like", [T(("n", 3, 4)), T(("m", 1))], "the shape (m, 1) does not broadcast", 1)
    bad("collapse_sum_like", [T(("n", 3, 4)), T(("n", 3, 4, 1))], "cannot collapse a 3-D tensor to 4 dimensions", 1)
    check("collapse_sum_to", [T(("n", 3, 4)), S(3, 1)], "float32(3, 1)")
    check("collapse_sum_to", [T(("n", 3, 4), "int32"), S(4)], "int32(4,)")
    check("collapse_sum_to", [T(("n", 3, 4)), S("n", 1, 4)], "float32(n, 1, 4)")
    check("collapse_sum_to", [T(("n", 3, 4)), rx.Var("s", rx.ShapeStructInfo(None, 2))], "float32[ndim=2]")
    bad("collapse_sum_to", [T(("n", 3, 4)), S("m", 1)], "R.collapse_sum_to: the shape (m, 1) does not broadcast", 1)


@covers("tensor_to_shape")
def test_tensor_to_shape():
    check("tensor_to_shape", [T((3,), "int64")], "shape[ndim=3]")
    check("tensor_to_shape", [T((3,), "int32")], "shape[ndim=3]")
    check("tensor_to_shape", [T(("n",), "int64")], "shape[ndim=-1]")
    check("tensor_to_shape", [T(-1, "int64")], "shape[ndim=-1]")
    bad("tensor_to_shape", [T((3, 2), "int64")], "R.tensor_to_shape: expects a 1-D tensor, got ndim 2", 0)
    bad("tensor_to_shape", [T((3,))], "expects an integer tensor, got dtype float32", 0)  # TVM 0.27 accepts it


@covers("dynamic_strided_slice")
def test_dynamic_strided_slice():
    ind = T((2,), "int64")
    check("dynamic_strided_slice", [T(("n", 9)), ind, ind, ind], "float32[ndim=2]")
    check("dynamic_strided_slice", [T(-1, "int8"), ind, ind, ind], "int8[ndim=-1]")
    bad("dynamic_strided_slice", [T(("n", 9)), T((2,), "int32"), ind, ind], "R.dynamic_strided_slice: begin must "
        "have dtype int64, got int32", 1)
    bad("dynamic_strided_slice", [T(("n", 9)), ind, T((3,), "int64"), ind], "end has 3 values for 2 axes", 2)
    bad("dynamic_strided_slice", [T(("n", 9)), ind, ind, T((2, 2), "int64")], "strides must be 1-D, got ndim 2", 3)
    bad("dynamic_strided_slice", [T(("n", 9)), T(("m",), "int64"), ind, ind], "begin needs a known length", 1)


# ---------------------------------------------------------------- R.nn: convolutions, pooling, norms (issue 16)
@covers("nn.conv1d", "nn.conv3d")
def test_conv1d_conv3d():
    check("nn.conv1d", [T((2, 3, 10)), T((4, 3, 3))], "float32(2, 4, 5)", strides=2, padding=1)
    check("nn.conv1d", [T(("n", "c", "w")), T(("f", "c", "kw"))], "float32(n, f, w - kw + 1)")
    check("nn.conv1d", [T((2, 10, 4)), T((3, 2, 6))], "float32(2, 8, 6)", data_layout="NWC", kernel_layout="WIO",
          groups=2)
    check("nn.conv1d", [T((2, 3, 10), "int8"), T((4, 3, 3), "int8")], "int32(2, 4, 8)", out_dtype="int32")
    check("nn.conv1d", [T(3), T((4, 3, 3))], "float32[ndim=3]")
    check("nn.conv3d", [T((2, 3, 6, 6, 6)), T((4, 3, 3, 3, 3))], "float32(2, 4, 6, 6, 6)", padding=1)
    check("nn.conv3d", [T((1, 4, 8, 9, 10)), T((6, 2, 3, 3, 3))], "float32(1, 6, 2, 4, 3)", strides=(3, 2, 2),
          dilation=(1, 1, 2), groups=2)
    check("nn.conv3d", [T(("n", "c", 5, "h", "w")), T(("f", "c", 1, "kh", "kw"))],
          "float32(n, f, 5, h - kh + 1, w - kw + 1)")
    bad("nn.conv1d", [T((1, 3, 32)), T((16, 4, 3))],
        "R.nn.conv1d: the data has 3 input channels but the weight expects 4 x groups 1", 1)
    bad("nn.conv1d", [T((1, 3, 32, 2)), T((16, 3, 3))], "expected a 3-D tensor (NCW), got 4-D", 0)
    bad("nn.conv1d", [T((1, 4, 32)), T((6, 2, 3))], "groups must be positive, got 0", "groups", groups=0)
    bad("nn.conv1d", [T((1, 4, 32)), T((6, 2, 3))], "unsupported layout 'NCHW'", "data_layout", data_layout="NCHW")
    bad("nn.conv3d", [T((1, 4, 8, 8, 8)), T((6, 4, 3, 3, 3))], "expected 1, 3 or 6 integers, got 2", "padding",
        padding=(1, 1))
    bad("nn.conv3d", [T((1, 4, 8, 8, 8)), T((5, 2, 3, 3, 3))], "5 output channels are not divisible by groups 2",
        1, groups=2)
    bad("nn.conv3d", [T((1, 4, 2, 8, 8)), T((6, 4, 3, 3, 3))], "the window spans 3 elements", 0)
    bad("nn.conv3d", [T((1, 4, 8, 8, 8), "float32"), T((6, 4, 3, 3, 3), "float16")], "float16", 1)


@covers("nn.conv1d_transpose", "nn.conv2d_transpose")
def test_conv_transpose():
    check("nn.conv1d_transpose", [T((2, 3, 5)), T((3, 4, 3))], "float32(2, 4, 10)", strides=2, padding=1,
          output_padding=1)
    check("nn.conv1d_transpose", [T((2, 3, 5)), T((3, 4, 3))], "float32(2, 4, 9)", dilation=2)
    check("nn.conv1d_transpose", [T((2, 4, 5)), T((4, 3, 3))], "float32(2, 6, 7)", groups=2)
    check("nn.conv1d_transpose", [T(("n", "c", "w")), T(("c", "f", "kw"))], "float32(n, f, kw + w - 1)")  # TVM: w + kw - 1
    check("nn.conv2d_transpose", [T((2, 4, 5, 5)), T((4, 3, 3, 3))], "float32(2, 6, 9, 9)", strides=2, padding=1,
          groups=2)
    check("nn.conv2d_transpose", [T((2, 5, 5, 4)), T((4, 3, 3, 3))], "float32(2, 7, 7, 3)", data_layout="NHWC")
    check("nn.conv2d_transpose", [T((2, 4, 5, 5), "int8"), T((4, 3, 3, 3), "int8")], "int32(2, 3, 7, 7)",
          out_dtype="int32")
    check("nn.conv2d_transpose", [T(("n", "c", "h", "w")), T(("c", "f", 3, 3))], "float32(n, f, h * 2 - 1, w * 2 - 1)",
          strides=2, padding=1, output_padding=0)
    bad("nn.conv1d_transpose", [T((2, 3, 5)), T((3, 4, 3))],
        "the output padding [2] must be less than the strides [2]", "output_padding", strides=2, output_padding=2)
    bad("nn.conv1d_transpose", [T((2, 3, 5)), T((4, 4, 3))],
        "R.nn.conv1d_transpose: the data has 3 input channels but the weight takes 4", 1)
    bad("nn.conv2d_transpose", [T((2, 3, 5, 5)), T((3, 4, 3, 3))], "3 input channels are not divisible by groups 2",
        1, groups=2)
    bad("nn.conv2d_transpose", [T((2, 3, 5)), T((3, 4, 3, 3))], "expected a 4-D tensor (NCHW), got 3-D", 0)
    bad("nn.conv2d_transpose", [T((2, 3, 1, 1)), T((3, 4, 1, 1))], "leaves no output along H", 0, padding=1)


@covers("nn.pad")
def test_pad():
    check("nn.pad", [T((2, 3))], "float32(3, 6)", pad_width=[1, 0, 2, 1], pad_value=1.5)
    check("nn.pad", [T(("n", 3), "int32")], "int32(n + 1, 6)", pad_width=[1, 0, 2, 1], pad_mode="circular")
    check("nn.pad", [T((2, 3))], "float32(1, 5)", pad_width=[-1, 0, 2, 0])
    check("nn.pad", [T(2)], "float32[ndim=2]", pad_width=[1, 0, 2, 1], pad_mode="reflect")
    bad("nn.pad", [T((2, 3))], "pad_width needs a (before, after) pair per axis: 4 integers for 2 axes, got 3",
        "pad_width", pad_width=[1, 0, 2])
    bad("nn.pad", [T((2, 3))], "unsupported pad_mode 'edge'", "pad_mode", pad_width=[1, 0, 2, 1], pad_mode="edge")
    bad("nn.pad", [T((2, 3))], "the widths -2, -1 crop axis 0 of length 2 to -1", "pad_width",
        pad_width=[-2, -1, 0, 0])


@covers("nn.max_pool1d", "nn.avg_pool1d", "nn.max_pool3d", "nn.avg_pool3d")
def test_pool1d_pool3d():
    check("nn.max_pool1d", [T((2, 3, 10))], "float32(2, 3, 5)", pool_size=3, strides=2, padding=1)
    check("nn.avg_pool1d", [T((2, 10, 3))], "float32(2, 5, 3)", pool_size=2, strides=2, layout="NWC")
    check("nn.avg_pool1d", [T(("n", "c", "w"))], "float32(n, c, (w - 1) // 2 + 1)", pool_size=2, strides=2,
          ceil_mode=True)
    check("nn.max_pool3d", [T((1, 2, 4, 5, 6))], "float32(1, 2, 2, 3, 3)", pool_size=2, strides=2, ceil_mode=True)
    check("nn.avg_pool3d", [T(5)], "float32[ndim=5]")
    assert get_op_def("relax.nn.avg_pool1d").attrs[5].default is True  # TVM: 1-D and 3-D averages count the padding
    assert get_op_def("relax.nn.max_pool3d").attrs[5].default is False
    bad("nn.max_pool1d", [T((2, 3, 10, 1))], "expected a 3-D tensor (NCW), got 4-D", 0)
    bad("nn.avg_pool3d", [T((1, 2, 4, 5, 6))], "expected 1, 3 or 6 integers, got 2", "padding", padding=(1, 1))
    bad("nn.max_pool3d", [T((1, 2, 1, 5, 6))], "the window spans 2 elements", 0, pool_size=2)


@covers("nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool3d")
def test_adaptive_avg_pool1d_3d():
    check("nn.adaptive_avg_pool1d", [T((2, 3, 10))], "float32(2, 3, 3)", output_size=3)
    check("nn.adaptive_avg_pool1d", [T(("n", "c", "w"))], "float32(n, c, w)")
    check("nn.adaptive_avg_pool3d", [T((1, 2, 4, 6, 6))], "float32(1, 2, 2, 3, 2)", output_size=[2, 3, 2])
    check("nn.adaptive_avg_pool3d", [T((1, 4, 6, 6, 2))], "float32(1, 1, 1, 1, 2)", output_size=1, layout="NDHWC")
    bad("nn.adaptive_avg_pool3d", [T((1, 2, 4, 6))], "expected a 5-D tensor (NCDHW), got 4-D", 0)
    bad("nn.adaptive_avg_pool3d", [T((1, 2, 4, 4, 4))], "expected 1 or 3 integers, got 2", "output_size",
        output_size=(1, 2))


@covers("nn.group_norm", "nn.instance_norm", "nn.rms_norm")
def test_group_instance_rms_norm():
    check("nn.group_norm", [T((2, 4, 3)), T((4,)), T((4,))], "float32(2, 4, 3)", num_groups=2, channel_axis=1,
          axes=[2])
    check("nn.group_norm", [T(("n", "c", "h")), T(("c",)), T(("c",))], "float32(n, c, h)", num_groups=4,
          channel_axis=1, axes=[-1])
    check("nn.instance_norm", [T((2, 5, 3), "float16"), T((3,), "float16"), T((3,), "float16")],
          "float16(2, 5, 3)", channel_axis=-1, axes=[1])
    check("nn.rms_norm", [T((2, 4, 3)), T((3,))], "float32(2, 4, 3)")
    check("nn.rms_norm", [T(("n", "m", 3)), T(("m", 3))], "float32(n, m, 3)", axes=[1, 2])
    bad("nn.group_norm", [T((2, 5, 3)), T((5,)), T((5,))], "5 channels cannot be split into 2 groups", "num_groups",
        num_groups=2, channel_axis=1, axes=[2])
    bad("nn.group_norm", [T((2, 4, 3)), T((3,)), T((4,))], "gamma must have shape (4,), got (3,)", 1, num_groups=2,
        channel_axis=1, axes=[2])
    bad("nn.instance_norm", [T((2, 4, 3)), T((4,)), T((4,))], "the channel axis 1 cannot be normalised over",
        "axes", channel_axis=1, axes=[1, 2])
    bad("nn.instance_norm", [T((2, 4, 3), "int32"), T((4,), "int32"), T((4,), "int32")],
        "expected a float tensor, got dtype int32", 0, channel_axis=1, axes=[2])
    bad("nn.rms_norm", [T((2, 4, 3)), T((4,))], "weight must have shape (3,), got (4,)", 1)
    bad("nn.rms_norm", [T((2, 4, 3)), T((3,))], "axis 3 is out of range", "axes", axes=[3])


@covers("nn.prelu", "nn.selu", "nn.softplus")
def test_prelu_selu_softplus():
    check("nn.prelu", [T((2, 3, 4)), T((3,))], "float32(2, 3, 4)")
    check("nn.prelu", [T(("n", "m")), T(("m",))], "float32(n, m)", axis=-1)
    check("nn.selu", [T(("n", 3), "float16")], "float16(n, 3)")
    check("nn.softplus", [T((2, 3), "float64")], "float64(2, 3)", beta=2.0, threshold=10)
    assert [(f.name, f.default) for f in get_op_def("relax.nn.softplus").attrs] == [("beta", 1.0), ("threshold", 20.0)]
    bad("nn.prelu", [T((2, 3, 4)), T((4,))], "alpha must have shape (3,), got (4,)", 1)
    bad("nn.prelu", [T((2, 3, 4)), T((3,))], "axis 3 is out of range", "axis", axis=3)
    bad("nn.prelu", [T((2, 3), "int32"), T((3,), "int32")], "expected a float tensor, got dtype int32", 0, axis=1)
    bad("nn.selu", [T((2, 3), "int32")], "float", 0)
    bad("nn.softplus", [T((2, 3), "int8")], "float", 0)


@covers("nn.nll_loss", "nn.cross_entropy_with_logits", "nn.pixel_shuffle", "nn.batch_flatten")
def test_losses_pixel_shuffle_batch_flatten():
    check("nn.nll_loss", [T((2, 3, 4)), T((2, 4), "int64"), T((3,))], "float32()")
    check("nn.nll_loss", [T(("n", 3)), T(("n",), "int32")], "float32(n,)", reduction="none")
    check("nn.nll_loss", [T((3,)), T((), "int64")], "float32()", reduction="sum")
    bad("nn.nll_loss", [T((2, 3)), T((2,), "float32")], "the targets must be integers, got dtype float32", 1)
    bad("nn.nll_loss", [T((2, 3)), T((3,), "int64")], "the targets must have shape (2,)", 1)
    bad("nn.nll_loss", [T((2, 3)), T((2, 1), "int64")], "2-D predictions take 1-D targets, got 2-D", 1)
    bad("nn.nll_loss", [T((2, 3)), T((2,), "int64"), T((4,))], "4 weights for 3 classes", 2)
    bad("nn.nll_loss", [T((2, 3)), T((2,), "int64")], "the reduction must be one of none, mean, sum, got 'max'",
        "reduction", reduction="max")
    check("nn.cross_entropy_with_logits", [T((2, 3)), T((2, 3))], "float32()")
    check("nn.cross_entropy_with_logits", [T(("n",), "int32"), T(("n",), "int32")], "int32()")
    bad("nn.cross_entropy_with_logits", [T((2, 3)), T((2, 4))], "must have one shape", 1)
    bad("nn.cross_entropy_with_logits", [T((2, 3, 1)), T((2, 3, 1))], "expected 1-D or 2-D predictions", 0)
    check("nn.pixel_shuffle", [T((1, 8, 2, 3))], "float32(1, 2, 4, 6)", upscale_factor=2)
    check("nn.pixel_shuffle", [T((18, 2, 3))], "float32(2, 6, 9)", upscale_factor=3)
    check("nn.pixel_shuffle", [T(("n", "c", "h", "w"))], "float32(n, c // 4, h * 2, w * 2)", upscale_factor=2)
    bad("nn.pixel_shuffle", [T((1, 6, 2, 3))], "6 channels are not divisible by upscale_factor squared (4)", 0,
        upscale_factor=2)
    bad("nn.pixel_shuffle", [T((6, 2))], "expected at least 3 dimensions", 0, upscale_factor=1)
    check("nn.batch_flatten", [T((2, 3, 4))], "float32(2, 12)")
    check("nn.batch_flatten", [T(("n", "m", 4))], "float32(n, m * 4)")
    check("nn.batch_flatten", [T(3)], "float32[ndim=2]")
    bad("nn.batch_flatten", [T((2,))], "expected at least 2 dimensions, got 1", 0)


@covers("nn.attention", "nn.attention_bias")
def test_attention():
    q, k, v = T((2, 4, 3, 8)), T((2, 5, 3, 8)), T((2, 5, 3, 6))
    check("nn.attention", [q, k, v], "float32(2, 4, 3, 6)")
    check("nn.attention_bias", [q, k, v, T((2, 3, 4, 5))], "float32(2, 4, 3, 6)", scale=0.5, causal_mask="TopLeft")
    check("nn.attention_bias", [q, k, v, T((4, 1))], "float32(2, 4, 3, 6)")
    check("nn.attention", [T(("n", "m", 3, 8)), T(("n", "c", 3, 8)), T(("n", "c", 3, 2))], "float32(n, m, 3, 2)")
    check("nn.attention", [T(4), k, v], "float32[ndim=4]")
    c = make_call("relax.nn.attention", (q, k, v), {"scale": 0.5})
    scale = c.attrs["scale"]  # TVM keeps a FloatImm (printed T.float32(0.5))
    assert isinstance(scale, tir.FloatImm) and (scale.dtype, scale.value) == ("float32", 0.5)
    bad("nn.attention", [T((2, 4, 8)), k, v], "the query must be 4-D (batch, sequence, heads, head dim), got 3-D", 0)
    bad("nn.attention", [q, T((2, 5, 3, 7)), v], "the head dim sizes differ: 7", 1)
    bad("nn.attention", [q, k, T((2, 6, 3, 6))], "the key sequence sizes differ: 6", 2)
    bad("nn.attention_bias", [q, k, v, T((2, 3, 4, 6))], "does not broadcast to (B, N, S, S_kv) = (2, 3, 4, 5)", 3)
    bad("nn.attention", [q, k, v], "the causal mask must be None, 'TopLeft' or 'BottomRight', got 'Top'",
        "causal_mask", causal_mask="Top")
    bad("nn.attention", [q, k, T((2, 5, 3, 6), "float16")], "float16", 2)


# ---------------------------------------------------------------- sorting and scans (issue 16)
covers("sort", "argsort", "topk", "cumsum", "cumprod")


def test_sort_and_argsort_keep_the_shape():
    check("sort", [T(("n", 4))], "float32(n, 4)", axis=0)
    check("sort", [T(2)], "float32[ndim=2]", descending=True)
    check("argsort", [T(("n", 4))], "int32(n, 4)")
    check("argsort", [T((2, 3), "int32")], "int64(2, 3)", dtype="int64", descending=True)
    bad("sort", [T((2, 3))], "axis 2 is out of range for a tensor of 2 dimensions", "axis", axis=2)
    bad("argsort", [S(2, 3)], "must be a tensor", 0)
    with pytest.raises(OpError, match="integer dtype for the indices"):
        call("argsort", T((2, 3)), dtype="float32")


def test_topk_cuts_the_axis_to_k():
    # TVM 0.27: k < 1, or k past the end of a static axis, keeps the whole axis.
    check("topk", [T(("n", 4))], "(float32(n, 2), int32(n, 2))", k=2)
    check("topk", [T(("n", 4))], "float32(2, 4)", k=2, axis=0, ret_type="values")
    check("topk", [T(("n", 4))], "int32(n, 4)", k=5, axis=1, ret_type="indices")
    check("topk", [T(("n", 4))], "(float32(n, 4), int32(n, 4))", k=0)
    check("topk", [T(("n", 4))], "(float32(n, 4), int64(n, 4))", k=-1, dtype="int64")
    check("topk", [T(2)], "(float32[ndim=2], int32[ndim=2])", k=3, axis=0)
    check("topk", [T(-1)], "(float32[ndim=-1], int32[ndim=-1])", k=3, axis=0)
    with pytest.raises(OpError, match="ret_type must be one of 'both', 'values', 'indices'"):
        call("topk", T((2, 3)), ret_type="foo")


def test_cumsum_and_cumprod_flatten_without_an_axis():
    check("cumsum", [T(("n", 4))], "float32(n * 4,)")
    check("cumsum", [T(("n", 4))], "float64(n, 4)", axis=1, dtype="float64", exclusive=True)
    check("cumprod", [T((2, 3), "int32")], "int32(2, 3)", axis=-1)
    check("cumsum", [T((2, 3), "int32")], "float32(6,)", dtype="float32")
    check("cumsum", [T(-1)], "float32[ndim=-1]")
    check("cumsum", [T(-1)], "float32[ndim=-1]", axis=1)
    check("cumprod", [T(2)], "float32[ndim=1]")
    bad("cumsum", [T((2, 3))], "axis 3 is out of range", "axis", axis=3)


covers("bucketize", "median")


def test_bucketize_gives_indices_of_the_input_shape():
    check("bucketize", [T(("n", 4)), T((5,))], "int64(n, 4)")
    check("bucketize", [T((2, 3), "int32"), T((5,))], "int32(2, 3)", out_int32=True, right=True)
    check("bucketize", [T(-1), T((5,))], "int64[ndim=-1]")
    check("bucketize", [T(("n", 4)), T(-1)], "int64(n, 4)")
    bad("bucketize", [T(("n", 4)), T((2, 5))], "the boundaries must be a 1-D tensor, got 2 dimensions", 1)


def test_median_over_one_axis_gives_values_and_indices():
    # TVM 0.27: over one axis a (values, int64 indices) tuple; over none (or all) one tensor
    check("median", [T(("n", 4))], "float32()")
    check("median", [T(("n", 4))], "float32(1, 1)", keepdims=True)
    check("median", [T(("n", 4))], "(float32(n,), int64(n,))", axis=[1])
    check("median", [T(("n", 4))], "(float32(1, 4), int64(1, 4))", axis=[0], keepdims=True)
    check("median", [T(("n", 4))], "float32()", axis=[0, 1])
    check("median", [T((2, 3), "int32")], "(int32(3,), int64(3,))", axis=0)
    check("median", [T(-1)], "(float32[ndim=-1], int64[ndim=-1])", axis=0)
    check("median", [T(2)], "(float32[ndim=1], int64[ndim=1])", axis=-1)
    bad("median", [T(("n", 4))], "axis 2 is out of range", "axis", axis=2)
    bad("median", [T((2, 3, 4))], "reduces over one axis or all of them, got axes [0, 1]", "axis", axis=[0, 1])


covers("nonzero", "unique")


def test_nonzero_knows_only_the_rank():
    check("nonzero", [T(("n", 4))], "int64[ndim=2]")
    check("nonzero", [T(-1, "int32")], "int64[ndim=2]")
    bad("nonzero", [S(2)], "must be a tensor", 0)


def test_unique_returns_what_its_flags_ask_for():
    t, f = P(1, "bool"), P(0, "bool")
    check("unique", [T(("n", 4)), t, f, f, f], "float32[ndim=1]")
    check("unique", [T(("n", 4)), f, t, t, t, P(1)], "(float32[ndim=2], int64[ndim=1], int64[ndim=1], int64[ndim=1])")
    check("unique", [T((2, 3), "int32"), t, f, f, t], "(int32[ndim=1], int64[ndim=1])")
    check("unique", [T(-1), t, f, f, f, P(0)], "float32[ndim=-1]")
    check("unique", [T(("n", 4)), t, f, t, f], "(float32[ndim=1], int64[ndim=1])")
    bad("unique", [T(("n", 4)), t, f, f, f, P(3)], "axis 3 is out of range", 5)
    bad("unique", [T(("n", 4)), P(tir.Var("b", "bool"), "bool"), f, f, f], "sorted must be a literal bool", 1)


covers("multinomial_from_uniform")


def test_multinomial_from_uniform_samples_one_class_per_row():
    check("multinomial_from_uniform", [T((3, 5)), T(("n", 1)), T(("n", 1), "int64")], "int64(n, 1)")
    check("multinomial_from_uniform", [T((3, 5), "float16"), T(("n", 1)), T(("n", 1), "int32")], "int32(n, 1)",
          dtype="int32")
    check("multinomial_from_uniform", [T(2), T(2), T(2, "int64")], "int64[ndim=2]")
    bad("multinomial_from_uniform", [T((3, 5)), T((2,)), T((2, 1), "int64")],
        "uniform_sample must be a 2-D tensor of shape (n, 1), got shape (2,)", 1)
    bad("multinomial_from_uniform", [T((3, 5)), T((2, 1)), T((2, 1))], "expected an integer tensor", 2)
    bad("multinomial_from_uniform", [T((5,)), T((2, 1)), T((2, 1), "int64")], "prob must be a 2-D tensor", 0)


covers("atan2", "log_add_exp")


@pytest.mark.parametrize("op", ["atan2", "log_add_exp"])
def test_atan2_and_log_add_exp_broadcast(op):
    check(op, [T(("n", 3)), T((3,))], "float32(n, 3)")
    check(op, [T((2, 3), "int32"), T((2, 3), "int32")], "int32(2, 3)")  # TVM 0.27 accepts integers
    bad(op, [T(("n", 3)), T((2, 3), "float16")], "", 1)
    bad(op, [T((2, 3)), T((4,))], "", 1)


covers("einsum", "outer")


def test_einsum_reads_numpy_notation():
    def tup(*ts):
        return rx.Tuple(ts)

    check("einsum", [tup(T(("n", 3)), T((3,)))], "float32(n,)", subscripts="ij,j->i")
    check("einsum", [tup(T((2, 3), "int32"), T((2, 3), "int32"))], "int32(2, 3)", subscripts="ij,ij->ij")
    check("einsum", [tup(T(("n", 3)))], "float32(3, n)", subscripts="ij->ji")
    check("einsum", [tup(T((3,)), T((4,)))], "float32(3, 4)", subscripts="i,j->ij")
    check("einsum", [tup(T(("n", 3)))], "float32(n,)", subscripts="ii->i")
    check("einsum", [tup(T(("n", 3)), T((3,)))], "float32(n,)", subscripts="...j,j->...")
    check("einsum", [tup(T((2, 3)), T((3, 4)))], "float32(2, 4)", subscripts="ij,jk")  # implicit output
    check("einsum", [tup(T((5, 1, 3)), T((2, 3)))], "float32(5, 2)", subscripts="...j,...j->...")
    check("einsum", [tup(T((2, 3)), T((3,)))], "float32()", subscripts="ij,j->")
    check("einsum", [tup(T(2), T((3,)))], "float32[ndim=1]", subscripts="ij,j->i")
    check("einsum", [tup(T(-1), T((3,)))], "float32[ndim=-1]", subscripts="ij,j->i")
    bad("einsum", [tup(T(("n", 3)), T((2, 2)))], "label 'j' stands for dimensions of 3 and 2", "subscripts",
        subscripts="ij,jk->ik")
    bad("einsum", [tup(T(("n", 3)), T((2, 3), "float16"))], "the operands must share one dtype", 0,
        subscripts="ij,ij->ij")
    bad("einsum", [tup(T((2, 3)))], "do not match an operand of 2 dimensions", "subscripts", subscripts="ijk->i")
    bad("einsum", [tup(T((2, 3)))], "name 2 operands, got 1", "subscripts", subscripts="ij,j->i")
    bad("einsum", [tup(T((2, 3)))], "name a label no operand has", "subscripts", subscripts="ij->k")


def test_outer_of_two_vectors():
    check("outer", [T((3,)), T(("n",))], "float32(3, n)")
    check("outer", [T((4,), "int32"), T((4,))], "int32(4, 4)")  # TVM 0.27: the first one's dtype
    check("outer", [T(1), T(-1)], "float32[ndim=2]")
    bad("outer", [T((2, 2)), T((4,))], "expects 1-D tensors, got 2 dimensions", 0)


covers("eye", "eye_like", "hamming_window")


def test_eye_and_eye_like_shapes():
    check("eye", [P(3)], "float32(3, 3)")
    check("eye", [P(3), P(4), P(1)], "int32(3, 4)", dtype="int32")
    check("eye", [P(n), P(n), P(-5)], "float32(n, n)")
    check("eye", [P(0)], "float32(0, 0)")
    check("eye", [P(tir.Var("s", "int64"))], "float32(s, s)")
    bad("eye", [P(-1)], "n must not be negative, got -1", 0)
    bad("eye", [T((3,))], "n must be an integer (R.prim_value), got a tensor", 0)
    check("eye_like", [T(("n", 3)), P(0)], "float32(n, 3)")
    check("eye_like", [T((2, 3), "int32"), P(2)], "float16(2, 3)", dtype="float16")
    bad("eye_like", [T((2, 3, 4)), P(0)], "expects a 2-D tensor of known shape, got 3 dimensions", 0)
    bad("eye_like", [T(2), P(0)], "expects a 2-D tensor of known shape, got an unknown shape", 0)


def test_hamming_window_is_a_float_vector():
    alpha, beta = P(tir.FloatImm("float64", 0.54), "float64"), P(tir.FloatImm("float64", 0.46), "float64")
    check("hamming_window", [P(5), P(1), alpha, beta], "float32(5,)", dtype="float32")
    check("hamming_window", [P(n), P(0), alpha, beta], "float64(n,)", dtype="float64")
    bad("hamming_window", [P(5), P(1), alpha, beta], "the window's dtype must be a float dtype, got int32", "dtype",
        dtype="int32")
    bad("hamming_window", [P(0), P(1), alpha, beta], "window_size must be at least 1, got 0", 0, dtype="float32")


def test_scan_and_eye_like_read_a_void_dtype_as_none():
    assert normalize_attrs(get_op_def("relax.cumsum"), {"dtype": "void"})["dtype"] is None
    assert normalize_attrs(get_op_def("relax.eye_like"), {"dtype": ""})["dtype"] is None
    check("cumsum", [T((2, 3), "int32")], "int32(2, 3)", axis=0, dtype="void")


# ---------------------------------------------------------------- the remaining small ops (issue 16)
covers("quantize", "dequantize")
TVM_ATTRS.update({"quantize": [("out_dtype", "int8"), ("axis", -1)],
                  "dequantize": [("out_dtype", "float32"), ("axis", -1)]})


def test_quantize_and_dequantize_keep_the_data_shape():
    # TVM 0.27's rules, checked with its inference (oracle)
    check("quantize", [T(("n", "m")), T(("m",)), T(("m",), "int8")], "int8(n, m)", axis=1)
    check("quantize", [T(("n", 3), "float16"), T(()), T((), "uint8")], "uint8(n, 3)", out_dtype="uint8")
    check("quantize", [T(("n", 3)), T((1,), "float16"), T((1,), "int32")], "int16(n, 3)", axis=0, out_dtype="int16")
    check("quantize", [T(("n", 3)), T(("n",)), T(("n",), "float16")], "uint16(n, 3)", axis=0, out_dtype="uint16")
    check("quantize", [T((2, 3)), T((1, 1)), T((1,), "int8")], "int8(2, 3)")
    check("quantize", [T(2), T((3,)), T((3,), "int8")], "int8[ndim=2]", axis=1)
    check("quantize", [T(()), T(()), T((), "int8")], "int8()")
    check("dequantize", [T(("n", 3), "int8"), T((3,)), T((3,), "int8")], "float32(n, 3)")
    check("dequantize", [T((2, 4), "int32"), T((2,)), T((2,), "int32")], "float16(2, 4)", axis=0,
          out_dtype="float16")
    check("dequantize", [T((2, 4), "float16"), T(()), T((), "uint8")], "float32(2, 4)")
    bad("quantize", [T((2, 3), "float64"), T((3,)), T((3,), "int8")], "the data's dtype must be one of float16, "
        "float32, got float64", 0)
    bad("quantize", [T((2, 3)), T((3,)), T((3,), "int8")], "out_dtype must be one of int8, uint8, int16, uint16, "
        "got int32", "out_dtype", out_dtype="int32")
    bad("quantize", [T((2, 3)), T((3,), "float64"), T((3,), "int8")], "the scale's dtype must be one of", 1)
    bad("quantize", [T((2, 3)), T((3,)), T((3,), "int64")], "the zero_point's dtype must be one of", 2)
    bad("quantize", [T((2, 3)), T((2,)), T((3,), "int8")], "the data has 3 elements along axis 1 but the scale "
        "has 2", 1)
    bad("quantize", [T(("n", 3)), T(("m",)), T(("m",), "int8")], "the data has n elements along axis 0", 1, axis=0)
    bad("quantize", [T((2, 3)), T((1, 3)), T((3,), "int8")], "must be one value or a vector along the axis", 1)
    bad("quantize", [T((2, 3)), T((3,)), T((3,), "int8")], "axis 2 is out of range", "axis", axis=2)
    bad("quantize", [T(()), T((3,)), T((), "int8")], "a scalar takes one scale, got a vector", 1)
    bad("dequantize", [T((2, 3), "int64"), T((3,)), T((3,), "int8")], "the data's dtype must be one of", 0)
    bad("dequantize", [T((2, 3), "int8"), T((3,)), T((3,), "int8")], "out_dtype must be one of float16, float32",
        "out_dtype", out_dtype="float64")


covers("nn.conv3d_transpose")
TVM_ATTRS.update({"nn.conv3d_transpose": [
    ("strides", (1, 1, 1)), ("padding", (0, 0, 0, 0, 0, 0)), ("output_padding", (0, 0, 0)), ("dilation", (1, 1, 1)),
    ("groups", 1), ("data_layout", "NCDHW"), ("kernel_layout", "IODHW"), ("out_layout", None), ("out_dtype", "void")]})


def test_conv3d_transpose_shapes():
    # TVM 0.27's inference (oracle): static, grouped, symbolic, NDHWC, mixed precision, errors
    check("nn.conv3d_transpose", [T(("n", "c", "f", "h", "w")), T(("c", "kh", 3, 3, 3))],
          "float32(n, kh, f * 2, h * 2, w * 2)", strides=2, padding=1, output_padding=1)
    check("nn.conv3d_transpose", [T((2, 4, 3, 5, 5)), T((4, 3, 2, 3, 3))], "float32(2, 6, 5, 11, 11)",
          strides=(1, 2, 2), dilation=(2, 1, 1), groups=2)
    check("nn.conv3d_transpose", [T((2, 3, 5, 5, 4)), T((4, 3, 3, 3, 3))], "float32(2, 5, 7, 7, 3)",
          data_layout="NDHWC")
    check("nn.conv3d_transpose", [T((2, 4, 3, 5, 5), "int8"), T((4, 3, 3, 3, 3), "int8")], "int32(2, 3, 5, 7, 7)",
          out_dtype="int32")
    check("nn.conv3d_transpose", [T(5), T(5)], "float32[ndim=5]")
    bad("nn.conv3d_transpose", [T((2, 4, 3, 5, 5)), T((3, 3, 3, 3, 3))], "the data has 4 input channels", 1)
    bad("nn.conv3d_transpose", [T((2, 4, 3, 5, 5)), T((4, 3, 3, 3, 3))], "output padding [1, 1, 1] must be less",
        "output_padding", output_padding=1)


covers("nn.attention_var_len")


def test_attention_var_len_shapes():
    # TVM 0.27: attention's rules for (1, total, N, H) queries, keys and values; tvmlite also checks
    # the starts (1-D integers, as many for queries as for keys) and the maximum lengths (scalars)
    s, mx = T((3,), "int32"), T((), "int32")
    check("nn.attention_var_len", [T((1, "n", 4, 8)), T((1, "m", 4, 8)), T((1, "m", 4, 6)), s, s, mx, mx],
          "float32(1, n, 4, 6)")
    check("nn.attention_var_len", [T((1, "n", 4, 8), "float16"), T((1, "n", 4, 8), "float16"),
                                   T((1, "n", 4, 8), "float16"), T(("c",), "int64"), T(("c",), "int64"),
                                   T((), "int64"), T((), "int64")], "float16(1, n, 4, 8)", causal_mask="BottomRight")
    check("nn.attention_var_len", [T(4), T(4), T(4), s, s, mx, mx], "float32[ndim=4]")
    bad("nn.attention_var_len", [T((1, 5, 4, 8)), T((1, 6, 4, 7)), T((1, 6, 4, 6)), s, s, mx, mx],
        "the head dim sizes differ", 1)
    bad("nn.attention_var_len", [T((5, 4, 8)), T((1, 6, 4, 8)), T((1, 6, 4, 6)), s, s, mx, mx], "must be 4-D", 0)
    bad("nn.attention_var_len", [T((2, 5, 4, 8)), T((2, 6, 4, 8)), T((2, 6, 4, 6)), s, s, mx, mx],
        "concatenated along axis 1 of a batch of one", 0)
    bad("nn.attention_var_len", [T((1, 5, 4, 8), "int32"), T((1, 6, 4, 8), "int32"), T((1, 6, 4, 6), "int32"),
                                 s, s, mx, mx], "expected a float tensor", 0)
    bad("nn.attention_var_len", [T((1, 5, 4, 8)), T((1, 6, 4, 8)), T((1, 6, 4, 6)), T((3,)), s, mx, mx],
        "seqstart_q must be an integer tensor", 3)
    bad("nn.attention_var_len", [T((1, 5, 4, 8)), T((1, 6, 4, 8)), T((1, 6, 4, 6)), s, s, s, mx],
        "max_seqlen_q must be a scalar tensor, got 1 dimensions", 5)
    bad("nn.attention_var_len", [T((1, 5, 4, 8)), T((1, 6, 4, 8)), T((1, 6, 4, 6)), s, T((4,), "int32"), mx, mx],
        "must list as many sequences, got 3 and 4 starts", 4)
    bad("nn.attention_var_len", [T((1, 5, 4, 8)), T((1, 6, 4, 8)), T((1, 6, 4, 6)), s, s, mx, mx],
        "the causal mask must be None, 'TopLeft' or 'BottomRight'", "causal_mask", causal_mask="Foo")


covers("ccl.allreduce", "ccl.allgather", "ccl.broadcast_from_worker0", "ccl.scatter_from_worker0")
TVM_ATTRS.update({"ccl.allreduce": [("op_type", "sum"), ("in_group", True)],
                  "ccl.allgather": [("num_workers", "REQUIRED"), ("in_group", True)],
                  "ccl.scatter_from_worker0": [("num_workers", "REQUIRED"), ("axis", 0)]})


def test_collectives_shapes():
    # TVM 0.27's inference (oracle): allgather multiplies axis 0, scatter divides its axis
    check("ccl.allreduce", [T(("n", 3))], "float32(n, 3)", op_type="max", in_group=False)
    check("ccl.allreduce", [T(2, "int32")], "int32[ndim=2]", op_type="avg")
    check("ccl.allgather", [T(("n", 3))], "float32(n * 4, 3)", num_workers=4)
    check("ccl.allgather", [T(("n", 3))], "float32(n, 3)", num_workers=1)
    check("ccl.allgather", [T(2)], "float32[ndim=2]", num_workers=2)
    check("ccl.broadcast_from_worker0", [T(("n", 3), "int8")], "int8(n, 3)")
    check("ccl.scatter_from_worker0", [T(("n", 6))], "float32(n, 3)", num_workers=2, axis=1)
    check("ccl.scatter_from_worker0", [T(("n", 6))], "float32(n // 2, 6)", num_workers=2)
    check("ccl.scatter_from_worker0", [T((4, 6))], "float32(4, 6)", num_workers=1)
    check("ccl.scatter_from_worker0", [T((4, 6))], "float32(4, 3)", num_workers=2, axis=-1)  # TVM: axis >= 0
    check("ccl.scatter_from_worker0", [T(2)], "float32[ndim=2]", num_workers=2)
    bad("ccl.allreduce", [T((2, 3))], "allreduce supports the reductions sum, prod, min, max, avg, got 'foo'",
        "op_type", op_type="foo")
    bad("ccl.allgather", [T(())], "gathers along axis 0, got a tensor of no dimensions", 0, num_workers=2)
    bad("ccl.allgather", [T((2, 3))], "num_workers must be at least 1, got 0", "num_workers", num_workers=0)
    bad("ccl.scatter_from_worker0", [T((4, 6))], "axis 1 of size 6 does not divide among 4 workers", 0,
        num_workers=4, axis=1)
    bad("ccl.scatter_from_worker0", [T((4, 6))], "axis 2 is out of range", "axis", num_workers=2, axis=2)


@covers("call_py_func")
def test_call_py_func_returns_its_out_sinfo():
    x = T(("n", 4))
    out = rx.TensorStructInfo(dims(("n", 4)), "float32")
    pair = rx.TupleStructInfo((out, rx.TensorStructInfo(dims((3,)), "int32")))
    check("call_py_func", [rx.StringImm("f"), rx.Tuple((x,))], "float32(n, 4)", sinfo_args=(out,))
    check("call_py_func", [rx.StringImm("f"), rx.Tuple((x, x))], "(float32(n, 4), int32(3,))", sinfo_args=(pair,))
    bad("call_py_func", [rx.StringImm("f"), rx.Tuple((x,))], "needs out_sinfo", "out_sinfo")
    bad("call_py_func", [x, rx.Tuple((x,))], "the function must be named by a string", 0, sinfo_args=(out,))
    bad("call_py_func", [rx.StringImm("f"), x], "the arguments must be a tuple", 1, sinfo_args=(out,))


covers("size", "wrap_param")
TVM_ATTRS.update({"wrap_param": [("dtype", "float32")]})


def test_size_and_wrap_param():
    # TVM 0.27 (oracle): size is a 0-d int64 tensor whatever the input; wrap_param keeps the shape
    check("size", [T(("n", 3))], "int64()")
    check("size", [T(-1, "int8")], "int64()")
    check("size", [T(())], "int64()")
    bad("size", [S(2, 3)], "argument input must be a tensor", 0)
    check("wrap_param", [T(("n", 3), "float16")], "float32(n, 3)")
    check("wrap_param", [T(("n", 3), "int8")], "int32(n, 3)", dtype="int32")
    check("wrap_param", [T(2, "float16")], "float32[ndim=2]")
    bad("wrap_param", [T((2,))], "needs a dtype to convert to", "dtype", dtype="void")
covers("image.resize2d", "image.resize3d")


def test_resize_replaces_the_spatial_axes():
    check("image.resize2d", [T(("n", 3, 4, 6)), S(8, 3)], "float32(n, 3, 8, 3)")
    check("image.resize2d", [T(("n", 4, 6, 3), "int8"), S("h", 5)], "int8(n, h, 5, 3)", layout="NHWC")
    check("image.resize2d", [T((1, 2, 3, 4, 4)), S(6, 2)], "float16(1, 2, 6, 2, 4)", layout="NCHW4c",
          out_dtype="float16")
    check("image.resize2d", [T(4), S(8, 3)], "float32[ndim=4]")
    check("image.resize2d", [T(-1), S(8, 3)], "float32[ndim=4]")
    check("image.resize2d", [T((1, 3, 4, 6)), rx.Var("s", rx.ShapeStructInfo(None, 2))], "float32[ndim=4]")
    check("image.resize3d", [T(("n", 3, 4, 6, 2)), S(8, 3, "m")], "float32(n, 3, 8, 3, m)")
    check("image.resize3d", [T((1, 4, 6, 2, 3)), S(2, 2, 2)], "float32(1, 2, 2, 2, 3)", layout="NDHWC")
    bad("image.resize2d", [T((1, 3, 4, 6)), S(8, 3, 3)], "the output size must be a 2-dim shape, got 3 dims", 1)
    bad("image.resize3d", [T((1, 3, 4, 6, 4)), S(8, 3)], "the output size must be a 3-dim shape, got 2 dims", 1)
    bad("image.resize2d", [T((1, 3, 4, 6, 4)), S(8, 3)], "the layout NCHW needs a 4-D tensor, got 5-D", 0)
    bad("image.resize2d", [S(1, 2), S(8, 3)], "must be a tensor", 0)
    bad("image.resize2d", [T((1, 3, 4, 6)), T((2,))], "must be a shape", 1)
    for attrs, message in [({"method": "bilinear"}, "unsupported method 'bilinear'"),
                           ({"coordinate_transformation_mode": "foo"}, "unsupported coordinate_transformation_mode"),
                           ({"rounding_method": "up"}, "unsupported rounding_method 'up'"),
                           ({"layout": "NCDW"}, "unsupported layout 'NCDW'"),
                           ({"layout": "NCH2hW"}, "unsupported layout 'NCH2hW'"),
                           ({"roi": (1.0, 2.0)}, "the roi needs 4 values"),
                           ({"out_dtype": "float"}, "expected a dtype")]:
        with pytest.raises(OpError, match=message):
            call("image.resize2d", T((1, 3, 4, 6)), S(8, 3), **attrs)


def test_resize_attributes_as_tvm_declares_them():
    d = get_op_def("relax.image.resize2d")
    assert [f.name for f in d.attrs] == ["roi", "layout", "method", "coordinate_transformation_mode",
                                         "rounding_method", "cubic_alpha", "cubic_exclude", "extrapolation_value",
                                         "out_dtype"]
    a = normalize_attrs(d, {"roi": 0.5, "out_dtype": "void"})
    assert [r.value for r in a["roi"]] == [0.5] * 4 and a["out_dtype"] is None and a["rounding_method"] == "round"
    assert normalize_attrs(get_op_def("relax.image.resize3d"), {})["rounding_method"] == ""


covers("image.affine_grid", "image.grid_sample")


def test_affine_grid_gives_a_coordinate_per_output_point():
    check("image.affine_grid", [T(("n", 2, 3)), S(4, "h")], "float32(n, 2, 4, h)")
    check("image.affine_grid", [T((1, 3, 4), "float16"), S(2, 3, 4)], "float16(1, 3, 2, 3, 4)", align_corners=False)
    check("image.affine_grid", [T(3), S(4, 5)], "float32[ndim=4]")
    check("image.affine_grid", [T(-1), rx.Var("s", rx.ShapeStructInfo(None, 3))], "float32[ndim=5]")
    bad("image.affine_grid", [T((2, 2, 4)), S(3, 3)], "a 2-D grid needs a (batch, 2, 3) matrix, got (2, 2, 4)", 0)
    bad("image.affine_grid", [T((2, 3, 3)), S(3, 3)], "a 2-D grid needs a (batch, 2, 3) matrix", 0)
    bad("image.affine_grid", [T((2, 2, 3)), S(3, 3, 3)], "a 3-D grid needs a (batch, 3, 4) matrix", 0)
    bad("image.affine_grid", [T((2, 2)), S(3, 3)], "expects the matrix to be 3-D (batch, k, k + 1), got 2-D", 0)
    bad("image.affine_grid", [T((2, 2, 3)), S(3)], "the output size must be a 2-dim or 3-dim shape, got 1 dims", 1)
    bad("image.affine_grid", [T((2, 2, 3), "int32"), S(3, 3)], "expected a float tensor, got dtype int32", 0)


def test_grid_sample_takes_the_grids_points():
    # TVM 0.27's grid is (N, 2, H', W'): the output is (N, C, H', W')
    check("image.grid_sample", [T(("n", 3, 4, 5)), T(("n", 2, 6, "m"))], "float32(n, 3, 6, m)")
    check("image.grid_sample", [T((1, 3, 4, 5), "int8"), T((1, 2, 6, 7))], "int8(1, 3, 6, 7)", method="nearest",
          padding_mode="reflection", align_corners=True)
    check("image.grid_sample", [T((1, 2, 3, 4, 5)), T((1, 3, 6, 7, 8))], "float32(1, 2, 6, 7, 8)", layout="NCDHW")
    check("image.grid_sample", [T(4), T((1, 2, 6, 7))], "float32[ndim=4]")
    bad("image.grid_sample", [T((1, 3, 4, 5)), T((1, 6, 7, 2, 1))], "the grid must be 4-D (N, 2, ...), got 5-D", 1)
    bad("image.grid_sample", [T((1, 3, 4)), T((1, 2, 6, 7))], "the layout NCHW needs a 4-D tensor, got 3-D", 0)
    bad("image.grid_sample", [T((1, 3, 4, 5)), T((1, 2, 6, 7), "int32")], "expected a float tensor", 1)
    bad("image.grid_sample", [T((1, 2, 3, 4, 5)), T((1, 3, 6, 7, 8))], "bicubic sampling is 2-D only", "method",
        layout="NCDHW", method="bicubic")
    for attrs, message in [({"method": "linear"}, "unsupported method 'linear'"),
                           ({"layout": "NHWC"}, "unsupported layout 'NHWC'"),
                           ({"padding_mode": "wrap"}, "unsupported padding_mode 'wrap'")]:
        with pytest.raises(OpError, match=message):
            call("image.grid_sample", T((1, 3, 4, 5)), T((1, 2, 6, 7)), **attrs)


covers("vision.roi_align")


def test_roi_align_pools_each_roi():
    check("vision.roi_align", [T(("n", 3, "h", "w")), T(("m", 5))], "float32(m, 3, 2, 2)", pooled_size=2,
          spatial_scale=0.5)
    check("vision.roi_align", [T((2, 9, 8, 3), "float16"), T((4, 5), "float16")], "float16(4, 4, 1, 3)",
          pooled_size=(4, 1), spatial_scale=1.0, layout="NHWC", mode="max")
    check("vision.roi_align", [T(4), T((4, 5))], "float32[ndim=4]", pooled_size=2, spatial_scale=1.0)
    bad("vision.roi_align", [T((1, 3, 4, 4)), T((4, 4))], "the rois must be (num_roi, 5) boxes", 1,
        pooled_size=2, spatial_scale=1.0)
    bad("vision.roi_align", [T((1, 3, 4, 4)), T((4,))], "the rois must be 2-D (num_roi, 5), got 1-D", 1,
        pooled_size=2, spatial_scale=1.0)
    bad("vision.roi_align", [T((1, 3, 4)), T((4, 5))], "expected 4-D data (NCHW), got 3-D", 0,
        pooled_size=2, spatial_scale=1.0)
    bad("vision.roi_align", [T((1, 3, 4, 4)), T((4, 5), "float16")], "the rois must have the data's dtype", 1,
        pooled_size=2, spatial_scale=1.0)
    bad("vision.roi_align", [T((1, 3, 4, 4), "int32"), T((4, 5), "int32")], "expected float data", 0,
        pooled_size=2, spatial_scale=1.0)
    for attrs, message in [({"mode": "sum"}, "unsupported mode 'sum'"), ({"layout": "NCWH"}, "unsupported layout"),
                           ({"pooled_size": (2, 0)}, "pooled_size must be positive")]:
        with pytest.raises(OpError, match=message):
            call("vision.roi_align", T((1, 3, 4, 4)), T((4, 5)), **{"pooled_size": 2, "spatial_scale": 1.0, **attrs})


covers("vision.roi_pool")


def test_roi_pool_pools_each_roi():
    check("vision.roi_pool", [T(("n", 3, "h", "w")), T(("m", 5))], "float32(m, 3, 2, 3)", pooled_size=(2, 3),
          spatial_scale=0.5)
    check("vision.roi_pool", [T(-1), T(2)], "float32[ndim=4]", pooled_size=1, spatial_scale=1.0)
    bad("vision.roi_pool", [T((1, 3, 4, 4)), T((4, 6))], "the rois must be (num_roi, 5) boxes", 1,
        pooled_size=2, spatial_scale=1.0)
    with pytest.raises(OpError, match="unsupported layout 'NHWC'"):
        call("vision.roi_pool", T((1, 3, 4, 4)), T((4, 5)), pooled_size=2, spatial_scale=1.0, layout="NHWC")


covers("vision.get_valid_counts")


def test_get_valid_counts_returns_counts_boxes_and_indices():
    check("vision.get_valid_counts", [T(("n", "m", 6))], "(int32(n,), float32(n, m, 6), int32(n, m))",
          score_threshold=0.5)
    check("vision.get_valid_counts", [T(3, "float16")], "(int32[ndim=1], float16[ndim=3], int32[ndim=2])",
          id_index=-1)
    bad("vision.get_valid_counts", [T((2, 5))], "expects 3-D data (batch_size, num_anchors, elem_length), got 2-D", 0)
    bad("vision.get_valid_counts", [T((2, 5, 6))], "score_index 6 is out of range for boxes of 6 values",
        "score_index", score_index=6)
    bad("vision.get_valid_counts", [T((2, 5, 6))], "id_index -2 is out of range", "id_index", id_index=-2)


covers("vision.non_max_suppression")


def test_non_max_suppression_returns_indices_or_boxes():
    args = [T(("n", "m", 6)), T(("n",), "int32"), T(("n", "m"), "int32")]
    check("vision.non_max_suppression", args, "(int32(n, m), int32(n, 1))")
    check("vision.non_max_suppression", args, "float32(n, m, 6)", return_indices=False)
    check("vision.non_max_suppression", args, "(float32(n, m, 6), int32(n, m), int32(n, 1))", soft_nms_sigma=0.5)
    check("vision.non_max_suppression", [T(3), T(1, "int32"), T(2, "int32")], "(int32[ndim=2], int32[ndim=2])")
    bad("vision.non_max_suppression", [T((2, 5, 5)), *args[1:]], "coord_start 2 leaves no 4 coordinates", "coord_start")
    bad("vision.non_max_suppression", [args[0], T(("n",), "int64"), args[2]], "valid_count must be int32", 1)
    bad("vision.non_max_suppression", [args[0], args[1], T(("n",), "int32")], "indices (batch, num_anchors) must be 2-D", 2)
    bad("vision.non_max_suppression", args, "soft_nms_sigma must not be negative", "soft_nms_sigma", soft_nms_sigma=-1.0)


covers("vision.all_class_non_max_suppression")


def test_all_class_non_max_suppression_shapes():
    s64, f32 = T((), "int64"), T(())
    check("vision.all_class_non_max_suppression", [T(("n", "m", 4)), T(("n", 3, "m")), s64, f32, f32],
          "(int64(m * n * 3, 3), int64(1,))")
    check("vision.all_class_non_max_suppression", [T((2, 5, 4)), T((2, 3, 5)), s64, f32, f32],
          "(int64(2, 15, 2), float32(2, 15), int64(2,))", output_format="tensorflow")
    check("vision.all_class_non_max_suppression", [T(3), T(3), s64, f32, f32], "(int64[ndim=2], int64(1,))")
    bad("vision.all_class_non_max_suppression", [T((2, 5, 5)), T((2, 3, 5)), s64, f32, f32],
        "boxes must hold 4 coordinates per box", 0)
    bad("vision.all_class_non_max_suppression", [T((2, 5, 4)), T((2, 3)), s64, f32, f32],
        "scores (batch, num_classes, num_boxes) must be 3-D, got 2-D", 1)
    bad("vision.all_class_non_max_suppression", [T((2, 5, 4)), T((2, 3, 5)), f32, f32, f32],
        "max_output_boxes_per_class must be a scalar integer tensor", 2)
    with pytest.raises(OpError, match="unsupported output_format 'caffe'"):
        call("vision.all_class_non_max_suppression", T((2, 5, 4)), T((2, 3, 5)), s64, f32, f32, output_format="caffe")


covers("vision.multibox_transform_loc")


def test_multibox_transform_loc_decodes_boxes_and_scores():
    check("vision.multibox_transform_loc", [T(("n", 3, 5)), T(("n", 20)), T((1, 5, 4))],
          "(float32(n, 5, 4), float32(n, 3, 5))")
    check("vision.multibox_transform_loc", [T(-1, "float16"), T(2, "float16"), T(3, "float16")],
          "(float16[ndim=3], float16[ndim=3])", variances=(0.1, 0.1, 0.2, 0.2))
    bad("vision.multibox_transform_loc", [T((2, 3, 5)), T((2, 18)), T((1, 5, 4))],
        "loc_pred's second dim must be divisible by 4, got (2, 18)", 1)
    bad("vision.multibox_transform_loc", [T((2, 3, 5)), T((2, 16)), T((1, 5, 4))],
        "loc_pred's second dim (4 * N) must be 20, got 16", 1)
    bad("vision.multibox_transform_loc", [T((2, 3, 5)), T((3, 20)), T((1, 5, 4))], "loc_pred's batch must be 2", 1)
    bad("vision.multibox_transform_loc", [T((2, 3, 5)), T((2, 20)), T((1, 4, 4))], "anchor's N must be 5, got 4", 2)
    bad("vision.multibox_transform_loc", [T((2, 3, 5)), T((2, 20), "float16"), T((1, 5, 4))],
        "must share one dtype", 1)
    bad("vision.multibox_transform_loc", [T((2, 3)), T((2, 20)), T((1, 5, 4))], "cls_pred (B, C, N) must be 3-D", 0)
    with pytest.raises(OpError, match="variances must be 4 floats"):
        call("vision.multibox_transform_loc", T((2, 3, 5)), T((2, 20)), T((1, 5, 4)), variances=(1.0, 1.0))
