# tvmlite: PTX intrinsics with their dtype first (absent from 0.27: expected text as TVM v0.23 prints it)
from tvm.script import tir as T


@T.prim_func
def mma_step(a: T.Buffer((8,), "float16"), b: T.Buffer((4,), "float16"), c: T.Buffer((4,), "float32"), s: T.Buffer((256,), "float16")):
    T.evaluate(T.ptx_ldmatrix("float16", T.bool(False), 4, ".b16", a.data, 0, s.data, 0))
    T.evaluate(T.ptx_mma("float32", "m16n8k16", "row", "col", "fp16", "fp16", "fp32", a.data, 0, b.data, 0, c.data, 0, T.bool(False)))
    T.evaluate(T.mma_store("float32", 16, 8, s.data, c.data, 0, 8))
