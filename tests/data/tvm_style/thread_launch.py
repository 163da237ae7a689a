# tvmlite: GPU threads: T.launch_thread, T.env_thread and T.thread_binding loops
from tvm.script import tir as T


@T.prim_func
def gpu_scale(v: T.Buffer((256,), "float32")):
    bx = T.env_thread("blockIdx.x")
    T.launch_thread(bx, 4)
    tx = T.launch_thread("threadIdx.x", 64)
    v[bx * 64 + tx] = v[bx * 64 + tx] * T.float32(3)
