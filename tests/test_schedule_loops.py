"""Loop primitives of tvmlite.tir.Schedule: split, fuse, reorder, parallel, vectorize, unroll,
annotate, and the trace. Each step: exact printed text, same numbers as the unscheduled function,
refusals with a clear message that leave the module unchanged."""
from __future__ import annotations

import textwrap

import pytest
from schedule_util import MATMUL, check, expect, module

import tvmlite
from tvmlite.tir import Schedule, ScheduleError

EWISE = '''
@T.prim_func
def main(A: T.Buffer((100, 64), "float32"), B: T.Buffer((100, 64), "float32")):
    for i, j in T.grid(100, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
'''


def test_split_with_predicate() -> None:
    mod = module(EWISE)
    sch = Schedule(mod)
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 32])
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((100, 64), "float32"), B: T.Buffer((100, 64), "float32")):
            # with T.block("root"):
            for i_0, i_1, j in T.grid(4, 32, 64):
                with T.block("B"):
                    vi = T.axis.spatial(100, i_0 * 32 + i_1)
                    vj = T.axis.spatial(64, j)
                    T.where(i_0 * 32 + i_1 < 100)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
    ''')
    check(sch, mod)


def test_fuse_split_parallel_vectorize() -> None:
    mod = module(EWISE)
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("B"))
    fused = sch.fuse(i, j)
    outer, inner = sch.split(fused, [None, 16])
    sch.parallel(outer)
    sch.vectorize(inner)
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((100, 64), "float32"), B: T.Buffer((100, 64), "float32")):
            # with T.block("root"):
            for i_j_fused_0 in T.parallel(400):
                for i_j_fused_1 in T.vectorized(16):
                    with T.block("B"):
                        vi = T.axis.spatial(100, (i_j_fused_0 * 16 + i_j_fused_1) // 64)
                        vj = T.axis.spatial(64, (i_j_fused_0 * 16 + i_j_fused_1) % 64)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
    ''')
    check(sch, mod)


def test_reorder_unroll_annotate() -> None:
    mod = module(MATMUL)
    sch = Schedule(mod)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.reorder(k, i)
    sch.unroll(j)
    sch.annotate(k, "pragma_auto_unroll_max_step", 16)
    sch.annotate(block, "meta_schedule.tiling_structure", "SSRSRS")
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for k in T.serial(128, annotations={"pragma_auto_unroll_max_step": 16}):
                for j in T.unroll(128):
                    for i in range(128):
                        with T.block("C"):
                            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                            T.reads(A[vi, vk], B[vk, vj])
                            T.writes(C[vi, vj])
                            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                            with T.init():
                                C[vi, vj] = T.float32(0.0)
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    ''')
    check(sch, mod)
    sch.unannotate(k, "pragma_auto_unroll_max_step")
    assert "annotations" not in sch.mod["main"].script()


def test_tiled_matmul_and_trace() -> None:
    mod = module(MATMUL)
    sch = Schedule(mod)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 32])
    j0, j1 = sch.split(j, [5, 26])
    sch.reorder(i0, j0, k, i1, j1)
    tile = sch.fuse(i0, j0)
    sch.parallel(tile)
    sch.vectorize(j1)
    assert str(sch.trace) == textwrap.dedent('''\
        # from tvmlite import tir
        def apply_trace(sch: tir.Schedule) -> None:
          b0 = sch.get_block(name="C", func_name="main")
          l1, l2, l3 = sch.get_loops(block=b0)
          l4, l5 = sch.split(loop=l1, factors=[None, 32], preserve_unit_iters=True, disable_predication=False)
          l6, l7 = sch.split(loop=l2, factors=[5, 26], preserve_unit_iters=True, disable_predication=False)
          sch.reorder(l4, l6, l3, l5, l7)
          l8 = sch.fuse(l4, l6, preserve_unit_iters=True)
          sch.parallel(loop=l8)
          sch.vectorize(loop=l7)''')
    assert "T.where(i_0_j_0_fused % 5 * 26 + j_1 < 128)" in sch.mod["main"].script()
    check(sch, mod)


def test_split_infers_symbolic_outer_extent() -> None:
    text = '''
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)
'''
    sch = Schedule(module(text))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 8])
    out = sch.mod["main"].script()
    assert "for i_0, i_1 in T.grid((n + T.int64(7)) // T.int64(8), T.int64(8)):" in out
    assert "T.where(i_0 * T.int64(8) + i_1 < n)" in out


@pytest.mark.parametrize("factors, message", [
    ([None, None], "at most one factor may be None"),
    ([0, None], "positive integers"),
    ([4, 4], "multiply to 16, less than the extent 100"),
    ([7], "at least two factors"),
])
def test_split_refusals(factors: list, message: str) -> None:
    sch = Schedule(module(EWISE))
    i, _ = sch.get_loops(sch.get_block("B"))
    before = sch.mod
    with pytest.raises(ScheduleError, match=message):
        sch.split(i, factors)
    assert sch.mod is before
    assert len(sch.trace) == 2  # the refused split is not recorded


def test_parallel_and_vectorize_refuse_reduction_loops() -> None:
    sch = Schedule(module(MATMUL))
    _, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="parallel: the loop 'k' is bound to the reduction iterator 'vk' of block 'C'"):
        sch.parallel(k)
    with pytest.raises(ScheduleError, match="vectorize: .*only loops over data-parallel iterators can be vectorized"):
        sch.vectorize(k)


def test_fuse_of_int32_and_int64_loops_uses_the_wider_dtype() -> None:
    """The fused variable is int64 and the int32 loop variable is recovered with a cast, so no
    arithmetic mixes int32 and int64 (the text re-parses equal and the numbers stay)."""
    mod = module('''
        @T.prim_func
        def main(A: T.Buffer((3, T.int64(8)), "float32"), B: T.Buffer((3, T.int64(8)), "float32")):
            for i, j in T.grid(3, T.int64(8)):
                with T.block("B"):
                    vi = T.axis.spatial(3, i)
                    vj = T.axis.spatial(T.int64(8), j)
                    B[vi, vj] = A[vi, vj] + T.float32(1.0)
    ''')
    sch = Schedule(mod)
    fused = sch.fuse(*sch.get_loops(sch.get_block("B")))
    assert sch.mod["main"].body.block.body.loop_var.dtype == "int64"
    text = sch.mod["main"].script()
    assert "for i_j_fused in range(T.int64(24)):" in text
    assert "vi = T.axis.spatial(3, T.Cast(\"int32\", i_j_fused // T.int64(8)))" in text
    check(sch, mod)
    assert fused is not None


def test_fuse_below_unit_loops_takes_no_modulo() -> None:
    """Loops of extent 1 outside the first other loop leave its quotient below its extent: it is
    bound as ``fused // 8``, not ``fused // 8 % 4`` (as TVM's bound-aware simplifier gives), so
    blocks compute_at'd under the fused loop bind it alike."""
    mod = module('''
        @T.prim_func
        def main(A: T.Buffer((1, 4, 8), "float32"), B: T.Buffer((1, 4, 8), "float32")):
            for n, i, j in T.grid(1, 4, 8):
                with T.block("B"):
                    vn, vi, vj = T.axis.remap("SSS", [n, i, j])
                    B[vn, vi, vj] = A[vn, vi, vj] * T.float32(2)
    ''')
    sch = Schedule(mod)
    sch.fuse(*sch.get_loops(sch.get_block("B")))
    expect(sch, '''
        # from tvmlite.script import tir as T

        @T.prim_func
        def main(A: T.Buffer((1, 4, 8), "float32"), B: T.Buffer((1, 4, 8), "float32")):
            # with T.block("root"):
            for n_i_j_fused in range(32):
                with T.block("B"):
                    vn = T.axis.spatial(1, n_i_j_fused // 32)
                    vi = T.axis.spatial(4, n_i_j_fused // 8)
                    vj = T.axis.spatial(8, n_i_j_fused % 8)
                    T.reads(A[vn, vi, vj])
                    T.writes(B[vn, vi, vj])
                    B[vn, vi, vj] = A[vn, vi, vj] * T.float32(2.0)
    ''')
    check(sch, mod)


def test_fuse_and_reorder_refusals() -> None:
    sch = Schedule(module(MATMUL))
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="fuse: the loops must be perfectly nested"):
        sch.fuse(i, k)
    with pytest.raises(ScheduleError, match="given twice"):
        sch.reorder(i, i)
    sch.split(i, [None, 16])
    with pytest.raises(ScheduleError, match="no longer exists"):
        sch.parallel(i)  # the loop was replaced by the split


def test_reorder_refuses_loops_of_different_nests() -> None:
    text = '''
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for j in range(16):
        with T.block("C"):
            vj = T.axis.spatial(16, j)
            C[vj] = B[vj]
'''
    sch = Schedule(module(text))
    (i,) = sch.get_loops(sch.get_block("B"))
    (j,) = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="not one nest"):
        sch.reorder(j, i)


def test_lookup_errors() -> None:
    sch = Schedule(module(MATMUL))
    with pytest.raises(ScheduleError, match="no block named 'D' in 'main' \\(blocks: root, C\\)"):
        sch.get_block("D")
    with pytest.raises(ScheduleError, match="no PrimFunc named 'f'"):
        sch.get_block("C", func_name="f")
    with pytest.raises(ScheduleError, match="must be a LoopRV"):
        sch.parallel(sch.get_block("C"))  # type: ignore[arg-type]


def test_schedule_never_changes_its_input_module() -> None:
    mod = module(EWISE)
    text = mod.script()
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, j)
    assert mod.script() == text
    assert sch.mod.script() != text
    assert isinstance(tvmlite.tir.Schedule, type)
