"""Tensors and operations of tensor expressions: ``placeholder``, ``compute``, ``reduce_axis``
and the commutative reducers (``sum``, ``max``, ``min``, ``prod``, ``comm_reducer``).

A compute's body is built once, by calling its function on the axis variables; loads of other
tensors are ``tir.BufferLoad`` nodes of the tensors' (template) buffers, which
``create_prim_func`` replaces by the function's buffers and ``evaluate`` by arrays."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

from ..ir import tir
from ..ir.arith import format_shape
from ..ir.node import Map
from .expr import Expr, ExprLike, as_prim, binary, match_types, max_value, min_value, wrap

__all__ = ["Tensor", "Axis", "PlaceholderOp", "ComputeOp", "Reduce", "CommReducer", "placeholder",
           "compute", "reduce_axis", "comm_reducer", "sum", "max", "min", "prod", "var", "size_var",
           "index_dtype", "current_index_dtype"]

# The dtype Python ints become in shapes and indices; call_te switches it to int64 (Relax dims).
_INDEX_DTYPE: list[str] = ["int32"]
# One list per compute being built: the tensors its function reads.
_READS: list[list["Tensor"]] = []


@contextlib.contextmanager
def index_dtype(dtype: str) -> Iterator[None]:
    """Within the block, Python ints in shapes, axis ranges and indices become ``dtype`` literals."""
    _INDEX_DTYPE.append(dtype)
    try:
        yield
    finally:
        _INDEX_DTYPE.pop()


def current_index_dtype() -> str:
    """The dtype Python ints take in shapes and indices here."""
    return _INDEX_DTYPE[-1]


def _dim(value: ExprLike) -> tir.PrimExpr:
    """A shape dimension (Python ints take the current index dtype)."""
    if isinstance(value, bool):
        raise TypeError("a shape dimension cannot be a bool")
    if isinstance(value, int):
        return tir.IntImm(current_index_dtype(), value)
    return as_prim(value)


def _shape(shape: ExprLike | Sequence[ExprLike]) -> tuple[tir.PrimExpr, ...]:
    """A shape tuple from ints and expressions (one value is a 1-D shape)."""
    if isinstance(shape, (list, tuple)):
        return tuple(_dim(d) for d in shape)
    return (_dim(shape),)


def var(name: str = "tindex", dtype: str = "int32") -> Expr:
    """A symbolic scalar variable (``te.var``), e.g. a dynamic dimension."""
    return Expr(tir.Var(name, dtype))


def size_var(name: str = "size", dtype: str = "int32") -> Expr:
    """A symbolic non-negative variable (``te.size_var``)."""
    return Expr(tir.SizeVar(name, dtype))


# ---------------------------------------------------------------- axes
class Axis(Expr):
    """An iteration axis of a compute (spatial) or a reduction (``te.reduce_axis``); usable as an
    index expression."""

    __slots__ = ("dom", "iter_type")

    def __init__(self, v: tir.Var, dom: tir.Range, iter_type: int) -> None:
        super().__init__(v)
        self.dom = dom
        self.iter_type = iter_type

    @property
    def var(self) -> tir.Var:
        """The axis variable."""
        return self.expr  # type: ignore[return-value]

    def to_prim(self) -> tir.Var:
        """The axis variable (how the axis reads in expressions)."""
        return self.expr  # type: ignore[return-value]

    def __repr__(self) -> str:
        kind = "reduce_axis" if self.iter_type == tir.IterType.CommReduce else "axis"
        return f"te.{kind}({self.var.name})"


def reduce_axis(dom: ExprLike | Sequence[ExprLike] | tir.Range, name: str = "rv") -> Axis:
    """A reduction axis over ``dom``: an extent, a ``(min, max)`` pair (max excluded) or a Range."""
    if isinstance(dom, tir.Range):
        rng = dom
    elif isinstance(dom, (list, tuple)):
        if len(dom) != 2:
            raise ValueError(f"te.reduce_axis takes (min, max), got {len(dom)} values")
        lo, hi = match_types(_dim(dom[0]), _dim(dom[1]))
        rng = tir.Range(lo, (wrap(hi) - lo).expr)
    else:
        extent = _dim(dom)
        rng = tir.Range(tir.IntImm(extent.dtype, 0), extent)
    return Axis(tir.Var(name, rng.extent.dtype), rng, tir.IterType.CommReduce)


# ---------------------------------------------------------------- reductions
class CommReducer:
    """A commutative reducer (``te.comm_reducer``): ``fcombine(x, y)`` with identity ``fidentity(dtype)``.

    Called with an expression and ``axis=`` it makes a reduction; called with two expressions
    (``te.max(a, b)``) it combines them elementwise."""

    def __init__(self, fcombine: Callable[..., Any], fidentity: Callable[..., Any], name: str = "reduce") -> None:
        self.fcombine = fcombine
        self.fidentity = fidentity
        self.name = name

    def __repr__(self) -> str:
        return f"te.comm_reducer({self.name})"

    def combine(self, lhs: Sequence[tir.PrimExpr], rhs: Sequence[tir.PrimExpr]) -> tuple[tir.PrimExpr, ...]:
        """The combined values of two (tuples of) values."""
        if len(lhs) == 1:
            return (as_prim(self.fcombine(wrap(lhs[0]), wrap(rhs[0]))),)
        out = self.fcombine(tuple(wrap(x) for x in lhs), tuple(wrap(y) for y in rhs))
        return tuple(as_prim(v) for v in out)

    def identity(self, dtypes: Sequence[str]) -> tuple[tir.PrimExpr, ...]:
        """The identity element(s) for values of ``dtypes``."""
        if len(dtypes) == 1:
            return (as_prim(self.fidentity(dtypes[0]), dtypes[0]),)
        out = self.fidentity(*dtypes)
        return tuple(as_prim(v, d) for v, d in zip(out, dtypes))

    def __call__(self, expr: Any, axis: Any = None, where: ExprLike | None = None, init: Any = None,
                 *args: Any) -> Any:
        if axis is not None and not isinstance(axis, (Axis, list, tuple)):
            # te.max(a, b): the elementwise combination of two values
            return wrap(self.fcombine(wrap(expr), wrap(axis)))
        if axis is None:
            raise ValueError(f"te.{self.name} needs axis= (a reduce axis or a list of them)")
        axes = (axis,) if isinstance(axis, Axis) else tuple(axis)
        for a in axes:
            if not isinstance(a, Axis) or a.iter_type != tir.IterType.CommReduce:
                raise TypeError(f"te.{self.name}: axis must be reduce axes (te.reduce_axis), got {a!r}")
        cond = tir.IntImm("bool", 1) if where is None else as_prim(where, "bool")
        if isinstance(expr, (list, tuple)):
            sources = tuple(as_prim(e) for e in expr)
            inits = None if init is None else tuple(as_prim(v, s.dtype) for v, s in zip(init, sources))
            return tuple(Reduce(self, sources, axes, cond, i, inits) for i in range(len(sources)))
        source = as_prim(expr)
        inits = None if init is None else (as_prim(init, source.dtype),)
        return Reduce(self, (source,), axes, cond, 0, inits)


class Reduce:
    """A reduction: the top-level body of a compute (``te.sum(A[i, k], axis=k)``).

    ``value_index`` selects the output of a tuple reduction (argmax reduces (index, value) pairs)."""

    __slots__ = ("combiner", "source", "axis", "condition", "value_index", "init")

    def __init__(self, combiner: CommReducer, source: tuple[tir.PrimExpr, ...], axis: tuple[Axis, ...],
                 condition: tir.PrimExpr, value_index: int = 0, init: tuple[tir.PrimExpr, ...] | None = None) -> None:
        self.combiner = combiner
        self.source = source
        self.axis = axis
        self.condition = condition
        self.value_index = value_index
        self.init = init

    @property
    def dtype(self) -> str:
        """The dtype of the reduced value."""
        return self.source[self.value_index].dtype

    def identity(self) -> tuple[tir.PrimExpr, ...]:
        """The initial values: ``init`` when given, else the combiner's identity."""
        if self.init is not None:
            return self.init
        return self.combiner.identity([s.dtype for s in self.source])

    def _no_arith(self, *_: Any) -> Any:
        """Reductions take no part in arithmetic: they are whole compute bodies."""
        raise TypeError("a reduction must be the whole body of a compute; compute it first, "
                        "then use the result in another compute")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _no_arith


def comm_reducer(fcombine: Callable[..., Any], fidentity: Callable[..., Any], name: str = "reduce") -> CommReducer:
    """A commutative reducer from ``fcombine(x, y)`` and ``fidentity(dtype)`` (both may work on tuples)."""
    return CommReducer(fcombine, fidentity, name)


sum = comm_reducer(lambda x, y: x + y, lambda t: tir.FloatImm(t, 0.0) if "float" in t else tir.IntImm(t, 0),
                   name="sum")  # noqa: A001 - TVM's name
max = comm_reducer(lambda x, y: binary(tir.Max, x, y), min_value, name="max")  # noqa: A001
min = comm_reducer(lambda x, y: binary(tir.Min, x, y), max_value, name="min")  # noqa: A001
prod = comm_reducer(lambda x, y: x * y, lambda t: tir.FloatImm(t, 1.0) if "float" in t else tir.IntImm(t, 1),
                    name="prod")


# ---------------------------------------------------------------- operations and tensors
class PlaceholderOp:
    """An input tensor's operation."""

    def __init__(self, name: str, shape: tuple[tir.PrimExpr, ...], dtype: str) -> None:
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.inputs: list[Tensor] = []
        self.num_outputs = 1
        self.outputs: list[Tensor] = []

    def __repr__(self) -> str:
        return f"PlaceholderOp({self.name})"


class ComputeOp:
    """A computed tensor's operation: ``body[i]`` (a PrimExpr or a Reduce) gives output ``i``
    at the point ``axis``; ``inputs`` are the tensors the body reads."""

    def __init__(self, name: str, tag: str, attrs: Map, axis: tuple[Axis, ...], body: tuple[Any, ...],
                 inputs: list["Tensor"]) -> None:
        self.name = name
        self.tag = tag
        self.attrs = attrs
        self.axis = axis
        self.body = body
        self.inputs = inputs
        self.num_outputs = len(body)
        first = body[0]
        self.reduce_axis: tuple[Axis, ...] = first.axis if isinstance(first, Reduce) else ()
        self.outputs: list[Tensor] = []  # filled once the tensors exist

    def __repr__(self) -> str:
        return f"ComputeOp({self.name})"


class Tensor:
    """A tensor of a TE program: a placeholder or the (``value_index``-th) output of a compute.

    ``A[i, j]`` and ``A(i, j)`` read an element; ``+ - * /`` between tensors (and scalars) are the
    broadcasting ``topi`` ops, as in TVM."""

    def __init__(self, op: PlaceholderOp | ComputeOp, value_index: int, shape: tuple[tir.PrimExpr, ...],
                 dtype: str) -> None:
        self.op = op
        self.value_index = value_index
        self.shape = shape
        self.dtype = dtype
        self.name = op.name if op.num_outputs == 1 else f"{op.name}_v{value_index}"
        data = tir.Var(self.name, "handle", tir.PointerType(dtype))
        # The template buffer every load of this tensor refers to.
        self.buffer = tir.Buffer(self.name, data, dtype, shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    def __repr__(self) -> str:
        return f"te.Tensor({self.name}, shape={format_shape(self.shape)}, dtype={self.dtype})"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __getitem__(self, indices: Any) -> Expr:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return self(*indices)

    def __call__(self, *indices: Any) -> Expr:
        if len(indices) == 1 and isinstance(indices[0], (list, tuple)):
            indices = tuple(indices[0])
        if len(indices) != len(self.shape):
            raise IndexError(f"{self.name} has {len(self.shape)} dimensions, indexed with {len(indices)}")
        idx = []
        for i, dim in zip(indices, self.shape):
            if isinstance(i, bool):
                raise TypeError("a tensor index cannot be a bool")
            if isinstance(i, int):
                idx.append(tir.IntImm(dim.dtype, i))
                continue
            e = as_prim(i)
            if e.dtype != dim.dtype and "int" in e.dtype and "int" in dim.dtype:
                e = wrap(e).astype(dim.dtype).expr  # indices take the dimension's dtype
            idx.append(e)
        if _READS:
            _READS[-1].append(self)
        return Expr(tir.BufferLoad(self.buffer, tuple(idx)))

def placeholder(shape: ExprLike | Sequence[ExprLike], dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor of ``shape`` (ints and symbolic expressions) and ``dtype``."""
    dims = _shape(shape)
    op = PlaceholderOp(name, dims, dtype)
    op.outputs = [Tensor(op, 0, dims, dtype)]
    return op.outputs[0]


def _arg_names(fcompute: Callable[..., Any], ndim: int) -> list[str]:
    """The axis names of a compute: the function's parameter names, or ``i0, i1...`` for ``*args``."""
    code = getattr(fcompute, "__code__", None)
    if code is None or code.co_argcount == 0:
        return [f"i{i}" for i in range(ndim)]
    names = list(code.co_varnames[:code.co_argcount])
    if getattr(fcompute, "__self__", None) is not None:
        names = names[1:]  # a bound method's self is not an axis
    if len(names) != ndim:
        raise ValueError(f"the compute function takes {len(names)} indices ({', '.join(names)}) "
                         f"for a {ndim}-dimensional shape")
    return names


def compute(shape: ExprLike | Sequence[ExprLike], fcompute: Callable[..., Any] | Tensor, name: str = "compute",
            tag: str = "", attrs: dict[str, Any] | None = None) -> Any:
    """A tensor of ``shape`` whose element at ``(i, j, ...)`` is ``fcompute(i, j, ...)``.

    A function returning several values (a tuple reduction) gives a list of tensors."""
    dims = _shape(shape)
    if isinstance(fcompute, Tensor):
        source = fcompute
        return make_compute(dims, lambda *idx: source(*idx), [f"i{i}" for i in range(len(dims))],
                            name, tag, attrs)
    return make_compute(dims, fcompute, _arg_names(fcompute, len(dims)), name, tag, attrs)


def make_compute(dims: Sequence[ExprLike], fcompute: Callable[..., Any], axis_names: Sequence[str],
                 name: str = "compute", tag: str = "", attrs: dict[str, Any] | None = None) -> Any:
    """``compute`` with explicit axis names (topi's C++-style computes name them ``ax0, ax1...``)."""
    shape = tuple(_dim(d) for d in dims)
    axes = tuple(Axis(tir.Var(n, d.dtype), tir.Range(tir.IntImm(d.dtype, 0), d), tir.IterType.DataPar)
                 for n, d in zip(axis_names, shape))
    _READS.append([])
    try:
        out = fcompute(*axes)
    finally:
        reads = _READS.pop()
    values = tuple(out) if isinstance(out, (list, tuple)) else (out,)
    body = tuple(v if isinstance(v, Reduce) else as_prim(v) for v in values)
    reduces = [v for v in body if isinstance(v, Reduce)]
    if reduces and (len(reduces) != len(body) or any(r.combiner is not reduces[0].combiner
                                                     or r.source is not reduces[0].source for r in reduces)):
        raise ValueError("a compute returning several values must return the outputs of one tuple reduction")
    inputs: list[Tensor] = []
    for t in reads:
        if not any(t is u for u in inputs):
            inputs.append(t)
    op = ComputeOp(name, tag, Map(attrs or {}), axes, body, inputs)
    tensors = [Tensor(op, i, shape, b.dtype) for i, b in enumerate(body)]
    op.outputs = tensors
    return tensors[0] if len(tensors) == 1 else tensors
