"""``tvmlite.compile`` (alias ``build``): a module to an executable the VM runs.

The steps, each inspectable: the graph pipeline on the Relax functions (``zero`` by default:
LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR, as TVM's IRModule tutorial
compiles), InlineLayoutKernels (transposes and reshapes read in place by the kernel that
consumes them), the ``lower`` pipeline on every PrimFunc (blocks to flat loops), then LLVM code
generation of the lowered PrimFuncs. The result, a :class:`VMExecutable`, holds the graph-level module (what the
:class:`~tvmlite.backend.vm.VirtualMachine` plans), the lowered TIR and the compiled kernels;
``ex["f"](a, b, c)`` calls a kernel directly and ``ex.get_source("relax" | "tir" | "ll" | "asm")``
shows a stage."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.expr_functor import post_order_visit
from ..ir.module import IRModule
from ..ir.functor import deep_recursion
from ..ir.gc_pause import paused_gc
from .runtime import Tensor

__all__ = ["compile", "build", "VMExecutable"]

class VMExecutable:
    """A compiled module: ``mod`` (Relax functions and their PrimFuncs, after the graph
    pipeline), ``lowered`` (the PrimFuncs given to code generation), ``kernels`` (anything with
    ``call(name, arrays, scalars=())``: the LLVM ``Executable`` or the TIR interpreter) and the
    ``target``."""

    def __init__(self, mod: IRModule, kernels: Any, target: Any = None, lowered: IRModule | None = None,
                 vm_mod: IRModule | None = None) -> None:
        self.mod = mod
        # What the VM runs: the Relax functions after the VM lowering passes (``mod`` when not lowered).
        self.vm_mod = vm_mod if vm_mod is not None else mod
        self.kernels = kernels
        self.target = target
        self.lowered = lowered if lowered is not None else _prim_funcs(mod)
        self.call: Callable[..., Any] = kernels.call  # the kernels' own bound method: no extra call layer per kernel

    def __getitem__(self, name: str) -> Callable[..., Any]:
        """The kernel ``name`` as a function of its parameters in order (buffers as arrays, outputs
        included, then scalars): ``ex["add"](a, b, c)``."""
        if name not in self.lowered:
            raise KeyError(f"no TIR function named {name!r} in the executable (it has: "
                           f"{', '.join(self.kernel_names()) or 'none'}; Relax functions run on "
                           f"tvmlite.VirtualMachine)")
        if hasattr(self.kernels, "__getitem__"):
            return self.kernels[name]  # the backend's own entry checks the arguments itself
        return _KernelFunction(self, name)

    def __contains__(self, name: str) -> bool:
        return name in self.lowered

    def kernel(self, name: str) -> Callable[[Any, Any], Any]:
        """``call`` bound to one kernel, ``fn(arrays, scalars)``: what the VM resolves once per
        ``R.call_tir`` when it is built, so a call skips the lookup by name."""
        entry = self.kernels[name] if hasattr(self.kernels, "__getitem__") else None
        fast = getattr(entry, "call", None)
        return fast if callable(fast) else functools.partial(self.call, name)

    def static_kernel(self, name: str, shapes: Sequence[tuple[int, ...]], dtypes: Sequence[str],
                      n_inputs: int) -> tuple[Callable[..., int], tuple[int, ...], Callable[[int], Exception]] | None:
        """The unchecked native entry of kernel ``name`` for arrays the caller proves to have these
        shapes and dtypes (see ``PrimFuncHandle.static_entry``): (native function, constant
        arguments after the data pointers, status -> error); None when the backend has none or the
        call would not pass the checks."""
        entry = self.kernels[name] if hasattr(self.kernels, "__getitem__") else None
        prepare = getattr(entry, "static_entry", None)
        if prepare is None:
            return None
        found = prepare(shapes, dtypes, n_inputs)
        return None if found is None else (found[0], found[1], entry.status_error)

    def kernel_names(self) -> list[str]:
        """The names of the compiled PrimFuncs."""
        return [gv.name_hint for gv in self.lowered.get_global_vars()]

    def get_source(self, fmt: str = "ll", **options: Any) -> str:
        """The text of one stage: ``"relax"`` (the graph-level module), ``"vm"`` (what the VM runs:
        its Relax functions after the ``vm_lower`` passes), ``"tir"`` (the lowered PrimFuncs), or
        what the kernels' backend prints (``"ll"``, ``"asm"``...; options such as ``optimized=True``
        go to it)."""
        if fmt == "relax":
            return self.mod.script()
        if fmt == "vm":
            return self.vm_mod.script()
        if fmt == "tir":
            return self.lowered.script()
        get = getattr(self.kernels, "get_source", None)
        if get is None:
            raise ValueError(f"get_source({fmt!r}): the kernels run on {type(self.kernels).__name__}, which has "
                             f"no source of that kind (formats here: 'relax', 'tir')")
        return get(fmt, **options)

    def __repr__(self) -> str:
        relax_funcs = [gv.name_hint for gv, f in self.mod.functions_items() if isinstance(f, rx.Function)]
        return (f"<tvmlite.VMExecutable target={self.target!s} relax={relax_funcs} "
                f"kernels={self.kernel_names()} on {type(self.kernels).__name__}>")


class _KernelFunction:
    """``ex["f"]`` for kernels without an entry of their own: splits the arguments into the
    buffers and the scalars of the PrimFunc's parameters, then ``kernels.call``."""

    __slots__ = ("executable", "name", "is_buffer")

    def __init__(self, executable: VMExecutable, name: str) -> None:
        func = executable.lowered[name]
        self.executable = executable
        self.name = name
        self.is_buffer = tuple(p in func.buffer_map for p in func.params)

    def __call__(self, *args: Any) -> None:
        if len(args) != len(self.is_buffer):
            raise ValueError(f"{self.name}: takes {len(self.is_buffer)} arguments, got {len(args)}")
        arrays = [a._data if isinstance(a, Tensor) else a for a, b in zip(args, self.is_buffer) if b]
        scalars = [a for a, b in zip(args, self.is_buffer) if not b]
        for i, a in enumerate(arrays):
            if not isinstance(a, np.ndarray):
                raise TypeError(f"{self.name}: buffer argument {i} must be a numpy array or a Tensor, "
                                f"got {type(a).__name__}")
        self.executable.kernels.call(self.name, arrays, scalars)


def _prim_funcs(mod: IRModule) -> IRModule:
    """The PrimFuncs of ``mod``, as a module of their own."""
    return IRModule({gv: f for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)})


def _as_module(mod: Any) -> IRModule:
    """``mod`` as an IRModule (a lone PrimFunc or Relax function is wrapped)."""
    if isinstance(mod, IRModule):
        return mod
    if isinstance(mod, (tir.PrimFunc, rx.Function)):
        return IRModule.from_expr(mod)
    raise TypeError(f"compile takes an IRModule, a PrimFunc or a Relax function, got {type(mod).__name__}")


def _pipeline(spec: Any, what: str) -> Callable[[IRModule], IRModule] | None:
    """A pipeline from a name or textual spec (``"zero"``, ``"zero,DeadCodeElimination"``), a pass
    or any callable on modules; None skips the stage."""
    if spec is None or callable(spec):
        return spec
    if isinstance(spec, str):
        from ..passes import parse_pipeline

        return parse_pipeline(spec, name=what)
    raise TypeError(f"{what}: a pipeline is a name such as \"zero\", a pass or None, got {type(spec).__name__}")


def _build_kernels(lowered: IRModule, target: Any) -> Any:
    """The kernels of ``lowered`` compiled with LLVM; a module whose every call was folded into
    constants has none, and gets the (empty) reference-interpreter executor instead."""
    from .executable import build as build_executable
    from .interpreter import InterpreterExecutor

    if not any(isinstance(f, tir.PrimFunc) for _, f in lowered.functions_items()):
        return InterpreterExecutor(lowered)
    return build_executable(lowered, target)


def _distributed_use(sinfo: Any) -> bool:
    """True when a struct info holds a distributed tensor."""
    if isinstance(sinfo, rx.DTensorStructInfo):
        return True
    if isinstance(sinfo, rx.TupleStructInfo):
        return any(_distributed_use(f) for f in sinfo.fields)
    if isinstance(sinfo, rx.FuncStructInfo):
        return any(_distributed_use(p) for p in sinfo.params or ()) or _distributed_use(sinfo.ret)
    return False


def _refuse_distributed(mod: IRModule) -> None:
    """ValueError naming the first distributed construct (an R.DTensor value or an R.dist.* call):
    the VM runs a module on one device, so a distribution plan has no meaning there."""
    for gv, func in mod.functions_items():
        if not isinstance(func, rx.Function):
            continue
        found: list[str] = []

        def visit(e: rx.Expr) -> None:
            if found:
                return
            if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name.startswith("relax.dist."):
                found.append(f"the call R.{e.op.name[len('relax.'):]}")
            elif isinstance(e, rx.Var) and _distributed_use(e.struct_info):
                found.append(f"the variable '{e.name_hint}', an R.DTensor")

        for p in func.params:
            visit(p)
        post_order_visit(func.body, visit)
        if found:
            raise ValueError(f"tvmlite.compile: function '{gv.name_hint}' is distributed ({found[0]}); the VM "
                             f"runs a module on one CPU, so modules with R.DTensor values and R.dist.* ops "
                             f"can be parsed, printed and transformed but not compiled")


def compile(mod: Any, target: Any = "llvm", *, relax_pipeline: Any = "zero",
            tir_pipeline: Any = "default_tir", inline_layout: bool = True,
            vm_pipeline: Any = "vm_lower") -> VMExecutable:
    """Compile ``mod`` for ``target`` (``"llvm"``: the host CPU; ``"llvm -mcpu=... -mattr=..."``).

    ``relax_pipeline`` runs first when the module has Relax functions (``"zero"`` by default,
    as TVM's IRModule tutorial compiles; ``"default"`` adds the graph-level clean-ups; a textual
    pipeline, a pass, or None to take the module as it is); after a pipeline, ``InlineLayoutKernels`` (unless ``inline_layout=False``)
    folds transposes and reshapes into the kernel reading them; ``tir_pipeline`` then runs on
    the PrimFuncs: ``"default_tir"`` (the default CPU schedule on every function not already
    scheduled, then lowering) or ``"lower"`` (lowering only: the loops as written).
    ``vm_pipeline`` (``"vm_lower"``: TVM's CallTIRRewrite, StaticPlanBlockMemory, KillAfterLastUse...)
    turns the Relax functions into what the VM runs, explicit storages and kernel calls
    (``ex.get_source("vm")``); None lets the VM run the graph-level functions itself."""
    with paused_gc():  # the IR and llvmlite's objects stay alive: no collections scanning them
        return _compile(mod, target, relax_pipeline, tir_pipeline, inline_layout, vm_pipeline)


def _compile(mod: Any, target: Any, relax_pipeline: Any, tir_pipeline: Any, inline_layout: bool,
             vm_pipeline: Any) -> VMExecutable:
    """``compile``'s steps."""
    module = _as_module(mod)
    _refuse_distributed(module)
    graph = _pipeline(relax_pipeline, "relax_pipeline")
    has_relax = any(isinstance(f, rx.Function) for _, f in module.functions_items())
    if graph is not None and has_relax:
        module = graph(module)
    if inline_layout and graph is not None and has_relax:  # None: the module exactly as given
        from ..passes.inline_layout import InlineLayoutKernels

        module = InlineLayoutKernels()(module)
    lower = _pipeline(tir_pipeline, "tir_pipeline")
    prims = _prim_funcs(module)
    from .overlapped_build import build_overlapped

    def vm_lowering() -> IRModule | None:
        return _lower_for_vm(module, vm_pipeline) if has_relax else None

    # LLVM runs while the next PrimFuncs lower, and while the VM lowering runs after the last.
    overlapped = build_overlapped(prims, lower, target, vm_lowering)
    if overlapped is not None:
        lowered, kernels, vm_mod = overlapped
    else:
        lowered = lower(prims) if lower is not None and prims.get_global_vars() else prims
        with deep_recursion():  # codegen walks statements recursively, as deep as the program is long
            kernels = _build_kernels(lowered, target)
        vm_mod = vm_lowering()
    return VMExecutable(module, kernels, target, lowered, vm_mod)


def _lower_for_vm(module: IRModule, spec: Any) -> IRModule | None:
    """The module after the VM lowering pipeline (None: not lowered)."""
    vm = _pipeline(spec, "vm_pipeline")
    return None if vm is None else vm(module.copy())


build = compile
