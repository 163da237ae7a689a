"""The record of a schedule: each primitive call, printed as a Python function that replays it.

``print(sch.trace)`` shows, as TVM does::

    # from tvmlite import tir
    def apply_trace(sch: tir.Schedule) -> None:
      b0 = sch.get_block(name="C", func_name="main")
      l1, l2, l3 = sch.get_loops(block=b0)
      l4, l5 = sch.split(loop=l1, factors=[None, 32], preserve_unit_iters=True, disable_predication=False)

``trace.apply_to_schedule(sch)`` (or running that text) repeats the steps on another schedule."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...ir import tir
from ...ir.arith import IndexMap, format_expr
from .state import _RV

__all__ = ["Instruction", "Trace"]


@dataclass(frozen=True)
class Instruction:
    """One primitive call: ``outputs = sch.<kind>(*inputs, **attrs)``; ``unpack`` says whether the
    outputs are a list (``l1, l2 = ...``) rather than a single value."""

    kind: str
    inputs: tuple[Any, ...]
    attrs: tuple[tuple[str, Any], ...]
    outputs: tuple[_RV, ...] = ()
    unpack: bool = False

    def as_python(self) -> str:
        """The call as one line of Python."""
        args = [_format(v) for v in self.inputs] + [f"{k}={_format(v)}" for k, v in self.attrs]
        call = f"sch.{self.kind}({', '.join(args)})"
        if not self.outputs and not self.unpack:
            return call
        if not self.outputs:  # e.g. get_loops of a block with no loop
            return f"_ = {call}"
        names = ", ".join(o.name for o in self.outputs)
        return f"{names}{',' if self.unpack and len(self.outputs) == 1 else ''} = {call}"


def _format(value: Any) -> str:
    """A value as Python source: schedule variables by name, strings quoted, lists bracketed."""
    if isinstance(value, _RV):
        return value.name
    if isinstance(value, list):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_format(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, IndexMap):
        names = ", ".join(v.name for v in value.initial_indices)
        outs = ", ".join(format_expr(e) for e in value.final_indices)
        return f"lambda {names}: ({outs}{',' if len(value.final_indices) == 1 else ''})"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_format(k)}: {_format(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tir.PrimExpr):
        return f"T.{value.dtype}({format_expr(value)})" if isinstance(value, tir.IntImm) else format_expr(value)
    return repr(value)


class Trace:
    """The primitives applied so far, in order."""

    def __init__(self, insts: list[Instruction] | None = None) -> None:
        self.insts: list[Instruction] = list(insts or [])

    def append(self, inst: Instruction) -> None:
        """Record one more primitive call."""
        self.insts.append(inst)

    def as_python(self) -> list[str]:
        """The calls, one line each."""
        return [inst.as_python() for inst in self.insts]

    def __str__(self) -> str:
        body = self.as_python() or ["pass"]
        return "\n".join(["# from tvmlite import tir", "def apply_trace(sch: tir.Schedule) -> None:",
                          *("  " + line for line in body)])

    def __repr__(self) -> str:
        return str(self)

    def show(self) -> None:
        """Print the trace."""
        print(str(self))

    def __len__(self) -> int:
        return len(self.insts)

    def apply_to_schedule(self, sch: Any) -> None:
        """Replay the steps on ``sch`` (a Schedule of an equivalent module)."""
        env: dict[str, Any] = {}

        def resolve(v: Any) -> Any:
            if isinstance(v, _RV):
                return env[v.name]
            if isinstance(v, list):
                return [resolve(x) for x in v]
            if isinstance(v, tuple):
                return tuple(resolve(x) for x in v)
            return v

        for inst in self.insts:
            out = getattr(sch, inst.kind)(*[resolve(v) for v in inst.inputs],
                                          **{k: resolve(v) for k, v in inst.attrs})
            outs = list(out) if inst.unpack else ([out] if inst.outputs else [])
            for old, new in zip(inst.outputs, outs):
                env[old.name] = new

