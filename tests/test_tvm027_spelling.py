"""TVM 0.27's printed TVMScript reads as it is: its spellings (``tirx as T``, ``s_tir=True``,
``T.sblock``, ``"tirx.noalias"``, ``out_ty=``/``ty_args=``, ``x: T.let[T.int64] = v``) and its
module-level size variables (``n = TypeVar("n")``). The texts below are what TVM 0.27 printed."""
import numpy as np

import tvmlite
from tvmlite.ir import structural_equal
from tvmlite.passes import LegalizeOps
from tvmlite.script import from_source

# TVM 0.27's LegalizeOps of R.argmax(x, axis=1), x: (2, 3) float32, as it printed it
ARGMAX_027 = """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def argmax(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), x_red: T.Buffer((T.int64(2),), "int64")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        x_red_temp_v0 = T.sblock_alloc_buffer((T.int64(2),), "int64")
        x_red_temp_v1 = T.sblock_alloc_buffer((T.int64(2),))
        for ax0, k1 in T.grid(T.int64(2), T.int64(3)):
            with T.sblock("x_red_temp"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                T.reads(x[v_ax0, v_k1])
                T.writes(x_red_temp_v0[v_ax0], x_red_temp_v1[v_ax0])
                with T.init():
                    x_red_temp_v0[v_ax0] = T.int64(-1)
                    x_red_temp_v1[v_ax0] = T.float32(-340282346638528859811704183484516925440.0)
                v_x_red_temp_v0: T.let[T.int64] = T.Select(x_red_temp_v1[v_ax0] > x[v_ax0, v_k1] or x_red_temp_v1[v_ax0] == x[v_ax0, v_k1] and x_red_temp_v0[v_ax0] < v_k1, x_red_temp_v0[v_ax0], v_k1)
                v_x_red_temp_v1: T.let[T.float32] = T.Select(x_red_temp_v1[v_ax0] > x[v_ax0, v_k1], x_red_temp_v1[v_ax0], x[v_ax0, v_k1])
                x_red_temp_v0[v_ax0] = v_x_red_temp_v0
                x_red_temp_v1[v_ax0] = v_x_red_temp_v1
        for ax0 in range(T.int64(2)):
            with T.sblock("x_red"):
                v_ax0 = T.axis.spatial(T.int64(2), ax0)
                T.reads(x_red_temp_v0[v_ax0])
                T.writes(x_red[v_ax0])
                x_red[v_ax0] = x_red_temp_v0[v_ax0]

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2,), dtype="int64"):
        cls = Module
        gv = R.call_tir(cls.argmax, (x,), out_ty=R.Tensor((2,), dtype="int64"))
        return gv
"""

# TVM 0.27's LegalizeOps of R.nn.relu(x), x: ("m", "n"): sizes shared by the functions are TypeVars
RELU_SYMBOLIC_027 = """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def relu(x: T.Buffer((m, n), "float32"), compute: T.Buffer((m, n), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i0, i1 in T.grid(m, n):
            with T.sblock("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(x[v_i0, v_i1])
                T.writes(compute[v_i0, v_i1])
                compute[v_i0, v_i1] = T.max(x[v_i0, v_i1], T.float32(0.0))

    @R.function
    def main(x: R.Tensor((m, n), dtype="float32")) -> R.Tensor((m, n), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.relu, (x,), out_ty=R.Tensor((m, n), dtype="float32"))
        return gv
"""

# out_ty=, ty_args= and a let binding, as TVM 0.27 printed them
CALLS_027 = """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        # with T.sblock("root"):
        for i in range(4):
            with T.sblock("b"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi])
                T.writes(B[vi])
                n: T.let[T.float32] = A[vi] * T.float32(2.0)
                B[vi] = n + T.float32(1.0)

    @R.function(pure=False)
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        a = R.call_tir(cls.add, (x,), out_ty=R.Tensor((4,), dtype="float32"))
        b = R.call_dps_packed("my_func", (y,), out_ty=R.Tensor((4,), dtype="float32"))
        p: R.Tensor((4,), dtype="float32") = R.call_packed("f", a, b, ty_args=(R.Tensor((4,), dtype="float32"),))
        return p
"""


def uncommented(text):
    """The printed imports made real (TVM prints them as comments)."""
    return text.replace("# from", "from")


def relax_main(params, body):
    return from_source(f"""from tvmlite.script import ir as I
from tvmlite.script import relax as R
@I.ir_module
class Module:
    @R.function
    def main({params}):
        gv = {body}
        return gv
""")


def test_tvm_027_legalized_module_reads_as_tvmlite_legalizes_it():
    got = from_source(uncommented(ARGMAX_027))
    want = LegalizeOps()(relax_main('x: R.Tensor((2, 3), "float32")', "R.argmax(x, axis=1)"))
    assert structural_equal(got, want)
    text = got.script()
    assert '@T.prim_func(private=True)' in text and 'T.func_attr({"tir.noalias": True})' in text
    assert 'v_x_red_temp_v0: T.int64 = T.Select(' in text and 'with T.block("x_red_temp"):' in text
    assert 'out_sinfo=R.Tensor((2,), dtype="int64")' in text


def test_tvm_027_type_vars_are_module_level_sizes():
    got = from_source(uncommented(RELU_SYMBOLIC_027))
    assert 'def main(x: R.Tensor(("m", "n"), dtype="float32")) -> R.Tensor(("m", "n"), dtype="float32"):' in got.script()
    ex = tvmlite.compile(got)
    x = np.random.default_rng(0).standard_normal((3, 5)).astype("float32")
    vm = tvmlite.VirtualMachine(ex, tvmlite.cpu())
    np.testing.assert_array_equal(vm["main"](x).numpy(), np.maximum(x, 0))


def test_tvm_027_call_keywords_and_let_bindings():
    got = from_source(uncommented(CALLS_027))
    text = got.script()
    assert 'a = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))' in text
    assert 'b = R.call_dps_packed("my_func", (y,), out_sinfo=R.Tensor((4,), dtype="float32"))' in text
    assert 'R.call_packed("f", a, b, sinfo_args=(R.Tensor((4,), dtype="float32"),))' in text
    assert "n: T.float32 = A[vi] * T.float32(2.0)" in text
    assert structural_equal(from_source(text), got)  # and it round-trips in tvmlite's spelling


def test_tirx_namespace_in_python():
    from tvmlite.script import ir as I
    from tvmlite.script import tirx as T

    @I.ir_module
    class Module:
        @T.prim_func(s_tir=True)
        def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.sblock("b"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)

    a = np.arange(4, dtype="float32")
    b = np.zeros(4, "float32")
    tvmlite.compile(Module)["double"](a, b)
    np.testing.assert_array_equal(b, a * 2)
