"""TIR printing: expressions (with TVM's choice between operator sugar and constructor form),
buffers and their declarations, statements with concise scoping, loops (``T.grid`` folding),
blocks (``T.axis.remap`` grouping) and ``@T.prim_func`` functions."""
from __future__ import annotations

from collections import Counter
from typing import Any

from tvmlite.ir import tir
from tvmlite.ir.dtype import parse_dtype
from tvmlite.ir.intrinsics import Intrinsic, intrinsic
from tvmlite.ir.module import GlobalVar

from .analysis import (common_prefix, contains_block_realize, dtype_of,
                       expr_deep_equal, fold_add, fold_mul, inline_params, is_one, is_zero, tir_vars,
                       uses_var, would_fold)
from .docs import (P_ADD, P_AND, P_ATOM, P_CMP, P_LITERAL, P_MUL, P_NOT, P_OR, Comment, Func, If,
                   Line, Scope, binary, call, paren, tuple_text)
from .literals import dtype_literal, format_bool, format_float, quote
from .metadata import STRING_KEY
from .namer import Frame, sanitize

__all__ = ["TIRPrinter"]

# How the variables of a buffer are defined along with it (TVM's BufferVarDefinition).
DEF_NONE, DEF_DATA, DEF_MATCH = 0, 1, 2

# Operators printed with Python syntax (when TVM would rebuild the same node from it).
_SUGAR: dict[type, tuple[str, int]] = {
    tir.Add: ("+", P_ADD), tir.Sub: ("-", P_ADD), tir.Mul: ("*", P_MUL),
    tir.FloorDiv: ("//", P_MUL), tir.FloorMod: ("%", P_MUL),
    tir.LT: ("<", P_CMP), tir.LE: ("<=", P_CMP), tir.GT: (">", P_CMP), tir.GE: (">=", P_CMP),
    tir.EQ: ("==", P_CMP), tir.NE: ("!=", P_CMP), tir.And: ("and", P_AND), tir.Or: ("or", P_OR),
}
_ITER_TYPE = {0: "DataPar", 1: "ThreadIndex", 2: "CommReduce", 3: "Ordered", 4: "Opaque"}
_AXIS_KIND = {0: "spatial", 2: "reduce", 3: "scan", 4: "opaque"}


def _statement_of(value: Any) -> str | None:
    """The keyword an evaluated call prints as (``return`` for ``tir.ret``), or None."""
    if type(value) is not tir.Call or not isinstance(value.op, str) or len(value.args) != 1:
        return None
    info = intrinsic(value.op.removeprefix("tir."))
    return info.statement if info is not None else None


def _is_int_dtype(dtype: Any) -> bool:
    try:
        return parse_dtype(dtype).code in ("int", "uint")
    except (ValueError, TypeError):
        return False


class TIRPrinter:
    """The TIR part of the printer (mixed into the full printer)."""

    # ================================================================ helpers
    def define_var(self, var: tir.Var, frame: Frame) -> str:
        """Define a TIR variable in ``frame`` (or return its existing name)."""
        doc = self.names.get(var)
        if doc is not None:
            return doc
        return self.names.define(var, frame, var.name or "v")

    def define_buffer(self, buf: tir.Buffer, frame: Frame) -> str:
        """Define a buffer name in ``frame``."""
        return self.names.define(buf, frame, buf.name or "buffer")

    def var_creation(self, var: tir.Var) -> str:
        """``T.int64()``, ``T.int32(is_size_var=True)``, ``T.handle("float32", "global")``."""
        kwargs = [("is_size_var", "True")] if isinstance(var, tir.SizeVar) else []
        ann = var.type_annotation
        if isinstance(ann, tir.PointerType):
            args = [dtype_literal(ann.element_dtype)]
            if ann.storage_scope:
                args.append(quote(ann.storage_scope))
            return call(self.T("handle"), args, kwargs)[0]
        return call(self.T(str(var.dtype)), (), kwargs)[0]

    def type_annotation(self, var: tir.Var) -> str:
        """The annotation of a parameter or let variable: ``T.int32``, ``T.handle(...)``."""
        ann = var.type_annotation
        if isinstance(ann, tir.PointerType):
            return self.visit_pointer_type_(ann)[0]
        return self.T(str(var.dtype))

    def get_prefix(self) -> dict:
        """The common-prefix table of the function being printed (computed on first use)."""
        if self.prefix is None:
            self.prefix = common_prefix(self.prefix_root) if self.prefix_root is not None else {}
        return self.prefix

    def find_lowest_def(self, obj: Any) -> Frame | None:
        """The deepest open TIR frame enclosing every use of ``obj`` (TVM's FindLowestVarDef)."""
        path = self.get_prefix().get(obj)
        if path is None:
            return None
        by_node: dict[int, Frame] = {}
        fallback = None
        for f in reversed(self.frames):
            if f.kind != "tir" or f.sealed:
                continue
            if f.node is not None:
                by_node[id(f.node)] = f
            elif fallback is None:
                fallback = f
        for node in reversed(path):
            f = by_node.get(id(node))
            if f is not None:
                return f
        return fallback

    def body_into(self, stmt: Any, frame: Frame) -> None:
        """Print a statement body into ``frame`` (TVM's AsDocBody)."""
        if type(stmt) is tir.SeqStmt:
            seq = stmt.seq
            n = len(seq)
            for i, s in enumerate(seq):
                frame.allow_concise = i == n - 1
                self.emit(frame, self.stmt(s))
        else:
            frame.allow_concise = True
            self.emit(frame, self.stmt(stmt))

    def concise(self) -> bool:
        """Whether the statement being printed may use the flat (concise) form."""
        f = self.frames[-1] if self.frames else None
        return bool(f is not None and f.kind == "tir" and f.allow_concise)

    @staticmethod
    def concise_scoping(lhs: str | None, rhs: str, body: list, concise: bool) -> Any:
        if concise:
            first = Line(f"{lhs} = {rhs}" if lhs is not None else rhs)
            return [first] + body
        return Scope(f"with {rhs} as {lhs}" if lhs is not None else f"with {rhs}", body)

    # ================================================================ buffers
    def buffer_ref(self, buf: tir.Buffer) -> str:
        """The name of a buffer, defining it (``A = T.Buffer(...)``) where needed."""
        doc = self.names.get(buf)
        if doc is not None:
            return doc
        frame = self.find_lowest_def(buf)
        if frame is None:
            return sanitize(buf.name or "buffer")
        name = self.define_buffer(buf, frame)
        rhs = self.buffer_decl(buf, "Buffer", [], frame, DEF_DATA)
        frame.stmts.append(Line(f"{name} = {rhs}"))
        return name

    def buffer_attrs(self, buf: tir.Buffer, frame: Frame, mode: int) -> dict[str, str]:
        """The printed fields of a buffer declaration; defines the variables it introduces."""
        names = self.names
        kw: dict[str, str] = {}
        use_count: Counter = Counter()
        for e in (buf.elem_offset, buf.data, *buf.strides, *buf.shape):
            if e is None:
                continue
            if isinstance(e, tir.Var):
                use_count[e] += 1
            elif not isinstance(e, (tir.IntImm, tir.FloatImm)):
                for x in tir_vars(e):
                    use_count[x] += 1
        lhs: list[str] = []
        rhs: list[str] = []

        def is_new(e: Any) -> bool:
            return isinstance(e, tir.Var) and not names.is_defined(e)

        def out_of_line(v: tir.Var) -> None:
            lhs.append(self.define_var(v, frame))
            rhs.append(self.var_creation(v))

        def try_inline(v: tir.Var, source: Any) -> bool:
            if use_count[v] == 1:
                names.define_doc(v, frame, source)
                return True
            out_of_line(v)
            return False

        shape = []
        for e in buf.shape:
            if is_new(e):
                out_of_line(e)
            shape.append(self.text(e))
        kw["shape"] = tuple_text(shape)
        if buf.dtype != "float32":
            kw["dtype"] = dtype_literal(buf.dtype)
        inline_data = False
        data = buf.data
        if is_new(data):
            if mode >= DEF_DATA:
                inline_data = try_inline(data, lambda: self.buffer_ref(buf) + ".data")
            else:
                out_of_line(data)
        if not inline_data:
            kw["data"] = self.text(data)
        if buf.strides:
            strides = []
            for i, e in enumerate(buf.strides):
                if is_new(e) and try_inline(e, lambda i=i: f"{self.buffer_ref(buf)}.strides[{i}]"):
                    strides.append(quote(e.name))
                    continue
                strides.append(self.text(e))
            kw["strides"] = tuple_text(strides)
        needs_factor = False
        eo = buf.elem_offset
        if eo is None:
            pass
        elif isinstance(eo, tir.IntImm):
            if eo.value != 0:
                kw["elem_offset"] = self.text(eo)
        elif is_new(eo):
            if not try_inline(eo, lambda: self.buffer_ref(buf) + ".elem_offset"):
                # TVM drops it here; printing it keeps the text faithful to the IR.
                kw["elem_offset"] = self.text(eo)
            needs_factor = True
        else:
            kw["elem_offset"] = self.text(eo)
        if buf.scope not in ("global", ""):
            kw["scope"] = quote(buf.scope)
        if buf.data_alignment != 64:
            kw["align"] = str(buf.data_alignment)
        if needs_factor or buf.offset_factor != 1:
            kw["offset_factor"] = str(buf.offset_factor)
        if buf.buffer_type != "default":
            kw["buffer_type"] = '"auto"'
        if buf.axis_separators:
            kw["axis_separators"] = self.value(tuple(buf.axis_separators))
        if len(lhs) == 1:
            frame.stmts.append(Line(f"{lhs[0]} = {rhs[0]}"))
        elif lhs:
            frame.stmts.append(Line(f"{', '.join(lhs)} = {', '.join(rhs)}"))
        return kw

    def buffer_decl(self, buf: tir.Buffer, method: str, args: list[str], frame: Frame,
                    mode: int) -> str:
        """``T.<method>(args, shape, dtype, data=..., ...)``."""
        kw = self.buffer_attrs(buf, frame, mode)
        pos = list(args)
        pos.append(kw.pop("shape"))
        if "dtype" in kw:
            pos.append(kw.pop("dtype"))
        return call(self.T(method), pos, list(kw.items()))[0]

    def buffer_annotation(self, buf: tir.Buffer, frame: Frame) -> str:
        """``T.Buffer((shape), "dtype")`` for an inlined parameter (dtype always shown)."""
        kw = self.buffer_attrs(buf, frame, DEF_DATA)
        dtype = kw.get("dtype") or dtype_literal(buf.dtype)
        return f"{self.T('Buffer')}({kw['shape']}, {dtype})"

    def buffer_indices(self, indices: tuple) -> list[str]:
        """Indices, with constant-stride Ramps as slices (``A[0:4]``, ``A[i:i + 8:2]``)."""
        out = []
        for idx in indices:
            # a zero stride has no slice form (its stop would equal its start): it stays T.Ramp(...)
            if type(idx) is tir.Ramp and type(idx.stride) is tir.IntImm and idx.stride.value != 0:
                stride = idx.stride
                stop = fold_add(idx.base, fold_mul(tir.IntImm(stride.dtype, idx.lanes), stride))
                text = f"{self.text(idx.base)}:{self.text(stop)}"
                if stride.value != 1:
                    text += ":" + self.text(stride)
                out.append(text)
            else:
                out.append(self.text(idx))
        return out

    def region_slices(self, region: tuple) -> list[str]:
        """A region: ``vi`` for an extent of one, ``lo:hi`` otherwise."""
        out = []
        for r in region:
            lo = self.text(r.min)
            if is_one(r.extent):
                out.append(lo)
            else:
                out.append(f"{lo}:{self.text(fold_add(r.min, r.extent))}")
        return out

    @staticmethod
    def _subscript(base: str, items: list[str]) -> str:
        return f"{base}[{', '.join(items)}]" if items else f"{base}[()]"

    # ================================================================ expressions
    def visit_int_imm_(self, e: tir.IntImm) -> tuple:
        if self.token == "relax":
            if e.dtype == "bool":
                return (format_bool(e.value), P_LITERAL)
            return (str(e.value), P_LITERAL)
        if e.dtype == "int32":
            return (str(e.value), P_LITERAL)
        if e.dtype == "bool":
            return (f"{self.T('bool')}({format_bool(e.value)})", P_ATOM)
        return (f"{self.T(e.dtype)}({e.value})", P_ATOM)

    def visit_float_imm_(self, e: tir.FloatImm) -> tuple:
        return (f"{self.T(e.dtype)}({format_float(e.value)})", P_ATOM)

    def visit_tir_string_imm_(self, e: tir.StringImm) -> tuple:
        if "\n" in e.value:
            return self.add_metadata(STRING_KEY, e)
        return (quote(e.value), P_LITERAL)

    def visit_tir_var_(self, v: tir.Var) -> tuple:
        doc = self.names.get(v)
        if doc is not None:
            return (doc, P_ATOM)
        if self.token == "relax":
            return self.relax_tir_var(v)  # type: ignore[attr-defined]
        frame = self.find_lowest_def(v)
        if frame is None:
            return (sanitize(v.name or "v"), P_ATOM)
        name = self.define_var(v, frame)
        frame.stmts.append(Line(f"{name} = {self.var_creation(v)}"))
        return (name, P_ATOM)

    def visit_cast_(self, e: tir.Cast) -> tuple:
        return call(self.T("Cast"), [dtype_literal(e.dtype), self.text(e.value)])

    def _binop(self, e: tir.BinaryOp) -> tuple:
        a = self.expr(e.a)
        b = self.expr(e.b)
        cls = type(e)
        sugar = _SUGAR.get(cls)
        memo = self.dtype_memo
        if sugar is not None:
            if would_fold(e, memo=memo):
                return call(self.T(cls.script_name), [a[0], b[0]])
            return binary(a, sugar[0], b, sugar[1])
        if cls is tir.Div:
            if (would_fold(e, check_types=False)
                    or (_is_int_dtype(dtype_of(e.a, memo)) and _is_int_dtype(dtype_of(e.b, memo)))):
                return call(self.T("Div"), [a[0], b[0]])
            return binary(a, "/", b, P_MUL)
        # Mod, Min, Max and unknown binary nodes: T.truncmod / T.min / T.max
        return call(self.T(cls.script_name or cls.__name__), [a[0], b[0]])

    visit_add_ = visit_sub_ = visit_mul_ = visit_div_ = visit_mod_ = _binop
    visit_floor_div_ = visit_floor_mod_ = visit_min_ = visit_max_ = _binop
    visit_eq_ = visit_ne_ = visit_lt_ = visit_le_ = visit_gt_ = visit_ge_ = _binop
    visit_and_ = visit_or_ = _binop

    def visit_not_(self, e: tir.Not) -> tuple:
        a = self.expr(e.a)
        if a[1] == P_LITERAL:
            return call(self.T("Not"), [a[0]])
        return ("not " + paren(a, P_NOT), P_NOT)

    def visit_select_(self, e: tir.Select) -> tuple:
        return call(self.T("Select"), [self.text(e.condition), self.text(e.true_value),
                                       self.text(e.false_value)])

    def visit_ramp_(self, e: tir.Ramp) -> tuple:
        return call(self.T("Ramp"), [self.text(e.base), self.text(e.stride), self.value(e.lanes)])

    def visit_broadcast_(self, e: tir.Broadcast) -> tuple:
        return call(self.T("Broadcast"), [self.text(e.value), self.value(e.lanes)])

    def visit_tir_let_(self, e: tir.Let) -> tuple:
        var = self.text(e.var)
        value = self.text(e.value)
        body = self.text(e.body)
        return call(self.T("Let"), [body], [("where", "{" + f"{var}: {value}" + "}")])

    def visit_comm_reducer_(self, r: tir.CommReducer) -> tuple:
        """``T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)])``; the parameters are scoped to it."""
        frame = self.push("tir", r)
        try:
            params = [self.names.define(v, frame, v.name or "x") for v in (*r.lhs, *r.rhs)]
            items = [self.text(e) for e in r.result]
        finally:
            self.pop(frame)
        result = items[0] if len(items) == 1 else "(" + ", ".join(items) + ")"
        identity = "[" + ", ".join(self.text(e) for e in r.identity_element) + "]"
        return call(self.T("comm_reducer"), [f"lambda {', '.join(params)}: {result}", identity])

    def visit_target_(self, t: tir.Target) -> tuple:
        """``T.target("llvm")`` for a bare kind, else ``T.target({...})`` with its options."""
        config = t.config
        if tuple(config.keys()) == ("kind",):
            return call(self.T("target"), [quote(config["kind"])])
        return call(self.T("target"), [self.value(config)])

    def visit_index_map_(self, m: Any) -> tuple:
        """``T.index_map(lambda i, j: (j, i))``; the lambda's parameters are scoped to it."""
        frame = self.push("tir", m)
        try:
            params = [self.names.define(v, frame, v.name or "i") for v in m.initial_indices]
            items = [self.text(e) for e in m.final_indices]
        finally:
            self.pop(frame)
        result = items[0] if len(items) == 1 else "(" + ", ".join(items) + ")"
        kwargs = []
        dtypes = {v.dtype for v in m.initial_indices}
        if dtypes and dtypes != {"int64"}:
            kwargs.append(("index_dtype", dtype_literal(dtypes.pop())))
        return call(self.T("index_map"), [f"lambda {', '.join(params)}: {result}"], kwargs)

    def visit_tir_call_(self, e: tir.Call) -> tuple:
        op = e.op
        if isinstance(op, GlobalVar):
            callee = self.text(op)
            return call(callee, [self.text(a) for a in e.args])
        name = op if isinstance(op, str) else getattr(op, "name", None)
        if not isinstance(name, str):
            return self.generic_visit(e)
        short = name.removeprefix("tir.")
        info = intrinsic(short)  # its script name and whether the dtype is written first or last
        args = [dtype_literal(e.dtype)] if info is not None and info.dtype_first else []
        args.extend(self.text(a) for a in e.args)
        if info is not None and info.dtype_last:
            args.append(dtype_literal(e.dtype))
        kwargs = []
        if info is not None and _implied_dtype(info, e) not in (None, e.dtype):
            kwargs.append(("dtype", dtype_literal(e.dtype)))  # T.exp(x, dtype="float32") of a float16 x
        return call(self.T(info.script_name if info is not None else short), args, kwargs)

    def visit_buffer_load_(self, e: tir.BufferLoad) -> tuple:
        base = self.buffer_ref(e.buffer)
        return (self._subscript(base, self.buffer_indices(e.indices)), P_ATOM)

    def visit_buffer_(self, buf: tir.Buffer) -> tuple:
        return (self.buffer_ref(buf), P_ATOM)

    def visit_buffer_region_(self, r: tir.BufferRegion) -> tuple:
        base = self.buffer_ref(r.buffer)
        return (self._subscript(base, self.region_slices(r.region)), P_ATOM)

    def visit_range_(self, r: tir.Range) -> tuple:
        tok = self.token
        if tok == "relax":
            return call(self.R("Range"), [self.text(r.min), self.text(fold_add(r.extent, r.min))])
        prefix = self.T("Range") if tok == "tir" else self.I("Range")
        return call(prefix, [self.text(r.min), self.text(fold_add(r.min, r.extent))])

    def visit_iter_var_(self, iv: tir.IterVar) -> tuple:
        dom = self.text(iv.dom) if iv.dom is not None else "None"
        return call(self.T("iter_var"), [self.text(iv.var), dom,
                                         quote(_ITER_TYPE.get(iv.iter_type, str(iv.iter_type))),
                                         quote(iv.thread_tag)])

    def visit_pointer_type_(self, t: tir.PointerType) -> tuple:
        args = [dtype_literal(t.element_dtype)]
        if t.storage_scope:
            args.append(quote(t.storage_scope))
        return call(self.T("handle"), args)

    # ================================================================ statements
    def visit_buffer_store_(self, s: tir.BufferStore) -> Any:
        base = self.buffer_ref(s.buffer)
        lhs = self._subscript(base, self.buffer_indices(s.indices))
        return Line(f"{lhs} = {self.text(s.value)}")

    def visit_evaluate_(self, s: tir.Evaluate) -> Any:
        v = s.value
        statement = _statement_of(v)
        if statement is not None:
            return Line(f"{statement} " + self.text(v.args[0]))
        text = self.text(v)
        if type(v) is tir.Call:
            return Line(text)
        return Line(call(self.T("evaluate"), [text])[0])

    def visit_seq_stmt_(self, s: tir.SeqStmt) -> Any:
        f = self.push("tir", s)
        try:
            self.body_into(s, f)
            return f.stmts
        finally:
            self.pop(f)

    def visit_let_stmt_(self, s: tir.LetStmt) -> Any:
        concise = self.concise()
        var = s.var
        type_doc = self.type_annotation(var)
        rhs = self.text(s.value)
        f = self.push("tir", s)
        try:
            defined = self.names.is_defined(var)
            if not defined:
                self.define_var(var, f)
            lhs = self.text(var)
            self.body_into(s.body, f)
            stmts = f.stmts
        finally:
            self.pop(f)
        if defined:
            return Scope(f"with {self.T('LetStmt')}({rhs}, var={lhs})", stmts)
        if concise:
            return [Line(f"{lhs}: {type_doc} = {rhs}")] + stmts
        if isinstance(var.type_annotation, tir.PointerType):
            return Scope(f"with {self.T('LetStmt')}({rhs}, {type_doc}) as {lhs}", stmts)
        return Scope(f"with {self.T('LetStmt')}({rhs}) as {lhs}", stmts)

    def visit_assert_stmt_(self, s: tir.AssertStmt) -> Any:
        concise = self.concise()
        cond = self.text(s.condition)
        msg = self.text(s.message)
        f = self.push("tir", s)
        try:
            self.body_into(s.body, f)
            stmts = f.stmts
        finally:
            self.pop(f)
        if concise:
            return [Line(f"assert {cond}, {msg}")] + stmts
        return Scope(f"with {self.T('Assert')}({cond}, {msg})", stmts)

    def visit_break_(self, s: tir.Break) -> Any:
        """``T.break_loop()``, as TVM prints ``break``."""
        return Line(call(self.T("break_loop"), [])[0])

    def visit_continue_(self, s: tir.Continue) -> Any:
        """``T.continue_loop()``, as TVM prints ``continue``."""
        return Line(call(self.T("continue_loop"), [])[0])

    def visit_while_(self, s: tir.While) -> Any:
        cond = self.text(s.condition)
        f = self.push("tir", s)
        try:
            self.body_into(s.body, f)
            return Scope(f"while {cond}", f.stmts)
        finally:
            self.pop(f)

    def visit_if_then_else_(self, s: tir.IfThenElse) -> Any:
        cond = self.text(s.condition)
        branches = []
        for case in (s.then_case, s.else_case):
            if case is None:
                branches.append([])
                continue
            f = self.push("tir", case)
            try:
                self.body_into(case, f)
                branches.append(f.stmts)
            finally:
                self.pop(f)
        return If(cond, branches[0], branches[1])

    def _decl_buffer(self, s: tir.DeclBuffer, mode: int) -> Any:
        concise = self.concise()
        rhs = self.buffer_decl(s.buffer, "decl_buffer", [], self.frames[-1], mode)
        f = self.push("tir", s)
        try:
            lhs = self.define_buffer(s.buffer, f)
            self.body_into(s.body, f)
            stmts = f.stmts
        finally:
            self.pop(f)
        return self.concise_scoping(lhs, rhs, stmts, concise)

    def visit_decl_buffer_(self, s: tir.DeclBuffer) -> Any:
        # A DeclBuffer whose data pointer is not defined yet allocates it (as the parser builds
        # ``T.decl_buffer`` without ``data=``): print it without ``data=``.
        defined = self.names.is_defined(s.buffer.data)
        return self._decl_buffer(s, DEF_NONE if defined else DEF_DATA)

    def visit_allocate_(self, s: tir.Allocate) -> Any:
        concise = self.concise()
        body = s.body
        if (type(body) is tir.DeclBuffer and body.buffer.data is s.buffer_var
                and body.buffer.dtype == s.dtype and is_one(s.condition) and not s.annotations
                and len(s.extents) == len(body.buffer.shape)
                and all(expr_deep_equal(a, b) for a, b in zip(s.extents, body.buffer.shape))):
            return self._decl_buffer(body, DEF_DATA)
        ann = s.buffer_var.type_annotation
        scope = ann.storage_scope if isinstance(ann, tir.PointerType) and ann.storage_scope else "global"
        args = ["[" + ", ".join(self.text(e) for e in s.extents) + "]", dtype_literal(s.dtype),
                quote(scope)]
        if not is_one(s.condition):
            args.append(self.text(s.condition))
        kwargs = [("annotations", self.value(s.annotations))] if s.annotations else []
        lhs = self.define_var(s.buffer_var, self.frames[-1])
        f = self.push("tir", s)
        try:
            rhs = call(self.T("allocate"), args, kwargs)[0]
            self.body_into(s.body, f)
            stmts = f.stmts
        finally:
            self.pop(f)
        return self.concise_scoping(lhs, rhs, stmts, concise)

    def visit_allocate_const_(self, s: tir.AllocateConst) -> Any:
        """``c = T.allocate_const([...], dtype, [extents])`` over its body."""
        concise = self.concise()
        fmt = format_float if parse_dtype(s.dtype).is_float else str
        args = ["[" + ", ".join(fmt(v) for v in s.data) + "]", dtype_literal(s.dtype),
                "[" + ", ".join(self.text(e) for e in s.extents) + "]"]
        kwargs = [("annotations", self.value(s.annotations))] if s.annotations else []
        lhs = self.define_var(s.buffer_var, self.frames[-1])
        f = self.push("tir", s)
        try:
            rhs = call(self.T("allocate_const"), args, kwargs)[0]
            self.body_into(s.body, f)
            stmts = f.stmts
        finally:
            self.pop(f)
        return self.concise_scoping(lhs, rhs, stmts, concise)

    def visit_attr_stmt_(self, s: tir.AttrStmt) -> Any:
        concise = self.concise()
        rhs = None
        define = None
        if s.attr_key in ("thread_extent", "virtual_thread") and isinstance(s.node, tir.IterVar):
            rhs, define = self._launch_thread(s)
        if rhs is None:
            node = s.node
            node_text = self.text(node) if node is not None else "None"
            rhs = call(self.T("attr"), [node_text, quote(s.attr_key), self.text(s.value)])[0]
        f = self.push("tir", s)
        try:
            lhs = self.define_var(define, f) if define is not None else None
            self.body_into(s.body, f)
            stmts = f.stmts
        finally:
            self.pop(f)
        return self.concise_scoping(lhs, rhs, stmts, concise)

    def _launch_thread(self, s: tir.AttrStmt) -> tuple[str, Any]:
        iv = s.node
        define = None
        if self.names.is_defined(iv.var):
            var_doc = self.text(iv.var)
        elif any(n is s for n in self.get_prefix().get(iv.var, ())):
            var_doc = quote(iv.thread_tag)
            define = iv.var
        else:
            frame = self.find_lowest_def(iv.var) or self.frames[-1]
            name = self.define_var(iv.var, frame)
            frame.stmts.append(Line(f"{name} = {call(self.T('env_thread'), [quote(iv.thread_tag)])[0]}"))
            var_doc = name
        return call(self.T("launch_thread"), [var_doc, self.text(s.value)])[0], define

    # ---------------------------------------------------------------- loops
    def visit_for_(self, loop: tir.For) -> Any:
        grid: list[tir.For] = []
        grid_vars: set = set()
        lp: Any = loop
        while type(lp) is tir.For:
            if (lp.kind != "serial" or not is_zero(lp.min) or lp.annotations
                    or (lp.step is not None and not is_one(lp.step))
                    or (grid_vars and uses_var(lp.extent, grid_vars))):
                break
            grid.append(lp)
            grid_vars.add(lp.loop_var)
            lp = lp.body
        f = self.push("tir", loop)
        f.for_loop = loop
        f.sealed = True
        try:
            if len(grid) > 1:
                lhs = []
                rhs = []
                for g in grid:
                    lhs.append(self.define_var(g.loop_var, f))
                    rhs.append(self.text(g.extent))
                f.sealed = False
                self.body_into(grid[-1].body, f)
                return Scope(f"for {', '.join(lhs)} in {self.T('grid')}({', '.join(rhs)})", f.stmts)
            lhs1 = self.define_var(loop.loop_var, f)
            has_step = loop.step is not None and not is_one(loop.step)
            args = []
            if not is_zero(loop.min) or has_step:
                args.append(self.text(loop.min))
                args.append(self.text(fold_add(loop.min, loop.extent)))
            else:
                args.append(self.text(loop.extent))
            kwargs: list[tuple[str, str]] = []
            kind = loop.kind
            if kind == "serial" and not loop.annotations:
                prefix = "range"
                if has_step:
                    args.append(self.text(loop.step))
            else:
                prefix = self.T(kind if kind in ("serial", "parallel", "vectorized", "unroll",
                                                 "thread_binding") else str(kind))
                if kind == "thread_binding":
                    tag = loop.thread_binding.thread_tag if loop.thread_binding is not None else ""
                    kwargs.append(("thread", quote(tag)))
                if loop.annotations:
                    kwargs.append(("annotations", self.value(loop.annotations)))
                if has_step:
                    kwargs.append(("step", self.text(loop.step)))
            rhs1 = call(prefix, args, kwargs)[0]
            f.sealed = False
            self.body_into(loop.body, f)
            return Scope(f"for {lhs1} in {rhs1}", f.stmts)
        finally:
            self.pop(f)

    # ---------------------------------------------------------------- blocks
    def visit_block_realize_(self, r: tir.BlockRealize) -> Any:
        return self.print_block(r.block, r)

    def visit_block_(self, b: tir.Block) -> Any:
        return self.print_block(b, None)

    def print_block(self, block: tir.Block, realize: tir.BlockRealize | None) -> Any:
        loop_vars: dict = {}
        for fr in self.frames:
            lp = fr.for_loop
            while type(lp) is tir.For:
                loop_vars[lp.loop_var] = lp
                lp = lp.body
        f = self.push("tir", block)
        try:
            stmts = f.stmts
            iter_vars = block.iter_vars
            values = realize.iter_values if realize is not None else ()
            if realize is not None and len(values) != len(iter_vars):
                stmts.append(Comment(f"tvmlite: ill-formed: {len(iter_vars)} iter vars but "
                                     f"{len(values)} iter values"))
            remap: list[int] = []

            def remappable(i: int) -> bool:
                if realize is None or i >= len(values):
                    return False
                iv = iter_vars[i]
                if iv.iter_type not in (0, 2) or iv.dom is None:
                    return False
                lp = loop_vars.get(values[i]) if isinstance(values[i], tir.Var) else None
                return (lp is not None and expr_deep_equal(lp.min, iv.dom.min)
                        and expr_deep_equal(lp.extent, iv.dom.extent))

            def single(i: int) -> None:
                iv = iter_vars[i]
                kind = _AXIS_KIND.get(iv.iter_type, "opaque")
                if iv.dom is None:
                    dom = "None"
                elif is_zero(iv.dom.min):
                    dom = self.text(iv.dom.extent)
                else:
                    dom = tuple_text([self.text(iv.dom.min),
                                      self.text(fold_add(iv.dom.min, iv.dom.extent))])
                args = [dom]
                if realize is not None and i < len(values):
                    args.append(self.text(values[i]))
                rhs = call(self.T("axis." + kind), args)[0]
                stmts.append(Line(f"{self.define_var(iv.var, f)} = {rhs}"))

            def flush() -> None:
                if not remap:
                    return
                if len(remap) == 1:
                    single(remap[0])
                else:
                    lhs = []
                    loops = []
                    kinds = []
                    for i in remap:
                        iv = iter_vars[i]
                        lhs.append(self.define_var(iv.var, f))
                        loops.append(self.text(values[i]))
                        kinds.append("S" if iv.iter_type == 0 else "R")
                    rhs = call(self.T("axis.remap"), [quote("".join(kinds)),
                                                      "[" + ", ".join(loops) + "]"])[0]
                    stmts.append(Line(f"{', '.join(lhs)} = {rhs}"))
                remap.clear()

            for i in range(len(iter_vars)):
                if remappable(i):
                    remap.append(i)
                else:
                    flush()
                    single(i)
            flush()
            if realize is not None and not is_one(realize.predicate):
                stmts.append(Line(call(self.T("where"), [self.text(realize.predicate)])[0]))
            reads = [self.text(r) for r in block.reads]
            stmts.append(Line(call(self.T("reads"), reads)[0]))
            writes = [self.text(w) for w in block.writes]
            stmts.append(Line(call(self.T("writes"), writes)[0]))
            if block.annotations:
                stmts.append(Line(call(self.T("block_attr"), [self.value(block.annotations)])[0]))
            for buf in block.alloc_buffers:
                lhs = self.define_buffer(buf, f)
                rhs = self.buffer_decl(buf, "alloc_buffer", [], f, DEF_DATA)
                stmts.append(Line(f"{lhs} = {rhs}"))
            for mb in block.match_buffers:
                self.emit(f, self.stmt(mb))
            if block.init is not None:
                fi = self.push("tir", block.init)
                try:
                    self.body_into(block.init, fi)
                    init_stmts = fi.stmts
                finally:
                    self.pop(fi)
                stmts.append(Scope(f"with {self.T('init')}()", init_stmts))
            self.body_into(block.body, f)
            kwargs = [] if realize is not None else [("no_realize", "True")]
            header = call(self.T("block"), [quote(block.name_hint)], kwargs)[0]
            return Scope("with " + header, f.stmts)
        finally:
            self.pop(f)

    def visit_match_buffer_region_(self, m: tir.MatchBufferRegion) -> Any:
        frame = self.frames[-1]
        lhs = self.define_buffer(m.buffer, frame)
        src = self.text(m.source)
        rhs = self.buffer_decl(m.buffer, "match_buffer", [src], frame, DEF_MATCH)
        return Line(f"{lhs} = {rhs}")

    # ---------------------------------------------------------------- functions
    def function_name(self, func: Any) -> str:
        """The printed name: the binding (module GlobalVar or variable), else the symbol."""
        if self.binding_names:
            return self.binding_names[-1]
        attrs = getattr(func, "attrs", None) or {}
        sym = attrs.get("global_symbol") if hasattr(attrs, "get") else None
        return sym if isinstance(sym, str) else "main"

    def visit_prim_func_(self, func: tir.PrimFunc) -> Any:
        f = self.push("tir", func, "tir")
        try:
            name = self.function_name(func)
            self.prefix_root = func
            self.prefix = None
            params = func.params
            bmap = func.buffer_map
            given_bmap = bmap
            bmap = {k: b for k, b in bmap.items() if isinstance(b, tir.Buffer)}
            inline = inline_params(func.body, params, bmap)
            args: list[str] = []
            arg_names: list[str] = []
            inlined: set[int] = set()
            for v in params:
                buf = bmap.get(v)
                if v in inline:
                    lhs = self.define_buffer(buf, f)
                    ann = self.buffer_annotation(buf, f)
                    args.append(f"{lhs}: {ann}")
                    arg_names.append(lhs)
                    inlined.add(id(buf))
                    continue
                if not isinstance(v, tir.Var):  # ill-formed: shown as is (see the comment below)
                    args.append(self.value(v))
                    arg_names.append(self.value(v))
                    continue
                ann = self.type_annotation(v)
                lhs = self.define_var(v, f)
                args.append(f"{lhs}: {ann}")
                arg_names.append(lhs)
            problems = self._signature_problems(params, given_bmap)
            f.stmts.extend(Comment(f"tvmlite: ill-formed: {p}") for p in problems)
            attrs = func.attrs
            if attrs:
                if attrs.get("global_symbol") == name:
                    shown = attrs.without("global_symbol")
                    if shown:
                        f.stmts.append(Line(call(self.T("func_attr"), [self.value(shown)])[0]))
                else:
                    f.stmts.append(Line(call(self.T("func_attr"), [self.value(attrs)])[0]))
            for i, v in enumerate(params):
                buf = bmap.get(v)
                if buf is None or id(buf) in inlined:
                    continue
                lhs = self.define_buffer(buf, f)
                rhs = self.buffer_decl(buf, "match_buffer", [arg_names[i]], f, DEF_MATCH)
                f.stmts.append(Line(f"{lhs} = {rhs}"))
            root = self._implicit_root(func.body)
            if root is not None:
                f.stmts.append(Comment('with T.block("root"):'))
                for buf in root.alloc_buffers:
                    lhs = self.define_buffer(buf, f)
                    rhs = self.buffer_decl(buf, "alloc_buffer", [], f, DEF_DATA)
                    f.stmts.append(Line(f"{lhs} = {rhs}"))
                self.body_into(root.body, f)
            else:
                self.body_into(func.body, f)
            ret = ""
            if func.ret_type is not None and func.ret_type not in ("void", ""):
                ret = " -> " + self.T(str(func.ret_type))
            deco = self.T("prim_func")
            if "global_symbol" not in attrs:
                deco += "(private=True)"
            doc = Func([deco], f"def {name}({', '.join(args)}){ret}", f.stmts)
        finally:
            self.pop(f)
        return self.header_wrapper(doc)

    def _signature_problems(self, params: Any, bmap: Any) -> list[str]:
        """What is wrong with a PrimFunc's parameters and buffer_map (printed as comments)."""
        out = [f"parameter {i} is {self.value(v)}, not a TIR variable"
               for i, v in enumerate(params) if not isinstance(v, tir.Var)]
        keys = {id(v) for v in params}
        for k, b in bmap.items():
            if not isinstance(b, tir.Buffer):
                out.append(f"buffer_map entry of {self.value(k)} is {self.value(b)}, not a Buffer")
            if id(k) not in keys:
                out.append(f"buffer_map key {getattr(k, 'name', None) or self.value(k)} is not a parameter")
        return out

    @staticmethod
    def _implicit_root(body: Any) -> tir.Block | None:
        """The root block that ``# with T.block("root"):`` stands for, if it may be hidden."""
        if type(body) is not tir.BlockRealize or body.iter_values or not is_one(body.predicate):
            return None
        root = body.block
        if root.name_hint != "root" or root.annotations or root.match_buffers or root.reads or root.writes \
                or root.init is not None:
            return None
        inner = root.body
        if root.alloc_buffers:
            return root
        if type(inner) is tir.BlockRealize:
            return root if inner.block.iter_vars else None
        return root if contains_block_realize(inner) else None


def _implied_dtype(info: Intrinsic, e: tir.Call) -> str | None:
    """The dtype the parser gives ``T.<name>(*args)`` written without ``dtype=`` (None when the
    script writes it, or the rule does not follow from the first operand)."""
    if info.dtype_first or info.dtype_last or info.parse not in (None, "operands") or info.conditional \
            or not e.args:
        return None
    try:
        return info.result_dtype(e.args[0].dtype)
    except (ValueError, AttributeError):
        return None
