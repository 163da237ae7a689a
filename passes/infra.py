"""The pass infrastructure: PassInfo, Pass (Module/Function/PrimFunc passes, Sequential),
PassContext, the pass decorators, PrintIR and the pass registry.

A pass is called on an IRModule and returns a new one.  It receives a copy of its input
(``IRModule.copy()``), so even a pass that updates the module in place leaves the caller's
module untouched; the infrastructure checks that after every pass.  Failures raise
:class:`PassError` naming the pass, with a reproducer file (see ``passes/instrument.py``).
"""
from __future__ import annotations

import difflib
import inspect
import os
import re
import shlex
import tempfile
import threading
from collections import Counter, defaultdict
from typing import Any, Callable, ClassVar, Iterable, Sequence

from ..ir import relax as rx
from ..ir import tir
from ..ir.module import IRModule
from ..ir.functor import deep_recursion
from ..ir.gc_pause import paused_gc
from ..ir.well_formed import well_formed_errors

__all__ = [
    "PassInfo", "Pass", "ModulePass", "FunctionPass", "PrimFuncPass", "Sequential", "PassContext",
    "PassError", "IllFormedIRError", "PipelineError", "module_pass", "function_pass", "prim_func_pass",
    "PrintIR", "register_pass", "get_pass", "list_passes", "render_statistics",
]

VERIFY_EACH = "tvmlite.verify_each"
# Unset config: verification is off, as TVM's Sequential (it costs a fifth of a model's compile);
# this environment variable turns it on everywhere (the test suite sets it).
VERIFY_EACH_ENV = "TVMLITE_VERIFY_EACH"
REPRODUCER_DIR = "tvmlite.reproducer_dir"


# ------------------------------------------------------------------ errors
class PassError(RuntimeError):
    """A pass failed (raised, returned something else than an IRModule, or broke the IR).

    ``pass_name`` names the failing pass, ``reproducer`` is the path of the reproducer file
    (None when none was written), ``module`` the module the failing pass was given.
    """

    def __init__(self, message: str, pass_name: str, reproducer: str | None = None,
                 module: IRModule | None = None) -> None:
        super().__init__(message)
        self.pass_name = pass_name
        self.reproducer = reproducer
        self.module = module


class IllFormedIRError(ValueError):
    """A pass produced IR that fails ``well_formed_errors``; ``problems`` lists what is wrong."""

    def __init__(self, pass_name: str, problems: Sequence[str], output: IRModule | None = None) -> None:
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f'pass "{pass_name}" produced ill-formed IR:\n{lines}')
        self.pass_name = pass_name
        self.problems = list(problems)
        self.output = output


class PipelineError(ValueError):
    """A textual pipeline or a registry lookup names an unknown pass or option."""


# ------------------------------------------------------------------ PassInfo
class PassInfo:
    """The meta data of a pass: its name, opt_level and the names of the passes it requires.

    ``kind`` says what the pass works on: ``"module"``, ``"function"`` (Relax functions),
    ``"prim_func"`` or ``"sequential"`` (a container of passes; built-in instruments skip it).
    """

    __slots__ = ("name", "opt_level", "required", "kind")

    def __init__(self, name: str, opt_level: int = 0, required: Iterable[str] | None = None,
                 kind: str = "module") -> None:
        if isinstance(name, int) and isinstance(opt_level, str):  # TVM's order: PassInfo(opt_level, name)
            name, opt_level = opt_level, name
        self.name = str(name)
        self.opt_level = int(opt_level)
        self.required = tuple(required or ())
        self.kind = kind

    def __str__(self) -> str:
        # Exactly TVM's ReprPrinter text, trailing newline included (TVM's pass-infrastructure tutorial prints it).
        if not self.required:
            req = "[]\n"
        else:
            req = "[\n" + "".join(f"{r}, " for r in self.required) + "]\n"
        return (f"The meta data of the pass - pass name: {self.name}, opt_level: {self.opt_level}, "
                f"required passes: {req}")

    def __repr__(self) -> str:
        return f"PassInfo(name={self.name!r}, opt_level={self.opt_level}, required={list(self.required)!r})"


# ------------------------------------------------------------------ option formatting
_BARE_STR = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*\Z")


def format_option(value: Any) -> str:
    """An option value as it appears in a textual pipeline (``2``, ``0.5``, ``true``, ``name``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        if _BARE_STR.match(value) and value not in ("true", "false"):
            return value
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"<{type(value).__name__}>"  # not expressible in a pipeline spec


# ------------------------------------------------------------------ PassContext
_local = threading.local()


def _ctx_stack() -> list["PassContext"]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _running() -> list["Pass"]:
    """The passes running in this thread, outermost first."""
    running = getattr(_local, "running", None)
    if running is None:
        running = _local.running = []
    return running


class PassContext:
    """The settings passes run under: opt level, required/disabled passes, config, instruments.

    Use it as a context manager; ``PassContext.current()`` is the innermost one (a default
    context when none is entered).  ``stats`` collects the counters passes record
    (pass name -> Counter).
    """

    def __init__(self, opt_level: int = 2, required_pass: Iterable[str] | None = None,
                 disabled_pass: Iterable[str] | None = None, config: dict[str, Any] | None = None,
                 instruments: Iterable[Any] | None = None) -> None:
        self.opt_level = int(opt_level)
        self.required_pass = list(required_pass or [])
        self.disabled_pass = list(disabled_pass or [])
        self.config = dict(config or {})
        self.instruments = list(instruments or [])
        self.stats: defaultdict[str, Counter] = defaultdict(Counter)

    @staticmethod
    def current() -> "PassContext":
        """The innermost entered PassContext of this thread, or the thread's default one."""
        stack = _ctx_stack()
        if stack:
            return stack[-1]
        default = getattr(_local, "default", None)
        if default is None:
            default = _local.default = PassContext()
        return default

    def __enter__(self) -> "PassContext":
        _ctx_stack().append(self)
        entered = []
        try:
            for inst in self.instruments:
                inst.enter_pass_ctx()
                entered.append(inst)
        except BaseException:
            for inst in reversed(entered):
                inst.exit_pass_ctx()
            _ctx_stack().pop()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            for inst in self.instruments:
                inst.exit_pass_ctx()
        finally:
            _ctx_stack().pop()

    def pass_enabled(self, info: PassInfo) -> bool:
        """Whether ``Sequential`` runs a pass: not disabled, and required or within the opt level."""
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level

    def override_instruments(self, instruments: Iterable[Any]) -> None:
        """Replace the instruments of an entered context (exits the old ones, enters the new)."""
        for inst in self.instruments:
            inst.exit_pass_ctx()
        self.instruments = list(instruments)
        for inst in self.instruments:
            inst.enter_pass_ctx()

    def __repr__(self) -> str:
        return (f"PassContext(opt_level={self.opt_level}, required_pass={self.required_pass}, "
                f"disabled_pass={self.disabled_pass}, config={self.config}, "
                f"instruments={[type(i).__name__ for i in self.instruments]})")


# ------------------------------------------------------------------ Pass
def _record_options(init: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    """The constructor arguments of a pass by name, in the order given (for ``str(pass)``)."""
    try:
        params = list(inspect.signature(init).parameters.values())[1:]  # drop self
    except (TypeError, ValueError):
        return dict(kwargs)
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    options = dict(zip(names, args))
    options.update(kwargs)
    return options


class Pass:
    """A transformation from IRModule to IRModule; call it on a module to get a new one.

    Subclasses set the class attributes ``opt_level`` and ``required`` (or pass them to
    ``__init__``) and implement ``transform(mod, ctx)``; constructor arguments become the
    pass's options, printed by ``str(pass)`` as in a textual pipeline: ``FuseOps{fuse_opt_level=2}``.
    Counters put in ``self.stats`` are collected into ``PassContext.stats``.
    """

    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()
    kind: ClassVar[str] = "module"
    _info: PassInfo
    _options: dict[str, Any]

    def __new__(cls, *args: Any, **kwargs: Any) -> "Pass":
        self = super().__new__(cls)
        init = getattr(cls, "_options_signature", None) or cls.__init__
        # Constructors of the infrastructure classes take settings, not pass options.
        self._options = {} if init in _INFRA_INITS else _record_options(init, args, kwargs)
        return self

    def __init__(self, opt_level: int | None = None, name: str | None = None,
                 required: Iterable[str] | None = None) -> None:
        self._info = PassInfo(name or type(self).__name__,
                              type(self).opt_level if opt_level is None else opt_level,
                              type(self).required if required is None else required, type(self).kind)

    @property
    def info(self) -> PassInfo:
        """The pass's meta data (name, opt_level, required)."""
        info = self.__dict__.get("_info")
        if info is None:  # a subclass __init__ that did not call super().__init__()
            info = self._info = PassInfo(type(self).__name__, type(self).opt_level, type(self).required,
                                         type(self).kind)
        return info

    @property
    def options(self) -> dict[str, Any]:
        """The options this pass was created with (constructor arguments by name)."""
        return dict(self.__dict__.get("_options", {}))

    @property
    def stats(self) -> Counter:
        """Counters the pass records (``self.stats["folded"] += 1``), summed over its runs."""
        stats = self.__dict__.get("_stats")
        if stats is None:
            stats = self._stats = Counter()
        return stats

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Transform ``mod`` (a copy owned by the pass) and return the result."""
        raise NotImplementedError(f"{type(self).__name__} does not implement transform()")

    def __call__(self, mod: IRModule) -> IRModule:
        """Run the pass under ``PassContext.current()``; returns a new module. When verification
        is on, ill-formed input is refused first, with the pass named."""
        ctx = PassContext.current()
        # IR as deep as a long program: the checks recurse per level too; no GC pauses mid-pass.
        with deep_recursion(), paused_gc():
            if not _running() and isinstance(mod, IRModule) and _verify_enabled(ctx):
                _refuse_ill_formed_input(self, mod)
            return _run(self, mod, ctx)

    def __str__(self) -> str:
        opts = self.options
        if not opts:
            return self.info.name
        return self.info.name + "{" + ",".join(f"{k}={format_option(v)}" for k, v in opts.items()) + "}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}: opt_level={self.info.opt_level}>"


class ModulePass(Pass):
    """A pass over the whole module: ``transform_module(mod, ctx)``."""

    kind = "module"

    def __init__(self, transform_func: Callable[[IRModule, PassContext], IRModule] | None = None,
                 opt_level: int | None = None, name: str | None = None,
                 required: Iterable[str] | None = None) -> None:
        name = name or (getattr(transform_func, "__name__", None) if transform_func else None)
        super().__init__(opt_level, name, required)
        self._transform_func = transform_func

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Transform the module; override it, or give ``transform_func`` to the constructor."""
        if self._transform_func is None:
            raise NotImplementedError(f"{type(self).__name__} does not implement transform_module()")
        return self._transform_func(mod, ctx)

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return self.transform_module(mod, ctx)


class _PerFunctionPass(Pass):
    """Applies ``transform_function(func, mod, ctx)`` to every function of one kind."""

    func_type: ClassVar[type] = object

    def __init__(self, transform_func: Callable[..., Any] | None = None, opt_level: int | None = None,
                 name: str | None = None, required: Iterable[str] | None = None) -> None:
        name = name or (getattr(transform_func, "__name__", None) if transform_func else None)
        super().__init__(opt_level, name, required)
        self._transform_func = transform_func

    def transform_function(self, func: Any, mod: IRModule, ctx: PassContext) -> Any:
        """Transform one function; returning None removes it from the module."""
        if self._transform_func is None:
            raise NotImplementedError(f"{type(self).__name__} does not implement transform_function()")
        return self._transform_func(func, mod, ctx)

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        # As TVM: every function sees the module as it was before this pass; updates apply at the end.
        updates = []
        for gv, func in mod.functions_items():
            if isinstance(func, self.func_type):
                new = self.transform_function(func, mod, ctx)
                if new is not func:
                    updates.append((gv, new))
        for gv, new in updates:
            if new is None:
                mod.remove(gv)
            else:
                mod.update_func(gv, new)
        return mod


class FunctionPass(_PerFunctionPass):
    """A pass over each Relax function: ``transform_function(func, mod, ctx)``."""

    kind = "function"
    func_type = rx.Function


class PrimFuncPass(_PerFunctionPass):
    """A pass over each TIR PrimFunc: ``transform_function(func, mod, ctx)``."""

    kind = "prim_func"
    func_type = tir.PrimFunc


class Sequential(Pass):
    """Runs passes in order under the current PassContext.

    Passes above the context's opt level (unless in ``required_pass``) and those in
    ``disabled_pass`` are skipped; each pass's ``required`` passes (by registered name) run
    first.  Unless the config sets ``"tvmlite.verify_each": False``, the input and the result
    of every pass are checked with ``well_formed_errors`` when ``"tvmlite.verify_each"`` is True
    (default: off as in TVM, unless ``$TVMLITE_VERIFY_EACH`` is 1).  ``str()`` is the textual pipeline.
    """

    kind = "sequential"

    def __init__(self, passes: Iterable[Pass] | None = None, opt_level: int = 0, name: str = "sequential",
                 required: Iterable[str] | None = None) -> None:
        super().__init__(opt_level, name, required)
        self.passes = list(passes or [])
        for p in self.passes:
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential takes Pass objects, got {type(p).__name__} ({p!r})")

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        verify = _verify_enabled(ctx)
        for p in self.passes:
            if not ctx.pass_enabled(p.info):
                continue
            for name in p.info.required:
                if name not in _REGISTRY:
                    raise PassError(f'pass "{p.info.name}" requires "{name}", which is not a registered pass '
                                    f"(registered: {', '.join(list_passes()) or 'none'})", p.info.name)
                mod = _run(get_pass(name), mod, ctx, verify)
            mod = _run(p, mod, ctx, verify)
        return mod

    def __str__(self) -> str:
        return ",".join(str(p) for p in self.passes)

    def __repr__(self) -> str:
        return f"<Sequential {self.info.name}: {self}>"


_INFRA_INITS = frozenset({Pass.__init__, ModulePass.__init__, _PerFunctionPass.__init__, Sequential.__init__})


# ------------------------------------------------------------------ running a pass
# PrimFuncs already found well formed under a name: (name, id of the body) -> (params, body,
# buffer_map), kept alive so the ids stay theirs. A pipeline re-verifies the whole module after every
# pass, but most passes leave most PrimFuncs untouched or only change their attributes (IR nodes are
# immutable), so only PrimFuncs with new parameters or bodies are checked again.
_VERIFIED: dict[tuple[str, int], tuple] = {}
_VERIFIED_LOCK = threading.Lock()
_VERIFIED_MAX = 4096
_STUB: tir.PrimFunc | None = None


def _well_formed_errors(mod: IRModule) -> list[str]:
    """``well_formed_errors(mod)``, with PrimFuncs verified before (same parameters, buffers and body,
    same name) replaced by an empty stand-in: their checks depend on nothing else in the module."""
    global _STUB
    if _STUB is None:
        _STUB = tir.PrimFunc((), tir.Evaluate(tir.IntImm("int32", 0)))
    fresh: list[tuple[tuple[str, int], tuple]] = []
    view = None
    for gv, func in mod.functions_items():
        if not isinstance(func, tir.PrimFunc):
            continue
        key, parts = (gv.name_hint, id(func.body)), (func.params, func.body, func.buffer_map)
        seen = _VERIFIED.get(key)
        if seen is not None and all(a is b for a, b in zip(seen, parts)):
            if view is None:
                view = mod.copy()
            view._functions[gv] = _STUB  # same GlobalVar: calls of it still resolve
        else:
            fresh.append((key, parts))
    errors = well_formed_errors(view if view is not None else mod)
    if not errors and fresh:
        with _VERIFIED_LOCK:
            if len(_VERIFIED) + len(fresh) > _VERIFIED_MAX:
                _VERIFIED.clear()
            _VERIFIED.update(fresh)
    return errors


def _refuse_ill_formed_input(p: Pass, mod: IRModule) -> None:
    """PassError when ``mod`` is not well formed: blamed on the input, not on the pass."""
    problems = _well_formed_errors(mod)
    if problems:
        lines = "".join(f"\n  {x}" for x in problems)
        raise PassError(f'the input of "{p.info.name}" is not well formed (before any pass ran):{lines}',
                        p.info.name, module=mod)


def _verify_enabled(ctx: PassContext) -> bool:
    """Sequential verifies when configured on (config, else ``$TVMLITE_VERIFY_EACH``) and no
    VerifyEach instrument already does."""
    value = ctx.config.get(VERIFY_EACH)
    if value is None:
        value = os.environ.get(VERIFY_EACH_ENV, "").strip().lower() in ("1", "true", "yes", "on")
    if not value:
        return False
    return not any(getattr(i, "verifies_each_pass", False) for i in ctx.instruments)


def _snapshot(mod: IRModule) -> list:
    # Functions are immutable nodes, so the identity of the entries is enough to detect mutation.
    return [x for item in mod.functions_items() for x in item] + [mod.attrs, mod.global_infos]


def _unchanged(mod: IRModule, snapshot: list) -> bool:
    now = _snapshot(mod)
    return len(now) == len(snapshot) and all(a is b for a, b in zip(now, snapshot))


def _run(p: Pass, mod: IRModule, ctx: PassContext, verify: bool = False) -> IRModule:
    """Run one pass with instruments, statistics, optional verification and failure handling."""
    if not isinstance(mod, IRModule):
        raise TypeError(f"pass {p.info.name} expects an IRModule, got {type(mod).__name__}")
    info = p.info
    instruments = ctx.instruments
    if instruments and not all([inst.should_run(mod, info) for inst in instruments]):
        return mod
    for inst in instruments:
        inst.run_before_pass(mod, info)
    before = _snapshot(mod)
    stats_before = dict(p.stats)
    running = _running()
    running.append(p)
    done = 0  # instruments whose run_after_pass ran (they get no run_after_failure)
    try:
        out = p.transform(mod.copy(), ctx)  # under Pass.__call__'s deep_recursion()
        if not isinstance(out, IRModule):
            raise TypeError(f"transform returned {type(out).__name__}, not an IRModule")
        if verify:
            problems = _well_formed_errors(out)
            if problems:
                raise IllFormedIRError(info.name, problems, out)
        if not _unchanged(mod, before):
            raise RuntimeError("the pass changed its input module in place")
        _collect_stats(p, stats_before, ctx)
        for inst in instruments:
            inst.run_after_pass(out, info)  # VerifyEach raises here: blamed on this pass
            done += 1
    except PassError as err:  # raised by a nested pass: already reported
        _after_failure(instruments[done:], mod, info, err)
        raise
    except Exception as err:
        _after_failure(instruments[done:], mod, info, err)
        raise _failure(p, mod, ctx, err, running) from err
    finally:
        running.pop()
    return out


def _after_failure(instruments: list, mod: IRModule, info: PassInfo, err: BaseException) -> None:
    for inst in instruments:
        inst.run_after_failure(mod, info, err)


def _collect_stats(p: Pass, before: dict[str, int], ctx: PassContext) -> None:
    """Add what the pass counted during this run to ``ctx.stats[pass name]``."""
    for key, value in p.stats.items():
        delta = value - before.get(key, 0)
        if delta:
            ctx.stats[p.info.name][key] += delta


def _failure(p: Pass, mod: IRModule, ctx: PassContext, err: Exception, running: list[Pass]) -> PassError:
    """The PassError for a failing pass, after writing its reproducer."""
    info = p.info
    if isinstance(err, IllFormedIRError):
        message = str(err)
    else:
        message = f'pass "{info.name}" failed: {type(err).__name__}: {err}'
    path, note = None, ""
    if ctx.config.get(REPRODUCER_DIR, None) is not False:
        try:
            path, command = _write_reproducer(p, mod, ctx, err, running)
            note = f"\nreproducer: {path}\nreplay: {command}"
        except Exception as werr:  # never hide the pass's error behind a reproducer problem
            note = f"\n(could not write a reproducer: {werr})"
    return PassError(message + note, info.name, path, mod)


def _shell_quote(text: str) -> str:
    """``"text"`` when a shell keeps it as is inside double quotes, else single-quoted."""
    if not re.search(r'["$`\\!]', text):
        return f'"{text}"'
    return shlex.quote(text)


def _replay_command(path: str, spec: str, ctx: PassContext, info: PassInfo) -> str:
    level = max(ctx.opt_level, info.opt_level)
    extra = f" --opt-level {level}" if level != 2 else ""
    return f"tvmlite opt {shlex.quote(path)} --passes {_shell_quote(spec)}{extra}"


def _write_reproducer(p: Pass, mod: IRModule, ctx: PassContext, err: Exception,
                      running: list[Pass]) -> tuple[str, str]:
    """Write the module text before the failing pass with the pipeline that replays the failure."""
    directory = ctx.config.get(REPRODUCER_DIR) or tempfile.mkdtemp(prefix="tvmlite-repro-")
    os.makedirs(directory, exist_ok=True)
    stem = "repro_" + re.sub(r"[^A-Za-z0-9_.-]", "_", p.info.name)
    path = os.path.join(directory, stem + ".py")
    n = 1
    while os.path.exists(path):
        path = os.path.join(directory, f"{stem}_{n}.py")
        n += 1
    spec = str(p)
    command = _replay_command(path, spec, ctx, p.info)
    message = str(err).splitlines() or [""]
    lines = [
        "# tvmlite reproducer: the module before the failing pass",
        f'# pipeline: "{spec}"',
        f"# failed: {p.info.name}",
        f"# error: {type(err).__name__}: {message[0]}",
    ]
    lines += [f"#   {line.strip()}" for line in message[1:21]]  # e.g. the well-formedness problems
    outer = running[0] if running else p
    if outer is not p:
        lines.append(f'# in pipeline: "{outer}"')
    if p.info.name not in _REGISTRY:
        lines.append(f"# note: {p.info.name} is not a registered pass; register it "
                     "(tvmlite.passes.register_pass) in the process that replays this file")
    lines.append(f"# replay: {command}")
    text = mod.script(show_meta=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n" + text + ("" if text.endswith("\n") else "\n"))
    return path, command


# ------------------------------------------------------------------ decorators
def _wrap_class(base: type, method: str, cls: type, opt_level: int | None, name: str | None,
                required: Iterable[str] | None) -> type:
    """A Pass class whose instances hold an instance of ``cls`` and call its ``method``."""
    if not callable(getattr(cls, method, None)):
        raise TypeError(f"{cls.__name__} must define {method}(...) to be used as a pass")
    pass_name = name or cls.__name__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        inst = cls(*args, **kwargs)
        base.__init__(self, None, opt_level, pass_name, required)
        self._inst = inst
        if not hasattr(inst, "stats"):
            try:
                inst.stats = self.stats  # so the user's `self.stats[...] += 1` counts for this pass
            except AttributeError:
                pass

    def forward(self: Any, *args: Any) -> Any:
        return getattr(self._inst, method)(*args)

    def __getattr__(self: Any, attr: str) -> Any:
        inst = self.__dict__.get("_inst")
        if inst is None:
            raise AttributeError(attr)
        return getattr(inst, attr)

    namespace = {
        "__init__": __init__, method: forward, "__getattr__": __getattr__, "__doc__": cls.__doc__,
        "__module__": cls.__module__, "__qualname__": cls.__qualname__,
        "_options_signature": cls.__init__ if cls.__init__ is not object.__init__ else None,
    }
    try:
        namespace["__signature__"] = inspect.signature(cls)  # the options a registry shows
    except (TypeError, ValueError):
        pass
    return type(cls.__name__, (base,), namespace)


def _decorator(base: type, method: str, pass_func: Any, opt_level: int | None, name: str | None,
               required: Iterable[str] | None) -> Any:
    def create(target: Any) -> Any:
        if inspect.isclass(target):
            return _wrap_class(base, method, target, opt_level, name, required)
        if callable(target):
            return base(target, opt_level, name, required)
        raise TypeError(f"a pass decorator applies to a class or a function, not {type(target).__name__}")

    return create(pass_func) if pass_func is not None else create


def module_pass(pass_func: Any = None, opt_level: int | None = None, name: str | None = None,
                required: Iterable[str] | None = None) -> Any:
    """Make a ModulePass from a function ``(mod, ctx)`` or a class with ``transform_module(self, mod, ctx)``.

    On a class it returns a Pass class (its constructor takes the class's arguments); on a
    function it returns a Pass.  Usable as ``@module_pass`` or ``@module_pass(opt_level=..., name=...)``.
    """
    return _decorator(ModulePass, "transform_module", pass_func, opt_level, name, required)


def function_pass(pass_func: Any = None, opt_level: int | None = None, name: str | None = None,
                  required: Iterable[str] | None = None) -> Any:
    """Make a FunctionPass from ``(func, mod, ctx)`` or a class with ``transform_function(self, func, mod, ctx)``."""
    return _decorator(FunctionPass, "transform_function", pass_func, opt_level, name, required)


def prim_func_pass(pass_func: Any = None, opt_level: int | None = None, name: str | None = None,
                   required: Iterable[str] | None = None) -> Any:
    """Make a PrimFuncPass from ``(func, mod, ctx)`` or a class with ``transform_function(self, func, mod, ctx)``."""
    return _decorator(PrimFuncPass, "transform_function", pass_func, opt_level, name, required)


# ------------------------------------------------------------------ PrintIR
class PrintIR(ModulePass):
    """Print the module (after a ``# ---- header ----`` line) and return it unchanged."""

    def __init__(self, header: str = "") -> None:
        super().__init__(opt_level=0, name="PrintIR")
        self.header = header

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        print(f"# ---- {self.header or 'PrintIR'} ----")
        print(mod.script())
        return mod


# ------------------------------------------------------------------ registry
_REGISTRY: dict[str, Callable[..., Pass]] = {}


def register_pass(name: str, factory: Callable[..., Pass] | None = None, *, override: bool = False) -> Any:
    """Register ``factory`` (a Pass class or a function returning a Pass) under ``name``.

    Registered names can be used in ``required``, textual pipelines and ``tvmlite opt``;
    the factory's parameters are the pass's options.  Without ``factory`` it is a decorator.
    """

    def add(f: Callable[..., Pass]) -> Callable[..., Pass]:
        if name in _REGISTRY and _REGISTRY[name] is not f and not override:
            raise ValueError(f"a pass named {name!r} is already registered (use override=True to replace it)")
        _REGISTRY[name] = f
        return f

    return add(factory) if factory is not None else add


def unknown_pass_message(name: str) -> str:
    """What to say about an unregistered pass name: a close match, and what is registered."""
    names = list_passes()
    close = [n for n in names if n.lower().startswith(name.lower())] or difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown pass {name!r}{hint} (registered passes: {', '.join(list_passes()) or 'none'})"


def list_passes() -> list[str]:
    """The names of the registered passes, sorted."""
    return sorted(_REGISTRY)


def pass_options(name: str) -> dict[str, inspect.Parameter] | None:
    """The options of registered pass ``name`` (None: it accepts any keyword)."""
    factory = _REGISTRY[name]
    if inspect.isclass(factory) and getattr(factory, "__init__", None) in _INFRA_INITS:
        return {}  # a Pass subclass without its own constructor has no options
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return None
    return {k: p for k, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _check_option(pass_name: str, param: inspect.Parameter, value: Any) -> None:
    """The value's type must match the parameter's default (bool, int, float or str)."""
    default = param.default
    if default is inspect.Parameter.empty or default is None:
        return
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, str):
        ok = isinstance(value, str)
    else:
        return
    if not ok:
        hint = f' (write "{value}" for a string)' if isinstance(default, str) else ""
        raise PipelineError(f"option {param.name} of {pass_name} expects a {type(default).__name__} "
                            f"(default {format_option(default)}), got {format_option(value)}{hint}")


def get_pass(name: str, **options: Any) -> Pass:
    """A new instance of registered pass ``name`` with ``options``; PipelineError when unknown.

    The pass is named ``name`` (an alias registered for another pass takes the alias), so that
    ``str()``, ``required`` and ``disabled_pass`` refer to it as the pipeline did.
    """
    factory = _REGISTRY.get(name)
    if factory is None:
        raise PipelineError(unknown_pass_message(name))
    allowed = pass_options(name)
    if allowed is not None:
        for key, value in options.items():
            if key not in allowed:
                raise PipelineError(f"pass {name} has no option {key!r} "
                                    f"(options: {', '.join(allowed) or 'none'})")
            _check_option(name, allowed[key], value)
        missing = [k for k, p in allowed.items() if p.default is inspect.Parameter.empty and k not in options]
        if missing:
            raise PipelineError(f"pass {name} needs the option{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    p = factory(**options)
    if not isinstance(p, Pass):
        raise TypeError(f"the factory of pass {name!r} returned {type(p).__name__}, not a Pass")
    # The pass prints back as it was asked for: the registered name and the options given.
    p._options = dict(options)
    if p.info.name != name:
        info = p.info
        p._info = PassInfo(name, info.opt_level, info.required, info.kind)
    return p


def render_statistics(stats: dict[str, Counter]) -> str:
    """The counters recorded by passes, one line per pass: ``Pass: key=value, ...``."""
    lines = ["pass statistics:"]
    for name, counters in stats.items():
        if counters:
            lines.append(f"  {name}: " + ", ".join(f"{k}={v}" for k, v in counters.items()))
    return "\n".join(lines) if len(lines) > 1 else "pass statistics: none recorded"


register_pass("PrintIR", PrintIR)
