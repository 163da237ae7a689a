"""The top level of a script and the ``@I.ir_module`` class: imports (which bind the dialect
prefixes), the metadata prelude, and the module's functions, parsed in two phases: first every
function's GlobalVar is declared (so bodies can call functions defined later), then the bodies."""
from __future__ import annotations

from typing import Any

from ...ir import relax as rx
from ...ir import tir
from ...ir.global_info import DummyGlobalInfo, VDevice
from ...ir.module import IRModule
from ...ir.node import Map
from ..syntax import nodes as ast
from ..errors import ScriptError
from .context import ParseContext
from .distributed import MeshHandlers
from .exprs import Sig, describe, handles
from .relax_parser import RelaxParser, function_options, read_signature
from .relax_exprs import ModuleInfo
from .scope import Scope
from .tir_parser import TirParser
from .values import Macro, ModuleRef, Namespace

__all__ = ["parse_script"]


class _TopLevel(MeshHandlers):
    """Evaluates the statements outside functions: imports, ``metadata = ...``, module attributes."""

    dialect = "module"

    @handles("I.load_json")
    def _load_json(self, node: Any) -> dict:
        """``tvmlite.load_json(...)``: the metadata prelude (constants by kind)."""
        (text_n,) = self.bind(node, Sig("load_json", ("json",), 1))
        text = self.expect_str(text_n, self.eval(text_n), "the metadata")
        from ..printer.metadata import load_metadata

        try:
            return load_metadata(text)
        except (ValueError, KeyError, TypeError) as err:
            self.error(text_n, f"the metadata cannot be read: {err}")

    @handles("R.ExternFunc")
    def _extern(self, node: Any) -> rx.ExternFunc:
        """``R.ExternFunc("sym")`` at class level."""
        (name_n,) = self.bind(node, Sig("R.ExternFunc", ("global_symbol",), 1))
        name = self.expect_str(name_n, self.eval(name_n), "the symbol")
        return rx.ExternFunc(name, struct_info=rx.FuncStructInfo(None, rx.ObjectStructInfo(), False))

    @handles("I.dummy_global_info")
    def _dummy_global_info(self, node: Any) -> DummyGlobalInfo:
        """``I.dummy_global_info()``."""
        self.no_args(node, "I.dummy_global_info")
        return DummyGlobalInfo()

    @handles("I.vdevice")
    def _vdevice(self, node: Any) -> VDevice:
        """``I.vdevice(target, vdevice_id=0, memory_scope="global")``: a target string or dict."""
        target_n, id_n, scope_n = self.bind(node, Sig("I.vdevice", ("target", "vdevice_id", "memory_scope"), 1))
        target = self.eval(target_n)
        if isinstance(target, dict):
            target = self.eval_attr_dict(target_n, "the target")
        elif not isinstance(target, str):
            self.error(target_n, f"I.vdevice takes a target string or dict, got {describe(target)}")
        vdevice_id = self.expect_int(id_n, self.eval(id_n), "vdevice_id") if id_n is not None else 0
        scope = self.expect_str(scope_n, self.eval(scope_n), "memory_scope") if scope_n is not None else "global"
        return VDevice(target, vdevice_id, scope)

    @handles("I.module_attrs", kind="stmt")
    def _module_attrs(self, node: Any) -> Map:
        """``I.module_attrs({...})``."""
        (attrs,) = self.bind(node, Sig("I.module_attrs", ("attrs",), 1))
        return self.eval_attr_dict(attrs, "I.module_attrs")

    @handles("I.module_global_infos", kind="stmt")
    def _global_infos(self, node: Any) -> Map:
        """``I.module_global_infos({...})``."""
        (infos,) = self.bind(node, Sig("I.module_global_infos", ("global_infos",), 1))
        return self.eval_attr_dict(infos, "I.module_global_infos")

    def stmt_ImportFrom(self, s: Any) -> None:
        """``from tvm.script import relax as R``: bind a dialect prefix."""
        parts = s.module.split(".")
        if parts[0] not in ("tvm", "tvmlite"):
            return  # other libraries: their names resolve through extra_vars
        base = Namespace("tvm")
        for p in parts[1:]:
            base = base.attr(p)
        for name, alias in s.names:
            if name == "*":
                self.error(s, "'from ... import *' is not supported")
            self.scope.define(alias or name, base.attr(name))

    def stmt_Import(self, s: Any) -> None:
        """``import tvm``: bind the root namespace."""
        for name, alias in s.names:
            parts = name.split(".")
            if parts[0] not in ("tvm", "tvmlite"):
                continue
            if alias is None:
                self.scope.define(parts[0], Namespace("tvm"))
            else:
                ns = Namespace("tvm")
                for p in parts[1:]:
                    ns = ns.attr(p)
                self.scope.define(alias, ns)


def parse_script(tree: ast.Module, source: str, filename: str, extra_vars: dict[str, Any] | None) -> Any:
    """The IRModule or function a script defines."""
    ctx = ParseContext(source, filename, extra_vars)
    top = _TopLevel(ctx, Scope())
    result: Any = None
    result_node: Any = None
    for s in tree.body:
        try:
            value = _top_statement(top, s)
        except ScriptError:
            raise
        except Exception as err:  # a parser bug must still point at the script
            raise ScriptError.at(s, f"internal error while parsing this statement: {type(err).__name__}: {err}",
                                 source, filename) from err
        if value is not None:
            if result is not None:
                top.error(s, f"a script defines one module or one function; this is the second "
                             f"(the first is at line {result_node.line})")
            result, result_node = value, s
    if result is None:
        ctx.error_at(1, 1, 2, "the script defines no @I.ir_module class and no @R.function / @T.prim_func")
    return result


def _top_statement(top: _TopLevel, s: Any) -> Any:
    """One top-level statement; the module or function it defines, if any."""
    t = type(s)
    if t in (ast.ImportFrom, ast.Import):
        top.visit_stmt(s)
    elif t is ast.ClassDef:
        return _parse_class(top, s)
    elif t is ast.FunctionDef:
        if _is_macro(top, s):
            top.scope.define(s.name, Macro(s))
            return None
        return _parse_lone_function(top, s)
    elif t is ast.Assign and type(s.targets) is ast.Name and _is_type_var(top, s.value):
        # TVM 0.27 prints a size variable that several functions share as `n = TypeVar("n")`
        top.scope.define(s.targets.id, tir.Var(s.value.args[0].value, "int64"))
    elif t is ast.Assign and type(s.targets) is ast.Name:
        top.target_names = [s.targets.id]
        top.scope.define(s.targets.id, top.eval(s.value))
        top.target_names = []
    elif not (t is ast.ExprStmt and type(s.value) is ast.Constant or t is ast.Pass):
        top.error(s, "a script holds imports, an @I.ir_module class or a function "
                     "(@R.function / @T.prim_func), and optionally 'metadata = ...'")
    return None


def _is_type_var(top: _TopLevel, value: Any) -> bool:
    """True for ``TypeVar("n")`` (``typing.TypeVar``): a module-level size variable."""
    return (type(value) is ast.Call and top.ctx.text(value.func) in ("TypeVar", "typing.TypeVar")
            and len(value.args) == 1 and type(value.args[0]) is ast.Constant and isinstance(value.args[0].value, str))


def _is_macro(top: _TopLevel, fdef: Any) -> bool:
    """True for a ``@T.macro`` (or ``@T.macro(hygienic=...)``) definition."""
    for dec in fdef.decorators:
        target = top.eval(dec.func if type(dec) is ast.Call else dec)
        if isinstance(target, Namespace) and target.path == "T.macro":
            return True
    return False


def _parse_lone_function(top: _TopLevel, fdef: Any) -> Any:
    """A script's single ``@R.function`` / ``@T.prim_func``."""
    kind, options, dec = function_options(top, fdef.decorators, fdef.name)
    if not kind:
        top.error(top.ctx.def_name(fdef), f"the function '{fdef.name}' needs a decorator: "
                                          f"@R.function or @T.prim_func")
    info = ModuleInfo(top.ctx, None, read_signature)
    info.scope_base = dict(top.scope.frames[0])
    return _parse_function(top.ctx, info, kind, options, dec, fdef)


def _parse_function(ctx: ParseContext, info: ModuleInfo, kind: str, options: dict, dec: Any, fdef: Any) -> Any:
    """Parse one function body with the parser of its dialect."""
    scope = Scope(info.scope_base)
    try:
        if kind == "tir":
            return TirParser(ctx, scope, info).parse_function(fdef, options.get("private", False), dec)
        return RelaxParser(ctx, scope, info).parse_function(fdef, options.get("pure", True),
                                                           options.get("private", False))
    except ScriptError:
        raise
    except RecursionError:
        ctx.error(ctx.def_name(fdef), f"the function '{fdef.name}' is nested too deeply to parse")
    except Exception as err:  # a parser bug outside any statement (signature, assembly)
        raise ScriptError.at(ctx.def_name(fdef), f"internal error while parsing the function '{fdef.name}': "
                                                 f"{type(err).__name__}: {err}", ctx.source, ctx.filename) from err


def _parse_class(top: _TopLevel, cls: Any) -> IRModule:
    """An ``@I.ir_module`` class: declare every function, then parse each body."""
    ctx = top.ctx
    if not cls.decorators:
        top.error(cls, f"the class '{cls.name}' needs the decorator @I.ir_module")
    for dec in cls.decorators:
        call = dec if type(dec) is ast.Call else None
        target = top.eval(call.func if call is not None else dec)
        if not (isinstance(target, Namespace) and target.path == "I.ir_module"):
            top.error(dec, f"unknown class decorator {ctx.text(dec)}: use @I.ir_module")
        if call is not None:
            for kw in call.keywords:
                if kw.arg not in ("check_well_formed", "s_tir"):  # s_tir: TVM 0.27's, read and dropped
                    top.error(kw, f"@I.ir_module got an unexpected keyword argument '{kw.arg}'")
    info = ModuleInfo(ctx, cls.name, read_signature)
    tir_defs = info.tir_defs  # the prim_funcs' definitions, for their return dtypes
    module_ref = ModuleRef(cls.name, info.gvars)
    # Phase 1: names and kinds of every function.
    entries: list[tuple[str, Any, Any]] = []
    attrs: Map = Map()
    infos: Map = Map()
    for s in cls.body:
        t = type(s)
        if t is ast.FunctionDef:
            kind, options, dec = function_options(top, s.decorators, s.name)
            if not kind:
                top.error(ctx.def_name(s), f"the function '{s.name}' needs a decorator: "
                                           f"@R.function or @T.prim_func")
            _declare(top, info, s, s.name, kind)
            if kind == "tir":
                tir_defs[s.name] = s
            entries.append(("function", s, (kind, options, dec)))
        elif t is ast.Assign and type(s.targets) is ast.Name:
            value = top.eval(s.value)
            if not isinstance(value, rx.ExternFunc):
                top.error(s.value, f"a module class holds functions and R.ExternFunc(...) declarations, "
                                   f"got {describe(value)}")
            _declare(top, info, s.targets, s.targets.id, "extern")
            entries.append(("extern", s, value))
        elif t is ast.ExprStmt and type(s.value) is ast.Call:
            func = top.eval(s.value.func)
            handler = top.stmt_handlers.get(func.path) if isinstance(func, Namespace) else None
            if handler is None:
                top.error(s.value, "only I.module_attrs(...) and I.module_global_infos(...) may be called "
                                   "in a module class")
            value = handler(top, s.value)
            if func.path == "I.module_attrs":
                attrs = value
            else:
                infos = value
        elif t is ast.Pass or t is ast.ExprStmt and type(s.value) is ast.Constant:
            continue
        else:
            top.error(s, "a module class holds @R.function / @T.prim_func definitions, "
                         "R.ExternFunc(...) declarations and I.module_attrs(...)")
    info.global_infos = infos
    base = dict(top.scope.frames[0])
    base.update(info.gvars)  # legacy scripts call module functions by bare name
    base[cls.name] = module_ref
    info.scope_base = base
    # Phase 2: the bodies, in source order.
    functions: dict = {}
    for what, s, extra in entries:
        if what == "extern":
            name = s.targets.id
            func: Any = extra
        else:
            name = s.name
            kind, options, dec = extra
            func = _parse_function(ctx, info, kind, options, dec, s)
        info.parsed[name] = func
        functions[info.gvars[name]] = func
    return IRModule(functions, attrs=attrs, global_infos=infos)


def _declare(top: _TopLevel, info: ModuleInfo, node: Any, name: str, kind: str) -> None:
    """Declare a module function's GlobalVar (names must be unique)."""
    if name in info.gvars:
        where = top.ctx.def_name(node) if type(node) is ast.FunctionDef else node
        top.error(where, f"the module already defines a function named '{name}'")
    info.declare(name, kind, node if kind == "relax" else None)

