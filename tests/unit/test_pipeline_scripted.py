"""Every category and path of the pipeline, driven by scripted sandbox outcomes (no code
runs, so the whole table takes well under a second per row)."""

from __future__ import annotations

import asyncio

import pytest

from critpt_grader.pipeline import Grader
from critpt_grader.sandbox.base import CaseOutcome
from critpt_grader.sandbox.scripted import HANG, ScriptedBackend, exception, failed, ok, value
from critpt_grader.settings import Settings
from critpt_grader.verdict import DISPOSITIONS, Category
from tests.support.grading import HALF, RAISES, answer

SETTINGS = Settings(backend="scripted", compare_in_process=True)
REFERENCE = ok(value(0.5), value(1.5))
CODE = answer("def half(n):\n    return n / 2")


async def until(condition, seconds: float = 60.0) -> None:
    """Wait until ``condition()`` holds (checked every few milliseconds); fail past
    ``seconds``."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "the condition never held"
        await asyncio.sleep(0.005)


def grade(task, response, script):
    backend = ScriptedBackend(script=script)

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            return await grader.grade(task, response)

    return asyncio.run(go()), backend


def crashed() -> CaseOutcome:
    return CaseOutcome(kind="crashed", message="killed by SIGSEGV")


ROWS = [
    # (name, task, response, reference outcome, candidate outcome, category)
    ("passed", HALF, CODE, REFERENCE, ok(value(0.5), value(1.5)), Category.PASSED),
    ("mismatch", HALF, CODE, REFERENCE, ok(value(0.5), value(2.0)), Category.CANDIDATE_MISMATCH),
    (
        "exception",
        HALF,
        CODE,
        REFERENCE,
        ok(value(0.5), exception("ZeroDivisionError")),
        Category.CANDIDATE_EXCEPTION,
    ),
    (
        "case timeout",
        HALF,
        CODE,
        REFERENCE,
        ok(value(0.5), CaseOutcome(kind="timeout")),
        Category.CANDIDATE_TIMEOUT,
    ),
    (
        "case memory",
        HALF,
        CODE,
        REFERENCE,
        ok(CaseOutcome(kind="memory"), value(1.5)),
        Category.CANDIDATE_MEMORY,
    ),
    (
        "encode error",
        HALF,
        CODE,
        REFERENCE,
        ok(value(0.5), CaseOutcome(kind="encode_error", error_type="unsupported_type")),
        Category.CANDIDATE_INVALID_OUTPUT,
    ),
    (
        "crashed",
        HALF,
        CODE,
        REFERENCE,
        ok(value(0.5), crashed()),
        Category.CANDIDATE_INVALID_OUTPUT,
    ),
    ("run timeout", HALF, CODE, REFERENCE, failed("timeout"), Category.CANDIDATE_TIMEOUT),
    ("run memory", HALF, CODE, REFERENCE, failed("memory"), Category.CANDIDATE_MEMORY),
    (
        "source error",
        HALF,
        CODE,
        REFERENCE,
        failed("source_error"),
        Category.CANDIDATE_SOURCE_ERROR,
    ),
    (
        "output limit",
        HALF,
        CODE,
        REFERENCE,
        failed("output_limit"),
        Category.CANDIDATE_INVALID_OUTPUT,
    ),
    ("no result", HALF, CODE, REFERENCE, failed("no_result"), Category.CANDIDATE_INVALID_OUTPUT),
    (
        "candidate unavailable",
        HALF,
        CODE,
        REFERENCE,
        failed("unavailable"),
        Category.PROVIDER_UNAVAILABLE,
    ),
    (
        "candidate backend fault",
        HALF,
        CODE,
        REFERENCE,
        ConnectionError("reset"),
        Category.PROVIDER_UNAVAILABLE,
    ),
    (
        "reference unavailable",
        HALF,
        CODE,
        failed("unavailable"),
        None,
        Category.PROVIDER_UNAVAILABLE,
    ),
    ("reference timeout", HALF, CODE, failed("timeout"), None, Category.REFERENCE_ERROR),
    (
        "reference raises",
        HALF,
        CODE,
        ok(value(0.5), exception("ValueError")),
        None,
        Category.REFERENCE_ERROR,
    ),
    ("reference too few", HALF, CODE, ok(value(0.5)), None, Category.REFERENCE_ERROR),
    (
        "reference mismatch",
        HALF,
        CODE,
        ok(value(0.5), value(9.0)),
        None,
        Category.REFERENCE_MISMATCH,
    ),
    ("no code", HALF, "One half of n.", REFERENCE, None, Category.CANDIDATE_SOURCE_MISSING),
    (
        "expected exception met",
        RAISES,
        answer("def inverse(x):\n    return 1 / x"),
        ok(exception("ZeroDivisionError")),
        ok(exception("ZeroDivisionError")),
        Category.PASSED,
    ),
    (
        "expected exception missed",
        RAISES,
        answer("def inverse(x):\n    return 0"),
        ok(exception("ZeroDivisionError")),
        ok(value(0)),
        Category.CANDIDATE_MISMATCH,
    ),
]


@pytest.mark.parametrize(
    ("task", "response", "reference", "candidate", "category"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_every_category_from_scripted_outcomes(task, response, reference, candidate, category):
    # One reference outcome for every reference run: a transient failure is retried.
    script = {"reference": reference, "candidate": [] if candidate is None else [candidate]}
    result, backend = grade(task, response, script)
    assert result.category == category, result.reason
    disposition = DISPOSITIONS[category]
    assert (result.outcome, result.reward) == (disposition.outcome, disposition.reward)
    roles = [job.role for job in backend.jobs]
    assert roles[0] == "reference"
    assert roles.count("candidate") == (0 if candidate is None else 1)
    if candidate is not None:
        candidate_job = backend.jobs[1]
        # What travels to the candidate's sandbox: its source and the inputs, nothing more.
        assert "return n / 2\n" not in candidate_job.source or task is not HALF
        assert all(set(case) <= {"args", "kwargs", "names"} for case in candidate_job.cases)


def test_a_failure_is_never_scored_one():
    for name, task, response, reference, candidate, category in ROWS:
        if category is not Category.PASSED:
            script = {"reference": reference, "candidate": [candidate] if candidate else []}
            result, _ = grade(task, response, script)
            assert result.reward == 0.0, name


def test_provider_unavailable_is_retryable_and_the_preflight_is_not_cached():
    backend = ScriptedBackend(
        script={
            # the pipeline retries a transient preflight once within a grade
            "reference": [failed("unavailable"), failed("unavailable"), REFERENCE],
            "candidate": [ok(value(0.5), value(1.5))],
        }
    )

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            return [await grader.grade(HALF, CODE) for _ in range(2)]

    first, second = asyncio.run(go())
    assert first.category == Category.PROVIDER_UNAVAILABLE
    assert DISPOSITIONS[Category.PROVIDER_UNAVAILABLE].terminal is False
    assert second.category == Category.PASSED


def test_a_cancelled_grade_propagates_and_leaves_no_run_waiting():
    backend = ScriptedBackend(script={"reference": REFERENCE, "candidate": HANG})

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            task = asyncio.ensure_future(grader.grade(HALF, CODE))
            await until(lambda: backend.in_flight == 1)  # the candidate run is waiting
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(go())
    assert backend.in_flight == 0


def test_closing_the_backend_during_a_run_is_provider_unavailable():
    backend = ScriptedBackend(script={"reference": REFERENCE, "candidate": HANG})

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            task = asyncio.ensure_future(grader.grade(HALF, CODE))
            await until(lambda: backend.in_flight == 1)  # the candidate run is waiting
            await backend.aclose()
            return await task

    result = asyncio.run(go())
    assert result.category == Category.PROVIDER_UNAVAILABLE
    assert result.reward == 0.0


def test_paths_that_never_reach_a_sandbox():
    incomplete = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    result, backend = grade(HALF, {**incomplete, "output": []}, script=None)
    assert result.category == Category.RESPONSE_INCOMPLETE and backend.jobs == []
    broken = {"task_data": {"schema_version": 1, "problem_id": "broken"}}
    result, backend = grade(broken, CODE, script=None)
    assert result.category == Category.TASK_INVALID and backend.jobs == []
    assert result.reward == 0.0
