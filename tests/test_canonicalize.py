"""CanonicalizeBindings: trivial bindings (aliases, fields of known tuples, casts to the struct
info a value already has) disappear and their uses name the first variable; dataflow block
outputs stay correct; symbolic variables whose values match_casts determine are replaced."""
import pytest

from tvmlite import passes as P
from tvmlite.ir import IRModule
from tvmlite.ir import relax as rx
from tvmlite.passes.canonicalize import canonicalize_bindings
from tvmlite.script import from_source
from tvmlite.testing import check_transform


def check(before: str, expected: str) -> IRModule:
    return check_transform(before, expected, P.CanonicalizeBindings())


def test_chain_of_aliases():
    check('''
@R.function
def main(x: R.Tensor):
    y = x
    z = y
    q = z
    return q
''', '''
@R.function
def main(x: R.Tensor):
    return x
''')


def test_uses_name_the_first_variable():
    check('''
@R.function
def main(x: R.Tensor, y: R.Tensor):
    w = y
    q = x
    z = R.add(w, q)
    return R.add(q, z)
''', '''
@R.function
def main(x: R.Tensor, y: R.Tensor):
    z = R.add(y, x)
    return R.add(x, z)
''')


def test_output_alias_of_a_dataflow_variable_takes_over_its_binding():
    before = '''
@R.function
def main(x: R.Tensor((2,), "float32")):
    with R.dataflow():
        lv = R.add(x, x)
        lv1 = lv
        gv = lv1
        R.output(gv)
    return gv
'''
    out = P.CanonicalizeBindings()(IRModule.from_expr(from_source(before)))
    assert out.script() == '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((2,), dtype="float32") = R.add(x, x)
            R.output(gv)
        return gv'''


def test_constant_chain_in_a_dataflow_block():
    check('''
@R.function
def main():
    with R.dataflow():
        y = R.const(1)
        z = y
        o = z
        n = o
        R.output(n)
    return n
''', '''
@R.function
def main():
    with R.dataflow():
        n = R.const(1)
        R.output(n)
    return n
''')


def test_block_of_aliases_of_a_parameter_vanishes():
    check('''
@R.function
def main(x: R.Tensor):
    with R.dataflow():
        y = x
        z = y
        n = z
        R.output(n)
    return n
''', '''
@R.function
def main(x: R.Tensor):
    return x
''')


def test_constants_are_used_directly():
    check('''
@R.function
def main(x: R.Tensor((), "int32")):
    c = R.const(1, "int32")
    y = R.add(x, c)
    return y
''', '''
@R.function
def main(x: R.Tensor((), "int32")):
    c = R.const(1, "int32")
    y = R.add(x, R.const(1, "int32"))
    return y
''')


def test_fields_of_known_tuples():
    check('''
@R.function
def main(x: R.Tensor, y: R.Tensor):
    t = (x, y)
    u = t
    w = u[0]
    q = t[1]
    z = R.add(w, q)
    return R.add(q, z)
''', '''
@R.function
def main(x: R.Tensor, y: R.Tensor):
    t = (x, y)
    z = R.add(x, y)
    return R.add(y, z)
''')


def test_constant_fields_of_known_tuples():
    check('''
@R.function
def main():
    tup = (R.const(0, "int64"), R.const(1, "int64"))
    x = tup[0]
    y = tup[1]
    return R.add(x, y)
''', '''
@R.function
def main():
    tup = (R.const(0, "int64"), R.const(1, "int64"))
    x = tup[0]
    y = tup[1]
    return R.add(R.const(0, "int64"), R.const(1, "int64"))
''')


def test_cast_to_the_struct_info_the_value_has_is_trivial():
    check('''
@R.function
def main(x: R.Tensor(("m", "n"), "float32")):
    m = T.int64()
    n = T.int64()
    y = x
    z = R.match_cast(x, R.Tensor((m, n), "float32"))
    w = z
    q = R.add(w, y)
    return R.add(q, w)
''', '''
@R.function
def main(x: R.Tensor(("m", "n"), "float32")):
    m = T.int64()
    n = T.int64()
    q = R.add(x, x)
    return R.add(q, x)
''')


def test_cast_defining_new_variables_stays():
    check('''
@R.function
def main(x: R.Tensor(ndim=2)):
    y = x
    o = T.int64()
    p = T.int64()
    z = R.match_cast(x, R.Tensor((o, p)))
    w = z
    q = R.add(w, y)
    return R.add(q, w)
''', '''
@R.function
def main(x: R.Tensor(ndim=2)):
    o = T.int64()
    p = T.int64()
    z = R.match_cast(x, R.Tensor((o, p)))
    q = R.add(z, x)
    return R.add(q, z)
''')


def test_variables_a_cast_determines_are_replaced():
    check('''
@R.function
def main(state: R.Tensor([16], "float32"), A: R.Tensor([16, 16], "float32"),
         B: R.Tensor([16, 16], "float32")) -> R.Tensor(ndim=1, dtype="float32"):
    N1 = T.int64()
    M = T.int64()
    N2 = T.int64()
    lhs_A = R.match_cast(A, R.Tensor([N1, M], "float32"))
    lhs_B = R.match_cast(B, R.Tensor([N2, M], "float32"))
    rhs = R.match_cast(state, R.Tensor([M], "float32"))
    lhs: R.Tensor([N1 + N2, M], "float32") = R.concat((lhs_A, lhs_B), axis=0)
    proj: R.Tensor([N1 + N2], "float32") = R.matmul(lhs, rhs)
    part = R.strided_slice(proj, [R.prim_value(0)], [R.prim_value(0)], [R.prim_value(N1)])
    return part
''', '''
@R.function
def main(state: R.Tensor([16], "float32"), A: R.Tensor([16, 16], "float32"),
         B: R.Tensor([16, 16], "float32")) -> R.Tensor(ndim=1, dtype="float32"):
    lhs: R.Tensor([32, 16], "float32") = R.concat((A, B), axis=0)
    proj: R.Tensor([32], "float32") = R.matmul(lhs, state)
    part: R.Tensor([16], "float32") = R.strided_slice(proj, [R.prim_value(0)], [R.prim_value(0)], [R.prim_value(16)])
    return part
''')


def test_inconsistent_casts_are_an_error():
    func = from_source('''
@R.function
def main(A: R.Tensor([16, 16], "float32"), B: R.Tensor([32, 32], "float32")):
    N = T.int64()
    M = T.int64()
    a = R.match_cast(A, R.Tensor([N, M], "float32"))
    b = R.match_cast(B, R.Tensor([N, M], "float32"))
    return b
''')
    with pytest.raises(ValueError, match="MatchCast statements must be consistent: the definition of a implies "
                                         "that N is 16, while the later definition of b implies that it is 32"):
        canonicalize_bindings(func)
    with P.PassContext(config={"tvmlite.reproducer_dir": False}):  # no reproducer file
        with pytest.raises(P.PassError, match="MatchCast statements must be consistent"):
            P.CanonicalizeBindings()(IRModule.from_expr(func))


def test_an_output_used_only_in_its_block_becomes_block_local():
    check('''
@R.function
def main(x: R.Tensor):
    with R.dataflow():
        y = R.add(x, R.const(1))
        z = R.add(y, R.const(1))
        R.output(y, z)
    return z
''', '''
@R.function
def main(x: R.Tensor):
    with R.dataflow():
        y = R.add(x, R.const(1))
        z = R.add(y, R.const(1))
        R.output(z)
    return z
''')


def test_outputs_used_after_the_block_keep_their_definition():
    check('''
@R.function
def main(x: R.Tensor):
    with R.dataflow():
        lv1 = R.add(x, R.const(1))
        gv2 = R.add(lv1, R.const(1))
        gv1 = lv1
        R.output(gv1, gv2)
    return (gv1, gv2)
''', '''
@R.function
def main(x: R.Tensor):
    with R.dataflow():
        gv1 = R.add(x, R.const(1))
        gv2 = R.add(gv1, R.const(1))
        R.output(gv1, gv2)
    return (gv1, gv2)
''')


def test_two_outputs_aliasing_one_value():
    check('''
@R.function
def main(w: R.Tensor):
    with R.dataflow():
        x = R.add(w, R.const(1))
        y = x
        z = x
        R.output(y, z)
    return (y, z)
''', '''
@R.function
def main(w: R.Tensor):
    with R.dataflow():
        y = R.add(w, R.const(1))
        R.output(y)
    return (y, y)
''')


def test_outputs_used_by_a_later_block_stay_outputs():
    before = '''
@R.function(pure=False)
def main(x: R.Tensor, y: R.Tensor) -> R.Tensor:
    with R.dataflow():
        z = R.add(x, y)
        v = R.add(z, x)
        R.output(v)
    _ = R.print(format="Hi")
    with R.dataflow():
        a = R.multiply(v, v)
        R.output(a)
    return a
'''
    check(before, before)


def test_better_struct_info_reaches_later_uses():
    check('''
@R.function(private=True)
def main(A: R.Tensor(("n", 16), "int32")) -> R.Tensor(("n", 16), "int32"):
    B = A
    C: R.Tensor(dtype="int32", ndim=2) = R.add(B, B)
    return C
''', '''
@R.function(private=True)
def main(A: R.Tensor(("n", 16), "int32")) -> R.Tensor(("n", 16), "int32"):
    n = T.int64()
    C: R.Tensor([n, 16], "int32") = R.add(A, A)
    return C
''')


def test_renewed_output_replacing_a_dataflow_variable():
    check('''
@R.function
def main(A: R.Tensor(("v", 4), "float16"), B: R.Tensor((6, 4), "float16")) \
        -> R.Tuple(R.Tensor(dtype="float16", ndim=2), R.Tensor((6, 4), "float16")):
    with R.dataflow():
        C = B
        D: R.Tuple(R.Tensor(dtype="float16", ndim=2), R.Tensor((6, 4), "float16")) = (A, C)
        E = D
        R.output(E)
    return E
''', '''
@R.function
def main(A: R.Tensor(("v", 4), "float16"), B: R.Tensor((6, 4), "float16")) \
        -> R.Tuple(R.Tensor(dtype="float16", ndim=2), R.Tensor((6, 4), "float16")):
    v = T.int64()
    with R.dataflow():
        E: R.Tuple(R.Tensor((v, 4), "float16"), R.Tensor((6, 4), "float16")) = (A, B)
        R.output(E)
    return E
''')


def test_inside_branches():
    check('''
@R.function
def main(x: R.Tensor, y: R.Tensor, c: R.Prim("bool")) -> R.Tensor:
    z = R.add(x, y)
    if c:
        with R.dataflow():
            w = R.add(z, z)
            v = R.multiply(w, w)
            R.output(w, v)
        a = v
        q = a
    else:
        q = z
    return q
''', '''
@R.function
def main(x: R.Tensor, y: R.Tensor, c: R.Prim("bool")) -> R.Tensor:
    z = R.add(x, y)
    if c:
        with R.dataflow():
            w = R.add(z, z)
            v = R.multiply(w, w)
            R.output(v)
        q = v
    else:
        q = z
    return q
''')


def test_removed_bindings_are_counted():
    mod = IRModule.from_expr(from_source('''
@R.function
def main(x: R.Tensor):
    y = x
    z = y
    return z
'''))
    with P.PassContext() as ctx:
        P.Sequential([P.CanonicalizeBindings()])(mod)
    assert ctx.stats["CanonicalizeBindings"]["removed_bindings"] == 2


def test_after_simplify_inference_no_tuple_projection_is_left():
    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), p: R.Tensor((3,), "float32")):
        with R.dataflow():
            bn = R.nn.batch_norm(x, p, p, p, p, axis=1)
            gv = bn[0]
            R.output(bn, gv)
        return gv
''')
    out = P.Sequential([P.SimplifyInference(), P.CanonicalizeBindings(), P.DeadCodeElimination()])(mod)
    values = [b.value for b in out["main"].body.blocks[0].bindings]
    assert not any(isinstance(v, (rx.Tuple, rx.TupleGetItem)) for v in values)
    assert out["main"].body.blocks[0].bindings[-1].var.name_hint == "gv"


def test_nothing_to_do_keeps_the_function():
    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        with R.dataflow():
            y = R.add(x, x)
            gv = R.multiply(y, y)
            R.output(gv)
        return gv
''')
    assert P.CanonicalizeBindings()(mod)["main"] is mod["main"]
