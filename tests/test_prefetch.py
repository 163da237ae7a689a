"""Software prefetch: TVM's ``T.call_llvm_intrin("void", "llvm.prefetch", T.address_of(...), 0, 3, 1)``
parsed, printed and compiled; InjectPrefetch writing it for loops marked ``"tvmlite.prefetch"``; the
default CPU schedule marking the weight loops of packed convs with large weights."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.backend.llvm.errors import CodegenError
from tvmlite.backend.interpreter import InterpreterExecutor
from tvmlite.ir.module import IRModule
from tvmlite.passes import get_pipeline
from tvmlite.passes.lower import inject_prefetch
from tvmlite.script import from_source

# As TVM 0.27 prints it (its parser takes "llvm.prefetch.p0" too and prints "llvm.prefetch").
PREFETCHING = '''# from tvmlite.script import tir as T

@T.prim_func
def f(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for i in range(1024):
        T.call_llvm_intrin("void", "llvm.prefetch", T.address_of(A[i + 64]), 0, 3, 1)
        B[i] = A[i] * T.float32(2.0)'''


def test_prefetch_round_trips_and_runs() -> None:
    func = from_source(PREFETCHING)
    assert func.script() == PREFETCHING
    ex = tvmlite.compile(func)
    assert "call void @llvm.prefetch.p0(ptr" in ex.get_source("ll")
    a, b = np.arange(1024, dtype="float32"), np.zeros(1024, "float32")
    ex["f"](a, b)  # the last 64 iterations prefetch past the end of A: harmless
    np.testing.assert_array_equal(b, a * 2)


def test_interpreter_runs_a_prefetch_as_nothing() -> None:
    lowered = get_pipeline("lower")(IRModule({"f": from_source(PREFETCHING)}))
    a, b = np.arange(1024, dtype="float32"), np.zeros(1024, "float32")
    InterpreterExecutor(lowered).call("f", [a, b])
    np.testing.assert_array_equal(b, a * 2)


def test_address_of_a_vector_is_refused() -> None:
    src = PREFETCHING.replace("T.address_of(A[i + 64])", "T.address_of(A[i:i + 4])").replace("range(1024)", "range(1020)")
    with pytest.raises(CodegenError, match="address_of takes one element"):
        tvmlite.compile(from_source(src))


MARKED = '''# from tvmlite.script import tir as T

@T.prim_func
def f(W: T.Buffer((T.int64(2048),), "float32"), X: T.Buffer((T.int64(64),), "float32"), Y: T.Buffer((T.int64(32),), "float32")):
    T.func_attr({"tir.noalias": True})
    acc = T.decl_buffer((T.int64(32),), scope="local")
    tmp = T.decl_buffer((T.int64(16),))
    for c in range(T.int64(32)):
        acc[c] = T.float32(0.0)
    for k in T.serial(T.int64(64), annotations={"tvmlite.prefetch": 1024}):
        for c in T.unroll(T.int64(2)):
            acc[c * T.int64(16):c * T.int64(16) + T.int64(16)] = acc[c * T.int64(16):c * T.int64(16) + T.int64(16)] + T.Broadcast(X[k], 16) * W[k * T.int64(32) + c * T.int64(16):k * T.int64(32) + c * T.int64(16) + T.int64(16)]
        for j in range(T.int64(4)):
            tmp[T.int64(0):T.int64(16)] = W[j * T.int64(16):j * T.int64(16) + T.int64(16)]
    for c in range(T.int64(32)):
        Y[c] = acc[c]'''

# One prefetch per value of the unrolled loop (the two weight vectors of an iteration, 256 floats =
# 1 KB ahead); none for the load inside the serial j loop (no fixed address per iteration), for the
# scalar X[k] or for the local buffers; the annotation goes.
INJECTED = MARKED.replace("""
    for k in T.serial(T.int64(64), annotations={"tvmlite.prefetch": 1024}):
""", """
    for k in range(T.int64(64)):
        T.call_llvm_intrin("void", "llvm.prefetch", T.address_of(W[k * T.int64(32) + T.int64(256)]), 0, 3, 1)
        T.call_llvm_intrin("void", "llvm.prefetch", T.address_of(W[k * T.int64(32) + T.int64(272)]), 0, 3, 1)
""")


def test_inject_prefetch_writes_the_marked_loops_prefetches() -> None:
    func = from_source(MARKED)
    out = inject_prefetch(func)
    assert INJECTED != MARKED and out.script() == INJECTED
    assert inject_prefetch(out) is out  # nothing marked any more: the same function back


def test_inject_prefetch_keeps_the_numbers() -> None:
    rng = np.random.default_rng(3)
    w, x = rng.standard_normal(2048).astype("float32"), rng.standard_normal(64).astype("float32")
    y = np.zeros(32, "float32")
    ex = tvmlite.compile(IRModule({"f": inject_prefetch(from_source(MARKED))}), tir_pipeline="lower")
    ex["f"](w, x, y)
    np.testing.assert_allclose(y, (w.reshape(64, 32) * x[:, None]).sum(0), rtol=1e-5, atol=1e-5)


def test_unrolled_or_unmarked_loops_get_no_prefetch() -> None:
    unrolled = from_source(MARKED.replace('T.serial(T.int64(64), annotations={"tvmlite.prefetch": 1024})',
                                          'T.unroll(T.int64(64), annotations={"tvmlite.prefetch": 1024})'))
    text = inject_prefetch(unrolled).script()
    assert "llvm.prefetch" not in text and "tvmlite.prefetch" not in text  # the annotation goes too
    plain = from_source(MARKED.replace(', annotations={"tvmlite.prefetch": 1024}', ""))
    assert inject_prefetch(plain) is plain


CONV = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, {c}, 14, 14), "float32"), w: R.Tensor(({c}, {c}, 3, 3), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w, padding=[1, 1, 1, 1]))
            R.output(a)
        return a
'''


@pytest.mark.parametrize("channels, prefetches", [(64, True), (32, False)])
def test_default_schedule_prefetches_large_conv_weights(channels: int, prefetches: bool) -> None:
    """A 64 -> 64 3x3 conv has 147 KB of weights (prefetched), a 32 -> 32 one 37 KB (not)."""
    from tvmlite.passes.schedule.rule_support import PREFETCH_BYTES, PREFETCH_MIN_BYTES

    assert (PREFETCH_BYTES, PREFETCH_MIN_BYTES) == (16 * 1024, 128 * 1024)
    ex = tvmlite.compile(get_pipeline("default")(from_source(CONV.format(c=channels))))
    assert ("llvm.prefetch" in ex.get_source("tir")) is prefetches
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, channels, 14, 14)).astype("float32")
    w = rng.standard_normal((channels, channels, 3, 3)).astype("float32")
    got = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](x, w).numpy()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))).astype("float64")
    want = sum(np.einsum("nchw,oc->nohw", xp[:, :, i:i + 14, j:j + 14], w[:, :, i, j]) for i in range(3) for j in range(3))
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-4, atol=1e-3)


POOLED = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, {n}, {n}), "float32"), w: R.Tensor((64, 16, 1, 1), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.nn.conv2d(x, w))
            b = R.nn.max_pool2d(a, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
            R.output(b)
        return b
'''


@pytest.mark.parametrize("size", [112, 32])
def test_packed_pool_reads_its_padded_input_in_place(size: int) -> None:
    """The max pool after a conv (packed, NCHW16c) inlines its padding: no buffer of padded rows per
    task, no copy to prefetch for (a 3.2 MB input as a 256 KB one); the -inf border still counts."""
    ex = tvmlite.compile(get_pipeline("default")(from_source(POOLED.format(n=size))))
    pools = [n for n in ex.kernel_names() if "pool" in n]
    text = ex.lowered[pools[0]].script() if pools else ""
    assert pools and "pad_temp" not in text and "llvm.prefetch" not in text
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 16, size, size)).astype("float32")
    w = rng.standard_normal((64, 16, 1, 1)).astype("float32")
    got = tvmlite.VirtualMachine(ex, tvmlite.cpu())["main"](x, w).numpy()
    a = np.maximum(np.einsum("nchw,oc->nohw", x, w[:, :, 0, 0]), 0)
    padded = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    half = size // 2
    want = np.max([padded[:, :, i:i + 2 * half:2, j:j + 2 * half:2] for i in range(3) for j in range(3)], axis=0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
