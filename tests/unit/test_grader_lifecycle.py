"""A Grader a server can trust (issue 11, item 3): the preflight is the Grader's own task,
shielded from any one caller's cancellation; a closed Grader raises; a preflight that failed
for want of time or of a sandbox is retried, not cached; the cache is a bounded LRU; and a
Grader refuses a second event loop."""

from __future__ import annotations

import asyncio

import pytest

from critpt_grader.errors import GraderClosed
from critpt_grader.pipeline import Grader
from critpt_grader.sandbox.base import Job, RunOutcome
from critpt_grader.sandbox.inprocess import InProcessBackend
from critpt_grader.settings import Settings
from tests.support.grading import HALF, answer, task_row, value_case

# Compare in the test's own process where the grader offers it (no worker pool to start).
FAST = {"compare_in_process": True} if "compare_in_process" in Settings.model_fields else {}
SETTINGS = Settings(backend="in-process", **FAST)
CORRECT = answer("def half(n):\n    return n / 2")


class ScriptedBackend:
    """The in-process backend, with scripted outcomes for the first reference runs. With
    ``hold``, a reference run sets ``reference_started`` and waits until the test sets
    ``release``; ``reference_finished`` is set when a reference run returns and
    ``reference_cancelled`` when one was cancelled."""

    name = "scripted"

    def __init__(self, hold: bool = False, reference_outcomes=()) -> None:
        self.inner = InProcessBackend(SETTINGS)
        self.hold = hold
        self.scripted = list(reference_outcomes)
        self.reference_runs = 0
        self.closed = False
        self.reference_started = asyncio.Event()
        self.release = asyncio.Event()
        self.reference_finished = asyncio.Event()
        self.reference_cancelled = asyncio.Event()

    async def run(self, job: Job) -> RunOutcome:
        if job.role == "reference":
            self.reference_runs += 1
            self.reference_started.set()
            try:
                if self.hold:
                    await self.release.wait()
            except asyncio.CancelledError:
                self.reference_cancelled.set()
                raise
            if self.scripted:
                outcome = self.scripted.pop(0)
            else:
                outcome = await self.inner.run(job)
            self.reference_finished.set()
            return outcome
        return await self.inner.run(job)

    async def aclose(self) -> None:
        self.closed = True


def test_cancelling_one_grade_leaves_the_shared_preflight_running_for_the_others():
    backend = ScriptedBackend(hold=True)

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            first = asyncio.create_task(grader.grade(HALF, CORRECT))
            await asyncio.wait_for(backend.reference_started.wait(), 60)  # preflight running
            others = [asyncio.create_task(grader.grade(HALF, CORRECT)) for _ in range(8)]
            # One turn of the loop: each new task runs up to its await of the shared
            # preflight (grade() awaits nothing before it).
            await asyncio.sleep(0)
            assert not any(task.done() for task in [first, *others])
            first.cancel()  # its client went away
            with pytest.raises(asyncio.CancelledError):
                await first
            assert not backend.reference_cancelled.is_set()
            backend.release.set()
            return await asyncio.gather(*others)

    results = asyncio.run(go())
    assert [r.reward for r in results] == [1.0] * 8
    assert {r.category for r in results} == {"passed"}
    assert backend.reference_runs == 1  # not restarted by the cancellation


def test_a_preflight_whose_every_caller_left_still_finishes_and_is_cached():
    backend = ScriptedBackend(hold=True)

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            lonely = asyncio.create_task(grader.grade(HALF, CORRECT))
            await asyncio.wait_for(backend.reference_started.wait(), 60)
            lonely.cancel()
            with pytest.raises(asyncio.CancelledError):
                await lonely  # no caller is left
            backend.release.set()
            await asyncio.wait_for(backend.reference_finished.wait(), 60)  # finished alone
            assert not backend.reference_cancelled.is_set()
            return await grader.grade(HALF, CORRECT)

    result = asyncio.run(go())
    assert (result.reward, result.preflight) == (1.0, "cached")
    assert backend.reference_runs == 1


def test_grade_after_aclose_raises_instead_of_a_retryable_row():
    backend = ScriptedBackend()

    async def go():
        grader = Grader(SETTINGS, backend)
        assert (await grader.grade(HALF, CORRECT)).reward == 1.0
        await grader.aclose()
        with pytest.raises(GraderClosed, match="closed"):
            await grader.grade(HALF, CORRECT)

    asyncio.run(go())


def test_aclose_cancels_a_running_preflight():
    backend = ScriptedBackend(hold=True)  # never released: only a cancellation ends it

    async def go():
        grader = Grader(SETTINGS, backend)
        pending = asyncio.create_task(grader.grade(HALF, CORRECT))
        await asyncio.wait_for(backend.reference_started.wait(), 60)
        await grader.aclose()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(pending, 60)
        await asyncio.wait_for(backend.reference_cancelled.wait(), 60)
        assert not backend.reference_finished.is_set()

    asyncio.run(go())


def test_a_preflight_that_ran_out_of_time_is_retried_at_once_and_never_cached():
    timeout = RunOutcome(status="timeout", detail="wall clock")
    backend = ScriptedBackend(reference_outcomes=[timeout])

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            return await grader.grade(HALF, CORRECT)

    result = asyncio.run(go())
    assert result.reward == 1.0 and backend.reference_runs == 2

    # Timing out twice: the row reports it, but the next row of the task tries again.
    backend = ScriptedBackend(reference_outcomes=[timeout, timeout])

    async def twice():
        async with Grader(SETTINGS, backend) as grader:
            first = await grader.grade(HALF, CORRECT)
            second = await grader.grade(HALF, CORRECT)
            return first, second

    first, second = asyncio.run(twice())
    assert first.category == "reference_error" and first.preflight == "failed"
    assert (second.reward, second.preflight) == (1.0, "passed")
    assert backend.reference_runs == 3


def test_an_unavailable_sandbox_is_not_cached_either():
    down = RunOutcome(status="unavailable", detail="no sandbox")
    backend = ScriptedBackend(reference_outcomes=[down, down])

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            return [await grader.grade(HALF, CORRECT) for _ in range(2)]

    first, second = asyncio.run(go())
    assert first.category == "provider_unavailable" and first.terminal is False
    assert second.reward == 1.0


def test_a_reference_fault_is_a_fact_about_the_task_and_stays_cached():
    broken = task_row(
        "def half(n):\n    return n / 3\n",
        "half",
        [value_case([["int", "1"]], ["float", (0.5).hex()])],
    )
    backend = ScriptedBackend()

    async def go():
        async with Grader(SETTINGS, backend) as grader:
            return [await grader.grade(broken, CORRECT) for _ in range(3)]

    results = asyncio.run(go())
    assert {r.category for r in results} == {"reference_mismatch"}
    assert backend.reference_runs == 1


def test_the_preflight_cache_is_a_bounded_lru():
    def variant(n: int) -> dict:
        return task_row(
            f"def half(n):\n    return n / 2  # variant {n}\n",
            "half",
            [value_case([["int", "1"]], ["float", (0.5).hex()])],
        )

    backend = ScriptedBackend()
    settings = Settings(backend="in-process", preflight_cache_size=2, **FAST)

    async def go():
        async with Grader(settings, backend) as grader:
            for n in (0, 1, 0, 2):  # 0 is used again before 2 arrives: 1 is the LRU
                await grader.grade(variant(n), CORRECT)
            assert len(grader._preflights) == 2
            again_0 = await grader.grade(variant(0), CORRECT)
            again_1 = await grader.grade(variant(1), CORRECT)
            return again_0, again_1

    again_0, again_1 = asyncio.run(go())
    assert again_0.preflight == "cached"
    assert again_1.preflight == "passed"  # evicted, run again
    assert backend.reference_runs == 4


def test_a_grader_belongs_to_its_first_event_loop():
    backend = ScriptedBackend()
    grader = Grader(SETTINGS, backend)
    assert asyncio.run(grader.grade(HALF, CORRECT)).reward == 1.0
    with pytest.raises(RuntimeError, match="event loop it was first used on"):
        asyncio.run(grader.grade(HALF, CORRECT))
