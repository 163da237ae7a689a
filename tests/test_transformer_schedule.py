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


# softmax's row maximum: every input contiguous along k. Each row reduced along k (vector partial
# maxima), not 16 rows at once gathering elements 128 floats apart.
ROW_MAX = '''
@T.prim_func
def main(x: T.Buffer((T.int64(64), T.int64(128)), "float32"), y: T.Buffer((T.int64(64),), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(T.int64(64), T.int64(128)):
        with T.block("maxelem"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                y[v_i] = T.float32(-3.4028234663852886e+38)
            y[v_i] = T.max(y[v_i], x[v_i, v_k])
'''


def test_row_reduction_runs_along_the_contiguous_row() -> None:
    mod = IRModule({"main": from_source(ROW_MAX)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="maxelem", func_name="main")
        l1, l2 = sch.get_loops(block=b0)
        b3 = sch.decompose_reduction(block=b0, loop=l2)
        sch.annotate(block_or_loop=b0, ann_key="tvmlite.reassoc", ann_val=1)''')
    assert_same_numbers(mod, sch.mod, rtol=0, atol=0)  # a maximum is exact in any order
    assert_replays(sch, mod)


# x @ W.T with W stored [out, in] and 128 rows: the register tile of the matmul rule, each task
# copying its 64 x 32 panel of W transposed (the copy's loops swapped so it stores along j).
LINEAR_WT = '''
@T.prim_func
def main(x: T.Buffer((T.int64(128), T.int64(64)), "float32"), w: T.Buffer((T.int64(96), T.int64(64)), "float32"), y: T.Buffer((T.int64(128), T.int64(96)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(T.int64(128), T.int64(96), T.int64(64)):
        with T.block("matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                y[v_i, v_j] = T.float32(0.0)
            y[v_i, v_j] = y[v_i, v_j] + x[v_i, v_k] * w[v_j, v_k]
'''


def test_linear_with_many_rows_packs_the_weight_transposed() -> None:
    mod = IRModule({"main": from_source(LINEAR_WT)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="matmul", func_name="main")
        l1, l2, l3 = sch.get_loops(block=b0)
        b4 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope="global")
        sch.transform_layout(block=b4, buffer=("write", 0), index_map=lambda j, k: (k, j))
        l5, l6, l7 = sch.get_loops(block=b0)
        l8, l9, l10 = sch.split(loop=l5, factors=[None, 16, 8], preserve_unit_iters=True, disable_predication=False)
        l11, l12 = sch.split(loop=l6, factors=[None, 32], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l8, l11, l9, l7, l10, l12)
        l13 = sch.fuse(l8, l11, preserve_unit_iters=True)
        b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
        sch.reverse_compute_at(block=b14, loop=l9, preserve_unit_loops=False, index=-1)
        b15 = sch.decompose_reduction(block=b0, loop=l7)
        b16 = sch.get_block(name="w_global", func_name="main")
        sch.compute_at(block=b16, loop=l13, preserve_unit_loops=False, index=-1)
        sch.unroll(loop=l10)
        sch.vectorize(loop=l12)
        l17, l18, l19, l20 = sch.get_loops(block=b15)
        sch.vectorize(loop=l20)
        sch.unroll(loop=l19)
        l21, l22, l23, l24 = sch.get_loops(block=b14)
        sch.vectorize(loop=l24)
        sch.unroll(loop=l23)
        l25, l26, l27 = sch.get_loops(block=b16)
        sch.reorder(l27, l26)
        sch.vectorize(loop=l26)
        sch.parallel(loop=l13)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-5, atol=1e-5)
    assert_replays(sch, mod)


def test_encoder_layer_via_onnx_matches_pytorch() -> None:
    """nn.TransformerEncoderLayer exported to ONNX (torch.onnx.export, dynamo), imported, compiled
    with the default pipeline and schedule: within 1e-4 of PyTorch."""
    import warnings

    import numpy as np
    from frontend_util import need

    torch = need("torch")
    need("onnxscript")
    import tvmlite
    from tvmlite import passes as P
    from tvmlite.frontend import from_onnx

    torch.manual_seed(3)
    model = torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, dropout=0.0).eval()
    x = np.random.default_rng(3).standard_normal((1, 128, 64)).astype("float32")
    torch.backends.mha.set_fastpath_enabled(False)  # the fused fast path has no ONNX export
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            proto = torch.onnx.export(model, (torch.from_numpy(x),), input_names=["x"], dynamo=True,
                                      verbose=False).model_proto
            want = model(torch.from_numpy(x)).numpy()
    finally:
        torch.backends.mha.set_fastpath_enabled(True)
    ex = tvmlite.compile(P.get_pipeline("default")(from_onnx(proto)), target="llvm")
    got = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# Attention's scores q @ k.T, batched over heads: k's panel copied per task with j and k swapped.
BATCHED_QK = '''
@T.prim_func
def main(q: T.Buffer((T.int64(2), T.int64(128), T.int64(16)), "float32"), k: T.Buffer((T.int64(2), T.int64(32), T.int64(16)), "float32"), s: T.Buffer((T.int64(2), T.int64(128), T.int64(32)), "float32")):
    T.func_attr({"tir.noalias": True})
    for b, i, j, r in T.grid(T.int64(2), T.int64(128), T.int64(32), T.int64(16)):
        with T.block("qk"):
            v_b, v_i, v_j, v_r = T.axis.remap("SSSR", [b, i, j, r])
            with T.init():
                s[v_b, v_i, v_j] = T.float32(0.0)
            s[v_b, v_i, v_j] = s[v_b, v_i, v_j] + q[v_b, v_i, v_r] * k[v_b, v_j, v_r]
'''


def test_batched_q_k_transposed_packs_k_per_head() -> None:
    mod = IRModule({"main": from_source(BATCHED_QK)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
        b0 = sch.get_block(name="qk", func_name="main")
        l1, l2, l3, l4 = sch.get_loops(block=b0)
        b5 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope="global")
        sch.transform_layout(block=b5, buffer=("write", 0), index_map=lambda i0, i1, i2: (i0, i2, i1))
        l6, l7, l8, l9 = sch.get_loops(block=b0)
        l10, l11, l12 = sch.split(loop=l7, factors=[None, 16, 8], preserve_unit_iters=True, disable_predication=False)
        l13, l14 = sch.split(loop=l8, factors=[None, 32], preserve_unit_iters=True, disable_predication=False)
        sch.reorder(l6, l10, l13, l11, l9, l12, l14)
        l15 = sch.fuse(l6, l10, l13, preserve_unit_iters=True)
        b16 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
        sch.reverse_compute_at(block=b16, loop=l11, preserve_unit_loops=False, index=-1)
        b17 = sch.decompose_reduction(block=b0, loop=l9)
        b18 = sch.get_block(name="k_global", func_name="main")
        sch.compute_at(block=b18, loop=l15, preserve_unit_loops=False, index=-1)
        sch.unroll(loop=l12)
        sch.vectorize(loop=l14)
        l19, l20, l21, l22 = sch.get_loops(block=b17)
        sch.vectorize(loop=l22)
        sch.unroll(loop=l21)
        l23, l24, l25, l26 = sch.get_loops(block=b16)
        sch.vectorize(loop=l26)
        sch.unroll(loop=l25)
        l27, l28, l29 = sch.get_loops(block=b18)
        sch.reorder(l29, l28)
        sch.vectorize(loop=l28)
        sch.parallel(loop=l15)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-5, atol=1e-5)
    assert_replays(sch, mod)
