"""Relax's distributed dialect: device meshes in the module's global infos, ``R.DTensor`` struct
info with its ``"mesh[0]"`` reference and placement, the ``R.dist.*`` ops, DTensor results of
elementwise ops, the errors TVM gives for what it rejects, and the compiler's refusal. The expected
texts are what TVM prints for the same scripts."""
from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.ir import relax as rx
from tvmlite.ir import structural_equal, tir
from tvmlite.ir.global_info import DeviceMesh, Placement
from tvmlite.ir.op import OpError
from tvmlite.relax import op
from tvmlite.script.errors import ScriptError
from tvmlite.script.parser import from_source

HEADER = "# from tvmlite.script import ir as I\n# from tvmlite.script import relax as R\n\n"

MESHES = ('    I.module_global_infos({"mesh": [R.device_mesh((2, 2), I.Range(0, 4)), '
          'R.device_mesh((1,), I.Range(4, 5)), R.device_mesh((2,), [5, 7])]})\n')

SOURCE = '''@I.ir_module
class Module:
    I.module_attrs({"device_num": 10})
''' + MESHES + '''
    @R.function
    def foo(x: R.DTensor((128, 128), "float32", device_mesh="mesh[0]", placement="S[0], R"),
            w: R.DTensor((128,), "float32", device_mesh="mesh[0]", placement="R, S[0]")
            ) -> R.DTensor((128, 128), "float32", device_mesh="mesh[0]", placement="R, R"):
        gv0 = R.dist.redistribute(x, device_mesh="mesh[0]", placement="R, R")
        gv1 = R.dist.annotate_sharding(gv0, device_mesh="mesh[1]", placement="S[1]")
        gv2 = R.add(gv0, x)
        gv3 = R.add(x, w)
        gv4 = R.exp(gv3)
        return gv0
'''

# TVM (0.23 and later) prints the module so: the mesh as a reference, the placement as text,
# both positional; R.add propagates the inputs' shardings (w's axis 0 is the output's axis 1).
PRINTED = HEADER + '''@I.ir_module
class Module:
    I.module_attrs({"device_num": 10})
''' + MESHES + '''    @R.function
    def foo(x: R.DTensor((128, 128), "float32", "mesh[0]", "S[0], R"), w: R.DTensor((128,), "float32", "mesh[0]", "R, S[0]")) -> R.DTensor((128, 128), "float32", "mesh[0]", "R, R"):
        gv0: R.DTensor((128, 128), "float32", "mesh[0]", "R, R") = R.dist.redistribute(x, device_mesh="mesh[0]", placement="R, R")
        gv1: R.DTensor((128, 128), "float32", "mesh[0]", "R, R") = R.dist.annotate_sharding(gv0, device_mesh="mesh[1]", placement="S[1]")
        gv2: R.DTensor((128, 128), "float32", "mesh[0]", "S[0], R") = R.add(gv0, x)
        gv3: R.DTensor((128, 128), "float32", "mesh[0]", "S[0], S[1]") = R.add(x, w)
        gv4: R.DTensor((128, 128), "float32", "mesh[0]", "S[0], S[1]") = R.exp(gv3)
        return gv0'''


def _module():
    return from_source(SOURCE)


def test_module_prints_as_tvm_and_round_trips():
    mod = _module()
    assert mod.script() == PRINTED
    again = from_source(mod.script())
    assert structural_equal(again, mod)
    assert again.script() == PRINTED


def test_device_meshes_in_the_global_infos():
    meshes = _module().global_infos["mesh"]
    assert [(m.shape, m.device_ids) for m in meshes] == [((2, 2), (0, 1, 2, 3)), ((1,), (4,)), ((2,), (5, 7))]
    assert meshes[0].device_range is not None and meshes[2].device_range is None
    # A list of ids and the equal range are different spellings: TVM prints each back as written.
    assert not structural_equal(DeviceMesh((2,), (0, 1)), DeviceMesh.from_range((2,), 0, 2))
    assert structural_equal(DeviceMesh.from_range((2,), 0, 2), DeviceMesh.from_range((2,), 0, 2))


def test_dtensor_struct_info():
    x = _module()["foo"].params[0]
    s = x.struct_info
    assert isinstance(s, rx.DTensorStructInfo)
    assert s.device_mesh is _module().global_infos["mesh"][0] or s.device_mesh.shape == (2, 2)
    assert [spec.axis for spec in s.placement.specs] == [0, None]
    assert s.placement.text() == "S[0], R"
    assert (s.tensor_sinfo.dtype, len(s.tensor_sinfo.shape)) == ("float32", 2)


def test_placement_text():
    # What TVM's Placement.from_text accepts, printed back in its canonical form.
    for text, printed in [("S[0], R", "S[0], R"), ("S[0],R", "S[0], R"), (" R ", "R"), ("", ""),
                          ("R,R,R", "R, R, R")]:
        assert Placement.from_text(text).text() == printed
    for text in ("s[0]", "S0", "S[ 0 ], R", "S[x]"):
        with pytest.raises(ValueError):
            Placement.from_text(text)


def test_structural_equality_sees_mesh_and_placement():
    a = from_source(SOURCE)
    b = from_source(SOURCE.replace('placement="S[1]")', 'placement="R")'))
    c = from_source(SOURCE.replace('device_mesh="mesh[1]", placement="S[1]"', 'device_mesh="mesh[2]", placement="S[1]"'))
    assert not structural_equal(a, b)
    assert not structural_equal(a, c)
    assert structural_equal(a, from_source(SOURCE))


LOCAL_VIEW = '''@I.ir_module
class Module:
    I.module_global_infos({"mesh": [R.device_mesh((2,), I.Range(0, 2))]})
    @T.prim_func
    def copy(a: T.Buffer((T.int64(64), T.int64(128)), "float32"), b: T.Buffer((T.int64(64), T.int64(128)), "float32")):
        for i, j in T.grid(T.int64(64), T.int64(128)):
            b[i, j] = a[i, j]

    @R.function
    def foo(x: R.DTensor((128, 128), "float32", device_mesh="mesh[0]", placement="S[0]")):
        y = R.dist.call_tir_local_view(Module.copy, (x,), out_sinfo=R.DTensor((128, 128), "float32", device_mesh="mesh[0]", placement="S[0]"))
        z = R.dist.call_tir_local_view(Module.copy, (x,), out_sinfo=[R.DTensor((128, 128), "float32", device_mesh="mesh[0]", placement="S[0]"), R.DTensor((128, 128), "float32", device_mesh="mesh[0]", placement="R")])
        r = R.dist.redistribute(x, device_mesh="mesh[0]", placement="R")
        s = R.dist.redistribute_replica_to_shard(r, num_workers=2, axis=1)
        return s
'''

LOCAL_VIEW_PRINTED = '''    @R.function
    def foo(x: R.DTensor((128, 128), "float32", "mesh[0]", "S[0]")) -> R.DTensor((128, 128), "float32", "mesh[0]", "S[1]"):
        cls = Module
        y: R.DTensor((128, 128), "float32", "mesh[0]", "S[0]") = R.dist.call_tir_local_view(cls.copy, (x,), out_sinfo=R.DTensor((128, 128), "float32", "mesh[0]", "S[0]"))
        z: R.Tuple(R.DTensor((128, 128), "float32", "mesh[0]", "S[0]"), R.DTensor((128, 128), "float32", "mesh[0]", "R")) = R.dist.call_tir_local_view(cls.copy, (x,), out_sinfo=[R.DTensor((128, 128), "float32", "mesh[0]", "S[0]"), R.DTensor((128, 128), "float32", "mesh[0]", "R")])
        r: R.DTensor((128, 128), "float32", "mesh[0]", "R") = R.dist.redistribute(x, device_mesh="mesh[0]", placement="R")
        s: R.DTensor((128, 128), "float32", "mesh[0]", "S[1]") = R.dist.redistribute_replica_to_shard(r, num_workers=2, axis=1)
        return s'''


def test_call_tir_local_view_and_replica_to_shard():
    mod = from_source(LOCAL_VIEW)
    text = mod.script()
    assert text.endswith(LOCAL_VIEW_PRINTED)
    z = mod["foo"].body.blocks[0].bindings[1].var
    assert [f.placement.text() for f in z.struct_info.fields] == ["S[0]", "R"]
    assert structural_equal(from_source(text), mod)


def test_unknown_shape_or_dtype_prints_keywords():
    # TVM writes the parts after an unknown shape or dtype by keyword.
    src = SOURCE.split("    @R.function")[0] + '''    @R.function
    def f(x: R.DTensor((128, 128), "float32", device_mesh="mesh[0]", placement="S[0], R")):
        a: R.DTensor(dtype="float32", device_mesh="mesh[0]", placement="S[0], R", ndim=2) = x
        b: R.DTensor((128, 128), device_mesh="mesh[0]", placement="S[0], R") = x
        return b
'''
    text = from_source(src).script()
    assert ('a: R.DTensor(dtype="float32", device_mesh="mesh[0]", placement="S[0], R", ndim=2) = x' in text)
    assert 'b: R.DTensor((128, 128), device_mesh="mesh[0]", placement="S[0], R") = x' in text
    assert structural_equal(from_source(text), from_source(src))


def test_struct_info_outside_a_module_prints_the_mesh():
    mesh = DeviceMesh((2, 2), (0, 1, 2, 3))
    t = rx.TensorStructInfo((tir.IntImm("int64", 32), tir.IntImm("int64", 32)), "float32")
    s = rx.DTensorStructInfo(t, mesh, Placement.from_text("S[1], R"))
    assert s.script() == 'R.DTensor((32, 32), "float32", R.device_mesh((2, 2), [0, 1, 2, 3]), "S[1], R")'
    void = rx.DTensorStructInfo(rx.TensorStructInfo(t.shape, "void"), mesh, Placement.from_text("S[1], R"))
    assert void.script() == ('R.DTensor((32, 32), device_mesh=R.device_mesh((2, 2), [0, 1, 2, 3]), '
                             'placement="S[1], R")')


def test_op_api_builds_the_ops():
    mesh = DeviceMesh.from_range((2,), 0, 2)
    x = rx.Var("x", rx.DTensorStructInfo(rx.TensorStructInfo(None, "float32", 2), mesh, Placement.from_text("S[1]")))
    call = op.dist.redistribute(x, mesh, "R")
    assert call.struct_info.placement.text() == "R" and call.struct_info.tensor_sinfo.ndim == 2
    assert str(call) == 'R.dist.redistribute(x, device_mesh=R.device_mesh((2,), R.Range(0, 2)), placement="R")'


def _body(body: str) -> str:
    return (SOURCE.split("    @R.function")[0] + '''    @R.function
    def foo(x: R.DTensor((128, 64), "float32", device_mesh="mesh[0]", placement="S[0], R"),
            y: R.DTensor((128, 64), "float32", device_mesh="mesh[0]", placement="R, R"),
            z: R.Tensor((128, 64), "float32"), v: R.DTensor((128, 64), "float32", device_mesh="mesh[2]", placement="R")):
        ''' + body + "\n        return a\n")


def test_inference_of_the_ops():
    cases = {
        'a = R.dist.annotate_sharding(z, device_mesh="mesh[1]", placement="S[1]")': 'R.Tensor((128, 64), dtype="float32")',
        'a = R.dist.redistribute_replica_to_shard(z, num_workers=2, axis=1)': 'R.Tensor((128, 32), dtype="float32")',
        'a = R.dist.redistribute_replica_to_shard(z, 4, 0)': 'R.Tensor((32, 64), dtype="float32")',
        'a = R.dist.redistribute(x, device_mesh="mesh[1]", placement="S[1]")': 'R.DTensor((128, 64), "float32", "mesh[1]", "S[1]")',
        'a = R.dist.redistribute_replica_to_shard(v, num_workers=2, axis=1)': 'R.DTensor((128, 64), "float32", "mesh[2]", "S[1]")',
        'a = R.multiply(x, y)': 'R.DTensor((128, 64), "float32", "mesh[0]", "S[0], R")',
        'a = R.less(y, y)': 'R.DTensor((128, 64), "bool", "mesh[0]", "R, R")',
        'a = R.sigmoid(x)': 'R.DTensor((128, 64), "float32", "mesh[0]", "S[0], R")',
    }
    for body, sinfo in cases.items():
        text = from_source(_body(body)).script()
        assert f"        a: {sinfo} = {body[4:].replace('z, 4, 0', 'z, num_workers=4, axis=0')}" in text, text


# (binding, message, the text the caret is under): TVM rejects each of them too.
ERRORS = [
    ('a = R.add(x, z)', "R.add: a distributed op takes R.DTensor inputs, not tensors: argument x2", "z"),
    ('a = R.add(x, v)', "the distributed inputs must be on one device mesh", "v"),
    ('a = R.dist.redistribute(z, device_mesh="mesh[0]", placement="R, R")',
     "R.dist.redistribute: the input must be a distributed tensor (R.DTensor)", "z"),
    ('a = R.dist.redistribute(x, device_mesh="mesh[1]", placement="S[1], R")',
     "the device mesh and the placement must have the same number of dimensions", 'placement="S[1], R"'),
    ('a = R.dist.redistribute(x, device_mesh="mesh[1]", placement="S[2]")',
     "the sharding axis 2 of placement 'S[2]' must be smaller than the tensor's 2 dimensions", 'placement="S[2]"'),
    ('a = R.dist.redistribute(x, device_mesh="mesh[3]", placement="S[1]")',
     "the global infos 'mesh' hold 3 entries, there is no mesh[3]", '"mesh[3]"'),
    ('a = R.dist.redistribute(x, device_mesh="meshes[0]", placement="S[1]")',
     "the module has no global infos 'meshes' (I.module_global_infos defines: 'mesh')", '"meshes[0]"'),
    ('a = R.dist.redistribute(x, device_mesh="mesh", placement="S[1]")',
     "a device mesh is named by its entry in the module's global infos", '"mesh"'),
    ('a = R.dist.redistribute(x, device_mesh="mesh[1]", placement="s[1]")',
     "a placement is 'R' or 'S[axis]' per mesh dimension", 'placement="s[1]"'),
    ('a = R.dist.redistribute_replica_to_shard(z, num_workers=3, axis=1)',
     "the size of axis 1 must be divisible by num_workers: it is 64, num_workers is 3", "num_workers=3"),
    ('a = R.dist.redistribute_replica_to_shard(z, num_workers=2, axis=2)',
     "axis 2 is out of range for a tensor of 2 dimensions", "axis=2"),
    ('a = R.dist.redistribute_replica_to_shard(y, num_workers=2, axis=1)',
     'a distributed input must be replicated ("R") on a 1-D mesh, got placement "R, R" on a 2-D mesh', "y"),
    ('a: R.DTensor((128, 64), "float16", device_mesh="mesh[0]", placement="S[0], R") = x',
     "does not match the value", 'R.DTensor((128, 64), "float16"'),
    ('a: R.DTensor((128, 64), "float32", device_mesh="mesh[0]", placement="S[2], R") = x',
     "the sharding axis 2 of placement 'S[2], R' must be smaller", '"S[2], R"'),
    ('a: R.DTensor((128, 64), "float32", device_mesh="mesh[0]", placement="R") = x',
     "the device mesh and the placement must have the same number of dimensions: the mesh has 2", '"R"'),
    ('a: R.DTensor(device_mesh="mesh[0]", placement="S[0], R") = x',
     "placement 'S[0], R' shards a tensor of unknown rank", '"S[0], R"'),
]


# TVM accepts these; tvmlite refuses them with a clear message: the sharding of matmul and the
# other non-elementwise ops (TVM's axis-graph propagation), inputs that shard one mesh dimension
# along two axes (TVM keeps one of them), an R.DTensor without a mesh (TVM's placeholder mesh) and
# an annotation that places the value elsewhere than it is.
REFUSED = [
    ('a = R.add(x, R.dist.redistribute(y, device_mesh="mesh[0]", placement="S[1], R"))',
     "the inputs shard mesh dimension 0 along different output axes (0, 1)", 'R.dist.redistribute'),
    ('a = R.matmul(x, y)', "R.matmul does not take distributed tensors (R.DTensor)", "x"),
    ('a: R.DTensor((128, 64), "float32") = x', "R.DTensor needs device_mesh=", "R.DTensor"),
    ('a: R.DTensor((128, 64), "float32", device_mesh="mesh[0]", placement="R, R") = x',
     "does not match the value", "R.DTensor"),
]


@pytest.mark.parametrize("body,message,under", ERRORS + REFUSED)
def test_errors_are_located(body, message, under):
    src = _body(body)
    with pytest.raises(ScriptError) as info:
        from_source(src)
    err = str(info.value)
    assert message in err, err
    line = src.splitlines()[info.value.line - 1]
    assert line[info.value.col - 1:].startswith(under), (line, info.value.col)


def test_mesh_errors():
    bad_count = SOURCE.replace("R.device_mesh((2,), [5, 7])", "R.device_mesh((2,), [5, 6, 7])")
    with pytest.raises(ScriptError, match="the number of device ids must match the product of the shape"):
        from_source(bad_count)
    with pytest.raises(ScriptError, match="the shape of a device mesh is a tuple of positive ints"):
        from_source(SOURCE.replace("R.device_mesh((1,), I.Range(4, 5))", "R.device_mesh(1, I.Range(4, 5))"))
    with pytest.raises(ScriptError, match=r"mesh\[0\] is not a device mesh"):
        from_source(SOURCE.replace(MESHES, '    I.module_global_infos({"mesh": [I.dummy_global_info()]})\n'))
    lone = '''@R.function
def f(x: R.DTensor((4,), "float32", device_mesh="mesh[0]", placement="R")):
    return x
'''
    with pytest.raises(ScriptError, match=r"the module has no global infos 'mesh' \(I.module_global_infos defines: none\)"):
        from_source(lone)


def test_op_errors_name_the_attribute():
    mesh = DeviceMesh((2,), (0, 1))
    x = rx.Var("x", rx.DTensorStructInfo(rx.TensorStructInfo(None, "float32", 2), mesh, Placement.from_text("R")))
    with pytest.raises(OpError) as info:
        op.dist.redistribute(x, "mesh[0]", "R")
    assert info.value.arg == "device_mesh" and "expected a device mesh" in info.value.message
    with pytest.raises(OpError) as info:
        op.dist.redistribute_replica_to_shard(x, 0, 1)
    assert info.value.arg == "num_workers" and "expected a positive number, got 0" in info.value.message


def test_compile_refuses_distributed_modules():
    with pytest.raises(ValueError, match=r"function 'foo' is distributed \(the variable 'x', an R.DTensor\)"):
        tvmlite.compile(_module())
    plain = from_source('''@I.ir_module
class Module:
''' + MESHES + '''    @R.function
    def main(x: R.Tensor((4, 2), "float32")):
        y = R.dist.annotate_sharding(x, device_mesh="mesh[2]", placement="S[0]")
        return y
''')
    with pytest.raises(ValueError, match=r"function 'main' is distributed \(the call R.dist.annotate_sharding\)"):
        tvmlite.compile(plain)
    # The same module without the annotation compiles and runs.
    ex = tvmlite.compile(from_source('''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 2), "float32")):
        y = R.add(x, x)
        return y
'''))
    a = np.arange(8, dtype="float32").reshape(4, 2)
    np.testing.assert_allclose(tvmlite.VirtualMachine(ex)["main"](a).numpy(), a + a)


def test_python_api_spells_it_as_tvm():
    from tvmlite import relax
    from tvmlite.relax.distributed import DeviceMesh as Mesh, DTensorStructInfo, Placement as Place

    mesh = Mesh((2, 2), range(0, 4))
    assert structural_equal(mesh, _module().global_infos["mesh"][0])
    assert Mesh((2,), [5, 7]).device_ids == (5, 7)
    s = DTensorStructInfo(relax.TensorStructInfo((32, 32), "float32"), mesh, Place.from_text("S[1], R"))
    assert s.script() == 'R.DTensor((32, 32), "float32", R.device_mesh((2, 2), R.Range(0, 4)), "S[1], R")'


def test_graph_passes_keep_distributed_modules_printable():
    from tvmlite.passes import CanonicalizeBindings, DeadCodeElimination, FuseOps, LegalizeOps

    mod = _module()
    for p in (LegalizeOps(), CanonicalizeBindings(), FuseOps()):
        out = p(mod)
        assert structural_equal(out, mod)  # nothing to do on a global view of DTensors
    out = DeadCodeElimination()(mod)
    assert out.script() == HEADER + PRINTED[len(HEADER):].split("        gv1")[0] + "        return gv0"
    assert structural_equal(from_source(out.script()), out)


DIST_CALL_TIR = '''@I.ir_module
class Module:
    I.module_global_infos({"mesh": [R.device_mesh((2, 2), I.Range(0, 4))]})
    @T.prim_func
    def add_one(x: T.Buffer((T.int64(8), T.int64(8)), "float32"), y: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        for i, j in T.grid(T.int64(8), T.int64(8)):
            y[i, j] = x[i, j] + T.float32(1)

    @R.function
    def foo(x: R.DTensor((8, 8), "float32", device_mesh="mesh[0]", placement="S[0], R")):
        a = R.dist.call_tir(Module.add_one, x, R.DTensor(shape=(8, 8), dtype="float32", device_mesh="mesh[0]", placement="S[0], R"))
        b = R.call_tir(Module.add_one, (a,), out_sinfo=R.DTensor((8, 8), "float32", device_mesh="mesh[0]", placement="R, R"))
        return b
'''


def test_call_tir_with_distributed_outputs_prints_as_dist_call_tir():
    # TVM's R.dist.call_tir builds a relax.call_tir; its printer writes a call_tir whose outputs are
    # DTensors as R.dist.call_tir, without the binding's annotation (as for call_tir).
    mod = from_source(DIST_CALL_TIR)
    a = mod["foo"].body.blocks[0].bindings[0].value
    assert a.op.name == "relax.call_tir"
    text = mod.script()
    assert text.endswith('''    def foo(x: R.DTensor((8, 8), "float32", "mesh[0]", "S[0], R")) -> R.DTensor((8, 8), "float32", "mesh[0]", "R, R"):
        cls = Module
        a = R.dist.call_tir(cls.add_one, (x,), out_sinfo=R.DTensor((8, 8), "float32", "mesh[0]", "S[0], R"))
        b = R.dist.call_tir(cls.add_one, (a,), out_sinfo=R.DTensor((8, 8), "float32", "mesh[0]", "R, R"))
        return b''')
    assert structural_equal(from_source(text), mod)
    with pytest.raises(ValueError, match="the variable 'x', an R.DTensor"):
        tvmlite.compile(mod)


def test_dist_const_round_trips():
    mod = from_source('''
from tvm.script import ir as I
from tvm.script import relax as R
@I.ir_module
class Module:
    I.module_global_infos({"mesh": [R.device_mesh((2,), I.Range(0, 2))]})

    @R.function
    def foo(x: R.DTensor((4, 4), "float32", "mesh[0]", "S[0]")):
        y = R.add(x, R.dist.const(2.0, struct_info=R.DTensor((4, 4), "float32", "mesh[0]", "S[0]")))
        return y
''')
    text = mod.script()
    assert 'R.add(x, R.dist.const(2.0, struct_info=R.DTensor((4, 4), "float32", "mesh[0]", "S[0]")))' in text
    c = mod["foo"].body.blocks[0].bindings[0].value.args[1]
    assert c.data.shape == (4, 4) and (c.data == 2).all()
    assert structural_equal(from_source(text), mod)
