"""Grade every selected candidate of the loaded sets and judge each verdict against its expectation.

The grader is any object with ``async grade(task, response) -> GradeResult`` (the real
:class:`critpt_grader.pipeline.Grader`, or a fake in unit tests). Candidates are submitted
together, bounded by ``jobs``; results come back in the order of the input. A grader that
raises on one candidate does not stop the run: the candidate is recorded as a grader error,
which never meets an expectation.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from critpt_grader.acceptance.sets import AcceptanceSet, Candidate, Expected
from critpt_grader.result import GradeResult
from critpt_grader.tasks.model import Task


class GraderLike(Protocol):
    async def grade(self, task: Task, response: str | dict[str, Any]) -> GradeResult: ...


@dataclass(frozen=True, slots=True)
class Graded:
    candidate: Candidate
    labels: tuple[str, ...]  # output types of the task graded against
    result: GradeResult | None  # None only when the grader itself raised
    error: str | None = None
    seconds: float = 0.0

    @property
    def met(self) -> bool:
        return self.result is not None and expectation_met(self.candidate.expect, self.result)


def expectation_met(expect: Expected, result: GradeResult) -> bool:
    """Outcome and reward must equal; the category too when the expectation names one."""
    if result.outcome != expect.outcome or result.reward != expect.reward:
        return False
    return expect.category is None or str(result.category) == expect.category


def select_candidates(
    sets: Sequence[AcceptanceSet],
    *,
    kinds: Iterable[str] | None = None,
    task_ids: Iterable[str] | None = None,
) -> list[tuple[Candidate, Task, tuple[str, ...]]]:
    """Candidates passing the filters, each with the task it is graded against and its labels.

    A task-id filter keeps a candidate written for *or* graded against one of the ids, so
    selecting a primary task also keeps the alternates replayed against it.
    """
    kind_filter = set(kinds) if kinds is not None else None
    task_filter = set(task_ids) if task_ids is not None else None
    selected = []
    for acceptance_set in sets:
        for candidate in acceptance_set.candidates:
            if kind_filter is not None and candidate.kind not in kind_filter:
                continue
            if task_filter is not None and not {candidate.task_id, candidate.against} & task_filter:
                continue
            labels = acceptance_set.labels.get(candidate.against) or acceptance_set.labels.get(
                candidate.task_id, ()
            )
            selected.append((candidate, acceptance_set.tasks[candidate.against], labels))
    return selected


async def grade_all(
    selected: Sequence[tuple[Candidate, Task, tuple[str, ...]]],
    grader: GraderLike,
    *,
    jobs: int,
    on_done: Callable[[Graded], None] | None = None,
) -> list[Graded]:
    """Grade ``selected`` with at most ``jobs`` grades in flight; report each as it finishes."""
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    gate = asyncio.Semaphore(jobs)

    async def grade_one(candidate: Candidate, task: Task, labels: tuple[str, ...]) -> Graded:
        async with gate:
            started = time.perf_counter()
            try:
                result = await grader.grade(task, candidate.response)
                graded = Graded(candidate, labels, result, seconds=time.perf_counter() - started)
            except Exception as exc:  # a grader bug must show in the report, not end the run
                graded = Graded(
                    candidate,
                    labels,
                    None,
                    error=f"{type(exc).__name__}: {exc}",
                    seconds=time.perf_counter() - started,
                )
        if on_done is not None:
            on_done(graded)
        return graded

    return list(await asyncio.gather(*(grade_one(*item) for item in selected)))
