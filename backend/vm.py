"""The Relax virtual machine: runs the Relax functions of a compiled module on numpy arrays,
calling its kernels through the executor interface ``executable.call(name, arrays, scalars)``
(destination-passing: outputs are allocated by the VM and passed after the inputs).

Each function is planned once, when the VM is built: every expression becomes a Python closure
over a *frame* (a list with one slot per Relax variable and per symbolic size), every parameter
a checker compiled from its struct info. A call then only allocates a frame, checks the
arguments (count, type, dtype, rank, shape with consistent symbolic sizes, C-contiguity) and
runs the closures. Unsupported constructs (graph-level ops that were never legalized, calls of
unknown kernels) are reported when the VM is built, before anything runs.

Values inside the VM: tensors are C-contiguous numpy arrays, tuples are tuples, shapes are
tuples of ints, prim values are Python scalars, strings are ``str``. ``vm["f"](...)`` returns
tensors as :class:`~tvmlite.backend.runtime.Tensor`; packed functions receive Tensors too."""
from __future__ import annotations

import functools
import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import format_expr, format_shape
from ..ir.dtype import parse_dtype, to_numpy_dtype
from ..ir.functor import Visitor
from ..ir.module import GlobalVar, IRModule
from ..ir.op import find_op_def
from ..ir.struct_info import collect_vars
from .runtime import ArgumentError, Device, Tensor, get_func
from .signature import data_pointer as _data_pointer
from .signature import pointer_reader as _pointer_reader

__all__ = ["VirtualMachine", "VMError", "ArgumentError", "MatchCastError"]

Frame = list  # one slot per Relax variable / symbolic size of a function; None until assigned
_POINTER = _pointer_reader()  # array -> address of its data (backend/signature.py)
Fn = Callable[[Frame], Any]
Checker = Callable[[Any, Frame], Any]  # (value, frame) -> the value as the VM holds it
DimCheck = Callable[[Any, Frame, Any], None]  # (value, frame, the whole value for messages)


class VMError(RuntimeError):
    """A module the VM cannot run, or a failure while running it."""


class MatchCastError(VMError):
    """A value that does not match the struct info of its ``R.match_cast``."""


def _note(err: BaseException, text: str) -> None:
    """Attach where an error happened (Python 3.11+ shows notes under the message)."""
    if hasattr(err, "add_note"):
        err.add_note(text)


def _op_text(name: str) -> str:
    """``relax.nn.relu`` -> ``R.nn.relu``."""
    return "R." + name[len("relax."):] if name.startswith("relax.") else name


# ==================================================================== value conversions
def _to_user(value: Any) -> Any:
    """A VM value as ``vm["f"]`` returns it: arrays become Tensors (inside tuples too)."""
    if type(value) is np.ndarray:
        return Tensor(value)
    if type(value) is tuple:
        return tuple(_to_user(v) for v in value)
    return value


def _to_packed(value: Any) -> Any:
    """A VM value as a packed function receives it (Tensors, like TVM's NDArrays)."""
    if type(value) is np.ndarray:
        return Tensor(value)
    if type(value) is tuple:
        return tuple(_to_packed(v) for v in value)
    return value


def _from_packed(value: Any) -> Any:
    """A packed function's result as a VM value (C-contiguous arrays, tuples, Python scalars)."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, np.ndarray):
        return np.require(value, requirements="C")  # kernels need C order (ascontiguousarray would make rank 0 rank 1)
    if isinstance(value, (tuple, list)):
        return tuple(_from_packed(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


class _FunctionRef:
    """A module-level Relax function used as a value (``f = cls.helper``)."""

    __slots__ = ("plan",)

    def __init__(self, plan: "_Plan") -> None:
        self.plan = plan

    def __call__(self, *args: Any) -> Any:
        return self.plan.invoke(args)


class _Closure:
    """A nested Relax function with the values it captured from the enclosing frame."""

    __slots__ = ("plan", "captured")

    def __init__(self, plan: "_Plan", captured: list[tuple[int, Any]]) -> None:
        self.plan = plan
        self.captured = captured

    def __call__(self, *args: Any) -> Any:
        return self.plan.invoke(args, self.captured)


class _PackedRef:
    """A registered packed function used as a value; looked up when called, so functions
    registered after the VM was built are found."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return _from_packed(get_func(self.name)(*(_to_packed(a) for a in args)))


# ==================================================================== plans
class _Plan:
    """One Relax function, planned: parameter checkers, then closures over a frame."""

    __slots__ = ("name", "param_names", "params", "post", "body", "nslots", "pointers", "template")

    def __init__(self, name: str, param_names: Sequence[str]) -> None:
        self.name = name
        self.param_names = tuple(param_names)
        self.params: list[tuple[int, Checker]] = []
        self.post: list[Callable[[Frame], None]] = []  # checks of compound sizes (n * 2), after binding
        self.body: Fn = _unplanned
        self.nslots = 0
        self.pointers: list[tuple[int, int]] = []  # (parameter slot, slot of its data pointer)
        self.template: Frame | None = None  # a frame with constant slots filled in (None: all empty)

    def invoke(self, args: Sequence[Any], captured: Sequence[tuple[int, Any]] = ()) -> Any:
        """Check ``args`` against the signature, then run the body; the VM's value of the result."""
        if len(args) != len(self.params):
            names = ", ".join(self.param_names)
            raise ArgumentError(f"{self.name}: takes {len(self.params)} argument{'s' if len(self.params) != 1 else ''}"
                                f" ({names}), got {len(args)}")
        frame: Frame = [None] * self.nslots if self.template is None else self.template.copy()
        for slot, value in captured:
            frame[slot] = value
        for (slot, check), value in zip(self.params, args):
            frame[slot] = check(value, frame)
        for post in self.post:
            post(frame)
        if self.pointers:  # checked above: the kernels that read these run unchecked
            pointer = _POINTER
            for slot, pointer_slot in self.pointers:
                frame[pointer_slot] = pointer(frame[slot])
        return self.body(frame)


def _unplanned(frame: Frame) -> Any:
    """The body of a plan that is still being built (only reachable through a planning bug)."""
    raise VMError("internal error: a function was called before it was planned")


def _sequence(steps: list[tuple[int, Fn]], names: list[str], body: Fn, where: str) -> Fn:
    """Run bindings in order (each stores its value in its slot), then the body."""
    if not steps:
        return body

    def run(frame: Frame) -> Any:
        i = 0
        try:
            for slot, fn in steps:
                frame[slot] = fn(frame)
                i += 1
        except Exception as err:
            _note(err, f"  while computing '{names[i]}' in {where}")
            raise
        return body(frame)

    return run


def _const(value: Any) -> Fn:
    """A closure returning ``value``."""
    return lambda frame: value


def _tuple_of(fns: Sequence[Fn]) -> Fn:
    """A closure building a tuple from the values of ``fns``."""
    fns = tuple(fns)
    return lambda frame: tuple([fn(frame) for fn in fns])


# ==================================================================== TIR expressions (sizes, prim values)
def _trunc_div(a: int, b: int) -> int:
    """C division of integers (rounds towards zero), as TIR's ``Div`` on ints."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_mod(a: int, b: int) -> int:
    """C remainder of integers (sign of the dividend), as TIR's ``Mod`` on ints."""
    return a - b * _trunc_div(a, b)


def _scalar_kind(dtype: str) -> Callable[[Any], Any]:
    """The Python type a scalar of ``dtype`` becomes: int, float or bool."""
    d = parse_dtype(dtype)
    return bool if d.is_bool else float if d.is_float else int


def _binary_visitor(fn: Callable[[Any, Any], Any], text: str) -> Callable[["_PrimCompiler", Any], Fn]:
    """A ``visit_<op>_`` method computing ``fn`` of both operands."""
    def visit(self: "_PrimCompiler", expr: tir.BinaryOp) -> Fn:
        return self._binary(expr, fn)

    visit.__doc__ = f"``{text}``."
    return visit


class _PrimCompiler(Visitor):
    """Compiles a TIR expression (a symbolic size, an ``R.prim_value``) into ``fn(frame)``
    returning a Python scalar; symbolic variables are read from their frame slots."""

    def __init__(self, planner: "_Planner") -> None:
        self.planner = planner

    def compile(self, expr: tir.PrimExpr) -> Fn:
        """The closure computing ``expr``."""
        return self._handler(expr)(expr)

    def generic_visit(self, expr: Any) -> Fn:
        """Anything else cannot appear in a size or a prim value the VM computes."""
        raise VMError(f"{self.planner.name}: cannot compute {format_expr(expr)} ({type(expr).__name__}) "
                      f"in a Relax function")

    def visit_int_imm_(self, expr: tir.IntImm) -> Fn:
        """A literal (bool for ``T.bool``)."""
        return _const(bool(expr.value) if expr.dtype == "bool" else int(expr.value))

    def visit_float_imm_(self, expr: tir.FloatImm) -> Fn:
        """A float literal."""
        return _const(float(expr.value))

    def visit_tir_var_(self, var: tir.Var) -> Fn:
        """A symbolic variable: its slot."""
        return operator.itemgetter(self.planner.sym_slot(var))

    def _binary(self, expr: tir.BinaryOp, fn: Callable[[Any, Any], Any]) -> Fn:
        """Both operands, then ``fn``."""
        a, b = self.compile(expr.a), self.compile(expr.b)
        return lambda frame: fn(a(frame), b(frame))

    def visit_div_(self, expr: tir.Div) -> Fn:
        """True division on floats, C division on ints."""
        return self._binary(expr, operator.truediv if parse_dtype(expr.dtype).is_float else _trunc_div)

    def visit_mod_(self, expr: tir.Mod) -> Fn:
        """C remainder (``fmod`` on floats)."""
        return self._binary(expr, math.fmod if parse_dtype(expr.dtype).is_float else _trunc_mod)

    # Python's // and % floor (on ints and floats), as FloorDiv/FloorMod do.
    visit_add_ = _binary_visitor(operator.add, "a + b")
    visit_sub_ = _binary_visitor(operator.sub, "a - b")
    visit_mul_ = _binary_visitor(operator.mul, "a * b")
    visit_floor_div_ = _binary_visitor(operator.floordiv, "a // b (floor)")
    visit_floor_mod_ = _binary_visitor(operator.mod, "a % b (floor)")
    visit_min_ = _binary_visitor(min, "T.min")
    visit_max_ = _binary_visitor(max, "T.max")
    visit_eq_ = _binary_visitor(operator.eq, "a == b")
    visit_ne_ = _binary_visitor(operator.ne, "a != b")
    visit_lt_ = _binary_visitor(operator.lt, "a < b")
    visit_le_ = _binary_visitor(operator.le, "a <= b")
    visit_gt_ = _binary_visitor(operator.gt, "a > b")
    visit_ge_ = _binary_visitor(operator.ge, "a >= b")
    visit_and_ = _binary_visitor(lambda a, b: bool(a and b), "a and b")
    visit_or_ = _binary_visitor(lambda a, b: bool(a or b), "a or b")

    def visit_not_(self, expr: tir.Not) -> Fn:
        """Logical not."""
        a = self.compile(expr.a)
        return lambda frame: not a(frame)

    def visit_cast_(self, expr: tir.Cast) -> Fn:
        """int() truncates towards zero, as a C cast does."""
        kind, value = _scalar_kind(expr.dtype), self.compile(expr.value)
        return lambda frame: kind(value(frame))

    def visit_select_(self, expr: tir.Select) -> Fn:
        """``T.Select``: one side, by the condition."""
        cond, a, b = self.compile(expr.condition), self.compile(expr.true_value), self.compile(expr.false_value)
        return lambda frame: a(frame) if cond(frame) else b(frame)

    def visit_tir_call_(self, expr: tir.Call) -> Fn:
        """``T.if_then_else`` (other intrinsics have no place in a size)."""
        if expr.op != "tir.if_then_else":
            return self.generic_visit(expr)
        cond, a, b = (self.compile(x) for x in expr.args)
        return lambda frame: a(frame) if cond(frame) else b(frame)

    def visit_tir_let_(self, expr: tir.Let) -> Fn:
        """``T.let``: the value goes to a slot of its own for the body."""
        value = self.compile(expr.value)
        slot = self.planner.define_sym(expr.var, "a T.let")
        body = self.compile(expr.body)

        def run(frame: Frame) -> Any:
            frame[slot] = value(frame)
            return body(frame)

        return run


# ==================================================================== struct info checkers
def _dtype_text(dtype: np.dtype) -> str:
    """A numpy dtype as a tvmlite name (``float64``), with byte order when not native."""
    return dtype.name if dtype.isnative else dtype.str


def _value_text(value: Any) -> str:
    """A short description of an argument that has the wrong kind."""
    if isinstance(value, np.ndarray):
        return f"a tensor of shape {value.shape} and dtype {_dtype_text(value.dtype)}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} values"
    return f"{type(value).__name__} {value!r}" if isinstance(value, (int, float, str)) else type(value).__name__


class _Matcher(Visitor):
    """Compiles a struct info into a checker ``check(value, frame) -> value``.

    With ``bind``, the first occurrence of a symbolic variable as a whole dimension (or prim
    value) defines it; later ones must agree, and compound sizes (``n * 2``) are checked by
    ``finish()``'s closures once everything is bound. Without ``bind`` (results of packed
    functions) undefined variables are not checked. Errors raise ``error``."""

    def __init__(self, planner: "_Planner", bind: bool, error: type[Exception]) -> None:
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
        slot = planner.define_sym(var, f"{what} {label}")

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
        return lambda value, frame: _from_packed(value)

    def visit_func_struct_info_(self, sinfo: rx.FuncStructInfo, what: str) -> Checker:
        """A callable."""
        fail = self._fail

        def check(value: Any, frame: Frame) -> Any:
            if not callable(value):
                raise fail(what, f"expects a function, got {_value_text(value)}")
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
                    raise fail(what, f"expects {kind}, got {_value_text(value)} (pass a numpy array or a "
                                     f"tvmlite.tensor)")
            vdtype = value.dtype
            if dtype is not None and vdtype is not dtype and vdtype != dtype:
                raise fail(what, f"expects dtype {sinfo.dtype}, got {_dtype_text(value.dtype)} (shape "
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
                raise fail(what, f"expects {expected} (a tuple of ints), got {_value_text(value)}")
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
        kind = _scalar_kind(sinfo.dtype)
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
                raise fail(what, f"expects a {sinfo.dtype} scalar ({expected}), got {_value_text(value)}")
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
                raise fail(what, f"expects a tuple of {n} value{'s' if n != 1 else ''}, got {_value_text(value)}")
            return tuple([f(v, frame) for f, v in zip(fields, value)])

        return check


# ==================================================================== the planner
def _static_tensor(sinfo: Any) -> tuple[tuple[int, ...], np.dtype] | None:
    """(shape, numpy dtype) of a tensor struct info with constant dims and a known dtype."""
    if not isinstance(sinfo, rx.TensorStructInfo) or sinfo.shape is None or sinfo.dtype == "void":
        return None
    if not all(isinstance(d, tir.IntImm) for d in sinfo.shape):
        return None
    return tuple(int(d.value) for d in sinfo.shape), to_numpy_dtype(sinfo.dtype)


class _Context:
    """What every function's planner shares: the kernels, the PrimFunc names and the plans."""

    def __init__(self, executable: Any, kernels: set[str], plans: dict[str, _Plan]) -> None:
        resolve = getattr(executable, "kernel", None)
        # ``kernel(name)`` gives ``fn(arrays, scalars)`` for one kernel (no lookup by name per call);
        # an executable with only the executor interface gets ``call`` with the name bound.
        self.kernel: Callable[[str], Callable[..., Any]] = (
            resolve if callable(resolve) else lambda name: functools.partial(executable.call, name))
        self.kernels = kernels
        self.plans = plans
        # ``static_kernel(name, shapes, dtypes, n_inputs)``: the unchecked native entry of a kernel
        # for arrays the plan proves (LLVM kernels); None for other executors.
        self.static_kernel: Callable[..., Any] = getattr(executable, "static_kernel", None) or (lambda *a: None)


class _Planner(Visitor):
    """Compiles one Relax function into a :class:`_Plan`: each expression into a closure over the
    frame, dispatched on node keys (``visit_call_``, ``visit_relax_if_``...); nested functions
    get planners of their own that capture the enclosing frame's slots."""

    def __init__(self, ctx: _Context, plan: _Plan, parent: "_Planner | None" = None) -> None:
        self.ctx = ctx
        self.plan = plan
        self.name = plan.name
        self.parent = parent
        self.slots: dict[int, int] = {}  # id(rx.Var | tir.Var) -> slot
        self.defined: set[int] = set()  # symbolic variables that have a value at this point of the plan
        self.origins: dict[int, str] = {}  # symbolic variable -> where its value comes from
        self.captures: list[tuple[int, int]] = []  # nested functions: (own slot, enclosing slot)
        self.nslots = 0
        self.prim = _PrimCompiler(self)
        # What the plan proves about an array variable of this function (a parameter checked on
        # entry, a call_tir output the VM allocated): id(var) -> (shape, numpy dtype); such arrays are
        # C-contiguous and aligned, so kernels reading them skip their own checks.
        self.proven: dict[int, tuple[tuple[int, ...], np.dtype]] = {}
        self.pointers: dict[int, int] = {}  # id(var) -> slot holding its data pointer
        self.params: dict[int, int] = {}  # id(parameter) -> its slot
        self.constants: list[tuple[int, Any]] = []  # slots filled in every frame (data pointers of constants)
        self.produced: tuple[rx.Call, int] | None = None  # the call_tir just planned, and its pointer slot
        self.aliases: dict[int, int] = {}  # id(var) -> id of the proven variable it was bound to

    # ---- slots
    def new_slot(self) -> int:
        """A fresh frame slot."""
        self.nslots += 1
        return self.nslots - 1

    def bind_var(self, var: rx.Var) -> int:
        """The slot of a Relax variable at its definition."""
        slot = self.slots[id(var)] = self.new_slot()
        return slot

    def has_var(self, var: rx.Var) -> bool:
        """True when ``var`` is visible here (defined in this function or an enclosing one)."""
        return id(var) in self.slots or (self.parent is not None and self.parent.has_var(var))

    def _capture(self, node: Any, parent_slot: int) -> int:
        """A slot of this (nested) function receiving an enclosing function's value."""
        slot = self.slots[id(node)] = self.new_slot()
        self.captures.append((slot, parent_slot))
        return slot

    def var_slot(self, var: rx.Var) -> int:
        """The slot of a Relax variable in scope."""
        slot = self.slots.get(id(var))
        if slot is not None:
            return slot
        if self.parent is not None and self.parent.has_var(var):
            return self._capture(var, self.parent.var_slot(var))
        raise VMError(f"{self.name}: the variable '{var.name_hint}' is used where it is not defined")

    def is_sym_defined(self, var: tir.Var) -> bool:
        """True when the symbolic variable has a value at this point of the plan."""
        return id(var) in self.defined or (self.parent is not None and self.parent.is_sym_defined(var))

    def define_sym(self, var: tir.Var, origin: str) -> int:
        """Mark a symbolic variable as defined from here on; its slot."""
        slot = self.slots.get(id(var))
        if slot is None:
            slot = self.slots[id(var)] = self.new_slot()
        self.defined.add(id(var))
        self.origins[id(var)] = origin
        return slot

    def sym_slot(self, var: tir.Var) -> int:
        """The slot of a defined symbolic variable; VMError naming it otherwise."""
        if id(var) in self.defined:
            return self.slots[id(var)]
        if self.parent is not None and self.parent.is_sym_defined(var):
            slot = self._capture(var, self.parent.sym_slot(var))
            self.defined.add(id(var))
            self.origins[id(var)] = self.parent.origin(var)
            return slot
        raise VMError(f"{self.name}: the symbolic size {var.name} has no value here (it must come from a "
                      f"parameter's shape or an R.match_cast before it is used)")

    def origin(self, var: tir.Var) -> str:
        """Where a symbolic variable's value comes from (for messages)."""
        found = self.origins.get(id(var))
        if found is None and self.parent is not None:
            return self.parent.origin(var)
        return found or "?"

    # ---- functions
    def build(self, func: rx.Function) -> _Plan:
        """Plan ``func`` into ``self.plan``."""
        plan = self.plan
        matcher = _Matcher(self, bind=True, error=ArgumentError)
        plan.params = []
        for p in func.params:
            check = matcher.compile(p.struct_info, f"parameter '{p.name_hint}'")
            slot = self.bind_var(p)
            plan.params.append((slot, check))
            self.params[id(p)] = slot
            static = _static_tensor(p.struct_info)
            if static is not None:
                self.proven[id(p)] = static
        plan.post = matcher.finish()
        plan.body = self.expr(func.body)
        plan.nslots = self.nslots
        plan.pointers = [(self.params[vid], slot) for vid, slot in self.pointers.items() if vid in self.params]
        if self.constants:
            plan.template = [None] * self.nslots
            for slot, value in self.constants:
                plan.template[slot] = value
        return plan

    def expr(self, expr: rx.Expr) -> Fn:
        """The closure computing ``expr``."""
        return self._handler(expr)(expr)

    def generic_visit(self, node: Any) -> Fn:
        """A node the VM does not know how to run."""
        raise VMError(f"{self.name}: the VM cannot run a {type(node).__name__}")

    # ---- leaves
    def visit_var_(self, var: rx.Var) -> Fn:
        """Read the variable's slot."""
        return operator.itemgetter(self.var_slot(var))

    visit_dataflow_var_ = visit_var_

    def visit_constant_(self, const: rx.Constant) -> Fn:
        """The constant's array (C-contiguous, as kernels read it)."""
        return _const(np.require(const.data, requirements="C"))

    def visit_shape_expr_(self, shape: rx.ShapeExpr) -> Fn:
        """A tuple of ints (computed from the symbolic sizes when not constant)."""
        if all(isinstance(v, tir.IntImm) for v in shape.values):
            return _const(tuple(int(v.value) for v in shape.values))
        return _tuple_of([self.prim.compile(v) for v in shape.values])

    def visit_prim_value_(self, value: rx.PrimValue) -> Fn:
        """A Python scalar."""
        return self.prim.compile(value.value)

    def visit_string_imm_(self, imm: rx.StringImm) -> Fn:
        """A ``str``."""
        return _const(imm.value)

    def visit_data_type_imm_(self, imm: rx.DataTypeImm) -> Fn:
        """The dtype's name."""
        return _const(imm.value)

    def visit_extern_func_(self, func: rx.ExternFunc) -> Fn:
        """A packed function as a value."""
        return _const(_PackedRef(func.global_symbol))

    def visit_global_var_(self, gv: GlobalVar) -> Fn:
        """A module-level Relax function as a value."""
        return _const(_FunctionRef(self._relax_plan(gv)))

    def visit_op_(self, op: rx.Op) -> Fn:
        """Ops are only called, never passed around."""
        raise VMError(f"{self.name}: the op {_op_text(op.name)} cannot be used as a value")

    # ---- compound expressions
    def visit_tuple_(self, tup: rx.Tuple) -> Fn:
        """A Python tuple of the fields."""
        if not tup.fields:
            return _const(())
        return _tuple_of([self.expr(f) for f in tup.fields])

    def visit_tuple_get_item_(self, item: rx.TupleGetItem) -> Fn:
        """One field of a tuple."""
        value, index = self.expr(item.tuple_value), item.index
        return lambda frame: value(frame)[index]

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> Fn:
        """The blocks' bindings in order (dataflow or not: the same at run time), then the body."""
        steps: list[tuple[int, Fn]] = []
        names: list[str] = []
        for block in seq.blocks:
            for binding in block.bindings:
                self.produced = None
                fn = self._handler(binding)(binding)
                steps.append((self.bind_var(binding.var), fn))
                names.append(binding.var.name_hint)
                self._note_proven(binding)
        return _sequence(steps, names, self.expr(seq.body), self.name)

    def _note_proven(self, binding: rx.Binding) -> None:
        """Record what the VM itself guarantees about the value of ``binding.var``: a single static
        output it allocated for a call_tir, or the value of a proven variable."""
        if not isinstance(binding, rx.VarBinding):
            return  # match_cast: checked, but its alignment is not
        value, vid = binding.value, id(binding.var)
        if isinstance(value, rx.Var):
            if id(value) in self.proven:
                self.proven[vid] = self.proven[id(value)]
                self.aliases[vid] = self.aliases.get(id(value), id(value))
            return
        if (isinstance(value, rx.Call) and isinstance(value.op, rx.Op) and value.op.name == "relax.call_tir"
                and len(value.args) == 2):
            static = _static_tensor(value.sinfo_args[0])
            if static is not None:
                self.proven[vid] = static
                if self.produced is not None and self.produced[0] is value:
                    self.pointers[vid] = self.produced[1]

    def visit_var_binding_(self, binding: rx.VarBinding) -> Fn:
        """The bound value."""
        return self.expr(binding.value)

    def visit_match_cast_(self, binding: rx.MatchCast) -> Fn:
        """The value, checked against the struct info (which may define new symbolic sizes)."""
        value = self.expr(binding.value)
        matcher = _Matcher(self, bind=True, error=MatchCastError)
        check = matcher.compile(binding.struct_info, f"R.match_cast of '{binding.var.name_hint}'")
        post = matcher.finish()

        def run(frame: Frame) -> Any:
            result = check(value(frame), frame)
            for p in post:
                p(frame)
            return result

        return run

    def visit_relax_if_(self, node: rx.If) -> Fn:
        """One branch, chosen by a bool scalar (or a 0-d bool tensor)."""
        cond = self.expr(node.cond)
        before = set(self.defined)
        then = self.expr(node.true_branch)
        after_then, self.defined = self.defined, set(before)
        other = self.expr(node.false_branch)
        self.defined = before | (after_then & self.defined)  # sizes both branches define stay defined
        return lambda frame: then(frame) if cond(frame) else other(frame)

    def visit_function_(self, func: rx.Function) -> Fn:
        """A nested function: a closure capturing the values it uses from this frame."""
        plan = _Plan(f"{self.name}.<local function>", [p.name_hint for p in func.params])
        nested = _Planner(self.ctx, plan, parent=self)
        nested.build(func)
        captures = nested.captures
        return lambda frame: _Closure(plan, [(own, frame[outer]) for own, outer in captures])

    # ---- calls
    def visit_call_(self, call: rx.Call) -> Fn:
        """Dispatch on the callee: an op, a module function, a packed function or a value."""
        handler = getattr(self, f"call_{type(call.op).visit_key}_", self.call_value_)
        return handler(call)

    def _args(self, args: Sequence[rx.Expr]) -> Callable[[Frame], list]:
        """A closure computing a list of argument values."""
        if args and all(isinstance(a, rx.Var) for a in args):  # the usual case (normal form): one C-level read
            read = operator.itemgetter(*(self.var_slot(a) for a in args))
            return (lambda frame: [read(frame)]) if len(args) == 1 else (lambda frame: list(read(frame)))
        fns = tuple(self.expr(a) for a in args)
        return lambda frame: [fn(frame) for fn in fns]

    def _relax_plan(self, gv: GlobalVar) -> _Plan:
        """The plan of the module's Relax function ``gv``."""
        plan = self.ctx.plans.get(gv.name_hint)
        if plan is None:
            if gv.name_hint in self.ctx.kernels:
                raise VMError(f"{self.name}: {gv.name_hint} is a TIR function; call it with R.call_tir")
            raise VMError(f"{self.name}: the module has no Relax function {gv.name_hint}")
        return plan

    def call_global_var_(self, call: rx.Call) -> Fn:
        """A call of another Relax function of the module (its signature is checked on entry)."""
        plan, args = self._relax_plan(call.op), self._args(call.args)
        return lambda frame: plan.invoke(args(frame))

    def call_extern_func_(self, call: rx.Call) -> Fn:
        """``R.call_packed("name", ...)``."""
        return self._packed(call.op.global_symbol, call.args, call.sinfo_args)

    def call_value_(self, call: rx.Call) -> Fn:
        """A call of a function value (a closure, a module function, a packed function)."""
        callee, args, name = self.expr(call.op), self._args(call.args), self.name

        def run(frame: Frame) -> Any:
            fn = callee(frame)
            if not callable(fn):
                raise VMError(f"{name}: calling a value that is not a function ({type(fn).__name__})")
            return fn(*args(frame))

        return run

    def _packed(self, name: str, args: Sequence[rx.Expr], sinfo_args: Sequence[rx.StructInfo]) -> Fn:
        """Call a registered packed function; check its result against ``sinfo_args``."""
        ref, arg_fns = _PackedRef(name), self._args(args)
        matcher = _Matcher(self, bind=False, error=VMError)
        check = matcher.compile(sinfo_args[0] if sinfo_args else None, f"the result of packed function '{name}'")
        post = matcher.finish()

        def run(frame: Frame) -> Any:
            result = check(ref(*arg_fns(frame)), frame)
            for p in post:
                p(frame)
            return result

        return run

    def call_op_(self, call: rx.Call) -> Fn:
        """Ops the VM runs itself; any other op should have been legalized."""
        method = _OP_METHODS.get(call.op.name)
        if method is None:
            self._unsupported_op(call.op.name, call)
        return getattr(self, method)(call)

    def _unsupported_op(self, name: str, call: rx.Call | None = None) -> None:
        """VMError for a graph-level op that reached the VM."""
        from ..passes import legalize_ops  # noqa: F401  (fills the registry's legalize slots; error path only)
        from ..ir.struct_info import has_known_shapes, sinfo_of

        unknown = [] if call is None else [a for a in call.args if not has_known_shapes(sinfo_of(a))]
        if unknown and find_op_def(rx.Op.get(name)).legalize is not None:
            a, sinfo = unknown[0], sinfo_of(unknown[0])
            var = a.name_hint if isinstance(a, rx.Var) else "x"
            ndim = getattr(sinfo, "ndim", -1)
            dims = ", ".join(f'"d{i}"' for i in range(max(ndim, 1))) + ("," if ndim == 1 else "")
            dtype = getattr(sinfo, "dtype", "float32")
            raise VMError(f"{self.name}: {_op_text(name)} has no kernel: the shape of '{var}' is not known at "
                          f"compile time ({sinfo.script()}), and LegalizeOps needs shapes to generate loops; "
                          f"state it with R.match_cast, e.g. {var}_1 = R.match_cast({var}, R.Tensor(({dims}), "
                          f"dtype=\"{dtype}\"))")
        if call is not None and not has_known_shapes(sinfo_of(call)) and find_op_def(rx.Op.get(name)).legalize:
            raise VMError(f"{self.name}: {_op_text(name)} has no kernel: the shape of its result is not known at "
                          f"compile time ({sinfo_of(call).script()}: the sizes of its arguments may not agree), and "
                          f"LegalizeOps needs shapes to generate loops; state the arguments' shapes with R.match_cast "
                          f"so that they provably agree")

        if find_op_def(rx.Op.get(name)).legalize is not None:
            raise VMError(f"{self.name}: {_op_text(name)} is a graph-level op, which the VM does not run: lower "
                          f"it to R.call_tir with LegalizeOps() first (tvmlite.compile's 'zero' and 'default' "
                          f"pipelines do)")
        raise VMError(f"{self.name}: {_op_text(name)} cannot run on the VM: it has no legalization"
                      + (" (SimplifyInference removes dropout)" if name == "relax.nn.dropout" else ""))

    # ---- the ops the VM runs
    def _kernel(self, call: rx.Call) -> str:
        """The PrimFunc a call_tir calls (it must be in the module)."""
        gv = call.args[0]
        if not isinstance(gv, GlobalVar) or gv.name_hint not in self.ctx.kernels:
            raise VMError(f"{self.name}: {_op_text(call.op.name)} calls {getattr(gv, 'name_hint', gv)!s}, which is "
                          f"not a TIR function of the module")
        return gv.name_hint

    def _dps_inputs(self, args: rx.Expr) -> tuple[Callable[[Frame], list], list[rx.StructInfo | None]]:
        """The inputs of a destination-passing call and their static struct info."""
        if isinstance(args, rx.Tuple):
            return self._args(args.fields), [f.struct_info for f in args.fields]
        value = self.expr(args)  # a variable holding a tuple
        sinfo = args.struct_info
        fields = list(sinfo.fields) if isinstance(sinfo, rx.TupleStructInfo) else []
        return (lambda frame: list(value(frame))), fields

    def _outputs(self, call: rx.Call, in_sinfo: list[rx.StructInfo | None]) -> tuple[
            list[tuple[Fn, np.dtype]], list[tuple[int, int, int]], bool]:
        """How to allocate each output of ``out_sinfo``: (shape closure, dtype) per output; the sizes
        to read from the inputs' shapes first (slot, input, dim); whether the result is a tuple."""
        is_tuple = isinstance(call.sinfo_args[0], rx.TupleStructInfo)
        outs = self._out_sinfos(call)
        from_inputs: list[tuple[int, int, int]] = []
        borrowed: list[tir.Var] = []
        specs = []
        for k, o in enumerate(outs):
            if not isinstance(o, rx.TensorStructInfo) or o.shape is None or o.dtype == "void":
                raise VMError(f"{self.name}: cannot allocate output {k} of {_op_text(call.op.name)}: its shape "
                              f"and dtype must be known, got {o}")
            for var in collect_vars(o, []):
                if not self.is_sym_defined(var):
                    from_inputs.append(self._size_from_inputs(var, in_sinfo, call))
                    borrowed.append(var)
            specs.append((self.visit_shape_expr_(rx.ShapeExpr(o.shape)), to_numpy_dtype(o.dtype)))
        for var in borrowed:  # read for this call only: later uses still need a real definition
            self.defined.discard(id(var))
        return specs, from_inputs, is_tuple

    def _size_from_inputs(self, var: tir.Var, in_sinfo: list[rx.StructInfo | None],
                          call: rx.Call) -> tuple[int, int, int]:
        """A size of ``out_sinfo`` that nothing defined: read it from the input whose struct info
        has it as a dimension (slot, input index, dim index)."""
        for i, s in enumerate(in_sinfo):
            if isinstance(s, rx.TensorStructInfo) and s.shape is not None:
                for d, dim in enumerate(s.shape):
                    if dim is var:
                        return self.define_sym(var, f"input {i} dim {d} of {_op_text(call.op.name)}"), i, d
        raise VMError(f"{self.name}: cannot allocate the outputs of {_op_text(call.op.name)}: the size {var.name} "
                      f"is defined by no parameter, R.match_cast or input shape")

    def _tir_vars(self, call: rx.Call) -> Fn:
        """The scalar arguments (``tir_vars``) of a call_tir, as a tuple of ints."""
        return self.expr(call.args[2]) if len(call.args) > 2 else _const(())

    @staticmethod
    def _split_prim_args(in_sinfo: list[rx.StructInfo | None], tir_vars: Fn
                         ) -> tuple[Callable[[list], list], Callable[[list, Frame], tuple]] | None:
        """For a call whose inputs include ``R.Prim`` values: closures giving the arrays (tensor
        inputs, in order) and the scalars (those values, in order, then ``tir_vars``), as the
        kernel's buffer and scalar parameters take them; None when every input is a tensor."""
        prims = tuple(i for i, s in enumerate(in_sinfo) if isinstance(s, rx.PrimStructInfo))
        if not prims:
            return None
        tensors = tuple(i for i in range(len(in_sinfo)) if i not in prims)

        def arrays(ins: list) -> list:
            return [ins[i] for i in tensors]

        def scalars(ins: list, frame: Frame) -> tuple:
            return (*(ins[i] for i in prims), *tir_vars(frame))

        return arrays, scalars

    def op_call_tir(self, call: rx.Call) -> Fn:
        """Allocate the outputs of ``out_sinfo``, run the kernel on inputs + outputs (``R.Prim``
        inputs and ``tir_vars`` go to the kernel's scalar parameters)."""
        name = self._kernel(call)
        inputs, in_sinfo = self._dps_inputs(call.args[1])
        specs, from_inputs, is_tuple = self._outputs(call, in_sinfo)
        scalars, kernel = self._tir_vars(call), self.ctx.kernel(name)
        empty = np.empty
        split = self._split_prim_args(in_sinfo, scalars)
        if split is not None:
            arrays_of, scalars_of = split

            def run_with_scalars(frame: Frame) -> Any:
                ins = inputs(frame)
                for slot, i, d in from_inputs:
                    frame[slot] = ins[i].shape[d]
                outs = [empty(shape(frame), dtype) for shape, dtype in specs]
                kernel(arrays_of(ins) + outs, scalars_of(ins, frame))
                return tuple(outs) if is_tuple else outs[0]

            return run_with_scalars
        static = [self._static_shape(o) for o in self._out_sinfos(call)]
        if not is_tuple and not from_inputs and static[0] is not None and len(call.args) == 2:
            fast = self._proven_call(call, name, static[0], specs[0][1])
            if fast is not None:
                return fast
            shape, dtype = static[0], specs[0][1]  # one output of a known shape, no tir_vars: the fast path

            def run_static(frame: Frame) -> Any:
                out = empty(shape, dtype)
                kernel(inputs(frame) + [out], ())
                return out

            return run_static

        def run(frame: Frame) -> Any:
            ins = inputs(frame)
            for slot, i, d in from_inputs:
                frame[slot] = ins[i].shape[d]
            outs = [empty(shape(frame), dtype) for shape, dtype in specs]
            kernel(ins + outs, scalars(frame))
            return tuple(outs) if is_tuple else outs[0]

        return run

    def _proven_call(self, call: rx.Call, name: str, shape: tuple[int, ...], dtype: np.dtype) -> Fn | None:
        """A call_tir whose inputs are all proven (static shapes and dtypes, C-contiguous, aligned) and
        whose one output the VM allocates: the kernel runs through its unchecked native entry on
        data pointers the frame already holds. None when anything is not proven."""
        args = call.args[1].fields if isinstance(call.args[1], rx.Tuple) else None
        if args is None:
            return None
        shapes, dtypes, pointer_slots = [], [], []
        for a in args:
            if isinstance(a, rx.Constant):
                data = np.require(a.data, requirements="C")
                if not data.flags.aligned:
                    return None
                slot = self.new_slot()  # the constant's array lives as long as the plan (in the template)
                self.constants.append((slot, _data_pointer(data)))
                self.constants.append((self.new_slot(), data))
                shapes.append(data.shape)
                dtypes.append(data.dtype)
                pointer_slots.append(slot)
                continue
            info = self.proven.get(id(a)) if isinstance(a, rx.Var) else None
            if info is None:
                return None
            slot = self._pointer_slot(a)
            if slot is None:
                return None
            shapes.append(info[0])
            dtypes.append(info[1])
            pointer_slots.append(slot)
        entry = self.ctx.static_kernel(name, [*shapes, shape], [*(str(d) for d in dtypes), str(dtype)], len(args))
        if entry is None:
            return None
        cfunc, extra, status_error = entry
        out_slot = self.new_slot()
        self.produced = (call, out_slot)
        read = operator.itemgetter(*pointer_slots) if pointer_slots else (lambda frame: ())
        if len(pointer_slots) == 1:
            single = read
            read = lambda frame: (single(frame),)  # noqa: E731  (itemgetter of one slot gives the value)
        empty, pointer = np.empty, _POINTER
        if extra:
            def run_proven(frame: Frame) -> Any:
                out = empty(shape, dtype)
                frame[out_slot] = p = pointer(out)
                status = cfunc(*read(frame), p, *extra)
                if status:
                    raise status_error(status, (*read(frame), p, *extra))
                return out
        else:
            def run_proven(frame: Frame) -> Any:
                out = empty(shape, dtype)
                frame[out_slot] = p = pointer(out)
                status = cfunc(*read(frame), p)
                if status:
                    raise status_error(status, (*read(frame), p))
                return out

        return run_proven

    def _pointer_slot(self, var: rx.Var) -> int | None:
        """The slot of a proven variable's data pointer: a parameter's (filled right after the checks)
        or a proven call's output's; None for other values."""
        root = self.aliases.get(id(var), id(var))
        slot = self.pointers.get(root)
        if slot is None and root in self.params:
            slot = self.pointers[root] = self.new_slot()
        return slot

    @staticmethod
    def _out_sinfos(call: rx.Call) -> tuple[rx.StructInfo, ...]:
        """The struct info of each output of a destination-passing call."""
        out = call.sinfo_args[0]
        return out.fields if isinstance(out, rx.TupleStructInfo) else (out,)

    @staticmethod
    def _static_shape(sinfo: rx.StructInfo) -> tuple[int, ...] | None:
        """The shape of a tensor struct info when every dim is a constant."""
        dims = getattr(sinfo, "shape", None)
        if dims is None or not all(isinstance(d, tir.IntImm) for d in dims):
            return None
        return tuple(int(d.value) for d in dims)

    def op_call_tir_inplace(self, call: rx.Call) -> Fn:
        """Outputs with an ``inplace_indices`` entry are that input (the kernel writes into it);
        the others (-1) are allocated and passed after the inputs."""
        name = self._kernel(call)
        inputs, in_sinfo = self._dps_inputs(call.args[1])
        specs, from_inputs, is_tuple = self._outputs(call, in_sinfo)
        indices = tuple(call.attrs["inplace_indices"])
        scalars, kernel = self._tir_vars(call), self.ctx.kernel(name)
        empty = np.empty
        split = self._split_prim_args(in_sinfo, scalars)
        arrays_of, scalars_of = split if split is not None else (lambda ins: ins, lambda ins, frame: scalars(frame))

        def run(frame: Frame) -> Any:
            ins = inputs(frame)
            for slot, i, d in from_inputs:
                frame[slot] = ins[i].shape[d]
            fresh = [empty(shape(frame), dtype) for (shape, dtype), k in zip(specs, indices) if k == -1]
            kernel(arrays_of(ins) + fresh, scalars_of(ins, frame))
            it = iter(fresh)
            outs = [ins[k] if k != -1 else next(it) for k in indices]
            return tuple(outs) if is_tuple else outs[0]

        return run

    def op_call_dps_packed(self, call: rx.Call) -> Fn:
        """A packed function called with inputs and the allocated outputs (as Tensors)."""
        func = call.args[0]
        ref = _PackedRef(func.global_symbol) if isinstance(func, rx.ExternFunc) else None
        callee = self.expr(func)
        inputs, in_sinfo = self._dps_inputs(call.args[1])
        specs, from_inputs, is_tuple = self._outputs(call, in_sinfo)
        empty = np.empty

        def run(frame: Frame) -> Any:
            ins = inputs(frame)
            for slot, i, d in from_inputs:
                frame[slot] = ins[i].shape[d]
            outs = [empty(shape(frame), dtype) for shape, dtype in specs]
            fn = ref if ref is not None else callee(frame)
            fn(*ins, *outs)  # _PackedRef wraps them as Tensors sharing the arrays
            return tuple(outs) if is_tuple else outs[0]

        return run

    def op_call_pure_packed(self, call: rx.Call) -> Fn:
        """``R.call_pure_packed("name", ...)``."""
        func = call.args[0]
        if isinstance(func, rx.ExternFunc):
            return self._packed(func.global_symbol, call.args[1:], call.sinfo_args)
        callee, args = self.expr(func), self._args(call.args[1:])
        return lambda frame: callee(frame)(*args(frame))

    def op_print(self, call: rx.Call) -> Fn:
        """``R.print``: the registered ``relax.run.print``; the value is an empty tuple."""
        printer, args = _PackedRef("relax.run.print"), self._args(call.args)

        def run(frame: Frame) -> tuple:
            printer(*args(frame))
            return ()

        return run

    def op_assert_op(self, call: rx.Call) -> Fn:
        """``R.assert_op``: AssertionError (from ``relax.run.assert_op``) unless the condition holds."""
        check = _PackedRef("relax.run.assert_op")
        cond, rest = self.expr(call.args[0]), self._args(call.args[1:])

        def run(frame: Frame) -> tuple:
            check(cond(frame), *rest(frame))
            return ()

        return run

    def op_shape_of(self, call: rx.Call) -> Fn:
        """The shape of a tensor, as a tuple of ints."""
        x = self.expr(call.args[0])
        return lambda frame: x(frame).shape

    def op_null_value(self, call: rx.Call) -> Fn:
        """None."""
        return _const(None)


_OP_METHODS = {
    "relax.call_tir": "op_call_tir",
    "relax.call_tir_inplace": "op_call_tir_inplace",
    "relax.call_dps_packed": "op_call_dps_packed",
    "relax.call_pure_packed": "op_call_pure_packed",
    "relax.print": "op_print",
    "relax.assert_op": "op_assert_op",
    "relax.shape_of": "op_shape_of",
    "relax.null_value": "op_null_value",
}


# ==================================================================== the VM
class VirtualMachine:
    """Runs the Relax functions of what :func:`tvmlite.compile` returns: ``vm["main"](*args)``.

    Arguments are numpy arrays or Tensors (tensors), tuples, tuples of ints (shapes) and Python
    scalars (prim values); each is checked against the signature before anything runs. Results
    come back as Tensors, tuples and Python scalars."""

    def __init__(self, executable: Any, device: Device | Sequence[Device] | None = None) -> None:
        mod = getattr(executable, "mod", None)
        if not isinstance(mod, IRModule) or not callable(getattr(executable, "call", None)):
            raise TypeError(f"VirtualMachine takes what tvmlite.compile returns (an executable with .mod and "
                            f".call), got {type(executable).__name__}")
        devices = list(device) if isinstance(device, (list, tuple)) else [device]
        for d in devices:
            if d is not None and not isinstance(d, Device):
                raise TypeError(f"VirtualMachine: the device must be tvmlite.cpu(), got {d!r}")
        self.executable = executable
        self.device = devices[0] if devices[0] is not None else Device()
        plans = {gv.name_hint: _Plan(gv.name_hint, [p.name_hint for p in f.params])
                 for gv, f in mod.functions_items() if isinstance(f, rx.Function)}
        kernels = {gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)}
        ctx = _Context(executable, kernels, plans)
        for gv, f in mod.functions_items():  # every plan exists first: functions may call each other
            if isinstance(f, rx.Function):
                _Planner(ctx, plans[gv.name_hint]).build(f)
        self._plans = plans
        self._entries = {name: _Entry(plan) for name, plan in plans.items()}

    def __getitem__(self, name: str) -> "_Entry":
        """The Relax function ``name`` as a Python callable."""
        entry = self._entries.get(name)
        if entry is None:
            raise KeyError(f"no Relax function named {name!r} in the executable (it has: "
                           f"{', '.join(self._entries) or 'none'})")
        return entry

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def function_names(self) -> list[str]:
        """The names of the Relax functions ``vm[name]`` accepts."""
        return list(self._entries)

    def invoke(self, name: str, *args: Any) -> Any:
        """``vm[name](*args)``."""
        return self[name](*args)


class _Entry:
    """``vm["f"]``: checks the arguments, runs ``f`` and returns Tensors, tuples and scalars."""

    __slots__ = ("_plan",)

    def __init__(self, plan: _Plan) -> None:
        self._plan = plan

    def __call__(self, *args: Any) -> Any:
        return _to_user(self._plan.invoke(args))

    def __repr__(self) -> str:
        return f"<VM function {self._plan.name}({', '.join(self._plan.param_names)})>"
