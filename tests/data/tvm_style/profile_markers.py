# tvmlite: profiling intrinsics as statements
from tvm.script import tir as T


@T.prim_func
def timed_copy(a: T.Buffer((32,), "int8"), b: T.Buffer((32,), "int8")):
    T.evaluate(T.start_profile_intrinsic(7))
    for n in range(32):
        b[n] = a[n]
    T.evaluate(T.end_profile_intrinsic(7))
