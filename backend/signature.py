"""The calling convention of a PrimFunc and the checks of one call's arguments against it, shared
by the LLVM executable and the TIR reference interpreter (numpy and ctypes only, no llvmlite).

A signature lists the parameters in order (buffers with their declared shape, strides and dtype;
scalars with their dtype), the symbolic variables the buffer shapes introduce (one int64 native
argument each, in order of first appearance) and whether the function is ``tir.noalias``.
:class:`ArgumentChecker` plans the checks once per signature; a call then costs a few
microseconds and every message names the function and the parameter."""
from __future__ import annotations

import ctypes
import dataclasses
import functools
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..ir import tir
from ..ir.dtype import parse_dtype, to_numpy_dtype
from ..ir.scalar_eval import Fn, ScalarCompiler
from ..ir.stmt_functor import statements_of, vars_of
from .runtime import ArgumentError

__all__ = ["ARRAY_DATA_OFFSET", "ParamInfo", "Signature", "prim_func_signature", "ArgumentChecker", "data_pointer",
           "pointer_reader", "written_data_vars"]


# ---------------------------------------------------------------------------------------------
# Signatures


@dataclasses.dataclass(frozen=True)
class ParamInfo:
    """One PrimFunc parameter: a buffer (``buffer`` set) or a scalar of ``dtype``."""

    name: str
    var: tir.Var
    dtype: str
    buffer: tir.Buffer | None = None
    written: bool = False  # the function stores into this buffer (the array must be writeable)


@dataclasses.dataclass(frozen=True)
class Signature:
    """The parameters of a PrimFunc as a caller sees them (the LLVM backend's ``FuncSignature``
    extends it with the native symbol, result and thread-pool use; the checker only reads these)."""

    name: str
    params: tuple[ParamInfo, ...]
    sym_vars: tuple[tir.Var, ...]  # one int64 argument each, after the buffer pointers
    noalias: bool

    @property
    def buffer_params(self) -> tuple[ParamInfo, ...]:
        """The buffer parameters, in order."""
        return tuple(p for p in self.params if p.buffer is not None)

    @property
    def scalar_params(self) -> tuple[ParamInfo, ...]:
        """The scalar parameters, in order."""
        return tuple(p for p in self.params if p.buffer is None)


def written_data_vars(body: tir.Stmt) -> set[int]:
    """ids of the data Vars of every buffer the body stores into."""
    return {id(n.buffer.data) for n in statements_of(body) if isinstance(n, tir.BufferStore)}


def prim_func_signature(name: str, func: tir.PrimFunc) -> Signature:
    """The signature of ``func`` under the backend contract (docs/design.md): buffers and scalars in
    ``params`` order, the symbolic variables of buffer shapes and strides in order of appearance."""
    written = written_data_vars(func.body)
    scalar_ids = {id(p) for p in func.params if p not in func.buffer_map}
    params: list[ParamInfo] = []
    sym: dict[int, tir.Var] = {}
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            params.append(ParamInfo(p.name, p, p.dtype))
            continue
        params.append(ParamInfo(buf.name, p, buf.dtype, buf, id(buf.data) in written))
        for dim in (*buf.shape, *buf.strides):
            for v in vars_of(dim):
                if id(v) not in scalar_ids:
                    sym.setdefault(id(v), v)
    return Signature(name, tuple(params), tuple(sym.values()), bool(func.attrs.get("tir.noalias", False)))


# ---------------------------------------------------------------------------------------------
# Data pointers

def _probe_data_offset() -> int | None:
    """The offset of the data pointer inside a numpy array object (``PyArrayObject.data``, right
    after the object header), verified on live arrays; None when it cannot be confirmed."""
    probes = [np.empty(n, np.float32) for n in (3, 17, 1000)] + [np.zeros((2, 3), np.int8)[:, 1:]]
    size = ctypes.sizeof(ctypes.c_void_p)
    for offset in range(size, 8 * size, size):
        if all(ctypes.c_void_p.from_address(id(a) + offset).value == a.ctypes.data for a in probes):
            return offset
    return None


# Where numpy keeps an array's data pointer in its object (None: unknown, read it through ctypes).
ARRAY_DATA_OFFSET = _probe_data_offset()
_from_address = ctypes.c_void_p.from_address


def pointer_reader() -> Callable[[np.ndarray], int]:
    """The fastest ``f(arr) -> data address`` available: a bound ``from_address`` composed with the
    probed offset when there is one (one C call plus an attribute read), else :func:`data_pointer`."""
    if ARRAY_DATA_OFFSET is None:
        return data_pointer
    offset = ARRAY_DATA_OFFSET
    return lambda arr: _from_address(id(arr) + offset).value or 0


def data_pointer(arr: np.ndarray) -> int:
    """The address of ``arr``'s first element (``arr.ctypes.data``, read directly from the array
    object: ~0.1 us instead of ~1 us, which matters when a call passes several arrays)."""
    if ARRAY_DATA_OFFSET is None:
        return arr.ctypes.data
    return _from_address(id(arr) + ARRAY_DATA_OFFSET).value or 0


# ---------------------------------------------------------------------------------------------
# Shape expressions


class _NotIntegral(Exception):
    """A shape expression the checker cannot evaluate."""


class _ShapeCompiler(ScalarCompiler):
    """The integer shape arithmetic of the one scalar compiler (``ir/scalar_eval.py``): literals,
    variables (read from an env keyed by ``id(var)``), casts (the value itself), ``+ - * / % // T.min
    T.max``; anything else (floats, comparisons, selects, lets, calls) is not a shape expression."""

    def var_key(self, var: tir.Var) -> int:
        """Sizes are keyed by the variable's identity."""
        return id(var)

    def constant(self, value: Any, dtype: str) -> int:
        """An integer literal as a Python int."""
        return value

    def unknown(self, node: Any) -> Fn:
        """Not a shape expression."""
        raise _NotIntegral

    def visit_cast_(self, e: tir.Cast) -> Fn:
        """A cast between integer dtypes keeps the value."""
        return self.compile(e.value)

    def refuse(self, node: Any) -> Fn:
        """Not integer shape arithmetic."""
        raise _NotIntegral

    visit_float_imm_ = visit_select_ = visit_tir_call_ = visit_tir_let_ = refuse
    visit_eq_ = visit_ne_ = visit_lt_ = visit_le_ = visit_gt_ = visit_ge_ = refuse
    visit_and_ = visit_or_ = visit_not_ = refuse


@functools.lru_cache(maxsize=4096)
def _compiled_shape(e: tir.PrimExpr) -> Fn | None:
    """The closure computing a shape expression from an env of sizes, or None when it is not one."""
    try:
        return _ShapeCompiler().compile(e)
    except _NotIntegral:
        return None


class _ShapeEval:
    """Evaluates an integer shape expression given the values of its variables."""

    def __init__(self, env: dict[int, int]) -> None:
        """An evaluator over variable values keyed by ``id(var)``."""
        self.env = env

    def run(self, e: tir.PrimExpr) -> int | None:
        """The value, or None when a variable is unbound or the expression is not integral."""
        fn = _compiled_shape(e)
        if fn is None:
            return None
        try:
            return fn(self.env)
        except (KeyError, ZeroDivisionError):
            return None


def dim_text(d: tir.PrimExpr) -> str:
    """A dimension as printed in messages (``4``, ``n``, ``n + m``)."""
    if isinstance(d, tir.IntImm):
        return str(d.value)
    if isinstance(d, tir.Var):
        return d.name
    try:
        return d.script()
    except Exception:  # printing is best effort inside an error message
        return type(d).__name__


def shape_text(dims: Iterable[tir.PrimExpr]) -> str:
    """A shape as printed in messages (``(n, 4)``)."""
    items = [dim_text(d) for d in dims]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _describe(value: Any) -> str:
    """What a value is, for messages."""
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    return type(value).__name__


def _plural(n: int, word: str) -> str:
    """``1 array`` / ``2 arrays``."""
    return f"{n} {word}{'s' if n != 1 else ''}"


# ---------------------------------------------------------------------------------------------
# The checker


class ArgumentChecker:
    """Checks one call's arguments against a signature: kind, dtype, rank, shape (symbolic sizes
    bound and compared, compound sizes such as ``n + m`` solved or evaluated), layout, alignment,
    writeability of written buffers, ``tir.noalias`` overlaps, scalar kinds and ranges.

    The per-parameter work is planned once (dtype, rank, and per dimension: a constant, a variable
    to bind or compare, or an expression to evaluate last), so a call costs a few microseconds;
    messages are only composed when a check fails. With ``strided_views`` a buffer that declares
    strides accepts any array whose strides they describe (the interpreter indexes memory through
    them); otherwise every array must be C-contiguous (the compiled code assumes it)."""

    def __init__(self, sig: Signature, *, strided_views: bool = False) -> None:
        """Plan the checks of ``sig`` (a :class:`Signature`, such as the LLVM backend's FuncSignature)."""
        self.sig = sig
        self.strided_views = strided_views
        self.names = ", ".join(p.name for p in sig.params)
        self.buffers = tuple(p for p in sig.params if p.buffer is not None)
        self.scalars = tuple(p for p in sig.params if p.buffer is None)
        # (param, numpy dtype, rank, written, dims plan, strides plan or None, elem_offset plan)
        self.plans = [(p, to_numpy_dtype(p.dtype), len(p.buffer.shape), p.written,
                       [self._dim_plan(d) for d in p.buffer.shape],
                       [self._dim_plan(d) for d in p.buffer.strides] if p.buffer.strides else None,
                       self._offset_plan(p.buffer.elem_offset))
                      for p in self.buffers]
        self.int_scalars = [not parse_dtype(p.dtype).is_float for p in self.scalars]
        # Buffers indexed with narrower than 64-bit arithmetic (int32 sizes): the flattened offset of
        # their last element must fit, else the compiled index arithmetic would wrap around.
        self.size_limits = [(k, p, self._index_limit(p.buffer)) for k, p in enumerate(self.buffers)]
        self.size_limits = [(k, p, lim) for k, p, lim in self.size_limits if lim is not None]
        self.dim_vars = {id(d): vars_of(d) for p in self.buffers
                         for d in (*p.buffer.shape, *p.buffer.strides, p.buffer.elem_offset) if d is not None}
        self.sym = [(id(v), v, 1 << (parse_dtype(v.dtype).bits - 1)) for v in sig.sym_vars]
        self.written_pairs = [(i, j) for i in range(len(self.buffers)) for j in range(i + 1, len(self.buffers))
                              if self.buffers[i].written or self.buffers[j].written] if sig.noalias else []

    @staticmethod
    def _index_limit(buf: tir.Buffer) -> int | None:
        """``2**(bits-1)`` of the narrowest integer dtype among the buffer's sizes, strides and
        offset when narrower than 64 bits (the dtype of its flattened index arithmetic), else None."""
        bits = [parse_dtype(d.dtype).bits for d in (*buf.shape, *buf.strides, buf.elem_offset)
                if isinstance(d, tir.PrimExpr) and not parse_dtype(d.dtype).is_float]
        narrow = min(bits, default=64)
        return 1 << (narrow - 1) if narrow < 64 else None

    def size_error(self, p: ParamInfo, size: int, limit: int) -> ArgumentError:
        """The message for an array too large for its buffer's index arithmetic."""
        bits = limit.bit_length()
        return self.error(f"argument '{p.name}' has {size} elements, too many for the int{bits} index "
                          f"arithmetic of its buffer (at most {limit - 1}); declare its shape with "
                          f"int64 sizes (T.int64()) to pass arrays this large")

    @staticmethod
    def _dim_plan(d: tir.PrimExpr) -> tuple[int, Any]:
        """(0, value) for a constant, (1, var) for a variable, (2, expr) for anything else."""
        if isinstance(d, tir.IntImm):
            return 0, d.value
        return (1, d) if isinstance(d, tir.Var) else (2, d)

    @classmethod
    def _offset_plan(cls, e: tir.PrimExpr | None) -> tuple[int, Any] | None:
        """The elem_offset to check (arrays start at their first element: it must be 0), or None."""
        if e is None or (isinstance(e, tir.IntImm) and e.value == 0):
            return None
        return cls._dim_plan(e)

    def error(self, msg: str) -> ArgumentError:
        """An ArgumentError naming the function."""
        return ArgumentError(f"{self.sig.name}: {msg}")

    def count_error(self, n_arrays: int, n_scalars: int) -> ArgumentError:
        """The message for a call with the wrong number of arrays or scalars."""
        return self.error(f"expected {_plural(len(self.buffers), 'array')} "
                          f"({', '.join(p.name for p in self.buffers)}) and {_plural(len(self.scalars), 'scalar')}, "
                          f"got {n_arrays} and {n_scalars}")

    def scalar(self, p: ParamInfo, value: Any) -> tuple[Any, int | float | bool]:
        """The native value of a scalar argument (float16 as its bits), and its Python value."""
        d = parse_dtype(p.dtype)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, np.generic):
            value = value.item()
        ok_kinds: tuple[type, ...] = (bool,) if d.is_bool else (int,) if d.is_integer else (int, float)
        if not isinstance(value, ok_kinds) or (d.is_integer and isinstance(value, bool)):
            want = "a bool" if d.is_bool else "an integer" if d.is_integer else "a number"
            raise self.error(f"argument '{p.name}' must be {want} ({p.dtype}), got {_describe(value)}")
        if d.is_integer:
            lo, hi = (0, (1 << d.bits) - 1) if d.is_uint else (-(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1)
            if not lo <= value <= hi:
                raise self.error(f"argument '{p.name}' = {value} does not fit in {p.dtype} ({lo}..{hi})")
            return value, value
        if d.is_bool:
            return int(value), value
        if d.bits == 16:
            return int(np.array(value, np.float16).view(np.uint16)), float(value)
        return float(value), float(value)

    def as_array(self, p: ParamInfo, arr: Any) -> np.ndarray:
        """An ndarray from ``arr`` (an ndarray, or a tensor whose ``.numpy()`` shares its memory)."""
        inner = getattr(arr, "_data", None)  # tvmlite.Tensor: its backing array (numpy() copies)
        if isinstance(inner, np.ndarray):
            return inner
        inner = getattr(arr, "numpy", None)
        arr = inner() if callable(inner) else arr
        if not isinstance(arr, np.ndarray):
            raise self.error(f"argument '{p.name}' must be a numpy array ({p.dtype}, shape "
                             f"{shape_text(p.buffer.shape)}), got {_describe(arr)}")
        return arr

    def array_error(self, p: ParamInfo, arr: np.ndarray, want: np.dtype) -> ArgumentError:
        """The message for an array whose dtype, rank or memory layout is wrong."""
        shape = p.buffer.shape
        if arr.dtype != want:
            return self.error(f"argument '{p.name}': expected dtype {p.dtype}, got {arr.dtype}")
        if arr.ndim != len(shape):
            return self.error(f"argument '{p.name}': expected {len(shape)} dimension"
                              f"{'s' if len(shape) != 1 else ''} (shape {shape_text(shape)}), "
                              f"got {arr.ndim} (shape {arr.shape})")
        if not arr.flags.c_contiguous and not (self.strided_views and p.buffer.strides):
            return self.error(f"argument '{p.name}' must be C-contiguous, got a view with strides "
                              f"{arr.strides} (use np.ascontiguousarray)")
        if not arr.flags.aligned:
            return self.error(f"argument '{p.name}' is not aligned to its {arr.itemsize}-byte elements")
        return self.error(f"argument '{p.name}' is written by the function, but the array is read-only")

    def check(self, buffers: Sequence[Any], scalars: Sequence[Any]) -> tuple[
            list[np.ndarray], list[Any], list[Any], dict[int, int]]:
        """Check every argument: (the arrays, the scalars' native values, their Python values, the
        value of every symbolic variable by ``id``)."""
        if len(buffers) != len(self.buffers) or len(scalars) != len(self.scalars):
            raise self.count_error(len(buffers), len(scalars))
        env: dict[int, int] = {}
        source: dict[int, str] = {}
        native_scalars = []
        py_scalars = []
        for p, is_int, value in zip(self.scalars, self.int_scalars, scalars):
            cval, pyval = self.scalar(p, value)
            native_scalars.append(cval)
            py_scalars.append(pyval)
            if is_int:
                env[id(p.var)] = int(pyval)
                source[id(p.var)] = f"argument '{p.name}'"
        arrays = []
        deferred: list = []
        strided_views = self.strided_views
        for (p, want, ndim, written, dims, strides, offset), arr in zip(self.plans, buffers):
            if type(arr) is not np.ndarray:
                arr = self.as_array(p, arr)
            flags = arr.flags
            if (arr.dtype != want or arr.ndim != ndim or not flags.aligned or (written and not flags.writeable)
                    or not (flags.c_contiguous or (strided_views and strides is not None))):
                raise self.array_error(p, arr, want)
            arrays.append(arr)
            shape = arr.shape
            for k, (kind, dim) in enumerate(dims):
                actual = shape[k]
                if kind == 0:
                    if dim != actual:
                        raise self.error(f"argument '{p.name}': expected shape {shape_text(p.buffer.shape)}, "
                                         f"got {shape}: dimension {k} must be {dim}")
                elif kind == 1:
                    bound = env.get(id(dim))
                    if bound is None:
                        env[id(dim)] = actual
                        source[id(dim)] = f"{p.name}.shape[{k}]"
                    elif bound != actual:
                        raise self.error(
                            f"argument '{p.name}': expected shape {shape_text(p.buffer.shape)} with "
                            f"{dim.name} = {bound} (from {source[id(dim)]}), got {shape}: "
                            f"{p.name}.shape[{k}] is {actual}, not {dim.name} = {bound}")
                else:
                    deferred.append((p, shape, dim, actual, f"{p.name}.shape[{k}]"))
            if strides is not None:
                self._strides(p, arr, strides, env, source, deferred)
            if offset is not None:
                self._bind(p, offset, 0, "elem_offset", env, source, deferred, shape)
        if deferred:
            self._deferred(deferred, env, source)
        for i, j in self.written_pairs:
            self._check_overlap(i, j, arrays[i], arrays[j])
        for k, p, limit in self.size_limits:
            size = arrays[k].size
            if size >= limit:
                raise self.size_error(p, size, limit)
        for vid, v, limit in self.sym:
            value = env[vid]
            if value >= limit:
                raise self.error(f"{v.name} = {value} does not fit in its dtype {v.dtype}")
        return arrays, native_scalars, py_scalars, env

    def __call__(self, buffers: Sequence[Any], scalars: Sequence[Any]) -> tuple[list, list[np.ndarray]]:
        """The native argument list of a compiled function (data pointers, one int64 per symbolic
        variable, the scalars), and the checked arrays (keep them alive until the call returns)."""
        arrays, native_scalars, _, env = self.check(buffers, scalars)
        native = [data_pointer(a) for a in arrays]
        native += [env[vid] for vid, _, _ in self.sym]
        return native + native_scalars, arrays

    def static_args(self, shapes: Sequence[tuple[int, ...]], dtypes: Sequence[str]) -> list[int] | None:
        """The symbolic-variable arguments of a call whose arrays are known to be C-contiguous, aligned,
        fresh or read-only as required, of these ``shapes`` and ``dtypes`` (what the VM proves when it
        plans a call); None when the call could not pass the checks (it then checks at run time)."""
        if self.scalars or len(shapes) != len(self.buffers):
            return None
        env: dict[int, int] = {}
        source: dict[int, str] = {}
        deferred: list = []
        try:
            for (p, want, ndim, _, dims, strides, offset), shape, dtype in zip(self.plans, shapes, dtypes):
                if to_numpy_dtype(dtype) != want or len(shape) != ndim:
                    return None
                for k, (kind, dim) in enumerate(dims):
                    self._bind(p, (kind, dim), shape[k], f"{p.name}.shape[{k}]", env, source, deferred, shape)
                if strides is not None:
                    c_strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
                    for k, ((kind, dim), actual) in enumerate(zip(strides, c_strides)):
                        if shape[k] > 1 or kind == 1:
                            self._bind(p, (kind, dim), actual, f"{p.name}.strides[{k}]", env, source, deferred,
                                       shape)
                if offset is not None:
                    self._bind(p, offset, 0, "elem_offset", env, source, deferred, shape)
            if deferred:
                self._deferred(deferred, env, source)
            values = [env[vid] for vid, _, _ in self.sym]
        except (ArgumentError, KeyError):
            return None
        if any(value >= limit for value, (_, _, limit) in zip(values, self.sym)):
            return None
        for k, _, limit in self.size_limits:
            if int(np.prod(shapes[k], dtype=object)) >= limit:
                return None
        return values

    def _bind(self, p: ParamInfo, plan: tuple[int, Any], actual: int, where: str, env: dict, source: dict,
              deferred: list, shape: tuple[int, ...]) -> None:
        """One planned dimension, stride or offset against its actual value."""
        kind, dim = plan
        if kind == 0:
            if dim != actual:
                note = " (a numpy array starts at its first element)" if where == "elem_offset" else ""
                raise self.error(f"argument '{p.name}': {where} must be {dim}, got {actual}{note}")
        elif kind == 1:
            bound = env.setdefault(id(dim), actual)
            source.setdefault(id(dim), where)
            if bound != actual:
                raise self.error(f"argument '{p.name}': {where} is {actual}, but {dim.name} = {bound} "
                                 f"(from {source[id(dim)]})")
        else:
            deferred.append((p, shape, dim, actual, where))

    def _strides(self, p: ParamInfo, arr: np.ndarray, plan: list, env: dict, source: dict,
                 deferred: list) -> None:
        """Declared strides (in elements) must describe the array: those of a C-contiguous array, or
        with ``strided_views`` the array's own (variables are bound to them)."""
        shape = arr.shape
        if self.strided_views and not arr.flags.c_contiguous:
            if any(st < 0 or st % arr.itemsize for st in arr.strides):
                raise self.error(f"argument '{p.name}': the array's strides {arr.strides} are not "
                                 f"non-negative multiples of its item size")
            actual_strides = [st // arr.itemsize for st in arr.strides]
        else:
            actual_strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
        for k, ((kind, dim), actual) in enumerate(zip(plan, actual_strides)):
            if kind == 0 and dim != actual and shape[k] > 1:
                raise self.error(f"argument '{p.name}': expected strides (in elements) "
                                 f"{shape_text(p.buffer.strides)}, got {tuple(actual_strides)}")
            if kind == 2 and shape[k] > 1:
                deferred.append((p, shape, dim, actual, f"{p.name}.strides[{k}]"))
            if kind == 1:
                bound = env.setdefault(id(dim), actual)
                source.setdefault(id(dim), f"{p.name}.strides[{k}]")
                if bound != actual:
                    raise self.error(f"argument '{p.name}': stride {k} is {actual}, but {dim.name} = {bound} "
                                     f"(from {source[id(dim)]})")

    def _deferred(self, deferred: list, env: dict[int, int], source: dict[int, str]) -> None:
        """Dimensions that are expressions (``n + m``, ``n * 2``), once the plain variables are bound.
        A dimension with exactly one unknown variable defines it when it is linear in it."""
        evaluator = _ShapeEval(env)
        pending = list(deferred)
        while pending:
            progress = False
            for item in list(pending):
                p, shape, dim, actual, where = item
                unknown = [v for v in self.dim_vars[id(dim)] if id(v) not in env]
                if len(unknown) == 1 and self._solve(unknown[0], dim, actual, env):
                    source[id(unknown[0])] = where
                    unknown = []
                if unknown:
                    continue
                pending.remove(item)
                progress = True
                expected = evaluator.run(dim)
                if expected is None:
                    raise self.error(f"argument '{p.name}': cannot evaluate the dimension {dim_text(dim)}")
                if expected != actual:
                    binds = ", ".join(f"{v.name} = {env[id(v)]}" for v in self.sig.sym_vars if id(v) in env)
                    raise self.error(f"argument '{p.name}': expected shape {shape_text(p.buffer.shape)} "
                                     f"({binds}), got {shape}: {where} is {actual}, not "
                                     f"{dim_text(dim)} = {expected}")
            if not progress:
                p, shape, dim, actual, where = pending[0]
                unknown = ", ".join(v.name for v in self.dim_vars[id(dim)] if id(v) not in env)
                raise self.error(f"argument '{p.name}': cannot determine {unknown} from {where} = {actual} "
                                 f"(the dimension is {dim_text(dim)})")

    @staticmethod
    def _solve(var: tir.Var, dim: tir.PrimExpr, actual: int, env: dict[int, int]) -> bool:
        """Bind ``var`` so that ``dim == actual`` when ``dim`` is linear in it; False if impossible."""
        trial = _ShapeEval(dict(env))
        values = []
        for x in (0, 1):
            trial.env[id(var)] = x
            values.append(trial.run(dim))
        if None in values or values[1] == values[0]:
            return False
        slope = values[1] - values[0]
        x, rem = divmod(actual - values[0], slope)
        trial.env[id(var)] = x
        if rem or x < 0 or trial.run(dim) != actual:
            return False
        env[id(var)] = x
        return True

    def _check_overlap(self, i: int, j: int, ai: np.ndarray, aj: np.ndarray) -> None:
        """A ``tir.noalias`` function may not get a written array that partly overlaps another one
        (the very same memory twice, the in-place case, is allowed)."""
        if ai.size and aj.size and np.may_share_memory(ai, aj):
            if not (data_pointer(ai) == data_pointer(aj) and ai.nbytes == aj.nbytes):
                raise self.error(f"arguments '{self.buffers[i].name}' and '{self.buffers[j].name}' overlap "
                                 f"in memory, but the function is tir.noalias (pass separate arrays)")
