# tvmlite: LLVM intrinsics by name and by T.llvm_lookup_intrinsic_id, T.address_of, dtype= first
from tvm.script import tir as T


@T.prim_func
def bit_counts(src: T.Buffer((8,), "uint16"), dst: T.Buffer((8,), "uint16")):
    for m in range(8):
        dst[m] = T.call_llvm_pure_intrin(T.llvm_lookup_intrinsic_id("llvm.ctpop.i16"), T.uint32(1), src[m], dtype="uint16")
    T.evaluate(T.call_extern("int32", "record", T.address_of(dst[0])))
