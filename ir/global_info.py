"""Module-level global infos (``I.module_global_infos({...})``): virtual devices that tensors are
placed on (``I.vdevice``), device meshes that distributed tensors are spread over
(``R.device_mesh``) and TVM's placeholder entry (``I.dummy_global_info``).

A tensor names its virtual device as ``"kind:index:scope"`` (``R.Tensor(..., vdevice="cuda:0:global")``):
the ``index``-th ``I.vdevice`` of that target kind in the module's ``"vdevice"`` list, as TVM
prints it; ``canonical_vdevice`` completes the short spellings TVM accepts (``"cuda"``, ``"cuda:1"``).
A distributed tensor (``R.DTensor``) names its mesh as ``"mesh[0]"``, an entry of the module's global
infos, and its ``Placement`` as text: ``"S[0], R"`` (per mesh dimension, sharded along a tensor axis or
replicated)."""
from __future__ import annotations

from typing import Any, Sequence

from . import tir
from .node import Map, Node, node

__all__ = ["GlobalInfo", "DummyGlobalInfo", "VDevice", "DeviceMesh", "PlacementSpec", "Placement",
           "canonical_vdevice", "vdevice_kind"]


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


@node
class DeviceMesh(GlobalInfo):
    """``R.device_mesh(shape, device_ids)``: the devices of a mesh laid out row-major in ``shape``.
    ``device_range`` is set when the ids were given as ``I.Range(begin, end)`` (TVM prints that form
    back); ``device_ids`` always holds the ids."""

    shape: tuple[int, ...]
    device_ids: tuple[int, ...]
    device_range: tir.Range | None = None

    def __post_init__(self) -> None:
        count = 1
        for d in self.shape:
            count *= d
        if count != len(self.device_ids):  # TVM's check, with its wording
            raise ValueError(f"the number of device ids must match the product of the shape: the shape "
                             f"{tuple(self.shape)} holds {count} devices, got {len(self.device_ids)} ids")

    @staticmethod
    def from_range(shape: tuple[int, ...], begin: int, end: int) -> "DeviceMesh":
        """A mesh over the devices ``begin .. end - 1`` (``I.Range(begin, end)``)."""
        rng = tir.Range(tir.IntImm("int32", begin), tir.IntImm("int32", end - begin))
        return DeviceMesh(tuple(shape), tuple(range(begin, end)), rng)


@node
class PlacementSpec(Node):
    """How one mesh dimension holds a tensor: sharded along tensor ``axis``, or replicated
    (``axis`` None)."""

    axis: int | None = None

    def text(self) -> str:
        """``R`` or ``S[axis]``."""
        return "R" if self.axis is None else f"S[{self.axis}]"


@node
class Placement(Node):
    """A placement, one spec per mesh dimension; written ``"S[0], R"``."""

    specs: tuple[PlacementSpec, ...] = ()

    @staticmethod
    def from_text(text: str) -> "Placement":
        """Read ``"S[0], R"`` (TVM's spelling: ``R`` or ``S[axis]``, comma separated); ValueError
        on anything else."""
        specs = []
        if text.strip():
            for part in text.split(","):
                p = part.strip()
                if p == "R":
                    specs.append(PlacementSpec(None))
                    continue
                inner = p[2:-1] if p.startswith("S[") and p.endswith("]") else ""
                if not inner.lstrip("-").isdigit() or inner != inner.strip():
                    raise ValueError(f"a placement is 'R' or 'S[axis]' per mesh dimension, comma separated "
                                     f"(\"S[0], R\"), got '{text}'")
                specs.append(PlacementSpec(int(inner)))
        return Placement(tuple(specs))

    def text(self) -> str:
        """The placement as scripts write it, ``"S[0], R"``."""
        return ", ".join(s.text() for s in self.specs)


def resolve_vdevice(ref: "str | VDevice", vdevices: Sequence[Any] | None) -> str:
    """A vdevice reference in its printed form, resolved against the module's ``"vdevice"`` list:
    ``"cuda:1"`` is the second cuda entry, ``"vdevice:3"`` the fourth entry of any kind (printed by
    its kind: ``"cuda:1:global"``), a ``VDevice`` value its kind and id. The scope defaults to the
    entry's. ValueError for a malformed reference or one the list does not hold."""
    if isinstance(ref, VDevice):
        return f"{ref.kind}:{ref.vdevice_id}:{ref.memory_scope}"
    parts = canonical_vdevice(ref).split(":")
    kind, index, scope = parts[0], int(parts[1]), parts[2]
    explicit_scope = ref.count(":") >= 2
    if not vdevices:
        return f"{kind}:{index}:{scope}"
    if kind == "vdevice":
        if index >= len(vdevices):
            raise ValueError(f"the module declares {len(vdevices)} vdevices, there is no vdevice:{index}")
        entry = vdevices[index]
        kind = entry.kind
        index = sum(1 for v in vdevices[:index] if v.kind == kind)
    else:
        same = [v for v in vdevices if v.kind == kind]
        if index >= len(same):
            raise ValueError(f"the module declares {len(same)} '{kind}' vdevice{'s' if len(same) != 1 else ''}, "
                             f"there is no {kind}:{index}")
        entry = same[index]
    return f"{kind}:{index}:{scope if explicit_scope else entry.memory_scope}"
