# tvmlite: T.ceildiv builds (a + b - 1) // b; T.meta_var values are substituted
from tvm.script import tir as T


@T.prim_func
def chunks(count: T.Buffer((2,), "int32"), n: T.int32):
    width = T.meta_var(16)
    count[1] = T.ceildiv(n, width)
