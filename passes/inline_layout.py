"""InlineLayoutKernels: fold a layout-only kernel (transpose, reshape, expand_dims, squeeze ...)
into the one kernel that reads its result, so the data is never copied into a new layout.

A *layout kernel* is a PrimFunc with one input buffer and one output buffer of static shapes,
the same dtype and the same number of elements, whose body is a single spatial block under
plain loops storing ``Out[v0, ..., vk] = In[f(v0, ..., vk)]`` where ``f`` is a bijective index
remap: a permutation of the iterators (unit dimensions may be added or dropped), or any integer
expression that numerically maps the output elements one-to-one onto the input's. A chain of
such blocks through intermediate buffers (what FuseOps makes of a transpose then a reshape)
counts too, its maps composed. The scatter form ``Out[g(v0, ..., vk)] = In[f(v0, ..., vk)]`` (what a
layout transform to or from NCHW{x}c is) counts when every output index of ``g`` is a mixed-radix
sum of distinct iterators (one iterator, ``v1 * 16 + v4``, or constant 0 for an added unit
dimension): ``g`` is inverted (``v1 = w1 // 16``, ``v4 = w1 % 16``) and composed with ``f``.

When ``lv = R.call_tir(layout, (w,), ...)`` is used exactly once in its function, as an input of
another ``R.call_tir`` (and is not the function's result), that consumer is rewritten into a new
PrimFunc ``fused_<layout>_<consumer>`` whose parameter takes ``w`` itself and whose loads of the
producer's buffer become loads of ``w`` through ``f``; the producer call goes away, and so do the
PrimFuncs no call refers to any more. Chains (a reshape of a transpose) fold one after another.
Call sites of the same layout kernel into the same consumer kernel (the layers of a repeated
block) share one new PrimFunc, so each is compiled once.

``tvmlite.compile`` runs this pass after the Relax pipeline (``ex.get_source("relax")`` shows the
result).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import Analyzer, as_const_int
from ..ir.functor import Visitor
from ..ir.module import GlobalVar, IRModule
from ..ir.node import Map
from ..ir.regions import infer_access_regions
from ..ir.scalar_ops import evaluate_index
from ..ir.stmt_functor import StmtExprMutator, post_order_visit, substitute
from .infra import ModulePass, PassContext, register_pass

__all__ = ["InlineLayoutKernels", "layout_index_map"]

# Index maps that are not plain permutations are verified element by element up to this size.
_MAX_CHECKED_ELEMENTS = 1 << 22


# ------------------------------------------------------------------ recognising layout kernels
class _LayoutMap:
    """A layout kernel's index map: the input buffer, the output's iterators and the input indices
    as expressions of them."""

    def __init__(self, src: tir.Buffer, iters: tuple[tir.Var, ...], indices: tuple[tir.PrimExpr, ...]) -> None:
        self.src = src
        self.iters = iters
        self.indices = indices

    def apply(self, at: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        """The input indices for the output element at ``at``."""
        mapping = {v: e for v, e in zip(self.iters, at)}
        return tuple(substitute(i, mapping) for i in self.indices)


def _static_shape(buf: tir.Buffer) -> tuple[int, ...] | None:
    """The buffer's shape as ints, or None when a dimension is symbolic."""
    dims = [as_const_int(d) for d in buf.shape]
    return None if any(d is None for d in dims) or buf.strides else tuple(dims)  # type: ignore[misc]


def _loops_and_block(body: tir.Stmt) -> tuple[list[tir.For], tir.BlockRealize] | None:
    """The plain loop nest around the one block of a root block's body."""
    loops = []
    while isinstance(body, tir.For):
        loops.append(body)
        body = body.body
    return (loops, body) if isinstance(body, tir.BlockRealize) else None


def layout_index_map(func: tir.PrimFunc) -> _LayoutMap | None:
    """The index map of a layout-only PrimFunc (see the module docstring), or None. A fused chain of
    layout blocks (a transpose then a reshape, through an intermediate buffer) composes into one."""
    params = list(func.params)
    if len(params) != 2 or any(p not in func.buffer_map for p in params):
        return None
    src, dst = (func.buffer_map[p] for p in params)
    root = func.body
    if not (isinstance(root, tir.BlockRealize) and not root.iter_values and not root.block.match_buffers
            and root.block.init is None):
        return None
    nests = list(root.block.body.seq) if isinstance(root.block.body, tir.SeqStmt) else [root.block.body]
    temps = list(root.block.alloc_buffers)
    if len(temps) != len(nests) - 1:
        return None
    composed: _LayoutMap | None = None
    reading = src
    for k, nest in enumerate(nests):
        writing = temps[k] if k < len(temps) else dst
        stage = _stage(nest, reading, writing)
        if stage is None:
            return None
        composed = stage if composed is None else _LayoutMap(src, stage.iters, composed.apply(stage.indices))
        reading = writing
    return composed


def _stage(nest: tir.Stmt, src: tir.Buffer, dst: tir.Buffer) -> _LayoutMap | None:
    """One loop nest storing ``dst[v...] = src[f(v...)]`` with a bijective ``f``, or None."""
    src_shape, dst_shape = _static_shape(src), _static_shape(dst)
    if src_shape is None or dst_shape is None or src.dtype != dst.dtype:
        return None
    if int(np.prod(src_shape, dtype=np.int64)) != int(np.prod(dst_shape, dtype=np.int64)):
        return None
    found = _loops_and_block(nest)
    if found is None:
        return None
    loops, realize = found
    block = realize.block
    if (block.init is not None or block.alloc_buffers or block.match_buffers
            or not (isinstance(realize.predicate, tir.IntImm) and realize.predicate.value)):
        return None
    iters = tuple(iv.var for iv in block.iter_vars)
    if len(loops) != len(iters):
        return None
    extents = []
    for loop, iv, value in zip(loops, block.iter_vars, realize.iter_values):
        extent = as_const_int(loop.extent)
        if (loop.kind != tir.ForKind.SERIAL or as_const_int(loop.min) != 0 or extent is None
                or not (value is loop.loop_var or (extent == 1 and as_const_int(value) == 0))
                or iv.iter_type != tir.IterType.DataPar or iv.dom is None
                or as_const_int(iv.dom.min) != 0 or as_const_int(iv.dom.extent) != extent):
            return None
        extents.append(extent)
    store = block.body
    if not (isinstance(store, tir.BufferStore) and store.buffer is dst and len(store.indices) == len(dst_shape)):
        return None
    load = store.value
    if not (isinstance(load, tir.BufferLoad) and load.buffer is src and len(load.indices) == len(src_shape)):
        return None
    indices = tuple(load.indices)
    if len(iters) == len(dst_shape) and all(i is v for i, v in zip(store.indices, iters)) \
            and tuple(extents) == dst_shape:
        out_iters = iters
    else:  # scatter form ``Out[g(v...)] = In[f(v...)]``: read through g's inverse
        inverse = _invert_store(tuple(store.indices), iters, tuple(extents), dst_shape)
        if inverse is None:
            return None
        # Unit loops bound to 0, no iterators fused, the others stored in loop order: a transpose
        # of unit dimensions only, as before left as a kernel (folding those into the encoder
        # layers' matmuls made the plain-ops encoder 4x slower).
        if any(v is not lp.loop_var for v, lp in zip(realize.iter_values, loops)) \
                and all(len(_linear_terms(i) or []) <= 1 for i in store.indices) \
                and _stored_order(tuple(store.indices)) == [v for v, e in zip(iters, extents) if e != 1]:
            return None
        out_iters, mapping = inverse
        indices = tuple(substitute(i, mapping) for i in indices)
    if not _bijective(indices, out_iters, src_shape, dst_shape):
        return None
    return _LayoutMap(src, out_iters, indices)


def _linear_terms(expr: tir.PrimExpr) -> list[tuple[tir.Var, int]] | None:
    """``expr`` as a sum of ``var * constant`` terms (constant 0 for none), or None."""
    if isinstance(expr, tir.Var):
        return [(expr, 1)]
    if as_const_int(expr) == 0:
        return []
    if isinstance(expr, tir.Add):
        a, b = _linear_terms(expr.a), _linear_terms(expr.b)
        return None if a is None or b is None else a + b
    if isinstance(expr, tir.Mul):
        for var, coef in ((expr.a, expr.b), (expr.b, expr.a)):
            c = as_const_int(coef)
            if isinstance(var, tir.Var) and c is not None and c > 0:
                return [(var, c)]
    return None


def _stored_order(out_indices: tuple[tir.PrimExpr, ...]) -> list[tir.Var]:
    """The iterators of a scatter store's indices, outermost first (within a fused index by
    falling stride)."""
    order: list[tir.Var] = []
    for index in out_indices:
        terms = _linear_terms(index) or []
        order.extend(v for v, _ in sorted(terms, key=lambda t: -t[1]))
    return order


def _invert_store(out_indices: tuple[tir.PrimExpr, ...], iters: tuple[tir.Var, ...], extents: tuple[int, ...],
                  dst_shape: tuple[int, ...]) -> tuple[tuple[tir.Var, ...], dict[tir.Var, tir.PrimExpr]] | None:
    """New output iterators and each block iterator as an expression of them, when every output
    index of a scatter store is a mixed-radix sum of distinct iterators (one iterator for a
    permuted dimension, ``c * 16 + v`` for two fused ones, constant 0 for an added unit one)."""
    extent_of = {id(v): e for v, e in zip(iters, extents)}
    dtype = iters[0].dtype if iters else "int64"
    out_iters = tuple(tir.Var(f"ax{j}", dtype) for j in range(len(dst_shape)))
    mapping: dict[tir.Var, tir.PrimExpr] = {}
    for w, index, size in zip(out_iters, out_indices, dst_shape):
        terms = _linear_terms(index)
        if terms is None or any(id(v) not in extent_of or v in mapping for v, _ in terms):
            return None
        terms = sorted(((v, c) for v, c in terms if extent_of[id(v)] != 1), key=lambda t: t[1])
        stride = 1
        for k, (var, coef) in enumerate(terms):
            if coef != stride or var in mapping:
                return None
            value: tir.PrimExpr = w if coef == 1 else tir.FloorDiv(w, tir.IntImm(dtype, coef))
            if k + 1 < len(terms):  # the outermost term needs no remainder
                value = tir.FloorMod(value, tir.IntImm(dtype, extent_of[id(var)]))
            mapping[var] = value
            stride *= extent_of[id(var)]
        if stride != size:
            return None
    for var, extent in zip(iters, extents):
        if var not in mapping:
            if extent != 1:
                return None  # an iterator the store ignores: not one-to-one
            mapping[var] = tir.IntImm(dtype, 0)
    return out_iters, mapping


def _bijective(indices: tuple[tir.PrimExpr, ...], iters: tuple[tir.Var, ...], src_shape: tuple[int, ...],
               dst_shape: tuple[int, ...]) -> bool:
    """Whether ``indices`` (of the output iterators) visit every input element exactly once."""
    used: list[int] = []
    permutation = True
    for idx, extent in zip(indices, src_shape):
        if isinstance(idx, tir.Var) and idx in iters:
            k = iters.index(idx)
            if dst_shape[k] != extent:
                return False
            used.append(k)
        elif not (as_const_int(idx) == 0 and extent == 1):
            permutation = False
            break
    if permutation:  # each non-unit output dimension feeds one input dimension
        return sorted(used) == sorted(set(used)) and all(
            k in used for k, n in enumerate(dst_shape) if n != 1)
    total = int(np.prod(dst_shape, dtype=np.int64))
    if total > _MAX_CHECKED_ELEMENTS:
        return False
    grids = np.indices(dst_shape, dtype=np.int64).reshape(len(dst_shape), -1)
    env = {id(v): grids[k] for k, v in enumerate(iters)}
    flat = np.zeros(total, np.int64)
    for idx, extent in zip(indices, src_shape):
        values = evaluate_index(idx, env, total)
        if values is None or values.min(initial=0) < 0 or values.max(initial=0) >= extent:
            return False
        flat = flat * extent + values
    seen = np.zeros(total, bool)
    seen[flat] = True
    return bool(seen.all())


# ------------------------------------------------------------------ rewriting the consumer
class _InlineLoads(StmtExprMutator):
    """Loads of the producer's output become loads of its input through the index map; the
    regions of blocks that read it follow."""

    def __init__(self, old: tir.Buffer, new: tir.Buffer, layout: _LayoutMap) -> None:
        self.old, self.new, self.layout = old, new, layout
        self.analyzer = Analyzer()

    def visit_buffer_load_(self, load: tir.BufferLoad) -> tir.PrimExpr:
        if load.buffer is not self.old:
            return self.generic_visit(load)
        at = tuple(self.visit_expr(i) for i in load.indices)
        indices = tuple(i if isinstance(i, (tir.Var, tir.IntImm)) else self.analyzer.simplify(i)
                        for i in self.layout.apply(at))
        return tir.BufferLoad(self.new, indices, span=load.span)

    def visit_block_(self, block: tir.Block) -> tir.Block:
        saved = [(iv.var, self.analyzer.bind(iv.var, iv.dom.min, iv.dom.extent)) for iv in block.iter_vars
                 if iv.dom is not None]
        try:
            new = self.generic_visit(block)
            if new is block or not any(r.buffer is self.old for r in block.reads):
                return new
            return self._regions(new)
        finally:
            for var, previous in reversed(saved):
                self.analyzer.restore(var, previous)

    def _regions(self, new: tir.Block) -> tir.Block:
        """The block's read regions of the producer's buffer, moved to its input (the block's
        iterator ranges known to the analyzer)."""
        inferred = None
        reads = []
        for region in new.reads:
            if region.buffer is not self.old:
                reads.append(region)
                continue
            if all(as_const_int(r.extent) == 1 for r in region.region):
                point = self.layout.apply(tuple(r.min for r in region.region))
                point = tuple(i if isinstance(i, (tir.Var, tir.IntImm)) else self.analyzer.simplify(i) for i in point)
                reads.append(tir.BufferRegion(self.new, tuple(tir.Range(i, tir.IntImm(i.dtype, 1)) for i in point)))
                continue
            if inferred is None:
                inferred = infer_access_regions(new.body, new.init, new.alloc_buffers, new.match_buffers)[0]
            reads.extend(r for r in inferred if r.buffer is self.new and all(r is not x for x in reads))
        return _replace_block(new, tuple(reads))


def _replace_block(block: tir.Block, reads: tuple[tir.BufferRegion, ...]) -> tir.Block:
    """``block`` with new read regions."""
    return tir.Block(block.name_hint, block.iter_vars, reads, block.writes, block.body, block.init,
                     block.alloc_buffers, block.match_buffers, block.annotations, span=block.span)


def _uses_buffer(func: tir.PrimFunc, buf: tir.Buffer) -> bool:
    """Whether ``buf`` or its data pointer still appears in ``func``'s body."""
    found = []

    def check(n: Any) -> None:
        """Note a use."""
        if n is buf.data or (isinstance(n, (tir.BufferLoad, tir.BufferStore)) and n.buffer is buf):
            found.append(n)

    post_order_visit(func.body, check)
    return bool(found)


def _inline_into(consumer: tir.PrimFunc, position: int, layout: _LayoutMap) -> tir.PrimFunc | None:
    """``consumer`` with its ``position``-th parameter reading the producer's input directly."""
    param = consumer.params[position]
    old = consumer.buffer_map.get(param)
    if old is None or old.dtype != layout.src.dtype or len(old.shape) != len(layout.iters):
        return None
    stored = []
    post_order_visit(consumer.body, lambda n: stored.append(n) if isinstance(n, tir.BufferStore)
                     and n.buffer is old else None)
    if stored:
        return None  # the consumer writes its input: not a read-only use
    names = {p.name for p in consumer.params} | {b.name for b in consumer.buffer_map.values()}
    name = _fresh(layout.src.name, names - {param.name, old.name})
    data = tir.Var(name, "handle", layout.src.data.type_annotation)
    new_buf = tir.Buffer(name, data, layout.src.dtype, layout.src.shape)
    new_param = tir.Var(name, "handle", layout.src.data.type_annotation)
    body = _InlineLoads(old, new_buf, layout).visit_stmt(consumer.body)
    params = consumer.params[:position] + (new_param,) + consumer.params[position + 1:]
    buffer_map = Map({(new_param if p is param else p): (new_buf if p is param else consumer.buffer_map[p])
                      for p in consumer.params if p in consumer.buffer_map})
    func = tir.PrimFunc(params, body, consumer.ret_type, buffer_map, consumer.attrs.without("global_symbol"),
                        span=consumer.span)
    return None if _uses_buffer(func, old) else func


def _fresh(name: str, taken: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``... when taken."""
    if name not in taken:
        return name
    k = 1
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


# ------------------------------------------------------------------ the Relax side
class _Uses(Visitor):
    """How often each Relax variable is used in a function."""

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}

    def visit_var_(self, var: rx.Var) -> None:
        self.counts[id(var)] = self.counts.get(id(var), 0) + 1

    visit_dataflow_var_ = visit_var_

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        self.visit(binding.value)  # the bound variable itself is a definition, not a use

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        self.visit(binding.value)

    def visit_function_(self, func: rx.Function) -> None:
        self.visit(func.body)


def _call_tir_target(value: Any) -> tuple[GlobalVar, tuple[rx.Expr, ...]] | None:
    """(callee, inputs) of a plain ``R.call_tir`` with an explicit tuple of inputs."""
    if (isinstance(value, rx.Call) and isinstance(value.op, rx.Op) and value.op.name == "relax.call_tir"
            and isinstance(value.args[0], GlobalVar) and isinstance(value.args[1], rx.Tuple)):
        return value.args[0], tuple(value.args[1].fields)
    return None


class InlineLayoutKernels(ModulePass):
    """Inline layout-only kernels (transpose, reshape, ...) into their single consumer kernel."""

    opt_level = 0

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        layouts: dict[str, _LayoutMap | None] = {}
        # One kernel per (layout kernel, consumer kernel, input position): the call sites of a
        # repeated layer share it instead of each compiling a copy. The functions are kept in the
        # values so the ids in the keys stay theirs.
        self._made: dict[tuple[int, int, int], tuple[tir.PrimFunc, tir.PrimFunc, GlobalVar]] = {}
        for _ in range(64):  # each round folds one producer; chains take several
            if not self._inline_one(mod, layouts):
                break
        return mod

    def _layout(self, mod: IRModule, name: str, layouts: dict[str, _LayoutMap | None]) -> _LayoutMap | None:
        """The index map of PrimFunc ``name`` if it is a layout kernel (cached per round)."""
        if name not in layouts:
            func = mod[name] if name in mod else None
            layouts[name] = layout_index_map(func) if isinstance(func, tir.PrimFunc) else None
        return layouts[name]

    def _inline_one(self, mod: IRModule, layouts: dict[str, _LayoutMap | None]) -> bool:
        """Fold the first eligible producer of the module; False when there is none."""
        for gv, func in mod.functions_items():
            if not isinstance(func, rx.Function) or not isinstance(func.body, rx.SeqExpr):
                continue
            uses = _Uses()
            uses.visit(func)
            for block in func.body.blocks:
                for binding in block.bindings:
                    new_func = self._try_binding(mod, func, block, binding, uses.counts, layouts)
                    if new_func is not None:
                        mod.update_func(gv, new_func)
                        self._drop_unused(mod)
                        layouts.clear()
                        self.stats["inlined"] += 1
                        return True
        return False

    def _try_binding(self, mod: IRModule, func: rx.Function, block: rx.BindingBlock, binding: Any,
                     counts: dict[int, int], layouts: dict[str, _LayoutMap | None]) -> rx.Function | None:
        """``func`` with ``binding``'s layout call inlined into its consumer, or None."""
        if not isinstance(binding, rx.VarBinding):
            return None
        target = _call_tir_target(binding.value)
        if target is None or len(binding.value.args) != 2 or len(target[1]) != 1:
            return None
        var = binding.var
        if counts.get(id(var), 0) != 1 or not isinstance(binding.value.sinfo_args[0], rx.TensorStructInfo):
            return None
        layout = self._layout(mod, target[0].name_hint, layouts)
        if layout is None:
            return None
        consumer = self._consumer(func, var)
        if consumer is None:
            return None
        c_binding, c_gv, c_inputs = consumer
        c_func = mod[c_gv.name_hint] if c_gv.name_hint in mod else None
        if not isinstance(c_func, tir.PrimFunc):
            return None
        position = next(i for i, a in enumerate(c_inputs) if a is var)
        p_func = mod[target[0].name_hint]
        key = (id(p_func), id(c_func), position)
        made = self._made.get(key)
        if made is not None and made[2].name_hint in mod:
            new_gv = made[2]
        else:
            new_prim = _inline_into(c_func, position, layout)
            if new_prim is None:
                return None
            name = _fresh(_fused_name(target[0].name_hint, c_gv.name_hint),
                          {g.name_hint for g in mod.get_global_vars()})
            new_gv = mod.add(name, new_prim)
            self._made[key] = (p_func, c_func, new_gv)
        source = target[1][0]
        c_call = c_binding.value
        fields = tuple(source if a is var else a for a in c_inputs)
        new_inputs = rx.Tuple(fields, rx.TupleStructInfo(tuple(f.struct_info for f in fields)))
        new_call = rx.Call(c_call.op, (new_gv, new_inputs, *c_call.args[2:]), c_call.attrs, c_call.sinfo_args,
                           c_call.struct_info, span=c_call.span)
        return _rewrite_bindings(func, binding, c_binding, new_call)

    @staticmethod
    def _consumer(func: rx.Function, var: rx.Var) -> tuple[rx.VarBinding, GlobalVar, tuple[rx.Expr, ...]] | None:
        """The call_tir binding that takes ``var`` among its inputs (its only use)."""
        for block in func.body.blocks:
            for b in block.bindings:
                if isinstance(b, rx.VarBinding):
                    target = _call_tir_target(b.value)
                    if target is not None and any(a is var for a in target[1]):
                        return b, target[0], target[1]
        return None

    @staticmethod
    def _drop_unused(mod: IRModule) -> None:
        """Remove the private PrimFuncs no function refers to any more."""
        refs = _GlobalRefs()
        for _, f in mod.functions_items():
            if not isinstance(f, tir.PrimFunc):
                refs.visit(f)
        for gv, f in list(mod.functions_items()):
            if isinstance(f, tir.PrimFunc) and gv.name_hint not in refs.names and "global_symbol" not in f.attrs:
                mod.remove(gv)


class _GlobalRefs(Visitor):
    """The names of the module functions a Relax function refers to."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_global_var_(self, gv: GlobalVar) -> None:
        self.names.add(gv.name_hint)


def _fused_name(producer: str, consumer: str) -> str:
    """``fused_transpose_matmul_add_relu`` for ``transpose`` into ``fused_matmul_add_relu``."""
    def strip(name: str) -> str:
        return name[len("fused_"):] if name.startswith("fused_") else name

    return f"fused_{strip(producer)}_{strip(consumer)}"


def _rewrite_bindings(func: rx.Function, drop: rx.VarBinding, replace: rx.VarBinding,
                      call: rx.Call) -> rx.Function:
    """``func`` without the binding ``drop`` and with ``replace``'s value set to ``call``."""
    blocks = []
    for block in func.body.blocks:
        bindings = []
        for b in block.bindings:
            if b is drop:
                continue
            bindings.append(rx.VarBinding(b.var, call, span=b.span) if b is replace else b)
        blocks.append(type(block)(tuple(bindings), span=block.span))
    body = rx.SeqExpr(tuple(blocks), func.body.body, func.body.struct_info, span=func.body.span)
    return rx.Function(func.params, body, func.ret_struct_info, func.is_pure, func.attrs, func.struct_info,
                       span=func.span)


register_pass("InlineLayoutKernels", InlineLayoutKernels)
