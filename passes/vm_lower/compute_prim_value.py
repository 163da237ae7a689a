"""ComputePrimValue (TVM's ``relax.transform.ComputePrimValue``): an ``R.prim_value`` of an
expression (``n * m + 1``, ``T.max(n, m) // 2``, ``n > m``, a float literal) cannot be computed by
Relax itself; each becomes a call of a generated host PrimFunc returning it,
``compute_symbolic_expr``, ``compute_symbolic_expr1``..., whose parameters are the expression's
symbolic variables in order of appearance:

    a: R.Prim("int64") = cls.compute_symbolic_expr(R.prim_value(n), R.prim_value(m))

A bound value is replaced in its binding; one nested in another expression (a call's argument, a
tuple field, the function's result) is bound first to ``gv``, ``gv1``... An ``R.prim_value`` of an
integer literal or of a single variable stays (VMShapeLower reads it from the shape heap)."""
from __future__ import annotations

from ...ir import relax as rx
from ...ir import tir
from ...ir.expr_functor import ExprMutator
from ...ir.intrinsics import INTRINSICS
from ...ir.module import GlobalVar, IRModule
from ...ir.node import Map, replace
from ...ir.stmt_functor import substitute, vars_of
from ...ir.struct_info import with_sinfo
from ..infra import ModulePass, PassContext, register_pass

__all__ = ["ComputePrimValue"]

_HOST = Map({"tirx.is_host_func": True})


def _needs_function(pv: rx.PrimValue) -> bool:
    """True for a value Relax cannot hold as it is (anything but an integer literal or a variable)."""
    return not isinstance(pv.value, (tir.IntImm, tir.Var))


class _Mutator(ExprMutator):
    """Replaces the computed prim values of one function by calls of new host PrimFuncs."""

    def __init__(self, mod: IRModule, names: set[str], new_funcs: list) -> None:
        super().__init__(mod)
        self.names, self.new_funcs = names, new_funcs

    def _call(self, pv: rx.PrimValue) -> rx.Call:
        """The call of a new ``compute_symbolic_expr`` PrimFunc for ``pv``."""
        free = vars_of(pv.value)
        params = tuple(tir.Var(v.name, v.dtype) for v in free)
        value = substitute(pv.value, {old: new for old, new in zip(free, params)}) if params else pv.value
        body = tir.Evaluate(tir.Call(value.dtype, INTRINSICS["ret"].op, (value,)))
        func = tir.PrimFunc(params, body, value.dtype, Map(), _HOST)
        name, k = "compute_symbolic_expr", 0
        while name in self.names:
            k += 1
            name = f"compute_symbolic_expr{k}"
        self.names.add(name)
        gv = GlobalVar(name)
        self.new_funcs.append((gv, func))
        args = tuple(with_sinfo(rx.PrimValue(v)) for v in free)
        ret = rx.PrimStructInfo(value.dtype)
        return rx.Call(gv, args, Map(), (), ret)

    def visit_prim_value_(self, pv: rx.PrimValue) -> rx.Expr:
        if not _needs_function(pv):
            return pv
        return self.builder_.emit(self._call(pv), "gv")

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        value = binding.value
        if isinstance(value, rx.PrimValue) and _needs_function(value):
            self.reemit_binding(binding, self._call(value))
            return
        super().visit_var_binding_(binding)


def _merged(seq: rx.SeqExpr) -> rx.SeqExpr:
    """``seq`` with consecutive binding blocks joined (a result's new bindings open a block of
    their own; the text has one), also in ``if`` branches and nested functions."""
    blocks: list[rx.BindingBlock] = []
    for block in seq.blocks:
        block = replace(block, bindings=tuple(_merged_binding(b) for b in block.bindings))
        if blocks and type(block) is rx.BindingBlock and type(blocks[-1]) is rx.BindingBlock:
            blocks[-1] = replace(blocks[-1], bindings=blocks[-1].bindings + block.bindings)
        else:
            blocks.append(block)
    return replace(seq, blocks=tuple(blocks))


def _merged_binding(b: rx.Binding) -> rx.Binding:
    """The binding with the sequences in its value merged."""
    value = b.value
    if isinstance(value, rx.If):
        return replace(b, value=replace(value, true_branch=_merged(value.true_branch),
                                        false_branch=_merged(value.false_branch)))
    if isinstance(value, rx.Function) and isinstance(value.body, rx.SeqExpr):
        return replace(b, value=replace(value, body=_merged(value.body)))
    return b


class ComputePrimValue(ModulePass):
    """Compute symbolic ``R.prim_value`` expressions by generated host PrimFuncs."""

    opt_level = 0

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        names = {gv.name_hint for gv in mod.get_global_vars()}
        new_funcs: list = []
        for gv, func in mod.functions_items():
            if not isinstance(func, rx.Function):
                continue
            before = len(new_funcs)
            new = _Mutator(mod, names, new_funcs).visit_expr(func)
            if len(new_funcs) != before:
                mod.update_func(gv, replace(new, body=_merged(new.body)) if isinstance(new.body, rx.SeqExpr) else new)
        for gv, func in new_funcs:
            mod.update_func(gv, func)
        self.stats["computed values"] += len(new_funcs)
        return mod


register_pass("ComputePrimValue", ComputePrimValue)
