"""Rows graded through a Grader whose backend runs no code (WireBackend): a job's source
carries, in a comment, the wire envelope every case returns."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from unittest.mock import patch

from critpt_grader.judge.pool import Budget, JobOutcome, WorkerPool
from critpt_grader.pipeline import Grader
from critpt_grader.sandbox.base import CaseOutcome, RunOutcome
from critpt_grader.settings import Settings

BUDGET = 3.0  # seconds of CPU per row in these tests (the default is 10)


SETTINGS = Settings(backend="in-process", compare_seconds=BUDGET, compare_workers=1)


def envelope(node) -> dict:
    return {"format": "critpt-value-v1", "value": node}


_WIRE: dict[str, dict] = {}


class WireBackend:
    """Runs no code: returns, for every case, the envelope named after ``# wire:`` in the
    job's source."""

    name = "wire"

    async def run(self, job):
        value = _WIRE[job.source.split("# wire:", 1)[1].strip()]
        cases = [CaseOutcome("value", value=value) for _ in job.cases]
        return RunOutcome("ok", cases=cases, containment="none (test)")

    async def aclose(self) -> None:
        pass


def source(node) -> str:
    key = str(len(_WIRE))
    _WIRE[key] = envelope(node)
    return f"def f(x):\n    pass\n# wire:{key}"


def response(node) -> str:
    return f"```python\n{source(node)}\n```\n"


def task(expected, cases: int = 1) -> dict:
    case = {
        "args": [envelope(["int", "1"])],
        "expected": {"kind": "value", "value": envelope(expected)},
    }
    return {
        "responses_create_params": {"input": []},
        "task_data": {
            "schema_version": 1,
            "problem_id": f"hostile-{abs(hash(json.dumps(expected))) % 10**8}-{cases}",
            "reference_source": source(expected),
            "entrypoint": "f",
            "test_cases": [case] * cases,
        },
    }


@dataclass
class Spent:
    """What grading one row cost, in CPU (independent of the machine's load): the grading
    process's own CPU and every comparison job the row ran, with the budget it ran under."""

    host_cpu_seconds: float = 0.0
    jobs: list[tuple[str, Budget, JobOutcome]] = field(default_factory=list)

    def overspent(self, slack: float) -> list[str]:
        """The jobs that used more CPU than their budget plus ``slack`` (the kill's latency)."""
        return [
            f"{target}: {job.cpu_seconds:.2f} s of CPU, budget {budget.cpu_seconds:g} s"
            for target, budget, job in self.jobs
            if job.cpu_seconds > budget.cpu_seconds + slack
        ]

    @property
    def cpu_seconds(self) -> float:
        return self.host_cpu_seconds + sum(job.cpu_seconds for _, _, job in self.jobs)


def grade_all(rows, settings: Settings = SETTINGS) -> list[tuple[object, Spent]]:
    """Grade ``(task, response)`` pairs in order with one Grader; return (result, Spent)."""
    spent: list[Spent] = []
    run = WorkerPool.run

    def recorded(pool: WorkerPool, target: str, args: tuple, budget: Budget | None = None):
        outcome = run(pool, target, args, budget)
        spent[-1].jobs.append((target, budget or pool.budget, outcome))
        return outcome

    async def go():
        out = []
        async with Grader(settings, backend=WireBackend()) as grader:
            for row_task, row_response in rows:
                spent.append(Spent())
                started = time.process_time()
                result = await grader.grade(row_task, row_response)
                spent[-1].host_cpu_seconds = time.process_time() - started
                out.append((result, spent[-1]))
        return out

    with patch.object(WorkerPool, "run", recorded):
        return asyncio.run(go())


HALF = ["float", (0.5).hex()]


UNDECIDED = " + ".join(f"sin({k}*x)**2 + cos({k}*x)**2" for k in range(1, 21))
