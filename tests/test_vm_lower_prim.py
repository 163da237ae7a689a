"""VMShapeLower's R.Prim values (passes/vm_lower/shape_lower.py) as text, and the VM running
them (backend/vm_shape.py).

The expected texts are Apache TVM 0.27's ``relax.transform.VMShapeLower`` outputs (after
ToNonDataflow, RemovePurityChecking and ComputePrimValue) in tvmlite's spelling, as in
tests/test_vm_lower_shape.py. TVM 0.27's script has no ``R.Prim(value=...)``: a Relax variable
of a prim type is itself the symbolic variable (``def main(n: T.int64, x: R.Tensor((n,), ...))``),
which tvmlite spells ``n: R.Prim(value="n")``; its ErrorContext shows the annotation as
``T.int64``. Two things in 0.27's texts come from that unified variable and are not in
tvmlite's: 0.27 gives each prim-typed binding a heap slot of its own
(``match_prim_value(gv_1, shape_heap, 1, 1, R.str(""))``) and returns it re-read by
``make_prim_value``; and a returned prim parameter is re-read the same way. tvmlite's variables
keep their ``R.Prim(value=...)`` struct info instead, so the heap has the symbolic sizes only,
and a result the body does not prove is checked against the annotation
(``loc=return``), as for shapes. KNOWN is not expressible in 0.27 (a parameter cannot be named
after a size another one defines, nor annotated ``n * 2``); its calls follow the same rules."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.runtime import ArgumentError
from tvmlite.backend.vm_frame import MatchCastError
from tvmlite.ir.structural import structural_equal
from tvmlite.script import from_source

STEPS = ["ToNonDataflow", "RemovePurityChecking", "ComputePrimValue"]

H = '''# from tvmlite.script import ir as I
# from tvmlite.script import tir as T
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
'''

CASES = {
"PARAM": '''    def main(n: R.Prim(value="n"), x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        return x
''',
"NO_VAR": '''    def main(p: R.Prim("int64"), x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x
''',
"RETURN": '''    def main(k: R.Prim(value="n"), x: R.Tensor(("n",), "float32")):
        n = T.int64()
        return R.prim_value(n * 2)
''',
"MATCH_CAST": '''    def main(p: R.Prim("int64")):
        m = T.int64()
        q = R.match_cast(p, R.Prim(value=m))
        return q
''',
"KNOWN": '''    def main(x: R.Tensor(("n",), "float32"), k: R.Prim(value="n"), j: R.Prim(value="n * 2")) -> R.Tensor(("n",), "float32"):
        return x
''',
"CHECKED_RETURN": '''    def main(x: R.Tensor(("n",), "float32")) -> R.Prim(value="n"):
        n = T.int64()
        y = R.prim_value(n)
        return y
''',
}

PARAM_LOWERED = '''@I.ir_module
class Module:
    @R.function
    def main(n_1: R.Prim(value="n"), x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        R.func_attr({"relax.force_pure": True})
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(1),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_prim_value_info", n_1, R.dtype("int64"), R.str("ErrorContext(fn=main, loc=param[0], param=n, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[1], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_prim_value", n_1, shape_heap, R.prim_value(1), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[0], param=n, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(1), R.prim_value(3), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[1], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        return x'''

NO_VAR_LOWERED = '''@I.ir_module
class Module:
    @R.function
    def main(p: R.Prim("int64"), x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        R.func_attr({"relax.force_pure": True})
        shape_heap: R.Object = R.null_value()
        R.call_packed("vm.builtin.check_prim_value_info", p, R.dtype("int64"), R.str("ErrorContext(fn=main, loc=param[0], param=p, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[1], param=x, annotation=R.Tensor((2,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(1), R.prim_value(0), R.prim_value(2), R.str("ErrorContext(fn=main, loc=param[1], param=x, annotation=R.Tensor((2,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        return x'''

RETURN_LOWERED = '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def compute_symbolic_expr(n: T.int64) -> T.int64:
        T.func_attr({"tirx.is_host_func": True})
        return n * T.int64(2)

    @R.function
    def main(k: R.Prim(value="n"), x: R.Tensor(("n",), dtype="float32")) -> R.Prim("int64"):
        n = T.int64()
        R.func_attr({"relax.force_pure": True})
        cls = Module
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(1),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_prim_value_info", k, R.dtype("int64"), R.str("ErrorContext(fn=main, loc=param[0], param=k, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[1], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_prim_value", k, shape_heap, R.prim_value(1), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[0], param=k, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(1), R.prim_value(3), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[1], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        gv: R.Prim("int64") = R.call_packed("vm.builtin.make_prim_value", shape_heap, R.prim_value(1), R.prim_value(0), sinfo_args=(R.Prim("int64"),))
        gv_1: R.Prim("int64") = cls.compute_symbolic_expr(gv)
        return gv_1'''

MATCH_CAST_LOWERED = '''@I.ir_module
class Module:
    @R.function
    def main(p: R.Prim("int64")) -> R.Prim("int64"):
        R.func_attr({"relax.force_pure": True})
        m = T.int64()
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(1),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_prim_value_info", p, R.dtype("int64"), R.str("ErrorContext(fn=main, loc=param[0], param=p, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        q: R.Prim(value=m) = R.match_cast(p, R.Prim(value=m))
        R.call_packed("vm.builtin.match_prim_value", q, shape_heap, R.prim_value(1), R.prim_value(0), R.str("ErrorContext(match_cast, ty=T.int64) "), sinfo_args=(R.Tuple,))
        return q'''

KNOWN_LOWERED = '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def shape_func(H: T.Buffer((T.int64(2),), "int64")):
        T.func_attr({"tirx.is_host_func": True})
        H[T.int64(1)] = H[T.int64(0)] * T.int64(2)

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32"), k: R.Prim(value="n"), j: R.Prim(value="n * 2")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        R.func_attr({"relax.force_pure": True})
        cls = Module
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(2),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_prim_value_info", k, R.dtype("int64"), R.str("ErrorContext(fn=main, loc=param[1], param=k, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.check_prim_value_info", j, R.dtype("int64"), R.str("ErrorContext(fn=main, loc=param[2], param=j, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_prim_value", k, shape_heap, R.prim_value(3), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[1], param=k, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        cls.shape_func(shape_heap)
        R.call_packed("vm.builtin.match_prim_value", j, shape_heap, R.prim_value(3), R.prim_value(1), R.str("ErrorContext(fn=main, loc=param[2], param=j, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        return x'''

CHECKED_RETURN_LOWERED = '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Prim(value="n"):
        n = T.int64()
        R.func_attr({"relax.force_pure": True})
        shape_heap: R.Tensor(dtype="int64", ndim=1) = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(1),), sinfo_args=(R.Tensor(dtype="int64", ndim=1),))
        R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(1), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(1), R.prim_value(1), R.prim_value(0), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n,), dtype=\\"float32\\")) "), sinfo_args=(R.Tuple,))
        y: R.Prim("int64") = R.call_packed("vm.builtin.make_prim_value", shape_heap, R.prim_value(1), R.prim_value(0), sinfo_args=(R.Prim("int64"),))
        R.call_packed("vm.builtin.match_prim_value", y, shape_heap, R.prim_value(3), R.prim_value(0), R.str("ErrorContext(fn=main, loc=return, annotation=T.int64) "), sinfo_args=(R.Tuple,))
        return y'''

EXPECTED = {name: globals()[f"{name}_LOWERED"] for name in CASES}


def lower(text: str) -> tvmlite.IRModule:
    """The module after ``STEPS``, then VMShapeLower."""
    return P.Sequential([*(P.get_pass(s) for s in STEPS), P.VMShapeLower()])(from_source(text))


def printed(mod: tvmlite.IRModule) -> str:
    """The printed module from ``@I.ir_module`` on."""
    text = mod.script()
    return text[text.index("@I.ir_module"):]


IDS = list(CASES)


@pytest.mark.parametrize("name", IDS)
def test_prim_values_print_tvms_text(name: str) -> None:
    assert printed(lower(H + CASES[name])) == EXPECTED[name]


@pytest.mark.parametrize("name", IDS)
def test_prim_value_output_reparses_equal(name: str) -> None:
    mod = lower(H + CASES[name])
    assert structural_equal(from_source(mod.script()), mod)


def vm(name: str) -> tvmlite.VirtualMachine:
    """The case compiled (whole build) for the VM."""
    ex = tvmlite.compile(from_source(H + CASES[name]))
    assert "vm.builtin.alloc_shape_heap" in ex.get_source("vm") or name == "NO_VAR"
    return tvmlite.VirtualMachine(ex)


def test_a_prim_parameter_defines_the_size() -> None:
    """n comes from the R.Prim argument; x's size must then equal it."""
    run = vm("PARAM")["main"]
    np.testing.assert_array_equal(run(3, np.arange(3, dtype="float32")).numpy(), np.arange(3))
    with pytest.raises(ArgumentError, match=r"main: parameter 'x' expects shape \(n,\), got shape \(3,\): dim 0 "
                                            r"is 3, but n is 4 \(from parameter 'n'\)$"):
        run(4, np.zeros(3, "float32"))


def test_a_prim_parameter_without_a_variable_is_only_checked() -> None:
    run = vm("NO_VAR")["main"]
    np.testing.assert_array_equal(run(5, np.ones(2, "float32")).numpy(), np.ones(2))
    with pytest.raises(ArgumentError, match=r"main: parameter 'p' expects a int64 scalar \(R.Prim\('int64'\)\), "
                                            r"got float 5.5"):
        run(5.5, np.ones(2, "float32"))


def test_a_returned_prim_value_is_computed_from_the_heap() -> None:
    """make_prim_value reads n from the heap; compute_symbolic_expr doubles it."""
    run = vm("RETURN")["main"]
    assert run(3, np.zeros(3, "float32")) == 6
    assert run(11, np.zeros(11, "float32")) == 22
    run = vm("CHECKED_RETURN")["main"]
    assert run(np.zeros(4, "float32")) == 4


def test_prim_parameters_must_equal_the_known_sizes() -> None:
    """k must equal n (from x), j must equal n * 2: the messages name the parameter, the
    expected value against the one given."""
    run = vm("KNOWN")["main"]
    np.testing.assert_array_equal(run(np.ones(3, "float32"), 3, 6).numpy(), np.ones(3))
    with pytest.raises(ArgumentError, match=r"main: parameter 'k' expects R.Prim\(value=n\), got 4: the value is 4, "
                                            r"but n is 3 \(from parameter 'x' dim 0\)$"):
        run(np.ones(3, "float32"), 4, 6)
    with pytest.raises(ArgumentError, match=r"main: parameter 'j' expects R.Prim\(value=n \* 2\), got 7: the value "
                                            r"is 7, but n \* 2 is 6$"):
        run(np.ones(3, "float32"), 3, 7)


def test_a_prim_match_cast_defines_then_checks() -> None:
    """match_cast to R.Prim(value=m): a new m is stored; a known m must be equal."""
    assert vm("MATCH_CAST")["main"](7) == 7
    text = H + CASES["MATCH_CAST"].replace('def main(p: R.Prim("int64")):',
                                           'def main(x: R.Tensor(("m",), "float32"), p: R.Prim("int64")):')
    ex = tvmlite.compile(from_source(text))
    assert ('R.call_packed("vm.builtin.match_prim_value", q, shape_heap, R.prim_value(3), R.prim_value(0), '
            'R.str("ErrorContext(match_cast, ty=T.int64) "), sinfo_args=(R.Tuple,))') in ex.get_source("vm")
    run = tvmlite.VirtualMachine(ex)["main"]
    assert run(np.zeros(3, "float32"), 3) == 3
    with pytest.raises(MatchCastError, match=r"main: R.match_cast of 'q' expects R.Prim\(value=m\), got 4: the value "
                                             r"is 4, but m is 3 \(from parameter 'x' dim 0\)\n  while computing 'q' in main$"):
        run(np.zeros(3, "float32"), 4)


def test_known_prim_parameters_add_no_steps() -> None:
    """The entry check already compares k and j: their match_prim_value calls are merged into it."""
    machine = vm("KNOWN")
    body = machine._plans["main"].body
    cells = [c.cell_contents for c in (body.__closure__ or ())]
    steps = next(c for c in cells if isinstance(c, list))
    # the heap, x's sizes stored, the shape_func: three steps, none for k and j
    assert len(steps) == 3
