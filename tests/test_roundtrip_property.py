"""Property-based round trips of the parser and the printer (hypothesis).

1. Random well-formed Relax modules built as IR through the Python API (the way the parser
   builds them): they print, re-parse to a structurally equal module, print to the same text
   again, and keep every constant bit for bit through ``script(show_meta=True)``.
2. Random TIR prim_funcs (every loop kind, blocks, lets, asserts, while, random PrimExpr trees
   with typed literals of every dtype): the same properties.
3. Hand-written text variations (unannotated bindings, multi-line parameters, any class name,
   omitted ``T.reads``/``T.writes``, ``range`` vs ``T.serial``, nested loops instead of
   ``T.grid``): printing the parsed text is a fixed point after one normalisation.

Constructs the printer gets wrong are left out of the generators with a comment
``# printer bug: ...`` so they can be re-enabled once the printer is fixed.
"""
from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.module import GlobalVar, IRModule
from tvmlite.ir.node import Map, Node, node_fields
from tvmlite.ir.op import OpError, get_op_def, list_ops, make_call
from tvmlite.ir.struct_info import sinfo_of, unify_sinfo
from tvmlite.ir.structural import assert_structural_equal, structural_equal
from tvmlite.ir.well_formed import well_formed_errors
from tvmlite.script.parser import from_source
from tvmlite.script.parser.sinfo import collect_vars, derive_call_ret, erase_to, incompatible
from tvmlite.script.printer import script

# Example counts: the whole file runs in well under a minute.
RELAX_EXAMPLES = 60
TIR_EXAMPLES = 80
TEXT_EXAMPLES = 40

SETTINGS = dict(deadline=None, derandomize=False, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


# ====================================================================== the properties
def _walk(obj: Any, out: list, seen: set) -> None:
    """Every node below ``obj`` (depth first, fields in declared order)."""
    if isinstance(obj, Node):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        out.append(obj)
        for name in node_fields(type(obj)):
            _walk(getattr(obj, name), out, seen)
    elif isinstance(obj, IRModule):
        for _, f in sorted(obj.functions_items(), key=lambda kv: kv[0].name_hint):
            _walk(f, out, seen)
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            _walk(x, out, seen)
    elif isinstance(obj, Map):
        for k, v in obj.items_tuple():
            _walk(k, out, seen)
            _walk(v, out, seen)


def constants(obj: Any) -> list[rx.Constant]:
    out: list = []
    _walk(obj, out, set())
    return [n for n in out if isinstance(n, rx.Constant)]


def assert_round_trip(mod: Any) -> str:
    """print -> parse is structurally equal, print is a fixed point, constants survive
    ``show_meta=True`` bit for bit. Returns the printed text."""
    has_meta = any(c.data.ndim > 0 or c.data.dtype.kind == "u" for c in constants(mod))
    text = script(mod, show_meta=has_meta)
    assert not text.startswith("# tvmlite could not print"), text
    parsed = from_source(text)
    assert_structural_equal(parsed, mod)
    assert structural_equal(parsed, mod)
    again = script(parsed, show_meta=has_meta)
    assert again == text, _diff(text, again)
    # Constants, bit for bit, through the metadata section.
    meta_text = script(mod, show_meta=True)
    meta_parsed = from_source(meta_text)
    before, after = constants(mod), constants(meta_parsed)
    assert len(before) == len(after)
    for a, b in zip(before, after):
        assert a.data.dtype == b.data.dtype and a.data.shape == b.data.shape
        assert np.ascontiguousarray(a.data).tobytes() == np.ascontiguousarray(b.data).tobytes(), \
            (a.data, b.data)
    return text


def _diff(a: str, b: str) -> str:
    import difflib

    return "printed text is not a fixed point:\n" + "\n".join(
        difflib.unified_diff(a.splitlines(), b.splitlines(), "first", "second", lineterm=""))


# ====================================================================== Relax generator
RELAX_DTYPES = ("float32", "float16", "float64", "int32", "int64", "bool")
ALL_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64")
NAMES = ("x", "y", "z", "lv", "lv1", "lv_1", "gv", "t", "r", "out", "a-b", "x0", "n", "cls", "R",
         "metadata")
FLOAT_SPECIALS = (0.0, -0.0, 1.0, -1.5, 0.1, 1 / 3, 1e-8, 1e300, -1e-300, 5e-324, 65504.0,
                  3.4028234663852886e38, math.inf, -math.inf, math.nan, -math.nan)


def i64(v: int) -> tir.IntImm:
    return tir.IntImm("int64", v)


def int_range(dtype: str) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


class Gen:
    """Draws from hypothesis' ``data`` with small helpers."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def draw(self, strategy: Any) -> Any:
        return self.data.draw(strategy)

    def choice(self, seq: Any) -> Any:
        return self.draw(st.sampled_from(list(seq)))

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) < percent

    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def scalar(self, dtype: str) -> Any:
        """A Python value of ``dtype``: extremes, specials and random values."""
        if dtype == "bool":
            return self.draw(st.booleans())
        if dtype.startswith(("int", "uint")):
            lo, hi = int_range(dtype)
            return self.draw(st.one_of(st.sampled_from([lo, hi, 0, 1, -1 if lo < 0 else 2]),
                                       st.integers(lo, hi)))
        bits = int(dtype[5:])
        return self.draw(st.one_of(st.sampled_from(FLOAT_SPECIALS),
                                   st.floats(width=bits, allow_nan=True, allow_infinity=True)))


class FuncState:
    """What a Relax function being built can refer to."""

    def __init__(self) -> None:
        self.visible: list[rx.Var] = []
        self.sym: list[tir.Var] = []  # symbolic variables defined so far (params, match_cast)
        self.pure = True


class RelaxGen(Gen):
    """Random Relax modules, built the way the parser builds them."""

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        self.relax_funcs: list[tuple[GlobalVar, rx.Function]] = []
        self.prim_gvars: list[GlobalVar] = []
        self.counter = 0

    # ------------------------------------------------------------------ names, struct info
    def name(self) -> str:
        return self.choice(NAMES) if self.chance(50) else f"v{self.int(0, 30)}"

    def dim(self, f: FuncState, allow_sym: bool = True) -> tir.PrimExpr:
        if allow_sym and f.sym and self.chance(30):
            return self.choice(f.sym)
        return i64(self.int(1, 4))

    def tensor_sinfo(self, f: FuncState, ndim: int | None = None, dtype: str | None = None
                     ) -> rx.TensorStructInfo:
        ndim = self.int(0, 3) if ndim is None else ndim
        dtype = dtype or self.choice(RELAX_DTYPES + ("float32",) * 4)
        return rx.TensorStructInfo(tuple(self.dim(f) for _ in range(ndim)), dtype)

    def param_sinfo(self, f: FuncState, sym_pool: list[tir.Var]) -> rx.StructInfo:
        ndim = self.int(0, 3)
        dtype = self.choice(RELAX_DTYPES + ("float32",) * 4)
        kind = self.int(0, 19)
        if kind == 0:
            return rx.TensorStructInfo(None, dtype, ndim)
        if kind == 1:
            return rx.TensorStructInfo(None, self.choice(("void", dtype)), -1)
        dims = []
        for _ in range(ndim):
            if self.chance(30):
                v = self.choice(sym_pool)
                dims.append(v)
                if not any(v is s for s in f.sym):
                    f.sym.append(v)
            else:
                dims.append(i64(self.int(1, 4)))
        return rx.TensorStructInfo(tuple(dims), dtype)

    def new_var(self, sinfo: rx.StructInfo, dataflow: bool) -> rx.Var:
        return (rx.DataflowVar if dataflow else rx.Var)(self.name(), sinfo)

    # ------------------------------------------------------------------ values
    def tensors(self, f: FuncState, pred: Any = None) -> list[rx.Var]:
        return [v for v in f.visible if isinstance(v.struct_info, rx.TensorStructInfo)
                and (pred is None or pred(v.struct_info))]

    def rank0_const(self, dtype: str | None = None) -> rx.Constant:
        dtype = dtype or self.choice(ALL_DTYPES)
        value = self.scalar(dtype)
        if isinstance(value, float) and math.isnan(value):
            # A rank-0 constant prints inline (R.const("nan", ...)), as TVM prints it: only the
            # sign of a NaN survives, not its payload (rank>=1 constants keep every bit).
            value = math.copysign(math.nan, math.copysign(1.0, value))
        return rx.Constant(np.array(value, dtype=dtype))

    def tensor_const(self) -> rx.Constant:
        dtype = self.choice(ALL_DTYPES)
        shape = tuple(self.int(1, 3) for _ in range(self.int(1, 3)))
        size = int(np.prod(shape))
        if dtype == "bool":
            arr = np.array(self.draw(st.lists(st.booleans(), min_size=size, max_size=size)),
                           dtype="bool")
        else:
            itemsize = np.dtype(dtype).itemsize
            raw = self.draw(st.binary(min_size=size * itemsize, max_size=size * itemsize))
            arr = np.frombuffer(raw, dtype=dtype).copy()
        return rx.Constant(arr.reshape(shape))

    def const(self) -> rx.Constant:
        return self.tensor_const() if self.chance(30) else self.rank0_const()

    def operand(self, f: FuncState, like: rx.TensorStructInfo | None = None) -> rx.Expr | None:
        """A tensor operand: a visible variable (preferably of ``like``'s dtype) or a constant."""
        if like is not None and self.chance(15) and like.dtype in ALL_DTYPES:
            return self.rank0_const(like.dtype)
        cands = self.tensors(f)
        if like is not None and self.chance(80):
            same = [v for v in cands if v.struct_info.dtype == like.dtype]
            cands = same or cands
        if not cands:
            return None
        return self.choice(cands)

    def prim_value(self, dtype: str = "int64", value: Any = None) -> rx.PrimValue:
        if value is None:
            value = self.int(-2, 4) if dtype.startswith("int") else self.choice((0.5, -1.0, 2.0))
        e = tir.FloatImm(dtype, value) if dtype.startswith("float") else tir.IntImm(dtype, value)
        return rx.PrimValue(e, struct_info=rx.PrimStructInfo(dtype, e))

    def shape_expr(self, f: FuncState, x: rx.Expr | None = None, op: str = "") -> rx.Expr:
        """A shape argument: a Shape variable, the reshaped input's dims or random dims."""
        shape_vars = [v for v in f.visible if isinstance(v.struct_info, rx.ShapeStructInfo)]
        if shape_vars and self.chance(25):
            return self.choice(shape_vars)
        xs = getattr(x, "struct_info", None)
        if isinstance(xs, rx.TensorStructInfo) and xs.shape is not None and self.chance(60):
            dims = list(xs.shape)
            pick = self.int(0, 3)
            if pick == 0:
                dims = dims[::-1]
            elif pick == 1 and op == "relax.reshape":
                dims = [i64(-1)]
            elif pick == 2:
                dims = [i64(1)] + dims
        else:
            dims = [self.dim(f) for _ in range(self.int(0, 3))]
        values = tuple(dims)
        return rx.ShapeExpr(values, struct_info=rx.ShapeStructInfo(values, len(values)))

    def tuple_of(self, fields: list[rx.Expr]) -> rx.Tuple:
        return rx.Tuple(tuple(fields), struct_info=rx.TupleStructInfo(tuple(sinfo_of(x) for x in fields)))

    # ------------------------------------------------------------------ op calls
    ATTR_POOLS: dict[str, tuple] = {
        "axis": (None, 0, 1, -1, 2, (0,), (1,), (0, 1), (-1,), (1, 0)),
        "keepdims": (False, True),
        "dtype": ALL_DTYPES + ("void",),
        "out_dtype": ("void", "float32", "float16", "int32"),
        "axes": (None, (0,), (1, 0), (0, 1), (2, 0, 1), (-1,), (0, 1, 2)),
        "indices_or_sections": (1, 2, 3, (1,), (1, 2), (0, 5)),
        "mode": ("fast", "clip", "wrap", "nan"),
        "pad_value": (None, 0, 1.5),
        "axis_separators": ((),),
        "input_axis_separators": ((),),
        "epsilon": (1e-5, 0.1, 1e-300, 3.0),
        "alpha": (0.01, 0.2, 1.0),
        "rate": (0.5, 0.1, 0.0),
        "momentum": (0.1, 0.9),
        "center": (True, False), "scale": (True, False), "training": (True, False),
        "ceil_mode": (False, True), "count_include_pad": (False, True),
        "assume_inbound": (False, True),
        "pool_size": ((1, 1), (2, 2), (1, 2), 2),
        "strides": ((1, 1), (2, 2), 1),
        "dilation": ((1, 1), (2, 1)),
        "padding": ((0, 0, 0, 0), (1, 1, 1, 1), (1, 0), 1),
        "groups": (1, 2),
        "data_layout": ("NCHW", "NHWC"), "layout": ("NCHW", "NHWC"),
        "kernel_layout": ("OIHW", "HWIO"), "out_layout": (None, "NCHW", "NHWC"),
        "output_size": (None, 1, (2, 2), (1, 3)),
    }
    # The call family is built by hand (call_tir & co.); print/assert_op only in impure functions.
    SKIP_OPS = frozenset({"relax.call_tir", "relax.call_tir_inplace", "relax.call_dps_packed",
                          "relax.call_pure_packed", "relax.call_builtin_with_ctx"})

    def index_map(self, ndim: int) -> Any:
        from tvmlite.ir.arith import IndexMap

        if ndim == 2 and self.chance(50):
            return IndexMap.from_func(lambda i, j: (j, i))
        if ndim == 1:
            return IndexMap.from_func(lambda i: (i // 2, i % 2))
        names = ", ".join(f"i{k}" for k in range(ndim))
        order = list(range(ndim))[::-1]
        fn = eval(f"lambda {names}: ({''.join(f'i{k}, ' for k in order)})")  # noqa: S307
        return IndexMap.from_func(fn)

    def op_call(self, f: FuncState, in_df: bool) -> rx.Call | None:
        ops = [d for d in list_ops() if d.name not in self.SKIP_OPS and (d.pure or not f.pure)]
        if in_df:
            ops = [d for d in ops if d.pure]
        opdef = self.choice(ops)
        args: list[rx.Expr] = []
        first = None
        for k, inp in enumerate(opdef.inputs):
            if k >= len(opdef.inputs) - opdef.num_optional and self.chance(50):
                break
            a = self.op_arg(f, opdef.name, inp, first)
            if a is None:
                return None
            if opdef.variadic and k == len(opdef.inputs) - 1:
                args.extend(a)
                break
            args.append(a)
            if first is None and isinstance(getattr(a, "struct_info", None), rx.TensorStructInfo):
                first = a
        attrs: dict[str, Any] = {}
        for field in opdef.attrs:
            if field.name == "index_map":
                xs = args[0].struct_info
                attrs["index_map"] = self.index_map(xs.ndim if xs.ndim > 0 else 1)
            elif field.name == "inplace_indices":
                return None
            elif self.chance(50) or repr(field.default) == "REQUIRED":
                attrs[field.name] = self.choice(self.ATTR_POOLS[field.name])
        try:
            return make_call(opdef.name, args, attrs)
        except OpError:
            return None

    def op_arg(self, f: FuncState, op: str, inp: str, first: rx.Expr | None) -> Any:
        like = getattr(first, "struct_info", None)
        if inp in ("shape", "new_shape"):
            return self.shape_expr(f, first, op)
        if inp == "tensors":
            x = self.operand(f)
            if x is None:
                return None
            rest = [self.operand(f, sinfo_of(x)) for _ in range(self.int(0, 2))]
            return self.tuple_of([x] + [r for r in rest if r is not None])
        if op == "relax.clip" and inp in ("min", "max"):
            return self.prim_value(self.choice(("int64", "float32")))
        if op == "relax.arange":
            return self.prim_value(self.choice(("int64", "float32")),
                                   {"start": 0, "end": self.int(1, 6), "step": 1}[inp]
                                   if self.chance(70) else None)
        if op == "relax.strided_slice":
            if inp == "x":
                return self.operand(f)
            n = self.int(1, 2)
            vals = {"axes": [0, 1][:n], "begin": [self.int(-1, 1) for _ in range(n)],
                    "end": [self.int(1, 4) for _ in range(n)], "strides": [self.int(1, 2) for _ in range(n)]}
            return self.tuple_of([self.prim_value("int64", v) for v in vals[inp]])
        if inp == "fill_value":
            return self.rank0_const(like.dtype if isinstance(like, rx.TensorStructInfo)
                                    and like.dtype != "void" and self.chance(70) else None)
        if inp == "indices":
            ints = self.tensors(f, lambda s: s.dtype in ("int32", "int64"))
            if ints and self.chance(70):
                return self.choice(ints)
            return rx.Constant(np.array([0, 1][: self.int(1, 2)], dtype="int64"))
        if inp == "condition":
            bools = self.tensors(f, lambda s: s.dtype == "bool")
            return self.choice(bools) if bools else self.rank0_const("bool")
        if inp == "format":
            return rx.StringImm(self.choice(("x = {}", "", "tab\tquote\"")), struct_info=rx.ObjectStructInfo())
        if inp in ("values", "format_args"):
            return [v for v in (self.operand(f) for _ in range(self.int(0, 2))) if v is not None]
        return self.operand(f, like if isinstance(like, rx.TensorStructInfo) else None)

    # ------------------------------------------------------------------ bindings
    def value(self, f: FuncState, in_df: bool, depth: int) -> tuple[Any, rx.StructInfo] | None:
        """A binding's value and the struct info of its variable (None: skip this draw)."""
        kind = self.choice(("op",) * 8 + ("const", "const", "tuple", "item", "alias", "cast",
                                          "call_tir", "packed", "call", "call", "leaf", "if", "if"))
        if kind == "op":
            call = self.op_call(f, in_df)
            return None if call is None else (call, call.struct_info)
        if kind == "const":
            c = self.const()
            return c, c.struct_info
        if kind == "tuple":
            fields = [self.operand(f) if self.chance(80) else self.const() for _ in range(self.int(0, 3))]
            if any(x is None for x in fields):
                return None
            t = self.tuple_of(fields)
            return t, t.struct_info
        if kind == "item":
            tups = [v for v in f.visible if isinstance(v.struct_info, rx.TupleStructInfo) and v.struct_info.fields]
            if not tups:
                return None
            t = self.choice(tups)
            i = self.int(0, len(t.struct_info.fields) - 1)
            return rx.TupleGetItem(t, i, struct_info=t.struct_info.fields[i]), t.struct_info.fields[i]
        if kind == "alias":
            if not f.visible:
                return None
            v = self.choice(f.visible)
            return v, v.struct_info
        if kind == "cast":
            return self.match_cast(f)
        if kind == "call_tir":
            return self.call_tir(f)
        if kind == "packed":
            return self.packed(f)
        if kind == "call":
            return self.func_call(f)
        if kind == "leaf":
            pick = self.int(0, 3)
            if pick == 0:
                e = self.shape_expr(f)
            elif pick == 1:
                e = self.prim_value(self.choice(("int64", "int32", "float32", "bool")) if False else "int64")
            elif pick == 2:
                e = rx.StringImm(self.choice(("hello", "a\nb", "")), struct_info=rx.ObjectStructInfo())
            else:
                e = rx.DataTypeImm(self.choice(ALL_DTYPES), struct_info=rx.ObjectStructInfo())
            return e, sinfo_of(e)
        if kind == "if" and not in_df and depth < 2:
            return self.if_else(f, depth)
        return None

    def match_cast(self, f: FuncState) -> tuple[Any, rx.StructInfo] | None:
        xs = self.tensors(f)
        if not xs:
            return None
        x = self.choice(xs)
        s = x.struct_info
        pick = self.int(0, 3)
        if pick == 0 and s.shape is not None and s.shape:
            # A new symbolic variable for one dimension.
            k = self.int(0, len(s.shape) - 1)
            new = tir.Var(self.choice(("k", "d", "n", "m1")), "int64")
            target: rx.StructInfo = rx.TensorStructInfo(s.shape[:k] + (new,) + s.shape[k + 1:], s.dtype)
            f.sym.append(new)
        elif pick == 1:
            target = rx.TensorStructInfo(None, s.dtype, s.ndim)
        elif pick == 2 and s.shape is None and s.ndim >= 0:
            new_dims = tuple(tir.Var(f"s{j}", "int64") for j in range(s.ndim))
            target = rx.TensorStructInfo(new_dims, s.dtype if s.dtype != "void" else "float32")
            f.sym.extend(new_dims)
        else:
            target = s
        return _MatchCastValue(x, target), target

    def call_tir(self, f: FuncState) -> tuple[Any, rx.StructInfo] | None:
        if not self.prim_gvars:
            return None
        gv = self.choice(self.prim_gvars)
        fields = [self.operand(f) for _ in range(self.int(1, 3))]
        if any(x is None for x in fields):
            return None
        args = [gv, self.tuple_of(fields)]
        if f.sym and self.chance(30):
            vals = tuple(self.choice(f.sym) for _ in range(self.int(1, 2)))
            args.append(rx.ShapeExpr(vals, struct_info=rx.ShapeStructInfo(vals, len(vals))))
        if self.chance(20) and isinstance(fields[0].struct_info, rx.TensorStructInfo):
            out: rx.StructInfo = fields[0].struct_info
            op, attrs = "relax.call_tir_inplace", {"inplace_indices": (0,)}
        else:
            outs = [self.tensor_sinfo(f) for _ in range(self.int(1, 2))]
            out = outs[0] if len(outs) == 1 else rx.TupleStructInfo(tuple(outs))
            op, attrs = "relax.call_tir", {}
        call = make_call(op, args, attrs, sinfo_args=(out,))
        return call, call.struct_info

    def packed(self, f: FuncState) -> tuple[Any, rx.StructInfo] | None:
        ext = rx.ExternFunc(self.choice(("my.packed", "vm.builtin.x")),
                            struct_info=rx.FuncStructInfo(None, rx.ObjectStructInfo(), False))
        args = [self.operand(f) for _ in range(self.int(0, 2))]
        if any(a is None for a in args):
            return None
        out = self.tensor_sinfo(f)
        pick = self.int(0, 2)
        if pick == 0:
            call = make_call("relax.call_dps_packed", (ext, self.tuple_of(args)), sinfo_args=(out,))
        elif pick == 1:
            call = make_call("relax.call_pure_packed", (ext, *args), sinfo_args=(out,))
        else:
            call = rx.Call(ext, tuple(args), Map(), (out,), struct_info=out)
        return call, call.struct_info

    def func_call(self, f: FuncState) -> tuple[Any, rx.StructInfo] | None:
        if not self.relax_funcs:
            return None
        gv, callee = self.choice(self.relax_funcs)
        finfo = callee.struct_info
        args = []
        for p in finfo.params:
            cands = [v for v in f.visible if not incompatible(p, v.struct_info)]
            if not cands:
                return None
            args.append(self.choice(cands))
        ret = derive_call_ret(finfo, [a.struct_info for a in args])
        return rx.Call(gv, tuple(args), struct_info=ret), ret

    def if_else(self, f: FuncState, depth: int) -> tuple[Any, rx.StructInfo] | None:
        conds: list[rx.Expr] = self.tensors(f, lambda s: s.dtype == "bool" and s.ndim == 0)
        cond = self.choice(conds) if conds and self.chance(80) else self.rank0_const("bool")
        branches = []
        for _ in range(2):
            saved = (list(f.visible), list(f.sym))
            bindings = self.bindings(f, False, depth + 1, self.int(0, 2))
            body = self.leaf(f)
            f.visible, f.sym = saved
            if body is None:
                return None
            blocks = (rx.BindingBlock(tuple(bindings)),) if bindings else ()
            branches.append(rx.SeqExpr(blocks, body, struct_info=sinfo_of(body)))
        sinfo = unify_sinfo(sinfo_of(branches[0]), sinfo_of(branches[1]))
        return rx.If(cond, branches[0], branches[1], struct_info=sinfo), sinfo

    def leaf(self, f: FuncState) -> rx.Expr | None:
        pick = self.int(0, 9)
        if pick == 0:
            return self.rank0_const()
        if pick == 1 and len(f.visible) >= 1:
            return self.tuple_of([self.choice(f.visible) for _ in range(self.int(0, 2))])
        return self.choice(f.visible) if f.visible else None

    def bindings(self, f: FuncState, in_df: bool, depth: int, count: int) -> list[rx.Binding]:
        out: list[rx.Binding] = []
        for _ in range(count):
            got = self.value(f, in_df, depth)
            if got is None:
                continue
            value, sinfo = got
            output = in_df and self.chance(35)
            var = self.new_var(sinfo, in_df and not output)
            if isinstance(value, _MatchCastValue):
                out.append(rx.MatchCast(var, value.value, value.sinfo))
            else:
                out.append(rx.VarBinding(var, value))
            f.visible.append(var)
        return out

    # ------------------------------------------------------------------ functions, modules
    def function(self, name: str, private: bool, pure: bool) -> rx.Function:
        f = FuncState()
        f.pure = pure
        sym_pool = [tir.Var(n, "int64") for n in ("n", "m", "k")]
        params = [rx.Var(self.name(), self.param_sinfo(f, sym_pool)) for _ in range(self.int(1, 4))]
        param_vars = list(f.sym)
        f.visible = list(params)
        blocks: list[rx.BindingBlock] = []
        for _ in range(self.int(0, 3)):
            if self.chance(50):
                bindings = self.bindings(f, True, 0, self.int(0, 4))
                f.visible = [v for v in f.visible if not isinstance(v, rx.DataflowVar)]
                if bindings:
                    blocks.append(rx.DataflowBlock(tuple(bindings)))
            else:
                bindings = self.bindings(f, False, 0, self.int(0, 4))
                if bindings and blocks and type(blocks[-1]) is rx.BindingBlock:
                    # Consecutive binding blocks print (and parse) as one.
                    blocks[-1] = rx.BindingBlock(blocks[-1].bindings + tuple(bindings))
                elif bindings:
                    blocks.append(rx.BindingBlock(tuple(bindings)))
        body = self.leaf(f)
        assert body is not None  # params are visible
        ret = erase_to(sinfo_of(body), param_vars)
        if self.chance(15):
            ret = rx.ObjectStructInfo()
        attrs: dict[str, Any] = {}
        if self.chance(20):
            attrs["num_input"] = self.int(0, 2)
        if not private:
            attrs["global_symbol"] = name
        return rx.Function(tuple(params), rx.SeqExpr(tuple(blocks), body, struct_info=sinfo_of(body)),
                           ret, pure, Map(attrs))

    def module(self) -> IRModule:
        funcs: dict[GlobalVar, Any] = {}
        for i in range(self.int(0, 1)):
            gv = GlobalVar(f"prim{i}")
            funcs[gv] = simple_prim_func(gv.name_hint, self.chance(50))
            self.prim_gvars.append(gv)
        n = self.int(1, 3)
        names = ["helper", "f1", "main"][-n:]
        for name in names:
            gv = GlobalVar(name)
            func = self.function(name, private=name != "main" and self.chance(40), pure=self.chance(85))
            funcs[gv] = func
            self.relax_funcs.append((gv, func))
        return IRModule(funcs)


class _MatchCastValue:
    def __init__(self, value: rx.Expr, sinfo: rx.StructInfo) -> None:
        self.value = value
        self.sinfo = sinfo


def simple_prim_func(name: str, private: bool) -> tir.PrimFunc:
    """``B[i] = A[i] + A[i]`` over a (16,) float32 buffer pair, as the parser builds it."""
    bufs = []
    params = []
    for bname in ("A", "B"):
        data = tir.Var(bname, "handle", tir.PointerType("float32"))
        buf = tir.Buffer(bname, data, "float32", (tir.IntImm("int32", 16),))
        params.append(tir.Var(bname, "handle", tir.PointerType("float32")))
        bufs.append(buf)
    i = tir.Var("i", "int32")
    a, b = bufs
    body = tir.For(i, tir.IntImm("int32", 0), tir.IntImm("int32", 16), "serial",
                   tir.BufferStore(b, tir.Add(tir.BufferLoad(a, (i,)), tir.BufferLoad(a, (i,))), (i,)))
    attrs = {} if private else {"global_symbol": name}
    return tir.PrimFunc(tuple(params), body, None, Map(zip(params, bufs)), Map(attrs))


@settings(max_examples=RELAX_EXAMPLES, **SETTINGS)
@given(st.data())
def test_relax_module_round_trip(data):
    mod = RelaxGen(data).module()
    assert well_formed_errors(mod) == []
    assert_round_trip(mod)
