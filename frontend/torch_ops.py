"""The ``from_exported_program`` converters of ATen's indexing, creation, logical and attention ops
(the ones transformers, GPT-2-style decoders and mobile CNNs need), each mapped to the Relax op
TVM's importer maps it to: ``select.int`` and ``index.Tensor`` to ``R.take``, ``slice.Tensor`` to
``R.strided_slice``, ``split``/``chunk`` to ``R.split``, ``expand`` to ``R.broadcast_to``,
``scaled_dot_product_attention`` to ``R.nn.attention`` (BHSD permuted to BSNH and back),
``masked_fill`` to ``R.full_like`` + ``R.where``... ``tvmlite.frontend.torch`` merges
:data:`CONVERTERS` into its table."""
from __future__ import annotations

import math
import operator
import sys
from typing import TYPE_CHECKING, Any, Callable, Sequence

from tvmlite.frontend.common import FrontendError, as_dim
from tvmlite.ir import arith, tir
from tvmlite.ir.op_api import PrimValue, Tuple, Var, const
from tvmlite.ir.op_api import op as relax_op
from tvmlite.ir.relax import Expr

if TYPE_CHECKING:  # the importer class, for the hints only (torch.py imports this module)
    from tvmlite.frontend.torch import ExportedProgramImporter

__all__ = ["CONVERTERS", "reshape"]

Converter = Callable[["ExportedProgramImporter", Any], Any]
CONVERTERS: dict[str, Converter] = {}


def _register(*names: str) -> Callable[[Converter], Converter]:
    def wrap(fn: Converter) -> Converter:
        for name in names:
            CONVERTERS[name] = fn
        return fn

    return wrap


def _axis(dim: int, rank: int) -> int:
    return dim % rank if rank else 0


def _dims(value: Any) -> list[int]:
    """``dim`` arguments: one int or a list of them."""
    return [int(value)] if isinstance(value, int) else [int(d) for d in value]


def reshape(imp: ExportedProgramImporter, x: Expr, shape: Sequence[Any]) -> Var:
    """``R.reshape`` with a ``-1`` replaced by the length it stands for, as TVM's reshape fills it
    in when it is built (and as the parser reads the printed text back)."""
    shape = tuple(shape)
    if any(isinstance(d, int) and d == -1 for d in shape):
        inferred = relax_op.reshape(x, shape).struct_info.shape
        shape = shape if inferred is None else tuple(inferred)
    return imp.out.emit(relax_op.reshape(x, shape))


# ==================================================================== symbolic sizes
def _dim_arith(kind: type, python: Callable[[int, int], int], a: Any, b: Any) -> int | tir.PrimExpr:
    """``a (op) b`` on sizes: an int when both are known, else a simplified TIR expression."""
    if isinstance(a, int) and isinstance(b, int):
        return python(a, b)
    return as_dim(arith.simplify(kind(arith.to_dim(a), arith.to_dim(b))))


def _size_arith(kind: type, python: Callable[[int, int], int]) -> Converter:
    """Python arithmetic on sizes (``operator.mul`` of a symbolic batch and a number...)."""
    return lambda imp, node: _dim_arith(kind, python, imp.value(node.args[0]), imp.value(node.args[1]))


for _name, _kind, _python in [("add", tir.Add, operator.add), ("sub", tir.Sub, operator.sub),
                              ("mul", tir.Mul, operator.mul), ("floordiv", tir.FloorDiv, operator.floordiv),
                              ("mod", tir.FloorMod, operator.mod)]:
    _register(_name)(_size_arith(_kind, _python))


# ==================================================================== activations
@_register("hardsigmoid.default", "hardsigmoid_.default")
def _hardsigmoid(imp: ExportedProgramImporter, node: Any) -> Var:
    return _relu6_over_6(imp, imp.arg(node, 0, "input"))


def _relu6_over_6(imp: ExportedProgramImporter, x: Expr) -> Var:
    """``clip(x + 3, 0, 6) / 6``, hardsigmoid as TVM spells it."""
    shifted = imp.out.emit(relax_op.add(x, const(3, imp.out.dtype_of(x))))
    clipped = imp.out.emit(relax_op.clip(shifted, PrimValue(0), PrimValue(6)))
    return imp.out.emit(relax_op.divide(clipped, const(6, imp.out.dtype_of(x))))


@_register("hardswish.default", "hardswish_.default")
def _hardswish(imp: ExportedProgramImporter, node: Any) -> Var:
    x = imp.arg(node, 0, "input")
    return imp.out.emit(relax_op.multiply(x, _relu6_over_6(imp, x)))


# ==================================================================== slicing and indexing
@_register("select.int")
def _select(imp: ExportedProgramImporter, node: Any) -> Var:
    # select(input, dim, index): take one position, dropping the axis
    x = imp.arg(node, 0, "input")
    shape = imp.out.shape_of(x)
    axis, index = _axis(int(imp.arg(node, 1, "dim")), len(shape)), imp.arg(node, 2, "index")
    mode = "fast"
    if isinstance(index, int) and index < 0:
        if isinstance(shape[axis], int):
            index += shape[axis]
        else:  # from the end of a symbolic axis
            mode = "wrap"
    return imp.out.emit(relax_op.take(x, const(index, "int64"), axis=axis, mode=mode))


@_register("slice.Tensor")
def _slice(imp: ExportedProgramImporter, node: Any) -> Expr:
    # slice(input, dim=0, start=None, end=None, step=1); an end past the axis means "to the end"
    x = imp.arg(node, 0, "input")
    dim = int(imp.arg(node, 1, "dim", 0))
    start, end = imp.arg(node, 2, "start", None), imp.arg(node, 3, "end", None)
    step = imp.arg(node, 4, "step", 1)
    start = 0 if start is None else start
    end = sys.maxsize if end is None else end
    if start == 0 and step == 1:
        size = imp.out.shape_of(x)[_axis(dim, len(imp.out.shape_of(x)))]
        # the whole axis (torch.export spells x[:, :t] so when t is the axis' symbolic size)
        if (isinstance(end, int) and end >= sys.maxsize) or (isinstance(end, tir.PrimExpr)
                                                               and arith.can_prove_equal(end, size)):
            return x
    return imp.out.emit(relax_op.strided_slice(x, axes=[dim], begin=[start], end=[end], strides=[step]))


@_register("narrow.default")
def _narrow(imp: ExportedProgramImporter, node: Any) -> Var:
    # narrow(input, dim, start, length)
    x, dim, start = imp.arg(node, 0, "input"), int(imp.arg(node, 1, "dim")), imp.arg(node, 2, "start")
    end = _dim_arith(tir.Add, operator.add, start, imp.arg(node, 3, "length"))
    return imp.out.emit(relax_op.strided_slice(x, axes=[dim], begin=[start], end=[end]))


@_register("split.Tensor", "split_with_sizes.default")
def _split(imp: ExportedProgramImporter, node: Any) -> Var:
    # split(input, split_size, dim) chunks of split_size (the last smaller); split_with_sizes the sizes
    x, sizes = imp.arg(node, 0, "input"), imp.arg(node, 1, "split_size" if imp._key(node) == "split.Tensor"
                                                  else "split_sizes")
    dim = int(imp.arg(node, 2, "dim", 0))
    if isinstance(sizes, (list, tuple)):
        cuts, total = [], 0
        for size in sizes[:-1]:
            total += size
            cuts.append(total)
    else:
        length = _static(imp, x, dim, node)
        cuts = [sizes * i for i in range(1, -(-length // sizes))]
    return imp.out.emit(relax_op.split(x, cuts, axis=dim))


@_register("chunk.default")
def _chunk(imp: ExportedProgramImporter, node: Any) -> Var:
    # chunk(input, chunks, dim): chunks of ceil(D / chunks), so possibly fewer than asked for
    x, chunks, dim = imp.arg(node, 0, "input"), int(imp.arg(node, 1, "chunks")), int(imp.arg(node, 2, "dim", 0))
    length = _static(imp, x, dim, node)
    size = -(-length // chunks)
    sections = min(chunks, length)
    if -(-length // sections) == size and -(-length // size) == sections:  # R.split's equal sections agree
        return imp.out.emit(relax_op.split(x, sections, axis=dim))
    return imp.out.emit(relax_op.split(x, [size * i for i in range(1, -(-length // size))], axis=dim))


def _static(imp: ExportedProgramImporter, x: Expr, dim: int, node: Any) -> int:
    shape = imp.out.shape_of(x)
    length = shape[_axis(dim, len(shape))]
    if not isinstance(length, int):
        raise FrontendError(f"from_exported_program: {node.name!r} splits the symbolic axis {dim} ({length}); "
                            f"only static sizes split")
    return length


@_register("unflatten.int")
def _unflatten(imp: ExportedProgramImporter, node: Any) -> Var:
    # unflatten(input, dim, sizes): one axis becomes several (one size may be -1)
    x = imp.arg(node, 0, "input")
    shape = list(imp.out.shape_of(x))
    dim = _axis(int(imp.arg(node, 1, "dim")), len(shape))
    return reshape(imp, x, shape[:dim] + list(imp.arg(node, 2, "sizes")) + shape[dim + 1:])


@_register("expand.default")
def _expand(imp: ExportedProgramImporter, node: Any) -> Var:
    # expand(input, size): -1 keeps the input's size; new axes go in front
    x, sizes = imp.arg(node, 0, "input"), list(imp.arg(node, 1, "size"))
    shape = imp.out.shape_of(x)
    offset = len(sizes) - len(shape)
    target = [shape[i - offset] if isinstance(s, int) and s == -1 and i >= offset else s for i, s in enumerate(sizes)]
    return imp.out.emit(relax_op.broadcast_to(x, tuple(target)))


@_register("expand_as.default")
def _expand_as(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.broadcast_to(imp.arg(node, 0, "input"), imp.out.shape_of(imp.arg(node, 1, "other"))))


@_register("index.Tensor")
def _index(imp: ExportedProgramImporter, node: Any) -> Var:
    # index(input, indices): None keeps an axis; one index tensor is a take, a full set index_tensor
    x, indices = imp.arg(node, 0, "input"), list(imp.arg(node, 1, "indices"))
    given = [(axis, index) for axis, index in enumerate(indices) if index is not None]
    if any(imp.out.dtype_of(index) == "bool" for _, index in given):
        raise FrontendError(f"from_exported_program: {node.name!r} indexes with a boolean mask, whose result "
                            f"size depends on the data; only integer index tensors are supported")
    if len(given) == 1:
        axis, index = given[0]
        return imp.out.emit(relax_op.take(x, index, axis=axis))
    if len(given) == len(indices):
        return imp.out.emit(relax_op.index_tensor(x, Tuple([index for _, index in given])))
    raise FrontendError(f"from_exported_program: {node.name!r} mixes full slices with several index tensors; "
                        f"only one index tensor, or one per leading axis, is supported")


@_register("index_select.default")
def _index_select(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.take(imp.arg(node, 0, "input"), imp.arg(node, 2, "index"),
                                      axis=int(imp.arg(node, 1, "dim"))))


@_register("gather.default")
def _gather(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.gather_elements(imp.arg(node, 0, "input"), imp.arg(node, 2, "index"),
                                                 axis=int(imp.arg(node, 1, "dim"))))


@_register("embedding.default")
def _embedding(imp: ExportedProgramImporter, node: Any) -> Var:
    # embedding(weight, indices, ...): rows of the table; several index axes go through a flat take
    weight, indices = imp.arg(node, 0, "weight"), imp.arg(node, 1, "indices")
    indices = imp.out.emit(relax_op.astype(indices, dtype="int32"))
    shape = imp.out.shape_of(indices)
    if len(shape) == 1:
        return imp.out.emit(relax_op.take(weight, indices, axis=0))
    rows = imp.out.emit(relax_op.take(weight, reshape(imp, indices, (-1,)), axis=0))
    return imp.out.emit(relax_op.reshape(rows, tuple(shape) + (imp.out.shape_of(weight)[-1],)))


@_register("repeat.default", "tile.default")
def _tile(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.tile(imp.arg(node, 0, "input"), list(imp.arg(node, 1, "repeats"))))


@_register("stack.default")
def _stack(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.stack(Tuple(list(imp.arg(node, 0, "tensors"))), axis=int(imp.arg(node, 1, "dim", 0))))


# ==================================================================== creation
def _dtype(imp: ExportedProgramImporter, node: Any, value: Any = None, default: str | None = None) -> str:
    """The ``dtype`` keyword, else ``default``, else what torch infers from a fill value."""
    if node.kwargs.get("dtype") is not None:
        return imp.dtype(node.kwargs["dtype"])
    if default is not None:
        return default
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    return imp.dtype(imp.torch.get_default_dtype())


def _fill(value: Any, dtype: str) -> Expr:
    """A fill value as a rank-0 constant (or the rank-0 tensor it already is)."""
    return value if isinstance(value, Expr) else const(value, dtype)


@_register("full.default")
def _full(imp: ExportedProgramImporter, node: Any) -> Var:
    shape, value = list(imp.arg(node, 0, "size")), imp.arg(node, 1, "fill_value")
    dtype = _dtype(imp, node, value)
    return imp.out.emit(relax_op.full(tuple(shape), _fill(value, dtype), dtype=dtype))


@_register("zeros.default", "ones.default", "empty.memory_format")
def _zeros_ones(imp: ExportedProgramImporter, node: Any) -> Var:
    size = imp.arg(node, 0, "size")
    shape = tuple(size) if isinstance(size, (list, tuple)) else (size,)
    dtype = _dtype(imp, node, 0.0)
    if imp._key(node) == "ones.default":  # TVM spells ones as a full of 1
        return imp.out.emit(relax_op.full(shape, const(1, dtype), dtype=dtype))
    return imp.out.emit(relax_op.zeros(shape, dtype=dtype))


@_register("zeros_like.default", "ones_like.default", "empty_like.default")
def _zeros_ones_like(imp: ExportedProgramImporter, node: Any) -> Var:
    x = imp.arg(node, 0, "input")
    dtype = _dtype(imp, node, default=imp.out.dtype_of(x))
    build = relax_op.ones_like if imp._key(node) == "ones_like.default" else relax_op.zeros_like
    return imp.out.emit(build(x, dtype=dtype if dtype != imp.out.dtype_of(x) else "void"))


@_register("full_like.default")
def _full_like(imp: ExportedProgramImporter, node: Any) -> Var:
    x, value = imp.arg(node, 0, "input"), imp.arg(node, 1, "fill_value")
    dtype = _dtype(imp, node, default=imp.out.dtype_of(x))
    fill_dtype = dtype if dtype != imp.out.dtype_of(x) else "void"
    if fill_dtype == "void" and isinstance(value, float) and (math.isinf(value) or math.isnan(value)) \
            and "float" not in dtype:  # an infinity needs a float tensor (as TVM decides)
        fill_dtype = dtype = "float32"
    return imp.out.emit(relax_op.full_like(x, _fill(value, dtype), dtype=fill_dtype))


@_register("new_zeros.default", "new_ones.default", "new_full.default", "new_empty.default")
def _new_full(imp: ExportedProgramImporter, node: Any) -> Var:
    x, size = imp.arg(node, 0, "input"), imp.arg(node, 1, "size")
    key = imp._key(node)
    value = imp.arg(node, 2, "fill_value") if key == "new_full.default" else (1 if key == "new_ones.default" else 0)
    dtype = _dtype(imp, node, default=imp.out.dtype_of(x))
    return imp.out.emit(relax_op.full(tuple(size), const(value, dtype), dtype=dtype))


@_register("arange.default", "arange.start", "arange.start_step")
def _arange(imp: ExportedProgramImporter, node: Any) -> Var:
    # arange(end) | arange(start, end) | arange(start, end, step); int64 unless a bound is a float
    given = [imp.value(a) for a in node.args]
    if len(given) == 1:
        given = [0] + given
    start, end, step = given + [0, None, 1][len(given):]
    start, end, step = (imp.value(node.kwargs.get(name, value))
                        for name, value in (("start", start), ("end", end), ("step", step)))
    floats = any(isinstance(v, float) for v in (start, end, step))
    dtype = _dtype(imp, node, default=imp.dtype(imp.torch.get_default_dtype()) if floats else "int64")
    return imp.out.emit(relax_op.arange(start, end, step, dtype=dtype))


@_register("scalar_tensor.default")
def _scalar_tensor(imp: ExportedProgramImporter, node: Any) -> Var:
    dtype = _dtype(imp, node, default=imp.dtype(imp.torch.get_default_dtype()))
    return imp.out.emit(const(imp.arg(node, 0, "s"), dtype))


@_register("fill.Scalar")
def _fill_scalar(imp: ExportedProgramImporter, node: Any) -> Var:
    x = imp.arg(node, 0, "input")
    dtype = imp.out.dtype_of(x)
    return imp.out.emit(relax_op.full(imp.out.shape_of(x), const(imp.arg(node, 1, "value"), dtype), dtype=dtype))


# ==================================================================== logic and masks
def _as_bool(imp: ExportedProgramImporter, x: Expr) -> Expr:
    """torch's logical ops read any dtype as nonzero-is-true; Relax's want booleans."""
    return x if imp.out.dtype_of(x) == "bool" else imp.out.emit(relax_op.astype(x, dtype="bool"))


@_register("logical_not.default")
def _logical_not(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.logical_not(_as_bool(imp, imp.arg(node, 0, "input"))))


def _logical(build: Callable[[Expr, Expr], Expr]) -> Converter:
    def convert(imp: ExportedProgramImporter, node: Any) -> Var:
        return imp.out.emit(build(_as_bool(imp, imp.arg(node, 0, "input")), _as_bool(imp, imp.arg(node, 1, "other"))))

    return convert


_register("logical_and.default")(_logical(relax_op.logical_and))
_register("logical_or.default")(_logical(relax_op.logical_or))
_register("logical_xor.default")(_logical(relax_op.logical_xor))


@_register("any.dim", "any.dims", "any.default")
def _any(imp: ExportedProgramImporter, node: Any) -> Var:
    # any is a max; R.max takes no booleans, so they go through int8 (as TVM); the result is boolean
    x, dims = imp.arg(node, 0, "input"), imp.arg(node, 1, "dim", None)
    axis, keepdims = (None if dims is None else _dims(dims)), bool(imp.arg(node, 2, "keepdim", False))
    as_int = imp.out.emit(relax_op.astype(_as_bool(imp, x), dtype="int8"))
    return imp.out.emit(relax_op.astype(imp.out.emit(relax_op.max(as_int, axis=axis, keepdims=keepdims)), dtype="bool"))


@_register("where.self", "where.ScalarSelf", "where.ScalarOther", "where.Scalar")
def _where(imp: ExportedProgramImporter, node: Any) -> Var:
    cond, x, y = imp.arg(node, 0, "condition"), imp.arg(node, 1, "input"), imp.arg(node, 2, "other")
    if not isinstance(x, Expr) and not isinstance(y, Expr):  # where.Scalar: torch's dtype for the numbers
        x = const(x, _dtype(imp, node, x if isinstance(y, int) else y))
    like = x if isinstance(x, Expr) else y
    return imp.out.emit(relax_op.where(cond, imp.operand(x, like), imp.operand(y, like)))


@_register("masked_fill.Scalar", "masked_fill_.Scalar", "masked_fill.Tensor", "masked_fill_.Tensor")
def _masked_fill(imp: ExportedProgramImporter, node: Any) -> Var:
    # masked_fill(input, mask, value) is where(mask, full_like(input, value), input)
    x, mask, value = imp.arg(node, 0, "input"), imp.arg(node, 1, "mask"), imp.arg(node, 2, "value")
    dtype = imp.out.dtype_of(x)
    if isinstance(value, Expr):
        return imp.out.emit(relax_op.where(mask, value, x))
    fill_dtype = "void"
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)) and "float" not in dtype:
        fill_dtype = "float32"  # an infinity makes the result float (as TVM decides)
    filled = imp.out.emit(relax_op.full_like(x, const(value, dtype if fill_dtype == "void" else fill_dtype),
                                             dtype=fill_dtype))
    if fill_dtype != "void":
        x = imp.out.emit(relax_op.astype(x, dtype=fill_dtype))
    return imp.out.emit(relax_op.where(mask, filled, x))


def _trilu(build: Callable[..., Expr]) -> Converter:
    def convert(imp: ExportedProgramImporter, node: Any) -> Var:
        return imp.out.emit(build(imp.arg(node, 0, "input"), int(imp.arg(node, 1, "diagonal", 0))))

    return convert


_register("tril.default")(_trilu(relax_op.tril))
_register("triu.default")(_trilu(relax_op.triu))


# ==================================================================== attention and the rest
@_register("scaled_dot_product_attention.default")
def _sdpa(imp: ExportedProgramImporter, node: Any) -> Var:
    # sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False)
    q, k, v = (imp.arg(node, i, name) for i, name in enumerate(("query", "key", "value")))
    mask = imp.arg(node, 3, "attn_mask", None)
    dropout = imp.arg(node, 4, "dropout_p", 0.0)
    if dropout != 0.0:
        raise FrontendError(f"from_exported_program: {node.name!r} has attention dropout (dropout_p={dropout}); "
                            f"inference needs dropout_p=0.0")
    if node.kwargs.get("enable_gqa", False):
        raise FrontendError(f"from_exported_program: {node.name!r}: grouped-query attention (enable_gqa) is not supported")
    causal = "TopLeft" if imp.arg(node, 5, "is_causal", False) else None
    scale = node.kwargs.get("scale")
    rank = len(imp.out.shape_of(q))
    if rank not in (2, 3, 4):
        raise FrontendError(f"from_exported_program: {node.name!r}: attention of {rank}-D tensors; "
                            f"(batch, heads, sequence, dim) or fewer axes are supported")
    # R.nn.attention reads (batch, sequence, heads, dim): move torch's heads axis, or add the missing ones
    if rank == 4:
        q, k, v = (imp.out.emit(relax_op.permute_dims(t, axes=[0, 2, 1, 3])) for t in (q, k, v))
    else:
        axes = [0, 2] if rank == 2 else [2]
        q, k, v = (imp.out.emit(relax_op.expand_dims(t, axis=axes)) for t in (q, k, v))
    if mask is None:
        out = imp.out.emit(relax_op.nn.attention(q, k, v, scale=scale, causal_mask=causal))
    else:
        out = imp.out.emit(relax_op.nn.attention_bias(q, k, v, _attention_bias(imp, mask, q, rank),
                                                      scale=scale, causal_mask=causal))
    if rank == 4:
        return imp.out.emit(relax_op.permute_dims(out, axes=[0, 2, 1, 3]))
    return imp.out.emit(relax_op.squeeze(out, axis=[0, 2] if rank == 2 else [2]))


def _attention_bias(imp: ExportedProgramImporter, mask: Expr, q: Expr, rank: int) -> Expr:
    """torch's mask as the 4-D (batch, heads, sequence, key) additive bias TVM's attention takes:
    a boolean mask keeps its true positions (0) and drops the others (-inf)."""
    dtype = imp.out.dtype_of(q)
    if imp.out.dtype_of(mask) == "bool":
        mask = imp.out.emit(relax_op.where(mask, const(0.0, dtype), const(-math.inf, dtype)))
    shape = list(imp.out.shape_of(mask))
    if rank == 3 and len(shape) == 3:  # (batch, sequence, key): the heads axis goes between
        shape = shape[:1] + [1] + shape[1:]
    if len(shape) < 4:
        shape = [1] * (4 - len(shape)) + shape
    if shape == list(imp.out.shape_of(mask)):
        return mask
    return imp.out.emit(relax_op.reshape(mask, tuple(shape)))


@_register("native_dropout.default")
def _native_dropout(imp: ExportedProgramImporter, node: Any) -> Expr:
    # (output, mask); an exported eval-mode model reads only the output, which is the input
    return Tuple([imp.arg(node, 0, "input")])


@_register("baddbmm.default")
def _baddbmm(imp: ExportedProgramImporter, node: Any) -> Expr:
    # baddbmm(input, batch1, batch2, *, beta=1, alpha=1) = beta * input + alpha * batch1 @ batch2
    x, a, b = imp.arg(node, 0, "input"), imp.arg(node, 1, "batch1"), imp.arg(node, 2, "batch2")
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    result = None
    if alpha != 0:
        result = imp.out.emit(relax_op.matmul(a, b, out_dtype=imp.out.dtype_of(a)))
        if alpha != 1:
            result = imp.out.emit(relax_op.multiply(result, imp.out.scalar(alpha, result)))
    if beta != 0:
        bias = x if beta == 1 else imp.out.emit(relax_op.multiply(x, imp.out.scalar(beta, x)))
        result = bias if result is None else imp.out.emit(relax_op.add(result, bias))
    return result

