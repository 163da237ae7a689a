# tvmlite: break and continue in for and while loops (TVM prints T.break_loop() / T.continue_loop())
from tvm.script import tir as T


@T.prim_func
def first_negatives(x: T.Buffer((20,), "int32"), hits: T.Buffer((2,), "int32")):
    for q in range(20):
        if x[q] == 0:
            continue
        if x[q] < 0:
            hits[1] = q
            break
    pos = T.decl_buffer((2,), "int32")
    pos[1] = 0
    while pos[1] < 20:
        pos[1] = pos[1] + 1
        if pos[1] % 3 == 0:
            T.continue_loop()
        x[pos[1] - 1] = x[pos[1] - 1] * 2
