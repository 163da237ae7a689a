# from tvm.script import tir as T

@T.prim_func
def next_even(k: T.int32) -> T.int32:
    return k + k % 2
