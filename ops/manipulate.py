"""Shape manipulation: permute_dims, reshape, expand_dims, squeeze, flatten, concat, split,
strided_slice, take, broadcast_to, layout_transform, tile, repeat, flip, stack, meshgrid,
reverse_sequence, collapse_sum_like and collapse_sum_to, each declared with its legalization."""
from __future__ import annotations

from typing import Any

from .. import te, topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import (IndexMap, as_const_int, can_prove_equal, can_prove_not_equal, ceildiv, format_expr,
                        format_shape, int64, is_const_int, prod, simplify, total)
from ..ir.block_builder import BlockBuilder
from ..ir.dtype import parse_dtype
from ..ir.node import Map
from ..ir.op import AttrField, InputForm, OpError, OpPattern, make_call, register_op
from ..ir.op_api import call_tir
from ..ir.regions import infer_access_regions
from ..ir.stmt_functor import substitute
from ..ir.struct_info import sinfo_of
from ..te.expr import expr_vars
from ._common import (arg_sinfo, binary_dtype, describe, normalize_axes, normalize_axis, op_name,
                      prim_int_values, require_integer, shape_arg, shape_values, tensor_arg,
                      tensor_like, to_bool, to_int, to_int_tuple, to_opt_int, to_opt_int_tuple, to_str, tuple_of_tensors)
from .legalization import (Check, arg_text, call_te_checked, dim_text, prim_values, register_legalize,
                           require_equal, require_indices, require_le, shape_text, site_text, tuple_fields)


# ---------------------------------------------------------------- permute_dims, reshape
@register_op("relax.permute_dims", inputs=("x",), attrs=(AttrField("axes", None, to_opt_int_tuple),),
             pattern=OpPattern.INJECTIVE)
def _permute_dims(call: rx.Call) -> rx.StructInfo:
    """The dimensions reordered by ``axes`` (reversed when ``axes=None``)."""
    x = tensor_arg(call, 0)
    axes = call.attrs["axes"]
    ndim = x.ndim if axes is None else len(axes)
    if axes is not None and x.ndim >= 0 and len(axes) != x.ndim:
        raise OpError(f"{op_name(call)}: axes {list(axes)} has {len(axes)} entries for a tensor "
                      f"of {x.ndim} dimensions", "axes")
    if ndim < 0:
        return tensor_like(x, None, ndim=-1)
    order = list(reversed(range(ndim))) if axes is None else normalize_axes(call, axes, ndim, "axes")
    if x.shape is None:
        return tensor_like(x, None, ndim=ndim)
    return tensor_like(x, [x.shape[a] for a in order])


def _product_text(shape: tuple[Any, ...]) -> str:
    """A shape and, when known, its element count: ``(2, 3) (6 elements)``."""
    n = as_const_int(prod(shape))
    return f"{format_shape(shape)}" + (f" ({n} elements)" if n is not None else "")


def _fill_reshape_hole(call: rx.Call) -> rx.Call:
    """``R.reshape(x, (-1, 4))`` with the -1 replaced by the length it stands for, as TVM's
    reshape does when it is built: the IR never holds a -1, which would print as an
    ``R.shape([-1])`` that is not a valid shape. (Kept when the input's shape is unknown.)"""
    shape = call.args[1] if len(call.args) > 1 else None
    out = call.struct_info
    if (isinstance(shape, rx.ShapeExpr) and isinstance(out, rx.TensorStructInfo) and out.shape is not None
            and any(isinstance(d, tir.IntImm) and d.value == -1 for d in shape.values)):
        dims = tuple(out.shape)
        new_shape = rx.ShapeExpr(dims, struct_info=rx.ShapeStructInfo(dims, len(dims)))
        return make_call(call.op, (call.args[0], new_shape), call.attrs, call.sinfo_args, span=call.span)
    return call


@register_op("relax.reshape", inputs=("x", "shape"), input_forms={"shape": InputForm.SHAPE}, pattern=OpPattern.INJECTIVE,
             script_normalize=_fill_reshape_hole)
def _reshape(call: rx.Call) -> rx.StructInfo:
    """The new shape; one ``-1`` takes the remaining size, the element count must be kept."""
    x = tensor_arg(call, 0)
    target = shape_arg(call, 1)
    values = shape_values(target)
    if values is None:
        return tensor_like(x, None, ndim=target.ndim)
    holes = [i for i, d in enumerate(values) if is_const_int(d) and as_const_int(d) < 0]
    if len(holes) > 1 or any(as_const_int(values[i]) != -1 for i in holes):
        raise OpError(f"{op_name(call)}: the new shape {format_shape(values)} may contain one -1 and "
                      f"no other negative size", 1)
    if x.shape is None:
        if holes:  # as TVM: the -1 cannot be resolved (nor printed) without the input's shape
            raise OpError(f"{op_name(call)}: a -1 in the new shape needs the input's shape, "
                          f"which is unknown", 1)
        return tensor_like(x, values)
    total = prod(x.shape)
    if holes:
        rest = prod(d for i, d in enumerate(values) if i != holes[0])
        t, r = as_const_int(total), as_const_int(rest)
        if t is not None and r is not None and (r == 0 or t % r):
            raise OpError(f"{op_name(call)}: cannot reshape {_product_text(x.shape)} into "
                          f"{format_shape(values)}", 1)
        out = list(values)
        out[holes[0]] = simplify(tir.FloorDiv(total, rest))
        return tensor_like(x, out)
    if can_prove_not_equal(total, prod(values)):
        raise OpError(f"{op_name(call)}: cannot reshape {_product_text(x.shape)} into "
                      f"{_product_text(values)}", 1)
    return tensor_like(x, values)


# ---------------------------------------------------------------- expand_dims, squeeze, flatten
@register_op("relax.expand_dims", inputs=("x",), attrs=(AttrField("axis", convert=to_int_tuple),),
             pattern=OpPattern.INJECTIVE)
def _expand_dims(call: rx.Call) -> rx.StructInfo:
    """Size-1 dimensions inserted at ``axis`` (positions in the output)."""
    x = tensor_arg(call, 0)
    axis = call.attrs["axis"]
    if x.ndim < 0:
        return tensor_like(x, None, ndim=-1)
    out_ndim = x.ndim + len(axis)
    new = set(normalize_axes(call, axis, out_ndim, "axis"))
    if x.shape is None:
        return tensor_like(x, None, ndim=out_ndim)
    dims = iter(x.shape)
    return tensor_like(x, [int64(1) if i in new else next(dims) for i in range(out_ndim)])


@register_op("relax.squeeze", inputs=("x",), attrs=(AttrField("axis", None, to_opt_int_tuple),),
             pattern=OpPattern.INJECTIVE)
def _squeeze(call: rx.Call) -> rx.StructInfo:
    """The shape without the given size-1 axes (all static size-1 axes when ``axis=None``)."""
    x = tensor_arg(call, 0)
    axis = call.attrs["axis"]
    if axis is None:
        if x.shape is None:
            return tensor_like(x, None, ndim=-1)
        if not all(is_const_int(d) for d in x.shape):
            return tensor_like(x, None, ndim=-1)  # a symbolic dim may or may not be 1
        return tensor_like(x, [d for d in x.shape if not is_const_int(d, 1)])
    if x.ndim < 0:
        return tensor_like(x, None, ndim=-1)
    drop = normalize_axes(call, axis, x.ndim, "axis")
    if x.shape is None:
        return tensor_like(x, None, ndim=x.ndim - len(drop))
    for a in drop:
        if is_const_int(x.shape[a]) and not is_const_int(x.shape[a], 1):
            raise OpError(f"{op_name(call)}: cannot squeeze axis {a} of {format_shape(x.shape)}: "
                          f"its size is {format_expr(x.shape[a])}, expected 1", "axis")
    return tensor_like(x, [d for i, d in enumerate(x.shape) if i not in drop])


@register_op("relax.flatten", inputs=("x",), pattern=OpPattern.INJECTIVE)
def _flatten(call: rx.Call) -> rx.StructInfo:
    """A 1-D tensor of all the elements."""
    x = tensor_arg(call, 0)
    if x.shape is None:
        return tensor_like(x, None, ndim=1)
    return tensor_like(x, [prod(x.shape)])


# ---------------------------------------------------------------- concat, split
@register_op("relax.concat", inputs=("tensors",), attrs=(AttrField("axis", 0, to_opt_int),),
             pattern=OpPattern.INJECTIVE)
def _concat(call: rx.Call) -> rx.StructInfo:
    """The tensors joined along ``axis`` (flattened first when ``axis=None``)."""
    tensors = tuple_of_tensors(call, "concatenate")
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = binary_dtype(call, dtype, t.dtype, 0)
    axis = call.attrs["axis"]
    if axis is None:
        if any(t.shape is None for t in tensors):
            return tensor_like(tensors[0], None, dtype, 1)
        return tensor_like(tensors[0], [total(prod(t.shape) for t in tensors)], dtype)
    ndims = {t.ndim for t in tensors if t.ndim >= 0}
    if len(ndims) > 1:
        raise OpError(f"{op_name(call)}: all tensors need the same number of dimensions, got "
                      f"{sorted(ndims)}", 0)
    if not ndims:
        return tensor_like(tensors[0], None, dtype, -1)
    ndim = ndims.pop()
    axis = normalize_axis(call, axis, ndim, "axis")
    if any(t.shape is None for t in tensors):
        return tensor_like(tensors[0], None, dtype, ndim)
    first = tensors[0].shape
    assert first is not None
    for i, t in enumerate(tensors[1:], 1):
        assert t.shape is not None
        for d in range(ndim):
            if d != axis and can_prove_not_equal(first[d], t.shape[d]):
                raise OpError(f"{op_name(call)}: tensors 0 and {i} have shapes {format_shape(first)} and "
                              f"{format_shape(t.shape)}, which differ outside axis {axis}", 0)
    out = list(first)
    out[axis] = total(t.shape[axis] for t in tensors)  # type: ignore[index]
    return tensor_like(tensors[0], out, dtype)


def _to_sections(value: Any) -> int | tuple[int, ...]:
    """A number of equal sections (int) or the split indices (list)."""
    if isinstance(value, (list, tuple)):
        return to_int_tuple(value)
    n = to_int(value)
    if n <= 0:
        raise OpError(f"the number of sections must be positive, got {n}")
    return n


@register_op("relax.split", inputs=("x",),
             attrs=(AttrField("indices_or_sections", convert=_to_sections), AttrField("axis", 0, to_int)),
             pattern=OpPattern.INJECTIVE)
def _split(call: rx.Call) -> rx.StructInfo:
    """A tuple of the pieces along ``axis``: equal sections (the last takes the rest) or cut at indices."""
    x = tensor_arg(call, 0)
    spec = call.attrs["indices_or_sections"]
    count = spec if isinstance(spec, int) else len(spec) + 1
    if x.ndim < 0:
        return rx.TupleStructInfo(tuple(tensor_like(x, None) for _ in range(count)))
    axis = normalize_axis(call, call.attrs["axis"], x.ndim, "axis")
    if isinstance(spec, int) and spec == 1:
        return rx.TupleStructInfo((x,))
    if x.shape is None:
        return rx.TupleStructInfo(tuple(tensor_like(x, None) for _ in range(count)))
    length = x.shape[axis]
    if isinstance(spec, int):
        const_len = as_const_int(length)
        if const_len is not None and const_len - -(-const_len // spec) * (spec - 1) < 0:
            # e.g. 1 into 3: pieces of ceil(1/3) = 1 leave the last one a negative length.
            raise OpError(f"{op_name(call)}: axis {axis} of length {const_len} cannot be split into "
                          f"{spec} sections", "indices_or_sections")
        piece = ceildiv(length, int64(spec))
        sizes = [piece] * (spec - 1) + [simplify(tir.Sub(length, tir.Mul(piece, int64(spec - 1))))]
    else:
        cuts = [int64(0), *(int64(i) for i in spec), length]
        sizes = []
        for lo, hi in zip(cuts, cuts[1:]):
            lo_c, hi_c = (simplify(tir.Min(c, length)) for c in (lo, hi))
            sizes.append(simplify(tir.Max(int64(0), tir.Sub(hi_c, lo_c))))
    pieces = []
    for size in sizes:
        shape = list(x.shape)
        shape[axis] = size
        pieces.append(tensor_like(x, shape))
    return rx.TupleStructInfo(tuple(pieces))


# ---------------------------------------------------------------- strided_slice, take
def _slice_length(call: rx.Call, b: tir.PrimExpr, e: tir.PrimExpr, s: tir.PrimExpr, dim: tir.PrimExpr,
                  inbound: bool) -> tir.PrimExpr | None:
    """Length of ``range(b, e, s)`` clipped to ``[0, dim)``; None when it cannot be decided."""
    cb, ce, cs, cd = (as_const_int(v) for v in (b, e, s, dim))
    if cs == 0:
        raise OpError(f"{op_name(call)}: a slice stride must not be 0", 4)
    if None not in (cb, ce, cs, cd):
        return int64(len(range(*slice(cb, ce, cs).indices(cd))))  # type: ignore[arg-type]
    if cs is None or cs < 0:
        return None
    bounds = []
    for v, c in ((b, cb), (e, ce)):
        if c is not None and c < 0:
            v = tir.Add(dim, int64(c))  # negative index counts from the end
        if not inbound:
            v = tir.Min(v, dim)
        bounds.append(v)
    return ceildiv(simplify(tir.Sub(bounds[1], bounds[0])), int64(cs))


@register_op("relax.strided_slice", inputs=("x", "axes", "begin", "end", "strides"), num_optional=1,
             attrs=(AttrField("assume_inbound", False, to_bool),), pattern=OpPattern.INJECTIVE)
def _strided_slice(call: rx.Call) -> rx.StructInfo:
    """The sliced shape: ``begin:end:strides`` on each of ``axes`` (tuples of ``R.prim_value``)."""
    x = tensor_arg(call, 0)
    axes = prim_int_values(call, 1)
    parts = [prim_int_values(call, i) for i in (2, 3)]
    const_axes = None if axes is None else [as_const_int(a) for a in axes]
    if const_axes is None or None in const_axes:
        return tensor_like(x, None)
    strides = prim_int_values(call, 4) if len(call.args) > 4 else [int64(1)] * len(const_axes)
    for i, vals in ((2, parts[0]), (3, parts[1]), (4, strides)):
        if vals is not None and len(vals) != len(const_axes):
            raise OpError(f"{op_name(call)}: {('begin', 'end', 'strides')[i - 2]} has {len(vals)} "
                          f"values for {len(const_axes)} axes", i)
    if x.ndim < 0:
        return tensor_like(x, None)
    norm = normalize_axes(call, const_axes, x.ndim, 1)  # type: ignore[arg-type]
    if x.shape is None or parts[0] is None or parts[1] is None or strides is None:
        return tensor_like(x, None)
    out = list(x.shape)
    for k, a in enumerate(norm):
        size = _slice_length(call, parts[0][k], parts[1][k], strides[k], x.shape[a],
                             call.attrs["assume_inbound"])
        if size is None:
            return tensor_like(x, None)
        out[a] = size
    return tensor_like(x, out)


def _take_mode(value: Any) -> str:
    """How out-of-range indices behave: fast, clip, wrap or nan."""
    mode = to_str(value)
    if mode not in ("fast", "clip", "wrap", "nan"):
        raise OpError(f"expected one of \"fast\", \"clip\", \"wrap\", \"nan\", got {mode!r}")
    return mode


@register_op("relax.take", inputs=("x", "indices"),
             attrs=(AttrField("axis", None, to_opt_int), AttrField("mode", "fast", _take_mode)),
             pattern=OpPattern.INJECTIVE)
def _take(call: rx.Call) -> rx.StructInfo:
    """Elements of ``x`` picked by integer ``indices`` along ``axis`` (``x`` must be 1-D without one);
    one index may be an ``R.Prim`` integer, which removes the axis (TVM's ``R.take(x, i, axis=1)``)."""
    x = tensor_arg(call, 0)
    index = sinfo_of(call.args[1])
    if isinstance(index, rx.PrimStructInfo):
        if not parse_dtype(index.dtype).is_integer:
            raise OpError(f"{op_name(call)}: the index must be an integer, got {index.dtype}", 1)
        axis = call.attrs["axis"]
        if axis is None:  # a flat index picks one element
            return tensor_like(x, [])
        if x.ndim < 0:
            return tensor_like(x, None, ndim=-1)
        axis = normalize_axis(call, axis, x.ndim, "axis")
        return tensor_like(x, None if x.shape is None else [*x.shape[:axis], *x.shape[axis + 1:]], ndim=x.ndim - 1)
    idx = tensor_arg(call, 1)
    require_integer(call, idx, 1, allow_bool=False)
    axis = call.attrs["axis"]
    if axis is None:
        if x.ndim not in (-1, 1):
            raise OpError(f"{op_name(call)}: without an axis the data must be 1-D, got {x.ndim}-D", "axis")
        axis = 0
        if x.ndim < 0:
            return tensor_like(x, idx.shape, ndim=idx.ndim)
    if x.ndim < 0 or idx.ndim < 0:
        return tensor_like(x, None, ndim=-1)
    axis = normalize_axis(call, axis, x.ndim, "axis")
    ndim = x.ndim - 1 + idx.ndim
    if x.shape is None or idx.shape is None:
        return tensor_like(x, None, ndim=ndim)
    return tensor_like(x, [*x.shape[:axis], *idx.shape, *x.shape[axis + 1:]])


# ---------------------------------------------------------------- broadcast_to, layout_transform
@register_op("relax.broadcast_to", inputs=("x", "shape"), input_forms={"shape": InputForm.SHAPE}, pattern=OpPattern.BROADCAST)
def _broadcast_to(call: rx.Call) -> rx.StructInfo:
    """The target shape, which ``x`` must broadcast to (numpy rules)."""
    x = tensor_arg(call, 0)
    target = shape_arg(call, 1)
    values = shape_values(target)
    if values is None:
        return tensor_like(x, None, ndim=target.ndim)
    if x.ndim > len(values):
        raise OpError(f"{op_name(call)}: cannot broadcast a {x.ndim}-D tensor to the {len(values)}-D "
                      f"shape {format_shape(values)}", 1)
    if x.shape is not None:
        for k in range(1, len(x.shape) + 1):
            d, t = x.shape[-k], values[-k]
            if not is_const_int(d, 1) and can_prove_not_equal(d, t):
                raise OpError(f"{op_name(call)}: cannot broadcast shape {format_shape(x.shape)} to "
                              f"{format_shape(values)}", 1)
    return tensor_like(x, values)


def _to_index_map(value: Any) -> IndexMap:
    """An IndexMap, or a Python function of the indices (``lambda i, j: (j, i)``)."""
    if isinstance(value, IndexMap):
        return value
    if callable(value):
        return IndexMap.from_func(value)
    raise OpError(f"expected an index map (T.index_map(lambda ...: ...)), got {value!r}")


def _to_pad_value(value: Any) -> Any:
    """None, a number or a ``R.prim_value``."""
    if value is None or isinstance(value, (rx.PrimValue, tir.IntImm, tir.FloatImm)):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OpError(f"expected a number, got {value!r}")
    return value


@register_op("relax.layout_transform", inputs=("x",),
             attrs=(AttrField("index_map", convert=_to_index_map), AttrField("pad_value", None, _to_pad_value),
                    AttrField("axis_separators", (), to_int_tuple),
                    AttrField("input_axis_separators", (), to_int_tuple)),
             pattern=OpPattern.INJECTIVE)
def _layout_transform(call: rx.Call) -> rx.StructInfo:
    """The shape given by the index map's range (affine maps with ``//`` and ``%`` by constants)."""
    x = tensor_arg(call, 0)
    imap: IndexMap = call.attrs["index_map"]
    if x.ndim >= 0 and x.ndim != len(imap.initial_indices):
        raise OpError(f"{op_name(call)}: the index map takes {len(imap.initial_indices)} indices but the "
                      f"tensor has {x.ndim} dimensions", "index_map")
    out_ndim = len(imap.final_indices)
    if x.shape is None:
        return tensor_like(x, None, ndim=out_ndim)
    shape = imap.map_shape(tuple(x.shape))
    return tensor_like(x, shape, ndim=out_ndim)


# Legalizations: each op's topi compute, as LegalizeOps turns its calls into R.call_tir.

_TRUE = tir.IntImm("bool", 1)


@register_legalize("relax.permute_dims")
def _legalize_permute_dims(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The transpose by ``axes`` (reversed when None)."""
    axes = call.attrs["axes"]
    return bb.call_te(topi.transpose, call.args[0], None if axes is None else list(axes))


def _legalize_to_result_shape(name: str) -> object:
    """Ops whose result is ``x``'s elements in the result's shape (reshape, flatten); the element
    counts must agree."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        def checks(x: te.Tensor, shape: list) -> list[Check]:
            count, want = prod(x.shape), prod([getattr(d, "expr", d) for d in shape])
            return require_equal(count, want, lambda: (
                f"{site_text(call)}: {arg_text(call.args[0])} of shape {shape_text(x.shape)} has {dim_text(count)} "
                f"elements, but the result shape {shape_text(shape)} has {dim_text(want)}"))

        return call_te_checked(bb, checks, topi.reshape, call.args[0], list(sinfo_of(call).shape),  # type: ignore
                               primfunc_name_hint=name)

    return legalize


register_legalize("relax.reshape", _legalize_to_result_shape("reshape"))
register_legalize("relax.flatten", _legalize_to_result_shape("reshape"))


@register_legalize("relax.broadcast_to")
def _legalize_broadcast_to(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``x`` broadcast to the result shape (each dim of ``x`` is the result's or 1)."""

    def checks(x: te.Tensor, shape: list, checked_at_run_time: bool) -> list[Check]:
        out: list[Check] = []
        offset = len(shape) - x.ndim
        for j, d in enumerate(x.shape):
            t = getattr(shape[j + offset], "expr", shape[j + offset])
            if not (is_const_int(d, 1) or can_prove_equal(d, t)):
                one = tir.IntImm(d.dtype, 1)
                cond = tir.Or(tir.EQ(d, t if t.dtype == d.dtype else tir.Cast(d.dtype, t)), tir.EQ(d, one))
                out.append(Check(
                    f"{site_text(call)}: dim {j} of {arg_text(call.args[0])} {shape_text(x.shape)} is {dim_text(d)}, "
                    f"which does not broadcast to {dim_text(t)} (dim {j + offset} of {shape_text(shape)}): it must "
                    f"be equal to it or 1", cond))
        return out

    return call_te_checked(bb, checks, topi.broadcast_to, call.args[0], list(sinfo_of(call).shape),  # type: ignore
                           checked_at_run_time=True, primfunc_name_hint="broadcast_to")


@register_legalize("relax.expand_dims")
def _legalize_expand_dims(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Size-1 dims inserted at ``axis``."""
    return bb.call_te(topi.expand_dims, call.args[0], list(call.attrs["axis"]), primfunc_name_hint="expand_dims")


@register_legalize("relax.squeeze")
def _legalize_squeeze(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Size-1 dims removed (a symbolic one must be 1 at run time)."""
    axis = call.attrs["axis"]

    def checks(x: te.Tensor, axes: list | None) -> list[Check]:
        out: list[Check] = []
        for a in axes or ():
            a = a + x.ndim if a < 0 else a
            out += require_equal(x.shape[a], tir.IntImm(x.shape[a].dtype, 1), lambda a=a: (
                f"{site_text(call)}: dim {a} of {arg_text(call.args[0])} {shape_text(x.shape)} is "
                f"{dim_text(x.shape[a])}, but squeeze removes only dims of size 1"))
        return out

    return call_te_checked(bb, checks, topi.squeeze, call.args[0], None if axis is None else list(axis))


@register_legalize("relax.concat")
def _legalize_concat(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The tuple's tensors joined along ``axis`` (their other dims must agree)."""
    fields = tuple_fields(bb, call.args[0])

    def checks(ts: list, axis: int | None) -> list[Check]:
        if axis is None:
            return []  # flattened first: any sizes join
        out: list[Check] = []
        first = ts[0]
        for i, t in enumerate(ts[1:], 1):
            for d, (a, b) in enumerate(zip(first.shape, t.shape)):
                if d != (axis + first.ndim if axis < 0 else axis):
                    out += require_equal(a, b, lambda i=i, d=d, a=a, b=b, t=t: (
                        f"{site_text(call)}: dim {d} of {arg_text(fields[0])} {shape_text(first.shape)} is "
                        f"{dim_text(a)} but dim {d} of {arg_text(fields[i])} {shape_text(t.shape)} is {dim_text(b)}; "
                        f"they must be equal"))
        return out

    return call_te_checked(bb, checks, topi.concatenate, fields, call.attrs["axis"])


@register_legalize("relax.split")
def _legalize_split(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The pieces along ``axis`` (a tuple result); one section is the input itself."""
    spec = call.attrs["indices_or_sections"]
    if isinstance(spec, int) and spec == 1:
        return call.args[0] if isinstance(sinfo_of(call), rx.TensorStructInfo) else rx.Tuple((call.args[0],))
    return bb.call_te(topi.split, call.args[0], spec if isinstance(spec, int) else list(spec), call.attrs["axis"])


@register_legalize("relax.strided_slice")
def _legalize_strided_slice(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Legalized when axes, begins, ends and strides are known integers; else left alone."""
    axes, begin, end = (prim_values(call.args[i]) for i in (1, 2, 3))
    strides = prim_values(call.args[4]) if len(call.args) > 4 else [tir.IntImm("int64", 1)] * len(axes or [])
    if axes is None or begin is None or end is None or strides is None:
        return call
    inbound = call.attrs["assume_inbound"]

    def checks(x: te.Tensor, begin: list, end: list, strides: list, axes: list, assume_inbound: bool) -> list[Check]:
        if not assume_inbound:
            return []  # the bounds are clamped to the dims
        out: list[Check] = []
        for a, b, e in zip(axes, begin, end):
            a = a + x.ndim if a < 0 else a
            dim = x.shape[a]
            b, e = (_from_end(getattr(v, "expr", v), dim) for v in (b, e))
            if as_const_int(dim) is not None and as_const_int(b) is not None and as_const_int(e) is not None:
                continue  # constant bounds are clamped by the slice itself
            out += require_le(tir.IntImm(dim.dtype, 0), b, lambda a=a, b=b: (
                f"{site_text(call)}: with assume_inbound=True the begin {dim_text(b)} of axis {a} must not be "
                f"negative"))
            out += require_le(e, dim, lambda a=a, e=e, dim=dim: (
                f"{site_text(call)}: with assume_inbound=True the end {dim_text(e)} of axis {a} must not exceed "
                f"its size {dim_text(dim)} ({arg_text(call.args[0])} {shape_text(x.shape)})"))
        return out

    return call_te_checked(bb, checks, topi.strided_slice, call.args[0], begin, end, strides,
                           [as_const_int(a) for a in axes], assume_inbound=inbound, primfunc_name_hint="strided_slice")


def _from_end(v: tir.PrimExpr, dim: tir.PrimExpr) -> tir.PrimExpr:
    """A slice bound with a negative constant counted from the end of ``dim`` (as the slice reads it)."""
    c = as_const_int(v)
    if c is not None and c < 0:
        return simplify(tir.Add(dim, tir.IntImm(dim.dtype, c)))
    return v if v.dtype == dim.dtype else tir.Cast(dim.dtype, v)


@register_legalize("relax.take")
def _legalize_take(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Elements at the indices along ``axis``, in the ``mode`` for out-of-range indices. In the
    default mode (``fast``) an index ``i`` counts from the end when negative, as in numpy, and each one
    is checked to lie in ``[-size, size)`` before any is used."""

    def checks(x: te.Tensor, indices: Any, axis: int | None, mode: str) -> list[Check]:
        if mode != "fast":
            return []  # clip, wrap and nan define every index
        size = prod(x.shape) if axis is None else x.shape[axis + x.ndim if axis < 0 else axis]
        x_name = arg_text(call.args[0])
        where = f"the flattened {x_name}" if axis is None else f"axis {axis} of {x_name}"
        return require_indices(indices, size, lambda: (
            f"{site_text(call)}: an index in {arg_text(call.args[1])} is out of range for {where} "
            f"{shape_text(x.shape)}, of size {dim_text(size)} (valid indices: -{dim_text(size)} to "
            f"{dim_text(simplify(tir.Sub(size, tir.IntImm(size.dtype, 1))))})"), "T_take_check")

    return call_te_checked(bb, checks, topi.take, call.args[0], call.args[1], call.attrs["axis"],
                           mode=call.attrs["mode"])


@register_legalize("relax.layout_transform")
def _legalize_layout_transform(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """A PrimFunc writing every input element where the index map sends it; when the map pads,
    a first block fills the output with the pad value. Axis separators are not supported."""
    if call.attrs["axis_separators"] or call.attrs["input_axis_separators"]:
        return call
    x = sinfo_of(call.args[0])
    out = sinfo_of(call)
    assert isinstance(x, rx.TensorStructInfo) and isinstance(out, rx.TensorStructInfo)
    # The function has its own copies of the caller's symbolic sizes.
    copies: dict[tir.Var, tir.Var] = {}
    for d in (*x.shape, *out.shape):  # type: ignore[misc]
        for v in expr_vars(d):
            copies.setdefault(v, tir.Var(v.name, v.dtype))
    in_shape = tuple(substitute(d, copies) for d in x.shape)  # type: ignore[union-attr]
    out_shape = tuple(substitute(d, copies) for d in out.shape)  # type: ignore[union-attr]
    name = call.args[0].name_hint if isinstance(call.args[0], rx.Var) else "A"
    src = _buffer(name, x.dtype, in_shape)
    dst = _buffer("te_layout_transform", x.dtype, out_shape)
    imap: IndexMap = call.attrs["index_map"]
    padded = not can_prove_equal(prod(in_shape), prod(out_shape))  # more outputs than inputs: padding
    stmts = []
    if padded:
        pad = call.attrs["pad_value"]
        value = pad.value if isinstance(pad, rx.PrimValue) else pad if isinstance(pad, tir.PrimExpr) else pad or 0
        fill = value if isinstance(value, tir.PrimExpr) else (
            tir.FloatImm(x.dtype, float(value)) if "float" in x.dtype else tir.IntImm(x.dtype, int(value)))
        stmts.append(_nest("te_layout_transform_pad", out_shape, lambda v: tir.BufferStore(dst, fill, tuple(v))))

    def scatter(v: list[tir.Var]) -> tir.Stmt:
        target = imap.map_indices(tuple(v))  # in the loops' dtype, whatever the map's index_dtype
        return tir.BufferStore(dst, tir.BufferLoad(src, tuple(v)), target)

    stmts.append(_nest("te_layout_transform", in_shape, scatter))
    params = (_param(src), _param(dst))
    body = tir.BlockRealize((), _TRUE, tir.Block("root", (), (), (), tir.seq(stmts)))
    func = tir.PrimFunc(params, body, None, Map(zip(params, (src, dst))), Map({"tir.noalias": True}))
    gvar = bb.add_func(func, "te_layout_transform_with_pad" if padded else "te_layout_transform")
    return call_tir(gvar, [call.args[0]], [out])


def _buffer(name: str, dtype: str, shape: tuple) -> tir.Buffer:
    """A global buffer with its own data variable."""
    return tir.Buffer(name, tir.Var(name, "handle", tir.PointerType(dtype, "global")), dtype, shape)


def _param(buf: tir.Buffer) -> tir.Var:
    """A buffer parameter: inline ``T.Buffer`` for constant shapes, else a handle (``var_<name>``)."""
    if all(isinstance(d, tir.IntImm) for d in buf.shape):
        return tir.Var(buf.name, "handle", tir.PointerType(buf.dtype, "global"))
    return tir.Var(f"var_{buf.name}", "handle")


def _nest(name: str, shape: tuple, body_of: object) -> tir.Stmt:
    """Loops ``ax0, ax1...`` over ``shape`` around a spatial block whose body is ``body_of(block_vars)``."""
    loops = [tir.Var(f"ax{i}", d.dtype) for i, d in enumerate(shape)]
    bvars = [tir.Var(f"v_ax{i}", d.dtype) for i, d in enumerate(shape)]
    body = body_of(bvars)  # type: ignore[operator]
    reads, writes = infer_access_regions(body, None, ())
    iters = tuple(tir.IterVar(tir.Range(tir.IntImm(d.dtype, 0), d), v, tir.IterType.DataPar)
                  for d, v in zip(shape, bvars))
    stmt: tir.Stmt = tir.BlockRealize(tuple(loops), _TRUE, tir.Block(name, iters, reads, writes, body))
    for lv, d in reversed(list(zip(loops, shape))):
        stmt = tir.For(lv, tir.IntImm(d.dtype, 0), d, tir.ForKind.SERIAL, stmt)
    return stmt


# ---------------------------------------------------------------- tile, repeat, flip, stack
def _to_repeats(value: Any) -> tuple[int, ...]:
    """Non-negative repeat counts (a single int becomes a one-element list)."""
    reps = to_int_tuple(value)
    if any(r < 0 for r in reps):  # TVM infers a negative dim here; tvmlite rejects it
        raise OpError(f"repeats must not be negative, got {list(reps)}")
    return reps


def _to_repeat_count(value: Any) -> int:
    """A non-negative repeat count."""
    n = to_int(value)
    if n < 0:
        raise OpError(f"repeats must not be negative, got {n}")
    return n


@register_op("relax.tile", inputs=("data",), attrs=(AttrField("repeats", convert=_to_repeats),),
             pattern=OpPattern.INJECTIVE)
def _tile(call: rx.Call) -> rx.StructInfo:
    """Each dim times its repeat count, repeats and shape right-aligned (numpy's ``tile``)."""
    x = tensor_arg(call, 0)
    reps = call.attrs["repeats"]
    if x.ndim < 0:
        return tensor_like(x, None, ndim=-1)
    ndim = max(x.ndim, len(reps))
    if x.shape is None:
        return tensor_like(x, None, ndim=ndim)
    dims = [None] * (ndim - x.ndim) + list(x.shape)
    full = [1] * (ndim - len(reps)) + list(reps)
    return tensor_like(x, [int64(r) if d is None else simplify(tir.Mul(d, int64(r))) for d, r in zip(dims, full)])


@register_op("relax.repeat", inputs=("data",),
             attrs=(AttrField("repeats", convert=_to_repeat_count), AttrField("axis", None, to_opt_int)),
             pattern=OpPattern.INJECTIVE)
def _repeat(call: rx.Call) -> rx.StructInfo:
    """Dim ``axis`` times ``repeats``; without an axis the flattened data, 1-D."""
    x = tensor_arg(call, 0)
    reps, axis = call.attrs["repeats"], call.attrs["axis"]
    if axis is None:
        if x.shape is None:
            return tensor_like(x, None, ndim=1)
        return tensor_like(x, [simplify(tir.Mul(prod(x.shape), int64(reps)))])
    if x.ndim < 0:
        return tensor_like(x, None, ndim=-1)
    axis = normalize_axis(call, axis, x.ndim, "axis")
    if x.shape is None:
        return tensor_like(x, None)
    out = list(x.shape)
    out[axis] = simplify(tir.Mul(out[axis], int64(reps)))
    return tensor_like(x, out)


@register_op("relax.flip", inputs=("data",), attrs=(AttrField("axis", convert=to_int),),
             pattern=OpPattern.INJECTIVE)
def _flip(call: rx.Call) -> rx.StructInfo:
    """The data's own struct info (reversed along ``axis``)."""
    x = tensor_arg(call, 0)
    if x.ndim >= 0:
        normalize_axis(call, call.attrs["axis"], x.ndim, "axis")
    return tensor_like(x, x.shape)


@register_op("relax.stack", inputs=("tensors",), attrs=(AttrField("axis", 0, to_int),),
             pattern=OpPattern.INJECTIVE)
def _stack(call: rx.Call) -> rx.StructInfo:
    """The tensors, of one dtype and shape, joined along a new ``axis``."""
    tensors = tuple_of_tensors(call, "stack")
    for f in tensors:
        if f.dtype != tensors[0].dtype and "void" not in (f.dtype, tensors[0].dtype):
            raise OpError(f"{op_name(call)}: all tensors need the same dtype, got {tensors[0].dtype} "
                          f"and {f.dtype}", 0)
    dtype = next((t.dtype for t in tensors if t.dtype != "void"), "void")
    ndims = {t.ndim for t in tensors if t.ndim >= 0}
    if len(ndims) > 1:
        raise OpError(f"{op_name(call)}: all tensors need the same number of dimensions, got {sorted(ndims)}", 0)
    if not ndims:
        return tensor_like(tensors[0], None, dtype, -1)
    ndim = ndims.pop()
    axis = normalize_axis(call, call.attrs["axis"], ndim + 1, "axis")
    shapes = [t.shape for t in tensors]
    if any(s is None for s in shapes):
        return tensor_like(tensors[0], None, dtype, ndim + 1)
    first = shapes[0]
    assert first is not None
    for i, s in enumerate(shapes[1:], 1):
        assert s is not None
        for a, b in zip(first, s):
            if can_prove_not_equal(a, b):
                raise OpError(f"{op_name(call)}: tensors 0 and {i} have shapes {format_shape(first)} and "
                              f"{format_shape(s)}; stacked tensors need one shape", 0)
            if not can_prove_equal(a, b):
                return tensor_like(tensors[0], None, dtype, ndim + 1)  # as TVM: equal only at run time
    return tensor_like(tensors[0], [*first[:axis], int64(len(tensors)), *first[axis:]], dtype)


@register_legalize("relax.tile")
def _legalize_tile(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """numpy's tile: each output index modulo the input dim."""
    return bb.call_te(topi.tile, call.args[0], list(call.attrs["repeats"]), primfunc_name_hint="tile")


@register_legalize("relax.repeat")
def _legalize_repeat(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Output index ``i`` reads ``i // repeats`` (of the flattened data without an axis)."""
    return bb.call_te(topi.repeat, call.args[0], call.attrs["repeats"], call.attrs["axis"],
                      primfunc_name_hint="repeat")


@register_legalize("relax.flip")
def _legalize_flip(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Output index ``i`` of ``axis`` reads ``dim - i - 1``."""
    return bb.call_te(topi.flip, call.args[0], call.attrs["axis"], primfunc_name_hint="flip")


@register_legalize("relax.stack")
def _legalize_stack(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """One ``if_then_else`` per tensor on the new axis' index (the inference proved the shapes equal)."""
    return bb.call_te(topi.stack, tuple_fields(bb, call.args[0]), call.attrs["axis"], primfunc_name_hint="stack")


# ---------------------------------------------------------------- meshgrid
def _indexing(value: Any) -> str:
    """Matrix (``ij``) or Cartesian (``xy``) indexing."""
    mode = to_str(value)
    if mode not in ("ij", "xy"):
        raise OpError(f"expected \"ij\" or \"xy\", got {mode!r}")
    return mode


@register_op("relax.meshgrid", inputs=("tensors",), attrs=(AttrField("indexing", "ij", _indexing),),
             pattern=OpPattern.INJECTIVE)
def _meshgrid(call: rx.Call) -> rx.StructInfo:
    """One grid per 1-D tensor, all of shape ``(len0, len1, ...)`` (the first two swapped for ``xy``,
    as numpy and TVM's legalization; TVM's inference keeps them, which its kernel contradicts)."""
    tup = arg_sinfo(call, 0)
    if not isinstance(tup, rx.TupleStructInfo):
        raise OpError(f"{op_name(call)}: expected a tuple of 1-D tensors, got {describe(tup)}", 0)
    if not tup.fields:
        raise OpError(f"{op_name(call)}: needs at least one 1-D tensor", 0)
    dims: list[Any] = []
    for i, f in enumerate(tup.fields):
        if not isinstance(f, rx.TensorStructInfo):
            raise OpError(f"{op_name(call)}: element {i} of the tuple must be a tensor, got {describe(f)}", 0)
        if f.ndim != 1:
            raise OpError(f"{op_name(call)}: each tensor must be 1-D, element {i} has ndim {f.ndim}", 0)
        if f.dtype != tup.fields[0].dtype:
            raise OpError(f"{op_name(call)}: all tensors need the same dtype, got {tup.fields[0].dtype} "
                          f"and {f.dtype}", 0)
        dims.append(None if f.shape is None else f.shape[0])
    if call.attrs["indexing"] == "xy" and len(dims) >= 2:
        dims[0], dims[1] = dims[1], dims[0]
    first = tup.fields[0]
    grid = tensor_like(first, None, ndim=len(dims)) if None in dims else tensor_like(first, dims)
    return rx.TupleStructInfo(tuple(grid for _ in dims))


@register_legalize("relax.meshgrid")
def _legalize_meshgrid(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """One ``T_meshgrid`` block per tensor, reading it at its own output axis."""
    return bb.call_te(topi.meshgrid, tuple_fields(bb, call.args[0]), call.attrs["indexing"],
                      primfunc_name_hint="meshgrid")


# ---------------------------------------------------------------- reverse_sequence, collapse_sum_like/_to
@register_op("relax.reverse_sequence", inputs=("data", "seq_lengths"),
             attrs=(AttrField("seq_axis", 1, to_int), AttrField("batch_axis", 0, to_int)), pattern=OpPattern.INJECTIVE)
def _reverse_sequence(call: rx.Call) -> rx.StructInfo:
    """The data's struct info; ``seq_lengths`` is 1-D (int32 or int64), one length per batch."""
    x, lens = tensor_arg(call, 0), tensor_arg(call, 1)
    if lens.dtype not in ("int32", "int64", "void"):
        raise OpError(f"{op_name(call)}: seq_lengths must have dtype int32 or int64, got {lens.dtype}", 1)
    if lens.ndim not in (-1, 1):
        raise OpError(f"{op_name(call)}: seq_lengths must be 1-D, got ndim {lens.ndim}", 1)
    if x.ndim >= 0:
        normalize_axis(call, call.attrs["seq_axis"], x.ndim, "seq_axis")
        b = normalize_axis(call, call.attrs["batch_axis"], x.ndim, "batch_axis")
        if x.shape is not None and lens.shape is not None and can_prove_not_equal(lens.shape[0], x.shape[b]):
            raise OpError(f"{op_name(call)}: seq_lengths has {format_expr(lens.shape[0])} lengths for the "
                          f"{format_expr(x.shape[b])} batches of axis {b}", 1)
    return tensor_like(x, x.shape)


@register_legalize("relax.reverse_sequence")
def _legalize_reverse_sequence(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's ``T_reverse_sequence`` (lengths past the axis reverse all of it, at most 1 none)."""

    def checks(x: te.Tensor, lengths: te.Tensor, seq_axis: int, batch_axis: int) -> list[Check]:
        b = x.shape[batch_axis % x.ndim]
        return require_equal(lengths.shape[0], b, lambda: (
            f"{site_text(call)}: {arg_text(call.args[1])} has {dim_text(lengths.shape[0])} lengths for the "
            f"{dim_text(b)} batches of {arg_text(call.args[0])} {shape_text(x.shape)}"))

    return call_te_checked(bb, checks, topi.reverse_sequence, call.args[0], call.args[1], call.attrs["seq_axis"],
                           call.attrs["batch_axis"], primfunc_name_hint="reverse_sequence")


def _collapse_sinfo(call: rx.Call, x: rx.TensorStructInfo, target: tuple | None, ndim: int,
                    dtype: str) -> rx.StructInfo:
    """The target shape (ndim when unknown) in the data's dtype; the target must broadcast to the data."""
    if x.ndim >= 0 and ndim >= 0 and ndim > x.ndim:
        raise OpError(f"{op_name(call)}: cannot collapse a {x.ndim}-D tensor to {ndim} dimensions", 1)
    if target is not None and x.shape is not None:
        for k in range(1, len(target) + 1):
            t, d = target[-k], x.shape[-k]
            if not (is_const_int(t, 1) or can_prove_equal(t, d)):
                raise OpError(f"{op_name(call)}: the shape {format_shape(target)} does not broadcast to the data's "
                              f"{format_shape(x.shape)}, so the data cannot be summed down to it", 1)
    if target is None:
        return rx.TensorStructInfo(None, dtype, ndim, vdevice=x.vdevice)
    return rx.TensorStructInfo(tuple(target), dtype, vdevice=x.vdevice)


@register_op("relax.collapse_sum_like", inputs=("data", "collapse_target"), pattern=OpPattern.COMM_REDUCE,
             shape_only_inputs=("collapse_target",))
def _collapse_sum_like(call: rx.Call) -> rx.StructInfo:
    """The target tensor's shape in the data's dtype: the data summed down to it."""
    x, t = tensor_arg(call, 0), tensor_arg(call, 1)
    return _collapse_sinfo(call, x, None if t.shape is None else tuple(t.shape), t.ndim, x.dtype)


@register_op("relax.collapse_sum_to", inputs=("data", "shape"), input_forms={"shape": InputForm.SHAPE},
             pattern=OpPattern.COMM_REDUCE)
def _collapse_sum_to(call: rx.Call) -> rx.StructInfo:
    """The given shape in the data's dtype: the data summed down to it."""
    x, s = tensor_arg(call, 0), shape_arg(call, 1)
    return _collapse_sinfo(call, x, shape_values(s), s.ndim, x.dtype)


def _legalize_collapse_sum(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """A sum over the data's leading extra axes and where the target has 1 (block ``<x>_red``)."""
    out = sinfo_of(call)
    if not isinstance(out, rx.TensorStructInfo) or out.shape is None:
        return call
    return bb.call_te(topi.collapse_sum, call.args[0], list(out.shape), primfunc_name_hint="collapse_sum")


register_legalize("relax.collapse_sum_like", _legalize_collapse_sum)
register_legalize("relax.collapse_sum_to", _legalize_collapse_sum)
