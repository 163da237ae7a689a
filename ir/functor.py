"""The one traversal mechanism for all IR: a Visitor and a Mutator that dispatch on each
node class's ``visit_key`` to ``visit_<key>_`` methods, and otherwise walk the node's fields."""
from __future__ import annotations

import contextlib
import sys
import threading
from functools import partial
from types import FunctionType, MethodType
from typing import Any, Callable, Iterator

from . import relax, tir
from .module import GlobalVar
from .node import Map, Node, node_fields, replace

# Field values that are never walked into (Map is an abstract Mapping: isinstance on it is slow).
_LEAVES = frozenset({str, int, float, bool, type(None)})

# Nodes whose identity is their meaning: a rewrite must never copy them to attach a span.
_IDENTITY_NODES = (tir.Var, tir.Buffer, relax.Var, relax.Op, GlobalVar)

__all__ = ["Visitor", "Mutator", "post_order_visit", "children", "inherit_span", "deep_recursion",
           "DEEP_RECURSION_LIMIT"]

# IR nests as deep as a program is long (one DeclBuffer per intermediate buffer of a fused kernel,
# one expression level per inlined op), and every walker here recurses a few frames per level:
# Python's default of 1000 frames covers only a couple of hundred levels. Measured on CPython
# 3.11, 20000 frames of these walkers stay far inside the default 8 MB thread stack.
DEEP_RECURSION_LIMIT = 20_000
_deep_lock = threading.Lock()
_deep_users = [0, 0]  # [walks inside deep_recursion(), the limit to restore when the last ends]


@contextlib.contextmanager
def deep_recursion(limit: int = DEEP_RECURSION_LIMIT) -> Iterator[None]:
    """Run the body with Python's recursion limit at least ``limit`` (restored afterwards)."""
    with _deep_lock:
        if _deep_users[0] == 0:
            _deep_users[1] = sys.getrecursionlimit()
        _deep_users[0] += 1
        if sys.getrecursionlimit() < limit:
            sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        with _deep_lock:
            _deep_users[0] -= 1
            if _deep_users[0] == 0:
                sys.setrecursionlimit(_deep_users[1])


def inherit_span(old: Any, new: Any) -> Any:
    """``new`` carrying ``old``'s source location when it replaces ``old`` and has none.

    Nodes whose identity is their meaning (variables, buffers, ops, global vars) are never
    copied: a copy would be another variable.
    """
    if (new is not old and isinstance(new, Node) and getattr(new, "span", None) is None
            and getattr(old, "span", None) is not None and not isinstance(new, _IDENTITY_NODES)):
        return new.with_span(old.span)
    return new


def children(node: Node) -> list[Node]:
    """The direct child nodes of ``node`` (through tuples and Maps), in field order."""
    out: list[Node] = []

    def collect(value: Any) -> None:
        if isinstance(value, Node):
            out.append(value)
        elif isinstance(value, tuple):
            for v in value:
                collect(v)
        elif isinstance(value, Map):
            for k, v in value.items_tuple():
                collect(k)
                collect(v)

    for name in node_fields(type(node)):
        collect(getattr(node, name))
    return out


class _Dispatch:
    """Per-class cache of the handler function for each node class."""

    _skip_fields: frozenset[str] = frozenset()
    _handler_fns: dict[type, Callable[[Any, Node], Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handler_fns = {}  # one per class: subclasses override handlers

    def _resolve(self, ntype: type) -> Callable[[Any, Node], Any]:
        """The function handling ``ntype`` nodes, ``fn(self, node)`` (cached for the class)."""
        cls = type(self)
        for name in (f"visit_{ntype.visit_key}_", "generic_visit"):
            raw = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
            if raw is not None:
                break
        if type(raw) is not FunctionType:  # a descriptor of another kind: looked up per call
            raw = partial(_call_attribute, name)
        cls._handler_fns[ntype] = raw
        return raw

    def _handler(self, node: Node) -> Callable[[Node], Any]:
        """The bound handler of ``node``."""
        fn = self._handler_fns.get(type(node)) or self._resolve(type(node))
        return MethodType(fn, self)

    def _dispatch(self, node: Node) -> Any:
        """Call ``node``'s handler: one dict look-up, no bound method made."""
        fn = self._handler_fns.get(type(node))
        if fn is None:
            fn = self._resolve(type(node))
        return fn(self, node)


def _call_attribute(name: str, obj: Any, *args: Any) -> Any:
    """``obj.<name>(*args)``, for handlers that are not plain functions."""
    return getattr(obj, name)(*args)


class Visitor(_Dispatch):
    """Walks IR; override ``visit_<key>_(node)`` (e.g. ``visit_call_``, ``visit_buffer_store_``)
    and call ``self.generic_visit(node)`` to continue into the children."""

    def visit(self, node: Any) -> None:
        """Visit a node (tuples and Maps are walked element-wise)."""
        if isinstance(node, Node):
            fn = self._handler_fns.get(type(node))
            if fn is None:
                fn = self._resolve(type(node))
            fn(self, node)
        elif isinstance(node, tuple):
            for v in node:
                self.visit(v)
        elif type(node) in _LEAVES:
            return
        elif isinstance(node, Map):
            for k, v in node.items_tuple():
                self.visit(k)
                self.visit(v)

    def generic_visit(self, node: Node) -> None:
        """Visit every field of ``node``."""
        skip = self._skip_fields
        for name in node_fields(type(node)):
            if name not in skip:
                self.visit(getattr(node, name))


class Mutator(_Dispatch):
    """Rewrites IR bottom-up; override ``visit_<key>_(node)`` to return a replacement.
    Unchanged subtrees are returned as the same objects (no copying)."""

    def visit(self, node: Any) -> Any:
        """Rewrite a node (tuples and Maps element-wise)."""
        if isinstance(node, Node):
            fn = self._handler_fns.get(type(node))
            if fn is None:
                fn = self._resolve(type(node))
            return fn(self, node)
        if isinstance(node, tuple):
            new = tuple(self.visit(v) for v in node)
            return node if all(a is b for a, b in zip(new, node)) else new
        if type(node) in _LEAVES:  # most fields: no (slower, abstract-class) Map check
            return node
        if isinstance(node, Map):
            items = node.items_tuple()
            new_items = tuple((self.visit(k), self.visit(v)) for k, v in items)
            if all(a[0] is b[0] and a[1] is b[1] for a, b in zip(new_items, items)):
                return node
            return Map(new_items)
        return node

    def generic_visit(self, node: Node) -> Node:
        """Rewrite every field of ``node``; rebuild it only when something changed."""
        changes = {}
        skip = self._skip_fields
        for name in node_fields(type(node)):
            if name in skip:
                continue
            old = getattr(node, name)
            new = self.visit(old)
            if new is not old:
                changes[name] = new
        return replace(node, **changes) if changes else node


class _Post(Visitor):
    """Calls ``fn`` on every node after its children (one class for all walks: a class made per
    call is a reference cycle, left for the garbage collector with all it reaches)."""

    def __init__(self, fn: Callable[[Node], None]) -> None:
        self.fn = fn

    def generic_visit(self, node: Node) -> None:
        """The children, then ``node``."""
        super().generic_visit(node)
        self.fn(node)


def post_order_visit(node: Any, fn: Callable[[Node], None]) -> None:
    """Call ``fn`` on every node below and including ``node``, children first."""
    _Post(fn).visit(node)
