"""Pipeline behaviour that does not need a real sandbox (in-process backend)."""

from __future__ import annotations

import asyncio
import threading

from critpt_grader import pipeline
from critpt_grader.judge import case as judge_case
from critpt_grader.pipeline import Grader
from critpt_grader.settings import Settings
from tests.support.grading import HALF, answer

IN_PROCESS = Settings(backend="in-process")


def test_comparison_runs_off_the_event_loop(monkeypatch):
    # In-process comparison (unit tests) runs in a thread; the default runs in a worker.
    threads = []
    real = judge_case.compare_values  # a candidate's case is compared there

    def recording(*args, **kwargs):
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(judge_case, "compare_values", recording)

    async def go():
        settings = Settings(backend="in-process", compare_in_process=True)
        async with Grader(settings) as grader:
            return await grader.grade(HALF, answer("def half(n):\n    return n / 2"))

    assert asyncio.run(go()).reward == 1.0
    assert threads and threading.main_thread() not in threads


def test_preflight_runs_once_per_task_for_many_responses():
    async def go():
        async with Grader(IN_PROCESS) as grader:
            responses = [answer(f"def half(n):\n    return n / {d}") for d in (2, 3, 2, 4)]
            return await asyncio.gather(*(grader.grade(HALF, r) for r in responses))

    results = asyncio.run(go())
    assert [r.reward for r in results] == [1.0, 0.0, 1.0, 0.0]
    assert sorted(r.preflight for r in results) == ["cached", "cached", "cached", "passed"]


def test_malformed_task_given_to_grade_is_task_invalid_not_a_crash():
    result = pipeline.grade(
        {"task_data": {"schema_version": 1, "problem_id": "broken"}},
        "def f(): pass",
        settings=IN_PROCESS,
    )
    assert (result.outcome, result.category, result.failure_kind) == (
        "unscorable",
        "task_invalid",
        "verifier_error",
    )
    assert "broken" in result.reason


def test_results_serialize_to_json_and_back():
    from critpt_grader.result import GradeResult

    result = pipeline.grade(HALF, answer("def half(n):\n    return n / 3"), settings=IN_PROCESS)
    again = GradeResult.model_validate_json(result.model_dump_json())
    assert again == result and again.first_difference().path == ""


def test_the_graded_fence_is_the_last_that_defines_the_entry_point():
    draft = "```python\ndef half(n):\n    return n / 3  # draft\n```"
    final = "```python\ndef half(n):\n    return n / 2\n```"
    usage = "```python\nprint(half(4))\n```"
    response = f"First try:\n{draft}\nCorrected:\n{final}\nUsage:\n{usage}\n"
    assert pipeline.grade(HALF, response, settings=IN_PROCESS).reward == 1.0
    for rule in ("first", "last"):  # the anchors' rules: the draft, or the usage example
        settings = Settings(backend="in-process", fence=rule)
        assert pipeline.grade(HALF, response, settings=settings).reward == 0.0
