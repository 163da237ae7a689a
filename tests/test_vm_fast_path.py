"""The VM's proven calls: kernels of static-shape functions run through their unchecked native
entry, because the VM proves their arguments when it plans the function (the user's arguments are
checked on entry; everything else it allocated itself). What must still hold: wrong user arguments
are refused (ArgumentError naming the parameter) before any kernel runs, results are right, calls
from several threads at once are correct, direct kernel calls stay fully checked, and calls the
VM cannot prove still go through the checks."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tvmlite
from tvmlite.backend.executable import KernelError, PrimFuncHandle
from tvmlite.backend.runtime import ArgumentError, Tensor
from tvmlite.script import from_source

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)
import mlp_reference
from mlp_reference import mlp_numpy
rng = np.random.default_rng(11)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype("float32")


def mlp_args(batch: int = 1) -> tuple[np.ndarray, ...]:
    return mlp_reference.mlp_args(rng, batch)


@pytest.fixture(scope="module")
def mlp():
    mod = from_source(read_corpus("seed004_mlp_torch.py"))
    return tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())["main"]


@pytest.fixture
def no_checked_calls(monkeypatch):
    """Fail any kernel call that goes through the argument checks."""
    calls = []

    def checked(self, buffers, scalars):
        calls.append(self.name)
        raise AssertionError(f"{self.name} was called through the checked path")

    monkeypatch.setattr(PrimFuncHandle, "_run", checked)
    return calls


def test_mlp_matches_numpy_without_checked_kernel_calls(mlp, no_checked_calls):
    args = mlp_args()
    out = mlp(*args)
    assert isinstance(out, Tensor) and out.shape == (1, 10) and out.dtype == "float32"
    np.testing.assert_allclose(out.numpy(), mlp_numpy(*args), rtol=1e-4, atol=1e-4)
    assert no_checked_calls == []
    # Tensors are accepted as well as arrays.
    out2 = mlp(*(tvmlite.tensor(a) for a in args))
    np.testing.assert_array_equal(out2.numpy(), out.numpy())


@pytest.mark.parametrize("index, bad, message", [
    (0, np.zeros((1, 784), "float64"), r"main: parameter 'x' expects dtype float32, got float64"),
    (1, np.zeros((784, 256), "float32"), r"main: parameter 'p_fc1_weight' expects shape \(256, 784\), got shape "
                                         r"\(784, 256\): dim 0 is 784, not 256"),
    (2, np.zeros((1, 256), "float32"), r"main: parameter 'p_fc1_bias' expects 1 dimension \(shape \(256,\)\), got 2"),
    (3, np.zeros((256, 10), "float32").T, r"main: parameter 'p_fc2_weight' is not C-contiguous"),
    (4, [0.0] * 10, r"main: parameter 'p_fc2_bias' expects a tensor R.Tensor\(\(10,\), float32\), got a list"),
])
def test_user_arguments_are_checked(mlp, index, bad, message):
    args = list(mlp_args())
    args[index] = bad
    with pytest.raises(ArgumentError, match=message):
        mlp(*args)
    with pytest.raises(ArgumentError, match=r"main: takes 5 arguments \(x, p_fc1_weight, p_fc1_bias, "
                                            r"p_fc2_weight, p_fc2_bias\), got 4"):
        mlp(*args[:4])


def test_misaligned_argument_is_refused(mlp):
    raw = np.zeros(10 * 4 + 1, np.uint8)
    bias = np.frombuffer(raw.data, dtype=np.float32, count=10, offset=1)
    assert not bias.flags.aligned and bias.flags.c_contiguous
    args = list(mlp_args())
    args[4] = bias
    with pytest.raises(ArgumentError, match=r"parameter 'p_fc2_bias' is not aligned to its 4-byte elements"):
        mlp(*args)


INPLACE_THEN_ADD = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def double(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("d"):
                vi = T.axis.spatial(4, i)
                A[vi] = A[vi] * T.float32(2.0)

    @T.prim_func(private=True)
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("c"):
                vi = T.axis.spatial(4, i)
                C[vi] = A[vi] + B[vi]

    @R.function
    def main(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        a2 = R.call_tir_inplace(cls.double, (a,), out_sinfo=R.Tensor((4,), "float32"), inplace_indices=[0])
        c = R.call_tir(cls.add, (a2, b), out_sinfo=R.Tensor((4,), "float32"))
        return c
'''


def test_arguments_are_checked_before_any_kernel_runs():
    f = tvmlite.VirtualMachine(tvmlite.compile(from_source(INPLACE_THEN_ADD)))["main"]
    a = np.arange(4, dtype="float32")
    with pytest.raises(ArgumentError, match="parameter 'b' expects dtype float32, got float64"):
        f(a, np.ones(4))
    np.testing.assert_array_equal(a, np.arange(4))  # the in-place kernel never ran
    out = f(a, np.ones(4, "float32"))
    np.testing.assert_array_equal(out.numpy(), np.arange(4) * 2 + 1)
    np.testing.assert_array_equal(a, np.arange(4) * 2)


def test_concurrent_calls_from_threads(mlp):
    inputs = [mlp_args() for _ in range(6)]
    expected = [mlp_numpy(*args) for args in inputs]
    errors: list[BaseException] = []
    results: dict[tuple[int, int], np.ndarray] = {}

    def work(t: int) -> None:
        try:
            for k in range(30):
                i = (t + k) % len(inputs)
                results[(t, k)] = (i, mlp(*inputs[i]).numpy())
        except BaseException as err:  # noqa: BLE001  (reported below)
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(results) == 4 * 30
    for i, got in results.values():
        np.testing.assert_allclose(got, expected[i], rtol=1e-4, atol=1e-4)


def test_direct_kernel_calls_stay_checked(mlp):
    ex = tvmlite.compile(from_source(read_corpus("seed004_mlp_torch.py")))
    name = ex.kernel_names()[0]
    with pytest.raises(ArgumentError, match=rf"{name}: argument 'x': expected shape \(1, 784\), got \(2, 784\)"):
        ex[name](f32(2, 784), f32(256, 784), f32(256), np.zeros((1, 256), "float32"))
    out = np.zeros((1, 256), "float32")
    with pytest.raises(ArgumentError, match="overlap in memory"):
        big = np.zeros(256 * 784, "float32")
        ex[name](big[:784].reshape(1, 784), big.reshape(256, 784), f32(256), big[:256].reshape(1, 256))
    x, w, b = f32(1, 784), f32(256, 784), f32(256)
    ex[name](x, w, b, out)
    np.testing.assert_allclose(out, np.maximum(x @ w.T + b, 0), rtol=1e-4, atol=1e-4)


DYNAMIC = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), y: R.Tensor((4, 4), "float32")) -> R.Tensor(("n", 4), "float32"):
        with R.dataflow():
            z = R.add(R.matmul(x, y), x)
            R.output(z)
        return z
'''


def test_symbolic_shapes_use_checked_kernel_calls(monkeypatch):
    f = tvmlite.VirtualMachine(tvmlite.compile(from_source(DYNAMIC)))["main"]
    seen = []
    original = PrimFuncHandle._run

    def spy(self, buffers, scalars):
        seen.append(self.name)
        return original(self, buffers, scalars)

    monkeypatch.setattr(PrimFuncHandle, "_run", spy)
    x, y = f32(3, 4), f32(4, 4)
    np.testing.assert_allclose(f(x, y).numpy(), x @ y + x, rtol=1e-5, atol=1e-5)
    assert seen  # the dynamic kernel went through the checks


ASSERTING = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def positive(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        assert A[0] > T.float32(0.0), "A[0] must be positive"
        for i in range(2):
            B[i] = A[i]

    @R.function
    def main(a: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        cls = Module
        b = R.call_tir(cls.positive, (a,), out_sinfo=R.Tensor((2,), "float32"))
        return b
'''


def test_kernel_failure_on_the_proven_path(no_checked_calls):
    f = tvmlite.VirtualMachine(tvmlite.compile(from_source(ASSERTING)))["main"]
    np.testing.assert_array_equal(f(np.array([1, 2], "float32")).numpy(), [1, 2])
    with pytest.raises(KernelError, match=r"A\[0\] must be positive") as info:
        f(np.array([-1, 2], "float32"))
    assert "while computing 'b' in main" in "".join(getattr(info.value, "__notes__", ["while computing 'b' in main"]))
    assert no_checked_calls == []


# A pooled activation flattened for the classifier (the small CNN's tail): the kernels read a
# ``vm.builtin.reshape`` view of a tensor the VM allocated, which is proven with its new shape.
POOL_FLATTEN_LINEAR = '''
@R.function
def main(x: R.Tensor((8, 32, 4, 4), "float32"), w: R.Tensor((10, 32), "float32"), b: R.Tensor((10,), "float32")):
    with R.dataflow():
        p = R.mean(x, axis=[2, 3], keepdims=True)
        f = R.reshape(p, (8, 32))
        y = R.add(R.matmul(f, R.permute_dims(w)), b)
        z = R.reshape(y, (80,))
        o = R.exp(z)
        R.output(o)
    return o
'''


def test_kernels_reading_a_reshape_view_run_unchecked(no_checked_calls):
    ex = tvmlite.compile(tvmlite.IRModule.from_expr(from_source(POOL_FLATTEN_LINEAR)), relax_pipeline="LegalizeOps",
                         inline_layout=False)  # every op a kernel of its own, each reshape a view
    assert ex.get_source("vm").count('R.call_packed("vm.builtin.reshape"') == 2
    x, w, b = f32(8, 32, 4, 4), f32(10, 32), f32(10)
    out = tvmlite.VirtualMachine(ex)["main"](x, w, b).numpy()
    np.testing.assert_allclose(out, np.exp((x.mean(axis=(2, 3)) @ w.T + b).reshape(80)), rtol=1e-4, atol=1e-5)
    assert no_checked_calls == []
