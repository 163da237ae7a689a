# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fill(ptr: T.handle("float32", "global"), count: T.int32):
        view = T.decl_buffer((32,), data=ptr)
        for j in range(count):
            view[j] = T.float32(7.0)

    @T.prim_func(private=True)
    def twice(k: T.int32) -> T.int32:
        return k * 2

    @T.prim_func
    def main(data: T.Buffer((32,), "float32")):
        Module.fill(data.data, 32)
        data[0] = T.Cast("float32", Module.twice(21))
