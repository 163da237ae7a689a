"""Tensor layouts with packed (sub-indexed) axes, as TVM's ``tir.Layout`` spells them.

A layout names each dimension of a tensor: an upper-case letter is a *primal* axis ("NCHW"),
a lower-case letter preceded by a factor is a sub-axis of the primal axis of the same letter
("NCHW8c": the channels split into ``C // 8`` blocks of 8, the block innermost). Kernels may pack
two axes: "OIHW8i8o" is ``(O // 8, I // 8, H, W, 8, 8)``. Shapes and index maps convert between a
layout and its primal form (the upper-case letters alone, in order)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from . import tir
from .arith import IndexMap, as_const_int, simplify

__all__ = ["Layout", "LayoutError"]


class LayoutError(ValueError):
    """A layout string that is not a valid layout (or not valid for the use asked)."""


@dataclass(frozen=True)
class Layout:
    """A parsed layout: ``axes`` holds ``(letter, factor)`` pairs, factor None for a primal axis."""

    name: str
    axes: tuple[tuple[str, int | None], ...]

    @staticmethod
    def parse(text: str) -> "Layout":
        """Parse ``"NCHW8c"``; LayoutError on repeated letters or a sub-axis without its primal axis."""
        axes: list[tuple[str, int | None]] = []
        digits = ""
        for ch in text:
            if ch.isdigit():
                digits += ch
                continue
            if not ch.isalpha() or not ch.isascii():
                raise LayoutError(f"layout {text!r}: invalid character {ch!r}")
            if ch.isupper():
                if digits:
                    raise LayoutError(f"layout {text!r}: a factor must precede a lower-case sub-axis, not {ch!r}")
                axes.append((ch, None))
            else:
                if not digits or int(digits) <= 0:
                    raise LayoutError(f"layout {text!r}: the sub-axis {ch!r} needs a positive factor (e.g. 8{ch})")
                axes.append((ch, int(digits)))
            digits = ""
        if digits:
            raise LayoutError(f"layout {text!r}: ends with a factor")
        letters = [a for a, _ in axes]
        if len(set(letters)) != len(letters):
            raise LayoutError(f"layout {text!r}: repeats an axis")
        for a, f in axes:
            if f is not None and a.upper() not in letters:
                raise LayoutError(f"layout {text!r}: sub-axis {a!r} has no primal axis {a.upper()!r}")
        return Layout(text, tuple(axes))

    # ---------------------------------------------------------------- queries
    @property
    def ndim(self) -> int:
        """The rank of a tensor in this layout."""
        return len(self.axes)

    @property
    def primal(self) -> str:
        """The primal axes in order (``"NCHW"`` for ``"NCHW8c"``)."""
        return "".join(a for a, f in self.axes if f is None)

    @property
    def is_packed(self) -> bool:
        """True when some axis is split into blocks."""
        return any(f is not None for _, f in self.axes)

    def factor(self, letter: str) -> int | None:
        """The block size of primal axis ``letter`` (None when it is not split)."""
        for a, f in self.axes:
            if f is not None and a == letter.lower():
                return f
        return None

    def __str__(self) -> str:
        return self.name

    # ---------------------------------------------------------------- shapes
    def primal_shape(self, shape: Sequence[tir.PrimExpr]) -> list[tir.PrimExpr]:
        """The dims of the primal form (in ``self.primal`` order) of a tensor of ``shape``."""
        dims = dict(zip((a for a, _ in self.axes), shape))
        out = []
        for a in self.primal:
            f = self.factor(a)
            out.append(dims[a] if f is None else simplify(tir.Mul(dims[a], tir.IntImm(dims[a].dtype, f))))
        return out

    def packed_shape(self, primal: Sequence[tir.PrimExpr]) -> list[tir.PrimExpr]:
        """The shape in this layout of a tensor whose primal dims (``self.primal`` order) are ``primal``."""
        dims = dict(zip(self.primal, primal))
        out = []
        for a, f in self.axes:
            if f is None:
                g = self.factor(a)
                d = dims[a]
                out.append(d if g is None else simplify(tir.FloorDiv(d, tir.IntImm(d.dtype, g))))
            else:
                out.append(tir.IntImm(dims[a.upper()].dtype, f))
        return out

    def splits_evenly(self, primal: Sequence[tir.PrimExpr], allow_one: bool = False) -> bool:
        """True when every split primal dim is a known multiple of its factor (or 1 with ``allow_one``)."""
        for a, d in zip(self.primal, primal):
            f = self.factor(a)
            if f is None:
                continue
            n = as_const_int(d)
            if n is None or not (n % f == 0 or (allow_one and n == 1)):
                return False
        return True

    # ---------------------------------------------------------------- index maps
    def index_map_to(self, dst: "Layout", dtype: str = "int32") -> IndexMap:
        """The map from an index in this layout to the index of the same element in ``dst``
        (both over the same primal axes): ``lambda i0, i1, i2, i3: (i0, i1 // 8, i2, i3, i1 % 8)``."""
        if sorted(self.primal) != sorted(dst.primal):
            raise LayoutError(f"cannot map layout {self.name!r} to {dst.name!r}: different axes")
        params = tuple(tir.Var(f"i{k}", dtype) for k in range(self.ndim))
        by_letter = {a: v for (a, _), v in zip(self.axes, params)}
        # The primal coordinate of each axis: outer * factor + inner when split.
        primal: dict[str, tir.PrimExpr] = {}
        for a in self.primal:
            f = self.factor(a)
            primal[a] = by_letter[a] if f is None else tir.Add(
                tir.Mul(by_letter[a], tir.IntImm(dtype, f)), by_letter[a.lower()])
        final: list[tir.PrimExpr] = []
        for a, f in dst.axes:
            if f is not None:
                final.append(tir.FloorMod(primal[a.upper()], tir.IntImm(dtype, f)))
            elif dst.factor(a) is not None:
                final.append(tir.FloorDiv(primal[a], tir.IntImm(dtype, dst.factor(a))))  # type: ignore[arg-type]
            else:
                final.append(primal[a])
        return IndexMap(params, tuple(final))

    def rename(self, src: str, dst: str) -> "Layout":
        """This layout with primal letters renamed position for position from ``src`` to ``dst``
        (``"NCHW8c"`` from NCHW to ABCD is ``"ABCD8b"``)."""
        table = dict(zip(src, dst))
        text = "".join((str(f) + table[a.upper()].lower()) if f is not None else table[a] for a, f in self.axes)
        return Layout.parse(text)
