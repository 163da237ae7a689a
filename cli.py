"""The ``tvmlite`` command line: show, check and format TVMScript files."""
from __future__ import annotations

import argparse
import difflib
import sys
from typing import Callable

__all__ = ["main"]


def _load(path: str):  # noqa: ANN202 - returns IRModule or a function
    from .script import parse_file

    return parse_file(path)


def _cmd_show(args: argparse.Namespace) -> int:
    from .script import show

    show(_load(args.file), color=None if args.color == "auto" else args.color == "always",
         show_meta=args.show_meta)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .ir.well_formed import well_formed_errors

    problems = well_formed_errors(_load(args.file))
    for p in problems:
        print(f"{args.file}: {p}" if not p.startswith(args.file) else p, file=sys.stderr)
    if not problems:
        print(f"{args.file}: ok")
    return 1 if problems else 0


def _cmd_fmt(args: argparse.Namespace) -> int:
    with open(args.file, encoding="utf-8") as f:
        original = f.read()
    # show_meta keeps every constant, so formatting never loses what the user wrote.
    canonical = _load(args.file).script(show_meta=True)
    if not canonical.endswith("\n"):
        canonical += "\n"
    if args.check:
        if canonical == original:
            return 0
        sys.stdout.writelines(difflib.unified_diff(
            original.splitlines(True), canonical.splitlines(True), args.file, f"{args.file} (formatted)"))
        return 1
    if args.in_place:
        if canonical != original:
            with open(args.file, "w", encoding="utf-8") as f:
                f.write(canonical)
        return 0
    sys.stdout.write(canonical)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tvmlite`` command."""
    ap = argparse.ArgumentParser(prog="tvmlite", description="Read, check, format and transform TVMScript.")
    sub = ap.add_subparsers(dest="command", required=True)

    show = sub.add_parser("show", help="parse a script and print it canonically (highlighted on a terminal)")
    show.add_argument("file")
    show.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    show.add_argument("--show-meta", action="store_true", help="print constants' data as metadata JSON")
    show.set_defaults(run=_cmd_show)

    check = sub.add_parser("check", help="parse a script and check that it is well formed (exit 1 if not)")
    check.add_argument("file")
    check.set_defaults(run=_cmd_check)

    fmt = sub.add_parser("fmt", help="rewrite a script in canonical form (stdout by default)")
    fmt.add_argument("file")
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 and print a diff if not canonical")
    mode.add_argument("--in-place", action="store_true", help="rewrite the file")
    fmt.set_defaults(run=_cmd_fmt)
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
