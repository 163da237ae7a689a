"""TVMScript syntax trees: the node classes and ``parse_syntax`` (text -> ``Module``).

The tree mirrors Python's ``ast`` for the subset of Python that TVMScript uses; it is *not*
TVM IR (see ``nodes``). The parser is a Lark LALR(1) parser (``grammar/tvmscript.lark``)
whose rule callbacks build the nodes during the parse; every mistake is reported as a
``ScriptError``.

Modules: ``nodes`` (node classes, ``walk``, ``dump``), ``limits`` (nesting limits),
``failure`` (the located error raised while reading), ``lexer`` (indentation, brackets and
keywords), ``builder`` (rule callbacks), ``lark_parser`` (building the parser),
``messages`` (the wording of syntax errors) and ``parse`` (``parse_syntax``).
"""
from __future__ import annotations

from .lark_parser import GRAMMAR_PATH
from .lexer import TVMScriptIndenter
from .limits import MAX_BRACKETS, MAX_DEPTH, MAX_INDENT
from .nodes import (
    AnnAssign, Assert, Assign, Attribute, AugAssign, BinOp, BoolOp, Break, Call, ClassDef,
    Compare, Constant, Continue, Dict, Expr, ExprStmt, For, FunctionDef, If, IfExp, Import,
    ImportFrom, Keyword, Lambda, List, Module, Name, Node, Param, Pass, Return, Slice, Starred,
    Stmt, Subscript, Tuple, UnaryOp, While, With, WithItem, dump, walk,
)
from .parse import parse_syntax

__all__ = [
    "parse_syntax", "dump", "walk", "GRAMMAR_PATH", "TVMScriptIndenter",
    "MAX_DEPTH", "MAX_BRACKETS", "MAX_INDENT",
    "Node", "Stmt", "Expr",
    "Module", "ImportFrom", "Import", "ClassDef", "FunctionDef", "Param",
    "Assign", "AnnAssign", "AugAssign", "ExprStmt", "For", "While", "If", "With", "WithItem",
    "Return", "Assert", "Pass", "Break", "Continue",
    "Name", "Attribute", "Call", "Keyword", "Starred", "Subscript", "Slice", "Tuple", "List",
    "Dict", "Constant", "BinOp", "UnaryOp", "BoolOp", "Compare", "IfExp", "Lambda",
]
