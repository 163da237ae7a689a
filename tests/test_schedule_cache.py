"""cache_read and cache_write of tvmlite.tir.Schedule: the exact printed text after each step, the
same numbers as the unscheduled function, a replayable trace, and every refusal with its message
and the module left as it was. Programs: TVM's documented examples, intermediates between two
blocks (the copy goes between writer and reader, inside their common loop when they share one),
a matmul reduction and the corpus's fused_matmul_add_relu (LegalizeOps output)."""
from __future__ import annotations

from schedule_util import ELEMWISE, MATMUL, SAME_LOOP, check, expect, mlp_layer, module, refused

from tvmlite.tir import Schedule

COPY = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
'''

TWO_READERS = '''
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32"), D: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(64, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + 1.0
    for i, j in T.grid(64, 64):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = A[vj, vi] * 2.0
'''

HALVES = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,))
    for i in range(64):
        with T.block("B_lo"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi]
    for i in range(64):
        with T.block("B_hi"):
            vi = T.axis.spatial(64, i)
            B[vi + 64] = A[vi + 64]
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = B[vi] * 2.0
'''

ACCUMULATE = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = B[vi] + A[vi]
'''

READ_BEFORE_WRITE = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,))
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = B[vi]
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi]
'''


# ---------------------------------------------------------------------------- cache_read
def test_cache_read_documented_example() -> None:
    mod = module(COPY)
    sch = Schedule(mod)
    block_b = sch.get_block("B")
    a_local = sch.cache_read(block_b, 0, "local")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            A_local = T.alloc_buffer((128, 128), scope="local")
            for ax0, ax1 in T.grid(128, 128):
                with T.block("A_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v0, v1])
                    T.writes(A_local[v0, v1])
                    A_local[v0, v1] = A[v0, v1]
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A_local[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A_local[vi, vj] * T.float32(2.0)
    ''')
    check(sch, mod)
    assert sch.get(a_local).name_hint == "A_local"
    assert str(sch.trace).splitlines()[-1] == (
        '  b1 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope="local")')


def test_cache_read_of_an_intermediate_goes_between_writer_and_reader() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            B_shared = T.alloc_buffer((128, 128), scope="shared")
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for ax0, ax1 in T.grid(128, 128):
                with T.block("B_shared"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B[v0, v1])
                    T.writes(B_shared[v0, v1])
                    B_shared[v0, v1] = B[v0, v1]
            for i, j in T.grid(128, 128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B_shared[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B_shared[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)


def test_cache_read_inside_the_common_loop() -> None:
    mod = module(SAME_LOOP)
    sch = Schedule(mod)
    sch.cache_read(sch.get_block("C"), 0, "local")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            B_local = T.alloc_buffer((128, 128), scope="local")
            for i in range(128):
                for j in range(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
                for ax0, ax1 in T.grid(1, 128):
                    with T.block("B_local"):
                        v0 = T.axis.spatial(128, i + ax0)
                        v1 = T.axis.spatial(128, ax1)
                        T.reads(B[v0, v1])
                        T.writes(B_local[v0, v1])
                        B_local[v0, v1] = B[v0, v1]
                for j in range(128):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B_local[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B_local[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)


def test_cache_read_for_chosen_consumers_only() -> None:
    mod = module(TWO_READERS)
    sch = Schedule(mod)
    c, d = sch.get_block("C"), sch.get_block("D")
    sch.cache_read(c, 0, "global", consumer_blocks=[d])
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32"), D: T.Buffer((64, 64), "float32")):
            # with T.block("root"):
            A_global = T.alloc_buffer((64, 64))
            for ax0, ax1 in T.grid(64, 64):
                with T.block("A_global"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v0, v1])
                    T.writes(A_global[v0, v1])
                    A_global[v0, v1] = A[v0, v1]
            for i, j in T.grid(64, 64):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = A[vi, vj] + T.float32(1.0)
            for i, j in T.grid(64, 64):
                with T.block("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A_global[vj, vi])
                    T.writes(D[vi, vj])
                    D[vi, vj] = A_global[vj, vi] * T.float32(2.0)
    ''')
    check(sch, mod)
    assert str(sch.trace).splitlines()[-1] == (
        '  b2 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope="global", consumer_blocks=[b1])')


def test_cache_read_twice_gets_fresh_names() -> None:
    mod = module(TWO_READERS)
    sch = Schedule(mod)
    c, d = sch.get_block("C"), sch.get_block("D")
    first = sch.cache_read(c, 0, "global", consumer_blocks=[c])
    second = sch.cache_read(d, 0, "global")
    text = sch.mod["main"].script()
    assert "A_global = T.alloc_buffer((64, 64))" in text
    assert "A_global_1 = T.alloc_buffer((64, 64))" in text
    assert "C[vi, vj] = A_global[vi, vj] + T.float32(1.0)" in text
    assert "D[vi, vj] = A_global_1[vj, vi] * T.float32(2.0)" in text
    assert (sch.get(first).name_hint, sch.get(second).name_hint) == ("A_global", "A_global_1")
    check(sch, mod)


def test_cache_read_of_a_cache_chains() -> None:
    # Every reader of the first cache (C and D) reads the second one, placed after the first copy.
    mod = module(TWO_READERS)
    sch = Schedule(mod)
    sch.cache_read(sch.get_block("C"), 0, "global")
    sch.cache_read(sch.get_block("C"), 0, "local")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32"), D: T.Buffer((64, 64), "float32")):
            # with T.block("root"):
            A_global = T.alloc_buffer((64, 64))
            A_global_local = T.alloc_buffer((64, 64), scope="local")
            for ax0, ax1 in T.grid(64, 64):
                with T.block("A_global"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v0, v1])
                    T.writes(A_global[v0, v1])
                    A_global[v0, v1] = A[v0, v1]
            for ax0, ax1 in T.grid(64, 64):
                with T.block("A_global_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A_global[v0, v1])
                    T.writes(A_global_local[v0, v1])
                    A_global_local[v0, v1] = A_global[v0, v1]
            for i, j in T.grid(64, 64):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A_global_local[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = A_global_local[vi, vj] + T.float32(1.0)
            for i, j in T.grid(64, 64):
                with T.block("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A_global_local[vj, vi])
                    T.writes(D[vi, vj])
                    D[vi, vj] = A_global_local[vj, vi] * T.float32(2.0)
    ''')
    check(sch, mod)


def test_cache_read_of_a_matmul_operand() -> None:
    mod = mlp_layer()
    sch = Schedule(mod)
    sch.cache_read(sch.get_block("matmul"), 1, "global")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func(private=True)
        def main(x: T.Buffer((T.int64(1), T.int64(784)), "float32"), lv: T.Buffer((T.int64(784), T.int64(256)), "float32"), p_fc1_bias: T.Buffer((T.int64(256),), "float32"), compute_intermediate: T.Buffer((T.int64(1), T.int64(256)), "float32")):
            T.func_attr({"tir.noalias": True})
            # with T.block("root"):
            matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
            T_add_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
            lv_global = T.alloc_buffer((T.int64(784), T.int64(256)))
            for ax0, ax1 in T.grid(T.int64(784), T.int64(256)):
                with T.block("lv_global"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(lv[v0, v1])
                    T.writes(lv_global[v0, v1])
                    lv_global[v0, v1] = lv[v0, v1]
            for i0, i1, k in T.grid(T.int64(1), T.int64(256), T.int64(784)):
                with T.block("matmul"):
                    v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                    T.reads(x[v_i0, v_k], lv_global[v_k, v_i1])
                    T.writes(matmul_intermediate[v_i0, v_i1])
                    with T.init():
                        matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
                    matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + x[v_i0, v_k] * lv_global[v_k, v_i1]
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
    ''')
    check(sch, mod)


# ---------------------------------------------------------------------------- cache_write
def test_cache_write_documented_example() -> None:
    mod = module(COPY)
    sch = Schedule(mod)
    b_local = sch.cache_write(sch.get_block("B"), 0, "local")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B_local = T.alloc_buffer((128, 128), scope="local")
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B_local[vi, vj])
                    B_local[vi, vj] = A[vi, vj] * T.float32(2.0)
            for ax0, ax1 in T.grid(128, 128):
                with T.block("B_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B_local[v0, v1])
                    T.writes(B[v0, v1])
                    B[v0, v1] = B_local[v0, v1]
    ''')
    check(sch, mod)
    assert sch.get(b_local).name_hint == "B_local"


def test_cache_write_of_an_intermediate_goes_before_its_reader() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    sch.cache_write(sch.get_block("B"), 0, "local")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            B_local = T.alloc_buffer((128, 128), scope="local")
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B_local[vi, vj])
                    B_local[vi, vj] = A[vi, vj] * T.float32(2.0)
            for ax0, ax1 in T.grid(128, 128):
                with T.block("B_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B_local[v0, v1])
                    T.writes(B[v0, v1])
                    B[v0, v1] = B_local[v0, v1]
            for i, j in T.grid(128, 128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)


def test_cache_write_with_consumers_reading_the_cache() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    sch.cache_write(sch.get_block("B"), 0, "local", consumer_blocks=[sch.get_block("C")])
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            B_local = T.alloc_buffer((128, 128), scope="local")
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B_local[vi, vj])
                    B_local[vi, vj] = A[vi, vj] * T.float32(2.0)
            for i, j in T.grid(128, 128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B_local[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B_local[vi, vj] + T.float32(1.0)
            for ax0, ax1 in T.grid(128, 128):
                with T.block("B_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B_local[v0, v1])
                    T.writes(B[v0, v1])
                    B[v0, v1] = B_local[v0, v1]
    ''')
    check(sch, mod)


def test_cache_write_of_a_reduction() -> None:
    mod = module(MATMUL)
    sch = Schedule(mod)
    sch.cache_write(sch.get_block("C"), 0, "local")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            C_local = T.alloc_buffer((128, 128), scope="local")
            for i, j, k in T.grid(128, 128, 128):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C_local[vi, vj])
                    with T.init():
                        C_local[vi, vj] = T.float32(0.0)
                    C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
            for ax0, ax1 in T.grid(128, 128):
                with T.block("C_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(C_local[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_local[v0, v1]
    ''')
    check(sch, mod)


def test_cache_write_inside_the_common_loop() -> None:
    mod = module(SAME_LOOP)
    sch = Schedule(mod)
    sch.cache_write(sch.get_block("B"), 0, "local")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            B_local = T.alloc_buffer((128, 128), scope="local")
            for i in range(128):
                for j in range(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B_local[vi, vj])
                        B_local[vi, vj] = A[vi, vj] * T.float32(2.0)
                for ax0, ax1 in T.grid(1, 128):
                    with T.block("B_local"):
                        v0 = T.axis.spatial(128, i + ax0)
                        v1 = T.axis.spatial(128, ax1)
                        T.reads(B_local[v0, v1])
                        T.writes(B[v0, v1])
                        B[v0, v1] = B_local[v0, v1]
                for j in range(128):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)


def test_cache_write_of_the_mlp_matmul_then_epilogue_at_the_tile() -> None:
    mod = mlp_layer()
    sch = Schedule(mod)
    mm = sch.get_block("matmul")
    i0, i1, k = sch.get_loops(mm)
    j0, j1 = sch.split(i1, [None, 32])
    sch.reorder(i0, j0, k, j1)
    local = sch.cache_write(mm, 0, "local")
    sch.reverse_compute_at(local, j0)
    sch.reverse_compute_at(sch.get_block("T_add"), j0)
    sch.reverse_compute_at(sch.get_block("compute"), j0)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func(private=True)
        def main(x: T.Buffer((T.int64(1), T.int64(784)), "float32"), lv: T.Buffer((T.int64(784), T.int64(256)), "float32"), p_fc1_bias: T.Buffer((T.int64(256),), "float32"), compute_intermediate: T.Buffer((T.int64(1), T.int64(256)), "float32")):
            T.func_attr({"tir.noalias": True})
            # with T.block("root"):
            matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
            T_add_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
            matmul_intermediate_local = T.alloc_buffer((T.int64(1), T.int64(256)), scope="local")
            for i0, i1_0 in T.grid(T.int64(1), T.int64(8)):
                for k, i1_1 in T.grid(T.int64(784), T.int64(32)):
                    with T.block("matmul"):
                        v_i0 = T.axis.spatial(T.int64(1), i0)
                        v_i1 = T.axis.spatial(T.int64(256), i1_0 * T.int64(32) + i1_1)
                        v_k = T.axis.reduce(T.int64(784), k)
                        T.reads(x[v_i0, v_k], lv[v_k, v_i1])
                        T.writes(matmul_intermediate_local[v_i0, v_i1])
                        with T.init():
                            matmul_intermediate_local[v_i0, v_i1] = T.float32(0.0)
                        matmul_intermediate_local[v_i0, v_i1] = matmul_intermediate_local[v_i0, v_i1] + x[v_i0, v_k] * lv[v_k, v_i1]
                for ax0 in range(T.int64(32)):
                    with T.block("matmul_intermediate_local"):
                        v0 = T.axis.spatial(T.int64(1), T.int64(0))
                        v1 = T.axis.spatial(T.int64(256), i1_0 * T.int64(32) + ax0)
                        T.reads(matmul_intermediate_local[v0, v1])
                        T.writes(matmul_intermediate[v0, v1])
                        matmul_intermediate[v0, v1] = matmul_intermediate_local[v0, v1]
                for ax0 in range(T.int64(32)):
                    with T.block("T_add"):
                        v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
                        v_ax1 = T.axis.spatial(T.int64(256), i1_0 * T.int64(32) + ax0)
                        T.reads(matmul_intermediate[v_ax0, v_ax1], p_fc1_bias[v_ax1])
                        T.writes(T_add_intermediate[v_ax0, v_ax1])
                        T_add_intermediate[v_ax0, v_ax1] = matmul_intermediate[v_ax0, v_ax1] + p_fc1_bias[v_ax1]
                for ax0 in range(T.int64(32)):
                    with T.block("compute"):
                        v_i0 = T.axis.spatial(T.int64(1), T.int64(0))
                        v_i1 = T.axis.spatial(T.int64(256), i1_0 * T.int64(32) + ax0)
                        T.reads(T_add_intermediate[v_i0, v_i1])
                        T.writes(compute_intermediate[v_i0, v_i1])
                        compute_intermediate[v_i0, v_i1] = T.max(T_add_intermediate[v_i0, v_i1], T.float32(0.0))
    ''')
    check(sch, mod)


# ---------------------------------------------------------------------------- refusals
def test_cache_refusals() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    b, c = sch.get_block("B"), sch.get_block("C")
    refused(sch, lambda: sch.cache_read(c, 1, "local"),
            r"cache_read: read_buffer_index 1 is out of range: the block 'C' reads 1 buffer \(B\)")
    refused(sch, lambda: sch.cache_read(c, -1, "local"), r"cache_read: read_buffer_index -1 is out of range")
    refused(sch, lambda: sch.cache_write(b, 2, "local"),
            r"cache_write: write_buffer_index 2 is out of range: the block 'B' writes 1 buffer \(B\)")
    refused(sch, lambda: sch.cache_read(c, 0, "my scope"),
            r"cache_read: 'my scope' is not a storage scope \(such as \"global\", \"shared\" or \"local\"\)")
    refused(sch, lambda: sch.cache_read(c, 0, "local", consumer_blocks=[b]),
            r"cache_read: the consumer block 'B' does not read 'B' in the scope of 'C'")
    refused(sch, lambda: sch.cache_write(b, 0, "local", consumer_blocks=[b]),
            r"cache_write: the consumer block 'B' does not read 'B' in the scope of 'B'")


def test_cache_refuses_several_writers_and_bad_order() -> None:
    mod = module(HALVES)
    sch = Schedule(mod)
    refused(sch, lambda: sch.cache_write(sch.get_block("B_lo"), 0, "local"),
            r"cache_write: 'B' is also written by 'B_hi': cache_write needs 'B_lo' to be its only writer in the scope")
    refused(sch, lambda: sch.cache_read(sch.get_block("C"), 0, "local"),
            r"cache_read: 'B' is written by several blocks \('B_lo', 'B_hi'\): cache_read needs at most one writer")
    mod = module(ACCUMULATE)
    sch = Schedule(mod)
    refused(sch, lambda: sch.cache_read(sch.get_block("B"), 0, "local"),
            r"cache_read: the block 'B' both reads and writes 'B': a read cache would not see its writes")
    mod = module(READ_BEFORE_WRITE)
    sch = Schedule(mod)
    refused(sch, lambda: sch.cache_read(sch.get_block("C"), 0, "local"),
            r"cache_read: the block 'C' reads 'B' before 'B' writes it")
