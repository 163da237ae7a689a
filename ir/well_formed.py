"""Well-formedness checks of IR (TVM's ``relax.analysis.well_formed`` plus TIR scoping rules).

Relax: variables defined before use and once, dataflow variables confined to their block,
symbolic shape variables defined by a parameter or ``match_cast`` before use, no impure calls
inside dataflow blocks, struct info present, GlobalVars and call_tir targets in the module.
TIR: variables defined before use and once (SSA), buffers declared before use, block iterator
variables used only inside their block.
Shape of the IR itself: op calls with the op's number of arguments, no None where a node belongs,
as many iter values as a block has iter vars, buffer_map keys among the parameters. Malformed IR
never makes the checker raise; each problem names its source position, else the function and the
enclosing bindings/blocks.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from . import relax as rx
from . import tir
from .dtype import parse_dtype
from .functor import Visitor
from .module import GlobalVar, IRModule
from .node import Node, Span
from .op import find_op_def

__all__ = ["well_formed", "well_formed_errors"]

# Variable-like nodes: their span is where they were defined, not where an error is.
_NO_SPAN = frozenset({"var", "dataflow_var", "tir_var", "global_var", "buffer"})
_CALL_TIR_FAMILY = frozenset({"relax.call_tir", "relax.call_tir_inplace"})


class _CollectTirVars(Visitor):
    """Gathers the TIR variables below a node, in order, without repeats."""

    def __init__(self) -> None:
        self.found: dict[int, tir.Var] = {}

    def visit_tir_var_(self, v: tir.Var) -> None:
        self.found.setdefault(id(v), v)


_REQUIRED: dict[type, tuple[tuple[str, bool], ...]] = {}


def _required_fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """``(field, optional)`` for each field of a node class; optional fields may hold None."""
    out = _REQUIRED.get(cls)
    if out is None:
        out = tuple((f.name, f.default is None or "None" in str(f.type) or f.type in (Any, "Any"))
                    for f in dataclasses.fields(cls) if f.name != "span")
        _REQUIRED[cls] = out
    return out


def _tir_vars_in(obj: Any) -> list[tir.Var]:
    """The TIR variables appearing in ``obj`` (struct info, shapes)."""
    collector = _CollectTirVars()
    collector.visit(obj)
    return list(collector.found.values())


class _Checker(Visitor):
    """Collects well-formedness errors of one module or function."""

    def __init__(self, mod: IRModule | None, check_struct_info: bool) -> None:
        self.mod = mod
        self.funcs: dict[GlobalVar, Node] = dict(mod.functions_items()) if mod is not None else {}
        self.check_sinfo = check_struct_info
        self.tir_var_kind = "symbolic variable"  # "TIR variable" inside a PrimFunc
        self.errors: list[str] = []
        self._reported: set[tuple[int, str]] = set()
        self._spans: list[Span] = []
        self.func_name: str | None = None
        self.where: list[str] = []  # enclosing bindings and blocks, for errors without a span
        # Relax scopes (ids of the variables in scope).
        self.rx_defined: set[int] = set()
        self.rx_ever: set[int] = set()
        self.df_current: set[int] | None = None  # dataflow vars of the open dataflow block
        self.df_ended: set[int] = set()  # dataflow vars of closed blocks
        # TIR scopes; in Relax functions tir_defined holds the symbolic shape variables.
        self.tir_defined: set[int] = set()
        self.tir_ever: set[int] = set()
        self.buffers: set[int] = set()
        self.block_vars_visible: set[int] = set()
        self.block_vars_all: set[int] = set()

    # ------------------------------------------------------------ reporting
    def visit(self, node: Any) -> None:
        """Visit, keeping the innermost source span for error locations."""
        span = None
        if isinstance(node, Node) and type(node).visit_key not in _NO_SPAN:
            span = node.span
        if span is not None:
            self._spans.append(span)
        try:
            if isinstance(node, Node):
                self.check_fields(node)
                if isinstance(node, tir.BinaryOp) and node.a.dtype != node.b.dtype:
                    # TVM's constructors refuse it and no text can spell it: codegen would mix widths.
                    self.error(f"{type(node).__name__} of {node.a.dtype} and {node.b.dtype} operands", node)
            super().visit(node)
        finally:
            if span is not None:
                self._spans.pop()

    def check_fields(self, node: Node) -> None:
        """A field that must hold a value holds None, or a tuple field holds None."""
        for name, optional in _required_fields(type(node)):
            value = getattr(node, name, None)
            if value is None:
                if not optional:
                    self.error(f"{type(node).__name__}.{name} is None", node)
            elif type(value) is tuple and any(v is None for v in value):
                idx = next(i for i, v in enumerate(value) if v is None)
                self.error(f"{type(node).__name__}.{name}[{idx}] is None", node)

    def error(self, message: str, about: Any = None) -> None:
        """Record ``message`` (once per node and message) at the innermost known location."""
        key = (id(about), message)
        if about is not None and key in self._reported:
            return
        self._reported.add(key)
        where = ([f"function {self.func_name}"] if self.func_name is not None else []) + self.where
        if self._spans:
            self.errors.append(f"{self._spans[-1]}: {message}")
        elif where:
            self.errors.append(f"{message} (in {', '.join(where)})")
        else:
            self.errors.append(message)

    def guarded(self, what: str, node: Any) -> None:
        """Visit ``node``; a checker failure on malformed IR becomes an error, never an exception."""
        depth = (len(self._spans), len(self.where))
        try:
            self.visit(node)
        except RecursionError:
            raise
        except Exception as err:
            del self._spans[depth[0]:], self.where[depth[1]:]
            self.error(f"malformed {what}: {type(err).__name__}: {err}")

    # ------------------------------------------------------------ module
    def check_module(self, mod: IRModule) -> None:
        """Check every function of the module and its names."""
        for gv, func in mod.functions_items():
            symbol = getattr(func, "attrs", {}).get("global_symbol")
            # TVM checks this for Relax functions only: a PrimFunc may export another symbol.
            if symbol is not None and symbol != gv.name_hint and isinstance(func, rx.Function):
                self.error(f"function {gv.name_hint} has global_symbol {symbol!r}, which differs from its name")
            self.func_name = gv.name_hint
            if not isinstance(func, (rx.Function, tir.PrimFunc, rx.ExternFunc)):
                self.error(f"module entry {gv.name_hint} is a {type(func).__name__}, not a function")
            else:
                self.guarded(type(func).__name__, func)
            self.func_name = None

    def use_global_var(self, gv: GlobalVar) -> Node | None:
        """Check that ``gv`` belongs to the module; returns its function."""
        if self.mod is None:
            return None
        if gv in self.funcs:
            return self.funcs[gv]
        if gv.name_hint in self.mod:
            self.error(f"GlobalVar {gv.name_hint} is not the module's GlobalVar of that name", gv)
        else:
            self.error(f"GlobalVar {gv.name_hint} not in the module", gv)
        return None

    def visit_global_var_(self, gv: GlobalVar) -> None:
        self.use_global_var(gv)

    # ------------------------------------------------------------ relax: definitions and uses
    def define_rx(self, var: rx.Var, what: str = "variable") -> None:
        """A binding or parameter defines ``var``."""
        is_dataflow = type(var).visit_key == "dataflow_var"
        if id(var) in self.rx_ever:
            self.error(f"{what} {var.name_hint} defined twice", var)
        if is_dataflow and self.df_current is None:
            where = "as a function parameter" if what == "parameter" else "outside a dataflow block"
            self.error(f"dataflow variable {var.name_hint} defined {where}", var)
        if self.check_sinfo and var.struct_info is None:
            self.error(f"variable {var.name_hint} has no struct info", var)
        self.rx_ever.add(id(var))
        self.rx_defined.add(id(var))
        if is_dataflow and self.df_current is not None:
            self.df_current.add(id(var))

    def use_rx(self, var: rx.Var) -> None:
        """An expression reads ``var``."""
        if id(var) in self.rx_defined:
            return
        if id(var) in self.df_ended:
            self.error(f"dataflow variable {var.name_hint} used outside its dataflow block", var)
        else:
            self.error(f"variable {var.name_hint} used before definition", var)

    def visit_var_(self, var: rx.Var) -> None:
        self.use_rx(var)

    def visit_dataflow_var_(self, var: rx.DataflowVar) -> None:
        self.use_rx(var)

    def define_symbolic(self, sinfo: Any) -> None:
        """Parameters and match_cast define the symbolic variables of their struct info."""
        for v in _tir_vars_in(sinfo):
            self.tir_defined.add(id(v))

    # ------------------------------------------------------------ relax: structure
    def visit_function_(self, func: rx.Function) -> None:
        saved = (set(self.rx_defined), set(self.tir_defined), self.df_current)
        self.df_current = None
        for p in func.params:
            self.define_rx(p, "parameter")
            self.define_symbolic(p.struct_info)
        self.visit(func.body)
        self.visit(func.ret_struct_info)
        self.rx_defined, self.tir_defined, self.df_current = saved

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> None:
        saved = set(self.rx_defined)
        for block in seq.blocks:
            self.visit(block)
        self.visit(seq.body)
        self.rx_defined = saved  # bindings are local to their SeqExpr (if/else branches)

    def visit_dataflow_block_(self, block: rx.DataflowBlock) -> None:
        outer = self.df_current
        self.df_current = set()
        self.visit(block.bindings)
        self.rx_defined -= self.df_current
        self.df_ended |= self.df_current
        self.df_current = outer

    def visit_var_binding_(self, b: rx.VarBinding) -> None:
        if not isinstance(b.var, rx.Var):
            self.error(f"binding of a {type(b.var).__name__}, not a variable", b)
            return
        self.where.append(f"binding {b.var.name_hint}")
        self.visit(b.value)
        self.define_rx(b.var)
        self.visit(b.var.struct_info)
        self.where.pop()

    def visit_match_cast_(self, b: rx.MatchCast) -> None:
        if not isinstance(b.var, rx.Var):
            self.error(f"match_cast of a {type(b.var).__name__}, not a variable", b)
            return
        self.where.append(f"binding {b.var.name_hint}")
        self.visit(b.value)
        self.define_symbolic(b.struct_info)
        self.define_rx(b.var)
        self.visit(b.var.struct_info)
        self.where.pop()

    def visit_call_(self, call: rx.Call) -> None:
        op = call.op
        if type(op).visit_key == "op":
            try:
                opdef = find_op_def(op)
            except KeyError:
                self.error(f"unknown op {op.name}", call)
                self.visit(call.args)
                return
            self.check_arity(opdef, call)
            if not opdef.pure and self.df_current is not None:
                self.error(f"impure call R.{opdef.script_name} inside a dataflow block", call)
            if op.name in _CALL_TIR_FAMILY and call.args:
                self.check_call_tir_target(call)
        else:
            callee = self.visit_callee(op)
            if self.df_current is not None and not self.callee_is_pure(op, callee):
                self.error("impure call inside a dataflow block", call)
        self.visit(call.args)
        self.visit(call.sinfo_args)
        if self.check_sinfo and call.struct_info is None:
            self.error("call has no struct info", call)

    def check_arity(self, opdef: Any, call: rx.Call) -> None:
        """An op call has as many arguments as the op takes (optional ones may be left out)."""
        n, most = len(call.args), len(opdef.inputs)
        least = most - opdef.num_optional - (1 if opdef.variadic else 0)
        if n < least or (n > most and not opdef.variadic):
            want = str(most) if least == most else f"{least} to {most}"
            self.error(f"R.{opdef.script_name} takes {want} arguments, got {n}", call)

    def visit_callee(self, op: Any) -> Node | None:
        """Check the callee of a non-op call; returns the module function it names, if any."""
        if type(op).visit_key == "global_var":
            return self.use_global_var(op)
        self.visit(op)
        return None

    def callee_is_pure(self, op: Any, callee: Node | None) -> bool:
        """False for calls known to have side effects (extern functions, impure functions)."""
        if type(op).visit_key == "extern_func":
            return False
        if callee is not None:
            return getattr(callee, "is_pure", True)
        return getattr(getattr(op, "struct_info", None), "purity", True)

    def check_call_tir_target(self, call: rx.Call) -> None:
        """The first argument of call_tir names a PrimFunc of the module."""
        target = call.args[0]
        if type(target).visit_key != "global_var" or self.mod is None:
            return
        func = self.funcs.get(target)
        if func is not None and type(func).visit_key != "prim_func":
            self.error(f"call_tir target {target.name_hint} is not a PrimFunc", call)

    # ------------------------------------------------------------ TIR: definitions and uses
    def define_tir(self, var: tir.Var) -> None:
        """A loop, let or block iterator defines ``var`` (TIR is SSA: once per function)."""
        if id(var) in self.tir_ever:
            self.error(f"TIR variable {var.name} defined twice", var)
        self.tir_ever.add(id(var))
        self.tir_defined.add(id(var))

    def visit_tir_var_(self, var: tir.Var) -> None:
        if id(var) in self.tir_defined or id(var) in self.block_vars_visible:
            return
        if id(var) in self.block_vars_all:
            self.error(f"block iter var {var.name} used outside its block", var)
        else:
            self.error(f"{self.tir_var_kind} {var.name} used before definition", var)

    def define_buffer(self, buf: tir.Buffer, implicit_vars: bool) -> None:
        """Declare ``buf``; buffer_map / match_buffer buffers also define the vars in their shape."""
        if implicit_vars:
            for v in (buf.data, *_tir_vars_in((buf.shape, buf.strides, buf.elem_offset))):
                self.tir_defined.add(id(v))
        else:
            self.visit((buf.shape, buf.strides, buf.elem_offset))
            self.tir_defined.add(id(buf.data))
        self.buffers.add(id(buf))

    def use_buffer(self, buf: tir.Buffer) -> None:
        """A load, store or region reads ``buf``; an allocated data pointer also declares it."""
        if id(buf) not in self.buffers and id(buf.data) not in self.tir_defined:
            self.error(f"TIR buffer {buf.name} used but not defined", buf)

    def visit_buffer_(self, buf: tir.Buffer) -> None:
        self.use_buffer(buf)

    # ------------------------------------------------------------ TIR: structure
    def visit_prim_func_(self, func: tir.PrimFunc) -> None:
        saved = (self.tir_defined, self.tir_ever, self.buffers, self.block_vars_visible, self.block_vars_all,
                 self.tir_var_kind)
        self.tir_defined, self.tir_ever, self.buffers = set(), set(), set()
        self.block_vars_visible, self.block_vars_all = set(), set()
        self.tir_var_kind = "TIR variable"
        for p in func.params:
            if isinstance(p, tir.Var):
                self.define_tir(p)
            else:
                self.error(f"PrimFunc parameter {p!r} is not a TIR variable", func)
        params = {id(p) for p in func.params}
        for key, buf in func.buffer_map.items():
            if id(key) not in params:
                self.error(f"buffer_map key {getattr(key, 'name', key)!r} is not a parameter", func)
            if not isinstance(buf, tir.Buffer):
                self.error(f"buffer_map entry of {getattr(key, 'name', key)!r} is not a Buffer", func)
                continue
            self.define_buffer(buf, implicit_vars=True)
        self.visit(func.body)
        (self.tir_defined, self.tir_ever, self.buffers, self.block_vars_visible,
         self.block_vars_all, self.tir_var_kind) = saved

    def scoped(self, var: tir.Var, body: Any) -> None:
        """Visit ``body`` with ``var`` defined."""
        self.define_tir(var)
        self.visit(body)
        self.tir_defined.discard(id(var))

    def visit_for_(self, loop: tir.For) -> None:
        self.visit((loop.min, loop.extent, loop.step))
        self.scoped(loop.loop_var, loop.body)

    def visit_let_stmt_(self, s: tir.LetStmt) -> None:
        self.visit(s.value)
        self.scoped(s.var, s.body)

    def visit_tir_let_(self, e: tir.Let) -> None:
        self.visit(e.value)
        self.scoped(e.var, e.body)

    def visit_allocate_(self, s: tir.Allocate) -> None:
        self.visit((s.extents, s.condition))
        self.scoped(s.buffer_var, s.body)

    def visit_allocate_const_(self, s: tir.AllocateConst) -> None:
        self.visit(s.extents)
        self.scoped(s.buffer_var, s.body)

    def visit_attr_stmt_(self, s: tir.AttrStmt) -> None:
        self.visit(s.value)
        node = s.node
        if type(node).visit_key == "iter_var" and s.attr_key in ("thread_extent", "virtual_thread"):
            self.scoped(node.var, s.body)  # T.launch_thread defines the thread variable
        else:
            self.visit(s.body)

    def visit_decl_buffer_(self, s: tir.DeclBuffer) -> None:
        self.define_buffer(s.buffer, implicit_vars=False)
        self.visit(s.body)
        self.buffers.discard(id(s.buffer))

    def visit_buffer_load_(self, e: tir.BufferLoad) -> None:
        self.use_buffer(e.buffer)
        self.visit(e.indices)

    def visit_buffer_store_(self, s: tir.BufferStore) -> None:
        self.use_buffer(s.buffer)
        lanes = max((parse_dtype(i.dtype).lanes for i in s.indices), default=1)
        if lanes > 1 and parse_dtype(s.value.dtype).lanes == 1:
            self.error(f"a store into {lanes} lanes of {s.buffer.name} takes a value of {s.value.dtype}", s)
        self.visit((s.value, s.indices))

    def visit_buffer_region_(self, r: tir.BufferRegion) -> None:
        self.use_buffer(r.buffer)
        self.visit(r.region)

    def visit_tir_call_(self, c: tir.Call) -> None:
        self.visit(c.op)  # a GlobalVar callee is a use; an intrinsic's name (a str) is skipped
        self.visit(c.args)

    def visit_block_realize_(self, br: tir.BlockRealize) -> None:
        self.visit((br.iter_values, br.predicate))
        block = br.block
        if isinstance(block, tir.Block) and len(br.iter_values) != len(block.iter_vars):
            self.error(f"block {block.name_hint} has {len(block.iter_vars)} iter vars but "
                       f"{len(br.iter_values)} iter values", br)
        self.visit(block)

    def visit_block_(self, block: tir.Block) -> None:
        self.where.append(f"block {block.name_hint}")
        try:
            self.check_block(block)
        finally:
            self.where.pop()

    def check_block(self, block: tir.Block) -> None:
        for iv in block.iter_vars:
            self.visit(iv.dom)
        outer_visible, outer_buffers = self.block_vars_visible, set(self.buffers)
        # Inside a block only its own iterators are visible (outer ones come in via iter_values).
        self.block_vars_visible = set()
        for iv in block.iter_vars:
            if id(iv.var) in self.tir_ever:
                self.error(f"TIR variable {iv.var.name} defined twice", iv.var)
            self.tir_ever.add(id(iv.var))
            self.block_vars_visible.add(id(iv.var))
            self.block_vars_all.add(id(iv.var))
        for buf in block.alloc_buffers:
            self.define_buffer(buf, implicit_vars=False)
        for mb in block.match_buffers:
            self.visit(mb.source)
            self.define_buffer(mb.buffer, implicit_vars=True)
        self.visit((block.reads, block.writes, block.init, block.body))
        self.block_vars_visible, self.buffers = outer_visible, outer_buffers


def well_formed_errors(obj: Any, check_struct_info: bool = True) -> list[str]:
    """Every well-formedness problem of a module or function, each with its location when known."""
    checker = _Checker(obj if isinstance(obj, IRModule) else None, check_struct_info)
    if isinstance(obj, IRModule):
        checker.check_module(obj)
    else:
        checker.guarded(type(obj).__name__, obj)
    return checker.errors


def well_formed(obj: Any, check_struct_info: bool = True) -> bool:
    """True when ``obj`` (an IRModule, Relax Function or PrimFunc) is well formed."""
    return not well_formed_errors(obj, check_struct_info)
