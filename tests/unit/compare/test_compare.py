"""The per-leaf comparator: every leaf kind, containers, sets, aggregation, symmetry."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.compare import CaseVerdict, LeafVerdict, Policy, compare_expectation
from critpt_grader.compare import compare_values as compare
from critpt_grader.compare.closeness import magnitude, sqrt_interval, within
from critpt_grader.compare.numbers import ExactNumber
from critpt_grader.policy.tolerance import make
from critpt_grader.raised import Raised

# --- scalars ----------------------------------------------------------------------------


def test_int_and_bool_are_exact_and_distinct():
    assert compare(3, 3).status == "equal"
    assert compare(3, 4).status == "mismatch"
    assert compare(True, True).status == "equal"
    assert compare(1, True).status == "mismatch"
    assert compare(True, 1).status == "mismatch"
    assert compare(False, 0.0).status == "mismatch"


def test_numbers_compare_by_value_across_types():
    assert compare(0.5, Fraction(1, 2)).status == "equal"
    assert compare(Fraction(1, 2), Decimal("0.5")).status == "equal"
    assert compare(2, 2.0).status == "equal"
    assert compare(0.1, Decimal("0.1")).status == "equal"  # within the default rtol


def test_float_tolerance_is_exact_in_rationals():
    # the difference is exactly 2**-40; an rtol one unit below it in the last decimal fails
    boundary = "9.094947017729282379150390625e-13"  # 2**-40 written exactly
    below = "9.094947017729282379150390624e-13"
    assert compare(1.0, 1.0 + 2**-40, Policy(task_rtol=boundary)).status == "equal"
    verdict = compare(1.0, 1.0 + 2**-40, Policy(task_rtol=below))
    assert verdict.status == "mismatch"
    assert verdict.leaves[0].kind == "float"
    assert verdict.leaves[0].tolerance.source == "task"


def test_complex_by_modulus():
    policy = Policy(task_rtol="1e-6")
    # imaginary part tiny; the distance is judged against |expected| = 1
    assert compare(complex(1.0, 1e-9), complex(1.0, 5e-7), policy).status == "equal"
    assert compare(complex(1.0, 0.0), complex(1.0, 2e-6), policy).status == "mismatch"
    # an exact complex rational meets an exact candidate exactly by default (as an int
    # does); a complex float is judged as a float (the old rule made it a mismatch)
    near = ExactComplex(1, Fraction(1, 3) + Fraction(1, 10**20))
    assert compare(ExactComplex(1, Fraction(1, 3)), near).status == "mismatch"
    assert compare(ExactComplex(1, Fraction(1, 3)), complex(1.0, 1 / 3)).status == "equal"
    assert compare(ExactComplex(1, Fraction(1, 3)), complex(1.0, 1 / 3), policy).status == "equal"
    assert compare(ExactComplex(1, 0.3333333333333333), complex(1.0, 1 / 3)).status == "equal"
    assert compare(1.0, complex(1.0, 0.0)).leaves[0].status == "equal"


def test_strings_are_categories():
    assert compare("Yes", "Yes").status == "equal"
    assert compare("Yes", "yes").status == "mismatch"
    assert compare("Yes", Symbolic("Yes")).status == "mismatch"


def test_none():
    assert compare(None, None).status == "equal"
    assert compare(None, 0).status == "mismatch"


# --- non-finite -------------------------------------------------------------------------


def test_nonfinite_values():
    inf, nan = math.inf, math.nan
    assert compare(inf, inf).status == "equal"
    assert compare(-inf, -inf).status == "equal"
    assert compare(inf, -inf).status == "mismatch"
    assert compare(inf, 1e308).status == "mismatch"
    assert compare(1.0, inf).status == "mismatch"
    verdict = compare(nan, nan)
    assert verdict.status == "mismatch" and "nan" in verdict.leaves[0].reason
    assert compare(Decimal("Infinity"), inf).status == "equal"
    assert compare(Legacy("inf"), inf).status == "equal"
    assert compare(complex(inf, 0), complex(inf, 0)).status == "equal"
    assert compare(complex(nan, 0), complex(nan, 0)).status == "mismatch"


# --- legacy strings ---------------------------------------------------------------------


def test_legacy_numbers():
    assert compare(Legacy("7/19"), Fraction(7, 19)).status == "equal"
    # an exact rational meets an exact candidate exactly by default (as an int does), and a
    # float with the default tolerance (the old rule made the float a mismatch)
    assert compare(Legacy("7/19"), Fraction(7, 19) + Fraction(1, 10**30)).status == "mismatch"
    assert compare(Legacy("7/19"), 7 / 19).status == "equal"
    assert compare(Legacy("7/19"), 0.368421).status == "mismatch"
    assert compare(Legacy("7/19"), 7 / 19, Policy(task_rtol="1e-12")).status == "equal"
    assert compare(Legacy("0.25"), 0.25).status == "equal"
    assert compare(Legacy("0.25"), "0.25").status == "equal"  # a candidate string is read
    assert compare(Legacy("7"), 7.000001).status == "mismatch"


def test_legacy_categories_compare_exactly():
    for text in ("Yes", "N/A", "ferromagnetic", "A", "Non-trivial"):
        assert compare(Legacy(text), text).status == "equal", text
    assert compare(Legacy("A"), "B").status == "mismatch"
    assert compare(Legacy("N/A"), "n/a").status == "mismatch"
    assert compare(Legacy("Yes"), 1.0).status == "mismatch"


def test_legacy_refused_literals_are_invalid():
    for text in ("[1, 2]", "{'a': 1}", "True", "None", "'x'"):
        verdict = compare(Legacy(text), Legacy(text + " "))
        assert verdict.status == "invalid", text


def test_legacy_relation_is_an_exact_string():
    assert compare(Legacy("x = 1"), "x = 1").status == "equal"
    assert compare(Legacy("x = 1"), "x=1").status == "mismatch"


def test_case_aggregation_and_first_difference():
    leaves = (
        LeafVerdict("/0", "int", "equal", "ok"),
        LeafVerdict("/1", "float", "uncertain", "?"),
        LeafVerdict("/2", "legacy", "invalid", "bad"),
    )
    verdict = CaseVerdict.of(leaves)
    assert verdict.status == "invalid"
    assert verdict.first_difference().path == "/2"
    with_mismatch = CaseVerdict.of((*leaves, LeafVerdict("/3", "int", "mismatch", "no")))
    assert with_mismatch.status == "mismatch"
    assert with_mismatch.first_difference().path == "/3"
    assert CaseVerdict.of(leaves[:1]).first_difference() is None


# --- containers -------------------------------------------------------------------------


def test_sequences():
    assert compare([1, 2.0], (1, 2.0)).status == "equal"  # list vs tuple
    verdict = compare([1, 2], [1, 2, 3])
    assert verdict.status == "mismatch"
    assert "length differs" in verdict.first_difference().reason
    verdict = compare([1.0, [2.0, 3.0]], [1.0, [2.0, 3.5]])
    assert verdict.first_difference().path == "/1/1"
    assert compare([], []).status == "equal"


def test_maps():
    assert compare({"a": 1, "b": 2.0}, {"b": 2.0, "a": 1}).status == "equal"
    verdict = compare({"a": 1, "b": 2}, {"a": 1, "c": 2})
    assert verdict.status == "mismatch"
    assert "missing key 'b'" in verdict.leaves[0].reason
    assert "extra key 'c'" in verdict.leaves[0].reason
    assert compare({"a/b": 1.0}, {"a/b": 2.0}).first_difference().path == "/a~1b"


def test_shape_mismatch_is_a_structure_leaf():
    verdict = compare([1, 2], {"a": 1})
    assert verdict.leaves[0].kind == "structure"
    assert compare(1.0, [1.0]).status == "mismatch"


def test_sets_match_one_to_one():
    assert compare(WireSet((1, 2, 3)), WireSet((3, 1, 2))).status == "equal"
    assert compare(WireSet((1, 2, 3)), [2, 3, 1]).status == "equal"
    # An ordered expectation is not met by a set: the set carries no order to check.
    assert compare([1, 2, 3], WireSet((1, 2, 3))).status == "mismatch"
    assert (
        compare(
            [1, 2, 3], WireSet((2, 3, 1)), Policy(problem="Return the levels in any order.")
        ).status
        == "equal"
    )
    assert compare(WireSet((1, 1, 2)), WireSet((1, 2, 2))).status == "mismatch"
    assert compare(WireSet((1, 2)), WireSet((1, 2, 3))).status == "mismatch"
    tuples = WireSet(((431, "sigma"), (470, "pi")))
    assert compare(tuples, WireSet(((470, "pi"), (431, "sigma")))).status == "equal"
    assert compare(tuples, WireSet(((470, "sigma"), (431, "pi")))).status == "mismatch"


def test_set_matching_needs_augmenting_paths():
    # greedy matching of 1.0 to the first close member would fail; a perfect one exists
    policy = Policy(task_atol="0.15")
    expected = WireSet((1.0, 1.2))
    assert compare(expected, WireSet((1.1, 1.3)), policy).status == "equal"


def test_invalid_pair_does_not_defeat_a_valid_matching():
    expected = WireSet((Legacy("1/2"), Legacy("Yes")))
    observed = WireSet(("Yes", 0.5))
    assert compare(expected, observed).status == "equal"


def test_set_with_only_an_uncertain_matching_is_uncertain():
    expected = WireSet((Symbolic("sqrt(2)"),))
    observed = WireSet((1.4142135623730951,))
    # numeric constant against a float: decided by the tolerance, so equal
    assert compare(expected, observed).status == "equal"


# --- exceptions -------------------------------------------------------------------------


def test_exception_expectations():
    value_error = Raised(
        "builtins", "ValueError", True, ("ValueError", "Exception", "BaseException")
    )
    assert (
        compare_expectation("exception", "ValueError", "exception", value_error).status == "equal"
    )
    # A raise with nothing known of its class, or no expected type, never passes.
    assert compare_expectation("exception", "ValueError", "exception", None).status == "mismatch"
    assert compare_expectation("exception", None, "exception", value_error).status == "mismatch"
    verdict = compare_expectation("exception", "ValueError", "value", 1.0)
    assert verdict.status == "mismatch" and verdict.leaves[0].kind == "exception"
    assert compare_expectation("value", 1.0, "exception", None).status == "mismatch"
    assert compare_expectation("value", 1.0, "value", 1.0).status == "equal"


def test_renderings_are_short():
    verdict = compare(list(range(500)), list(range(1, 501)))
    assert all(len(leaf.expected) <= 200 and len(leaf.observed) <= 200 for leaf in verdict.leaves)


# --- properties -------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    st.fractions(max_denominator=10**6),
    st.decimals(allow_nan=False, places=6),
    st.complex_numbers(allow_nan=False, max_magnitude=1e200),
    st.text(max_size=8),
    st.sampled_from([Legacy("7/19"), Legacy("Yes"), Legacy("0.25"), Legacy("inf")]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=4), inner, max_size=3),
        st.lists(inner, max_size=3).map(lambda items: WireSet(tuple(items))),
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(_values)
def test_identical_values_are_equal(value):
    assert compare(value, value).status == "equal"


_numbers = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, min_value=-1e12, max_value=1e12),
    st.sampled_from([math.inf, -math.inf]),
    st.fractions(max_denominator=1000),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_numbers, min_size=1, max_size=4),
    st.lists(_numbers, min_size=1, max_size=4),
)
def test_symmetric_without_tolerance_asymmetry(a, b):
    # atol only: the test |a-b| <= atol does not depend on which side is expected
    policy = Policy(task_rtol="0", task_atol="0.001")
    assert compare(a, b, policy).status == compare(b, a, policy).status
    assert (
        compare(WireSet(tuple(a)), b, policy).status == compare(WireSet(tuple(b)), a, policy).status
    )


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(min_value=0, max_value=0.5))
def test_float_within_rtol_passes_and_far_fails(value, fraction):
    policy = Policy(task_rtol="1e-6")
    near = value * (1 + 1e-7)
    if math.isfinite(near):
        assert compare(value, near, policy).status == "equal"
    far = value + abs(value) * 1e-3 + 1e-300
    if math.isfinite(far) and far != value:
        assert compare(value, far, policy).status == "mismatch"


@pytest.mark.parametrize("nan", [math.nan, Decimal("NaN"), complex(math.nan, 1)])
def test_nan_is_never_equal(nan):
    assert compare(nan, nan).status == "mismatch"


@settings(max_examples=60, deadline=None)
@given(st.lists(_scalars, max_size=6), st.randoms(use_true_random=False))
def test_set_verdict_ignores_member_order(members, rng):
    shuffled = list(members)
    rng.shuffle(shuffled)
    assert compare(WireSet(tuple(members)), WireSet(tuple(shuffled))).status == "equal"


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=5), _numbers, max_size=5))
def test_map_verdict_ignores_key_order(mapping):
    reordered = dict(reversed(list(mapping.items())))
    assert compare(mapping, reordered).status == "equal"


@settings(max_examples=80, deadline=None)
@given(st.fractions(max_denominator=10**9))
def test_legacy_fraction_text_reads_exactly(value):
    assert compare(Legacy(str(value)), value).status == "equal"
    nudged = value + (abs(value) + 1) * Fraction(1, 10**9)
    assert compare(Legacy(str(value)), nudged).status == "mismatch"


def test_reasons_name_the_difference():
    verdict = compare(2, 3)
    assert verdict.leaves[0].reason.startswith("differs by 1;")
    verdict = compare(1.0, 1.5, Policy(task_rtol="1e-3"))
    assert "beyond rtol=0.001 (task)" in verdict.leaves[0].reason


# --- complex tolerance: the modulus ------------------------------------------------------------


def test_complex_numbers_are_within_tolerance_by_modulus():
    policy = Policy(task_rtol="1e-6")
    # off by 0.8e-6 in both parts: each part is within 1e-6, the distance (1.13e-6) is not
    assert compare(1.0, complex(1 + 8e-7, 8e-7), policy).status == "mismatch"
    # |expected| = sqrt(2): a distance of 1.3e-6 is within 1e-6*sqrt(2) = 1.41e-6
    assert compare(complex(1, 1), complex(1 + 1.3e-6, 1), policy).status == "equal"
    assert compare(complex(1, 1), complex(1 + 1.5e-6, 1), policy).status == "mismatch"
    verdict = compare(complex(0, 2), complex(0, 2 + 1.9e-6), policy)
    assert verdict.status == "equal" and verdict.leaves[0].kind == "complex"


def test_the_modulus_test_is_exact_at_the_boundary():
    # |3+4i| = 5 exactly: atol 1e-3 + rtol 1e-3 * 5 = 6e-3
    tolerance = make(Fraction(1, 1000), Fraction(1, 1000), "task")
    expected = ExactNumber(Fraction(3), Fraction(4))
    on = ExactNumber(Fraction(3) + Fraction(36, 10000), Fraction(4) + Fraction(48, 10000))
    past = ExactNumber(on.re + Fraction(1, 10**40), on.im)
    assert within(expected, on, tolerance) == "equal"  # distance exactly 6e-3
    assert within(expected, past, tolerance) == "mismatch"
    assert magnitude(expected) == 5


@settings(max_examples=300, deadline=None)
@given(
    st.fractions(min_value=-100, max_value=100),
    st.fractions(min_value=-100, max_value=100),
    st.fractions(min_value=-1, max_value=1),
    st.fractions(min_value=-1, max_value=1),
    st.sampled_from(["0", "1e-6", "0.01", "0.5"]),
    st.sampled_from(["0", "1e-9", "0.001", "0.3"]),
)
def test_modulus_test_matches_the_definition(er, ei, dr, di, rtol, atol):
    tolerance = make(Fraction(rtol), Fraction(atol), "task")
    expected = ExactNumber(er, ei)
    observed = ExactNumber(er + dr, ei + di)
    outcome = within(expected, observed, tolerance)
    distance = abs(complex(float(dr), float(di)))
    bound = float(tolerance.atol) + float(tolerance.rtol) * abs(complex(float(er), float(ei)))
    if abs(distance - bound) > 1e-9 * max(1.0, bound):  # away from float rounding
        assert outcome == ("equal" if distance <= bound else "mismatch")
    # with an error bound on a side, an outcome is never the wrong one
    blurred = ExactNumber(observed.re, observed.im, Fraction(1, 10**30))
    assert within(expected, blurred, tolerance) in {outcome, "uncertain"}


@given(st.fractions(min_value=0, max_value=10**6))
def test_sqrt_interval_brackets_the_root(square):
    low, high = sqrt_interval(square)
    assert low * low <= square <= high * high
    assert high - low <= Fraction(1, 2**190) * max(high, Fraction(1, 10**30)) or square == 0
