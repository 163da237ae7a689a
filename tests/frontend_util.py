"""What the frontend tests share: optional frameworks (skipped when missing, unless CI requires
them) and the PyTorch models both importers' end-to-end tests run."""
from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def need(name: str) -> ModuleType:
    """Import ``name`` or skip the test module; with ``TVMLITE_REQUIRE_FRONTENDS=1`` (set by CI,
    which installs the extras) a missing package is an error rather than a silent skip."""
    if os.environ.get("TVMLITE_REQUIRE_FRONTENDS") == "1":
        return importlib.import_module(name)
    return pytest.importorskip(name)


def load_example(name: str) -> ModuleType:
    """A module of examples/ (its definitions, without running its main)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_mlp() -> Any:
    """Seed 004's MLP (784-256-10, from examples/import_torch.py) in eval mode."""
    return load_example("import_torch").TorchModel().eval()


def small_cnn() -> Any:
    """conv, batch norm, relu, max pooling, conv without bias, batch norm, relu, adaptive average
    pooling, flatten, linear; eval mode, batch norms with non-trivial statistics."""
    torch = need("torch")
    nn = torch.nn

    class SmallCNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(16)
            self.pool = nn.MaxPool2d(2)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.bn1(self.conv1(x))))
            x = self.gap(torch.relu(self.bn2(self.conv2(x))))
            return self.fc(torch.flatten(x, 1))

    torch.manual_seed(0)
    model = SmallCNN().eval()
    for bn in (model.bn1, model.bn2):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.data.uniform_(0.5, 1.5)
        bn.bias.data.uniform_(-0.5, 0.5)
    return model
