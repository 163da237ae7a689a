# tvmlite: warp shuffles over a thread-bound loop
from tvm.script import tir as T


@T.prim_func
def warp_sum(vals: T.Buffer((32,), "float32")):
    for lane in T.thread_binding(32, thread="threadIdx.x"):
        m = T.tvm_warp_activemask()
        vals[lane] = vals[lane] + T.tvm_warp_shuffle_down(m, vals[lane], 16, 32, 32)
        vals[lane] = vals[lane] + T.tvm_warp_shuffle_xor(m, vals[lane], 8, 32, 32)
        vals[lane] = T.tvm_warp_shuffle_up(m, vals[lane], 1, 32, 32)
        vals[lane] = T.tvm_warp_shuffle(m, vals[lane], 0, 32, 32)
