# from tvm.script import tir as T

@T.prim_func
def staged(inp: T.Buffer((12,), "float32"), res: T.Buffer((12,), "float32")):
    stage = T.decl_buffer((12,))
    for i in range(12):
        stage[i] = inp[i] + T.float32(1.0)
    for i in range(12):
        res[i] = stage[i] * T.float32(2.0)
