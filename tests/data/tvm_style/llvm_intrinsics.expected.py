# from tvm.script import tir as T
# from tvm.tirx.layout import Axis

@T.prim_func
def bit_counts(src: T.Buffer((8,), "uint16"), dst: T.Buffer((8,), "uint16")):
    for m in range(8):
        dst[m] = T.call_llvm_pure_intrin("uint16", "llvm.ctpop", T.uint32(1), src[m])
    T.call_extern("int32", "record", T.address_of(dst[0]))
