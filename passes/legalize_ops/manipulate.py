"""Legalizations of the shape operators: permute_dims, reshape, flatten, expand_dims, squeeze,
concat, split, strided_slice, take, broadcast_to and layout_transform."""
from __future__ import annotations

from typing import Any

from ... import te, topi
from ...ir import relax as rx
from ...ir import tir
from ...ir.arith import IndexMap, as_const_int, can_prove_equal, is_const_int, prod, simplify
from ...ir.block_builder import BlockBuilder
from ...ir.node import Map
from ...ir.op_api import call_tir
from ...ir.stmt_functor import substitute
from ...ir.struct_info import sinfo_of
from ...ir.regions import infer_access_regions
from ...te.expr import expr_vars
from .common import (Check, arg_text, call_te_checked, dim_text, prim_values, register_legalize, require_equal,
                     require_indices, require_le, shape_text, site_text, tuple_fields)

_TRUE = tir.IntImm("bool", 1)


@register_legalize("relax.permute_dims")
def _permute_dims(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The transpose by ``axes`` (reversed when None)."""
    axes = call.attrs["axes"]
    return bb.call_te(topi.transpose, call.args[0], None if axes is None else list(axes))


def _to_result_shape(name: str) -> object:
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


register_legalize("relax.reshape", _to_result_shape("reshape"))
register_legalize("relax.flatten", _to_result_shape("reshape"))


@register_legalize("relax.broadcast_to")
def _broadcast_to(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
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
def _expand_dims(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """Size-1 dims inserted at ``axis``."""
    return bb.call_te(topi.expand_dims, call.args[0], list(call.attrs["axis"]), primfunc_name_hint="expand_dims")


@register_legalize("relax.squeeze")
def _squeeze(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
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
def _concat(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
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
def _split(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """The pieces along ``axis`` (a tuple result); one section is the input itself."""
    spec = call.attrs["indices_or_sections"]
    if isinstance(spec, int) and spec == 1:
        return call.args[0] if isinstance(sinfo_of(call), rx.TensorStructInfo) else rx.Tuple((call.args[0],))
    return bb.call_te(topi.split, call.args[0], spec if isinstance(spec, int) else list(spec), call.attrs["axis"])


@register_legalize("relax.strided_slice")
def _strided_slice(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
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
def _take(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
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
def _layout_transform(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
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
