"""``tvmlite.explore(mod)`` and ``tvmlite explore FILE``: compile a module and show every stage,
from the script to LLVM IR and assembly, on one self-contained HTML page (see ``html.py``).

The package is ``explorer``, not ``explore``: importing a subpackage sets it as an attribute of
its parent, which would replace the function ``tvmlite.explore`` by the package."""
from __future__ import annotations

import html as _html
import os
from typing import Any

from ..ir import relax as rx
from ..ir import tir
from ..ir.module import IRModule
from ..passes import parse_pipeline
from .html import render_page
from .stages import Stage, capture_stages

__all__ = ["explore", "Exploration", "Stage"]


class Exploration:
    """The stages of one compilation and the page showing them: ``save(path)`` writes the page,
    ``_repr_html_`` shows it inline in a notebook, ``error`` is what stopped the compilation."""

    def __init__(self, stages: list[Stage], html: str, error: str | None = None, path: str | None = None) -> None:
        self.stages = stages
        self.html = html
        self.error = error
        self.path = path

    def save(self, path: str) -> str:
        """Write the page to ``path``; returns the path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)
        self.path = str(path)
        return self.path

    def _repr_html_(self) -> str:
        # An iframe with srcdoc runs the page's script in a notebook, isolated from its styles.
        return (f'<iframe srcdoc="{_html.escape(self.html, quote=True)}" '
                'style="width:100%;height:820px;border:1px solid #d8dde8" '
                'sandbox="allow-scripts allow-same-origin"></iframe>')

    def __repr__(self) -> str:
        state = f" stopped: {self.error}" if self.error else ""
        where = f" saved to {self.path}" if self.path else ""
        return f"<tvmlite.Exploration {len(self.stages)} stages{where}{state}>"


def explore(mod: Any, path: str | os.PathLike | None = None, pipeline: Any = "zero", *,
            tir_pipeline: Any = "default_tir", target: Any = "llvm", title: str | None = None) -> Exploration:
    """Compile ``mod`` as ``tvmlite.compile`` does (``pipeline``: its ``relax_pipeline``) and
    build the page of every stage; written to ``path`` when one is given."""
    if isinstance(mod, (tir.PrimFunc, rx.Function)):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TypeError(f"explore takes an IRModule, a PrimFunc or a Relax function, got {type(mod).__name__}")
    for spec in (pipeline, tir_pipeline):
        if isinstance(spec, str):
            parse_pipeline(spec)  # a spec that does not parse is the caller's mistake, not a stage
    stages, error = capture_stages(mod, target=target, relax_pipeline=pipeline, tir_pipeline=tir_pipeline)
    page = render_page(stages, title or _module_title(mod), error)
    result = Exploration(stages, page, error)
    if path is not None:
        result.save(os.fspath(path))
    return result


def _module_title(mod: IRModule) -> str:
    names = [gv.name_hint for gv, _ in mod.functions_items()]
    return ", ".join(names[:4]) + (f" (+{len(names) - 4})" if len(names) > 4 else "")
