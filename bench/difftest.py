#!/usr/bin/env python3
"""Differential tester: random Relax programs, compiled and run three ways, checked against numpy.

Each program (3-12 registered Relax ops over inputs with sizes 1, primes, 0 and symbolic dims bound
at call time; float32, float16, int32, int64 and bool) is built with the BlockBuilder and run

- ``default``: ``tvmlite.compile(mod)`` (zero pipeline, DefaultCPUSchedule, lowering, LLVM),
- ``lower``: ``tvmlite.compile(mod, tir_pipeline="lower")`` (the loops as legalized),
- ``interp``: the zero pipeline, then the TIR reference interpreter under the VM,

(``--paths opt``: ``tvmlite.compile(mod, relax_pipeline="default")``), each in a worker
subprocess (a segfault is counted as a crash and the worker restarted), and
compared with a reference computed here with numpy from the ops' documented semantics. The
generator knows every intermediate value while it builds a program, so it only applies an op
where its numpy reference is well defined and well conditioned (no division by numbers near 0,
no floor/round/compare/cast right at a discontinuity of a computed value, no ties under argmax).

A failing program is minimised (outputs dropped, the program ended early, ops replaced by inputs
holding the values they computed or bypassed, symbolic dims made static) and written as a
standalone Python reproducer (TVMScript, inputs, expected outputs, the tester's tolerances):

    python bench/difftest.py --seed 1 --count 200 [--seconds 900] [--jobs 2] [--large]
        [--paths default,lower,interp,opt] [--out DIR] [--known-bugs]

prints ``programs N, mismatches M, crashes C, errors E`` and exits 1 when anything failed.
"""
from __future__ import annotations

import argparse
import os
import pickle
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["generate", "unequal_dims_program", "reference", "tolerances", "build_module", "script_of", "run_path",
           "check_outputs", "WorkerPool", "run_case", "minimise", "reproducer", "run_campaign", "summary_line",
           "PATHS", "EXTRA_PATHS", "KNOWN_BUG_EXCLUSIONS"]

PATHS = ("default", "lower", "interp")
EXTRA_PATHS = ("opt",)  # --paths opt: the "default" graph pipeline (graph-level clean-ups) first
FLOATS = ("float32", "float16")
INTS = ("int32", "int64")
DIMS = (1, 2, 3, 5, 7, 4, 1, 3)  # 1 and primes dominate; 0 is drawn separately
SYMS = ("n", "m")
MAX_ELEMS = 256  # keeps the scalar reference interpreter quick
# With ``large``: sizes past the default schedule's tile and vector widths, so loop tails run.
LARGE_DIMS = (8, 13, 16, 17, 31, 33, 64, 67)
LARGE_MAX_ELEMS = 4096

# Op/shape combinations the generator leaves out; each entry names the reason, and removing it
# from this set (or ``--known-bugs``) turns the combination back on. Turned back on once fixed:
# R.round on exact halves, sum/prod/mean over zero-size axes, R.sum of a (1, k) tensor to rank 0.
KNOWN_BUG_EXCLUSIONS = {
    "where_distinct_symbols",    # R.where over dims n and m (equal at run time) is refused: its result
                                 # has no known shape, so LegalizeOps makes no kernel (as in TVM)
}
# The combinations the generator can leave out (what each name above guards).
EXCLUDABLE = ("round_exact_halves", "reduce_zero_size_axis", "reduce_rank0_of_unit_dims", "where_distinct_symbols")

# Largest magnitude kept for a value of each dtype: keeps float16 away from overflow and every
# reference well conditioned.
BOUND = {"float32": 1e3, "float16": 200.0, "int32": 1 << 20, "int64": 1 << 20, "bool": 1}
RTOL = {"float32": 2e-4, "float16": 2e-2}
# Distance from a discontinuity (integer boundary, comparison tie) a computed value must keep.
MARGIN = {"float32": 1e-3, "float16": 5e-2}


# ---------------------------------------------------------------- program representation
# A program is a plain dict (picklable across the worker boundary whatever module name this
# file is imported under):
#   params:   [(name, shape, dtype)]  shape entries are ints or symbol names ("n")
#   bindings: {symbol: int}           the call-time sizes of the symbols
#   ops:      [(out, kind, args, attrs)]  args name params or earlier outs
#   outputs:  [names]                 what main returns (a tuple when more than one)
#   inputs:   {param name: ndarray}
#   seed:     the generator seed it came from

def _is_float(dtype: str) -> bool:
    return dtype in FLOATS


def _erf(x: np.ndarray) -> np.ndarray:
    import math
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


UNARY_FLOAT: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sigmoid": _sigmoid,
    "abs": np.abs, "negative": np.negative, "square": np.square, "erf": _erf, "atan": np.arctan,
    "asin": np.arcsin, "acos": np.arccos, "atanh": np.arctanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "sinh": np.sinh, "cosh": np.cosh,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.round, "sign": np.sign,
    "nn.relu": lambda x: np.maximum(x, 0), "nn.silu": lambda x: x * _sigmoid(x),
    "nn.gelu": lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
    "nn.gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
}
# The domain each float unary op is applied on (lo, hi), kept well inside where it is defined
# and well conditioned.
DOMAIN = {"exp": (-6, 4), "log": (0.5, None), "sqrt": (0.25, None), "rsqrt": (0.25, None),
          "tan": (-1.0, 1.0), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9),
          "acosh": (1.1, None), "sinh": (-4, 4), "cosh": (-4, 4), "square": (-60, 60),
          "nn.gelu_tanh": (-20, 20)}
STEP = {"floor", "ceil", "trunc", "round", "sign"}  # discontinuous: need a margin on computed input
UNARY_INT = {"abs": np.abs, "negative": np.negative, "square": np.square, "sign": np.sign,
             "bitwise_not": np.invert, "nn.relu": lambda x: np.maximum(x, 0)}
BINARY_ARITH = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
                "maximum": np.maximum, "minimum": np.minimum, "power": np.power,
                "floor_divide": np.floor_divide, "floor_mod": np.mod, "mod": np.fmod,
                "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
                "left_shift": np.left_shift, "right_shift": np.right_shift}
COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
           "greater": np.greater, "greater_equal": np.greater_equal}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}
REDUCE = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min,
          "variance": np.var, "std": np.std}


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    if x.size == 0:
        return x
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _conv2d(x: np.ndarray, w: np.ndarray, strides: tuple, padding: tuple, dilation: tuple, groups: int) -> np.ndarray:
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[2]), (padding[1], padding[3])))
    oh = (h + padding[0] + padding[2] - dilation[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + padding[1] + padding[3] - dilation[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilation[0]: i * dilation[0] + strides[0] * (oh - 1) + 1: strides[0],
                           j * dilation[1]: j * dilation[1] + strides[1] * (ow - 1) + 1: strides[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    return out


def _pool2d(x: np.ndarray, kind: str, pool: tuple, strides: tuple, padding: tuple, include_pad: bool) -> np.ndarray:
    n, c, h, w = x.shape
    oh = (h + padding[0] + padding[2] - pool[0]) // strides[0] + 1
    ow = (w + padding[1] + padding[3] - pool[1]) // strides[1] + 1
    out = np.zeros((n, c, oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * strides[0] - padding[0], j * strides[1] - padding[1]
            hs, ws = slice(max(h0, 0), min(h0 + pool[0], h)), slice(max(w0, 0), min(w0 + pool[1], w))
            win = x[:, :, hs, ws]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                count = pool[0] * pool[1] if include_pad else win.shape[2] * win.shape[3]
                out[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return out


def _adaptive_avg(x: np.ndarray, oh: int, ow: int) -> np.ndarray:
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            hs = slice(i * h // oh, -(-(i + 1) * h // oh))
            ws = slice(j * w // ow, -(-(j + 1) * w // ow))
            out[:, :, i, j] = x[:, :, hs, ws].mean(axis=(2, 3))
    return out


def _split_points(size: int, ios: Any) -> list[int]:
    if isinstance(ios, int):
        step = size // ios
        return [step * k for k in range(1, ios)]
    return list(ios)


def _ref_op(kind: str, a: list[np.ndarray], attrs: dict, out_dtype: str, bindings: dict | None = None) -> np.ndarray:
    """The numpy value of one op (floats computed in float64, then stored in ``out_dtype``);
    ``bindings`` gives the sizes of the symbols a target shape names."""
    if kind == "const_rhs":  # a binary op whose right operand is a rank-0 constant
        return _ref_op(attrs["op"], [a[0], np.array(attrs["value"], dtype=a[0].dtype)], {}, out_dtype)
    f = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in a]
    if kind in UNARY_FLOAT and a[0].dtype.kind == "f":
        r = UNARY_FLOAT[kind](f[0])
    elif kind in UNARY_INT:
        r = UNARY_INT[kind](a[0])
    elif kind == "nn.leakyrelu":
        r = np.where(f[0] > 0, f[0], attrs["alpha"] * f[0])
    elif kind == "logical_not":
        r = np.logical_not(a[0])
    elif kind in ("isfinite", "isnan", "isinf"):
        r = getattr(np, kind)(a[0])
    elif kind in BINARY_ARITH:
        x, y = f[0], f[1]
        if kind == "floor_divide" and a[0].dtype.kind == "f":
            r = np.floor(x / y)
        elif kind == "floor_mod" and a[0].dtype.kind == "f":
            r = x - np.floor(x / y) * y
        elif kind == "divide" and a[0].dtype.kind != "f":
            r = np.trunc(x / y)
        else:
            r = BINARY_ARITH[kind](x, y)
    elif kind in COMPARE:
        r = COMPARE[kind](f[0], f[1])
    elif kind in LOGICAL:
        r = LOGICAL[kind](a[0], a[1])
    elif kind == "where":
        r = np.where(a[0], f[1], f[2])
    elif kind == "ewise_fma":
        r = f[0] * f[1] + f[2]
    elif kind == "clip":
        r = np.minimum(np.maximum(f[0], attrs["lo"]), attrs["hi"])
    elif kind in REDUCE:
        axis = None if attrs["axis"] is None else tuple(attrs["axis"])
        if kind == "mean":  # sum / count: an empty axis gives 0 / 0 (no numpy warning)
            count = f[0].size if axis is None else int(np.prod([f[0].shape[i] for i in axis]))
            r = np.sum(f[0], axis=axis, keepdims=attrs["keepdims"]) / np.float64(count)
        else:
            r = REDUCE[kind](f[0], axis=axis, keepdims=attrs["keepdims"])
    elif kind in ("argmax", "argmin"):
        r = getattr(np, kind)(a[0], axis=attrs["axis"], keepdims=attrs["keepdims"])
    elif kind == "astype":
        r = a[0]
        if a[0].dtype.kind == "f" and attrs["dtype"] in INTS:
            r = np.trunc(f[0])
        if attrs["dtype"] == "bool":
            r = a[0] != 0
    elif kind == "matmul":
        r = np.matmul(f[0], f[1])
    elif kind == "permute_dims":
        r = np.transpose(a[0], attrs["axes"])
    elif kind == "reshape":
        r = a[0].reshape(attrs["shape"])
    elif kind == "flatten":
        r = a[0].reshape(-1)
    elif kind == "expand_dims":
        r = np.expand_dims(a[0], tuple(attrs["axis"]))
    elif kind == "squeeze":
        r = np.squeeze(a[0], axis=None if attrs["axis"] is None else tuple(attrs["axis"]))
    elif kind == "concat":
        r = np.concatenate(a, axis=attrs["axis"])
    elif kind == "split":
        pieces = np.split(a[0], _split_points(a[0].shape[attrs["axis"]], attrs["ios"]), axis=attrs["axis"])
        r = pieces[attrs["index"]]
    elif kind == "strided_slice":
        index = [slice(None)] * a[0].ndim
        for ax, b, e, s in zip(attrs["axes"], attrs["begin"], attrs["end"], attrs["strides"]):
            index[ax] = slice(b, e, s)
        r = a[0][tuple(index)]
    elif kind == "take":
        r = np.take(a[0], a[1], axis=attrs["axis"])
    elif kind == "broadcast_to":
        r = np.broadcast_to(a[0], tuple((bindings or {}).get(d, d) for d in attrs["shape"])).copy()
    elif kind == "nn.softmax":
        r = _softmax(f[0], attrs["axis"])
    elif kind == "nn.log_softmax":
        r = np.log(_softmax(f[0], attrs["axis"])) if f[0].size else f[0]
    elif kind in ("zeros_like", "ones_like", "full_like"):
        r = np.full(a[0].shape, {"zeros_like": 0, "ones_like": 1}.get(kind, attrs.get("value")))
    elif kind == "nn.dense":
        r = f[0] @ f[1].T
    elif kind == "nn.batch_norm":  # inference: the moving statistics, along attrs["axis"]
        shape = [1] * a[0].ndim
        shape[attrs["axis"]] = -1
        m, v, g, b = (f[i].reshape(shape) for i in (3, 4, 1, 2))
        r = (f[0] - m) / np.sqrt(v + 1e-5) * g + b
    elif kind == "nn.layer_norm":
        axes = tuple(attrs["axes"])
        mean = f[0].mean(axis=axes, keepdims=True)
        var = f[0].var(axis=axes, keepdims=True)
        r = (f[0] - mean) / np.sqrt(var + 1e-5) * f[1] + f[2]
    elif kind == "nn.conv2d":
        r = _conv2d(f[0], f[1], attrs["strides"], attrs["padding"], attrs["dilation"], attrs["groups"])
    elif kind in ("nn.max_pool2d", "nn.avg_pool2d"):
        r = _pool2d(f[0], kind[3:6], attrs["pool"], attrs["strides"], attrs["padding"], attrs.get("include_pad", False))
    elif kind == "nn.adaptive_avg_pool2d":
        r = _adaptive_avg(f[0], *attrs["size"])
    else:
        raise KeyError(f"no numpy reference for op {kind!r}")
    return np.asarray(r).astype(out_dtype)


def out_dtype_of(kind: str, dtypes: list[str], attrs: dict) -> str:
    """The dtype of an op's result from its input dtypes."""
    if kind in COMPARE or kind in LOGICAL or kind in ("logical_not", "isfinite", "isnan", "isinf"):
        return "bool"
    if kind in ("argmax", "argmin"):
        return "int64"
    if kind == "astype" or (kind == "matmul" and attrs.get("out_dtype")):
        return attrs.get("dtype") or attrs["out_dtype"]
    if kind == "where":
        return dtypes[1]
    return dtypes[0]


def reference(prog: dict) -> dict[str, np.ndarray]:
    """Every value of ``prog`` (inputs and op results) computed with numpy."""
    env = dict(prog["inputs"])
    for out, kind, args, attrs in prog["ops"]:
        a = [env[x] for x in args]
        with np.errstate(all="ignore"):  # the mean of an empty axis is nan (0 / 0), as in TVM
            env[out] = _ref_op(kind, a, attrs, out_dtype_of(kind, [str(x.dtype) for x in a], attrs), prog["bindings"])
    return env


# ---------------------------------------------------------------- building the Relax module
def build_module(prog: dict) -> Any:
    """``prog`` as an IRModule with one Relax function ``main``, built with the BlockBuilder."""
    from tvmlite import relax
    from tvmlite.ir import tir

    op = relax.op
    syms = {s: tir.Var(s, "int64") for s in sorted(prog["bindings"])}

    def dims(shape: Iterable[Any]) -> list[Any]:
        return [syms[d] if isinstance(d, str) else d for d in shape]

    def prim(v: float, dtype: str) -> Any:
        return relax.PrimValue(tir.FloatImm(dtype, v) if _is_float(dtype) else tir.IntImm(dtype, int(v)))

    params = [relax.Var(name, relax.TensorStructInfo(dims(shape), dtype)) for name, shape, dtype in prog["params"]]
    env: dict[str, Any] = {p.name_hint: p for p in params}
    dtype_of = {name: dtype for name, _, dtype in prog["params"]}
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            for out, kind, args, attrs in prog["ops"]:
                a = [env[x] for x in args]
                if kind in ("nn.leakyrelu",):
                    e = op.nn.leakyrelu(a[0], attrs["alpha"])
                elif kind in ("reshape", "broadcast_to"):
                    e = getattr(op, kind)(a[0], tuple(dims(attrs["shape"])))
                elif kind == "clip":
                    d = dtype_of[args[0]]
                    e = op.clip(a[0], prim(attrs["lo"], d), prim(attrs["hi"], d))
                elif kind in REDUCE or kind in ("argmax", "argmin"):
                    e = getattr(op, kind)(a[0], axis=attrs["axis"], keepdims=attrs["keepdims"])
                elif kind == "astype":
                    e = op.astype(a[0], attrs["dtype"])
                elif kind == "permute_dims":
                    e = op.permute_dims(a[0], attrs["axes"])
                elif kind in ("expand_dims", "squeeze"):
                    e = getattr(op, kind)(a[0], attrs["axis"])
                elif kind == "concat":
                    e = op.concat(a, axis=attrs["axis"])
                elif kind == "split":
                    e = relax.TupleGetItem(op.split(a[0], attrs["ios"], axis=attrs["axis"]), attrs["index"])
                elif kind == "strided_slice":
                    e = op.strided_slice(a[0], *(tuple(relax.PrimValue(v) for v in attrs[k])
                                                 for k in ("axes", "begin", "end", "strides")))
                elif kind == "take":
                    e = op.take(a[0], a[1], axis=attrs["axis"])
                elif kind == "matmul":
                    e = op.matmul(a[0], a[1], out_dtype=attrs.get("out_dtype") or "void")
                elif kind in ("nn.softmax", "nn.log_softmax"):
                    e = getattr(op.nn, kind[3:])(a[0], axis=attrs["axis"])
                elif kind == "nn.layer_norm":
                    e = op.nn.layer_norm(a[0], a[1], a[2], axes=attrs["axes"])
                elif kind == "nn.batch_norm":
                    e = relax.TupleGetItem(op.nn.batch_norm(*a, axis=attrs["axis"], training=False), 0)
                elif kind == "full_like":
                    e = op.full_like(a[0], relax.const(attrs["value"], dtype_of[args[0]]))
                elif kind == "nn.conv2d":
                    e = op.nn.conv2d(a[0], a[1], strides=attrs["strides"], padding=attrs["padding"],
                                     dilation=attrs["dilation"], groups=attrs["groups"])
                elif kind in ("nn.max_pool2d", "nn.avg_pool2d"):
                    extra = {"count_include_pad": attrs["include_pad"]} if kind == "nn.avg_pool2d" else {}
                    e = getattr(op.nn, kind[3:])(a[0], pool_size=attrs["pool"], strides=attrs["strides"],
                                                 padding=attrs["padding"], **extra)
                elif kind == "nn.adaptive_avg_pool2d":
                    e = op.nn.adaptive_avg_pool2d(a[0], output_size=attrs["size"])
                elif kind.startswith("nn."):
                    e = getattr(op.nn, kind[3:])(*a)
                elif kind == "const_rhs":  # a binary op with a rank-0 constant on the right
                    e = getattr(op, attrs["op"])(a[0], relax.const(attrs["value"], dtype_of[args[0]]))
                else:
                    e = getattr(op, kind)(*a)
                env[out] = bb.emit_output(e, name_hint=out) if out in prog["outputs"] else bb.emit(e, name_hint=out)
                dtype_of[out] = env[out].struct_info.dtype
        outs = [env[o] for o in prog["outputs"]]
        bb.emit_func_output(outs[0] if len(outs) == 1 else outs)
    return bb.get()


def script_of(prog: dict) -> str:
    """The TVMScript text of ``prog``'s module (or why it could not be built)."""
    try:
        return build_module(prog).script()
    except Exception as err:  # noqa: BLE001 - the reproducer says what went wrong instead
        return f"# could not build the module: {type(err).__name__}: {err}"


# ---------------------------------------------------------------- running one path
def run_path(prog: dict, path: str) -> list[np.ndarray]:
    """Compile ``prog`` along ``path`` (default | lower | interp) and run ``main`` on its inputs."""
    import tvmlite

    mod = build_module(prog)
    if path == "default":
        ex = tvmlite.compile(mod)
    elif path == "lower":
        ex = tvmlite.compile(mod, tir_pipeline="lower")
    elif path == "opt":
        ex = tvmlite.compile(mod, relax_pipeline="default")
    elif path == "interp":
        from tvmlite.backend.compile import VMExecutable, _pipeline
        from tvmlite.backend.interpreter import InterpreterExecutor

        graph = _pipeline("zero", "relax_pipeline")(mod)
        ex = VMExecutable(graph, InterpreterExecutor(graph))
    else:
        raise ValueError(f"unknown path {path!r} (paths: {', '.join(PATHS + EXTRA_PATHS)})")
    vm = tvmlite.VirtualMachine(ex, tvmlite.cpu())
    out = vm["main"](*[prog["inputs"][name] for name, _, _ in prog["params"]])
    outs = out if isinstance(out, tuple) else (out,)
    return [np.array(o.numpy(), copy=True) for o in outs]


def _terms(kind: str, shapes: list[tuple], attrs: dict) -> int:
    """How many terms one output element of an accumulating op adds up (1 for the others)."""
    if kind in ("sum", "mean", "variance", "std", "nn.layer_norm", "nn.softmax", "nn.log_softmax"):
        axis = attrs.get("axis", attrs.get("axes"))
        if kind in ("nn.softmax", "nn.log_softmax"):
            axis = [axis]
        axes = range(len(shapes[0])) if axis is None else [a % max(1, len(shapes[0])) for a in axis]
        return max(1, int(np.prod([shapes[0][a] for a in axes])))
    if kind in ("matmul", "nn.dense"):
        return max(1, shapes[0][-1]) if shapes[0] else 1
    if kind == "nn.conv2d":
        return max(1, int(np.prod(shapes[1][1:])))
    return 1


def tolerances(prog: dict, ref: dict[str, np.ndarray]) -> dict[str, tuple[float, float]]:
    """``(rtol, atol)`` for each float value: the rounding of the least precise float dtype it is
    computed from (a float32 cast of a float16 sum carries float16 errors), growing with the
    number of ops, the absolute part scaled by the largest magnitude among it and its ancestors,
    times the number of terms an accumulating op (sum, matmul, conv2d...) adds up."""
    def mag(v: np.ndarray) -> float:
        return float(np.max(np.abs(v.astype(np.float64)))) if v.dtype.kind == "f" and v.size else 0.0

    def rtol(v: np.ndarray) -> float:
        return RTOL.get(str(v.dtype), 0.0)

    scale = {name: max(1.0, mag(v)) for name, v in prog["inputs"].items()}
    worst = {name: rtol(v) for name, v in prog["inputs"].items()}
    for out, kind, args, attrs in prog["ops"]:
        terms = _terms(kind, [ref[a].shape for a in args], attrs)
        grown = scale[args[0]] * terms * (scale[args[1]] if kind in ("matmul", "nn.dense", "nn.conv2d") else 1.0)
        scale[out] = max([mag(ref[out]), 1.0, grown] + [scale[a] for a in args])
        worst[out] = max([rtol(ref[out])] + [worst[a] for a in args])
    grow = 1 + len(prog["ops"]) / 4
    return {name: (worst[name] * grow, worst[name] * grow * scale[name]) for name in scale}


def check_outputs(prog: dict, got: list[np.ndarray], ref: dict[str, np.ndarray] | None = None) -> str | None:
    """None when ``got`` matches the numpy reference, else a description of the first difference."""
    ref = reference(prog) if ref is None else ref
    if len(got) != len(prog["outputs"]):
        return f"{len(got)} outputs, expected {len(prog['outputs'])}"
    tols = tolerances(prog, ref)
    for name, g in zip(prog["outputs"], got):
        want = ref[name]
        if g.shape != want.shape or g.dtype != want.dtype:
            return f"{name}: got {g.dtype}{list(g.shape)}, expected {want.dtype}{list(want.shape)}"
        if want.dtype.kind == "f":
            w64, g64 = want.astype(np.float64), g.astype(np.float64)
            rtol, atol = tols[name]
            bad = ~(np.abs(g64 - w64) <= rtol * np.abs(w64) + atol) & ~(np.isnan(g64) & np.isnan(w64))
        else:
            bad = g != want
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{name}: {int(bad.sum())} of {bad.size} elements differ, first at {list(idx)}: "
                    f"got {g[idx]!r}, expected {want[idx]!r}")
    return None


# ---------------------------------------------------------------- the generator
class _Gen:
    """Builds one random program op by op, computing every value as it goes. Each ``g_<group>``
    method tries to add one op of its group and returns False when it could not (no operand of a
    fitting shape or dtype, or a value where the numpy reference is not well defined)."""

    def __init__(self, seed: int, max_ops: int, dtypes: tuple[str, ...], large: bool = False) -> None:
        self.rng = np.random.default_rng(seed)
        self.large = large
        self.max_elems = LARGE_MAX_ELEMS if large else MAX_ELEMS
        self.seed = seed
        self.max_ops = max_ops
        self.dtypes = dtypes
        self.bindings: dict[str, int] = {}
        for s in SYMS[: int(self.rng.integers(0, 3))]:
            self.bindings[s] = int(self.rng.choice([0, 1, 2, 3, 5, 7])) if self.rng.random() < 0.15 else \
                int(self.rng.choice([1, 2, 3, 5, 7]))
        if len(self.bindings) == 2 and self.rng.random() < 0.4:
            self.bindings["m"] = self.bindings["n"]  # distinct symbols, equal sizes: must still agree
        self.params: list[tuple[str, tuple, str]] = []
        self.inputs: dict[str, np.ndarray] = {}
        self.ops: list[tuple[str, str, tuple, dict]] = []
        self.vals: dict[str, tuple[tuple, str, np.ndarray, bool]] = {}  # name: (shape, dtype, value, exact)
        self.used: set[str] = set()

    # -- shapes
    def concrete(self, shape: tuple) -> tuple[int, ...]:
        return tuple(self.bindings[d] if isinstance(d, str) else d for d in shape)

    def dim(self, allow_sym: bool = True) -> Any:
        r = self.rng.random()
        if allow_sym and self.bindings and r < 0.25:
            return str(self.rng.choice(sorted(self.bindings)))
        if r > 0.975:
            return 0
        if self.large and r > 0.85:
            return int(self.rng.choice(LARGE_DIMS))
        return int(self.rng.choice(DIMS))

    def shape(self, rank: int | None = None) -> tuple:
        rank = int(self.rng.choice([0, 1, 2, 2, 3, 3, 4])) if rank is None else rank
        for _ in range(20):
            s = tuple(self.dim() for _ in range(rank))
            if int(np.prod(self.concrete(s))) <= self.max_elems:
                return s
        return (1,) * rank

    # -- inputs
    def new_param(self, shape: tuple, dtype: str, lo: float = -3.0, hi: float = 3.0) -> str:
        name = f"x{len(self.params)}"
        cs = self.concrete(shape)
        if dtype == "bool":
            a = self.rng.random(cs) < 0.5
        elif dtype in INTS:
            a = self.rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, cs).astype(dtype)
        elif self.rng.random() < 0.15 and "round_exact_halves" not in KNOWN_BUG_EXCLUSIONS:
            a = (np.round(self.rng.uniform(lo, hi, cs) * 2) / 2).clip(lo, hi).astype(dtype)  # exact halves
        else:
            a = self.rng.uniform(lo, hi, cs).astype(dtype)
        self.params.append((name, shape, dtype))
        self.inputs[name] = np.asarray(a)
        self.vals[name] = (shape, dtype, self.inputs[name], True)
        return name

    def pick(self, ok: Callable[[tuple, str, np.ndarray], bool]) -> str | None:
        """An existing value satisfying ``ok``, recent ones (and unused ones) preferred."""
        names = [n for n, (s, d, v, _) in self.vals.items() if ok(s, d, v)]
        if not names:
            return None
        w = np.array([(i + 1) * (3 if n not in self.used else 1) for i, n in enumerate(names)], dtype=float)
        return names[int(self.rng.choice(len(names), p=w / w.sum()))]

    def operand(self, dtypes: tuple[str, ...], ok: Callable[[tuple, str, np.ndarray], bool] = lambda s, d, v: True,
                lo: float = -3.0, hi: float = 3.0, fresh: float = 0.2) -> str:
        """An existing value of one of ``dtypes`` passing ``ok``, or a new input."""
        name = None if self.rng.random() < fresh else self.pick(lambda s, d, v: d in dtypes and ok(s, d, v))
        if name is None:
            name = self.new_param(self.shape(), str(self.rng.choice(dtypes)), lo, hi)
        return name

    def broadcast_partner(self, shape: tuple) -> tuple:
        """A shape that broadcasts with ``shape`` (trailing dims kept or set to 1, maybe one more)."""
        k = int(self.rng.integers(0, len(shape) + 1))
        tail = tuple(d if self.rng.random() < 0.7 else 1 for d in shape[len(shape) - k:])
        if len(shape) < 4 and k == len(shape) and self.rng.random() < 0.2:
            tail = (int(self.rng.choice([1, 2, 3])),) + tail
        return tail

    # -- one op
    def value_ok(self, v: np.ndarray, dtype: str) -> bool:
        if dtype == "bool" or v.size == 0:
            return True
        v64 = v.astype(np.float64)
        return bool(np.all(np.isfinite(v64)) and np.max(np.abs(v64)) <= BOUND[dtype])

    def emit(self, kind: str, args: list[str], attrs: dict | None = None) -> bool:
        """Add the op if its value is well defined; False (nothing added) otherwise."""
        attrs = attrs or {}
        a = [self.vals[x][2] for x in args]
        dtypes = [self.vals[x][1] for x in args]
        dtype = out_dtype_of(kind, dtypes, attrs)
        try:
            with np.errstate(all="ignore"):
                v = _ref_op(kind, a, attrs, dtype, self.bindings)
        except (ValueError, IndexError, ZeroDivisionError):
            return False
        if not self.value_ok(v, dtype) or v.size > self.max_elems:
            return False
        shape = attrs.pop("_shape", None)
        if shape is None:
            shape = _sym_shape(kind, [self.vals[x][0] for x in args], attrs, tuple(int(d) for d in v.shape))
        out = f"v{len(self.ops)}"
        self.ops.append((out, kind, tuple(args), attrs))
        self.vals[out] = (shape, dtype, v, False)
        self.used.update(args)
        return True

    def margin_ok(self, x: str, distance: np.ndarray) -> bool:
        """A computed float value keeps ``distance`` above its margin (exact inputs need none)."""
        shape, dtype, v, exact = self.vals[x]
        if exact or not _is_float(dtype) or distance.size == 0:
            return True
        return bool(np.min(distance) > MARGIN[dtype] * (1 + np.max(np.abs(v.astype(np.float64)))))

    def step(self) -> bool:
        r = self.rng
        kinds = ["unary"] * 6 + ["binary"] * 6 + ["compare", "where", "reduce", "reduce", "reduce", "astype", "matmul",
                 "permute", "reshape", "expand", "squeeze", "concat", "split", "slice", "take", "broadcast",
                 "softmax", "layer_norm", "clip", "fma", "conv", "pool", "const", "logical", "fill", "dense",
                 "batch_norm"]
        return getattr(self, "g_" + str(r.choice(kinds)))()

    def g_unary(self) -> bool:
        floats = tuple(d for d in self.dtypes if d in FLOATS)
        if not floats or self.rng.random() < 0.3:
            x = self.operand(self.dtypes)
            dtype = self.vals[x][1]
            if dtype == "bool":
                return self.emit("logical_not", [x])
            if dtype in INTS:
                return self.emit(str(self.rng.choice(sorted(UNARY_INT))), [x])
        kind = str(self.rng.choice(sorted(UNARY_FLOAT) + ["nn.leakyrelu", "isfinite"]))
        lo, hi = DOMAIN.get(kind, (None, None))

        def inside(s: tuple, d: str, v: np.ndarray) -> bool:
            v64 = v.astype(np.float64)
            return not v.size or ((lo is None or v64.min() >= lo) and (hi is None or v64.max() <= hi))

        # a new input lies in [-3, 3] cut to the op's domain
        plo = -3.0 if lo is None else max(lo, -3.0)
        phi = 3.0 if hi is None else min(hi, 3.0)
        x = self.operand(floats or ("float32",), inside, plo, phi)
        shape, dtype, v, exact = self.vals[x]
        v64 = v.astype(np.float64)
        if not inside(shape, dtype, v):
            return False
        if kind in STEP:
            frac = np.abs(v64 - np.round(v64))
            dist = np.abs(frac - 0.5) if kind == "round" else (np.abs(v64) if kind == "sign" else frac)
            if not self.margin_ok(x, dist):
                return False
            if kind == "round" and "round_exact_halves" in KNOWN_BUG_EXCLUSIONS and np.any(frac == 0.5):
                return False
        return self.emit(kind, [x], {"alpha": float(self.rng.choice([0.01, 0.2]))} if kind == "nn.leakyrelu" else {})

    def _same_size(self, p: Any, q: Any) -> bool:
        """Dims that agree at run time: equal, or two symbols bound to the same size."""
        return p == q or (isinstance(p, str) and isinstance(q, str) and self.bindings[p] == self.bindings[q])

    def _alias(self, d: Any) -> Any:
        """``d``, or sometimes another symbol bound to the same size (distinct but equal at run time)."""
        if isinstance(d, str) and self.rng.random() < 0.4:
            same = sorted(s for s in self.bindings if self.bindings[s] == self.bindings[d])
            return str(self.rng.choice(same))
        return d

    def _partner(self, x: str, dtype: str, lo: float = -3.0, hi: float = 3.0) -> str:
        shape = self.vals[x][0]

        def compatible(s: tuple, d: str, v: np.ndarray) -> bool:
            if d != dtype:
                return False
            return all(self._same_size(p, q) or p == 1 or q == 1 for p, q in zip(reversed(s), reversed(shape)))

        y = None if self.rng.random() < 0.4 else self.pick(compatible)
        return y if y is not None else self.new_param(tuple(self._alias(d) for d in self.broadcast_partner(shape)),
                                                      dtype, lo, hi)

    def g_binary(self) -> bool:
        x = self.operand(tuple(d for d in self.dtypes if d != "bool") or ("float32",))
        dtype = self.vals[x][1]
        kinds = ["add", "subtract", "multiply", "maximum", "minimum", "floor_divide", "floor_mod"]
        kinds += ["divide", "power"] if _is_float(dtype) else ["mod", "bitwise_and", "bitwise_or", "bitwise_xor",
                                                               "left_shift", "right_shift"]
        kind = str(self.rng.choice(kinds))
        lo, hi = {"power": (-2, 2), "left_shift": (0, 3), "right_shift": (0, 3)}.get(kind, (-3, 3))
        y = self._partner(x, dtype, lo, hi)
        xv, yv = self.vals[x][2].astype(np.float64), self.vals[y][2].astype(np.float64)
        with np.errstate(all="ignore"):
            if kind in ("divide", "floor_divide", "floor_mod", "mod") and np.any(np.abs(yv) < 0.5):
                return False
            if kind == "power" and (np.any(xv < 0.5) or np.any(xv > 3) or np.any(np.abs(yv) > 2)):
                return False
            if kind in ("left_shift", "right_shift") and (np.any(yv < 0) or np.any(yv > 3)):
                return False
            if kind in ("floor_divide", "floor_mod") and _is_float(dtype):
                q = xv / yv
                dist = np.abs(q - np.round(q))
                if not (self.margin_ok(x, dist) and self.margin_ok(y, dist)):
                    return False
        return self.emit(kind, [x, y])

    def g_const(self) -> bool:
        x = self.operand(tuple(d for d in self.dtypes if d != "bool") or ("float32",))
        dtype = self.vals[x][1]
        kind = str(self.rng.choice(["add", "subtract", "multiply", "maximum", "minimum"]))
        value: Any = float(self.rng.choice([0.0, 1.0, -1.0, 2.0, 0.5, 3.0])) if _is_float(dtype) \
            else int(self.rng.integers(-3, 4))
        return self.emit("const_rhs", [x], {"op": kind, "value": value})

    def g_compare(self) -> bool:
        x = self.operand(tuple(d for d in self.dtypes if d != "bool") or ("float32",))
        dtype = self.vals[x][1]
        y = self._partner(x, dtype)
        diff = np.abs(self.vals[x][2].astype(np.float64) - self.vals[y][2].astype(np.float64))
        if not (self.margin_ok(x, diff) and self.margin_ok(y, diff)):
            return False
        return self.emit(str(self.rng.choice(sorted(COMPARE))), [x, y])

    def g_logical(self) -> bool:
        x = self.operand(("bool",))
        return self.emit(str(self.rng.choice(sorted(LOGICAL))), [x, self._partner(x, "bool")])

    def g_where(self) -> bool:
        x = self.operand(tuple(d for d in self.dtypes if d != "bool") or ("float32",))
        shape, dtype = self.vals[x][:2]
        c = self._partner(x, "bool")
        y = self._partner(x, dtype)
        if "where_distinct_symbols" in KNOWN_BUG_EXCLUSIONS:
            shapes = [self.vals[v][0] for v in (c, x, y)]
            rank = max(len(sh) for sh in shapes)
            for i in range(1, rank + 1):
                if len({sh[-i] for sh in shapes if len(sh) >= i and isinstance(sh[-i], str)}) > 1:
                    return False
        return self.emit("where", [c, x, y])

    def g_fma(self) -> bool:
        x = self.operand(FLOATS if any(d in FLOATS for d in self.dtypes) else ("float32",))
        shape, dtype = self.vals[x][:2]
        ys = [y for y in (self.pick(lambda s, d, v: s == shape and d == dtype) for _ in range(2))]
        ys = [y if y is not None else self.new_param(shape, dtype) for y in ys]
        return self.emit("ewise_fma", [x] + ys)

    def g_clip(self) -> bool:
        x = self.operand(tuple(d for d in self.dtypes if d != "bool") or ("float32",))
        dtype = self.vals[x][1]
        lo, hi = sorted(self.rng.choice([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], 2, replace=False))
        if dtype in INTS:
            lo, hi = int(np.floor(lo)), int(np.ceil(hi))
        return self.emit("clip", [x], {"lo": lo, "hi": hi})

    def g_reduce(self) -> bool:
        x = self.operand(tuple(d for d in self.dtypes if d != "bool") or ("float32",), lambda s, d, v: len(s) > 0)
        shape, dtype, v, exact = self.vals[x]
        if not shape:
            return False
        kinds = ["sum", "prod", "max", "min", "argmax", "argmin"]
        kinds += ["mean", "variance", "std"] if _is_float(dtype) else []
        kind = str(self.rng.choice(kinds))
        axis = None if self.rng.random() < 0.2 else sorted(
            int(a) for a in self.rng.choice(len(shape), int(self.rng.integers(1, len(shape) + 1)), replace=False))
        if kind in ("argmax", "argmin"):
            axis = None if self.rng.random() < 0.3 else int(self.rng.integers(0, len(shape)))
        keepdims = bool(self.rng.random() < 0.4)
        cs = self.concrete(shape)
        axes = range(len(shape)) if axis is None else ([axis] if isinstance(axis, int) else axis)
        if any(cs[a] == 0 for a in axes):
            if kind in ("max", "min", "argmax", "argmin", "variance", "std"):
                return False  # no numpy value
            if "reduce_zero_size_axis" in KNOWN_BUG_EXCLUSIONS:
                return False
        if ("reduce_rank0_of_unit_dims" in KNOWN_BUG_EXCLUSIONS and axis is None and not keepdims
                and 1 in cs and kind not in ("argmax", "argmin")):
            return False
        if dtype == "float16" and kind in ("sum", "mean", "variance", "std") and v.size:
            # every partial sum (of squares, for the variance) stays within float16
            terms = np.abs(v.astype(np.float64)) ** (2 if kind in ("variance", "std") else 1)
            if np.max(np.sum(terms, axis=None if axis is None else tuple(axes))) > 30000:
                return False
        if kind == "prod" and v.size:  # every partial product stays bounded (no inf * 0)
            big = np.prod(np.maximum(np.abs(v.astype(np.float64)), 1.0), axis=None if axis is None else tuple(axes))
            if np.max(big) > BOUND[dtype]:
                return False
        if kind in ("argmax", "argmin") and v.size:  # a tie between computed values is ill-defined
            w = np.moveaxis(v.astype(np.float64), axis, -1) if axis is not None else v.astype(np.float64).reshape(1, -1)
            s = np.sort(w.reshape(-1, w.shape[-1]), axis=-1)
            gaps = np.abs(s[:, -1] - s[:, -2]) if kind == "argmax" and s.shape[-1] > 1 else \
                np.abs(s[:, 1] - s[:, 0]) if s.shape[-1] > 1 else np.ones(1)
            if np.any(gaps == 0) or not self.margin_ok(x, gaps):
                return False
        if kind == "std" and v.size:
            var = v.astype(np.float64).var(axis=None if axis is None else tuple(axes))
            if np.min(var) < 1e-2:  # sqrt is ill-conditioned near 0
                return False
        return self.emit(kind, [x], {"axis": axis, "keepdims": keepdims})

    def g_astype(self) -> bool:
        x = self.operand(self.dtypes)
        shape, dtype, v, exact = self.vals[x]
        to = str(self.rng.choice(("float32", "float16", "int32", "int64", "bool")))
        if _is_float(dtype) and to in INTS + ("bool",):
            v64 = v.astype(np.float64)
            # truncation jumps at every integer, the cast to bool at 0
            dist = np.abs(v64 - np.round(v64)) if to in INTS else np.abs(v64)
            if not self.margin_ok(x, dist):
                return False
        return self.emit("astype", [x], {"dtype": to})

    def g_matmul(self) -> bool:
        numeric = tuple(d for d in self.dtypes if d in FLOATS + ("int32",)) or ("float32",)
        x = self.operand(numeric, lambda s, d, v: len(s) >= 1)
        shape, dtype = self.vals[x][:2]
        if not shape:
            return False
        k = self._alias(shape[-1])
        if len(shape) == 1 or self.rng.random() < 0.6:
            yshape = (k, self.dim())
        else:
            yshape = tuple(d if self.rng.random() < 0.7 else 1 for d in shape[:-2][-1:]) + (k, self.dim())
        if self.rng.random() < 0.15:
            yshape = (k,)
        y = self.pick(lambda s, d, v: s == yshape and d == dtype) if self.rng.random() < 0.3 else None
        y = y if y is not None else self.new_param(yshape, dtype, -2, 2)
        out = {"float16": "float32", "int32": "int64"}.get(dtype) if self.rng.random() < 0.25 else None
        return self.emit("matmul", [x, y], {"out_dtype": out} if out else {})

    def g_permute(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: len(s) >= 2)
        shape = self.vals[x][0]
        axes = None if self.rng.random() < 0.3 else [int(a) for a in self.rng.permutation(len(shape))]
        out = tuple(reversed(shape)) if axes is None else tuple(shape[a] for a in axes)
        return self.emit("permute_dims", [x], {"axes": axes, "_shape": out})

    def g_reshape(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: all(isinstance(e, int) for e in s))
        shape = self.vals[x][0]
        if any(isinstance(e, str) for e in shape):
            return False
        total = int(np.prod(shape))
        if self.rng.random() < 0.2 or total == 0:
            if total == 0 or self.rng.random() < 0.5:
                return self.emit("flatten", [x]) if len(shape) >= 1 else False
        factors = [f for f in (1, 2, 3, 5, 7, 4) if total % f == 0]
        new, rest = [], total
        for _ in range(int(self.rng.integers(0, 3))):
            f = int(self.rng.choice([f for f in factors if rest % f == 0]))
            new.append(f)
            rest //= f
        new.append(rest)
        order = [int(i) for i in self.rng.permutation(len(new))]
        new = [new[i] for i in order]
        if self.rng.random() < 0.3:
            new[int(self.rng.integers(0, len(new)))] = -1
        return self.emit("reshape", [x], {"shape": tuple(new)})

    def g_expand(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: len(s) < 4)
        shape = self.vals[x][0]
        if len(shape) >= 4:
            return False
        n = int(self.rng.integers(1, 3)) if len(shape) < 3 else 1
        axes = sorted(int(a) for a in self.rng.choice(len(shape) + n, n, replace=False))
        s = list(shape)
        for a in axes:
            s.insert(a, 1)
        return self.emit("expand_dims", [x], {"axis": axes, "_shape": tuple(s)})

    def g_squeeze(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: 1 in s)
        shape = self.vals[x][0]
        ones = [i for i, d in enumerate(shape) if d == 1]
        if not ones:
            return False
        if self.rng.random() < 0.3 and not any(isinstance(d, str) for d in shape):
            axis = None
        else:
            n = int(self.rng.integers(1, len(ones) + 1))
            axis = sorted(int(a) for a in self.rng.choice(ones, n, replace=False))
        keep = tuple(d for i, d in enumerate(shape) if d != 1 or (axis is not None and i not in axis))
        return self.emit("squeeze", [x], {"axis": axis, "_shape": keep})

    def g_concat(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: len(s) >= 1 and any(isinstance(e, int) for e in s))
        shape, dtype = self.vals[x][:2]
        axes = [i for i, d in enumerate(shape) if isinstance(d, int)]
        if not axes:
            return False
        axis = int(self.rng.choice(axes))
        parts = [x]
        for _ in range(int(self.rng.integers(1, 3))):
            other = self.pick(lambda s, d, v: d == dtype and len(s) == len(shape) and isinstance(s[axis], int)
                              and all(self._same_size(p, q) for i, (p, q) in enumerate(zip(s, shape)) if i != axis))
            if other is None or self.rng.random() < 0.4:
                s = [self._alias(d) for d in shape]
                s[axis] = int(self.rng.choice([0, 1, 2, 3]))
                other = self.new_param(tuple(s), dtype)
            parts.append(other)
        out = list(shape)
        out[axis] = sum(self.vals[p][0][axis] for p in parts)
        return self.emit("concat", parts, {"axis": axis if self.rng.random() < 0.7 else axis - len(shape),
                                            "_shape": tuple(out)})

    def g_split(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: any(isinstance(e, int) and e > 0 for e in s))
        shape = self.vals[x][0]
        axes = [i for i, d in enumerate(shape) if isinstance(d, int) and d > 0]
        if not axes:
            return False
        axis = int(self.rng.choice(axes))
        size = shape[axis]
        divisors = [k for k in range(1, size + 1) if size % k == 0]
        if self.rng.random() < 0.5:
            ios: Any = int(self.rng.choice(divisors))
            n = ios
        else:
            ios = sorted(int(i) for i in self.rng.integers(0, size + 1, int(self.rng.integers(1, 3))))
            n = len(ios) + 1
        index = int(self.rng.integers(0, n))
        pts = [0] + _split_points(size, ios) + [size]
        s = list(shape)
        s[axis] = max(0, pts[index + 1] - pts[index])
        return self.emit("split", [x], {"ios": ios, "axis": axis, "index": index, "_shape": tuple(s)})

    def g_slice(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: any(isinstance(e, int) for e in s))
        shape = self.vals[x][0]
        cand = [i for i, d in enumerate(shape) if isinstance(d, int)]
        if not cand:
            return False
        axes = sorted(int(a) for a in self.rng.choice(cand, int(self.rng.integers(1, len(cand) + 1)), replace=False))
        begin, end, strides = [], [], []
        s = list(shape)
        for a in axes:
            n = shape[a]
            st = int(self.rng.choice([1, 1, 2, 3, -1, -2]))
            if st > 0:
                b = int(self.rng.integers(-n, n + 1)) if n else 0
                e = int(self.rng.integers(-n, n + 1)) if n else 0
            else:
                b = int(self.rng.integers(-n, n)) if n else 0
                e = int(self.rng.integers(-n - 1, n)) if n else 0
            begin.append(b)
            end.append(e)
            strides.append(st)
            s[a] = len(range(n)[slice(b, e, st)])
        return self.emit("strided_slice", [x], {"axes": axes, "begin": begin, "end": end, "strides": strides,
                                                 "_shape": tuple(s)})

    def g_take(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: any(n > 0 for n in v.shape))
        shape, dtype, v, _ = self.vals[x]
        axes = [i for i, n in enumerate(v.shape) if n > 0]
        if not axes:
            return False
        axis = int(self.rng.choice(axes))
        ishape = tuple(int(self.rng.choice([1, 2, 3, 0 if self.rng.random() < 0.1 else 4]))
                       for _ in range(int(self.rng.integers(0, 3))))
        idx = self.new_param(ishape, str(self.rng.choice(INTS)), 0, v.shape[axis] - 1)
        s = shape[:axis] + ishape + shape[axis + 1:]
        return self.emit("take", [x, idx], {"axis": axis, "_shape": s})

    def g_broadcast(self) -> bool:
        x = self.operand(self.dtypes, lambda s, d, v: len(s) < 4)
        shape = self.vals[x][0]
        target = [self.dim(allow_sym=False) if d == 1 and self.rng.random() < 0.6 else d for d in shape]
        if len(target) < 4 and self.rng.random() < 0.5:
            target.insert(0, int(self.rng.choice([1, 2, 3])))
        if int(np.prod(self.concrete(tuple(target)))) > self.max_elems:
            return False
        return self.emit("broadcast_to", [x], {"shape": tuple(target), "_shape": tuple(target)})

    def _float_operand(self, ok: Callable[[tuple, str, np.ndarray], bool] = lambda s, d, v: True) -> str | None:
        floats = tuple(d for d in self.dtypes if d in FLOATS)
        return self.operand(floats, ok) if floats else None

    def g_softmax(self) -> bool:
        x = self._float_operand(lambda s, d, v: len(s) >= 1)
        if x is None or not self.vals[x][0]:
            return False
        rank = len(self.vals[x][0])
        kind = "nn.softmax" if self.rng.random() < 0.6 else "nn.log_softmax"
        return self.emit(kind, [x], {"axis": int(self.rng.integers(-rank, rank))})

    def g_layer_norm(self) -> bool:
        x = self._float_operand(lambda s, d, v: len(s) >= 1)
        if x is None:
            return False
        shape, dtype, v, _ = self.vals[x]
        if not shape:
            return False
        k = int(self.rng.integers(1, min(2, len(shape)) + 1))
        axes = list(range(len(shape) - k, len(shape)))
        norm = shape[len(shape) - k:]
        if any(not isinstance(d, int) or d == 0 for d in norm) or v.size == 0:
            return False
        v64 = v.astype(np.float64)
        var = v64.var(axis=tuple(axes))
        mean = v64.mean(axis=tuple(axes))
        if np.max(np.abs(v64)) > 10 or np.any(var < 1e-2 * (1 + mean ** 2)):  # keeps the variance well conditioned
            return False
        g = self.new_param(tuple(norm), dtype)
        b = self.new_param(tuple(norm), dtype)
        if self.rng.random() < 0.3:
            axes = [a - len(shape) for a in axes]  # negative axes count from the end
        return self.emit("nn.layer_norm", [x, g, b], {"axes": axes})

    def g_fill(self) -> bool:
        x = self.operand(self.dtypes)
        dtype = self.vals[x][1]
        kind = str(self.rng.choice(["zeros_like", "ones_like", "full_like"]))
        value: Any = True if dtype == "bool" else (1.5 if _is_float(dtype) else 3)
        return self.emit(kind, [x], {"value": value} if kind == "full_like" else {})

    def g_dense(self) -> bool:
        x = self._float_operand(lambda s, d, v: len(s) == 2)
        if x is None or len(self.vals[x][0]) != 2:
            return False
        (_, k), dtype = self.vals[x][:2]
        w = self.new_param((self.dim(allow_sym=False), self._alias(k)), dtype, -1, 1)
        return self.emit("nn.dense", [x, w], {"_shape": (self.vals[x][0][0], self.vals[w][0][0])})

    def g_batch_norm(self) -> bool:
        x = self._float_operand(lambda s, d, v: len(s) >= 2)
        if x is None or len(self.vals[x][0]) < 2:
            return False
        shape, dtype = self.vals[x][:2]
        axis = int(self.rng.integers(0, len(shape)))
        c = (shape[axis],)
        stats = [self.new_param(c, dtype), self.new_param(c, dtype), self.new_param(c, dtype),
                 self.new_param(c, dtype, 0.5, 2.0)]
        return self.emit("nn.batch_norm", [x] + stats, {"axis": axis})

    def _image(self) -> str | None:
        x = self._float_operand(lambda s, d, v: len(s) == 4 and all(isinstance(e, int) and e > 0 for e in s[1:]))
        if x is None:
            return None
        if len(self.vals[x][0]) != 4 or not all(isinstance(e, int) and e > 0 for e in self.vals[x][0][1:]):
            dtype = self.vals[x][1]
            shape = (self.dim(), int(self.rng.choice([1, 2, 3, 4])), int(self.rng.choice([3, 4, 5, 7])),
                     int(self.rng.choice([3, 4, 5])))
            x = self.new_param(shape if np.prod(self.concrete(shape)) <= self.max_elems else (1,) + shape[1:], dtype)
        return x

    def g_conv(self) -> bool:
        x = self._image()
        if x is None:
            return False
        (n, c, h, w), dtype = self.vals[x][:2]
        groups = c if c > 1 and self.rng.random() < 0.3 else 1
        o = groups * int(self.rng.choice([1, 2, 3]))
        kh, kw = int(self.rng.choice([1, 2, 3])), int(self.rng.choice([1, 3]))
        strides = tuple(int(s) for s in self.rng.choice([1, 2], 2))
        dilation = tuple(int(s) for s in self.rng.choice([1, 1, 2], 2))
        padding = tuple(int(p) for p in self.rng.choice([0, 0, 1], 4))
        if (h + padding[0] + padding[2] < dilation[0] * (kh - 1) + 1
                or w + padding[1] + padding[3] < dilation[1] * (kw - 1) + 1):
            return False
        wt = self.new_param((o, c // groups, kh, kw), dtype, -1, 1)
        oh = (h + padding[0] + padding[2] - dilation[0] * (kh - 1) - 1) // strides[0] + 1
        ow = (w + padding[1] + padding[3] - dilation[1] * (kw - 1) - 1) // strides[1] + 1
        return self.emit("nn.conv2d", [x, wt], {"strides": strides, "padding": padding, "dilation": dilation,
                                                 "groups": groups, "_shape": (n, o, oh, ow)})

    def g_pool(self) -> bool:
        x = self._image()
        if x is None:
            return False
        (n, c, h, w) = self.vals[x][0]
        r = self.rng.random()
        if r < 0.2:
            size = (int(self.rng.integers(1, h + 1)), int(self.rng.integers(1, w + 1)))
            return self.emit("nn.adaptive_avg_pool2d", [x], {"size": size, "_shape": (n, c) + size})
        kind = "nn.max_pool2d" if r < 0.6 else "nn.avg_pool2d"
        pool = tuple(int(p) for p in self.rng.choice([1, 2, 3], 2))
        strides = tuple(int(s) for s in self.rng.choice([1, 2], 2))
        padding = tuple(int(min(p, pool[i % 2] // 2)) for i, p in enumerate(self.rng.choice([0, 1], 4)))
        if h + padding[0] + padding[2] < pool[0] or w + padding[1] + padding[3] < pool[1]:
            return False
        oh = (h + padding[0] + padding[2] - pool[0]) // strides[0] + 1
        ow = (w + padding[1] + padding[3] - pool[1]) // strides[1] + 1
        return self.emit(kind, [x], {"pool": pool, "strides": strides, "padding": padding,
                                     "include_pad": bool(self.rng.random() < 0.5), "_shape": (n, c, oh, ow)})

    def program(self) -> dict:
        n_ops = int(self.rng.integers(3, max(3, self.max_ops) + 1))
        tries = 0
        while len(self.ops) < n_ops and tries < 40 * n_ops:
            tries += 1
            self.step()
        used = {a for _, _, args, _ in self.ops for a in args}
        outputs = [out for out, _, _, _ in self.ops if out not in used] or [self.ops[-1][0]]
        prog = {"params": list(self.params), "bindings": dict(self.bindings), "ops": list(self.ops),
                "outputs": outputs, "inputs": dict(self.inputs), "seed": self.seed}
        return _prune(prog)


def _broadcast_sym(shapes: list[tuple]) -> tuple:
    """Numpy broadcasting over dims that are ints or symbol names (equal, or one of them 1)."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        rest = [d for d in dims if d != 1]
        out.append(rest[0] if rest else 1)
    return tuple(out)


def _sym_shape(kind: str, shapes: list[tuple], attrs: dict, concrete: tuple) -> tuple:
    """The result shape of an op in terms of the symbols of its inputs (``concrete`` for the ops
    the generator only applies to static shapes)."""
    if kind in BINARY_ARITH or kind in COMPARE or kind in LOGICAL or kind in ("where", "ewise_fma"):
        return _broadcast_sym(shapes)
    if kind in REDUCE or kind in ("argmax", "argmin"):
        axis = attrs["axis"]
        axes = set(range(len(shapes[0]))) if axis is None else {a % len(shapes[0]) for a in
                                                               ([axis] if isinstance(axis, int) else axis)}
        return tuple(1 if i in axes else d for i, d in enumerate(shapes[0])
                     if i not in axes or attrs["keepdims"])
    if kind == "matmul":
        a, b = shapes
        if len(a) == 1 and len(b) == 1:
            return ()
        if len(b) == 1:
            return a[:-1]
        if len(a) == 1:
            return b[:-2] + b[-1:]
        return _broadcast_sym([a[:-2], b[:-2]]) + (a[-2], b[-1])
    if kind in ("reshape", "flatten"):
        return concrete
    return shapes[0]  # elementwise on one tensor (unary, astype, clip, softmax, layer_norm...)


def _prune(prog: dict) -> dict:
    """``prog`` without ops and params its outputs do not need."""
    need = set(prog["outputs"])
    ops = []
    for op in reversed(prog["ops"]):
        if op[0] in need:
            ops.append(op)
            need.update(op[2])
    ops.reverse()
    params = [p for p in prog["params"] if p[0] in need]
    syms = {d for _, s, _ in params for d in s if isinstance(d, str)}
    syms |= {d for _, k, _, at in ops if k == "broadcast_to" for d in at["shape"] if isinstance(d, str)}
    return {**prog, "ops": ops, "params": params, "inputs": {p[0]: prog["inputs"][p[0]] for p in params},
            "bindings": {s: v for s, v in prog["bindings"].items() if s in syms}}


def generate(seed: int, max_ops: int = 12,
             dtypes: tuple[str, ...] = ("float32", "float16", "int32", "int64", "bool"), large: bool = False) -> dict:
    """A random, well-defined program from ``seed`` (deterministic); ``large`` also draws sizes
    up to 67 (at most 4096 elements a tensor)."""
    rng = np.random.default_rng(seed)
    # most programs stay in one or two dtypes, so ops chain instead of each taking a fresh input
    main = str(rng.choice(["float32", "float32", "float16", "int32", "int64"]))
    chosen = tuple(d for d in dtypes if d == main or rng.random() < 0.25) or (dtypes[0],)
    return _Gen(seed, max_ops, chosen, large).program()


def unequal_dims_program(kind: str) -> dict:
    """A program whose op needs two symbolic dims to agree (``n`` and ``m``) called with them
    unequal (2 and 4): compiled code must refuse it with an error, neither crash nor answer."""
    shapes = {"add": (("n", 3), ("m", 3)), "multiply": (("n", 1), ("m", 3)), "matmul": ((3, "n"), ("m", 2)),
              "concat": (("n", 2), ("m", 3)), "where": (("n", 3), ("m", 3))}[kind]
    rng = np.random.default_rng(0)
    params = [("x0", shapes[0], "float32"), ("x1", shapes[1], "float32")]
    sizes = {"n": 2, "m": 4}
    inputs = {n: rng.uniform(-1, 1, tuple(sizes.get(d, d) for d in s)).astype("float32") for n, s, _ in params}
    args, attrs = ("x0", "x1"), {}
    if kind == "concat":
        attrs = {"axis": 1}
    if kind == "where":
        params.append(("c", ("n", 3), "bool"))
        inputs["c"] = rng.random((2, 3)) < 0.5
        args = ("c", "x0", "x1")
    return {"params": params, "bindings": sizes, "ops": [("v0", kind, args, attrs)], "outputs": ["v0"],
            "inputs": inputs, "seed": -1}


# ---------------------------------------------------------------- worker subprocesses
def _worker_main() -> None:
    """Serve jobs (program, path) from stdin; answer with outputs or the error, over a private fd."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed (Python or C) goes to stderr, never into the protocol
    sys.stdout = sys.stderr
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    except (ImportError, ValueError, OSError):
        pass
    import tvmlite  # noqa: F401 - import once, before the first job
    inp = sys.stdin.buffer
    while True:
        head = inp.read(8)
        if len(head) < 8:
            return
        prog, path = pickle.loads(inp.read(struct.unpack("<Q", head)[0]))
        try:
            result: Any = ("ok", run_path(prog, path))
        except BaseException as err:  # noqa: BLE001 - every failure goes back to the parent
            tb = traceback.extract_tb(err.__traceback__)
            where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb) if "tvmlite" in f.filename
                          or "/work/" in f.filename), "")
            result = ("error", f"{type(err).__name__}: {str(err)[:2000]}", where)
        data = pickle.dumps(result)
        out.write(struct.pack("<Q", len(data)) + data)
        out.flush()


class _Worker:
    def __init__(self) -> None:
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)

    def _read(self, n: int, deadline: float) -> bytes:
        buf = b""
        fd = self.proc.stdout.fileno()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def run(self, prog: dict, path: str, timeout: float) -> tuple:
        data = pickle.dumps((prog, path))
        self.log.seek(0)
        self.log.truncate()  # the tail shown for a crash is this job's
        try:
            self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
            self.proc.stdin.flush()
            deadline = time.monotonic() + timeout
            n = struct.unpack("<Q", self._read(8, deadline))[0]
            return pickle.loads(self._read(n, deadline))
        except TimeoutError:
            self.kill()
            return ("crash", f"timeout after {timeout:.0f} s")
        except (EOFError, BrokenPipeError, OSError):
            code = self.proc.wait()
            self.log.seek(0)
            tail = self.log.read().decode(errors="replace").strip().splitlines()[-3:]
            return ("crash", f"worker died (exit status {code})" + (": " + " | ".join(tail) if tail else ""))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


class WorkerPool:
    """Worker subprocesses reused across jobs; a dead one is replaced before its next job."""

    def __init__(self, jobs: int = 1, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self.free = [_Worker() for _ in range(max(1, jobs))]
        self.lock = threading.Lock()
        self.size = max(1, jobs)

    def run(self, prog: dict, path: str) -> tuple:
        """``("ok", outputs)``, ``("error", message, where)`` or ``("crash", message)``; a worker
        that dies is run again once on a fresh one, so only a job that kills it twice is a crash
        (not one that met a worker killed from outside)."""
        for _ in range(2):
            with self.lock:
                w = self.free.pop() if self.free else _Worker()
            if not w.alive():
                w.close()
                w = _Worker()
            result = w.run(prog, path, self.timeout)
            if not w.alive():
                w.close()
                w = _Worker()
            with self.lock:
                self.free.append(w)
            if result[0] != "crash" or result[1].startswith("timeout"):
                break
        return result

    def close(self) -> None:
        """Stop every worker."""
        for w in self.free:
            w.close()
        self.free = []

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


# ---------------------------------------------------------------- checking and minimising
def run_case(pool: WorkerPool, prog: dict, path: str) -> tuple[str, str]:
    """The outcome of ``prog`` on ``path``: ``("ok", "")`` or (mismatch | crash | error, detail)."""
    res = pool.run(prog, path)
    if res[0] == "crash":
        return "crash", res[1]
    if res[0] == "error":
        return "error", res[1] + (f" (at {res[2]})" if res[2] else "")
    diff = check_outputs(prog, res[1])
    return ("mismatch", diff) if diff else ("ok", "")


def _error_key(kind: str, detail: str) -> str:
    """What must stay the same while minimising: the kind, and for errors the exception type."""
    return kind + ":" + detail.split(":", 1)[0] if kind == "error" else kind


def _candidates(prog: dict) -> Iterable[dict]:
    """Smaller variants of ``prog``, most shrinking first."""
    if len(prog["outputs"]) > 1:
        for o in prog["outputs"]:
            yield _prune({**prog, "outputs": [o]})
    for out, _, _, _ in prog["ops"]:
        if out not in prog["outputs"]:  # end the program earlier: what follows goes
            yield _prune({**prog, "outputs": [out]})
    ref = None
    for i in range(len(prog["ops"]) - 1, -1, -1):
        out, kind, args, attrs = prog["ops"][i]
        if out in prog["outputs"]:
            continue
        # the op's users read an input holding the value it computed instead
        ref = reference(prog) if ref is None else ref
        name = "p_" + out
        v = ref[out]
        shape = tuple(v.shape)
        ops = [(o, k, tuple(name if a == out else a for a in ar), at) for o, k, ar, at in prog["ops"] if o != out]
        yield _prune({**prog, "ops": ops, "params": prog["params"] + [(name, shape, str(v.dtype))],
                      "inputs": {**prog["inputs"], name: v}})
    sinfo = None
    for i, (out, kind, args, attrs) in enumerate(prog["ops"]):
        # drop an op whose input has its struct info: its users read that input
        if out in prog["outputs"]:
            continue
        sinfo = _struct_infos(prog) if sinfo is None else sinfo
        for a in dict.fromkeys(args):
            if a in sinfo and sinfo.get(a) == sinfo.get(out):
                ops = [(o, k, tuple(a if x == out else x for x in ar), at) for o, k, ar, at in prog["ops"] if o != out]
                yield _prune({**prog, "ops": ops})
    for s, value in prog["bindings"].items():
        def fix(shape: tuple) -> tuple:
            return tuple(value if d == s else d for d in shape)
        ops = [(o, k, ar, {**at, "shape": fix(at["shape"])} if k == "broadcast_to" else at)
               for o, k, ar, at in prog["ops"]]
        yield _prune({**prog, "params": [(n, fix(sh), d) for n, sh, d in prog["params"]], "ops": ops,
                      "bindings": {k: v for k, v in prog["bindings"].items() if k != s}})


def _struct_infos(prog: dict) -> dict[str, str]:
    """The printed struct info of every param and binding of ``prog``'s module."""
    from tvmlite.ir import relax as rx

    try:
        func = build_module(prog)["main"]
    except Exception:  # noqa: BLE001 - no module, no struct info: nothing is dropped this way
        return {}
    out = {p.name_hint: str(p.struct_info) for p in func.params}
    for block in func.body.blocks:
        for b in block.bindings:
            if isinstance(b.var, rx.Var):
                out[b.var.name_hint] = str(b.var.struct_info)
    return out


def _well_defined(prog: dict) -> bool:
    """The candidate's reference exists and stays within the generator's bounds."""
    try:
        with np.errstate(all="ignore"):
            ref = reference(prog)
    except (ValueError, IndexError, ZeroDivisionError, KeyError):
        return False
    return all(v.dtype == bool or v.size == 0 or (np.all(np.isfinite(v.astype(np.float64)))
                                                  and np.max(np.abs(v.astype(np.float64))) <= BOUND[str(v.dtype)])
               for v in ref.values())


def minimise(prog: dict, fails: Callable[[dict], bool], budget: int = 80) -> dict:
    """A smallest variant of ``prog`` (greedy, at most ``budget`` trials) on which ``fails`` holds."""
    trials = 0
    changed = True
    while changed and trials < budget:
        changed = False
        for cand in _candidates(prog):
            if trials >= budget:
                break
            if len(cand["ops"]) == 0 or not _well_defined(cand):
                continue
            trials += 1
            if fails(cand):
                prog = cand
                changed = True
                break
    return prog


def _literal(a: np.ndarray) -> str:
    return f"np.array({a.tolist()!r}, dtype={str(a.dtype)!r}).reshape({tuple(a.shape)!r})"


def reproducer(prog: dict, path: str, kind: str, detail: str) -> str:
    """A standalone Python script that compiles and runs ``prog`` on ``path`` and checks it."""
    ref = reference(prog)
    text = script_of(prog)
    inputs = ",\n".join(f"    {_literal(prog['inputs'][n])},  # {n}: {list(s)} {d}" for n, s, d in prog["params"])
    expected = ",\n".join(f"    {_literal(ref[o])},  # {o}" for o in prog["outputs"])
    tols = tolerances(prog, ref)
    tol_list = ", ".join(repr(tols[o]) for o in prog["outputs"])
    bindings = ", ".join(f"{k}={v}" for k, v in sorted(prog["bindings"].items())) or "none"
    run = {"default": "ex = tvmlite.compile(mod)",
           "lower": 'ex = tvmlite.compile(mod, tir_pipeline="lower")',
           "opt": 'ex = tvmlite.compile(mod, relax_pipeline="default")',
           "interp": ("from tvmlite.backend.compile import VMExecutable, _pipeline\n"
                      "from tvmlite.backend.interpreter import InterpreterExecutor\n"
                      "graph = _pipeline(\"zero\", \"relax_pipeline\")(mod)\n"
                      "ex = VMExecutable(graph, InterpreterExecutor(graph))")}[path]
    return f'''# difftest reproducer: {kind} on path {path!r}
# generator seed {prog["seed"]}; symbolic sizes: {bindings}
# {detail.splitlines()[0] if detail else ""}
import numpy as np
import tvmlite
from tvmlite.script import from_source

SCRIPT = """
{text}
"""
inputs = [
{inputs}
]
expected = [
{expected}
]
mod = from_source(SCRIPT)
{run}
out = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](*inputs)
out = out if isinstance(out, tuple) else (out,)
for got, want, (rtol, atol) in zip(out, expected, [{tol_list}]):  # the tester's (rtol, atol)
    assert got.numpy().shape == want.shape and got.numpy().dtype == want.dtype
    np.testing.assert_allclose(got.numpy().astype("float64"), want.astype("float64"), rtol=rtol, atol=atol)
'''


# ---------------------------------------------------------------- a campaign
def _ops_signature(prog: dict) -> str:
    return ",".join(sorted({k if k != "const_rhs" else "const_" + at["op"] for _, k, _, at in prog["ops"]}))


def run_campaign(seed: int, count: int | None = None, seconds: float | None = None, jobs: int = 1,
                 paths: tuple[str, ...] = PATHS, max_ops: int = 12, out_dir: str | None = None,
                 minimise_per_class: int = 2, log: Callable[[str], None] | None = None,
                 pool: WorkerPool | None = None, large: bool = False) -> dict:
    """Generate and check programs ``seed*1_000_003 + k`` for k = 0, 1, ... until ``count`` programs
    or ``seconds`` have passed; returns the counts and the failures (minimised up to
    ``minimise_per_class`` per class)."""
    log = log or (lambda s: None)
    own = pool is None
    pool = pool or WorkerPool(jobs)
    start = time.monotonic()
    stats: Counter = Counter()
    classes: Counter = Counter()
    failures: list[dict] = []
    lock = threading.Lock()
    next_k = [0]

    def more() -> int | None:
        with lock:
            k = next_k[0]
            if (count is not None and k >= count) or (seconds is not None and time.monotonic() - start > seconds):
                return None
            next_k[0] += 1
            return k

    def work() -> None:
        while (k := more()) is not None:
            prog = generate(seed * 1_000_003 + k, max_ops, large=large)
            with lock:
                stats["programs"] += 1
                if stats["programs"] % 100 == 0:
                    log(f"... {stats['programs']} programs, {stats['mismatch']} mismatches, {stats['crash']} crashes, "
                        f"{stats['error']} errors ({time.monotonic() - start:.0f} s)")
            for path in paths:
                kind, detail = run_case(pool, prog, path)
                with lock:
                    stats["runs"] += 1
                if kind == "ok":
                    continue
                key = _error_key(kind, detail)
                with lock:
                    stats[kind] += 1
                    first = sum(1 for f in failures if f["path"] == path and f["key"] == key) < minimise_per_class
                small = prog
                if first:
                    small = minimise(prog, lambda p: _error_key(*run_case(pool, p, path)) == key)
                    kind2, detail2 = run_case(pool, small, path)
                    if _error_key(kind2, detail2) == key:
                        detail = detail2
                    else:
                        small = prog
                what = detail.split(":", 1)[0] if kind == "error" else ""
                cls = f"{kind} [{path}] {what} ops={_ops_signature(small)}"
                fail = {"k": k, "seed": prog["seed"], "path": path, "kind": kind, "key": key, "detail": detail,
                        "program": small, "minimised": first, "class": cls}
                with lock:
                    failures.append(fail)
                    classes[cls] += 1
                text = reproducer(small, path, kind, detail)
                fail["reproducer"] = text
                if out_dir:
                    os.makedirs(out_dir, exist_ok=True)
                    fname = os.path.join(out_dir, f"repro_{prog['seed']}_{path}_{kind}.py")
                    with open(fname, "w") as fh:
                        fh.write(text)
                    fail["file"] = fname
                log(f"FAIL {kind} [{path}] program {k} (seed {prog['seed']}): {detail.splitlines()[0][:300]}"
                    + ("\n" + text if first else ""))

    try:
        threads = [threading.Thread(target=work) for _ in range(pool.size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        if own:
            pool.close()
    return {"programs": stats["programs"], "runs": stats["runs"], "mismatches": stats["mismatch"],
            "crashes": stats["crash"], "errors": stats["error"], "failures": failures,
            "classes": dict(classes), "seconds": time.monotonic() - start}


def summary_line(res: dict) -> str:
    """``programs N, mismatches M, crashes C, errors E``."""
    return (f"programs {res['programs']}, mismatches {res['mismatches']}, crashes {res['crashes']}, "
            f"errors {res['errors']}")


def main(argv: list[str] | None = None) -> int:
    """The command line; exit status 0 when every program matched numpy on every path."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=None, help="programs to check (default 100 without --seconds)")
    ap.add_argument("--seconds", type=float, default=None, help="stop starting new programs after this long")
    ap.add_argument("--jobs", type=int, default=1, help="worker subprocesses")
    ap.add_argument("--paths", default=",".join(PATHS), help="comma-separated: default,lower,interp (and opt)")
    ap.add_argument("--max-ops", type=int, default=12)
    ap.add_argument("--out", default=None, help="directory for reproducer files")
    ap.add_argument("--large", action="store_true", help="also sizes up to 67 (loop tails of tiled schedules)")
    ap.add_argument("--known-bugs", action="store_true",
                    help="also generate the combinations KNOWN_BUG_EXCLUSIONS leaves out")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker_main()
        return 0
    if args.known_bugs:
        KNOWN_BUG_EXCLUSIONS.clear()
    paths = tuple(p for p in args.paths.split(",") if p)
    bad = [p for p in paths if p not in PATHS + EXTRA_PATHS]
    if bad:
        ap.error(f"unknown path(s) {', '.join(bad)}; choose from {', '.join(PATHS + EXTRA_PATHS)}")
    count = args.count if args.count is not None or args.seconds is not None else 100
    res = run_campaign(args.seed, count, args.seconds, args.jobs, paths, args.max_ops, args.out,
                       log=lambda s: print(s, flush=True), large=args.large)
    print(summary_line(res) + f" ({res['runs']} runs, {res['seconds']:.0f} s)")
    for cls, n in sorted(res["classes"].items(), key=lambda kv: -kv[1]):
        print(f"  {n:5d}  {cls}")
    return 1 if res["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
