"""SimplifyInference: seed 002's conv + batch_norm + relu + residual add becomes conv, one
multiply, one add, relu and the residual add (the rest depends on the parameters only, for
FoldConstant); layer_norm is decomposed, dropout is the identity. Results are checked against
numpy by evaluating the functions before and after with a tiny evaluator (no backend yet)."""
from typing import Any

import numpy as np
import pytest

from tvmlite import passes as P
from tvmlite.ir import IRModule
from tvmlite.ir import relax as rx
from tvmlite.script import from_source

# ---------------------------------------------------------------- a numpy evaluator
_BINARY = {"relax.add": np.add, "relax.subtract": np.subtract, "relax.multiply": np.multiply,
           "relax.divide": np.divide}


def _conv2d(data: np.ndarray, weight: np.ndarray, attrs: Any) -> np.ndarray:
    """NCHW x OIHW convolution (groups 1, dilation 1)."""
    top, left, bottom, right = attrs["padding"]
    padded = np.pad(data, ((0, 0), (0, 0), (top, bottom), (left, right)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, weight.shape[2:], axis=(2, 3))
    sh, sw = attrs["strides"]
    return np.einsum("nchwij,ocij->nohw", windows[:, :, ::sh, ::sw], weight)


def _channel(v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """A per-channel vector shaped to broadcast on ``axis``."""
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _batch_norm(x, gamma, beta, mean, var, attrs):
    """The inference formula, written the textbook way."""
    axis = attrs["axis"] % x.ndim
    out = (x - _channel(mean, x.ndim, axis)) / np.sqrt(_channel(var, x.ndim, axis) + attrs["epsilon"])
    if attrs["scale"]:
        out = out * _channel(gamma, x.ndim, axis)
    if attrs["center"]:
        out = out + _channel(beta, x.ndim, axis)
    return (out, mean, var)


def _layer_norm(x, gamma, beta, attrs):
    axes = tuple(a % x.ndim for a in attrs["axes"])
    out = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + attrs["epsilon"])
    shape = [x.shape[i] if i in axes else 1 for i in range(x.ndim)]  # gamma/beta on the axes
    return out * gamma.reshape(shape) + beta.reshape(shape)


def _call(call: rx.Call, args: list, attrs: Any) -> Any:
    name = call.op.name
    if name in _BINARY:
        return _BINARY[name](*args)
    table = {
        "relax.sqrt": lambda: np.sqrt(args[0]),
        "relax.negative": lambda: -args[0],
        "relax.expand_dims": lambda: np.expand_dims(args[0], tuple(attrs["axis"])),
        "relax.mean": lambda: args[0].mean(axis=tuple(attrs["axis"]), keepdims=attrs["keepdims"]),
        "relax.variance": lambda: args[0].var(axis=tuple(attrs["axis"]), keepdims=attrs["keepdims"]),
        "relax.nn.relu": lambda: np.maximum(args[0], 0),
        "relax.nn.conv2d": lambda: _conv2d(*args, attrs),
        "relax.nn.batch_norm": lambda: _batch_norm(*args, attrs),
        "relax.nn.layer_norm": lambda: _layer_norm(*args, attrs),
        "relax.nn.dropout": lambda: (args[0], np.ones_like(args[0])),
    }
    return table[name]()


def evaluate(func: rx.Function, *inputs: np.ndarray) -> Any:
    """Run a Relax function built from the ops above on numpy arrays (float64 throughout)."""
    env: dict = dict(zip(func.params, inputs))

    def value(e: rx.Expr) -> Any:
        if isinstance(e, rx.Var):
            return env[e]
        if isinstance(e, rx.Constant):
            return e.data.astype(np.float64)
        if isinstance(e, rx.Tuple):
            return tuple(value(f) for f in e.fields)
        if isinstance(e, rx.TupleGetItem):
            return value(e.tuple_value)[e.index]
        if isinstance(e, rx.Call):
            return _call(e, [value(a) for a in e.args], e.attrs)
        raise NotImplementedError(type(e).__name__)

    for block in func.body.blocks:
        for binding in block.bindings:
            env[binding.var] = value(binding.value)
    return value(func.body.body)


def random_inputs(func: rx.Function, seed: int = 0) -> list[np.ndarray]:
    """An input per parameter; variances are positive."""
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        shape = [int(d.value) for d in p.struct_info.shape]
        data = rng.standard_normal(shape)
        out.append(np.abs(data) + 0.5 if p.name_hint.startswith("var") else data)
    return out


def assert_same_results(before: IRModule, after: IRModule) -> None:
    inputs = random_inputs(before["main"])
    want, got = evaluate(before["main"], *inputs), evaluate(after["main"], *inputs)
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def ops(func: rx.Function) -> list[str]:
    return [b.value.op.name[len("relax."):] for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, rx.Call)]


def _operands(e: rx.Expr) -> tuple:
    if isinstance(e, rx.Call):
        return e.args
    if isinstance(e, rx.Tuple):
        return e.fields
    if isinstance(e, rx.TupleGetItem):
        return (e.tuple_value,)
    return (e,)


def data_path_ops(func: rx.Function, inputs: set[str]) -> list[str]:
    """The ops whose operands depend on the parameters named in ``inputs`` (all others depend
    on constants and parameters only: FoldConstant can fold them)."""
    tainted = {p for p in func.params if p.name_hint in inputs}
    path = []
    for block in func.body.blocks:
        for b in block.bindings:
            if any(isinstance(a, rx.Var) and a in tainted for a in _operands(b.value)):
                tainted.add(b.var)
                if isinstance(b.value, rx.Call):
                    path.append(b.value.op.name[len("relax."):])
    return path


# ---------------------------------------------------------------- seed 002
SEED002 = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), w: R.Tensor((64, 64, 3, 3), "float32"),
             gamma: R.Tensor((64,), "float32"), beta: R.Tensor((64,), "float32"),
             mean: R.Tensor((64,), "float32"), var: R.Tensor((64,), "float32")):
        with R.dataflow():
            conv = R.nn.conv2d(x, w, padding=[1, 1])
            bn = R.nn.batch_norm(conv, gamma, beta, mean, var, axis=1)
            bn0 = bn[0]
            relu = R.nn.relu(bn0)
            out = R.add(relu, x)
            R.output(out)
        return out
'''

SEED002_SIMPLIFIED = '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), dtype="float32"), w: R.Tensor((64, 64, 3, 3), dtype="float32"), gamma: R.Tensor((64,), dtype="float32"), beta: R.Tensor((64,), dtype="float32"), mean: R.Tensor((64,), dtype="float32"), var: R.Tensor((64,), dtype="float32")) -> R.Tensor((1, 64, 56, 56), dtype="float32"):
        with R.dataflow():
            conv: R.Tensor((1, 64, 56, 56), dtype="float32") = R.nn.conv2d(x, w, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="void")
            lv: R.Tensor((64,), dtype="float32") = R.add(var, R.const(9.9999997473787516e-06, "float32"))
            lv1: R.Tensor((64,), dtype="float32") = R.sqrt(lv)
            lv2: R.Tensor((64,), dtype="float32") = R.divide(R.const(1.0, "float32"), lv1)
            lv3: R.Tensor((64,), dtype="float32") = R.multiply(lv2, gamma)
            lv4: R.Tensor((64,), dtype="float32") = R.negative(mean)
            lv5: R.Tensor((64,), dtype="float32") = R.multiply(lv4, lv3)
            lv6: R.Tensor((64,), dtype="float32") = R.add(lv5, beta)
            lv7: R.Tensor((1, 64, 1, 1), dtype="float32") = R.expand_dims(lv3, axis=[0, 2, 3])
            lv8: R.Tensor((1, 64, 1, 1), dtype="float32") = R.expand_dims(lv6, axis=[0, 2, 3])
            lv9: R.Tensor((1, 64, 56, 56), dtype="float32") = R.multiply(conv, lv7)
            bn0: R.Tensor((1, 64, 56, 56), dtype="float32") = R.add(lv9, lv8)
            relu: R.Tensor((1, 64, 56, 56), dtype="float32") = R.nn.relu(bn0)
            out: R.Tensor((1, 64, 56, 56), dtype="float32") = R.add(relu, x)
            R.output(out)
        return out'''


def test_seed002_batch_norm_becomes_multiply_add():
    mod = from_source(SEED002)
    with P.PassContext() as ctx:
        out = P.Sequential([P.SimplifyInference()])(mod)
    assert out.script() == SEED002_SIMPLIFIED
    assert ctx.stats["SimplifyInference"]["rewritten"] == 1
    # On the data path only one multiply and one add are left of the batch_norm.
    assert data_path_ops(out["main"], {"x"}) == ["nn.conv2d", "multiply", "add", "nn.relu", "add"]


def test_seed002_numerically_equivalent():
    small = SEED002.replace("(1, 64, 56, 56)", "(2, 4, 6, 6)").replace("(64, 64, 3, 3)", "(4, 4, 3, 3)") \
        .replace("(64,)", "(4,)")
    mod = from_source(small)
    assert_same_results(mod, P.SimplifyInference()(mod))


def test_constant_parameters_leave_only_constant_work_off_the_data_path():
    rng = np.random.default_rng(1)
    params = {name: rng.standard_normal(64).astype("float32") for name in ("g", "b", "m")}
    params["v"] = np.abs(params["m"]) + 1
    text = SEED002.replace("gamma, beta, mean, var, axis=1", "R.const(g), R.const(b), R.const(m), R.const(v), axis=1")
    text = text.replace(''',
             gamma: R.Tensor((64,), "float32"), beta: R.Tensor((64,), "float32"),
             mean: R.Tensor((64,), "float32"), var: R.Tensor((64,), "float32")''', "")
    out = P.SimplifyInference()(from_source(text, extra_vars=params))
    assert data_path_ops(out["main"], {"x", "w"}) == ["nn.conv2d", "multiply", "add", "nn.relu", "add"]
    assert ops(out["main"]).count("expand_dims") == 2


# ---------------------------------------------------------------- batch_norm variants
def _bn_module(attrs: str, shape: str = "(2, 3, 4, 5)", channels: int = 3) -> IRModule:
    return from_source(f'''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor({shape}, "float32"), gamma: R.Tensor(({channels},), "float32"),
             beta: R.Tensor(({channels},), "float32"), mean: R.Tensor(({channels},), "float32"),
             var: R.Tensor(({channels},), "float32")):
        with R.dataflow():
            bn = R.nn.batch_norm(x, gamma, beta, mean, var, {attrs})
            gv = bn[0]
            R.output(gv)
        return gv
''')


@pytest.mark.parametrize("attrs, channels", [
    ("axis=1", 3), ("axis=1, center=False", 3), ("axis=1, scale=False", 3),
    ("axis=-3, epsilon=0.5, center=False, scale=False", 3), ("axis=2", 4), ("axis=0", 2)])
def test_batch_norm_variants_match_numpy(attrs, channels):
    mod = _bn_module(attrs, channels=channels)
    out = P.SimplifyInference()(mod)
    assert "nn.batch_norm" not in ops(out["main"])
    assert_same_results(mod, out)


def test_batch_norm_on_the_last_axis_needs_no_expand_dims():
    mod = _bn_module("axis=-1", shape="(2, 3, 4)", channels=4)
    out = P.SimplifyInference()(mod)
    assert ops(out["main"]) == ["add", "sqrt", "divide", "multiply", "negative", "multiply", "add", "multiply", "add"]
    assert_same_results(mod, out)


def test_batch_norm_tuple_used_whole_stays_a_tuple():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), gamma: R.Tensor((3,), "float32"),
             beta: R.Tensor((3,), "float32"), mean: R.Tensor((3,), "float32"), var: R.Tensor((3,), "float32")):
        with R.dataflow():
            bn = R.nn.batch_norm(x, gamma, beta, mean, var, axis=1)
            R.output(bn)
        return bn
'''
    mod = from_source(text)
    out = P.SimplifyInference()(mod)
    last = out["main"].body.blocks[0].bindings[-1]
    assert last.var.name_hint == "bn" and isinstance(last.value, rx.Tuple)
    assert last.value.fields[1] is out["main"].params[3] and last.value.fields[2] is out["main"].params[4]
    assert_same_results(mod, out)


def test_batch_norm_outside_dataflow_and_its_statistics():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), gamma: R.Tensor((3,), "float32"),
             beta: R.Tensor((3,), "float32"), mean: R.Tensor((3,), "float32"), var: R.Tensor((3,), "float32")):
        bn = R.nn.batch_norm(x, gamma, beta, mean, var, axis=1)
        a = bn[0]
        m = bn[1]
        v = bn[2]
        b = R.add(a, a)
        return (b, m, v)
'''
    mod = from_source(text)
    out = P.SimplifyInference()(mod)
    main = out["main"]
    assert main.body.body.fields[1] is main.params[3] and main.body.body.fields[2] is main.params[4]
    assert ops(main)[-2:] == ["add", "add"]  # the batch_norm's result, then `b`
    assert_same_results(mod, out)


# ---------------------------------------------------------------- layer_norm, dropout
LAYER_NORM = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 4, 8), "float32"), gamma: R.Tensor((4, 8), "float32"), beta: R.Tensor((4, 8), "float32")):
        with R.dataflow():
            ln = R.nn.layer_norm(x, gamma, beta, axes=[1, 2], epsilon=1e-6)
            d = R.nn.dropout(ln, rate=0.2)
            gv = d[0]
            R.output(gv)
        return gv
'''

LAYER_NORM_SIMPLIFIED = '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 4, 8), dtype="float32"), gamma: R.Tensor((4, 8), dtype="float32"), beta: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((2, 4, 8), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((2, 1, 1), dtype="float32") = R.mean(x, axis=[1, 2], keepdims=True)
            lv1: R.Tensor((2, 4, 8), dtype="float32") = R.subtract(x, lv)
            lv2: R.Tensor((2, 1, 1), dtype="float32") = R.variance(x, axis=[1, 2], keepdims=True)
            lv3: R.Tensor((2, 1, 1), dtype="float32") = R.add(lv2, R.const(9.9999999747524271e-07, "float32"))
            lv4: R.Tensor((2, 1, 1), dtype="float32") = R.sqrt(lv3)
            lv5: R.Tensor((2, 4, 8), dtype="float32") = R.divide(lv1, lv4)
            lv6: R.Tensor((2, 4, 8), dtype="float32") = R.multiply(lv5, gamma)
            ln: R.Tensor((2, 4, 8), dtype="float32") = R.add(lv6, beta)
            gv: R.Tensor((2, 4, 8), dtype="float32") = ln
            R.output(gv)
        return gv'''


def test_layer_norm_decomposed_and_dropout_is_the_identity():
    mod = from_source(LAYER_NORM)
    out = P.SimplifyInference()(mod)
    # The dropout binding is gone; its output (a block output) aliases the normalised data.
    assert out.script() == LAYER_NORM_SIMPLIFIED
    assert_same_results(mod, out)


def test_canonicalize_bindings_removes_the_alias_left_by_dropout():
    out = P.Sequential([P.SimplifyInference(), P.CanonicalizeBindings()])(from_source(LAYER_NORM))
    block = out["main"].body.blocks[0]
    assert block.bindings[-1].var.name_hint == "gv" and ops(out["main"])[-1] == "add"


def test_layer_norm_over_inner_axes_aligns_gamma():
    text = LAYER_NORM.replace("(4, 8), \"float32\")", "(4,), \"float32\")").replace("axes=[1, 2]", "axes=[1]")
    mod = from_source(text)
    out = P.SimplifyInference()(mod)
    assert ops(out["main"]).count("expand_dims") == 2  # gamma and beta become (1, 4, 1)
    assert_same_results(mod, out)


def test_dropout_whose_mask_is_used_stays():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            d = R.nn.dropout(x, rate=0.5)
            out = d[0]
            mask = d[1]
            gv = R.add(out, mask)
            R.output(gv)
        return gv
'''
    mod = from_source(text)
    assert P.SimplifyInference()(mod)["main"] is mod["main"]


def test_dropout_only_projected_is_removed_and_uses_see_the_data():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            d = R.nn.dropout(x, rate=0.5)
            out = d[0]
            gv = R.add(out, out)
            R.output(gv)
        return gv
'''
    out = P.SimplifyInference()(from_source(text))
    (binding,) = out["main"].body.blocks[0].bindings
    assert binding.value.args == (out["main"].params[0], out["main"].params[0])


def test_registered_and_opt_level_0():
    assert P.get_pass("SimplifyInference").info.opt_level == 0
    assert "SimplifyInference" in P.list_passes()
