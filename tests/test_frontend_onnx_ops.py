"""``from_onnx``'s converters for indexing, scatter, search, padding, normalisation, comparison and
creation ops: each imported, compiled, run and compared with ONNX's reference evaluator for the
attribute combinations that matter, the Relax op it maps to checked in the printed module, and a
clear error for what is refused."""
import numpy as np
import pytest

import tvmlite
from frontend_util import need  # skips without the package, fails with TVMLITE_REQUIRE_FRONTENDS=1
from test_frontend_onnx import check, make_model, node, rand, run
from tvmlite.frontend import FrontendError


@pytest.fixture(scope="module")
def onnx():
    return need("onnx")


def one_op(onnx, op, inputs, initializers=None, outputs=("y",), opset=17, **attrs):
    """A model of one node; ``inputs`` maps graph input names to (shape, dtype), ``initializers``
    names to arrays; the node reads the inputs then the initializers, in that order."""
    names = list(inputs) + list(initializers or {})
    return make_model(onnx, [node(onnx, op, names, outputs, **attrs)], inputs, list(outputs), initializers, opset)


def model_of(onnx, op, args, initializers=None, outputs=("y",), opset=17, **attrs):
    """A model of one node reading ``args`` in order (names, "" for an omitted optional input)."""
    return make_model(onnx, [node(onnx, op, args, outputs, **attrs)], {}, list(outputs), initializers, opset)


def text_of(model, **kwargs):
    return tvmlite.frontend.from_onnx(model, **kwargs).script()


# ---------------------------------------------------------------- Einsum
@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij, bjk -> bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("i,j", [(3,), (4,)]),
])
def test_einsum(onnx, equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    model = one_op(onnx, "Einsum", {n: (s, "float32") for n, s in zip(names, shapes)}, equation=equation)
    mod = check(onnx, model, {n: rand(*s) for n, s in zip(names, shapes)})
    assert f'R.einsum(({", ".join(names)}{"," if len(names) == 1 else ""}), subscripts="{equation.replace(" ", "")}")' \
        in mod.script()


# ---------------------------------------------------------------- ScatterND, ScatterElements, GatherND, GatherElements
@pytest.mark.parametrize("reduction, opset", [(None, 11), ("none", 16), ("add", 16), ("mul", 16), ("min", 18),
                                               ("max", 18)])
def test_scatter_nd(onnx, reduction, opset):
    attrs = {} if reduction is None else {"reduction": reduction}
    # Rows 0 and -2 (= 1) and row 0 again: the reductions see a repeated index.
    indices = np.array([[0], [-2], [0]], "int64") if reduction not in (None, "none") else np.array([[0], [-1]], "int64")
    updates = rand(len(indices), 4)
    model = one_op(onnx, "ScatterND", {"data": ((3, 4), "float32")}, {"i": indices, "u": updates}, opset=opset,
                   **attrs)
    mod = check(onnx, model, {"data": rand(3, 4)})
    relax_reduction = {"none": "update", None: "update"}.get(reduction, reduction)
    assert f'R.scatter_nd(data, metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1], ' \
           f'reduction="{relax_reduction}")' in mod.script()


def test_scatter_nd_run_time_indices_and_slices(onnx):
    # Index tuples shorter than the rank replace whole slices.
    model = one_op(onnx, "ScatterND", {"data": ((2, 3, 4), "float32"), "i": ((2, 2), "int64"),
                                       "u": ((2, 4), "float32")})
    check(onnx, model, {"data": rand(2, 3, 4), "i": np.array([[0, 1], [1, 2]], "int64"), "u": rand(2, 4)})


def test_scatter_reduction_needs_its_opset(onnx):
    model = one_op(onnx, "ScatterND", {"data": ((3,), "float32")}, {"i": np.array([[0]], "int64"),
                                                                     "u": rand(1)}, opset=13, reduction="add")
    with pytest.raises(FrontendError, match="ScatterND node '#0': reduction 'add' is not supported at opset 13"):
        tvmlite.frontend.from_onnx(model)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max"])
def test_scatter_elements(onnx, reduction):
    model = one_op(onnx, "ScatterElements", {"data": ((3, 4), "float32"), "i": ((3, 2), "int64"),
                                             "u": ((3, 2), "float32")}, opset=18, axis=1, reduction=reduction)
    mod = check(onnx, model, {"data": rand(3, 4), "i": np.array([[0, 3], [1, -1], [2, 2]], "int64"),
                              "u": rand(3, 2)})
    assert f'axis=1, reduction="{"update" if reduction == "none" else reduction}")' in mod.script()


@pytest.mark.parametrize("batch_dims, data, indices", [
    (0, (3, 4), [[0, 1], [2, -1]]),
    (0, (3, 4, 2), [[1], [0]]),
    (1, (2, 3, 4), [[1], [2]]),
    (1, (2, 3, 4), [[[0, 1]], [[2, 3]]]),
])
def test_gather_nd(onnx, batch_dims, data, indices):
    indices = np.array(indices, "int64")
    model = one_op(onnx, "GatherND", {"x": (data, "float32"), "i": (indices.shape, "int64")}, batch_dims=batch_dims)
    mod = check(onnx, model, {"x": rand(*data), "i": indices})
    assert f"R.gather_nd(x, i, batch_dims={batch_dims})" in mod.script()


def test_gather_elements(onnx):
    model = one_op(onnx, "GatherElements", {"x": ((3, 4), "float32"), "i": ((2, 4), "int64")}, axis=0)
    mod = check(onnx, model, {"x": rand(3, 4), "i": np.array([[0, 1, 2, -1], [2, 2, 0, 1]], "int64")})
    assert "R.gather_elements(x, i, axis=0)" in mod.script()


# ---------------------------------------------------------------- CumSum, Trilu, Tile, TopK
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [1, -3])
def test_cumsum(onnx, exclusive, reverse, axis):
    model = one_op(onnx, "CumSum", {"x": ((3, 4, 2), "float32")}, {"axis": np.array(axis, "int64")},
                   exclusive=exclusive, reverse=reverse)
    mod = check(onnx, model, {"x": rand(3, 4, 2)})
    text = mod.script()
    assert f"R.cumsum(" in text and f"exclusive={bool(exclusive)}" in text
    assert ("R.flip(" in text) == bool(reverse)


def test_cumsum_integers(onnx):
    model = one_op(onnx, "CumSum", {"x": ((5,), "int32")}, {"axis": np.array(0, "int32")})
    check(onnx, model, {"x": np.arange(5, dtype="int32")})


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 0, 1, -2])
def test_trilu(onnx, upper, k):
    init = {} if k is None else {"k": np.array(k, "int64")}
    model = one_op(onnx, "Trilu", {"x": ((2, 4, 5), "float32")}, init, opset=14, upper=upper)
    mod = check(onnx, model, {"x": rand(2, 4, 5)})
    assert f'R.{"triu" if upper else "tril"}(x, R.prim_value({0 if k is None else k}))' in mod.script()


@pytest.mark.parametrize("repeats", [[1, 1], [2, 3], [3, 1]])
def test_tile(onnx, repeats):
    model = one_op(onnx, "Tile", {"x": ((2, 3), "float32")}, {"r": np.array(repeats, "int64")})
    mod = check(onnx, model, {"x": rand(2, 3)})
    assert f"R.tile(x, repeats=[{', '.join(map(str, repeats))}])" in mod.script()


@pytest.mark.parametrize("attrs", [{}, {"largest": 0}, {"axis": 0}, {"axis": -2, "largest": 0}, {"sorted": 0}])
def test_topk(onnx, attrs):
    model = one_op(onnx, "TopK", {"x": ((4, 6), "float32")}, {"k": np.array([3], "int64")},
                   outputs=("values", "indices"), opset=11, **attrs)
    x = RNG_DISTINCT.permutation(24).astype("float32").reshape(4, 6)  # distinct values: no ties
    mod = check(onnx, model, {"x": x})
    axis = attrs.get("axis", -1)
    assert f'R.topk(x, k=3, axis={axis}, ret_type="both", largest={bool(attrs.get("largest", 1))}, ' \
           f'dtype="int64")' in mod.script()


def test_topk_opset_1_takes_k_as_an_attribute(onnx):
    model = one_op(onnx, "TopK", {"x": ((5,), "float32")}, outputs=("v", "i"), opset=1, k=2)
    check(onnx, model, {"x": np.array([3, 1, 4, 1.5, 9], "float32")})


def test_topk_refuses_a_run_time_k(onnx):
    model = one_op(onnx, "TopK", {"x": ((5,), "float32"), "k": ((1,), "int64")}, outputs=("v", "i"), opset=11)
    with pytest.raises(FrontendError, match="TopK node '#0': the k input must be a constant"):
        tvmlite.frontend.from_onnx(model)


RNG_DISTINCT = np.random.default_rng(1)


# ---------------------------------------------------------------- Pad
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes(onnx, mode):
    pads = np.array([0, 1, 2, 0, 2, 1], "int64")  # begins of the 3 axes, then their ends
    model = one_op(onnx, "Pad", {"x": ((2, 3, 4), "float32")}, {"pads": pads}, opset=19, mode=mode)
    mod = check(onnx, model, {"x": rand(2, 3, 4)})
    relax_mode = {"edge": "replicate", "wrap": "circular"}.get(mode, mode)
    assert f'R.nn.pad(x, pad_width=[0, 0, 1, 2, 2, 1], pad_value=0.0, pad_mode="{relax_mode}")' in mod.script()


def test_pad_constant_value_and_axes(onnx):
    init = {"pads": np.array([1, 3, 2, 0], "int64"), "value": np.array(2.5, "float32"),
            "axes": np.array([-1, 0], "int64")}
    model = model_of(onnx, "Pad", ["x", "pads", "value", "axes"], init, opset=18)
    model.graph.input.append(onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (3, 4)))
    mod = check(onnx, model, {"x": rand(3, 4)})
    assert 'R.nn.pad(x, pad_width=[3, 0, 1, 2], pad_value=2.5, pad_mode="constant")' in mod.script()


def test_pad_negative_pads_crop(onnx):
    # NumPy's pad (the reference evaluator's) refuses negative widths: compare with slicing.
    model = one_op(onnx, "Pad", {"x": ((3, 4), "float32")}, {"pads": np.array([-1, 2, 0, -1], "int64")})
    x = rand(3, 4)
    got = run(tvmlite.frontend.from_onnx(model), x)[0]
    np.testing.assert_array_equal(got, np.pad(x[1:, :3], [(0, 0), (2, 0)]))


def test_pad_omitted_constant_value_and_opset_2_attributes(onnx):
    model = model_of(onnx, "Pad", ["x", "pads", "", "axes"], {"pads": np.array([1, 2], "int64"),
                                                              "axes": np.array([1], "int64")}, opset=18)
    model.graph.input.append(onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (2, 3)))
    check(onnx, model, {"x": rand(2, 3)})
    old = one_op(onnx, "Pad", {"x": ((2, 3), "float32")}, opset=2, pads=[0, 1, 1, 0], value=-1.0, mode="constant")
    check(onnx, old, {"x": rand(2, 3)})


def test_pad_refusals(onnx):
    wrap = one_op(onnx, "Pad", {"x": ((3,), "float32")}, {"p": np.array([1, 1], "int64")}, opset=18, mode="wrap")
    with pytest.raises(FrontendError, match=r"Pad node '#0': mode 'wrap' is not supported at opset 18 "
                                            r"\(constant, reflect, edge; wrap from opset 19\)"):
        tvmlite.frontend.from_onnx(wrap)
    run_time = one_op(onnx, "Pad", {"x": ((3,), "float32"), "p": ((2,), "int64")})
    with pytest.raises(FrontendError, match="Pad node '#0': the pads input must be a constant"):
        tvmlite.frontend.from_onnx(run_time)
    short = one_op(onnx, "Pad", {"x": ((3, 2), "float32")}, {"p": np.array([1, 1], "int64")})
    with pytest.raises(FrontendError, match="pads needs a begin and an end per axis: 4 values, got 2"):
        tvmlite.frontend.from_onnx(short)


# ---------------------------------------------------------------- normalisation, layout
def test_instance_normalization(onnx):
    model = one_op(onnx, "InstanceNormalization", {"x": ((2, 3, 4, 5), "float32")},
                   {"s": rand(3), "b": rand(3)}, epsilon=1e-3)
    mod = check(onnx, model, {"x": rand(2, 3, 4, 5)})
    assert "R.nn.instance_norm(x, " in mod.script() and "channel_axis=1, axes=[2, 3], epsilon=0.001" in mod.script()


@pytest.mark.parametrize("opset, per_group", [(18, True), (21, False)])
def test_group_normalization(onnx, opset, per_group):
    scale_len = 2 if per_group else 4  # opset 18 scales each group, opset 21 each channel
    model = one_op(onnx, "GroupNormalization", {"x": ((2, 4, 3, 3), "float32")},
                   {"s": rand(scale_len), "b": rand(scale_len)}, opset=opset, num_groups=2, epsilon=1e-4)
    # The reference evaluator implements GroupNormalization-21 only; opset 18's per-group scale is
    # each group's value repeated over its channels.
    reference = one_op(onnx, "GroupNormalization", {"x": ((2, 4, 3, 3), "float32")},
                       {"s": np.repeat(model_init(model, "s"), 4 // scale_len),
                        "b": np.repeat(model_init(model, "b"), 4 // scale_len)}, opset=21, num_groups=2,
                       epsilon=1e-4)
    from onnx.reference import ReferenceEvaluator

    x = rand(2, 4, 3, 3)
    expected = ReferenceEvaluator(reference).run(None, {"x": x})[0]
    mod = tvmlite.frontend.from_onnx(model)
    np.testing.assert_allclose(run(mod, x)[0], expected, rtol=1e-4, atol=1e-4)
    text = mod.script()
    assert "R.nn.group_norm(x, " in text and "num_groups=2, channel_axis=1, axes=[2, 3], epsilon=0.0001" in text
    assert ("R.repeat(" in text) == per_group


def model_init(model, name):
    import onnx

    return next(onnx.numpy_helper.to_array(t) for t in model.graph.initializer if t.name == name)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(onnx, mode):
    model = one_op(onnx, "DepthToSpace", {"x": ((1, 8, 2, 3), "float32")}, blocksize=2, mode=mode)
    check(onnx, model, {"x": rand(1, 8, 2, 3)})


def test_space_to_depth(onnx):
    model = one_op(onnx, "SpaceToDepth", {"x": ((2, 3, 4, 6), "float32")}, blocksize=2)
    check(onnx, model, {"x": rand(2, 3, 4, 6)})


# ---------------------------------------------------------------- elementwise
def test_comparisons_logic_and_where(onnx):
    ops = ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]
    nodes = [node(onnx, op, ["a", "b"], [op.lower()]) for op in ops]
    nodes += [node(onnx, "And", ["less", "p"], ["and"]), node(onnx, "Or", ["less", "p"], ["or"]),
              node(onnx, "Xor", ["less", "p"], ["xor"]), node(onnx, "Not", ["p"], ["not"]),
              node(onnx, "Where", ["greater", "a", "b"], ["where"])]
    outputs = [n.output[0] for n in nodes]
    model = make_model(onnx, nodes, {"a": ((2, 3), "float32"), "b": ((3,), "float32"), "p": ((2, 3), "bool")},
                       outputs)
    a = np.array([[1, 2, 3], [3, 2, 1]], "float32")
    mod = check(onnx, model, {"a": a, "b": np.array([1, 3, 2], "float32"), "p": a > 1.5})
    text = mod.script()
    for op in ("R.equal(a, b)", "R.less(a, b)", "R.greater_equal(a, b)", "R.logical_and(", "R.logical_xor(",
               "R.logical_not(p)", "R.where("):
        assert op in text


def test_bitwise_and_integer_mod(onnx):
    nodes = [node(onnx, op, ["a", "b"], [op.lower()]) for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor")]
    nodes += [node(onnx, "BitwiseNot", ["a"], ["bitwisenot"]), node(onnx, "Mod", ["a", "b"], ["mod"]),
              node(onnx, "Mod", ["a", "b"], ["fmod"], fmod=1)]
    model = make_model(onnx, nodes, {"a": ((6,), "int32"), "b": ((6,), "int32")}, [n.output[0] for n in nodes],
                       opset=18)
    mod = check(onnx, model, {"a": np.array([7, -7, 7, -7, 12, 5], "int32"),
                              "b": np.array([3, 3, -3, -3, 5, 7], "int32")})
    assert "R.floor_mod(a, b)" in mod.script() and "R.mod(a, b)" in mod.script()


def test_float_mod(onnx):
    model = one_op(onnx, "Mod", {"a": ((4,), "float32"), "b": ((4,), "float32")}, fmod=1)
    check(onnx, model, {"a": np.array([5.5, -5.5, 5.5, -5.5], "float32"),
                        "b": np.array([2, 2, -2, -2], "float32")})
    floor = one_op(onnx, "Mod", {"a": ((4,), "float32"), "b": ((4,), "float32")})
    with pytest.raises(FrontendError, match="Mod node '#0': fmod=0 is defined for integer inputs only"):
        tvmlite.frontend.from_onnx(floor)


UNARY = ["Tan", "Atan", "Sinh", "Cosh", "Asinh", "Softplus", "Softsign", "HardSwish", "Sign", "Erf"]


def test_more_unary_ops(onnx):
    nodes = [node(onnx, op, ["x"], [op.lower()]) for op in UNARY]
    nodes += [node(onnx, op, ["u"], [op.lower()]) for op in ("Asin", "Acos", "Atanh")]
    nodes += [node(onnx, "Acosh", ["big"], ["acosh"]), node(onnx, "IsNaN", ["x"], ["isnan"]),
              node(onnx, "HardSigmoid", ["x"], ["hs"]), node(onnx, "HardSigmoid", ["x"], ["hs2"], alpha=0.5, beta=0.1),
              node(onnx, "Elu", ["x"], ["elu"], alpha=0.7), node(onnx, "Selu", ["x"], ["selu"]),
              node(onnx, "Selu", ["x"], ["selu2"], alpha=1.5, gamma=2.0),
              node(onnx, "ThresholdedRelu", ["x"], ["thr"], alpha=0.3), node(onnx, "PRelu", ["x", "slope"], ["prelu"])]
    outputs = [n.output[0] for n in nodes]
    model = make_model(onnx, nodes, {"x": ((2, 3, 4), "float32"), "u": ((5,), "float32"), "big": ((3,), "float32")},
                       outputs, {"slope": rand(3, 1)}, opset=18)
    x = rand(2, 3, 4) * 3
    mod = check(onnx, model, {"x": x, "u": np.linspace(-0.9, 0.9, 5).astype("float32"),
                              "big": np.array([1.5, 2, 10], "float32")})
    text = mod.script()
    for op in ("R.tan(x)", "R.nn.softplus(x", "R.nn.selu(x)", "R.isnan(x)", "R.clip("):
        assert op in text


def test_variadic_sum_mean_max_min(onnx):
    nodes = [node(onnx, op, ["a", "b", "c"], [op.lower()]) for op in ("Sum", "Mean", "Max", "Min")]
    nodes += [node(onnx, "Sum", ["a"], ["one"]), node(onnx, "Mean", ["a"], ["mean1"])]
    model = make_model(onnx, nodes, {"a": ((2, 3), "float32"), "b": ((3,), "float32"), "c": ((2, 1), "float32")},
                       [n.output[0] for n in nodes])
    check(onnx, model, {"a": rand(2, 3), "b": rand(3), "c": rand(2, 1)})


# ---------------------------------------------------------------- reductions
@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
                                "ReduceSum", "ReduceMean", "ReduceMax"])
@pytest.mark.parametrize("axes, keepdims", [([1], 1), ([0, -1], 0), (None, 1)])
def test_reductions_with_axes_input(onnx, op, axes, keepdims):
    init = {} if axes is None else {"axes": np.array(axes, "int64")}
    model = one_op(onnx, op, {"x": ((2, 3, 4), "float32")}, init, opset=18, keepdims=keepdims)
    check(onnx, model, {"x": np.abs(rand(2, 3, 4)) + 0.1})


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
                                "ReduceSum"])
def test_reduction_noop_with_empty_axes(onnx, op):
    # Only the sum is skipped: ReduceL2 gives |x|, ReduceSumSquare x * x (the reference's reading).
    model = one_op(onnx, op, {"x": ((2, 3), "float32")}, opset=18, noop_with_empty_axes=1)
    check(onnx, model, {"x": np.abs(rand(2, 3)) + 0.1})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("attrs", [{}, {"axis": 1, "keepdims": 0}, {"axis": -1, "select_last_index": 1},
                                   {"axis": 0, "keepdims": 0, "select_last_index": 1}])
def test_arg_reductions(onnx, op, attrs):
    model = one_op(onnx, op, {"x": ((3, 4), "float32")}, **attrs)
    x = np.array([[1, 3, 3, 0], [2, 2, 1, 1], [0, 3, 1, 1]], "float32")  # ties: first or last index
    mod = check(onnx, model, {"x": x})
    assert f"R.{op.lower()}(" in mod.script()


# ---------------------------------------------------------------- creating, expanding, splitting
def test_expand(onnx):
    model = one_op(onnx, "Expand", {"x": ((3, 1), "float32")}, {"s": np.array([2, 1, 4], "int64")})
    mod = check(onnx, model, {"x": rand(3, 1)})
    assert "R.broadcast_to(x, R.shape([2, 3, 4]))" in mod.script()
    bad = one_op(onnx, "Expand", {"x": ((3, 2), "float32")}, {"s": np.array([4], "int64")})
    with pytest.raises(FrontendError, match=r"Expand node '#0': shape \[3, 2\] cannot be expanded to \[4\]"):
        tvmlite.frontend.from_onnx(bad)


def test_range_and_constant_of_shape_fold(onnx):
    helper = onnx.helper
    fill = helper.make_tensor("v", onnx.TensorProto.FLOAT, [1], [1.5])
    nodes = [node(onnx, "Shape", ["x"], ["shape"]), node(onnx, "ConstantOfShape", ["shape"], ["ones"], value=fill),
             node(onnx, "Range", ["start", "limit", "delta"], ["r"]), node(onnx, "Add", ["x", "ones"], ["y"]),
             node(onnx, "Mul", ["y", "r"], ["z"])]
    model = make_model(onnx, nodes, {"x": ((2, 4), "float32")}, ["z"],
                       {"start": np.array(1.0, "float32"), "limit": np.array(3.0, "float32"),
                        "delta": np.array(0.5, "float32")})
    mod = check(onnx, model, {"x": rand(2, 4)})
    assert "R.full" not in mod.script() and "R.arange" not in mod.script()


def test_constant_of_shape_with_a_symbolic_dimension(onnx):
    nodes = [node(onnx, "Shape", ["x"], ["shape"]), node(onnx, "ConstantOfShape", ["shape"], ["zeros"]),
             node(onnx, "Add", ["x", "zeros"], ["y"])]
    model = make_model(onnx, nodes, {"x": (("n", 3), "float32")}, ["y"])
    text = text_of(model)
    assert 'R.full(R.shape([n, 3]), R.const(0.0, "float32"), dtype="float32")' in text
    from onnx.reference import ReferenceEvaluator
    x = rand(5, 3)
    np.testing.assert_allclose(run(tvmlite.frontend.from_onnx(model), x)[0],
                               ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_range_refuses_run_time_bounds(onnx):
    model = one_op(onnx, "Range", {"a": ((), "int64"), "b": ((), "int64"), "c": ((), "int64")})
    with pytest.raises(FrontendError, match="Range node '#0': start, limit and delta must be constants"):
        tvmlite.frontend.from_onnx(model)


@pytest.mark.parametrize("opset, split, attrs, outputs", [
    (13, None, {"axis": 1}, 3),
    (13, [1, 4, 1], {"axis": 1}, 3),
    (11, None, {"axis": -1, "split": [2, 2]}, 2),
    (18, None, {"axis": 1, "num_outputs": 4}, 4),
    (18, None, {"axis": 0, "num_outputs": 2}, 2),
])
def test_split(onnx, opset, split, attrs, outputs):
    init = {} if split is None else {"split": np.array(split, "int64")}
    names = tuple(f"y{i}" for i in range(outputs))
    model = one_op(onnx, "Split", {"x": ((2, 6, 4), "float32")}, init, outputs=names, opset=opset, **attrs)
    mod = check(onnx, model, {"x": rand(2, 6, 4)})
    assert "R.split(x, indices_or_sections=" in mod.script()


def test_split_refuses_uneven_parts_before_opset_18(onnx):
    model = one_op(onnx, "Split", {"x": ((5,), "float32")}, outputs=("a", "b"), opset=13)
    with pytest.raises(FrontendError, match="Split node '#0': an axis of length 5 does not split into 2 equal parts"):
        tvmlite.frontend.from_onnx(model)


def test_comparisons_fold_static_shape_arithmetic(onnx):
    # What exporters emit around Reshape: where(shape == -1, 1, shape), all known at import time.
    nodes = [node(onnx, "Equal", ["s", "minus1"], ["is_neg"]), node(onnx, "Where", ["is_neg", "one", "s"], ["t"]),
             node(onnx, "Expand", ["x", "t"], ["y"])]
    model = make_model(onnx, nodes, {"x": ((1, 4), "float32")}, ["y"],
                       {"s": np.array([3, -1], "int64"), "minus1": np.array(-1, "int64"), "one": np.array(1, "int64")})
    mod = check(onnx, model, {"x": rand(1, 4)})
    assert "R.broadcast_to(x, R.shape([3, 4]))" in mod.script() and "R.where" not in mod.script()


def test_printed_module_of_a_reversed_exclusive_cumsum_and_a_topk(onnx):
    nodes = [node(onnx, "CumSum", ["x", "axis"], ["c"], exclusive=1, reverse=1),
             node(onnx, "TopK", ["c", "k"], ["v", "i"], largest=0)]
    model = make_model(onnx, nodes, {"x": ((3, 4), "float32")}, ["v", "i"],
                       {"axis": np.array(-1, "int64"), "k": np.array([2], "int64")})
    assert text_of(model) == '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), dtype="float32")) -> R.Tuple(R.Tensor((3, 2), dtype="float32"), R.Tensor((3, 2), dtype="int64")):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tensor((3, 4), dtype="float32") = R.flip(x, axis=1)
            lv1: R.Tensor((3, 4), dtype="float32") = R.cumsum(lv, axis=1, dtype=None, exclusive=True)
            lv2: R.Tensor((3, 4), dtype="float32") = R.flip(lv1, axis=1)
            lv3: R.Tuple(R.Tensor((3, 2), dtype="float32"), R.Tensor((3, 2), dtype="int64")) = R.topk(lv2, k=2, axis=-1, ret_type="both", largest=False, dtype="int64")
            lv4: R.Tensor((3, 2), dtype="float32") = lv3[0]
            lv5: R.Tensor((3, 2), dtype="int64") = lv3[1]
            gv: R.Tuple(R.Tensor((3, 2), dtype="float32"), R.Tensor((3, 2), dtype="int64")) = lv4, lv5
            R.output(gv)
        return gv'''


# ---------------------------------------------------------------- convolutions and pooling in 1-, 2- and 3-D
@pytest.mark.parametrize("x_shape, w_shape, attrs", [
    ((1, 2, 9), (4, 2, 3), {"strides": [2], "pads": [1, 0]}),
    ((1, 4, 8), (4, 2, 3), {"group": 2, "dilations": [2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 5, 4, 6), (3, 2, 3, 2, 3), {"pads": [1, 0, 1, 1, 0, 1], "strides": [1, 2, 1]}),
])
def test_conv_1d_3d(onnx, x_shape, w_shape, attrs):
    model = one_op(onnx, "Conv", {"x": (x_shape, "float32")}, {"w": rand(*w_shape), "b": rand(w_shape[0])},
                   **attrs)
    mod = check(onnx, model, {"x": rand(*x_shape)})
    assert f"R.nn.conv{len(x_shape) - 2}d(x, " in mod.script()


@pytest.mark.parametrize("x_shape, w_shape, attrs", [
    ((1, 2, 4, 5), (2, 3, 3, 3), {}),
    ((1, 2, 4, 5), (2, 3, 3, 2), {"strides": [2, 3], "pads": [1, 0, 1, 1], "output_padding": [1, 2]}),
    ((1, 2, 3, 3), (2, 3, 3, 3), {"dilations": [2, 1], "strides": [2, 2]}),
    ((1, 2, 3, 3), (2, 2, 4, 4), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 3, 3), (2, 2, 4, 4), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((2, 3, 6), (3, 2, 3), {"strides": [2], "pads": [1, 2]}),
])
def test_conv_transpose(onnx, x_shape, w_shape, attrs):
    model = one_op(onnx, "ConvTranspose", {"x": (x_shape, "float32")},
                   {"w": rand(*w_shape), "b": rand(w_shape[1] * attrs.get("group", 1))}, **attrs)
    mod = check(onnx, model, {"x": rand(*x_shape)})
    layout = "IOHW" if len(x_shape) == 4 else "IOW"
    assert f'kernel_layout="{layout}"' in mod.script()


def test_conv_transpose_groups_and_output_shape(onnx):
    # The reference evaluator fails on these two: compare with what they are equivalent to, per
    # ONNX's definition (a grouped convolution is the groups' convolutions concatenated; an
    # output_shape fixes the padding, the larger half of it first).
    from onnx.reference import ReferenceEvaluator

    def reference(x, w, **attrs):
        model = one_op(onnx, "ConvTranspose", {"x": (x.shape, "float32")}, {"w": w}, **attrs)
        return ReferenceEvaluator(model).run(None, {"x": x})[0]

    x, w = rand(1, 4, 3, 3), rand(4, 1, 3, 3)
    grouped = one_op(onnx, "ConvTranspose", {"x": ((1, 4, 3, 3), "float32")}, {"w": w}, group=2, strides=[2, 1])
    expected = np.concatenate([reference(x[:, :2], w[:2], strides=[2, 1]), reference(x[:, 2:], w[2:], strides=[2, 1])],
                              axis=1)
    np.testing.assert_allclose(run(tvmlite.frontend.from_onnx(grouped), x)[0], expected, rtol=1e-4, atol=1e-4)
    x, w = rand(1, 2, 3, 3), rand(2, 2, 3, 3)
    shaped = one_op(onnx, "ConvTranspose", {"x": ((1, 2, 3, 3), "float32")}, {"w": w}, strides=[2, 2],
                    output_shape=[6, 7])  # total padding 1 in H (begin 1, end 0), 0 in W
    got = run(tvmlite.frontend.from_onnx(shaped), x)[0]
    assert got.shape == (1, 2, 6, 7)
    np.testing.assert_allclose(got, reference(x, w, strides=[2, 2], pads=[1, 0, 0, 0]), rtol=1e-4, atol=1e-4)


def test_conv_transpose_refusals(onnx):
    model = one_op(onnx, "ConvTranspose", {"x": ((1, 2, 3, 3, 3), "float32")}, {"w": rand(2, 2, 2, 2, 2)})
    with pytest.raises(FrontendError, match="ConvTranspose node '#0': 3-D transposed convolution is not supported"):
        tvmlite.frontend.from_onnx(model)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("shape, attrs", [
    ((1, 2, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ((1, 2, 4, 6, 5), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "ceil_mode": 1}),
])
def test_pool_1d_3d(onnx, op, shape, attrs):
    extra = {"count_include_pad": 1} if op == "AveragePool" else {}
    model = one_op(onnx, op, {"x": (shape, "float32")}, **attrs, **extra)
    mod = check(onnx, model, {"x": rand(*shape)})
    assert f"R.nn.{'max' if op == 'MaxPool' else 'avg'}_pool{len(shape) - 2}d(x, " in mod.script()


# ---------------------------------------------------------------- more elementwise and normalisation
def test_cast_like_is_inf_and_activations(onnx):
    nodes = [node(onnx, "CastLike", ["x", "i"], ["cast"]), node(onnx, "IsInf", ["s"], ["inf"]),
             node(onnx, "IsInf", ["s"], ["pinf"], detect_negative=0),
             node(onnx, "IsInf", ["s"], ["ninf"], detect_positive=0), node(onnx, "Mish", ["x"], ["mish"]),
             node(onnx, "Celu", ["x"], ["celu"], alpha=0.8),
             node(onnx, "Shrink", ["x"], ["shrink"], lambd=0.7, bias=0.2),
             node(onnx, "Shrink", ["x"], ["shrink0"])]
    model = make_model(onnx, nodes, {"x": ((2, 5), "float32"), "i": ((1,), "int32"), "s": ((5,), "float32")},
                       [n.output[0] for n in nodes], opset=18)
    mod = check(onnx, model, {"x": rand(2, 5) * 3, "i": np.array([1], "int32"),
                              "s": np.array([1, np.inf, -np.inf, np.nan, 0], "float32")})
    assert 'R.astype(x, dtype="int32")' in mod.script()


@pytest.mark.parametrize("axis", [-1, 0])
def test_lp_normalization(onnx, axis):
    model = one_op(onnx, "LpNormalization", {"x": ((3, 4), "float32")}, p=2, axis=axis)
    check(onnx, model, {"x": rand(3, 4)})
    # The reference evaluator's L1 norm sums x, not |x|: compare p=1 with NumPy.
    l1 = one_op(onnx, "LpNormalization", {"x": ((3, 4), "float32")}, p=1, axis=axis)
    x = rand(3, 4)
    np.testing.assert_allclose(run(tvmlite.frontend.from_onnx(l1), x)[0],
                               x / np.abs(x).sum(axis=axis, keepdims=True), rtol=1e-5)
    with pytest.raises(FrontendError, match="LpNormalization node '#0': p must be 1 or 2, got 3"):
        tvmlite.frontend.from_onnx(one_op(onnx, "LpNormalization", {"x": ((3, 4), "float32")}, p=3))


@pytest.mark.parametrize("attrs", [{}, {"axes": [1]}, {"axes": [0, 1, 2, 3]}])
def test_mean_variance_normalization(onnx, attrs):
    model = one_op(onnx, "MeanVarianceNormalization", {"x": ((2, 3, 4, 2), "float32")}, **attrs)
    check(onnx, model, {"x": rand(2, 3, 4, 2)}, rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------- more indexing and creation
def test_size_folds(onnx):
    nodes = [node(onnx, "Size", ["x"], ["n"]), node(onnx, "Cast", ["n"], ["f"], to=onnx.TensorProto.FLOAT),
             node(onnx, "Mul", ["x", "f"], ["y"])]
    model = make_model(onnx, nodes, {"x": ((2, 3), "float32")}, ["y"])
    mod = check(onnx, model, {"x": rand(2, 3)})
    assert 'R.multiply(x, R.const(6.0, "float32"))' in mod.script()


def test_nonzero(onnx):
    model = one_op(onnx, "NonZero", {"x": ((3, 4), "float32")})
    x = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]], "float32")
    mod = check(onnx, model, {"x": x})
    assert "R.nonzero(x)" in mod.script()


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(onnx, axis):
    model = one_op(onnx, "OneHot", {"i": ((2, 3), "int64")},
                   {"depth": np.array(5, "int64"), "values": np.array([-1.0, 2.0], "float32")}, axis=axis)
    mod = check(onnx, model, {"i": np.array([[0, 4, -1], [2, -5, 3]], "int64")})
    assert f"depth=5, axis={axis})" in mod.script()


@pytest.mark.parametrize("axis", [-1, 0])
def test_hardmax(onnx, axis):
    model = one_op(onnx, "Hardmax", {"x": ((3, 4), "float32")}, axis=axis)
    check(onnx, model, {"x": rand(3, 4)})


@pytest.mark.parametrize("attrs", [{}, {"k": 1}, {"k": -2, "dtype": 6}])
def test_eye_like(onnx, attrs):
    model = one_op(onnx, "EyeLike", {"x": ((3, 5), "float32")}, **attrs)
    check(onnx, model, {"x": rand(3, 5)})


@pytest.mark.parametrize("time_axis, batch_axis", [(0, 1), (1, 0)])
def test_reverse_sequence(onnx, time_axis, batch_axis):
    shape = (4, 3, 2) if time_axis == 0 else (3, 4, 2)
    model = one_op(onnx, "ReverseSequence", {"x": (shape, "float32"), "lens": ((3,), "int64")},
                   time_axis=time_axis, batch_axis=batch_axis)
    check(onnx, model, {"x": rand(*shape), "lens": np.array([1, 4, 2], "int64")})


def test_more_refusals_name_the_node(onnx):
    cases = [
        (one_op(onnx, "DepthToSpace", {"x": (("n", 4, 2, 2), "float32")}, blocksize=2),
         r"DepthToSpace node '#0': needs a static NCHW input, got shape \[n, 4, 2, 2\]"),
        (one_op(onnx, "DepthToSpace", {"x": ((1, 4, 2, 2), "float32")}, blocksize=2, mode="XYZ"),
         "DepthToSpace node '#0': unknown mode 'XYZ' \\(DCR or CRD\\)"),
        (one_op(onnx, "Hardmax", {"x": ((2, 3), "float32")}, opset=11),
         "Hardmax node '#0': Hardmax before opset 13 \\(2-D coercion\\) is not supported"),
        (one_op(onnx, "OneHot", {"i": ((2,), "int64")}, {"d": np.array(3, "int64"), "v": np.array([0, 1, 2], "int64")}),
         "OneHot node '#0': depth must be a number and values a pair \\(off, on\\)"),
        (one_op(onnx, "ArgMax", {"x": (("n", 3), "float32")}, axis=0, select_last_index=1),
         "ArgMax node '#0': select_last_index needs a static dimension on the reduced axis"),
        (one_op(onnx, "Tile", {"x": ((2,), "float32"), "r": ((1,), "int64")}),
         "Tile node '#0': the repeats input must be a constant"),
        (one_op(onnx, "CumSum", {"x": ((2,), "float32")}, {"a": np.array([0, 0], "int64")}),
         "CumSum node '#0': the axis input must hold one value, got 2"),
        (one_op(onnx, "Split", {"x": ((6,), "float32")}, {"s": np.array([2, 2], "int64")}, outputs=("a", "b")),
         r"Split node '#0': split sizes \[2, 2\] do not add up to the axis length 6"),
        (one_op(onnx, "Einsum", {"a": ((2, 3), "float32"), "b": ((4, 5), "float32")}, equation="ij,jk->ik"),
         "Einsum node '#0': R.einsum: label 'j' stands for dimensions of 3 and 4"),
    ]
    for model, message in cases:
        with pytest.raises(FrontendError, match=message):
            tvmlite.frontend.from_onnx(model)
