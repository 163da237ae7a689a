# from tvm.script import tir as T

@T.prim_func
def wmma_tile(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16"), C: T.Buffer((16, 16), "float32")):
    fa = T.decl_buffer((16, 16), "float16", scope="wmma.matrix_a")
    fb = T.decl_buffer((16, 16), "float16", scope="wmma.matrix_b")
    fc = T.decl_buffer((16, 16), scope="wmma.accumulator")
    T.tvm_fill_fragment(fc.data, 16, 16, 16, 0, T.float32(0.0))
    T.tvm_load_matrix_sync(fa.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float16"), A.data, 0, 256, 1), 16, "row_major")
    T.tvm_load_matrix_sync(fb.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float16"), B.data, 0, 256, 1), 16, "col_major")
    T.tvm_mma_sync(fc.data, 0, fa.data, 0, fb.data, 0, fc.data, 0)
    T.tvm_store_matrix_sync(fc.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float32"), C.data, 0, 256, 2), 16, "row_major")
