"""Index arithmetic: simplification, proofs of (in)equality, constants, shape helpers, index maps."""
import pytest

from tvmlite.ir import tir
from tvmlite.ir.arith import (IndexMap, as_const_int, can_prove_equal, can_prove_ge, can_prove_not_equal,
                              ceildiv, format_expr, format_shape, int64, is_const_int, prod, simplify, total,
                              to_dim, to_dims)
from tvmlite.ir.structural import structural_equal

n = tir.Var("n", "int64")
m = tir.Var("m", "int64")


def text(e):
    return format_expr(simplify(e))


def test_constant_folding_keeps_dtype():
    e = tir.Add(tir.Mul(tir.IntImm("int32", 3), tir.IntImm("int32", 4)), tir.IntImm("int32", 1))
    out = simplify(e)
    assert isinstance(out, tir.IntImm) and out.value == 13 and out.dtype == "int32"
    assert simplify(tir.FloorDiv(int64(-7), int64(2))).value == -4
    assert simplify(tir.FloorMod(int64(-7), int64(2))).value == 1
    assert simplify(tir.Div(int64(-7), int64(2))).value == -3  # truncated
    assert simplify(tir.Mod(int64(-7), int64(2))).value == -1
    assert simplify(tir.Min(int64(3), int64(5))).value == 3
    assert simplify(tir.Max(int64(3), int64(5))).value == 5


def test_integer_overflow_wraps_to_dtype():
    big = tir.IntImm("int32", 2**31 - 1)
    assert simplify(tir.Add(big, tir.IntImm("int32", 1))).value == -(2**31)


def test_identities():
    assert simplify(tir.Add(n, int64(0))) is n
    assert simplify(tir.Mul(n, int64(1))) is n
    assert simplify(tir.Mul(n, int64(0))).value == 0
    assert simplify(tir.Sub(tir.Add(n, int64(1)), int64(1))) is n
    assert simplify(tir.FloorDiv(n, int64(1))) is n
    assert simplify(tir.FloorMod(n, int64(1))).value == 0


def test_canonical_order_and_combination():
    assert text(tir.Mul(int64(2), n)) == "n * 2"
    assert structural_equal(simplify(tir.Mul(int64(2), n)), simplify(tir.Mul(n, int64(2))))
    assert text(tir.Add(tir.Mul(int64(2), n), tir.Sub(m, int64(3)))) == "m + n * 2 - 3"
    assert text(tir.Add(tir.Add(n, int64(2)), tir.Add(n, int64(3)))) == "n * 2 + 5"
    assert text(tir.Sub(int64(1), n)) == "1 - n"
    assert text(tir.Sub(tir.Mul(n, m), tir.Mul(m, n))) == "0"


def test_exact_division_rules():
    assert text(tir.FloorDiv(tir.Add(tir.Mul(n, int64(4)), int64(6)), int64(2))) == "n * 2 + 3"
    assert text(tir.FloorDiv(tir.Add(tir.Mul(n, int64(4)), int64(3)), int64(4))) == "n"
    assert text(tir.FloorMod(tir.Add(tir.Mul(n, int64(4)), int64(3)), int64(4))) == "3"
    assert text(tir.FloorDiv(n, int64(4))) == "n // 4"


def test_min_max_with_constant_difference():
    assert simplify(tir.Min(n, tir.Add(n, int64(1)))) is n
    assert text(tir.Max(n, tir.Add(n, int64(1)))) == "n + 1"
    assert text(tir.Min(n, m)) == "T.min(n, m)"  # undecidable: kept
    assert text(tir.Min(int64(3), n)) == "T.min(n, 3)"


def test_comparisons_fold():
    assert simplify(tir.LT(n, tir.Add(n, int64(1)))).value == 1
    assert simplify(tir.EQ(n, m)).__class__ is tir.EQ


def test_can_prove():
    assert can_prove_equal(tir.Mul(n, int64(2)), tir.Add(n, n))
    assert can_prove_equal(int64(4), 4)
    assert not can_prove_equal(n, m)
    assert can_prove_not_equal(n, tir.Add(n, int64(1)))
    assert not can_prove_not_equal(n, m)  # unknown, not provably different
    assert can_prove_ge(tir.Add(n, int64(2)), n)
    assert not can_prove_ge(n, m)


def test_variables_by_identity_not_name():
    other_n = tir.Var("n", "int64")
    assert not can_prove_equal(n, other_n)
    assert text(tir.Sub(n, other_n)) == "n - n"


def test_as_const_int():
    assert as_const_int(int64(5)) == 5
    assert as_const_int(7) == 7
    assert as_const_int(tir.Add(int64(2), int64(3))) == 5
    assert as_const_int(tir.Sub(tir.Add(n, int64(3)), n)) == 3
    assert as_const_int(n) is None
    assert as_const_int(tir.FloatImm("float32", 1.0)) is None
    assert is_const_int(int64(1), 1) and not is_const_int(n)


def test_prod_and_dims():
    assert prod([]).value == 1 and prod([]).dtype == "int64"
    assert total([]).value == 0 and format_expr(total([n, 2, m, 3])) == "m + n + 5"
    assert prod([2, 3, int64(4)]).value == 24
    assert format_expr(prod([n, 3, m, 2])) == "m * n * 6"
    assert structural_equal(to_dim(3), int64(3))
    assert all(d.dtype == "int64" for d in to_dims([1, 2, 3]))
    assert to_dim(n) is n
    with pytest.raises(TypeError):
        to_dim(1.5)
    assert format_expr(ceildiv(n, 4)) == "(n + 3) // 4"
    assert ceildiv(10, 4).value == 3


def test_format_shape():
    assert format_shape((n, int64(128))) == "(n, 128)"
    assert format_shape((int64(10),)) == "(10,)"
    assert format_shape(()) == "()"
    assert format_expr(tir.Mul(tir.Add(n, int64(1)), int64(2))) == "(n + 1) * 2"
    assert format_expr(tir.Sub(n, tir.Sub(m, int64(1)))) == "n - (m - 1)"


def test_index_map_from_lambda_and_shape():
    imap = IndexMap.from_func(lambda i, j: (i, j // 4, j % 4))
    assert [v.name for v in imap.initial_indices] == ["i", "j"]
    assert format_shape(imap.map_shape((n, int64(16)))) == "(n, 4, 4)"
    # The padded extent of a floormod is its modulus, as TVM computes it.
    assert format_shape(IndexMap.from_func(lambda i: (i % 16,)).map_shape((int64(14),))) == "(16,)"
    assert format_shape(IndexMap.from_func(lambda i, j: (j, i)).map_shape((n, m))) == "(m, n)"
    assert IndexMap.from_func(lambda i: (i * i,)).map_shape((int64(4),)) is None
    with pytest.raises(ValueError):
        IndexMap.from_func(lambda i: (i,), ndim=2)
