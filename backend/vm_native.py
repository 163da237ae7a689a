"""The native runner of static VM plans: a Relax function whose every step is a static storage, a
tensor placed in it, a proven kernel call, a kill, a static reshape view or an alias of a proven
tensor runs as ONE native call of a small LLVM function generated from its plan.

That function calls the kernels' unchecked native entries in order with their data pointers: the
parameters' (passed in), the constants' (baked in: the plan keeps the arrays), and the planned
storages' as offsets into one workspace block the Python side allocates per call (storages the
result lives in are allocated on their own, so the workspace is dropped when the call returns).
It returns 0, or on the first failing kernel its status and step. Python per call: the entry
checks (unchanged), one ``np.empty`` for the workspace and one per result storage, one ctypes call
and the result's arrays. Per kernel this saves the step path's allocation, array view, pointer
read, ctypes call and closure dispatch.

The planner (``vm_plan.Planner.visit_seq_expr_``) records what each step does as *native ops*
(below); a function with a step that records none keeps its step path. The LLVM module is compiled
lazily, on the function's first call (1-2 ms: no optimisation passes, the generic CPU at -O0), so
compile time and VMs that are built and never called pay nothing. Memory: the workspace holds all
the plan's storages for the whole call (the step path frees each at its kill): the total of the
storages StaticPlanBlockMemory planned, which already reuses them between tensors."""
from __future__ import annotations

import ctypes
import operator
import os
import threading
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import relax as rx
from .signature import ARRAY_DATA_OFFSET, data_pointer
from .target import llvm_binding
from .vm_frame import Fn, Frame, add_error_note

__all__ = ["RESULT", "native_enabled", "resolve_ops", "build_runner", "NativeRunner"]

# What a step does, recorded by the planner (keys are ``id(var)``; RESULT stands for the binding's
# own variable until the planner knows it):
#   ("storage", key, nbytes)                         a fresh static storage
#   ("place", key, storage_key, offset, shape, dtype) a static tensor at a byte offset of a storage
#   ("call", cfunc, extra, status_error, args)        a proven kernel call on args (Vars, Constants)
#   ("alias", key, source_key, shape | None)          the same memory (a reshape gives its new shape)
#   ("tuple", key, field keys), ("item", key, tuple_key, index)   tuples of such values
RESULT: Any = object()


def resolve_ops(ops: list, binding: rx.Binding) -> list | None:
    """A binding's native ops with RESULT replaced by its variable (an alias for ``y = x``); None when
    the step has no native form."""
    var, value = binding.var, binding.value
    if isinstance(binding, rx.VarBinding) and isinstance(value, rx.Var):
        return [("alias", id(var), id(value), None)]
    if isinstance(binding, rx.VarBinding) and isinstance(value, rx.Tuple):
        return [("tuple", id(var), [id(f) if isinstance(f, rx.Var) else None for f in value.fields])]
    if isinstance(binding, rx.VarBinding) and isinstance(value, rx.TupleGetItem) \
            and isinstance(value.tuple_value, rx.Var):
        return [("item", id(var), id(value.tuple_value), value.index)]
    if not ops or not isinstance(binding, rx.VarBinding) or not isinstance(value, rx.Call):
        return None
    resolved = []
    for op in ops:
        op = tuple(id(var) if x is RESULT else x for x in op)
        if op[0] == "call":
            op = (*op[:4], [var if a is RESULT else a for a in op[4]])
        resolved.append(op)
    return resolved


_ALIGN = 64  # workspace storages start on cache lines (numpy's own blocks are 16-byte aligned)


def native_enabled() -> bool:
    """Whether static plans may run natively (``TVMLITE_VM_NATIVE=0`` keeps the step path)."""
    return os.environ.get("TVMLITE_VM_NATIVE", "1").strip() not in ("0", "false", "off", "no")


class _Layout:
    """Where each value of a static plan lives while the ops are read in order."""

    def __init__(self, params: dict[int, tuple[int, tuple, np.dtype]]) -> None:
        # key -> (kind, where, shape, dtype): ("param", position), ("mem", (storage, offset)), ("const", array)
        self.values: dict[Any, tuple[str, Any, tuple, np.dtype]] = {
            key: ("param", k, shape, dtype) for key, (k, shape, dtype) in params.items()}
        self.storages: dict[Any, int] = {}  # storage key -> index in sizes
        self.sizes: list[int] = []  # bytes of each storage
        self.tuples: dict[Any, list] = {}  # tuple key -> its field keys

    def add(self, op: tuple) -> bool:
        """Note a storage, a placement or an alias; False when it is not static and proven."""
        kind = op[0]
        if kind == "storage":
            self.storages[op[1]] = len(self.sizes)
            self.sizes.append(int(op[2]))
            return True
        if kind == "place":
            _, key, storage, offset, shape, dtype = op
            index = self.storages.get(storage)
            nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            if index is None or offset < 0 or offset + nbytes > self.sizes[index]:
                return False
            self.values[key] = ("mem", (index, int(offset)), tuple(shape), np.dtype(dtype))
            return True
        if kind == "tuple":
            if any(k not in self.values and k not in self.tuples for k in op[2]):
                return False
            self.tuples[op[1]] = list(op[2])
            return True
        if kind == "item":
            fields = self.tuples.get(op[2])
            if fields is None or not 0 <= op[3] < len(fields):
                return False
            op = ("alias", op[1], fields[op[3]], None)
        if kind in ("alias", "item"):
            _, key, source, shape = op
            if source in self.tuples and shape is None:
                self.tuples[key] = self.tuples[source]
                return True
            found = self.values.get(source)
            if found is None:
                return False
            if shape is not None and int(np.prod(shape, dtype=np.int64)) != int(np.prod(found[2], dtype=np.int64)):
                return False
            self.values[key] = (found[0], found[1], found[2] if shape is None else tuple(shape), found[3])
            return True
        return False

    def arg(self, expr: rx.Expr) -> tuple[str, Any] | None:
        """Where a kernel argument's data is."""
        if isinstance(expr, rx.Constant):
            data = np.require(expr.data, requirements="C")
            return ("const", data) if data.flags.aligned else None
        key = expr if isinstance(expr, int) else id(expr) if isinstance(expr, rx.Var) else None
        found = self.values.get(key)
        return None if found is None else (found[0], found[1])


def build_runner(params: Sequence[tuple[rx.Var, int, tuple, np.dtype]], steps: Sequence[tuple[str, list]],
                 body: rx.Expr, where: str, fallback: Fn) -> "NativeRunner | None":
    """The native runner of a plan whose steps (name, native ops) are all static and proven and whose
    result is parameters or placed tensors (tuples of them); None otherwise. ``params``: (variable,
    frame slot, shape, dtype) of the static tensor parameters; ``fallback``: the step path."""
    layout = _Layout({id(v): (k, shape, dtype) for k, (v, _, shape, dtype) in enumerate(params)})
    calls: list[tuple[Any, tuple, Callable, list, str]] = []
    for name, ops in steps:
        for op in ops:
            if op[0] != "call":
                if not layout.add(op):
                    return None
                continue
            _, cfunc, extra, status_error, args = op
            where_args = [layout.arg(a) for a in args]
            if any(w is None for w in where_args):
                return None
            try:
                address = ctypes.cast(cfunc, ctypes.c_void_p).value
            except (TypeError, ctypes.ArgumentError):
                return None  # not a native function (a Python wrapper): the steps call it
            if not address:
                return None
            calls.append((address, tuple(int(e) for e in extra), status_error, where_args, name))
    if not calls or ARRAY_DATA_OFFSET is None:
        return None  # nothing a native call would save, or no way to read numpy's data pointers
    result = _result(body, layout)
    if result is None:
        return None
    return NativeRunner(layout, calls, result, [slot for _, slot, _, _ in params], where, fallback)


def _result(expr: rx.Expr, layout: _Layout) -> Any:
    """The result's form: ("value", kind, where, shape, dtype) per tensor, tuples as tuples; None
    when it holds anything else."""
    if isinstance(expr, rx.Tuple):
        fields = [_result(f, layout) for f in expr.fields]
        return None if any(f is None for f in fields) else ("tuple", fields)
    return _result_of_key(id(expr), layout) if isinstance(expr, rx.Var) else None


def _result_of_key(key: Any, layout: _Layout) -> Any:
    """The result's form of a value the layout knows."""
    if key in layout.tuples:
        fields = [_result_of_key(k, layout) for k in layout.tuples[key]]
        return None if any(f is None for f in fields) else ("tuple", fields)
    found = layout.values.get(key)
    if found is None or found[0] == "const":
        return None
    return ("value", *found)


def _result_storages(result: Any, into: set[int]) -> set[int]:
    """The storages the result's tensors live in (they are allocated on their own, per call)."""
    if result[0] == "tuple":
        for f in result[1]:
            _result_storages(f, into)
    elif result[1] == "mem":
        into.add(result[2][0])
    return into


class NativeRunner:
    """One static plan as one native call (compiled on first use; the step path if that fails)."""

    def __init__(self, layout: _Layout, calls: list, result: Any, param_slots: list[int], where: str,
                 fallback: Fn) -> None:
        self.where = where
        self.fallback = fallback
        # (address, extra, status_error, args, step name) per kernel; status_error is a method of the
        # kernel's handle, which keeps the executable, and so the code at address, alive.
        self.calls = calls
        outputs = sorted(_result_storages(result, set()))
        self.out_sizes = [layout.sizes[i] for i in outputs]
        out_index = {s: k for k, s in enumerate(outputs)}
        # Workspace offsets of the other storages, each on a cache line.
        self.ws_offsets: dict[int, int] = {}
        total = 0
        for i, size in enumerate(layout.sizes):
            if i not in out_index:
                self.ws_offsets[i] = total
                total += -(-size // _ALIGN) * _ALIGN
        self.ws_bytes = total
        self.out_index = out_index
        self.param_slots = param_slots
        self.result = result
        self.constants = [w for call in calls for kind, w in call[3] if kind == "const"]  # kept alive
        self.text = self._llvm_text()
        self._lock = threading.Lock()
        self._engine: Any = None
        self._native: Callable[..., int] | None = None
        self.error: str | None = None  # why the native code could not be made (the step path runs)
        self.steps: Fn = fallback  # the plan's step path (the planner sets the closure itself)

    # ---- code
    def _pointer(self, kind: str, where: Any, lines: list[str], tmp: list[int]) -> str:
        """The LLVM operand of one kernel argument's data pointer."""
        if kind == "param":
            return f"%d{where}"
        if kind == "const":
            return f"inttoptr (i64 {data_pointer(where)} to ptr)"
        storage, offset = where
        if storage in self.out_index:
            base, offset = f"%e{self.out_index[storage]}", offset
        else:
            base, offset = "%w", self.ws_offsets[storage] + offset
        if not offset:
            return base
        tmp[0] += 1
        lines.append(f"  %a{tmp[0]} = getelementptr inbounds i8, ptr {base}, i64 {offset}")
        return f"%a{tmp[0]}"

    def _llvm_text(self) -> str:
        """The runner: ``i64 run(parameters..., workspace, result storages...)``, each a numpy array
        object whose data pointer it reads itself (``PyArrayObject.data``, at ``ARRAY_DATA_OFFSET``), so
        the Python side passes the arrays as they are."""
        arrays = [f"p{k}" for k in range(len(self.param_slots))] + ["ws"] * bool(self.ws_bytes)
        arrays += [f"o{k}" for k in range(len(self.out_sizes))]
        lines = [f"define i64 @tvmlite_vm_run({', '.join(f'ptr %{a}' for a in arrays)}) {{", "entry:"]
        for a in arrays:
            data = "wu" if a == "ws" else {"p": "d", "o": "e"}[a[0]] + a[1:]
            lines.append(f"  %{a}.data = getelementptr inbounds i8, ptr %{a}, i64 {ARRAY_DATA_OFFSET}")
            lines.append(f"  %{data} = load ptr, ptr %{a}.data")
        if self.ws_bytes:  # the workspace's storages start on a cache line
            lines += ["  %wi = ptrtoint ptr %wu to i64", f"  %wa = add i64 %wi, {_ALIGN - 1}",
                      f"  %wm = and i64 %wa, {-_ALIGN}", "  %w = inttoptr i64 %wm to ptr"]
        tmp = [0]
        for i, (address, extra, _, args, _) in enumerate(self.calls):
            operands = [f"ptr {self._pointer(kind, w, lines, tmp)}" for kind, w in args]
            operands += [f"i64 {e}" for e in extra]
            lines.append(f"  %f{i} = inttoptr i64 {address} to ptr")
            lines.append(f"  %s{i} = call i32 %f{i}({', '.join(operands)})")
            lines.append(f"  %ok{i} = icmp eq i32 %s{i}, 0")
            lines.append(f"  br i1 %ok{i}, label %next{i}, label %fail{i}")
            lines.append(f"fail{i}:")
            lines.append(f"  %z{i} = zext i32 %s{i} to i64")
            lines.append(f"  %r{i} = or i64 %z{i}, {(i + 1) << 32}")
            lines.append(f"  ret i64 %r{i}")
            lines.append(f"next{i}:")
        lines += ["  ret i64 0", "}", ""]
        return "\n".join(lines)

    def _compile(self) -> Callable[..., int] | None:
        """JIT the runner (about a millisecond: one function of calls, no optimisation passes)."""
        llvm = llvm_binding()
        # The generic CPU at -O0: a sequence of calls gains nothing from more, and LLVM's fast
        # instruction selection makes this a quarter of the host target machine's time.
        tm = llvm.Target.from_default_triple().create_target_machine(opt=0, codemodel="jitdefault", jit=True)
        mod = llvm.parse_assembly(self.text)
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        mod.verify()
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        address = engine.get_function_address("tvmlite_vm_run")
        n = len(self.param_slots) + bool(self.ws_bytes) + len(self.out_sizes)
        self._engine = engine  # the machine code lives as long as the runner
        # The arrays go in as object pointers (no conversion); CFUNCTYPE releases the GIL while the
        # kernels run, and the caller holds the arrays until the call returns.
        return ctypes.CFUNCTYPE(ctypes.c_int64, *([ctypes.py_object] * n))(address)

    def body(self, install: Callable[[Fn], None]) -> Fn:
        """The plan's first body: compiles the runner, then ``install``s the per-call function as
        the plan's body (the step path if the compilation failed) and runs it."""

        def first(frame: Frame) -> Any:
            with self._lock:
                if self._native is None and self.error is None:
                    try:
                        self._native = self._compile()
                    except Exception as err:  # noqa: BLE001  (the step path still runs the plan)
                        self.error = f"{type(err).__name__}: {err}"
                run = self.make_run() if self._native is not None else self.fallback
                install(run)
            return run(frame)

        return first

    @property
    def compiled(self) -> bool:
        """Whether the native code exists (after the first call)."""
        return self._native is not None

    def make_run(self) -> Fn:
        """One call: the workspace and result storages, the native call, the result."""
        empty, uint8, native, fail = np.empty, np.uint8, self._native, self._fail
        ws_bytes, out_sizes, build = self.ws_bytes + _ALIGN, tuple(self.out_sizes), self._build_result(self.result)
        slots, with_ws = self.param_slots, bool(self.ws_bytes)
        read = operator.itemgetter(*slots) if len(slots) > 1 else (
            (lambda frame: (frame[slots[0]],)) if slots else (lambda frame: ()))
        own = self._own_result()
        if own is not None:  # the usual model: one result tensor, its storage exactly its size
            shape, dtype = own
            if with_ws:
                def run_ws(frame: Frame) -> Any:
                    ws, out = empty(ws_bytes, uint8), empty(shape, dtype)
                    status = native(*read(frame), ws, out)
                    if status:
                        raise fail(status, [*read(frame), ws, out])
                    return out

                return run_ws

            def run_one(frame: Frame) -> Any:
                out = empty(shape, dtype)
                status = native(*read(frame), out)
                if status:
                    raise fail(status, [*read(frame), out])
                return out

            return run_one

        def run(frame: Frame) -> Any:
            outs = [empty(n, uint8) for n in out_sizes]
            arrays = [*read(frame), empty(ws_bytes, uint8), *outs] if with_ws else [*read(frame), *outs]
            status = native(*arrays)
            if status:
                raise fail(status, arrays)
            return build(frame, outs)

        return run

    def _own_result(self) -> tuple[tuple, np.dtype] | None:
        """(shape, dtype) of a result that is one tensor filling its own storage from byte 0 (the
        storage is then allocated as that tensor: one array, no view); None otherwise."""
        result = self.result
        if len(self.out_sizes) != 1 or result[0] != "value" or result[1] != "mem" or result[2][1] != 0:
            return None
        shape, dtype = result[3], result[4]
        return (shape, dtype) if self.out_sizes[0] == int(np.prod(shape, dtype=np.int64)) * dtype.itemsize else None

    def _build_result(self, result: Any) -> Callable[[Frame, list], Any]:
        """The result from the frame (parameters) and the result storages."""
        if result[0] == "tuple":
            parts = [self._build_result(f) for f in result[1]]
            return lambda frame, outs: tuple([p(frame, outs) for p in parts])
        _, kind, where, shape, dtype = result
        if kind == "param":
            slot = self.param_slots[where]
            return lambda frame, outs: frame[slot] if frame[slot].shape == shape else frame[slot].reshape(shape)
        k, offset, ndarray = self.out_index[where[0]], where[1], np.ndarray
        return lambda frame, outs: ndarray(shape, dtype, outs[k], offset)

    def _fail(self, status: int, arrays: list) -> Exception:
        """The failing kernel's own error (as its step would raise it), with the step's note."""
        step, code = (status >> 32) - 1, status & 0xFFFFFFFF
        if code >= 1 << 31:
            code -= 1 << 32
        _, extra, status_error, args, name = self.calls[step]
        n_params = len(self.param_slots)
        params = [data_pointer(a) for a in arrays[:n_params]]
        ws = (data_pointer(arrays[n_params]) + _ALIGN - 1) & -_ALIGN if self.ws_bytes else 0
        outs = [data_pointer(a) for a in arrays[n_params + bool(self.ws_bytes):]]
        native = []
        for kind, w in args:
            if kind == "param":
                native.append(params[w])
            elif kind == "const":
                native.append(data_pointer(w))
            elif w[0] in self.out_index:
                native.append(outs[self.out_index[w[0]]] + w[1])
            else:
                native.append(ws + self.ws_offsets[w[0]] + w[1])
        err = status_error(code, (*native, *extra))
        add_error_note(err, f"  while computing '{name}' in {self.where}")
        return err
