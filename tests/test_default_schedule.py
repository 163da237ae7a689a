"""The default CPU schedule (passes/schedule/default_cpu.py) and transform_layout: the steps each
rule takes (the trace), the same numbers as the unscheduled functions, and what is left alone."""
from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest
from corpus_files import read_corpus
from schedule_util import assert_replays, assert_same_numbers

import tvmlite
from tvmlite.ir.module import IRModule
from tvmlite.passes import get_pass, get_pipeline
from tvmlite.passes.schedule.default_cpu import DefaultCPUSchedule, default_schedule, is_scheduled
from tvmlite.script import from_source
from tvmlite.tir import Schedule, ScheduleError

EWISE_CHAIN = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 128), "float32")) -> R.Tensor((64, 128), "float32"):
        with R.dataflow():
            y = R.multiply(x, R.const(2, "float32"))
            z = R.add(y, R.const(1, "float32"))
            r = R.nn.relu(z)
            R.output(r)
        return r
'''

CONV = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 8, 10, 10), "float32"), w: R.Tensor((16, 8, 3, 3), "float32")) -> R.Tensor((1, 16, 10, 10), "float32"):
        with R.dataflow():
            y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            R.output(y)
        return y
'''

COLUMN_SUM = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((32, 256), "float32")) -> R.Tensor((256,), "float32"):
        with R.dataflow():
            y = R.sum(x, axis=[0])
            R.output(y)
        return y
'''

MATMUL = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def only_prim_func(relax_text: str) -> IRModule:
    """The one PrimFunc the zero pipeline makes of a one-op Relax module, as ``main``."""
    mod = get_pipeline("zero")(from_source(relax_text))
    funcs = [f for _, f in mod.functions_items() if isinstance(f, tvmlite.tir.PrimFunc)]
    assert len(funcs) == 1
    return IRModule({"main": funcs[0]})


def trace_of(sch: Schedule) -> str:
    """The trace's steps, without the two header lines."""
    return "\n".join(line[2:] for line in str(sch.trace).splitlines()[2:])


def steps(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def test_elementwise_chain_becomes_one_vectorized_pass() -> None:
    mod = only_prim_func(EWISE_CHAIN)
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
          b0 = sch.get_block(name="T_add", func_name="main")
          sch.compute_inline(block=b0)
          b1 = sch.get_block(name="T_multiply", func_name="main")
          sch.compute_inline(block=b1)
          b2 = sch.get_block(name="compute", func_name="main")
          l3, l4 = sch.get_loops(block=b2)
          l5, l6 = sch.split(loop=l4, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
          sch.vectorize(loop=l6)
          l7 = sch.fuse(l3, l5, preserve_unit_iters=True)''')
    text = sch.mod["main"].script()
    assert "compute_intermediate[v_i0, v_i1] = T.max(x[v_i0, v_i1] * T.float32(2.0) + T.float32(1.0), T.float32(0.0))" in text
    assert_same_numbers(mod, sch.mod)
    assert_replays(sch, mod)


def test_conv2d_rule() -> None:
    mod = only_prim_func(CONV)
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
          b0 = sch.get_block(name="conv2d_nchw", func_name="main")
          l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(block=b0)
          l8, l9 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
          sch.reorder(l1, l3, l8, l5, l6, l7, l9, l4)
          l10 = sch.fuse(l1, l3, preserve_unit_iters=True)
          b11 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
          sch.reverse_compute_at(block=b11, loop=l8, preserve_unit_loops=False, index=-1)
          b12 = sch.decompose_reduction(block=b0, loop=l5)
          b13 = sch.get_block(name="pad_temp", func_name="main")
          sch.compute_at(block=b13, loop=l10, preserve_unit_loops=False, index=-1)
          sch.unroll(loop=l9)
          sch.vectorize(loop=l4)
          l14, l15, l16, l17 = sch.get_loops(block=b12)
          sch.vectorize(loop=l17)
          sch.unroll(loop=l16)
          l18, l19, l20, l21 = sch.get_loops(block=b11)
          sch.vectorize(loop=l21)
          sch.unroll(loop=l20)
          sch.parallel(loop=l10)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-4)
    assert_replays(sch, mod)


def test_column_sum_reduction_rule() -> None:
    mod = only_prim_func(COLUMN_SUM)
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
          b0 = sch.get_block(name="x_red", func_name="main")
          l1, l2 = sch.get_loops(block=b0)
          sch.reorder(l2, l1)
          b3 = sch.decompose_reduction(block=b0, loop=l2)
          l4, = sch.get_loops(block=b3)
          l5, l6 = sch.split(loop=l1, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
          sch.vectorize(loop=l6)
          l7, l8 = sch.split(loop=l4, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)
          sch.vectorize(loop=l8)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-4)
    assert_replays(sch, mod)


def test_matmul_register_tile_with_packed_panel() -> None:
    mod = IRModule({"main": from_source(MATMUL)})
    sch = default_schedule(mod["main"])
    assert trace_of(sch) == steps('''
          b0 = sch.get_block(name="C", func_name="main")
          l1, l2, l3 = sch.get_loops(block=b0)
          l4, l5, l6 = sch.split(loop=l1, factors=[None, 16, 8], preserve_unit_iters=True, disable_predication=False)
          l7, l8 = sch.split(loop=l2, factors=[None, 32], preserve_unit_iters=True, disable_predication=False)
          sch.reorder(l4, l7, l5, l3, l6, l8)
          l9 = sch.fuse(l4, l7, preserve_unit_iters=True)
          b10 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")
          sch.reverse_compute_at(block=b10, loop=l5, preserve_unit_loops=False, index=-1)
          b11 = sch.decompose_reduction(block=b0, loop=l3)
          b12 = sch.cache_read(block=b0, read_buffer_index=2, storage_scope="global")
          sch.compute_at(block=b12, loop=l9, preserve_unit_loops=False, index=-1)
          sch.unroll(loop=l6)
          sch.vectorize(loop=l8)
          l13, l14, l15, l16 = sch.get_loops(block=b11)
          sch.vectorize(loop=l16)
          sch.unroll(loop=l15)
          l17, l18, l19, l20 = sch.get_loops(block=b10)
          sch.vectorize(loop=l20)
          sch.unroll(loop=l19)
          l21, l22, l23 = sch.get_loops(block=b12)
          sch.vectorize(loop=l23)
          sch.parallel(loop=l9)''')
    assert_same_numbers(mod, sch.mod, rtol=1e-4)
    assert_replays(sch, mod)
    # Lowered, the accumulator tile is an 8 x 32 local array and B's panel is private to each task (one
    # task per panel: the 128 rows are one block, MATMUL_TASK_ROWS).
    lowered = get_pipeline("lower")(sch.mod)["main"].script()
    assert 'C_local = T.decl_buffer((256,), scope="local")' in lowered
    assert "for i_0_j_0_fused in T.parallel(4):\n        B_global = T.decl_buffer((4096,))" in lowered


@pytest.mark.parametrize("batch", [1, 64])
def test_mlp_layers(batch: int) -> None:
    """Seed 004's layers after the zero pipeline and InlineLayoutKernels read W[j, k]: tiles of
    dot products (sums over k reassociated), 1 x 4 at batch 1, 4 x 4 at batch 64."""
    text = open_corpus("seed004_mlp_torch.py").replace("R.Tensor((1, ", f"R.Tensor(({batch}, ")
    mod = get_pass("InlineLayoutKernels")(get_pipeline("zero")(from_source(text)))
    name = "fused_transpose_matmul_add_relu"
    sch = default_schedule(mod[name])
    trace = str(sch.trace)
    assert re.search(r'sch.annotate\(block_or_loop=l\d+, ann_key="tvmlite.reassoc", ann_val=1\)', trace)
    assert "sch.reverse_compute_at(block=" in trace  # bias + relu computed per tile
    rows, cols = (1, 4) if batch == 1 else (4, 4)
    assert f"factors=[None, {rows}]" in trace and f"factors=[None, {cols}]" in trace
    # Sums of 784 products of N(0, 1) values, reassociated: equal to float32 rounding of the sum.
    assert_same_numbers(IRModule({"main": mod[name]}), sch.mod, rtol=1e-4, atol=1e-3)


PLAIN_TRANSFORMER_LAYER = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 32), "float32"), wq: R.Tensor((32, 32), "float32"), wk: R.Tensor((32, 32), "float32"), wv: R.Tensor((32, 32), "float32"), wo: R.Tensor((32, 32), "float32"), w1: R.Tensor((32, 64), "float32"), b1: R.Tensor((64,), "float32"), w2: R.Tensor((64, 32), "float32"), g: R.Tensor((32,), "float32"), b: R.Tensor((32,), "float32")) -> R.Tensor((1, 16, 32), "float32"):
        with R.dataflow():
            q = R.permute_dims(R.reshape(R.matmul(x, wq), (1, 16, 4, 8)), [0, 2, 1, 3])
            k = R.permute_dims(R.reshape(R.matmul(x, wk), (1, 16, 4, 8)), [0, 2, 3, 1])
            v = R.permute_dims(R.reshape(R.matmul(x, wv), (1, 16, 4, 8)), [0, 2, 1, 3])
            sc = R.nn.softmax(R.divide(R.matmul(q, k), R.const(2.828427, "float32")), axis=-1)
            att = R.reshape(R.permute_dims(R.matmul(sc, v), [0, 2, 1, 3]), (1, 16, 32))
            y = R.nn.layer_norm(R.add(x, R.matmul(att, wo)), g, b, axes=[-1])
            hid = R.nn.relu(R.add(R.matmul(y, w1), b1))
            gv = R.nn.layer_norm(R.add(y, R.matmul(hid, w2)), g, b, axes=[-1])
            R.output(gv)
        return gv
'''


def _schedule_steps(mod: IRModule) -> dict[str, list[str]]:
    """The primitives the default schedule applies to each PrimFunc of ``mod``, by name: the loop
    look-ups and unrolls left out (an init block of a unit row has one loop less to unroll)."""
    return {gv.name_hint: [step for step in re.findall(r"sch\.(\w+)\(", str(default_schedule(func).trace))
                           if step not in ("get_loops", "unroll")]
            for gv, func in mod.functions.items() if isinstance(func, tvmlite.tir.PrimFunc)}


@pytest.mark.parametrize("text", [CONV, PLAIN_TRANSFORMER_LAYER, "seed004"],
                         ids=["conv_batch1", "transformer_batch1", "mlp_batch1"])
def test_default_pipeline_schedules_kernels_as_the_zero_pipeline(text: str) -> None:
    """The default pipeline's last Simplify writes a batch-1 matmul's unit row as the constant 0
    (``x[T.int64(0), v_k]``); the rules recognise matmuls by their access pattern, so every kernel
    both pipelines produce gets the same schedule (the default pipeline never loses a rule)."""
    source = open_corpus("seed004_mlp_torch.py") if text == "seed004" else text
    # The default pipeline packs convolutions first (PackConv2d): the zero pipeline gets them packed too.
    zero = _schedule_steps(get_pipeline("zero")(get_pass("PackConv2d")(from_source(source))))
    default = _schedule_steps(get_pipeline("default")(from_source(source)))
    shared = sorted(set(zero) & set(default))
    assert shared and any("cache_write" in zero[name] for name in shared)  # a tiled matmul/conv among them
    assert {name: default[name] for name in shared} == {name: zero[name] for name in shared}


def open_corpus(name: str) -> str:
    return read_corpus(name)


def test_scheduled_functions_are_left_alone() -> None:
    mod = IRModule({"main": from_source(MATMUL)})
    sch = Schedule(mod)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    assert is_scheduled(sch.mod["main"])
    assert DefaultCPUSchedule()(sch.mod)["main"].script() == sch.mod["main"].script()
    marked = mod["main"].with_attr("tir.is_scheduled", True)
    assert is_scheduled(marked)
    out = DefaultCPUSchedule()(mod)["main"]
    assert out.attrs["tir.is_scheduled"] is True and "T.parallel" in out.script()


def test_transform_layout_permutes_an_intermediate_buffer() -> None:
    text = '''
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((8, 16))
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for j, i in T.grid(16, 8):
        with T.block("C"):
            vj, vi = T.axis.remap("SS", [j, i])
            C[vj, vi] = B[vi, vj]
'''
    mod = IRModule({"main": from_source(text)})
    sch = Schedule(mod)
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i))
    assert sch.mod["main"].script() == steps('''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 8), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((16, 8))
            for i, j in T.grid(8, 16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vj, vi])
                    B[vj, vi] = A[vi, vj] + T.float32(1.0)
            for j, i in T.grid(16, 8):
                with T.block("C"):
                    vj, vi = T.axis.remap("SS", [j, i])
                    T.reads(B[vj, vi])
                    T.writes(C[vj, vi])
                    C[vj, vi] = B[vj, vi]''')
    assert 'sch.transform_layout(block=b0, buffer=("write", 0), index_map=lambda i, j: (j, i))' in str(sch.trace)
    assert_same_numbers(mod, sch.mod)
    assert_replays(sch, mod)
    before = sch.mod
    with pytest.raises(ScheduleError, match="a parameter's layout belongs to the caller"):
        sch.transform_layout(sch.get_block("B"), ("read", 0), lambda i, j: (j, i))
    with pytest.raises(ScheduleError, match="only permutations"):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i // 2, j))
    with pytest.raises(ScheduleError, match="no index 3"):
        sch.transform_layout(sch.get_block("B"), ("write", 3), lambda i, j: (j, i))
    assert sch.mod is before


def test_default_schedule_numbers_through_compile() -> None:
    """The whole MLP, compiled with the default schedule, matches numpy."""
    text = open_corpus("seed004_mlp_torch.py").replace("R.Tensor((1, ", "R.Tensor((8, ")
    ex = tvmlite.compile(from_source(text))
    assert "T.parallel" in ex.get_source("tir") or "T.vectorized" in ex.get_source("tir")
    vm = tvmlite.VirtualMachine(ex, tvmlite.cpu())
    rng = np.random.default_rng(0)
    x, w1, b1, w2, b2 = [((rng.random(s, dtype=np.float32) - 0.5) / 10)
                         for s in [(8, 784), (256, 784), (256,), (10, 256), (10,)]]
    want = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(vm["main"](x, w1, b1, w2, b2).numpy(), want, rtol=1e-4, atol=1e-5)


def test_a_block_annotated_schedule_rule_none_is_left_alone() -> None:
    """MetaSchedule's ``"schedule_rule": "None"``: the default schedule keeps the block's loops."""
    from tvmlite.passes.schedule.default_cpu import default_schedule
    from tvmlite.script import from_source

    src = '''
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(64, 64):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j]){attr}
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
'''
    plain = default_schedule(from_source(src.format(attr="")))
    assert "sch.vectorize" in str(plain.trace)
    kept = default_schedule(from_source(src.format(attr='\n            T.block_attr({"schedule_rule": "None"})')))
    assert "sch." not in str(kept.trace).split("def apply_trace")[1].replace("sch: tir.Schedule", "")
