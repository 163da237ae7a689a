"""CallTIRRewrite (TVM's ``relax.transform.CallTIRRewrite``): destination-passing calls become
explicit allocations and plain calls. ``y = R.call_tir(cls.f, (x,), out_sinfo=...)`` becomes

    alloc = R.builtin.alloc_tensor(R.shape([...]), R.dtype(...), R.prim_value(0), R.str("global"))
    cls.f(x, alloc)
    y = alloc

``tir_vars`` make the call ``R.vm.call_tir_dyn(cls.f, (x, alloc, R.shape([...])))``,
``R.call_dps_packed("g", ...)`` an ``R.call_packed("g", x, alloc)``, and ``call_tir_inplace``
writes into its in-place inputs (only the other outputs are allocated)."""
from __future__ import annotations

from typing import Iterable

from ...ir import relax as rx
from ...ir.module import IRModule
from ...ir.node import Map
from ...ir.expr_functor import post_order_visit
from ...ir.struct_info import collect_vars, sinfo_of, with_sinfo
from ..infra import FunctionPass, PassContext, register_pass
from .common import VOID, NameSupply, call, fresh, is_op, rewrite_seq, zero

__all__ = ["CallTIRRewrite"]

_DPS_OPS = ("relax.call_tir", "relax.call_tir_inplace", "relax.call_dps_packed", "relax.call_tir_with_grad")


def _alloc_tensor(sinfo: rx.TensorStructInfo) -> rx.Call:
    """``R.builtin.alloc_tensor`` of one output."""
    return call("relax.builtin.alloc_tensor", with_sinfo(rx.ShapeExpr(tuple(sinfo.shape))),
                with_sinfo(rx.DataTypeImm(sinfo.dtype)), zero(), with_sinfo(rx.StringImm("global")))


def _inputs(args: rx.Expr) -> list[rx.Expr]:
    """The inputs of a destination-passing call: a tuple's fields, or each field of a tuple value."""
    if isinstance(args, rx.Tuple):
        return list(args.fields)
    sinfo = sinfo_of(args)
    if isinstance(sinfo, rx.TupleStructInfo):
        return [with_sinfo(rx.TupleGetItem(args, i)) for i in range(len(sinfo.fields))]
    return [args]


class _Rewriter:
    """Rewrites the destination-passing bindings of one module, naming allocations module-wide."""

    def __init__(self) -> None:
        self.names = NameSupply()
        self.defined: set[int] = set()  # the symbolic sizes of the function being rewritten with a definition

    def __call__(self, binding: rx.Binding) -> Iterable[rx.Binding]:
        value = binding.value
        if not isinstance(binding, rx.VarBinding) or not is_op(value, *_DPS_OPS):
            return (binding,)
        out = value.sinfo_args[0]
        outs = list(out.fields) if isinstance(out, rx.TupleStructInfo) else [out]
        if not all(isinstance(o, rx.TensorStructInfo) and o.shape is not None for o in outs):
            return (binding,)  # outputs of unknown shape cannot be allocated ahead of the call
        if any(id(v) not in self.defined for o in outs for v in collect_vars(o, [])):
            return (binding,)  # a size only the inputs' shapes tell: the VM reads it at the call
        inplace = tuple(value.attrs["inplace_indices"]) if value.op.name == "relax.call_tir_inplace" else None
        inputs = _inputs(value.args[1])
        bindings: list[rx.Binding] = []
        results: list[rx.Expr] = []
        fresh_outs: list[rx.Var] = []
        for k, o in enumerate(outs):
            if inplace is not None and inplace[k] >= 0:
                results.append(inputs[inplace[k]])
                continue
            var = fresh(self.names("alloc"), o)
            bindings.append(rx.VarBinding(var, _alloc_tensor(o)))
            fresh_outs.append(var)
            results.append(var)
        if value.op.name == "relax.call_dps_packed":
            call_var = fresh("_", rx.ObjectStructInfo())
        else:  # printed as a bare call; the name is what the VM's error notes say was being computed
            call_var = fresh(binding.var.name_hint, VOID)
        bindings.append(rx.VarBinding(call_var, self._call(value, inputs, fresh_outs)))
        result = results[0] if not isinstance(out, rx.TupleStructInfo) else with_sinfo(rx.Tuple(tuple(results)))
        bindings.append(rx.VarBinding(binding.var, result))
        return bindings

    @staticmethod
    def _call(value: rx.Call, inputs: list[rx.Expr], outs: list[rx.Var]) -> rx.Call:
        """The plain call on inputs and outputs."""
        func, args = value.args[0], (*inputs, *outs)
        if value.op.name == "relax.call_dps_packed":
            obj = rx.ObjectStructInfo()
            return rx.Call(func, args, Map(), (obj,), obj)
        if len(value.args) > 2:  # tir_vars: the symbolic values the kernel takes after its buffers
            return call("relax.vm.call_tir_dyn", func, with_sinfo(rx.Tuple((*args, value.args[2]))))
        return rx.Call(func, args, Map(), (), VOID)


def _defined_sizes(func: rx.Function) -> set[int]:
    """The symbolic sizes that parameters (also of nested functions) and match_casts define."""
    found: list = []
    for p in func.params:
        collect_vars(p.struct_info, found)

    def visit(e: rx.Expr) -> None:
        if isinstance(e, rx.Function):
            for p in e.params:
                collect_vars(p.struct_info, found)
        elif isinstance(e, rx.SeqExpr):
            for block in e.blocks:
                for b in block.bindings:
                    if isinstance(b, rx.MatchCast):
                        collect_vars(b.struct_info, found)

    post_order_visit(func.body, visit)
    return {id(v) for v in found}


class CallTIRRewrite(FunctionPass):
    """Allocate the outputs of destination-passing calls explicitly and call the kernels on them."""

    opt_level = 0

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        self._rewriter = _Rewriter()  # names count across the module's functions, as TVM's do
        return super().transform(mod, ctx)

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        self._rewriter.defined = _defined_sizes(func)
        body = rewrite_seq(func.body, self._rewriter)
        return func if body is func.body else rx.Function(func.params, body, func.ret_struct_info, func.is_pure,
                                                          func.attrs, span=func.span)


register_pass("CallTIRRewrite", CallTIRRewrite)
