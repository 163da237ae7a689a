# from tvm.script import tir as T

@T.prim_func
def masked(a: T.handle, flag: T.bool):
    n = T.int32()
    A = T.match_buffer(a, (n,))
    # with T.block("root"):
    for i in range(n):
        with T.block("m"):
            vi = T.axis.spatial(n, i)
            T.reads(A[vi])
            T.writes(A[vi])
            T.block_attr({"keep": 1})
            A[vi] = T.if_then_else(flag, A[vi], T.float32(0.0))
