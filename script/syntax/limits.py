"""Nesting limits of TVMScript text, enforced while it is read."""
from __future__ import annotations

# Nesting limits. Deeper texts are refused with a ScriptError ("nesting too deep") while they
# are read, so that nothing after the syntax tree (the recursive IR builder, passes, the
# printer) ever meets a tree deeper than MAX_DEPTH nodes. Python's own parser has similar
# limits (200 nested brackets, 100 indentation levels).
MAX_DEPTH = 200      # nodes from the root of a statement's tree to its deepest leaf
MAX_BRACKETS = 200   # brackets open at the same time
MAX_INDENT = 100     # indentation levels
