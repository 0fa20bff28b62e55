"""The special functions physicists write are read, evaluated and proved as themselves, and a
function the grader does not know is never "shown different" by values made up for it.

Examples written for issue 28 (class 6); each names the rule it checks."""

from __future__ import annotations

import time

import mpmath
import pytest
import sympy

from critpt_grader.codec import encode
from critpt_grader.codec.values import Symbolic
from critpt_grader.compare import Policy, compare_values
from critpt_grader.errors import GrammarError
from critpt_grader.symbolic import decide, parse
from critpt_grader.symbolic.functions import (
    MAX_ORDER,
    SPECIAL_FUNCTIONS,
    numeric_form,
    struveh,
)
from critpt_grader.symbolic.numeric import Ladder, NoValue, TooCostly
from critpt_grader.symbolic.parse import LIMIT_CODES
from critpt_grader.symbolic.printer import to_text
from critpt_grader.symbolic.rewrites import special_function_forms

S = Symbolic
POSITIVE = {"x": {"positive": True}}
REAL = {"x": {"real": True}}
WHOLE = {"n": {"integer": True, "nonnegative": True}}


def status(expected: str, candidate: str, symbols=None) -> str:
    return decide(parse(expected, symbols), parse(candidate, symbols)).status


def refused(text: str) -> str:
    with pytest.raises(GrammarError) as caught:
        parse(text)
    return caught.value.code


# --- the grammar knows them ------------------------------------------------------------------

x, y, a, m = sympy.symbols("x y a m")
n = sympy.Symbol("n", integer=True, nonnegative=True)
k = sympy.Symbol("k", positive=True)

# One SymPy value per name of the table (and the names SymPy prints them by).
PRINTED = [
    sympy.polylog(3, x),
    sympy.zeta(3, x),
    sympy.dirichlet_eta(x),
    sympy.dirichlet_eta(x, y),
    sympy.lerchphi(x, 2, y),
    sympy.harmonic(x),
    sympy.harmonic(x, 2),
    sympy.beta(x, y),
    sympy.uppergamma(y, x),
    sympy.lowergamma(y, x),
    sympy.polygamma(0, x),
    sympy.elliptic_k(m),
    sympy.elliptic_e(m),
    sympy.elliptic_e(x, m),
    sympy.elliptic_f(x, m),
    sympy.elliptic_pi(y, m),
    sympy.elliptic_pi(n, x, m),
    sympy.airyai(x),
    sympy.airybi(x),
    sympy.airyaiprime(x),
    sympy.airybiprime(x),
    sympy.jn(n, x),
    sympy.yn(2, x),
    sympy.hankel1(y, x),
    sympy.hankel2(y, x),
    struveh(0, k),
    sympy.hyper((), (), x),
    sympy.hyper((1, 2), (3,), x),
    sympy.hyper((sympy.Rational(1, 2),), (), -(x**2)),
    sympy.legendre(n, x),
    sympy.legendre(3, x),
    sympy.assoc_legendre(n, 2, x),
    sympy.hermite(n, x),
    sympy.chebyshevt(n, x),
    sympy.chebyshevu(n, x),
    sympy.laguerre(n, x),
    sympy.assoc_laguerre(n, y, x),
    sympy.gegenbauer(n, y, x),
    sympy.jacobi(n, y, 2, x),
    sympy.Ynm(n, 1, x, y),
    sympy.LambertW(x),
    sympy.LambertW(x, -1),
    sympy.Ei(x),
    sympy.expint(y, x),
    sympy.E1(x),
    sympy.li(x),
    sympy.Li(x),
    *(f(x) for f in (sympy.Si, sympy.Ci, sympy.Shi, sympy.Chi)),
    sympy.fresnels(x),
    sympy.fresnelc(x),
    sympy.sinc(x),
    sympy.erfinv(x),
    sympy.erfcinv(x),
    sympy.erf2(x, y),
    sympy.besselj(y, k) * sympy.polylog(2, -sympy.exp(k)),
]


def _symbols_of(expr) -> dict:
    symbols: dict = {}
    encode([expr], symbols=symbols)
    return symbols


@pytest.mark.parametrize("value", PRINTED, ids=str)
def test_a_sympy_special_function_prints_into_text_that_reads_back_as_itself(value):
    text = to_text(value)
    assert parse(text, _symbols_of(value)) == value, text


def test_every_name_of_the_table_is_a_function_when_called_and_a_symbol_when_bare():
    for name, spec in SPECIAL_FUNCTIONS.items():
        assert parse(name) == sympy.Symbol(name)
        arguments = ", ".join(
            ["()"] * len(spec.tuples) + ["x"] * (spec.arities[0] - len(spec.tuples))
        )
        value = parse(f"{name}({arguments})")
        assert not isinstance(value, sympy.core.function.AppliedUndef), name


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("polylog(x)", "invalid_arity"),
        ("hermite(3, x, y)", "invalid_arity"),
        ("hyper(1, (2,), x)", "type_error"),
        ("hyper((1, 2, 3, 4, 5, 6, 7, 8, 9), (1,), x)", "too_many_parameters"),
        ("gegenbauer(5/2, a, x)", "invalid_argument"),  # SymPy builds a wrong polynomial
        ("jacobi(-1, a, b, x)", "invalid_argument"),
        ("laguerre(1/2, x)", "invalid_argument"),
        ("hermite(10**8, x)", "order_too_large"),
        ("polylog(10**9, x)", "order_too_large"),
        ("polylog(-10**5, x)", "order_too_large"),
        ("hyper((10**6, 1), (2,), x)", "order_too_large"),
        ("besselj(10**6, x)", "order_too_large"),
        ("LambertW(x, 10**4)", "order_too_large"),
        ("legendre(exp(exp(exp(9))), x)", "order_too_large"),
    ],
)
def test_text_past_a_special_functions_limits_is_refused_before_sympy_builds_it(text, code):
    started = time.thread_time()  # CPU, not wall: load-proof
    assert refused(text) == code
    assert time.thread_time() - started < 0.5


def test_an_order_past_the_limit_is_a_limit_of_the_text_never_evidence():
    assert {"order_too_large", "too_many_parameters"} <= LIMIT_CODES
    # A candidate past a limit is a mismatch; an expectation past one is the task's fault.
    assert compare_values(S("x"), S("hermite(1000, x)")).status == "mismatch"
    assert compare_values(S("hermite(1000, x)"), S("x")).status == "invalid"


def test_polynomials_expand_while_read_only_for_small_orders():
    assert parse("hermite(3, x)") == 8 * x**3 - 12 * x
    assert parse("legendre(2, x)") == 3 * x**2 / 2 - sympy.Rational(1, 2)
    started = time.thread_time()
    for text in ("hermite(200, x)", "jacobi(12, a, b, x)", "uppergamma(100, x)", "expint(-200, x)"):
        value = parse(text, {"a": {}, "b": {}})
        assert not value.is_Add, text  # left as the call: no sum of hundreds of terms
    assert time.thread_time() - started < 0.5


def test_the_empty_tuple_is_read_as_an_argument_but_is_no_value_on_its_own():
    assert parse("hyper((), (), x)") == sympy.hyper((), (), x)
    assert refused("()") == "syntax_error"


# --- evaluated by mpmath at a point, never expanded by SymPy there ---------------------------

Z = sympy.Rational(1234, 997) - sympy.I * sympy.Rational(555, 997)


def _value(expr) -> complex:
    return complex(Ladder(expr).settle().value)


def test_a_non_integer_degree_at_a_point_is_evaluated_by_mpmath_not_sympys_polynomial():
    # SymPy turns gegenbauer(7/3, a, z) into a quadratic; mpmath's value is the function's.
    d = sympy.Symbol("d")
    symbolic = sympy.gegenbauer(d, sympy.Rational(5, 7), x)  # a symbol degree: kept as a call
    at_point = numeric_form(symbolic).xreplace({d: sympy.Rational(7, 3), x: Z})
    want = complex(mpmath.gegenbauer(mpmath.mpf(7) / 3, mpmath.mpf(5) / 7, complex(Z)))
    assert abs(_value(at_point) - want) < 1e-12 * abs(want)
    wrong = complex(sympy.N(symbolic.xreplace({d: sympy.Rational(7, 3), x: Z}), 30))
    assert abs(wrong - want) > 0.1  # what SymPy's own substitution gives


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        (sympy.assoc_laguerre(3, sympy.Rational(2, 7), Z), mpmath.laguerre(3, 2 / 7, complex(Z))),
        (sympy.laguerre(4, Z), mpmath.laguerre(4, 0, complex(Z))),
        (sympy.jn(sympy.Rational(1, 3), Z), None),  # SymPy has no value for it
        (sympy.erfcinv(sympy.Rational(1, 3)), mpmath.erfinv(1 - mpmath.mpf(1) / 3)),
        (sympy.erf2(sympy.Rational(1, 3), Z), mpmath.erf(complex(Z)) - mpmath.erf(1 / 3)),
        (sympy.dirichlet_eta(Z, sympy.Rational(2, 3)), None),
        (struveh(1, Z), mpmath.struveh(1, complex(Z))),
    ],
    ids=str,
)
def test_calls_sympy_cannot_evaluate_have_mpmaths_value(expr, want):
    got = _value(numeric_form(expr))
    if want is None:
        assert got == got  # a finite value
    else:
        assert abs(got - complex(want)) < 1e-12 * max(1, abs(complex(want)))


def test_a_spherical_bessel_function_on_the_negative_axis_is_the_real_one():
    # sqrt(pi/2)/sqrt(z) * J_{1/2}(z) is sin(z)/z for every z; SymPy's sqrt(1/z) form is not.
    for point in (sympy.Rational(-5, 2), sympy.Rational(7, 3), -3 + sympy.I):
        got = _value(numeric_form(sympy.jn(0, point, evaluate=False)))
        assert abs(got - complex(sympy.N(sympy.sin(point) / point, 30))) < 1e-20


@pytest.mark.parametrize(
    "text",
    [
        "hermite(10**6*n, x)",
        "polylog(-1000*n, x)",
        "besselj(300*n, x)",
        "hyper((100*n, 1), (2,), x)",
        "assoc_legendre(n, 500*n, x)",
    ],
)
def test_an_order_that_grows_past_the_limit_at_a_point_is_refused_before_any_work(text):
    expr = parse(text, WHOLE)
    point = {sympy.Symbol("n", integer=True, nonnegative=True): 7, sympy.Symbol("x"): Z}
    started = time.thread_time()
    with pytest.raises(TooCostly, match="order beyond"):
        Ladder(numeric_form(expr).xreplace(point)).settle()
    assert time.thread_time() - started < 0.5
    assert MAX_ORDER == 256


def test_an_unknown_call_has_no_value_to_evaluate():
    with pytest.raises(NoValue):
        Ladder(parse("tr(2)")).settle()


# --- each definition the prover rewrites by holds on the whole plane --------------------------

POINTS = [sympy.Rational(7, 3), sympy.Rational(-5, 2), 1 + 2 * sympy.I, -3 - sympy.I, -3 + sympy.I]
DEFINITIONS = [
    sympy.sinc(x),
    sympy.beta(x, sympy.Rational(7, 5)),
    sympy.dirichlet_eta(x),
    sympy.dirichlet_eta(x, sympy.Rational(2, 3)),
    sympy.harmonic(x),
    sympy.harmonic(x, 3),
    sympy.Li(x),
    sympy.li(x),
    sympy.erf2(x, sympy.Rational(1, 3)),
    sympy.hankel1(sympy.Rational(1, 3), x),
    sympy.hankel2(2, x),
    sympy.jn(2, x),
    sympy.jn(sympy.Rational(1, 3), x),
    sympy.yn(1, x),
    sympy.airyai(x),
    sympy.airybi(x),
    sympy.besselk(sympy.Rational(1, 3), x),
    sympy.exp(2 * sympy.LambertW(x)),
    sympy.exp(-sympy.LambertW(x, -1) + x),
]


@pytest.mark.parametrize("call", DEFINITIONS, ids=str)
def test_a_special_function_rewrite_matches_mpmath_on_the_whole_plane(call):
    """Each rewrite is checked at complex points and on both halves of the real axis (cuts
    included): an identity only on part of the plane would prove a wrong answer equal."""
    rewritten = special_function_forms(call)
    assert rewritten != call
    for point in POINTS:
        want = _value(numeric_form(call.xreplace({x: point})))
        got = _value(numeric_form(rewritten.xreplace({x: point})))
        assert abs(got - want) <= 1e-15 * max(1, abs(want)), (call, point, got, want)


# --- correct forms are proved, wrong ones are different ----------------------------------------

CORRECT = [
    ("polylog(2, 1/2)", "pi**2/12 - log(2)**2/2", None),
    ("polylog(3, -1)", "-3*zeta(3)/4", None),
    ("polylog(s, -1)", "-dirichlet_eta(s)", None),  # as SymPy rewrites it
    ("dirichlet_eta(s)", "(1 - 2**(1 - s))*zeta(s)", None),
    ("sinc(x)", "sin(x)/x", None),
    ("beta(x, 2)", "1/(x*(x + 1))", None),
    ("LambertW(x)", "x*exp(-LambertW(x))", None),
    ("Ei(log(x))", "li(x)", POSITIVE),
    ("li(x) - li(2)", "Li(x)", None),
    ("expint(2, x)", "exp(-x) - x*E1(x)", None),
    ("hermite(5, x)", "32*x**5 - 160*x**3 + 120*x", None),
    ("hermite(n, -x)", "(-1)**n*hermite(n, x)", WHOLE),
    ("legendre(3, x)", "(5*x**3 - 3*x)/2", None),
    ("assoc_laguerre(2, a, x)", "(a + 1)*(a + 2)/2 - (a + 2)*x + x**2/2", None),
    ("gegenbauer(2, a, x)", "2*a*(a + 1)*x**2 - a", None),
    ("Ynm(1, 0, t, p)", "sqrt(3)*cos(t)/(2*sqrt(pi))", None),
    ("jn(1, x)", "sin(x)/x**2 - cos(x)/x", None),
    ("yn(0, x)", "-cos(x)/x", None),
    ("jn(n, x)", "sqrt(pi/2)*besselj(n + 1/2, x)/sqrt(x)", None),
    ("jn(n, x)", "sqrt(pi/(2*x))*besselj(n + 1/2, x)", POSITIVE),
    ("hankel1(1/2, x)", "besselj(1/2, x) + I*bessely(1/2, x)", None),
    (
        "fresnels(x)",
        "(1 + I)/4*(erf((1 + I)*sqrt(pi)*x/2) - I*erf((1 - I)*sqrt(pi)*x/2))",
        None,
    ),
    (
        "fresnelc(x)",
        "(1 - I)/4*(erf((1 + I)*sqrt(pi)*x/2) + I*erf((1 - I)*sqrt(pi)*x/2))",
        None,
    ),
    ("airyai(0)", "3**(1/3)/(3*gamma(2/3))", None),
    ("airyai(x)", "sqrt(x/3)*besselk(1/3, 2*x**(3/2)/3)/pi", POSITIVE),
    ("hyper((1, 1), (2,), -x)", "log(1 + x)/x", None),
    ("elliptic_k(m)", "pi*hyper((1/2, 1/2), (1,), m)/2", None),
    ("uppergamma(1/2, x)", "sqrt(pi)*erfc(sqrt(x))", None),
    ("erfcinv(x)", "erfinv(1 - x)", None),
]


@pytest.mark.parametrize(("expected", "candidate", "symbols"), CORRECT)
def test_a_correct_special_function_form_is_proved_equal(expected, candidate, symbols):
    assert status(expected, candidate, symbols) == "equal"
    assert status(candidate, expected, symbols) == "equal"


WRONG = [
    ("polylog(2, 1/2)", "pi**2/12 + log(2)**2/2", None),
    ("sinc(x)", "cos(x)/x", None),
    ("beta(x, 2)", "1/(x*(x + 2))", None),
    ("LambertW(x)", "exp(-LambertW(x))", None),
    ("LambertW(x)", "LambertW(x, -1)", None),
    ("Ei(x)", "Chi(x) + Shi(x)", REAL),  # true for x > 0 only: Chi's log turns at x < 0
    ("Ei(x)", "-E1(-x)", REAL),
    ("hermite(5, x)", "32*x**5 - 160*x**3 + 100*x", None),
    ("hermite(n, -x)", "hermite(n, x)", WHOLE),
    ("legendre(3, x)", "(5*x**3 + 3*x)/2", None),
    ("assoc_laguerre(2, a, x)", "(a + 1)*(a + 2)/2 - (a + 1)*x + x**2/2", None),
    ("Ynm(1, 0, t, p)", "sqrt(3)*sin(t)/(2*sqrt(pi))", None),
    ("jn(1, x)", "sin(x)/x**2 + cos(x)/x", None),
    ("jn(n, x)", "sqrt(pi/(2*x))*besselj(n + 1/2, x)", None),  # wrong for x < 0
    ("yn(0, x)", "cos(x)/x", None),
    (
        "fresnels(x)",
        "(1 + I)/4*(erf((1 + I)*sqrt(pi)*x/2) + I*erf((1 - I)*sqrt(pi)*x/2))",
        None,
    ),
    ("fresnelc(x)", "fresnels(x)", None),
    ("airyai(x)", "sqrt(x/3)*besselk(2/3, 2*x**(3/2)/3)/pi", POSITIVE),
    ("airyai(x)", "sqrt(x/3)*besselk(1/3, 2*x**(3/2)/3)/pi", None),  # true for x > 0 only
    ("airybi(0)", "3**(1/3)/gamma(2/3)", None),
    ("hyper((1, 1), (2,), -x)", "log(1 - x)/x", None),
    ("elliptic_k(m)", "pi*hyper((1/2, 1/2), (2,), m)/2", None),
    ("zeta(2, 1/2)", "pi**2/4", None),
    ("struveh(1/2, x)", "sqrt(2/(pi*x))*(1 + cos(x))", POSITIVE),
    ("Si(x)", "Si(-x)", None),
]


@pytest.mark.parametrize(("expected", "candidate", "symbols"), WRONG)
def test_a_wrong_special_function_form_is_different(expected, candidate, symbols):
    assert status(expected, candidate, symbols) == "different"


@pytest.mark.parametrize(
    ("expected", "candidate", "symbols"),
    [
        ("zeta(2, 1/2)", "pi**2/2", None),
        ("struveh(1/2, x)", "sqrt(2/(pi*x))*(1 - cos(x))", POSITIVE),
        ("Ei(x)", "Chi(x) + Shi(x)", POSITIVE),
        ("chebyshevt(n, cos(x))", "cos(n*x)", {"n": {"integer": True}}),
    ],
)
def test_a_correct_form_the_prover_cannot_close_agrees_and_is_never_zero(
    expected, candidate, symbols
):
    verdict = compare_values(S(expected), S(candidate), Policy(symbols=symbols or {}))
    assert verdict.status in ("equal", "uncertain"), verdict
    if verdict.status == "uncertain":
        assert "agrees" in verdict.leaves[0].reason


# --- a function the grader does not know -------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("tr(psi**2)", "tr(psi)**2"),
        ("Li2(x)", "pi**2/6 - log(x)*log(1 - x) - Li2(1 - x)"),  # a true identity
        ("foo(x)", "x"),
        ("foo(x)", "bar(x)"),
        ("Integral(x**2, (x, 0, 1))", "1/3"),
        ("meijerg(((1,), ()), ((), (0,)), x)", "exp(-x)"),
        ("f(g(x))", "f(x)"),
    ],
)
def test_an_unknown_function_is_never_shown_different_by_made_up_values(a, b):
    for first, second in ((a, b), (b, a)):
        decision = decide(parse(first), parse(second))
        assert decision.status != "different", decision
        assert decision.method != "sampling"


def test_an_unknown_function_is_still_compared_by_its_structure():
    assert status("tr(psi) + tr(psi**2)", "tr(psi**2) + tr(psi)") == "equal"
    assert status("f(x)*(x + 1)", "x*f(x) + f(x)") == "equal"
    # A difference of 1 whatever f is: an exact fact, not a made-up value.
    assert status("f(x) + 1", "f(x)") == "different"


def test_an_unknown_function_makes_an_expectation_unscorable_and_a_candidate_valueless():
    # The expectation has no value: the row cannot be scored, whatever the candidate.
    verdict = compare_values(S("Li2(x)"), S("polylog(2, x)"))
    assert verdict.status == "uncertain"
    assert "cannot be evaluated" in verdict.leaves[0].reason
    # The candidate has none where the expectation has one: blame follows the value.
    verdict = compare_values(S("polylog(2, x)"), S("Li2(x)"))
    assert verdict.status == "mismatch"
    assert "Li2() is a function the grader does not know" in verdict.leaves[0].reason
    # Against a number, the same.
    assert compare_values(S("Li2(x)"), 1.5).status == "uncertain"
    assert compare_values(1.5, S("Li2(x)")).status == "mismatch"


def test_the_same_unknown_text_on_both_sides_is_equal():
    assert compare_values(S("Li2(x) + 1"), S("1 + Li2(x)")).status == "equal"


# --- through the comparator ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "candidate", "wanted"),
    [
        ("pi**2/12 - log(2)**2/2", "polylog(2, 1/2)", "equal"),
        ("pi**2/12 + log(2)**2/2", "polylog(2, 1/2)", "mismatch"),
        ("sin(x)/x", "sinc(x)", "equal"),
        ("cos(x)/x", "sinc(x)", "mismatch"),
        ("1/(x*(x+1))", "beta(x, 2)", "equal"),
        ("-3*zeta(3)/4", "polylog(3, -1)", "equal"),
    ],
)
def test_special_functions_through_the_comparator(expected, candidate, wanted):
    assert compare_values(S(expected), S(candidate)).status == wanted


def test_a_special_function_constant_meets_a_float():
    # polylog(3, 1/2) = 0.5372131936080402...: evaluated by mpmath to 60 digits.
    assert compare_values(0.5372131936080402, S("polylog(3, 1/2)")).status == "equal"
    assert compare_values(0.5372131936, S("polylog(3, 1/2)")).status == "mismatch"
    assert compare_values(S("hermite(40, 1/3)"), 1.0).status == "mismatch"


def test_a_rung_whose_digits_the_next_contradicts_certifies_no_difference():
    """SymPy's error bound for cos of a complex number with a large imaginary part is too
    small at 30 and 60 digits: T_8(cos z) and cos(8 z) seemed to differ there (a correct
    answer scored 0). A difference counts only where the rung above confirms it."""
    from critpt_grader.symbolic.numeric import difference

    z = sympy.Rational(-17136, 997) - sympy.I * sympy.Rational(36000, 997)
    polynomial = sympy.chebyshevt(8, sympy.Symbol("y")).xreplace({sympy.Symbol("y"): sympy.cos(z)})
    found = difference(Ladder(polynomial), Ladder(sympy.cos(8 * z)), 0)
    assert found.verdict == "vanishes"
    nudged = Ladder(sympy.cos(8 * z) * (1 + sympy.Rational(1, 10**40)))
    assert difference(Ladder(polynomial), nudged, 0).verdict == "certified"
