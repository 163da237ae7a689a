"""The explore page: one self-contained HTML file (styles, pictures and the little script it
needs inline, nothing fetched) showing every stage of a compilation: its text highlighted with
line numbers, the diff against what its pass was given (line numbers linking to the lines in
both stages), its time and statistics, and the Relax dataflow graph as SVG.

Navigation (stage list, previous/next, ``j``/``k``), the search box and tabs are a small
inline script; without it every stage is shown one after another. Opening the page with
``#selftest`` makes the script visit every stage and write what rendered (sizes, graph
nodes, diff rows) into ``<pre id="selftest-result">``, which the browser test reads."""
from __future__ import annotations

import difflib
import html
import re
from typing import Sequence

from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import GasLexer, LlvmLexer

from ..ir import relax as rx
from ..script.highlight import TVMScriptLexer, TVMScriptStyle
from .graph_svg import Graph, module_graphs, new_nodes, render_svg
from .stages import Stage

__all__ = ["render_page", "highlight_lines", "diff_rows", "DiffRow"]

_DEF = re.compile(r"^\s*def (\w+)|^\s*(?:define|declare) [^@]*@\"?([\w.$]+)|^([\w.$]+):")


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


_STYLE_DEFS = [line for line in HtmlFormatter(style=TVMScriptStyle).get_style_defs(".hl").splitlines()
               if line.startswith(".hl")]
# Whitespace needs no colour, and a word the lexer does not know (an LLVM keyword newer than
# pygments) is no error of the text: neither keeps its span.
_STYLED = {m.group(1) for m in (re.match(r"\.hl \.(\S+) ", line) for line in _STYLE_DEFS) if m} - {"w", "err"}
_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')


def _unwrap_plain(match: re.Match) -> str:
    # Spans of token kinds the style leaves uncoloured (whitespace, most names) only weigh.
    return match.group(0) if match.group(1) in _STYLED else match.group(2)


def highlight_lines(text: str, kind: str) -> list[str]:
    """The lines of ``text`` as highlighted HTML (pygments classes), one string per line."""
    lexer = {"llvm": LlvmLexer, "asm": GasLexer}.get(kind, TVMScriptLexer)(stripnl=False, ensurenl=True)
    out = _SPAN.sub(_unwrap_plain, pygments_highlight(text, lexer, HtmlFormatter(nowrap=True)))
    lines = out.split("\n")
    n = len(text.splitlines())
    # pygments closes its spans at each line end, so each line stands alone.
    return (lines + [""] * n)[:n]


class DiffRow:
    """One row of a diff: ``tag`` is "ctx", "add", "del" or "hunk"; line numbers are 1-based."""

    __slots__ = ("tag", "old", "new", "html", "text")

    def __init__(self, tag: str, old: int | None, new: int | None, text: str, html_text: str) -> None:
        self.tag, self.old, self.new, self.text, self.html = tag, old, new, text, html_text

    def __repr__(self) -> str:
        sign = {"ctx": " ", "add": "+", "del": "-", "hunk": "@"}[self.tag]
        return f"{sign}{self.old or ''}:{self.new or ''} {self.text}"


def _enclosing(lines: Sequence[str], index: int) -> str:
    """The name of the function (or label) a line is in: the nearest definition above it."""
    for i in range(min(index, len(lines) - 1), -1, -1):
        m = _DEF.match(lines[i])
        if m:
            return next(g for g in m.groups() if g)
    return ""


def diff_rows(before: str, after: str, before_html: Sequence[str], after_html: Sequence[str],
              context: int = 3) -> list[DiffRow]:
    """A unified diff of two texts as rows (hunk headers name the function a hunk is in)."""
    old, new = before.splitlines(), after.splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        first = next(op for op in group if op[0] != "equal")  # name where the change is, not the context
        where = _enclosing(new, first[3]) if first[4] > first[3] else _enclosing(old, first[1])
        header = f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@" + (f" {where}" if where else "")
        rows.append(DiffRow("hunk", None, None, header, _esc(header)))
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                rows += [DiffRow("ctx", a1 + k + 1, b1 + k + 1, new[b1 + k], after_html[b1 + k])
                         for k in range(a2 - a1)]
                continue
            rows += [DiffRow("del", a + 1, None, old[a], before_html[a]) for a in range(a1, a2)]
            rows += [DiffRow("add", None, b + 1, new[b], after_html[b]) for b in range(b1, b2)]
    return rows


def _fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def _code_panel(index: int, lines: list[str], changed: set[int]) -> str:
    # Line numbers are CSS counters (no text to weigh or to match a search); a changed line's
    # mark links to its row in the diff.
    out = [f'<div class="code hl" data-lines="{len(lines)}">']
    for k, line in enumerate(lines, 1):
        if k in changed:
            out.append(f'<div class="ln chg" id="s{index}-L{k}"><a class="mark" href="#s{index}-D{k}" '
                       f'title="changed by this pass: see the diff">&#9679;</a>{line}</div>')
        else:
            out.append(f'<div class="ln" id="s{index}-L{k}">{line}</div>')
    out.append("</div>")
    return "".join(out)


def _diff_panel(index: int, stage: Stage, rows: list[DiffRow]) -> str:
    if stage.before is None:
        return '<div class="diff empty">nothing to compare: this stage is not a pass over the previous text</div>'
    if not rows:
        return '<div class="diff empty">no change: the pass returned the text it was given</div>'
    src = stage.input_stage
    out = [f'<table class="diff hl" data-rows="{sum(r.tag != "hunk" for r in rows)}">']
    for r in rows:
        if r.tag == "hunk":
            out.append(f'<tr class="hunk"><td colspan="4">{r.html}</td></tr>')
            continue
        old = (f'<a href="#s{src}-L{r.old}" title="line {r.old} of the pass input">{r.old}</a>'
               if r.old is not None and src is not None else (str(r.old) if r.old is not None else ""))
        new = f'<a href="#s{index}-L{r.new}" title="line {r.new} after the pass">{r.new}</a>' if r.new else ""
        rid = f' id="s{index}-D{r.new}"' if r.new and r.tag == "add" else ""
        sign = {"ctx": " ", "add": "+", "del": "&minus;"}[r.tag]
        out.append(f'<tr class="{r.tag}"{rid}><td class="no">{old}</td><td class="no">{new}</td>'
                   f'<td class="sign">{sign}</td><td class="src">{r.html or " "}</td></tr>')
    out.append("</table>")
    return "".join(out)


def _stats(stage: Stage) -> str:
    chips = []
    for key, value in stage.stats.items():
        if key in ("lines added", "lines removed"):
            continue
        if value or key in ("lines",):
            chips.append(f'<span class="chip" data-key="{_esc(key)}">{_esc(key)} <b>{value}</b></span>')
    for key, value in stage.counters.items():
        chips.append(f'<span class="chip counter" data-key="{_esc(key)}">{_esc(key)} <b>{value}</b></span>')
    return "".join(chips)


def _delta(stage: Stage) -> str:
    if stage.before is None:
        return ""
    add, rem = stage.stats.get("lines added", 0), stage.stats.get("lines removed", 0)
    if not add and not rem:
        return '<span class="delta same">=</span>'
    return f'<span class="delta"><i class="plus">+{add}</i> <i class="minus">&minus;{rem}</i></span>'


class _GraphCache:
    """The laid-out graphs of the Relax functions, once per set of function objects (IR is
    immutable, so a pass that leaves the graph alone gives back the same functions)."""

    def __init__(self) -> None:
        self.cache: dict[tuple, list[Graph]] = {}
        self.keep: list = []

    def get(self, stage: Stage | None) -> list[Graph]:
        mod = stage.module if stage is not None else None
        if mod is None:
            return []
        funcs = [(gv.name_hint, f) for gv, f in mod.functions_items() if isinstance(f, rx.Function)]
        key = tuple((name, id(f)) for name, f in funcs)
        if key not in self.cache:
            self.keep.append(funcs)
            self.cache[key] = module_graphs(mod) if funcs else []
        return self.cache[key]

    def svgs(self, stage: Stage, before: Stage | None) -> list[tuple[str, str]]:
        """(function, SVG) for a stage, the nodes its pass added marked against its input's."""
        earlier = {g.name: g for g in self.get(before)}
        return [(g.name, render_svg(g, new_nodes(g, earlier.get(g.name)) if before is not None else ()))
                for g in self.get(stage)]


def _graph_panel(graphs: list[tuple[str, str]]) -> str:
    if not graphs:
        return '<div class="graph empty">no Relax function at this stage</div>'
    legend = ' <span class="legend"><b>green outline</b>: new at this stage</span>'
    return "".join(f'<figure class="graph-box"><figcaption>{_esc(name)}{legend if " new" in svg else ""}'
                   f'</figcaption>{svg}</figure>' for name, svg in graphs)


def _section(i: int, stage: Stage, stages: Sequence[Stage], graphs: _GraphCache,
             lit: dict[tuple[str, str], list[str]]) -> str:
    def highlighted(text: str, kind: str) -> list[str]:
        # A pass's input is usually the stage before: highlight each text once.
        if (text, kind) not in lit:
            lit[text, kind] = highlight_lines(text, kind)
        return lit[text, kind]

    lines = highlighted(stage.text, stage.kind)
    rows: list[DiffRow] = []
    if stage.before is not None and stage.before != stage.text:
        before_html = highlighted(stage.before, stage.kind)
        rows = diff_rows(stage.before, stage.text, before_html, lines)
    changed = {r.new for r in rows if r.tag == "add" and r.new}
    prev_link = f'<a href="#stage-{i - 1}">&larr; {_esc(stages[i - 1].name)}</a>' if i else ""
    next_link = f'<a href="#stage-{i + 1}">{_esc(stages[i + 1].name)} &rarr;</a>' if i + 1 < len(stages) else ""
    error = f'<pre class="error">{_esc(stage.error)}</pre>' if stage.error else ""
    default_tab = "diff" if rows else "code"
    shown = graphs.svgs(stage, stages[stage.input_stage] if stage.input_stage is not None else None)
    return (f'<section class="stage" id="stage-{i}" data-index="{i}" data-name="{_esc(stage.name)}" '
            f'data-kind="{stage.kind}" data-tab="{default_tab}">'
            f'<div class="head"><h2><span class="idx">{i}</span> {_esc(stage.name)} '
            f'<small>{_esc(stage.group)}</small></h2><span class="time">{_fmt_time(stage.seconds)}</span>'
            f'{_delta(stage)}<span class="prevnext">{prev_link} {next_link}</span></div>'
            f'<div class="stats">{_stats(stage)}</div>{error}'
            f'<div class="cols{"" if shown else " nograph"}"><div class="left"><div class="tabs">'
            f'<button data-show="diff">Diff</button><button data-show="code">Script</button></div>'
            f'<div class="panel" data-panel="diff">{_diff_panel(i, stage, rows)}</div>'
            f'<div class="panel" data-panel="code">{_code_panel(i, lines, changed)}</div></div>'
            f'<div class="right">{_graph_panel(shown)}</div></div></section>')


def _nav(stages: Sequence[Stage]) -> str:
    out, group = [], None
    for i, s in enumerate(stages):
        if s.group != group:
            group = s.group
            out.append(f'<div class="group">{_esc(group)}</div>')
        cls = "nav" + (" unchanged" if s.before is not None and not s.changed else "") + (" failed" if s.error else "")
        pad = f' style="padding-left:{12 + 12 * s.depth}px"' if s.depth else ""
        out.append(f'<a class="{cls}" href="#stage-{i}" data-stage="{i}"{pad}><span class="idx">{i}</span>'
                   f'<span class="name">{_esc(s.name)}</span><span class="hits"></span>'
                   f'<span class="time">{_fmt_time(s.seconds)}</span>{_delta(s)}</a>')
    return "".join(out)


_CSS = """
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2430;background:#fff}
header{position:sticky;top:0;z-index:5;display:flex;gap:16px;align-items:center;padding:0 16px;height:46px;
 background:#1f2a44;color:#fff}
header h1{font-size:17px;margin:0;font-weight:600}
header .summary{color:#c8d3ea;font-size:13px;flex:1}
header input{width:280px;padding:5px 8px;border-radius:4px;border:0;font:13px monospace}
#search-info{font-size:12px;color:#c8d3ea;min-width:110px}
.layout{display:flex;align-items:flex-start}
nav{position:sticky;top:46px;width:270px;flex:none;max-height:calc(100vh - 46px);overflow:auto;
 border-right:1px solid #d8dde8;background:#f6f8fb;padding:6px 0 20px}
nav .group{font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:#6a7388;padding:10px 12px 3px}
nav a.nav{display:flex;gap:6px;align-items:baseline;padding:3px 12px;color:#1d2430;text-decoration:none;
 font-size:13px;border-left:3px solid transparent}
nav a.nav:hover{background:#e8edf6}
nav a.nav.active{background:#dde6f7;border-left-color:#3a63c4;font-weight:600}
nav a.nav.unchanged .name{color:#8a93a6}
nav a.nav.failed .name{color:#b3261e}
nav a.nav.nohit{opacity:.35}
nav .name{flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.idx{color:#8a93a6;font:11px monospace;min-width:16px;text-align:right}
.time{color:#6a7388;font-size:11px;white-space:nowrap}
.hits{font-size:11px;color:#fff;background:#d9822b;border-radius:8px;padding:0 5px}
.hits:empty{display:none}
.delta{font:11px monospace;white-space:nowrap}.delta .plus{color:#1a7f37;font-style:normal}
.delta .minus{color:#b3261e;font-style:normal}.delta.same{color:#8a93a6}
main{flex:1;min-width:0;padding:0 16px 40px}
section.stage{border-bottom:1px solid #d8dde8;padding:10px 0 16px;scroll-margin-top:46px}
.js section.stage{display:none;border:0}
.js section.stage.active{display:block}
.head{display:flex;gap:14px;align-items:baseline;flex-wrap:wrap}
.head h2{margin:0;font-size:19px}.head h2 small{font-size:12px;color:#6a7388;font-weight:normal}
.prevnext{margin-left:auto;font-size:13px}.prevnext a{margin-left:12px}
.stats{margin:6px 0 8px;display:flex;flex-wrap:wrap;gap:5px}
.chip{font-size:12px;background:#eef1f7;border-radius:10px;padding:1px 8px;color:#3d4659}
.chip.counter{background:#fff4e0}
pre.error{background:#fde8e6;color:#8c1d18;padding:8px;white-space:pre-wrap}
.cols{display:flex;gap:16px;align-items:flex-start}
.left{flex:1 1 55%;min-width:0}.right{flex:1 1 45%;min-width:0;overflow:auto;max-height:calc(100vh - 150px);
 position:sticky;top:52px}
.cols.nograph .right{display:none}
svg.graph{max-width:100%;height:auto}
.tabs{display:flex;gap:4px;margin-bottom:4px}
.tabs button{font-size:12px;padding:3px 12px;border:1px solid #c5ccda;background:#f6f8fb;border-radius:4px;cursor:pointer}
.tabs button.on{background:#3a63c4;color:#fff;border-color:#3a63c4}
.js .panel{display:none}.js .panel.on{display:block}
.code,.diff{font:12px/1.45 ui-monospace,Menlo,Consolas,monospace;overflow:auto;max-height:calc(100vh - 190px);
 border:1px solid #e1e5ee;border-radius:4px;background:#fbfcfe}
.code{counter-reset:ln}
.ln{white-space:pre;padding-left:62px;position:relative;min-height:1.45em}
.ln::before{counter-increment:ln;content:counter(ln);position:absolute;left:0;width:44px;text-align:right;
 color:#9aa3b5;user-select:none}
.diff td.no{color:#9aa3b5;text-align:right;user-select:none}
.ln .mark{position:absolute;left:49px;color:#1a7f37;font-size:9px;text-decoration:none}
.ln.chg{background:#e6f6ea}
.ln.hit,.diff tr.hit{background:#fff1c2}
.ln.flash,.diff tr.flash{outline:2px solid #d9822b}
table.diff{border-collapse:collapse;width:100%;display:block}
.diff td{padding:0 4px;white-space:pre;vertical-align:top}.diff td.no a{color:#6a7fb5;text-decoration:none}
.diff td.sign{width:14px;color:#6a7388;user-select:none}
.diff tr.add{background:#e6f6ea}.diff tr.del{background:#fde8e6}
.diff tr.hunk td{background:#edf1fa;color:#3a63c4;padding:2px 6px}
.empty{padding:14px;color:#6a7388;font-style:italic}
figure.graph-box{margin:0 0 12px;border:1px solid #e1e5ee;border-radius:4px;padding:6px;background:#fff}
figure.graph-box figcaption{font:600 12px monospace;color:#3d4659;margin-bottom:4px}
svg.graph{display:block}
svg.graph text{font:12px ui-monospace,Menlo,Consolas,monospace;text-anchor:middle;fill:#1d2430}
svg.graph text.sub{fill:#3a63c4}
svg.graph text.shape{font-size:10px;text-anchor:start;fill:#1a7f37}
svg.graph .edge{fill:none;stroke:#7b8499;stroke-width:1.2}
svg.graph .arrowhead{fill:#7b8499}
svg.graph .node rect{fill:#eef3ff;stroke:#3a63c4}
svg.graph .node.input rect{fill:#fff7e0;stroke:#b7791f}
svg.graph .node.output rect{fill:#e9f7ef;stroke:#1a7f37}
svg.graph .node.const rect,svg.graph .node.tuple rect,svg.graph .node.getitem rect{fill:#f3f4f6;stroke:#9aa3b5}
svg.graph .node.call rect{fill:#f5ecff;stroke:#7d4fc4}
svg.graph .group>rect{fill:#fffaf3;stroke:#d9822b;stroke-width:1.5;stroke-dasharray:6 3}
svg.graph .node.new>rect{stroke:#1a7f37;stroke-width:2.5}
svg.graph .group.new>rect{stroke:#1a7f37}
.legend{font-size:11px;color:#6a7388;margin:0 0 4px}.legend b{color:#1a7f37}
svg.graph text.group-title{text-anchor:start;font-weight:600;fill:#a4561a}
"""

_JS = r"""
(function(){
var doc=document, body=doc.body; body.classList.add('js');
var sections=[].slice.call(doc.querySelectorAll('section.stage'));
var navs=[].slice.call(doc.querySelectorAll('nav a.nav'));
var current=-1;
function tab(sec,name){
  sec.dataset.tab=name;
  [].forEach.call(sec.querySelectorAll('.tabs button'),function(b){b.classList.toggle('on',b.dataset.show===name);});
  [].forEach.call(sec.querySelectorAll('.panel'),function(p){p.classList.toggle('on',p.dataset.panel===name);});
}
function show(i){
  if(i<0||i>=sections.length)return;
  current=i;
  sections.forEach(function(s,k){s.classList.toggle('active',k===i);});
  navs.forEach(function(a,k){a.classList.toggle('active',k===i);});
  tab(sections[i],sections[i].dataset.tab);
  var a=navs[i], nav=a&&a.parentNode;  // scroll the list only, never the page
  if(nav&&(a.offsetTop<nav.scrollTop||a.offsetTop+a.offsetHeight>nav.scrollTop+nav.clientHeight))
    nav.scrollTop=a.offsetTop-nav.clientHeight/2;
  mark();
}
function flash(el){el.classList.add('flash');setTimeout(function(){el.classList.remove('flash');},1600);
  el.scrollIntoView({block:'center'});}
// In a notebook the page is an iframe's srcdoc, whose links resolve against the notebook's
// URL: same-page links are followed here, and the address is only set where it is the page's.
var inline=location.protocol==='about:';
function go(h){
  if(inline||location.hash==='#'+h){route(h);}else{location.hash=h;}
}
doc.addEventListener('click',function(e){
  var a=e.target.closest&&e.target.closest('a[href^="#"]');
  if(!a)return; e.preventDefault(); go(a.getAttribute('href').slice(1));
});
function route(h){
  if(h===undefined)h=decodeURIComponent(location.hash.slice(1));
  var m;
  if((m=/^stage-(\d+)$/.exec(h))){show(+m[1]);window.scrollTo(0,0);return;}
  if((m=/^s(\d+)-([LD])(\d+)$/.exec(h))){
    show(+m[1]); tab(sections[+m[1]],m[2]==='L'?'code':'diff');
    var el=doc.getElementById(h); if(el)flash(el); return;}
  if(current<0)show(0);
}
sections.forEach(function(sec){
  [].forEach.call(sec.querySelectorAll('.tabs button'),function(b){
    b.addEventListener('click',function(){tab(sec,b.dataset.show);});});
  tab(sec,sec.dataset.tab);
});
var box=doc.getElementById('search'), info=doc.getElementById('search-info'), query='';
function rowsOf(sec){return sec.querySelectorAll('.ln, .diff tr.add, .diff tr.del, .diff tr.ctx');}
function mark(){
  if(current<0)return;
  var first=null;
  [].forEach.call(rowsOf(sections[current]),function(r){
    var hit=query!==''&&r.textContent.toLowerCase().indexOf(query)>=0;
    r.classList.toggle('hit',hit);
    if(hit&&!first&&r.offsetParent)first=r;});
  return first;
}
function search(){
  query=box.value.toLowerCase(); var total=0, stagesHit=0;
  sections.forEach(function(sec,k){
    var n=0;
    if(query!==''){[].forEach.call(sec.querySelectorAll('.ln'),function(r){
      if(r.textContent.toLowerCase().indexOf(query)>=0)n++;});}
    navs[k].querySelector('.hits').textContent=n?String(n):'';
    navs[k].classList.toggle('nohit',query!==''&&!n);
    total+=n; stagesHit+=n?1:0;});
  info.textContent=query?total+' lines in '+stagesHit+' stages':'';
  var first=mark(); if(first)first.scrollIntoView({block:'center'});
}
box.addEventListener('input',search);
box.addEventListener('keydown',function(e){
  if(e.key!=='Enter'||!query)return;
  for(var step=1;step<=sections.length;step++){
    var k=(current+step)%sections.length;
    if(navs[k].querySelector('.hits').textContent){go('stage-'+k);return;}}
});
doc.addEventListener('keydown',function(e){
  if(e.target===box)return;
  if(e.key==='j'||e.key==='ArrowDown'&&e.altKey){go('stage-'+Math.min(current+1,sections.length-1));}
  if(e.key==='k'||e.key==='ArrowUp'&&e.altKey){go('stage-'+Math.max(current-1,0));}
  if(e.key==='/'){e.preventDefault();box.focus();}
});
window.addEventListener('hashchange',function(){route();});
function selftest(){
  var out={stages:[],errors:window.__errors||[]};
  sections.forEach(function(sec,k){
    show(k); var r={index:k,name:sec.dataset.name,kind:sec.dataset.kind,visible:sec.offsetHeight>0};
    tab(sec,'code'); var code=sec.querySelector('.code');
    r.codeLines=code?code.querySelectorAll('.ln').length:0; r.codeHeight=code?code.offsetHeight:0;
    tab(sec,'diff'); var diff=sec.querySelector('.diff');
    r.diffRows=diff?diff.querySelectorAll('tr.add, tr.del, tr.ctx').length:0; r.diffHeight=diff?diff.offsetHeight:0;
    r.added=[].map.call(sec.querySelectorAll('.diff tr.add td.src'),function(td){return td.textContent;});
    r.graphs=[].map.call(sec.querySelectorAll('svg.graph'),function(svg){
      var b=svg.getBBox();
      return {function:svg.dataset.function,width:b.width,height:b.height,
        ops:[].map.call(svg.querySelectorAll('g.node.op'),function(g){return g.dataset.op;}),
        groups:[].map.call(svg.querySelectorAll('g.group'),function(g){return g.dataset.name;}),
        edges:svg.querySelectorAll('polyline.edge').length};});
    out.stages.push(r);});
  var pre=doc.createElement('pre'); pre.id='selftest-result'; pre.textContent=JSON.stringify(out);
  body.appendChild(pre);
}
if(location.hash==='#selftest'){selftest();show(0);}else{route();}
})();
"""


def render_page(stages: Sequence[Stage], title: str = "module", error: str | None = None) -> str:
    """The whole page for ``stages`` (``error``: what stopped the compilation, if anything)."""
    graphs = _GraphCache()
    lit: dict[tuple[str, str], list[str]] = {}
    sections = "".join(_section(i, s, stages, graphs, lit) for i, s in enumerate(stages))
    total = sum(s.seconds or 0.0 for s in stages if s.depth == 0)
    style = "\n".join(_STYLE_DEFS)
    failed = f' &middot; <b style="color:#ffb4ab">stopped: {_esc(error)}</b>' if error else ""
    summary = f"{_esc(title)} &middot; {len(stages)} stages &middot; {_fmt_time(total)}{failed}"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>tvmlite explore: {_esc(title)}</title>"
            "<script>window.__errors=[];window.addEventListener('error',function(e){"
            "window.__errors.push(String(e.message));});</script>"
            f"<style>{_CSS}\n{style}</style></head><body>"
            f'<header><h1>tvmlite explore</h1><span class="summary">{summary}</span>'
            '<input id="search" type="search" placeholder="search every stage ( / )" autocomplete="off">'
            '<span id="search-info"></span></header>'
            f'<div class="layout"><nav>{_nav(stages)}</nav><main>{sections}</main></div>'
            f"<script>{_JS}</script></body></html>\n")
