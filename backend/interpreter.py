"""The TIR reference interpreter: runs any PrimFunc (blocks or plain loops, N-D or flat buffers)
on numpy arrays in place, one scalar at a time, as the second oracle beside the LLVM backend.

A PrimFunc is compiled once into Python closures over a frame (a list holding every variable's
value and every buffer's memory), then called. Semantics, as the LLVM backend has them:

- Values are numpy scalars of their TIR dtype (vectors, from ``T.Ramp``/``T.Broadcast``, numpy
  arrays), so integer arithmetic wraps around, float32 math stays float32 and casts convert as C
  does (anything non-zero is True). ``/`` and ``T.truncmod`` on integers truncate, ``//`` and ``%``
  floor; integer division by zero raises. ``T.min``/``T.max`` are TVM's selects (``a < b ? a : b``).
  ``T.round`` and ``T.nearbyint`` round halves to even (llvm.nearbyint, as TVM and numpy).
- Memory is one flat numpy array per data variable; a buffer access computes its offset from the
  buffer's shape, strides and elem_offset, and every access is bounds-checked (each dimension of
  an N-D access, the whole allocation for a flat one).
- Blocks run directly: iterators bound to their values, ``T.where`` skips, ``T.init()`` runs when
  every reduction iterator is at its minimum (as LowerBlocks writes it), and on its own when a
  reduction loop is empty (``guard_empty_reductions``, as LowerBlocks too), ``alloc_buffers`` and
  ``T.decl_buffer``/``T.allocate`` without a defined ``data`` allocate zeroed memory.
- ``T.if_then_else`` evaluates only the side taken, ``T.Select`` both; ``and``/``or`` short-circuit.
  A failed ``T.Assert``/``T.assume`` raises :class:`TIRAssertError`; ``return v`` returns ``v``.

Calling convention (``docs/design.md``, backend contracts): one array per buffer parameter in
``params`` order (C-contiguous, exact dtype; symbolic dims are read from the shapes and must agree),
then one Python scalar per scalar parameter. :class:`InterpreterExecutor` is the kernel executor
interface the VM uses: ``executor.call(name, arrays, scalars=())``."""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import tir
from ..ir.arith import simplify
from ..ir.const_fold import wrap_int
from ..ir.dtype import lanes_of, parse_dtype, to_numpy_dtype
from ..ir.intrinsics import Intrinsic, libm_numpy
from ..ir.scalar_eval import ScalarCompiler
from ..ir.scalar_ops import numpy_division, select_max, select_min
from ..ir.module import IRModule
from ..ir.stmt_functor import StmtExprVisitor, post_order_visit
from ..ir.empty_reductions import guard_empty_reductions
from ..passes.lower.blocks import init_condition, inline_match_buffers
from ..passes.lower.flatten import buffer_strides
from .runtime import ArgumentError
from ..te.expr import expr_vars
from .signature import ArgumentChecker, prim_func_signature

__all__ = ["InterpreterError", "TIRAssertError", "InterpreterExecutor", "CompiledPrimFunc", "run_prim_func"]

Frame = list  # slot -> value: variables' numpy scalars, data variables' flat arrays
Expr = Callable[[Frame], Any]
Stmt = Callable[[Frame], None]


class _Break(Exception):
    """A ``break`` on its way to the innermost loop."""


class _Continue(Exception):
    """A ``continue`` on its way to the innermost loop."""


def _has_jump(stmt: tir.Stmt) -> bool:
    """True when ``stmt`` holds a ``break``/``continue`` (its own or an inner loop's)."""
    found = False

    def visit(node: Any) -> None:
        nonlocal found
        if isinstance(node, (tir.Break, tir.Continue)):
            found = True

    post_order_visit(stmt, visit)
    return found


class InterpreterError(RuntimeError):
    """A PrimFunc that cannot run: an out-of-bounds access, an integer division by zero, an
    unsupported construct or intrinsic."""


class TIRAssertError(InterpreterError, AssertionError):
    """A ``T.Assert`` (or ``T.assume``) whose condition is false."""


class _Return(Exception):
    """``return v`` unwinding to the function's caller."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


# ====================================================================== dtypes
def _np(dtype: str) -> np.dtype:
    """The numpy dtype of a TIR dtype's element type."""
    try:
        return to_numpy_dtype(parse_dtype(dtype).element)
    except ValueError:
        raise InterpreterError(f"the interpreter has no numpy type for dtype {dtype!r}") from None


def _kind(dtype: str) -> str:
    """"int" (int and uint), "float", "bool" or "handle"."""
    d = parse_dtype(dtype)
    return "int" if d.is_integer else "float" if d.is_float else "bool" if d.is_bool else "handle"


def _scalar(value: Any, dtype: str) -> Any:
    """A literal as a numpy scalar (integers wrapped to the dtype's range, as two's complement)."""
    dt = _np(dtype)
    if dt == np.bool_:
        return np.bool_(bool(value))
    if np.issubdtype(dt, np.integer):
        return dt.type(wrap_int(int(value), dtype))
    return dt.type(value)


def _truth(value: Any) -> Any:
    """``value`` converted to bool as C converts (anything non-zero, NaN included, is True)."""
    return np.bool_(value != 0) if np.ndim(value) == 0 else np.asarray(value) != 0


# C math functions reachable through T.call_extern / T.call_pure_extern ("expf" and "exp" alike).
_LIBM = libm_numpy()


# ====================================================================== compiler
class _Compiler(ScalarCompiler, StmtExprVisitor):
    """Compiles one PrimFunc's statements and expressions into closures over a frame. Expressions
    go through the one scalar expression compiler (``ir/scalar_eval.py``) with the interpreter's
    rules: numpy scalars of the TIR dtype (vectors for ``T.Ramp``/``T.Broadcast``), integer
    division by zero refused, ``T.min``/``T.max`` as selects, short-circuit ``and``/``or``,
    ``T.Select`` of both sides; buffer loads and the other calls are its own."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.slots: dict[tir.Var, int] = {}
        self.defined: set[tir.Var] = set()
        self.memory_dtype: dict[tir.Var, np.dtype] = {}  # data var -> dtype of the array behind it
        # Sizes and scalar parameters: a failed assert reports the values of those in its condition.
        self.reported: set[tir.Var] = set()

    # ---- slots and errors
    def slot(self, var: tir.Var) -> int:
        """The frame slot of a variable (assigned on first sight)."""
        s = self.slots.get(var)
        if s is None:
            s = self.slots[var] = len(self.slots)
        return s

    def define(self, var: tir.Var) -> int:
        """Mark ``var`` defined from here on; its slot."""
        self.defined.add(var)
        return self.slot(var)

    def error(self, message: str) -> InterpreterError:
        """An error naming the function."""
        return InterpreterError(f"in PrimFunc {self.name!r}: {message}")

    def generic_visit(self, node: Any) -> Any:
        """Nodes without a rule here are not supported."""
        return self.unknown(node)

    def expr(self, e: tir.PrimExpr) -> Expr:
        """The closure computing ``e``."""
        return self.visit_expr(e)

    def stmt(self, s: tir.Stmt) -> Stmt:
        """The closure executing ``s``."""
        return self.visit_stmt(s)

    # ================================================================ expressions
    def var_key(self, var: tir.Var) -> int:
        """A variable's slot (it must be defined before it is read)."""
        if var not in self.defined:
            raise self.error(f"the variable {var.name} is used but never defined")
        return self.slot(var)

    def let_key(self, var: tir.Var) -> int:
        """``T.Let`` defines its variable for the body."""
        return self.define(var)

    def constant(self, value: Any, dtype: str) -> Any:
        """A literal as a numpy scalar of its dtype (integers wrapped, floats rounded)."""
        return _scalar(value, dtype)

    def unknown(self, node: Any) -> Expr:
        """Nodes without a rule here are not supported."""
        raise self.error(f"the interpreter does not support {type(node).__name__}")

    def visit_string_imm_(self, e: tir.StringImm) -> Expr:
        """A string (assert messages, extern names)."""
        value = e.value
        return lambda f: value

    def visit_cast_(self, e: tir.Cast) -> Expr:
        """``T.Cast``: C conversions."""
        value, dt = self.expr(e.value), _np(e.dtype)
        if dt == np.bool_:
            return lambda f: _truth(value(f))
        if lanes_of(e.dtype) == 1:
            return lambda f: value(f).astype(dt)
        return lambda f: np.asarray(value(f)).astype(dt)

    def visit_division_(self, e: tir.BinaryOp) -> Expr:
        """``/``, ``T.truncmod``, ``//``, ``%``: truncating or flooring, by zero refused for integers."""
        a, b = self.expr(e.a), self.expr(e.b)
        kind = _kind(e.dtype)
        fn = numpy_division(type(e), kind == "float")
        if kind == "float":
            return lambda f: fn(a(f), b(f))
        text = f"{type(e).__name__}({e.a}, {e.b})"
        if lanes_of(e.dtype) > 1:
            def divide_lanes(f: Frame) -> Any:
                x, y = a(f), b(f)
                if np.any(y == 0):
                    raise self.error(f"integer division by zero in {text}")
                return fn(x, y)
            return divide_lanes

        def divide(f: Frame) -> Any:
            x, y = a(f), b(f)
            if y == 0:
                raise self.error(f"integer division by zero in {text}")
            return fn(x, y)

        return divide

    visit_div_ = visit_mod_ = visit_floor_div_ = visit_floor_mod_ = visit_division_

    def visit_min_max_(self, e: tir.BinaryOp) -> Expr:
        """``T.min(a, b)`` is ``a < b ? a : b`` and ``T.max(a, b)`` is ``a > b ? a : b`` (as TVM's LLVM
        code generator; a NaN on the left gives the right operand)."""
        a, b = self.expr(e.a), self.expr(e.b)
        better = operator.lt if isinstance(e, tir.Min) else operator.gt
        if lanes_of(e.dtype) == 1:
            def pick(f: Frame) -> Any:
                x, y = a(f), b(f)
                return x if better(x, y) else y
            return pick

        lanes = select_min if isinstance(e, tir.Min) else select_max
        return lambda f: lanes(a(f), b(f))

    def visit_and_(self, e: tir.And) -> Expr:
        """``and`` (short-circuit on scalars)."""
        a, b = self.expr(e.a), self.expr(e.b)
        if lanes_of(e.dtype) == 1:
            return lambda f: np.bool_(a(f) and b(f))
        return lambda f: np.logical_and(a(f), b(f))

    def visit_or_(self, e: tir.Or) -> Expr:
        """``or`` (short-circuit on scalars)."""
        a, b = self.expr(e.a), self.expr(e.b)
        if lanes_of(e.dtype) == 1:
            return lambda f: np.bool_(a(f) or b(f))
        return lambda f: np.logical_or(a(f), b(f))

    visit_min_ = visit_max_ = visit_min_max_

    def visit_not_(self, e: tir.Not) -> Expr:
        """``not``."""
        a = self.expr(e.a)
        if lanes_of(e.dtype) == 1:
            return lambda f: np.bool_(not a(f))
        return lambda f: np.logical_not(a(f))

    def visit_select_(self, e: tir.Select) -> Expr:
        """``T.Select``: both sides evaluated, then one chosen."""
        c, t, o = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
        if lanes_of(e.dtype) == 1 and lanes_of(e.condition.dtype) == 1:
            def select(f: Frame) -> Any:
                cond, x, y = c(f), t(f), o(f)
                return x if cond else y
            return select
        return lambda f: np.where(c(f), t(f), o(f))

    def visit_ramp_(self, e: tir.Ramp) -> Expr:
        """``T.Ramp(base, stride, lanes)``: a vector."""
        base, stride, lanes = self.expr(e.base), self.expr(e.stride), e.lanes
        dt = _np(e.dtype)
        return lambda f: base(f) + np.arange(lanes, dtype=dt) * stride(f)

    def visit_broadcast_(self, e: tir.Broadcast) -> Expr:
        """``T.Broadcast(value, lanes)``: a vector."""
        value, lanes, dt = self.expr(e.value), e.lanes, _np(e.dtype)
        return lambda f: np.full(lanes, value(f), dtype=dt)

    def call(self, e: tir.Call, info: Intrinsic | None) -> Expr:
        """Intrinsics: the implementation their table entry names, else their numpy meaning
        (``T.if_then_else``, conditional, is compiled lazily by the scalar compiler)."""
        op = e.op
        if not isinstance(op, str):
            raise self.error(f"calling another function ({getattr(op, 'name_hint', op)}) is not supported")
        args = [self.expr(a) for a in e.args]
        dt = _np(e.dtype) if e.dtype not in ("handle", "void") else None
        if info is not None and info.interpret is not None:
            return getattr(self, f"_interpret_{info.interpret}")(e, args, dt)
        if info is None or info.numpy is None:
            return self.unsupported(f"the intrinsic T.{op.removeprefix('tir.')}")
        return self.math(info.numpy, args, dt)

    def _interpret_reinterpret(self, e: tir.Call, args: list[Expr], dt: np.dtype | None) -> Expr:
        """The same bytes viewed as the call's dtype."""
        (x,) = args
        return lambda f: np.asarray(x(f)).view(dt)[()]

    def _interpret_assume(self, e: tir.Call, args: list[Expr], dt: np.dtype | None) -> Expr:
        """True, or :class:`TIRAssertError` when the assumption is false."""
        (c,) = args
        text = str(e.args[0])

        def assume(f: Frame) -> Any:
            if not np.all(c(f)):
                raise TIRAssertError(f"in PrimFunc {self.name!r}: T.assume({text}) does not hold")
            return np.bool_(True)

        return assume

    def _interpret_ret(self, e: tir.Call, args: list[Expr], dt: np.dtype | None) -> Expr:
        """``return v``: leaves the function with the value."""
        (x,) = args

        def ret(f: Frame) -> Any:
            raise _Return(x(f))

        return ret

    def _interpret_extern(self, e: tir.Call, args: list[Expr], dt: np.dtype | None) -> Expr:
        """A C math function by name (``"expf"`` and ``"exp"`` alike) as its intrinsic's numpy meaning."""
        fname = e.args[0].value if isinstance(e.args[0], tir.StringImm) else "?"
        fn = _LIBM.get(fname) or (_LIBM.get(fname[:-1]) if fname.endswith("f") else None)
        if fn is None:
            return self.unsupported(f"the external function {fname!r}")
        return self.math(fn, args[1:], dt)

    def _interpret_llvm_intrin(self, e: tir.Call, args: list[Expr], dt: np.dtype | None) -> Expr:
        """``llvm.prefetch`` changes no value: nothing to do (its address is not even computed);
        other LLVM intrinsics have no meaning here."""
        name = e.args[0].value if e.args and isinstance(e.args[0], tir.StringImm) else "?"
        if name.split(".")[:2] == ["llvm", "prefetch"]:
            return lambda f: 0
        return self.unsupported(f"the LLVM intrinsic {name!r}")

    def math(self, fn: Callable[..., Any], args: list[Expr], dt: np.dtype | None) -> Expr:
        """A numpy function of the arguments, cast to the call's dtype."""
        if len(args) == 1:
            (x,) = args
            return lambda f: np.asarray(fn(x(f))).astype(dt)[()]
        return lambda f: np.asarray(fn(*(a(f) for a in args))).astype(dt)[()]

    def unsupported(self, what: str) -> Expr:
        """A closure failing when reached (so unreachable uses do not prevent a run)."""
        message = f"{what} is not supported by the interpreter"

        def fail(f: Frame) -> Any:
            raise self.error(message)

        return fail

    # ================================================================ buffers
    def access(self, buf: tir.Buffer, indices: tuple) -> tuple[int, Expr, Callable[[Frame], np.ndarray] | None]:
        """``(data slot, offset closure, memory closure)`` of ``buf[indices]``; the memory closure is
        None when the array in the data slot has the buffer's dtype (the usual case)."""
        if buf.data not in self.defined:
            raise self.error(f"the buffer {buf.name} is used but its data is never defined")
        if len(indices) != len(buf.shape):
            raise self.error(f"{buf.name} has {len(buf.shape)} dimensions but is accessed with "
                             f"{len(indices)} indices")
        ds = self.slot(buf.data)
        dt = _np(buf.dtype)
        if self.memory_dtype.get(buf.data) == dt:
            return ds, self.offset(buf, indices), None

        def memory(f: Frame) -> np.ndarray:  # another dtype's view of the same bytes
            mem = f[ds]
            return mem if mem.dtype == dt else mem.view(dt)

        return ds, self.offset(buf, indices), memory

    def offset(self, buf: tir.Buffer, indices: tuple) -> Expr:
        """The element offset of ``buf[indices]``, checking each index against its dimension."""
        idx = [self.expr(i) for i in indices]
        plain = not buf.strides and (buf.elem_offset is None or _is_zero(buf.elem_offset))
        if len(idx) == 1 and plain:
            return idx[0]  # a flat access: checked against the allocation by the load/store
        if not idx:
            return lambda f: 0
        # Constant dimensions and strides (the common case) are folded at compile time.
        strides = [simplify(st) for st in buffer_strides(buf, "int64")]
        parts = [(k, index, *self.const_or_expr(dim), *self.const_or_expr(st))
                 for k, (index, dim, st) in enumerate(zip(idx, buf.shape, strides))]
        base = self.expr(buf.elem_offset) if buf.elem_offset is not None else None
        name = buf.name

        def out_of_bounds(k: int, i: Any, n: Any) -> InterpreterError:
            return self.error(f"out-of-bounds access of {name}: index {_show(i)} of dimension {k} (of size {n})")

        if any(lanes_of(i.dtype) > 1 for i in indices):
            def vector_offset(f: Frame) -> Any:
                off = base(f) if base is not None else 0
                for k, index, n, n_fn, st, st_fn in parts:
                    i = index(f)
                    n = n if n_fn is None else n_fn(f)
                    if np.any(i < 0) or np.any(i >= n):
                        raise out_of_bounds(k, i, n)
                    off = off + i * (st if st_fn is None else st_fn(f))
                return off
            return vector_offset

        def offset(f: Frame) -> Any:
            off = base(f) if base is not None else 0
            for k, index, n, n_fn, st, st_fn in parts:
                i = index(f)
                if n_fn is not None:
                    n = n_fn(f)
                if i < 0 or i >= n:
                    raise out_of_bounds(k, i, n)
                off += i * (st if st_fn is None else st_fn(f))
            return off

        return offset

    def const_or_expr(self, e: tir.PrimExpr) -> tuple[int | None, Expr | None]:
        """``(value, None)`` for an integer literal, else ``(None, closure)``."""
        if isinstance(e, tir.IntImm):
            return e.value, None
        return None, self.expr(e)

    def check(self, name: str, mem: np.ndarray, off: Any) -> None:
        """Raise for an offset outside the allocation."""
        raise self.error(f"out-of-bounds access of {name}: element {_show(off)} of an allocation of "
                         f"{mem.shape[0]} elements")

    def visit_buffer_load_(self, e: tir.BufferLoad) -> Expr:
        """``A[indices]``: bounds-checked."""
        ds, offset, view = self.access(e.buffer, e.indices)
        memory = view or operator.itemgetter(ds)
        name, check = e.buffer.name, self.check
        if lanes_of(e.dtype) > 1:
            def load_vector(f: Frame) -> Any:
                mem, off = memory(f), np.asarray(offset(f))
                if off.size and (off.min() < 0 or off.max() >= mem.shape[0]):
                    check(name, mem, off)
                return mem[off]
            return load_vector
        if view is None:
            def load(f: Frame) -> Any:  # the hot path: no memory closure
                off = offset(f)
                if off < 0:
                    check(name, f[ds], off)
                try:
                    return f[ds][off]
                except IndexError:
                    check(name, f[ds], off)
            return load

        def load_view(f: Frame) -> Any:
            mem, off = memory(f), offset(f)
            if off < 0:
                check(name, mem, off)
            try:
                return mem[off]
            except IndexError:
                check(name, mem, off)

        return load_view

    # ================================================================ statements
    def visit_buffer_store_(self, s: tir.BufferStore) -> Stmt:
        """``A[indices] = value``: bounds-checked."""
        value = self.expr(s.value)
        ds, offset, view = self.access(s.buffer, s.indices)
        memory = view or operator.itemgetter(ds)
        name, check = s.buffer.name, self.check
        if any(lanes_of(i.dtype) > 1 for i in s.indices):
            def store_vector(f: Frame) -> None:
                mem, off = memory(f), np.asarray(offset(f))
                if off.size and (off.min() < 0 or off.max() >= mem.shape[0]):
                    check(name, mem, off)
                mem[off] = value(f)
            return store_vector

        def store(f: Frame) -> None:
            mem, off = memory(f), offset(f)
            if off < 0:
                check(name, mem, off)
            v = value(f)
            try:
                mem[off] = v
            except IndexError:
                check(name, mem, off)

        return store

    def visit_seq_stmt_(self, s: tir.SeqStmt) -> Stmt:
        """Statements in order."""
        stmts = tuple(self.stmt(x) for x in s.seq)

        def run(f: Frame) -> None:
            for x in stmts:
                x(f)

        return run

    def visit_evaluate_(self, s: tir.Evaluate) -> Stmt:
        """``T.evaluate(e)``: computed for its effects (``return``, asserts, externs)."""
        if isinstance(s.value, (tir.IntImm, tir.FloatImm)):
            return lambda f: None
        value = self.expr(s.value)

        def run(f: Frame) -> None:
            value(f)

        return run

    def visit_let_stmt_(self, s: tir.LetStmt) -> Stmt:
        """``x = value`` for the statements after it."""
        value = self.expr(s.value)
        slot = self.define(s.var)
        body = self.stmt(s.body)

        def let(f: Frame) -> None:
            f[slot] = value(f)
            body(f)

        return let

    def visit_assert_stmt_(self, s: tir.AssertStmt) -> Stmt:
        """``assert cond, message``: TIRAssertError when false."""
        cond, message, body = self.expr(s.condition), self.expr(s.message), self.stmt(s.body)
        name = self.name
        shown = [(v.name, self.slot(v)) for v in expr_vars(s.condition) if v in self.reported]

        def run(f: Frame) -> None:
            if not cond(f):
                values = ", ".join(f"{n} = {f[k]}" for n, k in shown)
                raise TIRAssertError(f"in PrimFunc {name!r}: assertion failed: {message(f)}"
                                     + (f" ({values})" if values else ""))
            body(f)

        return run

    def visit_for_(self, loop: tir.For) -> Stmt:
        """Every kind of loop (serial, parallel, vectorized, unroll, thread binding) runs in order."""
        lo, extent = self.expr(loop.min), self.expr(loop.extent)
        step = self.expr(loop.step) if loop.step is not None else None
        slot = self.define(loop.loop_var)
        dt = _np(loop.loop_var.dtype)
        body = self.stmt(loop.body)
        if _has_jump(loop.body):
            return self._jumping_for(lo, extent, step, slot, dt, body)

        def run(f: Frame) -> None:
            start = lo(f)
            stop = start + extent(f)
            for value in np.arange(start, stop, step(f) if step is not None else 1, dtype=dt):
                f[slot] = value
                body(f)

        return run

    @staticmethod
    def _jumping_for(lo: Expr, extent: Expr, step: Expr | None, slot: int, dt: Any, body: Stmt) -> Stmt:
        """A loop whose body has ``break``/``continue`` (raised as _Break/_Continue)."""
        def run(f: Frame) -> None:
            start = lo(f)
            stop = start + extent(f)
            for value in np.arange(start, stop, step(f) if step is not None else 1, dtype=dt):
                f[slot] = value
                try:
                    body(f)
                except _Continue:
                    continue
                except _Break:
                    break

        return run

    def visit_break_(self, s: tir.Break) -> Stmt:
        """``break``: unwinds to the innermost loop."""
        def run(f: Frame) -> None:
            raise _Break()

        return run

    def visit_continue_(self, s: tir.Continue) -> Stmt:
        """``continue``: unwinds to the innermost loop, which goes on."""
        def run(f: Frame) -> None:
            raise _Continue()

        return run

    def visit_while_(self, s: tir.While) -> Stmt:
        """``while cond:``."""
        cond, body = self.expr(s.condition), self.stmt(s.body)

        def run(f: Frame) -> None:
            while cond(f):
                try:
                    body(f)
                except _Continue:
                    continue
                except _Break:
                    break

        return run

    def visit_if_then_else_(self, s: tir.IfThenElse) -> Stmt:
        """``if cond: ... else: ...``."""
        cond, then = self.expr(s.condition), self.stmt(s.then_case)
        if s.else_case is None:
            def run_if(f: Frame) -> None:
                if cond(f):
                    then(f)
            return run_if
        other = self.stmt(s.else_case)

        def run(f: Frame) -> None:
            if cond(f):
                then(f)
            else:
                other(f)

        return run

    def visit_attr_stmt_(self, s: tir.AttrStmt) -> Stmt:
        """Attributes are hints, except a thread launch (``T.launch_thread``): a loop over the
        thread index, run in order."""
        if not (isinstance(s.node, tir.IterVar) and s.attr_key in ("thread_extent", "virtual_thread")):
            return self.stmt(s.body)
        extent, slot, dt = self.expr(s.value), self.define(s.node.var), _np(s.node.var.dtype)
        body = self.stmt(s.body)

        def run(f: Frame) -> None:
            for value in np.arange(extent(f), dtype=dt):
                f[slot] = value
                body(f)

        return run

    def allocation(self, data: tir.Var, dtype: str, size: Expr) -> Callable[[Frame], None]:
        """A closure giving ``data`` a fresh zeroed array of ``size`` elements."""
        slot = self.define(data)
        dt = self.memory_dtype[data] = _np(dtype)

        def allocate(f: Frame) -> None:
            n = int(size(f))
            if n < 0:
                raise self.error(f"allocation of {n} elements for {data.name}")
            f[slot] = np.zeros(n, dtype=dt)

        return allocate

    def visit_decl_buffer_(self, s: tir.DeclBuffer) -> Stmt:
        """A view of defined data, or (data not defined yet) an allocation."""
        buf = s.buffer
        if buf.data in self.defined:
            return self.stmt(s.body)
        allocate = self.allocation(buf.data, buf.dtype, self.extent_of(buf))
        body = self.stmt(s.body)

        def run(f: Frame) -> None:
            allocate(f)
            body(f)

        return run

    def visit_allocate_(self, s: tir.Allocate) -> Stmt:
        """``T.allocate(extents, dtype)``: zeroed memory."""
        extents = [self.expr(e) for e in s.extents]
        allocate = self.allocation(s.buffer_var, s.dtype, lambda f: math.prod(int(e(f)) for e in extents))
        body = self.stmt(s.body)

        def run(f: Frame) -> None:
            allocate(f)
            body(f)

        return run

    def visit_allocate_const_(self, s: tir.AllocateConst) -> Stmt:
        """``T.allocate_const(data, dtype, extents)``: a fresh copy of the data each time."""
        slot = self.define(s.buffer_var)
        dt = self.memory_dtype[s.buffer_var] = _np(s.dtype)
        values = np.array(s.data, dtype=dt)
        body = self.stmt(s.body)

        def run(f: Frame) -> None:
            f[slot] = values.copy()
            body(f)

        return run

    def extent_of(self, buf: tir.Buffer) -> Expr:
        """Elements a buffer's memory must hold (its last element's offset plus one)."""
        dims = [self.expr(d) for d in buf.shape]
        strides = [self.expr(s) for s in buf.strides] if buf.strides else None
        base = self.expr(buf.elem_offset) if buf.elem_offset is not None else (lambda f: 0)

        def size(f: Frame) -> int:
            shape = [int(d(f)) for d in dims]
            if any(n == 0 for n in shape):
                return 0
            if strides is None:
                return int(base(f)) + math.prod(shape)
            return int(base(f)) + 1 + sum((n - 1) * int(st(f)) for n, st in zip(shape, strides))

        return size

    def visit_block_realize_(self, realize: tir.BlockRealize) -> Stmt:
        """One block instance: bind the iterators, check the predicate, allocate, init, run."""
        block = realize.block
        values = [self.expr(v) for v in realize.iter_values]
        pred = None if _is_true(realize.predicate) else self.expr(realize.predicate)
        slots, casts = [], []
        for iv, v in zip(block.iter_vars, realize.iter_values):
            slots.append(self.define(iv.var))
            casts.append(_np(iv.var.dtype) if v.dtype != iv.var.dtype else None)
        binds = list(zip(slots, values, casts))
        allocs = [self.allocation(b.data, b.dtype, self.extent_of(b)) for b in block.alloc_buffers]
        init_stmt, body_stmt = block.init, block.body
        if block.match_buffers:  # views of other buffers: accesses rewritten as LowerBlocks does
            body_stmt = inline_match_buffers(body_stmt, block.match_buffers)
            init_stmt = inline_match_buffers(init_stmt, block.match_buffers) if init_stmt is not None else None
        init = self.stmt(init_stmt) if init_stmt is not None else None
        cond_expr = init_condition(block) if init is not None else None
        first = self.expr(cond_expr) if cond_expr is not None else None
        body = self.stmt(body_stmt)

        def run(f: Frame) -> None:
            for s, v, dt in binds:
                f[s] = v(f) if dt is None else v(f).astype(dt)
            if pred is not None and not pred(f):
                return
            for a in allocs:
                a(f)
            if init is not None and (first is None or first(f)):
                init(f)
            body(f)

        return run


def _is_zero(e: tir.PrimExpr) -> bool:
    """An integer literal 0."""
    return isinstance(e, tir.IntImm) and e.value == 0


def _is_true(e: tir.PrimExpr) -> bool:
    """A literal true (or 1)."""
    return isinstance(e, tir.IntImm) and e.value == 1


def _show(value: Any) -> str:
    """An index or offset for an error message."""
    arr = np.asarray(value)
    return str(arr.tolist())


# ====================================================================== calling
def _bind_vars(func: tir.PrimFunc, comp: _Compiler, scalar_params: list[tir.Var]) -> list[tuple[int, tir.Var]]:
    """Frame slots for the variables the parameter buffers define (bare dimensions, strides and
    elem_offsets), in order; their values come from the argument checker."""
    out: list[tuple[int, tir.Var]] = []
    scalars = set(map(id, scalar_params))
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            continue
        for e in (*buf.shape, *buf.strides, buf.elem_offset):
            if isinstance(e, tir.Var) and id(e) not in scalars and e not in comp.defined:
                out.append((comp.define(e), e))
    return out


def _flat_view(arr: np.ndarray, buf: tir.Buffer) -> np.ndarray:
    """The memory of ``arr`` as a flat array sharing it (through the declared strides for a view)."""
    if arr.flags.c_contiguous or not buf.strides:
        return arr.reshape(-1)  # a view: stores reach the caller's array
    span = 1 + sum((n - 1) * st for n, st in zip(arr.shape, arr.strides)) // arr.itemsize if arr.size else 0
    return np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(arr.itemsize,))


class CompiledPrimFunc:
    """One PrimFunc compiled for the interpreter; call it with arrays and scalars."""

    def __init__(self, func: tir.PrimFunc, name: str = "main") -> None:
        self.func, self.name = func, name
        comp = _Compiler(name)
        self.buffer_params = [p for p in func.params if p in func.buffer_map]
        self.scalar_params = [p for p in func.params if p not in func.buffer_map]
        # Scalars first: a scalar parameter used as a dimension is checked against the arrays.
        self.scalar_slots = [comp.define(p) for p in self.scalar_params]
        self.buffers = [func.buffer_map[p] for p in self.buffer_params]
        self.data_slots = []
        for p, buf in zip(self.buffer_params, self.buffers):
            self.data_slots.append((comp.define(p), comp.define(buf.data)))
            comp.memory_dtype[buf.data] = comp.memory_dtype[p] = _np(buf.dtype)
        self.var_slots = _bind_vars(func, comp, self.scalar_params)
        comp.reported = {var for _, var in self.var_slots} | set(self.scalar_params)
        # The checks LLVM kernels get too (backend/signature.py); views are fine where strides are declared.
        self.checker = ArgumentChecker(prim_func_signature(name, func), strided_views=True)
        self.body = comp.stmt(guard_empty_reductions(func.body))
        self.nslots = len(comp.slots)

    def __call__(self, arrays: Sequence[Any], scalars: Sequence[Any] = ()) -> Any:
        """Run in place on ``arrays`` (one per buffer parameter) with ``scalars`` (one per scalar
        parameter); returns the function's ``return`` value, if any. Wrong arguments raise
        :class:`~tvmlite.backend.runtime.ArgumentError` before anything runs."""
        checked, _, py_scalars, env = self.checker.check(arrays, scalars)
        frame: Frame = [None] * self.nslots
        for p, slot, v in zip(self.scalar_params, self.scalar_slots, py_scalars):
            frame[slot] = _scalar(v, p.dtype) if _kind(p.dtype) != "float" else _np(p.dtype).type(v)
        for (s1, s2), buf, arr in zip(self.data_slots, self.buffers, checked):
            frame[s1] = frame[s2] = _flat_view(arr, buf)
        for slot, var in self.var_slots:
            frame[slot] = _scalar(env.get(id(var), 0), var.dtype)
        with np.errstate(all="ignore"):  # wraparound and inf/nan are the semantics, not warnings
            try:
                self.body(frame)
            except _Return as r:
                return r.value
        return None


def run_prim_func(func: tir.PrimFunc, arrays: Sequence[Any], scalars: Sequence[Any] = ()) -> Any:
    """Run ``func`` once on ``arrays`` (in place) and ``scalars``."""
    return CompiledPrimFunc(func)(arrays, scalars)


class InterpreterExecutor:
    """The kernel executor interface over the reference interpreter: ``call(name, arrays,
    scalars=())`` runs a PrimFunc of the module in place (destination-passing style);
    ``executor[name](*args)`` takes the arrays and scalars in parameter order."""

    def __init__(self, mod: IRModule | tir.PrimFunc) -> None:
        self.mod = mod if isinstance(mod, IRModule) else IRModule.from_expr(mod)
        self._compiled: dict[str, CompiledPrimFunc] = {}

    def prim_func_names(self) -> list[str]:
        """The module's PrimFuncs."""
        return [gv.name_hint for gv, f in self.mod.functions_items() if isinstance(f, tir.PrimFunc)]

    def __contains__(self, name: str) -> bool:
        return name in self.prim_func_names()

    def compiled(self, name: str) -> CompiledPrimFunc:
        """The compiled PrimFunc ``name`` (compiled on first use)."""
        fn = self._compiled.get(name)
        if fn is None:
            if name not in self:
                raise KeyError(f"the module has no PrimFunc {name!r} (PrimFuncs: "
                               f"{', '.join(self.prim_func_names()) or 'none'})")
            fn = self._compiled[name] = CompiledPrimFunc(self.mod[name], name)
        return fn

    def call(self, name: str, arrays: Sequence[Any], scalars: Sequence[Any] = ()) -> Any:
        """Run PrimFunc ``name`` in place on ``arrays`` (outputs included) with ``scalars``."""
        return self.compiled(name)(arrays, scalars)

    def __getitem__(self, name: str) -> Callable[..., Any]:
        """``executor[name](*args)``: arrays for buffer parameters, scalars for the others, in order."""
        fn = self.compiled(name)
        params = fn.func.params
        buffer_map = fn.func.buffer_map

        def call(*args: Any) -> Any:
            if len(args) != len(params):
                raise ArgumentError(f"PrimFunc {name!r} takes {len(params)} arguments "
                                f"({', '.join(p.name for p in params)}), got {len(args)}")
            arrays = [a for p, a in zip(params, args) if p in buffer_map]
            scalars = [a for p, a in zip(params, args) if p not in buffer_map]
            return fn(arrays, scalars)

        return call
