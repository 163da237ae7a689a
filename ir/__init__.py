"""The IR: node classes for both dialects (``tir``, ``relax``), modules, the op registry,
traversal and structural comparison."""
from . import relax, tir
from .functor import Mutator, Visitor, post_order_visit
from .module import GlobalVar, IRModule
from .node import Map, Node, Span
from .op import OpPattern, get_op, list_ops, make_call
from .structural import assert_structural_equal, structural_equal, structural_hash

__all__ = ["relax", "tir", "IRModule", "GlobalVar", "Node", "Span", "Map", "Visitor", "Mutator",
           "post_order_visit", "structural_equal", "assert_structural_equal", "structural_hash",
           "well_formed", "get_op", "list_ops", "make_call", "OpPattern"]


def well_formed(obj, check_struct_info: bool = True):  # noqa: ANN001, ANN201
    """True when ``obj`` (an IRModule or function) is well formed; see ``tvmlite.ir.analysis``."""
    from .well_formed import well_formed as _wf

    return _wf(obj, check_struct_info=check_struct_info)
