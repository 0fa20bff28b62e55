"""Verdicts that depend only on the inputs: the special-function identities physicists write,
numbers read at fixed precisions, blame that follows its cause, and CPU caps instead of
clocks. Examples written for the load-independence issue; each names the rule it checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import mpmath
import pytest
import sympy

from critpt_grader.codec.values import Symbolic
from critpt_grader.compare import Policy, compare_values
from critpt_grader.symbolic import decide, parse
from critpt_grader.symbolic import numeric as numeric_module
from critpt_grader.symbolic.cpu_cap import CpuCapReached, run_with_cpu_cap
from critpt_grader.symbolic.numeric import LADDER, Ladder, difference
from critpt_grader.symbolic.rewrites import REWRITES
from tests.support.paths import REPO

S = Symbolic
POSITIVE = {"x": {"positive": True}}
GAUSS = (
    "-1/16 + sqrt(17)/16 + sqrt(34 - 2*sqrt(17))/16"
    " + sqrt(17 + 3*sqrt(17) - sqrt(34 - 2*sqrt(17)) - 2*sqrt(34 + 2*sqrt(17)))/8"
)


def decision(a: str, b: str, symbols=None):
    return decide(parse(a, symbols), parse(b, symbols))


# --- the prover knows the standard rewrites ---------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "candidate", "symbols", "methods"),
    [
        ("gamma(x+1)", "x*gamma(x)", None, {"gammasimp"}),
        ("gamma(x)*gamma(1-x)", "pi/sin(pi*x)", None, {"gammasimp"}),
        (
            "factorial(n+1)/factorial(n)",
            "n+1",
            {"n": {"integer": True, "nonnegative": True}},
            {"gammasimp", "expand_func", "simplify"},
        ),
        (
            "binomial(n, 2)",
            "n*(n-1)/2",
            {"n": {"integer": True}},
            {"gammasimp", "expand_func", "simplify"},
        ),
        ("erfi(x)", "-I*erf(I*x)", None, {"expand_func", "error functions"}),
        ("erfc(x)", "1 - erf(x)", None, {"expand_func", "error functions"}),
        ("erf(x) + erfc(x)", "1", None, {"expand_func", "error functions"}),
        ("besseli(1/2, x)", "sqrt(2/(pi*x))*sinh(x)", POSITIVE, {"half-integer Bessel"}),
        ("besselk(1/2, x)", "sqrt(pi/(2*x))*exp(-x)", POSITIVE, {"half-integer Bessel"}),
        ("besseli(1/2, x)", "sqrt(2)*sinh(x)/sqrt(pi*x)", None, {"half-integer Bessel"}),
        (
            "besselj(3/2, x)",
            "sqrt(2/pi)*(sin(x)/x - cos(x))/sqrt(x)",
            None,
            {"half-integer Bessel"},
        ),
        ("bessely(1/2, x)", "-sqrt(2/pi)*cos(x)/sqrt(x)", None, {"half-integer Bessel"}),
        ("besselk(3/2, x)", "sqrt(pi/(2*x))*exp(-x)*(1 + 1/x)", POSITIVE, {"half-integer Bessel"}),
        ("1/(exp(x)-1) + 1/2", "coth(x/2)/2", None, {"exponential form"}),
        ("1/(exp(x)+1)", "(1 - tanh(x/2))/2", None, {"exponential form"}),
        ("tanh(x)", "(exp(x)-exp(-x))/(exp(x)+exp(-x))", None, {"exponential form"}),
        ("cosh(x)**2 - sinh(x)**2", "1", None, {"exponential form", "simplify"}),
        ("(-8)**(1/3)", "1 + sqrt(3)*I", None, {"minimal polynomial"}),
        ("cbrt(-27)", "3/2 + 3*sqrt(3)*I/2", None, {"minimal polynomial"}),
        ("cos(2*pi/17)", GAUSS, None, {"minimal polynomial"}),
        ("sqrt(3 + 2*sqrt(2))", "1 + sqrt(2)", None, {"is_zero", "minimal polynomial"}),
    ],
)
def test_a_correct_special_function_form_is_proved_equal(expected, candidate, symbols, methods):
    found = decision(expected, candidate, symbols)
    assert found.status == "equal", found
    assert found.method in methods, found
    assert decision(candidate, expected, symbols).status == "equal"


@pytest.mark.parametrize(
    ("expected", "canary", "symbols"),
    [
        ("gamma(x+1)", "gamma(x)", None),
        ("gamma(x+1)", "(x+1)*gamma(x)", None),
        ("gamma(x)*gamma(1-x)", "pi/cos(pi*x)", None),
        ("erfi(x)", "I*erf(I*x)", None),
        ("erfc(x)", "1 + erf(x)", None),
        ("besseli(1/2, x)", "sqrt(2/(pi*x))*cosh(x)", POSITIVE),
        ("besselk(1/2, x)", "sqrt(pi/(2*x))*exp(x)", POSITIVE),
        # The real-argument form is not the principal branch off the positive axis.
        ("besseli(1/2, x)", "sqrt(2/(pi*x))*sinh(x)", None),
        ("1/(exp(x)-1) + 1/2", "tanh(x/2)/2", None),
        ("1/(exp(x)+1)", "(1 + tanh(x/2))/2", None),
        ("(-8)**(1/3)", "-2", None),  # the principal root, not the real one
        ("cos(2*pi/17)", GAUSS.replace("-1/16", "1/16"), None),
    ],
)
def test_a_wrong_special_function_form_is_different(expected, canary, symbols):
    found = decision(expected, canary, symbols)
    assert found.status == "different", found


@pytest.mark.parametrize("kind", ["besselj", "bessely", "besseli", "besselk"])
@pytest.mark.parametrize("order", ["1/2", "-1/2", "3/2", "-5/2"])
def test_the_half_integer_bessel_rewrite_matches_mpmath_on_the_whole_plane(kind, order):
    """The closed forms are identities on principal branches: checked against mpmath at
    complex points and on both halves of the real axis (the cut included)."""
    rewrite = dict(REWRITES)["half-integer Bessel"]
    z = sympy.Symbol("z")
    closed = rewrite(getattr(sympy, kind)(sympy.Rational(order), z))
    assert not closed.has(getattr(sympy, kind))
    function = getattr(mpmath, kind)
    for point in (sympy.Rational(7, 3), -sympy.Rational(5, 2), 1 + 2 * sympy.I, -3 - sympy.I):
        got = complex(closed.subs(z, point).evalf(30))
        want = complex(function(mpmath.mpf(sympy.Rational(order)), complex(point)))
        assert abs(got - want) <= 1e-12 * max(1, abs(want)), (kind, order, point)


# --- numbers at fixed precisions --------------------------------------------------------------

POINT = sympy.Rational(1234, 997) - sympy.I * sympy.Rational(555, 997)


def test_special_functions_at_complex_points_agree_cheaply():
    """gamma, erf, erfi and Bessel functions at a complex point: a value at the first rungs,
    and an exact identity vanishes at 60 digits, with no climb to a thousand digits."""
    pairs = [
        (sympy.gamma(POINT + 1), POINT * sympy.gamma(POINT)),
        (sympy.erfi(POINT), -sympy.I * sympy.erf(sympy.I * POINT)),
        (sympy.besselk(sympy.Rational(1, 3), POINT), sympy.besselk(sympy.Rational(-1, 3), POINT)),
    ]
    for a, b in pairs:
        first, second = Ladder(a), Ladder(b)
        assert first.settle().rung == 0 and second.settle().rung == 0
        assert difference(first, second, 0).verdict == "vanishes"
        assert set(first._readings) <= {0, 1}  # never past 60 digits


def test_a_tiny_certified_difference_is_seen_and_noise_is_not_a_value():
    exact = Ladder(sympy.gamma(POINT + 1))
    nudged = Ladder(POINT * sympy.gamma(POINT) + sympy.Rational(1, 10**40))
    found = difference(exact, nudged, 0)
    assert found.verdict == "certified" and 0.9e-40 < found.size < 1.1e-40
    # Terms near 1e148 that sum to 20: the low rungs are noise, and are not taken for a value.
    x = sympy.Rational(-16872, 997) + sympy.I * sympy.Rational(18024, 997)
    cancelling = sum(sympy.sin(k * x) ** 2 + sympy.cos(k * x) ** 2 for k in range(1, 21))
    settled = Ladder(cancelling).settle()
    assert abs(settled.value - 20) < 1e-25


def test_a_value_is_taken_only_where_two_precisions_agree(monkeypatch):
    """A rung whose digits the next rung contradicts is not accepted, however accurate SymPy
    believes it to be."""
    real_read = numeric_module.read

    def wrong_at_30_digits(expr, digits):
        reading = real_read(expr, digits)
        if digits == LADDER[0]:
            wrong = reading.value * (1 + numeric_module.MP.mpf("1e-20"))
            return numeric_module.Reading(wrong, reading.error)
        return reading

    monkeypatch.setattr(numeric_module, "read", wrong_at_30_digits)
    settled = Ladder(sympy.erf(POINT)).settle()
    assert settled.rung == 1


def test_the_work_is_counted_in_digits_not_seconds():
    """A value no rung settles (a cancellation deeper than the top rung) has no value: a fixed
    amount of work, the same on any machine."""
    tiny = sympy.Integer(10) ** -300
    deep = (sympy.exp(tiny) - 1 - tiny) * 10**600  # about 1/2, after 600 digits cancel
    with pytest.raises(numeric_module.NoValue, match="240 digits"):
        Ladder(deep).settle()


# --- blame follows cause ------------------------------------------------------------------------


def test_a_correct_answer_in_special_functions_scores_against_an_elementary_expectation():
    for expected, candidate in [
        ("sqrt(2)*sinh(x)/sqrt(pi*x)", "besseli(1/2, x)"),
        ("x*gamma(x)", "gamma(x + 1)"),
        ("-I*erf(I*x)", "erfi(x)"),
        ("coth(x/2)/2", "1/(exp(x)-1) + 1/2"),
    ]:
        verdict = compare_values(S(expected), S(candidate), Policy())
        assert verdict.status == "equal", verdict


def test_a_candidate_whose_own_structure_cannot_be_evaluated_scores_zero():
    # The expectation has a value at every point; the candidate's cancellation needs more
    # digits than the top rung: its own structure is the cause.
    deep = "x*(exp(10**-300) - 1 - 10**-300)*10**600"
    verdict = compare_values(S("x/2"), S(deep), Policy())
    assert verdict.status == "mismatch", verdict
    assert "240 digits" in verdict.leaves[0].reason
    # The same structure in the expectation makes the row unscorable, never a 0.
    verdict = compare_values(S(deep), S("x/2"), Policy())
    assert verdict.status == "uncertain", verdict


def test_an_unproved_agreement_names_no_clock():
    verdict = compare_values(S("pi/2"), S("acos(x) + asin(x)"), Policy())
    assert verdict.status == "uncertain"
    reason = verdict.leaves[0].reason
    assert "at all 8 points" in reason
    assert "time" not in reason and " s " not in reason


# --- CPU caps instead of clocks -----------------------------------------------------------------


def test_a_cpu_cap_counts_work_not_waiting():
    # Waiting uses no CPU: a call that sleeps past its cap returns its value.
    assert run_with_cpu_cap(lambda: time.sleep(0.3) or "slept", 0.1) == "slept"

    def spin():
        while True:
            pass

    with pytest.raises(CpuCapReached, match="CPU"):
        run_with_cpu_cap(spin, 0.1)


def test_a_cpu_cap_is_the_callers_thread_not_the_process():
    """Another thread's work does not count against a cap: only the capped thread's."""
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            sum(range(1000))

    neighbour = threading.Thread(target=busy)
    neighbour.start()
    try:
        assert run_with_cpu_cap(lambda: time.sleep(0.3) or "ok", 0.05) == "ok"
    finally:
        stop.set()
        neighbour.join()


def test_decisions_repeat_exactly():
    """The same pair gives the same decision, reason and evidence every time."""
    pairs = [
        ("acos(x) + asin(x)", "pi/2"),
        ("gamma(x+1)", "x*gamma(x)"),
        ("x + sin(840*pi*x)", "x"),
        ("f(x) + 1", "f(x)"),
    ]
    for a, b in pairs:
        first = decision(a, b)
        assert all(decision(a, b) == first for _ in range(3)), (a, b)


# --- the same verdicts idle and beside busy processes -------------------------------------------

CORPUS = REPO / "benchmarks" / "compare_corpus.json"
ISSUE_PAIRS = [
    {"a": "gamma(x+1)", "b": "x*gamma(x)"},
    {"a": "gamma(x)*gamma(1-x)", "b": "pi/sin(pi*x)"},
    {"a": "erfi(x)", "b": "-I*erf(I*x)"},
    {"a": "besseli(1/2, x)", "b": "sqrt(2/(pi*x))*sinh(x)", "symbols": POSITIVE},
    {"a": "besselk(1/2, x)", "b": "sqrt(pi/(2*x))*exp(-x)", "symbols": POSITIVE},
    {"a": "1/(exp(x)-1) + 1/2", "b": "coth(x/2)/2"},
    {"a": "1/(exp(x)+1)", "b": "(1 - tanh(x/2))/2"},
    {"a": "tanh(x)", "b": "(exp(x)-exp(-x))/(exp(x)+exp(-x))"},
    {"a": "(-8)**(1/3)", "b": "1 + sqrt(3)*I"},
    {"a": "cos(2*pi/17)", "b": GAUSS},
    {"a": "pi/2", "b": "acos(x) + asin(x)"},
    {"a": "x/2", "b": "x*(exp(10**-300) - 1 - 10**-300)*10**600"},
]


def _sample_verdicts(pairs: list[dict]) -> list[tuple]:
    verdicts = []
    for pair in pairs:
        policy = Policy(symbols=pair.get("symbols", {}))
        verdict = compare_values(S(pair["a"]), S(pair["b"]), policy)
        verdicts.append((verdict.status, [(leaf.status, leaf.reason) for leaf in verdict.leaves]))
    return verdicts


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.slow
def test_symbolic_verdicts_are_the_same_idle_and_beside_busy_processes():
    pairs = json.loads(CORPUS.read_text())["pairs"] + ISSUE_PAIRS
    idle = _sample_verdicts(pairs)
    # Two busy processes per core, started here and killed here by pid.
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    try:
        loaded = _sample_verdicts(pairs)
        load_ticks = sum(_cpu_ticks(process.pid) for process in busy)
    finally:
        for process in busy:
            process.kill()
        for process in busy:
            process.wait()
    assert load_ticks > 0  # the neighbours really competed for the CPU
    differing = [
        (pair["a"], pair["b"], was, now)
        for pair, was, now in zip(pairs, idle, loaded, strict=True)
        if was != now
    ]
    assert differing == []
