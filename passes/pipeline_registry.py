"""Named pipelines (TVM's ``relax.get_pipeline``): ``get_pipeline("zero")`` and
``get_pipeline("default")`` return a ``Sequential`` of the built-in passes.

- ``zero``: LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR (TVM's zero
  pipeline): every op becomes a PrimFunc, constants fold, and fusable calls merge.
- ``lower``: LowerBlocks, FlattenBuffer, Simplify, LowerIntrinsics, VectorizeLoop, InjectPrefetch: PrimFuncs
  of blocks become the flat, block-free loops code generation takes.
- ``default_tir``: DefaultCPUSchedule (the default CPU schedule, on every PrimFunc not already
  scheduled), then ``lower``: what ``tvmlite.compile`` runs on the PrimFuncs.
- ``vm_lower``: RewriteDataflowReshape, ToNonDataflow, RemovePurityChecking, CallTIRRewrite,
  StaticPlanBlockMemory, LowerAllocTensor, KillAfterLastUse, VMBuiltinLower, ComputePrimValue,
  VMShapeLower, AttachGlobalSymbol (TVM's
  default build after LegalizeOps): explicit storages, planned and killed, and the shape heap's
  checks, as the VM runs them.
- ``default``: the graph-level clean-ups first (CanonicalizeBindings, SimplifyInference,
  PackConv2d, FoldConstant, FoldScaleAxis, WinogradConv2d, EliminateCommonSubexpr, DeadCodeElimination), then the
  zero pipeline,
  then TIR Simplify and a last DeadCodeElimination. PackConv2d puts float convolutions in packed
  layouts (NCHW16c) for the default CPU schedule's packed-convolution rule. Each pass keeps its
  own opt_level, so EliminateCommonSubexpr runs only under ``PassContext(opt_level=3)``.

The names are registered passes too, so ``tvmlite opt FILE --passes zero`` works and
``str(get_pipeline("zero")) == "zero"`` reads back as the same pipeline.
"""
from __future__ import annotations

from functools import partial
from typing import Callable

from .annotate_pattern import AnnotateTIROpPattern
from .canonicalize import CanonicalizeBindings
from .cse import EliminateCommonSubexpr
from .dead_code import DeadCodeElimination
from .fold_constant import FoldConstant
from .fold_scale_axis import FoldScaleAxis
from .fuse_ops import FuseOps
from .fuse_tir import FuseTIR
from .infra import Pass, PipelineError, Sequential, register_pass
from .layout import PackConv2d
from .legalize import LegalizeOps
from .lower import FlattenBuffer, InjectPrefetch, LowerBlocks, LowerIntrinsics, VectorizeLoop
from .simplify_inference import SimplifyInference
from .simplify_tir import Simplify
from .dataflow import ToNonDataflow
from .winograd import WinogradConv2d
from .vm_lower import (AttachGlobalSymbol, CallTIRRewrite, KillAfterLastUse, LowerAllocTensor, RemovePurityChecking,
                       RewriteDataflowReshape, StaticPlanBlockMemory, VMBuiltinLower, VMShapeLower)
from .vm_lower import ComputePrimValue

__all__ = ["get_pipeline", "list_pipelines", "NamedPipeline"]


class NamedPipeline(Sequential):
    """A Sequential registered under a name: ``str()`` is that name, so a textual pipeline that
    contains it (``"zero,DeadCodeElimination"``) prints back as written."""

    def __str__(self) -> str:
        return self.info.name

    def __repr__(self) -> str:
        return f"<NamedPipeline {self.info.name}: {Sequential.__str__(self)}>"


def _zero() -> list[Pass]:
    """TVM's zero pipeline."""
    return [LegalizeOps(), AnnotateTIROpPattern(), FoldConstant(), FuseOps(), FuseTIR()]


def _default() -> list[Pass]:
    """Clean up and fold on the graph, then lower, fuse and simplify the loops."""
    return [
        CanonicalizeBindings(),
        SimplifyInference(),
        PackConv2d(),  # before folding: the packed weights and batch-norm scales become constants
        FoldConstant(),  # before lowering: batch-norm scales and other constant arithmetic
        FoldScaleAxis(),  # the folded scales into the conv weights before them
        WinogradConv2d(),  # after the weights are final constants: U = G W G^T folds once
        EliminateCommonSubexpr(),
        DeadCodeElimination(),
        *_zero(),
        Simplify(),
        DeadCodeElimination(),
    ]


def _lower() -> list[Pass]:
    """Blocks to flat loops for code generation."""
    return [LowerBlocks(), FlattenBuffer(), Simplify(), LowerIntrinsics(), VectorizeLoop(), InjectPrefetch()]


def _default_tir() -> list[Pass]:
    """Schedule for the CPU, then lower."""
    from .schedule.default_cpu import DefaultCPUSchedule  # the schedule package imports this module's peers

    return [DefaultCPUSchedule(), *_lower()]


def _vm_lower() -> list[Pass]:
    """TVM's default build between the graph pipeline and the VM."""
    return [RewriteDataflowReshape(), ToNonDataflow(), RemovePurityChecking(), CallTIRRewrite(),
            StaticPlanBlockMemory(), LowerAllocTensor(), KillAfterLastUse(), VMBuiltinLower(), ComputePrimValue(),
            VMShapeLower(), AttachGlobalSymbol()]


_PIPELINES: dict[str, Callable[[], list[Pass]]] = {"zero": _zero, "default": _default, "lower": _lower,
                                                   "default_tir": _default_tir, "vm_lower": _vm_lower}


def list_pipelines() -> list[str]:
    """The names ``get_pipeline`` accepts."""
    return list(_PIPELINES)


def get_pipeline(name: str = "zero") -> Sequential:
    """A new Sequential of the named pipeline; PipelineError listing the pipelines when unknown."""
    make = _PIPELINES.get(name)
    if make is None:
        raise PipelineError(f"unknown pipeline {name!r} (pipelines: {', '.join(_PIPELINES)})")
    return NamedPipeline(make(), name=name)


for _name in _PIPELINES:
    register_pass(_name, partial(get_pipeline, _name))  # no options: the factory takes no arguments
