"""AnnotateTIROpPattern: the pattern of each PrimFunc derived from its blocks' loads and stores
(elementwise 0, broadcast 1, injective 2, comm-reduce 3, out-elementwise-fusable 4, opaque 8)."""
import pathlib
import sys

import numpy as np
import pytest

from tvmlite import relax
from tvmlite.ir import tir
from tvmlite.passes import AnnotateTIROpPattern, LegalizeOps, Sequential, get_pass
from tvmlite.ir.tir_pattern import analyze_op_pattern
from tvmlite.script import from_source

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from legalize_util import build, params_for  # noqa: E402

from corpus_files import read_corpus  # noqa: E402  (tests/data/corpus)
op = relax.op


def patterns(make, *shapes, dtype="float32"):
    """``{prim_func name: op_pattern}`` after LegalizeOps + AnnotateTIROpPattern of one op call."""
    arrays = [np.zeros(s, dtype) for s in shapes]
    mod = Sequential([LegalizeOps(), AnnotateTIROpPattern()])(build(make, params_for(arrays)))
    return {gv.name_hint: f.attrs["op_pattern"] for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)}


def test_seed001_mlp():
    mod = AnnotateTIROpPattern()(from_source(read_corpus("seed001_mlp_dynamic_legalized.py")))
    got = {gv.name_hint: f.attrs.get("op_pattern") for gv, f in mod.functions_items() if isinstance(f, tir.PrimFunc)}
    assert got == {"add": 0, "add1": 0, "matmul": 4, "matmul1": 4, "relu": 0, "transpose": 2, "transpose1": 2}
    assert 'T.func_attr({"op_pattern": 2, "tir.noalias": True})' in mod.script()


@pytest.mark.parametrize("make, shapes, expected", [
    (op.exp, [(2, 3)], 0),
    (op.nn.relu, [(2, 3)], 0),
    (op.add, [(2, 3), (3,)], 0),  # an elementwise load makes broadcasting elementwise
    (op.add, [(2, 3), (2, 3)], 0),
    (lambda x: op.broadcast_to(x, (4, 3)), [(3,)], 1),
    (lambda x: op.expand_dims(x, [0]), [(2, 3)], 1),
    (op.permute_dims, [(2, 3)], 2),
    (lambda x: op.reshape(x, (3, 2)), [(2, 3)], 2),
    (lambda x, y: op.concat((x, y), axis=1), [(2, 3), (2, 1)], 2),
    (lambda x: op.strided_slice(x, (relax.PrimValue(0),), (relax.PrimValue(1),), (relax.PrimValue(2),)), [(4,)], 2),
    (lambda x: op.sum(x, axis=[1]), [(2, 3)], 3),
    (lambda x: op.max(x), [(2, 3)], 3),
    (op.matmul, [(2, 3), (3, 4)], 4),
    (op.nn.dense, [(2, 3), (4, 3)], 4),
    (op.nn.conv2d, [(1, 2, 5, 5), (3, 2, 3, 3)], 4),
    (lambda x: op.nn.max_pool2d(x, pool_size=2), [(1, 1, 4, 4)], 4),  # not a pure reduction
    (lambda x: op.nn.softmax(x), [(2, 3)], 4),  # a reduction followed by an elementwise output
    (lambda x: op.mean(x, axis=[1]), [(2, 3)], 4),
    (lambda x: op.argmax(x, axis=1), [(2, 3)], 4),
    (lambda x: op.layout_transform(x, lambda i: (i // 2, i % 2)), [(4,)], 8),  # computed store indices
])
def test_patterns_of_legalized_ops(make, shapes, expected):
    (pattern,) = patterns(make, *shapes).values()
    assert pattern == expected


def test_block_without_store_is_opaque_and_annotations_are_kept():
    mod = from_source('''
@I.ir_module
class Module:
    @T.prim_func
    def no_store(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("b"):
                vi = T.axis.spatial(4, i)
                T.evaluate(0)

    @T.prim_func
    def fixed(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"op_pattern": 7})
        for i in range(4):
            with T.block("b"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi]

    @T.prim_func
    def zero(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(4):
            with T.block("b"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[3 - vi]
''')
    out = AnnotateTIROpPattern()(mod)
    assert out["no_store"].attrs["op_pattern"] == 8
    assert out["fixed"].attrs["op_pattern"] == 7  # a non-zero annotation is kept
    assert out["zero"].attrs["op_pattern"] == 2  # zero is recomputed (TVM's HasNonzeroAttr)


def test_two_stores_and_non_reduction_gather():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi, 0] + A[0, vi]
            B[0] = A[vi, vi]
''')
    assert analyze_op_pattern(func) == 8


def test_pure_reduction_vs_windowed_reduction():
    pure = from_source('''
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + A[vi, vk]
''')
    window = from_source('''
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 3):
        with T.block("win"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + A[vi + vk]
''')
    assert analyze_op_pattern(pure) == 3
    assert analyze_op_pattern(window) == 4


def test_relax_functions_untouched_and_registered():
    mod = build(op.exp, params_for([np.zeros((2,), "float32")]))
    out = get_pass("AnnotateTIROpPattern")(LegalizeOps()(mod))
    assert "op_pattern" not in out["main"].attrs
    assert out["tir_exp"].attrs["op_pattern"] == 0


def test_a_prim_func_exporting_another_symbol_is_annotated():
    mod = from_source('''
from tvm.script import ir as I
from tvm.script import tir as T
@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "my_add"})
        for i in range(4):
            with T.block("b"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + T.float32(1)
''')
    out = AnnotateTIROpPattern()(mod)
    assert out["add"].attrs["op_pattern"] == 0 and out["add"].attrs["global_symbol"] == "my_add"
