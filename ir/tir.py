"""Loop-level IR (TIR): scalar expressions, buffers, statements and PrimFunc."""
from __future__ import annotations

from typing import Any, ClassVar, Union

from .dtype import lanes_of
from .node import Map, Node, node

__all__ = [
    "PrimExpr", "Var", "SizeVar", "IntImm", "FloatImm", "StringImm", "Cast", "BinaryOp",
    "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max",
    "CmpOp", "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not", "Select", "BufferLoad",
    "Ramp", "Broadcast", "Let", "Call", "PointerType", "Range", "IterVar", "Buffer",
    "Stmt", "BufferStore", "LetStmt", "AssertStmt", "For", "While", "IfThenElse", "SeqStmt",
    "Evaluate", "BufferRegion", "MatchBufferRegion", "Block", "BlockRealize", "DeclBuffer",
    "Allocate", "AttrStmt", "PrimFunc", "ForKind", "IterType", "const", "seq", "Target", "CommReducer", "AllocateConst",
    "Break", "Continue",
]


class PrimExpr(Node):
    """A scalar expression; every PrimExpr has a ``dtype``."""

    __slots__ = ()
    dtype: str


@node
class PointerType(Node):
    """The type of a handle that points at ``element_dtype`` data in ``storage_scope``."""

    element_dtype: str
    storage_scope: str = "global"


@node(key="tir_var")
class Var(PrimExpr):
    """A scalar variable; identity matters (two Vars with one name are different)."""

    name: str
    dtype: str = "int32"
    type_annotation: PointerType | None = None


@node(key="tir_var")
class SizeVar(Var):
    """A variable known to be non-negative (a shape dimension)."""


@node
class IntImm(PrimExpr):
    """An integer (or bool) literal of a given dtype."""

    dtype: str
    value: int


@node
class FloatImm(PrimExpr):
    """A floating-point literal, stored as a Python float (a double) as TVM does."""

    dtype: str
    value: float


@node(key="tir_string_imm")
class StringImm(PrimExpr):
    """A string literal."""

    value: str
    dtype: ClassVar[str] = "handle"


@node
class Cast(PrimExpr):
    """Convert ``value`` to ``dtype``."""

    dtype: str
    value: PrimExpr


class BinaryOp(PrimExpr):
    """Base of the two-operand arithmetic nodes; the dtype is the operands'."""

    __slots__ = ()
    a: PrimExpr
    b: PrimExpr
    # The printed operator (None when the op has no Python operator) and its TIR constructor name.
    op_text: ClassVar[str | None] = None
    script_name: ClassVar[str] = ""

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return self.a.dtype


@node
class Add(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "+"
    script_name: ClassVar[str] = "Add"


@node
class Sub(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "-"
    script_name: ClassVar[str] = "Sub"


@node
class Mul(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "*"
    script_name: ClassVar[str] = "Mul"


@node
class Div(BinaryOp):
    """Truncated division for ints, true division for floats (printed ``/`` on floats)."""

    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "/"
    script_name: ClassVar[str] = "Div"


@node
class Mod(BinaryOp):
    """Truncated remainder (``T.truncmod``)."""

    a: PrimExpr
    b: PrimExpr
    script_name: ClassVar[str] = "truncmod"


@node
class FloorDiv(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "//"
    script_name: ClassVar[str] = "FloorDiv"


@node
class FloorMod(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "%"
    script_name: ClassVar[str] = "FloorMod"


@node
class Min(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    script_name: ClassVar[str] = "min"


@node
class Max(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    script_name: ClassVar[str] = "max"


class CmpOp(BinaryOp):
    """Base of comparisons; the result is bool."""

    __slots__ = ()

    @property
    def dtype(self) -> str:  # type: ignore[override]
        lanes = lanes_of(self.a.dtype)
        return f"boolx{lanes}" if lanes > 1 else "bool"


@node
class EQ(CmpOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "=="
    script_name: ClassVar[str] = "EQ"


@node
class NE(CmpOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "!="
    script_name: ClassVar[str] = "NE"


@node
class LT(CmpOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "<"
    script_name: ClassVar[str] = "LT"


@node
class LE(CmpOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "<="
    script_name: ClassVar[str] = "LE"


@node
class GT(CmpOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = ">"
    script_name: ClassVar[str] = "GT"


@node
class GE(CmpOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = ">="
    script_name: ClassVar[str] = "GE"


@node(key="and")
class And(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "and"
    script_name: ClassVar[str] = "And"


@node(key="or")
class Or(BinaryOp):
    a: PrimExpr
    b: PrimExpr
    op_text: ClassVar[str | None] = "or"
    script_name: ClassVar[str] = "Or"


@node(key="not")
class Not(PrimExpr):
    a: PrimExpr

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return self.a.dtype


@node
class Select(PrimExpr):
    """``T.Select(cond, t, f)``: both sides evaluated."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return self.true_value.dtype


@node
class Ramp(PrimExpr):
    base: PrimExpr
    stride: PrimExpr
    lanes: int

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return f"{self.base.dtype}x{self.lanes}"


@node
class Broadcast(PrimExpr):
    value: PrimExpr
    lanes: int

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return f"{self.value.dtype}x{self.lanes}"


@node(key="tir_let")
class Let(PrimExpr):
    var: Var
    value: PrimExpr
    body: PrimExpr

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return self.body.dtype


@node(key="tir_call")
class Call(PrimExpr):
    """A call of an intrinsic (``op`` is its name, e.g. ``"tir.exp"``) or of a module function."""

    dtype: str
    op: Any  # str (intrinsic name) or GlobalVar
    args: tuple[PrimExpr, ...] = ()


@node
class CommReducer(Node):
    """A commutative reducer (``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])``): ``result``
    combines the accumulators ``lhs`` with the values ``rhs``; ``identity_element`` starts each."""

    lhs: tuple
    rhs: tuple
    result: tuple
    identity_element: tuple


@node
class Target(Node):
    """A compilation target as an attribute value (``T.target("llvm")``): its configuration,
    ``kind`` plus the options written (``{"kind": "cuda", "arch": "sm_80"}``)."""

    config: Map


@node
class Range(Node):
    """The half-open interval ``[min, min + extent)``."""

    min: PrimExpr
    extent: PrimExpr


class IterType:
    """Block iterator kinds (the numbers are TVM's)."""

    DataPar = 0
    ThreadIndex = 1
    CommReduce = 2
    Ordered = 3
    Opaque = 4


@node
class IterVar(Node):
    """A block iterator or thread binding: ``var`` ranges over ``dom``."""

    dom: Range | None
    var: Var
    iter_type: int = IterType.DataPar
    thread_tag: str = ""


@node
class Buffer(Node):
    """A multi-dimensional view of memory pointed to by ``data``."""

    name: str
    data: Var
    dtype: str
    shape: tuple[PrimExpr, ...]
    strides: tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr | None = None
    scope: str = "global"
    data_alignment: int = 64
    offset_factor: int = 1
    buffer_type: str = "default"
    axis_separators: tuple[int, ...] = ()


class Stmt(Node):
    """A TIR statement."""

    __slots__ = ()


@node
class BufferLoad(PrimExpr):
    buffer: Buffer
    indices: tuple[PrimExpr, ...]

    @property
    def dtype(self) -> str:  # type: ignore[override]
        dt = self.buffer.dtype
        for idx in self.indices:
            lanes = lanes_of(idx.dtype)
            if lanes > 1:
                return f"{dt}x{lanes}"
        return dt


@node
class BufferStore(Stmt):
    buffer: Buffer
    value: PrimExpr
    indices: tuple[PrimExpr, ...]


@node
class LetStmt(Stmt):
    var: Var
    value: PrimExpr
    body: Stmt


@node
class AssertStmt(Stmt):
    condition: PrimExpr
    message: PrimExpr
    body: Stmt


class ForKind:
    """Loop kinds, as printed by ``T.<kind>``."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"


@node(key="for")
class For(Stmt):
    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: str
    body: Stmt
    thread_binding: IterVar | None = None
    annotations: Map = Map()
    step: PrimExpr | None = None


@node(key="while")
class While(Stmt):
    condition: PrimExpr
    body: Stmt


@node
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@node
class SeqStmt(Stmt):
    seq: tuple[Stmt, ...]


@node
class Evaluate(Stmt):
    value: PrimExpr


@node
class Break(Stmt):
    """Leave the innermost loop (``break``; TVM prints ``T.break_loop()``)."""


@node
class Continue(Stmt):
    """Go on with the innermost loop's next iteration (``continue``; ``T.continue_loop()``)."""


@node
class BufferRegion(Node):
    buffer: Buffer
    region: tuple[Range, ...]


@node
class MatchBufferRegion(Node):
    buffer: Buffer
    source: BufferRegion


@node
class Block(Stmt):
    name_hint: str
    iter_vars: tuple[IterVar, ...]
    reads: tuple[BufferRegion, ...]
    writes: tuple[BufferRegion, ...]
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: tuple[Buffer, ...] = ()
    match_buffers: tuple[MatchBufferRegion, ...] = ()
    annotations: Map = Map()


@node
class BlockRealize(Stmt):
    iter_values: tuple[PrimExpr, ...]
    predicate: PrimExpr
    block: Block


@node
class DeclBuffer(Stmt):
    buffer: Buffer
    body: Stmt


@node
class Allocate(Stmt):
    buffer_var: Var
    dtype: str
    extents: tuple[PrimExpr, ...]
    condition: PrimExpr
    body: Stmt
    annotations: Map = Map()


@node
class AllocateConst(Stmt):
    """``buffer_var`` points at constant data (``T.allocate_const([1, 2], "int32", [2])``): ``data``
    holds the values (Python numbers, row-major) of ``dtype`` and ``extents``."""

    buffer_var: Var
    dtype: str
    extents: tuple[PrimExpr, ...]
    data: tuple
    body: Stmt
    annotations: Map = Map()


@node
class AttrStmt(Stmt):
    node: Any
    attr_key: str
    value: PrimExpr
    body: Stmt


@node
class PrimFunc(Node):
    """A loop-level function: ``params`` are Vars; buffer parameters are in ``buffer_map``."""

    params: tuple[Var, ...]
    body: Stmt
    ret_type: str | None = None
    buffer_map: Map = Map()
    attrs: Map = Map()

    def with_attr(self, key: str, value: Any) -> "PrimFunc":
        """A copy with one function attribute set."""
        return self.__class__(self.params, self.body, self.ret_type, self.buffer_map,
                              self.attrs.set(key, value), span=self.span)

    def without_attr(self, key: str) -> "PrimFunc":
        """A copy without one function attribute."""
        return self.__class__(self.params, self.body, self.ret_type, self.buffer_map,
                              self.attrs.without(key), span=self.span)


PrimExprLike = Union[PrimExpr, int, float, bool]


def const(value: Any, dtype: str | None = None) -> PrimExpr:
    """A literal: int -> IntImm (int32 by default), float -> FloatImm (float32), bool -> IntImm bool."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, bool):
        return IntImm(dtype or "bool", int(value))
    if isinstance(value, int):
        return IntImm(dtype or "int32", value)
    if isinstance(value, float):
        return FloatImm(dtype or "float32", value)
    raise TypeError(f"cannot make a TIR constant from {type(value).__name__}")


def seq(stmts: list[Stmt] | tuple[Stmt, ...]) -> Stmt:
    """One statement from several: the statement itself when there is one, else a SeqStmt."""
    flat: list[Stmt] = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        else:
            flat.append(s)
    return flat[0] if len(flat) == 1 else SeqStmt(tuple(flat))
