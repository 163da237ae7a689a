"""VMShapeLower (TVM's ``relax.transform.VMShapeLower``): the symbolic sizes of a function live
in a shape heap, an int64 tensor ``vm.builtin.alloc_shape_heap`` makes, one slot per symbolic
variable and per compound size (``n * 2``). Each parameter is checked by
``vm.builtin.check_tensor_info``/``check_shape_info``/``check_prim_value_info``/
``check_tuple_info``, then its sizes are matched into the heap by ``vm.builtin.match_shape``;
``R.match_cast`` matches the same way; a shape with symbolic sizes becomes
``vm.builtin.make_shape`` over the heap; compound sizes are computed by a generated host PrimFunc
``shape_func`` that reads and writes the heap; a result whose struct info the body does not prove
is matched against the return annotation.

``match_shape``'s pairs after the dimension count are (kind, value): 0 the dimension must equal
the value, 1 store it into heap slot value, 2 nothing, 3 it must equal heap slot value.
``make_shape``'s pairs: 0 the value itself, 1 heap slot value. An ``R.Prim`` value is matched by
``vm.builtin.match_prim_value`` (one such pair) and a symbolic ``R.prim_value`` is read back by
``vm.builtin.make_prim_value`` (one make pair). Every message carries TVM's
``ErrorContext(...)`` text."""
from __future__ import annotations

import re

from ...ir import relax as rx
from ...ir import tir
from ...ir.arith import format_expr
from ...ir.expr_functor import ExprMutator, post_order_visit
from ...ir.module import IRModule
from ...ir.op import make_call
from ...ir.node import Map, replace
from ...ir.stmt_functor import substitute, vars_of
from ...ir.structural import structural_equal
from ...ir.struct_info import sinfo_of, unify_sinfo
from ..infra import ModulePass, PassContext, register_pass
from .common import VOID, NameSupply, call_packed, i64

__all__ = ["VMShapeLower", "MATCH_KINDS", "MAKE_KINDS"]

# match_shape's kinds (TVM's MatchShapeCode) and make_shape's (MakeShapeCode).
MATCH_KINDS = {"assert_imm": 0, "store": 1, "no_op": 2, "assert_load": 3}
MAKE_KINDS = {"imm": 0, "load": 1}


def _pv(value: int) -> rx.PrimValue:
    """``R.prim_value(value)`` of int64 (TVM prints a bare integer)."""
    return rx.PrimValue(i64(value))


def _annotation(sinfo: rx.StructInfo, in_tuple: bool = False) -> str:
    """The struct info as TVM's ErrorContext shows it (a tuple in TVM's legacy form:
    ``T.Tuple(...)``, its constant sizes as ``T.int64(2)``)."""
    if isinstance(sinfo, rx.TupleStructInfo):
        return "T.Tuple(" + ", ".join(_annotation(f, True) for f in sinfo.fields) + ")"
    if in_tuple and isinstance(sinfo, rx.TensorStructInfo) and sinfo.shape is not None:
        dims = [_legacy(d) for d in sinfo.shape]
        return f'R.Tensor(({", ".join(dims)}{"," if len(dims) == 1 else ""}), dtype="{sinfo.dtype}")'
    if in_tuple and isinstance(sinfo, rx.ShapeStructInfo) and sinfo.values is not None:
        return f'R.Shape([{", ".join(_legacy(d) for d in sinfo.values)}])'
    if isinstance(sinfo, rx.PrimStructInfo):  # TVM 0.27 shows a prim value's dtype only
        return f"T.{sinfo.dtype}"
    text = sinfo.script()
    if isinstance(sinfo, (rx.ShapeStructInfo, rx.TensorStructInfo)):
        text = text.replace('"', "") if isinstance(sinfo, rx.ShapeStructInfo) else _unquote_dims(text)
    return text


def _legacy(dim: tir.PrimExpr) -> str:
    """A size as TVM's legacy printer shows it inside a tuple: integers as ``T.int64(2)``."""
    return re.sub(r"(?<![\w.(])(\d+)(?![\w.])", r"T.int64(\1)", format_expr(dim))


def _unquote_dims(text: str) -> str:
    """A tensor annotation with its symbolic sizes unquoted (``R.Tensor((n, 784), ...)``)."""
    head, sep, rest = text.partition("dtype=")
    return head.replace('"', "") + sep + rest


def _symbolic(shape: rx.Expr) -> bool:
    """True for a shape literal with a size that is not a constant."""
    return isinstance(shape, rx.ShapeExpr) and any(not isinstance(d, tir.IntImm) for d in shape.values)


def _symbolic_prim(expr: rx.Expr) -> bool:
    """True for an integer ``R.prim_value`` of a size that is not a constant (``R.prim_value(n)``)."""
    return isinstance(expr, rx.PrimValue) and not isinstance(expr.value, tir.IntImm) \
        and expr.value.dtype.startswith("int")


def _nested_shapes(args: tuple) -> list:
    """The symbolic shape literals and prim values among a call's arguments (tuples' fields included)."""
    out: list = []
    for a in args:
        if _symbolic(a) or _symbolic_prim(a):
            out.append(a)
        elif isinstance(a, rx.Tuple):
            out.extend(_nested_shapes(a.fields))
    return out


def _sizes(expr: rx.Expr) -> tuple:
    """The sizes of a symbolic shape literal, or the value of a symbolic prim value."""
    return (expr.value,) if isinstance(expr, rx.PrimValue) else tuple(expr.values)


def _dims(sinfo: rx.StructInfo) -> tuple | None:
    """The sizes a tensor or shape struct info states, None when unknown."""
    if isinstance(sinfo, rx.TensorStructInfo):
        return None if sinfo.shape is None else tuple(sinfo.shape)
    if isinstance(sinfo, rx.ShapeStructInfo):
        return sinfo.values
    return None


class _FunctionLowering:
    """The lowering of one Relax function: its heap slots, the bindings emitted so far."""

    def __init__(self, name: str, func: rx.Function, mod: IRModule, shape_funcs: NameSupply) -> None:
        self.name, self.func, self.mod, self.shape_funcs = name, func, mod, shape_funcs
        self.slots: list[tir.PrimExpr] = []  # heap slot i holds slots[i]
        self.defined: set[int] = set()  # the slots known (matched or computed) so far
        self.out: list[rx.Binding] = []
        self.remap: dict[rx.Var, rx.Var] = {}
        self.gv_names = NameSupply()
        self.heap: rx.Var | None = None
        self.dataflow = False  # emitting into a dataflow block
        self._collect()

    # ---- heap slots
    def _slot_of(self, expr: tir.PrimExpr) -> int | None:
        """The heap slot of a size (None for a constant)."""
        if isinstance(expr, tir.IntImm):
            return None
        for i, s in enumerate(self.slots):
            if s is expr or (not isinstance(expr, tir.Var) and not isinstance(s, tir.Var)
                             and structural_equal(s, expr)):
                return i
        return None

    def _add(self, expr: tir.PrimExpr) -> None:
        """Give ``expr`` (and the variables in it first) a heap slot."""
        if isinstance(expr, tir.IntImm) or self._slot_of(expr) is not None:
            return
        if not isinstance(expr, tir.Var):
            for v in vars_of(expr):
                self._add(v)
        self.slots.append(expr)

    def _add_sinfo(self, sinfo: rx.StructInfo) -> None:
        """Slots for the sizes of a struct info (tuples field by field)."""
        if isinstance(sinfo, rx.TupleStructInfo):
            for f in sinfo.fields:
                self._add_sinfo(f)
            return
        for d in _dims(sinfo) or ():
            self._add(d)
        if isinstance(sinfo, rx.PrimStructInfo) and sinfo.value is not None:
            self._add(sinfo.value)

    def _collect(self) -> None:
        """Slots in TVM's order: parameters, then the bindings' sizes, then the result."""
        for p in self.func.params:
            self._add_sinfo(p.struct_info)
        self._collect_seq(self.func.body)
        self._add_sinfo(self.func.ret_struct_info)

    def _collect_seq(self, seq: rx.SeqExpr) -> None:
        """Slots of the match_casts and shapes of a sequence (if branches included)."""
        for block in seq.blocks:
            for b in block.bindings:
                if isinstance(b, rx.MatchCast):
                    self._add_sinfo(b.struct_info)
                elif isinstance(b.value, rx.ShapeExpr):
                    for d in b.value.values:
                        self._add(d)
                elif _symbolic_prim(b.value):
                    self._add(b.value.value)
                elif isinstance(b.value, rx.Call):
                    for shape in _nested_shapes(b.value.args):
                        for d in _sizes(shape):
                            self._add(d)
                elif isinstance(b.value, rx.If):
                    self._collect_seq(b.value.true_branch)
                    self._collect_seq(b.value.false_branch)
        for shape in _nested_shapes((seq.body,)):
            for d in _sizes(shape):
                self._add(d)

    # ---- emitting
    def _emit(self, value: rx.Expr, name: str = "gv", sinfo: rx.StructInfo | None = None) -> rx.Var:
        """Bind ``value`` to a new variable."""
        var = self._var(name, sinfo if sinfo is not None else sinfo_of(value))
        self.out.append(rx.VarBinding(var, value))
        return var

    def _context(self, loc: str, sinfo: rx.StructInfo, param: rx.Var | None = None) -> rx.StringImm:
        """TVM's ``ErrorContext(...)`` text of a check."""
        who = f", param={param.name_hint}" if param is not None else ""
        return rx.StringImm(f"ErrorContext(fn={self.name}, loc={loc}{who}, annotation={_annotation(sinfo)}) ")

    def _check(self, value: rx.Expr, sinfo: rx.StructInfo, err: rx.StringImm, known: rx.StructInfo | None,
               matches: list) -> None:
        """The kind, rank and dtype checks of ``value`` against ``sinfo`` (those ``known``, its
        proven struct info, does not already give), its sizes queued in ``matches``."""
        if isinstance(sinfo, rx.TensorStructInfo):
            if not (isinstance(known, rx.TensorStructInfo) and known.ndim == sinfo.ndim and known.dtype == sinfo.dtype):
                dtype = rx.DataTypeImm(sinfo.dtype or "void")
                self._emit(call_packed("vm.builtin.check_tensor_info", value, _pv(sinfo.ndim), dtype, err))
        elif isinstance(sinfo, rx.ShapeStructInfo):
            if not (isinstance(known, rx.ShapeStructInfo) and known.ndim == sinfo.ndim):
                self._emit(call_packed("vm.builtin.check_shape_info", value, _pv(sinfo.ndim), err))
        elif isinstance(sinfo, rx.PrimStructInfo):
            if not (isinstance(known, rx.PrimStructInfo) and known.dtype == sinfo.dtype):
                self._emit(call_packed("vm.builtin.check_prim_value_info", value, rx.DataTypeImm(sinfo.dtype), err))
            if sinfo.value is not None:
                matches.append((value, sinfo, err))
            return
        elif isinstance(sinfo, rx.FuncStructInfo):
            if not isinstance(known, rx.FuncStructInfo):
                self._emit(call_packed("vm.builtin.check_func_info", value, err))
        elif isinstance(sinfo, rx.TupleStructInfo):
            k = known if isinstance(known, rx.TupleStructInfo) and len(known.fields) == len(sinfo.fields) else None
            if k is None:
                self._emit(call_packed("vm.builtin.check_tuple_info", value, _pv(len(sinfo.fields)), err))
            for i, field in enumerate(sinfo.fields):
                item = self._emit(rx.TupleGetItem(value, i), self.gv_names("gv"), field)
                self._check(item, field, err, None if k is None else k.fields[i], matches)
            return
        if _dims(sinfo) is not None:
            matches.append((value, sinfo, err))

    def _match(self, matches: list) -> None:
        """The queued ``match_shape`` calls, then the compound sizes they made computable (a
        compound size not known yet is checked by a second ``match_shape`` once computed)."""
        late = []
        for value, sinfo, err in matches:
            if isinstance(sinfo, rx.PrimStructInfo):
                self._match_prim(value, sinfo.value, err, late)
                continue
            dims = _dims(sinfo)
            pairs: list[int] = []
            waiting = []
            for d in dims:
                slot = self._slot_of(d)
                if slot is None:
                    pairs += [MATCH_KINDS["assert_imm"], int(d.value)]
                elif slot in self.defined:
                    pairs += [MATCH_KINDS["assert_load"], slot]
                elif isinstance(d, tir.Var):
                    pairs += [MATCH_KINDS["store"], slot]
                    self.defined.add(slot)
                else:
                    pairs += [MATCH_KINDS["no_op"], 0]
                    waiting.append(slot)
            self._emit(call_packed("vm.builtin.match_shape", value, self.heap, _pv(len(dims)), *map(_pv, pairs), err))
            if waiting:
                late.append((value, dims, waiting, err))
        self._compute()
        for value, dims, waiting, err in late:
            if dims is None:  # a prim value
                self._emit(call_packed("vm.builtin.match_prim_value", value, self.heap,
                                   _pv(MATCH_KINDS["assert_load"]), _pv(waiting[0]), err))
                continue
            pairs = []
            for d in dims:
                slot = self._slot_of(d)
                pairs += [MATCH_KINDS["assert_load"], slot] if slot in waiting else [MATCH_KINDS["no_op"], 0]
            self._emit(call_packed("vm.builtin.match_shape", value, self.heap, _pv(len(dims)), *map(_pv, pairs), err))

    def _match_prim(self, value: rx.Expr, expr: tir.PrimExpr, err: rx.StringImm, late: list) -> None:
        """``vm.builtin.match_prim_value``: a scalar against a constant or a heap slot."""
        slot = self._slot_of(expr)
        if slot is None:
            kind, arg = MATCH_KINDS["assert_imm"], int(expr.value)
        elif slot in self.defined:
            kind, arg = MATCH_KINDS["assert_load"], slot
        elif isinstance(expr, tir.Var):
            kind, arg = MATCH_KINDS["store"], slot
            self.defined.add(slot)
        else:
            late.append((value, None, [slot], err))
            return
        self._emit(call_packed("vm.builtin.match_prim_value", value, self.heap, _pv(kind), _pv(arg), err))

    def _compute(self) -> None:
        """A ``shape_func`` that computes the compound sizes whose variables are all known."""
        ready = [i for i, e in enumerate(self.slots) if i not in self.defined and not isinstance(e, tir.Var)
                 and all(self._slot_of(v) in self.defined for v in vars_of(e))]
        if not ready:
            return
        heap_len = i64(len(self.slots))
        ptr = tir.PointerType("int64", "global")
        param = tir.Var("H", "handle", ptr)
        buf = tir.Buffer("H", tir.Var("H", "handle", ptr), "int64", (heap_len,))
        loads = {}
        stores = []
        for i in ready:
            expr = self.slots[i]
            loads = {v: tir.BufferLoad(buf, (i64(self._slot_of(v)),)) for v in vars_of(expr)}
            stores.append(tir.BufferStore(buf, substitute(expr, loads), (i64(i),)))
            self.defined.add(i)
        body = stores[0] if len(stores) == 1 else tir.SeqStmt(tuple(stores))
        func = tir.PrimFunc((param,), body, None, Map({param: buf}), Map({"tirx.is_host_func": True}))
        name = self.shape_funcs("shape_func")
        while name in self.mod:  # a name the module has already (a second run, a user's function)
            name = self.shape_funcs("shape_func")
        gv = self.mod.add(name, func)
        self._emit(rx.Call(gv, (self.heap,), struct_info=VOID), "gv", VOID)

    def _make_shape(self, shape: rx.ShapeExpr) -> rx.Call:
        """``vm.builtin.make_shape`` of a shape with symbolic sizes."""
        pairs: list[int] = []
        for d in shape.values:
            slot = self._slot_of(d)
            pairs += [MAKE_KINDS["imm"], int(d.value)] if slot is None else [MAKE_KINDS["load"], slot]
        ret = rx.ShapeStructInfo(ndim=len(shape.values))
        return call_packed("vm.builtin.make_shape", self.heap, _pv(len(shape.values)), *map(_pv, pairs), ret=ret)

    def _make_prim_value(self, value: rx.PrimValue) -> rx.Call:
        """``vm.builtin.make_prim_value`` of a symbolic integer: read from its heap slot."""
        slot = self._slot_of(value.value)
        ret = rx.PrimStructInfo(value.value.dtype)
        return call_packed("vm.builtin.make_prim_value", self.heap, _pv(MAKE_KINDS["load"]), _pv(slot), ret=ret)

    def _lift(self, a: rx.Expr) -> rx.Expr:
        """A symbolic shape literal or prim value (also inside a tuple) made by ``make_shape`` or
        ``make_prim_value`` first."""
        if _symbolic(a):
            return self._emit(self._make_shape(a), self.gv_names("gv"))
        if _symbolic_prim(a):
            return self._emit(self._make_prim_value(a), self.gv_names("gv"))
        if isinstance(a, rx.Tuple) and _nested_shapes(a.fields):
            return rx.Tuple(tuple(self._lift(f) for f in a.fields))
        return a

    def _lift_shapes(self, call: rx.Call) -> rx.Call:
        """The call with each symbolic shape argument made by ``make_shape`` into a new variable
        first; its struct info inferred again (an op's) from the new arguments."""
        args = tuple(self._lift(a) for a in call.args)
        if isinstance(call.op, rx.Op):
            return make_call(call.op.name, args, call.attrs, call.sinfo_args, span=call.span)
        return replace(call, args=args)

    # ---- the function
    def lower(self) -> rx.Function:
        """The lowered function."""
        if self.slots:
            sinfo = rx.TensorStructInfo(None, "int64", ndim=1)
            alloc = rx.Call(rx.Op.get("relax.call_builtin_with_ctx"),
                            (rx.ExternFunc("vm.builtin.alloc_shape_heap"), rx.Tuple((_pv(len(self.slots)),))),
                            sinfo_args=(sinfo,), struct_info=sinfo)
        else:
            sinfo = rx.ObjectStructInfo()
            alloc = rx.Call(rx.Op.get("relax.null_value"), (), struct_info=sinfo)
        self.heap = self._emit(alloc, "shape_heap", sinfo)
        matches: list = []
        for i, p in enumerate(self.func.params):
            self._check(p, p.struct_info, self._context(f"param[{i}]", p.struct_info, p), None, matches)
        self._match(matches)
        body = self._seq(self.func.body, self.out)
        return replace(self.func, body=body)

    def _seq(self, seq: rx.SeqExpr, prologue: list[rx.Binding]) -> rx.SeqExpr:
        """A sequence lowered, ``prologue`` first; the result matched against the annotation.
        Dataflow blocks stay blocks of their own (their new variables dataflow ones); the other
        bindings form one block."""
        blocks: list[tuple[bool, list]] = [(False, prologue)]
        for block in seq.blocks:
            dataflow = isinstance(block, rx.DataflowBlock)
            if dataflow or blocks[-1][0]:
                blocks.append((dataflow, []))
            self.out, self.dataflow = blocks[-1][1], dataflow
            for b in block.bindings:
                self._binding(b)
        if blocks[-1][0]:
            blocks.append((False, []))
        self.out, self.dataflow = blocks[-1][1], False
        result = self._lift(self._use(seq.body))
        if seq is self.func.body:
            ret = self.func.ret_struct_info
            if not structural_equal(sinfo_of(result), ret):
                matches: list = []
                err = self._context("return", ret)
                if isinstance(result, rx.Tuple) and isinstance(ret, rx.TupleStructInfo) \
                        and len(result.fields) == len(ret.fields):
                    for field, want in zip(result.fields, ret.fields):  # TVM checks the fields themselves
                        self._check(field, want, err, sinfo_of(field), matches)
                else:
                    self._check(result, ret, err, sinfo_of(result), matches)
                self._match(matches)
        out = tuple((rx.DataflowBlock if df else rx.BindingBlock)(tuple(bs)) for df, bs in blocks if bs)
        return rx.SeqExpr(out, result)

    def _var(self, name: str, sinfo: rx.StructInfo, like: rx.Var | None = None) -> rx.Var:
        """A new variable: a dataflow one inside a dataflow block (or like ``like``)."""
        cls = type(like) if like is not None else rx.DataflowVar if self.dataflow else rx.Var
        return cls(name, sinfo)

    def _use(self, expr: rx.Expr) -> rx.Expr:
        """``expr`` with the variables renewed so far replaced."""
        if not self.remap:
            return expr
        return _remap(expr, self.remap)

    def _binding(self, b: rx.Binding) -> None:
        """One binding lowered."""
        value = self._use(b.value)
        if isinstance(b, rx.MatchCast):
            err = rx.StringImm(f"ErrorContext(match_cast, ty={_annotation(b.struct_info)}) ")
            matches: list = []
            self._check(value, b.struct_info, err, sinfo_of(value), matches)
            if isinstance(b.struct_info, rx.PrimStructInfo):  # TVM matches the bound variable, after it
                self.out.append(replace(b, value=value))
                self._match([(b.var, b.struct_info, err) for _, _, err in matches])
                return
            self._match(matches)
            self.out.append(replace(b, value=value))
            return
        if _symbolic(value) or _symbolic_prim(value):
            call = self._make_shape(value) if _symbolic(value) else self._make_prim_value(value)
            var = self._var(b.var.name_hint, call.struct_info, b.var)
            self.remap[b.var] = var
            self.out.append(rx.VarBinding(var, call))
            return
        if isinstance(value, rx.Call) and _nested_shapes(value.args):
            value = self._lift_shapes(value)
            var = self._var(b.var.name_hint, sinfo_of(value), b.var)
            if not structural_equal(var.struct_info, b.var.struct_info):
                self.remap[b.var] = var
                self.out.append(rx.VarBinding(var, value))
                return
        if isinstance(value, rx.If):
            saved, defined, dataflow = self.out, set(self.defined), self.dataflow
            then = self._seq(value.true_branch, [])
            self.defined = set(defined)
            other = self._seq(value.false_branch, [])
            self.out, self.defined, self.dataflow = saved, defined, dataflow
            value = replace(value, true_branch=then, false_branch=other)
            self._rebind(b, value, unify_sinfo(sinfo_of(then.body), sinfo_of(other.body)))
            return
        if isinstance(b, rx.VarBinding) and isinstance(value, rx.Var):
            self._rebind(b, value, sinfo_of(value))  # an alias follows its value's struct info
            return
        self.out.append(b if value is b.value else replace(b, value=value))

    def _rebind(self, b: rx.Binding, value: rx.Expr, sinfo: rx.StructInfo) -> None:
        """Bind ``value``; a new variable when its struct info is no longer the old one's."""
        if structural_equal(sinfo, b.var.struct_info):
            self.out.append(b if value is b.value else replace(b, value=value))
            return
        var = self._var(b.var.name_hint, sinfo, b.var)
        self.remap[b.var] = var
        self.out.append(rx.VarBinding(var, value))


def _remap(expr: rx.Expr, remap: dict) -> rx.Expr:
    """``expr`` with the renewed variables (shapes bound by make_shape) replaced."""
    if isinstance(expr, rx.Var):
        return remap.get(expr, expr)
    if not any(v in remap for v in _used_vars(expr)):
        return expr
    mutator = ExprMutator()
    mutator.var_remap_.update(remap)
    new = mutator.visit_expr(expr)
    if isinstance(new, rx.Call) and not isinstance(new.op, rx.Op):
        new = replace(new, struct_info=expr.struct_info)  # a kernel or packed call keeps its own
    return new


def _used_vars(expr: rx.Expr) -> list:
    """The Relax variables ``expr`` uses."""
    found: list = []
    post_order_visit(expr, lambda e: found.append(e) if isinstance(e, rx.Var) else None)
    return found


class VMShapeLower(ModulePass):
    """Lower the struct-info checks and symbolic shapes of each Relax function to the VM's
    shape-heap built-ins."""

    opt_level = 0

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        shape_funcs = NameSupply()
        for gv, func in list(mod.functions_items()):
            if isinstance(func, rx.Function):
                mod.update_func(gv, _FunctionLowering(gv.name_hint, func, mod, shape_funcs).lower())
        return mod


register_pass("VMShapeLower", VMShapeLower)
