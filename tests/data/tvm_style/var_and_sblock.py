# tvmlite: T.Var for a size, T.sblock (0.27's spelling of T.block) and T.boolean
from tvm.script import tir as T


@T.prim_func
def masked(a: T.handle, flag: T.boolean):
    n = T.Var("n", "int32")
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        with T.sblock("m"):
            vi = T.axis.spatial(n, i)
            T.sblock_attr({"keep": 1})
            A[vi] = T.if_then_else(flag, A[vi], T.float32(0))
