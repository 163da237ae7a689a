"""Lowering of TIR towards code generation (issue 5), each step a PrimFuncPass whose output prints
and re-parses: ``LowerBlocks`` (blocks to plain loops), ``FlattenBuffer`` (1-D accesses of flat
buffers), then ``Simplify`` and ``LowerIntrinsics``; ``get_pipeline("lower")`` runs the four in
that order."""
from .blocks import LowerBlocks, lower_blocks
from .flatten import FlattenBuffer, flat_offset, flatten_buffers
from .intrinsics import LIBM_FUNCTIONS, LLVM_INTRINSICS, LowerIntrinsics, lower_intrinsics

__all__ = ["LowerBlocks", "FlattenBuffer", "LowerIntrinsics", "lower_blocks", "flatten_buffers",
           "flat_offset", "lower_intrinsics", "LLVM_INTRINSICS", "LIBM_FUNCTIONS"]
