"""``tvmlite.frontend.nn``: write a model as PyTorch-like Python classes and export it to Relax,
as TVM's ``tvm.relax.frontend.nn`` does.

A :class:`Module` holds its parameters and submodules as attributes; ``export_tvm(spec)`` traces
the methods named in ``spec`` with symbolic inputs and returns ``(IRModule, params)``::

    class MLP(nn.Module):
        def __init__(self):
            self.fc1 = nn.Linear(784, 128)
            self.relu1 = nn.ReLU()
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            return self.fc2(self.relu1(self.fc1(x)))

    mod, params = MLP().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})

Each exported function takes the method's inputs, then every parameter (``fc1.weight`` becomes
the Relax parameter ``fc1_weight``), carries ``R.func_attr({"num_input": <inputs>})``, and binds
each op to a variable named after it (``permute_dims``, ``matmul``, ``add``, ``permute_dims1``...)
inside one dataflow block whose output is ``gv``. The functional ops are in ``nn.op``, the input
descriptions in ``nn.spec``."""
from __future__ import annotations

import inspect
import keyword
import sys
import threading
import types
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, Union

import numpy as np

from tvmlite.ir import IRModule, tir
from tvmlite.ir.block_builder import BlockBuilder
from tvmlite.ir.dtype import from_numpy_dtype, is_valid_dtype
from tvmlite.ir.op import OpError
from tvmlite.ir.op_api import TensorStructInfo, Tuple, Var, const
from tvmlite.ir.op_api import op as relax_op
from tvmlite.ir.relax import Expr

__all__ = ["Tensor", "Parameter", "Module", "ModuleList", "Sequential", "Linear", "ReLU", "GELU",
           "op", "spec"]

Dim = Union[int, str]  # a declared dimension: a size, or the name of a symbolic size


# ==================================================================== tracing state
@dataclass
class _Tracer:
    """One method being traced by ``export_tvm``: its builder, and where in the model we are."""

    bb: BlockBuilder
    title: str  # "RelaxModel.forward"
    module_names: dict[int, str]  # id(submodule) -> "fc1 (Linear)"
    scopes: list[str] = field(default_factory=list)

    def where(self) -> str:
        """The traced method and the submodule calls we are inside, for error messages."""
        return " > ".join([self.title, *self.scopes])


_STATE = threading.local()  # .tracers: the stack of _Tracer (export_tvm may run in several threads)


def _tracers() -> list[_Tracer]:
    """The stack of methods being traced in this thread."""
    if not hasattr(_STATE, "tracers"):
        _STATE.tracers = []
    return _STATE.tracers


def _current_tracer(what: str) -> _Tracer:
    """The innermost traced method; ops only make sense while ``export_tvm`` traces one."""
    stack = _tracers()
    if not stack:
        raise RuntimeError(f"nn.op.{what} builds IR, so it can only run while Module.export_tvm traces "
                           f"a method (call the model through export_tvm, not directly)")
    return stack[-1]


def _check_dims(shape: Any, what: str) -> tuple[Dim, ...]:
    """``shape`` as a tuple of sizes (ints >= 0) and symbolic names (identifiers)."""
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{what}: the shape must be a tuple or list of ints and names, got {shape!r}")
    for dim in shape:
        if isinstance(dim, bool) or not isinstance(dim, (int, str)):
            raise TypeError(f"{what}: dimension {dim!r} must be an int or the name of a symbolic size "
                            f"(a str such as \"n\")")
        if isinstance(dim, int) and dim < 0:
            raise ValueError(f"{what}: dimension {dim} is negative")
        if isinstance(dim, str) and (not dim.isidentifier() or keyword.iskeyword(dim)):
            raise ValueError(f"{what}: the symbolic dimension {dim!r} must be a Python identifier")
    return tuple(shape)


def _check_dtype(dtype: Any, what: str) -> str:
    """``dtype`` when it names a dtype (``"float32"``, ``"int8"``...)."""
    if not isinstance(dtype, str) or not is_valid_dtype(dtype):
        raise ValueError(f"{what}: {dtype!r} is not a dtype (expected e.g. \"float32\", \"float16\", \"int32\")")
    return dtype


def _sinfo(shape: Sequence[Dim], dtype: str, sym: dict[str, tir.Var]) -> TensorStructInfo:
    """The struct info of a declared tensor; names become int64 size variables, one per name
    within a function (so ``"n"`` in two inputs is the same ``n``)."""
    dims = [sym.setdefault(d, tir.Var(d, "int64")) if isinstance(d, str) else d for d in shape]
    return TensorStructInfo(dims, dtype)


def _relax_name(name: str) -> str:
    """The Relax parameter name of a parameter path: ``fc1.weight`` -> ``fc1_weight`` (a path that
    starts with a list index, ``0.weight``, gets a ``p_`` prefix so the text parses back)."""
    flat = name.replace(".", "_")
    return flat if flat.isidentifier() else f"p_{flat}"


# ==================================================================== tensors
class Tensor:
    """A value inside a traced method: a Relax expression with its shape and dtype. Arithmetic
    (``+ - * /``, unary ``-``) emits the matching ``nn.op`` call."""

    def __init__(self, expr: Expr | None) -> None:
        self._expr = expr

    def _value(self) -> Expr:
        """The Relax expression this tensor stands for."""
        if self._expr is None:
            raise RuntimeError(f"{self!r} has no value outside Module.export_tvm")
        return self._expr

    @property
    def shape(self) -> list[int | tir.PrimExpr]:
        """The dimensions: ints, or size variables (``n``) for symbolic ones."""
        sinfo = self._value().struct_info
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
            raise ValueError(f"the shape of {self._value()} is not known")
        return [d.value if isinstance(d, tir.IntImm) else d for d in sinfo.shape]

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def dtype(self) -> str:
        """The element type (``"float32"``...)."""
        sinfo = self._value().struct_info
        if not isinstance(sinfo, TensorStructInfo):
            raise ValueError(f"{self._value()} is not a tensor")
        return sinfo.dtype

    def __add__(self, other: Tensor | float) -> Tensor:
        return add(self, other)

    def __radd__(self, other: float) -> Tensor:
        return add(other, self)

    def __sub__(self, other: Tensor | float) -> Tensor:
        return subtract(self, other)

    def __rsub__(self, other: float) -> Tensor:
        return subtract(other, self)

    def __mul__(self, other: Tensor | float) -> Tensor:
        return multiply(self, other)

    def __rmul__(self, other: float) -> Tensor:
        return multiply(other, self)

    def __truediv__(self, other: Tensor | float) -> Tensor:
        return divide(self, other)

    def __rtruediv__(self, other: float) -> Tensor:
        return divide(other, self)

    def __neg__(self) -> Tensor:
        return _emit("negative", relax_op.negative, self)

    def __repr__(self) -> str:
        try:
            return f"Tensor({self.shape}, \"{self.dtype}\")"
        except (RuntimeError, ValueError):
            return "Tensor(<unknown>)"


class Parameter(Tensor):
    """A weight of a module: declared shape (ints, or names of symbolic sizes) and dtype, and
    optionally its data (a numpy array of exactly that shape and dtype)."""

    def __init__(self, shape: Sequence[Dim], dtype: str = "float32") -> None:
        super().__init__(None)  # a Relax variable only while export_tvm traces a method
        self._shape = _check_dims(shape, "nn.Parameter")
        self._dtype = _check_dtype(dtype, "nn.Parameter")
        self._data: np.ndarray | None = None

    @property
    def shape(self) -> list[Any]:
        """The declared dimensions (while tracing: as the function sees them)."""
        return super().shape if self._expr is not None else list(self._shape)

    @property
    def dtype(self) -> str:
        """The declared dtype."""
        return self._dtype

    @property
    def data(self) -> np.ndarray | None:
        """The parameter's values, or None when none were given."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        array = np.asarray(value)
        if from_numpy_dtype(array.dtype) != self._dtype:
            raise ValueError(f"parameter data has dtype {from_numpy_dtype(array.dtype)}, the parameter "
                             f"{self._dtype} (convert it with .astype(\"{self._dtype}\"))")
        fits = array.ndim == len(self._shape) and all(
            isinstance(d, str) or d == n for d, n in zip(self._shape, array.shape))
        if not fits:
            raise ValueError(f"parameter data has shape {tuple(array.shape)}, the parameter "
                             f"{tuple(self._shape)}")
        self._data = array

    def __repr__(self) -> str:
        return f"Parameter({list(self._shape)}, \"{self._dtype}\")"


# ==================================================================== the functional ops (nn.op)
def _operand(value: Any, like: Tensor, what: str) -> Any:
    """A binary op's operand: a Tensor, or a Python number as a constant of the other's dtype."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return const(value, like.dtype)
    raise TypeError(f"nn.op.{what}: expected a Tensor or a number, got {type(value).__name__}")


def _emit(name: str, build: Callable[..., Expr], *args: Any, **attrs: Any) -> Tensor:
    """Build an op call through the registry (struct info inferred) and bind it to a variable
    named ``name`` (``add``, then ``add1``...) in the traced function."""
    tracer = _current_tracer(name)
    values = [a._value() if isinstance(a, Tensor) else a for a in args]
    try:
        call = build(*values, **attrs)
    except OpError as err:  # say where in the model the bad call was made
        raise OpError(f"{err.message} (in {tracer.where()})", err.arg) from None
    return Tensor(tracer.bb.emit(call, name_hint=name))


def _binary(build: Callable[..., Expr], what: str, a: Any, b: Any, name: str) -> Tensor:
    """A broadcasting binary op; one side may be a Python number."""
    if isinstance(a, Tensor):
        return _emit(name, build, a, _operand(b, a, what))
    if isinstance(b, Tensor):
        return _emit(name, build, _operand(a, b, what), b)
    raise TypeError(f"nn.op.{what}: at least one operand must be a Tensor, got {type(a).__name__} "
                    f"and {type(b).__name__}")


def add(a: Tensor | float, b: Tensor | float, name: str = "add") -> Tensor:
    """``a + b`` (``R.add``)."""
    return _binary(relax_op.add, "add", a, b, name)


def subtract(a: Tensor | float, b: Tensor | float, name: str = "subtract") -> Tensor:
    """``a - b`` (``R.subtract``)."""
    return _binary(relax_op.subtract, "subtract", a, b, name)


def multiply(a: Tensor | float, b: Tensor | float, name: str = "mul") -> Tensor:
    """``a * b`` (``R.multiply``; bound as ``mul`` as TVM's frontend names it)."""
    return _binary(relax_op.multiply, "multiply", a, b, name)


def divide(a: Tensor | float, b: Tensor | float, name: str = "divide") -> Tensor:
    """``a / b`` (``R.divide``)."""
    return _binary(relax_op.divide, "divide", a, b, name)


def maximum(a: Tensor | float, b: Tensor | float, name: str = "maximum") -> Tensor:
    """Elementwise maximum (``R.maximum``)."""
    return _binary(relax_op.maximum, "maximum", a, b, name)


def minimum(a: Tensor | float, b: Tensor | float, name: str = "minimum") -> Tensor:
    """Elementwise minimum (``R.minimum``)."""
    return _binary(relax_op.minimum, "minimum", a, b, name)


def matmul(a: Tensor, b: Tensor, out_dtype: str | None = None, name: str = "matmul") -> Tensor:
    """Matrix product (``R.matmul``); ``out_dtype=None`` keeps the inputs' dtype (printed ``"void"``)."""
    return _emit(name, relax_op.matmul, a, b, out_dtype="void" if out_dtype is None else out_dtype)


def permute_dims(x: Tensor, axes: Sequence[int] | None = None, name: str = "permute_dims") -> Tensor:
    """Transpose (``R.permute_dims``); ``axes=None`` reverses the dimensions."""
    return _emit(name, relax_op.permute_dims, x, axes=None if axes is None else list(axes))


def reshape(x: Tensor, shape: Sequence[int | tir.PrimExpr], name: str = "reshape") -> Tensor:
    """``R.reshape`` (``-1`` infers one dimension)."""
    return _emit(name, relax_op.reshape, x, list(shape))


def astype(x: Tensor, dtype: str, name: str = "astype") -> Tensor:
    """Convert the elements to ``dtype`` (``R.astype``)."""
    return _emit(name, relax_op.astype, x, dtype=_check_dtype(dtype, "nn.op.astype"))


def relu(x: Tensor, name: str = "relu") -> Tensor:
    """``max(x, 0)`` (``R.nn.relu``)."""
    return _emit(name, relax_op.nn.relu, x)


def gelu(x: Tensor, approximate: str | None = None, name: str = "gelu") -> Tensor:
    """GELU (``R.nn.gelu``; ``approximate="tanh"`` gives ``R.nn.gelu_tanh``)."""
    if approximate not in (None, "none", "tanh"):
        raise ValueError(f"nn.op.gelu: approximate must be None or \"tanh\", got {approximate!r}")
    return _emit(name, relax_op.nn.gelu_tanh if approximate == "tanh" else relax_op.nn.gelu, x)


def silu(x: Tensor, name: str = "silu") -> Tensor:
    """``x * sigmoid(x)`` (``R.nn.silu``)."""
    return _emit(name, relax_op.nn.silu, x)


def softmax(x: Tensor, axis: int = -1, name: str = "softmax") -> Tensor:
    """Softmax along ``axis`` (``R.nn.softmax``)."""
    return _emit(name, relax_op.nn.softmax, x, axis=axis)


def sigmoid(x: Tensor, name: str = "sigmoid") -> Tensor:
    """``R.sigmoid``."""
    return _emit(name, relax_op.sigmoid, x)


def tanh(x: Tensor, name: str = "tanh") -> Tensor:
    """``R.tanh``."""
    return _emit(name, relax_op.tanh, x)


def exp(x: Tensor, name: str = "exp") -> Tensor:
    """``R.exp``."""
    return _emit(name, relax_op.exp, x)


def sqrt(x: Tensor, name: str = "sqrt") -> Tensor:
    """``R.sqrt``."""
    return _emit(name, relax_op.sqrt, x)


def square(x: Tensor, name: str = "square") -> Tensor:
    """``R.square``."""
    return _emit(name, relax_op.square, x)


def _namespace(name: str, doc: str, members: dict[str, Any]) -> types.ModuleType:
    """A submodule-like namespace (``nn.op``, ``nn.spec``), importable by its dotted name."""
    ns = types.ModuleType(f"{__name__}.{name}", doc)
    for key, value in members.items():
        setattr(ns, key, value)
    ns.__all__ = list(members)  # type: ignore[attr-defined]
    sys.modules.setdefault(ns.__name__, ns)
    return ns


op = _namespace("op", "Functional ops of the nn frontend: each emits one Relax op call.", {
    f.__name__: f for f in (add, subtract, multiply, divide, maximum, minimum, matmul, permute_dims,
                            reshape, astype, relu, gelu, silu, softmax, sigmoid, tanh, exp, sqrt, square)})


# ==================================================================== input specs (nn.spec)
class TensorSpec:
    """``nn.spec.Tensor(shape, dtype)``: a tensor input of an exported method; a str dimension
    (``("n", 784)``) is a symbolic size shared by every input of the function that names it."""

    def __init__(self, shape: Sequence[Dim], dtype: str) -> None:
        self.shape = _check_dims(shape, "nn.spec.Tensor")
        self.dtype = _check_dtype(dtype, "nn.spec.Tensor")

    def __repr__(self) -> str:
        return f"nn.spec.Tensor({self.shape!r}, \"{self.dtype}\")"


spec = _namespace("spec", "Descriptions of the inputs of exported methods.", {"Tensor": TensorSpec})


# ==================================================================== modules
class Module:
    """A model component. Parameters and submodules are whatever its attributes hold (in the
    order they were assigned); ``forward`` says what it computes, with ``nn.op`` calls."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        stack = _tracers()
        if not stack:
            return self.forward(*args, **kwargs)
        tracer = stack[-1]
        tracer.scopes.append(tracer.module_names.get(id(self), type(self).__name__))
        try:
            return self.forward(*args, **kwargs)
        finally:
            tracer.scopes.pop()

    def _named_children(self) -> Iterator[tuple[str, Any]]:
        """The attributes that may hold parameters or submodules, in assignment order."""
        yield from ((k, v) for k, v in vars(self).items() if not k.startswith("_"))

    def _walk(self, prefix: str, seen: set[int]) -> Iterator[tuple[str, Parameter | Module]]:
        """Every parameter and submodule below this one with its dotted path, each object once."""
        for key, value in self._named_children():
            if not isinstance(value, (Parameter, Module)) or id(value) in seen:
                continue
            seen.add(id(value))
            path = f"{prefix}{key}"
            yield path, value
            if isinstance(value, Module):
                yield from value._walk(f"{path}.", seen)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """``(path, parameter)`` pairs such as ``("fc1.weight", Parameter(...))``; a parameter shared
        by two attributes is listed once, under its first path."""
        start = f"{prefix}." if prefix else ""
        return ((path, p) for path, p in self._walk(start, set()) if isinstance(p, Parameter))

    def parameters(self) -> Iterator[Parameter]:
        """The parameters, in the order of ``named_parameters``."""
        return (p for _, p in self.named_parameters())

    def export_tvm(self, spec: dict[str, dict[str, TensorSpec]]) -> tuple[IRModule, list[tuple[str, Parameter]]]:
        """Trace each method named in ``spec`` (``{"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}``)
        into a Relax function of that name; returns the module and the ``(path, Parameter)`` list
        whose order is the order of the functions' trailing parameters."""
        cls = type(self).__name__
        if not isinstance(spec, dict) or not spec:
            raise TypeError(f"{cls}.export_tvm: spec must be a non-empty dict {{method name: {{argument: "
                            f"nn.spec.Tensor(...)}}}}, got {spec!r}")
        params = list(self.named_parameters())
        module_names = {id(m): f"{path} ({type(m).__name__})" for path, m in self._walk("", set())
                        if isinstance(m, Module)}
        mod = IRModule()
        for method_name, arg_specs in spec.items():
            method, args = self._method_inputs(method_name, arg_specs)
            mod = _trace(mod, f"{cls}.{method_name}", method_name, method, args, params, module_names)
        return mod, params

    def _method_inputs(self, method_name: Any,
                       arg_specs: Any) -> tuple[Callable[..., Any], list[tuple[str, TensorSpec]]]:
        """The bound method and its ``(argument, spec)`` list in signature order, checked against ``spec``."""
        cls = type(self).__name__
        method = getattr(self, method_name, None) if isinstance(method_name, str) else None
        if not inspect.ismethod(method):
            methods = sorted(n for n, _ in inspect.getmembers(type(self), inspect.isfunction)
                             if not n.startswith("_") and (n not in vars(Module) or n == "forward"))
            raise ValueError(f"{cls}.export_tvm: {cls} has no method {method_name!r} to export "
                             f"(its methods: {', '.join(methods)})")
        if getattr(method, "__func__", None) is Module.forward:
            raise NotImplementedError(f"{cls} does not define forward(), so it cannot be exported")
        if not isinstance(arg_specs, dict):
            raise TypeError(f"{cls}.export_tvm: the spec of {method_name!r} must be a dict {{argument: "
                            f"nn.spec.Tensor(...)}}, got {arg_specs!r}")
        args: list[tuple[str, TensorSpec]] = []
        signature = inspect.signature(method)
        for p in signature.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls}.{method_name} takes {'*' if p.kind is p.VAR_POSITIONAL else '**'}"
                                f"{p.name}: export_tvm needs every input as a named argument")
            if p.name not in arg_specs:
                if p.default is not p.empty:
                    continue  # the method's default is used
                raise ValueError(f"{cls}.export_tvm: the spec of {method_name!r} does not describe the "
                                 f"argument {p.name!r} (give it as {p.name!r}: nn.spec.Tensor(shape, dtype))")
            arg_spec = arg_specs[p.name]
            if not isinstance(arg_spec, TensorSpec):
                raise TypeError(f"{cls}.export_tvm: argument {p.name!r} of {method_name!r} must be described "
                                f"by nn.spec.Tensor(shape, dtype), got {arg_spec!r}")
            args.append((p.name, arg_spec))
        extra = [k for k in arg_specs if k not in signature.parameters]
        if extra:
            raise ValueError(f"{cls}.export_tvm: {method_name}() has no argument {extra[0]!r} "
                             f"(its arguments: {', '.join(signature.parameters) or 'none'})")
        return method, args


@contextmanager
def _bound(params: list[tuple[str, Parameter]], variables: list[Var]) -> Iterator[None]:
    """Parameters stand for the function's parameter variables while a method is traced."""
    for (_, p), var in zip(params, variables):
        p._expr = var
    try:
        yield
    finally:
        for _, p in params:
            p._expr = None


def _output(value: Any, title: str) -> Expr:
    """A traced method's result as a Relax expression (a Relax tuple for tuples and lists)."""
    if isinstance(value, Tensor):
        return value._value()
    if isinstance(value, (tuple, list)) and value:
        return Tuple([_output(v, title) for v in value])
    raise TypeError(f"{title} must return a Tensor or a tuple of Tensors, got {value!r}")


def _call(method: Callable[..., Any], values: list[tuple[str, Tensor]]) -> Any:
    """Call ``method`` with its inputs: positional-only ones by position, the rest by name (an
    argument left to its default may sit between them)."""
    params = inspect.signature(method).parameters
    positional = [v for name, v in values if params[name].kind is inspect.Parameter.POSITIONAL_ONLY]
    named = {name: v for name, v in values if params[name].kind is not inspect.Parameter.POSITIONAL_ONLY}
    return method(*positional, **named)


def _trace(mod: IRModule, title: str, name: str, method: Callable[..., Any],
           args: list[tuple[str, TensorSpec]], params: list[tuple[str, Parameter]],
           module_names: dict[int, str]) -> IRModule:
    """``mod`` with the Relax function ``name`` traced from ``method``."""
    bb = BlockBuilder(mod)  # a fresh builder per function: its names start at permute_dims again
    sym: dict[str, tir.Var] = {}
    inputs = [Var(arg, _sinfo(s.shape, s.dtype, sym)) for arg, s in args]
    weights = [Var(_relax_name(path), _sinfo(p._shape, p._dtype, sym)) for path, p in params]
    stack = _tracers()
    stack.append(_Tracer(bb, title, module_names))
    try:
        with _bound(params, weights):
            with bb.function(name, inputs + weights, attrs={"num_input": len(inputs)}):
                with bb.dataflow():
                    result = _call(method, [(arg, Tensor(v)) for (arg, _), v in zip(args, inputs)])
                    gv = bb.emit_output(_output(result, title))
                bb.emit_func_output(gv)
    finally:
        stack.pop()
    return bb.get()


class ModuleList(Module):
    """A list of submodules (paths ``name.0``, ``name.1``...); ``forward`` chains them."""

    def __init__(self, modules: Sequence[Module] = ()) -> None:
        self._modules: list[Module] = []
        for m in modules:
            self.append(m)

    def append(self, module: Module) -> None:
        """Add a submodule at the end."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__} holds nn.Module objects, got {type(module).__name__}")
        self._modules.append(module)

    def __getitem__(self, index: int) -> Module:
        return self._modules[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules)

    def _named_children(self) -> Iterator[tuple[str, Any]]:
        yield from ((str(i), m) for i, m in enumerate(self._modules))
        yield from super()._named_children()

    def forward(self, x: Any) -> Any:
        """Each submodule applied to the previous one's result."""
        for module in self._modules:
            x = module(x)
        return x


class Sequential(ModuleList):
    """``nn.Sequential(m1, m2, ...)``: the submodules applied one after the other."""

    def __init__(self, *modules: Module) -> None:
        super().__init__(modules)


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``, traced
    as TVM's frontend does: ``permute_dims``, ``matmul``, ``add``."""

    def __init__(self, in_features: Dim, out_features: Dim, bias: bool = True, dtype: str = "float32",
                 out_dtype: str | None = None) -> None:
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter((out_features, in_features), dtype)
        self.bias = Parameter((out_features,), dtype) if bias else None
        self.out_dtype = out_dtype

    def forward(self, x: Tensor) -> Tensor:
        """``matmul(x, permute_dims(weight)) + bias``."""
        w = permute_dims(self.weight)
        x = matmul(x, w, out_dtype=self.out_dtype)
        if self.bias is not None:
            x = x + self.bias
        return x


class ReLU(Module):
    """``nn.op.relu`` as a module."""

    def forward(self, x: Tensor) -> Tensor:
        """``relu(x)``."""
        return relu(x)


class GELU(Module):
    """``nn.op.gelu`` as a module."""

    def forward(self, x: Tensor) -> Tensor:
        """``gelu(x)``."""
        return gelu(x)
