"""The ``tir.*`` intrinsics, each declared once: its arguments, result dtype, numpy meaning (what TE
evaluation, FoldConstant and the interpreter compute) and its LLVM lowering (an LLVM intrinsic, a
libm call, or a named expansion the code generator implements as ``_expand_<name>``).

The builtins (``reinterpret``, ``assume``, ``ret``, the extern and LLVM-intrinsic calls,
``tvm_call_packed``, ``address_of``...) are entries too, of kind ``"builtin"``: no numpy meaning,
but the facts of their script form (parameter names, dtype written first, the name or statement
they print as) and the names of their implementations, which each reader dispatches on: the
parser's ``_parse_<parse>``, the code generator's ``_expand_<expand>`` and the interpreter's
``_interpret_<interpret>``.

The parser, ``te``'s constructors, LowerIntrinsics, the code generator, the interpreter, the TE
evaluator and the printer all read this table; adding an intrinsic is one ``_entry(...)`` line below
(plus an ``_expand_<name>`` method in ``backend/llvm/calls.py`` when it needs a custom expansion).

This module holds data and numpy functions only: ``ir/`` must not import ``passes/`` or ``backend/``."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from . import tir

__all__ = ["Intrinsic", "INTRINSICS", "intrinsic", "intrinsic_of_op", "address_taken", "libm_numpy", "prefetch_stmt"]


@dataclasses.dataclass(frozen=True)
class Intrinsic:
    """One ``tir.<name>`` intrinsic.

    ``kind``: ``"math"`` (a numpy meaning and an LLVM lowering) or ``"builtin"``. ``arity``: the
    number of operands, None for any number (extern calls). ``args``: ``"float"`` (integer
    literals are read as float32; compiled code needs floats), ``"int"`` (integer operands),
    ``"bool"`` or ``"any"``. ``result``: ``"same"`` (the first argument's dtype), ``"bool"``, a
    fixed dtype (``"int32"``), ``"given"`` (written in the script as the first argument, before
    the operands) or ``"given_last"`` (written after the operands). Exactly one of ``llvm`` / ``expand`` / ``libm`` decides the compiled code, in
    that order (none: the LLVM backend cannot compile it); ``libm`` also names the C function
    (double version, float32 adds ``f``) that means the same, which the interpreter uses for
    ``T.call_extern``. ``legalize`` rewrites a call into other intrinsics before code generation
    (TVM's ``FLegalize``). ``interpret`` names the interpreter's implementation when the numpy
    meaning cannot say it (control flow, a target dtype). ``parse`` names the parser's
    builder of ``T.<script>(...)`` and ``params`` its parameter names, for the builtins whose script
    form is not their operands; ``script`` is the name it prints as (``T.call_packed`` for
    ``tvm_call_packed``) and ``statement`` the keyword an ``Evaluate`` of it prints as
    (``return v``). ``conditional``: the first operand is a condition and only the operand it picks
    is evaluated (``cond ? a : b``; the other may load out of bounds). ``takes_address``: the call
    takes the address of its operand, a buffer element, so it uses that buffer opaquely.
    ``scalar_only``: why the vectorizer cannot apply the call lane by lane (None: it can)."""

    name: str
    arity: int | None
    args: str
    result: str
    numpy: Callable[..., Any] | None
    llvm: str | None = None
    expand: str | None = None
    libm: str | None = None
    legalize: Callable[[tir.Call], tir.PrimExpr] | None = None
    kind: str = "math"
    interpret: str | None = None
    parse: str | None = None
    params: tuple[str, ...] = ()
    script: str | None = None
    statement: str | None = None
    conditional: bool = False
    takes_address: bool = False
    scalar_only: str | None = None

    @property
    def op(self) -> str:
        """The ``tir.Call`` op string (``"tir.exp"``)."""
        return f"tir.{self.name}"

    @property
    def script_name(self) -> str:
        """The name it has in TVMScript (``T.<script_name>``)."""
        return self.script or self.name

    @property
    def dtype_first(self) -> bool:
        """Whether the script writes the call's dtype before the operands (``T.reinterpret("int32", x)``)."""
        return self.result == "given"

    @property
    def dtype_last(self) -> bool:
        """Whether the script writes the call's dtype after the operands (``T.tvm_struct_get(a, 0, 1, "handle")``)."""
        return self.result == "given_last"

    @property
    def compiled(self) -> bool:
        """Whether the LLVM backend can compile it."""
        return self.llvm is not None or self.expand is not None or self.libm is not None

    @property
    def lowering(self) -> tuple[str, str]:
        """``(kind, name)`` of the compiled code: ``("llvm", "llvm.exp")``, ``("expand", "sigmoid")``
        or ``("libm", "erf")``."""
        if self.llvm is not None:
            return "llvm", self.llvm
        if self.expand is not None:
            return "expand", self.expand
        if self.libm is not None:
            return "libm", self.libm
        raise ValueError(f"the intrinsic {self.name} has no LLVM lowering")

    def result_dtype(self, arg_dtype: str) -> str:
        """The dtype of a call whose first argument has ``arg_dtype``."""
        if self.result in ("given", "given_last"):
            raise ValueError(f"the dtype of T.{self.script_name} is written in the call")
        return arg_dtype if self.result == "same" else self.result


# ---------------------------------------------------------------- numpy meanings numpy lacks
def _erf(x: Any) -> Any:
    """The error function, computed in double and rounded to the argument's dtype (numpy has none)."""
    arr = np.asarray(x)
    return np.vectorize(math.erf, otypes=[np.float64])(arr).astype(arr.dtype)[()]


def _exp10(x: Any) -> Any:
    """``10 ** x`` in ``x``'s dtype."""
    arr = np.asarray(x)
    return np.power(np.asarray(10, arr.dtype), arr)


def _rsqrt(x: Any) -> Any:
    """``1 / sqrt(x)``."""
    return 1 / np.sqrt(x)


def _sigmoid(x: Any) -> Any:
    """``1 / (1 + exp(-x))``."""
    return 1 / (1 + np.exp(-x))


def _popcount(x: Any) -> Any:
    """Set bits of an integer (of its two's complement bit pattern)."""
    arr = np.asarray(x)
    bits = arr.dtype.itemsize * 8
    counts = [bin(int(v) & ((1 << bits) - 1)).count("1") for v in arr.reshape(-1)]
    return np.array(counts, dtype=arr.dtype).reshape(arr.shape)[()]


def _clz(x: Any) -> Any:
    """Leading zero bits of an integer (its width for 0)."""
    arr = np.asarray(x)
    bits = arr.dtype.itemsize * 8
    counts = [bits - (int(v) & ((1 << bits) - 1)).bit_length() for v in arr.reshape(-1)]
    return np.array(counts, dtype=arr.dtype).reshape(arr.shape)[()]


def _pow(a: Any, b: Any) -> Any:
    """C's pow: numpy computes an exponent of 0.5 as sqrt (on scalars), which gives NaN for -inf and
    -0 for -0 where pow gives +inf and +0."""
    out = np.power(a, b)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind != "f":
        return out
    return np.where((b == 0.5) & ((a == 0) | np.isinf(a)), np.abs(a), out)


def _nextafter(x: Any, y: Any) -> Any:
    """C's nextafter: ``y`` when the two are equal (numpy's float16 version returns ``x``: the sign
    of a zero differs)."""
    return np.where(np.asarray(x) == y, y, np.nextafter(x, y))


def _ldexp(x: Any, e: Any) -> Any:
    """``x * 2 ** e``; the exponent truncated to int32 as compiled code converts it (the parser gives
    both operands one dtype, which numpy's ldexp refuses for a float exponent)."""
    return np.ldexp(x, np.asarray(e).astype(np.int32))


def _identity(x: Any) -> Any:
    """The value itself (``T.likely`` is a branch hint)."""
    return x


# ---------------------------------------------------------------- TIR rewrites before codegen
def _legalize_sigmoid(call: tir.Call) -> tir.PrimExpr:
    """``1 / (1 + exp(0 - x))`` (TVM's llvm.FLegalize rule, ``-x`` as ``0 - x``)."""
    (x,) = call.args
    one = tir.FloatImm(x.dtype, 1.0)
    neg = tir.Sub(tir.FloatImm(x.dtype, 0.0), x)
    return tir.Div(one, tir.Add(one, tir.Call(x.dtype, "tir.exp", (neg,))))


def _legalize_rsqrt(call: tir.Call) -> tir.PrimExpr:
    """``1 / sqrt(x)``."""
    (x,) = call.args
    return tir.Div(tir.FloatImm(x.dtype, 1.0), tir.Call(x.dtype, "tir.sqrt", (x,)))


def _legalize_exp10(call: tir.Call) -> tir.PrimExpr:
    """``pow(10, x)`` (more accurate than ``exp(x * ln 10)``)."""
    (x,) = call.args
    return tir.Call(x.dtype, "tir.pow", (tir.FloatImm(x.dtype, 10.0), x))


# ---------------------------------------------------------------- the table
INTRINSICS: dict[str, Intrinsic] = {}


def _entry(name: str, arity: int, args: str, result: str, numpy: Callable[..., Any], **lowering: Any) -> None:
    """Declare one intrinsic."""
    INTRINSICS[name] = Intrinsic(name, arity, args, result, numpy, **lowering)


def _float_math(name: str, numpy: Callable[..., Any], llvm: str | None = None, in_libm: bool = True,
                **rest: Any) -> None:
    """A one-float-argument intrinsic of the argument's dtype; ``in_libm``: C's function of the same
    name means the same."""
    _entry(name, 1, "float", "same", numpy, llvm=llvm, libm=name if in_libm else None, **rest)


# Unary float math. The transcendental LLVM intrinsics become libm calls on x86; those LLVM has no
# intrinsic for call libm directly.
_float_math("exp", np.exp, "llvm.exp")
_float_math("exp2", np.exp2, "llvm.exp2")
_float_math("exp10", _exp10, "llvm.exp10", legalize=_legalize_exp10)
_float_math("log", np.log, "llvm.log")
_float_math("log2", np.log2, "llvm.log2")
_float_math("log10", np.log10, "llvm.log10")
_float_math("log1p", np.log1p)
_float_math("sqrt", np.sqrt, "llvm.sqrt")
_float_math("rsqrt", _rsqrt, in_libm=False, expand="rsqrt", legalize=_legalize_rsqrt)
_float_math("tanh", np.tanh, "llvm.tanh")
_float_math("sigmoid", _sigmoid, in_libm=False, expand="sigmoid", legalize=_legalize_sigmoid)
_float_math("erf", _erf)
_float_math("sin", np.sin, "llvm.sin")
_float_math("cos", np.cos, "llvm.cos")
_float_math("tan", np.tan, "llvm.tan")
_float_math("sinh", np.sinh, "llvm.sinh")
_float_math("cosh", np.cosh, "llvm.cosh")
_float_math("asin", np.arcsin, "llvm.asin")
_float_math("acos", np.arccos, "llvm.acos")
_float_math("atan", np.arctan, "llvm.atan")
_float_math("asinh", np.arcsinh)
_float_math("acosh", np.arccosh)
_float_math("atanh", np.arctanh)
_float_math("floor", np.floor, "llvm.floor")
_float_math("ceil", np.ceil, "llvm.ceil")
_float_math("trunc", np.trunc, "llvm.trunc")
# As TVM and numpy, round rounds halves to even like nearbyint (llvm.round and C's round would round
# them away from zero, so no C function means tir.round).
_float_math("round", np.rint, "llvm.nearbyint", in_libm=False)
_float_math("nearbyint", np.rint, "llvm.nearbyint")
_float_math("expm1", np.expm1)
_float_math("fabs", np.abs, "llvm.fabs")

# Float classification (C has them as macros only: no libm function).
_entry("isnan", 1, "float", "bool", np.isnan, expand="isnan")
_entry("isinf", 1, "float", "bool", np.isinf, expand="isinf")
_entry("isfinite", 1, "float", "bool", np.isfinite, expand="isfinite")

# Integer bit operations.
_entry("popcount", 1, "int", "same", _popcount, llvm="llvm.ctpop")
_entry("clz", 1, "int", "same", _clz, expand="clz")
_entry("bitwise_not", 1, "int", "same", np.invert, expand="bitwise_not")

# Two operands of one dtype.
_entry("pow", 2, "float", "same", _pow, llvm="llvm.pow", libm="pow")
_entry("fmod", 2, "float", "same", np.fmod, expand="fmod", libm="fmod")
_entry("atan2", 2, "float", "same", np.arctan2, llvm="llvm.atan2", libm="atan2")
_entry("hypot", 2, "float", "same", np.hypot, libm="hypot")
_entry("copysign", 2, "float", "same", np.copysign, llvm="llvm.copysign", libm="copysign")
_entry("nextafter", 2, "float", "same", _nextafter, expand="nextafter", libm="nextafter")
_entry("ldexp", 2, "float", "same", _ldexp, expand="ldexp", libm="ldexp")
_entry("bitwise_and", 2, "int", "same", np.bitwise_and, expand="bitwise_and")
_entry("bitwise_or", 2, "int", "same", np.bitwise_or, expand="bitwise_or")
_entry("bitwise_xor", 2, "int", "same", np.bitwise_xor, expand="bitwise_xor")
_entry("shift_left", 2, "int", "same", np.left_shift, expand="shift_left")
_entry("shift_right", 2, "int", "same", np.right_shift, expand="shift_right")

# Control: a branch hint, and a conditional that compiled code and every scalar evaluator
# (ir/scalar_eval.py) evaluate lazily (the branch not taken may load out of bounds); TE evaluation
# computes both sides.
_entry("likely", 1, "bool", "same", _identity, expand="likely", parse="condition", params=("expr",))
_entry("if_then_else", 3, "any", "same", np.where, expand="if_then_else", parse="select",
       params=("cond", "t", "f"), conditional=True)


# ---------------------------------------------------------------- builtins
def _builtin(name: str, arity: int | None, result: str, **facts: Any) -> None:
    """Declare one builtin: no numpy meaning, its readers' implementations named in ``facts``."""
    INTRINSICS[name] = Intrinsic(name, arity, "any", result, None, kind="builtin", **facts)


_builtin("reinterpret", 1, "given", expand="reinterpret", interpret="reinterpret", parse="dtype_value",
         params=("dtype", "value"))
_builtin("assume", 1, "bool", expand="assume", interpret="assume", parse="condition", params=("cond",),
         scalar_only="an assumption")
# ``return v``: the parser builds it from the statement, the printer writes it back as one.
_builtin("ret", 1, "same", expand="ret", interpret="ret", statement="return", scalar_only="a return")
# C functions by name: T.call_extern(dtype, "name", *args); the interpreter knows the libm ones.
_builtin("call_extern", None, "given", expand="extern", interpret="extern", parse="extern",
         params=("dtype", "func_name"), scalar_only="a C function of scalars")
_builtin("call_pure_extern", None, "given", expand="extern", interpret="extern", parse="extern",
         params=("dtype", "func_name"), scalar_only="a C function of scalars")
# LLVM intrinsics by name: T.call_llvm_intrin(dtype, "llvm.name", nsig, *args).
_builtin("call_llvm_intrin", None, "given", expand="llvm_intrin", interpret="llvm_intrin",
         scalar_only="an LLVM intrinsic with a fixed signature")
_builtin("call_llvm_pure_intrin", None, "given", expand="llvm_intrin",
         scalar_only="an LLVM intrinsic with a fixed signature")
# Calls through TVM's packed-function ABI, which this CPU backend does not compile.
_builtin("tvm_call_packed", None, "int32", parse="packed", params=("func_name",), script="call_packed")
_builtin("tvm_call_cpacked", None, "int32", script="call_cpacked")
# The address of a buffer element (schedules read it as an access of that buffer).
_builtin("address_of", 1, "handle", takes_address=True, expand="address_of")
# Printed with their dtype first as TVM prints them; nothing here builds or compiles them.
_builtin("call_spirv_pure_glsl450", None, "given")
_builtin("type_annotation", 0, "given")


# GPU / tensor-core / profiling intrinsics
# Read and written as TVM writes them (``T.<name>(*operands)``, ``parse="operands"``; those of
# result "given" take their dtype first); no numpy meaning or LLVM lowering, so they pass through
# the passes and the CPU backend refuses them by name.
_builtin("vscale", 0, "int32", parse="operands")
_builtin("start_profile_intrinsic", 1, "handle", parse="operands")
_builtin("end_profile_intrinsic", 1, "handle", parse="operands")
_builtin("tvm_warp_activemask", 0, "uint32", parse="operands")
# T.tvm_warp_shuffle*(mask, value, lane_or_delta, width, warp_size): of the value's dtype.
for _name in ("tvm_warp_shuffle", "tvm_warp_shuffle_up", "tvm_warp_shuffle_down", "tvm_warp_shuffle_xor"):
    _builtin(_name, 5, "same", parse="shuffle")
for _name, _arity in (("tvm_fill_fragment", 6), ("tvm_load_matrix_sync", 8), ("tvm_store_matrix_sync", 8),
                      ("tvm_mma_sync", 8), ("tvm_bmma_sync", 8), ("tvm_access_ptr", 5),
                      ("tvm_thread_allreduce", None), ("ptx_commit_group", 0), ("ptx_wait_group", 1),
                      ("tvm_storage_sync", None)):
    _builtin(_name, _arity, "int32" if _name == "tvm_storage_sync" else "handle", parse="operands")
for _name in ("ptx_mma", "ptx_mma_sp", "ptx_ldmatrix", "ptx_cp_async", "mma_store", "mma_fill"):
    _builtin(_name, None, "given", parse="operands")
# The packed-function ABI's stack and struct access (what TVM's host code builds around packed calls).
_builtin("tvm_stack_make_array", 6, "handle", parse="operands")
_builtin("tvm_stack_make_shape", None, "handle", parse="operands")
_builtin("tvm_stack_alloca", 2, "handle", parse="operands")
_builtin("tvm_struct_get", 3, "given_last", parse="operands")
_builtin("tvm_struct_set", 4, "int32", parse="operands")
_builtin("isnullptr", 1, "bool", parse="operands")
# A packed call after LowerTVMBuiltin: name, the argument stack, the type-code stack, begin, end.
_builtin("tvm_call_packed_lowered", 5, "int32", parse="operands")
_builtin("tvm_call_cpacked_lowered", 5, "int32", parse="operands")


def intrinsic(name: str) -> Intrinsic | None:
    """The intrinsic of a short name (``"exp"``), or None."""
    return INTRINSICS.get(name)


def intrinsic_of_op(op: Any) -> Intrinsic | None:
    """The intrinsic a ``tir.Call`` op string names (``"tir.exp"``), or None (functions, unknown names)."""
    if isinstance(op, str) and op.startswith("tir."):
        return INTRINSICS.get(op[4:])
    return None


def address_taken(call: tir.Call) -> tir.Buffer | None:
    """The buffer whose element's address ``call`` takes (``T.address_of(A[i])``), or None."""
    info = intrinsic_of_op(call.op)
    if info is None or not info.takes_address or not call.args or not isinstance(call.args[0], tir.BufferLoad):
        return None
    return call.args[0].buffer


def prefetch_stmt(element: tir.BufferLoad) -> tir.Evaluate:
    """``T.call_llvm_intrin("void", "llvm.prefetch", T.address_of(element), 0, 3, 1)``, as TVM writes
    a prefetch: a read (0), kept in every cache level (3), of data (1)."""
    address = tir.Call("handle", INTRINSICS["address_of"].op, (element,))
    args = (tir.StringImm("llvm.prefetch"), address, tir.IntImm("int32", 0), tir.IntImm("int32", 3),
            tir.IntImm("int32", 1))
    return tir.Evaluate(tir.Call("void", INTRINSICS["call_llvm_intrin"].op, args))


def libm_numpy() -> dict[str, Callable[..., Any]]:
    """C math function name (double version) -> the numpy function meaning the same."""
    return {i.libm: i.numpy for i in INTRINSICS.values() if i.libm is not None}
