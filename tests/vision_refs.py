"""Numpy references of the vision ops (tests/test_ops_vision.py, tests/test_legalize.py), written from
TVM 0.27's documented and observed semantics."""
from __future__ import annotations

import math

import numpy as np


def _bilinear(img: np.ndarray, y: float, x: float) -> np.ndarray:
    """``img`` (C, H, W) at ``(y, x)``: 0 beyond a pixel outside the map, clamped inside it."""
    _, h, w = img.shape
    if y < -1 or x < -1 or y > h or x > w:
        return np.zeros(img.shape[0])
    y, x = min(max(y, 0.0), h - 1), min(max(x, 0.0), w - 1)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    ly, lx = y - y0, x - x0
    out = np.zeros(img.shape[0])
    for yi, wy in ((y0, 1 - ly), (y0 + 1, ly)):
        for xi, wx in ((x0, 1 - lx), (x0 + 1, lx)):
            if yi < h and xi < w:
                out += wy * wx * img[:, yi, xi]
    return out


def roi_align(data: np.ndarray, rois: np.ndarray, pooled: tuple[int, int], scale: float, sample_ratio: int = -1,
              aligned: bool = False, mode: str = "avg") -> np.ndarray:
    """ROIAlign of NCHW ``data``; ``aligned`` as TVM 0.27: ROIs are not enlarged to one pixel (no shift)."""
    f32 = np.float32
    out = np.zeros((len(rois), data.shape[1], *pooled))
    for r, (b, x1, y1, x2, y2) in enumerate(rois.astype("float64")):
        sy, sx = f32(y1) * f32(scale), f32(x1) * f32(scale)
        h, w = f32(y2) * f32(scale) - sy, f32(x2) * f32(scale) - sx
        if not aligned:
            h, w = max(h, f32(1.0)), max(w, f32(1.0))
        bh, bw = h / pooled[0], w / pooled[1]
        gh = sample_ratio if sample_ratio > 0 else int(math.ceil(bh))
        gw = sample_ratio if sample_ratio > 0 else int(math.ceil(bw))
        for ph in range(pooled[0]):
            for pw in range(pooled[1]):
                samples = [_bilinear(data[int(b)].astype("float64"), sy + ph * bh + (iy + 0.5) * bh / gh,
                                     sx + pw * bw + (ix + 0.5) * bw / gw)
                           for iy in range(gh) for ix in range(gw)]
                if mode == "avg":
                    out[r, :, ph, pw] = np.sum(samples, axis=0) / max(gh * gw, 1)
                else:
                    out[r, :, ph, pw] = np.max(samples, axis=0)
    return out.astype(data.dtype)


def roi_pool(data: np.ndarray, rois: np.ndarray, pooled: tuple[int, int], scale: float) -> np.ndarray:
    """ROIPool of NCHW ``data``: boxes rounded to whole pixels (half up), the maximum of each bin, 0 when empty."""
    f32 = np.float32
    _, channels, height, width = data.shape
    out = np.zeros((len(rois), channels, *pooled), data.dtype)
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        def rounded(v):
            return int(math.floor(f32(v) * f32(scale) + f32(0.5)))

        sx, sy, ex, ey = rounded(x1), rounded(y1), rounded(x2), rounded(y2)
        bh, bw = f32(max(ey - sy + 1, 1)) / f32(pooled[0]), f32(max(ex - sx + 1, 1)) / f32(pooled[1])
        for ph in range(pooled[0]):
            h0 = min(max(int(math.floor(f32(ph) * bh)) + sy, 0), height)
            h1 = min(max(int(math.ceil(f32(ph + 1) * bh)) + sy, 0), height)
            for pw in range(pooled[1]):
                w0 = min(max(int(math.floor(f32(pw) * bw)) + sx, 0), width)
                w1 = min(max(int(math.ceil(f32(pw + 1) * bw)) + sx, 0), width)
                if h1 > h0 and w1 > w0:
                    out[r, :, ph, pw] = data[int(b), :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


def get_valid_counts(data: np.ndarray, threshold: float, id_index: int = 0, score_index: int = 1) -> tuple:
    """The boxes passing the score threshold (compared in the data's dtype; with a class id >= 0 unless
    id_index is -1) moved to the front of each batch, their count and indices; -1 fills the rest."""
    batch, anchors, _ = data.shape
    counts = np.zeros(batch, "int32")
    out = np.full_like(data, -1)
    indices = np.full((batch, anchors), -1, "int32")
    for b in range(batch):
        for a in range(anchors):
            if data[b, a, score_index] > data.dtype.type(threshold) and (id_index < 0 or data[b, a, id_index] >= 0):
                out[b, counts[b]] = data[b, a]
                indices[b, counts[b]] = a
                counts[b] += 1
    return counts, out, indices


def iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two boxes given by opposite corners (x1, y1, x2, y2) in any order."""
    def span(box, k):
        return min(box[k], box[k + 2]), max(box[k], box[k + 2])

    (ax0, ax1), (ay0, ay1), (bx0, bx1), (by0, by1) = span(a, 0), span(a, 1), span(b, 0), span(b, 1)
    inter = max(0.0, min(ay1, by1) - max(ay0, by0)) * max(0.0, min(ax1, bx1) - max(ax0, bx0))
    union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
    return 0.0 if union <= 0 else inter / union


def non_max_suppression(data, valid_count, indices, max_output_size=-1, iou_threshold=0.5, force_suppress=False,
                        top_k=-1, coord_start=2, score_index=1, id_index=0, return_indices=True,
                        invalid_to_bottom=False):
    """TVM's hard NMS: valid boxes by descending score (stable; the first top_k), positive-score boxes
    kept up to max_output_size, later boxes of the same class (any with force_suppress or id_index -1)
    with IoU >= the threshold dropped (score -1, index -1)."""
    batch, anchors, _ = data.shape
    out_idx = np.full((batch, anchors), -1, "int32")
    counts = np.zeros((batch, 1), "int32")
    out_data = np.full_like(data, -1)
    for b in range(batch):
        n = int(valid_count[b])
        order = sorted(range(n), key=lambda k: -float(data[b, k, score_index]))
        if 0 < top_k < n:
            n = top_k
        boxes = np.full_like(data[b], -1)
        ids = np.full(anchors, -1)
        for j in range(n):
            boxes[j], ids[j] = data[b, order[j]], order[j]
        kept = 0
        for i in range(n):
            if boxes[i, score_index] > 0 and (max_output_size <= 0 or kept < max_output_size):
                kept += 1
                for j in range(i + 1, n):
                    same = force_suppress or id_index < 0 or boxes[i, id_index] == boxes[j, id_index]
                    if boxes[j, score_index] > 0 and same and \
                            iou(boxes[i, coord_start:coord_start + 4], boxes[j, coord_start:coord_start + 4]) >= \
                            iou_threshold:
                        boxes[j, score_index], ids[j] = -1, -1
            else:
                boxes[i], ids[i] = -1, -1
        survivors = [indices[b, k] for k in ids if k >= 0]
        out_idx[b, :len(survivors)] = survivors
        counts[b, 0] = len(survivors)
        if invalid_to_bottom:
            rows = [r for r in boxes if r[score_index] >= 0]
            out_data[b, :len(rows)] = rows
        else:
            out_data[b] = boxes
    return (out_idx, counts) if return_indices else out_data


def all_class_non_max_suppression(boxes, scores, max_out, iou_threshold, score_threshold, output_format="onnx"):
    """ONNX NonMaxSuppression per batch and class, padded as tvmlite's kernel writes it (zeros after
    the selected rows) with the totals."""
    batch, classes, anchors = scores.shape
    rows, per_batch = [], []
    for b in range(batch):
        mine = []
        for c in range(classes):
            order = sorted(range(anchors), key=lambda k: -float(scores[b, c, k]))
            ranked = [float(scores[b, c, k]) for k in order]
            valid = sum(1 for s in ranked if s > score_threshold)
            chosen = 0
            for i in range(valid):
                if ranked[i] > -1 and chosen < max_out:
                    mine.append((c, order[i], scores[b, c, order[i]]))
                    chosen += 1
                    for j in range(i + 1, valid):
                        if ranked[j] > 0 and iou(boxes[b, order[i]], boxes[b, order[j]]) >= iou_threshold:
                            ranked[j] = -1
        per_batch.append(mine)
        rows += [(b, c, k) for c, k, _ in mine]
    if output_format == "onnx":
        out = np.zeros((batch * classes * anchors, 3), "int64")
        out[:len(rows)] = np.array(rows, "int64").reshape(-1, 3)
        return out, np.array([len(rows)], "int64")
    idx = np.zeros((batch, classes * anchors, 2), "int64")
    sc = np.zeros((batch, classes * anchors), scores.dtype)
    for b, mine in enumerate(per_batch):
        for k, (c, box, s) in enumerate(mine):
            idx[b, k], sc[b, k] = (c, box), s
    return idx, sc, np.array([len(m) for m in per_batch], "int64")


def multibox_transform_loc(cls_pred, loc_pred, anchor, clip=False, threshold=0.0, variances=(1.0, 1.0, 1.0, 1.0),
                           keep_background=True, apply_softmax=True):
    """TFLite's center-size decoding of ``(x, y, w, h)`` encodings against ``(left, top, right, bottom)``
    anchors into ``(ymin, xmin, ymax, xmax)``; the class scores softmaxed, masked by the threshold."""
    batch, _, anchors = cls_pred.shape
    loc = loc_pred.reshape(batch, anchors, 4).astype("float64")
    left, top, right, bottom = (anchor[0, :, k].astype("float64") for k in range(4))
    h, w = bottom - top, right - left
    cy = loc[..., 1] * variances[1] * h + (top + bottom) * 0.5
    cx = loc[..., 0] * variances[0] * w + (left + right) * 0.5
    hh, hw = 0.5 * np.exp(loc[..., 3] * variances[3]) * h, 0.5 * np.exp(loc[..., 2] * variances[2]) * w
    boxes = np.stack([cy - hh, cx - hw, cy + hh, cx + hw], axis=-1)
    if clip:
        boxes = np.clip(boxes, 0.0, 1.0)
    scores = cls_pred.astype("float64")
    if apply_softmax:
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        scores = e / e.sum(axis=1, keepdims=True)
    scores = scores * (scores >= threshold)
    if not keep_background:
        scores[:, 0] = 0.0
    return boxes.astype(cls_pred.dtype), scores.astype(cls_pred.dtype)


def soft_nms(data, valid_count, indices, iou_threshold=0.5, force_suppress=False, top_k=-1, coord_start=2,
             score_index=1, id_index=0, soft_nms_sigma=0.5, score_threshold=0.0, max_output_size=-1):
    """TVM's soft-NMS: the best remaining box above the threshold moves to the next kept slot, later
    boxes of its class overlapping it by the IoU threshold or more are dropped, the others' scores
    decay by exp(-iou^2 / (2 sigma)) (dropped at or below the threshold). Returns (boxes, indices, counts)."""
    batch, anchors, _ = data.shape
    out = np.full_like(data, -1)
    out_idx = np.full((batch, anchors), -1, "int32")
    counts = np.zeros((batch, 1), "int32")
    coef = data.dtype.type(-0.5 / soft_nms_sigma)
    thr = data.dtype.type(score_threshold)
    for b in range(batch):
        n = int(valid_count[b])
        order = sorted(range(n), key=lambda k: -float(data[b, k, score_index]))
        if 0 < top_k < n:
            n = top_k
        boxes = data[b, order[:n]].copy()
        ids = list(order[:n])
        kept = 0
        for _ in range(n):
            if 0 < max_output_size <= kept:
                break
            live = [j for j in range(kept, n) if ids[j] >= 0 and boxes[j, score_index] > thr]
            if not live:
                continue
            top = max(live, key=lambda j: (boxes[j, score_index], -j))
            boxes[[kept, top]], ids[kept], ids[top] = boxes[[top, kept]], ids[top], ids[kept]
            for j in range(kept + 1, n):
                if ids[j] < 0 or not boxes[j, score_index] > thr:
                    continue
                if not (force_suppress or id_index < 0 or boxes[kept, id_index] == boxes[j, id_index]):
                    continue
                o = data.dtype.type(iou(boxes[kept, coord_start:coord_start + 4], boxes[j, coord_start:coord_start + 4]))
                if o >= iou_threshold:
                    ids[j] = -1
                else:
                    boxes[j, score_index] = boxes[j, score_index] * np.exp(coef * o * o)
                    if boxes[j, score_index] <= thr:
                        ids[j] = -1
            kept += 1
        out[b, :kept] = boxes[:kept]
        out_idx[b, :kept] = [indices[b, k] for k in ids[:kept]]
        counts[b, 0] = kept
    return out, out_idx, counts
