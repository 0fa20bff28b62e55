"""Blame follows the value: when the expectation has a value at the sample points and the
candidate's value alone cannot be had within its deterministic caps, the candidate scores 0;
only an expectation without a value makes a row unscorable. So a wrong answer cannot flee
into ``comparator_uncertain`` by being costly to evaluate, and a correct answer that is
merely costly to *prove* is never scored 0 for it.

Examples written for issue 28 (class 5); each names the rule it checks."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from critpt_grader.codec.values import Symbolic
from critpt_grader.compare import Policy, compare_values
from critpt_grader.pipeline import Grader
from critpt_grader.sandbox.base import CaseOutcome
from critpt_grader.sandbox.scripted import ScriptedBackend, ok
from critpt_grader.settings import Settings
from critpt_grader.symbolic import prove as prove_module
from critpt_grader.verdict import Category
from tests.support.grading import answer, envelope, task_row, value_case
from tests.support.wire import grade_all, response, task

S = Symbolic
CAP = 0.5  # a small step cap keeps these quick; the rule is the same at the default 4 s
# mpmath runs for many seconds at every complex point: costly only to evaluate.
COSTLY = "besselj(1/3, 10**1000*(1 + I)*x)"
WHOLE = {"n": {"integer": True, "positive": True}}


def compare(expected, candidate, symbols=None):
    return compare_values(
        expected, candidate, Policy(symbols=symbols or {}, proof_step_cpu_seconds=CAP)
    )


def cpu_of(fn):
    started = time.thread_time()  # this thread's CPU: load-proof
    result = fn()
    return result, time.thread_time() - started


# --- the comparator ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "candidate", "symbols"),
    [
        ("x", f"x + {COSTLY}", None),  # reaches the CPU cap at a point
        ("x**2 + 1", f"{COSTLY} - {COSTLY.replace('1000', '999')}", None),
        ("x", "x + hermite(10**6*x, x)", None),  # an order past the size checks at every point
        ("sin(x)", "besselj(300*n, x) + besselj(300*n + 1, x)", WHOLE),  # a huge-order sum
        ("exp(-x)", "polylog(-1000*n, x)/n", WHOLE),
    ],
)
def test_a_candidate_costly_only_to_evaluate_scores_zero_not_uncertain(
    expected, candidate, symbols
):
    verdict, seconds = cpu_of(lambda: compare(S(expected), S(candidate), symbols))
    assert verdict.status == "mismatch", verdict
    assert "blame follows the value" in verdict.leaves[0].reason
    # One cap spent before any proof step, not one per point or per proof step.
    assert seconds < 3 * CAP + 1.5


def test_a_costly_candidate_against_a_number_scores_zero_after_one_cap():
    (verdict, seconds) = cpu_of(lambda: compare(1.0, S(COSTLY)))
    assert verdict.status == "mismatch", verdict
    assert seconds < 3 * CAP + 1.5


def test_a_case_stops_at_its_first_costly_candidate_leaf():
    leaves = [S(COSTLY.replace("1000", str(exponent))) for exponent in (1000, 1001, 1002, 1003)]
    verdict, seconds = cpu_of(lambda: compare([S("x")] * 4, leaves))
    assert verdict.status == "mismatch"
    assert "the case stops at this leaf" in verdict.leaves[0].reason
    assert seconds < 3 * CAP + 1.5  # one cap, not four


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        (f"x + {COSTLY}", "x"),  # the expectation reaches the cap
        ("x + hermite(10**6*x, x)", "x**2"),  # the expectation is past the size checks
        (f"x + {COSTLY}", f"x + {COSTLY.replace('1000', '1001')}"),  # both: the expectation decides
        ("tr(x)", "x"),  # a function the grader does not know: no value
    ],
)
def test_an_expectation_without_a_value_makes_the_comparison_unscorable(expected, candidate):
    verdict = compare(S(expected), S(candidate))
    assert verdict.status == "uncertain", verdict
    assert "the expected value cannot be evaluated" in verdict.leaves[0].reason


def test_a_correct_answer_that_is_costly_to_prove_is_uncertain_never_zero(monkeypatch):
    # Every rewrite runs to its cap, as a hard proof would; the values are cheap and agree.
    def spin(expr):
        while True:
            pass

    monkeypatch.setattr(prove_module, "REWRITES", (("spin", spin),) * 3)
    verdict = compare(S("pi/2"), S("acos(x) + asin(x)"))
    assert verdict.status == "uncertain", verdict
    assert "agrees at all 8 points" in verdict.leaves[0].reason
    # The same costly proofs do not shelter a wrong answer: it differs at a point.
    assert compare(S("pi/2"), S("acos(x) + asin(x) + 10**-20")).status == "mismatch"
    assert compare(S("pi/2"), S("acos(x) - asin(x)")).status == "mismatch"


def test_a_correct_costly_special_function_that_agrees_is_not_blamed():
    # Slow-ish values (a series at each point) well inside the cap: evaluated, agreeing.
    verdict = compare_values(S("zeta(2, 1/2)"), S("pi**2/2"))
    assert verdict.status == "uncertain", verdict


def test_the_costly_verdict_is_the_same_beside_a_busy_thread():
    """Caps count the CPU of the comparing thread: a neighbour's work changes nothing."""
    alone = compare(S("x"), S(f"x + {COSTLY}"))
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            sum(range(1000))

    neighbour = threading.Thread(target=busy)
    neighbour.start()
    try:
        beside = compare(S("x"), S(f"x + {COSTLY}"))
    finally:
        stop.set()
        neighbour.join()
    assert (beside.status, beside.leaves[0].reason) == (alone.status, alone.leaves[0].reason)


# --- the row: in process (no budget) ------------------------------------------------------------

CODE = answer("def f(n):\n    return n\n")


def symbolic_outcome(text: str) -> CaseOutcome:
    return CaseOutcome(kind="value", value=envelope(["symbolic", text]))


def grade_scripted(expected: str, candidate: str):
    row = task_row(
        "def f(n):\n    return n\n", "f", [value_case([["int", "1"]], ["symbolic", expected])]
    )
    backend = ScriptedBackend(
        script={
            "reference": ok(symbolic_outcome(expected)),
            "candidate": ok(symbolic_outcome(candidate)),
        }
    )

    async def go():
        async with Grader(Settings(backend="scripted", compare_in_process=True), backend) as grader:
            return await grader.grade(row, CODE)

    return asyncio.run(go())


@pytest.mark.parametrize("candidate", ["x + hermite(10**6*x, x)", f"x + {COSTLY}"])
def test_a_costly_candidate_row_is_scored_zero_not_comparator_uncertain(candidate):
    result = grade_scripted("x", candidate)
    assert (result.outcome, result.reward, result.category) == ("scored", 0.0, "candidate_mismatch")
    assert "blame follows the value" in result.reason


def test_a_costly_expectation_row_is_unscorable():
    result = grade_scripted("x + hermite(10**6*x, x)", "x")
    assert result.outcome == "unscorable"
    assert result.category == "comparator_uncertain"


# --- the row: in a worker, under the comparison budget ------------------------------------------


def test_with_the_default_budget_a_costly_candidate_is_decided_inside_the_row():
    # 8 s of the row's 10 s: one cap (4 s) and the candidate is blamed by the comparator.
    default = Settings(backend="in-process", compare_workers=1)
    row = (task(["symbolic", "x"]), response(["symbolic", f"x + {COSTLY}"]))
    [(result, _)] = grade_all([row], default)
    assert result.category == Category.CANDIDATE_MISMATCH, result.reason
    assert "blame follows the value" in result.reason


TINY = Settings(backend="in-process", compare_seconds=1.0, compare_workers=1)


def test_when_the_budget_runs_out_the_candidates_value_alone_decides_the_blame():
    # The row's 0.8 s ends inside the candidate's first point: each value is then probed
    # alone, the expectation first (cheap), the candidate's past its probe's budget: 0.
    [(result, _)] = grade_all(
        [(task(["symbolic", "x"]), response(["symbolic", f"x + {COSTLY}"]))], TINY
    )
    assert result.category == Category.CANDIDATE_MISMATCH, result.reason
    assert "the candidate's value is too costly to compare" in result.reason


def test_when_the_budget_runs_out_on_a_costly_expectation_the_row_is_unscorable():
    [(result, _)] = grade_all(
        [(task(["symbolic", f"x + {COSTLY}"]), response(["symbolic", "x"]))], TINY
    )
    assert result.outcome == "unscorable"
    assert result.category == Category.COMPARATOR_UNCERTAIN, result.reason
    assert "the expected value is too costly to compare" in result.reason


def test_when_the_budget_runs_out_on_slow_proofs_of_cheap_agreeing_values_the_row_is_unscorable():
    # Each leaf's proof runs every rewrite and fails (agreement is no proof): 0.15-0.3 s of
    # CPU each, so forty distinct ones outlast the row's 2.4 s by twice or more (ten no longer
    # did on a fast machine). Each value alone is cheap (all forty evaluate inside the
    # candidate probe's budget): not the candidate's fault.
    settings = Settings(backend="in-process", compare_seconds=3.0, compare_workers=1)
    factor = "x**7 + 3*x**5 - x + 2"
    row = task(["list", [["symbolic", f"pi*({factor})/2"]] * 40])
    leaves = [["symbolic", f"(acos({k}*x) + asin({k}*x))*({factor})"] for k in range(2, 42)]
    [(result, _)] = grade_all([(row, response(["list", leaves]))], settings)
    assert result.category == Category.COMPARATOR_UNCERTAIN, result.reason
    assert "needed more than the row's budget" in result.reason
