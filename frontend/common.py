"""What the PyTorch and ONNX importers share: the optional-package check, ``detach_params``, and
:class:`GraphEmitter`, which builds one Relax function (inputs, weights as parameters or constants,
one dataflow block) and emits the model-level ops both frameworks have (linear, conv2d with bias,
batch norm, pooling, flatten...) the way TVM's importers spell them."""
from __future__ import annotations

import importlib
import re
from typing import Any, Sequence

import numpy as np

from tvmlite.ir import IRModule, arith, tir
from tvmlite.ir.block_builder import BlockBuilder
from tvmlite.ir.dtype import from_numpy_dtype
from tvmlite.ir.names import NameSupply
from tvmlite.ir.op_api import Function, TensorStructInfo, Tuple, TupleGetItem, Var, const
from tvmlite.ir.op_api import op as relax_op
from tvmlite.ir.relax import Constant, Expr, StructInfo

__all__ = ["FrontendError", "require", "refuse_unsupported", "detach_params", "sanitize_name", "as_dim", "dim_product", "GraphEmitter",
           "PARAMS_ATTR"]

# The function attribute holding the weights of parameters kept as inputs (TVM's name).
PARAMS_ATTR = "params"

Shape = Sequence["int | tir.PrimExpr"]


class FrontendError(ValueError):
    """A model the importer cannot translate: unsupported ops, a missing input shape..."""


def require(package: str, extra: str, feature: str) -> Any:
    """Import the optional ``package`` or say which extra installs it."""
    try:
        return importlib.import_module(package)
    except ImportError as err:
        raise ImportError(f"{feature} needs the '{package}' package, which is not installed: "
                          f"pip install 'tvmlite[{extra}]'") from err


def refuse_unsupported(importer: str, missing: dict[str, list[str]], listing: str) -> None:
    """Raise one FrontendError naming every unsupported op and the nodes that use it."""
    if not missing:
        return

    def nodes(names: list[str]) -> str:
        shown = ", ".join(name or "<unnamed>" for name in names[:3])
        return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")

    listed = "; ".join(f"{op} (nodes: {nodes(names)})" for op, names in sorted(missing.items()))
    raise FrontendError(f"{importer}: unsupported ops: {listed}. The supported ops are listed by {listing}")


def detach_params(mod: IRModule) -> tuple[IRModule, dict[str, list[np.ndarray]]]:
    """Split the weights kept in each function's ``params`` attribute off the module:
    ``(module without them, {"main": [arrays in parameter order]})`` (TVM's ``detach_params``)."""
    detached = mod.copy()
    params: dict[str, list[np.ndarray]] = {}
    for gv, func in mod.functions_items():
        if not isinstance(func, Function) or PARAMS_ATTR not in func.attrs:
            continue
        params[gv.name_hint] = [np.asarray(c.data) if isinstance(c, Constant) else np.asarray(c)
                                for c in func.attrs[PARAMS_ATTR]]
        detached[gv] = func.without_attr(PARAMS_ATTR)
    return detached, params


def sanitize_name(name: str) -> str:
    """A framework name as a Relax variable name: ``fc1.weight`` -> ``fc1_weight``, ``0`` -> ``_0``."""
    name = re.sub(r"\W", "_", name)
    return name if name and not name[0].isdigit() else "_" + name


def as_dim(value: Any) -> int | tir.PrimExpr:
    """A dimension as an int where it is a known number, else the PrimExpr."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    known = arith.as_const_int(value)
    return value if known is None else known


def dim_product(dims: Sequence[Any]) -> int | tir.PrimExpr:
    """The product of dimensions, static or symbolic (PrimExprs have no ``*``, hence arith.prod)."""
    if all(isinstance(d, (int, np.integer)) for d in dims):
        return int(np.prod(dims, dtype=np.int64))
    return as_dim(arith.prod(dims))


def static_shape(sinfo: StructInfo) -> tuple[int | tir.PrimExpr, ...]:
    """The dimensions of a tensor's struct info, as ints where they are known."""
    if sinfo.shape is None:
        raise FrontendError(f"a tensor of unknown shape ({sinfo}) cannot be imported")
    return tuple(as_dim(d) for d in sinfo.shape)


class GraphEmitter:
    """Builds one Relax function from a framework graph, binding every op to ``lv``, ``lv1``...

    Declare the inputs and weights first, then ``begin()``, emit ops, and ``finish(outputs)``.
    Weights become function parameters after the inputs (``R.func_attr({"num_input": n})``, their
    arrays in the ``params`` attribute for :func:`detach_params`) or, with ``keep_params=False``,
    constants inlined where they are used.
    """

    def __init__(self, keep_params: bool, func_name: str = "main") -> None:
        self.keep_params = keep_params
        self.func_name = func_name
        self.bb = BlockBuilder()
        self._inputs: list[Var] = []
        self._weights: list[tuple[Var, Constant]] = []
        self._names = NameSupply()

    # ------------------------------------------------------------ declarations
    def _fresh(self, name: str) -> str:
        return self._names.fresh(sanitize_name(name))

    def add_input(self, name: str, shape: Shape, dtype: str) -> Var:
        """A model input, a parameter of the function in declaration order."""
        var = Var(self._fresh(name), TensorStructInfo(tuple(shape), dtype))
        self._inputs.append(var)
        return var

    def add_weight(self, name: str, array: np.ndarray) -> Expr:
        """A trained weight: a parameter after the inputs, or a constant."""
        array = np.require(array, requirements="C")  # (ascontiguousarray makes rank 0 rank 1)
        constant = const(array, from_numpy_dtype(array.dtype))
        if not self.keep_params:
            return constant
        var = Var(self._fresh(name), constant.struct_info)
        self._weights.append((var, constant))
        return var

    # ------------------------------------------------------------ the function
    def begin(self) -> None:
        """Open the function and its dataflow block."""
        params = self._inputs + [var for var, _ in self._weights]
        attrs: dict[str, Any] = {"num_input": len(self._inputs)}
        if self._weights:
            attrs[PARAMS_ATTR] = [constant for _, constant in self._weights]
        self._func_scope = self.bb.function(self.func_name, params, attrs=attrs)
        self._func_scope.__enter__()
        self._dataflow = self.bb.dataflow()
        self._dataflow.__enter__()

    def finish(self, outputs: Sequence[Expr], unwrap_unit_tuple: bool = True) -> IRModule:
        """Close the function returning ``outputs`` (a tuple, or the single output when unwrapped)."""
        if len(outputs) == 1 and unwrap_unit_tuple:
            result: Expr = outputs[0]
        else:
            result = Tuple(list(outputs))
        gv = self.bb.emit_output(result)
        self._dataflow.__exit__(None, None, None)
        self.bb.emit_func_output(gv)
        self._func_scope.__exit__(None, None, None)
        return self.bb.get()

    def emit(self, expr: Expr) -> Var:
        """Bind ``expr`` to the next ``lv`` variable."""
        return self.bb.emit(expr)

    # ------------------------------------------------------------ helpers
    @staticmethod
    def shape_of(x: Expr) -> tuple[int | tir.PrimExpr, ...]:
        """The static shape of a tensor expression (ints where known)."""
        return static_shape(x.struct_info)

    @staticmethod
    def dtype_of(x: Expr) -> str:
        """The element type of a tensor expression."""
        return x.struct_info.dtype

    def scalar(self, value: float | int, like: Expr) -> Constant:
        """A Python number as a rank-0 constant of ``like``'s dtype."""
        return const(value, self.dtype_of(like))

    # ------------------------------------------------------------ model-level ops
    def linear(self, x: Expr, weight: Expr, bias: Expr | None) -> Var:
        """``x @ weight.T + bias``: permute_dims, matmul, add (as TVM imports ``nn.Linear``)."""
        weight_t = self.emit(relax_op.permute_dims(weight, axes=None))
        out = self.emit(relax_op.matmul(x, weight_t, out_dtype=self.dtype_of(x)))
        return out if bias is None else self.emit(relax_op.add(out, bias))

    def add_channel_bias(self, x: Var, bias: Expr | None, rank: int) -> Var:
        """``x + bias`` broadcast over the channel axis 1 of an N-C-spatial tensor."""
        if bias is None:
            return x
        channels = self.shape_of(bias)[0]
        bias = self.emit(relax_op.reshape(bias, (1, channels) + (1,) * (rank - 2)))
        return self.emit(relax_op.add(x, bias))

    def conv2d(self, x: Expr, weight: Expr, bias: Expr | None, strides: Sequence[int],
               padding: Sequence[int], dilation: Sequence[int], groups: int) -> Var:
        """NCHW convolution with an optional per-channel bias."""
        out = self.emit(relax_op.nn.conv2d(x, weight, strides=list(strides), padding=list(padding),
                                           dilation=list(dilation), groups=groups, data_layout="NCHW",
                                           kernel_layout="OIHW", out_dtype=self.dtype_of(x)))
        return self.add_channel_bias(out, bias, 4)

    def batch_norm(self, x: Expr, gamma: Expr, beta: Expr, mean: Expr,
                   var: Expr, epsilon: float, momentum: float = 0.1) -> Var:
        """Inference batch norm over axis 1 with the running statistics."""
        norm = self.emit(relax_op.nn.batch_norm(x, gamma, beta, mean, var, axis=1, epsilon=epsilon,
                                                center=True, scale=True, momentum=momentum, training=False))
        return self.emit(TupleGetItem(norm, 0))

    def layer_norm(self, x: Expr, gamma: Expr | None, beta: Expr | None, ndim: int,
                   epsilon: float) -> Var:
        """Layer norm over the last ``ndim`` axes; a missing scale or shift is ones or zeros."""
        norm_shape = self.shape_of(x)[-ndim:]
        dtype = self.dtype_of(x)
        if gamma is None:
            gamma = const(np.ones(norm_shape, dtype), dtype)
        if beta is None:
            beta = const(np.zeros(norm_shape, dtype), dtype)
        axes = list(range(-ndim, 0))
        return self.emit(relax_op.nn.layer_norm(x, gamma, beta, axes=axes, epsilon=epsilon))

    def pool2d(self, kind: str, x: Expr, kernel: Sequence[int], strides: Sequence[int],
               padding: Sequence[int], dilation: Sequence[int] = (1, 1), ceil_mode: bool = False,
               count_include_pad: bool = True) -> Var:
        """``max`` or ``avg`` NCHW pooling; ``padding`` is (top, left, bottom, right)."""
        attrs: dict[str, Any] = dict(pool_size=list(kernel), strides=list(strides), dilation=list(dilation),
                                     padding=list(padding), ceil_mode=ceil_mode, layout="NCHW")
        if kind == "max":
            return self.emit(relax_op.nn.max_pool2d(x, **attrs))
        return self.emit(relax_op.nn.avg_pool2d(x, count_include_pad=count_include_pad, **attrs))

    def adaptive_avg_pool2d(self, x: Expr, output_size: Sequence[int]) -> Var:
        """NCHW adaptive average pooling to ``output_size``."""
        return self.emit(relax_op.nn.adaptive_avg_pool2d(x, output_size=list(output_size), layout="NCHW"))

    def flatten(self, x: Expr, start: int, end: int = -1) -> Var:
        """Merge the axes ``start..end`` (inclusive, negative from the end) into one."""
        shape = self.shape_of(x)
        rank = len(shape)
        start, end = start % rank if rank else 0, end % rank if rank else 0
        if rank == 0 or start >= end:
            return self.emit(relax_op.reshape(x, shape if rank else (1,)))
        merged = dim_product(shape[start:end + 1])
        return self.emit(relax_op.reshape(x, tuple(shape[:start]) + (merged,) + tuple(shape[end + 1:])))

    def reshape(self, x: Expr, shape: Sequence[int | tir.PrimExpr]) -> Var:
        """Reshape, one dimension may be -1 (inferred from the others)."""
        return self.emit(relax_op.reshape(x, tuple(shape)))
