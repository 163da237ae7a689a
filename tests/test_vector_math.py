"""Vector float32 ``T.tanh`` and ``T.erf`` (backend/llvm/vector_math.py): inline straight-line code
instead of one libm call per lane, within 1e-6 relative (a few ulp) of Python's ``math.tanh`` /
``math.erf``, with their signs, limits, zeros and NaN; a GELU kernel vectorised end to end."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tvmlite
from tvmlite.ir.module import IRModule
from tvmlite.script import from_source

KERNEL = '''
@T.prim_func
def main(x: T.Buffer((4096, 16), "float32"), y: T.Buffer((4096, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(4096):
        for j in T.vectorized(16):
            with T.block("e"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.FN(x[vi, vj])
'''
REFERENCE = {"tanh": math.tanh, "erf": math.erf}
SPECIALS = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30, 1e-8, 0.625, -0.625, 1.0, -1.0, 3.92, 4.0, 10.0,
            44.0, 100.0, -100.0]


def compiled(fn: str):
    return tvmlite.compile(IRModule({"main": from_source(KERNEL.replace("FN", fn))}), tir_pipeline="lower")


def run(fn: str, x: np.ndarray) -> np.ndarray:
    y = np.empty_like(x)
    compiled(fn)["main"](x.reshape(4096, 16), y.reshape(4096, 16))
    return y


@pytest.mark.parametrize("fn", ["tanh", "erf"])
def test_within_1e_6_relative_everywhere(fn: str) -> None:
    grid = np.concatenate([np.linspace(-6, 6, 41536), np.geomspace(1e-6, 12, 12000),
                           -np.geomspace(1e-6, 12, 12000)])
    x = np.concatenate([grid[:4096 * 16 - len(SPECIALS)], SPECIALS]).astype("float32")
    y = run(fn, x)
    ref = REFERENCE[fn]
    want = np.array([ref(float(v)) if not math.isnan(v) else math.nan for v in x])
    finite = ~np.isnan(want)
    rel = np.abs(y[finite].astype(np.float64) - want[finite]) / np.maximum(np.abs(want[finite]), 1e-38)
    assert rel.max() <= 1e-6, (fn, float(x[finite][rel.argmax()]), rel.max())
    tail = y[-len(SPECIALS):]
    np.testing.assert_array_equal(tail[:3], [1.0, -1.0, np.nan])
    assert math.copysign(1, tail[3]) == 1 and math.copysign(1, tail[4]) == -1 and tail[3] == 0 == tail[4]
    np.testing.assert_array_equal(tail[-4:], [1.0, 1.0, 1.0, -1.0])  # 1 in float32 (erf from 3.92 on, tanh from 9.01)
    assert np.all(np.abs(y[finite]) <= 1.0) and np.all(np.sign(y[finite]) == np.sign(x[finite]))


@pytest.mark.parametrize("fn", ["tanh", "erf"])
def test_no_libm_call_per_lane(fn: str) -> None:
    asm = compiled(fn).get_source("asm")
    assert f"{fn}f" not in asm and "call" not in asm


GELU = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 256), "float32")) -> R.Tuple(R.Tensor((64, 256), "float32"), R.Tensor((64, 256), "float32")):
        with R.dataflow():
            a = R.nn.gelu(x)
            b = R.nn.gelu_tanh(x)
            gv = (a, b)
            R.output(gv)
        return gv
'''


def test_gelu_and_gelu_tanh_compile_to_vector_code_and_match_the_formulas() -> None:
    ex = tvmlite.compile(from_source(GELU))
    asm = ex.get_source("asm")
    assert "erff" not in asm and "tanhf" not in asm
    x = np.random.default_rng(0).standard_normal((64, 256)).astype("float32") * 3
    a, b = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](x)
    xd = x.astype(np.float64)
    erf = np.vectorize(math.erf)(xd / math.sqrt(2))
    np.testing.assert_allclose(a.numpy(), 0.5 * xd * (1 + erf), rtol=2e-6, atol=1e-7)
    tanh = np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3))
    np.testing.assert_allclose(b.numpy(), 0.5 * xd * (1 + tanh), rtol=2e-6, atol=1e-7)
