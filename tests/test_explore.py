"""``tvmlite.explore`` / ``tvmlite explore``: the stages captured from a compilation, the dataflow
graph and its layered layout, the diff rows and the page (the browser test is test_explore_browser)."""
import html
import pathlib
import re

import pytest

import tvmlite
from tvmlite import passes as P
from tvmlite.cli import main
from tvmlite.explorer import Exploration, explore
from tvmlite.explorer.graph_svg import (count_crossings, dataflow_graph, layer_assignment, layout, order_layers,
                                        place_in_order, render_svg)
from tvmlite.explorer.html import diff_rows, highlight_lines
from tvmlite.explorer.stages import capture_stages, changed_lines
from tvmlite.ir import relax as rx
from tvmlite.passes import PassContext, PassTimingInstrument
from tvmlite.script import from_source, parse_file

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
ZERO = ["LegalizeOps", "AnnotateTIROpPattern", "FoldConstant", "FuseOps", "FuseTIR"]


@pytest.fixture(scope="module")
def mlp():
    return parse_file(str(EXAMPLES / "mlp.py"))


@pytest.fixture(scope="module")
def mlp_stages(mlp):
    stages, error = capture_stages(mlp)
    assert error is None
    return stages


def _leaf_passes(timing):
    names = []

    def walk(entries):
        for e in entries:
            if e.children:
                walk(e.children)
            else:
                names.append(e.name)
    walk(timing.roots)
    return names


# ---------------------------------------------------------------- stages
def test_every_pass_the_compiler_runs_is_a_stage(mlp, mlp_stages):
    # The same compilation timed by the pass infrastructure's own instrument names the same
    # passes in the same order: stages are captured generically, whatever the pipelines hold.
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        tvmlite.compile(mlp)
    names = [s.name for s in mlp_stages]
    assert names[0] == "input"
    assert names[1:-3] == _leaf_passes(timing)
    assert names[-3:] == ["LLVM IR", "LLVM IR (optimized)", "assembly"]
    it = iter(names)
    assert all(p in it for p in ZERO + ["InlineLayoutKernels", "DefaultCPUSchedule", "LowerBlocks"])


def test_stage_texts_inputs_and_groups(mlp, mlp_stages):
    assert mlp_stages[0].text == mlp.script() + "\n"
    by_name = {s.name: s for s in mlp_stages}
    legalize = by_name["LegalizeOps"]
    assert legalize.group == "relax_pipeline" and legalize.before == mlp_stages[0].text
    assert legalize.input_stage == 0
    assert by_name["DefaultCPUSchedule"].group == "tir_pipeline"
    assert by_name["InlineLayoutKernels"].group == "InlineLayoutKernels"
    assert {s.group for s in mlp_stages[-3:]} == {"codegen"}
    for i, s in enumerate(mlp_stages):
        if s.input_stage is not None:  # the text a pass was given is the one an earlier stage printed
            assert s.input_stage < i and mlp_stages[s.input_stage].text == s.before
        if s.module is not None:
            assert s.text == s.module.script() + "\n"
        assert s.seconds is None or s.seconds >= 0
    # The lowering pipeline is given the PrimFuncs alone, which no earlier stage printed.
    assert by_name["DefaultCPUSchedule"].input_stage is None
    assert "R.function" not in by_name["DefaultCPUSchedule"].before
    assert by_name["FoldConstant"].changed is False and by_name["FuseOps"].changed is True


def test_stage_statistics(mlp_stages):
    by_name = {s.name: s for s in mlp_stages}
    assert mlp_stages[0].stats == {"lines": 35, "Relax functions": 1, "bindings": 7, "op calls": 7, "call_tir": 1,
                                   "PrimFuncs": 1, "blocks": 1, "loops": 2, "vectorized loops": 0,
                                   "parallel loops": 0}
    fuse = by_name["FuseOps"]
    assert fuse.counters == {"fused_groups": 2}
    assert fuse.stats["Relax functions"] == 3 and fuse.stats["PrimFuncs"] == 7
    assert (fuse.stats["lines added"], fuse.stats["lines removed"]) == changed_lines(fuse.before, fuse.text)
    assert by_name["FuseTIR"].stats["PrimFuncs"] == 4 and by_name["FuseTIR"].counters == {"fused_functions": 2}
    assert by_name["LowerBlocks"].stats["blocks"] == 0
    ll = by_name["LLVM IR"]
    assert ll.kind == "llvm" and ll.stats["functions"] == ll.text.count("\ndefine ")
    asm = by_name["assembly"]
    assert asm.kind == "asm" and asm.stats["functions"] >= 2 and asm.stats["instructions"] > 0


def test_changed_lines():
    assert changed_lines("a\nb\nc\n", "a\nB\nc\nd\n") == (2, 1)
    assert changed_lines("a\n", "a\n") == (0, 0)


def test_a_failing_pass_is_the_last_stage():
    @P.module_pass(name="Explode")
    def explode(mod, ctx):
        raise RuntimeError("boom")

    mod = parse_file(str(EXAMPLES / "mlp.py"))
    result = explore(mod, pipeline=P.Sequential([P.get_pass("LegalizeOps"), explode], name="mine"))
    assert [s.name for s in result.stages] == ["input", "LegalizeOps", "Explode"]
    last = result.stages[-1]
    assert last.error == "RuntimeError: boom" and last.text == result.stages[1].text and last.group == "mine"
    assert result.error.startswith('PassError: pass "Explode" failed: RuntimeError: boom')
    assert '<pre class="error">RuntimeError: boom</pre>' in result.html
    assert "stopped: PassError: pass &quot;Explode&quot; failed" in result.html


# ---------------------------------------------------------------- graph
def _op_bindings(func):
    """The op calls a Relax function binds, in order (what the graph must draw, one node each)."""
    return [b.value.op.name for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, rx.Call) and isinstance(b.value.op, rx.Op)]


def test_graph_has_a_node_per_op_and_shapes_on_edges(mlp):
    g = dataflow_graph(mlp, "main")
    ops = [n.op for n in g.nodes.values() if n.kind == "op"]
    assert ops == _op_bindings(mlp["main"]) == [
        "relax.permute_dims", "relax.matmul", "relax.add", "relax.call_tir", "relax.permute_dims",
        "relax.matmul", "relax.add"]
    assert [n.lines for n in g.nodes.values() if n.kind == "input"] == [["x"], ["w1"], ["b1"], ["w2"], ["b2"]]
    names = {n.id: n.lines[0] for n in g.nodes.values()}
    edges = [(names[u], names[v], label) for u, v, label in g.edges]
    assert edges == [
        ("w1", "permute_dims", "(128, 784) float32"), ("x", "matmul", "(n, 784) float32"),
        ("permute_dims", "matmul", "(784, 128) float32"), ("matmul", "add", "(n, 128) float32"),
        ("b1", "add", "(128,) float32"), ("add", "call_tir", "(n, 128) float32"),
        ("w2", "permute_dims", "(10, 128) float32"), ("call_tir", "matmul", "(n, 128) float32"),
        ("permute_dims", "matmul", "(128, 10) float32"), ("matmul", "add", "(n, 10) float32"),
        ("b2", "add", "(10,) float32"), ("add", "output", "(n, 10) float32")]
    relu = [n for n in g.nodes.values() if n.op == "relax.call_tir"][0]
    assert relu.lines == ["call_tir", "relu"] and relu.title == "r: (n, 128) float32"


def test_fused_functions_are_outlined_groups(mlp_stages):
    fuse = next(s for s in mlp_stages if s.name == "FuseOps")
    g = dataflow_graph(fuse.module, "main")
    groups = {n.lines[0]: n for n in g.nodes.values() if n.kind == "group"}
    assert sorted(groups) == ["fused_matmul1_add1", "fused_matmul_add_relu"]
    inner = groups["fused_matmul_add_relu"].group
    assert [n.lines for n in inner.nodes.values()] == [["call_tir", "matmul"], ["call_tir", "add"],
                                                        ["call_tir", "relu"]]
    assert len(inner.edges) == 2  # matmul -> add -> relu; the group's box takes the outside edges
    svg = render_svg(layout(g))
    assert svg.count('<g class="group"') == 2
    assert svg.count('<g class="node op"') == 2 + 3 + 2  # two transposes outside, five ops inside
    assert 'data-name="fused_matmul_add_relu"' in svg


def test_layered_layout():
    nodes = ["a", "b", "c", "d", "e"]
    edges = [("a", "c"), ("b", "c"), ("c", "d"), ("a", "d"), ("e", "d")]
    # Longest path from the sources; the input e (one output) sits just above its user.
    assert layer_assignment(nodes, edges) == {"a": 0, "b": 0, "c": 1, "d": 2, "e": 1}
    # Two crossing edges between two layers: the barycentre sweep uncrosses them.
    layers = [["p", "q"], ["r", "s"]]
    crossing = [("p", "s"), ("q", "r")]
    assert count_crossings(layers, crossing) == 1
    assert count_crossings(order_layers(layers, crossing), crossing) == 0
    # Least-squares placement keeping the order and the gaps (pool-adjacent-violators).
    assert place_in_order([0.0, 0.0], [10.0, 10.0], 10.0) == [-10.0, 10.0]
    assert place_in_order([0.0, 100.0], [10.0, 10.0], 10.0) == [0.0, 100.0]
    assert place_in_order([5.0, 0.0, 40.0], [10.0, 10.0, 10.0], 10.0) == [-7.5, 12.5, 40.0]


def test_layout_keeps_nodes_apart_and_edges_downward(mlp_stages):
    for stage in (mlp_stages[0], next(s for s in mlp_stages if s.name == "FuseOps")):
        g = layout(dataflow_graph(stage.module, "main"))
        boxes = [(n.x - n.w / 2, n.y, n.x + n.w / 2, n.y + n.h) for n in g.nodes.values()]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
        for points, _ in g.routes:
            assert all(y2 >= y1 for (_, y1), (_, y2) in zip(points, points[1:]))
        assert -1e-9 <= min(b[0] for b in boxes) and max(b[2] for b in boxes) <= g.width + 1e-9


# ---------------------------------------------------------------- diff and page
def test_diff_rows_link_both_sides_and_name_the_function():
    before = "def f():\n    a = 1\n    b = 2\n    c = 3\n"
    after = "def f():\n    a = 1\n    b = 20\n    c = 3\n    d = 4\n"
    rows = diff_rows(before, after, highlight_lines(before, "tvmscript"), highlight_lines(after, "tvmscript"))
    assert [repr(r) for r in rows] == [
        "@: @@ -1,4 +1,5 @@ f", " 1:1 def f():", " 2:2     a = 1", "-3:     b = 2", "+:3     b = 20",
        " 4:4     c = 3", "+:5     d = 4"]
    assert highlight_lines("x = 1\ny = 2\n", "tvmscript") == [
        'x <span class="o">=</span> <span class="mi">1</span>', 'y <span class="o">=</span> <span class="mi">2</span>']
    # LLVM IR: uncoloured tokens lose their spans, a keyword pygments does not know is plain text.
    assert highlight_lines("  %.9 = or disjoint i64 %.8, 64\n", "llvm") == [
        '  <span class="nv">%.9</span> = <span class="k">or</span> disjoint <span class="kt">i64</span> '
        '<span class="nv">%.8</span>, <span class="m">64</span>']


def test_page_is_self_contained_with_a_section_per_stage(mlp):
    result = explore(mlp)
    page = result.html
    n = len(result.stages)
    assert page.count('<section class="stage"') == n and len(re.findall(r'<a class="nav[^"]*" href="#stage-', page)) == n
    assert [html.unescape(m) for m in re.findall(r'<section class="stage" id="stage-\d+" data-index="\d+" '
                                                r'data-name="([^"]*)"', page)] == [s.name for s in result.stages]
    # Nothing is fetched: no external script, stylesheet, image or font (the SVG namespace is a name).
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "@import" not in page and "url(http" not in page
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {"http://www.w3.org/2000/svg"}
    # FuseOps's diff shows the fused function it wrote, and each added line links to its place.
    fuse = next(i for i, s in enumerate(result.stages) if s.name == "FuseOps")
    section = re.search(rf'<section class="stage" id="stage-{fuse}".*?</section>', page, re.S).group(0)
    assert re.search(r'<tr class="add" id="s\d+-D(\d+)"><td class="no"></td><td class="no">'
                     r'<a href="#s\d+-L\1" title="line \1 after the pass">\1</a></td><td class="sign">\+</td>'
                     r'<td class="src">    <span class="k">def</span> <span class="nf">fused_matmul_add_relu</span>',
                     section)
    assert '<figcaption>main <span class="legend"><b>green outline</b>: new at this stage</span></figcaption><svg class="graph"' in section
    assert section.count('<g class="group new"') == 2


def test_exploration_saves_and_shows_inline(mlp, tmp_path):
    path = tmp_path / "page.html"
    result = explore(mlp, path, pipeline="zero", tir_pipeline="lower")
    assert isinstance(result, Exploration) and result.path == str(path)
    assert path.read_text(encoding="utf-8") == result.html
    assert "DefaultCPUSchedule" not in [s.name for s in result.stages]  # the "lower" pipeline only
    shown = result._repr_html_()
    m = re.fullmatch(r'<iframe srcdoc="([^"]*)" style="[^"]*" sandbox="allow-scripts allow-same-origin"></iframe>',
                     shown)
    assert m and html.unescape(m.group(1)) == result.html
    assert repr(result) == f"<tvmlite.Exploration {len(result.stages)} stages saved to {path}>"
    assert tvmlite.explore is explore


def test_prim_func_only_module_has_no_graph():
    mod = from_source('''
@T.prim_func
def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1.0)
''', extra_vars={"T": tvmlite.script.tir})
    result = explore(mod)
    names = [s.name for s in result.stages]
    assert names[0] == "input" and "LegalizeOps" not in names and names[-1] == "assembly"
    assert "<svg" not in result.html and result.html.count('class="cols nograph"') == len(names)


def test_explore_rejects_what_it_cannot_compile():
    with pytest.raises(TypeError, match="explore takes an IRModule"):
        explore("not a module")
    with pytest.raises(ValueError, match="unknown pass 'Nope'"):
        explore(parse_file(str(EXAMPLES / "mlp.py")), pipeline="zero,Nope")


# ---------------------------------------------------------------- command line
def test_cli_explore_writes_the_page(tmp_path, capsys, monkeypatch):
    out = tmp_path / "report.html"
    assert main(["explore", str(EXAMPLES / "mlp.py"), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    n = int(re.fullmatch(rf"tvmlite explore: wrote {re.escape(str(out))} \((\d+) stages\)\n", err).group(1))
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count('<section class="stage"') == n
    assert "<title>tvmlite explore: " + str(EXAMPLES / "mlp.py") + "</title>" in page
    # Without -o the page is named after the script, in the current directory.
    monkeypatch.chdir(tmp_path)
    assert main(["explore", str(EXAMPLES / "mlp.py"), "--pipeline", "none", "--tir-pipeline", "lower"]) == 0
    page = (tmp_path / "mlp.html").read_text(encoding="utf-8")
    assert "LegalizeOps" not in page and "LowerBlocks" in page


def test_cli_explore_errors(tmp_path, capsys, monkeypatch):
    assert main(["explore", str(EXAMPLES / "mlp.py"), "-o", str(tmp_path / "x.html"), "--pipeline", "Nope"]) == 2
    assert "tvmlite explore: error: unknown pass 'Nope'" in capsys.readouterr().err
    script = tmp_path / "m.html"
    script.write_text((EXAMPLES / "mlp.py").read_text())
    monkeypatch.chdir(tmp_path)
    assert main(["explore", str(script)]) == 2
    assert f"the page would overwrite {script}: give -o FILE" in capsys.readouterr().err


def test_notebook_shows_the_page_inline(tmp_path, mlp_stages):
    nbformat = pytest.importorskip("nbformat", reason="the notebook check needs nbformat (pip install nbclient ipykernel)")
    nbclient = pytest.importorskip("nbclient", reason="the notebook check needs nbclient (pip install nbclient ipykernel)")
    pytest.importorskip("ipykernel", reason="the notebook check needs ipykernel (pip install nbclient ipykernel)")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import tvmlite\nfrom tvmlite.script import parse_file\n"
                                          f"tvmlite.explore(parse_file({str(EXAMPLES / 'mlp.py')!r}))")]
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=300,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    (out,) = nb.cells[0].outputs
    shown = out["data"]["text/html"]
    m = re.fullmatch(r'<iframe srcdoc="([^"]*)" style="[^"]*" sandbox="allow-scripts allow-same-origin"></iframe>',
                     shown)
    assert m and html.unescape(m.group(1)).startswith("<!DOCTYPE html>")
    assert html.unescape(m.group(1)).count('<section class="stage"') == len(mlp_stages)
    assert out["data"]["text/plain"] == f"<tvmlite.Exploration {len(mlp_stages)} stages>"


def test_a_weight_every_layer_reads_is_drawn_above_each_user():
    from tvmlite.script import ir as I
    from tvmlite.script import relax as R
    layers = "\n".join(f"            h{i + 1} = R.nn.relu(R.matmul(h{i}, w))" for i in range(4))
    mod = from_source(f'''
@I.ir_module
class Chain:
    @R.function
    def main(h0: R.Tensor((2, 8), dtype="float32"), w: R.Tensor((8, 8), dtype="float32")):
        with R.dataflow():
{layers}
            R.output(h4)
        return h4
''', extra_vars={"I": I, "R": R})
    g = layout(dataflow_graph(mod, "main"))
    inputs = [n for n in g.nodes.values() if n.kind == "input"]
    assert [n.lines[0] for n in inputs] == ["h0", "w", "w", "w", "w"]
    assert all(sum(1 for u, _, _ in g.edges if u == n.id) == 1 for n in inputs)
    # The chain stays straight: the weights beside it give way instead of pushing it aside.
    xs = [n.x for n in g.nodes.values() if n.kind == "op"]
    assert max(xs) - min(xs) < 5
    matmuls = [n for n in g.nodes.values() if n.op == "relax.matmul"]
    for copy, user in zip(inputs[1:], matmuls):
        assert (copy.id, user.id, "(8, 8) float32") in g.edges
        assert copy.y + copy.h < user.y and user.y - (copy.y + copy.h) <= 50  # right above its user


def test_graph_marks_what_each_pass_added(mlp_stages):
    from tvmlite.explorer.graph_svg import module_graphs, new_nodes

    def added(name):
        i = next(k for k, s in enumerate(mlp_stages) if s.name == name)
        stage = mlp_stages[i]
        (g,) = module_graphs(stage.module)
        (before,) = module_graphs(mlp_stages[stage.input_stage].module)
        nodes = {n.id: n for n in _all(g)}
        return sorted(tuple(nodes[k].lines) for k in new_nodes(g, before))

    # LegalizeOps turns each op into a call of its PrimFunc (relu was one already).
    assert added("LegalizeOps") == [("call_tir", "add"), ("call_tir", "add1"), ("call_tir", "matmul"),
                                    ("call_tir", "matmul1"), ("call_tir", "transpose"), ("call_tir", "transpose1")]
    assert added("AnnotateTIROpPattern") == []
    # FuseOps adds the two groups; the calls inside them were drawn before.
    assert added("FuseOps") == [("fused_matmul1_add1",), ("fused_matmul_add_relu",)]
    assert added("FuseTIR") == [("call_tir", "fused_matmul1_add1"), ("call_tir", "fused_matmul_add_relu")]


def _all(g):
    for n in g.nodes.values():
        yield n
        if n.group is not None:
            yield from _all(n.group)


def test_page_outlines_new_nodes(mlp):
    page = explore(mlp).html
    sections = re.findall(r'<section class="stage".*?</section>', page, re.S)
    fuse = next(s for s in sections if 'data-name="FuseOps"' in s)
    assert fuse.count('<g class="group new"') == 2 and '<g class="node op new"' not in fuse
    assert "<b>green outline</b>: new at this stage" in fuse
    assert " new" not in sections[0].split('<div class="right">')[1]  # the input has nothing before it


def test_explore_compiles_under_the_callers_pass_context(mlp):
    timing = PassTimingInstrument()
    with PassContext(disabled_pass=["FoldConstant"], instruments=[timing]) as ctx:
        result = explore(mlp)
        assert ctx.instruments == [timing]  # the recorder was there for the compilation only
    names = [s.name for s in result.stages]
    assert "FoldConstant" not in names and "FuseOps" in names
    assert names[1:-3] == _leaf_passes(timing)  # the caller's instruments saw the same passes
