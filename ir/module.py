"""IRModule: the unit of compilation, a set of functions indexed by GlobalVars."""
from __future__ import annotations

from typing import Any, Iterator

from .node import Map, Node, node, printer_hook

__all__ = ["GlobalVar", "IRModule"]


@node
class GlobalVar(Node):
    """The name of a module-level function."""

    name_hint: str

    def __repr__(self) -> str:
        return f'I.GlobalVar("{self.name_hint}")'

    __str__ = __repr__


class IRModule:
    """An ordered collection of functions (PrimFunc, Relax Function, ExternFunc) with attributes.

    As in TVM, ``update_func``/``__setitem__`` change the module in place; passes never
    change their input module, they build a new one.
    """

    __slots__ = ("_functions", "_by_name", "attrs", "global_infos", "__weakref__")

    def __init__(self, functions: dict | None = None, attrs: Map | dict | None = None,
                 global_infos: Map | dict | None = None) -> None:
        self._functions: dict[GlobalVar, Node] = {}
        self._by_name: dict[str, GlobalVar] = {}  # name -> GlobalVar, so lookups stay O(1)
        self.attrs = Map(attrs or {})
        self.global_infos = Map(global_infos or {})
        for key, func in (functions or {}).items():
            self[key] = func

    # ---- construction
    @staticmethod
    def from_expr(func: Node, name: str | None = None) -> "IRModule":
        """A module holding one function, named by its global_symbol or ``main``."""
        attrs = getattr(func, "attrs", None) or {}
        symbol = attrs.get("global_symbol") if hasattr(attrs, "get") else None
        return IRModule({GlobalVar(name or symbol or "main"): func})

    def copy(self) -> "IRModule":
        """A shallow copy (the functions themselves are immutable)."""
        out = IRModule(attrs=self.attrs, global_infos=self.global_infos)
        out._functions = dict(self._functions)
        out._by_name = dict(self._by_name)
        return out

    # ---- lookup
    def get_global_var(self, name: str) -> GlobalVar:
        """The GlobalVar named ``name``; KeyError when absent."""
        gv = self._by_name.get(name)
        if gv is not None:
            return gv
        raise KeyError(f"no function named {name!r} in the module "
                       f"(it has: {', '.join(g.name_hint for g in self._functions) or 'none'})")

    def get_global_vars(self) -> list[GlobalVar]:
        """The module's GlobalVars, in insertion order."""
        return list(self._functions)

    def functions_items(self) -> list[tuple[GlobalVar, Node]]:
        """(GlobalVar, function) pairs, in insertion order."""
        return list(self._functions.items())

    @property
    def functions(self) -> dict[GlobalVar, Node]:
        """A read-only view of GlobalVar -> function (a copy)."""
        return dict(self._functions)

    def _key(self, key: GlobalVar | str) -> GlobalVar:
        if isinstance(key, str):
            return self.get_global_var(key)
        if key in self._functions:
            return key
        return self.get_global_var(key.name_hint)

    def __getitem__(self, key: GlobalVar | str) -> Node:
        return self._functions[self._key(key)]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            return key in self._by_name
        return key in self._functions

    def __iter__(self) -> Iterator[GlobalVar]:
        return iter(self._functions)

    def __len__(self) -> int:
        return len(self._functions)

    # ---- update (in place, as TVM's IRModule)
    def __setitem__(self, key: GlobalVar | str, func: Node) -> None:
        if isinstance(key, str):
            try:
                key = self.get_global_var(key)
            except KeyError:
                key = GlobalVar(key)
        else:
            known = self._by_name.get(key.name_hint)
            if known is not None and known is not key:
                raise ValueError(f"the module already has another GlobalVar named {key.name_hint!r}")
        self._functions[key] = func
        self._by_name[key.name_hint] = key

    def update_func(self, gv: GlobalVar, func: Node) -> None:
        """Replace (or add) the function of ``gv``."""
        self[gv] = func

    def add(self, name: str, func: Node) -> GlobalVar:
        """Add ``func`` under a new GlobalVar named ``name``; returns that GlobalVar."""
        if name in self:
            raise ValueError(f"the module already has a function named {name!r}")
        gv = GlobalVar(name)
        self[gv] = func
        return gv

    def remove(self, key: GlobalVar | str) -> None:
        """Remove a function."""
        gv = self._key(key)
        del self._functions[gv]
        del self._by_name[gv.name_hint]

    def with_attr(self, key: str, value: Any) -> "IRModule":
        """A copy with one module attribute set."""
        out = self.copy()
        out.attrs = self.attrs.set(key, value)
        return out

    # ---- text
    def script(self, **options: Any) -> str:
        """Print the module as TVMScript."""
        return Node.script(self, **options)  # type: ignore[arg-type]

    def show(self, **options: Any) -> None:
        """Print the module as highlighted TVMScript."""
        Node.show(self, **options)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return self.script()

    def __repr__(self) -> str:
        try:
            return self.script()
        except Exception:
            return f"<IRModule with {len(self)} functions>"

    def _repr_html_(self) -> str:
        return printer_hook("_html_hook")(self.script())
