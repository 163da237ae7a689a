"""The image family (``R.image.*``, issue 16): resize2d, resize3d, affine_grid, grid_sample, each
declared with its legalization to the computes of ``topi/image.py``."""
from __future__ import annotations

from typing import Any, Callable

from .. import topi
from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import as_const_int, format_shape, int64
from ..ir.block_builder import BlockBuilder
from ..ir.dtype import is_valid_dtype
from ..ir.layout import Layout, LayoutError
from ..ir.op import AttrField, InputForm, OpError, OpPattern, register_op
from ..ir.struct_info import sinfo_of
from ..topi.image import COORDINATE_MODES, RESIZE_METHODS, ROUNDING_METHODS
from ._common import op_name, shape_arg, shape_values, tensor_arg, tensor_like, to_bool, to_float, to_int, to_str
from .legalization import register_legalize


# ---------------------------------------------------------------- attribute converters
def _one_of(choices: tuple[str, ...], what: str) -> Callable[[Any], str]:
    """A converter accepting one of ``choices``."""

    def convert(value: Any) -> str:
        text = to_str(value)
        if text not in choices:
            raise OpError(f"unsupported {what} {text!r} (expected one of {', '.join(map(repr, choices))})")
        return text

    convert.__doc__ = f"One of {', '.join(choices)}."
    return convert


def _image_layout(spatial: str) -> Callable[[Any], str]:
    """A converter accepting layouts of the primal axes N, C and ``spatial`` (``NCHW``, ``NHWC``,
    ``NCHW4c``: only the channels may be split)."""
    primal = "NC" + spatial

    def convert(value: Any) -> str:
        text = to_str(value)
        try:
            layout = Layout.parse(text)
        except LayoutError as e:
            raise OpError(str(e)) from None
        if sorted(layout.primal) != sorted(primal) or any(layout.factor(ch) for ch in "N" + spatial):
            raise OpError(f"unsupported layout {text!r} (expected the axes {primal}, only C split, as NCHW4c)")
        return text

    convert.__doc__ = f"A layout of the axes {primal} (the channels may be split)."
    return convert


def _roi(count: int) -> Callable[[Any], tuple[tir.FloatImm, ...]]:
    """A converter of the region of interest: ``count`` float32 values (None: zeros)."""

    def convert(value: Any) -> tuple[tir.FloatImm, ...]:
        if value is None:
            value = (0.0,) * count
        elif not isinstance(value, (list, tuple)):
            value = (to_float(value),) * count
        if len(value) != count:
            raise OpError(f"the roi needs {count} values (the starts, then the ends of the spatial axes), "
                          f"got {len(value)}")
        return tuple(tir.FloatImm("float32", to_float(v)) for v in value)

    convert.__doc__ = f"{count} float32 values."
    return convert


def _out_dtype(value: Any) -> str | None:
    """A dtype, or None (``"void"``, ``""``): the data's."""
    if isinstance(value, rx.DataTypeImm):
        value = value.value
    if value is None or value in ("", "void"):
        return None
    if not isinstance(value, str) or not is_valid_dtype(value):
        raise OpError(f"expected a dtype such as \"float32\", got {value!r}")
    return value


# ---------------------------------------------------------------- resize2d, resize3d
def _register_resize(dims: int) -> None:
    """Register ``relax.image.resize{dims}d`` and its legalization (``topi.image.resize``)."""
    spatial = "DHW"[3 - dims:]
    name = f"image.resize{dims}d"

    def infer(call: rx.Call) -> rx.StructInfo:
        x = tensor_arg(call, 0)
        size = shape_arg(call, 1)
        a = call.attrs
        if size.ndim not in (-1, dims):
            raise OpError(f"{op_name(call)}: the output size must be a {dims}-dim shape, got {size.ndim} dims", 1)
        ndim = Layout.parse(a["layout"]).ndim
        if x.ndim not in (-1, ndim):
            raise OpError(f"{op_name(call)}: the layout {a['layout']} needs a {ndim}-D tensor, got {x.ndim}-D", 0)
        dtype = a["out_dtype"] or x.dtype
        values = shape_values(size)
        if x.shape is None or values is None:
            return tensor_like(x, None, dtype, ndim=ndim)
        shape = list(x.shape)
        for pos, v in zip(topi.image.resize_axes(a["layout"], spatial), values):
            shape[pos] = v
        return tensor_like(x, shape, dtype)

    infer.__doc__ = f"The data with its {spatial} axes resized to ``size`` (in ``out_dtype`` when given)."
    register_op(f"relax.{name}", inputs=("data", "size"), input_forms={"size": InputForm.SHAPE},
                attrs=(AttrField("roi", (tir.FloatImm("float32", 0.0),) * (2 * dims), _roi(2 * dims)),
                       AttrField("layout", "NC" + spatial, _image_layout(spatial)),
                       AttrField("method", "linear", _one_of(RESIZE_METHODS, "method")),
                       AttrField("coordinate_transformation_mode", "half_pixel",
                                 _one_of(COORDINATE_MODES, "coordinate_transformation_mode")),
                       AttrField("rounding_method", "round" if dims == 2 else "",
                                 _one_of(ROUNDING_METHODS, "rounding_method")),
                       AttrField("cubic_alpha", -0.75, to_float), AttrField("cubic_exclude", 0, to_int),
                       AttrField("extrapolation_value", 0.0, to_float), AttrField("out_dtype", None, _out_dtype)),
                pattern=OpPattern.INJECTIVE)(infer)

    def legalize(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
        a = call.attrs
        out = sinfo_of(call)
        if not isinstance(out, rx.TensorStructInfo) or out.shape is None:
            return call
        size = [out.shape[p] for p in topi.image.resize_axes(a["layout"], spatial)]
        # TVM's nearest rounding "" (resize3d's default): round with align_corners, else floor
        return bb.call_te(topi.image.resize, call.args[0], size, a["layout"], spatial, a["method"],
                          a["coordinate_transformation_mode"], a["rounding_method"],
                          [r.value for r in a["roi"]], a["cubic_alpha"], a["cubic_exclude"],
                          a["extrapolation_value"], out.dtype, primfunc_name_hint=f"resize{dims}d")

    legalize.__doc__ = f"Block ``resize`` of ``topi.image.resize`` over the {spatial} axes."
    register_legalize(f"relax.{name}", legalize)


_register_resize(2)
_register_resize(3)


# ---------------------------------------------------------------- affine_grid, grid_sample
def _float_tensor(call: rx.Call, i: int) -> rx.TensorStructInfo:
    """A float tensor argument (a grid or an affine matrix: coordinates are fractional)."""
    t = tensor_arg(call, i)
    if t.dtype != "void" and not t.dtype.startswith(("float", "bfloat")):
        raise OpError(f"{op_name(call)}: expected a float tensor, got dtype {t.dtype}", i)
    return t


@register_op("relax.image.affine_grid", inputs=("data", "size"), input_forms={"size": InputForm.SHAPE},
             attrs=(AttrField("align_corners", True, to_bool),), pattern=OpPattern.INJECTIVE)
def _affine_grid(call: rx.Call) -> rx.StructInfo:
    """``(batch, k, *size)`` for a ``(batch, k, k + 1)`` matrix, ``size`` of k = 2 or 3 dims."""
    theta = _float_tensor(call, 0)
    size = shape_arg(call, 1)
    if size.ndim not in (-1, 2, 3):
        raise OpError(f"{op_name(call)}: the output size must be a 2-dim or 3-dim shape, got {size.ndim} dims", 1)
    if theta.ndim not in (-1, 3):
        raise OpError(f"{op_name(call)}: expects the matrix to be 3-D (batch, k, k + 1), got {theta.ndim}-D", 0)
    values = shape_values(size)
    k = len(values) if values is not None else size.ndim
    if theta.shape is not None and k > 0:
        for axis, want in ((1, k), (2, k + 1)):
            got = as_const_int(theta.shape[axis])
            if got is not None and got != want:
                raise OpError(f"{op_name(call)}: a {k}-D grid needs a (batch, {k}, {k + 1}) matrix, got "
                              f"{format_shape(theta.shape)}", 0)
    if values is None or theta.shape is None:
        return tensor_like(theta, None, ndim=k + 2 if k > 0 else -1)
    return tensor_like(theta, [theta.shape[0], int64(k), *values])


@register_legalize("relax.image.affine_grid")
def _legalize_affine_grid(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.image.affine_grid`` (block ``compute``)."""
    out = sinfo_of(call)
    if not isinstance(out, rx.TensorStructInfo) or out.shape is None:
        return call
    return bb.call_te(topi.image.affine_grid, call.args[0], list(out.shape[2:]), call.attrs["align_corners"],
                      primfunc_name_hint="affine_grid")


@register_op("relax.image.grid_sample", inputs=("data", "grid"),
             attrs=(AttrField("method", "bilinear", _one_of(topi.image.GRID_METHODS, "method")),
                    AttrField("layout", "NCHW", _one_of(("NCHW", "NCDHW"), "layout")),
                    AttrField("padding_mode", "zeros", _one_of(topi.image.PADDING_MODES, "padding_mode")),
                    AttrField("align_corners", False, to_bool)),
             pattern=OpPattern.INJECTIVE)
def _grid_sample(call: rx.Call) -> rx.StructInfo:
    """``(N, C, *grid.shape[2:])``: the data's batch and channels at the grid's points (TVM's
    grid is ``(N, 2, H', W')``, or ``(N, 3, D', H', W')`` for NCDHW data)."""
    x = tensor_arg(call, 0)
    grid = _float_tensor(call, 1)
    a = call.attrs
    ndim = len(a["layout"])
    if x.ndim not in (-1, ndim):
        raise OpError(f"{op_name(call)}: the layout {a['layout']} needs a {ndim}-D tensor, got {x.ndim}-D", 0)
    if grid.ndim not in (-1, ndim):
        raise OpError(f"{op_name(call)}: the grid must be {ndim}-D (N, {ndim - 2}, ...), got {grid.ndim}-D", 1)
    if ndim == 5 and a["method"] == "bicubic":
        raise OpError(f"{op_name(call)}: bicubic sampling is 2-D only (NCHW)", "method")
    if x.shape is None or grid.shape is None:
        return tensor_like(x, None, ndim=ndim)
    return tensor_like(x, [x.shape[0], x.shape[1], *grid.shape[2:]])


@register_legalize("relax.image.grid_sample")
def _legalize_grid_sample(bb: BlockBuilder, call: rx.Call) -> rx.Expr:
    """``topi.image.grid_sample`` (block ``compute``)."""
    a = call.attrs
    return bb.call_te(topi.image.grid_sample, call.args[0], call.args[1], a["method"], a["layout"], a["padding_mode"],
                      a["align_corners"], primfunc_name_hint="grid_sample")
