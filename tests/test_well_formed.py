"""Well-formedness of hand-built IR: a good module passes; each kind of mistake is reported once,
with its source location when the nodes carry spans."""
import numpy as np

from tvmlite.ir import relax as rx
from tvmlite.ir import tir, well_formed
from tvmlite.ir.arith import int64
from tvmlite.ir.module import GlobalVar, IRModule
from tvmlite.ir.node import Map, Span, replace
from tvmlite.ir.op import get_op, make_call
from tvmlite.ir.well_formed import well_formed_errors

n = tir.Var("n", "int64")


def T(*shape, dtype="float32"):
    return rx.TensorStructInfo(tuple(d if isinstance(d, tir.PrimExpr) else int64(d) for d in shape), dtype)


def span(line, col=9):
    return Span("f.py", line, col, line, col + 10)


# ---------------------------------------------------------------- a well-formed module
def prim_func_add(name="add"):
    """``C[i] = A[i] + B[i]`` over 128 elements, with a root block and a spatial block."""
    bufs = []
    params = []
    for b in "ABC":
        data = tir.Var(b, "handle", tir.PointerType("float32"))
        params.append(tir.Var(b, "handle", tir.PointerType("float32")))
        bufs.append(tir.Buffer(b, data, "float32", (int64(128),)))
    a, b, c = bufs
    i = tir.Var("i", "int64")
    vi = tir.Var("vi", "int64")
    body = tir.BufferStore(c, tir.Add(tir.BufferLoad(a, (vi,)), tir.BufferLoad(b, (vi,))), (vi,))
    region = lambda buf: tir.BufferRegion(buf, (tir.Range(vi, int64(1)),))  # noqa: E731
    block = tir.Block("C", (tir.IterVar(tir.Range(int64(0), int64(128)), vi),), (region(a), region(b)),
                      (region(c),), body)
    loop = tir.For(i, int64(0), int64(128), tir.ForKind.SERIAL, tir.BlockRealize((i,), tir.IntImm("bool", 1), block))
    root = tir.BlockRealize((), tir.IntImm("bool", 1), tir.Block("root", (), (), (), loop))
    return tir.PrimFunc(tuple(params), root, buffer_map=Map(zip(params, bufs)),
                        attrs=Map({"global_symbol": name}))


def relax_main(add_gv, *, body_var=None, df_out_kind=rx.Var):
    """``main(x: (n, 128))``: a dataflow block calling ``add`` through call_tir, then R.add."""
    x = rx.Var("x", T(n, 128))
    lv = rx.DataflowVar("lv", T(n, 128))
    gv = df_out_kind("gv", T(n, 128))
    # Built directly: make_call only takes Relax expressions, and the callee is a GlobalVar.
    call_tir = rx.Call(get_op("relax.call_tir"), (add_gv, rx.Tuple((x, x))), sinfo_args=(T(n, 128),),
                       struct_info=T(n, 128))
    bindings = (rx.VarBinding(lv, call_tir, span=span(5)),
                rx.VarBinding(gv, make_call("relax.add", (lv, x)), span=span(6)))
    block = rx.DataflowBlock(bindings)
    return rx.Function((x,), rx.SeqExpr((block,), body_var or gv), T(n, 128), attrs=Map({"global_symbol": "main"}))


def good_module():
    mod = IRModule()
    add_gv = mod.add("add", prim_func_add())
    mod.add("main", relax_main(add_gv))
    return mod


def test_good_module_is_well_formed():
    mod = good_module()
    assert well_formed_errors(mod) == []
    assert well_formed(mod)
    assert well_formed(mod["main"]) and well_formed(mod["add"])


# ---------------------------------------------------------------- Relax mistakes
def func_of(bindings, body, params, dataflow=False, ret=None):
    block = rx.DataflowBlock(tuple(bindings)) if dataflow else rx.BindingBlock(tuple(bindings))
    return rx.Function(tuple(params), rx.SeqExpr((block,), body), ret or rx.ObjectStructInfo())


def test_variable_used_before_definition_with_location():
    x = rx.Var("x", T(4))
    lv = rx.Var("lv", T(4))
    later = rx.Var("y", T(4))
    f = func_of([rx.VarBinding(lv, make_call("relax.add", (x, later)), span=span(12, 5)),
                 rx.VarBinding(later, make_call("relax.exp", (x,)), span=span(13, 5))], lv, [x])
    assert well_formed_errors(f) == ["f.py:12:5: variable y used before definition"]
    assert not well_formed(f)


def test_dataflow_variable_used_outside_its_block():
    x = rx.Var("x", T(4))
    lv = rx.DataflowVar("lv", T(4))
    block = rx.DataflowBlock((rx.VarBinding(lv, make_call("relax.exp", (x,))),))
    f = rx.Function((x,), rx.SeqExpr((block,), lv), T(4))
    assert well_formed_errors(f) == ["dataflow variable lv used outside its dataflow block"]


def test_dataflow_variable_defined_outside_dataflow_block():
    x = rx.Var("x", T(4))
    lv = rx.DataflowVar("lv", T(4))
    f = func_of([rx.VarBinding(lv, make_call("relax.exp", (x,)))], lv, [x])
    assert well_formed_errors(f) == ["dataflow variable lv defined outside a dataflow block (in binding lv)"]


def test_variable_defined_twice():
    x = rx.Var("x", T(4))
    y = rx.Var("y", T(4))
    f = func_of([rx.VarBinding(y, make_call("relax.exp", (x,))),
                 rx.VarBinding(y, make_call("relax.exp", (y,)), span=span(8))], y, [x])
    assert well_formed_errors(f) == ["f.py:8:9: variable y defined twice"]


def test_global_var_not_in_module_and_call_tir_target():
    mod = IRModule()
    mod.add("add", prim_func_add())
    mod.add("main", relax_main(GlobalVar("missing")))
    assert well_formed_errors(mod) == ["f.py:5:9: GlobalVar missing not in the module"]

    mod2 = IRModule()
    helper = rx.Function((rx.Var("a", T(4)),), rx.SeqExpr((), rx.Tuple(())), rx.TupleStructInfo(()))
    helper_gv = mod2.add("helper", helper)
    mod2.add("main", relax_main(helper_gv))
    assert well_formed_errors(mod2) == ["f.py:5:9: call_tir target helper is not a PrimFunc"]


def test_other_global_var_object_with_the_same_name():
    mod = IRModule()
    mod.add("add", prim_func_add())
    mod.add("main", relax_main(GlobalVar("add")))
    assert well_formed_errors(mod) == ["f.py:5:9: GlobalVar add is not the module's GlobalVar of that name"]


def test_impure_call_inside_dataflow_block():
    x = rx.Var("x", T(4))
    out = rx.DataflowVar("p", rx.TupleStructInfo(()))
    printed = make_call("relax.print", (rx.StringImm("x: {}"), x))
    f = func_of([rx.VarBinding(out, printed, span=span(3))], x, [x], dataflow=True)
    assert well_formed_errors(f) == ["f.py:3:9: impure call R.print inside a dataflow block"]
    packed = rx.Call(rx.ExternFunc("my.packed"), (x,), sinfo_args=(T(4),), struct_info=T(4))
    lv = rx.DataflowVar("lv", T(4))
    f2 = func_of([rx.VarBinding(lv, packed)], x, [x], dataflow=True)
    assert well_formed_errors(f2) == ["impure call inside a dataflow block (in binding lv)"]


def test_missing_struct_info():
    x = rx.Var("x", T(4))
    y = rx.Var("y")
    call = rx.Call(make_call("relax.exp", (x,)).op, (x,))
    f = func_of([rx.VarBinding(y, call)], y, [x])
    assert well_formed_errors(f) == ["call has no struct info (in binding y)", "variable y has no struct info (in binding y)"]
    assert well_formed(f, check_struct_info=False)


def test_symbolic_variable_must_be_defined():
    m = tir.Var("m", "int64")
    x = rx.Var("x", T(n, 4))
    y = rx.Var("y", T(m, 4))
    f = func_of([rx.VarBinding(y, make_call("relax.exp", (x,)))], y, [x])
    assert well_formed_errors(f) == ["symbolic variable m used before definition (in binding y)"]
    # match_cast defines new symbolic variables.
    z = rx.Var("z", T(m, 4))
    f2 = func_of([rx.MatchCast(z, x, T(m, 4))], z, [x])
    assert well_formed_errors(f2) == []


def test_if_branch_bindings_stay_in_their_branch():
    cond = rx.Var("c", rx.TensorStructInfo((), "bool"))
    x = rx.Var("x", T(4))
    inner = rx.Var("inner", T(4))
    branch = rx.SeqExpr((rx.BindingBlock((rx.VarBinding(inner, make_call("relax.exp", (x,))),)),), inner)
    other = rx.SeqExpr((), x)
    r = rx.Var("r", T(4))
    f = func_of([rx.VarBinding(r, rx.If(cond, branch, other, struct_info=T(4))),
                 rx.VarBinding(rx.Var("s", T(4)), make_call("relax.add", (r, inner)), span=span(9))],
                r, [cond, x])
    assert well_formed_errors(f) == ["f.py:9:9: variable inner used before definition"]


def test_nested_function_sees_outer_variables():
    x = rx.Var("x", T(4))
    a = rx.Var("a", T(4))
    inner = rx.Function((a,), rx.SeqExpr((), make_call("relax.add", (a, x))), T(4))
    fvar = rx.Var("inner", inner.struct_info)
    f = func_of([rx.VarBinding(fvar, inner)], x, [x])
    assert well_formed_errors(f) == []


def test_global_symbol_must_match_the_name_of_a_relax_function():
    # TVM checks Relax functions only: a PrimFunc may export another symbol (AnnotateTIROpPattern &co take it).
    mod = IRModule()
    mod.add("add", prim_func_add("other_name"))
    assert well_formed_errors(mod) == []
    x = rx.Var("x", T(4))
    mod.add("main", func_of([], x, [x]).with_attr("global_symbol", "entry"))
    assert well_formed_errors(mod) == ["function main has global_symbol 'entry', which differs from its name"]


def test_error_without_span_names_the_function():
    mod = IRModule()
    x = rx.Var("x", T(4))
    mod.add("main", func_of([], rx.Var("ghost", T(4)), [x]))
    assert well_formed_errors(mod) == ["variable ghost used before definition (in function main)"]


# ---------------------------------------------------------------- TIR mistakes
def test_tir_buffer_used_but_not_defined():
    func = prim_func_add()
    stray = tir.Buffer("D", tir.Var("D", "handle", tir.PointerType("float32")), "float32", (int64(128),))
    i = tir.Var("j", "int64")
    body = tir.SeqStmt((func.body, tir.For(i, int64(0), int64(128), tir.ForKind.SERIAL,
                                          tir.BufferStore(stray, tir.FloatImm("float32", 0.0), (i,)),
                                          span=span(20))))
    assert well_formed_errors(replace(func, body=body)) == ["f.py:20:9: TIR buffer D used but not defined"]


def test_block_iter_var_used_outside_its_block():
    func = prim_func_add()
    root_block = func.body.block
    loop = root_block.body
    vi = loop.body.block.iter_vars[0].var
    c = func.buffer_map[func.params[2]]
    leak = tir.BufferStore(c, tir.FloatImm("float32", 0.0), (vi,), span=span(30))
    body = replace(func.body, block=replace(root_block, body=tir.SeqStmt((loop, leak))))
    assert well_formed_errors(replace(func, body=body)) == ["f.py:30:9: block iter var vi used outside its block"]


def test_tir_variable_used_before_definition_and_defined_twice():
    func = prim_func_add()
    a = func.buffer_map[func.params[0]]
    k = tir.Var("k", "int64")
    undefined = tir.Evaluate(tir.BufferLoad(a, (k,)), span=span(40))
    i = tir.Var("i", "int64")
    twice = tir.For(i, int64(0), int64(2), tir.ForKind.SERIAL,
                    tir.For(i, int64(0), int64(2), tir.ForKind.SERIAL, tir.Evaluate(i)), span=span(41))
    errors = well_formed_errors(replace(func, body=tir.SeqStmt((undefined, twice))))
    assert errors == ["f.py:40:9: TIR variable k used before definition", "f.py:41:9: TIR variable i defined twice"]


def test_tir_scalars_allocations_and_lets():
    x = tir.Var("x", "int32")
    buf_var = tir.Var("buf", "handle", tir.PointerType("float32"))
    buf = tir.Buffer("buf", buf_var, "float32", (int64(4),))
    y = tir.Var("y", "int32")
    body = tir.LetStmt(y, tir.Add(x, tir.IntImm("int32", 1)),
                       tir.Allocate(buf_var, "float32", (int64(4),), tir.IntImm("bool", 1),
                                    tir.DeclBuffer(buf, tir.BufferStore(buf, tir.FloatImm("float32", 1.0),
                                                                        (int64(0),)))))
    assert well_formed_errors(tir.PrimFunc((x,), body)) == []


def test_constants_and_shapes_are_fine():
    x = rx.Var("x", T(n, 4))
    c = rx.Var("c", T(2))
    s = rx.Var("s", rx.ShapeStructInfo((n, int64(4)), 2))
    f = func_of([rx.VarBinding(c, rx.Constant(np.zeros(2, "float32"))), rx.VarBinding(s, rx.ShapeExpr((n, int64(4))))],
                s, [x])
    assert well_formed_errors(f) == []


def test_tir_intrinsic_calls_are_well_formed():
    from tvmlite.script import from_source

    func = from_source('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    A[0] = T.exp(A[1])\n')
    assert well_formed_errors(func) == []


def test_mixed_operand_dtypes_and_a_scalar_stored_into_lanes():
    func = prim_func_add()
    a = func.buffer_map[func.params[0]]
    i = tir.Var("i", "int32")
    mixed = tir.For(i, tir.IntImm("int32", 0), tir.IntImm("int32", 4), tir.ForKind.SERIAL,
                    tir.BufferStore(a, tir.FloatImm("float32", 1.0), (tir.Add(i, int64(1)),)), span=span(50))
    lanes = tir.BufferStore(a, tir.FloatImm("float32", 0.0), (tir.Ramp(int64(0), int64(1), 4),), span=span(51))
    errors = well_formed_errors(replace(func, body=tir.SeqStmt((mixed, lanes))))
    assert errors == ["f.py:50:9: Add of int32 and int64 operands",
                      "f.py:51:9: a store into 4 lanes of A takes a value of float32"]
