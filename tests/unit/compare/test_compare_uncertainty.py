"""Verdict integrity: "uncertain" only when the evidence says "equal", symbolic text read
exactly, undefined values never equal, constancy proved, complex tolerances by modulus.

Examples written for the verdict-integrity issue; each names the rule it checks.
"""

from __future__ import annotations

import cmath
import random

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.compare import Policy, compare_values
from critpt_grader.compare.uncertainty import settle
from critpt_grader.symbolic.sampling import REQUIRED_POINTS, Evidence

S = Symbolic
BUDGET = 10.0  # generous, so verdicts do not depend on machine load
POSITIVE = Policy(symbols={"x": {"positive": True}}, proof_step_cpu_seconds=BUDGET)
OVERFLOW = "sin(exp(exp(exp(9))))"  # no finite value the host can compute


def compare(expected, observed, policy: Policy | None = None):
    return compare_values(expected, observed, policy or Policy(proof_step_cpu_seconds=BUDGET))


def status(expected, observed, policy: Policy | None = None) -> str:
    return compare(expected, observed, policy).status


# --- ITEM 2: a candidate that cannot be evaluated is a mismatch ------------------------------


@pytest.mark.parametrize(
    "expected",
    [1.0, 0.5, S("1/2"), S("sin(1)"), S("sin(x)"), S("x**2 + 1"), complex(1, 2), 3],
)
def test_a_candidate_the_host_cannot_evaluate_is_a_mismatch(expected):
    verdict = compare(expected, S(OVERFLOW))
    assert verdict.status == "mismatch", verdict
    assert compare(expected, S(f"x + {OVERFLOW}")).status == "mismatch"


def test_an_expectation_the_host_cannot_evaluate_is_unscorable():
    assert status(S(OVERFLOW), 0.5) == "uncertain"
    assert status(S(OVERFLOW), S("1/2")) == "uncertain"
    # opaque calls nested in opaque calls have no consistent values
    assert status(S("f(g(x))"), S("x")) == "uncertain"
    assert status(S("x"), S("f(g(x))")) == "mismatch"


def test_agreement_at_every_point_without_a_proof_is_uncertain():
    verdict = compare(S("pi/2"), S("acos(x) + asin(x)"))
    assert verdict.status == "uncertain"
    assert "agrees at all" in verdict.leaves[0].reason
    assert status(S("acos(x) + asin(x)"), S("pi/2")) == "uncertain"


def test_a_difference_certified_at_a_point_is_a_mismatch_however_small():
    # Not a polynomial, not decided by assumptions: only the points see it.
    assert status(S("sin(x)"), S("sin(x)*(1 + 10**-30)")) == "mismatch"
    assert status(S("acos(x) + asin(x)"), S("pi/2 + 10**-40*sin(x)")) == "mismatch"


def test_infinities_inside_expressions():
    assert status(S("oo"), S("x + oo")) == "mismatch"  # x complex: oo + i*Im(x) is not oo
    assert status(S("x + oo"), S("y + oo")) == "uncertain"  # the expected has no value
    assert status(S("x + oo"), S("x + oo")) == "equal"


def test_grammar_limits_candidate_is_a_mismatch_expectation_invalid():
    over = "x**100"  # an exponent past the limit
    assert status(S("x"), S(over)) == "mismatch"
    assert status(S(over), S("x")) == "invalid"
    assert status(S(over), S(over)) == "invalid"  # identical text is no way around it
    many = " + ".join(f"x{i}" for i in range(40))  # more symbols than allowed
    assert status(S("x0"), S(many)) == "mismatch"
    assert status(S(many), S("x0")) == "invalid"
    # Legacy text over a limit is unreadable (invalid), not a category that fails
    assert status(Legacy(over), S("x**2")) == "invalid"
    assert status(Legacy("x**2"), "x^100") == "mismatch"


def test_a_set_member_that_cannot_be_evaluated_keeps_the_set_from_uncertain():
    expected = WireSet((S("pi/2"), S("1")))
    assert status(expected, WireSet((S("acos(x) + asin(x)"), S("1")))) == "uncertain"
    assert status(expected, WireSet((S(OVERFLOW), S("1")))) == "mismatch"


# --- ITEM 6: symbolic text is read exactly -----------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "observed", "wanted"),
    [
        (S("t"), S("t*(1 + 3e-33)"), "mismatch"),  # was a false "equal"
        (S("0.9*y"), S("0.7*y + 0.2*y"), "equal"),  # was a mismatch
        (S("2"), S("5e18 + 2 - 5e18"), "equal"),  # was 0
        (2, S("5e18 + 2 - 5e18"), "equal"),
        (S("x/10"), S("0.1*x"), "equal"),
        (S("1/3"), S("0.33333333333"), "mismatch"),  # rounded beyond the tolerance
        (S("1/3"), S("0.333333333333333"), "equal"),  # decimal text: judged as a float
        (S("0.3"), S("0.1 + 0.2"), "equal"),  # decimal text is not binary arithmetic
        (0.30000000000000004, S("0.1 + 0.2"), "equal"),  # the float meets it with the rtol
        (S("0.333333333333333"), S("0.3333333333333333"), "equal"),  # decimals: tolerance
    ],
)
def test_decimals_are_exact(expected, observed, wanted):
    assert status(expected, observed) == wanted


@pytest.mark.parametrize("text", ["0*oo", "oo - oo", "0/0", "zoo", "nan", "x/0", "zoo*x + 1"])
def test_identical_undefined_text_is_never_equal(text):
    assert status(S(text), S(text)) == "mismatch"
    assert status(S(text), S(text), POSITIVE) == "mismatch"


@pytest.mark.parametrize("text", ["0*oo", "0/0", "nan", "x/0", "1 + 0*oo"])
def test_identical_undefined_legacy_math_is_never_equal(text):
    # (Legacy "oo - oo" or "zoo" read as categories, exact strings, by the legacy rules.)
    assert status(Legacy(text), Legacy(text)) == "mismatch"


def test_defined_infinities_still_equal_themselves():
    assert status(S("oo"), S("oo")) == "equal"
    assert status(S("-oo"), S("-1*oo")) == "equal"
    assert status(float("inf"), S("oo")) == "equal"


@pytest.mark.parametrize(
    ("expression", "number", "policy"),
    [
        ("sin(x)**2 + cos(x)**2", 1, None),
        ("sin(x)**2 + cos(x)**2", 1.0, None),
        ("exp(log(x))/x", 1, POSITIVE),
        ("(x**2 - 1)/(x - 1) - x", 1, None),
        ("(x**2 - 1)/(x - 1) - x", 1.0, None),
        ("pi + sin(x)**2 + cos(x)**2", 4.141592653589793, None),  # proved constant, then rtol
        ("(x + 1)**2 - x**2 - 2*x", ExactComplex(1, 0), None),
    ],
)
def test_an_expression_proved_constant_equals_its_number(expression, number, policy):
    assert status(S(expression), number, policy) == "equal"
    assert status(number, S(expression), policy) == "equal"


def test_an_expression_that_varies_never_equals_a_number():
    assert status(2.0, S("2*x")) == "mismatch"
    assert status(S("2*x"), 2.0) == "mismatch"
    tolerant = Policy(task_rtol="1e-6", proof_step_cpu_seconds=BUDGET)
    # within the tolerance at every point, yet not a number
    assert status(1.0, S("1 + 1e-9*sin(x)"), tolerant) == "mismatch"
    assert status(1.0, S("sin(x)**2 + cos(x)**2 + 1e-9"), tolerant) == "equal"
    assert status(1.0, S("sin(x)**2 + cos(x)**2 + 1e-3"), tolerant) == "mismatch"


def test_an_unproved_constant_against_a_number_follows_the_points():
    assert status(1.5707963267948966, S("acos(x) + asin(x)")) == "uncertain"
    assert status(S("acos(x) + asin(x)"), 1.5707963267948966) == "uncertain"
    assert status(1.6, S("acos(x) + asin(x)")) == "mismatch"
    assert status(1.0, S(f"x - x + {OVERFLOW}")) == "mismatch"


def test_a_constant_meets_an_exact_int_by_proof_when_evaluation_cannot_decide():
    # the 60-digit value carries an error bound, and an int allows no width at all
    assert status(1, S("sin(1)**2 + cos(1)**2")) == "equal"
    assert status(1, S("sin(1)**2 + cos(1)**2 + 10**-70")) == "mismatch"


def test_finite_sets_written_as_text_match_member_by_member():
    assert status(S("FiniteSet(2, (x+1)**2)"), S("FiniteSet(x**2 + 2*x + 1, 2)")) == "equal"
    assert status(S("FiniteSet(2, (x+1)**2)"), S("FiniteSet(x**2 + 2*x + 2, 2)")) == "mismatch"
    assert status(WireSet((2, S("(x+1)**2"))), S("FiniteSet(x**2 + 2*x + 1, 2)")) == "equal"


def test_unions_are_compared_by_set_algebra():
    union = "Union(Interval(0, 1), Interval(2, 3))"
    assert status(S(union), S("Union(Interval(2, 3), Interval(0, 1))")) == "equal"
    assert status(S(union), S("Union(Interval(0, 1), Interval(2, 4))")) == "mismatch"


def test_interval_ends_at_infinity_are_compared():
    assert status(S("Interval(-oo, 1)"), S("Interval(-oo, 2)")) == "mismatch"
    assert status(S("Interval(-oo, sqrt(2))"), S("Interval(-oo, 2**(1/2))")) == "equal"


# --- the rule in one place ---------------------------------------------------------------------


def _evidence(**fields) -> Evidence:
    base = dict(tried=8, counted=8, agreed=8, required=REQUIRED_POINTS)
    return Evidence(**{**base, **fields})


def test_settle_is_uncertain_only_on_agreement_at_enough_points():
    assert settle(_evidence(), "unproved")[0] == "uncertain"
    assert settle(_evidence(agreed=7, second_failure="differs at x = 1"), "u")[0] == "mismatch"
    assert settle(None, "unproved")[0] == "mismatch"  # nothing evaluated: not vacuous agreement
    vacuous = _evidence(tried=0, counted=0, agreed=0)
    assert settle(vacuous, "unproved")[0] == "mismatch"
    few = _evidence(counted=2, agreed=2, first_failure="no finite value at x = 1")
    assert settle(few, "unproved")[0] == "uncertain"  # the expectation's own defect
    # Too few points, and no failure of the expectation: never the candidate's reward.
    few_points = _evidence(tried=1, counted=1, agreed=1)
    assert settle(few_points, "unproved")[0] == "mismatch"
    constant = _evidence(tried=1, counted=1, agreed=1, required=1)
    assert settle(constant, "unproved")[0] == "uncertain"


# --- properties ---------------------------------------------------------------------------------

x, y = sympy.symbols("x y")
_ATOMS = st.sampled_from([x, y, sympy.Integer(2), sympy.Rational(-1, 3), sympy.pi, sympy.I])
_UNARY = st.sampled_from([sympy.sin, sympy.exp, sympy.sqrt, sympy.log, sympy.acos, sympy.asin])


def _combine(children):
    return st.one_of(
        st.builds(sympy.Add, children, children),
        st.builds(sympy.Mul, children, children),
        st.builds(lambda b, n: b**n, children, st.integers(-2, 3)),
        st.builds(lambda f, a: f(a), _UNARY, children),
    )


SMALL = st.recursive(_ATOMS, _combine, max_leaves=4).filter(
    lambda e: isinstance(e, sympy.Expr) and not e.has(sympy.zoo, sympy.nan, sympy.oo)
)
# Candidates near their expectation, as text: unprovable rewrites, tiny perturbations,
# values the host cannot evaluate.
_CANDIDATES = st.sampled_from(
    [
        "{e}",
        "{e} + acos(x) + asin(x) - pi/2",
        "({e})*(1 + 10**-30*sin(x))",
        "{e} + " + OVERFLOW + " - sin(1)",
        "{e} + " + OVERFLOW + "*x",
        "{e} + 10**-40",
        "{e} + 10**-40*acos(y)",
        "({e})*(acos(y) + asin(y))*2/pi",
    ]
)
PROPERTY = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


def _value(expr: sympy.Expr, point: dict) -> complex | None:
    try:
        value = complex(expr.xreplace(point).evalf(30))
    except (TypeError, ValueError, ArithmeticError):
        return None
    return value if cmath.isfinite(value) else None


@pytest.mark.slow  # ~6 s of symbolic proofs
@PROPERTY
@given(SMALL, _CANDIDATES)
def test_a_candidate_is_uncertain_only_if_it_agrees_wherever_it_can_be_checked(expected, form):
    from critpt_grader.symbolic.parse import parse
    from critpt_grader.symbolic.printer import to_text

    text = to_text(expected)
    candidate_text = form.format(e=text)
    verdict = compare_values(S(text), S(candidate_text), Policy(proof_step_cpu_seconds=1.5))
    if verdict.status != "uncertain":
        return
    candidate = parse(candidate_text)
    rng = random.Random(11)
    for _ in range(4):  # fresh points, none of the comparator's own
        point = {
            x: sympy.Rational(rng.randint(-300, 300), 101) + sympy.I * rng.randint(1, 9) / 13,
            y: sympy.Rational(rng.randint(1, 300), 103),
        }
        e_value = _value(expected, point)
        if e_value is None:
            continue  # the expectation has no value here: no evidence either way
        c_value = _value(candidate, point)
        assert c_value is not None, (expected, candidate, point)
        assert abs(e_value - c_value) <= 1e-9 * max(1.0, abs(e_value)), (expected, candidate)


def test_a_non_finite_complex_is_equal_only_with_the_same_finite_part():
    """Regression: (inf, 1) and (inf, 2) were both labelled (inf, finite) and compared equal."""
    from critpt_grader.compare import compare_values

    inf = float("inf")
    assert compare_values(complex(inf, 1), complex(inf, 2)).status == "mismatch"
    assert compare_values(complex(inf, 1), complex(inf, 1)).status == "equal"
    assert compare_values(complex(1, -inf), complex(2, -inf)).status == "mismatch"


def test_a_long_sum_of_pythagorean_pairs_equals_its_count():
    """Regression: the values at a complex point were read off a cancellation (terms near
    1e148 summing to 20) and "differed" by 2.6e148, so a correct answer scored 0."""
    import sympy

    from critpt_grader import codec
    from critpt_grader.compare import compare_values

    x = sympy.Symbol("x")
    answer = sum(sympy.sin(k * x) ** 2 + sympy.cos(k * x) ** 2 for k in range(1, 21))

    def wire(value):
        return codec.decode(codec.encode(value))

    assert compare_values(wire(sympy.Integer(20)), wire(answer)).status == "equal"
    assert compare_values(wire(sympy.Integer(21)), wire(answer)).status == "mismatch"


def test_sample_values_are_certified_digits_not_rounding_noise():
    import sympy

    from critpt_grader.symbolic.numeric import Ladder

    x = sympy.Rational(-16872, 997) + sympy.I * sympy.Rational(18024, 997)
    cancelling = sum(sympy.sin(k * x) ** 2 + sympy.cos(k * x) ** 2 for k in range(1, 21))
    settled = Ladder(cancelling).settle()
    assert abs(settled.value - 20) < 1e-25
