"""Conventions from the statement: overall sign, global phase, ordering."""

from __future__ import annotations

import cmath
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.codec.values import Symbolic, WireSet
from critpt_grader.compare import Policy, compare_values
from critpt_grader.policy.conventions import bind_conventions, read_conventions
from tests.support.paths import CRITPT_PUBLIC

CRITPT = CRITPT_PUBLIC

CHERN_DOC = (
    "chern_numbers: tuple[int, int, int]\n"
    "    (C1, C2, C3) – Chern numbers of the top bands, up to an overall sign.\n"
    "TrG: float\n"
    "    Wannier spread, rounded to 2 decimal places.\n"
)


def test_overall_sign_flips_the_named_output_together():
    policy = Policy(output_doc=CHERN_DOC)
    expected = ((1, -2, 1), 0.71)
    assert compare_values(expected, ((-1, 2, -1), 0.71), policy).status == "equal"
    assert compare_values(expected, ((1, -2, 1), 0.714), policy).status == "equal"
    # elements flip together, never one at a time
    assert compare_values(expected, ((-1, -2, 1), 0.71), policy).status == "mismatch"
    # the sign convention belongs to chern_numbers only
    assert compare_values(expected, ((1, -2, 1), -0.71), policy).status == "mismatch"


def test_sign_reason_says_the_flip_was_used():
    policy = Policy(problem="Return the Chern number C up to an overall sign.")
    verdict = compare_values(2, -2, policy)
    assert verdict.status == "equal"
    assert "-expected" in verdict.leaves[0].reason
    assert compare_values(2, 3, policy).status == "mismatch"
    assert compare_values(2, -2, Policy()).status == "mismatch"


def test_sign_on_symbolic_leaves():
    policy = Policy(problem="Return the amplitude, up to an overall sign.")
    assert compare_values(Symbolic("x - 1"), Symbolic("1 - x"), policy).status == "equal"


def test_incidental_sign_remark_grants_nothing():
    policy = Policy(problem="Eigenvectors are defined up to an overall sign. Report the energy.")
    assert compare_values(1.5, -1.5, policy).status == "mismatch"


PHASE = Policy(problem="Return the ground state vector, up to a global phase.")


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=-3.1, max_value=3.1))
def test_global_phase_is_accepted(phi):
    state = [complex(0.6, 0.0), complex(0.0, 0.8)]
    rotated = [c * cmath.exp(1j * phi) for c in state]
    assert compare_values(
        state, rotated, Policy(problem=PHASE.problem, task_rtol="1e-9")
    ).status == ("equal")


def test_phase_never_accepts_a_different_state_or_scale():
    state = [complex(0.6, 0.0), complex(0.0, 0.8)]
    assert compare_values(state, [complex(0.8, 0), complex(0, 0.6)], PHASE).status == "mismatch"
    assert compare_values(state, [c * 2 for c in state], PHASE).status == "mismatch"
    assert compare_values(state, [complex(0.6, 0), complex(0, -0.8)], PHASE).status == "mismatch"
    assert compare_values(state, [c * 1j for c in state], Policy()).status == "mismatch"


def test_ascending_order_is_required_and_compared_in_order():
    doc = "energies: list[float]\n    Energies in ascending order (four-decimal precision).\n"
    policy = Policy(output_doc=doc)
    assert compare_values([1.0, 2.0], [1.00001, 2.0], policy).status == "equal"
    verdict = compare_values([1.0, 2.0], [2.0, 1.0], policy)
    assert verdict.status == "mismatch"
    assert "ascending" in verdict.leaves[0].reason


def test_any_order_compares_as_a_set():
    policy = Policy(problem="Return the three energies in any order.")
    assert compare_values([1.0, 2.0, 3.0], [3.0, 1.0, 2.0], policy).status == "equal"
    assert compare_values([1.0, 2.0, 3.0], [3.0, 1.0, 2.5], policy).status == "mismatch"
    assert compare_values([1.0, 2.0, 3.0], [3.0, 1.0, 2.0], Policy()).status == "mismatch"


def test_order_phrase_about_the_answer_governs_list_outputs_of_a_tuple():
    policy = Policy(
        problem="Return the energies and the degeneracy. List the results in any order."
    )
    bound = bind_conventions(read_conventions(policy.problem, None), ([1.0, 2.0], 3))
    assert [path for path, _ in bound.by_path] == ["/0"]
    assert compare_values(([1.0, 2.0], 3), ([2.0, 1.0], 3), policy).status == "equal"


def test_order_phrase_naming_no_output_of_a_tuple_grants_nothing():
    # Two undeclared outputs: "the energies" could be either, so the freedom is lent to none.
    policy = Policy(problem="Report the energies and degeneracies in any order.")
    bound = bind_conventions(read_conventions(policy.problem, None), ([1.0, 2.0], 3))
    assert bound.by_path == ()
    assert compare_values(([1.0, 2.0], 3), ([2.0, 1.0], 3), policy).status == "mismatch"


def test_order_phrase_binds_the_declared_output_it_names():
    policy = Policy(problem="Return the tuple (levels, degeneracy). Report levels in any order.")
    bound = bind_conventions(read_conventions(policy.problem, None), ([1.0, 2.0], 3))
    assert [path for path, _ in bound.by_path] == ["/0"]


def test_sets_stay_sets_under_ordering_phrases():
    policy = Policy(problem="Return the roots in ascending order.")
    assert compare_values(WireSet((1, 2)), WireSet((2, 1)), policy).status == "equal"


@pytest.mark.parametrize(("number", "path"), [(6, "/0"), (46, "/0")])
def test_real_critpt_templates(number, path):
    file = CRITPT / "public_test_challenges" / f"Challenge_{number}.json"
    if not file.exists():
        pytest.skip("CritPt public data is not available")
    problem = json.loads(file.read_text())["problems"][0]
    doc = problem["code_template"][problem["code_template"].find("Output") :]
    reading = read_conventions(problem["problem_description"], doc)
    expected = ((1, 0, -1), 0.5) if number == 6 else ([1.0, 2.0], [0.1, 0.2])
    bound = bind_conventions(reading, expected)
    assert bound.at(path)
    assert not bound.at("/1")


def test_unnamed_order_phrase_on_a_single_list_of_vectors_governs_the_list():
    policy = Policy(problem="Return the eigenvectors in any order.")
    vectors = [[1.0, 0.0], [0.0, 1.0]]
    assert compare_values(vectors, [[0.0, 1.0], [1.0, 0.0]], policy).status == "equal"
    assert compare_values(vectors, [[1.0, 0.0], [1.0, 0.0]], policy).status == "mismatch"


def test_order_phrase_is_not_applied_when_the_expectation_breaks_it():
    doc = "energies: list[float]\n    Energies in ascending order.\n"
    policy = Policy(output_doc=doc)
    assert compare_values([2.0, 1.0], [2.0, 1.0], policy).status == "equal"
    assert compare_values([2.0, 1.0], [1.0, 2.0], policy).status == "mismatch"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=4))
def test_identical_values_pass_every_convention(values):
    for phrase in ("up to an overall sign", "in ascending order", "in any order"):
        policy = Policy(problem=f"Return the numbers {phrase}.")
        assert compare_values(values, list(values), policy).status == "equal"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=4))
def test_sign_flip_is_all_or_nothing(values):
    policy = Policy(problem="Return the list of Chern numbers up to an overall sign.")
    flipped = [-v for v in values]
    assert compare_values(values, flipped, policy).status == "equal"
    mixed = [-values[0], *values[1:]]
    expected = "equal" if mixed in (values, flipped) else "mismatch"
    assert compare_values(values, mixed, policy).status == expected
