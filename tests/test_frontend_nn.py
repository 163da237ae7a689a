"""The nn.Module frontend: seed 004's and seed 001's models export to exactly TVM's printed text,
the parameter list, symbolic specs, module containers, functional ops, and clear errors for
bad specs and bad models."""

import numpy as np
import pytest

from tvmlite import relax
from tvmlite.frontend import nn
from tvmlite.ir import tir
from tvmlite.ir.op import OpError
from tvmlite.testing import assert_round_trip, text_diff

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)


def body(text: str) -> str:
    """Printed text without the ``# from ... import ...`` header lines (they name the printer)."""
    return "\n".join(ln for ln in text.strip("\n").split("\n") if not ln.startswith("# from ")).strip("\n")


# seed 004's RelaxModel, batch 1 (corpus/seed004_mlp_nn.py without its header lines)
SEED004_TEXT = '''\
@I.ir_module
class Module:
    @R.function
    def forward(x: R.Tensor((1, 784), dtype="float32"), fc1_weight: R.Tensor((256, 784), dtype="float32"), fc1_bias: R.Tensor((256,), dtype="float32"), fc2_weight: R.Tensor((10, 256), dtype="float32"), fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            permute_dims: R.Tensor((784, 256), dtype="float32") = R.permute_dims(fc1_weight, axes=None)
            matmul: R.Tensor((1, 256), dtype="float32") = R.matmul(x, permute_dims, out_dtype="void")
            add: R.Tensor((1, 256), dtype="float32") = R.add(matmul, fc1_bias)
            relu: R.Tensor((1, 256), dtype="float32") = R.nn.relu(add)
            permute_dims1: R.Tensor((256, 10), dtype="float32") = R.permute_dims(fc2_weight, axes=None)
            matmul1: R.Tensor((1, 10), dtype="float32") = R.matmul(relu, permute_dims1, out_dtype="void")
            add1: R.Tensor((1, 10), dtype="float32") = R.add(matmul1, fc2_bias)
            gv: R.Tensor((1, 10), dtype="float32") = add1
            R.output(gv)
        return gv'''

# seed 001's NNModule, batch "n" (corpus/seed001_mlp_dynamic.py without its header lines)
SEED001_TEXT = '''\
@I.ir_module
class Module:
    @R.function
    def forward(x: R.Tensor(("n", 784), dtype="float32"), fc1_weight: R.Tensor((128, 784), dtype="float32"), fc1_bias: R.Tensor((128,), dtype="float32"), fc2_weight: R.Tensor((10, 128), dtype="float32"), fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        R.func_attr({"num_input": 1})
        with R.dataflow():
            permute_dims: R.Tensor((784, 128), dtype="float32") = R.permute_dims(fc1_weight, axes=None)
            matmul: R.Tensor((n, 128), dtype="float32") = R.matmul(x, permute_dims, out_dtype="void")
            add: R.Tensor((n, 128), dtype="float32") = R.add(matmul, fc1_bias)
            relu: R.Tensor((n, 128), dtype="float32") = R.nn.relu(add)
            permute_dims1: R.Tensor((128, 10), dtype="float32") = R.permute_dims(fc2_weight, axes=None)
            matmul1: R.Tensor((n, 10), dtype="float32") = R.matmul(relu, permute_dims1, out_dtype="void")
            add1: R.Tensor((n, 10), dtype="float32") = R.add(matmul1, fc2_bias)
            gv: R.Tensor((n, 10), dtype="float32") = add1
            R.output(gv)
        return gv'''


class RelaxModel(nn.Module):
    """Seed 004's model, written as in the seed."""

    def __init__(self, hidden=256):
        super(RelaxModel, self).__init__()
        self.fc1 = nn.Linear(784, hidden)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        return x


def export(model, *shape, dtype="float32", **more):
    """``model.export_tvm`` of ``forward(x)`` with ``x`` of the given shape."""
    return model.export_tvm({"forward": {"x": nn.spec.Tensor(shape, dtype), **more}})


# ------------------------------------------------------------------ the seeds' models
def test_seed004_relax_model_prints_as_tvm():
    mod, _ = export(RelaxModel(), 1, 784)
    assert body(mod.script()) == SEED004_TEXT, text_diff(SEED004_TEXT, body(mod.script()))
    assert mod.script().startswith("# from tvmlite.script import ir as I\n# from tvmlite.script import relax as R\n\n")


def test_seed001_symbolic_batch_prints_as_tvm():
    mod, _ = export(RelaxModel(hidden=128), "n", 784)
    assert body(mod.script()) == SEED001_TEXT, text_diff(SEED001_TEXT, body(mod.script()))


@pytest.mark.parametrize("name, text", [("seed004_mlp_nn.py", SEED004_TEXT), ("seed001_mlp_dynamic.py", SEED001_TEXT)])
def test_expected_texts_are_the_corpus_files(name, text):
    assert body(read_corpus(name)) == text


def test_exported_module_round_trips_and_parses_to_the_same_ir():
    for shape in ((1, 784), ("n", 784)):
        mod, _ = export(RelaxModel(), *shape)
        assert_round_trip(mod)


def test_parameters_are_listed_in_attribute_order_and_are_the_model_objects():
    model = RelaxModel()
    mod, params = export(model, 1, 784)
    assert [name for name, _ in params] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert params[0][1] is model.fc1.weight and params[3][1] is model.fc2.bias
    assert [(p.shape, p.dtype) for _, p in params] == [([256, 784], "float32"), ([256], "float32"),
                                                       ([10, 256], "float32"), ([10], "float32")]
    assert list(model.named_parameters()) == params
    assert list(model.parameters()) == [p for _, p in params]
    assert [name for name, _ in model.named_parameters(prefix="model")][:1] == ["model.fc1.weight"]
    forward = mod["forward"]
    assert [v.name_hint for v in forward.params] == ["x", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert forward.attrs["num_input"] == 1
    assert repr(params[0][1]) == 'Parameter([256, 784], "float32")'


def test_export_leaves_the_model_reusable():
    model = RelaxModel()
    first, _ = export(model, 1, 784)
    with pytest.raises(OpError):
        export(model, 1, 100)  # a failed trace must not leave parameters bound
    second, _ = export(model, 1, 784)
    assert first.script() == second.script()
    assert model.fc1.weight.shape == [256, 784]  # the declared shape again
    with pytest.raises(RuntimeError, match="only run while Module.export_tvm traces"):
        model(None)


# ------------------------------------------------------------------ symbolic specs
def test_one_name_is_one_symbolic_variable_per_function():
    class Pair(nn.Module):
        def forward(self, x, y):
            return nn.op.add(x, y)

    mod, params = Pair().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 4), "float32"),
                                                 "y": nn.spec.Tensor(("n", 4), "float32")}})
    assert params == []
    x, y = mod["forward"].params
    assert x.struct_info.shape[0] is y.struct_info.shape[0]
    n = x.struct_info.shape[0]
    assert isinstance(n, tir.Var) and (n.name, n.dtype) == ("n", "int64")
    assert 'add: R.Tensor((n, 4), dtype="float32") = R.add(x, y)' in mod.script()
    assert mod["forward"].attrs["num_input"] == 2


def test_symbolic_parameter_dims_share_the_inputs_variables():
    class Scale(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(("d",), "float16")

        def forward(self, x):
            return x * self.w

    mod, _ = Scale().export_tvm({"forward": {"x": nn.spec.Tensor(("n", "d"), "float16")}})
    x, w = mod["forward"].params
    assert w.struct_info.shape[0] is x.struct_info.shape[1]
    assert 'mul: R.Tensor((n, d), dtype="float16") = R.multiply(x, w)' in mod.script()
    assert_round_trip(mod)


def test_several_methods_become_several_functions():
    class Two(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(4, 2, bias=False)

        def forward(self, x):
            return self.fc(x)

        def embed(self, x):
            return nn.op.gelu(self.fc(x))

    spec = {"forward": {"x": nn.spec.Tensor((1, 4), "float32")},
            "embed": {"x": nn.spec.Tensor(("b", 4), "float32")}}
    mod, params = Two().export_tvm(spec)
    assert [name for name, _ in params] == ["fc.weight"]
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == ["embed", "forward"]
    text = mod.script()
    # Each function names its bindings afresh, and a Linear without bias has no add.
    assert text.count("permute_dims: R.Tensor((4, 2), dtype=\"float32\") = R.permute_dims(fc_weight, axes=None)") == 2
    assert 'gelu: R.Tensor((b, 2), dtype="float32") = R.nn.gelu(matmul)' in text
    assert "R.add" not in text


# ------------------------------------------------------------------ containers and ops
def test_sequential_module_list_paths_and_gelu():
    class Net(nn.Module):
        def __init__(self):
            self.layers = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 2))

        def forward(self, x):
            return self.layers(x)

    model = Net()
    mod, params = export(model, 2, 8)
    assert [n for n, _ in params] == ["layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias"]
    assert [v.name_hint for v in mod["forward"].params][1:3] == ["layers_0_weight", "layers_0_bias"]
    assert len(model.layers) == 3 and isinstance(model.layers[1], nn.GELU)
    assert 'gelu: R.Tensor((2, 8), dtype="float32") = R.nn.gelu(add)' in mod.script()
    # A top-level Sequential: its paths start with an index, so the Relax names get a prefix.
    top, top_params = export(nn.Sequential(nn.Linear(8, 2)), 1, 8)
    assert [n for n, _ in top_params] == ["0.weight", "0.bias"]
    assert [v.name_hint for v in top["forward"].params] == ["x", "p_0_weight", "p_0_bias"]
    assert_round_trip(top)
    with pytest.raises(TypeError, match="holds nn.Module objects"):
        nn.ModuleList([nn.ReLU(), "relu"])


def test_shared_parameter_is_one_function_parameter():
    class Tied(nn.Module):
        def __init__(self):
            self.a = nn.Linear(4, 4, bias=False)
            self.b = nn.Linear(4, 4, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    mod, params = export(Tied(), 1, 4)
    assert [n for n, _ in params] == ["a.weight"]
    assert [v.name_hint for v in mod["forward"].params] == ["x", "a_weight"]


def test_functional_ops_scalars_and_tuple_outputs():
    class Ops(nn.Module):
        def forward(self, x):
            y = nn.op.softmax(x * 2.0 - 1.0, axis=1)
            z = nn.op.reshape(nn.op.permute_dims(x, axes=[1, 0]), (2, 3))
            return nn.op.gelu(y, approximate="tanh"), nn.op.astype(z, "float16"), 1.0 / -x

    mod, _ = export(Ops(), 3, 2)
    text = body(mod.script())
    for line in ('mul: R.Tensor((3, 2), dtype="float32") = R.multiply(x, R.const(2.0, "float32"))',
                 'subtract: R.Tensor((3, 2), dtype="float32") = R.subtract(mul, R.const(1.0, "float32"))',
                 'softmax: R.Tensor((3, 2), dtype="float32") = R.nn.softmax(subtract, axis=1)',
                 'permute_dims: R.Tensor((2, 3), dtype="float32") = R.permute_dims(x, axes=[1, 0])',
                 'gelu: R.Tensor((3, 2), dtype="float32") = R.nn.gelu_tanh(softmax)',
                 'astype: R.Tensor((2, 3), dtype="float16") = R.astype(reshape, dtype="float16")',
                 'divide: R.Tensor((3, 2), dtype="float32") = R.divide(R.const(1.0, "float32"), negative)',
                 'gv: R.Tuple(R.Tensor((3, 2), dtype="float32"), R.Tensor((2, 3), dtype="float16"), '
                 'R.Tensor((3, 2), dtype="float32")) = gelu, astype, divide'):
        assert line in text, line
    assert_round_trip(mod)


def test_arguments_with_defaults_keyword_only_and_nested_outputs():
    class Args(nn.Module):
        def forward(self, x, scale=3.0, *, y):
            return x, (x * scale, y)

    mod, _ = Args().export_tvm({"forward": {"y": nn.spec.Tensor((2,), "float32"),
                                            "x": nn.spec.Tensor((2,), "float32")}})
    func = mod["forward"]
    assert [v.name_hint for v in func.params] == ["x", "y"]  # signature order, not the spec's
    text = body(mod.script())
    assert 'mul: R.Tensor((2,), dtype="float32") = R.multiply(x, R.const(3.0, "float32"))' in text
    assert "= x, (mul, y)" in text
    assert_round_trip(mod)


def test_tensor_shape_and_dtype_inside_forward():
    seen = {}

    class Probe(nn.Module):
        def forward(self, x):
            seen["x"] = (x.shape, x.ndim, x.dtype, repr(x))
            return nn.op.relu(x)

    export(Probe(), "n", 3, dtype="float16")
    shape, ndim, dtype, text = seen["x"]
    assert isinstance(shape[0], tir.Var) and shape[1] == 3 and (ndim, dtype) == (2, "float16")
    assert text == 'Tensor([n, 3], "float16")'


def test_parameter_data():
    p = nn.Parameter((2, "n"), "float32")
    assert p.data is None
    p.data = np.ones((2, 5), "float32")
    assert p.data.shape == (2, 5)
    with pytest.raises(ValueError, match=r"dtype float64, the parameter float32 \(convert it with"):
        p.data = np.ones((2, 5))
    with pytest.raises(ValueError, match=r"shape \(3, 5\), the parameter \(2, 'n'\)"):
        p.data = np.ones((3, 5), "float32")


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("spec, error, message", [
    ([], TypeError, "spec must be a non-empty dict"),
    ({}, TypeError, "spec must be a non-empty dict"),
    ({"fwd": {}}, ValueError, "RelaxModel has no method 'fwd' to export (its methods: forward)"),
    ({"fc1": {}}, ValueError, "RelaxModel has no method 'fc1' to export"),
    ({"forward": [1, 784]}, TypeError, "the spec of 'forward' must be a dict"),
    ({"forward": {}}, ValueError, "the spec of 'forward' does not describe the argument 'x'"),
    ({"forward": {"x": (1, 784)}}, TypeError,
     "argument 'x' of 'forward' must be described by nn.spec.Tensor(shape, dtype), got (1, 784)"),
    ({"forward": {"x": nn.spec.Tensor((1, 784), "float32"), "y": nn.spec.Tensor((1,), "float32")}},
     ValueError, "forward() has no argument 'y' (its arguments: x)"),
])
def test_bad_specs_are_clear_errors(spec, error, message):
    with pytest.raises(error) as info:
        RelaxModel().export_tvm(spec)
    assert message in str(info.value)


@pytest.mark.parametrize("shape, dtype, error, message", [
    (784, "float32", TypeError, "the shape must be a tuple or list of ints and names, got 784"),
    ((1, 7.5), "float32", TypeError, "dimension 7.5 must be an int or the name of a symbolic size"),
    ((1, True), "float32", TypeError, "dimension True must be an int"),
    ((1, -1), "float32", ValueError, "dimension -1 is negative"),
    (("n m", 3), "float32", ValueError, "the symbolic dimension 'n m' must be a Python identifier"),
    ((1, 784), "float", ValueError, "'float' is not a dtype"),
])
def test_bad_tensor_specs_are_clear_errors(shape, dtype, error, message):
    with pytest.raises(error) as info:
        nn.spec.Tensor(shape, dtype)
    assert message in str(info.value)


def test_shape_mismatch_names_the_submodule():
    with pytest.raises(OpError) as info:
        export(RelaxModel(), 1, 100)
    assert str(info.value) == "R.matmul: inner dimensions differ: 100 vs 784 (in RelaxModel.forward > fc1 (Linear))"
    with pytest.raises(OpError, match=r"dtypes differ: float16 vs float32 \(in RelaxModel.forward > fc1"):
        export(RelaxModel(), 1, 784, dtype="float16")


def test_bad_models_are_clear_errors():
    class NoForward(nn.Module):
        pass

    class Varargs(nn.Module):
        def forward(self, *xs):
            return xs[0]

    class ReturnsNone(nn.Module):
        def forward(self, x):
            nn.op.relu(x)

    class AddsStrings(nn.Module):
        def forward(self, x):
            return x + "1"

    x = {"x": nn.spec.Tensor((1,), "float32")}
    with pytest.raises(NotImplementedError, match="NoForward does not define forward"):
        NoForward().export_tvm({"forward": {}})
    with pytest.raises(TypeError, match=r"Varargs.forward takes \*xs: export_tvm needs every input as a named"):
        Varargs().export_tvm({"forward": x})
    with pytest.raises(TypeError, match="ReturnsNone.forward must return a Tensor or a tuple of Tensors, got None"):
        ReturnsNone().export_tvm({"forward": x})
    with pytest.raises(TypeError, match="nn.op.add: expected a Tensor or a number, got str"):
        AddsStrings().export_tvm({"forward": x})
    with pytest.raises(ValueError, match="approximate must be None or"):
        nn.op.gelu(None, approximate="erf")


def test_import_spellings():
    import tvmlite.frontend.nn.op as op_module
    from tvmlite.frontend.nn import op, spec

    assert op is op_module and op.relu is nn.op.relu and spec.Tensor is nn.spec.Tensor
    assert isinstance(nn.spec.Tensor(("n", 784), "float32"), spec.Tensor)
    assert repr(nn.spec.Tensor(("n", 784), "float32")) == "nn.spec.Tensor(('n', 784), \"float32\")"
    assert isinstance(relax.op.nn.relu, type(nn.op.relu))
