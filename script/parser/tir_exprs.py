"""TIR expressions: Python operators and ``T.*`` expression functions to PrimExpr nodes, with
TVMScript's literal typing (a bare int is int32, or the other operand's int dtype) and without
constant folding (``1 + 2`` stays ``Add(1, 2)``). Shared by TIR bodies and Relax shapes."""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import numpy as np

from ...ir import relax as rx
from ...ir import tir
from ...ir.arith import IndexMap, simplify
from ...ir.dtype import is_valid_dtype, parse_dtype
from ...ir.intrinsics import INTRINSICS, Intrinsic
from ..syntax import nodes as ast
from .exprs import KNOWN_DTYPES, Evaluator, Sig, attr_value, describe, handles, number_text
from .scope import suggest
from .values import Namespace

__all__ = ["TirEvaluator", "buffer_region_to_load"]

_TYPE_SUFFIX = re.compile(r"^(i\d+|f\d+|bf16|p\d+|v\d+[if]\d+|nx?v\d+[if]\d+)$")
_DTYPE_LIKE = re.compile(r"^(u?int|float|bfloat|bool|handle)\d*(x\d+)?$")

# Python operator -> (node class or intrinsic op). Intrinsics become tir.Call nodes.
_BINOPS: dict[str, Any] = {
    "+": tir.Add, "-": tir.Sub, "*": tir.Mul, "/": tir.Div, "//": tir.FloorDiv, "%": tir.FloorMod,
    **{sym: INTRINSICS[name].op for sym, name in (("**", "pow"), ("&", "bitwise_and"), ("|", "bitwise_or"),
                                                 ("^", "bitwise_xor"), ("<<", "shift_left"), (">>", "shift_right"))},
}
_CMPOPS: dict[str, type] = {"<": tir.LT, "<=": tir.LE, ">": tir.GT, ">=": tir.GE, "==": tir.EQ, "!=": tir.NE}

# T.<name>(a, b) constructor forms and their node classes.
_CONSTRUCTORS: dict[str, type] = {
    "Add": tir.Add, "Sub": tir.Sub, "Mul": tir.Mul, "Div": tir.Div, "Mod": tir.Mod,
    "FloorDiv": tir.FloorDiv, "FloorMod": tir.FloorMod, "Min": tir.Min, "Max": tir.Max,
    "EQ": tir.EQ, "NE": tir.NE, "LT": tir.LT, "LE": tir.LE, "GT": tir.GT, "GE": tir.GE,
    "And": tir.And, "Or": tir.Or, "floordiv": tir.FloorDiv, "floormod": tir.FloorMod,
    "truncdiv": tir.Div, "truncmod": tir.Mod, "max": tir.Max, "min": tir.Min,
}

# The intrinsics T.<name>(...) builds generically from their table entry (T.exp(x) is
# tir.Call(x.dtype, "tir.exp", (x,))).
_MATH = {name: info for name, info in INTRINSICS.items()
         if info.kind == "math" and info.args in ("float", "int") and info.arity <= 2}
# The intrinsics whose script form is not their operands (T.reinterpret(dtype, x), T.likely(c),
# T.call_extern(dtype, "f", *args)...): built by the ``_parse_<form>`` method their entry names.
_PARSED = {info.script_name: info for info in INTRINSICS.values() if info.parse is not None}
# The other builtins read as their operands (``T.call_llvm_pure_intrin(dtype, "llvm.ctpop", ...)``,
# ``T.address_of(A[0])``), by their script name and by their op name.
_OPERANDS = {n: info for info in INTRINSICS.values()
             if info.kind == "builtin" and info.parse is None and info.statement is None and info.arity != 0
             for n in {info.script_name, info.name}}


def buffer_region_to_load(region: tir.BufferRegion) -> tir.BufferLoad | None:
    """A sliced buffer access read as a (vector) load: ``A[0:4]`` is ``A[T.Ramp(0, 1, 4)]``."""
    indices = []
    for r in region.region:
        if not isinstance(r.extent, tir.IntImm) or r.extent.value <= 0:
            return None
        n = r.extent.value
        indices.append(r.min if n == 1 else tir.Ramp(r.min, tir.IntImm(r.min.dtype, 1), n))
    return tir.BufferLoad(region.buffer, tuple(indices))


def _minus(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """``b - a`` for extents (a range, not user arithmetic): simplified as TVM's parser does
    (``Analyzer.simplify(stop - start)``), so ``A[i * 4:i * 4 + 4]`` and ``range(n, n + 4)``
    have extent 4, which is how the printer writes such ranges."""
    if isinstance(a, tir.IntImm) and isinstance(b, tir.IntImm):
        return tir.IntImm(b.dtype, b.value - a.value)
    if isinstance(a, tir.IntImm) and a.value == 0:
        return b
    if a.dtype == b.dtype:
        return simplify(tir.Sub(b, a))
    return tir.Sub(b, a)


class TirEvaluator(Evaluator):
    """Expressions of TIR bodies: PrimExprs, buffers and the ``T.*`` expression functions."""

    default_int = "int32"

    def return_type(self, node: Any) -> str | None:
        """The dtype of ``-> T.float32`` (None for no annotation or ``-> None``)."""
        if node is None:
            return None
        value = self.eval(node)
        if value is None:
            return None
        if isinstance(value, Namespace) and value.dialect == "T" and (value.leaf == "handle" or is_valid_dtype(value.leaf)):
            return value.leaf
        self.error(node, f"a TIR return type must be a dtype such as T.int32, got {describe(value)}")


    # ---------------------------------------------------------------- conversion
    def prim(self, node: Any, dtype: str | None = None) -> tir.PrimExpr:
        """Evaluate ``node`` as a PrimExpr (bare literals get ``dtype`` or the default)."""
        return self.to_prim(node, self.eval(node), dtype)

    def to_prim(self, node: Any, value: Any, dtype: str | None = None) -> tir.PrimExpr:
        """``value`` (evaluated from ``node``) as a PrimExpr."""
        if isinstance(value, tir.PrimExpr):
            return value
        if isinstance(value, bool):
            return tir.IntImm("bool", int(value))
        if isinstance(value, int):
            return self._literal(node, value, dtype or self.default_int)
        if isinstance(value, float):
            return tir.FloatImm(dtype if dtype and parse_dtype(dtype).is_float else "float32", value)
        if isinstance(value, tir.BufferRegion):
            load = buffer_region_to_load(value)
            if load is not None:
                return load
            extents = ", ".join(r.extent.script() for r in value.region
                                if not (isinstance(r.extent, tir.IntImm) and r.extent.value > 0))
            self.error(node, "a buffer slice read as a value needs a constant positive length, but "
                             f"stop - start is {extents}")
        if isinstance(value, rx.PrimValue):
            return value.value
        if isinstance(value, str):
            return tir.StringImm(value)
        if isinstance(value, tir.Buffer):
            self.error(node, f"the buffer {value.name} is used as a value; index it, e.g. {value.name}[i]")
        if isinstance(value, tir.IterVar):
            return value.var
        self.error(node, f"expected a TIR expression, got {describe(value)}")

    def _literal(self, node: Any, value: int, dtype: str) -> tir.PrimExpr:
        """An int literal of ``dtype`` (range-checked)."""
        d = parse_dtype(dtype)
        if d.is_float:
            try:
                return tir.FloatImm(dtype, float(value))
            except OverflowError:
                self.error(node, f"{number_text(value)} is too large for {dtype}")
        if d.is_bool:
            return tir.IntImm("bool", int(bool(value)))
        if d.is_integer and d.lanes == 1:
            lo, hi = (-(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1) if d.is_int else (0, (1 << d.bits) - 1)
            if not lo <= value <= hi:
                self.error(node, f"{number_text(value)} is out of the range of {dtype} ({lo} to {hi})")
        return tir.IntImm(dtype, value)

    def _typed(self, node: Any, value: Any, other: tir.PrimExpr) -> tir.PrimExpr:
        """A bare literal typed after the other operand of a binary operation."""
        d = parse_dtype(other.dtype)
        elem = d.element
        if isinstance(value, bool):
            out: tir.PrimExpr = tir.IntImm("bool", int(value))
        elif isinstance(value, int):
            out = self._literal(node, value, elem if (d.is_integer or d.is_float) else self.default_int)
        elif isinstance(value, float):
            out = tir.FloatImm(elem if d.is_float else "float32", value)
        else:
            return self.to_prim(node, value)
        if d.lanes > 1 and out.dtype == elem:
            return tir.Broadcast(out, d.lanes)
        return out

    def operands(self, node: Any, lnode: Any, a: Any, rnode: Any, b: Any) -> tuple[tir.PrimExpr, tir.PrimExpr]:
        """Two operands as PrimExprs of one dtype (literals typed after the other side)."""
        a_prim = isinstance(a, tir.PrimExpr)
        b_prim = isinstance(b, tir.PrimExpr)
        if not a_prim and not b_prim:
            if isinstance(a, float) or isinstance(b, float):
                return self.to_prim(lnode, a, "float32"), self.to_prim(rnode, b, "float32")
            return self.to_prim(lnode, a), self.to_prim(rnode, b)
        if not a_prim:
            a = self._typed(lnode, a, b) if isinstance(a, (int, float)) else self.to_prim(lnode, a)
        if not b_prim:
            b = self._typed(rnode, b, a) if isinstance(b, (int, float)) else self.to_prim(rnode, b)
        if a.dtype != b.dtype:
            a, b = self.match_dtypes(node, a, b)
        return a, b

    def match_dtypes(self, node: Any, a: tir.PrimExpr, b: tir.PrimExpr) -> tuple[tir.PrimExpr, tir.PrimExpr]:
        """Promote two PrimExprs to a common dtype as TVM does (wider int; int to float)."""
        try:
            da, db = parse_dtype(a.dtype), parse_dtype(b.dtype)
        except ValueError:
            self.error(node, f"cannot combine values of dtypes {a.dtype} and {b.dtype}")
        if da.lanes != db.lanes:
            if da.lanes == 1:
                a = tir.Broadcast(a, db.lanes)
            elif db.lanes == 1:
                b = tir.Broadcast(b, da.lanes)
            else:
                self.error(node, f"cannot combine vectors of {da.lanes} and {db.lanes} lanes")
            da, db = parse_dtype(a.dtype), parse_dtype(b.dtype)
            if a.dtype == b.dtype:
                return a, b
        if da.is_handle or db.is_handle:
            self.error(node, f"cannot combine values of dtypes {a.dtype} and {b.dtype}")
        if da.is_float and not db.is_float:
            return a, _cast(a.dtype, b)
        if db.is_float and not da.is_float:
            return _cast(b.dtype, a), b
        if da.is_bool != db.is_bool:
            return (a, _cast(a.dtype, b)) if db.is_bool else (_cast(b.dtype, a), b)
        if da.code != db.code and da.is_integer and db.is_integer:
            bits = max(da.bits, db.bits)
            target = f"int{bits}" if da.lanes == 1 else f"int{bits}x{da.lanes}"
            return _cast(target, a), _cast(target, b)
        return (a, _cast(a.dtype, b)) if da.bits >= db.bits else (_cast(b.dtype, a), b)

    # ---------------------------------------------------------------- operators
    def visit_BinOp(self, node: Any) -> Any:
        """``a + b`` etc."""
        a = self.eval(node.left)
        b = self.eval(node.right)
        return self.binop(node, node.op, node.left, a, node.right, b)

    def binop(self, node: Any, op: str, lnode: Any, a: Any, rnode: Any, b: Any) -> Any:
        """``a <op> b`` on TIR values."""
        if isinstance(a, str) and isinstance(b, str) and op == "+":
            return a + b
        kind = _BINOPS.get(op)
        if kind is None:
            self.error(node, f"the operator {op} is not supported on TIR values")
        x, y = self.operands(node, lnode, a, rnode, b)
        if isinstance(kind, str):
            return tir.Call(x.dtype, kind, (x, y))
        return kind(x, y)

    def visit_UnaryOp(self, node: Any) -> Any:
        """``-x``, ``not x``, ``~x``."""
        return self.unary(node, self.eval(node.operand))

    def unary(self, node: Any, value: Any) -> Any:
        """``node.op`` applied to the already evaluated operand ``value``."""
        op = node.op
        if op == "not":
            if isinstance(value, (bool, int)) and not isinstance(value, tir.PrimExpr):
                return not value
            return tir.Not(self.to_prim(node.operand, value))
        if op == "+":
            return value
        if op == "-":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value
            x = self.to_prim(node.operand, value)
            if isinstance(x, tir.IntImm) and x.dtype != "bool":
                return tir.IntImm(x.dtype, -x.value)
            if isinstance(x, tir.FloatImm):
                return tir.FloatImm(x.dtype, -x.value)
            zero = tir.FloatImm(x.dtype, 0.0) if parse_dtype(x.dtype).is_float else tir.IntImm(x.dtype, 0)
            return tir.Sub(zero, x)
        if op == "~":
            x = self.to_prim(node.operand, value)
            return tir.Call(x.dtype, INTRINSICS["bitwise_not"].op, (x,))
        self.error(node, f"the operator {op} is not supported on TIR values")

    def visit_Compare(self, node: Any) -> Any:
        """A comparison; a chain ``a < b < c`` is an And."""
        return self.compare_chain(node, self.eval(node.left))

    def compare_chain(self, node: Any, left: Any) -> Any:
        """The comparison ``node`` whose left operand evaluated to ``left``."""
        left_node = node.left
        result: tir.PrimExpr | None = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node)
            cmp = self.compare(node, op, left_node, left, right_node, right)
            result = cmp if result is None else tir.And(result, cmp)
            left_node, left = right_node, right
        return result

    def compare(self, node: Any, op: str, lnode: Any, a: Any, rnode: Any, b: Any) -> Any:
        """``a <op> b`` for one comparison of a chain."""
        cls = _CMPOPS.get(op)
        if cls is None:
            self.error(node, f"the comparison {op} is not supported on TIR values")
        x, y = self.operands(node, lnode, a, rnode, b)
        return cls(x, y)

    def visit_BoolOp(self, node: Any) -> Any:
        """``a and b`` / ``a or b``."""
        cls = tir.And if node.op == "and" else tir.Or
        values = node.values
        acc = self._bool(values[0])
        for v in values[1:]:
            acc = cls(acc, self._bool(v))
        return acc

    def _bool(self, node: Any) -> tir.PrimExpr:
        """An operand of and/or (must be bool)."""
        value = self.prim(node, "bool")
        if not value.dtype.startswith("bool"):
            self.error(node, f"'and'/'or' need bool operands, got dtype {value.dtype}")
        return value

    def if_expr(self, node: Any, test: Any) -> Any:
        """``a if c else b`` on TIR values: a Select."""
        cond = self.to_prim(node.test, test)
        a, b = self.operands(node, node.body, self.eval(node.body), node.orelse, self.eval(node.orelse))
        return tir.Select(cond, a, b)

    # ---------------------------------------------------------------- buffers
    def subscript(self, node: Any, base: Any) -> Any:
        """``A[...]`` on a buffer."""
        if isinstance(base, tir.Buffer):
            return self.buffer_access(node, base, node.index)
        if isinstance(base, tir.Var) and base.dtype == "handle":
            self.error(node.value, f"{base.name} is a handle; declare a buffer over it to index it")
        return super().subscript(node, base)

    @staticmethod
    def index_nodes(index: tuple) -> list[Any]:
        """The index expressions of a subscript (``A[i, j]``; ``A[()]`` has none)."""
        if len(index) == 1 and type(index[0]) is ast.Tuple:
            return list(index[0].elts)
        return list(index)

    def buffer_access(self, node: Any, buf: tir.Buffer, index: tuple) -> Any:
        """``A[...]``: a BufferLoad, or a BufferRegion when an index is a slice without step."""
        items = self.index_nodes(index)
        if len(items) != len(buf.shape):
            self.error(node, f"the buffer {buf.name} has {len(buf.shape)} dimension"
                              f"{'s' if len(buf.shape) != 1 else ''}, got {len(items)} index"
                              f"{'es' if len(items) != 1 else ''}")
        has_slice = any(type(i) is ast.Slice for i in items)
        if has_slice and not any(type(i) is ast.Slice and i.step is not None for i in items):
            ranges = []
            for dim, item in enumerate(items):
                if type(item) is ast.Slice:
                    start = self.prim(item.lower) if item.lower is not None else None
                    stop = self.prim(item.upper) if item.upper is not None else buf.shape[dim]
                    if start is None:
                        start = tir.IntImm(stop.dtype, 0)
                    if start.dtype != stop.dtype:
                        start, stop = self.match_dtypes(item, start, stop)
                    ranges.append(tir.Range(start, _minus(start, stop)))
                else:
                    idx = self.prim(item)
                    ranges.append(tir.Range(idx, tir.IntImm(idx.dtype, 1)))
            return tir.BufferRegion(buf, tuple(ranges))
        return tir.BufferLoad(buf, tuple(self.indices(buf, items)))

    def indices(self, buf: tir.Buffer, items: list[Any]) -> list[tir.PrimExpr]:
        """Index expressions (slices with a step become Ramps)."""
        out = []
        for dim, item in enumerate(items):
            if type(item) is ast.Slice:
                stop = self.prim(item.upper) if item.upper is not None else buf.shape[dim]
                start = self.prim(item.lower) if item.lower is not None else tir.IntImm(stop.dtype, 0)
                if start.dtype != stop.dtype:
                    start, stop = self.match_dtypes(item, start, stop)
                step = self.prim(item.step) if item.step is not None else tir.IntImm(start.dtype, 1)
                if not isinstance(step, tir.IntImm) or step.value == 0:
                    self.error(item.step or item, "a slice step must be a nonzero integer constant")
                step = tir.IntImm(start.dtype, step.value)
                # TVM's rule: the lane count ceil((stop - start) / step) must simplify to a constant, so
                # A[i * 4:i * 4 + 8:2] is T.Ramp(i * 4, 2, 4) whatever the start (as Python slices count).
                extent = _minus(start, stop)
                lanes = -(-extent.value // step.value) if isinstance(extent, tir.IntImm) else 0
                if lanes <= 0:
                    self.error(item, "a vector slice needs a constant positive number of elements, but "
                                     f"stop - start is {extent.script()} with step {step.value}")
                out.append(start if lanes == 1 else tir.Ramp(start, step, lanes))
            else:
                out.append(self.prim(item))
        return out

    # ---------------------------------------------------------------- typed literals, variables
    def call_unknown(self, node: Any, func: Namespace) -> Any:
        """``T.<dtype>(...)``, math intrinsics and constructor forms."""
        if func.dialect == "T" and func.path.count(".") == 1:
            leaf = func.leaf
            if leaf in _MATH or leaf in _PARSED or leaf in _OPERANDS:
                dtype_kw = next((k for k in node.keywords if k.arg == "dtype"), None)
                if dtype_kw is not None:
                    return self.dtype_keyword(node, func, dtype_kw)
            if is_valid_dtype(leaf):
                return self.typed_call(node, leaf)
            info = _MATH.get(leaf)
            if info is not None:
                return self.math_unary(node, info) if info.arity == 1 else self.math_binary(node, info)
            if leaf in _CONSTRUCTORS:
                return self.construct(node, leaf)
            if leaf in _PARSED:
                info = _PARSED[leaf]
                return getattr(self, f"_parse_{info.parse}")(node, info)
            if leaf in _OPERANDS:
                return self._parse_operands(node, _OPERANDS[leaf])
            if _DTYPE_LIKE.match(leaf):
                self.error(node.func, f"unknown dtype '{leaf}' in T.{leaf}{suggest(leaf, KNOWN_DTYPES)}")
        return super().call_unknown(node, func)

    def dtype_keyword(self, node: Any, func: Namespace, kw: Any) -> tir.PrimExpr:
        """``T.exp(x, dtype="float32")``, ``T.call_extern("f", x, dtype="int32")``: the call with
        that result dtype (``""`` is ``"void"``, as in TVM)."""
        dtype = self.eval(kw.value)
        dtype = "void" if dtype == "" else self.expect_dtype(kw.value, dtype)
        info = _MATH.get(func.leaf) or _PARSED.get(func.leaf) or _OPERANDS[func.leaf]
        rest = tuple(k for k in node.keywords if k is not kw)
        if info.dtype_first or info.dtype_last:
            lit = ast.Constant(dtype, line=kw.line, col=kw.col, end_line=kw.end_line, end_col=kw.end_col)
            args = (lit, *node.args) if info.dtype_first else (*node.args, lit)
            return self.call_unknown(dataclasses.replace(node, args=args, keywords=rest), func)
        out = self.call_unknown(dataclasses.replace(node, keywords=rest), func)
        if isinstance(out, tir.Call) and out.dtype != dtype:
            out = tir.Call(dtype, out.op, out.args)
        return out

    def known_paths(self) -> list[str]:
        """Handlers plus dtypes and intrinsics (for suggestions)."""
        extra = [f"T.{n}" for n in (*_MATH, *_PARSED, *_OPERANDS, *_CONSTRUCTORS, *KNOWN_DTYPES)]
        return [*super().known_paths(), *extra]

    _TYPED = Sig("T.<dtype>", ("value",), 0, kwonly=("is_size_var",))

    def typed_call(self, node: Any, dtype: str) -> Any:
        """``T.int64(5)`` (a typed literal or cast) or ``T.int64()`` (a new variable)."""
        value_node, size_node = self.bind(node, self._TYPED)
        if value_node is None:
            is_size = self.expect_bool(size_node, self.eval(size_node), "is_size_var") if size_node else False
            name = self.take_name()
            return tir.SizeVar(name, dtype) if is_size else tir.Var(name, dtype)
        value = self.eval(value_node)
        return self.typed_value(value_node, value, dtype)

    def typed_value(self, node: Any, value: Any, dtype: str) -> tir.PrimExpr:
        """``value`` converted to ``dtype`` (literals retyped, expressions cast)."""
        d = parse_dtype(dtype)
        if isinstance(value, str):
            if d.is_float and value.lower() in ("inf", "-inf", "+inf", "nan", "-nan"):
                return tir.FloatImm(dtype, float(value))
            if d.is_handle:
                return tir.StringImm(value)
            self.error(node, f"T.{dtype} expects a number, got {describe(value)}")
        if isinstance(value, float):
            if not d.is_float:
                if not value.is_integer():
                    self.error(node, f"T.{dtype} expects an integer, got {value!r}")
                value = int(value)
            else:
                return tir.FloatImm(dtype, value)
        if isinstance(value, (bool, int)) and not isinstance(value, tir.PrimExpr):
            if d.lanes > 1:
                return tir.Broadcast(self._literal(node, int(value), d.element), d.lanes)
            return self._literal(node, int(value), dtype)
        expr = self.to_prim(node, value)
        return expr if expr.dtype == dtype else _cast(dtype, expr)

    # ---------------------------------------------------------------- methods of values
    def get_attribute(self, node: Any, base: Any, name: str) -> Any:
        """``A.access_ptr``, ``x.astype`` (bound for the call), ``x.dtype``; else the buffer fields."""
        if isinstance(base, tir.Buffer) and name == "access_ptr":
            return BoundMethod(base, name)
        if isinstance(base, tir.PrimExpr) and not isinstance(base, tir.Buffer):
            if name == "astype":
                return BoundMethod(base, name)
            if name == "dtype":
                return base.dtype
        return super().get_attribute(node, base, name)

    def call_value(self, node: Any, func: Any) -> Any:
        """A call of a bound method (``A.access_ptr("r")``, ``x.astype("float32")``)."""
        if type(func) is BoundMethod:
            return getattr(self, f"_method_{func.name}")(node, func.base)
        return super().call_value(node, func)

    def _method_astype(self, node: Any, base: tir.PrimExpr) -> tir.PrimExpr:
        """``x.astype(dtype)``: TVM's cast (literals retyped, others wrapped in Cast)."""
        (dt_node,) = self.bind(node, Sig("astype", ("dtype",), 1))
        return _cast(self.expect_dtype(dt_node, self.eval(dt_node)), base)

    _ACCESS_MASK = {"r": 1, "w": 2, "rw": 3}

    def _method_access_ptr(self, node: Any, buf: tir.Buffer) -> tir.PrimExpr:
        """``A.access_ptr(mask, ptr_type="handle", content_lanes=1, offset=0)``: TVM's
        ``T.tvm_access_ptr(T.type_annotation(dtype), A.data, offset, extent, mask)`` over the buffer."""
        mask_n, ptype_n, lanes_n, off_n, ext_n = self.bind(node, Sig(
            "access_ptr", ("access_mask", "ptr_type", "content_lanes", "offset", "extent"), 1))
        mask = self.eval(mask_n)
        if isinstance(mask, str):
            if mask not in self._ACCESS_MASK:
                self.error(mask_n, f"access_ptr's mask is \"r\", \"w\" or \"rw\", got {mask!r}")
            mask = self._ACCESS_MASK[mask]
        mask = self.expect_int(mask_n, mask, "the access mask")
        offset = self.prim(off_n) if off_n is not None else tir.IntImm("int32", 0)
        base = buf.elem_offset if buf.elem_offset is not None else tir.IntImm(offset.dtype, 0)
        start = simplify(tir.Add(base, offset))
        if ext_n is not None:
            extent = self.prim(ext_n)
        else:
            size = buf.shape[0] if buf.shape else tir.IntImm("int32", 1)
            for d in buf.shape[1:]:
                size = tir.Mul(size, d)
            extent = simplify(tir.Sub(size, offset) if not (isinstance(offset, tir.IntImm) and offset.value == 0)
                              else size)
        ann = tir.Call(buf.dtype, INTRINSICS["type_annotation"].op, ())
        return tir.Call("handle", INTRINSICS["tvm_access_ptr"].op,
                        (ann, buf.data, start, extent, tir.IntImm("int32", mask)))

    # ---------------------------------------------------------------- T.* expression functions
    def construct(self, node: Any, name: str) -> tir.PrimExpr:
        """``T.Add(a, b)``, ``T.floordiv(a, b)``, ``T.max(a, b)``: one node, operands matched."""
        a_node, b_node = self.bind(node, Sig(f"T.{name}", ("a", "b"), 2))
        a, b = self.operands(node, a_node, self.eval(a_node), b_node, self.eval(b_node))
        return _CONSTRUCTORS[name](a, b)

    def math_unary(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.exp(x)``: ``tir.Call(x.dtype, "tir.exp", (x,))``; integer intrinsics keep integer
        literals (``T.popcount(5)``), float ones read them as float32."""
        (x_node,) = self.bind(node, Sig(f"T.{info.name}", ("x",), 1))
        x = self.prim(x_node, "int32" if info.args == "int" else "float32")
        if isinstance(x, tir.IntImm) and info.args != "int":
            x = tir.FloatImm("float32", float(x.value)) if x.dtype == "int32" else x
        return tir.Call(info.result_dtype(x.dtype), info.op, (x,))

    def math_binary(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.pow(x, y)`` and the other two-operand intrinsics."""
        a_node, b_node = self.bind(node, Sig(f"T.{info.name}", ("x", "y"), 2))
        a, b = self.operands(node, a_node, self.eval(a_node), b_node, self.eval(b_node))
        return tir.Call(a.dtype, info.op, (a, b))

    @handles("T.Not")
    def _not(self, node: Any) -> tir.PrimExpr:
        """``T.Not(a)``."""
        (x_node,) = self.bind(node, Sig("T.Not", ("a",), 1))
        return tir.Not(self.prim(x_node, "bool"))

    @handles("T.abs")
    def _abs(self, node: Any) -> tir.PrimExpr:
        """``T.abs(x)``: tir.fabs for floats, a Select for ints."""
        (x_node,) = self.bind(node, Sig("T.abs", ("x",), 1))
        x = self.prim(x_node)
        if parse_dtype(x.dtype).is_float:
            return tir.Call(x.dtype, INTRINSICS["fabs"].op, (x,))
        zero = tir.IntImm(x.dtype, 0)
        return tir.Select(tir.GE(x, zero), x, tir.Sub(zero, x))

    @handles("T.Cast")
    def _cast_node(self, node: Any) -> tir.PrimExpr:
        """``T.Cast(dtype, value)``."""
        dt_node, v_node = self.bind(node, Sig("T.Cast", ("dtype", "value"), 2))
        dtype = self.expect_dtype(dt_node, self.eval(dt_node))
        # A bare literal keeps its own type (T.Cast("float32", 1) casts the int32 1, as in TVM).
        return tir.Cast(dtype, self.prim(v_node))

    @handles("T.cast")
    def _cast_fn(self, node: Any) -> tir.PrimExpr:
        """``T.cast(value, dtype)``."""
        v_node, dt_node = self.bind(node, Sig("T.cast", ("value", "dtype"), 2))
        dtype = self.expect_dtype(dt_node, self.eval(dt_node))
        # TVM's tir.cast: literals are converted, other values wrapped in a Cast node.
        return _cast(dtype, self.prim(v_node))

    def _signature(self, info: Intrinsic) -> Sig:
        """The script signature of a parsed intrinsic: its parameters, then any operands if variadic."""
        return Sig(f"T.{info.script_name}", info.params, len(info.params), varargs=info.arity is None)

    def _parse_dtype_value(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.reinterpret(dtype, value)``."""
        dt_node, v_node = self.bind(node, self._signature(info))
        dtype = self.expect_dtype(dt_node, self.eval(dt_node))
        return tir.Call(dtype, info.op, (self.prim(v_node),))

    def _parse_condition(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.likely(cond)``, ``T.assume(cond)``."""
        (c,) = self.bind(node, self._signature(info))
        return tir.Call(info.result_dtype("bool"), info.op, (self.prim(c, "bool"),))

    def _parse_select(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.if_then_else(cond, t, f)``: the two sides matched as operands."""
        c, t, f = self.bind(node, self._signature(info))
        a, b = self.operands(node, t, self.eval(t), f, self.eval(f))
        return tir.Call(a.dtype, info.op, (self.prim(c, "bool"), a, b))

    def _parse_extern(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.call_extern(dtype, "f", *args)``, ``T.call_pure_extern(dtype, "f", *args)``."""
        dt_node, f_node, rest = self.bind(node, self._signature(info))
        dtype = self.expect_dtype(dt_node, self.eval(dt_node))
        fname = self.expect_str(f_node, self.eval(f_node), "the function name")
        return tir.Call(dtype, info.op, (tir.StringImm(fname), *(self.prim(a) for a in rest)))

    def _parse_packed(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.call_packed("f", *args)``."""
        f_node, rest = self.bind(node, self._signature(info))
        fname = self.expect_str(f_node, self.eval(f_node), "the function name")
        return tir.Call(info.result, info.op, (tir.StringImm(fname), *(self.prim(a) for a in rest)))

    def _operand(self, node: Any) -> tir.PrimExpr:
        """An operand of a generic intrinsic: a string is a StringImm (``"row_major"``)."""
        value = self.eval(node)
        return tir.StringImm(value) if isinstance(value, str) else self.to_prim(node, value)

    def _parse_operands(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.<name>(*operands)``; ``T.ptx_mma(dtype, *operands)`` for those whose dtype is given."""
        sig = Sig(f"T.{info.script_name}", ("dtype",) if info.dtype_first else (), int(info.dtype_first),
                  varargs=True)
        *dt, rest = self.bind(node, sig)
        if info.dtype_last:
            if not rest:
                self.error(node, f"T.{info.script_name} takes its operands, then the result dtype")
            *rest, last = rest
            dt = [last]
        if info.arity is not None and len(rest) != info.arity:
            self.error(node, f"T.{info.script_name} takes {info.arity} operand{'s' if info.arity != 1 else ''}, "
                             f"got {len(rest)}")
        args = tuple(self._operand(a) for a in rest)
        if info.dtype_first or info.dtype_last:
            dtype = self.expect_dtype(dt[0], self.eval(dt[0]))
        else:
            dtype = info.result_dtype(args[0].dtype if args else "void")
        return tir.Call(dtype, info.op, args)

    def _parse_shuffle(self, node: Any, info: Intrinsic) -> tir.PrimExpr:
        """``T.tvm_warp_shuffle(mask, value, lane, width, warp_size)``: of the value's dtype."""
        (rest,) = self.bind(node, Sig(f"T.{info.script_name}", (), 0, varargs=True))
        if len(rest) != 5:
            self.error(node, f"T.{info.script_name} takes 5 operands (mask, value, lane, width, warp_size), "
                             f"got {len(rest)}")
        args = tuple(self._operand(a) for a in rest)
        return tir.Call(args[1].dtype, info.op, args)

    @handles("T.type_annotation")
    def _type_annotation(self, node: Any) -> tir.PrimExpr:
        """``T.type_annotation(dtype)``: a typed placeholder argument (of T.tvm_access_ptr)."""
        (dt_node,) = self.bind(node, Sig("T.type_annotation", ("dtype",), 1))
        return tir.Call(self.expect_dtype(dt_node, self.eval(dt_node)), INTRINSICS["type_annotation"].op, ())

    @handles("T.comm_reducer")
    def _comm_reducer(self, node: Any) -> tir.CommReducer:
        """``T.comm_reducer(lambda x, y: x + y, [identity])``: the lambda's first half of parameters
        are the accumulators, the second half the values, typed by the identity elements."""
        fn_n, id_n = self.bind(node, Sig("T.comm_reducer", ("combiner", "identity"), 2))
        ids = self.eval(id_n)
        ids = ids if isinstance(ids, (tuple, list)) else [ids]
        if not ids:
            self.error(id_n, "T.comm_reducer needs one identity element per reduced value")
        identity = tuple(self.to_prim(id_n, v) for v in ids)
        if type(fn_n) is not ast.Lambda or len(fn_n.params) != 2 * len(identity):
            self.error(fn_n, f"T.comm_reducer takes a lambda of {2 * len(identity)} parameters for "
                             f"{len(identity)} identity element{'s' if len(identity) != 1 else ''}, "
                             f"e.g. lambda x, y: x + y")
        n = len(identity)
        params = tuple(tir.Var(p, identity[i % n].dtype) for i, p in enumerate(fn_n.params))
        self.scope.push("lambda")
        try:
            for name, var in zip(fn_n.params, params):
                self.scope.define(name, var)
            out = self.eval(fn_n.body)
        finally:
            self.scope.pop()
        items = out if isinstance(out, (tuple, list)) else (out,)
        if len(items) != n:
            self.error(fn_n.body, f"the combiner gives {len(items)} value{'s' if len(items) != 1 else ''} "
                                  f"for {n} identity element{'s' if n != 1 else ''}")
        result = tuple(self.to_prim(fn_n.body, e) for e in items)
        return tir.CommReducer(params[:n], params[n:], result, identity)

    @handles("T.target")
    def _target(self, node: Any) -> tir.Target:
        """``T.target("llvm -mcpu=skylake")`` or ``T.target({"kind": "cuda", ...})``: a Target whose
        configuration is the kind plus the options written (``-key=value`` pairs of a string)."""
        spec_n, host_n = self.bind(node, Sig("T.target", ("target", "host"), 1))
        spec = self.eval(spec_n)
        if isinstance(spec, str):
            kind, *opts = spec.split()
            config: dict[str, Any] = {"kind": kind}
            for opt in opts:
                key, eq, value = opt.lstrip("-").partition("=")
                if not key or not opt.startswith("-"):
                    self.error(spec_n, f"a target option is written -key=value, got {opt!r}")
                config[key] = value if eq else True
        elif isinstance(spec, dict) and isinstance(spec.get("kind"), str):
            config = spec
        else:
            self.error(spec_n, f"T.target takes a target string such as \"llvm\" or a dictionary with a "
                               f"\"kind\", got {describe(spec)}")
        if host_n is not None:
            host = self.eval(host_n)
            if isinstance(host, str):
                host = {"kind": host}
            elif isinstance(host, tir.Target):
                host = dict(host.config.items())
            elif not (isinstance(host, dict) and isinstance(host.get("kind"), str)):
                self.error(host_n, f"the host of T.target is a target string or dictionary, got {describe(host)}")
            config = {**config, "host": host}
        return tir.Target(attr_value(config))

    @handles("T.llvm_lookup_intrinsic_id")
    def _llvm_intrinsic_id(self, node: Any) -> tir.StringImm:
        """``T.llvm_lookup_intrinsic_id("llvm.ctpop.i8")``: the intrinsic, named as TVM prints its id
        (without the overload's type suffix); the code generator adds the suffix of the call's types."""
        (name_n,) = self.bind(node, Sig("T.llvm_lookup_intrinsic_id", ("name",), 1))
        parts = self.expect_str(name_n, self.eval(name_n), "the intrinsic name").split(".")
        while len(parts) > 2 and _TYPE_SUFFIX.match(parts[-1]):
            parts.pop()
        return tir.StringImm(".".join(parts))

    @handles("T.Range")
    def _range_node(self, node: Any) -> tir.Range:
        """``T.Range(begin, end)``: the half-open interval [begin, end)."""
        b_node, e_node = self.bind(node, Sig("T.Range", ("begin", "end"), 2))
        lo, hi = self.operands(node, b_node, self.eval(b_node), e_node, self.eval(e_node))
        return tir.Range(lo, _minus(lo, hi))

    @handles("T.ret")
    def _ret(self, node: Any) -> tir.PrimExpr:
        """``T.ret(v)``: the call ``return v`` builds."""
        (v_node,) = self.bind(node, Sig("T.ret", ("value",), 1))
        value = self.prim(v_node)
        return tir.Call(value.dtype, INTRINSICS["ret"].op, (value,))

    @handles("T.ceildiv")
    def _ceildiv(self, node: Any) -> tir.PrimExpr:
        """``T.ceildiv(a, b)``: ``(a + b - 1) // b``, the expression TVM builds."""
        a_node, b_node = self.bind(node, Sig("T.ceildiv", ("lhs", "rhs"), 2))
        a, b = self.operands(node, a_node, self.eval(a_node), b_node, self.eval(b_node))
        return tir.FloorDiv(tir.Sub(tir.Add(a, b), tir.IntImm(a.dtype, 1)), b)

    @handles("T.Select")
    def _select(self, node: Any) -> tir.PrimExpr:
        """``T.Select(cond, t, f)``."""
        c, t, f = self.bind(node, Sig("T.Select", ("condition", "true_value", "false_value"), 3))
        a, b = self.operands(node, t, self.eval(t), f, self.eval(f))
        return tir.Select(self.prim(c, "bool"), a, b)

    @handles("T.Let")
    def _let(self, node: Any) -> tir.PrimExpr:
        """``T.Let(body, where={x: value})``: a Let expression (several pairs nest in order)."""
        body_n, where_n = self.bind(node, Sig("T.Let", ("expr", "where"), 2))
        where = self.eval(where_n)
        if not isinstance(where, dict) or not where or not all(isinstance(k, tir.Var) for k in where):
            self.error(where_n, "T.Let takes where={x: value} with TIR variables as keys")
        out = self.prim(body_n)
        for var, value in reversed(list(where.items())):
            out = tir.Let(var, self.to_prim(where_n, value, var.dtype), out)
        return out

    @handles("T.index_map")
    def _index_map(self, node: Any) -> IndexMap:
        """``T.index_map(lambda i, j: (j, i), index_dtype="int64")``: an IndexMap (R.layout_transform)."""
        fn_n, dtype_n = self.bind(node, Sig("T.index_map", ("mapping",), 1, kwonly=("index_dtype",)))
        if type(fn_n) is not ast.Lambda:
            self.error(fn_n, "T.index_map takes a lambda of the indices, e.g. T.index_map(lambda i, j: (j, i))")
        dtype = self.expect_dtype(dtype_n, self.eval(dtype_n)) if dtype_n is not None else "int64"
        indices = tuple(tir.Var(p, dtype) for p in fn_n.params)
        self.scope.push("lambda")
        try:
            for name, var in zip(fn_n.params, indices):
                self.scope.define(name, var)
            out = self.eval(fn_n.body)
        finally:
            self.scope.pop()
        items = out if isinstance(out, (tuple, list)) else (out,)
        return IndexMap(indices, tuple(self.to_prim(fn_n.body, e, dtype) for e in items))

    @handles("T.Ramp")
    def _ramp(self, node: Any) -> tir.PrimExpr:
        """``T.Ramp(base, stride, lanes)``."""
        b_node, s_node, l_node = self.bind(node, Sig("T.Ramp", ("base", "stride", "lanes"), 3))
        base, stride = self.operands(node, b_node, self.eval(b_node), s_node, self.eval(s_node))
        return tir.Ramp(base, stride, self.expect_int(l_node, self.eval(l_node), "lanes"))

    @handles("T.Broadcast")
    def _broadcast(self, node: Any) -> tir.PrimExpr:
        """``T.Broadcast(value, lanes)``."""
        v_node, l_node = self.bind(node, Sig("T.Broadcast", ("value", "lanes"), 2))
        return tir.Broadcast(self.prim(v_node), self.expect_int(l_node, self.eval(l_node), "lanes"))

    @handles("T.StringImm")
    def _string_imm(self, node: Any) -> tir.PrimExpr:
        """``T.StringImm("...")``."""
        (v_node,) = self.bind(node, Sig("T.StringImm", ("value",), 1))
        return tir.StringImm(self.expect_str(v_node, self.eval(v_node), "T.StringImm's value"))

    @handles("T.max_value")
    def _max_value(self, node: Any) -> tir.PrimExpr:
        """``T.max_value(dtype)``."""
        return self._limit(node, True)

    @handles("T.min_value")
    def _min_value(self, node: Any) -> tir.PrimExpr:
        """``T.min_value(dtype)``."""
        return self._limit(node, False)

    def _limit(self, node: Any, big: bool) -> tir.PrimExpr:
        """The largest or smallest value of a dtype."""
        name = "T.max_value" if big else "T.min_value"
        (dt_node,) = self.bind(node, Sig(name, ("dtype",), 1))
        dtype = self.expect_dtype(dt_node, self.eval(dt_node))
        d = parse_dtype(dtype)
        if d.is_float:
            info = np.finfo(dtype if dtype != "bfloat16" else "float32")
            return tir.FloatImm(dtype, float(info.max if big else info.min))
        if d.is_bool:
            return tir.IntImm("bool", int(big))
        info2 = np.iinfo(dtype)
        return tir.IntImm(dtype, int(info2.max if big else info2.min))

    @handles("T.call_intrin")
    def _call_intrin(self, node: Any) -> tir.PrimExpr:
        """``T.call_intrin(dtype, "tir.op", *args)``."""
        dt_node, op_node, rest = self.bind(node, Sig("T.call_intrin", ("dtype", "op"), 2, varargs=True))
        dtype = self.expect_dtype(dt_node, self.eval(dt_node))
        op = self.expect_str(op_node, self.eval(op_node), "the intrinsic name")
        return tir.Call(dtype, op if op.startswith("tir.") else f"tir.{op}", tuple(self.prim(a) for a in rest))


class BoundMethod:
    """A method of a script value, bound to it until called (``A.access_ptr``)."""

    __slots__ = ("base", "name")

    def __init__(self, base: Any, name: str) -> None:
        self.base = base
        self.name = name


def _cast(dtype: str, value: tir.PrimExpr) -> tir.PrimExpr:
    """``value`` as ``dtype``: literals are retyped (as TVM's cast does), others wrapped in Cast."""
    if value.dtype == dtype:
        return value
    d = parse_dtype(dtype)
    if isinstance(value, tir.IntImm):
        if d.is_float:
            return tir.FloatImm(dtype, float(value.value))
        if d.lanes == 1:
            return tir.IntImm(dtype, int(bool(value.value)) if d.is_bool else value.value)
    if isinstance(value, tir.FloatImm) and d.lanes == 1:
        if d.is_float:
            return tir.FloatImm(dtype, value.value)
        if d.is_integer and math.isfinite(value.value):
            return tir.IntImm(dtype, int(value.value))
    return tir.Cast(dtype, value)


def cast(dtype: str, value: tir.PrimExpr) -> tir.PrimExpr:
    """Public alias of the literal-aware cast (used by stores and annotated lets)."""
    return _cast(dtype, value)
