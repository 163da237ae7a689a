"""Test helpers: build a one-op Relax function, legalize it and run the result with numpy
(``tvmlite.te.evaluate_prim_func`` for each ``R.call_tir``)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tvmlite import relax
from tvmlite.ir import relax as rx
from tvmlite.ir import tir
from tvmlite.ir.dtype import from_numpy_dtype
from tvmlite.ir.module import IRModule
from tvmlite.passes import LegalizeOps
from tvmlite.te import evaluate_prim_func
from tvmlite.te.evaluate import eval_expr


def build(make: Callable[..., rx.Expr], params: Sequence[rx.Var]) -> IRModule:
    """``main(params)`` returning ``make(*params)``, bound in a dataflow block."""
    bb = relax.BlockBuilder()
    with bb.function("main", list(params)):
        with bb.dataflow():
            out = bb.emit_output(make(*params))
        bb.emit_func_output(out)
    return bb.get()


def params_for(arrays: Sequence[np.ndarray], symbolic: dict[int, dict[int, str]] | None = None) -> list[rx.Var]:
    """One parameter per array (``x0, x1...``); ``symbolic[i][d] = "n"`` makes dim d of input i symbolic."""
    names: dict[str, tir.Var] = {}
    out = []
    for i, a in enumerate(arrays):
        dims: list[Any] = list(a.shape)
        for d, name in (symbolic or {}).get(i, {}).items():
            dims[d] = names.setdefault(name, tir.Var(name, "int64"))
        out.append(relax.Var(f"x{i}", relax.TensorStructInfo(dims, from_numpy_dtype(a.dtype))))
    return out


def run(mod: IRModule, args: Sequence[np.ndarray], func: str = "main") -> Any:
    """Interpret a legalized Relax function: call_tir through the numpy evaluator."""
    f = mod[func]
    env: dict[int, Any] = {}
    sizes: dict[int, Any] = {}
    for p, a in zip(f.params, args):
        env[id(p)] = a
        sinfo = p.struct_info
        for dim, n in zip(sinfo.shape, np.shape(a)):
            if isinstance(dim, tir.Var):
                sizes[id(dim)] = np.array(n, dtype=np.int64)

    def value(e: rx.Expr) -> Any:
        if isinstance(e, rx.Var):
            return env[id(e)]
        if isinstance(e, rx.Constant):
            return e.data
        if isinstance(e, rx.Tuple):
            return tuple(value(x) for x in e.fields)
        if isinstance(e, rx.TupleGetItem):
            return value(e.tuple_value)[e.index]
        if isinstance(e, rx.PrimValue):
            return eval_expr(e.value, sizes, None)
        if isinstance(e, rx.ShapeExpr):
            return tuple(int(eval_expr(v, sizes, None)) for v in e.values)
        if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name == "relax.call_tir":
            prim = mod[e.args[0].name_hint]
            inputs = [value(x) for x in e.args[1].fields]
            scalars = [int(eval_expr(v, sizes, None)) for v in e.args[2].values] if len(e.args) > 2 else []
            out = e.sinfo_args[0]
            shapes = [tuple(int(eval_expr(d, sizes, None)) for d in t.shape)
                      for t in (out.fields if isinstance(out, rx.TupleStructInfo) else (out,))]
            outs = evaluate_prim_func(prim, inputs, scalars, shapes)
            return outs[0] if isinstance(e.struct_info, rx.TensorStructInfo) else tuple(outs)
        if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name == "relax.tensor_to_shape":
            return tuple(int(v) for v in np.asarray(value(e.args[0])).reshape(-1))
        if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name == "relax.shape_of":
            return tuple(np.shape(value(e.args[0])))  # R.size's legalization reads the shape
        if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name == "relax.shape_to_tensor":
            return np.array(value(e.args[0]), dtype="int64").reshape(-1)
        if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name == "relax.call_dps_packed":
            # the collectives (R.ccl.*) write into their output, as TVM's runtime.disco functions
            from tvmlite.backend.runtime import get_func
            out = e.sinfo_args[0]
            shape = tuple(int(eval_expr(d, sizes, None)) for d in out.shape)
            dest = np.empty(shape, out.dtype)
            get_func(e.args[0].global_symbol)(*(value(x) for x in e.args[1].fields), dest)
            return dest
        if isinstance(e, rx.Call) and isinstance(e.op, rx.Op) and e.op.name == "relax.call_pure_packed":
            # the data-dependent ops (nonzero, unique) run in the runtime's functions, as TVM's
            from tvmlite.backend.runtime import get_func
            out = get_func(e.args[0].global_symbol)(*(value(x) for x in e.args[1:]))
            return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()
        raise NotImplementedError(f"cannot run {type(e).__name__} {e}")

    for block in f.body.blocks:
        for b in block.bindings:
            env[id(b.var)] = value(b.value)
            if isinstance(b, rx.MatchCast) and isinstance(b.struct_info, rx.ShapeStructInfo):
                for dim, n in zip(b.struct_info.values or (), env[id(b.var)]):  # names a computed shape's dims
                    if isinstance(dim, tir.Var):
                        sizes[id(dim)] = np.array(n, dtype=np.int64)
    return value(f.body.body)


def legalize_and_run(make: Callable[..., rx.Expr], arrays: Sequence[np.ndarray],
                     symbolic: dict[int, dict[int, str]] | None = None) -> tuple[IRModule, Any]:
    """The legalized module of ``make`` over parameters like ``arrays``, and its result on them."""
    mod = LegalizeOps()(build(make, params_for(arrays, symbolic)))
    return mod, run(mod, arrays)


def call_tirs(mod: IRModule) -> list[rx.Call]:
    """The call_tir calls of ``main``."""
    out = []
    for block in mod["main"].body.blocks:
        for b in block.bindings:
            v = b.value
            if isinstance(v, rx.Call) and isinstance(v.op, rx.Op) and v.op.name == "relax.call_tir":
                out.append(v)
    return out
