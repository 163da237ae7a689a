"""compute_at and reverse_compute_at of tvmlite.tir.Schedule: the exact printed text after each
step, the same numbers as the unscheduled function, a replayable trace, and every refusal with its
message and the module left as it was. Programs: TVM's documented examples, the corpus's
fused_matmul_add_relu (LegalizeOps output), a tiled 128x128 matmul with a local accumulator and a
packed B panel (the default CPU schedule's pattern), a padded conv2d and stencils whose regions
are unions of several accesses."""
from __future__ import annotations

from schedule_util import ELEMWISE, MATMUL, SAME_LOOP, check, expect, mlp_layer, module, refused

from tvmlite.script import from_source
from tvmlite.tir import Schedule

MM_RELU = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
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

CONV = '''
@T.prim_func
def main(data: T.Buffer((1, 4, 16, 16), "float32"), kernel: T.Buffer((8, 4, 3, 3), "float32"), conv: T.Buffer((1, 8, 16, 16), "float32")):
    pad_temp = T.alloc_buffer((1, 4, 18, 18))
    for i0, i1, i2, i3 in T.grid(1, 4, 18, 18):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(data[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
            T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 17 and 1 <= v_i3 and v_i3 < 17, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 8, 16, 16, 4, 3, 3):
        with T.block("conv"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], kernel[v_ff, v_rc, v_ry, v_rx])
            T.writes(conv[v_nn, v_ff, v_yy, v_xx])
            with T.init():
                conv[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
            conv[v_nn, v_ff, v_yy, v_xx] = conv[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * kernel[v_ff, v_rc, v_ry, v_rx]
'''

STENCIL = '''
@T.prim_func
def main(A: T.Buffer((130,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((130,))
    for i in range(130):
        with T.block("B"):
            vi = T.axis.spatial(130, i)
            B[vi] = A[vi] * 2.0
    for i0, i1 in T.grid(8, 16):
        with T.block("C"):
            vi = T.axis.spatial(128, i0 * 16 + i1)
            T.reads(B[vi], B[vi + 1], B[vi + 2])
            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
'''

MIRROR = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,))
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi] * 2.0
    for i0, i1 in T.grid(8, 16):
        with T.block("C"):
            vi = T.axis.spatial(128, i0 * 16 + i1)
            T.reads(B[vi], B[127 - vi])
            C[vi] = B[vi] + B[127 - vi]
'''

TWO_CONSUMERS_UNDER_LOOP = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32"), E: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i in range(128):
        for j in range(128):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                E[vi, vj] = A[vi, vj] + 3.0
        for j in range(128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0
'''

TWO_CONSUMERS = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32"), D: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0
    for i, j in T.grid(128, 128):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] * 3.0
'''

ACCUMULATE = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,))
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = B[vi] + A[vi]
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = B[vi]
'''

UNUSED = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,))
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi]
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = A[vi] * 2.0
'''

STRIDED_PRODUCER = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((256,), "float32")):
    B = T.alloc_buffer((256,))
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi * 2] = A[vi]
    for i0, i1 in T.grid(16, 16):
        with T.block("C"):
            vi = T.axis.spatial(256, i0 * 16 + i1)
            C[vi] = B[vi]
'''

PREDICATED = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,))
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            T.where(i < 100)
            B[vi] = A[vi]
    for i0, i1 in T.grid(8, 16):
        with T.block("C"):
            vi = T.axis.spatial(128, i0 * 16 + i1)
            C[vi] = B[vi]
'''

TWO_PRODUCERS = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B1 = T.alloc_buffer((128, 128))
    B2 = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B1"):
            vi, vj = T.axis.remap("SS", [i, j])
            B1[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(128, 128):
        with T.block("B2"):
            vi, vj = T.axis.remap("SS", [i, j])
            B2[vi, vj] = A[vi, vj] * 3.0
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B1[vi, vj] + B2[vi, vj]
'''

STRIDED_CONSUMER = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.alloc_buffer((128,))
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi] * 2.0
    for i in range(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = B[vi * 2]
'''

HALVES = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,))
    for i in range(64):
        with T.block("B_lo"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi]
        with T.block("B_hi"):
            vi = T.axis.spatial(64, i)
            B[vi + 64] = A[vi + 64]
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = B[vi] * 2.0
'''

SHIFTED_CONSUMER = '''
@T.prim_func
def main(A: T.Buffer((128,), "float32"), C: T.Buffer((127,), "float32")):
    B = T.alloc_buffer((128,))
    for i0, i1 in T.grid(8, 16):
        with T.block("B"):
            vi = T.axis.spatial(128, i0 * 16 + i1)
            B[vi] = A[vi] * 2.0
    for i in range(127):
        with T.block("C"):
            vi = T.axis.spatial(127, i)
            T.reads(B[vi], B[vi + 1])
            C[vi] = B[vi] + B[vi + 1]
'''


# ---------------------------------------------------------------------------- compute_at
def test_compute_at_documented_example() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            for i in range(128):
                for ax0 in range(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, ax0])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
                for j in range(128):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)
    assert str(sch.trace).splitlines()[-1] == (
        "  sch.compute_at(block=b3, loop=l1, preserve_unit_loops=False, index=-1)")


def test_compute_at_preserve_unit_loops() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j, preserve_unit_loops=True)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            for i, j in T.grid(128, 128):
                for ax0, ax1 in T.grid(1, 1):
                    with T.block("B"):
                        vi = T.axis.spatial(128, i + ax0)
                        vj = T.axis.spatial(128, j + ax1)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)


def test_compute_at_unit_loops_dropped() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)


def test_compute_at_under_a_loop_shared_with_the_consumer() -> None:
    # Producer and consumer already share loop i; moving B under C's j leaves one element per step.
    mod = module(SAME_LOOP)
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)


def test_compute_at_reduction_producer_keeps_reduction_loop_inside() -> None:
    mod = module(MM_RELU)
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("Y"), i)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            Y = T.alloc_buffer((128, 128))
            for i in range(128):
                for ax0, ax1 in T.grid(128, 128):
                    with T.block("Y"):
                        vi, vj, vk = T.axis.remap("SSR", [i, ax0, ax1])
                        T.reads(A[vi, vk], B[vk, vj])
                        T.writes(Y[vi, vj])
                        with T.init():
                            Y[vi, vj] = T.float32(0.0)
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
                for j in range(128):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(Y[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))
    ''')
    check(sch, mod)


def test_compute_at_pad_into_conv2d_row() -> None:
    mod = module(CONV)
    sch = Schedule(mod)
    loops = sch.get_loops(sch.get_block("conv"))
    sch.compute_at(sch.get_block("pad_temp"), loops[3])
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(data: T.Buffer((1, 4, 16, 16), "float32"), kernel: T.Buffer((8, 4, 3, 3), "float32"), conv: T.Buffer((1, 8, 16, 16), "float32")):
            # with T.block("root"):
            pad_temp = T.alloc_buffer((1, 4, 18, 18))
            for nn, ff, yy, xx in T.grid(1, 8, 16, 16):
                for ax0, ax1, ax2 in T.grid(4, 3, 3):
                    with T.block("pad_temp"):
                        v_i0 = T.axis.spatial(1, 0)
                        v_i1 = T.axis.spatial(4, ax0)
                        v_i2 = T.axis.spatial(18, yy + ax1)
                        v_i3 = T.axis.spatial(18, xx + ax2)
                        T.reads(data[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                        T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                        pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 17 and 1 <= v_i3 and v_i3 < 17, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0.0))
                for rc, ry, rx in T.grid(4, 3, 3):
                    with T.block("conv"):
                        v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
                        T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], kernel[v_ff, v_rc, v_ry, v_rx])
                        T.writes(conv[v_nn, v_ff, v_yy, v_xx])
                        with T.init():
                            conv[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
                        conv[v_nn, v_ff, v_yy, v_xx] = conv[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * kernel[v_ff, v_rc, v_ry, v_rx]
    ''')
    check(sch, mod)


def test_compute_at_union_of_shifted_reads() -> None:
    mod = module(STENCIL)
    sch = Schedule(mod)
    i0, i1 = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i0)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((130,), "float32"), C: T.Buffer((128,), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((130,))
            for i0 in range(8):
                for ax0 in range(18):
                    with T.block("B"):
                        vi = T.axis.spatial(130, i0 * 16 + ax0)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2.0)
                for i1 in range(16):
                    with T.block("C"):
                        vi = T.axis.spatial(128, i0 * 16 + i1)
                        T.reads(B[vi], B[vi + 1], B[vi + 2])
                        T.writes(C[vi])
                        C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
    ''')
    check(sch, mod)


def test_compute_at_union_over_approximated_with_min_max() -> None:
    mod = module(MIRROR)
    sch = Schedule(mod)
    i0, i1 = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i0)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128,))
            for i0 in range(8):
                for ax0 in range(T.max(i0 * 16 + 15, 127 - i0 * 16) - T.min(i0 * 16, 112 - i0 * 16) + 1):
                    with T.block("B"):
                        vi = T.axis.spatial(128, T.min(i0 * 16, 112 - i0 * 16) + ax0)
                        T.where(T.min(i0 * 16, 112 - i0 * 16) + ax0 < 128)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2.0)
                for i1 in range(16):
                    with T.block("C"):
                        vi = T.axis.spatial(128, i0 * 16 + i1)
                        T.reads(B[vi], B[127 - vi])
                        T.writes(C[vi])
                        C[vi] = B[vi] + B[127 - vi]
    ''')
    check(sch, mod)


def test_compute_at_index_positions() -> None:
    mod = module(TWO_CONSUMERS_UNDER_LOOP)
    # -1: just before the first consumer; -2: just after the last producer; or an index between.
    for index, order in ((-1, ["D", "B", "C"]), (-2, ["B", "D", "C"]), (0, ["B", "D", "C"]), (1, ["D", "B", "C"])):
        sch = Schedule(mod)
        i, _ = sch.get_loops(sch.get_block("C"))
        sch.compute_at(sch.get_block("B"), i, index=index)
        assert [b for b in sch.state.block_names("main") if b != "root"] == order
        check(sch, mod)
    sch = Schedule(mod)
    i, _ = sch.get_loops(sch.get_block("C"))
    refused(sch, lambda: sch.compute_at(sch.get_block("B"), i, index=2),
            r"compute_at: index 2 is not a valid position under the loop 'i': valid are -1, -2 and 0..1")


# ---------------------------------------------------------------------------- reverse_compute_at
def test_reverse_compute_at_documented_example() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.reverse_compute_at(sch.get_block("C"), i)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            for i in range(128):
                for j in range(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
                for ax0 in range(128):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, ax0])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1.0)
    ''')
    check(sch, mod)


def test_reverse_compute_at_relu_under_split_matmul() -> None:
    # The MLC course's mm_relu: C (relu) moved under j_0, covering the 4 columns Y produces there.
    mod = module(MM_RELU)
    sch = Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("Y"))
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C"), j0)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            Y = T.alloc_buffer((128, 128))
            for i, j_0 in T.grid(128, 32):
                for k, j_1 in T.grid(128, 4):
                    with T.block("Y"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1)
                        vk = T.axis.reduce(128, k)
                        T.reads(A[vi, vk], B[vk, vj])
                        T.writes(Y[vi, vj])
                        with T.init():
                            Y[vi, vj] = T.float32(0.0)
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
                for ax0 in range(4):
                    with T.block("C"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + ax0)
                        T.reads(Y[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))
    ''')
    check(sch, mod)


def test_reverse_compute_at_mlp_epilogue_under_matmul_tile() -> None:
    mod = mlp_layer()
    sch = Schedule(mod)
    mm = sch.get_block("matmul")
    i0, i1, k = sch.get_loops(mm)
    j0, j1 = sch.split(i1, [None, 32])
    sch.reorder(i0, j0, k, j1)
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
            for i0, i1_0 in T.grid(T.int64(1), T.int64(8)):
                for k, i1_1 in T.grid(T.int64(784), T.int64(32)):
                    with T.block("matmul"):
                        v_i0 = T.axis.spatial(T.int64(1), i0)
                        v_i1 = T.axis.spatial(T.int64(256), i1_0 * T.int64(32) + i1_1)
                        v_k = T.axis.reduce(T.int64(784), k)
                        T.reads(x[v_i0, v_k], lv[v_k, v_i1])
                        T.writes(matmul_intermediate[v_i0, v_i1])
                        with T.init():
                            matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
                        matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + x[v_i0, v_k] * lv[v_k, v_i1]
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


def test_tiled_matmul_local_accumulator_and_packed_panel() -> None:
    # The default CPU schedule's pattern: tile, accumulate the tile in a local cache written back
    # under the tile loop, copy B's panel under the k-outer loop.
    mod = module(MATMUL)
    sch = Schedule(mod)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    cl = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cl, j0)
    bg = sch.cache_read(c, 1, "global")
    sch.compute_at(bg, k0)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            C_local = T.alloc_buffer((128, 128), scope="local")
            B_global = T.alloc_buffer((128, 128))
            for i_0, j_0 in T.grid(8, 8):
                for k_0 in range(32):
                    for ax0, ax1 in T.grid(4, 16):
                        with T.block("B_global"):
                            v0 = T.axis.spatial(128, k_0 * 4 + ax0)
                            v1 = T.axis.spatial(128, j_0 * 16 + ax1)
                            T.reads(B[v0, v1])
                            T.writes(B_global[v0, v1])
                            B_global[v0, v1] = B[v0, v1]
                    for i_1, k_1, j_1 in T.grid(16, 4, 16):
                        with T.block("C"):
                            vi = T.axis.spatial(128, i_0 * 16 + i_1)
                            vj = T.axis.spatial(128, j_0 * 16 + j_1)
                            vk = T.axis.reduce(128, k_0 * 4 + k_1)
                            T.reads(A[vi, vk], B_global[vk, vj])
                            T.writes(C_local[vi, vj])
                            with T.init():
                                C_local[vi, vj] = T.float32(0.0)
                            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B_global[vk, vj]
                for ax0, ax1 in T.grid(16, 16):
                    with T.block("C_local"):
                        v0 = T.axis.spatial(128, i_0 * 16 + ax0)
                        v1 = T.axis.spatial(128, j_0 * 16 + ax1)
                        T.reads(C_local[v0, v1])
                        T.writes(C[v0, v1])
                        C[v0, v1] = C_local[v0, v1]
    ''')
    check(sch, mod)


def test_tiled_matmul_1024_structure() -> None:
    mod = module(MATMUL.replace("128", "1024"))
    sch = Schedule(mod)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 32])
    j0, j1 = sch.split(j, [None, 32])
    k0, k1 = sch.split(k, [None, 8])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.reverse_compute_at(sch.cache_write(c, 0, "local"), j0)
    sch.compute_at(sch.cache_read(c, 1, "global"), k0)
    text = sch.mod["main"].script()
    assert "for ax0, ax1 in T.grid(8, 32):" in text
    assert "v0 = T.axis.spatial(1024, k_0 * 8 + ax0)" in text
    assert "for ax0, ax1 in T.grid(32, 32):" in text
    assert "v1 = T.axis.spatial(1024, j_0 * 32 + ax1)" in text
    assert from_source(text).script() == text


# ---------------------------------------------------------------------------- refusals
def test_compute_at_refusals() -> None:
    mod = module(TWO_CONSUMERS)
    sch = Schedule(mod)
    b, c, d = (sch.get_block(n) for n in ("B", "C", "D"))
    ci, _ = sch.get_loops(c)
    bi, _ = sch.get_loops(b)
    refused(sch, lambda: sch.compute_at(b, ci),
            r"compute_at: the consumer 'D' of 'B' is not under the loop 'i': every consumer must be inside the loop")
    refused(sch, lambda: sch.compute_at(b, bi),
            r"compute_at: the loop 'i' already encloses the block 'B'")
    refused(sch, lambda: sch.compute_at(c, bi),
            r"compute_at: the block 'C' is an output block: it writes 'C', which its scope does not allocate")
    refused(sch, lambda: sch.compute_at(sch.get_block("root"), ci),
            r"compute_at: the block 'root' and the loop 'i' are not in the same block scope")


def test_compute_at_refuses_incomplete_and_unused_blocks() -> None:
    mod = module(ACCUMULATE)
    sch = Schedule(mod)
    ci, = sch.get_loops(sch.get_block("C"))
    refused(sch, lambda: sch.compute_at(sch.get_block("B"), ci),
            r"compute_at: the block 'B' is not a complete block: it reads 'B', which it also writes, and has no T.init\(\)")
    mod = module(UNUSED)
    sch = Schedule(mod)
    ci, = sch.get_loops(sch.get_block("C"))
    refused(sch, lambda: sch.compute_at(sch.get_block("B"), ci),
            r"compute_at: the block 'B' has no consumer under the loop 'i', so there is no region to compute there")


def test_compute_at_refuses_uncovered_region_and_foreign_predicate() -> None:
    mod = module(STRIDED_PRODUCER)
    sch = Schedule(mod)
    i0, i1 = sch.get_loops(sch.get_block("C"))
    refused(sch, lambda: sch.compute_at(sch.get_block("B"), i0),
            r"compute_at: cannot prove that 'B' computes the whole region B\[i0 \* 16:i0 \* 16 \+ 16\] its "
            r"consumers read in one iteration of the loop 'i0'")
    mod = module(PREDICATED)
    sch = Schedule(mod)
    i0, i1 = sch.get_loops(sch.get_block("C"))
    refused(sch, lambda: sch.compute_at(sch.get_block("B"), i0),
            r"compute_at: the block 'B' has a T.where predicate that does not only bound its iterators")


def test_compute_at_after_split_predicate() -> None:
    # split's T.where (the binding below the extent) is enforced by the new nest itself.
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    bi, bj = sch.get_loops(sch.get_block("B"))
    sch.split(bj, [None, 48])
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    assert "T.where" not in sch.mod["main"].script()
    check(sch, mod)


def test_reverse_compute_at_refusals() -> None:
    mod = module(TWO_PRODUCERS)
    sch = Schedule(mod)
    b1, b2, c = (sch.get_block(n) for n in ("B1", "B2", "C"))
    i1, _ = sch.get_loops(b1)
    refused(sch, lambda: sch.reverse_compute_at(c, i1),
            r"reverse_compute_at: the producer 'B2' of 'C' is not under the loop 'i': every producer must be inside the loop")
    mod = module(STRIDED_CONSUMER)
    sch = Schedule(mod)
    i, = sch.get_loops(sch.get_block("B"))
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C"), i),
            r"reverse_compute_at: cannot tell which iterations of 'C' read only the part of 'B' produced under the "
            r"loop 'i': its index vi \* 2 \(dimension 0\) is not an iterator plus an offset")
    mod = module(HALVES)
    sch = Schedule(mod)
    i, = sch.get_loops(sch.get_block("B_lo"))
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C"), i),
            r"reverse_compute_at: 'B', which 'C' reads, is written by several blocks \('B_lo', 'B_hi'\): the region "
            r"produced per iteration must come from one block")


def test_reverse_compute_at_refuses_reading_beyond_the_produced_tile() -> None:
    mod = module(SHIFTED_CONSUMER)
    sch = Schedule(mod)
    i0, i1 = sch.get_loops(sch.get_block("B"))
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C"), i0),
            r"reverse_compute_at: cannot prove that 'C' reads only the region B\[i0 \* 16:i0 \* 16 \+ 16\] its "
            r"producers write in one iteration of the loop 'i0'")


def test_reverse_compute_at_without_producer_is_refused() -> None:
    mod = module(ELEMWISE)
    sch = Schedule(mod)
    i, _ = sch.get_loops(sch.get_block("C"))
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("B"), i),
            r"reverse_compute_at: the block 'B' has no producer under the loop 'i', so there is no region to "
            r"consume there")
    mod = module(TWO_CONSUMERS)
    sch = Schedule(mod)
    ci, _ = sch.get_loops(sch.get_block("C"))
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("D"), ci),
            r"reverse_compute_at: the producer 'B' of 'D' is not under the loop 'i'")


CONCAT_AFTER_PRODUCER = '''
    @T.prim_func
    def main(A: T.Buffer((N,), "float32"), X: T.Buffer((3,), "float32"), C: T.Buffer((N + 3,), "float32")):
        B = T.alloc_buffer((N,))
        for i in range(N):
            with T.block("B"):
                vi = T.axis.spatial(N, i)
                B[vi] = A[vi] * T.float32(2.0)
        for j in range(N + 3):
            with T.block("C"):
                vj = T.axis.spatial(N + 3, j)
                C[vj] = T.if_then_else(vj < N, B[vj], X[vj - N])
'''


def test_reverse_compute_at_refuses_a_consumer_larger_than_what_the_loop_produces() -> None:
    """A concat after its producer writes rows the producer's loop never reaches (and none at all
    when that loop is empty): moving it under the loop would leave them unwritten."""
    for n in (4, 0):
        sch = Schedule(module(CONCAT_AFTER_PRODUCER.replace("N", str(n))))
        (i,) = sch.get_loops(sch.get_block("B"))
        refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C"), i),
                "would (not cover its whole domain|never run)")
