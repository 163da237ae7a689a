"""Registration and shared helpers of the legalization functions.

A legalization function takes the BlockBuilder of the rewrite and a call of its op, and returns
the replacement (usually ``bb.call_te(topi_fn, ...)``, a ``R.call_tir`` of a new PrimFunc), or
the call itself to leave it. It lives in the op registry's ``OpDef.legalize`` slot: the one
table of legalizations."""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from typing import Any, Callable, Iterator, Sequence, Union

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, as_dtype, can_prove_equal, can_prove_ge, format_expr, format_shape, is_const_int
from ..ir.block_builder import BlockBuilder
from ..ir.node import replace
from ..ir.op import get_op_def
from ..ir.op_api import call_tir
from ..ir.regions import infer_access_regions
from ..ir.struct_info import sinfo_of
from ..ir.tir_pattern import analyze_op_pattern
from ..te.call_te import gen_call_tir_inputs

__all__ = ["LegalizeFunc", "register_legalize", "call_topi", "scalar_const", "tuple_fields", "prim_values",
           "Check", "legalize_site", "site_text", "call_te_checked", "require_equal", "require_broadcast",
           "require_le", "require_indices", "dim_text", "arg_text", "shape_text"]

LegalizeFunc = Callable[[BlockBuilder, rx.Call], rx.Expr]


def register_legalize(op_name: str, legal_func: LegalizeFunc | None = None) -> Any:
    """Set ``legal_func`` as the legalization of op ``op_name`` (usable as a decorator)."""

    def add(f: LegalizeFunc) -> LegalizeFunc:
        get_op_def(op_name).legalize = f
        return f

    return add(legal_func) if legal_func is not None else add


def call_topi(te_func: Callable[..., Any], primfunc_name: str | None = None) -> LegalizeFunc:
    """The legalization passing the call's arguments to ``te_func`` (ops without attributes)."""
    name = primfunc_name or te_func.__name__
    return lambda bb, call: bb.call_te(te_func, *call.args, primfunc_name_hint=name)


def scalar_const(expr: rx.Expr) -> Any:
    """A rank-0 constant as a TIR literal of its dtype (so it is inlined, not passed); other
    expressions unchanged."""
    if isinstance(expr, rx.Constant) and expr.data.ndim == 0:
        value = expr.data[()].item()
        dtype = sinfo_of(expr).dtype
        if dtype.startswith(("float", "bfloat")):
            return tir.FloatImm(dtype, float(value))
        return tir.IntImm(dtype, int(value))
    return expr


def python_scalar(expr: rx.Expr) -> Any:
    """A rank-0 constant's Python value; other expressions unchanged."""
    if isinstance(expr, rx.Constant) and expr.data.ndim == 0:
        return np.asarray(expr.data)[()].item()
    return expr


def tuple_fields(bb: BlockBuilder, t: rx.Expr) -> list[rx.Expr]:
    """The fields of a tuple argument: through variables bound to tuples, else ``t[i]`` bindings."""
    n = len(sinfo_of(t).fields)  # type: ignore[attr-defined]
    seen = t
    while isinstance(seen, rx.Var):
        bound = bb.lookup_binding(seen)
        if not isinstance(bound, (rx.Tuple, rx.Var)):
            break
        seen = bound
    if isinstance(seen, rx.Tuple):
        return list(seen.fields)
    return [bb.emit(rx.TupleGetItem(t, i)) for i in range(n)]


def prim_values(expr: rx.Expr) -> list[tir.PrimExpr] | None:
    """The integers of a tuple of ``R.prim_value``s (or a shape), None when unknown."""
    sinfo = sinfo_of(expr)
    if isinstance(sinfo, rx.ShapeStructInfo):
        return list(sinfo.values) if sinfo.values is not None else None
    if isinstance(sinfo, rx.TupleStructInfo):
        out = []
        for f in sinfo.fields:
            if not isinstance(f, rx.PrimStructInfo) or f.value is None:
                return None
            out.append(f.value)
        return out
    return None


# ---------------------------------------------------------------------------------------------
# Run-time checks: relations between symbolic sizes that a kernel relies on and that cannot be
# proved when it is generated become ``assert`` statements at the top of its PrimFunc, so a call
# with sizes that do not fit fails with a message instead of reading out of bounds.

# The binding being legalized: (function name, binding), set by LegalizeOps.
_SITE: contextvars.ContextVar[tuple[str, rx.Binding] | None] = contextvars.ContextVar("legalize_site", default=None)


@contextlib.contextmanager
def legalize_site(func_name: str, binding: rx.Binding) -> Iterator[None]:
    """Within the block, run-time checks name ``binding`` of function ``func_name`` as their site."""
    token = _SITE.set((func_name, binding))
    try:
        yield
    finally:
        _SITE.reset(token)


def site_text(call: rx.Call) -> str:
    """Where a check comes from: ``main: y = R.reshape(x, s)`` (the call alone outside LegalizeOps)."""
    site = _SITE.get()
    if site is None:
        return _one_line(call.script())
    func_name, binding = site
    return f"{func_name}: {binding.var.name_hint} = {_one_line(binding.value.script())}"


def _one_line(text: str, limit: int = 160) -> str:
    """The first line of ``text``, shortened for a message."""
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= limit else line[:limit] + " ..."


def arg_text(expr: rx.Expr) -> str:
    """A Relax argument as a message names it: its variable's name, else its printed form."""
    return expr.name_hint if isinstance(expr, rx.Var) else _one_line(expr.script(), 60)


def dim_text(d: Any) -> str:
    """A size as the message shows it (``n``, ``n * 4``, ``6``)."""
    return format_expr(d)


def shape_text(shape: Sequence[Any]) -> str:
    """A shape as the message shows it (``(n, 4)``)."""
    return format_shape([getattr(d, "expr", d) for d in shape])


@dataclasses.dataclass(frozen=True)
class Check:
    """A relation the kernel relies on: ``condition`` over its symbolic sizes, or, with ``indices``
    (an input tensor of integers), that every element ``i`` satisfies ``-size <= i < size``."""

    message: str
    condition: tir.PrimExpr | None = None
    indices: Any = None  # a te.Tensor placeholder
    size: Any = None  # a PrimExpr, or a function of the index loop's block variables
    name: str = "check"


# A message, or a function composing it: composed only when a check is emitted (printing takes time).
Message = Union[str, Callable[[], str]]


def _text(message: Any) -> str:
    """The text of a message given as a string or a function composing it."""
    return message() if callable(message) else message


def _int(value: int, like: tir.PrimExpr) -> tir.IntImm:
    """A literal in the dtype of ``like``."""
    return tir.IntImm(like.dtype, value)


def _as(e: Any, dtype: str) -> tir.PrimExpr:
    """``e`` (a dim or Python int) as a PrimExpr of ``dtype``."""
    e = getattr(e, "expr", e)
    return tir.IntImm(dtype, e) if isinstance(e, int) else as_dtype(e, dtype)


def require_equal(a: Any, b: Any, message: Message) -> list[Check]:
    """``a == b``, unless it is provable."""
    a, b = getattr(a, "expr", a), getattr(b, "expr", b)
    if can_prove_equal(a, b):
        return []
    dtype = a.dtype if isinstance(a, tir.PrimExpr) else b.dtype
    return [Check(_text(message), tir.EQ(_as(a, dtype), _as(b, dtype)))]


def require_broadcast(a: Any, b: Any, message: Message) -> list[Check]:
    """``a == b or a == 1 or b == 1`` (numpy's broadcast rule), unless it is provable."""
    a, b = getattr(a, "expr", a), getattr(b, "expr", b)
    if can_prove_equal(a, b) or is_const_int(a, 1) or is_const_int(b, 1):
        return []
    dtype = a.dtype if isinstance(a, tir.PrimExpr) else b.dtype
    a, b = _as(a, dtype), _as(b, dtype)
    one = tir.IntImm(dtype, 1)
    return [Check(_text(message), tir.Or(tir.Or(tir.EQ(a, b), tir.EQ(a, one)), tir.EQ(b, one)))]


def require_le(a: Any, b: Any, message: Message) -> list[Check]:
    """``a <= b``, unless it is provable."""
    a, b = getattr(a, "expr", a), getattr(b, "expr", b)
    if can_prove_ge(b, a):
        return []
    dtype = a.dtype if isinstance(a, tir.PrimExpr) else b.dtype
    return [Check(_text(message), tir.LE(_as(a, dtype), _as(b, dtype)))]


def require_indices(indices: Any, size: Any, message: Message, name: str) -> list[Check]:
    """Every element ``i`` of the integer tensor ``indices`` lies in ``[-size, size)`` (checked by a
    loop ``name`` over it before the compute); a scalar index is a size relation."""
    size = getattr(size, "expr", size)  # or a function of the index's position (tensors only)
    if hasattr(indices, "op"):  # a tensor: data only known at run time
        return [Check(_text(message), indices=indices, size=size, name=name)]
    i = _as(indices, size.dtype)
    c, n = as_const_int(i), as_const_int(size)
    if c is not None and n is not None and -n <= c < n:
        return []
    return [Check(_text(message), _in_range(i, size))]


def _in_range(i: tir.PrimExpr, size: tir.PrimExpr) -> tir.PrimExpr:
    """``-size <= i and i < size``."""
    n = as_const_int(size)
    low = tir.IntImm(size.dtype, -n) if n is not None else tir.Sub(_int(0, size), size)
    return tir.And(tir.LE(low, i), tir.LT(i, size))


def call_te_checked(bb: BlockBuilder, checks: Callable[..., Sequence[Check]], te_func: Callable[..., Any],
                    *args: Any, **kwargs: Any) -> rx.Call:
    """``bb.call_te(te_func, *args, **kwargs)`` whose PrimFunc first asserts what
    ``checks(*te_args, **te_kwargs)`` lists (called with the same TE arguments as ``te_func``); with
    nothing to check, exactly ``bb.call_te``."""
    found: list[Check] = []

    def with_checks(*a: Any, **k: Any) -> Any:
        found.extend(checks(*a, **k))
        return te_func(*a, **k)

    name = kwargs.pop("primfunc_name_hint", None) or getattr(te_func, "__name__", "te_func")
    with_checks.__name__ = name
    func, call_args, out_sinfo, tir_vars = gen_call_tir_inputs(with_checks, *args, **kwargs)
    if found:
        # An argument passed twice gives its checks twice: each message (and relation) once.
        func = _add_checks(func, list({c.message: c for c in found}.values()))
    return call_tir(bb.add_func(func, name), call_args, out_sinfo, tir_vars)


def _add_checks(func: tir.PrimFunc, checks: list[Check]) -> tir.PrimFunc:
    """``func`` whose root block first asserts the size relations, then runs the index-check loops,
    then its computation. Its fusion pattern is that of the computation alone."""
    pattern = analyze_op_pattern(func)
    realize = func.body
    assert isinstance(realize, tir.BlockRealize)
    root = realize.block
    body: tir.Stmt = root.body
    loops = [_index_loop(func, c) for c in checks if c.indices is not None]
    if loops:
        body = tir.seq([*loops, body])
    for c in reversed([c for c in checks if c.indices is None]):
        body = tir.AssertStmt(c.condition, tir.StringImm(c.message), body)
    new = replace(func, body=replace(realize, block=replace(root, body=body)))
    if loops and pattern:
        # The check loops store nothing; the pattern is the computation's, so fusion is unchanged.
        new = new.with_attr("op_pattern", pattern)
    return new


def _index_loop(func: tir.PrimFunc, check: Check) -> tir.Stmt:
    """Loops over the buffer of ``check.indices`` asserting ``-size <= i < size`` for each element,
    in a block that reads it (so schedules and fusion see an ordinary block)."""
    buf = _input_buffer(func, check.indices)
    shape = buf.shape
    loops = [tir.Var(f"i{k}", d.dtype) for k, d in enumerate(shape)]
    bvars = [tir.Var(f"v_i{k}", d.dtype) for k, d in enumerate(shape)]
    # A size may depend on where the index sits (gather_nd: the last axis says which dim it indexes).
    size = check.size(bvars) if callable(check.size) else check.size
    cond = _in_range(_as(tir.BufferLoad(buf, tuple(bvars)), size.dtype), size)
    body = tir.AssertStmt(cond, tir.StringImm(check.message), tir.Evaluate(tir.IntImm("int32", 0)))
    reads, _ = infer_access_regions(body, None, ())
    iters = tuple(tir.IterVar(tir.Range(tir.IntImm(d.dtype, 0), d), v, tir.IterType.DataPar)
                  for d, v in zip(shape, bvars))
    values: tuple = tuple(loops)
    if not shape:  # a rank-0 index tensor: one iteration, as TE gives scalar computes
        iters = (tir.IterVar(tir.Range(tir.IntImm("int64", 0), tir.IntImm("int64", 1)), tir.Var("vi", "int64"),
                             tir.IterType.DataPar),)
        values = (tir.IntImm("int64", 0),)
    stmt: tir.Stmt = tir.BlockRealize(values, tir.IntImm("bool", 1),
                                      tir.Block(check.name, iters, reads, (), body))
    for lv, d in reversed(list(zip(loops, shape))):
        stmt = tir.For(lv, tir.IntImm(d.dtype, 0), d, tir.ForKind.SERIAL, stmt)
    return stmt


def _input_buffer(func: tir.PrimFunc, placeholder: Any) -> tir.Buffer:
    """The PrimFunc's buffer of a TE placeholder: its parameters follow the TE arguments in order,
    and a placeholder's buffer keeps the placeholder's name and shape."""
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is not None and buf.name == placeholder.name and len(buf.shape) == len(placeholder.shape) and all(
                a is b or can_prove_equal(a, b) for a, b in zip(buf.shape, placeholder.shape)):
            return buf
    raise ValueError(f"no buffer for the input {placeholder.name} among the parameters")
