"""Sandbox start-up, measured apart from the tasks.

A backend starts its sandboxes on first use (the containment probe, a warm sandbox per role
and run slot). Left to the audit's first tasks, that start-up would be charged to their
``run_seconds``, so the first task of a set would look the slowest for no fault of its own.
Before any task is timed the audit grades ``slots`` trivial answers of its own, each to its
own task so their preflights run side by side: every run slot starts a reference and a
candidate sandbox. The time that takes is the report's ``startup_seconds``.

What it guarantees: nothing about the verdicts (a start-up that fails here is met again,
and reported, by the tasks); only where the start-up time is counted.
"""

from __future__ import annotations

import asyncio
import time

from critpt_grader import codec
from critpt_grader.pipeline import Grader
from critpt_grader.tasks import load_row

_SOURCE = "def start(x):\n    return x\n"
_RESPONSE = f"```python\n{_SOURCE}```\n"


async def warm_up(grader: Grader, slots: int) -> float:
    """Start ``slots`` sandboxes of each role through ``grader``; the seconds it took."""
    started = time.perf_counter()
    await asyncio.gather(*(grader.grade(_task(k), _RESPONSE) for k in range(max(1, slots))))
    return time.perf_counter() - started


def _task(k: int):
    """A one-case task of the audit's own; ``k`` makes each a preflight of its own."""
    value = codec.encode(k)
    return load_row(
        {
            "task_data": {
                "schema_version": 1,
                "problem_id": f"audit-warm-up-{k}",
                "problem": "Return x.",
                "reference_source": _SOURCE,
                "entrypoint": "start",
                "test_cases": [{"args": [value], "expected": {"kind": "value", "value": value}}],
            }
        }
    )
