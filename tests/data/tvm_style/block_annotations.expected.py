# from tvm.script import tir as T
# from tvm.tirx.layout import Axis

@T.prim_func
def relu_tiles(src: T.Buffer((64,), "float32"), dst: T.Buffer((64,), "float32")):
    # with T.block("root"):
    for t in T.serial(8, annotations={"note": "outer", "software_pipeline_stage": [0, 1]}):
        for e in T.serial(8, annotations={"vector_hint": 4}):
            with T.block("relu"):
                v, w = T.axis.remap("SS", [t, e])
                T.reads(src[v * 8 + w])
                T.writes(dst[v * 8 + w])
                T.block_attr({"fast": True, "priority": 2, "tag": "relu", "tile": [8, 8]})
                dst[v * 8 + w] = T.max(src[v * 8 + w], T.float32(0.0))
