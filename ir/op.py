"""The operator registry: one entry per Relax op with its inputs, attributes, struct-info
inference, fusion pattern, purity and legalization. The ops themselves are declared in
``tvmlite.ops`` (one module per family), which fills this registry when imported; the IR never
imports it, and ``tvmlite``'s root imports it before any user code runs."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from . import relax as rx
from .module import GlobalVar, IRModule
from .node import Map
from .relax import Call, Expr, Op, StructInfo
from .struct_info import derive_call_ret, sinfo_of

__all__ = ["OpPattern", "AttrField", "OpDef", "OpError", "REQUIRED", "register_op", "get_op",
           "get_op_def", "find_op_def", "list_ops", "make_call", "normalize_attrs", "call_ret_sinfo"]


class OpPattern:
    """Fusion patterns (TVM's numbers)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


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
    its default (call_tir_with_grad's empty ``te_grad_kwargs``). ``script_group`` names the ``R.<group>(...)``
    constructor an op with ``positional_attrs`` writes this attribute in, together with the others
    of its group (hint_on_device's ``R.device(device_type=..., index=...)``).
    """

    name: str
    default: Any = REQUIRED
    convert: Callable[[Any], Any] | None = None
    fallback: str | None = None
    print_default: bool = True
    script_group: str | None = None


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
    # Inputs the script may write as a list of dims, which the parser builds into a shape value
    # (``R.reshape(x, (2, -1))``).
    shape_inputs: tuple[str, ...] = ()
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
    op: Op = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.op = Op(self.name)

    @property
    def script_name(self) -> str:
        """The name after ``R.`` in scripts: ``relax.nn.relu`` -> ``nn.relu``."""
        return self.name[len("relax."):] if self.name.startswith("relax.") else self.name


_REGISTRY: dict[str, OpDef] = {}
_BY_OP: dict[int, OpDef] = {}


def register_op(name: str, inputs: tuple[str, ...] = ("x",), attrs: tuple[AttrField, ...] = (),
                pattern: int = OpPattern.OPAQUE, num_optional: int = 0, variadic: bool = False,
                pure: bool = True, script_normalize: Callable[[Call], Call] | None = None,
                keyword_inputs: tuple[str, ...] = (), shape_inputs: tuple[str, ...] = (), out_sinfo: bool = False,
                hide_inferred_annotation: bool = False, positional_attrs: bool = False,
                ) -> Callable[[Callable[[Call], StructInfo]], Callable[[Call], StructInfo]]:
    """Decorator registering ``infer`` as the struct-info inference of op ``name``."""

    def wrap(infer: Callable[[Call], StructInfo]) -> Callable[[Call], StructInfo]:
        if name in _REGISTRY:
            raise ValueError(f"op {name!r} is registered twice")
        opdef = OpDef(name, tuple(inputs), tuple(attrs), infer, pattern, num_optional, variadic,
                      pure=pure, script_normalize=script_normalize,
                      keyword_inputs=tuple(keyword_inputs), shape_inputs=tuple(shape_inputs), out_sinfo=out_sinfo,
                      hide_inferred_annotation=hide_inferred_annotation,
                      positional_attrs=positional_attrs)
        _REGISTRY[name] = opdef
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
        finfo = func.struct_info if isinstance(func, rx.Function) else None
    else:
        finfo = sinfo_of(callee)
    if not isinstance(finfo, rx.FuncStructInfo):
        return rx.ObjectStructInfo()
    if finfo.params is None and call.sinfo_args:  # an opaque callee (packed function) says it
        args = call.sinfo_args
        return args[0] if len(args) == 1 else rx.TupleStructInfo(tuple(args))
    return derive_call_ret(finfo, [sinfo_of(a) for a in call.args])
