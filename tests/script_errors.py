"""Checking a script error's place: the message and the text under its caret."""
from __future__ import annotations

import pytest

from tvmlite.script.errors import ScriptError
from tvmlite.script.parser import from_source


def assert_located_error(text: str, message: str, caret: str) -> None:
    """Parsing ``text`` fails with ``message``, its caret at the start of ``caret``."""
    with pytest.raises(ScriptError) as info:
        from_source(text, "bad.py")
    err = info.value
    assert message in err.message
    line = text.splitlines()[err.line - 1]
    assert line[err.col - 1:].startswith(caret), (err.line, err.col, line)
