# tvmlite: dtype= on intrinsic calls
from tvm.script import tir as T


@T.prim_func
def guarded_exp(v: T.Buffer((10,), "float32")):
    for j in range(10):
        v[j] = T.if_then_else(j < 5, T.exp(v[j], dtype="float32"), v[j], dtype="float32")
        T.evaluate(T.call_extern("trace_value", v[j], dtype=""))
        T.evaluate(T.call_extern("checked_index", j, dtype="int32"))
