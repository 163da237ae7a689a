"""Small integer index arithmetic on TIR expressions, as used by shape inference.

``simplify`` brings integer expressions to a canonical sum of products (so ``n * 2`` and
``2 * n``, or ``(n + 1) - 1`` and ``n``, become the same tree), folds constants with the
expression's dtype and applies the few division/min/max rules shape arithmetic needs.
Variables are matched by identity, never by name.
"""
from __future__ import annotations

import contextvars
import functools
from typing import Any, Callable, Iterable

from . import tir
from .bounds import Bound, IntervalRelaxer
from .const_fold import fold_choice, fold_ints, int_imm, wrap_int
from .dtype import parse_dtype
from .node import Node, node, node_fields
from .scalar_ops import COMPARISONS
from .stmt_functor import substitute

__all__ = ["as_dtype", "simplify", "can_prove_equal", "can_prove_not_equal", "can_prove_ge", "as_const_int",
           "is_const_int", "prod", "total", "int64", "to_dim", "to_dims", "ceildiv", "format_expr",
           "format_shape", "IndexMap", "expr_key", "Analyzer"]


# ---------------------------------------------------------------- constants and dims
def int64(value: int) -> tir.IntImm:
    """An ``int64`` literal, the dtype of every Relax shape dimension."""
    return tir.IntImm("int64", int(value))


def to_dim(value: Any) -> tir.PrimExpr:
    """A shape dimension from an int or a PrimExpr (ints become int64 literals)."""
    if isinstance(value, tir.PrimExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a shape dimension must be an int or a PrimExpr, got {type(value).__name__}")
    return int64(value)


def to_dims(values: Iterable[Any]) -> tuple[tir.PrimExpr, ...]:
    """Shape dimensions from ints and PrimExprs."""
    return tuple(to_dim(v) for v in values)


def as_const_int(expr: Any) -> int | None:
    """The value of an integer constant (after simplification), else None."""
    if isinstance(expr, bool):
        return int(expr)
    if isinstance(expr, int):
        return expr
    if isinstance(expr, tir.IntImm):
        return expr.value
    if isinstance(expr, tir.PrimExpr) and _is_int_dtype(expr.dtype):
        folded = simplify(expr)
        if isinstance(folded, tir.IntImm):
            return folded.value
    return None


def is_const_int(expr: Any, value: int | None = None) -> bool:
    """True when ``expr`` is an integer constant (equal to ``value`` when given)."""
    got = as_const_int(expr)
    return got is not None and (value is None or got == value)


def as_dtype(expr: tir.PrimExpr, dtype: str) -> tir.PrimExpr:
    """``expr`` in ``dtype``: unchanged when it has it, an integer literal retyped, anything else cast."""
    if expr.dtype == dtype:
        return expr
    if isinstance(expr, tir.IntImm):
        return tir.IntImm(dtype, expr.value)
    return tir.Cast(dtype, expr)


@functools.lru_cache(maxsize=None)
def _is_int_dtype(dtype: str) -> bool:
    """True for scalar integer and bool dtypes (the ones simplify folds)."""
    try:
        d = parse_dtype(dtype)
    except ValueError:
        return False
    return (d.is_integer or d.is_bool) and d.lanes == 1


# ---------------------------------------------------------------- structural keys
def expr_key(expr: Any) -> Any:
    """A hashable key equal for structurally identical expressions (variables by identity)."""
    if isinstance(expr, tir.Var):
        return ("var", id(expr))
    if isinstance(expr, tir.IntImm):
        return ("int", expr.dtype, expr.value)
    if isinstance(expr, Node):
        parts: list[Any] = [type(expr).__name__]
        for name in node_fields(type(expr)):
            parts.append(expr_key(getattr(expr, name)))
        return tuple(parts)
    if isinstance(expr, tuple):
        return tuple(expr_key(e) for e in expr)
    return expr


def _atom_order(expr: tir.PrimExpr) -> tuple:
    """Sort key of an atom: variables by name first, then other expressions by their text."""
    if isinstance(expr, tir.Var):
        return (0, expr.name, id(expr))
    return (1, format_expr(expr), 0)


# ---------------------------------------------------------------- polynomials
# A polynomial maps a monomial (a sorted tuple of atom keys; () is the constant term) to its
# integer coefficient.  Atoms are variables or expressions simplify cannot look into.
class _Poly:
    """An integer polynomial over atoms, with the dtype of the expression it came from."""

    __slots__ = ("terms", "atoms", "dtype")

    def __init__(self, dtype: str, terms: dict[tuple, int] | None = None,
                 atoms: dict[Any, tir.PrimExpr] | None = None) -> None:
        self.dtype = dtype
        self.terms = {k: v for k, v in (terms or {}).items() if v != 0}
        self.atoms = atoms or {}

    @staticmethod
    def const(value: int, dtype: str) -> "_Poly":
        """A constant polynomial."""
        return _Poly(dtype, {(): value})

    @staticmethod
    def atom(expr: tir.PrimExpr) -> "_Poly":
        """The polynomial ``1 * expr``."""
        key = expr_key(expr)
        return _Poly(expr.dtype, {(key,): 1}, {key: expr})

    def const_value(self) -> int | None:
        """The value when the polynomial is a constant, else None."""
        if not self.terms:
            return 0
        if set(self.terms) == {()}:
            return self.terms[()]
        return None

    def add(self, other: "_Poly", sign: int = 1) -> "_Poly":
        """``self + sign * other``."""
        terms = dict(self.terms)
        for k, v in other.terms.items():
            terms[k] = terms.get(k, 0) + sign * v
        return _Poly(self.dtype, terms, {**self.atoms, **other.atoms})

    def mul(self, other: "_Poly") -> "_Poly":
        """``self * other`` (expanded)."""
        # By a constant (most index products): scale; the monomials stay as they are.
        c = other.const_value()
        if c is not None:
            return _Poly(self.dtype, {k: v * c for k, v in self.terms.items()}, self.atoms)
        c = self.const_value()
        if c is not None:
            return _Poly(self.dtype, {k: c * v for k, v in other.terms.items()}, other.atoms)
        terms: dict[tuple, int] = {}
        for k1, v1 in self.terms.items():
            for k2, v2 in other.terms.items():
                k = tuple(sorted(k1 + k2, key=repr))
                terms[k] = terms.get(k, 0) + v1 * v2
        return _Poly(self.dtype, terms, {**self.atoms, **other.atoms})

    def divisible_by(self, c: int, with_const: bool = True) -> bool:
        """True when every coefficient (optionally but the constant) is a multiple of ``c``."""
        return all(v % c == 0 for k, v in self.terms.items() if with_const or k != ())

    def to_expr(self) -> tir.PrimExpr:
        """The canonical expression: terms by degree and name, constant last."""
        dtype = self.dtype
        const = wrap_int(self.terms.get((), 0), dtype)
        mono = [(k, v) for k, v in self.terms.items() if k != ()]
        mono.sort(key=lambda kv: (len(kv[0]), [_atom_order(self.atoms[a]) for a in kv[0]]))

        def term(key: tuple, coef: int) -> tir.PrimExpr:
            factors = sorted((self.atoms[a] for a in key), key=_atom_order)
            out = factors[0]
            for f in factors[1:]:
                out = tir.Mul(out, f)
            return out if coef == 1 else tir.Mul(out, int_imm(coef, dtype))

        if not mono:
            return int_imm(const, dtype)
        # Lead with a positive term so that ``n - 1`` and ``1 - n`` read naturally.
        lead_idx = next((i for i, (_, v) in enumerate(mono) if v > 0), None)
        if lead_idx is not None:
            key, coef = mono.pop(lead_idx)
            acc = term(key, coef)
        elif const > 0:
            acc, const = int_imm(const, dtype), 0
        else:
            key, coef = mono.pop(0)
            acc = term(key, coef)
        for key, coef in mono:
            acc = tir.Sub(acc, term(key, -coef)) if coef < 0 else tir.Add(acc, term(key, coef))
        if const > 0:
            acc = tir.Add(acc, int_imm(const, dtype))
        elif const < 0:
            acc = tir.Sub(acc, int_imm(-const, dtype))
        return acc


def _to_poly(expr: tir.PrimExpr) -> _Poly:
    """The canonical polynomial of an integer expression."""
    if isinstance(expr, tir.IntImm):
        return _Poly.const(expr.value, expr.dtype)
    if isinstance(expr, (tir.Add, tir.Sub)):
        a, b = _to_poly(expr.a), _to_poly(expr.b)
        return a.add(b, 1 if isinstance(expr, tir.Add) else -1)
    if isinstance(expr, tir.Mul):
        return _to_poly(expr.a).mul(_to_poly(expr.b))
    if isinstance(expr, (tir.FloorDiv, tir.FloorMod, tir.Div, tir.Mod)):
        return _div_poly(expr)
    if isinstance(expr, (tir.Min, tir.Max)):
        a, b = simplify(expr.a), simplify(expr.b)
        a_le_b = _sign_known(_to_poly(a).add(_to_poly(b), -1))
        if a_le_b is not None:
            pick_a = a_le_b == isinstance(expr, tir.Min)
            return _to_poly(a if pick_a else b)
        if isinstance(a, tir.IntImm):
            a, b = b, a  # commutative: the constant goes last, as in ``T.min(n, 3)``
        return _Poly.atom(type(expr)(a, b))
    if isinstance(expr, tir.Cast) and _is_int_dtype(expr.value.dtype):
        inner = simplify(expr.value)
        if isinstance(inner, tir.IntImm):
            return _Poly.const(inner.value, expr.dtype)
        return _Poly.atom(tir.Cast(expr.dtype, inner))
    if isinstance(expr, tir.Var):
        return _Poly.atom(expr)
    return _Poly.atom(_simplify_children(expr))


def _div_poly(expr: tir.BinaryOp) -> _Poly:
    """Division and remainder: fold constants, divide exactly when every coefficient allows."""
    a, b = _to_poly(expr.a), simplify(expr.b)
    dtype = expr.dtype
    cb = b.value if isinstance(b, tir.IntImm) else None
    ca = a.const_value()
    if cb is not None and cb != 0:
        if ca is not None:
            return _Poly.const(fold_ints(type(expr), ca, cb), dtype)
        is_div = isinstance(expr, (tir.FloorDiv, tir.Div))
        if cb == 1:
            return a if is_div else _Poly.const(0, dtype)
        # Floor semantics hold for any sign; truncated ones only when the dividend is a
        # multiple (then both agree).
        if a.divisible_by(cb):
            return (_Poly(dtype, {k: v // cb for k, v in a.terms.items()}, a.atoms) if is_div
                    else _Poly.const(0, dtype))
        if isinstance(expr, tir.FloorMod) and a.divisible_by(cb, with_const=False):
            return _Poly.const(a.terms.get((), 0) % cb, dtype)
        if isinstance(expr, tir.FloorDiv) and a.divisible_by(cb, with_const=False):
            # (c*x + k) // c == x + k // c for floor division.
            rest = {k: v // cb for k, v in a.terms.items() if k != ()}
            rest[()] = a.terms.get((), 0) // cb
            return _Poly(dtype, rest, a.atoms)
        in_ranges = _divide_in_ranges(a, cb, type(expr))
        if in_ranges is not None:
            return in_ranges
    return _Poly.atom(type(expr)(a.to_expr(), b))


def _simplify_children(expr: tir.PrimExpr) -> tir.PrimExpr:
    """``expr`` with its operand sub-expressions simplified (for nodes that are not folded)."""
    if isinstance(expr, tir.CmpOp):
        a, b = simplify(expr.a), simplify(expr.b)
        if _is_int_dtype(a.dtype) and _is_int_dtype(b.dtype):
            diff = _to_poly(a).add(_to_poly(b), -1)
            value = diff.const_value()
            if value is not None:
                return tir.IntImm("bool", int(COMPARISONS[type(expr)](value, 0)))
            decided = _compare_by_bounds(type(expr), diff)
            if decided is not None:
                return tir.IntImm("bool", int(decided))
        return type(expr)(a, b)
    if isinstance(expr, tir.BinaryOp):
        return type(expr)(simplify(expr.a), simplify(expr.b))
    if isinstance(expr, tir.Select):
        cond = simplify(expr.condition)
        picked = fold_choice(cond, expr.true_value, expr.false_value)
        if picked is not None:
            return simplify(picked)
        return tir.Select(cond, simplify(expr.true_value), simplify(expr.false_value))
    return expr


# ---------------------------------------------------------------- known ranges (Analyzer)
# The ranges of the variables an Analyzer knows, seen by the folding rules while it simplifies.
_BOUNDS: contextvars.ContextVar[dict[tir.Var, tuple[int, int]] | None] = contextvars.ContextVar(
    "tvmlite_arith_bounds", default=None)

Interval = tuple[int, int]  # inclusive [lo, hi]


def _mul_interval(a: Interval, b: Interval) -> Interval:
    """The range of ``x * y`` for ``x`` in ``a`` and ``y`` in ``b``."""
    corners = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(corners), max(corners)


def _atom_bounds(expr: tir.PrimExpr, bounds: dict[tir.Var, Interval]) -> Interval | None:
    """The range of an atom of a polynomial (a variable, or a division simplify kept)."""
    if isinstance(expr, tir.IntImm):
        return expr.value, expr.value
    if isinstance(expr, tir.Var):
        return bounds.get(expr)
    if isinstance(expr, (tir.FloorDiv, tir.FloorMod)) and isinstance(expr.b, tir.IntImm) and expr.b.value > 0:
        c = expr.b.value
        inner = _poly_bounds(_to_poly(expr.a), bounds)
        if isinstance(expr, tir.FloorDiv):
            return None if inner is None else (inner[0] // c, inner[1] // c)
        if inner is not None and inner[0] // c == inner[1] // c:
            return inner[0] % c, inner[1] % c  # the range does not wrap around
        return 0, c - 1
    if isinstance(expr, (tir.Min, tir.Max)):
        a, b = _poly_bounds(_to_poly(expr.a), bounds), _poly_bounds(_to_poly(expr.b), bounds)
        if a is None or b is None:
            return None
        pick = min if isinstance(expr, tir.Min) else max
        return pick(a[0], b[0]), pick(a[1], b[1])
    return None


def _poly_bounds(poly: _Poly, bounds: dict[tir.Var, Interval] | None) -> Interval | None:
    """The range of a polynomial over the known variable ranges (None when unbounded)."""
    if not bounds:
        value = poly.const_value()
        return None if value is None else (value, value)
    lo = hi = 0
    for key, coef in poly.terms.items():
        term = (coef, coef)
        for atom in key:
            atom_range = _atom_bounds(poly.atoms[atom], bounds)
            if atom_range is None:
                return None
            term = _mul_interval(term, atom_range)
        lo, hi = lo + term[0], hi + term[1]
    return lo, hi


def _sign_known(diff: _Poly) -> bool | None:
    """True when ``diff <= 0`` always holds, False when ``diff >= 0`` does, else None."""
    bound = _poly_bounds(diff, _BOUNDS.get())
    if bound is None:
        return None
    if bound[1] <= 0:
        return True
    return False if bound[0] >= 0 else None


def _compare_by_bounds(cmp: type, diff: _Poly) -> bool | None:
    """The value of ``a <cmp> b`` from the range of ``a - b``, when the range decides it."""
    bound = _poly_bounds(diff, _BOUNDS.get())
    if bound is None:
        return None
    lo, hi = bound
    decided = {tir.LT: (hi < 0, lo >= 0), tir.LE: (hi <= 0, lo > 0), tir.GT: (lo > 0, hi <= 0),
               tir.GE: (lo >= 0, hi < 0), tir.EQ: (lo == hi == 0, lo > 0 or hi < 0),
               tir.NE: (lo > 0 or hi < 0, lo == hi == 0)}[cmp]
    return True if decided[0] else False if decided[1] else None


def _divide_in_ranges(a: _Poly, c: int, kind: type) -> _Poly | None:
    """``a // c`` or ``a % c`` (``kind``) using the known ranges, or None when they do not help.

    Writing ``a = c * q + r`` (``q`` from the coefficients that are multiples of ``c``): when
    ``r`` is provably in ``[0, c)`` the quotient is ``q`` and the remainder ``r``; otherwise
    floor division still gives ``q + r // c`` and ``r % c`` when the constant term is a
    multiple too. The truncated operators agree with the floor ones when ``a`` is provably
    non-negative.
    """
    bounds = _BOUNDS.get()
    if not bounds or c <= 0:
        return None
    if kind in (tir.Div, tir.Mod):
        whole = _poly_bounds(a, bounds)
        if whole is None or whole[0] < 0:
            return None
        kind = tir.FloorDiv if kind is tir.Div else tir.FloorMod
    quotient: dict[tuple, int] = {}
    remainder: dict[tuple, int] = {}
    for key, coef in a.terms.items():
        if key == ():
            quotient[()], remainder[()] = divmod(coef, c)
        elif coef % c == 0:
            quotient[key] = coef // c
        else:
            remainder[key] = coef
    q, r = _Poly(a.dtype, quotient, a.atoms), _Poly(a.dtype, remainder, a.atoms)
    r_range = _poly_bounds(r, bounds)
    if r_range is not None and 0 <= r_range[0] and r_range[1] < c:
        return q if kind is tir.FloorDiv else r
    if remainder.get((), 0):
        # Only whole multiples leave the division: (n - 1) // 2 stays as written.
        quotient[()], remainder[()] = 0, a.terms.get((), 0)
        q, r = _Poly(a.dtype, quotient, a.atoms), _Poly(a.dtype, remainder, a.atoms)
    if not q.terms:
        return None
    rest = _Poly.atom(kind(r.to_expr(), tir.IntImm(a.dtype, c)))
    return q.add(rest) if kind is tir.FloorDiv else rest


class Analyzer:
    """Simplification that knows the ranges of some variables (a small ``tvm.arith.Analyzer``):
    with ``i`` in ``[0, 16)``, ``i // 16`` is 0, ``(j * 16 + i) % 16`` is ``i`` and ``i < 16`` is
    True. Only constant ranges are used."""

    def __init__(self) -> None:
        self.bounds: dict[tir.Var, Interval] = {}

    def bind(self, var: tir.Var, min_value: tir.PrimExpr, extent: tir.PrimExpr) -> Interval | None:
        """Record that ``var`` lies in ``[min_value, min_value + extent)``; returns the previous
        range (for ``restore``). Non-constant ranges are not recorded."""
        previous = self.bounds.get(var)
        lo, n = as_const_int(min_value), as_const_int(extent)
        if lo is not None and n is not None and n > 0:
            self.bounds[var] = (lo, lo + n - 1)
        return previous

    def restore(self, var: tir.Var, previous: Interval | None) -> None:
        """Forget ``var``'s range (put back the one ``bind`` returned)."""
        if previous is None:
            self.bounds.pop(var, None)
        else:
            self.bounds[var] = previous

    def simplify(self, expr: Any) -> tir.PrimExpr:
        """``simplify(expr)`` using the known ranges."""
        token = _BOUNDS.set(self.bounds)
        try:
            return simplify(expr)
        finally:
            _BOUNDS.reset(token)

    def const_int_bound(self, expr: tir.PrimExpr) -> Interval | None:
        """The inclusive range of an integer expression, when the known ranges bound it."""
        if not _is_int_dtype(expr.dtype):
            return None
        return _poly_bounds(_to_poly(self.simplify(expr)), self.bounds)

    def can_prove(self, cond: tir.PrimExpr) -> bool:
        """True when ``cond`` simplifies to true."""
        out = self.simplify(cond)
        return isinstance(out, tir.IntImm) and bool(out.value)


def simplify(expr: Any) -> tir.PrimExpr:
    """A canonical, constant-folded form of ``expr`` (ints become int64 literals)."""
    if not isinstance(expr, tir.PrimExpr):
        return to_dim(expr)
    if isinstance(expr, (tir.IntImm, tir.Var, tir.FloatImm, tir.StringImm)):
        return expr
    if not _is_int_dtype(expr.dtype) or isinstance(expr, tir.CmpOp):
        return _simplify_children(expr)
    return _to_poly(expr).to_expr()


def _difference(a: Any, b: Any) -> int | None:
    """``a - b`` when it is a constant, else None."""
    a, b = to_dim(a), to_dim(b)
    if not (_is_int_dtype(a.dtype) and _is_int_dtype(b.dtype)):
        return None
    return _to_poly(a).add(_to_poly(b), -1).const_value()


def can_prove_equal(a: Any, b: Any) -> bool:
    """True when ``a == b`` holds for every value of the variables (ints allowed)."""
    if a is b:
        return True
    if _difference(a, b) == 0:
        return True
    return expr_key(simplify(to_dim(a))) == expr_key(simplify(to_dim(b)))


def can_prove_not_equal(a: Any, b: Any) -> bool:
    """True when ``a != b`` provably (their difference is a non-zero constant)."""
    diff = _difference(a, b)
    return diff is not None and diff != 0


def can_prove_ge(a: Any, b: Any) -> bool:
    """True when ``a >= b`` provably (only through a constant difference)."""
    diff = _difference(a, b)
    return diff is not None and diff >= 0


def prod(dims: Iterable[Any], dtype: str = "int64") -> tir.PrimExpr:
    """The simplified product of shape dimensions (1 for none)."""
    acc: tir.PrimExpr = tir.IntImm(dtype, 1)
    for d in dims:
        acc = tir.Mul(acc, to_dim(d))
    return simplify(acc)


def total(dims: Iterable[Any], dtype: str = "int64") -> tir.PrimExpr:
    """The simplified sum of shape dimensions (0 for none)."""
    acc: tir.PrimExpr = tir.IntImm(dtype, 0)
    for d in dims:
        acc = tir.Add(acc, to_dim(d))
    return simplify(acc)


def ceildiv(a: Any, b: Any) -> tir.PrimExpr:
    """``(a + b - 1) // b``, simplified."""
    a, b = to_dim(a), to_dim(b)
    one = tir.IntImm(a.dtype, 1)
    return simplify(tir.FloorDiv(tir.Sub(tir.Add(a, b), one), b))


# ---------------------------------------------------------------- text (for error messages)
_PREC = {tir.Add: 1, tir.Sub: 1, tir.Mul: 2, tir.FloorDiv: 2, tir.FloorMod: 2, tir.Div: 2}


def format_expr(expr: Any) -> str:
    """Short infix text of an index expression, for error messages (``n * 2 + 1``)."""
    if isinstance(expr, int):
        return str(expr)
    if isinstance(expr, tir.IntImm):
        return ("True" if expr.value else "False") if expr.dtype == "bool" else str(expr.value)
    if isinstance(expr, tir.FloatImm):
        return repr(expr.value)
    if isinstance(expr, tir.Var):
        return expr.name
    if isinstance(expr, tir.BinaryOp):
        prec = _PREC.get(type(expr))
        if prec is None or expr.op_text is None:
            return f"T.{expr.script_name}({format_expr(expr.a)}, {format_expr(expr.b)})"

        def side(e: Any, right: bool) -> str:
            p = _PREC.get(type(e), 3)
            text = format_expr(e)
            return f"({text})" if p < prec or (right and p == prec) else text

        return f"{side(expr.a, False)} {expr.op_text} {side(expr.b, True)}"
    if isinstance(expr, tir.Cast):
        return f"T.Cast(\"{expr.dtype}\", {format_expr(expr.value)})"
    return type(expr).__name__


def format_shape(shape: Iterable[Any] | None) -> str:
    """A shape as text, ``(n, 128)``; ``(10,)`` for one dimension; ``(?)`` when unknown."""
    if shape is None:
        return "(?)"
    dims = [format_expr(d) for d in shape]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"


# ---------------------------------------------------------------- index maps
@node
class IndexMap(Node):
    """A map from indices to indices (``T.index_map(lambda i, j: (j, i))``), used by
    ``R.layout_transform``."""

    initial_indices: tuple[tir.Var, ...]
    final_indices: tuple[tir.PrimExpr, ...]

    @staticmethod
    def from_func(fn: Callable[..., Any], ndim: int | None = None, dtype: str = "int64") -> "IndexMap":
        """Build from a Python function of index variables (its parameter names name them)."""
        import inspect

        names = list(inspect.signature(fn).parameters)
        if ndim is not None and len(names) != ndim:
            raise ValueError(f"the index map takes {len(names)} indices, the tensor has {ndim} dimensions")
        args = tuple(tir.Var(name, dtype) for name in names)
        out = fn(*(_Index(a) for a in args))
        if not isinstance(out, (tuple, list)):
            out = (out,)
        return IndexMap(args, tuple(_Index.unwrap(e, dtype) for e in out))

    def map_indices(self, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        """The final indices at ``indices``, in the dtype of ``indices`` (a map written over int32
        indices applied to int64 loop variables has its literals retyped, so no operation mixes them)."""
        if len(indices) != len(self.initial_indices):
            raise ValueError(f"the index map takes {len(self.initial_indices)} indices, got {len(indices)}")
        mapping = {id(v): i for v, i in zip(self.initial_indices, indices)}
        dtype = indices[0].dtype if indices else "int64"
        return tuple(_retype_index(e, mapping, dtype) for e in self.final_indices)

    def map_shape(self, shape: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...] | None:
        """The shape of the mapped tensor (extent of each final index), or None when unknown."""
        if len(shape) != len(self.initial_indices):
            return None
        ranges = {id(v): (int64(0), simplify(tir.Sub(d, int64(1)))) for v, d in zip(self.initial_indices, shape)}
        out = []
        for e in self.final_indices:
            bound = _ShapeRelaxer(ranges).relax_bounds(e)
            if bound is None:
                return None
            out.append(simplify(tir.Add(bound[1], int64(1))))
        return tuple(out)


def _retype_index(expr: tir.PrimExpr, mapping: dict[int, tir.PrimExpr], dtype: str) -> tir.PrimExpr:
    """``expr`` with the variables in ``mapping`` (by id) replaced and its integer arithmetic in ``dtype``."""
    if isinstance(expr, tir.Var):
        return as_dtype(mapping[id(expr)], dtype) if id(expr) in mapping else as_dtype(expr, dtype)
    if isinstance(expr, tir.IntImm):
        return tir.IntImm(dtype, expr.value)
    if isinstance(expr, (tir.Add, tir.Sub, tir.Mul, tir.Div, tir.Mod, tir.FloorDiv, tir.FloorMod,
                         tir.Min, tir.Max)):
        a, b = _retype_index(expr.a, mapping, dtype), _retype_index(expr.b, mapping, dtype)
        return type(expr)(a, b)
    # Anything else keeps its own dtypes: its indices are cast to theirs, its value to ``dtype``.
    return as_dtype(substitute(expr, lambda v: as_dtype(mapping[id(v)], v.dtype) if id(v) in mapping else None),
                    dtype)


class _Index:
    """A PrimExpr with Python operators, so index maps can be written as Python lambdas."""

    __slots__ = ("expr",)

    def __init__(self, expr: tir.PrimExpr) -> None:
        self.expr = expr

    @staticmethod
    def unwrap(value: Any, dtype: str) -> tir.PrimExpr:
        """The PrimExpr of an operand (ints become literals of ``dtype``)."""
        if isinstance(value, _Index):
            return value.expr
        if isinstance(value, int) and not isinstance(value, bool):
            return tir.IntImm(dtype, value)
        if isinstance(value, tir.PrimExpr):
            return value
        raise TypeError(f"an index map must return index expressions, got {type(value).__name__}")

    def _bin(self, cls: type, other: Any, reverse: bool = False) -> "_Index":
        """``self <op> other`` (or reversed) as a node of class ``cls``."""
        rhs = _Index.unwrap(other, self.expr.dtype)
        return _Index(cls(rhs, self.expr) if reverse else cls(self.expr, rhs))

    def __add__(self, o: Any) -> "_Index":
        return self._bin(tir.Add, o)

    def __radd__(self, o: Any) -> "_Index":
        return self._bin(tir.Add, o, True)

    def __sub__(self, o: Any) -> "_Index":
        return self._bin(tir.Sub, o)

    def __rsub__(self, o: Any) -> "_Index":
        return self._bin(tir.Sub, o, True)

    def __mul__(self, o: Any) -> "_Index":
        return self._bin(tir.Mul, o)

    def __rmul__(self, o: Any) -> "_Index":
        return self._bin(tir.Mul, o, True)

    def __floordiv__(self, o: Any) -> "_Index":
        return self._bin(tir.FloorDiv, o)

    def __mod__(self, o: Any) -> "_Index":
        return self._bin(tir.FloorMod, o)


class _ShapeRelaxer(IntervalRelaxer):
    """Bounds of an index map's final indices over the shape of the mapped tensor: every
    variable is an initial index, and bounds are int64 (Relax shape dimensions) and folded."""

    def __init__(self, ranges: dict[int, Bound]) -> None:
        self.ranges = ranges  # initial index id -> (0, dim - 1)

    def var_bound(self, v: tir.Var) -> Bound | None:
        return self.ranges.get(id(v))

    def literal(self, e: tir.IntImm) -> Bound:
        return int64(e.value), int64(e.value)

    def fold(self, e: tir.PrimExpr) -> tir.PrimExpr:
        return simplify(e)

    def const_int(self, e: tir.PrimExpr) -> int | None:
        return as_const_int(e)

    def scale_literal(self, c: int, written: tir.PrimExpr, dtype: str) -> tir.PrimExpr:
        return int64(c)

    def wrap_range(self, e: tir.FloorMod, inner: Bound, c: int, k: tir.PrimExpr) -> Bound | None:
        return int64(0), int64(c - 1)
