"""Running compiled PrimFuncs: ``Executable`` (MCJIT engine + target machine kept alive as long as
any function from it), argument checks before native code runs, and shared libraries
(``export_library``/``load_module``). The thread pool of ``T.parallel`` loops is in thread_pool.py."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import tir
from ..ir.module import IRModule
from . import kernel_cache
from .llvm.concurrent import emit_object
from .llvm_codegen import (CodegenError, FuncSignature, LLVMModule, codegen, contains_blocks, optimization_settings,
                           signature)
from .runtime import ArgumentError  # one error type for kernels and the VM
from .signature import ArgumentChecker, shape_text
from .target import Target, TargetError, llvm_binding
from .thread_pool import default_threads, ensure_pool, with_private_pool

__all__ = ["Executable", "PrimFuncHandle", "ArgumentError", "KernelError", "build", "load_module", "LoadedModule",
           "machine_code"]


class KernelError(RuntimeError):
    """A compiled function reported a failure (a failed ``assert`` or an out-of-memory allocation)."""


def _plain(value: Any) -> Any:
    """A native argument as a message shows it (ctypes scalars by their value)."""
    return getattr(value, "value", value)


# ---------------------------------------------------------------------------------------------
# Argument checking (backend/signature.py, shared with the interpreter)


_CTYPES = {"int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
           "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
           "float16": ctypes.c_uint16, "float32": ctypes.c_float, "float64": ctypes.c_double, "bool": ctypes.c_uint8}


# ---------------------------------------------------------------------------------------------
# Executable


class PrimFuncHandle:
    """A callable compiled PrimFunc: ``f(*args)`` takes the parameters in order (numpy arrays for
    buffers, Python numbers for scalars), runs in place, and returns the PrimFunc's value if any."""

    def __init__(self, owner: Any, sig: FuncSignature, address: int, messages: tuple[str, ...],
                 message_values: tuple[tuple[tuple[str, int], ...], ...] = ()) -> None:
        """Wrap the native function at ``address`` (``owner`` keeps its code alive); a failure status
        ``k`` raises ``messages[k - 1]`` with the arguments ``message_values[k - 1]`` names."""
        self._owner = owner  # the Executable (its engine holds the machine code) or the loaded library
        self._messages = messages
        self._message_values = message_values
        self.signature = sig
        self.name = sig.name
        argtypes: list[Any] = [ctypes.c_void_p] * len(sig.buffer_params) + [ctypes.c_int64] * len(sig.sym_vars)
        argtypes += [_CTYPES[p.dtype] for p in sig.scalar_params]
        self._ret_ctype = _CTYPES[sig.ret_dtype] if sig.ret_dtype else None
        if self._ret_ctype is not None:
            argtypes.append(ctypes.c_void_p)
        # CFUNCTYPE (not PYFUNCTYPE) releases the GIL during the call.
        self._cfunc = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(address)
        self._check = ArgumentChecker(sig)
        self._buffer_pos = [i for i, p in enumerate(sig.params) if p.buffer is not None]
        self._scalar_pos = [i for i, p in enumerate(sig.params) if p.buffer is None]

    def __repr__(self) -> str:
        """The function with its parameters."""
        params = ", ".join(f"{p.name}: {p.dtype}{shape_text(p.buffer.shape) if p.buffer else ''}"
                           for p in self.signature.params)
        return f"<compiled PrimFunc {self.name}({params})>"

    def __call__(self, *args: Any) -> Any:
        """Call with the parameters in order; checks every argument first."""
        params = self.signature.params
        if len(args) != len(params):
            raise ArgumentError(f"{self.name}() takes {len(params)} argument{'s' if len(params) != 1 else ''} "
                                f"({self._check.names}), got {len(args)}")
        return self._run([args[i] for i in self._buffer_pos], [args[i] for i in self._scalar_pos])

    def call(self, arrays: Sequence[Any], scalars: Sequence[Any] = ()) -> Any:
        """Executor form: buffers and scalars as separate lists (destination-passing style)."""
        return self._run(arrays, scalars)  # the checker refuses wrong counts

    def static_entry(self, shapes: Sequence[tuple[int, ...]], dtypes: Sequence[str],
                     n_inputs: int) -> tuple[Callable[..., int], tuple[int, ...]] | None:
        """For a caller that proves its arrays (the VM's plans): the native function and the constant
        arguments after the data pointers, when arrays of these ``shapes``/``dtypes`` (C-contiguous,
        aligned; the first ``n_inputs`` read-only or shared, the others fresh) pass every check this
        handle's ``__call__`` makes; None otherwise (the caller then calls it checked). A non-zero
        result of the native function goes to :meth:`status_error`."""
        sig = self.signature
        if sig.ret_dtype is not None or sig.scalar_params:
            return None
        if any(p.written for p in sig.buffer_params[:n_inputs]):
            return None  # a kernel writing its input: writeability and overlaps are checked per call
        extra = self._check.static_args(shapes, dtypes)
        return None if extra is None else (self._cfunc, tuple(extra))

    def status_error(self, status: int, args: Sequence[Any] | None = None) -> KernelError:
        """The error of a non-zero status returned by the native function; given the native
        arguments ``args``, a failed assert also shows the values of the sizes in its condition."""
        messages = self._messages
        if not 0 < status <= len(messages):
            return KernelError(f"{self.name}: failed with status {status}")
        text = messages[status - 1]
        shown = self._message_values[status - 1] if status <= len(self._message_values) else ()
        if args is not None and shown:
            text += " (" + ", ".join(f"{name} = {_plain(args[k])}" for name, k in shown) + ")"
        return KernelError(text)

    def _run(self, buffers: Sequence[Any], scalars: Sequence[Any]) -> Any:
        """Check, call the native code, turn a failure status into KernelError."""
        native, arrays = self._check(buffers, scalars)
        result = None
        if self._ret_ctype is not None:
            result = self._ret_ctype()
            native.append(ctypes.addressof(result))
        status = self._cfunc(*native)
        del arrays  # the arrays stayed referenced (alive) until the native call returned
        if status:
            raise self.status_error(status, native)
        if result is None:
            return None
        value = result.value
        rd = self.signature.ret_dtype
        if rd == "float16":
            return float(np.array(value, np.uint16).view(np.float16))
        return bool(value) if rd == "bool" else value


class _FunctionTable:
    """Compiled functions by name, and the executor interface (``call``) over them."""

    _functions: dict[str, PrimFuncHandle]

    def _where(self) -> str:
        """Where the functions live, for the message of a missing name."""
        return ""

    def __getitem__(self, name: str) -> PrimFuncHandle:
        """The compiled function ``name``."""
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"no compiled function named {name!r}{self._where()} (functions: "
                           f"{', '.join(self._functions) or 'none'})") from None

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` was compiled."""
        return name in self._functions

    def keys(self) -> list[str]:
        """The names of the compiled functions."""
        return list(self._functions)

    def call(self, name: str, arrays: Sequence[Any], scalars: Sequence[Any] = ()) -> Any:
        """Run PrimFunc ``name`` in place on ``arrays`` (outputs included) and ``scalars``."""
        return self[name].call(arrays, scalars)


class Executable(_FunctionTable):
    """Compiled PrimFuncs of an IRModule: ``ex["add"](a, b, c)``, ``ex.call(name, arrays, scalars)``,
    ``ex.get_source("ll" | "asm" | "remarks" | "tir", optimized=...)``."""

    def __init__(self, llvm_module: LLVMModule, ir_module: IRModule | None = None) -> None:
        """Optimise ``llvm_module`` for the host and JIT it (MCJIT)."""
        self._llvm_module: LLVMModule | None = llvm_module
        self.ir_module = ir_module
        self.target = llvm_module.target
        self._require_host()
        if llvm_module.uses_parallel:
            ensure_pool()  # its symbol must exist before the calls are checked
        self._tm = self.target.create_target_machine(jit=True)
        # The machine code comes from the kernel cache when this IR was compiled before.
        obj, _ = machine_code(llvm_module, self._tm)
        self._load([(llvm_module, obj)])

    @classmethod
    def from_parts(cls, parts: Sequence[tuple[LLVMModule, bytes]], ir_module: IRModule) -> "Executable":
        """The executable of ``ir_module`` from the machine code already made of its LLVM modules
        (``machine_code`` of each part: ``tvmlite.compile`` makes them while it lowers the rest);
        ``llvm_module`` (the one module ``codegen`` makes of them all) is generated when asked for."""
        self = cls.__new__(cls)
        self._llvm_module = None
        self.ir_module = ir_module
        self.target = parts[0][0].target
        self._require_host()
        self._tm = self.target.create_target_machine(jit=True)
        self._load(parts)
        return self

    @property
    def llvm_module(self) -> LLVMModule:
        """The LLVM code of the compiled PrimFuncs (what ``get_source`` and ``export_library`` show)."""
        if self._llvm_module is None:
            self._llvm_module = codegen(self.ir_module, self.target)
        return self._llvm_module

    def _require_host(self) -> None:
        """TargetError unless the code can run in this process."""
        if not self.target.is_host:
            raise TargetError(f"code for {self.target.triple} cannot run in this process "
                              f"({llvm_binding().get_process_triple()}); use get_source/emit to inspect it")

    def _load(self, parts: Sequence[tuple[LLVMModule, bytes]]) -> None:
        """JIT the object files of ``parts`` into one engine and wrap their functions."""
        llvm = llvm_binding()
        if any(lm.uses_parallel for lm, _ in parts):
            ensure_pool()
        self._optimized_ir: str | None = None  # printed on demand (a large module takes milliseconds)
        empty = llvm.parse_assembly("")
        empty.triple = self._tm.triple
        self._engine = llvm.create_mcjit_compiler(empty, self._tm)
        for _, obj in parts:
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self._engine.finalize_object()
        self._asm: str | None = None
        self._functions = {name: PrimFuncHandle(self, sig, self._engine.get_function_address(sig.symbol),
                                                lm.messages, lm.message_values)
                           for lm, _ in parts for name, sig in lm.signatures.items()}

    def __repr__(self) -> str:
        """The functions and the machine they run on."""
        return f"<Executable [{', '.join(self._functions)}] for {self.target.describe()}>"

    # ---- inspection
    def get_source(self, fmt: str = "ll", optimized: bool = False) -> str:
        """Generated code: ``"ll"`` (LLVM IR before optimisation, or after with ``optimized=True``),
        ``"asm"``, ``"remarks"`` (the loop vectoriser's report) or ``"tir"`` (the compiled TIR)."""
        if fmt in ("ll", "llvm"):
            if not optimized:
                return self.llvm_module.llvm_ir
            if self._optimized_ir is None:
                self._optimized_ir = str(self.llvm_module.optimized_module(self._tm))
            return self._optimized_ir
        if fmt in ("asm", "s"):
            if self._asm is None:
                self._asm = self.llvm_module.emit_assembly()
            return self._asm
        if fmt == "remarks":
            return vectorizer_remarks(self.llvm_module)
        if fmt == "tir":
            if self.ir_module is None:
                raise ValueError("this executable was built without its TIR module")
            return self.ir_module.script()
        raise ValueError(f"unknown source format {fmt!r} (use 'll', 'asm', 'remarks' or 'tir')")

    def export_library(self, path: str, cc: str | None = None) -> str:
        """Write a shared library of the compiled functions (with its own thread pool and the TIR it
        was compiled from, so ``load_module(path)`` checks arguments the same way); needs a C
        compiler driver (``cc``, ``$CC`` or gcc) to link."""
        if self.ir_module is None:
            raise ValueError("export_library needs the TIR module the executable was built from")
        return export_library(self.llvm_module, self.ir_module, path, cc)

    def show(self, fmt: str = "ll", optimized: bool = False) -> None:
        """Print ``get_source(fmt)``, highlighted with pygments on a terminal."""
        text = self.get_source(fmt, optimized)
        print(highlight_source(text, fmt) if _should_color(sys.stdout) else text)


# LLVM intrinsics that x86 lowers to a libm call: the C name is the base name (+ "f" for float).
_LIBM_BACKED = frozenset({"exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh",
                          "tanh", "asin", "acos", "atan", "atan2", "pow", "round", "roundeven", "nearbyint", "floor",
                          "ceil", "trunc", "ldexp"})
_PROCESS = ctypes.CDLL(None)


def _resolvable(name: str) -> bool:
    """Whether the JIT's symbol lookup (the process, plus symbols added to LLVM) finds ``name``."""
    return hasattr(_PROCESS, name) or llvm_binding().address_of_symbol(name) is not None


def _declared_calls(mod: Any) -> list[str]:
    """The C functions an optimised module calls (LLVM intrinsics x86 lowers to libm by their
    libm names)."""
    calls = []
    for fn in mod.functions:
        if not fn.is_declaration:
            continue
        name = fn.name
        if name.startswith("llvm."):
            parts = name.split(".")
            if len(parts) < 3 or parts[1] not in _LIBM_BACKED:
                continue
            name = parts[1] + ("" if parts[2].endswith("f64") else "f")
        calls.append(name)
    return sorted(set(calls))


def _require_symbols(calls: Sequence[str], text: str, target: Target) -> None:
    """Refuse to JIT code that calls a C function this process lacks: MCJIT would otherwise jump
    to address 0 (a crash) instead of reporting it."""
    if "half" in text and "+f16c" not in target.features.split(","):
        # Without F16C, half conversions become libgcc calls (__extendhfsf2 ...): make them visible.
        import ctypes.util

        lib = ctypes.util.find_library("gcc_s")
        if lib:
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    missing = [name for name in calls if not _resolvable(name)]
    if missing:
        raise CodegenError(f"the compiled code calls {', '.join(sorted(set(missing)))}, which this process "
                           f"does not provide (a misspelt T.call_extern, or a C library that is not loaded)")


def machine_code(llvm_module: LLVMModule, tm: Any, context: Any | None = None) -> tuple[bytes, list[str]]:
    """The object file of ``llvm_module`` made by the target machine ``tm`` and the C functions it
    calls: from the kernel cache, else optimised and emitted (then cached); CodegenError when it
    calls a function this process lacks. With an LLVM ``context`` (and ``tm``) the calling thread
    owns alone, LLVM's long calls run beside other threads' (``llvm.concurrent``)."""
    target = llvm_module.target
    key = kernel_cache.cache_key(llvm_module.llvm_ir, target, optimization_settings(target))
    cached = kernel_cache.load(key)
    if cached is None:
        mod = llvm_module.optimized_module(tm, context)
        try:
            calls = _declared_calls(mod)
            _require_symbols(calls, llvm_module.llvm_ir, target)  # optimisation adds no half types
            obj = tm.emit_object(mod) if context is None else emit_object(tm, mod)
        finally:
            mod.close()  # before its context goes (a traceback would otherwise keep it alive)
        kernel_cache.store(key, obj, calls)
        return obj, calls
    obj, calls = cached
    _require_symbols(calls, llvm_module.llvm_ir, target)
    return obj, calls


def _should_color(stream: Any) -> bool:
    """Whether to highlight for ``stream`` (a terminal, NO_COLOR unset)."""
    from ..script.highlight import should_color

    return should_color(stream)


def highlight_source(text: str, fmt: str) -> str:
    """LLVM IR or assembly highlighted for a terminal (pygments' LlvmLexer / GasLexer)."""
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import GasLexer, LlvmLexer, PythonLexer

    lexer = {"ll": LlvmLexer, "llvm": LlvmLexer, "asm": GasLexer, "s": GasLexer}.get(fmt, PythonLexer)()
    return highlight(text, lexer, TerminalFormatter())


_REMARKS_SCRIPT = r"""
import sys
import llvmlite.binding as llvm
llvm.initialize_native_target(); llvm.initialize_native_asmprinter(); llvm.initialize_native_asmparser()
for opt in ("--pass-remarks=loop-vectorize|slp-vectorizer", "--pass-remarks-missed=loop-vectorize",
            "--pass-remarks-analysis=loop-vectorize"):
    llvm.set_option("", opt)
triple, cpu, features, level = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=level)
mod = llvm.parse_assembly(sys.stdin.read())
mod.triple = tm.triple
mod.data_layout = str(tm.target_data)
pto = llvm.create_pipeline_tuning_options(speed_level=level)
pto.loop_vectorization = True
pto.slp_vectorization = True
pb = llvm.create_pass_builder(tm, pto)
pb.getModulePassManager().run(mod, pb)
"""


def vectorizer_remarks(lm: LLVMModule) -> str:
    """The loop/SLP vectoriser's remarks for a module. LLVM prints them to stderr from a global
    option, so they are collected in a short subprocess that leaves this process's LLVM untouched."""
    t = lm.target
    proc = subprocess.run([sys.executable, "-c", _REMARKS_SCRIPT, t.triple, t.mcpu, t.features,
                           str(max(t.opt_level, 2))],
                          input=lm.llvm_ir, capture_output=True, text=True, timeout=120)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("remark:")]
    if proc.returncode != 0 and not lines:
        return f"(no remarks: the optimiser subprocess failed: {proc.stderr.strip()[-500:]})"
    return "\n".join(lines) + ("\n" if lines else "")


def build(mod: IRModule | tir.PrimFunc, target: str | Target | None = None) -> Executable:
    """Compile the PrimFuncs of ``mod`` for ``target`` (default: the current target, the host CPU).

    Functions that still contain blocks are lowered first with ``get_pipeline("lower")`` when that
    pipeline exists; codegen itself needs block-free TIR."""
    if isinstance(mod, tir.PrimFunc):
        mod = IRModule.from_expr(mod)
    mod = lower_if_needed(mod)
    return Executable(codegen(mod, target), mod)


def lower_if_needed(mod: IRModule) -> IRModule:
    """The PrimFuncs of ``mod``, run through the "lower" pipeline if any still has blocks."""
    prims = IRModule({gv: f for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)})
    if not any(contains_blocks(f) for _, f in prims.functions_items()):
        return prims
    from ..passes import get_pipeline
    from ..passes.pipeline_registry import list_pipelines

    if "lower" not in list_pipelines():
        blocked = [gv.name_hint for gv, f in prims.functions_items() if contains_blocks(f)]
        raise CodegenError(f"{', '.join(blocked)} still contain blocks and this tvmlite has no \"lower\" "
                          f"pipeline; codegen needs block-free TIR")
    return get_pipeline("lower")(prims)


# ---------------------------------------------------------------------------------------------
# Shared libraries

_METADATA_SYMBOL = "tvmlite_library_metadata"


def _library_ir(lm: LLVMModule, ir_module: IRModule) -> str:
    """The library's LLVM IR: the kernels, a private copy of the pool (so the library needs nothing
    from the JIT) and a getter for the metadata that ``load_module`` reads back."""
    import json

    meta = json.dumps({"version": 1, "target": str(lm.target), "messages": list(lm.messages),
                       "message_values": [[list(v) for v in values] for values in lm.message_values],
                       "tir": ir_module.script(show_meta=True)}).encode("utf-8") + b"\0"
    escaped = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}" for c in meta)
    text = lm.llvm_ir
    text += (f'\n@.tvmlite_meta = private constant [{len(meta)} x i8] c"{escaped}"\n'
             f"define ptr @{_METADATA_SYMBOL}() {{\n  ret ptr @.tvmlite_meta\n}}\n")
    if lm.uses_parallel:
        text = with_private_pool(text)
    return text


def export_library(lm: LLVMModule, ir_module: IRModule, path: str, cc: str | None = None) -> str:
    """Compile ``lm`` to position-independent code and link it into the shared library ``path``."""
    import shutil
    import tempfile

    compiler = cc or os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not compiler:
        raise RuntimeError("export_library needs a C compiler driver to link (set CC or install gcc)")
    lib_module = LLVMModule(lm.target, _library_ir(lm, ir_module), lm.signatures, lm.messages, lm.message_values)
    obj = lib_module.emit_object(pic=True)
    with tempfile.TemporaryDirectory() as tmp:
        obj_path = os.path.join(tmp, "kernels.o")
        with open(obj_path, "wb") as f:
            f.write(obj)
        proc = subprocess.run([compiler, "-shared", "-o", path, obj_path, "-lm", "-lpthread"],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"linking {path} failed:\n{proc.stderr.strip()}")
    return path


class LoadedModule(_FunctionTable):
    """Functions of a library written by ``export_library``: the same interface as Executable
    (``m["add"](...)``, ``m.call(name, arrays, scalars)``, ``keys()``)."""

    def __init__(self, path: str) -> None:
        """Load the library at ``path`` and rebuild its functions' signatures."""
        import json

        from ..script import from_source

        self.path = path
        self._lib = ctypes.CDLL(os.path.abspath(path))
        try:
            getter = getattr(self._lib, _METADATA_SYMBOL)
        except AttributeError:
            raise ValueError(f"{path} is not a tvmlite library (no {_METADATA_SYMBOL})") from None
        getter.restype = ctypes.c_char_p
        meta = json.loads(getter().decode("utf-8"))
        self.target = Target(meta["target"])
        if not self.target.is_host:
            raise TargetError(f"{path} holds code for {self.target.triple}, which cannot run here")
        parsed = from_source(meta["tir"])
        self.ir_module = IRModule.from_expr(parsed) if isinstance(parsed, tir.PrimFunc) else parsed
        messages = tuple(meta["messages"])
        message_values = tuple(tuple((name, k) for name, k in values) for values in meta.get("message_values", ()))
        # The TIR re-parsed gives the same signatures (and so the same argument checks) as at build.
        sigs = [signature(gv.name_hint, f) for gv, f in self.ir_module.functions_items()]
        self._functions = {
            sig.name: PrimFuncHandle(self, sig, ctypes.cast(getattr(self._lib, sig.symbol), ctypes.c_void_p).value,
                                     messages, message_values)
            for sig in sigs}
        if any(sig.uses_parallel for sig in sigs):
            init = self._lib.tvmlite_pool_init
            init.restype, init.argtypes = ctypes.c_int64, [ctypes.c_int64]
            init(default_threads())
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=self._lib.tvmlite_pool_after_fork)

    def _where(self) -> str:
        return f" in {self.path}"

    def __repr__(self) -> str:
        """The path and the functions."""
        return f"<LoadedModule {self.path} [{', '.join(self._functions)}]>"


def load_module(path: str) -> LoadedModule:
    """Load a library written by ``Executable.export_library``."""
    return LoadedModule(path)
