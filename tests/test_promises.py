"""Statement promises: every documented phrase, ties to the output, names, ranges."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.compare import Policy, compare_values
from critpt_grader.promises import bind, parse_outputs, read_statement

CRITPT = Path(__file__).resolve().parents[2] / "shared" / "critpt-public"


def _only(problem: str, doc: str | None = None):
    reading = read_statement(problem, doc)
    assert len(reading.clauses) == 1, reading
    return reading.clauses[0]


@pytest.mark.parametrize(
    ("problem", "kind", "value"),
    [
        ("Report E with relative error below 1e-6.", "rel", Fraction(1, 10**6)),
        ("Report E to a relative precision of 10^{-6}.", "rel", Fraction(1, 10**6)),
        ("Give E with a fractional accuracy of 2×10^-5.", "rel", Fraction(2, 10**5)),
        ("Give E with absolute error below 1e-8.", "abs", Fraction(1, 10**8)),
        ("Compute E with an error below 1e-6.", "unknown", Fraction(1, 10**6)),
        ("Report the answer to within 0.1%.", "rel", Fraction(1, 1000)),
        ("Give the result with 1% accuracy.", "rel", Fraction(1, 100)),
        ("Report it to three significant figures.", "rel", Fraction(5, 1000)),
        ("Keep two significant digits in the result.", "rel", Fraction(5, 100)),
        ("Report the answer rounded to 2 decimal places.", "abs", Fraction(5, 1000)),
        ("Compute the energy with four-decimal precision.", "abs", Fraction(5, 10**5)),
        ("Compute the energy with three decimal precision.", "abs", Fraction(5, 10**4)),
        ("Evaluate it, accurate to at least 8 decimal places.", "abs", Fraction(5, 10**9)),
        ("Evaluate it to eight digits after the decimal point.", "abs", Fraction(5, 10**9)),
        ("Find the time T (rounded to the nearest integer).", "abs", Fraction(1, 2)),
        ("Return P (4 decimal places).", "abs", Fraction(5, 10**5)),
    ],
)
def test_documented_phrases(problem, kind, value):
    clause = _only(problem)
    assert (clause.kind, clause.value, clause.honoured) == (kind, value, True)


def test_outputs_docstring_clause_is_always_tied():
    clause = _only("", "energies: list[float]\n    Energies (four-decimal precision).")
    assert clause.honoured and clause.owners == ("energies",)


def test_incidental_number_is_not_tied():
    reading = read_statement("The laser is stable to within 2% over an hour.", None)
    assert reading.clauses == ()
    assert reading.ignored[0].reason == "not_tied_to_the_reported_output"


def test_clause_after_a_comma_so_is_cut_from_the_report_verb():
    problem = "The trap drifts within 2%, so report the energy with relative error below 1e-6."
    reading = read_statement(problem, None)
    assert [c.value for c in reading.clauses] == [Fraction(1, 10**6)]


def test_fenced_code_is_ignored():
    problem = "```\nreport error below 1e-3\n```\nCompute E."
    assert read_statement(problem, None).clauses == ()


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
    assert compare_values(1.0, 1.1, Policy(problem=problem)).status == "mismatch"


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


def test_named_clause_governs_only_its_output():
    doc = "gap: float (4 decimal places)\nratio: float, the ratio\n"
    verdict = compare_values((1.0, 2.0), (1.00004, 2.00004), Policy(output_doc=doc))
    assert [leaf.status for leaf in verdict.leaves] == ["equal", "mismatch"]
    assert verdict.leaves[1].tolerance.source == "default"


def test_statement_clause_names_an_output_key():
    problem = "Report gap to four decimal places and give ratio exactly."
    expected = {"gap": 1.0, "ratio": 2.0}
    verdict = compare_values(expected, {"gap": 1.00004, "ratio": 2.00004}, Policy(problem=problem))
    assert {leaf.path: leaf.status for leaf in verdict.leaves} == {
        "/gap": "equal",
        "/ratio": "mismatch",
    }


def test_blanket_skips_int_leaves():
    problem = "Compute the energy of the ground states with three decimal precision."
    verdict = compare_values((4, 1.25), (4, 1.2504), Policy(problem=problem))
    assert verdict.status == "equal"
    assert compare_values((4, 1.25), (4.0004, 1.25), Policy(problem=problem)).status == "mismatch"


def test_nested_outputs_entries():
    doc = (
        "result: a tuple whose entries are\n"
        '    isolated – "Yes" or "No"\n'
        "    gap      – float (4 decimal places)\n"
    )
    entries = parse_outputs(doc)
    assert entries[0].names == ("result",)
    assert [c.names for c in entries[0].children] == [("isolated",), ("gap",)]
    bound = bind(read_statement("", doc), ("Yes", 0.5))
    assert [(path, clause.value) for path, clause in bound.named] == [("/1", Fraction(5, 10**5))]


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="abcdefghij 0123456789%.,;", max_size=120))
def test_prose_without_report_words_promises_nothing(prose):
    assert read_statement(prose, None).clauses == ()


def test_reading_is_cached():
    assert read_statement(PROMISE_TEXT, None) is read_statement(PROMISE_TEXT, None)


PROMISE_TEXT = "Report E with relative error below 1e-6."


def _challenge(number: int):
    path = CRITPT / "public_test_challenges" / f"Challenge_{number}.json"
    if not path.exists():
        pytest.skip("CritPt public data is not available")
    problem = json.loads(path.read_text())["problems"][0]
    template = problem["code_template"]
    return problem["problem_description"], template[template.find("Output") :]


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (14, {(None, "abs", Fraction(5, 10**4))}),
        (26, {(None, "rel", Fraction(5, 10**3))}),
        (
            46,
            {("energies", "abs", Fraction(5, 10**5)), ("log_overlaps", "abs", Fraction(5, 10**5))},
        ),
        (48, {("F_eta", "abs", Fraction(5, 10**9)), (None, "abs", Fraction(5, 10**9))}),
        (61, {("T", "abs", Fraction(1, 2)), ("P", "abs", Fraction(5, 10**3))}),
    ],
)
def test_real_critpt_statements(number, expected):
    problem, doc = _challenge(number)
    reading = read_statement(problem, doc)
    found = {(c.owners[0] if c.owners else None, c.kind, c.value) for c in reading.clauses}
    assert expected <= found
    assert all(c.honoured for c in reading.clauses)


_NUMBER_WORDS = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=12), st.booleans())
def test_decimal_places_in_digits_or_words(count, as_word):
    written = _NUMBER_WORDS[count - 1] if as_word else str(count)
    clause = _only(f"Report the result to {written} decimal places.")
    assert (clause.kind, clause.value) == ("abs", Fraction(5, 10 ** (count + 1)))


@settings(max_examples=40, deadline=None)
@given(st.decimals(min_value="0.01", max_value="50", places=2))
def test_incidental_percentages_never_become_promises(percent):
    problem = (
        f"The laser power is stable to within {percent}% during the run. "
        "Report the energy with relative error below 1e-6."
    )
    assert [c.value for c in read_statement(problem, None).clauses] == [Fraction(1, 10**6)]
