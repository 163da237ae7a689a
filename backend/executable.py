"""Running compiled PrimFuncs: ``Executable`` (MCJIT engine + target machine kept alive as long as
any function from it), argument checks before native code runs, and the native thread pool that
runs outlined ``T.parallel`` loops."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..ir import tir
from ..ir.dtype import parse_dtype, to_numpy_dtype
from ..ir.functor import Visitor, post_order_visit
from ..ir.module import IRModule
from .llvm_codegen import (PARALLEL_FOR_SYMBOL, CodegenError, FuncSignature, LLVMModule, ParamInfo, codegen,
                      contains_blocks, signature)
from .runtime import ArgumentError  # one error type for kernels and the VM
from .target import Target, TargetError, _llvm

__all__ = ["Executable", "PrimFuncHandle", "ArgumentError", "KernelError", "build", "thread_pool_info",
           "load_module", "LoadedModule"]


class KernelError(RuntimeError):
    """A compiled function reported a failure (a failed ``assert`` or an out-of-memory allocation)."""


# ---------------------------------------------------------------------------------------------
# Thread pool: persistent pthreads written in LLVM IR, so that workers never touch Python. A launch
# that finds the pool busy (another Python thread, or a nested region) runs its loop serially.

_POOL_IR = r"""
@pool.mutex = internal global [64 x i8] zeroinitializer, align 64
@pool.launch = internal global [64 x i8] zeroinitializer, align 64
@pool.work = internal global [64 x i8] zeroinitializer, align 64
@pool.done = internal global [64 x i8] zeroinitializer, align 64
@pool.nthreads = internal global i64 1
@pool.gen = internal global i64 0
@pool.worker_tasks = internal global i64 0
@job.fn = internal global ptr null
@job.closure = internal global ptr null
@job.begin = internal global i64 0
@job.len = internal global i64 0
@job.ntasks = internal global i64 0
@job.next = internal global i64 0
@job.pending = internal global i64 0
@job.status = internal global i32 0

declare i32 @pthread_mutex_init(ptr, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_trylock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_init(ptr, ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_broadcast(ptr)
declare i32 @pthread_cond_signal(ptr)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_detach(i64)

; Take task t of the current job (mutex held on entry and on exit), run it unlocked, record it.
define internal void @pool.run_task(i64 %t, i1 %by_worker) {
entry:
  %t1 = add i64 %t, 1
  store i64 %t1, ptr @job.next
  %fn = load ptr, ptr @job.fn
  %cl = load ptr, ptr @job.closure
  %begin = load i64, ptr @job.begin
  %len = load i64, ptr @job.len
  %n = load i64, ptr @job.ntasks
  %tl = mul i64 %t, %len
  %lo.off = sdiv i64 %tl, %n
  %t1l = mul i64 %t1, %len
  %hi.off = sdiv i64 %t1l, %n
  %lo = add i64 %begin, %lo.off
  %hi = add i64 %begin, %hi.off
  call i32 @pthread_mutex_unlock(ptr @pool.mutex)
  %st = call i32 %fn(i64 %lo, i64 %hi, ptr %cl)
  call i32 @pthread_mutex_lock(ptr @pool.mutex)
  %wt = load i64, ptr @pool.worker_tasks
  %inc = zext i1 %by_worker to i64
  %wt1 = add i64 %wt, %inc
  store i64 %wt1, ptr @pool.worker_tasks
  %failed = icmp ne i32 %st, 0
  %old = load i32, ptr @job.status
  %first = icmp eq i32 %old, 0
  %set = and i1 %failed, %first
  %new = select i1 %set, i32 %st, i32 %old
  store i32 %new, ptr @job.status
  %p = load i64, ptr @job.pending
  %p1 = sub i64 %p, 1
  store i64 %p1, ptr @job.pending
  %last = icmp eq i64 %p1, 0
  br i1 %last, label %signal, label %out
signal:
  call i32 @pthread_cond_signal(ptr @pool.done)
  br label %out
out:
  ret void
}

define internal ptr @pool.worker(ptr %arg) {
entry:
  %seen = alloca i64
  call i32 @pthread_mutex_lock(ptr @pool.mutex)
  %g0 = load i64, ptr @pool.gen
  store i64 %g0, ptr %seen
  br label %wait
wait:
  %g = load i64, ptr @pool.gen
  %s = load i64, ptr %seen
  %same = icmp eq i64 %g, %s
  br i1 %same, label %sleep, label %woke
sleep:
  call i32 @pthread_cond_wait(ptr @pool.work, ptr @pool.mutex)
  br label %wait
woke:
  store i64 %g, ptr %seen
  br label %take
take:
  %t = load i64, ptr @job.next
  %n = load i64, ptr @job.ntasks
  %more = icmp slt i64 %t, %n
  br i1 %more, label %run, label %wait
run:
  call void @pool.run_task(i64 %t, i1 true)
  br label %take
}

define i32 @tvmlite_parallel_for(ptr %fn, ptr %cl, i64 %begin, i64 %end) {
entry:
  %len = sub i64 %end, %begin
  %n = load i64, ptr @pool.nthreads
  %small = icmp sle i64 %len, 1
  %single = icmp sle i64 %n, 1
  %serial = or i1 %small, %single
  br i1 %serial, label %inline, label %try
try:
  %busy = call i32 @pthread_mutex_trylock(ptr @pool.launch)
  %got = icmp eq i32 %busy, 0
  br i1 %got, label %launch, label %inline
inline:
  %r = call i32 %fn(i64 %begin, i64 %end, ptr %cl)
  ret i32 %r
launch:
  %lt = icmp slt i64 %len, %n
  %nt = select i1 %lt, i64 %len, i64 %n
  call i32 @pthread_mutex_lock(ptr @pool.mutex)
  store ptr %fn, ptr @job.fn
  store ptr %cl, ptr @job.closure
  store i64 %begin, ptr @job.begin
  store i64 %len, ptr @job.len
  store i64 %nt, ptr @job.ntasks
  store i64 0, ptr @job.next
  store i64 %nt, ptr @job.pending
  store i32 0, ptr @job.status
  %g = load i64, ptr @pool.gen
  %g1 = add i64 %g, 1
  store i64 %g1, ptr @pool.gen
  call i32 @pthread_cond_broadcast(ptr @pool.work)
  br label %wait
wait:
  %t = load i64, ptr @job.next
  %more = icmp slt i64 %t, %nt
  br i1 %more, label %help, label %check
help:
  call void @pool.run_task(i64 %t, i1 false)
  br label %wait
check:
  %p = load i64, ptr @job.pending
  %done = icmp eq i64 %p, 0
  br i1 %done, label %finish, label %sleep
sleep:
  call i32 @pthread_cond_wait(ptr @pool.done, ptr @pool.mutex)
  br label %check
finish:
  %st = load i32, ptr @job.status
  call i32 @pthread_mutex_unlock(ptr @pool.mutex)
  call i32 @pthread_mutex_unlock(ptr @pool.launch)
  ret i32 %st
}

define i64 @tvmlite_pool_init(i64 %n) {
entry:
  %tid = alloca i64
  call i32 @pthread_mutex_init(ptr @pool.mutex, ptr null)
  call i32 @pthread_mutex_init(ptr @pool.launch, ptr null)
  call i32 @pthread_cond_init(ptr @pool.work, ptr null)
  call i32 @pthread_cond_init(ptr @pool.done, ptr null)
  store i64 1, ptr @pool.nthreads
  br label %loop
loop:
  %i = phi i64 [ 1, %entry ], [ %i1, %next ]
  %made = phi i64 [ 1, %entry ], [ %made1, %next ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %spawn, label %done
spawn:
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @pool.worker, ptr null)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %detach, label %next
detach:
  %h = load i64, ptr %tid
  call i32 @pthread_detach(i64 %h)
  br label %next
next:
  %okx = zext i1 %ok to i64
  %made1 = add i64 %made, %okx
  %i1 = add i64 %i, 1
  br label %loop
done:
  store i64 %made, ptr @pool.nthreads
  ret i64 %made
}

; After fork() the child has no pool threads: run every parallel loop serially there.
define void @tvmlite_pool_after_fork() {
entry:
  call i32 @pthread_mutex_init(ptr @pool.mutex, ptr null)
  call i32 @pthread_mutex_init(ptr @pool.launch, ptr null)
  store i64 1, ptr @pool.nthreads
  ret void
}

define i64 @tvmlite_pool_worker_tasks() {
entry:
  call i32 @pthread_mutex_lock(ptr @pool.mutex)
  %v = load i64, ptr @pool.worker_tasks
  call i32 @pthread_mutex_unlock(ptr @pool.mutex)
  ret i64 %v
}
"""


class _Pool:
    """The process-wide pool (created on first use by a module with parallel loops)."""

    lock = threading.Lock()
    engine: Any = None
    size = 1
    _worker_tasks: Callable[[], int] | None = None


def _default_threads() -> int:
    """``TVMLITE_NUM_THREADS`` if set, else the CPUs this process may run on."""
    env = os.environ.get("TVMLITE_NUM_THREADS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"TVMLITE_NUM_THREADS must be a positive integer, got {env!r}") from None
        if n < 1:
            raise ValueError(f"TVMLITE_NUM_THREADS must be a positive integer, got {env!r}")
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _ensure_pool() -> None:
    """Compile the pool runtime, start its threads and export ``tvmlite_parallel_for`` to the JIT."""
    if _Pool.engine is not None:
        return
    with _Pool.lock:
        if _Pool.engine is not None:
            return
        llvm = _llvm()
        tm = Target("llvm").create_target_machine(jit=True)
        mod = llvm.parse_assembly(_POOL_IR)
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        mod.verify()
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        # The pool lives for the whole process (its threads run code in this engine's memory), so
        # the engine is deliberately never freed, not even at interpreter shutdown.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(engine))
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(tm))
        init = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(engine.get_function_address("tvmlite_pool_init"))
        after_fork = ctypes.CFUNCTYPE(None)(engine.get_function_address("tvmlite_pool_after_fork"))
        _Pool._worker_tasks = ctypes.CFUNCTYPE(ctypes.c_int64)(engine.get_function_address("tvmlite_pool_worker_tasks"))
        llvm.add_symbol(PARALLEL_FOR_SYMBOL, engine.get_function_address(PARALLEL_FOR_SYMBOL))
        _Pool.size = int(init(_default_threads()))
        _Pool.engine = (engine, tm, init, after_fork)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork)


def _after_fork() -> None:
    """In a forked child the pool threads are gone: parallel loops run serially."""
    if _Pool.engine is not None:
        _Pool.engine[3]()
        _Pool.size = 1


def thread_pool_info() -> dict[str, int]:
    """The pool's size (threads, the caller included) and how many tasks its worker threads ran
    (0 before the first parallel loop)."""
    if _Pool.engine is None:
        return {"num_threads": _default_threads(), "worker_tasks": 0, "started": 0}
    assert _Pool._worker_tasks is not None
    return {"num_threads": _Pool.size, "worker_tasks": int(_Pool._worker_tasks()), "started": 1}


# ---------------------------------------------------------------------------------------------
# Argument checking


_CTYPES = {"int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
           "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
           "float16": ctypes.c_uint16, "float32": ctypes.c_float, "float64": ctypes.c_double, "bool": ctypes.c_uint8}


class _ShapeEval(Visitor):
    """Evaluates an integer shape expression given the values of its variables."""

    def __init__(self, env: dict[int, int]) -> None:
        """An evaluator over variable values keyed by ``id(var)``."""
        self.env = env

    def run(self, e: tir.PrimExpr) -> int | None:
        """The value, or None when a variable is unbound or the expression is not integral."""
        try:
            return self._handler(e)(e)
        except (KeyError, ZeroDivisionError, _NotIntegral):
            return None

    def generic_visit(self, node: Any) -> int:
        """Anything else is not a shape expression."""
        raise _NotIntegral

    def visit_int_imm_(self, e: tir.IntImm) -> int:
        return e.value

    def visit_tir_var_(self, e: tir.Var) -> int:
        return self.env[id(e)]

    def visit_cast_(self, e: tir.Cast) -> int:
        return self.run_strict(e.value)

    def run_strict(self, e: tir.PrimExpr) -> int:
        """The value; raises when it cannot be computed."""
        return self._handler(e)(e)

    def visit_add_(self, e: tir.Add) -> int:
        return self.run_strict(e.a) + self.run_strict(e.b)

    def visit_sub_(self, e: tir.Sub) -> int:
        return self.run_strict(e.a) - self.run_strict(e.b)

    def visit_mul_(self, e: tir.Mul) -> int:
        return self.run_strict(e.a) * self.run_strict(e.b)

    def visit_floor_div_(self, e: tir.FloorDiv) -> int:
        return self.run_strict(e.a) // self.run_strict(e.b)

    def visit_floor_mod_(self, e: tir.FloorMod) -> int:
        return self.run_strict(e.a) % self.run_strict(e.b)

    def visit_div_(self, e: tir.Div) -> int:
        """Truncating division."""
        a, b = self.run_strict(e.a), self.run_strict(e.b)
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q

    def visit_mod_(self, e: tir.Mod) -> int:
        """Truncating remainder (the sign of the dividend)."""
        a, b = self.run_strict(e.a), self.run_strict(e.b)
        r = abs(a) % abs(b)
        return r if a >= 0 else -r

    def visit_min_(self, e: tir.Min) -> int:
        return min(self.run_strict(e.a), self.run_strict(e.b))

    def visit_max_(self, e: tir.Max) -> int:
        return max(self.run_strict(e.a), self.run_strict(e.b))


class _NotIntegral(Exception):
    """A shape expression the checker cannot evaluate."""


def _vars_of(e: tir.PrimExpr) -> list[tir.Var]:
    """The distinct Vars of a shape expression, in order."""
    out: dict[int, tir.Var] = {}

    def collect(n: Any) -> None:
        """Record a Var."""
        if isinstance(n, tir.Var):
            out.setdefault(id(n), n)

    post_order_visit(e, collect)
    return list(out.values())


def _dim_text(d: tir.PrimExpr) -> str:
    """A dimension as printed in messages (``4``, ``n``, ``n + m``)."""
    if isinstance(d, tir.IntImm):
        return str(d.value)
    if isinstance(d, tir.Var):
        return d.name
    try:
        return d.script()
    except Exception:  # printing is best effort inside an error message
        return type(d).__name__


def _shape_text(dims: Iterable[tir.PrimExpr]) -> str:
    """A shape as printed in messages (``(n, 4)``)."""
    items = [_dim_text(d) for d in dims]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _describe(value: Any) -> str:
    """What a value is, for messages."""
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    return type(value).__name__


class _Checker:
    """Checks one call's arguments against a signature and builds the native argument list.

    The per-parameter work is planned once (dtype, rank, and per dimension: a constant, a variable
    to bind or compare, or an expression to evaluate last), so a call costs a few microseconds;
    messages are only composed when a check fails."""

    def __init__(self, sig: FuncSignature) -> None:
        """Plan the checks of ``sig``."""
        self.sig = sig
        self.names = ", ".join(p.name for p in sig.params)
        self.buffers = sig.buffer_params
        self.scalars = sig.scalar_params
        # (param, numpy dtype, rank, written, dims plan, strides plan or None)
        self.plans = [(p, to_numpy_dtype(p.dtype), len(p.buffer.shape), p.written,
                       [self._dim_plan(d) for d in p.buffer.shape],
                       [self._dim_plan(d) for d in p.buffer.strides] if p.buffer.strides else None)
                      for p in self.buffers]
        self.int_scalars = [not parse_dtype(p.dtype).is_float for p in self.scalars]
        self.dim_vars = {id(d): _vars_of(d) for p in self.buffers for d in (*p.buffer.shape, *p.buffer.strides)}
        self.sym = [(id(v), v, 1 << (parse_dtype(v.dtype).bits - 1)) for v in sig.sym_vars]
        self.written_pairs = [(i, j) for i in range(len(self.buffers)) for j in range(i + 1, len(self.buffers))
                              if self.buffers[i].written or self.buffers[j].written] if sig.noalias else []

    @staticmethod
    def _dim_plan(d: tir.PrimExpr) -> tuple[int, Any]:
        """(0, value) for a constant, (1, var) for a variable, (2, expr) for anything else."""
        if isinstance(d, tir.IntImm):
            return 0, d.value
        return (1, d) if isinstance(d, tir.Var) else (2, d)

    def error(self, msg: str) -> ArgumentError:
        """An ArgumentError naming the function."""
        return ArgumentError(f"{self.sig.name}: {msg}")

    def scalar(self, p: ParamInfo, value: Any) -> tuple[Any, int | float | bool]:
        """The ctypes value of a scalar argument, and its Python value."""
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
        inner = getattr(arr, "numpy", None)
        arr = inner() if callable(inner) else arr
        if not isinstance(arr, np.ndarray):
            raise self.error(f"argument '{p.name}' must be a numpy array ({p.dtype}, shape "
                             f"{_shape_text(p.buffer.shape)}), got {_describe(arr)}")
        return arr

    def array_error(self, p: ParamInfo, arr: np.ndarray, want: np.dtype) -> ArgumentError:
        """The message for an array whose dtype, rank or memory layout is wrong."""
        shape = p.buffer.shape
        if arr.dtype != want:
            return self.error(f"argument '{p.name}': expected dtype {p.dtype}, got {arr.dtype}")
        if arr.ndim != len(shape):
            return self.error(f"argument '{p.name}': expected {len(shape)} dimension"
                              f"{'s' if len(shape) != 1 else ''} (shape {_shape_text(shape)}), "
                              f"got {arr.ndim} (shape {arr.shape})")
        if not arr.flags.c_contiguous:
            return self.error(f"argument '{p.name}' must be C-contiguous, got a view with strides "
                              f"{arr.strides} (use np.ascontiguousarray)")
        if not arr.flags.aligned:
            return self.error(f"argument '{p.name}' is not aligned to its {arr.itemsize}-byte elements")
        return self.error(f"argument '{p.name}' is written by the function, but the array is read-only")

    def __call__(self, buffers: Sequence[Any], scalars: Sequence[Any]) -> tuple[list, list[np.ndarray]]:
        """(native arguments, the checked arrays)."""
        env: dict[int, int] = {}
        source: dict[int, str] = {}
        native_scalars = []
        for p, is_int, value in zip(self.scalars, self.int_scalars, scalars):
            cval, pyval = self.scalar(p, value)
            native_scalars.append(cval)
            if is_int:
                env[id(p.var)] = int(pyval)
                source[id(p.var)] = f"argument '{p.name}'"
        arrays = []
        deferred = []
        for (p, want, ndim, written, dims, strides), arr in zip(self.plans, buffers):
            if type(arr) is not np.ndarray:
                arr = self.as_array(p, arr)
            flags = arr.flags
            if (arr.dtype != want or arr.ndim != ndim or not flags.c_contiguous or not flags.aligned
                    or (written and not flags.writeable)):
                raise self.array_error(p, arr, want)
            arrays.append(arr)
            shape = arr.shape
            for k, (kind, dim) in enumerate(dims):
                actual = shape[k]
                if kind == 0:
                    if dim != actual:
                        raise self.error(f"argument '{p.name}': expected shape {_shape_text(p.buffer.shape)}, "
                                         f"got {shape}: dimension {k} must be {dim}")
                elif kind == 1:
                    bound = env.get(id(dim))
                    if bound is None:
                        env[id(dim)] = actual
                        source[id(dim)] = f"{p.name}.shape[{k}]"
                    elif bound != actual:
                        raise self.error(
                            f"argument '{p.name}': expected shape {_shape_text(p.buffer.shape)} with "
                            f"{dim.name} = {bound} (from {source[id(dim)]}), got {shape}: "
                            f"{p.name}.shape[{k}] is {actual}, not {dim.name} = {bound}")
                else:
                    deferred.append((p, shape, dim, actual, f"{p.name}.shape[{k}]"))
            if strides is not None:
                self._strides(p, shape, strides, env, source, deferred)
        if deferred:
            self._deferred(deferred, env, source)
        for i, j in self.written_pairs:
            self._check_overlap(i, j, arrays[i], arrays[j])
        native = [a.ctypes.data for a in arrays]
        for vid, v, limit in self.sym:
            value = env[vid]
            if value >= limit:
                raise self.error(f"{v.name} = {value} does not fit in its dtype {v.dtype}")
            native.append(value)
        return native + native_scalars, arrays

    def _strides(self, p: ParamInfo, shape: tuple[int, ...], plan: list, env: dict, source: dict,
                 deferred: list) -> None:
        """Explicit buffer strides must be those of a C-contiguous array (variables are bound to them)."""
        c_strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
        for k, ((kind, dim), actual) in enumerate(zip(plan, c_strides)):
            if kind == 0 and dim != actual and shape[k] > 1:
                raise self.error(f"argument '{p.name}': expected strides (in elements) "
                                 f"{_shape_text(p.buffer.strides)}, got {tuple(c_strides)}")
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
                    raise self.error(f"argument '{p.name}': cannot evaluate the dimension {_dim_text(dim)}")
                if expected != actual:
                    binds = ", ".join(f"{v.name} = {env[id(v)]}" for v in self.sig.sym_vars if id(v) in env)
                    raise self.error(f"argument '{p.name}': expected shape {_shape_text(p.buffer.shape)} "
                                     f"({binds}), got {shape}: {where} is {actual}, not "
                                     f"{_dim_text(dim)} = {expected}")
            if not progress:
                p, shape, dim, actual, where = pending[0]
                unknown = ", ".join(v.name for v in self.dim_vars[id(dim)] if id(v) not in env)
                raise self.error(f"argument '{p.name}': cannot determine {unknown} from {where} = {actual} "
                                 f"(the dimension is {_dim_text(dim)})")

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
            if not (ai.ctypes.data == aj.ctypes.data and ai.nbytes == aj.nbytes):
                raise self.error(f"arguments '{self.buffers[i].name}' and '{self.buffers[j].name}' overlap "
                                 f"in memory, but the function is tir.noalias (pass separate arrays)")


# ---------------------------------------------------------------------------------------------
# Executable


class PrimFuncHandle:
    """A callable compiled PrimFunc: ``f(*args)`` takes the parameters in order (numpy arrays for
    buffers, Python numbers for scalars), runs in place, and returns the PrimFunc's value if any."""

    def __init__(self, owner: Any, sig: FuncSignature, address: int, messages: tuple[str, ...]) -> None:
        """Wrap the native function at ``address`` (``owner`` keeps its code alive)."""
        self._owner = owner  # the Executable (its engine holds the machine code) or the loaded library
        self._messages = messages
        self.signature = sig
        self.name = sig.name
        argtypes: list[Any] = [ctypes.c_void_p] * len(sig.buffer_params) + [ctypes.c_int64] * len(sig.sym_vars)
        argtypes += [_CTYPES[p.dtype] for p in sig.scalar_params]
        self._ret_ctype = _CTYPES[sig.ret_dtype] if sig.ret_dtype else None
        if self._ret_ctype is not None:
            argtypes.append(ctypes.c_void_p)
        # CFUNCTYPE (not PYFUNCTYPE) releases the GIL during the call.
        self._cfunc = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(address)
        self._check = _Checker(sig)
        self._buffer_pos = [i for i, p in enumerate(sig.params) if p.buffer is not None]
        self._scalar_pos = [i for i, p in enumerate(sig.params) if p.buffer is None]

    def __repr__(self) -> str:
        """The function with its parameters."""
        params = ", ".join(f"{p.name}: {p.dtype}{_shape_text(p.buffer.shape) if p.buffer else ''}"
                           for p in self.signature.params)
        return f"<compiled PrimFunc {self.name}({params})>"

    def __call__(self, *args: Any) -> Any:
        """Call with the parameters in order; checks every argument first."""
        params = self.signature.params
        if len(args) != len(params):
            raise ArgumentError(f"{self.name}() takes {len(params)} argument{'s' if len(params) != 1 else ''} "
                                f"({self._check.names}), got {len(args)}")
        return self._run([args[i] for i in self._buffer_pos], [args[i] for i in self._scalar_pos])

    def call(self, arrays: Sequence[Any], scalars: Sequence[Any] = ()) -> Any:
        """Executor form: buffers and scalars as separate lists (destination-passing style)."""
        sig = self.signature
        nb, ns = len(sig.buffer_params), len(sig.scalar_params)
        if len(arrays) != nb or len(scalars) != ns:
            raise ArgumentError(f"{self.name}: expected {nb} array{'s' if nb != 1 else ''} "
                                f"({', '.join(p.name for p in sig.buffer_params)}) and {ns} scalar"
                                f"{'s' if ns != 1 else ''}, got {len(arrays)} and {len(scalars)}")
        return self._run(list(arrays), list(scalars))

    def _run(self, buffers: list[Any], scalars: list[Any]) -> Any:
        """Check, call the native code, turn a failure status into KernelError."""
        native, arrays = self._check(buffers, scalars)
        result = None
        if self._ret_ctype is not None:
            result = self._ret_ctype()
            native.append(ctypes.addressof(result))
        status = self._cfunc(*native)
        del arrays  # the arrays stayed referenced (alive) until the native call returned
        if status:
            messages = self._messages
            msg = messages[status - 1] if 0 < status <= len(messages) else f"{self.name}: failed with status {status}"
            raise KernelError(msg)
        if result is None:
            return None
        value = result.value
        rd = self.signature.ret_dtype
        if rd == "float16":
            return float(np.array(value, np.uint16).view(np.float16))
        return bool(value) if rd == "bool" else value


class _FunctionTable:
    """Compiled functions by name, and the executor interface (``call``) over them."""

    _functions: dict[str, PrimFuncHandle]

    def _where(self) -> str:
        """Where the functions live, for the message of a missing name."""
        return ""

    def __getitem__(self, name: str) -> PrimFuncHandle:
        """The compiled function ``name``."""
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"no compiled function named {name!r}{self._where()} (functions: "
                           f"{', '.join(self._functions) or 'none'})") from None

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` was compiled."""
        return name in self._functions

    def keys(self) -> list[str]:
        """The names of the compiled functions."""
        return list(self._functions)

    def call(self, name: str, arrays: Sequence[Any], scalars: Sequence[Any] = ()) -> Any:
        """Run PrimFunc ``name`` in place on ``arrays`` (outputs included) and ``scalars``."""
        return self[name].call(arrays, scalars)


class Executable(_FunctionTable):
    """Compiled PrimFuncs of an IRModule: ``ex["add"](a, b, c)``, ``ex.call(name, arrays, scalars)``,
    ``ex.get_source("ll" | "asm" | "remarks" | "tir", optimized=...)``."""

    def __init__(self, llvm_module: LLVMModule, ir_module: IRModule | None = None) -> None:
        """Optimise ``llvm_module`` for the host and JIT it (MCJIT)."""
        self.llvm_module = llvm_module
        self.ir_module = ir_module
        self.target = llvm_module.target
        if not self.target.is_host:
            raise TargetError(f"code for {self.target.triple} cannot run in this process "
                              f"({_llvm().get_process_triple()}); use get_source/emit to inspect it")
        llvm = _llvm()
        if llvm_module.uses_parallel:
            _ensure_pool()
        self._tm = self.target.create_target_machine(jit=True)
        mod = llvm_module.optimized_module(self._tm)
        self._optimized_ir = str(mod)
        _require_symbols(mod, self._optimized_ir, self.target)
        self._mod = mod
        self._engine = llvm.create_mcjit_compiler(mod, self._tm)
        self._engine.finalize_object()
        self._asm: str | None = None
        self._functions = {name: PrimFuncHandle(self, sig, self._engine.get_function_address(sig.symbol),
                                                llvm_module.messages)
                           for name, sig in llvm_module.signatures.items()}

    def __repr__(self) -> str:
        """The functions and the machine they run on."""
        return f"<Executable [{', '.join(self._functions)}] for {self.target.describe()}>"

    # ---- inspection
    def get_source(self, fmt: str = "ll", optimized: bool = False) -> str:
        """Generated code: ``"ll"`` (LLVM IR before optimisation, or after with ``optimized=True``),
        ``"asm"``, ``"remarks"`` (the loop vectoriser's report) or ``"tir"`` (the compiled TIR)."""
        if fmt in ("ll", "llvm"):
            return self._optimized_ir if optimized else self.llvm_module.llvm_ir
        if fmt in ("asm", "s"):
            if self._asm is None:
                self._asm = self.llvm_module.emit_assembly()
            return self._asm
        if fmt == "remarks":
            return vectorizer_remarks(self.llvm_module)
        if fmt == "tir":
            if self.ir_module is None:
                raise ValueError("this executable was built without its TIR module")
            return self.ir_module.script()
        raise ValueError(f"unknown source format {fmt!r} (use 'll', 'asm', 'remarks' or 'tir')")

    def export_library(self, path: str, cc: str | None = None) -> str:
        """Write a shared library of the compiled functions (with its own thread pool and the TIR it
        was compiled from, so ``load_module(path)`` checks arguments the same way); needs a C
        compiler driver (``cc``, ``$CC`` or gcc) to link."""
        if self.ir_module is None:
            raise ValueError("export_library needs the TIR module the executable was built from")
        return export_library(self.llvm_module, self.ir_module, path, cc)

    def show(self, fmt: str = "ll", optimized: bool = False) -> None:
        """Print ``get_source(fmt)``, highlighted with pygments on a terminal."""
        text = self.get_source(fmt, optimized)
        print(highlight_source(text, fmt) if _should_color(sys.stdout) else text)


# LLVM intrinsics that x86 lowers to a libm call: the C name is the base name (+ "f" for float).
_LIBM_BACKED = frozenset({"exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh",
                          "tanh", "asin", "acos", "atan", "atan2", "pow", "round", "roundeven", "nearbyint", "floor",
                          "ceil", "trunc", "ldexp"})
_PROCESS = ctypes.CDLL(None)


def _resolvable(name: str) -> bool:
    """Whether the JIT's symbol lookup (the process, plus symbols added to LLVM) finds ``name``."""
    return hasattr(_PROCESS, name) or _llvm().address_of_symbol(name) is not None


def _require_symbols(mod: Any, text: str, target: Target) -> None:
    """Refuse to JIT code that calls a C function this process lacks: MCJIT would otherwise jump
    to address 0 (a crash) instead of reporting it."""
    if "half" in text and "+f16c" not in target.features.split(","):
        # Without F16C, half conversions become libgcc calls (__extendhfsf2 ...): make them visible.
        import ctypes.util

        lib = ctypes.util.find_library("gcc_s")
        if lib:
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    missing = []
    for fn in mod.functions:
        if not fn.is_declaration:
            continue
        name = fn.name
        if name.startswith("llvm."):
            parts = name.split(".")
            if len(parts) < 3 or parts[1] not in _LIBM_BACKED:
                continue
            name = parts[1] + ("" if parts[2].endswith("f64") else "f")
        if not _resolvable(name):
            missing.append(name)
    if missing:
        raise CodegenError(f"the compiled code calls {', '.join(sorted(set(missing)))}, which this process "
                           f"does not provide (a misspelt T.call_extern, or a C library that is not loaded)")


def _should_color(stream: Any) -> bool:
    """Whether to highlight for ``stream`` (a terminal, NO_COLOR unset)."""
    from ..script.highlight import should_color

    return should_color(stream)


def highlight_source(text: str, fmt: str) -> str:
    """LLVM IR or assembly highlighted for a terminal (pygments' LlvmLexer / GasLexer)."""
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import GasLexer, LlvmLexer, PythonLexer

    lexer = {"ll": LlvmLexer, "llvm": LlvmLexer, "asm": GasLexer, "s": GasLexer}.get(fmt, PythonLexer)()
    return highlight(text, lexer, TerminalFormatter())


_REMARKS_SCRIPT = r"""
import sys
import llvmlite.binding as llvm
llvm.initialize_native_target(); llvm.initialize_native_asmprinter(); llvm.initialize_native_asmparser()
for opt in ("--pass-remarks=loop-vectorize|slp-vectorizer", "--pass-remarks-missed=loop-vectorize",
            "--pass-remarks-analysis=loop-vectorize"):
    llvm.set_option("", opt)
triple, cpu, features, level = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=level)
mod = llvm.parse_assembly(sys.stdin.read())
mod.triple = tm.triple
mod.data_layout = str(tm.target_data)
pto = llvm.create_pipeline_tuning_options(speed_level=level)
pto.loop_vectorization = True
pto.slp_vectorization = True
pb = llvm.create_pass_builder(tm, pto)
pb.getModulePassManager().run(mod, pb)
"""


def vectorizer_remarks(lm: LLVMModule) -> str:
    """The loop/SLP vectoriser's remarks for a module. LLVM prints them to stderr from a global
    option, so they are collected in a short subprocess that leaves this process's LLVM untouched."""
    t = lm.target
    proc = subprocess.run([sys.executable, "-c", _REMARKS_SCRIPT, t.triple, t.mcpu, t.features,
                           str(max(t.opt_level, 2))],
                          input=lm.llvm_ir, capture_output=True, text=True, timeout=120)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("remark:")]
    if proc.returncode != 0 and not lines:
        return f"(no remarks: the optimiser subprocess failed: {proc.stderr.strip()[-500:]})"
    return "\n".join(lines) + ("\n" if lines else "")


def build(mod: IRModule | tir.PrimFunc, target: str | Target | None = None) -> Executable:
    """Compile the PrimFuncs of ``mod`` for ``target`` (default: the current target, the host CPU).

    Functions that still contain blocks are lowered first with ``get_pipeline("lower")`` when that
    pipeline exists; codegen itself needs block-free TIR."""
    if isinstance(mod, tir.PrimFunc):
        mod = IRModule.from_expr(mod)
    mod = lower_if_needed(mod)
    return Executable(codegen(mod, target), mod)


def lower_if_needed(mod: IRModule) -> IRModule:
    """The PrimFuncs of ``mod``, run through the "lower" pipeline if any still has blocks."""
    prims = IRModule({gv: f for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)})
    if not any(contains_blocks(f) for _, f in prims.functions_items()):
        return prims
    from ..passes import get_pipeline
    from ..passes.pipeline_registry import list_pipelines

    if "lower" not in list_pipelines():
        blocked = [gv.name_hint for gv, f in prims.functions_items() if contains_blocks(f)]
        raise CodegenError(f"{', '.join(blocked)} still contain blocks and this tvmlite has no \"lower\" "
                          f"pipeline; codegen needs block-free TIR")
    return get_pipeline("lower")(prims)


# ---------------------------------------------------------------------------------------------
# Shared libraries

_METADATA_SYMBOL = "tvmlite_library_metadata"


def _library_ir(lm: LLVMModule, ir_module: IRModule) -> str:
    """The library's LLVM IR: the kernels, a private copy of the pool (so the library needs nothing
    from the JIT) and a getter for the metadata that ``load_module`` reads back."""
    import json

    meta = json.dumps({"version": 1, "target": str(lm.target), "messages": list(lm.messages),
                       "tir": ir_module.script(show_meta=True)}).encode("utf-8") + b"\0"
    escaped = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}" for c in meta)
    text = lm.llvm_ir
    text += (f'\n@.tvmlite_meta = private constant [{len(meta)} x i8] c"{escaped}"\n'
             f"define ptr @{_METADATA_SYMBOL}() {{\n  ret ptr @.tvmlite_meta\n}}\n")
    if lm.uses_parallel:
        # The kernels call the pool directly inside the library; only init/after_fork are exported.
        pool = _POOL_IR.replace("define i32 @tvmlite_parallel_for", "define internal i32 @tvmlite_parallel_for")
        text = text.replace(f"declare i32 @{PARALLEL_FOR_SYMBOL}(ptr, ptr, i64, i64)\n", "") + pool
    return text


def export_library(lm: LLVMModule, ir_module: IRModule, path: str, cc: str | None = None) -> str:
    """Compile ``lm`` to position-independent code and link it into the shared library ``path``."""
    import shutil
    import tempfile

    compiler = cc or os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not compiler:
        raise RuntimeError("export_library needs a C compiler driver to link (set CC or install gcc)")
    lib_module = LLVMModule(lm.target, _library_ir(lm, ir_module), lm.signatures, lm.messages)
    obj = lib_module.emit_object(pic=True)
    with tempfile.TemporaryDirectory() as tmp:
        obj_path = os.path.join(tmp, "kernels.o")
        with open(obj_path, "wb") as f:
            f.write(obj)
        proc = subprocess.run([compiler, "-shared", "-o", path, obj_path, "-lm", "-lpthread"],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"linking {path} failed:\n{proc.stderr.strip()}")
    return path


class LoadedModule(_FunctionTable):
    """Functions of a library written by ``export_library``: the same interface as Executable
    (``m["add"](...)``, ``m.call(name, arrays, scalars)``, ``keys()``)."""

    def __init__(self, path: str) -> None:
        """Load the library at ``path`` and rebuild its functions' signatures."""
        import json

        from ..script import from_source

        self.path = path
        self._lib = ctypes.CDLL(os.path.abspath(path))
        try:
            getter = getattr(self._lib, _METADATA_SYMBOL)
        except AttributeError:
            raise ValueError(f"{path} is not a tvmlite library (no {_METADATA_SYMBOL})") from None
        getter.restype = ctypes.c_char_p
        meta = json.loads(getter().decode("utf-8"))
        self.target = Target(meta["target"])
        if not self.target.is_host:
            raise TargetError(f"{path} holds code for {self.target.triple}, which cannot run here")
        parsed = from_source(meta["tir"])
        self.ir_module = IRModule.from_expr(parsed) if isinstance(parsed, tir.PrimFunc) else parsed
        messages = tuple(meta["messages"])
        # The TIR re-parsed gives the same signatures (and so the same argument checks) as at build.
        sigs = [signature(gv.name_hint, f) for gv, f in self.ir_module.functions_items()]
        self._functions = {
            sig.name: PrimFuncHandle(self, sig, ctypes.cast(getattr(self._lib, sig.symbol), ctypes.c_void_p).value,
                                     messages)
            for sig in sigs}
        if any(sig.uses_parallel for sig in sigs):
            init = self._lib.tvmlite_pool_init
            init.restype, init.argtypes = ctypes.c_int64, [ctypes.c_int64]
            init(_default_threads())
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=self._lib.tvmlite_pool_after_fork)

    def _where(self) -> str:
        return f" in {self.path}"

    def __repr__(self) -> str:
        """The path and the functions."""
        return f"<LoadedModule {self.path} [{', '.join(self._functions)}]>"


def load_module(path: str) -> LoadedModule:
    """Load a library written by ``Executable.export_library``."""
    return LoadedModule(path)
