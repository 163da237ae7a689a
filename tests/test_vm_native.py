"""The native runner of static VM plans (backend/vm_native.py): a function whose steps are all
static storages, placements, proven kernel calls, kills and reshape views runs as one native call.
What must hold: it is used for static models, its numbers equal the step path's (bit for bit: the
same kernels on the same data) and numpy's, wrong arguments are refused before any native code
runs, a failing kernel raises what the step path raises, calls from threads are correct, results of
successive calls are independent, and everything else keeps the step path."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tvmlite
from tvmlite.backend.compile import VMExecutable
from tvmlite.backend.executable import KernelError, PrimFuncHandle
from tvmlite.backend.interpreter import InterpreterExecutor
from tvmlite.backend.runtime import ArgumentError, Tensor, register_func
from tvmlite.script import from_source

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)
import mlp_reference
from mlp_reference import mlp_numpy

rng = np.random.default_rng(5)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype("float32")


def mlp_args(batch: int = 1) -> tuple[np.ndarray, ...]:
    return mlp_reference.mlp_args(rng, batch)


def vm_pair(ex, monkeypatch, name: str = "main"):
    """The function on the native runner and on the step path (TVMLITE_VM_NATIVE=0)."""
    native = tvmlite.VirtualMachine(ex)[name]
    monkeypatch.setenv("TVMLITE_VM_NATIVE", "0")
    steps = tvmlite.VirtualMachine(ex)[name]
    monkeypatch.delenv("TVMLITE_VM_NATIVE")
    assert (native.runner, steps.runner) == ("native", "steps")
    return native, steps


@pytest.fixture(scope="module")
def mlp_ex():
    return tvmlite.compile(from_source(read_corpus("seed004_mlp_torch.py")))


@pytest.fixture
def no_checked_calls(monkeypatch):
    """Fail any kernel call that goes through the argument checks."""
    def checked(self, buffers, scalars):
        raise AssertionError(f"{self.name} was called through the checked path")

    monkeypatch.setattr(PrimFuncHandle, "_run", checked)


def test_static_mlp_runs_natively(mlp_ex, monkeypatch, no_checked_calls):
    native, steps = vm_pair(mlp_ex, monkeypatch)
    runner = native._plan.native
    assert not runner.compiled  # compiled on the first call, not when the VM is built
    args = mlp_args()
    out = native(*args)
    assert runner.compiled and native.runner == "native"
    assert isinstance(out, Tensor) and out.shape == (1, 10) and out.dtype == "float32"
    np.testing.assert_allclose(out.numpy(), mlp_numpy(*args), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(out.numpy(), steps(*args).numpy())
    # One workspace for the hidden layer's storage (1 x 256 float32), the result in its own storage.
    assert (runner.ws_bytes, runner.out_sizes) == (1024, [40])
    assert runner.text.count(" = call i32 ") == 2  # one native call per kernel
    # Tensors are accepted as well as arrays; results of successive calls are independent.
    other = mlp_args()
    out2 = native(*(tvmlite.tensor(a) for a in other))
    np.testing.assert_array_equal(out.numpy(), steps(*args).numpy())
    np.testing.assert_allclose(out2.numpy(), mlp_numpy(*other), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("index, bad, message", [
    (0, np.zeros((1, 784), "float64"), r"main: parameter 'x' expects dtype float32, got float64"),
    (1, np.zeros((784, 256), "float32"), r"main: parameter 'p_fc1_weight' expects shape \(256, 784\), got shape "
                                         r"\(784, 256\): dim 0 is 784, not 256"),
    (3, np.zeros((256, 10), "float32").T, r"main: parameter 'p_fc2_weight' is not C-contiguous"),
    (4, [0.0] * 10, r"main: parameter 'p_fc2_bias' expects a tensor R.Tensor\(\(10,\), float32\), got a list"),
])
def test_wrong_arguments_are_refused_before_native_code_runs(mlp_ex, index, bad, message):
    f = tvmlite.VirtualMachine(mlp_ex)["main"]
    args = list(mlp_args())
    args[index] = bad
    with pytest.raises(ArgumentError, match=message):
        f(*args)
    assert f.runner == "native" and not f._plan.native.compiled  # nothing native was even made
    with pytest.raises(ArgumentError, match=r"main: takes 5 arguments \(x, p_fc1_weight, p_fc1_bias, "
                                            r"p_fc2_weight, p_fc2_bias\), got 4"):
        f(*args[:4])
    raw = np.zeros(10 * 4 + 1, np.uint8)
    args = list(mlp_args())
    args[4] = np.frombuffer(raw.data, dtype=np.float32, count=10, offset=1)
    with pytest.raises(ArgumentError, match=r"parameter 'p_fc2_bias' is not aligned to its 4-byte elements"):
        f(*args)


# Two kernels, the second asserting on the first's output: the failure names its own step.
ASSERT_SECOND = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def negate(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        for i in range(2):
            B[i] = T.float32(0.0) - A[i]

    @T.prim_func(private=True)
    def positive(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        assert A[0] > T.float32(0.0), "A[0] must be positive"
        for i in range(2):
            B[i] = A[i] * T.float32(2.0)

    @R.function
    def main(a: R.Tensor((2,), "float32")):
        cls = Module
        n = R.call_tir(cls.negate, (a,), out_sinfo=R.Tensor((2,), "float32"))
        b = R.call_tir(cls.positive, (n,), out_sinfo=R.Tensor((2,), "float32"))
        return b
'''


@pytest.mark.parametrize("result", ["b", "(n, b)"])
def test_failing_kernel_raises_what_the_step_path_raises(monkeypatch, no_checked_calls, result):
    text = ASSERT_SECOND.replace("return b", f"return {result}")
    native, steps = vm_pair(tvmlite.compile(from_source(text)), monkeypatch)
    out = native(np.array([-1, 2], "float32"))
    np.testing.assert_array_equal((out if result == "b" else out[1]).numpy(), [2, -4])
    errors = []
    for f in (native, steps):
        with pytest.raises(KernelError) as info:
            f(np.array([1, 2], "float32"))
        errors.append((str(info.value), info.value.__notes__))
    assert errors[0] == errors[1] == ("positive: assertion failed: A[0] must be positive",
                                      ["  while computing 'b' in main"])
    assert native.runner == "native" and native._plan.native.compiled


def test_concurrent_calls_from_threads(mlp_ex):
    f = tvmlite.VirtualMachine(mlp_ex)["main"]
    inputs = [mlp_args() for _ in range(6)]
    expected = [mlp_numpy(*args) for args in inputs]
    errors: list[BaseException] = []
    results: dict[tuple[int, int], tuple[int, np.ndarray]] = {}
    start = threading.Barrier(4)

    def work(t: int) -> None:
        try:
            start.wait()  # the first calls race for the runner's compilation too
            for k in range(30):
                i = (t + k) % len(inputs)
                results[(t, k)] = (i, f(*inputs[i]).numpy())
        except BaseException as err:  # noqa: BLE001  (reported below)
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and f.runner == "native"
    assert len(results) == 4 * 30
    for i, got in results.values():
        np.testing.assert_allclose(got, expected[i], rtol=1e-4, atol=1e-4)


# The small CNN's tail: storages reused for later tensors, kernels reading reshape views, a result
# that is a tuple of two placed tensors (each in a storage of its own) and a parameter.
POOL_FLATTEN_LINEAR = '''
@R.function
def main(x: R.Tensor((8, 32, 4, 4), "float32"), w: R.Tensor((10, 32), "float32"), b: R.Tensor((10,), "float32")):
    with R.dataflow():
        r = R.nn.relu(x)
        p = R.mean(r, axis=[2, 3], keepdims=True)
        f = R.reshape(p, (8, 32))
        y = R.add(R.matmul(f, R.permute_dims(w)), b)
        z = R.reshape(y, (80,))
        o = R.exp(z)
        v = R.reshape(o, (8, 10))
        R.output(o, v)
    return (o, v, b)
'''


def test_storages_views_and_tuple_results(monkeypatch, no_checked_calls):
    ex = tvmlite.compile(tvmlite.IRModule.from_expr(from_source(POOL_FLATTEN_LINEAR)), relax_pipeline="LegalizeOps",
                         inline_layout=False)  # every op a kernel of its own, each reshape a view
    text = ex.get_source("vm")
    assert text.count('R.call_packed("vm.builtin.reshape"') == 2  # the result's reshape is a copy
    native, steps = vm_pair(ex, monkeypatch)
    x, w, b = f32(8, 32, 4, 4), f32(10, 32), f32(10)
    o, v, b_out = native(x, w, b)
    want = np.exp((np.maximum(x, 0).mean(axis=(2, 3)) @ w.T + b).reshape(80))
    np.testing.assert_allclose(o.numpy(), want, rtol=1e-4, atol=1e-5)
    assert v.shape == (8, 10)
    np.testing.assert_array_equal(v.numpy(), o.numpy().reshape(8, 10))
    np.testing.assert_array_equal(b_out.numpy(), b)
    for got, expected in zip((o, v, b_out), steps(x, w, b)):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    runner = native._plan.native
    assert runner.text.count(" = call i32 ") == 7 and runner.out_sizes == [320, 320]
    assert runner.ws_bytes == 16384 + 1024 + 320  # the three storages the plan reuses, one after the other


def test_graph_level_calls_run_natively_too(monkeypatch, no_checked_calls, mlp_ex):
    ex = tvmlite.compile(from_source(read_corpus("seed004_mlp_torch.py")), vm_pipeline=None)
    native, steps = vm_pair(ex, monkeypatch)
    args = mlp_args()
    np.testing.assert_array_equal(native(*args).numpy(), steps(*args).numpy())
    np.testing.assert_allclose(native(*args).numpy(), mlp_numpy(*args), rtol=1e-4, atol=1e-4)


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

BRANCH = '''
@I.ir_module
class Module:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        if c:
            y = R.exp(x)
        else:
            y = R.negative(x)
        return y
'''

CLOSURE = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        @R.function
        def inner(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            z = R.exp(y)
            return z
        w = inner(x)
        return w
'''


PACKED_BETWEEN = '''
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.exp(x)
        z = R.call_packed("test_vm_native.double", y, sinfo_args=(R.Tensor((4,), "float32"),))
        w = R.exp(z)
        return w
'''


@register_func("test_vm_native.double", override=True)
def _double(x: Tensor) -> np.ndarray:
    return x.numpy() * np.float32(2)


@pytest.mark.parametrize("text, args, want", [
    (DYNAMIC, (np.ones((3, 4), "float32"), np.eye(4, dtype="float32")), lambda x, y: x @ y + x),
    (BRANCH, (np.array(True), np.arange(4, dtype="float32")), lambda c, x: np.exp(x)),
    (BRANCH, (np.array(False), np.arange(4, dtype="float32")), lambda c, x: -x),
    (CLOSURE, (np.arange(4, dtype="float32"),), np.exp),
    (PACKED_BETWEEN, (np.arange(4, dtype="float32") / 4,), lambda x: np.exp(2 * np.exp(x))),
], ids=["symbolic", "if-then", "if-else", "closure", "packed call"])
def test_other_functions_keep_the_step_path(text, args, want):
    f = tvmlite.VirtualMachine(tvmlite.compile(from_source(text)))["main"]
    assert f.runner == "steps"
    np.testing.assert_allclose(f(*args).numpy(), want(*args), rtol=1e-5, atol=1e-5)


def test_memory_tracking_and_the_interpreter_keep_the_step_path(mlp_ex):
    args = mlp_args()
    tracked = tvmlite.VirtualMachine(mlp_ex, track_memory=True)
    assert tracked["main"].runner == "steps"
    assert tracked.peak_bytes("main", *args) == 1024 + 40  # both storages, as planned
    mod = mlp_ex.mod
    interpreted = tvmlite.VirtualMachine(VMExecutable(mod, InterpreterExecutor(mlp_ex.lowered), vm_mod=mlp_ex.vm_mod))
    assert interpreted["main"].runner == "steps"
    np.testing.assert_allclose(interpreted["main"](*args).numpy(), mlp_numpy(*args), rtol=1e-4, atol=1e-4)


# A kernel with two outputs bound as a tuple, its fields read back, the tuple inside the result.
SPLIT = '''
@R.function
def main(x: R.Tensor((4, 6), "float32")):
    with R.dataflow():
        s = R.split(x, 2, axis=1)
        a = s[0]
        b = s[1]
        c = R.add(a, b)
        R.output(c, s)
    return (c, s)
'''


def test_tuples_of_placed_tensors(monkeypatch, no_checked_calls):
    ex = tvmlite.compile(tvmlite.IRModule.from_expr(from_source(SPLIT)))
    assert "s: R.Tuple(R.Tensor((4, 3), dtype=\"float32\"), R.Tensor((4, 3), dtype=\"float32\")) = alloc, alloc1" \
        in ex.get_source("vm")
    native, steps = vm_pair(ex, monkeypatch)
    x = f32(4, 6)
    c, (a, b) = native(x)
    np.testing.assert_array_equal(a.numpy(), x[:, :3])
    np.testing.assert_array_equal(b.numpy(), x[:, 3:])
    np.testing.assert_allclose(c.numpy(), x[:, :3] + x[:, 3:], rtol=1e-6)
    c2, (a2, b2) = steps(x)
    assert [t.numpy().tolist() for t in (c, a, b)] == [t.numpy().tolist() for t in (c2, a2, b2)]
    assert native._plan.native.out_sizes == [48, 48, 48]  # every result tensor in a storage of its own


def test_a_runner_that_cannot_be_compiled_falls_back_to_the_steps(mlp_ex, monkeypatch, no_checked_calls):
    from tvmlite.backend.vm_native import NativeRunner

    def broken(self):
        raise RuntimeError("no JIT today")

    monkeypatch.setattr(NativeRunner, "_compile", broken)
    f = tvmlite.VirtualMachine(mlp_ex)["main"]
    assert f.runner == "native"
    args = mlp_args()
    for _ in range(2):  # the first call (which tried) and the next ones run the proven steps
        np.testing.assert_allclose(f(*args).numpy(), mlp_numpy(*args), rtol=1e-4, atol=1e-4)
    assert f.runner == "steps" and f._plan.native.error == "RuntimeError: no JIT today"


CALLS_A_STATIC_HELPER = '''
@I.ir_module
class Module:
    @R.function
    def helper(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):
        y = R.exp(x)
        return y

    @R.function
    def main(x: R.Tensor((3,), "float32"), c: R.Tensor((), "bool")) -> R.Tensor((3,), "float32"):
        cls = Module
        if c:
            r = cls.helper(x)
        else:
            r = x
        return r
'''


def test_a_static_function_called_by_another(no_checked_calls):
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(CALLS_A_STATIC_HELPER)))
    assert (vm["main"].runner, vm["helper"].runner) == ("steps", "native")
    x = np.array([0, 1, 2], "float32")
    np.testing.assert_allclose(vm["main"](x, np.array(True)).numpy(), np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(vm["main"](x, np.array(False)).numpy(), x)
    np.testing.assert_allclose(vm["helper"](x).numpy(), np.exp(x), rtol=1e-6)


def test_kernel_entries_wrapped_in_python_keep_the_step_path(mlp_ex, monkeypatch):
    """A profiler that wraps each proven entry in Python still sees every kernel call."""
    seen = []
    original = PrimFuncHandle.static_entry

    def wrapped(self, *args):
        found = original(self, *args)
        if found is None:
            return None
        cfunc, extra = found

        def timed(*a):
            seen.append(self.name)
            return cfunc(*a)

        return timed, extra

    monkeypatch.setattr(PrimFuncHandle, "static_entry", wrapped)
    f = tvmlite.VirtualMachine(mlp_ex)["main"]
    assert f.runner == "steps"
    args = mlp_args()
    np.testing.assert_allclose(f(*args).numpy(), mlp_numpy(*args), rtol=1e-4, atol=1e-4)
    assert len(seen) == 2


def test_the_function_keeps_its_kernels_alive():
    import gc

    f = tvmlite.VirtualMachine(tvmlite.compile(from_source(read_corpus("seed004_mlp_torch.py"))))["main"]
    gc.collect()  # the VM and the executable are only reachable through the function now
    args = mlp_args()
    np.testing.assert_allclose(f(*args).numpy(), mlp_numpy(*args), rtol=1e-4, atol=1e-4)
    assert f.runner == "native"
