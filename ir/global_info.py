"""Module-level global infos (``I.module_global_infos({...})``): virtual devices that tensors are
placed on (``I.vdevice``) and TVM's placeholder entry (``I.dummy_global_info``).

A tensor names its virtual device as ``"kind:index:scope"`` (``R.Tensor(..., vdevice="cuda:0:global")``):
the ``index``-th ``I.vdevice`` of that target kind in the module's ``"vdevice"`` list, as TVM
prints it; ``canonical_vdevice`` completes the short spellings TVM accepts (``"cuda"``, ``"cuda:1"``)."""
from __future__ import annotations

from typing import Any

from .node import Map, Node, node

__all__ = ["GlobalInfo", "DummyGlobalInfo", "VDevice", "canonical_vdevice", "vdevice_kind"]


class GlobalInfo(Node):
    """Base of module global infos."""

    __slots__ = ()


@node
class DummyGlobalInfo(GlobalInfo):
    """``I.dummy_global_info()``: an entry that carries nothing (TVM's tests use it as a placeholder)."""


@node
class VDevice(GlobalInfo):
    """``I.vdevice(target, vdevice_id, memory_scope)``: a virtual device. ``target`` is a target
    string (``"llvm"``) or a dict of target options (``{"kind": "cuda", "arch": "sm_80"}``)."""

    target: Any
    vdevice_id: int = 0
    memory_scope: str = "global"

    @property
    def kind(self) -> str:
        """The target kind (``"cuda"``), from the string's first word or the dict's ``kind``."""
        return vdevice_kind(self.target)


def vdevice_kind(target: Any) -> str:
    """The kind of a target string or target dict."""
    if isinstance(target, (Map, dict)):
        return str(target.get("kind", ""))
    return str(target).split()[0] if str(target).strip() else ""


def canonical_vdevice(text: str) -> str:
    """``"kind:index:scope"`` for a vdevice reference (``"cuda"`` -> ``"cuda:0:global"``);
    ValueError when it is not ``kind[:index[:scope]]``."""
    parts = text.split(":")
    if not 1 <= len(parts) <= 3 or not parts[0]:
        raise ValueError(f"a vdevice is written 'kind', 'kind:index' or 'kind:index:scope', got '{text}'")
    index = parts[1] if len(parts) > 1 else "0"
    if not index.isdigit():
        raise ValueError(f"the index of vdevice '{text}' must be a non-negative integer")
    scope = parts[2] if len(parts) > 2 else "global"
    return f"{parts[0]}:{int(index)}:{scope}"
