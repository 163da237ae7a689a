"""The last passes of TVM's build: RewriteDataflowReshape (reshape kernels become views),
ComputePrimValue (symbolic prim values computed by generated host functions), the kills TVM's
KillAfterLastUse places on every tensor, and the VM running the results.

The expected texts are Apache TVM 0.27's outputs for the same modules, in tvmlite's spelling
(``out_sinfo=``/``sinfo_args=`` for 0.27's ``out_ty=``/``ty_args=``, ``R.Object`` for ``R.Any``,
``R.prim_value(0)`` for a bare ``0``, ``R.Prim("int64")`` for ``T.int64``)."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.vm_frame import VMError
from tvmlite.ir import tir
from tvmlite.ir.structural import structural_equal
from tvmlite.passes.vm_lower.rewrite_reshape import is_reshape_kernel
from tvmlite.script import from_source

RESHAPES = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 4), "float32"), y: R.Tensor((24,), "float32")):
        with R.dataflow():
            a = R.add(x, x)
            b = R.reshape(a, (6, 4))
            c = R.expand_dims(b, axis=[0])
            d = R.flatten(c)
            e = R.add(d, y)
            f = R.reshape(e, (4, 6))
            R.output(f)
        return f
'''

# b, c and d become R.reshape; f, the block's output, stays a kernel call (TVM's rule).
AFTER_REWRITE = '''# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((2, 3, 4), dtype="float32"), y: R.Tensor((24,), dtype="float32")) -> R.Tensor((4, 6), dtype="float32"):
    with R.dataflow():
        a = R.call_tir(add, (x, x), out_sinfo=R.Tensor((2, 3, 4), dtype="float32"))
        b: R.Tensor((6, 4), dtype="float32") = R.reshape(a, R.shape([6, 4]))
        c: R.Tensor((1, 6, 4), dtype="float32") = R.reshape(b, R.shape([1, 6, 4]))
        d: R.Tensor((24,), dtype="float32") = R.reshape(c, R.shape([24]))
        e = R.call_tir(add1, (d, y), out_sinfo=R.Tensor((24,), dtype="float32"))
        f = R.call_tir(reshape2, (e,), out_sinfo=R.Tensor((4, 6), dtype="float32"))
        R.output(f)
    return f
'''

# The views share alloc's storage, so e's tensor gets a storage of its own (storage1); each view
# is killed after its last use.
AFTER_BUILTIN_LOWER = '''# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((2, 3, 4), dtype="float32"), y: R.Tensor((24,), dtype="float32")) -> R.Tensor((4, 6), dtype="float32"):
    R.func_attr({"relax.force_pure": True})
    storage: R.Object = R.vm.alloc_storage(R.shape([96]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
    alloc: R.Tensor((2, 3, 4), dtype="float32") = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3, 4]), R.dtype("float32"), R.prim_value(0))
    R.vm.kill_object(storage)
    add(x, x, alloc)
    b: R.Tensor((6, 4), dtype="float32") = R.call_packed("vm.builtin.reshape", alloc, R.shape([6, 4]), sinfo_args=(R.Tensor((6, 4), dtype="float32"),))
    R.vm.kill_object(alloc)
    c: R.Tensor((1, 6, 4), dtype="float32") = R.call_packed("vm.builtin.reshape", b, R.shape([1, 6, 4]), sinfo_args=(R.Tensor((1, 6, 4), dtype="float32"),))
    R.vm.kill_object(b)
    d: R.Tensor((24,), dtype="float32") = R.call_packed("vm.builtin.reshape", c, R.shape([24]), sinfo_args=(R.Tensor((24,), dtype="float32"),))
    R.vm.kill_object(c)
    storage1: R.Object = R.vm.alloc_storage(R.shape([96]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
    alloc1: R.Tensor((24,), dtype="float32") = R.vm.alloc_tensor(storage1, R.prim_value(0), R.shape([24]), R.dtype("float32"), R.prim_value(0))
    R.vm.kill_object(storage1)
    add1(d, y, alloc1)
    R.vm.kill_object(d)
    storage_1: R.Object = R.vm.alloc_storage(R.shape([96]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
    alloc2: R.Tensor((4, 6), dtype="float32") = R.vm.alloc_tensor(storage_1, R.prim_value(0), R.shape([4, 6]), R.dtype("float32"), R.prim_value(0))
    R.vm.kill_object(storage_1)
    reshape2(alloc1, alloc2)
    R.vm.kill_object(alloc1)
    return alloc2
'''

VM_STEPS = ["ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite", "StaticPlanBlockMemory", "LowerAllocTensor",
            "KillAfterLastUse", "VMBuiltinLower"]


def _legalized(text: str) -> tvmlite.IRModule:
    return P.LegalizeOps()(from_source(text))


def test_reshape_kernels_become_r_reshape() -> None:
    mod = P.RewriteDataflowReshape()(_legalized(RESHAPES))
    assert mod["main"].script() + "\n" == AFTER_REWRITE
    assert structural_equal(from_source(mod.script()), mod)


def test_views_are_planned_and_killed_as_tvms() -> None:
    mod = P.RewriteDataflowReshape()(_legalized(RESHAPES))
    for name in VM_STEPS:
        mod = P.get_pass(name)(mod)
    assert mod["main"].script() + "\n" == AFTER_BUILTIN_LOWER
    assert structural_equal(from_source(mod.script()), mod)


def test_the_vm_runs_the_views() -> None:
    """The whole compile (graph pipeline of legalization only, so that the reshapes stay kernels of
    their own): the numbers are numpy's, and the text shows the views."""
    ex = tvmlite.compile(from_source(RESHAPES), relax_pipeline="LegalizeOps", inline_layout=False)
    assert ex.get_source("vm").count('R.call_packed("vm.builtin.reshape"') == 3
    x, y = np.random.rand(2, 3, 4).astype("float32"), np.random.rand(24).astype("float32")
    out = tvmlite.VirtualMachine(ex)["main"](x, y).numpy()
    np.testing.assert_allclose(out, ((x + x).reshape(24) + y).reshape(4, 6), rtol=1e-6)


def test_vm_builtin_reshape_is_a_view() -> None:
    """``vm.builtin.reshape`` copies nothing: writing through a kernel into the view writes the
    original tensor's memory."""
    text = '''
@I.ir_module
class Module:
    @T.prim_func
    def fill(A: T.Buffer((6,), "float32")):
        for i in range(6):
            A[i] = T.float32(7)

    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), "float32")):
        cls = Module
        y = R.call_packed("vm.builtin.reshape", x, R.shape([6]), sinfo_args=(R.Tensor((6,), "float32"),))
        cls.fill(y)
        return x
'''
    ex = tvmlite.compile(from_source(text), vm_pipeline=None)
    out = tvmlite.VirtualMachine(ex)["main"](np.zeros((2, 3), "float32")).numpy()
    np.testing.assert_array_equal(out, np.full((2, 3), 7, "float32"))


def test_vm_builtin_reshape_refuses_another_element_count() -> None:
    text = '''
@R.function(pure=False)
def main(x: R.Tensor((2, 3), "float32")):
    y = R.call_packed("vm.builtin.reshape", x, R.shape([5]), sinfo_args=(R.Tensor((5,), "float32"),))
    return y
'''
    ex = tvmlite.compile(tvmlite.IRModule.from_expr(from_source(text)), vm_pipeline=None)
    with pytest.raises(VMError, match=r"cannot reshape a tensor of shape \(2, 3\) \(6 elements\) to \(5,\)"):
        tvmlite.VirtualMachine(ex)["main"](np.zeros((2, 3), "float32"))


KERNELS = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 4), "float32"), w: R.Tensor((4, 6), "float32")):
        with R.dataflow():
            a = R.reshape(x, (6, 4))
            b = R.flatten(x)
            c = R.expand_dims(a, axis=[1])
            d = R.squeeze(c, axis=[1])
            e = R.permute_dims(a)
            f = R.strided_slice(b, axes=[0], begin=[0], end=[12])
            g = R.add(a, a)
            h = R.astype(a, "float16")
            R.output(b, d, e, f, g, h)
        return (b, d, e, f, g, h)
'''


def test_which_kernels_are_reshapes() -> None:
    """reshape, flatten, expand_dims and squeeze move elements in row-major order; a transpose, a
    slice, arithmetic and a cast do not."""
    mod = _legalized(KERNELS)
    got = {gv.name_hint: is_reshape_kernel(f) for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)}
    assert got == {"reshape": True, "reshape1": True, "expand_dims": True, "squeeze": True, "transpose": False,
                   "strided_slice": False, "add": False, "cast": False}


def test_only_dataflow_internal_reshapes_are_rewritten() -> None:
    """The block's outputs (b, d) stay kernel calls; a and c, used inside it, become views."""
    mod = P.RewriteDataflowReshape()(_legalized(KERNELS))
    text = mod["main"].script()
    assert 'a: R.Tensor((6, 4), dtype="float32") = R.reshape(x, R.shape([6, 4]))' in text
    assert 'c: R.Tensor((6, 1, 4), dtype="float32") = R.reshape(a, R.shape([6, 1, 4]))' in text
    assert "b = R.call_tir(reshape1, (x,)" in text and "d = R.call_tir(squeeze, (c,)" in text


PRIM_VALUES = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), "float32")):
        n = T.int64()
        m = T.int64()
        a = R.prim_value(n * m + 1)
        b = R.prim_value(n)
        c = R.prim_value(T.max(n, m) // 2)
        d = R.prim_value(n > m)
        return (a, b, c, d)
'''

AFTER_COMPUTE_PRIM_VALUE = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def compute_symbolic_expr(n: T.int64, m: T.int64) -> T.int64:
        T.func_attr({"tirx.is_host_func": True})
        return n * m + T.int64(1)

    @T.prim_func(private=True)
    def compute_symbolic_expr1(n: T.int64, m: T.int64) -> T.int64:
        T.func_attr({"tirx.is_host_func": True})
        return T.max(n, m) // T.int64(2)

    @T.prim_func(private=True)
    def compute_symbolic_expr2(n: T.int64, m: T.int64) -> T.bool:
        T.func_attr({"tirx.is_host_func": True})
        return n > m

    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32")) -> R.Tuple(R.Prim("int64"), R.Prim(value="n"), R.Prim("int64"), R.Prim("bool")):
        n = T.int64()
        m = T.int64()
        cls = Module
        a: R.Prim("int64") = cls.compute_symbolic_expr(R.prim_value(n), R.prim_value(m))
        b: R.Prim(value=n) = R.prim_value(n)
        c: R.Prim("int64") = cls.compute_symbolic_expr1(R.prim_value(n), R.prim_value(m))
        d: R.Prim("bool") = cls.compute_symbolic_expr2(R.prim_value(n), R.prim_value(m))
        return (a, b, c, d)
'''


def test_compute_prim_value_prints_tvms_text() -> None:
    """Each computed value gets a host PrimFunc of its variables; ``R.prim_value(n)`` stays."""
    mod = P.ComputePrimValue()(from_source(PRIM_VALUES))
    assert mod.script() + "\n" == AFTER_COMPUTE_PRIM_VALUE
    assert structural_equal(from_source(mod.script()), mod)


NESTED = '''
@R.function(pure=False)
def main(x: R.Tensor(("n",), "float32"), s: R.Shape(["k"])):
    n = T.int64()
    k = T.int64()
    y = R.call_packed("f", x, R.prim_value(n + k), sinfo_args=R.Tensor((n,), "float32"))
    z = R.call_packed("f", y, R.prim_value(T.int64(3)), R.prim_value(T.float32(1.5)), sinfo_args=R.Tensor((n,), "float32"))
    return (z, R.prim_value(k * 2))
'''

NESTED_AFTER = '''    @R.function(pure=False)
    def main(x: R.Tensor(("n",), dtype="float32"), s: R.Shape(["k"])) -> R.Tuple(R.Tensor(("n",), dtype="float32"), R.Prim("int64")):
        n = T.int64()
        k = T.int64()
        cls = Module
        gv: R.Prim("int64") = cls.compute_symbolic_expr(R.prim_value(n), R.prim_value(k))
        y: R.Tensor((n,), dtype="float32") = R.call_packed("f", x, gv, sinfo_args=(R.Tensor((n,), dtype="float32"),))
        gv1: R.Prim("float32") = cls.compute_symbolic_expr1()
        z: R.Tensor((n,), dtype="float32") = R.call_packed("f", y, R.prim_value(3), gv1, sinfo_args=(R.Tensor((n,), dtype="float32"),))
        gv2: R.Prim("int64") = cls.compute_symbolic_expr2(R.prim_value(k))
        return (z, gv2)'''


def test_nested_prim_values_are_bound_first() -> None:
    """Arguments and the result are bound to gv, gv1, gv2 before their use; a float literal is
    computed too, an integer literal stays (TVM's rule)."""
    mod = P.ComputePrimValue()(tvmlite.IRModule.from_expr(from_source(NESTED)))
    text = mod.script()
    assert NESTED_AFTER in text
    assert "def compute_symbolic_expr1() -> T.float32:" in text and "return T.float32(1.5)" in text
    assert structural_equal(from_source(text), mod)


def test_the_vm_computes_the_values() -> None:
    ex = tvmlite.compile(from_source(PRIM_VALUES))
    # VMShapeLower reads the arguments from the shape heap, as TVM 0.27 prints it
    assert ('gv: R.Prim("int64") = R.call_packed("vm.builtin.make_prim_value", shape_heap, R.prim_value(1), '
            'R.prim_value(0), sinfo_args=(R.Prim("int64"),))') in ex.get_source("vm")
    assert "cls.compute_symbolic_expr(gv, gv1)" in ex.get_source("vm")
    for n, m in ((3, 5), (7, 2)):
        got = tvmlite.VirtualMachine(ex)["main"](np.zeros((n, m), "float32"))
        assert tuple(got) == (n * m + 1, n, max(n, m) // 2, n > m)


KILLS = '''
@R.function(pure=False)
def main(x: R.Tensor((2, 3), "float32"), tup: R.Tuple(R.Tensor((2, 3), "float32"), R.Tensor((2, 3), "float32")), flag: R.Tensor((), "bool")):
    a = R.call_packed("f", x, sinfo_args=R.Tuple(R.Tensor((2, 3), "float32"), R.Tensor((2, 3), "float32")))
    a0 = a[0]
    t0 = tup[0]
    b = R.call_packed("g", a0, t0, sinfo_args=R.Tensor((2, 3), "float32"))
    o = R.call_packed("o", b, sinfo_args=R.Object)
    if flag:
        r = R.call_packed("g", b, sinfo_args=R.Tensor((2, 3), "float32"))
        r2 = R.call_packed("g", r, sinfo_args=R.Tensor((2, 3), "float32"))
        q = r2
    else:
        q = b
    z = R.call_packed("g", q, o, sinfo_args=R.Tensor((2, 3), "float32"))
    return z
'''

KILLS_AFTER = '''# from tvmlite.script import relax as R

@R.function(pure=False)
def main(x: R.Tensor((2, 3), dtype="float32"), tup: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")), flag: R.Tensor((), dtype="bool")) -> R.Tensor((2, 3), dtype="float32"):
    a: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")) = R.call_packed("f", x, sinfo_args=(R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")),))
    a0: R.Tensor((2, 3), dtype="float32") = a[0]
    R.vm.kill_object(a)
    t0: R.Tensor((2, 3), dtype="float32") = tup[0]
    b: R.Tensor((2, 3), dtype="float32") = R.call_packed("g", a0, t0, sinfo_args=(R.Tensor((2, 3), dtype="float32"),))
    R.memory.kill_tensor(a0)
    R.memory.kill_tensor(t0)
    o: R.Object = R.call_packed("o", b, sinfo_args=(R.Object,))
    if flag:
        r: R.Tensor((2, 3), dtype="float32") = R.call_packed("g", b, sinfo_args=(R.Tensor((2, 3), dtype="float32"),))
        r2: R.Tensor((2, 3), dtype="float32") = R.call_packed("g", r, sinfo_args=(R.Tensor((2, 3), dtype="float32"),))
        R.memory.kill_tensor(r)
        q: R.Tensor((2, 3), dtype="float32") = r2
    else:
        q: R.Tensor((2, 3), dtype="float32") = b
    z: R.Tensor((2, 3), dtype="float32") = R.call_packed("g", q, o, sinfo_args=(R.Tensor((2, 3), dtype="float32"),))
    return z
'''


def test_kill_after_last_use_kills_every_tensor_as_tvm() -> None:
    """Tensors a call or a tuple item gives are killed (kill_tensor), a tuple a call returns too
    (kill_object); objects, parameters, values leaving through the if, and the result are not."""
    mod = P.KillAfterLastUse()(tvmlite.IRModule.from_expr(from_source(KILLS)))
    assert mod["main"].script() + "\n" == KILLS_AFTER
    assert structural_equal(from_source(mod.script()), mod)


def test_shape_of_becomes_the_vms_builtin() -> None:
    text = '''
@R.function
def main(x: R.Tensor((2, 3), "float32")):
    s = R.shape_of(x)
    return s
'''
    mod = P.VMBuiltinLower()(tvmlite.IRModule.from_expr(from_source(text)))
    assert 's: R.Shape([2, 3]) = R.call_packed("vm.builtin.shape_of", x, sinfo_args=(R.Shape([2, 3]),))' \
        in mod["main"].script()
    ex = tvmlite.compile(tvmlite.IRModule.from_expr(from_source(text)))
    assert 'R.call_packed("vm.builtin.shape_of", x' in ex.get_source("vm")
    assert tuple(tvmlite.VirtualMachine(ex)["main"](np.zeros((2, 3), "float32"))) == (2, 3)


def test_ensure_zero_offset_becomes_the_vms_builtin() -> None:
    """TVM 0.27's LowerRuntimeBuiltin: ``vm.builtin.ensure_zero_offset`` (a numpy array has no
    separate offset: the VM passes the tensor on)."""
    text = '''
@R.function
def main(x: R.Tensor((2, 3), "float32")):
    z = R.memory.ensure_zero_offset(x)
    return z
'''
    mod = P.VMBuiltinLower()(tvmlite.IRModule.from_expr(from_source(text)))
    assert 'z: R.Tensor((2, 3), dtype="float32") = R.call_packed("vm.builtin.ensure_zero_offset", x, ' \
        'sinfo_args=(R.Tensor((2, 3), dtype="float32"),))' in mod["main"].script()
    assert structural_equal(from_source(mod.script()), mod)
    ex = tvmlite.compile(tvmlite.IRModule.from_expr(from_source(text)))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(tvmlite.VirtualMachine(ex)["main"](x).numpy(), x)


SYMBOLIC = '''
@I.ir_module
class Module:
    @R.function
    def main(y: R.Tensor(("n", 4), "float32")):
        n = T.int64()
        with R.dataflow():
            q = R.reshape(y, (n * 4,))
            q2 = R.add(q, q)
            q3 = R.reshape(q2, (n, 4))
            q4 = R.add(q3, q3)
            R.output(q4)
        return q4
'''


def test_symbolic_reshapes_become_views() -> None:
    """``y[v // 4 % n, v % 4]`` over ``v < n * 4`` and ``q2[(v0 * 4 + v1) % (n * 4)]`` are proven
    row-major copies from the loop ranges (the wrap-arounds are never taken), as TVM rewrites them."""
    mod = P.RewriteDataflowReshape()(_legalized(SYMBOLIC))
    text = mod["main"].script()
    assert 'q: R.Tensor((n * 4,), dtype="float32") = R.reshape(y, R.shape([n * 4]))' in text
    assert 'q3: R.Tensor((n, 4), dtype="float32") = R.reshape(q2, R.shape([n, 4]))' in text
    ex = tvmlite.compile(from_source(SYMBOLIC), relax_pipeline="LegalizeOps", inline_layout=False)
    assert ex.get_source("vm").count('R.call_packed("vm.builtin.reshape"') == 2
    for n in (1, 5):
        y = np.random.rand(n, 4).astype("float32")
        np.testing.assert_allclose(tvmlite.VirtualMachine(ex)["main"](y).numpy(), y * 4, rtol=1e-6)


def test_a_reshape_the_proof_misses_is_checked_point_by_point() -> None:
    """``A[i // 6, i % 6 // 3, i % 3]`` is row-major (the loop ranges alone do not show it: every
    iteration is evaluated); swapping the last two positions is not."""
    text = '''
@I.ir_module
class Module:
    @T.prim_func
    def flat(A: T.Buffer((4, 2, 3), "float32"), B: T.Buffer((24,), "float32")):
        for i in range(24):
            B[i] = A[i // 6, i % 6 // 3, i % 3]

    @T.prim_func
    def mixed(A: T.Buffer((4, 3, 2), "float32"), B: T.Buffer((24,), "float32")):
        for i in range(24):
            B[i] = A[i // 6, i % 3, i % 6 // 3]
'''
    mod = from_source(text)
    assert is_reshape_kernel(mod["flat"]) and not is_reshape_kernel(mod["mixed"])
