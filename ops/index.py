"""Indexing by tensors: gather_elements, gather_nd, scatter_elements, scatter_nd, slice_scatter,
index_tensor, index_put, one_hot, tril, triu, tensor_to_shape and dynamic_strided_slice, each
declared with its legalization (negative indices count from the end; each index is checked to lie
in ``[-size, size)`` before it is used)."""
from __future__ import annotations

from typing import Any

from .. import te, topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, can_prove_equal, can_prove_not_equal, format_expr, format_shape, simplify
from ..ir.block_builder import BlockBuilder
from ..ir.dtype import parse_dtype
from ..ir.node import Map
from ..ir.op import AttrField, OpError, OpPattern, make_call, register_op
from ..ir.op_api import call_tir
from ..ir.stmt_functor import substitute
from ..ir.struct_info import sinfo_of
from ..te.expr import expr_vars
from ..te.tensor_arith import broadcast_shape_index
from ._common import (broadcast_shapes, describe, normalize_axis, op_name, tensor_arg, tensor_like, to_bool,
                      to_int, to_str)
from .legalization import (Check, _in_range, arg_text, call_te_checked, dim_text, register_legalize,
                           require_equal, require_indices, shape_text, site_text, tuple_fields)


def _require_index_dtype(call: rx.Call, sinfo: rx.TensorStructInfo, i: int) -> None:
    """OpError unless the indices are signed integers, as TVM."""
    if sinfo.dtype != "void" and not (parse_dtype(sinfo.dtype).is_integer and not sinfo.dtype.startswith("uint")):
        raise OpError(f"{op_name(call)}: the indices must have a signed integer dtype, got dtype {sinfo.dtype}", i)


def _index_message(call: rx.Call, where: str, x: Any, size: Any) -> str:
    """The message of an index check: which indices, which axis, the valid range."""
    return (f"{site_text(call)}: an index in {arg_text(call.args[1])} is out of range for {where} of "
            f"{arg_text(call.args[0])} {shape_text(x.shape)}, of size {dim_text(size)} (valid indices: "
            f"-{dim_text(size)} to {dim_text(simplify(tir.Sub(size, tir.IntImm(size.dtype, 1))))})")


# ---------------------------------------------------------------- gather_elements
@register_op("relax.gather_elements", inputs=("data", "indices"), attrs=(AttrField("axis", 0, to_int),),
             pattern=OpPattern.INJECTIVE)
def _gather_elements(call: rx.Call) -> rx.StructInfo:
    """The indices' shape: ``out[i...]`` is ``data`` at ``i...`` with ``i[axis]`` replaced by the index."""
    x, idx = tensor_arg(call, 0), tensor_arg(call, 1)
    _require_index_dtype(call, idx, 1)
    if x.ndim >= 0 and idx.ndim >= 0 and x.ndim != idx.ndim:
        raise OpError(f"{op_name(call)}: data and indices need the same rank, got {x.ndim} and {idx.ndim}", 1)
    if x.ndim >= 0:
        normalize_axis(call, call.attrs["axis"], x.ndim, "axis")
    if x.ndim < 0:
        return tensor_like(x, None, ndim=-1)  # as TVM: nothing is known without the data's rank
    return tensor_like(x, idx.shape, ndim=idx.ndim)


@register_legalize("relax.gather_elements")
def _legalize_gather_elements(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's ``T_gather``, after a loop checking every index against the size of ``axis``."""

    def checks(x: te.Tensor, axis: int, indices: te.Tensor) -> list[Check]:
        a = axis + x.ndim if axis < 0 else axis
        return require_indices(indices, x.shape[a], lambda: _index_message(call, f"axis {a}", x, x.shape[a]),
                               "T_gather_check")

    return call_te_checked(bb, checks, topi.gather, call.args[0], call.attrs["axis"], call.args[1],
                           primfunc_name_hint="gather")


# ---------------------------------------------------------------- gather_nd
@register_op("relax.gather_nd", inputs=("data", "indices"), attrs=(AttrField("batch_dims", 0, to_int),),
             pattern=OpPattern.INJECTIVE)
def _gather_nd(call: rx.Call) -> rx.StructInfo:
    """``indices.shape[:-1] + data.shape[batch_dims + M:]``, ``M = indices.shape[-1]`` the length of
    each index tuple (the first ``batch_dims`` axes are shared by data and indices)."""
    x, idx = tensor_arg(call, 0), tensor_arg(call, 1)
    _require_index_dtype(call, idx, 1)  # TVM 0.27 takes int64 only; relax.const makes int32 of int64 data
    b = call.attrs["batch_dims"]
    if b < 0:
        raise OpError(f"{op_name(call)}: batch_dims must not be negative, got {b}", "batch_dims")
    if idx.ndim >= 0 and b > idx.ndim - 1:
        raise OpError(f"{op_name(call)}: batch_dims {b} exceeds the indices' rank minus 1 ({idx.ndim - 1})",
                      "batch_dims")
    if x.ndim < 0 or idx.shape is None or as_const_int(idx.shape[-1]) is None:
        return tensor_like(x, None, ndim=-1)
    m = as_const_int(idx.shape[-1])
    if m > x.ndim - b:
        raise OpError(f"{op_name(call)}: index tuples of length {m} (indices {format_shape(idx.shape)}) exceed the "
                      f"data's rank {x.ndim} minus batch_dims {b}", 1)
    if x.shape is None:
        return tensor_like(x, None, ndim=idx.ndim - 1 + x.ndim - b - m)
    for k in range(b):
        if can_prove_not_equal(x.shape[k], idx.shape[k]):
            raise OpError(f"{op_name(call)}: batch dim {k} is {format_shape(x.shape)}[{k}] in the data but "
                          f"{format_shape(idx.shape)}[{k}] in the indices", 1)
    return tensor_like(x, [*idx.shape[:-1], *x.shape[b + m:]])


def _te_gather_nd(data: te.Tensor, indices: te.Tensor, batch_dims: int) -> te.Tensor:
    """TVM's legalization: the index tuples moved to the first axis, then topi's gather_nd."""
    n = indices.ndim
    return topi.gather_nd(data, topi.transpose(indices, [n - 1, *range(n - 1)]), batch_dims)


@register_legalize("relax.gather_nd")
def _legalize_gather_nd(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``T_transpose`` of the indices then ``T_gather_nd``, after a loop checking each index against
    the dim it picks."""

    def checks(x: te.Tensor, indices: te.Tensor, batch_dims: int) -> list[Check]:
        dims = x.shape[batch_dims:]

        def size(bvars: list) -> tir.PrimExpr:
            # Position k of an index tuple indexes dim batch_dims + k.
            out = dims[as_const_int(indices.shape[-1]) - 1]
            for k in range(as_const_int(indices.shape[-1]) - 2, -1, -1):
                out = tir.Select(tir.EQ(bvars[-1], tir.IntImm(bvars[-1].dtype, k)), dims[k], out)
            return out

        shown = [f"{dim_text(d)}" for d in dims[:as_const_int(indices.shape[-1])]]
        message = (f"{site_text(call)}: an index in {arg_text(call.args[1])} is out of range for the dims "
                   f"({', '.join(shown)}) of {arg_text(call.args[0])} {shape_text(x.shape)} it picks (valid "
                   f"indices: -size to size - 1)")
        return require_indices(indices, size, message, "T_gather_nd_check")

    return call_te_checked(bb, checks, _te_gather_nd, call.args[0], call.args[1], call.attrs["batch_dims"],
                           primfunc_name_hint="te_gather_nd")


# ---------------------------------------------------------------- scatter_elements, scatter_nd
_REDUCTIONS = ("update", "add", "mul", "mean", "min", "max")


def _reduction(value: Any) -> str:
    """How an update combines with the value it lands on: update, add, mul, mean, min or max."""
    mode = to_str(value)
    if mode not in _REDUCTIONS:
        raise OpError(f"expected one of {', '.join(_REDUCTIONS)}, got {mode!r}")
    return mode


def _nd_reduction(value: Any) -> str:
    """scatter_nd's reductions: update, add, mul, min or max (no mean, as TVM's kernel)."""
    mode = _reduction(value)
    if mode == "mean":
        raise OpError("expected one of update, add, mul, min, max, got 'mean'")
    return mode


def _require_same_dtype(call: rx.Call, x: rx.TensorStructInfo, u: rx.TensorStructInfo) -> None:
    """OpError unless the updates have the data's dtype."""
    if "void" not in (x.dtype, u.dtype) and x.dtype != u.dtype:
        raise OpError(f"{op_name(call)}: the updates need the data's dtype {x.dtype}, got {u.dtype}", 2)


@register_op("relax.scatter_elements", inputs=("data", "indices", "updates"),
             attrs=(AttrField("axis", 0, to_int), AttrField("reduction", "update", _reduction)),
             pattern=OpPattern.OPAQUE)
def _scatter_elements(call: rx.Call) -> rx.StructInfo:
    """The data's struct info; indices and updates share one shape and the data's rank."""
    x, idx, upd = (tensor_arg(call, i) for i in range(3))
    if idx.dtype != "void" and not (parse_dtype(idx.dtype).is_integer):
        raise OpError(f"{op_name(call)}: the indices must have an integer dtype, got dtype {idx.dtype}", 1)
    _require_same_dtype(call, x, upd)
    if x.ndim >= 0 and idx.ndim >= 0 and x.ndim != idx.ndim:
        raise OpError(f"{op_name(call)}: data and indices need the same rank, got {x.ndim} and {idx.ndim}", 1)
    if idx.ndim >= 0 and upd.ndim >= 0 and idx.ndim != upd.ndim:
        raise OpError(f"{op_name(call)}: indices and updates need the same rank, got {idx.ndim} and {upd.ndim}", 2)
    if idx.shape is not None and upd.shape is not None:
        if any(can_prove_not_equal(a, b) for a, b in zip(idx.shape, upd.shape)):
            raise OpError(f"{op_name(call)}: indices {format_shape(idx.shape)} and updates {format_shape(upd.shape)} "
                          f"need one shape", 2)
    if x.ndim >= 0:
        normalize_axis(call, call.attrs["axis"], x.ndim, "axis")
    return tensor_like(x, x.shape)


@register_op("relax.scatter_nd", inputs=("data", "indices", "updates"),
             attrs=(AttrField("reduction", "update", _nd_reduction),), pattern=OpPattern.OPAQUE)
def _scatter_nd(call: rx.Call) -> rx.StructInfo:
    """The data's struct info; ``updates.shape == indices.shape[:-1] + data.shape[M:]`` for index
    tuples of length ``M = indices.shape[-1]`` (a constant)."""
    x, idx, upd = (tensor_arg(call, i) for i in range(3))
    if idx.dtype != "void" and not (parse_dtype(idx.dtype).is_integer):
        raise OpError(f"{op_name(call)}: the indices must have an integer dtype, got dtype {idx.dtype}", 1)
    _require_same_dtype(call, x, upd)
    if idx.ndim == 0:  # the index tuples lie along the last axis, which a scalar lacks (TVM: an IndexError)
        raise OpError(f"{op_name(call)}: the indices need a last dim holding the index tuples' length, got a "
                      f"rank-0 tensor", 1)
    if idx.shape is None:
        return tensor_like(x, x.shape)
    m = as_const_int(idx.shape[-1])
    if m is None:
        raise OpError(f"{op_name(call)}: the index tuples' length (the last dim of indices "
                      f"{format_shape(idx.shape)}) must be a constant", 1)
    if x.ndim >= 0 and m > x.ndim:
        raise OpError(f"{op_name(call)}: index tuples of length {m} exceed the data's rank {x.ndim}", 1)
    if x.ndim >= 0 and upd.ndim >= 0 and upd.ndim != idx.ndim - 1 + x.ndim - m:
        raise OpError(f"{op_name(call)}: the updates need rank {idx.ndim - 1 + x.ndim - m} (indices' rank - 1 + "
                      f"data's rank - {m}), got {upd.ndim}", 2)
    if x.shape is not None and upd.shape is not None:
        want = [*idx.shape[:-1], *x.shape[m:]]
        if not all(can_prove_equal(a, b) for a, b in zip(upd.shape, want)):  # as TVM: provably equal
            raise OpError(f"{op_name(call)}: the updates' shape must be indices.shape[:-1] + data.shape[{m}:] = "
                          f"{format_shape(want)}, got {format_shape(upd.shape)}", 2)
    return tensor_like(x, x.shape)


def _combine(mode: str, old: tir.PrimExpr, new: tir.PrimExpr) -> tir.PrimExpr:
    """The value stored where an update lands."""
    if mode == "update":
        return new
    if mode == "add":
        return tir.Add(old, new)
    if mode == "mul":
        return tir.Mul(old, new)
    if mode == "min":
        return tir.Min(old, new)
    if mode == "max":
        return tir.Max(old, new)
    two = tir.FloatImm(old.dtype, 2.0) if parse_dtype(old.dtype).is_float else tir.IntImm(old.dtype, 2)
    return tir.Div(tir.Add(old, new), two)  # mean, as TVM: of the value so far and the update


def _wrapped(i: tir.PrimExpr, dim: tir.PrimExpr) -> tir.PrimExpr:
    """Index ``i`` in the dim's dtype, a negative one counted from the end (TVM's ``i + (i < 0) * dim``)."""
    i = i if i.dtype == dim.dtype else tir.Cast(dim.dtype, i)
    if i.dtype.startswith("uint"):
        return i
    return tir.Add(i, tir.Mul(tir.Cast(dim.dtype, tir.LT(i, tir.IntImm(dim.dtype, 0))), dim))


def _grid(shape: tuple, body_of: Any, prefix: str = "ax") -> tir.Stmt:
    """Serial loops ``ax0, ax1...`` over ``shape`` around ``body_of(loop_vars)``."""
    loops = [tir.Var(f"{prefix}{k}", d.dtype) for k, d in enumerate(shape)]
    stmt = body_of(loops)
    for v, d in reversed(list(zip(loops, shape))):
        stmt = tir.For(v, tir.IntImm(d.dtype, 0), d, tir.ForKind.SERIAL, stmt)
    return stmt


def _scatter_func(bb: BlockBuilder, call: rx.Call, name: str, targets: Any) -> rx.Expr:
    """TVM's generic scatter kernel: one block (``pragma_scope: seq``) copying the data to the output,
    then, over the updates, storing each (combined by the reduction) where ``targets`` sends it;
    ``targets(indices, updates, out, position)`` gives the checks and target indices of one update."""
    sinfos = [sinfo_of(a) for a in call.args]
    out_sinfo = sinfo_of(call)
    # The function has its own copies of the caller's symbolic sizes.
    copies: dict[tir.Var, tir.Var] = {}
    for s in sinfos:
        for d in s.shape:  # type: ignore[union-attr]
            for v in expr_vars(d):
                copies.setdefault(v, tir.Var(v.name, v.dtype))
    names = [a.name_hint if isinstance(a, rx.Var) else n for a, n in zip(call.args, ("data", "indices", "updates"))]
    bufs = [_buffer(n, s.dtype, tuple(substitute(d, copies) for d in s.shape))  # type: ignore[union-attr]
            for n, s in zip(names, sinfos)]
    data, indices, updates = bufs
    out = _buffer("out_buf", data.dtype, data.shape)
    copy = _grid(data.shape, lambda v: tir.BufferStore(out, tir.BufferLoad(data, tuple(v)), tuple(v)))

    def scatter(v: list) -> tir.Stmt:
        conds, target, upd_index = targets(indices, updates, out, v)
        value = _combine(call.attrs["reduction"], tir.BufferLoad(out, target), tir.BufferLoad(updates, upd_index))
        stmt: tir.Stmt = tir.BufferStore(out, value, target)
        for cond, message in reversed(conds):
            stmt = tir.AssertStmt(cond, tir.StringImm(message), stmt)
        return stmt

    loop_shape = updates.shape if name == "scatter_nd" else indices.shape
    body = tir.seq([copy, _grid(loop_shape, scatter)])
    block = tir.Block(f"{name}_generic", (), (), (), body, annotations=Map({"pragma_scope": "seq"}))
    params = tuple(_param(b) for b in (*bufs, out))
    func = tir.PrimFunc(params, tir.BlockRealize((), tir.IntImm("bool", 1), block), None,
                        Map(zip(params, (*bufs, out))), Map({"tir.noalias": True}))
    return call_tir(bb.add_func(func, name), list(call.args), [out_sinfo])


def _buffer(name: str, dtype: str, shape: tuple) -> tir.Buffer:
    """A global buffer with its own data variable."""
    return tir.Buffer(name, tir.Var(name, "handle", tir.PointerType(dtype, "global")), dtype, shape)


def _param(buf: tir.Buffer) -> tir.Var:
    """A buffer parameter: inline ``T.Buffer`` for constant shapes, else a handle (``var_<name>``)."""
    if all(isinstance(d, tir.IntImm) for d in buf.shape):
        return tir.Var(buf.name, "handle", tir.PointerType(buf.dtype, "global"))
    return tir.Var(f"var_{buf.name}", "handle")


def _range_message(call: rx.Call, where: str, size: tir.PrimExpr) -> str:
    """The message of a failed index check in a scatter kernel."""
    return (f"{site_text(call)}: an index in {arg_text(call.args[1])} is out of range for {where} of "
            f"{arg_text(call.args[0])}, of size {format_expr(size)} (valid indices: -size to size - 1)")


@register_legalize("relax.scatter_elements")
def _legalize_scatter_elements(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The update at ``i...`` lands at ``i...`` with ``i[axis]`` replaced by its index (checked to lie
    in ``[-size, size)``), in the order of the indices."""
    x = sinfo_of(call.args[0])
    axis = call.attrs["axis"] % x.ndim  # type: ignore[union-attr]

    def targets(indices: tir.Buffer, updates: tir.Buffer, out: tir.Buffer, v: list) -> tuple:
        dim = out.shape[axis]
        i = tir.BufferLoad(indices, tuple(v))
        pos = i if i.dtype == dim.dtype else tir.Cast(dim.dtype, i)
        target = list(v)
        target[axis] = _wrapped(i, dim)
        return [(_in_range(pos, dim), _range_message(call, f"axis {axis}", dim))], tuple(target), tuple(v)

    return _scatter_func(bb, call, "scatter_elements", targets)


@register_legalize("relax.scatter_nd")
def _legalize_scatter_nd(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The update at ``(y..., r...)`` lands at ``(indices[y..., :]..., r...)`` (each index checked
    against the dim it picks)."""
    idx = sinfo_of(call.args[1])
    m = as_const_int(idx.shape[-1])  # type: ignore[union-attr]
    ylen = idx.ndim - 1  # type: ignore[union-attr]

    def targets(indices: tir.Buffer, updates: tir.Buffer, out: tir.Buffer, v: list) -> tuple:
        y, rest = v[:ylen], v[ylen:]
        conds, picked = [], []
        for k in range(m):
            dim = out.shape[k]
            i = tir.BufferLoad(indices, (*y, tir.IntImm(indices.shape[-1].dtype, k)))
            pos = i if i.dtype == dim.dtype else tir.Cast(dim.dtype, i)
            conds.append((_in_range(pos, dim), _range_message(call, f"dim {k}", dim)))
            picked.append(_wrapped(i, dim))
        return conds, (*picked, *rest), tuple(v)

    return _scatter_func(bb, call, "scatter_nd", targets)


# ---------------------------------------------------------------- slice_scatter
def _prim_int(call: rx.Call, i: int, name: str) -> tir.PrimExpr | None:
    """The integer of input ``i`` (an ``R.prim_value``), None when only its dtype is known."""
    sinfo = sinfo_of(call.args[i])
    if not isinstance(sinfo, rx.PrimStructInfo) or not parse_dtype(sinfo.dtype).is_integer:
        raise OpError(f"{op_name(call)}: {name} must be an integer (R.prim_value), got {describe(sinfo)}"
                      + (f" of dtype {sinfo.dtype}" if isinstance(sinfo, rx.PrimStructInfo) else ""), i)
    return sinfo.value


def _slice_bounds(start: tir.PrimExpr, end: tir.PrimExpr, step: int, dim: tir.PrimExpr) -> tuple:
    """``start``, ``end`` and the slice length: constants as Python slices read them (negative from the
    end, clamped to the dim); symbolic bounds as they are, the length ``ceildiv(end - start, step)``."""
    cs, ce, cd = (as_const_int(v) for v in (start, end, dim))
    if None not in (cs, ce, cd):
        r = range(cd)[cs:ce:step]  # type: ignore[misc]
        return (tir.IntImm(dim.dtype, r.start), tir.IntImm(dim.dtype, min(r.stop, cd)),
                tir.IntImm(dim.dtype, len(r)))
    s, e = (v if v.dtype == dim.dtype else tir.Cast(dim.dtype, v) for v in (start, end))
    one_less = tir.IntImm(dim.dtype, step - 1)
    length = simplify(tir.FloorDiv(tir.Add(tir.Sub(e, s), one_less), tir.IntImm(dim.dtype, step)))
    return s, e, length


@register_op("relax.slice_scatter", inputs=("input_tensor", "src", "start", "end", "step"),
             attrs=(AttrField("axis", 0, to_int),), pattern=OpPattern.INJECTIVE)
def _slice_scatter(call: rx.Call) -> rx.StructInfo:
    """The input's struct info; ``src`` has its dtype, rank and dims except on ``axis``, where it has
    the slice's length."""
    x, src = tensor_arg(call, 0), tensor_arg(call, 1)
    start, end, step = (_prim_int(call, i, n) for i, n in ((2, "start"), (3, "end"), (4, "step")))
    if "void" not in (x.dtype, src.dtype) and x.dtype != src.dtype:
        raise OpError(f"{op_name(call)}: src needs the input's dtype {x.dtype}, got {src.dtype}", 1)
    if step is not None and as_const_int(step) is not None and as_const_int(step) < 1:
        raise OpError(f"{op_name(call)}: the step must be at least 1, got {as_const_int(step)}", 4)
    if x.ndim >= 0 and src.ndim >= 0 and x.ndim != src.ndim:
        raise OpError(f"{op_name(call)}: src needs the input's rank {x.ndim}, got {src.ndim}", 1)
    if x.ndim < 0:
        return tensor_like(x, x.shape)
    axis = normalize_axis(call, call.attrs["axis"], x.ndim, "axis")
    if x.shape is None or src.shape is None:
        return tensor_like(x, x.shape)
    for k, (a, b) in enumerate(zip(x.shape, src.shape)):
        if k != axis and can_prove_not_equal(a, b):
            raise OpError(f"{op_name(call)}: src {format_shape(src.shape)} differs from the input "
                          f"{format_shape(x.shape)} in dim {k}, which is not the scatter axis {axis}", 1)
    if None not in (start, end, step) and as_const_int(step) is not None:
        length = _slice_bounds(start, end, as_const_int(step), x.shape[axis])[2]
        if can_prove_not_equal(length, src.shape[axis]):
            raise OpError(f"{op_name(call)}: src has {format_expr(src.shape[axis])} elements on axis {axis}, but "
                          f"the slice {format_expr(start)}:{format_expr(end)}:{format_expr(step)} of "
                          f"{format_expr(x.shape[axis])} has {format_expr(length)}", 1)
    return tensor_like(x, x.shape)


@register_legalize("relax.slice_scatter")
def _legalize_slice_scatter(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """One ``T_slice_scatter`` block: an element on the slice reads ``src``, the others the input
    (legalized when the step is a known constant)."""
    bounds = [sinfo_of(call.args[i]) for i in (2, 3, 4)]
    step = as_const_int(bounds[2].value) if bounds[2].value is not None else None  # type: ignore[union-attr]
    if step is None or any(b.value is None for b in bounds):  # type: ignore[union-attr]
        return call
    x = sinfo_of(call.args[0])
    axis = call.attrs["axis"] % x.ndim  # type: ignore[union-attr]

    def te_slice_scatter(data: te.Tensor, src: te.Tensor, start: Any, end: Any) -> te.Tensor:
        dim = data.shape[axis]
        s, e, length = _slice_bounds(getattr(start, "expr", start), getattr(end, "expr", end), step, dim)
        return topi.slice_scatter(data, src, s, e, step, axis)

    def checks(data: te.Tensor, src: te.Tensor, start: Any, end: Any) -> list[Check]:
        dim = data.shape[axis]
        length = _slice_bounds(getattr(start, "expr", start), getattr(end, "expr", end), step, dim)[2]
        return require_equal(src.shape[axis], length, lambda: (
            f"{site_text(call)}: {arg_text(call.args[1])} has {dim_text(src.shape[axis])} elements on axis {axis}, "
            f"but the slice has {dim_text(length)}"))

    return call_te_checked(bb, checks, te_slice_scatter, call.args[0], call.args[1], bounds[0].value,
                           bounds[1].value, primfunc_name_hint="slice_scatter")


# ---------------------------------------------------------------- index_tensor
def _index_tensors(call: rx.Call, i: int) -> list[rx.TensorStructInfo]:
    """The tensors of tuple input ``i``, each of a signed integer dtype."""
    tup = sinfo_of(call.args[i])
    if not isinstance(tup, rx.TupleStructInfo):
        raise OpError(f"{op_name(call)}: expected a tuple of index tensors, got {describe(tup)}", i)
    out = []
    for k, f in enumerate(tup.fields):
        if not isinstance(f, rx.TensorStructInfo):
            raise OpError(f"{op_name(call)}: element {k} of the indices must be a tensor, got {describe(f)}", i)
        if f.dtype != "void" and not (parse_dtype(f.dtype).is_integer and not f.dtype.startswith("uint")):
            raise OpError(f"{op_name(call)}: index tensor {k} must have a signed integer dtype, got {f.dtype}", i)
        out.append(f)
    return out


def _index_shape(call: rx.Call, tensors: list[rx.TensorStructInfo], i: int) -> tuple | None:
    """The numpy broadcast of the index tensors' shapes; None when unknown."""
    if any(t.shape is None for t in tensors):
        return None
    shape: tuple | None = tuple(tensors[0].shape)  # type: ignore[arg-type]
    for t in tensors[1:]:
        shape = broadcast_shapes(call, shape, t.shape, i)  # type: ignore[arg-type]
        if shape is None:
            return None
    return shape


@register_op("relax.index_tensor", inputs=("data", "indices"), pattern=OpPattern.INJECTIVE)
def _index_tensor(call: rx.Call) -> rx.StructInfo:
    """numpy's ``data[I0, I1, ...]``: the broadcast shape of the index tensors followed by the data's
    dims that are not indexed."""
    x = tensor_arg(call, 0)
    tensors = _index_tensors(call, 1)
    if not tensors:
        raise OpError(f"{op_name(call)}: needs at least one index tensor", 1)
    if x.ndim >= 0 and len(tensors) > x.ndim:
        raise OpError(f"{op_name(call)}: {len(tensors)} index tensors for data of {x.ndim} dimensions", 1)
    shape = _index_shape(call, tensors, 1)
    if x.shape is None or shape is None:
        ndims = [t.ndim for t in tensors]
        if x.ndim < 0 or min(ndims) < 0:
            return tensor_like(x, None, ndim=-1)
        return tensor_like(x, None, ndim=max(ndims) + x.ndim - len(tensors))
    return tensor_like(x, [*shape, *x.shape[len(tensors):]])


@register_legalize("relax.index_tensor")
def _legalize_index_tensor(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """One ``advanced_index`` block reading each index tensor where it broadcasts (TVM first writes
    each broadcast to a buffer), after loops checking each index against the dim it picks."""
    fields = tuple_fields(bb, call.args[1])
    out, data = sinfo_of(call).shape, sinfo_of(call.args[0]).shape  # type: ignore[union-attr]
    # the indices' broadcast shape leads the result, the dims they leave unindexed follow it
    shape = list(out[:len(out) - (len(data) - len(fields))])

    def te_index_tensor(data: te.Tensor, *indices: te.Tensor) -> te.Tensor:
        return topi.index_tensor(data, list(indices), shape)

    def checks(data: te.Tensor, *indices: te.Tensor) -> list[Check]:
        out: list[Check] = []
        for j, t in enumerate(indices):
            out += require_indices(t, data.shape[j], lambda j=j: _range_text(call, fields[j], j, data),
                                   f"advanced_index_check{f'_{j}' if j else ''}")
        return out

    return call_te_checked(bb, checks, te_index_tensor, call.args[0], *fields, primfunc_name_hint="index_tensor")


def _range_text(call: rx.Call, index: rx.Expr, dim: int, data: Any) -> str:
    """The message of a failed check of the index tensor for ``dim``."""
    size = data.shape[dim]
    return (f"{site_text(call)}: an index in {arg_text(index)} is out of range for dim {dim} of "
            f"{arg_text(call.args[0])} {shape_text(data.shape)}, of size {dim_text(size)} (valid indices: "
            f"-{dim_text(size)} to {dim_text(simplify(tir.Sub(size, tir.IntImm(size.dtype, 1))))})")


# ---------------------------------------------------------------- index_put
@register_op("relax.index_put", inputs=("data", "indices", "values"),
             attrs=(AttrField("accumulate", False, to_bool),), pattern=OpPattern.OPAQUE)
def _index_put(call: rx.Call) -> rx.StructInfo:
    """The data's struct info: one index tensor per dim, the values broadcasting to their shape."""
    x = tensor_arg(call, 0)
    tensors = _index_tensors(call, 1)
    v = tensor_arg(call, 2)
    if x.ndim >= 0 and len(tensors) != x.ndim:
        raise OpError(f"{op_name(call)}: {len(tensors)} index tensors for data of {x.ndim} dimensions (one per "
                      f"dimension)", 1)
    if "void" not in (x.dtype, v.dtype) and x.dtype != v.dtype:
        raise OpError(f"{op_name(call)}: the values need the data's dtype {x.dtype}, got {v.dtype}", 2)
    shape = _index_shape(call, tensors, 1)
    if shape is not None and v.shape is not None:
        if len(v.shape) > len(shape) or broadcast_shapes(call, shape, v.shape, 2) is not None and any(
                can_prove_not_equal(a, b) for a, b in zip(broadcast_shapes(call, shape, v.shape, 2), shape)):
            raise OpError(f"{op_name(call)}: values {format_shape(v.shape)} do not broadcast to the indices' shape "
                          f"{format_shape(shape)}", 2)
    return tensor_like(x, x.shape)


@register_legalize("relax.index_put")
def _legalize_index_put(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's generic kernel (block ``index_put_generic``): the data copied, then over the indices'
    broadcast shape each value stored (added when ``accumulate``) where the indices send it, in order,
    each index checked first."""
    fields = tuple_fields(bb, call.args[1])
    shape = _index_shape(call, [sinfo_of(f) for f in fields], 1)  # type: ignore[misc]
    if shape is None:
        return call  # as TVM: the loops need the indices' shape
    args = [call.args[0], *fields, call.args[2]]
    sinfos = [sinfo_of(a) for a in args]
    copies: dict[tir.Var, tir.Var] = {}
    for d in (*shape, *(d for s in sinfos for d in s.shape)):  # type: ignore[union-attr]
        for var in expr_vars(d):
            copies.setdefault(var, tir.Var(var.name, var.dtype))
    names = [a.name_hint if isinstance(a, rx.Var) else f"i{k}" for k, a in enumerate(args)]
    bufs = [_buffer(n, s.dtype, tuple(substitute(d, copies) for d in s.shape))  # type: ignore[union-attr]
            for n, s in zip(names, sinfos)]
    data, index_bufs, values = bufs[0], bufs[1:-1], bufs[-1]
    out = _buffer("out_buf", data.dtype, data.shape)
    loop_shape = tuple(substitute(d, copies) for d in shape)

    def put(v: list) -> tir.Stmt:
        picked, conds = [], []
        for j, b in enumerate(index_bufs):
            dim = data.shape[j]
            i = tir.BufferLoad(b, tuple(broadcast_shape_index(b.shape, loop_shape, v)))
            pos = i if i.dtype == dim.dtype else tir.Cast(dim.dtype, i)
            conds.append((_in_range(pos, dim), _range_message(call, f"dim {j}", dim)))
            picked.append(_wrapped(i, dim))
        value: tir.PrimExpr = tir.BufferLoad(values, tuple(broadcast_shape_index(values.shape, loop_shape, v)))
        if call.attrs["accumulate"]:
            value = tir.Add(tir.BufferLoad(out, tuple(picked)), value)
        stmt: tir.Stmt = tir.BufferStore(out, value, tuple(picked))
        for cond, message in reversed(conds):
            stmt = tir.AssertStmt(cond, tir.StringImm(message), stmt)
        return stmt

    copy = _grid(data.shape, lambda v: tir.BufferStore(out, tir.BufferLoad(data, tuple(v)), tuple(v)))
    body = tir.seq([copy, _grid(loop_shape, put)])
    block = tir.Block("index_put_generic", (), (), (), body, annotations=Map({"pragma_scope": "seq"}))
    params = tuple(_param(b) for b in (*bufs, out))
    func = tir.PrimFunc(params, tir.BlockRealize((), tir.IntImm("bool", 1), block), None,
                        Map(zip(params, (*bufs, out))), Map({"tir.noalias": True}))
    return call_tir(bb.add_func(func, "index_put"), args, [sinfo_of(call)])


# ---------------------------------------------------------------- one_hot, tril, triu
def _scalar(call: rx.Call, i: int, name: str) -> rx.PrimStructInfo:
    """The struct info of scalar input ``i`` (an ``R.prim_value``)."""
    sinfo = sinfo_of(call.args[i])
    if not isinstance(sinfo, rx.PrimStructInfo):
        raise OpError(f"{op_name(call)}: {name} must be a scalar (R.prim_value), got {describe(sinfo)}", i)
    return sinfo


def _positive(value: Any) -> int:
    """A positive integer."""
    n = to_int(value)
    if n <= 0:
        raise OpError(f"must be positive, got {n}")
    return n


@register_op("relax.one_hot", inputs=("indices", "on_value", "off_value"),
             attrs=(AttrField("depth", convert=_positive), AttrField("axis", -1, to_int)),
             pattern=OpPattern.INJECTIVE)
def _one_hot(call: rx.Call) -> rx.StructInfo:
    """The indices' shape with a new dim of ``depth`` at ``axis`` (-1: last), in the values' dtype."""
    idx = tensor_arg(call, 0)
    on, off = _scalar(call, 1, "on_value"), _scalar(call, 2, "off_value")
    if on.dtype != off.dtype:
        raise OpError(f"{op_name(call)}: on_value and off_value need one dtype, got {on.dtype} and {off.dtype}", 2)
    if idx.dtype != "void" and not parse_dtype(idx.dtype).is_integer:
        raise OpError(f"{op_name(call)}: the indices must have an integer dtype, got dtype {idx.dtype}", 0)
    if idx.ndim < 0:
        return rx.TensorStructInfo(None, on.dtype, -1, vdevice=idx.vdevice)
    axis = normalize_axis(call, call.attrs["axis"], idx.ndim + 1, "axis")
    if idx.shape is None:
        return rx.TensorStructInfo(None, on.dtype, idx.ndim + 1, vdevice=idx.vdevice)
    depth = tir.IntImm("int64", call.attrs["depth"])
    return rx.TensorStructInfo((*idx.shape[:axis], depth, *idx.shape[axis:]), on.dtype, vdevice=idx.vdevice)


@register_legalize("relax.one_hot")
def _legalize_one_hot(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """TVM's ``T_one_hot``: a select of the two values on the index (legalized for known values)."""
    on, off = (sinfo_of(call.args[i]).value for i in (1, 2))  # type: ignore[union-attr]
    if on is None or off is None:
        return call
    dtype = sinfo_of(call).dtype  # type: ignore[union-attr]
    return bb.call_te(topi.one_hot, call.args[0], on, off, call.attrs["depth"], call.attrs["axis"], dtype,
                      primfunc_name_hint="one_hot")


def _trilu(upper: bool) -> Any:
    """The inference of tril (``upper`` False) or triu: the input's struct info (at least 2-D)."""

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        k = _scalar(call, 1, "k")
        if k.dtype != "void" and not parse_dtype(k.dtype).is_integer:
            raise OpError(f"{op_name(call)}: k must be an integer, got dtype {k.dtype}", 1)
        if 0 <= x.ndim < 2:
            raise OpError(f"{op_name(call)}: the tensor needs at least 2 dimensions, got {x.ndim}", 0)
        return tensor_like(x, x.shape)

    return infer


def _legalize_trilu(upper: bool) -> Any:
    """The ``trilu`` compute: a select on the diagonal offset ``k`` (legalized when ``k`` is known)."""

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        k = sinfo_of(call.args[1]).value  # type: ignore[union-attr]
        if k is None:
            return call
        return bb.call_te(topi.trilu, call.args[0], k, upper, primfunc_name_hint="triu" if upper else "tril")

    return legalize


for _name, _upper in (("tril", False), ("triu", True)):
    register_op(f"relax.{_name}", inputs=("x", "k"), input_defaults={"k": 0}, pattern=OpPattern.INJECTIVE)(
        _trilu(_upper))
    register_legalize(f"relax.{_name}", _legalize_trilu(_upper))


# ---------------------------------------------------------------- tensor_to_shape
@register_op("relax.tensor_to_shape", inputs=("expr",), pattern=OpPattern.OPAQUE)
def _tensor_to_shape(call: rx.Call) -> rx.StructInfo:
    """A 1-D integer tensor's values as a shape value (of as many dims as its length, when known);
    the VM converts it (nothing to legalize, as in TVM)."""
    t = tensor_arg(call, 0)
    if t.ndim not in (-1, 1):
        raise OpError(f"{op_name(call)}: expects a 1-D tensor, got ndim {t.ndim}", 0)
    if t.dtype != "void" and not parse_dtype(t.dtype).is_integer:
        raise OpError(f"{op_name(call)}: expects an integer tensor, got dtype {t.dtype}", 0)
    n = as_const_int(t.shape[0]) if t.shape is not None else None
    return rx.ShapeStructInfo(None, -1 if n is None else n)


# ---------------------------------------------------------------- dynamic_strided_slice
@register_op("relax.dynamic_strided_slice", inputs=("x", "begin", "end", "strides"), pattern=OpPattern.INJECTIVE)
def _dynamic_strided_slice(call: rx.Call) -> rx.StructInfo:
    """The input's rank and dtype; the bounds are 1-D int64 tensors of one value per axis, read at
    run time (so the shape is unknown)."""
    x = tensor_arg(call, 0)
    for i, name in ((1, "begin"), (2, "end"), (3, "strides")):
        t = tensor_arg(call, i)
        if t.dtype not in ("int64", "void"):
            raise OpError(f"{op_name(call)}: {name} must have dtype int64, got {t.dtype}", i)
        if t.ndim not in (-1, 1):
            raise OpError(f"{op_name(call)}: {name} must be 1-D, got ndim {t.ndim}", i)
        n = as_const_int(t.shape[0]) if t.shape is not None else None
        if n is None:
            raise OpError(f"{op_name(call)}: {name} needs a known length (one value per axis)", i)
        if x.ndim >= 0 and n != x.ndim:
            raise OpError(f"{op_name(call)}: {name} has {n} values for {x.ndim} axes", i)
    return tensor_like(x, None, ndim=x.ndim)


@register_legalize("relax.dynamic_strided_slice")
def _legalize_dynamic_strided_slice(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """As TVM: a shape function computes the result's shape, ``R.tensor_to_shape`` and
    ``R.match_cast`` name its dims, then ``T_strided_slice_dynamic`` slices (a zero stride gives an
    empty axis)."""
    x = sinfo_of(call.args[0])
    if not isinstance(x, rx.TensorStructInfo) or x.shape is None:
        return call
    shape = bb.emit(bb.call_te(topi.dynamic_slice_shape, *call.args, primfunc_name_hint="shape_func"))
    dims = bb.emit(make_call("relax.tensor_to_shape", (shape,), {}))
    names = tuple(tir.Var(f"s_{k + 1}", "int64") for k in range(x.ndim))  # as TVM's printer numbers them
    bb.match_cast(dims, rx.ShapeStructInfo(names, len(names)))

    # The kernel's output buffer defines its own copies of the sizes; the call's result uses the
    # function's (a variable belongs to one function).
    copies = [tir.Var(v.name, v.dtype) for v in names]

    def te_slice(data: te.Tensor, begin: te.Tensor, end: te.Tensor, strides: te.Tensor) -> te.Tensor:
        return topi.dynamic_strided_slice(data, begin, end, strides, copies)

    kernel = bb.call_te(te_slice, *call.args, primfunc_name_hint="dynamic_strided_slice")
    return call_tir(kernel.args[0], list(kernel.args[1].fields), [rx.TensorStructInfo(names, x.dtype)])


_legalize_dynamic_strided_slice.handles_unknown_result = True  # type: ignore[attr-defined]  (its shape function)
