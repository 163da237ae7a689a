"""Passes: IR -> IR transformations and the pass infrastructure (Sequential, PassContext, instruments).

PassContext config keys read here: ``"tvmlite.verify_each"`` (True: a Sequential checks
well-formedness after every pass; unset: off, as in TVM, unless ``$TVMLITE_VERIFY_EACH=1``) and
``"tvmlite.reproducer_dir"`` (where a failing pass's reproducer is written; default a new temp
dir, False for none).
"""
from .annotate_pattern import AnnotateTIROpPattern
from .canonicalize import CanonicalizeBindings
from .cse import EliminateCommonSubexpr
from .dataflow import ToNonDataflow
from .dead_code import DeadCodeElimination
from .fold_constant import FoldConstant
from .fold_scale_axis import FoldScaleAxis
from .fuse_ops import FuseOps
from .fuse_tir import FuseTIR
from .infra import (FunctionPass, IllFormedIRError, ModulePass, Pass, PassContext, PassError, PassInfo,
                    PipelineError, PrimFuncPass, PrintIR, Sequential, function_pass, get_pass, list_passes,
                    module_pass, prim_func_pass, register_pass, render_statistics)
from .inline_layout import InlineLayoutKernels
from .instrument import (DumpIR, PassInstrument, PassTimingInstrument, PrintAfterAll, PrintAfterChange,
                         PrintBeforeAll, VerifyEach, pass_instrument)
from .layout import AlterOpLayout, ConvertLayout, PackConv2d
from .legalize import LegalizeOps
from .pipeline import parse_pipeline
from .pipeline_registry import get_pipeline
from .schedule import DefaultCPUSchedule, Schedule, ScheduleError
from .simplify_inference import SimplifyInference
from .simplify_tir import Simplify
from .vm_lower import (AttachGlobalSymbol, CallTIRRewrite, KillAfterLastUse, LowerAllocTensor, LowerRuntimeBuiltin,
                       RemovePurityChecking, StaticPlanBlockMemory, VMBuiltinLower)
from .vm_lower import VMShapeLower
from .vm_lower import ComputePrimValue, RewriteDataflowReshape
from .winograd import WinogradConv2d

__all__ = [
    "PassInfo", "Pass", "ModulePass", "FunctionPass", "PrimFuncPass", "Sequential", "PassContext",
    "PassError", "IllFormedIRError", "PipelineError", "module_pass", "function_pass", "prim_func_pass",
    "PrintIR", "register_pass", "get_pass", "list_passes", "render_statistics", "parse_pipeline",
    "PassInstrument", "pass_instrument", "PrintBeforeAll", "PrintAfterAll", "PrintAfterChange", "DumpIR",
    "PassTimingInstrument", "VerifyEach", "WinogradConv2d", "DeadCodeElimination", "ToNonDataflow", "InlineLayoutKernels",
    "Schedule", "ScheduleError", "DefaultCPUSchedule",
    "RemovePurityChecking", "CallTIRRewrite", "StaticPlanBlockMemory", "LowerAllocTensor", "KillAfterLastUse",
    "VMBuiltinLower", "LowerRuntimeBuiltin", "AttachGlobalSymbol", "VMShapeLower",
    "RewriteDataflowReshape", "ComputePrimValue",
]
