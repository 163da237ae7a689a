"""The explore page in a real browser: headless Chromium opens it with ``#selftest`` (the page's
own script then visits every stage and writes what rendered into the DOM), and a screenshot of
the FuseOps stage is saved as a CI artefact ($CI_ARTIFACTS, else artifacts/ in the clone).
Skipped, with a message, where no Chromium is installed."""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from tvmlite.explorer import explore
from tvmlite.explorer.html import diff_rows, highlight_lines
from tvmlite.ir import relax as rx
from tvmlite.script import parse_file

ROOT = pathlib.Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium found (apt-get install chromium): the explore page is not checked in a browser")


def _run(browser: str, profile: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def _ops(mod, func) -> list[str]:
    """The op calls a function binds, with those of the fused functions it calls (drawn inside)."""
    ops = []
    for block in func.body.blocks:
        for b in block.bindings:
            value = b.value
            if isinstance(value, rx.Call) and isinstance(value.op, rx.Op):
                ops.append(value.op.name)
            elif isinstance(value, rx.Call) and getattr(value.op, "name_hint", None) in mod and \
                    mod[value.op.name_hint].attrs.get("Primitive", False):
                ops += _ops(mod, mod[value.op.name_hint])
    return ops


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    browser = _browser()
    version = subprocess.run([browser, "--version"], capture_output=True, text=True, timeout=60)
    if version.returncode != 0:
        pytest.skip(f"{browser} does not start here: {version.stderr.strip()[:200]}")
    tmp = tmp_path_factory.mktemp("explore")
    result = explore(parse_file(str(ROOT / "examples" / "mlp.py")), tmp / "mlp.html")
    run = _run(browser, tmp / "profile", "--virtual-time-budget=5000", "--dump-dom",
               (tmp / "mlp.html").as_uri() + "#selftest")
    found = re.search(r'<pre id="selftest-result">(.*?)</pre>', run.stdout, re.S)
    assert found, f"the page's self-test did not run (exit {run.returncode}): {run.stderr[-2000:]}"
    report = json.loads(found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    return browser, tmp, result, report


def test_every_stage_renders(page):
    _, _, result, report = page
    assert report["errors"] == []
    assert [s["name"] for s in report["stages"]] == [s.name for s in result.stages]
    for shown, stage in zip(report["stages"], result.stages):
        assert shown["visible"], stage.name
        assert shown["codeLines"] == stage.text.count("\n") and shown["codeHeight"] > 0, stage.name
        if stage.changed:
            rows = diff_rows(stage.before, stage.text, highlight_lines(stage.before, stage.kind),
                             highlight_lines(stage.text, stage.kind))
            assert shown["diffRows"] == sum(r.tag != "hunk" for r in rows) and shown["diffHeight"] > 0, stage.name


def test_graph_has_a_node_per_op(page):
    _, _, result, report = page
    with_graph = 0
    for shown, stage in zip(report["stages"], result.stages):
        mod = stage.module
        funcs = [] if mod is None else [gv.name_hint for gv, f in mod.functions_items()
                                        if isinstance(f, rx.Function) and not f.attrs.get("Primitive", False)]
        assert [g["function"] for g in shown["graphs"]] == funcs, stage.name
        for g in shown["graphs"]:
            with_graph += 1
            assert g["ops"] == _ops(mod, mod[g["function"]]), stage.name
            assert g["width"] > 0 and g["height"] > 0 and g["edges"] > 0
    assert with_graph >= 6  # the input and every graph-level pass


def test_fuse_ops_diff_shows_the_fused_function(page):
    _, _, result, report = page
    fuse = next(s for s in report["stages"] if s["name"] == "FuseOps")
    added = [line.strip() for line in fuse["added"]]
    assert any(line.startswith("def fused_matmul_add_relu(") for line in added)
    assert 'R.func_attr({"Primitive": True})' in added
    assert sorted(fuse["graphs"][0]["groups"]) == ["fused_matmul1_add1", "fused_matmul_add_relu"]


def test_screenshot_is_saved_as_an_artefact(page):
    browser, tmp, result, _ = page
    artifacts = pathlib.Path(os.environ.get("CI_ARTIFACTS") or ROOT / "artifacts")
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "explore-fuseops.png"
    fuse = next(i for i, s in enumerate(result.stages) if s.name == "FuseOps")
    run = _run(browser, tmp / "profile", "--window-size=1400,1000", f"--screenshot={shot}",
               (tmp / "mlp.html").as_uri() + f"#stage-{fuse}")
    assert shot.is_file(), run.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000  # a page, not a blank window


HARNESS = """<!DOCTYPE html><html><body>%s<pre id="out"></pre><script>
var frame = document.querySelector('iframe');
frame.addEventListener('load', function () {
  var d = frame.contentDocument, w = frame.contentWindow, out = {};
  function active() { var s = d.querySelector('section.stage.active'); return s ? s.dataset.name : null; }
  d.querySelector('a.nav[data-stage="%d"]').click();
  out.afterNav = active();
  var link = d.querySelector('section.stage.active tr.add td.no a');
  out.link = link.getAttribute('href');
  link.click();
  var line = d.getElementById(out.link.slice(1));
  out.lineFlashes = line.classList.contains('flash');
  out.codeShown = d.querySelector('section.stage.active .panel.on').dataset.panel;
  var box = d.getElementById('search');
  box.value = 'fused_matmul_add_relu';
  box.dispatchEvent(new w.Event('input'));
  out.searchInfo = d.getElementById('search-info').textContent;
  out.hits = [].map.call(d.querySelectorAll('a.nav'), function (a) { return a.querySelector('.hits').textContent; });
  d.dispatchEvent(new w.KeyboardEvent('keydown', {key: 'j'}));
  out.afterKey = active();
  out.href = w.location.href;
  out.errors = w.__errors;
  document.getElementById('out').textContent = JSON.stringify(out);
});
</script></body></html>"""


def test_inline_page_navigates_links_and_search(page):
    # As a notebook shows it: the page in an iframe's srcdoc. Links stay inside it (they would
    # otherwise resolve against the notebook's address), the diff's line numbers open the script
    # at that line, the search counts matching lines per stage, and "j" goes to the next stage.
    browser, tmp, result, _ = page
    fuse = next(i for i, s in enumerate(result.stages) if s.name == "FuseOps")
    harness = tmp / "notebook.html"
    harness.write_text(HARNESS % (result._repr_html_(), fuse), encoding="utf-8")
    run = _run(browser, tmp / "profile", "--virtual-time-budget=5000", "--dump-dom", harness.as_uri())
    found = re.search(r'<pre id="out">(.*?)</pre>', run.stdout, re.S)
    assert found and found.group(1), f"the harness did not run (exit {run.returncode}): {run.stderr[-2000:]}"
    out = json.loads(found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert out["errors"] == []
    assert out["afterNav"] == "FuseOps" and out["href"] == "about:srcdoc"
    assert re.fullmatch(rf"#s{fuse}-L\d+", out["link"]) and out["lineFlashes"] and out["codeShown"] == "code"
    counts = [s.text.count("fused_matmul_add_relu") and sum("fused_matmul_add_relu" in line
                                                              for line in s.text.splitlines())
              for s in result.stages]
    assert out["hits"] == [str(n) if n else "" for n in counts]
    assert out["searchInfo"] == f"{sum(counts)} lines in {sum(1 for n in counts if n)} stages"
    assert out["afterKey"] == result.stages[fuse + 1].name
