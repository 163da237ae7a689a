#!/usr/bin/env python3
"""Parse/print throughput benchmark for tvmlite (a script, not a test).

Builds one large TVMScript module by repeating the functions of the seed
corpus modules (tests/data/corpus in the repository; a built-in
sample if that folder is missing), renaming each copy's functions so the
result is a single valid ``@I.ir_module``. Then times

* ``tvmlite.script.from_source(text)``  (parse), and
* ``mod.script()``                      (print),

reporting the median of a few runs in KB/s and MB/s (1 KB = 1024 bytes).
If Apache TVM is importable, the same text is parsed/printed by TVM and the
ratio is shown; otherwise the reference figure (TVM parses ~30 KB/s on this
machine) is used.

    python bench/bench_parse_print.py [--size-kb 256] [--repeat 5] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO / "tests" / "data" / "corpus"
TVM_REFERENCE_KBPS = 30.0  # Apache TVM's parser on this machine, KB/s

HEADER = (
    "# from tvm.script import ir as I\n"
    "# from tvm.script import tir as T\n"
    "# from tvm.script import relax as R\n"
    "\n"
    "@I.ir_module\n"
    "class Module:\n"
)

# Used when the corpus folder is missing: one TIR and one Relax function.
BUILTIN_SAMPLE = HEADER + '''\
    @T.prim_func(private=True)
    def add(var_matmul: T.handle, fc1_bias: T.Buffer((T.int64(128),), "float32"), var_T_add: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        matmul = T.match_buffer(var_matmul, (n, T.int64(128)))
        T_add = T.match_buffer(var_T_add, (n, T.int64(128)))
        # with T.block("root"):
        for ax0, ax1 in T.grid(n, T.int64(128)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(matmul[v_ax0, v_ax1], fc1_bias[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = matmul[v_ax0, v_ax1] + fc1_bias[v_ax1]

    @R.function
    def main(x: R.Tensor(("n", 128), dtype="float32"), fc1_bias: R.Tensor((128,), dtype="float32")) -> R.Tensor(("n", 128), dtype="float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, fc1_bias), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            gv: R.Tensor((n, 128), dtype="float32") = R.nn.relu(lv)
            R.output(gv)
        return gv
'''

_CLASS_RE = re.compile(r"^class\s+\w+\s*:\s*$", re.M)
_DEF_RE = re.compile(r"^    def\s+(\w+)\s*\(", re.M)


def module_body(text: str) -> str | None:
    """The indented body of the first `@I.ir_module class ...:` in `text`."""
    if "@I.ir_module" not in text:
        return None
    m = _CLASS_RE.search(text)
    if m is None:
        return None
    return text[m.end():].strip("\n") + "\n"


def renamed(body: str, suffix: str) -> str:
    """`body` with every function `f` renamed `f<suffix>` (defs and cls.f)."""
    for name in set(_DEF_RE.findall(body)):
        body = re.sub(rf"(^    def\s+){name}(\s*\()", rf"\g<1>{name}{suffix}\2", body, flags=re.M)
        body = re.sub(rf"\bcls\.{name}\b", f"cls.{name}{suffix}", body)
    return body


def load_bodies(corpus: Path) -> list[str]:
    bodies = []
    if corpus.is_dir():
        for path in sorted(corpus.glob("*.py")):  # not legacy/: old syntax
            body = module_body(path.read_text())
            if body:
                bodies.append(body)
    return bodies


def build_text(bodies: list[str], size_kb: float) -> str:
    parts, size, copy = [], len(HEADER), 0
    while size < size_kb * 1024:
        for i, body in enumerate(bodies):
            part = renamed(body, f"_c{copy}_{i}")
            parts.append(part)
            size += len(part) + 1
        copy += 1
    return HEADER + "\n".join(parts)


def import_tvmlite():
    """`import tvmlite`, or load it straight from this checkout if not installed."""
    try:
        import tvmlite  # noqa: F401
    except ImportError:
        spec = importlib.util.spec_from_file_location(
            "tvmlite", REPO / "__init__.py", submodule_search_locations=[str(REPO)])
        if spec is None or spec.loader is None:
            raise
        module = importlib.util.module_from_spec(spec)
        sys.modules["tvmlite"] = module
        spec.loader.exec_module(module)
    from tvmlite.script import from_source
    return from_source


def _parses(from_source, text: str) -> bool:
    try:
        from_source(text)
    except Exception:
        return False
    return True


def timed(fn, repeat: int):
    """(median seconds, last result) over `repeat` calls of fn()."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def rate(nbytes: int, seconds: float) -> str:
    kbps = nbytes / 1024 / seconds if seconds > 0 else float("inf")
    return f"{seconds * 1000:9.1f} ms  {kbps:10.1f} KB/s  {kbps / 1024:7.3f} MB/s"


def bench(label: str, parse, texts: list[str], repeat: int):
    """Time parse() over `texts` and .script() over the results.

    Returns (parse KB/s, print KB/s, printed texts).
    """
    nbytes = sum(len(t.encode()) for t in texts)
    t_parse, mods = timed(lambda: [parse(t) for t in texts], repeat)
    print(f"{label:8s} parse {rate(nbytes, t_parse)}")
    t_print, outs = timed(lambda: [m.script() for m in mods], repeat)
    out_bytes = sum(len(o.encode()) for o in outs)
    print(f"{label:8s} print {rate(out_bytes, t_print)}  ({out_bytes / 1024:.1f} KB printed)")
    return nbytes / 1024 / t_parse, out_bytes / 1024 / t_print, outs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-kb", type=float, default=256, help="size of the text to parse (default 256)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per measurement; the median is reported (default 5)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"corpus folder (default {DEFAULT_CORPUS})")
    args = ap.parse_args(argv)

    bodies = load_bodies(args.corpus)
    source = f"{len(bodies)} corpus modules from {args.corpus}"
    if not bodies:
        bodies = [module_body(BUILTIN_SAMPLE)]
        source = "the built-in sample (corpus not found)"
    text = build_text(bodies, args.size_kb)
    nfuncs = len(_DEF_RE.findall(text))
    print(f"text: {len(text.encode()) / 1024:.1f} KB, {text.count(chr(10))} lines, "
          f"{nfuncs} functions, built from {source}")
    print(f"median of {args.repeat} runs, Python {sys.version.split()[0]}")

    from_source = import_tvmlite()
    texts = [text]
    try:
        from_source(text)
    except Exception as exc:  # keep going: time the corpus files one by one
        print(f"warning: the merged module does not parse ({type(exc).__name__}: {exc})")
        files = [p.read_text() for p in sorted(args.corpus.glob("*.py"))] or [BUILTIN_SAMPLE]
        files = [t for t in files if _parses(from_source, t)]
        if not files:
            print("error: no corpus file parses", file=sys.stderr)
            return 1
        total = sum(len(t.encode()) for t in files)
        texts = files * max(1, round(args.size_kb * 1024 / total))
        print(f"timing {len(files)} corpus files that parse, separately: {len(texts)} parses, "
              f"{total * len(texts) / len(files) / 1024:.1f} KB per run")
    parse_kbps, print_kbps, outs = bench("tvmlite", from_source, texts, args.repeat)
    if len(texts) == 1:
        # The input names TVM in its header and orders functions by copy; the printed text is
        # canonical, so the property that matters is that printing is a fixed point.
        fixed = from_source(outs[0]).script() == outs[0]
        print(f"tvmlite  print(parse(print(parse(text)))) == print(parse(text)): {fixed}")

    try:
        import tvm
        import tvm.script
    except Exception:  # not installed, or broken install
        print(f"Apache TVM not importable; reference: TVM parses ~{TVM_REFERENCE_KBPS:.0f} KB/s here")
        print(f"tvmlite parse speed = {parse_kbps / TVM_REFERENCE_KBPS:.1f}x the TVM reference")
    else:
        print(f"Apache TVM {getattr(tvm, '__version__', '?')}:")
        tvm_repeat = max(1, min(args.repeat, 3))  # TVM is slow on big texts
        tvm_parse, tvm_print, _ = bench("tvm", tvm.script.from_source, texts, tvm_repeat)
        print(f"tvmlite / tvm: parse {parse_kbps / tvm_parse:.1f}x, print {print_kbps / tvm_print:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
