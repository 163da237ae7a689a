"""Losses, rearrangements and attention of the ``R.nn`` family (``R.nn.nll_loss``,
``R.nn.cross_entropy_with_logits``, ``R.nn.pixel_shuffle``, ``R.nn.batch_flatten``,
``R.nn.attention``, ``R.nn.attention_bias``, ``R.nn.attention_var_len``), each declared with its legalization."""
from __future__ import annotations

import dataclasses

from .. import topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, can_prove_not_equal, format_expr, format_shape, int64, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.dtype import parse_dtype
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ._common import binary_dtype, op_name, require_float, tensor_arg, tensor_like, to_int, to_str
from .legalization import register_legalize

REDUCTIONS = ("none", "mean", "sum")


def _to_reduction(value: object) -> str:
    """``none``, ``mean`` or ``sum``."""
    text = to_str(value)
    if text not in REDUCTIONS:
        raise OpError(f"the reduction must be one of none, mean, sum, got {text!r}")
    return text


@register_op("relax.nn.nll_loss", inputs=("predictions", "targets", "weights"), num_optional=1,
             attrs=(AttrField("reduction", "mean", _to_reduction), AttrField("ignore_index", -100, to_int)),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _nll_loss(call: rx.Call) -> rx.StructInfo:
    """Predictions ``(N, C, d1...)`` or ``(C,)``, integer targets ``(N, d1...)`` or ``()``, weights
    ``(C,)``: the targets' shape for ``none``, else a scalar."""
    pred, targets = tensor_arg(call, 0), tensor_arg(call, 1)
    require_float(call, pred, 0)
    if targets.dtype != "void" and not parse_dtype(targets.dtype).is_int:
        raise OpError(f"{op_name(call)}: the targets must be integers, got dtype {targets.dtype}", 1)
    if pred.ndim >= 0 and targets.ndim >= 0 and targets.ndim != max(pred.ndim - 1, 0):
        raise OpError(f"{op_name(call)}: {pred.ndim}-D predictions take {max(pred.ndim - 1, 0)}-D targets, got "
                      f"{targets.ndim}-D", 1)
    if pred.shape is not None and targets.shape is not None and pred.ndim >= 2:
        want = [pred.shape[0], *pred.shape[2:]]
        if any(can_prove_not_equal(a, b) for a, b in zip(targets.shape, want)):
            raise OpError(f"{op_name(call)}: the targets must have shape {format_shape(want)} (the predictions "
                          f"{format_shape(pred.shape)} without the classes), got {format_shape(targets.shape)}", 1)
    if len(call.args) > 2:
        w = tensor_arg(call, 2)
        binary_dtype(call, pred.dtype, w.dtype, 2)
        if w.ndim not in (-1, 1):
            raise OpError(f"{op_name(call)}: the weights must be 1-D (one per class), got {w.ndim}-D", 2)
        if pred.shape is not None and w.shape is not None and pred.ndim >= 1:
            classes = pred.shape[0 if pred.ndim == 1 else 1]
            if can_prove_not_equal(w.shape[0], classes):
                raise OpError(f"{op_name(call)}: {format_expr(w.shape[0])} weights for {format_expr(classes)} "
                              f"classes", 2)
    if call.attrs["reduction"] == "none":
        return tensor_like(pred, targets.shape, ndim=targets.ndim)
    return tensor_like(pred, ())


@register_legalize("relax.nn.nll_loss")
def _legalize_nll_loss(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.nn.nll_loss`` (``nll_loss_without_weight`` without weights, as TVM names it)."""
    a = call.attrs
    if len(call.args) > 2:
        return bb.call_te(topi.nn.nll_loss, *call.args, a["reduction"], a["ignore_index"],
                          primfunc_name_hint="nll_loss")
    return bb.call_te(lambda p, t: topi.nn.nll_loss(p, t, None, a["reduction"], a["ignore_index"]), *call.args,
                      primfunc_name_hint="nll_loss_without_weight")


@register_op("relax.nn.cross_entropy_with_logits", inputs=("predictions", "labels"),
             pattern=OpPattern.OUT_ELEMWISE_FUSABLE)
def _cross_entropy_with_logits(call: rx.Call) -> rx.StructInfo:
    """A scalar: ``-sum(predictions * labels)``, over the batch size for 2-D inputs."""
    pred, labels = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = binary_dtype(call, pred.dtype, labels.dtype)
    if pred.ndim >= 0 and labels.ndim >= 0 and pred.ndim != labels.ndim:
        raise OpError(f"{op_name(call)}: the predictions ({pred.ndim}-D) and labels ({labels.ndim}-D) must have one "
                      f"shape", 1)
    if pred.ndim not in (-1, 1, 2):
        raise OpError(f"{op_name(call)}: expected 1-D or 2-D predictions, got {pred.ndim}-D", 0)
    if pred.shape is not None and labels.shape is not None and any(
            can_prove_not_equal(a, b) for a, b in zip(pred.shape, labels.shape)):
        raise OpError(f"{op_name(call)}: the predictions {format_shape(pred.shape)} and labels "
                      f"{format_shape(labels.shape)} must have one shape", 1)
    return tensor_like(pred, (), dtype)


register_legalize("relax.nn.cross_entropy_with_logits",
                  lambda bb, call: bb.call_te(topi.nn.cross_entropy_with_logits, *call.args,
                                              primfunc_name_hint="cross_entropy_with_logits"))


@register_op("relax.nn.pixel_shuffle", inputs=("data",), attrs=(AttrField("upscale_factor", convert=to_int),),
             pattern=OpPattern.INJECTIVE)
def _pixel_shuffle(call: rx.Call) -> rx.StructInfo:
    """``(..., C * r * r, H, W) -> (..., C, H * r, W * r)``."""
    x = tensor_arg(call, 0)
    r = call.attrs["upscale_factor"]
    if r <= 0:
        raise OpError(f"{op_name(call)}: upscale_factor must be positive, got {r}", "upscale_factor")
    if x.ndim not in (-1,) and x.ndim < 3:
        raise OpError(f"{op_name(call)}: expected at least 3 dimensions (C, H, W), got {x.ndim}", 0)
    if x.shape is None:
        return x
    *lead, c, h, w = x.shape
    channels = as_const_int(c)
    if channels is not None and channels % (r * r):
        raise OpError(f"{op_name(call)}: {channels} channels are not divisible by upscale_factor squared "
                      f"({r * r})", 0)
    rr = int64(r)
    out = [simplify(tir.FloorDiv(c, int64(r * r))), simplify(tir.Mul(h, rr)), simplify(tir.Mul(w, rr))]
    return tensor_like(x, [*lead, *out])


@register_legalize("relax.nn.pixel_shuffle")
def _legalize_pixel_shuffle(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.nn.pixel_shuffle`` (TVM 0.27 names this topi function but lacks it)."""
    return bb.call_te(topi.nn.pixel_shuffle, call.args[0], call.attrs["upscale_factor"],
                      primfunc_name_hint="pixel_shuffle")


@register_op("relax.nn.batch_flatten", inputs=("data",), pattern=OpPattern.INJECTIVE)
def _batch_flatten(call: rx.Call) -> rx.StructInfo:
    """``(N, d1, d2...) -> (N, d1 * d2 * ...)``."""
    x = tensor_arg(call, 0)
    if x.ndim not in (-1,) and x.ndim < 2:
        raise OpError(f"{op_name(call)}: expected at least 2 dimensions, got {x.ndim}", 0)
    if x.shape is None:
        return tensor_like(x, None, ndim=2)
    rest = x.shape[1]
    for d in x.shape[2:]:
        rest = tir.Mul(rest, d)
    return tensor_like(x, [x.shape[0], simplify(rest)])


@register_legalize("relax.nn.batch_flatten")
def _legalize_batch_flatten(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """A reshape to ``(N, rest)`` (TVM's function ``reshape``)."""
    return bb.call_te(topi.nn.batch_flatten, call.args[0], primfunc_name_hint="reshape")


# ---------------------------------------------------------------- attention
def _to_scale(value: object) -> tir.FloatImm | None:
    """None (``1 / sqrt(head_dim)``) or a float, kept as TVM keeps it: a float32 FloatImm."""
    if value is None or isinstance(value, tir.FloatImm):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return tir.FloatImm("float32", float(value))
    raise OpError(f"expected a float scale or None, got {value!r}")


def _to_causal_mask(value: object) -> str | None:
    """None, ``TopLeft`` or ``BottomRight``."""
    if value is None:
        return None
    text = to_str(value)
    if text not in ("TopLeft", "BottomRight"):
        raise OpError(f"the causal mask must be None, 'TopLeft' or 'BottomRight', got {text!r}")
    return text


def _to_window(value: object) -> int | None:
    """None or a window size."""
    return None if value is None else to_int(value)


def _attention(call: rx.Call) -> rx.StructInfo:
    """BSNH query ``(B, S, N, H)``, key ``(B, S_kv, N, H)``, value ``(B, S_kv, N, H_v)`` (and a bias
    broadcasting to ``(B, N, S, S_kv)``): ``(B, S, N, H_v)``."""
    q, k, v = (tensor_arg(call, i) for i in range(3))
    for i, (t, what) in enumerate(((q, "query"), (k, "key"), (v, "value"))):
        if t.ndim not in (-1, 4):
            raise OpError(f"{op_name(call)}: the {what} must be 4-D (batch, sequence, heads, head dim), got "
                          f"{t.ndim}-D", i)
        binary_dtype(call, q.dtype, t.dtype, i)
    if q.shape is None or k.shape is None or v.shape is None:
        return tensor_like(q, None, ndim=4)
    checks = ((k, 0, q, 0, "batch"), (k, 2, q, 2, "heads"), (k, 3, q, 3, "head dim"), (v, 0, q, 0, "batch"),
              (v, 1, k, 1, "key sequence"), (v, 2, q, 2, "heads"))
    for t, i, ref, j, what in checks:
        if can_prove_not_equal(t.shape[i], ref.shape[j]):
            arg = 1 if t is k else 2
            raise OpError(f"{op_name(call)}: the {what} sizes differ: {format_expr(t.shape[i])} in "
                          f"{format_shape(t.shape)} against {format_expr(ref.shape[j])} in {format_shape(ref.shape)}",
                          arg)
    if len(call.args) > 3:
        bias = tensor_arg(call, 3)
        binary_dtype(call, q.dtype, bias.dtype, 3)
        full = [q.shape[0], q.shape[2], q.shape[1], k.shape[1]]
        if bias.ndim > 4:
            raise OpError(f"{op_name(call)}: the bias has {bias.ndim} dimensions, more than (B, N, S, S_kv)", 3)
        if bias.shape is not None and any(as_const_int(d) != 1 and can_prove_not_equal(d, f)
                                          for d, f in zip(bias.shape[::-1], full[::-1])):
            raise OpError(f"{op_name(call)}: the bias {format_shape(bias.shape)} does not broadcast to "
                          f"(B, N, S, S_kv) = {format_shape(full)}", 3)
    return tensor_like(q, [q.shape[0], q.shape[1], q.shape[2], v.shape[3]])


_ATTENTION_ATTRS = (AttrField("scale", None, _to_scale), AttrField("causal_mask", None, _to_causal_mask),
                    AttrField("window_size", None, _to_window))
register_op("relax.nn.attention", inputs=("query", "key", "value"), attrs=_ATTENTION_ATTRS,
            pattern=OpPattern.OPAQUE)(_attention)
register_op("relax.nn.attention_bias", inputs=("query", "key", "value", "bias"), attrs=_ATTENTION_ATTRS,
            pattern=OpPattern.OPAQUE)(_attention)


def _legalize_attention(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.nn.attention``; a sliding window is left alone (as TVM, which refuses it)."""
    a = call.attrs
    if a["window_size"] is not None:
        return call
    scale = a["scale"].value if a["scale"] is not None else None
    bias = call.args[3] if len(call.args) > 3 else None
    return bb.call_te(topi.nn.attention, *call.args[:3], bias, scale, a["causal_mask"],
                      primfunc_name_hint="attention_bias" if bias is not None else "attention")


register_legalize("relax.nn.attention", _legalize_attention)
register_legalize("relax.nn.attention_bias", _legalize_attention)


# ---------------------------------------------------------------- attention over sequences of different lengths
# TVM prints the inputs in its op's order (starts, then maximum lengths), which its Python
# function takes as (seqstart_q, max_seqlen_q, seqstart_k, max_seqlen_k): scripts keep the printed order.
_VAR_LEN_INPUTS = ("queries", "keys", "values", "seqstart_q", "seqstart_k", "max_seqlen_q", "max_seqlen_k")


@register_op("relax.nn.attention_var_len", inputs=_VAR_LEN_INPUTS, attrs=_ATTENTION_ATTRS, pattern=OpPattern.OPAQUE)
def _attention_var_len(call: rx.Call) -> rx.StructInfo:
    """Concatenated sequences ``(1, total, N, H)`` with their starts (1-D integers, one more than
    the sequences) and maximum lengths (integer scalars): ``(1, total, N, H_v)``, float only."""
    out = _attention(dataclasses.replace(call, args=call.args[:3]))  # the query, key and value rules
    require_float(call, tensor_arg(call, 0), 0)
    q = tensor_arg(call, 0)
    if q.shape is not None and can_prove_not_equal(q.shape[0], int64(1)):
        raise OpError(f"{op_name(call)}: the sequences are concatenated along axis 1 of a batch of one, got "
                      f"a query of shape {format_shape(q.shape)}", 0)
    for i in range(3, 7):
        t = tensor_arg(call, i)
        name = _VAR_LEN_INPUTS[i]
        want = 1 if name.startswith("seqstart") else 0
        if t.dtype != "void" and not parse_dtype(t.dtype).is_integer:
            raise OpError(f"{op_name(call)}: {name} must be an integer tensor, got dtype {t.dtype}", i)
        if t.ndim not in (-1, want):
            raise OpError(f"{op_name(call)}: {name} must be {'a 1-D tensor' if want else 'a scalar tensor'}, "
                          f"got {t.ndim} dimensions", i)
    starts = [tensor_arg(call, i).shape for i in (3, 4)]
    if all(s is not None for s in starts) and can_prove_not_equal(starts[0][0], starts[1][0]):
        raise OpError(f"{op_name(call)}: seqstart_q and seqstart_k must list as many sequences, got "
                      f"{format_expr(starts[0][0])} and {format_expr(starts[1][0])} starts", 4)
    return out


@register_legalize("relax.nn.attention_var_len")
def _legalize_attention_var_len(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.attention_var_len`` (TVM has no legalization); a sliding window is left alone."""
    a = call.attrs
    if a["window_size"] is not None:
        return call
    scale = a["scale"].value if a["scale"] is not None else None
    q, k, v, sq, sk = call.args[:5]
    return bb.call_te(topi.attention_var_len, q, k, v, sq, sk, scale, a["causal_mask"],
                      primfunc_name_hint="attention_var_len")
