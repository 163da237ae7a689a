"""The dataflow graph of a Relax function drawn as SVG: ops as nodes, the tensors flowing
between them (with their shapes) as edges, fused functions outlined as groups holding their ops.

The layout is a small layered (Sugiyama-style) one, so no graphviz is needed: layers by
longest path from the inputs, dummy nodes where an edge spans several layers, the order in
each layer by barycentre sweeps (the one with the fewest crossings kept), and x positions
that sit each node as close to its neighbours' mean as the order allows (an isotonic
regression, solved exactly by pool-adjacent-violators). Groups are laid out inside first
and then placed as one large node."""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from ..ir import relax as rx
from ..ir import tir
from ..ir.expr_functor import post_order_visit
from ..ir.module import GlobalVar, IRModule

__all__ = ["GraphNode", "Graph", "dataflow_graph", "layout", "render_svg", "module_graphs", "module_graphs_svg",
           "new_nodes",
           "layer_assignment", "order_layers", "count_crossings", "place_in_order"]

CHAR_W = 7.2  # width of one character of the 12px monospace font used for labels
LINE_H = 15.0
PAD_X, PAD_Y = 10.0, 7.0
LAYER_GAP = 46.0  # room between layers for the edge labels
NODE_GAP = 26.0
DUMMY_W = 4.0
LABEL_CHAR_W = 6.0  # the 10px font of the edge labels
LABEL_AT = 0.4  # where along an edge's first segment its label sits: nearer the source, where
# the edges converging on one node are still apart
MAX_LABEL = 28  # longer shapes are cut (the node's tooltip has them whole)
LEAF_WEIGHT = 0.01  # how much an input feeding one node weighs against the others in its layer
GROUP_PAD = 14.0
GROUP_TITLE = 20.0


@dataclass
class GraphNode:
    """A node: ``kind`` is "input", "op", "call", "tuple", "getitem", "const", "output" or "group"."""

    id: str
    lines: list[str]
    kind: str
    op: str = ""  # the op's name for op nodes ("relax.matmul", "relax.call_tir")
    title: str = ""  # the tooltip: the binding it draws
    group: "Graph | None" = None  # the fused function's graph, for a group
    w: float = 0.0
    h: float = 0.0
    x: float = 0.0  # centre
    y: float = 0.0  # top


@dataclass
class Graph:
    """Nodes and edges ``(source id, target id, label)`` of one function."""

    name: str
    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    routes: list[tuple[list[tuple[float, float]], str]] = field(default_factory=list)


def _dim(e: tir.PrimExpr) -> str:
    if isinstance(e, tir.IntImm):
        return str(e.value)
    if isinstance(e, tir.Var):
        return e.name
    return str(e)


def shape_label(sinfo: rx.StructInfo | None) -> str:
    """A short form of a value's struct info: ``(n, 128) float32``."""
    if isinstance(sinfo, rx.TensorStructInfo):
        if sinfo.shape is None:
            shape = "?" if sinfo.ndim < 0 else f"ndim={sinfo.ndim}"
        else:
            dims = ", ".join(_dim(d) for d in sinfo.shape)
            shape = f"({dims},)" if len(sinfo.shape) == 1 else f"({dims})"
        return shape if sinfo.dtype == "void" else f"{shape} {sinfo.dtype}"
    if isinstance(sinfo, rx.TupleStructInfo):
        return "(" + ", ".join(shape_label(f) for f in sinfo.fields) + ")"
    if isinstance(sinfo, rx.ShapeStructInfo):
        return "shape" if sinfo.values is None else "shape(" + ", ".join(_dim(d) for d in sinfo.values) + ")"
    if isinstance(sinfo, rx.PrimStructInfo):
        return sinfo.dtype
    if isinstance(sinfo, rx.DTensorStructInfo):
        return shape_label(sinfo.tensor_sinfo) + " (dist)"
    return "object" if sinfo is not None else ""


def _is_fused(func: object) -> bool:
    return isinstance(func, rx.Function) and bool(func.attrs.get("Primitive", False))


class _Builder:
    """Walks one function's bindings into a Graph."""

    def __init__(self, mod: IRModule, name: str, prefix: str, expand_groups: bool) -> None:
        self.mod = mod
        self.graph = Graph(name)
        self.prefix = prefix
        self.expand_groups = expand_groups
        self.producer: dict[int, str] = {}  # id(var) -> the node computing it
        self.keep: list[rx.Var] = []  # keeps the vars alive, so their ids stay theirs
        self.count = 0
        self.params: set[str] = set()  # the parameters' nodes
        self.used_params: set[str] = set()  # those with an edge already

    def node(self, lines: list[str], kind: str, **kw: object) -> GraphNode:
        n = GraphNode(f"{self.prefix}n{self.count}", lines, kind, **kw)  # type: ignore[arg-type]
        self.count += 1
        self.graph.nodes[n.id] = n
        return n

    def edge(self, src: str, target: GraphNode, sinfo: rx.StructInfo | None) -> None:
        """An edge labelled with the tensor's shape (tuples are drawn, not labelled)."""
        label = "" if isinstance(sinfo, rx.TupleStructInfo) else shape_label(sinfo)
        if len(label) > MAX_LABEL:
            label = label[:MAX_LABEL - 1] + "\u2026"
        if (src, target.id, label) not in self.graph.edges:
            self.graph.edges.append((src, target.id, label))

    def inputs(self, expr: rx.Expr, target: GraphNode) -> None:
        """Edges into ``target`` from every value ``expr`` reads."""
        if isinstance(expr, rx.Var):
            src = self.producer.get(id(expr))
            if src is not None and src in self.used_params:
                # A parameter read again (a weight every layer uses) gets a copy above each
                # further user: one node feeding them all would pull the layers apart.
                first = self.graph.nodes[src]
                src = self.node(first.lines, "input", title=first.title).id
            if src is not None:
                if src in self.params:
                    self.used_params.add(src)
                self.edge(src, target, expr.struct_info)
        elif isinstance(expr, rx.Tuple):
            for f in expr.fields:
                self.inputs(f, target)
        elif isinstance(expr, rx.Constant):
            const = self.node(["const"], "const", title=shape_label(expr.struct_info))
            self.edge(const.id, target, expr.struct_info)
        elif isinstance(expr, rx.TupleGetItem):
            self.inputs(expr.tuple_value, target)

    def function(self, func: rx.Function, with_params: bool = True) -> Graph:
        if with_params:
            for p in func.params:
                n = self.node([p.name_hint], "input", title=f"{p.name_hint}: {shape_label(p.struct_info)}")
                self.keep.append(p)
                self.producer[id(p)] = n.id
                self.params.add(n.id)
        self.seq(func.body, output=with_params)
        return self.graph

    def seq(self, seq: rx.SeqExpr, output: bool = True) -> None:
        for block in seq.blocks:
            for b in block.bindings:
                self.binding(b)
        if not output:  # a group's box is its output
            return
        out = self.node(["output"], "output", title=shape_label(seq.body.struct_info))
        self.inputs(seq.body, out)

    def binding(self, b: rx.Binding) -> None:
        value, var = b.value, b.var
        self.keep.append(var)
        if isinstance(b, rx.MatchCast):
            n = self.node(["match_cast"], "op", op="relax.match_cast", title=var.name_hint)
            self.inputs(value, n)
        elif isinstance(value, rx.Var):  # an alias: the same tensor
            if id(value) in self.producer:
                self.producer[id(var)] = self.producer[id(value)]
            return
        elif isinstance(value, rx.Call):
            n = self.call(value, var)
        elif isinstance(value, rx.Tuple):
            n = self.node(["tuple"], "tuple", title=var.name_hint)
            self.inputs(value, n)
        elif isinstance(value, rx.TupleGetItem):
            n = self.node([f"[{value.index}]"], "getitem", title=var.name_hint)
            self.inputs(value.tuple_value, n)
        elif isinstance(value, rx.If):
            n = self.node(["if"], "op", op="relax.if", title=var.name_hint)
            self.inputs(value.cond, n)
            used: list[rx.Var] = []  # the values its branches read from outside them
            for branch in (value.true_branch, value.false_branch):
                post_order_visit(branch, lambda e: used.append(e) if isinstance(e, rx.Var) else None)
            for v in used:
                self.inputs(v, n)
        elif isinstance(value, rx.Constant):
            n = self.node(["const"], "const", title=f"{var.name_hint}: {shape_label(value.struct_info)}")
        else:
            n = self.node([type(value).__name__], "call", title=var.name_hint)
        self.producer[id(var)] = n.id

    def call(self, call: rx.Call, var: rx.Var) -> GraphNode:
        op = call.op
        title = f"{var.name_hint}: {shape_label(var.struct_info)}"
        if isinstance(op, rx.Op):
            name = op.name[len("relax."):] if op.name.startswith("relax.") else op.name
            lines = [name]
            if op.name.startswith("relax.call_tir") or op.name == "relax.call_dps_packed":
                callee = call.args[0] if call.args else None
                if isinstance(callee, GlobalVar):
                    lines.append(callee.name_hint)
                elif isinstance(callee, rx.ExternFunc):
                    lines.append(callee.global_symbol)
                n = self.node(lines, "op", op=op.name, title=title)
                for arg in call.args[1:]:
                    self.inputs(arg, n)
                return n
            n = self.node(lines, "op", op=op.name, title=title)
        elif isinstance(op, GlobalVar):
            callee = self.mod[op.name_hint] if op.name_hint in self.mod else None
            if self.expand_groups and _is_fused(callee):
                inner = _Builder(self.mod, op.name_hint, f"{self.prefix}g{self.count}", False)
                inner.function(callee, with_params=False)
                n = self.node([op.name_hint], "group", title=title, group=inner.graph)
            else:
                n = self.node(["call", op.name_hint], "call", title=title)
        elif isinstance(op, rx.ExternFunc):
            n = self.node(["call_packed", op.global_symbol], "call", title=title)
        else:
            n = self.node(["call"], "call", title=title)
            self.inputs(op, n)
        for arg in call.args:
            self.inputs(arg, n)
        return n


def dataflow_graph(mod: IRModule, name: str) -> Graph:
    """The graph of Relax function ``name`` of ``mod``, fused functions it calls drawn inside it."""
    return _Builder(mod, name, "", True).function(mod[name])


# ---------------------------------------------------------------- layout
def layer_assignment(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Layers by longest path from the sources (a node one below its deepest predecessor), then
    inputs and single-use chains moved down next to their users."""
    succs: dict[str, list[str]] = {n: [] for n in nodes}
    waiting = {n: 0 for n in nodes}
    for u, v in edges:
        succs[u].append(v)
        waiting[v] += 1
    layer = {n: 0 for n in nodes}
    ready = [n for n in nodes if not waiting[n]]
    topo: list[str] = []
    while ready:  # Kahn's order: a node is placed once all its predecessors are
        n = ready.pop()
        topo.append(n)
        for m in succs[n]:
            layer[m] = max(layer[m], layer[n] + 1)
            waiting[m] -= 1
            if not waiting[m]:
                ready.append(m)
    # Then, users first, a node with no more inputs than outputs (an input, a weight's
    # transpose) moves down to just above its first user: shorter edges at no cost.
    n_in = {n: 0 for n in nodes}
    for _, v in edges:
        n_in[v] += 1
    for n in reversed(topo):
        if succs[n] and n_in[n] <= len(succs[n]):
            layer[n] = max(layer[n], min(layer[m] for m in succs[n]) - 1)
    used = {v: i for i, v in enumerate(sorted(set(layer.values())))}  # no empty layers
    return {n: used[v] for n, v in layer.items()}


def count_crossings(order: list[list[str]], edges: list[tuple[str, str]]) -> int:
    """Edge crossings between consecutive layers (edges join consecutive layers only)."""
    pos = {n: i for layer in order for i, n in enumerate(layer)}
    layer_of = {n: li for li, layer in enumerate(order) for n in layer}
    total = 0
    by_layer: dict[int, list[tuple[int, int]]] = {}
    for u, v in edges:
        by_layer.setdefault(layer_of[u], []).append((pos[u], pos[v]))
    for pairs in by_layer.values():
        pairs.sort()
        # Crossings are the inversions of the targets' positions once sorted by source.
        seq = [b for _, b in pairs]
        total += _inversions(seq)
    return total


def _inversions(seq: list[int]) -> int:
    if len(seq) < 2:
        return 0
    mid = len(seq) // 2
    left, right = seq[:mid], seq[mid:]
    count = _inversions(left) + _inversions(right)
    left.sort()
    right.sort()
    j = 0
    for a in left:  # pairs (a in left, b in right) with b < a
        while j < len(right) and right[j] < a:
            j += 1
        count += j
    return count


def order_layers(layers: list[list[str]], edges: list[tuple[str, str]], sweeps: int = 8) -> list[list[str]]:
    """Reorder each layer by the barycentre of its neighbours, down and up; the order with the
    fewest crossings wins."""
    preds: dict[str, list[str]] = {n: [] for layer in layers for n in layer}
    succs: dict[str, list[str]] = {n: [] for layer in layers for n in layer}
    for u, v in edges:
        succs[u].append(v)
        preds[v].append(u)
    order = [list(layer) for layer in layers]
    best, best_cross = [list(layer) for layer in order], count_crossings(order, edges)
    for sweep in range(sweeps):
        down = sweep % 2 == 0
        indices = range(1, len(order)) if down else range(len(order) - 2, -1, -1)
        for li in indices:
            ref = order[li - 1] if down else order[li + 1]
            pos = {n: i for i, n in enumerate(ref)}
            neighbours = preds if down else succs

            def key(item: tuple[int, str], pos: dict[str, int] = pos, nb: dict = neighbours) -> float:
                i, n = item
                ps = [pos[m] for m in nb[n] if m in pos]
                return sum(ps) / len(ps) if ps else float(i)  # no neighbour: stay put

            order[li] = [n for _, n in sorted(enumerate(order[li]), key=key)]
        cross = count_crossings(order, edges)
        if cross < best_cross:
            best, best_cross = [list(layer) for layer in order], cross
    return best


def place_in_order(desired: list[float], widths: list[float], gap: float,
                   right: list[float] | None = None, weights: list[float] | None = None) -> list[float]:
    """Centres as close as possible (weighted least squares) to ``desired`` keeping the order and
    at least ``gap`` between neighbouring boxes: pool-adjacent-violators on the shifted targets.
    A box reaches ``widths[i] / 2`` left of its centre and ``right[i]`` (default: as far) right;
    a light box gives way to a heavy one."""
    right = right if right is not None else [w / 2 for w in widths]
    weights = weights if weights is not None else [1.0] * len(widths)
    offsets = [0.0]
    for i in range(1, len(widths)):
        offsets.append(offsets[-1] + right[i - 1] + widths[i] / 2 + gap)
    blocks: list[list[float]] = []  # [weighted sum, weight, count]
    for d, o, w in zip(desired, offsets, weights):
        blocks.append([(d - o) * w, w, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, w2, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w2
            blocks[-1][2] += c
    out: list[float] = []
    for s, w, c in blocks:
        out += [s / w] * int(c)
    return [y + o for y, o in zip(out, offsets)]


def _size(n: GraphNode) -> None:
    if n.kind == "group" and n.group is not None:
        layout(n.group)
        n.w = max(n.group.width + 2 * GROUP_PAD, len(n.lines[0]) * CHAR_W + 2 * GROUP_PAD)
        n.h = n.group.height + 2 * GROUP_PAD + GROUP_TITLE
    elif n.kind in ("tuple", "getitem", "const"):
        n.w = max(len(line) for line in n.lines) * CHAR_W + 12
        n.h = LINE_H + 8
    else:
        n.w = max(len(line) for line in n.lines) * CHAR_W + 2 * PAD_X
        n.h = len(n.lines) * LINE_H + 2 * PAD_Y


def layout(g: Graph) -> Graph:
    """Give every node of ``g`` its position and every edge its route (in place; returns ``g``)."""
    for n in g.nodes.values():
        _size(n)
    ids = list(g.nodes)
    edges = [(u, v) for u, v, _ in g.edges]
    layer = layer_assignment(ids, edges)
    n_layers = 1 + max(layer.values(), default=-1)
    # Long edges go through one dummy node per layer they cross.
    chains: list[tuple[list[str], str]] = []
    # A node's outgoing label is written right of its edges: keep room for it right of the node.
    label_w = {u: len(label) * LABEL_CHAR_W + 8 for u, _, label in g.edges}
    widths = {n: g.nodes[n].w for n in ids}
    reach = {n: max(g.nodes[n].w / 2, label_w.get(n, 0.0)) for n in ids}
    layers: list[list[str]] = [[] for _ in range(n_layers)]
    for n in ids:
        layers[layer[n]].append(n)
    short: list[tuple[str, str]] = []
    for k, (u, v, label) in enumerate(g.edges):
        chain = [u]
        for li in range(layer[u] + 1, layer[v]):
            d = f"d{k}_{li}"
            layers[li].append(d)
            widths[d] = DUMMY_W
            reach[d] = DUMMY_W / 2
            chain.append(d)
        chain.append(v)
        short += list(zip(chain, chain[1:]))
        chains.append((chain, label))
    order = order_layers(layers, short)
    heights = [max((g.nodes[n].h for n in layer if n in g.nodes), default=0.0) for layer in order]
    ys, y = [], 0.0
    for h in heights:
        ys.append(y)
        y += h + LAYER_GAP
    # x: start packed, then pull each node towards its neighbours, down and up.
    xs: dict[str, float] = {}
    for layer_nodes in order:
        x = 0.0
        for n in layer_nodes:
            xs[n] = x + widths[n] / 2
            x += widths[n] / 2 + reach[n] + NODE_GAP
    nbrs: dict[str, list[str]] = {n: [] for n in widths}
    preds: dict[str, list[str]] = {n: [] for n in widths}
    for u, v in short:
        nbrs[u].append(v)
        nbrs[v].append(u)
        preds[v].append(u)
    out_degree = {n: 0 for n in ids}
    for u, _ in edges:
        out_degree[u] += 1
    leaves = {n for n in ids if g.nodes[n].kind in ("input", "const") and out_degree[n] == 1 and not preds[n]}
    for sweep in range(6):
        seq = order if sweep % 2 == 0 else order[::-1]
        for layer_nodes in seq:
            desired = []
            for n in layer_nodes:
                near = preds[n] if sweep == 0 else nbrs[n]
                # Inputs feeding one node follow it and neither pull nor push it (they are
                # light): otherwise a chain of layers, each with its weights beside it, drifts
                # sideways layer after layer.
                near = [m for m in near if m not in leaves] or near
                desired.append(sum(xs[m] for m in near) / len(near) if near else xs[n])
            placed = place_in_order(desired, [widths[n] for n in layer_nodes], NODE_GAP,
                                    [reach[n] for n in layer_nodes],
                                    [LEAF_WEIGHT if n in leaves else 1.0 for n in layer_nodes])
            for n, x in zip(layer_nodes, placed):
                xs[n] = x
    left = min((xs[n] - widths[n] / 2 for n in xs), default=0.0)
    for n in xs:
        xs[n] -= left
    g.width = max((xs[n] + widths[n] / 2 for n in xs), default=0.0)
    g.height = (ys[-1] + heights[-1]) if ys else 0.0
    layer_y = {n: (ys[li], heights[li]) for li, layer_nodes in enumerate(order) for n in layer_nodes}
    for nid, n in g.nodes.items():
        top, h = layer_y[nid]
        # Centred in its layer; an input sits at the bottom, right above its user.
        n.x, n.y = xs[nid], top + (h - n.h) / (1 if nid in leaves else 2)
    g.routes = []
    for chain, label in chains:
        u, v = g.nodes[chain[0]], g.nodes[chain[-1]]
        points = [(u.x, u.y + u.h)]
        for d in chain[1:-1]:
            top, h = layer_y[d]
            points += [(xs[d], top), (xs[d], top + h)]
        points.append((v.x, v.y))
        g.routes.append((points, label))
    # The labels are drawn right of their edges' first segment: the picture holds them too.
    for points, label in g.routes:
        (x1, _), (x2, _) = points[0], points[1]
        g.width = max(g.width, x1 + LABEL_AT * (x2 - x1) + 4 + len(label) * LABEL_CHAR_W)
    return g


# ---------------------------------------------------------------- drawing
def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _draw(g: Graph, dx: float, dy: float, out: list[str], new: set[str]) -> None:
    for points, label in g.routes:
        pts = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for x, y in points)
        out.append(f'<polyline class="edge" points="{pts}" marker-end="url(#arrow)"/>')
        if label:
            (x1, y1), (x2, y2) = points[0], points[1]
            lx, ly = x1 + LABEL_AT * (x2 - x1), y1 + LABEL_AT * (y2 - y1)
            out.append(f'<text class="shape" x="{lx + dx + 4:.1f}" y="{ly + dy + 4:.1f}">'
                       f"{_esc(label)}</text>")
    for n in g.nodes.values():
        x, y = n.x - n.w / 2 + dx, n.y + dy
        tip = f"<title>{_esc(n.title)}</title>" if n.title else ""
        if n.kind == "group" and n.group is not None:
            mark = " new" if n.id in new else ""
            out.append(f'<g class="group{mark}" data-name="{_esc(n.lines[0])}">{tip}'
                       f'<rect x="{x:.1f}" y="{y:.1f}" width="{n.w:.1f}" height="{n.h:.1f}" rx="8"/>'
                       f'<text class="group-title" x="{x + GROUP_PAD:.1f}" y="{y + 16:.1f}">{_esc(n.lines[0])}</text>')
            _draw(n.group, x + GROUP_PAD, y + GROUP_PAD + GROUP_TITLE, out, new)
            out.append("</g>")
            continue
        op = f' data-op="{_esc(n.op)}"' if n.op else ""
        mark = " new" if n.id in new else ""
        out.append(f'<g class="node {n.kind}{mark}"{op}>{tip}'
                   f'<rect x="{x:.1f}" y="{y:.1f}" width="{n.w:.1f}" height="{n.h:.1f}" rx="4"/>')
        top = y + (n.h - len(n.lines) * LINE_H) / 2 + LINE_H - 3.5
        for i, line in enumerate(n.lines):
            cls = ' class="sub"' if i else ""
            out.append(f'<text{cls} x="{n.x + dx:.1f}" y="{top + i * LINE_H:.1f}">{_esc(line)}</text>')
        out.append("</g>")


def render_svg(g: Graph, new: set[str] | frozenset[str] = frozenset()) -> str:
    """An SVG picture of a laid-out graph (styled by the page's stylesheet); the nodes ``new``
    names are marked as new (class ``new``)."""
    margin = 12.0
    w, h = g.width + 2 * margin, g.height + 2 * margin
    out = [f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
           f'viewBox="0 0 {w:.0f} {h:.0f}" data-function="{_esc(g.name)}">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>']
    _draw(g, margin, margin, out, set(new))
    out.append("</svg>")
    return "\n".join(out)


def module_graphs(mod: IRModule) -> list[Graph]:
    """The laid-out graph of each Relax function of ``mod`` that is not a fused one."""
    return [layout(dataflow_graph(mod, gv.name_hint)) for gv, func in mod.functions_items()
            if isinstance(func, rx.Function) and not _is_fused(func)]


def _all_nodes(g: Graph) -> list[GraphNode]:
    out = []
    for n in g.nodes.values():
        out.append(n)
        if n.group is not None:
            out += _all_nodes(n.group)
    return out


def _signature(n: GraphNode) -> tuple:
    return (n.kind, tuple(n.lines))


def new_nodes(g: Graph, before: Graph | None) -> set[str]:
    """The nodes of ``g`` the graph ``before`` has no counterpart for (same kind and label; each
    node of ``before`` answers for one): what a pass added or rewrote."""
    if before is None:
        return set()
    left: dict[tuple, int] = {}
    for n in _all_nodes(before):
        left[_signature(n)] = left.get(_signature(n), 0) + 1
    out = set()
    for n in _all_nodes(g):
        key = _signature(n)
        if left.get(key, 0):
            left[key] -= 1
        else:
            out.add(n.id)
    return out


def module_graphs_svg(mod: IRModule) -> list[tuple[str, str]]:
    """(function name, SVG) for each Relax function of ``mod`` that is not a fused one."""
    return [(g.name, render_svg(g)) for g in module_graphs(mod)]
