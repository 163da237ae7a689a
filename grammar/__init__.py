"""Lark grammars used by tvmlite (``tvmscript.lark``: the Python subset TVMScript is written in)."""
