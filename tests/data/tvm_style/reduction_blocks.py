# tvmlite: a reduction with T.init and a root allocation
from tvm.script import tir as T


@T.prim_func
def row_sum_sq(M: T.Buffer((16, 12), "float32"), S: T.Buffer((16,), "float32")):
    sq = T.alloc_buffer((16, 12), "float32")
    for a, b in T.grid(16, 12):
        with T.block("square"):
            va, vb = T.axis.remap("SS", [a, b])
            sq[va, vb] = M[va, vb] * M[va, vb]
    for a, b in T.grid(16, 12):
        with T.block("sum"):
            va, vb = T.axis.remap("SR", [a, b])
            with T.init():
                S[va] = T.float32(0)
            S[va] = S[va] + sq[va, vb]
