"""The Relax VM's planner: compiles each Relax function, once, into a :class:`FunctionPlan` of
closures over a frame, and reports what the VM cannot run before anything runs."""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.dtype import to_numpy_dtype
from ..ir.functor import Visitor
from ..ir.module import GlobalVar
from ..ir.struct_info import collect_vars, has_known_shapes, sinfo_of, static_shape
from ..ops import find_op_def
from .runtime import ArgumentError, get_py_func
from .signature import data_pointer
from .vm_frame import (
    POINTER, MemoryTracker, Closure, Fn, Frame, FunctionPlan, FunctionRef, MatchCastError, PackedRef, VMError, const_fn, from_packed,
    op_text, run_in_order, tuple_of,
)
from .vm_lowered import LOWERED_OP_METHODS, PLACED_OPS, VIEW_BUILTINS, LoweredOps, then_clear
from .vm_match import StructInfoMatcher
from .vm_native import RESULT, build_runner, native_enabled, resolve_ops
from .vm_shape import NO_STEP, SHAPE_BUILTINS, ShapeHeapOps
from .vm_prim_exprs import PrimExprCompiler


def _static_tensor(sinfo: Any) -> tuple[tuple[int, ...], np.dtype] | None:
    """(shape, numpy dtype) of a tensor struct info with constant dims and a known dtype."""
    if not isinstance(sinfo, rx.TensorStructInfo) or sinfo.shape is None or sinfo.dtype == "void":
        return None
    if not all(isinstance(d, tir.IntImm) for d in sinfo.shape):
        return None
    return tuple(int(d.value) for d in sinfo.shape), to_numpy_dtype(sinfo.dtype)


class PlanContext:
    """What every function's planner shares: the kernels, the PrimFunc names and the plans."""

    def __init__(self, executable: Any, kernels: set[str], plans: dict[str, FunctionPlan],
                 memory: MemoryTracker | None = None) -> None:
        self.memory = memory  # counts the storages allocated, when the VM measures memory
        resolve = getattr(executable, "kernel", None)
        # ``kernel(name)`` gives ``fn(arrays, scalars)`` for one kernel (no lookup by name per call);
        # an executable with only the executor interface gets ``call`` with the name bound.
        self.kernel: Callable[[str], Callable[..., Any]] = (
            resolve if callable(resolve) else lambda name: functools.partial(executable.call, name))
        self.kernels = kernels
        self.plans = plans
        # ``static_kernel(name, shapes, dtypes, n_inputs)``: the unchecked native entry of a kernel
        # for arrays the plan proves (LLVM kernels); None for other executors.
        self.host_funcs: dict[str, Any] = {}  # the generated shape functions the VM runs itself
        self.static_kernel: Callable[..., Any] = getattr(executable, "static_kernel", None) or (lambda *a: None)
        self.native = memory is None and native_enabled()  # static plans may run as one native call


class Planner(ShapeHeapOps, LoweredOps, Visitor):
    """Compiles one Relax function into a :class:`FunctionPlan`: each expression into a closure over the
    frame, dispatched on node keys (``visit_call_``, ``visit_relax_if_``...); nested functions
    get planners of their own that capture the enclosing frame's slots."""

    def __init__(self, ctx: PlanContext, plan: FunctionPlan, parent: "Planner | None" = None) -> None:
        self.ctx = ctx
        self.plan = plan
        self.name = plan.name
        self.parent = parent
        self.slots: dict[int, int] = {}  # id(rx.Var | tir.Var) -> slot
        self.defined: set[int] = set()  # symbolic variables that have a value at this point of the plan
        self.origins: dict[int, str] = {}  # symbolic variable -> where its value comes from
        self.captures: list[tuple[int, int]] = []  # nested functions: (own slot, enclosing slot)
        self.nslots = 0
        self.prim = PrimExprCompiler(self)
        # What the plan proves about an array variable of this function (a parameter checked on
        # entry, a call_tir output the VM allocated): id(var) -> (shape, numpy dtype); such arrays are
        # C-contiguous and aligned, so kernels reading them skip their own checks.
        self.proven: dict[int, tuple[tuple[int, ...], np.dtype]] = {}
        self.pointers: dict[int, int] = {}  # id(var) -> slot holding its data pointer
        self.params: dict[int, int] = {}  # id(parameter) -> its slot
        self.constants: list[tuple[int, Any]] = []  # slots filled in every frame (data pointers of constants)
        self.produced: tuple[rx.Call, int] | None = None  # the call_tir just planned, and its pointer slot
        self.aliases: dict[int, int] = {}  # id(var) -> id of the proven variable it was bound to
        self.placed: set[int] = set()  # id(var) of the tensors placed in storages (the lowered form's outputs)
        self.consumed: set[int] = set()  # id(var) of the variables some binding planned so far used
        self.placement: tuple | None = None  # the static placement just planned (fresh_placed)
        self.proven_call: tuple | None = None  # the proven kernel call just planned (_proven_direct_call)
        self.native_ops: list = []  # what the binding being planned does, for the native runner (vm_native)
        self.native_record: tuple | None = None  # (seq, native ops per step, step names) of the last sequence

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
    def build(self, func: rx.Function) -> FunctionPlan:
        """Plan ``func`` into ``self.plan``."""
        plan = self.plan
        matcher = StructInfoMatcher(self, bind=True, error=ArgumentError)
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
        record = self.native_record
        if self.parent is None and self.ctx.native and record is not None and record[0] is func.body \
                and all(ops is not None for ops in record[1]):
            self._run_natively(func, record[1], record[2])
        return plan

    def _run_natively(self, func: rx.Function, natives: list, names: list[str]) -> None:
        """Make the plan one native call when every step is static and proven (vm_native); the step
        path stays as the fallback (its frame then gets the constants and pointers it reads)."""
        plan = self.plan
        params = [(p, self.params[id(p)], *self.proven[id(p)]) for p in func.params if id(p) in self.proven]
        template, pointers, pointer = plan.template, plan.pointers, POINTER

        def fallback(frame: Frame) -> Any:
            if template is not None:
                for slot, value in enumerate(template):
                    if value is not None:
                        frame[slot] = value
            for slot, pointer_slot in pointers:
                frame[pointer_slot] = pointer(frame[slot])
            return steps(frame)

        steps = plan.body
        runner = build_runner(params, list(zip(names, natives)), func.body.body, self.name, fallback)
        if runner is not None:
            runner.steps = steps  # the step path itself (what the fallback runs), for inspection
            plan.native, plan.template, plan.pointers = runner, None, []
            plan.body = runner.body(lambda run: setattr(plan, "body", run))

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
        return const_fn(np.require(const.data, requirements="C"))

    def visit_shape_expr_(self, shape: rx.ShapeExpr) -> Fn:
        """A tuple of ints (computed from the symbolic sizes when not constant)."""
        if all(isinstance(v, tir.IntImm) for v in shape.values):
            return const_fn(tuple(int(v.value) for v in shape.values))
        return tuple_of([self.prim.compile(v) for v in shape.values])

    def visit_prim_value_(self, value: rx.PrimValue) -> Fn:
        """A Python scalar."""
        return self.prim.compile(value.value)

    def visit_string_imm_(self, imm: rx.StringImm) -> Fn:
        """A ``str``."""
        return const_fn(imm.value)

    def visit_data_type_imm_(self, imm: rx.DataTypeImm) -> Fn:
        """The dtype's name."""
        return const_fn(imm.value)

    def visit_extern_func_(self, func: rx.ExternFunc) -> Fn:
        """A packed function as a value."""
        return const_fn(PackedRef(func.global_symbol))

    def visit_global_var_(self, gv: GlobalVar) -> Fn:
        """A module-level Relax function as a value."""
        return const_fn(FunctionRef(self._relax_plan(gv)))

    def visit_op_(self, op: rx.Op) -> Fn:
        """Ops are only called, never passed around."""
        raise VMError(f"{self.name}: the op {op_text(op.name)} cannot be used as a value")

    # ---- compound expressions
    def visit_tuple_(self, tup: rx.Tuple) -> Fn:
        """A Python tuple of the fields."""
        if not tup.fields:
            return const_fn(())
        return tuple_of([self.expr(f) for f in tup.fields])

    def visit_tuple_get_item_(self, item: rx.TupleGetItem) -> Fn:
        """One field of a tuple."""
        value, index = self.expr(item.tuple_value), item.index
        return lambda frame: value(frame)[index]

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> Fn:
        """The blocks' bindings in order (dataflow or not: the same at run time), then the body.
        The lowered form's small steps are merged where that changes nothing observable: a static
        storage with the tensor placed in it (and the storage's kill), that tensor with the proven
        kernel call writing it, and a kill with the step before it."""
        steps: list[list] = []  # [slot, fn, slots a kill clears after it]
        names: list[str] = []
        natives: list[list | None] = []  # per step: its native ops (None: none, the plan keeps its steps)
        outer_ops = self.native_ops
        for block in seq.blocks:
            bindings = block.bindings
            skip = 0
            for i, binding in enumerate(bindings):
                if skip:
                    skip -= 1
                    continue
                self.produced = None
                self.placement = self.proven_call = None
                ops = self.native_ops = []
                fused = self._fused_placement(bindings, i)
                if fused is not None:
                    fn, skip = fused
                    tensor = bindings[i + 1]
                    steps.append([self.bind_var(tensor.var), fn, [], (tensor.var, self.placement)])
                    names.append(tensor.var.name_hint)
                    natives.append(ops or None)
                    self._note_proven(tensor)
                    continue
                killed = self._killed_slot(binding)
                if killed is not None and steps:  # the kill clears the slot right after the step before it
                    self.bind_var(binding.var)
                    steps[-1][2].append(killed)
                    continue
                fn = self._handler(binding)(binding)
                slot = self.bind_var(binding.var)
                if fn is NO_STEP or _is_null_value(binding.value):
                    self._consume(binding.value)  # merged into the entry check, or None (a fresh slot's value)
                    continue
                merged = self._place_and_call(steps[-1] if steps else None, binding, slot)
                resolved = resolve_ops(ops, binding)
                if merged is not None:
                    steps[-1] = [slot, merged, [], None]
                    names[-1] = binding.var.name_hint
                    natives[-1] = None if natives[-1] is None or resolved is None else natives[-1] + resolved
                else:
                    steps.append([slot, fn, [], None])
                    names.append(binding.var.name_hint)
                    natives.append(resolved)
                self._note_proven(binding)
                self._consume(binding.value)
        self.native_ops, self.native_record = outer_ops, (seq, natives, names)
        return run_in_order([(slot, then_clear(fn, clears)) for slot, fn, clears, _ in steps], names,
                            self.expr(seq.body), self.name)

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
        if isinstance(value, rx.Call) and isinstance(value.op, rx.Op) and value.op.name in PLACED_OPS:
            static = _static_tensor(binding.var.struct_info)
            if static is not None and self.produced is not None and self.produced[0] is value:
                self.proven[vid] = static  # a tensor placed in a storage of ours: proven like an output
                self.pointers[vid] = self.produced[1]
                self.placed.add(vid)
            return
        if isinstance(value, rx.Call) and isinstance(value.op, rx.ExternFunc) \
                and value.op.global_symbol == "vm.builtin.reshape":
            self._note_proven_reshape(vid, value)
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
        matcher = StructInfoMatcher(self, bind=True, error=MatchCastError)
        check = matcher.compile(binding.struct_info, f"R.match_cast of '{binding.var.name_hint}'")
        post = matcher.finish()

        def run(frame: Frame) -> Any:
            result = check(value(frame), frame)
            for p in post:
                p(frame)
            return result

        self.explain_match_cast(binding, run)  # the shape built-ins before it report failures as its own
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
        plan = FunctionPlan(f"{self.name}.<local function>", [p.name_hint for p in func.params])
        nested = Planner(self.ctx, plan, parent=self)
        nested.build(func)
        captures = nested.captures
        return lambda frame: Closure(plan, [(own, frame[outer]) for own, outer in captures])

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

    def _relax_plan(self, gv: GlobalVar) -> FunctionPlan:
        """The plan of the module's Relax function ``gv``."""
        plan = self.ctx.plans.get(gv.name_hint)
        if plan is None:
            raise VMError(f"{self.name}: the module has no Relax function {gv.name_hint}")
        return plan

    def call_global_var_(self, call: rx.Call) -> Fn:
        """A call of another Relax function of the module (its signature is checked on entry),
        or a direct call of a TIR function (``cls.copy(x, y)``)."""
        host = self.ctx.host_funcs.get(call.op.name_hint)
        if host is not None:
            return self.host_shape_func(host, call.args)
        if call.op.name_hint in self.ctx.kernels:
            return self._direct_kernel_call(call)
        plan, args = self._relax_plan(call.op), self._args(call.args)
        return lambda frame: plan.invoke(args(frame))

    def _direct_kernel_call(self, call: rx.Call) -> Fn:
        """``cls.f(x, n)``: the kernel runs on the tensors in place and the ``R.Prim`` values as its
        scalar parameters; the value is its return value, or an empty tuple."""
        fast = self._proven_direct_call(call)
        if fast is not None:
            return fast
        kernel, args = self.ctx.kernel(call.op.name_hint), self._args(call.args)
        in_sinfo = [sinfo_of(a) for a in call.args]
        arrays_of, scalars_of = self._split_prim_args(in_sinfo, const_fn(())) or (
            (lambda ins: ins), (lambda ins, frame: ()))

        def run(frame: Frame) -> Any:
            ins = args(frame)
            result = kernel(arrays_of(ins), scalars_of(ins, frame))
            return () if result is None else result

        return run

    def call_extern_func_(self, call: rx.Call) -> Fn:
        """``R.call_packed("name", ...)`` (the shape built-ins planned as the VM's own steps)."""
        if call.op.global_symbol in SHAPE_BUILTINS:
            return self.shape_builtin(call.op.global_symbol, call.args)
        if call.op.global_symbol in VIEW_BUILTINS:
            return getattr(self, VIEW_BUILTINS[call.op.global_symbol])(call)
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
        ref, arg_fns = PackedRef(name), self._args(args)
        matcher = StructInfoMatcher(self, bind=False, error=VMError)
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

        unknown = [] if call is None else [a for a in call.args if not has_known_shapes(sinfo_of(a))]
        if unknown and find_op_def(rx.Op.get(name)).legalize is not None:
            a, sinfo = unknown[0], sinfo_of(unknown[0])
            var = a.name_hint if isinstance(a, rx.Var) else "x"
            ndim = getattr(sinfo, "ndim", -1)
            dims = ", ".join(f'"d{i}"' for i in range(max(ndim, 1))) + ("," if ndim == 1 else "")
            dtype = getattr(sinfo, "dtype", "float32")
            raise VMError(f"{self.name}: {op_text(name)} has no kernel: the shape of '{var}' is not known at "
                          f"compile time ({sinfo.script()}), and LegalizeOps needs shapes to generate loops; "
                          f"state it with R.match_cast, e.g. {var}_1 = R.match_cast({var}, R.Tensor(({dims}), "
                          f"dtype=\"{dtype}\"))")
        if call is not None and not has_known_shapes(sinfo_of(call)) and find_op_def(rx.Op.get(name)).legalize:
            tensors = [a for a in call.args if isinstance(sinfo_of(a), rx.TensorStructInfo)]
            why = ("the sizes of its arguments may not agree" if len(tensors) > 1
                   else "its attributes do not determine it for a symbolic input shape")
            fix = ("state the arguments' shapes with R.match_cast so that they provably agree" if len(tensors) > 1
                   else "state the result's shape with R.match_cast on the input, or use static sizes")
            raise VMError(f"{self.name}: {op_text(name)} has no kernel: the shape of its result is not known at "
                          f"compile time ({sinfo_of(call).script()}: {why}), and LegalizeOps needs shapes to "
                          f"generate loops; {fix}")

        if find_op_def(rx.Op.get(name)).legalize is not None:
            raise VMError(f"{self.name}: {op_text(name)} is a graph-level op, which the VM does not run: lower "
                          f"it to R.call_tir with LegalizeOps() first (tvmlite.compile's 'zero' and 'default' "
                          f"pipelines do)")
        raise VMError(f"{self.name}: {op_text(name)} cannot run on the VM: it has no legalization"
                      + (" (SimplifyInference removes dropout)" if name == "relax.nn.dropout" else ""))

    # ---- the ops the VM runs
    def _kernel(self, call: rx.Call) -> str:
        """The PrimFunc a call_tir calls (it must be in the module)."""
        gv = call.args[0]
        if not isinstance(gv, GlobalVar) or gv.name_hint not in self.ctx.kernels:
            raise VMError(f"{self.name}: {op_text(call.op.name)} calls {getattr(gv, 'name_hint', gv)!s}, which is "
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
                raise VMError(f"{self.name}: cannot allocate output {k} of {op_text(call.op.name)}: its shape "
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
                        return self.define_sym(var, f"input {i} dim {d} of {op_text(call.op.name)}"), i, d
        raise VMError(f"{self.name}: cannot allocate the outputs of {op_text(call.op.name)}: the size {var.name} "
                      f"is defined by no parameter, R.match_cast or input shape")

    def _tir_vars(self, call: rx.Call) -> Fn:
        """The scalar arguments (``tir_vars``) of a call_tir, as a tuple of ints."""
        return self.expr(call.args[2]) if len(call.args) > 2 else const_fn(())

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
        static = [static_shape(o) for o in self._out_sinfos(call)]
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
                self.constants.append((slot, data_pointer(data)))
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
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        self.native_ops += [("storage", ("output of", id(call)), nbytes),  # its own storage, as np.empty gives
                            ("place", RESULT, ("output of", id(call)), 0, shape, dtype),
                            ("call", cfunc, extra, status_error, [*args, RESULT])]
        read = operator.itemgetter(*pointer_slots) if pointer_slots else (lambda frame: ())
        if len(pointer_slots) == 1:
            single = read
            read = lambda frame: (single(frame),)  # noqa: E731  (itemgetter of one slot gives the value)
        empty, pointer = np.empty, POINTER
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

    def _proven_direct_call(self, call: rx.Call) -> Fn | None:
        """``cls.f(x, w, alloc)`` of the lowered form on proven tensors, the trailing ones placed in
        storages of this function (the outputs, distinct from the inputs): the kernel's unchecked
        native entry on the data pointers the frame holds. None when anything is not proven."""
        args = call.args
        n_out = 0  # the outputs: trailing placed tensors nothing has used yet
        while n_out < len(args) and isinstance(args[-1 - n_out], rx.Var) and id(args[-1 - n_out]) in self.placed \
                and id(args[-1 - n_out]) not in self.consumed:
            n_out += 1
        if not n_out or not all(isinstance(a, (rx.Var, rx.Constant)) for a in args):
            return None
        outs = {id(a) for a in args[len(args) - n_out:]}
        if len(outs) != n_out or any(id(a) in outs for a in args[:len(args) - n_out]):
            return None  # an output passed twice, or also read: the checked call sorts it out
        infos, slots = [], []
        for a in args:
            if isinstance(a, rx.Constant):
                found = self._constant_pointer(a)
                if found is None:
                    return None
                info, slot = found
            else:
                info = self.proven.get(id(a))
                slot = self._pointer_slot(a) if info is not None else None
            if slot is None:
                return None
            infos.append(info)
            slots.append(slot)
        entry = self.ctx.static_kernel(call.op.name_hint, [i[0] for i in infos], [str(i[1]) for i in infos],
                                       len(args) - n_out)
        if entry is None:
            return None
        cfunc, extra, status_error = entry
        read = operator.itemgetter(*slots)
        if len(slots) == 1:
            single = read
            read = lambda frame: (single(frame),)  # noqa: E731  (itemgetter of one slot gives the value)
        self.proven_call = (cfunc, extra, read, status_error)  # for merging with the output's placement
        self.native_ops.append(("call", cfunc, extra, status_error, list(args)))

        def run_proven(frame: Frame) -> tuple:
            status = cfunc(*read(frame), *extra)
            if status:
                raise status_error(status, (*read(frame), *extra))
            return ()

        return run_proven

    def _constant_pointer(self, const: rx.Constant) -> tuple[tuple, int] | None:
        """(shape, dtype) of a constant and the slot of its data pointer, which every frame holds
        (the array lives as long as the plan); None when it is not aligned."""
        data = np.require(const.data, requirements="C")
        if not data.flags.aligned:
            return None
        slot = self.new_slot()
        self.constants.append((slot, data_pointer(data)))
        self.constants.append((self.new_slot(), data))
        return (data.shape, data.dtype), slot

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
        ref = PackedRef(func.global_symbol) if isinstance(func, rx.ExternFunc) else None
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
            fn(*ins, *outs)  # PackedRef wraps them as Tensors sharing the arrays
            return tuple(outs) if is_tuple else outs[0]

        return run

    def op_call_pure_packed(self, call: rx.Call) -> Fn:
        """``R.call_pure_packed("name", ...)``."""
        func = call.args[0]
        if isinstance(func, rx.ExternFunc):
            return self._packed(func.global_symbol, call.args[1:], call.sinfo_args)
        callee, args = self.expr(func), self._args(call.args[1:])
        return lambda frame: callee(frame)(*args(frame))

    def op_call_py_func(self, call: rx.Call) -> Fn:
        """``R.call_py_func("name", args, out_sinfo)``: the registered Python function on read-only
        views of the arguments, its result checked against ``out_sinfo``."""
        name = call.args[0].value
        args = self.expr(call.args[1])
        matcher = StructInfoMatcher(self, bind=False, error=VMError)
        check = matcher.compile(call.sinfo_args[0], f"the result of Python function '{name}'")
        post = matcher.finish()

        def read_only(value: Any) -> Any:
            if isinstance(value, np.ndarray):
                value = value.view()
                value.flags.writeable = False
            return value

        def run(frame: Frame) -> Any:
            result = get_py_func(name)(*(read_only(a) for a in args(frame)))
            result = check(from_packed(result), frame)
            for p in post:
                p(frame)
            return result

        return run

    def op_print(self, call: rx.Call) -> Fn:
        """``R.print``: the registered ``relax.run.print``; the value is an empty tuple."""
        printer, args = PackedRef("relax.run.print"), self._args(call.args)

        def run(frame: Frame) -> tuple:
            printer(*args(frame))
            return ()

        return run

    def op_assert_op(self, call: rx.Call) -> Fn:
        """``R.assert_op``: AssertionError (from ``relax.run.assert_op``) unless the condition holds."""
        check = PackedRef("relax.run.assert_op")
        cond, rest = self.expr(call.args[0]), self._args(call.args[1:])

        def run(frame: Frame) -> tuple:
            check(cond(frame), *rest(frame))
            return ()

        return run

    def op_shape_of(self, call: rx.Call) -> Fn:
        """The shape of a tensor, as a tuple of ints."""
        x = self.expr(call.args[0])
        return lambda frame: x(frame).shape

    def op_shape_to_tensor(self, call: rx.Call) -> Fn:
        """The dims of a shape value as a 1-D int64 array."""
        shape = self.expr(call.args[0])
        return lambda frame: np.asarray(shape(frame), dtype=np.int64).reshape(-1)

    def op_tensor_to_shape(self, call: rx.Call) -> Fn:
        """The values of a 1-D integer array as a shape value (a tuple of ints)."""
        t = self.expr(call.args[0])
        return lambda frame: tuple(int(v) for v in np.asarray(t(frame)).reshape(-1))

    def op_null_value(self, call: rx.Call) -> Fn:
        """None."""
        return const_fn(None)

    def op_on_device(self, call: rx.Call) -> Fn:
        """``R.hint_on_device`` / ``R.to_vdevice``: the value itself (the VM has one device, the
        host, and Relax values are never written in place)."""
        return self.expr(call.args[0])


def _is_null_value(value: rx.Expr) -> bool:
    """True for ``R.null_value()`` (its variable's slot is None already)."""
    return isinstance(value, rx.Call) and isinstance(value.op, rx.Op) and value.op.name == "relax.null_value"


_OP_METHODS = {
    "relax.call_tir": "op_call_tir",
    "relax.call_tir_inplace": "op_call_tir_inplace",
    "relax.call_dps_packed": "op_call_dps_packed",
    "relax.call_pure_packed": "op_call_pure_packed",
    "relax.call_py_func": "op_call_py_func",
    "relax.print": "op_print",
    "relax.assert_op": "op_assert_op",
    "relax.shape_of": "op_shape_of",
    "relax.shape_to_tensor": "op_shape_to_tensor",
    "relax.tensor_to_shape": "op_tensor_to_shape",
    "relax.null_value": "op_null_value",
    "relax.call_builtin_with_ctx": "op_call_builtin_with_ctx",
    "relax.hint_on_device": "op_on_device",
    "relax.to_vdevice": "op_on_device",
    **LOWERED_OP_METHODS,
}
