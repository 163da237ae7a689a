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
from ...ir.intrinsics import address_taken
from ...ir.module import IRModule
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprVisitor
from .tree import Path, Step, enclosing_block_index, loops_of, replace_at, stmt_children

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


class _Subtree:
    """The block realizes and loops inside one statement, with their paths from it (one walk)."""

    def __init__(self, root: tir.Stmt) -> None:
        self.root = root  # kept alive, so identity checks against it stay valid
        self.blocks: list[tuple[tir.BlockRealize, Path]] = []  # in program order
        self.loops: list[tuple[tir.For, Path]] = []
        self.top: list[tir.Block] = []  # the blocks not inside another block of this statement
        stack: list[tuple[tir.Stmt, Path, bool]] = [(root, (), False)]
        while stack:  # pre-order (program order) without recursion: bodies may nest deeply
            stmt, path, nested = stack.pop()
            if isinstance(stmt, tir.BlockRealize):
                self.blocks.append((stmt, path))
                if not nested:
                    self.top.append(stmt.block)
            elif isinstance(stmt, tir.For):
                self.loops.append((stmt, path))
            children = stmt_children(stmt)
            inside = nested or isinstance(stmt, tir.Block)
            for name, index, child in reversed(children):
                stack.append((child, path + (Step(stmt, name, index),), inside))
        self._used: frozenset[int] | None = None

    @property
    def used(self) -> frozenset[int]:
        """The ids of the variables used as values here, of the buffers whose address is taken
        and of the buffers viewed through ``T.match_buffer``: uses other than element accesses."""
        if self._used is None:
            self._used = _opaque_uses(self.root)
        return self._used


class _Single(_Subtree):
    """One statement on its own (not its children)."""

    def __init__(self, stmt: tir.Stmt) -> None:
        self.root = stmt
        self.blocks = [(stmt, ())] if isinstance(stmt, tir.BlockRealize) else []  # type: ignore[list-item]
        self.top = []
        self.loops = [(stmt, ())] if isinstance(stmt, tir.For) else []  # type: ignore[list-item]
        self._used = None


def _opaque_uses(stmt: tir.Stmt) -> frozenset[int]:
    """See ``_Subtree.used``."""
    uses = _Uses()
    uses.visit_stmt(stmt)
    return frozenset(uses.found)


class _Uses(StmtExprVisitor):
    """``_opaque_uses``' walk (a class made per call would be a reference cycle)."""

    def __init__(self) -> None:
        self.found: set[int] = set()

    def visit_var_(self, var: tir.Var) -> None:
        """A variable used."""
        self.found.add(id(var))

    def visit_call_(self, call: tir.Call) -> None:
        """A buffer whose address is taken, then the arguments."""
        buf = address_taken(call)
        if buf is not None:
            self.found.add(id(buf))
        super().visit_call_(call)

    def visit_block_(self, block: tir.Block) -> None:
        """Buffers a match_buffer views, then the block."""
        self.found.update(id(m.source.buffer) for m in block.match_buffers)
        super().visit_block_(block)


class _BodyIndex:
    """Every block realize (by name) and loop (by loop variable) of one function body, with their
    paths. Primitives look blocks and loops up many times and each rewrites one part of the body:
    the statements of the top-level sequence keep their index while they are the same objects, and
    the next index is the previous one patched where parts changed, so scheduling a function of n
    blocks does not walk (or re-file) all n blocks after every primitive."""

    def __init__(self, body: tir.Stmt, previous: "_BodyIndex | None" = None) -> None:
        self.body = body  # kept alive, so the identity check in ScheduleState.index stays valid
        # The spine: statements with one child statement (the root block realize and block) down
        # to the first sequence, whose statements are indexed part by part.
        self.spine: list[tuple[_Subtree, Path]] = []
        stmt, path = body, ()
        while True:
            self.spine.append((_Single(stmt), path))
            children = stmt_children(stmt)
            if len(children) != 1 or isinstance(stmt, tir.SeqStmt):
                break
            name, index, child = children[0]
            path, stmt = path + (Step(stmt, name, index),), child
        self.seq, self.seq_path = stmt, path
        # The block whose body is that sequence (the root block): its child blocks are the parts'.
        self.seq_scope = path[-1].node if isinstance(stmt, tir.SeqStmt) and path else None
        old = previous.parts if previous is not None else {}
        self.parts: dict[int, _Subtree] = {}  # by identity of the statement, for the next index
        self.part_list: list[_Subtree] = []  # in program order
        self.steps: list[Step] = []  # the step from the sequence to each part
        for name, index, child in children:
            part = old.get(id(child))
            if part is None or part.root is not child:
                part = _Subtree(child)
            self.parts[id(child)] = part
            self.part_list.append(part)
            self.steps.append(Step(stmt, name, index))
        self.position = {id(part): k for k, part in enumerate(self.part_list)}
        # name -> [(realize, owner, path inside the owner)]; id(loop_var) -> (loop, owner, path)
        self.blocks: dict[str, list[tuple[tir.BlockRealize, _Subtree, Path]]] = {}
        self.loops: dict[int, tuple[tir.For, _Subtree, Path]] = {}
        self.unique_loops = True  # no loop variable under two owners: entries can be patched
        self.spine_paths = {id(single): p for single, p in self.spine}
        self._names: list[str] | None = None
        if previous is not None and previous.unique_loops and len(self.parts) == len(self.part_list):
            self._patch(previous)
        else:
            self._file_all()

    def _file_all(self) -> None:
        self.blocks, self.loops, self.unique_loops = {}, {}, True
        for single, _ in self.spine:
            self._add(single)
        for part in self.part_list:
            self._add(part)

    def _patch(self, previous: "_BodyIndex") -> None:
        """The previous entries, without the parts that are gone and with the new ones."""
        self.blocks, self.loops = dict(previous.blocks), dict(previous.loops)
        gone = [single for single, _ in previous.spine]
        gone += [part for key, part in previous.parts.items() if self.parts.get(key) is not part]
        for owner in gone:
            self._remove(owner)
        for single, _ in self.spine:
            self._add(single)
        for key, part in self.parts.items():
            if previous.parts.get(key) is not part:
                self._add(part)
        if not self.unique_loops:
            self._file_all()

    def _add(self, owner: _Subtree) -> None:
        for realize, local in owner.blocks:
            self.blocks[realize.block.name_hint] = [*self.blocks.get(realize.block.name_hint, ()),
                                                    (realize, owner, local)]
        for loop, local in owner.loops:
            if id(loop.loop_var) in self.loops:
                self.unique_loops = False  # the first in program order wins: file everything again
            else:
                self.loops[id(loop.loop_var)] = (loop, owner, local)

    def _remove(self, owner: _Subtree) -> None:
        for realize, _ in owner.blocks:
            name = realize.block.name_hint
            kept = [e for e in self.blocks.get(name, ()) if e[1] is not owner]
            if kept:
                self.blocks[name] = kept
            else:
                self.blocks.pop(name, None)
        for loop, _ in owner.loops:
            hit = self.loops.get(id(loop.loop_var))
            if hit is not None and hit[1] is owner:
                del self.loops[id(loop.loop_var)]

    def path(self, owner: _Subtree, local: Path) -> Path:
        """The path from the body of an entry found inside ``owner``."""
        spine = self.spine_paths.get(id(owner))
        if spine is not None:
            return spine + local
        return self.seq_path + (self.steps[self.position[id(owner)]],) + local

    def block_names(self) -> list[str]:
        """Every block's name, in program order (made once: the body never changes)."""
        if self._names is None:
            self._names = [realize.block.name_hint for owner in (*(s for s, _ in self.spine), *self.part_list)
                           for realize, _ in owner.blocks]
        return self._names

    def realizes_in(self, scope: tir.Block) -> list[tir.BlockRealize] | None:
        """Every block realize inside ``scope`` at any depth, in program order, when it is the block
        holding the top-level sequence; None for any other scope."""
        if scope is not self.seq_scope or not isinstance(scope, tir.Block):
            return None
        return [realize for part in self.part_list for realize, _ in part.blocks]

    def statements_using(self, scope: tir.Block, keys: set[int]) -> list[tir.Stmt] | None:
        """The statements of ``scope``'s sequence whose ``used`` ids meet ``keys``, when ``scope``
        holds the top-level sequence; None for any other scope."""
        if scope is not self.seq_scope or not isinstance(scope, tir.Block):
            return None
        return [part.root for part in self.part_list if not keys.isdisjoint(part.used)]

    def scope_blocks(self, scope: tir.Block) -> list[tir.Block] | None:
        """The blocks directly in ``scope`` (in program order) when it is the block holding the
        top-level sequence, from the parts' indexes; None for any other scope."""
        if scope is not self.seq_scope or not isinstance(scope, tir.Block):
            return None
        return [block for part in self.part_list for block in part.top]


@dataclass
class ScheduleState:
    """The module being scheduled, and the counter that names new schedule variables."""

    mod: IRModule
    counter: int = field(default=0)
    # func name -> the index of its current body (rebuilt when the body changes; IR is immutable).
    _indices: dict[str, _BodyIndex] = field(default_factory=dict, repr=False, compare=False)

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
    def share_indices(self, other: "ScheduleState") -> None:
        """Use ``other``'s body indexes from now on (valid while the bodies are the same objects)."""
        self._indices = dict(other._indices)

    def index(self, func_name: str) -> _BodyIndex:
        """The blocks and loops of ``func_name``'s current body."""
        body = self.func(func_name).body
        cached = self._indices.get(func_name)
        if cached is None or cached.body is not body:
            cached = self._indices[func_name] = _BodyIndex(body, cached)
        return cached

    def locate_block(self, rv: Any, what: str = "block") -> BlockLoc:
        """Where the block ``rv`` refers to is now."""
        if not isinstance(rv, BlockRV):
            raise ScheduleError(f"{what} must be a BlockRV (from get_block), got {type(rv).__name__}")
        func = self.func(rv.func_name)
        index = self.index(rv.func_name)
        hits = index.blocks.get(rv.block_name, [])
        if not hits:
            raise ScheduleError(f"{what} {rv.name}: the block {rv.block_name!r} no longer exists in "
                                f"{rv.func_name!r} (an earlier primitive removed it)")
        if len(hits) > 1:
            raise ScheduleError(f"{what} {rv.name}: {len(hits)} blocks are named {rv.block_name!r} in {rv.func_name!r}")
        realize, owner, local = hits[0]
        path = index.path(owner, local)
        return BlockLoc(rv.func_name, func, realize, path)  # type: ignore[arg-type]

    def locate_loop(self, rv: Any, what: str = "loop") -> LoopLoc:
        """Where the loop ``rv`` refers to is now."""
        if not isinstance(rv, LoopRV):
            raise ScheduleError(f"{what} must be a LoopRV (from get_loops, split or fuse), got {type(rv).__name__}")
        func = self.func(rv.func_name)
        index = self.index(rv.func_name)
        hit = index.loops.get(id(rv.var))
        if hit is None:
            raise ScheduleError(f"{what} {rv.name}: the loop over {rv.var.name!r} no longer exists in "
                                f"{rv.func_name!r} (an earlier split, fuse or inline removed it)")
        loop, owner, local = hit
        path = index.path(owner, local)
        return LoopLoc(rv.func_name, func, loop, path)  # type: ignore[arg-type]

    def block_names(self, func_name: str) -> list[str]:
        """The names of every block of ``func_name``, in program order."""
        return self.index(func_name).block_names()

    def fresh_block_name(self, func_name: str, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``... when a block of that name exists."""
        taken = set(self.block_names(func_name))
        if base not in taken:
            return base
        i = 1
        while f"{base}_{i}" in taken:
            i += 1
        return f"{base}_{i}"
