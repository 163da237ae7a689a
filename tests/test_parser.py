"""The semantic parser: the IR built for each TVMScript construct (both dialects), the corpus,
legacy spellings, metadata and extra_vars."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tvmlite.ir import IRModule, relax as rx, structural_equal, tir
from tvmlite.ir.module import GlobalVar
from tvmlite.script.errors import ScriptError
from tvmlite.script.parser import from_source, parse_file

from corpus_files import CORPUS_DIR as CORPUS  # noqa: E402  (tests/data/corpus)


def prim(body: str, params: str = 'A: T.Buffer((16,), "float32")', deco: str = "@T.prim_func") -> tir.PrimFunc:
    """Parse a prim_func named f whose body is ``body`` (indented by 4)."""
    text = f"{deco}\ndef f({params}):\n" + "".join(f"    {line}\n" for line in body.strip("\n").split("\n"))
    func = from_source(text)
    assert isinstance(func, tir.PrimFunc)
    return func


def relax_fn(body: str, params: str = 'x: R.Tensor((2, 3), "float32")', ret: str = "",
             deco: str = "@R.function") -> rx.Function:
    """Parse an R.function named main."""
    text = f"{deco}\ndef main({params}){' -> ' + ret if ret else ''}:\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").split("\n"))
    func = from_source(text)
    assert isinstance(func, rx.Function)
    return func


def bindings(func: rx.Function) -> list:
    return [b for block in func.body.blocks for b in block.bindings]


def stmts(s: tir.Stmt) -> list:
    return list(s.seq) if isinstance(s, tir.SeqStmt) else [s]


# ==================================================================== TIR: functions and buffers
def test_buffer_parameter():
    f = prim("A[0, 0] = T.int8(1)", 'A: T.Buffer((16, 4), "int8")')
    (param,) = f.params
    assert param.name == "A" and param.dtype == "handle"
    assert param.type_annotation.element_dtype == "int8"
    buf = f.buffer_map[param]
    assert buf.name == "A" and buf.dtype == "int8"
    assert [d.value for d in buf.shape] == [16, 4] and all(d.dtype == "int32" for d in buf.shape)
    assert buf.data is not param and buf.data.type_annotation.element_dtype == "int8"
    assert f.attrs["global_symbol"] == "f"


def test_private_prim_func_has_no_global_symbol():
    f = prim("A[0] = T.float32(1)", deco="@T.prim_func(private=True)")
    assert "global_symbol" not in f.attrs


def test_func_attr_and_legacy_global_symbol():
    f = prim('T.func_attr({"tir.noalias": True, "global_symbol": "g", "layout_free_buffers": [1]})\nA[0] = 1.0')
    assert f.attrs["tir.noalias"] is True and f.attrs["global_symbol"] == "g"
    assert f.attrs["layout_free_buffers"] == (1,)


def test_handle_match_buffer_symbolic():
    f = prim("n = T.int64()\nX = T.match_buffer(a, (n, T.int64(784)))\nX[0, 0] = T.float32(0)",
             "a: T.handle, B: T.Buffer((T.int64(8),), \"float32\")")
    a = f.params[0]
    assert a.dtype == "handle" and a.type_annotation is None
    x = f.buffer_map[a]
    n, d = x.shape
    assert isinstance(n, tir.Var) and n.name == "n" and n.dtype == "int64"
    assert d == d and isinstance(d, tir.IntImm) and d.dtype == "int64" and d.value == 784
    assert x.dtype == "float32"


def test_scalar_params_and_return_type():
    text = "@T.prim_func\ndef f(n: T.int32, h: T.handle(\"float16\", \"shared\"), b: T.bool) -> T.int32:\n    return n\n"
    f = from_source(text)
    n, h, b = f.params
    assert (n.dtype, h.dtype, b.dtype) == ("int32", "handle", "bool")
    assert (h.type_annotation.element_dtype, h.type_annotation.storage_scope) == ("float16", "shared")
    assert f.ret_type == "int32"
    assert isinstance(f.body, tir.Evaluate) and f.body.value.op == "tir.ret"


def test_legacy_buffer_spellings():
    text = ('@T.prim_func\ndef f(x: T.Buffer[(1, 784), "float32"], b: T.Buffer[T.int64(128), "float32"]) -> None:\n'
            '    x[0, 0] = b[0]\n')
    f = from_source(text)
    x, b = (f.buffer_map[p] for p in f.params)
    assert [d.value for d in x.shape] == [1, 784]
    assert len(b.shape) == 1 and b.shape[0].dtype == "int64"
    assert f.ret_type is None


def test_root_block_holds_function_level_allocations():
    f = prim("C = T.alloc_buffer((16,))\nfor i in range(16):\n    with T.block('b'):\n"
             "        vi = T.axis.spatial(16, i)\n        C[vi] = A[vi]")
    assert isinstance(f.body, tir.BlockRealize)
    root = f.body.block
    assert root.name_hint == "root" and not root.iter_vars and not root.reads and not root.writes
    assert [b.name for b in root.alloc_buffers] == ["C"]
    assert root.alloc_buffers[0].dtype == "float32"


def test_no_root_block_without_blocks():
    f = prim("for i in range(16):\n    A[i] = T.float32(0)")
    assert isinstance(f.body, tir.For)


def test_explicit_root_block_is_kept():
    f = prim("with T.block('root'):\n    C = T.alloc_buffer((4,))\n    for i in range(4):\n"
             "        with T.block('b'):\n            vi = T.axis.spatial(4, i)\n            C[vi] = A[vi]")
    root = f.body.block
    assert root.name_hint == "root" and [b.name for b in root.alloc_buffers] == ["C"]
    assert isinstance(root.body, tir.For)


# ==================================================================== TIR: loops
def test_range_forms():
    f = prim("for i in range(2, 10, 2):\n    A[i] = T.float32(0)\nfor j in range(8):\n    A[j] = T.float32(0)")
    a, b = stmts(f.body)
    assert a.min.value == 2 and a.extent.value == 8 and a.step.value == 2 and a.kind == "serial"
    assert b.min.value == 0 and b.extent.value == 8 and b.step is None
    assert a.loop_var.name == "i" and a.loop_var.dtype == "int32"


def test_loop_var_takes_extent_dtype():
    f = prim("for i in range(T.int64(4)):\n    A[i] = T.float32(0)")
    assert f.body.loop_var.dtype == "int64" and f.body.min.dtype == "int64"


def test_grid_is_nested_serial_loops():
    f = prim("for i, j, k in T.grid(2, T.int64(3), 4):\n    A[i] = T.float32(0)")
    loops = [f.body, f.body.body, f.body.body.body]
    assert [lp.loop_var.name for lp in loops] == ["i", "j", "k"]
    assert [lp.extent.value for lp in loops] == [2, 3, 4]
    assert loops[1].loop_var.dtype == "int64"
    assert all(lp.kind == "serial" for lp in loops)


def test_loop_kinds_and_annotations():
    f = prim("for a in T.parallel(4):\n    for b in T.vectorized(4):\n        for c in T.unroll(2):\n"
             "            for d in T.serial(1, 3, annotations={'pragma': 1}):\n"
             "                for e in T.thread_binding(8, thread='threadIdx.x'):\n"
             "                    A[e] = T.float32(0)")
    a = f.body
    b = a.body
    c = b.body
    d = c.body
    e = d.body
    assert (a.kind, b.kind, c.kind, d.kind, e.kind) == ("parallel", "vectorized", "unroll", "serial", "thread_binding")
    assert d.min.value == 1 and d.extent.value == 2 and dict(d.annotations) == {"pragma": 1}
    assert e.thread_binding.thread_tag == "threadIdx.x" and e.thread_binding.iter_type == tir.IterType.ThreadIndex


def test_while_if_assert():
    f = prim("n: T.int32 = 3\nwhile n < 10:\n    A[0] = T.float32(1)\nif n == 3:\n    A[1] = T.float32(1)\n"
             "else:\n    A[2] = T.float32(1)\nassert n > 0, 'positive'\nA[3] = T.float32(1)")
    let = f.body
    assert isinstance(let, tir.LetStmt) and let.var.name == "n" and let.var.dtype == "int32"
    w, cond, asrt = stmts(let.body)
    assert isinstance(w, tir.While) and isinstance(w.condition, tir.LT)
    assert isinstance(cond, tir.IfThenElse) and cond.else_case is not None
    assert isinstance(asrt, tir.AssertStmt) and asrt.message.value == "positive"
    assert isinstance(asrt.body, tir.BufferStore)


# ==================================================================== TIR: blocks
def test_block_axes_remap_and_regions():
    text = '''
@T.prim_func
def mm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vj, vk])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
'''
    f = from_source(text)
    realize = f.body.block.body.body.body.body
    assert isinstance(realize, tir.BlockRealize)
    block = realize.block
    assert block.name_hint == "C"
    assert [iv.iter_type for iv in block.iter_vars] == [tir.IterType.DataPar, tir.IterType.DataPar,
                                                       tir.IterType.CommReduce]
    assert [iv.var.name for iv in block.iter_vars] == ["vi", "vj", "vk"]
    assert [v.name for v in realize.iter_values] == ["i", "j", "k"]
    assert block.iter_vars[0].dom.extent.value == 16
    assert [r.buffer.name for r in block.reads] == ["A", "B"]
    assert block.writes[0].region[0].min is block.iter_vars[0].var
    assert isinstance(block.init, tir.BufferStore)
    assert realize.predicate.value == 1 and realize.predicate.dtype == "bool"


def test_axis_spatial_reduce_domains_and_dtype():
    f = prim("for i, k in T.grid(T.int64(8), 4):\n    with T.block('b'):\n        vi = T.axis.spatial(T.int64(8), i)\n"
             "        vk = T.axis.reduce((1, 5), k)\n        va = T.axis.S(4, k)\n        vr = T.axis.R(4, k)\n"
             "        A[vk] = T.float32(0)")
    block = f.body.block.body.body.body.block
    vi, vk, va, vr = block.iter_vars
    assert vi.var.dtype == "int64" and vk.var.dtype == "int32"
    assert vk.dom.min.value == 1 and vk.dom.extent.value == 4
    assert vk.iter_type == tir.IterType.CommReduce and vr.iter_type == tir.IterType.CommReduce
    assert va.iter_type == tir.IterType.DataPar


def test_inferred_regions_exclude_written_buffer_with_init():
    f = prim("for i, k in T.grid(4, 16):\n    with T.block('r'):\n        vi, vk = T.axis.remap('SR', [i, k])\n"
             "        with T.init():\n            B[vi] = T.float32(0)\n        B[vi] = B[vi] + A[vi * 4 + vk]",
             'A: T.Buffer((64,), "float32"), B: T.Buffer((4,), "float32")')
    block = f.body.block.body.body.body.block
    assert [r.buffer.name for r in block.reads] == ["A"]
    assert [r.buffer.name for r in block.writes] == ["B"]
    (rng,) = block.writes[0].region
    assert rng.min is block.iter_vars[0].var and rng.extent.value == 1


def test_inferred_regions_bound_constant_accesses_and_inner_loops():
    f = prim("with T.block('b'):\n    for j in range(4):\n        A[j] = B[2] + B[5]\n",
             'A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")')
    block = f.body.block
    (read,) = block.reads
    assert read.buffer.name == "B" and read.region[0].min.value == 2 and read.region[0].extent.value == 4
    (write,) = block.writes
    assert write.region[0].min.value == 0 and write.region[0].extent.value == 4


def test_inferred_regions_full_buffer_when_symbolic():
    f = prim("with T.block('b'):\n    A[n] = T.float32(0)\n    A[n * 2] = T.float32(1)\n",
             'A: T.Buffer((16,), "float32"), n: T.int32')
    block = f.body.block
    (rng,) = block.writes[0].region
    assert rng.min.value == 0 and rng.extent.value == 16


def test_where_block_attr_alloc_and_match_buffer_in_block():
    f = prim("for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, i)\n"
             "        T.where(i < 10)\n        T.block_attr({'meta': 1})\n        S = T.alloc_buffer((4,), scope='shared')\n"
             "        Sub = T.match_buffer(A[0:4], (4,))\n        S[0] = Sub[0]")
    realize = f.body.block.body.body
    block = realize.block
    assert isinstance(realize.predicate, tir.LT)
    assert dict(block.annotations) == {"meta": 1}
    assert block.alloc_buffers[0].scope == "shared"
    mb = block.match_buffers[0]
    assert mb.buffer.name == "Sub" and mb.source.buffer.name == "A" and mb.source.region[0].extent.value == 4
    (read,) = block.reads  # an access through a match_buffer reads its source region
    assert read.buffer.name == "A" and read.region[0].min.value == 0 and read.region[0].extent.value == 4


# ==================================================================== TIR: expressions
def test_python_operators_map_to_nodes():
    f = prim("x: T.int32 = n\nA[0] = T.Cast('float32', x // 2 + x % 3 - x * 4)\n"
             "A[1] = A[2] / A[3]\nT.evaluate(x < 1 and not x > 2 or x == 3)\nT.evaluate(0 < x <= 5)",
             'A: T.Buffer((16,), "float32"), n: T.int32')
    s = stmts(f.body.body)
    sub = s[0].value.value
    assert isinstance(sub, tir.Sub) and isinstance(sub.a, tir.Add)
    assert isinstance(sub.a.a, tir.FloorDiv) and isinstance(sub.a.b, tir.FloorMod) and isinstance(sub.b, tir.Mul)
    assert isinstance(s[1].value, tir.Div)
    e = s[2].value
    assert isinstance(e, tir.Or) and isinstance(e.a, tir.And) and isinstance(e.a.b, tir.Not)
    chain = s[3].value
    assert isinstance(chain, tir.And) and isinstance(chain.a, tir.LT) and isinstance(chain.b, tir.LE)
    assert chain.a.b is chain.b.a


def test_no_constant_folding():
    f = prim("A[0] = T.Cast('float32', 1 + 2)\nA[1] = T.Cast('float32', T.Add(3, 4) * 1)")
    one = f.body.seq[0].value.value
    assert isinstance(one, tir.Add) and one.a.value == 1 and one.b.value == 2 and one.a.dtype == "int32"
    two = f.body.seq[1].value.value
    assert isinstance(two, tir.Mul) and isinstance(two.a, tir.Add)


def test_literal_typing():
    f = prim("for i in range(T.int64(4)):\n    A[i + 1] = A[i] * 2 + 0.5", 'A: T.Buffer((16,), "float16")')
    store = f.body.body
    (idx,) = store.indices
    assert isinstance(idx, tir.Add) and idx.b.dtype == "int64" and idx.b.value == 1
    mul = store.value.a
    assert isinstance(mul.b, tir.FloatImm) and mul.b.dtype == "float16" and mul.b.value == 2.0
    assert store.value.b.dtype == "float16"


def test_store_of_bare_literal_takes_buffer_dtype():
    f = prim("A[0] = 0\nA[1] = 1.5", 'A: T.Buffer((16,), "float16")')
    a, b = f.body.seq
    assert isinstance(a.value, tir.FloatImm) and a.value.dtype == "float16"
    assert b.value.dtype == "float16" and b.value.value == 1.5


def test_typed_literals_and_variable_declarations():
    f = prim("n = T.int64()\nm = T.int32(is_size_var=True)\nB[0] = T.Cast('float32', T.int64(1) + n)\n"
             "A[0] = T.float32('inf')\nA[1] = T.float32(0)\nT.evaluate(T.bool(True))\nT.evaluate(T.uint8(255))\n"
             "T.evaluate(m)",
             'A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")')
    s = stmts(f.body)
    add = s[0].value.value
    assert add.a.dtype == "int64" and add.a.value == 1 and add.b.name == "n" and type(add.b) is tir.Var
    assert s[1].value.value == float("inf") and s[1].value.dtype == "float32"
    assert s[2].value == tir.FloatImm("float32", 0.0) or (s[2].value.value == 0.0 and s[2].value.dtype == "float32")
    assert s[3].value.dtype == "bool" and s[3].value.value == 1
    assert s[4].value.dtype == "uint8" and s[4].value.value == 255
    assert type(s[5].value) is tir.SizeVar and s[5].value.dtype == "int32"


def test_intrinsics_and_constructor_forms():
    f = prim("A[0] = T.max(A[1], T.float32(0))\nA[1] = T.min(A[2], A[3])\nA[2] = T.exp(A[0])\n"
             "A[3] = T.if_then_else(n > 0, A[1], T.float32(0))\nA[4] = T.Select(n > 0, A[1], A[2])\n"
             "T.evaluate(T.truncmod(n, 3) + T.Div(n, 2) + T.floordiv(n, 2) + T.floormod(n, 2))\n"
             "T.evaluate(T.call_extern('int32', 'f', n, 1))\nT.evaluate(T.call_pure_extern('float32', 'g', A[0]))\n"
             "A[5] = T.sqrt(A[0]) + T.tanh(A[0]) + T.sigmoid(A[0]) + T.log(A[0])",
             'A: T.Buffer((16,), "float32"), n: T.int32')
    s = stmts(f.body)
    assert isinstance(s[0].value, tir.Max) and isinstance(s[1].value, tir.Min)
    assert isinstance(s[2].value, tir.Call) and s[2].value.op == "tir.exp" and s[2].value.dtype == "float32"
    assert s[3].value.op == "tir.if_then_else"
    assert isinstance(s[4].value, tir.Select)
    e = s[5].value
    assert isinstance(e.b, tir.FloorMod) and isinstance(e.a.b, tir.FloorDiv)
    assert isinstance(e.a.a.b, tir.Div) and isinstance(e.a.a.a, tir.Mod)
    ext = s[6].value
    assert ext.op == "tir.call_extern" and ext.dtype == "int32" and ext.args[0].value == "f"
    assert s[7].value.op == "tir.call_pure_extern"


def test_bitwise_intrinsic_functions():
    # The printer writes tir.bitwise_* / tir.shift_* calls as T.bitwise_and(a, b) etc.
    f = prim("T.evaluate(T.bitwise_and(n, 3))\nT.evaluate(T.bitwise_or(n, n))\nT.evaluate(T.bitwise_xor(n, 1))\n"
             "T.evaluate(T.shift_left(n, 2))\nT.evaluate(T.shift_right(T.int8(4), T.int8(1)))\n"
             "T.evaluate(T.bitwise_not(n))\nT.evaluate(T.popcount(5))\nT.evaluate(T.clz(T.int64(7)))",
             "n: T.int32")
    calls = [s.value for s in stmts(f.body)]
    assert [c.op for c in calls] == ["tir.bitwise_and", "tir.bitwise_or", "tir.bitwise_xor", "tir.shift_left",
                                     "tir.shift_right", "tir.bitwise_not", "tir.popcount", "tir.clz"]
    assert calls[0].dtype == "int32" and calls[0].args[1].dtype == "int32" and calls[0].args[1].value == 3
    assert calls[4].dtype == "int8" and calls[4].args[1].dtype == "int8"
    # integer intrinsics keep integer literals (not exp's float conversion)
    (five,) = calls[6].args
    assert isinstance(five, tir.IntImm) and five.dtype == "int32" and five.value == 5
    assert calls[7].dtype == "int64"


def test_cast_of_a_bare_literal_casts_the_int32_literal():
    f = prim("A[0] = T.Cast('float32', 3)\nA[1] = T.Cast('float32', -9838512)\nA[2] = T.cast(3, 'float32')")
    a, b, c = (s.value for s in stmts(f.body))
    assert isinstance(a, tir.Cast) and isinstance(a.value, tir.IntImm) and a.value.dtype == "int32"
    assert isinstance(b.value, tir.IntImm) and b.value.value == -9838512
    # T.cast converts literals, as TVM's tir.cast does
    assert isinstance(c, tir.FloatImm) and c.dtype == "float32" and c.value == 3.0


def test_range_extents_are_simplified():
    f = prim("for i in range(n, n + 4):\n    A[i] = T.float32(0)\n"
             "for j in range(4):\n    with T.block('b'):\n        vj = T.axis.spatial(4, j)\n"
             "        T.reads(A[vj * 4:vj * 4 + 4])\n        A[vj] = T.float32(0)",
             'A: T.Buffer((16,), "float32"), n: T.int32')
    loop, nest = stmts(f.body.block.body)
    assert loop.min is f.params[1] and isinstance(loop.extent, tir.IntImm) and loop.extent.value == 4
    (read,) = nest.body.block.reads
    (rng,) = read.region
    assert isinstance(rng.min, tir.Mul) and isinstance(rng.extent, tir.IntImm) and rng.extent.value == 4


def test_let_expression_and_loop_step():
    f = prim("x = T.int32()\nA[0] = T.Let(T.Cast('float32', x), where={x: 1})\n"
             "for i in T.serial(0, 8, step=2):\n    A[i] = T.float32(0)")
    store, loop = stmts(f.body)
    let = store.value
    assert isinstance(let, tir.Let) and let.var.name == "x" and let.value.value == 1
    assert let.body.value is let.var
    assert loop.kind == "serial" and loop.step.value == 2 and loop.extent.value == 8


def test_slices_become_ramps_in_stores_and_loads():
    f = prim("A[0:4] = B[4:8]", 'A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")')
    (idx,) = f.body.indices
    assert isinstance(idx, tir.Ramp) and idx.lanes == 4 and idx.base.value == 0
    assert isinstance(f.body.value, tir.BufferLoad) and f.body.value.indices[0].base.value == 4


def test_vector_slices_with_symbolic_start_are_ramps():
    """TVM's rule for what its printer writes for a Ramp index: ``A[b:b + lanes]`` is a Ramp of stride
    1, ``A[b:b + lanes * s:s]`` one of stride s (negative too); the lane count must be constant."""
    params = 'A: T.Buffer((256,), "float32"), B: T.Buffer((64,), "float32"), n: T.int64'
    sliced = prim("for i in range(4):\n    B[i * 16:i * 16 + 16] = A[i * 32:i * 32 + 32:2] + A[n + 48:n:-3]",
                  params)
    spelled = prim("for i in range(4):\n    B[T.Ramp(i * 16, 1, 16)] = A[T.Ramp(i * 32, 2, 16)] + "
                   "A[T.Ramp(n + T.int64(48), T.int64(-3), 16)]", params)
    assert structural_equal(sliced, spelled)
    store = sliced.body.body
    assert (store.indices[0].lanes, store.indices[0].stride.value) == (16, 1)
    a, b = store.value.a.indices[0], store.value.b.indices[0]
    assert (a.lanes, a.stride.value, b.lanes, b.stride.value, b.stride.dtype) == (16, 2, 16, -3, "int64")
    assert store.value.dtype == "float32x16"
    for body, message in [("B[n:n + n] = A[0:64]", "stop - start is n with step 1"),
                          ("B[0:8:n] = A[0:4]", "a slice step must be a nonzero integer constant"),
                          ("B[4:0] = A[0:4]", "stop - start is -4"),
                          ("B[0:4] = A[n + 4:n]", "a buffer slice read as a value needs a constant positive "
                                                  "length, but stop - start is T.int64(-4)")]:
        with pytest.raises(ScriptError, match=re.escape(message)):
            prim(body, params)


def test_attr_string_node_and_value_are_string_imms():
    f = prim('T.attr("update", "pragma_x", "str")\nA[0] = T.float32(0)')
    assert isinstance(f.body.node, tir.StringImm) and f.body.node.value == "update"
    assert isinstance(f.body.value, tir.StringImm) and f.body.value.value == "str"
    assert f.body.attr_key == "pragma_x"


def test_let_forms_and_decl_buffer():
    f = prim("with T.LetStmt(T.int32(5)) as v:\n    A[v] = T.float32(0)\nD = T.decl_buffer((4,), 'int8')\n"
             "D[0] = T.int8(1)")
    let, decl = stmts(f.body)
    assert isinstance(let, tir.LetStmt) and let.var.name == "v" and let.value.value == 5
    assert isinstance(decl, tir.DeclBuffer) and decl.buffer.dtype == "int8"
    assert isinstance(decl.body, tir.BufferStore) and decl.body.buffer is decl.buffer


def test_scoping_calls_in_with_and_flat_forms():
    f = prim("with T.Assert(n > 0, 'bad'):\n    A[0] = T.float32(1)\nwith T.decl_buffer((4,), 'int8') as D:\n"
             "    D[0] = T.int8(1)\nbx = T.launch_thread('blockIdx.x', 8)\ntx = T.env_thread('threadIdx.x')\n"
             "T.launch_thread(tx, 4)\nbuf = T.allocate([16], 'float32', 'local')\n"
             "T.attr(buf, 'storage_alignment', 16)\nA[bx * 4 + tx] = T.float32(0)",
             'A: T.Buffer((64,), "float32"), n: T.int32')
    asrt, decl, launch = stmts(f.body)
    assert isinstance(asrt, tir.AssertStmt) and isinstance(asrt.body, tir.BufferStore)
    assert isinstance(decl, tir.DeclBuffer) and decl.body.buffer is decl.buffer
    assert isinstance(launch, tir.AttrStmt) and launch.attr_key == "thread_extent"
    assert launch.node.thread_tag == "blockIdx.x" and launch.node.var.name == "bx"
    inner = launch.body
    assert inner.node.thread_tag == "threadIdx.x" and inner.value.value == 4
    alloc = inner.body
    assert isinstance(alloc, tir.Allocate) and alloc.buffer_var.type_annotation.storage_scope == "local"
    attr = alloc.body
    assert isinstance(attr, tir.AttrStmt) and attr.node is alloc.buffer_var and attr.value.value == 16
    idx = attr.body.indices[0]
    assert idx.a.a is launch.node.var and idx.b is inner.node.var


def test_flat_let_stmt_call():
    f = prim("x = T.LetStmt(n + 1)\nA[x] = T.float32(2)", 'A: T.Buffer((16,), "float32"), n: T.int32')
    assert isinstance(f.body, tir.LetStmt) and f.body.var.name == "x"
    assert f.body.body.indices[0] is f.body.var


def test_unannotated_assignment_is_a_let():
    f = prim("x = n * 2\nA[x] = T.float32(0)", 'A: T.Buffer((16,), "float32"), n: T.int32')
    assert isinstance(f.body, tir.LetStmt) and isinstance(f.body.value, tir.Mul)
    assert f.body.body.indices[0] is f.body.var


# ==================================================================== Relax
def test_relax_function_signature_and_symbolic_vars():
    func = relax_fn("n = T.int64()\nR.func_attr({'num_input': 1})\ny: R.Tensor((n, 4), 'float32') = R.add(x, x)\nreturn z",
                    'x: R.Tensor(("n", 4), dtype="float32"), z: R.Tensor(("n * 2",), "float32")',
                    'R.Tensor(("n * 2",), "float32")')
    x, z = func.params
    n = x.struct_info.shape[0]
    assert isinstance(n, tir.Var) and n.name == "n" and n.dtype == "int64"
    (b,) = bindings(func)
    assert b.var.struct_info.shape[0] is n
    ret = func.ret_struct_info.shape[0]
    assert isinstance(ret, tir.Mul) and ret.a is n and ret.b.value == 2 and ret.b.dtype == "int64"
    assert z.struct_info.shape[0].a is n
    assert func.attrs["num_input"] == 1 and func.attrs["global_symbol"] == "main"
    assert func.is_pure


def test_relax_decorator_options():
    func = relax_fn("return x", deco="@R.function(pure=False, private=True)")
    assert not func.is_pure and "global_symbol" not in func.attrs


def test_struct_info_annotations():
    func = relax_fn("return x", 'x: R.Tensor((2, 3), dtype="float32"), s: R.Shape([1, 2]), t: R.Tuple(R.Tensor, R.Object), '
                    'p: R.Prim("int64"), q: R.Prim(value="m"), c: R.Callable((R.Object,), R.Tensor((2,), "int8"), False), '
                    'u: R.Tensor(dtype="float16", ndim=2), v: R.Shape(ndim=3), w: R.Tensor')
    x, s, t, p, q, c, u, v, w = (p_.struct_info for p_ in func.params)
    assert x.dtype == "float32" and [d.value for d in x.shape] == [2, 3] and x.shape[0].dtype == "int64"
    assert [d.value for d in s.values] == [1, 2]
    assert isinstance(t.fields[0], rx.TensorStructInfo) and isinstance(t.fields[1], rx.ObjectStructInfo)
    assert p.dtype == "int64" and isinstance(q.value, tir.Var) and q.value.name == "m"
    assert isinstance(c, rx.FuncStructInfo) and not c.purity and c.ret.dtype == "int8"
    assert u.shape is None and u.ndim == 2 and u.dtype == "float16"
    assert v.values is None and v.ndim == 3
    assert w.shape is None and w.ndim == -1 and w.dtype == "void"


def test_dataflow_block_and_outputs():
    func = relax_fn("with R.dataflow():\n    lv = R.add(x, x)\n    gv = R.multiply(lv, x)\n    R.output(gv)\nreturn gv")
    (block,) = func.body.blocks
    assert isinstance(block, rx.DataflowBlock)
    lv, gv = block.bindings
    assert type(lv.var) is rx.DataflowVar and type(gv.var) is rx.Var
    assert gv.value.args[0] is lv.var
    assert func.body.body is gv.var


def test_return_inside_dataflow():
    func = relax_fn("with R.dataflow():\n    lv = R.add(x, x)\n    gv = R.multiply(lv, x)\n    return gv")
    (block,) = func.body.blocks
    assert type(block.bindings[1].var) is rx.Var and func.body.body is block.bindings[1].var


def test_annotated_and_unannotated_bindings():
    func = relax_fn("a: R.Tensor(dtype='float32', ndim=2) = R.add(x, x)\nb = R.add(a, a)\nreturn b")
    a, b = bindings(func)
    assert a.var.struct_info.shape is None and a.var.struct_info.ndim == 2
    assert b.var.struct_info.shape is None  # inferred from the annotated a
    assert a.value.struct_info.shape is not None  # the call's own inference


def test_return_type_without_annotation_keeps_only_parameter_variables():
    func = relax_fn("m = T.int64()\nz = R.match_cast(y, R.Tensor((m,), 'float32'))\nreturn (x, z)",
                    'x: R.Tensor(("n",), "float32"), y: R.Tensor(dtype="float32", ndim=1)')
    a, b = func.ret_struct_info.fields
    assert a.shape[0] is func.params[0].struct_info.shape[0]
    assert b.shape is None and b.ndim == 1


def test_nested_function_as_dataflow_output():
    func = relax_fn("with R.dataflow():\n    @R.function\n    def g(a: R.Tensor((2, 3), 'float32')):\n"
                    "        return a\n    R.output(g)\nreturn x")
    (b,) = bindings(func)
    assert type(b.var) is rx.Var and isinstance(b.value, rx.Function)


def test_match_cast_defines_symbolic_var():
    func = relax_fn("m = T.int64()\ny = R.match_cast(x, R.Tensor((m, 3), 'float32'))\nreturn y",
                    'x: R.Tensor(dtype="float32", ndim=2)')
    (mc,) = bindings(func)
    assert isinstance(mc, rx.MatchCast)
    m = mc.struct_info.shape[0]
    assert isinstance(m, tir.Var) and m.name == "m" and mc.var.struct_info.shape[0] is m


def test_tuples_and_tuple_get_item():
    func = relax_fn("t = (x, x)\na = t[1]\nb, c = t\nreturn (a, b)")
    t, a, b, c = bindings(func)
    assert isinstance(t.value, rx.Tuple) and len(t.value.fields) == 2
    assert isinstance(a.value, rx.TupleGetItem) and a.value.index == 1
    assert b.value.index == 0 and c.value.index == 1
    assert isinstance(func.body.body, rx.Tuple)


def test_if_else_branches():
    func = relax_fn("if c:\n    r = R.add(x, x)\nelse:\n    q = R.multiply(x, x)\n    r = q\nreturn r",
                    'x: R.Tensor((2, 3), "float32"), c: R.Tensor((), "bool")')
    (b,) = bindings(func)
    assert b.var.name_hint == "r" and isinstance(b.value, rx.If)
    then, other = b.value.true_branch, b.value.false_branch
    assert isinstance(then, rx.SeqExpr) and then.body.name_hint == "r_then"
    assert then.blocks[0].bindings[-1].var is then.body
    assert other.body.name_hint == "q"  # a variable as the last value stays the branch's value
    assert b.var.struct_info.dtype == "float32"


def test_if_branches_have_their_own_scopes():
    func = relax_fn("if c:\n    t = R.add(x, x)\n    r = t\nelse:\n    t = R.multiply(x, x)\n    r = t\nreturn r",
                    'x: R.Tensor((2, 3), "float32"), c: R.Prim("bool")')
    (b,) = bindings(func)
    assert b.value.true_branch.body is not b.value.false_branch.body


def test_literal_values():
    func = relax_fn("a = R.const(1.5, 'float32')\nb = R.const([1, 2], 'int64')\nc = R.shape([1, 2])\n"
                    "d = R.prim_value(3)\ne = R.str('hi')\nf = R.dtype('float16')\ng = R.const(True)\nreturn x")
    a, b, c, d, e, f, g = (bd.value for bd in bindings(func))
    assert isinstance(a, rx.Constant) and a.data.dtype == np.float32 and a.data.shape == ()
    assert b.data.tolist() == [1, 2] and b.struct_info.dtype == "int64"
    assert isinstance(c, rx.ShapeExpr) and [v.value for v in c.values] == [1, 2] and c.values[0].dtype == "int64"
    assert isinstance(d, rx.PrimValue) and d.value.dtype == "int64" and d.value.value == 3
    assert isinstance(e, rx.StringImm) and e.value == "hi"
    assert isinstance(f, rx.DataTypeImm) and f.value == "float16"
    assert g.data.dtype == np.bool_


def test_reshape_minus_one_is_resolved():
    # As TVM's reshape: the -1 becomes the length it stands for (R.shape([-1]) is not a valid shape).
    func = relax_fn("a = R.reshape(x, (-1,))\nb = R.reshape(x, (-1, 2))\nreturn a",
                    'x: R.Tensor(("n", 4), "float32")')
    a, b = (bd.value for bd in bindings(func))
    (dim,) = a.args[1].values
    assert isinstance(dim, tir.Mul) and dim.a is func.params[0].struct_info.shape[0]
    assert [d.value for d in b.args[1].values[1:]] == [2] and not isinstance(b.args[1].values[0], tir.IntImm)
    assert structural_equal(a.args[1].struct_info, rx.ShapeStructInfo(a.struct_info.shape, 1))


def test_layout_transform_index_map():
    from tvmlite.ir.arith import IndexMap

    func = relax_fn("a = R.layout_transform(x, index_map=T.index_map(lambda i, j: (j // 2, i, j % 2)))\nreturn a",
                    'x: R.Tensor((4, 6), "float32")')
    (b,) = bindings(func)
    imap = b.value.attrs["index_map"]
    assert isinstance(imap, IndexMap) and [v.name for v in imap.initial_indices] == ["i", "j"]
    assert all(v.dtype == "int64" for v in imap.initial_indices)
    assert structural_equal(imap, IndexMap.from_func(lambda i, j: (j // 2, i, j % 2)))
    assert [d.value for d in b.var.struct_info.shape] == [3, 4, 2]


def test_op_calls_attributes_and_normal_form():
    func = relax_fn("a = R.permute_dims(x, axes=None)\nb = R.sum(x, [1], True)\nc = R.multiply(R.add(x, x), x)\n"
                    "d = R.matmul(x, a, out_dtype='void')\nreturn c")
    a, b, tmp, c, d = bindings(func)
    assert a.value.op.name == "relax.permute_dims" and dict(a.value.attrs) == {"axes": None}
    assert dict(b.value.attrs) == {"axis": (1,), "keepdims": True}
    assert tmp.value.op.name == "relax.add" and c.value.args[0] is tmp.var
    assert d.value.attrs["out_dtype"] == "void"
    assert [dd.value for dd in d.var.struct_info.shape] == [2, 2]


def test_python_operators_on_relax_values():
    func = relax_fn("a = x + x\nb = x * 2.0\nc = -x\nd = x < x\nreturn a")
    a, b, c, d = (bd.value for bd in bindings(func))
    assert a.op.name == "relax.add" and b.op.name == "relax.multiply"
    assert isinstance(b.args[1], rx.Constant) and b.args[1].data.dtype == np.float32
    assert c.op.name == "relax.negative" and d.op.name == "relax.less"


MODULE = '''
@I.ir_module
class Mod:
    @T.prim_func(private=True)
    def add(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        C = T.match_buffer(c, (n,))
        for i in range(n):
            with T.block("add"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] + B[vi]

    @R.function
    def helper(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        return x

    @R.function
    def main(x: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
        m = T.int64()
        cls = Mod
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((m,), dtype="float32"), tir_vars=R.shape([m]))
            lv2 = cls.helper(lv)
            lv3 = later(lv2)
            gv = R.call_tir_inplace(cls.add, (lv3, x, x), inplace_indices=[2], out_sinfo=R.Tensor((m,), "float32"))
            R.output(gv)
        return gv

    @R.function
    def later(x: R.Tensor(("k",), "float32")) -> R.Tensor(("k",), "float32"):
        return x
'''


def test_module_functions_and_calls():
    mod = from_source(MODULE)
    assert isinstance(mod, IRModule)
    assert [g.name_hint for g in mod.get_global_vars()] == ["add", "helper", "main", "later"]
    main = mod["main"]
    lv, lv2, lv3, gv = main.body.blocks[0].bindings
    call = lv.value
    assert call.op.name == "relax.call_tir"
    assert isinstance(call.args[0], GlobalVar) and call.args[0] is mod.get_global_var("add")
    assert isinstance(call.args[1], rx.Tuple) and isinstance(call.args[2], rx.ShapeExpr)
    assert call.sinfo_args[0] == call.struct_info
    assert lv2.value.op is mod.get_global_var("helper")
    m = main.params[0].struct_info.shape[0]
    assert lv2.var.struct_info.shape[0] is m  # the callee's n is bound to the argument's m
    assert lv3.value.op is mod.get_global_var("later")  # a bare name, defined later in the class
    assert gv.value.op.name == "relax.call_tir_inplace" and gv.value.attrs["inplace_indices"] == (2,)


def test_packed_calls_and_extern_functions():
    text = '''
@I.ir_module
class M:
    ext = R.ExternFunc("my_ext")
    I.module_attrs({"system_lib_prefix": "p_"})

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        a = R.call_packed("f", x, sinfo_args=R.Tensor((4,), "float32"))
        b = R.call_pure_packed("g", a, sinfo_args=(R.Shape(ndim=1),))
        c = R.call_dps_packed("h", (x,), out_sinfo=R.Tensor((4,), "float32"))
        R.print(c, format=R.str("c: {}"))
        return c
'''
    mod = from_source(text)
    assert isinstance(mod["ext"], rx.ExternFunc) and mod["ext"].global_symbol == "my_ext"
    assert mod.attrs["system_lib_prefix"] == "p_"
    a, b, c, p = bindings(mod["main"])
    assert isinstance(a.value.op, rx.ExternFunc) and a.value.op.global_symbol == "f"
    assert a.var.struct_info.dtype == "float32"
    assert b.value.op.name == "relax.call_pure_packed" and isinstance(b.value.args[0], rx.ExternFunc)
    assert isinstance(b.var.struct_info, rx.ShapeStructInfo)
    assert c.value.op.name == "relax.call_dps_packed"
    assert p.value.op.name == "relax.print" and isinstance(p.value.args[0], rx.StringImm)


def test_nested_function_binding():
    func = relax_fn("@R.function\ndef inner(y: R.Tensor((2, 3), 'float32')) -> R.Tensor((2, 3), 'float32'):\n"
                    "    return R.add(y, x)\nz = inner(x)\nreturn z")
    inner, z = bindings(func)
    assert isinstance(inner.value, rx.Function) and inner.var.name_hint == "inner"
    assert "global_symbol" not in inner.value.attrs
    assert z.value.op is inner.var and z.var.struct_info.dtype == "float32"
    # a returned call is bound to a variable of its own (normal form)
    assert isinstance(inner.value.body.body, rx.Var)


def test_legacy_spellings():
    text = '''
@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def relu(A: T.Buffer[(1, 4), "float32"], B: T.Buffer[(1, 4), "float32"]) -> None:
        T.func_attr({"global_symbol": "relu", "tir.noalias": True})
        for i0, i1 in T.grid(1, 4):
            with T.block("compute"):
                i = T.axis.spatial(1, i0)
                j = T.axis.spatial(4, i1)
                B[i, j] = T.max(A[i, j], T.float32(0))

    @R.function
    def main(x: Tensor((1, 4), "float32")) -> Tensor(None, "float32", ndim = 2):
        with relax.dataflow():
            lv0 = relax.multiply(x, x)
            lv1 = R.call_tir(relu, (lv0,), (1, 4), dtype="float32")
            gv0: Tensor((1, 4), "float32") = relax.ewise_fma(lv1, x, x)
            relax.output(gv0)
        return gv0
'''
    mod = from_source(text)
    main = mod["main"]
    # The annotation Tensor(None, "float32", ndim=2) is less specific than the body: narrowed (TVM's Function).
    assert [d.value for d in main.ret_struct_info.shape] == [1, 4]
    lv0, lv1, gv0 = main.body.blocks[0].bindings
    assert lv0.value.op.name == "relax.multiply"
    assert lv1.value.op.name == "relax.call_tir" and [d.value for d in lv1.var.struct_info.shape] == [1, 4]
    assert gv0.value.op.name == "relax.ewise_fma" and type(gv0.var) is rx.Var
    assert mod["relu"].attrs["global_symbol"] == "relu"


def test_imports_bind_prefixes():
    text = ("from tvm.script import ir as IR\nfrom tvm.script import relax as RX\nfrom tvm.script import tir as TX\n"
            "@IR.ir_module\nclass M:\n    @RX.function\n    def main(x: RX.Tensor((2,), 'int32')):\n"
            "        n = TX.int64()\n        return x\n")
    mod = from_source(text)
    assert isinstance(mod["main"], rx.Function)


def test_extra_vars():
    text = ("@R.function\ndef main(x: R.Tensor((2, 3), 'float32')):\n    c = R.add(x, w)\n"
            "    d = R.const(k, 'float32')\n    return c\n")
    w = np.ones((2, 3), "float32")
    func = from_source(text, extra_vars={"w": w, "k": 2})
    c, d = bindings(func)
    assert isinstance(c.value.args[1], rx.Constant) and np.array_equal(c.value.args[1].data, w)
    assert float(d.value.data) == 2.0


def test_metadata_prelude_and_meta_extra_vars():
    from tvmlite.script.printer.metadata import dump_metadata

    data = np.arange(6, dtype="float32").reshape(2, 3)
    prelude = f'metadata = tvm.ir.load_json("""{dump_metadata([data])}""")\n'
    text = prelude + ("@R.function\ndef main(x: R.Tensor((2, 3), 'float32')):\n"
                      "    c = R.add(x, metadata[\"relax.expr.Constant\"][0])\n    return c\n")
    (c,) = bindings(from_source(text))
    assert np.array_equal(c.value.args[1].data, data)
    legacy = ("@R.function\ndef main(x: Tensor((2, 3), 'float32')):\n"
              "    c = relax.add(x, meta[relay.Constant][0])\n    return c\n")
    (c,) = bindings(from_source(legacy, extra_vars={"meta": {"relay.Constant": [data]}}))
    assert np.array_equal(c.value.args[1].data, data)
    with pytest.raises(ScriptError) as info:
        from_source(legacy)
    assert info.value.line == 3 and "meta[relay.Constant][0]" in info.value.message


def test_parse_file_uses_the_path(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("@R.function\ndef main(x: R.Tensor((2,), 'float32')):\n    return y\n")
    with pytest.raises(ScriptError) as info:
        parse_file(path)
    assert str(path) in str(info.value) and info.value.line == 3


def test_round_trip_through_printer():
    mod = from_source(MODULE)
    again = from_source(mod.script())
    assert structural_equal(mod, again)


# ==================================================================== the corpus
def _corpus(folder: str) -> list[Path]:
    base = CORPUS / folder if folder else CORPUS
    return sorted(base.glob("*.py"))


@pytest.mark.parametrize("path", _corpus(""), ids=lambda p: p.name)
def test_corpus_parses(path):
    result = parse_file(path)
    assert isinstance(result, (IRModule, rx.Function))


@pytest.mark.parametrize("path", _corpus("legacy"), ids=lambda p: p.name)
def test_legacy_corpus(path):
    text = path.read_text()
    if "meta[" not in text:
        assert parse_file(path) is not None
        return
    with pytest.raises(ScriptError) as info:
        from_source(text, str(path))
    err = info.value
    line = text.split("\n")[err.line - 1]
    assert "meta[relay.Constant][" in err.message and "meta[" in line
    assert re.search(rf":{err.line}:{err.col}:", str(err))
    shapes = [(128, 784), (128,), (10, 128), (10,)]
    meta = {"relay.Constant": [np.zeros(s, "float32") for s in shapes]}
    mod = from_source(text, str(path), extra_vars={"meta": meta})
    assert isinstance(mod, IRModule)


def test_print_format_is_keyword_only():
    func = from_source('''
@R.function(pure=False)
def f(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
    R.print(x)
    R.print(x, x, format=R.str("{} {}"))
    return x
''')
    calls = [b.value for b in func.body.blocks[0].bindings]
    assert [c.args[0].value for c in calls] == ["", "{} {}"]
    assert [len(c.args) for c in calls] == [2, 3]
    with pytest.raises(ScriptError, match="R.print: the format must be a string"):
        from_source('@R.function(pure=False)\ndef f(x: R.Tensor((2,), "float32")):\n    R.print(x, format=x)\n    return x\n')
