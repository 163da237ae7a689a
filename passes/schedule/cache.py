"""cache_read / cache_write: stage a buffer through a copy in another storage scope.

cache_read adds a buffer ``<name>_<scope>`` and a block of the same name copying the buffer
into it; the chosen readers then read the copy. cache_write makes a block write
``<name>_<scope>`` instead and adds a block of that name copying it back. The copy covers the
region the writer produces (the whole buffer for a function input); it sits where the data
flows: after the writer, before the first reader that does not use the cache, in the
innermost statement list holding both (at the start of the scope for an input, at its end
when nothing reads the output). Like TVM, the cache has the original's full shape; the copy
block can then be moved with compute_at / reverse_compute_at."""
from __future__ import annotations

import re
from typing import Sequence

from ...ir import tir
from ...ir.arith import Analyzer
from ...ir.node import replace
from ...ir.stmt_functor import _DEFINITIONS, StmtExprMutator
from .compute_at import scope_blocks
from .regions import Bound, block_regions, extent_of, one_less
from .state import BlockLoc, BlockRV, ScheduleError, ScheduleState
from .tree import Path, Step, find_all, loops_of, replace_at

__all__ = ["cache_read", "cache_write"]

_SCOPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")


def cache_read(state: ScheduleState, block: BlockRV, read_buffer_index: int, storage_scope: str,
               consumer_blocks: Sequence[BlockRV] | None) -> BlockRV:
    """A cache-read block; returns its BlockRV (made with ``state.block_rv``)."""
    loc, buf, scope, siblings, order = _prepare(state, block, read_buffer_index, "read", storage_scope)
    readers = [r for r, _ in siblings if any(x.buffer is buf for x in r.block.reads)]
    if consumer_blocks:
        chosen = _chosen_blocks(state, loc, consumer_blocks, readers, buf, "read")
        targets = [b for b in order if any(b is c for c in chosen)]  # in program order
    else:
        targets = [r.block for r in readers]
    for b in targets:
        if any(w.buffer is buf for w in b.writes):
            raise ScheduleError(f"the block {b.name_hint!r} both reads and writes {buf.name!r}: a read cache "
                                f"would not see its writes")
    writers = [(r, p) for r, p in siblings if any(w.buffer is buf for w in r.block.writes)]
    if len(writers) > 1:
        raise ScheduleError(f"{buf.name!r} is written by several blocks "
                            f"({', '.join(repr(r.block.name_hint) for r, _ in writers)}): cache_read needs at "
                            f"most one writer in the scope")
    cache = _cache_buffer(loc, buf, storage_scope)
    analyzer = Analyzer()
    if not writers:
        # A buffer from outside the scope: copy all of it before anything runs.
        region = [(tir.IntImm(d.dtype, 0), one_less(d)) for d in buf.shape]
        seq_path, position = _scope_start(scope)
    else:
        writer, wpath = writers[0]
        firsts = [t for t in targets if order.index(t) > order.index(writer.block)]
        if len(firsts) != len(targets):
            early = [t.name_hint for t in targets if t not in firsts]
            raise ScheduleError(f"the block{'s' if len(early) > 1 else ''} {', '.join(map(repr, early))} "
                                f"read{'' if len(early) > 1 else 's'} {buf.name!r} before "
                                f"{writer.block.name_hint!r} writes it")
        first = dict((id(r.block), p) for r, p in siblings)[id(firsts[0])]
        seq_path, position, below = _between(wpath, first, writer.block.name_hint, firsts[0].name_hint)
        region = _written_region(writer, buf, wpath, below, analyzer)
    name = state.fresh_block_name(loc.func_name, cache.name)
    stage = _copy_stage(name, buf, cache, region, analyzer)
    new_scope = _insert(scope, seq_path, position, stage)
    new_scope = _ReplaceIn(buf, cache, {id(b) for b in targets}).visit(new_scope)
    new_scope = replace(new_scope, alloc_buffers=tuple(new_scope.alloc_buffers) + (cache,))
    _write_scope(state, loc, new_scope)
    return state.block_rv(loc.func_name, name)


def cache_write(state: ScheduleState, block: BlockRV, write_buffer_index: int, storage_scope: str,
                consumer_blocks: Sequence[BlockRV] | None) -> BlockRV:
    """A cache-write block; returns its BlockRV."""
    loc, buf, scope, siblings, order = _prepare(state, block, write_buffer_index, "write", storage_scope)
    writers = [r.block.name_hint for r, _ in siblings
               if r.block is not loc.block and any(w.buffer is buf for w in r.block.writes)]
    if writers:
        raise ScheduleError(f"{buf.name!r} is also written by {', '.join(map(repr, writers))}: cache_write needs "
                            f"{loc.block.name_hint!r} to be its only writer in the scope")
    readers = [r for r, _ in siblings if r.block is not loc.block and any(x.buffer is buf for x in r.block.reads)]
    direct = _chosen_blocks(state, loc, consumer_blocks, readers, buf, "write") if consumer_blocks else []
    for b in readers:
        if order.index(b.block) < order.index(loc.block):
            raise ScheduleError(f"the block {b.block.name_hint!r} reads {buf.name!r} before "
                                f"{loc.block.name_hint!r} writes it")
    related = [r.block for r in readers if not any(r.block is d for d in direct)]
    cache = _cache_buffer(loc, buf, storage_scope)
    paths = dict((id(r.block), p) for r, p in siblings)
    wpath = paths[id(loc.block)]
    analyzer = Analyzer()
    if related:
        seq_path, position, below = _between(wpath, paths[id(related[0])], loc.block.name_hint,
                                             related[0].name_hint)
    else:
        seq_path, position = _scope_end(scope)
        below = loops_of(wpath)
    region = _written_region(loc.realize, buf, wpath, below, analyzer)
    name = state.fresh_block_name(loc.func_name, cache.name)
    stage = _copy_stage(name, cache, buf, region, analyzer)
    new_scope = _insert(scope, seq_path, position, stage)
    new_scope = _ReplaceIn(buf, cache, {id(loc.block)} | {id(b) for b in direct}).visit(new_scope)
    new_scope = replace(new_scope, alloc_buffers=tuple(new_scope.alloc_buffers) + (cache,))
    _write_scope(state, loc, new_scope)
    return state.block_rv(loc.func_name, name)


# ---------------------------------------------------------------------------- checks
def _prepare(state: ScheduleState, block: BlockRV, index: int, kind: str, storage_scope: str) -> tuple[
        BlockLoc, tir.Buffer, tir.Block, list[tuple[tir.BlockRealize, Path]], list[tir.Block]]:
    """The checks and lookups cache_read and cache_write start with: the block's location, its
    ``index``-th ``kind`` ("read" or "write") buffer, the storage scope checked, the scope block,
    the blocks of that scope with their paths, and those blocks in program order."""
    loc = state.locate_block(block)
    buf = _nth_buffer(loc, index, kind)
    _check_scope(storage_scope)
    scope = _scope_of(loc)
    siblings = scope_blocks(scope)
    return loc, buf, scope, siblings, [r.block for r, _ in siblings]


def _nth_buffer(loc: BlockLoc, index: int, kind: str) -> tir.Buffer:
    regions = loc.block.reads if kind == "read" else loc.block.writes
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(regions):
        names = ", ".join(r.buffer.name for r in regions) or "none"
        raise ScheduleError(f"{kind}_buffer_index {index!r} is out of range: the block {loc.block.name_hint!r} "
                            f"{kind}s {len(regions)} buffer{'' if len(regions) == 1 else 's'} ({names})")
    return regions[index].buffer


def _check_scope(storage_scope: str) -> None:
    if not isinstance(storage_scope, str) or not _SCOPE.match(storage_scope):
        raise ScheduleError(f"{storage_scope!r} is not a storage scope (such as \"global\", \"shared\" or \"local\")")


def _scope_of(loc: BlockLoc) -> tir.Block:
    if loc.scope_block is None:
        raise ScheduleError(f"the block {loc.block.name_hint!r} is not inside a scope block (no root block)")
    return loc.scope_block


def _chosen_blocks(state: ScheduleState, loc: BlockLoc, chosen: Sequence[BlockRV],
                   readers: list[tir.BlockRealize], buf: tir.Buffer, kind: str) -> list[tir.Block]:
    """The blocks of ``consumer_blocks``, each checked to read ``buf`` in the same scope."""
    out: list[tir.Block] = []
    for rv in chosen:
        other = state.locate_block(rv, "consumer_blocks")
        if not any(r.block is other.block for r in readers):
            raise ScheduleError(f"the consumer block {other.block.name_hint!r} does not read {buf.name!r} in the "
                                f"scope of {loc.block.name_hint!r}")
        if not any(b is other.block for b in out):
            out.append(other.block)
    return out


# ---------------------------------------------------------------------------- placement
def _scope_start(scope: tir.Block) -> tuple[Path, int]:
    return (Step(scope, "body"),), 0


def _scope_end(scope: tir.Block) -> tuple[Path, int]:
    body = scope.body
    return (Step(scope, "body"),), (len(body.seq) if isinstance(body, tir.SeqStmt) else 1)


def _between(writer_path: Path, reader_path: Path, writer: str, reader: str) -> tuple[Path, int, list[tir.For]]:
    """The innermost statement list holding both blocks: (the path leading to it, the index of the
    statement holding the reader, the writer's loops below that list)."""
    d = 0
    while (d < len(writer_path) and d < len(reader_path) and writer_path[d].node is reader_path[d].node
           and writer_path[d].field == reader_path[d].field and writer_path[d].index == reader_path[d].index):
        d += 1
    if d >= len(writer_path) or d >= len(reader_path) or not isinstance(writer_path[d].node, tir.SeqStmt):
        raise ScheduleError(f"cannot find a statement list holding both {writer!r} and {reader!r} to put the "
                            f"cache block between them")
    index = reader_path[d].index
    assert index is not None
    below = [s.node for s in writer_path[d:] if isinstance(s.node, tir.For)]
    return writer_path[:d], index, below


def _insert(scope: tir.Block, prefix: Path, position: int, stage: tir.Stmt) -> tir.Block:
    """``scope`` with ``stage`` inserted at ``position`` of the statement list that ``prefix``
    (a path from the scope) leads to; a lone statement becomes a list."""
    target = _reached(scope, prefix)
    items = list(target.seq) if isinstance(target, tir.SeqStmt) else [target]
    items.insert(position, stage)
    out = replace_at(prefix, tir.SeqStmt(tuple(items)), scope)
    assert isinstance(out, tir.Block)
    return out


def _reached(scope: tir.Block, prefix: Path) -> tir.Stmt:
    """The statement at the end of ``prefix``."""
    last = prefix[-1]
    value = getattr(last.node, last.field)
    return value if last.index is None else value[last.index]


def _written_region(writer: tir.BlockRealize, buf: tir.Buffer, wpath: Path, below: list[tir.For],
                    analyzer: Analyzer) -> list[Bound]:
    """What ``writer`` writes of ``buf`` with the loops ``below`` relaxed (the others, common to
    the writer and the cache block, stay symbolic)."""
    for lp in loops_of(wpath):
        if not any(lp is b for b in below):
            analyzer.bind(lp.loop_var, lp.min, lp.extent)
    regions = [w for w in writer.block.writes if w.buffer is buf]
    dims = block_regions(writer, regions, below, analyzer)[0]
    return [d if d is not None else (tir.IntImm(extent.dtype, 0), one_less(extent))
            for d, extent in zip(dims, buf.shape)]


# ---------------------------------------------------------------------------- building
def _cache_buffer(loc: BlockLoc, buf: tir.Buffer, storage_scope: str) -> tir.Buffer:
    """The buffer ``<name>_<scope>`` (TVM's naming), of the same shape in the new scope."""
    name = f"{buf.name}_{storage_scope}"
    taken = {b.name for b in loc.func.buffer_map.values()}
    for blk, _ in find_all(loc.func.body, lambda s: isinstance(s, tir.Block)):
        taken.update(b.name for b in blk.alloc_buffers)  # type: ignore[attr-defined]
    if name in taken:
        i = 1
        while f"{name}_{i}" in taken:
            i += 1
        name = f"{name}_{i}"
    data = tir.Var(name, "handle", tir.PointerType(buf.dtype, storage_scope))
    return replace(buf, name=name, data=data, scope=storage_scope)


def _copy_stage(name: str, src: tir.Buffer, dst: tir.Buffer, region: list[Bound], analyzer: Analyzer) -> tir.Stmt:
    """Loops ``ax0, ax1...`` over ``region`` around a block ``name`` copying ``src`` into ``dst``."""
    loop_vars, values, ivs, extents = [], [], [], []
    for i, ((lo, hi), dim) in enumerate(zip(region, src.shape)):
        extent = extent_of((lo, hi), analyzer)
        ax = tir.Var(f"ax{i}", extent.dtype)
        v = tir.Var(f"v{i}", extent.dtype)
        loop_vars.append(ax)
        extents.append(extent)
        values.append(ax if isinstance(lo, tir.IntImm) and lo.value == 0 else tir.Add(lo, ax))
        ivs.append(tir.IterVar(tir.Range(tir.IntImm(dim.dtype, 0), dim), v, tir.IterType.DataPar))
    idx = tuple(iv.var for iv in ivs)
    point = tuple(tir.Range(v, tir.IntImm(v.dtype, 1)) for v in idx)
    body = tir.BufferStore(dst, tir.BufferLoad(src, idx), idx)
    block = tir.Block(name, tuple(ivs), (tir.BufferRegion(src, point),), (tir.BufferRegion(dst, point),), body)
    stmt: tir.Stmt = tir.BlockRealize(tuple(values), tir.IntImm("bool", 1), block)
    for ax, extent in reversed(list(zip(loop_vars, extents))):
        stmt = tir.For(ax, tir.IntImm(ax.dtype, 0), extent, tir.ForKind.SERIAL, stmt)
    return stmt


class _Swap(StmtExprMutator):
    """Every use of one buffer (loads, stores, regions, match sources) becomes another."""

    _skip_fields = _DEFINITIONS - {"buffer"}

    def __init__(self, old: tir.Buffer, new: tir.Buffer) -> None:
        self.old, self.new = old, new

    def visit_buffer_(self, buf: tir.Buffer) -> tir.Buffer:
        return self.new if buf is self.old else buf


class _ReplaceIn(StmtExprMutator):
    """Swaps the buffer inside the chosen blocks only (their whole subtree)."""

    def __init__(self, old: tir.Buffer, new: tir.Buffer, targets: set[int]) -> None:
        self.swap = _Swap(old, new)
        self.targets = targets

    def visit_block_realize_(self, realize: tir.BlockRealize) -> tir.Stmt:
        if id(realize.block) in self.targets:
            return self.swap.visit(realize)
        return self.generic_visit(realize)


def _write_scope(state: ScheduleState, loc: BlockLoc, new_scope: tir.Block) -> None:
    """Put the rebuilt scope block back into the function."""
    path = loc.path[:loc.scope_index]
    body = replace_at(path, new_scope, loc.func.body) if path else new_scope
    state.set_body(loc.func_name, body)
