"""The default CPU schedule's row-chain rule (passes/schedule/transformer_rules.py): a row reduction
and the blocks after it over the same rows (softmax; layer_norm's mean, variance and its square root)
run as one parallel loop over groups of rows, every pass per group, the intermediates one group
long; the steps pinned, the numbers those of the unscheduled function, NaN where it gives NaN."""
from __future__ import annotations

import textwrap

import numpy as np
from schedule_util import assert_replays, assert_same_numbers, run

from tvmlite import passes as P
from tvmlite.ir.module import IRModule
from tvmlite.passes.schedule.default_cpu import default_schedule
from tvmlite.script import from_source


def trace_of(sch) -> str:
    """The trace's steps, without the two header lines."""
    return "\n".join(line[2:] for line in str(sch.trace).splitlines()[2:])


def steps(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


# R.nn.softmax(x, axis=-1) of a (2, 16, 32) tensor, as LegalizeOps writes it.
SOFTMAX = '''
@T.prim_func
def main(x: T.Buffer((T.int64(2), T.int64(16), T.int64(32)), "float32"), T_softmax_norm: T.Buffer((T.int64(2), T.int64(16), T.int64(32)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    T_softmax_maxelem = T.alloc_buffer((T.int64(2), T.int64(16)))
    T_softmax_exp = T.alloc_buffer((T.int64(2), T.int64(16), T.int64(32)))
    T_softmax_expsum = T.alloc_buffer((T.int64(2), T.int64(16)))
    for i0, i1, k in T.grid(T.int64(2), T.int64(16), T.int64(32)):
        with T.block("T_softmax_maxelem"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            T.reads(x[v_i0, v_i1, v_k])
            T.writes(T_softmax_maxelem[v_i0, v_i1])
            with T.init():
                T_softmax_maxelem[v_i0, v_i1] = T.float32(-340282346638528859811704183484516925440.0)
            T_softmax_maxelem[v_i0, v_i1] = T.max(T_softmax_maxelem[v_i0, v_i1], x[v_i0, v_i1, v_k])
    for i0, i1, i2 in T.grid(T.int64(2), T.int64(16), T.int64(32)):
        with T.block("T_softmax_exp"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(x[v_i0, v_i1, v_i2], T_softmax_maxelem[v_i0, v_i1])
            T.writes(T_softmax_exp[v_i0, v_i1, v_i2])
            T_softmax_exp[v_i0, v_i1, v_i2] = T.exp(x[v_i0, v_i1, v_i2] - T_softmax_maxelem[v_i0, v_i1])
    for i0, i1, k in T.grid(T.int64(2), T.int64(16), T.int64(32)):
        with T.block("T_softmax_expsum"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            T.reads(T_softmax_exp[v_i0, v_i1, v_k])
            T.writes(T_softmax_expsum[v_i0, v_i1])
            with T.init():
                T_softmax_expsum[v_i0, v_i1] = T.float32(0.0)
            T_softmax_expsum[v_i0, v_i1] = T_softmax_expsum[v_i0, v_i1] + T_softmax_exp[v_i0, v_i1, v_k]
    for i0, i1, i2 in T.grid(T.int64(2), T.int64(16), T.int64(32)):
        with T.block("T_softmax_norm"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(T_softmax_exp[v_i0, v_i1, v_i2], T_softmax_expsum[v_i0, v_i1])
            T.writes(T_softmax_norm[v_i0, v_i1, v_i2])
            T.block_attr({"axis": 2})
            T_softmax_norm[v_i0, v_i1, v_i2] = T_softmax_exp[v_i0, v_i1, v_i2] / T_softmax_expsum[v_i0, v_i1]
'''


def test_softmax_is_one_pass_per_group_of_rows() -> None:
    """max, exp, sum and the division computed per group of 4 rows under one loop; the max's
    4 rows side by side (4 independent compare chains), the sum reassociated along the row."""
    mod = IRModule({"main": from_source(SOFTMAX)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="T_softmax_maxelem", func_name="main")
        b1 = sch.get_block(name="T_softmax_exp", func_name="main")
        b2 = sch.get_block(name="T_softmax_expsum", func_name="main")
        b3 = sch.get_block(name="T_softmax_norm", func_name="main")
        l4, l5, l6 = sch.get_loops(block=b3)
        l7, l8 = sch.split(loop=l5, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
        l9 = sch.fuse(l4, l7, preserve_unit_iters=True)
        sch.compute_at(block=b2, loop=l9, preserve_unit_loops=False, index=-1)
        sch.compute_at(block=b1, loop=l9, preserve_unit_loops=False, index=-1)
        sch.compute_at(block=b0, loop=l9, preserve_unit_loops=False, index=-1)
        l10, l11, l12 = sch.get_loops(block=b0)
        sch.reorder(l12, l11)
        b13 = sch.decompose_reduction(block=b0, loop=l12)
        sch.unroll(loop=l11)
        l14, l15, l16 = sch.get_loops(block=b1)
        l17, l18 = sch.split(loop=l16, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
        sch.vectorize(loop=l18)
        l19, l20, l21 = sch.get_loops(block=b2)
        b22 = sch.decompose_reduction(block=b2, loop=l21)
        sch.annotate(block_or_loop=b2, ann_key="tvmlite.reassoc", ann_val=1)
        l23, l24, l25 = sch.get_loops(block=b3)
        l26, l27 = sch.split(loop=l25, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
        sch.vectorize(loop=l27)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-6, atol=1e-7)
    assert_replays(sch, mod)
    lowered = P.get_pipeline("lower")(sch.mod)["main"].script()
    assert "T_softmax_exp = T.decl_buffer((T.int64(128),))" in lowered  # one group of rows, not 2 x 16 x 32


def test_softmax_rows_with_nan_are_what_the_unscheduled_function_gives() -> None:
    """The max stays an ordered chain of compares per row: a NaN anywhere in a row gives the
    unscheduled function's result, bit for bit where it is a number."""
    mod = IRModule({"main": from_source(SOFTMAX)})
    sched = default_schedule(mod["main"]).mod
    x = np.random.default_rng(1).standard_normal((2, 16, 32)).astype("float32")
    x[0, 3, 0] = x[0, 5, 31] = x[1, 15, 7] = np.nan
    out = np.zeros_like(x)
    want = run(mod, "main", [x, out])[1]
    got = run(sched, "main", [x, out])[1]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# The variance kernel of a layer_norm after the default pipeline: mean, squared deviations, their
# sum, then a value per row (the square root of the variance plus eps).
VARIANCE = '''
@T.prim_func
def main(x: T.Buffer((T.int64(1), T.int64(16), T.int64(64)), "float32"), compute_intermediate: T.Buffer((T.int64(1), T.int64(16), T.int64(1)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    x_red = T.alloc_buffer((T.int64(1), T.int64(16), T.int64(1)))
    T_divide_1 = T.alloc_buffer((T.int64(1), T.int64(16), T.int64(1)))
    T_subtract = T.alloc_buffer((T.int64(1), T.int64(16), T.int64(64)))
    T_multiply = T.alloc_buffer((T.int64(1), T.int64(16), T.int64(64)))
    T_multiply_red = T.alloc_buffer((T.int64(1), T.int64(16), T.int64(1)))
    T_divide_intermediate = T.alloc_buffer((T.int64(1), T.int64(16), T.int64(1)))
    T_add_intermediate = T.alloc_buffer((T.int64(1), T.int64(16), T.int64(1)))
    for ax0, ax1, ax2, k2 in T.grid(T.int64(1), T.int64(16), T.int64(1), T.int64(64)):
        with T.block("x_red"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1 = T.axis.spatial(T.int64(16), ax1)
            v_ax2 = T.axis.spatial(T.int64(1), T.int64(0))
            v_k2 = T.axis.reduce(T.int64(64), k2)
            T.reads(x[T.int64(0), v_ax1, v_k2])
            T.writes(x_red[T.int64(0), v_ax1, T.int64(0)])
            with T.init():
                x_red[T.int64(0), v_ax1, T.int64(0)] = T.float32(0.0)
            x_red[T.int64(0), v_ax1, T.int64(0)] = x_red[T.int64(0), v_ax1, T.int64(0)] + x[T.int64(0), v_ax1, v_k2]
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(16), T.int64(1)):
        with T.block("T_divide"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1 = T.axis.spatial(T.int64(16), ax1)
            v_ax2 = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(x_red[T.int64(0), v_ax1, T.int64(0)])
            T.writes(T_divide_1[T.int64(0), v_ax1, T.int64(0)])
            T_divide_1[T.int64(0), v_ax1, T.int64(0)] = x_red[T.int64(0), v_ax1, T.int64(0)] / T.float32(64.0)
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(16), T.int64(64)):
        with T.block("T_subtract"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1, v_ax2 = T.axis.remap("SS", [ax1, ax2])
            T.reads(x[T.int64(0), v_ax1, v_ax2], T_divide_1[T.int64(0), v_ax1, T.int64(0)])
            T.writes(T_subtract[T.int64(0), v_ax1, v_ax2])
            T_subtract[T.int64(0), v_ax1, v_ax2] = x[T.int64(0), v_ax1, v_ax2] - T_divide_1[T.int64(0), v_ax1, T.int64(0)]
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(16), T.int64(64)):
        with T.block("T_multiply"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1, v_ax2 = T.axis.remap("SS", [ax1, ax2])
            T.reads(T_subtract[T.int64(0), v_ax1, v_ax2])
            T.writes(T_multiply[T.int64(0), v_ax1, v_ax2])
            T_multiply[T.int64(0), v_ax1, v_ax2] = T_subtract[T.int64(0), v_ax1, v_ax2] * T_subtract[T.int64(0), v_ax1, v_ax2]
    for ax0, ax1, ax2, k2 in T.grid(T.int64(1), T.int64(16), T.int64(1), T.int64(64)):
        with T.block("T_multiply_red"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1 = T.axis.spatial(T.int64(16), ax1)
            v_ax2 = T.axis.spatial(T.int64(1), T.int64(0))
            v_k2 = T.axis.reduce(T.int64(64), k2)
            T.reads(T_multiply[T.int64(0), v_ax1, v_k2])
            T.writes(T_multiply_red[T.int64(0), v_ax1, T.int64(0)])
            with T.init():
                T_multiply_red[T.int64(0), v_ax1, T.int64(0)] = T.float32(0.0)
            T_multiply_red[T.int64(0), v_ax1, T.int64(0)] = T_multiply_red[T.int64(0), v_ax1, T.int64(0)] + T_multiply[T.int64(0), v_ax1, v_k2]
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(16), T.int64(1)):
        with T.block("T_divide_1"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1 = T.axis.spatial(T.int64(16), ax1)
            v_ax2 = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(T_multiply_red[T.int64(0), v_ax1, T.int64(0)])
            T.writes(T_divide_intermediate[T.int64(0), v_ax1, T.int64(0)])
            T_divide_intermediate[T.int64(0), v_ax1, T.int64(0)] = T_multiply_red[T.int64(0), v_ax1, T.int64(0)] / T.float32(64.0)
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(16), T.int64(1)):
        with T.block("T_add"):
            v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_ax1 = T.axis.spatial(T.int64(16), ax1)
            v_ax2 = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(T_divide_intermediate[T.int64(0), v_ax1, T.int64(0)])
            T.writes(T_add_intermediate[T.int64(0), v_ax1, T.int64(0)])
            T_add_intermediate[T.int64(0), v_ax1, T.int64(0)] = T_divide_intermediate[T.int64(0), v_ax1, T.int64(0)] + T.float32(9.9999997473787516e-06)
    for i0, i1, i2 in T.grid(T.int64(1), T.int64(16), T.int64(1)):
        with T.block("compute"):
            v_i0 = T.axis.spatial(T.int64(1), T.int64(0))
            v_i1 = T.axis.spatial(T.int64(16), i1)
            v_i2 = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(T_add_intermediate[T.int64(0), v_i1, T.int64(0)])
            T.writes(compute_intermediate[T.int64(0), v_i1, T.int64(0)])
            compute_intermediate[T.int64(0), v_i1, T.int64(0)] = T.sqrt(T_add_intermediate[T.int64(0), v_i1, T.int64(0)])
'''


def test_layer_norm_statistics_are_one_pass_per_group_of_rows() -> None:
    mod = IRModule({"main": from_source(VARIANCE)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="T_add", func_name="main")
        sch.compute_inline(block=b0)
        b1 = sch.get_block(name="T_divide_1", func_name="main")
        sch.compute_inline(block=b1)
        b2 = sch.get_block(name="T_subtract", func_name="main")
        sch.compute_inline(block=b2)
        b3 = sch.get_block(name="T_divide", func_name="main")
        sch.compute_inline(block=b3)
        b4 = sch.get_block(name="x_red", func_name="main")
        b5 = sch.get_block(name="T_multiply", func_name="main")
        b6 = sch.get_block(name="T_multiply_red", func_name="main")
        b7 = sch.get_block(name="compute", func_name="main")
        l8, l9, l10 = sch.get_loops(block=b7)
        l11, l12 = sch.split(loop=l9, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
        l13 = sch.fuse(l8, l11, preserve_unit_iters=True)
        sch.compute_at(block=b6, loop=l13, preserve_unit_loops=False, index=-1)
        sch.compute_at(block=b5, loop=l13, preserve_unit_loops=False, index=-1)
        sch.compute_at(block=b4, loop=l13, preserve_unit_loops=False, index=-1)
        l14, l15, l16 = sch.get_loops(block=b4)
        b17 = sch.decompose_reduction(block=b4, loop=l16)
        sch.annotate(block_or_loop=b4, ann_key="tvmlite.reassoc", ann_val=1)
        l18, l19, l20 = sch.get_loops(block=b5)
        l21, l22 = sch.split(loop=l20, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
        sch.vectorize(loop=l22)
        l23, l24, l25 = sch.get_loops(block=b6)
        b26 = sch.decompose_reduction(block=b6, loop=l25)
        sch.annotate(block_or_loop=b6, ann_key="tvmlite.reassoc", ann_val=1)
        l27, l28, l29 = sch.get_loops(block=b7)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-5, atol=1e-6)
    assert_replays(sch, mod)



# A row sum read by the normalisation after it and by a block of another shape after that: the
# chain (sum, normalise) would move the sum away from its other reader, so it is no chain; each
# block gets its own rule.
SHARED_SUM = '''
@T.prim_func
def main(x: T.Buffer((T.int64(16), T.int64(32)), "float32"), y: T.Buffer((T.int64(16), T.int64(32)), "float32"), z: T.Buffer((T.int64(16), T.int64(64)), "float32")):
    T.func_attr({"tir.noalias": True})
    s = T.alloc_buffer((T.int64(16),))
    for i, k in T.grid(T.int64(16), T.int64(32)):
        with T.block("sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                s[v_i] = T.float32(0.0)
            s[v_i] = s[v_i] + x[v_i, v_k]
    for i, j in T.grid(T.int64(16), T.int64(32)):
        with T.block("norm"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            y[v_i, v_j] = x[v_i, v_j] / s[v_i]
    for i, j in T.grid(T.int64(16), T.int64(64)):
        with T.block("wide"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            z[v_i, v_j] = s[v_i] * T.float32(2.0)
'''


def test_a_reduction_read_outside_the_chain_is_not_moved_into_it() -> None:
    mod = IRModule({"main": from_source(SHARED_SUM)})
    sch = default_schedule(mod["main"])
    assert "compute_at" not in str(sch.trace)
    assert_same_numbers(mod, sch.mod, rtol=1e-5, atol=1e-6)
