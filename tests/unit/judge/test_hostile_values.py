"""A candidate's value never stalls the grader: size checks before every conversion, and each
row's comparison in a killable worker under a CPU and memory budget (judge.row, judge.pool).

The rows here are graded through :class:`~critpt_grader.pipeline.Grader` with a backend that
runs no code at all: a job's source carries, in a comment, the wire envelope every case
returns. So the values reach the host exactly as a sandbox would deliver them.
"""

from __future__ import annotations

import asyncio
import time
from fractions import Fraction

import pytest

from critpt_grader.codec.values import Symbolic
from critpt_grader.compare import compare_values
from critpt_grader.compare.legacy import read_legacy
from critpt_grader.compare.numbers import (
    ExactNumber,
    OversizeValue,
    check_magnitudes,
    compare_numbers,
    evaluate_constant,
)
from critpt_grader.judge import case as case_rule
from critpt_grader.judge import reference as reference_rule
from critpt_grader.judge.pool import Budget, JobOutcome, WorkerPool
from critpt_grader.judge.row import WARMUP, RowJudge
from critpt_grader.pipeline import Grader
from critpt_grader.policy.tolerance import make
from critpt_grader.result import CaseReport
from critpt_grader.sandbox.base import CaseOutcome
from critpt_grader.settings import Settings
from critpt_grader.symbolic.parse import parse
from critpt_grader.verdict import Category
from tests.support.wire import (
    BUDGET,
    HALF,
    SETTINGS,
    UNDECIDED,
    WireBackend,
    envelope,
    grade_all,
    response,
    task,
)

# A verdict costs at most this much CPU, whatever the value, counted in CPU seconds (not on
# the clock, so the bound holds on a loaded machine): the row's comparison budget, the probes'
# share of it, and the grading process's own checks and conversions.
CPU_BOUND = 3 * BUDGET
# A job is stopped at its CPU budget, give or take the kill's latency.
KILL_SLACK = 1.0


ZERO = ["float", (0.0).hex()]
HOSTILE = {
    "tower exp(exp(exp(9)))": (HALF, ["symbolic", "exp(exp(exp(9)))"]),
    "Boltzmann exp(-10**12) against 0.0": (ZERO, ["symbolic", "exp(-1000000000000)"]),
    "gamma(10**100)": (HALF, ["symbolic", "gamma(10**100)"]),
    "factorial(10**9)": (HALF, ["symbolic", "factorial(10**9)"]),
    "sin of a tower": (HALF, ["symbolic", "sin(exp(exp(exp(9))))"]),
    "taller tower E**E**E**E**E**9": (HALF, ["symbolic", "E**E**E**E**E**9"]),
    "10**10**8 as text": (HALF, ["symbolic", "10**10**8"]),
    "Pow(2, 10**9)": (HALF, ["symbolic", "Pow(2, 10**9)"]),
    "integral with huge bounds": (HALF, ["symbolic", "Integral(exp(x**2), (x, 0, 10**100))"]),
    "sum with huge bounds": (HALF, ["symbolic", "Sum(1/k**2, (k, 1, 10**100))"]),
    "deeply nested": (HALF, ["symbolic", "(" * 400 + "x" + ")" * 400]),
    "1e99999999 against a legacy number": (["legacy", "0.5"], ["str", "1e99999999"]),
    "1e99999999 against a float": (HALF, ["str", "1e99999999"]),
    "a 16000-digit integer text": (["legacy", "0.5"], ["str", "7" * 16000]),
    "32000-element list": (
        ["list", [HALF] * 200],
        ["list", [["float", (float(i)).hex()] for i in range(32000)]],
    ),
    "2000 towers against 2000 floats": (
        ["list", [HALF] * 2000],
        ["list", [["symbolic", "exp(exp(exp(9)))"]] * 2000],
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_candidate_value_is_scored_zero_within_a_bound(name):
    expected, hostile = HOSTILE[name]
    [(result, spent)] = grade_all([(task(expected), response(hostile))])
    assert (result.outcome, result.reward) == ("scored", 0.0), result.reason
    assert result.category == "candidate_mismatch", result.reason
    assert not spent.overspent(KILL_SLACK)
    assert spent.cpu_seconds < CPU_BOUND, spent


def test_too_costly_is_named_in_the_reason():
    [(result, _)] = grade_all([(task(HALF), response(["symbolic", "gamma(10**100)"]))])
    assert "10^(10^103)" in result.reason


def test_a_tiny_value_is_compared_not_refused():
    # exp(-10**12) is positive: it differs from 0.0 with atol 0 and meets a wider atol.
    tiny = parse("exp(-1000000000000)")
    value = evaluate_constant(tiny)
    assert value.nonzero and 0 < value.re < Fraction(1, 2**8192) and value.re <= value.error
    zero = ExactNumber(Fraction(0))
    assert compare_numbers(zero, value, make(Fraction(5, 10**12), Fraction(0), "default")) == (
        "mismatch"
    )
    assert compare_numbers(zero, value, make(Fraction(0), Fraction(1, 10**300), "task")) == "equal"
    assert compare_values(0.5, Symbolic("exp(-1000000000000)")).status == "mismatch"


def test_a_hostile_row_then_a_normal_row_both_grade():
    rows = [
        (task(HALF), response(["symbolic", "exp(exp(exp(9)))"])),
        (task(HALF), response(HALF)),
        (task(HALF), response(["str", "1e99999999"])),
        (task(HALF), response(["symbolic", "1/2"])),
    ]
    results = grade_all(rows)
    assert [r.category for r, _ in results] == [
        "candidate_mismatch",
        "passed",
        "candidate_mismatch",
        "passed",
    ]


def test_a_row_that_spends_its_budget_is_stopped_and_the_next_row_grades():
    # The sum is 20 at every point but no rewrite proves it (over a second a leaf): five cases
    # of three leaves outlast a 1 s row budget. The values alone are cheap: not the
    # candidate's fault, so unscorable rather than 0.
    settings = Settings(backend="in-process", compare_seconds=1.0, compare_workers=1)
    undecided = task(["tuple", [["symbolic", "20"]] * 3], cases=5)
    rows = [
        (undecided, response(["tuple", [["symbolic", UNDECIDED]] * 3])),
        (task(HALF), response(HALF)),
    ]
    (slow, spent), (normal, _) = grade_all(rows, settings)
    assert slow.category == "comparator_uncertain", slow.reason
    assert "needed more than the row's budget" in slow.reason
    assert [case.status for case in slow.cases][-1] == "not_run"
    assert not spent.overspent(KILL_SLACK)  # stopped at its budget, not run to the end
    assert spent.cpu_seconds < 3 * 1.0, spent  # the row budget and its probes, no more
    assert normal.category == "passed"


def test_a_reference_side_value_that_cannot_be_evaluated_is_unscorable_not_zero():
    [(result, _)] = grade_all([(task(["symbolic", "exp(exp(exp(9)))"]), response(HALF))])
    assert result.outcome == "unscorable"
    assert result.category == "comparator_uncertain"
    assert result.reward == 0.0 and result.failure_kind == "verifier_error"


def test_an_oversize_legacy_expectation_makes_the_task_unscorable():
    [(result, _)] = grade_all([(task(["legacy", "1e99999999"]), response(HALF))])
    assert result.outcome == "unscorable", result.reason


@pytest.mark.parametrize("error", [MemoryError, RecursionError])
def test_memory_and_recursion_errors_never_escape_grade(monkeypatch, error):
    def exploding(*args, **kwargs):
        raise error()

    monkeypatch.setattr(case_rule, "compare_values", exploding)
    monkeypatch.setattr(reference_rule, "compare_values", exploding)
    settings = Settings(backend="in-process", compare_in_process=True)
    [(result, _)] = grade_all([(task(HALF), response(HALF))], settings)
    # the preflight meets it first: the task's values cannot be compared → unscorable
    assert result.outcome == "unscorable"
    assert "too costly" in result.reason


def test_a_memory_error_in_the_candidate_comparison_is_attributed(monkeypatch):
    from critpt_grader.judge import row as row_judge

    def costly(index, expectation, expected, outcome, policy):
        raise MemoryError  # the candidate's comparison only: the preflight does not call it

    monkeypatch.setattr(case_rule, "judge_case", costly)
    monkeypatch.setattr(row_judge, "probe_candidate", lambda item: "it ran out of memory")
    settings = Settings(backend="in-process", compare_in_process=True)
    [(result, _)] = grade_all([(task(HALF), response(HALF))], settings)
    assert result.category == "candidate_mismatch"
    assert "the candidate's value is too costly to compare" in result.reason


# --- the row judge's rules when a worker is stopped ------------------------------------------


class FakeRunner:
    """Returns scripted outcomes for the row job and the probe."""

    def __init__(self, row: JobOutcome, probe: JobOutcome) -> None:
        # The expected value's probe (run first) finds it cheap unless a test says otherwise.
        self.outcomes = {
            "judge_row": row,
            "probe_expected": JobOutcome(finished=True),
            "probe_candidate": probe,
        }
        self.calls: list[str] = []

    def run(self, target, args, budget=None):
        name = target.rsplit(":", 1)[1]
        self.calls.append(name)
        return self.outcomes[name]


def _items(count: int):
    from critpt_grader.compare import Policy
    from critpt_grader.judge.row import CaseItem
    from critpt_grader.tasks import Expectation

    return [
        CaseItem(
            i,
            Expectation("value", envelope(HALF)),
            0.5,
            CaseOutcome("value", envelope(HALF)),
            Policy(),
        )
        for i in range(count)
    ]


def _judge_with(row: JobOutcome, probe: JobOutcome):
    judge = RowJudge(Settings(compare_in_process=True))
    judge.runner = FakeRunner(row, probe)  # type: ignore[assignment]
    return judge._judge(_items(3))


def _passed(index: int):
    return (Category.PASSED, "", CaseReport(index=index, status="equal", outcome="value"))


def test_a_stopped_case_whose_candidate_value_is_costly_alone_scores_zero():
    row = JobOutcome(events=[_passed(0)], overrun="cpu", cpu_seconds=8.0)
    probe = JobOutcome(finished=True, value="a magnitude of about 10^(10^9)")
    category, reason, reports = _judge_with(row, probe)
    assert category is Category.CANDIDATE_MISMATCH
    assert reason.startswith("case 1: the candidate's value is too costly to compare")
    assert [r.status for r in reports] == ["equal", "mismatch", "not_run"]


def test_a_stopped_case_whose_probe_also_overruns_scores_zero():
    row = JobOutcome(events=[], overrun="memory")
    category, _, _ = _judge_with(row, JobOutcome(overrun="cpu"))
    assert category is Category.CANDIDATE_MISMATCH


def test_a_stopped_case_with_cheap_values_is_uncertain_but_a_finished_fault_still_scores():
    row = JobOutcome(events=[_passed(0)], overrun="cpu", cpu_seconds=8.0)
    category, reason, _ = _judge_with(row, JobOutcome(finished=True, value=None))
    assert category is Category.COMPARATOR_UNCERTAIN
    assert "needed more than the row's budget" in reason
    fault = (
        Category.CANDIDATE_MISMATCH,
        "case 0: differs",
        CaseReport(index=0, status="mismatch", outcome="value"),
    )
    category, _, _ = _judge_with(
        JobOutcome(events=[fault], overrun="cpu"), JobOutcome(finished=True)
    )
    assert category is Category.CANDIDATE_MISMATCH


def test_a_starved_worker_is_a_retry_not_a_verdict():
    category, _, _ = _judge_with(JobOutcome(events=[], overrun="wall"), JobOutcome(finished=True))
    assert category is Category.PROVIDER_UNAVAILABLE


# --- conversions: sizes are checked before the work -------------------------------------------


@pytest.mark.parametrize(
    "text", ["1e99999999", "-1e-99999999", "7" * 5000, "1/" + "3" * 3000, "1.5e2467", "1e-2467"]
)
def test_legacy_number_text_beyond_the_exact_range_is_never_expanded(text):
    started = time.thread_time()  # CPU, not wall: load-proof
    reading = read_legacy(text)
    assert reading.kind == "expression" and reading.number is None
    assert time.thread_time() - started < 0.1


@pytest.mark.parametrize("text", ["1e2465", "1e-2466", "7" * 2466, "-0.5e-3"])
def test_legacy_numbers_within_the_range_stay_exact(text):
    assert read_legacy(text).kind == "number"


@pytest.mark.parametrize(
    "text",
    ["exp(exp(exp(9)))", "gamma(10**100)", "factorial(10**9)", "exp(exp(exp(exp(9))))"],
)
def test_evaluating_a_constant_beyond_the_range_is_refused_quickly(text):
    started = time.thread_time()  # CPU, not wall: load-proof
    with pytest.raises(OversizeValue):
        evaluate_constant(parse(text))
    assert time.thread_time() - started < 2


def test_an_argument_too_large_to_evaluate_is_refused_before_evaluation():
    with pytest.raises(OversizeValue, match="exp of a number"):
        check_magnitudes(parse("exp(exp(exp(exp(9))))"))
    check_magnitudes(parse("exp(exp(exp(9))) + sin(10**300)"))  # large, but cheap to evaluate


def test_evaluation_is_strict_rather_than_silently_imprecise():
    # An exact 0 plus 10**-250, written so that evalf cancels: the non-strict value was
    # about -4.5e-190 with a tiny error bound, so 1e-250 was judged different from it.
    expr = parse("(sqrt(2)+sqrt(3))**2 - 5 - 2*sqrt(6) + 10**-250")
    with pytest.raises(ValueError, match="correct digits"):
        evaluate_constant(expr)


# --- the worker pool ----------------------------------------------------------------------------


JOBS = "tests.support.pool_jobs"


@pytest.fixture(scope="module")
def pool():
    # Warmed as the grader's pool is: the jobs' imports must not eat their CPU budget.
    budget = Budget(cpu_seconds=1.0, memory_mb=400)
    with WorkerPool(budget, workers=1, warmup=WARMUP) as shared:
        yield shared


def test_a_spinning_job_is_killed_at_its_cpu_budget_and_the_pool_goes_on(pool):
    outcome = pool.run(f"{JOBS}:spin", ())
    assert (outcome.finished, outcome.overrun) == (False, "cpu")
    assert 1.0 <= outcome.cpu_seconds < 2.0  # its CPU, not the clock: true under any load
    assert pool.run(f"{JOBS}:echo", (7,)).value == 7


def test_events_streamed_before_a_kill_are_kept(pool):
    outcome = pool.run(f"{JOBS}:streams_then_spins", ())
    assert outcome.events == [1, 2] and outcome.overrun == "cpu"


def test_a_job_that_runs_out_of_memory_stops_in_its_worker(pool):
    outcome = pool.run(f"{JOBS}:eat_memory", ())
    assert outcome.overrun == "memory" and not outcome.finished
    assert pool.run(f"{JOBS}:echo", ("after",)).value == "after"


def test_a_worker_that_dies_is_reported_and_replaced(pool):
    assert pool.run(f"{JOBS}:die", ()).overrun == "crashed"
    assert pool.run(f"{JOBS}:echo", (1,)).finished


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_no_worker_outlives_its_pool():
    pool = WorkerPool(Budget(cpu_seconds=1.0, memory_mb=400), workers=2)
    try:
        pool.run(f"{JOBS}:echo", (1,))
        pids = [w.pid for w in pool._idle] + [pool._zygote.process.pid]
        assert all(_alive(pid) for pid in pids)
    finally:
        pool.close()
    deadline = time.monotonic() + 60  # killed at close; reaped soon after
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)


def test_a_grader_leaves_no_worker_behind():
    async def go():
        async with Grader(SETTINGS, backend=WireBackend()) as grader:
            await grader.grade(task(HALF), response(HALF))
            pool = grader.judging.runner
            return [w.pid for w in pool._idle] + [pool._zygote.process.pid]

    pids = asyncio.run(go())
    assert pids and not any(_alive(pid) for pid in pids)


def test_a_proven_candidate_fault_outweighs_an_unreadable_expectation_in_another_case():
    from critpt_grader.judge.row import row_verdict
    from critpt_grader.result import CaseReport
    from critpt_grader.verdict import Category

    def verdict(category, index):
        return category, f"case {index}", CaseReport(index=index, status="invalid", outcome="value")

    unreadable, wrong = verdict(Category.TASK_INVALID, 0), verdict(Category.CANDIDATE_MISMATCH, 1)
    assert row_verdict([unreadable, wrong])[0] is Category.CANDIDATE_MISMATCH
    passed = verdict(Category.PASSED, 1)
    assert row_verdict([passed, unreadable])[0] is Category.TASK_INVALID


def test_an_expectation_past_a_grammar_limit_is_the_tasks_fault_never_a_zero():
    """Tasks without stored expectations take them from the reference: one that cannot be
    read must not score the candidate 0."""
    from critpt_grader import codec
    from critpt_grader.policy.context import Policy
    from critpt_grader.tasks.model import Expectation
    from critpt_grader.verdict import Category

    unreadable = codec.decode({"format": "critpt-value-v1", "value": ["symbolic", "x**10**9"]})
    answer = codec.encode(parse("x"))
    outcome = CaseOutcome(kind="value", value=answer)
    expectation = Expectation("value", value=answer)
    category, reason, report = case_rule.judge_case(0, expectation, unreadable, outcome, Policy())
    assert category is Category.TASK_INVALID, reason
    assert report.status == "invalid"
