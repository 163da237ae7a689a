# tvmlite: T.ret(v) is the return statement (absent from 0.27: expected text as TVM v0.23 prints it)
from tvm.script import tir as T


@T.prim_func
def next_even(k: T.int32) -> T.int32:
    T.ret(k + k % 2)
