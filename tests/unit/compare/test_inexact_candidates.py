"""An inexact candidate against an exact expectation is judged as an inexact value is.

The rule (issue 28, class 1): against an exact expected value (an int, a Fraction, exact
symbolic text) an **exact** candidate (an int, a Fraction, text without decimals) compares
exactly under the default tolerance, while an **inexact** candidate (a float or complex, a
Decimal, a number written in decimals) gets the tolerance an inexact expectation would get at
that leaf: the statement's promise, else the author's, else ``rtol=5e-12``. A correct float
then never loses its point because the reference author wrote ``Fraction(1, 5)`` and not
``0.2``; an off-by-one count in exact form is still caught, and a float that is really off
still fails.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from critpt_grader import codec
from critpt_grader.codec.values import ExactComplex, Legacy, WireSet
from critpt_grader.codec.values import Symbolic as S
from critpt_grader.compare import Policy, compare_values
from critpt_grader.compare.reading import exact_candidate

DEFAULT_RTOL = Fraction(5, 10**12)


def status(expected, observed, policy: Policy | None = None) -> str:
    return compare_values(expected, observed, policy or Policy()).status


def only_leaf(expected, observed, policy: Policy | None = None):
    (leaf,) = compare_values(expected, observed, policy or Policy()).leaves
    return leaf


def wire(value):
    """The value as the comparator receives it from a sandbox (encoded, then decoded)."""
    return codec.decode(codec.encode(value))


# --- correct inexact answers pass ----------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        (Fraction(2, 7), 2 / 7),
        (Fraction(1, 10), 0.1),
        (Fraction(-13, 3), -13 / 3),
        (12, 12.000000000000002),  # one ulp above
        (2, math.sqrt(2) ** 2),  # 2.0000000000000004: a square root one ulp off
        (S("1/11"), 1 / 11),
        (S("binomial(60, 30)"), float(math.comb(60, 30))),
        (Legacy("5/12"), 5 / 12),
        (Legacy("40"), 40.00000000000001),
    ],
)
def test_a_float_for_an_exact_value_is_judged_as_a_float(expected, candidate):
    assert status(expected, candidate) == "equal"


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        (Fraction(1, 11), "0.09090909090909091"),  # a string of the float's repr
        (Fraction(1, 3000), "3.3333333333333335e-4"),
        (Fraction(5, 6), Decimal("0.833333333333333")),
        (Fraction(5, 6), S("0.8333333333333334")),  # symbolic decimal text
        (S("5/6"), S("0.8333333333333334")),  # decimal text against exact text
        (Legacy("5/6"), "0.8333333333333334"),
        (9, S("9.000000000000002")),
    ],
)
def test_decimal_text_and_decimals_for_an_exact_value_get_the_tolerance(expected, candidate):
    assert status(expected, candidate) == "equal"


def test_complex_floats_and_decimal_complex_text_for_an_exact_complex_value():
    exact = ExactComplex(Fraction(1, 4), Fraction(-1, 7))
    assert status(exact, complex(0.25, -1 / 7)) == "equal"
    assert status(S("1/4 - I/7"), S("0.25 - 0.14285714285714285*I")) == "equal"
    assert status(S("1/4 - I/7"), "0.25 - 0.14285714285714285*I") == "equal"
    assert status(exact, complex(0.25, -0.142857)) == "mismatch"
    assert status(S("1/4 - I/7"), S("0.25 - 0.142857*I")) == "mismatch"


def test_numpy_and_sympy_floats_from_the_wire():
    np = pytest.importorskip("numpy")
    sympy = pytest.importorskip("sympy")
    assert status(Fraction(3, 7), wire(np.float64(3) / 7)) == "equal"
    thirds = [Fraction(3, 7), Fraction(6, 7)]
    assert status(thirds, wire(np.array([3.0, 6.0]) / 7)) == "equal"
    assert status(Fraction(3, 7), wire(sympy.Float(3) / 7)) == "equal"  # decimal text
    assert status(Fraction(3, 7), wire(sympy.Rational(3, 7))) == "equal"
    # a float32 holds 7 digits: judged as a float, it is still too far from 3/7
    assert status(Fraction(3, 7), wire(np.float32(3) / np.float32(7))) == "mismatch"
    # a longdouble travels as a Fraction with a power-of-two denominator: inexact too
    third = wire(np.longdouble(1) / np.longdouble(3))
    if isinstance(third, Fraction):
        assert not exact_candidate(third, None)
    assert status(Fraction(1, 3), third) == "equal"


def test_exact_values_in_containers_and_sets():
    expected = [3, Fraction(1, 6), {"k": S("2**-5")}]
    assert status(expected, [3.0, 1 / 6, {"k": 0.03125}]) == "equal"
    assert status(expected, [3.0, 1 / 6, {"k": 0.0313}]) == "mismatch"
    members = WireSet((Fraction(1, 3), Fraction(2, 3)))
    assert status(members, [2 / 3, 1 / 3]) == "equal"
    assert status(members, [2 / 3, 0.34]) == "mismatch"


def test_a_huge_int_meets_a_float_as_a_float_and_an_int_exactly():
    n = 3**70
    assert status(n, float(n)) == "equal"  # judged as a float, at rtol 5e-12
    assert status(2**100, 1.2676506002282294e30) == "equal"
    assert status(n, n - 1) == "mismatch"  # exact against exact
    assert status(2**100, 2**100 + 1) == "mismatch"
    assert status(S("3**70"), Fraction(n + 1)) == "mismatch"
    assert status(n, float(n) * (1 + 1e-10)) == "mismatch"


# --- wrong answers still fail --------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        (Fraction(1, 5), 0.2000001),
        (5, 5.00001),
        (Fraction(1, 8), 1 / 9),
        (Fraction(1, 7), "0.14285714"),
        (Fraction(1, 7), S("0.14285714")),
        (S("1/7"), S("0.14285714")),
        (Fraction(1, 7), Decimal("0.1428571")),
        (S("binomial(60, 30)"), float(math.comb(60, 30)) * (1 + 1e-9)),
        (0, 1e-300),  # no width around zero: rtol scales with the expected value
    ],
)
def test_a_float_truly_off_an_exact_value_still_fails(expected, candidate):
    assert status(expected, candidate) == "mismatch"


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        (Fraction(1, 5), Fraction(1, 5) + Fraction(1, 10**20)),
        (Fraction(1, 5), Legacy("20000000000000000001/100000000000000000000")),
        (Fraction(1, 5), "20000000000000000001/100000000000000000000"),
        (S("binomial(60, 30)"), math.comb(60, 30) + 1),
        (S("1/3"), S("333333333333333333/1000000000000000000")),
        (ExactComplex(1, Fraction(1, 3)), ExactComplex(1, Fraction(1, 3) - Fraction(1, 10**25))),
    ],
)
def test_an_exact_candidate_against_an_exact_value_stays_exact(expected, candidate):
    leaf = only_leaf(expected, candidate)
    assert leaf.status == "mismatch"
    # exact text against exact text is decided by proof, with no tolerance at all
    assert leaf.tolerance is None or leaf.tolerance.exact


def test_an_exact_irrational_is_no_rounded_number():
    # symbolic text without decimals is exact whatever its value: near a rational it is
    # decided exactly, never by a width only a rounded number earns
    assert status(Fraction(14142135623730951, 10**16), S("sqrt(2)")) == "mismatch"
    assert status(Fraction(314159265358979, 10**14), S("1.0*pi")) == "mismatch"
    assert status(Fraction(1, 5), S("sqrt(2)/sqrt(50)")) == "equal"  # proved equal


def test_a_boolean_never_equals_an_int_or_a_float():
    assert status(1, True) == "mismatch"
    assert status(Fraction(0), False) == "mismatch"
    assert status(True, 1.0) == "mismatch"


# --- the tolerance an inexact expectation would get there ----------------------------------


def test_the_tolerance_says_the_candidate_was_inexact():
    leaf = only_leaf(Fraction(1, 9), 0.1111111111111111)
    assert leaf.status == "equal"
    assert leaf.tolerance.source == "default" and leaf.tolerance.rtol == DEFAULT_RTOL
    assert leaf.tolerance.text == "rtol=5e-12 (default; an inexact answer to an exact rational)"
    assert only_leaf(7, 7.5).reason.endswith(
        "beyond rtol=5e-12 (default; an inexact answer to an int)"
    )
    exact = only_leaf(7, 8).tolerance
    assert exact.exact and exact.text == "exact (expected an int, no tolerance given)"


def test_the_authors_tolerance_applies_to_either_candidate():
    policy = Policy(task_rtol="1e-4")
    assert status(Fraction(22, 7), 3.1429, policy) == "equal"
    assert status(Fraction(22, 7), Fraction(31429, 10000), policy) == "equal"
    assert status(Fraction(22, 7), 3.15, policy) == "mismatch"
    assert only_leaf(Fraction(22, 7), 3.1429, policy).tolerance.source == "task"


def test_a_named_promise_applies_to_a_float_for_an_exact_value():
    policy = Policy(problem="Return the ratio. Report the ratio with relative error below 1e-4.")
    assert status(Fraction(22, 7), 3.1429, policy) == "equal"
    assert status(Fraction(22, 7), 3.15, policy) == "mismatch"


def test_rounding_to_the_nearest_integer_still_wants_an_integer():
    policy = Policy(problem="Return the number of modes, rounded to the nearest integer.")
    assert status(41, 41.0, policy) == "equal"
    assert status(S("41"), 41, policy) == "equal"
    assert status(41, 41.4, policy) == "mismatch"  # not an integer
    assert status(41, 41.00000000000001, policy) == "mismatch"  # not an integer either
    assert status(41, 42.0, policy) == "mismatch"
    assert only_leaf(41, 41.4, policy).tolerance.integral


def test_a_promise_about_the_whole_answer_never_rounds_an_exact_integer():
    # the promise hears that the expected value is an integer, whatever the candidate is
    policy = Policy(problem="Give all results to 3 decimal places.")
    assert status(17, 17.0004, policy) == "mismatch"
    assert status(S("17"), 17.0004, policy) == "mismatch"
    assert status(17, 17.000000000000004, policy) == "equal"  # the default width
    # a non-integer exact rational is no count: the promise applies to it
    assert status(Fraction(2, 3), 0.6667, policy) == "equal"
    assert status(Fraction(2, 3), 0.668, policy) == "mismatch"


# --- what counts as an inexact candidate ---------------------------------------------------


@pytest.mark.parametrize(
    ("candidate", "exact"),
    [
        (3, True),
        (Fraction(1, 3), True),
        (ExactComplex(1, Fraction(1, 2)), True),
        (0.5, False),
        (complex(1, 2), False),
        (Decimal("0.5"), False),
        (ExactComplex(Decimal("0.5"), 1), False),
        (Fraction(1, 3) + Fraction(1, 2**80), True),  # no power-of-two denominator
        (Fraction(2**80 + 1, 2**80), False),  # an extended-precision binary value
        (Fraction(2**70 + 1), True),  # an integer: exact, whatever could carry it
        (ExactComplex(Fraction(2**70 + 1), 0), True),
    ],
)
def test_exactness_of_a_candidate_number(candidate, exact):
    assert exact_candidate(candidate, None) is exact


# --- properties ----------------------------------------------------------------------------

fractions = st.fractions(max_denominator=10**12).filter(lambda q: q != 0)
bounded = fractions.filter(lambda q: Fraction(1, 10**200) < abs(q) < 10**200)


@settings(max_examples=80, deadline=None)
@given(bounded)
def test_the_nearest_float_of_any_fraction_passes(q):
    assert status(q, float(q)) == "equal"
    assert status(q, repr(float(q))) == "equal"  # its shortest decimal text too


@settings(max_examples=80, deadline=None)
@given(bounded, st.floats(min_value=1e-11, max_value=1e-2), st.booleans())
def test_a_float_beyond_the_tolerance_fails(q, offset, below):
    candidate = float(q * (1 - Fraction(offset) if below else 1 + Fraction(offset)))
    assume(abs(Fraction(candidate) - q) > DEFAULT_RTOL * abs(q))
    assert status(q, candidate) == "mismatch"


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=2**53, max_value=10**60), st.integers(min_value=1, max_value=99))
def test_a_big_int_off_by_a_little_fails_and_its_float_passes(n, d):
    assert status(n, n + d) == "mismatch"
    assert status(S(str(n)), n - d) == "mismatch"
    assert status(n, float(n)) == "equal"


@pytest.mark.parametrize(
    ("expected", "candidate", "verdict"),
    [
        (S("pi"), S("3.141592653589793"), "equal"),
        (S("pi/3"), S("1.0471975511966"), "equal"),
        (S("sqrt(2)"), "1.4142135623730951", "equal"),
        (S("pi"), S("3.1415926"), "mismatch"),
        (S("sqrt(2)"), "1.41421356", "mismatch"),
    ],
)
def test_decimal_text_against_an_exact_constant_is_a_rounded_number(expected, candidate, verdict):
    # decimal text is a rounded number, as a float is: it meets pi with the tolerance a float
    # would get there, never a proof that the two are not the same real number
    assert status(expected, candidate) == verdict
