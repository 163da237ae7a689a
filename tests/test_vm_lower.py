"""TVM's VM lowering passes (passes/vm_lower/) as text, and the VM running what they print.

The expected texts are Apache TVM 0.27's outputs for the same modules, in tvmlite's spelling of
TVM's script (``out_sinfo=``/``sinfo_args=`` for 0.27's ``out_ty=``/``ty_args=``, ``R.Object`` for
``R.Any``, ``R.prim_value(0)`` for a bare ``0``); the allocation and storage names, the storages
shared and the kills' places are TVM's."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.runtime import register_func
from tvmlite.ir.structural import structural_equal
from tvmlite.script import from_source

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_models  # noqa: E402  (the benchmark's MLP and memory figures)

STEPS = ["RewriteDataflowReshape", "ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite",
         "StaticPlanBlockMemory", "LowerAllocTensor", "KillAfterLastUse", "VMBuiltinLower", "ComputePrimValue",
         "VMShapeLower", "AttachGlobalSymbol"]

# A call_tir chain with a tuple output, an R.call_dps_packed, an if/else and symbolic sizes.
MODULE = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32"), C: T.Buffer((2, 3), "float32")):
        for i, j in T.grid(2, 3):
            C[i, j] = A[i, j] + B[i, j]

    @T.prim_func
    def split(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32"), C: T.Buffer((2, 3), "int32")):
        for i, j in T.grid(2, 3):
            B[i, j] = A[i, j]
            C[i, j] = 1

    @T.prim_func
    def addn(a: T.handle, b: T.handle):
        m = T.int64()
        A = T.match_buffer(a, (m,), "float32")
        B = T.match_buffer(b, (m,), "float32")
        for i in range(m):
            B[i] = A[i] + T.float32(1)

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((2, 3), "float32"))
            t = R.call_tir(cls.split, (a,), out_sinfo=[R.Tensor((2, 3), "float32"), R.Tensor((2, 3), "int32")])
            t0 = t[0]
            t1 = t[1]
            b = R.call_tir(cls.add, (t0, y), out_sinfo=R.Tensor((2, 3), "float32"))
            c = R.call_dps_packed("my_func", (b,), out_sinfo=R.Tensor((2, 3), "float32"))
            d = R.call_tir(cls.add, (c, c), out_sinfo=R.Tensor((2, 3), "float32"))
            e = R.call_tir(cls.add, (d, d), out_sinfo=R.Tensor((2, 3), "float32"))
            R.output(e, t1)
        return (e, t1)

    @R.function
    def dyn(x: R.Tensor(("n",), "float32"), z: R.Tensor(ndim=1, dtype="float32"), flag: R.Tensor((), "bool")):
        n = T.int64()
        cls = Module
        m = T.int64()
        z1 = R.match_cast(z, R.Tensor((m,), "float32"))
        a = R.call_tir(cls.addn, (x,), out_sinfo=R.Tensor((n,), "float32"))
        b = R.call_tir(cls.addn, (a,), out_sinfo=R.Tensor((n,), "float32"))
        if flag:
            c = R.call_tir(cls.addn, (b,), out_sinfo=R.Tensor((n,), "float32"))
            d = R.call_tir(cls.addn, (c,), out_sinfo=R.Tensor((n,), "float32"))
            r = d
        else:
            r = b
        e = R.call_tir(cls.addn, (z1,), out_sinfo=R.Tensor((m,), "float32"))
        return (r, e)
'''


def lowered(text: str, upto: str) -> tvmlite.IRModule:
    """The module after the vm_lower passes up to and including ``upto``."""
    mod = from_source(text)
    for name in STEPS[:STEPS.index(upto) + 1]:
        mod = P.get_pass(name)(mod)
    return mod


MAIN_AFTER_CALLTIRREWRITE = '''# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int32")):
    R.func_attr({"relax.force_pure": True})
    alloc: R.Tensor((2, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    add(x, y, alloc)
    a: R.Tensor((2, 3), dtype="float32") = alloc
    alloc1: R.Tensor((2, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    alloc2: R.Tensor((2, 3), dtype="int32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("int32"), R.prim_value(0), R.str("global"))
    split(a, alloc1, alloc2)
    t: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int32")) = alloc1, alloc2
    t0: R.Tensor((2, 3), dtype="float32") = t[0]
    t1: R.Tensor((2, 3), dtype="int32") = t[1]
    alloc3: R.Tensor((2, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    add(t0, y, alloc3)
    b: R.Tensor((2, 3), dtype="float32") = alloc3
    alloc4: R.Tensor((2, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    _: R.Object = R.call_packed("my_func", b, alloc4, sinfo_args=(R.Object,))
    c: R.Tensor((2, 3), dtype="float32") = alloc4
    alloc5: R.Tensor((2, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    add(c, c, alloc5)
    d: R.Tensor((2, 3), dtype="float32") = alloc5
    alloc6: R.Tensor((2, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    add(d, d, alloc6)
    e: R.Tensor((2, 3), dtype="float32") = alloc6
    return (e, t1)
'''


MAIN_AFTER_STATICPLANBLOCKMEMORY = '''# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int32")):
    R.func_attr({"relax.force_pure": True})
    storage: R.Object = R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    add(x, y, alloc)
    a: R.Tensor((2, 3), dtype="float32") = alloc
    storage1: R.Object = R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc1: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    alloc2: R.Tensor((2, 3), dtype="int32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("int32"), R.prim_value(0), R.str("global"))
    split(a, alloc1, alloc2)
    t: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int32")) = alloc1, alloc2
    t0: R.Tensor((2, 3), dtype="float32") = t[0]
    t1: R.Tensor((2, 3), dtype="int32") = t[1]
    alloc3: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    add(t0, y, alloc3)
    b: R.Tensor((2, 3), dtype="float32") = alloc3
    alloc4: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    _: R.Object = R.call_packed("my_func", b, alloc4, sinfo_args=(R.Object,))
    c: R.Tensor((2, 3), dtype="float32") = alloc4
    alloc5: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    add(c, c, alloc5)
    d: R.Tensor((2, 3), dtype="float32") = alloc5
    alloc6: R.Tensor((2, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    add(d, d, alloc6)
    e: R.Tensor((2, 3), dtype="float32") = alloc6
    return (e, t1)
'''


MAIN_AFTER_KILLAFTERLASTUSE = '''# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int32")):
    R.func_attr({"relax.force_pure": True})
    storage: R.Object = R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    add(x, y, alloc)
    storage1: R.Object = R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc1: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    storage_1: R.Object = R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("uint8"))
    alloc2: R.Tensor((2, 3), dtype="int32") = R.memory.alloc_tensor(storage_1, R.prim_value(0), R.shape([2, 3]), R.dtype("int32"), R.prim_value(0))
    R.memory.kill_storage(storage_1)
    split(alloc, alloc1, alloc2)
    R.memory.kill_tensor(alloc)
    t: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int32")) = alloc1, alloc2
    alloc3: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    add(alloc1, y, alloc3)
    R.memory.kill_tensor(alloc1)
    alloc4: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    R.memory.kill_storage(storage1)
    _: R.Object = R.call_packed("my_func", alloc3, alloc4, sinfo_args=(R.Object,))
    R.memory.kill_tensor(alloc3)
    alloc5: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    R.memory.kill_storage(storage)
    add(alloc4, alloc4, alloc5)
    R.memory.kill_tensor(alloc4)
    storage1_1: R.Object = R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("uint8"))
    alloc6: R.Tensor((2, 3), dtype="float32") = R.memory.alloc_tensor(storage1_1, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    R.memory.kill_storage(storage1_1)
    add(alloc5, alloc5, alloc6)
    R.memory.kill_tensor(alloc5)
    return (alloc6, alloc2)
'''


MAIN_AFTER_VMBUILTINLOWER = '''# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int32")):
    R.func_attr({"relax.force_pure": True})
    storage: R.Object = R.vm.alloc_storage(R.shape([24]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
    alloc: R.Tensor((2, 3), dtype="float32") = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    add(x, y, alloc)
    storage1: R.Object = R.vm.alloc_storage(R.shape([24]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
    alloc1: R.Tensor((2, 3), dtype="float32") = R.vm.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    storage_1: R.Object = R.vm.alloc_storage(R.shape([24]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
    alloc2: R.Tensor((2, 3), dtype="int32") = R.vm.alloc_tensor(storage_1, R.prim_value(0), R.shape([2, 3]), R.dtype("int32"), R.prim_value(0))
    R.vm.kill_object(storage_1)
    split(alloc, alloc1, alloc2)
    R.vm.kill_object(alloc)
    t: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int32")) = alloc1, alloc2
    alloc3: R.Tensor((2, 3), dtype="float32") = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    add(alloc1, y, alloc3)
    R.vm.kill_object(alloc1)
    alloc4: R.Tensor((2, 3), dtype="float32") = R.vm.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    R.vm.kill_object(storage1)
    _: R.Object = R.call_packed("my_func", alloc3, alloc4, sinfo_args=(R.Object,))
    R.vm.kill_object(alloc3)
    alloc5: R.Tensor((2, 3), dtype="float32") = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    R.vm.kill_object(storage)
    add(alloc4, alloc4, alloc5)
    R.vm.kill_object(alloc4)
    storage1_1: R.Object = R.vm.alloc_storage(R.shape([24]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
    alloc6: R.Tensor((2, 3), dtype="float32") = R.vm.alloc_tensor(storage1_1, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"), R.prim_value(0))
    R.vm.kill_object(storage1_1)
    add(alloc5, alloc5, alloc6)
    R.vm.kill_object(alloc5)
    return (alloc6, alloc2)
'''


DYN_AFTER_STATICPLANBLOCKMEMORY = '''# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@R.function
def dyn(x: R.Tensor(("n",), dtype="float32"), z: R.Tensor(dtype="float32", ndim=1), flag: R.Tensor((), dtype="bool")) -> R.Tuple(R.Tensor(("n",), dtype="float32"), R.Tensor(dtype="float32", ndim=1)):
    n = T.int64()
    R.func_attr({"relax.force_pure": True})
    m = T.int64()
    z1: R.Tensor((m,), dtype="float32") = R.match_cast(z, R.Tensor((m,), dtype="float32"))
    storage2: R.Object = R.memory.alloc_storage(R.shape([4 * n]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc7: R.Tensor((n,), dtype="float32") = R.memory.alloc_tensor(storage2, R.prim_value(0), R.shape([n]), R.dtype("float32"), R.prim_value(0))
    addn(x, alloc7)
    a: R.Tensor((n,), dtype="float32") = alloc7
    alloc8: R.Tensor((n,), dtype="float32") = R.builtin.alloc_tensor(R.shape([n]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    addn(a, alloc8)
    b: R.Tensor((n,), dtype="float32") = alloc8
    if flag:
        alloc9: R.Tensor((n,), dtype="float32") = R.memory.alloc_tensor(storage2, R.prim_value(0), R.shape([n]), R.dtype("float32"), R.prim_value(0))
        addn(b, alloc9)
        c: R.Tensor((n,), dtype="float32") = alloc9
        alloc10: R.Tensor((n,), dtype="float32") = R.builtin.alloc_tensor(R.shape([n]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        addn(c, alloc10)
        d: R.Tensor((n,), dtype="float32") = alloc10
        r: R.Tensor((n,), dtype="float32") = d
    else:
        r: R.Tensor((n,), dtype="float32") = b
    alloc11: R.Tensor((m,), dtype="float32") = R.builtin.alloc_tensor(R.shape([m]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    addn(z1, alloc11)
    e: R.Tensor((m,), dtype="float32") = alloc11
    return (r, e)
'''


DYN_AFTER_KILLAFTERLASTUSE = '''# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@R.function
def dyn(x: R.Tensor(("n",), dtype="float32"), z: R.Tensor(dtype="float32", ndim=1), flag: R.Tensor((), dtype="bool")) -> R.Tuple(R.Tensor(("n",), dtype="float32"), R.Tensor(dtype="float32", ndim=1)):
    n = T.int64()
    R.func_attr({"relax.force_pure": True})
    m = T.int64()
    z1: R.Tensor((m,), dtype="float32") = R.match_cast(z, R.Tensor((m,), dtype="float32"))
    storage2: R.Object = R.memory.alloc_storage(R.shape([4 * n]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc7: R.Tensor((n,), dtype="float32") = R.memory.alloc_tensor(storage2, R.prim_value(0), R.shape([n]), R.dtype("float32"), R.prim_value(0))
    addn(x, alloc7)
    storage: R.Object = R.memory.alloc_storage(R.shape([4 * n]), R.prim_value(0), R.str("global"), R.dtype("uint8"))
    alloc8: R.Tensor((n,), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n]), R.dtype("float32"), R.prim_value(0))
    R.memory.kill_storage(storage)
    addn(alloc7, alloc8)
    R.memory.kill_tensor(alloc7)
    if flag:
        alloc9: R.Tensor((n,), dtype="float32") = R.memory.alloc_tensor(storage2, R.prim_value(0), R.shape([n]), R.dtype("float32"), R.prim_value(0))
        addn(alloc8, alloc9)
        storage1: R.Object = R.memory.alloc_storage(R.shape([4 * n]), R.prim_value(0), R.str("global"), R.dtype("uint8"))
        alloc10: R.Tensor((n,), dtype="float32") = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([n]), R.dtype("float32"), R.prim_value(0))
        R.memory.kill_storage(storage1)
        addn(alloc9, alloc10)
        R.memory.kill_tensor(alloc9)
        r: R.Tensor((n,), dtype="float32") = alloc10
    else:
        r: R.Tensor((n,), dtype="float32") = alloc8
    storage2_1: R.Object = R.memory.alloc_storage(R.shape([4 * m]), R.prim_value(0), R.str("global"), R.dtype("uint8"))
    alloc11: R.Tensor((m,), dtype="float32") = R.memory.alloc_tensor(storage2_1, R.prim_value(0), R.shape([m]), R.dtype("float32"), R.prim_value(0))
    R.memory.kill_storage(storage2_1)
    addn(z1, alloc11)
    return (r, alloc11)
'''


@pytest.mark.parametrize("step,expected", [("CallTIRRewrite", MAIN_AFTER_CALLTIRREWRITE),
                                           ("StaticPlanBlockMemory", MAIN_AFTER_STATICPLANBLOCKMEMORY),
                                           ("KillAfterLastUse", MAIN_AFTER_KILLAFTERLASTUSE),
                                           ("VMBuiltinLower", MAIN_AFTER_VMBUILTINLOWER)],
                         ids=["CallTIRRewrite", "StaticPlanBlockMemory", "KillAfterLastUse", "VMBuiltinLower"])
def test_each_pass_prints_tvms_text(step: str, expected: str) -> None:
    """a and b share a storage (a dies at b's call), so do c and d; the tuple's int32 field and e
    leave the function, so LowerAllocTensor gives each a uint8 storage of its own (named as TVM's
    printer renames a second ``storage``); kills follow each last use."""
    assert lowered(MODULE, step)["main"].script() + "\n" == expected


@pytest.mark.parametrize("step,expected", [("StaticPlanBlockMemory", DYN_AFTER_STATICPLANBLOCKMEMORY),
                                           ("KillAfterLastUse", DYN_AFTER_KILLAFTERLASTUSE)],
                         ids=["StaticPlanBlockMemory", "KillAfterLastUse"])
def test_symbolic_sizes_and_branches(step: str, expected: str) -> None:
    """A symbolic size plans ``4 * n`` bytes, reused (in a branch too) by a tensor of the same size
    expression; values leaving through the if's result keep their own storage. (TVM 0.27 leaves
    ``storage2_1`` without its kill_storage; here it is killed after its last use, as main's
    ``storage1_1`` is by TVM.)"""
    assert lowered(MODULE, step)["dyn"].script() + "\n" == expected


@pytest.mark.parametrize("step", STEPS)
def test_every_pass_output_reparses_equal(step: str) -> None:
    mod = lowered(MODULE, step)
    assert structural_equal(from_source(mod.script()), mod)


def test_the_pipeline_runs_tvms_passes_in_order() -> None:
    assert repr(P.get_pipeline("vm_lower")) == (
        "<NamedPipeline vm_lower: RewriteDataflowReshape,ToNonDataflow,RemovePurityChecking,CallTIRRewrite,"
        "StaticPlanBlockMemory,LowerAllocTensor,KillAfterLastUse,VMBuiltinLower,ComputePrimValue,VMShapeLower,"
        "AttachGlobalSymbol>")


def test_remove_purity_checking_unwraps_pure_calls() -> None:
    mod = tvmlite.IRModule.from_expr(from_source('''
@R.function
def main(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):
    y = R.call_pure_packed("my_func", x, sinfo_args=R.Tensor((3,), "float32"))
    return y
'''), "main")
    assert P.RemovePurityChecking()(mod)["main"].script() + "\n" == '''\
# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
    R.func_attr({"relax.force_pure": True})
    y: R.Tensor((3,), dtype="float32") = R.call_packed("my_func", x, sinfo_args=(R.Tensor((3,), dtype="float32"),))
    return y
'''


TIR_VARS = '''
@I.ir_module
class Module:
    @T.prim_func
    def fill(a: T.handle, n: T.int64):
        m = T.int64()
        A = T.match_buffer(a, (m,), "float32")
        for i in range(m):
            A[i] = T.Cast("float32", n)

    @R.function
    def main(x: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
        m = T.int64()
        y = R.call_tir(Module.fill, (), out_sinfo=R.Tensor((m,), "float32"), tir_vars=R.shape([m]))
        return y
'''


def test_tir_vars_become_call_tir_dyn() -> None:
    mod = lowered(TIR_VARS, "CallTIRRewrite")
    assert mod["main"].script() + "\n" == '''\
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor(("m",), dtype="float32")) -> R.Tensor(("m",), dtype="float32"):
    m = T.int64()
    R.func_attr({"relax.force_pure": True})
    alloc: R.Tensor((m,), dtype="float32") = R.builtin.alloc_tensor(R.shape([m]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    R.vm.call_tir_dyn(fill, (alloc, R.shape([m])))
    y: R.Tensor((m,), dtype="float32") = alloc
    return y
'''
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(TIR_VARS)))
    np.testing.assert_array_equal(vm["main"](np.zeros(5, "float32")).numpy(), np.full(5, 5, "float32"))


@register_func("test_vm_lower.double_into", override=True)
def _double_into(x: tvmlite.Tensor, out: tvmlite.Tensor) -> None:
    out.copyfrom(x.numpy() * 2)  # the VM passes Tensors sharing its arrays


def test_the_vm_runs_the_lowered_form() -> None:
    """The numbers of the lowered form (kernels on planned storages, a packed call) are numpy's,
    and the same as the graph-level form's."""
    text = MODULE.replace('"my_func"', '"test_vm_lower.double_into"')
    ex = tvmlite.compile(from_source(text))
    assert "R.vm.alloc_storage" in ex.get_source("vm") and "R.call_tir" in ex.get_source("relax")
    x, y = np.arange(6, dtype="float32").reshape(2, 3), np.ones((2, 3), "float32")
    e, t1 = tvmlite.VirtualMachine(ex)["main"](x, y)
    want = ((x + y + y) * 2) * 2 * 2
    np.testing.assert_array_equal(e.numpy(), want)
    np.testing.assert_array_equal(t1.numpy(), np.ones((2, 3), "int32"))
    plain = tvmlite.VirtualMachine(tvmlite.compile(from_source(text), vm_pipeline=None))["main"](x, y)
    np.testing.assert_array_equal(plain[0].numpy(), want)
    flag = np.array(True)
    for f in (True, False):
        r, ez = tvmlite.VirtualMachine(ex)["dyn"](np.zeros(4, "float32"), np.zeros(3, "float32"), np.array(f))
        np.testing.assert_array_equal(r.numpy(), np.full(4, 4 if f else 2, "float32"))
        np.testing.assert_array_equal(ez.numpy(), np.ones(3, "float32"))
    del flag


CHAIN = '''
@I.ir_module
class Module:
    @T.prim_func
    def inc(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        for i in range(1024):
            B[i] = A[i] + T.float32(1)

    @R.function
    def main(x: R.Tensor((1024,), "float32")) -> R.Tensor((1024,), "float32"):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.inc, (x,), out_sinfo=R.Tensor((1024,), "float32"))
            b = R.call_tir(cls.inc, (a,), out_sinfo=R.Tensor((1024,), "float32"))
            c = R.call_tir(cls.inc, (b,), out_sinfo=R.Tensor((1024,), "float32"))
            d = R.call_tir(cls.inc, (c,), out_sinfo=R.Tensor((1024,), "float32"))
            e = R.call_tir(cls.inc, (d,), out_sinfo=R.Tensor((1024,), "float32"))
            R.output(e)
        return e
'''


def test_planned_storages_bound_the_peak() -> None:
    """Five 4 KB results in a chain: two storages take turns (a's is c's again once b's call has
    read a; b's is d's), the output has its own: 12 KB of storage where the graph-level form held
    20 KB. The VM measures 8 KB alive at once: by e's call a's storage has been killed and c, the
    last tensor in it, too."""
    ex = tvmlite.compile(from_source(CHAIN))
    assert ex.get_source("vm").count("R.vm.alloc_storage") == 3
    assert bench_models.storage_bytes(ex.vm_mod) == 3 * 4096
    assert bench_models.unplanned_bytes(ex.mod) == 5 * 4096
    vm = tvmlite.VirtualMachine(ex, track_memory=True)
    x = np.zeros(1024, "float32")
    assert vm.peak_bytes("main", x) == 2 * 4096
    np.testing.assert_array_equal(vm["main"](x).numpy(), np.full(1024, 5, "float32"))
    with pytest.raises(ValueError, match="track_memory=True"):
        tvmlite.VirtualMachine(ex).peak_bytes("main", x)


RECORD = '''
@I.ir_module
class Module:
    @T.prim_func
    def big(A: T.Buffer((4,), "float32"), B: T.Buffer((65536,), "float32")):
        for i in range(65536):
            B[i] = A[i % 4]

    @T.prim_func
    def first(A: T.Buffer((65536,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i]

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        a = R.call_tir(cls.big, (x,), out_sinfo=R.Tensor((65536,), "float32"))
        b = R.call_tir(cls.first, (a,), out_sinfo=R.Tensor((4,), "float32"))
        _ = R.call_packed("test_vm_lower.record_live", b, sinfo_args=R.Object)
        return b
'''

LIVE: list[int] = []


def test_kills_release_storage_before_the_function_ends() -> None:
    """After a's last use its 256 KB storage is killed: when the packed call runs, only b's
    storage (16 bytes) is alive."""
    ex = tvmlite.compile(from_source(RECORD))
    assert "R.vm.kill_object(alloc)" in ex.get_source("vm")
    vm = tvmlite.VirtualMachine(ex, track_memory=True)
    register_func("test_vm_lower.record_live", lambda b: LIVE.append(vm.memory.live), override=True)
    assert vm.peak_bytes("main", np.ones(4, "float32")) == 262144 + 16
    assert LIVE == [16]


def test_the_mlp_plan_is_tvms() -> None:
    """The lowered MLP as the VM runs it; TVM's StaticPlanBlockMemory + LowerAllocTensor give the same
    module 1064 bytes of storage (1024 + 40), tvmlite's too, and that is the measured peak."""
    ex = tvmlite.compile(from_source(bench_models.MLP_TEXT))
    text = ex.get_source("vm")
    main = text[text.index("    @R.function"):] + "\n"
    assert main == '''\
    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), p_fc1_weight: R.Tensor((256, 784), dtype="float32"), p_fc1_bias: R.Tensor((256,), dtype="float32"), p_fc2_weight: R.Tensor((10, 256), dtype="float32"), p_fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({"num_input": 1, "relax.force_pure": True})
        cls = Module
        shape_heap: R.Object = R.null_value()
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(2), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((1, 784), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_tensor_info", p_fc1_weight, R.prim_value(2), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[1], param=p_fc1_weight, annotation=R.Tensor((256, 784), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_tensor_info", p_fc1_bias, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[2], param=p_fc1_bias, annotation=R.Tensor((256,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_tensor_info", p_fc2_weight, R.prim_value(2), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[3], param=p_fc2_weight, annotation=R.Tensor((10, 256), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_tensor_info", p_fc2_bias, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[4], param=p_fc2_bias, annotation=R.Tensor((10,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(2), R.prim_value(0), R.prim_value(1), R.prim_value(0), R.prim_value(784), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((1, 784), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", p_fc1_weight, shape_heap, R.prim_value(2), R.prim_value(0), R.prim_value(256), R.prim_value(0), R.prim_value(784), R.str("ErrorContext(fn=main, loc=param[1], param=p_fc1_weight, annotation=R.Tensor((256, 784), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", p_fc1_bias, shape_heap, R.prim_value(1), R.prim_value(0), R.prim_value(256), R.str("ErrorContext(fn=main, loc=param[2], param=p_fc1_bias, annotation=R.Tensor((256,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", p_fc2_weight, shape_heap, R.prim_value(2), R.prim_value(0), R.prim_value(10), R.prim_value(0), R.prim_value(256), R.str("ErrorContext(fn=main, loc=param[3], param=p_fc2_weight, annotation=R.Tensor((10, 256), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", p_fc2_bias, shape_heap, R.prim_value(1), R.prim_value(0), R.prim_value(10), R.str("ErrorContext(fn=main, loc=param[4], param=p_fc2_bias, annotation=R.Tensor((10,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        storage: R.Object = R.vm.alloc_storage(R.shape([1024]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        alloc: R.Tensor((1, 256), dtype="float32") = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([1, 256]), R.dtype("float32"), R.prim_value(0))
        R.vm.kill_object(storage)
        cls.fused_transpose_matmul_add_relu(x, p_fc1_weight, p_fc1_bias, alloc)
        storage_1: R.Object = R.vm.alloc_storage(R.shape([40]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        alloc1: R.Tensor((1, 10), dtype="float32") = R.vm.alloc_tensor(storage_1, R.prim_value(0), R.shape([1, 10]), R.dtype("float32"), R.prim_value(0))
        R.vm.kill_object(storage_1)
        cls.fused_transpose1_matmul1_add1(alloc, p_fc2_weight, p_fc2_bias, alloc1)
        R.vm.kill_object(alloc)
        return alloc1
'''
    vm = tvmlite.VirtualMachine(ex, track_memory=True)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in [(1, 784), (256, 784), (256,), (10, 256), (10,)]]
    assert vm.peak_bytes("main", *args) == 1064
    x, w1, b1, w2, b2 = args
    np.testing.assert_allclose(vm["main"](*args).numpy(), np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, rtol=1e-4,
                               atol=1e-5)


INPLACE = '''
@I.ir_module
class Module:
    @T.prim_func
    def inc(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)
            B[i] = A[i]

    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        for i in range(4):
            C[i] = A[i] + B[i]

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Module
        a = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), "float32"))
        t = R.call_tir_inplace(cls.inc, (a,), [0, -1], [R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        b = t[1]
        c = R.call_tir(cls.add, (b, b), out_sinfo=R.Tensor((4,), "float32"))
        return c
'''


def test_call_tir_inplace_writes_into_its_input() -> None:
    """Only the -1 output is allocated; the tuple holds the input itself, and its kill follows the
    tuple, its last use (TVM's text)."""
    assert lowered(INPLACE, "KillAfterLastUse")["main"].script() + "\n" == '''\
# from tvmlite.script import relax as R

@R.function
def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    R.func_attr({"relax.force_pure": True})
    storage: R.Object = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc: R.Tensor((4,), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([4]), R.dtype("float32"), R.prim_value(0))
    R.memory.kill_storage(storage)
    add(x, x, alloc)
    storage1: R.Object = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc1: R.Tensor((4,), dtype="float32") = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([4]), R.dtype("float32"), R.prim_value(0))
    R.memory.kill_storage(storage1)
    inc(alloc, alloc1)
    t: R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")) = alloc, alloc1
    R.memory.kill_tensor(alloc)
    storage_1: R.Object = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("uint8"))
    alloc2: R.Tensor((4,), dtype="float32") = R.memory.alloc_tensor(storage_1, R.prim_value(0), R.shape([4]), R.dtype("float32"), R.prim_value(0))
    R.memory.kill_storage(storage_1)
    add(alloc1, alloc1, alloc2)
    R.memory.kill_tensor(alloc1)
    return alloc2
'''
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(INPLACE)))
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(vm["main"](x).numpy(), 2 * (2 * x + 1))


def test_attach_global_symbol_makes_private_functions_public() -> None:
    """Every function gets the global symbol of its name, so none prints private (TVM's text)."""
    mod = from_source('''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def k(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    @R.function(private=True)
    def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        y = cls.helper(x)
        return y
''')
    out = P.AttachGlobalSymbol()(mod)
    assert out.script() + "\n" == '''\
# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def k(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1.0)

    @R.function
    def helper(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return x

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        y: R.Tensor((4,), dtype="float32") = cls.helper(x)
        return y
'''
    assert [out[n].attrs["global_symbol"] for n in ("k", "helper", "main")] == ["k", "helper", "main"]
