"""Lowering of memory: buffer addressing (row-major, strided, flat), loads and stores (scalar,
contiguous vector, gather/scatter) and allocations (stack for small constant sizes, else heap)."""
from __future__ import annotations

from typing import Callable

from llvmlite import ir

from ...ir import tir
from ...ir.dtype import parse_dtype
from .errors import CodegenError, excerpt
from .types import ALIGN, I8, I32, I64, PTR, const_int, elem_bytes, mem_type, wrap64

__all__ = ["MemoryLowering", "STACK_LIMIT"]

# Allocations up to this many bytes with a constant size live on the stack; the rest on the heap.
STACK_LIMIT = 32 * 1024


class MemoryLowering:
    """Buffer accesses and allocations of :class:`~.function_builder.FunctionBuilder`."""

    # ---- addressing, loads and stores
    def _data(self, buf: tir.Buffer) -> ir.Value:
        """The pointer bound to ``buf``'s data variable."""
        ptr = self.vars.get(buf.data)
        if ptr is None:
            raise CodegenError(f"{self.func_name}: buffer '{buf.name}' is used where its data "
                               f"'{buf.data.name}' is not defined")
        return ptr

    def _index64(self, e: tir.PrimExpr) -> ir.Value:
        """An index as i64 (scalar or vector), sign- or zero-extended by its dtype."""
        if isinstance(e, tir.IntImm):
            return ir.Constant(I64, wrap64(e.value))
        v = self.expr(e)
        d = parse_dtype(e.dtype)
        if not (d.is_integer or d.is_bool):
            raise CodegenError(f"{self.func_name}: buffer index {excerpt(e)} has dtype {e.dtype}, not an integer")
        t = self._like(v, I64)
        if d.bits == 64:
            return v
        return self.b.sext(v, t) if d.is_int else self.b.zext(v, t)

    def _i64(self, fn: Callable[..., ir.Value], a: ir.Value, b: ir.Value) -> ir.Value:
        """``a + b`` or ``a * b`` on i64 index values; constants are folded so the unoptimised IR
        stays readable (``x + 0``, ``x * 1``, ``2 * 8``)."""
        ca, cb = const_int(a), const_int(b)
        add = fn == self.b.add
        if ca is not None and cb is not None:
            return ir.Constant(I64, wrap64(ca + cb if add else ca * cb))
        for c, other in ((ca, b), (cb, a)):
            if c == (0 if add else 1):
                return other
        a, b = self._match_lanes(a, b)
        return fn(a, b, flags=("nsw",))

    def _offset(self, buf: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> ir.Value:
        """The element offset of an access: row-major over the shape, or through the strides, plus
        ``elem_offset``; one index is always a flat offset."""
        if len(indices) != 1 and len(indices) != len(buf.shape):
            raise CodegenError(f"{self.func_name}: buffer '{buf.name}' has {len(buf.shape)} dimensions "
                               f"but is accessed with {len(indices)} indices")
        if len(indices) == 1 and (len(buf.shape) <= 1 or not buf.strides):
            off = self._index64(indices[0])
            if len(buf.strides) == 1:
                off = self._i64(self.b.mul, off, self._index64(buf.strides[0]))
        elif buf.strides:
            off = None
            for idx, stride in zip(indices, buf.strides):
                term = self._i64(self.b.mul, self._index64(idx), self._index64(stride))
                off = term if off is None else self._i64(self.b.add, off, term)
        else:
            off = self._index64(indices[0])
            for idx, dim in zip(indices[1:], buf.shape[1:]):
                off = self._i64(self.b.add, self._i64(self.b.mul, off, self._index64(dim)), self._index64(idx))
        if buf.elem_offset is not None and not self._is_zero_const(buf.elem_offset):
            off = self._i64(self.b.add, off, self._index64(buf.elem_offset))
        return off

    def _contiguous_base(self, buf: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...] | None:
        """The indices of the first lane when the access is a unit-stride Ramp in the last
        dimension (a plain vector load/store), else None."""
        if not indices or parse_dtype(buf.dtype).lanes > 1:
            return None
        last = indices[-1]
        if not (isinstance(last, tir.Ramp) and isinstance(last.stride, tir.IntImm) and last.stride.value == 1):
            return None
        if any(parse_dtype(i.dtype).lanes > 1 for i in indices[:-1]):
            return None
        if buf.strides and not (isinstance(buf.strides[-1], tir.IntImm) and buf.strides[-1].value == 1):
            return None
        return (*indices[:-1], last.base)

    def _gep(self, buf: tir.Buffer, offset: ir.Value) -> ir.Value:
        """The address of element ``offset`` of ``buf``."""
        return self.b.gep(self._data(buf), [offset], inbounds=True, source_etype=mem_type(buf.dtype))

    def _from_mem(self, v: ir.Value, dtype: str) -> ir.Value:
        """A loaded value in register form (bytes to i1 for bool)."""
        if parse_dtype(dtype).is_bool:
            return self.b.icmp_unsigned("!=", v, ir.Constant(v.type, None))
        return v

    def _to_mem(self, v: ir.Value, dtype: str) -> ir.Value:
        """A register value in memory form (i1 to a byte for bool)."""
        if parse_dtype(dtype).is_bool:
            return self.b.zext(v, self._like(v, I8))
        return v

    def _align(self, dtype: str) -> int:
        """The natural alignment of one element of ``dtype``."""
        d = parse_dtype(dtype)
        return max(1, d.bits // 8)

    def visit_buffer_load_(self, op: tir.BufferLoad) -> ir.Value:
        """A load: scalar, a contiguous vector (unit-stride Ramp) or a gather lane by lane."""
        buf = op.buffer
        lanes = parse_dtype(op.dtype).lanes
        elem = mem_type(buf.dtype)
        align = self._align(buf.dtype)
        if lanes == 1 or parse_dtype(buf.dtype).lanes == lanes:
            v = self.b.load(self._gep(buf, self._offset(buf, op.indices)), typ=elem, align=align)
            return self._from_mem(v, op.dtype)
        base = self._contiguous_base(buf, op.indices)
        if base is not None:
            vty = ir.VectorType(elem, lanes)
            v = self.b.load(self._gep(buf, self._offset(buf, base)), typ=vty, align=align)
            return self._from_mem(v, op.dtype)
        offsets = self._offset(buf, op.indices)
        out = ir.Constant(ir.VectorType(elem, lanes), ir.Undefined)
        for k in range(lanes):
            off = self.b.extract_element(offsets, ir.Constant(I32, k))
            lane = self.b.load(self._gep(buf, off), typ=elem, align=align)
            out = self.b.insert_element(out, lane, ir.Constant(I32, k))
        return self._from_mem(out, op.dtype)

    def visit_buffer_store_(self, op: tir.BufferStore) -> None:
        """A store: scalar, contiguous vector or a scatter lane by lane."""
        buf = op.buffer
        value = self._to_mem(self.expr(op.value), op.value.dtype)
        lanes = self._lanes_of(value)
        align = self._align(buf.dtype)
        idx_lanes = max(parse_dtype(i.dtype).lanes for i in op.indices) if op.indices else 1
        if idx_lanes == 1:
            if lanes > 1 and parse_dtype(buf.dtype).lanes != lanes:
                raise CodegenError(f"{self.func_name}: storing a {op.value.dtype} value into one element "
                                   f"of '{buf.name}' ({buf.dtype})")
            self.b.store(value, self._gep(buf, self._offset(buf, op.indices)), align=align)
            return
        if lanes == 1:
            value = self._splat(value, idx_lanes)
        base = self._contiguous_base(buf, op.indices)
        if base is not None:
            self.b.store(value, self._gep(buf, self._offset(buf, base)), align=align)
            return
        offsets = self._offset(buf, op.indices)
        for k in range(idx_lanes):
            kc = ir.Constant(I32, k)
            self.b.store(self.b.extract_element(value, kc), self._gep(buf, self.b.extract_element(offsets, kc)),
                         align=align)

    # ---- allocations
    def _allocate(self, var: tir.Var, dtype: str, extents: tuple[tir.PrimExpr, ...], body: tir.Stmt, name: str) -> None:
        """Storage for ``body``: the stack for small constant sizes, else ``aligned_alloc``/``free``
        (a failed allocation returns an error code instead of crashing)."""
        elem = mem_type(dtype)
        nbytes = elem_bytes(dtype)
        sizes = [e.value for e in extents if isinstance(e, tir.IntImm)]
        if len(sizes) == len(extents):
            count = 1
            for s in sizes:
                count *= s
            if count * nbytes <= STACK_LIMIT:
                slot = self._alloca(ir.ArrayType(elem, max(count, 1)), name=name)
                self.vars[var] = slot
                self.noalias_vars.add(id(var))
                try:
                    self.stmt(body)
                finally:
                    del self.vars[var]
                return
        total = ir.Constant(I64, nbytes)
        for e in extents:
            total = self.b.mul(total, self._index64(e), flags=("nsw",))
        # aligned_alloc wants a multiple of the alignment (and at least one block).
        rounded = self.b.and_(self.b.add(total, ir.Constant(I64, ALIGN)), ir.Constant(I64, -ALIGN))
        alloc = self.mb.function("aligned_alloc", ir.FunctionType(PTR, [I64, I64]))
        ptr = self.b.call(alloc, [ir.Constant(I64, ALIGN), rounded], name=name)
        code = self.mb.message_code(f"{self.func_name}: out of memory allocating buffer '{name}'")
        with self.b.if_then(self.b.icmp_unsigned("==", ptr, ir.Constant(PTR, None)), likely=False):
            self._fail(code)
        self.vars[var] = ptr
        self.noalias_vars.add(id(var))
        self.heap.append(ptr)
        try:
            self.stmt(body)
        finally:
            del self.vars[var]
            self.heap.pop()
        if not self.b.block.is_terminated:
            self._free_heap([ptr])

    def visit_allocate_(self, op: tir.Allocate) -> None:
        """Storage for the body (see ``_allocate``)."""
        self._allocate(op.buffer_var, op.dtype, op.extents, op.body, op.buffer_var.name)

    def visit_allocate_const_(self, op: tir.AllocateConst) -> None:
        """Constant data: a private global constant of the module, read through ``buffer_var``."""
        elem = mem_type(op.dtype)
        if not isinstance(elem, (ir.IntType, ir.FloatType, ir.DoubleType, ir.HalfType)):
            raise CodegenError(f"{self.func_name}: T.allocate_const of {op.dtype} is not supported")
        values = [int(v) if isinstance(elem, ir.IntType) else float(v) for v in op.data]
        array = ir.ArrayType(elem, max(len(values), 1))
        g = ir.GlobalVariable(self.mb.module, array, name=self.mb.module.get_unique_name(f"{op.buffer_var.name}.const"))
        g.global_constant = True
        g.linkage = "private"
        g.align = ALIGN
        g.initializer = ir.Constant(array, [ir.Constant(elem, v) for v in values] or None)
        self.vars[op.buffer_var] = self.b.bitcast(g, PTR)
        try:
            self.stmt(op.body)
        finally:
            del self.vars[op.buffer_var]

    def visit_decl_buffer_(self, op: tir.DeclBuffer) -> None:
        """A view of existing data, or (when its data is not yet defined) a new allocation."""
        if op.buffer.data in self.vars:
            self.stmt(op.body)
            return
        self._allocate(op.buffer.data, op.buffer.dtype, op.buffer.shape, op.body, op.buffer.name)
