"""decompose_reduction of tvmlite.tir.Schedule: the exact printed text after each step (TVM's
``<block>_init`` / ``<block>_update`` blocks and ``<loop>_init`` loops), the same numbers as the
unscheduled function, a replayable trace, and every refusal with its message and the module left
as it was."""
from __future__ import annotations

import functools
import textwrap

import schedule_util
from schedule_util import assert_replays, assert_same_numbers, expect, mlp_layer, module, refused

from tvmlite.ir.module import IRModule
from tvmlite.script import from_source
from tvmlite.tir import Schedule

check = functools.partial(schedule_util.check, rtol=1e-4)  # same numbers to 1e-4, replayable trace

MLP_HEADER = '''
    # from tvmlite.script import tir as T

    @T.prim_func(private=True)
    def main(x: T.Buffer((T.int64(1), T.int64(784)), "float32"), lv: T.Buffer((T.int64(784), T.int64(256)), "float32"), p_fc1_bias: T.Buffer((T.int64(256),), "float32"), compute_intermediate: T.Buffer((T.int64(1), T.int64(256)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
        T_add_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
'''

MLP_TAIL = '''
        for ax0, ax1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(matmul_intermediate[v_ax0, v_ax1], p_fc1_bias[v_ax1])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = matmul_intermediate[v_ax0, v_ax1] + p_fc1_bias[v_ax1]
        for i0, i1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_add_intermediate[v_i0, v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.max(T_add_intermediate[v_i0, v_i1], T.float32(0.0))
'''


def test_decompose_at_reduction_loop() -> None:
    mod = mlp_layer()
    sch = Schedule(mod)
    matmul = sch.get_block("matmul")
    _, _, k = sch.get_loops(matmul)
    init = sch.decompose_reduction(matmul, k)
    expect(sch, MLP_HEADER + '''\
        for i0, i1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("matmul_init"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads()
                T.writes(matmul_intermediate[v_i0, v_i1])
                matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
            for k in range(T.int64(784)):
                with T.block("matmul_update"):
                    v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                    T.reads(matmul_intermediate[v_i0, v_i1], x[v_i0, v_k], lv[v_k, v_i1])
                    T.writes(matmul_intermediate[v_i0, v_i1])
                    matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + x[v_i0, v_k] * lv[v_k, v_i1]''' + MLP_TAIL)
    check(sch, mod)
    # The reference follows the reduction block (now "matmul_update"); the result is the init block.
    assert sch.get(matmul).name_hint == "matmul_update"
    assert sch.get(init).name_hint == "matmul_init"
    assert str(sch.trace).splitlines()[-1] == "  b4 = sch.decompose_reduction(block=b0, loop=l3)"


def test_decompose_at_outer_spatial_loop() -> None:
    mod = mlp_layer()
    sch = Schedule(mod)
    matmul = sch.get_block("matmul")
    i0, _, _ = sch.get_loops(matmul)
    sch.decompose_reduction(matmul, i0)
    expect(sch, MLP_HEADER + '''\
        for i0_init, i1_init in T.grid(T.int64(1), T.int64(256)):
            with T.block("matmul_init"):
                v_i0, v_i1 = T.axis.remap("SS", [i0_init, i1_init])
                T.reads()
                T.writes(matmul_intermediate[v_i0, v_i1])
                matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
        for i0, i1, k in T.grid(T.int64(1), T.int64(256), T.int64(784)):
            with T.block("matmul_update"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(matmul_intermediate[v_i0, v_i1], x[v_i0, v_k], lv[v_k, v_i1])
                T.writes(matmul_intermediate[v_i0, v_i1])
                matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + x[v_i0, v_k] * lv[v_k, v_i1]''' + MLP_TAIL)
    check(sch, mod)


MM_RELU = '''
@T.prim_func
def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    Y = T.alloc_buffer((128, 128))
    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''


def test_decompose_tutorial_mm_relu() -> None:
    """TVM's TensorIR tutorial: split j by 4, reorder (j_0, k, j_1), decompose at k."""
    mod = IRModule({"mm_relu": from_source(MM_RELU)})
    sch = Schedule(mod)
    block_y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.decompose_reduction(block_y, k)
    assert sch.mod["mm_relu"].script() == textwrap.dedent('''
        # from tvmlite.script import tir as T

        @T.prim_func
        def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            T.func_attr({"tir.noalias": True})
            # with T.block("root"):
            Y = T.alloc_buffer((128, 128))
            for i, j_0 in T.grid(128, 32):
                for j_1_init in range(4):
                    with T.block("Y_init"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1_init)
                        T.reads()
                        T.writes(Y[vi, vj])
                        Y[vi, vj] = T.float32(0.0)
                for k, j_1 in T.grid(128, 4):
                    with T.block("Y_update"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1)
                        vk = T.axis.reduce(128, k)
                        T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                        T.writes(Y[vi, vj])
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for i, j in T.grid(128, 128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(Y[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))
    ''').strip("\n")
    assert_same_numbers(mod, sch.mod, "mm_relu", rtol=1e-4)
    assert_replays(sch, mod)


MATMUL = '''
@T.prim_func
def main(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"), C: T.Buffer((N, N), "float32")):
    for i, j, k in T.grid(N, N, N):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def _tile_and_decompose(mod: IRModule) -> Schedule:
    sch = Schedule(mod)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 32])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j, k0, i1, k1)
    sch.decompose_reduction(c, k0)
    return sch


def test_decompose_tiled_matmul_1024() -> None:
    mod = module(MATMUL.replace("N", "1024"))
    sch = _tile_and_decompose(mod)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
            # with T.block("root"):
            for i_0, j in T.grid(32, 1024):
                for i_1_init in range(32):
                    with T.block("C_init"):
                        vi = T.axis.spatial(1024, i_0 * 32 + i_1_init)
                        vj = T.axis.spatial(1024, j)
                        T.reads()
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.float32(0.0)
                for k_0, i_1, k_1 in T.grid(256, 32, 4):
                    with T.block("C_update"):
                        vi = T.axis.spatial(1024, i_0 * 32 + i_1)
                        vj = T.axis.spatial(1024, j)
                        vk = T.axis.reduce(1024, k_0 * 4 + k_1)
                        T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    ''')
    assert_replays(sch, mod)
    small = module(MATMUL.replace("N", "128"))  # the same schedule, on a size LLVM runs quickly
    check(_tile_and_decompose(small), small)


def test_decompose_drops_predicates_of_discarded_loops() -> None:
    """TVM's decompose4: k split by a non-divisor; the init block does not keep the k predicate."""
    mod = module(MATMUL.replace("N", "128"))
    sch = Schedule(mod)
    c = sch.get_block("C")
    i, _, k = sch.get_loops(c)
    _, ii = sch.split(i, factors=[16, 8])
    sch.split(k, factors=[19, 7])
    sch.decompose_reduction(c, ii)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i_0 in range(16):
                for i_1_init, j_init in T.grid(8, 128):
                    with T.block("C_init"):
                        vi = T.axis.spatial(128, i_0 * 8 + i_1_init)
                        vj = T.axis.spatial(128, j_init)
                        T.reads()
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.float32(0.0)
                for i_1, j, k_0, k_1 in T.grid(8, 128, 19, 7):
                    with T.block("C_update"):
                        vi = T.axis.spatial(128, i_0 * 8 + i_1)
                        vj = T.axis.spatial(128, j)
                        vk = T.axis.reduce(128, k_0 * 7 + k_1)
                        T.where(k_0 * 7 + k_1 < 128)
                        T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    ''')
    check(sch, mod)


def test_decompose_keeps_predicates_of_copied_loops_and_loop_kinds() -> None:
    mod = module('''
        @T.prim_func
        def main(A: T.Buffer((16, 30), "float32"), B: T.Buffer((30,), "float32")):
            for k, i in T.grid(16, 30):
                with T.block("B"):
                    vk, vi = T.axis.remap("RS", [k, i])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vk, vi]
    ''')
    sch = Schedule(mod)
    b = sch.get_block("B")
    k, i = sch.get_loops(b)
    _, i1 = sch.split(i, [None, 8])
    sch.vectorize(i1)
    sch.decompose_reduction(b, k)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((16, 30), "float32"), B: T.Buffer((30,), "float32")):
            # with T.block("root"):
            for i_0_init in range(4):
                for i_1_init in T.vectorized(8):
                    with T.block("B_init"):
                        vi = T.axis.spatial(30, i_0_init * 8 + i_1_init)
                        T.where(i_0_init * 8 + i_1_init < 30)
                        T.reads()
                        T.writes(B[vi])
                        B[vi] = T.float32(0.0)
            for k, i_0 in T.grid(16, 4):
                for i_1 in T.vectorized(8):
                    with T.block("B_update"):
                        vk = T.axis.reduce(16, k)
                        vi = T.axis.spatial(30, i_0 * 8 + i_1)
                        T.where(i_0 * 8 + i_1 < 30)
                        T.reads(B[vi], A[vk, vi])
                        T.writes(B[vi])
                        B[vi] = B[vi] + A[vk, vi]
    ''')
    check(sch, mod)


def test_decompose_after_inlining_the_epilogue() -> None:
    """The default CPU schedule's order: inline the elementwise blocks, then decompose."""
    mod = mlp_layer()
    sch = Schedule(mod)
    sch.compute_inline(sch.get_block("T_add"))
    matmul = sch.get_block("matmul")
    _, i1, _ = sch.get_loops(matmul)
    sch.decompose_reduction(matmul, i1)
    text = sch.mod["main"].script()
    assert 'for i1_init in range(T.int64(256)):' in text
    assert 'with T.block("matmul_init"):' in text and 'with T.block("matmul_update"):' in text
    check(sch, mod)


def test_decompose_refusals() -> None:
    sch = Schedule(mlp_layer())
    matmul = sch.get_block("matmul")
    t_add = sch.get_block("T_add")
    ax0, _ = sch.get_loops(t_add)
    refused(sch, lambda: sch.decompose_reduction(matmul, ax0),
            r"decompose_reduction: the loop 'ax0' must be an ancestor of the block 'matmul'")
    refused(sch, lambda: sch.decompose_reduction(t_add, ax0),
            r"the block 'T_add' is not a reduction block: it has no init statement \(T.init\(\)\)")


def test_decompose_refuses_loop_below_a_reduction_loop() -> None:
    """TVM's decompose3: with loops (i, k, j), the init cannot go under k."""
    mod = module('''
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
            for i, k, j in T.grid(32, 32, 32):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
    ''')
    sch = Schedule(mod)
    c = sch.get_block("C")
    _, k, j = sch.get_loops(c)
    refused(sch, lambda: sch.decompose_reduction(c, j),
            r"the loop 'j' must be above every loop bound to a reduction iterator of 'C', but 'k' \(above it\) "
            r"drives 'vk'")
    sch.decompose_reduction(c, k)  # at k itself it is fine
    check(sch, mod)


def test_decompose_twice_is_refused() -> None:
    sch = Schedule(mlp_layer())
    matmul = sch.get_block("matmul")
    _, _, k = sch.get_loops(matmul)
    sch.decompose_reduction(matmul, k)
    refused(sch, lambda: sch.decompose_reduction(matmul, k),
            r"the block 'matmul_update' is not a reduction block: it has no init statement")
