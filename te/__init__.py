"""``tvmlite.te``: tensor expressions, as ``tvm.te`` spells them.

Describe a tensor program as computes over index variables (``placeholder``, ``compute``,
``reduce_axis``, ``sum``/``max``/``min``/``comm_reducer``, ``if_then_else``, math functions),
turn it into TIR with ``create_prim_func``, or run it on numpy arrays with ``evaluate``."""
from __future__ import annotations

from .create import create_prim_func
from .evaluate import evaluate, evaluate_prim_func
from .expr import (UNARY_INTRINSICS, Expr, abs, all, any, as_prim, call_intrin, cast, ceildiv, const, floordiv,
                   floormod, if_then_else, logical_not, max_value, min_value, power, select, sign, truncdiv,
                   truncmod)
from . import call_te as _call_te  # noqa: F401  (sets BlockBuilder.call_te)
from . import expr as _expr
from . import tensor_arith as _tensor_arith  # noqa: F401  (gives te.Tensor its operators)
from .tensor import (Axis, CommReducer, ComputeOp, PlaceholderOp, Reduce, Tensor, comm_reducer, compute,
                     index_dtype, max, min, placeholder, prod, reduce_axis, size_var, sum, var)

__all__ = [
    "Tensor", "Axis", "Expr", "PlaceholderOp", "ComputeOp", "Reduce", "CommReducer", "placeholder", "compute",
    "reduce_axis", "comm_reducer", "sum", "max", "min", "prod", "var", "size_var", "index_dtype", "const",
    "cast", "if_then_else", "select", "all", "any", "logical_not", "max_value", "min_value", "abs", "sign",
    "power", "truncdiv", "truncmod", "floordiv", "floormod", "ceildiv", "call_intrin", "as_prim",
    "create_prim_func", "evaluate", "evaluate_prim_func", "UNARY_INTRINSICS",
]
# The math intrinsics (te.exp ...: tir.<name> calls), generated from ir/intrinsics.py's table.
globals().update({_name: getattr(_expr, _name) for _name in _expr.INTRINSIC_FUNCTIONS})
__all__ += list(_expr.INTRINSIC_FUNCTIONS)
