"""IRModule printing: ``@I.ir_module class Module:`` with module attributes, the functions in
TVM's order (PrimFuncs, ExternFuncs, Relax functions, by name; ``main`` last) and the
``cls.f`` / ``Module.f`` references to them."""
from __future__ import annotations

from typing import Any

from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.global_info import DeviceMesh, DummyGlobalInfo, VDevice
from tvmlite.ir.module import GlobalVar, IRModule
from tvmlite.ir.structural import structural_equal

from .docs import P_LITERAL, Class, Line, call, tuple_text
from .literals import quote

__all__ = ["ModulePrinter", "function_order"]


def _priority(gv: GlobalVar, func: Any) -> int:
    if gv.name_hint == "main":
        return 1000
    if isinstance(func, tir.PrimFunc):
        return 1
    if isinstance(func, rx.ExternFunc):
        return 2
    if isinstance(func, rx.Function):
        return 3
    return 4


def mesh_reference(mod: IRModule, mesh: DeviceMesh) -> str | None:
    """``"name[i]"`` of ``mesh`` among the module's global infos: the same object, else an equal one."""
    for same in (lambda a: a is mesh, lambda a: structural_equal(a, mesh)):
        for key, infos in mod.global_infos.items():
            for i, info in enumerate(infos if isinstance(infos, (tuple, list)) else ()):
                if isinstance(info, DeviceMesh) and same(info):
                    return f"{key}[{i}]"
    return None


def function_order(mod: IRModule) -> list[tuple[GlobalVar, Any]]:
    """The module's functions in printing order."""
    return sorted(mod.functions_items(), key=lambda kv: (_priority(*kv), kv[0].name_hint))


class ModulePrinter:
    """The module part of the printer (mixed into the full printer)."""

    def visit_dummy_global_info_(self, info: DummyGlobalInfo) -> tuple:
        """``I.dummy_global_info()``."""
        return call(self.I("dummy_global_info"), ())

    def visit_vdevice_(self, info: VDevice) -> tuple:
        """``I.vdevice(target, vdevice_id, memory_scope)``, every argument written as TVM does."""
        return call(self.I("vdevice"), [self.value(info.target), str(info.vdevice_id), self.value(info.memory_scope)])

    def visit_device_mesh_(self, mesh: DeviceMesh) -> tuple:
        """Inside a function of a module, the reference ``"mesh[0]"`` into its global infos (as TVM);
        elsewhere ``R.device_mesh(shape, I.Range(begin, end))`` or with a list of device ids."""
        if self.module is not None and any(fr.kind == "relax" for fr in self.frames):
            ref = mesh_reference(self.module, mesh)
            if ref is not None:
                return (quote(ref), P_LITERAL)
        ids = self.text(mesh.device_range) if mesh.device_range is not None else self.value(mesh.device_ids)
        return call(self.R("device_mesh"), [tuple_text([str(d) for d in mesh.shape]), ids])

    def module_ref(self) -> str:
        """How a function refers to the module: ``cls`` (defined on first use) or ``Module``."""
        mod_name = self.names.get(self.module) if self.module is not None else None
        if mod_name is None:
            mod_name = self.cfg.name
        if self.token != "relax" or not self.cfg.module_alias:
            return mod_name
        f = None
        for fr in self.frames:
            if fr.kind == "relax" and fr.is_func:
                f = fr
                break
        if f is None:
            return mod_name
        if not f.alias_printed:
            f.stmts.append(Line(f"{self.cfg.module_alias} = {mod_name}"))
            f.alias_printed = True
        return self.cfg.module_alias

    def print_module(self, mod: IRModule) -> Any:
        """``@I.ir_module class Module:`` and its functions, with the header comments."""
        items = function_order(mod)
        outer_module = self.module
        f = self.push("ir", mod, "ir")
        try:
            self.module = mod
            self.module_gvars = {gv.name_hint: gv for gv, _ in items}
            name = self.names.define(mod, f, self.cfg.name or "Module")
            if mod.attrs:
                f.stmts.append(Line(call(self.I("module_attrs"), [self.value(mod.attrs)])[0]))
            if mod.global_infos:
                f.stmts.append(Line(call(self.I("module_global_infos"),
                                         [self.value(mod.global_infos)])[0]))
            for gv, _ in items:
                self.names.define_doc(gv, f, lambda gv=gv: f"{self.module_ref()}.{gv.name_hint}")
            for gv, func in items:
                self.binding_names.append(gv.name_hint)
                try:
                    if isinstance(func, rx.ExternFunc):
                        d: Any = Line(f"{gv.name_hint} = {self.text(func)}")
                    else:
                        d = self.stmt(func)
                finally:
                    self.binding_names.pop()
                if type(d) is list:  # drop the per-function header comments
                    d = d[-1] if d else Line("pass")
                f.stmts.append(d)
            doc = Class([self.I("ir_module")], name, f.stmts)
        finally:
            self.pop(f)
            self.module = outer_module
        return self.header_wrapper(doc)
