"""The in-process backend, backend selection and settings."""

from __future__ import annotations

import asyncio

import pytest

from critpt_grader import codec
from critpt_grader.errors import GraderError
from critpt_grader.sandbox import InProcessBackend, LocalBackend, SandboxBackend, make_backend
from critpt_grader.sandbox.base import Job, Limits
from critpt_grader.settings import Settings


def run(job: Job):
    async def go():
        async with InProcessBackend() as backend:
            return await backend.run(job)

    return asyncio.run(go())


def test_runs_cases_and_captures_output():
    job = Job(
        source="def f(x):\n    print('got', x)\n    return x + 1\n",
        entrypoint="f",
        cases=({"args": [codec.encode(1)]}, {"args": [codec.encode(2)]}),
    )
    outcome = run(job)
    assert outcome.status == "ok"
    assert outcome.containment == "in-process"
    assert [codec.decode(case.value) for case in outcome.cases] == [2, 3]
    assert outcome.stdout == "got 1\ngot 2\n"


def test_source_error_status():
    outcome = run(Job(source="def f(:\n", entrypoint="f", cases=({"args": []},)))
    assert outcome.status == "source_error"
    assert "line 1" in outcome.detail


def test_output_budget_spans_the_cases():
    job = Job(
        source="def f():\n    return 'x' * 3000\n",
        entrypoint="f",
        cases=({"args": []},) * 3,
        limits=Limits(output_bytes=7000),
    )
    kinds = [case.kind for case in run(job).cases]
    assert kinds == ["value", "value", "encode_error"]


def test_backends_are_made_by_name_and_meet_the_seam():
    assert isinstance(make_backend("in-process", Settings()), InProcessBackend)
    local = make_backend("local", Settings())
    assert isinstance(local, LocalBackend)
    assert isinstance(local, SandboxBackend)
    with pytest.raises(GraderError, match="unknown sandbox backend"):
        make_backend("cloud-of-dreams", Settings())


def test_settings_read_the_environment_and_make_limits(monkeypatch):
    monkeypatch.setenv("CRITPT_GRADER_CASE_SECONDS", "7.5")
    monkeypatch.setenv("CRITPT_GRADER_REQUIRE_STRONG_CONTAINMENT", "true")
    settings = Settings()
    assert settings.local.require_strong_containment is True
    limits = settings.limits()
    assert (limits.case_seconds, limits.wall_seconds, limits.memory_mb) == (7.5, 120.0, 1536)
    assert limits.source_bytes == 262_144


def test_settings_refuse_nonsense():
    with pytest.raises(ValueError):
        Settings(case_seconds=0)
