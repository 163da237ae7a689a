"""Reliability (issue 7): ill-formed IR built through the Python API prints and is reported by
``well_formed_errors`` with a location, failing passes name themselves and leave their input alone,
compiled code copes with adversarial shapes (empty, broadcast, offsets past 2**31) or refuses them
with a clear error, executables are safe to call from several threads, and constants of every dtype
survive printing bit for bit."""
from __future__ import annotations

import math
import os
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.runtime import ArgumentError
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.module import GlobalVar, IRModule
from tvmlite.ir.node import Map, replace
from tvmlite.ir.op import get_op, make_call
from tvmlite.ir.structural import assert_structural_equal, structural_equal
from tvmlite.ir.well_formed import well_formed, well_formed_errors
from tvmlite.script import from_source
from tvmlite.script.printer import script

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)


def i64(v: int) -> tir.IntImm:
    return tir.IntImm("int64", v)


def i32(v: int) -> tir.IntImm:
    return tir.IntImm("int32", v)


def TS(*shape, dtype="float32"):
    return rx.TensorStructInfo(tuple(d if isinstance(d, tir.PrimExpr) else i64(d) for d in shape), dtype)


def relax_module(bindings, ret, params, ret_sinfo=None, name="main"):
    f = rx.Function(tuple(params), rx.SeqExpr((rx.BindingBlock(tuple(bindings)),), ret),
                    ret_sinfo if ret_sinfo is not None else TS(4), attrs=Map({"global_symbol": name}))
    return IRModule({GlobalVar(name): f})


def buffer(name, shape, dtype="float32"):
    return tir.Buffer(name, tir.Var(name, "handle", tir.PointerType(dtype)), dtype, tuple(i32(s) for s in shape))


def prim_module(body, params, buffer_map, name="f"):
    pf = tir.PrimFunc(tuple(params), body, None, Map(buffer_map), Map({"global_symbol": name}))
    return IRModule({GlobalVar(name): pf})


def copy_block(src, dst, n=4, values=None, iter_vars=1, name="copy"):
    """``for i: with T.block(name): dst[vi] = src[vi]`` under a root block."""
    i = tir.Var("i", "int32")
    ivs = [tir.Var(f"v{k}", "int32") for k in range(iter_vars)]
    vi = ivs[0]
    blk = tir.Block(name, tuple(tir.IterVar(tir.Range(i32(0), i32(n)), v) for v in ivs), (), (),
                    tir.BufferStore(dst, tir.BufferLoad(src, (vi,)), (vi,)))
    br = tir.BlockRealize(tuple(values) if values is not None else (i,), tir.IntImm("bool", 1), blk)
    loop = tir.For(i, i32(0), i32(n), tir.ForKind.SERIAL, br)
    return tir.BlockRealize((), tir.IntImm("bool", 1), tir.Block("root", (), (), (), loop))


# ====================================================================== ill-formed IR cases
def case_wrong_arg_count():
    x, y = rx.Var("x", TS(4)), rx.Var("y", TS(4))
    call = rx.Call(get_op("relax.add"), (x,), struct_info=TS(4))
    return relax_module([rx.VarBinding(y, call)], y, [x]), ["R.add takes 2 arguments, got 1 (in function main, binding y)"]


def case_var_used_before_definition():
    x, y, late = rx.Var("x", TS(4)), rx.Var("y", TS(4)), rx.Var("late", TS(4))
    b1 = rx.VarBinding(y, make_call("relax.add", (x, late)))
    b2 = rx.VarBinding(late, make_call("relax.add", (x, x)))
    return relax_module([b1, b2], y, [x]), ["variable late used before definition (in function main, binding y)"]


def case_var_never_defined():
    x, y, ghost = rx.Var("x", TS(4)), rx.Var("y", TS(4)), rx.Var("ghost", TS(4))
    return (relax_module([rx.VarBinding(y, make_call("relax.multiply", (x, ghost)))], y, [x]),
            ["variable ghost used before definition (in function main, binding y)"])


def case_missing_struct_info():
    x, y = rx.Var("x", TS(4)), rx.Var("y", None)
    call = rx.Call(get_op("relax.add"), (x, x))  # no struct_info
    return relax_module([rx.VarBinding(y, call)], y, [x]), [
        "call has no struct info (in function main, binding y)",
        "variable y has no struct info (in function main, binding y)"]


def case_none_call_argument():
    x, y = rx.Var("x", TS(4)), rx.Var("y", TS(4))
    call = rx.Call(get_op("relax.add"), (x, None), struct_info=TS(4))
    return relax_module([rx.VarBinding(y, call)], y, [x]), ["Call.args[1] is None (in function main, binding y)"]


def case_none_function_body():
    x = rx.Var("x", TS(4))
    f = rx.Function((x,), None, TS(4), attrs=Map({"global_symbol": "main"}))
    return IRModule({GlobalVar("main"): f}), ["Function.body is None (in function main)"]


def case_unknown_op():
    x, y = rx.Var("x", TS(4)), rx.Var("y", TS(4))
    call = rx.Call(rx.Op("relax.no_such_op"), (x,), struct_info=TS(4))
    return relax_module([rx.VarBinding(y, call)], y, [x]), ["unknown op relax.no_such_op (in function main, binding y)"]


def case_buffer_never_declared():
    A, B, U = buffer("A", (4,)), buffer("B", (4,)), buffer("U", (4,))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return (prim_module(copy_block(U, B), [a, b], {a: A, b: B}),
            ["TIR buffer U used but not defined (in function f, block root, block copy)"])


def case_iter_values_count():
    A, B = buffer("A", (4,)), buffer("B", (4,))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return (prim_module(copy_block(A, B, iter_vars=2), [a, b], {a: A, b: B}),
            ["block copy has 2 iter vars but 1 iter values (in function f, block root)"])


def case_param_missing_from_buffer_map():
    # b is a plain handle; the body writes a buffer B whose data pointer nothing defines.
    A, B = buffer("A", (4,)), buffer("B", (4,))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return (prim_module(copy_block(A, B), [a, b], {a: A}),
            ["TIR buffer B used but not defined (in function f, block root, block copy)"])


def case_buffer_map_key_not_a_param():
    A, B = buffer("A", (4,)), buffer("B", (4,))
    a, b, c = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("c", "handle")
    return (prim_module(copy_block(A, B), [a, b], {a: A, b: B, c: buffer("C", (4,))}),
            ["buffer_map key 'c' is not a parameter (in function f)"])


def case_none_in_tir():
    A = buffer("A", (4,))
    a = tir.Var("a", "handle")
    body = tir.SeqStmt((tir.Evaluate(None), tir.BufferStore(A, tir.FloatImm("float32", 1.0), (None,))))
    return prim_module(body, [a, None], {a: A}), [
        "PrimFunc.params[1] is None (in function f)",
        "PrimFunc parameter None is not a TIR variable (in function f)",
        "Evaluate.value is None (in function f)",
        "BufferStore.indices[0] is None (in function f)"]


def case_none_buffer_in_map():
    a = tir.Var("a", "handle")
    return (prim_module(tir.Evaluate(i32(0)), [a], {a: None}),
            ["buffer_map entry of 'a' is not a Buffer (in function f)"])


CASES = {f.__name__[5:]: f for f in [
    case_wrong_arg_count, case_var_used_before_definition, case_var_never_defined, case_missing_struct_info,
    case_none_call_argument, case_none_function_body, case_unknown_op, case_buffer_never_declared,
    case_iter_values_count, case_param_missing_from_buffer_map, case_buffer_map_key_not_a_param,
    case_none_in_tir, case_none_buffer_in_map]}


# What the printed text shows where the IR is wrong (a comment line or the odd value itself).
MARKERS = {
    "wrong_arg_count": "# tvmlite: ill-formed: R.add takes 2 arguments, got 1\n",
    "none_call_argument": "# tvmlite: ill-formed: a call argument is None\n",
    "unknown_op": "# tvmlite: ill-formed: unknown op relax.no_such_op\n",
    "iter_values_count": "# tvmlite: ill-formed: 2 iter vars but 1 iter values\n",
    "buffer_map_key_not_a_param": "# tvmlite: ill-formed: buffer_map key c is not a parameter\n",
    "none_in_tir": "# tvmlite: ill-formed: parameter 1 is None, not a TIR variable\n",
    "none_buffer_in_map": "# tvmlite: ill-formed: buffer_map entry of a is None, not a Buffer\n",
    "none_function_body": "return None",
    "buffer_never_declared": "U = T.Buffer((4,))",
    "missing_struct_info": " y = R.add(x, x)\n",
}


@pytest.mark.parametrize("name", list(CASES))
def test_ill_formed_ir_prints(name):
    mod, _ = CASES[name]()
    for obj in (mod, *[f for _, f in mod.functions_items()]):
        for show_meta in (False, True):
            text = script(obj, show_meta=show_meta)
            assert isinstance(text, str) and text
            assert "could not print" not in text
            assert "def " in text  # the function itself prints, not a one-line fallback
            assert name not in MARKERS or MARKERS[name] in text, text
            assert obj.script() == script(obj) and str(obj) == script(obj) and repr(obj)


@pytest.mark.parametrize("name", list(CASES))
def test_ill_formed_ir_is_reported_with_its_location(name):
    mod, expected = CASES[name]()
    errors = well_formed_errors(mod)
    for e in expected:
        assert e in errors, errors
    assert not well_formed(mod)
    # A lone function is checked too (without the module, the function name is not known).
    func = next(f for _, f in mod.functions_items())
    assert well_formed_errors(func)


def test_printer_keeps_printing_after_a_bad_node():
    # The bad binding prints as a fallback; the bindings around it still print normally.
    x, y, z, w = rx.Var("x", TS(4)), rx.Var("y", TS(4)), rx.Var("z", TS(4)), rx.Var("w", TS(4))
    bad = rx.Call(get_op("relax.add"), (x, None), struct_info=TS(4))
    mod = relax_module([rx.VarBinding(y, make_call("relax.add", (x, x))), rx.VarBinding(z, bad),
                        rx.VarBinding(w, make_call("relax.multiply", (y, y)))], w, [x])
    text = mod.script()
    assert 'y: R.Tensor((4,), dtype="float32") = R.add(x, x)' in text
    assert 'w: R.Tensor((4,), dtype="float32") = R.multiply(y, y)' in text
    assert "return w" in text


def test_shared_subtrees_are_fine():
    x = rx.Var("x", TS(4))
    shared = make_call("relax.add", (x, x))
    y, z = rx.Var("y", TS(4)), rx.Var("z", TS(4))
    out = rx.Var("out", TS(4))
    mod = relax_module([rx.VarBinding(y, shared), rx.VarBinding(z, shared),
                        rx.VarBinding(out, make_call("relax.add", (y, z)))], out, [x])
    assert well_formed_errors(mod) == []
    text = mod.script()
    assert text.count("R.add(x, x)") == 2
    assert structural_equal(from_source(text), mod)


def test_errors_carry_source_spans_when_the_ir_came_from_text():
    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y = R.add(x, x)
        z = R.multiply(y, y)
        return z
''', filename="m.py")
    func = mod["main"]
    block = func.body.blocks[0]
    b0, b1 = block.bindings
    ghost = rx.Var("ghost", TS(4))
    bad = replace(b1, value=replace(b1.value, args=(b1.value.args[0], ghost)))
    broken = mod.copy()
    broken["main"] = replace(func, body=replace(func.body, blocks=(replace(block, bindings=(b0, bad)),)))
    errors = well_formed_errors(broken)
    assert errors == ["m.py:7:13: variable ghost used before definition"], errors
    assert bad.value.span is not None and bad.value.span.line == 7


# ====================================================================== failing passes
def _mod_text_and_funcs(mod):
    return mod.script(show_meta=True), [(gv, f) for gv, f in mod.functions_items()]


def _good_module():
    x, y, z = rx.Var("x", TS(4)), rx.Var("y", TS(4)), rx.Var("z", TS(4))
    return relax_module([rx.VarBinding(y, make_call("relax.add", (x, x))),
                         rx.VarBinding(z, make_call("relax.nn.relu", (y,)))], z, [x])


@P.module_pass(opt_level=0, name="BreakMidway")
class BreakMidway:
    """Mutates its (copied) module, then raises."""

    def transform_module(self, mod, ctx):
        gv = mod.get_global_var("main")
        func = mod[gv]
        mod[gv] = func.with_attr("touched", 1)
        mod.add("extra", func)
        raise RuntimeError("broken midway")


@P.module_pass(opt_level=0, name="MakeIllFormed")
class MakeIllFormed:
    """Returns a module whose main uses an undefined variable."""

    def transform_module(self, mod, ctx):
        gv = mod.get_global_var("main")
        func = mod[gv]
        ghost = rx.Var("ghost", TS(4))
        mod[gv] = replace(func, body=replace(func.body, body=ghost))
        return mod


@pytest.mark.parametrize("verify", [True, False])
@pytest.mark.parametrize("sequential", [True, False])
def test_pass_raising_midway_names_itself_and_leaves_input_untouched(verify, sequential, tmp_path):
    mod = _good_module()
    before = _mod_text_and_funcs(mod)
    p = P.Sequential([P.ToNonDataflow(), BreakMidway(), P.DeadCodeElimination()]) if sequential else BreakMidway()
    instruments = [P.VerifyEach()] if verify else []
    with P.PassContext(config={"tvmlite.verify_each": verify, "tvmlite.reproducer_dir": str(tmp_path)},
                       instruments=instruments):
        with pytest.raises(P.PassError) as info:
            p(mod)
    assert info.value.pass_name == "BreakMidway"
    assert 'pass "BreakMidway" failed: RuntimeError: broken midway' in str(info.value)
    text, funcs = _mod_text_and_funcs(mod)
    assert text == before[0]
    assert len(funcs) == len(before[1]) and all(a[0] is b[0] and a[1] is b[1] for a, b in zip(funcs, before[1]))
    assert "extra" not in mod


@pytest.mark.parametrize("sequential", [True, False])
def test_pass_producing_ill_formed_ir_is_blamed(sequential, tmp_path):
    mod = _good_module()
    before = _mod_text_and_funcs(mod)
    p = P.Sequential([MakeIllFormed(), P.DeadCodeElimination()]) if sequential else MakeIllFormed()
    instruments = [] if sequential else [P.VerifyEach()]
    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path)}, instruments=instruments):
        with pytest.raises(P.PassError) as info:
            p(mod)
    assert info.value.pass_name == "MakeIllFormed"
    assert 'pass "MakeIllFormed" produced ill-formed IR' in str(info.value)
    assert "variable ghost used before definition (in function main)" in str(info.value)
    assert _mod_text_and_funcs(mod)[0] == before[0]
    # Without verification the ill-formed result comes back, and still prints.
    with P.PassContext(config={"tvmlite.verify_each": False, "tvmlite.reproducer_dir": False}):
        out = p(mod)
    assert "return ghost" in out.script() and not well_formed(out)
    assert _mod_text_and_funcs(mod)[0] == before[0]


@pytest.mark.parametrize("name", ["wrong_arg_count", "var_never_defined", "none_call_argument",
                                  "missing_struct_info"])
@pytest.mark.parametrize("pass_name", ["LegalizeOps", "FoldConstant", "DeadCodeElimination", "FuseOps",
                                       "CanonicalizeBindings"])
def test_passes_given_ill_formed_input(name, pass_name, tmp_path):
    mod, _ = CASES[name]()
    text, funcs = _mod_text_and_funcs(mod)
    # Under a Sequential (verification on), the input is refused before any pass runs.
    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError, match="is not well formed"):
            P.Sequential([P.get_pass(pass_name)])(mod)
    # On its own too, naming the pass.
    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path)}):
        with pytest.raises(P.PassError, match=f'the input of "{pass_name}" is not well formed') as info:
            P.get_pass(pass_name)(mod)
        assert info.value.pass_name == pass_name
    # With verification off, a pass either copes or fails with a PassError naming it.
    with P.PassContext(config={"tvmlite.reproducer_dir": str(tmp_path), "tvmlite.verify_each": False}):
        try:
            out = P.get_pass(pass_name)(mod)
        except P.PassError as err:
            assert err.pass_name == pass_name and pass_name in str(err)
        else:
            assert isinstance(out, IRModule) and isinstance(out.script(), str)
    assert _mod_text_and_funcs(mod)[0] == text
    assert all(a[1] is b[1] for a, b in zip(mod.functions_items(), funcs))


# ====================================================================== adversarial shapes
@pytest.fixture(scope="module")
def dynamic_mlp():
    text = read_corpus("seed004_mlp_torch.py").replace("R.Tensor((1, ", 'R.Tensor(("n", ')
    assert '"n"' in text
    return tvmlite.VirtualMachine(tvmlite.compile(from_source(text)), tvmlite.cpu())["main"]


@pytest.mark.parametrize("batch", [0, 1, 5])
def test_mlp_with_empty_and_small_batches(dynamic_mlp, batch):
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 784)).astype("float32")
    w1, b1 = rng.standard_normal((256, 784)).astype("float32"), rng.standard_normal(256).astype("float32")
    w2, b2 = rng.standard_normal((10, 256)).astype("float32"), rng.standard_normal(10).astype("float32")
    out = dynamic_mlp(x, w1, b1, w2, b2).numpy()
    assert out.shape == (batch, 10)
    np.testing.assert_allclose(out, np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, rtol=1e-4, atol=1e-3)


SHAPES_SRC = '''
@I.ir_module
class Module:
    @R.function
    def ewise(a: R.Tensor(("m", "k"), dtype="float32"), b: R.Tensor(("m", "k"), dtype="float32")):
        c = R.nn.relu(R.add(a, b))
        return c
    @R.function
    def bcast(a: R.Tensor((4, 1), dtype="float32"), b: R.Tensor((1, 5), dtype="float32")):
        return R.add(a, b)
    @R.function
    def bcast_rank(a: R.Tensor((1,), dtype="float32"), b: R.Tensor((3, 1, 2), dtype="float32")):
        return R.multiply(a, b)
    @R.function
    def bcast_sym(a: R.Tensor(("p", 1), dtype="float32"), b: R.Tensor((1, "q"), dtype="float32")):
        return R.subtract(a, b)
    @R.function
    def reduce(a: R.Tensor(("m", "k"), dtype="float32")):
        return R.sum(a, axis=[1])
'''


@pytest.fixture(scope="module")
def shapes_vm():
    ex = tvmlite.compile(from_source(SHAPES_SRC))
    return ex, tvmlite.VirtualMachine(ex, tvmlite.cpu())


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (1, 1), (3, 7)])
def test_elementwise_on_empty_arrays(shapes_vm, shape):
    ex, vm = shapes_vm
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(shape).astype("float32"), rng.standard_normal(shape).astype("float32")
    out = vm["ewise"](a, b).numpy()
    assert out.shape == shape
    np.testing.assert_array_equal(out, np.maximum(a + b, 0))
    np.testing.assert_allclose(vm["reduce"](a).numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-5)
    # The kernels themselves, called directly.
    add = next(gv.name_hint for gv in ex.mod.get_global_vars() if gv.name_hint.startswith("add"))
    direct = np.full(shape, 7, "float32")
    ex[add](a, b, direct)
    np.testing.assert_array_equal(direct, a + b)


def test_size_one_broadcasting(shapes_vm):
    _, vm = shapes_vm
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 1)).astype("float32"), rng.standard_normal((1, 5)).astype("float32")
    np.testing.assert_array_equal(vm["bcast"](a, b).numpy(), a + b)
    a, b = rng.standard_normal((1,)).astype("float32"), rng.standard_normal((3, 1, 2)).astype("float32")
    np.testing.assert_array_equal(vm["bcast_rank"](a, b).numpy(), a * b)
    for p, q in [(4, 5), (1, 1), (0, 3), (3, 0), (1, 6)]:
        a, b = rng.standard_normal((p, 1)).astype("float32"), rng.standard_normal((1, q)).astype("float32")
        np.testing.assert_array_equal(vm["bcast_sym"](a, b).numpy(), a - b)


def test_wrong_broadcast_shapes_are_refused(shapes_vm):
    _, vm = shapes_vm
    with pytest.raises(ArgumentError, match="'b'"):
        vm["bcast"](np.zeros((4, 1), "float32"), np.zeros((2, 5), "float32"))
    with pytest.raises(ArgumentError, match="'a'"):
        vm["bcast_sym"](np.zeros((3, 2), "float32"), np.zeros((1, 4), "float32"))


def _last_row_kernel(dtype):
    return tvmlite.compile(from_source(f'''
@T.prim_func
def last_row(a: T.handle, b: T.handle):
    n = T.{dtype}()
    m = T.{dtype}()
    A = T.match_buffer(a, (n, m), "uint8")
    B = T.match_buffer(b, (m,), "uint8")
    for j in range(m):
        with T.block("B"):
            vj = T.axis.spatial(m, j)
            B[vj] = A[n - T.{dtype}(1), vj]
'''))["last_row"]


@pytest.fixture(scope="module")
def huge_array(tmp_path_factory):
    """A (2**16, 2**16 + 1) uint8 array (4.3 GB) backed by a sparse file: only the pages touched
    cost memory. The flattened offset of its last row exceeds 2**32."""
    n, m = 2 ** 16, 2 ** 16 + 1
    path = tmp_path_factory.mktemp("huge") / "huge.bin"
    with open(path, "wb") as f:
        f.truncate(n * m)
    arr = np.memmap(path, dtype="uint8", mode="r+", shape=(n, m))
    row = (np.arange(m) % 251).astype("uint8")
    arr[n - 1] = row
    arr[n - 2] = 7
    yield arr, row
    del arr
    os.unlink(path)


def test_offsets_past_2_to_the_32_with_int64_sizes(huge_array):
    arr, row = huge_array
    out = np.zeros(arr.shape[1], "uint8")
    _last_row_kernel("int64")(arr, out)
    np.testing.assert_array_equal(out, row)


def test_int32_sizes_refuse_arrays_their_index_arithmetic_cannot_address(huge_array):
    arr, row = huge_array
    f = _last_row_kernel("int32")
    out = np.zeros(arr.shape[1], "uint8")
    with pytest.raises(ArgumentError, match=r"argument 'A' has 4295032832 elements, too many for the int32"):
        f(arr, out)
    assert not out.any()  # nothing ran
    small = np.arange(12, dtype="uint8").reshape(3, 4)
    out = np.zeros(4, "uint8")
    f(small, out)
    np.testing.assert_array_equal(out, small[-1])


def test_int32_symbolic_size_that_does_not_fit():
    f = _last_row_kernel("int32")
    empty = np.empty((2 ** 31 + 5, 0), "uint8")  # zero bytes, but n does not fit in int32
    with pytest.raises(ArgumentError, match=r"n = 2147483653 does not fit in its dtype int32"):
        f(empty, np.empty(0, "uint8"))


def test_zero_stride_views_are_refused_with_the_parameter_name():
    f = _last_row_kernel("int64")
    view = np.broadcast_to(np.uint8(3), (2 ** 16, 2 ** 16 + 1))
    with pytest.raises(ArgumentError, match="'A'"):
        f(view, np.zeros(2 ** 16 + 1, "uint8"))
    strided = np.lib.stride_tricks.as_strided(np.zeros(8, "uint8"), (4, 4), (0, 1))
    with pytest.raises(ArgumentError, match="'A'"):
        f(strided, np.zeros(4, "uint8"))


# ====================================================================== threads
PARALLEL_SRC = '''
@I.ir_module
class Module:
    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 64), "float32")
        B = T.match_buffer(b, (n, 64), "float32")
        for i in T.parallel(n):
            for j in range(64):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(3.0) + T.float32(1.0)
    @R.function
    def main(x: R.Tensor(("n", 64), dtype="float32")):
        n = T.int64()
        cls = Module
        y = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((n, 64), dtype="float32"))
        z = R.nn.relu(y)
        return z
'''


def test_parallel_kernel_and_vm_from_several_threads():
    ex = tvmlite.compile(from_source(PARALLEL_SRC))  # the default schedule leaves the T.parallel loop
    vm = tvmlite.VirtualMachine(ex, tvmlite.cpu())
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            rng = np.random.default_rng(100 + t)
            for k in range(50):
                x = rng.standard_normal((37 + 13 * t + k, 64)).astype("float32")
                y = np.empty_like(x)
                ex["scale"](x, y)
                # Codegen contracts a * b + c into a fused multiply-add: compare in float64.
                ref = (x.astype("float64") * 3 + 1).astype("float32")
                np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)
                np.testing.assert_allclose(vm["main"](x).numpy(), np.maximum(ref, 0), rtol=1e-6, atol=1e-6)
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]


# ====================================================================== constants, bit for bit
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64")
SPECIALS = (0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 1.0, -1.5, 1e-8)


def _array(data, dtype: str, shape: tuple) -> np.ndarray:
    size = int(np.prod(shape))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    if dtype == "bool":
        return rng.integers(0, 2, size).astype(bool).reshape(shape)
    np_dtype = np.dtype(dtype)
    arr = np.frombuffer(rng.bytes(size * np_dtype.itemsize), np_dtype).copy()  # any bits: NaN payloads
    if np_dtype.kind == "f" and size:
        for _ in range(data.draw(st.integers(0, 6))):
            arr[data.draw(st.integers(0, size - 1))] = data.draw(st.sampled_from(SPECIALS))
    return arr.reshape(shape)


def _const_module(consts):
    vars_, bindings = [], []
    for k, c in enumerate(consts):
        v = rx.Var(f"c{k}", c.struct_info)
        vars_.append(v)
        bindings.append(rx.VarBinding(v, c))
    ret = rx.Tuple(tuple(vars_), struct_info=rx.TupleStructInfo(tuple(c.struct_info for c in consts)))
    f = rx.Function((), rx.SeqExpr((rx.BindingBlock(tuple(bindings)),), ret), ret.struct_info,
                    attrs=Map({"global_symbol": "main"}))
    return IRModule({GlobalVar("main"): f})


def _consts_of(mod):
    return [b.value for b in mod["main"].body.blocks[0].bindings]


@settings(max_examples=40, deadline=2000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_constants_of_every_dtype_survive_printing(data):
    consts = []
    for _ in range(data.draw(st.integers(1, 4))):
        dtype = data.draw(st.sampled_from(DTYPES))
        shape = data.draw(st.sampled_from([(1,), (3,), (2, 3), (1000,), (10, 100), (0,), (2, 0, 3)]))
        consts.append(rx.Constant(_array(data, dtype, shape)))
    mod = _const_module(consts)
    assert well_formed_errors(mod) == []
    text = mod.script(show_meta=True)
    parsed = from_source(text)
    assert_structural_equal(parsed, mod)
    assert parsed.script(show_meta=True) == text
    for a, b in zip(_consts_of(mod), _consts_of(parsed)):
        assert a.data.dtype == b.data.dtype and a.data.shape == b.data.shape
        assert a.data.tobytes() == b.data.tobytes()
    plain = mod.script()  # without the data: the text refers to the metadata table
    assert 'metadata["relax.expr.Constant"][0]' in plain


@settings(max_examples=40, deadline=2000)
@given(st.sampled_from([d for d in DTYPES if d.startswith("float")]), st.sampled_from(SPECIALS))
def test_rank0_float_specials_survive_printing(dtype, value):
    # Rank-0 constants print inline (R.const(...)); every value except a NaN's payload survives.
    c = rx.Constant(np.array(value, dtype))
    mod = _const_module([c])
    text = mod.script()
    parsed = from_source(text)
    assert_structural_equal(parsed, mod)
    assert parsed.script() == text
    back = _consts_of(parsed)[0].data
    assert back.dtype == c.data.dtype
    assert back.tobytes() == c.data.tobytes()


@pytest.mark.parametrize("dtype, bits", [("float32", 0x7FC00123), ("float32", 0xFFA00001),
                                         ("float64", 0x7FF8000000000ABC), ("float16", 0x7E01)])
def test_rank0_nan_payload_survives_show_meta(dtype, bits):
    # A NaN whose payload "nan" would not give back is printed through the metadata instead.
    raw = np.array(bits, dtype=f"uint{np.dtype(dtype).itemsize * 8}").view(dtype).reshape(())
    mod = _const_module([rx.Constant(raw)])
    text = mod.script(show_meta=True)
    assert 'metadata["relax.expr.Constant"][0]' in text
    back = _consts_of(from_source(text))[0].data
    assert back.dtype == raw.dtype and back.tobytes() == raw.tobytes()
