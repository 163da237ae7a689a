"""The operator registry: one entry per Relax op with its inputs, attributes, struct-info
inference, fusion pattern, purity and legalization. The ops themselves are declared in
``tvmlite.ops`` (one module per family), which fills this registry when imported; the IR never
imports it, and ``tvmlite``'s root imports it before any user code runs."""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

from . import relax as rx
from . import tir
from .module import GlobalVar, IRModule
from .node import Map
from .relax import Call, Expr, Op, StructInfo
from .struct_info import derive_call_ret, sinfo_of

__all__ = ["OpPattern", "InputForm", "AttrField", "OpDef", "ScriptSignature", "OpError", "REQUIRED", "register_op", "get_op",
           "get_op_def", "find_op_def", "list_ops", "make_call", "normalize_attrs", "call_ret_sinfo",
           "DTensorRule", "DTENSOR_NATIVE", "find_dtensor_script_name", "holds_dtensor"]


class OpPattern:
    """Fusion patterns (TVM's numbers)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


class InputForm:
    """How a script writes an op input, so the parser builds it without knowing the op."""

    VALUE = "value"  # any Relax value (a nested call is bound to a fresh variable)
    SHAPE = "shape"  # a list of dims becomes a shape value (``R.reshape(x, (2, -1))``)
    ARGS = "args"  # a tuple of arguments; a single value is wrapped (``R.call_tir(f, x, ...)``)
    PRIM_FUNC = "prim_func"  # a T.prim_func of the module (``cls.f``)
    PACKED_FUNC = "packed_func"  # a packed function's name (``"f"``) or a callable value
    DTYPE = "dtype"  # a dtype string becomes a data type value (``"float32"`` as ``R.dtype("float32")``)


class OpError(Exception):
    """A wrong call of an op (argument count, attribute, type or shape mismatch).

    ``arg`` names the offending argument: an int (positional index) or an attribute name;
    the script parser uses it to put the caret under that argument.
    """

    def __init__(self, message: str, arg: int | str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.arg = arg


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclasses.dataclass(frozen=True)
class AttrField:
    """One attribute of an op: its name, default and a normaliser (raises OpError on bad values).

    ``fallback`` names an earlier attribute whose value this one takes when it is None (TVM fills
    conv2d's ``out_layout`` from ``data_layout``, so it prints ``out_layout="NCHW"``).
    ``print_default`` False leaves the attribute out of printed scripts when it is None or equals
    its default (call_tir_with_grad's empty ``te_grad_kwargs``). ``reference`` says the script
    writes the value as a reference into the module's global infos (``device_mesh="mesh[0]"``). ``script_group`` names the ``R.<group>(...)``
    constructor an op with ``positional_attrs`` writes this attribute in, together with the others
    of its group (hint_on_device's ``R.device(device_type=..., index=...)``).
    """

    name: str
    default: Any = REQUIRED
    convert: Callable[[Any], Any] | None = None
    fallback: str | None = None
    print_default: bool = True
    script_group: str | None = None
    # The script names the value by its entry in the module's global infos (``"mesh[0]"`` for a
    # ``"device_mesh"``); the parser resolves the reference, the printer writes it back.
    reference: str | None = None


@dataclasses.dataclass
class OpDef:
    """Everything tvmlite knows about one op."""

    name: str
    inputs: tuple[str, ...]
    attrs: tuple[AttrField, ...]
    infer: Callable[[Call], StructInfo]
    pattern: int = OpPattern.OPAQUE
    # Optional inputs may be omitted from the end of the argument list.
    num_optional: int = 0
    # Ops whose last input takes any number of values (printed as-is).
    variadic: bool = False
    # Set next to the declaration in tvmlite.ops (``register_legalize``): the op's topi compute.
    legalize: Callable[..., Any] | None = None
    # Purity: False for ops with side effects (R.print, R.assert_op, call_packed).
    pure: bool = True
    # Rewrites a call the script parser has built into the form the IR holds (reshape's -1 becomes
    # the length it stands for, as TVM's reshape does when it is built).
    script_normalize: Callable[[Call], Call] | None = None
    # How the script writes inputs that are not plain values (``InputForm``), by input name.
    input_forms: Map = dataclasses.field(default_factory=lambda: Map(()))
    # Script defaults of inputs the script may leave out (``R.print(x)`` has ``format=""``).
    input_defaults: Map = dataclasses.field(default_factory=lambda: Map(()))
    # The call takes ``sinfo_args=`` (the struct info of an opaque result).
    takes_sinfo_args: bool = False
    # The positional order of the script form when it is not inputs, ``out_sinfo``, attributes
    # (``R.call_tir_inplace(f, args, inplace_indices, out_sinfo, tir_vars)``).
    script_order: tuple[str, ...] = ()
    # Inputs the script writes as keywords after the others (``R.print(x, format=...)``,
    # ``R.call_tir(f, args, out_sinfo=..., tir_vars=...)``).
    keyword_inputs: tuple[str, ...] = ()
    # The call's one struct-info argument is the result the op declares: the script writes it as
    # ``out_sinfo=`` (a list for a tuple) before the attributes, instead of ``sinfo_args=(...)``.
    out_sinfo: bool = False
    # A binding of the call leaves out its annotation when it repeats the inferred struct info
    # even when the printer shows all struct info (TVM does so for call_tir and call_dps_packed).
    hide_inferred_annotation: bool = False
    # The script writes the attributes positionally after the inputs (``R.hint_on_device(x,
    # R.device(...), "global")``); attributes of one ``script_group`` make one constructor call.
    positional_attrs: bool = False
    # The name a script writes (and the parser reads) when the call's ``out_sinfo`` holds distributed
    # tensors: TVM prints ``relax.call_tir`` with R.DTensor outputs as ``R.dist.call_tir``.
    dtensor_script_name: str | None = None
    # Inputs whose values the op never reads, only their struct info (``zeros_like``'s x):
    # FoldConstant folds a call whose other tensor inputs are constants.
    shape_only_inputs: tuple[str, ...] = ()
    op: Op = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.op = Op.register(self.name)

    @property
    def script_name(self) -> str:
        """The name after ``R.`` in scripts: ``relax.nn.relu`` -> ``nn.relu``."""
        return self.name[len("relax."):] if self.name.startswith("relax.") else self.name

    def input_form(self, name: str) -> str:
        """How the script writes input ``name`` (an ``InputForm``)."""
        return self.input_forms.get(name, InputForm.VALUE)

    @functools.cached_property
    def script_signature(self) -> "ScriptSignature":
        """The parameter list of ``R.<op>(...)`` as scripts write it."""
        return _script_signature(self)


@dataclasses.dataclass(frozen=True)
class ScriptSignature:
    """An op's script parameters: ``positional`` may also be given by keyword, then ``varargs``
    (the variadic input, collecting the remaining positional values), then keyword-only ones.
    ``required`` lists what must be given; ``groups`` maps a ``script_group`` parameter to the
    attributes its constructor holds."""

    positional: tuple[str, ...]
    varargs: str | None
    kwonly: tuple[str, ...]
    required: tuple[str, ...]
    groups: Map


def _script_signature(opdef: "OpDef") -> ScriptSignature:
    """Derive the script parameter list from the declaration."""
    variadic_input = opdef.inputs[-1] if opdef.variadic and opdef.inputs else None
    optional_inputs = set(opdef.inputs[len(opdef.inputs) - opdef.num_optional:]) if opdef.num_optional else set()
    leading = [i for i in opdef.inputs if i not in opdef.keyword_inputs and i != variadic_input]
    groups: dict[str, list[str]] = {}
    attr_params: list[str] = []
    for f in opdef.attrs:
        if opdef.positional_attrs and f.script_group is not None:
            if f.script_group not in groups:
                attr_params.append(f.script_group)
            groups.setdefault(f.script_group, []).append(f.name)
        else:
            attr_params.append(f.name)
    out = ["out_sinfo"] if opdef.out_sinfo else []
    if opdef.script_order:
        positional = list(opdef.script_order)
    else:
        positional = leading + out + attr_params
    if variadic_input is not None:  # after *values, everything else is keyword-only
        positional = [p for p in positional if p in leading]
    kwonly = [p for p in (*leading, *out, *attr_params, *opdef.keyword_inputs) if p not in positional]
    if opdef.takes_sinfo_args:
        kwonly.append("sinfo_args")
    if opdef.out_sinfo and not any(f.name == "dtype" for f in opdef.attrs):
        kwonly.append("dtype")  # the legacy spelling of out_sinfo: a shape plus dtype=
    required = [i for i in opdef.inputs
                if i not in optional_inputs and i != variadic_input and i not in opdef.input_defaults]
    return ScriptSignature(tuple(positional), variadic_input, tuple(kwonly), tuple(required + out),
                           Map((g, tuple(names)) for g, names in groups.items()))


# How an op treats distributed tensors (R.DTensor arguments): a function of the call and the op's
# own inference. Ops without one refuse DTensor arguments with an OpError.
DTensorRule = Callable[[Call, Callable[[Call], StructInfo]], StructInfo]


def DTENSOR_NATIVE(call: Call, infer: Callable[[Call], StructInfo]) -> StructInfo:  # noqa: N802
    """The rule of ops whose own inference handles DTensor arguments (the ``R.dist.*`` ops)."""
    return infer(call)


def _dtensor_guarded(name: str, infer: Callable[[Call], StructInfo],
                     rule: DTensorRule | None) -> Callable[[Call], StructInfo]:
    """``infer``, with DTensor arguments going to ``rule`` (refused when there is none)."""

    def run(call: Call) -> StructInfo:
        for i, a in enumerate(call.args):
            if isinstance(getattr(a, "struct_info", None), rx.DTensorStructInfo):
                if rule is None:
                    raise OpError(f"R.{name[len('relax.'):]} does not take distributed tensors (R.DTensor): "
                                  f"tvmlite infers distributed results for elementwise ops and the R.dist.* ops "
                                  f"only", i)
                return rule(call, infer)
        return infer(call)

    return run


_REGISTRY: dict[str, OpDef] = {}
_BY_OP: dict[int, OpDef] = {}
_DTENSOR_NAMES: dict[str, OpDef] = {}


def register_op(name: str, inputs: tuple[str, ...] = ("x",), attrs: tuple[AttrField, ...] = (),
                pattern: int = OpPattern.OPAQUE, num_optional: int = 0, variadic: bool = False,
                pure: bool = True, script_normalize: Callable[[Call], Call] | None = None,
                keyword_inputs: tuple[str, ...] = (), input_forms: dict[str, str] | None = None,
                input_defaults: dict[str, Any] | None = None, takes_sinfo_args: bool = False,
                script_order: tuple[str, ...] = (), out_sinfo: bool = False,
                hide_inferred_annotation: bool = False, positional_attrs: bool = False,
                dtensor_rule: DTensorRule | None = None, dtensor_script_name: str | None = None,
                shape_only_inputs: tuple[str, ...] = (),
                ) -> Callable[[Callable[[Call], StructInfo]], Callable[[Call], StructInfo]]:
    """Decorator registering ``infer`` as the struct-info inference of op ``name``; ``dtensor_rule``
    infers calls with distributed-tensor arguments (``DTENSOR_NATIVE``: ``infer`` does)."""

    def wrap(infer: Callable[[Call], StructInfo]) -> Callable[[Call], StructInfo]:
        if name in _REGISTRY:
            raise ValueError(f"op {name!r} is registered twice")
        guarded = infer if dtensor_rule is DTENSOR_NATIVE else _dtensor_guarded(name, infer, dtensor_rule)
        opdef = OpDef(name, tuple(inputs), tuple(attrs), guarded, pattern, num_optional, variadic,
                      pure=pure, script_normalize=script_normalize,
                      keyword_inputs=tuple(keyword_inputs), input_forms=Map((input_forms or {}).items()),
                      input_defaults=Map((input_defaults or {}).items()), takes_sinfo_args=takes_sinfo_args,
                      script_order=tuple(script_order), out_sinfo=out_sinfo,
                      hide_inferred_annotation=hide_inferred_annotation,
                      positional_attrs=positional_attrs, dtensor_script_name=dtensor_script_name,
                      shape_only_inputs=tuple(shape_only_inputs))
        _REGISTRY[name] = opdef
        if dtensor_script_name is not None:
            _DTENSOR_NAMES[dtensor_script_name] = opdef
        _BY_OP[id(opdef.op)] = opdef
        return infer

    return wrap


def get_op_def(name: str) -> OpDef:
    """The registry entry of op ``name`` (``"relax.add"``); KeyError when unknown."""
    return _REGISTRY[name]


def find_op_def(op: Op) -> OpDef:
    """The registry entry of an Op node."""
    found = _BY_OP.get(id(op))
    return found if found is not None else _REGISTRY[op.name]


def find_dtensor_script_name(script_name: str) -> OpDef | None:
    """The op a script calls as ``R.<script_name>`` for distributed outputs (``dist.call_tir``)."""
    return _DTENSOR_NAMES.get(script_name)


def holds_dtensor(sinfo: StructInfo) -> bool:
    """True when a struct info is, or is a tuple holding, a distributed tensor."""
    if isinstance(sinfo, rx.TupleStructInfo):
        return any(holds_dtensor(f) for f in sinfo.fields)
    return isinstance(sinfo, rx.DTensorStructInfo)


def get_op(name: str) -> Op:
    """The Op node of ``name`` (one object per name)."""
    return get_op_def(name).op


def list_ops() -> list[OpDef]:
    """All registered ops, by name."""
    return [d for _, d in sorted(_REGISTRY.items())]


def normalize_attrs(opdef: OpDef, given: dict[str, Any]) -> Map:
    """Fill defaults, convert values and order attributes as declared; OpError on a bad attribute."""
    fields = {f.name: f for f in opdef.attrs}
    for key in given:
        if key not in fields:
            allowed = ", ".join(fields) or "none"
            raise OpError(f"R.{opdef.script_name} has no attribute {key!r} (attributes: {allowed})", key)
    out = []
    for f in opdef.attrs:
        if f.name in given:
            value = given[f.name]
            if f.convert is not None:
                try:
                    value = f.convert(value)
                except OpError as err:
                    raise OpError(f"attribute {f.name!r} of R.{opdef.script_name}: {err.message}", f.name) from None
                except (TypeError, ValueError) as err:
                    raise OpError(f"attribute {f.name!r} of R.{opdef.script_name}: {err}", f.name) from None
        elif f.default is REQUIRED:
            raise OpError(f"R.{opdef.script_name} needs the attribute {f.name!r}", f.name)
        else:
            value = f.default
        if value is None and f.fallback is not None:
            value = dict(out)[f.fallback]
        out.append((f.name, value))
    return Map(out)


def make_call(name: str | Op, args: tuple | list, attrs: dict[str, Any] | Map | None = None,
              sinfo_args: tuple = (), span: Any = None) -> Call:
    """Build a Call of a registered op with normalised attributes and inferred struct info."""
    opdef = get_op_def(name) if isinstance(name, str) else find_op_def(name)
    args = tuple(args)
    lo = len(opdef.inputs) - opdef.num_optional
    hi = len(opdef.inputs)
    if not opdef.variadic and not lo <= len(args) <= hi:
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise OpError(f"R.{opdef.script_name} takes {want} argument{'s' if hi != 1 else ''} "
                      f"({', '.join(opdef.inputs)}), got {len(args)}",
                      min(len(args), hi) if len(args) > hi else None)
    for i, a in enumerate(args):
        if not isinstance(a, (Expr, GlobalVar)):  # call_tir's callee is a GlobalVar
            raise OpError(f"argument {i + 1} of R.{opdef.script_name} must be a Relax expression, "
                          f"got {type(a).__name__}", i)
    norm = attrs if isinstance(attrs, Map) else normalize_attrs(opdef, dict(attrs or {}))
    call = Call(opdef.op, args, norm, tuple(sinfo_args), span=span)
    sinfo = opdef.infer(call)
    return dataclasses.replace(call, struct_info=sinfo)


def call_ret_sinfo(call: rx.Call, mod: IRModule | None = None) -> rx.StructInfo:
    """The struct info of a call: by the op registry, or from the callee's signature (a callee
    named by a GlobalVar is looked up in ``mod``; unknown callees give R.Object)."""
    callee = call.op
    if isinstance(callee, rx.Op):
        return find_op_def(callee).infer(call)
    if isinstance(callee, GlobalVar):
        func = mod[callee] if mod is not None and callee.name_hint in mod else None
        if isinstance(func, tir.PrimFunc):  # a direct kernel call: its return value, or nothing
            ret = func.ret_type
            return rx.PrimStructInfo(ret) if ret not in (None, "void") else rx.TupleStructInfo(())
        finfo = func.struct_info if isinstance(func, rx.Function) else None
    else:
        finfo = sinfo_of(callee)
    if not isinstance(finfo, rx.FuncStructInfo):
        return rx.ObjectStructInfo()
    if finfo.params is None and call.sinfo_args:  # an opaque callee (packed function) says it
        args = call.sinfo_args
        return args[0] if len(args) == 1 else rx.TupleStructInfo(tuple(args))
    return derive_call_ret(finfo, [sinfo_of(a) for a in call.args])
