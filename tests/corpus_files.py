"""Where the tests find the TVMScript corpus: ``tests/data/corpus`` (described in its README.md).

Every test reads corpus texts through this module, so the suite runs from any checkout."""
from __future__ import annotations

from pathlib import Path

__all__ = ["CORPUS_DIR", "read_corpus", "corpus_files"]

CORPUS_DIR = Path(__file__).resolve().parent / "data" / "corpus"


def read_corpus(name: str) -> str:
    """The text of one corpus file, ``name`` relative to the corpus folder (``"legacy/x.py"`` too)."""
    return (CORPUS_DIR / name).read_text(encoding="utf-8")


def corpus_files(pattern: str = "**/*.py") -> list[Path]:
    """The corpus files matching ``pattern`` (a glob relative to the corpus folder), sorted."""
    files = sorted(CORPUS_DIR.glob(pattern))
    if not files:  # the corpus ships with the tests: an empty list means a broken checkout
        raise FileNotFoundError(f"no corpus file matches {pattern!r} in {CORPUS_DIR}")
    return files
