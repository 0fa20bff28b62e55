"""A candidate stops at its first decisive fault (issue 12, item 1): a case that times out or
runs out of memory decides the row, later cases are ``not_run`` (never passed), and a
hanging candidate costs one case limit. A reference still runs every case."""

from __future__ import annotations

import asyncio
import shutil
import textwrap

import pytest

from critpt_grader import codec, grade
from critpt_grader.runner import protocol
from critpt_grader.sandbox.base import Job, Limits, RunOutcome
from critpt_grader.sandbox.containment import bwrap_works
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None or not bwrap_works(),
    reason="bubblewrap (bwrap) is not installed or cannot run here",
)

CASE_SECONDS = 1.5
LIMITS = Limits(wall_seconds=30, case_seconds=CASE_SECONDS, output_bytes=64 * 1024)
HANG = "def f(n):\n    while True:\n        pass\n"
HANG_ON_ZERO = "def f(n):\n    while n == 0:\n        pass\n    return n\n"


def call(*args) -> dict:
    return {"args": [codec.encode(arg) for arg in args], "kwargs": {}}


def run(job: Job, warm: bool) -> RunOutcome:
    async def go() -> RunOutcome:
        async with LocalBackend(Settings(warm_sandboxes=warm)) as backend:
            # A first job brings a warm sandbox up: the measured one pays its case limits only.
            await backend.run(
                Job(
                    source="def f(n):\n    return n\n",
                    entrypoint="f",
                    cases=(call(1),),
                    role=job.role,
                )
            )
            return await backend.run(job)

    return asyncio.run(go())


def test_the_host_reads_a_not_run_outcome():
    assert "not_run" in protocol.CASE_KINDS  # the host reads the supervisor's fill
    outcome = protocol.validated_outcome({"kind": "not_run", "message": "m"})
    assert outcome["kind"] == "not_run"


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
def test_a_hanging_candidate_costs_one_case_limit_not_three(warm):
    job = Job(
        source=HANG,
        entrypoint="f",
        cases=(call(1), call(2), call(3)),
        limits=LIMITS,
        stop_on_fault=True,
    )
    outcome = run(job, warm)
    assert outcome.status == "ok", outcome.detail
    assert [case.kind for case in outcome.cases] == ["timeout", "not_run", "not_run"]
    assert "case 0 already decided the row" in outcome.cases[1].message
    # The later cases never ran (not_run above): one case limit was spent, not three. No
    # wall-clock bound here: on a busy machine start-up alone may take seconds.


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
def test_a_reference_that_times_out_on_case_one_still_runs_cases_two_and_three(warm):
    job = Job(
        source=HANG_ON_ZERO,
        entrypoint="f",
        cases=(call(0), call(2), call(3)),
        limits=LIMITS,
        role="reference",
        stop_on_fault=True,  # ignored: a reference runs every case
    )
    outcome = run(job, warm)
    assert outcome.status == "ok", outcome.detail
    assert [case.kind for case in outcome.cases] == ["timeout", "value", "value"]
    assert [codec.decode(case.value) for case in outcome.cases[1:]] == [2, 3]


@pytest.mark.sandbox
@needs_bwrap
def test_a_candidate_that_runs_out_of_memory_stops_there():
    source = "def f(n):\n    return len(bytearray(8 << 30))\n"
    limits = Limits(wall_seconds=30, case_seconds=10, memory_mb=512)
    job = Job(source=source, entrypoint="f", cases=(call(1), call(2)), limits=limits)
    outcome = run(job, warm=True)
    assert [case.kind for case in outcome.cases] == ["memory", "memory"]  # not asked to stop
    job = Job(
        source=source, entrypoint="f", cases=(call(1), call(2)), limits=limits, stop_on_fault=True
    )
    outcome = run(job, warm=True)
    assert [case.kind for case in outcome.cases] == ["memory", "not_run"]


def envelope(node):
    return {"format": "critpt-value-v1", "value": node}


THREE_CASES = {
    "responses_create_params": {"input": []},
    "task_data": {
        "schema_version": 1,
        "problem_id": "test-stop-at-fault",
        "reference_source": "def f(n):\n    return n\n",
        "entrypoint": "f",
        "test_cases": [
            {
                "args": [envelope(["int", str(n)])],
                "expected": {"kind": "value", "value": envelope(["int", str(n)])},
            }
            for n in (1, 2, 3)
        ],
    },
}


@pytest.mark.sandbox
@needs_bwrap
def test_a_hanging_candidate_scores_zero_as_a_timeout_with_later_cases_not_run():
    settings = Settings(case_seconds=CASE_SECONDS, wall_seconds=30)
    response = f"```python\n{textwrap.dedent(HANG)}```\n"
    result = grade(THREE_CASES, response, settings=settings)
    assert result.category == "candidate_timeout"
    assert result.reward == 0 and result.outcome == "scored"
    assert [case.status for case in result.cases] == ["mismatch", "not_run", "not_run"]
    assert [case.outcome for case in result.cases] == ["timeout", "not_run", "not_run"]
    assert result.reason.startswith("case 0:")
    # One case limit was spent, not three: the later cases are not_run (above).


def test_not_run_cases_never_pass_in_the_comparison():
    from critpt_grader.judge.case import judge_case
    from critpt_grader.sandbox.base import CaseOutcome
    from critpt_grader.tasks import Expectation

    outcome = CaseOutcome(kind="not_run", message="not run: case 0 already decided the row")
    for expectation in (
        Expectation("exception"),
        Expectation("value", value=envelope(["int", "1"])),
    ):
        category, reason, report = judge_case(1, expectation, 1, outcome, None)  # type: ignore[arg-type]
        assert category == "candidate_invalid_output"
        assert report.status == "not_run" and "already decided" in reason
