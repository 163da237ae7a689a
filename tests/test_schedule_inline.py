"""compute_inline and reverse_compute_inline of tvmlite.tir.Schedule: the exact printed text after
each step, the same numbers as the unscheduled function, a replayable trace, and every refusal
with its message and the module left as it was. The programs are those LegalizeOps produces
(matmul + bias + relu, a transpose feeding a matmul, a padded conv2d)."""
from __future__ import annotations

import pytest
from corpus_files import read_corpus
from schedule_util import assert_replays, check, expect, mlp_layer, module, refused

from tvmlite.ir.module import IRModule
from tvmlite.passes import get_pass
from tvmlite.script import from_source
from tvmlite.tir import Schedule

MLP_HEADER = '''
    # from tvmlite.script import tir as T

    @T.prim_func(private=True)
    def main(x: T.Buffer((T.int64(1), T.int64(784)), "float32"), lv: T.Buffer((T.int64(784), T.int64(256)), "float32"), p_fc1_bias: T.Buffer((T.int64(256),), "float32"), compute_intermediate: T.Buffer((T.int64(1), T.int64(256)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)))
        for i0, i1, k in T.grid(T.int64(1), T.int64(256), T.int64(784)):
            with T.block("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], lv[v_k, v_i1])
                T.writes(matmul_intermediate[v_i0, v_i1])
                with T.init():
                    matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
                matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + x[v_i0, v_k] * lv[v_k, v_i1]
'''


# ---------------------------------------------------------------------------- compute_inline
def test_compute_inline_bias_add_into_relu() -> None:
    mod = mlp_layer()
    sch = Schedule(mod)
    sch.compute_inline(sch.get_block("T_add"))
    expect(sch, MLP_HEADER + '''\
        for i0, i1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(matmul_intermediate[v_i0, v_i1], p_fc1_bias[v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.max(matmul_intermediate[v_i0, v_i1] + p_fc1_bias[v_i1], T.float32(0.0))
    ''')
    check(sch, mod)
    assert str(sch.trace).splitlines()[-1] == "  sch.compute_inline(block=b0)"


TRANSPOSE_MATMUL = '''
@T.prim_func
def main(A: T.Buffer((N, N), "float32"), W: T.Buffer((N, N), "float32"), C: T.Buffer((N, N), "float32")):
    T_transpose = T.alloc_buffer((N, N))
    for ax0, ax1 in T.grid(N, N):
        with T.block("T_transpose"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_transpose[v_ax0, v_ax1] = W[v_ax1, v_ax0]
    for i, j, k in T.grid(N, N, N):
        with T.block("matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * T_transpose[v_k, v_j]
'''


def test_compute_inline_transpose_into_matmul_1024() -> None:
    mod = module(TRANSPOSE_MATMUL.replace("N", "1024"))
    sch = Schedule(mod)
    sch.compute_inline(sch.get_block("T_transpose"))
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((1024, 1024), "float32"), W: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
            # with T.block("root"):
            for i, j, k in T.grid(1024, 1024, 1024):
                with T.block("matmul"):
                    v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[v_i, v_k], W[v_j, v_k])
                    T.writes(C[v_i, v_j])
                    with T.init():
                        C[v_i, v_j] = T.float32(0.0)
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * W[v_j, v_k]
    ''')
    assert_replays(sch, mod)
    # The same schedule on a size LLVM runs quickly.
    small = module(TRANSPOSE_MATMUL.replace("N", "64"))
    sch = Schedule(small)
    sch.compute_inline(sch.get_block("T_transpose"))
    check(sch, small)


CONV2D = '''
@T.prim_func(private=True)
def main(x: T.Buffer((T.int64(1), T.int64(4), T.int64(8), T.int64(8)), "float32"), w: T.Buffer((T.int64(8), T.int64(4), T.int64(3), T.int64(3)), "float32"), conv2d_nchw: T.Buffer((T.int64(1), T.int64(8), T.int64(8), T.int64(8)), "float32")):
    T.func_attr({"tir.noalias": True})
    pad_temp = T.alloc_buffer((T.int64(1), T.int64(4), T.int64(10), T.int64(10)))
    for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(4), T.int64(10), T.int64(10)):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(x[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)])
            T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(v_i2 >= T.int64(1) and v_i2 < T.int64(9) and v_i3 >= T.int64(1) and v_i3 < T.int64(9), x[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)], T.float32(0.0))
    for i0, i1, i2, i3, rc, ry, rx in T.grid(T.int64(1), T.int64(8), T.int64(8), T.int64(8), T.int64(4), T.int64(3), T.int64(3)):
        with T.block("conv2d_nchw"):
            v_i0, v_i1, v_i2, v_i3, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [i0, i1, i2, i3, rc, ry, rx])
            T.reads(pad_temp[v_i0, v_rc, v_i2 + v_ry, v_i3 + v_rx], w[v_i1, v_rc, v_ry, v_rx])
            T.writes(conv2d_nchw[v_i0, v_i1, v_i2, v_i3])
            with T.init():
                conv2d_nchw[v_i0, v_i1, v_i2, v_i3] = T.float32(0.0)
            conv2d_nchw[v_i0, v_i1, v_i2, v_i3] = conv2d_nchw[v_i0, v_i1, v_i2, v_i3] + pad_temp[v_i0, v_rc, v_i2 + v_ry, v_i3 + v_rx] * w[v_i1, v_rc, v_ry, v_rx]
'''


def test_compute_inline_pad_into_conv2d() -> None:
    mod = module(CONV2D)
    sch = Schedule(mod)
    sch.compute_inline(sch.get_block("pad_temp"))
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func(private=True)
        def main(x: T.Buffer((T.int64(1), T.int64(4), T.int64(8), T.int64(8)), "float32"), w: T.Buffer((T.int64(8), T.int64(4), T.int64(3), T.int64(3)), "float32"), conv2d_nchw: T.Buffer((T.int64(1), T.int64(8), T.int64(8), T.int64(8)), "float32")):
            T.func_attr({"tir.noalias": True})
            # with T.block("root"):
            for i0, i1, i2, i3, rc, ry, rx in T.grid(T.int64(1), T.int64(8), T.int64(8), T.int64(8), T.int64(4), T.int64(3), T.int64(3)):
                with T.block("conv2d_nchw"):
                    v_i0, v_i1, v_i2, v_i3, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [i0, i1, i2, i3, rc, ry, rx])
                    T.reads(x[v_i0, v_rc, v_i2 + v_ry - T.int64(1), v_i3 + v_rx - T.int64(1)], w[v_i1, v_rc, v_ry, v_rx])
                    T.writes(conv2d_nchw[v_i0, v_i1, v_i2, v_i3])
                    with T.init():
                        conv2d_nchw[v_i0, v_i1, v_i2, v_i3] = T.float32(0.0)
                    conv2d_nchw[v_i0, v_i1, v_i2, v_i3] = conv2d_nchw[v_i0, v_i1, v_i2, v_i3] + T.if_then_else(v_i2 + v_ry >= T.int64(1) and v_i2 + v_ry < T.int64(9) and v_i3 + v_rx >= T.int64(1) and v_i3 + v_rx < T.int64(9), x[v_i0, v_rc, v_i2 + v_ry - T.int64(1), v_i3 + v_rx - T.int64(1)], T.float32(0.0)) * w[v_i1, v_rc, v_ry, v_rx]
    ''')
    check(sch, mod)


CHAIN = '''
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), D: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((8, 16))
    C = T.alloc_buffer((17, 8))
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi + 1, vj] = B[vj, vi] + T.float32(1)
    for i, j in T.grid(8, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vj + 1, vi] + C[vj + 1, vi]
'''


def test_compute_inline_permuted_and_offset_stores() -> None:
    mod = module(CHAIN)
    sch = Schedule(mod)
    sch.compute_inline(sch.get_block("B"))
    sch.compute_inline(sch.get_block("C"))
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((16, 8), "float32"), D: T.Buffer((8, 16), "float32")):
            # with T.block("root"):
            for i, j in T.grid(8, 16):
                with T.block("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vj + 1 - 1, vi])
                    T.writes(D[vi, vj])
                    D[vi, vj] = A[vj + 1 - 1, vi] * T.float32(2.0) + T.float32(1.0) + (A[vj + 1 - 1, vi] * T.float32(2.0) + T.float32(1.0))
    ''')
    check(sch, mod)


def test_compute_inline_refusals() -> None:
    sch = Schedule(mlp_layer())
    refused(sch, lambda: sch.compute_inline(sch.get_block("compute")),
            r"compute_inline: the block 'compute' is an output block: it writes 'compute_intermediate', a parameter")
    refused(sch, lambda: sch.compute_inline(sch.get_block("matmul")),
            r"the block 'matmul' has an init statement \(T.init\(\)\): a reduction block cannot be inlined")


def _one_producer(store: str, extra: str = "", reads_b: str = "B[vi]") -> IRModule:
    return module(f'''
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
            B = T.alloc_buffer((32,))
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    {store}
            {extra}
            for i in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(16, i)
                    C[vi] = {reads_b}
    ''')


@pytest.mark.parametrize("store, extra, match", [
    ("B[vi * 2] = A[vi]", "", r"must store at indices that are distinct block iterators .* index 0 of its store "
                              r"into 'B' is not"),
    ("B[vi] = B[vi + 16] + A[vi]", "", r"the block 'B' is not a complete block: it reads 'B', which it writes"),
    ("B[vi] = A[vi]\n                    B[vi + 16] = A[vi]", "",
     r"the body of the block 'B' must be a single store into 'B', got a SeqStmt"),
    ("B[vi] = A[vi]", '''for i in range(16):
                with T.block("B2"):
                    vi = T.axis.spatial(16, i)
                    B[vi + 16] = A[vi]''', r"the block 'B' is not a complete block: the block 'B2' also writes 'B'"),
    ("B[vi] = A[vi]", '''with T.block("use"):
                T.call_extern("int32", "consume", B.data)''',
     r"the buffer 'B' cannot be inlined: its data pointer 'B' is used directly"),
])
def test_compute_inline_refuses_patterns(store: str, extra: str, match: str) -> None:
    sch = Schedule(_one_producer(store, extra))
    refused(sch, lambda: sch.compute_inline(sch.get_block("B")), match)


def test_compute_inline_refuses_multiple_writes_and_order() -> None:
    two = module('''
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
            B = T.alloc_buffer((16,))
            B2 = T.alloc_buffer((16,))
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    T.reads(A[vi])
                    T.writes(B[vi], B2[vi])
                    B[vi] = A[vi]
                    B2[vi] = A[vi]
            for i in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(16, i)
                    C[vi] = B[vi] + B2[vi]
    ''')
    sch = Schedule(two)
    refused(sch, lambda: sch.compute_inline(sch.get_block("B")),
            r"the block 'B' writes 2 buffer regions; only a block writing a single buffer region can be inlined")
    # A block between the producer and its consumer overwrites what the producer read.
    clobber = module('''
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
            X = T.alloc_buffer((16,))
            B = T.alloc_buffer((16,))
            for i in range(16):
                with T.block("X"):
                    vi = T.axis.spatial(16, i)
                    X[vi] = A[vi]
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    B[vi] = X[vi] + T.float32(1)
            for i in range(16):
                with T.block("X2"):
                    vi = T.axis.spatial(16, i)
                    X[vi] = T.float32(0)
            for i in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(16, i)
                    C[vi] = B[vi] + X[vi]
    ''')
    sch = Schedule(clobber)
    refused(sch, lambda: sch.compute_inline(sch.get_block("B")),
            r"the block 'X2' writes 'X' between 'B' and its readers: the inlined expression would read the new values")
    # The only block of the scope (its buffer is read by no one) cannot vanish.
    alone = module('''
        @T.prim_func
        def main(A: T.Buffer((16,), "float32")):
            B = T.alloc_buffer((16,))
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    B[vi] = A[vi]
    ''')
    sch = Schedule(alone)
    refused(sch, lambda: sch.compute_inline(sch.get_block("B")),
            r"the block 'B' is the only statement of the scope 'root'")


def test_inlined_block_reference_is_stale() -> None:
    sch = Schedule(mlp_layer())
    t_add = sch.get_block("T_add")
    sch.compute_inline(t_add)
    refused(sch, lambda: sch.compute_inline(t_add), r"the block 'T_add' no longer exists")


# ---------------------------------------------------------------------------- reverse_compute_inline
def test_reverse_compute_inline_relu_into_bias_add() -> None:
    mod = mlp_layer()
    sch = Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("compute"))
    expect(sch, MLP_HEADER + '''\
        for ax0, ax1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(matmul_intermediate[v_ax0, v_ax1], p_fc1_bias[v_ax1])
                T.writes(compute_intermediate[v_ax0, v_ax1])
                compute_intermediate[v_ax0, v_ax1] = T.max(matmul_intermediate[v_ax0, v_ax1] + p_fc1_bias[v_ax1], T.float32(0.0))
    ''')
    check(sch, mod)


def test_reverse_compute_inline_reads_a_unit_dimension_at_zero() -> None:
    """After Simplify, batch-1 blocks index their unit dimension with the constant 0: the consumer
    still maps onto its producer (0 is the only index of a unit dimension)."""
    mod = get_pass("Simplify")(mlp_layer())
    sch = Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("compute"))
    expect(sch, MLP_HEADER.replace("v_i0, v_i1, v_k = T.axis.remap(\"SSR\", [i0, i1, k])", "v_i0 = T.axis.spatial(T.int64(1), T.int64(0))\n                v_i1, v_k = T.axis.remap(\"SR\", [i1, k])")
           .replace("[v_i0, v_k]", "[T.int64(0), v_k]").replace("[v_i0, v_i1]", "[T.int64(0), v_i1]") + '''\
        for ax0, ax1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("T_add"):
                v_ax0 = T.axis.spatial(T.int64(1), T.int64(0))
                v_ax1 = T.axis.spatial(T.int64(256), ax1)
                T.reads(matmul_intermediate[T.int64(0), v_ax1], p_fc1_bias[v_ax1])
                T.writes(compute_intermediate[T.int64(0), v_ax1])
                compute_intermediate[T.int64(0), v_ax1] = T.max(matmul_intermediate[T.int64(0), v_ax1] + p_fc1_bias[v_ax1], T.float32(0.0))
    ''')
    check(sch, mod)


def test_reverse_compute_inline_into_reduction_is_refused() -> None:
    sch = Schedule(mlp_layer())
    sch.compute_inline(sch.get_block("T_add"))
    refused(sch, lambda: sch.reverse_compute_inline(sch.get_block("compute")),
            r"reverse_compute_inline: the producer 'matmul' of 'matmul_intermediate' is a reduction block")


TRANSPOSED_CONSUMERS = '''
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32"), D: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    E = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = A[vi, vj] * T.float32(3)
    for i, j in T.grid(8, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.exp(E[vi, vj])
'''


def test_reverse_compute_inline_transposed_and_partial_consumers() -> None:
    mod = module(TRANSPOSED_CONSUMERS)
    sch = Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("C"))
    # D covers only the first 8 rows of E: the producer gets a predicate.
    sch.reverse_compute_inline(sch.get_block("D"))
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32"), D: T.Buffer((8, 16), "float32")):
            # with T.block("root"):
            for i, j in T.grid(16, 16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(C[vj, vi])
                    C[vj, vi] = (A[vi, vj] + T.float32(1.0)) * T.float32(2.0)
            for i, j in T.grid(16, 16):
                with T.block("E"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.where(i < 8)
                    T.reads(A[vi, vj])
                    T.writes(D[vi, vj])
                    D[vi, vj] = T.exp(A[vi, vj] * T.float32(3.0))
    ''')
    check(sch, mod)


def _consumer(body: str, extra_producer: str = "", consumer_extent: str = "16, 16",
              c_shape: str = "(16, 16)") -> IRModule:
    return module(f'''
        @T.prim_func
        def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer({c_shape}, "float32")):
            B = T.alloc_buffer((16, 16))
            B2 = T.alloc_buffer((16, 16))
            for i, j in T.grid(16, 16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] + T.float32(1)
            {extra_producer}
            for i, j in T.grid({consumer_extent}):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    {body}
    ''')


B2_PRODUCER = '''for i, j in T.grid(16, 16):
                with T.block("B2"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B2[vi, vj] = B[vi, vj] * T.float32(3)'''


@pytest.mark.parametrize("kwargs, match", [
    (dict(body="C[vi, vj] = B[vi, vj] + B[vj, vi]"),
     r"the block 'C' reads 'B' at different indices: it can be inlined only when every read uses the same indices"),
    (dict(body="C[vi, vj] = B[vi, vj] + B2[vi, vj]", extra_producer=B2_PRODUCER.replace("B[vi, vj]", "A[vi, vj]")),
     r"the block 'C' must read exactly one buffer written in its scope \(it reads: 'B', 'B2'\)"),
    (dict(body="C[vi, vj] = B[vi, vj]", extra_producer=B2_PRODUCER),
     r"the block 'B2' also reads 'B': the producer 'B' must have a single consumer"),
    (dict(body="C[vi, vj] = B[vi, 0]"),
     r"the block 'C' must read 'B' at indices that are distinct block iterators \(index 1 is not\)"),
    (dict(body="C[vi, vj, 0] = B[vi, vj]", consumer_extent="16, 16", c_shape="(16, 16, 1)"), None),
])
def test_reverse_compute_inline_refusals(kwargs: dict, match: str | None) -> None:
    mod = _consumer(**kwargs)
    sch = Schedule(mod)
    if match is None:  # accepted: a consumer with an extra constant index
        sch.reverse_compute_inline(sch.get_block("C"))
        check(sch, mod)
        return
    refused(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")), match)


def test_reverse_compute_inline_refuses_broadcast_and_predicate() -> None:
    broadcast = module('''
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16, 4), "float32")):
            B = T.alloc_buffer((16,))
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    B[vi] = A[vi] + T.float32(1)
            for i, j in T.grid(16, 4):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi]
    ''')
    sch = Schedule(broadcast)
    refused(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
            r"the block 'C' iterates over 'vj', which its read of 'B' does not use")
    sch = Schedule(_consumer("C[vi, vj] = B[vi, vj]"))
    _, j = sch.get_loops(sch.get_block("C"))
    sch.split(j, [None, 5])
    refused(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
            r"the block 'C' has a predicate \(T.where\)")


def test_reverse_compute_inline_refuses_output_producer_and_reduction_consumer() -> None:
    output = module('''
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    B[vi] = A[vi] + T.float32(1)
            for i in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(16, i)
                    C[vi] = B[vi] * T.float32(2)
    ''')
    sch = Schedule(output)
    refused(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
            r"the block 'B' is an output block: it writes 'B', a parameter of 'main'")
    sch = Schedule(mlp_layer())
    refused(sch, lambda: sch.reverse_compute_inline(sch.get_block("matmul")),
            r"the block 'matmul' has an init statement")
    in_place = module('''
        @T.prim_func
        def main(A: T.Buffer((16,), "float32")):
            B = T.alloc_buffer((16,))
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    B[vi] = A[15 - vi] + T.float32(1)
            for i in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(16, i)
                    A[vi] = B[vi] * T.float32(2)
    ''')
    sch = Schedule(in_place)
    refused(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
            r"the block 'C' writes 'A', which its producer 'B' reads: the producer would read values it has just "
            r"written")


def test_reverse_compute_inline_symbolic_shape() -> None:
    """The dynamic-batch MLP layer: the producer covers the consumer's symbolic domain exactly, so
    no predicate is added."""
    fused = from_source(read_corpus("seed001_mlp_dynamic_fused.py"))
    mod = IRModule({"main": fused["fused_matmul_add_relu"]})
    sch = Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("compute"))
    text = sch.mod["main"].script()
    assert "T.where" not in text and 'T.block("compute")' not in text
    assert "T_add_intermediate" not in text
    assert ("compute_intermediate[v_ax0, v_ax1] = T.max(matmul_intermediate[v_ax0, v_ax1] + fc1_bias[v_ax1], "
            "T.float32(0.0))") in text
    assert_replays(sch, mod)
