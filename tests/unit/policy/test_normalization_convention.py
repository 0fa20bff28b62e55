"""The "up to normalization" convention: one factor ``c`` with ``candidate == c·expected``
leaf by leaf (a positive real; any nonzero real with an overall sign, any nonzero complex
number with a global phase), read from the data, never 0, and nothing for a scalar."""

from __future__ import annotations

from fractions import Fraction

import pytest

from critpt_grader.codec.values import Symbolic
from critpt_grader.compare import Policy, compare_values
from critpt_grader.policy.conventions import bind_conventions, read_conventions

NORM = Policy(problem="Return the eigenvector, defined up to normalization.")
NORM_SIGN = Policy(problem="Return the eigenvector up to normalization and an overall sign.")
NORM_PHASE = Policy(problem="Return the state up to normalization and a global phase.")
SIGN = Policy(problem="Return the eigenvector up to an overall sign.")


def status(expected, observed, policy):
    return compare_values(expected, observed, policy).status


# values ------------------------------------------------------------------------------------


def test_a_rescaled_vector_is_equal_and_the_reason_names_the_factor():
    verdict = compare_values([1.0, 2.0], [2.0, 4.0], NORM)
    assert verdict.status == "equal"
    for leaf in verdict.leaves:
        assert leaf.reason == "equal after rescaling by 2 (statement: 'up to normalization')"
    # the leaves show the expectation as written, not the rescaled one
    assert [leaf.expected for leaf in verdict.leaves] == ["1.0", "2.0"]
    assert status([1.0, 2.0], [0.5, 1.0], NORM) == "equal"
    assert status([3, 4], [0.6, 0.8], NORM) == "equal"  # ints rescale to non-integers


def test_a_vector_not_proportional_is_a_mismatch():
    assert status([1.0, 2.0], [2.0, 4.1], NORM) == "mismatch"
    assert status([1.0, 2.0], [2.0, 4.0, 6.0], NORM) == "mismatch"


def test_a_mismatch_is_reported_after_the_rescaling():
    # c is read at the largest expected component (2.0 -> 4.1): c = 2.05, and 1.0 -> 2.0 differs
    verdict = compare_values([1.0, 2.0], [2.0, 4.1], NORM)
    assert [leaf.status for leaf in verdict.leaves] == ["mismatch", "equal"]
    assert verdict.leaves[0].reason == (
        "differs after rescaling by 2.05 (statement: 'up to normalization')"
    )


def test_the_factor_is_never_zero():
    assert status([1.0, 2.0], [0.0, 0.0], NORM) == "mismatch"
    assert status([1.0, 2.0], [0.0, 1e-300], NORM) == "mismatch"  # c = 0 at the anchor


def test_an_all_zero_expectation_grants_nothing():
    assert status([0.0, 0.0], [0.0, 0.0], NORM) == "equal"
    assert status([0.0, 0.0], [1.0, 0.0], NORM) == "mismatch"


def test_normalization_alone_is_a_positive_factor():
    assert status([1.0, 2.0], [-1.0, -2.0], NORM) == "mismatch"
    assert status([1.0, 2.0], [-2.0, -4.0], NORM) == "mismatch"


def test_with_an_overall_sign_any_nonzero_real_factor():
    assert status([1.0, 2.0], [-1.0, -2.0], NORM_SIGN) == "equal"
    assert status([1.0, 2.0], [-3.0, -6.0], NORM_SIGN) == "equal"
    for phrase in ("up to an overall sign and normalization", "up to a sign and a scale factor"):
        policy = Policy(problem=f"Return the eigenvector {phrase}.")
        assert status([1.0, 2.0], [-3.0, -6.0], policy) == "equal", phrase


def test_with_an_overall_sign_still_no_zero_and_no_complex_factor():
    assert status([1.0, 2.0], [0.0, 0.0], NORM_SIGN) == "mismatch"
    assert status([1.0, 2.0], [1j, 2j], NORM_SIGN) == "mismatch"
    assert status([1.0, 2.0], [-3.0, -6.1], NORM_SIGN) == "mismatch"


def test_an_overall_sign_alone_does_not_rescale():
    assert status([1.0, 2.0], [-1.0, -2.0], SIGN) == "equal"
    assert status([1.0, 2.0], [-2.0, -4.0], SIGN) == "mismatch"


def test_a_sign_and_normalization_pass_whatever_a_sign_alone_passes():
    # c read at the anchor (-(1+4e-12)) is off by twice the error at the other leaf; the
    # flip the sign grants is tried first, so adding normalization never loses an answer
    expected = [1.0, 1.0]
    observed = [-(1.0 + 4e-12), -(1.0 - 4e-12)]
    assert status(expected, observed, SIGN) == "equal"
    assert status(expected, observed, NORM_SIGN) == "equal"
    assert status(expected, [1.0 + 4e-12, 1.0 - 4e-12], NORM) == "equal"


STATE = [complex(0.6, 0.0), complex(0.0, 0.8)]


def test_complex_vector_a_positive_factor_passes():
    assert status(STATE, [c * 2.5 for c in STATE], NORM) == "equal"


def test_complex_vector_a_complex_factor_needs_a_global_phase():
    assert status(STATE, [c * 2j for c in STATE], NORM) == "mismatch"
    assert status(STATE, [c * -2 for c in STATE], NORM) == "mismatch"


def test_complex_vector_with_normalization_and_a_global_phase():
    verdict = compare_values(STATE, [c * 2j for c in STATE], NORM_PHASE)
    assert verdict.status == "equal"
    assert "rescaling by 2i (statement:" in verdict.leaves[0].reason
    assert [leaf.kind for leaf in verdict.leaves] == ["complex", "complex"]
    assert status(STATE, [c * complex(1.5, -2.0) for c in STATE], NORM_PHASE) == "equal"
    # a global phase alone keeps the modulus
    phase = Policy(problem="Return the state up to a global phase.")
    assert status(STATE, [c * 2j for c in STATE], phase) == "mismatch"


def test_complex_vector_with_a_phase_is_still_one_common_factor():
    other = [STATE[0] * 2j, STATE[1] * -2j]
    assert status(STATE, other, NORM_PHASE) == "mismatch"
    assert status(STATE, [0j, 0j], NORM_PHASE) == "mismatch"


def test_nested_arrays_share_one_factor():
    matrix = [[1.0, 0.0], [0.0, 2.0]]
    assert status(matrix, [[3.0, 0.0], [0.0, 6.0]], NORM) == "equal"
    assert status(matrix, [[3.0, 0.0], [0.0, 6.5]], NORM) == "mismatch"


def test_the_tolerance_is_the_leafs_own_at_the_rescaled_value():
    assert status([1.0, 2.0], [3.0, 6.0 * (1 + 1e-13)], NORM) == "equal"
    assert status([1.0, 2.0], [3.0, 6.0 * (1 + 1e-9)], NORM) == "mismatch"


def test_an_exact_expectation_rescales_as_a_float():
    # the factor comes from the candidate's floats: c·e is compared with a float's tolerance
    assert status([1, 3], [0.1, 0.30000000000000004], NORM) == "equal"
    assert status([Fraction(1, 3), Fraction(1)], [1.0, 3.0000000000000004], NORM) == "equal"
    assert status([3.0, 1.0], [1.0, 1 / 3], NORM) == "equal"
    assert status([1, 3], [0.1, 0.3001], NORM) == "mismatch"


def test_values_of_different_shapes_get_nothing():
    assert status([[1.0, 2.0], [3.0]], [[2.0], [4.0, 6.0]], NORM) == "mismatch"
    assert status([[1.0, 2.0]], [2.0, 4.0], NORM) == "mismatch"


def test_a_scalar_output_gets_nothing():
    policy = Policy(problem="Return the energy E, defined up to normalization.")
    assert status(1.5, 3.0, policy) == "mismatch"
    assert status(1.5, 1.5, policy) == "equal"
    assert status(1.5, 3.0, Policy(problem="Return E up to normalization and a global phase.")) == (
        "mismatch"
    )


def test_leaves_that_are_not_numbers_get_nothing():
    expected = [1.0, Symbolic("sqrt(2)")]
    assert status(expected, [2.0, Symbolic("2*sqrt(2)")], NORM) == "mismatch"


def test_a_clause_about_an_intermediate_object_grants_nothing():
    policy = Policy(
        problem="The basis vectors are defined up to normalization. Return the energy E."
    )
    assert status([1.0, 2.0], [2.0, 4.0], policy) == "mismatch"
    assert status(1.5, 3.0, policy) == "mismatch"
    bound = bind_conventions(read_conventions(policy.problem, None), [1.0, 2.0])
    assert not bound
    ((phrase, why),) = bound.idle
    assert phrase.convention == "normalization" and "not an output" in why


def test_only_the_output_the_clause_names_is_rescaled():
    policy = Policy(
        problem="Return the tuple (E, psi). The state psi is defined up to normalization."
    )
    assert status((1.0, [1.0, 2.0]), (1.0, [2.0, 4.0]), policy) == "equal"
    assert status((1.0, [1.0, 2.0]), (2.0, [2.0, 4.0]), policy) == "mismatch"


def test_without_a_statement_lists_compare_as_before():
    for policy in (Policy(), Policy(problem="")):
        assert status([1.0, 2.0], [2.0, 4.0], policy) == "mismatch"
        assert status([1.0, 2.0], [1.0, 2.0], policy) == "equal"
        assert status([1.0, 2.0], [-1.0, -2.0], policy) == "mismatch"
    # an answer equal as it stands reads exactly as it does without the convention
    plain = compare_values([1.0, 2.0], [1.0, 2.0 * (1 + 1e-13)], Policy())
    granted = compare_values([1.0, 2.0], [1.0, 2.0 * (1 + 1e-13)], NORM)
    assert granted.status == plain.status == "equal"
    assert [leaf.reason for leaf in granted.leaves] == [leaf.reason for leaf in plain.leaves]


# the lexicon -------------------------------------------------------------------------------


def conventions_at_root(problem: str, expected=(1.0, 2.0), doc: str | None = None) -> set[str]:
    bound = bind_conventions(read_conventions(problem, doc), list(expected))
    return {c.convention for c in bound.at("")}


@pytest.mark.parametrize(
    "phrase",
    [
        "up to normalization",
        "up to normalisation",
        "up to a normalization factor",
        "up to a normalization constant",
        "up to an overall normalization",
        "up to an arbitrary normalization",
        "up to a scale factor",
        "up to a constant scale factor",
        "up to an overall scale factor",
        "up to an overall scale",
        "up to a rescaling",
        "up to a multiplicative constant",
        "up to an overall multiplicative constant",
        "up to a constant factor",
        "up to an overall factor",
    ],
)
def test_normalization_phrases(phrase):
    assert conventions_at_root(f"Return the eigenvector {phrase}.") == {"normalization"}


@pytest.mark.parametrize(
    ("phrase", "granted"),
    [
        ("up to normalization and an overall sign", {"normalization", "sign"}),
        ("up to an overall sign and normalization", {"normalization", "sign"}),
        ("up to a sign and a normalization factor", {"normalization", "sign"}),
        ("up to normalization and a global phase", {"normalization", "phase"}),
        ("up to a global phase and normalization", {"normalization", "phase"}),
        ("up to a multiplicative constant and a global phase", {"normalization", "phase"}),
    ],
)
def test_normalization_joined_with_a_sign_or_a_phase(phrase, granted):
    assert conventions_at_root(f"Return the eigenvector {phrase}.") == granted


@pytest.mark.parametrize(
    "problem",
    [
        "Return the eigenvector; it is correct up to a factor of 2.",
        "Return the eigenvector up to an overall factor of 2.",
        "Return the profile up to a rescaling of the x axis.",
        "Return the unnormalized eigenvector.",
        "The potential is defined up to an overall constant. Return it.",
        "The coefficient matrix need not be normalized. Return the eigenvector.",
    ],
)
def test_phrases_that_grant_no_normalization(problem):
    assert "normalization" not in conventions_at_root(problem)


def test_normalization_is_arbitrary_in_an_outputs_entry():
    doc = "psi: list[float]\n    the ground state; its normalization is arbitrary.\n"
    assert conventions_at_root("", doc=doc) == {"normalization"}
