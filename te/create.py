"""``te.create_prim_func``: a TE program as a TIR PrimFunc, block by block, as TVM builds it.

Each compute becomes a nest of serial loops (spatial axes, then reduce axes, named after the
axes) around one block named after the compute, whose iterators are ``v_<axis>`` bound to the
loops (``T.axis.remap``); a reduction gets ``T.init`` with the reducer's identity. Reads and
writes are the access regions (TVM's ScriptComplete), computes that are not arguments become
root ``T.alloc_buffer``s, and a buffer with a symbolic shape is a ``T.handle`` parameter
(``var_<name>``) bound by ``T.match_buffer``."""
from __future__ import annotations

from typing import Any, Sequence

from ..ir import tir
from ..ir.canonical import canonical_simplify
from ..ir.functor import Mutator
from ..ir.names import NameSupply
from ..ir.node import Map
from ..ir.regions import infer_access_regions
from .expr import Expr
from .tensor import ComputeOp, PlaceholderOp, Reduce, Tensor

__all__ = ["create_prim_func", "topo_order"]

_TRUE = tir.IntImm("bool", 1)


def topo_order(outputs: Sequence[Tensor]) -> list[Tensor]:
    """Every tensor the outputs depend on (outputs included), producers first."""
    order: list[Tensor] = []
    seen: set[int] = set()
    for t in outputs:
        _topo_visit(t, seen, order)
    return order


def _topo_visit(t: Tensor, seen: set[int], order: list[Tensor]) -> None:
    """``topo_order``'s walk (a module function: a recursive closure is a reference cycle)."""
    for u in t.op.inputs:
        _topo_visit(u, seen, order)
    # One entry per operation: the outputs of a tuple reduction share their op.
    if id(t.op) not in seen:
        seen.add(id(t.op))
        order.append(t)


class _Rewriter(Mutator):
    """Replaces template buffers by the function's buffers and axis variables by block iterators."""

    def __init__(self, buffers: dict[int, tir.Buffer], variables: dict[int, tir.PrimExpr]) -> None:
        self.buffers = buffers
        self.variables = variables

    def visit_buffer_(self, buf: tir.Buffer) -> tir.Buffer:
        """The function's buffer of a template buffer."""
        return self.buffers.get(id(buf), buf)

    def visit_tir_var_(self, v: tir.Var) -> tir.PrimExpr:
        """The block iterator of an axis variable."""
        return self.variables.get(id(v), v)

    visit_size_var_ = visit_tir_var_


def _is_simple(buf: tir.Buffer) -> bool:
    """True when the printer shows the buffer inline as a ``T.Buffer`` parameter (constant shape)."""
    return all(isinstance(d, tir.IntImm) for d in buf.shape)


def _param(buf: tir.Buffer) -> tir.Var:
    """The parameter variable of a buffer argument (as the parser builds it)."""
    if _is_simple(buf):
        return tir.Var(buf.name, "handle", tir.PointerType(buf.dtype, "global"))
    return tir.Var(f"var_{buf.name}", "handle")


def _block(t: Tensor, bufs: dict[int, tir.Buffer], name: str, index_dtype: str) -> tir.Stmt:
    """The loop nest and block that compute the outputs of ``t``'s operation."""
    op = t.op
    assert isinstance(op, ComputeOp)
    outputs = [bufs[id(u.buffer)] for u in op.outputs]
    axes = list(op.axis) + list(op.reduce_axis)
    loop_vars = [tir.Var(a.var.name, a.var.dtype) for a in axes]
    block_vars = [tir.Var(f"v_{a.var.name}", a.var.dtype) for a in axes]
    to_block = {id(a.var): bv for a, bv in zip(axes, block_vars)}
    rw = _Rewriter(bufs, to_block)
    index = tuple(block_vars[:len(op.axis)])
    first = op.body[0]
    init: tir.Stmt | None = None
    if isinstance(first, Reduce):
        lhs = [tir.BufferLoad(b, index) for b in outputs]
        rhs = [rw.visit(s) for s in first.source]
        # TVM simplifies a single reduction's combined value (not the init nor the condition); a
        # tuple reduction's (argmax's) let-bound values keep the reducer's form
        combined = list(first.combiner.combine(lhs, rhs))
        if len(outputs) == 1:
            combined = [canonical_simplify(combined[0])]
        cond = rw.visit(first.condition)
        init = tir.seq([tir.BufferStore(b, rw.visit(v), index) for b, v in zip(outputs, first.identity())])
        if len(outputs) == 1:
            body: tir.Stmt = tir.BufferStore(outputs[0], combined[0], index)
        else:
            # Tuple reductions bind every new value first, then store them (TVM's form).
            temps = [tir.Var(f"v_{b.name}", b.dtype) for b in outputs]
            body = tir.seq([tir.BufferStore(b, tv, index) for b, tv in zip(outputs, temps)])
            for tv, value in reversed(list(zip(temps, combined))):
                body = tir.LetStmt(tv, value, body)
        if not (isinstance(cond, tir.IntImm) and cond.value == 1):
            body = tir.IfThenElse(cond, body)
    else:
        body = tir.seq([tir.BufferStore(b, canonical_simplify(rw.visit(v)), index) for b, v in zip(outputs, op.body)])
    reads, writes = infer_access_regions(body, init, ())
    iter_vars = tuple(tir.IterVar(tir.Range(a.dom.min, a.dom.extent), bv, a.iter_type)
                      for a, bv in zip(axes, block_vars))
    iter_values: tuple[tir.PrimExpr, ...] = tuple(loop_vars)
    if not axes:
        # A scalar compute still gets one iterator, as TVM gives it: vi = T.axis.spatial(1, 0).
        iter_vars = (tir.IterVar(tir.Range(tir.IntImm("int32", 0), tir.IntImm("int32", 1)), tir.Var("vi", "int32"),
                                 tir.IterType.DataPar),)
        iter_values = (tir.IntImm(index_dtype, 0),)
    # The compute's attrs become the block's annotations, as TVM's CreatePrimFunc makes them
    # (softmax's {"axis": k}, pools' schedule_rule); layout_free_placeholders is a function attribute.
    notes = {k: v for k, v in (op.attrs or {}).items() if k != "layout_free_placeholders"}
    block = tir.Block(name, iter_vars, reads, writes, body, init, annotations=Map(notes))
    stmt: tir.Stmt = tir.BlockRealize(iter_values, _TRUE, block)
    for a, lv in reversed(list(zip(axes, loop_vars))):
        stmt = tir.For(lv, a.dom.min, a.dom.extent, tir.ForKind.SERIAL, stmt)
    return stmt


def create_prim_func(args: Sequence[Tensor | tir.Var | Any], index_dtype_override: str | None = None) -> tir.PrimFunc:
    """A PrimFunc computing the output tensors of ``args`` from its input tensors.

    ``args`` lists the parameters in order: placeholders, computed tensors (outputs; every
    output of a tuple reduction must be listed) and scalar ``tir.Var``s (symbolic sizes not given
    by any shape); outputs of a tuple reduction that are not arguments become intermediate
    buffers. ``index_dtype_override`` (``"int64"`` from Relax's ``call_te``) is the dtype of the
    index of scalar computes; shapes are taken as built (``call_te`` builds int64 ones)."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    scalars = [a.expr if isinstance(a, Expr) else a for a in args if not isinstance(a, Tensor)]
    for s in scalars:
        if not isinstance(s, tir.Var):
            raise TypeError(f"create_prim_func takes tensors and scalar variables, got {type(s).__name__}")
    outputs = [t for t in tensors if isinstance(t.op, ComputeOp)]
    if not outputs:
        raise ValueError("create_prim_func needs at least one computed tensor among its arguments")
    order = topo_order(outputs)
    buffer_names, block_names = NameSupply(), NameSupply()

    def make_buffer(u: Tensor) -> tir.Buffer:
        name = buffer_names.fresh(u.name)
        return tir.Buffer(name, tir.Var(name, "handle", tir.PointerType(u.dtype, "global")), u.dtype, u.shape)

    bufs: dict[int, tir.Buffer] = {}  # template buffer id -> the function's buffer
    for t in tensors:
        bufs[id(t.buffer)] = make_buffer(t)
    allocs: list[tir.Buffer] = []
    for t in order:
        for u in t.op.outputs:
            if id(u.buffer) in bufs:
                continue
            if isinstance(u.op, PlaceholderOp):
                raise ValueError(f"the input {u.name} is used but is not among the arguments")
            bufs[id(u.buffer)] = make_buffer(u)
            allocs.append(bufs[id(u.buffer)])  # an intermediate result
    stmts = [_block(t, bufs, block_names.fresh(t.op.name), index_dtype_override or "int32")
             for t in order if isinstance(t.op, ComputeOp)]
    params: list[tir.Var] = []
    buffer_map = []
    for a in args:
        if isinstance(a, Tensor):
            buf = bufs[id(a.buffer)]
            p = _param(buf)
            params.append(p)
            buffer_map.append((p, buf))
        else:
            params.append(a.expr if isinstance(a, Expr) else a)
    root = tir.Block("root", (), (), (), tir.seq(stmts), None, tuple(allocs))
    body = tir.BlockRealize((), _TRUE, root)
    attrs: dict[str, Any] = {"global_symbol": "main", "tir.noalias": True}
    layout_free = _layout_free(order, tensors)
    if layout_free:
        attrs["layout_free_buffers"] = layout_free
    return tir.PrimFunc(tuple(params), body, None, Map(buffer_map), Map(attrs))


def _layout_free(order: list[Tensor], args: list[Tensor]) -> tuple[int, ...]:
    """Parameter positions of the placeholders computes mark ``layout_free_placeholders`` (dense weights)."""
    out: list[int] = []
    for t in order:
        if isinstance(t.op, ComputeOp):
            for p in t.op.attrs.get("layout_free_placeholders", ()):
                for i, a in enumerate(args):
                    if a is p and i not in out:
                        out.append(i)
    return tuple(sorted(out))
