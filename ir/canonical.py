"""The normal form TVM's ``te.create_prim_func`` gives a compute's value: it runs TVM's
arithmetic simplifier (``Analyzer.Simplify``) on every stored value, so TVM's legalized
PrimFuncs print index arithmetic and comparisons in that simplifier's canonical forms. This
module computes those forms, as TVM's outputs show them (not TVM's algorithm):

- Integer sums are flattened into terms ``index % upper // lower * scale`` (a "split") and a
  constant. Terms are ordered by scale, then lower factor, then upper factor (largest first,
  ties in order of appearance); the positive terms come first, then the constant when
  positive, then the negative terms subtracted, then a negative constant subtracted:
  ``x - (b + c)`` is ``x - b - c``, ``8 + x * -3`` is ``8 - x * 3``, ``x + n * 2`` is
  ``n * 2 + x``. A lone term prints as ``index * scale`` (``x * -1`` stays).
- Floor division and modulo by positive constants merge into the splits:
  ``x // 4 // 3 % 2`` is ``x % 24 // 12``, ``(x * 4 + y) // 4`` is ``y // 4 + x``, ``x % 1``
  is 0. Symbolic divisors stay as written.
- Products of non-constant factors are one term whose constant factors move to the scale:
  ``x * (b * 2)`` is ``x * b * 2``; ``2 * x`` is ``x * 2``; ``(x + y) * 2`` distributes.
- Comparisons: ``a > b`` is ``b < a`` and ``a >= b`` is ``b <= a`` (every dtype); on
  integers the constants of both sides are balanced onto one side with a positive sign
  (``x + 3 < y + 5`` is ``x < y + 2``), ``x < y + 1`` is ``x <= y``, ``a <= b`` is the
  negation of ``b < a`` so normalised, ``not (x < y)`` is ``y <= x`` and ``3 == x`` is
  ``x == 3``; ``not`` goes inside ``and``/``or`` (De Morgan) and turns ``==`` into ``!=``.

Float arithmetic is left as built: the v0.23 outputs this matches keep ``x / 1.0``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import tir
from .arith import expr_key
from .dtype import parse_dtype
from .functor import Mutator

__all__ = ["canonical_simplify"]

_INF = None  # an upper factor of "no modulo"


def _is_int(dtype: str) -> bool:
    """True for a scalar signed or unsigned integer dtype (not bool)."""
    try:
        d = parse_dtype(dtype)
    except ValueError:
        return False
    return d.is_integer and not d.is_bool and d.lanes == 1


@dataclass
class _Split:
    """``index % upper // lower * scale`` (``upper`` None: no modulo)."""

    index: tir.PrimExpr
    lower: int = 1
    upper: int | None = _INF
    scale: int = 1

    def same_term(self, other: "_Split") -> bool:
        """True when the two differ at most in their scale."""
        return (self.lower, self.upper) == (other.lower, other.upper) and expr_key(self.index) == expr_key(other.index)

    def to_expr(self, sign: int = 1) -> tir.PrimExpr:
        """The term's expression, its scale multiplied by ``sign``."""
        dtype = self.index.dtype
        e = self.index
        if self.upper is not _INF:
            e = tir.FloorMod(e, tir.IntImm(dtype, self.upper))
        if self.lower != 1:
            e = tir.FloorDiv(e, tir.IntImm(dtype, self.lower))
        scale = self.scale * sign
        return e if scale == 1 else tir.Mul(e, tir.IntImm(dtype, scale))


@dataclass
class _Sum:
    """A sum of splits plus a constant."""

    dtype: str
    args: list[_Split]
    base: int = 0
    # Built by + or - (TVM's SumExpr): a lone negative term prints ``0 - x``, not ``x * -1``.
    is_sum: bool = False

    def add(self, split: _Split, times: int = 1) -> None:
        """Add ``times`` times ``split`` (merging it with an equal term)."""
        for i, a in enumerate(self.args):
            if a.same_term(split):
                scale = a.scale + split.scale * times
                if scale == 0:
                    del self.args[i]
                else:
                    self.args[i] = _Split(a.index, a.lower, a.upper, scale)
                return
        if split.scale * times != 0:
            self.args.append(_Split(split.index, split.lower, split.upper, split.scale * times))

    def add_sum(self, other: "_Sum", times: int = 1) -> None:
        """Add ``times`` times another sum."""
        for a in other.args:
            self.add(a, times)
        self.base += other.base * times

    def scaled(self, c: int) -> "_Sum":
        """The sum multiplied by the constant ``c``."""
        if c == 0:
            return _Sum(self.dtype, [], 0)
        return _Sum(self.dtype, [_Split(a.index, a.lower, a.upper, a.scale * c) for a in self.args], self.base * c,
                    self.is_sum)

    def as_const(self) -> int | None:
        """The value of a constant sum, else None."""
        return self.base if not self.args else None

    def lone_split(self) -> _Split | None:
        """The sum's one term when it is exactly one term (no constant)."""
        return self.args[0] if len(self.args) == 1 and self.base == 0 else None

    def to_expr(self) -> tir.PrimExpr:
        """The normal-form expression."""
        dtype = self.dtype
        if not self.args:
            return tir.IntImm(dtype, self.base)
        lone = self.lone_split()
        if lone is not None and (lone.scale > 0 or not self.is_sum):
            return lone.to_expr()
        # Stable sort: larger scales, then larger lower and upper factors first.
        order = sorted(self.args, key=lambda a: (-a.scale, -a.lower, -(a.upper if a.upper is not _INF else 1 << 62)))
        res: tir.PrimExpr | None = None
        for a in order:
            if a.scale > 0:
                t = a.to_expr()
                res = t if res is None else tir.Add(res, t)
        if self.base > 0:
            c = tir.IntImm(dtype, self.base)
            res = c if res is None else tir.Add(res, c)
        for a in order:
            if a.scale < 0:
                res = tir.Sub(res if res is not None else tir.IntImm(dtype, 0), a.to_expr(-1))
        if self.base < 0:
            res = tir.Sub(res if res is not None else tir.IntImm(dtype, 0), tir.IntImm(dtype, -self.base))
        assert res is not None
        return res


def _split_of(s: _Sum) -> _Split:
    """The sum as one split (its normal form as the index when it is not one term)."""
    lone = s.lone_split()
    return lone if lone is not None and (lone.scale > 0 or not s.is_sum) else _Split(s.to_expr())


def _div_split(t: _Split, c: int) -> _Split:
    """``t // c`` for a constant ``c > 0``, as one split."""
    if t.scale % c == 0:
        return _Split(t.index, t.lower, t.upper, t.scale // c)
    if t.scale > 0 and c % t.scale == 0:
        k = c // t.scale
        if t.upper is _INF or t.upper % (t.lower * k) == 0:
            return _Split(t.index, t.lower * k, t.upper, 1)
        if t.upper <= t.lower * k:
            return _Split(tir.IntImm(t.index.dtype, 0), 1, _INF, 0)
        index = tir.FloorMod(t.index, tir.IntImm(t.index.dtype, t.upper))
        return _Split(index, t.lower * k, _INF, 1)
    # Any other scale: the term as written becomes the index (a scale of 1 never gets here).
    return _Split(t.to_expr(), c, _INF, 1)


def _mod_split(t: _Split, c: int) -> _Split:
    """``t % c`` for a constant ``c > 0``, as one split."""
    if t.scale % c == 0:
        return _Split(t.index, t.lower, t.upper, 0)
    if t.scale > 0 and c % t.scale == 0:
        upper = t.lower * (c // t.scale)
        if t.upper is not _INF and upper < t.upper:
            inner = _mod_split(_Split(t.index), upper)
            out = _div_split(inner, t.lower) if t.lower != 1 else inner
            return _Split(out.index, out.lower, out.upper, out.scale * t.scale)
        return _Split(t.index, t.lower, upper, t.scale)
    return _Split(t.to_expr(), 1, c, 1)  # as in _div_split: a scale of 1 never gets here


class _Canonical(Mutator):
    """Rewrites an expression bottom-up into the normal form (see the module docstring)."""

    def visit_buffer_(self, buf: tir.Buffer) -> tir.Buffer:
        """Buffers are kept: their shapes are declarations, not computed values."""
        return buf

    # ------------------------------------------------------------ integer arithmetic
    def to_sum(self, e: tir.PrimExpr) -> _Sum:
        """The canonical sum of an integer expression."""
        dtype = e.dtype
        if isinstance(e, tir.IntImm):
            return _Sum(dtype, [], e.value)
        if isinstance(e, (tir.Add, tir.Sub)):
            s = self.to_sum(e.a)
            s.add_sum(self.to_sum(e.b), 1 if isinstance(e, tir.Add) else -1)
            s.is_sum = True
            return s
        if isinstance(e, tir.Mul):
            return self._mul(e)
        if isinstance(e, (tir.FloorDiv, tir.FloorMod)) and isinstance(e.b, tir.IntImm) and e.b.value > 0:
            return self._divmod(type(e), self.to_sum(e.a), e.b.value)
        # An atom: its operands are simplified, the node kept.
        return _Sum(dtype, [_Split(self.generic_visit(e) if not isinstance(e, tir.Var) else e)])

    def _mul(self, e: tir.Mul) -> _Sum:
        """A product: a constant factor scales the sum, other factors make one term."""
        a, b = self.to_sum(e.a), self.to_sum(e.b)
        ca, cb = a.as_const(), b.as_const()
        if cb is not None:
            return a.scaled(cb)
        if ca is not None:
            return b.scaled(ca)
        fa, fb = self._monomial(a), self._monomial(b)
        if fa is not None and fb is not None:
            index = fa[0] if fb[0] is None else (fb[0] if fa[0] is None else tir.Mul(fa[0], fb[0]))
            return _Sum(e.dtype, [_Split(index, 1, _INF, fa[1] * fb[1])])
        return _Sum(e.dtype, [_Split(tir.Mul(a.to_expr(), b.to_expr()))])

    @staticmethod
    def _monomial(s: _Sum) -> tuple[Any, int] | None:
        """(product of factors, coefficient) of a one-term sum without division, else None."""
        t = s.lone_split()
        if t is None or t.lower != 1 or t.upper is not _INF:
            return None
        return t.index, t.scale

    def _divmod(self, kind: type, s: _Sum, c: int) -> _Sum:
        """``s // c`` or ``s % c``: the parts that are multiples of ``c`` leave the operation."""
        whole = _Sum(s.dtype, [], 0)
        rest = _Sum(s.dtype, [], 0, s.is_sum)
        for a in s.args:
            (whole if a.scale % c == 0 else rest).add(a)
        if s.base % c == 0:
            whole.base = s.base
        else:
            rest.base = s.base
        if kind is tir.FloorDiv:
            out = whole.scaled(1)
            out.args = [_Split(a.index, a.lower, a.upper, a.scale // c) for a in out.args]
            out.base = whole.base // c
            k = rest.as_const()
            if k is not None:
                out.base += k // c
            elif rest.args or rest.base:
                out.add(_div_split(_split_of(rest), c))
            out.is_sum = s.is_sum
            return out
        k = rest.as_const()
        if k is not None:
            return _Sum(s.dtype, [], k % c)
        return _Sum(s.dtype, [_mod_split(_split_of(rest), c)])

    def _int_arith(self, e: tir.PrimExpr) -> tir.PrimExpr:
        """The normal form of an integer arithmetic node."""
        if not _is_int(e.dtype):
            return self.generic_visit(e)
        return self.to_sum(e).to_expr()

    visit_add_ = visit_sub_ = visit_mul_ = visit_floor_div_ = visit_floor_mod_ = _int_arith

    # ------------------------------------------------------------ comparisons
    def visit_gt_(self, e: tir.GT) -> tir.PrimExpr:
        """``a > b`` is ``b < a``."""
        return self.visit(tir.LT(e.b, e.a))

    def visit_ge_(self, e: tir.GE) -> tir.PrimExpr:
        """``a >= b`` is ``b <= a``."""
        return self.visit(tir.LE(e.b, e.a))

    def visit_lt_(self, e: tir.LT) -> tir.PrimExpr:
        """Integer ``a < b`` with the constants balanced; ``x < y + 1`` is ``x <= y``."""
        if not _is_int(e.a.dtype):
            return self.generic_visit(e)
        return self._lt(self.to_sum(e.a), self.to_sum(e.b))

    def visit_le_(self, e: tir.LE) -> tir.PrimExpr:
        """Integer ``a <= b`` is ``not (b < a)`` in normal form."""
        if not _is_int(e.a.dtype):
            return self.generic_visit(e)
        return _negate(self._lt(self.to_sum(e.b), self.to_sum(e.a)))

    def _lt(self, a: _Sum, b: _Sum) -> tir.PrimExpr:
        """``a < b`` with the constant difference moved to one side, positive."""
        k = b.base - a.base
        a, b = _Sum(a.dtype, list(a.args), 0), _Sum(b.dtype, list(b.args), 0)
        if k > 0:
            b.base = k
        elif k < 0:
            a.base = -k
        if b.base == 1 and b.args:
            b.base = 0
            return tir.LE(a.to_expr(), b.to_expr())
        return tir.LT(a.to_expr(), b.to_expr())

    def visit_eq_(self, e: tir.EQ) -> tir.PrimExpr:
        """An integer constant left operand moves to the right: ``3 == x`` is ``x == 3``."""
        return self._eq(e, tir.EQ)

    def visit_ne_(self, e: tir.NE) -> tir.PrimExpr:
        """As ``==``."""
        return self._eq(e, tir.NE)

    def _eq(self, e: tir.CmpOp, cls: type) -> tir.PrimExpr:
        a, b = self.visit(e.a), self.visit(e.b)
        if isinstance(a, tir.IntImm) and not isinstance(b, tir.IntImm) and _is_int(a.dtype):
            a, b = b, a
        return e if a is e.a and b is e.b else cls(a, b)

    def visit_not_(self, e: tir.Not) -> tir.PrimExpr:
        """``not`` goes inside: the opposite comparison, De Morgan's laws, ``not not x`` is ``x``."""
        inner = self.visit(e.a)
        out = _negate(inner)
        return e if isinstance(out, tir.Not) and out.a is e.a else out


def _negate(c: tir.PrimExpr) -> tir.PrimExpr:
    """``not c``, pushed inside comparisons (integer ``<``/``<=`` swapped), ``and``/``or`` and
    ``not``."""
    # On floats ``not (a < b)`` is not ``b <= a`` (NaN): only integer orderings flip.
    if isinstance(c, tir.LT) and _is_int(c.a.dtype):
        return tir.LE(c.b, c.a)
    if isinstance(c, tir.LE) and _is_int(c.a.dtype):
        return tir.LT(c.b, c.a)
    if isinstance(c, tir.EQ):
        return tir.NE(c.a, c.b)
    if isinstance(c, tir.NE):
        return tir.EQ(c.a, c.b)
    if isinstance(c, tir.Not):
        return c.a
    if isinstance(c, tir.And):
        return tir.Or(_negate(c.a), _negate(c.b))
    if isinstance(c, tir.Or):
        return tir.And(_negate(c.a), _negate(c.b))
    return tir.Not(c)


def canonical_simplify(expr: tir.PrimExpr) -> tir.PrimExpr:
    """``expr`` in the normal form TVM's ``create_prim_func`` gives stored values."""
    return _Canonical().visit(expr)
