"""Module-level state of code generation: one LLVM module per IRModule with its declarations, the
message table behind the kernels' status codes, string constants and loop-ID metadata."""
from __future__ import annotations

from typing import Any

from llvmlite import ir

from ..target import Target
from .errors import CodegenError
from .types import I1, I8, I32, PTR, type_suffix

__all__ = ["ModuleBuilder"]


class _LoopID(ir.values.MDValue):
    """A ``distinct !{!self, ...}`` loop-ID node (llvmlite cannot print self-referencing metadata)."""

    def descr(self, buf: list) -> None:
        """Print as a distinct, self-referencing node."""
        ops = ", ".join([self.get_reference()] + [op.get_reference() for op in self.operands])
        buf += (f"distinct !{{{ops}}}", "\n")

    def __hash__(self) -> int:
        """By identity: every loop has a node of its own."""
        return id(self)

    def __eq__(self, other: object) -> bool:
        """By identity."""
        return self is other


class ModuleBuilder:
    """One LLVM module for one IRModule: functions, error messages, declarations, metadata."""

    def __init__(self, target: Target, name: str) -> None:
        """An empty module for ``target``."""
        self.target = target
        self.module = ir.Module(name=name)
        self.module.triple = target.triple
        self.messages: list[str] = []
        # Per message: the (name, argument position) of the sizes whose values a failure reports.
        self.message_values: list[tuple[tuple[str, int], ...]] = []
        self.fflags: tuple[str, ...] = ("fast",) if target.fast_math else ("contract",)
        self._strings: dict[str, ir.GlobalVariable] = {}

    def message_code(self, text: str, shown: tuple[tuple[str, int], ...] = ()) -> int:
        """The status code that stands for ``text`` (1-based index into the message table); a failure
        reports the values of the function arguments ``shown`` (name, position) after the text."""
        for i, (t, v) in enumerate(zip(self.messages, self.message_values)):
            if t == text and v == shown:
                return i + 1
        self.messages.append(text)
        self.message_values.append(shown)
        return len(self.messages)

    def function(self, name: str, fnty: ir.FunctionType) -> ir.Function:
        """The declared function ``name`` (declared on first use); an error if types disagree."""
        existing = self.module.globals.get(name)
        if existing is not None:
            if existing.function_type != fnty:
                raise CodegenError(f"'{name}' is called with two different signatures: "
                                   f"{existing.function_type} and {fnty}")
            return existing
        return ir.Function(self.module, fnty, name=name)

    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Type], overload: list[ir.Type]) -> ir.Function:
        """An LLVM intrinsic such as ``llvm.exp`` overloaded on ``overload`` (``llvm.exp.v8f32``)."""
        full = ".".join([name, *(type_suffix(t) for t in overload)])
        return self.function(full, ir.FunctionType(ret, args))

    def string(self, text: str) -> ir.GlobalVariable:
        """A private NUL-terminated string constant."""
        g = self._strings.get(text)
        if g is None:
            data = bytearray(text.encode("utf-8") + b"\0")
            g = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(data)), name=f".str{len(self._strings)}")
            g.global_constant = True
            g.linkage = "private"
            g.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
            g.type = PTR  # opaque pointer, as for allocas
            self._strings[text] = g
        return g

    def loop_id(self, hints: list[tuple[str, Any]]) -> _LoopID:
        """A loop-ID metadata node carrying ``llvm.loop.*`` hints."""
        ops = []
        for key, value in hints:
            items = [ir.MetaDataString(self.module, key)]
            if value is not None:
                items.append(ir.Constant(I1 if isinstance(value, bool) else I32, int(value)))
            ops.append(self.module.add_metadata(items))
        return _LoopID(self.module, ops, name=str(len(self.module.metadata)))

    def text(self) -> str:
        """The module's IR text; the module is taken apart afterwards (see ``_dismantle``)."""
        text = str(self.module)
        _dismantle(self.module)
        self._strings.clear()
        return text


def _dismantle(module: ir.Module) -> None:
    """Drop the references from llvmlite's containers to their parts (module to functions and
    metadata, function to blocks, arguments and return value, block to instructions, phi to its
    incoming values): each part points back at its container, so a printed module would otherwise be
    tens of thousands of objects in reference cycles that only the garbage collector frees."""
    for g in module.globals.values():
        if isinstance(g, ir.Function):
            for block in g.blocks:
                for instr in block.instructions:
                    if isinstance(instr, ir.PhiInstr):
                        instr.incomings = []
                block.instructions = []
                block.terminator = None
            g.blocks = []
            g.args = ()
            g.return_value = None
    module.globals.clear()
    module.metadata = []
    module.namedmetadata = {}
    getattr(module, "_metadatacache", {}).clear()
