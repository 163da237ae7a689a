"""Lowering of TIR towards code generation, each step a PrimFuncPass whose output prints
and re-parses: ``LowerBlocks`` (blocks to plain loops), ``FlattenBuffer`` (1-D accesses of flat
buffers), then ``Simplify``, ``LowerIntrinsics`` and ``VectorizeLoop`` (``T.vectorized`` loops as
vector statements); ``get_pipeline("lower")`` runs the five in that order."""
from .blocks import LowerBlocks, lower_blocks
from .flatten import FlattenBuffer, flat_offset, flatten_buffers
from .intrinsics import LowerIntrinsics, lower_intrinsics
from .prefetch import InjectPrefetch, inject_prefetch
from .vectorize import VectorizeLoop, vectorize_loops

__all__ = ["LowerBlocks", "FlattenBuffer", "LowerIntrinsics", "VectorizeLoop", "vectorize_loops", "lower_blocks", "flatten_buffers",
           "flat_offset", "lower_intrinsics", "InjectPrefetch", "inject_prefetch"]
