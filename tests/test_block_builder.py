"""BlockBuilder: functions built binding by binding, TVM's variable names, struct info inferred
by the op registry, normalisation of nested calls, add_func/update_func/get."""
import textwrap

import numpy as np
import pytest

from tvmlite import relax
from tvmlite.ir import IRModule, get_op, structural_equal, tir
from tvmlite.ir.op import OpError
from tvmlite.script import from_source


def body(text: str) -> str:
    """Printed text without the ``# from ... import ...`` header lines."""
    return "\n".join(line for line in text.strip("\n").split("\n") if not line.startswith("# from ")).strip("\n")


def tensor(*shape, dtype="float32"):
    return relax.TensorStructInfo(shape, dtype)


# ------------------------------------------------------------------ seed 003's MLP
MLP_TEXT = '''\
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((1, 128), dtype="float32") = R.nn.dense(x, metadata["relax.expr.Constant"][0])
            lv1: R.Tensor((1, 128), dtype="float32") = R.add(lv, metadata["relax.expr.Constant"][1])
            lv2: R.Tensor((1, 128), dtype="float32") = R.nn.relu(lv1)
            lv3: R.Tensor((1, 10), dtype="float32") = R.nn.dense(lv2, metadata["relax.expr.Constant"][2])
            lv4: R.Tensor((1, 10), dtype="float32") = R.add(lv3, metadata["relax.expr.Constant"][3])
            gv: R.Tensor((1, 10), dtype="float32") = lv4
            R.output(gv)
        return gv

# Metadata omitted. Use show_meta=True in script() method to show it.'''


def create_model(params):
    """Seed 003's create_model, in today's spelling (``relax.op.nn.dense``, struct info)."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    w0 = relax.const(params["w0"], "float32")
    b0 = relax.const(params["b0"], "float32")
    w1 = relax.const(params["w1"], "float32")
    b1 = relax.const(params["b1"], "float32")
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.nn.dense(x, w0))
            lv1 = bb.emit(relax.op.add(lv0, b0))
            lv2 = bb.emit(relax.op.nn.relu(lv1))
            lv3 = bb.emit(relax.op.nn.dense(lv2, w1))
            lv4 = bb.emit(relax.op.add(lv3, b1))
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get()


@pytest.fixture(scope="module")
def mlp_params():
    rng = np.random.default_rng(3)
    return {"w0": rng.standard_normal((128, 784)), "b0": rng.standard_normal((128,)),
            "w1": rng.standard_normal((10, 128)), "b1": rng.standard_normal((10,))}


def test_seed003_mlp_prints_exactly(mlp_params):
    mod = create_model(mlp_params)
    assert body(mod.script()) == MLP_TEXT
    main = mod["main"]
    assert main.attrs["global_symbol"] == "main"
    bindings = main.body.blocks[0].bindings
    assert [type(b.var).__name__ for b in bindings] == ["DataflowVar"] * 5 + ["Var"]


def test_seed003_mlp_constants_survive_the_text(mlp_params):
    mod = create_model(mlp_params)
    again = from_source(mod.script(show_meta=True))
    assert structural_equal(again, mod)
    consts = [b.value.args[1] for b in again["main"].body.blocks[0].bindings if len(getattr(b.value, "args", ())) == 2]
    for c, key in zip(consts, ("w0", "b0", "w1", "b1")):
        assert c.data.dtype == np.float32
        assert np.array_equal(c.data, mlp_params[key].astype("float32"))


# ------------------------------------------------------------------ names and normalisation
def test_names_nested_calls_outputs_and_bindings_outside_dataflow():
    x, y = relax.Var("x", tensor(2, 3)), relax.Var("y", tensor(2, 3))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            lv = bb.emit(relax.op.add(relax.op.multiply(x, y), y))  # the multiply is bound first
            gv = bb.emit_output(relax.op.exp(lv))
            pair = bb.emit_output((gv, lv))
        out = bb.emit(relax.op.negative(gv))
        bb.emit_func_output(relax.op.add(out, relax.TupleGetItem(pair, 0)))
    assert body(bb.get().script()) == textwrap.dedent('''\
        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
                with R.dataflow():
                    lv: R.Tensor((2, 3), dtype="float32") = R.multiply(x, y)
                    lv1: R.Tensor((2, 3), dtype="float32") = R.add(lv, y)
                    gv: R.Tensor((2, 3), dtype="float32") = R.exp(lv1)
                    gv1: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")) = gv, lv1
                    R.output(gv, gv1)
                gv2: R.Tensor((2, 3), dtype="float32") = R.negative(gv)
                gv3: R.Tensor((2, 3), dtype="float32") = gv1[0]
                gv4: R.Tensor((2, 3), dtype="float32") = R.add(gv2, gv3)
                return gv4''')
    assert lv.name_hint == "lv1" and isinstance(lv, relax.DataflowVar)
    assert isinstance(gv, relax.Var) and not isinstance(gv, relax.DataflowVar)


def test_explicit_names_are_made_unique():
    x = relax.Var("x", tensor(4))
    bb = relax.BlockBuilder()
    with bb.function("f", [x]):
        a = bb.emit(relax.op.exp(x), name_hint="y")
        b = bb.emit(relax.op.exp(a), name_hint="y")
        c = bb.emit(relax.op.exp(b), name_hint="y")
        bb.emit_func_output(c)
    assert [a.name_hint, b.name_hint, c.name_hint] == ["y", "y1", "y2"]
    assert bb.get_unique_name("y") == "y3" and bb.get_unique_name("fresh") == "fresh"


def test_match_cast_private_function_and_erased_return_dims():
    n = tir.Var("n", "int64")
    z = relax.Var("z", relax.TensorStructInfo(ndim=1, dtype="float32"))
    bb = relax.BlockBuilder()
    with bb.function("g", [z], private=True):
        m = bb.match_cast(z, relax.TensorStructInfo((n,), "float32"))
        bb.emit_func_output([m, z])
    assert body(bb.get().script()) == textwrap.dedent('''\
        @I.ir_module
        class Module:
            @R.function(private=True)
            def g(z: R.Tensor(dtype="float32", ndim=1)) -> R.Tuple(R.Tensor(dtype="float32", ndim=1), R.Tensor(dtype="float32", ndim=1)):
                n = T.int64()
                gv: R.Tensor((n,), dtype="float32") = R.match_cast(z, R.Tensor((n,), dtype="float32"))
                return (gv, z)''')
    assert "global_symbol" not in bb.get()["g"].attrs


def test_params_given_to_emit_func_output_and_attrs():
    x = relax.Var("x", tensor(4))
    bb = relax.BlockBuilder()
    with bb.function("f", attrs={"num_input": 1}):
        bb.emit_func_output(x, params=[x])
    func = bb.get()["f"]
    assert func.params == (x,) and func.attrs["num_input"] == 1 and func.body.body is x


def test_symbolic_shapes_follow_the_parameters():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo((n, 784), "float32"))
    w = relax.Var("w", tensor(128, 784))
    bb = relax.BlockBuilder()
    with bb.function("forward", [x, w]):
        with bb.dataflow():
            y = bb.emit(relax.op.matmul(x, relax.op.permute_dims(w)))
            gv = bb.emit_output(relax.op.nn.relu(y))
        bb.emit_func_output(gv)
    text = body(bb.get().script())
    assert 'def forward(x: R.Tensor(("n", 784), dtype="float32"), w: R.Tensor((128, 784), dtype="float32")) ' \
           '-> R.Tensor(("n", 128), dtype="float32"):' in text
    assert 'lv: R.Tensor((128, 784), dtype="float32")' not in text
    assert 'lv: R.Tensor((784, 128), dtype="float32") = R.permute_dims(w, axes=None)' in text
    assert 'lv1: R.Tensor((n, 128), dtype="float32") = R.matmul(x, lv, out_dtype="void")' in text


def test_lookup_binding_and_normalize():
    x = relax.Var("x", tensor(4))
    bb = relax.BlockBuilder()
    with bb.function("f", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.op.exp(x))
            call = relax.Call(get_op("relax.negative"), [lv])
            normalized = bb.normalize(relax.Tuple([call, x]))
            assert isinstance(normalized.fields[0], relax.DataflowVar)  # bound, as a tuple field is an argument
            gv = bb.emit_output(normalized)
        bb.emit_func_output(gv)
    assert bb.lookup_binding(lv).op.name == "relax.exp"
    assert bb.lookup_binding(x) is None
    assert str(normalized.struct_info) == 'R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32"))'


def test_calls_of_module_functions_get_the_callee_result():
    x = relax.Var("x", tensor(4))
    bb = relax.BlockBuilder()
    with bb.function("double", [x]):
        bb.emit_func_output(bb.emit(relax.op.add(x, x)))
    double = bb.get().get_global_var("double")
    y = relax.Var("y", tensor(4))
    with bb.function("main", [y]):
        out = bb.emit(relax.Call(double, [y]))
        bb.emit_func_output(out)
    assert str(out.struct_info) == 'R.Tensor((4,), dtype="float32")'
    assert "gv1: R.Tensor((4,), dtype=\"float32\") = cls.double(y)" in bb.get().script()


# ------------------------------------------------------------------ module building
def _prim_like_function(name, n):
    x = relax.Var("x", tensor(n))
    bb = relax.BlockBuilder()
    with bb.function(name, [x]):
        bb.emit_func_output(bb.emit(relax.op.exp(x)))
    return bb.get()[name]


def test_add_func_names_like_tvm_and_deduplicates():
    bb = relax.BlockBuilder()
    f4, f8 = _prim_like_function("fused_dense_add", 4), _prim_like_function("fused_dense_add", 8)
    gv1 = bb.add_func(f4, "fused_dense_add")
    gv2 = bb.add_func(f8, "fused_dense_add")
    assert [gv1.name_hint, gv2.name_hint] == ["fused_dense_add", "fused_dense_add1"]
    assert bb.add_func(_prim_like_function("fused_dense_add", 4), "fused_dense_add") is gv1  # same function
    assert [g.name_hint for g in bb.get().get_global_vars()] == ["fused_dense_add", "fused_dense_add1"]


def test_add_func_avoids_names_of_the_given_module():
    mod = IRModule({"f": _prim_like_function("f", 4)})
    bb = relax.BlockBuilder(mod)
    assert bb.add_func(_prim_like_function("f", 8), "f").name_hint == "f1"


def test_builder_copies_its_module_and_get_is_a_snapshot():
    mod = IRModule({"f": _prim_like_function("f", 4)})
    bb = relax.BlockBuilder(mod)
    first = bb.get()
    bb.update_func(mod.get_global_var("f"), _prim_like_function("f", 8))
    bb.add_func(_prim_like_function("g", 2), "g")
    assert len(mod) == 1 and len(first) == 1 and len(bb.get()) == 2
    assert 'R.Tensor((4,), dtype="float32")' in first.script() and 'R.Tensor((8,)' in bb.get().script()


# ------------------------------------------------------------------ mistakes
def test_mistakes_are_reported():
    x = relax.Var("x", tensor(4))
    bb = relax.BlockBuilder()
    with pytest.raises(RuntimeError, match="needs an open block"):
        bb.emit(relax.op.exp(x))
    with pytest.raises(RuntimeError, match="inside 'with bb.function"):
        with bb.dataflow():
            pass
    with pytest.raises(RuntimeError, match="has no output"):
        with bb.function("f", [x]):
            bb.emit(relax.op.exp(x))
    with pytest.raises(RuntimeError, match="emit_output must be called inside"):
        with bb.function("f", [x]):
            bb.emit_output(x)
    with pytest.raises(RuntimeError, match="after the 'with bb.dataflow"):
        with bb.function("f", [x]):
            with bb.dataflow():
                bb.emit_func_output(x)
    with pytest.raises(RuntimeError, match="cannot be nested"):
        with bb.function("f", [x]):
            with bb.function("g", [x]):
                pass
    with pytest.raises(OpError, match="R.add"):
        with bb.function("f", [x]):
            bb.emit(relax.op.add(x, relax.Var("y", tensor(5))))
    assert not bb._blocks and len(bb.get()) == 0  # failed functions leave nothing behind


def _copy_kernel(shape, dtype="float32", name="A"):
    from tvmlite.script import from_source

    dims = ", ".join(shape)
    return from_source(f"""
@T.prim_func(private=True)
def copy(p: T.handle, q: T.handle):
    n = T.int64()
    {name} = T.match_buffer(p, ({dims},), "{dtype}")
    B = T.match_buffer(q, ({dims},), "{dtype}")
    for i in range({shape[0]}):
        with T.block("copy"):
            vi = T.axis.spatial({shape[0]}, i)
            B[vi] = {name}[vi]
""")


def test_add_func_deduplicates_prim_funcs_by_structure_alone():
    bb = relax.BlockBuilder()
    gv = bb.add_func(_copy_kernel(["T.int64(8)"]), "copy")
    assert bb.add_func(_copy_kernel(["T.int64(8)"], name="X"), "copy") is gv  # buffer names are hints
    assert bb.add_func(_copy_kernel(["T.int64(4)"]), "copy") is not gv  # another shape
    assert bb.add_func(_copy_kernel(["T.int64(8)"], "int32"), "copy") is not gv  # another dtype
    sym = bb.add_func(_copy_kernel(["n"]), "copy")
    assert bb.add_func(_copy_kernel(["n"], name="Y"), "copy") is sym  # symbolic sizes match by position
    assert [g.name_hint for g in bb.get().get_global_vars()] == ["copy", "copy1", "copy2", "copy3"]
