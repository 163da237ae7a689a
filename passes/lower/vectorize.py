"""VectorizeLoop (TVM's ``tir.transform.VectorizeLoop``): a ``T.vectorized`` loop of constant extent
becomes one statement on vectors: its variable is replaced by ``T.Ramp(min, 1, lanes)``, scalars
meeting vectors are broadcast, and index arithmetic keeps ramps as ramps, so that ``A[i * 64 + v]``
reads ``A[T.Ramp(i * 64, 1, 16)]``, one contiguous vector load in the LLVM backend.

Loops whose body cannot be written on vectors (an inner loop of more than one step, an
allocation, a store to one element from every lane (a reduction), a ``let`` or ``if`` on the lane
variable, a load inside ``T.if_then_else`` on the lane variable, which would read out of bounds)
are kept as loops: the backend then asks LLVM's loop vectorizer with ``llvm.loop.vectorize``
hints instead. A ``T.if_then_else`` whose condition is the same in every lane keeps it scalar: the
backend branches around the vector load it guards. Unit loops inside are their bodies at their start.

Why not leave every vectorized loop to LLVM: its loop vectorizer sees the loop only after full
unrolling, and for short inner loops it then often vectorises the enclosing loop instead, with
gathers and scatters (16 times slower on an elementwise kernel here)."""
from __future__ import annotations

from ...ir import tir
from ...ir.arith import as_const_int
from ...ir.dtype import lanes_of, parse_dtype
from ...ir.intrinsics import intrinsic_of_op
from ...ir.module import IRModule
from ...ir.node import replace
from ...ir.stmt_functor import StmtExprMutator, post_order_visit, substitute
from ..infra import PassContext, PrimFuncPass, register_pass

__all__ = ["VectorizeLoop", "vectorize_loops", "MAX_LANES"]

MAX_LANES = 64  # wider loops stay loops (hinted): 64 float32 lanes are already four AVX-512 registers


class _CannotVectorize(Exception):
    """The loop body has a construct this pass does not write on vectors."""


def _lanes(e: tir.PrimExpr) -> int:
    """The lane count of an expression's dtype."""
    return lanes_of(e.dtype)


def _has_load(exprs: tuple[tir.PrimExpr, ...]) -> bool:
    """Whether any of ``exprs`` reads a buffer."""
    found: list[bool] = []
    for e in exprs:
        post_order_visit(e, lambda n: found.append(True) if isinstance(n, tir.BufferLoad) else None)
    return bool(found)


def _fold(kind: type, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """``a <kind> b`` with two integer literals folded (ramp strides stay literals)."""
    ca, cb = as_const_int(a), as_const_int(b)
    if ca is not None and cb is not None and isinstance(a, tir.IntImm):
        value = {tir.Add: ca + cb, tir.Sub: ca - cb, tir.Mul: ca * cb}[kind]
        return tir.IntImm(a.dtype, value)
    if kind is tir.Add and cb == 0:
        return a
    if kind is tir.Add and ca == 0:
        return b
    if kind is tir.Mul and cb == 1:
        return a
    if kind is tir.Mul and ca == 1:
        return b
    return kind(a, b)


class _Vectorizer(StmtExprMutator):
    """Rewrites a loop body with the loop variable as a ramp of ``lanes`` lanes."""

    def __init__(self, var: tir.Var, start: tir.PrimExpr, lanes: int) -> None:
        self.var, self.lanes = var, lanes
        self.ramp = tir.Ramp(start, tir.IntImm(var.dtype, 1), lanes)

    def bcast(self, e: tir.PrimExpr) -> tir.PrimExpr:
        """``e`` as a vector of ``lanes`` lanes (a ramp stays a ramp)."""
        n = _lanes(e)
        if n == self.lanes:
            return e
        if n != 1:
            raise _CannotVectorize(f"mixed lane counts {n} and {self.lanes}")
        return tir.Broadcast(e, self.lanes)

    # ---- expressions
    def visit_var_(self, var: tir.Var) -> tir.PrimExpr:
        return self.ramp if var is self.var else var

    def visit_arith_(self, expr: tir.BinaryOp) -> tir.PrimExpr:
        """Ramps survive ``+``, ``-`` and ``*`` by a scalar; everything else is computed lane-wise."""
        a, b = self.visit_expr(expr.a), self.visit_expr(expr.b)
        if a is expr.a and b is expr.b:
            return expr
        kind = type(expr)
        ra, rb = isinstance(a, tir.Ramp), isinstance(b, tir.Ramp)
        sa, sb = _lanes(a) == 1, _lanes(b) == 1
        if kind in (tir.Add, tir.Sub):
            if ra and sb:
                return tir.Ramp(_fold(kind, a.base, b), a.stride, a.lanes)
            if sa and rb:
                if kind is tir.Add:
                    return tir.Ramp(_fold(tir.Add, a, b.base), b.stride, b.lanes)
                negated = _fold(tir.Mul, b.stride, tir.IntImm(b.stride.dtype, -1))
                return tir.Ramp(_fold(tir.Sub, a, b.base), negated, b.lanes)
            if ra and rb:
                return tir.Ramp(_fold(kind, a.base, b.base), _fold(kind, a.stride, b.stride), a.lanes)
        if kind is tir.Mul:
            if ra and sb and as_const_int(b) is not None:
                return tir.Ramp(_fold(tir.Mul, a.base, b), _fold(tir.Mul, a.stride, b), a.lanes)
            if sa and rb and as_const_int(a) is not None:
                return tir.Ramp(_fold(tir.Mul, a, b.base), _fold(tir.Mul, a, b.stride), b.lanes)
        return kind(self.bcast(a), self.bcast(b))

    visit_add_ = visit_sub_ = visit_mul_ = visit_div_ = visit_mod_ = visit_arith_
    visit_floor_div_ = visit_floor_mod_ = visit_min_ = visit_max_ = visit_arith_
    visit_eq_ = visit_ne_ = visit_lt_ = visit_le_ = visit_gt_ = visit_ge_ = visit_arith_
    visit_and_ = visit_or_ = visit_arith_

    def visit_not_(self, expr: tir.Not) -> tir.PrimExpr:
        a = self.visit_expr(expr.a)
        return expr if a is expr.a else tir.Not(a)

    def visit_cast_(self, expr: tir.Cast) -> tir.PrimExpr:
        value = self.visit_expr(expr.value)
        if value is expr.value:
            return expr
        return tir.Cast(parse_dtype(expr.dtype).with_lanes(_lanes(value)), value)

    def visit_select_(self, expr: tir.Select) -> tir.PrimExpr:
        c, t, f = (self.visit_expr(x) for x in (expr.condition, expr.true_value, expr.false_value))
        if c is expr.condition and t is expr.true_value and f is expr.false_value:
            return expr
        return tir.Select(self.bcast(c) if _lanes(c) > 1 else c, self.bcast(t), self.bcast(f))

    def visit_call_(self, call: tir.Call) -> tir.PrimExpr:
        """Intrinsics apply lane-wise (the backend calls their vector forms)."""
        args = tuple(self.visit_expr(a) for a in call.args)
        if all(a is b for a, b in zip(args, call.args)):
            return call
        if not isinstance(call.op, str):
            raise _CannotVectorize(f"call of {call.op}")
        info = intrinsic_of_op(call.op)
        if info is not None and info.scalar_only is not None:
            raise _CannotVectorize(info.scalar_only)
        if info is not None and info.conditional and _lanes(args[0]) > 1 and _has_load(call.args[1:]):
            # A vector condition evaluates both sides in every lane: a guarded load (padding)
            # would read out of bounds. LLVM's vectorizer masks such loads; leave it the loop.
            raise _CannotVectorize("a load guarded by a condition on the lane variable")
        # A condition the same in every lane stays scalar, so that the backend branches on it and
        # the vector load it guards (a padded row's border) is not made at all where it is false.
        keep = 1 if info is not None and info.conditional and _lanes(args[0]) == 1 else 0
        vec = tuple(a if isinstance(a, tir.StringImm) or n < keep else self.bcast(a) for n, a in enumerate(args))
        return tir.Call(parse_dtype(call.dtype).with_lanes(self.lanes), call.op, vec)

    def visit_let_(self, let: tir.Let) -> tir.PrimExpr:
        raise _CannotVectorize("a let inside the loop")

    def visit_ramp_(self, ramp: tir.Ramp) -> tir.PrimExpr:
        raise _CannotVectorize("a ramp inside the loop")

    def visit_broadcast_(self, b: tir.Broadcast) -> tir.PrimExpr:
        raise _CannotVectorize("a broadcast inside the loop")

    def _indices(self, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        """Vectorised indices; an index that is the same in every lane stays scalar."""
        out = []
        for idx in indices:
            v = self.visit_expr(idx)
            if isinstance(v, tir.Broadcast):
                v = v.value
            out.append(v)
        return tuple(out)

    def visit_buffer_load_(self, load: tir.BufferLoad) -> tir.PrimExpr:
        if lanes_of(load.buffer.dtype) > 1:
            raise _CannotVectorize("a vector-typed buffer")
        indices = self._indices(load.indices)
        if all(a is b for a, b in zip(indices, load.indices)):
            return load
        return tir.BufferLoad(load.buffer, indices)

    # ---- statements
    def visit_buffer_store_(self, store: tir.BufferStore) -> tir.Stmt:
        if lanes_of(store.buffer.dtype) > 1:
            raise _CannotVectorize("a vector-typed buffer")
        indices = self._indices(store.indices)
        value = self.visit_expr(store.value)
        if all(_lanes(i) == 1 for i in indices):
            raise _CannotVectorize("every lane stores into one element (a reduction)")
        if any(_lanes(i) not in (1, self.lanes) for i in indices):
            raise _CannotVectorize("an index of another width")
        return tir.BufferStore(store.buffer, self.bcast(value), indices)

    def visit_if_then_else_(self, stmt: tir.IfThenElse) -> tir.Stmt:
        cond = self.visit_expr(stmt.condition)
        if _lanes(cond) > 1:
            raise _CannotVectorize("an if on the lane variable")
        return super().visit_if_then_else_(stmt)

    def visit_for_(self, loop: tir.For) -> tir.Stmt:
        # A unit loop (a 1x1 conv's kh and kw left under the lane loop) is its body at its start.
        if as_const_int(loop.extent) == 1 and loop.step is None:
            return self.visit_stmt(substitute(loop.body, {loop.loop_var: loop.min}))
        raise _CannotVectorize("For")

    def _refuse(self, stmt: tir.Stmt) -> tir.Stmt:
        raise _CannotVectorize(type(stmt).__name__)

    visit_while_ = visit_let_stmt_ = visit_allocate_ = visit_decl_buffer_ = _refuse
    visit_assert_stmt_ = visit_attr_stmt_ = visit_break_ = visit_continue_ = visit_allocate_const_ = _refuse


def _substitute_var(body: tir.Stmt, var: tir.Var, value: tir.PrimExpr) -> tir.Stmt:
    """``body`` for one lane (the odd last piece of a lane count)."""
    return substitute(body, {var: value})


class _LoopVectorizer(StmtExprMutator):
    """Replaces each vectorisable ``T.vectorized`` loop (inner loops first) by its vector body."""

    def visit_for_(self, loop: tir.For) -> tir.Stmt:
        new = super().visit_for_(loop)
        if new.kind != tir.ForKind.VECTORIZED or new.step is not None:
            return new
        lanes = as_const_int(new.extent)
        if lanes is None or not 1 < lanes <= MAX_LANES or as_const_int(new.min) is None:
            return new
        uses = []
        post_order_visit(new.body, lambda n: uses.append(n) if n is new.loop_var else None)
        if not uses:
            return replace(new, kind=tir.ForKind.SERIAL)
        # A lane count that is not a power of two is written as power-of-two pieces (56 = 32 + 16 +
        # 8): LLVM legalises <56 x float> with shuffles and stack spills, the pieces with plain
        # registers.
        start = as_const_int(new.min)
        pieces = []
        offset = 0
        while offset < lanes:
            width = 1 << ((lanes - offset).bit_length() - 1)
            base = tir.IntImm(new.loop_var.dtype, start + offset)
            try:
                if width == 1:
                    pieces.append(_substitute_var(new.body, new.loop_var, base))
                else:
                    pieces.append(_Vectorizer(new.loop_var, base, width).visit_stmt(new.body))
            except _CannotVectorize:
                return new
            offset += width
        return tir.seq(pieces) if len(pieces) > 1 else pieces[0]


def vectorize_loops(func: tir.PrimFunc) -> tir.PrimFunc:
    """``func`` with its vectorisable ``T.vectorized`` loops written on vectors."""
    body = _LoopVectorizer().visit_stmt(func.body)
    return func if body is func.body else replace(func, body=body)


class VectorizeLoop(PrimFuncPass):
    """``T.vectorized`` loops of constant extent (up to MAX_LANES) become vector statements."""

    opt_level = 0

    def transform_function(self, func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        new = vectorize_loops(func)
        if new is not func:
            self.stats["vectorized_functions"] += 1
        return new


register_pass("VectorizeLoop", VectorizeLoop)
