"""The buffer and variable statements of ``@T.prim_func`` bodies: ``T.Buffer``, ``T.match_buffer``,
``T.alloc_buffer``, ``T.decl_buffer``, ``T.allocate``, ``T.allocate_const``, ``T.handle``, ``T.Var``,
``T.iter_var`` and the thread launches (a mixin of :class:`~.tir_parser.TirParser`)."""
from __future__ import annotations

from typing import Any, Callable

from ...ir import tir
from ...ir.dtype import parse_dtype
from ...ir.node import Map
from ..printer.analysis import expr_deep_equal, is_one
from ..syntax import nodes as ast
from .exprs import Sig, describe, handles
from .values import Namespace

__all__ = ["TirBuffers"]

_TRUE = tir.IntImm("bool", 1)
_BUFFER_ARGS = ("data", "strides", "elem_offset", "scope", "align", "offset_factor", "buffer_type",
                "axis_separators")


class _Scoped:
    """The value of a call that scopes over statements (``T.allocate``, ``T.attr``, ``T.LetStmt``,
    ``T.Assert``, ``T.decl_buffer``, ``T.launch_thread``): used in ``with`` it wraps the body,
    used flat it wraps the rest of the sequence. ``value`` is what ``as x``/``x = ...`` names."""

    __slots__ = ("make", "value")

    def __init__(self, make: Callable[[tir.Stmt], tir.Stmt], value: Any = None) -> None:
        self.make = make
        self.value = value


class TirBuffers:
    """Buffers, allocations, variables and threads; the parser's state (``frames``, ``params``,
    ``buffer_map``, ``fresh``) and block helpers are :class:`~.tir_parser.TirParser`'s."""

    @handles("T.allocate")
    def _allocate(self, node: Any) -> _Scoped:
        """``T.allocate(extents, dtype, scope, condition, annotations)``."""
        sig = Sig("T.allocate", ("extents", "dtype", "scope", "condition", "annotations"), 2)
        ext_node, dt_node, scope_node, cond_node, ann_node = self.bind(node, sig)
        extents = self.shape(ext_node)
        dtype = self.expect_dtype(dt_node, self.eval(dt_node))
        scope = self.expect_str(scope_node, self.eval(scope_node), "scope") if scope_node else "global"
        cond = self.prim(cond_node, "bool") if cond_node is not None else _TRUE
        ann = self.eval_attr_dict(ann_node, "annotations") if ann_node is not None else Map()
        var = tir.Var(self.take_name("buf"), "handle", tir.PointerType(dtype, scope))
        return _Scoped(lambda body: _allocate(tir.Allocate(var, dtype, extents, cond, body, ann)), var)

    @handles("T.allocate_const")
    def _allocate_const(self, node: Any) -> _Scoped:
        """``T.allocate_const(data, dtype, extents, annotations)``: constant data of that shape."""
        sig = Sig("T.allocate_const", ("data", "dtype", "extents", "annotations"), 3)
        data_n, dt_node, ext_node, ann_node = self.bind(node, sig)
        dtype = self.expect_dtype(dt_node, self.eval(dt_node))
        extents = self.shape(ext_node)
        values = self.eval(data_n)
        if not isinstance(values, (list, tuple)):
            self.error(data_n, f"T.allocate_const takes a list of numbers, got {describe(values)}")
        is_float = parse_dtype(dtype).is_float
        data = []
        for v in values:
            if isinstance(v, (tir.IntImm, tir.FloatImm)):
                v = v.value
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self.error(data_n, f"T.allocate_const's data holds numbers, got {describe(v)}")
            data.append(float(v) if is_float else int(v))
        size = 1
        for e in extents:
            size = size * e.value if isinstance(e, tir.IntImm) else -1
        if size >= 0 and size != len(data):
            self.error(data_n, f"T.allocate_const has {len(data)} values for extents of {size} elements")
        ann = self.eval_attr_dict(ann_node, "annotations") if ann_node is not None else Map()
        var = tir.Var(self.take_name("buf"), "handle", tir.PointerType(dtype, "global"))
        return _Scoped(lambda body: tir.AllocateConst(var, dtype, extents, tuple(data), body, ann), var)

    # ---------------------------------------------------------------- buffers
    _BUFFER = Sig("T.Buffer", ("shape", "dtype", *_BUFFER_ARGS), 1)
    _MATCH = Sig("T.match_buffer", ("param", "shape", "dtype", *_BUFFER_ARGS), 1)
    _ALLOC = Sig("T.alloc_buffer", ("shape", "dtype", *_BUFFER_ARGS), 1)
    _DECL = Sig("T.decl_buffer", ("shape", "dtype", *_BUFFER_ARGS), 1)

    def shape(self, node: Any) -> tuple[tir.PrimExpr, ...]:
        """A buffer shape: a tuple/list of extents, or one extent."""
        value = self.eval(node)
        items = value if isinstance(value, (tuple, list)) else (value,)
        out = []
        for v in items:
            dim = self.to_prim(node, v)
            if not parse_dtype(dim.dtype).is_integer:
                self.error(node, f"buffer dimensions must be integers, got dtype {dim.dtype}")
            out.append(dim)
        return tuple(out)

    def make_buffer(self, name: str, shape_node: Any, dtype_node: Any, rest: list[Any]) -> tir.Buffer:
        """A Buffer from the arguments of T.Buffer / T.match_buffer / T.alloc_buffer / T.decl_buffer."""
        data_n, strides_n, offset_n, scope_n, align_n, factor_n, type_n, sep_n = rest
        shape = self.shape(shape_node)
        dtype = self.expect_dtype(dtype_node, self.eval(dtype_node)) if dtype_node is not None else "float32"
        scope = self.expect_str(scope_n, self.eval(scope_n), "scope") if scope_n is not None else "global"
        if data_n is not None:
            data = self.eval(data_n)
            if not isinstance(data, tir.Var) or data.dtype != "handle":
                self.error(data_n, f"data= must be a handle variable, got {describe(data)}")
        else:
            data = tir.Var(name, "handle", tir.PointerType(dtype, scope))
        strides: tuple = ()
        # A stride or offset written as a name is a new variable of the shape's index dtype (as in TVM).
        index_dtype = shape[0].dtype if shape else "int32"
        if strides_n is not None:
            sv = self.eval(strides_n)
            strides = tuple(tir.Var(x, index_dtype) if isinstance(x, str) else self.to_prim(strides_n, x)
                            for x in (sv if isinstance(sv, (tuple, list)) else (sv,)))
        elem_offset = None
        if offset_n is not None:
            ov = self.eval(offset_n)
            elem_offset = tir.Var(ov, index_dtype) if isinstance(ov, str) else self.to_prim(offset_n, ov)
            if isinstance(elem_offset, tir.IntImm) and elem_offset.value == 0:
                elem_offset = None  # the default: the printer leaves a zero offset out
        align = self.expect_int(align_n, self.eval(align_n), "align") if align_n is not None else -1
        factor = self.expect_int(factor_n, self.eval(factor_n), "offset_factor") if factor_n is not None else 0
        if factor != 0 and offset_n is None:
            # As TVM's decl_buffer: an offset factor without an offset makes the offset a variable.
            elem_offset = tir.Var(f"{name}_elem_offset", index_dtype)
        btype = self.expect_str(type_n, self.eval(type_n), "buffer_type") if type_n is not None else "default"
        if btype not in ("default", "auto"):
            self.error(type_n, f"buffer_type must be \"default\" or \"auto\", got {btype!r}")
        seps: tuple = ()
        if sep_n is not None:
            sv = self.eval(sep_n)
            seps = tuple(self.expect_int(sep_n, x, "axis_separators") for x in (sv or ()))
        return tir.Buffer(name, data, dtype, shape, strides, elem_offset, scope,
                          align if align > 0 else 64, factor if factor > 0 else 1, btype, seps)

    @handles("T.Buffer")
    def _buffer(self, node: Any) -> tir.Buffer:
        """``T.Buffer(shape, dtype, ...)``."""
        shape, dtype, *rest = self.bind(node, self._BUFFER)
        return self.make_buffer(self.take_name("buffer"), shape, dtype, rest)

    def subscript(self, node: Any, base: Any) -> Any:
        """Legacy ``T.Buffer[shape, dtype]``, else buffer indexing."""
        if isinstance(base, Namespace) and base.path == "T.Buffer":  # legacy T.Buffer[(4, 4), "float32"]
            items = node.index
            if not 1 <= len(items) <= 2:
                self.error(node, "T.Buffer[shape, dtype] takes a shape and a dtype")
            return self.make_buffer(self.take_name("buffer"), items[0], items[1] if len(items) > 1 else None,
                                    [None] * len(_BUFFER_ARGS))
        return super().subscript(node, base)

    @handles("T.match_buffer")
    def _match_buffer(self, node: Any) -> tir.Buffer:
        """``T.match_buffer(param_or_region, shape, ...)``."""
        param_n, shape, dtype, *rest = self.bind(node, self._MATCH)
        source = self.eval(param_n)
        if shape is None:
            # A region's extents and its buffer's dtype, when not written (TVM's sugar).
            if not isinstance(source, (tir.BufferRegion, tir.BufferLoad, tir.Buffer)):
                self.error(node.func, "T.match_buffer is missing the required argument 'shape'")
            region = self.as_region(param_n, source, "T.match_buffer")
            extents = tuple(r.extent for r in region.region)
            shape = ast.Constant(extents, line=param_n.line, col=param_n.col, end_line=param_n.end_line,
                                 end_col=param_n.end_col)
            if dtype is None:
                dtype = ast.Constant(region.buffer.dtype, line=param_n.line, col=param_n.col,
                                     end_line=param_n.end_line, end_col=param_n.end_col)
        buf = self.make_buffer(self.take_name("buffer"), shape, dtype, rest)
        if isinstance(source, tir.Var):
            if source not in self.params or source.dtype != "handle" or len(self.frames) > 1:
                self.error(param_n, f"T.match_buffer binds a handle parameter of the function "
                                    f"(at function level), got {describe(source)}")
            if source in self.buffer_map:
                self.error(param_n, f"the parameter {source.name} is already bound to a buffer")
            self.buffer_map[source] = buf
            return buf
        if isinstance(source, (tir.BufferRegion, tir.BufferLoad, tir.Buffer)):
            frame = self.block_frame(node, "T.match_buffer of a buffer region")
            frame.match_buffers.append(tir.MatchBufferRegion(buf, self.as_region(param_n, source, "T.match_buffer")))
            return buf
        self.error(param_n, f"T.match_buffer takes a handle parameter or a buffer region, got {describe(source)}")

    @handles("T.alloc_buffer")
    def _alloc_buffer(self, node: Any) -> tir.Buffer:
        """``T.alloc_buffer(shape, ...)`` in the innermost block (or the root)."""
        shape, dtype, *rest = self.bind(node, self._ALLOC)
        buf = self.make_buffer(self.take_name("buffer"), shape, dtype, rest)
        self.frames[-1].alloc_buffers.append(buf)
        return buf

    @handles("T.decl_buffer")
    def _decl_buffer(self, node: Any) -> _Scoped:
        """``T.decl_buffer(shape, ...)``: a DeclBuffer over its scope."""
        shape, dtype, *rest = self.bind(node, self._DECL)
        buf = self.make_buffer(self.take_name("buffer"), shape, dtype, rest)
        return _Scoped(lambda body: tir.DeclBuffer(buf, body), buf)

    # ---------------------------------------------------------------- variables and threads
    @handles("T.handle")
    def _handle(self, node: Any) -> tir.Var:
        """``T.handle(dtype, scope)``: a new pointer variable."""
        dt_node, scope_node = self.bind(node, Sig("T.handle", ("dtype", "storage_scope"), 0))
        name = self.take_name()
        if dt_node is None:
            var = tir.Var(name, "handle")
        else:
            dtype = self.expect_dtype(dt_node, self.eval(dt_node))
            scope = self.expect_str(scope_node, self.eval(scope_node), "storage_scope") if scope_node else "global"
            var = tir.Var(name, "handle", tir.PointerType(dtype, scope))
        self.fresh.add(id(var))
        return var

    def typed_call(self, node: Any, dtype: str) -> Any:
        """``T.int64()``: remember the new variable for its assignment."""
        value = super().typed_call(node, dtype)
        if isinstance(value, tir.Var):
            self.fresh.add(id(value))
        return value

    @handles("T.Var")
    def _var(self, node: Any) -> tir.Var:
        """``T.Var("n", "int32")`` (or a dtype such as ``T.int64``): a new variable of that name."""
        name_n, dt_node = self.bind(node, Sig("T.Var", ("name", "dtype"), 2))
        name = self.expect_str(name_n, self.eval(name_n), "the variable name")
        dt = self.eval(dt_node)
        if isinstance(dt, tir.PointerType):
            var = tir.Var(name, "handle", dt)
        else:
            var = tir.Var(name, self.expect_dtype(dt_node, dt))
        self.fresh.add(id(var))
        return var

    _ITER_TYPES = {"DataPar": tir.IterType.DataPar, "ThreadIndex": tir.IterType.ThreadIndex,
                   "CommReduce": tir.IterType.CommReduce, "Ordered": tir.IterType.Ordered,
                   "Opaque": tir.IterType.Opaque}

    @handles("T.iter_var")
    def _iter_var(self, node: Any) -> tir.IterVar:
        """``T.iter_var(var, T.Range(0, 256), "ThreadIndex", "threadIdx.x")``."""
        var_n, dom_n, kind_n, tag_n = self.bind(node, Sig("T.iter_var", ("var", "dom", "iter_type", "thread_tag"), 3))
        var = self.eval(var_n)
        if not isinstance(var, tir.Var):
            self.error(var_n, f"T.iter_var takes a variable, got {describe(var)}")
        dom = self.eval(dom_n)
        if dom is not None and not isinstance(dom, tir.Range):
            dom = self.domain(dom_n)
        kind = self.expect_str(kind_n, self.eval(kind_n), "the iterator type")
        if kind not in self._ITER_TYPES:
            self.error(kind_n, f"the iterator type is one of {', '.join(self._ITER_TYPES)}, got {kind!r}")
        tag = self.expect_str(tag_n, self.eval(tag_n), "the thread tag") if tag_n is not None else ""
        return tir.IterVar(dom, var, self._ITER_TYPES[kind], tag)

    @handles("T.env_thread")
    def _env_thread(self, node: Any) -> tir.IterVar:
        """``T.env_thread(tag)``."""
        (tag_node,) = self.bind(node, Sig("T.env_thread", ("thread_tag",), 1))
        tag = self.expect_str(tag_node, self.eval(tag_node), "the thread tag")
        return tir.IterVar(None, tir.Var(self.take_name(), "int32"), tir.IterType.ThreadIndex, tag)

    @handles("T.launch_thread")
    def _launch_thread(self, node: Any) -> _Scoped:
        """``T.launch_thread(tag_or_thread, extent)``: a thread_extent AttrStmt."""
        thread_node, extent_node = self.bind(node, Sig("T.launch_thread", ("thread", "extent"), 2))
        thread = self.eval(thread_node)
        extent = self.prim(extent_node)
        dom = tir.Range(tir.IntImm(extent.dtype, 0), extent)
        if isinstance(thread, str):
            iv = tir.IterVar(dom, tir.Var(self.take_name(), extent.dtype), tir.IterType.ThreadIndex, thread)
        elif isinstance(thread, tir.IterVar):
            iv = tir.IterVar(dom, thread.var, tir.IterType.ThreadIndex, thread.thread_tag)
        else:
            self.error(thread_node, f"T.launch_thread takes a thread tag or T.env_thread, got {describe(thread)}")
        return _Scoped(lambda body: tir.AttrStmt(iv, "thread_extent", extent, body), iv.var)


def _allocate(s: tir.Allocate) -> tir.Stmt:
    """An Allocate whose body declares the buffer it allocates prints as ``T.decl_buffer(...)``,
    which reads back as that DeclBuffer alone (it allocates): both spellings build the DeclBuffer."""
    body = s.body
    if (type(body) is tir.DeclBuffer and body.buffer.data is s.buffer_var and body.buffer.dtype == s.dtype
            and is_one(s.condition) and not s.annotations and len(s.extents) == len(body.buffer.shape)
            and all(expr_deep_equal(a, b) for a, b in zip(s.extents, body.buffer.shape))):
        return body
    return s
