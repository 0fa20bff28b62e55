"""The equivalence prover (equal only by proof) and the CPU cap under it."""

from __future__ import annotations

import cmath
import functools
import json
import random
import re
import threading
import time
from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from critpt_grader.symbolic import cpu_cap as cpu_cap_module
from critpt_grader.symbolic import decide, parse
from critpt_grader.symbolic import prove as prove_module
from critpt_grader.symbolic import sampling as sampling_module
from critpt_grader.symbolic.cpu_cap import CpuCapReached, run_with_cpu_cap
from tests.support.paths import CRITPT_PUBLIC

CRITPT = CRITPT_PUBLIC
REAL = {"x": {"real": True}, "y": {"real": True}}
POSITIVE = {"x": {"positive": True}, "y": {"positive": True}}


def status(a: str, b: str, symbols=None, **kwargs) -> str:
    return decide(parse(a, symbols), parse(b, symbols), **kwargs).status


# --- required regressions -------------------------------------------------------------------


def test_a_fast_oscillation_is_never_equal_to_its_carrier():
    assert status("x + sin(840*pi*x)", "x") == "different"
    assert status("x + sin(840*pi*x)", "x", REAL) == "different"


def test_conjugate_depends_on_whether_x_is_real():
    assert status("conjugate(x)", "x") == "different"
    assert status("conjugate(x)", "x", REAL) == "equal"


def test_square_root_of_a_square():
    assert status("sqrt(x**2)", "x", REAL) == "different"
    assert status("sqrt(x**2)", "x", POSITIVE) == "equal"
    assert status("Abs(x)", "x", REAL) == "different"


def test_log_of_a_product_needs_positivity():
    assert status("log(x*y)", "log(x) + log(y)") != "equal"
    assert status("log(x*y)", "log(x) + log(y)", POSITIVE) == "equal"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("(x+2)**2", "x**2 + 4*x + 4"),
        ("sin(x)**2 + cos(x)**2", "1"),
        ("x**2 - 1", "(x-1)*(x+1)"),
        ("1/(x-1) - 1/(x+1)", "2/(x**2-1)"),
        ("exp(I*x)", "cos(x) + I*sin(x)"),
        ("gamma(x)*gamma(1-x)", "pi/sin(pi*x)"),
        ("sqrt(8)", "2*sqrt(2)"),
        ("0.5*x", "x/2"),
        ("exp(x)*exp(y)", "exp(x+y)"),
        ("sin(2*x)", "2*sin(x)*cos(x)"),
        ("tr(psi**2) + tr(psi)", "tr(psi) + tr(psi**2)"),
    ],
)
def test_identities_are_proved(a, b):
    decision = decide(parse(a), parse(b))
    assert decision.status == "equal", decision
    assert decision.method != "sampling"


@pytest.mark.parametrize(
    ("a", "b", "symbols"),
    [
        ("(x+2)**2", "x**2 + 4*x + 2", None),
        ("pi", "22/7", None),
        ("0.333333333333333", "1/3", None),
        ("x", "x + 1e-30", None),
        ("sqrt(x*y)", "sqrt(x)*sqrt(y)", REAL),
        ("(1-2*p)**l", "(1-2*p)**(l+1)", None),
        ("exp(-x**2/2)", "exp(-x**2)/2", None),
        ("cos(pi*n)", "(-1)**n", None),  # equal only for integer n
    ],
)
def test_differences_are_found(a, b, symbols):
    assert status(a, b, symbols) == "different"


def test_sample_points_respect_integer_assumptions():
    assert status("cos(pi*n)", "(-1)**n", {"n": {"integer": True}}) == "equal"
    assert status("sin(pi*n)", "0", {"n": {"integer": True}}) == "equal"
    assert status("sin(pi*n)", "0") == "different"


def test_points_reach_branch_cuts_on_the_real_axis_and_far_imaginary_parts():
    # 1/sqrt(x) and sqrt(1/x) differ only for negative real x; log(exp(x)) only for |Im x| > pi.
    assert status("sqrt(1/x)", "1/sqrt(x)") == "different"
    assert status("sqrt(1/x)", "1/sqrt(x)", POSITIVE) == "equal"
    assert status("log(exp(x))", "x") == "different"
    assert status("log(exp(x))", "x", REAL) == "equal"


@pytest.mark.parametrize("symbols", [None, REAL])
def test_an_identity_evaluated_on_a_branch_cut_is_never_different(symbols):
    # The right side reaches the cut of sqrt through cancelling imaginary parts.
    assert status("sqrt(cos(x) - 2)", "sqrt((exp(I*x) + exp(-I*x))/2 - 2)", symbols) != "different"
    assert status("log(cos(x) - 2)", "log((exp(I*x) + exp(-I*x))/2 - 2)", symbols) != "different"


def test_agreement_everywhere_without_a_proof_is_uncertain():
    # True for every complex x, but SymPy cannot prove it: samples must not decide it.
    decision = decide(parse("acos(x) + asin(x)"), parse("pi/2"))
    assert decision.status == "uncertain"
    assert decision.method == "exhausted"


def test_branch_functions_are_never_equal_by_sampling():
    for a, b in [
        ("sqrt(x*y)", "sqrt(x)*sqrt(y)"),
        ("log(x*y)", "log(x) + log(y)"),
        ("Abs(x)", "sqrt(x**2)"),
        ("arg(x*y)", "arg(x) + arg(y)"),
        ("sqrt(x)**2", "sqrt(x**2)"),
    ]:
        assert status(a, b) != "equal", (a, b)


def test_a_polynomial_check_that_raises_falls_through(monkeypatch):
    def broken(*args, **kwargs):
        raise sympy.PolynomialError("broken on purpose")

    monkeypatch.setattr(prove_module, "Poly", broken)
    decision = decide(parse("(x+2)**2"), parse("x**2 + 4*x + 4"))
    assert decision.status == "equal"
    assert decision.method != "polynomial"


def test_a_step_that_reaches_its_cpu_cap_falls_through_to_the_next(monkeypatch):
    def spin(expr):
        while True:
            pass

    rewrites = (("spin", spin), *prove_module.REWRITES)
    monkeypatch.setattr(prove_module, "REWRITES", rewrites)
    decision = decide(parse("sin(x)**2 + cos(x)**2"), parse("1"), cpu_seconds=0.3)
    assert decision.status == "equal"
    assert decision.method in {"pythagoras", "trigsimp", "simplify"}


# --- infinities, decimals, structures -------------------------------------------------------


def infinite(text: str) -> sympy.Basic:
    return parse(text, allow_infinity=True)


def test_infinities_are_handled_explicitly():
    assert decide(infinite("oo"), infinite("oo")) == prove_module.Decision(
        "equal", "the same infinity", "nonfinite"
    )
    assert decide(infinite("-oo"), infinite("-oo")).status == "equal"
    assert decide(infinite("oo"), infinite("-oo")).status == "different"
    assert decide(infinite("oo"), infinite("1")).status == "different"
    assert decide(infinite("oo"), infinite("x**2")).status == "different"
    assert decide(infinite("zoo"), infinite("1/x")).status == "different"
    assert decide(infinite("x + oo"), infinite("x + oo")).status == "equal"
    assert decide(infinite("x + oo"), infinite("y + oo")).status == "uncertain"


def test_nan_is_never_equal():
    assert decide(infinite("nan"), infinite("nan")).status == "different"
    assert decide(infinite("nan"), infinite("1")).status == "different"


@pytest.mark.parametrize("text", ["zoo", "0*oo", "oo - oo", "0/0", "x/0", "zoo + x", "nan*x"])
def test_undefined_values_never_equal_themselves(text):
    value = infinite(text)
    decision = decide(value, value)
    assert decision.status == "different", decision
    assert "never equal" in decision.reason


# --- evidence: what the points showed, by side ------------------------------------------------

OVERFLOW = "sin(exp(exp(exp(9))))"


def test_agreement_everywhere_is_reported_as_evidence():
    decision = decide(parse("acos(x) + asin(x)"), parse("pi/2"))
    assert decision.status == "uncertain"
    evidence = decision.evidence
    assert evidence.counted >= sampling_module.REQUIRED_POINTS
    assert evidence.agreed == evidence.counted
    assert evidence.first_failure is None and evidence.second_failure is None


def test_evidence_is_in_the_callers_order():
    forward = decide(parse("sin(1)"), parse(OVERFLOW))
    backward = decide(parse(OVERFLOW), parse("sin(1)"))
    assert forward.status == backward.status == "uncertain"
    assert forward.evidence.second_failure and forward.evidence.first_failure is None
    assert backward.evidence.first_failure and backward.evidence.counted == 0
    assert forward.evidence.required == 1  # a constant has one point: its value


def test_a_side_with_no_value_at_any_point_does_not_agree_vacuously():
    # An opaque call has no value (it is never given a made-up one): nothing agrees.
    decision = decide(parse("x"), parse("f(g(x))"))
    assert decision.status == "uncertain"
    assert decision.evidence.agreed == 0 and decision.evidence.second_failure
    decision = decide(parse(f"x + {OVERFLOW}"), parse("x"))
    assert decision.evidence.first_failure and decision.evidence.agreed == 0


def test_a_certified_difference_below_the_proof_threshold_is_disagreement():
    # 1e-30 relative: too small to call "different", certified nonzero: not agreement
    decision = decide(parse("sin(x)"), parse("sin(x)*(1 + 10**-30)"))
    assert decision.status == "uncertain"
    assert decision.evidence.agreed == 0 and "differ" in decision.evidence.second_failure


def test_a_constant_point_value_and_constancy():
    x_ = sympy.Symbol("x")
    value, where = sampling_module.value_at_a_point(parse("(x**2 - 1)/(x - 1) - x"), 4.0)
    assert value == 1 and where.startswith("x = ")
    assert decide(parse("(x**2 - 1)/(x - 1) - x"), value).status == "equal"
    assert sampling_module.value_at_a_point(parse("f(x)"), 4.0) is None
    assert sampling_module.value_at_a_point(x_ + parse(OVERFLOW), 4.0) is None


def test_sympy_that_cannot_print_or_sort_its_own_value_does_not_crash_the_prover():
    # SymPy orders the terms of x + sin(exp(exp(exp(9)))) by evaluating them: OverflowError.
    junk = parse(f"x + {OVERFLOW}")
    with pytest.raises(OverflowError):
        str(junk)
    assert decide(junk, parse("x")).status == "uncertain"
    assert decide(junk, junk).status == "equal"


# --- properties -----------------------------------------------------------------------------

x, y = sympy.symbols("x y")
_ATOMS = st.sampled_from([x, y, sympy.Integer(2), sympy.Rational(-1, 3), sympy.pi, sympy.I])
_UNARY = st.sampled_from([sympy.sin, sympy.exp, sympy.sqrt, sympy.log, sympy.Abs])


def _combine(children):
    return st.one_of(
        st.builds(sympy.Add, children, children),
        st.builds(sympy.Mul, children, children),
        st.builds(lambda b, n: b**n, children, st.integers(-3, 3)),
        st.builds(lambda f, a: f(a), _UNARY, children),
    )


SMALL = st.recursive(_ATOMS, _combine, max_leaves=4).filter(
    lambda e: isinstance(e, sympy.Expr) and not e.has(sympy.zoo, sympy.nan, sympy.oo)
)
PROPERTY = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


@PROPERTY
@given(SMALL)
def test_identical_texts_are_always_equal(expr):
    text = str(expr)
    assert decide(parse(text), parse(text), cpu_seconds=1).status == "equal"


@PROPERTY
@given(SMALL, SMALL)
def test_the_status_is_symmetric(a, b):
    forward = decide(a, b, cpu_seconds=1.5)
    backward = decide(b, a, cpu_seconds=1.5)
    if forward.status != backward.status:  # a busy machine can starve one of the two runs
        forward = decide(a, b, cpu_seconds=8)
        backward = decide(b, a, cpu_seconds=8)
    assert forward.status == backward.status, (forward, backward)


_TRANSFORMS = st.sampled_from(
    [
        sympy.expand,
        sympy.factor,
        lambda e: sympy.powsimp(e, force=True),  # not value-preserving for all x, y
        lambda e: sympy.expand_log(e, force=True),  # nor is this
        lambda e: e.subs(x, -x),
        lambda e: e.subs(x, sympy.conjugate(x)),
        lambda e: e.subs(x, y),
    ]
)


@PROPERTY
@given(SMALL, _TRANSFORMS)
def test_equal_never_contradicts_an_independent_evaluation(a, transform):
    b = transform(a)
    decision = decide(a, b, cpu_seconds=1.0)
    if decision.status != "equal":
        return
    assert decision.method != "sampling"
    rng = random.Random(7)
    for _ in range(3):
        point = {
            x: sympy.Rational(rng.randint(-50, 50), 17) + sympy.I * rng.randint(1, 5) / 7,
            y: sympy.Rational(rng.choice((-1, 1)) * rng.randint(1, 50), 19),
        }
        av = complex(a.xreplace(point).evalf(30))
        bv = complex(b.xreplace(point).evalf(30))
        if cmath.isfinite(av) and cmath.isfinite(bv):  # a pole of both sides proves nothing
            assert abs(av - bv) <= 1e-9 * max(1.0, abs(av), abs(bv))


@PROPERTY
@given(SMALL)
def test_a_value_preserving_rewrite_is_never_different(expr):
    for rewritten in (sympy.expand(expr), sympy.together(expr)):
        assert decide(expr, rewritten, cpu_seconds=1).status != "different"


@PROPERTY
@given(SMALL, SMALL)
def test_evidence_counts_are_consistent(a, b):
    decision = decide(a, b, cpu_seconds=1.0)
    if decision.status != "uncertain" or decision.evidence is None:
        return
    evidence = decision.evidence
    assert 0 <= evidence.agreed <= evidence.counted <= evidence.tried <= 8
    if evidence.agreed < evidence.counted:
        assert evidence.second_failure  # a counted point not agreed is always explained


def test_decimals_are_read_as_the_decimal_they_denote():
    assert status("0.1*x", "x/10") == "equal"
    assert status("1e100*x", "10**100*x") == "equal"
    assert status("0.10", "1/10") == "equal"
    assert status("0.1 + 0.2", "0.3") == "equal"  # decimal text is exact, not binary
    assert status("0.7*y + 0.2*y", "0.9*y") == "equal"
    assert status("t*(1 + 3e-33)", "t") == "different"
    assert status("5e18 + 2 - 5e18", "2") == "equal"
    assert status("3.14159265358979323846", "pi") == "different"
    # A binary float handed to decide() is read as its shortest decimal.
    assert decide(sympy.Float(0.1) * parse("x"), parse("x/10")).status == "equal"
    assert decide(0.1 + 0.2, 0.3).status == "different"  # binary arithmetic, as in Python


def test_tuples_intervals_sets_and_booleans():
    assert status("(1, (x+1)**2)", "(1, x**2 + 2*x + 1)") == "equal"
    assert status("(1, 2)", "(1, 2, 3)") == "different"
    assert status("(1, x)", "(2, x)") == "different"
    assert status("(acos(x) + asin(x), 1)", "(pi/2, 1)") == "uncertain"
    assert status("Interval(0, 2*pi)", "Interval(0, pi + pi)") == "equal"
    assert status("Interval(0, 1)", "Interval.open(0, 1)") == "different"
    assert status("Interval(0, sqrt(2))", "Interval(0, 1.414)") == "different"
    assert status("FiniteSet(2, (x+1)**2)", "FiniteSet(x**2+2*x+1, 2)") == "equal"
    assert status("FiniteSet(1, 2)", "FiniteSet(1, 3)") == "different"
    assert status("True", "True") == "equal"
    assert status("True", "False") == "different"
    assert status("(1, 2)", "Interval(1, 2)") == "different"
    assert status("x", "True") == "different"


def test_plain_numbers_are_accepted_and_text_is_not():
    assert decide(Fraction(1, 3), parse("1/3")).status == "equal"
    assert decide(0.1, parse("1/10")).status == "equal"  # binary64 0.1 reads as the decimal 0.1
    assert decide(2, parse("sqrt(4)")).status == "equal"
    with pytest.raises(TypeError):
        decide("x", parse("x"))


def test_a_different_reason_names_the_point():
    decision = decide(parse("Abs(x)"), parse("x", REAL), cpu_seconds=2)
    assert decision.status == "different"
    decision = decide(parse("Abs(x)", REAL), parse("x", REAL))
    assert decision.method == "sampling"
    assert re.search(r"x = -\d+/\d+", decision.reason)


# --- real CritPt data -----------------------------------------------------------------------


def _gold_answers() -> list[str]:
    if not CRITPT.is_dir():
        pytest.skip("CritPt public data is not available")
    answers = []
    for path in sorted(CRITPT.glob("example_challenges/*.json")):
        for problem in json.loads(path.read_text())["problems"]:
            code = problem.get("answer_code") or ""
            if "def real_answer" in code:
                for line in code.splitlines():
                    match = re.match(r"\s*F_\w+\s*=\s*(.+?)\s*(#.*)?$", line)
                    if match and "..." not in match.group(1):
                        answers.append(match.group(1).replace("sp.", ""))
    if not answers:
        pytest.skip("no gold answers in the example challenge")
    return answers


def test_gold_answers_equal_their_rewritten_forms_and_differ_from_canaries():
    symbols = {"p": {"real": True}}
    for text in _gold_answers():
        gold = parse(text, symbols)
        assert decide(gold, sympy.factor(sympy.together(gold))).status == "equal"
        assert decide(gold, sympy.expand(gold)).status == "equal"
        canary = gold.xreplace({sympy.Symbol("p", real=True): 2 * sympy.Symbol("p", real=True)})
        assert decide(gold, canary).status == "different"
        assert decide(gold, gold + sympy.Rational(1, 10**6)).status == "different"


# --- the time bound -------------------------------------------------------------------------


def _spin():
    while True:
        pass


def test_timebox_returns_values_and_propagates_errors():
    assert run_with_cpu_cap(lambda: 42, 1.0) == 42
    with pytest.raises(ZeroDivisionError):
        run_with_cpu_cap(lambda: 1 / 0, 1.0)
    with pytest.raises(CpuCapReached):
        run_with_cpu_cap(lambda: 42, 0)


def test_timebox_interrupts_python_code_on_the_main_thread():
    started = time.thread_time()  # CPU, not wall: load-proof
    with pytest.raises(CpuCapReached):
        run_with_cpu_cap(_spin, 0.2)
    assert time.thread_time() - started < 1.0


# Under hypothesis a gc callback may swallow one interrupt (reported as unraisable); the
# watchdog repeats it, which is what this test shows.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_timebox_interrupts_sympy_off_the_main_thread():
    outcome = []

    def worker():
        started = time.thread_time()  # CPU, not wall: load-proof
        try:
            run_with_cpu_cap(lambda: sympy.expand((x + y + 1) ** 400), 0.2)
        except CpuCapReached:
            outcome.append(time.thread_time() - started)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    assert outcome and outcome[0] < 1.5


def _busy_sum(seconds: float) -> tuple[int, int]:
    """Pure-Python work (where a pending asynchronous exception is delivered: between
    bytecodes) for at least ``seconds`` of wall time: (rounds done, their sum)."""
    rounds, total = 0, 0
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        total += sum(range(1000))  # 499500 a round
        rounds += 1
    return rounds, total


def test_no_interrupt_leaks_after_a_call_returns(monkeypatch):
    watchdog = cpu_cap_module._WATCHDOG
    armed = []
    arm = watchdog.arm

    def recording_arm(thread_id, deadline):
        armed.append(arm(thread_id, deadline))
        return armed[-1]

    def call(fn, bound):
        """``fn()`` under ``bound``, or None if it ran out; either way, once it is back, its
        entry is disarmed: no interrupt of it is pending or can still be raised."""
        count = len(armed)
        try:
            return run_with_cpu_cap(fn, bound)
        except CpuCapReached:
            return None
        finally:
            assert len(armed) == count + 1
            assert (armed[-1].state, armed[-1].frame) == ("done", None)

    monkeypatch.setattr(watchdog, "arm", recording_arm)
    bound = 0.002
    try:
        # Calls far shorter than their bound (one runs out only if this thread was preempted).
        results = [call(lambda: sum(range(2000)), bound) for _ in range(50)]
        # Calls about as long as their bound: the watchdog races their return.
        for i in range(50):
            raced = call(functools.partial(_busy_sum, bound * (i % 5) / 4), bound)
            assert raced is None or raced[1] == 499500 * raced[0]
        # Pure-Python work spanning many bounds and repeat periods: an interrupt of any of
        # those calls still pending, or raised again by the watchdog, would land here.
        rounds, total = _busy_sum(50 * bound + 10 * cpu_cap_module._REPEAT_SECONDS)
    except cpu_cap_module._Interrupt as stray:
        pytest.fail(f"an interrupt leaked out of a call that had returned: {stray!r}")
    assert set(results) <= {1999000, None} and 1999000 in results
    assert rounds > 0 and total == 499500 * rounds
    assert len(armed) == 100
    assert all(entry.state == "done" for entry in armed)


def test_nested_bounds_report_the_right_one():
    def inner():
        with pytest.raises(CpuCapReached):
            run_with_cpu_cap(_spin, 0.05)
        return "inner timed out, outer did not"

    assert run_with_cpu_cap(inner, 2.0) == "inner timed out, outer did not"
    with pytest.raises(CpuCapReached):
        run_with_cpu_cap(lambda: run_with_cpu_cap(_spin, 5.0), 0.1)
