"""Programs that used to compile to wrong numbers or not at all: broadcast operands after a layout
rewrite, int32 index maps, rank-0 outputs in the default schedule, R.Prim arguments of call_tir,
programs hundreds of ops long, and schedules of a PrimFunc not named ``main``. Each is compiled
with ``tvmlite.compile`` and checked against numpy."""
from __future__ import annotations

import pathlib
import re
import sys

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import tvmlite
from tvmlite.ir import tir
from tvmlite.ir.functor import DEEP_RECURSION_LIMIT, deep_recursion
from tvmlite.ir.module import IRModule
from tvmlite.passes import AlterOpLayout, ConvertLayout
from tvmlite.passes.schedule import default_schedule
from tvmlite.script import from_source

rng = np.random.default_rng(13)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype("float32")


def run(mod: IRModule, *args, **compile_options):
    """Compile ``mod`` and run its ``main``: numpy arrays, or tuples of them."""
    out = tvmlite.VirtualMachine(tvmlite.compile(mod, **compile_options), tvmlite.cpu())["main"](*args)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


def module(text: str) -> IRModule:
    ir = from_source(text)
    return ir if isinstance(ir, IRModule) else IRModule.from_expr(ir)


def conv2d_nchw(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """A stride-1 NCHW / OIHW convolution in numpy."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(xp, w.shape[2:], axis=(2, 3))  # n, c, h, w, kh, kw
    return np.einsum("nchwij,ocij->nohw", windows, w, optimize=True)


# ------------------------------------------------------------------ layout passes
@pytest.mark.parametrize("bias_shape", [(7,), (1, 1, 1, 7), (6, 7), (1, 16, 1, 1), (16, 1, 1)])
@pytest.mark.parametrize("pass_", [ConvertLayout({"relax.nn.conv2d": ["NCHW8c", "OIHW8i8o"]}),
                                   AlterOpLayout(vector_width=8)], ids=["ConvertLayout", "AlterOpLayout"])
def test_packed_conv_with_a_broadcast_bias(pass_, bias_shape):
    """A bias along W (or H, W) broadcasts on those axes in the packed layout, not on C: its
    channel block has size 1 instead of being padded to 8 with values that are not the bias."""
    mod = module(f'''
@R.function
def main(x: R.Tensor((1, 16, 6, 7), dtype="float32"), w: R.Tensor((16, 16, 3, 3), dtype="float32"), b: R.Tensor({bias_shape}, dtype="float32")):
    with R.dataflow():
        conv = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], out_dtype="float32")
        gv = R.nn.relu(R.add(conv, b))
        R.output(gv)
    return gv
''')
    packed = pass_(mod)
    assert pass_.stats["converted"] >= 1
    x, w, b = f32(1, 16, 6, 7), f32(16, 16, 3, 3), f32(*bias_shape)
    want = np.maximum(conv2d_nchw(x, w, 1) + b, 0)
    np.testing.assert_allclose(run(packed, x, w, b), want, rtol=1e-4, atol=1e-4)


def test_layout_transform_with_an_int32_index_map_compiles():
    """The passes emit int32 index maps; legalized over int64 loops, the map's literals take the
    loops' dtype instead of mixing int32 and int64 operands in codegen."""
    mod = module('''
@R.function
def main(x: R.Tensor((2, 16, 3, 5), dtype="float32")):
    with R.dataflow():
        gv = R.layout_transform(x, index_map=T.index_map(lambda i0, i1, i2, i3: (i0, i1 // 8, i2, i3, i1 % 8), index_dtype="int32"))
        R.output(gv)
    return gv
''')
    x = f32(2, 16, 3, 5)
    want = x.reshape(2, 2, 8, 3, 5).transpose(0, 1, 3, 4, 2)
    np.testing.assert_array_equal(run(mod, x), want)


def test_index_map_applied_to_int64_indices():
    """``IndexMap.map_indices`` gives the final indices in the indices' dtype."""
    from tvmlite.ir.arith import IndexMap

    imap = IndexMap.from_func(lambda i, j: (j // 4, i * 2 + j % 4), dtype="int32")
    i, j = tir.Var("i", "int64"), tir.Var("j", "int64")
    out = imap.map_indices((i, j))
    assert [e.dtype for e in out] == ["int64", "int64"]
    assert str(out[0]) == "j // T.int64(4)" and str(out[1]) == "i * T.int64(2) + j % T.int64(4)"
    with pytest.raises(ValueError, match="takes 2 indices, got 1"):
        imap.map_indices((i,))


# ------------------------------------------------------------------ rank-0 outputs
@pytest.mark.parametrize("expr, ref", [
    ("R.sum(x)", lambda a: a.sum()),
    ("R.max(x)", lambda a: a.max()),
    ("R.mean(x)", lambda a: a.mean()),
    ("R.prod(x)", lambda a: a.prod()),
    ("R.argmax(x)", lambda a: a.argmax()),
    ("R.sum(x, keepdims=True)", lambda a: a.sum(keepdims=True)),
    ("R.max(x, keepdims=True)", lambda a: a.max(keepdims=True)),
    ("R.exp(R.sum(x))", lambda a: np.exp(a.sum())),
], ids=["sum", "max", "mean", "prod", "argmax", "sum-keepdims", "max-keepdims", "exp-of-sum"])
def test_reductions_to_rank_0_under_the_default_schedule(expr, ref):
    mod = module(f'''
@R.function
def main(x: R.Tensor((1, 4), dtype="float32")):
    with R.dataflow():
        gv = {expr}
        R.output(gv)
    return gv
''')
    x = f32(1, 4)
    got, want = run(mod, x), ref(x)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


RANK0_STORE_UNDER_SPATIAL_LOOP = '''
@T.prim_func
def main(A: T.Buffer((1, 4), "float32"), C: T.Buffer((), "float32")):
    for i, k in T.grid(1, 4):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[()] = T.float32(0)
            C[()] = C[()] + A[vi, vk]
'''


def test_rank_0_store_under_a_spatial_loop():
    """The reduction rule looked at the store's last index to vectorize; a rank-0 store has none."""
    func = from_source(RANK0_STORE_UNDER_SPATIAL_LOOP)
    sch = default_schedule(func)
    assert "decompose_reduction" in str(sch.trace)
    a, c = f32(1, 4), np.zeros((), "float32")
    tvmlite.compile(IRModule({"main": func}))["main"](a, c)
    np.testing.assert_allclose(c, a.sum(), rtol=1e-6)


# ------------------------------------------------------------------ call_tir with R.Prim arguments
SCALE = '''
@I.ir_module
class Module:
    @T.prim_func
    def scale(x: T.Buffer((4,), "float32"), n: T.int64, y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("y"):
                vi = T.axis.spatial(4, i)
                y[vi] = x[vi] * T.Cast("float32", n)

    @T.prim_func
    def scale_in_place(x: T.Buffer((4,), "float32"), n: T.int64):
        for i in range(4):
            with T.block("x"):
                vi = T.axis.spatial(4, i)
                x[vi] = x[vi] * T.Cast("float32", n)

    @R.function
    def main(x: R.Tensor((4,), "float32"), n: R.Prim("int64")):
        cls = Module
        y = R.call_tir(cls.scale, (x, n), out_sinfo=R.Tensor((4,), "float32"))
        z = R.call_tir(cls.scale, (y, R.prim_value(T.int64(3))), out_sinfo=R.Tensor((4,), "float32"))
        w = R.call_tir_inplace(cls.scale_in_place, (z, R.prim_value(T.int64(5))), inplace_indices=[0], out_sinfo=R.Tensor((4,), "float32"))
        return w
'''


@pytest.mark.parametrize("tir_pipeline", ["default_tir", "lower"])
def test_call_tir_passes_prim_values_to_scalar_parameters(tir_pipeline):
    """``R.Prim`` arguments (a parameter, ``R.prim_value``) reach the PrimFunc's scalar parameter."""
    x = f32(4)
    np.testing.assert_allclose(run(from_source(SCALE), x, 2, tir_pipeline=tir_pipeline), x * 30, rtol=1e-6)


# ------------------------------------------------------------------ long programs
_CHAIN_OPS = ("R.add(v{p}, R.const(0.125, 'float32'))", "R.multiply(v{p}, R.const(0.5, 'float32'))",
              "R.nn.relu(v{p})", "R.subtract(v{p}, R.const(0.25, 'float32'))")


def chain_module(n: int) -> IRModule:
    """``main(x)``: n elementwise ops, each on the previous one's result."""
    lines = ["@R.function", 'def main(x: R.Tensor((4, 8), dtype="float32")):', "    with R.dataflow():",
             "        v0 = R.add(x, R.const(0.0, 'float32'))"]
    lines += [f"        v{i} = " + _CHAIN_OPS[i % 4].format(p=i - 1) for i in range(1, n)]
    lines += [f"        R.output(v{n - 1})", f"    return v{n - 1}"]
    return module("\n".join(lines))


def chain_numpy(x: np.ndarray, n: int) -> np.ndarray:
    for i in range(1, n):
        k = i % 4
        x = (x + np.float32(0.125) if k == 0 else x * np.float32(0.5) if k == 1
             else np.maximum(x, np.float32(0)) if k == 2 else x - np.float32(0.25))
    return x


def test_a_chain_of_1000_ops_compiles():
    """Fused groups of up to 256 ops: inlining stops at a bounded expression depth, and the
    lowering passes and codegen walk the rest without running out of Python frames."""
    x, limit = f32(4, 8), sys.getrecursionlimit()
    np.testing.assert_allclose(run(chain_module(1000), x), chain_numpy(x, 1000), rtol=1e-5, atol=1e-6)
    assert sys.getrecursionlimit() == limit  # raised only while compiling


def test_a_chain_reading_each_result_twice():
    """``v = u + u`` after ``u = ...``: inlining copies the producer into each read, so inlining
    stops at a bounded expression size instead of doubling the work (and the IR) per op."""
    lines = ["@R.function", 'def main(x: R.Tensor((4, 8), dtype="float32")):', "    with R.dataflow():",
             "        v0 = R.multiply(x, R.const(0.5, 'float32'))"]
    for i in range(1, 60):
        lines.append(f"        v{i} = " + (f"R.add(v{i - 1}, v{i - 1})" if i % 2 else f"R.multiply(v{i - 1}, R.const(0.5, 'float32'))"))
    lines += ["        R.output(v59)", "    return v59"]
    x = f32(4, 8)
    want = x * np.float32(0.5)
    for i in range(1, 60):
        want = want + want if i % 2 else want * np.float32(0.5)
    np.testing.assert_allclose(run(module("\n".join(lines)), x), want, rtol=1e-5)


def test_a_long_chain_lowered_as_written():
    """Without the schedule every op keeps its block and buffer: 255 nested buffer declarations."""
    x = f32(4, 8)
    np.testing.assert_allclose(run(chain_module(300), x, tir_pipeline="lower"), chain_numpy(x, 300),
                               rtol=1e-5, atol=1e-6)


def test_split_into_400_sections():
    mod = module('''
@R.function
def main(x: R.Tensor((400, 3), dtype="float32")):
    with R.dataflow():
        gv = R.split(x, indices_or_sections=400, axis=0)
        R.output(gv)
    return gv
''')
    x = f32(400, 3)
    out = run(mod, x)
    assert len(out) == 400
    for got, want in zip(out, np.split(x, 400)):
        np.testing.assert_array_equal(got, want)


def test_schedule_lookups_reuse_unchanged_parts_of_the_body():
    """A primitive rewrites one statement of the top-level sequence; the others keep their index,
    so a function of n blocks is not walked whole after each of its n schedules."""
    params = ", ".join(f'B{k}: T.Buffer((8,), "float32")' for k in range(3))
    text = f'''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), {params}):
''' + "".join(f'''    for i in range(8):
        with T.block("B{k}"):
            vi = T.axis.spatial(8, i)
            B{k}[vi] = A[vi] + T.float32({k})
''' for k in range(3))
    sch = tvmlite.tir.Schedule(from_source(text))
    before = sch.state.index("main")
    loop, = sch.get_loops(sch.get_block("B1"))
    sch.split(loop, [None, 4])
    after = sch.state.index("main")
    assert after is not before
    assert after.part_list[0] is before.part_list[0] and after.part_list[2] is before.part_list[2]
    assert after.part_list[1] is not before.part_list[1]
    assert sch.state.block_names("main") == ["root", "B0", "B1", "B2"]


def test_deep_recursion_restores_the_limit():
    limit = sys.getrecursionlimit()
    with deep_recursion():
        assert sys.getrecursionlimit() >= DEEP_RECURSION_LIMIT
        with deep_recursion():
            pass
        assert sys.getrecursionlimit() >= DEEP_RECURSION_LIMIT  # an inner exit keeps the outer's room
    assert sys.getrecursionlimit() == limit


# ------------------------------------------------------------------ schedules of any PrimFunc
ADD_ONE = '''
@T.prim_func
def add_one(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] + T.float32(1)
'''


def test_a_scheduled_prim_func_not_named_main_compiles():
    """As TVM, a bare PrimFunc becomes the module's ``main`` (public under that name)."""
    sch = tvmlite.tir.Schedule(from_source(ADD_ONE))
    assert [gv.name_hint for gv in sch.mod.get_global_vars()] == ["main"]
    assert sch.mod["main"].attrs["global_symbol"] == "main"
    i, = sch.get_loops(sch.get_block("B"))
    sch.vectorize(sch.split(i, [None, 8])[1])
    a, b = f32(64), np.zeros(64, "float32")
    tvmlite.compile(sch.mod)["main"](a, b)
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)


MATMUL = '''
@T.prim_func
def matmul(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 128), "float32"), C: T.Buffer((64, 128), "float32")):
    for i, j, k in T.grid(64, 128, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def test_readme_schedule_example_end_to_end(capsys):
    """The README's schedule example, as written there, on a matmul PrimFunc; compiled and run."""
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("## Schedules: fast loops"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {"tvmlite": tvmlite, "mod": from_source(MATMUL)}
    exec(code, namespace)
    printed = capsys.readouterr().out
    assert 'b0 = sch.get_block(name="C", func_name="main")' in printed
    a, b, c = f32(64, 32), f32(32, 128), np.zeros((64, 128), "float32")
    tvmlite.compile(namespace["sch"].mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def _index_entries(index) -> tuple[dict, dict]:
    """Every block and loop of a body index with its path, as comparable keys."""
    def key(path):
        return tuple((id(step.node), step.field, step.index) for step in path)

    blocks = {name: sorted((id(r), key(index.path(o, p))) for r, o, p in hits) for name, hits in index.blocks.items()}
    loops = {var: (id(loop), key(index.path(o, p))) for var, (loop, o, p) in index.loops.items()}
    return blocks, loops


def test_patched_schedule_index_matches_a_fresh_one():
    """After every primitive of the README's matmul schedule, the index patched from the previous
    one finds every block and loop where a walk of the whole body finds them."""
    from tvmlite.passes.schedule.state import _BodyIndex

    sch = tvmlite.tir.Schedule(from_source(MATMUL))

    def check():
        patched = sch.state.index("main")
        assert _index_entries(patched) == _index_entries(_BodyIndex(patched.body))
        assert sch.state.block_names("main") == _BodyIndex(patched.body).block_names()

    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 4]); check()
    j0, j1 = sch.split(j, [None, 64]); check()
    sch.reorder(j0, i0, k, i1, j1); check()
    acc = sch.cache_write(block, 0, "local"); check()
    sch.reverse_compute_at(acc, i0); check()
    sch.decompose_reduction(block, k); check()
    panel = sch.cache_read(block, 2, "global"); check()
    sch.compute_at(panel, j0); check()
    sch.unroll(i1); sch.vectorize(j1); sch.parallel(j0); check()
    assert len(sch.state.index("main").part_list) > 1  # the later steps patched a sequence of parts


@pytest.mark.parametrize("rows", [0, 1, 8])
def test_dense_with_no_rows_fused_with_a_concat(rows: int) -> None:
    """The default schedule folds an epilogue into a matmul's tiles only when the tiles reach every
    element it writes: a concat after a dense of zero rows still writes the other operand's rows."""
    mod = from_source(f"""
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({rows}, 4), "float32"), w: R.Tensor((1, 4), "float32"), y: R.Tensor((3, 1), "float32")):
        with R.dataflow():
            d = R.nn.dense(x, w)
            c = R.concat((d, y), axis=0)
            R.output(c)
        return c
""")
    x = np.ones((rows, 4), "float32")
    w = np.full((1, 4), 0.5, "float32")
    y = np.array([[1.0], [2.0], [3.0]], "float32")
    out = tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())["main"](x, w, y).numpy()
    np.testing.assert_array_equal(out, np.concatenate([x @ w.T, y]))


def test_unknown_result_shape_of_a_one_input_op_is_explained() -> None:
    """A negative-stride slice of a symbolic axis has no known result shape: the error says why
    without blaming the sizes of several arguments."""
    mod = from_source("""
@R.function
def main(x: R.Tensor(("m", 3), "float32")):
    y = R.strided_slice(x, axes=[0], begin=[2], end=[0], strides=[-1])
    return y
""")
    with pytest.raises(Exception, match=r"R.strided_slice has no kernel: the shape of its result is not known at "
                                        r"compile time .*its attributes do not determine it") as err:
        tvmlite.VirtualMachine(tvmlite.compile(mod), tvmlite.cpu())
    assert "arguments may not agree" not in str(err.value)
