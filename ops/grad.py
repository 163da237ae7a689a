"""``R.grad.*``: the ops TVM's Gradient pass writes. ``no_grad``, ``start_checkpoint`` and
``end_checkpoint`` mark values and are the value itself (they legalize to their input); the
``*_backward`` ops give the gradient with respect to an input of nll_loss, max/avg_pool2d and take,
whose struct info is that input's (TVM's rule: the inference returns it and checks nothing).
Each legalizes to a TE compute."""
from __future__ import annotations

from typing import Any

from .. import te
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import prod
from ..ir.block_builder import BlockBuilder
from ..te.expr import binary
from ..te.tensor_arith import cpp_compute
from ..ir.op import AttrField, OpError, register_op
from ._common import arg_sinfo, op_name, to_bool, to_int, to_layout, to_n_tuple, to_opt_int, to_padding, to_str
from .legalization import register_legalize


@register_op("relax.grad.no_grad", inputs=("x",))
def _no_grad(call: rx.Call) -> rx.StructInfo:
    """The input itself: no gradient flows through it."""
    return arg_sinfo(call, 0)


def _checkpoint_mark(call: rx.Call) -> rx.StructInfo:
    """The input itself, which must be a variable (it marks where the checkpoint stage starts or ends)."""
    if not isinstance(call.args[0] if call.args else None, rx.Var):
        raise OpError(f"{op_name(call)}: the argument must be a variable", 0)
    return arg_sinfo(call, 0)


register_op("relax.grad.start_checkpoint", inputs=("x",))(_checkpoint_mark)
register_op("relax.grad.end_checkpoint", inputs=("x",))(_checkpoint_mark)


def _identity(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The marked value itself."""
    return call.args[0]


for _name in ("no_grad", "start_checkpoint", "end_checkpoint"):
    register_legalize(f"relax.grad.{_name}")(_identity)


@register_op("relax.grad.nll_loss_backward", inputs=("output_grad", "predictions", "targets", "weights"),
             num_optional=1, attrs=(AttrField("reduction", "mean", to_str), AttrField("ignore_index", -100, to_int)))
def _nll_loss_backward(call: rx.Call) -> rx.StructInfo:
    """The gradient with respect to the predictions: their struct info (TVM checks neither the
    other arguments nor the reduction)."""
    return arg_sinfo(call, 1)


def _register_pool_backward(name: str) -> None:
    """``R.grad.<name>_backward``: the gradient with respect to the pooled data."""

    def infer(call: rx.Call) -> rx.StructInfo:
        return arg_sinfo(call, 1)

    infer.__doc__ = f"The gradient of R.nn.{name} with respect to its data: the data's struct info."
    # The script's positional order is TVM's Python signature (padding before dilation); the
    # attributes keep Pool2DAttrs' order, which is how they print.
    register_op(f"relax.grad.{name}_backward", inputs=("output_grad", "data"),
                attrs=(AttrField("pool_size", (1, 1), to_n_tuple(2)), AttrField("strides", (1, 1), to_n_tuple(2)),
                       AttrField("dilation", (1, 1), to_n_tuple(2)),
                       AttrField("padding", (0, 0, 0, 0), to_padding(2)),
                       AttrField("ceil_mode", False, to_bool),
                       AttrField("count_include_pad", False, to_bool),
                       AttrField("layout", "NCHW", to_layout("NCHW")),
                       AttrField("out_layout", None, to_layout("NCHW", optional=True), fallback="layout")),
                script_order=("output_grad", "data", "pool_size", "strides", "padding", "dilation", "ceil_mode",
                              "count_include_pad", "layout", "out_layout"))(infer)


_register_pool_backward("max_pool2d")
_register_pool_backward("avg_pool2d")


@register_op("relax.grad.take_backward", inputs=("output_grad", "x", "indices"),
             attrs=(AttrField("axis", None, to_opt_int), AttrField("mode", "", to_str)))
def _take_backward(call: rx.Call) -> rx.StructInfo:
    """The gradient of R.take with respect to its data: the data's struct info. (TVM builds its
    attributes without setting ``mode``, so it holds and prints the empty string.)"""
    return arg_sinfo(call, 1)


# ---------------------------------------------------------------- legalizations (TE)
def _ravel(idx: list, shape: tuple) -> Any:
    """The row-major flat position of ``idx`` in ``shape``."""
    flat = te.cast(idx[0], "int64") if idx else te.const(0, "int64")
    for i, d in zip(idx[1:], shape[1:]):
        flat = flat * te.cast(d, "int64") + te.cast(i, "int64")
    return flat


def _te_take_backward(g: te.Tensor, x: te.Tensor, indices: te.Tensor, axis: int | None) -> te.Tensor:
    """``out[..., i, ...] = sum of g[..., k, ...] over the index positions k with indices[k] == i``
    (negative indices count from the end, as R.take reads them)."""
    flat = axis is None
    ax = 0 if flat else axis + x.ndim if axis < 0 else axis
    size = prod(x.shape) if flat else x.shape[ax]
    ks = [te.reduce_axis((0, d), f"k{j}") for j, d in enumerate(indices.shape)]

    def f(idx: list) -> Any:
        target = _ravel(idx, x.shape) if flat else idx[ax]
        i = indices(*ks)
        i = te.select(i < 0, i + te.cast(size, i.dtype), i)
        src = g(*ks) if flat else g(*idx[:ax], *ks, *idx[ax + 1:])
        hit = te.cast(i, "int64") == te.cast(target, "int64")
        picked = te.select(hit, src, te.const(0, x.dtype))
        return te.sum(picked, axis=ks) if ks else picked

    return cpp_compute(x.shape, f, "take_backward")


@register_legalize("relax.grad.take_backward")
def _legalize_take_backward(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The gradient of R.take (a sum over the positions each element was taken at)."""
    return bb.call_te(_te_take_backward, *call.args, call.attrs["axis"], primfunc_name_hint="take_backward")


def _te_nll_loss_backward(g: te.Tensor, pred: te.Tensor, targets: te.Tensor, weights: te.Tensor | None,
                          reduction: str, ignore_index: int) -> te.Tensor:
    """The gradient of nll_loss with respect to the predictions, by TVM's rule: ``-w[t] * g`` at the
    target class, 0 elsewhere; ``g`` is spread over the targets for ``sum`` and divided by the sum of
    the targets' weights for ``mean``; the weight of ``ignore_index`` (when not negative) is 0."""
    dtype = pred.dtype

    def weight(c: Any) -> Any:
        w = weights(c) if weights is not None else te.const(1.0, dtype)
        if ignore_index >= 0:
            w = te.select(c == te.cast(ignore_index, c.dtype), te.const(0.0, dtype), w)
        return w

    w_t = cpp_compute(targets.shape, lambda i: weight(targets(*i)), "all_weights")
    if reduction == "none":
        grad = g
    else:
        if reduction == "mean":
            ks = [te.reduce_axis((0, d), f"k{j}") for j, d in enumerate(targets.shape)]
            total = cpp_compute((), lambda _: te.sum(w_t(*ks), axis=ks) if ks else w_t(), "weight_sum")
            grad = cpp_compute(targets.shape, lambda i: g() / total(), "output_grad")
        else:
            grad = cpp_compute(targets.shape, lambda i: g(), "output_grad")

    def f(i: list) -> Any:
        rest = i[:1] + i[2:] if pred.ndim > 1 else []
        c = i[1] if pred.ndim > 1 else i[0]
        hit = te.cast(c, "int64") == te.cast(targets(*rest), "int64")
        return te.select(hit, -w_t(*rest) * grad(*rest), te.const(0.0, dtype))

    return cpp_compute(pred.shape, f, "pred_grad")


@register_legalize("relax.grad.nll_loss_backward")
def _legalize_nll_loss_backward(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The gradient of nll_loss with respect to the predictions."""
    g, pred, targets = call.args[:3]
    weights = call.args[3] if len(call.args) > 3 else None
    a = call.attrs
    if weights is None:
        return bb.call_te(lambda g_, p_, t_: _te_nll_loss_backward(g_, p_, t_, None, a["reduction"], a["ignore_index"]),
                          g, pred, targets, primfunc_name_hint="nll_loss_backward")
    return bb.call_te(_te_nll_loss_backward, g, pred, targets, weights, a["reduction"], a["ignore_index"],
                      primfunc_name_hint="nll_loss_backward")


def _i64(value: Any) -> Any:
    """An int64 TE expression."""
    return te.cast(value, "int64")


def _clamp(value: Any, size: Any) -> Any:
    """``value`` limited to ``[0, size)`` (an index that is read but not used stays in bounds)."""
    return binary(tir.Max, binary(tir.Min, value, _i64(size) - 1), _i64(0))


def _te_pool2d_backward(g: te.Tensor, x: te.Tensor, kernel: tuple, strides: tuple, dilation: tuple,
                        padding: tuple, pool_type: str, count_include_pad: bool, layout: str) -> te.Tensor:
    """The gradient of R.nn.max_pool2d / avg_pool2d (as tvmlite's forward computes them) with
    respect to the data: each output's gradient goes back to the first maximum of its window (max),
    or is shared by the elements its average counted (avg)."""
    hw = (layout.index("H"), layout.index("W"))
    begin, end = padding[:2], padding[2:]
    sizes = [x.shape[a] for a in hw]
    outs = [g.shape[a] for a in hw]
    taps = kernel[0] * kernel[1]

    def window_read(ax: list, rv: list) -> Any:
        """x at the window position of output ``ax`` and kernel offset ``rv``; the lowest value
        outside the input (max pooling pads with it)."""
        idx, inside = list(ax), []
        for i, a in enumerate(hw):
            pos = _i64(ax[a]) * strides[i] + _i64(rv[i]) * dilation[i] - begin[i]
            inside += [pos >= 0, pos < _i64(sizes[i])]
            idx[a] = _clamp(pos, sizes[i])
        return te.select(te.all(*inside), x(*idx), te.min_value(x.dtype))

    if pool_type == "max":
        r1 = [te.reduce_axis((0, k), f"rv{i}") for i, k in enumerate(kernel)]
        peak = cpp_compute(g.shape, lambda ax: te.max(window_read(ax, r1), axis=r1), "pool_max")
        r2 = [te.reduce_axis((0, k), f"rw{i}") for i, k in enumerate(kernel)]
        first = cpp_compute(g.shape, lambda ax: te.min(te.select(
            window_read(ax, r2) == peak(*ax), _i64(r2[0]) * kernel[1] + _i64(r2[1]), _i64(taps)), axis=r2),
            "pool_argmax")

    def count(ax: list) -> Any:
        """How many elements the average of output ``ax`` divided by (as the forward counts)."""
        n: Any = None
        for i, a in enumerate(hw):
            start = _i64(ax[a]) * strides[i] - begin[i]
            stop = start + (kernel[i] - 1) * dilation[i] + 1
            lo, hi = (-begin[i], _i64(sizes[i]) + end[i]) if count_include_pad else (0, _i64(sizes[i]))
            span = te.floordiv(binary(tir.Min, stop, hi) - binary(tir.Max, start, lo) - 1, dilation[i]) + 1
            n = span if n is None else n * span
        return te.cast(binary(tir.Max, n, _i64(1)), x.dtype)

    rk = [te.reduce_axis((0, k), f"rk{i}") for i, k in enumerate(kernel)]

    def f(ax: list) -> Any:
        out_idx, valid = list(ax), []
        for i, a in enumerate(hw):
            num = _i64(ax[a]) + begin[i] - _i64(rk[i]) * dilation[i]
            o = te.floordiv(num, strides[i])
            valid += [num >= 0, te.floormod(num, strides[i]) == 0, o < _i64(outs[i])]
            out_idx[a] = _clamp(o, outs[i])
        if pool_type == "max":
            tap = _i64(rk[0]) * kernel[1] + _i64(rk[1])
            hit = te.all(*valid, first(*out_idx) == tap)
            value = g(*out_idx)
        else:
            hit = te.all(*valid)
            value = g(*out_idx) / count(out_idx)
        return te.sum(te.select(hit, value, te.const(0, x.dtype)), axis=rk)

    return cpp_compute(x.shape, f, f"{pool_type}_pool2d_backward")


def _legalize_pool2d_backward(pool_type: str) -> Any:
    """The pooling gradient, in the data's layout (TVM's legalization ignores ``out_layout`` too)."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        return bb.call_te(_te_pool2d_backward, call.args[0], call.args[1], tuple(a["pool_size"]), tuple(a["strides"]),
                          tuple(a["dilation"]), tuple(a["padding"]), pool_type, a["count_include_pad"], a["layout"],
                          primfunc_name_hint=f"{pool_type}_pool2d_backward")

    return legalize


register_legalize("relax.grad.max_pool2d_backward", _legalize_pool2d_backward("max"))
register_legalize("relax.grad.avg_pool2d_backward", _legalize_pool2d_backward("avg"))
