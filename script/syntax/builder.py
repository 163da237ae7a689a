"""The Lark rule callbacks that build syntax tree nodes during the LALR parse."""
from __future__ import annotations

import ast as _pyast
import warnings
from dataclasses import replace
from typing import Any

from lark import Token, Transformer, v_args

from .failure import SyntaxFailure, fail_at, fail_tok
from .lexer import CONSTANT_NAMES
from .limits import MAX_DEPTH
from .nodes import (
    Stmt, Expr, Module, ImportFrom, Import, ClassDef, FunctionDef, Param, Assign, AnnAssign,
    AugAssign, ExprStmt, For, While, If, With, WithItem, Return, Assert, Pass, Break,
    Continue, Name, Attribute, Call, Keyword, Starred, Subscript, Slice, Tuple, List, Dict,
    Constant, BinOp, UnaryOp, BoolOp, Compare, IfExp, Lambda,
)

# Binding strength inside the flat "comparison" rule (higher binds tighter).
_BINARY_PRECEDENCE = {
    "|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5,
    "*": 6, "/": 6, "//": 6, "%": 6, "@": 6, "**": 8,
}
_UNARY_PRECEDENCE = 7   # between "*" and "**": -a * b == (-a) * b, -a ** b == -(a ** b)
_POWER_PRECEDENCE = 8
_PREFIXED_INT = frozenset({"0x", "0X", "0o", "0O", "0b", "0B"})
_COMPARISON_TERMINALS = frozenset({"LT", "GT", "LE", "GE", "EQ", "NE", "IN", "NOT", "IS"})
_TARGET_WORDS = {
    "Call": "a function call", "Constant": "a literal", "BinOp": "an expression",
    "UnaryOp": "an expression", "BoolOp": "an expression", "Compare": "a comparison",
    "Lambda": "a lambda", "IfExp": "a conditional expression", "List": "a list",
    "Dict": "a dict", "Starred": "a starred expression", "Slice": "a slice",
    "Tuple": "a tuple",
}


def _ident(tok: Token) -> str:
    """The text of a NAME token used as an identifier (True/False/None are not)."""
    word = tok.value
    if word in CONSTANT_NAMES:
        raise fail_tok(tok, f"'{word}' cannot be used as a name")
    return word


def _check_target(node: Expr, single: bool = False) -> None:
    """Reject what cannot be assigned to (``single``: tuples are not allowed either)."""
    stack: list[Expr] = [node]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is Name or kind is Attribute or kind is Subscript:
            continue
        if isinstance(item, Tuple) and not single:
            stack.extend(item.elts)
            continue
        raise fail_at(item, f"cannot assign to {_TARGET_WORDS.get(kind.__name__, 'this')}")


_Span = tuple[int, int, int, int]


def _make(cls: type[Any], span: _Span, *args: Any) -> Any:
    """Construct node ``cls(*args)`` with the (line, col, end_line, end_col) ``span``; its
    depth is one more than its deepest child's, and a node deeper than MAX_DEPTH is refused."""
    depth = 0
    for arg in args:
        if type(arg) is tuple:
            for item in arg:
                d = getattr(item, "depth", 0)
                if d > depth:
                    depth = d
        else:
            d = getattr(arg, "depth", 0)
            if d > depth:
                depth = d
    depth += 1
    if depth > MAX_DEPTH:
        raise SyntaxFailure(f"nesting too deep: more than {MAX_DEPTH} levels of nested expressions and "
                    "statements (split it into several statements)", span[0], span[1], span[2],
                    span[3])
    return cls(*args, line=span[0], col=span[1], end_line=span[2], end_col=span[3], depth=depth)


def _tok_span(tok: Token) -> _Span:
    return tok.line, tok.column, tok.end_line, tok.end_column


def _string_value(tok: Token) -> str | bytes:
    """The value of one STRING token."""
    text = tok.value
    quote = text[0]
    if (quote == '"' or quote == "'") and "\\" not in text:
        # Fast path: no prefix, no escapes.
        return text[3:-3] if text.startswith(quote * 3) and len(text) >= 6 else text[1:-1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # invalid escapes such as "\q" stay as written
            return _pyast.literal_eval(text)
    except (SyntaxError, ValueError) as exc:
        reason = getattr(exc, "msg", None) or str(exc)
        raise fail_tok(tok, f"invalid string literal: {reason}") from None


@v_args(inline=True)
class SyntaxBuilder(Transformer):
    """Rule callbacks (run by Lark during the LALR parse); each returns a syntax node.

    Spans follow Python's ``ast``: grouping parentheses are not part of the grouped node's
    span, but an enclosing node that starts or ends with them includes them
    (``(a + b) * c`` spans from the "(", its left operand from the "a"). ``_groups`` records
    the parenthesised extent of grouped nodes for that, per parse.
    """

    def __init__(self) -> None:
        super().__init__()
        # id(node) -> (node, line, col, end_line, end_col); holding the node keeps the id unique.
        self._groups: dict[int, tuple[Any, int, int, int, int]] = {}

    def _reset(self) -> None:
        self._groups = {}

    # ------------------------------------------------------------------ spans
    def _span(self, first: Any, last: Any) -> _Span:
        """From the start of ``first`` to the end of ``last`` (tokens or nodes)."""
        groups = self._groups
        if type(first) is Token:
            line, col = first.line, first.column
        else:
            group = groups.get(id(first)) if groups else None
            if group is None:
                line, col = first.line, first.col
            else:
                line, col = group[1], group[2]
        if type(last) is Token:
            end_line, end_col = last.end_line, last.end_column
        else:
            group = groups.get(id(last)) if groups else None
            if group is None:
                end_line, end_col = last.end_line, last.end_col
            else:
                end_line, end_col = group[3], group[4]
        return line, col, end_line, end_col

    def _arith(self, items: list[Any]) -> Expr:
        """Apply precedence to ``operand (op operand)*`` with unary prefixes (no recursion)."""
        if len(items) == 1:
            return items[0]
        span = self._span
        out: list[Expr] = []
        ops: list[tuple[int, Token, bool]] = []   # (precedence, token, is_unary)

        def reduce_top() -> None:
            _, tok, unary = ops.pop()
            right = out.pop()
            if unary:
                out.append(_make(UnaryOp, span(tok, right), tok.value, right))
            else:
                left = out.pop()
                out.append(_make(BinOp, span(left, right), tok.value, left, right))

        want_operand = True
        for item in items:
            if type(item) is not Token:
                out.append(item)
                want_operand = False
            elif want_operand:
                ops.append((_UNARY_PRECEDENCE, item, True))
            else:
                prec = _BINARY_PRECEDENCE[item.value]
                if prec == _POWER_PRECEDENCE:   # "**" is right-associative
                    while ops and ops[-1][0] > prec:
                        reduce_top()
                else:
                    while ops and ops[-1][0] >= prec:
                        reduce_top()
                ops.append((prec, item, False))
                want_operand = True
        while ops:
            reduce_top()
        return out[0]

    def _bool(self, op: str, values: list[Expr]) -> Expr:
        if len(values) == 1:
            return values[0]
        return _make(BoolOp, self._span(values[0], values[-1]), op, tuple(values))

    # ------------------------------------------------------------------ module and statements
    def start(self, *stmts: Stmt) -> Module:
        if not stmts:
            return Module((), line=1, col=1, end_line=1, end_col=1)
        return _make(Module, self._span(stmts[0], stmts[-1]), stmts)

    def suite(self, *stmts: Stmt) -> tuple[Stmt, ...]:
        return stmts

    def expr_stmt(self, value: Expr) -> ExprStmt:
        return _make(ExprStmt, self._span(value, value), value)

    def assign(self, target: Expr, value: Expr) -> Assign:
        _check_target(target)
        return _make(Assign, self._span(target, value), target, value)

    def annassign(self, target: Expr, annotation: Expr, value: Expr | None) -> AnnAssign:
        if type(target) is Tuple:
            raise fail_at(target, "only a single target (not a tuple) can be annotated")
        _check_target(target, single=True)
        last = value if value is not None else annotation
        return _make(AnnAssign, self._span(target, last), target, annotation, value)

    def augassign(self, target: Expr, op: Token, value: Expr) -> AugAssign:
        if type(target) is Tuple:
            raise fail_at(target, "a tuple cannot be the target of an augmented assignment")
        _check_target(target, single=True)
        return _make(AugAssign, self._span(target, value), target, op.value[:-1], value)

    def pass_stmt(self, tok: Token) -> Pass:
        return _make(Pass, _tok_span(tok))

    def break_stmt(self, tok: Token) -> Break:
        return _make(Break, _tok_span(tok))

    def continue_stmt(self, tok: Token) -> Continue:
        return _make(Continue, _tok_span(tok))

    def return_stmt(self, tok: Token, value: Expr | None) -> Return:
        return _make(Return, self._span(tok, value if value is not None else tok), value)

    def assert_stmt(self, tok: Token, test: Expr, msg: Expr | None) -> Assert:
        return _make(Assert, self._span(tok, msg if msg is not None else test), test, msg)

    # ------------------------------------------------------------------ imports
    def dotted_name(self, *names: Token) -> tuple[Token, ...]:
        for tok in names:
            _ident(tok)
        return names

    def dotted_as_name(self, dotted: tuple[Token, ...],
                       alias: Token | None) -> tuple[str, str | None, Token]:
        name = ".".join(tok.value for tok in dotted)
        if alias is None:
            return name, None, dotted[-1]
        return name, _ident(alias), alias

    def import_name(self, tok: Token, *items: tuple[str, str | None, Token]) -> Import:
        names = tuple((name, alias) for name, alias, _ in items)
        return _make(Import, self._span(tok, items[-1][2]), names)

    def import_module(self, *items: Any) -> str:
        return "".join(item.value if type(item) is Token else ".".join(t.value for t in item)
                       for item in items)

    def import_as_name(self, name: Token, alias: Token | None) -> tuple[str, str | None, Token]:
        if alias is None:
            return _ident(name), None, name
        return _ident(name), _ident(alias), alias

    def import_targets(self, *items: Any) -> tuple[tuple[tuple[str, str | None], ...], Token]:
        last = items[-1]
        if type(last) is Token:
            if last.type == "STAR":
                return (("*", None),), last
            items = items[:-1]   # the closing ")"
        else:
            last = last[2]
        return tuple((name, alias) for name, alias, _ in items), last

    def import_from(self, tok: Token, module: str, targets: tuple[Any, Token]) -> ImportFrom:
        names, last = targets
        return _make(ImportFrom, self._span(tok, last), module, names)

    # ------------------------------------------------------------------ compound statements
    def if_stmt(self, *items: Any) -> If:
        # IF test body (ELIF test body)* ELSE|None else_body|None: nest the elifs inside out.
        orelse: tuple[Stmt, ...] = items[-1] if items[-1] is not None else ()
        node: If | None = None
        for i in range(len(items) - 5, -1, -3):
            tok, test, body = items[i], items[i + 1], items[i + 2]
            node = _make(If, self._span(tok, orelse[-1] if orelse else body[-1]), test, body,
                         orelse)
            orelse = (node,)
        assert node is not None
        return node

    def while_stmt(self, tok: Token, test: Expr, body: tuple[Stmt, ...]) -> While:
        return _make(While, self._span(tok, body[-1]), test, body)

    def target_tuple(self, *items: Any) -> Tuple:
        if items[-1] is None:   # no trailing comma
            items = items[:-1]
        elts = tuple(item for item in items if type(item) is not Token)
        return _make(Tuple, self._span(items[0], items[-1]), elts, False)

    def for_stmt(self, tok: Token, target: Expr, iterable: Expr, body: tuple[Stmt, ...]) -> For:
        _check_target(target)
        return _make(For, self._span(tok, body[-1]), target, iterable, body)

    def with_item(self, context: Expr, target: Expr | None) -> WithItem:
        if target is not None:
            _check_target(target)
        return _make(WithItem, self._span(context, target if target is not None else context),
                     context, target)

    def with_stmt(self, tok: Token, *rest: Any) -> With:
        body = rest[-1]
        return _make(With, self._span(tok, body[-1]), rest[:-1], body)

    def param(self, name: Token, annotation: Expr | None, default: Expr | None) -> Param:
        last: Any = name
        if default is not None:
            last = default
        elif annotation is not None:
            last = annotation
        return _make(Param, self._span(name, last), _ident(name), annotation, default)

    def parameters(self, *params: Param) -> tuple[Param, ...]:
        seen: set[str] = set()
        after_default = False
        for p in params:
            if p.name in seen:
                raise SyntaxFailure(f"duplicate parameter '{p.name}'", p.line, p.col, p.line,
                            p.col + len(p.name))
            seen.add(p.name)
            if p.default is not None:
                after_default = True
            elif after_default:
                raise fail_at(p, f"parameter '{p.name}' without a default follows a "
                                  "parameter with a default")
        return params

    def funcdef(self, tok: Token, name: Token, params: tuple[Param, ...] | None,
                returns: Expr | None, body: tuple[Stmt, ...]) -> FunctionDef:
        return _make(FunctionDef, self._span(tok, body[-1]), _ident(name), params or (),
                     returns, (), body)

    def classdef(self, tok: Token, name: Token, body: tuple[Stmt, ...]) -> ClassDef:
        return _make(ClassDef, self._span(tok, body[-1]), _ident(name), (), body)

    def decorator(self, at: Token, expr: Expr) -> tuple[Token, Expr]:
        return at, expr

    def decorated(self, *items: Any) -> FunctionDef | ClassDef:
        definition = items[-1]
        at = items[0][0]
        return replace(definition, decorators=tuple(expr for _, expr in items[:-1]),
                       line=at.line, col=at.column)

    # ------------------------------------------------------------------ operators
    def or_test(self, *items: Any) -> Expr:
        or_values: list[Expr] = []
        and_values: list[Expr] = []
        nots: list[Token] = []
        for item in items:
            if type(item) is Token:
                kind = item.type
                if kind == "NOT":
                    nots.append(item)
                elif kind == "OR":
                    or_values.append(self._bool("and", and_values))
                    and_values = []
                # "AND" only separates operands
            else:
                while nots:
                    tok = nots.pop()
                    item = _make(UnaryOp, self._span(tok, item), "not", item)
                and_values.append(item)
        or_values.append(self._bool("and", and_values))
        return self._bool("or", or_values)

    def comparison(self, *items: Any) -> Expr:
        operands: list[Expr] = []
        ops: list[str] = []
        segment: list[Any] = []
        i, n = 0, len(items)
        while i < n:
            item = items[i]
            if type(item) is Token and item.type in _COMPARISON_TERMINALS:
                kind = item.type
                if kind == "NOT":            # "not in"
                    op = "not in"
                    i += 1
                elif kind == "IS" and i + 1 < n and type(items[i + 1]) is Token \
                        and items[i + 1].type == "NOT":
                    op = "is not"
                    i += 1
                else:
                    op = item.value
                ops.append(op)
                operands.append(self._arith(segment))
                segment = []
            else:
                segment.append(item)
            i += 1
        operands.append(self._arith(segment))
        if not ops:
            return operands[0]
        first = operands[0]
        return _make(Compare, self._span(first, operands[-1]), first, tuple(ops),
                     tuple(operands[1:]))

    def ifexp(self, body: Expr, test: Expr, orelse: Expr) -> IfExp:
        return _make(IfExp, self._span(body, orelse), test, body, orelse)

    def lambda_params(self, *names: Token) -> tuple[Token, ...]:
        seen: set[str] = set()
        for tok in names:
            word = _ident(tok)
            if word in seen:
                raise fail_tok(tok, f"duplicate parameter '{word}'")
            seen.add(word)
        return names

    def lambdef(self, tok: Token, params: tuple[Token, ...] | None, body: Expr) -> Lambda:
        return _make(Lambda, self._span(tok, body), tuple(p.value for p in params or ()), body)

    # ------------------------------------------------------------------ primaries
    def name(self, tok: Token) -> Expr:
        word = tok.value
        if word in CONSTANT_NAMES:
            return Constant(CONSTANT_NAMES[word], word, line=tok.line, col=tok.column,
                            end_line=tok.end_line, end_col=tok.end_column)
        return Name(word, line=tok.line, col=tok.column, end_line=tok.end_line,
                    end_col=tok.end_column)

    def number(self, tok: Token) -> Constant:
        text = tok.value
        try:
            if text[:2] in _PREFIXED_INT or not any(c in text for c in ".eE"):
                value: int | float = int(text, 0)
            else:
                value = float(text)
        except ValueError:
            digits = text.replace("_", "")
            if digits[:1] == "0" and len(digits) > 1 and digits.isdigit() and len(digits) < 4300:
                raise fail_tok(tok, "leading zeros in decimal integer literals are not "
                                     "permitted (use an 0o prefix for octal)") from None
            # Python refuses to convert decimal strings of more than 4300 digits.
            raise fail_tok(tok, f"integer literal too long ({len(digits)} digits; write "
                                 "large numbers in hexadecimal)") from None
        return Constant(value, text, line=tok.line, col=tok.column, end_line=tok.end_line,
                        end_col=tok.end_column)

    def string(self, *toks: Token) -> Constant:
        first, last = toks[0], toks[-1]
        if len(toks) == 1:
            value: Any = _string_value(first)
            text = first.value
        else:
            values = [_string_value(tok) for tok in toks]
            kinds = {type(v) for v in values}
            if len(kinds) > 1:
                raise SyntaxFailure("cannot mix bytes and str literals", first.line, first.column,
                            last.end_line, last.end_column)
            value = b"".join(values) if bytes in kinds else "".join(values)  # type: ignore
            text = " ".join(tok.value for tok in toks)
        return _make(Constant, self._span(first, last), value, text)

    def ellipsis(self, tok: Token) -> Constant:
        return _make(Constant, _tok_span(tok), Ellipsis, "...")

    def group(self, lpar: Token, inner: Expr, rpar: Token) -> Expr:
        # The parentheses stay out of ``inner``'s span; remember them for enclosing nodes.
        self._groups[id(inner)] = (inner, lpar.line, lpar.column, rpar.end_line, rpar.end_column)
        return inner

    def tuple_expr(self, *items: Any) -> Tuple:
        if items[-1] is None:   # a bare tuple without a trailing comma
            items = items[:-1]
        first = items[0]
        parenthesized = type(first) is Token and first.type == "LPAR"
        elts = tuple(item for item in items if type(item) is not Token)
        return _make(Tuple, self._span(first, items[-1]), elts, parenthesized)

    def list_expr(self, lsqb: Token, *rest: Any) -> List:
        return _make(List, self._span(lsqb, rest[-1]), rest[:-1])

    def dict_expr(self, lbrace: Token, *rest: Any) -> Dict:
        items = rest[:-1]
        return _make(Dict, self._span(lbrace, rest[-1]), items[0::2], items[1::2])

    def attribute(self, value: Expr, name: Token) -> Attribute:
        return _make(Attribute, self._span(value, name), value, _ident(name))

    def call(self, func: Expr, args: tuple[Any, ...] | None, rpar: Token) -> Call:
        positional: list[Expr] = []
        keywords: list[Keyword] = []
        seen: set[str] = set()
        has_kwstar = False
        for arg in args or ():
            if type(arg) is Keyword:
                if arg.arg is None:
                    has_kwstar = True
                elif arg.arg in seen:
                    raise fail_at(arg, f"keyword argument repeated: {arg.arg}")
                else:
                    seen.add(arg.arg)
                keywords.append(arg)
            elif type(arg) is Starred:
                if has_kwstar:
                    raise fail_at(arg, "iterable argument unpacking follows keyword argument "
                                        "unpacking")
                positional.append(arg)
            else:
                if keywords:
                    what = "keyword argument unpacking" if has_kwstar else "keyword argument"
                    raise fail_at(arg, f"positional argument follows {what}")
                positional.append(arg)
        return _make(Call, self._span(func, rpar), func, tuple(positional), tuple(keywords))

    def arguments(self, *args: Any) -> tuple[Any, ...]:
        return args

    def keyword(self, name: Token, value: Expr) -> Keyword:
        return _make(Keyword, self._span(name, value), _ident(name), value)

    def kwstar(self, tok: Token, value: Expr) -> Keyword:
        return _make(Keyword, self._span(tok, value), None, value)

    def starred(self, tok: Token, value: Expr) -> Starred:
        return _make(Starred, self._span(tok, value), value)

    def subscript(self, value: Expr, index: tuple[Expr, ...], rsqb: Token) -> Subscript:
        return _make(Subscript, self._span(value, rsqb), value, index)

    def subscripts(self, *items: Expr) -> tuple[Expr, ...]:
        return items

    def slice(self, *items: Any) -> Slice:
        # [lower, ":", upper] or [lower, ":", upper, ":", step]; absent parts are None.
        lower, upper = items[0], items[2]
        step = items[4] if len(items) == 5 else None
        first = lower if lower is not None else items[1]
        last = next(item for item in reversed(items) if item is not None)
        return _make(Slice, self._span(first, last), lower, upper, step)
