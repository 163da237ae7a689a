"""The key under which LegalizeOps and FoldConstant reuse one legalization for many op calls.

A legalization reads of a call its op, attributes, ``sinfo_args`` and its arguments' struct infos
(and the value of a rank-0 constant, which it inlines); a network repeats the same calls on other
variables and constants (every convolution's batch-norm folding, bias add and weight packing).
``call_key`` describes exactly that as a hashable value, equal when two calls are structurally
equal up to their arguments' identities and their tensor constants' values: argument variables
are numbered by first occurrence (``add(x, x)`` and ``add(x, y)`` differ), the variables an
``IndexMap`` binds are numbered too, any other TIR variable (a symbolic size) counts by identity
(the passes keep the keyed calls alive, so an id stays its variable's),
and floats by their bits (``0.0`` and ``-0.0`` differ, as in structural equality)."""
from __future__ import annotations

from typing import Any

from ..ir import relax as rx
from ..ir import tir
from ..ir.arith import IndexMap
from ..ir.module import GlobalVar
from ..ir.node import Map, Node, node_fields
from ..ir.struct_info import sinfo_of

__all__ = ["call_key", "flat_args", "arg_positions"]

_PLAIN = (str, int, bool, type(None))


class _NoKey(Exception):
    """A value the key cannot describe: the call is legalized on its own."""


def call_key(call: rx.Call) -> Any:
    """The reuse key of an op call's legalization, or None when the call has a value of an
    unknown kind."""
    try:
        return _key((call.op, call.attrs, call.sinfo_args, call.args), {})
    except _NoKey:
        return None


def flat_args(args: Any) -> list[rx.Expr]:
    """The arguments with tuples replaced by their fields (recursively): what call_tir may pass."""
    flat: list[rx.Expr] = []
    for a in args:
        flat.extend(flat_args(a.fields) if isinstance(a, rx.Tuple) else (a,))
    return flat


def arg_positions(call: rx.Call, inputs: Any) -> list[int] | None:
    """Where each of ``inputs`` (a legalization's call_tir arguments) stands among the call's flat
    arguments; None when one is not exactly one of them (a value the legalization made, or an
    argument passed twice): such a legalization is not reusable."""
    flat = flat_args(call.args)
    positions = []
    for a in inputs:
        where = [i for i, f in enumerate(flat) if f is a]
        if len(where) != 1:
            return None
        positions.append(where[0])
    return positions


def _key(x: Any, numbering: dict[int, int]) -> Any:
    """``x`` as a hashable value (see the module doc); raises _NoKey for values of unknown kinds."""
    if type(x) in _PLAIN:
        return x
    if type(x) is tir.IntImm:  # most leaves (every dim): no field walk
        return ("IntImm", x.dtype, x.value)
    if type(x) is float:
        return ("float", x.hex())
    if isinstance(x, (tuple, list)):
        return ("seq",) + tuple(_key(v, numbering) for v in x)
    if isinstance(x, Map):
        if not all(isinstance(k, str) for k in x):
            raise _NoKey
        return ("map",) + tuple((k, _key(x[k], numbering)) for k in sorted(x))
    if not isinstance(x, Node):
        raise _NoKey
    n = numbering.get(id(x))
    if n is not None:
        return ("ref", n)
    if isinstance(x, tir.Var):
        return ("free", id(x), x.dtype)  # a symbolic size: its identity matters
    if isinstance(x, rx.Var):
        numbering[id(x)] = len(numbering)
        return (type(x).__name__, _key(sinfo_of(x), numbering))
    if isinstance(x, IndexMap):
        for v in x.initial_indices:  # bound here: matched by position, as structural equality does
            numbering[id(v)] = len(numbering)
        return ("index_map", tuple(v.dtype for v in x.initial_indices), _key(x.final_indices, numbering))
    if isinstance(x, GlobalVar):
        return ("gv", x.name_hint)
    if isinstance(x, rx.Op):
        return ("op", x.name)
    if isinstance(x, rx.Constant):
        if x.data.ndim > 0:  # a tensor's values never shape its legalization: its struct info does
            return ("tensor", _key(sinfo_of(x), numbering))
        return ("scalar", _key(sinfo_of(x), numbering), x.data.tobytes())  # legalizations inline these
    return (type(x).__name__,) + tuple(_key(getattr(x, f), numbering) for f in node_fields(type(x)))
