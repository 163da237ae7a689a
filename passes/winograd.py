"""WinogradConv2d: a packed 3x3 stride-1 convolution with constant weights computed as Winograd's
F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016): each 2x2
block of outputs takes 16 multiply-adds per input and output channel instead of the direct conv's
36, most of the work becoming small matmuls.

A conv ``R.nn.conv2d(x, W)`` in the packed layouts PackConv2d writes (``x`` NCHW{b}c, ``W``
OIHW{b}i{o}o a constant, the output NCHW{o}c), with padding 1 on every side, and the chain of
element-wise ops it feeds (its bias, a per-channel scale, a residual add, relu: each value used
once) become one call::

    y = R.call_tir(winograd_conv2d, (x, U, *epilogue operands))   # U = G W G^T, a constant

whose kernel (written here, already scheduled: ``tir.is_scheduled``) computes B^T d B of each
4x4 input tile (the zero border included), the 16 matmuls V[e] U[e] in register tiles, and
A^T m A of each tile through the epilogue into the output; in tasks of one row of 2x2 output
tiles whose data stay in the core's caches (large maps), or of one block of output channels
(small maps with many channels, where U is the larger operand). Where the direct conv already runs
near the CPU's peak this halves a conv's time (resnet18's 56x56 64-channel convs 2.05 -> 1.05 ms
at 1 thread, AMD EPYC znver4).

Applied to convs of at least WINOGRAD_MIN_CHANNELS input and output channels (the matmuls'
reduction and vectors) and WINOGRAD_MIN_TILES tiles (an odd output size computes the last tile
row or column in part).
``PassContext(disabled_pass=["WinogradConv2d"])`` keeps the direct convs. Results agree with the
direct conv to float rounding (the transforms' entries are 0, +-1 and +-1/2)."""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import relax as rx
from ..ir import tir
from ..ir.expr_functor import ExprMutator, use_counts
from ..ir.module import IRModule
from ..ir.node import Map
from ..ir.op_api import TensorStructInfo, call_tir, const
from ..ir.struct_info import sinfo_of, static_shape
from ..ops import get_op_def
from ..te.expr import Expr, if_then_else, wrap
from .infra import ModulePass, PassContext, register_pass

__all__ = ["WinogradConv2d", "winograd_weights", "WINOGRAD_MIN_CHANNELS", "WINOGRAD_MIN_TILES"]

# The small CNN's 16 -> 32 conv (512 tiles) 179 -> 89 us at 1 thread; resnet18's 14x14 256-channel
# convs (49 tiles) 2.1 -> 1.0 ms, its 7x7 512-channel ones (16 tiles, a quarter of their outputs
# past the edge) 2.1 -> 1.75-1.9 ms.
WINOGRAD_MIN_CHANNELS = 16
WINOGRAD_MIN_TILES = 16
# Tasks of a row of tiles while U is at most this many times V, else of a block of output channels
# (each row task reads all of U): resnet18's 14x14 convs (U 4 MB, V 0.8 MB) 1-2% faster by rows, its
# 7x7 ones (U 16.8 MB, V 0.5 MB) 20% slower by rows.
WINOGRAD_ROW_TASKS_MAX_RATIO = 8
WINOGRAD_REGISTER_TILES = 14  # 14 accumulators, a weight vector and a broadcast input: within 32 registers

_CONV2D = get_op_def("relax.nn.conv2d").op
_ADD = get_op_def("relax.add").op
_MULTIPLY = get_op_def("relax.multiply").op
_RELU = get_op_def("relax.nn.relu").op

# F(2x2, 3x3): y = A^T [(G g G^T) * (B^T d B)] A for a 4x4 input tile d and a 3x3 kernel g.
_B_T = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
_A_T = ((1, 1, 1, 0), (0, 1, -1, -1))


def winograd_weights(packed: np.ndarray) -> np.ndarray:
    """U = G g G^T of OIHW{b}i{o}o weights, as (16, K/o, C, o): per tile element
    (``e = 4 * row + column``) the matmul's right operand, a column block at a time (input channels
    in packed order, ``block * b + lane``)."""
    k_blocks, c_blocks, _, _, c_lanes, k_lanes = packed.shape
    taps = np.moveaxis(packed.reshape(k_blocks, c_blocks, 9, c_lanes * k_lanes), 2, 0).reshape(9, -1)
    # U[4a + b] = sum over (i, j) of G[a, i] G[b, j] g[.., i, j]: one (16 x 9) matmul
    u = np.kron(_G, _G).astype(packed.dtype) @ taps
    return u.reshape(16, k_blocks, c_blocks * c_lanes, k_lanes)


def _packed_blocks(conv: rx.Call) -> tuple[int, int] | None:
    """(input, output) channel lanes of a conv in matching packed layouts, else None."""
    attrs = conv.attrs
    data = re.fullmatch(r"NCHW(\d+)c", str(attrs.get("data_layout") or ""))
    kernel = re.fullmatch(r"OIHW(\d+)i(\d+)o", str(attrs.get("kernel_layout") or ""))
    out = re.fullmatch(r"NCHW(\d+)c", str(attrs.get("out_layout") or ""))
    if not (data and kernel and out) or data.group(1) != kernel.group(1) or kernel.group(2) != out.group(1):
        return None
    return int(data.group(1)), int(out.group(1))


def _ints(values: Any) -> list[int]:
    return [int(getattr(v, "value", v)) for v in values]


def _winograd_shape(conv: rx.Call) -> tuple[int, int, int, int, int, int, int] | None:
    """(N, C blocks, K blocks, H, W, input lanes, output lanes) of a conv this pass rewrites, else None."""
    attrs = conv.attrs
    if _ints(attrs["strides"]) != [1, 1] or _ints(attrs["dilation"]) != [1, 1] or int(attrs["groups"]) != 1 \
            or _ints(attrs["padding"]) != [1, 1, 1, 1]:
        return None
    lanes = _packed_blocks(conv)
    data, weights = conv.args
    shape, out_shape = static_shape(sinfo_of(data)), static_shape(sinfo_of(conv))
    if lanes is None or not isinstance(weights, rx.Constant) or shape is None or out_shape is None:
        return None
    if sinfo_of(data).dtype != "float32" or sinfo_of(conv).dtype != "float32" or weights.data.dtype != np.float32:
        return None
    n, c_blocks, h, w, c_lanes = shape
    k_blocks = out_shape[1]
    if weights.data.shape != (k_blocks, c_blocks, 3, 3, c_lanes, lanes[1]):
        return None
    if c_blocks * c_lanes < WINOGRAD_MIN_CHANNELS or k_blocks * lanes[1] < WINOGRAD_MIN_CHANNELS \
            or n * ((h + 1) // 2) * ((w + 1) // 2) < WINOGRAD_MIN_TILES:
        return None
    return n, c_blocks, k_blocks, h, w, c_lanes, lanes[1]


# ---------------------------------------------------------------- the kernel as a loop nest

def _i64(value: int) -> tir.IntImm:
    return tir.IntImm("int64", value)


def _buffer(name: str, shape: Sequence[int], scope: str = "global") -> tir.Buffer:
    return tir.Buffer(name, tir.Var(name, "handle", tir.PointerType("float32", scope)), "float32",
                      tuple(_i64(d) for d in shape), scope=scope)


def _indices(indices: tuple[Any, ...]) -> tuple[tir.PrimExpr, ...]:
    return tuple(_i64(i) if isinstance(i, int) else wrap(i).expr for i in indices)


def _load(buffer: tir.Buffer, *indices: Any) -> Expr:
    return wrap(tir.BufferLoad(buffer, _indices(indices)))


def _store(buffer: tir.Buffer, value: Expr, *indices: Any) -> tir.Stmt:
    return tir.BufferStore(buffer, value.expr, _indices(indices))


def _loop(name: str, extent: int, body: Callable[[Expr], tir.Stmt], kind: str = tir.ForKind.SERIAL) -> tir.For:
    """``for <name> in range(extent): body(<name>)``, the loop variable a new one (each loop defines its own)."""
    var = tir.Var(name, "int64")
    return tir.For(var, _i64(0), _i64(extent), kind, body(wrap(var)))


def _signed_sum(terms: list[tuple[int, Expr]]) -> Expr:
    """sum(coefficient * term) for coefficients in {-1, 0, 1}."""
    total: Expr | None = None
    for coefficient, term in terms:
        if coefficient:
            total = (term if coefficient > 0 else wrap(0.0).astype("float32") - term) if total is None \
                else (total + term if coefficient > 0 else total - term)
    assert total is not None
    return total


def _prim_func(buffers: list[tir.Buffer], body: tir.Stmt) -> tir.PrimFunc:
    params = [tir.Var(b.name, "handle", tir.PointerType("float32", "global")) for b in buffers]
    return tir.PrimFunc(tuple(params), body, None, Map(list(zip(params, buffers))),
                        Map({"tir.noalias": True, "tir.is_scheduled": True}))


def _tile_rows(tiles: int) -> int:
    """Tiles per register tile of the matmul: the most, up to WINOGRAD_REGISTER_TILES, dividing ``tiles``."""
    return max(r for r in range(1, min(tiles, WINOGRAD_REGISTER_TILES) + 1) if tiles % r == 0)


def winograd_conv2d(n: int, c_blocks: int, k_blocks: int, h: int, w: int, c_lanes: int, k_lanes: int,
                    epilogue: list[tuple[str, tuple[int, ...] | None]]) -> tir.PrimFunc:
    """x (N, C/b, H, W, b), U (16, K/o, C, o) [, epilogue operands] -> Y (N, K/o, H, W, o) in three
    steps: the input tiles transformed (B^T d B, the zero border included) into V (16, tiles, C);
    the matmul of each tile element, M[e] = V[e] U[e], in register tiles of up to
    WINOGRAD_REGISTER_TILES tiles x one vector of output channels; each tile's outputs A^T m A
    through the epilogue into Y (the outputs past an odd edge not stored). Where U is smaller than
    V (large maps), tasks of one row of tiles run all three steps, their V and M staying in the
    core's caches; else (small maps, many channels) the input transform runs first over all
    tiles, then tasks of one block of output channels each read their part of U once.
    The epilogue: ``("add" | "multiply", operand shape)`` with an operand of the output's shape
    or ``(1, K/o, 1, 1, o)`` (per channel), or ``("relu", None)``."""
    rows, cols = (h + 1) // 2, (w + 1) // 2
    channels, tiles = c_blocks * c_lanes, n * rows * cols
    by_rows = k_blocks * k_lanes <= WINOGRAD_ROW_TASKS_MAX_RATIO * tiles  # U no larger than V (x ratio)
    x = _buffer("x", (n, c_blocks, h, w, c_lanes))
    u = _buffer("U", (16, k_blocks, channels, k_lanes))
    operands = [_buffer(f"operand{i}", shape) for i, (_, shape) in enumerate(epilogue) if shape is not None]
    y = _buffer("Y", (n, k_blocks, h, w, k_lanes))
    v = _buffer("V", (16, cols if by_rows else tiles, channels))
    zero = wrap(0.0).astype("float32")
    unrolled, vectorized = tir.ForKind.UNROLLED, tir.ForKind.VECTORIZED

    def split(index: Expr) -> tuple[Expr, Expr, Expr]:
        """(image, tile row, tile column) of a tile number."""
        image = index // (rows * cols) if n > 1 else wrap(0).astype("int64")
        return image, (index // cols) % rows if n > 1 else index // cols, index % cols

    def transform_in(image: Expr, row: Expr, v_row: Expr) -> tir.Stmt:
        """V[e, v_row + col, c]: B^T d B of the row's input tiles, as B^T d then (B^T d) B, a vector of
        channels at a time."""
        d = _buffer("d", (16, c_lanes), "local")
        bt_d = _buffer("bt_d", (16, c_lanes), "local")

        def gather(col: Expr, block: Expr, i: Expr, j: Expr, lane: Expr) -> tir.Stmt:
            yy, xx = row * 2 + i - 1, col * 2 + j - 1
            inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            return _store(d, if_then_else(inside, _load(x, image, block, yy, xx, lane), zero), i * 4 + j, lane)

        def left(j: Expr, lane: Expr) -> tir.Stmt:
            return tir.seq([_store(bt_d, _signed_sum([(_B_T[r][k], _load(d, j + k * 4, lane)) for k in range(4)]),
                                   j + r * 4, lane) for r in range(4)])

        def right(col: Expr, block: Expr, i: Expr, lane: Expr) -> tir.Stmt:
            return tir.seq([_store(v, _signed_sum([(_B_T[r][k], _load(bt_d, i * 4 + k, lane)) for k in range(4)]),
                                   i * 4 + r, v_row + col, block * c_lanes + lane) for r in range(4)])

        return _loop("col", cols, lambda col: _loop("cb", c_blocks, lambda block: tir.DeclBuffer(d, tir.DeclBuffer(
            bt_d, tir.seq([
                _loop("i", 4, lambda i: _loop("j", 4, lambda j: _loop(
                    "ci", c_lanes, lambda lane: gather(col, block, i, j, lane), vectorized), unrolled), unrolled),
                _loop("j", 4, lambda j: _loop("ci", c_lanes, lambda lane: left(j, lane), vectorized), unrolled),
                _loop("i", 4, lambda i: _loop("ci", c_lanes, lambda lane: right(col, block, i, lane), vectorized),
                      unrolled)])))))

    def matmul_tile(e: Expr, kb: Expr, first: Expr, tile: int, store: Callable[[Expr, Expr, Expr], tir.Stmt]
                    ) -> tir.Stmt:
        """M[e] of tiles first .. first + tile - 1 and one vector of output channels, in registers,
        each result vector given to ``store(t, ko, value)``."""
        acc = _buffer("acc", (tile, k_lanes), "local")

        def tile_loop(body: Callable[[Expr, Expr], tir.Stmt]) -> tir.Stmt:
            return _loop("t", tile, lambda t: _loop("ko", k_lanes, lambda ko: body(t, ko), vectorized), unrolled)

        return tir.DeclBuffer(acc, tir.seq([
            tile_loop(lambda t, ko: _store(acc, zero, t, ko)),
            _loop("c", channels, lambda c: tile_loop(lambda t, ko: _store(
                acc, _load(acc, t, ko) + _load(v, e, first + t, c) * _load(u, e, kb, c, ko), t, ko))),
            tile_loop(lambda t, ko: store(t, ko, _load(acc, t, ko)))]))

    def transform_out(tile_of: Callable[[Expr], tuple[Expr, Expr, Expr]], block: Expr,
                      m_of: Callable[[Expr, Expr], Expr], count: int) -> tir.Stmt:
        """Y of ``count`` tiles (``tile_of(t)``: image, tile row, tile column) and output block
        ``block``: A^T m A (``m_of(e, lane)``: the tile's matmul results), as A^T m then (A^T m) A,
        through the epilogue."""
        mt = _buffer("m", (16, k_lanes), "local")
        at_m = _buffer("at_m", (8, k_lanes), "local")

        def left(j: Expr, lane: Expr) -> tir.Stmt:
            return tir.seq([_store(at_m, _signed_sum([(_A_T[r][k], _load(mt, j + k * 4, lane)) for k in range(4)]),
                                   j + r * 4, lane) for r in range(2)])

        def right(t: Expr, a: Expr, lane: Expr) -> tir.Stmt:
            image, row, col = tile_of(t)
            stores = []
            for b in range(2):
                oy, ox = row * 2 + a, col * 2 + b
                value = _signed_sum([(_A_T[b][k], _load(at_m, a * 4 + k, lane)) for k in range(4)])
                operand = iter(operands)
                for op_name, shape in epilogue:
                    if op_name == "relu":
                        value = wrap(tir.Max(value.expr, zero.expr))
                        continue
                    buf = next(operand)
                    other = _load(buf, 0, block, 0, 0, lane) if shape != (n, k_blocks, h, w, k_lanes) \
                        else _load(buf, image, block, oy, ox, lane)
                    value = value + other if op_name == "add" else value * other
                store = _store(y, value, image, block, oy, ox, lane)
                if h % 2 or w % 2:  # the last tile row or column reaches past the edge
                    store = tir.IfThenElse(((oy < h) & (ox < w)).expr, store)
                stores.append(store)
            return tir.seq(stores)

        return _loop("t", count, lambda t: tir.DeclBuffer(mt, tir.DeclBuffer(at_m, tir.seq([
            _loop("e", 16, lambda e: _loop("ki", k_lanes, lambda lane: _store(mt, m_of(e, t, lane), e, lane),
                                           vectorized), unrolled),
            _loop("j", 4, lambda j: _loop("ki", k_lanes, lambda lane: left(j, lane), vectorized), unrolled),
            _loop("a", 2, lambda a: _loop("ki", k_lanes, lambda lane: right(t, a, lane), vectorized), unrolled)]))))

    if by_rows:
        m = _buffer("M", (16, cols, k_blocks * k_lanes))
        tile = _tile_rows(cols)

        def row_task(n_row: Expr) -> tir.Stmt:
            image, row, _ = split(n_row * cols)
            matmuls = _loop("e", 16, lambda e: _loop("kb", k_blocks, lambda kb: _loop(
                "t0", cols // tile, lambda t0: matmul_tile(
                    e, kb, t0 * tile, tile, lambda t, ko, value: _store(m, value, e, t0 * tile + t, kb * k_lanes + ko)))))
            outputs = _loop("kb", k_blocks, lambda kb: transform_out(
                lambda col: (image, row, col), kb, lambda e, col, lane: _load(m, e, col, kb * k_lanes + lane), cols))
            return tir.DeclBuffer(v, tir.DeclBuffer(m, tir.seq([transform_in(image, row, wrap(0).astype("int64")),
                                                                 matmuls, outputs])))

        return _prim_func([x, u, *operands, y], _loop("n_row", n * rows, row_task, tir.ForKind.PARALLEL))

    tile = _tile_rows(tiles)

    def inputs(n_row: Expr) -> tir.Stmt:
        image, row, _ = split(n_row * cols)
        return transform_in(image, row, n_row * cols)

    def block_task(kb: Expr) -> tir.Stmt:
        m = _buffer("M", (16, tile, k_lanes), "local")

        def group(t0: Expr) -> tir.Stmt:
            matmuls = _loop("e", 16, lambda e: matmul_tile(
                e, kb, t0 * tile, tile, lambda t, ko, value: _store(m, value, e, t, ko)))
            outputs = transform_out(lambda t: split(t0 * tile + t), kb, lambda e, t, lane: _load(m, e, t, lane), tile)
            return tir.DeclBuffer(m, tir.seq([matmuls, outputs]))

        return _loop("t0", tiles // tile, group)

    body = tir.DeclBuffer(v, tir.seq([_loop("n_row", n * rows, inputs, tir.ForKind.PARALLEL),
                                       _loop("kb", k_blocks, block_task, tir.ForKind.PARALLEL)]))
    return _prim_func([x, u, *operands, y], body)


# ---------------------------------------------------------------- the rewrite

class _Chain:
    """A conv this pass rewrites and the element-wise ops after it folded into its output transform."""

    def __init__(self, conv_var: rx.Var, conv: rx.Call, shape: tuple[int, ...]) -> None:
        self.conv_var, self.conv, self.shape = conv_var, conv, shape
        self.vars = [conv_var]  # the conv's binding and each folded one, in order
        self.epilogue: list[tuple[str, tuple[int, ...] | None]] = []
        self.operands: list[rx.Expr] = []


def _epilogue_step(call: rx.Call, value: rx.Var, out_shape: tuple[int, ...]
                   ) -> tuple[str, tuple[int, ...] | None, rx.Expr | None] | None:
    """How ``call`` (a use of ``value``) folds into the output transform, else None."""
    if call.op is _RELU and len(call.args) == 1:
        return "relu", None, None
    if call.op not in (_ADD, _MULTIPLY) or len(call.args) != 2:
        return None
    a, b = call.args
    other = b if a is value else a if b is value else None
    if other is None or other is value:
        return None
    sinfo = sinfo_of(other)
    shape = static_shape(sinfo)
    if shape is None or getattr(sinfo, "dtype", None) != "float32":
        return None
    per_channel = (1, out_shape[1], 1, 1, out_shape[4])
    if tuple(shape) not in (tuple(out_shape), per_channel):
        return None
    return ("add" if call.op is _ADD else "multiply"), tuple(shape), other


def _plan(block: rx.BindingBlock, uses: dict[rx.Var, int]) -> dict[rx.Var, _Chain]:
    """The chains of ``block``, keyed by the last binding of each."""
    bindings = [b for b in block.bindings if isinstance(b, rx.VarBinding)]
    open_chains: dict[rx.Var, _Chain] = {}  # keyed by the chain's current last var
    for binding in bindings:
        value = binding.value
        if not isinstance(value, rx.Call):
            continue
        if value.op is _CONV2D:
            shape = _winograd_shape(value)
            if shape is not None:
                open_chains[binding.var] = _Chain(binding.var, value, shape)
            continue
        for arg in value.args:
            chain = open_chains.get(arg) if isinstance(arg, rx.Var) else None
            if chain is None or uses.get(arg, 0) != 1:
                continue
            step = _epilogue_step(value, arg, static_shape(sinfo_of(chain.conv)))
            if step is None:
                break
            del open_chains[arg]
            op, shape, operand = step
            chain.epilogue.append((op, shape))
            if operand is not None:
                chain.operands.append(operand)
            chain.vars.append(binding.var)
            open_chains[binding.var] = chain
            break
    return {chain.vars[-1]: chain for chain in open_chains.values()}


class _Rewriter(ExprMutator):
    """Emits each chain's Winograd call in place of its last binding; its other bindings go."""

    def __init__(self, mod: IRModule) -> None:
        super().__init__(mod)
        self.chains: dict[rx.Var, _Chain] = {}
        self.dropped: set[rx.Var] = set()
        self.rewritten = 0
        self.kernels: dict[tuple, Any] = {}  # (shape, epilogue) -> GlobalVar: each kernel built once

    def plan(self, func: rx.Function) -> None:
        """Find the chains of ``func``'s dataflow blocks."""
        uses = use_counts(func)
        self.chains.clear()
        self.dropped.clear()
        body = func.body
        for block in body.blocks if isinstance(body, rx.SeqExpr) else ():
            if isinstance(block, rx.DataflowBlock):
                for last, chain in _plan(block, uses).items():
                    self.chains[last] = chain
                    self.dropped.update(chain.vars[:-1])

    def visit_var_binding_(self, binding: rx.VarBinding) -> None:
        """A chain's earlier bindings disappear; its last one becomes the Winograd kernel's call."""
        if binding.var in self.dropped:
            return
        chain = self.chains.get(binding.var)
        if chain is None:
            super().visit_var_binding_(binding)
            return
        n, c_blocks, k_blocks, h, w, c_lanes, k_lanes = chain.shape
        data, weights = chain.conv.args
        key = (chain.shape, tuple(chain.epilogue))
        gv = self.kernels.get(key)
        if gv is None:
            func = winograd_conv2d(n, c_blocks, k_blocks, h, w, c_lanes, k_lanes, chain.epilogue)
            gv = self.kernels[key] = self.builder_.add_func(func, "winograd_conv2d")
        u = const(winograd_weights(weights.data))
        out = call_tir(gv, [self.visit_expr(data), u, *(self.visit_expr(o) for o in chain.operands)],
                       TensorStructInfo((n, k_blocks, h, w, k_lanes), "float32"))
        self.reemit_binding(binding, self.builder_.normalize(out))
        self.rewritten += 1


class WinogradConv2d(ModulePass):
    """Compute packed 3x3 stride-1 convs with constant weights as Winograd F(2x2, 3x3) where it pays."""

    opt_level = 0

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Rewrite the convs of every Relax function; the Winograd kernels join the module."""
        rewriter = _Rewriter(mod)
        for gv, func in mod.functions_items():
            if isinstance(func, rx.Function):
                rewriter.plan(func)
                if rewriter.chains:
                    rewriter.builder_.update_func(gv, rewriter.visit_expr(func))
        self.stats["rewritten"] += rewriter.rewritten
        return rewriter.builder_.get() if rewriter.rewritten else mod


register_pass("WinogradConv2d", WinogradConv2d)
