"""Image computes (``tvm.topi.image``): ``resize`` over the H/W (or D/H/W) axes of a layout, as
TVM's block ``resize`` computes it (source coordinates in float32, indices clamped to the image),
``affine_grid`` and ``grid_sample``."""
from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from ..ir import tir
from ..ir.arith import as_const_int
from ..te import expr as E
from ..te.expr import Expr, ExprLike, as_prim
from ..te.tensor import Tensor, compute, make_compute

__all__ = ["resize", "resize_axes", "affine_grid", "grid_sample", "COORDINATE_MODES", "ROUNDING_METHODS",
           "RESIZE_METHODS", "GRID_METHODS", "PADDING_MODES"]

COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
                    "tf_crop_and_resize")
ROUNDING_METHODS = ("", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
RESIZE_METHODS = ("nearest_neighbor", "linear", "cubic")
_EPSILON = 1e-5  # TVM nudges floor/ceil rounding by it, so an exact integer coordinate stays put


def _clamp(i: tir.PrimExpr, size: tir.PrimExpr) -> tir.PrimExpr:
    """``max(min(i, size - 1), 0)``: an index kept inside an axis of ``size``."""
    last = as_prim(E.wrap(size) - 1)
    return tir.Max(tir.Min(i, last), tir.IntImm(i.dtype, 0))


def _float(v: ExprLike) -> Expr:
    """``v`` as float32 (the dtype TVM computes coordinates and values in)."""
    return E.cast(v, "float32")


def _static_greater_than_one(size: tir.PrimExpr) -> bool | None:
    """Whether a static size exceeds 1 (None for a symbolic one)."""
    n = as_const_int(size)
    return None if n is None else n > 1


def _f32(v: float) -> Expr:
    """A float32 literal of ``v`` rounded to float32 (TVM folds float32 constants in float32)."""
    return E.const(float(np.float32(v)))


def _ratio(num: tir.PrimExpr, den: tir.PrimExpr) -> Expr:
    """``num / den`` in float32, folded in float32 when both are static."""
    a, b = as_const_int(num), as_const_int(den)
    if a is not None and b is not None and b != 0:
        return _f32(np.float32(a) / np.float32(b))
    return _float(num) / _float(den)


def _source_coordinate(x: Any, in_size: tir.PrimExpr, out_size: tir.PrimExpr, mode: str,
                       start: float, end: float) -> Expr:
    """The input coordinate output index ``x`` samples along one axis (float32)."""
    fx = _float(x)
    one = tir.IntImm(out_size.dtype, 1)
    big = _static_greater_than_one(out_size)

    def beyond_one_pixel(value: Any, otherwise: Any) -> Any:
        if big is None:
            return E.if_then_else(tir.LT(one, out_size), value, otherwise)
        return value if big else otherwise

    in_last, out_last = as_prim(E.wrap(in_size) - 1), as_prim(E.wrap(out_size) - 1)
    if mode == "align_corners":
        # TVM divides by zero for a one-pixel output; PyTorch samples the first pixel there.
        return beyond_one_pixel(_ratio(in_last, out_last) * fx if big is not False else None, E.const(0.0))
    scale = _ratio(in_size, out_size)
    if mode == "asymmetric":
        return scale * fx
    if mode == "half_pixel":
        return (fx + 0.5) * scale - 0.5
    if mode == "tf_half_pixel_for_nn":
        return (fx + 0.5) * scale
    if mode == "pytorch_half_pixel":
        return beyond_one_pixel((fx + 0.5) * scale - 0.5, E.const(0.0))
    # tf_crop_and_resize: the output spans [start, end] of the image (fractions of its extent)
    last = as_const_int(in_last)
    if last is not None:
        first, extent = _f32(np.float32(start) * np.float32(last)), _f32(last)
        middle = _f32(np.float32(0.5) * (np.float32(start) + np.float32(end)) * np.float32(last))
    else:
        first, extent = E.const(start) * _float(in_last), _float(in_last)
        middle = E.const(0.5 * (start + end)) * _float(in_last)
    spread = fx * _f32(np.float32(end) - np.float32(start)) * extent
    if as_const_int(out_last) != 1:  # TVM's division folds away for a two-pixel output
        spread = spread / _float(out_last)
    spread = first + spread if big is not False else None
    return beyond_one_pixel(spread, middle)


def _nearest_index(c: Expr, rounding: str) -> Expr:
    """The integer coordinate ``c`` rounds to (float32)."""
    if rounding == "round":
        return E.round(c)
    if rounding == "round_prefer_floor":
        return E.ceil(c - 0.5)
    if rounding == "round_prefer_ceil":
        return E.floor(c + 0.5)
    if rounding == "floor":
        return E.floor(c + _EPSILON)
    return E.ceil(c - _EPSILON)


def _int_div_factor(in_size: tir.PrimExpr, out_size: tir.PrimExpr) -> int | None:
    """The integer upscale factor of static sizes (an asymmetric floor lookup is then ``x // f``)."""
    a, b = as_const_int(in_size), as_const_int(out_size)
    if a is None or b is None or a <= 0 or b % a != 0:
        return None
    return b // a


def _cubic_weights(t: Expr, alpha: float) -> list[Expr]:
    """Keys' cubic convolution weights of the four taps around a fraction ``t`` in [0, 1)."""
    t2 = t * t
    t3 = t2 * t
    return [E.const(alpha) * (t3 - 2.0 * t2 + t),
            E.const(alpha + 2.0) * t3 - E.const(alpha + 3.0) * t2 + 1.0,
            E.const(-(alpha + 2.0)) * t3 + E.const(2.0 * alpha + 3.0) * t2 - E.const(alpha) * t,
            E.const(-alpha) * t3 + E.const(alpha) * t2]


def _offset(i: tir.PrimExpr, k: int) -> tir.PrimExpr:
    """``i + k`` (``i - 1`` for -1, ``i`` for 0), as TVM writes a cubic tap."""
    if k == 0:
        return i
    return tir.Sub(i, tir.IntImm(i.dtype, -k)) if k < 0 else tir.Add(i, tir.IntImm(i.dtype, k))


def _outside(base: tir.PrimExpr, k: int, size: tir.PrimExpr) -> tir.PrimExpr:
    """Whether tap ``base + k`` lies outside an axis of ``size`` (``base < -k or size - 1 - k < base``)."""
    return tir.Or(tir.LT(base, tir.IntImm(base.dtype, -k)), tir.LT(as_prim(E.wrap(size) - (1 + k)), base))


def resize_axes(layout: str, spatial: str) -> list[int]:
    """The positions of the ``spatial`` axes (``"HW"``, ``"DHW"``) in ``layout`` (``"NCHW4c"``)."""
    letters = [ch for ch in layout if ch.isalpha()]
    return [letters.index(ch) for ch in spatial]


def resize(data: Tensor, size: Sequence[ExprLike], layout: str, spatial: str, method: str = "linear",
           coordinate_transformation_mode: str = "half_pixel", rounding_method: str = "",
           roi: Sequence[float] = (), cubic_alpha: float = -0.75, cubic_exclude: int = 0,
           extrapolation_value: float = 0.0, out_dtype: str | None = None) -> Tensor:
    """Resize the ``spatial`` axes of ``data`` to ``size`` (block ``resize``)."""
    axes = resize_axes(layout, spatial)
    nd = len(axes)
    in_sizes = [data.shape[a] for a in axes]
    out_shape = list(data.shape)
    for a, s in zip(axes, size):
        out_shape[a] = as_prim(s) if not isinstance(s, int) else tir.IntImm("int64", s)
    out_sizes = [out_shape[a] for a in axes]
    mode = coordinate_transformation_mode
    starts = list(roi[:nd]) if roi else [0.0] * nd
    ends = list(roi[nd:2 * nd]) if roi else [0.0] * nd
    if nd == 3:  # TVM's resize3d reads its roi from the W axis inwards: (w, h, d) starts, then ends
        starts, ends = starts[::-1], ends[::-1]
    rounding = rounding_method or ("round" if mode == "align_corners" else "floor")
    dtype = out_dtype or data.dtype

    def pixel(idx: list[Any], spatial_idx: Sequence[tir.PrimExpr]) -> Expr:
        full = list(idx)
        for a, i in zip(axes, spatial_idx):
            full[a] = i
        return _float(data[tuple(full)])

    def fcompute(*idx: Any) -> Expr:
        idx = list(idx)
        coords = [_source_coordinate(idx[a], in_sizes[k], out_sizes[k], mode, starts[k], ends[k])
                  for k, a in enumerate(axes)]
        if method == "nearest_neighbor":
            where = []
            for k, a in enumerate(axes):
                factor = _int_div_factor(in_sizes[k], out_sizes[k])
                if mode == "asymmetric" and rounding == "floor" and factor is not None:
                    i = as_prim(E.truncdiv(idx[a], tir.IntImm(as_prim(idx[a]).dtype, factor)))
                else:
                    i = tir.Cast("int64", as_prim(_nearest_index(coords[k], rounding)))
                where.append(_clamp(i, in_sizes[k]))
            value = pixel(idx, where)
        elif method == "linear":
            lows = [tir.Cast("int64", as_prim(E.floor(c))) for c in coords]
            fracs = [c - _float(E.cast(E.floor(c), "int32")) for c in coords]

            def lerp(k: int, chosen: list[tir.PrimExpr]) -> Expr:
                if k == nd:
                    return pixel(idx, chosen)
                lo = _clamp(lows[k], in_sizes[k])
                hi = _clamp(as_prim(E.wrap(lows[k]) + tir.IntImm("int64", 1)), in_sizes[k])
                return lerp(k + 1, chosen + [lo]) * (1.0 - fracs[k]) + lerp(k + 1, chosen + [hi]) * fracs[k]

            # the last axis is interpolated first (innermost), as TVM's resize does
            value = lerp(0, [])
        else:
            floors = [E.floor(c) for c in coords]
            bases = [tir.Cast("int64", as_prim(f)) for f in floors]
            weights = []
            for k in range(nd):
                w = _cubic_weights(coords[k] - floors[k], cubic_alpha)
                if cubic_exclude:  # taps outside the image get no weight; the rest are renormalised
                    w = [E.if_then_else(_outside(bases[k], j - 1, in_sizes[k]), E.const(0.0), wj)
                         for j, wj in enumerate(w)]
                    total = w[0] + w[1] + w[2] + w[3]
                    w = [wj / total for wj in w]
                weights.append(w)

            def convolve(k: int, chosen: list[tir.PrimExpr]) -> Expr:
                if k == nd:
                    return pixel(idx, chosen)
                taps = [convolve(k + 1, chosen + [_clamp(_offset(bases[k], j - 1), in_sizes[k])]) for j in range(4)]
                return taps[0] * weights[k][0] + taps[1] * weights[k][1] + taps[2] * weights[k][2] \
                    + taps[3] * weights[k][3]

            value = convolve(0, [])
        if mode == "tf_crop_and_resize":  # outside the image: the extrapolation value
            fill = E.const(extrapolation_value)
            for k in range(nd - 2, nd):  # TVM checks the H and W axes only (resize3d too)
                last = _float(E.wrap(in_sizes[k]) - 1)
                value = E.if_then_else(coords[k] < 0.0, fill, E.if_then_else(last < coords[k], fill, value))
        return E.cast(value, dtype)

    return compute(out_shape, fcompute, name="resize")



# ---------------------------------------------------------------- affine_grid
def _grid_axis(i: Any, size: tir.PrimExpr, align_corners: bool, dtype: str) -> Expr:
    """The normalised coordinate (in [-1, 1]) of position ``i`` along an output axis of ``size``."""
    n = as_const_int(size)
    if n is not None:
        if align_corners:  # TVM stops just short of 1 (its step is (2 - 1e-7) / (n - 1))
            start, step = -1.0, ((2.0 - 1e-7) / (n - 1) if n > 1 else 0.0)
        else:
            start, step = -1.0 + 1.0 / n, 2.0 / n
        return E.const(start, dtype) + E.cast(i, dtype) * E.const(step, dtype)
    fn = E.cast(size, dtype)
    if align_corners:
        return E.const(-1.0, dtype) + E.cast(i, dtype) * (E.const(2.0 - 1e-7, dtype) / (fn - 1.0))
    return E.const(-1.0, dtype) + 1.0 / fn + E.cast(i, dtype) * (E.const(2.0, dtype) / fn)


def affine_grid(data: Tensor, size: Sequence[ExprLike], align_corners: bool = True) -> Tensor:
    """The sampling grid ``theta[n] @ (x, y[, z], 1)`` over a normalised grid of ``size``:
    ``(N, 2, H, W)`` (``(N, 3, D, H, W)``), x (the W axis) first, as TVM's ``compute``."""
    nd = len(size)
    dims = [tir.IntImm("int64", s) if isinstance(s, int) else as_prim(s) for s in size]
    dtype = data.dtype
    last = tir.IntImm("int64", nd)

    def fcompute(n: Any, dim: Any, *pos: Any) -> Expr:
        value = E.wrap(data[n, dim, last])
        for k in range(nd):  # theta's column nd - 1 - k scales spatial axis k
            coord = _grid_axis(pos[k], dims[k], align_corners, dtype)
            value = value + data[n, dim, tir.IntImm("int64", nd - 1 - k)] * coord
        return value

    names = ["n", "dim"] + [f"i{k}" for k in range(nd)]
    return make_compute([data.shape[0], tir.IntImm("int64", nd), *dims], fcompute, names, name="compute")


# ---------------------------------------------------------------- grid_sample
GRID_METHODS = ("nearest", "bilinear", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")


def _unnormalize(g: Expr, size: tir.PrimExpr, align_corners: bool) -> Expr:
    """A grid value in [-1, 1] as a pixel coordinate along an axis of ``size``."""
    fsize = E.cast(size, g.dtype)
    if align_corners:
        return (g + 1.0) * (fsize - 1.0) / 2.0
    return E.const(-0.5, g.dtype) + (g + 1.0) * fsize / 2.0


def _reflect(c: Expr, size: tir.PrimExpr, align_corners: bool) -> Expr:
    """``c`` mirrored into the image (its pixel centres with ``align_corners``, else its edges)."""
    n = as_const_int(size)
    span = tir.IntImm("int64", n - 1 if align_corners else n) if n is not None else \
        as_prim(E.wrap(size) - 1) if align_corners else size
    low = E.const(0.0 if align_corners else -0.5, c.dtype)
    high = low + E.cast(span, c.dtype)
    dist = E.abs(low - c)
    whole = E.cast(dist, "int64")
    extra = dist - E.cast(E.truncdiv(whole, span) * span, c.dtype)
    even = E.truncdiv(E.truncmod(whole, E.wrap(span) * 2), span) == 0
    mirrored = E.if_then_else(even, low + extra, high - extra)
    return E.if_then_else(E.all(low <= c, c <= high), c, mirrored)


def _pad_coordinate(c: Expr, size: tir.PrimExpr, padding_mode: str, align_corners: bool) -> Expr:
    """The coordinate after ``border`` clipping or ``reflection`` (``zeros`` keeps it)."""
    if padding_mode == "zeros":
        return c
    if padding_mode == "reflection":
        c = _reflect(c, size, align_corners)
    return E.binary(tir.Min, E.binary(tir.Max, c, E.const(0.0, c.dtype)), E.cast(E.wrap(size) - 1, c.dtype))


def grid_sample(data: Tensor, grid: Tensor, method: str = "bilinear", layout: str = "NCHW",
                padding_mode: str = "zeros", align_corners: bool = False) -> Tensor:
    """Sample ``data`` (NCHW or NCDHW) at the normalised points of ``grid`` ((N, 2, H', W'): x
    first; (N, 3, D', H', W')), with PyTorch's ``grid_sample`` semantics (TVM's ``compute``)."""
    nd = len(layout) - 2
    sizes = list(data.shape[2:])
    gdtype = grid.dtype

    def fcompute(*idx: Any) -> Expr:
        n, c, *pos = idx

        def point(k: int) -> Expr:  # grid channel 0 is x (the last axis)
            return _unnormalize(E.wrap(grid[(n, tir.IntImm("int64", nd - 1 - k), *pos)]), sizes[k], align_corners)

        def read(where: list[tir.PrimExpr], shifts: list[int]) -> Expr:
            conds = [tir.LE(tir.IntImm("int64", -s), i) for i, s in zip(where, shifts)]
            conds += [tir.LT(i, as_prim(E.wrap(sz) - s)) for i, s, sz in zip(where, shifts, sizes)]
            cond = conds[0]
            for extra in conds[1:]:
                cond = tir.And(cond, extra)
            taps = [_offset(i, s) for i, s in zip(where, shifts)]
            return E.if_then_else(cond, E.cast(data[(n, c, *taps)], gdtype), E.const(0.0, gdtype))

        coords = [point(k) for k in range(nd)]
        if method == "nearest":
            where = [as_prim(E.cast(E.nearbyint(_pad_coordinate(co, sizes[k], padding_mode, align_corners)), "int64"))
                     for k, co in enumerate(coords)]
            value = read(where, [0] * nd)
        elif method == "bilinear":
            coords = [_pad_coordinate(co, sizes[k], padding_mode, align_corners) for k, co in enumerate(coords)]
            lows = [as_prim(E.cast(E.floor(co), "int64")) for co in coords]
            fracs = [co - E.cast(E.cast(E.floor(co), "int32"), gdtype) for co in coords]
            value = None
            for shifts in itertools.product((0, 1), repeat=nd):
                term = read(lows, list(shifts))
                for k, s in enumerate(shifts):
                    term = term * (fracs[k] if s else 1.0 - fracs[k])
                value = term if value is None else value + term
        else:  # bicubic: each tap is padded on its own, as PyTorch's get_value_bounded
            floors = [E.floor(co) for co in coords]
            weights = [_cubic_weights(co - f, -0.75) for co, f in zip(coords, floors)]

            bases = [as_prim(E.cast(f, "int64")) for f in floors]

            def convolve(k: int, chosen: list[tir.PrimExpr], shifts: list[int]) -> Expr:
                if k == nd:
                    return read(chosen, shifts)
                parts = []
                for j in range(4):
                    if padding_mode == "zeros":  # the taps around the base, bounds-checked
                        part = convolve(k + 1, chosen + [bases[k]], shifts + [j - 1])
                    else:
                        at = _pad_coordinate(floors[k] + float(j - 1), sizes[k], padding_mode, align_corners)
                        part = convolve(k + 1, chosen + [as_prim(E.cast(at, "int64"))], shifts + [0])
                    parts.append(part * weights[k][j])
                return parts[0] + parts[1] + parts[2] + parts[3]

            value = convolve(0, [], [])
        return E.cast(value, data.dtype)

    names = ["n", "c"] + list("dhw"[3 - nd:])
    return make_compute([data.shape[0], data.shape[1], *grid.shape[2:]], fcompute, names, name="compute")
