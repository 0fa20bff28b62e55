"""Reading the statement, round two: units in promises, the wordings physicists use, clauses
about something else, and the plainest promises. Examples written for the issue; each names
the rule it checks."""

from __future__ import annotations

import dataclasses

import pytest

from critpt_grader.compare import Policy, compare_values
from critpt_grader.policy.explain import explain
from critpt_grader.policy.promises import read_promises
from critpt_grader.tasks import load_tasks
from tests.support.paths import PUBLIC_TASKS as PUBLIC


def verdict(problem: str, expected, observed, doc: str | None = None):
    return compare_values(expected, observed, Policy(problem=problem, output_doc=doc))


def status(problem: str, expected, observed, doc: str | None = None) -> str:
    return verdict(problem, expected, observed, doc).status


# --- a promise's width is a quantity ------------------------------------------------------------

GAP = "Give the gap in eV, with an absolute error below 0.5 meV."


def test_a_width_in_another_unit_is_converted_to_the_outputs_unit():
    assert status(GAP, 1.234, 1.5) == "mismatch"  # read as 0.5 eV it passed
    assert status(GAP, 1.234, 1.2342) == "equal"
    assert status(GAP, 1.234, 1.2346) == "mismatch"
    reason = verdict(GAP, 1.234, 1.2342).leaves[0].reason
    assert "atol=0.0005" in reason and "0.5 meV = 0.0005 eV" in reason


@pytest.mark.parametrize(
    ("problem", "expected", "inside", "outside"),
    [
        ("Return the temperature in K with an absolute error below 2 mK.", 0.15, 0.1515, 0.153),
        ("Return the splitting in meV to within 3 µeV.", 1.0, 1.002, 1.004),
        ("Return the splitting in meV to within 3 ueV.", 1.0, 1.002, 1.004),
        ("Return the frequency in GHz with an absolute error below 20 MHz.", 5.0, 5.015, 5.03),
        ("Return the energy in eV with an absolute error below 1 mHa.", -13.6, -13.62, -13.64),
        ("Give the field in T, with an absolute error below 0.2 mT.", 1.0, 1.0001, 1.0003),
        ("Return the frequency ratio within 1 ppm.", 1.0, 1.0000005, 1.000002),
        ("Return the gap (eV) with absolute error < 0.5 meV.", 1.234, 1.2342, 1.5),
        ("Give the energy [meV] to within 3 µeV.", 1.0, 1.002, 1.004),
        ("Give the energy (in meV) to within ±3 µeV.", 1.0, 1.002, 1.004),
        ("Return the frequency ratio within 20 ppb.", 1.0, 1.00000001, 1.00000003),
        ("Return the ratio to within 5 parts per million.", 2.0, 2.000009, 2.000011),
    ],
)
def test_units_and_ratios_in_promises(problem, expected, inside, outside):
    assert status(problem, expected, inside) == "equal"
    assert status(problem, expected, outside) == "mismatch"


@pytest.mark.parametrize(
    ("problem", "why"),
    [
        ("Give the gap, with an absolute error below 0.5 meV.", "names no unit"),
        ("Give the gap in eV or in meV, with an absolute error below 0.5 meV.", "may be in"),
        ("Give the gap in eV, with a relative error below 0.5 meV.", "no unit"),
        ("Give the length in m, with an absolute error below 0.5 meV.", "names no unit"),
    ],
)
def test_a_unit_that_cannot_be_put_in_the_outputs_unit_loosens_nothing(problem, why):
    """'unit not understood': the default applies, and the reason says why."""
    found = verdict(problem, 1.234, 1.2342)
    assert found.status == "mismatch"  # the default rtol, not a loosened width
    (clause,) = read_promises(problem, None).clauses
    assert not clause.honoured and clause.reason == "unit_not_understood"
    assert why in clause.unit_note


def test_percentage_points_are_absolute_in_percent_units():
    problem = "Return the efficiency in percent, within 0.5 percentage points."
    assert status(problem, 40.0, 40.4) == "equal"  # read as relative 0.5% it failed
    assert status(problem, 40.0, 40.6) == "mismatch"
    fraction = "Return the efficiency as a fraction, within 0.5 percentage points."
    assert status(fraction, 0.4, 0.404) == "equal"
    assert status(fraction, 0.4, 0.406) == "mismatch"
    unknown = "Return the efficiency within 0.5 percentage points."
    assert status(unknown, 0.4, 0.404) == "mismatch"  # the scale is not said: no loosening


# --- wordings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "expected", "inside", "outside"),
    [
        ("Return the energy to 3 s.f.", 123.4, 123.0, 122.0),
        ("Return the energy to 3 sig. figs.", 123.4, 123.0, 122.0),
        ("Return the energy to 3 sf.", 123.4, 123.0, 122.0),
        ("Return the energy, accurate to 5%.", 100.0, 104.0, 106.0),
        ("Return the energy, accurate to within 2%.", 100.0, 101.5, 103.0),
        ("Return the energy, accurate to 1e-3.", 0.5, 0.5004, 0.502),
        ("The energy should be within 1 ppm of the exact value.", 3.0, 3.000002, 3.00001),
    ],
)
def test_common_wordings_are_read(problem, expected, inside, outside):
    assert status(problem, expected, inside) == "equal", problem
    assert status(problem, expected, outside) == "mismatch", problem


# --- a clause about something else grants nothing -----------------------------------------------


def test_an_order_freedom_of_the_basis_is_not_one_of_the_output():
    problem = (
        "The Fock basis states can be listed in any order when you build the Hamiltonian "
        "matrix. Return the occupation numbers [n0, n1, n2]."
    )
    assert status(problem, [1, 2, 3], [3, 2, 1]) == "mismatch"
    assert status(problem, [1, 2, 3], [1, 2, 3]) == "equal"
    # Said of the returned list, the same freedom is granted.
    granted = "Return the occupation numbers; they can be listed in any order."
    assert status(granted, [1, 2, 3], [3, 2, 1]) == "equal"


@pytest.mark.parametrize(
    "problem",
    [
        "Knowing the temperature to 2 decimal places, compute the ratio r of the two rates.",
        "The temperature is known to 2 decimal places. Return the ratio.",
        "The temperature can be measured to 2 decimal places. Return the ratio.",
    ],
)
def test_the_precision_of_an_input_does_not_loosen_the_output(problem):
    assert status(problem, 0.5, 0.503) == "mismatch"


# --- the plainest promises ----------------------------------------------------------------------


def test_a_noun_that_is_also_a_verb_is_the_object_of_report():
    problem = (
        "Report lift with absolute error below 2e-6. Report drift with relative error below 4e-5."
    )
    found = verdict(problem, {"lift": 1.0, "drift": 2.0}, {"lift": 1.000001, "drift": 2.00006})
    assert found.status == "equal", found
    assert "for drift" in found.leaves[1].reason
    # a real description still sets nothing: "the frequency drifts within 2%"
    described = "The trap frequency drifts within 2%. Report the frequency f."
    assert status(described, 1.0, 1.01) == "mismatch"


def test_other_outputs_are_those_no_clause_names():
    problem = (
        "Report alpha with absolute error below 1e-9. Other outputs permit relative error "
        "below 4e-4."
    )
    expected = {"alpha": 1.0, "beta": 2.0, "gamma": 3.0}
    found = verdict(problem, expected, {"alpha": 1.0, "beta": 2.0006, "gamma": 3.001})
    assert found.status == "equal", found
    # alpha keeps its own, tighter promise: "other outputs" is not lent to it
    assert status(problem, expected, {"alpha": 1.0001, "beta": 2.0, "gamma": 3.0}) == "mismatch"


def test_a_grant_to_something_else_loosens_nothing():
    """'X allows/permits/tolerates an error' grants only when X names the output."""
    for problem in (
        "The solver allows a relative error below 1e-2. Return the energy.",
        "The integrator tolerates a relative error below 1e-3. Return the energy.",
    ):
        assert status(problem, 1.0, 1.0005) == "mismatch", problem
    named = "Report E. E permits a relative error below 1e-3."
    assert status(named, {"E": 1.0}, {"E": 1.0005}) == "equal"


def test_a_promise_naming_a_nested_output_governs_only_it():
    problem = "Report the depth with relative error below 1e-3."
    doc = "band: dict with keys depth and width"
    expected = {"band": {"depth": 2.0, "width": 1.0}}
    assert status(problem, expected, {"band": {"depth": 2.001, "width": 1.0}}, doc) == "equal"
    # the width was loosened too when the clause was read as about the whole answer
    assert status(problem, expected, {"band": {"depth": 2.0, "width": 1.0005}}, doc) == "mismatch"


# --- explain shows each promise's unit ----------------------------------------------------------


def test_explain_shows_the_unit_and_the_converted_width():
    (task,) = [t for t in load_tasks(PUBLIC)][:1]
    task = dataclasses.replace(task, problem=GAP)
    explained = explain(task)
    meanings = [c.meaning for o in explained.outputs for c in o.clauses]
    meanings += [c.meaning for c in explained.unbound]
    assert any("0.5 meV = 0.0005 eV" in m and "atol 0.0005" in m for m in meanings), meanings


# --- rounded to the nearest integer ---------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "expected", "observed", "wanted"),
    [
        ("Round the answer to the nearest integer.", 41.7, 42, "equal"),
        ("Round the answer to the nearest integer.", 41.7, 42.0, "equal"),
        ("Round the answer to the nearest integer.", 41.7, 41, "mismatch"),
        ("Round the answer to the nearest integer.", 41.7, 41.7, "mismatch"),  # not rounded
        ("Round the answer to the nearest integer.", 42, 42, "equal"),
        ("Round the answer to the nearest integer.", 42, 41.7, "mismatch"),
        ("Give the count, rounded to the nearest whole number.", -3.2, -3, "equal"),
        ("Give the count, rounded to the nearest whole number.", -3.2, -4, "mismatch"),
        ("Round the answer to the nearest integer.", 2.5, 2, "equal"),  # a half: either
        ("Round the answer to the nearest integer.", 2.5, 3, "equal"),
    ],
)
def test_rounding_to_an_integer_compares_with_the_expected_value_rounded(
    problem, expected, observed, wanted
):
    found = verdict(problem, expected, observed)
    assert found.status == wanted, found
    if wanted == "mismatch" and observed != int(observed):
        assert "not an integer" in found.leaves[0].reason
