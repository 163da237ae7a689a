"""Struct-info text for the parser's error messages (the printer's spelling); the struct-info
logic itself lives in ``tvmlite.ir.struct_info``."""
from __future__ import annotations

from ...ir import relax as rx
from ...ir.struct_info import collect_vars, derive_call_ret, erase_to, incompatible

__all__ = ["incompatible", "derive_call_ret", "format_sinfo", "collect_vars", "erase_to"]


def format_sinfo(sinfo: rx.StructInfo | None) -> str:
    """A struct info as script text, for error messages (``R.Tensor((n, 4), dtype="float32")``)."""
    from ..printer import script

    return "R.Object" if sinfo is None else script(sinfo)
