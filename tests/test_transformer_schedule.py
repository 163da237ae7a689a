"""The default CPU schedule on the kernels of a transformer layer (passes/schedule/transformer_rules.py
and the matmul rule): the steps taken (the trace), and the same numbers as the unscheduled functions."""
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


# x @ W of torch's attention projection: the sequence is the first axis, the batch (1) a constant
# index; the sequence is the matmul's rows (one packed panel of W per 64 rows), not a batch of
# 1-row matmuls each packing W again.
SEQ_ROWS_MATMUL = '''
@T.prim_func
def main(x: T.Buffer((T.int64(64), T.int64(1), T.int64(32)), "float32"), w: T.Buffer((T.int64(32), T.int64(96)), "float32"), y: T.Buffer((T.int64(64), T.int64(1), T.int64(96)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0, i1, i2, k in T.grid(T.int64(64), T.int64(1), T.int64(96), T.int64(32)):
        with T.block("matmul"):
            v_i0 = T.axis.spatial(T.int64(64), i0)
            v_i1 = T.axis.spatial(T.int64(1), T.int64(0))
            v_i2, v_k = T.axis.remap("SR", [i2, k])
            with T.init():
                y[v_i0, T.int64(0), v_i2] = T.float32(0.0)
            y[v_i0, T.int64(0), v_i2] = y[v_i0, T.int64(0), v_i2] + x[v_i0, T.int64(0), v_k] * w[v_k, v_i2]
'''


def test_sequence_axis_before_a_unit_batch_is_the_matmul_rows() -> None:
    mod = IRModule({"main": from_source(SEQ_ROWS_MATMUL)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="matmul", func_name="main")
        l1, l2, l3, l4 = sch.get_loops(block=b0)
        l5, l6, l7 = sch.split(loop=l1, factors=[None, 8, 8], preserve_unit_iters=True, disable_predication=False)
        l8, l9 = sch.split(loop=l3, factors=[None, 32], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l5, l8, l6, l4, l7, l9)
        l10 = sch.fuse(l5, l8, preserve_unit_iters=True)
        b11 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
        sch.reverse_compute_at(block=b11, loop=l6, preserve_unit_loops=False, index=-1)
        b12 = sch.decompose_reduction(block=b0, loop=l4)
        b13 = sch.cache_read(block=b0, read_buffer_index=2, storage_scope="global")
        sch.compute_at(block=b13, loop=l10, preserve_unit_loops=False, index=-1)
        sch.unroll(loop=l7)
        sch.vectorize(loop=l9)
        l14, l15, l16, l17, l18 = sch.get_loops(block=b12)
        sch.vectorize(loop=l18)
        sch.unroll(loop=l17)
        l19, l20, l21, l22 = sch.get_loops(block=b11)
        sch.vectorize(loop=l22)
        sch.unroll(loop=l21)
        l23, l24, l25 = sch.get_loops(block=b13)
        sch.vectorize(loop=l25)
        sch.parallel(loop=l10)''')
    assert_same_numbers(mod, sch.mod)
    assert_replays(sch, mod)
