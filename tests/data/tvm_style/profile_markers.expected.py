# from tvm.script import tir as T
# from tvm.tirx.layout import Axis

@T.prim_func
def timed_copy(a: T.Buffer((32,), "int8"), b: T.Buffer((32,), "int8")):
    T.start_profile_intrinsic(7)
    for n in range(32):
        b[n] = a[n]
    T.end_profile_intrinsic(7)
