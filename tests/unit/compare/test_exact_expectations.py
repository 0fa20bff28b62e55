"""Exactness follows the value, not its tag: an expectation that is an exact integer or
rational in any form (int, Fraction, symbolic text SymPy holds as an Integer or Rational,
legacy integer text) compares exactly with an exact candidate under the default tolerance,
as an int always has. Decimals, floats and irrational constants keep the tolerance; an
inexact candidate (a float, decimal text) meets an exact value with the default tolerance
(tests/unit/compare/test_inexact_candidates.py); an author's or a promised tolerance
applies to an exact value as given."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.codec.values import ExactComplex, Legacy
from critpt_grader.codec.values import Symbolic as S
from critpt_grader.compare import Policy, compare_values
from critpt_grader.policy.tolerance import exactness_of_number, is_binary_carrier

BINOMIAL_100_50 = 100891344545564193334812497256


def status(expected, observed, policy: Policy | None = None) -> str:
    return compare_values(expected, observed, policy or Policy()).status


def only_leaf(expected, observed, policy: Policy | None = None):
    (leaf,) = compare_values(expected, observed, policy or Policy()).leaves
    return leaf


def test_the_two_reproductions_are_mismatches():
    assert status(S("binomial(100, 50)"), BINOMIAL_100_50 - 1) == "mismatch"
    assert status(S("12345678901234567890"), 12345678901234567889) == "mismatch"


def test_the_exact_value_itself_passes():
    assert status(S("binomial(100, 50)"), BINOMIAL_100_50) == "equal"
    assert status(S("12345678901234567890"), 12345678901234567890) == "equal"


def test_a_power_compares_exactly():
    assert status(S("2**70"), 2**70 + 1) == "mismatch"
    assert status(S("2**70"), 2**70) == "equal"
    assert status(S("factorial(20)"), math.factorial(20) + 1) == "mismatch"
    assert status(S("factorial(20)"), math.factorial(20)) == "equal"


def test_an_exact_rational_compares_exactly():
    assert status(S("1/3"), Fraction(1, 3)) == "equal"
    assert status(S("1/3"), Fraction(333333333333333333, 10**18)) == "mismatch"
    assert status(Fraction(1, 3), Fraction(3333333333333333, 10**16)) == "mismatch"
    assert status(Fraction(1, 3), Fraction(1, 3)) == "equal"
    assert status(Legacy("1/3"), Fraction(3333333333333333, 10**16)) == "mismatch"
    # a float is judged as a float (the old rule made these mismatches)
    assert status(S("1/3"), 0.3333333333333333) == "equal"
    assert status(Legacy("1/3"), 0.3333333333333333) == "equal"


def test_a_dyadic_rational_meets_its_float_exactly():
    assert status(S("1/2"), 0.5) == "equal"
    assert status(S("3/4"), 0.75) == "equal"


def test_decimals_keep_the_tolerance():
    assert status(S("1.5"), 1.5000000000001) == "equal"
    assert status(S("2.0e3"), 2000.000000001) == "equal"
    assert status(S("0.5 + 2.0*I"), complex(0.5, 2.0000000000001)) == "equal"
    assert status(Legacy("1.5"), 1.5000000000001) == "equal"
    assert status(Legacy("1e3"), 1000.000000001) == "equal"


def test_floats_and_constants_keep_the_tolerance():
    assert status(S("sqrt(2)"), math.sqrt(2)) == "equal"
    assert status(S("pi/3"), math.pi / 3) == "equal"
    assert status(1.5, 1.5000000000001) == "equal"
    assert only_leaf(S("sqrt(2)"), math.sqrt(2)).tolerance.text == "rtol=5e-12 (default)"


def test_an_author_tolerance_still_applies():
    policy = Policy(task_rtol="1e-3")
    assert status(S("binomial(10, 5)"), 252.1, policy) == "equal"
    leaf = only_leaf(S("binomial(10, 5)"), 252.1, policy)
    assert leaf.tolerance.source == "task"
    assert status(S("binomial(10, 5)"), 253, policy) == "mismatch"


def test_a_legacy_integer_compares_exactly():
    n = 12345678901234567890
    assert status(Legacy(str(n)), n - 1) == "mismatch"
    assert status(Legacy(str(n)), n) == "equal"
    assert status(Legacy("2**70"), 2**70 + 1) == "mismatch"  # a legacy expression too


def test_an_int_candidate_equal_to_the_exact_value_passes():
    assert status(S("binomial(10, 5)"), 252) == "equal"
    assert status(S("6/2"), 3) == "equal"


def test_a_float_near_a_small_integer_follows_the_int_rule():
    assert status(6, 6.0) == "equal"  # the plain-int rule
    assert status(S("6"), 6.0) == "equal"
    # one ulp off: a float, judged as a float against either form (the old rule: mismatch)
    assert status(S("6"), 6.000000000000001) == status(6, 6.000000000000001) == "equal"
    assert status(S("6"), 6.0001) == status(6, 6.0001) == "mismatch"


def test_the_reason_says_why_the_leaf_was_exact():
    int_leaf = only_leaf(6, 7)
    assert int_leaf.tolerance.text == "exact (expected an int, no tolerance given)"
    assert int_leaf.reason == "differs by 1; exact (expected an int, no tolerance given)"
    leaf = only_leaf(S("binomial(100, 50)"), BINOMIAL_100_50 - 1)
    assert leaf.tolerance.exact and leaf.tolerance.source == "default"
    assert leaf.tolerance.text == "exact (expected an exact integer, no tolerance given)"
    assert leaf.reason == "differs by 1; exact (expected an exact integer, no tolerance given)"
    rational = only_leaf(S("1/3"), Fraction(1, 4)).tolerance.text
    assert rational == "exact (expected an exact rational, no tolerance given)"
    inexact = only_leaf(S("1/3"), 0.3333333333333333).tolerance.text
    assert inexact == "rtol=5e-12 (default; an inexact answer to an exact rational)"
    assert only_leaf(S("1/3"), Fraction(1, 3)).reason == "identical"


def test_exact_complex_rationals_compare_exactly():
    third = Fraction(1, 3) + Fraction(1, 10**30)
    assert status(S("1/2 + I/3"), ExactComplex(Fraction(1, 2), third)) == "mismatch"
    assert status(S("1/2 + I/3"), ExactComplex(Fraction(1, 2), Fraction(1, 3))) == "equal"
    exact_third = ExactComplex(Fraction(1, 2), Fraction(1, 3))
    assert status(exact_third, ExactComplex(Fraction(1, 2), third)) == "mismatch"
    leaf = only_leaf(S("(1 + I)*(2 - I)"), ExactComplex(3, 1))
    assert leaf.status == "equal" and leaf.reason == "identical"
    text = "exact (expected an exact complex rational, no tolerance given)"
    assert only_leaf(S("1/2 + I/3"), ExactComplex(1, 1)).tolerance.text == text
    # a complex float is judged as a float (the old rule made it a mismatch)
    assert status(S("1/2 + I/3"), complex(0.5, 1 / 3)) == "equal"
    assert status(S("1/2 + I/3"), complex(0.5, 0.3334)) == "mismatch"
    # a complex float keeps the tolerance
    assert status(complex(0.5, 1 / 3), complex(0.5, 0.33333333333333337)) == "equal"


def test_an_extended_precision_binary_value_is_no_exact_rational():
    # numpy longdouble and mpmath mpf beyond binary64 reach the comparator as a Fraction
    # with a power of two below the bar: a float of more digits, compared with the tolerance
    pi_bits = Fraction(math.pi) + Fraction(1, 2**70)
    assert is_binary_carrier(pi_bits)
    assert exactness_of_number(pi_bits) is None
    assert status(pi_bits, math.pi) == "equal"
    assert not is_binary_carrier(Fraction(1, 3))
    assert not is_binary_carrier(Fraction(1, 2))
    assert exactness_of_number(Fraction(1, 2)) == "rational"
    assert exactness_of_number(Fraction(6)) == "integer"
    assert exactness_of_number(6) == "int"
    assert exactness_of_number(True) is None
    assert exactness_of_number(1.5) is None


def test_a_promise_still_applies():
    rounded = Policy(problem="Return the count, rounded to the nearest integer.")
    assert status(S("binomial(10, 5)"), 252.0, rounded) == "equal"
    assert status(S("binomial(10, 5)"), 252.3, rounded) == "mismatch"  # no integer
    assert status(S("binomial(10, 5)"), 253, rounded) == "mismatch"
    places = Policy(problem="Report the answer to 2 decimal places.")
    assert status(S("1/3"), 0.333, places) == "equal"
    named = Policy(
        problem="Return the tuple (mean, count). Report the mean with absolute error below 1e-6."
    )
    expected = (S("1/3"), S("2**70"))
    assert status(expected, (0.3333334, 2**70), named) == "equal"
    assert status(expected, (0.3333334, 2**70 + 1), named) == "mismatch"  # the count: exact


def test_a_promise_about_the_whole_answer_does_not_round_an_exact_integer():
    # as for an int: the answer's precision is no licence to round a count
    problem = "Give all results to 3 decimal places."
    assert status(252, 252.0004, Policy(problem=problem)) == "mismatch"
    assert status(S("binomial(10, 5)"), 252.0004, Policy(problem=problem)) == "mismatch"
    # a non-integer exact rational is no count: the promise applies
    assert status(S("1/3"), 0.3334, Policy(problem=problem)) == "equal"


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=10**12, max_value=10**40), st.integers(min_value=1, max_value=1000))
def test_big_symbolic_integers_compare_exactly(n, d):
    assert status(S(str(n)), n + d) == "mismatch"
    assert status(S(str(n)), n - d) == "mismatch"
    assert status(S(str(n)), n) == "equal"
