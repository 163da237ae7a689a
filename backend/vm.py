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
tensors as :class:`~tvmlite.backend.runtime.Tensor`; packed functions receive Tensors too.

The parts: ``vm_plan`` (the planner), ``vm_match`` (struct info checkers), ``vm_prim_exprs``
(symbolic sizes and prim values) and ``vm_frame`` (plans, frames and value conversions)."""
from __future__ import annotations

from typing import Any, Sequence

from ..ir import relax as rx
from ..ir import tir
from ..ir.module import IRModule
from .runtime import ArgumentError, Device
from .vm_frame import FunctionPlan, MatchCastError, MemoryTracker, VMError, to_user
from .vm_plan import PlanContext, Planner
from .vm_shape import is_host_shape_func

__all__ = ["VirtualMachine", "VMError", "ArgumentError", "MatchCastError"]


class VirtualMachine:
    """Runs the Relax functions of what :func:`tvmlite.compile` returns: ``vm["main"](*args)``.

    Arguments are numpy arrays or Tensors (tensors), tuples, tuples of ints (shapes) and Python
    scalars (prim values); each is checked against the signature before anything runs. Results
    come back as Tensors, tuples and Python scalars."""

    def __init__(self, executable: Any, device: Device | Sequence[Device] | None = None, *,
                 track_memory: bool = False) -> None:
        mod = getattr(executable, "vm_mod", None) or getattr(executable, "mod", None)  # the lowered form, if any
        if not isinstance(mod, IRModule) or not callable(getattr(executable, "call", None)):
            raise TypeError(f"VirtualMachine takes what tvmlite.compile returns (an executable with .mod and "
                            f".call), got {type(executable).__name__}")
        devices = list(device) if isinstance(device, (list, tuple)) else [device]
        for d in devices:
            if d is not None and not isinstance(d, Device):
                raise TypeError(f"VirtualMachine: the device must be tvmlite.cpu(), got {d!r}")
        self.executable = executable
        self.device = devices[0] if devices[0] is not None else Device()
        plans = {gv.name_hint: FunctionPlan(gv.name_hint, [p.name_hint for p in f.params])
                 for gv, f in mod.functions_items() if isinstance(f, rx.Function)}
        kernels = {gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)}
        # track_memory: every storage the lowered functions allocate is counted while it lives
        # (``vm.memory.peak`` bytes); off by default, as it costs time per allocation.
        self.memory = MemoryTracker() if track_memory else None
        ctx = PlanContext(executable, kernels, plans, self.memory)
        ctx.host_funcs = {gv.name_hint: f for gv, f in mod.functions_items() if is_host_shape_func(f)}
        for gv, f in mod.functions_items():  # every plan exists first: functions may call each other
            if isinstance(f, rx.Function):
                Planner(ctx, plans[gv.name_hint]).build(f)
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

    def peak_bytes(self, name: str, *args: Any) -> int:
        """The most bytes of storage alive at once during one call ``vm[name](*args)`` (the VM must
        be built with ``track_memory=True``), the storage of its result included."""
        if self.memory is None:
            raise ValueError("peak_bytes: build the VirtualMachine with track_memory=True")
        before = self.memory.live  # results of earlier calls that are still held
        self.memory.reset()
        self[name](*args)
        return self.memory.peak - before


class _Entry:
    """``vm["f"]``: checks the arguments, runs ``f`` and returns Tensors, tuples and scalars."""

    __slots__ = ("_plan",)

    def __init__(self, plan: FunctionPlan) -> None:
        self._plan = plan

    def __call__(self, *args: Any) -> Any:
        return to_user(self._plan.invoke(args))

    def __repr__(self) -> str:
        return f"<VM function {self._plan.name}({', '.join(self._plan.param_names)})>"

    @property
    def runner(self) -> str:
        """How a call runs: ``"native"`` (the static plan as one native call, backend/vm_native.py)
        or ``"steps"`` (a Python step per binding)."""
        native = self._plan.native
        return "native" if native is not None and native.error is None else "steps"
