"""StaticPlanBlockMemory (TVM's ``relax.transform.StaticPlanBlockMemory``): the tensors
``R.builtin.alloc_tensor`` allocates inside a function share storages when their lives do not
overlap.

TVM's algorithm: every allocation is a *storage token* (bytes, dtype). A first walk counts the
uses of each token by kernel calls (a PrimFunc of the module, an ``R.call_packed`` function or
``R.vm.call_tir_dyn``: they keep no reference to their arguments), following the token through
variable aliases, tuples, tuple items and ``R.reshape`` views; a token reaching anything else (the function's result,
a Relax function call, an op, an ``if`` result, a closure) is *external* and keeps its
``R.builtin.alloc_tensor``. A second walk, in program order, gives each planned token a storage:
a free storage of the same dtype whose size is within a factor of 16 (the smallest one at least
as large, else the largest smaller one, which grows), or a new ``R.memory.alloc_storage`` placed
before its first tensor; a token is freed after the call that uses it last. Symbolic sizes
(``4 * n``) reuse only storages of the same size expression. The planned tensors become
``R.memory.alloc_tensor(storage, R.prim_value(0), shape, dtype, R.prim_value(0))``."""
from __future__ import annotations

from typing import Any, Iterable

from ...ir import relax as rx
from ...ir import tir
from ...ir.expr_functor import post_order_visit
from ...ir.module import IRModule
from ...ir.struct_info import with_sinfo
from ...ir.structural import structural_equal
from ..infra import FunctionPass, PassContext, register_pass
from .common import NameSupply, call, fresh, is_op, is_prim_func_call, nbytes, rewrite_seq, zero

__all__ = ["StaticPlanBlockMemory"]

_MATCH_RANGE = 16  # a storage serves requests from 1/16 to 16 times its size, as TVM's


class _Token:
    """One planned allocation."""

    __slots__ = ("size", "dtype", "uses", "external", "storage")

    def __init__(self, size: tir.PrimExpr, dtype: str) -> None:
        self.size, self.dtype = size, dtype
        self.uses = 0
        self.external = False
        self.storage: "_Storage | None" = None


class _Storage:
    """One ``R.memory.alloc_storage``: its variable and its (largest requested) size."""

    __slots__ = ("var", "size", "dtype", "scope")

    def __init__(self, var: rx.Var, size: tir.PrimExpr, dtype: str, scope: Any) -> None:
        self.var, self.size, self.dtype, self.scope = var, size, dtype, scope


def _tokens(value: Any) -> list[_Token]:
    """The tokens of a token structure (a token list, or a tuple of structures)."""
    if isinstance(value, tuple):
        return [t for v in value for t in _tokens(v)]
    return list(value or ())


def _is_kernel_call(value: rx.Expr, mod: IRModule) -> bool:
    """A call that keeps no reference to its arguments (TVM: PrimFunc, extern function, call_tir_dyn)."""
    return is_prim_func_call(value, mod) or (isinstance(value, rx.Call) and isinstance(value.op, rx.ExternFunc)) \
        or is_op(value, "relax.vm.call_tir_dyn")


def _kernel_args(value: rx.Call) -> tuple[rx.Expr, ...]:
    """The arguments of a kernel call (call_tir_dyn: the fields of its tuple)."""
    if is_op(value, "relax.vm.call_tir_dyn") and isinstance(value.args[1], rx.Tuple):
        return value.args[1].fields
    return value.args


class _Init:
    """The first walk: tokens, their uses, and which are external."""

    def __init__(self, mod: IRModule) -> None:
        self.mod = mod
        self.of_var: dict[int, Any] = {}  # id(var) -> token structure
        self.of_alloc: dict[int, _Token] = {}  # id(alloc binding) -> token

    def structure(self, expr: rx.Expr) -> Any:
        """The tokens an expression's value holds."""
        if isinstance(expr, rx.Var):
            return self.of_var.get(id(expr))
        if isinstance(expr, rx.Tuple):
            return tuple(self.structure(f) for f in expr.fields)
        return None

    def discard(self, expr: rx.Expr) -> None:
        """Mark the tokens reachable from ``expr`` (any subexpression) external."""
        for node in _vars_in(expr):
            for t in _tokens(self.of_var.get(id(node))):
                t.external = True

    def seq(self, seq: rx.SeqExpr) -> None:
        """Walk the bindings, then the (escaping) result."""
        for block in seq.blocks:
            for b in block.bindings:
                self.binding(b)
        self.discard(seq.body)

    def binding(self, b: rx.Binding) -> None:
        """One binding."""
        value, vid = b.value, id(b.var)
        if isinstance(b, rx.MatchCast):
            self.discard(value)
        elif is_op(value, "relax.builtin.alloc_tensor"):
            shape, dtype = value.args[0], value.args[1]
            if isinstance(shape, rx.ShapeExpr) and isinstance(dtype, rx.DataTypeImm):
                token = _Token(nbytes(shape.values, dtype.value), dtype.value)
                self.of_alloc[id(b)] = token
                self.of_var[vid] = [token]
        elif isinstance(value, rx.Var):
            self.of_var[vid] = self.of_var.get(id(value))
        elif is_op(value, "relax.reshape") and isinstance(value.args[0], rx.Var):
            self.of_var[vid] = self.of_var.get(id(value.args[0]))  # a view: the same memory, the same tokens
        elif isinstance(value, rx.Tuple):
            self.of_var[vid] = self.structure(value)
            for f in value.fields:
                if not isinstance(f, rx.Var):
                    self.discard(f)
        elif isinstance(value, rx.TupleGetItem) and isinstance(value.tuple_value, rx.Var):
            whole = self.of_var.get(id(value.tuple_value))
            self.of_var[vid] = whole[value.index] if isinstance(whole, tuple) else whole
        elif _is_kernel_call(value, self.mod):
            for a in _kernel_args(value):
                if isinstance(a, rx.Var):
                    for t in _tokens(self.of_var.get(id(a))):
                        t.uses += 1
                else:
                    self.discard(a)
        elif isinstance(value, rx.If):
            self.discard(value.cond)
            self.seq(value.true_branch)
            self.seq(value.false_branch)
        else:
            self.discard(value)


def _vars_in(expr: rx.Expr) -> list[rx.Var]:
    """The Relax variables used anywhere in ``expr``."""
    found: list[rx.Var] = []
    post_order_visit(expr, lambda e: found.append(e) if isinstance(e, rx.Var) else None)
    return found


class _Pool:
    """The free storages, per dtype."""

    def __init__(self) -> None:
        self.free: list[_Storage] = []

    def take(self, size: tir.PrimExpr, dtype: str) -> _Storage | None:
        """A free storage for ``size`` bytes of ``dtype`` (TVM's choice), removed from the pool."""
        same = [s for s in self.free if s.dtype == dtype]
        if not isinstance(size, tir.IntImm):
            found = next((s for s in same if structural_equal(s.size, size)), None)
        else:
            n = size.value
            const = [s for s in same if isinstance(s.size, tir.IntImm)]
            bigger = sorted((s for s in const if n <= s.size.value <= n * _MATCH_RANGE), key=lambda s: s.size.value)
            smaller = sorted((s for s in const if n // _MATCH_RANGE <= s.size.value < n),
                             key=lambda s: -s.size.value)
            found = bigger[0] if bigger else smaller[0] if smaller else None
            if found is not None and found.size.value < n:
                found.size = size  # the storage grows to the larger request
        if found is not None:
            self.free.remove(found)
        return found


class _Allocate:
    """The second walk: storages for planned tokens, freed after their last use."""

    def __init__(self, init: _Init, names: NameSupply) -> None:
        self.init, self.names = init, names
        self.pool = _Pool()
        self.first_use: dict[int, _Storage] = {}  # id(alloc binding) -> the storage it creates

    def seq(self, seq: rx.SeqExpr, pool: _Pool) -> None:
        """Walk the bindings of one sequence with ``pool``'s free storages."""
        for block in seq.blocks:
            for b in block.bindings:
                self.binding(b, pool)

    def binding(self, b: rx.Binding, pool: _Pool) -> None:
        """Allocate at an alloc_tensor, free after a kernel call's last use."""
        token = self.init.of_alloc.get(id(b))
        value = b.value
        if token is not None:
            if token.external:
                return
            storage = pool.take(token.size, token.dtype)
            if storage is None:
                var = fresh(self.names("storage"), rx.ObjectStructInfo())
                storage = _Storage(var, token.size, token.dtype, value.args[3])
                self.first_use[id(b)] = storage
            token.storage = storage
            if token.uses == 0:
                pool.free.append(storage)
        elif _is_kernel_call(value, self.init.mod):
            for a in _kernel_args(value):
                for t in _tokens(self.init.of_var.get(id(a))) if isinstance(a, rx.Var) else ():
                    if t.external or t.storage is None:
                        continue
                    t.uses -= 1
                    if t.uses == 0:
                        pool.free.append(t.storage)
        elif isinstance(value, rx.If):
            for branch in (value.true_branch, value.false_branch):
                inner = _Pool()
                inner.free = list(pool.free)  # storages free before the if; what a branch frees stays in it
                self.seq(branch, inner)
                for s in pool.free[:]:
                    if s not in inner.free:
                        pool.free.remove(s)


class _Emit:
    """Rewrites the planned allocations."""

    def __init__(self, init: _Init, alloc: _Allocate) -> None:
        self.init, self.alloc = init, alloc

    def __call__(self, b: rx.Binding) -> Iterable[rx.Binding]:
        token = self.init.of_alloc.get(id(b))
        if token is None or token.external or token.storage is None:
            return (b,)
        out: list[rx.Binding] = []
        storage = self.alloc.first_use.get(id(b))
        if storage is not None:
            out.append(rx.VarBinding(storage.var, call(
                "relax.memory.alloc_storage", with_sinfo(rx.ShapeExpr((storage.size,))), zero(), storage.scope,
                with_sinfo(rx.DataTypeImm(storage.dtype)))))
        shape, dtype = b.value.args[0], b.value.args[1]
        out.append(rx.VarBinding(b.var, call("relax.memory.alloc_tensor", token.storage.var, zero(), shape, dtype,
                                             zero())))
        return out


class StaticPlanBlockMemory(FunctionPass):
    """Share storages between the function's internal tensors whose lives do not overlap."""

    opt_level = 0

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        self._names = NameSupply()  # storage names count across the module's functions, as TVM's do
        return super().transform(mod, ctx)

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        init = _Init(mod)
        init.seq(func.body)
        if not init.of_alloc:
            return func
        alloc = _Allocate(init, self._names)
        alloc.seq(func.body, alloc.pool)
        body = rewrite_seq(func.body, _Emit(init, alloc))
        self.stats["storages"] += len(alloc.first_use)
        self.stats["planned tensors"] += sum(1 for t in init.of_alloc.values() if t.storage is not None)
        return rx.Function(func.params, body, func.ret_struct_info, func.is_pure, func.attrs, span=func.span)


register_pass("StaticPlanBlockMemory", StaticPlanBlockMemory)
