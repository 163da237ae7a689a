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


# Subpackages reachable as attributes after a bare ``import tvmlite``, each imported on first use
# (the backend loads llvmlite, the frontends are large), so ``import tvmlite`` stays fast.
_SUBMODULES = ("passes", "relax", "tir", "te", "topi", "testing", "frontend", "script", "ir", "backend", "cli")

# The runtime API, loaded on first use so that ``import tvmlite`` never loads the backend (or
# llvmlite): name -> (module, attribute); ``tvmlite.runtime`` is the runtime module itself.
_LAZY = {
    "compile": ("tvmlite.backend.compile", "compile"),
    "build": ("tvmlite.backend.compile", "build"),
    "VirtualMachine": ("tvmlite.backend.vm", "VirtualMachine"),
    "load_module": ("tvmlite.backend.executable", "load_module"),
    "cpu": ("tvmlite.backend.runtime", "cpu"),
    "tensor": ("tvmlite.backend.runtime", "tensor"),
    "register_func": ("tvmlite.backend.runtime", "register_func"),
    "get_func": ("tvmlite.backend.runtime", "get_func"),
    "register_py_func": ("tvmlite.backend.runtime", "register_py_func"),
    "runtime": ("tvmlite.backend.runtime", None),
    "explore": ("tvmlite.explorer", "explore"),
}


def __getattr__(name: str):  # noqa: ANN202 - module attribute hook
    """``tvmlite.passes``, ``tvmlite.relax`` etc. after a bare ``import tvmlite`` (loaded on first use)."""
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"tvmlite.{name}")
    if name in _LAZY:
        module, attr = _LAZY[name]
        loaded = importlib.import_module(module)
        return loaded if attr is None else getattr(loaded, attr)
    raise AttributeError(f"module 'tvmlite' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the ones loaded on first use included (for completion in a REPL)."""
    return sorted(set(globals()) | set(_SUBMODULES) | set(_LAZY))
