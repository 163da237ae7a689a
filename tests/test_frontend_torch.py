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


class Indexing(nn.Module):
    """select (negative index too), slices with steps and negative bounds, narrow, index.Tensor
    with one index tensor (take) or one per leading axis, index_select, gather."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("rows", torch.tensor([2, 0, 3, 3]))
        self.register_buffer("cols", torch.tensor([[1, 0], [4, 2]]))
        self.register_buffer("gidx", torch.tensor([[0, 2, 1, 1, 0], [1, 1, 0, 3, 2], [3, 0, 0, 1, 2], [2, 2, 2, 0, 1]]))

    def forward(self, x):  # x: (4, 5, 6)
        a = x[1] + x[:, 2, :].sum() + x[..., -1].mean() + x.select(2, -2).sum()
        b = x[:, 1:4:2, ::3] * 2 + x.narrow(2, 1, 2)[:, 1:3, :1]
        c = x[self.rows] + x[:, self.cols].sum(dim=(1, 2)).unsqueeze(1)
        e = torch.index_select(x, 1, self.rows) + torch.gather(x, 1, self.gidx.unsqueeze(-1).expand(4, 5, 6)[:, :4])
        return a, b, c, x[self.rows, 1:3], e, x[-2:, :-1, 2:], x[self.rows, self.rows]


class Splits(nn.Module):
    """split (sizes, a chunk size), chunk (even and uneven), unflatten, expand, expand_as, stack, repeat, tile."""

    def forward(self, x):  # x: (4, 10, 6)
        a, b, c = x.split([3, 5, 2], dim=1)
        f, g = x.chunk(2, dim=-1)
        w = x[:, :1].expand(4, 7, -1) + x[:, 2:3].expand_as(x[:, :7])
        return (a * 2, b, c - 1, x.split(4, dim=1)[2], x.chunk(3, dim=1)[1], x.unflatten(1, (2, -1)).sum(2), w,
                x[0, 0].expand(2, 3, 6), torch.stack([a.sum(1), b.sum(1), c.sum(1)], dim=1), torch.stack([f, g], dim=-1),
                x[:, :2].repeat(1, 2, 3), x[:2, :1].tile((2, 1)))


class Creation(nn.Module):
    """full, zeros, ones, full_like, ones_like, zeros_like, arange (int and float), new_*, a tensor literal;
    int64 operands promoted to float32 as torch promotes them."""

    def forward(self, x):  # x: (3, 5)
        a = x + torch.full((3, 5), 1.5) + torch.zeros(5) - torch.ones(3, 1)
        b = torch.full_like(x, 2.0) * torch.ones_like(x) + torch.zeros_like(x)
        c = x + torch.arange(5) + torch.arange(2, 7).float() + torch.arange(0.0, 1.0, 0.2)
        d = x.new_ones((3, 5)) + x.new_zeros(5) + x.new_full((1, 5), 0.25)
        return a, b, c, d, torch.arange(3, dtype=torch.float32).unsqueeze(1) * torch.tensor(2.0)


class Logic(nn.Module):
    """where (tensors and numbers), masked_fill (also with -inf), logical not/and/or, any, tril/triu,
    hardswish, hardsigmoid."""

    def forward(self, x):  # x: (4, 6)
        m = x > 0
        a = torch.where(m, x, -x) + torch.where(x < 0.5, 1.0, x)
        b = x.masked_fill(m, 0.0) + x.masked_fill(x < -1, float("-inf")).clamp(min=-5)
        c = torch.logical_not(m).float() + torch.logical_and(m, x < 1).float() + torch.logical_or(m, x < -1).float()
        d = m.any(dim=1, keepdim=True).float() + (x > 1).any(-1).float().unsqueeze(1) + (x > 2).any().float()
        e = torch.tril(x) + torch.triu(x, diagonal=1) * 2 + torch.tril(x, -1)
        return a, b, c, d, e, F.hardswish(x * 4) + F.hardsigmoid(x * 4)


class Attention(nn.Module):
    """scaled_dot_product_attention: plain, with a float mask, a boolean mask and a scale, causal,
    and on 3-D and 2-D tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("float_mask", torch.randn(8, 6))
        self.register_buffer("bool_mask", torch.rand(2, 1, 8, 6) > 0.3)

    def forward(self, q, k, v):  # q (2, 2, 8, 4), k, v: (2, 2, 6, 4)
        return (F.scaled_dot_product_attention(q, k, v),
                F.scaled_dot_product_attention(q, k, v, attn_mask=self.float_mask),
                F.scaled_dot_product_attention(q, k, v, attn_mask=self.bool_mask, scale=0.3),
                F.scaled_dot_product_attention(q, q, q, is_causal=True),
                F.scaled_dot_product_attention(q[0], k[0], v[0]),
                F.scaled_dot_product_attention(q[0, 0], k[0, 0], v[0, 0], attn_mask=self.float_mask))


class Embedding(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.register_buffer("ids", torch.tensor([[1, 9, 0], [3, 3, 7]]))
        self.register_buffer("ids1", torch.tensor([5, 2]))

    def forward(self, x):  # x (2, 3, 4)
        return x + self.emb(self.ids), self.emb(self.ids1)


class Misc(nn.Module):
    """baddbmm, masked_fill with a tensor value, logical_xor, any of a float tensor over two dims,
    where of two numbers."""

    def forward(self, x, b):  # x: (2, 3, 4), b: (2, 4, 3)
        a = torch.baddbmm(x @ b, x, b, beta=0.5, alpha=2.0)
        m = x > 0.2
        c = x.masked_fill(m, torch.tensor(-2.0)) + torch.logical_xor(m, x < 1).float()
        d = (x * (x > 1)).any(dim=(0, 2)).float()
        return a, c, d, torch.where(m, 1.0, 0.5)


TRANSFORMER_OPS = [
    (Indexing, [(4, 5, 6)]),
    (Splits, [(4, 10, 6)]),
    (Creation, [(3, 5)]),
    (Logic, [(4, 6)]),
    (Attention, [(2, 2, 8, 4), (2, 2, 6, 4), (2, 2, 6, 4)]),
    (Embedding, [(2, 3, 4)]),
    (Misc, [(2, 3, 4), (2, 4, 3)]),
]
TRANSFORMER_OP_IDS = ["indexing", "splits", "creation", "logic", "attention", "embedding", "misc"]


@pytest.mark.parametrize("model_cls, shapes", [
    (Activations, [(3, 7)]),
    (Shapes, [(2, 3, 4, 6), (2, 6, 5)]),
    (Pools, [(2, 3, 8, 9)]),
    (GroupedConv, [(1, 4, 11, 10)]),
    *TRANSFORMER_OPS,
], ids=["activations", "shapes", "pools", "grouped-conv", *TRANSFORMER_OP_IDS])
def test_ops_match_torch(model_cls, shapes, decompose=False):
    torch.manual_seed(3)
    model = model_cls().eval()
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    exported = export(model, *(torch.from_numpy(a) for a in args))
    mod = from_exported_program(exported.run_decompositions() if decompose else exported, unwrap_unit_return_tuple=True)
    got, want = run(mod, *args), reference(model, *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)



@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch's own, from run_decompositions
@pytest.mark.parametrize("model_cls, shapes", TRANSFORMER_OPS, ids=TRANSFORMER_OP_IDS)
def test_transformer_ops_match_torch_after_decomposition(model_cls, shapes):
    # core ATen spells them differently: any.dim, full_like, logical_not, where.self, expand, scalar_tensor...
    test_ops_match_torch(model_cls, shapes, decompose=True)

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


def test_attention_with_a_boolean_mask_prints_its_bias():
    # torch's (batch, heads, seq, dim) permuted to R.nn.attention's (batch, seq, heads, dim) and back;
    # a boolean mask (true: attend) becomes the additive 4-D bias TVM's attention takes
    class Masked(nn.Module):
        def forward(self, q, k, mask):
            return F.scaled_dot_product_attention(q, k, k, attn_mask=mask, scale=0.5).select(1, -1)

    exported = export(Masked(), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.rand(4, 4) > 0.5)
    assert body(from_exported_program(exported, unwrap_unit_return_tuple=True).script()) == """\
@I.ir_module
class Module:
    @R.function
    def main(q: R.Tensor((1, 2, 4, 8), dtype="float32"), k: R.Tensor((1, 2, 4, 8), dtype="float32"), mask: R.Tensor((4, 4), dtype="bool")) -> R.Tensor((1, 4, 8), dtype="float32"):
        R.func_attr({"num_input": 3})
        with R.dataflow():
            lv: R.Tensor((1, 4, 2, 8), dtype="float32") = R.permute_dims(q, axes=[0, 2, 1, 3])
            lv1: R.Tensor((1, 4, 2, 8), dtype="float32") = R.permute_dims(k, axes=[0, 2, 1, 3])
            lv2: R.Tensor((1, 4, 2, 8), dtype="float32") = R.permute_dims(k, axes=[0, 2, 1, 3])
            lv3: R.Tensor((4, 4), dtype="float32") = R.where(mask, R.const(0.0, "float32"), R.const("-inf", "float32"))
            lv4: R.Tensor((1, 1, 4, 4), dtype="float32") = R.reshape(lv3, R.shape([1, 1, 4, 4]))
            lv5: R.Tensor((1, 4, 2, 8), dtype="float32") = R.nn.attention_bias(lv, lv1, lv2, lv4, scale=T.float32(0.5), causal_mask=None, window_size=None)
            lv6: R.Tensor((1, 2, 4, 8), dtype="float32") = R.permute_dims(lv5, axes=[0, 2, 1, 3])
            lv7: R.Tensor((1, 4, 8), dtype="float32") = R.take(lv6, R.const(1, "int64"), axis=1, mode="fast")
            gv: R.Tensor((1, 4, 8), dtype="float32") = lv7
            R.output(gv)
        return gv
"""


def test_attention_dropout_is_refused():
    class Dropout(nn.Module):
        def forward(self, q):
            return F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)

    with pytest.raises(FrontendError, match=r"'scaled_dot_product_attention' has attention dropout \(dropout_p=0.5\); "
                                            r"inference needs dropout_p=0.0"):
        from_exported_program(export(Dropout(), torch.randn(1, 2, 4, 8)))
