"""Numpy evaluation of tensor expressions and of the block-structured TIR they become.

``evaluate(tensor, {placeholder: array})`` computes a TE tensor with numpy: each compute is
evaluated at once over a grid of its indices (``np.arange`` per axis, combined by
broadcasting); a reduction adds its reduce axes as extra grid dimensions and reduces over them
(``np.sum``/``max``/``min``/``prod``; any other reducer folds over the reduce positions).

``evaluate_prim_func(func, inputs)`` runs a PrimFunc of blocks under loop nests (what
``create_prim_func``, LegalizeOps and FuseTIR produce): the loops above a block become grid
dimensions too; reduction loops are reduced with numpy when the block is a plain ``+``/max/
min/``*`` update, and iterated otherwise.  Both are the reference against which generated code
is tested, and FoldConstant's way of computing calls on constants."""
from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import tir
from ..ir.scalar_ops import NUMPY_BINARY, numpy_division, select_max, select_min
from ..ir.dtype import to_numpy_dtype
from ..ir.empty_reductions import guard_empty_reductions
from ..ir.intrinsics import intrinsic_of_op
from ..ir.node import node_fields
from .create import topo_order
from .expr import expr_vars
from .tensor import CommReducer, ComputeOp, PlaceholderOp, Reduce, Tensor
from .tensor import max as _max_reducer
from .tensor import min as _min_reducer
from .tensor import prod as _prod_reducer
from .tensor import sum as _sum_reducer

__all__ = ["evaluate", "evaluate_prim_func", "eval_expr"]

Env = dict  # id(tir.Var) -> value (a Python/numpy scalar or an array broadcastable to the grid)
LoadFn = Callable[[tir.Buffer, tuple], np.ndarray]


# ====================================================================== expressions
def _np_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of a scalar dtype."""
    return to_numpy_dtype(dtype)


def _select_reduce(state: Any, values: np.ndarray, valid: Any, axes: tuple[int, ...], is_max: bool) -> np.ndarray:
    """``acc = T.max(acc, x)`` (or ``T.min``) from ``acc = state`` over the valid ``values`` along
    ``axes``, in row-major order, as the compiled loop computes it: a NaN ``x`` makes ``acc`` NaN and
    the next ``x`` replaces that NaN, so the result is NaN when the last value is NaN and otherwise
    the extreme of ``state`` and the values after the last NaN. Result with ``axes`` kept (size 1)."""
    values = np.asarray(values)
    valid = np.broadcast_to(valid, values.shape)
    n = len(axes)
    dest = tuple(range(values.ndim - n, values.ndim))
    v = np.moveaxis(values, axes, dest)
    v = v.reshape(v.shape[:values.ndim - n] + (-1,))
    ok = np.moveaxis(valid, axes, dest).reshape(v.shape)
    kept = np.expand_dims(np.empty(v.shape[:-1], dtype=np.int8), tuple(sorted(axes))).shape
    acc = np.broadcast_to(state, kept).reshape(v.shape[:-1]).astype(v.dtype)
    if not np.issubdtype(v.dtype, np.floating):
        fold = np.maximum if is_max else np.minimum
        ident = np.iinfo(v.dtype).min if is_max else np.iinfo(v.dtype).max
        out = fold(acc, fold.reduce(np.where(ok, v, np.array(ident, v.dtype)), axis=-1, initial=ident))
        return out.reshape(kept)
    pos = np.arange(v.shape[-1])
    nan = ok & np.isnan(v)
    last_nan = np.max(np.where(nan, pos, -1), axis=-1, initial=-1)
    last = np.max(np.where(ok, pos, -1), axis=-1, initial=-1)
    after = ok & (pos > last_nan[..., None])
    ident = np.array(-np.inf if is_max else np.inf, v.dtype)
    extreme = (np.max if is_max else np.min)(np.where(after, v, ident), axis=-1, initial=ident)
    pick = select_max if is_max else select_min
    seeded = np.where(after.any(axis=-1), pick(acc, extreme), acc)  # no NaN: the state takes part
    if v.shape[-1] == 0:
        return acc.reshape(kept)
    nan_value = np.take_along_axis(v, np.maximum(last_nan, 0)[..., None], axis=-1)[..., 0]
    out = np.where(last_nan < 0, seeded, np.where(last_nan == last, nan_value, extreme))
    return out.astype(v.dtype).reshape(kept)


def eval_expr(e: tir.PrimExpr, env: Env, load: LoadFn) -> Any:
    """The value of a TIR expression, elementwise over the arrays bound in ``env``.

    Each node means what ``ir/scalar_ops.py`` (operators) and ``ir/intrinsics.py`` (calls) say,
    as for every other evaluator; but this one walks the tree instead of compiling it with
    ``ir/scalar_eval.py``: each expression is evaluated once over a whole index grid, so a
    closure per node would be built for a single use (more work, not less), and lets bind arrays
    in a copy of ``env`` rather than frame slots. ``T.if_then_else`` computes both sides here
    (loads are clamped, see ``_gather``), as a grid has both kinds of positions."""
    t = type(e)
    if t is tir.IntImm or t is tir.FloatImm:
        return np.array(e.value, dtype=_np_dtype(e.dtype))
    if t is tir.Var or t is tir.SizeVar:
        try:
            return env[id(e)]
        except KeyError:
            raise ValueError(f"the variable {e.name} has no value (an unbound symbolic size?)") from None
    if t is tir.BufferLoad:
        return load(e.buffer, tuple(eval_expr(i, env, load) for i in e.indices))
    if t in NUMPY_BINARY:
        out = NUMPY_BINARY[t](eval_expr(e.a, env, load), eval_expr(e.b, env, load))
        return np.asarray(out).astype(_np_dtype(e.dtype), copy=False)
    if isinstance(e, (tir.Div, tir.Mod, tir.FloorDiv, tir.FloorMod)):
        return _division(e, eval_expr(e.a, env, load), eval_expr(e.b, env, load))
    if t is tir.Not:
        return np.logical_not(eval_expr(e.a, env, load))
    if t is tir.Select:
        return np.where(eval_expr(e.condition, env, load), eval_expr(e.true_value, env, load),
                        eval_expr(e.false_value, env, load)).astype(_np_dtype(e.dtype), copy=False)
    if t is tir.Cast:
        return _cast(eval_expr(e.value, env, load), e.dtype)
    if t is tir.Let:
        inner = dict(env)
        inner[id(e.var)] = eval_expr(e.value, env, load)
        return eval_expr(e.body, inner, load)
    if t is tir.Call:
        info = intrinsic_of_op(e.op)
        if info is None or info.numpy is None:  # the builtins have no numpy meaning
            raise NotImplementedError(f"evaluating the intrinsic {e.op} is not supported")
        with np.errstate(all="ignore"):
            out = info.numpy(*(eval_expr(x, env, load) for x in e.args))
        return np.asarray(out).astype(_np_dtype(e.dtype), copy=False)
    raise NotImplementedError(f"evaluating {type(e).__name__} is not supported")


def _division(e: tir.PrimExpr, a: Any, b: Any) -> np.ndarray:
    """Div/Mod (truncating) and FloorDiv/FloorMod, on integers or floats."""
    dt = _np_dtype(e.dtype)
    is_float = np.issubdtype(dt, np.floating)
    a, b = np.asarray(a), np.asarray(b)
    if not is_float:
        b = np.where(b == 0, 1, b)  # never trap: TVM's behaviour there is undefined
    with np.errstate(all="ignore"):
        out = numpy_division(type(e), is_float)(a, b)
    return np.asarray(out).astype(dt, copy=False)


def _cast(value: Any, dtype: str) -> np.ndarray:
    """``value`` converted as TIR converts (floats to ints truncate; anything non-zero is True)."""
    dt = _np_dtype(dtype)
    arr = np.asarray(value)
    if dt == np.bool_:
        return arr != 0
    with np.errstate(all="ignore"):
        return arr.astype(dt)


def _gather(arr: np.ndarray, indices: tuple) -> np.ndarray:
    """``arr[indices]`` with index arrays broadcast together; out-of-range indices are clamped
    (``if_then_else`` evaluates both sides, including reads of the padding it guards)."""
    if not indices:
        return arr[()]
    if arr.size == 0:  # an empty buffer is only read on the side if_then_else does not take
        return np.zeros(np.broadcast_shapes(*(np.shape(i) for i in indices)), dtype=arr.dtype)
    if _identity_grid(indices, arr.shape):
        return _read_only(arr)  # the whole buffer in order: a view (stores copy it anyway)
    idx = tuple(np.clip(np.asarray(i, dtype=np.int64), 0, max(n - 1, 0)) for i, n in zip(indices, arr.shape))
    return arr[idx]


def _read_only(arr: np.ndarray) -> np.ndarray:
    """A view of ``arr`` that cannot be written through."""
    view = arr.view()
    view.flags.writeable = False
    return view


def _owned(value: Any) -> Any:
    """``value``, copied when it is a read-only view (of a buffer a later store may change)."""
    return np.array(value) if isinstance(value, np.ndarray) and not value.flags.writeable else value


def _identity_grid(indices: Sequence[Any], shape: tuple[int, ...]) -> bool:
    """Whether index k is ``arange(shape[k])`` laid along grid axis k for every k (a store of a
    whole buffer in order, as an elementwise or layout kernel writes its output)."""
    rank = len(shape)
    if len(indices) != rank:
        return False
    for k, (i, n) in enumerate(zip(indices, shape)):
        a = np.asarray(i)
        if a.size != n or a.ndim != rank or a.shape[k] != n or not np.array_equal(a.reshape(-1), np.arange(n)):
            return False
    return True


def _permuted_store(indices: Sequence[Any], arr: np.ndarray, value: np.ndarray) -> bool:
    """``arr[indices] = value`` done as a reshape and a transpose, when every index is one digit
    (``v // s % r``) of one grid axis and the digits of each axis are all of it: a bijection onto
    ``arr`` such as a layout transform's (``out[o // 16, i, o % 16] = A[o, i]``). False (nothing
    written) for any other store."""
    grid = value.shape
    if arr.size != value.size or len(indices) != arr.ndim:
        return False
    digits: list[list[tuple[int, int, int]]] = [[] for _ in grid]  # per axis: (stride, dim, radix)
    fixed = []  # dims of one element, always index 0
    for k, (i, r) in enumerate(zip(indices, arr.shape)):
        a = np.asarray(i)
        if a.dtype.kind not in "iu" or (a.size > 1 and a.ndim != len(grid)):
            return False
        f = a.reshape(-1)
        if a.size == 1 or not (f != f[0]).any():
            if r != 1 or f[0] != 0:
                return False
            fixed.append(k)
            continue
        axes = [ax for ax, n in enumerate(a.shape) if n > 1]
        if len(axes) != 1:
            return False
        ax = axes[0]
        stride = int(np.flatnonzero(f != f[0])[0])
        if not np.array_equal(f, np.arange(grid[ax]) // stride % r):
            return False
        digits[ax].append((stride, k, r))
    shape, order = [], []
    for ax, found in enumerate(digits):
        found.sort()
        size = 1
        for stride, _, r in found:  # least significant first: each digit's stride is the product below it
            if stride != size:
                return False
            size *= r
        if size != grid[ax]:
            return False
        shape += [r for _, _, r in reversed(found)]
        order += [k for _, k, _ in reversed(found)]
    shape += [1] * len(fixed)
    order += fixed
    arr[...] = value.reshape(shape).transpose([order.index(k) for k in range(arr.ndim)])
    return True


def _flat_index(indices: Sequence[Any], arr: np.ndarray) -> np.ndarray | None:
    """The row-major offsets of a grid of in-range indices into C-contiguous ``arr`` (one pass over
    the broadcast grid); None when an index is negative or past its dimension (numpy's own
    indexing then wraps or raises) or ``arr`` is not contiguous."""
    if not arr.flags.c_contiguous or len(indices) != arr.ndim or arr.size == 0:
        return None
    idx = [np.asarray(i) for i in indices]
    if any(a.dtype.kind not in "iu" for a in idx):
        return None
    try:
        return np.ravel_multi_index(tuple(idx), arr.shape)
    except (ValueError, TypeError):  # out of range, or an index type numpy will not cast
        return None


# ====================================================================== TE
def _shape_values(shape: Sequence[tir.PrimExpr], env: Env) -> tuple[int, ...]:
    """Concrete sizes of a shape under the bindings of its symbolic variables."""
    return tuple(int(eval_expr(d, env, _no_load)) for d in shape)


def _no_load(buf: tir.Buffer, idx: tuple) -> np.ndarray:
    """Loads are not allowed here (shapes and reducer bodies read no buffer)."""
    raise ValueError(f"a shape cannot read the buffer {buf.name}")


def _bind_shape(shape: Sequence[tir.PrimExpr], actual: Sequence[int], env: Env, what: str) -> None:
    """Bind the symbolic dims of ``shape`` to ``actual`` sizes; ValueError on a mismatch."""
    if len(shape) != len(actual):
        raise ValueError(f"{what} has {len(shape)} dimensions, got an array of shape {tuple(actual)}")
    for dim, n in zip(shape, actual):
        if isinstance(dim, tir.Var) and id(dim) not in env:
            env[id(dim)] = np.array(n, dtype=_np_dtype(dim.dtype))
    for dim, n in zip(shape, actual):
        if int(eval_expr(dim, env, _no_load)) != n:
            raise ValueError(f"{what} has shape {_shape_values(shape, env)}, got an array of shape {tuple(actual)}")


_FAST_REDUCERS: dict[int, Callable[..., np.ndarray]] = {
    id(_sum_reducer): np.sum, id(_max_reducer): np.max, id(_min_reducer): np.min, id(_prod_reducer): np.prod,
}


def evaluate(tensors: Tensor | Sequence[Tensor], inputs: dict[Tensor, Any],
             sizes: dict[Any, int] | None = None) -> np.ndarray | list[np.ndarray]:
    """The values of TE ``tensors`` given arrays for the placeholders they depend on.

    Symbolic sizes are read from the input arrays' shapes; ``sizes`` gives the others
    (``{n: 4}``, keys are ``te.var``s or ``tir.Var``s)."""
    single = isinstance(tensors, Tensor)
    outs = [tensors] if single else list(tensors)
    env: Env = {}
    for k, v in (sizes or {}).items():
        key = getattr(k, "expr", k)
        env[id(key)] = np.array(v, dtype=_np_dtype(key.dtype))
    values: dict[int, np.ndarray] = {}  # id(template buffer) -> array
    for t, arr in inputs.items():
        a = np.asarray(arr)
        _bind_shape(t.shape, a.shape, env, f"the input {t.name}")
        values[id(t.buffer)] = a.astype(_np_dtype(t.dtype), copy=False)
    for t in topo_order(outs):
        op = t.op
        if id(t.buffer) in values:
            continue
        if isinstance(op, PlaceholderOp):
            raise ValueError(f"no array was given for the input {t.name}")
        assert isinstance(op, ComputeOp)
        for u, value in zip(op.outputs, _compute(op, env, values)):
            values[id(u.buffer)] = value
    results = [values[id(t.buffer)] for t in outs]
    return results[0] if single else results


def _compute(op: ComputeOp, env: Env, values: dict[int, np.ndarray]) -> list[np.ndarray]:
    """The outputs of one compute, evaluated over its index grid."""
    shape = _shape_values([a.dom.extent for a in op.axis], env)
    red = op.reduce_axis
    red_extents = [int(eval_expr(a.dom.extent, env, _no_load)) for a in red]
    rank = len(shape) + len(red)
    grid = dict(env)
    for i, a in enumerate(list(op.axis) + list(red)):
        lo = int(eval_expr(a.dom.min, env, _no_load))
        n = (list(shape) + red_extents)[i]
        dims = [1] * rank
        dims[i] = n
        grid[id(a.var)] = np.arange(lo, lo + n, dtype=_np_dtype(a.var.dtype)).reshape(dims)

    def load(buf: tir.Buffer, idx: tuple) -> np.ndarray:
        try:
            arr = values[id(buf)]
        except KeyError:
            raise ValueError(f"{op.name} reads {buf.name}, which is not computed") from None
        return _gather(arr, idx)

    first = op.body[0]
    if not isinstance(first, Reduce):
        full = tuple(shape) + (1,) * len(red)
        return [np.broadcast_to(eval_expr(b, grid, load), full).reshape(shape).astype(_np_dtype(b.dtype))
                for b in op.body]
    axes = tuple(range(len(shape), rank))
    full = tuple(shape) + tuple(red_extents)
    sources = [np.broadcast_to(eval_expr(s, grid, load), full) for s in first.source]
    cond = np.broadcast_to(eval_expr(first.condition, grid, load), full)
    identity = [eval_expr(v, env, load) for v in first.identity()]
    fast = _FAST_REDUCERS.get(id(first.combiner))
    if fast is not None and len(sources) == 1:
        dt = _np_dtype(first.dtype)
        if fast in (np.max, np.min):
            out = _select_reduce(identity[0], sources[0].astype(dt), cond, axes, fast is np.max)
            return [out.reshape(shape)]
        return [fast(sources[0], axis=axes, where=cond, initial=identity[0]).astype(dt).reshape(shape)]
    return _fold(first.combiner, sources, cond, identity, shape, first)


def _fold(combiner: CommReducer, sources: list[np.ndarray], cond: np.ndarray, identity: list[Any],
          shape: tuple[int, ...], red: Reduce) -> list[np.ndarray]:
    """A reduction by any reducer: fold the values at each reduce position in order."""
    dts = [_np_dtype(s.dtype) for s in red.source]
    state = [np.broadcast_to(v, shape).astype(dt) for v, dt in zip(identity, dts)]
    lhs = [tir.Var(f"lhs{i}", s.dtype) for i, s in enumerate(red.source)]
    rhs = [tir.Var(f"rhs{i}", s.dtype) for i, s in enumerate(red.source)]
    combined = combiner.combine(lhs, rhs)
    red_shape = sources[0].shape[len(shape):]
    for pos in itertools.product(*(range(n) for n in red_shape)):
        key = (Ellipsis, *pos)
        env: Env = {id(v): s for v, s in zip(lhs, state)}
        env.update({id(v): src[key] for v, src in zip(rhs, sources)})
        mask = cond[key]
        new = [np.asarray(eval_expr(c, env, _no_load)) for c in combined]
        state = [np.where(mask, n, s).astype(dt) for n, s, dt in zip(new, state, dts)]
    return [np.asarray(s).reshape(shape) for s in state]


# ====================================================================== TIR
class _Machine:
    """Executes block-structured TIR on numpy arrays."""

    def __init__(self, buffers: dict[int, np.ndarray], env: Env) -> None:
        self.buffers = buffers  # id(tir.Buffer) -> its array
        self.env = env

    # ---- memory
    def load(self, buf: tir.Buffer, idx: tuple) -> np.ndarray:
        """The values of ``buf`` at (grids of) indices."""
        return _gather(self.array(buf), idx)

    def array(self, buf: tir.Buffer) -> np.ndarray:
        """The array of a buffer."""
        try:
            return self.buffers[id(buf)]
        except KeyError:
            raise ValueError(f"the buffer {buf.name} is not allocated") from None

    def alloc(self, buf: tir.Buffer, env: Env) -> None:
        """Allocate a zeroed array for ``buf``."""
        self.buffers[id(buf)] = np.zeros(_shape_values(buf.shape, env), dtype=_np_dtype(buf.dtype))

    def store(self, s: tir.BufferStore, env: Env, mask: Any) -> None:
        """A (masked) store of a grid of values."""
        arr = self.array(s.buffer)
        if not arr.flags.writeable:  # an input, passed in without a copy: copied on its first write
            arr = self.buffers[id(s.buffer)] = arr.copy()
        value = eval_expr(s.value, env, self.load)
        idx = [eval_expr(i, env, self.load) for i in s.indices]
        if not idx:
            if np.all(mask):
                arr[()] = np.asarray(value).reshape(-1)[-1] if np.ndim(value) else value
            return
        parts = np.broadcast_arrays(value, mask, *idx)
        value_b, mask_b, idx_b = parts[0], parts[1], parts[2:]
        if mask_b.all():
            if value_b.shape == arr.shape and _identity_grid(idx, arr.shape):
                arr[...] = value_b  # every element once, in order: a plain copy, not a scatter
                return
            if _permuted_store(idx, arr, value_b):  # a layout change: reshape and transpose
                return
            flat = _flat_index(idx, arr)
            if flat is not None:  # one index array built from the small ones, not N broadcast ones
                arr.reshape(-1)[np.broadcast_to(flat, value_b.shape)] = value_b
            else:
                arr[tuple(np.asarray(i, dtype=np.int64) for i in idx_b)] = value_b
        else:
            arr[tuple(np.asarray(i, dtype=np.int64)[mask_b] for i in idx_b)] = value_b[mask_b]

    # ---- statements
    def run(self, s: tir.Stmt, env: Env, mask: Any = True) -> None:
        """Execute a statement under ``mask``."""
        t = type(s)
        if t is tir.SeqStmt:
            for x in s.seq:
                self.run(x, env, mask)
        elif t is tir.BufferStore:
            self.store(s, env, mask)
        elif t is tir.LetStmt:
            inner = dict(env)
            inner[id(s.var)] = _owned(eval_expr(s.value, env, self.load))
            self.run(s.body, inner, mask)
        elif t is tir.IfThenElse:
            cond = eval_expr(s.condition, env, self.load)
            self.run(s.then_case, env, np.logical_and(mask, cond))
            if s.else_case is not None:
                self.run(s.else_case, env, np.logical_and(mask, np.logical_not(cond)))
        elif t is tir.For:
            self.loop_nest(s, env, mask)
        elif t is tir.BlockRealize:
            self.block(s, env, mask)
        elif t is tir.Evaluate:
            return
        elif t in (tir.DeclBuffer,):
            if id(s.buffer) not in self.buffers:
                self.alloc(s.buffer, env)
            self.run(s.body, env, mask)
        elif t is tir.AttrStmt:
            self.run(s.body, env, mask)
        elif t is tir.AssertStmt:
            # A failed check is an error (ValueError: FoldConstant then leaves the call to run time).
            cond = eval_expr(s.condition, env, self.load)
            if not np.all(np.logical_or(np.logical_not(mask), cond)):
                msg = s.message.value if isinstance(s.message, tir.StringImm) else "assertion failed"
                raise ValueError(f"assertion failed: {msg}")
            self.run(s.body, env, mask)
        else:
            raise NotImplementedError(f"evaluating a {t.__name__} statement is not supported")

    def loop_nest(self, s: tir.For, env: Env, mask: Any) -> None:
        """A rectangular nest of loops around a block runs as one vectorised block; other loops
        run one iteration at a time (masked where their bounds vary over the grid)."""
        loops: list[tir.For] = []
        inner: tir.Stmt = s
        while type(inner) is tir.For:
            loops.append(inner)
            inner = inner.body
        nest = {id(lp.loop_var) for lp in loops}
        rectangular = not any(id(v) in nest for lp in loops for v in (*expr_vars(lp.min), *expr_vars(lp.extent)))
        if (type(inner) is tir.BlockRealize and rectangular and np.ndim(mask) == 0
                and all(np.ndim(v) == 0 for v in env.values())):
            self.vector_nest(loops, inner, env, mask)
            return
        lo = eval_expr(s.min, env, self.load)
        hi = np.add(lo, eval_expr(s.extent, env, self.load))
        for k in range(int(np.min(lo)), int(np.max(hi))):
            step = dict(env)
            step[id(s.loop_var)] = np.array(k, dtype=_np_dtype(s.loop_var.dtype))
            self.run(s.body, step, np.logical_and(mask, np.logical_and(np.less_equal(lo, k), np.less(k, hi))))

    def vector_nest(self, loops: list[tir.For], realize: tir.BlockRealize, env: Env, mask: Any) -> None:
        """Loops over one block: spatial loops are grid dimensions; reduction loops too when the
        block is a plain reduction update, else they are iterated."""
        block = realize.block
        red_vars = {id(v) for iv, value in zip(block.iter_vars, realize.iter_values)
                    if iv.iter_type != tir.IterType.DataPar for v in expr_vars(value)}
        red_loops = [lp for lp in loops if id(lp.loop_var) in red_vars]
        update = _plain_update(block) if red_loops else None
        vec_loops = loops if update is not None or not red_loops else [lp for lp in loops if lp not in red_loops]
        seq_loops = [] if update is not None else red_loops
        rank = len(vec_loops)
        grid = dict(env)
        ranges = {}
        for lp in loops:
            lo = eval_expr(lp.min, grid, self.load)
            ext = eval_expr(lp.extent, grid, self.load)
            ranges[id(lp.loop_var)] = (int(lo), int(ext))
        for i, lp in enumerate(vec_loops):
            lo, n = ranges[id(lp.loop_var)]
            dims = [1] * rank
            dims[i] = n
            grid[id(lp.loop_var)] = np.arange(lo, lo + n, dtype=_np_dtype(lp.loop_var.dtype)).reshape(dims)
        if update is not None:
            self.reduce_block(realize, grid, mask, [vec_loops.index(lp) for lp in red_loops], update)
            return
        for pos in itertools.product(*(range(ranges[id(lp.loop_var)][0],
                                             sum(ranges[id(lp.loop_var)])) for lp in seq_loops)):
            step = dict(grid)
            for lp, k in zip(seq_loops, pos):
                step[id(lp.loop_var)] = np.array(k, dtype=_np_dtype(lp.loop_var.dtype))
            self.block(realize, step, mask)

    def bind_block(self, realize: tir.BlockRealize, env: Env, mask: Any) -> tuple[Env, Any]:
        """The block's iterators bound to their values, and the mask with its predicate."""
        block = realize.block
        inner = dict(env)
        for iv, value in zip(block.iter_vars, realize.iter_values):
            inner[id(iv.var)] = _owned(eval_expr(value, env, self.load))
        pred = eval_expr(realize.predicate, env, self.load)
        for buf in block.alloc_buffers:
            self.alloc(buf, env)
        return inner, np.logical_and(mask, pred)

    def block(self, realize: tir.BlockRealize, env: Env, mask: Any) -> None:
        """One block instance (or a grid of them): init at the first reduction step, then the body."""
        block = realize.block
        if block.match_buffers:
            raise NotImplementedError("evaluating blocks with match_buffer is not supported")
        inner, m = self.bind_block(realize, env, mask)
        if block.init is not None:
            first = True
            for iv in block.iter_vars:
                if iv.iter_type != tir.IterType.DataPar:
                    first = np.logical_and(first, np.equal(inner[id(iv.var)], eval_expr(iv.dom.min, inner, self.load)))
            self.run(block.init, inner, np.logical_and(m, first))
        self.run(block.body, inner, m)

    def reduce_block(self, realize: tir.BlockRealize, grid: Env, mask: Any, red_dims: list[int],
                     update: tuple[Any, tir.BufferStore, tir.PrimExpr]) -> None:
        """A block ``out[i] = out[i] (+|max|min|*) rhs`` over a grid: init, then one numpy reduction."""
        kind, store, rhs = update
        inner, m = self.bind_block(realize, grid, mask)
        # The first reduction step (reduction loops at their first value): where init runs and
        # where the one combined update is stored.
        first_grid = dict(grid)
        for d in red_dims:
            for key, arr in grid.items():
                if isinstance(arr, np.ndarray) and arr.ndim > d and arr.shape[d] > 1:
                    first_grid[key] = np.take(arr, [0], axis=d)
        first, first_m = self.bind_block(realize, first_grid, mask)
        block = realize.block
        if block.init is not None:
            at_start: Any = True
            for iv in block.iter_vars:
                if iv.iter_type != tir.IterType.DataPar:
                    at_start = np.logical_and(at_start, np.equal(first[id(iv.var)],
                                                                 eval_expr(iv.dom.min, first, self.load)))
            self.run(block.init, first, np.logical_and(first_m, at_start))
        arr = self.array(store.buffer)
        dt = arr.dtype
        values = eval_expr(rhs, inner, self.load)
        shape = np.broadcast_shapes(np.shape(values), np.shape(m), *(np.shape(grid[k]) for k in grid))
        valid = np.broadcast_to(m, shape)
        axes = tuple(red_dims)
        idx = tuple(eval_expr(i, first, self.load) for i in store.indices)
        new_value = tir.Var("reduced", store.buffer.dtype)
        env = dict(first)
        if kind in (select_max, select_min):
            env[id(new_value)] = _select_reduce(_gather(arr, idx), np.broadcast_to(values, shape).astype(dt),
                                                valid, axes, kind is select_max)
        else:
            ident = np.array(0 if kind is np.add else 1, dtype=dt)
            reduced = kind.reduce(np.where(valid, np.broadcast_to(values, shape), ident).astype(dt),
                                  axis=axes, keepdims=True)
            env[id(new_value)] = kind(_gather(arr, idx), reduced).astype(dt)
        self.store(tir.BufferStore(store.buffer, new_value, store.indices), env,
                   np.any(valid, axis=axes, keepdims=True))


_UPDATES: dict[Any, Any] = {tir.Add: np.add, tir.Max: select_max, tir.Min: select_min, tir.Mul: np.multiply}


def _plain_update(block: tir.Block) -> tuple[Any, tir.BufferStore, tir.PrimExpr] | None:
    """``(combine, store, rhs)`` when the block body is ``out[i] = out[i] <op> rhs`` with ``rhs``
    not reading ``out`` (so the reduction can be done by numpy at once), else None."""
    body = block.body
    if type(body) is not tir.BufferStore:
        return None
    kind = _UPDATES.get(type(body.value))
    if kind is None:
        return None
    lhs, rhs = body.value.a, body.value.b
    if not (type(lhs) is tir.BufferLoad and lhs.buffer is body.buffer and len(lhs.indices) == len(body.indices)
            and all(a is b for a, b in zip(lhs.indices, body.indices))):
        return None
    reads_out: list[bool] = []

    def walk(x: Any) -> None:
        if isinstance(x, tir.BufferLoad) and x.buffer is body.buffer:
            reads_out.append(True)
        if isinstance(x, tir.PrimExpr):
            for f in node_fields(type(x)):
                v = getattr(x, f)
                for item in v if isinstance(v, tuple) else (v,):
                    if isinstance(item, tir.PrimExpr):
                        walk(item)

    walk(rhs)
    return None if reads_out else (kind, body, rhs)


def evaluate_prim_func(func: tir.PrimFunc, inputs: Sequence[Any], scalars: Sequence[int] = (),
                       out_shapes: Sequence[Sequence[int]] | None = None) -> list[np.ndarray]:
    """Run ``func`` as ``R.call_tir`` would: ``inputs`` are arrays for its leading buffer
    parameters, the remaining buffer parameters are outputs (allocated and returned in order),
    and ``scalars`` give its scalar parameters (``tir_vars``). ``out_shapes`` (the call's
    ``out_sinfo``) is needed when an output size is a variable no input defines."""
    env: Env = {}
    buffers: dict[int, np.ndarray] = {}
    buffer_params = [p for p in func.params if p in func.buffer_map]
    scalar_params = [p for p in func.params if p not in func.buffer_map]
    if len(inputs) > len(buffer_params):
        raise ValueError(f"{len(inputs)} inputs for a function of {len(buffer_params)} buffer parameters")
    if len(scalars) != len(scalar_params):
        raise ValueError(f"the function takes {len(scalar_params)} scalar parameters, got {len(scalars)}")
    for p, v in zip(scalar_params, scalars):
        env[id(p)] = np.array(v, dtype=_np_dtype(p.dtype))
    for p, arr in zip(buffer_params, inputs):
        buf = func.buffer_map[p]
        a = np.asarray(arr)
        _bind_shape(buf.shape, a.shape, env, f"the parameter {buf.name}")
        # No copy: a read-only view (or the converted array); a store to it copies it first.
        buffers[id(buf)] = _read_only(a.astype(_np_dtype(buf.dtype), copy=False))
    out_params = buffer_params[len(inputs):]
    if out_shapes is not None:
        for p, shape in zip(out_params, out_shapes):
            buf = func.buffer_map[p]
            _bind_shape(buf.shape, tuple(shape), env, f"the output {buf.name}")
    outputs = []
    for p in out_params:
        buf = func.buffer_map[p]
        out = np.zeros(_shape_values(buf.shape, env), dtype=_np_dtype(buf.dtype))
        buffers[id(buf)] = out
        outputs.append(out)
    _Machine(buffers, env).run(guard_empty_reductions(func.body), env)
    return outputs
