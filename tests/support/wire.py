"""Rows graded through a Grader whose backend runs no code (WireBackend): a job's source
carries, in a comment, the wire envelope every case returns."""

from __future__ import annotations

import asyncio
import json
import time

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


def grade_all(rows, settings: Settings = SETTINGS):
    """Grade ``(task, response)`` pairs in order with one Grader; return (result, seconds)."""

    async def go():
        out = []
        async with Grader(settings, backend=WireBackend()) as grader:
            for row_task, row_response in rows:
                started = time.monotonic()
                result = await grader.grade(row_task, row_response)
                out.append((result, time.monotonic() - started))
        return out

    return asyncio.run(go())


HALF = ["float", (0.5).hex()]


UNDECIDED = " + ".join(f"sin({k}*x)**2 + cos({k}*x)**2" for k in range(1, 21))
