"""Every registered op, legalized, lowered and compiled with LLVM, run by the VM, against numpy
(the same cases and numpy references as tests/test_legalize.py, which checks the TE evaluation)."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tvmlite  # noqa: E402
from legalize_util import build, params_for  # noqa: E402
from test_legalize import CASES, SYMBOLIC_CASES, _close  # noqa: E402  (one table of op cases)


def compile_and_run(make, inputs, symbolic=None):
    """Build ``main`` around one op, compile it (zero pipeline + lowering + LLVM) and run it."""
    mod = build(make, params_for(inputs, symbolic))
    vm = tvmlite.VirtualMachine(tvmlite.compile(mod, target="llvm"), tvmlite.cpu())
    out = vm["main"](*inputs)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_op_matches_numpy(name):
    make, inputs, ref = CASES[name]
    _close(compile_and_run(make, inputs), ref(*inputs))


@pytest.mark.parametrize("make, inputs, symbolic, ref", SYMBOLIC_CASES)
def test_compiled_op_with_symbolic_shapes(make, inputs, symbolic, ref):
    _close(compile_and_run(make, inputs, symbolic), ref(*inputs))
