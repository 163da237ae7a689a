"""``tvmlite.topi``: a library of tensor-expression computes for every Relax op, named as TVM's
topi names them (``T_add``, ``T_transpose``, ``compute`` for the Python-defined elementwise ops,
``<x>_red`` for reductions, ``T_matmul_NT`` for dense...), so that legalized functions read like
TVM's. ``topi.nn`` holds the neural-network computes.

One difference: ``topi.matmul`` is Relax's numpy-style (batched) matmul; TVM's 2-D matmul with
transpose flags is ``topi.nn.matmul``."""
from __future__ import annotations

from . import nn
from .broadcast import (add, bitwise_and, bitwise_or, bitwise_xor, broadcast_to, divide, equal, floor_divide,
                        floor_mod, greater, greater_equal, left_shift, less, less_equal, logical_and, logical_or,
                        logical_xor, maximum, minimum, mod, multiply, not_equal, power, right_shift, subtract,
                        where)
from .linalg import matmul
from .math import (abs, acos, acosh, asin, asinh, atan, atanh, bitwise_not, cast, ceil, clip, cos, cosh, erf, exp,
                   floor, identity, isfinite, isinf, isnan, log, log2, log10, logical_not, negative, round, rsqrt,
                   sigmoid, sign, sin, sinh, sqrt, square, tan, tanh, trunc)
from .reduction import argmax, argmin, max, mean, min, prod, std, sum, variance
from .transform import (arange, concatenate, ewise_fma, expand_dims, flatten, full, full_like, reshape, split,
                        squeeze, strided_slice, take, transpose)
from .transform import flip, meshgrid, one_hot, repeat, reverse_sequence, stack, tile, trilu
from .reduction import collapse_sum
from .index import dynamic_slice_shape, dynamic_strided_slice, gather, gather_nd, index_tensor, slice_scatter

__all__ = [
    "nn", "add", "subtract", "multiply", "divide", "floor_divide", "mod", "floor_mod", "power", "maximum",
    "minimum", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "right_shift", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "where", "broadcast_to", "matmul", "identity", "negative", "exp", "erf", "tanh", "tan", "cos", "cosh",
    "sin", "sinh", "acos", "acosh", "asin", "asinh", "atan", "atanh", "floor", "ceil", "sign", "trunc", "abs",
    "isnan", "isfinite", "isinf", "round", "log", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "logical_not",
    "bitwise_not", "cast", "clip", "square", "sum", "max", "min", "prod", "argmax", "argmin", "mean",
    "variance", "std", "transpose", "reshape", "expand_dims", "squeeze", "concatenate", "split",
    "strided_slice", "take", "arange", "full", "full_like", "ewise_fma", "flatten",
]
__all__ += ["tile", "repeat", "flip", "stack", "meshgrid", "gather", "gather_nd", "slice_scatter", "index_tensor", "one_hot", "trilu", "reverse_sequence", "collapse_sum",
            "dynamic_slice_shape", "dynamic_strided_slice"]

# sorting and scans (topi/sort.py)
from .sort import argsort, cumprod, cumsum, median, multinomial_from_uniform, searchsorted, sort, topk  # noqa: E402
__all__ += ["argsort", "sort", "topk", "cumsum", "cumprod", "searchsorted", "median", "multinomial_from_uniform"]
from .broadcast import atan2, log_add_exp  # noqa: E402
__all__ += ["atan2", "log_add_exp"]
from .einsum import einsum, einsum_shape, outer, parse_subscripts  # noqa: E402
__all__ += ["einsum", "einsum_shape", "outer", "parse_subscripts"]
from .create import eye, hamming_window  # noqa: E402
__all__ += ["eye", "hamming_window"]
# quantization (issue 16: topi/qdq.py)
from . import qdq  # noqa: E402
__all__ += ["qdq"]
from .attention import attention_var_len  # noqa: E402
__all__ += ["attention_var_len"]
from . import image, vision  # noqa: E402  (resize, affine_grid, grid_sample, roi_align...: issue 16)
__all__ += ["image", "vision"]
