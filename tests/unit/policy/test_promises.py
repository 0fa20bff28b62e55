"""Statement promises: every documented phrase and what it means at a leaf, ranges, the
tightest-wins rule, notes for leaves without a promise, and real CritPt statements."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import get_args

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from critpt_grader.compare import Policy, compare_values
from critpt_grader.policy.promises import (
    NUMBER_WORDS,
    Clause,
    Meaning,
    PromiseReading,
    bind,
    read_promises,
)
from tests.support.paths import CRITPT_PUBLIC

CRITPT = CRITPT_PUBLIC
ALL_MEANINGS = set(get_args(Meaning))


def _only(problem: str, doc: str | None = None):
    reading = read_promises(problem, doc)
    assert len(reading.clauses) == 1, reading.clauses
    return reading.clauses[0]


@pytest.mark.parametrize(
    ("problem", "meaning", "value"),
    [
        ("Report E with relative error below 1e-6.", "rel", Fraction(1, 10**6)),
        ("Report E to a relative precision of 10^{-6}.", "rel", Fraction(1, 10**6)),
        ("Give E with a fractional accuracy of 2×10^-5.", "rel", Fraction(2, 10**5)),
        ("Report E with 1e-6 relative error.", "rel", Fraction(1, 10**6)),
        ("Report E with relative error below 10⁻⁶.", "rel", Fraction(1, 10**6)),
        ("Give E with absolute error below 1e-8.", "abs", Fraction(1, 10**8)),
        ("Give E with an absolute accuracy of 0.001.", "abs", Fraction(1, 1000)),
        ("Compute E with an error below 1e-6.", "either", Fraction(1, 10**6)),
        ("Report the answer to within 0.1%.", "rel", Fraction(1, 1000)),
        ("Give the result with 1% accuracy.", "rel", Fraction(1, 100)),
        ("Give the result with an error below 0.5%.", "rel", Fraction(5, 1000)),
        ("Report it to three significant figures.", "sig", Fraction(3)),
        ("Keep two significant digits in the result.", "sig", Fraction(2)),
        ("Give the result to 6 sig figs.", "sig", Fraction(6)),
        ("Give the result to 10 significant decimal digits.", "sig", Fraction(10)),
        ("Give the result with 8 digits of precision.", "sig", Fraction(8)),
        ("Return the value, accurate to 7 digits.", "sig", Fraction(7)),
        ("Report the answer rounded to 2 decimal places.", "dec", Fraction(2)),
        ("Compute the energy with four-decimal precision.", "dec", Fraction(4)),
        ("Compute the energy with three decimal precision.", "dec", Fraction(3)),
        ("Evaluate it, accurate to at least 8 decimal places.", "dec", Fraction(8)),
        ("Evaluate it to eight digits after the decimal point.", "dec", Fraction(8)),
        ("Calculate it to three significant decimal places.", "dec", Fraction(3)),
        ("Give the answer to the nearest hundredth.", "dec", Fraction(2)),
        ("Find the time T (rounded to the nearest integer).", "int", Fraction(1, 2)),
        ("Return P (4 decimal places).", "dec", Fraction(4)),
        ("What is the energy E (allowing $\\pm 0.5$ error)?", "abs", Fraction(1, 2)),
        ("Report E with an error of ±0.02.", "abs", Fraction(2, 100)),
        ("Report E (allowing ±2% error).", "rel", Fraction(2, 100)),
    ],
)
def test_documented_phrases(problem, meaning, value):
    clause = _only(problem)
    assert (clause.meaning, clause.value, clause.honoured) == (meaning, value, True)


# --- what the phrases mean at a leaf ------------------------------------------------------


def _status(problem, expected, observed, doc=None):
    return compare_values(expected, observed, Policy(problem=problem, output_doc=doc)).status


def _tolerance(problem, expected, path=""):
    verdict = compare_values(expected, expected, Policy(problem=problem))
    return next(leaf.tolerance for leaf in verdict.leaves if leaf.path == path)


SIG4 = "Report the result to 4 significant figures."


@pytest.mark.parametrize(
    ("expected", "atol"),
    [
        (1.0, Fraction(5, 10**4)),  # mantissa 1: half a unit in the 4th digit is 5e-4
        (1.2345, Fraction(5, 10**4)),
        (9.9996, Fraction(5, 10**4)),  # mantissa near 10: the same 5e-4, i.e. 5e-5 relative
        (950.37, Fraction(5, 10**2)),
        (0.99996, Fraction(5, 10**5)),  # just below 1: one decade lower
        (1e-7, Fraction(5, 10**11)),
        (-3.5e8, Fraction(5, 10**4) * 10**8),
    ],
)
def test_significant_figures_are_half_a_unit_of_the_expected_value(expected, atol):
    tolerance = _tolerance(SIG4, expected)
    assert (tolerance.rtol, tolerance.atol, tolerance.source) == (0, atol, "promise")


def test_significant_figures_near_mantissa_ten_are_not_ten_times_looser():
    # rtol 5e-4 (the old reading) would let 950.37 ± 0.475 pass; half a unit is 0.05
    assert _status(SIG4, 950.37, 950.4) == "equal"
    assert _status(SIG4, 950.37, 950.5) == "mismatch"
    assert _status(SIG4, 9.9996, 10.00) == "equal"  # rounds to 10.00 (4 s.f.)
    assert _status(SIG4, 9.9996, 9.9990) == "mismatch"
    assert _status(SIG4, 1.0004, 1.000) == "equal"
    assert _status(SIG4, 0.99996, 1.000) == "equal"  # 0.99996 to 4 s.f. is 1.000
    assert _status(SIG4, 0.99996, 0.99990) == "mismatch"


def test_significant_figures_of_zero_give_nothing():
    verdict = compare_values(0.0, 1e-13, Policy(problem=SIG4))
    assert verdict.status == "mismatch"
    tolerance = verdict.leaves[0].tolerance
    assert tolerance.source == "default" and "gives nothing here" in tolerance.text


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=9),
    st.floats(min_value=1.0, max_value=9.999, allow_nan=False),
    st.integers(min_value=-6, max_value=6),
)
def test_a_value_rounded_to_n_significant_figures_passes(n, mantissa, exponent):
    expected = mantissa * 10.0**exponent
    rounded = float(f"{expected:.{n - 1}e}")
    # A tie (0.0015 to one figure) is exactly half a unit from both neighbours, and the
    # binary floats then fall on either side of that bound: no claim about those.
    exact = Decimal(expected)
    digits = exact.scaleb(n - 1 - exact.adjusted())  # n digits before the point
    assume(abs(digits % 1 - Decimal("0.5")) > Decimal("1e-6"))
    problem = f"Give the result to {n} significant figures."
    assert _status(problem, expected, rounded) == "equal"


def test_decimal_places_are_half_a_unit_in_the_last_decimal():
    problem = "Report the result to 3 decimal places."
    assert _tolerance(problem, 2.5).atol == Fraction(5, 10**4)
    assert _status(problem, 2.71828, 2.718) == "equal"
    assert _status(problem, 2.71828, 2.7188) == "mismatch"


def test_rounded_to_the_nearest_integer_compares_with_the_expected_value_rounded():
    problem = "Find the number of steps, rounded to the nearest integer."
    assert _status(problem, 120, 120) == "equal"
    assert _status(problem, 120, 120.0) == "equal"
    assert _status(problem, 120.3, 120) == "equal"  # the expected value rounded
    assert _status(problem, 120.0, 119.7) == "mismatch"  # not rounded: no integer
    assert _status(problem, 120, 120.4) == "mismatch"
    assert _status(problem, 120.3, 121) == "mismatch"
    verdict = compare_values(120.3, 120.4, Policy(problem=problem))
    assert "not an integer" in verdict.leaves[0].reason


def test_rounded_integer_keeps_its_width_at_zero():
    assert _status("Return n rounded to the nearest integer.", 0.3, 0) == "equal"
    assert _status("Return n rounded to the nearest integer.", 0, 0.3) == "mismatch"


def test_unqualified_error_takes_the_tighter_reading():
    problem = "Compute E with an error below 1e-3."
    large = _tolerance(problem, 50.0)
    small = _tolerance(problem, 0.02)
    assert (large.rtol, large.atol) == (0, Fraction(1, 1000))  # absolute is tighter here
    assert (small.rtol, small.atol) == (Fraction(1, 1000), 0)  # relative is tighter here


def test_plus_minus_after_a_quantity_is_absolute_for_that_quantity_only():
    problem = (
        "What are the critical Rayleigh number (allowing $\\pm 0.5$ error) and the critical "
        "wavenumber (allowing $\\pm 0.02$ error)?"
    )
    doc = "Ra_c: float, critical Rayleigh number\nk_c: float, critical wavenumber"
    assert _status(problem, (1707.762, 3.117), (1708.1, 3.117), doc) == "equal"
    assert _status(problem, (1707.762, 3.117), (1707.762, 3.14), doc) == "mismatch"
    assert _status(problem, (1707.762, 3.117), (1707.762, 3.13), doc) == "equal"
    # the Rayleigh number's ±0.5 is not lent to the wavenumber
    assert _status(problem, (1707.762, 3.117), (1707.762, 3.5), doc) == "mismatch"


# --- ranges --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "reason"),
    [
        ("Report E with relative error below 1e-17.", "below_float64_resolution"),
        ("Report E to within 20%.", "too_loose_to_be_an_accuracy_claim"),
    ],
)
def test_values_outside_range_are_not_honoured(problem, reason):
    clause = _only(problem)
    assert not clause.honoured and clause.reason == reason
    verdict = compare_values(1.0, 1.1, Policy(problem=problem))
    assert verdict.status == "mismatch"
    assert "not honoured" in verdict.leaves[0].tolerance.text


# --- several clauses, several outputs -------------------------------------------------------


def test_the_tighter_clause_wins_on_one_output():
    problem = "Give all results to 2 decimal places. Report the gap to 6 decimal places."
    doc = "gap: float, the gap\nwidth: float, the width"
    tolerance = compare_values((1.0, 2.0), (1.0, 2.0), Policy(problem, doc)).leaves
    assert [t.tolerance.atol for t in tolerance] == [Fraction(5, 10**7), Fraction(5, 10**3)]


def test_named_clause_governs_only_its_output():
    doc = "gap: float (4 decimal places)\nratio: float, the ratio\n"
    verdict = compare_values((1.0, 2.0), (1.00004, 2.00004), Policy(output_doc=doc))
    assert [leaf.status for leaf in verdict.leaves] == ["equal", "mismatch"]
    assert verdict.leaves[1].tolerance.source == "default"
    assert "'4 decimal places' is for gap" in verdict.leaves[1].tolerance.text


def test_statement_clause_names_an_output_key():
    problem = "Report gap to four decimal places and give ratio exactly."
    expected = {"gap": 1.0, "ratio": 2.0}
    verdict = compare_values(expected, {"gap": 1.00004, "ratio": 2.00004}, Policy(problem=problem))
    assert {leaf.path: leaf.status for leaf in verdict.leaves} == {
        "/gap": "equal",
        "/ratio": "mismatch",
    }


def test_a_clause_about_the_answer_skips_int_leaves():
    problem = "Give all numerical results with three decimal precision."
    assert _status(problem, (4, 1.25), (4, 1.2504)) == "equal"
    assert _status(problem, (4, 1.25), (4.0004, 1.25)) == "mismatch"


def test_docstring_names_map_to_tuple_positions():
    doc = (
        "T: int, evolution time T (rounded to the nearest integer)\n"
        "P: float, achievable probability P (with two decimal places)\n"
    )
    policy = Policy(output_doc=doc)
    assert compare_values((120, 0.25), (120, 0.254), policy).status == "equal"
    assert compare_values((120, 0.25), (121, 0.25), policy).status == "mismatch"
    verdict = compare_values((120, 0.25), (120, 0.26), policy)
    assert verdict.status == "mismatch"
    assert verdict.first_difference().path == "/1"


def test_nested_outputs_entries():
    doc = (
        "result: a tuple whose entries are\n"
        '    isolated – "Yes" or "No"\n'
        "    gap      – float (4 decimal places)\n"
    )
    bound = bind(read_promises("", doc), ("Yes", 0.5))
    assert [(p.paths, p.clause.value) for p in bound.placed] == [(("/1",), Fraction(4))]


# --- what the tolerance says ----------------------------------------------------------------


def test_promise_tolerance_names_the_clause_and_the_output():
    doc = "T: int, evolution time\nP: float, probability"
    problem = "Find T and the probability $P$ (to two decimal places)."
    verdict = compare_values((3, 0.5), (3, 0.5), Policy(problem, doc))
    assert verdict.leaves[1].tolerance.text == "atol=0.005 (promise: 'two decimal places' for P)"


def test_unread_precision_wording_is_reported_as_no_promise_read():
    verdict = compare_values(1.0, 1.001, Policy(problem="Please be as accurate as possible."))
    leaf = verdict.leaves[0]
    assert leaf.status == "mismatch"
    assert "no promise read: 'Please be as accurate as possible.'" in leaf.reason


def test_a_decoy_says_why_it_set_nothing():
    problem = "The coupling J is known to within 0.5%. Compute the energy."
    verdict = compare_values(1.0, 1.001, Policy(problem=problem))
    text = verdict.leaves[0].tolerance.text
    assert verdict.status == "mismatch"
    assert "no promise read for this output" in text and "'The coupling J' is described" in text


def test_no_note_without_precision_wording():
    verdict = compare_values(1.0, 1.0, Policy(problem="Compute the energy."))
    assert verdict.leaves[0].tolerance.text == "rtol=5e-12 (default)"


# --- properties ---------------------------------------------------------------------------


def test_fenced_code_is_ignored():
    problem = "```\nreport error below 1e-3\n```\nCompute E."
    assert read_promises(problem, None).clauses == ()


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="abcdefghij 0123456789%.,;", max_size=120))
def test_prose_without_report_words_promises_nothing(prose):
    reading = read_promises(prose, None)
    assert bind(reading, 1.0).placed == ()


def test_reading_is_cached():
    assert read_promises(PROMISE_TEXT, None) is read_promises(PROMISE_TEXT, None)


PROMISE_TEXT = "Report E with relative error below 1e-6."

_NUMBER_WORDS = NUMBER_WORDS[1:]  # "one" first: a count of 1 is written "one"


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=12), st.booleans())
def test_decimal_places_in_digits_or_words(count, as_word):
    written = _NUMBER_WORDS[count - 1] if as_word else str(count)
    clause = _only(f"Report the result to {written} decimal places.")
    assert (clause.meaning, clause.value) == ("dec", Fraction(count))


@settings(max_examples=40, deadline=None)
@given(st.decimals(min_value="0.01", max_value="50", places=2))
def test_incidental_percentages_never_become_promises(percent):
    problem = (
        f"The laser power is stable to within {percent}% during the run. "
        "Report the energy with relative error below 1e-6."
    )
    bound = bind(read_promises(problem, None), 1.0)
    assert [p.clause.value for p in bound.placed] == [Fraction(1, 10**6)]


# --- real CritPt statements -----------------------------------------------------------------


def _challenge(number: int):
    path = CRITPT / "public_test_challenges" / f"Challenge_{number}.json"
    if not path.exists():
        pytest.skip("CritPt public data is not available")
    from critpt_grader.tasks import load_tasks

    (task,) = load_tasks(path)
    return task


@pytest.mark.parametrize(
    ("number", "expected", "bound"),
    [
        (14, 1.0, {"": ("dec", 3)}),
        (26, 1.0, {"": ("sig", 3)}),
        (31, (1707.76, 3.117), {"/0": ("abs", Fraction(1, 2)), "/1": ("abs", Fraction(1, 50))}),
        (32, (1.0, 2.0, 3.0), {"/0": ("abs", Fraction(1, 20)), "/1": ("abs", Fraction(1, 50))}),
        (44, (2, 1, -1.5), {"/2": ("dec", 3)}),
        (48, 1.0, {"": ("dec", 8)}),
        (61, (120, 0.25), {"/0": ("int", Fraction(1, 2)), "/1": ("dec", 2)}),
    ],
)
def test_real_critpt_statements(number, expected, bound):
    task = _challenge(number)
    placed = bind(read_promises(task.problem, task.output_doc), expected).placed
    found: dict[str, set] = {}
    for item in placed:
        for path in item.paths or ("",):
            found.setdefault(path, set()).add((item.clause.meaning, item.clause.value))
    assert set(found) == set(bound)
    for path, (meaning, value) in bound.items():
        assert (meaning, Fraction(value)) in found[path]


def test_critpt_32_leaves_the_third_output_at_the_default():
    task = _challenge(32)
    policy = Policy(problem=task.problem, output_doc=task.output_doc)
    verdict = compare_values((1707.76, 3.117, 0.25), (1707.76, 3.117, 0.2501), policy)
    assert [leaf.tolerance.source for leaf in verdict.leaves] == ["promise", "promise", "default"]
    assert verdict.status == "mismatch"


# The public challenges whose statements carry a precision clause the reader reads today.
READ_IN_PUBLIC = {6, 14, 17, 26, 27, 31, 32, 37, 41, 44, 46, 47, 48, 52, 54, 55, 56, 61, 63}


@pytest.mark.slow  # reads all 70 public statements: ~10 s
def test_every_critpt_statement_reads():
    folder = CRITPT / "public_test_challenges"
    if not folder.exists():
        pytest.skip("CritPt public data is not available")
    paths = sorted(folder.glob("Challenge_*.json"))
    assert len(paths) >= 70
    with_clauses, meanings = set(), set()
    for path in paths:
        problem = json.loads(path.read_text())["problems"][0]
        text, doc = problem["problem_description"], problem["code_template"]
        reading = read_promises(text, doc)
        assert isinstance(reading, PromiseReading), path.name
        assert (reading.statement.problem, reading.statement.output_doc) == (text, doc)
        for clause in reading.clauses:
            where = (path.name, clause.phrase)
            assert isinstance(clause, Clause), where
            assert clause.meaning in ALL_MEANINGS and clause.value > 0, where
            assert clause.source in ("statement", "outputs"), where
            assert clause.phrase and clause.phrase in clause.sentence, where
            assert clause.honoured == (clause.reason == ""), where
            meanings.add(clause.meaning)
            if clause.meaning in ("sig", "dec"):
                assert clause.value.denominator == 1, where  # a digit count
        for cue in reading.cues:
            assert cue.target.mood in ("directive", "docstring"), (path.name, cue.text)
        if reading.clauses:
            with_clauses.add(int(path.stem.removeprefix("Challenge_")))
    assert with_clauses >= READ_IN_PUBLIC
    assert {"dec", "sig", "abs", "int"} <= meanings


def test_an_equal_leaf_names_its_tolerance_in_its_reason():
    verdict = compare_values(1.0, 1.0 + 1e-13, Policy(problem="Please be as accurate as possible."))
    assert verdict.status == "equal"
    assert verdict.leaves[0].reason.startswith("within rtol=5e-12 (default; no promise read")
    promised = compare_values(2.0, 2.0004, Policy(problem="Report it to 3 decimal places."))
    assert (
        promised.leaves[0].reason
        == "within atol=0.0005 (promise: '3 decimal places' for the answer)"
    )
