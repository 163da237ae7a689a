"""The ``tvmlite`` command line: show, check, format, transform (``opt``) and compile (``build``)
TVMScript files, and ``import`` ONNX / PyTorch models as TVMScript; ``explore`` writes an HTML
page of every compile stage."""
from __future__ import annotations

import argparse
import difflib
import sys
from typing import Callable

__all__ = ["main"]


STDIN = "-"  # a file argument that means standard input


def _display_name(path: str) -> str:
    """How a file is named in messages (``<stdin>`` for ``-``)."""
    return "<stdin>" if path == STDIN else path


def _read(path: str) -> str:
    """The text of a script file, or of standard input for ``-`` (decoding errors are ScriptErrors)."""
    from .script.source_file import decode_source, read_source

    if path == STDIN:
        return decode_source(sys.stdin.buffer.read(), _display_name(path))
    return read_source(path)


def _load(path: str):  # noqa: ANN202 - returns IRModule or a function
    from .script.source_file import parse_text

    return parse_text(_read(path), _display_name(path))


def _each_file(files: list[str], run: Callable[[str], int]) -> int:
    """Run ``run`` on every file, reporting each failure and going on; the worst exit status."""
    from .script.errors import ScriptError

    if files.count(STDIN) > 1:
        print("tvmlite: error: standard input ('-') can be given once", file=sys.stderr)
        return 2
    status = 0
    for path in files:
        try:
            status = max(status, run(path))
        except ScriptError as err:
            print(err, file=sys.stderr)
            status = max(status, 1)
        except OSError as err:
            if isinstance(err, BrokenPipeError):
                raise
            print(f"tvmlite: {err.strerror}: {err.filename}", file=sys.stderr)
            status = max(status, 1)
    return status


def _cmd_show(args: argparse.Namespace) -> int:
    from .script import show

    show(_load(args.file), color=None if args.color == "auto" else args.color == "always",
         show_meta=args.show_meta)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .ir.well_formed import well_formed_errors

    def check(path: str) -> int:
        name = _display_name(path)
        problems = well_formed_errors(_load(path))
        for p in problems:
            print(f"{name}: {p}" if not p.startswith(name) else p, file=sys.stderr)
        if not problems:
            print(f"{name}: ok")
        return 1 if problems else 0

    return _each_file(args.files, check)


def _cmd_fmt(args: argparse.Namespace) -> int:
    from .script.source_file import decode_source, format_source

    if args.in_place and STDIN in args.files:
        print("tvmlite fmt: error: --in-place cannot rewrite standard input ('-')", file=sys.stderr)
        return 2
    if len(args.files) > 1 and not (args.check or args.in_place):
        print("tvmlite fmt: error: several files need --check or --in-place", file=sys.stderr)
        return 2

    def fmt(path: str) -> int:
        name = _display_name(path)
        if path == STDIN:
            data = sys.stdin.buffer.read()
        else:  # the bytes as they are: line endings and a declared encoding are kept
            with open(path, "rb") as fb:
                data = fb.read()
        original = decode_source(data, name)
        # Only the TVMScript definitions change; imports, comments and other code stay, and
        # constants are kept in the `metadata = ...` line, so the file still runs as it did.
        formatted = format_source(original, name)
        if args.check:
            if formatted == original:
                return 0
            sys.stdout.writelines(difflib.unified_diff(
                original.splitlines(True), formatted.splitlines(True), name, f"{name} (formatted)"))
            return 1
        if args.in_place:
            if formatted != original:
                _write_like(path, data, formatted)
                print(f"tvmlite fmt: reformatted {name}", file=sys.stderr)
            return 0
        sys.stdout.write(formatted)
        return 0

    return _each_file(args.files, fmt)


def _write_like(path: str, data: bytes, text: str) -> None:
    """Write ``text`` to ``path`` in the encoding its old bytes ``data`` had."""
    import io
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    with open(path, "wb") as fb:
        fb.write(text.encode(encoding))


def _cmd_opt(args: argparse.Namespace) -> int:
    from .ir.module import IRModule
    from .passes import (DumpIR, PassContext, PassError, PassTimingInstrument, PipelineError, PrintAfterAll,
                         PrintAfterChange, PrintBeforeAll, parse_pipeline, render_statistics)

    try:
        seq = parse_pipeline(args.passes)
    except PipelineError as err:
        print(f"tvmlite opt: error: {err}", file=sys.stderr)
        return 2
    loaded = _load(args.file)
    mod = loaded if isinstance(loaded, IRModule) else IRModule.from_expr(loaded)
    # IR dumps go to stderr (as mlir-opt's), so stdout holds only the resulting module.
    instruments: list = []
    if args.print_before_all:
        instruments.append(PrintBeforeAll(file=sys.stderr))
    if args.print_after_all:
        instruments.append(PrintAfterAll(file=sys.stderr))
    if args.print_after_change:
        instruments.append(PrintAfterChange(file=sys.stderr))
    if args.dump_dir:
        instruments.append(DumpIR(args.dump_dir, refresh=True))
    timing = PassTimingInstrument() if args.timing else None
    if timing is not None:
        instruments.insert(0, timing)  # first in, so its times include the other instruments least
    disabled = [name for item in args.disable for name in item.split(",") if name]
    config = {"tvmlite.verify_each": not args.no_verify}
    if args.reproducer_dir:
        config["tvmlite.reproducer_dir"] = args.reproducer_dir
    ctx = PassContext(opt_level=args.opt_level, disabled_pass=disabled, config=config, instruments=instruments)
    for p in seq.passes:
        if p.info.name in disabled:
            print(f"tvmlite opt: note: {p.info.name} is disabled", file=sys.stderr)
        elif not ctx.pass_enabled(p.info):
            print(f"tvmlite opt: note: skipping {p.info.name} (opt_level {p.info.opt_level} > "
                  f"--opt-level {args.opt_level})", file=sys.stderr)
    try:
        with ctx:
            out = seq(mod)
    except PassError as err:
        print(f"tvmlite opt: error: {err}", file=sys.stderr)
        return 1
    if timing is not None:
        print(timing.render(), file=sys.stderr)
    elif args.statistics:
        print(render_statistics(ctx.stats), file=sys.stderr)
    text = out.script(show_meta=True)  # as `fmt`: constants survive, the output replays
    text = text if text.endswith("\n") else text + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _prim_funcs_for_build(loaded, path: str):  # noqa: ANN001, ANN202 - IRModule in, IRModule out
    """The PrimFuncs of a script, lowered when they still have blocks (Relax functions are noted)."""
    from .backend.executable import lower_if_needed
    from .ir import tir
    from .ir.module import IRModule

    mod = loaded if isinstance(loaded, IRModule) else IRModule.from_expr(loaded)
    others = [gv.name_hint for gv, f in mod.functions_items() if not isinstance(f, tir.PrimFunc)]
    if others:
        print(f"tvmlite build: note: skipping {', '.join(others)} (not PrimFuncs; tvmlite.compile "
              f"builds Relax functions)", file=sys.stderr)
    if len(others) == len(mod.functions_items()):
        raise ValueError(f"{path} has no PrimFunc to build")
    return lower_if_needed(mod)


def _cmd_build(args: argparse.Namespace) -> int:
    from .backend import CodegenError, TargetError, codegen
    from .backend.executable import highlight_source, vectorizer_remarks
    from .script.highlight import should_color

    try:
        lm = codegen(_prim_funcs_for_build(_load(args.file), args.file), args.target)
        if args.emit == "obj":
            if not args.output and sys.stdout.isatty():
                print("tvmlite build: error: --emit obj writes binary data: give -o FILE", file=sys.stderr)
                return 2
            data = lm.emit_object()
        elif args.emit == "asm":
            data = lm.emit_assembly()
        else:
            data = lm.llvm_ir if args.no_opt else lm.optimized_ir
        if args.remarks:
            sys.stderr.write(vectorizer_remarks(lm))
    except (CodegenError, TargetError, ValueError) as err:
        print(f"tvmlite build: error: {err}", file=sys.stderr)
        return 1
    if args.output and isinstance(data, bytes):
        with open(args.output, "wb") as fb:
            fb.write(data)
    elif args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(data)
    elif isinstance(data, bytes):
        sys.stdout.buffer.write(data)
    else:
        color = should_color(sys.stdout) if args.color == "auto" else args.color == "always"
        sys.stdout.write(highlight_source(data, args.emit) if color else data)
    return 0


def _shape_dict(specs: list[str]) -> dict[str, list[int | str]]:
    """``["x=1,784", "y=batch,3"]`` -> ``{"x": [1, 784], "y": ["batch", 3]}`` (names are symbolic sizes)."""
    shapes: dict[str, list[int | str]] = {}
    for spec in specs:
        name, sep, dims = spec.partition("=")
        if not sep or not name:
            raise ValueError(f"--shape {spec!r}: expected NAME=D1,D2,... (a D may be a name: batch)")
        shapes[name] = [int(d) if d.strip().lstrip("-").isdigit() else d.strip() for d in dims.split(",") if d.strip()]
    return shapes


def _cmd_import(args: argparse.Namespace) -> int:
    from .frontend import FrontendError, from_exported_program, from_onnx

    try:
        if args.model.endswith(".pt2"):
            if args.shape:
                raise ValueError("--shape applies to ONNX models; a .pt2 program carries its shapes")
            from .frontend.common import require

            torch = require("torch", "torch", "tvmlite import of a .pt2 file")
            mod = from_exported_program(torch.export.load(args.model), keep_params_as_input=args.keep_params,
                                        unwrap_unit_return_tuple=True)
        elif args.model.endswith(".onnx"):
            mod = from_onnx(args.model, shape_dict=_shape_dict(args.shape) or None,
                            keep_params_in_input=args.keep_params)
        else:
            raise ValueError(f"{args.model}: expected an ONNX model (.onnx) or a torch.export program (.pt2)")
    except (FrontendError, ImportError, ValueError) as err:
        print(f"tvmlite import: {err}", file=sys.stderr)
        return 1
    if args.output:  # a saved module keeps every weight, so it can be parsed and compiled later
        text = mod.script(show_meta=True)
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        return 0
    from .script import show

    show(mod, color=None if args.color == "auto" else args.color == "always", show_meta=args.show_meta)
    return 0


def _cmd_explore(args: argparse.Namespace) -> int:
    import os

    from .explorer import explore

    loaded = _load(args.file)
    out = args.output or ("explore.html" if args.file == STDIN else
                          os.path.splitext(os.path.basename(args.file))[0] + ".html")
    if os.path.abspath(out) == os.path.abspath(args.file):
        print(f"tvmlite explore: error: the page would overwrite {args.file}: give -o FILE", file=sys.stderr)
        return 2
    try:
        result = explore(loaded, out, pipeline=None if args.pipeline == "none" else args.pipeline,
                         tir_pipeline=args.tir_pipeline, target=args.target, title=_display_name(args.file))
    except ValueError as err:  # a pipeline that does not parse, an unknown target
        print(f"tvmlite explore: error: {err}", file=sys.stderr)
        return 2
    print(f"tvmlite explore: wrote {out} ({len(result.stages)} stages)", file=sys.stderr)
    if result.error:  # the page shows how far it went; the exit status says it did not finish
        print(f"tvmlite explore: compilation stopped: {result.error}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tvmlite`` command."""
    from . import __version__

    ap = argparse.ArgumentParser(prog="tvmlite", description="Read, check, format and transform TVMScript.")
    ap.add_argument("--version", action="version", version=f"tvmlite {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    show = sub.add_parser("show", help="parse a script and print it canonically (highlighted on a terminal)")
    show.add_argument("file", help="a script file ('-': standard input)")
    show.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    show.add_argument("--show-meta", action="store_true", help="print constants' data as metadata JSON")
    show.set_defaults(run=_cmd_show)

    check = sub.add_parser("check", help="parse a script and check that it is well formed (exit 1 if not)")
    check.add_argument("files", nargs="+", metavar="FILE", help="script files ('-': standard input)")
    check.set_defaults(run=_cmd_check)

    fmt = sub.add_parser("fmt", help="rewrite the TVMScript of files in canonical form (stdout by default)")
    fmt.add_argument("files", nargs="+", metavar="FILE", help="script files ('-': standard input)")
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 and print a diff if not canonical")
    mode.add_argument("--in-place", action="store_true", help="rewrite the file")
    fmt.set_defaults(run=_cmd_fmt)

    opt = sub.add_parser("opt", help="run a pass pipeline on a script and print the result")
    opt.add_argument("file")
    opt.add_argument("--passes", required=True, metavar="SPEC",
                     help='textual pipeline, e.g. "ToNonDataflow,DeadCodeElimination{entry_functions=main}"')
    opt.add_argument("--opt-level", type=int, default=2, metavar="N",
                     help="PassContext opt_level: passes above it are skipped (default 2)")
    opt.add_argument("--disable", action="extend", nargs="+", default=[], metavar="NAME",
                     help="passes to skip (PassContext disabled_pass)")
    opt.add_argument("--print-before-all", action="store_true", help="print the module before every pass (stderr)")
    opt.add_argument("--print-after-all", action="store_true", help="print the module after every pass (stderr)")
    opt.add_argument("--print-after-change", action="store_true",
                     help="print a diff for every pass that changed the module (stderr)")
    opt.add_argument("--dump-dir", metavar="DIR",
                     help="write 000_input.py, 001_<Pass>.py, ... to DIR (replacing earlier numbered dumps)")
    opt.add_argument("--timing", action="store_true", help="print the time of every pass and the statistics (stderr)")
    opt.add_argument("--statistics", action="store_true", help="print the counters passes recorded (stderr)")
    opt.add_argument("--no-verify", action="store_true", help="do not check well-formedness after each pass")
    opt.add_argument("--reproducer-dir", metavar="DIR",
                     help="where a failing pass's reproducer goes (default: a temp dir)")
    opt.add_argument("-o", "--output", metavar="OUT", help="write the resulting module to OUT instead of stdout")
    opt.set_defaults(run=_cmd_opt)

    build = sub.add_parser("build", help="compile a script's PrimFuncs with LLVM and print the IR, assembly or object")
    build.add_argument("file")
    build.add_argument("--emit", choices=["ll", "asm", "obj"], default="ll",
                       help="LLVM IR (default, optimised), target assembly, or an object file")
    build.add_argument("-o", "--output", metavar="OUT", help="write to OUT instead of stdout")
    build.add_argument("--target", default="llvm", metavar="TARGET",
                       help='e.g. "llvm -mcpu=skylake -mattr=+avx2,+fma" (default: the host CPU)')
    build.add_argument("--no-opt", action="store_true", help="with --emit ll: the IR before LLVM's optimisation")
    build.add_argument("--remarks", action="store_true", help="print the loop vectoriser's remarks (stderr)")
    build.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    build.set_defaults(run=_cmd_build)

    imp = sub.add_parser("import", help="import an ONNX model (.onnx) or a torch.export program (.pt2) and print it")
    imp.add_argument("model")
    imp.add_argument("--shape", action="append", default=[], metavar="NAME=D1,D2",
                     help="an ONNX input's shape; a name instead of a number is a symbolic size (repeatable)")
    imp.add_argument("--keep-params", action="store_true",
                     help="weights as parameters after the inputs instead of constants")
    imp.add_argument("--show-meta", action="store_true", help="print constants' data as metadata JSON")
    imp.add_argument("-o", "--output", metavar="OUT", help="write the module, with its metadata, to OUT")
    imp.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    imp.set_defaults(run=_cmd_import)

    exp = sub.add_parser("explore", help="compile a script and write an HTML page of every stage, "
                                         "from the script to LLVM IR and assembly")
    exp.add_argument("file", help="a script file ('-': standard input)")
    exp.add_argument("-o", "--output", metavar="OUT", help="the page to write (default: FILE's name with .html)")
    exp.add_argument("--pipeline", default="zero", metavar="SPEC",
                     help='the Relax pipeline, as tvmlite.compile\'s relax_pipeline (default "zero"; "none": skip)')
    exp.add_argument("--tir-pipeline", default="default_tir", metavar="SPEC",
                     help='the pipeline on the PrimFuncs (default "default_tir"; "lower": loops as written)')
    exp.add_argument("--target", default="llvm", metavar="TARGET", help="as for build (default: the host CPU)")
    exp.set_defaults(run=_cmd_explore)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    from .script.errors import ScriptError

    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except ScriptError as err:
        print(err, file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except OSError as err:
        print(f"tvmlite: {err.strerror}: {err.filename}", file=sys.stderr)
        return 1
