"""Convolutions other than conv2d (``R.nn.conv1d``, ``R.nn.conv3d``, the transposed ones), each declared with its
legalization through ``topi.nn.conv``. As in TVM, the layouts are permutations of the canonical
ones (NCW / OIW, NCDHW / OIDHW) and the legalization needs the output layout to be the input's."""
from __future__ import annotations

from typing import Any

from .. import topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, can_prove_not_equal, format_expr, int64, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.op import AttrField, OpError, OpPattern, register_op
from ..ir.struct_info import sinfo_of
from ._common import op_name, tensor_like, to_dtype, to_int, to_layout, to_n_tuple, to_padding
from .legalization import (Check, arg_text, call_te_checked, dim_text, register_legalize, require_equal, shape_text,
                           site_text)
from .nn import _from_canonical, _to_canonical, _window_out, conv_operands

# TVM's names of the output axes of a convolution, in canonical order (N, C, then spatial).
CONV_AXES = ("nn", "ff", "yy", "xx", "zz")


def _register_conv(dims: int) -> None:
    """Register ``relax.nn.conv{dims}d`` and its legalization."""
    spatial = "DHW"[3 - dims:]
    data_canon, kernel_canon = "NC" + spatial, "OI" + spatial
    name = f"nn.conv{dims}d"

    def infer(call: rx.Call) -> rx.StructInfo:
        data, weight, a, out_dtype, out_layout = conv_operands(call)
        groups = a["groups"]
        if data.shape is None or weight.shape is None:
            return tensor_like(data, None, out_dtype, dims + 2)
        n, c, *sizes = _to_canonical(data.shape, a["data_layout"], data_canon)
        o, i, *kernel = _to_canonical(weight.shape, a["kernel_layout"], kernel_canon)
        if can_prove_not_equal(c, simplify(tir.Mul(i, int64(groups)))):
            raise OpError(f"{op_name(call)}: the data has {format_expr(c)} input channels but the weight "
                          f"expects {format_expr(i)} x groups {groups}", 1)
        o_c = as_const_int(o)
        if o_c is not None and o_c % groups:
            raise OpError(f"{op_name(call)}: {o_c} output channels are not divisible by groups {groups}", 1)
        pad = a["padding"]
        out = [_window_out(call, sizes[k], pad[k] + pad[k + dims], kernel[k], a["strides"][k], a["dilation"][k])
               for k in range(dims)]
        return tensor_like(data, _from_canonical([n, o, *out], out_layout, data_canon), out_dtype)

    infer.__doc__ = f"{dims}-D convolution: ``(N, C, {', '.join(spatial)}) * (O, C/groups, ...) -> (N, O, ...)``."
    register_op(f"relax.{name}", inputs=("data", "weight"),
                attrs=(AttrField("strides", (1,) * dims, to_n_tuple(dims)),
                       AttrField("padding", (0,) * (2 * dims), to_padding(dims)),
                       AttrField("dilation", (1,) * dims, to_n_tuple(dims)), AttrField("groups", 1, to_int),
                       AttrField("data_layout", data_canon, to_layout(data_canon)),
                       AttrField("kernel_layout", kernel_canon, to_layout(kernel_canon)),
                       AttrField("out_layout", None, to_layout(data_canon, optional=True), fallback="data_layout"),
                       AttrField("out_dtype", "void", to_dtype)),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE)(infer)

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        if (a["out_layout"] or a["data_layout"]) != a["data_layout"]:
            return call  # topi's convolution writes in the input's layout
        out_dtype = sinfo_of(call).dtype  # type: ignore[attr-defined]

        def checks(data: Any, kernel: Any, *args: Any, **kwargs: Any) -> list[Check]:
            # The kernel's input channels times the groups are the data's channels.
            c = data.shape[a["data_layout"].index("C")]
            i = kernel.shape[a["kernel_layout"].index("I")]
            want = i if a["groups"] == 1 else simplify(tir.Mul(i, tir.IntImm(i.dtype, a["groups"])))
            return require_equal(c, want, lambda: (
                f"{site_text(call)}: {arg_text(call.args[0])} {shape_text(data.shape)} has {dim_text(c)} channels "
                f"but {arg_text(call.args[1])} {shape_text(kernel.shape)} takes {dim_text(want)}"))

        return call_te_checked(bb, checks, topi.nn.conv, call.args[0], call.args[1], list(a["strides"]),
                               list(a["padding"]), list(a["dilation"]), a["groups"], a["data_layout"],
                               a["kernel_layout"], out_dtype, axis_names=CONV_AXES[:dims + 2],
                               primfunc_name_hint=f"conv{dims}d")

    legalize.__doc__ = "``topi.nn.conv`` in the data layout (any other output layout is left alone)."
    register_legalize(f"relax.{name}", legalize)


_register_conv(1)
_register_conv(3)


# ---------------------------------------------------------------- transposed convolutions
def _register_conv_transpose(dims: int) -> None:
    """Register ``relax.nn.conv{dims}d_transpose`` (IO... kernel) and its legalization."""
    spatial = "DHW"[3 - dims:]
    data_canon, kernel_canon = "NC" + spatial, "IO" + spatial
    name = f"nn.conv{dims}d_transpose"

    def infer(call: rx.Call) -> rx.StructInfo:
        data, weight, a, out_dtype, out_layout = conv_operands(call)
        groups = a["groups"]
        if any(p >= s for p, s in zip(a["output_padding"], a["strides"])):
            raise OpError(f"{op_name(call)}: the output padding {list(a['output_padding'])} must be less than the "
                          f"strides {list(a['strides'])}", "output_padding")
        if data.shape is None or weight.shape is None:
            return tensor_like(data, None, out_dtype, dims + 2)
        n, c, *sizes = _to_canonical(data.shape, a["data_layout"], data_canon)
        i, o, *kernel = _to_canonical(weight.shape, a["kernel_layout"], kernel_canon)
        if can_prove_not_equal(c, i):
            raise OpError(f"{op_name(call)}: the data has {format_expr(c)} input channels but the weight "
                          f"takes {format_expr(i)}", 1)
        i_c = as_const_int(i)
        if i_c is not None and i_c % groups:
            raise OpError(f"{op_name(call)}: {i_c} input channels are not divisible by groups {groups}", 1)
        pad, out = a["padding"], []
        for k in range(dims):
            # (in - 1) * stride - padding + dilation * (kernel - 1) + output_padding + 1
            span = tir.Mul(int64(a["dilation"][k]), tir.Sub(kernel[k], int64(1)))
            size = tir.Mul(tir.Sub(sizes[k], int64(1)), int64(a["strides"][k]))
            out.append(simplify(tir.Add(tir.Add(tir.Sub(size, int64(pad[k] + pad[k + dims])), span),
                                        int64(a["output_padding"][k] + 1))))
            known = as_const_int(out[-1])
            if known is not None and known < 1:
                raise OpError(f"{op_name(call)}: the padding {list(pad)} leaves no output along {spatial[k]}", 0)
        channels = simplify(tir.Mul(o, int64(groups)))
        return tensor_like(data, _from_canonical([n, channels, *out], out_layout, data_canon), out_dtype)

    infer.__doc__ = f"{dims}-D transposed convolution: ``(N, C, ...) * (C, O/groups, ...) -> (N, O, ...)``."
    register_op(f"relax.{name}", inputs=("data", "weight"),
                attrs=(AttrField("strides", (1,) * dims, to_n_tuple(dims)),
                       AttrField("padding", (0,) * (2 * dims), to_padding(dims)),
                       AttrField("output_padding", (0,) * dims, to_n_tuple(dims)),
                       AttrField("dilation", (1,) * dims, to_n_tuple(dims)), AttrField("groups", 1, to_int),
                       AttrField("data_layout", data_canon, to_layout(data_canon)),
                       AttrField("kernel_layout", kernel_canon, to_layout(kernel_canon)),
                       AttrField("out_layout", None, to_layout(data_canon, optional=True), fallback="data_layout"),
                       AttrField("out_dtype", "void", to_dtype)),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE)(infer)

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        if (a["data_layout"], a["kernel_layout"], a["out_layout"] or a["data_layout"]) != (
                data_canon, kernel_canon, data_canon):
            return call  # as TVM, only the canonical layouts are legalized
        out_dtype = sinfo_of(call).dtype  # type: ignore[attr-defined]

        def checks(data: Any, kernel: Any, *args: Any, **kwargs: Any) -> list[Check]:
            c, i = data.shape[1], kernel.shape[0]
            return require_equal(c, i, lambda: (
                f"{site_text(call)}: {arg_text(call.args[0])} {shape_text(data.shape)} has {dim_text(c)} channels "
                f"but {arg_text(call.args[1])} {shape_text(kernel.shape)} takes {dim_text(i)}"))

        return call_te_checked(bb, checks, topi.nn.conv_transpose, call.args[0], call.args[1], list(a["strides"]),
                               list(a["padding"]), list(a["output_padding"]), list(a["dilation"]), a["groups"],
                               out_dtype, primfunc_name_hint=f"conv{dims}d_transpose")

    legalize.__doc__ = "``topi.nn.conv_transpose`` in the canonical layouts (others are left alone)."
    register_legalize(f"relax.{name}", legalize)


_register_conv_transpose(1)
_register_conv_transpose(2)
_register_conv_transpose(3)  # issue 16: R.nn.conv3d_transpose (NCDHW / IODHW)
