"""Structural equality and hashing of IR: compares shapes of trees, mapping variables
bijectively (two modules that differ only in variable identities are equal)."""
from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

from . import relax, tir
from .module import GlobalVar, IRModule
from .node import Map, Node, node_fields

__all__ = ["structural_equal", "assert_structural_equal", "structural_hash", "StructuralMismatch"]

# Nodes whose identity is their meaning: matched one-to-one between the two sides.
_BINDABLE = (tir.Var, relax.Var, tir.Buffer)


class StructuralMismatch(AssertionError):
    """Raised by assert_structural_equal; the message gives the path to the first difference."""


def _float_bits(x: float) -> bytes:
    return struct.pack("<d", x)


class _Equal:
    def __init__(self, explain: bool = False) -> None:
        # Why two objects differ is only worked out for assert_structural_equal: the messages
        # print IR, and structural_equal is asked (and answers False) all the time.
        self.explain = explain
        self.lhs_to_rhs: dict[int, Any] = {}
        self.rhs_to_lhs: dict[int, Any] = {}
        self.path: list[str] = []
        self.why = ""

    def fail(self, why: str | bool) -> bool:
        self.why = why
        return False

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if type(a) in _PLAIN_VALUES:  # as the last lines below, without the checks between
            return (type(a) is type(b) and a == b) or self.fail(self.explain and f"{a!r} vs {b!r}")
        if isinstance(a, Node):
            if type(a) is not type(b):
                return self.fail(self.explain and f"{type(a).__name__} vs {type(b).__name__}")
            if isinstance(a, _BINDABLE):
                mapped = self.lhs_to_rhs.get(id(a))
                if mapped is not None:
                    return mapped is b or self.fail(self.explain and f"variable {_name(a)} maps to another variable than {_name(b)}")
                if id(b) in self.rhs_to_lhs:
                    return self.fail(self.explain and f"variable {_name(b)} is already matched to another variable")
                self.lhs_to_rhs[id(a)] = b
                self.rhs_to_lhs[id(b)] = a
            _, special, fields, _ = _kind(type(a))
            if special == _GLOBAL_VAR:
                return a.name_hint == b.name_hint or self.fail(self.explain and f"{a!r} vs {b!r}")
            if special == _OP:
                return a.name == b.name or self.fail(self.explain and f"op {a.name} vs {b.name}")
            if special == _CONSTANT:
                return self.eq_array(a.data, b.data)
            for name in fields:
                self.path.append(name)
                if not self.eq(getattr(a, name), getattr(b, name)):
                    return False
                self.path.pop()
            return True
        if isinstance(a, IRModule):
            if not isinstance(b, IRModule):
                return self.fail(self.explain and "IRModule vs " + type(b).__name__)
            fa = sorted(a.functions_items(), key=lambda kv: kv[0].name_hint)
            fb = sorted(b.functions_items(), key=lambda kv: kv[0].name_hint)
            if [g.name_hint for g, _ in fa] != [g.name_hint for g, _ in fb]:
                return self.fail(self.explain and f"functions {[g.name_hint for g, _ in fa]} vs {[g.name_hint for g, _ in fb]}")
            for (ga, fa_), (_, fb_) in zip(fa, fb):
                self.path.append(f"[{ga.name_hint!r}]")
                if not self.eq(fa_, fb_):
                    return False
                self.path.pop()
            return self.eq(a.attrs, b.attrs)
        if isinstance(a, (tuple, list)):
            if not isinstance(b, (tuple, list)) or len(a) != len(b):
                return self.fail(self.explain and f"{_short(a)} vs {_short(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                self.path.append(f"[{i}]")
                if not self.eq(x, y):
                    return False
                self.path.pop()
            return True
        if isinstance(a, Map):
            if not isinstance(b, Map) or len(a) != len(b):
                return self.fail(self.explain and f"{_short(a)} vs {_short(b)}")
            if all(isinstance(k, str) for k in a):
                if set(a) != set(b):
                    return self.fail(self.explain and f"keys {sorted(a)} vs {sorted(b)}")
                pairs = [(a[k], b[k], k) for k in sorted(a)]
                for x, y, k in pairs:
                    self.path.append(f"[{k!r}]")
                    if not self.eq(x, y):
                        return False
                    self.path.pop()
                return True
            return self.eq(list(a.items_tuple()), list(b.items_tuple()))
        if isinstance(a, float) and isinstance(b, float):
            return _float_bits(a) == _float_bits(b) or (math.isnan(a) and math.isnan(b)) \
                or self.fail(self.explain and f"{a!r} vs {b!r}")
        if isinstance(a, np.ndarray):
            return isinstance(b, np.ndarray) and self.eq_array(a, b)
        if type(a) is not type(b):
            return self.fail(self.explain and f"{a!r} vs {b!r}")
        return a == b or self.fail(self.explain and f"{a!r} vs {b!r}")

    def eq_array(self, a: np.ndarray, b: np.ndarray) -> bool:
        if a.dtype != b.dtype or a.shape != b.shape:
            return self.fail(self.explain and f"constant {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}")
        return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes() \
            or self.fail(self.explain and "constant values differ")


def _ignored(cls: type, field: str) -> bool:
    """Fields structural equality and hashing leave out, as TVM's do: a struct info derived from
    the rest of the node, and names, which are hints (variables, buffers and blocks match by
    position; TVM's equality ignores block names too)."""
    if field == "struct_info":
        return not issubclass(cls, relax.Var)
    if field in ("name", "name_hint"):
        return issubclass(cls, (tir.Var, relax.Var, tir.Buffer, tir.Block))
    return False


_PLAIN, _GLOBAL_VAR, _OP, _CONSTANT = range(4)
_PLAIN_VALUES = frozenset({str, int, bool, type(None)})
_KINDS: dict[type, tuple[bool, int, tuple[str, ...], str]] = {}


def _kind(cls: type) -> tuple[bool, int, tuple[str, ...], str]:
    """Per node class, worked out once: (bindable, special kind, compared fields, class name)."""
    kind = _KINDS.get(cls)
    if kind is None:
        special = (_GLOBAL_VAR if issubclass(cls, GlobalVar) else _OP if issubclass(cls, relax.Op)
                   else _CONSTANT if issubclass(cls, relax.Constant) else _PLAIN)
        fields = tuple(n for n in node_fields(cls) if not _ignored(cls, n))
        kind = _KINDS[cls] = (issubclass(cls, _BINDABLE), special, fields, cls.__name__)
    return kind


def _name(v: Any) -> str:
    return getattr(v, "name", None) or getattr(v, "name_hint", "?")


def _short(x: Any) -> str:
    text = repr(x) if not isinstance(x, Node) else type(x).__name__
    return text if len(text) < 60 else text[:57] + "..."


def structural_equal(lhs: Any, rhs: Any) -> bool:
    """True when two IR objects have the same structure (variables matched one-to-one)."""
    return _Equal().eq(lhs, rhs)


def assert_structural_equal(lhs: Any, rhs: Any) -> None:
    """Raise StructuralMismatch with the path to the first difference unless structurally equal."""
    checker = _Equal(explain=True)
    if not checker.eq(lhs, rhs):
        path = "".join(p if p.startswith("[") else "." + p for p in checker.path) or "<root>"
        raise StructuralMismatch(f"not structurally equal at {path}: {checker.why}")


class _Hasher:
    def __init__(self) -> None:
        self.numbering: dict[int, int] = {}

    def h(self, x: Any) -> Any:
        if type(x) in _PLAIN_VALUES:  # most field values: skip the checks below (Map's is slow)
            return hash(x)
        if isinstance(x, Node):
            bindable, special, fields, cls_name = _kind(type(x))
            if bindable:
                n = self.numbering.get(id(x))
                if n is not None:
                    return ("ref", n)
                self.numbering[id(x)] = len(self.numbering)
            if special == _GLOBAL_VAR:
                return ("gv", x.name_hint)
            if special == _OP:
                return ("op", x.name)
            if special == _CONSTANT:
                return ("const", str(x.data.dtype), x.data.shape, hash(np.ascontiguousarray(x.data).tobytes()))
            items: list[Any] = [cls_name]
            for name in fields:
                items.append(self.h(getattr(x, name)))
            return hash(tuple(items))
        if isinstance(x, IRModule):
            return hash(tuple((g.name_hint, self.h(f)) for g, f in
                              sorted(x.functions_items(), key=lambda kv: kv[0].name_hint)))
        if isinstance(x, (tuple, list)):
            return hash(tuple(self.h(e) for e in x))
        if isinstance(x, Map):
            if all(isinstance(k, str) for k in x):
                return hash(tuple((k, self.h(x[k])) for k in sorted(x)))
            return hash(tuple((self.h(k), self.h(v)) for k, v in x.items_tuple()))
        if isinstance(x, float):
            return ("f", _float_bits(x) if not math.isnan(x) else b"nan")
        if isinstance(x, np.ndarray):
            return hash(np.ascontiguousarray(x).tobytes())
        try:
            return hash(x)
        except TypeError:
            return hash(repr(x))


def structural_hash(obj: Any) -> int:
    """A hash consistent with structural_equal (variables hashed by first-occurrence order)."""
    return hash(_Hasher().h(obj))
