"""How the VM runs VMShapeLower's output: the shape heap (an int64 numpy array), the
``vm.builtin.check_*_info`` checks, ``vm.builtin.match_shape``/``make_shape``/``match_prim_value``/``make_prim_value`` over the heap and
the generated host ``shape_func`` PrimFuncs that compute compound sizes into it.

Every call's kinds and slots are constants of the text, so each becomes one closure with its
work decided at plan time. A check of a parameter that the function's entry check already makes
(the VM checks each argument against its annotation before the body runs, with messages naming
the parameter) is merged into that entry step: no step of its own. A ``match_shape`` of a
parameter against constant sizes only is merged the same way; one that stores sizes writes them
into the heap from the argument's shape."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.dtype import to_numpy_dtype
from ..ir.intrinsics import INTRINSICS, intrinsic_of_op
from ..ir.scalar_eval import ScalarCompiler
from ..ir.struct_info import sinfo_of
from .runtime import ArgumentError
from .vm_frame import Fn, Frame, MatchCastError, VMError
from .vm_match import value_text

__all__ = ["ShapeHeapOps", "NO_STEP", "SHAPE_BUILTINS", "is_host_shape_func"]


def NO_STEP(frame: Frame) -> None:  # noqa: N802  (a marker, compared by identity)
    """A binding merged into another step: the planner emits nothing for it."""


def _int(expr: rx.Expr) -> int:
    """The value of an integer ``R.prim_value`` of the text."""
    if not (isinstance(expr, rx.PrimValue) and isinstance(expr.value, tir.IntImm)):
        raise VMError(f"a shape built-in takes integer constants, got {type(expr).__name__}")
    return int(expr.value.value)


def _fail(cell: list, frame: Frame, error: Exception) -> Exception:
    """The error to raise: the match_cast binding's own (it fails on the same value), else ``error``."""
    if cell:
        cell[0](frame)
    return error


def _error_class(context: str) -> type[VMError]:
    """The error of a failed check: an argument's, a match_cast's, or the VM's."""
    if "loc=param[" in context:
        return ArgumentError  # type: ignore[return-value]
    return MatchCastError if context.startswith("ErrorContext(match_cast") else VMError


def is_host_shape_func(func: Any) -> bool:
    """True for a generated shape function: a host PrimFunc of buffer stores."""
    return isinstance(func, tir.PrimFunc) and func.attrs.get("tirx.is_host_func") is True


class _HeapCompiler(ScalarCompiler):
    """A size expression of a shape function, over the heap (``H[i]`` loads)."""

    def var_key(self, var: tir.Var) -> Any:
        """Shape functions read sizes from the heap only."""
        raise VMError(f"a shape function reads the shape heap only, not the variable {var.name}")

    def unknown(self, node: Any) -> Callable[[Any], Any]:
        """``H[i]``: the heap's slot i."""
        if isinstance(node, tir.BufferLoad) and len(node.indices) == 1 and isinstance(node.indices[0], tir.IntImm):
            i = int(node.indices[0].value)
            return lambda heap: int(heap[i])
        raise VMError(f"a shape function cannot compute {type(node).__name__}")


def _stores(stmt: tir.Stmt) -> list[tir.BufferStore]:
    """The buffer stores of a shape function's body."""
    if isinstance(stmt, tir.BufferStore):
        return [stmt]
    if isinstance(stmt, tir.SeqStmt):
        return [s for part in stmt.seq for s in _stores(part)]
    raise VMError(f"a shape function holds buffer stores only, not {type(stmt).__name__}")


class _ArgsCompiler(ScalarCompiler):
    """The returned expression of a ``compute_symbolic_expr`` function, over its arguments."""

    def __init__(self, params: Sequence[tir.Var]) -> None:
        self.positions = {id(p): i for i, p in enumerate(params)}

    def var_key(self, var: tir.Var) -> Any:
        """A parameter's position in the argument list."""
        if id(var) not in self.positions:
            raise VMError(f"a host function reads its parameters only, not the variable {var.name}")
        return self.positions[id(var)]


def _returned(func: tir.PrimFunc) -> tir.PrimExpr | None:
    """The expression a host function of one ``return`` returns (ComputePrimValue's), else None."""
    body = func.body
    if isinstance(body, tir.Evaluate) and isinstance(body.value, tir.Call) and len(body.value.args) == 1 \
            and intrinsic_of_op(body.value.op) is INTRINSICS["ret"]:
        return body.value.args[0]
    return None


class ShapeHeapOps:
    """The planner's methods for the shape-heap built-ins (mixed into ``vm_plan.Planner``,
    which provides ``name``, ``expr``, ``params`` and ``ctx``)."""

    name: str
    expr: Callable[[rx.Expr], Fn]
    params: dict[int, int]

    def _param(self, value: rx.Expr) -> rx.Var | None:
        """The parameter ``value`` is, if it is one (its annotation is checked on entry)."""
        return value if isinstance(value, rx.Var) and id(value) in self.params else None

    def _explainer(self, value: rx.Expr, context: str) -> list:
        """For a match_cast's check: a cell the R.match_cast binding of ``value`` planned next
        fills with its own check, so that a failure is reported as that binding's (its name,
        expected against got); empty otherwise."""
        cell: list = []
        if context.startswith("ErrorContext(match_cast") and isinstance(value, rx.Var):
            pending = self.__dict__.setdefault("pending_casts", {})
            pending.setdefault(id(value), []).append(cell)
        return cell

    def explain_match_cast(self, binding: rx.MatchCast, check: Fn) -> None:
        """Hand the R.match_cast binding's own check to the built-ins that check its value first."""
        for cell in self.__dict__.get("pending_casts", {}).pop(id(binding.value), ()):
            cell.append(check)

    def shape_builtin(self, name: str, args: Sequence[rx.Expr]) -> Fn:
        """One shape built-in of the text."""
        return getattr(self, SHAPE_BUILTINS[name])(args)

    def op_call_builtin_with_ctx(self, call: rx.Call) -> Fn:
        """``R.call_builtin_with_ctx``: a shape built-in, or a packed function on the tuple's values."""
        func, args = call.args[0], call.args[1]
        fields = args.fields if isinstance(args, rx.Tuple) else (args,)
        if isinstance(func, rx.ExternFunc) and func.global_symbol in SHAPE_BUILTINS:
            return self.shape_builtin(func.global_symbol, fields)
        if isinstance(func, rx.ExternFunc):
            return self._packed(func.global_symbol, fields, call.sinfo_args)  # type: ignore[attr-defined]
        raise VMError(f"{self.name}: R.call_builtin_with_ctx takes a packed function by name")

    def alloc_shape_heap(self, args: Sequence[rx.Expr]) -> Fn:
        """A new int64 heap of the given number of slots."""
        n, empty, int64 = _int(args[0]), np.empty, np.int64
        return lambda frame: empty(n, int64)

    def check_tensor_info(self, args: Sequence[rx.Expr]) -> Fn:
        """The value must be a tensor of the rank (-1: any) and dtype ("void": any)."""
        value, ndim, dtype, context = args[0], _int(args[1]), args[2].value, args[3].value
        p = self._param(value)
        known = p.struct_info if p is not None else None
        if isinstance(known, rx.TensorStructInfo) and known.ndim == ndim and known.dtype == dtype:
            return NO_STEP
        get, error, cell = self.expr(value), _error_class(context), self._explainer(value, context)
        np_dtype = None if dtype == "void" else np.dtype(to_numpy_dtype(dtype))

        def run(frame: Frame) -> tuple:
            x = get(frame)
            if not isinstance(x, np.ndarray):
                raise _fail(cell, frame, error(f"{context}: expected a tensor, got {value_text(x)}"))
            if ndim != -1 and x.ndim != ndim:
                raise _fail(cell, frame, error(f"{context}: expected a tensor of {ndim} dimensions, got "
                                               f"{value_text(x)}"))
            if np_dtype is not None and x.dtype != np_dtype:
                raise _fail(cell, frame, error(f"{context}: expected dtype {dtype}, got {value_text(x)}"))
            return ()

        return run

    def check_shape_info(self, args: Sequence[rx.Expr]) -> Fn:
        """The value must be a shape of the rank (-1: any)."""
        value, ndim, context = args[0], _int(args[1]), args[2].value
        p = self._param(value)
        if p is not None and isinstance(p.struct_info, rx.ShapeStructInfo) and p.struct_info.ndim == ndim:
            return NO_STEP
        get, error = self.expr(value), _error_class(context)

        def run(frame: Frame) -> tuple:
            s = get(frame)
            if not isinstance(s, tuple) or (ndim != -1 and len(s) != ndim):
                raise error(f"{context}: expected a shape of {ndim} values, got {value_text(s)}")
            return ()

        return run

    def check_prim_value_info(self, args: Sequence[rx.Expr]) -> Fn:
        """The value must be a scalar of the dtype's kind."""
        value, dtype, context = args[0], args[1].value, args[2].value
        p = self._param(value)
        if p is not None and isinstance(p.struct_info, rx.PrimStructInfo) and p.struct_info.dtype == dtype:
            return NO_STEP
        get, error = self.expr(value), _error_class(context)
        kinds = (bool,) if dtype == "bool" else (int, np.integer) if "int" in dtype else (int, float, np.number)

        def run(frame: Frame) -> tuple:
            v = get(frame)
            if not isinstance(v, kinds):
                raise error(f"{context}: expected a {dtype} scalar, got {value_text(v)}")
            return ()

        return run

    def check_tuple_info(self, args: Sequence[rx.Expr]) -> Fn:
        """The value must be a tuple of the length."""
        value, size, context = args[0], _int(args[1]), args[2].value
        p = self._param(value)
        if p is not None and isinstance(p.struct_info, rx.TupleStructInfo) and len(p.struct_info.fields) == size:
            return NO_STEP
        get, error = self.expr(value), _error_class(context)

        def run(frame: Frame) -> tuple:
            t = get(frame)
            if not isinstance(t, (tuple, list)) or len(t) != size:
                raise error(f"{context}: expected a tuple of {size} values, got {value_text(t)}")
            return ()

        return run

    def check_func_info(self, args: Sequence[rx.Expr]) -> Fn:
        """The value must be callable."""
        value, context = args[0], args[1].value
        if self._param(value) is not None and isinstance(sinfo_of(value), rx.FuncStructInfo):
            return NO_STEP
        get, error = self.expr(value), _error_class(context)

        def run(frame: Frame) -> tuple:
            f = get(frame)
            if not callable(f):
                raise error(f"{context}: expected a function, got {value_text(f)}")
            return ()

        return run

    def match_shape(self, args: Sequence[rx.Expr]) -> Fn:
        """The value's sizes (a tensor's shape or a shape's values) against constants and heap
        slots; the sizes seen first stored into the heap."""
        value, heap, ndim, context = args[0], args[1], _int(args[2]), args[-1].value
        pairs = [(_int(args[3 + 2 * i]), _int(args[4 + 2 * i])) for i in range(ndim)]
        p = self._param(value)
        if p is not None and all(k in (0, 2) for k, _ in pairs) and _states(p.struct_info, pairs):
            return NO_STEP  # the entry check compared these very sizes
        get, get_heap, error = self.expr(value), self.expr(heap), _error_class(context)
        cell = self._explainer(value, context)
        steps = tuple((i, k, v) for i, (k, v) in enumerate(pairs) if k != 2)  # in order: a size stored is then known

        def run(frame: Frame) -> tuple:
            x = get(frame)
            dims = x.shape if isinstance(x, np.ndarray) else x
            if not isinstance(dims, tuple) or len(dims) != ndim:
                raise _fail(cell, frame, error(f"{context}: expected {ndim} sizes, got {value_text(x)}"))
            h = get_heap(frame)
            for i, k, v in steps:
                if k == 1:
                    h[v] = dims[i]
                    continue
                want = v if k == 0 else int(h[v])
                if dims[i] != want:
                    raise _fail(cell, frame, error(f"{context}: size {i} is {dims[i]}, expected {want} "
                                                   f"(sizes {tuple(dims)})"))
            return ()

        return run

    def match_prim_value(self, args: Sequence[rx.Expr]) -> Fn:
        """An integer scalar against a constant or a heap slot, or stored into the heap."""
        value, heap, kind, arg, context = args[0], args[1], _int(args[2]), _int(args[3]), args[4].value
        p = self._param(value)
        if p is not None and kind != 1 and isinstance(p.struct_info, rx.PrimStructInfo) \
                and p.struct_info.value is not None:
            return NO_STEP  # the entry check compared the parameter with its annotation's value
        get, get_heap, error = self.expr(value), self.expr(heap), _error_class(context)
        cell = self._explainer(value, context)

        def run(frame: Frame) -> tuple:
            v, h = get(frame), get_heap(frame)
            if kind == 1:
                h[arg] = v
            elif kind in (0, 3):
                want = arg if kind == 0 else int(h[arg])
                if v != want:
                    raise _fail(cell, frame, error(f"{context}: the value is {v}, expected {want}"))
            return ()

        return run

    def make_shape(self, args: Sequence[rx.Expr]) -> Fn:
        """A shape of constants and heap slots."""
        get_heap, ndim = self.expr(args[0]), _int(args[1])
        pairs = tuple((_int(args[2 + 2 * i]), _int(args[3 + 2 * i])) for i in range(ndim))

        def run(frame: Frame) -> tuple:
            h = get_heap(frame)
            return tuple(v if k == 0 else int(h[v]) for k, v in pairs)

        return run

    def make_prim_value(self, args: Sequence[rx.Expr]) -> Fn:
        """An integer from the heap (kind 1, the slot) or a constant (kind 0)."""
        get_heap, kind, arg = self.expr(args[0]), _int(args[1]), _int(args[2])
        if kind == 0:
            return lambda frame: arg
        return lambda frame: int(get_heap(frame)[arg])

    def host_shape_func(self, func: tir.PrimFunc, args: Sequence[rx.Expr]) -> Fn:
        """A generated shape function on the heap: its stores, computed in order (a
        ``compute_symbolic_expr`` function: its returned value, from the arguments' values)."""
        returned = _returned(func)
        if returned is not None:
            value, arg_fns = _ArgsCompiler(func.params).compile(returned), tuple(self.expr(a) for a in args)
            return lambda frame: value([fn(frame) for fn in arg_fns])
        compiler = _HeapCompiler()
        steps = tuple((int(s.indices[0].value), compiler.compile(s.value)) for s in _stores(func.body))
        get_heap = self.expr(args[0])

        def run(frame: Frame) -> tuple:
            h = get_heap(frame)
            for slot, fn in steps:
                h[slot] = fn(h)
            return ()

        return run


def _states(sinfo: rx.StructInfo, pairs: list) -> bool:
    """True when the annotation states exactly the constant sizes of ``pairs``."""
    dims = sinfo.shape if isinstance(sinfo, rx.TensorStructInfo) else getattr(sinfo, "values", None)
    if dims is None or len(dims) != len(pairs):
        return False
    return all(k == 2 or (isinstance(d, tir.IntImm) and int(d.value) == v) for d, (k, v) in zip(dims, pairs))


# The built-in name -> planner method.
SHAPE_BUILTINS = {
    "vm.builtin.alloc_shape_heap": "alloc_shape_heap",
    "vm.builtin.check_tensor_info": "check_tensor_info",
    "vm.builtin.check_shape_info": "check_shape_info",
    "vm.builtin.check_prim_value_info": "check_prim_value_info",
    "vm.builtin.check_tuple_info": "check_tuple_info",
    "vm.builtin.check_func_info": "check_func_info",
    "vm.builtin.match_shape": "match_shape",
    "vm.builtin.make_shape": "make_shape",
    "vm.builtin.make_prim_value": "make_prim_value",
    "vm.builtin.match_prim_value": "match_prim_value",
}
