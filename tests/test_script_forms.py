"""Ops whose script form is not ``R.op(inputs, attributes)``: the parser binds them from the
declaration in the op registry (input forms, defaults, out_sinfo, script groups), so each prints as
TVM prints it and reads back to the same function."""
from __future__ import annotations

import pytest

from tvmlite.ir import structural_equal
from tvmlite.script.errors import ScriptError
from tvmlite.script.parser import from_source
from script_errors import assert_located_error  # noqa: E402  (tests/script_errors.py)

HEADER = "from tvm.script import ir as I\nfrom tvm.script import relax as R\nfrom tvm.script import tir as T\n\n"

IMPURE = HEADER + '''@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2,), "float32"), c: R.Prim("bool")):
        y = R.hint_on_device(x, R.device(1, 0))
        z = R.hint_on_device(y, R.device("cuda", index=1), "local")
        R.print(x, y, format="{} {}")
        R.print(x)
        R.assert_op(c)
        R.assert_op(c, x, format=R.str("x={}"))
        R.assert_op(c, [x, y], format="x={} {}")
        return z
'''

# What TVM prints for it (its printer writes every default and each attribute by name).
IMPURE_PRINTED = '''    @R.function(pure=False)
    def main(x: R.Tensor((2,), dtype="float32"), c: R.Prim("bool")) -> R.Tensor((2,), dtype="float32"):
        y: R.Tensor((2,), dtype="float32") = R.hint_on_device(x, R.device(device_type=1, index=0), "global")
        z: R.Tensor((2,), dtype="float32") = R.hint_on_device(y, R.device(device_type=2, index=1), "local")
        R.print(x, y, format=R.str("{} {}"))
        R.print(x, format=R.str(""))
        R.assert_op(c, format=R.str(""))
        R.assert_op(c, x, format=R.str("x={}"))
        R.assert_op(c, x, y, format=R.str("x={} {}"))
        return z
'''

CALLS = HEADER + '''@I.ir_module
class Module:
    @T.prim_func
    def copy(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        for i in range(2):
            B[i] = A[i]

    @R.function
    def main(x: R.Tensor((2,), "float32")):
        cls = Module
        a = R.call_tir_with_grad(cls.copy, (x,), out_sinfo=R.Tensor((2,), "float32"), te_grad_name="copy_grad",
                                 te_grad_kwargs={"k": 1.5})
        b = R.call_tir_with_grad(cls.copy, a, R.Tensor((2,), "float32"), "copy_grad")
        c = R.dist.call_tir_local_view(cls.copy, (b,), out_sinfo=R.Tensor((2,), "float32"))
        d = R.call_tir(cls.copy, (c,), (2,), dtype="float32")
        e = R.call_tir_inplace(cls.copy, (d, c), [1], R.Tensor((2,), "float32"))
        f = R.call_dps_packed("my_func", d, out_sinfo=R.Tensor((2,), "float32"))
        g = R.call_pure_packed("my_pure", f, e, sinfo_args=R.Tensor((2,), "float32"))
        return g
'''

CALLS_PRINTED = '''        a: R.Tensor((2,), dtype="float32") = R.call_tir_with_grad(cls.copy, (x,), out_sinfo=R.Tensor((2,), dtype="float32"), te_grad_name="copy_grad", te_grad_kwargs={"k": 1.5})
        b: R.Tensor((2,), dtype="float32") = R.call_tir_with_grad(cls.copy, (a,), out_sinfo=R.Tensor((2,), dtype="float32"), te_grad_name="copy_grad")
        c: R.Tensor((2,), dtype="float32") = R.dist.call_tir_local_view(cls.copy, (b,), out_sinfo=R.Tensor((2,), dtype="float32"))
        d = R.call_tir(cls.copy, (c,), out_sinfo=R.Tensor((2,), dtype="float32"))
        e: R.Tensor((2,), dtype="float32") = R.call_tir_inplace(cls.copy, (d, c), out_sinfo=R.Tensor((2,), dtype="float32"), inplace_indices=[1])
        f = R.call_dps_packed("my_func", (d,), out_sinfo=R.Tensor((2,), dtype="float32"))
        g: R.Tensor((2,), dtype="float32") = R.call_pure_packed("my_pure", f, e, sinfo_args=(R.Tensor((2,), dtype="float32"),))
'''


@pytest.mark.parametrize("text,printed", [(IMPURE, IMPURE_PRINTED), (CALLS, CALLS_PRINTED)], ids=["builtins", "calls"])
def test_declared_script_forms_print_as_tvm_and_round_trip(text, printed):
    mod = from_source(text)
    out = mod.script()
    for line in printed.splitlines():
        assert line in out.splitlines(), f"missing line:\n{line}\nin:\n{out}"
    again = from_source(out)
    assert structural_equal(again, mod)
    assert again.script() == out


@pytest.mark.parametrize("call,message,caret", [
    ("R.call_tir(cls.copy, (x,))", "R.call_tir needs out_sinfo=, the struct info of its result", "R.call_tir"),
    ("R.call_tir(cls.copy, (x,), R.Tensor((2,), \"float32\"), tir_vars=R.shape([1]), bad=1)",
     "R.call_tir got an unexpected keyword argument 'bad'", "bad=1"),
    ("R.call_tir(cls.main, (x,), out_sinfo=R.Tensor((2,), \"float32\"))",
     "R.call_tir calls a T.prim_func, but 'main' is a Relax function", "cls.main"),
    ("R.call_tir_inplace(cls.copy, (x,), out_sinfo=R.Tensor((2,), \"float32\"))",
     "R.call_tir_inplace needs the attribute 'inplace_indices'", "R.call_tir_inplace"),
    ("R.hint_on_device(x, R.device(\"tpu\"))", "unknown device 'tpu'", "\"tpu\""),
    ("R.hint_on_device(x, 3)", "R.hint_on_device takes R.device(...) here, got", "3"),
    ("R.print(x, fmt=\"\")", "R.print got an unexpected keyword argument 'fmt' (did you mean 'format'?)", "fmt=\"\""),
])
def test_declared_script_form_errors_are_located(call, message, caret):
    text = HEADER + f'''@I.ir_module
class Module:
    @T.prim_func
    def copy(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        for i in range(2):
            B[i] = A[i]

    @R.function(pure=False)
    def main(x: R.Tensor((2,), "float32")):
        cls = Module
        y = {call}
        return x
'''
    assert_located_error(text, message, caret)


RETURN_CALL = HEADER + '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
        z = R.multiply(x, y)
        return R.add(z, y)

    @R.function
    def after_dataflow(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
        with R.dataflow():
            z = R.multiply(x, y)
            R.output(z)
        return R.add(z, y)
'''


def test_returned_call_is_bound_in_the_current_block_as_tvm_does():
    # TVM's normalizer binds a non-leaf return value to ``gv`` in the block being built (a new
    # block only after a dataflow block), which is what the printed ``gv = ...; return gv`` reads as.
    mod = from_source(RETURN_CALL)
    assert [len(b.bindings) for b in mod["main"].body.blocks] == [2]
    assert [len(b.bindings) for b in mod["after_dataflow"].body.blocks] == [1, 1]
    text = mod.script()
    assert '        gv: R.Tensor((2,), dtype="float32") = R.add(z, y)\n        return gv' in text
    assert structural_equal(from_source(text), mod)


GLOBAL_INFOS = HEADER + '''@I.ir_module
class Module:
    I.module_attrs({"attr": 10})
    I.module_global_infos({"dummy": [I.dummy_global_info(), I.dummy_global_info()],
                           "vdevice": [I.vdevice("llvm"), I.vdevice({"kind": "cuda", "arch": "sm_80"}, 0)]})

    @R.function
    def main(a: R.Tensor((2, 2), "float32", "cuda:0"), c: R.Tensor((2, 2), "float32", vdevice="llvm")):
        b = R.to_vdevice(a, "llvm")
        d = R.add(b, c)
        e = R.hint_on_device(d, R.device(1, 0))
        return e
'''

GLOBAL_INFOS_PRINTED = '''    I.module_attrs({"attr": 10})
    I.module_global_infos({"dummy": [I.dummy_global_info(), I.dummy_global_info()], "vdevice": [I.vdevice("llvm", 0, "global"), I.vdevice({"arch": "sm_80", "kind": "cuda"}, 0, "global")]})
    @R.function
    def main(a: R.Tensor((2, 2), dtype="float32", vdevice="cuda:0:global"), c: R.Tensor((2, 2), dtype="float32", vdevice="llvm:0:global")) -> R.Tensor((2, 2), dtype="float32", vdevice="llvm:0:global"):
        b: R.Tensor((2, 2), dtype="float32", vdevice="llvm:0:global") = R.to_vdevice(a, dst_vdevice="llvm:0:global")
        d: R.Tensor((2, 2), dtype="float32", vdevice="llvm:0:global") = R.add(b, c)
        e: R.Tensor((2, 2), dtype="float32", vdevice="llvm:0:global") = R.hint_on_device(d, R.device(device_type=1, index=0), "global")
        return e
'''


def test_global_infos_and_virtual_devices_print_as_tvm_and_run():
    import numpy as np
    import tvmlite

    mod = from_source(GLOBAL_INFOS)
    text = mod.script()
    assert GLOBAL_INFOS_PRINTED.rstrip("\n") in text
    assert structural_equal(from_source(text), mod)
    vm = tvmlite.relax.VirtualMachine(tvmlite.relax.build(mod))  # one device: the hints are the value itself
    a = np.arange(4, dtype="float32").reshape(2, 2)
    np.testing.assert_array_equal(vm["main"](a, a).numpy(), a + a)


@pytest.mark.parametrize("line,message,caret", [
    ('b = R.add(a, c)', "R.add: the inputs are on different virtual devices (cuda:0:global, llvm:0:global)", "c)"),
    ('b = R.to_vdevice(a, "llvm:x")', "the index of vdevice 'llvm:x' must be a non-negative integer", '"llvm:x"'),
])
def test_virtual_device_errors(line, message, caret):
    text = GLOBAL_INFOS.replace("        b = R.to_vdevice(a, \"llvm\")", "        " + line)
    assert_located_error(text, message, caret)


PRIM_FUNC_CALLS = HEADER + '''@I.ir_module
class Module:
    @T.prim_func
    def double(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
        for i0, i1 in T.grid(2, 3):
            with T.block("block"):
                vi0, vi1 = T.axis.remap("SS", [i0, i1])
                B[vi0, vi1] = A[vi0, vi1] * T.float32(2)

    @T.prim_func
    def add_one(n: T.int64) -> T.int64:
        return n + T.int64(1)

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"), n: R.Prim("int64")):
        R.func_attr({"relax.force_pure": True})
        cls = Module
        _ = cls.double(x, y)
        m = cls.add_one(n)
        z = y.astype("float16")
        return (z, m)
'''

PRIM_FUNC_CALLS_PRINTED = '''        cls.double(x, y)
        m: R.Prim("int64") = cls.add_one(n)
        z: R.Tensor((2, 3), dtype="float16") = R.astype(y, dtype="float16")
        return (z, m)'''


def test_relax_calls_prim_funcs_directly_and_x_astype():
    # TVM's direct call of a T.prim_func: it writes its buffer arguments in place (an impure call,
    # here under relax.force_pure) and returns its return value, or nothing.
    import numpy as np
    import tvmlite

    mod = from_source(PRIM_FUNC_CALLS)
    text = mod.script()
    assert PRIM_FUNC_CALLS_PRINTED in text
    assert structural_equal(from_source(text), mod)
    vm = tvmlite.relax.VirtualMachine(tvmlite.relax.build(mod))
    x, y = np.arange(6, dtype="float32").reshape(2, 3), np.zeros((2, 3), "float32")
    z, m = vm["main"](x, y, 41)
    np.testing.assert_array_equal(y, x * 2)
    np.testing.assert_array_equal(z.numpy(), (x * 2).astype("float16"))
    assert m == 42


def test_shape_to_tensor_prints_as_tvm_and_runs():
    import numpy as np
    import tvmlite

    mod = from_source(HEADER + '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), "float32")):
        n = T.int64()
        t = R.shape_to_tensor(R.shape_of(x))
        return t
''')
    assert '    t: R.Tensor((2,), dtype="int64") = R.shape_to_tensor(gv)' in mod.script()
    vm = tvmlite.relax.VirtualMachine(tvmlite.relax.build(mod))
    np.testing.assert_array_equal(vm["main"](np.zeros((5, 3), "float32")).numpy(), [5, 3])


def test_vdevice_references_resolve_against_the_module():
    # "vdevice:3" is the fourth entry of any kind; "cuda:1" the second cuda one: the same device here.
    mod = from_source(HEADER + '''@I.ir_module
class Module:
    I.module_global_infos({"vdevice": [I.vdevice("llvm"), I.vdevice("cuda", 0), I.vdevice("metal", 0, "global"),
                                       I.vdevice("cuda -arch=sm_80", 0, "shared")]})

    @R.function
    def main(a: R.Tensor((2,), "float32", "cuda:1"), c: R.Tensor((2,), "float32", "vdevice:3")):
        s = R.add(a, c)
        t = R.to_vdevice(s, tvm.ir.VDevice("llvm", 0, "global"))
        return t
''')
    text = mod.script()
    assert 'a: R.Tensor((2,), dtype="float32", vdevice="cuda:1:shared"), c: R.Tensor((2,), dtype="float32", ' \
           'vdevice="cuda:1:shared")' in text
    assert 'R.to_vdevice(s, dst_vdevice="llvm:0:global")' in text
    assert structural_equal(from_source(text), mod)
    with pytest.raises(ScriptError, match="the module declares 2 'cuda' vdevices, there is no cuda:2"):
        from_source(text.replace('vdevice="cuda:1:shared"), c', 'vdevice="cuda:2"), c'))


def test_symbolic_variables_named_in_the_signature_take_their_declared_dtype():
    # TVM reads "threshold" in the signature as the variable the body declares (a float16 here),
    # not as an int64.
    func = from_source(HEADER + '''@R.function
def func(A: R.Tensor(["N"], "float16"), _: R.Prim(value="threshold")):
    N = T.int64()
    threshold = T.float16()
    B = A >= R.prim_value(threshold / T.cast(N, "float16"))
    return B
''')
    assert func.params[1].struct_info.value.dtype == "float16"
    assert structural_equal(from_source(func.script()), func)


def test_node_constructor_spellings():
    # R.TupleGetItem(t, i) is t[i]; R.ShapeExpr((m, n)) is R.shape([m, n]).
    func = from_source(HEADER + '''@R.function
def foo(x: R.Tensor(("m", "n"), "float32"), y: R.Tensor):
    m = T.int64()
    n = T.int64()
    t = (x, y)
    a = R.TupleGetItem(t, 1)
    s = R.ShapeExpr((m, n))
    return (a, s)
''')
    text = func.script()
    assert "a: R.Tensor = t[1]" in text and "s: R.Shape([m, n]) = R.shape([m, n])" in text
    assert structural_equal(from_source(text), func)


def test_a_dimension_expression_may_use_a_name_the_signature_defines_later():
    func = from_source(HEADER + '''@R.function
def foo(x: R.Tensor(("m + 1",), "float32"), y: R.Tensor(("m", 1), "float32")):
    z = R.add(x, y)
    return z
''')
    m = func.params[1].struct_info.shape[0]
    assert func.params[0].struct_info.shape[0].a is m
    assert structural_equal(from_source(func.script()), func)
