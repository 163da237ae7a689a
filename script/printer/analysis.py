"""Small IR queries the printer needs: constant checks, TVM's constant folding rules (to decide
between ``a + b`` and ``T.Add(a, b)``), deep equality, variable uses, and the deepest scope that
encloses every use of a variable."""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.dtype import lanes_of
from tvmlite.ir.node import Map, Node, node_fields

__all__ = ["is_one", "is_zero", "fold_add", "fold_mul", "would_fold", "dtype_of",
           "expr_deep_equal", "uses_var", "tir_vars", "contains_block_realize", "count_var_uses",
           "is_simple_buffer", "inline_params", "common_prefix", "sinfo_equal", "is_void_sinfo"]


def is_one(e: Any) -> bool:
    """True for the literal 1 (or ``True``)."""
    if isinstance(e, (tir.IntImm, tir.FloatImm)):
        return e.value == 1
    return isinstance(e, (bool, int, float)) and e == 1


def is_zero(e: Any) -> bool:
    """True for the literal 0."""
    if isinstance(e, (tir.IntImm, tir.FloatImm)):
        return e.value == 0
    return isinstance(e, (bool, int, float)) and not isinstance(e, Node) and e == 0


def fold_add(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """``a + b`` as TVM's ``operator+`` builds it (constants folded)."""
    ta, tb = type(a), type(b)
    if ta is tir.IntImm and tb is tir.IntImm:
        return tir.IntImm(a.dtype, a.value + b.value)
    if ta is tir.IntImm and a.value == 0:
        return b
    if tb is tir.IntImm and b.value == 0:
        return a
    if ta is tir.FloatImm and tb is tir.FloatImm:
        return tir.FloatImm(a.dtype, a.value + b.value)
    return tir.Add(a, b)


def fold_mul(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """``a * b`` with constants folded."""
    if type(a) is tir.IntImm and type(b) is tir.IntImm:
        return tir.IntImm(b.dtype, a.value * b.value)
    return tir.Mul(a, b)


def _kinds(a: Any, b: Any) -> tuple[Any, Any, Any, Any]:
    pa = a.value if type(a) is tir.IntImm else None
    pb = b.value if type(b) is tir.IntImm else None
    fa = a.value if type(a) is tir.FloatImm else None
    fb = b.value if type(b) is tir.FloatImm else None
    return pa, pb, fa, fb


def dtype_of(e: Any, memo: dict) -> Any:
    """``e.dtype``, memoised through chains of operators (the IR derives an operator's dtype
    from its first operand, which is quadratic on long left-deep sums)."""
    chain = []
    x = e
    while isinstance(x, (tir.BinaryOp, tir.Not)):
        known = memo.get(x)
        if known is not None:
            break
        chain.append(x)
        x = x.a
    else:
        known = None
    if known is None:
        known = getattr(x, "dtype", None)
    for node in reversed(chain):
        if isinstance(node, tir.CmpOp):
            lanes = lanes_of(str(known))
            known = f"boolx{lanes}" if lanes > 1 else "bool"
        memo[node] = known
    return known


def would_fold(node: tir.BinaryOp, check_types: bool = True, memo: dict | None = None) -> bool:
    """True when re-applying the operator to the operands would not give this node back
    (TVM's ``BinaryOpMatchTypes`` + ``TryConstFold``): then the constructor form is printed."""
    a, b = node.a, node.b
    if check_types:
        memo = {} if memo is None else memo
        da, db = dtype_of(a, memo), dtype_of(b, memo)
        if da is None or da != db:
            return True
    pa, pb, fa, fb = _kinds(a, b)
    cls = type(node)
    if cls is tir.Add:
        return ((pa is not None and pb is not None) or pa == 0 or pb == 0
                or (fa is not None and fb is not None) or fa == 0 or fb == 0)
    if cls is tir.Sub:
        return ((pa is not None and pb is not None) or pb == 0
                or (fa is not None and fb is not None) or fb == 0)
    if cls is tir.Mul:
        return ((pa is not None and pb is not None) or pa in (0, 1) or pb in (0, 1)
                or (fa is not None and fb is not None) or fa in (0.0, 1.0) or fb in (0.0, 1.0))
    if cls in (tir.Div, tir.FloorDiv):
        return ((pa is not None and pb is not None) or pa == 0 or pb == 1
                or (fa is not None and fb is not None and fb != 0) or fa == 0 or fb == 1)
    if cls in (tir.FloorMod, tir.Mod):
        return (pa is not None and pb is not None) or pa == 0 or pb == 1
    if cls in (tir.And, tir.Or):
        return pa is not None or pb is not None
    if isinstance(node, tir.CmpOp):
        return (pa is not None and pb is not None) or (fa is not None and fb is not None)
    return False


def expr_deep_equal(a: Any, b: Any) -> bool:
    """Structural equality of expressions with variables compared by identity."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (tir.Var, tir.Buffer)):
        return False
    if isinstance(a, tir.FloatImm):
        return a.dtype == b.dtype and (a.value == b.value or (math.isnan(a.value) and math.isnan(b.value)))
    if isinstance(a, Node):
        for name in node_fields(type(a)):
            if not expr_deep_equal(getattr(a, name), getattr(b, name)):
                return False
        return True
    if isinstance(a, tuple):
        return len(a) == len(b) and all(expr_deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, Map):
        pairs = zip(a.items_tuple(), b.items_tuple())
        return len(a) == len(b) and all(expr_deep_equal(x, y) for x, y in pairs)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return a == b


_LEAVES = frozenset({str, int, float, bool, type(None)})


def _walk(root: Any) -> Iterable[Any]:
    """Every node below ``root`` (with repetitions), depth first."""
    stack = [root]
    fields = node_fields
    leaves = _LEAVES
    pop = stack.pop
    push = stack.append
    while stack:
        x = pop()
        t = type(x)
        if t is tuple:
            stack.extend(x)
        elif t is Map:
            for k, v in x.items_tuple():
                push(k)
                push(v)
        elif isinstance(x, Node):
            yield x
            for name in fields(t):
                v = getattr(x, name)
                if type(v) not in leaves:
                    push(v)


def uses_var(e: Any, variables: set) -> bool:
    """True when an expression mentions one of ``variables``."""
    if not variables:
        return False
    for x in _walk(e):
        if x in variables:
            return True
    return False


def tir_vars(e: Any) -> list:
    """The TIR variables in an expression (with repetitions)."""
    return [x for x in _walk(e) if isinstance(x, tir.Var)]


def contains_block_realize(stmt: Any) -> bool:
    """True when a statement contains a BlockRealize."""
    for x in _walk(stmt):
        if type(x) is tir.BlockRealize:
            return True
    return False


def count_var_uses(roots: Iterable[Any], targets: set) -> dict:
    """How often each of ``targets`` occurs below ``roots`` (a buffer counts its fields each
    time it is used, as TVM's occurrence counter does)."""
    counts = dict.fromkeys(targets, 0)
    if not targets:
        return counts
    buffer_hits: dict[Any, list] = {}  # buffer -> targets found in its fields (computed once)
    stack: list = [tuple(roots)]
    fields = node_fields
    leaves = _LEAVES
    pop = stack.pop
    push = stack.append
    buffer_cls = tir.Buffer
    while stack:
        x = pop()
        t = type(x)
        if t is tuple:
            stack.extend(x)
        elif t is Map:
            for k, v in x.items_tuple():
                push(k)
                push(v)
        elif t is buffer_cls:
            hits = buffer_hits.get(x)
            if hits is None:
                hits = [n for n in _walk((x.data, x.shape, x.strides, x.elem_offset)) if n in counts]
                buffer_hits[x] = hits
            for n in hits:
                counts[n] += 1
        elif isinstance(x, Node):
            if x in counts:
                counts[x] += 1
            for name in fields(t):
                v = getattr(x, name)
                if type(v) not in leaves:
                    push(v)
    return counts


def is_simple_buffer(buf: tir.Buffer) -> bool:
    """A buffer that can be written inline as ``T.Buffer(shape, dtype)`` in a signature."""
    if buf.strides:
        return False
    for e in buf.shape:
        if not isinstance(e, (tir.IntImm, tir.FloatImm)) and tir_vars(e):
            return False
    eo = buf.elem_offset
    if eo is not None:
        if isinstance(eo, tir.IntImm):
            if eo.value != 0:
                return False
        elif tir_vars(eo):
            return False
    return (buf.scope in ("global", "") and buf.data_alignment == 64 and buf.offset_factor == 1
            and buf.buffer_type == "default" and not buf.axis_separators)


def inline_params(body: Any, params: Iterable[Any], bmap: Any) -> set:
    """The handle parameters whose buffers print inline as ``A: T.Buffer(...)``: the handle is used
    nowhere else, the buffer is simple and no other buffer shares its data (TVM's rule)."""
    bmap = {k: b for k, b in bmap.items() if isinstance(b, tir.Buffer)}
    targets = {v for v in params if v in bmap}
    if not targets:
        return set()
    data_count: dict[int, int] = {}
    for b in bmap.values():
        data_count[id(b.data)] = data_count.get(id(b.data), 0) + 1
    counts = count_var_uses((body, tuple(params), tuple(bmap.keys()), tuple(bmap.values())), targets)
    return {v for v in targets if counts.get(v) == 2 and is_simple_buffer(bmap[v])
            and data_count[id(bmap[v].data)] == 1}


def common_prefix(root: Any) -> dict:
    """For every TIR variable and buffer below ``root``: the list of enclosing statements (and
    functions) shared by all of its occurrences, outermost first (TVM's ``SetCommonPrefix``)."""
    prefix: dict[Any, list] = {}
    visited: set[int] = set()
    path: list = []
    fields = node_fields

    def handle(x: Any) -> None:
        old = prefix.get(x)
        if old is None:
            prefix[x] = list(path)
            return
        n = min(len(old), len(path))
        for i in range(n):
            if old[i] is not path[i]:
                del old[i:]
                return
        del old[n:]

    def visit(x: Any) -> None:
        if isinstance(x, Node):
            is_var = isinstance(x, (tir.Var, tir.Buffer))
            if id(x) in visited:
                if is_var:
                    handle(x)
                return
            visited.add(id(x))
            scope = isinstance(x, (tir.Stmt, tir.PrimFunc))
            if scope:
                path.append(x)
            for name in fields(type(x)):
                v = getattr(x, name)
                if isinstance(v, (Node, tuple, Map)):
                    visit(v)
            if is_var:
                handle(x)
            if scope:
                path.pop()
        elif isinstance(x, tuple):
            for v in x:
                visit(v)
        elif isinstance(x, Map):
            for k, v in x.items_tuple():
                visit(k)
                visit(v)

    try:
        visit(root)
    except RecursionError:  # absurdly deep IR: give up on placement, the printer copes
        return {}
    return prefix


def sinfo_equal(a: Any, b: Any) -> bool:
    """Structural equality of struct info, TIR variables compared by identity."""
    return expr_deep_equal(a, b)


def is_void_sinfo(sinfo: Any) -> bool:
    """True for the empty tuple struct info (the result of ``R.print`` and friends)."""
    return isinstance(sinfo, rx.TupleStructInfo) and len(sinfo.fields) == 0
