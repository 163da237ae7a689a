"""Finding statements in a PrimFunc's body and rebuilding the body around a replaced one.

IR nodes are immutable, so a schedule primitive works on a *path*: the chain of statements from
the function body down to the statement it changes, each step saying through which field (and
index, for a SeqStmt) the next statement is reached. ``replace_at`` rebuilds that chain around a
new statement (or without it)."""
from __future__ import annotations

from typing import Callable

from ...ir import tir
from ...ir.node import replace
from ...ir.stmt_functor import stmt_children

__all__ = ["Step", "Path", "stmt_children", "find_all", "find_first", "replace_at", "loops_of",
           "child_realizes", "block_realizes", "enclosing_block_index"]


class Step:
    """``node`` reaches the next statement of the path through ``field`` (``[index]`` for tuples).
    Not to be changed once made. (A plain class: the schedule's indexes make one per statement
    they walk, and a frozen dataclass takes three times as long to make.)"""

    __slots__ = ("node", "field", "index")

    def __init__(self, node: tir.Stmt, field: str, index: int | None = None) -> None:
        self.node = node
        self.field = field
        self.index = index

    def __eq__(self, other: object) -> bool:
        return (type(other) is Step and self.node is other.node  # type: ignore[attr-defined]
                and self.field == other.field and self.index == other.index)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((id(self.node), self.field, self.index))

    def __repr__(self) -> str:
        return f"Step(node={self.node!r}, field={self.field!r}, index={self.index!r})"


Path = tuple[Step, ...]


def find_all(root: tir.Stmt, match: Callable[[tir.Stmt], bool]) -> list[tuple[tir.Stmt, Path]]:
    """Every statement under ``root`` (itself included) that ``match`` accepts, in program order,
    with its path from ``root``."""
    found: list[tuple[tir.Stmt, Path]] = []
    _find_all(root, (), match, found)
    return found


# The walks below are module functions: a recursive closure is a reference cycle, and the paths it
# reaches would wait for the garbage collector instead of going when the walk's result does.
def _find_all(stmt: tir.Stmt, path: Path, match: Callable[[tir.Stmt], bool],
              found: list[tuple[tir.Stmt, Path]]) -> None:
    if match(stmt):
        found.append((stmt, path))
    for field, index, child in stmt_children(stmt):
        _find_all(child, path + (Step(stmt, field, index),), match, found)


def find_first(root: tir.Stmt, match: Callable[[tir.Stmt], bool]) -> tuple[tir.Stmt, Path] | None:
    """The first statement ``match`` accepts, with its path, or None."""
    return _find_first(root, (), match)


def _find_first(stmt: tir.Stmt, path: Path,
                match: Callable[[tir.Stmt], bool]) -> tuple[tir.Stmt, Path] | None:
    if match(stmt):
        return stmt, path
    for field, index, child in stmt_children(stmt):
        hit = _find_first(child, path + (Step(stmt, field, index),), match)
        if hit is not None:
            return hit
    return None


def _rebuild(step: Step, child: tir.Stmt | None) -> tir.Stmt | None:
    """``step.node`` with the child it leads to replaced (None: removed)."""
    value = getattr(step.node, step.field)
    if step.index is None:
        if child is None:
            if step.field in ("init", "else_case"):  # optional fields simply disappear
                return replace(step.node, **{step.field: None})
            return None  # a loop, let or block left without a body goes too
        return replace(step.node, **{step.field: child})
    items = list(value)
    if child is None:
        del items[step.index]
    elif isinstance(child, tir.SeqStmt) and isinstance(step.node, tir.SeqStmt):
        items[step.index:step.index + 1] = list(child.seq)  # keep sequences flat
    else:
        items[step.index] = child
    if isinstance(step.node, tir.SeqStmt):
        if not items:
            return None
        if len(items) == 1:
            return items[0]
    return replace(step.node, **{step.field: tuple(items)})


def replace_at(path: Path, new: tir.Stmt | None, root: tir.Stmt) -> tir.Stmt:
    """``root`` with the statement at the end of ``path`` replaced by ``new`` (None removes it,
    along with any loop or SeqStmt it leaves empty)."""
    current: tir.Stmt | None = new
    for step in reversed(path):
        current = _rebuild(step, current)
    if current is None:
        raise ValueError("removing this statement would leave the function without a body")
    return current


def loops_of(path: Path) -> list[tir.For]:
    """The loops on ``path`` below its innermost block (the loops of the statement's own scope),
    outermost first."""
    loops: list[tir.For] = []
    for step in path:
        if isinstance(step.node, tir.Block):
            loops = []
        elif isinstance(step.node, tir.For):
            loops.append(step.node)
    return loops


def enclosing_block_index(path: Path) -> int:
    """The index in ``path`` of the innermost Block (the statement's scope), or -1 at top level."""
    for i in range(len(path) - 1, -1, -1):
        if isinstance(path[i].node, tir.Block):
            return i
    return -1


def child_realizes(stmt: tir.Stmt) -> list[tuple[tir.BlockRealize, Path]]:
    """The block realizes directly under ``stmt``'s scope (not inside other blocks), with their
    paths from ``stmt``; ``stmt`` may be a loop or a Block (its body is searched)."""
    found: list[tuple[tir.BlockRealize, Path]] = []
    _child_realizes(stmt, (), found)
    return found


def _child_realizes(s: tir.Stmt, path: Path, found: list[tuple[tir.BlockRealize, Path]]) -> None:
    if isinstance(s, tir.BlockRealize) and path:
        found.append((s, path))
        return
    for field, index, child in stmt_children(s):
        if isinstance(s, tir.Block) and field == "init":
            continue
        _child_realizes(child, path + (Step(s, field, index),), found)


def block_realizes(root: tir.Stmt) -> list[tuple[tir.BlockRealize, Path]]:
    """Every block realize under ``root`` at any depth, in program order."""
    return [(s, p) for s, p in find_all(root, lambda s: isinstance(s, tir.BlockRealize))]  # type: ignore[misc]
