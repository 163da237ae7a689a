"""The base of every IR node: small immutable classes with explicit fields."""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Callable, ClassVar, Iterator, TypeVar

__all__ = ["Node", "Span", "Map", "node", "node_fields", "replace", "printer_hook"]

_T = TypeVar("_T")


@dataclasses.dataclass(frozen=True, slots=True)
class Span:
    """Where a node came from in the source text (1-based line/column, end column exclusive)."""

    filename: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}"


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


class Node:
    """Base class of IR nodes; subclasses are declared with the :func:`node` decorator.

    Nodes compare and hash by identity (like TVM's ObjectRef ``==``); use
    ``tvmlite.ir.structural_equal`` for structural comparison.
    """

    __slots__ = ()
    # The visitor method that handles this class: ``visit_<visit_key>_``.
    visit_key: ClassVar[str] = "node"
    # Printer hooks, set by tvmlite.script when it loads (the package's ``__init__`` loads it, so
    # they are set before any node can be printed): the IR prints as TVMScript without importing
    # the layer above it. ``_script_hook`` returns the text, ``_show_hook`` prints it highlighted,
    # ``_html_hook`` highlights a text as HTML.
    _script_hook: ClassVar[Callable[..., str] | None] = None
    _show_hook: ClassVar[Callable[..., None] | None] = None
    _html_hook: ClassVar[Callable[[str], str] | None] = None

    def script(self, **options: Any) -> str:
        """Print this node as TVMScript."""
        return printer_hook("_script_hook")(self, **options)

    def show(self, **options: Any) -> None:
        """Print this node as highlighted TVMScript (plain text when not on a terminal)."""
        printer_hook("_show_hook")(self, **options)

    def __str__(self) -> str:
        return self.script()

    def __repr__(self) -> str:
        try:
            return self.script()
        except Exception:  # repr must never fail, even on ill-formed IR
            return f"<{type(self).__name__} at {id(self):#x}>"

    def with_span(self: _T, span: Span | None) -> _T:
        """A copy of this node carrying ``span`` (rewrites keep the source location)."""
        return dataclasses.replace(self, span=span)  # type: ignore[type-var]


def printer_hook(name: str) -> Callable[..., Any]:
    """The printer hook ``name`` of :class:`Node` (an error when tvmlite.script never loaded)."""
    hook = getattr(Node, name)
    if hook is None:
        raise RuntimeError("printing IR needs the TVMScript printer: import tvmlite.script")
    return hook


def node(cls: type[_T] | None = None, *, key: str | None = None) -> Any:
    """Declare an IR node class: a frozen, slotted dataclass with identity equality."""

    def wrap(klass: type[_T]) -> type[_T]:
        if "span" not in klass.__dict__.get("__annotations__", {}):
            klass.__annotations__ = dict(klass.__dict__.get("__annotations__", {}))
            klass.__annotations__["span"] = "Span | None"
            klass.span = dataclasses.field(default=None, kw_only=True, compare=False)  # type: ignore[attr-defined]
        out = dataclasses.dataclass(frozen=True, eq=False, slots=True, repr=False)(klass)
        out.visit_key = key or _snake(klass.__name__)  # type: ignore[attr-defined]
        out.__str__ = Node.__str__  # dataclass must not replace the printing behaviour
        return out

    return wrap(cls) if cls is not None else wrap


_FIELDS: dict[type, tuple[str, ...]] = {}


def node_fields(cls: type) -> tuple[str, ...]:
    """The names of a node class's fields (without ``span``), cached."""
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name != "span")
        _FIELDS[cls] = names
    return names


_INIT_FIELDS: dict[type, tuple[str, ...] | None] = {}


def replace(obj: _T, **changes: Any) -> _T:
    """A copy of ``obj`` with some fields changed (the span is kept)."""
    cls = type(obj)
    names = _INIT_FIELDS.get(cls, ())
    if names == ():  # first use: the constructor's fields, or None to leave it to dataclasses
        fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else None
        names = None if fields is None or not all(f.init for f in fields) else tuple(f.name for f in fields)
        _INIT_FIELDS[cls] = names
    if names is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    for name in names:  # what dataclasses.replace does, without finding the fields every time
        if name not in changes:
            changes[name] = getattr(obj, name)
    return cls(**changes)


class Map(Mapping):
    """An immutable, insertion-ordered, hashable mapping used for attributes and buffer maps."""

    __slots__ = ("_items", "_dict")

    def __init__(self, items: Mapping | Iterator | tuple | list | None = None, **kwargs: Any) -> None:
        if items is None:
            pairs: list = []
        elif isinstance(items, Mapping):
            pairs = list(items.items())
        else:
            pairs = list(items)
        pairs.extend(kwargs.items())
        d = dict(pairs)
        object.__setattr__(self, "_dict", d)
        object.__setattr__(self, "_items", tuple(d.items()))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Map is immutable")

    def __getitem__(self, key: Any) -> Any:
        return self._dict[key]

    def __iter__(self) -> Iterator:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __contains__(self, key: object) -> bool:
        return key in self._dict

    def __hash__(self) -> int:
        try:
            return hash(self._items)
        except TypeError:
            return id(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Map):
            return self._dict == other._dict
        if isinstance(other, Mapping):
            return self._dict == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Map({self._dict!r})"

    def set(self, key: Any, value: Any) -> "Map":
        """A copy with ``key`` set to ``value``."""
        d = dict(self._dict)
        d[key] = value
        return Map(d)

    def without(self, key: Any) -> "Map":
        """A copy without ``key``."""
        return Map((k, v) for k, v in self._items if k != key)

    def items_tuple(self) -> tuple:
        """The (key, value) pairs in insertion order."""
        return self._items
