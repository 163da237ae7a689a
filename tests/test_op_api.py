"""The Python constructors: one per registered op (``relax.op``), the call_tir / packed-call
builders, ``const`` and the node and struct-info constructors of ``tvmlite.relax``."""
import inspect

import numpy as np
import pytest

from tvmlite import relax
from tvmlite.ir import GlobalVar, list_ops, tir
from tvmlite.ir import relax as rx
from tvmlite.ir.op import OpError
from tvmlite.relax import op
from tvmlite.script import from_source

X = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
W = relax.Var("w", relax.TensorStructInfo((4, 3), "float32"))


def test_every_registered_op_has_a_constructor():
    for opdef in list_ops():
        ns = op
        for part in opdef.script_name.split("."):
            ns = getattr(ns, part)
        assert callable(ns), opdef.name


def test_op_namespace_is_importable_like_tvm():
    import tvmlite.relax.op as op_module
    from tvmlite.relax.op import nn

    assert op_module is op and nn is op.nn and nn.relu is op.nn.relu


def test_inputs_then_attributes_in_declared_order():
    assert str(op.add(X, X)) == "R.add(x, x)"
    assert str(op.nn.relu(X)) == "R.nn.relu(x)"
    assert str(op.matmul(X, op.permute_dims(W), out_dtype="float32")) == \
        'R.matmul(x, R.permute_dims(w, axes=None), out_dtype="float32")'
    assert str(op.sum(X, axis=[1])) == "R.sum(x, axis=[1], keepdims=False)"
    assert str(op.sum(X, [1], True)) == "R.sum(x, axis=[1], keepdims=True)"  # positional attributes
    assert str(op.nn.softmax(X, 0)) == "R.nn.softmax(x, axis=0)"
    assert str(op.astype(x=X, dtype="float16")) == 'R.astype(x, dtype="float16")'  # inputs by keyword


def test_struct_info_is_inferred_by_the_registry():
    assert str(op.matmul(X, op.permute_dims(W)).struct_info) == 'R.Tensor((2, 4), dtype="float32")'
    assert str(op.sum(X, axis=[1]).struct_info) == 'R.Tensor((2,), dtype="float32")'
    assert str(op.reshape(X, [3, 2]).struct_info) == 'R.Tensor((3, 2), dtype="float32")'
    assert str(op.split(X, 3, axis=1).struct_info) == ('R.Tuple(R.Tensor((2, 1), dtype="float32"), '
                                                       'R.Tensor((2, 1), dtype="float32"), '
                                                       'R.Tensor((2, 1), dtype="float32"))')


def test_python_values_become_relax_values():
    assert str(op.reshape(X, (3, 2))) == "R.reshape(x, R.shape([3, 2]))"  # a shape input
    assert str(op.concat([X, X], axis=1)) == "R.concat((x, x), axis=1)"  # a tuple input
    assert str(op.clip(X, 0.0, 6)) == "R.clip(x, R.prim_value(T.float32(0.0)), R.prim_value(6))"
    assert str(op.print(X, format="x={}")) == 'R.print(x, format=R.str("x={}"))'
    assert str(op.add(X, np.ones((2, 3), "float32"))).startswith('R.add(x, metadata["relax.expr.Constant"][0])')


def test_constructor_signatures():
    assert str(inspect.signature(op.matmul)) == "(x1, x2, out_dtype='void')"
    assert str(inspect.signature(op.strided_slice)) == \
        "(x, axes, begin, end, strides=None, assume_inbound=False)"
    assert str(inspect.signature(op.print)) == "(format, *values)"
    assert op.nn.relu.__name__ == "relu" and "relax.nn.relu" in op.nn.relu.__doc__


def test_wrong_calls_are_clear_errors():
    with pytest.raises(TypeError, match=r"add\(\) takes at most 2 positional arguments \(x1, x2\), got 3"):
        op.add(X, X, X)
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        op.add(X, y=X)
    with pytest.raises(OpError, match=r"R.add takes 2 arguments \(x1, x2\), got 1"):
        op.add(X)
    with pytest.raises(OpError, match="R.nn.relu: argument data must be a tensor"):
        op.nn.relu("not a tensor")
    with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'axes' \(it takes: x, axis, keepdims\)"):
        op.sum(X, axes=[0])
    with pytest.raises(OpError, match="axis 5 is out of range"):
        op.sum(X, axis=[5])
    with pytest.raises(TypeError, match="expected a Relax expression, got dict"):
        op.exp({})


# ------------------------------------------------------------------ the call family
def test_call_tir_family():
    f = GlobalVar("add_one")
    out = relax.TensorStructInfo((2, 3), "float32")
    c = op.call_tir(f, (X,), out_sinfo=out)
    assert str(c) == 'R.call_tir(add_one, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))'
    assert c.struct_info is out and c.sinfo_args == (out,)
    n = tir.Var("n", "int64")
    two = op.call_tir(f, [X, X], [out, relax.TensorStructInfo((3,), "int32")], tir_vars=[n])
    assert str(two) == ('R.call_tir(add_one, (x, x), out_sinfo=[R.Tensor((2, 3), dtype="float32"), '
                        'R.Tensor((3,), dtype="int32")], tir_vars=R.shape([n]))')
    assert isinstance(two.struct_info, relax.TupleStructInfo)
    assert str(op.call_tir_inplace(f, X, 0, out)) == \
        'R.call_tir_inplace(add_one, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"), inplace_indices=[0])'
    assert str(op.call_dps_packed("my_f", [X], out)) == \
        'R.call_dps_packed("my_f", (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))'
    assert str(op.call_pure_packed("h", X, sinfo_args=out)) == \
        'R.call_pure_packed("h", x, sinfo_args=(R.Tensor((2, 3), dtype="float32"),))'
    packed = op.call_packed("my_g", X, sinfo_args=out)
    assert isinstance(packed.op, relax.ExternFunc) and packed.struct_info is out


def test_call_tir_round_trips_in_a_module():
    bb = relax.BlockBuilder(from_source('''
@I.ir_module
class M:
    @T.prim_func
    def add_one(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
        for i, j in T.grid(2, 3):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1.0)
'''))
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(op.call_tir(bb.get().get_global_var("add_one"), (x,),
                                            relax.TensorStructInfo((2, 3), "float32")))
        bb.emit_func_output(gv)
    text = bb.get().script()
    assert 'gv = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))' in text
    assert from_source(text).script() == text


# ------------------------------------------------------------------ values and nodes
def test_const_dtypes_follow_tvm():
    assert relax.const(1).data.dtype == np.int32
    assert relax.const(2.5).data.dtype == np.float32
    assert relax.const(True).data.dtype == np.bool_
    assert relax.const(np.arange(3)).data.dtype == np.int32  # int64 data -> int32, as TVM
    assert relax.const(np.ones(2)).data.dtype == np.float32  # float64 data -> float32
    assert relax.const(np.ones(2, "float16")).data.dtype == np.float16
    assert relax.const([1, 2], "int64").data.dtype == np.int64
    assert str(relax.const(1.5, "float32")) == 'R.const(1.5, "float32")'
    assert str(relax.const(np.ones((2, 2))).struct_info) == 'R.Tensor((2, 2), dtype="float32")'


def test_constructors_are_the_node_classes_for_isinstance():
    v = relax.Var("v", relax.TensorStructInfo((4,), "float32"))
    assert type(v) is rx.Var and isinstance(v, relax.Var) and not isinstance(v, relax.DataflowVar)
    assert isinstance(relax.DataflowVar("d", None), relax.Var)
    assert isinstance(op.add(v, v), relax.Call) and issubclass(rx.DataflowVar, relax.Var)
    assert isinstance(relax.TensorStructInfo((1,), "float32"), relax.StructInfo)
    assert isinstance(relax.TensorStructInfo((1,), "float32"), relax.TensorStructInfo)


def test_struct_info_constructors_take_python_values():
    n = tir.Var("n", "int64")
    s = relax.TensorStructInfo((n, 4), "float32")
    assert s.shape[1].dtype == "int64" and s.shape[0] is n and s.ndim == 2
    assert relax.TensorStructInfo().dtype == "float32" and relax.TensorStructInfo().ndim == -1
    assert relax.TensorStructInfo(ndim=2, dtype="int8").ndim == 2
    assert relax.TensorStructInfo(relax.ShapeExpr([2, 3])).shape[1].value == 3
    assert str(relax.ShapeStructInfo([1, n])) == "R.Shape([1, n])"
    assert str(relax.ShapeStructInfo(ndim=3)) == "R.Shape(ndim=3)"
    assert str(relax.PrimStructInfo("int64")) == 'R.Prim("int64")'
    assert relax.PrimStructInfo(value=3).dtype == "int64"
    assert len(relax.TupleStructInfo([s, s]).fields) == 2
    assert relax.FuncStructInfo([s], s).params == (s,)


def test_expression_constructors():
    n = tir.Var("n", "int64")
    assert str(relax.ShapeExpr([1, n])) == "R.shape([1, n])"
    assert str(relax.PrimValue(3)) == "R.prim_value(3)" and relax.PrimValue(3).value.dtype == "int64"
    assert str(relax.PrimValue(1.5)) == "R.prim_value(T.float32(1.5))"
    t = relax.Tuple([X, 1])
    assert str(t.struct_info) == 'R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Prim(value=1))'
    assert str(relax.TupleGetItem(t, 0).struct_info) == 'R.Tensor((2, 3), dtype="float32")'
    call = relax.Call(op.exp(X).op, [X])
    assert str(call.struct_info) == 'R.Tensor((2, 3), dtype="float32")'
    assert dict(relax.Call(op.sum(X).op, [X], {"axis": [0]}).attrs) == {"axis": (0,), "keepdims": False}
    assert isinstance(relax.ExternFunc("f").struct_info, relax.FuncStructInfo)


def test_function_constructor_derives_its_result():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo((n, 4), "float32"))
    y = relax.Var("y", relax.TensorStructInfo((n, 4), "float32"))
    binding = relax.VarBinding(y, op.exp(x))
    func = relax.Function([x], relax.SeqExpr([relax.BindingBlock([binding])], y),
                          attrs={"global_symbol": "f"})
    assert str(func.ret_struct_info) == 'R.Tensor((n, 4), dtype="float32")'
    assert func.params == (x,) and func.attrs["global_symbol"] == "f"
    text = func.script()
    assert 'def f(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):' in text
    assert from_source(text).script() == text

    cond = relax.Var("c", relax.PrimStructInfo("bool"))
    branchy = relax.If(cond, x, op.negative(x))
    assert str(branchy.struct_info) == 'R.Tensor((n, 4), dtype="float32")'
    assert isinstance(branchy.true_branch, relax.SeqExpr)
