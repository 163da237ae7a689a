"""``tvmlite import``: ONNX models and torch.export programs printed as TVMScript, or saved with
their weights for ``tvmlite opt`` and ``parse_file``."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from frontend_util import need, torch_mlp
from tvmlite.cli import main
from tvmlite.frontend import detach_params
from tvmlite.script import parse_file

onnx = need("onnx")
torch = need("torch")
# torch's legacy ONNX exporter (no onnxscript needed) warns that it is deprecated
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def export_onnx(path) -> None:
    """Seed 004's MLP as ONNX with a named batch dimension."""
    torch.onnx.export(torch_mlp(), (torch.randn(1, 784),), str(path), input_names=["x"], dynamo=False,
                      dynamic_axes={"x": {0: "batch"}})


def test_onnx_model_printed_with_symbolic_or_given_shapes(tmp_path, capsys):
    export_onnx(tmp_path / "mlp.onnx")
    assert main(["import", str(tmp_path / "mlp.onnx"), "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert 'def main(x: R.Tensor(("batch", 784), dtype="float32")) -> R.Tensor(("batch", 10), dtype="float32"):' in out
    assert main(["import", str(tmp_path / "mlp.onnx"), "--shape", "x=4,784", "--keep-params", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert 'def main(x: R.Tensor((4, 784), dtype="float32"), fc1_weight: R.Tensor((256, 784), dtype="float32")' in out


def test_saved_program_keeps_its_weights(tmp_path):
    model = torch_mlp()
    with torch.no_grad():
        torch.export.save(torch.export.export(model, (torch.randn(2, 784),)), str(tmp_path / "mlp.pt2"))
    assert main(["import", str(tmp_path / "mlp.pt2"), "--keep-params", "-o", str(tmp_path / "mlp.py")]) == 0
    saved = (tmp_path / "mlp.py").read_text()
    assert saved.endswith("\n") and not saved.endswith("\n\n")  # a text file: one final newline
    assert main(["fmt", "--check", str(tmp_path / "mlp.py")]) == 0  # and already in canonical form
    mod, params = detach_params(parse_file(str(tmp_path / "mlp.py")))
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())
    x = np.random.default_rng(0).random((2, 784), dtype=np.float32)
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(vm["main"](x, *params["main"]).numpy(), want, rtol=1e-4, atol=1e-4)


def test_errors_exit_1_with_a_message(tmp_path, capsys):
    export_onnx(tmp_path / "mlp.onnx")
    assert main(["import", str(tmp_path / "mlp.onnx"), "--shape", "x"]) == 1
    assert "--shape 'x': expected NAME=D1,D2,..." in capsys.readouterr().err
    assert main(["import", str(tmp_path / "mlp.onnx"), "--shape", "y=1,784"]) == 1
    assert "shape_dict names 'y', which is not an input of the model" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "model.txt")]) == 1
    assert "expected an ONNX model (.onnx) or a torch.export program (.pt2)" in capsys.readouterr().err
