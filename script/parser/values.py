"""Parse-time values that are not IR: dialect namespaces (``R``, ``T.axis``) and the module
reference (``cls``/the class name), which the parser resolves by name."""
from __future__ import annotations

import types
from typing import NamedTuple

from ...ir.module import GlobalVar

__all__ = ["Namespace", "ModuleRef", "Macro", "Device", "DEVICE_TYPES", "namespace_of_module"]

# TVM's device type codes, by the names ``R.device`` accepts.
DEVICE_TYPES = {"cpu": 1, "llvm": 1, "cuda": 2, "gpu": 2, "cpu_pinned": 3, "opencl": 4, "vulkan": 7,
                "metal": 8, "vpi": 9, "rocm": 10, "ext_dev": 12, "webgpu": 15, "hexagon": 16}


class Device(NamedTuple):
    """``R.device(device_type, index)``: a device, as ops with a ``device`` script group take it."""

    device_type: int
    index: int

# Spellings that mean the same thing, mapped to one canonical dotted path.
_ALIASES = {
    "tvm.script.ir_module": "I.ir_module", "tvm.script.relax": "R", "tvm.script.tir": "T",
    "tvm.script.ir": "I", "tvm.relax": "R", "tvm.tir": "T", "tvm.ir": "I",
    "tvm.ir.load_json": "I.load_json", "tvm.load_json": "I.load_json",
    "tvm.script.parser.relax": "R", "tvm.script.parser.tir": "T", "tvm.script.parser.ir": "I",
    # TVM 0.27 renamed the TIR namespace tirx
    "tvm.script.tirx": "T", "tvm.tirx": "T", "tvm.script.parser.tirx": "T",
    "T.axis.S": "T.axis.spatial", "T.axis.R": "T.axis.reduce", "R.Any": "R.Object",
    "T.Ptr": "T.handle", "T.ptr": "T.handle", "R.ShapeExpr": "R.shape", "T.broadcast": "T.Broadcast",
    # TVM 0.27's spellings of the schedulable blocks and of bool.
    "T.sblock": "T.block", "T.sblock_attr": "T.block_attr", "T.sblock_alloc_buffer": "T.alloc_buffer",
    "T.boolean": "T.bool", "T.tvm_call_packed": "T.call_packed",
}


class Namespace:
    """A dotted name inside a dialect (``R``, ``R.nn``, ``T.axis``); interned per path."""

    __slots__ = ("path", "_children")
    _interned: dict[str, "Namespace"] = {}

    def __new__(cls, path: str) -> "Namespace":
        got = cls._interned.get(path)
        if got is None:
            got = object.__new__(cls)
            got.path = path
            got._children = {}
            cls._interned[path] = got
        return got

    def attr(self, name: str) -> "Namespace":
        """The namespace ``self.name`` (aliases resolved)."""
        got = self._children.get(name)
        if got is None:
            full = f"{self.path}.{name}"
            got = Namespace(_ALIASES.get(full, full))
            self._children[name] = got
        return got

    @property
    def dialect(self) -> str:
        """The first component: ``R``, ``T``, ``I`` or ``tvm``."""
        return self.path.split(".", 1)[0]

    @property
    def leaf(self) -> str:
        """The last component (``nn.relu`` -> ``relu``)."""
        return self.path.rsplit(".", 1)[-1]

    def __repr__(self) -> str:
        return f"<namespace {self.path}>"


class ModuleRef:
    """The module being parsed, as named by its class name or ``cls``: ``cls.f`` is a GlobalVar."""

    __slots__ = ("name", "functions")

    def __init__(self, name: str, functions: dict[str, GlobalVar]) -> None:
        self.name = name
        self.functions = functions

    def __repr__(self) -> str:
        return f"<module {self.name}>"


def namespace_of_module(module: types.ModuleType) -> Namespace | None:
    """The namespace a Python module stands for (``tvm.script.relax`` -> ``R``), or None."""
    name = module.__name__
    for suffix, path in ((".script.relax", "R"), (".script.tir", "T"), (".script.tirx", "T"), (".script.ir", "I"),
                         (".script", "tvm.script")):
        if name.endswith(suffix):
            return Namespace(path)
    if name in ("tvm", "tvmlite"):
        return Namespace("tvm")
    canonical = _ALIASES.get(name.replace("tvmlite", "tvm", 1))
    return Namespace(canonical) if canonical else None


class Macro:
    """A ``@T.macro`` function: its definition, inlined where a TIR body calls it."""

    __slots__ = ("fdef",)

    def __init__(self, fdef: object) -> None:
        self.fdef = fdef
