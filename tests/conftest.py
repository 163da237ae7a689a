"""Test-suite settings: every Sequential verifies well-formedness after each pass (off by default
for users, as in TVM), so a pass that breaks the IR fails the tests that run it."""
import os

os.environ.setdefault("TVMLITE_VERIFY_EACH", "1")

import tempfile

import pytest


@pytest.fixture(scope="session", autouse=True)
def _temp_files_under_pytest(tmp_path_factory):
    """Temporary files of the suite (e.g. the reproducers a failing pass writes) go under pytest's
    own temp directory, which pytest prunes, instead of piling up in /tmp."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp_path_factory.mktemp("tmp"))
    yield
    tempfile.tempdir = saved
