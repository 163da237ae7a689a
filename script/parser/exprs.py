"""The expression evaluator both dialects build on: name lookup, attributes, literals,
containers, call dispatch to ``R.*``/``T.*`` handlers, argument binding, and the shared
checks of literal values (strings, ints, dtypes, attribute values)."""
from __future__ import annotations

from typing import Any, Callable, ClassVar, NoReturn, Sequence

import numpy as np

from ...ir import relax as rx
from ...ir import tir
from ...ir.dtype import is_valid_dtype
from ...ir.module import GlobalVar
from ...ir.node import Map, Node
from ..syntax import nodes as ast
from ..errors import ScriptError
from .context import ParseContext
from .scope import MISSING, Scope, suggest
from .values import ModuleRef, Namespace

__all__ = ["Evaluator", "Sig", "handles", "KNOWN_DTYPES", "attr_value"]

# TVM 0.27 renamed these keywords of calls (``R.call_tir(..., out_ty=...)``); read as the old names.
TVM_027_KEYWORDS = {"out_ty": "out_sinfo", "ty_args": "sinfo_args"}

KNOWN_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "bfloat16", "handle", "void")


def handles(*paths: str, kind: str = "expr") -> Callable[[Callable], Callable]:
    """Mark a method as the handler of the dotted names ``paths`` in calls (``kind="expr"``),
    bare call statements (``"stmt"``), with-statements (``"with"``) or for-loops (``"for"``)."""

    def mark(fn: Callable) -> Callable:
        """Record the handled names on the method."""
        fn._handles = (kind, paths)  # type: ignore[attr-defined]
        return fn

    return mark


class Sig:
    """A handler's parameter list: positional-or-keyword names (the first ``required`` are
    mandatory), keyword-only names, and whether extra positional arguments are collected."""

    __slots__ = ("name", "params", "required", "kwonly", "varargs", "_index")

    def __init__(self, name: str, params: Sequence[str], required: int = 0, kwonly: Sequence[str] = (),
                 varargs: bool = False) -> None:
        self.name = name
        self.params = tuple(params)
        self.required = required
        self.kwonly = tuple(kwonly)
        self.varargs = varargs
        self._index = {p: i for i, p in enumerate(self.params + self.kwonly)}


def attr_value(value: Any) -> Any:
    """A parsed Python value as an IR attribute value: lists become tuples, dicts Maps."""
    if isinstance(value, (list, tuple)):
        return tuple(attr_value(v) for v in value)
    if isinstance(value, dict):
        return Map((k, attr_value(v)) for k, v in value.items())
    if isinstance(value, np.generic):
        return value.item()
    # T.int32(1) and T.bool(True) print as 1 and True, which read back as Python values (TVM
    # converts Python ints to IntImm either way: one value, one spelling).
    if type(value) is tir.IntImm and value.dtype in ("int32", "bool"):
        return bool(value.value) if value.dtype == "bool" else value.value
    return value


def number_text(value: int | float) -> str:
    """``repr`` of a number for messages; huge ints are abbreviated (Python refuses to print
    ints of more than 4300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        sign = "-" if value < 0 else ""
        try:
            text = str(abs(value))
        except ValueError:   # more than 4300 digits
            digits = int(value.bit_length() * 0.30103) + 1
            return f"{sign}{hex(abs(value))[:18]}... (an integer of about {digits} digits)"
        return f"{sign}{text[:20]}... (an integer of {len(text)} digits)"
    return repr(value)


def _describe(value: Any) -> str:
    """A short human description of a parse-time value."""
    if isinstance(value, Namespace):
        return f"'{value.path}'"
    if isinstance(value, bool):
        return f"the bool {value}"
    if isinstance(value, (int, float)):
        return f"the number {number_text(value)}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if value is None:
        return "None"
    if isinstance(value, (tuple, list)):
        n = len(value)
        return f"an empty {type(value).__name__}" if not n else f"a {type(value).__name__} of {n} value{'s' if n != 1 else ''}"
    if isinstance(value, tir.Buffer):
        return f"the buffer {value.name}"
    if isinstance(value, tir.PrimExpr):
        return f"a TIR expression of dtype {value.dtype}"
    if isinstance(value, rx.Var):
        return f"the Relax variable {value.name_hint}"
    if isinstance(value, rx.Expr):
        return f"a Relax {type(value).__name__}"
    if isinstance(value, rx.StructInfo):
        return "a type annotation"
    if isinstance(value, GlobalVar):
        return f"the function {value.name_hint}"
    if isinstance(value, ModuleRef):
        return f"the module {value.name}"
    return f"a {type(value).__name__}"


class Evaluator:
    """Evaluates syntax-tree expressions to parse-time values (IR nodes or Python values).

    Dispatch is by syntax class through ``_table`` (``visit_<Class>`` methods); calls of dotted
    names go to the methods marked with :func:`handles`. Subclasses add a dialect's handlers.
    """

    _table: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {}
    # Statement visitors (``stmt_<Class>`` methods) of the dialect parsers.
    _stmt_table: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {}
    handlers: ClassVar[dict[str, Callable[[Any, Any], Any]]] = {}
    stmt_handlers: ClassVar[dict[str, Callable[[Any, Any], Any]]] = {}
    with_handlers: ClassVar[dict[str, Callable[..., Any]]] = {}
    for_handlers: ClassVar[dict[str, Callable[[Any, Any], Any]]] = {}
    default_int: ClassVar[str] = "int32"
    dialect: ClassVar[str] = "script"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tables: dict[str, dict[type, Callable]] = {"visit_": {}, "stmt_": {}}
        kinds: dict[str, dict[str, Callable]] = {"expr": {}, "stmt": {}, "with": {}, "for": {}}
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                if not callable(fn):
                    continue
                for prefix, table in tables.items():
                    if attr.startswith(prefix):
                        node_cls = getattr(ast, attr[len(prefix):], None)
                        if node_cls is not None:
                            table[node_cls] = fn
                marks = getattr(fn, "_handles", None)
                if marks is not None:
                    for path in marks[1]:
                        # The most derived method of that name, so an override is the one called.
                        kinds[marks[0]][path] = getattr(cls, attr)
        cls._table = tables["visit_"]
        cls._stmt_table = tables["stmt_"]
        cls.handlers = kinds["expr"]
        cls.stmt_handlers = kinds["stmt"]
        cls.with_handlers = kinds["with"]
        cls.for_handlers = kinds["for"]

    def __init__(self, ctx: ParseContext, scope: Scope) -> None:
        self.ctx = ctx
        self.scope = scope
        # Target names of the assignment whose right-hand side is being evaluated
        # (``n = T.int64()`` names the new variable ``n``).
        self.target_names: list[str] = []

    # ---------------------------------------------------------------- entry points
    def eval(self, node: Any) -> Any:
        """The value of an expression node."""
        fn = self._table.get(type(node))
        if fn is None:
            self.error(node, f"{_syntax_name(node)} is not supported in TVMScript expressions")
        return fn(self, node)

    def visit_stmt(self, stmt: Any) -> Any:
        """Parse one statement through ``_stmt_table``; unexpected Python errors become
        ScriptErrors located at the statement."""
        fn = self._stmt_table.get(type(stmt))
        if fn is None:
            self.error(stmt, f"{_syntax_name(stmt)} is not supported in {self.dialect} functions")
        try:
            return fn(self, stmt)
        except ScriptError:
            raise
        except RecursionError:
            self.error(stmt, "this statement is nested too deeply to parse")
        except Exception as err:  # a parser bug must still point at the script
            raise ScriptError.at(stmt, f"internal error while parsing this statement: "
                                       f"{type(err).__name__}: {err}", self.ctx.source,
                                 self.ctx.filename) from err

    def error(self, node: Any, message: str) -> NoReturn:
        """Raise a ScriptError pointing at ``node``."""
        self.ctx.error(node, message)

    def take_name(self, default: str = "v") -> str:
        """The next target name of the assignment being evaluated (for new variables)."""
        return self.target_names.pop(0) if self.target_names else default

    # ---------------------------------------------------------------- leaves
    def visit_Constant(self, node: Any) -> Any:
        """A literal: its Python value (typed later, by context)."""
        return node.value

    def visit_Name(self, node: Any) -> Any:
        """A name: the script's binding, else the caller's value, else a default."""
        name = node.id
        value = self.scope.lookup(name)
        if value is MISSING:
            value = self.ctx.resolve(name)
            if value is MISSING:
                self.undefined(node, name)
        return value

    def undefined(self, node: Any, name: str) -> NoReturn:
        """Report an undefined name, with the reason when it went out of scope."""
        why = self.scope.gone.get(name)
        if why is not None:
            self.error(node, f"'{name}' is not defined here: {why}")
        hint = self.scope.suggest(name, self.ctx.visible_names())
        self.error(node, f"name '{name}' is not defined{hint}")

    def visit_Attribute(self, node: Any) -> Any:
        """``a.b``: a deeper namespace, a module function or a buffer field."""
        base = self.eval(node.value)
        if type(base) is Namespace:
            return base.attr(node.attr)
        return self.get_attribute(node, base, node.attr)

    def get_attribute(self, node: Any, base: Any, name: str) -> Any:
        """``base.name`` for a non-namespace value (module functions, buffer fields)."""
        if isinstance(base, ModuleRef):
            gv = base.functions.get(name)
            if gv is None:
                self.error(node, f"module {base.name} has no function '{name}'"
                                 f"{suggest(name, base.functions)}")
            return gv
        if isinstance(base, tir.Buffer):
            if name in ("data", "shape", "dtype", "strides", "elem_offset", "scope"):
                value = getattr(base, name)
                return tuple(value) if isinstance(value, tuple) else value
        if isinstance(base, dict) and name in base:
            return base[name]
        self.error(node, f"{_describe(base)} has no attribute '{name}'")

    # ---------------------------------------------------------------- containers
    def visit_Tuple(self, node: Any) -> tuple:
        """A tuple of values."""
        ev = self.eval
        return tuple([ev(e) for e in node.elts])

    def visit_List(self, node: Any) -> list:
        """A list of values."""
        ev = self.eval
        return [ev(e) for e in node.elts]

    def visit_Dict(self, node: Any) -> dict:
        """A dictionary (attribute maps)."""
        out: dict = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                self.error(v, "'**' unpacking is not supported in TVMScript dictionaries")
            key = self.eval(k)
            if isinstance(key, tir.IntImm) and key.dtype == "bool":
                key = bool(key.value)
            value = self.eval(v)
            try:
                out[key] = value
            except TypeError:  # an unhashable key such as a list
                self.error(k, f"{_describe(key)} cannot be a dictionary key")
        return out

    def visit_Subscript(self, node: Any) -> Any:
        """``a[i]``: metadata, Python containers, or the dialect's indexing."""
        meta = self._meta_reference(node)
        if meta is not None:
            return meta
        base = self.eval(node.value)
        if isinstance(base, (dict, list, tuple)):
            index = node.index
            key = self.eval(index[0]) if len(index) == 1 else tuple(self.eval(i) for i in index)
            try:
                got = base[key]
            except (KeyError, IndexError, TypeError):
                self.error(index[0], f"{_describe(key)} is not a valid index of {_describe(base)}")
            return self.from_python(node, got)
        return self.subscript(node, base)

    def subscript(self, node: Any, base: Any) -> Any:
        """``base[...]`` for an IR value (buffers, tuples); dialects override."""
        self.error(node.value, f"{_describe(base)} cannot be indexed")

    def from_python(self, node: Any, value: Any) -> Any:
        """A value read out of a Python container (metadata) as a script value."""
        if isinstance(value, np.ndarray):
            return self.ctx.constant(value)
        return value

    def _meta_reference(self, node: Any) -> Any:
        """Resolve ``meta[relay.Constant][i]`` / ``metadata["..."][i]``; None when not one."""
        chain = []
        cur = node
        while type(cur) is ast.Subscript:
            if len(cur.index) != 1:
                return None
            chain.append(cur.index[0])
            cur = cur.value
        if type(cur) is not ast.Name or cur.id not in ("meta", "metadata"):
            return None
        root = self.scope.lookup(cur.id)
        if root is MISSING:
            root = self.ctx.resolve(cur.id)
        if root is MISSING:
            self.error(node, f"{self.ctx.text(node)} refers to metadata that was not given: this text "
                             f"has no '{cur.id} = ...' prelude; pass the constants with "
                             f"from_source(text, extra_vars={{'{cur.id}': {{...}}}})")
        if not isinstance(root, dict):
            return None
        value: Any = root
        for index_node in reversed(chain):
            if isinstance(value, dict):
                key: Any = self.ctx.text(index_node) if type(index_node) in (ast.Name, ast.Attribute) else None
                if key is None or key not in value:
                    key = self.eval(index_node)
                if key not in value:
                    self.error(index_node, f"the metadata has no entry {key!r}"
                                           f"{suggest(str(key), [str(k) for k in value])}")
                value = value[key]
            elif isinstance(value, (list, tuple)):
                index = self.eval(index_node)
                if not isinstance(index, int) or not -len(value) <= index < len(value):
                    self.error(index_node, f"metadata index {index!r} is out of range "
                                           f"(there are {len(value)} entries)")
                value = value[index]
            else:
                self.error(index_node, f"{_describe(value)} cannot be indexed")
        return self.from_python(node, value)

    # ---------------------------------------------------------------- operators
    def visit_IfExp(self, node: Any) -> Any:
        """``a if c else b``: chosen while parsing when ``c`` is a Python value."""
        test = self.eval(node.test)
        if isinstance(test, (bool, int)) and not isinstance(test, Node):
            return self.eval(node.body if test else node.orelse)
        return self.if_expr(node, test)

    def if_expr(self, node: Any, test: Any) -> Any:
        """``a if c else b`` with a non-Python condition; dialects override."""
        self.error(node.test, "the condition of 'x if c else y' must be known while parsing; "
                              "use T.Select or T.if_then_else for a run-time choice")

    def visit_Starred(self, node: Any) -> Any:
        """``*x`` outside the places that accept it."""
        self.error(node, "'*' unpacking is not supported here")

    def visit_Slice(self, node: Any) -> Any:
        """A slice outside a buffer index."""
        self.error(node, "a slice is only allowed inside a buffer index")

    def visit_Lambda(self, node: Any) -> Any:
        """A lambda (no TVMScript construct here takes one)."""
        self.error(node, "lambda is not supported here")

    # ---------------------------------------------------------------- calls
    def visit_Call(self, node: Any) -> Any:
        """A call: a handler of a dotted name, an op, or a function value."""
        return self.call_with(node, self.eval(node.func))

    def call_with(self, node: Any, func: Any) -> Any:
        """The call ``node`` of the already evaluated callee ``func``."""
        if type(func) is Namespace:
            handler = self.handlers.get(func.path)
            if handler is not None:
                return handler(self, node)
            return self.call_unknown(node, func)
        return self.call_value(node, func)

    def call_unknown(self, node: Any, func: Namespace) -> Any:
        """A call of a dotted name without a handler; dialects look further (ops, dtypes)."""
        self.unknown_name(node.func, func)

    def unknown_name(self, node: Any, func: Namespace) -> NoReturn:
        """Report an unknown ``R.x``/``T.x`` with the closest known names."""
        prefix = func.path.rsplit(".", 1)[0] + "."
        known = [p[len(prefix):] for p in self.known_paths() if p.startswith(prefix) and "." not in p[len(prefix):]]
        hint = suggest(func.leaf, known)
        if hint:
            hint = hint.replace("'", "'" + prefix, 1)
        self.error(node, f"{func.path} is not a known {_dialect_name(func)} function{hint}")

    def known_paths(self) -> list[str]:
        """Every dotted name this evaluator can call (for suggestions)."""
        return [*self.handlers, *self.stmt_handlers, *self.with_handlers, *self.for_handlers]

    def call_value(self, node: Any, func: Any) -> Any:
        """A call of a non-namespace value (module functions, local functions)."""
        self.error(node.func, f"{_describe(func)} is not callable")

    def bind(self, node: Any, sig: Sig) -> list[Any]:
        """Match a call's arguments to ``sig``: the syntax nodes per parameter (None when absent),
        then the extra positional nodes when ``sig.varargs``."""
        params = sig.params
        n = len(params)
        out: list[Any] = [None] * (n + len(sig.kwonly))
        extra: list[Any] = []
        for i, a in enumerate(self.unpack_args(node.args, sig.name)):
            if i < n:
                out[i] = a
            elif sig.varargs:
                extra.append(a)
            else:
                self.error(a, f"{sig.name} takes at most {n} positional argument{'s' if n != 1 else ''}"
                              f"{' (' + ', '.join(params) + ')' if params else ''}, got {len(node.args)}")
        for kw in node.keywords:
            name = kw.arg
            if name is None:
                self.error(kw, f"'**' unpacking is not supported in {sig.name}(...)")
            idx = sig._index.get(name)
            if idx is None and name in TVM_027_KEYWORDS:
                idx = sig._index.get(TVM_027_KEYWORDS[name])
            if idx is None:
                allowed = params + sig.kwonly
                self.error(kw, f"{sig.name} got an unexpected keyword argument '{name}'"
                               f"{suggest(name, allowed) or (' (it takes: ' + ', '.join(allowed) + ')' if allowed else '')}")
            if out[idx] is not None:
                self.error(kw, f"{sig.name} got multiple values for argument '{name}'")
            out[idx] = kw.value
        for i in range(sig.required):
            if out[i] is None:
                self.error(node.func, f"{sig.name} is missing the required argument '{params[i]}'")
        if sig.varargs:
            out.append(extra)
        return out

    def unpack_args(self, args: tuple, name: str) -> tuple:
        """The positional argument nodes with ``*x`` expanded (``T.grid(*A.shape)``): each item of
        the sequence ``x`` stands as a literal node at the ``*x``."""
        if not any(type(a) is ast.Starred for a in args):
            return args
        out: list[Any] = []
        for a in args:
            if type(a) is not ast.Starred:
                out.append(a)
                continue
            seq = self.eval(a.value)
            if not isinstance(seq, (tuple, list)):
                self.error(a, f"'*' unpacks a tuple or list in {name}(...), got {_describe(seq)}")
            out.extend(ast.Constant(v, line=a.line, col=a.col, end_line=a.end_line, end_col=a.end_col)
                       for v in seq)
        return tuple(out)

    def no_args(self, node: Any, name: str) -> None:
        """Check that a call has no arguments."""
        if node.args or node.keywords:
            first = (node.args or node.keywords)[0]
            self.error(first, f"{name} takes no arguments")

    # ---------------------------------------------------------------- literal checks
    def expect_str(self, node: Any, value: Any, what: str) -> str:
        """``value`` as a string, else an error at ``node``."""
        if not isinstance(value, str):
            self.error(node, f"{what} must be a string, got {_describe(value)}")
        return value

    def expect_int(self, node: Any, value: Any, what: str) -> int:
        """``value`` as a Python int (typed integer literals accepted), else an error."""
        if isinstance(value, tir.IntImm) and value.dtype != "bool":
            return value.value
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(node, f"{what} must be an integer, got {_describe(value)}")
        return value

    def expect_bool(self, node: Any, value: Any, what: str) -> bool:
        """``value`` as a Python bool (``T.bool(True)`` accepted), else an error."""
        if isinstance(value, tir.IntImm) and value.dtype == "bool":
            return bool(value.value)
        if not isinstance(value, bool):
            self.error(node, f"{what} must be True or False, got {_describe(value)}")
        return value

    def expect_dtype(self, node: Any, value: Any, what: str = "dtype") -> str:
        """``value`` as a valid dtype string (``T.float32`` accepted), else an error with a hint."""
        if isinstance(value, Namespace) and value.dialect == "T" and is_valid_dtype(value.leaf):
            return value.leaf
        if isinstance(value, rx.DataTypeImm):
            return value.value
        if not isinstance(value, str):
            self.error(node, f"{what} must be a dtype string such as \"float32\", got {_describe(value)}")
        if not is_valid_dtype(value):
            self.error(node, f"unknown dtype '{value}'{suggest(value, KNOWN_DTYPES)}")
        return value

    def eval_attr_dict(self, node: Any, what: str) -> Map:
        """A ``{"key": value}`` dictionary argument as a Map of attribute values."""
        value = self.eval(node)
        if not isinstance(value, dict):
            self.error(node, f"{what} takes a dictionary, got {_describe(value)}")
        for key in value:
            if not isinstance(key, str):
                self.error(node, f"the keys of {what} must be strings, got {_describe(key)}")
        return attr_value(value)


def describe(value: Any) -> str:
    """A short human description of a parse-time value (for messages)."""
    return _describe(value)


def _dialect_name(ns: Namespace) -> str:
    """The human name of a namespace's dialect."""
    return {"R": "Relax", "T": "TIR", "I": "IR"}.get(ns.dialect, "script")


def _syntax_name(node: Any) -> str:
    """How messages name a syntax construct."""
    names = {"Lambda": "lambda", "IfExp": "'x if c else y'", "Starred": "'*' unpacking",
             "Slice": "a slice", "Dict": "a dictionary", "ClassDef": "a class definition",
             "FunctionDef": "a function definition", "Import": "import", "ImportFrom": "import",
             "While": "'while'", "Break": "'break'", "Continue": "'continue'", "AugAssign": "'op='",
             "Assert": "'assert'", "For": "'for'"}
    name = type(node).__name__
    kind = "statement" if isinstance(node, ast.Stmt) else "expression"
    return names.get(name, f"a {name} {kind}")
