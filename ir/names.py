"""``NameSupply``: unique names for generated buffers, blocks and parameters (TVM's name)."""
from __future__ import annotations

__all__ = ["NameSupply"]


class NameSupply:
    """Unique names: ``x``, then ``x_1``, ``x_2``... (as TVM names duplicate buffers and blocks)."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def fresh(self, name: str) -> str:
        """``name``, or ``name_<i>`` with the first unused ``i``."""
        out, i = name, 0
        while out in self.used:
            i += 1
            out = f"{name}_{i}"
        self.used.add(out)
        return out
