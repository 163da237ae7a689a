"""Graph-level IR (Relax): struct info (types with shapes), expressions, bindings, functions."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import tir
from .dtype import from_numpy_dtype
from .global_info import DeviceMesh, Placement
from .node import Map, Node, node

__all__ = [
    "StructInfo", "ObjectStructInfo", "PrimStructInfo", "ShapeStructInfo", "TensorStructInfo",
    "TupleStructInfo", "FuncStructInfo", "DTensorStructInfo", "Expr", "Var", "DataflowVar", "Constant", "ShapeExpr",
    "PrimValue", "StringImm", "DataTypeImm", "Tuple", "TupleGetItem", "Call", "If", "SeqExpr",
    "Function", "ExternFunc", "Op", "Binding", "VarBinding", "MatchCast", "BindingBlock",
    "DataflowBlock",
]


# ---------------------------------------------------------------- struct info
class StructInfo(Node):
    """What is statically known about a Relax value (its type, with shapes)."""

    __slots__ = ()


@node
class ObjectStructInfo(StructInfo):
    """Any value (``R.Object``)."""


@node
class PrimStructInfo(StructInfo):
    """A scalar (``R.Prim("int64")`` or ``R.Prim(value=n)``)."""

    dtype: str
    value: tir.PrimExpr | None = None


@node
class ShapeStructInfo(StructInfo):
    """A shape value: known ``values`` or only ``ndim`` (-1: unknown)."""

    values: tuple[tir.PrimExpr, ...] | None = None
    ndim: int = -1


@node
class TensorStructInfo(StructInfo):
    """A tensor: ``shape`` (PrimExprs, or None when unknown), ``dtype`` ("void": unknown), ``ndim``."""

    shape: tuple[tir.PrimExpr, ...] | None = None
    dtype: str = "void"
    ndim: int = -1
    vdevice: str | None = None

    def __post_init__(self) -> None:
        if self.shape is not None and self.ndim != len(self.shape):
            object.__setattr__(self, "ndim", len(self.shape))


@node
class DTensorStructInfo(StructInfo):
    """A distributed tensor (``R.DTensor``): the whole tensor's struct info, the device mesh it is
    spread over and its placement there (one spec per mesh dimension)."""

    tensor_sinfo: TensorStructInfo
    device_mesh: DeviceMesh
    placement: Placement

    def __post_init__(self) -> None:
        # TVM's checks when a DTensor struct info is made, in its words.
        if len(self.placement.specs) != len(self.device_mesh.shape):
            raise ValueError(f"the device mesh and the placement must have the same number of dimensions: "
                             f"the mesh has {len(self.device_mesh.shape)}, the placement "
                             f"'{self.placement.text()}' {len(self.placement.specs)}")
        ndim = self.tensor_sinfo.ndim
        for spec in self.placement.specs:
            if spec.axis is not None and ndim == -1:
                raise ValueError(f"placement '{self.placement.text()}' shards a tensor of unknown rank "
                                 f"(give its shape or ndim)")
            if spec.axis is not None and spec.axis >= ndim:
                raise ValueError(f"the sharding axis {spec.axis} of placement '{self.placement.text()}' must be "
                                 f"smaller than the tensor's {ndim} dimensions")


@node
class TupleStructInfo(StructInfo):
    fields: tuple[StructInfo, ...] = ()


@node
class FuncStructInfo(StructInfo):
    """A callable: ``params`` (None: unknown), ``ret`` and purity."""

    params: tuple[StructInfo, ...] | None
    ret: StructInfo
    purity: bool = True


# ---------------------------------------------------------------- expressions
class Expr(Node):
    """A Relax expression.  ``struct_info`` is filled by inference (the parser, BlockBuilder)."""

    __slots__ = ()
    struct_info: StructInfo | None


@node
class Var(Expr):
    """A variable bound by a parameter or a binding; identity matters."""

    name_hint: str
    struct_info: StructInfo | None = None


@node
class DataflowVar(Var):
    """A variable visible only inside its dataflow block."""


@node
class Constant(Expr):
    """A tensor constant; ``data`` is a numpy array (never mutated)."""

    data: np.ndarray
    struct_info: StructInfo | None = None

    def __post_init__(self) -> None:
        if self.struct_info is None:
            shape = tuple(tir.IntImm("int64", int(d)) for d in self.data.shape)
            object.__setattr__(self, "struct_info",
                               TensorStructInfo(shape, from_numpy_dtype(self.data.dtype)))


@node
class ShapeExpr(Expr):
    values: tuple[tir.PrimExpr, ...]
    struct_info: StructInfo | None = None


@node
class PrimValue(Expr):
    value: tir.PrimExpr
    struct_info: StructInfo | None = None


@node
class StringImm(Expr):
    value: str
    struct_info: StructInfo | None = None


@node
class DataTypeImm(Expr):
    value: str
    struct_info: StructInfo | None = None


@node
class Tuple(Expr):
    fields: tuple[Expr, ...]
    struct_info: StructInfo | None = None


@node
class TupleGetItem(Expr):
    tuple_value: Expr
    index: int
    struct_info: StructInfo | None = None


@node
class Op(Expr):
    """A registered operator (``relax.add``); one object per name, see :mod:`tvmlite.ir.op`."""

    name: str
    struct_info: StructInfo | None = None

    @staticmethod
    def get(name: str) -> "Op":
        """The registered op ``name`` (``Op.get("relax.add")``, as in TVM); KeyError when unknown."""
        return _OP_NODES[name]

    @staticmethod
    def register(name: str) -> "Op":
        """The one Op node of ``name``, made on first use (the op registry calls this)."""
        op = _OP_NODES.get(name)
        if op is None:
            op = _OP_NODES[name] = Op(name)
        return op


# name -> the one Op node of that name (``Op.register``), so ``Op.get`` needs no registry import.
_OP_NODES: dict[str, Op] = {}


@node
class ExternFunc(Expr):
    """A function provided by the runtime, called by symbol name."""

    global_symbol: str
    struct_info: StructInfo | None = None


@node
class Call(Expr):
    """A call of an Op, a GlobalVar, a Var or an ExternFunc, with op attributes and sinfo_args."""

    op: Any
    args: tuple[Expr, ...]
    attrs: Map = Map()
    sinfo_args: tuple[StructInfo, ...] = ()
    struct_info: StructInfo | None = None


class Binding(Node):
    __slots__ = ()
    var: Var


@node
class VarBinding(Binding):
    var: Var
    value: Expr


@node
class MatchCast(Binding):
    """Bind ``var`` to ``value`` after checking it against ``struct_info`` (defines new symbolic vars)."""

    var: Var
    value: Expr
    struct_info: StructInfo


@node
class BindingBlock(Node):
    bindings: tuple[Binding, ...]


@node
class DataflowBlock(BindingBlock):
    bindings: tuple[Binding, ...]


@node
class SeqExpr(Expr):
    blocks: tuple[BindingBlock, ...]
    body: Expr
    struct_info: StructInfo | None = None


@node(key="relax_if")
class If(Expr):
    cond: Expr
    true_branch: SeqExpr
    false_branch: SeqExpr
    struct_info: StructInfo | None = None


@node
class Function(Expr):
    """A graph-level function."""

    params: tuple[Var, ...]
    body: SeqExpr
    ret_struct_info: StructInfo
    is_pure: bool = True
    attrs: Map = Map()
    struct_info: StructInfo | None = None

    def __post_init__(self) -> None:
        if self.struct_info is None:
            sinfo = FuncStructInfo(tuple(p.struct_info or ObjectStructInfo() for p in self.params),
                                   self.ret_struct_info, self.is_pure)
            object.__setattr__(self, "struct_info", sinfo)

    def with_attr(self, key: str, value: Any) -> "Function":
        """A copy with one function attribute set."""
        return Function(self.params, self.body, self.ret_struct_info, self.is_pure,
                        self.attrs.set(key, value), span=self.span)

    def without_attr(self, key: str) -> "Function":
        """A copy without one function attribute."""
        return Function(self.params, self.body, self.ret_struct_info, self.is_pure,
                        self.attrs.without(key), span=self.span)
