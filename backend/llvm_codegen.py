"""TIR to LLVM: every PrimFunc of an IRModule (block-free; N-D or flat buffer accesses) becomes one
function of a single LLVM module, built with ``llvmlite.ir`` and optimised with LLVM's new pass
manager on the target machine.

Calling convention of ``tvmlite_<name>`` (see docs/design.md, "Backend contracts"): one pointer per
buffer parameter (params order), one int64 per symbolic variable the buffer shapes/strides introduce
(order of first appearance), one value per scalar parameter (float16 as its bits in an i16, bool as
an i8), then a result pointer when the PrimFunc returns a value. It returns an i32 status: 0 for
success, k > 0 for ``LLVMModule.messages[k - 1]`` (a failed ``assert`` or a failed heap allocation),
so a failing kernel never aborts the process."""
from __future__ import annotations

import dataclasses
from typing import Any

from llvmlite import ir

from ..ir import tir
from ..ir.dtype import parse_dtype
from ..ir.functor import post_order_visit
from ..ir.module import IRModule
from ..ir.stmt_functor import statements_of
from .llvm.concurrent import run_module_passes
from .llvm.errors import CodegenError
from .llvm.function_builder import FunctionBuilder
from .llvm.module_builder import ModuleBuilder
from .llvm.statements import REASSOC_KEY
from .llvm.types import I32, I64, PTR, abi_type, llvm_type
from .signature import ParamInfo, Signature, prim_func_signature
from .target import Target, llvm_binding
from .thread_pool import PARALLEL_FOR_SYMBOL

__all__ = ["CodegenError", "ParamInfo", "FuncSignature", "LLVMModule", "codegen", "signature", "symbol_name",
           "GeneratedCode", "generate", "generated_module",
           "contains_blocks", "PARALLEL_FOR_SYMBOL", "REASSOC_KEY"]


def symbol_name(name: str) -> str:
    """The LLVM symbol of a PrimFunc: prefixed, so that no kernel can shadow a libc/libm symbol
    (a kernel named ``exp`` would otherwise capture LLVM's own calls to ``exp``)."""
    return f"tvmlite_{name}"


# ---------------------------------------------------------------------------------------------
# Signatures (what the executable checks before native code runs)


@dataclasses.dataclass(frozen=True)
class FuncSignature(Signature):
    """The native signature of one compiled PrimFunc: the caller's :class:`Signature` (what the
    argument checks read) plus the symbol, the result and whether it runs on the thread pool."""

    symbol: str
    ret_dtype: str | None
    uses_parallel: bool


def contains_blocks(func: tir.PrimFunc) -> bool:
    """True when the PrimFunc still has blocks (it needs the lowering passes first)."""
    found = []

    def check(n: Any) -> None:
        """Record a block."""
        if isinstance(n, (tir.Block, tir.BlockRealize)):
            found.append(n)

    post_order_visit(func.body, check)
    return bool(found)


def _signature(name: str, func: tir.PrimFunc, uses_parallel: bool) -> FuncSignature:
    """The signature of ``func``: its parameters and the symbolic variables its buffers introduce."""
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            if p.dtype == "handle":
                raise CodegenError(f"{name}: parameter '{p.name}' is a handle without a buffer "
                                   f"(declare it with T.match_buffer or as T.Buffer)")
        elif parse_dtype(buf.dtype).lanes > 1 or buf.dtype in ("handle", "void"):
            raise CodegenError(f"{name}: buffer parameter '{buf.name}' has dtype {buf.dtype}; "
                               f"parameters must be arrays of scalars")
    base = prim_func_signature(name, func)
    ret = func.ret_type if func.ret_type not in (None, "void") else None
    return FuncSignature(base.name, base.params, base.sym_vars, base.noalias, symbol=symbol_name(name),
                         ret_dtype=ret, uses_parallel=uses_parallel)


# ---------------------------------------------------------------------------------------------
# Entry points


@dataclasses.dataclass
class LLVMModule:
    """The LLVM code of one IRModule: unoptimised IR text, per-function signatures, the message
    table of the status codes; ``optimize``/``emit_*`` run LLVM on a fresh copy each time."""

    target: Target
    llvm_ir: str
    signatures: dict[str, FuncSignature]
    messages: tuple[str, ...]
    # Per message: (name, argument position) of the values a failure reports (see message_code).
    message_values: tuple[tuple[tuple[str, int], ...], ...] = ()
    _optimized: str | None = None

    @property
    def uses_parallel(self) -> bool:
        """Whether any function runs a parallel loop on the thread pool."""
        return any(s.uses_parallel for s in self.signatures.values())

    def parse(self, context: Any | None = None) -> Any:
        """A fresh, verified llvmlite ModuleRef of the unoptimised IR (in LLVM context ``context``,
        by default the global one)."""
        llvm = llvm_binding()
        mod = llvm.parse_assembly(self.llvm_ir, context=context)
        try:
            mod.verify()
        except BaseException:
            mod.close()  # now, not when collected: a private context may be gone by then
            raise
        return mod

    def optimized_module(self, tm: Any | None = None, context: Any | None = None) -> Any:
        """A ModuleRef optimised at the target's opt level with the new pass manager. With a
        ``context`` (and ``tm``) the calling thread owns alone, the optimiser runs without
        llvmlite's lock, beside another thread's."""
        llvm = llvm_binding()
        tm = tm or self.target.create_target_machine()
        mod = self.parse(context)
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        settings = optimization_settings(self.target)
        if settings["speed_level"] > 0:
            pto = llvm.create_pipeline_tuning_options(speed_level=settings["speed_level"])
            pto.loop_vectorization = settings["loop_vectorization"]
            pto.slp_vectorization = settings["slp_vectorization"]
            pto.loop_unrolling = settings["loop_unrolling"]
            pb = llvm.create_pass_builder(tm, pto)
            try:
                if context is None:
                    pb.getModulePassManager().run(mod, pb)
                else:
                    run_module_passes(pb, mod)
            except BaseException:
                mod.close()
                raise
        return mod

    @property
    def optimized_ir(self) -> str:
        """The optimised IR text (computed once)."""
        if self._optimized is None:
            self._optimized = str(self.optimized_module())
        return self._optimized

    def emit_assembly(self) -> str:
        """Target assembly of the optimised module."""
        tm = self.target.create_target_machine()
        return tm.emit_assembly(self.optimized_module(tm))

    def emit_object(self, pic: bool = True) -> bytes:
        """A relocatable object file of the optimised module (PIC, for shared libraries)."""
        tm = self.target.create_target_machine(pic=pic)
        return tm.emit_object(self.optimized_module(tm))


def optimization_settings(target: Target) -> dict[str, Any]:
    """How LLVM's optimiser runs for ``target`` (the kernel cache keys its entries on these too)."""
    level = target.opt_level
    return {"speed_level": level, "loop_vectorization": level >= 2, "slp_vectorization": level >= 2,
            "loop_unrolling": level >= 2}


def codegen(mod: IRModule | tir.PrimFunc, target: str | Target | None = None) -> LLVMModule:
    """Compile every PrimFunc of ``mod`` (block-free TIR) into one LLVM module. Functions of other
    kinds (Relax) are left to the VM."""
    return generated_module(generate(mod, target))


@dataclasses.dataclass
class GeneratedCode:
    """What ``generate`` makes of an IRModule before LLVM reads it: the textual IR llvmlite built,
    the signatures and the message table."""

    target: Target
    text: str
    signatures: dict[str, FuncSignature]
    messages: tuple[str, ...]
    message_values: tuple[tuple[tuple[str, int], ...], ...]


def generate(mod: IRModule | tir.PrimFunc, target: str | Target | None = None) -> GeneratedCode:
    """The first half of ``codegen``, in Python only (no LLVM call): the IR text of every PrimFunc."""
    tgt = Target.of(target)
    if isinstance(mod, tir.PrimFunc):
        mod = IRModule.from_expr(mod)
    mb = ModuleBuilder(tgt, "tvmlite")
    signatures: dict[str, FuncSignature] = {}
    for gv, func in mod.functions_items():
        if not isinstance(func, tir.PrimFunc):
            continue
        signatures[gv.name_hint] = _emit_function(mb, gv.name_hint, func)
    if not signatures:
        raise CodegenError("the module has no PrimFunc to compile")
    return GeneratedCode(tgt, mb.text(), signatures, tuple(mb.messages), tuple(mb.message_values))


def generated_module(gen: GeneratedCode) -> LLVMModule:
    """The second half of ``codegen``: LLVM parses and verifies the text (an internal error names
    the IR it rejected) and prints it back as the module's IR."""
    llvm = llvm_binding()
    try:
        ref = llvm.parse_assembly(gen.text)
        ref.verify()
        ref.name = "tvmlite"
    except RuntimeError as err:  # a codegen bug: say so with the IR that LLVM rejected
        raise CodegenError(f"internal error: LLVM rejected the generated IR: {err}\n{gen.text}") from None
    return LLVMModule(gen.target, str(ref), gen.signatures, gen.messages, gen.message_values)


def signature(name: str, func: tir.PrimFunc) -> FuncSignature:
    """The native signature the code generator gives PrimFunc ``name``."""
    has_parallel = [False]

    def find(n: Any) -> None:
        """Note a parallel loop."""
        if isinstance(n, tir.For) and n.kind == tir.ForKind.PARALLEL:
            has_parallel[0] = True

    post_order_visit(func.body, find)
    return _signature(name, func, has_parallel[0])


def _emit_function(mb: ModuleBuilder, name: str, func: tir.PrimFunc) -> FuncSignature:
    """Emit ``tvmlite_<name>`` for one PrimFunc and return its signature."""
    blocks, parallel, jumps = _scan(func)
    if blocks:
        raise CodegenError(f"{name}: the LLVM backend needs block-free TIR, but the function still has "
                           f"blocks; run the lowering passes (tvmlite.passes.get_pipeline(\"lower\")) first")
    sig = _signature(name, func, parallel)
    arg_types: list[ir.Type] = [PTR] * len(sig.buffer_params) + [I64] * len(sig.sym_vars)
    arg_types += [abi_type(p.dtype) for p in sig.scalar_params]
    if sig.ret_dtype is not None:
        arg_types.append(PTR)
    fn = ir.Function(mb.module, ir.FunctionType(I32, arg_types), name=sig.symbol)
    fn.attributes.add("nounwind")
    fb = FunctionBuilder(mb, fn, name, ret_ptr=fn.args[-1] if sig.ret_dtype else None, ret_dtype=sig.ret_dtype)
    args = iter(fn.args)
    for p in sig.buffer_params:
        arg = next(args)
        arg.name = p.name
        if sig.noalias:
            arg.add_attribute("noalias")
            fb.noalias_vars.add(id(p.buffer.data))
        fb.vars[p.var] = arg
        fb.vars[p.buffer.data] = arg
    for k, v in enumerate(sig.sym_vars, len(sig.buffer_params)):
        arg = next(args)
        arg.name = v.name
        fb.bind(v, arg)
        fb.reported[v] = k
    for k, p in enumerate(sig.scalar_params, len(sig.buffer_params) + len(sig.sym_vars)):
        arg = next(args)
        arg.name = p.name
        fb.bind(p.var, arg)
        if not parse_dtype(p.dtype).is_float:  # sizes are integers; float16 arrives as its bits
            fb.reported[p.var] = k
    if sig.ret_dtype is not None:
        next(args).name = "result"
    # elem_offset variables of parameter buffers: arrays start at their data pointer.
    for p in sig.buffer_params:
        off = p.buffer.elem_offset
        if isinstance(off, tir.Var) and off not in fb.vars:
            fb.bind(off, ir.Constant(llvm_type(off.dtype), 0))
    fb.may_jump = jumps
    fb.stmt(func.body)
    fb.finish()
    return sig


def _scan(func: tir.PrimFunc) -> tuple[bool, bool, bool]:
    """(has blocks, has a parallel loop, has break/continue): what code generation asks of the whole
    body, in one walk of its statements instead of one per question (and per loop)."""
    blocks = parallel = jumps = False
    for n in statements_of(func.body):
        if isinstance(n, (tir.Block, tir.BlockRealize)):
            blocks = True
        elif isinstance(n, tir.For):
            parallel = parallel or n.kind == tir.ForKind.PARALLEL
        elif isinstance(n, (tir.Break, tir.Continue)):
            jumps = True
    return blocks, parallel, jumps
