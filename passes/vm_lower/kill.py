"""KillAfterLastUse (TVM's ``relax.transform.KillAfterLastUse``): after trivial bindings are
removed (CanonicalizeBindings), each storage (``R.memory.alloc_storage``) and each tensor a call
or a tuple item gives (placed in a storage, a reshape view, a packed function's result) is dropped
right after the binding that uses it last: ``R.memory.kill_storage(s)`` / ``R.memory.kill_tensor(t)``;
a tuple a call returns gets ``R.vm.kill_object``, as TVM's. A variable whose last use is inside
an ``if`` branch of another sequence than its own, or that is part of a sequence's result, is
not killed. The kill drops the function's reference: the memory goes once nothing else (a
tensor placed in the storage, a tuple) refers to it."""
from __future__ import annotations

from typing import Iterable

from ...ir import relax as rx
from ...ir.expr_functor import post_order_visit
from ...ir.module import IRModule
from ..canonicalize import canonicalize_bindings
from ..infra import FunctionPass, PassContext, register_pass
from .common import call, fresh, is_op, rewrite_seq

__all__ = ["KillAfterLastUse"]


def _kill_op(b: rx.Binding) -> str | None:
    """The op that kills the binding's variable: a storage's, a tensor's (any tensor a call or a
    tuple item gives: also views and packed results), an object's for a tuple a call returns."""
    value = b.value
    if not isinstance(b, rx.VarBinding) or not isinstance(value, (rx.Call, rx.TupleGetItem)):
        return None
    if is_op(value, "relax.memory.alloc_storage"):
        return "relax.memory.kill_storage"
    sinfo = b.var.struct_info
    if isinstance(sinfo, rx.TensorStructInfo):
        return "relax.memory.kill_tensor"
    if isinstance(sinfo, rx.TupleStructInfo) and sinfo.fields and isinstance(value, rx.Call):
        return "relax.vm.kill_object"
    return None


def _direct_vars(expr: rx.Expr) -> list[rx.Var]:
    """The variables ``expr`` uses, not counting those inside nested sequences (if branches)."""
    found: list[rx.Var] = []
    if isinstance(expr, rx.If):
        post_order_visit(expr.cond, lambda e: found.append(e) if isinstance(e, rx.Var) else None)
        return found
    post_order_visit(expr, lambda e: found.append(e) if isinstance(e, rx.Var) else None)
    return found


class _LastUse:
    """Where each variable is defined and used last: (id of its sequence, binding)."""

    def __init__(self) -> None:
        self.defined: dict[int, tuple[int, int]] = {}  # id(var) -> (id(seq), order of definition)
        self.kind: dict[int, str] = {}  # id(var) -> its kill op
        self.last: dict[int, tuple[int, rx.Binding]] = {}  # id(var) -> (id(seq), binding)
        self.escaping: set[int] = set()
        self.vars: dict[int, rx.Var] = {}
        self.order = 0

    def seq(self, seq: rx.SeqExpr) -> None:
        """Record the sequence's definitions and uses, then its result (which escapes)."""
        for block in seq.blocks:
            for b in block.bindings:
                for v in _direct_vars(b.value):
                    self.last[id(v)] = (id(seq), b)
                if isinstance(b.value, rx.If):
                    self.seq(b.value.true_branch)
                    self.seq(b.value.false_branch)
                    for v in _direct_vars(b.value):  # the condition: used before the branches ran
                        self.last.setdefault(id(v), (id(seq), b))
                self.order += 1
                self.defined[id(b.var)] = (id(seq), self.order)
                self.vars[id(b.var)] = b.var
                kind = _kill_op(b)
                if kind is not None:
                    self.kind[id(b.var)] = kind
        post_order_visit(seq.body, lambda e: self.escaping.add(id(e)) if isinstance(e, rx.Var) else None)

    def kills_after(self) -> dict[int, list[rx.Var]]:
        """id(binding) -> the variables to kill after it, in order of definition."""
        after: dict[int, list[tuple[int, rx.Var]]] = {}
        for vid, op in self.kind.items():
            if vid in self.escaping or vid not in self.last:
                continue
            seq_id, binding = self.last[vid]
            if self.defined[vid][0] != seq_id:
                continue
            after.setdefault(id(binding), []).append((self.defined[vid][1], self.vars[vid]))
        return {b: [v for _, v in sorted(vs, key=lambda x: x[0])] for b, vs in after.items()}


class KillAfterLastUse(FunctionPass):
    """Kill storages and tensors after their last use."""

    opt_level = 0

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        func, _ = canonicalize_bindings(func, mod)
        uses = _LastUse()
        uses.seq(func.body)
        kills = uses.kills_after()
        if not kills:
            return func

        def rewrite(b: rx.Binding) -> Iterable[rx.Binding]:
            out = [b]
            for v in kills.get(id(b), ()):
                op = uses.kind[id(v)]
                out.append(rx.VarBinding(fresh("_", rx.TupleStructInfo(())), call(op, v)))
                self.stats["kills"] += 1
            return out

        body = rewrite_seq(func.body, rewrite)
        return rx.Function(func.params, body, func.ret_struct_info, func.is_pure, func.attrs, span=func.span)


register_pass("KillAfterLastUse", KillAfterLastUse)
