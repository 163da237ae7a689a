"""EliminateCommonSubexpr (TVM's ``relax.transform.EliminateCommonSubexpr``): a binding whose
value repeats an earlier binding's value becomes a trivial binding to the earlier variable, and
later uses of it refer to the earlier variable directly.

As in TVM:

- values are compared after the earlier replacements, structurally (``structural_hash`` /
  ``structural_equal``) with the variables they use matched by identity; a ``match_cast`` only
  matches a ``match_cast`` to the same struct info;
- the duplicate binding stays as an alias (``lv1 = lv0``) so that its variable remains defined;
  CanonicalizeBindings and DeadCodeElimination remove it later;
- values with side effects (impure calls) are never merged; ``call_only=True`` merges calls only;
- a variable of a dataflow block is not visible after it: the block's dataflow variables stop
  being candidates when it ends, and uses after the block keep naming the block's outputs;
- the branches of an ``if`` see the bindings before it but not each other's, and a nested
  function starts from a clean table.

It is an opt_level 3 pass, as in TVM's pass-infrastructure tutorial: ``Sequential`` skips it at the default
opt_level 2.
"""
from __future__ import annotations

from typing import Any

from ..ir import relax as rx
from ..ir import tir
from ..ir.expr_functor import ExprMutator, ExprVisitor, _is_impure_call
from ..ir.functor import post_order_visit
from ..ir.module import IRModule
from ..ir.structural import structural_equal, structural_hash
from .infra import FunctionPass, PassContext, register_pass

__all__ = ["EliminateCommonSubexpr", "eliminate_common_subexpr", "identical"]


def _variables(node: Any) -> list[Any]:
    """The Relax and TIR variables in ``node``, in a fixed traversal order (repeats included)."""
    found: list[Any] = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, (rx.Var, tir.Var)) else None)
    return found


def _same_objects(a: list[Any], b: list[Any]) -> bool:
    """Two lists holding the very same objects in the same order."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def identical(a: Any, b: Any) -> bool:
    """Structurally equal with every variable standing for itself (TVM's ``structural_equal``
    without ``map_free_vars``): ``R.add(x, y)`` is not ``R.add(y, x)``, ``(m, n)`` not ``(p, q)``.

    ``structural_equal`` matches variables one-to-one in traversal order; requiring both sides
    to mention the very same variables in the same order pins that matching to the identity.
    """
    return _same_objects(_variables(a), _variables(b)) and structural_equal(a, b)


class _ValueKey:
    """A binding's value (and the struct info of a match_cast) as a dictionary key, equal to
    another when they are ``identical``."""

    __slots__ = ("value", "cast", "variables", "hash")

    def __init__(self, value: rx.Expr, cast: rx.StructInfo | None) -> None:
        self.value, self.cast = value, cast
        self.variables = _variables((value, cast))
        self.hash = structural_hash((value, cast))

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _ValueKey):
            return NotImplemented
        return (self.hash == other.hash and _same_objects(self.variables, other.variables)
                and structural_equal((self.value, self.cast), (other.value, other.cast)))


class _ImpurityFinder(ExprVisitor):
    """Whether an expression calls something with side effects (nested functions are not run)."""

    def __init__(self, mod: IRModule | None) -> None:
        self.mod = mod
        self.found = False

    def visit_call_(self, call: rx.Call) -> None:
        """An impure callee makes the whole value impure."""
        if _is_impure_call(call, self.mod):
            self.found = True
        super().visit_call_(call)

    def visit_function_(self, func: rx.Function) -> None:
        """A function literal does nothing until it is called."""


def _has_side_effects(expr: rx.Expr, mod: IRModule | None) -> bool:
    """True when evaluating ``expr`` may have side effects."""
    finder = _ImpurityFinder(mod)
    finder.visit_expr(expr)
    return finder.found


class _CommonSubexprEliminator(ExprMutator):
    """Replaces repeated binding values by the first variable bound to them."""

    def __init__(self, mod: IRModule | None, call_only: bool) -> None:
        super().__init__(mod)
        self.mod = mod
        self.call_only = call_only
        # value -> the variables bound to it so far; the first one replaces the others.
        self.bound: dict[_ValueKey, list[rx.Var]] = {}
        # Duplicates redirected inside the current dataflow block (undone when it ends).
        self.block_aliases: list[rx.Var] = []
        self.eliminated = 0

    # ---- bindings
    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """Emit the binding, or an alias of the first variable bound to the same value."""
        value = self.visit_expr(binding.value)
        key = self._key(value, None)
        first = self._first(key)
        self.reemit_binding(binding, value if first is None else first)
        self._record(binding, key, first)

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        """As ``visit_var_binding_``; only the same cast of the same value is a duplicate."""
        value = self.visit_expr(binding.value)
        key = self._key(value, binding.struct_info)
        first = self._first(key)
        if first is not None:
            # The alias has the cast's struct info already: the first binding checked it.
            self.reemit_binding(rx.VarBinding(binding.var, value, span=binding.span), first)
        elif value is binding.value:
            self.builder_.emit_normalized(binding)
        else:  # the variable keeps the cast's struct info, so it never needs renewing
            self.builder_.emit_normalized(rx.MatchCast(binding.var, value, binding.struct_info, span=binding.span))
        self._record(binding, key, first)

    def _key(self, value: rx.Expr, cast: rx.StructInfo | None) -> _ValueKey | None:
        """The lookup key of a value that may be shared between bindings (None for the others)."""
        if self.call_only and not isinstance(value, rx.Call):
            return None
        if _has_side_effects(value, self.mod):
            return None
        return _ValueKey(value, cast)

    def _first(self, key: _ValueKey | None) -> rx.Var | None:
        """The variable an identical earlier binding defined, if any."""
        earlier = self.bound.get(key) if key is not None else None
        return earlier[0] if earlier else None

    def _record(self, binding: rx.Binding, key: _ValueKey | None, first: rx.Var | None) -> None:
        """Remember the binding's variable; a duplicate's uses are redirected to ``first``."""
        if key is None:
            return
        var = self.get_var_remap(binding.var)  # the variable as emitted (renewed or not)
        if first is not None:
            self.var_remap_[binding.var] = first
            self.eliminated += 1
            self.block_aliases.append(binding.var)
        self.bound.setdefault(key, []).append(var)

    # ---- scopes
    def visit_dataflow_block_(self, block: rx.DataflowBlock) -> rx.BindingBlock:
        """The block's dataflow variables stop being candidates, and its aliases stop redirecting."""
        outer, self.block_aliases = self.block_aliases, []
        new = super().visit_dataflow_block_(block)
        for var in self.block_aliases:
            # After the block an output alias names itself: its first binding may be block-local.
            self.var_remap_.pop(var, None)
        self.block_aliases = outer
        for variables in self.bound.values():
            variables[:] = [v for v in variables if not isinstance(v, rx.DataflowVar)]
        return new

    def visit_with_new_scope(self, expr: rx.Expr) -> rx.Expr:
        """A branch (or function body) sees the bindings before it; its own stay inside."""
        saved_bound = {key: list(variables) for key, variables in self.bound.items()}
        saved_remap = dict(self.var_remap_)
        body = super().visit_with_new_scope(expr)
        self.bound, self.var_remap_ = saved_bound, saved_remap
        return body

    def visit_function_(self, func: rx.Function) -> rx.Expr:
        """A nested function is rewritten on its own, so no binding crosses its boundary."""
        if self.bound or self.var_remap_:
            inner = _CommonSubexprEliminator(self.mod, self.call_only)
            new = inner.visit_expr(func)
            self.eliminated += inner.eliminated
            return new
        return super().visit_function_(func)


def eliminate_common_subexpr(func: rx.Function, mod: IRModule | None = None,
                             call_only: bool = False) -> tuple[rx.Function, int]:
    """``func`` with repeated binding values replaced, and how many bindings became aliases."""
    mutator = _CommonSubexprEliminator(mod, call_only)
    new = mutator.visit_expr(func)
    return new, mutator.eliminated


class EliminateCommonSubexpr(FunctionPass):
    """Replace each repeated pure binding value by the variable first bound to it (opt_level 3)."""

    opt_level = 3

    def __init__(self, call_only: bool = False) -> None:
        super().__init__()
        self.call_only = call_only

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        new, eliminated = eliminate_common_subexpr(func, mod, self.call_only)
        self.stats["eliminated"] += eliminated
        return new if eliminated else func


register_pass("EliminateCommonSubexpr", EliminateCommonSubexpr)
