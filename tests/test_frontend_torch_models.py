"""``from_exported_program`` on whole models, each written here small (torchvision does not import
beside the CPU torch on these machines): ``nn.TransformerEncoderLayer`` / ``TransformerDecoderLayer``,
GPT-2-style decoder blocks, and classification networks in the style of torchvision's resnet,
mobilenet and vgg. Each is imported as exported and after ``run_decompositions()``, compiled with
the default pipeline and checked against PyTorch within 1e-4."""
from __future__ import annotations

import numpy as np
import pytest

from frontend_util import need
from tvmlite.frontend import FrontendError, detach_params, from_exported_program

torch = need("torch")
nn = torch.nn
F = torch.nn.functional

import tvmlite  # noqa: E402
from tvmlite import passes as P  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")  # torch's own


def export(model, args, decompose: bool, **kwargs):
    """``torch.export.export`` without gradients, optionally decomposed to core ATen."""
    with torch.no_grad():
        exported = torch.export.export(model.eval(), tuple(args), **kwargs)
    return exported.run_decompositions() if decompose else exported


def compiled(mod):
    """``main`` of the module after the default pipeline, on the CPU."""
    ex = tvmlite.compile(P.get_pipeline("default")(mod), target="llvm")
    return tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"]


def check_model(model, args, decompose: bool, keep_params: bool = True):
    """Import, compile, run; the result matches ``model(*args)`` within 1e-4."""
    model.eval()
    mod = from_exported_program(export(model, [torch.from_numpy(a) for a in args], decompose),
                                keep_params_as_input=keep_params, unwrap_unit_return_tuple=True)
    mod, params = detach_params(mod)
    got = compiled(mod)(*args, *params.get("main", [])).numpy()
    with torch.no_grad():
        want = model(*(torch.from_numpy(a) for a in args)).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    return mod


def with_statistics(model):
    """Batch norms with non-trivial running statistics and affine parameters."""
    torch.manual_seed(7)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.5, 0.5)
    return model.eval()


def normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


DECOMPOSE = pytest.mark.parametrize("decompose", [False, True], ids=["as-exported", "core-aten"])


# ==================================================================== classification networks
class BasicBlock(nn.Module):
    """resnet's basic block; a 1x1 convolution + batch norm downsamples the shortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class InvertedResidual(nn.Module):
    """mobilenet's block: expand 1x1, depthwise 3x3 (groups = channels), project 1x1."""

    def __init__(self, cin, cout, stride, expand, act):
        super().__init__()
        hidden = cin * expand
        self.use_residual = stride == 1 and cin == cout
        self.block = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), act(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), act(),
            nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.block(x)
        return x + y if self.use_residual else y


class SqueezeExcite(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, channels // 4, 1)
        self.fc2 = nn.Conv2d(channels // 4, channels, 1)

    def forward(self, x):
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(x, 1)))))


class MobileNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.Hardswish())
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 1, 2, nn.ReLU6), InvertedResidual(8, 16, 2, 2, nn.Hardswish),
                                    SqueezeExcite(16))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(16, 32), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(32, 10))

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


class VGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(nn.Linear(64, 32), nn.ReLU(True), nn.Dropout(), nn.Linear(32, 10))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


@DECOMPOSE
@pytest.mark.parametrize("network", [ResNet, MobileNet, VGG], ids=["resnet", "mobilenet", "vgg"])
def test_classification_networks_match_torch(network, decompose):
    torch.manual_seed(0)
    model = with_statistics(network())
    mod = check_model(model, [normal(2, 3, 16, 16)], decompose)
    text = mod.script()
    assert "R.nn.conv2d(" in text
    if network is MobileNet:  # the depthwise convolutions keep their groups
        assert text.count("groups=16, data_layout=\"NCHW\"") == 2


# ==================================================================== transformers
@DECOMPOSE
def test_transformer_encoder_layer_matches_torch(decompose):
    torch.manual_seed(1)
    check_model(nn.TransformerEncoderLayer(16, 2, 32, batch_first=True), [normal(2, 8, 16)], decompose)


class EncoderWithPadding(nn.Module):
    """An encoder layer whose first sequence ends in two padding positions (a boolean key mask)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.register_buffer("padding", torch.tensor([[False] * 6 + [True] * 2, [False] * 8]))

    def forward(self, src):
        return self.layer(src, src_key_padding_mask=self.padding)


@DECOMPOSE
def test_transformer_encoder_layer_with_key_padding_matches_torch(decompose):
    torch.manual_seed(2)
    check_model(EncoderWithPadding(), [normal(2, 8, 16, seed=2)], decompose, keep_params=False)


class CausalDecoder(nn.Module):
    """``nn.TransformerDecoderLayer`` (pre-norm, GELU) under the causal mask that
    ``generate_square_subsequent_mask`` builds: self-attention with a float mask and is_causal,
    then attention over a memory of another length."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(16, 2, 32, batch_first=True, norm_first=True, activation="gelu")

    def forward(self, tgt, memory):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        return self.layer(tgt, memory, tgt_mask=mask, tgt_is_causal=True)


@DECOMPOSE
def test_causal_transformer_decoder_layer_matches_torch(decompose):
    torch.manual_seed(4)
    check_model(CausalDecoder(), [normal(2, 8, 16, seed=4), normal(2, 6, 16, seed=5)], decompose)


class GPT2Block(nn.Module):
    """A GPT-2 decoder: token + position embeddings, one pre-norm block whose attention is written out
    (split into q, k, v, a causal mask from a ``tril`` buffer through ``masked_fill``, softmax), a
    tanh-GELU MLP, residuals, and an LM head tied to the token embedding."""

    def __init__(self, vocab=50, d=32, heads=2, seq=8):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.ln1, self.attn, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln2, self.fc, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.lnf, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight
        self.heads = heads
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, idx):
        b, t = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(0, t, dtype=torch.long))
        q, k, v = self.attn(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (q.shape[-1] ** 0.5))
        att = F.softmax(att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, -1))
        x = x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return self.head(self.lnf(x))


class GPT2CausalSDPA(GPT2Block):
    """The same block through ``scaled_dot_product_attention(is_causal=True)``: ``chunk``,
    ``unflatten``, ``flatten``, and logits of the last four positions only (a negative slice)."""

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))[None]
        q, k, v = self.attn(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (z.unflatten(-1, (self.heads, -1)).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).flatten(2))
        x = x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return self.head(self.lnf(x)[:, -4:])


def tokens(seed=0):
    return np.random.default_rng(seed).integers(0, 50, (2, 8))


@DECOMPOSE
@pytest.mark.parametrize("block", [GPT2Block, GPT2CausalSDPA], ids=["masked-fill", "sdpa-causal"])
def test_gpt2_block_matches_torch(block, decompose):
    torch.manual_seed(5)
    mod = check_model(block(), [tokens()], decompose)
    text = mod.script()
    # the token ids are read through a take of the (tied) embedding table
    assert "R.astype(idx, dtype=\"int32\")" in text and "R.take(p_" in text
    if block is GPT2CausalSDPA and not decompose:
        assert "causal_mask=\"TopLeft\"" in text


def test_dynamic_batch_runs_at_any_size():
    torch.manual_seed(6)
    model = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).eval()
    batch = torch.export.Dim("batch")
    mod = from_exported_program(export(model, [torch.randn(2, 8, 16)], False, dynamic_shapes={"src": {0: batch}}),
                                unwrap_unit_return_tuple=True)
    main = compiled(mod)
    for n in (1, 3):
        x = normal(n, 8, 16, seed=n)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(main(x).numpy(), want, rtol=1e-4, atol=1e-4)


# ==================================================================== printed text
# TVM 0.27's from_exported_program(..., run_ep_decomposition=False) prints the encoder layer so:
# scaled_dot_product_attention becomes R.nn.attention between permutes from torch's (batch, heads,
# sequence, dim) to (batch, sequence, heads, dim) and back, select.int a take of a constant index.
ENCODER_LAYER_TEXT = """\
@I.ir_module
class Module:
    @R.function
    def main(src: R.Tensor((2, 8, 16), dtype="float32"), p_attn_in_proj_weight: R.Tensor((48, 16), dtype="float32"), p_attn_in_proj_bias: R.Tensor((48,), dtype="float32"), p_attn_out_proj_weight: R.Tensor((16, 16), dtype="float32"), p_attn_out_proj_bias: R.Tensor((16,), dtype="float32"), p_linear1_weight: R.Tensor((32, 16), dtype="float32"), p_linear1_bias: R.Tensor((32,), dtype="float32"), p_linear2_weight: R.Tensor((16, 32), dtype="float32"), p_linear2_bias: R.Tensor((16,), dtype="float32"), p_norm1_weight: R.Tensor((16,), dtype="float32"), p_norm1_bias: R.Tensor((16,), dtype="float32"), p_norm2_weight: R.Tensor((16,), dtype="float32"), p_norm2_bias: R.Tensor((16,), dtype="float32")) -> R.Tensor((2, 8, 16), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tensor((8, 2, 16), dtype="float32") = R.permute_dims(src, axes=[1, 0, 2])
            lv1: R.Tensor((16, 48), dtype="float32") = R.permute_dims(p_attn_in_proj_weight, axes=None)
            lv2: R.Tensor((8, 2, 48), dtype="float32") = R.matmul(lv, lv1, out_dtype="float32")
            lv3: R.Tensor((8, 2, 48), dtype="float32") = R.add(lv2, p_attn_in_proj_bias)
            lv4: R.Tensor((8, 2, 3, 16), dtype="float32") = R.reshape(lv3, R.shape([8, 2, 3, 16]))
            lv5: R.Tensor((1, 8, 2, 3, 16), dtype="float32") = R.expand_dims(lv4, axis=[0])
            lv6: R.Tensor((3, 8, 2, 1, 16), dtype="float32") = R.permute_dims(lv5, axes=[3, 1, 2, 0, 4])
            lv7: R.Tensor((3, 8, 2, 16), dtype="float32") = R.squeeze(lv6, axis=[-2])
            lv8: R.Tensor((8, 2, 16), dtype="float32") = R.take(lv7, R.const(0, "int64"), axis=0, mode="fast")
            lv9: R.Tensor((8, 2, 16), dtype="float32") = R.take(lv7, R.const(1, "int64"), axis=0, mode="fast")
            lv10: R.Tensor((8, 2, 16), dtype="float32") = R.take(lv7, R.const(2, "int64"), axis=0, mode="fast")
            lv11: R.Tensor((8, 4, 8), dtype="float32") = R.reshape(lv8, R.shape([8, 4, 8]))
            lv12: R.Tensor((4, 8, 8), dtype="float32") = R.permute_dims(lv11, axes=[1, 0, 2])
            lv13: R.Tensor((8, 4, 8), dtype="float32") = R.reshape(lv9, R.shape([8, 4, 8]))
            lv14: R.Tensor((4, 8, 8), dtype="float32") = R.permute_dims(lv13, axes=[1, 0, 2])
            lv15: R.Tensor((8, 4, 8), dtype="float32") = R.reshape(lv10, R.shape([8, 4, 8]))
            lv16: R.Tensor((4, 8, 8), dtype="float32") = R.permute_dims(lv15, axes=[1, 0, 2])
            lv17: R.Tensor((2, 2, 8, 8), dtype="float32") = R.reshape(lv12, R.shape([2, 2, 8, 8]))
            lv18: R.Tensor((2, 2, 8, 8), dtype="float32") = R.reshape(lv14, R.shape([2, 2, 8, 8]))
            lv19: R.Tensor((2, 2, 8, 8), dtype="float32") = R.reshape(lv16, R.shape([2, 2, 8, 8]))
            lv20: R.Tensor((2, 8, 2, 8), dtype="float32") = R.permute_dims(lv17, axes=[0, 2, 1, 3])
            lv21: R.Tensor((2, 8, 2, 8), dtype="float32") = R.permute_dims(lv18, axes=[0, 2, 1, 3])
            lv22: R.Tensor((2, 8, 2, 8), dtype="float32") = R.permute_dims(lv19, axes=[0, 2, 1, 3])
            lv23: R.Tensor((2, 8, 2, 8), dtype="float32") = R.nn.attention(lv20, lv21, lv22, scale=None, causal_mask=None, window_size=None)
            lv24: R.Tensor((2, 2, 8, 8), dtype="float32") = R.permute_dims(lv23, axes=[0, 2, 1, 3])
            lv25: R.Tensor((8, 2, 2, 8), dtype="float32") = R.permute_dims(lv24, axes=[2, 0, 1, 3])
            lv26: R.Tensor((16, 16), dtype="float32") = R.reshape(lv25, R.shape([16, 16]))
            lv27: R.Tensor((16, 16), dtype="float32") = R.permute_dims(p_attn_out_proj_weight, axes=None)
            lv28: R.Tensor((16, 16), dtype="float32") = R.matmul(lv26, lv27, out_dtype="float32")
            lv29: R.Tensor((16, 16), dtype="float32") = R.add(lv28, p_attn_out_proj_bias)
            lv30: R.Tensor((8, 2, 16), dtype="float32") = R.reshape(lv29, R.shape([8, 2, 16]))
            lv31: R.Tensor((2, 8, 16), dtype="float32") = R.permute_dims(lv30, axes=[1, 0, 2])
            lv32: R.Tensor((2, 8, 16), dtype="float32") = R.add(src, lv31)
            lv33: R.Tensor((2, 8, 16), dtype="float32") = R.nn.layer_norm(lv32, p_norm1_weight, p_norm1_bias, axes=[-1], epsilon=1.0000000000000001e-05, center=True, scale=True)
            lv34: R.Tensor((16, 32), dtype="float32") = R.permute_dims(p_linear1_weight, axes=None)
            lv35: R.Tensor((2, 8, 32), dtype="float32") = R.matmul(lv33, lv34, out_dtype="float32")
            lv36: R.Tensor((2, 8, 32), dtype="float32") = R.add(lv35, p_linear1_bias)
            lv37: R.Tensor((2, 8, 32), dtype="float32") = R.nn.relu(lv36)
            lv38: R.Tensor((32, 16), dtype="float32") = R.permute_dims(p_linear2_weight, axes=None)
            lv39: R.Tensor((2, 8, 16), dtype="float32") = R.matmul(lv37, lv38, out_dtype="float32")
            lv40: R.Tensor((2, 8, 16), dtype="float32") = R.add(lv39, p_linear2_bias)
            lv41: R.Tensor((2, 8, 16), dtype="float32") = R.add(lv33, lv40)
            lv42: R.Tensor((2, 8, 16), dtype="float32") = R.nn.layer_norm(lv41, p_norm2_weight, p_norm2_bias, axes=[-1], epsilon=1.0000000000000001e-05, center=True, scale=True)
            gv: R.Tensor((2, 8, 16), dtype="float32") = lv42
            R.output(gv)
        return gv
"""


def body(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    while lines and lines[0].startswith("# from "):
        lines.pop(0)
    return "\n".join(lines).strip("\n") + "\n"


def test_encoder_layer_prints_as_tvm_imports_it():
    model = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    mod, _ = detach_params(from_exported_program(export(model, [torch.randn(2, 8, 16)], False),
                                                 keep_params_as_input=True, unwrap_unit_return_tuple=True))
    assert body(mod.script()) == ENCODER_LAYER_TEXT
