"""``R.grad.*``: the ops TVM's Gradient pass writes. ``no_grad``, ``start_checkpoint`` and
``end_checkpoint`` mark values and are the value itself (they legalize to their input); the
``*_backward`` ops give the gradient with respect to an input of nll_loss, max/avg_pool2d and take,
whose struct info is that input's (TVM's rule: the inference returns it and checks nothing)."""
from __future__ import annotations

from ..ir import relax as rx
from ..ir.block_builder import BlockBuilder
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
