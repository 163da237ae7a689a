"""Vector float32 ``T.exp`` (backend/llvm/vector_math.py): inline straight-line code instead of one
libm call per lane, within 2 ulp of the correctly rounded result, inf, 0 and NaN where libm gives them."""
from __future__ import annotations

import numpy as np

import tvmlite
from tvmlite.ir.module import IRModule
from tvmlite.script import from_source
from test_vector_math import KERNEL

VECTOR_EXP = KERNEL.replace("T.FN", "T.exp")  # the elementwise kernel of test_vector_math


def compiled():
    return tvmlite.compile(IRModule({"main": from_source(VECTOR_EXP)}), tir_pipeline="lower")


def test_vector_exp_is_within_two_ulp_everywhere() -> None:
    specials = [np.inf, -np.inf, np.nan, 0.0, -0.0, 88.72, 88.73, -87.3, -103.5, -104.5, 1e-8, -1e-8]
    x = np.concatenate([np.linspace(-110, 95, 4096 * 16 - len(specials)), specials]).astype("float32")
    y = np.empty_like(x)
    compiled()["main"](x.reshape(4096, 16), y.reshape(4096, 16))
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32)  # correctly rounded but for double rounding
    normal = np.isfinite(want) & (want >= np.finfo(np.float32).tiny)
    ulps = np.abs(y[normal].astype(np.float64) - want[normal]) / np.spacing(want[normal])
    assert ulps.max() <= 2
    assert np.abs(y[want < np.finfo(np.float32).tiny] - want[want < np.finfo(np.float32).tiny]).max() <= 2e-45
    np.testing.assert_array_equal(y[-len(specials):][:5], [np.inf, 0.0, np.nan, 1.0, 1.0])
    assert np.isinf(y[-len(specials) + 6]) and y[-len(specials) + 9] == 0.0


def test_vector_exp_calls_no_libm() -> None:
    asm = compiled().get_source("asm")
    assert "expf" not in asm and "call" not in asm
