# from tvm.script import tir as T

@T.prim_func
def on_target(z: T.Buffer((4,), "float32")):
    T.func_attr({"target": T.target({"kind": "llvm", "mcpu": "skylake"}), "tir.noalias": True})
    for i in range(4):
        z[i] = T.float32(1.0)
