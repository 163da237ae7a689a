"""``tvmlite.frontend.from_onnx``: each supported op against ONNX's reference evaluator, the static
shape arithmetic exporters emit, activation fusion, parameters kept as inputs, symbolic dims,
clear errors, the optional-package message, and PyTorch's MLP and CNN exported (legacy and
dynamo exporters), imported, optimised, compiled and run against PyTorch."""
import io
import sys

import numpy as np
import pytest

import tvmlite
from frontend_util import need, small_cnn, torch_mlp  # skips without the package, fails with TVMLITE_REQUIRE_FRONTENDS=1
from tvmlite import passes as P
from tvmlite.frontend import FrontendError, detach_params


@pytest.fixture(scope="module")
def onnx():
    return need("onnx")


RNG = np.random.default_rng(0)


def rand(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def make_model(onnx, nodes, inputs, outputs, initializers=None, opset=17):
    """A model from nodes; ``inputs`` maps names to (shape, dtype), ``initializers`` names to arrays."""
    helper = onnx.helper
    elem = lambda dtype: helper.np_dtype_to_tensor_dtype(np.dtype(dtype))  # noqa: E731
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, elem(d), s) for n, (s, d) in inputs.items()],
        [helper.make_tensor_value_info(n, 0, None) for n in outputs],
        [onnx.numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run(mod, *args):
    """Default pipeline, compile, run ``main``; outputs as a list of arrays."""
    mod = P.get_pipeline("default")(mod)
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
    out = vm["main"](*args)
    return [o.numpy() for o in out] if isinstance(out, (tuple, list)) else [out.numpy()]


def check(onnx, model, feeds, rtol=1e-4, atol=1e-4, **kwargs):
    """Import, run and compare every output with ONNX's reference evaluator; returns the module."""
    from onnx.reference import ReferenceEvaluator

    expected = ReferenceEvaluator(model).run(None, feeds)
    mod = tvmlite.frontend.from_onnx(model, **kwargs)
    got = run(mod, *feeds.values())
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == np.asarray(e).shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return mod


# ---------------------------------------------------------------- ops, one model each
def node(onnx, op, inputs, outputs=("y",), **attrs):
    return onnx.helper.make_node(op, list(inputs), list(outputs), **attrs)


UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Abs", "Neg", "Floor", "Ceil", "Sin", "Cos", "Reciprocal"]


def test_unary_ops(onnx):
    nodes = [node(onnx, op, ["x"], [op.lower()]) for op in UNARY]
    nodes += [node(onnx, "Sqrt", ["xp"], ["sqrt"]), node(onnx, "Log", ["xp"], ["log"]),
              node(onnx, "LeakyRelu", ["x"], ["leaky"], alpha=0.2), node(onnx, "Gelu", ["x"], ["gelu"]),
              node(onnx, "Gelu", ["x"], ["gelu_tanh"], approximate="tanh"),
              node(onnx, "Softmax", ["x"], ["softmax"], axis=1),
              node(onnx, "LogSoftmax", ["x"], ["log_softmax"])]
    outputs = [n.output[0] for n in nodes]
    model = make_model(onnx, nodes, {"x": ((2, 3, 4), "float32"), "xp": ((2, 3, 4), "float32")}, outputs,
                       opset=20)
    mod = check(onnx, model, {"x": rand(2, 3, 4), "xp": np.abs(rand(2, 3, 4)) + 0.1})
    text = mod.script()
    for op in ("R.nn.relu", "R.sigmoid", "R.erf", "R.nn.leakyrelu(x, alpha=0.2", "R.nn.gelu(", "R.nn.gelu_tanh(",
               "R.nn.softmax(x, axis=1)", "R.nn.log_softmax(x, axis=-1)"):
        assert op in text


def test_binary_ops_broadcast_and_constants(onnx):
    nodes = [node(onnx, op, ["a", "b"], [op.lower()]) for op in ("Add", "Sub", "Mul", "Div", "Max", "Min")]
    nodes += [node(onnx, "Pow", ["p", "two"], ["pow"]), node(onnx, "Add", ["a", "w"], ["addw"])]
    model = make_model(onnx, nodes, {"a": ((2, 3, 4), "float32"), "b": ((3, 1), "float32"),
                                     "p": ((3,), "float32")}, [n.output[0] for n in nodes],
                       {"two": np.array(2, "int64"), "w": rand(4)})
    check(onnx, model, {"a": rand(2, 3, 4), "b": np.abs(rand(3, 1)) + 0.5, "p": rand(3)})


@pytest.mark.parametrize("attrs, shapes", [
    ({"transB": 1}, ((4, 5), (6, 5), (6,))),
    ({"transA": 1, "alpha": 0.5, "beta": 2.0}, ((5, 4), (5, 6), (4, 6))),
    ({}, ((4, 5), (5, 6), None)),
])
def test_gemm(onnx, attrs, shapes):
    inits = {"w": rand(*shapes[1])}
    inputs = ["x", "w"]
    if shapes[2]:
        inits["c"] = rand(*shapes[2])
        inputs.append("c")
    model = make_model(onnx, [node(onnx, "Gemm", inputs, **attrs)], {"x": (shapes[0], "float32")}, ["y"], inits)
    mod = check(onnx, model, {"x": rand(*shapes[0])})
    if attrs == {"transB": 1}:  # nn.Linear: the PyTorch importer's spelling
        assert "R.permute_dims(" in mod.script() and "R.matmul(" in mod.script()


def test_matmul_batched(onnx):
    model = make_model(onnx, [node(onnx, "MatMul", ["x", "w"])], {"x": ((2, 3, 4), "float32")}, ["y"],
                       {"w": rand(4, 5)})
    check(onnx, model, {"x": rand(2, 3, 4)})


@pytest.mark.parametrize("attrs", [
    {"pads": [1, 1, 1, 1], "strides": [1, 1]},
    {"pads": [0, 1, 2, 1], "strides": [2, 1], "dilations": [1, 2], "group": 2},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
])
def test_conv(onnx, attrs):
    group = attrs.get("group", 1)
    model = make_model(onnx, [node(onnx, "Conv", ["x", "w", "b"], **attrs)], {"x": ((1, 4, 7, 7), "float32")},
                       ["y"], {"w": rand(6, 4 // group, 3, 3), "b": rand(6)})
    mod = check(onnx, model, {"x": rand(1, 4, 7, 7)})
    assert "R.nn.conv2d(" in mod.script()


def test_batch_norm_and_layer_norm(onnx):
    nodes = [node(onnx, "BatchNormalization", ["x", "g", "b", "m", "v"], ["bn"], epsilon=1e-3),
             node(onnx, "LayerNormalization", ["x", "lg", "lb"], ["ln"], axis=-2),
             node(onnx, "LayerNormalization", ["x", "lg1"], ["ln1"])]
    inits = {"g": rand(3), "b": rand(3), "m": rand(3), "v": np.abs(rand(3)) + 0.5,
             "lg": rand(4, 5), "lb": rand(4, 5), "lg1": rand(5)}
    model = make_model(onnx, nodes, {"x": ((2, 3, 4, 5), "float32")}, ["bn", "ln", "ln1"], inits)
    mod = check(onnx, model, {"x": rand(2, 3, 4, 5)})
    assert "R.nn.batch_norm(" in mod.script() and "R.nn.layer_norm(" in mod.script()


def test_pooling(onnx):
    nodes = [node(onnx, "MaxPool", ["x"], ["max"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             node(onnx, "AveragePool", ["x"], ["avg"], kernel_shape=[2, 2], strides=[2, 2]),
             node(onnx, "AveragePool", ["x"], ["avg_pad"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node(onnx, "AveragePool", ["x"], ["avg_incl"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                  count_include_pad=1),
             node(onnx, "MaxPool", ["x"], ["max_ceil"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
             node(onnx, "GlobalAveragePool", ["x"], ["gap"]),
             node(onnx, "GlobalMaxPool", ["x"], ["gmp"])]
    model = make_model(onnx, nodes, {"x": ((1, 2, 7, 7), "float32")}, [n.output[0] for n in nodes])
    check(onnx, model, {"x": rand(1, 2, 7, 7)})


def test_layout_ops(onnx):
    nodes = [node(onnx, "Reshape", ["x", "shape"], ["reshape"]),
             node(onnx, "Transpose", ["x"], ["transpose"], perm=[2, 0, 1]),
             node(onnx, "Transpose", ["x"], ["reverse"]),
             node(onnx, "Flatten", ["x"], ["flatten"], axis=2),
             node(onnx, "Flatten", ["x"], ["flatten0"], axis=0),
             node(onnx, "Concat", ["x", "x"], ["concat"], axis=-1),
             node(onnx, "Unsqueeze", ["x", "axes"], ["unsqueeze"]),
             node(onnx, "Squeeze", ["unsqueeze", "axes"], ["squeeze"]),
             node(onnx, "Gather", ["x", "idx"], ["gather"], axis=1),
             node(onnx, "Gather", ["x", "idx0"], ["gather0"], axis=2),
             node(onnx, "Slice", ["x", "starts", "ends", "saxes", "steps"], ["slice"]),
             node(onnx, "Cast", ["x"], ["cast"], to=onnx.TensorProto.INT32),
             node(onnx, "Identity", ["x"], ["identity"]),
             node(onnx, "Dropout", ["x"], ["dropout"])]
    inits = {"shape": np.array([0, -1], "int64"), "axes": np.array([0, -1], "int64"),
             "idx": np.array([[0, -1], [2, 1]], "int64"), "idx0": np.array(3, "int64"),
             "starts": np.array([1, -3], "int64"), "ends": np.array([100, -1], "int64"),
             "saxes": np.array([1, 2], "int64"), "steps": np.array([1, 2], "int64")}
    model = make_model(onnx, nodes, {"x": ((2, 3, 4), "float32")}, [n.output[0] for n in nodes], inits)
    check(onnx, model, {"x": rand(2, 3, 4) * 4})


def test_clip_and_reductions(onnx):
    nodes = [node(onnx, "Clip", ["x", "lo", "hi"], ["clip"]), node(onnx, "Clip", ["x", "", "hi"], ["clip_hi"]),
             node(onnx, "Clip", ["x", "lo_t"], ["clip_dyn"]),
             node(onnx, "ReduceMean", ["x", "raxes"], ["mean"]),
             node(onnx, "ReduceMean", ["x"], ["mean_all"], keepdims=0),
             node(onnx, "ReduceSum", ["x", "raxes"], ["sum"], keepdims=0),
             node(onnx, "ReduceMax", ["x", "raxes"], ["max"])]
    inits = {"lo": np.array(-0.5, "float32"), "hi": np.array(0.7, "float32"), "raxes": np.array([1, -1], "int64")}
    model = make_model(onnx, nodes, {"x": ((2, 3, 4), "float32"), "lo_t": ((4,), "float32")},
                       [n.output[0] for n in nodes], inits, opset=18)
    mod = check(onnx, model, {"x": rand(2, 3, 4), "lo_t": rand(4)})
    assert "R.clip(" in mod.script()


def test_older_opsets_take_attributes(onnx):
    """Before opset 13 axes are attributes; Clip's bounds before 11; Softmax flattens to 2-D."""
    nodes = [node(onnx, "Unsqueeze", ["x"], ["u"], axes=[0]), node(onnx, "Squeeze", ["u"], ["s"], axes=[0]),
             node(onnx, "ReduceMean", ["s"], ["m"], axes=[1]),
             node(onnx, "Clip", ["x"], ["c"], min=-0.2, max=0.3),
             node(onnx, "Softmax", ["x"], ["sm"]), node(onnx, "Softmax", ["x"], ["sm_last"], axis=2)]
    model = make_model(onnx, nodes, {"x": ((2, 3, 4), "float32")}, ["m", "c", "sm_last"], opset=9)
    x = rand(2, 3, 4)
    check(onnx, model, {"x": x})
    # The reference evaluator ignores the old coercion to 2-D: compare with NumPy.
    model = make_model(onnx, nodes[4:5], {"x": ((2, 3, 4), "float32")}, ["sm"], opset=9)
    flat = np.exp(x.reshape(2, 12) - x.reshape(2, 12).max(1, keepdims=True))
    expected = (flat / flat.sum(1, keepdims=True)).reshape(2, 3, 4)
    np.testing.assert_allclose(run(tvmlite.frontend.from_onnx(model), x)[0], expected, rtol=1e-5, atol=1e-6)


def test_static_shape_arithmetic_folds_to_constants(onnx):
    """``x.view(x.size(0), -1)`` as the legacy exporter writes it: Shape/Gather/Unsqueeze/Concat/
    Reshape become one reshape to a constant shape."""
    nodes = [node(onnx, "Shape", ["x"], ["shape"]),
             node(onnx, "Constant", [], ["zero"], value=onnx.helper.make_tensor("v", onnx.TensorProto.INT64, [], [0])),
             node(onnx, "Gather", ["shape", "zero"], ["n"], axis=0),
             node(onnx, "Unsqueeze", ["n", "ax"], ["n1"]),
             node(onnx, "Constant", [], ["minus1"], value_ints=[-1]),
             node(onnx, "Concat", ["n1", "minus1"], ["target"], axis=0),
             node(onnx, "Reshape", ["x", "target"], ["y"]),
             node(onnx, "Cast", ["shape"], ["shape_f"], to=onnx.TensorProto.FLOAT),
             node(onnx, "Mul", ["y", "scale"], ["z"])]
    model = make_model(onnx, nodes, {"x": ((2, 3, 4), "float32")}, ["z", "shape_f"],
                       {"ax": np.array([0], "int64"), "scale": np.array(2.0, "float32")})
    mod = check(onnx, model, {"x": rand(2, 3, 4)})
    text = mod.script()
    assert "R.reshape(x, R.shape([2, -1]))" in text and "shape_of" not in text and "R.take" not in text


def test_activation_patterns_fuse(onnx):
    """The Erf-based GELU and x*sigmoid(x) torch exports become R.nn.gelu and R.nn.silu."""
    const = lambda name, v: node(onnx, "Constant", [], [name],  # noqa: E731
                                 value=onnx.helper.make_tensor("v", onnx.TensorProto.FLOAT, [], [v]))
    nodes = [const("sqrt2", 1.4142135381698608), const("one", 1.0), const("half", 0.5),
             node(onnx, "Div", ["x", "sqrt2"], ["d"]), node(onnx, "Erf", ["d"], ["e"]),
             node(onnx, "Add", ["e", "one"], ["a"]), node(onnx, "Mul", ["x", "a"], ["m"]),
             node(onnx, "Mul", ["m", "half"], ["gelu"]),
             node(onnx, "Sigmoid", ["gelu"], ["s"]), node(onnx, "Mul", ["gelu", "s"], ["silu"]),
             # a sigmoid read twice is not a SiLU
             node(onnx, "Sigmoid", ["x"], ["s2"]), node(onnx, "Mul", ["x", "s2"], ["m2"]),
             node(onnx, "Add", ["m2", "s2"], ["other"])]
    model = make_model(onnx, nodes, {"x": ((2, 8), "float32")}, ["silu", "other"])
    mod = check(onnx, model, {"x": rand(2, 8)}, keep_params_in_input=True)
    text = mod.script()
    assert "R.nn.gelu(x)" in text and "R.nn.silu(" in text and "R.erf" not in text
    assert text.count("R.sigmoid(") == 1
    assert '"num_input": 1' in text


def test_keep_params_in_input(onnx):
    nodes = [node(onnx, "Gemm", ["x", "w", "b"], ["h"], transB=1), node(onnx, "Relu", ["h"], ["r"]),
             node(onnx, "Identity", ["b"], ["b_alias"]), node(onnx, "Add", ["r", "b_alias"], ["a"]),
             node(onnx, "Reshape", ["a", "shape"], ["y"])]
    w, b = rand(6, 5), rand(6)
    # "w" is also listed as a graph input, as old exporters do: still a weight.
    model = make_model(onnx, nodes, {"x": ((4, 5), "float32"), "w": ((6, 5), "float32")}, ["y"],
                       {"w": w, "b": b, "shape": np.array([2, -1], "int64")})
    mod = tvmlite.frontend.from_onnx(model, keep_params_in_input=True)
    text = mod.script()
    assert 'def main(x: R.Tensor((4, 5), dtype="float32"), w: R.Tensor((6, 5), dtype="float32"), ' \
           'b: R.Tensor((6,), dtype="float32"))' in text
    assert '"num_input": 1' in text
    mod, params = detach_params(mod)
    assert [p.shape for p in params["main"]] == [(6, 5), (6,)]
    np.testing.assert_array_equal(params["main"][0], w)
    x = rand(4, 5)
    expected = (np.maximum(x @ w.T + b, 0) + b).reshape(2, -1)
    np.testing.assert_allclose(run(mod, x, *params["main"])[0], expected, rtol=1e-5, atol=1e-5)
    # By default the weights are constants and main takes the input only.
    default = tvmlite.frontend.from_onnx(model)
    assert "def main(x: R.Tensor((4, 5), dtype=\"float32\"))" in default.script()
    np.testing.assert_allclose(run(default, x)[0], expected, rtol=1e-5, atol=1e-5)


def test_symbolic_batch(onnx):
    helper = onnx.helper
    nodes = [node(onnx, "Gemm", ["x", "w", "b"], ["h"], transB=1), node(onnx, "Relu", ["h"], ["r"]),
             node(onnx, "Shape", ["r"], ["s"]), node(onnx, "Gather", ["s", "zero"], ["n"]),
             node(onnx, "Unsqueeze", ["n", "ax"], ["n1"]), node(onnx, "Concat", ["n1", "dims"], ["t"], axis=0),
             node(onnx, "Reshape", ["r", "t"], ["y"]), node(onnx, "Flatten", ["y"], ["f"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 5])],
                              [helper.make_tensor_value_info("f", onnx.TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(a, n) for n, a in
                               {"w": rand(6, 5), "b": rand(6), "zero": np.array(0, "int64"),
                                "ax": np.array([0], "int64"), "dims": np.array([2, -1], "int64")}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mod = tvmlite.frontend.from_onnx(model)
    assert 'x: R.Tensor(("batch", 5), dtype="float32")' in mod.script()
    from onnx.reference import ReferenceEvaluator

    for batch in (1, 3):
        x = rand(batch, 5)
        np.testing.assert_allclose(run(mod, x)[0], ReferenceEvaluator(model).run(None, {"x": x})[0],
                                   rtol=1e-5, atol=1e-5)
    # shape_dict fixes the batch; a string there names a symbolic dimension.
    fixed = tvmlite.frontend.from_onnx(model, shape_dict={"x": [4, 5]})
    assert 'x: R.Tensor((4, 5), dtype="float32")' in fixed.script()
    named = tvmlite.frontend.from_onnx(model, shape_dict={"x": ["n", 5]})
    assert 'x: R.Tensor(("n", 5), dtype="float32")' in named.script()


def test_model_from_path_and_bytes(onnx, tmp_path):
    model = make_model(onnx, [node(onnx, "Relu", ["x"])], {"x": ((3,), "float32")}, ["y"])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    for source in (path, str(path), model.SerializeToString()):
        assert "R.nn.relu(x)" in tvmlite.frontend.from_onnx(source).script()
    with pytest.raises(TypeError, match="ModelProto"):
        tvmlite.frontend.from_onnx(42)


# ---------------------------------------------------------------- errors
def test_unsupported_ops_are_all_named_before_emitting(onnx):
    nodes = [node(onnx, "Relu", ["x"], ["r"]), node(onnx, "DFT", ["r"], ["n"], name="dft"),
             node(onnx, "Scan", ["n"], ["t"], name="scan"),
             onnx.helper.make_node("FusedConv", ["t"], ["y"], name="fc", domain="com.microsoft")]
    model = make_model(onnx, nodes, {"x": ((3,), "float32")}, ["y"])
    with pytest.raises(FrontendError, match=r"from_onnx: unsupported ops: DFT \(nodes: dft\); "
                                            r"Scan \(nodes: scan\); com\.microsoft\.FusedConv \(nodes: fc\)\. "
                                            r"The supported ops are listed by tvmlite\.frontend\.onnx\.supported_ops\(\)"):
        tvmlite.frontend.from_onnx(model)


def test_bad_inputs_give_clear_errors(onnx):
    model = make_model(onnx, [node(onnx, "Add", ["x", "w"])], {"x": ((2, 3), "float32")}, ["y"], {"w": rand(3)})
    with pytest.raises(FrontendError, match=r"shape_dict names 'z', which is not an input of the model; "
                                            r"its inputs are \['x'\]"):
        tvmlite.frontend.from_onnx(model, shape_dict={"z": [1]})
    with pytest.raises(FrontendError, match="'w', which is a weight"):
        tvmlite.frontend.from_onnx(model, shape_dict={"w": [3]})
    with pytest.raises(FrontendError, match="gives input 'x' 1 dimensions, the model 2"):
        tvmlite.frontend.from_onnx(model, shape_dict={"x": [6]})
    unknown = make_model(onnx, [node(onnx, "Relu", ["x"])], {"x": ((None, 3), "float32")}, ["y"])
    with pytest.raises(FrontendError, match="input 'x' has an unknown dimension 0: give its shape in shape_dict"):
        tvmlite.frontend.from_onnx(unknown)
    assert "R.Tensor((5, 3)" in tvmlite.frontend.from_onnx(unknown, shape_dict={"x": [5, 3]}).script()
    dynamic = make_model(onnx, [node(onnx, "Reshape", ["x", "s"])], {"x": ((2, 3), "float32"),
                                                                    "s": ((2,), "int64")}, ["y"])
    with pytest.raises(FrontendError, match="Reshape node '#0': the shape input must be a constant"):
        tvmlite.frontend.from_onnx(dynamic)
    dotted = make_model(onnx, [node(onnx, "Relu", ["input.1"])], {"input.1": ((3,), "float32")}, ["y"])
    assert "input_1: R.Tensor" in tvmlite.frontend.from_onnx(dotted).script()
    with pytest.raises(FrontendError, match="'input.1' is not a valid Relax variable name"):
        tvmlite.frontend.from_onnx(dotted, sanitize_input_names=False)
    pool = make_model(onnx, [node(onnx, "MaxPool", ["x"], ["y", "idx"], kernel_shape=[2, 2])],
                      {"x": ((1, 1, 4, 4), "float32")}, ["y", "idx"])
    with pytest.raises(FrontendError, match=r"MaxPool node '#0': output 1 \('idx'\) is not supported"):
        tvmlite.frontend.from_onnx(pool)
    mismatch = make_model(onnx, [node(onnx, "Add", ["x", "w"], name="add0")], {"x": ((2, 3), "float32")}, ["y"],
                          {"w": rand(4)})
    with pytest.raises(FrontendError, match="ONNX Add node 'add0': .*broadcast"):
        tvmlite.frontend.from_onnx(mismatch)
    training = make_model(onnx, [node(onnx, "Dropout", ["x", "r", "t"])], {"x": ((2, 3), "float32")}, ["y"],
                          {"r": np.array(0.5, "float32"), "t": np.array(True)})
    with pytest.raises(FrontendError, match="Dropout node '#0': training mode is not supported"):
        tvmlite.frontend.from_onnx(training)
    no_kernel = make_model(onnx, [node(onnx, "MaxPool", ["x"])], {"x": ((1, 1, 4, 4), "float32")}, ["y"])
    with pytest.raises(FrontendError, match="the required attribute 'kernel_shape' is missing"):
        tvmlite.frontend.from_onnx(no_kernel)
    conv4d = make_model(onnx, [node(onnx, "Conv", ["x", "w"])], {"x": ((1, 2, 5, 5, 5, 5), "float32")}, ["y"],
                        {"w": rand(3, 2, 3, 3, 3, 3)})
    with pytest.raises(FrontendError, match="only 1-, 2- and 3-D"):
        tvmlite.frontend.from_onnx(conv4d)


def test_missing_onnx_names_the_extra(monkeypatch):
    import tvmlite.frontend.onnx as importer  # importing the module never needs onnx

    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"pip install 'tvmlite\[onnx\]'"):
        importer.from_onnx("model.onnx")
    with pytest.raises(ImportError, match=r"tvmlite\[onnx\]"):
        tvmlite.frontend.from_onnx("model.onnx")


# ---------------------------------------------------------------- PyTorch end to end
def torch_models():
    """torch, and the end-to-end models with their input shapes (shared with the PyTorch tests)."""
    torch = need("torch")
    return torch, {"mlp": (torch_mlp(), (2, 784)), "cnn": (small_cnn(), (2, 3, 16, 16))}


def export(torch, model, x, dynamo, **kwargs):
    import warnings

    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            out = torch.onnx.export(model, (x,), dynamo=True, verbose=False, **kwargs)
            return out.model_proto
        torch.onnx.export(model, (x,), f, dynamo=False, **kwargs)
    return f.getvalue()


@pytest.mark.parametrize("name", ["mlp", "cnn"])
@pytest.mark.parametrize("dynamo", [False, True], ids=["legacy", "dynamo"])
def test_pytorch_models_end_to_end(onnx, name, dynamo):
    torch, models = torch_models()
    if dynamo:
        need("onnxscript")
    model, shape = models[name]
    x = torch.randn(*shape)
    # Without constant folding the legacy exporter keeps BatchNormalization (it would fold it into Conv).
    kwargs = {} if dynamo else {"do_constant_folding": False}
    proto = export(torch, model, x, dynamo, **kwargs)
    mod = tvmlite.frontend.from_onnx(proto)
    if name == "cnn" and not dynamo:
        assert "R.nn.batch_norm(" in mod.script()
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(run(mod, x.numpy())[0], expected, rtol=1e-4, atol=1e-4)


def test_pytorch_keep_params_matches_parameters(onnx):
    torch, models = torch_models()
    model, shape = models["mlp"]
    x = torch.randn(*shape)
    mod, params = detach_params(tvmlite.frontend.from_onnx(export(torch, model, x, False),
                                                           keep_params_in_input=True))
    assert "fc1_weight: R.Tensor((256, 784)" in mod.script()
    np.testing.assert_array_equal(params["main"][0], model.fc1.weight.detach().numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(run(mod, x.numpy(), *params["main"])[0], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_same_relax_as_the_pytorch_importer(onnx, name):
    """The legacy ONNX export and torch.export of one model import to the same Relax."""
    from tvmlite.frontend import from_exported_program
    from tvmlite.ir.structural import assert_structural_equal

    torch, models = torch_models()
    model, shape = models[name]
    x = torch.randn(*shape)
    via_onnx = tvmlite.frontend.from_onnx(export(torch, model, x, False, do_constant_folding=False,
                                                 input_names=["x"]))
    via_torch = from_exported_program(torch.export.export(model, (x,)), unwrap_unit_return_tuple=True)
    assert_structural_equal(via_onnx, via_torch)


def test_custom_convert_map_adds_and_replaces_converters(onnx):
    from tvmlite.ir.op_api import op

    def my_scale(n):  # an op tvmlite does not know
        return op.multiply(n.tensor(0), tvmlite.relax.const(n.attr("alpha"), "float32"))

    def relu_as_abs(n):  # a replacement of tvmlite's own Relu converter
        return op.abs(n.tensor(0))

    nodes = [node(onnx, "MyScale", ["x"], ["s"], alpha=3.0), node(onnx, "Relu", ["s"], ["y"])]
    model = make_model(onnx, nodes, {"x": ((2, 3), "float32")}, ["y"])
    with pytest.raises(FrontendError, match=r"unsupported ops: MyScale"):
        tvmlite.frontend.from_onnx(model)
    x = rand(2, 3)
    mod = tvmlite.frontend.from_onnx(model, custom_convert_map={"MyScale": my_scale, "Relu": relu_as_abs})
    np.testing.assert_allclose(run(mod, x)[0], np.abs(3 * x), rtol=1e-6)
