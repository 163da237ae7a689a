"""Import an ONNX model as a Relax ``IRModule`` (TVM's ``relax.frontend.onnx.from_onnx``).

The graph becomes one function ``main``: the graph inputs are its parameters (``num_input``), the
initializers are constants or, with ``keep_params_in_input``, parameters after the inputs. Each ONNX
node is translated by the converter registered for its op type (``@register("Relu")``, as the
PyTorch importer registers its converters) in ``onnx_node.CONVERTERS``; the ops both importers share
(linear, conv2d, batch norm, pooling...) are emitted by
:class:`~tvmlite.frontend.common.GraphEmitter`, so an ONNX export and a PyTorch import of the same
model give the same Relax.

Values computable at import time (initializers, ``Constant``, ``Shape`` of a static tensor and the
``Gather``/``Unsqueeze``/``Concat``... arithmetic exporters build from it) are kept as NumPy arrays
and folded, so the shape inputs of ``Reshape``, ``Unsqueeze``, ``Clip``... are known; a symbolic
dimension stays a ``tir.Var`` inside an object array. The ``onnx`` package is imported only when
:func:`from_onnx` is called (the ``[onnx]`` extra).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np

# The converter modules register themselves in the tables on import.
from tvmlite.frontend import onnx_ops, onnx_tensor_ops, onnx_vision_ops  # noqa: F401
from tvmlite.frontend.common import FrontendError, GraphEmitter, refuse_unsupported, require, sanitize_name
from tvmlite.frontend.onnx_node import (CONVERTERS, FOLDERS, FUSED_CONVERTERS, FUSED_DOMAIN, Converter, OnnxNode,
                                        Value, as_array, is_static, near)
from tvmlite.ir import IRModule, tir
from tvmlite.ir.dtype import from_numpy_dtype
from tvmlite.ir.op import OpError
from tvmlite.ir.op_api import const
from tvmlite.ir.relax import Expr

__all__ = ["from_onnx", "supported_ops", "OnnxNode"]


# ---------------------------------------------------------------- fusing multi-op activations
class _Fuser:
    """Finds the activations exporters spell with several ops and replaces each with one node:
    ``x * sigmoid(x)`` -> SiLU, ``x * 0.5 * (1 + erf(x / sqrt(2)))`` (any Mul order) -> GELU, so
    the Relax matches the PyTorch importer's ``nn.silu``/``nn.gelu``."""

    def __init__(self, onnx: Any, nodes: Sequence[Any], outputs: set[str],
                 static: Callable[[str], np.ndarray | None]) -> None:
        self.onnx = onnx
        self.nodes = list(nodes)
        self.static = static
        self.producer = {out: n for n in self.nodes for out in n.output}
        self.uses: dict[str, int] = {name: 1 for name in outputs}
        for n in self.nodes:
            for name in n.input:
                self.uses[name] = self.uses.get(name, 0) + 1
        self.dropped: set[int] = set()
        self.replaced: dict[int, Any] = {}

    def _private(self, name: str, op_type: str) -> Any:
        """The node producing ``name`` when it has type ``op_type`` and ``name`` has one reader."""
        node = self.producer.get(name)
        if node is None or node.op_type != op_type or self.uses.get(name, 0) != 1 or id(node) in self.dropped:
            return None
        return node

    def _silu(self, mul: Any) -> tuple[str, list[Any]] | None:
        for x, s in (mul.input, mul.input[::-1]):
            sig = self._private(s, "Sigmoid")
            if sig is not None and sig.input[0] == x:
                return x, [sig]
        return None

    def _gelu(self, mul: Any) -> tuple[str, list[Any]] | None:
        # The three factors of a two-Mul product, with the inner Mul.
        for first, second in (mul.input, mul.input[::-1]):
            inner = self._private(first, "Mul")
            if inner is None:
                continue
            factors = [*inner.input, second]
            for k, half in enumerate(factors):
                if not near(self.static(half), 0.5):
                    continue
                rest = factors[:k] + factors[k + 1:]
                for x, one_plus in (rest, rest[::-1]):
                    chain = self._erf_chain(x, one_plus)
                    if chain is not None:
                        return x, [inner, *chain]
        return None

    def _erf_chain(self, x: str, one_plus: str) -> list[Any] | None:
        """``1 + erf(x / sqrt(2))`` (or ``x * (1/sqrt(2))``), its nodes, when ``one_plus`` is that."""
        add = self._private(one_plus, "Add")
        if add is None:
            return None
        for e, one in (add.input, add.input[::-1]):
            erf = self._private(e, "Erf")
            if erf is None or not near(self.static(one), 1.0):
                continue
            scale = self._private(erf.input[0], "Div") or self._private(erf.input[0], "Mul")
            if scale is None or scale.input[0] != x:
                continue
            target = np.sqrt(2.0) if scale.op_type == "Div" else 1 / np.sqrt(2.0)
            if near(self.static(scale.input[1]), target):
                return [add, erf, scale]
        return None

    def run(self) -> list[Any]:
        """The node list with the matched activations fused."""
        helper = self.onnx.helper
        for node in self.nodes:
            if node.op_type != "Mul" or node.domain not in ("", "ai.onnx") or id(node) in self.dropped:
                continue
            for op_type, match in (("Gelu", self._gelu), ("Silu", self._silu)):
                found = match(node)
                if found is None:
                    continue
                x, absorbed = found
                self.dropped.update(id(n) for n in absorbed)
                self.replaced[id(node)] = helper.make_node(op_type, [x], list(node.output), name=node.name,
                                                           domain=FUSED_DOMAIN)
                break
        return [self.replaced.get(id(n), n) for n in self.nodes if id(n) not in self.dropped]


# ---------------------------------------------------------------- the importer
class _Importer:
    """Translates one ONNX graph into the function a GraphEmitter builds."""

    def __init__(self, onnx: Any, model: Any, shape_dict: Mapping[str, Sequence[Any]] | None,
                 dtype_dict: str | Mapping[str, str], opset: int | None, sanitize: bool,
                 custom: Mapping[str, Converter] | None = None) -> None:
        self.onnx = onnx
        self.custom = dict(custom or {})  # the user's converters: they replace tvmlite's, folding included
        self.converters: dict[str, Converter] = {**CONVERTERS, **self.custom}
        self.graph = model.graph
        self.opset = int(opset) if opset is not None else self._model_opset(model)
        self.shape_dict = dict(shape_dict or {})
        self.dtype_dict = dtype_dict
        self.sanitize = sanitize
        self.initializers = {t.name: self._to_array(t) for t in self.graph.initializer}
        if self.graph.sparse_initializer:
            raise FrontendError("sparse initializers are not supported")
        self.inputs = [i for i in self.graph.input if i.name not in self.initializers]
        self.outputs = [o.name for o in self.graph.output]
        self._sym_dims: dict[str, tir.Var] = {}
        self.emitter: GraphEmitter = GraphEmitter(keep_params=False)
        self.env: dict[str, Value] = {}

    # ------------------------------------------------------------ model facts
    @staticmethod
    def _model_opset(model: Any) -> int:
        for entry in model.opset_import:
            if entry.domain in ("", "ai.onnx"):
                return int(entry.version)
        return 1

    def _to_array(self, tensor: Any) -> np.ndarray:
        return self.onnx.numpy_helper.to_array(tensor)

    def elem_dtype(self, elem_type: int) -> str:
        """The Relax dtype of an ONNX element type."""
        try:
            return from_numpy_dtype(self.onnx.helper.tensor_dtype_to_np_dtype(int(elem_type)))
        except (KeyError, ValueError, TypeError) as err:
            raise FrontendError(f"ONNX element type {elem_type} has no Relax dtype") from err

    def attribute(self, attr: Any) -> Any:
        """An attribute's Python value: strings decoded, tensors as arrays."""
        value = self.onnx.helper.get_attribute_value(attr)
        if attr.type == self.onnx.AttributeProto.FLOAT:
            # Stored as float32: the shortest decimal that rounds to it is what the exporter meant
            # (epsilon 1e-05, not 9.99999974e-06), as the PyTorch importer writes it.
            return float(str(np.float32(value)))
        if attr.type == self.onnx.AttributeProto.FLOATS:
            return [float(str(np.float32(v))) for v in value]
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, self.onnx.TensorProto):
            return self._to_array(value)
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value

    def constant_value(self, node: OnnxNode) -> np.ndarray:
        """The array a Constant node holds."""
        for key in ("value", "value_float", "value_int", "value_floats", "value_ints"):
            if key in node.attrs:
                value = node.attrs[key]
                if key == "value":
                    return value
                return np.asarray(value, dtype=np.float32 if "float" in key else np.int64)
        raise node.fail(f"only tensor and number values are supported, got {sorted(node.attrs)}")

    # ------------------------------------------------------------ checks before emitting
    def nodes(self) -> list[Any]:
        """The graph's nodes after fusing multi-op activations."""
        constants = {n.output[0]: n for n in self.graph.node if n.op_type == "Constant" and n.output}

        def static(name: str) -> np.ndarray | None:
            if name in self.initializers:
                return self.initializers[name]
            node = constants.get(name)
            attrs = {a.name: a for a in node.attribute} if node is not None else {}
            return self._to_array(attrs["value"].t) if "value" in attrs else None

        return _Fuser(self.onnx, self.graph.node, set(self.outputs), static).run()

    def check_supported(self) -> None:
        """Refuse the model naming every op it uses that has no converter, before emitting anything."""
        missing: dict[str, list[str]] = {}
        for n in self.graph.node:
            if n.domain not in ("", "ai.onnx") or n.op_type not in self.converters:
                op = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
                missing.setdefault(op, []).append(n.name)
        refuse_unsupported("from_onnx", missing, "tvmlite.frontend.onnx.supported_ops()")

    def input_signature(self) -> list[tuple[str, list[Any], str]]:
        """(name, shape, dtype) of each graph input, with shape_dict/dtype_dict applied."""
        names = [i.name for i in self.inputs]
        for name in self.shape_dict:
            if name in self.initializers:
                raise FrontendError(f"shape_dict names {name!r}, which is a weight (initializer), not an input")
            if name not in names:
                raise FrontendError(f"shape_dict names {name!r}, which is not an input of the model; "
                                    f"its inputs are {names}")
        return [(i.name, self._input_shape(i), self._input_dtype(i)) for i in self.inputs]

    def _input_shape(self, info: Any) -> list[Any]:
        tensor_type = info.type.tensor_type
        model_dims = list(tensor_type.shape.dim) if tensor_type.HasField("shape") else None
        if info.name in self.shape_dict:
            given = list(self.shape_dict[info.name])
            if model_dims is not None and len(model_dims) != len(given):
                raise FrontendError(f"shape_dict gives input {info.name!r} {len(given)} dimensions, "
                                    f"the model {len(model_dims)}")
            return [self._symbol(d) if isinstance(d, str) else int(d) for d in given]
        if model_dims is None:
            raise FrontendError(f"input {info.name!r} has no shape in the model: give it in shape_dict")
        dims: list[Any] = []
        for axis, d in enumerate(model_dims):
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param"):
                dims.append(self._symbol(d.dim_param))
            else:
                raise FrontendError(f"input {info.name!r} has an unknown dimension {axis}: "
                                    f"give its shape in shape_dict")
        return dims

    def _symbol(self, name: str) -> tir.Var:
        # One variable per dimension name, so inputs sharing a dim_param share the tir.Var.
        if name not in self._sym_dims:
            self._sym_dims[name] = tir.Var(sanitize_name(name), "int64")
        return self._sym_dims[name]

    def _input_dtype(self, info: Any) -> str:
        if isinstance(self.dtype_dict, Mapping) and info.name in self.dtype_dict:
            return str(self.dtype_dict[info.name])
        elem_type = info.type.tensor_type.elem_type
        if elem_type:
            return self.elem_dtype(elem_type)
        return self.dtype_dict if isinstance(self.dtype_dict, str) else "float32"

    # ------------------------------------------------------------ emitting
    def materialize(self, name: str, node: OnnxNode | None = None) -> Expr:
        """The value of edge ``name`` as a Relax expression."""
        value = self.env[name]
        if not is_static(value):
            return value
        key = id(value)
        if key in self._weight_of:
            self.used_weights.add(self._weight_of[key])
            weight = self._weight_vars.get(self._weight_of[key])
            if weight is not None:
                return weight
        if value.dtype == object:
            where = f" of {node.op_type} node {node.name!r}" if node else ""
            raise FrontendError(f"the shape value {name!r}{where} has symbolic dimensions and is used as a "
                                f"tensor, which is not supported")
        return const(value, from_numpy_dtype(value.dtype))

    def convert(self, keep: Sequence[str] | None) -> IRModule:
        """Emit the function; ``keep`` lists the initializers that become parameters."""
        self.emitter = GraphEmitter(keep_params=keep is not None)
        self.env = {}
        self.used_weights: set[str] = set()
        for name, shape, dtype in self.input_signature():
            if not self.sanitize and sanitize_name(name) != name:
                raise FrontendError(f"input name {name!r} is not a valid Relax variable name "
                                    f"(pass sanitize_input_names=True)")
            self.env[name] = self.emitter.add_input(name, shape, dtype)
        self._weight_of = {id(array): name for name, array in self.initializers.items()}
        self._weight_vars: dict[str, Expr] = {}
        for name in keep or ():
            self._weight_vars[name] = self.emitter.add_weight(name, self.initializers[name])
        self.env.update(self.initializers)
        self.emitter.begin()
        readers = self._readers()
        for index, proto in enumerate(self.nodes()):
            self._convert_node(OnnxNode(self, proto, index), readers)
        outputs = [self.materialize(name) for name in self.outputs]
        return self.emitter.finish(outputs)

    def _readers(self) -> set[str]:
        return {name for n in self.graph.node for name in n.input} | set(self.outputs)

    def _convert_node(self, node: OnnxNode, readers: set[str]) -> None:
        proto = node.proto
        given = [node.value(i) for i in range(node.num_inputs) if node.has(i)]
        try:
            folded = None
            if proto.domain != FUSED_DOMAIN and node.op_type in FOLDERS and node.op_type not in self.custom \
                    and all(map(is_static, given)):
                folded = FOLDERS[node.op_type](node, *given)  # None: the folder declines (symbolic values)
            if folded is not None:
                # NumPy returns scalars (not 0-d arrays) from some functions: keep everything an array.
                results: Any = [as_array(r) for r in folded]
            else:
                table = FUSED_CONVERTERS if proto.domain == FUSED_DOMAIN else self.converters
                results = table[node.op_type](node)
        except OpError as err:
            # A Relax op refused its operands (mismatched shapes...): say which ONNX node it was.
            raise node.fail(str(err)) from err
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        for k, name in enumerate(proto.output):
            if not name:
                continue
            if k < len(results):
                self.env[name] = results[k]
            elif name in readers:
                raise node.fail(f"output {k} ({name!r}) is not supported (only inference outputs are)")


def supported_ops() -> list[str]:
    """The ONNX op types :func:`from_onnx` converts."""
    return sorted(CONVERTERS)


def from_onnx(model: Any, shape_dict: Mapping[str, Sequence[int | str]] | None = None,
              dtype_dict: str | Mapping[str, str] = "float32", opset: int | None = None,
              keep_params_in_input: bool = False, sanitize_input_names: bool = True,
              custom_convert_map: Mapping[str, Converter] | None = None) -> IRModule:
    """Import an ONNX model (``ModelProto`` or file path) as an IRModule with the function ``main``.
    ``custom_convert_map`` maps ONNX op types to converters ``fn(node: OnnxNode)`` that add or replace
    tvmlite's (``node.tensor(i)``, ``node.attr(name)``, ``node.g.emit(...)``), as the torch importer's."""
    onnx = require("onnx", "onnx", "tvmlite.frontend.from_onnx")
    if isinstance(model, (str, os.PathLike)):
        model = onnx.load(os.fspath(model))
    elif isinstance(model, (bytes, bytearray)):
        model = onnx.load_from_string(bytes(model))
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"from_onnx expects an onnx.ModelProto or a path, got {type(model).__name__}")
    importer = _Importer(onnx, model, shape_dict, dtype_dict, opset, sanitize_input_names, custom_convert_map)
    importer.check_supported()
    if not keep_params_in_input:
        return importer.convert(None)
    # Only the initializers the function reads as tensors become parameters (not Reshape's shape or
    # the constants of a fused GELU): a first pass finds them.
    importer.convert(None)
    used = importer.used_weights
    return importer.convert([name for name in importer.initializers if name in used])
