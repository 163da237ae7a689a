"""Test-suite settings: every Sequential verifies well-formedness after each pass (off by default
for users, as in TVM), so a pass that breaks the IR fails the tests that run it."""
import os

os.environ.setdefault("TVMLITE_VERIFY_EACH", "1")
