"""``@R.function`` bodies to ``relax.Function``: parameters with struct-info annotations and
symbolic shape variables, bindings (annotated or not, ``R.match_cast``), dataflow blocks with
``R.output``, ``if``/``else`` as a Relax If, nested functions and ``return``."""
from __future__ import annotations

from typing import Any

from ...ir import relax as rx
from ...ir import tir
from ...ir.dtype import is_valid_dtype
from ...ir.module import GlobalVar
from ...ir.node import Map, Span
from ...ir.struct_info import function_ret, sinfo_of, unify_sinfo
from ..errors import ScriptError
from ..syntax import nodes as ast
from .context import ParseContext
from .exprs import Sig, describe, handles
from .relax_exprs import LEAF_TYPES, ModuleInfo, RelaxEvaluator
from .scope import Scope
from .sinfo import format_sinfo, incompatible
from .values import ModuleRef, Namespace

__all__ = ["RelaxParser", "function_options"]

_OBJECT = rx.ObjectStructInfo()


class _MatchCast:
    """The value of ``R.match_cast(value, sinfo)`` on the right of an assignment."""

    __slots__ = ("value", "sinfo")

    def __init__(self, value: rx.Expr, sinfo: rx.StructInfo) -> None:
        self.value = value
        self.sinfo = sinfo


def function_options(ev: Any, decorators: tuple, name: str) -> tuple[str, dict[str, Any], Any]:
    """The kind (``"relax"``/``"tir"``) of a decorated def, its decorator options and node."""
    for dec in decorators:
        call = dec if type(dec) is ast.Call else None
        target = ev.eval(call.func if call is not None else dec)
        path = target.path if isinstance(target, Namespace) else None
        if path in ("R.function", "T.prim_func"):
            # s_tir=True: TVM 0.27 marks block-level TIR so; every tvmlite PrimFunc has blocks
            allowed = ("pure", "private", "check_well_formed") if path == "R.function" else (
                "private", "check_well_formed", "s_tir")
            options: dict[str, Any] = {}
            if call is not None:
                if call.args:
                    ev.error(call.args[0], f"@{path} takes keyword arguments only")
                for kw in call.keywords:
                    if kw.arg not in allowed:
                        ev.error(kw, f"@{path} got an unexpected keyword argument '{kw.arg}' "
                                     f"(it takes: {', '.join(allowed)})")
                    options[kw.arg] = ev.expect_bool(kw.value, ev.eval(kw.value), kw.arg)
            return ("relax" if path == "R.function" else "tir"), options, dec
        if path in ("R.macro", "T.macro"):
            ev.error(dec, f"@{path} is not supported by tvmlite")
        ev.error(dec, f"unknown decorator {ev.ctx.text(dec)}: use @R.function or @T.prim_func")
    return "", {}, None


class RelaxParser(RelaxEvaluator):
    """Parses one ``@R.function`` definition (nested functions get their own parser)."""

    def __init__(self, ctx: ParseContext, scope: Scope, module: ModuleInfo) -> None:
        super().__init__(ctx, scope, module)
        self.blocks: list[rx.BindingBlock] = []
        self.bindings: list[rx.Binding] = []
        self.in_dataflow = False
        self.df_outputs: set[tuple[int, str]] = set()
        self.df_ended = False
        self.in_branch = 0
        self.attrs: dict[str, Any] = {}
        self.ret: tuple[Any, rx.Expr] | None = None
        self.fresh: set[int] = set()

    # ---------------------------------------------------------------- functions
    def signature_of(self, fdef: Any) -> rx.FuncStructInfo:
        """The struct info of a Relax function from its annotations alone."""
        _, options, _ = function_options(self, fdef.decorators, fdef.name)
        self.scope.push("function")
        self.read_declared_dtypes(fdef)
        params = tuple(self.sinfo(p.annotation, signature=True) if p.annotation is not None else _OBJECT
                       for p in fdef.params)
        ret = self.sinfo(fdef.returns, signature=True) if fdef.returns is not None else _OBJECT
        self.scope.pop()
        return rx.FuncStructInfo(params, ret, options.get("pure", True))

    def read_declared_dtypes(self, fdef: Any) -> None:
        """Record the body's ``name = T.<dtype>()`` declarations and the names the signature writes
        as dimensions of their own (``"m"``), which its dimension expressions (``"m + 1"``) may use
        before them (``declared_dtypes``; int64 for the latter)."""
        annotations = [p.annotation for p in fdef.params if p.annotation is not None]
        for ann in (*annotations, *([fdef.returns] if fdef.returns is not None else [])):
            for sub in ast.walk(ann):
                if type(sub) is ast.Constant and isinstance(sub.value, str) and sub.value.isidentifier():
                    self.declared_dtypes.setdefault(sub.value, "int64")
        for st in fdef.body:
            if type(st) is not ast.Assign or type(st.targets) is not ast.Name or type(st.value) is not ast.Call \
                    or st.value.args or st.value.keywords:
                continue
            try:
                func = self.eval(st.value.func)
            except ScriptError:
                continue
            if isinstance(func, Namespace) and func.dialect == "T" and is_valid_dtype(func.leaf):
                self.declared_dtypes[st.targets.id] = func.leaf

    def parse_function(self, fdef: Any, pure: bool, private: bool, inner: bool = False) -> rx.Function:
        """The Relax Function of a ``def`` under ``@R.function``."""
        self.scope.push("function")
        self.read_declared_dtypes(fdef)
        params = []
        seen: set[str] = set()
        for p in fdef.params:
            if p.annotation is None:
                self.error(p, f"the parameter '{p.name}' needs a type annotation such as "
                              f"R.Tensor((2, 3), \"float32\")")
            if p.default is not None:
                self.error(p.default, "Relax parameters cannot have default values")
            if p.name in seen:
                self.error(p, f"duplicate parameter '{p.name}'")
            seen.add(p.name)
            var = rx.Var(p.name, self.sinfo(p.annotation, signature=True))
            self.scope.define(p.name, var)
            params.append(var)
        ret_sinfo = self.sinfo(fdef.returns, signature=True) if fdef.returns is not None else None
        self.statements(fdef.body)
        if self.ret is None:
            self.error(self.ctx.def_name(fdef), f"the Relax function '{fdef.name}' has no return statement")
        self.flush()
        ret_node, body = self.ret
        body_sinfo = sinfo_of(body)
        if ret_sinfo is not None and incompatible(ret_sinfo, body_sinfo):
            self.error(ret_node, f"the function returns {format_sinfo(body_sinfo)}, but its return "
                                 f"annotation is {format_sinfo(ret_sinfo)}")
        self.scope.pop()
        attrs = self.attrs
        if "global_symbol" in attrs and private:
            self.error(self.ctx.def_name(fdef), "a private function cannot have a \"global_symbol\" attribute")
        if not private and not inner:
            attrs.setdefault("global_symbol", fdef.name)
        seq = rx.SeqExpr(tuple(self.blocks), body, struct_info=body_sinfo)
        # As TVM's Function does, a return annotation less specific than the body's struct info
        # (``-> R.Tensor(ndim=2)``) gives way to the body's: the stored (and printed) one is the narrower.
        ret_sinfo = function_ret(params, body_sinfo, ret_sinfo)
        span = Span(self.ctx.filename, fdef.line, fdef.col, fdef.end_line, fdef.end_col)
        return rx.Function(tuple(params), seq, ret_sinfo, pure, Map(attrs), span=span)

    def statements(self, stmts: tuple) -> None:
        """Parse statements into the current binding blocks."""
        for s in stmts:
            if self.ret is not None:
                self.error(s, "unreachable statement after 'return'")
            self.visit_stmt(s)

    def flush(self) -> None:
        """Close the current (non-dataflow) binding block."""
        if self.bindings:
            self.blocks.append(rx.BindingBlock(tuple(self.bindings)))
            self.bindings = []

    # ---------------------------------------------------------------- bindings
    def emit(self, stmt: Any, name: str, value: rx.Expr, sinfo: rx.StructInfo | None = None,
             anno_node: Any = None) -> rx.Var:
        """Bind ``name`` to ``value`` (a DataflowVar inside a dataflow block unless it is an output)."""
        self._check_open(stmt)
        vs = sinfo_of(value)
        if sinfo is not None and incompatible(sinfo, vs):
            self.error(anno_node, f"the annotation {format_sinfo(sinfo)} does not match the value, "
                                  f"which is {format_sinfo(vs)}")
        cls = rx.DataflowVar if self.in_dataflow and (id(stmt), name) not in self.df_outputs else rx.Var
        span = self.ctx.span_of(stmt)
        var = cls(name, sinfo if sinfo is not None else vs, span=span)
        self.bindings.append(rx.VarBinding(var, self.ctx.located(value, stmt.value if hasattr(stmt, "value") and stmt.value is not None else stmt), span=span))
        self.scope.define(name, var)
        return var

    def emit_temp(self, node: Any, value: rx.Expr) -> rx.Var:
        """Bind a nested call to a fresh ``lv``/``gv`` variable (normal form)."""
        span = self.ctx.span_of(node)
        var = (rx.DataflowVar if self.in_dataflow else rx.Var)("lv" if self.in_dataflow else "gv", sinfo_of(value), span=span)
        self.bindings.append(rx.VarBinding(var, self.ctx.located(value, node), span=span))
        return var

    def _check_open(self, stmt: Any) -> None:
        """Error when the dataflow block was already closed by R.output."""
        if self.df_ended:
            self.error(stmt, "no binding may follow R.output(...) in a dataflow block")

    def stmt_Assign(self, s: Any) -> None:
        """``x = value`` / ``a, b = value``."""
        target = s.targets
        if type(target) is ast.Name:
            names = [target.id]
        elif type(target) is ast.Tuple and all(type(e) is ast.Name for e in target.elts):
            names = [e.id for e in target.elts]
        else:
            self.error(target, "Relax values are bound to names (or tuples of names)")
        self.target_names = list(names)
        try:
            value = self.eval(s.value)
        finally:
            self.target_names = []
        if type(target) is ast.Name:
            self.bind_value(s, target, names[0], value)
            return
        if isinstance(value, (tuple, list)):
            if len(value) != len(names):
                self.error(s.value, f"cannot unpack {describe(value)} into {len(names)} names")
            for e, n, v in zip(target.elts, names, value):
                self.bind_value(s, e, n, v)
            return
        expr = self.to_expr(s.value, value)
        fields = sinfo_of(expr)
        if not isinstance(fields, rx.TupleStructInfo) or len(fields.fields) != len(names):
            self.error(s.value, f"cannot unpack {format_sinfo(fields)} into {len(names)} names")
        for i, (e, n) in enumerate(zip(target.elts, names)):
            self.emit(s, n, rx.TupleGetItem(expr, i, struct_info=fields.fields[i]))

    def bind_value(self, stmt: Any, node: Any, name: str, value: Any, sinfo: rx.StructInfo | None = None,
                   anno_node: Any = None) -> None:
        """Bind one name: Relax values get a binding, symbolic variables and Python values a name."""
        if isinstance(value, _MatchCast):
            self._check_open(stmt)
            var_sinfo = value.sinfo
            if sinfo is not None:
                if incompatible(sinfo, value.sinfo):
                    self.error(anno_node, f"the annotation {format_sinfo(sinfo)} does not match the "
                                          f"R.match_cast target {format_sinfo(value.sinfo)}")
                var_sinfo = sinfo
            in_df = self.in_dataflow and (id(stmt), name) not in self.df_outputs
            span = self.ctx.span_of(stmt)
            var = (rx.DataflowVar if in_df else rx.Var)(name, var_sinfo, span=span)
            self.bindings.append(rx.MatchCast(var, value.value, value.sinfo, span=span))
            self.scope.define(name, var)
            return
        if isinstance(value, tir.Var) and id(value) in self.fresh:
            self.fresh.discard(id(value))
            known = self.sym_vars.get(name)
            if known is not None:
                if known.dtype != value.dtype:
                    self.error(node, f"'{name}' is already a symbolic variable of dtype {known.dtype}")
                value = known
            else:
                self.sym_vars[name] = value
            self.scope.define(name, value)
            return
        if isinstance(value, rx.Expr) or (isinstance(value, (tuple, list)) and any(
                isinstance(v, rx.Expr) for v in value)) or sinfo is not None:
            self.emit(stmt, name, self.value_expr(node if stmt.value is None else stmt.value, value),
                      sinfo, anno_node)
            return
        if isinstance(value, (rx.StructInfo, Namespace, ModuleRef, tir.PrimExpr, int, float, str, tuple,
                              list, dict, GlobalVar)) or value is None:
            self.scope.define(name, value)  # a parse-time value (module alias, type, number)
            return
        self.error(stmt.value, f"cannot bind {describe(value)} in a Relax function")

    def typed_call(self, node: Any, dtype: str) -> Any:
        """``T.int64()``: remember the new symbolic variable for its assignment."""
        value = super().typed_call(node, dtype)
        if isinstance(value, tir.Var):
            self.fresh.add(id(value))
        return value

    def stmt_AnnAssign(self, s: Any) -> None:
        """``x: R.Tensor(...) = value``: the annotation must fit the value."""
        if type(s.target) is not ast.Name:
            self.error(s.target, "only a name can be annotated")
        sinfo = self.sinfo(s.annotation)
        if s.value is None:
            self.error(s, f"'{s.target.id}' is annotated but not assigned")
        self.target_names = [s.target.id]
        try:
            value = self.eval(s.value)
        finally:
            self.target_names = []
        self.bind_value(s, s.target, s.target.id, value, sinfo, s.annotation)

    @handles("R.match_cast")
    def _match_cast(self, node: Any) -> _MatchCast:
        """``R.match_cast(value, sinfo)``."""
        value_n, sinfo_n = self.bind(node, Sig("R.match_cast", ("value", "struct_info"), 2))
        value = self.to_expr(value_n, self.eval(value_n))
        sinfo = self.sinfo(sinfo_n)
        if incompatible(sinfo, sinfo_of(value)):
            self.error(sinfo_n, f"R.match_cast can never succeed: the value is {format_sinfo(sinfo_of(value))}")
        return _MatchCast(value, sinfo)

    def stmt_AugAssign(self, s: Any) -> None:
        """``x += y`` (not Relax)."""
        self.error(s, f"'{s.op}=' is not supported in Relax; write 'x = x {s.op} y'")

    def stmt_ExprStmt(self, s: Any) -> None:
        """A bare call: R.output/R.func_attr, or a binding of its (void) value."""
        v = s.value
        if type(v) is ast.Call:
            func = self.eval(v.func)
            if type(func) is Namespace:
                handler = self.stmt_handlers.get(func.path)
                if handler is not None:
                    handler(self, v)
                    return
            value = self.call_with(v, func)
        elif type(v) is ast.Constant and isinstance(v.value, str):
            return  # a docstring
        else:
            value = self.eval(v)
        if value is None:
            return
        if isinstance(value, _MatchCast):
            self.error(v, "the result of R.match_cast must be assigned to a variable")
        if not isinstance(value, rx.Expr):
            self.error(v, f"this statement has no effect ({describe(value)})")
        sinfo = sinfo_of(value)
        if not (isinstance(sinfo, rx.TupleStructInfo) and not sinfo.fields):  # TVM: only void calls stand alone
            self.error(v, f"a value of {format_sinfo(sinfo)} must be bound to a variable (y = ...); only calls "
                          f"that return nothing (R.print, R.assert_op, ...) can stand as statements")
        self._check_open(s)
        self.emit_temp(v, value)

    def stmt_Pass(self, s: Any) -> None:
        """``pass``."""
        return None

    @handles("R.func_attr", kind="stmt")
    def _func_attr(self, node: Any) -> None:
        """``R.func_attr({...})``."""
        (attrs,) = self.bind(node, Sig("R.func_attr", ("attrs",), 1))
        self.attrs.update(self.eval_attr_dict(attrs, "R.func_attr"))

    # ---------------------------------------------------------------- return
    def stmt_Return(self, s: Any) -> None:
        """``return value``: the function body's result (a leaf, or bound to ``gv``)."""
        if s.value is None:
            self.error(s, "a Relax function must return a value")
        if self.in_branch:
            self.error(s, "'return' inside if/else is not supported: assign the result in both "
                          "branches and return it after the if")
        value = self.value_expr(s.value, self.eval(s.value))
        if not isinstance(value, LEAF_TYPES):
            # Bound in the block being built, as TVM's normalizer does: the printed ``gv = ...;
            # return gv`` then reads back to the same function.
            var = rx.Var("gv", sinfo_of(value))
            self.bindings.append(rx.VarBinding(var, value))
            value = var
        self.ret = (s.value, value)

    # ---------------------------------------------------------------- dataflow
    @handles("R.dataflow", kind="with")
    def _dataflow(self, s: Any, item: Any, call: Any) -> None:
        """``with R.dataflow():``: a DataflowBlock; only R.output names leave it."""
        self.no_args(call, "R.dataflow")
        if item.target is not None:
            self.error(item.target, "'with R.dataflow()' does not take 'as'")
        if self.in_dataflow:
            self.error(call, "dataflow blocks cannot be nested")
        self.flush()
        saved = self.df_outputs
        self.df_outputs = self.output_bindings(s.body)
        self.in_dataflow = True
        self.df_ended = False
        frame = self.scope.push("dataflow")
        try:
            self.statements(s.body)
        finally:
            self.scope.pop()
            self.in_dataflow = False
            self.df_ended = False
            self.df_outputs = saved
        if self.bindings:
            self.blocks.append(rx.DataflowBlock(tuple(self.bindings)))
            self.bindings = []
        why = (f"it is a dataflow variable of the 'with R.dataflow()' block at line {s.line}; "
               f"list it in R.output(...) to use it after the block")
        for name, value in frame.items():
            if isinstance(value, rx.DataflowVar):
                self.scope.gone[name] = why
            else:
                self.scope.define(name, value)

    def output_bindings(self, body: tuple) -> set[tuple[int, str]]:
        """The (statement, name) pairs whose variables leave the dataflow block: the last binding
        of each name listed in ``R.output(...)`` or returned from inside the block."""
        wanted: list[tuple[str, int]] = []
        for i, st in enumerate(body):
            t = type(st)
            if t is ast.ExprStmt and type(st.value) is ast.Call and self._is_output(st.value.func):
                wanted.extend((a.id, i) for a in st.value.args if type(a) is ast.Name)
            elif t is ast.Return and st.value is not None:
                wanted.extend((n, i) for n in _names_in(st.value))
        out: set[tuple[int, str]] = set()
        for name, limit in wanted:
            for j in range(limit - 1, -1, -1):
                if name in _assigned_names(body[j]):
                    out.add((id(body[j]), name))
                    break
        return out

    def _is_output(self, func: Any) -> bool:
        """True when a callee expression names ``R.output``."""
        if type(func) is not ast.Attribute or func.attr != "output":
            return False
        value = self.eval(func)
        return isinstance(value, Namespace) and value.path == "R.output"

    @handles("R.output", kind="stmt")
    def _output(self, node: Any) -> None:
        """``R.output(a, b)``: checks and closes the dataflow block."""
        if not self.in_dataflow:
            self.error(node, "R.output(...) must be inside 'with R.dataflow()'")
        if self.df_ended:
            self.error(node, "R.output(...) is given twice in this dataflow block")
        if node.keywords:
            self.error(node.keywords[0], "R.output takes variables only")
        frame = self.scope.frames[-1]
        for a in node.args:
            if type(a) is not ast.Name:
                self.error(a, "R.output lists variables bound in the dataflow block")
            value = self.eval(a)
            if a.id not in frame or type(value) is not rx.Var:
                self.error(a, f"'{a.id}' is not bound in this dataflow block, so it cannot be an output")
        self.df_ended = True

    # ---------------------------------------------------------------- if / else
    def stmt_If(self, s: Any) -> None:
        """``if c: ... else: ...``: a Relax If bound to the name both branches assign."""
        if self.in_dataflow:
            self.error(s, "an 'if' is not allowed inside a dataflow block")
        self._check_open(s)
        cond = self.to_expr(s.test, self.eval(s.test))
        cs = sinfo_of(cond)
        if not (isinstance(cs, rx.PrimStructInfo) and cs.dtype == "bool"
                or isinstance(cs, rx.TensorStructInfo) and cs.dtype in ("bool", "void") and cs.ndim in (0, -1)
                or isinstance(cs, rx.ObjectStructInfo)):
            self.error(s.test, f"the condition of a Relax 'if' must be a bool scalar, got {format_sinfo(cs)}")
        if not s.orelse:
            self.error(s, "a Relax 'if' needs an 'else' branch; both branches must assign the same variable")
        then_seq, then_name, _ = self.branch(s.body, "_then")
        else_seq, else_name, else_last = self.branch(s.orelse, "_else")
        if then_name != else_name:
            self.error(else_last.targets if type(else_last) is ast.Assign else else_last.target,
                       f"both branches must end by assigning the same variable: the 'if' branch "
                       f"assigns '{then_name}', the 'else' branch '{else_name}'")
        sinfo = unify_sinfo(sinfo_of(then_seq), sinfo_of(else_seq))
        value = rx.If(cond, then_seq, else_seq, struct_info=sinfo)
        var = rx.Var(then_name, sinfo)
        self.bindings.append(rx.VarBinding(var, value))
        self.scope.define(then_name, var)

    def branch(self, stmts: tuple, suffix: str) -> tuple[rx.SeqExpr, str, Any]:
        """One branch as a SeqExpr whose value is its last binding (TVM's rules)."""
        last = stmts[-1]
        for st in stmts:
            if type(st) is ast.Return:
                self.error(st, "'return' inside if/else is not supported: assign the result in both "
                               "branches and return it after the if")
        void = type(last) is ast.ExprStmt  # TVM: the branch's value is then an empty tuple bound to '_'
        if type(last) is ast.Assign and type(last.targets) is ast.Name:
            name = last.targets.id
        elif type(last) is ast.AnnAssign and type(last.target) is ast.Name:
            name = last.target.id
        elif void:
            name = "_"
        else:
            self.error(last, "the last statement of each branch must assign the 'if' result to a name, "
                             "e.g. 'r = ...'")
        saved = (self.blocks, self.bindings)
        self.blocks, self.bindings = [], []
        self.scope.push("branch")
        self.in_branch += 1
        try:
            self.statements(stmts[:-1])
            before = len(self.bindings)
            self.visit_stmt(last)
            if void:
                empty = rx.TupleStructInfo(())
                self.bindings.append(rx.VarBinding(rx.Var(name, empty), rx.Tuple((), struct_info=empty)))
            if len(self.bindings) == before or self.bindings[-1].var.name_hint != name:
                self.error(last, f"the last statement of the branch must bind a Relax value to '{name}'")
            self.flush()
        finally:
            self.scope.pop()
            self.in_branch -= 1
            blocks, (self.blocks, self.bindings) = self.blocks, saved
        final = blocks[-1]
        binding = final.bindings[-1]
        rest = list(final.bindings[:-1])
        value = binding.value
        if isinstance(binding, rx.VarBinding) and isinstance(value, LEAF_TYPES):
            body: rx.Expr = value
        else:
            new_var = rx.Var(name + suffix, binding.var.struct_info)
            if isinstance(binding, rx.MatchCast):
                rest.append(rx.MatchCast(new_var, value, binding.struct_info))
            else:
                rest.append(rx.VarBinding(new_var, value))
            body = new_var
        blocks[-1] = type(final)(tuple(rest))
        if not rest:
            blocks.pop()
        return rx.SeqExpr(tuple(blocks), body, struct_info=sinfo_of(body)), name, last

    # ---------------------------------------------------------------- nested functions
    def stmt_FunctionDef(self, s: Any) -> None:
        """A nested ``def``: a local function binding."""
        kind, options, _ = function_options(self, s.decorators, s.name)
        if kind not in ("relax", ""):
            self.error(s.decorators[0], "a function inside a Relax function must be an @R.function")
        inner = RelaxParser(self.ctx, self.scope, self.module)
        inner.sym_vars = dict(self.sym_vars)
        func = inner.parse_function(s, options.get("pure", True), options.get("private", False), inner=True)
        self.emit(s, s.name, func)

    # ---------------------------------------------------------------- unsupported statements
    def stmt_For(self, s: Any) -> None:
        """Loops are not Relax."""
        self.error(s, "Relax functions have no loops; write loops in a @T.prim_func and call it with R.call_tir")

    def stmt_While(self, s: Any) -> None:
        """Loops are not Relax."""
        self.error(s, "Relax functions have no loops; write loops in a @T.prim_func and call it with R.call_tir")

    def stmt_With(self, s: Any) -> None:
        """``with R.dataflow():`` (the only Relax with-statement)."""
        if len(s.items) != 1 or type(s.items[0].context) is not ast.Call:
            self.error(s, "Relax supports 'with R.dataflow():' only")
        call = s.items[0].context
        func = self.eval(call.func)
        handler = self.with_handlers.get(func.path) if type(func) is Namespace else None
        if handler is None:
            self.error(call.func, f"{describe(func)} cannot be used in 'with' (Relax has 'with R.dataflow()')")
        handler(self, s, s.items[0], call)

    def stmt_Assert(self, s: Any) -> None:
        """``assert`` is not Relax."""
        self.error(s, "'assert' is not supported in Relax; use R.assert_op(condition, format=R.str(...))")


def _names_in(node: Any) -> list[str]:
    """The names of a name or a (nested) tuple of names."""
    if type(node) is ast.Name:
        return [node.id]
    if type(node) in (ast.Tuple, ast.List):
        return [n for e in node.elts for n in _names_in(e)]
    return []


def _assigned_names(st: Any) -> list[str]:
    """The names a statement binds."""
    t = type(st)
    if t is ast.Assign:
        return _names_in(st.targets)
    if t is ast.AnnAssign:
        return _names_in(st.target)
    if t is ast.FunctionDef:
        return [st.name]
    return []


def read_signature(info: ModuleInfo, fdef: Any) -> rx.FuncStructInfo | None:
    """The struct info of a Relax function from its annotations alone (``ModuleInfo.read_signature``)."""
    return RelaxParser(info.ctx, Scope(info.scope_base), info).signature_of(fdef)
