"""Textual pipelines: parse_pipeline round-trips through str(), options are typed and checked
against the pass's constructor, and mistakes are reported with their position."""
import pytest

from tvmlite import passes as P
from tvmlite.ir import IRModule
from tvmlite.script import from_source


@P.module_pass(name="Tunable")
class Tunable:
    """A pass with options of every kind (registered below)."""

    def __init__(self, level: int = 1, ratio: float = 0.5, flag: bool = False, label: str = "x", anything=None):
        self.level, self.ratio, self.flag, self.label, self.anything = level, ratio, flag, label, anything

    def transform_module(self, mod, ctx):
        return mod.with_attr("tunable", f"{self.level}/{self.ratio}/{self.flag}/{self.label}/{self.anything}")


def make_scaled(factor: int = 2) -> P.Pass:
    """A factory function (not a class) registered as a pass."""
    return P.module_pass(lambda mod, ctx: mod.with_attr("factor", factor), name="Scaled")


P.register_pass("Tunable", Tunable, override=True)
P.register_pass("Scaled", make_scaled, override=True)


@pytest.mark.parametrize("spec", [
    "",
    "ToNonDataflow",
    "ToNonDataflow,DeadCodeElimination",
    "ToNonDataflow,DeadCodeElimination{entry_functions=main},PrintIR{header=\"after dce\"}",
    "Tunable{level=2,flag=true},Tunable,Tunable{ratio=0.25,label=abc}",
    "Tunable{flag=false,level=-3,ratio=1e-05}",
    "Tunable{label=\"1\",anything=7}",
    'Tunable{label="with \\"quotes\\" and \\\\"}',
    "Tunable{anything=3.5},Scaled{factor=4},Scaled",
    "PrintIR{header=a.b-c/d}",
])
def test_round_trip(spec):
    assert str(P.parse_pipeline(spec)) == spec


def test_parsed_passes_have_typed_options():
    seq = P.parse_pipeline('Tunable{level=2,ratio=0.25,flag=true,label="1"},Scaled{factor=4}')
    assert isinstance(seq, P.Sequential) and seq.info.name == "sequential"
    tunable, scaled = seq.passes
    assert (tunable.level, tunable.ratio, tunable.flag, tunable.label) == (2, 0.25, True, "1")
    assert tunable.options == {"level": 2, "ratio": 0.25, "flag": True, "label": "1"}
    assert scaled.options == {"factor": 4}
    mod = seq(IRModule.from_expr(from_source('''
@R.function
def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
    return x
''')))
    assert (mod.attrs["tunable"], mod.attrs["factor"]) == ("2/0.25/True/1/None", 4)


def test_whitespace_is_allowed_and_printed_canonically():
    assert str(P.parse_pipeline(" ToNonDataflow , Tunable{ level = 2 , flag=true } ")) == \
        "ToNonDataflow,Tunable{level=2,flag=true}"


def test_sequential_prints_nested_sequentials_flat():
    inner = P.parse_pipeline("Tunable{level=3},PrintIR")
    assert str(P.Sequential([P.ToNonDataflow(), inner])) == "ToNonDataflow,Tunable{level=3},PrintIR"


def test_float_option_accepts_an_int_and_keeps_it():
    assert str(P.parse_pipeline("Tunable{ratio=2}")) == "Tunable{ratio=2}"


def error_of(spec):
    with pytest.raises(P.PipelineError) as info:
        P.parse_pipeline(spec)
    return str(info.value)


def test_unknown_pass_lists_registered_passes_with_position():
    assert error_of("ToNonDataflow,DeadCode") == (
        "unknown pass 'DeadCode'; did you mean 'DeadCodeElimination'? (registered passes: "
        + ", ".join(P.list_passes()) + ") (at position 14 of the pipeline)\n"
        "  ToNonDataflow,DeadCode\n"
        "                ^^^^^^^^")


def test_unknown_option_lists_the_options():
    assert error_of("Tunable{levle=2}") == (
        "pass Tunable has no option 'levle' (options: level, ratio, flag, label, anything) "
        "(at position 8 of the pipeline)\n"
        "  Tunable{levle=2}\n"
        "          ^^^^^")
    assert "pass ToNonDataflow has no option 'x' (options: none)" in error_of("ToNonDataflow{x=1}")


def test_option_type_errors():
    assert error_of("Tunable{flag=1}").startswith(
        "option flag of Tunable expects a bool (default false), got 1 (at position 13 of the pipeline)")
    assert error_of("Tunable{level=1.5}").startswith("option level of Tunable expects a int (default 1), got 1.5")
    assert error_of("Tunable{label=7}").startswith(
        'option label of Tunable expects a str (default x), got 7 (write "7" for a string)')


@pytest.mark.parametrize("spec, message, column", [
    ("Tunable{level}", "expected '=' after the option name 'level', found '}'", 13),
    ("Tunable{level=}", "expected an option value", 14),
    ("Tunable{level=1", "expected ',' or '}' after an option, found the end", 15),
    ("Tunable{level=1,level=2}", "option 'level' of Tunable given twice", 16),
    ('Tunable{label="abc}', "unterminated string", 14),
    ("ToNonDataflow,,PrintIR", "expected a pass name, found ','", 14),
    ("ToNonDataflow PrintIR", "expected ',' between passes, found 'P'", 14),
    ("ToNonDataflow,", "expected a pass name, found the end", 14),
])
def test_syntax_errors_point_at_the_position(spec, message, column):
    text = error_of(spec)
    first, shown, caret = text.splitlines()
    assert first == f"{message} (at position {column} of the pipeline)"
    assert shown == "  " + spec
    assert caret.index("^") == 2 + column


def test_required_options_must_be_given():
    P.register_pass("NeedsLabel", lambda label: Tunable(label=label), override=True)
    assert error_of("NeedsLabel").startswith("pass NeedsLabel needs the option label")
    needs = P.parse_pipeline("NeedsLabel{label=z}")
    assert str(needs) == "NeedsLabel{label=z}"
    assert needs.passes[0].info.name == "NeedsLabel"  # an alias names the pass it makes
