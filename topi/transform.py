"""Injective shape operators (TVM's ``topi/transform.h``): transpose, reshape, expand_dims,
squeeze, concatenate, split, strided_slice, take, arange, full, ewise_fma, tile, repeat, flip, stack,
meshgrid, one_hot, trilu and reverse_sequence."""
from __future__ import annotations

import math
from typing import Any, Sequence

from ..ir import tir
from ..ir.dtype import parse_dtype
from ..ir.arith import can_prove_equal, is_const_int, simplify
from ..te import expr as E
from ..te.expr import Expr, ExprLike, as_prim, wrap
from ..te.tensor import Tensor, _shape, compute, current_index_dtype
from ..te.tensor_arith import cpp_compute
from .utils import const_int, normalize_axes, prod

__all__ = ["transpose", "reshape", "expand_dims", "squeeze", "concatenate", "split", "strided_slice", "take",
           "arange", "full", "full_like", "ewise_fma", "flatten", "tile", "repeat", "flip", "stack", "meshgrid",
           "one_hot", "trilu", "reverse_sequence"]


def transpose(x: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    """The dimensions of ``x`` reordered by ``axes`` (reversed when None) (block ``T_transpose``)."""
    n = x.ndim
    order = list(reversed(range(n))) if axes is None else [a + n if a < 0 else a for a in axes]
    if sorted(order) != list(range(n)):
        raise ValueError(f"transpose: {list(axes or [])} is not a permutation of {n} axes")
    shape = [x.shape[a] for a in order]

    def f(ax: list) -> Expr:
        idx: list[Any] = [None] * n
        for out_pos, in_pos in enumerate(order):
            idx[in_pos] = ax[out_pos]
        return x(*idx)

    return cpp_compute(shape, f, "T_transpose", "injective")


def _ravel(indices: Sequence[Any], shape: Sequence[Any]) -> Expr:
    """The row-major flat position of ``indices`` in ``shape``."""
    flat = wrap(indices[0]) if indices else wrap(tir.IntImm(current_index_dtype(), 0))
    for i, d in zip(indices[1:], shape[1:]):
        flat = flat * d + i
    return flat


def _unravel(flat: Expr, shape: Sequence[Any]) -> list[Expr]:
    """The indices in ``shape`` of row-major flat position ``flat`` (every one taken modulo its
    dim, the outermost too, as TVM's ``unravel_index`` does)."""
    out: list[Expr] = []
    for d in reversed(shape):
        out.append(flat % d)
        flat = flat // d
    return list(reversed(out))


def reshape(x: Tensor, newshape: Sequence[ExprLike]) -> Tensor:
    """``x`` with ``newshape`` (same elements, row-major) (block ``T_reshape``)."""
    shape = list(_shape(newshape))
    holes = [i for i, d in enumerate(shape) if const_int(d) == -1]
    if holes:
        rest = prod([d for i, d in enumerate(shape) if i not in holes])
        shape[holes[0]] = simplify(tir.FloorDiv(prod(x.shape).expr, rest.expr))
    same = len(shape) == x.ndim and all(can_prove_equal(a, b) for a, b in zip(shape, x.shape))

    def f(ax: list) -> Expr:
        if same:
            return x(*ax)
        return x(*_unravel(_ravel(ax, shape), x.shape)) if x.ndim else x()

    return cpp_compute(shape, f, "T_reshape", "injective")


def flatten(x: Tensor) -> Tensor:
    """``x`` as a 1-D tensor."""
    return reshape(x, [prod(x.shape).expr])


def expand_dims(x: Tensor, axis: int | Sequence[int]) -> Tensor:
    """``x`` with size-1 dimensions inserted at ``axis`` (positions in the output) (block ``expand_dims``)."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    out_ndim = x.ndim + len(axes)
    new = normalize_axes(axes, out_ndim)
    one = tir.IntImm(current_index_dtype() if not x.shape else x.shape[0].dtype, 1)
    dims = iter(x.shape)
    shape = [one if i in new else next(dims) for i in range(out_ndim)]
    kept = [i for i in range(out_ndim) if i not in new]
    return compute(shape, lambda *idx: x(*[idx[i] for i in kept]), name="expand_dims")


def squeeze(x: Tensor, axis: int | Sequence[int] | None = None) -> Tensor:
    """``x`` without the size-1 dimensions ``axis`` (all constant size-1 ones when None) (block ``T_squeeze``)."""
    if axis is None:
        drop = [i for i, d in enumerate(x.shape) if is_const_int(d, 1)]
    else:
        drop = normalize_axes(axis, x.ndim)
    shape = [d for i, d in enumerate(x.shape) if i not in drop]

    def f(ax: list) -> Expr:
        it = iter(ax)
        return x(*[tir.IntImm(d.dtype, 0) if i in drop else next(it) for i, d in enumerate(x.shape)])

    return cpp_compute(shape, f, "T_squeeze", "injective")


def concatenate(tensors: Sequence[Tensor], axis: int | None = 0) -> Tensor:
    """The tensors joined along ``axis`` (flattened first when None) (block ``T_concat``)."""
    ts = list(tensors)
    if axis is None:
        ts = [flatten(t) for t in ts]
        axis = 0
    ndim = ts[0].ndim
    axis = axis + ndim if axis < 0 else axis
    offsets = [wrap(tir.IntImm(ts[0].shape[axis].dtype, 0))]
    for t in ts:
        offsets.append(offsets[-1] + t.shape[axis])
    shape = list(ts[0].shape)
    shape[axis] = offsets[-1].expr

    def f(ax: list) -> Expr:
        def read(i: int) -> Expr:
            idx = list(ax)
            idx[axis] = wrap(ax[axis]) - offsets[i]
            return ts[i](*idx)

        # TVM's order: the last input first, each behind ``0 <= i - offset`` (the first is the
        # fallback); the simplifier of create_prim_func turns constant offsets into ``offset <= i``.
        out = read(0)
        zero = wrap(tir.IntImm(ts[0].shape[axis].dtype, 0))
        for i in range(1, len(ts)):
            out = E.if_then_else(E.binary(tir.LE, zero, wrap(ax[axis]) - offsets[i]), read(i), out)
        return out

    return cpp_compute(shape, f, "T_concat", "injective")


def split(x: Tensor, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Tensor]:
    """The pieces of ``x`` along ``axis``: equal sections (the last may be shorter) or cut at indices
    (blocks ``T_split_sections`` / ``T_split``)."""
    axis = axis + x.ndim if axis < 0 else axis
    length = x.shape[axis]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        piece = E.ceildiv(length, n)
        begins = [piece * i for i in range(n)]
        ends = begins[1:] + [wrap(length)]
        name = "T_split_sections"
    else:
        cuts = [int(i) for i in indices_or_sections]
        begins = [wrap(tir.IntImm(length.dtype, 0))] + [wrap(tir.IntImm(length.dtype, c)) for c in cuts]
        ends = begins[1:] + [wrap(length)]
        name = "T_split"
    out = []
    for b, e in zip(begins, ends):
        b_c = E.binary(tir.Min, b, length)
        e_c = E.binary(tir.Min, e, length)
        size = E.binary(tir.Max, e_c - b_c, 0)
        shape = list(x.shape)
        shape[axis] = simplify(size.expr)

        def f(ax: list, b_c: Expr = b_c) -> Expr:
            idx = list(ax)
            idx[axis] = wrap(ax[axis]) + b_c
            return x(*idx)

        out.append(cpp_compute(shape, f, name, "injective"))
    return out


def strided_slice(x: Tensor, begin: Sequence[ExprLike], end: Sequence[ExprLike],
                  strides: Sequence[ExprLike] | None = None, axes: Sequence[int] | None = None,
                  assume_inbound: bool = False) -> Tensor:
    """``x[begin:end:strides]`` on ``axes`` (all leading axes when None) (block ``T_strided_slice_with_axes``)."""
    axes = list(range(len(begin))) if axes is None else [a + x.ndim if a < 0 else a for a in axes]
    strides = [1] * len(axes) if strides is None else list(strides)
    shape = list(x.shape)
    starts: dict[int, Expr] = {}
    steps: dict[int, int] = {}
    for a, b, e, s in zip(axes, begin, end, strides):
        step = const_int(as_prim(s) if not isinstance(s, int) else s)
        if step is None or step == 0:
            raise ValueError("strided_slice needs constant non-zero strides")
        dim = x.shape[a]
        cb, ce, cd = const_int(as_prim(b, dim.dtype)), const_int(as_prim(e, dim.dtype)), const_int(dim)
        if None not in (cb, ce, cd):
            r = range(cd)[slice(cb, ce, step)]  # type: ignore[misc]
            starts[a] = wrap(tir.IntImm(dim.dtype, r.start if len(r) else 0))
            shape[a] = tir.IntImm(dim.dtype, len(r))
        else:
            if step < 0:
                raise ValueError("strided_slice with symbolic bounds needs positive strides")
            bb = _canonical(wrap(as_prim(b, dim.dtype)), dim, assume_inbound)
            ee = _canonical(wrap(as_prim(e, dim.dtype)), dim, assume_inbound)
            starts[a] = bb
            length = E.ceildiv(E.binary(tir.Max, ee - bb, 0), step)
            shape[a] = simplify(length.expr)
        steps[a] = step

    def f(ax: list) -> Expr:
        idx = [wrap(ax[i]) * steps[i] + starts[i] if i in starts else ax[i] for i in range(x.ndim)]
        return x(*idx)

    return cpp_compute(shape, f, "T_strided_slice_with_axes", "injective")


def _canonical(v: Expr, dim: tir.PrimExpr, inbound: bool) -> Expr:
    """A symbolic slice bound: negative constants count from the end; clamped to ``[0, dim]``."""
    c = const_int(v)
    if c is not None and c < 0:
        v = wrap(dim) + c
    if inbound:
        return v
    if c is not None and c >= 0:
        return E.binary(tir.Min, v, dim)
    return E.binary(tir.Min, E.binary(tir.Max, v, 0), dim)


def take(a: Tensor, indices: Tensor | ExprLike, axis: int | None = None, mode: str = "fast") -> Tensor:
    """Elements of ``a`` at ``indices`` along ``axis`` (``a`` flattened when None) (block ``T_take``).

    ``mode``: fast (indices in ``[-size, size)``, negative ones counting from the end as in numpy),
    clip (clamped), wrap (modulo) or nan (NaN when out of range)."""
    if axis is None:
        a = reshape(a, [prod(a.shape).expr]) if a.ndim != 1 else a
        axis = 0
    axis = axis + a.ndim if axis < 0 else axis
    idx_shape = list(indices.shape) if isinstance(indices, Tensor) else []
    shape = list(a.shape[:axis]) + idx_shape + list(a.shape[axis + 1:])
    dim = a.shape[axis]

    def f(ax: list) -> Expr:
        pos = indices(*ax[axis:axis + len(idx_shape)]) if isinstance(indices, Tensor) else wrap(indices)
        pos = pos.astype(dim.dtype)
        inner = pos
        if mode == "fast" and not pos.dtype.startswith("uint"):
            inner = E.if_then_else(pos < 0, pos + dim, pos)
        elif mode == "clip":
            inner = E.binary(tir.Min, E.binary(tir.Max, pos, 0), wrap(dim) - 1)
        elif mode == "wrap":
            inner = E.floormod(pos, dim)
        value = a(*ax[:axis], inner, *ax[axis + len(idx_shape):])
        if mode == "nan":
            ok = E.all(pos >= 0, pos < dim)
            return E.if_then_else(ok, value, E.const(float("nan"), a.dtype))
        return value

    return cpp_compute(shape, f, "T_take", "injective")


def arange(start: ExprLike, stop: ExprLike | None = None, step: ExprLike = 1, dtype: str = "float32") -> Tensor:
    """``start, start + step, ...`` below ``stop`` (block ``T_arange``)."""
    if stop is None:
        start, stop = 0, start
    index = current_index_dtype()
    values = [const_int(v) if not isinstance(v, float) else None for v in (start, stop, step)]
    if all(isinstance(v, (int, float)) for v in (start, stop, step)):
        size: Any = tir.IntImm(index, max(0, math.ceil((stop - start) / step)))  # type: ignore[operator]
    elif values[2] is not None and values[2] > 0 and all("int" in as_prim(v).dtype for v in (start, stop)):
        size = simplify(E.ceildiv(E.cast(wrap(stop) - start, index), values[2]).expr)
    else:
        size = E.cast(E.ceil(E.cast(wrap(stop) - start, "float32") / E.cast(step, "float32")), index).expr

    def f(ax: list) -> Expr:
        return E.cast(start, dtype) + E.cast(ax[0], dtype) * E.cast(step, dtype)

    return cpp_compute([size], f, "T_arange", "elemwise")


def full(shape: Sequence[ExprLike], dtype: str, fill_value: Any) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (a number, a scalar expression or a 0-d tensor)
    (block ``T_full``)."""
    def f(ax: list) -> Expr:
        if isinstance(fill_value, Tensor):
            return fill_value().astype(dtype)
        if isinstance(fill_value, (bool, int, float)):
            value = fill_value
            if isinstance(value, float) and parse_dtype(dtype).is_integer and dtype != "bool":
                value = int(value)  # a C++ cast, as TVM's make_const: 3.5 -> 3, -2.5 -> -2
            return E.const(value, dtype)
        return E.cast(fill_value, dtype)

    return cpp_compute(_shape(shape), f, "T_full", "elemwise")


def full_like(x: Tensor, fill_value: Any) -> Tensor:
    """A tensor shaped and typed like ``x``, filled with ``fill_value``."""
    return full(x.shape, x.dtype, fill_value)


def ewise_fma(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """``a * b + c`` elementwise (the legacy ``relax.ewise_fma``) (block ``T_ewise_fma``)."""
    return cpp_compute(a.shape, lambda ax: a(*ax) * b(*ax) + c(*ax), "T_ewise_fma", "elemwise")


def tile(x: Tensor, reps: Sequence[int]) -> Tensor:
    """``x`` repeated ``reps[i]`` times along each axis, numpy's ``tile`` (block ``T_tile``)."""
    reps = [int(r) for r in reps]
    ndim = max(x.ndim, len(reps))
    dims = [None] * (ndim - x.ndim) + list(x.shape)  # the input's dims, right-aligned
    reps = [1] * (ndim - len(reps)) + reps
    dtype = x.shape[0].dtype if x.shape else current_index_dtype()
    shape = [tir.IntImm(dtype, r) if d is None else simplify((wrap(d) * r).expr) for d, r in zip(dims, reps)]
    # As TVM, every input index is the output's modulo the input dim, even where reps is 1.
    return cpp_compute(shape, lambda ax: x(*[wrap(i) % d for i, d in zip(ax[ndim - x.ndim:], x.shape)]),
                       "T_tile", "broadcast")


def repeat(x: Tensor, repeats: int, axis: int | None = None) -> Tensor:
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (of the flattened ``x`` when None)
    (block ``T_repeat``)."""
    if axis is None:
        x = reshape(x, [prod(x.shape).expr])
        axis = 0
    axis = axis + x.ndim if axis < 0 else axis
    shape = list(x.shape)
    shape[axis] = simplify((wrap(shape[axis]) * int(repeats)).expr)

    def f(ax: list) -> Expr:
        idx = list(ax)
        idx[axis] = wrap(ax[axis]) // int(repeats)
        return x(*idx)

    return cpp_compute(shape, f, "T_repeat", "broadcast")


def flip(x: Tensor, axis: int) -> Tensor:
    """``x`` reversed along ``axis`` (TVM's reverse_sequence without lengths: block ``T_reverse_sequence``)."""
    axis = axis + x.ndim if axis < 0 else axis
    dim = x.shape[axis]

    def f(ax: list) -> Expr:
        idx = list(ax)
        c = const_int(dim)
        idx[axis] = (wrap(tir.IntImm(dim.dtype, c - 1)) - ax[axis]) if c is not None else wrap(dim) - ax[axis] - 1
        return x(*idx)

    return cpp_compute(list(x.shape), f, "T_reverse_sequence", "injective")


def stack(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """The tensors joined along a new ``axis`` (block ``T_stack``)."""
    ts = list(tensors)
    ndim = ts[0].ndim + 1
    axis = axis + ndim if axis < 0 else axis
    dtype = ts[0].shape[0].dtype if ts[0].shape else current_index_dtype()
    shape = [*ts[0].shape[:axis], tir.IntImm(dtype, len(ts)), *ts[0].shape[axis:]]

    def f(ax: list) -> Expr:
        rest = ax[:axis] + ax[axis + 1:]
        out = ts[0](*rest)
        for i in range(1, len(ts)):  # the last tensor is the outermost test, as TVM prints it
            out = E.if_then_else(wrap(ax[axis]) == tir.IntImm(ax[axis].dtype, i), ts[i](*rest), out)
        return out

    return cpp_compute(shape, f, "T_stack", "injective")


def meshgrid(tensors: Sequence[Tensor], indexing: str = "ij") -> list[Tensor]:
    """Coordinate grids of 1-D tensors; ``xy`` swaps the first two output axes, as numpy
    (blocks ``T_meshgrid``)."""
    ts = list(tensors)
    shape = [t.shape[0] for t in ts]
    cartesian = indexing == "xy" and len(ts) >= 2
    if cartesian:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(ts):
        pos = {0: 1, 1: 0}.get(i, i) if cartesian else i
        out.append(cpp_compute(shape, lambda ax, t=t, pos=pos: t(ax[pos]), "T_meshgrid", "injective"))
    return out


def one_hot(indices: Tensor, on_value: ExprLike, off_value: ExprLike, depth: int, axis: int, dtype: str) -> Tensor:
    """``on_value`` where the new ``axis`` equals the index, ``off_value`` elsewhere (block ``T_one_hot``)."""
    ndim = indices.ndim + 1
    axis = axis + ndim if axis < 0 else axis
    index = indices.shape[0].dtype if indices.shape else current_index_dtype()
    shape = [*indices.shape[:axis], tir.IntImm(index, depth), *indices.shape[axis:]]

    def f(ax: list) -> Expr:
        picked = indices(*ax[:axis], *ax[axis + 1:]).astype(ax[axis].dtype)
        hit = wrap(tir.EQ(picked.expr, getattr(ax[axis], "expr", ax[axis])))  # TVM's order: the index first
        return E.select(hit, E.cast(on_value, dtype), E.cast(off_value, dtype))

    return cpp_compute(shape, f, "T_one_hot", "injective")


def trilu(x: Tensor, k: ExprLike, upper: bool) -> Tensor:
    """``x`` with the elements below (``upper``) or above the ``k``-th diagonal of its last two axes
    zeroed (block ``trilu``)."""
    def f(*idx: Any) -> Expr:
        row, col = (getattr(i, "expr", i) for i in idx[-2:])
        shifted = row if const_int(k) == 0 else (wrap(row) + k).expr  # as TVM prints k = 0: no "+ 0"
        keep = tir.LE(shifted, col) if upper else tir.LE(col, shifted)
        return E.select(wrap(keep), x(*idx), E.const(0, x.dtype))

    return compute(x.shape, f, "trilu")


def reverse_sequence(x: Tensor, lengths: Tensor, seq_axis: int, batch_axis: int) -> Tensor:
    """The first ``lengths[b]`` elements along ``seq_axis`` of each batch ``b`` reversed (all of them
    when longer than the axis; none when at most 1) (block ``T_reverse_sequence``)."""
    seq_axis = seq_axis + x.ndim if seq_axis < 0 else seq_axis
    batch_axis = batch_axis + x.ndim if batch_axis < 0 else batch_axis
    dim = x.shape[seq_axis]

    def f(ax: list) -> Expr:
        n = lengths(ax[batch_axis]).astype(dim.dtype)
        i = wrap(ax[seq_axis])
        c = const_int(dim)
        last = wrap(tir.IntImm(dim.dtype, c - 1)) - i if c is not None else wrap(dim) - i - 1
        keep = E.binary(tir.Or, n <= 1, wrap(tir.LE(n.expr, i.expr)))  # TVM's order: the length first
        idx = list(ax)
        idx[seq_axis] = E.if_then_else(keep, i, E.if_then_else(wrap(dim) < n, last, n - i - 1))
        return x(*idx)

    return cpp_compute(list(x.shape), f, "T_reverse_sequence", "injective")
