"""Vision computes (``tvm.topi.vision``): ``roi_align`` (TVM's block ``compute`` reducing over a
fixed sampling grid; with adaptive sampling, a kernel whose per-ROI grid loops are built directly)
and ``roi_pool``."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..ir import tir
from ..ir.node import Map
from ..te import expr as E
from ..te.expr import Expr, as_prim
from ..te.tensor import Tensor, make_compute, reduce_axis
from ..te import tensor as T
from ..te.tensor_arith import cpp_compute
from . import nn
from .broadcast import multiply
from .math import cast
from .transform import reshape

__all__ = ["roi_align", "roi_align_kernel", "make_buffer", "roi_pool", "get_valid_counts_kernel",
           "non_max_suppression_kernel", "all_class_nms_kernel", "multibox_transform_loc",
           "soft_nms_kernel"]

Load = Callable[..., Expr]


def _i64(v: int) -> tir.IntImm:
    return tir.IntImm("int64", v)


def _box(roi: Load, scale: float, aligned: bool, dtype: str) -> tuple[Expr, Expr, Expr, Expr]:
    """The ROI's start y, start x, height and width on the feature map (at least 1 unless aligned)."""
    def at(k: int) -> Expr:
        return roi(_i64(k)) * E.const(scale, dtype) if scale != 1.0 else roi(_i64(k))

    y0, x0 = at(2), at(1)
    h, w = at(4) - y0, at(3) - x0
    if not aligned:  # the legacy ROIAlign keeps each ROI at least one pixel large
        h, w = E.binary(tir.Max, h, E.const(1.0, dtype)), E.binary(tir.Max, w, E.const(1.0, dtype))
    return y0, x0, h, w


def _over(a: Expr, n: Any, dtype: str) -> Expr:
    """``a / n``, left as ``a`` for a literal 1 (TVM's division folds away)."""
    if isinstance(n, int):
        return a if n == 1 else a / E.const(float(n), dtype)
    return a / E.cast(n, dtype)


def _bilinear(pixel: Load, y: Expr, x: Expr, height: tir.PrimExpr, width: tir.PrimExpr, dtype: str) -> Expr:
    """The feature map interpolated at ``(y, x)``: 0 beyond a pixel outside it, clamped inside."""
    outside = E.any(y < -1.0, x < -1.0, E.cast(height, dtype) < y, E.cast(width, dtype) < x)
    yc = E.binary(tir.Min, E.binary(tir.Max, y, E.const(0.0, dtype)), E.cast(E.wrap(height) - 1, dtype))
    xc = E.binary(tir.Min, E.binary(tir.Max, x, E.const(0.0, dtype)), E.cast(E.wrap(width) - 1, dtype))
    y0, x0 = as_prim(E.cast(E.floor(yc), "int64")), as_prim(E.cast(E.floor(xc), "int64"))
    ly = yc - E.cast(E.cast(E.floor(yc), "int32"), dtype)
    lx = xc - E.cast(E.cast(E.floor(xc), "int32"), dtype)
    value = None
    for dx in (0, 1):
        for dy in (0, 1):
            yi = y0 if dy == 0 else tir.Add(y0, _i64(1))
            xi = x0 if dx == 0 else tir.Add(x0, _i64(1))
            inside = E.all(tir.LE(_i64(-dy), y0), tir.LE(y0, as_prim(E.wrap(height) - (1 + dy))),
                           tir.LE(_i64(-dx), x0), tir.LE(x0, as_prim(E.wrap(width) - (1 + dx))))
            weight = (lx if dx else 1.0 - lx) * (ly if dy else 1.0 - ly)
            term = E.if_then_else(inside, weight * pixel(yi, xi), E.const(0.0, dtype))
            value = term if value is None else value + term
    return E.if_then_else(outside, E.const(0.0, dtype), value)


def _sample(data_at: Load, roi: Load, channel: Any, ph: Any, pw: Any, ry: Any, rx: Any, grid: tuple[Any, Any],
            pooled: tuple[int, int], scale: float, aligned: bool, height: tir.PrimExpr, width: tir.PrimExpr,
            dtype: str) -> Expr:
    """The bilinear sample ``(ry, rx)`` of bin ``(ph, pw)`` of an ROI."""
    y0, x0, h, w = _box(roi, scale, aligned, dtype)
    bin_h, bin_w = _over(h, pooled[0], dtype), _over(w, pooled[1], dtype)
    y = y0 + E.cast(ph, dtype) * bin_h + _over((E.cast(ry, dtype) + 0.5) * bin_h, grid[0], dtype)
    x = x0 + E.cast(pw, dtype) * bin_w + _over((E.cast(rx, dtype) + 0.5) * bin_w, grid[1], dtype)
    batch = as_prim(E.cast(roi(_i64(0)), "int64"))
    return _bilinear(lambda yi, xi: data_at(batch, channel, yi, xi), y, x, height, width, dtype)


def _layout_access(data: Any, layout: str) -> tuple[Load, tir.PrimExpr, tir.PrimExpr]:
    """``at(b, c, y, x)`` reading ``data`` in NCHW or NHWC, and its height and width."""
    if layout == "NCHW":
        return (lambda b, c, y, x: E.wrap(data[b, c, y, x])), data.shape[2], data.shape[3]
    return (lambda b, c, y, x: E.wrap(data[b, y, x, c])), data.shape[1], data.shape[2]


def roi_align(data: Tensor, rois: Tensor, pooled_size: Sequence[int], spatial_scale: float, sample_ratio: int,
              aligned: bool = False, layout: str = "NCHW", mode: str = "avg") -> Tensor:
    """ROIAlign over a fixed ``sample_ratio`` x ``sample_ratio`` grid per bin (block ``compute``)."""
    dtype = data.dtype
    at, height, width = _layout_access(data, layout)
    channels = data.shape[1] if layout == "NCHW" else data.shape[3]
    pooled = (int(pooled_size[0]), int(pooled_size[1]))
    rh = reduce_axis((0, _i64(sample_ratio)), "rh")
    rw = reduce_axis((0, _i64(sample_ratio)), "rw")

    def value(i: Any, c: Any, ph: Any, pw: Any) -> Any:
        s = _sample(at, lambda k: E.wrap(rois[i, k]), c, ph, pw, rh, rw, (sample_ratio, sample_ratio), pooled,
                    spatial_scale, aligned, height, width, dtype)
        if mode == "avg":
            return T.sum(_over(s, sample_ratio * sample_ratio, dtype), axis=[rh, rw])
        return T.max(s, axis=[rh, rw])

    shape = [rois.shape[0], channels, _i64(pooled[0]), _i64(pooled[1])]
    if layout == "NCHW":
        return make_compute(shape, value, ["i", "c", "ph", "pw"], name="compute")
    return make_compute([shape[0], shape[2], shape[3], shape[1]], lambda i, ph, pw, c: value(i, c, ph, pw),
                        ["i", "ph", "pw", "c"], name="compute")


def make_buffer(name: str, dtype: str, shape: Sequence[tir.PrimExpr], scope: str = "global") -> tir.Buffer:
    """A buffer with its own data variable."""
    return tir.Buffer(name, tir.Var(name, "handle", tir.PointerType(dtype, scope)), dtype, tuple(shape), scope=scope)


def roi_align_kernel(data: tir.Buffer, rois: tir.Buffer, out: tir.Buffer, pooled_size: Sequence[int],
                     spatial_scale: float, aligned: bool, layout: str, mode: str) -> tir.Stmt:
    """ROIAlign with TVM's adaptive sampling (``ceil(roi size / bins)`` samples per bin and axis):
    the grid depends on each ROI, so its loops are built directly, one opaque block around them."""
    dtype = data.dtype
    at, height, width = _buffer_access(data, layout)
    pooled = (int(pooled_size[0]), int(pooled_size[1]))
    acc = make_buffer("acc", dtype, (_i64(1),), "local")
    zero = (_i64(0),)
    names = ["i", "c", "ph", "pw"] if layout == "NCHW" else ["i", "ph", "pw", "c"]
    loops = [tir.Var(n, "int64") for n in names]
    pos = dict(zip(names, loops))
    i, c, ph, pw = pos["i"], pos["c"], pos["ph"], pos["pw"]

    def roi(k: tir.PrimExpr) -> Expr:
        return E.wrap(tir.BufferLoad(rois, (i, k)))

    _, _, h, w = _box(roi, spatial_scale, aligned, dtype)
    grid_h = as_prim(E.cast(E.ceil(_over(h, pooled[0], dtype)), "int64"))
    grid_w = as_prim(E.cast(E.ceil(_over(w, pooled[1], dtype)), "int64"))
    ry, rx = tir.Var("rh", "int64"), tir.Var("rw", "int64")
    s = as_prim(_sample(at, roi, c, ph, pw, ry, rx, (grid_h, grid_w), pooled, spatial_scale, aligned, height,
                        width, dtype))
    old = tir.BufferLoad(acc, zero)
    update = tir.BufferStore(acc, tir.Add(old, s) if mode == "avg" else tir.Max(old, s), zero)
    sampling = tir.For(ry, _i64(0), grid_h, tir.ForKind.SERIAL,
                       tir.For(rx, _i64(0), grid_w, tir.ForKind.SERIAL, update))
    init = tir.FloatImm(dtype, 0.0) if mode == "avg" else as_prim(E.min_value(dtype))
    result: tir.PrimExpr = old
    if mode == "avg":  # an empty grid (a zero-sized aligned ROI) averages to 0
        count = tir.Max(tir.Mul(grid_h, grid_w), _i64(1))
        result = tir.Div(old, tir.Cast(dtype, count))
    store = tir.BufferStore(out, result, tuple(loops))
    body: tir.Stmt = tir.seq([tir.BufferStore(acc, init, zero), sampling, store])
    for v, extent in reversed(list(zip(loops, out.shape))):
        body = tir.For(v, _i64(0), extent, tir.ForKind.SERIAL, body)
    block = tir.Block("roi_align", (), (), (), body, alloc_buffers=(acc,), annotations=Map())
    return tir.BlockRealize((), tir.IntImm("bool", 1), block)


def _buffer_access(buf: tir.Buffer, layout: str) -> tuple[Load, tir.PrimExpr, tir.PrimExpr]:
    """``at(b, c, y, x)`` loading from ``buf`` in NCHW or NHWC, and its height and width."""
    if layout == "NCHW":
        return (lambda b, c, y, x: E.wrap(tir.BufferLoad(buf, (b, c, y, x)))), buf.shape[2], buf.shape[3]
    return (lambda b, c, y, x: E.wrap(tir.BufferLoad(buf, (b, y, x, c)))), buf.shape[1], buf.shape[2]



# ---------------------------------------------------------------- roi_pool
def roi_pool(data: Tensor, rois: Tensor, pooled_size: Sequence[int], spatial_scale: float) -> Tensor:
    """ROIPool (NCHW): the maximum of each bin of the ROI rounded to whole pixels (0 for an empty
    bin), as TVM's two blocks ``compute`` (the masked maximum over the map) and ``compute_1``."""
    dtype = data.dtype
    height, width = data.shape[2], data.shape[3]
    pooled = (int(pooled_size[0]), int(pooled_size[1]))

    def bounds(i: Any, p: Any, axis: int) -> tuple[tir.PrimExpr, tir.PrimExpr]:
        """The bin's pixel range ``[start, end)`` along H (axis 0) or W (1), clamped to the map."""
        lo_col, hi_col = (2, 4) if axis == 0 else (1, 3)
        size = height if axis == 0 else width

        def corner(k: int) -> Expr:
            return E.cast(E.floor(rois[i, _i64(k)] * E.const(spatial_scale, dtype) + 0.5), "int64")

        start = corner(lo_col)
        extent = E.binary(tir.Max, corner(hi_col) + 1 - start, _i64(1))
        bin_size = _over(E.cast(extent, dtype), pooled[axis], dtype)
        lo = E.binary(tir.Max, E.cast(E.floor(E.cast(p, dtype) * bin_size), "int64") + start, _i64(0))
        hi = E.binary(tir.Max, E.cast(E.ceil(E.cast(E.wrap(p) + 1, dtype) * bin_size), "int64") + start, _i64(0))
        return tir.Min(as_prim(lo), size), tir.Min(as_prim(hi), size)

    rh = reduce_axis((0, height), "rh")
    rw = reduce_axis((0, width), "rw")

    def masked(i: Any, c: Any, ph: Any, pw: Any) -> Any:
        (h0, h1), (w0, w1) = bounds(i, ph, 0), bounds(i, pw, 1)
        y, x = as_prim(rh), as_prim(rw)
        inside = E.all(tir.LE(h0, y), tir.LT(y, h1), tir.LE(w0, x), tir.LT(x, w1))
        batch = as_prim(E.cast(rois[i, _i64(0)], "int64"))
        return T.max(E.if_then_else(inside, data[batch, c, rh, rw], E.const(float("-inf"), dtype)), axis=[rh, rw])

    shape = [rois.shape[0], data.shape[1], _i64(pooled[0]), _i64(pooled[1])]
    pooled_max = make_compute(shape, masked, ["i", "c", "ph", "pw"], name="compute")

    def result(i: Any, c: Any, ph: Any, pw: Any) -> Any:
        (h0, h1), (w0, w1) = bounds(i, ph, 0), bounds(i, pw, 1)
        empty = E.any(tir.LE(h1, h0), tir.LE(w1, w0))
        return E.if_then_else(empty, E.const(0.0, dtype), pooled_max[i, c, ph, pw])

    return make_compute(shape, result, ["i", "c", "ph", "pw"], name="compute")


# ---------------------------------------------------------------- get_valid_counts
def _loop(name: str, extent: tir.PrimExpr, body_of: Callable[[tir.Var], tir.Stmt],
          kind: str = tir.ForKind.SERIAL) -> tir.For:
    """``for name in range(extent): body_of(name)``."""
    v = tir.Var(name, extent.dtype)
    return tir.For(v, tir.IntImm(extent.dtype, 0), extent, kind, body_of(v))


def _opaque(name: str, body: tir.Stmt, alloc: tuple[tir.Buffer, ...] = ()) -> tir.BlockRealize:
    """One opaque block (no iterators) around ``body``, as TVM's ir_builder kernels."""
    return tir.BlockRealize((), tir.IntImm("bool", 1), tir.Block(name, (), (), (), body, alloc_buffers=alloc))


def get_valid_counts_kernel(data: tir.Buffer, valid_count: tir.Buffer, out_tensor: tir.Buffer,
                            out_indices: tir.Buffer, score_threshold: float, id_index: int,
                            score_index: int) -> tir.Stmt:
    """Per batch, the boxes whose score passes the threshold (and whose class id is not negative)
    moved to the front in their order, their count, and their indices; -1 fills the rest."""
    batch, anchors, length = data.shape
    zero = tir.IntImm("int32", 0)

    def per_batch(b: tir.Var) -> tir.Stmt:
        count = tir.BufferLoad(valid_count, (b,))

        def keep(a: tir.Var) -> tir.Stmt:
            cond = tir.GT(tir.BufferLoad(data, (b, a, _i64(score_index))), tir.FloatImm(data.dtype, score_threshold))
            if id_index >= 0:
                class_id = tir.BufferLoad(data, (b, a, _i64(id_index)))
                cond = tir.And(cond, tir.GE(class_id, tir.FloatImm(data.dtype, 0.0)))
            copy = _loop("v", length, lambda e: tir.BufferStore(out_tensor, tir.BufferLoad(data, (b, a, e)),
                                                                 (b, count, e)))
            return tir.IfThenElse(cond, tir.seq([copy, tir.BufferStore(out_indices, tir.Cast("int32", a), (b, count)),
                                                 tir.BufferStore(valid_count, tir.Add(count, tir.IntImm("int32", 1)),
                                                                 (b,))]), None)

        def fill(a: tir.Var) -> tir.Stmt:
            rest = tir.seq([_loop("v", length, lambda e: tir.BufferStore(out_tensor, tir.FloatImm(data.dtype, -1.0),
                                                                          (b, a, e))),
                            tir.BufferStore(out_indices, tir.IntImm("int32", -1), (b, a))])
            return tir.IfThenElse(tir.GE(a, tir.Cast(a.dtype, count)), rest, None)

        return tir.seq([tir.BufferStore(valid_count, zero, (b,)), _loop("v", anchors, keep), _loop("v", anchors, fill)])

    return _opaque("get_valid_counts", _loop("v", batch, per_batch, tir.ForKind.PARALLEL))


# ---------------------------------------------------------------- non_max_suppression
def _iou(box: Callable[[tir.PrimExpr, int], tir.PrimExpr], i: tir.PrimExpr, j: tir.PrimExpr, start: int,
         dtype: str) -> Expr:
    """Intersection over union of boxes ``i`` and ``j`` (corners in any order; 0 for an empty union)."""
    zero = E.const(0.0, dtype)

    def lo(b: tir.PrimExpr, k: int) -> Expr:
        return E.binary(tir.Min, box(b, start + k), box(b, start + k + 2))

    def hi(b: tir.PrimExpr, k: int) -> Expr:
        return E.binary(tir.Max, box(b, start + k), box(b, start + k + 2))

    def area(b: tir.PrimExpr) -> Expr:
        return (hi(b, 0) - lo(b, 0)) * (hi(b, 1) - lo(b, 1))

    def overlap(k: int) -> Expr:
        return E.binary(tir.Max, zero, E.binary(tir.Min, hi(i, k), hi(j, k)) - E.binary(tir.Max, lo(i, k), lo(j, k)))

    inter = overlap(1) * overlap(0)
    union = area(i) + area(j) - inter
    return E.select(union <= zero, zero, inter / union)


def _local(name: str, dtype: str = "int32") -> tir.Buffer:
    """A one-element local buffer (a scalar the kernel updates)."""
    return make_buffer(name, dtype, (_i64(1),), "local")


def non_max_suppression_kernel(data: tir.Buffer, valid_count: tir.Buffer, indices: tir.Buffer,
                               outs: Sequence[tir.Buffer], max_output_size: int, iou_threshold: float,
                               force_suppress: bool, top_k: int, coord_start: int, score_index: int, id_index: int,
                               return_indices: bool, invalid_to_bottom: bool) -> tir.Stmt:
    """Hard NMS per batch, as TVM's kernel: the valid boxes ranked by score (stable, descending; the
    first ``top_k``), each box with a positive score kept (up to ``max_output_size``) and the later
    boxes of its class (any class with ``force_suppress``) overlapping it by ``iou_threshold`` or
    more dropped (score -1). Returns the kept boxes' indices (through ``indices``) and their count,
    or the boxes themselves (the kept ones first with ``invalid_to_bottom``)."""
    batch, anchors, length = data.shape
    dtype = data.dtype
    i32, minus = (lambda v: tir.IntImm("int32", v)), tir.FloatImm(dtype, -1.0)
    order = make_buffer("out_buf", "int32", (batch, anchors))
    boxes = outs[0] if not return_indices and not invalid_to_bottom else make_buffer("out_data", dtype, data.shape)
    box_index = make_buffer("out_box_indices", "int32", (batch, anchors)) if not return_indices else outs[0]
    keep, kept, rank = _local("nkeep"), _local("num_valid_boxes"), _local("rank")
    at0 = (_i64(0),)

    def load(buf: tir.Buffer, *idx: tir.PrimExpr) -> tir.BufferLoad:
        return tir.BufferLoad(buf, tuple(idx))

    def store(buf: tir.Buffer, value: tir.PrimExpr, *idx: tir.PrimExpr) -> tir.BufferStore:
        return tir.BufferStore(buf, value, tuple(idx))

    def per_batch(b: tir.Var) -> tir.Stmt:
        count = load(valid_count, b)
        nkeep = tir.Cast("int64", load(keep, *at0))

        def score(a: tir.PrimExpr) -> tir.PrimExpr:
            return load(data, b, a, _i64(score_index))

        # rank each valid box: the boxes before it in a stable descending sort by score
        def place(j: tir.Var) -> tir.Stmt:
            def count_before(k: tir.Var) -> tir.Stmt:
                before = tir.Or(tir.GT(score(k), score(j)), tir.And(tir.EQ(score(k), score(j)), tir.LT(k, j)))
                return tir.IfThenElse(before, store(rank, tir.Add(load(rank, *at0), i32(1)), *at0), None)

            return tir.IfThenElse(tir.LT(j, tir.Cast("int64", count)), tir.seq([
                store(rank, i32(0), *at0), _loop("k", tir.Cast("int64", count), count_before),
                store(order, tir.Cast("int32", j), b, tir.Cast("int64", load(rank, *at0)))]), None)

        def gather(j: tir.Var) -> tir.Stmt:
            source = tir.Cast("int64", load(order, b, j))
            taken = tir.seq([_loop("e", length, lambda e: store(boxes, load(data, b, source, e), b, j, e)),
                             store(box_index, load(order, b, j), b, j)])
            dropped = tir.seq([_loop("e", length, lambda e: store(boxes, minus, b, j, e)),
                               store(box_index, i32(-1), b, j)])
            return tir.IfThenElse(tir.LT(j, nkeep), taken, dropped)

        def box(a: tir.PrimExpr, k: int) -> tir.PrimExpr:
            return load(boxes, b, a, _i64(k))

        def suppress(i: tir.Var) -> tir.Stmt:
            def against(j: tir.Var) -> tir.Stmt:
                same = tir.EQ(box(i, id_index), box(j, id_index))
                overlap = tir.GE(as_prim(_iou(box, i, j, coord_start, dtype)), tir.FloatImm(dtype, iou_threshold))
                drop = tir.seq([store(boxes, minus, b, j, _i64(score_index)), store(box_index, i32(-1), b, j)])
                test = overlap if force_suppress or id_index < 0 else tir.And(same, overlap)
                return tir.IfThenElse(tir.And(tir.GT(j, i), tir.GT(box(j, score_index), tir.FloatImm(dtype, 0.0))),
                                      tir.IfThenElse(test, drop, None), None)

            positive = tir.GT(box(i, score_index), tir.FloatImm(dtype, 0.0))
            if max_output_size > 0:
                positive = tir.And(positive, tir.LT(tir.Cast("int64", load(kept, *at0)), _i64(max_output_size)))
            keep_it = tir.seq([store(kept, tir.Add(load(kept, *at0), i32(1)), *at0), _loop("j", nkeep, against)])
            drop_it = tir.seq([_loop("e", length, lambda e: store(boxes, minus, b, i, e)),
                               store(box_index, i32(-1), b, i)])
            return tir.IfThenElse(positive, keep_it, drop_it)

        steps: list[tir.Stmt] = [_loop("j", anchors, place), store(keep, count, *at0)]
        if 0 < top_k:
            steps.append(tir.IfThenElse(tir.GT(nkeep, _i64(top_k)), store(keep, i32(top_k), *at0), None))
        steps += [_loop("j", anchors, gather), store(kept, i32(0), *at0), _loop("i", nkeep, suppress)]
        if return_indices:  # the kept boxes' original indices first, then -1
            total = _local("num_kept")
            n = tir.Cast("int64", load(total, *at0))
            steps += [store(total, i32(0), *at0), _loop("j", anchors, lambda j: tir.IfThenElse(
                tir.GE(load(box_index, b, j), i32(0)), tir.seq([
                    store(box_index, load(indices, b, tir.Cast("int64", load(box_index, b, j))), b, n),
                    store(total, tir.Add(load(total, *at0), i32(1)), *at0)]), None)),
                store(outs[1], load(total, *at0), b, _i64(0)),
                _loop("j", anchors, lambda j: tir.IfThenElse(tir.GE(j, n), store(box_index, i32(-1), b, j), None))]
            return tir.seq(steps), (keep, kept, rank, total)
        if invalid_to_bottom:  # the kept boxes first, then -1 rows
            total = _local("num_kept")
            n = tir.Cast("int64", load(total, *at0))
            steps += [store(total, i32(0), *at0), _loop("j", anchors, lambda j: tir.IfThenElse(
                tir.GE(box(j, score_index), tir.FloatImm(dtype, 0.0)), tir.seq([
                    _loop("e", length, lambda e: store(outs[0], load(boxes, b, j, e), b, n, e)),
                    store(total, tir.Add(load(total, *at0), i32(1)), *at0)]), None)),
                _loop("j", anchors, lambda j: tir.IfThenElse(
                    tir.GE(j, n), _loop("e", length, lambda e: store(outs[0], minus, b, j, e)), None))]
            return tir.seq(steps), (keep, kept, rank, total)
        return tir.seq(steps), (keep, kept, rank)

    b = tir.Var("b", batch.dtype)
    body, scalars = per_batch(b)
    loop = tir.For(b, _i64(0), batch, tir.ForKind.SERIAL, body)
    temps = tuple(t for t in (order, boxes, box_index) if all(t is not o for o in outs))
    return _opaque("non_max_suppression", loop, temps + scalars)


# ---------------------------------------------------------------- all_class_non_max_suppression
def all_class_nms_kernel(boxes: tir.Buffer, scores: tir.Buffer, max_out: tir.Buffer, iou_threshold: tir.Buffer,
                         score_threshold: tir.Buffer, outs: Sequence[tir.Buffer], output_format: str) -> tir.Stmt:
    """NMS per batch and class (ONNX NonMaxSuppression): each class's boxes scoring above the score
    threshold, by descending score (stable), greedily kept (at most ``max_out``) while later ones
    overlapping a kept box by ``iou_threshold`` or more are dropped. ONNX: ``(batch, class, box)``
    rows in batch and class order, zeros after them, and their total; TensorFlow: per batch the
    ``(class, box)`` pairs and scores, zeros after them, and the count."""
    batch, classes, anchors = scores.shape
    dtype = scores.dtype
    i32, i64 = (lambda v: tir.IntImm("int32", v)), _i64
    order = make_buffer("order", "int32", (anchors,))
    ranked = make_buffer("ranked_scores", dtype, (anchors,))
    rank, valid, chosen, offset = _local("rank"), _local("num_valid"), _local("num_selected"), _local("offset", "int64")
    at0 = (i64(0),)

    def load(buf: tir.Buffer, *idx: tir.PrimExpr) -> tir.BufferLoad:
        return tir.BufferLoad(buf, tuple(idx))

    def store(buf: tir.Buffer, value: tir.PrimExpr, *idx: tir.PrimExpr) -> tir.BufferStore:
        return tir.BufferStore(buf, value, tuple(idx))

    def scalar(buf: tir.Buffer) -> tir.BufferLoad:
        return load(buf, *([i64(0)] * len(buf.shape)))

    def per_class(b: tir.Var, c: tir.Var) -> tir.Stmt:
        def score(a: tir.PrimExpr) -> tir.PrimExpr:
            return load(scores, b, c, a)

        def place(j: tir.Var) -> tir.Stmt:
            def count_before(k: tir.Var) -> tir.Stmt:
                before = tir.Or(tir.GT(score(k), score(j)), tir.And(tir.EQ(score(k), score(j)), tir.LT(k, j)))
                return tir.IfThenElse(before, store(rank, tir.Add(load(rank, *at0), i32(1)), *at0), None)

            where = tir.Cast("int64", load(rank, *at0))
            return tir.seq([store(rank, i32(0), *at0), _loop("k", anchors, count_before),
                            store(order, tir.Cast("int32", j), where), store(ranked, score(j), where),
                            tir.IfThenElse(tir.GT(score(j), scalar(score_threshold)),
                                           store(valid, tir.Add(load(valid, *at0), i32(1)), *at0), None)])

        def box(slot: tir.PrimExpr, k: int) -> tir.PrimExpr:
            return load(boxes, b, tir.Cast("int64", load(order, slot)), i64(k))

        n_valid = tir.Cast("int64", load(valid, *at0))
        n_chosen = load(chosen, *at0)

        def select(i: tir.Var) -> tir.Stmt:
            def against(j: tir.Var) -> tir.Stmt:
                overlap = tir.GE(as_prim(_iou(box, i, j, 0, boxes.dtype)), scalar(iou_threshold))
                return tir.IfThenElse(tir.And(tir.GT(j, i), tir.And(tir.GT(load(ranked, j), tir.FloatImm(dtype, 0.0)),
                                                                    overlap)),
                                      store(ranked, tir.FloatImm(dtype, -1.0), j), None)

            slot = tir.Add(load(offset, *at0), tir.Cast("int64", n_chosen))
            box_index = tir.Cast("int64", load(order, i))
            if output_format == "onnx":
                record = [store(outs[0], tir.Cast("int64", b), slot, i64(0)),
                          store(outs[0], tir.Cast("int64", c), slot, i64(1)), store(outs[0], box_index, slot, i64(2))]
            else:
                record = [store(outs[0], tir.Cast("int64", c), b, slot, i64(0)),
                          store(outs[0], box_index, b, slot, i64(1)), store(outs[1], load(ranked, i), b, slot)]
            room = tir.LT(tir.Cast("int64", n_chosen), scalar(max_out))
            return tir.IfThenElse(tir.And(tir.GT(load(ranked, i), tir.FloatImm(dtype, -1.0)), room), tir.seq([
                *record, store(chosen, tir.Add(n_chosen, i32(1)), *at0), _loop("j", n_valid, against)]), None)

        return tir.seq([store(valid, i32(0), *at0), _loop("j", anchors, place), store(chosen, i32(0), *at0),
                        _loop("i", n_valid, select),
                        store(offset, tir.Add(load(offset, *at0), tir.Cast("int64", n_chosen)), *at0)])

    zero_fill = [_zero(buf) for buf in outs]
    if output_format == "onnx":
        body = tir.seq([*zero_fill, store(offset, i64(0), *at0),
                        _loop("b", batch, lambda b: _loop("c", classes, lambda c: per_class(b, c))),
                        store(outs[1], load(offset, *at0), i64(0))])
    else:
        body = tir.seq([*zero_fill, _loop("b", batch, lambda b: tir.seq([
            store(offset, i64(0), *at0), _loop("c", classes, lambda c: per_class(b, c)),
            store(outs[2], load(offset, *at0), b)]))])
    return _opaque("all_class_nms", body, (order, ranked, rank, valid, chosen, offset))


def _zero(buf: tir.Buffer) -> tir.Stmt:
    """Loops storing 0 to every element of ``buf``."""
    def nest(k: int, idx: list[tir.PrimExpr]) -> tir.Stmt:
        if k == len(buf.shape):
            zero = tir.FloatImm(buf.dtype, 0.0) if "float" in buf.dtype else tir.IntImm(buf.dtype, 0)
            return tir.BufferStore(buf, zero, tuple(idx))
        return _loop("z", buf.shape[k], lambda v: nest(k + 1, idx + [v]))

    return nest(0, [])


# ---------------------------------------------------------------- multibox_transform_loc
def multibox_transform_loc(cls_pred: Tensor, loc_pred: Tensor, anchor: Tensor, clip: bool, threshold: float,
                           variances: Sequence[float], keep_background: bool, apply_softmax: bool) -> list[Tensor]:
    """SSD / TFLite box decoding, as TVM's chain: ``T_reshape`` of the encodings, block
    ``multibox_boxes`` (``ymin, xmin, ymax, xmax`` from the anchors' ``left, top, right, bottom``),
    the class scores' softmax, the threshold mask (``T_greater_equal``, ``compute``, ``T_multiply``)
    and, without the background, ``multibox_scores_bg``."""
    dtype = cls_pred.dtype
    batch, _, anchors = cls_pred.shape
    loc = reshape(loc_pred, [batch, anchors, _i64(4)])
    vx, vy, vw, vh = (float(v) for v in variances)

    def scaled(v: Expr, factor: float) -> Expr:
        return v if factor == 1.0 else v * E.const(factor, dtype)

    def decode(b: Any, a: Any, k: Any) -> Expr:
        def corner(j: int) -> Expr:
            return E.wrap(anchor[_i64(0), a, _i64(j)])

        def enc(j: int) -> Expr:
            return E.wrap(loc[b, a, _i64(j)])

        h, w = corner(3) - corner(1), corner(2) - corner(0)
        cy = scaled(enc(1), vy) * h + (corner(1) + corner(3)) * 0.5
        cx = scaled(enc(0), vx) * w + (corner(0) + corner(2)) * 0.5
        half_h = E.const(0.5, dtype) * E.exp(scaled(enc(3), vh)) * h
        half_w = E.const(0.5, dtype) * E.exp(scaled(enc(2), vw)) * w
        sides = [cy - half_h, cx - half_w, cy + half_h, cx + half_w]
        if clip:
            sides = [E.binary(tir.Max, E.const(0.0, dtype), E.binary(tir.Min, E.const(1.0, dtype), s)) for s in sides]
        kk = as_prim(k)
        return E.select(tir.EQ(kk, _i64(0)), sides[0], E.select(tir.EQ(kk, _i64(1)), sides[1], E.select(
            tir.EQ(kk, _i64(2)), sides[2], sides[3])))

    boxes = make_compute([batch, anchors, _i64(4)], decode, ["b", "a", "k"], name="multibox_boxes")
    scores = nn.softmax(cls_pred, 1) if apply_softmax else cls_pred
    mask = cast(_at_least(scores, threshold), dtype)
    scores = multiply(scores, mask)
    if not keep_background:
        kept = scores
        scores = make_compute(list(cls_pred.shape), lambda b, c, n: E.if_then_else(
            tir.EQ(as_prim(c), _i64(0)), E.const(0.0, dtype), kept[b, c, n]), ["b", "c", "n"],
            name="multibox_scores_bg")
    return [boxes, scores]


def _at_least(scores: Tensor, threshold: float) -> Tensor:
    """``threshold <= scores`` (block ``T_greater_equal``, the threshold on the left as TVM's)."""
    return cpp_compute(list(scores.shape), lambda ax: E.const(threshold, scores.dtype) <= scores(*ax),
                       "T_greater_equal", "broadcast")


def soft_nms_kernel(data: tir.Buffer, valid_count: tir.Buffer, indices: tir.Buffer, outs: Sequence[tir.Buffer],
                    max_output_size: int, iou_threshold: float, force_suppress: bool, top_k: int, coord_start: int,
                    score_index: int, id_index: int, soft_nms_sigma: float, score_threshold: float) -> tir.Stmt:
    """Soft-NMS per batch, as TVM's kernel: the valid boxes ranked by score (the first ``top_k``);
    repeatedly the best remaining box above ``score_threshold`` moves to the next kept slot, the
    later boxes of its class overlapping it by ``iou_threshold`` or more are dropped and the others'
    scores decay by ``exp(-iou^2 / (2 sigma))`` (dropped once at or below the threshold). Writes the
    decayed boxes (kept ones first, -1 rows after them) and, when asked, the kept boxes' indices
    (through ``indices``) and their count."""
    batch, anchors, length = data.shape
    dtype = data.dtype
    i32, minus = (lambda v: tir.IntImm("int32", v)), tir.FloatImm(dtype, -1.0)
    thr = tir.FloatImm(dtype, score_threshold)
    order = make_buffer("out_buf", "int32", (batch, anchors))
    boxes = outs[0]
    box_index = outs[1] if len(outs) > 1 else make_buffer("out_box_indices", "int32", (batch, anchors))
    keep, kept, rank = _local("nkeep"), _local("num_kept"), _local("rank")
    best, best_score, swap, swap_value = _local("best"), _local("best_score", dtype), _local("swap"), \
        _local("swap_value", dtype)
    at0 = (_i64(0),)

    def load(buf: tir.Buffer, *idx: tir.PrimExpr) -> tir.BufferLoad:
        return tir.BufferLoad(buf, tuple(idx))

    def store(buf: tir.Buffer, value: tir.PrimExpr, *idx: tir.PrimExpr) -> tir.BufferStore:
        return tir.BufferStore(buf, value, tuple(idx))

    def per_batch(b: tir.Var) -> tir.Stmt:
        count = load(valid_count, b)
        nkeep = tir.Cast("int64", load(keep, *at0))
        n_kept = tir.Cast("int64", load(kept, *at0))

        def score(a: tir.PrimExpr) -> tir.PrimExpr:
            return load(data, b, a, _i64(score_index))

        def place(j: tir.Var) -> tir.Stmt:
            def count_before(k: tir.Var) -> tir.Stmt:
                before = tir.Or(tir.GT(score(k), score(j)), tir.And(tir.EQ(score(k), score(j)), tir.LT(k, j)))
                return tir.IfThenElse(before, store(rank, tir.Add(load(rank, *at0), i32(1)), *at0), None)

            return tir.IfThenElse(tir.LT(j, tir.Cast("int64", count)), tir.seq([
                store(rank, i32(0), *at0), _loop("k", tir.Cast("int64", count), count_before),
                store(order, tir.Cast("int32", j), b, tir.Cast("int64", load(rank, *at0)))]), None)

        def gather(j: tir.Var) -> tir.Stmt:
            source = tir.Cast("int64", load(order, b, j))
            taken = tir.seq([_loop("e", length, lambda e: store(boxes, load(data, b, source, e), b, j, e)),
                             store(box_index, load(order, b, j), b, j)])
            dropped = tir.seq([_loop("e", length, lambda e: store(boxes, minus, b, j, e)),
                               store(box_index, i32(-1), b, j)])
            return tir.IfThenElse(tir.LT(j, nkeep), taken, dropped)

        def box(a: tir.PrimExpr, k: int) -> tir.PrimExpr:
            return load(boxes, b, a, _i64(k))

        def alive(j: tir.PrimExpr) -> tir.PrimExpr:
            return tir.And(tir.GE(load(box_index, b, j), i32(0)), tir.GT(box(j, score_index), thr))

        def step(_: tir.Var) -> tir.Stmt:
            def find(j: tir.Var) -> tir.Stmt:
                better = tir.And(tir.And(tir.GE(j, n_kept), alive(j)),
                                 tir.GT(box(j, score_index), load(best_score, *at0)))
                return tir.IfThenElse(better, tir.seq([store(best, tir.Cast("int32", j), *at0),
                                                       store(best_score, box(j, score_index), *at0)]), None)

            top = tir.Cast("int64", load(best, *at0))
            exchange = tir.seq([
                store(swap, load(box_index, b, n_kept), *at0), store(box_index, load(box_index, b, top), b, n_kept),
                store(box_index, load(swap, *at0), b, top),
                _loop("e", length, lambda e: tir.seq([
                    store(swap_value, load(boxes, b, n_kept, e), *at0),
                    store(boxes, load(boxes, b, top, e), b, n_kept, e),
                    store(boxes, load(swap_value, *at0), b, top, e)]))])

            def against(j: tir.Var) -> tir.Stmt:
                overlap = as_prim(_iou(box, n_kept, j, coord_start, dtype))
                decayed = tir.Mul(box(j, score_index), as_prim(E.exp(E.const(-0.5 / soft_nms_sigma, dtype) *
                                                                     E.wrap(overlap) * E.wrap(overlap))))
                act = tir.seq([
                    tir.IfThenElse(tir.GE(overlap, tir.FloatImm(dtype, iou_threshold)), store(box_index, i32(-1), b, j),
                                   None),
                    tir.IfThenElse(tir.LT(overlap, tir.FloatImm(dtype, iou_threshold)), tir.seq([
                        store(boxes, decayed, b, j, _i64(score_index)),
                        tir.IfThenElse(tir.LE(box(j, score_index), thr), store(box_index, i32(-1), b, j), None)]),
                        None)])
                if not (force_suppress or id_index < 0):
                    act = tir.IfThenElse(tir.EQ(box(n_kept, id_index), box(j, id_index)), act, None)
                return tir.IfThenElse(tir.And(tir.GT(j, n_kept), alive(j)), act, None)

            found = tir.seq([tir.IfThenElse(tir.NE(top, n_kept), exchange, None), _loop("j", nkeep, against),
                             store(kept, tir.Add(load(kept, *at0), i32(1)), *at0)])
            body = tir.seq([store(best, i32(-1), *at0), store(best_score, thr, *at0), _loop("j", nkeep, find),
                            tir.IfThenElse(tir.GE(top, _i64(0)), found, None)])
            if max_output_size > 0:
                body = tir.IfThenElse(tir.LT(n_kept, _i64(max_output_size)), body, None)
            return body

        def finish(j: tir.Var) -> tir.Stmt:
            tail = tir.IfThenElse(tir.GE(j, n_kept), tir.seq([
                _loop("e", length, lambda e: store(boxes, minus, b, j, e)), store(box_index, i32(-1), b, j)]), None)
            if len(outs) == 1:
                return tail
            return tir.seq([tir.IfThenElse(tir.LT(j, n_kept), store(
                box_index, load(indices, b, tir.Cast("int64", load(box_index, b, j))), b, j), None), tail])

        steps: list[tir.Stmt] = [_loop("j", anchors, place), store(keep, count, *at0)]
        if 0 < top_k:
            steps.append(tir.IfThenElse(tir.GT(nkeep, _i64(top_k)), store(keep, i32(top_k), *at0), None))
        steps += [_loop("j", anchors, gather), store(kept, i32(0), *at0), _loop("i", nkeep, step)]
        if len(outs) > 1:
            steps.append(store(outs[2], load(kept, *at0), b, _i64(0)))
        steps.append(_loop("j", anchors, finish))
        return tir.seq(steps)

    loop = _loop("b", batch, per_batch)
    temps = tuple(t for t in (order, box_index) if all(t is not o for o in outs))
    return _opaque("non_max_suppression", loop, temps + (keep, kept, rank, best, best_score, swap, swap_value))
