"""Helpers for users' own tests (and ours): round-trip checks and Before/Expected pass checks."""
from __future__ import annotations

import difflib
from typing import Any, Callable

from tvmlite.ir import IRModule, structural_equal
from tvmlite.ir.structural import assert_structural_equal
from tvmlite.script import from_source

__all__ = ["assert_round_trip", "check_transform", "text_diff"]


def text_diff(expected: str, actual: str, expected_name: str = "expected", actual_name: str = "actual") -> str:
    """A unified diff of two texts (empty when they are equal)."""
    return "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                        expected_name, actual_name))


def _as_ir(obj: Any) -> Any:
    return from_source(obj) if isinstance(obj, str) else obj


def assert_round_trip(mod_or_text: Any) -> Any:
    """Check that printing then parsing gives a structurally equal IR and that printing is a
    fixed point; returns the parsed IR. Failures show a readable diff."""
    ir = _as_ir(mod_or_text)
    printed = ir.script(show_meta=True)
    again = from_source(printed)
    if not structural_equal(ir, again):
        try:
            assert_structural_equal(ir, again)
        except AssertionError as err:
            raise AssertionError(f"parse(print(ir)) differs from ir: {err}\nprinted text:\n{printed}") from None
    reprinted = again.script(show_meta=True)
    if reprinted != printed:
        raise AssertionError("printing is not a fixed point:\n" + text_diff(printed, reprinted, "print(ir)",
                                                                          "print(parse(print(ir)))"))
    return again


def check_transform(before: Any, expected: Any, transform: Callable[[IRModule], IRModule]) -> IRModule:
    """TVM's CompareBeforeAfter: apply ``transform`` (a pass or any IRModule -> IRModule callable) to
    ``before`` and assert the result is structurally equal to ``expected`` (modules, functions or
    script texts); returns the result."""
    mod = _as_module(_as_ir(before))
    want = _as_module(_as_ir(expected))
    got = transform(mod)
    if not structural_equal(got, want):
        diff = text_diff(want.script(), got.script(), "expected", "after transform")
        raise AssertionError(f"the transform's result differs from the expected module:\n{diff}")
    return got


def _as_module(ir: Any) -> IRModule:
    return ir if isinstance(ir, IRModule) else IRModule.from_expr(ir)
