# from tvm.script import tir as T
# from tvm.tirx.layout import Axis

@T.prim_func
def gpu_scale(v: T.Buffer((256,), "float32")):
    bx = T.launch_thread("blockIdx.x", 4)
    tx = T.launch_thread("threadIdx.x", 64)
    v[bx * 64 + tx] = v[bx * 64 + tx] * T.float32(3.0)
