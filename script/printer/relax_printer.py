"""Relax printing: struct info annotations (symbolic dims stringified in signatures), bindings
(with TVM's rule for when an annotation is written), dataflow blocks, if/else, calls
(``R.call_tir`` family, ``R.call_packed``, op calls with keyword attributes), constants and
``@R.function`` functions."""
from __future__ import annotations

from typing import Any

import numpy as np

from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.module import GlobalVar
from tvmlite.ir.expr_functor import post_order_visit
from tvmlite.ir.functor import post_order_visit as visit_all
from tvmlite.ir.struct_info import sinfo_of
from tvmlite.ir.op import OpDef, holds_dtensor
from tvmlite.ops import find_op_def

from .analysis import is_void_sinfo, sinfo_equal, uses_var
from .docs import P_ATOM, P_LITERAL, Comment, Func, If, Line, Scope, call, paren, tuple_text
from .literals import dtype_literal, format_bool, format_float, quote
from .metadata import CONSTANT_KEY
from .namer import Frame, sanitize

__all__ = ["RelaxPrinter"]

# Rank-0 constants printed inline as R.const(value, dtype).
_INLINE_CONST = frozenset({"int8", "int16", "int32", "int64", "float16", "float32", "float64",
                           "bool"})


def _nan_with_payload(data: np.ndarray) -> bool:
    """A NaN whose bits are not those ``nan``/``-nan`` parse back to: inline text would lose them,
    so the constant goes to the metadata (bit for bit with ``show_meta=True``)."""
    if data.dtype.kind != "f" or not np.isnan(data):
        return False
    plain = np.array(-np.nan if np.signbit(data) else np.nan, dtype=data.dtype)
    return plain.tobytes() != data.tobytes()


def _op_def(op: rx.Op) -> OpDef | None:
    """The registry entry of an op, None for an op tvmlite does not declare."""
    try:
        return find_op_def(op)
    except KeyError:
        return None


class RelaxPrinter:
    """The Relax part of the printer (mixed into the full printer)."""

    # ================================================================ helpers
    def define_rvar(self, var: rx.Var, frame: Frame) -> str:
        """Define a Relax variable in ``frame``."""
        return self.names.define(var, frame, var.name_hint or "v")

    def relax_frame(self) -> Frame | None:
        """The outermost Relax function frame, else the outermost Relax frame."""
        first = None
        for f in self.frames:
            if f.kind == "relax":
                if f.is_func:
                    return f
                if first is None:
                    first = f
        return first

    def relax_tir_var(self, v: tir.Var) -> tuple:
        """A TIR variable met in Relax: defined as ``n = T.int64()`` at the function's top."""
        f = self.relax_frame()
        if f is None:
            return (sanitize(v.name or "v"), P_ATOM)
        if f.func_vars is not None:
            f.func_vars.add(v)
        name = self.names.define(v, f, v.name or "v")
        f.stmts.append(Line(f"{name} = {self.var_creation(v)}"))
        return (name, P_ATOM)

    def shape_var(self, e: Any) -> tuple:
        """A dimension; while printing a signature, one using its symbolic variables is a string."""
        doc = self.expr(e)
        if self.collecting and not isinstance(e, tir.IntImm):
            for f in self.frames:
                if f.func_vars is not None:
                    if (e in f.func_vars) if isinstance(e, tir.Var) else uses_var(e, f.func_vars):
                        return (quote(doc[0]), P_LITERAL)
                    break
        return doc

    def sinfo(self, s: Any) -> str:
        """The annotation text of a struct info."""
        return self.text(s)

    def inferred_sinfo(self, rhs: Any) -> Any:
        """What a binding's value says about its struct info (for hiding annotations)."""
        if isinstance(rhs, rx.Call):
            op = rhs.op
            if isinstance(op, rx.Op):
                opdef = _op_def(op)
                if opdef is not None and opdef.out_sinfo:
                    return rhs.sinfo_args[0] if len(rhs.sinfo_args) == 1 else None
                try:
                    return find_op_def(op).infer(rhs)
                except Exception:
                    return rhs.struct_info
            return None
        if isinstance(rhs, rx.Tuple):
            return rx.TupleStructInfo(tuple(sinfo_of(x) for x in rhs.fields))
        if isinstance(rhs, rx.TupleGetItem):
            t = getattr(rhs.tuple_value, "struct_info", None)
            if isinstance(t, rx.TupleStructInfo) and 0 <= rhs.index < len(t.fields):
                return t.fields[rhs.index]
            return None
        if isinstance(rhs, rx.Var):
            return rhs.struct_info
        return None

    def annotation(self, var: rx.Var, rhs: Any) -> str | None:
        """The annotation of a binding's variable, or None when TVM leaves it out."""
        si = var.struct_info
        if si is None:
            return None
        hide = not self.cfg.show_all_struct_info
        if isinstance(rhs, rx.Call) and isinstance(rhs.op, rx.Op):
            opdef = _op_def(rhs.op)
            if opdef is not None and opdef.hide_inferred_annotation:
                hide = True
        if hide:
            inferred = self.inferred_sinfo(rhs)
            if inferred is not None and sinfo_equal(inferred, si):
                return None
        return self.sinfo(si)

    def callee(self, e: Any) -> str:
        """A callee or first argument: an ExternFunc prints as its symbol string."""
        if isinstance(e, rx.ExternFunc):
            return quote(e.global_symbol)
        return self.text(e)

    # ================================================================ struct info
    def visit_object_struct_info_(self, s: rx.ObjectStructInfo) -> tuple:
        return (self.R("Object"), P_ATOM)

    def prim_value_text(self, value: Any) -> str:
        """A scalar in ``R.prim_value(...)``/``R.Prim(value=...)``: a bare int there parses as int64,
        so an integer literal of another dtype is spelled ``T.int32(4)``."""
        if isinstance(value, tir.IntImm) and value.dtype not in ("int64", "bool"):
            return f"{self.T(value.dtype)}({value.value})"
        return self.shape_var(value)[0]

    def visit_prim_struct_info_(self, s: rx.PrimStructInfo) -> tuple:
        if s.value is not None:
            return call(self.R("Prim"), (), [("value", self.prim_value_text(s.value))])
        return call(self.R("Prim"), [dtype_literal(s.dtype)])

    def visit_shape_struct_info_(self, s: rx.ShapeStructInfo) -> tuple:
        if s.values is not None:
            dims = [self.shape_var(v)[0] for v in s.values]
            return call(self.R("Shape"), ["[" + ", ".join(dims) + "]"])
        return call(self.R("Shape"), (), [("ndim", str(s.ndim))])

    def visit_tensor_struct_info_(self, s: rx.TensorStructInfo) -> tuple:
        args = []
        kwargs = []
        if s.shape is not None:
            args.append(tuple_text([self.shape_var(v)[0] for v in s.shape]))
        if s.dtype != "void":
            kwargs.append(("dtype", dtype_literal(s.dtype)))
        if s.shape is None and s.ndim != -1:
            kwargs.append(("ndim", str(s.ndim)))
        if s.vdevice is not None:
            kwargs.append(("vdevice", quote(str(s.vdevice))))
        if not args and not kwargs:
            return (self.R("Tensor"), P_ATOM)
        return call(self.R("Tensor"), args, kwargs)

    def visit_dtensor_struct_info_(self, s: rx.DTensorStructInfo) -> tuple:
        """``R.DTensor(shape, dtype, mesh, placement)``; TVM writes keywords from the first part
        it does not know on (an unknown shape or dtype)."""
        t = s.tensor_sinfo
        parts = []
        if t.shape is not None:
            parts.append(("shape", tuple_text([self.shape_var(v)[0] for v in t.shape])))
        if t.dtype != "void":
            parts.append(("dtype", dtype_literal(t.dtype)))
        parts += [("device_mesh", self.text(s.device_mesh)), ("placement", self.text(s.placement))]
        known = t.shape is not None and t.dtype != "void"
        args = [v for _, v in parts] if known else [v for k, v in parts if k == "shape"]
        kwargs = [] if known else [(k, v) for k, v in parts if k != "shape"]
        if t.shape is None and t.ndim != -1:
            kwargs.append(("ndim", str(t.ndim)))
        return call(self.R("DTensor"), args, kwargs)

    def visit_placement_(self, p: Any) -> tuple:
        """A placement prints as its text, ``"S[0], R"``."""
        return (quote(p.text()), P_LITERAL)

    def visit_tuple_struct_info_(self, s: rx.TupleStructInfo) -> tuple:
        if not s.fields:
            return (self.R("Tuple"), P_ATOM)
        return call(self.R("Tuple"), [self.sinfo(x) for x in s.fields])

    def visit_func_struct_info_(self, s: rx.FuncStructInfo) -> tuple:
        ret = self.sinfo(s.ret)
        if s.params is None:
            kwargs = []
            if not isinstance(s.ret, rx.ObjectStructInfo):
                kwargs.append(("ret", ret))
            if s.purity:
                kwargs.append(("purity", "True"))
            if not kwargs:
                return (self.R("Callable"), P_ATOM)
            return call(self.R("Callable"), (), kwargs)
        params = tuple_text([self.sinfo(p) for p in s.params])
        return call(self.R("Callable"), [params, ret, format_bool(s.purity)])

    # ================================================================ expressions
    def visit_var_(self, v: rx.Var) -> tuple:
        doc = self.names.get(v)
        if doc is not None:
            return (doc, P_ATOM)
        # An undefined variable: declare it where it is met (``a: R.Tensor(...)``).
        ann = self.sinfo(v.struct_info) if v.struct_info is not None else None
        frame = self.frames[-1] if self.frames else None
        if frame is None:
            return (sanitize(v.name_hint or "v"), P_ATOM)
        name = self.define_rvar(v, frame)
        frame.stmts.append(Line(f"{name}: {ann}" if ann else name))
        return (name, P_ATOM)

    visit_dataflow_var_ = visit_var_

    def visit_constant_(self, c: rx.Constant) -> tuple:
        data = c.data
        distributed = isinstance(c.struct_info, rx.DTensorStructInfo)
        if distributed and np.all(data == data.reshape(-1)[:1]) and data.size:
            data = data.reshape(-1)[0:1].reshape(())  # R.dist.const writes one value for every element
        if (isinstance(data, np.ndarray) and data.ndim == 0 and data.dtype.name in _INLINE_CONST
                and not _nan_with_payload(data)):
            dt = data.dtype.name
            v = data.item()
            if dt == "bool":
                lit = format_bool(v)
            elif dt.startswith("float"):
                lit = format_float(float(v))
            else:
                lit = str(int(v))
            if distributed:
                return call(self.R("dist.const"), [lit], [("struct_info", self.sinfo(c.struct_info))])
            return call(self.R("const"), [lit, dtype_literal(dt)])
        return self.add_metadata(CONSTANT_KEY, c)

    def visit_shape_expr_(self, e: rx.ShapeExpr) -> tuple:
        return call(self.R("shape"), ["[" + ", ".join(self.shape_var(v)[0] for v in e.values) + "]"])

    def visit_prim_value_(self, e: rx.PrimValue) -> tuple:
        return call(self.R("prim_value"), [self.prim_value_text(e.value)])

    def visit_string_imm_(self, e: rx.StringImm) -> tuple:
        return call(self.R("str"), [quote(e.value)])

    def visit_data_type_imm_(self, e: rx.DataTypeImm) -> tuple:
        return call(self.R("dtype"), [dtype_literal(e.value)])

    def visit_tuple_(self, e: rx.Tuple) -> tuple:
        if not e.fields:
            return call(self.R("tuple"))
        return (tuple_text([self.text(x) for x in e.fields]), P_ATOM)

    def visit_tuple_get_item_(self, e: rx.TupleGetItem) -> tuple:
        base = self.expr(e.tuple_value)
        return (f"{paren(base, P_ATOM)}[{e.index}]", P_ATOM)

    def visit_global_var_(self, gv: GlobalVar) -> tuple:
        doc = self.names.get(gv)
        if doc is None and self.module is not None:
            # A GlobalVar equal by name to one of the module's (built by a pass) refers to it.
            known = self.module_gvars.get(gv.name_hint)
            if known is not None:
                doc = self.names.get(known)
        if doc is not None:
            return (doc, P_ATOM)
        if self.token in ("relax", "tir"):
            return (gv.name_hint, P_ATOM)
        return call(self.I("GlobalVar"), [quote(gv.name_hint)])

    def visit_op_(self, op: rx.Op) -> tuple:
        return call(self.I("Op"), [quote(op.name)])

    def visit_extern_func_(self, e: rx.ExternFunc) -> tuple:
        args = [quote(e.global_symbol)]
        si = e.struct_info
        if si is not None and not (isinstance(si, rx.FuncStructInfo) and si.params is None
                                   and isinstance(si.ret, rx.ObjectStructInfo) and not si.purity):
            args.append(self.sinfo(si))
        return call(self.R("ExternFunc"), args)

    def visit_call_(self, c: rx.Call) -> tuple:
        op = c.op
        opname = op.name if isinstance(op, rx.Op) else None
        opdef = _op_def(op) if opname is not None else None
        if opdef is not None and (declared := self._declared_call(c, opdef)) is not None:
            return declared
        args: list[str] = []
        kwargs: list[tuple[str, str]] = []
        if isinstance(op, rx.ExternFunc):
            callee = self.R("call_packed")
            args.append(quote(op.global_symbol))
        elif opname is not None:
            callee = self.R(opname[6:]) if opname.startswith("relax.") else opname
        else:
            callee = paren(self.expr(op), P_ATOM)
        for i, a in enumerate(c.args):
            args.append(self.callee(a) if i == 0 else self.text(a))
        if c.attrs:
            for k, v in c.attrs.items_tuple():
                kwargs.append((str(k), self.value(v)))
        if c.sinfo_args:
            kwargs.append(("sinfo_args", tuple_text([self.sinfo(s) for s in c.sinfo_args])))
        return call(callee, args, kwargs)

    def _declared_call(self, c: rx.Call, opdef: OpDef) -> tuple | None:
        """A call in the script form its op declares (``keyword_inputs``, ``out_sinfo``,
        ``positional_attrs``): positional inputs, then ``out_sinfo=``, the attributes and the keyword
        inputs. None when the op declares none of them or the call does not fit its declaration."""
        if not (opdef.keyword_inputs or opdef.out_sinfo or opdef.positional_attrs):
            return None
        fewest = len(opdef.inputs) - opdef.num_optional - (1 if opdef.variadic else 0)
        if len(c.args) < fewest or (not opdef.variadic and len(c.args) > len(opdef.inputs)):
            return None
        if opdef.out_sinfo and len(c.sinfo_args) != 1:
            return None
        keyword = {opdef.inputs.index(name): name for name in opdef.keyword_inputs}
        args = [self.callee(a) if i == 0 else self.text(a)
                for i, a in enumerate(c.args) if i not in keyword]
        kwargs: list[tuple[str, str]] = []
        if opdef.out_sinfo:
            out = c.sinfo_args[0]
            kwargs.append(("out_sinfo", "[" + ", ".join(self.sinfo(x) for x in out.fields) + "]"
                           if isinstance(out, rx.TupleStructInfo) else self.sinfo(out)))
        attrs = c.attrs or {}
        groups: dict[str, tuple[int, list[tuple[str, str]]]] = {}  # group -> (position, keywords)
        for field in opdef.attrs:
            if field.name not in attrs:
                continue
            value = attrs[field.name]
            if not field.print_default and (value is None or value == field.default):
                continue
            if not opdef.positional_attrs:
                kwargs.append((field.name, self.value(value)))
            elif field.script_group is None:
                args.append(self.value(value))
            else:  # the group's constructor stands where its first attribute is declared
                if field.script_group not in groups:
                    groups[field.script_group] = (len(args), [])
                    args.append("")
                groups[field.script_group][1].append((field.name, self.value(value)))
        for group, (position, group_kwargs) in groups.items():
            args[position] = call(self.R(group), (), group_kwargs)[0]
        kwargs.extend((name, self.text(c.args[i])) for i, name in keyword.items() if i < len(c.args))
        dist = opdef.dtensor_script_name is not None and opdef.out_sinfo and holds_dtensor(c.sinfo_args[0])
        return call(self.R(opdef.dtensor_script_name if dist else opdef.script_name), args, kwargs)

    # ================================================================ bindings
    def _rhs(self, value: Any) -> str:
        # A tuple on the right of ``=`` drops its parentheses when it has several fields.
        if isinstance(value, rx.Tuple) and len(value.fields) > 1:
            return ", ".join(self.text(x) for x in value.fields)
        return self.text(value)

    def visit_var_binding_(self, b: rx.VarBinding) -> Any:
        value = b.value
        frame = self.frames[-1]
        if isinstance(value, rx.If):
            ann = self.annotation(b.var, value)
            lhs = self.define_rvar(b.var, frame)
            return self.print_if(value, lhs, ann)
        if isinstance(value, (rx.Function, tir.PrimFunc)):
            lhs = self.define_rvar(b.var, frame)
            self.binding_names.append(lhs)
            try:
                return self.stmt(value)
            finally:
                self.binding_names.pop()
        if (is_void_sinfo(getattr(value, "struct_info", None) or sinfo_of(value))
                and is_void_sinfo(b.var.struct_info) and not self.is_used(b.var)):
            return Line(self.text(value))  # R.print(...) etc.: a bare statement
        rhs = self._rhs(value)
        ann = self.annotation(b.var, value)
        lhs = self.define_rvar(b.var, frame)
        line = Line(f"{lhs}: {ann} = {rhs}" if ann is not None else f"{lhs} = {rhs}")
        problem = _call_problem(value) if type(value) is rx.Call else None
        return [Comment(f"tvmlite: ill-formed: {problem}"), line] if problem else line

    def visit_match_cast_(self, b: rx.MatchCast) -> Any:
        ann = self.annotation(b.var, b.value) if self.cfg.show_all_struct_info else None
        rhs = call(self.R("match_cast"), [self.text(b.value), self.sinfo(b.struct_info)])[0]
        lhs = self.define_rvar(b.var, self.frames[-1])
        return Line(f"{lhs}: {ann} = {rhs}" if ann is not None else f"{lhs} = {rhs}")

    def print_if(self, node: rx.If, var: str | None = None, ann: str | None = None) -> If:
        """``if cond:`` with both branches; with ``var``, each branch ends by assigning it."""
        cond = self.text(node.cond)
        branches = []
        for branch in (node.true_branch, node.false_branch):
            stmts = self.print_seq_expr(branch, False)
            if var is not None and stmts and type(stmts[-1]) is Line:
                body = branch.body if isinstance(branch, rx.SeqExpr) else branch
                rhs = stmts[-1].text
                if isinstance(body, rx.Tuple) and len(body.fields) > 1 and rhs.startswith("("):
                    rhs = rhs[1:-1]
                stmts[-1] = Line(f"{var}: {ann} = {rhs}" if ann is not None else f"{var} = {rhs}")
            branches.append(stmts)
        return If(cond, branches[0], branches[1])

    def visit_relax_if_(self, node: rx.If) -> Any:
        return self.print_if(node)

    def print_seq_expr(self, seq: Any, use_ret: bool) -> list:
        """The statements of a SeqExpr: its blocks, then ``return body`` (or the bare body)."""
        f = self.push("relax", seq)
        try:
            if isinstance(seq, rx.SeqExpr):
                for block in seq.blocks:
                    self.emit(f, self.stmt(block))
                body = seq.body
            else:
                body = seq
            ret = self.text(body)
            f.stmts.append(Line("return " + ret if use_ret else ret))
            return f.stmts
        finally:
            self.pop(f)

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> Any:
        return self.print_seq_expr(seq, False)

    def _bindings(self, block: rx.BindingBlock, outputs: list | None) -> list:
        stmts: list = []
        for b in block.bindings:
            d = self.stmt(b)
            if type(d) is list:
                stmts.extend(d)
            else:
                stmts.append(d)
            if outputs is not None and not isinstance(b.var, rx.DataflowVar):
                outputs.append(self.text(b.var))
        return stmts

    def visit_binding_block_(self, block: rx.BindingBlock) -> Any:
        return self._bindings(block, None)

    def visit_dataflow_block_(self, block: rx.DataflowBlock) -> Any:
        outputs: list[str] = []
        stmts = self._bindings(block, outputs)
        stmts.append(Line(call(self.R("output"), outputs)[0]))
        return Scope(f"with {self.R('dataflow')}()", stmts)

    def is_used(self, var: rx.Var) -> bool:
        """True when ``var`` is used in the function being printed (computed once per function)."""
        func = next((f.node for f in reversed(self.frames) if f.is_func and isinstance(f.node, rx.Function)), None)
        if func is None:
            return True
        used = self.used_vars.get(id(func))
        if used is None:
            found: set = set()
            post_order_visit(func, lambda e: found.add(e) if isinstance(e, rx.Var) else None)

            def outputs(n: Any) -> None:  # R.output(...) names a dataflow block's non-dataflow vars
                if isinstance(n, rx.DataflowBlock):
                    found.update(b.var for b in n.bindings if not isinstance(b.var, rx.DataflowVar))

            visit_all(func, outputs)
            used = self.used_vars[id(func)] = found
        return var in used

    # ================================================================ functions
    def visit_function_(self, func: rx.Function) -> Any:
        f = self.push("relax", func, "relax")
        self.relax_depth += 1
        try:
            top = self.relax_depth == 1
            name = self.function_name(func)
            f.is_func = True
            f.func_vars = set()
            self.collecting += 1
            ret_si = func.ret_struct_info
            if ret_si is None and isinstance(func.struct_info, rx.FuncStructInfo):
                ret_si = func.struct_info.ret
            ret = self.sinfo(ret_si) if ret_si is not None else None
            params = []
            for p in func.params:
                lhs = self.define_rvar(p, f)
                ann = self.sinfo(p.struct_info) if p.struct_info is not None else None
                params.append(f"{lhs}: {ann}" if ann is not None else lhs)
            f.func_vars = None
            self.collecting -= 1
            attrs = func.attrs
            if attrs:
                if top and attrs.get("global_symbol") == name:
                    shown = attrs.without("global_symbol")
                    if shown:
                        f.stmts.append(Line(call(self.R("func_attr"), [self.value(shown)])[0]))
                else:
                    f.stmts.append(Line(call(self.R("func_attr"), [self.value(attrs)])[0]))
            deco_kwargs = []
            if not func.is_pure:
                deco_kwargs.append(("pure", "False"))
            if top and "global_symbol" not in attrs:
                deco_kwargs.append(("private", "True"))
            deco = self.R("function")
            if deco_kwargs:
                deco = call(deco, (), deco_kwargs)[0]
            f.stmts.extend(self.print_seq_expr(func.body, True))
            sig = f"def {name}({', '.join(params)})" + (f" -> {ret}" if ret is not None else "")
            doc = Func([deco], sig, f.stmts)
        finally:
            self.relax_depth -= 1
            self.pop(f)
        return self.header_wrapper(doc)


def _call_problem(c: rx.Call) -> str | None:
    """What is wrong with an op call that the printer can still print (unknown op, argument count)."""
    op = c.op
    if not isinstance(op, rx.Op):
        return None
    try:
        opdef = find_op_def(op)
    except KeyError:
        return f"unknown op {op.name}"
    n, most = len(c.args), len(opdef.inputs)
    least = most - opdef.num_optional - (1 if opdef.variadic else 0)
    if n < least or (n > most and not opdef.variadic):
        return f"R.{opdef.script_name} takes {least if least == most else f'{least} to {most}'} arguments, got {n}"
    if any(a is None for a in c.args):
        return "a call argument is None"
    return None
