# tvmlite: T.allocate + a matching T.decl_buffer(data=...) is one T.decl_buffer (0.27 has no T.allocate)
from tvm.script import tir as T


@T.prim_func
def staged(inp: T.Buffer((12,), "float32"), res: T.Buffer((12,), "float32")):
    stage_data = T.allocate([12], "float32", "global")
    stage = T.decl_buffer((12,), "float32", data=stage_data)
    for i in range(12):
        stage[i] = inp[i] + T.float32(1)
    for i in range(12):
        res[i] = stage[i] * T.float32(2)
