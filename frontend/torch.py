"""``from_exported_program``: import a PyTorch model captured by ``torch.export`` into Relax.

    exported = torch.export.export(model.eval(), (torch.randn(1, 784),))
    mod = from_exported_program(exported, keep_params_as_input=True, unwrap_unit_return_tuple=True)
    mod, params = detach_params(mod)          # {"main": [weights in parameter order]}

The graph is read as exported (ATen ops such as ``aten.linear``); a program decomposed to core
ATen (``exported.run_decompositions()``: ``addmm``, ``convolution``,
``_native_batch_norm_legit_no_training``...) imports too. Each ATen op has one converter in
``_CONVERTERS``, keyed by its overload name (``"linear.default"``) as TVM's importer keys them;
``custom_convert_map`` adds or overrides entries. torch is imported only when a program is
imported (the ``[torch]`` extra)."""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from tvmlite.frontend.common import FrontendError, GraphEmitter, refuse_unsupported, require
from tvmlite.frontend.torch_ops import CONVERTERS as _FAMILY_CONVERTERS, reshape as _reshape_filled
from tvmlite.ir import IRModule, tir
from tvmlite.ir.op_api import PrimValue, Tuple, TupleGetItem, Var, const
from tvmlite.ir.op_api import op as relax_op
from tvmlite.ir.relax import Expr

__all__ = ["from_exported_program", "ExportedProgramImporter"]

Converter = Callable[["ExportedProgramImporter", Any], Any]


def from_exported_program(exported_program: Any, *, keep_params_as_input: bool = False,
                          unwrap_unit_return_tuple: bool = False,
                          custom_convert_map: dict[str, Converter] | None = None) -> IRModule:
    """The IRModule of a ``torch.export.ExportedProgram``: function ``main`` taking the user inputs,
    then (with ``keep_params_as_input``) the parameters and buffers; otherwise they are constants."""
    torch = require("torch", "torch", "tvmlite.frontend.from_exported_program")
    if not isinstance(exported_program, torch.export.ExportedProgram):
        raise TypeError(f"from_exported_program expects a torch.export.ExportedProgram (from "
                        f"torch.export.export(model, args)), got {type(exported_program).__name__}")
    importer = ExportedProgramImporter(torch, keep_params_as_input, custom_convert_map or {})
    return importer.run(exported_program, unwrap_unit_return_tuple)


class ExportedProgramImporter:
    """Walks one exported FX graph in order, emitting Relax for each node (``env`` maps the FX
    nodes to Relax expressions, or to Python / TIR values for shape arithmetic)."""

    def __init__(self, torch: Any, keep_params: bool, custom: dict[str, Converter]) -> None:
        self.torch = torch
        self.out = GraphEmitter(keep_params)
        self.converters = {**_CONVERTERS, **custom}
        self.env: dict[Any, Any] = {}
        self.symbols: dict[str, tir.Var] = {}

    # ---------------------------------------------------------------- driver
    def run(self, program: Any, unwrap_unit_tuple: bool) -> IRModule:
        """Translate the whole program."""
        graph = program.graph
        self._check_supported(graph)
        self._declare_inputs(program)
        self.out.begin()
        outputs: Sequence[Any] = ()
        for node in graph.nodes:
            if node.op == "call_function":
                self.env[node] = self._convert(node)
            elif node.op == "output":
                outputs = node.args[0] if isinstance(node.args[0], (tuple, list)) else (node.args[0],)
        results = [self.env[n] for n in outputs if n is not None]
        return self.out.finish(results, unwrap_unit_tuple)

    def _check_supported(self, graph: Any) -> None:
        """Refuse before emitting anything, naming every unsupported op at once."""
        missing: dict[str, list[str]] = {}
        for node in graph.nodes:
            if node.op == "call_function" and self._key(node) not in self.converters:
                missing.setdefault(self._key(node), []).append(node.name)
            elif node.op in ("call_module", "call_method", "get_attr"):
                missing.setdefault(f"{node.op} {node.target}", []).append(node.name)
        refuse_unsupported("from_exported_program", missing,
                           "tvmlite.frontend.torch.supported_ops(); custom_convert_map can add converters")

    @staticmethod
    def _key(node: Any) -> str:
        target = node.target
        if target is operator.getitem:
            return "getitem"
        return getattr(target, "__name__", str(target))

    def _declare_inputs(self, program: Any) -> None:
        """User inputs first (their placeholder names), then parameters and buffers."""
        kinds = self.torch.export.graph_signature.InputKind
        placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
        weights = []
        for spec in program.graph_signature.input_specs:
            node = placeholders[spec.arg.name]
            if spec.kind == kinds.USER_INPUT:
                value = node.meta.get("val")
                if not isinstance(value, self.torch.Tensor):
                    raise FrontendError(f"from_exported_program: input {spec.arg.name!r} is not a tensor "
                                        f"({type(value).__name__}); only tensor inputs are supported")
                shape = [self.dim(d) for d in value.shape]
                self.env[node] = self.out.add_input(spec.arg.name, shape, self.dtype(value.dtype))
            elif spec.kind in (kinds.PARAMETER, kinds.BUFFER, kinds.CONSTANT_TENSOR):
                tensor = (program.state_dict[spec.target] if spec.target in program.state_dict
                          else program.constants[spec.target])
                weights.append((node, spec, tensor.detach().cpu().numpy()))
            else:
                raise FrontendError(f"from_exported_program: input {spec.arg.name!r} of kind "
                                    f"{spec.kind.name} is not supported")
        for node, spec, array in weights:
            if spec.kind == kinds.CONSTANT_TENSOR:  # lifted literals stay literals
                self.env[node] = const(array, str(array.dtype))
            else:
                self.env[node] = self.out.add_weight(spec.arg.name, array)

    def _convert(self, node: Any) -> Any:
        try:
            return self.converters[self._key(node)](self, node)
        except FrontendError:
            raise
        except Exception as err:  # name the node: an ATen call the converter could not express
            raise FrontendError(f"from_exported_program: cannot convert node {node.name!r} "
                                f"({self._key(node)}): {err}") from err

    # ---------------------------------------------------------------- arguments
    def dtype(self, torch_dtype: Any) -> str:
        """``torch.float32`` -> ``"float32"``."""
        return str(torch_dtype).replace("torch.", "")

    def dim(self, size: Any) -> int | tir.PrimExpr:
        """A static size, or the TIR variable of a symbolic one (``s0`` -> ``T.int64`` var ``s0``)."""
        if isinstance(size, int):
            return size
        expr = size.node.expr
        if not expr.is_Symbol:
            raise FrontendError(f"from_exported_program: symbolic size {expr} is not a plain symbol")
        name = str(expr)
        return self.symbols.setdefault(name, tir.Var(name, "int64"))

    def value(self, arg: Any) -> Any:
        """An FX argument with nodes replaced by their Relax values (lists element by element)."""
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.value(a) for a in arg)
        if isinstance(arg, self.torch.SymInt):
            return self.dim(arg)
        if hasattr(arg, "op") and arg in self.env:
            return self.env[arg]
        return arg

    def arg(self, node: Any, index: int, name: str, default: Any = None) -> Any:
        """Argument ``index`` of ``node`` (or keyword ``name``), converted."""
        if index < len(node.args):
            return self.value(node.args[index])
        return self.value(node.kwargs.get(name, default))

    def operand(self, value: Any, like: Expr) -> Expr:
        """A binary operand: a Relax tensor, or a Python number as a constant of ``like``'s dtype."""
        if isinstance(value, Expr):
            return value
        return self.out.scalar(value, like)


# ==================================================================== converters
_CONVERTERS: dict[str, Converter] = dict(_FAMILY_CONVERTERS)  # indexing, creation, logic, attention


def _register(*names: str) -> Callable[[Converter], Converter]:
    """Register a converter under ATen overload names."""

    def wrap(fn: Converter) -> Converter:
        for name in names:
            _CONVERTERS[name] = fn
        return fn

    return wrap


def supported_ops() -> list[str]:
    """The ATen overload names ``from_exported_program`` converts."""
    return sorted(_CONVERTERS)


def _unary(build: Callable[[Expr], Expr]) -> Converter:
    return lambda imp, node: imp.out.emit(build(imp.arg(node, 0, "input")))


for _names, _build in [
    (("relu.default", "relu_.default"), relax_op.nn.relu),
    (("silu.default", "silu_.default"), relax_op.nn.silu),
    (("sigmoid.default",), relax_op.sigmoid),
    (("tanh.default",), relax_op.tanh),
    (("exp.default",), relax_op.exp),
    (("log.default",), relax_op.log),
    (("sqrt.default",), relax_op.sqrt),
    (("rsqrt.default",), relax_op.rsqrt),
    (("abs.default",), relax_op.abs),
    (("neg.default",), relax_op.negative),
    (("erf.default",), relax_op.erf),
    (("sin.default",), relax_op.sin),
    (("cos.default",), relax_op.cos),
    (("floor.default",), relax_op.floor),
    (("ceil.default",), relax_op.ceil),
    (("round.default",), relax_op.round),
    (("square.default",), relax_op.square),
]:
    _register(*_names)(_unary(_build))


@_register("dropout.default", "alias.default", "detach.default", "clone.default", "contiguous.default",
           "lift_fresh_copy.default", "_assert_tensor_metadata.default", "detach_.default")
def _identity(imp: ExportedProgramImporter, node: Any) -> Any:
    # dropout is the identity in an exported eval-mode model; the rest only copy or check
    return imp.arg(node, 0, "input")


@_register("gelu.default")
def _gelu(imp: ExportedProgramImporter, node: Any) -> Var:
    approximate = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
    build = relax_op.nn.gelu_tanh if approximate == "tanh" else relax_op.nn.gelu
    return imp.out.emit(build(imp.arg(node, 0, "input")))


@_register("leaky_relu.default")
def _leaky_relu(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.nn.leakyrelu(imp.arg(node, 0, "input"),
                                              alpha=imp.arg(node, 1, "negative_slope", 0.01)))


def _clip(imp: ExportedProgramImporter, x: Expr, low: float | None, high: float | None) -> Var:
    low = -np.inf if low is None else low
    high = np.inf if high is None else high
    return imp.out.emit(relax_op.clip(x, PrimValue(float(low)), PrimValue(float(high))))


@_register("clamp.default", "hardtanh.default")
def _clamp(imp: ExportedProgramImporter, node: Any) -> Var:
    low_default, high_default = (-1.0, 1.0) if imp._key(node) == "hardtanh.default" else (None, None)
    return _clip(imp, imp.arg(node, 0, "input"), imp.arg(node, 1, "min", low_default),
                 imp.arg(node, 2, "max", high_default))


@_register("relu6.default")
def _relu6(imp: ExportedProgramImporter, node: Any) -> Var:
    return _clip(imp, imp.arg(node, 0, "input"), 0.0, 6.0)


def _binary(build: Callable[[Expr, Expr], Expr], scaled: bool = False) -> Converter:
    def convert(imp: ExportedProgramImporter, node: Any) -> Var:
        lhs, rhs = imp.arg(node, 0, "input"), imp.arg(node, 1, "other")
        alpha = imp.arg(node, 2, "alpha", 1) if scaled else 1
        if alpha != 1:  # add/sub(x, y, alpha=a) is x +- a*y
            rhs = imp.out.emit(relax_op.multiply(imp.operand(rhs, lhs), imp.out.scalar(alpha, lhs)))
        if not isinstance(lhs, Expr):
            lhs = imp.operand(lhs, rhs)
        lhs, rhs = _promote(imp, lhs, imp.operand(rhs, lhs))
        return imp.out.emit(build(lhs, rhs))

    return convert


for _names, _build, _scaled in [
    (("add.Tensor", "add.Scalar", "add_.Tensor"), relax_op.add, True),
    (("sub.Tensor", "sub.Scalar"), relax_op.subtract, True),
    (("mul.Tensor", "mul.Scalar", "mul_.Tensor"), relax_op.multiply, False),
    (("div.Tensor", "div.Scalar"), relax_op.divide, False),
    (("pow.Tensor_Scalar", "pow.Tensor_Tensor"), relax_op.power, False),
    (("maximum.default",), relax_op.maximum, False),
    (("minimum.default",), relax_op.minimum, False),
    (("eq.Tensor", "eq.Scalar"), relax_op.equal, False),
    (("ne.Tensor", "ne.Scalar"), relax_op.not_equal, False),
    (("lt.Tensor", "lt.Scalar"), relax_op.less, False),
    (("le.Tensor", "le.Scalar"), relax_op.less_equal, False),
    (("gt.Tensor", "gt.Scalar"), relax_op.greater, False),
    (("ge.Tensor", "ge.Scalar"), relax_op.greater_equal, False),
]:
    _register(*_names)(_binary(_build, _scaled))


def _promote(imp: ExportedProgramImporter, lhs: Expr, rhs: Expr) -> tuple[Expr, Expr]:
    """Two tensors of different dtypes cast to the one torch promotes them to (float32 + int64 is
    float32), as TVM's importer does; Relax's binary ops want equal dtypes."""
    a, b = imp.out.dtype_of(lhs), imp.out.dtype_of(rhs)
    if a == b:
        return lhs, rhs
    common = imp.dtype(imp.torch.promote_types(getattr(imp.torch, a), getattr(imp.torch, b)))
    cast = [x if imp.out.dtype_of(x) == common else imp.out.emit(relax_op.astype(x, dtype=common)) for x in (lhs, rhs)]
    return cast[0], cast[1]


@_register("rsub.Scalar", "rsub.Tensor")
def _rsub(imp: ExportedProgramImporter, node: Any) -> Var:
    x = imp.arg(node, 0, "input")
    return imp.out.emit(relax_op.subtract(imp.operand(imp.arg(node, 1, "other"), x), x))


@_register("div.Tensor_mode")
def _div_mode(imp: ExportedProgramImporter, node: Any) -> Var:
    lhs = imp.arg(node, 0, "input")
    rhs = imp.operand(imp.arg(node, 1, "other"), lhs)
    mode = node.kwargs.get("rounding_mode")
    if mode == "floor":
        return imp.out.emit(relax_op.floor_divide(lhs, rhs))
    quotient = imp.out.emit(relax_op.divide(lhs, rhs))
    return quotient if mode is None else imp.out.emit(relax_op.trunc(quotient))


# ---------------------------------------------------------------- linear algebra
@_register("linear.default")
def _linear(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.linear(imp.arg(node, 0, "input"), imp.arg(node, 1, "weight"), imp.arg(node, 2, "bias"))


@_register("matmul.default", "mm.default", "bmm.default")
def _matmul(imp: ExportedProgramImporter, node: Any) -> Var:
    a = imp.arg(node, 0, "input")
    return imp.out.emit(relax_op.matmul(a, imp.arg(node, 1, "other"), out_dtype=imp.out.dtype_of(a)))


@_register("addmm.default")
def _addmm(imp: ExportedProgramImporter, node: Any) -> Var:
    bias, a, b = imp.arg(node, 0, "input"), imp.arg(node, 1, "mat1"), imp.arg(node, 2, "mat2")
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    product = imp.out.emit(relax_op.matmul(a, b, out_dtype=imp.out.dtype_of(a)))
    if alpha != 1:
        product = imp.out.emit(relax_op.multiply(product, imp.out.scalar(alpha, product)))
    if beta == 0:
        return product
    if beta != 1:
        bias = imp.out.emit(relax_op.multiply(bias, imp.out.scalar(beta, bias)))
    return imp.out.emit(relax_op.add(bias, product))  # TVM's order: the bias first


# ---------------------------------------------------------------- convolution, normalisation
def _conv(imp: ExportedProgramImporter, node: Any, first_attr: int) -> Var:
    x, weight, bias = imp.arg(node, 0, "input"), imp.arg(node, 1, "weight"), imp.arg(node, 2, "bias")
    if len(imp.out.shape_of(x)) != 4:
        raise FrontendError(f"from_exported_program: only 2-D convolutions (NCHW) are supported; "
                            f"node {node.name!r} has an input of rank {len(imp.out.shape_of(x))}")
    stride = _pair(imp.arg(node, first_attr, "stride", 1))
    padding = imp.arg(node, first_attr + 1, "padding", 0)
    if isinstance(padding, str):
        raise FrontendError(f"from_exported_program: padding={padding!r} in {node.name!r} is not supported; "
                            f"give the padding as numbers")
    pad_h, pad_w = _pair(padding)
    dilation = _pair(imp.arg(node, first_attr + 2, "dilation", 1))
    return imp.out.conv2d(x, weight, bias, stride, (pad_h, pad_w, pad_h, pad_w), dilation,
                          groups=int(imp.arg(node, first_attr + 3, "groups", 1)))


@_register("conv2d.default")
def _conv2d(imp: ExportedProgramImporter, node: Any) -> Var:
    return _conv(imp, node, 3)


@_register("convolution.default")
def _convolution(imp: ExportedProgramImporter, node: Any) -> Var:
    # convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    if imp.arg(node, 6, "transposed", False):
        raise FrontendError(f"from_exported_program: transposed convolution ({node.name!r}) is not supported")
    x, weight, bias = imp.arg(node, 0, "input"), imp.arg(node, 1, "weight"), imp.arg(node, 2, "bias")
    pad_h, pad_w = _pair(imp.arg(node, 4, "padding"))
    return imp.out.conv2d(x, weight, bias, _pair(imp.arg(node, 3, "stride")), (pad_h, pad_w, pad_h, pad_w),
                          _pair(imp.arg(node, 5, "dilation")), int(imp.arg(node, 8, "groups")))


def _pair(value: Any) -> tuple[int, int]:
    if isinstance(value, (list, tuple)):
        return (int(value[0]), int(value[0])) if len(value) == 1 else (int(value[0]), int(value[1]))
    return int(value), int(value)


@_register("batch_norm.default")
def _batch_norm(imp: ExportedProgramImporter, node: Any) -> Var:
    # batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn)
    if imp.arg(node, 5, "training", False):
        raise FrontendError(f"from_exported_program: batch_norm {node.name!r} is in training mode; "
                            f"export the model after model.eval()")
    return _emit_batch_norm(imp, node, momentum=imp.arg(node, 6, "momentum", 0.1),
                            eps=imp.arg(node, 7, "eps", 1e-5))


@_register("_native_batch_norm_legit_no_training.default")
def _native_batch_norm(imp: ExportedProgramImporter, node: Any) -> Expr:
    # (input, weight, bias, running_mean, running_var, momentum, eps) -> (out, mean, invstd);
    # consumers only read item 0 of an inference batch norm
    out = _emit_batch_norm(imp, node, momentum=imp.arg(node, 5, "momentum", 0.1), eps=imp.arg(node, 6, "eps", 1e-5))
    return Tuple([out])


def _emit_batch_norm(imp: ExportedProgramImporter, node: Any, momentum: float, eps: float) -> Var:
    x = imp.arg(node, 0, "input")
    channels = imp.out.shape_of(x)[1]
    dtype = imp.out.dtype_of(x)
    gamma = imp.arg(node, 1, "weight")
    beta = imp.arg(node, 2, "bias")
    gamma = gamma if gamma is not None else const(np.ones(channels, dtype), dtype)
    beta = beta if beta is not None else const(np.zeros(channels, dtype), dtype)
    return imp.out.batch_norm(x, gamma, beta, imp.arg(node, 3, "running_mean"), imp.arg(node, 4, "running_var"),
                              epsilon=float(eps), momentum=float(momentum))


@_register("layer_norm.default")
def _layer_norm(imp: ExportedProgramImporter, node: Any) -> Var:
    # layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
    return imp.out.layer_norm(imp.arg(node, 0, "input"), imp.arg(node, 2, "weight"), imp.arg(node, 3, "bias"),
                              ndim=len(imp.arg(node, 1, "normalized_shape")),
                              epsilon=float(imp.arg(node, 4, "eps", 1e-5)))


@_register("native_layer_norm.default")
def _native_layer_norm(imp: ExportedProgramImporter, node: Any) -> Expr:
    # (input, normalized_shape, weight, bias, eps) -> (out, mean, rstd); only item 0 is supported
    return Tuple([_layer_norm(imp, node)])


@_register("softmax.int", "_softmax.default")
def _softmax(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.nn.softmax(imp.arg(node, 0, "input"), axis=int(imp.arg(node, 1, "dim", -1))))


@_register("log_softmax.int", "_log_softmax.default")
def _log_softmax(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.nn.log_softmax(imp.arg(node, 0, "input"), axis=int(imp.arg(node, 1, "dim", -1))))


# ---------------------------------------------------------------- pooling
def _pool_args(imp: ExportedProgramImporter, node: Any) -> tuple:
    kernel = _pair(imp.arg(node, 1, "kernel_size"))
    stride = imp.arg(node, 2, "stride", None)
    stride = kernel if not stride else _pair(stride)
    pad_h, pad_w = _pair(imp.arg(node, 3, "padding", 0))
    return kernel, stride, (pad_h, pad_w, pad_h, pad_w)


@_register("max_pool2d.default", "max_pool2d_with_indices.default")
def _max_pool2d(imp: ExportedProgramImporter, node: Any) -> Expr:
    # max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)
    kernel, stride, padding = _pool_args(imp, node)
    out = imp.out.pool2d("max", imp.arg(node, 0, "input"), kernel, stride, padding,
                         dilation=_pair(imp.arg(node, 4, "dilation", 1)),
                         ceil_mode=bool(imp.arg(node, 5, "ceil_mode", False)))
    # the _with_indices form is a tuple whose indices the importer does not produce
    return Tuple([out]) if imp._key(node) == "max_pool2d_with_indices.default" else out


@_register("avg_pool2d.default")
def _avg_pool2d(imp: ExportedProgramImporter, node: Any) -> Var:
    # avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    if imp.arg(node, 6, "divisor_override", None) is not None:
        raise FrontendError(f"from_exported_program: avg_pool2d divisor_override ({node.name!r}) is not supported")
    kernel, stride, padding = _pool_args(imp, node)
    return imp.out.pool2d("avg", imp.arg(node, 0, "input"), kernel, stride, padding,
                          ceil_mode=bool(imp.arg(node, 4, "ceil_mode", False)),
                          count_include_pad=bool(imp.arg(node, 5, "count_include_pad", True)))


@_register("adaptive_avg_pool2d.default", "_adaptive_avg_pool2d.default")
def _adaptive_avg_pool2d(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.adaptive_avg_pool2d(imp.arg(node, 0, "input"), _pair(imp.arg(node, 1, "output_size")))


# ---------------------------------------------------------------- reductions
def _reduce(build: Callable[..., Expr]) -> Converter:
    def convert(imp: ExportedProgramImporter, node: Any) -> Var:
        dims = imp.arg(node, 1, "dim", None)
        axis = None if dims is None else ([dims] if isinstance(dims, int) else list(dims))
        axis = axis or None  # an empty dim list reduces every axis
        return imp.out.emit(build(imp.arg(node, 0, "input"), axis=axis,
                                  keepdims=bool(imp.arg(node, 2, "keepdim", False))))

    return convert


_register("mean.dim", "mean.default")(_reduce(relax_op.mean))
_register("sum.dim_IntList", "sum.default")(_reduce(relax_op.sum))
_register("amax.default")(_reduce(relax_op.max))
_register("amin.default")(_reduce(relax_op.min))


# ---------------------------------------------------------------- shapes and layout
@_register("view.default", "reshape.default", "_unsafe_view.default")
def _reshape(imp: ExportedProgramImporter, node: Any) -> Expr:
    x, shape = imp.arg(node, 0, "input"), list(imp.arg(node, 1, "shape"))
    if list(imp.out.shape_of(x)) == shape:  # the views decompositions add around expand and bmm
        return x
    return _reshape_filled(imp, x, shape)


@_register("flatten.using_ints")
def _flatten(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.flatten(imp.arg(node, 0, "input"), int(imp.arg(node, 1, "start_dim", 0)),
                           int(imp.arg(node, 2, "end_dim", -1)))


@_register("permute.default")
def _permute(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.permute_dims(imp.arg(node, 0, "input"), axes=list(imp.arg(node, 1, "dims"))))


@_register("transpose.int")
def _transpose(imp: ExportedProgramImporter, node: Any) -> Var:
    x = imp.arg(node, 0, "input")
    axes = list(range(len(imp.out.shape_of(x))))
    a, b = imp.arg(node, 1, "dim0") % len(axes), imp.arg(node, 2, "dim1") % len(axes)
    axes[a], axes[b] = axes[b], axes[a]
    return imp.out.emit(relax_op.permute_dims(x, axes=axes))


@_register("t.default", "numpy_T.default")
def _t(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.permute_dims(imp.arg(node, 0, "input"), axes=None))


@_register("unsqueeze.default")
def _unsqueeze(imp: ExportedProgramImporter, node: Any) -> Var:
    x = imp.arg(node, 0, "input")
    return imp.out.emit(relax_op.expand_dims(x, axis=[int(imp.arg(node, 1, "dim"))]))  # negative as given, as TVM


@_register("squeeze.dim", "squeeze.dims", "squeeze.default")
def _squeeze(imp: ExportedProgramImporter, node: Any) -> Var:
    dims = imp.arg(node, 1, "dim", None)
    axis = None if dims is None else ([dims] if isinstance(dims, int) else list(dims))
    return imp.out.emit(relax_op.squeeze(imp.arg(node, 0, "input"), axis=axis))


@_register("cat.default", "concat.default")
def _cat(imp: ExportedProgramImporter, node: Any) -> Var:
    return imp.out.emit(relax_op.concat(Tuple(list(imp.arg(node, 0, "tensors"))),
                                        axis=int(imp.arg(node, 1, "dim", 0))))


@_register("_to_copy.default", "to.dtype")
def _to_dtype(imp: ExportedProgramImporter, node: Any) -> Expr:
    x = imp.arg(node, 0, "input")
    dtype = node.kwargs.get("dtype", node.args[1] if imp._key(node) == "to.dtype" else None)
    if dtype is None or imp.dtype(dtype) == imp.out.dtype_of(x):
        return x
    return imp.out.emit(relax_op.astype(x, dtype=imp.dtype(dtype)))


@_register("getitem")
def _getitem(imp: ExportedProgramImporter, node: Any) -> Expr:
    value, index = imp.arg(node, 0, "input"), node.args[1]
    if isinstance(value, Tuple):  # the ops that return only their first output (batch norm...)
        if index >= len(value.fields):
            raise FrontendError(f"from_exported_program: node {node.name!r} reads output {index} of "
                                f"{node.args[0].name!r}, which the importer does not produce (only output 0)")
        return value.fields[index]
    return imp.out.emit(TupleGetItem(value, index))


@_register("sym_size.int")
def _sym_size(imp: ExportedProgramImporter, node: Any) -> int | tir.PrimExpr:
    return imp.out.shape_of(imp.arg(node, 0, "input"))[imp.arg(node, 1, "dim")]
