"""Matching values against struct info in the Relax VM: parameters, ``R.match_cast`` and the
results of packed functions, compiled into checkers that bind symbolic sizes in the frame."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import format_expr, format_shape
from ..ir.dtype import to_numpy_dtype
from ..ir.functor import Visitor
from ..ir.struct_info import collect_vars
from .runtime import Tensor
from .vm_frame import Checker, DimCheck, Frame, SymbolSlots, from_packed
from .vm_prim_exprs import scalar_kind


def dtype_text(dtype: np.dtype) -> str:
    """A numpy dtype as a tvmlite name (``float64``), with byte order when not native."""
    return dtype.name if dtype.isnative else dtype.str


def value_text(value: Any) -> str:
    """A short description of an argument that has the wrong kind."""
    if isinstance(value, np.ndarray):
        return f"a tensor of shape {value.shape} and dtype {dtype_text(value.dtype)}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} values"
    return f"{type(value).__name__} {value!r}" if isinstance(value, (int, float, str)) else type(value).__name__


class StructInfoMatcher(Visitor):
    """Compiles a struct info into a checker ``check(value, frame) -> value``.

    With ``bind``, the first occurrence of a symbolic variable as a whole dimension (or prim
    value) defines it; later ones must agree, and compound sizes (``n * 2``) are checked by
    ``finish()``'s closures once everything is bound. Without ``bind`` (results of packed
    functions) undefined variables are not checked. Errors raise ``error``."""

    def __init__(self, planner: SymbolSlots, bind: bool, error: type[Exception]) -> None:
        self.planner = planner
        self.bind = bind
        self.error = error
        self.pending: list[tuple[tir.PrimExpr, int, str, str, str, Callable[[Any], str]]] = []

    def compile(self, sinfo: rx.StructInfo | None, what: str) -> Checker:
        """The checker of values described by ``sinfo``; ``what`` names them in messages."""
        if sinfo is None:
            return self.visit_object_struct_info_(rx.ObjectStructInfo(), what)
        return self._handler(sinfo)(sinfo, what)

    def finish(self) -> list[Callable[[Frame], None]]:
        """Checks of the compound sizes, to run after the values were matched."""
        checks = []
        for expr, scratch, what, label, expected, fmt in self.pending:
            if all(self.planner.is_sym_defined(v) for v in collect_vars(rx.ShapeStructInfo((expr,), 1), [])):
                checks.append(self._compound_check(expr, scratch, what, label, expected, fmt))
        self.pending = []
        return checks

    def _fail(self, what: str, text: str) -> Exception:
        """The error to raise, naming the function and the value."""
        return self.error(f"{self.planner.name}: {what} {text}")

    # ---- one size or scalar value, dispatched on the expression's key
    def _value_check(self, expr: tir.PrimExpr, what: str, label: str, expected: str,
                     fmt: Callable[[Any], str]) -> DimCheck | None:
        """The check of one dimension (or prim value) against ``expr``; None when nothing to check.
        ``fmt`` formats the whole value (the shape) for messages."""
        make = getattr(self, f"_check_{type(expr).visit_key}", self._check_compound)
        return make(expr, what, label, expected, fmt)

    def _check_int_imm(self, expr: tir.IntImm, what: str, label: str, expected: str,
                       fmt: Callable[[Any], str]) -> DimCheck:
        """A constant size: equal."""
        fail, want = self._fail, expr.value

        def check_const(n: Any, frame: Frame, whole: Any) -> None:
            if n != want:
                raise fail(what, f"expects {expected}, got {fmt(whole)}: {label} is {n}, not {want}")

        return check_const

    def _check_tir_var(self, var: tir.Var, what: str, label: str, expected: str,
                       fmt: Callable[[Any], str]) -> DimCheck | None:
        """A symbolic size: defines the variable the first time, must agree with it afterwards."""
        planner, fail = self.planner, self._fail
        if planner.is_sym_defined(var):
            slot, name, origin = planner.sym_slot(var), var.name, planner.origin(var)

            def check_same(n: Any, frame: Frame, whole: Any) -> None:
                if n != frame[slot]:
                    raise fail(what, f"expects {expected}, got {fmt(whole)}: {label} is {n}, but {name} is "
                                     f"{frame[slot]} (from {origin})")

            return check_same
        if not self.bind:
            return None
        # a prim value is the whole value: "from parameter 'n'", not "parameter 'n' the value"
        slot = planner.define_sym(var, what if label == "the value" else f"{what} {label}")

        def bind(n: Any, frame: Frame, whole: Any) -> None:
            frame[slot] = n

        return bind

    def _check_compound(self, expr: tir.PrimExpr, what: str, label: str, expected: str,
                        fmt: Callable[[Any], str]) -> DimCheck:
        """A size such as ``n * 2``: remembered now, compared by ``finish()``'s checks."""
        scratch = self.planner.new_slot()
        self.pending.append((expr, scratch, what, label, expected, fmt))

        def remember(n: Any, frame: Frame, whole: Any) -> None:
            frame[scratch] = (n, whole)

        return remember

    def _compound_check(self, expr: tir.PrimExpr, scratch: int, what: str, label: str, expected: str,
                        fmt: Callable[[Any], str]) -> Callable[[Frame], None]:
        """Compare a remembered size with ``expr`` computed from the bound variables."""
        compute, fail, text = self.planner.prim.compile(expr), self._fail, format_expr(expr)

        def check(frame: Frame) -> None:
            n, whole = frame[scratch]
            want = compute(frame)
            if n != want:
                raise fail(what, f"expects {expected}, got {fmt(whole)}: {label} is {n}, but {text} is {want}")

        return check

    def _dim_checks(self, dims: Sequence[tir.PrimExpr], what: str, expected: str,
                    fmt: Callable[[Any], str]) -> list[tuple[int, DimCheck]]:
        """The checks of each dimension of a shape."""
        out = []
        for i, d in enumerate(dims):
            check = self._value_check(d, what, f"dim {i}", expected, fmt)
            if check is not None:
                out.append((i, check))
        return out

    # ---- struct info kinds
    def visit_object_struct_info_(self, sinfo: rx.ObjectStructInfo, what: str) -> Checker:
        """Any value (Tensors become arrays, lists tuples)."""
        return lambda value, frame: from_packed(value)

    def visit_func_struct_info_(self, sinfo: rx.FuncStructInfo, what: str) -> Checker:
        """A callable."""
        fail = self._fail

        def check(value: Any, frame: Frame) -> Any:
            if not callable(value):
                raise fail(what, f"expects a function, got {value_text(value)}")
            return value

        return check

    def visit_tensor_struct_info_(self, sinfo: rx.TensorStructInfo, what: str) -> Checker:
        """An array of the dtype, rank and shape (C-contiguous: kernels index it as such)."""
        fail = self._fail
        dtype = None if sinfo.dtype == "void" else to_numpy_dtype(sinfo.dtype)
        ndim = sinfo.ndim
        dims = sinfo.shape
        expected_shape = f"shape {format_shape(dims)}" if dims is not None else f"{ndim} dimensions"
        kind = f"a tensor R.Tensor({format_shape(dims) if dims is not None else f'ndim={ndim}'}, {sinfo.dtype})"
        rank_note = f" ({expected_shape})" if dims is not None else ""
        static = None
        dim_checks: list[tuple[int, DimCheck]] = []
        if dims is not None:
            if all(isinstance(d, tir.IntImm) for d in dims):
                static = tuple(int(d.value) for d in dims)
            else:
                dim_checks = self._dim_checks(dims, what, expected_shape, lambda s: f"shape {s}")

        def check(value: Any, frame: Frame) -> np.ndarray:
            if type(value) is not np.ndarray:
                if isinstance(value, Tensor):
                    value = value._data
                elif isinstance(value, np.ndarray):
                    value = np.asarray(value)  # a subclass (memmap...): its plain view
                else:
                    raise fail(what, f"expects {kind}, got {value_text(value)} (pass a numpy array or a "
                                     f"tvmlite.tensor)")
            vdtype = value.dtype
            if dtype is not None and vdtype is not dtype and vdtype != dtype:
                raise fail(what, f"expects dtype {sinfo.dtype}, got {dtype_text(value.dtype)} (shape "
                                 f"{value.shape}); convert it with .astype('{sinfo.dtype}')")
            if ndim >= 0 and value.ndim != ndim:
                raise fail(what, f"expects {ndim} dimension{'s' if ndim != 1 else ''}{rank_note}, got "
                                 f"{value.ndim} (shape {value.shape})")
            shape = value.shape
            if static is not None:
                if shape != static:
                    bad = next(i for i, (a, b) in enumerate(zip(shape, static)) if a != b)
                    raise fail(what, f"expects {expected_shape}, got shape {shape}: dim {bad} is {shape[bad]}, "
                                     f"not {static[bad]}")
            else:
                for i, dim_check in dim_checks:
                    dim_check(shape[i], frame, shape)
            flags = value.flags
            if not flags.c_contiguous:
                raise fail(what, f"is not C-contiguous (shape {shape}, strides {value.strides}); pass "
                                 f"np.ascontiguousarray(...) of it")
            if not flags.aligned:
                raise fail(what, f"is not aligned to its {value.itemsize}-byte elements; pass a copy "
                                 f"(np.array(...)) of it")
            return value

        if static is None or dtype is None:
            return check
        ndarray = np.ndarray

        def check_static(value: Any, frame: Frame) -> np.ndarray:
            # The common case in a few attribute reads; anything unusual takes the full check,
            # which converts Tensors and words the error.
            if type(value) is ndarray and value.shape == static:
                vdtype = value.dtype
                if vdtype is dtype or vdtype == dtype:
                    flags = value.flags
                    if flags.c_contiguous and flags.aligned:
                        return value
            return check(value, frame)

        return check_static

    def visit_shape_struct_info_(self, sinfo: rx.ShapeStructInfo, what: str) -> Checker:
        """A tuple of ints of the given length and values."""
        fail = self._fail
        ndim, values = sinfo.ndim, sinfo.values
        expected = f"the shape {format_shape(values)}" if values is not None else f"a shape of {ndim} values"
        dim_checks = self._dim_checks(values, what, expected, lambda s: f"{s}") if values is not None else []

        def check(value: Any, frame: Frame) -> tuple[int, ...]:
            if not isinstance(value, (tuple, list)) or not all(
                    isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in value):
                raise fail(what, f"expects {expected} (a tuple of ints), got {value_text(value)}")
            shape = tuple(int(v) for v in value)
            if ndim >= 0 and len(shape) != ndim:
                raise fail(what, f"expects {expected}, got {shape} ({len(shape)} values)")
            for i, dim_check in dim_checks:
                dim_check(shape[i], frame, shape)
            return shape

        return check

    def visit_prim_struct_info_(self, sinfo: rx.PrimStructInfo, what: str) -> Checker:
        """A Python (or numpy) scalar of the dtype's kind; ``R.Prim(value=n)`` binds or checks n."""
        fail = self._fail
        kind = scalar_kind(sinfo.dtype)
        accepts: tuple[type, ...] = {bool: (bool, np.bool_), int: (int, np.integer),
                                     float: (int, float, np.integer, np.floating)}[kind]
        refuses: tuple[type, ...] = () if kind is bool else (bool, np.bool_)
        expected = f"R.Prim(value={format_expr(sinfo.value)})" if sinfo.value is not None else f"R.Prim({sinfo.dtype!r})"
        value_check = (self._value_check(sinfo.value, what, "the value", expected, repr)
                       if sinfo.value is not None else None)

        def check(value: Any, frame: Frame) -> Any:
            if isinstance(value, np.ndarray) and value.ndim == 0:
                value = value[()]  # a 0-d array holds one scalar
            if not isinstance(value, accepts) or isinstance(value, refuses):
                raise fail(what, f"expects a {sinfo.dtype} scalar ({expected}), got {value_text(value)}")
            value = kind(value)
            if value_check is not None:
                value_check(value, frame, value)
            return value

        return check

    def visit_tuple_struct_info_(self, sinfo: rx.TupleStructInfo, what: str) -> Checker:
        """A tuple (or list) with one value per field."""
        fail = self._fail
        fields = tuple(self.compile(f, f"{what} field {i}") for i, f in enumerate(sinfo.fields))
        n = len(fields)

        def check(value: Any, frame: Frame) -> tuple:
            if not isinstance(value, (tuple, list)) or len(value) != n:
                raise fail(what, f"expects a tuple of {n} value{'s' if n != 1 else ''}, got {value_text(value)}")
            return tuple([f(v, frame) for f, v in zip(fields, value)])

        return check
