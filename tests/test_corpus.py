"""The seed corpus (tests/data/corpus): canonical texts print back byte for byte, every text
round-trips (structurally and as a textual fixed point), legacy texts print in today's spelling."""
import re

import pytest

from tvmlite.script import ScriptError, from_source
from tvmlite.testing import assert_round_trip, text_diff

from corpus_files import CORPUS_DIR as CORPUS, read_corpus  # noqa: E402  (tests/data/corpus)
HEADER = re.compile(r"^# from \S+ import \S+ as \S+$")
CANONICAL = sorted(p.name for p in CORPUS.glob("seed*.py") if "handwritten" not in p.name)
LEGACY = sorted(p.name for p in (CORPUS / "legacy").glob("*.py"))


def body(text: str) -> str:
    """The text without its '# from X import Y as Z' header lines."""
    lines = text.rstrip("\n").split("\n")
    while lines and HEADER.match(lines[0]):
        lines.pop(0)
    return "\n".join(lines).strip("\n") + "\n"


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_text_prints_back_byte_for_byte(name):
    text = read_corpus(name)
    printed = from_source(text).script()
    assert body(printed) == body(text), text_diff(body(text), body(printed))
    assert printed.startswith("# from tvmlite.script import ")
    assert_round_trip(text)


def test_hand_written_input_prints_canonically():
    printed = from_source(read_corpus("seed004_mlp_handwritten_input.py")).script()
    want = read_corpus("seed004_mlp_script.py")
    assert body(printed) == body(want), text_diff(body(want), body(printed))


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_text(name):
    text = read_corpus(f"legacy/{name}")
    if "meta[" not in text:
        printed = assert_round_trip(text).script()
        assert "relax." not in printed and "Tensor((" not in printed.replace("R.Tensor((", "")
        return
    with pytest.raises(ScriptError) as info:
        from_source(text)
    first_ref = next(i for i, line in enumerate(text.splitlines(), 1) if "meta[" in line)
    assert info.value.line == first_ref
    assert "meta[relay.Constant][" in info.value.message
