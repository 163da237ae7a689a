"""The end of TVM's Relax build, by TVM's pass names: what the VM runs, as text.

``get_pipeline("vm_lower")`` runs RewriteDataflowReshape, ToNonDataflow, RemovePurityChecking,
CallTIRRewrite, StaticPlanBlockMemory, LowerAllocTensor, KillAfterLastUse, VMBuiltinLower,
ComputePrimValue, VMShapeLower and AttachGlobalSymbol, in the order of TVM's default build. Each
pass prints text that parses back to the same module."""
from .builtin_lower import AttachGlobalSymbol, LowerRuntimeBuiltin, VMBuiltinLower
from .call_tir_rewrite import CallTIRRewrite
from .compute_prim_value import ComputePrimValue
from .kill import KillAfterLastUse
from .lower_alloc import LowerAllocTensor
from .purity import RemovePurityChecking
from .rewrite_reshape import RewriteDataflowReshape
from .shape_lower import VMShapeLower
from .static_plan import StaticPlanBlockMemory

__all__ = ["RemovePurityChecking", "CallTIRRewrite", "StaticPlanBlockMemory", "LowerAllocTensor",
           "KillAfterLastUse", "VMBuiltinLower", "LowerRuntimeBuiltin", "AttachGlobalSymbol", "VMShapeLower",
           "RewriteDataflowReshape", "ComputePrimValue"]
