"""Relax's distributed dialect in scripts: ``R.device_mesh(shape, device_ids)`` and ``I.Range``
(the module's global infos), ``R.DTensor(shape, dtype, device_mesh, placement)`` and the
``"mesh[0]"`` references into the global infos that DTensors and the ``R.dist.*`` ops write.
The top-level evaluator derives from MeshHandlers (meshes), the Relax evaluator from DTensorHandlers."""
from __future__ import annotations

import re
from typing import Any

from ...ir import relax as rx
from ...ir import tir
from ...ir.global_info import DeviceMesh, Placement
from ...ir.node import Map
from .exprs import Evaluator, Sig, describe, handles

__all__ = ["MeshHandlers", "DTensorHandlers"]

_REFERENCE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\[(\d+)\]$")


def _int_list(value: Any) -> bool:
    """True for a list or tuple of Python ints (bools excluded)."""
    return isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


class MeshHandlers(Evaluator):
    """``R.device_mesh(...)`` and ``I.Range(begin, end)``."""

    @handles("I.Range", "R.Range")
    def _mesh_range(self, node: Any) -> tir.Range:
        """``I.Range(begin, end)``: the devices ``begin .. end - 1`` of a mesh."""
        begin_n, end_n = self.bind(node, Sig("I.Range", ("begin", "end"), 2))
        begin = self.expect_int(begin_n, self.eval(begin_n), "begin")
        end = self.expect_int(end_n, self.eval(end_n), "end")
        if end < begin:
            self.error(node, f"I.Range({begin}, {end}) ends before it begins")
        return tir.Range(tir.IntImm("int32", begin), tir.IntImm("int32", end - begin))

    @handles("R.device_mesh", "R.dist.device_mesh")
    def _device_mesh(self, node: Any) -> DeviceMesh:
        """``R.device_mesh(shape, device_ids)``: ids as a list or as ``I.Range(begin, end)``."""
        shape_n, ids_n = self.bind(node, Sig("R.device_mesh", ("shape", "device_ids"), 2))
        shape = self.eval(shape_n)
        if not _int_list(shape) or any(d <= 0 for d in shape):
            self.error(shape_n, f"the shape of a device mesh is a tuple of positive ints, "
                                f"got {describe(shape)}")
        ids = self.eval(ids_n)
        try:
            if isinstance(ids, tir.Range):
                begin = int(ids.min.value)  # type: ignore[attr-defined]
                return DeviceMesh.from_range(tuple(shape), begin, begin + int(ids.extent.value))  # type: ignore[attr-defined]
            if not _int_list(ids):
                self.error(ids_n, f"the device ids of a mesh are a list of ints or I.Range(begin, end), "
                                  f"got {describe(ids)}")
            return DeviceMesh(tuple(shape), tuple(ids))
        except ValueError as err:
            self.error(node, str(err))


class DTensorHandlers(MeshHandlers):
    """``R.DTensor(...)`` and the resolution of ``"mesh[0]"`` references (needs ``self.module``, the
    ModuleInfo whose ``global_infos`` the module's ``I.module_global_infos`` filled, and the Relax
    evaluator's ``shape_of``)."""

    _DTENSOR = Sig("R.DTensor", ("shape", "dtype", "device_mesh", "placement"), 0, ("ndim",))

    @handles("R.DTensor", "R.dist.DTensor")
    def _dtensor(self, node: Any) -> rx.DTensorStructInfo:
        """``R.DTensor(shape, dtype, device_mesh, placement, ndim=-1)``; the mesh is a reference
        ``"mesh[0]"`` into the module's global infos (or an ``R.device_mesh(...)``)."""
        shape_n, dtype_n, mesh_n, place_n, ndim_n = self.bind(node, self._DTENSOR)
        shape = self.eval(shape_n) if shape_n is not None else None
        dtype_v = self.eval(dtype_n) if dtype_n is not None else None
        if isinstance(shape, str) and dtype_v is None:  # R.DTensor("float32", ...)
            shape, dtype_v, dtype_n, shape_n = None, shape, shape_n, None
        dtype = self.expect_dtype(dtype_n, dtype_v) if dtype_v is not None else "void"
        ndim = self.expect_int(ndim_n, self.eval(ndim_n), "ndim") if ndim_n is not None else -1
        dims = self.shape_of(shape_n, shape, "R.DTensor") if shape is not None else None  # type: ignore[attr-defined]
        if dims is not None and ndim not in (-1, len(dims)):
            self.error(ndim_n, f"ndim={ndim} does not match the shape's {len(dims)} dimensions")
        if mesh_n is None or place_n is None:
            self.error(node, 'R.DTensor needs device_mesh= (a mesh of the module, "mesh[0]") and placement= '
                             '(such as "S[0], R")')
        mesh = self.device_mesh_ref(mesh_n, self.eval(mesh_n))
        placement = self.placement_of(place_n, self.eval(place_n))
        tensor = rx.TensorStructInfo(dims, dtype, len(dims) if dims is not None else ndim)
        try:
            return rx.DTensorStructInfo(tensor, mesh, placement)
        except ValueError as err:
            self.error(place_n, str(err))

    def placement_of(self, node: Any, value: Any) -> Placement:
        """A placement: its text ``"S[0], R"``."""
        if isinstance(value, Placement):
            return value
        text = self.expect_str(node, value, "the placement")
        try:
            return Placement.from_text(text)
        except ValueError as err:
            self.error(node, str(err))

    def device_mesh_ref(self, node: Any, value: Any) -> DeviceMesh:
        """A device mesh: ``"name[i]"``, the i-th entry of the module's global infos ``name``, or a mesh."""
        if isinstance(value, DeviceMesh):
            return value
        text = self.expect_str(node, value, "the device mesh")
        m = _REFERENCE.match(text.replace(" ", ""))
        if m is None:
            self.error(node, f'a device mesh is named by its entry in the module\'s global infos, such as '
                             f'"mesh[0]", got "{text}"')
        infos: Map = getattr(self.module, "global_infos", None) or Map()  # type: ignore[attr-defined]
        name, index = m.group(1), int(m.group(2))
        entries = infos.get(name)
        if entries is None:
            known = ", ".join(f"'{k}'" for k in infos) or "none"
            self.error(node, f"the module has no global infos '{name}' (I.module_global_infos defines: "
                             f"{known})")
        if not isinstance(entries, (tuple, list)) or index >= len(entries):
            count = len(entries) if isinstance(entries, (tuple, list)) else 1
            self.error(node, f"the global infos '{name}' hold {count} entr{'y' if count == 1 else 'ies'}, "
                             f"there is no {name}[{index}]")
        mesh = entries[index]
        if not isinstance(mesh, DeviceMesh):
            self.error(node, f"{name}[{index}] is not a device mesh (R.device_mesh(...)), "
                             f"got {describe(mesh)}")
        return mesh
