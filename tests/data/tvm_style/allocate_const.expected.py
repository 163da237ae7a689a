# from tvm.script import tir as T

@T.prim_func
def lookup(idx: T.Buffer((6,), "int32"), out: T.Buffer((6,), "float32")):
    table_data = T.allocate_const([0.5, 1.5, 2.5, 3.5], "float32", [4])
    for h in range(6):
        table = T.Buffer((4,), data=table_data)
        out[h] = table[idx[h] % 4]
