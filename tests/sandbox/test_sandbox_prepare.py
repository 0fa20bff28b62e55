"""A sandbox started ahead of its job (``prepare``): the candidate's, while the reference runs.

It only starts: the candidate runs in it after the reference preflight passed, never before,
never after a reference fault; unused, it is taken down when the backend closes, even while
it is still starting.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest

from critpt_grader import codec
from critpt_grader.pipeline import Grader
from critpt_grader.sandbox.base import Job
from critpt_grader.sandbox.containment import bwrap_works
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.sandbox.warm import WarmSandbox
from critpt_grader.settings import Settings

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(
        shutil.which("bwrap") is None or not bwrap_works(),
        reason="bubblewrap (bwrap) is not installed or cannot run here",
    ),
]

CASES = ({"args": [codec.encode(3)], "kwargs": {}},)


def _job(source: str, role: str = "candidate") -> Job:
    return Job(source=source, entrypoint="f", cases=CASES, role=role)  # type: ignore[arg-type]


@pytest.fixture
def starts(monkeypatch):
    """Every warm sandbox started, in order."""
    started: list[WarmSandbox] = []
    real = WarmSandbox.start.__func__

    def start(cls, *args, **kwargs):
        sandbox = real(cls, *args, **kwargs)
        started.append(sandbox)
        return sandbox

    monkeypatch.setattr(WarmSandbox, "start", classmethod(start))
    return started


def test_a_run_after_prepare_uses_the_prepared_sandbox_and_starts_no_other(starts):
    async def go():
        async with LocalBackend(Settings()) as backend:
            job = _job("def f(n):\n    return n + 1\n")
            backend.prepare(job)
            backend.prepare(job)  # once is enough: one start per role
            outcome = await backend.run(job)
            backend.prepare(job)  # a sandbox of the role is idle now: nothing to start
            await asyncio.sleep(0)
            return outcome, len(starts)

    outcome, started = asyncio.run(go())
    assert outcome.status == "ok" and outcome.cases[0].value == codec.encode(4)
    assert started == 1
    assert all(sandbox.process.poll() is not None for sandbox in starts)


def test_an_unused_prepared_sandbox_is_closed_with_the_backend_even_mid_start(starts):
    async def go(wait: float):
        async with LocalBackend(Settings()) as backend:
            backend.prepare(_job("def f(n):\n    return n\n"))
            await asyncio.sleep(wait)

    asyncio.run(go(0.05))  # closed while it is starting
    asyncio.run(go(5.0))  # closed idle
    assert starts, "no sandbox was started"
    assert all(sandbox.process.poll() is not None for sandbox in starts)


def _envelope(node):
    return {"format": "critpt-value-v1", "value": node}


CANDIDATE = "```python\ndef f(n):\n    return n + 1\n```"


def _task(reference: str) -> dict:
    case = {
        "args": [_envelope(["int", "3"])],
        "expected": {"kind": "value", "value": _envelope(["int", "4"])},
    }
    data = {
        "schema_version": 1,
        "problem_id": "test-prepare",
        "reference_source": reference,
        "entrypoint": "f",
        "test_cases": [case],
    }
    return {"responses_create_params": {"input": []}, "task_data": data}


def test_a_reference_fault_leaves_the_prepared_candidate_sandbox_unused_and_closed(starts):
    ran: list[Job] = []

    async def go():
        async with Grader(Settings()) as grader:
            real = grader.backend.run

            async def run(job):
                ran.append(job)
                return await real(job)

            grader.backend.run = run  # type: ignore[method-assign]
            return await grader.grade(_task("def f(n):\n    raise ValueError(n)\n"), CANDIDATE)

    result = asyncio.run(go())
    assert result.preflight == "failed", result
    assert [job.role for job in ran] == ["reference"]
    assert len(starts) == 2  # the reference's sandbox and the candidate's, started together
    assert all(sandbox.process.poll() is not None for sandbox in starts)


def test_the_candidate_runs_in_the_sandbox_started_ahead_after_the_reference_passed(starts):
    async def go():
        async with Grader(Settings()) as grader:
            first = await grader.grade(_task("def f(n):\n    return n + 1\n"), CANDIDATE)
            second = await grader.grade(_task("def f(n):\n    return n + 1\n"), CANDIDATE)
            return first, second

    first, second = asyncio.run(go())
    assert first.category == "passed", first.reason
    assert second.category == "passed" and second.preflight == "cached"
    assert len(starts) == 2  # one reference sandbox, one candidate sandbox: reused
