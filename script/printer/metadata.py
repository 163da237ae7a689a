"""The metadata section of printed scripts: constants that are not printed inline.

``script(show_meta=True)`` starts the text with ``metadata = tvmlite.load_json(\"\"\"{...}\"\"\")``.
The JSON object maps a kind to a list of entries, which the text refers to as
``metadata["relax.expr.Constant"][0]``:

* ``"relax.expr.Constant"``: ``{"dtype": "float32", "shape": [2, 3], "data": "<base64>"}`` where
  the data are the C-contiguous little-endian bytes of the array, so constants survive bit for bit;
* ``"tir.StringImm"``: the string itself (multi-line TIR strings).
"""
from __future__ import annotations

import base64
import json
from typing import Any, Iterable, Mapping

import numpy as np

__all__ = ["CONSTANT_KEY", "STRING_KEY", "dump_metadata", "load_metadata", "encode_array",
           "decode_array", "embed_json"]

CONSTANT_KEY = "relax.expr.Constant"
STRING_KEY = "tir.StringImm"


def encode_array(data: np.ndarray) -> dict[str, Any]:
    """One constant as a JSON-ready dict (dtype, shape, base64 of the little-endian bytes)."""
    arr = np.asarray(data)
    dt = arr.dtype
    if dt.byteorder == ">":
        arr = arr.astype(dt.newbyteorder("<"))
    raw = np.ascontiguousarray(arr).tobytes()
    return {"dtype": str(arr.dtype.name), "shape": [int(d) for d in arr.shape],
            "data": base64.b64encode(raw).decode("ascii")}


def decode_array(entry: Mapping[str, Any]) -> np.ndarray:
    """The numpy array of one encoded constant."""
    from tvmlite.ir.dtype import to_numpy_dtype

    dtype = to_numpy_dtype(str(entry["dtype"])).newbyteorder("<")
    shape = tuple(int(d) for d in entry["shape"])
    raw = base64.b64decode(entry["data"])
    arr = np.frombuffer(raw, dtype=dtype).reshape(shape)
    # A native-order, writable-independent copy: IR constants are never mutated.
    return arr.astype(dtype.newbyteorder("="), copy=True)


def dump_metadata(constants: Iterable[Any] | Mapping[str, Iterable[Any]]) -> str:
    """Compact one-line JSON for the metadata section.

    ``constants`` is either a list of ``relax.Constant`` nodes / numpy arrays, or a mapping from
    kind (``"relax.expr.Constant"``, ``"tir.StringImm"``) to such entries.
    """
    groups = constants.items() if isinstance(constants, Mapping) else [(CONSTANT_KEY, constants)]
    out: dict[str, list] = {}
    for key, items in groups:
        entries = []
        for item in items:
            if isinstance(item, str):
                entries.append(item)
            elif hasattr(item, "data") and isinstance(getattr(item, "data"), np.ndarray):
                entries.append(encode_array(item.data))
            elif isinstance(item, np.ndarray):
                entries.append(encode_array(item))
            else:  # tir.StringImm and other nodes with a string value
                entries.append(str(getattr(item, "value", item)))
        out[key] = entries
    return json.dumps(out, separators=(",", ":"))


def load_metadata(json_text: str) -> dict[str, list]:
    """Read a metadata section: constants become ``relax.Constant`` nodes, strings
    ``tir.StringImm`` nodes; unknown kinds are returned as parsed JSON."""
    from tvmlite.ir import relax, tir

    raw = json.loads(json_text)
    if not isinstance(raw, dict):
        raise ValueError("metadata must be a JSON object mapping kinds to lists")
    out: dict[str, list] = {}
    for key, items in raw.items():
        if not isinstance(items, list):
            raise ValueError(f"metadata[{key!r}] must be a list")
        if key == CONSTANT_KEY:
            out[key] = [relax.Constant(decode_array(e)) for e in items]
        elif key == STRING_KEY:
            out[key] = [tir.StringImm(str(e)) for e in items]
        else:
            out[key] = list(items)
    return out


def embed_json(json_text: str) -> str:
    """The ``metadata = tvmlite.load_json(...)`` line; backslashes are doubled so that reading
    the triple-quoted string like Python gives back ``json_text`` exactly."""
    return 'metadata = tvmlite.load_json("""' + json_text.replace("\\", "\\\\") + '""")'
