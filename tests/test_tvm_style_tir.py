"""TIR written the way TVM's users write it (tests/data/tvm_style/: our own scripts in TVM's
style): each parses, prints exactly the text TVM prints for it (NAME.expected.py, produced once
with TVM 0.27, or as TVM v0.23 prints the constructs 0.27 no longer has; see the README there)
and reads back structurally equal. The constructs TVM rejects raise located errors."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

from tvmlite.ir import tir
from tvmlite.ir.structural import assert_structural_equal
from tvmlite.script import from_source, parse_file
from tvmlite.script.errors import ScriptError

DATA = pathlib.Path(__file__).parent / "data" / "tvm_style"
NAMES = sorted(p.stem for p in DATA.glob("*.py") if not p.name.endswith(".expected.py"))


def _body(text: str) -> str:
    """The text after the header comments (TVM's header names its own package)."""
    lines = text.rstrip("\n").split("\n")
    while lines and (lines[0].startswith("# from ") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)


def test_the_corpus_covers_the_constructs():
    assert len(NAMES) >= 16
    for name in NAMES:
        assert (DATA / f"{name}.expected.py").is_file(), name


@pytest.mark.parametrize("name", NAMES)
def test_prints_what_tvm_prints_and_round_trips(name):
    func = parse_file(DATA / f"{name}.py")
    text = func.script()
    header = text.split("\n\n", 1)[0].split("\n")
    assert header[-1] == "# from tvmlite.script import tir as T", header
    assert _body(text) == _body((DATA / f"{name}.expected.py").read_text())
    assert_structural_equal(from_source(text), func)
    assert_structural_equal(from_source((DATA / f"{name}.expected.py").read_text()), func)


def test_handle_and_buffer_parameters_build_one_prim_func():
    by_handle = from_source('@T.prim_func\ndef f(a: T.handle):\n    A = T.match_buffer(a, (16,), "float32")\n'
                            '    A[0] = T.float32(1)\n')
    by_buffer = from_source('@T.prim_func\ndef f(A: T.Buffer((16,), "float32")):\n    A[0] = T.float32(1)\n')
    assert_structural_equal(by_handle, by_buffer)
    # A handle used in the body stays a handle parameter with its T.match_buffer.
    used = from_source('@T.prim_func\ndef f(a: T.handle):\n    A = T.match_buffer(a, (16,), "float32")\n'
                       '    T.evaluate(T.call_extern("int32", "g", a))\n    A[0] = T.float32(1)\n')
    assert used.params[0].type_annotation is None
    assert "def f(a: T.handle):\n    A = T.match_buffer(a, (16,))" in used.script()


def test_constructs_build_the_nodes_tvm_builds():
    f = parse_file(DATA / "ceildiv_meta_var.py")
    store = f.body
    assert isinstance(store.value, tir.FloorDiv) and store.value.b.value == 16
    f = parse_file(DATA / "warp_shuffles.py")
    assert f.body.body.value.dtype == "uint32"  # m = T.tvm_warp_activemask()
    f = parse_file(DATA / "dtype_keywords.py")
    calls = [s.value for s in f.body.body.seq[1:]]
    assert [(c.dtype, c.args[0].value) for c in calls] == [("void", "trace_value"), ("int32", "checked_index")]
    f = parse_file(DATA / "target_attr.py")
    assert isinstance(f.attrs["target"], tir.Target)
    assert dict(f.attrs["target"].config.items()) == {"kind": "llvm", "mcpu": "skylake"}
    f = parse_file(DATA / "allocate_decl_buffer.py")
    assert type(f.body) is tir.DeclBuffer


def test_gpu_intrinsics_pass_through_lowering_and_the_cpu_backend_names_them():
    from tvmlite.backend import build
    from tvmlite.ir.module import IRModule
    from tvmlite.passes import get_pipeline

    func = parse_file(DATA / "profile_markers.py")
    lowered = get_pipeline("lower")(IRModule({"timed_copy": func}))
    assert "T.start_profile_intrinsic(7)" in lowered["timed_copy"].script()
    with pytest.raises(Exception, match="tir.start_profile_intrinsic"):
        build(func)


def test_macro_and_meta_var_compute_like_the_written_code():
    from tvmlite.backend.interpreter import run_prim_func

    func = parse_file(DATA / "macro_inlined.py")
    p = np.array([-3, 0.5, -0.5, 2] * 5, "float32")
    run_prim_func(func, [p])
    np.testing.assert_array_equal(p, np.maximum(np.array([-3, 0.5, -0.5, 2] * 5, "float32"), -1))


def test_loops_with_jumps_compile_and_interpret_like_python():
    from tvmlite.backend import build
    from tvmlite.backend.interpreter import run_prim_func

    func = parse_file(DATA / "loop_jumps.py")
    x0 = np.array([0, 3, 0, 5, -2, 7, -1] + list(range(1, 14)), "int32")
    want_x, want_hits = x0.copy(), np.zeros(2, "int32")
    for q in range(20):  # the script, in Python
        if want_x[q] == 0:
            continue
        if want_x[q] < 0:
            want_hits[1] = q
            break
    pos = 0
    while pos < 20:
        pos += 1
        if pos % 3 == 0:
            continue
        want_x[pos - 1] *= 2
    ex = build(func)
    for run in (lambda x, h: run_prim_func(func, [x, h]), lambda x, h: ex["first_negatives"](x, h)):
        x, hits = x0.copy(), np.zeros(2, "int32")
        run(x, hits)
        np.testing.assert_array_equal(x, want_x)
        np.testing.assert_array_equal(hits, want_hits)


def test_allocate_const_compiles_and_interprets():
    from tvmlite.backend import build
    from tvmlite.backend.interpreter import run_prim_func

    func = parse_file(DATA / "allocate_const.py")
    idx = np.array([0, 1, 2, 3, 5, 6], "int32")
    want = np.array([0.5, 1.5, 2.5, 3.5], "float32")[idx % 4]
    out = np.zeros(6, "float32")
    run_prim_func(func, [idx, out])
    np.testing.assert_array_equal(out, want)
    out[:] = 0
    build(func)["lookup"](idx, out)
    np.testing.assert_array_equal(out, want)


def test_gpu_threads_are_refused_by_the_cpu_backend_by_name():
    from tvmlite.backend import build

    with pytest.raises(Exception, match=r'T.launch_thread\("blockIdx.x", ...\) binds a GPU thread'):
        build(parse_file(DATA / "thread_launch.py"))


_HEAD = '@T.prim_func\ndef f(A: T.Buffer((16,), "float32"), n: T.int32):\n'

# (name, source, line, column, message) of what TVM rejects too.
REJECTED = [
    ("match_buffer of a non-parameter", _HEAD + '    B = T.match_buffer(n, (4,), "float32")\n', 3, 24,
     "T.match_buffer binds a handle parameter of the function"),
    ("remap arity", _HEAD + '    for i in range(16):\n        with T.block("b"):\n'
                            '            vi, vj = T.axis.remap("SS", [i])\n', 5, 35, "2 iterator kinds for 1 loop variable"),
    ("ceildiv operand missing", _HEAD + "    A[0] = T.Cast(\"float32\", T.ceildiv(n))\n", 3, 30,
     "T.ceildiv is missing the required argument 'rhs'"),
    ("warp shuffle operands", _HEAD + "    A[0] = T.tvm_warp_shuffle(T.uint32(1), A[0])\n", 3, 12,
     "T.tvm_warp_shuffle takes 5 operands"),
    ("target of a number", '@T.prim_func\ndef f():\n    T.func_attr({"target": T.target(3)})\n', 3, 37,
     "T.target takes a target string"),
    ("unpacking a number", _HEAD + "    for i in T.grid(*n):\n        A[i] = T.float32(0)\n", 3, 21,
     "'*' unpacks a tuple or list in T.grid(...)"),
    ("access_ptr mask", _HEAD + '    T.evaluate(T.call_extern("int32", "g", A.access_ptr("x")))\n', 3, 57,
     "access_ptr's mask is \"r\", \"w\" or \"rw\""),
    ("macro arguments", '@T.macro\ndef put(buf, i):\n    buf[i] = T.float32(0)\n\n\n' + _HEAD + "    put(A)\n", 8, 5,
     "put is missing the required argument 'i'"),
    ("break outside a loop", _HEAD + "    break\n", 3, 5, "'break' outside a loop"),
    ("comm_reducer arity", _HEAD + '    T.func_attr({"r": T.comm_reducer(lambda x: x, [T.float32(0)])})\n', 3, 38,
     "T.comm_reducer takes a lambda of 2 parameters for 1 identity element"),
    ("allocate_const size", _HEAD + '    c = T.allocate_const([1, 2, 3], "int32", [4])\n', 3, 26,
     "T.allocate_const has 3 values for extents of 4 elements"),
    ("iter_var type", _HEAD + '    T.attr(T.iter_var(n, T.Range(0, 4), "Thread", "threadIdx.x"), "thread_extent", 4)\n', 3, 41,
     "the iterator type is one of"),
    ("intrinsic dtype", _HEAD + '    A[0] = T.exp(A[0], dtype="float33")\n', 3, 30, "unknown dtype 'float33'"),
]


@pytest.mark.parametrize("name, source, line, col, message", REJECTED, ids=[c[0] for c in REJECTED])
def test_rejected_constructs_have_located_errors(name, source, line, col, message):
    with pytest.raises(ScriptError) as info:
        from_source(source, "bad.py")
    err = info.value
    text = str(err)
    assert (err.line, err.col) == (line, col), text
    assert message in err.message, text
    assert text.startswith(f"bad.py:{line}:{col}: error:")
    assert "^" in text.split("\n")[-1]


def test_packed_abi_builtins_and_a_changed_result_dtype_round_trip():
    # tvm_struct_get writes its dtype last (TVM's order); an intrinsic whose result dtype is not the
    # one its operand implies keeps it as dtype= (T.exp of a float16 value computed in float32).
    func = from_source('''
from tvm.script import tir as T
@T.prim_func
def f(A: T.Buffer((4,), "float16"), B: T.Buffer((4,), "float32"), h: T.handle, n: T.int32):
    for i in range(4):
        B[i] = T.exp(A[i], dtype="float32")
    p = T.tvm_struct_get(h, 0, 1, dtype="int64")
    T.evaluate(T.tvm_struct_set(h, 0, 1, n))
    q = T.tvm_stack_alloca("array", 1)
    T.evaluate(T.tvm_call_packed("f", p, q, T.tvm_stack_make_shape(16)))
''')
    text = func.script()
    for line in ('B[i] = T.exp(A[i], dtype="float32")', 'p: T.int64 = T.tvm_struct_get(h, 0, 1, "int64")',
                 "T.tvm_struct_set(h, 0, 1, n)", 'q: T.handle = T.tvm_stack_alloca("array", 1)',
                 'T.call_packed("f", p, q, T.tvm_stack_make_shape(16))'):
        assert line in text, text
    assert_structural_equal(from_source(text), func)


def test_a_let_of_a_pointer_keeps_its_pointer_type():
    func = from_source('''
from tvm.script import tir as T
@T.prim_func
def f(x: T.handle("int32"), args: T.handle):
    xx_data = T.allocate([16], "int32", "global")
    xx = T.Buffer(shape=[16], dtype="int32", scope="global", data=xx_data)
    a: T.handle("int32") = T.address_of(xx[0], dtype="handle")
    p: T.handle("float32", "shared") = T.tvm_struct_get(args, 0, 1, dtype="handle")
    T.evaluate(T.call_extern("copy", a, p, dtype=""))
''')
    text = func.script()
    assert 'a: T.handle("int32", "global") = T.address_of(xx[0])' in text
    assert 'p: T.handle("float32", "shared") = T.tvm_struct_get(args, 0, 1, "handle")' in text
    assert_structural_equal(from_source(text), func)


def test_lowered_host_code_builtins_round_trip():
    # What LowerTVMBuiltin leaves in host code: the argument stacks, null checks and lowered packed calls.
    func = from_source('''
from tvm.script import tir as T
@T.prim_func
def f(A: T.handle, n: T.int32):
    stack_value: T.handle = T.tvm_stack_alloca("arg_value", 2)
    stack_tcode_data: T.handle("int32") = T.tvm_stack_alloca("arg_tcode", 2)
    assert not T.isnullptr(A), "A is NULL"
    T.evaluate(T.tvm_struct_set(stack_value, 0, 12, A, dtype="int32"))
    T.evaluate(T.tvm_call_packed_lowered("g", stack_value, stack_tcode_data, 0, 1, dtype="int32"))
    T.evaluate(T.Broadcast(T.float32(1), 4) + T.broadcast(T.float32(2), 4))
''')
    text = func.script()
    assert 'assert not T.isnullptr(A), "A is NULL"' in text
    assert 'T.tvm_call_packed_lowered("g", stack_value, stack_tcode_data, 0, 1)' in text
    assert_structural_equal(from_source(text), func)


def test_an_offset_factor_without_an_offset_makes_the_offset_a_variable():
    # TVM's decl_buffer/match_buffer: offset_factor given, elem_offset not: a fresh offset variable,
    # which the printer leaves implied again.
    func = from_source('''
from tvm.script import tir as T
@T.prim_func
def f(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), offset_factor=1)
    B = T.match_buffer(b, (4,), offset_factor=4)
    for i in range(4):
        B[i] = A[i] + T.float32(1)
''')
    A = func.buffer_map[func.params[0]]
    assert isinstance(A.elem_offset, tir.Var) and A.elem_offset.name == "A_elem_offset"
    text = func.script()
    assert "B = T.match_buffer(b, (4,), offset_factor=4)" in text
    assert_structural_equal(from_source(text), func)
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    from tvmlite.backend.interpreter import run_prim_func

    run_prim_func(func, [a, b])
    np.testing.assert_array_equal(b, a + 1)
