"""The printer's machinery: configuration, frames and names, dispatch on node classes
(``visit_<visit_key>_`` methods, cached per class), dialect prefixes (``I.``/``T.``/``R.``) with
header tracking, attribute values, metadata, and the never-failing fallback."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.module import GlobalVar, IRModule
from tvmlite.ir.node import Map, Node, node_fields

from .docs import P_ATOM, Comment, Line
from .literals import format_bool, format_float, quote
from .metadata import dump_metadata, embed_json
from .namer import Frame, NameTable

__all__ = ["PrinterConfig", "PrinterBase"]

_HEADER_ORDER = (("ir", "I"), ("tir", "T"), ("relax", "R"))
_PACKAGE = "tvmlite.script"
_META_NOTE = "Metadata omitted. Use show_meta=True in script() method to show it."


@dataclasses.dataclass(frozen=True)
class PrinterConfig:
    """Options of :func:`tvmlite.script.printer.script`."""

    show_meta: bool = False
    name: str = "Module"
    module_alias: str = "cls"
    show_all_struct_info: bool = True
    indent_spaces: int = 4


class PrinterBase:
    """State shared by the TIR, Relax and module printers."""

    # class -> unbound handler, filled lazily per printer class
    _dispatch: dict[type, Callable[..., Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}

    def __init__(self, cfg: PrinterConfig) -> None:
        self.cfg = cfg
        # "metadata" names the constants table in printed text, so no variable may take it.
        reserved = ("I", "T", "R", "metadata") + ((cfg.module_alias,) if cfg.module_alias else ())
        self.names = NameTable(reserved)
        self.frames: list[Frame] = []
        self.tokens: list[str] = []
        self.usage: set[str] = set()
        self.metadata: dict[str, list] = {}
        self._meta_index: dict[tuple[str, int], int] = {}
        # Names given by the enclosing binding (module GlobalVar, nested function variable).
        self.binding_names: list[str] = []
        self.used_vars: dict[int, set] = {}  # function id -> the Relax vars it uses
        self.module: IRModule | None = None
        self.module_gvars: dict[str, GlobalVar] = {}
        self.relax_depth = 0
        self.collecting = 0  # frames collecting Relax signature variables
        self.prefix_root: Any = None
        self.prefix: dict | None = None
        self.dtype_memo: dict = {}  # operator node -> dtype (see analysis.dtype_of)

    # ------------------------------------------------------------ prefixes
    def I(self, attr: str) -> str:  # noqa: E743, N802
        """``I.<attr>`` (marks the ir header as used)."""
        self.usage.add("ir")
        return "I." + attr

    def T(self, attr: str) -> str:  # noqa: N802
        """``T.<attr>`` (marks the tir header as used)."""
        self.usage.add("tir")
        return "T." + attr

    def R(self, attr: str) -> str:  # noqa: N802
        """``R.<attr>`` (marks the relax header as used)."""
        self.usage.add("relax")
        return "R." + attr

    def header_wrapper(self, doc: Any) -> Any:
        """The header comments for the dialects used so far, then ``doc``."""
        if not self.usage:
            return doc
        stmts: list = [Comment(f"from {_PACKAGE} import {mod} as {alias}")
                       for mod, alias in _HEADER_ORDER if mod in self.usage]
        stmts.append(Comment(""))
        stmts.append(doc)
        return stmts

    # ------------------------------------------------------------ frames
    @property
    def token(self) -> str | None:
        """The dialect of the innermost function being printed (decides literal spelling)."""
        return self.tokens[-1] if self.tokens else None

    def push(self, kind: str, node: Any = None, token: str | None = None) -> Frame:
        """Open a frame."""
        f = Frame(kind, node, token)
        self.frames.append(f)
        if token is not None:
            self.tokens.append(token)
        return f

    def pop(self, frame: Frame) -> None:
        """Close ``frame`` (and any frame left open above it by a failed handler)."""
        while self.frames:
            top = self.frames.pop()
            self._close(top)
            if top is frame:
                break

    def _close(self, f: Frame) -> None:
        self.names.release(f)
        if f.token is not None and self.tokens:
            self.tokens.pop()
        if f.func_vars is not None:
            f.func_vars = None
            self.collecting -= 1

    def unwind(self, depth: int) -> None:
        """Close frames until only ``depth`` remain (after a handler failed)."""
        while len(self.frames) > depth:
            self._close(self.frames.pop())

    @staticmethod
    def emit(frame: Frame, doc: Any) -> None:
        """Append a statement doc (or a list of them) to a frame."""
        if type(doc) is list:
            frame.stmts.extend(doc)
        elif type(doc) is tuple:
            frame.stmts.append(Line(doc[0]))
        else:
            frame.stmts.append(doc)

    # ------------------------------------------------------------ dispatch
    def _handler(self, cls: type) -> Callable[..., Any]:
        table = type(self)._dispatch
        h = table.get(cls)
        if h is None:
            key = getattr(cls, "visit_key", None)
            h = getattr(type(self), f"visit_{key}_", None) if key else None
            if h is None:
                h = type(self).generic_visit
            table[cls] = h
        return h

    def doc(self, node: Any) -> Any:
        """The doc of any IR object: an expression ``(text, prec)``, a statement, or a list."""
        if not isinstance(node, Node):
            if isinstance(node, IRModule):
                return self.print_module(node)  # type: ignore[attr-defined]
            return (self.value(node), P_ATOM)
        depth = len(self.frames)
        try:
            return self._handler(type(node))(self, node)
        except RecursionError:
            raise  # too deep for this stack: the entry point retries with a bigger one
        except Exception:  # ill-formed IR: never fail, print something readable instead
            self.unwind(depth)
            return self.generic_visit(node)

    def expr(self, node: Any) -> tuple:
        """The ``(text, precedence)`` of an expression-like object."""
        if not isinstance(node, Node):
            return (self.value(node), P_ATOM)
        depth = len(self.frames)
        try:
            d = self._handler(type(node))(self, node)
        except RecursionError:
            raise
        except Exception:
            self.unwind(depth)
            d = self.generic_visit(node)
        if type(d) is tuple:
            return d
        return self.generic_visit(node)  # a statement where an expression was expected

    def stmt(self, node: Any) -> Any:
        """A statement doc (or a list of them) for a statement-like object."""
        d = self.doc(node)
        if type(d) is tuple:
            return Line(d[0])
        return d

    def text(self, node: Any) -> str:
        """Just the text of an expression."""
        return self.expr(node)[0]

    def generic_visit(self, node: Any) -> tuple:
        """A readable constructor-like form for objects without a printer rule."""
        try:
            if not isinstance(node, Node):
                return (self.value(node), P_ATOM)
            parts = []
            for f in node_fields(type(node)):
                v = getattr(node, f)
                if f in ("body", "seq") and isinstance(v, (Node, tuple)):
                    parts.append(f"{f}=...")  # statements do not fit on one line
                else:
                    parts.append(f"{f}={self.value(v)}")
            return (f"{type(node).__name__}({', '.join(parts)})", P_ATOM)
        except RecursionError:
            raise
        except Exception:
            return (f"<{type(node).__name__}>", P_ATOM)

    # ------------------------------------------------------------ values
    def value(self, v: Any) -> str:
        """An attribute value: None, bool, int, float, str, tuple (a list), Map (a dict), or IR."""
        if v is None:
            return "None"
        if isinstance(v, bool):
            return format_bool(v)
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return format_float(v)
        if isinstance(v, str):
            return quote(v)
        if isinstance(v, Node):
            return self.expr(v)[0]
        if isinstance(v, (tuple, list)):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, (Map, dict)):
            items = list(v.items())
            if all(isinstance(k, str) for k, _ in items):
                items.sort(key=lambda kv: kv[0])  # TVM sorts string-keyed dicts
            return "{" + ", ".join(f"{self.value(k)}: {self.value(x)}" for k, x in items) + "}"
        if isinstance(v, np.generic):
            return self.value(v.item())
        if isinstance(v, np.ndarray):
            return self.value(v.tolist())
        if isinstance(v, IRModule):
            return f"<IRModule with {len(v)} functions>"
        return repr(v)

    # ------------------------------------------------------------ metadata
    def add_metadata(self, key: str, obj: Any) -> tuple:
        """``metadata["key"][i]`` for ``obj`` (entries de-duplicated by identity)."""
        index = self._meta_index.get((key, id(obj)))
        if index is None:
            entries = self.metadata.setdefault(key, [])
            index = len(entries)
            entries.append(obj)
            self._meta_index[(key, id(obj))] = index
        return (f"metadata[{quote(key)}][{index}]", P_ATOM)

    # ------------------------------------------------------------ entry
    def run(self, obj: Any) -> str:
        """Print ``obj`` (a module, a function, or any node) as a complete text."""
        from .docs import render

        if isinstance(obj, IRModule):
            top = self.push("ir", None, "ir")
        elif isinstance(obj, (rx.Expr, rx.StructInfo, rx.Binding, rx.BindingBlock)):
            top = self.push("relax", None, "relax")
        elif isinstance(obj, Node) and type(obj).__module__ == tir.__name__:
            # A lone Range is an ir-level object in TVM (``I.Range``).
            top = self.push("tir", None, None if isinstance(obj, tir.Range) else "tir")
            self.prefix_root = obj
        else:
            top = self.push("ir", None, None)
        d = self.doc(obj)
        if type(d) is tuple:
            # A lone expression prints alone; definitions it caused are not shown.
            top.stmts = [Line(d[0])]
        else:
            self.emit(top, d)
        stmts = top.stmts
        prefix = ""
        if self.metadata:
            if self.cfg.show_meta:
                prefix = embed_json(dump_metadata(self.metadata)) + "\n"
            else:
                stmts.append(Comment(_META_NOTE))
        return prefix + render(stmts, self.cfg.indent_spaces)
