"""``tvmlite.frontend.from_exported_program``: seed 004's import, op coverage, end-to-end numbers
against PyTorch, and the errors a user meets."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from frontend_util import EXAMPLES, need, small_cnn, torch_mlp
from tvmlite.frontend import FrontendError, detach_params, from_exported_program

torch = need("torch")
nn = torch.nn
F = torch.nn.functional

import tvmlite  # noqa: E402
from tvmlite import passes as P  # noqa: E402
from tvmlite.ir.structural import assert_structural_equal  # noqa: E402
from tvmlite.script import from_source  # noqa: E402

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)


def body(text: str) -> str:
    """The printed text without its '# from X import Y' header lines."""
    lines = text.rstrip("\n").split("\n")
    while lines and lines[0].startswith("# from "):
        lines.pop(0)
    return "\n".join(lines).strip("\n") + "\n"


def export(model: nn.Module, *args, **kwargs):
    """``torch.export.export`` without gradients."""
    with torch.no_grad():
        return torch.export.export(model, args, **kwargs)


def run(mod, *args, pipeline: str = "default"):
    """Optimise with a named pipeline, compile and run ``main``; tensors come back as numpy arrays."""
    ex = tvmlite.compile(P.get_pipeline(pipeline)(mod), target="llvm")
    out = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](*args)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


def reference(model: nn.Module, *args):
    """PyTorch's outputs as numpy arrays."""
    with torch.no_grad():
        out = model(*(torch.from_numpy(a) for a in args))
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


# ==================================================================== seed 004
def seed004_module():
    torch.manual_seed(0)
    model = torch_mlp()
    exported = export(model, torch.randn(1, 784, dtype=torch.float32))
    return model, from_exported_program(exported, keep_params_as_input=True, unwrap_unit_return_tuple=True)


def test_seed004_prints_as_the_tutorial():
    _, mod = seed004_module()
    detached, _ = detach_params(mod)
    assert body(detached.script()) == body(read_corpus("seed004_mlp_torch.py"))


def test_seed004_params_are_detached_in_parameter_order():
    model, mod = seed004_module()
    detached, params = detach_params(mod)
    assert list(params) == ["main"]
    expected = [model.fc1.weight, model.fc1.bias, model.fc2.weight, model.fc2.bias]
    assert [p.shape for p in params["main"]] == [tuple(t.shape) for t in expected]
    for got, want in zip(params["main"], expected):
        np.testing.assert_array_equal(got, want.detach().numpy())
    assert "params" in mod["main"].attrs and "params" not in detached["main"].attrs
    assert dict(detached["main"].attrs)["num_input"] == 1
    # detaching does not change the module it was given
    assert len(mod["main"].attrs["params"]) == 4


def test_kept_params_round_trip_through_the_metadata():
    _, mod = seed004_module()
    text = mod.script(show_meta=True)
    assert 'R.func_attr({"num_input": 1, "params": [metadata["relax.expr.Constant"][0]' in text
    reparsed = from_source(text)
    assert_structural_equal(reparsed, mod)
    _, params = detach_params(reparsed)
    np.testing.assert_array_equal(params["main"][0], detach_params(mod)[1]["main"][0])


def test_seed004_flow_runs_and_matches_torch():
    model, mod = seed004_module()
    mod, params = detach_params(mod)
    x = np.random.default_rng(0).random((1, 784), dtype=np.float32)
    ex = tvmlite.compile(P.get_pipeline("zero")(P.LegalizeOps()(mod)), target="llvm")
    vm = tvmlite.VirtualMachine(ex, tvmlite.cpu())
    out = vm["main"](tvmlite.runtime.tensor(x), *params["main"]).numpy()
    np.testing.assert_allclose(out, reference(model, x), rtol=1e-4, atol=1e-4)


def test_relax_frontend_spelling_of_the_seed():
    from tvmlite import relax

    assert relax.frontend.detach_params is detach_params


# ==================================================================== end to end
@pytest.mark.parametrize("keep_params", [True, False])
def test_mlp_end_to_end(keep_params):
    torch.manual_seed(1)
    model = torch_mlp()
    x = np.random.default_rng(1).standard_normal((4, 784), dtype=np.float32)
    mod = from_exported_program(export(model, torch.from_numpy(x)), keep_params_as_input=keep_params,
                                unwrap_unit_return_tuple=True)
    mod, params = detach_params(mod)
    assert bool(params) == keep_params
    np.testing.assert_allclose(run(mod, x, *params.get("main", [])), reference(model, x), rtol=1e-4, atol=1e-4)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch's own, from run_decompositions
@pytest.mark.parametrize("decompose", [False, True], ids=["as-exported", "core-aten"])
def test_cnn_end_to_end(decompose):
    model = small_cnn()
    x = np.random.default_rng(2).standard_normal((2, 3, 16, 16), dtype=np.float32)
    exported = export(model, torch.from_numpy(x))
    if decompose:  # addmm, convolution, _native_batch_norm_legit_no_training, getitem...
        exported = exported.run_decompositions()
    mod, params = detach_params(from_exported_program(exported, keep_params_as_input=True,
                                                      unwrap_unit_return_tuple=True))
    text = mod.script()
    assert "R.nn.conv2d(x, p_conv1_weight" in text and "R.nn.batch_norm(" in text
    assert "R.nn.max_pool2d(" in text
    # the decomposition turns adaptive pooling to 1x1 into a mean
    assert ("R.mean(" if decompose else "R.nn.adaptive_avg_pool2d(") in text
    np.testing.assert_allclose(run(mod, x, *params["main"]), reference(model, x), rtol=1e-4, atol=1e-4)


def test_tuple_output_unless_unwrapped():
    model = torch_mlp()
    exported = export(model, torch.randn(1, 784))
    wrapped = from_exported_program(exported)
    assert "-> R.Tuple(R.Tensor((1, 10), dtype=\"float32\"))" in wrapped.script()
    assert "-> R.Tensor((1, 10), dtype=\"float32\")" in from_exported_program(exported, unwrap_unit_return_tuple=True).script()


# ==================================================================== op coverage
class Activations(nn.Module):
    def forward(self, x):
        a = F.gelu(x) + F.gelu(x, approximate="tanh") - F.silu(x)
        b = torch.sigmoid(x) * torch.tanh(x) / (torch.exp(-x.abs()) + 1.0)
        c = F.leaky_relu(x, 0.2) + F.relu6(x * 4) + F.hardtanh(x) + x.clamp(-0.5, 0.25)
        d = torch.sqrt(x.abs() + 1) + torch.rsqrt(x * x + 1) + torch.log(x.abs() + 1) + torch.erf(x)
        e = 2.0 - x + x ** 2 + torch.maximum(x, -x) - torch.minimum(x, x * 0.5)
        return a + b + c + d + e, torch.floor(x * 3) + torch.ceil(x) - torch.neg(x)


class Shapes(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm([4, 6])
        self.drop = nn.Dropout(0.5)

    def forward(self, x, y):  # x: (2, 3, 4, 6), y: (2, 6, 5)
        z = self.drop(self.ln(x))
        z = z.permute(0, 2, 1, 3).reshape(2, 4, 18).transpose(1, 2)  # (2, 18, 4)
        w = torch.cat([z, z * 2], dim=2).unsqueeze(1).squeeze(1)  # (2, 18, 8)
        m = torch.matmul(x.view(2, 12, 6), y)  # (2, 12, 5)
        s = torch.softmax(m, dim=-1) + F.log_softmax(m, dim=1)
        return (w.mean(dim=1, keepdim=True), w.sum(dim=-1), s.flatten(1), torch.bmm(m, m.transpose(1, 2)),
                x.to(torch.float64).to(torch.float32).amax(dim=(2, 3)))


class Pools(nn.Module):
    def forward(self, x):
        return (F.avg_pool2d(x, 3, stride=2, padding=1), F.avg_pool2d(x, 2, count_include_pad=False),
                F.max_pool2d(x, 3, stride=1, padding=1), F.adaptive_avg_pool2d(x, (2, 3)))


class GroupedConv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, stride=2, padding=2, dilation=2, groups=2)

    def forward(self, x):
        return self.conv(x)


@pytest.mark.parametrize("model_cls, shapes", [
    (Activations, [(3, 7)]),
    (Shapes, [(2, 3, 4, 6), (2, 6, 5)]),
    (Pools, [(2, 3, 8, 9)]),
    (GroupedConv, [(1, 4, 11, 10)]),
], ids=["activations", "shapes", "pools", "grouped-conv"])
def test_ops_match_torch(model_cls, shapes):
    torch.manual_seed(3)
    model = model_cls().eval()
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    mod = from_exported_program(export(model, *(torch.from_numpy(a) for a in args)), unwrap_unit_return_tuple=True)
    got, want = run(mod, *args), reference(model, *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_addmm_with_scaling_after_decomposition():
    class Addmm(nn.Module):
        def forward(self, b, x, w):
            return torch.addmm(b, x, w, beta=0.5, alpha=2.0), torch.mm(x, w).t()

    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s, dtype=np.float32) for s in [(5,), (3, 4), (4, 5)]]
    model = Addmm()
    mod = from_exported_program(export(model, *(torch.from_numpy(a) for a in args)))
    for got, want in zip(run(mod, *args), reference(model, *args)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_symbolic_batch_runs_at_any_size():
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.fc2 = nn.Linear(32, 4)

        def forward(self, x):
            y = self.fc1(x).view(x.shape[0], 4, 8).permute(0, 2, 1).reshape(-1, 32)
            return torch.softmax(self.fc2(y), dim=-1)

    model = Net().eval()
    batch = torch.export.Dim("batch")
    mod = from_exported_program(export(model, torch.randn(3, 16), dynamic_shapes={"x": {0: batch}}),
                                unwrap_unit_return_tuple=True)
    text = mod.script()
    assert 'def main(x: R.Tensor(("s' in text and "= T.int64()" in text
    ex = tvmlite.compile(P.get_pipeline("default")(mod))
    vm = tvmlite.VirtualMachine(ex, tvmlite.cpu())
    for n in (1, 3, 7):
        x = np.random.default_rng(n).standard_normal((n, 16), dtype=np.float32)
        np.testing.assert_allclose(vm["main"](x).numpy(), reference(model, x), rtol=1e-5, atol=1e-6)


def test_custom_convert_map_adds_an_op():
    class Cumsum(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0) + 1

    exported = export(Cumsum(), torch.randn(4))
    with pytest.raises(FrontendError, match=r"unsupported ops: cumsum\.default \(nodes: cumsum\)"):
        from_exported_program(exported)

    def cumsum_as_identity(importer, node):  # a user-supplied converter sees the importer
        return importer.arg(node, 0, "input")

    mod = from_exported_program(exported, custom_convert_map={"cumsum.default": cumsum_as_identity},
                                unwrap_unit_return_tuple=True)
    assert "R.add(x, R.const(1.0, \"float32\"))" in mod.script()


# ==================================================================== errors
def test_all_unsupported_ops_named_at_once():
    class Odd(nn.Module):
        def forward(self, x):
            return torch.sort(x).values + torch.cumsum(x, 0) + torch.cumsum(x * 2, 0)

    with pytest.raises(FrontendError) as info:
        from_exported_program(export(Odd(), torch.randn(5)))
    message = str(info.value)
    assert "cumsum.default (nodes: cumsum, cumsum_1)" in message and "sort.default (nodes: sort)" in message
    assert "The supported ops are listed by tvmlite.frontend.torch.supported_ops()" in message


def test_training_mode_batch_norm_is_refused():
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4)).train()
    with pytest.raises(FrontendError, match=r"training mode; export the model after model.eval\(\)"):
        from_exported_program(export(model, torch.randn(2, 3, 4, 4)))


def test_wrong_object_is_refused():
    with pytest.raises(TypeError, match="expects a torch.export.ExportedProgram"):
        from_exported_program(torch_mlp())


def test_missing_torch_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"needs the 'torch' package.*pip install 'tvmlite\[torch\]'"):
        from_exported_program(object())


def test_importing_tvmlite_does_not_import_the_frameworks():
    code = ("import sys, tvmlite, tvmlite.frontend, tvmlite.frontend.torch, tvmlite.frontend.onnx\n"
            "assert 'torch' not in sys.modules and 'onnx' not in sys.modules, sorted(sys.modules)\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_example_script_runs_the_seed004_flow(tmp_path):
    proc = subprocess.run([sys.executable, str(EXAMPLES / "import_torch.py")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    imported = proc.stdout.split("# ==== imported\n")[1].split("# ==== params")[0]
    assert body(imported.split("# Metadata")[0]) == body(read_corpus("seed004_mlp_torch.py"))
    difference = float(proc.stdout.rsplit("max |tvmlite - torch| = ", 1)[1])
    assert difference < 1e-4


@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch's own, from run_decompositions
def test_unproduced_second_output_is_refused():
    class PoolWithIndices(nn.Module):
        def forward(self, x):
            return F.max_pool2d(x, 2, return_indices=True)

    exported = export(PoolWithIndices(), torch.randn(1, 1, 4, 4)).run_decompositions()
    with pytest.raises(FrontendError, match=r"node 'getitem_1' reads output 1 of 'max_pool2d_with_indices', "
                                            r"which the importer does not produce \(only output 0\)"):
        from_exported_program(exported)
