"""The remaining small ops of issue 16 (quantize, dequantize, conv3d_transpose, attention_var_len,
the R.ccl collectives, call_py_func, size, wrap_param): their printed and legalized forms as TVM
0.27 prints them (literal texts learnt from TVM) and their numbers through compile + VM against
numpy in every dtype they accept."""
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tvmlite  # noqa: E402
from test_compiled_ops import compile_and_run  # noqa: E402
from tvmlite import relax  # noqa: E402
from tvmlite.passes import LegalizeOps  # noqa: E402
from tvmlite.script import from_source  # noqa: E402

op = relax.op
rng = np.random.default_rng(27)


def main_of(params: str, body: str) -> str:
    """A module whose ``main`` takes ``params`` and runs the statements of ``body``."""
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    return f"@I.ir_module\nclass Module:\n    @R.function\n    def main({params}):\n{lines}\n"


def legalized_prim(src: str, name: str) -> str:
    """The text of PrimFunc ``name`` after LegalizeOps of the script ``src``."""
    return LegalizeOps()(from_source(src))[name].script()


def blocks_of(text: str) -> str:
    """A PrimFunc's body after its root-block comment, dedented."""
    return textwrap.dedent(text.split('# with T.block("root"):\n')[1])


# ---------------------------------------------------------------- quantize, dequantize
INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535)}


def np_quantize(x, scale, zp, axis, out_dtype):
    """TVM's formula: clip(round(x / scale) + zp) in the dtype the division promotes to."""
    shape = [1] * x.ndim
    if np.size(scale) > 1:
        shape[axis] = -1
    wide = np.result_type(x.dtype, np.asarray(scale).dtype)
    s = np.asarray(scale).astype(wide).reshape(shape if np.size(scale) > 1 else [1] * x.ndim)
    z = np.asarray(zp).astype(wide).reshape(shape if np.size(zp) > 1 else [1] * x.ndim)
    lo, hi = INT_RANGE[out_dtype]
    hi = min(hi, float(np.finfo(wide).max))  # uint16's 65535 is no float16: the largest float16 bounds it
    return np.clip(np.rint(x.astype(wide) / s) + z, lo, hi).astype(out_dtype)


def np_dequantize(q, scale, zp, axis, out_dtype):
    """TVM's formula: (q - zp) * scale in float32 (the difference in int32 for integer data)."""
    shape = [1] * q.ndim
    if np.size(scale) > 1:
        shape[axis] = -1
    wide = "float32" if q.dtype.kind == "f" else "int32"
    s = np.asarray(scale).astype("float32").reshape(shape if np.size(scale) > 1 else [1] * q.ndim)
    z = np.asarray(zp).astype(wide).reshape(shape if np.size(zp) > 1 else [1] * q.ndim)
    out = (q.astype(wide) - z).astype("float32") * s
    return out if out_dtype == "float32" else np.clip(out, -65504, 65504).astype(out_dtype)


QDQ_TEXT = main_of('x: R.Tensor(("n", 3), "float16"), s: R.Tensor((3,), "float32"), z: R.Tensor((1,), "uint8")',
                   '''n = T.int64()
gv = R.quantize(x, s, z, axis=-1, out_dtype="uint8")
gv1 = R.dequantize(gv, s, z, axis=1, out_dtype="float16")
return gv1''')


def test_quantize_prints_and_legalizes_as_tvm():
    """TVM 0.27 prints out_dtype before axis and legalizes to one block each (its text, but for
    tvmlite's T.block / tir.noalias / match_buffer spellings)."""
    mod = from_source(QDQ_TEXT)
    text = mod.script()
    assert 'R.quantize(x, s, z, out_dtype="uint8", axis=-1)' in text
    assert 'R.dequantize(gv, s, z, out_dtype="float16", axis=1)' in text
    assert blocks_of(legalized_prim(QDQ_TEXT, "quantize")) == '''\
for i0, i1 in T.grid(n, T.int64(3)):
    with T.block("quantized"):
        v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
        T.reads(x[v_i0, v_i1], s[v_i1], z[T.int64(0)])
        T.writes(quantized[v_i0, v_i1])
        quantized[v_i0, v_i1] = T.Cast("uint8", T.max(T.min(T.round(T.Cast("float32", x[v_i0, v_i1]) / s[v_i1]) + T.Cast("float32", z[T.int64(0)]), T.float32(255.0)), T.float32(0.0)))'''
    assert blocks_of(legalized_prim(QDQ_TEXT, "dequantize")) == '''\
for i0, i1 in T.grid(n, T.int64(3)):
    with T.block("dequantized"):
        v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
        T.reads(gv[v_i0, v_i1], z[T.int64(0)], s[v_i1])
        T.writes(dequantized[v_i0, v_i1])
        dequantized[v_i0, v_i1] = T.Cast("float16", T.max(T.min(T.Cast("float32", T.Cast("int32", gv[v_i0, v_i1]) - T.Cast("int32", z[T.int64(0)])) * s[v_i1], T.float32(65504.0)), T.float32(-65504.0)))'''


def test_scalar_constants_are_inlined():
    """Rank-0 constant parameters become literals of their dtype, as in TVM's legalization."""
    src = main_of('y: R.Tensor((2, 4), "int32")', '''gv = R.dequantize(y, R.const(0.25, "float32"), R.const(2, "int32"), axis=0)
return gv''')
    text = legalized_prim(src, "dequantize")
    assert "dequantized[v_i0, v_i1] = T.Cast(\"float32\", y[v_i0, v_i1] - 2) * T.float32(0.25)" in text


@pytest.mark.parametrize("data_dtype", ["float32", "float16"])
@pytest.mark.parametrize("out_dtype", ["int8", "uint8", "int16", "uint16"])
def test_quantize_every_dtype(data_dtype, out_dtype):
    x = rng.uniform(-60, 200, (3, 4)).astype(data_dtype)
    # per axis (scale float32, zero point int32): values past the range are clipped
    s, z = np.array([0.5, 1.0, 2.0, 0.25], "float32"), np.array([3, -2, 0, 7], "int32")
    got = compile_and_run(lambda a, b, c: op.quantize(a, b, c, axis=1, out_dtype=out_dtype), [x, s, z])
    np.testing.assert_array_equal(got, np_quantize(x, s, z, 1, out_dtype))
    # per tensor, scale of the data's dtype, zero point of the output's
    s1, z1 = np.array([0.75], data_dtype), np.array([5], out_dtype)
    got = compile_and_run(lambda a, b, c: op.quantize(a, b, c, axis=0, out_dtype=out_dtype), [x, s1, z1])
    np.testing.assert_array_equal(got, np_quantize(x, s1, z1, 0, out_dtype))
    # literals: a rank-0 constant scale and zero point
    got = compile_and_run(lambda a: op.quantize(a, relax.const(0.5, data_dtype), relax.const(1, "int8"),
                                                out_dtype=out_dtype), [x])
    np.testing.assert_array_equal(got, np_quantize(x, np.float32(0.5).astype(data_dtype), 1, -1, out_dtype))


def test_quantize_rounds_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 126.6, -300.0], "float32")
    got = compile_and_run(lambda a: op.quantize(a, relax.const(1.0, "float32"), relax.const(0, "int8")), [x])
    np.testing.assert_array_equal(got, np.array([0, 2, 2, 0, -2, 127, -128], "int8"))


@pytest.mark.parametrize("data_dtype", ["int8", "uint8", "int16", "uint16", "int32", "float16", "float32"])
@pytest.mark.parametrize("out_dtype", ["float32", "float16"])
def test_dequantize_every_dtype(data_dtype, out_dtype):
    q = (rng.integers(0, 100, (4, 3)) if data_dtype.startswith("u") else rng.integers(-100, 100, (4, 3)))
    q = q.astype(data_dtype)
    s, z = np.array([0.5, 0.125, 2.0, 1.5], "float16"), np.array([1, -3, 0, 2], "int8")
    got = compile_and_run(lambda a, b, c: op.dequantize(a, b, c, axis=0, out_dtype=out_dtype), [q, s, z])
    np.testing.assert_allclose(got, np_dequantize(q, s, z, 0, out_dtype), rtol=1e-3 if out_dtype == "float16" else 1e-6)
    assert got.dtype == out_dtype
    s1, z1 = np.array(0.3, "float32"), np.array(4, "int32")
    got = compile_and_run(lambda a, b, c: op.dequantize(a, b, c, out_dtype=out_dtype), [q, s1, z1])
    np.testing.assert_allclose(got, np_dequantize(q, s1, z1, -1, out_dtype), rtol=1e-3 if out_dtype == "float16" else 1e-6)


def test_dequantize_to_float16_saturates():
    q = np.array([30000, -30000, 5], "int32")
    got = compile_and_run(lambda a: op.dequantize(a, relax.const(4.0, "float32"), relax.const(0, "int32"),
                                                  out_dtype="float16"), [q])
    np.testing.assert_array_equal(got, np.array([65504, -65504, 20], "float16"))


def test_quantize_round_trip_with_symbolic_rows():
    x = rng.uniform(-3, 3, (5, 3)).astype("float32")
    s, z = np.array([0.05, 0.1, 0.02], "float32"), np.array([0, 10, -5], "int8")
    got = compile_and_run(lambda a, b, c: op.dequantize(op.quantize(a, b, c, axis=1), b, c, axis=1), [x, s, z],
                          {0: {0: "n"}})
    np.testing.assert_allclose(got, np_dequantize(np_quantize(x, s, z, 1, "int8"), s, z, 1, "float32"))


# ---------------------------------------------------------------- conv3d_transpose
def test_conv3d_transpose_legalized_as_tvm():
    """TVM 0.27's blocks for NCDHW / IODHW (data_dilate, data_pad, kernel_transform, compute) and
    its index arithmetic, but for ``v_i3 >= 1`` where TVM's pad prints ``1 <= v_i3``."""
    src = main_of('x: R.Tensor((1, 4, 2, 3, 2), "float32"), w: R.Tensor((4, 2, 2, 2, 3), "float32")', '''\
gv = R.nn.conv3d_transpose(x, w, strides=(2, 1, 1), padding=(1, 0, 0), groups=2)
return gv''')
    assert ('R.nn.conv3d_transpose(x, w, strides=[2, 1, 1], padding=[1, 0, 0, 1, 0, 0], output_padding=[0, 0, 0], '
            'dilation=[1, 1, 1], groups=2, data_layout="NCDHW", kernel_layout="IODHW", out_layout="NCDHW", '
            'out_dtype="void")') in from_source(src).script()
    text = legalized_prim(src, "conv3d_transpose")
    assert blocks_of(text).splitlines()[-8:] == '''\
for b, c, d, h, w_1, dc, dd, dh, dw in T.grid(T.int64(1), T.int64(4), T.int64(2), T.int64(4), T.int64(4), T.int64(2), T.int64(2), T.int64(2), T.int64(3)):
    with T.block("compute"):
        v_b, v_c, v_d, v_h, v_w, v_dc, v_dd, v_dh, v_dw = T.axis.remap("SSSSSRRRR", [b, c, d, h, w_1, dc, dd, dh, dw])
        T.reads(data_pad[v_b, v_c // T.int64(2) * T.int64(2) + v_dc, v_d + v_dd, v_h + v_dh, v_w + v_dw], kernel_transform[v_c % T.int64(2), v_c // T.int64(2) * T.int64(2) + v_dc, v_dd, v_dh, v_dw])
        T.writes(compute[v_b, v_c, v_d, v_h, v_w])
        with T.init():
            compute[v_b, v_c, v_d, v_h, v_w] = T.float32(0.0)
        compute[v_b, v_c, v_d, v_h, v_w] = compute[v_b, v_c, v_d, v_h, v_w] + data_pad[v_b, v_c // T.int64(2) * T.int64(2) + v_dc, v_d + v_dd, v_h + v_dh, v_w + v_dw] * kernel_transform[v_c % T.int64(2), v_c // T.int64(2) * T.int64(2) + v_dc, v_dd, v_dh, v_dw]'''.splitlines()
    assert '''\
        kernel_transform[v_o, v_i, v_d, v_h, v_w] = w[v_i, v_o, T.int64(1) - v_d, T.int64(1) - v_h, T.int64(2) - v_w]''' in text
    assert [line.strip() for line in text.splitlines() if "with T.block(" in line][1:] == [
        'with T.block("data_dilate"):', 'with T.block("data_pad"):', 'with T.block("kernel_transform"):',
        'with T.block("compute"):']
    # another layout stays a call, as in TVM
    ndhwc = src.replace("(1, 4, 2, 3, 2)", "(1, 2, 3, 2, 4)").replace("groups=2)", 'groups=2, data_layout="NDHWC")')
    assert "R.nn.conv3d_transpose(" in LegalizeOps()(from_source(ndhwc)).script()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv3d_transpose_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    x, w = rng.uniform(-1, 1, (2, 4, 3, 4, 3)).astype(dtype), rng.uniform(-1, 1, (4, 3, 2, 3, 2)).astype(dtype)
    got = compile_and_run(lambda a, b: op.nn.conv3d_transpose(a, b, strides=(2, 1, 2), padding=(1, 0, 1),
                                                              output_padding=(1, 0, 1), dilation=(1, 2, 1),
                                                              groups=2), [x, w])
    want = torch.nn.functional.conv_transpose3d(torch.from_numpy(x), torch.from_numpy(w), stride=(2, 1, 2),
                                                padding=(1, 0, 1), output_padding=(1, 0, 1), dilation=(1, 2, 1),
                                                groups=2).numpy()
    assert got.shape == want.shape == (2, 6, 5, 8, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    same = compile_and_run(lambda a, b: op.nn.conv3d_transpose(a, b, strides=2, padding=1, output_padding=1), [x, np.ascontiguousarray(w[:, :, :, :2])])
    want = torch.nn.functional.conv_transpose3d(torch.from_numpy(x), torch.from_numpy(w[:, :, :, :2].copy()), stride=2,
                                                padding=1, output_padding=1).numpy()
    np.testing.assert_allclose(same, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "int32", "int8"])
def test_conv3d_transpose_other_dtypes(dtype):
    from nn_refs import conv_transpose_nd
    x, w = rng.integers(-3, 4, (1, 2, 2, 3, 2)).astype(dtype), rng.integers(-3, 4, (2, 2, 2, 2, 2)).astype(dtype)
    got = compile_and_run(lambda a, b: op.nn.conv3d_transpose(a, b, strides=(1, 2, 1)), [x, w])
    want = conv_transpose_nd(x, w, (1, 2, 1), (0,) * 6, (0, 0, 0), (1, 1, 1))
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=1e-3)
    wide = compile_and_run(lambda a, b: op.nn.conv3d_transpose(a, b, out_dtype="float32"), [x, w])
    np.testing.assert_allclose(wide, conv_transpose_nd(x, w, (1, 1, 1), (0,) * 6, (0, 0, 0), (1, 1, 1),
                                                       out_dtype="float32"), rtol=1e-3)


# ---------------------------------------------------------------- attention_var_len
def np_attention_var_len(q, k, v, seqstart_q, seqstart_k, scale=None, causal=None):
    """A loop over the sequences: plain attention of each one's queries over its own keys."""
    out = np.zeros(q.shape[:3] + v.shape[3:], "float64")
    scale = 1 / np.sqrt(q.shape[3]) if scale is None else scale
    for b in range(len(seqstart_q) - 1):
        q0, q1, k0, k1 = seqstart_q[b], seqstart_q[b + 1], seqstart_k[b], seqstart_k[b + 1]
        if k1 == k0:
            continue
        qs, ks, vs = (t[0, lo:hi].astype("float64") for t, lo, hi in ((q, q0, q1), (k, k0, k1), (v, k0, k1)))
        s = np.einsum("ihd,jhd->hij", qs, ks) * scale
        if causal is not None:
            offset = 0 if causal == "TopLeft" else abs((q1 - q0) - (k1 - k0))
            keep = np.tril(np.ones((q1 - q0, k1 - k0), bool), offset)
            s = np.where(keep, s, -np.inf)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
        out[0, q0:q1] = np.einsum("hij,jhe->ihe", p, vs)
    return out.astype(q.dtype)


def test_attention_var_len_prints_as_tvm():
    """TVM 0.27 prints the starts before the maximum lengths, every attribute, None included; a
    sliding window stays a call."""
    src = main_of('q: R.Tensor((1, "n", 4, 8), "float32"), k: R.Tensor((1, "m", 4, 8), "float32"), '
                  'v: R.Tensor((1, "m", 4, 6), "float32"), sq: R.Tensor((3,), "int32"), sk: R.Tensor((3,), "int32"), '
                  'mq: R.Tensor((), "int32"), mk: R.Tensor((), "int32")', '''n = T.int64()
m = T.int64()
gv = R.nn.attention_var_len(q, k, v, sq, sk, mq, mk, causal_mask="TopLeft")
gv2 = R.nn.attention_var_len(q, q, q, sq, sq, mq, mq, scale=0.5, window_size=2)
return (gv, gv2)''')
    text = from_source(src).script()
    assert ('gv: R.Tensor((1, n, 4, 6), dtype="float32") = R.nn.attention_var_len(q, k, v, sq, sk, mq, mk, '
            'scale=None, causal_mask="TopLeft", window_size=None)') in text
    assert ('gv2: R.Tensor((1, n, 4, 8), dtype="float32") = R.nn.attention_var_len(q, q, q, sq, sq, mq, mq, '
            'scale=T.float32(0.5), causal_mask=None, window_size=2)') in text
    legal = LegalizeOps()(from_source(src))
    assert "R.nn.attention_var_len(q, q, q" in legal.script()
    blocks = [line.strip()[len('with T.block("'):-3] for line in legal["attention_var_len"].script().splitlines()
              if line.strip().startswith("with T.block(") and "root" not in line]
    assert blocks == ["T_seq_index", "T_var_len_mask", "T_batch_matmul_NT", "T_masked_score", "T_softmax_maxelem",
                      "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm", "T_batch_matmul_NN"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("causal", [None, "TopLeft", "BottomRight"])
def test_attention_var_len_matches_a_loop_over_sequences(dtype, causal):
    sq, sk = np.array([0, 2, 7, 10], "int32"), np.array([0, 3, 5, 9], "int32")
    q, k, v = (rng.uniform(-1, 1, s).astype(dtype) for s in ((1, 10, 2, 4), (1, 9, 2, 4), (1, 9, 2, 3)))
    mq, mk = np.array(5, "int32"), np.array(4, "int32")
    got = compile_and_run(lambda *a: op.nn.attention_var_len(*a, causal_mask=causal), [q, k, v, sq, sk, mq, mk])
    tol = 2e-2 if dtype == "float16" else 1e-5
    assert got.dtype == dtype
    np.testing.assert_allclose(got, np_attention_var_len(q, k, v, sq, sk, causal=causal), rtol=tol, atol=tol)


def test_attention_var_len_self_attention_with_symbolic_length():
    starts = np.array([0, 4, 5, 5, 8], "int64")  # an empty sequence, and one of one
    x = rng.uniform(-1, 1, (1, 8, 3, 4)).astype("float32")
    got = compile_and_run(lambda a, s, m: op.nn.attention_var_len(a, a, a, s, s, m, m, scale=0.75),
                          [x, starts, np.array(4, "int64")], {0: {1: "n"}})
    np.testing.assert_allclose(got, np_attention_var_len(x, x, x, starts, starts, 0.75), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- R.ccl.*
CCL_TEXT = main_of('y: R.Tensor((4, 6), "float32")', '''c = R.ccl.allreduce(y, "sum", True)
d = R.ccl.allgather(y, 2, True)
e = R.ccl.broadcast_from_worker0(y)
f = R.ccl.scatter_from_worker0(y, 2, 1)
return (c, d, e, f)''')


def test_collectives_print_and_legalize_as_tvm():
    """TVM 0.27's texts (it writes ``out_ty=`` and prim values as bare ints where tvmlite writes
    ``out_sinfo=`` and ``R.prim_value(...)``): runtime.disco calls, scatter's axis moved first."""
    mod = from_source(CCL_TEXT)
    text = mod.script()
    for line in ('c: R.Tensor((4, 6), dtype="float32") = R.ccl.allreduce(y, op_type="sum", in_group=True)',
                 'd: R.Tensor((8, 6), dtype="float32") = R.ccl.allgather(y, num_workers=2, in_group=True)',
                 'e: R.Tensor((4, 6), dtype="float32") = R.ccl.broadcast_from_worker0(y)',
                 'f: R.Tensor((4, 3), dtype="float32") = R.ccl.scatter_from_worker0(y, num_workers=2, axis=1)'):
        assert line in text
    legal = LegalizeOps()(mod)
    body = legal.script().split("cls = Module\n")[1]
    assert textwrap.dedent(body) == '''\
c = R.call_dps_packed("runtime.disco.allreduce", (y, R.shape([0]), R.prim_value(1)), out_sinfo=R.Tensor((4, 6), dtype="float32"))
d = R.call_dps_packed("runtime.disco.allgather", (y, R.prim_value(1)), out_sinfo=R.Tensor((8, 6), dtype="float32"))
e = R.call_dps_packed("runtime.disco.broadcast_from_worker0", (y, R.prim_value(0)), out_sinfo=R.Tensor((4, 6), dtype="float32"))
gv = R.call_tir(cls.reshape, (y,), out_sinfo=R.Tensor((4, 2, 3), dtype="float32"))
gv1 = R.call_tir(cls.transpose, (gv,), out_sinfo=R.Tensor((2, 4, 3), dtype="float32"))
f = R.call_dps_packed("runtime.disco.scatter_from_worker0", (gv1, R.prim_value(0)), out_sinfo=R.Tensor((4, 3), dtype="float32"))
return (c, d, e, f)'''


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "int8", "uint8", "int64", "bool"])
def test_collectives_run_as_one_worker(dtype):
    x = (rng.integers(0, 2, (4, 6)) if dtype == "bool" else rng.integers(-9, 9, (4, 6))).astype(dtype)
    for code in ("sum", "prod", "min", "max", "avg"):
        np.testing.assert_array_equal(compile_and_run(lambda a: op.ccl.allreduce(a, code), [x]), x)
    np.testing.assert_array_equal(compile_and_run(lambda a: op.ccl.allgather(a, 1, in_group=False), [x]), x)
    np.testing.assert_array_equal(compile_and_run(op.ccl.broadcast_from_worker0, [x]), x)
    for axis in (0, 1, -1):
        got = compile_and_run(lambda a: op.ccl.scatter_from_worker0(a, 1, axis=axis), [x])
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, x)


def test_collectives_refuse_more_workers_when_run():
    x = np.ones((4, 6), "float32")
    with pytest.raises(RuntimeError, match="runtime.disco.allgather: the call spans 2 workers, but tvmlite runs a "
                                           r"single worker \(num_workers must be 1\)"):
        compile_and_run(lambda a: op.ccl.allgather(a, 2), [x])
    with pytest.raises(RuntimeError, match="runtime.disco.scatter_from_worker0: the call spans 3 workers"):
        compile_and_run(lambda a: op.ccl.scatter_from_worker0(a, 3, axis=1), [x])


def test_scatter_of_a_symbolic_axis_stays_unless_divisible():
    src = main_of('y: R.Tensor(("n", 6), "float32")', '''n = T.int64()
f = R.ccl.scatter_from_worker0(y, 2, 0)
g = R.ccl.scatter_from_worker0(y, 1, 0)
return (f, g)''')
    text = LegalizeOps()(from_source(src))["main"].script()
    assert 'f: R.Tensor((n // 2, 6), dtype="float32") = R.ccl.scatter_from_worker0(y, num_workers=2, axis=0)' in text
    assert 'g = R.call_dps_packed("runtime.disco.scatter_from_worker0", (gv, R.prim_value(0))' in text
    x = rng.uniform(-1, 1, (3, 6)).astype("float32")
    np.testing.assert_array_equal(compile_and_run(lambda a: op.ccl.scatter_from_worker0(a, 1), [x], {0: {0: "n"}}), x)


# ---------------------------------------------------------------- call_py_func
PY_TEXT = main_of('x: R.Tensor(("n", 3), "float32")', '''n = T.int64()
a = R.call_py_func("relu_py", (x,), out_sinfo=R.Tensor((n, 3), "float32"))
b = R.call_py_func("pair_py", (x, a), out_sinfo=[R.Tensor((n, 3), "float32"), R.Tensor((3,), "int32")])
return (a, b)''')


def run_module(src, *args):
    mod = from_source(src)
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
    return vm["main"](*args)


def test_call_py_func_prints_round_trips_and_runs():
    mod = from_source(PY_TEXT)
    text = mod.script()
    # TVM 0.27 names the function with R.str too (it prints the arguments and out_ty in a form
    # its parser does not read back); tvmlite writes them as call_dps_packed's
    assert ('a: R.Tensor((n, 3), dtype="float32") = R.call_py_func(R.str("relu_py"), (x,), '
            'out_sinfo=R.Tensor((n, 3), dtype="float32"))') in text
    assert from_source(text).script() == text
    assert LegalizeOps()(mod).script() == text  # nothing to legalize: the VM calls the function
    tvmlite.register_py_func("relu_py", lambda x: np.maximum(x, 0), override=True)

    @tvmlite.register_py_func("pair_py", override=True)
    def pair_py(x, a):
        assert not x.flags.writeable  # the functions see read-only views of the VM's arrays
        return x + a, np.arange(3, dtype="int32")

    x = rng.uniform(-1, 1, (5, 3)).astype("float32")
    a, (s, r) = run_module(PY_TEXT, x)
    np.testing.assert_array_equal(a.numpy(), np.maximum(x, 0))
    np.testing.assert_array_equal(s.numpy(), x + np.maximum(x, 0))
    np.testing.assert_array_equal(r.numpy(), np.arange(3, dtype="int32"))


def test_call_py_func_checks_the_result_and_the_name():
    x = np.ones((2, 3), "float32")
    tvmlite.register_py_func("relu_py", lambda x: x[:1], override=True)
    tvmlite.register_py_func("pair_py", lambda x, a: (x, a), override=True)
    with pytest.raises(Exception, match="the result of Python function 'relu_py'"):
        run_module(PY_TEXT, x)
    with pytest.raises(ValueError, match=r"no Python function named 'missing_py' is registered \(register it with "
                                         r"tvmlite.register_py_func\('missing_py', f\)\)"):
        run_module(PY_TEXT.replace("relu_py", "missing_py"), x)
    with pytest.raises(ValueError, match="a Python function named 'relu_py' is already registered"):
        tvmlite.register_py_func("relu_py", abs)


# ---------------------------------------------------------------- size, wrap_param
SIZE_TEXT = main_of('x: R.Tensor((2, 3), "float16")', '''a = R.size(x)
b = R.wrap_param(x, dtype="float32")
c = R.wrap_param(x, dtype="float16")
return (a, b, c)''')


def test_size_and_wrap_param_legalize_as_tvm():
    """TVM 0.27: size is the product of shape_to_tensor(shape_of(x)) (block ``gv1_red``, as TVM's);
    TVM leaves wrap_param alone (and cannot run it), tvmlite casts, or takes the parameter itself
    when it has the dtype already."""
    text = from_source(SIZE_TEXT).script()
    assert 'a: R.Tensor((), dtype="int64") = R.size(x)' in text
    assert 'b: R.Tensor((2, 3), dtype="float32") = R.wrap_param(x, dtype="float32")' in text
    legal = LegalizeOps()(from_source(SIZE_TEXT))
    assert textwrap.dedent(legal.script().split("cls = Module\n")[1]) == '''\
gv: R.Shape([2, 3]) = R.shape_of(x)
gv1: R.Tensor((2,), dtype="int64") = R.shape_to_tensor(gv)
a = R.call_tir(cls.prod, (gv1,), out_sinfo=R.Tensor((), dtype="int64"))
b = R.call_tir(cls.wrap_param, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
c: R.Tensor((2, 3), dtype="float16") = x
return (a, b, c)'''
    assert blocks_of(legal["prod"].script()) == '''\
for k0 in range(T.int64(2)):
    with T.block("gv1_red"):
        v_k0 = T.axis.reduce(T.int64(2), k0)
        T.reads(gv1[v_k0])
        T.writes(gv1_red[()])
        with T.init():
            gv1_red[()] = T.int64(1)
        gv1_red[()] = gv1_red[()] * gv1[v_k0]'''


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int32", "int64", "uint8", "bool"])
def test_size_every_dtype(dtype):
    x = np.zeros((3, 4, 2), dtype)
    got = compile_and_run(op.size, [x])
    assert got.dtype == np.int64 and got.shape == ()
    assert got == 24
    assert compile_and_run(op.size, [x], {0: {0: "n"}}) == 24
    assert compile_and_run(op.size, [np.zeros((), dtype)]) == 1
    assert compile_and_run(op.size, [np.zeros((0, 5), dtype)]) == 0


@pytest.mark.parametrize("src", ["float32", "float16", "float64", "int8", "int32", "uint8", "bool"])
@pytest.mark.parametrize("dst", ["float32", "float16", "int32", "int64"])
def test_wrap_param_every_dtype(src, dst):
    x = (rng.integers(0, 2, (3, 4)) if src == "bool" else rng.integers(-9 if src[0] != "u" else 0, 9, (3, 4)))
    x = x.astype(src)
    got = compile_and_run(lambda a: op.wrap_param(a, dtype=dst), [x], {0: {0: "n"}})
    assert got.dtype == dst
    np.testing.assert_array_equal(got, x.astype(dst))


def test_quantize_takes_axis_then_out_dtype_positionally():
    """TVM's Python signature (data, scale, zero_point, axis, out_dtype), in scripts and in
    tvmlite.relax.op, though both ops print out_dtype first."""
    src = QDQ_TEXT.replace('axis=-1, out_dtype="uint8"', '-1, "uint8"').replace('axis=1, out_dtype="float16"',
                                                                               '1, "float16"')
    assert from_source(src).script() == from_source(QDQ_TEXT).script()
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    s = relax.Var("s", relax.TensorStructInfo((2,), "float32"))
    z = relax.Var("z", relax.TensorStructInfo((2,), "int8"))
    call = op.quantize(x, s, z, 0, "int16")
    assert (call.attrs["axis"], call.attrs["out_dtype"]) == (0, "int16")
    assert list(call.attrs) == ["out_dtype", "axis"]
    call = op.dequantize(call, s, z, 0, "float16")
    assert (call.attrs["axis"], call.struct_info.dtype) == (0, "float16")
