"""How the VM runs the lowered ops (``R.memory.*``, ``R.builtin.*``, ``R.vm.*``), closures,
``R.call_inplace_packed`` and ``R.inspect.*``: tensors are numpy arrays, a storage is a flat byte
array and a tensor placed in it (or a view) is a numpy view of those bytes, so writes through one
are seen through the others. A kill op drops the frame's reference to its variable (as TVM's VM
clears the register): the memory goes when nothing else refers to it. Storages are not zeroed
(TVM's are not either).

A numpy array's data pointer already includes any offset, so the byte and element offsets the
inspect ops read are 0 (as for every tensor the VM allocates)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.dtype import from_numpy_dtype, parse_dtype, to_numpy_dtype
from ..ir.struct_info import sinfo_of
from ..ops.inspect import DLPACK_TYPE_CODES
from .vm_frame import POINTER, Fn, Frame, VMError, const_fn, op_text
from .vm_native import RESULT


def _np_dtype(where: str, name: str) -> np.dtype:
    """The numpy dtype of a dtype name; VMError when numpy has none."""
    try:
        return to_numpy_dtype(name)
    except ValueError as err:
        raise VMError(f"{where}: {err}") from None


def _byte_view(where: str, data: Any, what: str) -> np.ndarray:
    """The bytes of a C-contiguous array (a storage or a viewed tensor), sharing its memory."""
    if not isinstance(data, np.ndarray):
        raise VMError(f"{where}: {what} must be a tensor or a storage, got {type(data).__name__}")
    if not data.flags.c_contiguous:
        raise VMError(f"{where}: {what} must be C-contiguous")
    return data.reshape(-1).view(np.uint8)


def _place(where: str, storage: Any, offset: int, shape: tuple, dtype: str) -> np.ndarray:
    """A tensor of ``shape`` and ``dtype`` over the bytes of ``storage`` from ``offset`` on."""
    raw = _byte_view(where, storage, "the storage")
    np_dtype = _np_dtype(where, dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
    if offset < 0 or offset + nbytes > raw.size:
        raise VMError(f"{where}: a {dtype} tensor of shape {tuple(shape)} ({nbytes} bytes) at byte offset "
                      f"{offset} does not fit in {raw.size} bytes")
    return raw[offset:offset + nbytes].view(np_dtype).reshape(shape)


def _allocator(memory: Any) -> Callable[..., np.ndarray]:
    """``np.empty``, counted by the VM's memory tracker when it measures memory."""
    if memory is None:
        return np.empty
    track, empty = memory.track, np.empty
    return lambda shape, dtype: track(empty(shape, dtype))


def _tensor(where: str, value: Any) -> np.ndarray:
    """``value``, which must be a tensor (a VMError naming ``where`` otherwise)."""
    if not isinstance(value, np.ndarray):
        raise VMError(f"{where}: expected a tensor, got {type(value).__name__}")
    return value


def _static_ints(expr: rx.Expr) -> tuple[int, ...] | None:
    """The values of a shape of constants."""
    if isinstance(expr, rx.ShapeExpr) and all(isinstance(v, tir.IntImm) for v in expr.values):
        return tuple(int(v.value) for v in expr.values)
    return None


def _static_int(expr: rx.Expr) -> int | None:
    """The value of an integer ``R.prim_value`` constant."""
    if isinstance(expr, rx.PrimValue) and isinstance(expr.value, tir.IntImm):
        return int(expr.value.value)
    return None


def _static_str(expr: rx.Expr) -> str | None:
    """The value of a dtype or string constant."""
    return expr.value if isinstance(expr, (rx.DataTypeImm, rx.StringImm)) else None


def _is_void(expr: rx.Expr) -> bool:
    """True for an argument of the empty-tuple struct info (a view argument saying "keep")."""
    sinfo = sinfo_of(expr)
    return isinstance(sinfo, rx.TupleStructInfo) and not sinfo.fields


class LoweredOps:
    """The planner's methods for these ops (mixed into ``vm_plan.Planner``, which provides
    ``name``, ``expr``, ``_args``, ``_kernel``, ``ctx`` and ``_packed``)."""

    name: str
    expr: Callable[[rx.Expr], Fn]
    _args: Callable[..., Callable[[Frame], list]]
    slots: dict[int, int]
    consumed: set[int]
    proven: dict[int, tuple[tuple[int, ...], np.dtype]]
    aliases: dict[int, int]
    placement: tuple | None
    proven_call: tuple | None
    native_ops: list
    bind_var: Callable[[rx.Var], int]
    new_slot: Callable[[], int]

    def _where(self, call: rx.Call) -> str:
        """The function and the op (or packed function), for messages."""
        callee = call.op.global_symbol if isinstance(call.op, rx.ExternFunc) else op_text(call.op.name)
        return f"{self.name}: {callee}"

    # ---- storage and tensors
    def op_alloc_storage(self, call: rx.Call) -> Fn:
        """A byte array: ``R.memory.alloc_storage``'s size counts bytes (its dtype is a hint,
        which TVM's lowering replaces by uint8), ``R.vm.alloc_storage``'s elements of its dtype."""
        size, uint8 = self.expr(call.args[0]), np.uint8
        empty = _allocator(self.ctx.memory)  # type: ignore[attr-defined]
        static = _static_ints(call.args[0])
        memory = call.op.name == "relax.memory.alloc_storage"
        if static is not None and (memory or _static_str(call.args[2]) == "uint8"):
            nbytes = int(np.prod(static, dtype=np.int64))
            self.native_ops.append(("storage", RESULT, nbytes))
            return lambda frame: empty(nbytes, uint8)  # the planned storages of a static model
        if memory:
            return lambda frame: empty(int(np.prod(size(frame), dtype=np.int64)), uint8)
        dtype = self.expr(call.args[2])
        where = self._where(call)

        def run(frame: Frame) -> np.ndarray:
            itemsize = _np_dtype(where, dtype(frame)).itemsize
            return empty(int(np.prod(size(frame), dtype=np.int64)) * itemsize, uint8)

        return run

    # ---- steps of the lowered form, merged where nothing observable changes
    def _consume(self, value: rx.Expr) -> None:
        """Note the variables a binding's value uses (a placed tensor used once is no fresh output)."""
        parts = value.args if isinstance(value, rx.Call) else value.fields if isinstance(value, rx.Tuple) else (value,)
        for a in parts:
            for v in (a.fields if isinstance(a, rx.Tuple) else (a,)):
                if isinstance(v, rx.Var):
                    self.consumed.add(id(v))

    def _place_and_call(self, before: list | None, binding: rx.Binding, slot: int) -> Fn | None:
        """One step for a fused placement (``before``) and the proven kernel call right after it
        whose last argument (its one output) is the placed tensor; None otherwise."""
        if before is None or before[3] is None or before[2] or self.proven_call is None:
            return None
        tensor, placement = before[3]
        args = binding.value.args
        if placement is None or args[-1] is not tensor or any(a is tensor for a in args[:-1]):
            return None
        nbytes, shape, np_dtype, offset, storage_slot, ptr_slot = placement
        cfunc, extra, read, status_error = self.proven_call
        tensor_slot, empty, uint8, ndarray, pointer = before[0], np.empty, np.uint8, np.ndarray, POINTER

        def run(frame: Frame) -> tuple:
            raw = empty(nbytes, uint8)
            if storage_slot is not None:
                frame[storage_slot] = raw
            frame[tensor_slot] = arr = ndarray(shape, np_dtype, raw, offset)
            frame[ptr_slot] = pointer(arr)
            status = cfunc(*read(frame), *extra)
            if status:
                raise status_error(status, (*read(frame), *extra))
            return ()

        return run

    def _fused_placement(self, bindings: Sequence[rx.Binding], i: int) -> tuple[Fn, int] | None:
        """A static storage, the tensor placed in it next (and the storage's kill right after):
        one step, and how many bindings after ``i`` it covers; None otherwise."""
        if i + 1 >= len(bindings) or not isinstance(bindings[i], rx.VarBinding):
            return None
        storage = bindings[i].var
        killed_next = i + 2 < len(bindings) and _kills(bindings[i + 2].value, storage)
        storage_slot = None if killed_next else self.bind_var(storage)
        fn = self.fresh_placed(bindings[i], bindings[i + 1], storage_slot)
        if fn is None:
            if storage_slot is not None:
                del self.slots[id(storage)]  # planned again as its own step
            return None
        if killed_next:
            self.bind_var(storage)  # never filled: the kill that follows drops it at once
            self.bind_var(bindings[i + 2].var)
        return fn, 2 if killed_next else 1

    def _killed_slot(self, binding: rx.Binding) -> int | None:
        """The slot a kill binding clears (a variable of this function), else None."""
        value = binding.value
        if not (isinstance(value, rx.Call) and isinstance(value.op, rx.Op) and value.op.name in KILL_OPS):
            return None
        target = value.args[0]
        return self.slots.get(id(target)) if isinstance(target, rx.Var) else None

    def op_alloc_tensor_in_storage(self, call: rx.Call) -> Fn:
        """A tensor placed in a storage at a byte offset (memory. and vm.alloc_tensor)."""
        storage, offset, shape, dtype = (self.expr(a) for a in call.args[:4])
        where = self._where(call)
        fixed = _static_ints(call.args[2]), _static_int(call.args[1]), _static_str(call.args[3])
        if fixed[0] is not None and fixed[1] is not None and fixed[2] is not None:
            return self._placed_static(call, storage, *fixed)
        return lambda frame: _place(where, storage(frame), int(offset(frame)), tuple(shape(frame)), dtype(frame))

    def fresh_placed(self, storage_binding: rx.Binding, tensor_binding: rx.Binding, storage_slot: int | None
                     ) -> Fn | None:
        """A static storage and the static tensor placed in it by the next binding, as one step
        (the planned storages of a static model): the storage goes to ``storage_slot`` (None when a
        kill follows at once). None when the pair is not of that form."""
        alloc, place = storage_binding.value, tensor_binding.value
        if not (isinstance(alloc, rx.Call) and isinstance(alloc.op, rx.Op) and isinstance(place, rx.Call)
                and isinstance(place.op, rx.Op) and place.op.name in ("relax.vm.alloc_tensor", "relax.memory.alloc_tensor")
                and alloc.op.name in ("relax.vm.alloc_storage", "relax.memory.alloc_storage")
                and place.args[0] is storage_binding.var):
            return None
        size = _static_ints(alloc.args[0])
        if size is None or (alloc.op.name == "relax.vm.alloc_storage" and _static_str(alloc.args[2]) != "uint8"):
            return None
        shape, offset, dtype = _static_ints(place.args[2]), _static_int(place.args[1]), _static_str(place.args[3])
        if shape is None or offset is None or dtype is None:
            return None
        np_dtype = _np_dtype(self._where(place), dtype)
        nbytes = int(np.prod(size, dtype=np.int64))
        if offset < 0 or offset + int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize > nbytes:
            return None  # the separate steps report it when it runs
        uint8, ndarray, pointer = np.uint8, np.ndarray, POINTER
        empty = _allocator(self.ctx.memory)  # type: ignore[attr-defined]
        slot = self.new_slot()  # type: ignore[attr-defined]
        self.produced = (place, slot)  # type: ignore[attr-defined]
        if self.ctx.memory is None:  # type: ignore[attr-defined]  (the step may merge with its kernel call)
            self.placement = (nbytes, shape, np_dtype, offset, storage_slot, slot)
        storage_key = id(storage_binding.var)
        self.native_ops += [("storage", storage_key, nbytes),
                            ("place", id(tensor_binding.var), storage_key, offset, shape, np_dtype)]
        if storage_slot is None:
            def run(frame: Frame) -> np.ndarray:
                arr = ndarray(shape, np_dtype, empty(nbytes, uint8), offset)
                frame[slot] = pointer(arr)
                return arr
        else:
            def run(frame: Frame) -> np.ndarray:
                frame[storage_slot] = raw = empty(nbytes, uint8)
                arr = ndarray(shape, np_dtype, raw, offset)
                frame[slot] = pointer(arr)
                return arr

        return run

    def _placed_static(self, call: rx.Call, storage: Fn, shape: tuple, offset: int, dtype: str) -> Fn:
        """A tensor of static shape and dtype at a static offset: one ``ndarray`` over the storage's
        buffer (its size checked), and its data pointer kept for the kernels that take it unchecked."""
        where, np_dtype = self._where(call), _np_dtype(self._where(call), dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
        end, ndarray, pointer = offset + nbytes, np.ndarray, POINTER
        slot = self.new_slot()  # type: ignore[attr-defined]
        self.produced = (call, slot)  # type: ignore[attr-defined]
        if isinstance(call.args[0], rx.Var):
            self.native_ops.append(("place", RESULT, id(call.args[0]), offset, shape, np_dtype))

        def run(frame: Frame) -> np.ndarray:
            raw = storage(frame)
            if type(raw) is not np.ndarray or raw.dtype != np.uint8 or raw.ndim != 1 or raw.size < end:
                return _place(where, raw, offset, shape, dtype)  # not a storage of ours: checked, or refused
            arr = ndarray(shape, np_dtype, raw, offset)
            frame[slot] = pointer(arr)
            return arr

        return run

    def op_builtin_alloc_tensor(self, call: rx.Call) -> Fn:
        """A fresh tensor of the shape and dtype."""
        shape, dtype = self.expr(call.args[0]), self.expr(call.args[1])
        where, empty = self._where(call), _allocator(self.ctx.memory)  # type: ignore[attr-defined]
        return lambda frame: empty(tuple(shape(frame)), _np_dtype(where, dtype(frame)))

    def op_kill(self, call: rx.Call) -> Fn:
        """Drop the frame's reference to the variable: the memory goes when nothing else refers to it."""
        target = call.args[0]
        slot = self.slots.get(id(target)) if isinstance(target, rx.Var) else None  # type: ignore[attr-defined]
        if slot is None:  # not a variable of this function (a capture stays the enclosing frame's)
            value = self.expr(target)

            def keep(frame: Frame) -> tuple:
                value(frame)
                return ()

            return keep

        def run(frame: Frame) -> tuple:
            frame[slot] = None
            return ()

        return run

    def op_view(self, call: rx.Call) -> Fn:
        """The data's bytes seen with another shape, dtype or byte offset; an empty tuple (or a
        null dtype) keeps the data's."""
        data, shape, dtype, offset = (self.expr(a) for a in call.args)
        keep_shape, keep_offset = (_is_void(a) for a in (call.args[1], call.args[3]))
        where = self._where(call)

        def run(frame: Frame) -> np.ndarray:
            x = data(frame)
            raw = _byte_view(where, x, "the viewed data")
            new_shape = x.shape if keep_shape else tuple(shape(frame))
            new_dtype = dtype(frame)
            if not isinstance(new_dtype, str):  # R.tuple() or R.null_value(): the data's dtype
                new_dtype = from_numpy_dtype(x.dtype)
            return _place(where, raw, 0 if keep_offset else int(offset(frame)), new_shape, new_dtype)

        return run

    def builtin_reshape(self, call: rx.Call) -> Fn:
        """``vm.builtin.reshape``: the tensor's memory seen with the new shape (a numpy view; a
        copy only for data that is not contiguous, which the VM's own tensors always are)."""
        x, shape = self.expr(call.args[0]), self.expr(call.args[1])
        static, where = _static_ints(call.args[1]), self._where(call)
        if self._proven_reshape(call) is not None:
            self.native_ops.append(("alias", RESULT, id(call.args[0]), static))
            return lambda frame: x(frame).reshape(static)  # a proven tensor of a known size: nothing to check

        def run(frame: Frame) -> np.ndarray:
            a = _tensor(where, x(frame))
            new = static if static is not None else tuple(int(d) for d in shape(frame))
            if int(np.prod(new, dtype=np.int64)) != a.size:
                raise VMError(f"{where}: cannot reshape a tensor of shape {a.shape} ({a.size} elements) to {new}")
            return a.reshape(new)

        return run

    def _proven_reshape(self, call: rx.Call) -> tuple[tuple[int, ...], np.dtype] | None:
        """(new shape, dtype) of a ``vm.builtin.reshape`` of a proven tensor to a static shape of
        the same size; None for any other reshape."""
        source, shape = call.args[0], _static_ints(call.args[1])
        info = self.proven.get(id(source)) if isinstance(source, rx.Var) else None
        if info is None or shape is None or int(np.prod(shape)) != int(np.prod(info[0])):
            return None
        return shape, info[1]

    def _note_proven_reshape(self, vid: int, call: rx.Call) -> None:
        """A static reshape of a proven tensor is a view of the same memory: proven with its new
        shape, its data pointer the source's (so kernels reading it run unchecked too)."""
        proven = self._proven_reshape(call)
        if proven is not None:
            source = id(call.args[0])
            self.proven[vid] = proven
            self.aliases[vid] = self.aliases.get(source, source)

    def builtin_shape_of(self, call: rx.Call) -> Fn:
        """``vm.builtin.shape_of``: the tensor's shape value."""
        x, where = self.expr(call.args[0]), self._where(call)

        def run(frame: Frame) -> tuple:
            a = _tensor(where, x(frame))
            return a.shape

        return run

    def op_identity(self, call: rx.Call) -> Fn:
        """The argument itself (ensure_zero_offset: a numpy array has no separate offset)."""
        return self.expr(call.args[0])

    # ---- calls
    def op_call_tir_dyn(self, call: rx.Call) -> Fn:
        """The kernel on the tensors of the tuple (outputs included) and the trailing shape's
        values as its scalar arguments; nothing is returned."""
        kernel = self.ctx.kernel(self._kernel(call))  # type: ignore[attr-defined]
        fields = call.args[1].fields if isinstance(call.args[1], rx.Tuple) else None
        if fields is None or not fields or not isinstance(fields[-1].struct_info, rx.ShapeStructInfo):
            raise VMError(f"{self._where(call)}: the arguments must be a tuple of tensors ending in a shape")
        arrays, scalars = self._args(fields[:-1]), self.expr(fields[-1])

        def run(frame: Frame) -> tuple:
            kernel(arrays(frame), tuple(scalars(frame)))
            return ()

        return run

    def op_make_closure(self, call: rx.Call) -> Fn:
        """The function (argument 0) with the tuple's values bound as its first arguments."""
        func, bound = self.expr(call.args[0]), self.expr(call.args[1])

        def run(frame: Frame) -> Callable[..., Any]:
            fn, first = func(frame), bound(frame)
            return lambda *rest: fn(*first, *rest)

        return run

    def op_invoke_closure(self, call: rx.Call) -> Fn:
        """The closure called on the tuple's values (invoke_closure and invoke_pure_closure)."""
        closure, args = self.expr(call.args[0]), self.expr(call.args[1])
        where = self._where(call)

        def run(frame: Frame) -> Any:
            fn = closure(frame)
            if not callable(fn):
                raise VMError(f"{where}: invoking a value that is not a closure ({type(fn).__name__})")
            return fn(*args(frame))

        return run

    def op_call_inplace_packed(self, call: rx.Call) -> Fn:
        """The packed function on the arguments (it writes the in-place ones and returns them)."""
        func = call.args[0]
        if isinstance(func, rx.ExternFunc):
            return self._packed(func.global_symbol, call.args[1:], (call.struct_info,))  # type: ignore[attr-defined]
        callee, args = self.expr(func), self._args(call.args[1:])
        return lambda frame: callee(frame)(*args(frame))

    # ---- inspection
    def op_inspect(self, call: rx.Call) -> Fn:
        """A field of the tensor's DLTensor, read from the numpy array."""
        field = call.op.name.rsplit(".", 1)[1][len("tensor_"):]
        x = self.expr(call.args[0])
        axis = self.expr(call.args[1]) if len(call.args) > 1 else const_fn(0)
        where = self._where(call)

        def run(frame: Frame) -> int:
            a = _tensor(where, x(frame))
            if field.startswith("dtype_"):
                parsed = parse_dtype(from_numpy_dtype(a.dtype))
                return {"dtype_code": DLPACK_TYPE_CODES[parsed.code], "dtype_bits": parsed.bits,
                        "dtype_lanes": parsed.lanes}[field]
            if field == "ndim":
                return a.ndim
            if field in ("byte_offset", "elem_offset"):
                return 0
            i = int(axis(frame))
            if not 0 <= i < a.ndim:
                raise VMError(f"{where}: axis {i} is out of range for a tensor of {a.ndim} dimensions")
            return a.shape[i] if field == "shape_i" else a.strides[i] // a.itemsize

        return run


def then_clear(fn: Fn, slots: Sequence[int]) -> Fn:
    """``fn``, then the frame's references in ``slots`` dropped (the kills that follow ``fn``)."""
    if not slots:
        return fn
    if len(slots) == 1:
        (slot,) = slots

        def run_one(frame: Frame) -> Any:
            value = fn(frame)
            frame[slot] = None
            return value

        return run_one
    slots = tuple(slots)

    def run(frame: Frame) -> Any:
        value = fn(frame)
        for s in slots:
            frame[s] = None
        return value

    return run


def _kills(value: rx.Expr, var: rx.Var) -> bool:
    """True when ``value`` is a kill of ``var``."""
    return (isinstance(value, rx.Call) and isinstance(value.op, rx.Op) and value.op.name in KILL_OPS
            and value.args[0] is var)


# The kill ops: each drops one variable's reference.
KILL_OPS = ("relax.vm.kill_object", "relax.memory.kill_storage", "relax.memory.kill_tensor")
# The ops that place a tensor in a storage (their static results are proven, as call_tir's outputs).
PLACED_OPS = ("relax.vm.alloc_tensor", "relax.memory.alloc_tensor")


# The VM's own packed functions the lowered text calls (``R.call_packed(name, ...)``) -> planner method.
VIEW_BUILTINS = {"vm.builtin.reshape": "builtin_reshape", "vm.builtin.shape_of": "builtin_shape_of",
                 "vm.builtin.ensure_zero_offset": "op_identity"}

# The op -> planner method table of these ops (vm_plan merges it into its own).
LOWERED_OP_METHODS = {
    "relax.memory.alloc_storage": "op_alloc_storage",
    "relax.vm.alloc_storage": "op_alloc_storage",
    "relax.memory.alloc_tensor": "op_alloc_tensor_in_storage",
    "relax.vm.alloc_tensor": "op_alloc_tensor_in_storage",
    "relax.builtin.alloc_tensor": "op_builtin_alloc_tensor",
    "relax.memory.kill_storage": "op_kill",
    "relax.memory.kill_tensor": "op_kill",
    "relax.vm.kill_object": "op_kill",
    "relax.memory.view": "op_view",
    "relax.memory.ensure_zero_offset": "op_identity",
    "relax.builtin.stop_lift_params": "op_identity",
    "relax.vm.call_tir_dyn": "op_call_tir_dyn",
    "relax.make_closure": "op_make_closure",
    "relax.invoke_closure": "op_invoke_closure",
    "relax.invoke_pure_closure": "op_invoke_closure",
    "relax.call_inplace_packed": "op_call_inplace_packed",
    **{f"relax.inspect.tensor_{f}": "op_inspect" for f in (
        "dtype_code", "dtype_bits", "dtype_lanes", "ndim", "shape_i", "stride_i", "byte_offset", "elem_offset")},
}
