"""The stages of a compilation: the module after every pass ``tvmlite.compile`` runs, then the
generated LLVM IR and assembly, each with its text, the text its pass started from, its time
and statistics.

Passes are captured generically, by a pass instrument in the PassContext the compilation runs
under: any pass the compiler runs (a pipeline added later included) becomes a stage without
code for it here."""
from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from typing import Any

from ..ir import relax as rx
from ..ir import tir
from ..ir.expr_functor import ExprVisitor
from ..ir.module import IRModule
from ..ir.stmt_functor import StmtExprVisitor
from ..passes.infra import PassContext, PassError, PassInfo
from ..passes.instrument import PassInstrument

__all__ = ["Stage", "StageRecorder", "capture_stages", "module_statistics", "stage_statistics", "changed_lines"]


@dataclass
class Stage:
    """One step of the compilation and what it produced."""

    name: str  # "input", the pass name, "LLVM IR", "assembly"
    group: str  # the pipeline it belongs to ("relax_pipeline", "tir_pipeline", "codegen"...)
    kind: str  # "tvmscript", "llvm" or "asm": how the text is highlighted
    text: str
    before: str | None = None  # the text the pass was given (None: nothing to diff against)
    input_stage: int | None = None  # the earlier stage whose text is ``before``, when there is one
    seconds: float | None = None
    depth: int = 0  # passes a pass runs itself are nested one deeper
    module: IRModule | None = None
    counters: dict[str, int] = field(default_factory=dict)  # what the pass recorded in ctx.stats
    error: str | None = None
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when the pass changed the text it was given."""
        return self.before is not None and self.before != self.text


def _text(mod: IRModule) -> str:
    text = mod.script()
    return text if text.endswith("\n") else text + "\n"


class _Frame:
    """A pass run in progress: its input text, its counters so far, when it started."""

    __slots__ = ("info", "before", "start", "counters")

    def __init__(self, info: PassInfo, before: str | None, counters: dict[str, int]) -> None:
        self.info = info
        self.before = before
        self.counters = counters
        self.start = time.perf_counter()


class StageRecorder(PassInstrument):
    """Records the output text and time of every pass run (containers only name the group)."""

    def __init__(self) -> None:
        self.stages: list[Stage] = []
        self._stack: list[_Frame] = []
        self._last: tuple[IRModule, str] | None = None  # the last output and its text: the next input
        self._ctx: PassContext | None = None

    def enter_pass_ctx(self) -> None:
        self._ctx = PassContext.current()

    def add(self, stage: Stage) -> None:
        """Append a stage, noting which earlier stage printed the text it started from."""
        if stage.before is not None:
            for i in range(len(self.stages) - 1, -1, -1):
                if self.stages[i].text == stage.before:
                    stage.input_stage = i
                    break
        self.stages.append(stage)
        if stage.module is not None:
            self._last = (stage.module, stage.text)

    def _input_text(self, mod: IRModule) -> str:
        # The next pass is usually given the previous one's output: print it once.
        if self._last is not None and self._last[0] is mod:
            return self._last[1]
        return _text(mod)

    def _counters(self, info: PassInfo) -> dict[str, int]:
        stats = self._ctx.stats if self._ctx is not None else {}
        return dict(stats.get(info.name, {}))

    def _group(self) -> str:
        names = [f.info.name for f in self._stack if f.info.kind == "sequential"]
        return names[0] if names else ""

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        if info.kind == "sequential":
            self._stack.append(_Frame(info, None, {}))
            return
        before = self._input_text(mod)
        self._stack.append(_Frame(info, before, self._counters(info)))
        self._stack[-1].start = time.perf_counter()  # printing the input is not the pass's time

    def _depth(self) -> int:
        return sum(1 for f in self._stack if f.info.kind != "sequential")

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        frame = self._stack[-1]
        seconds = time.perf_counter() - frame.start
        if info.kind == "sequential":
            self._stack.pop()
            return
        depth = self._depth() - 1
        group = self._group() or info.name
        self._stack.pop()
        after = self._counters(info)
        counters = {k: v - frame.counters.get(k, 0) for k, v in after.items() if v != frame.counters.get(k, 0)}
        self.add(Stage(info.name, group, "tvmscript", _text(mod), frame.before, seconds=seconds,
                       depth=depth, module=mod, counters=counters))

    def run_after_failure(self, mod: IRModule, info: PassInfo, error: BaseException) -> None:
        frame = self._stack[-1]
        seconds = time.perf_counter() - frame.start
        depth = self._depth() - 1
        group = self._group() or info.name
        self._stack.pop()
        if info.kind == "sequential" or isinstance(error, PassError):
            return  # the failing pass inside it was recorded already
        self.add(Stage(info.name, group, "tvmscript", frame.before or "", frame.before, seconds=seconds,
                       depth=depth, error=f"{type(error).__name__}: {error}"))


def capture_stages(mod: IRModule, *, target: Any = "llvm", relax_pipeline: Any = "zero",
                   tir_pipeline: Any = "default_tir", inline_layout: bool = True) -> tuple[list[Stage], str | None]:
    """Compile ``mod`` as ``tvmlite.compile`` does and return its stages and the error that
    stopped it (None when it compiled)."""
    from ..backend.compile import compile as compile_module

    recorder = StageRecorder()
    recorder.add(Stage("input", "input", "tvmscript", _text(mod), module=mod))
    error = None
    start = time.perf_counter()
    ex = None
    # The recorder joins the context the caller compiles under (its opt level, disabled passes,
    # config and instruments stay in force) for this compilation only.
    ctx = PassContext.current()
    ctx.instruments.append(recorder)
    recorder.enter_pass_ctx()
    try:
        ex = compile_module(mod, target, relax_pipeline=relax_pipeline, tir_pipeline=tir_pipeline,
                            inline_layout=inline_layout)
    except Exception as err:  # noqa: BLE001 - the page shows how far compilation went
        error = f"{type(err).__name__}: {err}"
    finally:
        recorder.exit_pass_ctx()
        ctx.instruments.remove(recorder)
    total = time.perf_counter() - start
    stages = recorder.stages
    if ex is not None and hasattr(ex.kernels, "get_source"):
        # Code generation is no pass: its time is what the passes leave of the compilation.
        passes = sum(s.seconds or 0.0 for s in stages if s.depth == 0)
        stages.append(Stage("LLVM IR", "codegen", "llvm", _ends_in_newline(ex.get_source("ll")),
                            seconds=max(0.0, total - passes)))
        begin = time.perf_counter()
        optimized = _ends_in_newline(ex.get_source("ll", optimized=True))
        stages.append(Stage("LLVM IR (optimized)", "codegen", "llvm", optimized, stages[-1].text,
                            input_stage=len(stages) - 1, seconds=time.perf_counter() - begin))
        begin = time.perf_counter()
        stages.append(Stage("assembly", "codegen", "asm", _ends_in_newline(ex.get_source("asm")),
                            seconds=time.perf_counter() - begin))
    for stage in stages:
        stage.stats = stage_statistics(stage)
    return stages, error


def _ends_in_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def changed_lines(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines removed) from ``before`` to ``after``."""
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


class _RelaxCounter(ExprVisitor):
    def __init__(self) -> None:
        self.bindings = self.op_calls = self.call_tir = 0

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        self.bindings += 1
        super().visit_var_binding_(binding)

    def visit_match_cast_(self, binding: rx.MatchCast) -> None:
        self.bindings += 1
        super().visit_match_cast_(binding)

    def visit_call_(self, call: rx.Call) -> None:
        if isinstance(call.op, rx.Op):
            self.op_calls += 1
            self.call_tir += call.op.name.startswith("relax.call_tir")
        super().visit_call_(call)


class _LoopCounter(StmtExprVisitor):
    def __init__(self) -> None:
        self.blocks = self.loops = self.vector_loops = self.parallel_loops = 0

    def visit_expr(self, expr: tir.PrimExpr) -> None:
        """Expressions hold no statements (loops and blocks are all this counts)."""

    def visit_block_(self, block: tir.Block) -> None:
        self.blocks += block.name_hint != "root"
        super().visit_block_(block)

    def visit_for_(self, loop: tir.For) -> None:
        self.loops += 1
        kind = str(loop.kind)
        self.vector_loops += "vectorized" in kind
        self.parallel_loops += "parallel" in kind
        super().visit_for_(loop)


def module_statistics(mod: IRModule) -> dict[str, int]:
    """Counts of a module: Relax functions, bindings, op calls, PrimFuncs, blocks, loops."""
    relax = _RelaxCounter()
    loops = _LoopCounter()
    n_relax = n_prim = 0
    for _, func in mod.functions_items():
        if isinstance(func, rx.Function):
            n_relax += 1
            relax.visit_expr(func)
        elif isinstance(func, tir.PrimFunc):
            n_prim += 1
            loops.visit_stmt(func.body)
    return {"Relax functions": n_relax, "bindings": relax.bindings, "op calls": relax.op_calls,
            "call_tir": relax.call_tir, "PrimFuncs": n_prim, "blocks": loops.blocks, "loops": loops.loops,
            "vectorized loops": loops.vector_loops, "parallel loops": loops.parallel_loops}


def stage_statistics(stage: Stage) -> dict[str, int]:
    """A stage's numbers: the module's counts, or the generated code's, and the lines changed."""
    stats: dict[str, int] = {"lines": stage.text.count("\n")}
    if stage.module is not None:
        stats.update(module_statistics(stage.module))
    elif stage.kind == "llvm":
        stats["functions"] = sum(1 for line in stage.text.splitlines() if line.startswith("define "))
    elif stage.kind == "asm":
        lines = stage.text.splitlines()
        stats["functions"] = sum(1 for line in lines if line.startswith("\t.type") and "@function" in line)
        stats["instructions"] = sum(1 for line in lines if line.startswith("\t") and not line.startswith("\t."))
    if stage.before is not None:
        stats["lines added"], stats["lines removed"] = changed_lines(stage.before, stage.text)
    return stats
