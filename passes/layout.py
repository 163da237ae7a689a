"""ConvertLayout and AlterOpLayout: run 2-D convolutions in other (typically packed) layouts.

``ConvertLayout({"relax.nn.conv2d": ["NCHW8c", "OIHW8i8o"]})`` (TVM's Relax pass) rewrites every
``R.nn.conv2d`` of a dataflow block to the desired data and kernel layouts; the output takes the
data layout. Transforms are inserted at the edges only (``R.permute_dims`` between orders of the
same axes such as NCHW and NHWC, as TVM writes them, else ``R.layout_transform``): the layout follows
the result through the layout-agnostic ops after the convolution (elementwise ops such as relu,
broadcasting ones such as an add of a bias, whose other operand is transformed to match,
reductions over given axes that are not split (a mean over H, W of NCHW16c), renumbered, concat of
a permuted layout, and 2-D pools, run in the layout: ``layout="NCHW16c", out_layout="NCHW16c"``
as TVM writes them), so a chain conv -> add -> relu -> max pool -> conv stays packed and is transformed back once, where an op that is
not layout-agnostic (or a block output) uses it. Transforms of constant weights and biases are
constant expressions: FoldConstant turns them into packed constants.

``AlterOpLayout(vector_width=None)`` (Relay's pass for x86) picks the packing itself: the data is
packed in blocks of ``ic_bn`` channels, the output in blocks of ``oc_bn`` channels (``NCHW{ic_bn}c``,
``OIHW{ic_bn}i{oc_bn}o``, ``NCHW{oc_bn}c``), each the largest divisor of the channel count not
above the vector width in elements: the width in 32-bit lanes (16 with AVX-512, 8 with AVX/AVX2,
else 4, of the host CPU) scaled to the dtype. The argument, else the
PassContext config ``"relax.AlterOpLayout.vector_width"``, overrides the host's width (which
``ir/target.py``, the one place that asks the machine, detects: passes do not query it).

Convolutions are left as they are when a desired layout does not divide the channel counts (no
padding is inserted), when packing a grouped convolution, when a channel count is unknown, or
when the convolution is already in a packed layout. Only dataflow blocks are rewritten."""
from __future__ import annotations

from typing import Callable, Mapping, Sequence, TypeVar

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, int64
from ..ir.dtype import parse_dtype
from ..ir.expr_functor import ExprMutator
from ..ir.layout import Layout, LayoutError
from ..ir.module import IRModule
from ..ir.op import OpPattern
from ..ir.op_api import op
from ..ir.struct_info import sinfo_of
from ..ir.target import host_vector_width
from ..ops import find_op_def, get_op_def, make_call
from .infra import FunctionPass, PassContext, register_pass

__all__ = ["ConvertLayout", "AlterOpLayout", "PackConv2d", "host_vector_width", "VECTOR_WIDTH_CONFIG"]

VECTOR_WIDTH_CONFIG = "relax.AlterOpLayout.vector_width"
_CONV2D = get_op_def("relax.nn.conv2d").op
_POSITIONS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # TVM's InitialLayout: one letter per dimension
# Reductions over an ``axis`` attribute, which follow a permuted layout by renumbering it.
_CONCAT = get_op_def("relax.concat").op
_REDUCTIONS = frozenset({"relax.sum", "relax.mean", "relax.max", "relax.min", "relax.prod", "relax.std",
                         "relax.variance"})
# 2-D pools, which run in any layout of their data's axes (NCHW16c too, as TVM's ConvertLayout
# writes them: layout and out_layout both the packed one).
_POOLS = frozenset({"relax.nn.max_pool2d", "relax.nn.avg_pool2d", "relax.nn.adaptive_avg_pool2d"})
_T = TypeVar("_T")

# (data_layout, kernel_layout, out_layout) for a conv2d, from its call and its data (NCHW) and
# weight (OIHW) dims; None leaves the call alone.
LayoutChoice = Callable[[rx.Call, Sequence[tir.PrimExpr], Sequence[tir.PrimExpr]], "tuple[str, str, str] | None"]


def _initial(ndim: int) -> Layout:
    """The layout of a tensor as the program wrote it, one positional letter per dimension."""
    return Layout.parse(_POSITIONS[:ndim])


def _canonical_dims(shape: Sequence[tir.PrimExpr], layout: str, canonical: str) -> list[tir.PrimExpr]:
    """The dims of an unpacked ``layout`` reordered to ``canonical`` (NHWC -> NCHW)."""
    return [shape[layout.index(c)] for c in canonical]


def _divides(dim: tir.PrimExpr, factor: int | None) -> bool:
    """True when ``dim`` is a known multiple of ``factor`` (or nothing is split)."""
    if factor is None:
        return True
    n = as_const_int(dim)
    return n is not None and n % factor == 0


class _LayoutRewriter(ExprMutator):
    """Rewrites conv2d calls to the chosen layouts and lets the layout follow layout-agnostic ops.

    ``layouts`` maps each rewritten variable not in its written layout to its layout, spelled
    positionally (``ABCD8b``: dimension B split in blocks of 8); any other use of it goes through
    ``visit_var_``, which transforms it back (once per dataflow block)."""

    def __init__(self, mod: IRModule | None, choose: LayoutChoice, share_copies: bool = False) -> None:
        super().__init__(mod)
        self.choose = choose
        self.share_copies = share_copies  # reuse a packed copy too (TVM emits one per use)
        self.layouts: dict[rx.Var, Layout] = {}
        # Transformed copies emitted in the current dataflow block, by (variable, layout): a
        # tensor is transformed back once however many ops use it (forward too with share_copies).
        self.restored: dict[tuple[rx.Var, str], rx.Var] = {}
        self.in_dataflow = False
        self.converted = 0

    # ---- scopes and variables
    def visit_dataflow_block_(self, block: rx.DataflowBlock) -> rx.BindingBlock:
        """Rewrite inside dataflow blocks only; restored copies are local to their block."""
        return self._scoped(True, lambda: super(_LayoutRewriter, self).visit_dataflow_block_(block))

    def visit_function_(self, func: rx.Function) -> rx.Expr:
        """A function (nested ones too) starts outside any dataflow block."""
        return self._scoped(False, lambda: super(_LayoutRewriter, self).visit_function_(func))

    def _scoped(self, in_dataflow: bool, visit: Callable[[], _T]) -> _T:
        """Run ``visit`` with a fresh block state, restoring the enclosing one afterwards."""
        saved = self.in_dataflow, self.restored
        self.in_dataflow, self.restored = in_dataflow, {}
        try:
            return visit()
        finally:
            self.in_dataflow, self.restored = saved

    def visit_var_(self, var: rx.Var) -> rx.Expr:
        """A use by an op that is not layout-aware: the variable in its written layout."""
        new = super().visit_var_(var)
        layout = self.layouts.get(new) if isinstance(new, rx.Var) else None
        if layout is None:
            return new
        return self._emit_transform(new, layout, _initial(len(layout.primal)), share=True)

    visit_dataflow_var_ = visit_var_

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """Convert conv2d and layout-agnostic calls; block outputs leave in their written layout."""
        value = binding.value
        converted = None
        if self.in_dataflow and isinstance(value, rx.Call) and isinstance(value.op, rx.Op):
            if value.op is _CONV2D:
                converted = self._convert_conv2d(value)
            elif find_op_def(value.op).pattern in (OpPattern.ELEMWISE, OpPattern.BROADCAST):
                converted = self._follow_layout(value)
            elif value.op.name in _REDUCTIONS:
                converted = self._follow_reduction(value)
            elif value.op is _CONCAT:
                converted = self._follow_concat(value)
            elif value.op.name in _POOLS:
                converted = self._follow_pool(value)
        if converted is None:
            super().visit_var_binding_(binding)
            return
        new_value, layout = converted
        if layout.name == _initial(len(layout.primal)).name:  # back in the written layout
            self.reemit_binding(binding, new_value)
        elif isinstance(binding.var, rx.DataflowVar):
            self.reemit_binding(binding, new_value)
            self.layouts[self.get_var_remap(binding.var)] = layout
        else:
            packed = self.builder_.emit(new_value)
            self.layouts[packed] = layout
            self.reemit_binding(binding, self._transform(packed, layout, _initial(len(layout.primal))))

    # ---- helpers
    def _emit_transform(self, expr: rx.Expr, src: Layout, dst: Layout, share: bool = False,
                        letters: str | None = None) -> rx.Expr:
        """``expr`` transformed from ``src`` to ``dst`` and bound, a variable's copy reused when
        ``share`` or ``share_copies``; ``letters`` names ``dst``'s axes (NCHW) when not positional."""
        positional = dst.rename(letters, _POSITIONS[:len(letters)]).name if letters else dst.name
        key = (expr, positional) if isinstance(expr, rx.Var) and (share or self.share_copies) else None
        copy = self.restored.get(key) if key is not None else None  # type: ignore[arg-type]
        if copy is None:
            copy = self.builder_.emit(self._transform(expr, src, dst))
            if key is not None:
                self.restored[key] = copy  # type: ignore[index]
        return copy

    def _transform(self, expr: rx.Expr, src: Layout, dst: Layout) -> rx.Expr:
        """``expr`` from layout ``src`` to ``dst`` (normalised, not bound): ``R.permute_dims`` when
        both are orders of the same primal axes (NCHW <-> NHWC, as TVM writes it), else
        ``R.layout_transform``."""
        if not src.is_packed and not dst.is_packed and sorted(src.name) == sorted(dst.name):
            axes = [src.name.index(letter) for letter in dst.name]
            return self.builder_.normalize(op.permute_dims(expr, axes=axes))
        return self.builder_.normalize(op.layout_transform(expr, index_map=src.index_map_to(dst)))

    def _current(self, arg: rx.Expr) -> tuple[rx.Expr, Layout | None]:
        """An argument as rewritten so far (not restored) and its layout (None when as written)."""
        if isinstance(arg, rx.Var):
            new = self.get_var_remap(arg)
            return new, self.layouts.get(new)
        return arg, None

    # ---- conv2d
    def _convert_conv2d(self, call: rx.Call) -> tuple[rx.Expr, Layout] | None:
        """The conv2d in the chosen layouts and its result's layout; None to leave it alone."""
        a = call.attrs
        written = (a["data_layout"], a["kernel_layout"], a["out_layout"] or a["data_layout"])
        if any(Layout.parse(w).is_packed for w in written):
            return None  # already packed by hand: keep it as written
        shapes = [getattr(sinfo_of(arg), "shape", None) for arg in call.args[:2]]
        if shapes[0] is None or shapes[1] is None:
            return None  # channel counts unknown
        data_dims = _canonical_dims(shapes[0], written[0], "NCHW")
        weight_dims = _canonical_dims(shapes[1], written[1], "OIHW")
        choice = self.choose(call, data_dims, weight_dims)
        if choice is None or tuple(choice) == written:
            return None
        new_args = []
        for arg, lay, want in zip(call.args, written[:2], choice[:2]):
            cur, positional = self._current(arg)
            # The current layout spelled in the call's letters (ABCD8b -> NCHW8c).
            now = (positional or _initial(len(lay))).rename(_POSITIONS[:len(lay)], lay)
            target = Layout.parse(want)
            if now.name != target.name:
                cur = self._emit_transform(cur, now, target, letters=lay)
            new_args.append(cur)
        self.converted += 1
        new = op.nn.conv2d(new_args[0], new_args[1], strides=a["strides"], padding=a["padding"],
                           dilation=a["dilation"], groups=a["groups"], data_layout=choice[0],
                           kernel_layout=choice[1], out_layout=choice[2], out_dtype=a["out_dtype"])
        return new, Layout.parse(choice[2]).rename(written[2], _POSITIONS[:4])

    # ---- layout-agnostic ops
    def _follow_layout(self, call: rx.Call) -> tuple[rx.Expr, Layout] | None:
        """An elementwise or broadcasting call on a converted tensor, run in that tensor's layout
        with its other operands transformed to match; None when some operand cannot follow."""
        out = sinfo_of(call)
        current = [self._current(arg) for arg in call.args]
        target = next((lay for _, lay in current if lay is not None), None)
        if target is None or not isinstance(out, rx.TensorStructInfo) or out.ndim != len(target.primal):
            return None
        if not all(self._can_follow(arg, lay, target) for arg, (_, lay) in zip(call.args, current)):
            return None
        new_args = tuple(self._to_layout(arg, cur, lay, target) for arg, (cur, lay) in zip(call.args, current))
        new = rx.Call(call.op, new_args, call.attrs, call.sinfo_args, span=call.span)
        return self.builder_.normalize(new), target

    def _follow_reduction(self, call: rx.Call) -> tuple[rx.Expr, Layout] | None:
        """A reduction over given axes of a converted tensor (NHWC, NCHW16c), run in that layout
        with its axes renumbered, as TVM does (``R.sum(r, axis=[3])``); its result keeps the
        remaining axes' order. None for a reduction over a split axis or without ``axis``."""
        cur, layout = self._current(call.args[0])
        axis = call.attrs.get("axis")
        if layout is None or axis is None or len(call.args) != 1:
            return None
        ndim = len(layout.primal)
        reduced = {_POSITIONS[int(a) % ndim] for a in axis}
        if any(layout.factor(letter.lower()) for letter in reduced):
            return None  # a reduction over a split axis would need both of its parts
        letters = [a for a, _ in layout.axes]
        attrs = dict(call.attrs.items())
        attrs["axis"] = sorted(letters.index(letter) for letter in reduced)
        new = make_call(call.op, (cur,), attrs, call.sinfo_args)
        if attrs.get("keepdims"):
            return new, layout
        rank = sorted(a for a in layout.primal if a not in reduced)  # the written order of the kept axes
        kept = [(_POSITIONS[rank.index(a.upper())], f) for a, f in layout.axes if a.upper() not in reduced]
        return new, Layout.parse("".join(a if f is None else f"{f}{a.lower()}" for a, f in kept))

    def _follow_pool(self, call: rx.Call) -> tuple[rx.Expr, Layout] | None:
        """A 2-D pool written in NCHW of a converted tensor, run in that tensor's layout (NCHW16c,
        NHWC), its output in the same layout; None for a pool written in another layout."""
        cur, layout = self._current(call.args[0])
        written = call.attrs["layout"]
        if layout is None or written != "NCHW" or (call.attrs["out_layout"] or written) != written:
            return None
        if len(layout.primal) != 4:
            return None
        now = layout.rename(_POSITIONS[:4], written).name
        new = make_call(call.op, (cur,), {**dict(call.attrs.items()), "layout": now, "out_layout": now},
                        call.sinfo_args)
        return new, layout

    def _follow_concat(self, call: rx.Call) -> tuple[rx.Expr, Layout] | None:
        """A concat whose first tensor was converted to a permuted layout, run in it along the
        renumbered axis, the other tensors transformed to it (TVM's ConvertLayout follows the
        first input); None otherwise."""
        fields = call.args[0].fields if isinstance(call.args[0], rx.Tuple) else None
        if not fields:
            return None
        current = [self._current(f) for f in fields]
        target = current[0][1]
        if target is None or target.is_packed or not all(
                self._can_follow(f, lay, target) and getattr(sinfo_of(f), "ndim", -1) == len(target.primal)
                for f, (_, lay) in zip(fields, current)):
            return None
        axis = target.name.index(_POSITIONS[int(call.attrs["axis"]) % len(target.name)])
        tensors = tuple(self._to_layout(f, cur, lay, target) for f, (cur, lay) in zip(fields, current))
        new = rx.Call(call.op, (rx.Tuple(tensors),), call.attrs.set("axis", axis), call.sinfo_args, span=call.span)
        return self.builder_.normalize(new), target

    def _can_follow(self, arg: rx.Expr, layout: Layout | None, target: Layout) -> bool:
        """Whether operand ``arg`` (original form) can be brought to ``target``: a scalar, a
        tensor in ``target`` already, or a broadcastable tensor whose split dims divide evenly."""
        if isinstance(arg, rx.PrimValue):
            return True
        if not isinstance(arg, (rx.Var, rx.Constant)):
            return False
        sinfo = sinfo_of(arg)
        if not isinstance(sinfo, rx.TensorStructInfo) or sinfo.ndim < 0:
            return False
        if sinfo.ndim == 0 or (layout is not None and layout.name == target.name):
            return True
        rank = len(target.primal)
        if sinfo.shape is None or sinfo.ndim > rank or (layout is not None and sinfo.ndim != rank):
            return False  # a converted operand maps to the target only over the same axes
        aligned = [int64(1)] * (rank - sinfo.ndim) + list(sinfo.shape)  # numpy broadcasting aligns right
        return target.splits_evenly([aligned[_POSITIONS.index(p)] for p in target.primal], allow_one=True)

    def _to_layout(self, arg: rx.Expr, cur: rx.Expr, layout: Layout | None, target: Layout) -> rx.Expr:
        """Operand ``cur`` (rewritten ``arg``) in ``target``: padded with leading unit dims to the
        target's rank, then transformed."""
        ndim = 0 if isinstance(arg, rx.PrimValue) else sinfo_of(arg).ndim  # type: ignore[union-attr]
        if ndim == 0:
            return cur
        if layout is not None:
            return cur if layout.name == target.name else self._emit_transform(cur, layout, target)
        rank = len(target.primal)
        if ndim < rank:
            cur = self.builder_.emit(op.expand_dims(cur, axis=list(range(rank - ndim))))
        # A dim of 1 broadcasts: splitting it would pad its block with values that are not the
        # operand's, so its block axis gets size 1 instead (added after a transform without it).
        dims = sinfo_of(cur).shape  # type: ignore[union-attr]
        ones = {a.lower() for a, d in zip(_POSITIONS, dims) if as_const_int(d) == 1 and target.factor(a)}
        kept = Layout.parse("".join(a if f is None else f"{f}{a}" for a, f in target.axes if a not in ones))
        if kept.name != _initial(rank).name:
            cur = self._emit_transform(cur, _initial(rank), kept)
        block_axes = [k for k, (a, _) in enumerate(target.axes) if a in ones]
        if block_axes:
            cur = self.builder_.emit(op.expand_dims(cur, axis=block_axes))
        return cur


def _rewrite(func: rx.Function, mod: IRModule, choose: LayoutChoice,
             share_copies: bool = False) -> tuple[rx.Function, int]:
    """``func`` with its convolutions in the chosen layouts, and how many were converted."""
    rewriter = _LayoutRewriter(mod, choose, share_copies)
    new = rewriter.visit_expr(func)
    if not rewriter.converted or not isinstance(new, rx.Function):
        return func, 0
    return new, rewriter.converted


# ---------------------------------------------------------------- ConvertLayout
def _desired_choice(data_layout: str, kernel_layout: str) -> LayoutChoice:
    """The choice of ConvertLayout: the desired layouts when they split the channels evenly."""
    data, kernel = Layout.parse(data_layout), Layout.parse(kernel_layout)

    def choose(call: rx.Call, data_dims: Sequence[tir.PrimExpr],
               weight_dims: Sequence[tir.PrimExpr]) -> tuple[str, str, str] | None:
        if (data.is_packed or kernel.is_packed) and call.attrs["groups"] != 1:
            return None  # a block of channels would straddle two groups
        even = (_divides(data_dims[1], data.factor("C")) and _divides(weight_dims[0], kernel.factor("O"))
                and _divides(weight_dims[1], kernel.factor("I")) and _divides(weight_dims[0], data.factor("C")))
        return (data_layout, kernel_layout, data_layout) if even else None

    return choose


class ConvertLayout(FunctionPass):
    """Convert conv2d to the desired layouts (``{"relax.nn.conv2d": ["NCHW8c", "OIHW8i8o"]}``)."""

    opt_level = 0

    def __init__(self, desired_layouts: Mapping[str, Sequence[str]]) -> None:
        super().__init__()
        self.desired_layouts = {k: list(v) for k, v in desired_layouts.items()}
        unknown = set(self.desired_layouts) - {"relax.nn.conv2d"}
        if unknown:
            raise ValueError(f"ConvertLayout: only relax.nn.conv2d has desired layouts, got {sorted(unknown)}")
        conv = self.desired_layouts.get("relax.nn.conv2d")
        self._choose: LayoutChoice | None = None
        if conv is not None:
            if len(conv) != 2:
                raise ValueError(f"ConvertLayout: relax.nn.conv2d takes [data_layout, kernel_layout], got {conv}")
            for text, canonical in zip(conv, ("NCHW", "OIHW")):
                try:
                    primal = Layout.parse(text).primal
                except LayoutError as err:
                    raise ValueError(f"ConvertLayout: {err}") from None
                if sorted(primal) != sorted(canonical):
                    raise ValueError(f"ConvertLayout: layout {text!r} is not a layout of {canonical}")
            self._choose = _desired_choice(conv[0], conv[1])

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        if self._choose is None:
            return func
        new, converted = _rewrite(func, mod, self._choose)
        self.stats["converted"] += converted
        return new


# ---------------------------------------------------------------- AlterOpLayout
def _largest_divisor(n: int, bound: int) -> int:
    """The largest divisor of ``n`` not above ``bound``."""
    return next(b for b in range(min(n, bound), 0, -1) if n % b == 0)


def _vector_choice(width: int) -> LayoutChoice:
    """The choice of AlterOpLayout: channel blocks of the vector width (in elements of the dtype)."""

    def choose(call: rx.Call, data_dims: Sequence[tir.PrimExpr],
               weight_dims: Sequence[tir.PrimExpr]) -> tuple[str, str, str] | None:
        c, o = as_const_int(data_dims[1]), as_const_int(weight_dims[0])
        if c is None or o is None or call.attrs["groups"] != 1:
            return None
        bits = parse_dtype(sinfo_of(call.args[0]).dtype).bits or 32  # type: ignore[union-attr]
        lanes = max(1, width * 32 // bits)
        ic_bn, oc_bn = _largest_divisor(c, lanes), _largest_divisor(o, lanes)
        return f"NCHW{ic_bn}c", f"OIHW{ic_bn}i{oc_bn}o", f"NCHW{oc_bn}c"

    return choose


class AlterOpLayout(FunctionPass):
    """Pack conv2d channels in blocks of the target's vector width (NCHW8c / OIHW8i8o on AVX2)."""

    opt_level = 3

    def __init__(self, vector_width: int | None = None) -> None:
        super().__init__()
        if vector_width is not None and vector_width < 1:
            raise ValueError(f"AlterOpLayout: vector_width must be positive, got {vector_width}")
        self.vector_width = vector_width

    def width(self, ctx: PassContext) -> int:
        """The vector width in 32-bit lanes: the argument, the config key, else the host's."""
        if self.vector_width is not None:
            return self.vector_width
        configured = ctx.config.get(VECTOR_WIDTH_CONFIG)
        return int(configured) if configured is not None else host_vector_width()

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        new, converted = _rewrite(func, mod, _vector_choice(self.width(ctx)))
        self.stats["converted"] += converted
        return new


# ---------------------------------------------------------------- PackConv2d
PACK_BLOCKS = (16, 8)  # output-channel blocks of PackConv2d in 32-bit lanes, the first that divides


def _cpu_pack_choice(call: rx.Call, data_dims: Sequence[tir.PrimExpr],
                     weight_dims: Sequence[tir.PrimExpr]) -> tuple[str, str, str] | None:
    """PackConv2d's choice: output channels in blocks of one 64-byte vector (else half of one);
    input channels in blocks of the largest divisor up to that (all three of an RGB image)."""
    c, o = as_const_int(data_dims[1]), as_const_int(weight_dims[0])
    dtype = sinfo_of(call.args[0]).dtype  # type: ignore[union-attr]
    if c is None or o is None or call.attrs["groups"] != 1 or not dtype.startswith(("float", "bfloat")):
        return None
    bits = parse_dtype(dtype).bits or 32
    blocks = [b * 32 // bits for b in PACK_BLOCKS]
    oc_bn = next((b for b in blocks if o % b == 0), None)
    if oc_bn is None:
        return None  # a vector of output channels is what the packed schedule is built on
    ic_bn = _largest_divisor(c, blocks[0])
    return f"NCHW{ic_bn}c", f"OIHW{ic_bn}i{oc_bn}o", f"NCHW{oc_bn}c"


class PackConv2d(FunctionPass):
    """Pack float conv2d for the CPU's vector registers, whatever the host (NCHW16c / OIHW16i16o for
    float32; the default pipeline's choice, so its output does not depend on the machine); a
    tensor two convolutions read is packed once."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        new, converted = _rewrite(func, mod, _cpu_pack_choice, share_copies=True)
        self.stats["converted"] += converted
        return new


register_pass("ConvertLayout", ConvertLayout)
register_pass("PackConv2d", PackConv2d)
register_pass("AlterOpLayout", AlterOpLayout)
