"""Imports point downward: no module imports a layer above its own, at module level or inside a
function (a function-level import hides a cycle as well as a top-level one does). The layers, from
the bottom, are those of docs/design.md "Layers"."""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent  # the repository root is the package

# Top-level folder or module of the package -> its layer; a module may import its own layer and
# the ones below it. ``grammar/`` is the grammar text, which imports nothing.
LAYERS = {
    "ir": 0, "grammar": 0,
    "te": 1,
    "topi": 2,
    "ops": 3,
    "script": 4, "passes": 4,
    "backend": 5,
    "frontend": 6,
    "__init__": 7, "__main__": 7, "relax": 7, "tir": 7, "cli": 7, "testing": 7,
    "explorer": 7,
}
# Folders of one layer that stay independent of each other: the parser and printer never run
# passes, and passes never parse or print (the IR prints through ``Node.script()``'s hook).
PEERS = {("script", "passes"), ("passes", "script")}
# Deliberate upward imports, (importing module, imported module) -> why. None today: FoldConstant
# evaluates through ``te.evaluate`` (below passes), the IR prints and builds TE calls through
# hooks the higher layers set (``Node._script_hook``, ``BlockBuilder._call_te_hook``).
ALLOWED: dict[tuple[str, str], str] = {}
# Folders that are not part of the installed package's layers.
NOT_PACKAGE = {"tests", "bench", "examples", "docs"}


def _modules() -> list[pathlib.Path]:
    """Every Python module of the package: top-level modules and those under a top-level folder
    with an ``__init__.py`` (not a virtualenv or build folder a user made in the checkout)."""
    def in_package(path: pathlib.Path) -> bool:
        top = path.relative_to(PACKAGE).parts[0]
        return top not in NOT_PACKAGE and (top.endswith(".py") or (PACKAGE / top / "__init__.py").is_file())

    return [p for p in sorted(PACKAGE.rglob("*.py")) if in_package(p)]


def _dotted(path: pathlib.Path) -> list[str]:
    """The module's name inside the package (``["te", "tensor"]``; ``[]`` for the root)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imports(path: pathlib.Path) -> list[tuple[int, list[str]]]:
    """(line, imported module inside the package) of every import of ``path``, nested ones included."""
    is_package = path.name == "__init__.py"
    here = _dotted(path)
    package = here if is_package else here[:-1]
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[1:]) for a in node.names
                      if a.name.split(".")[0] == "tvmlite"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                module = package[:len(package) - (node.level - 1)] + (node.module or "").split(".")
                module = [m for m in module if m]
            elif node.module and node.module.split(".")[0] == "tvmlite":
                module = node.module.split(".")[1:]
            else:
                continue  # another distribution
            # From the root package (``from tvmlite import relax``, ``from .. import topi``) the
            # names are the modules imported; elsewhere the module is.
            found += [(node.lineno, [a.name]) for a in node.names] if not module else [(node.lineno, module)]
    return found


def _layer_name(dotted: list[str]) -> str:
    """The top-level folder or module that decides the layer (``"__init__"`` for the root)."""
    return dotted[0] if dotted else "__init__"


def test_every_top_level_name_has_a_layer() -> None:
    names = {_layer_name(_dotted(p)) for p in _modules()}
    assert names <= set(LAYERS), f"give these a layer in LAYERS: {sorted(names - set(LAYERS))}"


def test_imports_point_downward() -> None:
    upward = []
    for path in _modules():
        source = _layer_name(_dotted(path))
        for line, target in _imports(path):
            if not target or target[0] not in LAYERS:
                continue  # an attribute of the root package, e.g. ``from tvmlite import __version__``
            dest = _layer_name(target)
            key = (".".join(_dotted(path)) or "__init__", ".".join(target))
            if key in ALLOWED:
                continue
            if LAYERS[dest] > LAYERS[source] or (source, dest) in PEERS:
                upward.append(f"{path.relative_to(PACKAGE)}:{line} ({source}) imports "
                              f"{key[1]} ({dest})")
    assert not upward, "imports pointing upward:\n" + "\n".join(upward)


def test_the_scan_sees_function_level_imports() -> None:
    # The backend loads passes inside a function (a downward import): the scan must find it.
    compile_py = PACKAGE / "backend" / "compile.py"
    assert any(target[:1] == ["passes"] for _, target in _imports(compile_py))


@pytest.mark.parametrize("code", [
    # TE without topi: te.Tensor's arithmetic is TE's own (topi is loaded, by the op registry's
    # legalizations, so every topi function is made to fail).
    "from tvmlite import te, topi\n"
    "def refuse(*args, **kwargs):\n    raise AssertionError('te called topi')\n"
    "for name in [n for n in vars(topi) if callable(getattr(topi, n))]:\n    setattr(topi, name, refuse)\n"
    "A = te.placeholder((3,), name='A')\nB = -(A + 1) * A / 2 - A\nassert B.shape == A.shape",
    # The IR prints and builds TE calls through hooks that loading the package sets.
    "from tvmlite import relax, topi\nbb = relax.BlockBuilder()\n"
    "x = relax.Var('x', relax.TensorStructInfo((3,), 'float32'))\n"
    "with bb.function('main', [x]):\n    bb.emit_func_output(bb.emit_te(topi.exp, x))\n"
    "assert 'R.call_tir' in bb.get().script() and '<div' in bb.get()._repr_html_()",
])
def test_hooks_and_layers_at_run_time(code: str) -> None:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
