"""Runtime objects shared by the VM and user code: the numpy-backed ``Tensor``, the ``cpu()``
device and the registry of packed functions (Python callables that ``R.call_packed`` reaches by
name, as TVM's global function registry).

Imports numpy only (never llvmlite), so ``tvmlite.runtime`` is cheap to load."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..ir.dtype import from_numpy_dtype, to_numpy_dtype

__all__ = ["Device", "cpu", "Tensor", "tensor", "empty", "register_func", "get_func", "list_funcs",
           "ArgumentError"]


class ArgumentError(TypeError, ValueError):
    """An argument that does not match the signature of the function called (refused before the
    function runs): a wrong count, kind, dtype, rank, shape or layout."""


# ==================================================================== devices
class Device:
    """A device (only the host CPU exists in tvmlite): ``cpu(0)``."""

    __slots__ = ("device_type", "index")

    def __init__(self, device_type: str = "cpu", index: int = 0) -> None:
        if device_type != "cpu":
            raise ValueError(f"unsupported device {device_type!r}: tvmlite runs on the host CPU only (cpu())")
        self.device_type = device_type
        self.index = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (other.device_type, other.index) == (self.device_type, self.index)

    def __hash__(self) -> int:
        return hash((self.device_type, self.index))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.index})"


def cpu(index: int = 0) -> Device:
    """The host CPU (TVM's ``tvm.cpu()``)."""
    return Device("cpu", index)


# ==================================================================== tensors
class Tensor:
    """An n-dimensional array on the CPU, backed by a C-contiguous numpy array.

    ``numpy()`` returns a copy (as TVM's), so results never alias the VM's buffers;
    ``np.asarray(t)`` gives the backing array itself, and ``copyfrom`` writes into it (what a
    destination-passing packed function does with its outputs)."""

    __slots__ = ("_data", "device")

    def __init__(self, data: np.ndarray, device: Device | None = None) -> None:
        self._data = data  # trusted: callers pass a C-contiguous array of a supported dtype
        self.device = device if device is not None else _CPU

    @property
    def shape(self) -> tuple[int, ...]:
        """The sizes, as a tuple of ints."""
        return self._data.shape

    @property
    def dtype(self) -> str:
        """The element type as a tvmlite dtype string (``"float32"``)."""
        return from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    def numpy(self) -> np.ndarray:
        """A numpy copy of the contents."""
        return self._data.copy()

    def copyfrom(self, source: "Tensor | np.ndarray") -> "Tensor":
        """Overwrite the contents with ``source`` (same shape; cast to this dtype); returns self."""
        src = source._data if isinstance(source, Tensor) else np.asarray(source)
        if src.shape != self._data.shape:
            raise ValueError(f"copyfrom: shape {src.shape} does not match the tensor's {self._data.shape}")
        np.copyto(self._data, src, casting="unsafe")
        return self

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy:
            return np.array(self._data, dtype=dtype)
        return self._data if dtype is None else self._data.astype(dtype, copy=False)

    def __repr__(self) -> str:
        return f"<tvmlite.Tensor shape={self.shape}, {self.dtype}, {self.device}>\n{self._data!r}"


_CPU = Device("cpu", 0)


def tensor(data: Any, device: Device | None = None, dtype: str | None = None) -> Tensor:
    """A Tensor holding a C-contiguous copy of ``data`` (TVM's ``tvm.runtime.tensor``)."""
    src = data._data if isinstance(data, Tensor) else data
    arr = np.array(src, dtype=to_numpy_dtype(dtype) if dtype else None, order="C", copy=True)
    from_numpy_dtype(arr.dtype)  # ValueError for dtypes tvmlite has no name for (objects, strings)
    return Tensor(arr, device)


def empty(shape: Sequence[int], dtype: str = "float32", device: Device | None = None) -> Tensor:
    """An uninitialised Tensor."""
    return Tensor(np.empty(tuple(shape), dtype=to_numpy_dtype(dtype)), device)


# ==================================================================== packed functions
_REGISTRY: dict[str, Callable[..., Any]] = {}


def register_func(name: str | Callable[..., Any], f: Callable[..., Any] | None = None,
                  override: bool = False) -> Any:
    """Register ``f`` under ``name`` for ``R.call_packed("name", ...)`` (TVM's ``register_func``).

    Usable as ``register_func("name", f)``, ``@register_func("name")`` or bare ``@register_func``
    (registers under the function's own name). Tensors reach ``f`` as :class:`Tensor`; it may
    return a Tensor, a numpy array, a scalar, a tuple of these or None."""
    if callable(name):
        return register_func(name.__name__, name, override)

    def do_register(func: Callable[..., Any]) -> Callable[..., Any]:
        if not override and name in _REGISTRY:
            raise ValueError(f"a packed function named {name!r} is already registered (pass override=True "
                             f"to replace it)")
        _REGISTRY[name] = func
        return func

    return do_register(f) if f is not None else do_register


def get_func(name: str, allow_missing: bool = False) -> Callable[..., Any] | None:
    """The packed function registered as ``name``; ValueError (or None with allow_missing) if absent."""
    func = _REGISTRY.get(name)
    if func is None and not allow_missing:
        raise ValueError(f"no packed function named {name!r} is registered (register it with "
                         f"tvmlite.register_func({name!r}))")
    return func


def list_funcs() -> list[str]:
    """The names of every registered packed function, sorted."""
    return sorted(_REGISTRY)


# ==================================================================== built-ins (TVM's names)
def _python_value(value: Any) -> Any:
    """A value as Python sees it in messages: tensors as numpy arrays."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, tuple):
        return tuple(_python_value(v) for v in value)
    return value


@register_func("relax.run.print")
def _relax_print(format_str: str, *values: Any) -> None:
    """``R.print``: the values formatted with ``format_str`` (space-separated without one)."""
    args = [_python_value(v) for v in values]
    print(format_str.format(*args) if format_str else " ".join(map(str, args)))


@register_func("relax.run.assert_op")
def _relax_assert_op(condition: Any, format_str: str, *values: Any) -> None:
    """``R.assert_op``: AssertionError with the formatted message unless ``condition`` holds."""
    cond = _python_value(condition)
    if isinstance(cond, np.ndarray):
        if cond.dtype != np.bool_ or cond.ndim != 0:
            raise ValueError(f"R.assert_op: the condition must be a bool scalar, got a {cond.dtype} tensor "
                             f"of shape {cond.shape}")
        cond = bool(cond)
    if not cond:
        args = [_python_value(v) for v in values]
        message = "Assertion Failed"
        if format_str:
            message = format_str.format(*args)
        elif args:
            message = ", ".join(map(str, args))
        raise AssertionError(message)


# The data-dependent ops LegalizeOps hands to the runtime (ops/sets.py), as TVM's relax.run.*.
def _numpy(value: Any) -> np.ndarray:
    """The array of a Tensor argument."""
    return value._data if isinstance(value, Tensor) else np.asarray(value)


@register_func("relax.run.nonzero")
def _relax_nonzero(x: Any) -> Tensor:
    """``R.nonzero``: the indices of the nonzero elements, one row per dimension (int64)."""
    where = np.atleast_1d(_numpy(x)).nonzero()
    return Tensor(np.ascontiguousarray(np.stack(where).astype("int64")))


@register_func("relax.run.unique")
def _relax_unique(x: Any, sort: Any, return_index: Any, return_inverse: Any, return_counts: Any,
                  axis: Any = None) -> Any:
    """``R.unique``: the unique values (in first-seen order unless ``sort``) and the vectors asked for."""
    data = _numpy(x)
    ax = None if axis is None else int(axis)
    values, first, inverse, counts = np.unique(data, return_index=True, return_inverse=True, return_counts=True,
                                               axis=ax)
    inverse = inverse.reshape(-1)
    if not sort:  # order the unique values by their first occurrence
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values = np.take(values, order, axis=0 if ax is None else ax)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    outs = [values] + [v.astype("int64") for v, wanted in ((first, return_index), (inverse, return_inverse),
                                                           (counts, return_counts)) if wanted]
    tensors = tuple(Tensor(np.ascontiguousarray(o)) for o in outs)
    return tensors[0] if len(tensors) == 1 else tensors


# The collectives R.ccl.* legalize to (ops/ccl.py), as TVM's disco runtime names them. tvmlite is
# one worker: a reduction or broadcast over it is a copy, and so is a gather or scatter over one.
def _one_worker(name: str, workers: int) -> None:
    """RuntimeError unless the collective runs over a single worker."""
    if workers != 1:
        raise RuntimeError(f"runtime.disco.{name}: the call spans {workers} workers, but tvmlite runs a single "
                           f"worker (num_workers must be 1)")


@register_func("runtime.disco.allreduce")
def _disco_allreduce(x: Any, op_code: Any, in_group: Any, out: Any) -> None:
    """The reduction of every worker's ``x``: over the one worker, ``x`` itself (avg included)."""
    _numpy(out)[...] = _numpy(x)


@register_func("runtime.disco.allgather")
def _disco_allgather(x: Any, in_group: Any, out: Any) -> None:
    """Every worker's ``x`` concatenated along axis 0 (``out`` is num_workers times as long)."""
    src, dst = _numpy(x), _numpy(out)
    _one_worker("allgather", dst.shape[0] // src.shape[0] if src.shape[0] else 1)
    dst[...] = src


@register_func("runtime.disco.broadcast_from_worker0")
def _disco_broadcast(x: Any, in_group: Any, out: Any) -> None:
    """Worker 0's ``x`` on every worker."""
    _numpy(out)[...] = _numpy(x)


@register_func("runtime.disco.scatter_from_worker0")
def _disco_scatter(parts: Any, in_group: Any, out: Any) -> None:
    """Part ``i`` of worker 0's ``parts`` (one per worker along axis 0) to worker ``i``."""
    src = _numpy(parts)
    _one_worker("scatter_from_worker0", src.shape[0])
    _numpy(out)[...] = src[0]


# ==================================================================== Python functions (R.call_py_func)
_PY_FUNCS: dict[str, Callable[..., Any]] = {}


def register_py_func(name: str | Callable[..., Any], f: Callable[..., Any] | None = None,
                     override: bool = False) -> Any:
    """Register ``f`` as the Python function ``R.call_py_func("name", ...)`` calls (as TVM's
    BasePyModule does with its functions); usable as a decorator like :func:`register_func`. It
    receives the arguments as read-only numpy arrays and returns an array (or a tuple of them)."""
    if callable(name):
        return register_py_func(name.__name__, name, override)

    def do_register(func: Callable[..., Any]) -> Callable[..., Any]:
        if not override and name in _PY_FUNCS:
            raise ValueError(f"a Python function named {name!r} is already registered (pass override=True "
                             f"to replace it)")
        _PY_FUNCS[name] = func
        return func

    return do_register(f) if f is not None else do_register


def get_py_func(name: str) -> Callable[..., Any]:
    """The Python function registered as ``name``; ValueError naming how to register it if absent."""
    func = _PY_FUNCS.get(name)
    if func is None:
        raise ValueError(f"R.call_py_func: no Python function named {name!r} is registered (register it with "
                         f"tvmlite.register_py_func({name!r}, f))")
    return func
