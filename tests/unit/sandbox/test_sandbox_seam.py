"""The seam itself: the base class, backend discovery, one source of limit defaults."""

from __future__ import annotations

import asyncio
from dataclasses import fields
from importlib.metadata import EntryPoint

import pytest

import critpt_grader.sandbox as sandbox
from critpt_grader.errors import GraderError
from critpt_grader.sandbox.base import Job, Limits, RunOutcome, SandboxBackend
from critpt_grader.sandbox.outcomes import without_result
from critpt_grader.sandbox.scripted import ScriptedBackend
from critpt_grader.settings import Settings

GROUP = "critpt_grader.backends"


def entry(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=GROUP)


def test_a_backend_is_run_plus_the_inherited_context_manager():
    class Echo(SandboxBackend):
        name = "echo"
        closed = 0

        async def run(self, job: Job) -> RunOutcome:
            return RunOutcome(status="unavailable", detail=job.source)

        async def aclose(self) -> None:
            self.closed += 1

    async def go() -> tuple[Echo, RunOutcome]:
        async with Echo() as backend:
            return backend, await backend.run(Job("hello", "f", ()))

    backend, outcome = asyncio.run(go())
    assert (outcome.detail, backend.closed) == ("hello", 1)


def test_backends_come_from_entry_points_too(monkeypatch):
    found = [
        entry("cloud-of-tests", "critpt_grader.sandbox.scripted:ScriptedBackend"),
        entry("not-a-backend", "critpt_grader.sandbox.base:Limits"),
        entry("local", "critpt_grader.sandbox.scripted:ScriptedBackend"),
    ]
    monkeypatch.setattr(sandbox, "_entry_points", lambda: found)
    assert "cloud-of-tests" in sandbox.available_backends()
    assert isinstance(sandbox.make_backend("cloud-of-tests", Settings()), ScriptedBackend)
    with pytest.raises(GraderError, match="not a SandboxBackend"):
        sandbox.make_backend("not-a-backend", Settings())
    # A built-in name cannot be taken over by an installed distribution.
    assert type(sandbox.make_backend("local", Settings())).__name__ == "LocalBackend"
    with pytest.raises(GraderError, match="cloud-of-tests"):
        sandbox.make_backend("cloud-of-dreams", Settings())


def test_limits_have_one_source_of_defaults():
    settings_limits, defaults = Settings().limits(), Limits()
    assert settings_limits == defaults
    assert {f.name for f in fields(Limits)} <= set(Settings.model_fields)


def test_the_shared_interpretation_knows_no_bubblewrap():
    # Only the backend says a run never started; a "bwrap:" line alone is not infrastructure.
    assert without_result(1, b"bwrap: oops", 0.1).status == "no_result"
    assert without_result(1, b"whatever", 0.1, never_started=True).status == "unavailable"


def test_local_settings_live_in_their_own_model_under_the_same_names(monkeypatch):
    from critpt_grader.settings import LocalSettings

    monkeypatch.setenv("CRITPT_GRADER_WARM_SANDBOXES", "0")
    monkeypatch.setenv("CRITPT_GRADER_SANDBOX_CPUS", "2")
    settings = Settings(seccomp=False)  # a top-level keyword, as the CLI flags give it
    assert isinstance(settings.local, LocalSettings)
    assert (settings.local.warm_sandboxes, settings.local.sandbox_cpus) == (False, 2.0)
    assert settings.local.seccomp is False
    assert not hasattr(settings, "seccomp")  # read where it lives: settings.local
    assert "warm_sandboxes" not in Settings.model_fields
    assert Settings(**settings.model_dump()).local == settings.local
    with pytest.raises(ValueError):
        Settings(sandbox_cpus=0)
