"""FuseTIR (TVM's ``relax.transform.FuseTIR``): turn each ``Primitive`` Relax function made by
FuseOps into one PrimFunc, call it with ``R.call_tir``, and drop what is no longer used.

The PrimFunc of a group ``fused_matmul_add_relu`` keeps the group's name and:

- takes one buffer per tensor parameter, named after the Relax parameter, through a handle
  ``p_<name>`` (printed ``p_x: T.handle`` + ``x = T.match_buffer(p_x, ...)`` when the shape is
  symbolic, ``x: T.Buffer(...)`` otherwise), then one handle ``p_output<i>`` per result, then
  the symbolic variables passed as a shape or a PrimValue;
- runs the bodies of the called PrimFuncs one after the other in a root block that allocates
  every intermediate result as ``<the callee's output buffer>_intermediate`` (results write to
  the output buffers instead), with duplicate block names made unique (``T_add_1``);
- has the attributes ``{"tir.noalias": True}`` (the callees' ``op_pattern`` is not kept).

Primitive functions that are not a chain of ``call_tir`` (plain op calls, constants,
``match_cast``, in-place results) are left as they are. Afterwards DeadCodeElimination removes the
Primitive functions and the PrimFuncs only they called, as TVM's FuseTIR does.
"""
from __future__ import annotations

from typing import Any

from ..ir import relax as rx
from ..ir import tir
from ..ir.expr_functor import ExprMutator, ExprVisitor
from ..ir.module import GlobalVar, IRModule
from ..ir.node import Map, replace
from ..ir.op import make_call
from ..ir.stmt_functor import StmtExprMutator
from ..ir.struct_info import sinfo_of
from .dead_code import DeadCodeElimination
from .fuse_ops import Rebinder, is_primitive
from .infra import ModulePass, PassContext, register_pass

__all__ = ["FuseTIR", "fuse_primitive"]


class _Unfusable(Exception):
    """The Primitive function is not a chain of call_tir; it is left unfused."""


def _data_var(name: str, dtype: str, scope: str = "global") -> tir.Var:
    """The data pointer of a new buffer."""
    return tir.Var(name, "handle", tir.PointerType(dtype, scope))


def _is_static(buf: tir.Buffer) -> bool:
    """True when the buffer's shape has no symbolic variable."""
    return all(isinstance(d, tir.IntImm) for d in buf.shape)


def _handle_param(name: str, buf: tir.Buffer) -> tir.Var:
    """The parameter that passes ``buf``: a static buffer's handle carries its pointer type, as a
    parsed ``x: T.Buffer(...)`` parameter does, so the printed text parses back to the same IR."""
    ptr = tir.PointerType(buf.dtype, buf.scope) if _is_static(buf) else None
    return tir.Var(name, "handle", ptr)


def _match(inner: tir.PrimExpr, outer: tir.PrimExpr, var_map: dict[tir.Var, Any]) -> None:
    """Bind the callee's symbolic variables in ``inner`` to the caller's ``outer`` (TVM's
    SymbolicMatcher); constants must agree."""
    if inner is outer:
        return
    if isinstance(inner, tir.Var):
        known = var_map.get(inner)
        if known is None:
            var_map[inner] = outer
        elif known is not outer and not (isinstance(known, tir.IntImm) and isinstance(outer, tir.IntImm)
                                         and known.value == outer.value):
            raise _Unfusable(f"{inner.name} is bound to two different values")
    elif isinstance(inner, tir.IntImm):
        if isinstance(outer, tir.IntImm) and outer.value != inner.value:
            raise _Unfusable(f"buffer extent {inner.value} does not match {outer.value}")
    elif isinstance(inner, tir.BinaryOp) and type(inner) is type(outer):
        _match(inner.a, outer.a, var_map)
        _match(inner.b, outer.b, var_map)


def _bind_shape(inner: tir.Buffer, shape: tuple, var_map: dict[tir.Var, Any]) -> None:
    """Match the callee buffer's symbolic shape against the fused buffer's ``shape``."""
    if len(inner.shape) != len(shape):
        raise _Unfusable(f"buffer {inner.name} has {len(inner.shape)} dimensions, its argument {len(shape)}")
    for a, b in zip(inner.shape, shape):
        _match(a, b, var_map)


def _intermediate_name(base: str, taken: set[str]) -> str:
    """``<base>_intermediate``, suffixed until no allocated buffer has the name (as TVM does)."""
    name = base + "_intermediate"
    counter = 0
    while name in taken:
        counter += 1
        name = f"{name}_{counter}"
    return name


class _BlockNameDedup(StmtExprMutator):
    """Makes block names unique within the fused body: ``T_add``, ``T_add_1``, ..."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}

    def visit_block_(self, block: tir.Block) -> tir.Block:
        """Rename after the nested blocks (TVM's order)."""
        block = super().visit_block_(block)
        prefix = name = block.name_hint
        while name in self.count:
            self.count[prefix] += 1
            name = f"{prefix}_{self.count[prefix]}"
        self.count[name] = 0
        return block if name == block.name_hint else replace(block, name_hint=name)


class _CalleeRewriter(Rebinder):
    """One callee's body as the fused body holds it, in one walk: its parameter buffers replaced by
    the fused buffers (taken as they are), its variables bound by the call replaced by their values,
    every other variable and buffer a fresh copy (so a PrimFunc called twice defines them twice),
    and a block reading one fused buffer through two callee buffers listing it once (TVM's
    UnionAccessRegion)."""

    def __init__(self, var_map: dict[tir.Var, Any], buffer_map: dict[tir.Buffer, tir.Buffer]) -> None:
        super().__init__(var_map, buffer_map, renew_all=True)

    def visit_buffer_(self, buf: tir.Buffer) -> tir.Buffer:
        """A fused buffer for a parameter; else a fresh copy."""
        target = self.buffer_map.get(buf)
        if target is not None:
            return target
        return super().visit_buffer_(buf)

    def visit_block_(self, block: tir.Block) -> tir.Block:
        """Substitute, then keep the first region of each buffer."""
        new = self.generic_visit(block)

        def union(regions: tuple) -> tuple:
            seen: set[int] = set()
            out = []
            for r in regions:
                if id(r.buffer) not in seen:
                    seen.add(id(r.buffer))
                    out.append(r)
            return tuple(out) if len(out) != len(regions) else regions

        reads, writes = union(new.reads), union(new.writes)
        if reads is new.reads and writes is new.writes:
            return new
        return replace(new, reads=reads, writes=writes)


class _FusedTIRBuilder(ExprVisitor):
    """Builds the PrimFunc of one Primitive Relax function (TVM's FusedTIRConstructor)."""

    def __init__(self, mod: IRModule) -> None:
        self.mod = mod
        self.buffers: dict[int, list[tir.Buffer]] = {}  # id(relax expr) -> the buffers holding it
        self._keep: list[Any] = []  # keeps keyed exprs alive so their ids stay unique
        self.params: list[tir.Var] = []
        self.scalar_params: list[tir.Var] = []
        self.buffer_map: dict[tir.Var, tir.Buffer] = {}
        self.allocs: list[tir.Buffer] = []
        self.bodies: list[tir.Stmt] = []

    def set_buffers(self, expr: rx.Expr, buffers: list[tir.Buffer]) -> None:
        """Record which buffers hold the value of ``expr``."""
        self.buffers[id(expr)] = buffers
        self._keep.append(expr)

    def buffers_of(self, expr: rx.Expr) -> list[tir.Buffer]:
        """The buffers holding ``expr``."""
        found = self.buffers.get(id(expr))
        if found is None:
            raise _Unfusable(f"no buffer holds {type(expr).__name__}")
        return found

    # ---- the function
    def build(self, func: rx.Function) -> tir.PrimFunc:
        """The fused PrimFunc."""
        scopes = self._callee_scopes(func)
        for param in func.params:
            sinfo = param.struct_info
            if isinstance(sinfo, rx.TensorStructInfo):
                if sinfo.shape is None or sinfo.dtype == "void":
                    raise _Unfusable(f"parameter {param.name_hint} has no known shape and dtype")
                scope, separators = scopes.get(id(param), ("global", ()))
                buf = tir.Buffer(param.name_hint, _data_var(param.name_hint, sinfo.dtype, scope), sinfo.dtype,
                                 tuple(sinfo.shape), scope=scope, axis_separators=separators)
                var = _handle_param("p_" + buf.name, buf)
                self.params.append(var)
                self.buffer_map[var] = buf
                self.set_buffers(param, [buf])
            elif isinstance(sinfo, rx.ShapeStructInfo) and sinfo.values is not None:
                self.scalar_params.extend(self._scalar_vars(sinfo.values))
            elif isinstance(sinfo, rx.PrimStructInfo) and sinfo.value is not None:
                self.scalar_params.extend(self._scalar_vars((sinfo.value,)))
            else:
                raise _Unfusable(f"parameter {param.name_hint} is neither a tensor nor a shape")
        self.visit_expr(func.body)
        outputs = self.buffers_of(func.body.body)
        inputs = {id(b) for b in self.buffer_map.values()}
        for i, buf in enumerate(outputs):
            if id(buf) in inputs:
                raise _Unfusable("a result is computed in place of an argument")
            var = _handle_param(f"p_output{i}", buf)
            self.params.append(var)
            self.buffer_map[var] = buf
        return self._construct(outputs)

    @staticmethod
    def _scalar_vars(values: Any) -> list[tir.Var]:
        """The variables of a shape or PrimValue parameter (each must be a single variable)."""
        if not all(isinstance(v, tir.Var) for v in values):
            raise _Unfusable("a shape parameter holds an expression, not a variable")
        return list(values)

    def _callee_scopes(self, func: rx.Function) -> dict[int, tuple[str, tuple[int, ...]]]:
        """The storage scope and axis separators of the callee buffer each parameter is passed to."""
        found: dict[int, tuple[str, tuple[int, ...]]] = {}
        for block in func.body.blocks:
            for binding in block.bindings:
                value = getattr(binding, "value", None)
                if not (isinstance(value, rx.Call) and isinstance(value.op, rx.Op)
                        and value.op.name == "relax.call_tir" and isinstance(value.args[1], rx.Tuple)):
                    continue
                callee = self.mod[value.args[0]] if value.args[0].name_hint in self.mod else None
                if not isinstance(callee, tir.PrimFunc):
                    continue
                for arg, p in zip(value.args[1].fields, callee.params):
                    buf = callee.buffer_map.get(p)
                    if buf is not None:
                        found.setdefault(id(arg), (buf.scope, buf.axis_separators))
        return found

    # ---- bindings and values
    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """The variable is held by its value's buffers."""
        self.visit_expr(binding.value)
        self.set_buffers(binding.var, self.buffers_of(binding.value))

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        raise _Unfusable("match_cast in a primitive function")

    def visit_constant_(self, const: rx.Constant) -> None:
        raise _Unfusable("a constant in a primitive function")

    def visit_var_(self, var: rx.Var) -> None:
        """Variables were bound to their buffers where they were defined."""

    visit_dataflow_var_ = visit_var_

    def visit_tuple_(self, tup: rx.Tuple) -> None:
        """A tuple is held by its fields' buffers, in order."""
        super().visit_tuple_(tup)
        self.set_buffers(tup, [b for f in tup.fields for b in self.buffers.get(id(f), [])])

    def visit_tuple_getitem_(self, item: rx.TupleGetItem) -> None:
        """An item is held by its share of the tuple's buffers."""
        super().visit_tuple_getitem_(item)
        fields = sinfo_of(item.tuple_value)
        if not isinstance(fields, rx.TupleStructInfo):
            raise _Unfusable("an item of something that is not a tuple")
        sizes = [_tensor_count(f) for f in fields.fields]
        begin = sum(sizes[:item.index])
        self.set_buffers(item, self.buffers_of(item.tuple_value)[begin:begin + sizes[item.index]])

    def visit_call_(self, call: rx.Call) -> None:
        """A call_tir: its callee's body joins the fused body, reading the buffers of its
        arguments and writing new intermediate buffers."""
        if not (isinstance(call.op, rx.Op) and call.op.name == "relax.call_tir"):
            raise _Unfusable(f"the primitive function calls {getattr(call.op, 'name', call.op)!r}, not call_tir")
        gvar = call.args[0]
        callee = self.mod[gvar] if isinstance(gvar, GlobalVar) and gvar.name_hint in self.mod else None
        if not isinstance(callee, tir.PrimFunc):
            raise _Unfusable("call_tir of something that is not a PrimFunc of the module")
        root = callee.body
        if not (isinstance(root, tir.BlockRealize) and root.block.name_hint == "root" and not root.iter_values):
            raise _Unfusable(f"{gvar.name_hint} is not schedulable (its body is not a root block)")

        # What the call binds: the callee's buffer parameters to the fused buffers, its symbolic
        # sizes (and tir_vars parameters) to the fused values.
        var_map: dict[tir.Var, Any] = {}
        buffer_map: dict[tir.Buffer, tir.Buffer] = {}
        args = call.args[1].fields if isinstance(call.args[1], rx.Tuple) else (call.args[1],)
        buffer_params = [p for p in callee.params if p in callee.buffer_map]
        position = 0
        for arg in args:
            for target in self.buffers_of(arg):
                inner = callee.buffer_map[buffer_params[position]]
                _bind_shape(inner, target.shape, var_map)
                buffer_map[inner] = target
                position += 1
        out_sinfo = call.sinfo_args[0] if call.sinfo_args else sinfo_of(call)
        shapes = [f.shape for f in (out_sinfo.fields if isinstance(out_sinfo, rx.TupleStructInfo) else (out_sinfo,))]
        out_params = list(zip(shapes, buffer_params[position:]))
        for shape, param in out_params:
            if shape is None:
                raise _Unfusable("a call_tir result has no known shape")
            _bind_shape(callee.buffer_map[param], tuple(shape), var_map)
        if len(call.args) > 2:  # tir_vars: the callee's trailing scalar parameters
            values = call.args[2].values if isinstance(call.args[2], rx.ShapeExpr) else ()
            scalars = [p for p in callee.params if p not in callee.buffer_map]
            for param, value in zip(scalars[len(scalars) - len(values):], values):
                _match(param, value, var_map)

        # The results: new intermediate buffers (the callee's output buffers, renamed and sized),
        # allocated after the callee's own buffers.
        taken = {b.name for b in self.allocs} | {b.name for b in root.block.alloc_buffers}
        fresh = []
        for _, param in out_params:
            inner = callee.buffer_map[param]
            name = _intermediate_name(inner.name, taken)
            taken.add(name)
            fresh.append((inner, name, _data_var(name, inner.dtype, inner.scope)))
        for src, dst in buffer_map.items():
            var_map[src.data] = dst.data
        for inner, _, data in fresh:
            var_map[inner.data] = data
        rewriter = _CalleeRewriter(var_map, buffer_map)
        self.allocs.extend(rewriter.visit(b) for b in root.block.alloc_buffers)
        outputs: list[tir.Buffer] = []
        for (shape, _), (inner, name, data) in zip(out_params, fresh):
            base = rewriter.generic_visit(inner)  # its other fields in the fused variables
            buf = replace(base, name=name, data=data, shape=tuple(shape))
            self.allocs.append(buf)
            outputs.append(buf)
            rewriter.buffer_map[inner] = buf
        self.bodies.append(rewriter.visit(root.block.body))
        self.set_buffers(call, outputs)

    # ---- the PrimFunc
    def _construct(self, outputs: list[tir.Buffer]) -> tir.PrimFunc:
        """The callees' bodies (rewritten per call) in one root block."""
        out_ids = {id(b) for b in outputs}
        allocs = tuple(b for b in self.allocs if id(b) not in out_ids)
        body = _BlockNameDedup().visit_stmt(tir.seq(self.bodies))
        root = tir.Block("root", (), (), (), body, alloc_buffers=allocs)
        realize = tir.BlockRealize((), tir.IntImm("bool", 1), root)
        params = tuple(self.params + self.scalar_params)
        return tir.PrimFunc(params, realize, None, Map(self.buffer_map.items()), Map({"tir.noalias": True}))


def _tensor_count(sinfo: rx.StructInfo) -> int:
    """How many buffers hold a value of ``sinfo`` (tuples flattened)."""
    if isinstance(sinfo, rx.TupleStructInfo):
        return sum(_tensor_count(f) for f in sinfo.fields)
    return 1


def fuse_primitive(mod: IRModule, gvar: GlobalVar) -> tir.PrimFunc | None:
    """The PrimFunc of the Primitive Relax function ``gvar``, or None when it cannot be fused."""
    try:
        return _FusedTIRBuilder(mod).build(mod[gvar])
    except _Unfusable:
        return None


class _CallRewriter(ExprMutator):
    """Replaces calls of fused Primitive functions by ``R.call_tir`` of their PrimFuncs."""

    def __init__(self, replacements: dict[str, GlobalVar]) -> None:
        super().__init__()
        self.replacements = replacements

    def visit_call_(self, call: rx.Call) -> rx.Expr:
        """A call of a fused function: its tensor arguments in a tuple, shapes as tir_vars."""
        call = self.visit_expr_post_order(call)
        if not isinstance(call.op, GlobalVar) or call.op.name_hint not in self.replacements:
            return call
        tensors: list[rx.Expr] = []
        scalars: list[tir.PrimExpr] = []
        for arg in call.args:
            sinfo = sinfo_of(arg)
            if isinstance(sinfo, rx.ShapeStructInfo):
                scalars.extend(sinfo.values or ())
            elif isinstance(sinfo, rx.PrimStructInfo):
                scalars.append(sinfo.value)
            else:
                tensors.append(arg)
        args: tuple = (self.replacements[call.op.name_hint], rx.Tuple(tuple(tensors)))
        if scalars:
            args += (rx.ShapeExpr(tuple(scalars)),)
        return make_call("relax.call_tir", args, sinfo_args=(sinfo_of(call),), span=call.span)


class FuseTIR(ModulePass):
    """Merge each fused group's PrimFuncs into one PrimFunc called by ``R.call_tir``."""

    opt_level = 0

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        fused: dict[str, tir.PrimFunc] = {}
        for gvar, func in mod.functions_items():
            if is_primitive(func):
                prim = fuse_primitive(mod, gvar)
                if prim is not None:
                    fused[gvar.name_hint] = prim
        if not fused:
            # As TVM's FuseTIR (a Sequential ending in DeadCodeElimination): functions left
            # unused by earlier passes (FoldConstant's folded call_tir callees) go too.
            return DeadCodeElimination().transform_module(mod, ctx)
        replacements: dict[str, GlobalVar] = {}
        for name, prim in fused.items():
            mod.remove(name)
            replacements[name] = GlobalVar(name)
            mod[replacements[name]] = prim
        for gvar, func in mod.functions_items():
            if isinstance(func, rx.Function):
                new = _CallRewriter(replacements).visit_expr(func)
                if new is not func:
                    mod.update_func(gvar, new)
        self.stats["fused_functions"] += len(fused)
        # The Primitive functions and the PrimFuncs only they called are unused now.
        return DeadCodeElimination().transform_module(mod, ctx)


register_pass("FuseTIR", FuseTIR)
