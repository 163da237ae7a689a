"""Scalar expressions of tensor expressions: ``Expr`` gives TIR expressions Python operators
(``A[i] + B[i] * 2``), with TVM's dtype matching and constant folding (``x + 0`` is ``x``), and
the expression functions of ``tvm.te`` (``exp``, ``if_then_else``, ``const``, ``all``...).

The IR's ``tir.PrimExpr`` nodes have no operators (they are plain immutable records), so TE
wraps them; every function here accepts wrapped and bare expressions and Python numbers."""
from __future__ import annotations

from typing import Any, Callable

from ..ir import tir
from ..ir.arith import format_expr
from ..ir.const_fold import fold_binary, fold_cast, fold_choice, fold_logic, fold_not, wrap_int
from ..ir.dtype import parse_dtype
from ..ir.intrinsics import INTRINSICS, Intrinsic
from ..ir.node import node_fields

__all__ = ["Expr", "ExprLike", "as_prim", "wrap", "const", "literal", "cast", "if_then_else", "select", "all", "any",
           "logical_not", "max_value", "min_value", "call_intrin", "UNARY_INTRINSICS", "truncdiv",
           "truncmod", "floordiv", "floormod", "power", "abs", "sign", "ceildiv", "negative", "binary",
           "match_types", "expr_vars"]

ExprLike = Any  # Expr | tir.PrimExpr | int | float | bool


class Expr:
    """A TIR expression with Python operators (``tvm.tir.PrimExpr``'s ``ExprOp`` behaviour)."""

    __slots__ = ("expr",)

    def __init__(self, expr: tir.PrimExpr) -> None:
        self.expr = expr

    @property
    def dtype(self) -> str:
        """The expression's dtype."""
        return self.expr.dtype

    def astype(self, dtype: str) -> "Expr":
        """This expression converted to ``dtype`` (unchanged when it already has it)."""
        return cast(self, dtype)

    def __repr__(self) -> str:
        return f"te.Expr({format_expr(self.expr)})"

    def __hash__(self) -> int:
        return hash(id(self.expr))

    def __bool__(self) -> bool:
        value = self.expr
        if isinstance(value, tir.IntImm):
            return bool(value.value)
        # As TVM's EqualOp: ``a == b`` in a Python condition (or a dict lookup) asks for identity.
        if isinstance(value, tir.EQ):
            return value.a is value.b
        if isinstance(value, tir.NE):
            return value.a is not value.b
        raise ValueError("cannot use a symbolic expression as a Python bool "
                         "(use te.if_then_else or te.all/te.any)")

    def __index__(self) -> int:
        if isinstance(self.expr, tir.IntImm):
            return self.expr.value
        raise TypeError("a symbolic expression has no Python integer value")

    # ---- arithmetic
    def __add__(self, o: ExprLike) -> "Expr":
        return binary(tir.Add, self, o)

    def __radd__(self, o: ExprLike) -> "Expr":
        return binary(tir.Add, o, self)

    def __sub__(self, o: ExprLike) -> "Expr":
        return binary(tir.Sub, self, o)

    def __rsub__(self, o: ExprLike) -> "Expr":
        return binary(tir.Sub, o, self)

    def __mul__(self, o: ExprLike) -> "Expr":
        return binary(tir.Mul, self, o)

    def __rmul__(self, o: ExprLike) -> "Expr":
        return binary(tir.Mul, o, self)

    def __truediv__(self, o: ExprLike) -> "Expr":
        return binary(tir.Div, self, o)

    def __rtruediv__(self, o: ExprLike) -> "Expr":
        return binary(tir.Div, o, self)

    def __floordiv__(self, o: ExprLike) -> "Expr":
        return binary(tir.FloorDiv, self, o)

    def __rfloordiv__(self, o: ExprLike) -> "Expr":
        return binary(tir.FloorDiv, o, self)

    def __mod__(self, o: ExprLike) -> "Expr":
        return binary(tir.FloorMod, self, o)

    def __rmod__(self, o: ExprLike) -> "Expr":
        return binary(tir.FloorMod, o, self)

    def __pow__(self, o: ExprLike) -> "Expr":
        return power(self, o)

    def __rpow__(self, o: ExprLike) -> "Expr":
        return power(o, self)

    def __neg__(self) -> "Expr":
        # Python's ``-x`` on a TVM expression multiplies by -1 (``neg``, ``0 - x``, is C++'s).
        if self.dtype.startswith(("int", "float", "bfloat")) and not isinstance(self.expr, (tir.IntImm, tir.FloatImm)):
            return binary(tir.Mul, self, literal(-1, self.dtype))
        return negative(self)

    # ---- comparisons (expressions, as in TVM)
    def __lt__(self, o: ExprLike) -> "Expr":
        return binary(tir.LT, self, o)

    def __le__(self, o: ExprLike) -> "Expr":
        return binary(tir.LE, self, o)

    def __gt__(self, o: ExprLike) -> "Expr":
        return binary(tir.GT, self, o)

    def __ge__(self, o: ExprLike) -> "Expr":
        return binary(tir.GE, self, o)

    def __eq__(self, o: ExprLike) -> "Expr":  # type: ignore[override]
        return binary(tir.EQ, self, o)

    def __ne__(self, o: ExprLike) -> "Expr":  # type: ignore[override]
        return binary(tir.NE, self, o)

    # ---- logic and bits: And/Or on bools, bitwise intrinsics on integers
    def __and__(self, o: ExprLike) -> "Expr":
        return _logic_or_bits(tir.And, "tir.bitwise_and", self, o)

    def __rand__(self, o: ExprLike) -> "Expr":
        return _logic_or_bits(tir.And, "tir.bitwise_and", o, self)

    def __or__(self, o: ExprLike) -> "Expr":
        return _logic_or_bits(tir.Or, "tir.bitwise_or", self, o)

    def __ror__(self, o: ExprLike) -> "Expr":
        return _logic_or_bits(tir.Or, "tir.bitwise_or", o, self)

    def __xor__(self, o: ExprLike) -> "Expr":
        a, b = match_types(self, o)
        if a.dtype == "bool":
            return wrap(tir.NE(a, b))
        return call_intrin(a.dtype, "tir.bitwise_xor", a, b)

    def __lshift__(self, o: ExprLike) -> "Expr":
        a, b = match_types(self, o)
        return call_intrin(a.dtype, "tir.shift_left", a, b)

    def __rshift__(self, o: ExprLike) -> "Expr":
        a, b = match_types(self, o)
        return call_intrin(a.dtype, "tir.shift_right", a, b)

    def __invert__(self) -> "Expr":
        if self.dtype == "bool":
            return logical_not(self)
        return call_intrin(self.dtype, "tir.bitwise_not", self)


# ---------------------------------------------------------------- conversion
def expr_vars(e: Any) -> list[tir.Var]:
    """The variables an expression uses (not those of buffers it loads from), each once, in order."""
    out: list[tir.Var] = []
    _collect_vars(e, out)
    return out


def _collect_vars(x: Any, out: list[tir.Var]) -> None:
    """Append the variables of ``x`` not yet in ``out`` (a module function: a recursive closure
    would be a reference cycle left to the garbage collector)."""
    if isinstance(x, tir.Var):
        if x not in out:  # IR nodes compare by identity
            out.append(x)
    elif isinstance(x, tir.PrimExpr):
        for f in node_fields(type(x)):
            v = getattr(x, f)
            for item in v if isinstance(v, tuple) else (v,):
                if isinstance(item, tir.PrimExpr):
                    _collect_vars(item, out)


def wrap(value: ExprLike) -> Expr:
    """``value`` as an Expr (Python numbers become literals: int32, float32 or bool)."""
    if isinstance(value, Expr):
        return value
    return Expr(as_prim(value))


def as_prim(value: ExprLike, dtype: str | None = None) -> tir.PrimExpr:
    """The bare TIR expression of ``value``; Python numbers become literals of ``dtype``
    (by default int32, float32 or bool, as TVM converts them)."""
    if isinstance(value, Expr):
        return value.expr
    if isinstance(value, tir.PrimExpr):
        return value
    to_prim = getattr(value, "to_prim", None)  # a TE axis
    if to_prim is not None:
        return to_prim()
    if isinstance(value, (bool, int, float)) or hasattr(value, "dtype") and hasattr(value, "item"):
        return literal(value.item() if hasattr(value, "item") else value, dtype)
    raise TypeError(f"cannot use a {type(value).__name__} as a tensor expression")


def literal(value: bool | int | float, dtype: str | None) -> tir.PrimExpr:
    """A literal of ``dtype`` (or the default dtype of the Python value)."""
    if dtype is None:
        dtype = "bool" if isinstance(value, bool) else "int32" if isinstance(value, int) else "float32"
    d = parse_dtype(dtype)
    if d.is_float:
        return tir.FloatImm(dtype, float(value))
    if d.is_bool:
        return tir.IntImm("bool", int(bool(value)))
    if isinstance(value, float):
        if value != int(value):
            raise ValueError(f"{value} is not an integer, so it cannot be a {dtype} literal")
        value = int(value)
    return tir.IntImm(dtype, wrap_int(int(value), dtype))


def const(value: bool | int | float, dtype: str | None = None) -> Expr:
    """``te.const``/``tir.const``: a literal (int32, float32 or bool unless ``dtype`` is given)."""
    return Expr(literal(value, dtype))


def _is_python_number(value: Any) -> bool:
    """True for a Python bool, int or float."""
    return isinstance(value, (bool, int, float)) and not isinstance(value, Expr)


def _operand_for(value: ExprLike, other: tir.PrimExpr) -> tir.PrimExpr:
    """A Python number converted next to ``other``: it takes ``other``'s dtype when it fits."""
    d = parse_dtype(other.dtype)
    if isinstance(value, bool):
        return tir.IntImm("bool", int(value)) if d.is_bool else literal(int(value), other.dtype)
    if isinstance(value, int):
        return literal(value, other.dtype if (d.is_integer or d.is_float) else None)
    return literal(value, other.dtype if d.is_float else "float32")


def match_types(a: ExprLike, b: ExprLike) -> tuple[tir.PrimExpr, tir.PrimExpr]:
    """Both operands in one dtype (TVM's BinaryOpMatchTypes): numbers take the other side's
    dtype, ints meet floats as floats, narrower types widen."""
    if _is_python_number(a) and not _is_python_number(b):
        pb = as_prim(b)
        pa = _operand_for(a, pb)
    elif _is_python_number(b) and not _is_python_number(a):
        pa = as_prim(a)
        pb = _operand_for(b, pa)
    else:
        pa, pb = as_prim(a), as_prim(b)
    if pa.dtype == pb.dtype:
        return pa, pb
    da, db = parse_dtype(pa.dtype), parse_dtype(pb.dtype)
    if da.is_float != db.is_float:
        return (cast(pa, pb.dtype).expr, pb) if db.is_float else (pa, cast(pb, pa.dtype).expr)
    if da.is_bool != db.is_bool:
        return (cast(pa, pb.dtype).expr, pb) if da.is_bool else (pa, cast(pb, pa.dtype).expr)
    if da.bits < db.bits:
        return cast(pa, pb.dtype).expr, pb
    if db.bits < da.bits:
        return pa, cast(pb, pa.dtype).expr
    raise TypeError(f"cannot combine {pa.dtype} and {pb.dtype} in one expression")


def cast(value: ExprLike, dtype: str) -> Expr:
    """``value`` converted to ``dtype``: literals are converted, other values wrapped in a Cast."""
    e = as_prim(value)
    if e.dtype == dtype:
        return wrap(e)
    folded = fold_cast(e, dtype, ieee_exact=False)
    return Expr(folded if folded is not None else tir.Cast(dtype, e))


# ---------------------------------------------------------------- folding (TVM's TryConstFold)
# The rules are ir/const_fold.py's, as TVM's operator construction applies them (x + 0.0 is x);
# te's T.truncmod of two literals stays as written.
def binary(cls: type, a: ExprLike, b: ExprLike) -> Expr:
    """``cls(a, b)`` with matched dtypes, folded as TVM folds it."""
    pa, pb = match_types(a, b)
    folded = fold_binary(cls, pa, pb, ieee_exact=False, truncmod=False)
    return Expr(folded if folded is not None else cls(pa, pb))


def _logic_or_bits(logic: type, bits: str, a: ExprLike, b: ExprLike) -> Expr:
    """``a & b`` / ``a | b``: logical on bools, bitwise intrinsics on integers."""
    pa, pb = match_types(a, b)
    if pa.dtype != "bool":
        return call_intrin(pa.dtype, bits, pa, pb)
    return Expr(_logic(logic, pa, pb))


def _logic(cls: type, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """And/Or, folded when an operand is a literal."""
    folded = fold_logic(cls, a, b)
    return folded if folded is not None else cls(a, b)


def negative(x: ExprLike) -> Expr:
    """``-x``: a negated literal, else ``0 - x`` (TVM's ``neg``)."""
    e = as_prim(x)
    if isinstance(e, tir.IntImm):
        return Expr(tir.IntImm(e.dtype, wrap_int(-e.value, e.dtype)))
    if isinstance(e, tir.FloatImm):
        return Expr(tir.FloatImm(e.dtype, -e.value))
    return Expr(tir.Sub(literal(0, e.dtype), e))


# ---------------------------------------------------------------- expression functions
def call_intrin(dtype: str, name: str, *args: ExprLike) -> Expr:
    """A call of intrinsic ``name`` (``"tir.exp"``) returning ``dtype``."""
    return Expr(tir.Call(dtype, name, tuple(as_prim(a) for a in args)))


def _float_arg(x: ExprLike) -> tir.PrimExpr:
    """A math intrinsic's operand: integer literals become float32 (``te.exp(1)``)."""
    e = as_prim(x)
    if isinstance(e, tir.IntImm) and e.dtype == "int32":
        return tir.FloatImm("float32", float(e.value))
    return e


def _constructor(info: Intrinsic) -> Callable[..., Expr]:
    """The ``te.<name>`` function of a float intrinsic: ``tir.<name>`` on the operand (integer
    literals as float32) or on the two operands brought to one dtype, of the table's result dtype."""

    def unary(x: ExprLike) -> Expr:
        e = _float_arg(x)
        return Expr(tir.Call(info.result_dtype(e.dtype), info.op, (e,)))

    def binary(a: ExprLike, b: ExprLike) -> Expr:
        pa, pb = match_types(a, b)
        return Expr(tir.Call(info.result_dtype(pa.dtype), info.op, (pa, pb)))

    fn = unary if info.arity == 1 else binary
    fn.__name__ = info.name
    fn.__doc__ = f"``T.{info.name}({', '.join('xy'[:info.arity])})`` elementwise."
    return fn


# The math intrinsics of ``tvm.te`` / ``tvm.tir`` that map one-to-one onto ``tir.<name>`` calls
# (``te.exp``, ``te.isnan``, ``te.fmod``...), generated from the table: one per float intrinsic.
# UNARY_INTRINSICS are those of one operand and its dtype.
INTRINSIC_FUNCTIONS = tuple(name for name, info in INTRINSICS.items() if info.args == "float")
UNARY_INTRINSICS = tuple(name for name in INTRINSIC_FUNCTIONS
                         if INTRINSICS[name].arity == 1 and INTRINSICS[name].result == "same")
globals().update({name: _constructor(INTRINSICS[name]) for name in INTRINSIC_FUNCTIONS})
__all__ += ["INTRINSIC_FUNCTIONS", *INTRINSIC_FUNCTIONS]


def abs(x: ExprLike) -> Expr:  # noqa: A001 - TVM's name
    """``|x|``: ``T.fabs`` on floats, a Select on integers (as TVM's ``abs``)."""
    e = as_prim(x)
    d = parse_dtype(e.dtype)
    if d.is_float:
        return fabs(e)  # noqa: F821 - generated from the intrinsics table above
    if d.is_uint or d.is_bool:
        return wrap(e)
    zero = literal(0, e.dtype)
    return Expr(tir.Select(tir.GE(e, zero), e, tir.Sub(zero, e)))


def sign(x: ExprLike) -> Expr:
    """-1, 0 or 1 in ``x``'s dtype (TVM's topi ``sign``)."""
    e = as_prim(x)
    zero, one, minus = (literal(v, e.dtype) for v in (0, 1, -1))
    return Expr(tir.Select(tir.LT(zero, e), one, tir.Select(tir.LT(e, zero), minus, zero)))


def power(a: ExprLike, b: ExprLike) -> Expr:
    """``a ** b`` (``T.pow``)."""
    pa, pb = match_types(a, b)
    return Expr(tir.Call(pa.dtype, "tir.pow", (pa, pb)))


def truncdiv(a: ExprLike, b: ExprLike) -> Expr:
    """Integer division rounding towards zero (``T.Div``)."""
    return binary(tir.Div, a, b)


def truncmod(a: ExprLike, b: ExprLike) -> Expr:
    """The remainder of ``truncdiv`` (``T.truncmod``)."""
    return binary(tir.Mod, a, b)


def floordiv(a: ExprLike, b: ExprLike) -> Expr:
    """Integer division rounding down (``//``)."""
    return binary(tir.FloorDiv, a, b)


def floormod(a: ExprLike, b: ExprLike) -> Expr:
    """The remainder of ``floordiv`` (``%``)."""
    return binary(tir.FloorMod, a, b)


def ceildiv(a: ExprLike, b: ExprLike) -> Expr:
    """``(a + b - 1) // b``."""
    return floordiv(wrap(a) + b - 1, b)


def if_then_else(cond: ExprLike, t: ExprLike, f: ExprLike) -> Expr:
    """``T.if_then_else(cond, t, f)``: only the chosen side is evaluated; a constant condition folds."""
    c = as_prim(cond, "bool")
    picked = fold_choice(c, t, f)
    if picked is not None:
        return wrap(picked)
    pt, pf = match_types(t, f)
    return Expr(tir.Call(pt.dtype, "tir.if_then_else", (c, pt, pf)))


def select(cond: ExprLike, t: ExprLike, f: ExprLike) -> Expr:
    """``T.Select(cond, t, f)``: both sides are evaluated."""
    pt, pf = match_types(t, f)
    return Expr(tir.Select(as_prim(cond, "bool"), pt, pf))


def all(*conds: ExprLike) -> Expr:  # noqa: A001 - TVM's name
    """The conjunction of boolean expressions (``True`` for none)."""
    out: tir.PrimExpr = tir.IntImm("bool", 1)
    for c in conds:
        out = _logic(tir.And, out, as_prim(c, "bool"))
    return Expr(out)


def any(*conds: ExprLike) -> Expr:  # noqa: A001 - TVM's name
    """The disjunction of boolean expressions (``False`` for none)."""
    out: tir.PrimExpr = tir.IntImm("bool", 0)
    for c in conds:
        out = _logic(tir.Or, out, as_prim(c, "bool"))
    return Expr(out)


def logical_not(x: ExprLike) -> Expr:
    """``not x``."""
    e = as_prim(x, "bool")
    folded = fold_not(e)
    return Expr(folded if folded is not None else tir.Not(e))


def max_value(dtype: str) -> Expr:
    """The largest value of ``dtype``."""
    d = parse_dtype(dtype)
    if d.is_float:
        import numpy as np

        return Expr(tir.FloatImm(dtype, float(np.finfo(dtype).max)))
    if d.is_bool:
        return Expr(tir.IntImm("bool", 1))
    return Expr(tir.IntImm(dtype, (1 << (d.bits - (1 if d.is_int else 0))) - 1))


def min_value(dtype: str) -> Expr:
    """The smallest value of ``dtype``."""
    d = parse_dtype(dtype)
    if d.is_float:
        import numpy as np

        return Expr(tir.FloatImm(dtype, float(np.finfo(dtype).min)))
    if d.is_bool:
        return Expr(tir.IntImm("bool", 0))
    return Expr(tir.IntImm(dtype, -(1 << (d.bits - 1)) if d.is_int else 0))
