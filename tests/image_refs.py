"""Numpy references of the image ops (tests/test_ops_image.py, tests/test_legalize.py): resize over
the trailing spatial axes of an NC... array, written from TVM's documented coordinate rules."""
from __future__ import annotations

import itertools

import numpy as np

F32 = np.float32


def source_coordinates(out: int, size: int, mode: str, start: float = 0.0, end: float = 0.0) -> np.ndarray:
    """The float32 input coordinate each of ``out`` output positions samples along an axis of ``size``."""
    x = np.arange(out, dtype=F32)
    scale = F32(size) / F32(out)
    if mode == "align_corners":
        return (F32(size - 1) / F32(out - 1)) * x if out > 1 else np.zeros(out, F32)
    if mode == "asymmetric":
        return scale * x
    if mode == "half_pixel":
        return (x + F32(0.5)) * scale - F32(0.5)
    if mode == "pytorch_half_pixel":
        return (x + F32(0.5)) * scale - F32(0.5) if out > 1 else np.zeros(out, F32)
    if mode == "tf_half_pixel_for_nn":
        return (x + F32(0.5)) * scale
    assert mode == "tf_crop_and_resize"
    s, e, last = F32(start), F32(end), F32(size - 1)
    if out == 1:
        return np.full(out, F32(0.5) * (s + e) * last, F32)
    return s * last + x * (e - s) * last / F32(out - 1)


def _round(c: np.ndarray, rounding: str) -> np.ndarray:
    """The integer coordinate of each nearest-neighbour lookup."""
    if rounding == "round":
        return np.round(c)  # half to even, as T.round
    if rounding == "round_prefer_floor":
        return np.ceil(c - F32(0.5))
    if rounding == "round_prefer_ceil":
        return np.floor(c + F32(0.5))
    if rounding == "floor":
        return np.floor(c + F32(1e-5))
    return np.ceil(c - F32(1e-5))


def _keys(t: np.ndarray, a: float) -> list[np.ndarray]:
    """Keys' cubic weights of the taps at -1, 0, 1, 2 around a fraction ``t``."""
    def near(d):
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1

    def far(d):
        return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a

    return [far(1 + t), near(t), near(1 - t), far(2 - t)]


def axis_taps(out: int, size: int, method: str, mode: str, rounding: str = "", start: float = 0.0,
              end: float = 0.0, alpha: float = -0.75, exclude: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """(index, weight) pairs per output position along one axis; indices clamped to the axis."""
    c = source_coordinates(out, size, mode, start, end)
    if method == "nearest_neighbor":
        rounding = rounding or ("round" if mode == "align_corners" else "floor")
        return [(np.clip(_round(c, rounding).astype(np.int64), 0, size - 1), np.ones(out))]
    base = np.floor(c)
    t = (c - base).astype(np.float64)
    base = base.astype(np.int64)
    if method == "linear":
        return [(np.clip(base, 0, size - 1), 1 - t), (np.clip(base + 1, 0, size - 1), t)]
    weights = _keys(t, alpha)
    if exclude:
        weights = [np.where((base + k - 1 < 0) | (base + k - 1 >= size), 0.0, w) for k, w in enumerate(weights)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return [(np.clip(base + k - 1, 0, size - 1), w) for k, w in enumerate(weights)]


def resize(x: np.ndarray, size: tuple[int, ...], method: str = "linear", mode: str = "half_pixel",
           rounding: str = "", roi: tuple[float, ...] = (), alpha: float = -0.75, exclude: bool = False,
           extrapolation: float = 0.0, out_dtype: str | None = None) -> np.ndarray:
    """Resize the trailing ``len(size)`` axes of ``x`` (roi: the axes' starts, then their ends)."""
    nd = len(size)
    spatial = x.shape[-nd:]
    starts = roi[:nd] if roi else (0.0,) * nd
    ends = roi[nd:] if roi else (0.0,) * nd
    taps = [axis_taps(o, s, method, mode, rounding, st, en, alpha, exclude)
            for o, s, st, en in zip(size, spatial, starts, ends)]
    data = x.astype(np.float32).astype(np.float64)
    out = np.zeros(x.shape[:-nd] + tuple(size))
    for combo in itertools.product(*taps):
        grids = np.ix_(*[idx for idx, _ in combo])
        weight = np.ones(size)
        for k, (_, w) in enumerate(combo):
            shape = [1] * nd
            shape[k] = size[k]
            weight = weight * w.reshape(shape)
        out += data[(Ellipsis, *grids)] * weight
    if mode == "tf_crop_and_resize":
        for k in range(nd - 2, nd):  # TVM extrapolates outside the H and W axes
            c = source_coordinates(size[k], spatial[k], mode, starts[k], ends[k])
            outside = (c < 0) | (c > spatial[k] - 1)
            shape = [1] * nd
            shape[k] = size[k]
            out = np.where(outside.reshape(shape), extrapolation, out)
    return out.astype(np.float32).astype(out_dtype or x.dtype)
