"""Units physicists write in a promise, and a width that never reaches an output of another
kind (issue 28, class 3). Each test names the rule; values are this file's own."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

from critpt_grader.compare import Policy, compare_values
from critpt_grader.policy.explain import explain
from critpt_grader.policy.promises import read_promises
from critpt_grader.statement import read
from critpt_grader.tasks import load_tasks
from tests.support.paths import PUBLIC_TASKS as PUBLIC
from tests.support.paths import REPO


def verdict(problem: str, expected, observed, doc: str | None = None):
    return compare_values(expected, observed, Policy(problem=problem, output_doc=doc))


def status(problem: str, expected, observed, doc: str | None = None) -> str:
    return verdict(problem, expected, observed, doc).status


def leaf_status(problem: str, expected: dict, observed: dict, doc: str | None = None):
    found = verdict(problem, expected, observed, doc)
    return {leaf.path: leaf.status for leaf in found.leaves}


# --- "a deviation of 5 meV is tolerated": a width granted as the subject --------------------------


@pytest.mark.parametrize(
    ("problem", "expected", "inside", "outside"),
    [
        ("Report the splitting in eV. A deviation of 5 meV is tolerated.", 2.0, 2.003, 2.007),
        ("Report the splitting in eV. A deviation of 5 meV is tolerated.", 2.0, 1.996, 1.994),
        ("Give the binding energy in eV; an error of up to 4 meV is fine.", 0.7, 0.7035, 0.705),
        ("Return the level in meV. A deviation of 30 µeV is allowed.", 1.5, 1.52, 1.54),
        ("Give E in eV. An error of 4 meV is acceptable.", 0.7, 0.7035, 0.705),
        ("Return T_c in K. A deviation of 0.2 K is permitted.", 9.2, 9.35, 9.45),
    ],
)
def test_a_width_granted_as_the_subject_binds_to_the_answer(problem, expected, inside, outside):
    assert status(problem, expected, inside) == "equal", problem
    assert status(problem, expected, outside) == "mismatch", problem


@pytest.mark.parametrize(
    "problem",
    [
        "Report the splitting in eV. A deviation of 5 meV is not tolerated.",
        "Report the splitting in eV. No deviation of 5 meV is tolerated.",
        "Report the splitting in eV. A deviation of 5 meV from the reference was observed.",
    ],
)
def test_a_width_that_is_refused_or_only_observed_grants_nothing(problem):
    assert status(problem, 2.0, 2.003) == "mismatch", problem


def test_a_width_granted_to_a_named_output_reaches_only_it():
    doc = "gap: float, band gap in eV\nwidth: float, line width in eV"
    problem = "Return gap and width. A deviation of 5 meV in the gap is tolerated."
    expected = {"gap": 1.0, "width": 0.2}
    found = leaf_status(problem, expected, {"gap": 1.004, "width": 0.2}, doc)
    assert found == {"/gap": "equal", "/width": "equal"}
    found = leaf_status(problem, expected, {"gap": 1.0, "width": 0.204}, doc)
    assert found["/width"] == "mismatch"


# --- wavenumbers are energies (E = h·c·ν̃), both ways; no other kind is crossed -------------------

# 8 cm^-1 = 0.000991873 eV; 0.1 meV = 0.806554 cm^-1
WAVENUMBER_WIDTHS = [
    "Give the level spacing in eV, with an absolute error below 8 cm^-1.",
    "Give the level spacing in eV, with an absolute error below 8 cm⁻¹.",
    "Give the level spacing in eV, with an absolute error below 8 cm-1.",
    "Give the level spacing in eV, with an absolute error below $8\\,\\mathrm{cm}^{-1}$.",
    "Give the level spacing in eV. A deviation of 8 cm^{-1} is tolerated.",
]


@pytest.mark.parametrize("problem", WAVENUMBER_WIDTHS)
def test_a_wavenumber_width_on_an_energy_converts_by_h_c(problem):
    assert status(problem, 0.2, 0.2009) == "equal", problem
    assert status(problem, 0.2, 0.2011) == "mismatch", problem
    (clause,) = read_promises(problem, None).clauses
    assert clause.honoured and clause.meaning == "abs"
    assert abs(float(clause.value) - 0.000991873) < 1e-9
    assert "h·c" in clause.unit_note


def test_an_energy_width_on_a_wavenumber_output_converts_back():
    problem = "Give the line position in cm^-1, to within 0.1 meV."
    assert status(problem, 1500.0, 1500.8) == "equal"
    assert status(problem, 1500.0, 1500.9) == "mismatch"
    unicode = "Give the line position in cm⁻¹, to within 0.1 meV."
    assert status(unicode, 1500.0, 1500.8) == "equal"


@pytest.mark.parametrize(
    "problem",
    [
        # E = h·ν is a convention the statement would have to state: a frequency is no energy
        "Give the transition frequency in GHz, with an absolute error below 1 meV.",
        "Give the transition energy in meV, with an absolute error below 2 GHz.",
        # a wavevector is not a spectroscopic wavenumber (nor off by 2π from one)
        "Give the wavevector in nm^-1, with an absolute error below 1 meV.",
        # nor is a length, a wavelength included (its width does not convert linearly)
        "Give the wavelength in nm, with an absolute error below 1 cm^-1.",
    ],
)
def test_a_width_of_another_kind_converts_to_nothing(problem):
    (clause,) = read_promises(problem, None).clauses
    assert not clause.honoured and clause.reason == "unit_not_understood"
    assert status(problem, 2.0, 2.0001) == "mismatch"


# --- a temperature width is a difference ----------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "expected", "inside", "outside"),
    [
        ("Report the Néel temperature in K, absolute error below 0.5 °C.", 300.0, 300.4, 300.6),
        ("Report the Néel temperature in K, absolute error below 0.5 degC.", 300.0, 299.6, 299.4),
        ("Report the Néel temperature in K, to within 0.5 ℃.", 300.0, 300.4, 300.6),
        ("Report the Néel temperature in K, to within 0.5 degrees Celsius.", 300.0, 300.4, 300.6),
        ("Report the melting point in °C with an absolute error below 0.4 K.", 25.0, 25.3, 25.5),
        ("Report the melting point in degC, to within 0.4 K.", 25.0, 24.7, 24.5),
        ("Report the melting point in degrees Celsius, to within 400 mK.", 25.0, 25.3, 25.5),
        ("Report the transition temperature in K, to within 20 mK.", 1.2, 1.215, 1.225),
        ("Report the boiling point in K, to within 0.9 °F.", 100.0, 100.45, 100.55),
    ],
)
def test_a_temperature_width_is_a_difference(problem, expected, inside, outside):
    assert status(problem, expected, inside) == "equal", problem
    assert status(problem, expected, outside) == "mismatch", problem


def test_half_a_degree_celsius_is_never_273_kelvin():
    problem = "Report the Néel temperature in K with an absolute error below 0.5 °C."
    (clause,) = read_promises(problem, None).clauses
    assert clause.value == dataclasses.replace(clause).value == 0.5
    assert "0.5 °C = 0.5 K" in clause.unit_note
    assert status(problem, 300.0, 500.0) == "mismatch"
    reverse = "Report the melting point in °C with an absolute error below 0.5 K."
    (clause,) = read_promises(reverse, None).clauses
    assert clause.value == 0.5 and clause.honoured


# --- "2 d.p." reads as "2 decimal places" ---------------------------------------------------------


@pytest.mark.parametrize("wording", ["2 d.p.", "2 d.p", "2 dp", "2 d. p."])
def test_d_p_is_decimal_places(wording):
    short = f"Return the ratio r to {wording}"
    long = "Return the ratio r to 2 decimal places"
    for expected, observed in ((1.234, 1.238), (1.234, 1.2395), (0.5, 0.5051), (7.0, 6.996)):
        assert status(short, expected, observed) == status(long, expected, observed), (
            wording,
            expected,
            observed,
        )
    assert status(short, 1.234, 1.238) == "equal"
    assert status(short, 1.234, 1.240) == "mismatch"


def test_d_p_binds_per_output_and_ends_a_sentence_only_before_a_new_one():
    problem = "Return the tuple (u, w). Report u to 3 d.p. Give w to 1 d.p."
    assert [s.text for s in read(problem, None).texts[0].sentences] == [
        "Return the tuple (u, w).",
        "Report u to 3 d.p.",
        "Give w to 1 d.p.",
    ]
    assert status(problem, (1.0, 2.0), (1.0004, 2.04)) == "equal"
    assert status(problem, (1.0, 2.0), (1.0006, 2.0)) == "mismatch"
    assert status(problem, (1.0, 2.0), (1.0, 2.06)) == "mismatch"
    going_on = "Report u to 3 d.p. and w to 1 d.p."
    assert len(read(going_on, None).texts[0].sentences) == 1


# --- sentences split by a newline without a full stop ---------------------------------------------


def test_a_line_that_opens_a_sentence_starts_a_new_one():
    problem = "Find the period T in s\nAll results should be given to three significant figures"
    assert [s.text for s in read(problem, None).texts[0].sentences] == [
        "Find the period T in s",
        "All results should be given to three significant figures",
    ]
    assert status(problem, 12.34, 12.36) == "equal"  # was "'s All results' is an input"
    assert status(problem, 12.34, 12.4) == "mismatch"


@pytest.mark.parametrize(
    ("problem", "expected", "inside", "outside"),
    [
        ("Give the energy E in eV\nKeep 3 decimal places", 1.2345, 1.2349, 1.2352),
        ("Return the mass m in GeV\nThe answer must be accurate to 0.1%", 90.0, 90.08, 90.1),
        ("Return the rate k\n  Report it with relative error below 1e-4", 3.0, 3.0002, 3.0004),
    ],
)
def test_newline_separated_sentences_are_read_apart(problem, expected, inside, outside):
    assert len(read(problem, None).texts[0].sentences) == 2
    assert status(problem, expected, inside) == "equal", problem
    assert status(problem, expected, outside) == "mismatch", problem


@pytest.mark.parametrize(
    "problem",
    [
        "Compute the ground-state energy of the\nHubbard model to 3 decimal places.",
        "Compute the ground-state energy of the Hubbard model,\nThe result to 3 decimal places.",
        "Compute the ground-state energy of the Hubbard model to 3 decimal\nplaces.",
    ],
)
def test_wrapped_prose_stays_one_sentence(problem):
    assert len(read(problem, None).texts[0].sentences) == 1
    assert status(problem, 1.2345, 1.2349) == "equal"


# --- never a width to an output of another kind ---------------------------------------------------

MIXED_DOC = "gap: float, band gap in eV\nT_N: float, Néel temperature in K"
MIXED = {"gap": 1.0, "T_N": 10.0}


def test_the_mev_width_never_reaches_the_kelvin_entry():
    problem = "Return both as a dict. Every answer is accepted with an absolute error below 5 meV."
    assert leaf_status(problem, MIXED, {"gap": 1.003, "T_N": 10.0}, MIXED_DOC) == {
        "/gap": "equal",
        "/T_N": "equal",
    }
    assert leaf_status(problem, MIXED, {"gap": 1.007, "T_N": 10.0}, MIXED_DOC)["/gap"] == "mismatch"
    # read as 0.005 "kelvin" it passed 10.003
    found = verdict(problem, MIXED, {"gap": 1.0, "T_N": 10.003}, MIXED_DOC)
    assert found.status == "mismatch"
    assert "not applied here" in found.leaves[1].reason


def test_the_kelvin_width_never_reaches_the_ev_entry():
    problem = "Give gap in eV and T_N in K, each to within 0.5 K."
    assert leaf_status(problem, MIXED, {"gap": 1.0, "T_N": 10.4}) == {
        "/gap": "equal",
        "/T_N": "equal",
    }
    # read as 0.5 "eV" it passed 1.4
    assert leaf_status(problem, MIXED, {"gap": 1.4, "T_N": 10.0})["/gap"] == "mismatch"
    assert leaf_status(problem, MIXED, {"gap": 1.0, "T_N": 10.6})["/T_N"] == "mismatch"


def test_each_width_reaches_its_own_entry_in_its_own_unit():
    problem = (
        "Return a dict with the gap in eV and T_N in K. Report gap with an absolute error "
        "below 5 meV and T_N with an absolute error below 500 mK."
    )
    inside = {"gap": 1.004, "T_N": 10.4}
    assert leaf_status(problem, MIXED, inside) == {"/gap": "equal", "/T_N": "equal"}
    assert leaf_status(problem, MIXED, {"gap": 1.006, "T_N": 10.0})["/gap"] == "mismatch"
    assert leaf_status(problem, MIXED, {"gap": 1.0, "T_N": 10.6})["/T_N"] == "mismatch"


def test_two_units_of_one_kind_each_output_in_its_own():
    problem = (
        "Return a dict with the gap in eV and the splitting in meV. Report all results with "
        "an absolute error below 2 meV."
    )
    expected = {"gap": 1.0, "splitting": 40.0}
    inside = {"gap": 1.0015, "splitting": 41.5}
    assert leaf_status(problem, expected, inside) == {"/gap": "equal", "/splitting": "equal"}
    assert leaf_status(problem, expected, {"gap": 1.0025, "splitting": 40.0})["/gap"] == "mismatch"
    outside = {"gap": 1.0, "splitting": 42.5}
    assert leaf_status(problem, expected, outside)["/splitting"] == "mismatch"


def test_an_output_whose_unit_is_not_named_takes_no_width_meant_for_all():
    problem = "Return a dict with the gap in eV and the count n. Report all results within 5 meV."
    expected = {"gap": 1.0, "n": 10.0}
    found = leaf_status(problem, expected, {"gap": 1.003, "n": 10.003})
    assert found == {"/gap": "equal", "/n": "mismatch"}


def test_explain_says_where_a_width_is_not_applied():
    (task,) = [t for t in load_tasks(PUBLIC)][:1]
    problem = "Return both as a dict. Every answer is accepted with an absolute error below 5 meV."
    task = dataclasses.replace(task, problem=problem, output_doc=MIXED_DOC, cases=())
    explained = {o.name: o for o in explain(task).outputs}
    assert "atol 0.005 (5 meV = 0.005 eV)" in explained["gap"].tolerance
    (line,) = explained["T_N"].clauses
    assert line.meaning.startswith("not applied here") and "(K)" in line.meaning
    assert "promise" not in explained["T_N"].tolerance


# --- reading stays linear -------------------------------------------------------------------------


_COUNT_STEPS = """
import sys
from critpt_grader.policy.promises import read_promises

count = 0

def trace(frame, event, arg):
    global count
    name = frame.f_code.co_filename
    if "critpt_grader/statement" in name or "critpt_grader/policy" in name:
        count += 1
        return trace
    return None

problem = sys.stdin.read()
sys.settrace(trace)
try:
    read_promises(problem, None)
finally:
    sys.settrace(None)
print(count)
"""


def _steps(problem: str) -> int:
    """Python lines run by the statement reader and the promise reader for ``problem``, in
    a fresh interpreter: the count must not depend on what earlier tests left loaded (in the
    whole suite, tracing in this process once ran past ten minutes)."""
    done = subprocess.run(
        [sys.executable, "-c", _COUNT_STEPS],
        input=problem,
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=600,
        check=True,
    )
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize(
    "piece",
    [
        "keep four decimal places for all numerical answers; ",  # one sentence, many clauses
        "report the energy E with relative error below 1e-6 and ",  # no full stop at all
        "the Rayleigh number (allowing ±0.5 error), ",  # parentheticals in one sentence
        "\\begin{equation} E \\( x \\[ y, to 3 decimal places, ",  # math never closed
        "Give the gap in eV, with an absolute error below 0.5 meV. ",  # widths with units
    ],
)
def test_reading_a_long_statement_costs_steps_in_proportion_to_its_length(piece):
    """A deterministic count (lines run), not a clock: four times the text, at most about
    four times the steps (the quadratic reader took ten to sixteen times)."""
    small, large = _steps(piece * 40), _steps(piece * 160)
    assert large < 5 * small, (small, large)
