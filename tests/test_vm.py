"""The Relax VM (``backend/vm.py``) and the runtime objects (``backend/runtime.py``): every Relax
construct it runs (dataflow blocks, call_tir with static and symbolic shapes, tuple outputs,
tir_vars, call_tir_inplace, tuples, match_cast, if/else, calls between functions, nested
functions, constants, shapes and prim values, packed functions, R.print, R.assert_op), what it
refuses when it is built (un-legalized ops, unknown kernels) and the argument checks of
``vm["f"](...)`` (count, kind, dtype, rank, shape, symbolic consistency, C-contiguity).

Kernels run on each available executor: a small in-place adapter of ``te.evaluate`` (always), the
TIR reference interpreter and the LLVM executable (once they are in the tree)."""
from __future__ import annotations

import importlib.util
from typing import Any, Callable

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.compile import VMExecutable
from tvmlite.backend.runtime import Tensor, cpu, get_func, register_func, tensor
from tvmlite.backend.vm import ArgumentError, MatchCastError, VirtualMachine, VMError
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.module import IRModule
from tvmlite.script import from_source

rng = np.random.default_rng(5)


# ---------------------------------------------------------------- executors
class _TEExecutor:
    """The kernel executor interface over ``te.evaluate``'s machine, writing into the given
    arrays (test-only: ``evaluate_prim_func`` allocates its own outputs)."""

    def __init__(self, mod: IRModule) -> None:
        self.funcs = {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)}

    def call(self, name: str, arrays: list[np.ndarray], scalars: tuple = ()) -> None:
        from tvmlite.te.evaluate import _bind_shape, _Machine

        func = self.funcs[name]
        env: dict[int, Any] = {}
        buffers: dict[int, np.ndarray] = {}
        scalar_params = [p for p in func.params if p not in func.buffer_map]
        for p, v in zip(scalar_params, scalars):
            env[id(p)] = np.array(v, dtype=p.dtype)
        for p, a in zip([p for p in func.params if p in func.buffer_map], arrays):
            buf = func.buffer_map[p]
            _bind_shape(buf.shape, a.shape, env, buf.name)
            buffers[id(buf)] = a
        _Machine(buffers, env).run(func.body, env)


def _te(mod: IRModule) -> VMExecutable:
    return VMExecutable(mod, _TEExecutor(mod))


def _interpreter(mod: IRModule) -> VMExecutable:
    from tvmlite.backend.interpreter import InterpreterExecutor

    return VMExecutable(mod, InterpreterExecutor(mod))


def _llvm(mod: IRModule) -> VMExecutable:
    return tvmlite.compile(mod, relax_pipeline=None)


def _have(module: str) -> bool:
    return importlib.util.find_spec(f"tvmlite.backend.{module}") is not None


EXECUTORS = [
    pytest.param(_te, id="te"),
    pytest.param(_interpreter, id="interpreter",
                 marks=pytest.mark.skipif(not _have("interpreter"), reason="backend.interpreter not there yet")),
    pytest.param(_llvm, id="llvm",
                 marks=pytest.mark.skipif(not _have("executable"), reason="backend.executable not there yet")),
]


@pytest.fixture(params=EXECUTORS)
def make_vm(request: pytest.FixtureRequest) -> Callable[[Any], VirtualMachine]:
    """Build a VM for a module (text or IRModule) on one executor."""
    def make(mod: Any, **extra: Any) -> VirtualMachine:
        return VirtualMachine(request.param(module_of(mod, **extra)), cpu())

    return make


def vm_te(mod: Any, **extra: Any) -> VirtualMachine:
    """A VM on the te adapter (for tests about the VM itself, not the kernels)."""
    return VirtualMachine(_te(module_of(mod, **extra)))


def module_of(mod: Any, **extra: Any) -> IRModule:
    """A module from script text (a lone function becomes ``main``) or the module itself."""
    if not isinstance(mod, str):
        return mod
    parsed = from_source(mod, extra_vars=extra)
    return parsed if isinstance(parsed, IRModule) else IRModule.from_expr(parsed)


def legalized(text: str, **extra: Any) -> IRModule:
    """The module of ``text`` after LegalizeOps."""
    return P.LegalizeOps()(module_of(text, **extra))


def rand(*shape: int, dtype: str = "float32") -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- modules
ADD = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(a: T.Buffer((2, 3), "float32"), b: T.Buffer((2, 3), "float32"), c: T.Buffer((2, 3), "float32")):
        for i, j in T.grid(2, 3):
            with T.block("c"):
                vi, vj = T.axis.remap("SS", [i, j])
                c[vi, vj] = a[vi, vj] + b[vi, vj]

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((2, 3), "float32"))
            gv = R.call_tir(cls.add, (lv, x), out_sinfo=R.Tensor((2, 3), "float32"))
            R.output(gv)
        return gv
'''

# A symbolic batch: ``n`` comes from x's shape; w's first dim must agree with x's second.
DYNAMIC = '''
@R.function
def main(x: R.Tensor(("n", "k"), "float32"), w: R.Tensor(("k", 4), "float32"), b: R.Tensor((4,), "float32")):
    n = T.int64()
    with R.dataflow():
        lv = R.matmul(x, w)
        gv = R.nn.relu(R.add(lv, b))
        R.output(gv)
    return gv
'''

# Tuple outputs, tir_vars and an in-place kernel.
KERNELS = '''
@I.ir_module
class Module:
    @T.prim_func
    def split_scale(a: T.handle, lo: T.handle, hi: T.handle, m: T.int64):
        n2 = T.int64()
        n = T.int64()
        A = T.match_buffer(a, (n2,), "float32")
        Lo = T.match_buffer(lo, (n,), "float32")
        Hi = T.match_buffer(hi, (n,), "float32")
        for i in range(n):
            with T.block("s"):
                vi = T.axis.spatial(n, i)
                Lo[vi] = A[vi] * T.Cast("float32", m)
                Hi[vi] = A[vi + n] * T.Cast("float32", m)

    @T.prim_func
    def accumulate(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("acc"):
                vi = T.axis.spatial(4, i)
                a[vi] = a[vi] + b[vi]
                c[vi] = a[vi] * T.float32(2)

    @R.function
    def split(x: R.Tensor(("n2",), "float32"), half: R.Prim("int64")):
        n2 = T.int64()
        n = T.int64()
        h = R.match_cast(half, R.Prim(value=n))
        y = R.match_cast(x, R.Tensor((n * 2,), "float32"))
        parts = R.call_tir(Module.split_scale, (y,), out_sinfo=[R.Tensor((n,), "float32"), R.Tensor((n,), "float32")],
                           tir_vars=R.shape([3]))
        return (parts[1], parts[0], R.shape([n, n2]), R.prim_value(n + 1))

    @R.function
    def inplace(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        both = R.call_tir_inplace(Module.accumulate, (x, y), inplace_indices=[0, -1],
                                  out_sinfo=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        return both
'''


# ---------------------------------------------------------------- running
def test_dataflow_call_tir_static(make_vm: Callable) -> None:
    vm = make_vm(ADD)
    x, y = rand(2, 3), rand(2, 3)
    out = vm["main"](x, y)
    assert isinstance(out, Tensor) and out.shape == (2, 3) and out.dtype == "float32"
    np.testing.assert_allclose(out.numpy(), x + y + x, rtol=1e-6)


def test_tensor_arguments_and_results(make_vm: Callable) -> None:
    vm = make_vm(ADD)
    x, y = rand(2, 3), rand(2, 3)
    out = vm["main"](tensor(x), tvmlite.runtime.tensor(y, cpu()))
    np.testing.assert_allclose(out.numpy(), x + y + x, rtol=1e-6)
    again = vm["main"](x, y)
    assert again.numpy() is not out.numpy()  # every call allocates its own outputs


@pytest.mark.parametrize("n", [1, 3, 8])
def test_symbolic_batch(make_vm: Callable, n: int) -> None:
    vm = make_vm(legalized(DYNAMIC))
    x, w, b = rand(n, 5), rand(5, 4), rand(4)
    out = vm["main"](x, w, b)
    assert out.shape == (n, 4)
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)


def test_tuple_outputs_tir_vars_match_cast_shapes_prims(make_vm: Callable) -> None:
    vm = make_vm(KERNELS)
    x = rand(6)
    hi, lo, shape, prim = vm["split"](x, 3)
    np.testing.assert_allclose(lo.numpy(), x[:3] * 3, rtol=1e-6)
    np.testing.assert_allclose(hi.numpy(), x[3:] * 3, rtol=1e-6)
    assert shape == (3, 6) and prim == 4 and isinstance(prim, int)


def test_call_tir_inplace(make_vm: Callable) -> None:
    vm = make_vm(KERNELS)
    x, y = rand(4), rand(4)
    expected_a = x + y
    a, c = vm["inplace"](x.copy(), y)
    np.testing.assert_allclose(a.numpy(), expected_a, rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), expected_a * 2, rtol=1e-6)


def test_inplace_output_is_the_input_array() -> None:
    vm = vm_te(KERNELS)
    x, y = rand(4), rand(4)
    before = x.copy()
    a, _ = vm["inplace"](x, y)
    np.testing.assert_allclose(x, before + y, rtol=1e-6)  # the kernel wrote into the argument, as in TVM
    np.testing.assert_allclose(a.numpy(), x)


def test_match_cast_failure_names_the_binding() -> None:
    vm = vm_te(KERNELS)
    with pytest.raises(MatchCastError, match=r"split: R.match_cast of 'y' expects shape \(n \* 2,\), got shape "
                                             r"\(5,\): dim 0 is 5, but n \* 2 is 4"):
        vm["split"](rand(5), 2)


CONTROL = '''
@I.ir_module
class Module:
    @R.function
    def pick(flag: R.Prim("bool"), a: R.Tensor((2,), "float32"), b: R.Tensor((2,), "float32")):
        if flag:
            r = a
        else:
            r = b
        return r

    @R.function
    def pick_tensor(cond: R.Tensor((), "bool"), a: R.Tensor((2,), "float32"), b: R.Tensor((2,), "float32")):
        if cond:
            r = Module.twice(a)
        else:
            r = b
        return r

    @R.function
    def twice(a: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
        m = T.int64()
        r = R.add(a, a)
        return r

    @R.function
    def pair(a: R.Tensor((2,), "float32")):
        t = (a, (R.shape([2, 3]), R.prim_value(T.float32(1.5))), R.str("hi"))
        inner = t[1]
        return (t[0], inner[0], inner[1], t[2], R.prim_value(T.bool(True)))
'''


def test_if_else_and_calls_between_functions(make_vm: Callable) -> None:
    vm = make_vm(legalized(CONTROL))
    a, b = rand(2), rand(2)
    np.testing.assert_array_equal(vm["pick"](True, a, b).numpy(), a)
    np.testing.assert_array_equal(vm["pick"](False, a, b).numpy(), b)
    np.testing.assert_allclose(vm["pick_tensor"](np.array(True), a, b).numpy(), a + a, rtol=1e-6)
    np.testing.assert_array_equal(vm["pick_tensor"](np.array(False), a, b).numpy(), b)
    np.testing.assert_allclose(vm["twice"](rand(5) * 0 + 1).numpy(), np.full(5, 2.0))


def test_tuples_shapes_prims_strings() -> None:
    vm = vm_te(legalized(CONTROL))
    a = rand(2)
    first, shape, half, text, yes = vm["pair"](a)
    np.testing.assert_array_equal(first.numpy(), a)
    assert shape == (2, 3) and half == 1.5 and text == "hi" and yes is True


def test_constants(make_vm: Callable) -> None:
    c = rand(2, 3)
    vm = make_vm(legalized('''
@R.function
def main(x: R.Tensor((2, 3), "float32")):
    with R.dataflow():
        gv = R.multiply(R.add(x, c), R.const(2.0, "float32"))
        R.output(gv)
    return gv
''', c=c))
    x = rand(2, 3)
    np.testing.assert_allclose(vm["main"](x).numpy(), (x + c) * 2, rtol=1e-6)


def test_nested_function_captures_values_and_sizes() -> None:
    vm = vm_te(legalized('''
@R.function
def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32")):
    n = T.int64()

    @R.function
    def add_x(z: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        s = R.add(z, x)
        return s

    r = add_x(y)
    return (r, add_x(r))
'''))
    x, y = rand(3), rand(3)
    r, rr = vm["main"](x, y)
    np.testing.assert_allclose(r.numpy(), x + y, rtol=1e-6)
    np.testing.assert_allclose(rr.numpy(), x + y + x, rtol=1e-6)


def test_functions_as_values(make_vm: Callable) -> None:
    vm = make_vm(legalized('''
@I.ir_module
class Module:
    @R.function
    def twice(a: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
        m = T.int64()
        r = R.add(a, a)
        return r

    @R.function
    def apply(f: R.Callable([R.Tensor(("k",), "float32")], R.Tensor(("k",), "float32")),
              a: R.Tensor(("k",), "float32")):
        r = f(a)
        return r

    @R.function
    def main(a: R.Tensor((3,), "float32")):
        r = Module.apply(Module.twice, a)
        return r
'''))
    np.testing.assert_array_equal(vm["main"](np.ones(3, "float32")).numpy(), [2, 2, 2])
    with pytest.raises(ArgumentError, match="parameter 'f' expects a function, got int 3"):
        vm["apply"](3, np.ones(3, "float32"))


def test_call_tir_size_read_from_an_input() -> None:
    # ``m`` is defined by no parameter (x has an unknown length): the output's size is read from
    # the input of the call whose struct info names it.
    mod = from_source(KERNELS)
    m = tir.Var("m", "int64")
    x = rx.Var("x", rx.TensorStructInfo(None, "float32", 1))
    out = rx.TupleStructInfo((rx.TensorStructInfo((m,), "float32"), rx.TensorStructInfo((m,), "float32")))
    k = tir.Var("k", "int64")
    w = rx.Var("w", rx.TensorStructInfo((k,), "float32"))
    call = rx.Call(rx.Op.get("relax.call_tir"), (mod.get_global_var("split_scale"), rx.Tuple((w,)),
                                                 rx.ShapeExpr((tir.IntImm("int64", 1),))), sinfo_args=(out,))
    body = rx.SeqExpr((rx.BindingBlock((rx.VarBinding(w, x), rx.VarBinding(p := rx.Var("p", out), call))),), p)
    mod["main"] = rx.Function((x,), body, out)
    with pytest.raises(VMError, match="the size m is defined by no parameter"):
        VirtualMachine(_te(mod))
    # With the size in the input's struct info it works: w is (k,) and the output is (k // 2).
    half = rx.TupleStructInfo((rx.TensorStructInfo((tir.FloorDiv(k, tir.IntImm("int64", 2)),), "float32"),) * 2)
    call2 = rx.Call(call.op, call.args, sinfo_args=(half,))
    q = rx.Var("q", half)
    body2 = rx.SeqExpr((rx.BindingBlock((rx.VarBinding(w, x), rx.VarBinding(q, call2))),), q)
    mod["main"] = rx.Function((x,), body2, half)
    lo, hi = VirtualMachine(_te(mod))["main"](np.arange(6, dtype="float32"))
    np.testing.assert_array_equal(lo.numpy(), [0, 1, 2])
    np.testing.assert_array_equal(hi.numpy(), [3, 4, 5])


# ---------------------------------------------------------------- packed functions, print, assert
PACKED = '''
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        a = R.call_packed("test_vm.scale", x, R.prim_value(T.float32(3)), sinfo_args=R.Tensor((n,), "float32"))
        b = R.call_pure_packed("test_vm.scale", a, R.prim_value(T.float32(2)), sinfo_args=R.Tensor((n,), "float32"))
        c = R.call_dps_packed("test_vm.negate_into", (b,), out_sinfo=R.Tensor((n,), "float32"))
        s = R.call_packed("test_vm.shape_sum", R.shape([n, 4]), sinfo_args=R.Prim("int64"))
        return (c, s)

    @R.function(pure=False)
    def wrong_result(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        a = R.call_packed("test_vm.scale", x, R.prim_value(T.float32(1)), sinfo_args=R.Tensor((n, 1), "float32"))
        return a

    @R.function(pure=False)
    def missing(x: R.Tensor((2,), "float32")):
        a = R.call_packed("test_vm.not_registered", x, sinfo_args=R.Object)
        return a
'''


@register_func("test_vm.scale")
def _scale(x: Tensor, factor: float) -> np.ndarray:
    assert isinstance(x, Tensor) and isinstance(factor, float)
    return x.numpy() * np.float32(factor)


@register_func("test_vm.negate_into")
def _negate_into(x: Tensor, out: Tensor) -> None:
    out.copyfrom(-x.numpy())


@register_func("test_vm.shape_sum")
def _shape_sum(shape: tuple) -> int:
    return sum(shape)


def test_packed_functions() -> None:
    vm = vm_te(PACKED)
    x = rand(3)
    c, s = vm["main"](x)
    np.testing.assert_allclose(c.numpy(), -x * 6, rtol=1e-6)
    assert s == 7


def test_packed_result_checked_against_sinfo_args() -> None:
    vm = vm_te(PACKED)
    with pytest.raises(VMError, match=r"the result of packed function 'test_vm.scale' expects 2 dimensions"):
        vm["wrong_result"](rand(3))


def test_missing_packed_function_is_named() -> None:
    vm = vm_te(PACKED)  # looked up when called: registering later works
    with pytest.raises(ValueError, match="no packed function named 'test_vm.not_registered'"):
        vm["missing"](rand(2))
    register_func("test_vm.not_registered", lambda x: x, override=True)
    np.testing.assert_array_equal(vm["missing"](np.ones(2, "float32")).numpy(), [1, 1])


def test_print_and_assert(capsys: pytest.CaptureFixture) -> None:
    vm = vm_te('''
@R.function(pure=False)
def main(x: R.Tensor((2,), "float32"), ok: R.Prim("bool")):
    R.print(x, R.prim_value(T.int64(3)), format="x = {}, three = {}")
    R.print(R.shape([1, 2]), format="")
    R.assert_op(ok, x, format="not ok: {}")
    return x
''')
    x = np.array([1, 2], "float32")
    vm["main"](x, True)
    assert capsys.readouterr().out == "x = [1. 2.], three = 3\n(1, 2)\n"
    with pytest.raises(AssertionError, match=r"not ok: \[1. 2.\]"):
        vm["main"](x, False)


def test_errors_carry_the_binding() -> None:
    vm = vm_te(KERNELS)
    with pytest.raises(MatchCastError) as info:
        vm["split"](rand(5), 2)
    assert "while computing 'y' in split" in "\n".join(getattr(info.value, "__notes__", []))


def test_out_sinfo_disagreeing_with_the_kernel_is_refused(make_vm: Callable) -> None:
    """A wrong ``out_sinfo`` gives an output the kernel refuses (it never writes out of bounds);
    the error says which binding was being computed."""
    vm = make_vm(ADD.replace('lv = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((2, 3), "float32"))',
                             'lv = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((3, 3), "float32"))'))
    with pytest.raises(Exception) as info:
        vm["main"](rand(2, 3), rand(2, 3))
    assert "while computing 'lv' in main" in "\n".join(getattr(info.value, "__notes__", []))


# ---------------------------------------------------------------- refused at construction
def test_unlegalized_op_is_refused_when_built() -> None:
    with pytest.raises(VMError, match=r"main: R.matmul is a graph-level op.*LegalizeOps"):
        vm_te(DYNAMIC)


def test_op_without_legalization() -> None:
    with pytest.raises(VMError, match=r"R.nn.dropout cannot run on the VM.*SimplifyInference"):
        vm_te('''
@R.function
def main(x: R.Tensor((2,), "float32")):
    y = R.nn.dropout(x)
    return y
''')


def test_call_tir_of_unknown_kernel() -> None:
    mod = from_source(ADD)
    mod.remove("add")
    with pytest.raises(VMError, match="calls add, which is not a TIR function of the module"):
        VirtualMachine(_te(mod))


def test_vm_takes_an_executable() -> None:
    with pytest.raises(TypeError, match="takes what tvmlite.compile returns"):
        VirtualMachine(from_source(ADD))
    with pytest.raises(TypeError, match="device must be tvmlite.cpu"):
        VirtualMachine(_te(from_source(ADD)), "cuda")
    vm = VirtualMachine(_te(from_source(ADD)), [cpu(0)])
    assert "main" in vm and vm.function_names() == ["main"]
    with pytest.raises(KeyError, match=r"no Relax function named 'forward' .*it has: main"):
        vm["forward"]


# ---------------------------------------------------------------- argument checks
@pytest.fixture(scope="module")
def dyn_vm() -> VirtualMachine:
    return vm_te(legalized(DYNAMIC))


@pytest.mark.parametrize("args, message", [
    ((rand(2, 5), rand(5, 4)), r"main: takes 3 arguments \(x, w, b\), got 2"),
    ((rand(2, 5).astype("float64"), rand(5, 4), rand(4)),
     r"main: parameter 'x' expects dtype float32, got float64 \(shape \(2, 5\)\); convert it with "
     r"\.astype\('float32'\)"),
    ((rand(2, 5, 1), rand(5, 4), rand(4)), r"parameter 'x' expects 2 dimensions \(shape \(n, k\)\), got 3"),
    ((rand(2, 5), rand(5, 4), rand(5)), r"parameter 'b' expects shape \(4,\), got shape \(5,\): dim 0 is 5, not 4"),
    ((rand(2, 5), rand(6, 4), rand(4)),
     r"parameter 'w' expects shape \(k, 4\), got shape \(6, 4\): dim 0 is 6, but k is 5 "
     r"\(from parameter 'x' dim 1\)"),
    ((rand(5, 2).T, rand(2, 4), rand(4)), r"parameter 'x' is not C-contiguous"),
    (([[1.0] * 5], rand(5, 4), rand(4)),
     r"parameter 'x' expects a tensor R.Tensor\(\(n, k\), float32\), got a list of 1 values"),
    ((rand(2, 5), rand(5, 4), 3.0), r"parameter 'b' expects a tensor .*got float 3.0"),
])
def test_bad_arguments_are_refused(dyn_vm: VirtualMachine, args: tuple, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        dyn_vm["main"](*args)


SIGNATURES = '''
@R.function
def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n * 2",), "float32"), s: R.Shape(["n", 3]),
         p: R.Prim(value="n"), q: R.Prim("float32"), t: R.Tuple(R.Tensor((2,), "int32"), R.Prim("bool"))):
    n = T.int64()
    return (s, p, q, t)
'''


def test_signature_kinds_accepted() -> None:
    vm = vm_te(SIGNATURES)
    s, p, q, t = vm["main"](np.zeros(2, "float32"), np.zeros(4, "float32"), [2, 3], np.int64(2), 1,
                            (np.zeros(2, "int32"), np.bool_(True)))
    assert s == (2, 3) and p == 2 and q == 1.0 and isinstance(q, float)
    assert t[1] is True and isinstance(t[0], Tensor)


@pytest.mark.parametrize("index, value, message", [
    (1, np.zeros(5, "float32"), r"parameter 'y' expects shape \(n \* 2,\), got shape \(5,\): dim 0 is 5, but "
                                r"n \* 2 is 4"),
    (2, (2, 4), r"parameter 's' expects the shape \(n, 3\), got \(2, 4\): dim 1 is 4, not 3"),
    (2, (3, 3), r"parameter 's' expects the shape \(n, 3\), got \(3, 3\): dim 0 is 3, but n is 2 \(from "
                r"parameter 'x' dim 0\)"),
    (2, (2, 3, 1), r"parameter 's' expects the shape \(n, 3\), got \(2, 3, 1\) \(3 values\)"),
    (2, (2.0, 3), r"parameter 's' expects the shape \(n, 3\) \(a tuple of ints\)"),
    (3, 5, r"parameter 'p' expects R.Prim\(value=n\), got 5: the value is 5, but n is 2"),
    (3, 2.0, r"parameter 'p' expects a int64 scalar"),
    (3, True, r"parameter 'p' expects a int64 scalar"),
    (4, "x", r"parameter 'q' expects a float32 scalar"),
    (5, (np.zeros(2, "int32"),), r"parameter 't' expects a tuple of 2 values, got a tuple of 1 values"),
    (5, (np.zeros(2, "int64"), True), r"parameter 't' field 0 expects dtype int32, got int64"),
    (5, (np.zeros(2, "int32"), 1), r"parameter 't' field 1 expects a bool scalar"),
])
def test_signature_kinds_refused(index: int, value: Any, message: str) -> None:
    vm = vm_te(SIGNATURES)
    args: list[Any] = [np.zeros(2, "float32"), np.zeros(4, "float32"), (2, 3), 2, 1.0,
                       (np.zeros(2, "int32"), True)]
    args[index] = value
    with pytest.raises(ArgumentError, match=message):
        vm["main"](*args)


def test_calls_between_functions_check_the_callee() -> None:
    vm = vm_te(legalized('''
@I.ir_module
class Module:
    @R.function
    def inner(a: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):
        return a

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        r = Module.inner(x)
        return r
'''))
    np.testing.assert_array_equal(vm["main"](np.ones(3, "float32")).numpy(), np.ones(3))
    with pytest.raises(ArgumentError, match=r"inner: parameter 'a' expects shape \(3,\), got shape \(4,\)"):
        vm["main"](np.ones(4, "float32"))


# ---------------------------------------------------------------- runtime objects
def test_tensor_wrapper() -> None:
    a = np.arange(6, dtype="int32").reshape(2, 3)
    t = tensor(a)
    a[0, 0] = 100  # tensor() copied
    assert t.shape == (2, 3) and t.dtype == "int32" and t.ndim == 2 and t.device == cpu(0)
    assert t.numpy()[0, 0] == 0
    t.numpy()[0, 0] = 5  # numpy() is a copy too
    assert t.numpy()[0, 0] == 0
    t.copyfrom(np.ones((2, 3)))
    np.testing.assert_array_equal(np.asarray(t), np.ones((2, 3), "int32"))
    assert tensor(a.T).numpy().flags.c_contiguous
    assert tensor([1.5, 2], dtype="float16").dtype == "float16"
    with pytest.raises(ValueError, match="copyfrom: shape"):
        t.copyfrom(np.ones(3))
    with pytest.raises(ValueError, match="runs on the host CPU only"):
        tvmlite.runtime.Device("cuda")


def test_register_func_forms() -> None:
    @register_func
    def test_vm_bare(x: int) -> int:
        return x + 1

    assert get_func("test_vm_bare")(1) == 2
    with pytest.raises(ValueError, match="already registered"):
        register_func("test_vm_bare", lambda x: x)
    register_func("test_vm_bare", lambda x: x * 10, override=True)
    assert tvmlite.get_func("test_vm_bare")(2) == 20
    assert get_func("test_vm.nothing", allow_missing=True) is None
    with pytest.raises(ValueError, match=r"register it with tvmlite.register_func\('test_vm.nothing'\)"):
        get_func("test_vm.nothing")


def test_direct_kernel_call_through_the_executable() -> None:
    ex = _te(from_source(KERNELS))
    a, b, c = np.ones(4, "float32"), np.arange(4, dtype="float32"), np.zeros(4, "float32")
    ex["accumulate"](a, tensor(b), c)
    np.testing.assert_array_equal(a, [1, 2, 3, 4])
    np.testing.assert_array_equal(c, [2, 4, 6, 8])
    lo, hi = np.zeros(2, "float32"), np.zeros(2, "float32")
    ex["split_scale"](np.arange(4, dtype="float32"), lo, hi, 2)
    np.testing.assert_array_equal(hi, [4, 6])
    with pytest.raises(KeyError, match="Relax functions run on tvmlite.VirtualMachine"):
        ex["split"]
    assert ex.get_source("relax").startswith("# from tvmlite.script import ir as I")
    assert "def accumulate" in ex.get_source("tir")
