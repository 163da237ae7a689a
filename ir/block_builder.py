"""BlockBuilder: build Relax functions binding by binding, with struct info inferred by the op
registry and TVM's variable names (``lv``, ``lv1``... in dataflow blocks, ``gv``... outside)."""
from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Callable, ClassVar, Sequence

from . import relax as rx
from . import tir
from .functor import Mutator
from .module import GlobalVar, IRModule
from .node import Map, Node, replace
from .op import call_ret_sinfo
from .struct_info import derive_function_ret, infer_leaf_sinfo, sinfo_of, unify_sinfo
from .structural import structural_equal, structural_hash

__all__ = ["BlockBuilder", "LEAF_TYPES", "is_leaf"]

# Expressions that may be call arguments without a binding of their own (Relax normal form).
LEAF_TYPES = (rx.Var, rx.Constant, rx.ShapeExpr, rx.PrimValue, rx.StringImm, rx.DataTypeImm,
              rx.ExternFunc, rx.Op, rx.Tuple, GlobalVar)


def is_leaf(expr: Any) -> bool:
    """True when ``expr`` may appear as an argument in normal form."""
    return isinstance(expr, LEAF_TYPES)


def _outline(func: Any) -> tuple:
    """What structurally equal functions share and costs nothing to compute: a PrimFunc's buffer
    parameters' dtypes and constant dims (``?`` for others); nothing for other functions."""
    if not isinstance(func, tir.PrimFunc):
        return ()
    return tuple((buf.dtype, tuple(d.value if isinstance(d, tir.IntImm) else "?" for d in buf.shape))
                 for buf in (func.buffer_map.get(p) for p in func.params) if buf is not None)


@dataclasses.dataclass
class _BlockFrame:
    """A binding block being built."""

    is_dataflow: bool
    bindings: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _FunctionFrame:
    """The function opened by ``with bb.function(...)``."""

    name: str
    params: list | None
    attrs: dict
    pure: bool
    blocks: list = dataclasses.field(default_factory=list)
    finished: bool = False


class _Normalizer(Mutator):
    """One normalisation step of an expression (TVM's Normalizer): nested non-leaf arguments are
    bound to fresh variables in the current block and missing struct info is inferred."""

    def __init__(self, builder: "BlockBuilder") -> None:
        # A weak reference: the builder owns the normaliser, and a strong one back would make every
        # builder a reference cycle that waits for the garbage collector with all it holds.
        self.bb = weakref.proxy(builder)

    def argument(self, expr: rx.Expr) -> rx.Expr:
        """A normalised call argument: a leaf, or a fresh variable bound to it."""
        expr = self.visit(expr)
        if self.bb._blocks and not is_leaf(expr):
            return self.bb.emit(expr)
        return expr

    def generic_visit(self, node: Node) -> Node:
        """A leaf (or a function): fill its struct info when missing."""
        if isinstance(node, rx.Expr) and getattr(node, "struct_info", None) is None:
            return replace(node, struct_info=infer_leaf_sinfo(node))
        return node

    def _keep(self, node: Node) -> Node:
        """Variables and ops are kept as they are: their identity is their meaning."""
        return node

    visit_var_ = visit_dataflow_var_ = visit_op_ = visit_global_var_ = _keep

    def visit_call_(self, call: rx.Call) -> rx.Call:
        """Arguments become leaves; struct info is inferred when missing or when they changed."""
        args = tuple(self.argument(a) for a in call.args)
        if call.struct_info is not None and all(a is b for a, b in zip(args, call.args)):
            return call
        new = rx.Call(call.op, args, call.attrs, call.sinfo_args, span=call.span)
        return replace(new, struct_info=self.bb.infer_call(new))

    def visit_tuple_(self, tup: rx.Tuple) -> rx.Tuple:
        """Fields become leaves; the struct info is the fields'."""
        fields = tuple(self.argument(f) for f in tup.fields)
        if tup.struct_info is not None and all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return rx.Tuple(fields, struct_info=rx.TupleStructInfo(tuple(sinfo_of(f) for f in fields)),
                        span=tup.span)

    def visit_tuple_get_item_(self, item: rx.TupleGetItem) -> rx.TupleGetItem:
        """The tuple becomes a leaf; the struct info is its field's."""
        value = self.argument(item.tuple_value)
        if item.struct_info is not None and value is item.tuple_value:
            return item
        new = rx.TupleGetItem(value, item.index, span=item.span)
        return replace(new, struct_info=infer_leaf_sinfo(new))

    def visit_seq_expr_(self, seq: rx.SeqExpr) -> rx.SeqExpr:
        """The struct info is the body's."""
        if seq.struct_info is not None:
            return seq
        return replace(seq, struct_info=sinfo_of(seq.body))

    def visit_relax_if_(self, node: rx.If) -> rx.If:
        """The condition becomes a leaf, the branches SeqExprs; the struct info covers both."""
        cond = self.argument(node.cond)
        then, other = self.branch(node.true_branch), self.branch(node.false_branch)
        if node.struct_info is not None and cond is node.cond and then is node.true_branch \
                and other is node.false_branch:
            return node
        sinfo = unify_sinfo(sinfo_of(then), sinfo_of(other))
        return rx.If(cond, then, other, struct_info=sinfo, span=node.span)

    def branch(self, expr: rx.Expr) -> rx.SeqExpr:
        """An if/else branch as a SeqExpr whose nested calls are bound inside the branch."""
        if isinstance(expr, rx.SeqExpr):
            return self.visit(expr)
        self.bb.begin_binding_block()
        body = self.visit(expr)
        if not is_leaf(body):
            body = self.bb.emit(body)
        block = self.bb.end_block()
        return rx.SeqExpr((block,) if block.bindings else (), body, struct_info=sinfo_of(body))


class _FunctionScope:
    """The context manager returned by ``BlockBuilder.function``."""

    def __init__(self, bb: "BlockBuilder", frame: _FunctionFrame) -> None:
        self.bb, self.frame = bb, frame
        self.depth = 0

    def __enter__(self) -> "_FunctionScope":
        if self.bb._func is not None:
            raise RuntimeError(f"bb.function({self.frame.name!r}) inside bb.function("
                               f"{self.bb._func.name!r}): functions cannot be nested")
        self.bb._func = self.frame
        self.depth = len(self.bb._blocks)
        self.bb.begin_binding_block()
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.bb._func = None
        if exc_type is None and self.frame.finished:
            return
        del self.bb._blocks[self.depth:]  # drop the blocks this function left open
        if exc_type is None:
            raise RuntimeError(f"the function {self.frame.name!r} has no output: call "
                               f"bb.emit_func_output(...) before leaving 'with bb.function(...)'")


class _DataflowScope:
    """The context manager returned by ``BlockBuilder.dataflow``."""

    def __init__(self, bb: "BlockBuilder") -> None:
        self.bb = bb

    def __enter__(self) -> "_DataflowScope":
        func = self.bb._func
        if func is None:
            raise RuntimeError("bb.dataflow() must be inside 'with bb.function(...)'")
        if self.bb.current_block_is_dataflow():
            raise RuntimeError("dataflow blocks cannot be nested")
        self.bb._close_block_into(func)
        self.bb.begin_dataflow_block()
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        func = self.bb._func
        if exc_type is not None or func is None:
            return
        self.bb._close_block_into(func)
        self.bb.begin_binding_block()


class BlockBuilder:
    """Builds Relax functions into an IRModule (TVM's ``relax.BlockBuilder``).

    ``mod`` is copied: the builder never changes the module it is given.
    """

    # ``call_te`` of tvmlite.te, set when that package loads (a TE function cannot be built
    # without it): the IR builds ``R.call_tir`` of TE functions without importing the layer above.
    _call_te_hook: ClassVar[Callable[..., rx.Call] | None] = None

    def __init__(self, mod: IRModule | None = None) -> None:
        self._mod = mod.copy() if mod is not None else IRModule()
        self._names: dict[str, int] = {}  # name -> last suffix handed out (TVM's NameSupply)
        self._blocks: list[_BlockFrame] = []
        self._func: _FunctionFrame | None = None
        self._bindings: dict[rx.Var, rx.Expr] = {}  # identity-keyed: var -> bound value
        self._normalizer = _Normalizer(self)
        self._hashes: dict[int, tuple[Node, int]] = {}

    # ---------------------------------------------------------------- names
    def get_unique_name(self, name_hint: str) -> str:
        """``name_hint`` the first time, then ``name_hint1``, ``name_hint2``... (as TVM numbers them)."""
        if name_hint not in self._names:
            self._names[name_hint] = 0
            return name_hint
        while True:
            self._names[name_hint] += 1
            name = f"{name_hint}{self._names[name_hint]}"
            if name not in self._names:
                self._names[name] = 0
                return name

    # ---------------------------------------------------------------- scopes
    def function(self, name: str, params: rx.Var | Sequence[rx.Var] | None = None,
                 attrs: dict[str, Any] | None = None, pure: bool = True,
                 private: bool = False) -> _FunctionScope:
        """``with bb.function("main", [x]):`` opens a function; ``emit_func_output`` closes it."""
        if isinstance(params, rx.Var):
            params = [params]
        attrs = dict(attrs or {})
        if not private:
            attrs.setdefault("global_symbol", name)
        frame = _FunctionFrame(name, list(params) if params is not None else None, attrs, pure)
        return _FunctionScope(self, frame)

    def dataflow(self) -> _DataflowScope:
        """``with bb.dataflow():`` opens a dataflow block inside the current function."""
        return _DataflowScope(self)

    def begin_dataflow_block(self) -> None:
        """Start collecting bindings of a dataflow block."""
        self._blocks.append(_BlockFrame(True))

    def begin_binding_block(self) -> None:
        """Start collecting bindings of an ordinary binding block."""
        self._blocks.append(_BlockFrame(False))

    def end_block(self) -> rx.BindingBlock:
        """Close the innermost block and return it (possibly without bindings)."""
        if not self._blocks:
            raise RuntimeError("end_block() without an open block")
        frame = self._blocks.pop()
        cls = rx.DataflowBlock if frame.is_dataflow else rx.BindingBlock
        return cls(tuple(frame.bindings))

    def current_block_is_dataflow(self) -> bool:
        """True inside a dataflow block."""
        return bool(self._blocks) and self._blocks[-1].is_dataflow

    def _close_block_into(self, func: _FunctionFrame) -> None:
        """End the current block and keep it in ``func`` when it has bindings."""
        block = self.end_block()
        if block.bindings:
            func.blocks.append(block)

    def _current(self, what: str) -> _BlockFrame:
        """The innermost open block; ``what`` names the caller in the error."""
        if not self._blocks:
            raise RuntimeError(f"{what} needs an open block: use 'with bb.function(...)' "
                               f"(and 'with bb.dataflow()')")
        return self._blocks[-1]

    # ---------------------------------------------------------------- emitting
    def emit(self, expr: rx.Expr, name_hint: str = "") -> rx.Var:
        """Bind ``expr`` (normalised) to a fresh variable: ``lv``... in a dataflow block, else ``gv``..."""
        frame = self._current("emit")
        value = self.normalize(expr)
        name = self.get_unique_name(name_hint or ("lv" if frame.is_dataflow else "gv"))
        var = (rx.DataflowVar if frame.is_dataflow else rx.Var)(name, sinfo_of(value))
        self.emit_normalized(rx.VarBinding(var, value))
        return var

    def emit_output(self, output: rx.Expr | Sequence[rx.Expr], name_hint: str = "") -> rx.Var:
        """Bind an output of the current dataflow block (a Var visible after the block)."""
        frame = self._current("emit_output")
        if not frame.is_dataflow:
            raise RuntimeError("emit_output must be called inside 'with bb.dataflow()'")
        if isinstance(output, (list, tuple)):
            output = rx.Tuple(tuple(output))
        value = self.normalize(output)
        var = rx.Var(self.get_unique_name(name_hint or "gv"), sinfo_of(value))
        self.emit_normalized(rx.VarBinding(var, value))
        return var

    def match_cast(self, value: rx.Expr, struct_info: rx.StructInfo, name_hint: str = "") -> rx.Var:
        """Bind ``value`` checked against ``struct_info`` (``R.match_cast``)."""
        frame = self._current("match_cast")
        value = self.normalize(value)
        name = self.get_unique_name(name_hint or ("lv" if frame.is_dataflow else "gv"))
        var = (rx.DataflowVar if frame.is_dataflow else rx.Var)(name, struct_info)
        self.emit_normalized(rx.MatchCast(var, value, struct_info))
        return var

    def emit_normalized(self, binding: rx.Binding) -> None:
        """Append an already normalised binding to the current block."""
        self._current("emit_normalized").bindings.append(binding)
        if isinstance(binding, rx.VarBinding):
            self._bindings[binding.var] = binding.value

    def emit_func_output(self, output: rx.Expr | Sequence[rx.Expr],
                         params: rx.Var | Sequence[rx.Var] | None = None) -> GlobalVar:
        """Finish the current function with ``output`` as its result; adds it to the module."""
        func = self._func
        if func is None:
            raise RuntimeError("emit_func_output must be called inside 'with bb.function(...)'")
        if func.finished:
            raise RuntimeError(f"emit_func_output was already called for {func.name!r}")
        if self.current_block_is_dataflow():
            raise RuntimeError("emit_func_output must be called after the 'with bb.dataflow()' block")
        if params is not None:
            if func.params is not None:
                raise RuntimeError(f"the parameters of {func.name!r} were given to bb.function already")
            func.params = [params] if isinstance(params, rx.Var) else list(params)
        if func.params is None:
            raise RuntimeError(f"the function {func.name!r} has no parameters: pass them to "
                               f"bb.function or emit_func_output")
        if isinstance(output, (list, tuple)):
            output = rx.Tuple(tuple(output))
        body = self.normalize(output)
        if not is_leaf(body):
            body = self.emit(body)  # our normal form returns a leaf (the parser binds it to gv too)
        self._close_block_into(func)
        seq = rx.SeqExpr(tuple(func.blocks), body, struct_info=sinfo_of(body))
        ret = derive_function_ret(func.params, sinfo_of(body))
        function = rx.Function(tuple(func.params), seq, ret, func.pure, Map(func.attrs))
        func.finished = True
        return self.add_func(function, func.name)

    # ---------------------------------------------------------------- tensor expressions
    def call_te(self, func: Any, *args: Any, **kwargs: Any) -> rx.Call:
        """``R.call_tir`` of the PrimFunc the TE function ``func`` builds from ``args``, added to
        the module as ``primfunc_name_hint=`` (default: ``func``'s name); see ``tvmlite.te.call_te``."""
        if BlockBuilder._call_te_hook is None:
            raise RuntimeError("BlockBuilder.call_te builds tensor expressions: import tvmlite.te first")
        return BlockBuilder._call_te_hook(self, func, *args, **kwargs)

    def emit_te(self, func: Any, *args: Any, **kwargs: Any) -> rx.Var:
        """Emit ``call_te(func, *args, **kwargs)`` (``name_hint=`` names the variable)."""
        name_hint = kwargs.pop("name_hint", "")
        return self.emit(self.call_te(func, *args, **kwargs), name_hint)

    # ---------------------------------------------------------------- normalisation
    def normalize(self, expr: rx.Expr) -> rx.Expr:
        """``expr`` with struct info filled; nested non-leaf arguments are emitted first."""
        return self._normalizer.visit(expr)

    def infer_call(self, call: rx.Call) -> rx.StructInfo:
        """The struct info of a call, resolving module functions in the module being built."""
        return call_ret_sinfo(call, self._mod)

    def lookup_binding(self, var: rx.Var) -> rx.Expr | None:
        """The value bound to ``var`` by a binding emitted through this builder (None for parameters)."""
        return self._bindings.get(var)

    # ---------------------------------------------------------------- module
    def add_func(self, func: Node, func_name: str) -> GlobalVar:
        """Add ``func`` under a unique name derived from ``func_name``; an identical function
        already in the module is reused (as TVM deduplicates)."""
        # Functions of another parameter count, other buffer shapes or other attributes differ: no
        # hash of them (of ``main`` with every weight, when FuseOps adds its groups), and none of
        # ``func`` when nothing is left to compare with (most of LegalizeOps' new kernels).
        outline = _outline(func)
        same_kind = [(gv, f) for gv, f in self._mod.functions_items() if type(f) is type(func)
                     and len(getattr(f, "params", ())) == len(getattr(func, "params", ()))
                     and _outline(f) == outline
                     and structural_equal(getattr(f, "attrs", None), getattr(func, "attrs", None))]
        key = self._hash(func) if same_kind else None  # nothing to compare with: no hash needed
        for gv, existing in same_kind:
            if self._hash(existing) == key and structural_equal(existing, func):
                return gv
        name = self.get_unique_name(func_name)
        while name in self._mod:
            name = self.get_unique_name(func_name)
        gv = GlobalVar(name)
        self._mod[gv] = func
        return gv

    def _hash(self, func: Node) -> int:
        # Functions are immutable, so their structural hashes are cached (keeping them alive).
        cached = self._hashes.get(id(func))
        if cached is None or cached[0] is not func:
            cached = self._hashes[id(func)] = (func, structural_hash(func))
        return cached[1]

    def update_func(self, gv: GlobalVar, func: Node) -> None:
        """Replace (or add) the function of ``gv`` in the module being built."""
        self._mod[gv] = func

    def get(self) -> IRModule:
        """The module built so far (a snapshot: later changes to the builder do not affect it)."""
        return self._mod.copy()
