# tvmlite: tensor-core fragment intrinsics (printed as in TVM v0.23; tvmlite prints T.decl_buffer where 0.27 prints T.alloc_buffer)
from tvm.script import tir as T


@T.prim_func
def wmma_tile(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16"), C: T.Buffer((16, 16), "float32")):
    fa = T.decl_buffer((16, 16), "float16", scope="wmma.matrix_a")
    fb = T.decl_buffer((16, 16), "float16", scope="wmma.matrix_b")
    fc = T.decl_buffer((16, 16), "float32", scope="wmma.accumulator")
    T.evaluate(T.tvm_fill_fragment(fc.data, 16, 16, 16, 0, T.float32(0)))
    T.evaluate(T.tvm_load_matrix_sync(fa.data, 16, 16, 16, 0, A.access_ptr("r"), 16, "row_major"))
    T.evaluate(T.tvm_load_matrix_sync(fb.data, 16, 16, 16, 0, B.access_ptr("r"), 16, "col_major"))
    T.evaluate(T.tvm_mma_sync(fc.data, 0, fa.data, 0, fb.data, 0, fc.data, 0))
    T.evaluate(T.tvm_store_matrix_sync(fc.data, 16, 16, 16, 0, C.access_ptr("w"), 16, "row_major"))
