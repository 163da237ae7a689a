"""``paused_gc()``: the cyclic garbage collector paused while a compile step runs.

Passes and code generation allocate many small objects that stay alive (immutable IR nodes,
llvmlite's IR objects) and make few reference cycles; with the collector on, its collections
scanning them were a tenth to a fifth of a model's compile. The parser pauses it the same way."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the body with the cyclic GC disabled; its previous state is restored afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
