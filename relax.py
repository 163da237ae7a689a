"""``tvmlite.relax``: the Python API of the graph-level IR, as ``tvm.relax`` spells it.

Node classes and struct infos (their constructors accept Python values: ``Var("x",
TensorStructInfo((1, 784), "float32"))``, ``Call(op, [x])``), ``const``, ``BlockBuilder``,
``op`` (``op.add``, ``op.nn.relu``...), the expression functors (``ExprVisitor``,
``ExprMutator`` and the ``PyExpr*``/``@visitor``/``@mutator`` spellings) and ``analysis``.
Everything here is defined in :mod:`tvmlite.ir`; this module only gathers it."""
from __future__ import annotations

import sys
import types

import tvmlite.te  # noqa: F401  (sets BlockBuilder.call_te, so relax.BlockBuilder().emit_te works)
from tvmlite.ir import expr_functor, tir, well_formed
from tvmlite.ir import global_info as _global_info
from tvmlite.ir.block_builder import BlockBuilder
from tvmlite.ir.expr_functor import (ExprMutator, ExprVisitor, PyExprMutator, PyExprVisitor, mutator,
                                     visitor)
from tvmlite.ir.module import GlobalVar, IRModule
from tvmlite.ir.op_api import (BindingBlock, Call, DataflowBlock, DataflowVar, ExternFunc, FuncStructInfo,
                               Function, If, PrimStructInfo, PrimValue, SeqExpr, ShapeExpr, ShapeStructInfo,
                               TensorStructInfo, Tuple, TupleGetItem, TupleStructInfo, Var, const, op)
from tvmlite.ir.relax import (Binding, Constant, DataTypeImm, DTensorStructInfo, Expr, MatchCast, ObjectStructInfo, Op,
                              StringImm, StructInfo, VarBinding)

# ``relax.analysis`` is a module in TVM; registered so ``from tvmlite.relax.analysis import ...`` works.
analysis = types.ModuleType("tvmlite.relax.analysis", "Analyses of Relax functions.")
analysis.remove_all_unused = expr_functor.remove_all_unused  # type: ignore[attr-defined]
analysis.post_order_visit = expr_functor.post_order_visit  # type: ignore[attr-defined]
analysis.well_formed = well_formed  # type: ignore[attr-defined]
sys.modules.setdefault(analysis.__name__, analysis)


def _device_mesh(shape: tuple | list, device_ids: list | range | tir.Range) -> _global_info.DeviceMesh:
    """``DeviceMesh(shape, device_ids)`` as TVM takes it: ids as a list or a ``Range(begin, end)``."""
    if isinstance(device_ids, tir.Range):
        begin = int(device_ids.min.value)  # type: ignore[attr-defined]
        return _global_info.DeviceMesh.from_range(tuple(shape), begin, begin + int(device_ids.extent.value))  # type: ignore[attr-defined]
    if isinstance(device_ids, range) and device_ids.step == 1:
        return _global_info.DeviceMesh.from_range(tuple(shape), device_ids.start, device_ids.stop)
    return _global_info.DeviceMesh(tuple(shape), tuple(int(i) for i in device_ids))


# ``relax.distributed`` is a package in TVM (``from tvm.relax.distributed import DeviceMesh, ...``).
distributed = types.ModuleType("tvmlite.relax.distributed", "Relax's distributed tensors: meshes and placements.")
distributed.DeviceMesh = _device_mesh  # type: ignore[attr-defined]
distributed.Placement = _global_info.Placement  # type: ignore[attr-defined]
distributed.PlacementSpec = _global_info.PlacementSpec  # type: ignore[attr-defined]
distributed.DTensorStructInfo = DTensorStructInfo  # type: ignore[attr-defined]
sys.modules.setdefault(distributed.__name__, distributed)
# TVM's custom-pass examples import ``from tvm.relax.expr_functor import PyExprMutator, mutator``.
sys.modules.setdefault("tvmlite.relax.expr_functor", expr_functor)

__all__ = [
    "Expr", "Var", "DataflowVar", "Constant", "ShapeExpr", "PrimValue", "StringImm", "DataTypeImm",
    "Tuple", "TupleGetItem", "Call", "If", "SeqExpr", "Function", "ExternFunc", "Op", "GlobalVar",
    "Binding", "VarBinding", "MatchCast", "BindingBlock", "DataflowBlock",
    "StructInfo", "ObjectStructInfo", "PrimStructInfo", "ShapeStructInfo", "TensorStructInfo",
    "TupleStructInfo", "FuncStructInfo", "DTensorStructInfo", "IRModule",
    "const", "BlockBuilder", "op", "analysis", "distributed", "expr_functor",
    "ExprVisitor", "ExprMutator", "PyExprVisitor", "PyExprMutator", "visitor", "mutator",
]


def __getattr__(name: str):  # noqa: ANN202 - module attribute hook
    """``relax.VirtualMachine``, ``relax.build`` and ``relax.frontend`` as the seeds write them (loaded on first use,
    so importing ``tvmlite.relax`` does not load llvmlite)."""
    if name == "VirtualMachine":
        from tvmlite.backend.vm import VirtualMachine

        return VirtualMachine
    if name == "build":
        from tvmlite.backend.compile import build

        return build
    if name == "frontend":  # TVM's PyTorch import flow calls relax.frontend.detach_params
        import tvmlite.frontend

        return tvmlite.frontend
    raise AttributeError(f"module 'tvmlite.relax' has no attribute {name!r}")
