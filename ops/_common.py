"""Helpers shared by the op definitions: argument access, attribute converters, axis and
broadcast rules, and the registration helpers of the elementwise families."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Sequence

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import can_prove_equal, can_prove_not_equal, format_shape, is_const_int
from ..ir.dtype import is_valid_dtype, parse_dtype
from ..ir.global_info import Placement, PlacementSpec
from ..ir.op import AttrField, OpError, OpPattern, find_op_def, register_op
from ..ir.struct_info import sinfo_of
from ..ir.structural import structural_equal

__all__ = [
    "op_name", "arg", "arg_sinfo", "tensor_arg", "shape_arg", "describe", "tensor_like",
    "normalize_axis", "normalize_axes", "broadcast_shapes", "binary_dtype", "require_float",
    "require_integer", "unary_sinfo", "register_unary", "shape_values", "prim_int_values",
    "to_int", "to_bool", "to_float", "to_str", "to_dtype", "to_int_tuple",
    "to_opt_int_tuple", "to_opt_int", "to_n_tuple", "to_padding", "to_layout", "dtensor_elementwise",
]


# ---------------------------------------------------------------- arguments
def op_name(call: rx.Call) -> str:
    """``R.add``, ``R.nn.conv2d``: how error messages name the called op."""
    return f"R.{find_op_def(call.op).script_name}"


def _input_name(call: rx.Call, i: int) -> str:
    """The declared name of input ``i`` (the last one for variadic extras)."""
    inputs = find_op_def(call.op).inputs
    return inputs[min(i, len(inputs) - 1)] if inputs else f"#{i + 1}"


def arg(call: rx.Call, i: int) -> Any:
    """The ``i``-th argument; OpError when it is missing."""
    if i >= len(call.args):
        raise OpError(f"{op_name(call)}: missing argument {_input_name(call, i)}", i)
    return call.args[i]


def arg_sinfo(call: rx.Call, i: int) -> rx.StructInfo:
    """The struct info of the ``i``-th argument."""
    return sinfo_of(arg(call, i))


# Human names of struct-info kinds, for "expected ... got ..." messages.
_KIND = {
    "object_struct_info": "an object (R.Object)", "prim_struct_info": "a scalar (R.Prim)",
    "shape_struct_info": "a shape (R.Shape)", "tensor_struct_info": "a tensor",
    "tuple_struct_info": "a tuple (R.Tuple)", "func_struct_info": "a function (R.Callable)",
    "dtensor_struct_info": "a distributed tensor (R.DTensor)",
}


def describe(sinfo: rx.StructInfo) -> str:
    """A short description of a struct info (``a tensor of shape (n, 4) and dtype float32``)."""
    kind = _KIND.get(type(sinfo).visit_key, type(sinfo).__name__)
    if isinstance(sinfo, rx.TensorStructInfo):
        shape = format_shape(sinfo.shape) if sinfo.shape is not None else (
            f"{sinfo.ndim} dimensions" if sinfo.ndim >= 0 else "unknown shape")
        return f"a tensor of shape {shape} and dtype {sinfo.dtype}"
    if isinstance(sinfo, rx.PrimStructInfo):
        return f"a scalar (R.Prim) of dtype {sinfo.dtype}"
    return kind


def tensor_arg(call: rx.Call, i: int, allow_prim: bool = False) -> rx.TensorStructInfo:
    """The struct info of a tensor argument; a ``R.Prim`` counts as a 0-d tensor when allowed."""
    sinfo = arg_sinfo(call, i)
    if isinstance(sinfo, rx.TensorStructInfo):
        return sinfo
    if allow_prim and isinstance(sinfo, rx.PrimStructInfo):
        return rx.TensorStructInfo((), sinfo.dtype)
    raise OpError(f"{op_name(call)}: argument {_input_name(call, i)} must be a tensor, "
                  f"got {describe(sinfo)}", i)


def shape_arg(call: rx.Call, i: int) -> rx.ShapeStructInfo:
    """The struct info of a shape argument (``R.shape([...])`` or a shape-typed variable)."""
    sinfo = arg_sinfo(call, i)
    if not isinstance(sinfo, rx.ShapeStructInfo):
        raise OpError(f"{op_name(call)}: argument {_input_name(call, i)} must be a shape "
                      f"(R.shape([...])), got {describe(sinfo)}", i)
    return sinfo


def shape_values(sinfo: rx.ShapeStructInfo) -> tuple[tir.PrimExpr, ...] | None:
    """The dimensions of a shape struct info, or None when only its ndim is known."""
    return tuple(sinfo.values) if sinfo.values is not None else None


def prim_int_values(call: rx.Call, i: int) -> list[tir.PrimExpr] | None:
    """Integer values of a tuple of ``R.prim_value``s (or a shape) argument; None when unknown."""
    expr = arg(call, i)
    sinfo = sinfo_of(expr)
    if isinstance(sinfo, rx.ShapeStructInfo):
        return list(sinfo.values) if sinfo.values is not None else None
    if isinstance(sinfo, rx.TupleStructInfo):
        out = []
        for f in sinfo.fields:
            if not isinstance(f, rx.PrimStructInfo):
                raise OpError(f"{op_name(call)}: argument {_input_name(call, i)} must be a tuple of "
                              f"integers (R.prim_value), got {describe(f)} in it", i)
            if f.value is None:
                return None
            out.append(f.value)
        return out
    raise OpError(f"{op_name(call)}: argument {_input_name(call, i)} must be a tuple of integers, "
                  f"got {describe(sinfo)}", i)


def tensor_like(sinfo: rx.TensorStructInfo, shape: Sequence[tir.PrimExpr] | None = None,
                dtype: str | None = None, ndim: int | None = None) -> rx.TensorStructInfo:
    """A tensor struct info; without a shape it keeps ``ndim`` (or the source's)."""
    dtype = sinfo.dtype if dtype is None else dtype
    if shape is not None:
        return rx.TensorStructInfo(tuple(shape), dtype, vdevice=sinfo.vdevice)
    return rx.TensorStructInfo(None, dtype, sinfo.ndim if ndim is None else ndim, vdevice=sinfo.vdevice)


# ---------------------------------------------------------------- axes, dtypes, broadcasting
def normalize_axis(call: rx.Call, axis: int, ndim: int, attr: str | int = "axis") -> int:
    """``axis`` in ``[0, ndim)`` (negative counts from the end); OpError when out of range."""
    if not -ndim <= axis < ndim:
        raise OpError(f"{op_name(call)}: axis {axis} is out of range for a tensor of {ndim} "
                      f"dimension{'s' if ndim != 1 else ''} (expected {-ndim} to {ndim - 1})", attr)
    return axis % ndim


def normalize_axes(call: rx.Call, axes: Iterable[int], ndim: int, attr: str | int = "axis") -> list[int]:
    """Several axes normalised; OpError on a repeated axis."""
    out = [normalize_axis(call, a, ndim, attr) for a in axes]
    if len(set(out)) != len(out):
        raise OpError(f"{op_name(call)}: axes {list(axes)} repeat an axis", attr)
    return out


def broadcast_shapes(call: rx.Call, a: Sequence[tir.PrimExpr], b: Sequence[tir.PrimExpr],
                     arg_index: int = 1) -> tuple[tir.PrimExpr, ...] | None:
    """Numpy broadcasting of two shapes; None when symbolic dims leave the result unknown."""
    out: list[tir.PrimExpr] = []
    unknown = False
    for k in range(1, max(len(a), len(b)) + 1):
        da = a[-k] if k <= len(a) else None
        db = b[-k] if k <= len(b) else None
        if db is None:
            out.append(da)  # type: ignore[arg-type]
        elif da is None or is_const_int(da, 1):
            out.append(db)
        elif is_const_int(db, 1) or can_prove_equal(da, db):
            out.append(da)
        elif is_const_int(da) and is_const_int(db):
            raise OpError(f"{op_name(call)}: cannot broadcast shapes {format_shape(a)} and {format_shape(b)}",
                          arg_index)
        else:
            unknown = True  # e.g. n vs m: only known at run time
    return None if unknown else tuple(reversed(out))


def binary_dtype(call: rx.Call, a: str, b: str, arg_index: int = 1) -> str:
    """The common dtype of two operands ("void" when either is unknown); OpError when they differ."""
    if a == "void" or b == "void":
        return "void"
    if a != b:
        raise OpError(f"{op_name(call)}: dtypes differ: {a} vs {b}", arg_index)
    return a


def require_float(call: rx.Call, sinfo: rx.TensorStructInfo, i: int) -> None:
    """OpError unless the tensor's dtype is a float (or unknown)."""
    if sinfo.dtype != "void" and not parse_dtype(sinfo.dtype).is_float:
        raise OpError(f"{op_name(call)}: expected a float tensor, got dtype {sinfo.dtype}", i)


def require_integer(call: rx.Call, sinfo: rx.TensorStructInfo, i: int, allow_bool: bool = True) -> None:
    """OpError unless the tensor's dtype is an integer (or bool when allowed, or unknown)."""
    if sinfo.dtype == "void":
        return
    d = parse_dtype(sinfo.dtype)
    if not (d.is_integer or (allow_bool and d.is_bool)):
        raise OpError(f"{op_name(call)}: expected an integer tensor, got dtype {sinfo.dtype}", i)


def unary_sinfo(call: rx.Call, require: str | None = None, out_dtype: str | None = None) -> rx.StructInfo:
    """Struct info of an elementwise one-input op: the input's, with ``out_dtype`` when given."""
    sinfo = arg_sinfo(call, 0)
    if isinstance(sinfo, rx.PrimStructInfo):
        x = rx.TensorStructInfo((), sinfo.dtype)
    else:
        x = tensor_arg(call, 0)
    if require == "float":
        require_float(call, x, 0)
    elif require == "int":
        require_integer(call, x, 0)
    if isinstance(sinfo, rx.PrimStructInfo):
        return rx.PrimStructInfo(out_dtype or sinfo.dtype)
    return tensor_like(x, x.shape, out_dtype)


def register_unary(name: str, require: str | None = None, out_dtype: str | None = None,
                   pattern: int = OpPattern.ELEMWISE, inputs: tuple[str, ...] = ("x",),
                   attrs: tuple[AttrField, ...] = ()) -> None:
    """Register an elementwise one-input op (``relax.<name>``)."""

    def infer(call: rx.Call) -> rx.StructInfo:
        return unary_sinfo(call, require, out_dtype)

    infer.__doc__ = f"Struct info of R.{name}: the input's{' with dtype ' + out_dtype if out_dtype else ''}."
    register_op(f"relax.{name}", inputs=inputs, attrs=attrs, pattern=pattern,
                dtensor_rule=dtensor_elementwise if pattern == OpPattern.ELEMWISE else None)(infer)


def dtensor_elementwise(call: rx.Call, infer: Callable[[rx.Call], rx.StructInfo]) -> rx.StructInfo:
    """An elementwise or broadcasting op on distributed tensors (TVM's rule for them): every
    tensor argument is an R.DTensor on one mesh; the result is the op's result on that mesh, each
    mesh dimension sharding the output axis its inputs shard (aligned from the right, as
    broadcasting aligns them) or replicated when none does."""
    dts: list[tuple[int, rx.DTensorStructInfo]] = []
    local = []
    for i, a in enumerate(call.args):
        s = sinfo_of(a)
        if isinstance(s, rx.TensorStructInfo):
            raise OpError(f"{op_name(call)}: a distributed op takes R.DTensor inputs, not tensors: "
                          f"argument {_input_name(call, i)} is {describe(s)}", i)
        if isinstance(s, rx.DTensorStructInfo):
            if dts and not (structural_equal(s.device_mesh, dts[0][1].device_mesh)):
                raise OpError(f"{op_name(call)}: the distributed inputs must be on one device mesh "
                              f"(argument {_input_name(call, i)} is on another)", i)
            dts.append((i, s))
            a = rx.Var(f"local{i}", s.tensor_sinfo)  # its struct info as a whole tensor
        local.append(a)
    out = infer(dataclasses.replace(call, args=tuple(local)))
    if not isinstance(out, rx.TensorStructInfo):
        raise OpError(f"{op_name(call)}: distributed inputs need a tensor result, got {describe(out)}")
    mesh = dts[0][1].device_mesh
    specs = []
    for d in range(len(mesh.shape)):
        axes: dict[int, int] = {}  # output axis -> the argument sharding it
        for i, s in dts:
            axis = s.placement.specs[d].axis
            if axis is None:
                continue
            if out.ndim < 0 or s.tensor_sinfo.ndim < 0:
                raise OpError(f"{op_name(call)}: a sharded input needs a known rank", i)
            axes.setdefault(axis + out.ndim - s.tensor_sinfo.ndim, i)
        if len(axes) > 1:
            i = list(axes.values())[1]
            raise OpError(f"{op_name(call)}: the inputs shard mesh dimension {d} along different output axes "
                          f"({', '.join(str(a) for a in axes)}); redistribute one first (R.dist.redistribute)", i)
        specs.append(PlacementSpec(next(iter(axes)) if axes else None))
    return rx.DTensorStructInfo(out, mesh, Placement(tuple(specs)))


# ---------------------------------------------------------------- attribute converters
def _int(value: Any) -> int:
    """A Python int from an int or integer IntImm (bools are rejected)."""
    if isinstance(value, tir.IntImm) and value.dtype != "bool":
        return value.value
    if isinstance(value, bool) or not isinstance(value, int):
        raise OpError(f"expected an integer, got {value!r}")
    return value


def to_int(value: Any) -> int:
    """An integer attribute."""
    return _int(value)


def to_opt_int(value: Any) -> int | None:
    """An integer attribute that may be None."""
    return None if value is None else _int(value)


def to_bool(value: Any) -> bool:
    """A boolean attribute (True/False, or 0/1)."""
    if isinstance(value, tir.IntImm):
        value = value.value
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise OpError(f"expected True or False, got {value!r}")


def to_float(value: Any) -> float:
    """A floating-point attribute (ints are accepted)."""
    if isinstance(value, (tir.FloatImm, tir.IntImm)):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OpError(f"expected a number, got {value!r}")
    return float(value)


def to_str(value: Any) -> str:
    """A string attribute."""
    if isinstance(value, (rx.StringImm, tir.StringImm)):
        value = value.value
    if not isinstance(value, str):
        raise OpError(f"expected a string, got {value!r}")
    return value


def to_dtype(value: Any) -> str:
    """A dtype attribute; None and "" mean "void" (unknown: decided from the inputs)."""
    if isinstance(value, rx.DataTypeImm):
        value = value.value
    if value is None or value == "":
        return "void"
    if not is_valid_dtype(value):
        raise OpError(f"expected a dtype such as \"float32\", got {value!r}")
    return value


def to_int_tuple(value: Any) -> tuple[int, ...]:
    """A list of integers (a single int becomes a one-element list)."""
    if isinstance(value, (list, tuple)):
        return tuple(_int(v) for v in value)
    return (_int(value),)


def to_opt_int_tuple(value: Any) -> tuple[int, ...] | None:
    """A list of integers, or None."""
    return None if value is None else to_int_tuple(value)


def to_n_tuple(n: int) -> Callable[[Any], tuple[int, ...]]:
    """A converter to exactly ``n`` integers (one integer is repeated ``n`` times)."""

    def convert(value: Any) -> tuple[int, ...]:
        vals = to_int_tuple(value)
        if len(vals) == 1:
            vals = vals * n
        if len(vals) != n:
            raise OpError(f"expected 1 or {n} integers, got {len(vals)}")
        return vals

    convert.__doc__ = f"Exactly {n} integers."
    return convert


def to_padding(n: int) -> Callable[[Any], tuple[int, ...]]:
    """A converter to ``2 * n`` paddings (all begins, then all ends), as TVM completes them."""

    def convert(value: Any) -> tuple[int, ...]:
        vals = to_int_tuple(value)
        if len(vals) == 1:
            return vals * (2 * n)
        if len(vals) == n:
            return vals * 2
        if len(vals) == 2 * n:
            return vals
        raise OpError(f"expected 1, {n} or {2 * n} integers, got {len(vals)}")

    convert.__doc__ = f"{2 * n} paddings."
    return convert


def to_layout(canonical: str, optional: bool = False) -> Callable[[Any], str | None]:
    """A converter accepting layouts that are permutations of ``canonical`` (e.g. NHWC of NCHW)."""

    def convert(value: Any) -> str | None:
        if value is None and optional:
            return None
        text = to_str(value)
        if sorted(text) != sorted(canonical):
            raise OpError(f"unsupported layout {text!r} (expected a permutation of {canonical!r})")
        return text

    convert.__doc__ = f"A permutation of {canonical}."
    return convert


def check_inplace_indices(call: rx.Call, indices: Sequence[int], inputs: Sequence[rx.StructInfo],
                          outputs: Sequence[rx.StructInfo], what: str = "argument") -> None:
    """OpError unless ``inplace_indices`` pairs each output with an input it may overwrite (-1: a
    fresh output): one entry per output, at least one in place, no input twice, and each
    overwritten input a tensor of the output's shape and dtype."""
    name = op_name(call)
    if len(indices) != len(outputs):
        raise OpError(f"{name}: inplace_indices has {len(indices)} entries for {len(outputs)} "
                      f"output{'s' if len(outputs) != 1 else ''}", "inplace_indices")
    used = [i for i in indices if i != -1]
    if not used:
        raise OpError(f"{name}: at least one output must be computed in place "
                      f"(inplace_indices are all -1)", "inplace_indices")
    if len(set(used)) != len(used):
        raise OpError(f"{name}: inplace_indices {list(indices)} use an {what} twice", "inplace_indices")
    for out_i, in_i in enumerate(indices):
        if in_i == -1:
            continue
        if not 0 <= in_i < len(inputs):
            raise OpError(f"{name}: inplace index {in_i} is out of range for {len(inputs)} "
                          f"argument{'s' if len(inputs) != 1 else ''}", "inplace_indices")
        src, dst = inputs[in_i], outputs[out_i]
        if not isinstance(src, rx.TensorStructInfo) or not isinstance(dst, rx.TensorStructInfo):
            raise OpError(f"{name}: output {out_i} overwrites argument {in_i} in place, so both "
                          f"must be tensors, got {describe(src)} and {describe(dst)}", "inplace_indices")
        same_dtype = "void" in (src.dtype, dst.dtype) or src.dtype == dst.dtype
        same_shape = src.shape is None or dst.shape is None or (
            len(src.shape) == len(dst.shape)
            and not any(can_prove_not_equal(a, b) for a, b in zip(src.shape, dst.shape)))
        if not (same_dtype and same_shape):
            raise OpError(f"{name}: output {out_i} ({format_shape(dst.shape)}, {dst.dtype}) cannot "
                          f"overwrite argument {in_i} ({format_shape(src.shape)}, {src.dtype})", "inplace_indices")


def tuple_of_tensors(call: rx.Call, verb: str, i: int = 0) -> list[rx.TensorStructInfo]:
    """The tensors of the tuple argument ``i`` (concat's, stack's...); OpError naming what to
    ``verb`` when it is not a non-empty tuple of tensors."""
    tup = arg_sinfo(call, i)
    if not isinstance(tup, rx.TupleStructInfo):
        raise OpError(f"{op_name(call)}: expected a tuple of tensors, got {describe(tup)}", i)
    if not tup.fields:
        raise OpError(f"{op_name(call)}: needs at least one tensor to {verb}", i)
    for k, f in enumerate(tup.fields):
        if not isinstance(f, rx.TensorStructInfo):
            raise OpError(f"{op_name(call)}: element {k} of the tuple must be a tensor, got {describe(f)}", i)
    return list(tup.fields)
