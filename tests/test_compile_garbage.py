"""A compile leaves (almost) no reference cycles behind: what it drops is freed by reference
counting at once, so the cyclic garbage collector's first collection after the compile (which
scans every object the compile left young) has little to scan. And the visitors' dispatch: a
handler per node class, cached per visitor class, whatever kind of attribute the handler is."""
from __future__ import annotations

import gc
from functools import partial

import numpy as np
import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.backend.llvm_codegen import generate
from tvmlite.ir import tir
from tvmlite.ir.block_builder import BlockBuilder
from tvmlite.ir.functor import Visitor, post_order_visit
from tvmlite.passes.schedule.tree import block_realizes, child_realizes, find_first
from tvmlite.script import from_source
from tvmlite.te import compute, placeholder
from tvmlite.te.create import topo_order
from tvmlite.te.expr import expr_vars

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)

ADD = """
from tvmlite.script import ir as I
from tvmlite.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
        for i, j in T.grid(8, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
"""


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv("TVMLITE_CACHE_DIR", "off")


def cyclic_garbage(fn, *args):
    """(fn's result, the number of objects in reference cycles that fn left unreachable)."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        out = fn(*args)
        return out, gc.collect()
    finally:
        if was:
            gc.enable()


def lowered_add():
    mod = from_source(ADD)
    return P.get_pipeline("default_tir")(mod)


def test_generating_llvm_ir_leaves_no_cycles():
    mod = lowered_add()
    generate(mod)  # first use: caches fill
    gen, garbage = cyclic_garbage(generate, mod)
    assert garbage == 0
    assert 'define i32 @"tvmlite_add"(' in gen.text and "!llvm.loop" in gen.text


def test_a_block_builder_is_no_cycle():
    def build():
        bb = BlockBuilder()
        return bb.get()

    build()
    _, garbage = cyclic_garbage(build)
    assert garbage == 0


def test_walks_leave_no_cycles():
    func = lowered_add()["add"]
    sched = from_source(ADD)["add"]
    x = tir.Var("x", "int32")
    e = tir.Add(tir.Mul(x, tir.IntImm("int32", 2)), x)

    def walks():
        seen = []
        post_order_visit(func.body, seen.append)
        return (len(seen), len(block_realizes(sched.body)), len(child_realizes(sched.body)),
                find_first(sched.body, lambda s: isinstance(s, tir.For)) is not None, expr_vars(e))

    first = walks()
    again, garbage = cyclic_garbage(walks)
    assert garbage == 0
    assert again[:4] == first[:4] and again[1:4] == (2, 1, True) and again[4] == [x]


def test_topo_order_producers_first_without_cycles():
    A = placeholder((4, 4), "float32", name="A")
    B = compute((4, 4), lambda i, j: A[i, j] * 2.0, name="B")
    C = compute((4, 4), lambda i, j: B[i, j] + A[i, j], name="C")
    topo_order([C])
    order, garbage = cyclic_garbage(topo_order, [C])
    assert [t.name for t in order] == ["A", "B", "C"] and garbage == 0


def test_a_compiled_model_still_computes_the_same():
    mod = P.get_pipeline("default")(from_source(read_corpus("seed004_mlp_torch.py")))
    ex = tvmlite.compile(mod)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d.value) for d in p.struct_info.shape], dtype=np.float32)
            for p in mod["main"].params]
    got = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](*args).numpy()
    interp = tvmlite.VirtualMachine(tvmlite.compile(mod, vm_pipeline=None), tvmlite.cpu())["main"](*args).numpy()
    np.testing.assert_array_equal(got, interp)


# ---------------------------------------------------------------- dispatch
class _Counter(Visitor):
    def __init__(self):
        self.kinds = []

    def visit_int_imm_(self, node):
        self.kinds.append("int")

    @staticmethod
    def _float(node):
        return node

    def generic_visit(self, node):
        self.kinds.append(type(node).__name__)
        super().generic_visit(node)


class _WithDescriptors(_Counter):
    visit_float_imm_ = partial(lambda tag, node: tag, "partial")  # not a plain function: no self


def test_dispatch_per_class_and_per_kind_of_handler():
    e = tir.Add(tir.IntImm("int32", 1), tir.IntImm("int32", 2))
    c = _Counter()
    c.visit(e)
    assert c.kinds == ["Add", "int", "int"]
    f = tir.FloatImm("float32", 1.0)
    d = _WithDescriptors()
    assert d._handler(f)(f) == "partial" and d._dispatch(f) == "partial"
    d.visit(e)
    assert d.kinds == ["Add", "int", "int"]
    # Each class has its own cache: the subclass's handler does not leak into the base.
    assert _Counter._handler_fns is not _WithDescriptors._handler_fns
    c2 = _Counter()
    c2.visit(f)
    assert c2.kinds == ["FloatImm"]
    assert c2._handler(f).__self__ is c2


# ---------------------------------------------------------------- the TE evaluator copies less
INPLACE = """
from tvmlite.script import tirx as T

@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("w"):
            vi = T.axis.spatial(4, i)
            A[vi] = A[vi] + T.float32(1)
    for i in range(4):
        with T.block("r"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * T.float32(2)
"""

LET_THEN_WRITE = """
from tvmlite.script import tirx as T

@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("c"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi]
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            old: T.float32 = C[vi]
            C[vi] = T.float32(0)
            B[vi] = old + C[vi]
"""


def test_evaluator_inputs_are_not_copied_but_never_written():
    from tvmlite.te import evaluate_prim_func

    a = np.arange(4, dtype=np.float32)
    (b,) = evaluate_prim_func(from_source(INPLACE), [a])
    np.testing.assert_array_equal(a, [0, 1, 2, 3])  # the caller's array is untouched
    np.testing.assert_array_equal(b, [2, 4, 6, 8])
    (b,) = evaluate_prim_func(from_source(LET_THEN_WRITE), [a])
    np.testing.assert_array_equal(b, [0, 1, 2, 3])  # the let kept the value read before the write


# ---------------------------------------------------------------- deterministic lowering
SIX_LOCALS = """
from tvmlite.script import tirx as T

@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    {allocs}
    for i in range(4):
        for j in range(8):
            with T.block("fill"):
                vi, vj = T.axis.remap("SS", [i, j])
                {fills}
        for j in range(8):
            with T.block("sum"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = {total}
"""


def test_compacted_declarations_come_out_in_program_order():
    names = ["t5", "t1", "t4", "t0", "t3", "t2"]
    src = SIX_LOCALS.format(
        allocs="\n    ".join(f'{n} = T.alloc_buffer((4, 8), "float32")' for n in names),
        fills="\n                ".join(f"{n}[vi, vj] = A[vi, vj] * T.float32({k})" for k, n in enumerate(names)),
        total=" + ".join(f"{n}[vi, vj]" for n in names))
    for _ in range(4):  # fresh objects each time: an order by address would vary
        mod = tvmlite.IRModule({"f": from_source(src)})
        text = P.get_pipeline("lower")(mod).script()
        found = [line.split("=")[0].strip() for line in text.splitlines() if "T.decl_buffer((T.int64(8),)" in line
                 or "T.decl_buffer((8,)" in line]
        assert found == names, text
