"""LegalizeOps (TVM's ``relax.transform.LegalizeOps``): every call of a Relax op with a
legalization becomes a ``R.call_tir`` of a private PrimFunc generated from its topi compute.

The legalizations are the op registry's ``OpDef.legalize`` entries (declared with each op in
``tvmlite.ops``); ``customize_legalize_map`` overrides them per op name. A call is left
as it is when its op has none, or when the shape of an argument or of the result is unknown (the
broadcasting binary ops and matmul also take a result of unknown shape: their kernels compute it).
Relations between symbolic sizes that a kernel relies on and that cannot be proved become
``assert`` statements at the top of its PrimFunc, whose messages name the function and binding.
Generated functions are named after the compute (``add``, ``matmul``, ``transpose``...), with
``add1``, ``add2``... when a name is taken; identical functions are shared.

A call structurally equal to one legalized before up to its arguments (``legalize_key.call_key``)
reuses that registry legalization's call_tir on its own arguments: the PrimFunc it would generate is the
same one, which the sharing would pick. A legalization is reused only when its call_tir passes
each argument of the call as it is (once; what a legalization emits, such as tuple fields, is not
one) and its PrimFunc asserts nothing (run-time checks name their binding)."""
from __future__ import annotations

import warnings
from typing import Any

from ..ir import relax as rx
from ..ir.arith import can_prove_equal
from ..ir.expr_functor import ExprMutator
from ..ir.stmt_functor import statements_of
from ..ir import tir
from ..ir.module import GlobalVar, IRModule
from ..ir.struct_info import has_known_shapes, sinfo_of
from ..ops import LegalizeFunc, find_op_def, legalize_site
from .infra import ModulePass, PassContext, register_pass
from .legalize_key import arg_positions, call_key, flat_args

__all__ = ["LegalizeOps"]

# Calls of functions rather than computations: nothing to legalize and no warning (as TVM).
_CALLS = frozenset({"relax.call_tir", "relax.call_tir_inplace", "relax.call_dps_packed", "relax.call_pure_packed"})


def _provably_same(a: rx.StructInfo, b: rx.StructInfo) -> bool:
    """True when two tensor (or tuple) struct infos have one dtype and provably equal dims."""
    if isinstance(a, rx.TupleStructInfo) and isinstance(b, rx.TupleStructInfo):
        return len(a.fields) == len(b.fields) and all(_provably_same(x, y) for x, y in zip(a.fields, b.fields))
    if not (isinstance(a, rx.TensorStructInfo) and isinstance(b, rx.TensorStructInfo)):
        return False
    return (a.dtype == b.dtype and a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape)
            and all(can_prove_equal(x, y) for x, y in zip(a.shape, b.shape)))


def _declare_call_sinfo(new: rx.Expr, call: rx.Call) -> rx.Expr:
    """A call_tir declaring the legalized call's own struct info when both agree (the TE shapes
    may spell a size differently, ``n + m`` for ``m + n``): bindings then keep their annotation."""
    if not (isinstance(new, rx.Call) and isinstance(new.op, rx.Op) and new.op.name == "relax.call_tir"):
        return new
    want, got = sinfo_of(call), new.sinfo_args[0]
    if want is got or not _provably_same(want, got):
        return new
    return rx.Call(new.op, new.args, new.attrs, (want,), span=new.span)


class _Legalizer(ExprMutator):
    """Rewrites op calls bottom-up; the builder collects the generated PrimFuncs."""

    def __init__(self, mod: IRModule, custom: dict[str, LegalizeFunc], warn: bool, stats: Any) -> None:
        super().__init__(mod)
        self.custom = custom
        self.warn = warn
        self.stats = stats
        self.func_name = ""
        # call_key -> (callee, positions of its inputs among the flat arguments), or None when
        # the legalization of that key is not reusable.
        self._reuse: dict[Any, tuple[GlobalVar, list[int], rx.Call] | None] = {}
        self._keyed: list[rx.Call] = []

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """Legalize the binding's value; run-time checks name this binding in their messages."""
        with legalize_site(self.func_name, binding):
            super().visit_var_binding_(binding)

    def visit_call_(self, call: rx.Call) -> rx.Expr:
        """A legalized call (after its arguments), or the call itself."""
        call = self.visit_expr_post_order(call)
        if not isinstance(call, rx.Call) or not isinstance(call.op, rx.Op):
            return call
        name = call.op.name
        func = self.custom.get(name) or find_op_def(call.op).legalize
        if func is None:
            if self.warn and name not in _CALLS:
                warnings.warn(f"LegalizeOps: no legalization for {name}", stacklevel=2)
            return call
        if not all(has_known_shapes(sinfo_of(a)) for a in call.args):
            return call  # shapes are needed to generate loops
        if any(isinstance(sinfo_of(a), rx.DTensorStructInfo) for a in call.args):
            return call  # a global view of distributed tensors: no single-device kernel computes it
        if not has_known_shapes(sinfo_of(call)) and not getattr(func, "handles_unknown_result", False):
            return call  # the result's shape too, unless the legalization computes it
        # A custom legalization may read more of the call than the key says: never reused.
        key = call_key(call) if name not in self.custom else None
        reuse = self._reuse.get(key) if key is not None else None
        if reuse is not None:
            gv, positions, template = reuse
            flat = flat_args(call.args)
            new = rx.Call(template.op, (gv, rx.Tuple(tuple(flat[i] for i in positions))) + template.args[2:],
                          template.attrs, template.sinfo_args, span=template.span)
        else:
            new = func(self.builder_, call)
            if new is call:
                return call
            if key is not None and key not in self._reuse:
                self._reuse[key] = self._reusable(call, new)
                self._keyed.append(call)  # a symbolic size in a key counts by id: keep it alive
        self.stats["legalized"] += 1
        new = self.builder_.normalize(_declare_call_sinfo(new, call))
        # A legalization may produce other op calls: legalize those too.
        if isinstance(new, rx.Call) and isinstance(new.op, rx.Op) and new.op.name not in _CALLS:
            return self.visit_call_(new)
        return new

    def _reusable(self, call: rx.Call, new: rx.Expr) -> tuple[GlobalVar, list[int], rx.Call] | None:
        """What a call of the same key reuses of ``new``, the legalization of ``call`` (None when
        it is not reusable, see the module doc)."""
        if not (isinstance(new, rx.Call) and isinstance(new.op, rx.Op)
                and new.op.name == "relax.call_tir" and isinstance(new.args[0], GlobalVar)
                and isinstance(new.args[1], rx.Tuple)):
            return None
        if len(new.args) > 2 and not (isinstance(new.args[2], rx.ShapeExpr)
                                      and all(isinstance(v, tir.IntImm) for v in new.args[2].values)):
            return None  # tir_vars in the caller's sizes
        positions = arg_positions(call, new.args[1].fields)
        if positions is None:
            return None
        prim = self.builder_.get()[new.args[0]]
        # Run-time checks (asserts, statements only) name their binding: never shared.
        if not isinstance(prim, tir.PrimFunc) or any(isinstance(s, tir.AssertStmt) for s in statements_of(prim.body)):
            return None
        return new.args[0], positions, new


class LegalizeOps(ModulePass):
    """Lower Relax op calls to ``R.call_tir`` of generated PrimFuncs."""

    opt_level = 0

    def __init__(self, customize_legalize_map: dict[str, LegalizeFunc] | None = None,
                 enable_warning: bool = False) -> None:
        super().__init__()
        self.customize_legalize_map = dict(customize_legalize_map or {})
        self.enable_warning = enable_warning

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Legalize every Relax function; generated PrimFuncs join the module."""
        rewriter = _Legalizer(mod, self.customize_legalize_map, self.enable_warning, self.stats)
        for gv, func in mod.functions_items():
            if isinstance(func, rx.Function):
                rewriter.func_name = gv.name_hint
                new = rewriter.visit_expr(func)
                if new is not func:
                    rewriter.builder_.update_func(gv, new)
        return rewriter.builder_.get()


register_pass("LegalizeOps", LegalizeOps)
