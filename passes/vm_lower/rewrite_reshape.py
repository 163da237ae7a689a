"""RewriteDataflowReshape (TVM's ``relax.transform.RewriteDataflowReshape``): a ``call_tir`` of a
PrimFunc that only moves elements as a reshape does (reshape, flatten, expand_dims, squeeze...)
becomes ``R.reshape(x, R.shape([...]))`` again, which VMBuiltinLower turns into the VM's
``vm.builtin.reshape``: a view of the same memory instead of a copy.

As TVM's pass: only bindings of dataflow variables inside dataflow blocks (a block's outputs stay
calls), the kernel reads exactly one of its inputs, input and result have the same dtype and
provably the same element count. The kernel is a reshape when its one store writes every output
element once, with the element of the same row-major position in the input: proven symbolically
with the loop ranges (symbolic sizes too, for the index forms reshapes take), or for static sizes
(up to 2**21 iterations) checked by evaluating both flattened indices at every iteration."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ...ir import relax as rx
from ...ir import tir
from ...ir.arith import Analyzer, as_const_int, can_prove_equal, can_prove_ge, prod, simplify
from ...ir.functor import Mutator
from ...ir.module import GlobalVar, IRModule
from ...ir.scalar_ops import evaluate_index
from ...ir.stmt_functor import substitute
from ...ir.struct_info import sinfo_of, with_sinfo
from ..infra import FunctionPass, PassContext, register_pass
from .common import call, is_op, rewrite_seq

__all__ = ["RewriteDataflowReshape", "is_reshape_kernel"]

_MAX_POINTS = 1 << 21  # the largest iteration space checked point by point


class _DropMods(Mutator):
    """Symbolic sizes: ``a % m`` becomes ``a`` where ``0 <= a < m`` follows from the loop ranges
    (the wrap-around a reshape's index expression guards against, never taken)."""

    def __init__(self, extents: dict[tir.Var, tir.PrimExpr]) -> None:
        self.extents = extents

    def upper(self, e: tir.PrimExpr) -> tir.PrimExpr | None:
        """The largest value of a non-negative expression of loop variables and sizes, or None."""
        if isinstance(e, tir.IntImm):
            return e if e.value >= 0 else None
        if isinstance(e, tir.Var):  # a loop variable, or a size (never negative)
            return tir.Sub(self.extents[e], tir.IntImm(e.dtype, 1)) if e in self.extents else e
        if isinstance(e, (tir.Add, tir.Mul)):
            a, b = self.upper(e.a), self.upper(e.b)
            if a is None or b is None:
                return None
            return tir.Add(a, b) if isinstance(e, tir.Add) else tir.Mul(a, b)
        if isinstance(e, tir.FloorDiv) and isinstance(e.b, tir.IntImm) and e.b.value > 0:
            a = self.upper(e.a)
            return None if a is None else tir.FloorDiv(a, e.b)
        if isinstance(e, tir.FloorMod) and self.upper(e.a) is not None:
            return tir.Sub(e.b, tir.IntImm(e.dtype, 1))
        return None

    def visit_floor_mod_(self, e: tir.FloorMod) -> tir.PrimExpr:
        e = self.generic_visit(e)
        top = self.upper(e.a)
        if top is not None and can_prove_ge(e.b, simplify(tir.Add(top, tir.IntImm(e.dtype, 1)))):
            return e.a
        return e


def _terms(e: tir.PrimExpr) -> list[tir.PrimExpr]:
    """The summands of a sum."""
    return _terms(e.a) + _terms(e.b) if isinstance(e, tir.Add) else [e]


def _scaled(t: tir.PrimExpr, kind: type) -> tuple[tir.BinaryOp, int] | None:
    """``t`` as ``(x // c or x % c) * k`` (k a literal, 1 when absent), else None."""
    if isinstance(t, kind):
        return t, 1
    if isinstance(t, tir.Mul) and isinstance(t.a, kind) and isinstance(t.b, tir.IntImm):
        return t.a, t.b.value
    return None


def _join_div_mod(e: tir.PrimExpr) -> tir.PrimExpr:
    """``x // c * (c * k) + x % c * k`` (anywhere in a sum) becomes ``x * k``, repeatedly."""
    terms = _terms(simplify(e))
    changed = True
    while changed:
        changed = False
        for i, t in enumerate(terms):
            div = _scaled(t, tir.FloorDiv)
            if div is None or not isinstance(div[0].b, tir.IntImm) or div[0].b.value <= 0:
                continue
            (x, c), kc = (div[0].a, div[0].b.value), div[1]
            for j, u in enumerate(terms):
                mod = _scaled(u, tir.FloorMod) if j != i else None
                if mod is not None and mod[1] * c == kc and can_prove_equal(mod[0].a, x) \
                        and can_prove_equal(mod[0].b, div[0].b):
                    joined = simplify(tir.Mul(x, tir.IntImm(x.dtype, mod[1])))
                    terms = [v for k, v in enumerate(terms) if k not in (i, j)] + _terms(joined)
                    changed = True
                    break
            if changed:
                break
    out = terms[0]
    for t in terms[1:]:
        out = tir.Add(out, t)
    return simplify(out)


def _flat(indices: tuple, shape: tuple) -> tir.PrimExpr:
    """The row-major position of ``indices`` in a buffer of ``shape``."""
    pos: tir.PrimExpr = tir.IntImm("int64", 0)
    for i, n in zip(indices, shape):
        pos = tir.Add(tir.Mul(pos, n), i)
    return pos


def _copy_nest(body: tir.Stmt) -> tuple[list[tir.For], tir.BufferStore] | None:
    """The loops and the one store of a body that is a loop nest around one store (in blocks
    whose iterators are bound to the loops, without init, allocation or predicate)."""
    loops: list[tir.For] = []
    binding: dict[tir.Var, tir.PrimExpr] = {}
    node = body
    while True:
        if isinstance(node, tir.BlockRealize):
            block = node.block
            if block.init is not None or block.alloc_buffers or block.match_buffers \
                    or as_const_int(node.predicate) != 1:
                return None
            for iv, value in zip(block.iter_vars, node.iter_values):
                if iv.iter_type != tir.IterType.DataPar:
                    return None
                binding[iv.var] = value
            node = block.body
        elif isinstance(node, tir.For):
            if as_const_int(node.min) != 0 or node.step is not None:
                return None
            loops.append(node)
            node = node.body
        elif isinstance(node, tir.BufferStore):
            return loops, (substitute(node, binding) if binding else node)
        else:
            return None


def _same_positions(loops: list[tir.For], out_flat: tir.PrimExpr, in_flat: tir.PrimExpr, count: tir.PrimExpr) -> bool:
    """True when the store writes positions 0..count-1 once each, reading the same position."""
    extents = [lp.extent for lp in loops]
    if not can_prove_equal(prod(extents), count):
        return False
    linear = _flat(tuple(lp.loop_var for lp in loops), tuple(extents))
    unit = {lp.loop_var: tir.IntImm(lp.loop_var.dtype, 0) for lp in loops if as_const_int(lp.extent) == 1}
    if unit:  # a loop of one iteration (expand_dims' new axis) is its value 0
        out_flat, in_flat, linear = (substitute(f, unit) for f in (out_flat, in_flat, linear))
    analyzer = Analyzer()
    for lp in loops:
        analyzer.bind(lp.loop_var, lp.min, lp.extent)
    if can_prove_equal(analyzer.simplify(out_flat), analyzer.simplify(linear)) \
            and can_prove_equal(analyzer.simplify(in_flat), analyzer.simplify(linear)):
        return True
    drop = _DropMods({lp.loop_var: lp.extent for lp in loops})
    if all(can_prove_equal(_join_div_mod(analyzer.simplify(drop.visit(f))), simplify(linear))
           for f in (out_flat, in_flat)):
        return True
    sizes = [as_const_int(e) for e in extents]
    if any(s is None for s in sizes) or int(np.prod(sizes, dtype=np.int64)) > _MAX_POINTS:
        return False
    total = int(np.prod(sizes, dtype=np.int64))
    grids = np.indices(sizes, dtype=np.int64).reshape(len(sizes), total)
    env = {id(lp.loop_var): grids[k] for k, lp in enumerate(loops)}
    out_pos, in_pos = (evaluate_index(e, env, total) for e in (out_flat, in_flat))
    if out_pos is None or in_pos is None or not np.array_equal(out_pos, in_pos):
        return False
    return np.array_equal(np.sort(out_pos), np.arange(out_pos.size, dtype=np.int64))


def is_reshape_kernel(func: tir.PrimFunc) -> bool:
    """True when the PrimFunc copies all of one input buffer into its output in row-major order."""
    nest = _copy_nest(func.body)
    if nest is None:
        return False
    loops, store = nest
    load = store.value
    params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    if not isinstance(load, tir.BufferLoad) or load.buffer is store.buffer \
            or not any(store.buffer is p for p in params) or not any(load.buffer is p for p in params) \
            or load.dtype != store.buffer.dtype:
        return False
    if any(isinstance(i, tir.Ramp) for i in (*store.indices, *load.indices)):
        return False
    if not can_prove_equal(prod(load.buffer.shape), prod(store.buffer.shape)):
        return False  # a slice copies in order too, but not every element
    out_flat = _flat(store.indices, store.buffer.shape)
    in_flat = _flat(load.indices, load.buffer.shape)
    return _same_positions(loops, out_flat, in_flat, prod(store.buffer.shape))


def _used_input(func: tir.PrimFunc, args: tuple) -> rx.Expr | None:
    """The one argument whose buffer the kernel reads (a fused kernel may take more)."""
    nest = _copy_nest(func.body)
    if nest is None:
        return None
    read = nest[1].value.buffer
    for param, arg in zip(func.params, args):
        if func.buffer_map.get(param) is read:
            return arg
    return None


class _Rewrite:
    """Rewrites the reshape-like call_tir bindings of one function."""

    def __init__(self, mod: IRModule) -> None:
        self.mod = mod
        self.reshape: dict[str, bool] = {}  # PrimFunc name -> is a reshape (checked once per module)
        self.count = 0

    def _is_reshape(self, gv: GlobalVar) -> bool:
        name = gv.name_hint
        if name not in self.reshape:
            func = self.mod[name] if name in self.mod else None
            self.reshape[name] = isinstance(func, tir.PrimFunc) and is_reshape_kernel(func)
        return self.reshape[name]

    def __call__(self, b: rx.Binding) -> Iterable[rx.Binding]:
        value = b.value
        if not isinstance(b, rx.VarBinding) or not isinstance(b.var, rx.DataflowVar) \
                or not is_op(value, "relax.call_tir") or len(value.args) != 2 \
                or not isinstance(value.args[0], GlobalVar) or not isinstance(value.args[1], rx.Tuple) \
                or not self._is_reshape(value.args[0]):
            return (b,)
        arg = _used_input(self.mod[value.args[0].name_hint], value.args[1].fields)
        src, out = sinfo_of(arg) if arg is not None else None, value.sinfo_args[0]
        if not isinstance(src, rx.TensorStructInfo) or not isinstance(out, rx.TensorStructInfo) \
                or src.dtype != out.dtype or src.shape is None or out.shape is None \
                or not can_prove_equal(prod(tuple(src.shape)), prod(tuple(out.shape))):
            return (b,)
        self.count += 1
        return (rx.VarBinding(b.var, call("relax.reshape", arg, with_sinfo(rx.ShapeExpr(tuple(out.shape))))),)


class RewriteDataflowReshape(FunctionPass):
    """Turn reshape-like kernel calls inside dataflow blocks back into ``R.reshape``."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        rewrite = _Rewrite(mod)
        body = rewrite_seq(func.body, rewrite)
        self.stats["reshapes"] += rewrite.count
        return func if body is func.body else rx.Function(func.params, body, func.ret_struct_info, func.is_pure,
                                                          func.attrs, span=func.span)


register_pass("RewriteDataflowReshape", RewriteDataflowReshape)
