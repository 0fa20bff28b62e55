"""Stand-ins for the acceptance tests: a task loader that needs no codec and a scripted grader."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from critpt_grader.acceptance.run import Graded
from critpt_grader.acceptance.sets import Candidate, Expected
from critpt_grader.result import CaseReport, GradeResult, LeafReport
from critpt_grader.tasks.model import Task
from critpt_grader.verdict import Category
from tests.support.paths import SUPPORT

MINI_SET = SUPPORT / "data" / "acceptance_mini"


def fake_task(problem_id: str) -> Task:
    return Task(
        problem_id=problem_id,
        entrypoint="f",
        reference_source="def f():\n    return 1\n",
        reference_entrypoint="f",
        cases=(),
    )


def fake_loader(path: Path) -> list[Task]:
    """Reads only the problem ids of task rows (or of a single row ``.json``)."""
    text = Path(path).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [fake_task(row["task_data"]["problem_id"]) for row in rows]


def mismatch(path: str = "/0", expected: str = "1.5", observed: str = "3.0") -> GradeResult:
    leaf = LeafReport(
        path=path,
        kind="float",
        status="mismatch",
        reason="outside rtol=5e-12 atol=0",
        expected=expected,
        observed=observed,
    )
    case = CaseReport(index=0, status="mismatch", outcome="value", leaves=[leaf])
    return GradeResult.of(Category.CANDIDATE_MISMATCH, reason="case 0: /0 differs", cases=[case])


class ScriptedGrader:
    """Answers with ``verdict(task, response)``; records how many grades ran at once."""

    def __init__(
        self,
        verdict: Callable[[Task, Any], GradeResult] | None = None,
        *,
        delay: float = 0.0,
    ) -> None:
        self._verdict = verdict or (lambda task, response: GradeResult.of(Category.PASSED))
        self._delay = delay
        self.in_flight = 0
        self.most_in_flight = 0
        self.calls: list[tuple[str, Any]] = []
        self.closed = False

    async def __aenter__(self) -> ScriptedGrader:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.closed = True

    async def grade(self, task: Task, response: Any) -> GradeResult:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self._delay)
            self.calls.append((task.problem_id, response))
            return self._verdict(task, response)
        finally:
            self.in_flight -= 1


def candidate(
    kind: str = "reference",
    *,
    line: int = 1,
    task_id: str = "t1",
    against: str | None = None,
    expect: Expected | None = None,
    set_name: str = "s",
    label: str | None = None,
) -> Candidate:
    return Candidate(
        set_name=set_name,
        line=line,
        task_id=task_id,
        against=against or task_id,
        kind=kind,
        response="```python\ndef f():\n    return 1\n```",
        expect=expect or Expected("scored", 1.0, "passed"),
        label=label,
    )


def graded(
    kind: str = "reference",
    result: GradeResult | None = None,
    *,
    labels: tuple[str, ...] = (),
    error: str | None = None,
    **candidate_fields: Any,
) -> Graded:
    if result is None and error is None:
        result = GradeResult.of(Category.PASSED)
    return Graded(candidate(kind, **candidate_fields), labels, result, error=error, seconds=0.01)
