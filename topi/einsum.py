"""Einstein summation (``topi.einsum``, block ``T_einsum``) and the outer product (block ``outer``).

``parse_subscripts`` reads numpy's notation (implicit and explicit output, ``...`` for broadcast
dimensions, repeated labels for diagonals); the Relax op's inference reads it the same way."""
from __future__ import annotations

from functools import reduce
from typing import Any, Sequence

from ..ir import tir
from ..ir.arith import can_prove_equal, format_expr, is_const_int
from ..te import tensor as T
from ..te.expr import Expr
from ..te.tensor import Tensor, compute
from ..te.tensor_arith import cpp_compute

__all__ = ["parse_subscripts", "einsum_shape", "einsum", "outer"]


def _ellipsis(i: int) -> str:
    """The label of the ``i``-th broadcast dimension ``...`` stands for."""
    return f"...{i}"


def parse_subscripts(subscripts: str, ndims: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """The labels of each operand's dimensions and of the output's; ValueError on a bad spelling."""
    text = subscripts.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"the subscripts {subscripts!r} name {len(terms)} operands, got {len(ndims)}")
    spans = []
    for term, ndim in zip(terms, ndims):
        letters = term.replace("...", "")
        if not all(c.isalpha() for c in letters) or term.count("...") > 1:
            raise ValueError(f"bad subscripts {term!r}: labels are letters, with at most one '...'")
        extra = ndim - len(letters)
        if extra < 0 or (extra > 0 and "..." not in term):
            raise ValueError(f"the subscripts {term!r} do not match an operand of {ndim} dimensions")
        spans.append(extra)
    width = max(spans, default=0)
    inputs = []
    for term, extra in zip(terms, spans):
        pre, _, post = term.partition("...")
        inputs.append(list(pre) + [_ellipsis(width - extra + i) for i in range(extra)] + list(post))
    broadcast = [_ellipsis(i) for i in range(width)]
    if not arrow:  # implicit: the labels used once, alphabetically, after the broadcast ones
        counts: dict[str, int] = {}
        for c in lhs:
            if c.isalpha():
                counts[c] = counts.get(c, 0) + 1
        return inputs, broadcast + sorted(c for c, k in counts.items() if k == 1)
    letters = rhs.replace("...", "")
    if not all(c.isalpha() for c in letters) or len(set(letters)) != len(letters) or rhs.count("...") > 1:
        raise ValueError(f"bad output subscripts {rhs!r}: distinct letters, with at most one '...'")
    if any(c not in lhs for c in letters):
        raise ValueError(f"the output subscripts {rhs!r} name a label no operand has")
    pre, dots, post = rhs.partition("...")
    return inputs, list(pre) + (broadcast if dots else []) + list(post)  # without "...", they are summed


def einsum_shape(labels: list[list[str]], shapes: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The extent of each label: equal across operands (broadcast ones may be 1); ValueError when not."""
    extent: dict[str, Any] = {}
    for op_labels, shape in zip(labels, shapes):
        for label, d in zip(op_labels, shape):
            have = extent.get(label)
            if have is None or (label.startswith("...") and is_const_int(have, 1)):
                extent[label] = d
            elif label.startswith("...") and is_const_int(d, 1):
                continue
            elif not can_prove_equal(have, d) and is_const_int(have) and is_const_int(d):
                raise ValueError(f"label {label!r} stands for dimensions of {format_expr(have)} and {format_expr(d)}")
    return extent


def einsum(subscripts: str, *operands: Tensor) -> Tensor:
    """The Einstein summation of ``operands`` (block ``T_einsum``, reduce axes named by their labels)."""
    labels, out = parse_subscripts(subscripts, [t.ndim for t in operands])
    extent = einsum_shape(labels, [t.shape for t in operands])
    summed = [c for lab in labels for c in lab if c not in out]
    summed = list(dict.fromkeys(summed))
    red = {c: T.reduce_axis((0, extent[c]), c) for c in summed}

    def f(ax: list) -> Any:
        where = dict(zip(out, ax), **red)
        reads = []
        for t, lab in zip(operands, labels):
            idx = [tir.IntImm(d.dtype, 0) if c.startswith("...") and is_const_int(d, 1)
                   and not is_const_int(extent[c], 1) else where[c] for c, d in zip(lab, t.shape)]
            reads.append(t(*idx))
        body: Expr = reduce(lambda a, b: a * b, reads)
        return T.sum(body, axis=[red[c] for c in summed]) if summed else body

    return cpp_compute([extent[c] for c in out], f, "T_einsum", "einsum")


def outer(a: Tensor, b: Tensor) -> Tensor:
    """``a[i] * b[j]`` of two vectors (block ``outer``, axes ``i, j``), in ``a``'s dtype."""
    return compute((a.shape[0], b.shape[0]), lambda i, j: a[i] * b[j].astype(a.dtype), name="outer")
