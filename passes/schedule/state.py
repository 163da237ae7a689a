"""What a schedule works on: the module being transformed, references to its blocks and loops
(``BlockRV``, ``LoopRV``) and how the primitives find them and write their results back.

A ``BlockRV`` names a block (block names are unique within a PrimFunc, as TVM requires for
``get_block``); a ``LoopRV`` holds a loop's variable, which rewrites that keep the loop keep too.
A reference whose statement a primitive removed (a split or fused loop, an inlined block) is
refused with an error that says so."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...ir import tir
from ...ir.module import IRModule
from ...ir.node import replace
from .tree import Path, enclosing_block_index, find_all, find_first, loops_of, replace_at

__all__ = ["ScheduleError", "BlockRV", "LoopRV", "BlockLoc", "LoopLoc", "ScheduleState"]


class ScheduleError(ValueError):
    """A schedule primitive refused a request (its precondition does not hold); the schedule is
    left as it was."""


class _RV:
    """A schedule variable: ``name`` is how the trace calls it (``b0``, ``l1``...)."""

    __slots__ = ("func_name", "name")
    prefix = "v"

    def __init__(self, func_name: str, name: str) -> None:
        self.func_name = func_name
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class BlockRV(_RV):
    """A reference to a block of the scheduled function."""

    __slots__ = ("block_name",)
    prefix = "b"

    def __init__(self, func_name: str, name: str, block_name: str) -> None:
        super().__init__(func_name, name)
        self.block_name = block_name


class LoopRV(_RV):
    """A reference to a loop of the scheduled function (by its loop variable)."""

    __slots__ = ("var",)
    prefix = "l"

    def __init__(self, func_name: str, name: str, var: tir.Var) -> None:
        super().__init__(func_name, name)
        self.var = var


@dataclass
class BlockLoc:
    """Where a block is: its realize, its path from the function body, the loops above it in its
    scope (outermost first) and the scope's block."""

    func_name: str
    func: tir.PrimFunc
    realize: tir.BlockRealize
    path: Path

    @property
    def block(self) -> tir.Block:
        """The block itself."""
        return self.realize.block

    @property
    def loops(self) -> list[tir.For]:
        """The loops between the scope block and this block, outermost first."""
        return loops_of(self.path)

    @property
    def scope_index(self) -> int:
        """The index in ``path`` of the scope block (-1: the function body has no root block)."""
        return enclosing_block_index(self.path)

    @property
    def scope_block(self) -> tir.Block | None:
        """The block whose body holds this block's loop nest (the root block, usually)."""
        i = self.scope_index
        return self.path[i].node if i >= 0 else None  # type: ignore[return-value]


@dataclass
class LoopLoc:
    """Where a loop is: the loop and its path from the function body."""

    func_name: str
    func: tir.PrimFunc
    loop: tir.For
    path: Path

    @property
    def loops_above(self) -> list[tir.For]:
        """The loops enclosing this one in its scope, outermost first."""
        return loops_of(self.path)


@dataclass
class ScheduleState:
    """The module being scheduled, and the counter that names new schedule variables."""

    mod: IRModule
    counter: int = field(default=0)

    # ---- functions
    def func(self, func_name: str) -> tir.PrimFunc:
        """The PrimFunc ``func_name`` of the module."""
        if func_name not in self.mod:
            names = [gv.name_hint for gv, f in self.mod.functions_items() if isinstance(f, tir.PrimFunc)]
            raise ScheduleError(f"the module has no PrimFunc named {func_name!r} (it has: {', '.join(names) or 'none'})")
        func = self.mod[func_name]
        if not isinstance(func, tir.PrimFunc):
            raise ScheduleError(f"{func_name!r} is a {type(func).__name__}, not a PrimFunc: only TIR functions are scheduled")
        return func

    def default_func_name(self) -> str:
        """``main`` when there is one, else the module's only PrimFunc."""
        names = [gv.name_hint for gv, f in self.mod.functions_items() if isinstance(f, tir.PrimFunc)]
        if "main" in names or len(names) != 1:
            return "main"
        return names[0]

    def set_body(self, func_name: str, body: tir.Stmt) -> None:
        """Replace the body of ``func_name`` (the module is rebuilt; the old one is untouched)."""
        func = self.func(func_name)
        mod = self.mod.copy()  # copy-on-write: a Schedule never changes the module it was given
        mod[func_name] = replace(func, body=body)
        self.mod = mod

    def replace_stmt(self, func_name: str, path: Path, new: tir.Stmt | None) -> None:
        """Replace the statement at the end of ``path`` in ``func_name`` by ``new`` (None: remove)."""
        self.set_body(func_name, replace_at(path, new, self.func(func_name).body))

    # ---- schedule variables
    def _next_name(self, prefix: str) -> str:
        name = f"{prefix}{self.counter}"
        self.counter += 1
        return name

    def block_rv(self, func_name: str, block_name: str) -> BlockRV:
        """A new reference to the block ``block_name``."""
        return BlockRV(func_name, self._next_name(BlockRV.prefix), block_name)

    def loop_rv(self, func_name: str, var: tir.Var) -> LoopRV:
        """A new reference to the loop over ``var``."""
        return LoopRV(func_name, self._next_name(LoopRV.prefix), var)

    # ---- lookups
    def locate_block(self, rv: Any, what: str = "block") -> BlockLoc:
        """Where the block ``rv`` refers to is now."""
        if not isinstance(rv, BlockRV):
            raise ScheduleError(f"{what} must be a BlockRV (from get_block), got {type(rv).__name__}")
        func = self.func(rv.func_name)
        hits = find_all(func.body, lambda s: isinstance(s, tir.BlockRealize) and s.block.name_hint == rv.block_name)
        if not hits:
            raise ScheduleError(f"{what} {rv.name}: the block {rv.block_name!r} no longer exists in "
                                f"{rv.func_name!r} (an earlier primitive removed it)")
        if len(hits) > 1:
            raise ScheduleError(f"{what} {rv.name}: {len(hits)} blocks are named {rv.block_name!r} in {rv.func_name!r}")
        realize, path = hits[0]
        return BlockLoc(rv.func_name, func, realize, path)  # type: ignore[arg-type]

    def locate_loop(self, rv: Any, what: str = "loop") -> LoopLoc:
        """Where the loop ``rv`` refers to is now."""
        if not isinstance(rv, LoopRV):
            raise ScheduleError(f"{what} must be a LoopRV (from get_loops, split or fuse), got {type(rv).__name__}")
        func = self.func(rv.func_name)
        hit = find_first(func.body, lambda s: isinstance(s, tir.For) and s.loop_var is rv.var)
        if hit is None:
            raise ScheduleError(f"{what} {rv.name}: the loop over {rv.var.name!r} no longer exists in "
                                f"{rv.func_name!r} (an earlier split, fuse or inline removed it)")
        loop, path = hit
        return LoopLoc(rv.func_name, func, loop, path)  # type: ignore[arg-type]

    def block_names(self, func_name: str) -> list[str]:
        """The names of every block of ``func_name``, in program order."""
        body = self.func(func_name).body
        return [s.block.name_hint for s, _ in find_all(body, lambda s: isinstance(s, tir.BlockRealize))]  # type: ignore[attr-defined]

    def fresh_block_name(self, func_name: str, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``... when a block of that name exists."""
        taken = set(self.block_names(func_name))
        if base not in taken:
            return base
        i = 1
        while f"{base}_{i}" in taken:
            i += 1
        return f"{base}_{i}"
