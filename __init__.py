"""tvmlite: a pure-Python TVMScript — write, parse, print, transform and compile tensor programs."""
from __future__ import annotations

# Absolute imports: pytest imports this file on its own (the repository root is the package and
# holds tests/), where relative imports would fail; absolute ones resolve to the installed package.
from tvmlite.ir import GlobalVar, IRModule, assert_structural_equal, structural_equal, structural_hash
from tvmlite.script import from_source, parse_file

__version__ = "0.1.0"

__all__ = ["IRModule", "GlobalVar", "from_source", "parse_file", "structural_equal",
           "assert_structural_equal", "structural_hash", "load_json", "__version__"]


def load_json(text: str) -> dict:
    """Read the metadata JSON that ``script(show_meta=True)`` prints (constants, bit for bit)."""
    from tvmlite.script.printer.metadata import load_metadata

    return load_metadata(text)


_SUBMODULES = ("passes", "relax", "tir", "te", "topi", "testing", "frontend", "script", "ir")


def __getattr__(name: str):  # noqa: ANN202 - module attribute hook
    """``tvmlite.passes``, ``tvmlite.relax`` etc. after a bare ``import tvmlite`` (loaded on first use)."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"tvmlite.{name}")
    raise AttributeError(f"module 'tvmlite' has no attribute {name!r}")
