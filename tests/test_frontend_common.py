"""What the importers share (``tvmlite.frontend.common``), tested without PyTorch or ONNX."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import relax
from tvmlite.frontend import detach_params
from tvmlite.frontend.common import GraphEmitter, require, sanitize_name
from tvmlite.ir import tir


def emit_module(keep_params: bool):
    """y = x @ w.T + b over a symbolic batch, then flattened with the batch."""
    g = GraphEmitter(keep_params)
    n = tir.Var("n", "int64")
    x = g.add_input("input.1", (n, 2, 3), "float32")
    w = g.add_weight("fc.weight", np.arange(12, dtype="float32").reshape(4, 3))
    b = g.add_weight("fc.bias", np.ones(4, "float32"))
    scale = g.add_weight("scale", np.array(2.0, "float32"))
    g.begin()
    y = g.linear(x, w, b)
    y = g.emit(relax.op.multiply(y, scale))
    return g.finish([g.flatten(y, 0, 1)], unwrap_unit_tuple=True)


def test_names_params_and_num_input():
    mod = emit_module(keep_params=True)
    params = [p.name_hint for p in mod["main"].params]
    assert params == ["input_1", "fc_weight", "fc_bias", "scale"]
    assert dict(mod["main"].attrs)["num_input"] == 1
    # a rank-0 weight keeps rank 0
    assert 'scale: R.Tensor((), dtype="float32")' in mod.script()
    assert "R.reshape(lv3, R.shape([n * 2, 4]))" in mod.script()


def test_detach_params_and_run_at_any_batch():
    mod, params = detach_params(emit_module(keep_params=True))
    assert [p.shape for p in params["main"]] == [(4, 3), (4,), ()]
    assert "params" not in mod["main"].attrs
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())
    for n in (1, 3):
        x = np.random.default_rng(n).random((n, 2, 3), dtype=np.float32)
        want = ((x @ params["main"][0].T + 1) * 2).reshape(n * 2, 4)
        np.testing.assert_allclose(vm["main"](x, *params["main"]).numpy(), want, rtol=1e-6)


def test_constants_when_params_are_not_kept():
    mod = emit_module(keep_params=False)
    assert [p.name_hint for p in mod["main"].params] == ["input_1"]
    assert detach_params(mod)[1] == {}
    x = np.ones((2, 2, 3), "float32")
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())
    assert vm["main"](x).numpy().shape == (4, 4)


def test_rank0_constant_reaches_kernels_as_rank0():
    # the VM once passed rank-0 constants to kernels as shape (1,)
    g = GraphEmitter(keep_params=False)
    x = g.add_input("x", (2, 3, 4), "float32")
    g.begin()
    mod = g.finish([g.emit(relax.op.take(x, relax.const(3, "int64"), axis=2))], unwrap_unit_tuple=True)
    x = np.random.default_rng(0).random((2, 3, 4), dtype=np.float32)
    out = tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())["main"](x).numpy()
    np.testing.assert_array_equal(out, x[:, :, 3])


def test_sanitize_name():
    assert sanitize_name("fc1.weight") == "fc1_weight"
    assert sanitize_name("0") == "_0"
    assert sanitize_name("input:0") == "input_0"


def test_require_names_the_extra():
    with pytest.raises(ImportError, match=r"feature X needs the 'no_such_pkg_tvmlite' package.*"
                                          r"pip install 'tvmlite\[extra\]'"):
        require("no_such_pkg_tvmlite", "extra", "feature X")
