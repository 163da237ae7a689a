"""CanonicalizeBindings (TVM's ``relax.transform.CanonicalizeBindings``): remove the bindings
that only rename a value, so every use names the value's first variable.

Two steps, as in TVM:

1. **Symbolic variables** (``CanonicalizeTIRVariables``): a ``match_cast`` whose value has a
   known shape tells the values of the symbolic variables it defines (``R.match_cast(A,
   R.Tensor((n, m)))`` with ``A: R.Tensor((16, 32))`` gives ``n = 16, m = 32``); later shapes,
   ``R.shape``/``R.prim_value`` arguments and struct infos use the values, which usually leaves
   the cast trivial. Two casts giving a variable different values raise ``ValueError``; the two
   branches of an ``if`` and nested functions keep their own values.
2. **Bindings** (``CanonicalizeRelaxBindings``): a trivial binding ``y = x`` (also ``y = t[i]`` of a
   known tuple ``t = (..., x, ...)``, and a ``match_cast`` to the struct info ``x`` already has) is
   removed and ``y``'s uses name ``x``. When ``y`` is a dataflow block output and ``x`` one of the
   block's dataflow variables, ``x``'s binding defines ``y`` instead (``lv = R.add(..); gv = lv``
   becomes ``gv = R.add(..)``), unless ``y`` is not used after the block, in which case ``y``
   goes. Variables bound to constants are replaced by the constants at their uses. A block output
   used only inside its block becomes a dataflow variable (it leaves ``R.output``).

Unused bindings stay; DeadCodeElimination removes them.
"""
from __future__ import annotations

from typing import Any, Callable

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import can_prove_not_equal, format_expr, simplify
from ..ir.expr_functor import ExprMutator, ExprVisitor
from ..ir.module import IRModule
from ..ir.node import replace
from ..ir.stmt_functor import substitute
from ..ir.struct_info import sinfo_of
from .cse import identical
from .infra import FunctionPass, PassContext, register_pass

__all__ = ["CanonicalizeBindings", "canonicalize_bindings"]


# ==================================================================== step 1: symbolic variables
def _symbol_values(pattern: rx.StructInfo, actual: rx.StructInfo, out: dict[tir.Var, tir.PrimExpr]) -> None:
    """The values ``actual`` gives the symbolic variables that stand alone in ``pattern``."""
    if isinstance(pattern, rx.TupleStructInfo) and isinstance(actual, rx.TupleStructInfo):
        for p, a in zip(pattern.fields, actual.fields):
            _symbol_values(p, a, out)
        return
    if isinstance(pattern, rx.TensorStructInfo) and isinstance(actual, rx.TensorStructInfo):
        dims = (pattern.shape, actual.shape)
    elif isinstance(pattern, rx.ShapeStructInfo) and isinstance(actual, rx.ShapeStructInfo):
        dims = (pattern.values, actual.values)
    elif isinstance(pattern, rx.PrimStructInfo) and isinstance(actual, rx.PrimStructInfo):
        dims = ((pattern.value,), (actual.value,))
    else:
        return
    if dims[0] is None or dims[1] is None or len(dims[0]) != len(dims[1]):
        return
    for p, a in zip(*dims):
        if isinstance(p, tir.Var) and a is not None and a is not p:
            out.setdefault(p, a)


class _SymbolicVarCanonicalizer(ExprMutator):
    """Replaces symbolic variables whose values match_casts determine."""

    def __init__(self, mod: IRModule | None) -> None:
        super().__init__(mod)
        self.known: dict[tir.Var, tuple[tir.PrimExpr, rx.Var]] = {}  # var -> (value, cast's variable)

    # ---- PrimExprs, wherever Relax holds them
    def prim(self, expr: tir.PrimExpr) -> tir.PrimExpr:
        """``expr`` with the known variables replaced (and simplified when something was)."""
        if not self.known:
            return expr
        new = substitute(expr, lambda v: self.known[v][0] if v in self.known else None)
        return expr if new is expr else simplify(new)

    def sinfo(self, sinfo: rx.StructInfo) -> rx.StructInfo:
        """``sinfo`` with the known variables replaced (the same object when none occurs)."""
        if not self.known or sinfo is None:
            return sinfo
        if isinstance(sinfo, rx.TensorStructInfo) and sinfo.shape is not None:
            return self._rebuild(sinfo, "shape", tuple(self.prim(d) for d in sinfo.shape))
        if isinstance(sinfo, rx.ShapeStructInfo) and sinfo.values is not None:
            return self._rebuild(sinfo, "values", tuple(self.prim(d) for d in sinfo.values))
        if isinstance(sinfo, rx.PrimStructInfo) and sinfo.value is not None:
            return self._rebuild(sinfo, "value", self.prim(sinfo.value))
        if isinstance(sinfo, rx.TupleStructInfo):
            return self._rebuild(sinfo, "fields", tuple(self.sinfo(f) for f in sinfo.fields))
        return sinfo

    @staticmethod
    def _rebuild(node: Any, field: str, new: tuple | Any) -> Any:
        """``node`` with ``field`` set to ``new``, or ``node`` itself when nothing changed."""
        old = getattr(node, field)
        same = all(a is b for a, b in zip(new, old)) if isinstance(new, tuple) else new is old
        return node if same else replace(node, **{field: new})

    def visit_shape_expr_(self, expr: rx.ShapeExpr) -> rx.Expr:
        """``R.shape([n, 4])`` with known values."""
        new = self._rebuild(expr, "values", tuple(self.prim(v) for v in expr.values))
        return new if new is expr else rx.ShapeExpr(new.values, span=expr.span)

    def visit_prim_value_(self, expr: rx.PrimValue) -> rx.Expr:
        """``R.prim_value(n)`` with a known value."""
        value = self.prim(expr.value)
        return expr if value is expr.value else rx.PrimValue(value, span=expr.span)

    def visit_call_(self, call: rx.Call) -> rx.Expr:
        """The arguments, the declared output struct info and the call's own struct info."""
        new = super().visit_call_(call)
        if not isinstance(new, rx.Call):
            return new
        sinfo_args = tuple(self.sinfo(s) for s in new.sinfo_args)
        own = self.sinfo(new.struct_info) if new.struct_info is not None else None
        if all(a is b for a, b in zip(sinfo_args, new.sinfo_args)) and own is new.struct_info:
            return new
        return replace(new, sinfo_args=sinfo_args, struct_info=own)

    # ---- where the values come from
    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        """Learn the values the cast gives its variables, then cast to the struct info they give."""
        value = self.visit_expr(binding.value)
        found: dict[tir.Var, tir.PrimExpr] = {}
        # Matched before substitution, so that a second definition of a variable is checked.
        _symbol_values(binding.struct_info, sinfo_of(value), found)
        for var, expr in found.items():
            if var in self.known:
                earlier, source = self.known[var]
                if can_prove_not_equal(earlier, expr):
                    raise ValueError(
                        f"MatchCast statements must be consistent: the definition of {source.name_hint} "
                        f"implies that {var.name} is {format_expr(earlier)}, while the later definition of "
                        f"{binding.var.name_hint} implies that it is {format_expr(expr)}")
            else:
                self.known[var] = (expr, binding.var)
        sinfo = self.sinfo(binding.struct_info)
        var = self.visit_var_def(binding.var)
        if var is binding.var and value is binding.value and sinfo is binding.struct_info:
            self.builder_.emit_normalized(binding)
            return
        renewed = self.with_struct_info(var, sinfo)
        if renewed is not binding.var:
            self.var_remap_[binding.var] = renewed
        self.builder_.emit_normalized(rx.MatchCast(renewed, value, sinfo, span=binding.span))

    def visit_with_new_scope(self, expr: rx.Expr) -> rx.Expr:
        """A branch or function body learns values only for itself."""
        saved = dict(self.known)
        body = super().visit_with_new_scope(expr)
        self.known = saved
        return body


# ==================================================================== step 2: bindings
def _free_vars(func: rx.Function) -> set[rx.Var]:
    """The Relax variables a function uses but does not define."""
    defined: set[rx.Var] = set()
    used: set[rx.Var] = set()

    class _Collect(ExprVisitor):
        def visit_var_def_(self, var: rx.Var) -> None:
            defined.add(var)

        visit_dataflow_var_def_ = visit_var_def_

        def visit_var_(self, var: rx.Var) -> None:
            used.add(var)

        visit_dataflow_var_ = visit_var_

    _Collect().visit_expr(func)
    return used - defined


class _Plan:
    """What the binding step changes: removed bindings, renamed uses and definitions, constants."""

    def __init__(self) -> None:
        self.remove: set[rx.Var] = set()
        self.use: dict[rx.Var, rx.Var] = {}  # a use of the key names the value instead
        self.define: dict[rx.Var, rx.Var] = {}  # the key's binding defines the value instead
        self.constants: dict[rx.Var, rx.Constant] = {}


class _BindingPlanner(ExprVisitor):
    """Finds trivial bindings, constants, and which variables are used outside their block."""

    def __init__(self) -> None:
        self.block: rx.BindingBlock | None = None
        self.home: dict[rx.Var, rx.BindingBlock | None] = {}
        self.values: dict[rx.Var, rx.Expr] = {}
        self.trivial: dict[rx.Var, rx.Var] = {}
        self.constants: dict[rx.Var, rx.Constant] = {}
        self.dataflow_defined: list[rx.Var] = []
        self.used_outside: set[rx.Var] = set()  # outside the dataflow block defining them

    # ---- scopes
    def visit_function_(self, func: rx.Function) -> None:
        """A function's free variables are used elsewhere (when it is called)."""
        outer, self.block = self.block, None
        self.used_outside |= _free_vars(func)
        super().visit_function_(func)
        self.block = outer

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> None:
        """A branch's blocks are not the enclosing block."""
        outer, self.block = self.block, None
        super().visit_seq_expr_(seq)
        self.block = outer

    def visit_binding_block_(self, block: rx.BindingBlock) -> None:
        """Bindings know their block."""
        self.block = block
        super().visit_binding_block_(block)
        self.block = None

    visit_dataflow_block_ = visit_binding_block_

    def in_dataflow(self) -> bool:
        """True inside a dataflow block."""
        return isinstance(self.block, rx.DataflowBlock)

    # ---- bindings
    def unwrap(self, value: rx.Expr) -> rx.Expr:
        """``t[i]`` of a tuple known through its bindings is that field."""
        if not isinstance(value, rx.TupleGetItem):
            return value
        tup = value.tuple_value
        while isinstance(tup, rx.Var) and tup in self.values:
            tup = self.values[tup]
        return tup.fields[value.index] if isinstance(tup, rx.Tuple) else value

    def note(self, var: rx.Var, value: rx.Expr, same_sinfo: bool) -> None:
        """Record what ``var`` is bound to."""
        value = self.unwrap(value)
        if isinstance(value, rx.Var) and same_sinfo:
            self.trivial[var] = value
        if isinstance(value, rx.Constant):
            self.constants[var] = value
        self.values[var] = value
        self.home[var] = self.block

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """``y = x`` is trivial."""
        self.note(binding.var, binding.value, True)
        super().visit_var_binding_(binding)

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        """A cast to the struct info the value has already is trivial."""
        self.note(binding.var, binding.value, identical(binding.struct_info, sinfo_of(binding.value)))
        super().visit_match_cast_(binding)

    def visit_var_def_(self, var: rx.Var) -> None:
        """Note the variables defined inside dataflow blocks."""
        if self.in_dataflow():
            self.dataflow_defined.append(var)

    visit_dataflow_var_def_ = visit_var_def_

    def visit_var_(self, var: rx.Var) -> None:
        """A use outside any dataflow block, or in another block than the defining one."""
        if not self.in_dataflow() or (var in self.home and self.home[var] is not self.block):
            self.used_outside.add(var)

    visit_dataflow_var_ = visit_var_

    # ---- the plan
    def plan(self) -> _Plan:
        """Decide the replacements (TVM's four cases of a trivial binding ``y = x``)."""
        plan = _Plan()
        for var in self.dataflow_defined:
            if not isinstance(var, rx.DataflowVar) and var not in self.used_outside:
                local = rx.DataflowVar(var.name_hint, var.struct_info, span=var.span)
                plan.define[var] = plan.use[var] = local
        plan.constants = dict(self.constants)
        for var, target in self.trivial.items():
            while target in self.trivial:  # a chain of renamings ends at the first real value
                target = self.trivial[target]
            while target in plan.define:
                target = plan.define[target]
            if (isinstance(var, rx.DataflowVar) or not isinstance(target, rx.DataflowVar)
                    or var not in self.used_outside):
                plan.use[var] = target  # uses of y name x
            else:
                # y is a block output and x block-local: x's binding defines y instead.
                plan.define[target] = plan.use[target] = var
            plan.remove.add(var)
        return plan


def _follow(mapping: dict[rx.Var, rx.Var], var: rx.Var) -> rx.Var:
    """The end of a chain of replacements."""
    while var in mapping:
        var = mapping[var]
    return var


class _BindingCanonicalizer(ExprMutator):
    """Applies a plan: drops trivial bindings, renames definitions and uses, inlines constants."""

    def __init__(self, mod: IRModule | None, plan: _Plan) -> None:
        super().__init__(mod)
        self.plan = plan
        self.removed = 0

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """Skip removed bindings."""
        self._rewrite(binding, super().visit_var_binding_)

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        """Skip removed bindings."""
        self._rewrite(binding, super().visit_match_cast_)

    def _rewrite(self, binding: rx.Binding, emit: Callable[[Any], None]) -> None:
        """Emit ``binding`` unless it is removed; a renewed definition is renewed at its uses."""
        if binding.var in self.plan.remove:
            self.removed += 1
            return
        emit(binding)
        target = _follow(self.plan.define, binding.var)
        if target is not binding.var and binding.var in self.var_remap_:
            # The new variable got new struct info when emitted: its uses must see it too.
            self.var_remap_[target] = self.var_remap_[binding.var]

    def visit_var_def_(self, var: rx.Var) -> rx.Var:
        """A definition that now defines another variable."""
        return _follow(self.plan.define, var)

    visit_dataflow_var_def_ = visit_var_def_

    def visit_var_(self, var: rx.Var) -> rx.Expr:
        """A use: the variable it now names, or the constant it is bound to."""
        target = _follow(self.plan.use, var)
        constant = self.plan.constants.get(target)
        if constant is not None:
            return constant
        return self.var_remap_.get(target, target)

    visit_dataflow_var_ = visit_var_


def canonicalize_bindings(func: rx.Function, mod: IRModule | None = None) -> tuple[rx.Function, int]:
    """``func`` without trivial bindings (symbolic variables with known values replaced first),
    and how many bindings were removed."""
    func = _SymbolicVarCanonicalizer(mod).visit_expr(func)
    planner = _BindingPlanner()
    planner.visit_expr(func)
    mutator = _BindingCanonicalizer(mod, planner.plan())
    return mutator.visit_expr(func), mutator.removed


class CanonicalizeBindings(FunctionPass):
    """Remove trivial bindings (aliases, known tuple fields, trivial casts) and rename their uses."""

    opt_level = 1

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        new, removed = canonicalize_bindings(func, mod)
        self.stats["removed_bindings"] += removed
        return new


register_pass("CanonicalizeBindings", CanonicalizeBindings)
