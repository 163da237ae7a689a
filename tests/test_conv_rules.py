"""The conv rules of passes/schedule/conv_rules.py: which rule takes a packed conv (by its trace's
steps) and the numbers of the scheduled kernel against the unscheduled one."""
from __future__ import annotations

from tvmlite.ir.module import IRModule
from tvmlite.passes import get_pass, get_pipeline  # noqa: F401
from tvmlite.script import from_source

# The small CNN's two convs: an RGB stem (one block of 16 outputs) and 16 -> 32 channels.
CNN = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 8, 8), "float32"), w1: R.Tensor((16, 3, 3, 3), "float32"), w2: R.Tensor((32, 16, 3, 3), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w1, padding=[1, 1, 1, 1]))
            b = R.nn.relu(R.nn.conv2d(a, w2, padding=[1, 1, 1, 1]))
            R.output(b)
        return b
'''


def kernel(name: str) -> IRModule:
    mod = get_pipeline("zero")(get_pass("PackConv2d")(from_source(CNN)))
    return IRModule({"main": mod[name]})


def test_cnn_default_pipeline_matches_zero() -> None:
    """Both convs scheduled by the default pipeline compute what the unscheduled zero pipeline does."""
    import numpy as np

    import tvmlite

    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in ((2, 3, 8, 8), (16, 3, 3, 3), (32, 16, 3, 3))]
    results = []
    for pipeline in ("default", "zero"):
        vm = tvmlite.VirtualMachine(tvmlite.compile(get_pipeline(pipeline)(from_source(CNN)), target="llvm"), tvmlite.cpu())
        results.append(vm["main"](*args).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-4, atol=1e-4)
