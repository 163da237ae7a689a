"""The IR: node classes for both dialects (``tir``, ``relax``), modules, the op registry,
traversal and structural comparison."""
from . import relax, tir
from .functor import Mutator, Visitor, post_order_visit
from .module import GlobalVar, IRModule
from .node import Map, Node, Span
from .op import OpPattern, get_op, list_ops, make_call
from .relax import Op
from .structural import assert_structural_equal, structural_equal, structural_hash
# Imported eagerly: a later `import tvmlite.ir.well_formed` would otherwise replace the function
# attribute `well_formed` of this package by the submodule of the same name.
from .well_formed import well_formed, well_formed_errors

__all__ = ["relax", "tir", "IRModule", "GlobalVar", "Node", "Span", "Map", "Visitor", "Mutator",
           "post_order_visit", "structural_equal", "assert_structural_equal", "structural_hash",
           "well_formed", "well_formed_errors", "Op", "get_op", "list_ops", "make_call", "OpPattern"]
