"""Relax traversal with TVM's hook names: ``ExprVisitor`` and ``ExprMutator`` (also spelled
``PyExprVisitor``/``PyExprMutator``, with the ``@visitor``/``@mutator`` decorators of TVM's
Python API), ``post_order_visit`` and ``remove_all_unused``.

Both dispatch through :mod:`tvmlite.ir.functor` on each node's ``visit_key``; the mutator
works in normal form: every rewritten expression is re-normalised by its ``builder_`` (struct
info re-inferred, nested calls bound to fresh variables) and bindings are re-emitted."""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from . import relax as rx
from .block_builder import BlockBuilder, is_leaf
from .functor import Mutator, Visitor, inherit_span
from .module import GlobalVar, IRModule
from .op import find_op_def
from .struct_info import function_ret, is_base_of, sinfo_of, sinfo_vars
from .structural import structural_equal

__all__ = ["ExprVisitor", "ExprMutator", "PyExprVisitor", "PyExprMutator", "visitor", "mutator",
           "post_order_visit", "remove_all_unused", "use_counts"]

_C = TypeVar("_C", bound=type)

# Node keys whose TVM hook has another name.
_TVM_HOOKS = {"relax_if": "visit_if_", "tuple_get_item": "visit_tuple_getitem_"}


class _TVMHookNames:
    """Routes the node keys that differ from TVM's hook names (``visit_if_``, ``visit_tuple_getitem_``)."""

    def visit_relax_if_(self, node: rx.If) -> Any:
        """``visit_if_``."""
        return self.visit_if_(node)  # type: ignore[attr-defined]

    def visit_tuple_get_item_(self, node: rx.TupleGetItem) -> Any:
        """``visit_tuple_getitem_``."""
        return self.visit_tuple_getitem_(node)  # type: ignore[attr-defined]


# ==================================================================== visitor
class ExprVisitor(_TVMHookNames, Visitor):
    """Walks a Relax expression; override ``visit_call_``, ``visit_var_`` ... and call the
    ``super()`` method to keep walking into the children."""

    # ---- dispatchers
    def visit_expr(self, expr: rx.Expr) -> None:
        """Visit an expression (dispatches on its class)."""
        self._dispatch(expr)

    def visit_binding(self, binding: rx.Binding) -> None:
        """Visit a binding: ``visit_var_binding_`` or ``visit_match_cast_``."""
        self._dispatch(binding)

    def visit_binding_block(self, block: rx.BindingBlock) -> None:
        """Visit a block: ``visit_binding_block_`` or ``visit_dataflow_block_``."""
        self._dispatch(block)

    def visit_var_def(self, var: rx.Var) -> None:
        """Visit a variable where it is defined: ``visit_var_def_`` or ``visit_dataflow_var_def_``."""
        getattr(self, f"visit_{type(var).visit_key}_def_")(var)

    # ---- leaves
    def _leaf(self, expr: rx.Expr) -> None:
        """Leaves have no children."""

    visit_constant_ = visit_var_ = visit_dataflow_var_ = visit_shape_expr_ = _leaf
    visit_extern_func_ = visit_global_var_ = visit_op_ = visit_prim_value_ = _leaf
    visit_string_imm_ = visit_data_type_imm_ = visit_var_def_ = visit_dataflow_var_def_ = _leaf

    # ---- expressions with children
    def visit_tuple_(self, tup: rx.Tuple) -> None:
        """The fields."""
        for field in tup.fields:
            self.visit_expr(field)

    def visit_tuple_getitem_(self, item: rx.TupleGetItem) -> None:
        """The tuple."""
        self.visit_expr(item.tuple_value)

    def visit_call_(self, call: rx.Call) -> None:
        """The callee, then the arguments."""
        self.visit_expr(call.op)
        for arg in call.args:
            self.visit_expr(arg)

    def visit_function_(self, func: rx.Function) -> None:
        """The parameters (as definitions), then the body."""
        for param in func.params:
            self.visit_var_def(param)
        self.visit_expr(func.body)

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> None:
        """The blocks, then the result."""
        for block in seq.blocks:
            self.visit_binding_block(block)
        self.visit_expr(seq.body)

    def visit_if_(self, node: rx.If) -> None:
        """The condition, then both branches."""
        self.visit_expr(node.cond)
        self.visit_expr(node.true_branch)
        self.visit_expr(node.false_branch)

    # ---- bindings and blocks
    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """The value, then the variable (as a definition)."""
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        """The value, then the variable (as a definition)."""
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_binding_block_(self, block: rx.BindingBlock) -> None:
        """Each binding."""
        for binding in block.bindings:
            self.visit_binding(binding)

    visit_dataflow_block_ = visit_binding_block_


# ==================================================================== mutator
class ExprMutator(_TVMHookNames, Mutator):
    """Rewrites a Relax expression in normal form; override ``visit_call_`` ... to return a
    replacement. ``builder_`` (a BlockBuilder over ``mod``) re-normalises every result and
    collects the re-emitted bindings; ``builder_.add_func``/``update_func``/``get`` build the
    output module. A variable whose struct info changes is replaced by a new Var everywhere."""

    def __init__(self, mod: IRModule | None = None) -> None:
        self.builder_ = BlockBuilder(mod)
        self.var_remap_: dict[rx.Var, rx.Var] = {}  # identity-keyed: old var -> its replacement

    # ---- dispatchers
    def visit_expr(self, expr: rx.Expr) -> rx.Expr:
        """Rewrite an expression, then normalise the result (the replacement keeps the location)."""
        new = self.builder_.normalize(self._dispatch(expr))
        return inherit_span(expr, new)

    def visit_expr_post_order(self, expr: rx.Expr) -> rx.Expr:
        """Rewrite the children of ``expr`` with the default rules (not the overridden hook of
        ``expr`` itself) and normalise: the first line of a post-order ``visit_call_``."""
        key = type(expr).visit_key
        default = getattr(ExprMutator, _TVM_HOOKS.get(key, f"visit_{key}_"), ExprMutator.generic_visit)
        return inherit_span(expr, self.builder_.normalize(default(self, expr)))

    def visit_binding(self, binding: rx.Binding) -> None:
        """Rewrite a binding and emit the result into the builder's current block."""
        self._dispatch(binding)

    def visit_binding_block(self, block: rx.BindingBlock) -> rx.BindingBlock:
        """Rewrite a block: ``visit_binding_block_`` or ``visit_dataflow_block_``."""
        return inherit_span(block, self._dispatch(block))

    def visit_var_def(self, var: rx.Var) -> rx.Var:
        """Rewrite a variable at its definition: ``visit_var_def_`` or ``visit_dataflow_var_def_``."""
        return inherit_span(var, getattr(self, f"visit_{type(var).visit_key}_def_")(var))

    # ---- helpers of TVM's PyExprMutator
    def lookup_binding(self, var: rx.Var) -> rx.Expr | None:
        """The value bound to ``var`` in what was rewritten so far (None for parameters)."""
        return self.builder_.lookup_binding(var)

    def with_struct_info(self, var: rx.Var, struct_info: rx.StructInfo) -> rx.Var:
        """``var`` itself when it has ``struct_info`` already, else a new Var of that struct info."""
        if var.struct_info is not None and structural_equal(var.struct_info, struct_info):
            return var
        return type(var)(var.name_hint, struct_info, span=var.span)

    def set_var_remap(self, var: rx.Var, new_var: rx.Var) -> None:
        """Replace every later use of ``var`` by ``new_var``."""
        self.var_remap_[var] = new_var

    def get_var_remap(self, var: rx.Var) -> rx.Var:
        """The replacement of ``var`` (``var`` itself when it has none)."""
        return self.var_remap_.get(var, var)

    def visit_with_new_scope(self, expr: rx.Expr) -> rx.Expr:
        """Rewrite a function body or an if/else branch; its new bindings stay inside it."""
        self.builder_.begin_binding_block()
        body = self.visit_expr(expr)
        prologue = self.builder_.end_block()
        if prologue.bindings:
            body = rx.SeqExpr((prologue,), body, struct_info=sinfo_of(body))
        return body

    # ---- leaves
    def _leaf(self, expr: rx.Expr) -> rx.Expr:
        """Leaves are kept."""
        return expr

    visit_constant_ = visit_shape_expr_ = visit_extern_func_ = visit_global_var_ = _leaf
    visit_op_ = visit_prim_value_ = visit_string_imm_ = visit_data_type_imm_ = _leaf
    visit_var_def_ = visit_dataflow_var_def_ = _leaf

    def visit_var_(self, var: rx.Var) -> rx.Expr:
        """A use of a variable: its replacement when its definition was renewed."""
        return self.var_remap_.get(var, var)

    visit_dataflow_var_ = visit_var_

    # ---- expressions with children (rebuilt without struct info: normalisation infers it)
    def visit_tuple_(self, tup: rx.Tuple) -> rx.Expr:
        """The fields."""
        fields = tuple(self.visit_expr(f) for f in tup.fields)
        if all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return rx.Tuple(fields, span=tup.span)

    def visit_tuple_getitem_(self, item: rx.TupleGetItem) -> rx.Expr:
        """The tuple."""
        value = self.visit_expr(item.tuple_value)
        return item if value is item.tuple_value else rx.TupleGetItem(value, item.index, span=item.span)

    def visit_call_(self, call: rx.Call) -> rx.Expr:
        """The callee and the arguments (attributes and sinfo_args are kept)."""
        op = self.visit_expr(call.op)
        args = tuple(self.visit_expr(a) for a in call.args)
        if op is call.op and all(a is b for a, b in zip(args, call.args)):
            return call
        return rx.Call(op, args, call.attrs, call.sinfo_args, span=call.span)

    def visit_function_(self, func: rx.Function) -> rx.Expr:
        """The parameters (renewed ones are remapped) and the body, in a new scope."""
        params = []
        for param in func.params:
            new = self.visit_var_def(param)
            if new is not param:
                self.var_remap_[param] = new
            params.append(new)
        body = self.visit_with_new_scope(func.body)
        if body is func.body and all(a is b for a, b in zip(params, func.params)):
            return func
        # Keep the declared result unless the new body no longer fits it or is more specific.
        declared = func.ret_struct_info if is_base_of(func.ret_struct_info, sinfo_of(body)) else None
        ret = function_ret(params, sinfo_of(body), declared)
        return rx.Function(tuple(params), body, ret, func.is_pure, func.attrs, span=func.span)

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> rx.Expr:
        """Each block (empty ones are dropped), then the result."""
        blocks = []
        for block in seq.blocks:
            new = self.visit_binding_block(block)
            if new.bindings:
                blocks.append(new)
        self.builder_.begin_binding_block()
        body = self.visit_expr(seq.body)
        if body is not seq.body and not is_leaf(body):
            body = self.builder_.emit(body)  # a rewritten result is bound, as the parser binds it
        prologue = self.builder_.end_block()
        if prologue.bindings:
            blocks.append(prologue)
        if body is seq.body and len(blocks) == len(seq.blocks) and all(
                a is b for a, b in zip(blocks, seq.blocks)):
            return seq
        return rx.SeqExpr(tuple(blocks), body, struct_info=sinfo_of(body), span=seq.span)

    def visit_if_(self, node: rx.If) -> rx.Expr:
        """The condition and each branch in its own scope."""
        cond = self.visit_expr(node.cond)
        then = self.visit_with_new_scope(node.true_branch)
        other = self.visit_with_new_scope(node.false_branch)
        if cond is node.cond and then is node.true_branch and other is node.false_branch:
            return node
        return rx.If(cond, then, other, span=node.span)

    # ---- bindings and blocks
    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """The value, re-emitted with its variable."""
        self.reemit_binding(binding, self.visit_expr(binding.value))

    def reemit_binding(self, binding: rx.VarBinding, new_value: rx.Expr) -> None:
        """Emit ``binding`` with its value replaced; the variable is renewed when its struct info
        changes (and remapped at every later use)."""
        var = self.visit_var_def(binding.var)
        if var is binding.var and new_value is binding.value:
            self.builder_.emit_normalized(binding)
            return
        renewed = self.with_struct_info(var, sinfo_of(new_value))
        if renewed is not var:
            var = renewed
            self.var_remap_[binding.var] = var
        self.builder_.emit_normalized(rx.VarBinding(var, new_value, span=binding.span))

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        """The value, re-emitted with its variable and the same struct info."""
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        if var is binding.var and value is binding.value:
            self.builder_.emit_normalized(binding)
            return
        renewed = self.with_struct_info(var, binding.struct_info)
        if renewed is not var:
            var = renewed
            self.var_remap_[binding.var] = var
        self.builder_.emit_normalized(rx.MatchCast(var, value, binding.struct_info, span=binding.span))

    def visit_binding_block_(self, block: rx.BindingBlock) -> rx.BindingBlock:
        """Each binding, into a new block (the same block when nothing changed)."""
        self.builder_.begin_binding_block()
        return self._rewrite_block(block)

    def visit_dataflow_block_(self, block: rx.DataflowBlock) -> rx.BindingBlock:
        """Each binding, into a new dataflow block (the same block when nothing changed)."""
        self.builder_.begin_dataflow_block()
        return self._rewrite_block(block)

    def _rewrite_block(self, block: rx.BindingBlock) -> rx.BindingBlock:
        """Re-emit the bindings of ``block`` into the block just begun."""
        for binding in block.bindings:
            self.visit_binding(binding)
        new = self.builder_.end_block()
        same = len(new.bindings) == len(block.bindings) and all(
            a is b for a, b in zip(new.bindings, block.bindings))
        return block if same else new


# TVM's Python API names: the Py* classes are the user-facing bases, and the decorators register
# them with the C++ side. Here the classes are already Python, so the decorators return them as-is.
PyExprVisitor = ExprVisitor
PyExprMutator = ExprMutator


def visitor(cls: _C) -> _C:
    """``@relax.expr_functor.visitor``: accepted for TVM compatibility; returns the class."""
    return cls


def mutator(cls: _C) -> _C:
    """``@relax.expr_functor.mutator``: accepted for TVM compatibility; returns the class."""
    return cls


# ==================================================================== analyses
class _ExprApplyVisit(ExprVisitor):
    """Calls a function on every expression after its children."""

    def __init__(self, fvisit: Callable[[rx.Expr], Any]) -> None:
        self.fvisit = fvisit

    def visit_expr(self, expr: rx.Expr) -> None:
        """Report ``expr`` after its children."""
        super().visit_expr(expr)
        self.fvisit(expr)


def post_order_visit(expr: rx.Expr, fvisit: Callable[[rx.Expr], Any]) -> None:
    """Call ``fvisit`` on every expression in ``expr`` (uses of variables included), children first."""
    _ExprApplyVisit(fvisit).visit_expr(expr)


def _used_vars(expr: rx.Expr) -> list[rx.Var]:
    """The variables used in ``expr``."""
    out: list[rx.Var] = []
    post_order_visit(expr, lambda e: out.append(e) if isinstance(e, rx.Var) else None)
    return out


def _is_impure_call(expr: rx.Expr, mod: IRModule | None = None) -> bool:
    """True for a call with side effects (impure op, packed function, impure callee; with ``mod``,
    a called PrimFunc writes its outputs and an impure Relax function has effects, as in TVM)."""
    if not isinstance(expr, rx.Call):
        return False
    if isinstance(expr.op, rx.Op):
        return not find_op_def(expr.op).pure
    if isinstance(expr.op, GlobalVar):
        if mod is None or expr.op.name_hint not in mod:
            return False
        callee = mod[expr.op.name_hint]
        return not (isinstance(callee, rx.Function) and callee.is_pure)
    finfo = sinfo_of(expr.op)
    return isinstance(finfo, rx.FuncStructInfo) and not finfo.purity


class _VarUsage(ExprVisitor):
    """Which variables each binding's value uses, and which bindings must stay: those with side
    effects, and match_casts that define symbolic variables (later struct info may use them)."""

    def __init__(self, mod: IRModule | None = None) -> None:
        self.mod = mod
        self.uses: dict[rx.Var, list[rx.Var]] = {}
        self.kept: list[rx.Var] = []
        self.defined: set = set()  # symbolic variables the function parameters define

    def visit_function_(self, func: rx.Function) -> None:
        """Note the symbolic variables the parameters define."""
        for param in func.params:
            self.defined.update(sinfo_vars(param.struct_info))
        super().visit_function_(func)

    def _record(self, binding: rx.VarBinding | rx.MatchCast) -> None:
        """Note what the binding uses and whether it has side effects."""
        self.uses[binding.var] = _used_vars(binding.value)
        found: list[rx.Expr] = []
        post_order_visit(binding.value, lambda e: found.append(e) if _is_impure_call(e, self.mod) else None)
        if found:
            self.kept.append(binding.var)

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        self._record(binding)
        super().visit_var_binding_(binding)

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        self._record(binding)
        if any(v not in self.defined for v in sinfo_vars(binding.struct_info)):
            self.kept.append(binding.var)
        super().visit_match_cast_(binding)


class _UnusedRemover(ExprMutator):
    """Drops the bindings whose variables are not live."""

    def __init__(self, live: set[rx.Var]) -> None:
        super().__init__()
        self.live = live

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        if binding.var in self.live:
            super().visit_var_binding_(binding)

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        if binding.var in self.live:
            super().visit_match_cast_(binding)


def remove_all_unused(func: rx.Expr, mod: IRModule | None = None) -> rx.Expr:
    """``func`` without the bindings whose values are never used (directly or through other
    bindings) by its result; bindings with side effects and match_casts defining symbolic
    variables stay. Empty blocks disappear. ``mod`` lets calls of module functions be judged
    by the callee's purity."""
    usage = _VarUsage(mod)
    usage.visit_expr(func)
    result = func.body.body if isinstance(func, rx.Function) else (
        func.body if isinstance(func, rx.SeqExpr) else func)
    work = _used_vars(result) + usage.kept
    live: set[rx.Var] = set()
    while work:
        var = work.pop()
        if var not in live:
            live.add(var)
            work.extend(usage.uses.get(var, ()))
    return _UnusedRemover(live).visit_expr(func)


class _UseCount(ExprVisitor):
    """How many times each variable is referred to (a definition does not count)."""

    def __init__(self) -> None:
        super().__init__()
        self.count: dict[rx.Var, int] = {}

    def visit_var_(self, var: rx.Var) -> None:
        """One more use of ``var``."""
        self.count[var] = self.count.get(var, 0) + 1

    visit_dataflow_var_ = visit_var_


def use_counts(func: rx.Expr) -> dict[rx.Var, int]:
    """How many times each variable of ``func`` is used (its definitions not counted)."""
    counter = _UseCount()
    counter.visit_expr(func)
    return counter.count
