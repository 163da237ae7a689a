"""What the VM lowering passes share: walking a function's binding sequences (into ``if``
branches and nested functions) and building the lowered calls."""
from __future__ import annotations

from typing import Callable, Iterable

from ...ir import relax as rx
from ...ir import tir
from ...ir.arith import prod
from ...ir.dtype import parse_dtype
from ...ir.module import GlobalVar, IRModule
from ...ir.node import replace
from ...ir.op import make_call

# A binding -> the bindings replacing it (the seq rewriter has already rewritten nested seqs).
BindingRewrite = Callable[[rx.Binding], Iterable[rx.Binding]]


def rewrite_seq(seq: rx.SeqExpr, rewrite: BindingRewrite) -> rx.SeqExpr:
    """``seq`` with every binding (also those inside ``if`` branches and nested functions, first)
    replaced by what ``rewrite`` gives for it."""
    blocks = []
    changed = False
    for block in seq.blocks:
        out: list[rx.Binding] = []
        for binding in block.bindings:
            inner = rewrite_nested(binding, rewrite)
            new = list(rewrite(inner))
            changed |= inner is not binding or len(new) != 1 or new[0] is not binding
            out.extend(new)
        blocks.append(replace(block, bindings=tuple(out)))
    return replace(seq, blocks=tuple(blocks)) if changed else seq


def rewrite_nested(binding: rx.Binding, rewrite: BindingRewrite) -> rx.Binding:
    """The binding with the sequences nested in its value (if branches, functions) rewritten."""
    value = binding.value
    if isinstance(value, rx.If):
        then, other = rewrite_seq(value.true_branch, rewrite), rewrite_seq(value.false_branch, rewrite)
        if then is value.true_branch and other is value.false_branch:
            return binding
        return replace(binding, value=replace(value, true_branch=then, false_branch=other))
    if isinstance(value, rx.Function):
        body = rewrite_seq(value.body, rewrite)
        return binding if body is value.body else replace(binding, value=replace(value, body=body))
    return binding


def is_op(expr: rx.Expr, *names: str) -> bool:
    """True for a call of one of the ops ``names``."""
    return isinstance(expr, rx.Call) and isinstance(expr.op, rx.Op) and expr.op.name in names


def is_prim_func_call(call: rx.Expr, mod: IRModule) -> bool:
    """True for a direct call of a PrimFunc of ``mod`` (``cls.f(x, out)``)."""
    if not isinstance(call, rx.Call) or not isinstance(call.op, GlobalVar):
        return False
    return call.op.name_hint in mod and isinstance(mod[call.op.name_hint], tir.PrimFunc)


def i64(value: int) -> tir.IntImm:
    """An int64 literal."""
    return tir.IntImm("int64", value)


def zero() -> rx.PrimValue:
    """``R.prim_value(0)`` (device and offset arguments)."""
    return rx.PrimValue(i64(0))


def nbytes(shape: tuple, dtype: str) -> tir.PrimExpr:
    """The bytes of a tensor: its element count times the element size (``4 * n``)."""
    parsed = parse_dtype(dtype)
    size = (parsed.bits * parsed.lanes + 7) // 8
    count = prod(shape)
    if isinstance(count, tir.IntImm):
        return i64(count.value * size)
    return tir.Mul(i64(size), count) if size != 1 else count  # TVM's order: ``4 * n``

# The struct info of a call that returns nothing (TVM's ``R.Tuple()``).
VOID = rx.TupleStructInfo(())


def call_packed(name: str, *args: rx.Expr, ret: rx.StructInfo = VOID) -> rx.Call:
    """``R.call_packed(name, *args, sinfo_args=(ret,))``: a call of the VM's packed function ``name``."""
    return rx.Call(rx.ExternFunc(name), tuple(args), sinfo_args=(ret,), struct_info=ret)


def call(name: str, *args: rx.Expr, sinfo_args: tuple = ()) -> rx.Call:
    """A call of a registered op with inferred struct info."""
    return make_call(name, args, sinfo_args=sinfo_args)


def fresh(name: str, sinfo: rx.StructInfo) -> rx.Var:
    """A new variable."""
    return rx.Var(name, sinfo)


class NameSupply:
    """Names as TVM's name supply gives them: ``alloc``, ``alloc1``, ``alloc2``..."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def __call__(self, base: str) -> str:
        n = self.counts.get(base, 0)
        self.counts[base] = n + 1
        return base if n == 0 else f"{base}{n}"
