# tvmlite: T.comm_reducer as an attribute node and a function attribute
from tvm.script import tir as T


@T.prim_func
def argmax_pair(vals: T.Buffer((8,), "float32"), best: T.Buffer((2,), "float32")):
    T.func_attr({"reducer": T.comm_reducer(lambda a0, a1, b0, b1: (T.Select(a1 >= b1, a0, b0), T.max(a1, b1)), [-1, T.float32(0)])})
    acc = T.decl_buffer((2,), "float32", scope="local")
    with T.attr(T.comm_reducer(lambda p, q: p * q, [T.float32(1)]), "reduce_scope", T.reinterpret("handle", T.uint64(0))):
        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), vals[0], T.bool(True), acc.data, T.int32(0)))
    best[1] = acc[1]
