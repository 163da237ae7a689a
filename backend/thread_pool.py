"""The native thread pool that runs outlined ``T.parallel`` loops: persistent pthreads written in
LLVM IR, so that workers never touch Python. A launch that finds the pool busy (another Python
thread, or a nested region) runs its loop serially.

The pool's IR is written once (:func:`pool_ir`): the JIT compiles it into a process-wide engine
that exports ``tvmlite_parallel_for`` to the kernels; a shared library links a private copy
(:func:`with_private_pool`)."""
from __future__ import annotations

import ctypes
import os
import string
import threading
from typing import Any, Callable

from .target import Target, llvm_binding

__all__ = ["PARALLEL_FOR_SYMBOL", "pool_ir", "with_private_pool", "ensure_pool", "default_threads",
           "thread_pool_info"]

# The runtime entry that runs an outlined parallel loop on the pool: kernels call
# ``i32 tvmlite_parallel_for(ptr worker, ptr closure, i64 begin, i64 end)``.
PARALLEL_FOR_SYMBOL = "tvmlite_parallel_for"

_POOL_IR_TEMPLATE = string.Template(r"""
; The mutex guards every job field; @pool.gen and @job.pending are also read without it (atomically)
; by threads that poll before sleeping, so their stores are atomic releases.
@pool.mutex = internal global [64 x i8] zeroinitializer, align 64
@pool.launch = internal global [64 x i8] zeroinitializer, align 64
@pool.work = internal global [64 x i8] zeroinitializer, align 64
@pool.done = internal global [64 x i8] zeroinitializer, align 64
@pool.nthreads = internal global i64 1
@pool.gen = internal global i64 0
@pool.worker_tasks = internal global i64 0
@pool.sleepers = internal global i64 0
; Iterations a worker (or a launcher waiting for its tasks) polls before it sleeps on a condition
; variable: a few hundred microseconds, so back-to-back microsecond kernels skip the futex wake-up.
@pool.spin = internal global i64 200000
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
  %p = load atomic i64, ptr @job.pending monotonic, align 8
  %p1 = sub i64 %p, 1
  store atomic i64 %p1, ptr @job.pending release, align 8
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
  %g0 = load atomic i64, ptr @pool.gen monotonic, align 8
  store i64 %g0, ptr %seen
  br label %wait
wait:
  %g = load atomic i64, ptr @pool.gen monotonic, align 8
  %s = load i64, ptr %seen
  %same = icmp eq i64 %g, %s
  br i1 %same, label %poll, label %woke
poll:
  ; Poll for the next job without the mutex before sleeping.
  call i32 @pthread_mutex_unlock(ptr @pool.mutex)
  %limit = load i64, ptr @pool.spin
  br label %spin
spin:
  %i = phi i64 [ 0, %poll ], [ %i1, %spin.next ]
  %gs = load atomic i64, ptr @pool.gen acquire, align 8
  %changed = icmp ne i64 %gs, %s
  br i1 %changed, label %relock, label %spin.next
spin.next:
  %i1 = add i64 %i, 1
  %more.spin = icmp slt i64 %i1, %limit
  br i1 %more.spin, label %spin, label %relock
relock:
  call i32 @pthread_mutex_lock(ptr @pool.mutex)
  br label %recheck
recheck:
  %g2 = load atomic i64, ptr @pool.gen monotonic, align 8
  %same2 = icmp eq i64 %g2, %s
  br i1 %same2, label %sleep, label %woke
sleep:
  %sl = load i64, ptr @pool.sleepers
  %sl1 = add i64 %sl, 1
  store i64 %sl1, ptr @pool.sleepers
  call i32 @pthread_cond_wait(ptr @pool.work, ptr @pool.mutex)
  %sl2 = load i64, ptr @pool.sleepers
  %sl3 = sub i64 %sl2, 1
  store i64 %sl3, ptr @pool.sleepers
  br label %recheck
woke:
  %gw = load atomic i64, ptr @pool.gen monotonic, align 8
  store i64 %gw, ptr %seen
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

define ${linkage}i32 @${parallel_for}(ptr %fn, ptr %cl, i64 %begin, i64 %end) {
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
  store atomic i64 %nt, ptr @job.pending monotonic, align 8
  store i32 0, ptr @job.status
  %g = load atomic i64, ptr @pool.gen monotonic, align 8
  %g1 = add i64 %g, 1
  store atomic i64 %g1, ptr @pool.gen release, align 8
  ; Polling workers see the new generation; only sleeping ones need the (slow) wake-up.
  %sleepers = load i64, ptr @pool.sleepers
  %any.asleep = icmp sgt i64 %sleepers, 0
  br i1 %any.asleep, label %wake, label %wait
wake:
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
  %p = load atomic i64, ptr @job.pending monotonic, align 8
  %done = icmp eq i64 %p, 0
  br i1 %done, label %finish, label %poll
poll:
  ; The other tasks are running: poll for their end before sleeping on @pool.done.
  call i32 @pthread_mutex_unlock(ptr @pool.mutex)
  %limit = load i64, ptr @pool.spin
  br label %spin
spin:
  %i = phi i64 [ 0, %poll ], [ %i1, %spin.next ]
  %ps = load atomic i64, ptr @job.pending acquire, align 8
  %zero = icmp eq i64 %ps, 0
  br i1 %zero, label %relock, label %spin.next
spin.next:
  %i1 = add i64 %i, 1
  %more.spin = icmp slt i64 %i1, %limit
  br i1 %more.spin, label %spin, label %relock
relock:
  call i32 @pthread_mutex_lock(ptr @pool.mutex)
  br label %recheck
recheck:
  %p2 = load atomic i64, ptr @job.pending monotonic, align 8
  %done2 = icmp eq i64 %p2, 0
  br i1 %done2, label %finish, label %sleep
sleep:
  call i32 @pthread_cond_wait(ptr @pool.done, ptr @pool.mutex)
  br label %recheck
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
""")


def pool_ir(exported: bool) -> str:
    """The pool's LLVM IR; ``exported=False`` makes its parallel-for entry internal to the module."""
    return _POOL_IR_TEMPLATE.substitute(linkage="" if exported else "internal ", parallel_for=PARALLEL_FOR_SYMBOL)


def with_private_pool(kernels_ir: str) -> str:
    """Kernels' IR with a private copy of the pool in place of their external parallel-for declaration
    (a library then needs nothing from the JIT; only its init/after_fork entries are exported)."""
    declaration = f"declare i32 @{PARALLEL_FOR_SYMBOL}(ptr, ptr, i64, i64)\n"
    return kernels_ir.replace(declaration, "") + pool_ir(exported=False)

class _Pool:
    """The process-wide pool (created on first use by a module with parallel loops)."""

    lock = threading.Lock()
    engine: Any = None
    size = 1
    _worker_tasks: Callable[[], int] | None = None


def default_threads() -> int:
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


def ensure_pool() -> None:
    """Compile the pool runtime, start its threads and export ``tvmlite_parallel_for`` to the JIT."""
    if _Pool.engine is not None:
        return
    with _Pool.lock:
        if _Pool.engine is not None:
            return
        llvm = llvm_binding()
        tm = Target("llvm").create_target_machine(jit=True)
        mod = llvm.parse_assembly(pool_ir(exported=True))
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
        _Pool.size = int(init(default_threads()))
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
        return {"num_threads": default_threads(), "worker_tasks": 0, "started": 0}
    assert _Pool._worker_tasks is not None
    return {"num_threads": _Pool.size, "worker_tasks": int(_Pool._worker_tasks()), "started": 1}
