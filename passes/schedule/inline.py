"""compute_inline / reverse_compute_inline: fold an elementwise block into the blocks that read its
output, or into the block that produces its input, and remove it with the loops it leaves empty
and the intermediate buffer.

As in TVM, the inlined block must be *complete* (every iterator data-parallel, the only writer of
its buffer in the scope, not reading what it writes), its body a single ``BufferStore`` and the
intermediate buffer allocated inside the function (an output block is never inlined). Blocks whose
accesses change get their ``T.reads``/``T.writes`` recomputed."""
from __future__ import annotations

from typing import Any

from ...ir import tir
from ...ir.arith import Analyzer, as_dtype, expr_key
from ...ir.intrinsics import address_taken
from ...ir.node import replace
from ...ir.regions import infer_access_regions
from ...ir.stmt_functor import StmtExprMutator, StmtExprVisitor, substitute
from .state import BlockLoc, BlockRV, ScheduleError, ScheduleState
from .tree import block_realizes, child_realizes, replace_at

__all__ = ["compute_inline", "reverse_compute_inline"]


# ---------------------------------------------------------------------------- checks
def _scope(loc: BlockLoc) -> tir.Block:
    """The block whose body holds ``loc``'s block (refused when there is none)."""
    scope = loc.scope_block
    if scope is None:
        raise ScheduleError(f"the block {loc.block.name_hint!r} is not inside a scope block (the function has no "
                            f"root block)")
    return scope


def _name(block: tir.Block) -> str:
    return repr(block.name_hint)


def _check_no_init(block: tir.Block) -> None:
    if block.init is not None:
        raise ScheduleError(f"the block {_name(block)} has an init statement (T.init()): a reduction block "
                            f"cannot be inlined")


def _single_write(block: tir.Block) -> tir.Buffer:
    if len(block.writes) != 1:
        raise ScheduleError(f"the block {_name(block)} writes {len(block.writes)} buffer regions; only a block "
                            f"writing a single buffer region can be inlined")
    return block.writes[0].buffer


def _check_not_output(func_name: str, func: tir.PrimFunc, block: tir.Block, buf: tir.Buffer) -> None:
    """A buffer of the function's signature is visible outside: its writer cannot disappear."""
    if any(b is buf for b in func.buffer_map.values()):
        raise ScheduleError(f"the block {_name(block)} is an output block: it writes {buf.name!r}, a parameter of "
                            f"{func_name!r}, which must stay written")


def _realizes(scope: tir.Block, state: ScheduleState | None, func_name: str) -> list[tir.BlockRealize]:
    """Every block realize inside ``scope``, in program order (from the schedule's index when it has it)."""
    found = state.index(func_name).realizes_in(scope) if state is not None else None
    return found if found is not None else [r for r, _ in block_realizes(scope.body)]


def _check_complete(block: tir.Block, scope: tir.Block, state: ScheduleState | None = None,
                    func_name: str = "") -> None:
    """TVM's complete block: data-parallel iterators only, the only writer of its buffers in the
    scope, and no buffer both read and written."""
    for iv in block.iter_vars:
        if iv.iter_type != tir.IterType.DataPar:
            raise ScheduleError(f"the block {_name(block)} is not a complete block: its iterator {iv.var.name!r} is "
                                f"not data-parallel")
    written = {id(r.buffer) for r in block.writes}
    for realize in _realizes(scope, state, func_name):
        other = realize.block
        if other is block:
            continue
        for region in other.writes:
            if id(region.buffer) in written:
                raise ScheduleError(f"the block {_name(block)} is not a complete block: the block {_name(other)} "
                                    f"also writes {region.buffer.name!r}")
    for region in block.reads:
        if id(region.buffer) in written:
            raise ScheduleError(f"the block {_name(block)} is not a complete block: it reads {region.buffer.name!r}, "
                                f"which it writes")


def _check_order(scope: tir.Block, first: tir.Block, last: tir.Block | None, buffers: set[int],
                 moved: tir.Block, accesses: str, why: str, state: ScheduleState | None = None,
                 func_name: str = "") -> None:
    """No block after ``first`` (and before ``last``, when given) in program order may touch
    (``accesses``: "writes" or "reads") one of ``buffers``: ``moved``'s computation changes place."""
    order = [r.block for r in _realizes(scope, state, func_name)]
    start = next(i for i, b in enumerate(order) if b is first)
    stop = next((i for i, b in enumerate(order) if b is last), len(order))
    for other in order[start + 1:stop]:
        if other is moved:
            continue
        for region in getattr(other, accesses):
            if id(region.buffer) in buffers:
                raise ScheduleError(f"the block {_name(other)} {accesses} {region.buffer.name!r} between "
                                    f"{_name(first)} and {_name(last) if last is not None else 'its readers'}: "
                                    f"{why}")


def _single_store(block: tir.Block, buf: tir.Buffer | None = None) -> tir.BufferStore:
    body = block.body
    if not isinstance(body, tir.BufferStore) or (buf is not None and body.buffer is not buf):
        raise ScheduleError(f"the body of the block {_name(block)} must be a single store into "
                            f"{(buf or block.writes[0].buffer).name!r}, got a {type(body).__name__}")
    return body


class _OpaqueUse(StmtExprVisitor):
    """Finds uses of a buffer other than element loads/stores: its data pointer, a match_buffer
    view of it, or a store into it (outside ``skip``)."""

    def __init__(self, buf: tir.Buffer, skip: tir.Block) -> None:
        self.buf, self.skip = buf, skip
        self.found: str | None = None

    def visit_var_(self, var: tir.Var) -> None:
        if var is self.buf.data and self.found is None:
            self.found = f"its data pointer {var.name!r} is used directly"

    def visit_call_(self, call: tir.Call) -> None:
        if address_taken(call) is self.buf and self.found is None:
            self.found = "its address is taken (T.address_of)"
        super().visit_call_(call)

    def visit_block_(self, block: tir.Block) -> None:
        if block is self.skip:
            return
        for m in block.match_buffers:
            if m.source.buffer is self.buf and self.found is None:
                self.found = f"the block {_name(block)} views it through T.match_buffer"
        super().visit_block_(block)


def _check_no_opaque_access(buf: tir.Buffer, scope: tir.Block, skip: tir.Block,
                            state: ScheduleState | None = None, func_name: str = "") -> None:
    finder = _OpaqueUse(buf, skip)
    # Only the statements the schedule's index says use the buffer other than element-wise.
    stmts = state.index(func_name).statements_using(scope, {id(buf.data), id(buf)}) if state is not None else None
    for stmt in (scope.body,) if stmts is None else stmts:
        finder.visit_stmt(stmt)
    if finder.found is not None:
        raise ScheduleError(f"the buffer {buf.name!r} cannot be inlined: {finder.found}")


def _remove_block(loc: BlockLoc, scope: tir.Block) -> tir.Block:
    """``scope`` without ``loc``'s block and the loops it leaves empty."""
    try:
        return replace_at(loc.path[loc.scope_index:], None, scope)  # type: ignore[return-value]
    except ValueError:
        raise ScheduleError(f"the block {_name(loc.block)} is the only statement of the scope "
                            f"{_name(scope)}: removing it would leave the scope empty") from None


# ---------------------------------------------------------------------------- rewriting the scope
class _ScopeRewriter(StmtExprMutator):
    """Rewrites a scope body: loads of ``buf`` through ``on_load``, stores into it through
    ``on_store``; blocks whose regions mention ``buf`` get their regions recomputed."""

    def __init__(self, buf: tir.Buffer, on_load: Any = None, on_store: Any = None) -> None:
        self.buf = buf
        self.on_load, self.on_store = on_load, on_store

    def visit_buffer_load_(self, load: tir.BufferLoad) -> tir.PrimExpr:
        new = super().visit_buffer_load_(load)
        if self.on_load is not None and isinstance(new, tir.BufferLoad) and new.buffer is self.buf:
            return self.on_load(new)
        return new

    def visit_buffer_store_(self, store: tir.BufferStore) -> tir.Stmt:
        new = super().visit_buffer_store_(store)
        if self.on_store is not None and isinstance(new, tir.BufferStore) and new.buffer is self.buf:
            return self.on_store(new)
        return new

    def visit_block_realize_(self, realize: tir.BlockRealize) -> tir.Stmt:
        """A block whose regions (which cover the blocks inside it) and bindings do not mention
        the buffer is kept as it is, unwalked: an inline then costs the blocks that use the buffer,
        not every block of the scope."""
        block = realize.block
        if (any(r.buffer is self.buf for r in (*block.reads, *block.writes))
                or any(b is self.buf for b in block.alloc_buffers)
                or any(m.source.buffer is self.buf for m in block.match_buffers)):
            return super().visit_block_realize_(realize)
        loads: list[tir.BufferLoad] = []
        for expr in (*realize.iter_values, realize.predicate):
            if not isinstance(expr, (tir.Var, tir.IntImm)):  # the usual bindings load nothing
                loads += _loads_of(expr, self.buf)
        return super().visit_block_realize_(realize) if loads else realize

    def visit_block_(self, block: tir.Block) -> tir.Block:
        new = super().visit_block_(block)
        touched = any(r.buffer is self.buf for r in (*block.reads, *block.writes))
        if touched:
            reads, writes = infer_access_regions(new.body, new.init, new.alloc_buffers, new.match_buffers)
            new = replace(new, reads=reads, writes=writes)
        return new


def _finish(state: ScheduleState, loc: BlockLoc, scope: tir.Block, rewriter: _ScopeRewriter,
            buf: tir.Buffer) -> None:
    """Rewrite the scope (the removed block already gone) and drop ``buf``'s allocation."""
    body = rewriter.visit_stmt(scope.body)
    allocs = tuple(b for b in scope.alloc_buffers if b is not buf)
    new_scope = replace(scope, body=body, alloc_buffers=allocs)
    state.replace_stmt(loc.func_name, loc.path[:loc.scope_index], new_scope)


# ---------------------------------------------------------------------------- compute_inline
def _iter_offset(index: tir.PrimExpr) -> tuple[tir.Var, int] | None:
    """``v``, ``v + c`` or ``v - c`` as (v, c); None for any other index."""
    if isinstance(index, tir.Var):
        return index, 0
    if isinstance(index, (tir.Add, tir.Sub)) and isinstance(index.a, tir.Var) and isinstance(index.b, tir.IntImm):
        return index.a, index.b.value if isinstance(index, tir.Add) else -index.b.value
    return None


def _producer_index_map(block: tir.Block, store: tir.BufferStore) -> list[tuple[int, tir.Var, int]]:
    """(index position, iterator, offset) for each store index ``v + offset``; refuses indices
    that are not distinct iterators plus constants (constant indices are allowed) and iterators
    the indices miss (unless they have a single value): the store must map them one to one."""
    iter_vars = {id(iv.var) for iv in block.iter_vars}
    pairs: list[tuple[int, tir.Var, int]] = []
    used: set[int] = set()
    for pos, index in enumerate(store.indices):
        if isinstance(index, tir.IntImm):
            continue
        hit = _iter_offset(index)
        if hit is None or id(hit[0]) not in iter_vars or id(hit[0]) in used:
            raise ScheduleError(
                f"the body of the block {_name(block)} must store at indices that are distinct block iterators "
                f"(B[v0, v1, ...] = value); index {pos} of its store into {store.buffer.name!r} is not")
        used.add(id(hit[0]))
        pairs.append((pos, hit[0], hit[1]))
    for iv in block.iter_vars:
        if id(iv.var) not in used and not _is_unit(iv):
            raise ScheduleError(f"the store of the block {_name(block)} does not use its iterator {iv.var.name!r}: "
                                f"the store indices must map the iterators one to one")
    return pairs


def _is_unit(iv: tir.IterVar) -> bool:
    """An iterator with a single value."""
    dom = iv.dom
    return dom is not None and isinstance(dom.extent, tir.IntImm) and dom.extent.value == 1 \
        and isinstance(dom.min, tir.IntImm)


def compute_inline(state: ScheduleState, block: BlockRV) -> None:
    """Inline a producer into its consumers."""
    loc = state.locate_block(block)
    producer = loc.block
    _check_no_init(producer)
    buf = _single_write(producer)
    scope = _scope(loc)
    _check_not_output(loc.func_name, loc.func, producer, buf)
    _check_complete(producer, scope, state, loc.func_name)
    store = _single_store(producer, buf)
    pairs = _producer_index_map(producer, store)
    units = {iv.var: iv.dom.min for iv in producer.iter_vars if _is_unit(iv)}  # type: ignore[union-attr]
    _check_no_opaque_access(buf, scope, producer, state, loc.func_name)
    _check_order(scope, producer, None, {id(r.buffer) for r in producer.reads}, producer, "writes",
                 "the inlined expression would read the new values", state, loc.func_name)

    def on_load(load: tir.BufferLoad) -> tir.PrimExpr:
        vmap: dict[tir.Var, tir.PrimExpr] = dict(units)
        for pos, var, offset in pairs:
            index = as_dtype(load.indices[pos], var.dtype)
            if offset > 0:
                index = tir.Sub(index, tir.IntImm(var.dtype, offset))
            elif offset < 0:
                index = tir.Add(index, tir.IntImm(var.dtype, -offset))
            vmap[var] = index
        return substitute(store.value, vmap)  # type: ignore[return-value]

    remaining = _remove_block(loc, scope)
    _finish(state, loc, remaining, _ScopeRewriter(buf, on_load=on_load), buf)


# ---------------------------------------------------------------------------- reverse_compute_inline
def _loads_of(expr: tir.PrimExpr, buf: tir.Buffer) -> list[tir.BufferLoad]:
    finder = _FindLoads(buf)
    finder.visit_expr(expr)
    return finder.found


class _FindLoads(StmtExprVisitor):
    """The loads of one buffer (a class made per call would be a reference cycle)."""

    def __init__(self, buf: tir.Buffer) -> None:
        self.buf = buf
        self.found: list[tir.BufferLoad] = []

    def visit_buffer_load_(self, load: tir.BufferLoad) -> None:
        """Note a load of the buffer; walk its indices."""
        if load.buffer is self.buf:
            self.found.append(load)
        super().visit_buffer_load_(load)


def _single_produced_read(consumer: tir.Block, scope: tir.Block) -> tir.Buffer:
    """The one buffer the consumer reads that a block of the scope writes."""
    written = {id(r.buffer) for realize, _ in block_realizes(scope.body) if realize.block is not consumer
               for r in realize.block.writes}
    produced: list[tir.Buffer] = []
    for region in consumer.reads:
        if id(region.buffer) in written and all(b is not region.buffer for b in produced):
            produced.append(region.buffer)
    if len(produced) != 1:
        what = "none" if not produced else ", ".join(repr(b.name) for b in produced)
        raise ScheduleError(f"the block {_name(consumer)} must read exactly one buffer written in its scope "
                            f"(it reads: {what})")
    return produced[0]


def _single_producer(consumer: tir.Block, scope: tir.Block, buf: tir.Buffer) -> tir.BlockRealize:
    """The block of the scope that writes ``buf``: the only one, a leaf, and complete."""
    writers = [r for r, _ in child_realizes(scope)
               if r.block is not consumer and any(w.buffer is buf for w in r.block.writes)]
    if len(writers) != 1:
        raise ScheduleError(f"the block {_name(consumer)} must have a single producer block of {buf.name!r} in its "
                            f"scope, found {len(writers)}")
    realize = writers[0]
    producer = realize.block
    if block_realizes(producer.body):
        raise ScheduleError(f"the producer {_name(producer)} of {buf.name!r} is not a leaf block")
    if producer.init is not None or any(iv.iter_type != tir.IterType.DataPar for iv in producer.iter_vars):
        raise ScheduleError(f"the producer {_name(producer)} of {buf.name!r} is a reduction block: only a complete "
                            f"(data-parallel) producer can take in its consumer")
    try:
        _check_complete(producer, scope)
    except ScheduleError as exc:
        raise ScheduleError(f"the producer must be a complete block, but {exc}") from None
    return realize


def _consumer_index_map(consumer: tir.Block, loads: list[tir.BufferLoad], buf: tir.Buffer
                        ) -> dict[int, tir.Var]:
    """index position -> consumer iterator, when every load of ``buf`` uses the same indices,
    each a distinct iterator (or 0 along a unit dimension), and the iterators they miss have a
    single value."""
    key = expr_key(loads[0].indices)
    if any(expr_key(load.indices) != key for load in loads[1:]):
        raise ScheduleError(f"the block {_name(consumer)} reads {buf.name!r} at different indices: "
                            f"it can be inlined only when every read uses the same indices")
    iter_vars = {id(iv.var) for iv in consumer.iter_vars}
    mapping: dict[int, tir.Var] = {}
    for pos, index in enumerate(loads[0].indices):
        if _const(index) == 0 and _const(buf.shape[pos]) == 1:
            continue  # a unit dimension (Simplify's constant for a unit iterator): nothing to map
        if not (isinstance(index, tir.Var) and id(index) in iter_vars) or any(v is index for v in mapping.values()):
            raise ScheduleError(f"the block {_name(consumer)} must read {buf.name!r} at indices that are distinct "
                                f"block iterators (index {pos} is not)")
        mapping[pos] = index
    for iv in consumer.iter_vars:
        if all(v is not iv.var for v in mapping.values()) and not _is_unit(iv):
            raise ScheduleError(f"the block {_name(consumer)} iterates over {iv.var.name!r}, which its read of "
                                f"{buf.name!r} does not use: the producer does not cover its iteration domain")
    return mapping


def reverse_compute_inline(state: ScheduleState, block: BlockRV) -> None:
    """Inline a consumer into its producer."""
    loc = state.locate_block(block)
    consumer = loc.block
    _check_no_init(consumer)
    scope = _scope(loc)
    buf = _single_produced_read(consumer, scope)
    _check_complete(consumer, scope)
    producer_realize = _single_producer(consumer, scope, buf)
    producer = producer_realize.block
    _check_not_output(loc.func_name, loc.func, producer, buf)
    for realize, _ in block_realizes(scope.body):
        other = realize.block
        if other is not consumer and other is not producer and any(r.buffer is buf for r in other.reads):
            raise ScheduleError(f"the block {_name(other)} also reads {buf.name!r}: the producer "
                                f"{_name(producer)} must have a single consumer")
    if not (isinstance(loc.realize.predicate, tir.IntImm) and loc.realize.predicate.value):
        raise ScheduleError(f"the block {_name(consumer)} has a predicate (T.where): a predicated block cannot "
                            f"be inlined into its producer")
    store = _single_store(consumer)
    loads = _loads_of(store.value, buf) + [x for i in store.indices for x in _loads_of(i, buf)]
    if not loads:
        raise ScheduleError(f"the store of the block {_name(consumer)} does not read {buf.name!r}")
    mapping = _consumer_index_map(consumer, loads, buf)
    producer_store = _single_store(producer, buf)
    _check_no_opaque_access(buf, scope, consumer)
    _check_order(scope, producer, consumer, {id(r.buffer) for r in consumer.writes}, consumer, "reads",
                 "it would see the values the inlined block writes earlier")
    for region in producer.reads:
        if any(w.buffer is region.buffer for w in consumer.writes):
            raise ScheduleError(f"the block {_name(consumer)} writes {region.buffer.name!r}, which its producer "
                                f"{_name(producer)} reads: the producer would read values it has just written")

    # Consumer iterators in terms of the producer's store indices.
    vmap: dict[tir.Var, tir.PrimExpr] = {iv.var: iv.dom.min for iv in consumer.iter_vars if _is_unit(iv)}  # type: ignore[union-attr]
    for pos, var in mapping.items():
        vmap[var] = as_dtype(producer_store.indices[pos], var.dtype)
    predicate = _coverage_predicate(consumer, producer_realize, vmap)

    def on_store(s: tir.BufferStore) -> tir.Stmt:
        def value_of(load: tir.BufferLoad) -> tir.PrimExpr:
            return s.value

        return _ScopeRewriter(buf, on_load=value_of).visit_stmt(substitute(store, vmap))

    remaining = _remove_block(loc, scope)
    rewriter = _ScopeRewriter(buf, on_store=on_store)
    if predicate is not None:
        remaining = _add_predicate(remaining, producer, predicate)
    _finish(state, loc, remaining, rewriter, buf)


def _coverage_predicate(consumer: tir.Block, producer_realize: tir.BlockRealize,
                        vmap: dict[tir.Var, tir.PrimExpr]) -> tir.PrimExpr | None:
    """The condition (on the producer's loops) under which a producer iteration stands for a
    consumer iteration: None when always; refused when the producer misses consumer iterations."""
    producer = producer_realize.block
    analyzer = Analyzer()
    for iv in producer.iter_vars:
        if iv.dom is not None:
            analyzer.bind(iv.var, iv.dom.min, iv.dom.extent)
    producer_doms = {id(iv.var): iv.dom for iv in producer.iter_vars if iv.dom is not None}
    conds: list[tir.PrimExpr] = []
    for iv in consumer.iter_vars:
        if iv.dom is None or iv.var not in vmap:
            continue
        expr = vmap[iv.var]
        same = producer_doms.get(id(expr))
        if same is not None and expr_key((same.min, same.extent)) == expr_key((iv.dom.min, iv.dom.extent)):
            continue  # the producer iterates over exactly the consumer's domain (symbolic ones too)
        lo = iv.dom.min
        hi = tir.IntImm(lo.dtype, lo.value + iv.dom.extent.value) if isinstance(lo, tir.IntImm) and \
            isinstance(iv.dom.extent, tir.IntImm) else tir.Add(lo, iv.dom.extent)
        bound = analyzer.const_int_bound(expr)
        lo_c, hi_c = _const(lo), _const(iv.dom.extent)
        if bound is not None and lo_c is not None and hi_c is not None:
            if bound[0] > lo_c or bound[1] < lo_c + hi_c - 1:
                raise ScheduleError(f"the producer {_name(producer)} does not cover the iteration domain of the "
                                    f"consumer {_name(consumer)} (iterator {iv.var.name!r})")
        for cond in (tir.GE(expr, lo), tir.LT(expr, hi)):
            if not analyzer.can_prove(cond):
                conds.append(cond)
    if not conds:
        return None
    bindings = {iv.var: v for iv, v in zip(producer.iter_vars, producer_realize.iter_values)}
    out = conds[0]
    for c in conds[1:]:
        out = tir.And(out, c)
    return substitute(out, bindings)  # type: ignore[return-value]


def _const(e: tir.PrimExpr) -> int | None:
    return e.value if isinstance(e, tir.IntImm) else None


def _add_predicate(scope: tir.Block, producer: tir.Block, predicate: tir.PrimExpr) -> tir.Block:
    """``scope`` with ``predicate`` and-ed into the producer's realize."""
    for realize, path in block_realizes(scope.body):
        if realize.block is producer:
            old = realize.predicate
            always = isinstance(old, tir.IntImm) and bool(old.value)
            new = replace(realize, predicate=predicate if always else tir.And(old, predicate))
            body = replace_at(path, new, scope.body)
            return replace(scope, body=body)
    raise AssertionError("the producer is in the scope")
