"""FlattenBuffer (TVM's ``tir.transform.FlattenBuffer``): every access of a multi-dimensional (or
strided, offset, or 0-d) buffer becomes a 1-D access of a flat buffer sharing its ``data``.

- A parameter buffer ``A: T.Buffer((4, 8))`` that the body accesses gets
  ``A_1 = T.decl_buffer((32,), data=A.data)`` at the top of the body (the parameters themselves
  keep their shapes: the calling convention checks arguments against them), and ``A[i, j]``
  becomes ``A_1[i * 8 + j]``.
- The offset is ``elem_offset + sum(index_k * stride_k)``; without explicit strides the strides are
  the row-major products of the trailing dimensions, symbolic ones included (``x[i, j]`` of
  ``(n, m)`` reads ``x_1[i * m + j]``). A flat buffer has no strides and no offset of its own.
- Allocations (``T.decl_buffer`` without ``data=``, ``T.allocate``) become 1-D; declarations of
  other views are replaced by their flat form in place.
- Indices are converted to one index dtype (int64 when any index or dimension is int64).
- A vector index (``T.Ramp``) in the last dimension stays a ramp over the flat offsets.

The input must be block-free (run LowerBlocks first)."""
from __future__ import annotations

from ...ir import tir
from ...ir.arith import Analyzer, as_dtype, expr_key, is_const_int
from ...ir.dtype import lanes_of, parse_dtype
from ...ir.functor import deep_recursion
from ...ir.module import IRModule
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprMutator, post_order_visit
from ..infra import PassContext, PrimFuncPass, register_pass

__all__ = ["FlattenBuffer", "flatten_buffers", "flat_offset", "buffer_strides"]


def _is_flat(buf: tir.Buffer) -> bool:
    """Already 1-D, compact and at offset 0."""
    return (len(buf.shape) == 1 and not buf.strides and not buf.axis_separators
            and (buf.elem_offset is None or is_const_int(buf.elem_offset, 0)))


def _index_dtype(buf: tir.Buffer, indices: tuple = ()) -> str:
    """int64 when any index, dimension, stride or the offset is int64, else int32."""
    exprs = [*indices, *buf.shape, *buf.strides]
    if buf.elem_offset is not None:
        exprs.append(buf.elem_offset)
    return "int64" if any(parse_dtype(e.dtype).element == "int64" for e in exprs) else "int32"


def buffer_strides(buf: tir.Buffer, dtype: str) -> list[tir.PrimExpr]:
    """The buffer's strides (explicit, else row-major from its shape) in ``dtype``."""
    if buf.strides:
        return [as_dtype(s, dtype) for s in buf.strides]
    out: list[tir.PrimExpr] = []
    acc: tir.PrimExpr = tir.IntImm(dtype, 1)
    for dim in reversed(buf.shape):
        out.append(acc)
        acc = tir.Mul(acc, as_dtype(dim, dtype))
    return out[::-1]


def flat_offset(buf: tir.Buffer, indices: tuple, analyzer: Analyzer | None = None) -> tir.PrimExpr:
    """The simplified element offset of ``buf[indices]`` from the start of its data."""
    ana = analyzer or Analyzer()
    dtype = _index_dtype(buf, indices)
    ramp: tir.Ramp | None = None
    terms: list[tir.PrimExpr] = []
    ramp_stride: tir.PrimExpr | None = None
    for idx, stride in zip(indices, buffer_strides(buf, dtype)):
        if isinstance(idx, tir.Ramp):
            if ramp is not None:
                raise ValueError(f"cannot flatten an access of {buf.name} with more than one vector index")
            ramp, ramp_stride = idx, stride
            idx = idx.base
        elif lanes_of(idx.dtype) > 1:
            raise ValueError(f"cannot flatten the vector index {idx} of {buf.name} (only T.Ramp is supported)")
        terms.append(tir.Mul(as_dtype(idx, dtype), stride))
    offset: tir.PrimExpr = tir.IntImm(dtype, 0)
    if buf.elem_offset is not None:
        offset = as_dtype(buf.elem_offset, dtype)
    for t in terms:
        offset = tir.Add(offset, t)
    offset = ana.simplify(offset)
    if ramp is None:
        return offset
    step = ana.simplify(tir.Mul(as_dtype(ramp.stride, dtype), ramp_stride))
    return tir.Ramp(offset, step, ramp.lanes)


def _flat_size(buf: tir.Buffer, ana: Analyzer) -> tir.PrimExpr:
    """Elements the flat buffer spans: the shape's product, or ``strides[0] * shape[0]`` (as TVM's
    GetFlattenedBuffer) for a strided one, plus the offset (which the indices then include)."""
    dtype = _index_dtype(buf)
    if not buf.shape:
        size: tir.PrimExpr = tir.IntImm(dtype, 1)
    elif buf.strides:
        size = tir.Mul(as_dtype(buf.strides[0], dtype), as_dtype(buf.shape[0], dtype))
    else:
        size = tir.IntImm(dtype, 1)
        for dim in buf.shape:
            size = tir.Mul(size, as_dtype(dim, dtype))
    if buf.elem_offset is not None and not is_const_int(buf.elem_offset, 0):
        size = tir.Add(size, as_dtype(buf.elem_offset, dtype))  # the offset is folded into the indices
    return ana.simplify(size)


class _Flattener(StmtExprMutator):
    """Rewrites accesses and declarations; records the parameter buffers the body reads or writes."""

    def __init__(self, declared: set[tir.Buffer], param_data: set[tir.Var]) -> None:
        self.analyzer = Analyzer()
        self.flat: dict[tir.Buffer, tir.Buffer] = {}
        self.declared = declared  # buffers the body declares itself (DeclBuffer)
        self.param_data = param_data
        self.implicit: list[tir.Buffer] = []  # flat views of parameter buffers the body uses

    def flat_buffer(self, buf: tir.Buffer) -> tir.Buffer | None:
        """The 1-D buffer over ``buf``'s data (None when ``buf`` is flat already)."""
        if _is_flat(buf):
            return None
        new = self.flat.get(buf)
        if new is None:
            if buf.axis_separators:
                raise ValueError(f"cannot flatten {buf.name}: axis_separators are not supported")
            new = self.flat[buf] = tir.Buffer(
                buf.name, buf.data, buf.dtype, (_flat_size(buf, self.analyzer),), scope=buf.scope,
                data_alignment=buf.data_alignment, offset_factor=buf.offset_factor,
                buffer_type=buf.buffer_type)
            if buf not in self.declared and buf.data in self.param_data:
                self.implicit.append(new)
        return new

    def indices(self, buf: tir.Buffer, indices: tuple) -> tuple[tir.PrimExpr, ...]:
        """The one flat index of ``buf[indices]``."""
        if len(indices) != len(buf.shape):
            raise ValueError(f"{buf.name} has {len(buf.shape)} dimensions but is accessed with "
                             f"{len(indices)} indices")
        if not buf.shape:
            return (tir.IntImm("int32", 0),)
        return (flat_offset(buf, indices, self.analyzer),)

    def visit_buffer_load_(self, load: tir.BufferLoad) -> tir.PrimExpr:
        """``A[i, j]`` -> ``A_1[i * m + j]``."""
        new = super().visit_buffer_load_(load)
        flat = self.flat_buffer(new.buffer)
        if flat is None:
            return new
        return tir.BufferLoad(flat, self.indices(new.buffer, new.indices))

    def visit_buffer_store_(self, store: tir.BufferStore) -> tir.Stmt:
        """``A[i, j] = v`` -> ``A_1[i * m + j] = v``."""
        new = super().visit_buffer_store_(store)
        flat = self.flat_buffer(new.buffer)
        if flat is None:
            return new
        return tir.BufferStore(flat, new.value, self.indices(new.buffer, new.indices))

    def visit_decl_buffer_(self, decl: tir.DeclBuffer) -> tir.Stmt:
        """A declaration declares the flat buffer instead."""
        flat = self.flat_buffer(decl.buffer)
        body = self.visit_stmt(decl.body)
        if flat is None and body is decl.body:
            return decl
        return tir.DeclBuffer(flat or decl.buffer, body)

    def visit_allocate_(self, alloc: tir.Allocate) -> tir.Stmt:
        """``T.allocate([a, b], ...)`` -> ``T.allocate([a * b], ...)``."""
        new = super().visit_allocate_(alloc)
        if len(new.extents) != 1:
            dtype = "int64" if any(e.dtype == "int64" for e in new.extents) else "int32"
            size: tir.PrimExpr = tir.IntImm(dtype, 1)
            for e in new.extents:
                size = tir.Mul(size, as_dtype(e, dtype))
            new = replace(new, extents=(self.analyzer.simplify(size),))
        body = new.body
        # An allocation declared by one buffer of its size is that buffer's allocating declaration,
        # the form the parser builds from the ``T.decl_buffer`` text the printer writes for both.
        if (isinstance(body, tir.DeclBuffer) and body.buffer.data is new.buffer_var
                and body.buffer.dtype == new.dtype and is_const_int(new.condition, 1) and not new.annotations
                and len(body.buffer.shape) == 1 and expr_key(body.buffer.shape[0]) == expr_key(new.extents[0])):
            return body
        return new

    def visit_block_realize_(self, realize: tir.BlockRealize) -> tir.Stmt:
        """Blocks must be lowered first: their regions are N-D by definition."""
        raise ValueError("FlattenBuffer needs block-free TIR: run LowerBlocks first")


def flatten_buffers(func: tir.PrimFunc) -> tir.PrimFunc:
    """``func`` with every buffer access made 1-D."""
    declared: set[tir.Buffer] = set()
    param_data = {b.data for b in func.buffer_map.values()} | set(func.params)
    flattener = _Flattener(declared, param_data)
    with deep_recursion():  # one nested declaration per buffer: as deep as the program is long
        post_order_visit(func.body, lambda n: declared.add(n.buffer) if isinstance(n, tir.DeclBuffer) else None)
        body = flattener.visit_stmt(func.body)
    # Parameter views are declared at the top, in parameter order.
    order = {b.data: i for i, b in enumerate(func.buffer_map.values())}
    for flat in sorted(flattener.implicit, key=lambda b: order.get(b.data, len(order)), reverse=True):
        body = tir.DeclBuffer(flat, body)
    return func if body is func.body else replace(func, body=body)


class FlattenBuffer(PrimFuncPass):
    """Multi-dimensional buffer accesses to 1-D accesses of flat buffers sharing the data."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        new = flatten_buffers(func)
        if new is not func:
            self.stats["flattened_functions"] += 1
        return new


register_pass("FlattenBuffer", FlattenBuffer)
