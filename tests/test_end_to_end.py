"""End to end, from script text to numbers: seed 004's flow (the MLP imported from PyTorch,
LegalizeOps, the zero pipeline, ``tvmlite.compile``, ``VirtualMachine``, ``vm["main"](data,
*params)``) and seed 001's MLP with a symbolic batch at several batch sizes, each against numpy's
MLP. Kernels run as LLVM code (``tvmlite.compile``) and on the TIR reference interpreter."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from typing import Any, Callable

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.compile import VMExecutable
from tvmlite.backend.vm import ArgumentError
from tvmlite.ir import tir
from tvmlite.ir.module import IRModule
from tvmlite.script import from_source

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)


def _interpreter_build(mod: IRModule, relax_pipeline: str = "zero") -> VMExecutable:
    """What ``tvmlite.compile`` does, with the TIR reference interpreter running the kernels."""
    from tvmlite.backend.interpreter import InterpreterExecutor

    mod = P.get_pipeline(relax_pipeline)(mod)
    prims = IRModule({gv: f for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)})
    lowered = P.get_pipeline("lower")(prims)
    return VMExecutable(mod, InterpreterExecutor(lowered), "interpreter", lowered)


def _llvm_build(mod: IRModule, relax_pipeline: str = "zero") -> Any:
    return tvmlite.compile(mod, target="llvm", relax_pipeline=relax_pipeline)


def _have(module: str) -> bool:
    return importlib.util.find_spec(f"tvmlite.backend.{module}") is not None


BUILDS = [
    pytest.param(_llvm_build, id="llvm",
                 marks=pytest.mark.skipif(not _have("executable"), reason="backend.executable not there yet")),
    pytest.param(_interpreter_build, id="interpreter",
                 marks=pytest.mark.skipif(not _have("interpreter"), reason="backend.interpreter not there yet")),
]


def mlp(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """numpy's MLP: Linear, ReLU, Linear (float64 accumulation, so it is the better answer)."""
    x, w1, b1, w2, b2 = (a.astype("float64") for a in (x, w1, b1, w2, b2))
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


def params_for(hidden: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Weights as torch's nn.Linear initialises them (uniform in +-1/sqrt(fan_in))."""
    def uniform(fan_in: int, *shape: int) -> np.ndarray:
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype("float32")

    return [uniform(784, hidden, 784), uniform(784, hidden), uniform(hidden, 10, hidden), uniform(hidden, 10)]


# ---------------------------------------------------------------- seed 004
@pytest.fixture(scope="module", params=BUILDS)
def seed004_vm(request: pytest.FixtureRequest) -> tvmlite.VirtualMachine:
    """Seed 004 from the script text: LegalizeOps, the zero pipeline, compile, VirtualMachine."""
    mod = from_source(read_corpus("seed004_mlp_torch.py"))
    mod = P.LegalizeOps()(mod)
    mod = P.get_pipeline("zero")(mod)
    ex = request.param(mod)
    return tvmlite.VirtualMachine(ex, tvmlite.cpu())


def test_seed004_flow(seed004_vm: tvmlite.VirtualMachine) -> None:
    rng = np.random.default_rng(4)
    params = params_for(256, rng)
    raw_data = np.random.default_rng(0).random((1, 784), dtype="float32")
    data = tvmlite.runtime.tensor(raw_data, tvmlite.cpu())
    cpu_out = seed004_vm["main"](data, *params).numpy()
    assert cpu_out.shape == (1, 10) and cpu_out.dtype == np.float32
    np.testing.assert_allclose(cpu_out, mlp(raw_data, *params), rtol=1e-5, atol=1e-5)


def test_seed004_refuses_bad_arguments(seed004_vm: tvmlite.VirtualMachine) -> None:
    params = params_for(256, np.random.default_rng(1))
    with pytest.raises(ArgumentError, match=r"parameter 'x' expects shape \(1, 784\), got shape \(2, 784\)"):
        seed004_vm["main"](np.zeros((2, 784), "float32"), *params)
    with pytest.raises(ArgumentError, match=r"parameter 'p_fc2_bias' expects dtype float32, got float64"):
        seed004_vm["main"](np.zeros((1, 784), "float32"), *params[:3], params[3].astype("float64"))


@pytest.mark.parametrize("build", BUILDS)
def test_seed004_compile_runs_the_graph_pipeline(build: Callable[..., Any]) -> None:
    """The module as imported (not legalized) compiles too: compile runs the zero pipeline."""
    mod = from_source(read_corpus("seed004_mlp_torch.py"))
    vm = tvmlite.VirtualMachine(build(mod))
    params = params_for(256, np.random.default_rng(2))
    x = np.random.default_rng(3).standard_normal((1, 784)).astype("float32")
    np.testing.assert_allclose(vm["main"](x, *params).numpy(), mlp(x, *params), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- seed 001 (symbolic batch)
@pytest.fixture(scope="module", params=BUILDS)
def seed001_vm(request: pytest.FixtureRequest) -> tvmlite.VirtualMachine:
    """Seed 001's MLP with batch ``n``, through the default pipeline."""
    mod = from_source(read_corpus("seed001_mlp_dynamic.py"))
    return tvmlite.VirtualMachine(request.param(mod, "default"), tvmlite.cpu())


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_seed001_symbolic_batch(seed001_vm: tvmlite.VirtualMachine, batch: int) -> None:
    rng = np.random.default_rng(batch)
    params = params_for(128, rng)
    x = rng.standard_normal((batch, 784)).astype("float32")
    out = seed001_vm["forward"](x, *params)
    assert out.shape == (batch, 10)
    np.testing.assert_allclose(out.numpy(), mlp(x, *params), rtol=1e-5, atol=1e-5)


def test_seed001_refuses_inconsistent_arguments(seed001_vm: tvmlite.VirtualMachine) -> None:
    params = params_for(128, np.random.default_rng(0))
    with pytest.raises(ArgumentError, match=r"forward: parameter 'x' expects shape \(n, 784\), got shape "
                                            r"\(3, 783\): dim 1 is 783, not 784"):
        seed001_vm["forward"](np.zeros((3, 783), "float32"), *params)
    with pytest.raises(ArgumentError, match=r"forward: takes 5 arguments"):
        seed001_vm["forward"](np.zeros((3, 784), "float32"))


def test_build_is_compile() -> None:
    assert tvmlite.build is tvmlite.compile


# ---------------------------------------------------------------- tvmlite.compile
ADD_PRIM = '''
@T.prim_func
def add(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("c"):
            vi = T.axis.spatial(4, i)
            c[vi] = a[vi] + b[vi]
'''

WITH_DROPOUT = '''
@R.function
def main(x: R.Tensor((2, 3), "float32")):
    with R.dataflow():
        lv = R.nn.dropout(x)
        gv = R.nn.relu(lv[0])
        R.output(gv)
    return gv
'''


@pytest.mark.skipif(not _have("executable"), reason="backend.executable not there yet")
def test_compile_a_prim_func_and_call_it_directly() -> None:
    ex = tvmlite.compile(from_source(ADD_PRIM))
    a, b, c = np.arange(4, dtype="float32"), np.ones(4, "float32"), np.zeros(4, "float32")
    ex["add"](a, b, c)
    np.testing.assert_array_equal(c, a + 1)
    assert "add" in ex and ex.kernel_names() == ["add"]
    assert "define" in ex.get_source("ll") and "c[0:4] = a[0:4] + b[0:4]" in ex.get_source("tir")  # vectorized by the default schedule
    assert ex.get_source("asm")
    with pytest.raises(ValueError, match="c"):
        ex["add"](a, b, np.zeros(5, "float32"))  # the kernel's own checks refuse it before it runs


@pytest.mark.parametrize("build", BUILDS)
def test_default_pipeline_removes_dropout(build: Callable[..., Any]) -> None:
    """``default`` runs SimplifyInference, so dropout (which has no legalization) is gone."""
    mod = IRModule.from_expr(from_source(WITH_DROPOUT))
    vm = tvmlite.VirtualMachine(build(mod, "default"))
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    np.testing.assert_array_equal(vm["main"](x).numpy(), np.maximum(x, 0))


def test_compile_pipelines_and_inputs() -> None:
    mod = IRModule.from_expr(from_source(WITH_DROPOUT))
    with pytest.raises(Exception, match=r"R.nn.dropout cannot run on the VM"):
        tvmlite.VirtualMachine(tvmlite.compile(mod))  # zero keeps dropout
    text = tvmlite.compile(mod, relax_pipeline="SimplifyInference,zero").get_source("relax")
    assert "dropout" not in text and "R.call_tir" in text
    kept = tvmlite.compile(P.LegalizeOps()(from_source(read_corpus("seed004_mlp_torch.py"))),
                           relax_pipeline=None)
    assert "fused" not in kept.get_source("relax")  # None: the module as given
    with pytest.raises(TypeError, match="compile takes an IRModule"):
        tvmlite.compile("not a module")
    with pytest.raises(TypeError, match="a pipeline is a name"):
        tvmlite.compile(mod, relax_pipeline=3)


def test_import_tvmlite_stays_light() -> None:
    """``import tvmlite`` loads neither the backend nor llvmlite; the runtime names load on first use."""
    code = ("import sys, tvmlite\n"
            "assert 'tvmlite.backend' not in sys.modules and 'llvmlite' not in sys.modules\n"
            "tvmlite.VirtualMachine, tvmlite.cpu(), tvmlite.runtime.tensor([1.0]), tvmlite.register_func\n"
            "tvmlite.get_func, tvmlite.tensor, tvmlite.compile, tvmlite.build\n"
            "from tvmlite import runtime\n"
            "assert runtime is sys.modules['tvmlite.backend.runtime']\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd="/")
