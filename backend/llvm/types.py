"""LLVM types of TIR dtypes (register, in-memory and ABI forms) and integer constant helpers."""
from __future__ import annotations

from llvmlite import ir

from ...ir.dtype import DType, parse_dtype
from .errors import CodegenError

__all__ = ["ALIGN", "I1", "I8", "I16", "I32", "I64", "PTR", "llvm_type", "mem_type", "abi_type", "elem_bytes",
           "type_suffix", "const_int", "wrap64", "total_bits"]

# Alignment in bytes of stack slots and heap buffers (a cache line, so vector accesses never split one).
ALIGN = 64

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()


def _scalar_type(d: DType) -> ir.Type:
    """The LLVM register type of one lane of ``d``."""
    if d.code == "bool":
        return I1
    if d.code in ("int", "uint"):
        return ir.IntType(d.bits)
    if d.code == "float":
        return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[d.bits]
    if d.code == "handle":
        return PTR
    raise CodegenError(f"the LLVM backend does not support dtype {d.name!r}")


def llvm_type(dtype: str) -> ir.Type:
    """The LLVM register type of a TIR dtype (``<N x T>`` for vector dtypes)."""
    d = parse_dtype(dtype)
    t = _scalar_type(d)
    return ir.VectorType(t, d.lanes) if d.lanes > 1 else t


def mem_type(dtype: str) -> ir.Type:
    """The in-memory type: bool is a byte (numpy's layout), everything else its register type."""
    d = parse_dtype(dtype)
    t = I8 if d.is_bool else _scalar_type(d)
    return ir.VectorType(t, d.lanes) if d.lanes > 1 else t


def abi_type(dtype: str) -> ir.Type:
    """The native type of a scalar parameter: float16 travels as its bits, bool as a byte (ctypes has
    neither a half type nor a 1-bit one)."""
    d = parse_dtype(dtype)
    if d.is_float and d.bits == 16:
        return I16
    return I8 if d.is_bool else _scalar_type(d)


def elem_bytes(dtype: str) -> int:
    """Bytes of one element of ``dtype`` (all lanes)."""
    d = parse_dtype(dtype)
    return max(1, d.bits // 8) * d.lanes


def type_suffix(t: ir.Type) -> str:
    """The overload suffix of an LLVM intrinsic name (``f32``, ``v8f32``, ``i64``)."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{type_suffix(t.element)}"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    return t.intrinsic_name


def const_int(v: ir.Value) -> int | None:
    """The value of a scalar integer constant, else None."""
    if isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType) and isinstance(v.constant, int):
        return v.constant
    return None


def wrap64(value: int) -> int:
    """``value`` as a signed 64-bit integer."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def total_bits(dtype: str) -> int:
    """Total bits of ``dtype`` (all lanes)."""
    d = parse_dtype(dtype)
    return d.bits * d.lanes
