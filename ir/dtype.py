"""Data types as strings ("float32", "int64", "bool", "float32x4", "handle", "void")."""
from __future__ import annotations

import functools
import re

import numpy as np

__all__ = ["DType", "parse_dtype", "lanes_of", "is_valid_dtype", "to_numpy_dtype", "from_numpy_dtype"]

_DTYPE_RE = re.compile(r"^(int|uint|float|bfloat|bool|handle|void)(\d*)(?:x(\d+))?$")


class DType:
    """A parsed dtype: ``code`` (int, uint, float, bool, handle, void), ``bits`` and ``lanes``."""

    __slots__ = ("code", "bits", "lanes", "name")

    def __init__(self, code: str, bits: int, lanes: int, name: str) -> None:
        self.code, self.bits, self.lanes, self.name = code, bits, lanes, name

    @property
    def is_int(self) -> bool:
        return self.code == "int"

    @property
    def is_uint(self) -> bool:
        return self.code == "uint"

    @property
    def is_integer(self) -> bool:
        """int or uint (not bool)."""
        return self.code in ("int", "uint")

    @property
    def is_float(self) -> bool:
        return self.code in ("float", "bfloat")

    @property
    def is_bool(self) -> bool:
        return self.code == "bool"

    @property
    def is_handle(self) -> bool:
        return self.code == "handle"

    @property
    def element(self) -> str:
        """The scalar dtype of a vector dtype."""
        return self.name.split("x")[0] if self.lanes > 1 else self.name

    def with_lanes(self, lanes: int) -> str:
        """The dtype with another lane count."""
        return self.element if lanes == 1 else f"{self.element}x{lanes}"


@functools.lru_cache(maxsize=None)
def parse_dtype(name: str) -> DType:
    """Parse a dtype string; raises ValueError for an unknown dtype."""
    m = _DTYPE_RE.match(name)
    if not m:
        raise ValueError(f"unknown dtype {name!r}")
    code, bits_s, lanes_s = m.groups()
    if code == "bool":
        if bits_s:
            raise ValueError(f"unknown dtype {name!r}")
        bits = 1
    elif code == "handle":
        bits = 64
    elif code == "void":
        bits = 0
    else:
        if not bits_s:
            raise ValueError(f"unknown dtype {name!r}")
        bits = int(bits_s)
        valid = {"int": (8, 16, 32, 64), "uint": (1, 8, 16, 32, 64), "float": (16, 32, 64), "bfloat": (16,)}
        if code == "int" and bits == 1:
            raise ValueError(f"unknown dtype {name!r}")
        if bits not in valid[code] and not (code in ("int", "uint") and bits in (4,)):
            raise ValueError(f"unknown dtype {name!r}")
    lanes = int(lanes_s) if lanes_s else 1
    if lanes < 1:
        raise ValueError(f"unknown dtype {name!r}")
    return DType(code, bits, lanes, name)


def lanes_of(dtype: str) -> int:
    """The lane count of a dtype string (1 for scalars and for names parse_dtype does not know)."""
    try:
        return parse_dtype(dtype).lanes
    except ValueError:
        return 1


def is_valid_dtype(name: object) -> bool:
    """True when ``name`` is a dtype string tvmlite knows."""
    if not isinstance(name, str):
        return False
    try:
        parse_dtype(name)
    except ValueError:
        return False
    return True


_NUMPY = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
          "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
          "float16": np.float16, "float32": np.float32, "float64": np.float64}


def to_numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype of a scalar tvmlite dtype; ValueError when numpy has none."""
    try:
        return np.dtype(_NUMPY[name])
    except KeyError:
        raise ValueError(f"dtype {name!r} has no numpy equivalent") from None


def from_numpy_dtype(dt: np.dtype) -> str:
    """The tvmlite dtype string of a numpy dtype."""
    name = np.dtype(dt).name
    if name not in _NUMPY:
        raise ValueError(f"numpy dtype {name!r} is not supported")
    return name
