# from tvm.script import tir as T
# from tvm.tirx.layout import Axis

@T.prim_func
def row_sum_sq(M: T.Buffer((16, 12), "float32"), S: T.Buffer((16,), "float32")):
    # with T.block("root"):
    sq = T.alloc_buffer((16, 12))
    for a, b in T.grid(16, 12):
        with T.block("square"):
            va, vb = T.axis.remap("SS", [a, b])
            T.reads(M[va, vb])
            T.writes(sq[va, vb])
            sq[va, vb] = M[va, vb] * M[va, vb]
    for a, b in T.grid(16, 12):
        with T.block("sum"):
            va, vb = T.axis.remap("SR", [a, b])
            T.reads(sq[va, vb])
            T.writes(S[va])
            with T.init():
                S[va] = T.float32(0.0)
            S[va] = S[va] + sq[va, vb]
