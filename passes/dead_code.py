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
from ..ir.functor import Mutator, Visitor
from ..ir.module import IRModule
from ..ir.node import Node, replace
from ..ir.op import find_op_def
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
    """Names of the functions reachable from ``entries`` through GlobalVar references."""
    seen: set[str] = set()
    todo = [name for name in entries if name in mod]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
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
class _UseCounter(Visitor):
    """Adds ``delta`` to the use count of every Relax variable read in the visited IR.

    Definitions (parameters, binding variables) are not uses.  It also collects the TIR
    variables that function parameters define (for the match_cast rule).
    """

    def __init__(self, counts: dict[int, int], delta: int = 1) -> None:
        self.counts = counts
        self.delta = delta
        self.param_tir_vars: set[int] = set()

    def use(self, var: rx.Var) -> None:
        self.counts[id(var)] = self.counts.get(id(var), 0) + self.delta

    def visit_var_(self, var: rx.Var) -> None:
        self.use(var)

    def visit_dataflow_var_(self, var: rx.DataflowVar) -> None:
        self.use(var)

    def visit_function_(self, func: rx.Function) -> None:
        for p in func.params:
            self.param_tir_vars.update(id(v) for v in _tir_vars(p.struct_info))
        self.visit(func.body)

    def visit_var_binding_(self, b: rx.VarBinding) -> None:
        self.visit(b.value)

    def visit_match_cast_(self, b: rx.MatchCast) -> None:
        self.visit(b.value)


class _TirVars(Visitor):
    def __init__(self) -> None:
        self.found: list[tir.Var] = []

    def visit_tir_var_(self, v: tir.Var) -> None:
        self.found.append(v)


def _tir_vars(obj: Any) -> list[tir.Var]:
    collector = _TirVars()
    collector.visit(obj)
    return collector.found


class _Impure(Visitor):
    """Finds calls with side effects; a nested function's body does not run when defined."""

    def __init__(self, mod: IRModule | None) -> None:
        self.mod = mod
        self.found = False

    def visit_call_(self, call: rx.Call) -> None:
        if not self.found and not _call_is_pure(call, self.mod):
            self.found = True
            return
        self.generic_visit(call)

    def visit_function_(self, func: rx.Function) -> None:
        return None


def _call_is_pure(call: rx.Call, mod: IRModule | None) -> bool:
    op = call.op
    key = type(op).visit_key
    if key == "op":
        return find_op_def(op).pure
    if key == "global_var":
        callee = mod[op.name_hint] if mod is not None and op.name_hint in mod else None
        # PrimFuncs write their outputs: calling one directly is impure (as in TVM).
        return isinstance(callee, rx.Function) and callee.is_pure
    if key == "extern_func":
        return False
    sinfo = getattr(op, "struct_info", None)
    return isinstance(sinfo, rx.FuncStructInfo) and sinfo.purity


def _is_pure(expr: Node, mod: IRModule | None) -> bool:
    finder = _Impure(mod)
    finder.visit(expr)
    return not finder.found


class _RemoveUnused(Mutator):
    """Walks each SeqExpr backwards, dropping unused pure bindings and un-counting their uses,
    so whole chains of dead bindings go in one walk."""

    def __init__(self, counts: dict[int, int], param_tir_vars: set[int], mod: IRModule | None) -> None:
        self.counts = counts
        self.param_tir_vars = param_tir_vars
        self.mod = mod
        self.removed = 0

    def removable(self, b: rx.Binding) -> bool:
        if self.counts.get(id(b.var), 0) > 0 or not _is_pure(b.value, self.mod):
            return False
        if isinstance(b, rx.MatchCast):
            return all(id(v) in self.param_tir_vars for v in _tir_vars(b.struct_info))
        return True

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> rx.SeqExpr:
        body = self.visit(seq.body)
        blocks = []
        for block in reversed(seq.blocks):
            kept = []
            for b in reversed(block.bindings):
                if self.removable(b):
                    _UseCounter(self.counts, -1).visit(b.value)
                    self.removed += 1
                else:
                    kept.append(self.visit(b))
            kept.reverse()
            if not kept:
                continue
            same = len(kept) == len(block.bindings) and all(a is b for a, b in zip(kept, block.bindings))
            blocks.append(block if same else replace(block, bindings=tuple(kept)))
        blocks.reverse()
        if body is seq.body and len(blocks) == len(seq.blocks) and all(a is b for a, b in zip(blocks, seq.blocks)):
            return seq
        return replace(seq, blocks=tuple(blocks), body=body)


def remove_unused_bindings(func: rx.Function, mod: IRModule | None = None) -> tuple[rx.Function, int]:
    """``func`` without its unused pure bindings (nested functions included), and how many went."""
    counts: dict[int, int] = {}
    counter = _UseCounter(counts)
    counter.visit(func)
    remover = _RemoveUnused(counts, counter.param_tir_vars, mod)
    return remover.visit(func), remover.removed


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
