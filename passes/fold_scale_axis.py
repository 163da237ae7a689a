"""FoldScaleAxis (the forward direction of TVM Relay's pass of that name, on Relax): a constant
per-output-channel scale after a conv2d with constant weights moves into the weights.

After SimplifyInference and FoldConstant an inference batch norm is a multiply and an add by
constants, so a conv, its bias and its batch norm run four operations per output element::

    c = R.nn.conv2d(x, W)            # W a constant
    a = R.add(c, b)                  # optional: the conv's own bias, a constant
    y = R.multiply(a, s)             # s a constant that varies along the output channels only
    z = R.add(y, t)                  # t a constant

becomes ``z = R.add(R.nn.conv2d(x, W * s), b * s + t)``: one add per element left for the
kernel's epilogue (as ONNX Runtime fuses a batch norm into the conv before it runs). Each folded
value must have no other use and live in the same block; the scale must broadcast along the
output's channel axes only (``C`` and ``c`` of the conv's ``out_layout``), so ``W`` scales along
its ``O`` (and ``o``) axes. Two adds of constants in a row (``add(add(v, c1), c2)``, the first with
no other use) become one. Results agree with the unfolded graph up to float rounding."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..ir import relax as rx
from ..ir.expr_functor import ExprMutator, use_counts
from ..ir.layout import Layout, LayoutError
from ..ir.module import IRModule
from ..ir.op_api import const
from ..ir.struct_info import sinfo_of, static_shape
from ..ops import get_op_def
from .infra import FunctionPass, PassContext, register_pass

__all__ = ["FoldScaleAxis"]

_CONV2D = get_op_def("relax.nn.conv2d").op
_MULTIPLY = get_op_def("relax.multiply").op
_ADD = get_op_def("relax.add").op


def _channel_values(scale: np.ndarray, out_layout: Layout, out_shape: Sequence[int]) -> np.ndarray | None:
    """The value of ``scale`` for each output channel, in channel order (``C * c + c_inner``), when it
    broadcasts against the conv's output along its channel axes only; None otherwise."""
    if scale.ndim > len(out_shape) or not np.issubdtype(scale.dtype, np.floating):
        return None
    shape = (1,) * (len(out_shape) - scale.ndim) + scale.shape
    channel_axes = [i for i, (letter, _) in enumerate(out_layout.axes) if letter.upper() == "C"]
    for i, (dim, out_dim) in enumerate(zip(shape, out_shape)):
        if dim != 1 and (i not in channel_axes or dim != out_dim):
            return None
    full = np.broadcast_to(scale.reshape(shape), tuple(out_shape[i] if i in channel_axes else 1
                                                       for i in range(len(out_shape))))
    outer = [i for i, (letter, _) in enumerate(out_layout.axes) if letter == "C"]
    inner = [i for i, (letter, _) in enumerate(out_layout.axes) if letter == "c"]
    order = outer + inner + [i for i in range(full.ndim) if i not in outer + inner]
    return np.transpose(full, order).reshape(-1)


def _scaled_weights(weights: np.ndarray, kernel_layout: Layout, per_channel: np.ndarray) -> np.ndarray | None:
    """``weights`` times ``per_channel`` along the output channels (the ``O``/``o`` axes); None when
    the layout does not hold exactly that many output channels."""
    letters = [letter for letter, _ in kernel_layout.axes]
    if "O" not in letters or len(letters) != weights.ndim:
        return None
    o_outer = letters.index("O")
    o_inner = letters.index("o") if "o" in letters else None
    blocks = weights.shape[o_inner] if o_inner is not None else 1
    if weights.shape[o_outer] * blocks != per_channel.size:
        return None
    shape = [1] * weights.ndim
    shape[o_outer] = weights.shape[o_outer]
    if o_inner is not None:
        shape[o_inner] = blocks
    grid = per_channel.reshape(weights.shape[o_outer], blocks)
    if o_inner is not None and o_inner < o_outer:
        grid = grid.T
    return np.multiply(weights, grid.reshape(shape).astype(weights.dtype, copy=False))


def _split_constant(call: rx.Call) -> tuple[rx.Expr, rx.Constant] | None:
    """``(other, constant)`` of a binary call with exactly one constant operand, else None."""
    a, b = call.args
    if isinstance(b, rx.Constant) and not isinstance(a, rx.Constant):
        return a, b
    if isinstance(a, rx.Constant) and not isinstance(b, rx.Constant):
        return b, a
    return None


class _Planner:
    """Walks one binding block and decides each folded binding's new value and the bindings the
    fold leaves without a use."""

    def __init__(self, uses: dict[rx.Var, int]) -> None:
        self.uses = uses
        self.values: dict[rx.Var, rx.Expr] = {}  # the (planned) value of each binding of the block
        self.new_values: dict[rx.Var, rx.Expr] = {}
        self.dropped: set[rx.Var] = set()

    def plan_block(self, block: rx.BindingBlock) -> None:
        """Plan every binding of ``block`` in order."""
        self.values.clear()
        for binding in block.bindings:
            if not isinstance(binding, rx.VarBinding):
                continue
            value = binding.value
            if isinstance(value, rx.Call) and value.op in (_MULTIPLY, _ADD) and len(value.args) == 2:
                folded = self._fold(value)
                if folded is not None:
                    self.new_values[binding.var] = value = folded
            self.values[binding.var] = value

    def _single_use(self, expr: rx.Expr) -> rx.Expr | None:
        """The planned value of a variable of this block used once only, else None."""
        if not isinstance(expr, rx.Var) or self.uses.get(expr, 0) != 1:
            return None
        return self.values.get(expr)

    def _fold(self, call: rx.Call) -> rx.Expr | None:
        """The folded form of ``multiply(.., s)`` or ``add(add(v, c1), c2)``, or None."""
        split = _split_constant(call)
        if split is None:
            return None
        operand, constant = split
        value = self._single_use(operand)
        if not isinstance(value, rx.Call):
            return None
        if call.op is _ADD:
            inner = _split_constant(value) if value.op is _ADD else None
            if inner is None:
                return None
            self.dropped.add(operand)  # type: ignore[arg-type]
            total = np.add(inner[1].data, constant.data).astype(constant.data.dtype)
            return rx.Call(_ADD, (inner[0], const(total)), value.attrs, value.sinfo_args, span=call.span)
        if value.op is _CONV2D:
            conv = self._scaled_conv(value, constant)
            if conv is not None:
                self.dropped.add(operand)  # type: ignore[arg-type]
            return conv
        inner = _split_constant(value) if value.op is _ADD else None
        conv_value = self._single_use(inner[0]) if inner is not None else None
        if inner is None or not isinstance(conv_value, rx.Call) or conv_value.op is not _CONV2D \
                or _channel_values(inner[1].data, *self._out_layout(conv_value)) is None:
            return None
        conv = self._scaled_conv(conv_value, constant)
        if conv is None:
            return None
        self.dropped.update((operand, inner[0]))  # type: ignore[arg-type]
        bias = np.multiply(inner[1].data, constant.data).astype(constant.data.dtype)
        return rx.Call(_ADD, (conv, const(bias)), value.attrs, value.sinfo_args, span=call.span)

    @staticmethod
    def _out_layout(conv: rx.Call) -> tuple[Layout, tuple[int, ...]]:
        """The conv's output layout and shape (an empty shape when unknown)."""
        attrs = conv.attrs
        layout = attrs.get("out_layout") or attrs.get("data_layout") or "NCHW"
        return Layout.parse(str(layout)), static_shape(sinfo_of(conv)) or ()

    def _scaled_conv(self, conv: rx.Call, scale: rx.Constant) -> rx.Call | None:
        """``conv`` with its constant weights scaled by ``scale`` along the output channels, or None."""
        data, weights = conv.args
        if not isinstance(weights, rx.Constant) or scale.data.dtype != weights.data.dtype:
            return None
        try:
            out_layout, out_shape = self._out_layout(conv)
            kernel_layout = Layout.parse(str(conv.attrs.get("kernel_layout") or "OIHW"))
        except LayoutError:
            return None
        per_channel = _channel_values(scale.data, out_layout, out_shape) if out_shape else None
        scaled = _scaled_weights(weights.data, kernel_layout, per_channel) if per_channel is not None else None
        if scaled is None:
            return None
        return rx.Call(conv.op, (data, rx.Constant(scaled)), conv.attrs, conv.sinfo_args, span=conv.span)


class _Folder(ExprMutator):
    """Emits the planned values; the bindings they leave unused are not emitted."""

    def __init__(self, mod: IRModule | None, planner: _Planner) -> None:
        super().__init__(mod)
        self.planner = planner

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """A dropped binding disappears; a folded one gets its new value (a nested conv bound first)."""
        if binding.var in self.planner.dropped:
            return
        new = self.planner.new_values.get(binding.var)
        if new is None:
            super().visit_var_binding_(binding)
            return
        args = [self.builder_.emit(self.visit_expr(a)) if isinstance(a, rx.Call) else self.visit_expr(a)
                for a in new.args]
        call = rx.Call(new.op, tuple(args), new.attrs, new.sinfo_args, span=new.span)
        self.reemit_binding(binding, self.builder_.normalize(call))


def fold_scale_axis(func: rx.Function, mod: IRModule | None = None) -> tuple[rx.Function, int]:
    """``func`` with its channel scales folded into conv weights, and how many bindings were folded."""
    planner = _Planner(use_counts(func))
    body = func.body
    for block in body.blocks if isinstance(body, rx.SeqExpr) else ():
        planner.plan_block(block)
    if not planner.new_values:
        return func, 0
    return _Folder(mod, planner).visit_expr(func), len(planner.new_values)


class FoldScaleAxis(FunctionPass):
    """Fold constant per-channel scales (an inference batch norm's) into the conv2d weights before them."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        new, folded = fold_scale_axis(func, mod)
        self.stats["folded"] += folded
        return new


register_pass("FoldScaleAxis", FoldScaleAxis)
