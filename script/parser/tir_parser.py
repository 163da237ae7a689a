"""``@T.prim_func`` bodies to ``tir.PrimFunc``: parameters and buffers, loops, blocks (axes,
regions, init, the implicit root block), stores, lets, asserts and the ``T.*`` statements."""
from __future__ import annotations

from typing import Any, Callable

from ...ir import tir
from ...ir.dtype import is_valid_dtype, parse_dtype
from ...ir.intrinsics import INTRINSICS
from ...ir.module import GlobalVar
from ...ir.node import Map, Span
from ...ir.regions import infer_access_regions
from ..syntax import nodes as ast
from .context import ParseContext
from .exprs import Sig, describe, handles
from .scope import Scope
from .tir_buffers import TirBuffers, _Scoped
from .tir_exprs import TirEvaluator, _minus, cast
from .values import Macro, Namespace
from ..printer.analysis import inline_params

__all__ = ["TirParser"]

_TRUE = tir.IntImm("bool", 1)
_ZERO_EVAL = tir.IntImm("int32", 0)
_ITER_KINDS = {"S": tir.IterType.DataPar, "R": tir.IterType.CommReduce, "O": tir.IterType.Opaque}


class _Wrap:
    """A statement that scopes over the rest of its sequence (``x: T.int32 = v``, ``assert``,
    ``D = T.decl_buffer(...)``): ``make(rest)`` builds it around the remaining statements."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[tir.Stmt], tir.Stmt]) -> None:
        self.make = make


class _MetaVar:
    """The value of ``T.meta_var(v)``, which its assignment binds by name (no LetStmt)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Frame:
    """What a ``with T.block(...)`` collects while its body is parsed (the function's root
    frame collects the function-level ``T.alloc_buffer``s)."""

    __slots__ = ("name", "iter_vars", "iter_values", "reads", "writes", "where", "annotations",
                 "alloc_buffers", "match_buffers", "init")

    def __init__(self, name: str) -> None:
        self.name = name
        self.iter_vars: list[tir.IterVar] = []
        self.iter_values: list[tir.PrimExpr] = []
        self.reads: tuple[tir.BufferRegion, ...] | None = None
        self.writes: tuple[tir.BufferRegion, ...] | None = None
        self.where: tir.PrimExpr | None = None
        self.annotations: dict[str, Any] = {}
        self.alloc_buffers: list[tir.Buffer] = []
        self.match_buffers: list[tir.MatchBufferRegion] = []
        self.init: tir.Stmt | None = None


def _target_names(ev: TirEvaluator, target: Any) -> list[str]:
    """The names an assignment target binds (a name or a tuple of names)."""
    t = type(target)
    if t is ast.Name:
        return [target.id]
    if t is ast.Tuple:
        out = []
        for e in target.elts:
            if type(e) is not ast.Name:
                ev.error(e, "only names can be assigned here")
            out.append(e.id)
        return out
    ev.error(target, "only names, tuples of names and buffer elements can be assigned")


class TirParser(TirBuffers, TirEvaluator):
    """Parses one ``@T.prim_func`` definition."""

    dialect = "TIR"

    def __init__(self, ctx: ParseContext, scope: Scope, module: Any = None) -> None:
        super().__init__(ctx, scope)
        self.module = module  # the module's ModuleInfo (for calls of its prim_funcs)
        self.frames: list[_Frame] = [_Frame("root")]
        self.loop_dom: dict[tir.Var, tir.Range] = {}
        self.params: list[tir.Var] = []
        self.buffer_map: dict[tir.Var, tir.Buffer] = {}
        self.attrs: dict[str, Any] = {}
        self.fresh: set[int] = set()  # ids of variables created by the pending assignment
        self.saw_block = False
        self.loop_depth = 0  # loops around the statement being parsed (for break/continue)

    # ---------------------------------------------------------------- the function
    def parse_function(self, fdef: Any, private: bool, decorator: Any) -> tir.PrimFunc:
        """The PrimFunc of a ``def`` under ``@T.prim_func``."""
        self.scope.push("function")
        for p in fdef.params:
            self.param(p)
        ret_type = self.return_type(fdef.returns)
        body = self.body(fdef.body)
        self.scope.pop()
        root = self.frames[0]
        explicit_root = (type(body) is tir.BlockRealize and not body.block.iter_vars
                         and not root.alloc_buffers)
        if (self.saw_block or root.alloc_buffers) and not explicit_root:
            block = tir.Block("root", (), (), (), body, alloc_buffers=tuple(root.alloc_buffers))
            body = tir.BlockRealize((), _TRUE, block)
        elif root.alloc_buffers:
            self.error(fdef, "T.alloc_buffer at function level needs the body to be in blocks")
        # `a: T.handle` + `A = T.match_buffer(a, ...)` prints as `A: T.Buffer(...)` when it can; both
        # spellings build one PrimFunc (as in TVM), so the handle takes the pointer type that one gives.
        inline = inline_params(body, self.params, self.buffer_map)
        attrs = self.attrs
        if "global_symbol" in attrs:
            if private:
                self.error(decorator, "a private function cannot have a \"global_symbol\" attribute")
        elif not private:
            attrs["global_symbol"] = fdef.name
        params = tuple(_pointer_param(v, self.buffer_map, inline) for v in self.params)
        buffer_map = Map((v, self.buffer_map[o]) for v, o in zip(params, self.params) if o in self.buffer_map)
        span = Span(self.ctx.filename, fdef.line, fdef.col, fdef.end_line, fdef.end_col)
        return tir.PrimFunc(params, body, ret_type, buffer_map, Map(attrs), span=span)

    def param(self, p: Any) -> None:
        """One parameter: a buffer, a handle or a scalar."""
        if p.annotation is None:
            self.error(p, f"the parameter '{p.name}' needs a type annotation "
                          f"(T.Buffer(...), T.handle or a dtype such as T.int32)")
        if p.default is not None:
            self.error(p.default, "TIR parameters cannot have default values")
        self.target_names = [p.name]
        value = self.eval(p.annotation)
        self.target_names = []
        if isinstance(value, Namespace):
            dtype = "handle" if value.path == "T.handle" else value.leaf
            if value.dialect != "T" or dtype != "handle" and not is_valid_dtype(dtype):
                self.error(p.annotation, f"{value.path} is not a TIR parameter type "
                                         f"(use T.Buffer(...), T.handle or a dtype such as T.int32)")
            if value.path == "T.Buffer":
                self.error(p.annotation, "T.Buffer needs a shape: T.Buffer((128,), \"float32\")")
            var = tir.Var(p.name, dtype)
            self.scope.define(p.name, var)
        elif isinstance(value, tir.Buffer):
            var = tir.Var(p.name, "handle", tir.PointerType(value.dtype, value.scope))
            self.buffer_map[var] = value
            self.scope.define(p.name, value)
        elif isinstance(value, tir.Var):
            var = value
            self.fresh.discard(id(var))
            self.scope.define(p.name, var)
        else:
            self.error(p.annotation, f"{describe(value)} is not a TIR parameter type")
        self.params.append(var)

    # ---------------------------------------------------------------- statement sequences
    def body(self, stmts: tuple) -> tir.Stmt:
        """A statement sequence; scoping statements wrap the statements after them."""
        out: list[tir.Stmt] = []
        n = len(stmts)
        i = 0
        while i < n:
            stmt = stmts[i]
            i += 1
            r = self.visit_stmt(stmt)
            if r is None:
                continue
            if type(r) is _Wrap:
                out.append(self.ctx.located(r.make(self.body(stmts[i:])), stmt))
                break
            out.append(self.ctx.located(r, stmt))
        if not out:
            return tir.Evaluate(_ZERO_EVAL)
        return out[0] if len(out) == 1 else tir.seq(out)

    def nested(self, stmts: tuple, kind: str) -> tir.Stmt:
        """A statement sequence in its own name frame."""
        self.scope.push(kind)
        try:
            return self.body(stmts)
        finally:
            self.scope.pop()

    # ---------------------------------------------------------------- assignments
    def stmt_Assign(self, s: Any) -> Any:
        """``A[i] = v``, ``x = T.alloc_buffer(...)``, ``vi = T.axis...``, ``x = expr`` (a let)."""
        target = s.targets
        if type(target) is ast.Subscript:
            return self.store(s, target, self.eval(s.value), s.value)
        names = _target_names(self, target)
        self.target_names = list(names)
        try:
            value = self.eval(s.value)
        finally:
            self.target_names = []
        if type(target) is ast.Tuple:
            if isinstance(value, tir.Var) and len(names) == 1:  # `vi, = T.axis.remap("S", [i])`
                value = (value,)
            if not isinstance(value, (tuple, list)) or len(value) != len(names):
                self.error(s.value, f"cannot unpack {describe(value)} into {len(names)} names")
            wraps = [w for w in (self.bind_one(e, n, v) for e, n, v in zip(target.elts, names, value))
                     if w is not None]
            if not wraps:
                return None
            if len(wraps) == 1:
                return wraps[0]
            return _Wrap(lambda rest: _compose(wraps, rest))
        return self.bind_one(target, names[0], value)

    def bind_one(self, node: Any, name: str, value: Any) -> _Wrap | None:
        """Bind ``name`` to ``value``: buffers and new variables by name, expressions by LetStmt."""
        if name in self.scope.frames[-1]:
            self.error(node, f"'{name}' is already defined in this scope (TIR names cannot be rebound)")
        if isinstance(value, tir.Var) and id(value) in self.fresh:
            self.fresh.discard(id(value))
            self.scope.define(name, value)
            return None
        if type(value) is _MetaVar:  # `n = T.meta_var(4)`: the name stands for the value itself
            self.scope.define(name, value.value)
            return None
        if isinstance(value, (tir.Buffer, tir.IterVar)):
            self.scope.define(name, value)
            return None
        if isinstance(value, _Scoped):
            if value.value is None:
                self.error(node, "this call has no value to name")
            self.scope.define(name, value.value)
            return _Wrap(value.make)
        if isinstance(value, (tir.PrimExpr, int, float, bool, tir.BufferRegion)):
            expr = self.to_prim(node, value)
            var = tir.Var(name, expr.dtype)
            self.scope.define(name, var)
            return _Wrap(lambda rest: tir.LetStmt(var, expr, rest))
        if isinstance(value, (str, tuple, list, dict, Namespace)) or value is None:
            self.scope.define(name, value)  # a parse-time value (meta variable)
            return None
        self.error(node, f"cannot bind {describe(value)} in a TIR function")

    def stmt_AnnAssign(self, s: Any) -> Any:
        """``x: T.int32 = value``: a LetStmt over the rest of the sequence."""
        if type(s.target) is not ast.Name:
            self.error(s.target, "only a name can be annotated")
        ann_node = s.annotation
        if type(ann_node) is ast.Subscript and len(ann_node.index) == 1 and self.ctx.text(ann_node.value) == "T.let":
            ann_node = ann_node.index[0]  # TVM 0.27 writes a let binding `x: T.let[T.int32] = v`
        ann = self.eval(ann_node)
        pointer = None  # x: T.handle("float32", "global"): a handle with its pointer type
        if isinstance(ann, Namespace) and ann.dialect == "T" and (ann.leaf == "handle" or is_valid_dtype(ann.leaf)):
            dtype = ann.leaf
        elif isinstance(ann, tir.Var) and ann.dtype == "handle" and ann.type_annotation is not None:
            dtype, pointer = "handle", ann.type_annotation
        else:
            dtype = self.expect_dtype(ann_node, ann, "the annotation")
        if s.value is None:
            self.error(s, f"'{s.target.id}: {dtype}' needs a value ('{s.target.id}: {dtype} = ...')")
        value = self.typed_value(s.value, self.eval(s.value), dtype)
        var = tir.Var(s.target.id, dtype, type_annotation=pointer)
        self.scope.define(s.target.id, var)
        return _Wrap(lambda rest: tir.LetStmt(var, value, rest))

    def stmt_AugAssign(self, s: Any) -> Any:
        """``A[i] += v``."""
        target = s.target
        if type(target) is not ast.Subscript:
            self.error(target, f"'{s.op}=' needs a buffer element on the left (TIR variables are immutable)")
        current = self.eval(target)
        value = self.binop(s, s.op, target, current, s.value, self.eval(s.value))
        return self.store(s, target, value, s.value)

    def store(self, s: Any, target: Any, value: Any, value_node: Any) -> tir.BufferStore:
        """``A[i, j] = value``."""
        buf = self.eval(target.value)
        if not isinstance(buf, tir.Buffer):
            self.error(target.value, f"only buffer elements can be assigned by index, "
                                     f"got {describe(buf)}")
        items = self.index_nodes(target.index)
        if len(items) != len(buf.shape):
            self.error(target, f"the buffer {buf.name} has {len(buf.shape)} dimension"
                               f"{'s' if len(buf.shape) != 1 else ''}, got {len(items)} index"
                               f"{'es' if len(items) != 1 else ''}")
        indices = self.indices(buf, items)
        expr = self.to_prim(value_node, value, buf.dtype)
        lanes = max((parse_dtype(i.dtype).lanes for i in indices), default=1)
        want = buf.dtype if lanes == 1 else f"{buf.dtype}x{lanes}"
        if expr.dtype != want:
            if lanes > 1 and parse_dtype(expr.dtype).lanes == 1:
                expr = tir.Broadcast(cast(buf.dtype, expr), lanes)
            elif parse_dtype(expr.dtype).lanes != lanes:
                self.error(value_node, f"cannot store a value of dtype {expr.dtype} into {lanes} "
                                       f"element{'s' if lanes != 1 else ''} of {buf.name}")
            else:
                expr = cast(want, expr)
        return tir.BufferStore(buf, expr, tuple(indices))

    # ---------------------------------------------------------------- simple statements
    def stmt_ExprStmt(self, s: Any) -> Any:
        """A bare call: block statements, scoping calls, or an Evaluate."""
        v = s.value
        if type(v) is ast.Call:
            func = self.eval(v.func)
            if type(func) is Namespace:
                handler = self.stmt_handlers.get(func.path)
                if handler is not None:
                    return handler(self, v)
            value = self.call_with(v, func)
        elif type(v) is ast.Constant and isinstance(v.value, str):
            return None  # a docstring
        else:
            value = self.eval(v)
        if value is None or isinstance(value, (tir.Buffer, tir.BufferRegion, tir.IterVar)):
            return None
        if isinstance(value, _Scoped):
            return _Wrap(value.make)
        if isinstance(value, tir.Stmt):
            return value
        return tir.Evaluate(self.to_prim(v, value))

    def call_value(self, node: Any, func: Any) -> Any:
        """A ``@T.macro``'s body, inlined with its parameters bound to the arguments' values."""
        if isinstance(func, GlobalVar):
            return self.function_call(node, func)
        if type(func) is not Macro:
            return super().call_value(node, func)
        fdef = func.fdef
        names = [p.name for p in fdef.params]
        args = self.bind(node, Sig(fdef.name, names, sum(p.default is None for p in fdef.params)))
        values = [self.eval(a if a is not None else p.default) for a, p in zip(args, fdef.params)]
        self.scope.push("macro")
        try:
            for name, value in zip(names, values):
                self.scope.define(name, value)
            return self.body(fdef.body)
        finally:
            self.scope.pop()

    def function_call(self, node: Any, gv: GlobalVar) -> tir.Call:
        """``Module.sub(A.data, n)``: a call of a prim_func of the module, of its return dtype."""
        fdef = getattr(self.module, "tir_defs", {}).get(gv.name_hint)
        if fdef is None:
            self.error(node.func, f"a TIR function calls prim_funcs of its module; {gv.name_hint} is not one")
        if node.keywords:
            self.error(node.keywords[0], f"{gv.name_hint}(...) takes positional arguments only")
        args = tuple(self.prim(a) for a in self.unpack_args(node.args, gv.name_hint))
        return tir.Call(self.return_type(fdef.returns) or "void", gv, args)

    def stmt_Pass(self, s: Any) -> None:
        """``pass``."""
        return None

    def stmt_If(self, s: Any) -> tir.Stmt:
        """``if c: ... else: ...``: an IfThenElse."""
        cond = self.prim(s.test, "bool")
        then = self.nested(s.body, "if")
        other = self.nested(s.orelse, "else") if s.orelse else None
        return tir.IfThenElse(cond, then, other)

    def stmt_While(self, s: Any) -> tir.Stmt:
        """``while c: ...``."""
        cond = self.prim(s.test, "bool")
        self.loop_depth += 1
        try:
            return tir.While(cond, self.nested(s.body, "while"))
        finally:
            self.loop_depth -= 1

    def loop_jump(self, node: Any, what: str, kind: type) -> tir.Stmt:
        """``break``/``continue`` (or ``T.break_loop()``/``T.continue_loop()``) inside a loop."""
        if self.loop_depth == 0:
            self.error(node, f"'{what}' outside a loop")
        return kind()

    def stmt_Break(self, s: Any) -> tir.Stmt:
        """``break``: leave the innermost loop."""
        return self.loop_jump(s, "break", tir.Break)

    def stmt_Continue(self, s: Any) -> tir.Stmt:
        """``continue``: the innermost loop's next iteration."""
        return self.loop_jump(s, "continue", tir.Continue)

    @handles("T.break_loop", kind="stmt")
    def _break_loop(self, node: Any) -> tir.Stmt:
        """``T.break_loop()``: ``break``, as TVM prints it."""
        self.no_args(node, "T.break_loop")
        return self.loop_jump(node, "T.break_loop()", tir.Break)

    @handles("T.continue_loop", kind="stmt")
    def _continue_loop(self, node: Any) -> tir.Stmt:
        """``T.continue_loop()``: ``continue``, as TVM prints it."""
        self.no_args(node, "T.continue_loop")
        return self.loop_jump(node, "T.continue_loop()", tir.Continue)

    def stmt_Assert(self, s: Any) -> _Wrap:
        """``assert c, "msg"``: an AssertStmt over the rest of the sequence."""
        cond = self.prim(s.test, "bool")
        msg = self.eval(s.msg) if s.msg is not None else ""
        message = tir.StringImm(msg) if isinstance(msg, str) else self.to_prim(s.msg, msg)
        return _Wrap(lambda rest: tir.AssertStmt(cond, message, rest))

    def stmt_Return(self, s: Any) -> tir.Stmt:
        """``return v``: ``T.ret(v)``."""
        if s.value is None:
            self.error(s, "a TIR function returns a value: 'return <expression>'")
        value = self.prim(s.value)
        return tir.Evaluate(tir.Call(value.dtype, INTRINSICS["ret"].op, (value,)))

    # ---------------------------------------------------------------- loops
    def stmt_For(self, s: Any) -> tir.Stmt:
        """``for i in range(...)`` and the ``T.*`` loop kinds; grids nest loops."""
        it = s.iter
        if type(it) is not ast.Call:
            self.error(it, "a TIR loop iterates over range(...), T.grid(...), T.serial(...), "
                           "T.parallel(...), T.vectorized(...), T.unroll(...) or T.thread_binding(...)")
        func = self.eval(it.func)
        handler = self.for_handlers.get(func.path) if type(func) is Namespace else None
        if handler is None:
            self.error(it.func, f"cannot loop over {describe(func)}: use range(...), T.grid(...), "
                                f"T.serial(...), T.parallel(...), T.vectorized(...), T.unroll(...) "
                                f"or T.thread_binding(...)")
        loops = handler(self, it)
        names = _target_names(self, s.target)
        if len(names) != len(loops):
            self.error(s.target, f"{len(loops)} loop variable{'s' if len(loops) != 1 else ''} expected, "
                                 f"got {len(names)}")
        self.scope.push("for")
        made = []
        for name, (lo, extent, kind, thread, ann, step) in zip(names, loops):
            bits = max(parse_dtype(lo.dtype).bits, parse_dtype(extent.dtype).bits)
            var = tir.Var(name, extent.dtype if parse_dtype(extent.dtype).bits == bits else lo.dtype)
            self.scope.define(name, var)
            self.loop_dom[var] = tir.Range(lo, extent)
            made.append((var, lo, extent, kind, thread, ann, step))
        self.loop_depth += 1
        try:
            body = self.body(s.body)
        finally:
            self.loop_depth -= 1
        self.scope.pop()
        for var, lo, extent, kind, thread, ann, step in reversed(made):
            del self.loop_dom[var]
            binding = None
            if thread is not None:
                binding = tir.IterVar(None, tir.Var("iter", var.dtype), tir.IterType.ThreadIndex, thread)
            body = tir.For(var, lo, extent, kind, body, binding, ann, step)
        return body

    _RANGE = Sig("range", ("start", "stop", "step"), 1, kwonly=("annotations",))

    @handles("range", kind="for")
    def _range(self, node: Any) -> list:
        """``range(a[, b[, step]], annotations=...)``."""
        start, stop, step, annotations = self.bind(node, self._RANGE)
        lo, extent = self.loop_range(node, start, stop)
        step_expr = self.prim(step, lo.dtype) if step is not None else None
        ann = self.eval_attr_dict(annotations, "annotations") if annotations is not None else Map()
        return [(lo, extent, tir.ForKind.SERIAL, None, ann, step_expr)]

    def loop_range(self, node: Any, start: Any, stop: Any) -> tuple[tir.PrimExpr, tir.PrimExpr]:
        """(min, extent) of ``(start, stop)`` or ``(extent,)`` loop arguments."""
        if stop is None:
            extent = self.prim(start)
            if isinstance(extent, tir.StringImm):
                self.error(start, "a loop extent must be an integer expression")
            return tir.IntImm(extent.dtype, 0), extent
        lo, hi = self.operands(node, start, self.eval(start), stop, self.eval(stop))
        return lo, _minus(lo, hi)

    def _kind_loop(self, node: Any, name: str, kind: str) -> list:
        """``T.serial/parallel/vectorized/unroll(a[, b], annotations=..., step=...)``."""
        start, stop, annotations, step = self.bind(node, Sig(name, ("start", "stop"), 1,
                                                             kwonly=("annotations", "step")))
        lo, extent = self.loop_range(node, start, stop)
        ann = self.eval_attr_dict(annotations, "annotations") if annotations is not None else Map()
        step_expr = self.prim(step, lo.dtype) if step is not None else None
        return [(lo, extent, kind, None, ann, step_expr)]

    @handles("T.serial", kind="for")
    def _serial(self, node: Any) -> list:
        """``T.serial(...)``."""
        return self._kind_loop(node, "T.serial", tir.ForKind.SERIAL)

    @handles("T.parallel", kind="for")
    def _parallel(self, node: Any) -> list:
        """``T.parallel(...)``."""
        return self._kind_loop(node, "T.parallel", tir.ForKind.PARALLEL)

    @handles("T.vectorized", kind="for")
    def _vectorized(self, node: Any) -> list:
        """``T.vectorized(...)``."""
        return self._kind_loop(node, "T.vectorized", tir.ForKind.VECTORIZED)

    @handles("T.unroll", kind="for")
    def _unroll(self, node: Any) -> list:
        """``T.unroll(...)``."""
        return self._kind_loop(node, "T.unroll", tir.ForKind.UNROLLED)

    @handles("T.thread_binding", kind="for")
    def _thread_binding(self, node: Any) -> list:
        """``T.thread_binding(a[, b], thread=..., annotations=...)``."""
        sig = Sig("T.thread_binding", ("start", "stop", "thread"), 1, kwonly=("annotations",))
        start, stop, thread, annotations = self.bind(node, sig)
        if thread is None and stop is not None and isinstance(self.eval(stop), str):
            thread, stop = stop, None
        if thread is None:
            self.error(node, "T.thread_binding needs thread=\"threadIdx.x\" (or another thread tag)")
        tag = self.expect_str(thread, self.eval(thread), "thread")
        lo, extent = self.loop_range(node, start, stop)
        ann = self.eval_attr_dict(annotations, "annotations") if annotations is not None else Map()
        return [(lo, extent, tir.ForKind.THREAD_BINDING, tag, ann, None)]

    @handles("T.grid", kind="for")
    def _grid(self, node: Any) -> list:
        """``T.grid(e0, e1, ...)``: one serial loop per extent."""
        if node.keywords:
            self.error(node.keywords[0], "T.grid takes only extents")
        if not node.args:
            self.error(node, "T.grid needs at least one extent")
        out = []
        for a in self.unpack_args(node.args, "T.grid"):
            extent = self.prim(a)
            out.append((tir.IntImm(extent.dtype, 0), extent, tir.ForKind.SERIAL, None, Map(), None))
        return out

    # ---------------------------------------------------------------- with-statements
    def stmt_With(self, s: Any) -> Any:
        """``with T.block(...)``/``T.init()`` or a scoping call (``with T.allocate(...) as v``)."""
        if len(s.items) != 1:
            self.error(s.items[1], "one context per 'with' statement")
        item = s.items[0]
        call = item.context
        if type(call) is not ast.Call:
            self.error(call, "'with' needs a call such as T.block(\"name\")")
        func = self.eval(call.func)
        handler = self.with_handlers.get(func.path) if type(func) is Namespace else None
        if handler is not None:
            return handler(self, s, item, call)
        name = self._as_name(item, f"with {self.ctx.text(call.func)}(...)")
        self.target_names = [name] if name is not None else []
        try:
            value = self.call_with(call, func)
        finally:
            self.target_names = []
        if not isinstance(value, _Scoped):
            self.error(call.func, f"{self.ctx.text(call.func)} cannot be used in 'with' (TIR has T.block, "
                                  f"T.init, T.LetStmt, T.Assert, T.attr, T.allocate, T.decl_buffer, "
                                  f"T.launch_thread)")
        self.scope.push("with")
        try:
            if name is not None:
                if value.value is None:
                    self.error(item.target, f"{self.ctx.text(call.func)}(...) does not take 'as'")
                self.scope.define(name, value.value)
            body = self.body(s.body)
        finally:
            self.scope.pop()
        return value.make(body)

    def _no_target(self, item: Any, what: str) -> None:
        """Error on ``as x`` where the construct binds nothing."""
        if item.target is not None:
            self.error(item.target, f"'{what}' does not take 'as'")

    def _as_name(self, item: Any, what: str) -> str | None:
        """The name of ``with ... as name`` (None without ``as``)."""
        if item.target is None:
            return None
        if type(item.target) is not ast.Name:
            self.error(item.target, f"'{what} as' needs a name")
        return item.target.id

    _BLOCK = Sig("T.block", ("name_hint", "no_realize"), 0)

    @handles("T.block", kind="with")
    def _block(self, s: Any, item: Any, call: Any) -> tir.Stmt:
        """``with T.block(name):``: a BlockRealize (regions inferred when omitted)."""
        name_node, realize_node = self.bind(call, self._BLOCK)
        self._no_target(item, "with T.block(...)")
        name = self.expect_str(name_node, self.eval(name_node), "the block name") if name_node else ""
        no_realize = self.expect_bool(realize_node, self.eval(realize_node), "no_realize") if realize_node else False
        top = len(self.frames) == 1
        frame = _Frame(name)
        self.frames.append(frame)
        body = self.nested(s.body, "block")
        self.frames.pop()
        self.saw_block = True
        reads, writes = frame.reads, frame.writes
        if reads is None or writes is None:
            if top and name == "root" and not frame.iter_vars:
                inferred: tuple = ((), ())
            else:
                inferred = infer_access_regions(body, frame.init, tuple(frame.alloc_buffers),
                                                tuple(frame.match_buffers))
            reads = inferred[0] if reads is None else reads
            writes = inferred[1] if writes is None else writes
        block = tir.Block(name, tuple(frame.iter_vars), reads, writes, body, frame.init,
                          tuple(frame.alloc_buffers), tuple(frame.match_buffers), Map(frame.annotations))
        if no_realize:
            return block
        return tir.BlockRealize(tuple(frame.iter_values), frame.where or _TRUE, block)

    def block_frame(self, node: Any, what: str) -> _Frame:
        """The innermost block being parsed; an error outside blocks."""
        if len(self.frames) == 1:
            self.error(node, f"{what} must be inside a 'with T.block(...)'")
        return self.frames[-1]

    @handles("T.init", kind="with")
    def _init(self, s: Any, item: Any, call: Any) -> None:
        """``with T.init():`` inside a block."""
        self.no_args(call, "T.init")
        self._no_target(item, "with T.init()")
        frame = self.block_frame(call, "T.init()")
        if frame.init is not None:
            self.error(call, f"the block '{frame.name}' already has an init")
        frame.init = self.nested(s.body, "init")
        return None

    @handles("T.LetStmt")
    def _let_stmt(self, node: Any) -> _Scoped:
        """``T.LetStmt(value[, type_annotation], var=...)``."""
        value_node, ann_node, var_node = self.bind(node, Sig("T.LetStmt", ("value", "type_annotation"), 1,
                                                             kwonly=("var",)))
        value = self.prim(value_node)
        if var_node is not None:
            var = self.eval(var_node)
            if not isinstance(var, tir.Var):
                self.error(var_node, f"var= must be a TIR variable, got {describe(var)}")
            return _Scoped(lambda body: tir.LetStmt(var, value, body))
        dtype = self.expect_dtype(ann_node, self.eval(ann_node)) if ann_node is not None else value.dtype
        new = tir.Var(self.take_name(), dtype)
        return _Scoped(lambda body: tir.LetStmt(new, value, body), new)

    @handles("T.Assert")
    def _assert(self, node: Any) -> _Scoped:
        """``T.Assert(condition, message)``."""
        cond_node, msg_node = self.bind(node, Sig("T.Assert", ("condition", "message"), 2))
        msg = self.eval(msg_node)
        message = tir.StringImm(msg) if isinstance(msg, str) else self.to_prim(msg_node, msg)
        cond = self.prim(cond_node, "bool")
        return _Scoped(lambda body: tir.AssertStmt(cond, message, body))

    @handles("T.attr")
    def _attr(self, node: Any) -> _Scoped:
        """``T.attr(node, key, value)``."""
        node_node, key_node, value_node = self.bind(node, Sig("T.attr", ("node", "attr_key", "value"), 3))
        target = self.eval(node_node)
        # A string node is a StringImm, as the value is: the printer writes both as "text", so one
        # reading keeps parse(print(x)) equal to x (passes build nodes such as a block's name this way).
        if isinstance(target, str):
            target = tir.StringImm(target)
        elif isinstance(target, (int, float, bool)):
            target = self.to_prim(node_node, target)
        key = self.expect_str(key_node, self.eval(key_node), "the attribute key")
        value = self.eval(value_node)
        value = tir.StringImm(value) if isinstance(value, str) else self.to_prim(value_node, value)
        return _Scoped(lambda body: tir.AttrStmt(target, key, value, body))

    # ---------------------------------------------------------------- block statements
    def _regions(self, node: Any, what: str) -> tuple[tir.BufferRegion, ...]:
        """The buffer regions listed in T.reads / T.writes."""
        out: list[tir.BufferRegion] = []
        for a in node.args:
            value = self.eval(a)
            for v in (value if isinstance(value, (list, tuple)) else (value,)):
                out.append(self.as_region(a, v, what))
        if node.keywords:
            self.error(node.keywords[0], f"{what} takes buffer regions only")
        return tuple(out)

    def as_region(self, node: Any, value: Any, what: str) -> tir.BufferRegion:
        """A BufferRegion from ``A[i, 0:4]``, ``A[i, j]`` or a whole buffer ``A``."""
        if isinstance(value, tir.BufferRegion):
            return value
        if isinstance(value, tir.BufferLoad):
            ranges = []
            for idx in value.indices:
                if isinstance(idx, tir.Ramp):
                    ranges.append(tir.Range(idx.base, tir.IntImm(idx.base.dtype, idx.lanes)))
                else:
                    ranges.append(tir.Range(idx, tir.IntImm(idx.dtype, 1)))
            return tir.BufferRegion(value.buffer, tuple(ranges))
        if isinstance(value, tir.Buffer):
            return tir.BufferRegion(value, tuple(tir.Range(tir.IntImm(d.dtype, 0), d) for d in value.shape))
        self.error(node, f"{what} takes buffer regions such as A[i, 0:16], got {describe(value)}")

    @handles("T.reads", kind="stmt")
    def _reads(self, node: Any) -> None:
        """``T.reads(...)``."""
        frame = self.block_frame(node, "T.reads")
        if frame.reads is not None:
            self.error(node, f"T.reads is given twice in the block '{frame.name}'")
        frame.reads = self._regions(node, "T.reads")

    @handles("T.writes", kind="stmt")
    def _writes(self, node: Any) -> None:
        """``T.writes(...)``."""
        frame = self.block_frame(node, "T.writes")
        if frame.writes is not None:
            self.error(node, f"T.writes is given twice in the block '{frame.name}'")
        frame.writes = self._regions(node, "T.writes")

    @handles("T.where", kind="stmt")
    def _where(self, node: Any) -> None:
        """``T.where(predicate)``."""
        (cond,) = self.bind(node, Sig("T.where", ("predicate",), 1))
        frame = self.block_frame(node, "T.where")
        frame.where = self.prim(cond, "bool")

    @handles("T.block_attr", kind="stmt")
    def _block_attr(self, node: Any) -> None:
        """``T.block_attr({...})``."""
        (attrs,) = self.bind(node, Sig("T.block_attr", ("attrs",), 1))
        frame = self.block_frame(node, "T.block_attr")
        frame.annotations.update(self.eval_attr_dict(attrs, "T.block_attr"))

    @handles("T.func_attr", kind="stmt")
    def _func_attr(self, node: Any) -> None:
        """``T.func_attr({...})``."""
        (attrs,) = self.bind(node, Sig("T.func_attr", ("attrs",), 1))
        # TVM 0.27's "tirx.noalias" is the "tir.noalias" tvmlite's passes read (as T.sblock is T.block)
        self.attrs.update({"tir.noalias" if k == "tirx.noalias" else k: v
                           for k, v in self.eval_attr_dict(attrs, "T.func_attr").items()})

    @handles("T.evaluate", kind="stmt")
    def _evaluate(self, node: Any) -> tir.Stmt:
        """``T.evaluate(expr)``."""
        (value,) = self.bind(node, Sig("T.evaluate", ("value",), 1))
        return tir.Evaluate(self.prim(value))

    @handles("T.meta_var")
    def _meta_var(self, node: Any) -> _MetaVar:
        """``T.meta_var(value)``: a parse-time value, substituted where its name is used."""
        (v_node,) = self.bind(node, Sig("T.meta_var", ("value",), 1))
        return _MetaVar(self.eval(v_node))

    # ---------------------------------------------------------------- axes
    _AXIS = {"T.axis.spatial": tir.IterType.DataPar, "T.axis.reduce": tir.IterType.CommReduce,
             "T.axis.scan": tir.IterType.Ordered, "T.axis.opaque": tir.IterType.Opaque}

    def _axis(self, node: Any, name: str) -> tir.Var:
        """``T.axis.<kind>(dom, binding, dtype)``: a new block iterator."""
        dom_node, binding_node, dtype_node = self.bind(node, Sig(name, ("dom", "binding", "dtype"), 2))
        frame = self.block_frame(node, name)
        dom = self.domain(dom_node)
        dtype = self.expect_dtype(dtype_node, self.eval(dtype_node)) if dtype_node else "int32"
        bits = max(parse_dtype(dom.min.dtype).bits, parse_dtype(dom.extent.dtype).bits, parse_dtype(dtype).bits)
        dtype = f"int{bits}"
        binding = self.prim(binding_node, dtype)
        var = tir.Var(self.take_name(), dtype)
        frame.iter_vars.append(tir.IterVar(dom, var, self._AXIS[name]))
        frame.iter_values.append(binding)
        self.fresh.add(id(var))
        return var

    def domain(self, node: Any) -> tir.Range:
        """An axis domain: an extent, a ``(min, max)`` pair or a Range."""
        value = self.eval(node)
        if isinstance(value, tir.Range):
            return value
        if isinstance(value, (tuple, list)):
            if len(value) != 2:
                self.error(node, "an axis domain is an extent or a (min, max) pair")
            lo, hi = self.operands(node, node, value[0], node, value[1])
            return tir.Range(lo, _minus(lo, hi))
        extent = self.to_prim(node, value)
        return tir.Range(tir.IntImm(extent.dtype, 0), extent)

    @handles("T.axis.spatial")
    def _spatial(self, node: Any) -> tir.Var:
        """``T.axis.spatial(dom, binding)``."""
        return self._axis(node, "T.axis.spatial")

    @handles("T.axis.reduce")
    def _reduce(self, node: Any) -> tir.Var:
        """``T.axis.reduce(dom, binding)``."""
        return self._axis(node, "T.axis.reduce")

    @handles("T.axis.scan")
    def _scan(self, node: Any) -> tir.Var:
        """``T.axis.scan(dom, binding)``."""
        return self._axis(node, "T.axis.scan")

    @handles("T.axis.opaque")
    def _opaque(self, node: Any) -> tir.Var:
        """``T.axis.opaque(dom, binding)``."""
        return self._axis(node, "T.axis.opaque")

    @handles("T.axis.remap")
    def _remap(self, node: Any) -> tuple:
        """``T.axis.remap("SSR", [i, j, k])``: iterators over the enclosing loops' ranges."""
        kinds_node, bind_node, dtype_node = self.bind(node, Sig("T.axis.remap", ("kinds", "bindings", "dtype"), 2))
        frame = self.block_frame(node, "T.axis.remap")
        kinds = self.expect_str(kinds_node, self.eval(kinds_node), "the iterator kinds")
        if type(bind_node) not in (ast.List, ast.Tuple):
            self.error(bind_node, "T.axis.remap takes a list of loop variables: [i, j, k]")
        elts = bind_node.elts
        if len(kinds) != len(elts):
            self.error(kinds_node, f"{len(kinds)} iterator kind{'s' if len(kinds) != 1 else ''} for "
                                   f"{len(elts)} loop variable{'s' if len(elts) != 1 else ''}")
        out = []
        for pos, (c, e) in enumerate(zip(kinds, elts)):
            kind = _ITER_KINDS.get(c)
            if kind is None:
                self.error(kinds_node, f"unknown iterator kind '{c}' at position {pos + 1} "
                                       f"(S: spatial, R: reduce, O: opaque)")
            loop_var = self.eval(e)
            dom = self.loop_dom.get(loop_var) if isinstance(loop_var, tir.Var) else None
            if dom is None:
                self.error(e, f"T.axis.remap binds loop variables of enclosing loops, "
                              f"got {describe(loop_var)}")
            var = tir.Var(self.take_name(), loop_var.dtype)
            frame.iter_vars.append(tir.IterVar(dom, var, kind))
            frame.iter_values.append(loop_var)
            self.fresh.add(id(var))
            out.append(var)
        # One axis binds one variable (`vi = T.axis.remap("S", [i])`), as in TVM.
        return out[0] if len(out) == 1 else tuple(out)

def _pointer_param(v: tir.Var, bmap: dict, inline: set) -> tir.Var:
    """The parameter ``v``, as a ``T.Buffer`` parameter builds it when its buffer prints inline."""
    if v not in inline or v.type_annotation is not None:
        return v
    buf = bmap[v]
    return tir.Var(v.name, "handle", tir.PointerType(buf.dtype, buf.scope))


def _compose(wraps: list[_Wrap], rest: tir.Stmt) -> tir.Stmt:
    """Nest several scoping statements around ``rest``."""
    for w in reversed(wraps):
        rest = w.make(rest)
    return rest
