# tvmlite: handle parameters bound by T.match_buffer print as T.Buffer parameters
from tvm.script import tir as T


@T.prim_func
def scale_rows(x: T.handle, y: T.handle, factor: T.float32):
    T.func_attr({"tir.noalias": True})
    X = T.match_buffer(x, (8, 32), "float32")
    Y = T.match_buffer(y, (8, 32), "float32")
    for r, c in T.grid(8, 32):
        Y[r, c] = X[r, c] * factor
