"""Tolerance precedence: promise > per-leaf entry > task > default (exact for an exact
candidate against an int)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.compare import Policy, compare_values
from critpt_grader.policy.tolerance import (
    AuthorTolerances,
    PromisedPair,
    exact_fraction,
    resolve,
    within,
)
from critpt_grader.tasks.model import LeafTolerance

PROMISE = "Report the energy with relative error below 1e-6."


def _tolerance(verdict, path=""):
    (leaf,) = [leaf for leaf in verdict.leaves if leaf.path == path]
    return leaf.tolerance


def test_default_is_strict_relative():
    verdict = compare_values(1.0, 1.0 + 4e-12, Policy())
    assert verdict.status == "equal"
    assert _tolerance(verdict).source == "default"
    assert _tolerance(verdict).rtol == Fraction(5, 10**12)
    assert compare_values(1.0, 1.0 + 1e-11, Policy()).status == "mismatch"


def test_int_expected_is_exact_without_a_tolerance():
    verdict = compare_values(3, 4, Policy())
    assert verdict.status == "mismatch"
    assert _tolerance(verdict).exact


def test_int_expected_meets_a_float_with_the_default():
    # a float is judged as a float: the default width, not exactness
    verdict = compare_values(3, 3.0000000000001, Policy())
    assert verdict.status == "equal"
    assert _tolerance(verdict).source == "default" and not _tolerance(verdict).exact
    assert compare_values(3, 3.0001, Policy()).status == "mismatch"


def test_int_expected_takes_a_task_tolerance():
    verdict = compare_values(3, 3.001, Policy(task_atol="0.01"))
    assert verdict.status == "equal"
    assert _tolerance(verdict).source == "task"


def test_task_tolerance_beats_default():
    verdict = compare_values(1.0, 1.0 + 1e-10, Policy(task_rtol="1e-9"))
    assert verdict.status == "equal"
    assert _tolerance(verdict).source == "task"
    assert _tolerance(verdict).text == "rtol=1e-9 (task)"


def test_leaf_entry_beats_task():
    policy = Policy(task_rtol="1e-12", leaf_tolerances=(LeafTolerance(path="/1", rtol="1e-3"),))
    verdict = compare_values([1.0, 2.0], [1.0, 2.001], policy)
    assert verdict.status == "equal"
    assert _tolerance(verdict, "/1").source == "leaf"
    assert _tolerance(verdict, "/0").source == "task"


def test_leaf_entry_missing_part_is_strict():
    policy = Policy(leaf_tolerances=(LeafTolerance(path="", atol="0.5"),), task_rtol="0.1")
    tolerance = _tolerance(compare_values(10.0, 10.4, policy))
    assert (tolerance.atol, tolerance.rtol) == (Fraction(1, 2), Fraction(5, 10**12))


def test_promise_beats_leaf_entry_and_task():
    policy = Policy(
        problem=PROMISE, task_rtol="1e-12", leaf_tolerances=(LeafTolerance(path="", rtol="0"),)
    )
    verdict = compare_values(1.0, 1.0000005, policy)
    assert verdict.status == "equal"
    assert _tolerance(verdict).source == "promise"
    assert "relative error below 1e-6" in _tolerance(verdict).text


def test_promise_is_tighter_than_a_loose_author_tolerance():
    verdict = compare_values(1.0, 1.001, Policy(problem=PROMISE, task_rtol="0.01"))
    assert verdict.status == "mismatch"


def test_promise_without_author_is_floored_at_default():
    problem = "Report the energy with relative error below 1e-14."
    verdict = compare_values(1.0, 1.0 + 2e-12, Policy(problem=problem))
    assert verdict.status == "equal"
    assert _tolerance(verdict).source == "default"


def test_scale_guard_drops_absolute_part_wider_than_value():
    problem = "Give the rate to four decimal places."
    verdict = compare_values(3e-6, 0.0, Policy(problem=problem))
    assert verdict.status == "mismatch"
    assert compare_values(3.14159, 3.14161, Policy(problem=problem)).status == "equal"


def test_regression_incidental_percentage_never_widens():
    problem = (
        "The trap frequency is stable to within 2% during the measurement. "
        "Report the ground-state energy with relative error below 1e-6."
    )
    verdict = compare_values(1.0, 1.015, Policy(problem=problem, task_rtol="1e-9"))
    assert verdict.status == "mismatch"
    assert _tolerance(verdict).rtol == Fraction(1, 10**6)
    assert "2%" not in _tolerance(verdict).text


def test_resolve_records_sources():
    author = AuthorTolerances()
    assert resolve(scale=Fraction(1), expected_exact="int", promise=None, author=author).exact
    promised = resolve(
        scale=Fraction(1),
        expected_exact=None,
        promise=PromisedPair(Fraction(1, 1000), Fraction(0), "within 0.1%"),
        author=author,
    )
    assert promised.source == "promise" and promised.rtol == Fraction(1, 1000)


def test_exact_fraction_rejects_bad_text():
    assert exact_fraction("1e-6") == Fraction(1, 10**6)
    for bad in ("-1", "nan", "inf", "abc"):
        with pytest.raises(ValueError):
            exact_fraction(bad)


def test_policy_refuses_bad_tolerance_text():
    with pytest.raises(ValueError):
        Policy(task_rtol="-1")


@settings(max_examples=60, deadline=None)
@given(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300),
)
def test_within_is_the_exact_rational_test(expected, observed):
    tolerance = resolve(
        scale=abs(Fraction(expected)),
        expected_exact=None,
        promise=None,
        author=AuthorTolerances(task_rtol="1e-6", task_atol="1e-9"),
    )
    e, o = Fraction(expected), Fraction(observed)
    assert within(e, o, tolerance, abs(e)) == (
        abs(o - e) <= Fraction(1, 10**9) + Fraction(1, 10**6) * abs(e)
    )
