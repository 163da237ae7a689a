"""FoldConstant (TVM's ``relax.transform.FoldConstant``): compute at compile time what only
depends on constants, and put the results in the IR as ``relax.Constant``s.

As in TVM, in every Relax function:

- ``R.call_tir`` of a module PrimFunc whose tensor arguments are all constants and whose result
  is one tensor of known shape is run, and the call becomes the result (anywhere in the
  function); a ``tir_vars`` shape of integer literals gives the PrimFunc's scalar parameters
  (an extension: TVM folds calls without ``tir_vars`` only);
- a call of a registered, pure op inside a dataflow block is legalized (the registry's
  ``legalize`` slot, the very PrimFunc ``LegalizeOps`` would make) and folded when that gives
  such a ``call_tir`` of constants; the PrimFunc is built on a scratch builder, so nothing of
  it enters the module. This covers creation ops too: ``R.zeros((2, 3))`` folds;
- a variable bound to a constant is replaced by the constant at every use, so chains fold
  transitively, and a variable bound to a shape literal (``R.shape([16, 16])``) is replaced by
  it in op arguments (TVM's shape propagation);
- afterwards the bindings nobody uses are removed (TVM's ``RemoveAllUnused``).

Calls that differ only in the values of their tensor constants (the BN folding and weight packing
of every convolution of a network) share one legalization (``legalize_key.call_key``).

Calls that cannot be evaluated (an intrinsic the evaluator lacks, a tuple result, an unknown
shape, an impure op, a non-constant argument) stay as they are. PrimFuncs whose only callers were
folded stay in the module, as in TVM (``FuseTIR`` and ``DeadCodeElimination`` drop them).

The pass is opt_level 2, as Relay's in TVM's pass-infrastructure tutorial (TVM's Relax pass is opt_level 0, so under
``PassContext(opt_level=1)`` it is skipped here). The evaluation is
``tvmlite.te.evaluate_prim_func`` (numpy), the one place a pass evaluates. PassContext config
``"relax.FoldConstant.max_elements"`` (default 2**24) skips calls whose result or whose
evaluation grid (the iterations of one block) would exceed that many elements.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.block_builder import BlockBuilder
from ..ir.dtype import to_numpy_dtype
from ..ir.expr_functor import ExprMutator, remove_all_unused
from ..ir.module import GlobalVar, IRModule
from ..ir.op import find_op_def
from ..ir.stmt_functor import StmtExprVisitor
from ..ir.struct_info import has_known_shapes, sinfo_of, static_shape
from ..te.evaluate import eval_expr, evaluate_prim_func
from .infra import FunctionPass, PassContext, register_pass
from .legalize_key import arg_positions, call_key, flat_args

__all__ = ["FoldConstant", "MAX_ELEMENTS_CONFIG", "DEFAULT_MAX_ELEMENTS"]

MAX_ELEMENTS_CONFIG = "relax.FoldConstant.max_elements"
DEFAULT_MAX_ELEMENTS = 1 << 24


class _IterationSpace(StmtExprVisitor):
    """The largest number of iterations of one block (the grid the evaluator materialises)."""

    def __init__(self, env: dict[int, Any]) -> None:
        self.env = env
        self.current = 1
        self.largest = 1

    def visit_for_(self, loop: tir.For) -> None:
        """Multiply by the loop's extent while inside it."""
        extent = int(eval_expr(loop.extent, self.env, _no_loads))
        outer = self.current
        self.current = outer * max(extent, 0)
        self.visit_stmt(loop.body)
        self.current = outer

    def visit_block_realize_(self, realize: tir.BlockRealize) -> None:
        """A block runs once per iteration of the loops around it."""
        self.largest = max(self.largest, self.current)
        super().visit_block_realize_(realize)


def _no_loads(buf: tir.Buffer, indices: tuple) -> Any:
    """Loop extents that read buffers cannot be bounded statically."""
    raise ValueError(f"a loop extent reads the buffer {buf.name}")


def _size_env(func: tir.PrimFunc, shapes: Sequence[tuple[int, ...]], scalars: Sequence[int]) -> dict[int, Any]:
    """The values of the PrimFunc's symbolic sizes, from its buffer shapes and scalar parameters."""
    env: dict[int, Any] = {}
    buffers = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    for buf, shape in zip(buffers, shapes):
        for dim, value in zip(buf.shape, shape):
            if isinstance(dim, tir.Var):
                env[id(dim)] = np.array(value, dtype=to_numpy_dtype(dim.dtype))
    scalar_params = [p for p in func.params if p not in func.buffer_map]
    for p, value in zip(scalar_params, scalars):
        env[id(p)] = np.array(value, dtype=to_numpy_dtype(p.dtype))
    return env


class _Legalized:
    """One legalization of an op call on constants, reusable for calls that differ only in the
    values of their tensor constants: the PrimFunc, which flat argument feeds each of its inputs,
    its ``tir_vars`` values and its result's struct info."""

    def __init__(self, func: tir.PrimFunc | None, positions: list[int] | None,
                 scalars: list[int], out_sinfo: rx.TensorStructInfo | None) -> None:
        self.func, self.positions = func, positions
        self.scalars, self.out_sinfo = scalars, out_sinfo


def _constant_tensors(arg: rx.Expr) -> bool:
    """Whether every tensor ``arg`` holds (itself, or the fields of a tuple) is a constant."""
    if isinstance(arg, rx.Tuple):
        return all(_constant_tensors(f) for f in arg.fields)
    return isinstance(arg, rx.Constant) or not isinstance(sinfo_of(arg), (rx.TensorStructInfo, rx.TupleStructInfo))


class _ConstantFolder(ExprMutator):
    """Replaces calls on constants by their values (see the module doc)."""

    def __init__(self, mod: IRModule, max_elements: int, stats: Counter) -> None:
        super().__init__(mod)
        self.mod = mod
        self.max_elements = max_elements
        self.stats = stats
        # The 20 convolutions of a ResNet fold the same small ops on same-shaped constants:
        # one legalization (TE, create_prim_func) per distinct call, and one bound on its grid.
        self._legalized: dict[Any, _Legalized] = {}
        self._keyed: list[rx.Call] = []
        self._grids: dict[tuple, tuple[tir.PrimFunc, int]] = {}

    # ---- uses of variables
    def visit_var_(self, var: rx.Var) -> rx.Expr:
        """A variable bound to a constant is the constant itself."""
        new = super().visit_var_(var)
        bound = self.lookup_binding(new) if isinstance(new, rx.Var) else None
        return bound if isinstance(bound, rx.Constant) else new

    visit_dataflow_var_ = visit_var_

    # ---- calls
    def visit_call_(self, call: rx.Call) -> rx.Expr:
        """The call with folded arguments, or its value when it can be computed now."""
        call = self.visit_expr_post_order(call)
        if not isinstance(call, rx.Call) or not isinstance(call.op, rx.Op):
            return call
        if call.op.name == "relax.call_tir":
            return self._fold_call_tir(call, self.mod) or call
        call = self._inline_shapes(call)
        # Ops fold inside dataflow blocks only, as in TVM (ordinary blocks may have effects in order).
        if not self.builder_.current_block_is_dataflow():
            return call
        return self._fold_op(call) or call

    def _inline_shapes(self, call: rx.Call) -> rx.Call:
        """``call`` with arguments bound to shape literals replaced by the literals."""
        args = []
        for arg in call.args:
            bound = self.lookup_binding(arg) if isinstance(arg, rx.Var) else None
            args.append(bound if isinstance(bound, rx.ShapeExpr) else arg)
        if all(a is b for a, b in zip(args, call.args)):
            return call
        return self.builder_.normalize(rx.Call(call.op, tuple(args), call.attrs, call.sinfo_args, span=call.span))

    def _fold_op(self, call: rx.Call) -> rx.Constant | None:
        """The value of an op call, through its legalization, when that is a call_tir of constants."""
        opdef = find_op_def(call.op)
        if opdef.legalize is None or not opdef.pure:
            return None
        # Legalizations generate loops from the shapes; a tuple or unknown-shape result never folds.
        if static_shape(sinfo_of(call)) is None or not all(has_known_shapes(sinfo_of(a)) for a in call.args):
            return None
        names = opdef.inputs + opdef.inputs[-1:] * max(0, len(call.args) - len(opdef.inputs))  # variadic
        if not all(_constant_tensors(a) for a, name in zip(call.args, names) if name not in opdef.shape_only_inputs):
            return None  # a value computed at run time: nothing to evaluate now (no need to legalize)
        key = call_key(call)
        entry = self._legalized.get(key) if key is not None else None
        if entry is None:
            entry = self._legalize(call, opdef)
            if key is not None:
                self._legalized[key] = entry
                self._keyed.append(call)  # a symbolic size in a key counts by id: keep it alive
        if entry.func is None:
            return None
        if entry.positions is None:  # not reusable: this call's own legalization
            parts = self._legalize_parts(call, opdef)
            return None if parts is None else self._evaluate(*parts)
        flat = flat_args(call.args)
        return self._evaluate(entry.func, [flat[i] for i in entry.positions], entry.scalars, entry.out_sinfo)

    def _legalize_parts(self, call: rx.Call, opdef: Any
                        ) -> tuple[tir.PrimFunc, list[rx.Constant], list[int], rx.TensorStructInfo] | None:
        """What ``_call_tir_parts`` gives of the legalization of ``call`` (None when that is not a
        call_tir of constants)."""
        scratch = BlockBuilder()  # the generated PrimFunc lives here, never in the module
        scratch.begin_dataflow_block()
        legalized = scratch.normalize(opdef.legalize(scratch, call))
        if not (isinstance(legalized, rx.Call) and isinstance(legalized.op, rx.Op)
                and legalized.op.name == "relax.call_tir"):
            return None
        return self._call_tir_parts(legalized, scratch.get())

    def _legalize(self, call: rx.Call, opdef: Any) -> _Legalized:
        """The legalization of ``call`` as a cache entry: no function when it is not a call_tir of
        constants, no positions when its inputs are not each one argument of the call."""
        parts = self._legalize_parts(call, opdef)
        if parts is None:
            return _Legalized(None, None, [], None)
        func, args, scalars, out_sinfo = parts
        return _Legalized(func, arg_positions(call, args), scalars, out_sinfo)

    def _call_tir_parts(self, call: rx.Call, mod: IRModule
                        ) -> tuple[tir.PrimFunc, list[rx.Constant], list[int], rx.TensorStructInfo] | None:
        """The callee, constant arguments, ``tir_vars`` values and result struct info of
        ``R.call_tir`` of a PrimFunc of ``mod`` on constants with one result of known shape; None
        for any other call."""
        callee = call.args[0]
        func = mod[callee.name_hint] if isinstance(callee, GlobalVar) and callee.name_hint in mod else None
        if not isinstance(func, tir.PrimFunc) or len(call.sinfo_args) != 1:
            return None
        args = call.args[1].fields if isinstance(call.args[1], rx.Tuple) else None
        if args is None or not all(isinstance(a, rx.Constant) for a in args):
            return None
        out_sinfo = call.sinfo_args[0]
        if static_shape(out_sinfo) is None:  # a tuple of outputs is not folded (as TVM)
            return None
        scalars: list[int] = []
        if len(call.args) > 2:
            values = call.args[2].values if isinstance(call.args[2], rx.ShapeExpr) else None
            if values is None or not all(isinstance(v, tir.IntImm) for v in values):
                return None
            scalars = [int(v.value) for v in values]
        return func, list(args), scalars, out_sinfo

    def _fold_call_tir(self, call: rx.Call, mod: IRModule) -> rx.Constant | None:
        """The result of ``R.call_tir`` when its callee is a PrimFunc of ``mod`` and its tensor
        arguments are constants; None otherwise."""
        parts = self._call_tir_parts(call, mod)
        return None if parts is None else self._evaluate(*parts)

    def _evaluate(self, func: tir.PrimFunc, args: list[rx.Constant], scalars: list[int],
                  out_sinfo: rx.TensorStructInfo) -> rx.Constant | None:
        """``func`` run on the constants ``args``, as a constant of ``out_sinfo``; None when it is
        too large or the evaluator cannot run it."""
        shape = static_shape(out_sinfo)
        inputs = [a.data for a in args]
        try:
            grid_key = (id(func), tuple(a.shape for a in inputs), shape, tuple(scalars))
            grid = self._grids.get(grid_key)
            if grid is None:  # the function is kept with its bound: its id stays its own
                space = _IterationSpace(_size_env(func, [a.shape for a in inputs] + [shape], scalars))
                space.visit_stmt(func.body)
                grid = self._grids[grid_key] = (func, space.largest)
            if max(grid[1], int(np.prod(shape, dtype=np.int64))) > self.max_elements:
                self.stats["too_large"] += 1
                return None
            (out,) = evaluate_prim_func(func, inputs, scalars, [shape])
        except (NotImplementedError, ValueError):
            # What the evaluator cannot run stays a call (TVM skips PrimFuncs it cannot build).
            self.stats["not_evaluated"] += 1
            return None
        self.stats["folded"] += 1
        # The evaluator allocated ``out`` for this call alone: no copy (rank kept).
        return rx.Constant(np.asarray(out, dtype=to_numpy_dtype(out_sinfo.dtype)))


def fold_constant(func: rx.Function, mod: IRModule, max_elements: int = DEFAULT_MAX_ELEMENTS,
                  stats: Counter | None = None) -> rx.Function:
    """``func`` with its constant computations folded and its unused bindings removed."""
    folder = _ConstantFolder(mod, max_elements, stats if stats is not None else Counter())
    return remove_all_unused(folder.visit_expr(func), mod)


class FoldConstant(FunctionPass):
    """Evaluate calls whose tensor inputs are all constants into ``relax.Constant``s."""

    opt_level = 2

    def transform_function(self, func: rx.Function, mod: IRModule, ctx: PassContext) -> rx.Function:
        max_elements = int(ctx.config.get(MAX_ELEMENTS_CONFIG, DEFAULT_MAX_ELEMENTS))
        return fold_constant(func, mod, max_elements, self.stats)


register_pass("FoldConstant", FoldConstant)
