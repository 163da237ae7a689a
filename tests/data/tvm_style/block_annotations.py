# tvmlite: block and loop annotations keep Python values
from tvm.script import tir as T


@T.prim_func
def relu_tiles(src: T.Buffer((64,), "float32"), dst: T.Buffer((64,), "float32")):
    for t in T.serial(8, annotations={"software_pipeline_stage": [0, 1], "note": "outer"}):
        for e in range(8, annotations={"vector_hint": 4}):
            with T.block("relu"):
                v = T.axis.remap("S", [t])
                w = T.axis.spatial(8, e)
                T.block_attr({"tile": [8, 8], "priority": 2, "tag": "relu", "fast": True})
                dst[v * 8 + w] = T.max(src[v * 8 + w], T.float32(0))
