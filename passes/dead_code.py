"""DeadCodeElimination (TVM's ``relax.transform.DeadCodeElimination``): remove unused pure
bindings in Relax functions and the functions no entry function reaches.

Entry functions are the public ones (those with a ``global_symbol``) plus ``entry_functions``.
A binding is removed when its variable is never used and its value has no side effects (no
call of an impure op, extern function, PrimFunc or impure Relax function).  An unused
``match_cast`` is kept when it defines symbolic variables (its struct info uses TIR variables
no function parameter defines).  Empty blocks are dropped, as TVM's ExprMutator does.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..ir import relax as rx
from ..ir import tir
from ..ir.expr_functor import remove_all_unused
from ..ir.functor import Visitor
from ..ir.module import IRModule
from .infra import ModulePass, PassContext, register_pass

__all__ = ["DeadCodeElimination", "remove_unused_bindings", "reachable_functions"]


# ------------------------------------------------------------------ functions
class _GlobalRefs(Visitor):
    """The names of the module functions a function refers to (calls, call_tir targets)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_global_var_(self, gv: Any) -> None:
        self.names.add(gv.name_hint)


def reachable_functions(mod: IRModule, entries: Sequence[str]) -> set[str]:
    """Names of the functions reachable from ``entries`` through GlobalVar references. PrimFuncs
    are leaves of the call graph (as in TVM's relax DCE), so their bodies are not walked."""
    seen: set[str] = set()
    todo = [name for name in entries if name in mod]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if isinstance(mod[name], tir.PrimFunc):
            continue
        refs = _GlobalRefs()
        refs.visit(mod[name])
        todo.extend(n for n in refs.names if n in mod and n not in seen)
    return seen


def _remove_unreachable(mod: IRModule, entries: Sequence[str]) -> int:
    """Remove (in place) the functions not reachable from ``entries``; returns how many."""
    keep = reachable_functions(mod, entries)
    dead = [gv for gv in mod.get_global_vars() if gv.name_hint not in keep]
    for gv in dead:
        mod.remove(gv)
    return len(dead)


# ------------------------------------------------------------------ bindings
class _BindingCount(Visitor):
    def __init__(self) -> None:
        self.count = 0

    def visit_var_binding_(self, b: rx.VarBinding) -> None:
        self.count += 1
        self.generic_visit(b)

    def visit_match_cast_(self, b: rx.MatchCast) -> None:
        self.count += 1
        self.generic_visit(b)


def _bindings(func: rx.Function) -> int:
    counter = _BindingCount()
    counter.visit(func)
    return counter.count


def remove_unused_bindings(func: rx.Function, mod: IRModule | None = None) -> tuple[rx.Function, int]:
    """``func`` without its unused pure bindings (``remove_all_unused``), and how many went."""
    new = remove_all_unused(func, mod)
    return new, (_bindings(func) - _bindings(new)) if new is not func else 0


# ------------------------------------------------------------------ the pass
class DeadCodeElimination(ModulePass):
    """Remove unused pure bindings and the functions not reachable from the entry functions."""

    opt_level = 1

    def __init__(self, entry_functions: str | Sequence[str] | None = None) -> None:
        super().__init__()
        if isinstance(entry_functions, str):
            entry_functions = [n for n in entry_functions.split("+") if n]  # "main+helper" in a pipeline
        self.entry_functions = list(entry_functions or [])

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        entries = [gv.name_hint for gv, f in mod.functions_items()
                   if getattr(f, "attrs", None) and f.attrs.get("global_symbol") is not None]
        entries += [n for n in self.entry_functions if n not in entries]
        removed_functions = _remove_unreachable(mod, entries)
        for gv, func in mod.functions_items():
            if isinstance(func, rx.Function):
                new, removed = remove_unused_bindings(func, mod)
                if removed:
                    mod.update_func(gv, new)
                    self.stats["removed_bindings"] += removed
        # Bindings just removed may have been the last callers of some functions.
        removed_functions += _remove_unreachable(mod, entries)
        self.stats["removed_functions"] += removed_functions
        return mod


register_pass("DeadCodeElimination", DeadCodeElimination)
