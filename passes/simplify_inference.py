"""SimplifyInference (TVM's Relay ``SimplifyInference``, on Relax): rewrite the normalisations
and dropout into their inference form, with ops later passes can fold and fuse.

- ``R.nn.batch_norm`` uses its moving statistics (every batch_norm is taken as in inference,
  whatever its ``training`` attribute says, as Relax's DecomposeOpsForInference does) and
  becomes one multiply and one add on the data, as Relay's pass unpacks it::

      scale = 1 / sqrt(moving_var + epsilon) * gamma          # gamma only when scale=True
      shift = -moving_mean * scale + beta                      # beta only when center=True
      out   = data * expand_dims(scale) + expand_dims(shift)   # aligned with the channel axis

  ``scale`` and ``shift`` depend on the parameters only, so FoldConstant turns them into two
  constants when the parameters are constants. The result tuple is (out, moving_mean,
  moving_var); a ``bn[0]`` binding receives the final add itself and ``bn[1]``/``bn[2]`` the
  moving statistics, so no tuple is left when the batch_norm is only used through them.
- ``R.nn.layer_norm`` becomes ``(x - mean(x)) / sqrt(variance(x) + epsilon) * gamma + beta``
  over its axes, as Relay's pass (and Relax's DecomposeOpsForTraining) decompose it.
- ``R.nn.dropout`` is the identity: ``d[0]`` is the data (a dropout whose mask is used stays).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..ir import relax as rx
from ..ir.expr_functor import ExprMutator, ExprVisitor
from ..ir.module import IRModule
from ..ir.op_api import const, op
from ..ir.struct_info import sinfo_of
from ..ops import get_op_def
from .infra import FunctionPass, PassContext, register_pass

__all__ = ["SimplifyInference"]

_BATCH_NORM = get_op_def("relax.nn.batch_norm").op
_LAYER_NORM = get_op_def("relax.nn.layer_norm").op
_DROPOUT = get_op_def("relax.nn.dropout").op


def _tensor_ndim(expr: rx.Expr) -> int:
    """The rank of a tensor expression (-1 when unknown)."""
    sinfo = sinfo_of(expr)
    return sinfo.ndim if isinstance(sinfo, rx.TensorStructInfo) else -1


def _scalar(value: float, like: rx.Expr) -> rx.Constant:
    """A rank-0 constant of ``like``'s dtype (a float32 epsilon is rounded to float32, as in TVM)."""
    return const(np.array(value, dtype=np.float64), sinfo_of(like).dtype)


def _positive_axes(axes: Sequence[int], ndim: int) -> list[int]:
    """Sorted non-negative axes."""
    return sorted(a + ndim if a < 0 else a for a in axes)


def _unit_axes(ndim: int, axes: Sequence[int]) -> list[int]:
    """The unit dims to insert into a tensor whose dims are the data's ``axes`` so that it
    broadcasts against the data (TVM's ExpandToMatchInput); none when the axes are trailing."""
    axes = _positive_axes(axes, ndim)
    if axes == list(range(ndim - len(axes), ndim)):
        return []  # broadcasting aligns trailing dims already
    return [i for i in range(ndim) if i not in axes]


class _ProjectionUses(ExprVisitor):
    """For each variable: the tuple indices it is projected at, and whether it is used whole
    (a use inside a nested function counts as whole: that is another scope)."""

    def __init__(self) -> None:
        self.indices: dict[rx.Var, set[int]] = {}
        self.whole: set[rx.Var] = set()
        self.depth = 0  # nesting of function literals

    def visit_function_(self, func: rx.Function) -> None:
        """Count the function nesting."""
        self.depth += 1
        super().visit_function_(func)
        self.depth -= 1

    def visit_tuple_getitem_(self, item: rx.TupleGetItem) -> None:
        """``t[i]`` uses field ``i`` of ``t`` only."""
        if isinstance(item.tuple_value, rx.Var) and self.depth <= 1:
            self.indices.setdefault(item.tuple_value, set()).add(item.index)
        else:
            super().visit_tuple_getitem_(item)

    def visit_var_(self, var: rx.Var) -> None:
        """Any other use of a variable uses all of it."""
        self.whole.add(var)

    visit_dataflow_var_ = visit_var_


class _InferenceSimplifier(ExprMutator):
    """Rewrites batch_norm, layer_norm and dropout calls into their inference form."""

    def __init__(self, mod: IRModule | None, uses: _ProjectionUses) -> None:
        super().__init__(mod)
        self.uses = uses
        # A decomposed tuple that is only projected: its fields, bound lazily (a field that is
        # not yet a leaf is bound by the first binding projecting it).
        self.fields: dict[rx.Var, list[rx.Expr]] = {}
        self.rewritten = 0

    # ---- the ops
    def visit_call_(self, call: rx.Call) -> rx.Expr:
        """Decompose a batch_norm or layer_norm call (arguments rewritten first)."""
        call = self.visit_expr_post_order(call)
        if call.op is _BATCH_NORM and _tensor_ndim(call.args[0]) >= 0:
            self.rewritten += 1
            out = self.builder_.emit(self._batch_norm(call))
            return rx.Tuple((out, call.args[3], call.args[4]))
        if call.op is _LAYER_NORM and _tensor_ndim(call.args[0]) >= 0:
            self.rewritten += 1
            return self._layer_norm(call)
        return call

    def _batch_norm(self, call: rx.Call) -> rx.Call:
        """``data * scale + shift`` with the scale and shift of the moving statistics."""
        data, gamma, beta, mean, var = call.args
        attrs = call.attrs
        bb = self.builder_
        std = bb.emit(op.sqrt(bb.emit(op.add(var, _scalar(attrs["epsilon"], data)))))
        scale = bb.emit(op.divide(_scalar(1.0, data), std))
        if attrs["scale"]:
            scale = bb.emit(op.multiply(scale, gamma))
        shift = bb.emit(op.multiply(bb.emit(op.negative(mean)), scale))
        if attrs["center"]:
            shift = bb.emit(op.add(shift, beta))
        ndim = _tensor_ndim(data)
        scale = self._align(scale, ndim, [attrs["axis"]])
        shift = self._align(shift, ndim, [attrs["axis"]])
        return op.add(bb.emit(op.multiply(data, scale)), shift)

    def _layer_norm(self, call: rx.Call) -> rx.Call:
        """``(x - mean) / sqrt(variance + epsilon) * gamma + beta`` over the normalised axes."""
        data, gamma, beta = call.args
        attrs = call.attrs
        axes, ndim = list(attrs["axes"]), _tensor_ndim(data)
        bb = self.builder_
        centered = bb.emit(op.subtract(data, bb.emit(op.mean(data, axis=axes, keepdims=True))))
        variance = bb.emit(op.variance(data, axis=axes, keepdims=True))
        std = bb.emit(op.sqrt(bb.emit(op.add(variance, _scalar(attrs["epsilon"], data)))))
        out: rx.Expr = op.divide(centered, std)
        if attrs["scale"]:
            out = op.multiply(bb.emit(out), self._align(gamma, ndim, axes))
        if attrs["center"]:
            out = op.add(bb.emit(out), self._align(beta, ndim, axes))
        return out

    def _align(self, expr: rx.Expr, ndim: int, axes: Sequence[int]) -> rx.Expr:
        """``expr`` (shaped like the data's ``axes``) made to broadcast against the data."""
        unit = _unit_axes(ndim, axes)
        return self.builder_.emit(op.expand_dims(expr, axis=unit)) if unit else expr

    # ---- tuples and their projections
    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """A decomposed tuple only ever projected is not bound; a projection of a leaf is not
        bound either (its uses see the leaf) unless that would leak a dataflow variable."""
        value = binding.value
        if self._only_projected(binding.var, value):
            self.fields[binding.var] = self._fields(binding.var, self.visit_expr_post_order(value))
            return
        if isinstance(value, rx.TupleGetItem) and value.tuple_value in self.fields:
            self._project(binding, value)
            return
        super().visit_var_binding_(binding)

    def _only_projected(self, var: rx.Var, value: rx.Expr) -> bool:
        """Whether ``var = value`` is a batch_norm or a dropout whose tuple need not exist."""
        if not isinstance(value, rx.Call) or var in self.uses.whole or _tensor_ndim(value.args[0]) < 0:
            return False
        if value.op is _DROPOUT:
            return self.uses.indices.get(var, set()) <= {0}  # the mask has no inference form here
        # An output of a dataflow block keeps its tuple: the fields are block-local variables.
        return value.op is _BATCH_NORM and (isinstance(var, rx.DataflowVar)
                                            or not self.builder_.current_block_is_dataflow())

    def _fields(self, var: rx.Var, call: rx.Call) -> list[rx.Expr]:
        """The fields of an only-projected call in inference form; in a dataflow block the final
        add of a batch_norm is left for the ``bn[0]`` binding to bind."""
        self.rewritten += 1
        if call.op is _DROPOUT:
            return [call.args[0]]
        out: rx.Expr = self._batch_norm(call)
        if not isinstance(var, rx.DataflowVar):
            out = self.builder_.emit(out)  # projections may be in other blocks
        return [out, call.args[3], call.args[4]]

    def _project(self, binding: rx.VarBinding, item: rx.TupleGetItem) -> None:
        """``v = t[i]`` of a decomposed tuple: ``v`` binds the field, or stands for it."""
        fields = self.fields[item.tuple_value]
        field = fields[item.index]
        if isinstance(field, rx.Var) and (isinstance(binding.var, rx.DataflowVar)
                                          or not isinstance(field, rx.DataflowVar)):
            self.set_var_remap(binding.var, field)
            return
        # A pending batch_norm result, a constant, or a block output aliasing a dataflow variable.
        self.reemit_binding(binding, self.builder_.normalize(field))
        fields[item.index] = self.get_var_remap(binding.var)  # later projections reuse it

    def visit_tuple_getitem_(self, item: rx.TupleGetItem) -> rx.Expr:
        """``t[i]`` used inside another expression: the field (bound first if needed)."""
        fields = self.fields.get(item.tuple_value)
        if fields is None:
            return super().visit_tuple_getitem_(item)
        if not isinstance(fields[item.index], rx.Var):
            fields[item.index] = self.builder_.emit(fields[item.index])
        return fields[item.index]


def simplify_inference(func: rx.Function, mod: IRModule | None = None) -> tuple[rx.Function, int]:
    """``func`` in inference form, and how many calls were rewritten."""
    uses = _ProjectionUses()
    uses.visit_expr(func)
    mutator = _InferenceSimplifier(mod, uses)
    new = mutator.visit_expr(func)
    return new, mutator.rewritten


class SimplifyInference(FunctionPass):
    """Rewrite batch_norm, layer_norm and dropout into their inference form (multiply/add...)."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        new, rewritten = simplify_inference(func, mod)
        self.stats["rewritten"] += rewritten
        return new if rewritten else func


register_pass("SimplifyInference", SimplifyInference)
