"""What a clause is about when it names the returned object, one of its members, or something
else (issue 28, classes 2 and 4). Statements written for these tests; each checks both
directions: the grant reaches the output the clause is about, and nothing else.

* A freedom said of the returned object under its own noun or letter ("the spin state is
  defined up to an overall phase", "w is fixed up to a constant factor") is granted to it.
* A clause about one member of a returned tuple, list or map (a named member, "the first
  entry", the entry under a key) reaches that member only.
* A clause that is negated, a floor on the digits given, about an input, or a relative clause
  on one noun phrase, loosens nothing else: a wrong answer inside the misread width scores 0.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from critpt_grader.compare import Policy, compare_values
from critpt_grader.policy.explain import explain
from critpt_grader.tasks import load_tasks
from tests.support.paths import PUBLIC_TASKS as PUBLIC


def status(problem: str, expected, observed, doc: str | None = None) -> str:
    return compare_values(expected, observed, Policy(problem=problem, output_doc=doc)).status


def rotated(vector, angle: float):
    phase = complex(math.cos(angle), math.sin(angle))
    return [phase * complex(x) for x in vector]


# --- a freedom said of the returned object -----------------------------------------------------

VECTOR = [0.6, -0.8]


@pytest.mark.parametrize(
    ("problem", "passes"),
    [
        (
            "Find the lowest-energy state of the two-site Hamiltonian and return it as a list of "
            "two amplitudes. The lowest-energy state is only fixed up to normalization.",
            [1.5, -2.0],
        ),
        (
            "Compute the weight vector w of the perceptron and return it. w is fixed up to a "
            "constant factor.",
            [0.3, -0.4],
        ),
        (
            "Return the eigenvector of M with the lowest eigenvalue. Note that the eigenvector "
            "is only determined up to a sign.",
            [-0.6, 0.8],
        ),
        (
            "Return the magnetisation direction n as a list. Here n is defined up to an overall "
            "sign.",
            [-0.6, 0.8],
        ),
        (
            "Your function should return u, the null vector of the matrix. u is fixed only up to "
            "a multiplicative constant.",
            [6.0, -8.0],
        ),
        ("Return the eigenvector, which is only defined up to a sign.", [-0.6, 0.8]),
        (
            "Return the ground-state wavefunction as a list. Since the wavefunction is only "
            "defined up to an overall sign, either sign is accepted.",
            [-0.6, 0.8],
        ),
        ("Return the eigenvector v. v may be given up to an overall sign.", [-0.6, 0.8]),
        ("The eigenvector you return is only defined up to an overall sign.", [-0.6, 0.8]),
        (
            "Return the normalised eigenvector of M for its largest eigenvalue. The overall "
            "sign of the eigenvector is arbitrary.",
            [-0.6, 0.8],
        ),
        (
            "Return the list [c1, c2] of expansion coefficients. The coefficients are fixed up "
            "to normalization.",
            [3.0, -4.0],
        ),
    ],
)
def test_a_freedom_said_of_the_returned_object_is_granted(problem, passes):
    assert status(problem, VECTOR, VECTOR) == "equal"
    assert status(problem, VECTOR, passes) == "equal", problem
    assert status(problem, VECTOR, [0.6, 0.8]) == "mismatch", problem  # one entry flipped
    assert status(problem, VECTOR, [0.8, -0.6]) == "mismatch", problem


@pytest.mark.parametrize(
    "problem",
    [
        "Return the spin state of the qubit as a list of two complex amplitudes. The spin state "
        "is defined up to an overall phase.",
        "Return the ground state of the dimer; it is only defined up to a global phase.",
        "Return the ground-state vector of the dimer. The ground state is defined up to a "
        "global phase.",
        "Return the spin state. The state vector is defined up to a global phase.",
    ],
)
def test_a_phase_freedom_on_the_state_lets_a_rotated_vector_pass(problem):
    state = [0.6, 0.8j]
    assert status(problem, state, rotated(state, 1.1)) == "equal", problem
    assert status(problem, state, [0.6, -0.8j]) == "mismatch", problem  # a relative phase
    assert status(problem, state, [0.8, 0.6j]) == "mismatch", problem


def test_what_does_not_matter_is_only_the_freedom_it_names():
    problem = "Return the allowed energies as a list; the order does not matter."
    assert status(problem, [1.0, 2.0], [1.0, 2.0]) == "equal"
    assert status(problem, [1.0, 2.0], [-1.0, -2.0]) == "mismatch"  # no sign is granted
    signed = "Return the ground state psi. The sign of psi does not matter."
    assert status(signed, [0.6, 0.8], [-0.6, -0.8]) == "equal"
    assert status(signed, [0.6, 0.8], [0.8, 0.6]) == "mismatch"


@pytest.mark.parametrize(
    ("problem", "expected", "wrong"),
    [
        # the freedom is said of an intermediate object, or of another one
        (
            "Compute the ground state of H. It is defined up to a global phase. Return its energy.",
            -1.5,
            1.5,
        ),
        ("Return the norm of the vector w. The vector w is fixed up to a sign.", 2.0, -2.0),
        (
            "Return the overlap of the ground state with the Neel state. The ground state is "
            "only defined up to a sign.",
            0.5,
            -0.5,
        ),
        (
            "Return the spin state as a list of two amplitudes. The orbital state is defined up "
            "to an overall phase.",
            [0.6, 0.8],
            [-0.6, -0.8],
        ),
        ("Return the expectation value <v|A|v>. v is defined up to a sign.", 0.5, -0.5),
        # a tuple with no names: "the ground state" cannot be placed
        (
            "Return the energy and the ground state. The ground state is defined up to a sign.",
            (-1.5, [0.6, 0.8]),
            (-1.5, [-0.6, -0.8]),
        ),
    ],
)
def test_a_freedom_of_something_else_is_granted_nowhere(problem, expected, wrong):
    assert status(problem, expected, expected) == "equal"
    assert status(problem, expected, wrong) == "mismatch", problem


# --- members of a returned tuple, list or map ----------------------------------------------------


def test_a_width_on_k_does_not_reach_omega():
    problem = (
        "Return the pair (k, omega), with k to 2 significant figures and omega at full precision."
    )
    expected = (1.234, 5.678)
    assert status(problem, expected, (1.23, 5.678)) == "equal"
    assert status(problem, expected, (1.3, 5.678)) == "mismatch"
    assert status(problem, expected, (1.234, 5.679)) == "mismatch"


def test_a_freedom_on_a_member_the_return_names_in_order():
    problem = (
        "Return the eigenvector and the eigenvalue as a tuple (v, lam). The eigenvector is "
        "defined up to a sign."
    )
    expected = ([0.6, 0.8], 2.0)
    assert status(problem, expected, ([-0.6, -0.8], 2.0)) == "equal"
    assert status(problem, expected, ([0.6, 0.8], -2.0)) == "mismatch"
    assert status(problem, expected, ([-0.6, -0.8], -2.0)) == "mismatch"


@pytest.mark.parametrize(
    "problem",
    [
        "Return the two decay rates as a list. The first entry need only be accurate to within 2%.",
        "Return a list of the two decay rates; the first entry within 2%, the second at full "
        "precision.",
        "Return the list [g1, g2] of decay rates, whose first element is only needed within 2%.",
    ],
)
def test_a_width_on_the_first_entry_does_not_reach_the_second(problem):
    expected = [10.0, 20.0]
    assert status(problem, expected, [10.15, 20.0]) == "equal", problem
    assert status(problem, expected, [10.0, 20.1]) == "mismatch", problem
    assert status(problem, expected, [10.3, 20.0]) == "mismatch", problem


def test_the_last_element_takes_its_own_width():
    problem = (
        "Return the three level energies as a list. The last element may be given to 2 "
        "decimal places."
    )
    expected = [1.0, 2.0, 3.14159]
    assert status(problem, expected, [1.0, 2.0, 3.143]) == "equal"
    assert status(problem, expected, [1.003, 2.0, 3.14159]) == "mismatch"


KEYED = {"m": [0.0, 0.6, 0.8], "q": [1.0, 0.0, 0.0]}


@pytest.mark.parametrize(
    "problem",
    [
        "Return a dict with keys 'm' and 'q'. The entry under 'm' is defined up to a sign.",
        "Return a dict with keys m and q. Note that m is defined up to a sign.",
        "Return a dictionary mapping 'm' to the Neel vector and 'q' to the ordering wavevector; "
        "the Neel vector is only defined up to an overall sign.",
        "Return a dictionary with entries m (the staggered magnetisation) and q. The staggered "
        "magnetisation is defined up to a sign.",
    ],
)
def test_a_sign_on_one_key_flips_that_key_only(problem):
    flipped_m = {"m": [-0.0, -0.6, -0.8], "q": [1.0, 0.0, 0.0]}
    flipped_q = {"m": [0.0, 0.6, 0.8], "q": [-1.0, 0.0, 0.0]}
    assert status(problem, KEYED, flipped_m) == "equal", problem
    assert status(problem, KEYED, flipped_q) == "mismatch", problem
    assert status(problem, KEYED, {"m": [0.0, -0.6, 0.8], "q": [1.0, 0.0, 0.0]}) == "mismatch"


@pytest.mark.parametrize(
    "problem",
    [
        "Return the amplitudes [c_0, c_1] up to an overall sign.",
        "Return the amplitudes [c_0, c_1]. c_0 and c_1 are defined up to an overall sign.",
        "Return the tuple (a, b). a and b are defined up to an overall sign.",
    ],
)
def test_a_sign_said_of_every_member_flips_them_together(problem):
    """The older reading flipped each named member on its own: [0.6, -0.8] passed."""
    expected = (0.6, 0.8) if "tuple" in problem else [0.6, 0.8]
    together = type(expected)([-0.6, -0.8])
    alone = type(expected)([0.6, -0.8])
    assert status(problem, expected, together) == "equal", problem
    assert status(problem, expected, alone) == "mismatch", problem


def test_a_phase_said_of_every_member_is_one_common_phase():
    problem = "Return the amplitudes [c_0, c_1]. c_0 and c_1 are defined up to a global phase."
    state = [0.6, 0.8j]
    assert status(problem, state, rotated(state, 2.0)) == "equal"
    assert status(problem, state, [0.6, -0.8j]) == "mismatch"


# --- misreadings that handed a wrong answer 1 ----------------------------------------------------


@pytest.mark.parametrize(
    "problem",
    [
        "Return the mean occupation number. The result should not be rounded to a whole number.",
        "Return the mean occupation number; it must not be rounded to the nearest integer.",
        "Return the mean occupation number; it shouldn't be rounded to the nearest integer.",
        "Compute the mean occupation number, not rounded to the nearest integer.",
        "Compute the mean occupation number without rounding to the nearest integer.",
        "Compute the mean occupation number. Do not round to the nearest integer.",
        "Compute the mean occupation number. The answer need not be rounded to a whole number.",
    ],
)
def test_a_negated_rounding_grants_nothing(problem):
    assert status(problem, 2.7, 3) == "mismatch", problem
    assert status(problem, 2.7, 2.7) == "equal"


def test_rounding_asked_for_is_still_granted():
    assert status("Return the mean occupation number, rounded to the nearest integer.", 2.7, 3) == (
        "equal"
    )


@pytest.mark.parametrize(
    "problem",
    [
        "Compute the decay length. At least 4 decimal places are needed; fewer is not enough.",
        "Report the decay length with at least 4 decimal places; fewer will not be accepted.",
        "Report the decay length to no fewer than 4 decimal places.",
        "Give the decay length with a minimum of 4 decimal places.",
        "Give the decay length to at least 4 decimal places or more.",
    ],
)
def test_a_floor_on_the_digits_given_is_not_a_width(problem):
    assert status(problem, 1.23456, 1.23459) == "mismatch", problem  # inside atol 5e-5
    assert status(problem, 1.23456, 1.23456) == "equal"


def test_to_at_least_n_places_is_still_a_width():
    """CritPt's way of asking for N places ("Evaluate this quantity to at least six decimal
    places") keeps its reading."""
    problem = "Evaluate the decay length to at least four decimal places."
    assert status(problem, 1.23456, 1.23459) == "equal"
    assert status(problem, 1.23456, 1.2347) == "mismatch"


FREQUENCY = (10.0, 0.5)


@pytest.mark.parametrize(
    ("problem", "doc"),
    [
        (
            "Return the tuple (f, gamma): the resonance frequency f, which only needs 2% "
            "accuracy, and the damping rate gamma at full precision.",
            None,
        ),
        (
            "Report the resonance frequency, which only needs 2% accuracy, and the damping rate "
            "at full precision.",
            "f: float, the resonance frequency\ngamma: float, the damping rate",
        ),
        (
            "Report the resonance frequency f (which is only needed to 2% accuracy) and the "
            "damping rate gamma, as a tuple (f, gamma).",
            None,
        ),
    ],
)
def test_a_relative_clause_on_one_output_loosens_that_output_only(problem, doc):
    assert status(problem, FREQUENCY, (10.15, 0.5), doc) == "equal", problem
    assert status(problem, FREQUENCY, (10.0, 0.501), doc) == "mismatch", problem
    assert status(problem, FREQUENCY, (10.3, 0.5), doc) == "mismatch", problem


@pytest.mark.parametrize("expected", [[10.0, 0.5], (10.0, 0.5)])
@pytest.mark.parametrize(
    "problem",
    [
        "Report the resonance frequency, which only needs 2% accuracy, and the damping rate at "
        "full precision.",
        "Return the resonance frequency that only needs 2% accuracy and the damping rate as a "
        "list.",
    ],
)
def test_a_relative_clause_on_an_undeclared_member_loosens_nothing(problem, expected):
    """Two values and no names: "the resonance frequency" cannot be placed, and the clause is
    never the whole answer's."""
    shape = type(expected)
    assert status(problem, expected, shape([10.0, 0.501])) == "mismatch"
    assert status(problem, expected, shape([10.15, 0.5])) == "mismatch"


def test_a_relative_clause_on_the_one_thing_asked_for_is_about_the_answer():
    precise = "Compute the band gap, which should be given to 3 decimal places."
    assert status(precise, 1.2345, 1.2348) == "equal"
    assert status(precise, 1.2345, 1.236) == "mismatch"
    free = "Compute the eigenvector, which is defined up to a sign."
    assert status(free, [0.6, 0.8], [-0.6, -0.8]) == "equal"
    assert status(free, [0.6, 0.8], [0.6, -0.8]) == "mismatch"
    # … but not when something else is returned, nor when it only describes
    other = "Compute the ground state, which is defined up to a phase. Return its energy."
    assert status(other, -1.5, 1.5) == "mismatch"
    known = "Compute the band gap, which is known to 3 decimal places."
    assert status(known, 1.2345, 1.2348) == "mismatch"


@pytest.mark.parametrize(
    "problem",
    [
        "Compute the boiling temperature of the liquid, knowing the pressure to 3 decimal places.",
        "Compute the boiling temperature of the liquid knowing the pressure to 3 decimal places.",
        "Having measured the pressure to 3 decimal places, compute the boiling temperature.",
        "Compute the boiling temperature from the pressure measured to 3 decimal places.",
        "Compute the boiling temperature given the pressure to 3 decimal places.",
    ],
)
def test_the_precision_of_an_input_does_not_widen_the_output(problem):
    assert status(problem, 373.1234, 373.1237) == "mismatch", problem
    assert status(problem, 373.1234, 373.1234) == "equal"


def test_the_output_to_n_places_is_still_a_width():
    problem = "Compute the boiling temperature of the liquid to 3 decimal places."
    assert status(problem, 373.1234, 373.1237) == "equal"


# --- explain says why ---------------------------------------------------------------------------


def _task(problem: str):
    (task,) = [t for t in load_tasks(PUBLIC) if t.problem_id == "pub-at-linear-triatomic-stretch"]
    return dataclasses.replace(task, problem=problem, output_doc=None)


def test_explain_names_the_returned_object_a_freedom_is_said_of():
    explained = explain(
        _task("Return the stretch mode as a list. The stretch mode is only fixed up to a sign.")
    )
    (output,) = explained.outputs
    assert output.conventions == ["sign ('up to a sign')"]
    (clause,) = output.clauses
    assert "is what the task returns ('the stretch mode')" in clause.reason


def test_explain_says_a_negated_clause_sets_nothing():
    explained = explain(_task("Return the stretch mode; it should not be rounded to an integer."))
    (clause,) = explained.unbound
    assert clause.reason.startswith("sets nothing: the clause denies it")


def test_explain_shows_a_clause_on_the_first_entry_under_the_answer():
    explained = explain(
        _task(
            "Return the three mode amplitudes as a list; the first entry within 2%, the others "
            "at full precision."
        )
    )
    (output,) = explained.outputs
    (clause,) = output.clauses
    assert clause.bound == "[0]" and "'the first entry' is [0]" in clause.reason
    assert output.tolerance.startswith("rtol=0.02 (promise: 'within 2%' for [0]) at /0")
