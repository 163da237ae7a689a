"""The PyTorch models of the model benchmark (bench/bench_models.py), written out so that neither
torchvision nor a download is needed: an MLP, a small CNN, a resnet18-style network and a
transformer encoder layer, both as ``nn.TransformerEncoderLayer`` and written in plain ops."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass
class ModelSpec:
    """One row of the model table: how to build the model and its input, and how tvmlite imports it."""

    name: str
    build: Callable[[Any], Any]  # torch -> nn.Module in eval mode
    shape: tuple[int, ...]
    frontend: str = "torch"  # "torch": torch.export -> from_exported_program; "onnx": torch.onnx -> from_onnx
    quick: bool = True  # part of --quick


def with_statistics(torch: Any, model: Any) -> Any:
    """Batch norms with running statistics and affine parameters that matter, in eval mode."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    return model.eval()


def mlp(torch: Any) -> Any:
    """784-256-10 with relu (the MLP of TVM's IRModule tutorial)."""
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).eval()


def small_cnn(torch: Any) -> Any:
    """conv-BN-relu-maxpool, conv-BN-relu-avgpool, linear."""
    nn = torch.nn

    class CNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            return self.fc(torch.flatten(self.features(x), 1))

    torch.manual_seed(0)
    return with_statistics(torch, CNN())


def resnet18(torch: Any) -> Any:
    """torchvision's resnet18 layers, written out."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.down is None else self.down(x)
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(y)) + identity)

    class ResNet18(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 64
            for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
                layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            y = nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1)
            return self.fc(torch.flatten(y, 1))

    torch.manual_seed(0)
    return with_statistics(torch, ResNet18())


def encoder_layer(torch: Any) -> Any:
    """``nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True)`` (post-norm, relu)."""
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True).eval()


def plain_encoder_layer(torch: Any) -> Any:
    """The same encoder layer written in plain ops (linear, reshape, matmul, softmax, layer_norm),
    with the weights of :func:`encoder_layer`: it imports as plain Relax ops, no attention op."""
    nn = torch.nn
    F = nn.functional
    ref = encoder_layer(torch)

    class Plain(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.heads = ref.self_attn.num_heads
            self.qkv = nn.Linear(256, 3 * 256)
            self.qkv.weight.data.copy_(ref.self_attn.in_proj_weight.data)
            self.qkv.bias.data.copy_(ref.self_attn.in_proj_bias.data)
            self.out, self.lin1, self.lin2 = ref.self_attn.out_proj, ref.linear1, ref.linear2
            self.norm1, self.norm2 = ref.norm1, ref.norm2

        def forward(self, x):
            b, s, d = x.shape
            h = self.heads
            q, k, v = (t.reshape(b, s, h, d // h).permute(0, 2, 1, 3) for t in self.qkv(x).chunk(3, dim=-1))
            att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * (1.0 / (d // h) ** 0.5), dim=-1)
            y = self.out(torch.matmul(att, v).permute(0, 2, 1, 3).reshape(b, s, d))
            x = self.norm1(x + y)
            return self.norm2(x + self.lin2(F.relu(self.lin1(x))))

    return Plain().eval()


MODELS: list[ModelSpec] = [
    ModelSpec("MLP 784-256-10 b1", mlp, (1, 784)),
    ModelSpec("MLP 784-256-10 b64", mlp, (64, 784)),
    ModelSpec("small CNN 8x3x32x32", small_cnn, (8, 3, 32, 32)),
    ModelSpec("resnet18 1x3x224x224", resnet18, (1, 3, 224, 224), quick=False),
    ModelSpec("TransformerEncoderLayer 1x128x256 (torch.export)", encoder_layer, (1, 128, 256), quick=False),
    ModelSpec("TransformerEncoderLayer 1x128x256 (ONNX)", encoder_layer, (1, 128, 256), "onnx", quick=False),
    ModelSpec("encoder layer in plain ops 1x128x256", plain_encoder_layer, (1, 128, 256), quick=False),
]


def model_input(spec: ModelSpec) -> np.ndarray:
    """The seeded float32 input of a row."""
    return np.random.default_rng(0).standard_normal(spec.shape, dtype=np.float32)
