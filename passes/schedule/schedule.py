"""``tvmlite.tir.Schedule``: TVM's TensorIR schedule API on tvmlite's immutable TIR.

Each primitive checks its preconditions and either rewrites the scheduled module or raises a
:class:`ScheduleError` and leaves it as it was. ``sch.mod`` is the module so far (print it to see
every step); ``sch.trace`` prints the steps as a Python function that replays them."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...ir import tir
from ...ir.arith import IndexMap
from ...ir.module import IRModule
from . import cache, compute_at, inline, layout, loops, reduction
from .state import BlockRV, LoopRV, ScheduleError, ScheduleState
from .trace import Instruction, Trace
from .tree import child_realizes

__all__ = ["Schedule"]


class Schedule:
    """A schedule of ``mod`` (an IRModule, or a PrimFunc, which becomes the module's ``main``)."""

    def __init__(self, mod: IRModule | tir.PrimFunc, **_options: Any) -> None:
        if isinstance(mod, tir.PrimFunc):
            # As TVM's IRModule({"main": f}): a bare PrimFunc becomes "main". A public one is
            # public under that name, since a global_symbol must be its function's name.
            if mod.attrs.get("global_symbol") is not None:
                mod = mod.with_attr("global_symbol", "main")
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise TypeError(f"Schedule takes an IRModule or a PrimFunc, got {type(mod).__name__}")
        self.state = ScheduleState(mod)
        self._trace = Trace()
        self._func_name: str | None = None

    # ------------------------------------------------------------------ state
    @property
    def mod(self) -> IRModule:
        """The scheduled module so far."""
        return self.state.mod

    @property
    def trace(self) -> Trace:
        """The primitives applied so far (``print(sch.trace)`` shows them as replayable Python)."""
        return self._trace

    @property
    def func_working_on(self) -> str | None:
        """The function ``get_block`` looks in when no ``func_name`` is given."""
        return self._func_name

    def work_on(self, func_name: str) -> None:
        """Make ``func_name`` the function ``get_block`` looks in by default."""
        self.state.func(func_name)
        self._func_name = func_name

    def copy(self) -> "Schedule":
        """An independent schedule at the same point (same module, same trace so far)."""
        other = Schedule(self.state.mod)
        other.state.counter = self.state.counter
        other.state.share_indices(self.state)
        other._trace = Trace(self._trace.insts)
        other._func_name = self._func_name
        return other

    def show(self) -> None:
        """Print the scheduled module."""
        self.mod.show()

    def get(self, rv: BlockRV | LoopRV) -> tir.Block | tir.For:
        """The block or loop a reference points to now."""
        if isinstance(rv, BlockRV):
            return self.state.locate_block(rv).block
        return self.state.locate_loop(rv).loop

    def _run(self, kind: str, fn: Callable[[], Any], inputs: Sequence[Any] = (),
             attrs: Sequence[tuple[str, Any]] = (), unpack: bool = False) -> Any:
        """Apply one primitive: on failure put the module back and name the primitive in the error;
        on success record the call in the trace."""
        before = self.state.mod
        try:
            result = fn()
        except ScheduleError as exc:
            self.state.mod = before
            message = str(exc)
            raise ScheduleError(message if message.startswith(f"{kind}:") else f"{kind}: {message}") from None
        except Exception:
            self.state.mod = before
            raise
        outputs = tuple(result) if unpack else ((result,) if result is not None else ())
        self._trace.append(Instruction(kind, tuple(inputs), tuple(attrs), outputs, unpack))
        return result

    # ------------------------------------------------------------------ lookups
    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block called ``name`` in ``func_name`` (default: the function worked on, ``main``,
        or the module's only PrimFunc)."""
        func_name = func_name or self._func_name or self.state.default_func_name()

        def run() -> BlockRV:
            if name not in self.state.block_names(func_name):
                names = self.state.block_names(func_name)
                raise ScheduleError(f"no block named {name!r} in {func_name!r} (blocks: {', '.join(names) or 'none'})")
            rv = self.state.block_rv(func_name, name)
            self.state.locate_block(rv)  # refuses a name that several blocks share
            return rv

        return self._run("get_block", run, attrs=[("name", name), ("func_name", func_name)])

    def get_loops(self, block: BlockRV) -> list[LoopRV]:
        """The loops above ``block`` in its scope, outermost first."""

        def run() -> list[LoopRV]:
            loc = self.state.locate_block(block)
            return [self.state.loop_rv(block.func_name, loop.loop_var) for loop in loc.loops]

        return self._run("get_loops", run, attrs=[("block", block)], unpack=True)

    def get_child_blocks(self, block_or_loop: BlockRV | LoopRV) -> list[BlockRV]:
        """The blocks directly inside a block or a loop (not inside their child blocks)."""

        def run() -> list[BlockRV]:
            if isinstance(block_or_loop, BlockRV):
                stmt: tir.Stmt = self.state.locate_block(block_or_loop, "block_or_loop").block
            else:
                stmt = self.state.locate_loop(block_or_loop, "block_or_loop").loop
            return [self.state.block_rv(block_or_loop.func_name, r.block.name_hint) for r, _ in child_realizes(stmt)]

        return self._run("get_child_blocks", run, inputs=[block_or_loop], unpack=True)

    def scope_neighbours(self, block: BlockRV, producers: bool) -> list[tir.Block]:
        """The blocks of ``block``'s scope that write what it reads (producers) or read what it
        writes (consumers), in program order; an inspection, not recorded in the trace."""
        loc = self.state.locate_block(block)
        scope = loc.scope_block
        if scope is None:
            return []
        mine = {r.buffer for r in (loc.block.reads if producers else loc.block.writes)}
        out = []
        blocks = self.state.index(loc.func_name).scope_blocks(scope)
        if blocks is None:
            blocks = [realize.block for realize, _ in child_realizes(scope)]
        for other in blocks:
            theirs = {r.buffer for r in (other.writes if producers else other.reads)}
            if other is not loc.block and mine & theirs:
                out.append(other)
        return out

    def _neighbour_rvs(self, block: BlockRV, producers: bool) -> list[BlockRV]:
        return [self.state.block_rv(block.func_name, b.name_hint) for b in self.scope_neighbours(block, producers)]

    def get_producers(self, block: BlockRV) -> list[BlockRV]:
        """The blocks of the same scope that write a buffer ``block`` reads."""
        return self._run("get_producers", lambda: self._neighbour_rvs(block, True), attrs=[("block", block)],
                         unpack=True)

    def get_consumers(self, block: BlockRV) -> list[BlockRV]:
        """The blocks of the same scope that read a buffer ``block`` writes."""
        return self._run("get_consumers", lambda: self._neighbour_rvs(block, False), attrs=[("block", block)],
                         unpack=True)

    # ------------------------------------------------------------------ loops
    def split(self, loop: LoopRV, factors: Sequence[int | None | tir.PrimExpr], preserve_unit_iters: bool = True,
              disable_predication: bool = False) -> list[LoopRV]:
        """Split ``loop`` into nested loops of the given extents (one may be None: inferred);
        when they do not divide the extent, a ``T.where`` predicate guards the block."""
        factors = list(factors)
        return self._run("split", lambda: loops.split(self.state, loop, factors, preserve_unit_iters,
                                                      disable_predication),
                         attrs=[("loop", loop), ("factors", factors), ("preserve_unit_iters", preserve_unit_iters),
                                ("disable_predication", disable_predication)], unpack=True)

    def fuse(self, *loops_: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse perfectly nested consecutive loops into one."""
        return self._run("fuse", lambda: loops.fuse(self.state, list(loops_), preserve_unit_iters),
                         inputs=loops_, attrs=[("preserve_unit_iters", preserve_unit_iters)])

    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Put the given loops of one nest in this order (the other loops stay where they are)."""
        self._run("reorder", lambda: loops.reorder(self.state, list(ordered_loops)), inputs=ordered_loops)

    def parallel(self, loop: LoopRV) -> None:
        """Run ``loop``'s iterations on the thread pool."""
        self._run("parallel", lambda: loops.set_kind(self.state, loop, tir.ForKind.PARALLEL), attrs=[("loop", loop)])

    def vectorize(self, loop: LoopRV) -> None:
        """Make ``loop`` a vector loop."""
        self._run("vectorize", lambda: loops.set_kind(self.state, loop, tir.ForKind.VECTORIZED), attrs=[("loop", loop)])

    def unroll(self, loop: LoopRV) -> None:
        """Unroll ``loop``."""
        self._run("unroll", lambda: loops.set_kind(self.state, loop, tir.ForKind.UNROLLED), attrs=[("loop", loop)])

    def annotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: Any) -> None:
        """Set an annotation on a block (``T.block_attr``) or a loop (``annotations=``)."""
        self._run("annotate", lambda: loops.annotate(self.state, block_or_loop, ann_key, ann_val),
                  attrs=[("block_or_loop", block_or_loop), ("ann_key", ann_key), ("ann_val", ann_val)])

    def unannotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
        """Remove an annotation from a block or a loop."""
        self._run("unannotate", lambda: loops.annotate(self.state, block_or_loop, ann_key, None, remove=True),
                  attrs=[("block_or_loop", block_or_loop), ("ann_key", ann_key)])

    # ------------------------------------------------------------------ compute location
    def compute_at(self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1) -> None:
        """Move a producer block under ``loop``, computing only the region its consumers there need."""
        self._run("compute_at", lambda: compute_at.compute_at(self.state, block, loop, preserve_unit_loops, index),
                  attrs=[("block", block), ("loop", loop), ("preserve_unit_loops", preserve_unit_loops),
                         ("index", index)])

    def reverse_compute_at(self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False,
                           index: int = -1) -> None:
        """Move a consumer block under ``loop``, consuming the region its producers write there."""
        self._run("reverse_compute_at",
                  lambda: compute_at.reverse_compute_at(self.state, block, loop, preserve_unit_loops, index),
                  attrs=[("block", block), ("loop", loop), ("preserve_unit_loops", preserve_unit_loops),
                         ("index", index)])

    def compute_inline(self, block: BlockRV) -> None:
        """Substitute an elementwise producer block into its consumers and remove it."""
        self._run("compute_inline", lambda: inline.compute_inline(self.state, block), attrs=[("block", block)])

    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Fold an elementwise consumer block into its producer and remove it."""
        self._run("reverse_compute_inline", lambda: inline.reverse_compute_inline(self.state, block),
                  attrs=[("block", block)])

    # ------------------------------------------------------------------ caches and reductions
    def cache_read(self, block: BlockRV, read_buffer_index: int, storage_scope: str,
                   consumer_blocks: Sequence[BlockRV] | None = None) -> BlockRV:
        """A block copying ``block``'s ``read_buffer_index``-th input into a new buffer of
        ``storage_scope``, which ``block`` (and ``consumer_blocks``) then read."""
        attrs: list[tuple[str, Any]] = [("block", block), ("read_buffer_index", read_buffer_index),
                                        ("storage_scope", storage_scope)]
        if consumer_blocks is not None:
            attrs.append(("consumer_blocks", list(consumer_blocks)))
        return self._run("cache_read", lambda: cache.cache_read(self.state, block, read_buffer_index, storage_scope,
                                                                consumer_blocks), attrs=attrs)

    def cache_write(self, block: BlockRV, write_buffer_index: int, storage_scope: str,
                    consumer_blocks: Sequence[BlockRV] | None = None) -> BlockRV:
        """Make ``block`` write its ``write_buffer_index``-th output into a new buffer of
        ``storage_scope``, and a new block copy it to the original buffer."""
        attrs: list[tuple[str, Any]] = [("block", block), ("write_buffer_index", write_buffer_index),
                                        ("storage_scope", storage_scope)]
        if consumer_blocks is not None:
            attrs.append(("consumer_blocks", list(consumer_blocks)))
        return self._run("cache_write", lambda: cache.cache_write(self.state, block, write_buffer_index,
                                                                  storage_scope, consumer_blocks), attrs=attrs)

    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Split a reduction block's ``T.init()`` into a block of its own placed before ``loop``."""
        return self._run("decompose_reduction", lambda: reduction.decompose_reduction(self.state, block, loop),
                         attrs=[("block", block), ("loop", loop)])

    def transform_layout(self, block: BlockRV, buffer: tuple[str, int] | str,
                         index_map: Callable[..., Any] | IndexMap) -> None:
        """Store an intermediate buffer ``block`` accesses (``("read", i)``, ``("write", i)`` or its
        name) with its dimensions permuted by ``index_map`` (``lambda i, j: (j, i)``)."""
        if callable(index_map) and not isinstance(index_map, IndexMap):
            try:
                index_map = IndexMap.from_func(index_map)
            except Exception as exc:  # a lambda the index arithmetic cannot trace
                raise ScheduleError(f"transform_layout: cannot read the index map: {exc}") from None
        if isinstance(buffer, list):
            buffer = tuple(buffer)  # type: ignore[assignment]
        self._run("transform_layout", lambda: layout.transform_layout(self.state, block, buffer, index_map),
                  attrs=[("block", block), ("buffer", buffer), ("index_map", index_map)])
