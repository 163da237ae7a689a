# from tvm.script import tir as T
# from tvm.tirx.layout import Axis

@T.prim_func
def guarded_exp(v: T.Buffer((10,), "float32")):
    for j in range(10):
        v[j] = T.if_then_else(j < 5, T.exp(v[j]), v[j])
        T.call_extern("void", "trace_value", v[j])
        T.call_extern("int32", "checked_index", j)
