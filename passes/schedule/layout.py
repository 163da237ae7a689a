"""transform_layout: store an intermediate buffer in another order of its dimensions.

TVM's primitive takes any bijective index map; here the map must permute the dimensions
(``lambda k, j: (j, k)``) and the buffer must be allocated by a block (not a parameter, whose
layout the caller owns). This is what turns a copied panel of a transposed weight into a panel
read contiguously along the columns of the output."""
from __future__ import annotations

from typing import Any, Callable

from ...ir import tir
from ...ir.arith import IndexMap
from ...ir.node import replace
from ...ir.stmt_functor import _DEFINITIONS, StmtExprMutator
from .state import BlockRV, ScheduleError, ScheduleState
from .tree import find_all

__all__ = ["transform_layout"]


class _Permute(StmtExprMutator):
    """Every use of ``old`` becomes ``new`` with its indices (or ranges) put in ``order``."""

    _skip_fields = _DEFINITIONS - {"buffer", "alloc_buffers"}

    def __init__(self, old: tir.Buffer, new: tir.Buffer, order: list[int]) -> None:
        self.old, self.new, self.order = old, new, order

    def visit_buffer_(self, buf: tir.Buffer) -> tir.Buffer:
        return self.new if buf is self.old else buf

    def _permuted(self, items: tuple) -> tuple:
        return tuple(items[i] for i in self.order)

    def visit_buffer_load_(self, op: tir.BufferLoad) -> tir.PrimExpr:
        out = self.generic_visit(op)
        return replace(out, indices=self._permuted(out.indices)) if op.buffer is self.old else out

    def visit_buffer_store_(self, op: tir.BufferStore) -> tir.Stmt:
        out = self.generic_visit(op)
        return replace(out, indices=self._permuted(out.indices)) if op.buffer is self.old else out

    def visit_buffer_region_(self, op: tir.BufferRegion) -> tir.BufferRegion:
        out = self.generic_visit(op)
        return replace(out, region=self._permuted(out.region)) if op.buffer is self.old else out


def _find_buffer(block: tir.Block, buffer: Any) -> tir.Buffer:
    """The buffer a ``("read"|"write", index)`` pair or a name designates for ``block``."""
    if isinstance(buffer, tuple) and len(buffer) == 2 and buffer[0] in ("read", "write"):
        regions = block.reads if buffer[0] == "read" else block.writes
        if not 0 <= buffer[1] < len(regions):
            raise ScheduleError(f"block {block.name_hint!r} has {len(regions)} {buffer[0]} buffers, "
                                f"no index {buffer[1]}")
        return regions[buffer[1]].buffer
    if isinstance(buffer, str):
        for region in (*block.reads, *block.writes):
            if region.buffer.name == buffer:
                return region.buffer
        raise ScheduleError(f"block {block.name_hint!r} does not access a buffer named {buffer!r}")
    raise ScheduleError(f"buffer must be (\"read\" | \"write\", index) or a buffer name, got {buffer!r}")


def transform_layout(state: ScheduleState, block_rv: BlockRV, buffer: Any,
                     index_map: Callable[..., Any] | IndexMap) -> None:
    """Permute the dimensions of an intermediate buffer the block accesses."""
    loc = state.locate_block(block_rv)
    buf = _find_buffer(loc.block, buffer)
    ndim = len(buf.shape)
    try:
        imap = index_map if isinstance(index_map, IndexMap) else IndexMap.from_func(index_map, ndim)
    except (ValueError, TypeError) as exc:
        raise ScheduleError(f"the index map does not fit buffer {buf.name!r}: {exc}") from None
    order = []
    for e in imap.final_indices:
        hits = [n for n, v in enumerate(imap.initial_indices) if e is v]
        if not hits:
            raise ScheduleError(f"only permutations of the dimensions are supported; {e} is not one of the "
                                f"map's inputs")
        order.append(hits[0])
    if sorted(order) != list(range(ndim)):
        raise ScheduleError("the index map must use each dimension exactly once")
    body = loc.func.body
    owners = find_all(body, lambda s: isinstance(s, tir.Block) and any(b is buf for b in s.alloc_buffers))
    if not owners:
        raise ScheduleError(f"buffer {buf.name!r} is not allocated by a block (a parameter's layout belongs "
                            f"to the caller)")
    has_views = find_all(body, lambda s: isinstance(s, tir.Block)
                         and any(m.source.buffer is buf for m in s.match_buffers))
    if has_views:
        raise ScheduleError(f"buffer {buf.name!r} is viewed through T.match_buffer")
    new = replace(buf, shape=tuple(buf.shape[i] for i in order))
    state.set_body(loc.func_name, _Permute(buf, new, order).visit_stmt(body))
