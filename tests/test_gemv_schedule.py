"""The default CPU schedule of a one-row matmul (passes/schedule/gemv_rules.py): a batch-1 linear
layer with a constant weight stored [in, out] keeps blocks of outputs in registers and streams the
weight once, with no per-call copy of its panels; the trace pinned, the numbers those of the
unscheduled function."""
from __future__ import annotations

import textwrap

from schedule_util import assert_replays, assert_same_numbers

from tvmlite.ir.module import IRModule
from tvmlite.passes.schedule.default_cpu import default_schedule
from tvmlite.script import from_source


def trace_of(sch) -> str:
    """The trace's steps, without the two header lines."""
    return "\n".join(line[2:] for line in str(sch.trace).splitlines()[2:])


def steps(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


# The first layer of the 784-256-10 MLP after the default pipeline: Simplify wrote the unit row as
# the constant 0; bias and relu are the epilogue.
LAYER = '''
@T.prim_func
def main(x: T.Buffer((T.int64(1), T.int64(784)), "float32"), w: T.Buffer((T.int64(784), T.int64(256)), "float32"), b: T.Buffer((T.int64(256),), "float32"), y: T.Buffer((T.int64(1), T.int64(256)), "float32")):
    T.func_attr({"tir.noalias": True})
    mm = T.alloc_buffer((T.int64(1), T.int64(256)))
    for i0, i1, k in T.grid(T.int64(1), T.int64(256), T.int64(784)):
        with T.block("matmul"):
            v_i0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_i1, v_k = T.axis.remap("SR", [i1, k])
            with T.init():
                mm[T.int64(0), v_i1] = T.float32(0.0)
            mm[T.int64(0), v_i1] = mm[T.int64(0), v_i1] + x[T.int64(0), v_k] * w[v_k, v_i1]
    for ax0, ax1 in T.grid(T.int64(1), T.int64(256)):
        with T.block("relu"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1 = T.axis.spatial(T.int64(256), ax1)
            y[T.int64(0), v_ax1] = T.max(mm[T.int64(0), v_ax1] + b[v_ax1], T.float32(0.0))
'''


def test_one_row_matmul_is_a_gemv_without_a_panel_copy() -> None:
    mod = IRModule({"main": from_source(LAYER)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="matmul", func_name="main")
        l1, l2, l3 = sch.get_loops(block=b0)
        l4, l5 = sch.split(loop=l2, factors=[None, 128], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l1, l4, l3, l5)
        b6 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
        b7 = sch.get_block(name="relu", func_name="main")
        sch.reverse_compute_inline(block=b7)
        sch.reverse_compute_at(block=b6, loop=l4, preserve_unit_loops=False, index=-1)
        b8 = sch.decompose_reduction(block=b0, loop=l3)
        sch.vectorize(loop=l5)
        l9, l10, l11 = sch.get_loops(block=b8)
        sch.vectorize(loop=l11)
        l12, l13, l14 = sch.get_loops(block=b6)
        sch.vectorize(loop=l14)
        sch.parallel(loop=l4)''')
    assert "cache_read" not in str(sch.trace) and "w_global" not in sch.mod.script()
    assert_same_numbers(mod, sch.mod, rtol=1e-5, atol=1e-5)
    assert_replays(sch, mod)


# The second layer: 10 outputs, fewer than a vector block: one block of all of them.
SHORT = '''
@T.prim_func
def main(x: T.Buffer((T.int64(1), T.int64(256)), "float32"), w: T.Buffer((T.int64(256), T.int64(10)), "float32"), y: T.Buffer((T.int64(1), T.int64(10)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0, i1, k in T.grid(T.int64(1), T.int64(10), T.int64(256)):
        with T.block("matmul"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            with T.init():
                y[v_i0, v_i1] = T.float32(0.0)
            y[v_i0, v_i1] = y[v_i0, v_i1] + x[v_i0, v_k] * w[v_k, v_i1]
'''


def test_a_short_layer_is_one_block_of_outputs() -> None:
    mod = IRModule({"main": from_source(SHORT)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="matmul", func_name="main")
        l1, l2, l3 = sch.get_loops(block=b0)
        l4, l5 = sch.split(loop=l2, factors=[None, 10], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l1, l4, l3, l5)
        b6 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
        sch.reverse_compute_at(block=b6, loop=l4, preserve_unit_loops=False, index=-1)
        b7 = sch.decompose_reduction(block=b0, loop=l3)
        sch.vectorize(loop=l5)
        l8, l9, l10 = sch.get_loops(block=b7)
        sch.vectorize(loop=l10)
        l11, l12, l13 = sch.get_loops(block=b6)
        sch.vectorize(loop=l13)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-5, atol=1e-5)
    assert_replays(sch, mod)


# A layer of 8192 outputs over 1024 inputs (32 MB of weight, beyond a core's cache): the blocks of
# columns run in parallel.
WIDE = SHORT.replace("T.int64(10)", "T.int64(8192)").replace("T.int64(256)", "T.int64(1024)")


def test_a_large_gemv_runs_its_column_blocks_in_parallel() -> None:
    mod = IRModule({"main": from_source(WIDE)})
    sch = default_schedule(mod["main"])
    lines = trace_of(sch).splitlines()
    assert lines[2] == ("l4, l5 = sch.split(loop=l2, factors=[None, 128], preserve_unit_iters=True, "
                        "disable_predication=False)")
    assert lines[-1] == "sch.parallel(loop=l4)"


# resnet18's classifier: 1000 outputs, no multiple of 16 but 25 blocks of 40 (two vectors and a
# half: 281 -> 65 us inside resnet18 against blocks of 16 with a predicated last one, whose
# predicate kept the loop from being vectorised).
CLASSIFIER = SHORT.replace("T.int64(10)", "T.int64(1000)").replace("T.int64(256)", "T.int64(512)")
# 1001 outputs: no multiple of 4 divides it, so blocks of 16 and a partial last one.
ODD = SHORT.replace("T.int64(10)", "T.int64(1001)").replace("T.int64(256)", "T.int64(512)")


def test_a_gemv_takes_blocks_of_quarter_vectors_that_divide_it() -> None:
    """1000 outputs: 10 blocks of 100 (the widest multiple of 4 lanes up to 128 that divides 1000)."""
    mod = IRModule({"main": from_source(CLASSIFIER)})
    sch = default_schedule(mod["main"])
    assert "factors=[None, 100]" in trace_of(sch)
    assert_same_numbers(mod, sch.mod, rtol=1e-5, atol=1e-5)


def test_a_gemv_with_a_partial_last_block_computes_every_output() -> None:
    mod = IRModule({"main": from_source(ODD)})
    sch = default_schedule(mod["main"])
    assert "factors=[None, 16]" in trace_of(sch)
    assert_same_numbers(mod, sch.mod, rtol=1e-5, atol=1e-5)


# The first layer of the MLP at batch 64: one block of rows, so the register tile reads W's rows
# in place instead of copying its panels (a copy only one row block would read).
BATCH64 = '''
@T.prim_func
def main(x: T.Buffer((T.int64(64), T.int64(784)), "float32"), w: T.Buffer((T.int64(784), T.int64(256)), "float32"), b: T.Buffer((T.int64(256),), "float32"), y: T.Buffer((T.int64(64), T.int64(256)), "float32")):
    T.func_attr({"tir.noalias": True})
    mm = T.alloc_buffer((T.int64(64), T.int64(256)))
    for i0, i1, k in T.grid(T.int64(64), T.int64(256), T.int64(784)):
        with T.block("matmul"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            with T.init():
                mm[v_i0, v_i1] = T.float32(0.0)
            mm[v_i0, v_i1] = mm[v_i0, v_i1] + x[v_i0, v_k] * w[v_k, v_i1]
    for ax0, ax1 in T.grid(T.int64(64), T.int64(256)):
        with T.block("relu"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            y[v_ax0, v_ax1] = T.max(mm[v_ax0, v_ax1] + b[v_ax1], T.float32(0.0))
'''


def test_one_block_of_rows_keeps_the_register_tile_without_a_panel_copy() -> None:
    mod = IRModule({"main": from_source(BATCH64)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="matmul", func_name="main")
        l1, l2, l3 = sch.get_loops(block=b0)
        l4, l5 = sch.split(loop=l1, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
        l6, l7 = sch.split(loop=l2, factors=[None, 32], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l6, l4, l3, l5, l7)
        b8 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
        b9 = sch.get_block(name="relu", func_name="main")
        sch.reverse_compute_inline(block=b9)
        sch.reverse_compute_at(block=b8, loop=l4, preserve_unit_loops=False, index=-1)
        b10 = sch.decompose_reduction(block=b0, loop=l3)
        sch.unroll(loop=l5)
        sch.vectorize(loop=l7)
        l11, l12, l13, l14 = sch.get_loops(block=b10)
        sch.vectorize(loop=l14)
        sch.unroll(loop=l13)
        l15, l16, l17, l18 = sch.get_loops(block=b8)
        sch.vectorize(loop=l18)
        sch.unroll(loop=l17)
        sch.parallel(loop=l6)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-4, atol=1e-4)
    assert_replays(sch, mod)


# The MLP's second layer at batch 64: 10 outputs, fewer than a vector's 16 lanes, with bias.
NARROW = '''
@T.prim_func
def main(x: T.Buffer((T.int64(64), T.int64(256)), "float32"), w: T.Buffer((T.int64(256), T.int64(10)), "float32"), b: T.Buffer((T.int64(10),), "float32"), y: T.Buffer((T.int64(64), T.int64(10)), "float32")):
    T.func_attr({"tir.noalias": True})
    mm = T.alloc_buffer((T.int64(64), T.int64(10)))
    for i0, i1, k in T.grid(T.int64(64), T.int64(10), T.int64(256)):
        with T.block("matmul"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            with T.init():
                mm[v_i0, v_i1] = T.float32(0.0)
            mm[v_i0, v_i1] = mm[v_i0, v_i1] + x[v_i0, v_k] * w[v_k, v_i1]
    for ax0, ax1 in T.grid(T.int64(64), T.int64(10)):
        with T.block("add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            y[v_ax0, v_ax1] = mm[v_ax0, v_ax1] + b[v_ax1]
'''


def test_a_narrow_matmul_runs_as_dot_products_on_a_transposed_copy_of_b() -> None:
    """narrow_rule: B copied transposed ([10, 256]; the copy left a plain loop nest, annotated
    ``"schedule_rule": "None"`` so no rule takes it), then 4 x 5 dot products along k per task."""
    mod = IRModule({"main": from_source(NARROW)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="matmul", func_name="main")
        l1, l2, l3 = sch.get_loops(block=b0)
        b4 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope="global")
        sch.transform_layout(block=b4, buffer=("write", 0), index_map=lambda k, j: (j, k))
        sch.annotate(block_or_loop=b4, ann_key="schedule_rule", ann_val="None")
        l5, l6, l7 = sch.get_loops(block=b0)
        l8, l9 = sch.split(loop=l5, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
        l10, l11 = sch.split(loop=l6, factors=[None, 5], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l8, l10, l7, l9, l11)
        l12 = sch.fuse(l8, l10, preserve_unit_iters=True)
        b13 = sch.get_block(name="add", func_name="main")
        sch.reverse_compute_at(block=b13, loop=l12, preserve_unit_loops=False, index=-1)
        sch.unroll(loop=l9)
        sch.unroll(loop=l11)
        sch.annotate(block_or_loop=l7, ann_key="tvmlite.reassoc", ann_val=1)
        b14 = sch.decompose_reduction(block=b0, loop=l7)
        sch.parallel(loop=l12)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-4, atol=1e-4)


def test_sixteen_columns_or_one_row_are_not_narrow() -> None:
    wide = IRModule({"main": from_source(NARROW.replace("T.int64(10)", "T.int64(16)"))})
    assert "transform_layout" not in trace_of(default_schedule(wide["main"]))
    one_row = IRModule({"main": from_source(NARROW.replace("T.int64(64)", "T.int64(1)"))})
    assert "transform_layout" not in trace_of(default_schedule(one_row["main"]))
