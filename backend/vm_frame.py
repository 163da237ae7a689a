"""Frames, plans and values of the Relax VM: what a planned function runs on.

A plan is a Relax function compiled into closures over a *frame*, a list with one slot per
Relax variable and per symbolic size; these are the plan, the closures' building blocks and
the conversions of values between the VM, its users and packed functions."""
from __future__ import annotations

import weakref
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ..ir import tir

from .runtime import ArgumentError, Tensor, get_func
from .signature import pointer_reader


Frame = list  # one slot per Relax variable / symbolic size of a function; None until assigned
POINTER = pointer_reader()  # array -> address of its data (backend/signature.py)
Fn = Callable[[Frame], Any]
Checker = Callable[[Any, Frame], Any]  # (value, frame) -> the value as the VM holds it
DimCheck = Callable[[Any, Frame, Any], None]  # (value, frame, the whole value for messages)


class SymbolSlots(Protocol):
    """What the struct-info matcher and the scalar-expression compiler need of the planner: the
    frame slots of symbolic variables (the planner implements it; they are built by it)."""

    name: str  # the function's name, for messages
    prim: Any  # the compiler of TIR scalar expressions, ``compile(expr) -> Fn``

    def new_slot(self) -> int:
        """A fresh scratch slot."""

    def is_sym_defined(self, var: tir.Var) -> bool:
        """Whether ``var`` already has a slot with a value."""

    def define_sym(self, var: tir.Var, origin: str) -> int:
        """Give ``var`` a slot; ``origin`` says where its value comes from (for messages)."""

    def sym_slot(self, var: tir.Var) -> int:
        """The slot of a defined ``var``."""

    def origin(self, var: tir.Var) -> str:
        """Where ``var``'s value came from."""


class VMError(RuntimeError):
    """A module the VM cannot run, or a failure while running it."""


class MatchCastError(VMError):
    """A value that does not match the struct info of its ``R.match_cast``."""


def add_error_note(err: BaseException, text: str) -> None:
    """Attach where an error happened (Python 3.11+ shows notes under the message)."""
    if hasattr(err, "add_note"):
        err.add_note(text)


def op_text(name: str) -> str:
    """``relax.nn.relu`` -> ``R.nn.relu``."""
    return "R." + name[len("relax."):] if name.startswith("relax.") else name


# ==================================================================== value conversions
def to_user(value: Any) -> Any:
    """A VM value as ``vm["f"]`` returns it: arrays become Tensors (inside tuples too)."""
    if type(value) is np.ndarray:
        return Tensor(value)
    if type(value) is tuple:
        return tuple(to_user(v) for v in value)
    return value


def to_packed(value: Any) -> Any:
    """A VM value as a packed function receives it (Tensors, like TVM's NDArrays)."""
    if type(value) is np.ndarray:
        return Tensor(value)
    if type(value) is tuple:
        return tuple(to_packed(v) for v in value)
    return value


def from_packed(value: Any) -> Any:
    """A packed function's result as a VM value (C-contiguous arrays, tuples, Python scalars)."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, np.ndarray):
        return np.require(value, requirements="C")  # kernels need C order (ascontiguousarray would make rank 0 rank 1)
    if isinstance(value, (tuple, list)):
        return tuple(from_packed(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


class FunctionRef:
    """A module-level Relax function used as a value (``f = cls.helper``)."""

    __slots__ = ("plan",)

    def __init__(self, plan: "FunctionPlan") -> None:
        self.plan = plan

    def __call__(self, *args: Any) -> Any:
        return self.plan.invoke(args)


class Closure:
    """A nested Relax function with the values it captured from the enclosing frame."""

    __slots__ = ("plan", "captured")

    def __init__(self, plan: "FunctionPlan", captured: list[tuple[int, Any]]) -> None:
        self.plan = plan
        self.captured = captured

    def __call__(self, *args: Any) -> Any:
        return self.plan.invoke(args, self.captured)


class PackedRef:
    """A registered packed function used as a value; looked up when called, so functions
    registered after the VM was built are found."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return from_packed(get_func(self.name)(*(to_packed(a) for a in args)))


# ==================================================================== plans
class FunctionPlan:
    """One Relax function, planned: parameter checkers, then closures over a frame."""

    __slots__ = ("name", "param_names", "params", "post", "body", "nslots", "pointers", "template", "native")

    def __init__(self, name: str, param_names: Sequence[str]) -> None:
        self.name = name
        self.param_names = tuple(param_names)
        self.params: list[tuple[int, Checker]] = []
        self.post: list[Callable[[Frame], None]] = []  # checks of compound sizes (n * 2), after binding
        self.body: Fn = _unplanned
        self.nslots = 0
        self.pointers: list[tuple[int, int]] = []  # (parameter slot, slot of its data pointer)
        self.template: Frame | None = None  # a frame with constant slots filled in (None: all empty)
        self.native: Any = None  # the plan as one native call (vm_native.NativeRunner), when it is static

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
            pointer = POINTER
            for slot, pointer_slot in self.pointers:
                frame[pointer_slot] = pointer(frame[slot])
        return self.body(frame)


class MemoryTracker:
    """Counts the bytes of the storages the VM allocates while they are alive (each storage is
    released when nothing refers to it any more: after its kill, or when its tensors go):
    ``live`` now, ``peak`` the most at any time since the last ``reset()``."""

    def __init__(self) -> None:
        self.live = 0
        self.peak = 0

    def reset(self) -> None:
        """Start a new measurement from what is alive now."""
        self.peak = self.live

    def track(self, storage: Any) -> Any:
        """Count ``storage`` (a numpy array) until it is freed; the storage itself."""
        n = int(storage.nbytes)
        self.live += n
        if self.live > self.peak:
            self.peak = self.live
        weakref.finalize(storage, self._free, n)
        return storage

    def _free(self, n: int) -> None:
        self.live -= n


def _unplanned(frame: Frame) -> Any:
    """The body of a plan that is still being built (only reachable through a planning bug)."""
    raise VMError("internal error: a function was called before it was planned")


def run_in_order(steps: list[tuple[int, Fn]], names: list[str], body: Fn, where: str) -> Fn:
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
            add_error_note(err, f"  while computing '{names[i]}' in {where}")
            raise
        return body(frame)

    return run


def const_fn(value: Any) -> Fn:
    """A closure returning ``value``."""
    return lambda frame: value


def tuple_of(fns: Sequence[Fn]) -> Fn:
    """A closure building a tuple from the values of ``fns``."""
    fns = tuple(fns)
    return lambda frame: tuple([fn(frame) for fn in fns])
