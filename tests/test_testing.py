"""tvmlite.testing: assert_round_trip and check_transform, on passing and failing cases."""
import re

import pytest

from tvmlite.passes import DeadCodeElimination, ToNonDataflow
from tvmlite.testing import assert_round_trip, check_transform

BEFORE = '''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
    with R.dataflow():
        unused = R.exp(x)
        y = R.nn.relu(x)
        R.output(y)
    return y
'''
EXPECTED = '''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
    with R.dataflow():
        y = R.nn.relu(x)
        R.output(y)
    return y
'''


def test_round_trip_accepts_texts_and_ir():
    ir = assert_round_trip(BEFORE)
    assert_round_trip(ir)


def test_check_transform_passes_and_reports_a_diff():
    check_transform(BEFORE, EXPECTED, DeadCodeElimination())
    with pytest.raises(AssertionError) as info:
        check_transform(BEFORE, EXPECTED, ToNonDataflow())
    message = str(info.value)
    assert re.search(r"^- +with R.dataflow\(\):$", message, re.M)
    assert re.search(r"^\+ +unused: R.Tensor", message, re.M)
