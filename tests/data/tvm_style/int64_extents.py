# tvmlite: int64 extents, loop variables and literals
from tvm.script import tir as T


@T.prim_func
def fill_ramp(out: T.Buffer((T.int64(6), T.int64(5)), "int64")):
    for p in range(T.int64(6)):
        for q in T.serial(T.int64(1), T.int64(5)):
            out[p, q] = p * T.int64(5) + q
