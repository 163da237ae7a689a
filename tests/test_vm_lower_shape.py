"""VMShapeLower (passes/vm_lower/shape_lower.py) as text, and the VM running what it prints
(backend/vm_shape.py).

The expected texts are Apache TVM 0.27's ``relax.transform.VMShapeLower`` outputs for the same
modules (after ToNonDataflow and RemovePurityChecking; LOWERED_CALLS after TVM's whole build up to
VMShapeLower), in tvmlite's spelling: ``R.prim_value(2)`` for TVM's bare ``2``, ``sinfo_args=``
for 0.27's ``ty_args=``, ``R.Object`` for ``R.Any``, ``@T.prim_func(private=True)`` for
``@T.prim_func(private=True, s_tir=True)``; the heap slots, the match kinds, the ErrorContext
strings (TVM's legacy ``T.Tuple(...)`` annotation for tuples included) and the order of the
calls are TVM's."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.runtime import ArgumentError
from tvmlite.backend.vm_frame import MatchCastError
from tvmlite.ir.structural import structural_equal
from tvmlite.script import from_source

BEFORE = ["ToNonDataflow", "RemovePurityChecking"]
BUILD = ["ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite", "StaticPlanBlockMemory", "LowerAllocTensor",
         "KillAfterLastUse", "VMBuiltinLower"]


# static shapes: checks against constants, the heap a null value
STATIC = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        return x
'''

STATIC_LOWERED = '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        R.func_attr({"relax.force_pure": True})
        shape_heap: R.Object = R.null_value()
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(2), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((2, 3), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(2), R.prim_value(0), R.prim_value(2), R.prim_value(0), R.prim_value(3), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((2, 3), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        return x'''


# a symbolic parameter R.Tensor(("n", 784)): n stored in heap slot 0, a shape of n made from the heap and the result matched against the annotation
SYMBOLIC = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 784), "float32")) -> R.Shape(ndim=2):
        n = T.int64()
        s = R.shape([n, 784])
        return s
'''

SYMBOLIC_LOWERED = '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32")) -> R.Shape(["n", 784]):
        n = T.int64()
        R.func_attr({"relax.force_pure": True})
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(1),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(2), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 784), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(2), R.prim_value(1), R.prim_value(0), R.prim_value(0), R.prim_value(784), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 784), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        s: R.Shape(ndim=2) = R.call_packed("vm.builtin.make_shape", shape_heap, R.prim_value(2), R.prim_value(1), R.prim_value(0), R.prim_value(0), R.prim_value(784), sinfo_args=(R.Shape(ndim=2),))
        R.call_packed("vm.builtin.match_shape", s, shape_heap, R.prim_value(2), R.prim_value(3), R.prim_value(0), R.prim_value(0), R.prim_value(784), R.str("ErrorContext(fn=main, loc=return, annotation=R.Shape([n, 784])) "), sinfo_args=(R.Tuple,))
        return s'''


# match_cast to a new symbolic variable: its match_shape stores m
MATCH_CAST = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(ndim=1, dtype="float32")) -> R.Tensor(ndim=1, dtype="float32"):
        m = T.int64()
        y = R.match_cast(x, R.Tensor((m,), "float32"))
        return y
'''

MATCH_CAST_LOWERED = '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(dtype="float32", ndim=1)) -> R.Tensor(dtype="float32", ndim=1):
        R.func_attr({"relax.force_pure": True})
        m = T.int64()
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(1),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor(dtype=\\"float32\\", ndim=1)) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(0), R.str("ErrorContext(match_cast, ty=R.Tensor((m,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        y: R.Tensor((m,), dtype="float32") = R.match_cast(x, R.Tensor((m,), dtype="float32"))
        return y'''


# a size computed from n (n * 2): a generated host shape_func writes it into the heap
COMPUTED = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Shape(ndim=1):
        n = T.int64()
        s = R.shape([n * 2])
        return s
'''

COMPUTED_LOWERED = '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def shape_func(H: T.Buffer((T.int64(2),), "int64")):
        T.func_attr({"tirx.is_host_func": True})
        H[T.int64(1)] = H[T.int64(0)] * T.int64(2)

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Shape(["n * 2"]):
        n = T.int64()
        R.func_attr({"relax.force_pure": True})
        cls = Module
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(2),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        cls.shape_func(shape_heap)
        s: R.Shape(ndim=1) = R.call_packed("vm.builtin.make_shape", shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(1), sinfo_args=(R.Shape(ndim=1),))
        R.call_packed("vm.builtin.match_shape", s, shape_heap, R.prim_value(1), R.prim_value(3), R.prim_value(1), R.str("ErrorContext(fn=main, loc=return, annotation=R.Shape([n * 2])) "), sinfo_args=(R.Tuple,))
        return s'''


# R.Prim and R.Shape parameters, a compound size a * b
PRIM_AND_SHAPE = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(p: R.Prim("int64"), s: R.Shape(["a", "b"]), q: R.Prim("float32")) -> R.Shape(ndim=3):
        a = T.int64()
        b = T.int64()
        r = R.shape([a, b, a * b])
        return r
'''

PRIM_AND_SHAPE_LOWERED = '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def shape_func(H: T.Buffer((T.int64(3),), "int64")):
        T.func_attr({"tirx.is_host_func": True})
        H[T.int64(2)] = H[T.int64(0)] * H[T.int64(1)]

    @R.function
    def main(p: R.Prim("int64"), s: R.Shape(["a", "b"]), q: R.Prim("float32")) -> R.Shape(["a", "b", "a * b"]):
        a = T.int64()
        b = T.int64()
        R.func_attr({"relax.force_pure": True})
        cls = Module
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(3),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_prim_value_info", p, R.dtype("int64"), R.str("ErrorContext(fn=main, loc=param[0], param=p, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_shape_info", s, R.prim_value(2), R.str("ErrorContext(fn=main, loc=param[1], param=s, annotation=R.Shape([a, b])) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_prim_value_info", q, R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[2], param=q, annotation=T.float32) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", s, shape_heap, R.prim_value(2), R.prim_value(1), R.prim_value(0), R.prim_value(1), R.prim_value(1), R.str("ErrorContext(fn=main, loc=param[1], param=s, annotation=R.Shape([a, b])) "), sinfo_args=(R.Tuple,))
        cls.shape_func(shape_heap)
        r: R.Shape(ndim=3) = R.call_packed("vm.builtin.make_shape", shape_heap, R.prim_value(3), R.prim_value(1), R.prim_value(0), R.prim_value(1), R.prim_value(1), R.prim_value(1), R.prim_value(2), sinfo_args=(R.Shape(ndim=3),))
        R.call_packed("vm.builtin.match_shape", r, shape_heap, R.prim_value(3), R.prim_value(3), R.prim_value(0), R.prim_value(3), R.prim_value(1), R.prim_value(3), R.prim_value(2), R.str("ErrorContext(fn=main, loc=return, annotation=R.Shape([a, b, a * b])) "), sinfo_args=(R.Tuple,))
        return r'''


# a tuple parameter: check_tuple_info, then each field taken out and checked
TUPLE = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(t: R.Tuple(R.Tensor(("n", 2), "float32"), R.Tensor(("n",), "int32"))) -> R.Shape(ndim=1):
        n = T.int64()
        r = R.shape([n])
        return r
'''

TUPLE_LOWERED = '''@I.ir_module
class Module:
    @R.function
    def main(t: R.Tuple(R.Tensor(("n", 2), dtype="float32"), R.Tensor(("n",), dtype="int32"))) -> R.Shape(["n"]):
        n = T.int64()
        R.func_attr({"relax.force_pure": True})
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(1),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_tuple_info", t, R.prim_value(2), R.str("ErrorContext(fn=main, loc=param[0], param=t, annotation=T.Tuple(R.Tensor((n, T.int64(2)), dtype=\\"float32\\"), R.Tensor((n,), dtype=\\"int32\\"))) "), sinfo_args=(R.Tuple,))
        gv: R.Tensor((n, 2), dtype="float32") = t[0]
        R.call_packed("vm.builtin.check_tensor_info", gv, R.prim_value(2), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=t, annotation=T.Tuple(R.Tensor((n, T.int64(2)), dtype=\\"float32\\"), R.Tensor((n,), dtype=\\"int32\\"))) "), sinfo_args=(R.Tuple,))
        gv1: R.Tensor((n,), dtype="int32") = t[1]
        R.call_packed("vm.builtin.check_tensor_info", gv1, R.prim_value(1), R.dtype("int32"), R.str("ErrorContext(fn=main, loc=param[0], param=t, annotation=T.Tuple(R.Tensor((n, T.int64(2)), dtype=\\"float32\\"), R.Tensor((n,), dtype=\\"int32\\"))) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", gv, shape_heap, R.prim_value(2), R.prim_value(1), R.prim_value(0), R.prim_value(0), R.prim_value(2), R.str("ErrorContext(fn=main, loc=param[0], param=t, annotation=T.Tuple(R.Tensor((n, T.int64(2)), dtype=\\"float32\\"), R.Tensor((n,), dtype=\\"int32\\"))) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", gv1, shape_heap, R.prim_value(1), R.prim_value(3), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[0], param=t, annotation=T.Tuple(R.Tensor((n, T.int64(2)), dtype=\\"float32\\"), R.Tensor((n,), dtype=\\"int32\\"))) "), sinfo_args=(R.Tuple,))
        r: R.Shape(ndim=1) = R.call_packed("vm.builtin.make_shape", shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(0), sinfo_args=(R.Shape(ndim=1),))
        R.call_packed("vm.builtin.match_shape", r, shape_heap, R.prim_value(1), R.prim_value(3), R.prim_value(0), R.str("ErrorContext(fn=main, loc=return, annotation=R.Shape([n])) "), sinfo_args=(R.Tuple,))
        return r'''


# after the whole vm_lower pipeline: the storages' symbolic shapes made by make_shape, a tuple result checked field by field
LOWERED_CALLS = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def addn(a: T.handle, b: T.handle):
        m = T.int64()
        A = T.match_buffer(a, (m,), "float32")
        B = T.match_buffer(b, (m,), "float32")
        for i in range(m):
            B[i] = A[i] + T.float32(1)

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        cls = Module
        a = R.call_tir(cls.addn, (x,), out_sinfo=R.Tensor((n,), "float32"))
        s = R.shape([n * 2, n])
        return (a, s)
'''

LOWERED_CALLS_LOWERED = '''@I.ir_module
class Module:
    @T.prim_func
    def addn(a: T.handle, b: T.handle):
        m = T.int64()
        A = T.match_buffer(a, (m,))
        B = T.match_buffer(b, (m,))
        for i in range(m):
            B[i] = A[i] + T.float32(1.0)

    @T.prim_func(private=True)
    def shape_func(H: T.Buffer((T.int64(3),), "int64")):
        T.func_attr({"tirx.is_host_func": True})
        H[T.int64(1)] = T.int64(4) * H[T.int64(0)]
        H[T.int64(2)] = H[T.int64(0)] * T.int64(2)

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tuple(R.Tensor(("n",), dtype="float32"), R.Shape(["n * 2", "n"])):
        n = T.int64()
        R.func_attr({"relax.force_pure": True})
        cls = Module
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(3),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        cls.shape_func(shape_heap)
        gv: R.Shape(ndim=1) = R.call_packed("vm.builtin.make_shape", shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(1), sinfo_args=(R.Shape(ndim=1),))
        storage: R.Object = R.vm.alloc_storage(gv, R.prim_value(0), R.dtype("uint8"), R.str("global"))
        gv1: R.Shape(ndim=1) = R.call_packed("vm.builtin.make_shape", shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(0), sinfo_args=(R.Shape(ndim=1),))
        alloc: R.Tensor(dtype="float32", ndim=1) = R.vm.alloc_tensor(storage, R.prim_value(0), gv1, R.dtype("float32"), R.prim_value(0))
        R.vm.kill_object(storage)
        cls.addn(x, alloc)
        s: R.Shape(ndim=2) = R.call_packed("vm.builtin.make_shape", shape_heap, R.prim_value(2), R.prim_value(1), R.prim_value(2), R.prim_value(1), R.prim_value(0), sinfo_args=(R.Shape(ndim=2),))
        R.call_packed("vm.builtin.match_shape", alloc, shape_heap, R.prim_value(1), R.prim_value(3), R.prim_value(0), R.str("ErrorContext(fn=main, loc=return, annotation=T.Tuple(R.Tensor((n,), dtype=\\"float32\\"), R.Shape([n * T.int64(2), n]))) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", s, shape_heap, R.prim_value(2), R.prim_value(3), R.prim_value(2), R.prim_value(3), R.prim_value(0), R.str("ErrorContext(fn=main, loc=return, annotation=T.Tuple(R.Tensor((n,), dtype=\\"float32\\"), R.Shape([n * T.int64(2), n]))) "), sinfo_args=(R.Tuple,))
        return (alloc, s)'''


def lower(text: str, steps: list[str]) -> tvmlite.IRModule:
    """The module after ``steps``, then VMShapeLower."""
    return P.Sequential([*(P.get_pass(s) for s in steps), P.VMShapeLower()])(from_source(text))


def body(mod: tvmlite.IRModule) -> str:
    """The printed module from ``@I.ir_module`` on."""
    text = mod.script()
    return text[text.index("@I.ir_module"):]


CASES = [(STATIC, STATIC_LOWERED, BEFORE), (SYMBOLIC, SYMBOLIC_LOWERED, BEFORE),
         (MATCH_CAST, MATCH_CAST_LOWERED, BEFORE), (COMPUTED, COMPUTED_LOWERED, BEFORE),
         (PRIM_AND_SHAPE, PRIM_AND_SHAPE_LOWERED, BEFORE), (TUPLE, TUPLE_LOWERED, BEFORE),
         (LOWERED_CALLS, LOWERED_CALLS_LOWERED, BUILD)]
IDS = ["static", "symbolic", "match_cast", "computed", "prim_and_shape", "tuple", "lowered_calls"]


@pytest.mark.parametrize("text,expected,steps", CASES, ids=IDS)
def test_vm_shape_lower_prints_tvms_text(text: str, expected: str, steps: list[str]) -> None:
    assert body(lower(text, steps)) == expected


@pytest.mark.parametrize("text,expected,steps", CASES, ids=IDS)
def test_vm_shape_lower_output_reparses_equal(text: str, expected: str, steps: list[str]) -> None:
    mod = lower(text, steps)
    assert structural_equal(from_source(mod.script()), mod)


def test_the_vm_runs_the_heap_built_ins() -> None:
    """make_shape reads the sizes match_shape stored and shape_func computed: the shapes come out
    of the heap, and the kernel writes into the storage of the make_shape'd size."""
    ex = tvmlite.compile(from_source(LOWERED_CALLS))
    assert 'R.call_packed("vm.builtin.make_shape"' in ex.get_source("vm")
    vm = tvmlite.VirtualMachine(ex)
    x = np.arange(5, dtype="float32")
    a, s = vm["main"](x)
    np.testing.assert_array_equal(a.numpy(), x + 1)
    assert s == (10, 5)


def test_computed_and_stored_sizes_come_back() -> None:
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(PRIM_AND_SHAPE)))
    assert vm["main"](7, (3, 4), 1.5) == (3, 4, 12)
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(TUPLE)))
    assert vm["main"]((np.zeros((6, 2), "float32"), np.zeros(6, "int32"))) == (6,)


def test_argument_errors_stay_the_vms() -> None:
    """The prologue's checks of a parameter are the VM's entry check: the same errors, naming the
    parameter, before anything runs."""
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(TUPLE)))
    with pytest.raises(ArgumentError, match=r"main: parameter 't' field 1 expects shape \(n,\), got shape \(5,\)"):
        vm["main"]((np.zeros((6, 2), "float32"), np.zeros(5, "int32")))
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(STATIC)))
    with pytest.raises(ArgumentError, match=r"main: parameter 'x' expects shape \(2, 3\), got shape \(3, 2\)"):
        vm["main"](np.zeros((3, 2), "float32"))


def test_a_failed_match_cast_is_reported_as_the_bindings() -> None:
    """match_shape finds the mismatch; the message is the R.match_cast binding's (its name, the
    expected size against the one given)."""
    text = MATCH_CAST.replace('R.Tensor((m,), "float32")', 'R.Tensor((3,), "float32")').replace(
        "        m = T.int64()\n", "")
    vm = tvmlite.VirtualMachine(tvmlite.compile(from_source(text)))
    np.testing.assert_array_equal(vm["main"](np.ones(3, "float32")).numpy(), np.ones(3))
    with pytest.raises(MatchCastError, match=r"R.match_cast of 'y' expects shape \(3,\), got shape \(4,\)"):
        vm["main"](np.ones(4, "float32"))


def test_parameter_checks_merge_into_the_entry_step() -> None:
    """The static MLP's prologue (check_tensor_info and match_shape of each parameter against
    constants) adds no step: the plan runs as many steps as without VMShapeLower."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_models

    mod = from_source(bench_models.MLP_TEXT)
    without = P.Sequential([P.get_pass(s) for s in BUILD] + [P.AttachGlobalSymbol()])
    ex_with, ex_without = tvmlite.compile(mod), tvmlite.compile(mod, vm_pipeline=without)
    assert "vm.builtin.match_shape" in ex_with.get_source("vm")
    assert "vm.builtin.match_shape" not in ex_without.get_source("vm")
    steps = [_steps(tvmlite.VirtualMachine(ex)) for ex in (ex_with, ex_without)]
    assert steps[0] == steps[1]
    args = [np.random.rand(*[int(d.value) for d in p.struct_info.shape]).astype("float32")
            for p in mod["main"].params]
    vms = [tvmlite.VirtualMachine(ex)["main"] for ex in (ex_with, ex_without)]
    np.testing.assert_array_equal(vms[0](*args).numpy(), vms[1](*args).numpy())


def _steps(vm: tvmlite.VirtualMachine) -> int:
    """The number of steps of main's plan."""
    plan = vm._plans["main"]
    body = plan.body if plan.native is None else plan.native.steps  # the step path, also of a native plan
    cells = [c.cell_contents for c in (body.__closure__ or ())]
    return next(len(c) for c in cells if isinstance(c, list))


def test_a_size_repeated_in_one_shape_is_stored_then_checked() -> None:
    """(m, 7, 3, m): dim 0 stores m into the heap, dim 3 must then equal it."""
    text = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("m", 7, 3, "m"), "float32")) -> R.Shape(ndim=2):
        m = T.int64()
        return R.shape([m, m * 3])
'''
    ex = tvmlite.compile(from_source(text))
    assert ('R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(4), R.prim_value(1), '
            'R.prim_value(0), R.prim_value(0), R.prim_value(7), R.prim_value(0), R.prim_value(3), R.prim_value(3), '
            'R.prim_value(0), ') in ex.get_source("vm")
    vm = tvmlite.VirtualMachine(ex)
    assert vm["main"](np.zeros((2, 7, 3, 2), "float32")) == (2, 6)
    with pytest.raises(ArgumentError, match=r"main: parameter 'x' expects shape \(m, 7, 3, m\), got shape "
                                            r"\(2, 7, 3, 5\)"):
        vm["main"](np.zeros((2, 7, 3, 5), "float32"))
