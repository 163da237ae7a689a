"""Relax expressions: struct-info annotations (``R.Tensor`` ...), literals (``R.const``,
``R.shape`` ...), op calls through the registry, the call_tir/packed-call family, calls of
module functions, tuples and Python operators on Relax values."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, NoReturn

import numpy as np

from ...ir import relax as rx
from ...ir import tir
from ...ir.dtype import from_numpy_dtype, parse_dtype, to_numpy_dtype
from ...ir.global_info import VDevice, resolve_vdevice
from ...ir.module import GlobalVar
from ...ir.node import Map
from ...ir.op import InputForm, OpDef, OpError, find_dtensor_script_name, normalize_attrs
from ...ops import get_op_def, list_ops, make_call
from ...ops.inspect import DTYPE_PROPERTIES, INDEXED_PROPERTIES, TENSOR_PROPERTIES
from ...ir.struct_info import sinfo_of
from ..syntax import nodes as ast
from ..syntax.parse import parse_syntax
from ..errors import ScriptError
from .context import ParseContext
from .distributed import DTensorHandlers
from .exprs import Sig, attr_value, describe, handles, number_text
from .scope import MISSING, Scope, suggest
from .sinfo import derive_call_ret, format_sinfo, incompatible
from .tir_exprs import TirEvaluator, BoundMethod
from .values import DEVICE_TYPES, Device, Namespace

__all__ = ["RelaxEvaluator", "ModuleInfo", "LEAF_TYPES"]

# Expressions that may appear as call arguments without a binding of their own (normal form).
LEAF_TYPES = (rx.Var, rx.Constant, rx.ShapeExpr, rx.PrimValue, rx.StringImm, rx.DataTypeImm,
              rx.ExternFunc, rx.Op, rx.Tuple, GlobalVar)

# Python operators on Relax values and the ops they call.
_REL_BINOPS = {"+": "relax.add", "-": "relax.subtract", "*": "relax.multiply", "/": "relax.divide",
               "//": "relax.floor_divide", "%": "relax.floor_mod", "**": "relax.power",
               "&": "relax.bitwise_and", "|": "relax.bitwise_or", "^": "relax.bitwise_xor",
               "<<": "relax.left_shift", ">>": "relax.right_shift"}
_REL_CMPOPS = {"<": "relax.less", "<=": "relax.less_equal", ">": "relax.greater",
               ">=": "relax.greater_equal", "==": "relax.equal", "!=": "relax.not_equal"}
_OBJECT = rx.ObjectStructInfo()
_EXTERN_SINFO = rx.FuncStructInfo(None, _OBJECT, False)


class ModuleInfo:
    """The module-level names a function body may refer to: GlobalVars, kinds, signatures.
    ``read_signature(info, fdef)`` parses a Relax function's annotations only (the Relax parser's,
    given by whoever builds the module, since that parser is built on this module)."""

    def __init__(self, ctx: ParseContext, name: str | None,
                 read_signature: Callable[["ModuleInfo", Any], rx.FuncStructInfo | None]) -> None:
        self.ctx = ctx
        self.name = name
        self.read_signature = read_signature
        self.gvars: dict[str, GlobalVar] = {}
        self.kinds: dict[str, str] = {}  # "relax", "tir" or "extern"
        self.defs: dict[str, Any] = {}  # name -> FunctionDef (relax functions)
        self.tir_defs: dict[str, Any] = {}  # name -> FunctionDef (prim_funcs, for their return dtypes)
        self.parsed: dict[str, Any] = {}
        self._sigs: dict[str, rx.FuncStructInfo] = {}
        self.scope_base: dict[str, Any] = {}
        self.global_infos: Map = Map()  # I.module_global_infos: "mesh[0]" references resolve here

    def declare(self, name: str, kind: str, fdef: Any = None) -> GlobalVar:
        """Add a function name before any body is parsed."""
        gv = GlobalVar(name)
        self.gvars[name] = gv
        self.kinds[name] = kind
        if fdef is not None:
            self.defs[name] = fdef
        return gv

    def signature(self, name: str) -> rx.FuncStructInfo | None:
        """The struct info of a Relax function of the module (from its annotations if not parsed yet)."""
        got = self._sigs.get(name)
        if got is not None:
            return got
        func = self.parsed.get(name)
        if isinstance(func, rx.Function):
            got = func.struct_info  # type: ignore[assignment]
        elif name in self.defs:
            got = self.read_signature(self, self.defs[name])
        if got is not None:
            self._sigs[name] = got
        return got


def _is_int(value: Any) -> bool:
    """True for a Python int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


class RelaxEvaluator(DTensorHandlers, TirEvaluator):
    """Expressions of Relax function bodies and annotations."""

    default_int = "int64"
    dialect = "Relax"

    def __init__(self, ctx: ParseContext, scope: Scope, module: ModuleInfo) -> None:
        super().__init__(ctx, scope)
        self.module = module
        self.sym_vars: dict[str, tir.Var] = {}  # symbolic shape variables of the function
        # ``n = T.float16()`` declarations of the function body, read before its signature: a
        # ``"n"`` written in the signature is a variable of that dtype (int64 when undeclared).
        self.declared_dtypes: dict[str, str] = {}
        self.signature_mode = False  # strings in shapes define new symbolic variables

    # ---------------------------------------------------------------- normal form
    def emit_temp(self, node: Any, value: rx.Expr) -> rx.Var:
        """Bind a nested non-leaf expression to a fresh variable (the statement parser does it)."""
        self.error(node, "a nested call is not allowed here; bind it to a variable first")

    def to_expr(self, node: Any, value: Any, shape_like: bool = False) -> Any:
        """``value`` as a leaf Relax expression (nested calls are bound to fresh variables)."""
        if isinstance(value, rx.Expr):
            if isinstance(value, LEAF_TYPES):
                return value
            return self.emit_temp(node, value)
        return self.convert(node, value, shape_like)

    def value_expr(self, node: Any, value: Any) -> rx.Expr:
        """``value`` as the Relax expression of a binding (need not be a leaf)."""
        if isinstance(value, rx.Expr):
            return value
        return self.convert(node, value, False)

    def convert(self, node: Any, value: Any, shape_like: bool) -> Any:
        """A Python value (tuple, number, string, PrimExpr) as a Relax expression."""
        if isinstance(value, (tuple, list)):
            elts = node.elts if type(node) in (ast.Tuple, ast.List) and len(node.elts) == len(value) else None
            if shape_like and all(_is_int(v) or isinstance(v, (tir.PrimExpr, str)) for v in value):
                dims = self.dims(node, value, allow_minus_one=True)
                return rx.ShapeExpr(dims, struct_info=rx.ShapeStructInfo(dims, len(dims)))
            fields = tuple(self.to_expr(elts[i] if elts else node, v) for i, v in enumerate(value))
            return rx.Tuple(fields, struct_info=rx.TupleStructInfo(tuple(sinfo_of(f) for f in fields)))
        if isinstance(value, bool):
            return _prim_value(tir.IntImm("bool", int(value)))
        if isinstance(value, int):
            if not -(1 << 63) <= value < 1 << 63:
                self.error(node, f"{number_text(value)} is out of the range of int64")
            return _prim_value(tir.IntImm("int64", value))
        if isinstance(value, float):
            return _prim_value(tir.FloatImm("float32", value))
        if isinstance(value, tir.PrimExpr):
            return _prim_value(value)
        if isinstance(value, str):
            return rx.StringImm(value, struct_info=_OBJECT)
        if isinstance(value, np.ndarray):
            return self.ctx.constant(value)
        if isinstance(value, GlobalVar):
            return value
        if isinstance(value, (rx.StructInfo, Namespace)):
            self.error(node, f"{describe(value)} is a type, not a value")
        if isinstance(value, TensorFields):
            read = (f"{value}.type_code, {value}.bits or {value}.lanes" if value.field == "dtype"
                    else f"{value}[i]")
            self.error(node, f"{value} is not a value: read {read}")
        self.error(node, f"expected a Relax expression, got {describe(value)}")

    # ---------------------------------------------------------------- struct info annotations
    def sinfo(self, node: Any, signature: bool = False) -> rx.StructInfo:
        """Evaluate a type annotation (``R.Tensor((n, 4), "float32")``)."""
        old = self.signature_mode
        self.signature_mode = signature
        try:
            value = self.eval(node)
        finally:
            self.signature_mode = old
        return self.as_sinfo(node, value)

    def as_sinfo(self, node: Any, value: Any) -> rx.StructInfo:
        """A parsed value as struct info (bare ``R.Tensor`` etc. included)."""
        if isinstance(value, rx.StructInfo):
            return value
        if isinstance(value, Namespace):
            bare = {"R.Tensor": rx.TensorStructInfo(), "R.Shape": rx.ShapeStructInfo(),
                    "R.Tuple": rx.TupleStructInfo(()), "R.Object": _OBJECT,
                    "R.Callable": rx.FuncStructInfo(None, _OBJECT, False)}
            got = bare.get(value.path)
            if got is not None:
                return got
            if value.dialect == "T" and value.path.count(".") == 1:
                try:
                    parse_dtype(value.leaf)
                    return rx.PrimStructInfo(value.leaf)
                except ValueError:
                    pass
        if isinstance(value, (tuple, list)) and all(isinstance(v, rx.StructInfo) for v in value):
            return rx.TupleStructInfo(tuple(value))
        self.error(node, f"expected a type annotation such as R.Tensor((2, 3), \"float32\"), got {describe(value)}")

    def dims(self, node: Any, values: Any, allow_minus_one: bool = False) -> tuple[tir.PrimExpr, ...]:
        """Shape dimensions: ints, int64 expressions or (in signatures) strings naming variables;
        ``-1`` ("infer this one") only where an op takes a new shape."""
        items = node.elts if type(node) in (ast.Tuple, ast.List) and len(node.elts) == len(values) else None
        out = []
        for i, v in enumerate(values):
            where = items[i] if items else node
            if _is_int(v):
                if v < 0 and not (allow_minus_one and v == -1):
                    self.error(where, f"a shape dimension cannot be negative, got {number_text(v)}")
                if v >= 1 << 63:
                    self.error(where, f"a shape dimension must fit in int64, got {number_text(v)}")
                out.append(tir.IntImm("int64", v))
            elif isinstance(v, str):
                out.append(self.dim_string(where, v))
            elif isinstance(v, tir.PrimExpr):
                if v.dtype != "int64":
                    if isinstance(v, tir.IntImm) and v.dtype.startswith("int"):
                        v = tir.IntImm("int64", v.value)
                    else:
                        self.error(where, f"shape dimensions must be int64, got dtype {v.dtype} "
                                          f"(declare the variable with T.int64())")
                out.append(v)
            else:
                self.error(where, f"a shape dimension must be an integer or a symbolic variable, got {describe(v)}")
        return tuple(out)

    _DIM_TREES: dict[str, Any] = {}

    def dim_string(self, node: Any, text: str) -> tir.PrimExpr:
        """``"n"`` (a symbolic variable, defined on first use) or ``"n * 2"`` (an expression)."""
        if text.isidentifier():
            known = self.scope.lookup(text)
            if isinstance(known, tir.Var):
                return known
            var = self.sym_vars.get(text)
            if var is None:
                var = tir.Var(text, self.declared_dtypes.get(text, "int64"))
                self.sym_vars[text] = var
                self.scope.define(text, var)
            return var
        tree = self._DIM_TREES.get(text)
        if tree is None:
            try:
                module = parse_syntax(f"_ = ({text})\n", self.ctx.filename)
            except ScriptError:
                self.error(node, f"the shape dimension \"{text}\" is not a valid expression")
            tree = module.body[0].value
            self._DIM_TREES[text] = tree
        try:
            value = self._eval_dim_tree(tree)
        except ScriptError as err:
            self.error(node, f"in the shape dimension \"{text}\": {err.message}")
        if not isinstance(value, tir.PrimExpr):
            value = self.to_prim(node, value, "int64")
        return value

    def _eval_dim_tree(self, tree: Any) -> Any:
        """Evaluate a parsed dimension string. Its names resolve like names in the text: a variable
        written before as a dimension (``"m"``) or declared in the body (``m = T.int64()``); as in
        TVM, an expression does not define a new one (``"m + 1"`` alone is an error)."""
        for sub in ast.walk(tree):
            if type(sub) is ast.Name and self.scope.lookup(sub.id) is MISSING and sub.id not in self.sym_vars \
                    and self.ctx.resolve(sub.id) is MISSING:
                if sub.id not in self.declared_dtypes:
                    self.error(sub, f"name '{sub.id}' is not defined: write it as a dimension of its own "
                                    f"(\"{sub.id}\") first, or declare {sub.id} = T.int64() in the function")
                self.dim_string(sub, sub.id)
            elif type(sub) is ast.Name and sub.id in self.sym_vars and self.scope.lookup(sub.id) is MISSING:
                self.scope.define(sub.id, self.sym_vars[sub.id])
        return self.eval(tree)

    _TENSOR = Sig("R.Tensor", ("shape", "dtype", "vdevice", "ndim"), 0)

    @handles("R.Tensor")
    def _tensor(self, node: Any) -> rx.TensorStructInfo:
        """``R.Tensor(shape, dtype, vdevice, ndim)``."""
        shape_n, dtype_n, vdev_n, ndim_n = self.bind(node, self._TENSOR)
        shape = self.eval(shape_n) if shape_n is not None else None
        dtype_v = self.eval(dtype_n) if dtype_n is not None else None
        if isinstance(shape, str) and dtype_v is None:  # R.Tensor("float32")
            shape, dtype_v, dtype_n, shape_n = None, shape, shape_n, None
        dtype = self.expect_dtype(dtype_n, dtype_v) if dtype_v is not None else "void"
        ndim = self.expect_int(ndim_n, self.eval(ndim_n), "ndim") if ndim_n is not None else -1
        vdevice = self._vdevice(vdev_n) if vdev_n is not None else None
        dims = self.shape_of(shape_n, shape, "R.Tensor") if shape is not None else None
        if dims is not None and ndim != -1 and ndim != len(dims):
            self.error(ndim_n, f"ndim={ndim} does not match the shape's {len(dims)} dimensions")
        if ndim < -1:
            self.error(ndim_n, f"ndim must be -1 (unknown) or at least 0, got {ndim}")
        return rx.TensorStructInfo(dims, dtype, len(dims) if dims is not None else ndim, vdevice)

    def _vdevice(self, node: Any, value: Any = MISSING) -> str:
        """A vdevice reference as TVM prints it, ``"kind:index:scope"``, resolved against the
        module's vdevices (``"cuda"`` reads as ``"cuda:0:global"``, ``"vdevice:3"`` by position)."""
        value = self.eval(node) if value is MISSING else value
        if not isinstance(value, VDevice):
            value = self.expect_str(node, value, "vdevice")
        infos = self.module.global_infos if self.module is not None else Map()
        try:
            return resolve_vdevice(value, infos.get("vdevice"))
        except ValueError as err:
            self.error(node, str(err))

    def shape_of(self, node: Any, value: Any, what: str) -> tuple[tir.PrimExpr, ...]:
        """The dims of a shape argument: a tuple/list, or a shape-typed value."""
        if isinstance(value, (tuple, list)):
            return self.dims(node, value)
        if isinstance(value, rx.Expr):
            s = sinfo_of(value)
            if isinstance(s, rx.ShapeStructInfo) and s.values is not None:
                return tuple(s.values)
        if _is_int(value) or isinstance(value, (tir.PrimExpr, str)):
            text = self.ctx.text(node)
            self.error(node, f"the shape of {what} must be a tuple: write ({text},) for one dimension")
        self.error(node, f"the shape of {what} must be a tuple of dimensions, got {describe(value)}")

    @handles("R.Shape")
    def _shape_sinfo(self, node: Any) -> rx.ShapeStructInfo:
        """``R.Shape([...])`` / ``R.Shape(ndim=n)``."""
        values_n, ndim_n = self.bind(node, Sig("R.Shape", ("values", "ndim"), 0))
        ndim = self.expect_int(ndim_n, self.eval(ndim_n), "ndim") if ndim_n is not None else -1
        if values_n is None:
            return rx.ShapeStructInfo(None, ndim)
        dims = self.shape_of(values_n, self.eval(values_n), "R.Shape")
        if ndim != -1 and ndim != len(dims):
            self.error(ndim_n, f"ndim={ndim} does not match the {len(dims)} values")
        return rx.ShapeStructInfo(dims, len(dims))

    @handles("R.Tuple")
    def _tuple_sinfo(self, node: Any) -> rx.TupleStructInfo:
        """``R.Tuple(a, b)``."""
        if node.keywords:
            self.error(node.keywords[0], "R.Tuple takes the field types as positional arguments")
        args = node.args
        if len(args) == 1 and type(args[0]) in (ast.List, ast.Tuple):
            args = args[0].elts
        return rx.TupleStructInfo(tuple(self.as_sinfo(a, self.eval(a)) for a in args))

    @handles("R.Object")
    def _object(self, node: Any) -> rx.StructInfo:
        """``R.Object()``."""
        self.no_args(node, "R.Object")
        return _OBJECT

    @handles("R.Prim")
    def _prim(self, node: Any) -> rx.PrimStructInfo:
        """``R.Prim("int64")`` / ``R.Prim(value=n)``."""
        dtype_n, value_n = self.bind(node, Sig("R.Prim", ("dtype", "value"), 0))
        value = None
        if value_n is not None:
            v = self.eval(value_n)
            value = self.dim_string(value_n, v) if isinstance(v, str) else self.to_prim(value_n, v)
        if dtype_n is not None:
            dtype = self.expect_dtype(dtype_n, self.eval(dtype_n))
        elif value is not None:
            dtype = value.dtype
        else:
            self.error(node, "R.Prim needs a dtype (R.Prim(\"int64\")) or a value (R.Prim(value=n))")
        return rx.PrimStructInfo(dtype, value)

    @handles("R.Callable")
    def _callable(self, node: Any) -> rx.FuncStructInfo:
        """``R.Callable((params...), ret, purity)``; purity defaults to whether the parameters are
        known (TVM: an opaque callable may have side effects)."""
        params_n, ret_n, purity_n = self.bind(node, Sig("R.Callable", ("params", "ret", "purity"), 0))
        params = None
        if params_n is not None:
            pv = self.eval(params_n)
            if not isinstance(pv, (tuple, list)):
                self.error(params_n, "the parameters of R.Callable are a tuple of types")
            params = tuple(self.as_sinfo(params_n, p) for p in pv)
        ret = self.as_sinfo(ret_n, self.eval(ret_n)) if ret_n is not None else _OBJECT
        purity = self.expect_bool(purity_n, self.eval(purity_n), "purity") if purity_n is not None \
            else params is not None
        return rx.FuncStructInfo(params, ret, purity)

    # ---------------------------------------------------------------- literal values
    @handles("R.const")
    def _const(self, node: Any) -> rx.Constant:
        """``R.const(value, dtype)``: a Constant (ints default to int32, floats to float32)."""
        value_n, dtype_n = self.bind(node, Sig("R.const", ("value", "dtype"), 1))
        value = self.eval(value_n)
        dtype = self.expect_dtype(dtype_n, self.eval(dtype_n)) if dtype_n is not None else None
        if isinstance(value, rx.Constant):
            value = value.data
        if isinstance(value, tir.IntImm):
            value = bool(value.value) if value.dtype == "bool" else value.value
        elif isinstance(value, tir.FloatImm):
            value = value.value
        if dtype is None:
            if isinstance(value, np.ndarray):
                dtype = from_numpy_dtype(value.dtype)
            else:
                flat = np.asarray(value)
                dtype = "bool" if flat.dtype == np.bool_ else ("float32" if flat.dtype.kind == "f" else "int32")
        try:
            data = np.array(value, dtype=to_numpy_dtype(dtype))
        except (ValueError, TypeError, OverflowError) as err:
            self.error(value_n, f"cannot make a {dtype} constant of {describe(value)}: {err}")
        return rx.Constant(data)

    @handles("R.dist.const")
    def _dist_const(self, node: Any) -> rx.Constant:
        """``R.dist.const(value, struct_info=R.DTensor(...))``: a constant of a distributed tensor."""
        value_n, sinfo_n = self.bind(node, Sig("R.dist.const", ("value", "struct_info"), 2))
        sinfo = self.as_sinfo(sinfo_n, self.eval(sinfo_n))
        if not isinstance(sinfo, rx.DTensorStructInfo) or sinfo.tensor_sinfo.shape is None \
                or sinfo.tensor_sinfo.dtype == "void":
            self.error(sinfo_n, f"R.dist.const takes a DTensor of known shape and dtype, got {format_sinfo(sinfo)}")
        tensor = sinfo.tensor_sinfo
        shape = tuple(self.expect_int(sinfo_n, getattr(d, "value", None), "a constant's dimension") for d in tensor.shape)
        value = self.eval(value_n)
        try:
            data = np.broadcast_to(np.array(value, dtype=to_numpy_dtype(tensor.dtype)), shape).copy()
        except (ValueError, TypeError, OverflowError) as err:
            self.error(value_n, f"cannot make a {tensor.dtype} constant of shape {shape} of {describe(value)}: {err}")
        return rx.Constant(data, struct_info=sinfo)

    @handles("R.shape")
    def _shape_value(self, node: Any) -> rx.ShapeExpr:
        """``R.shape([...])``: a ShapeExpr of int64 dims."""
        (values_n,) = self.bind(node, Sig("R.shape", ("value",), 1))
        values = self.eval(values_n)
        if not isinstance(values, (tuple, list)):
            self.error(values_n, f"R.shape takes a list of dimensions, got {describe(values)}")
        dims = self.dims(values_n, values)
        return rx.ShapeExpr(dims, struct_info=rx.ShapeStructInfo(dims, len(dims)))

    @handles("R.prim_value")
    def _prim_value(self, node: Any) -> rx.PrimValue:
        """``R.prim_value(v)``."""
        (value_n,) = self.bind(node, Sig("R.prim_value", ("value",), 1))
        v = self.eval(value_n)
        if isinstance(v, rx.PrimValue):
            return v
        if isinstance(v, (rx.Expr, rx.StructInfo)) or isinstance(v, str):
            self.error(value_n, f"R.prim_value takes a number or a TIR expression, got {describe(v)}")
        return self.convert(value_n, v, False)

    @handles("R.device")
    def _device(self, node: Any) -> Device:
        """``R.device(device_type, index=0)``: a type code or name (``"cuda"``) and an index."""
        type_n, index_n = self.bind(node, Sig("R.device", ("device_type", "index"), 1))
        kind = self.eval(type_n)
        if isinstance(kind, str):
            if kind not in DEVICE_TYPES:
                self.error(type_n, f"unknown device '{kind}'{suggest(kind, list(DEVICE_TYPES))}")
            kind = DEVICE_TYPES[kind]
        if not _is_int(kind):
            self.error(type_n, f"R.device takes a device type code or name, got {describe(kind)}")
        index = self.eval(index_n) if index_n is not None else 0
        if not _is_int(index):
            self.error(index_n, f"R.device's index must be an integer, got {describe(index)}")
        return Device(int(kind), int(index))

    @handles("I.VDevice")
    def _vdevice_value(self, node: Any) -> VDevice:
        """``tvm.ir.VDevice(target, vdevice_id=0, memory_scope="global")`` as a value (``R.to_vdevice``'s)."""
        target_n, id_n, scope_n = self.bind(node, Sig("I.VDevice", ("target", "vdevice_id", "memory_scope"), 1))
        target = self.eval(target_n)
        if not isinstance(target, str):
            self.error(target_n, f"the target of a VDevice is a string here, got {describe(target)}")
        vdevice_id = self.expect_int(id_n, self.eval(id_n), "vdevice_id") if id_n is not None else 0
        scope = self.expect_str(scope_n, self.eval(scope_n), "memory_scope") if scope_n is not None else "global"
        return VDevice(target, vdevice_id, scope)

    @handles("R.str")
    def _str(self, node: Any) -> rx.StringImm:
        """``R.str("...")``."""
        (value_n,) = self.bind(node, Sig("R.str", ("value",), 1))
        return rx.StringImm(self.expect_str(value_n, self.eval(value_n), "R.str's value"), struct_info=_OBJECT)

    @handles("R.dtype")
    def _dtype(self, node: Any) -> rx.DataTypeImm:
        """``R.dtype("float32")``."""
        (value_n,) = self.bind(node, Sig("R.dtype", ("value",), 1))
        return rx.DataTypeImm(self.expect_dtype(value_n, self.eval(value_n)), struct_info=_OBJECT)

    @handles("R.tuple")
    def _tuple(self, node: Any) -> rx.Tuple:
        """``R.tuple(a, b)``."""
        if node.keywords:
            self.error(node.keywords[0], "R.tuple takes its fields as positional arguments")
        fields = tuple(self.to_expr(a, self.eval(a)) for a in node.args)
        return rx.Tuple(fields, struct_info=rx.TupleStructInfo(tuple(sinfo_of(f) for f in fields)))

    @handles("R.ExternFunc")
    def _extern_func(self, node: Any) -> rx.ExternFunc:
        """``R.ExternFunc("sym")``."""
        (name_n,) = self.bind(node, Sig("R.ExternFunc", ("global_symbol",), 1))
        return rx.ExternFunc(self.expect_str(name_n, self.eval(name_n), "the symbol"), struct_info=_EXTERN_SINFO)

    # ---------------------------------------------------------------- ops
    def call_unknown(self, node: Any, func: Namespace) -> Any:
        """``R.<op>(...)`` for every op of the registry."""
        if func.dialect == "R":
            try:
                opdef = get_op_def("relax." + func.path[2:])
            except KeyError:
                opdef = find_dtensor_script_name(func.path[2:])  # R.dist.call_tir is R.call_tir
            if opdef is not None:
                return self.op_call(node, opdef)
        return super().call_unknown(node, func)

    def known_paths(self) -> list[str]:
        """Handlers plus every registered op (for suggestions)."""
        return [*super().known_paths(), *(f"R.{d.script_name}" for d in list_ops())]

    def op_call(self, node: Any, opdef: OpDef, sinfo_args: tuple = ()) -> rx.Call:
        """``R.<op>(...)`` bound by the op's declared script signature; each input is built by its
        declared form, attributes in declared order or by keyword."""
        name = f"R.{opdef.script_name}"
        sig = opdef.script_signature
        bound = self.bind(node, Sig(name, sig.positional, 0, sig.kwonly, varargs=sig.varargs is not None))
        params = (*sig.positional, *sig.kwonly)
        given = dict(zip(params, bound))
        tail = bound[len(params)] if sig.varargs is not None else []
        for param in sig.required:
            if given.get(param) is None:
                self.error(node.func, f"{name} needs out_sinfo=, the struct info of its result"
                           if param == "out_sinfo" else f"{name} is missing the argument '{param}'")
        # An error points at ``name=value`` when the value was given by keyword.
        keyword_of = {id(kw.value): kw for kw in node.keywords}
        given_at = {p: keyword_of.get(id(n), n) for p, n in given.items() if n is not None}
        args: list = []
        arg_nodes: list = []
        for input_name in opdef.inputs:
            if input_name == sig.varargs:
                for a in self._varargs(tail):
                    args.append(self.to_expr(a, self.eval(a)))
                    arg_nodes.append(a)
                continue
            value_node = given.get(input_name)
            if value_node is None:
                if input_name in opdef.input_defaults:
                    args.append(self.to_expr(node.func, opdef.input_defaults[input_name]))
                    arg_nodes.append(node.func)
                    continue
                break  # an optional input left out ends the arguments
            args.append(self._input(value_node, opdef.input_form(input_name), name))
            arg_nodes.append(given_at[input_name])
        attrs: dict = {}
        attr_nodes: dict = {}
        for group, fields in sig.groups.items():
            if given.get(group) is not None:
                value = self.eval(given[group])
                for field in fields:
                    if not hasattr(value, field):
                        self.error(given[group], f"{name} takes R.{group}(...) here, got {describe(value)}")
                    attrs[field] = getattr(value, field)
                    attr_nodes[field] = given_at[group]
        for field in opdef.attrs:
            if given.get(field.name) is not None:
                attrs[field.name] = self.attr(given[field.name], self.eval(given[field.name]))
                if field.reference == "device_mesh":
                    attrs[field.name] = self.device_mesh_ref(given[field.name], attrs[field.name])
                elif field.reference == "vdevice":
                    attrs[field.name] = self._vdevice(given[field.name], attrs[field.name])
                attr_nodes[field.name] = given_at[field.name]
        if opdef.out_sinfo:
            sinfo_args = (self._out_sinfo(given["out_sinfo"], self.eval(given["out_sinfo"]), given.get("dtype")),)
            attr_nodes["out_sinfo"] = given_at["out_sinfo"]
        elif given.get("sinfo_args") is not None:
            sinfo_args = self._sinfo_args(given["sinfo_args"])
            attr_nodes["sinfo_args"] = given_at["sinfo_args"]
        call = self.finish_call(node, name, opdef, args, attrs, sinfo_args, arg_nodes, attr_nodes)
        if opdef.script_normalize is not None:
            call = opdef.script_normalize(call)
        return call

    def _varargs(self, nodes: list) -> list:
        """The values of a variadic input: one list or tuple literal stands for its elements
        (``R.assert_op(c, [x, y])``)."""
        if len(nodes) == 1 and type(nodes[0]) in (ast.List, ast.Tuple):
            return list(nodes[0].elts)
        return nodes

    def _input(self, node: Any, form: str, name: str) -> Any:
        """An op input written in its declared ``InputForm``."""
        if form == InputForm.PRIM_FUNC:
            return self._callee(node, self.eval(node), name)
        if form == InputForm.PACKED_FUNC:
            return self._extern(node, self.eval(node))
        if form == InputForm.ARGS:
            return self._args_tuple(node)
        if form == InputForm.DTYPE:
            value = self.eval(node)
            if isinstance(value, str):
                return rx.DataTypeImm(self.expect_dtype(node, value), struct_info=_OBJECT)
            return self.to_expr(node, value)
        return self.to_expr(node, self.eval(node), form == InputForm.SHAPE)

    def attr(self, node: Any, value: Any) -> Any:
        """An op attribute value (lists become tuples, typed literals stay PrimExprs)."""
        if isinstance(value, rx.DataTypeImm):
            return value.value
        if isinstance(value, rx.StringImm):
            return value.value
        if isinstance(value, rx.PrimValue) and isinstance(value.value, (tir.IntImm, tir.FloatImm)):
            return value.value.value
        return attr_value(value)

    def finish_call(self, node: Any, name: str, opdef: OpDef, args: list, attrs: dict, sinfo_args: tuple,
                    arg_nodes: list, attr_nodes: dict) -> rx.Call:
        """Build and infer the call; an OpError points at the argument it names."""
        try:
            if any(isinstance(a, GlobalVar) for a in args):
                norm = normalize_attrs(opdef, attrs)
                call = rx.Call(opdef.op, tuple(args), norm, tuple(sinfo_args))
                return rx.Call(call.op, call.args, norm, call.sinfo_args, struct_info=opdef.infer(call))
            return make_call(opdef, args, attrs, sinfo_args)
        except OpError as err:
            self.op_error(node, err, arg_nodes, attr_nodes)

    def op_error(self, node: Any, err: OpError, arg_nodes: list, attr_nodes: dict) -> NoReturn:
        """Report an OpError under the offending argument."""
        # ``node`` is a Call, or an operator (BinOp, UnaryOp, Compare) that became an op call.
        where = getattr(node, "func", node)
        if isinstance(err.arg, int) and 0 <= err.arg < len(arg_nodes):
            where = arg_nodes[err.arg]
        elif isinstance(err.arg, str) and err.arg in attr_nodes:
            where = attr_nodes[err.arg]
        elif isinstance(err.arg, int) and err.arg >= len(arg_nodes) and getattr(node, "args", ()):
            where = node.args[-1]
        self.error(where, err.message)

    # ---------------------------------------------------------------- call_tir and packed calls
    def _callee(self, node: Any, value: Any, what: str) -> GlobalVar:
        """The GlobalVar of a call_tir callee (a T.prim_func of the module)."""
        if not isinstance(value, GlobalVar):
            self.error(node, f"{what} calls a T.prim_func of the module (cls.name), got {describe(value)}")
        kind = self.module.kinds.get(value.name_hint)
        if kind is not None and kind != "tir":
            kind_text = "a Relax function" if kind == "relax" else "an extern function"
            self.error(node, f"{what} calls a T.prim_func, but '{value.name_hint}' is {kind_text}")
        return value

    def _out_sinfo(self, node: Any, value: Any, dtype_node: Any = None) -> rx.StructInfo:
        """``out_sinfo=``: one struct info, a list of them (a tuple), or the legacy shape plus
        ``dtype=`` (``R.call_tir(f, args, (1, 128), dtype="float32")``)."""
        if isinstance(value, rx.StructInfo):
            return value
        if isinstance(value, (tuple, list)) and value and all(
                isinstance(v, (rx.StructInfo, Namespace)) for v in value):
            return rx.TupleStructInfo(tuple(self.as_sinfo(node, v) for v in value))
        if isinstance(value, (tuple, list)):
            dtype = self.expect_dtype(dtype_node, self.eval(dtype_node)) if dtype_node is not None else "float32"
            return rx.TensorStructInfo(self.dims(node, value), dtype)
        return self.as_sinfo(node, value)

    def _args_tuple(self, node: Any) -> rx.Tuple:
        """The argument tuple of the call_tir family (a single value is wrapped)."""
        value = self.eval(node)
        if isinstance(value, rx.Expr) and not isinstance(value, rx.Tuple):
            s = sinfo_of(value)
            if not isinstance(s, rx.TupleStructInfo):
                value = (value,)
        expr = self.to_expr(node, value if not isinstance(value, list) else tuple(value))
        if isinstance(expr, rx.Tuple) or isinstance(sinfo_of(expr), rx.TupleStructInfo):
            return expr
        return rx.Tuple((expr,), struct_info=rx.TupleStructInfo((sinfo_of(expr),)))

    def _extern(self, node: Any, value: Any) -> rx.Expr:
        """A packed-function callee: a name string or a callable value."""
        if isinstance(value, str):
            return rx.ExternFunc(value, struct_info=_EXTERN_SINFO)
        if isinstance(value, rx.Expr):
            return self.to_expr(node, value)
        self.error(node, f"expected the name of a packed function (a string), got {describe(value)}")

    def _sinfo_args(self, node: Any | None) -> tuple:
        """``sinfo_args=``: one struct info or a tuple of them."""
        if node is None:
            return ()
        value = self.eval(node)
        items = value if isinstance(value, (tuple, list)) else (value,)
        return tuple(self.as_sinfo(node, v) for v in items)

    def _packed_parts(self, node: Any, name: str) -> tuple[Any, list[Any], Any, dict[str, Any]]:
        """Split a packed call into callee, arguments, sinfo_args and other keywords."""
        if not node.args:
            self.error(node.func, f"{name} needs the name of the packed function")
        sinfo_n = None
        extra: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg in ("sinfo_args", "ty_args"):  # ty_args: TVM 0.27's name
                sinfo_n = kw.value
            elif kw.arg is None:
                self.error(kw, f"'**' unpacking is not supported in {name}(...)")
            else:
                extra[kw.arg] = kw
        return node.args[0], list(node.args[1:]), sinfo_n, extra

    @handles("R.call_packed")
    def _call_packed(self, node: Any) -> rx.Call:
        """``R.call_packed("f", *args, sinfo_args=...)``: a call of an ExternFunc."""
        f_n, rest, sinfo_n, extra = self._packed_parts(node, "R.call_packed")
        func = self._extern(f_n, self.eval(f_n))
        args = tuple(self.to_expr(a, self.eval(a)) for a in rest)
        sinfo_args = self._sinfo_args(sinfo_n)
        attrs = Map((k, self.attr(kw.value, self.eval(kw.value))) for k, kw in extra.items())
        ret = sinfo_args[0] if len(sinfo_args) == 1 else (
            rx.TupleStructInfo(sinfo_args) if sinfo_args else _OBJECT)
        return rx.Call(func, args, attrs, sinfo_args, struct_info=ret)

    # ---------------------------------------------------------------- calls of functions
    def call_value(self, node: Any, func: Any) -> Any:
        """Calls of module functions (``cls.f(x)``, ``f(x)``) and local function values."""
        if isinstance(func, GlobalVar):
            kind = self.module.kinds.get(func.name_hint)
            if kind == "tir":
                return self.prim_func_call(node, func)
            finfo = self.module.signature(func.name_hint) if kind == "relax" else None
            return self.function_call(node, func, finfo)
        if isinstance(func, rx.Expr):
            s = sinfo_of(func)
            if isinstance(s, rx.FuncStructInfo):
                return self.function_call(node, self.to_expr(node.func, func), s)
        if type(func) is BoundMethod and isinstance(func.base, rx.Expr):
            return self.relax_method_call(node, func)
        return super().call_value(node, func)

    def prim_func_call(self, node: Any, gv: GlobalVar) -> rx.Call:
        """``cls.f(x, y)``: a direct call of a T.prim_func of the module (TVM's). The callee may
        write its buffer arguments, so the call is impure (``_ = cls.copy(x, y)`` in a function with
        ``"relax.force_pure"``); its result is the prim_func's return value (``-> T.int64``: an
        ``R.Prim``) or nothing (an empty tuple)."""
        fdef = self.module.tir_defs.get(gv.name_hint)
        dtype = self.return_type(fdef.returns) if fdef is not None else None
        ret: rx.StructInfo = rx.PrimStructInfo(dtype) if dtype not in (None, "void") else rx.TupleStructInfo(())
        return self.function_call(node, gv, rx.FuncStructInfo(None, ret, False))

    def get_attribute(self, node: Any, base: Any, name: str) -> Any:
        """``x.struct_info``, ``x.astype`` (bound for the call) of a Relax value; a tensor's DLTensor
        fields (``x.ndim``, ``x.dtype.bits``, ``x.shape[i]``...) as the ``R.inspect`` calls TVM's
        properties build."""
        if isinstance(base, rx.Expr) and name == "struct_info":
            return sinfo_of(base)
        if isinstance(base, rx.Expr) and name == "astype":
            return BoundMethod(base, name)
        if isinstance(base, TensorFields) and name in DTYPE_PROPERTIES and base.field == "dtype":
            return self._inspect(node, DTYPE_PROPERTIES[name], base.tensor)
        if isinstance(base, rx.Expr) and name in TENSOR_PROPERTIES:
            if not isinstance(sinfo_of(base), rx.TensorStructInfo):
                self.error(node, f"'{name}' reads a tensor's DLTensor field, but {describe(base)} is "
                                 f"{format_sinfo(sinfo_of(base))}")
            tensor = self.to_expr(node.value, base)
            op = TENSOR_PROPERTIES[name]
            return TensorFields(tensor, name) if op is None else self._inspect(node, op, tensor)
        return super().get_attribute(node, base, name)

    def relax_method_call(self, node: Any, method: BoundMethod) -> rx.Call:
        """``x.astype("float16")``: ``R.astype(x, "float16")``, as TVM's Expr method."""
        (dtype_n,) = self.bind(node, Sig("astype", ("dtype",), 1))
        dtype = self.expect_dtype(dtype_n, self.eval(dtype_n))
        try:
            return make_call("relax.astype", (self.to_expr(node.func, method.base),), {"dtype": dtype})
        except OpError as err:
            self.error(node, err.message)

    def function_call(self, node: Any, callee: Any, finfo: rx.FuncStructInfo | None) -> rx.Call:
        """A call of a Relax function (module function or local function value)."""
        if node.keywords:
            self.error(node.keywords[0], "Relax functions take positional arguments only")
        args = tuple(self.to_expr(a, self.eval(a)) for a in node.args)
        if finfo is None:
            return rx.Call(callee, args, struct_info=_OBJECT)
        if finfo.params is not None:
            if len(args) != len(finfo.params):
                where = node.args[len(finfo.params)] if len(args) > len(finfo.params) else node.func
                self.error(where, f"{self.ctx.text(node.func)} takes {len(finfo.params)} argument"
                                  f"{'s' if len(finfo.params) != 1 else ''}, got {len(args)}")
            for i, (p, a) in enumerate(zip(finfo.params, args)):
                if incompatible(p, sinfo_of(a)):
                    self.error(node.args[i], f"argument {i + 1} of {self.ctx.text(node.func)} must be "
                                             f"{format_sinfo(p)}, got {format_sinfo(sinfo_of(a))}")
        ret = derive_call_ret(finfo, [sinfo_of(a) for a in args])
        return rx.Call(callee, args, struct_info=ret)

    # ---------------------------------------------------------------- operators
    def _relax_operand(self, value: Any) -> bool:
        """True when an operator operand makes the operation a Relax op."""
        return isinstance(value, rx.Expr)

    def binop(self, node: Any, op: str, lnode: Any, a: Any, rnode: Any, b: Any) -> Any:
        """``a + b`` etc.: a Relax op when an operand is a Relax value, else TIR."""
        if self._relax_operand(a) or self._relax_operand(b):
            name = _REL_BINOPS.get(op)
            if name is None:
                self.error(node, f"the operator {op} is not supported on Relax values")
            return self._relax_binary(node, name, lnode, a, rnode, b)
        return super().binop(node, op, lnode, a, rnode, b)

    def compare(self, node: Any, op: str, lnode: Any, a: Any, rnode: Any, b: Any) -> Any:
        """``a < b`` etc.: a Relax op when an operand is a Relax value, else TIR."""
        if self._relax_operand(a) or self._relax_operand(b):
            name = _REL_CMPOPS.get(op)
            if name is None:
                self.error(node, f"the comparison {op} is not supported on Relax values")
            return self._relax_binary(node, name, lnode, a, rnode, b)
        return super().compare(node, op, lnode, a, rnode, b)

    def visit_Compare(self, node: Any) -> Any:
        """A comparison (chains only on TIR values)."""
        if len(node.ops) > 1:
            left = self.eval(node.left)
            if self._relax_operand(left):
                self.error(node, "chained comparisons are not supported on Relax values")
            return self.compare_chain(node, left)   # evaluate each operand once
        return self.compare(node, node.ops[0], node.left, self.eval(node.left), node.comparators[0],
                            self.eval(node.comparators[0]))

    def _relax_binary(self, node: Any, name: str, lnode: Any, a: Any, rnode: Any, b: Any) -> rx.Call:
        """A two-operand Relax op call."""
        x = self._operand(lnode, a, b)
        y = self._operand(rnode, b, a)
        try:
            return make_call(name, (x, y))
        except OpError as err:
            self.op_error(node, err, [lnode, rnode], {})

    def _operand(self, node: Any, value: Any, other: Any) -> rx.Expr:
        """An operator operand; a Python number becomes a constant of the other side's dtype."""
        if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(other, rx.Expr):
            s = sinfo_of(other)
            dtype = s.dtype if isinstance(s, (rx.TensorStructInfo, rx.PrimStructInfo)) and s.dtype != "void" else (
                "float32" if isinstance(value, float) else "int32")
            return rx.Constant(np.array(value, dtype=to_numpy_dtype(dtype)))
        return self.to_expr(node, value)

    def visit_UnaryOp(self, node: Any) -> Any:
        """``-x`` on Relax values is R.negative."""
        value = self.eval(node.operand)   # once: operands may nest deeply
        if node.op == "-" and isinstance(value, rx.Expr):
            try:
                return make_call("relax.negative", (self.to_expr(node.operand, value),))
            except (OpError, KeyError) as err:
                self.error(node, getattr(err, "message", str(err)))
        return self.unary(node, value)

    def subscript(self, node: Any, base: Any) -> Any:
        """``t[i]`` on a Relax tuple: a TupleGetItem; ``x.shape[i]`` / ``x.strides[i]`` of a tensor:
        ``R.inspect.tensor_shape_i`` / ``tensor_stride_i``."""
        if isinstance(base, TensorFields) and base.field in INDEXED_PROPERTIES and len(node.index) == 1:
            axis = self.to_expr(node.index[0], self.eval(node.index[0]))
            return self._inspect(node.index[0], INDEXED_PROPERTIES[base.field], base.tensor, axis)
        if isinstance(base, rx.Expr):
            if len(node.index) != 1:
                self.error(node, "a tuple takes one index")
            return self._tuple_get_item(node.value, base, node.index[0])
        return super().subscript(node, base)

    @handles("R.TupleGetItem")
    def _tuple_get_item_call(self, node: Any) -> rx.TupleGetItem:
        """``R.TupleGetItem(t, i)``: the node's constructor, the same as ``t[i]``."""
        tuple_n, index_n = self.bind(node, Sig("R.TupleGetItem", ("tuple_value", "index"), 2))
        return self._tuple_get_item(tuple_n, self.eval(tuple_n), index_n)

    def _tuple_get_item(self, tuple_node: Any, value: Any, index_node: Any) -> rx.TupleGetItem:
        """Field ``index`` of a Relax tuple value (negative indices count from the end)."""
        base = self.to_expr(tuple_node, value)
        s = sinfo_of(base)
        if not isinstance(s, rx.TupleStructInfo):
            self.error(tuple_node, f"only tuples can be indexed in Relax, got {format_sinfo(s)}")
        idx = self.expect_int(index_node, self.eval(index_node), "a tuple index")
        if not -len(s.fields) <= idx < len(s.fields):
            self.error(index_node, f"index {idx} is out of range for a tuple of {len(s.fields)}")
        idx %= len(s.fields)
        return rx.TupleGetItem(base, idx, struct_info=s.fields[idx])


    def _inspect(self, node: Any, op: str, *args: rx.Expr) -> rx.Call:
        """A call of the inspect op ``op``; an OpError is reported at ``node``."""
        try:
            return make_call(op, args)
        except OpError as err:
            self.error(node, err.message)


@dataclasses.dataclass(frozen=True)
class TensorFields:
    """``x.dtype``, ``x.shape`` or ``x.strides`` of a tensor: not a value, only read further
    (``x.dtype.bits``, ``x.shape[i]``), as TVM's DLTensor proxies."""

    tensor: rx.Expr
    field: str

    def __str__(self) -> str:
        return f"{getattr(self.tensor, 'name_hint', 'the tensor')}.{self.field}"



def _prim_value(value: tir.PrimExpr) -> rx.PrimValue:
    """``R.prim_value(v)``."""
    return rx.PrimValue(value, struct_info=rx.PrimStructInfo(value.dtype, value))
