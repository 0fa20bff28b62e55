"""Symbolic leaves: proof-based equality, numbers against expressions, intervals, legacy."""

from __future__ import annotations

import math

import pytest

from critpt_grader.codec.values import Legacy, Symbolic, WireSet
from critpt_grader.compare import Policy, compare_values
from tests.support.paths import CRITPT_PUBLIC

S = Symbolic
# A generous proof budget keeps these verdicts independent of machine load.
BUDGET = 10.0
POSITIVE = Policy(
    symbols={"x": {"positive": True}, "y": {"positive": True}}, proof_step_cpu_seconds=BUDGET
)


def compare(expected, observed, policy: Policy | None = None):
    return compare_values(expected, observed, policy or Policy(proof_step_cpu_seconds=BUDGET))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("(x + 2)**2", "x**2 + 4*x + 4"),
        ("sin(x)**2 + cos(x)**2", "1"),
        ("(x**2 - 1)/(x - 1)", "x + 1"),
        ("0.5*x", "x/2"),
    ],
)
def test_proved_equal(a, b):
    verdict = compare(S(a), S(b))
    assert verdict.status == "equal", verdict
    assert verdict.leaves[0].kind == "symbolic"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("x + sin(840*pi*x)", "x"),
        ("conjugate(x)", "x"),
        ("x**2 + 1", "x**2 - 1"),
        ("1/3", "0.3333333"),
    ],
)
def test_never_equal_from_samples(a, b):
    assert compare(S(a), S(b)).status in ("mismatch", "uncertain")


def test_assumptions_come_from_the_policy():
    assert compare(S("log(x*y)"), S("log(x) + log(y)"), POSITIVE).status == "equal"
    assert compare(S("log(x*y)"), S("log(x) + log(y)")).status != "equal"


def test_numeric_symbolic_meets_a_float_with_the_tolerance():
    assert compare(0.5, S("1/2")).status == "equal"
    assert compare(S("1/2"), 0.5).status == "equal"
    assert compare(1.4142135623730951, S("sqrt(2)")).status == "equal"
    assert compare(S("sqrt(2)"), 1.4142135623730951).status == "equal"
    assert compare(S("sqrt(2)"), 1.41421356).status == "mismatch"
    assert compare(3, S("3")).status == "equal"
    verdict = compare(0.5, S("0.5"))
    assert verdict.status == "equal" and verdict.leaves[0].tolerance is not None
    assert (
        compare(
            S("pi"), 3.141592653589793, Policy(task_rtol="1e-9", proof_step_cpu_seconds=BUDGET)
        ).status
        == "equal"
    )


def test_free_symbols_never_equal_a_number():
    verdict = compare(S("x"), 1.0)
    assert verdict.status == "mismatch"
    assert compare(2.0, S("2*x")).status == "mismatch"


def test_candidate_string_against_an_expression_is_parsed():
    assert compare(S("x**2 + 1"), "1 + x**2").status == "equal"
    assert compare(S("x**2 + 1"), "x^2 + 2").status == "mismatch"
    assert compare(S("x**2"), "not math at all").status == "mismatch"


def test_unreadable_sides():
    assert compare(S("x +* 2"), S("x")).status == "invalid"
    verdict = compare(S("x"), S("x +* 2"))
    assert verdict.status == "mismatch" and "unreadable" in verdict.leaves[0].reason


def test_identical_text_is_equal():
    assert compare(S("besselj(1, x)**2"), S("besselj(1, x)**2")).status == "equal"


def test_infinities():
    assert compare(S("oo"), S("oo")).status == "equal"
    assert compare(S("-oo"), S("-oo")).status == "equal"
    assert compare(S("oo"), S("-oo")).status == "mismatch"
    assert compare(S("oo"), float("inf")).status == "equal"
    assert compare(float("-inf"), S("-oo")).status == "equal"
    assert compare(S("oo"), 1e308).status == "mismatch"


def test_intervals():
    assert compare(S("Interval.open(0, 1)"), S("Interval.open(0, 1)")).status == "equal"
    assert compare(S("Interval.open(0, 1)"), S("Interval.Lopen(0, 1)")).status == "mismatch"
    assert compare(S("Interval(0, pi/2)"), S("Interval(0, asin(1))")).status == "equal"
    verdict = compare(S("Interval.open(0, 1)"), S("Interval.open(0, 2)"))
    assert verdict.status == "mismatch" and verdict.leaves[0].kind == "interval"
    assert compare(S("Interval(0, 1)"), 0.5).status == "mismatch"


def test_legacy_mathematical_strings_read_as_expressions():
    policy = Policy(symbols={"x": {}}, proof_step_cpu_seconds=BUDGET)
    assert compare(Legacy("x"), S("x"), policy).status == "equal"
    assert compare(Legacy("-x"), S("-x")).status == "equal"
    assert compare(Legacy("x-1"), S("x - 1")).status == "equal"
    assert compare(Legacy("2*x"), S("x + x")).status == "equal"
    assert compare(Legacy("sqrt(2)"), 2**0.5).status == "equal"
    assert compare(Legacy("x-1"), S("1 - x")).status == "mismatch"


def test_bare_legacy_name_is_a_symbol_when_declared_or_used_beside():
    assert compare((Legacy("x"), Legacy("x**2")), (S("x"), S("x**2"))).status == "equal"
    assert compare(Legacy("x"), "x").status == "equal"  # as a category, exactly
    assert compare(Legacy("A"), "A").status == "equal"
    assert compare(Legacy("pi"), S("pi")).status == "equal"  # a category meets SymPy


def test_sets_of_expressions():
    expected = WireSet((S("x + 1"), S("x**2")))
    assert compare(expected, WireSet((S("x*x"), S("1 + x")))).status == "equal"
    assert compare(expected, WireSet((S("x*x"), S("2 + x")))).status == "mismatch"


def test_symbolic_tuple_text_compares_element_wise():
    assert compare((1, 2), S("(1, 2)")).status == "equal"


def test_symmetry_of_symbolic_status():
    pairs = [("x**2 - 1", "(x - 1)*(x + 1)"), ("x", "x + 1"), ("sqrt(x**2)", "x")]
    for a, b in pairs:
        assert compare(S(a), S(b)).status == compare(S(b), S(a)).status


def test_two_symbolic_values_need_a_proof_unless_the_candidate_is_decimals():
    # decimal text against an exact rational: a rounded number, the tolerance decides (the
    # old rule made the first a mismatch)
    assert compare(S("1/3"), S("0.333333333333333")).status == "equal"
    assert compare(S("1/3"), S("0.3333333")).status == "mismatch"
    # against a constant too, as a float would be (the old rule asked for a proof)
    assert compare(S("pi"), S("3.14159265358979")).status == "equal"
    assert compare(S("pi"), S("3.14159")).status == "mismatch"
    # both decimal approximations: the tolerance decides
    assert compare(S("0.333333333333333"), S("0.3333333333333333")).status == "equal"
    assert compare(S("1.5 + 2.0*I"), S("1.5 + 2.0000000000000004*I")).status == "equal"
    assert compare(S("0.5*pi"), S("1.5707963267949")).status == "equal"
    assert compare(S("0.5*pi"), S("1.5708")).status == "mismatch"
    # a float from the wire is judged as a float against an exact rational too (the old
    # rule made it a mismatch); an expected float meets an exact candidate with the tolerance
    assert compare(S("1/3"), 1 / 3).status == "equal"
    assert compare(S("1/3"), 0.333333).status == "mismatch"
    assert compare(1 / 3, S("1/3")).status == "equal"
    assert compare(S("pi/3"), math.pi / 3).status == "equal"  # a constant: the tolerance


def test_identical_nan_text_is_never_equal():
    assert compare(S("nan"), S("nan")).status == "mismatch"
    assert compare(Legacy("nan"), Legacy("nan")).status == "mismatch"


def _critpt_gold_text() -> str:
    import json
    import re

    path = CRITPT_PUBLIC / "example_challenges" / "quantum_error_correction_main.json"
    if not path.exists():
        pytest.skip("CritPt public data is not available")
    problem = json.loads(path.read_text())["problems"][0]
    line = re.search(r"F_logical = (.+)", problem["answer_code"]).group(1)
    return line.replace("sp.", "")


def test_critpt_gold_answer_against_other_forms_and_a_canary():
    import sympy

    from critpt_grader.codec import decode, encode
    from critpt_grader.symbolic.parse import parse

    gold = _critpt_gold_text()
    together = decode(encode(sympy.together(parse(gold))))
    assert isinstance(together, Symbolic)
    assert compare(S(gold), together).status == "equal"
    canary = gold.replace("Rational(16, 25)", "Rational(17, 25)", 1)
    assert canary != gold
    assert compare(S(gold), S(canary)).status == "mismatch"
    assert compare(S(gold), 0.9).status == "mismatch"  # free symbol p against a number
