# tvmlite: T.vscale() in a loop extent
from tvm.script import tir as T


@T.prim_func
def sve_zero(buf: T.Buffer((64,), "float32")):
    for k in range(T.vscale() * 4):
        buf[k] = T.float32(0)
