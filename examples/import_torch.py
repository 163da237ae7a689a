"""From a PyTorch model to a result, as TVM's IRModule tutorial does it: torch.export,
from_exported_program, detach_params, the default pipeline, compile, run, and compare with PyTorch.

Run: python examples/import_torch.py   (needs the [torch] extra)"""
import numpy as np
import torch
from torch import nn

import tvmlite
from tvmlite import passes as P
from tvmlite.frontend import detach_params, from_exported_program


class TorchModel(nn.Module):
    """The tutorial's MLP (784 -> 256 -> 10)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(self.relu1(self.fc1(x)))


def main() -> None:
    """Import, print, compile, run and compare."""
    model = TorchModel().eval()
    with torch.no_grad():
        exported = torch.export.export(model, (torch.randn(1, 784, dtype=torch.float32),))
        mod = from_exported_program(exported, keep_params_as_input=True, unwrap_unit_return_tuple=True)
    mod, params = detach_params(mod)
    print("# ==== imported")
    print(mod.script())
    print("# ==== params")
    print(", ".join(f"{p.shape}" for p in params["main"]))

    ex = tvmlite.compile(P.get_pipeline("default")(mod), target="llvm")
    vm = tvmlite.VirtualMachine(ex, tvmlite.cpu())
    x = np.random.rand(1, 784).astype("float32")
    out = vm["main"](x, *params["main"]).numpy()
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    print("# ==== result")
    print(out)
    print(f"max |tvmlite - torch| = {np.abs(out - expected).max():.2e}")


if __name__ == "__main__":
    main()
