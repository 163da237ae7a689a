"""The TVMScript printer: IR -> canonical text, as TVM's classic printer writes it.

``script(obj)`` prints an ``IRModule``, a ``relax.Function``, a ``tir.PrimFunc`` or any other
node (expression, statement, struct info, buffer...). It never raises: ill-formed IR is printed
in a readable fallback form."""
from __future__ import annotations

import sys
import threading
from typing import Any

from .core import PrinterBase, PrinterConfig
from .metadata import dump_metadata, load_metadata
from .module import ModulePrinter
from .relax_printer import RelaxPrinter
from .tir_printer import TIRPrinter

__all__ = ["script", "Printer", "PrinterConfig", "dump_metadata", "load_metadata"]


class Printer(ModulePrinter, RelaxPrinter, TIRPrinter, PrinterBase):
    """The complete printer; one instance prints one object."""


def script(obj: Any, *, show_meta: bool = False, name: str = "Module", module_alias: str = "cls",
           show_all_struct_info: bool = True, indent_spaces: int = 4) -> str:
    """Print ``obj`` as TVMScript text (no trailing newline, as TVM's ``script()``)."""
    cfg = PrinterConfig(show_meta=show_meta, name=name, module_alias=module_alias,
                        show_all_struct_info=show_all_struct_info, indent_spaces=indent_spaces)
    try:
        try:
            return Printer(cfg).run(obj)
        except RecursionError:
            return _run_deep(cfg, obj)
    except Exception as err:  # the printer must never fail; say what could not be printed
        kind = type(obj).__name__
        return f"# tvmlite could not print this {kind}: {type(err).__name__}: {err}\n<{kind}>"


def _run_deep(cfg: PrinterConfig, obj: Any) -> str:
    """Print very deeply nested IR on a thread with a large stack and recursion limit."""
    result: list[Any] = []

    def work() -> None:
        try:
            result.append(Printer(cfg).run(obj))
        except BaseException as err:  # reported by the caller
            result.append(err)

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        threading.stack_size(512 * 1024 * 1024)
        sys.setrecursionlimit(max(old_limit, 200_000))
        t = threading.Thread(target=work, name="tvmlite-printer")
        t.start()
        t.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if result and isinstance(result[0], str):
        return result[0]
    raise result[0] if result else RuntimeError("printer thread failed")
