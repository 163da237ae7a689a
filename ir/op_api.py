"""Building Relax IR from Python: one constructor per registered op (``op.add(x, y)``,
``op.nn.relu(x)``, ``op.matmul(x, w, out_dtype="float32")``), derived from the op registry,
the call_tir / packed-call builders, and the expression and struct-info constructors of
TVM's Python API (``Var("x", sinfo)``, ``const(np_array)``, ``Call``, ``Function``...).

The constructors accept Python values where TVM does (lists, ints, floats, numpy arrays) and
fill struct info. Each constructor class builds the IR node class of the same name and
``isinstance(x, Call)`` checks that node class, so one name serves both uses."""
from __future__ import annotations

import inspect
import sys
import types
from typing import Any, Callable, Sequence

import numpy as np

from . import relax as rx
from . import tir
from .arith import to_dims
from .dtype import from_numpy_dtype, to_numpy_dtype
from .module import GlobalVar
from .node import Map, Span
from .op import REQUIRED, InputForm, OpDef, call_ret_sinfo, get_op_def, list_ops, make_call, normalize_attrs
from .struct_info import function_ret, infer_leaf_sinfo, sinfo_of, unify_sinfo

__all__ = [
    "op", "const", "Var", "DataflowVar", "Tuple", "TupleGetItem", "ShapeExpr", "PrimValue",
    "ExternFunc", "Call", "SeqExpr", "If", "Function", "BindingBlock", "DataflowBlock",
    "TensorStructInfo", "ShapeStructInfo", "PrimStructInfo", "TupleStructInfo", "FuncStructInfo",
    "to_expr",
]


# ==================================================================== Python values -> IR
def to_expr(value: Any, shape_like: bool = False) -> Any:
    """A Python value as a Relax expression: numbers become ``R.prim_value``, strings ``R.str``,
    numpy arrays constants, lists tuples (or shapes when ``shape_like``)."""
    if isinstance(value, (rx.Expr, GlobalVar)):
        return value
    if isinstance(value, bool):
        return PrimValue(tir.IntImm("bool", int(value)))
    if isinstance(value, (int, float, tir.PrimExpr)):
        return PrimValue(value)
    if isinstance(value, str):
        return rx.StringImm(value, struct_info=rx.ObjectStructInfo())
    if isinstance(value, (np.ndarray, np.generic)):
        return const(value)
    if isinstance(value, (list, tuple)):
        if shape_like and all(isinstance(v, (int, tir.PrimExpr)) and not isinstance(v, bool) for v in value):
            return ShapeExpr(value)
        return Tuple(value)
    raise TypeError(f"expected a Relax expression, got {type(value).__name__} {value!r}")


def _attr_value(value: Any) -> Any:
    """A Python value as an op attribute (lists become tuples, literals their Python value)."""
    if isinstance(value, (list, tuple)):
        return tuple(_attr_value(v) for v in value)
    if isinstance(value, dict):
        return Map((k, _attr_value(v)) for k, v in value.items())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (rx.StringImm, rx.DataTypeImm)):
        return value.value
    if isinstance(value, rx.PrimValue) and isinstance(value.value, (tir.IntImm, tir.FloatImm)):
        return value.value.value
    return value


def _out_sinfo(out_sinfo: rx.StructInfo | Sequence[rx.StructInfo]) -> rx.StructInfo:
    """``out_sinfo=``: one struct info, or a list of them (a tuple result unless it has one)."""
    if isinstance(out_sinfo, (list, tuple)):
        return out_sinfo[0] if len(out_sinfo) == 1 else rx.TupleStructInfo(tuple(out_sinfo))
    return out_sinfo


def _args_tuple(args: Any) -> rx.Expr:
    """The argument tuple of the call_tir family (a single tensor is wrapped)."""
    if isinstance(args, (list, tuple)):
        return Tuple(args)
    if isinstance(sinfo_of(args), rx.TupleStructInfo):
        return args
    return Tuple((args,))


def _callee(func: str | rx.Expr) -> rx.Expr:
    """A packed-function callee: a symbol name becomes an ExternFunc."""
    return ExternFunc(func) if isinstance(func, str) else func


# ==================================================================== op constructors
def _attr_order(opdef: OpDef) -> tuple[str, ...]:
    """The attributes in positional order: the script's order when it fixes one (quantize takes
    axis before out_dtype, which it prints first), else the declared order."""
    names = tuple(f.name for f in opdef.attrs)
    listed = tuple(a for a in opdef.script_order if a in names)
    return listed + tuple(a for a in names if a not in listed)


def _signature(opdef: OpDef) -> inspect.Signature:
    """The Python signature of an op's constructor: inputs, then attributes with defaults."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = []
    for i, name in enumerate(opdef.inputs):
        if opdef.variadic and i == len(opdef.inputs) - 1:
            params.append(inspect.Parameter(name, inspect.Parameter.VAR_POSITIONAL))
            kind = inspect.Parameter.KEYWORD_ONLY
        else:
            optional = i >= len(opdef.inputs) - opdef.num_optional
            default = None if optional else inspect.Parameter.empty
            params.append(inspect.Parameter(name, kind, default=default))
    fields = {f.name: f for f in opdef.attrs}
    for f in (fields[a] for a in _attr_order(opdef)):
        default = inspect.Parameter.empty if f.default is REQUIRED else f.default
        if default is inspect.Parameter.empty and any(p.default is not p.empty for p in params):
            kind = inspect.Parameter.KEYWORD_ONLY  # a required attribute after optional inputs
        params.append(inspect.Parameter(f.name, kind, default=default))
    return inspect.Signature(params)


def _op_constructor(opdef: OpDef) -> Callable[..., rx.Call]:
    """The Python constructor of one registered op: positional values fill the inputs, then the
    attributes in declared order; keywords name either."""
    inputs = opdef.inputs
    attr_names = _attr_order(opdef)
    fixed = len(inputs) - 1 if opdef.variadic else len(inputs)

    def construct(*args: Any, sinfo_args: Sequence[rx.StructInfo] = (), span: Span | None = None,
                  **kwargs: Any) -> rx.Call:
        given: dict[int, Any] = {}
        attrs: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in inputs:
                given[inputs.index(key)] = value
            elif key in attr_names:
                attrs[key] = _attr_value(value)
            else:
                raise TypeError(f"{name}() got an unexpected keyword argument {key!r} "
                                f"(it takes: {', '.join(inputs + attr_names)})")
        positional = list(args)
        for i in range(fixed):
            if i not in given and positional:
                given[i] = positional.pop(0)
        tail = positional if opdef.variadic else []
        if not opdef.variadic:
            free = [a for a in attr_names if a not in attrs]
            if len(positional) > len(free):
                raise TypeError(f"{name}() takes at most {len(inputs) + len(attr_names)} positional "
                                f"arguments ({', '.join(inputs + attr_names)}), got {len(args)}")
            attrs.update((a, _attr_value(v)) for a, v in zip(free, positional))
        # Inputs left out take their script defaults (view's dtype; unique's flags before a given axis).
        for i in range(fixed):
            if i not in given and inputs[i] in opdef.input_defaults:
                given[i] = opdef.input_defaults[inputs[i]]
        count = max(given) + 1 if given else 0
        missing = [inputs[i] for i in range(count) if i not in given]
        if missing:
            raise TypeError(f"{name}() is missing the argument {missing[0]!r}")
        values = [given[i] for i in range(count)] + tail
        # A Python list is a ShapeExpr where the op declares a shape input, elsewhere a Tuple.
        forms = [opdef.input_form(inputs[min(i, len(inputs) - 1)]) for i in range(len(values))]
        exprs = [rx.DataTypeImm(v, struct_info=rx.ObjectStructInfo()) if f == InputForm.DTYPE and isinstance(v, str)
                 else to_expr(v, f == InputForm.SHAPE) for v, f in zip(values, forms)]
        return make_call(opdef.op, exprs, attrs, tuple(sinfo_args), span=span)

    name = opdef.script_name.rsplit(".", 1)[-1]
    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = f"A call of ``{opdef.name}`` (``R.{opdef.script_name}``), struct info inferred."
    construct.__signature__ = _signature(opdef)  # type: ignore[attr-defined]
    return construct


def call_tir(gvar: GlobalVar, args: Any, out_sinfo: rx.StructInfo | Sequence[rx.StructInfo],
             tir_vars: rx.Expr | Sequence[Any] | None = None) -> rx.Call:
    """``R.call_tir(gvar, args, out_sinfo, tir_vars)``: call a TIR function of the module."""
    extra = [] if tir_vars is None else [to_expr(tir_vars, shape_like=True)]
    return make_call("relax.call_tir", [gvar, _args_tuple(args), *extra], {}, (_out_sinfo(out_sinfo),))


def call_tir_inplace(gvar: GlobalVar, args: Any, inplace_indices: int | Sequence[int],
                     out_sinfo: rx.StructInfo | Sequence[rx.StructInfo],
                     tir_vars: rx.Expr | Sequence[Any] | None = None) -> rx.Call:
    """``R.call_tir_inplace``: a call_tir whose outputs overwrite the inputs ``inplace_indices``."""
    indices = tuple(inplace_indices) if isinstance(inplace_indices, (list, tuple)) else (inplace_indices,)
    extra = [] if tir_vars is None else [to_expr(tir_vars, shape_like=True)]
    return make_call("relax.call_tir_inplace", [gvar, _args_tuple(args), *extra],
                     {"inplace_indices": indices}, (_out_sinfo(out_sinfo),))


def call_dps_packed(func: str | rx.Expr, args: Any,
                    out_sinfo: rx.StructInfo | Sequence[rx.StructInfo]) -> rx.Call:
    """``R.call_dps_packed("f", args, out_sinfo)``: a destination-passing packed function."""
    return make_call("relax.call_dps_packed", [_callee(func), _args_tuple(args)], {},
                     (_out_sinfo(out_sinfo),))


def call_pure_packed(func: str | rx.Expr, *args: Any,
                     sinfo_args: rx.StructInfo | Sequence[rx.StructInfo] = ()) -> rx.Call:
    """``R.call_pure_packed("f", *args, sinfo_args=...)``: a packed function declared pure."""
    sinfo = (sinfo_args,) if isinstance(sinfo_args, rx.StructInfo) else tuple(sinfo_args)
    return make_call("relax.call_pure_packed", [_callee(func), *(to_expr(a) for a in args)], {}, sinfo)


def call_builtin_with_ctx(func: str | rx.Expr, args: Any,
                          sinfo_args: rx.StructInfo | Sequence[rx.StructInfo] = ()) -> rx.Call:
    """``R.call_builtin_with_ctx("f", (args,), sinfo_args=...)``: a VM builtin given the VM context."""
    sinfo = (sinfo_args,) if isinstance(sinfo_args, rx.StructInfo) else tuple(sinfo_args)
    return make_call("relax.call_builtin_with_ctx", [_callee(func), _args_tuple(args)], {}, sinfo)


def call_packed(func: str | rx.Expr, *args: Any,
                sinfo_args: rx.StructInfo | Sequence[rx.StructInfo] | None = None, **kwargs: Any) -> rx.Call:
    """``R.call_packed("f", *args, sinfo_args=...)``: a call of a packed function (impure)."""
    sinfo = () if sinfo_args is None else (
        (sinfo_args,) if isinstance(sinfo_args, rx.StructInfo) else tuple(sinfo_args))
    attrs = Map((k, _attr_value(v)) for k, v in kwargs.items())
    return Call(_callee(func), [to_expr(a) for a in args], attrs, sinfo)


# The call family takes struct infos and callees rather than plain inputs.
_SPECIAL = {f.__name__: f for f in (call_tir, call_tir_inplace, call_dps_packed, call_pure_packed,
                                    call_builtin_with_ctx, call_packed)}


def _build_namespace() -> types.ModuleType:
    """``tvmlite.relax.op`` with a sub-namespace per dotted prefix (``op.nn``), from the registry."""
    root = types.ModuleType("tvmlite.relax.op", "Relax op constructors (``op.add``, ``op.nn.relu``...).")
    for opdef in list_ops():
        *path, leaf = opdef.script_name.split(".")
        ns = root
        for part in path:
            if not hasattr(ns, part):
                sub = types.ModuleType(f"{ns.__name__}.{part}", f"Relax ``{part}`` ops.")
                setattr(ns, part, sub)
                sys.modules.setdefault(sub.__name__, sub)
            ns = getattr(ns, part)
        setattr(ns, leaf, _SPECIAL.get(opdef.script_name) or _op_constructor(opdef))
    root.call_packed = call_packed  # type: ignore[attr-defined]  (a call of an ExternFunc, not an op)
    # Registered so that ``import tvmlite.relax.op`` and ``from tvmlite.relax.op import nn`` work.
    sys.modules.setdefault(root.__name__, root)
    return root


# ==================================================================== IR constructors
class _Constructor(type):
    """Metaclass of the constructors below: calling one builds its IR node class (``node``);
    ``isinstance``/``issubclass`` check against that node class. (Their ``__new__`` returns the
    node, not an instance of the constructor class.)"""

    node: type

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.node)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.node)


def _sinfo_shape(shape: Any) -> tuple[tir.PrimExpr, ...] | None:
    """Tensor dims from ints/PrimExprs, a ShapeExpr, or a shape-typed value (None: unknown)."""
    if shape is None:
        return None
    if isinstance(shape, rx.ShapeExpr):
        return tuple(shape.values)
    if isinstance(shape, rx.Expr):
        s = sinfo_of(shape)
        return tuple(s.values) if isinstance(s, rx.ShapeStructInfo) and s.values is not None else None
    return to_dims(shape)


class TensorStructInfo(metaclass=_Constructor):
    """``TensorStructInfo(shape, dtype="float32", vdevice=None, ndim=-1)`` (TVM's argument order)."""

    node = rx.TensorStructInfo

    def __new__(cls, shape: Any = None, dtype: str = "float32", vdevice: str | None = None,
                ndim: int = -1, span: Span | None = None) -> rx.TensorStructInfo:
        dims = _sinfo_shape(shape)
        if dims is None and shape is not None and isinstance(shape, rx.Expr):
            s = sinfo_of(shape)
            ndim = s.ndim if isinstance(s, rx.ShapeStructInfo) else ndim
        return rx.TensorStructInfo(dims, dtype, ndim, vdevice, span=span)


class ShapeStructInfo(metaclass=_Constructor):
    """``ShapeStructInfo(values=None, ndim=-1)``."""

    node = rx.ShapeStructInfo

    def __new__(cls, values: Sequence[Any] | None = None, ndim: int = -1,
                span: Span | None = None) -> rx.ShapeStructInfo:
        if values is None:
            return rx.ShapeStructInfo(None, ndim, span=span)
        dims = to_dims(values)
        return rx.ShapeStructInfo(dims, len(dims), span=span)


class PrimStructInfo(metaclass=_Constructor):
    """``PrimStructInfo(dtype=None, value=None)``: the dtype follows the value when only it is given."""

    node = rx.PrimStructInfo

    def __new__(cls, dtype: str | None = None, value: Any = None,
                span: Span | None = None) -> rx.PrimStructInfo:
        if value is not None and not isinstance(value, tir.PrimExpr):
            value = tir.const(value, dtype or ("int64" if isinstance(value, int) else None))
        if dtype is None:
            if value is None:
                raise TypeError("PrimStructInfo needs a dtype or a value")
            dtype = value.dtype
        return rx.PrimStructInfo(dtype, value, span=span)


class TupleStructInfo(metaclass=_Constructor):
    """``TupleStructInfo(fields)``."""

    node = rx.TupleStructInfo

    def __new__(cls, fields: Sequence[rx.StructInfo], span: Span | None = None) -> rx.TupleStructInfo:
        return rx.TupleStructInfo(tuple(fields), span=span)


class FuncStructInfo(metaclass=_Constructor):
    """``FuncStructInfo(params, ret, purity=True)``."""

    node = rx.FuncStructInfo

    def __new__(cls, params: Sequence[rx.StructInfo] | None, ret: rx.StructInfo, purity: bool = True,
                span: Span | None = None) -> rx.FuncStructInfo:
        return rx.FuncStructInfo(None if params is None else tuple(params), ret, purity, span=span)


class Var(metaclass=_Constructor):
    """``Var(name_hint, struct_info=None)``: a new variable."""

    node = rx.Var

    def __new__(cls, name_hint: str, struct_info: rx.StructInfo | None = None,
                span: Span | None = None) -> rx.Var:
        return rx.Var(name_hint, struct_info, span=span)


class DataflowVar(metaclass=_Constructor):
    """``DataflowVar(name_hint, struct_info=None)``: a variable local to a dataflow block."""

    node = rx.DataflowVar

    def __new__(cls, name_hint: str, struct_info: rx.StructInfo | None = None,
                span: Span | None = None) -> rx.DataflowVar:
        return rx.DataflowVar(name_hint, struct_info, span=span)


class Tuple(metaclass=_Constructor):
    """``Tuple(fields)``: Python values in ``fields`` are converted."""

    node = rx.Tuple

    def __new__(cls, fields: Sequence[Any], span: Span | None = None) -> rx.Tuple:
        exprs = tuple(to_expr(f) for f in fields)
        return rx.Tuple(exprs, struct_info=rx.TupleStructInfo(tuple(sinfo_of(f) for f in exprs)), span=span)


class TupleGetItem(metaclass=_Constructor):
    """``TupleGetItem(tuple_value, index)``."""

    node = rx.TupleGetItem

    def __new__(cls, tuple_value: rx.Expr, index: int, span: Span | None = None) -> rx.TupleGetItem:
        item = rx.TupleGetItem(tuple_value, int(index), span=span)
        return rx.TupleGetItem(tuple_value, int(index), struct_info=infer_leaf_sinfo(item), span=span)


class ShapeExpr(metaclass=_Constructor):
    """``ShapeExpr(values)``: ints become int64 dims."""

    node = rx.ShapeExpr

    def __new__(cls, values: Sequence[Any], span: Span | None = None) -> rx.ShapeExpr:
        dims = to_dims(values)
        return rx.ShapeExpr(dims, struct_info=rx.ShapeStructInfo(dims, len(dims)), span=span)


class PrimValue(metaclass=_Constructor):
    """``PrimValue(value)``: an int is int64, a float float32 (as in scripts)."""

    node = rx.PrimValue

    def __new__(cls, value: Any, span: Span | None = None) -> rx.PrimValue:
        if not isinstance(value, tir.PrimExpr):
            is_int = isinstance(value, int) and not isinstance(value, bool)
            value = tir.const(value, "int64" if is_int else None)
        return rx.PrimValue(value, struct_info=rx.PrimStructInfo(value.dtype, value), span=span)


class ExternFunc(metaclass=_Constructor):
    """``ExternFunc(global_symbol)``: a packed function of the runtime (opaque and impure)."""

    node = rx.ExternFunc

    def __new__(cls, global_symbol: str, struct_info: rx.StructInfo | None = None,
                span: Span | None = None) -> rx.ExternFunc:
        node = rx.ExternFunc(global_symbol, span=span)
        return rx.ExternFunc(global_symbol, struct_info or infer_leaf_sinfo(node), span=span)


class Call(metaclass=_Constructor):
    """``Call(op, args, attrs=None, sinfo_args=None)``: a call of an Op (attributes are filled with
    their defaults and the struct info inferred), a function or a packed function."""

    node = rx.Call

    def __new__(cls, op: Any, args: Sequence[Any], attrs: Any = None,
                sinfo_args: Sequence[rx.StructInfo] | None = None, span: Span | None = None) -> rx.Call:
        exprs = tuple(to_expr(a) for a in args)
        sinfo = tuple(sinfo_args or ())
        if isinstance(op, rx.Op):
            given = dict(attrs.items()) if attrs is not None else {}
            norm = normalize_attrs(get_op_def(op.name), {k: _attr_value(v) for k, v in given.items()})
        else:
            norm = attrs if isinstance(attrs, Map) else Map(attrs or {})
        call = rx.Call(op, exprs, norm, sinfo, span=span)
        if isinstance(op, GlobalVar):
            return call  # needs the module: the BlockBuilder infers it when emitting
        return rx.Call(op, exprs, norm, sinfo, struct_info=call_ret_sinfo(call), span=span)


def _as_seq(body: rx.Expr) -> rx.SeqExpr:
    """A function body or if/else branch as a SeqExpr."""
    if isinstance(body, rx.SeqExpr):
        return body
    return rx.SeqExpr((), body, struct_info=sinfo_of(body))


class SeqExpr(metaclass=_Constructor):
    """``SeqExpr(blocks, body)``."""

    node = rx.SeqExpr

    def __new__(cls, blocks: Sequence[rx.BindingBlock], body: rx.Expr, span: Span | None = None) -> rx.SeqExpr:
        return rx.SeqExpr(tuple(blocks), body, struct_info=sinfo_of(body), span=span)


class If(metaclass=_Constructor):
    """``If(cond, true_branch, false_branch)``."""

    node = rx.If

    def __new__(cls, cond: rx.Expr, true_branch: rx.Expr, false_branch: rx.Expr,
                span: Span | None = None) -> rx.If:
        then, other = _as_seq(true_branch), _as_seq(false_branch)
        return rx.If(cond, then, other, struct_info=unify_sinfo(sinfo_of(then), sinfo_of(other)), span=span)


class Function(metaclass=_Constructor):
    """``Function(params, body, ret_struct_info=None, is_pure=True, attrs=None)``; without
    ``ret_struct_info`` the result is the body's (dims the parameters do not define erased)."""

    node = rx.Function

    def __new__(cls, params: Sequence[rx.Var], body: rx.Expr, ret_struct_info: rx.StructInfo | None = None,
                is_pure: bool = True, attrs: Any = None, span: Span | None = None) -> rx.Function:
        seq = _as_seq(body)
        ret = function_ret(params, sinfo_of(seq), ret_struct_info)
        return rx.Function(tuple(params), seq, ret, is_pure, Map(attrs or {}), span=span)


class BindingBlock(metaclass=_Constructor):
    """``BindingBlock(bindings)``."""

    node = rx.BindingBlock

    def __new__(cls, bindings: Sequence[rx.Binding], span: Span | None = None) -> rx.BindingBlock:
        return rx.BindingBlock(tuple(bindings), span=span)


class DataflowBlock(metaclass=_Constructor):
    """``DataflowBlock(bindings)``."""

    node = rx.DataflowBlock

    def __new__(cls, bindings: Sequence[rx.Binding], span: Span | None = None) -> rx.DataflowBlock:
        return rx.DataflowBlock(tuple(bindings), span=span)


def const(value: Any, dtype: str | None = None) -> rx.Constant:
    """A tensor constant from a numpy array or a Python scalar/list; without ``dtype``, Python ints
    and int64 data become int32 and floats/float64 data float32 (as TVM's ``relax.const``)."""
    data = np.asarray(value)
    if dtype is None:
        dtype = {"int64": "int32", "float64": "float32"}.get(str(data.dtype), from_numpy_dtype(data.dtype))
    return rx.Constant(np.array(data, dtype=to_numpy_dtype(dtype)))


def __getattr__(name: str) -> Any:
    """``op``, built on first use: the ops register when ``tvmlite.ops`` is imported, which loads
    this module first (through ``te``), so the namespace cannot be read off the registry at import."""
    if name != "op":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    namespace = _build_namespace()
    globals()["op"] = namespace
    return namespace
