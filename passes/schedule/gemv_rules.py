"""Default-schedule rules for matmuls with few rows (batch-1 and small-batch linear layers,
``x @ W`` with W stored [in, out], as FoldConstant leaves a constant ``permute_dims(W)``).

The matmul rule's register tile copies a K x NR panel of B per task so that many row blocks can
reuse it; with a single row block nothing reuses the copy, which then doubles the traffic of a
kernel that streams B once.

- ``gemv_rule`` (one row: a matrix-vector product): each task keeps a block of GEMV_COLUMNS
  outputs in vector registers and walks k, each step one broadcast of ``x[k]`` and a few vector
  multiply-adds on the row of W, which is already contiguous along the outputs; the epilogue
  (bias, relu) folded into the write-back; the column blocks in parallel once W passes
  PARALLEL_MIN_BYTES, so that each core streams its share of W from its own L2.
- ``few_rows_rule`` (2 to MATMUL_ROW_BLOCK rows): the matmul rule's MR x NR register tile, tasks
  of one column panel in parallel, B read in place."""
from __future__ import annotations

from ...ir.arith import as_const_int
from .schedule import Schedule
from .state import BlockRV
from .rule_support import (MATMUL_COLS, MATMUL_ROW_BLOCK, MATMUL_ROWS, elem_bytes, local_tile, is_reduction,
                           loop_extent, Matmul, output_dtype, parallelize, vector_lanes, vectorize_tile)

__all__ = ["gemv_rule", "few_rows_rule", "GEMV_COLUMNS"]

# Outputs a task keeps in registers: 8 AVX-512 vectors of float32, enough independent sums to hide
# the multiply-add latency, and 2 tasks for a 256-wide layer.
GEMV_COLUMNS = 128


def gemv_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """``C[0, j] += A[0, k] * B[k, j]`` (one row, B contiguous along j): blocks of columns
    accumulated in registers over the whole of k, no copy of B."""
    if not is_reduction(sch.get(block_rv)):
        return False
    mm = Matmul(sch, block_rv)
    if not mm.b_along_j or mm.m != 1 or mm.n is None or any(loop_extent(sch, lp) != 1 for lp in mm.batch):
        return False  # (unit batch loops, as the zero pipeline leaves them, stay outside)
    dtype = output_dtype(mm.block)
    lanes = vector_lanes(dtype)
    cols = next((c for c in (GEMV_COLUMNS, GEMV_COLUMNS // 2, GEMV_COLUMNS // 4, lanes) if mm.n % c == 0), None)
    if cols is None:  # the widest block of quarter-vectors that divides n, else a partial last block:
        # resnet18's 1000 outputs in 10 blocks of 100 (6 vectors and a quarter), not 25 of 40: each task
        # reads 400 contiguous bytes of every row of W, not 160 across three or four lines that the
        # next task reads too (inside the model, AMD EPYC znver4: 187 -> 143 us at 1 thread, 102 -> 92
        # us at 2). A partial block of 128 (predicated) ran 2-4x slower.
        step = max(lanes // 4, 1)
        cols = max((c for c in range(step, GEMV_COLUMNS + 1, step) if mm.n % c == 0), default=None) \
            if lanes >= 4 else None
    if cols is None:
        cols = mm.n if mm.n <= GEMV_COLUMNS else lanes  # a short layer is one block; else a partial last one
    j0, j1 = sch.split(mm.j, [None, cols])
    sch.reorder(*mm.batch, mm.i, j0, mm.k, j1)
    init, write_back = local_tile(sch, block_rv, j0, mm.k)
    sch.vectorize(j1)
    for other in (init, write_back):
        sch.vectorize(sch.get_loops(other)[-1])  # the block of columns, as the update
    # In parallel even for an L2-sized W: with the pool's workers polling, the 784 x 256 layer (800 KB)
    # takes 3.7 us on 2 threads against 7.2 us on one (a quiet 2-core machine), each core keeping
    # its half of W in its own L2 from call to call.
    parallelize(sch, [j0], mm.n * (mm.kk or 1) * elem_bytes(dtype))
    return True


def few_rows_rule(sch: Schedule, block_rv: BlockRV) -> bool:
    """``C[i, j] += A[i, k] * B[k, j]`` with at most one row block (MATMUL_ROW_BLOCK rows, a small
    batch): the matmul rule's register tile without its copy of B's panels. The copy pays off when
    several row blocks reuse a panel; with one, it only doubles the traffic of B, whose rows are
    already contiguous along the tile's columns."""
    if not is_reduction(sch.get(block_rv)):
        return False
    mm = Matmul(sch, block_rv)
    if not mm.b_along_j or mm.m is None or mm.n is None or mm.m > MATMUL_ROW_BLOCK or mm.m < 2:
        return False
    if any(loop_extent(sch, lp) != 1 for lp in mm.batch):
        return False
    if as_const_int(mm.block.body.indices[-2]) is not None:
        return False  # rows from a [seq, 1, k] operand's sequence axis: the matmul rule's form
    rows = next((r for r in (MATMUL_ROWS, 4, 2, 1) if mm.m % r == 0), 1)
    cols = next((c for c in MATMUL_COLS if mm.n % c == 0), None)
    if cols is None:
        return False
    i0, i1 = sch.split(mm.i, [None, rows])
    j0, j1 = sch.split(mm.j, [None, cols])
    sch.reorder(*mm.batch, j0, i0, mm.k, i1, j1)
    init, write_back = local_tile(sch, block_rv, i0, mm.k)
    sch.unroll(i1)
    sch.vectorize(j1)
    for other in (init, write_back):
        vectorize_tile(sch, other, i0)
    work = mm.m * mm.n * (mm.kk or 1) * elem_bytes(output_dtype(mm.block))
    parallelize(sch, [j0], work)
    return True
