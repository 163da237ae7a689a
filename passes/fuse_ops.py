"""FuseOps (TVM's ``relax.transform.FuseOps``): group the bindings of each dataflow block by the
operator-fusion rules and outline every group into a private Relax function marked
``{"Primitive": True}``, called from where the group was.

The grouping is TVM's post-dominator algorithm (shared with Relay's FuseOps). Each binding of a
dataflow block is a graph node whose pattern (``OpPattern``) comes from the callee PrimFunc's
``op_pattern`` attribute for ``call_tir``, from the op registry for a call of a registered op,
and is OPAQUE otherwise. A node joins its immediate post-dominator's group when:

- it is elementwise/broadcast and every path to the post-dominator stays injective (the
  post-dominator itself may also be a reduction or an out-elementwise-fusable group);
- it is out-elementwise-fusable (matmul, conv2d) and the post-dominator is reached through
  elementwise edges and broadcast ops only (one such op per group: never two);
- it is injective and every path is injective (second phase, so matmul/conv2d fuse first).

Deviations from TVM's Relax pass, so that fusion groups match Relay's: plain op calls fuse too
(TVM's Relax FuseOps treats them as opaque; Relay fuses them, and a broadcast op whose argument
has the result's shape is an elementwise edge, as in Relay); a reduction also absorbs the
elementwise ops that follow it (``relu(sum(x))`` is one group); ``fuse_opt_level=0`` outlines
every fusable op alone (Relay's level-0 behaviour, as TVM's pass-infrastructure tutorial shows),
while at higher levels single ops stay in place;
and a fused result whose only use is ``gv = result`` (a dataflow block output) is bound to
``gv`` directly, as TVM's printed results show after fusion.

PassContext config: ``"relax.FuseOps.max_depth"`` (default 256) limits the nodes of a group.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Callable

from ..ir import relax as rx
from ..ir import tir
from ..ir.expr_functor import ExprMutator, ExprVisitor, post_order_visit
from ..ir.functor import Mutator
from ..ir.functor import post_order_visit as visit_all_nodes
from ..ir.module import GlobalVar, IRModule
from ..ir.node import Map, Node
from ..ir.op import OpPattern, find_op_def
from ..ir.struct_info import derive_function_ret, sinfo_of
from ..ir.structural import structural_equal
from .infra import ModulePass, PassContext, register_pass

__all__ = ["FuseOps", "MAX_DEPTH_CONFIG", "PRIMITIVE_ATTR", "is_primitive", "Rebinder",
           "definable_vars"]

MAX_DEPTH_CONFIG = "relax.FuseOps.max_depth"
DEFAULT_MAX_DEPTH = 256  # TVM's kMaxFusedOps
PRIMITIVE_ATTR = "Primitive"
_CALL_TIR_OPS = ("relax.call_tir", "relax.call_tir_inplace")


def is_primitive(func: Any) -> bool:
    """True for a Relax function produced by fusion (its ``Primitive`` attribute is set)."""
    attrs = getattr(func, "attrs", None)
    return isinstance(func, rx.Function) and bool(attrs and attrs.get(PRIMITIVE_ATTR))


def _is_call_tir(expr: Any) -> bool:
    """True for ``R.call_tir``/``R.call_tir_inplace`` calls."""
    return isinstance(expr, rx.Call) and isinstance(expr.op, rx.Op) and expr.op.name in _CALL_TIR_OPS


# ==================================================================== substitution helper
class Rebinder(Mutator):
    """Rewrites any IR, replacing TIR variables and buffers and reusing one result per node, so
    that a variable or buffer rebuilt once is the same object at every use.

    ``var_map``/``buffer_map`` give replacements (a buffer replacement is itself rewritten);
    ``renew_all`` gives every TIR variable and buffer met a fresh copy (TVM's ``RenewDefs``).
    """

    def __init__(self, var_map: dict[tir.Var, Any] | None = None,
                 buffer_map: dict[tir.Buffer, tir.Buffer] | None = None, renew_all: bool = False) -> None:
        self.var_map = dict(var_map or {})
        self.buffer_map = dict(buffer_map or {})
        self.renew_all = renew_all
        self._memo: dict[int, tuple[Any, Any]] = {}  # id -> (node kept alive, result)

    def visit(self, node: Any) -> Any:
        """Rewrite ``node`` once; later visits of the same object give the same result."""
        if not isinstance(node, Node):
            return super().visit(node)
        hit = self._memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        out = super().visit(node)
        self._memo[id(node)] = (node, out)
        return out

    def visit_tir_var_(self, var: tir.Var) -> Any:
        """A mapped variable's replacement; a fresh copy when renewing; else the variable."""
        if var in self.var_map:
            return self.var_map[var]
        if self.renew_all:
            annotation = self.visit(var.type_annotation) if var.type_annotation is not None else None
            return type(var)(var.name, var.dtype, annotation, span=var.span)
        return var

    def visit_buffer_(self, buf: tir.Buffer) -> tir.Buffer:
        """A mapped buffer's (rewritten) replacement; else the buffer with rewritten fields."""
        if buf in self.buffer_map:
            return self.visit(self.buffer_map[buf])
        new = self.generic_visit(buf)
        if self.renew_all and new is buf:
            new = dataclasses.replace(buf)  # a distinct object: the copy defines a new buffer
        return new


def definable_vars(sinfo: rx.StructInfo | None, out: list[tir.Var] | None = None) -> list[tir.Var]:
    """The symbolic variables a parameter of struct info ``sinfo`` defines: those that are a
    whole dimension (or a PrimValue), in order (``n`` in ``(n, 4)``, not in ``(n * 2,)``)."""
    out = [] if out is None else out

    def add(e: Any) -> None:
        if isinstance(e, tir.Var) and not any(v is e for v in out):
            out.append(e)

    if isinstance(sinfo, rx.TensorStructInfo):
        for d in sinfo.shape or ():
            add(d)
    elif isinstance(sinfo, rx.ShapeStructInfo):
        for d in sinfo.values or ():
            add(d)
    elif isinstance(sinfo, rx.PrimStructInfo):
        add(sinfo.value)
    elif isinstance(sinfo, rx.TupleStructInfo):
        for f in sinfo.fields:
            definable_vars(f, out)
    return out


class _TirVarCollector(ExprVisitor):
    """The symbolic variables a Relax function mentions (struct info, shapes, sinfo_args)."""

    def __init__(self) -> None:
        self.found: dict[int, tir.Var] = {}

    def note(self, obj: Any) -> None:
        """Record the TIR variables below ``obj``."""
        visit_all_nodes(obj, lambda n: self.found.setdefault(id(n), n) if isinstance(n, tir.Var) else None)

    def visit_var_def_(self, var: rx.Var) -> None:
        self.note(var.struct_info)

    visit_dataflow_var_def_ = visit_var_def_

    def visit_call_(self, call: rx.Call) -> None:
        self.note(call.sinfo_args)
        super().visit_call_(call)

    def visit_shape_expr_(self, shape: rx.ShapeExpr) -> None:
        self.note(shape.values)

    def visit_prim_value_(self, value: rx.PrimValue) -> None:
        self.note(value.value)


# ==================================================================== the graph
@dataclasses.dataclass(eq=False)
class _Node:
    """A graph node: a binding's variable or a leaf used by the block (TVM's IndexedForwardGraph)."""

    ref: Any
    index: int
    pattern: int = OpPattern.OPAQUE
    extern_ref: bool = False
    outputs: list = dataclasses.field(default_factory=list)  # (consumer node, edge pattern)


@dataclasses.dataclass(eq=False)
class _Group:
    """A union-find set of nodes fused together."""

    pattern: int
    parent: "_Group | None" = None
    anchor: Any = None  # the node of the group's one complex op (matmul, conv2d, reduction)
    num_nodes: int = 1

    def find_root(self) -> "_Group":
        """The representative of the set (with path compression)."""
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node.parent is not None and node.parent is not root:
            node.parent, node = root, node.parent
        return root


@dataclasses.dataclass(eq=False)
class _DomNode:
    """A node of the post-dominator tree: its immediate post-dominator and the combined pattern
    of the edges on the way there."""

    gnode: _Node
    parent: "_DomNode | None"
    depth: int
    pattern: int


class _GraphBuilder(ExprVisitor):
    """The dataflow graph of one dataflow block, nodes in post-DFS order (definitions first)."""

    def __init__(self, mod: IRModule) -> None:
        self.mod = mod
        self.nodes: list[_Node] = []
        self.node_of: dict[int, _Node] = {}  # id(var or leaf) -> node (which keeps it alive)

    def build(self, block: rx.DataflowBlock) -> "_GraphBuilder":
        """Add every binding of ``block``."""
        for binding in block.bindings:
            self.visit_binding(binding)
        return self

    def add_node(self, ref: Any, pattern: int, extern_ref: bool = False) -> _Node:
        """A new node for ``ref``, appended to the post-DFS order."""
        node = _Node(ref, len(self.nodes), pattern, extern_ref)
        self.nodes.append(node)
        self.node_of[id(ref)] = node
        return node

    def sources(self, expr: rx.Expr) -> list[_Node]:
        """The nodes of the values ``expr`` uses (tuple fields one by one); values defined outside
        the block (parameters, earlier blocks) and constants become opaque nodes that never fuse."""
        if isinstance(expr, rx.Tuple):
            return [n for field in expr.fields for n in self.sources(field)]
        if not isinstance(expr, (rx.Var, rx.Constant, rx.ShapeExpr, rx.PrimValue, rx.StringImm,
                                 rx.DataTypeImm)):
            return []  # GlobalVar, Op, ExternFunc: not values
        node = self.node_of.get(id(expr))
        if node is None:
            node = self.add_node(expr, OpPattern.OPAQUE, extern_ref=isinstance(expr, rx.Var))
        return [node]

    # ---- bindings
    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """A node for the variable, with the pattern and in-edges of its value."""
        value = binding.value
        handler = getattr(self, f"value_{type(value).visit_key}", self.value_other)
        pattern, args = handler(value)
        # The used values get their nodes first: the order is post-DFS (definitions first).
        edges = [(src, edge) for arg, edge in args for src in self.sources(arg)]
        node = self.add_node(binding.var, pattern, extern_ref=not isinstance(binding.var, rx.DataflowVar))
        for src, edge in edges:
            src.outputs.append((node, edge))

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        """Opaque. Unlike TVM it has in-edges: a value it checks is then never fused through, which
        would make two groups depend on each other (TVM stops with "cyclic dependency")."""
        used: list[rx.Expr] = []
        post_order_visit(binding.value, lambda e: used.append(e) if isinstance(e, rx.Var) else None)
        edges = [src for var in used for src in self.sources(var)]
        node = self.add_node(binding.var, OpPattern.OPAQUE, extern_ref=not isinstance(binding.var, rx.DataflowVar))
        for src in edges:
            src.outputs.append((node, OpPattern.OPAQUE))

    # ---- values: (node pattern, [(argument, edge pattern)])
    def value_call(self, call: rx.Call) -> tuple[int, list]:
        """call_tir: the callee's ``op_pattern``; a registered op: its registry pattern."""
        if _is_call_tir(call):
            callee = self.mod[call.args[0]] if call.args[0].name_hint in self.mod else None
            raw = getattr(callee, "attrs", {}).get("op_pattern") if isinstance(callee, tir.PrimFunc) else None
            pattern = int(getattr(raw, "value", raw)) if raw is not None else OpPattern.OPAQUE
            args = call.args[1].fields if isinstance(call.args[1], rx.Tuple) else (call.args[1],)
            return pattern, [(a, pattern) for a in args]
        if isinstance(call.op, rx.Op):
            opdef = find_op_def(call.op)
            pattern = opdef.pattern if opdef.pure else OpPattern.OPAQUE
            return pattern, [(a, _edge_pattern(pattern, a, call)) for a in call.args]
        return OpPattern.OPAQUE, [(a, OpPattern.OPAQUE) for a in call.args]

    def value_tuple_get_item(self, item: rx.TupleGetItem) -> tuple[int, list]:
        """Injective."""
        return OpPattern.INJECTIVE, [(item.tuple_value, OpPattern.INJECTIVE)]

    def value_other(self, value: rx.Expr) -> tuple[int, list]:
        """Anything else is opaque; its variables and constants still feed it."""
        used: list[rx.Expr] = []
        post_order_visit(value, lambda e: used.append(e) if isinstance(e, (rx.Var, rx.Constant)) else None)
        return OpPattern.OPAQUE, [(e, OpPattern.OPAQUE) for e in used]


def _edge_pattern(pattern: int, arg: rx.Expr, call: rx.Call) -> int:
    """A broadcast op reading an argument of the result's shape reads it elementwise (Relay)."""
    if pattern != OpPattern.BROADCAST:
        return pattern
    a, r = sinfo_of(arg), call.struct_info
    if (isinstance(a, rx.TensorStructInfo) and isinstance(r, rx.TensorStructInfo)
            and a.shape is not None and r.shape is not None and len(a.shape) == len(r.shape)
            and all(structural_equal(x, y) for x, y in zip(a.shape, r.shape))):
        return OpPattern.ELEMWISE
    return pattern


# ==================================================================== the partition
def _post_dominators(nodes: list[_Node]) -> list[_DomNode]:
    """The post-dominator tree, built in reverse post-DFS order through least common ancestors."""
    tree: list[_DomNode | None] = [None] * len(nodes)

    def lca(a: _DomNode | None, b: _DomNode | None, pattern: list[int]) -> _DomNode | None:
        while a is not b:
            if a is None or b is None:
                return None
            if a.depth < b.depth:
                pattern[0] = max(pattern[0], b.pattern)
                b = b.parent
            elif b.depth < a.depth:
                pattern[0] = max(pattern[0], a.pattern)
                a = a.parent
            else:
                pattern[0] = max(pattern[0], a.pattern, b.pattern)
                a, b = a.parent, b.parent
        return a

    for node in reversed(nodes):
        if node.extern_ref:  # used outside the block: nothing after it may absorb it
            tree[node.index] = _DomNode(node, None, 1, OpPattern.OPAQUE)
            continue
        pattern = [OpPattern.ELEMWISE]
        parent: _DomNode | None = None
        for i, (consumer, edge) in enumerate(node.outputs):
            dom = tree[consumer.index]
            parent = dom if i == 0 else lca(parent, dom, pattern)
            pattern[0] = max(pattern[0], edge)
        tree[node.index] = _DomNode(node, parent, parent.depth + 1 if parent else 1, pattern[0])
    return tree  # type: ignore[return-value]


class _Partitioner:
    """TVM's GraphPartitioner: fuse each node into its immediate post-dominator when the fusion
    rules allow it (union-find groups; phase 0 anchors and elementwise ops, phase 1 injective)."""

    def __init__(self, opt_level: int, max_depth: int) -> None:
        self.opt_level = opt_level
        self.max_depth = max_depth
        self.groups: list[_Group] = []

    def partition(self, nodes: list[_Node]) -> list[_Group]:
        """One group per node, merged by the fusion rules."""
        self.groups = [_Group(n.pattern, anchor=n if n.pattern in _ANCHORS else None) for n in nodes]
        if self.opt_level == 0:
            return self.groups
        tree = _post_dominators(nodes)
        for phase in (0, 1):
            self.run(nodes, tree, phase)
        return self.groups

    def run(self, nodes: list[_Node], tree: list[_DomNode], phase: int) -> None:
        """One sweep over the nodes in post-DFS order."""
        for node in nodes:
            group, dom = self.groups[node.index], tree[node.index]
            if group.pattern == OpPattern.OPAQUE or dom.parent is None:
                continue
            sink = dom.parent.gnode
            if self.fused_size(node, sink) > self.max_depth:
                continue
            if group.find_root() is self.groups[sink.index].find_root():
                continue  # already fused into the post-dominator
            if group.pattern in _ANCHORS:
                # One complex op, then elementwise edges through broadcast-at-most ops.
                if phase == 0 and dom.pattern == OpPattern.ELEMWISE and self.check_path(
                        node, sink, lambda kind, is_sink: kind <= OpPattern.BROADCAST):
                    self.commit(node, sink)
            elif group.pattern <= OpPattern.BROADCAST:
                if dom.pattern <= OpPattern.INJECTIVE or dom.pattern == OpPattern.COMM_REDUCE:
                    if self.check_path(node, sink, _elementwise_path):
                        self.commit(node, sink)
            elif group.pattern == OpPattern.INJECTIVE:
                # Deferred to phase 1 so that matmul/conv2d groups form first.
                if phase == 1 and self.check_path(node, sink, lambda kind, is_sink: kind <= OpPattern.INJECTIVE):
                    self.commit(node, sink)

    def reachable(self, src: _Node, sink: _Node) -> list[_Node]:
        """The nodes on the paths from ``src`` (excluded) up to ``sink`` (included), once each."""
        seen: set[int] = set()
        order: list[_Node] = []
        stack = [c for c, _ in src.outputs]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            order.append(node)
            if node is not sink:
                stack.extend(c for c, _ in node.outputs)
        return order

    def check_path(self, src: _Node, sink: _Node, fcond: Callable[[int, bool], bool]) -> bool:
        """True when every group on the paths from ``src`` to ``sink`` satisfies ``fcond``."""
        return all(fcond(self.groups[n.index].find_root().pattern, n is sink) for n in self.reachable(src, sink))

    def commit(self, src: _Node, sink: _Node) -> None:
        """Merge ``src`` and everything between it and ``sink`` into ``sink``'s group."""
        target = self.groups[sink.index]
        for node in [src] + [n for n in self.reachable(src, sink) if n is not sink]:
            self.merge(self.groups[node.index], target)

    @staticmethod
    def merge(child: _Group, parent: _Group) -> None:
        """Union two groups; the complex op's pattern becomes the group's."""
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor is not None:
            assert parent.anchor is None, "two complex ops in one fused group"
            parent.anchor = child.anchor
            parent.pattern = max(child.pattern, parent.pattern)

    def fused_size(self, child: _Node, sink: _Node) -> int:
        """The size of the group ``child`` would join (TVM counts each node's own group)."""
        between = [n for n in [child] + self.reachable(child, sink) if n is not sink]
        return self.groups[sink.index].find_root().num_nodes + sum(self.groups[n.index].num_nodes for n in between)


# A group holds at most one of these; its other ops are the elementwise ones around it.
_ANCHORS = (OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.COMM_REDUCE)


def _elementwise_path(kind: int, is_sink: bool) -> bool:
    """Elementwise/broadcast ops fuse forward through injective ops into any fusable sink."""
    if not is_sink:
        return kind <= OpPattern.INJECTIVE
    return kind <= OpPattern.INJECTIVE or kind in _ANCHORS


# ==================================================================== outlining a group
class _FunctionCreator(ExprMutator):
    """Collects one group's bindings, makes parameters of the values it uses from outside, and
    builds the group's Relax function (TVM's FunctionCreator)."""

    def __init__(self) -> None:
        super().__init__()
        self.bindings: list[rx.Binding] = []
        self.params: list[rx.Var] = []
        self.arguments: list[rx.Expr] = []
        self.name = "fused"
        self.outputs: list[rx.Var] = []
        self.function: rx.Function | None = None
        self.alias: rx.VarBinding | None = None  # ``gv = result`` bound to the call directly
        self._defined: set[int] = set()
        self._arg_index: dict[int, int] = {}
        self._n_const = 0
        self._item_only: dict[int, list[int]] = {}  # tuple parameters used only through [i]
        self._items: dict[tuple[int, int], rx.Var] = {}  # (id(tuple), i) -> parameter of item i

    # ---- collecting
    def append(self, binding: rx.Binding) -> None:
        """Add a binding: extend the name, and make parameters of the values defined outside."""
        value = binding.value
        if _is_call_tir(value):
            self.name += "_" + value.args[0].name_hint
            for arg in (value.args[1].fields if isinstance(value.args[1], rx.Tuple) else (value.args[1],)):
                self.use(arg)
        elif isinstance(value, rx.Call):
            self.name += "_" + _callee_name(value.op)
            for arg in value.args:
                for leaf in (arg.fields if isinstance(arg, rx.Tuple) else (arg,)):
                    self.use(leaf)
                    self._item_only.pop(id(leaf), None)  # the whole tuple is used
        elif isinstance(value, rx.TupleGetItem):
            self.use(value.tuple_value)
            if id(value.tuple_value) in self._item_only:
                self._item_only[id(value.tuple_value)].append(value.index)
        self._defined.add(id(binding.var))
        if not isinstance(binding.var, rx.DataflowVar):
            self.add_output(binding.var)
        self.bindings.append(binding)

    def use(self, expr: rx.Expr) -> None:
        """A parameter for a variable defined outside the group or a constant (lifted)."""
        if id(expr) in self._arg_index or id(expr) in self._defined:
            return
        if isinstance(expr, rx.Var):
            name = expr.name_hint
        elif isinstance(expr, rx.Constant):
            name = f"param_{self._n_const}"
            self._n_const += 1
        else:
            return  # shapes, PrimValues, strings stay in place
        self._arg_index[id(expr)] = len(self.arguments)
        self.arguments.append(expr)
        self.params.append(rx.Var(name, sinfo_of(expr)))
        if isinstance(sinfo_of(expr), rx.TupleStructInfo):
            self._item_only[id(expr)] = []

    def add_output(self, var: rx.Var) -> int:
        """Make ``var`` (defined in the group) a result of the function; returns its index."""
        for i, v in enumerate(self.outputs):
            if v is var:
                return i
        self.outputs.append(var)
        return len(self.outputs) - 1

    # ---- building
    def visit_expr(self, expr: rx.Expr) -> rx.Expr:
        """A value passed in from outside is its parameter."""
        index = self._arg_index.get(id(expr))
        if index is not None:
            return self.params[index]
        return super().visit_expr(expr)

    def create(self) -> None:
        """Build the function: one dataflow block, outputs emitted as block outputs."""
        self._expand_tuple_params()
        self.builder_.begin_dataflow_block()
        results: list[rx.Expr | None] = [None] * len(self.outputs)
        for binding in self.bindings:
            index = next((i for i, v in enumerate(self.outputs) if v is binding.var), None)
            value = binding.value
            item = self._items.get((id(value.tuple_value), value.index)) \
                if isinstance(value, rx.TupleGetItem) else None
            if item is not None:  # an item of an expanded tuple is its parameter
                self.set_var_remap(binding.var, item)
                if index is not None:
                    results[index] = item
            elif index is None:
                self.visit_binding(binding)
            else:
                out = self.builder_.emit_output(self.visit_expr(value))
                self.set_var_remap(binding.var, out)
                results[index] = out
        block = self.builder_.end_block()
        if not results:
            warnings.warn("FuseOps: a fused group computes values nobody uses; run DeadCodeElimination "
                          "before FuseOps", stacklevel=2)
            return
        body = results[0] if len(results) == 1 else self.builder_.normalize(rx.Tuple(tuple(results)))
        seq = rx.SeqExpr((block,), body, struct_info=sinfo_of(body))
        params = list(self.params)
        attrs = Map({PRIMITIVE_ATTR: True})
        func = rx.Function(tuple(params), seq, derive_function_ret(params, sinfo_of(body)), True, attrs)
        free = _free_symbolic_vars(func)
        if free:
            # Symbolic variables no parameter defines are passed as a shape (TVM's "tir_vars").
            params.append(rx.Var("tir_vars", rx.ShapeStructInfo(tuple(free), len(free))))
            self.arguments.append(rx.ShapeExpr(tuple(free)))
            func = rx.Function(tuple(params), seq, derive_function_ret(params, sinfo_of(body)), True, attrs)
        self.function = _renew_symbolic_vars(func)

    def _expand_tuple_params(self) -> None:
        """A tuple parameter used only through ``t[i]`` becomes one parameter per item used."""
        for i in reversed(range(len(self.arguments))):
            items = self._item_only.get(id(self.arguments[i]))
            if not items:
                continue
            tup, param = self.arguments[i], self.params[i]
            fields = sinfo_of(tup).fields  # type: ignore[union-attr]
            used = list(dict.fromkeys(items))  # first-use order, once each
            new_params = [rx.Var(f"{param.name_hint}_{k}", fields[k]) for k in used]
            self.arguments[i:i + 1] = [rx.TupleGetItem(tup, k) for k in used]
            self.params[i:i + 1] = new_params
            self._items.update(((id(tup), k), p) for k, p in zip(used, new_params))
        self._arg_index = {id(a): j for j, a in enumerate(self.arguments)}


def _callee_name(op: Any) -> str:
    """The name a callee contributes to the group's name (``nn.conv2d`` -> ``nn_conv2d``)."""
    if isinstance(op, rx.Op):
        name = op.name[len("relax."):] if op.name.startswith("relax.") else op.name
        return name.replace(".", "_")
    if isinstance(op, GlobalVar):
        return op.name_hint[len("fused_"):] if op.name_hint.startswith("fused_") else op.name_hint
    return getattr(op, "name_hint", "call")


def _free_symbolic_vars(func: rx.Function) -> list[tir.Var]:
    """Symbolic variables ``func`` uses that its parameters do not define."""
    collector = _TirVarCollector()
    collector.visit_expr(func)
    defined: list[tir.Var] = []
    for p in func.params:
        definable_vars(p.struct_info, defined)
    return [v for v in collector.found.values() if not any(v is d for d in defined)]


def _renew_symbolic_vars(func: rx.Function) -> rx.Function:
    """``func`` with fresh copies of the symbolic variables its parameters define, so that no two
    functions share one (TVM's SymbolicVarRenewMutator)."""
    defined: list[tir.Var] = []
    for p in func.params:
        definable_vars(p.struct_info, defined)
    if not defined:
        return func
    fresh = {v: type(v)(v.name, v.dtype) for v in defined}
    return Rebinder(fresh).visit(func)


# ==================================================================== the pass
class _OperatorFusor(ExprMutator):
    """Rewrites each dataflow block: every fused group becomes one call of its new function,
    emitted where the group's last binding was (TVM's OperatorFusor)."""

    def __init__(self, mod: IRModule, opt_level: int, max_depth: int) -> None:
        super().__init__(mod)
        self.mod = mod
        self.opt_level = opt_level
        self.max_depth = max_depth
        self.fused_groups = 0

    def transform(self) -> IRModule:
        """Fuse in every Relax function that is not itself a fused group."""
        for gv, func in self.mod.functions_items():
            if isinstance(func, rx.Function) and not is_primitive(func) and "Codegen" not in func.attrs:
                new = self.visit_expr(func)
                if new is not func:
                    self.builder_.update_func(gv, new)
        return self.builder_.get()

    def visit_dataflow_block_(self, block: rx.DataflowBlock) -> rx.BindingBlock:
        """Partition the block, outline its groups, and emit the calls."""
        graph = _GraphBuilder(self.mod).build(block)
        groups = _Partitioner(self.opt_level, self.max_depth).partition(graph.nodes)

        def group_of(var: Any) -> _Group:
            return groups[graph.node_of[id(var)].index].find_root()

        creators = self._collect(block, graph, group_of)
        deps = self._boundaries(block, group_of, creators)
        for creator in creators.values():
            creator.create()
        aliases = self._output_aliases(block, creators, group_of)

        self.builder_.begin_dataflow_block()
        for binding in self._topo_order(block, group_of, deps):
            creator = creators.get(id(group_of(binding.var)))
            if creator is None:
                if id(binding) not in aliases:
                    self.visit_binding(binding)
                continue
            if creator.function is None or binding is not creator.bindings[-1]:
                continue  # emitted with the group's last binding
            self._emit_group(creator, aliases)
        return self.builder_.end_block()

    # ---- steps
    def _collect(self, block: rx.DataflowBlock, graph: _GraphBuilder,
                 group_of: Callable[[Any], _Group]) -> dict[int, _FunctionCreator]:
        """One creator per group to outline: groups of several bindings, and at fuse level 0
        every fusable op alone."""
        creators: dict[int, _FunctionCreator] = {}
        for binding in block.bindings:
            group = group_of(binding.var)
            node = graph.node_of[id(binding.var)]
            alone = self.opt_level == 0 and node.pattern != OpPattern.OPAQUE and isinstance(binding, rx.VarBinding)
            if group.num_nodes > 1 or alone:
                creators.setdefault(id(group), _FunctionCreator()).append(binding)
        return creators

    @staticmethod
    def _boundaries(block: rx.DataflowBlock, group_of: Callable[[Any], _Group],
                    creators: dict[int, _FunctionCreator]) -> dict[int, list[_Group]]:
        """Values used by another group are outputs of their group; returns each group's
        dependencies (for the emission order)."""
        deps: dict[int, list[_Group]] = {}
        for binding in block.bindings:
            group = group_of(binding.var)
            used: list[rx.Var] = []
            post_order_visit(binding.value, lambda e: used.append(e) if isinstance(e, rx.Var) else None)
            for var in used:
                producer = group_of(var)
                if producer is group:
                    continue
                deps.setdefault(id(group), []).append(producer)
                creator = creators.get(id(producer))
                if creator is not None:
                    creator.add_output(var)
        return deps

    @staticmethod
    def _output_aliases(block: rx.DataflowBlock, creators: dict[int, _FunctionCreator],
                        group_of: Callable[[Any], _Group]) -> dict[int, rx.VarBinding]:
        """Bindings ``gv = v`` where ``v`` is a fused group's only result and used only there:
        the group's call is bound to ``gv`` directly (id of the alias binding -> binding)."""
        uses: dict[int, int] = {}
        for binding in block.bindings:
            post_order_visit(binding.value, lambda e: uses.__setitem__(id(e), uses.get(id(e), 0) + 1)
                             if isinstance(e, rx.Var) else None)
        aliases: dict[int, rx.VarBinding] = {}
        for binding in block.bindings:
            value = binding.value
            if (isinstance(binding, rx.VarBinding) and isinstance(value, rx.DataflowVar)
                    and not isinstance(binding.var, rx.DataflowVar) and uses.get(id(value)) == 1):
                creator = creators.get(id(group_of(value)))
                if (creator is not None and creator.function is not None and len(creator.outputs) == 1
                        and creator.outputs[0] is value and creator.bindings[-1].var is value):
                    aliases[id(binding)] = binding
                    creator.alias = binding
        return aliases

    @staticmethod
    def _topo_order(block: rx.DataflowBlock, group_of: Callable[[Any], _Group],
                    deps: dict[int, list[_Group]]) -> list[rx.Binding]:
        """The bindings, group by group, each group after the groups it uses, otherwise in the
        original order."""
        per_group: dict[int, list[rx.Binding]] = {}
        order: list[_Group] = []
        for binding in block.bindings:
            group = group_of(binding.var)
            per_group.setdefault(id(group), []).append(binding)
            order.append(group)
        out: list[rx.Binding] = []
        visited: set[int] = set()

        def visit(group: _Group) -> None:
            stack = [(group, False)]
            while stack:
                g, done = stack.pop()
                if done:
                    out.extend(per_group.get(id(g), ()))
                    continue
                if id(g) in visited:
                    continue
                visited.add(id(g))
                stack.append((g, True))
                stack.extend((d, False) for d in reversed(deps.get(id(g), ())))

        for group in order:
            visit(group)
        return out

    def _emit_group(self, creator: _FunctionCreator, aliases: dict[int, rx.VarBinding]) -> None:
        """Add the group's function to the module and emit its call."""
        assert creator.function is not None
        gvar = self.builder_.add_func(creator.function, creator.name)
        call = rx.Call(gvar, tuple(self.visit_expr(a) for a in creator.arguments))
        outputs = creator.outputs
        self.fused_groups += 1
        if creator.alias is not None:
            new = self.builder_.emit_output(call, creator.alias.var.name_hint)
            self.set_var_remap(creator.alias.var, new)
            self.set_var_remap(outputs[0], new)
            return
        # A block output stays visible after the block: it needs a non-dataflow variable.
        escapes = any(not isinstance(v, rx.DataflowVar) for v in outputs)
        new = self.builder_.emit_output(call) if escapes and len(outputs) == 1 else self.builder_.emit(call)
        if len(outputs) == 1:
            self.set_var_remap(outputs[0], new)
            return
        for i, var in enumerate(outputs):
            item = rx.TupleGetItem(new, i)
            emit = self.builder_.emit if isinstance(var, rx.DataflowVar) else self.builder_.emit_output
            self.set_var_remap(var, emit(item))


class FuseOps(ModulePass):
    """Group fusable bindings into private ``Primitive`` Relax functions (see the module doc)."""

    opt_level = 0

    def __init__(self, fuse_opt_level: int = -1) -> None:
        super().__init__()
        self.fuse_opt_level = fuse_opt_level

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        level = ctx.opt_level if self.fuse_opt_level == -1 else self.fuse_opt_level
        max_depth = int(ctx.config.get(MAX_DEPTH_CONFIG, DEFAULT_MAX_DEPTH))
        if max_depth < 1:
            raise ValueError(f"{MAX_DEPTH_CONFIG} must be at least 1, got {max_depth}")
        fusor = _OperatorFusor(mod, level, max_depth)
        out = fusor.transform()
        self.stats["fused_groups"] += fusor.fused_groups
        return out


register_pass("FuseOps", FuseOps)
