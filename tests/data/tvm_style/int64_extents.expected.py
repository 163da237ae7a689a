# from tvm.script import tir as T
# from tvm.tirx.layout import Axis

@T.prim_func
def fill_ramp(out: T.Buffer((T.int64(6), T.int64(5)), "int64")):
    for p in range(T.int64(6)):
        for q in range(T.int64(1), T.int64(5)):
            out[p, q] = p * T.int64(5) + q
