# tvmlite: a @T.macro is inlined where it is called
from tvm.script import tir as T


@T.macro
def clamp_store(buf, idx, lo):
    buf[idx] = T.max(buf[idx], lo)


@T.prim_func
def clamp_all(P: T.Buffer((20,), "float32")):
    for s in range(20):
        clamp_store(P, s, T.float32(-1))
