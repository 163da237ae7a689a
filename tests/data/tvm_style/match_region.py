# tvmlite: T.match_buffer of a region, its shape and dtype taken from the region
from tvm.script import tir as T


@T.prim_func
def window(G: T.Buffer((12, 12), "int16")):
    for r in range(3):
        with T.block("win"):
            vr = T.axis.spatial(3, r)
            T.reads(G[vr * 4:vr * 4 + 4, 0:12])
            T.writes(G[vr * 4:vr * 4 + 4, 0:12])
            W = T.match_buffer(G[vr * 4:vr * 4 + 4, 0:12])
            for c in range(12):
                W[0, c] = W[1, c]
