"""Running jobs in the local bubblewrap sandbox as the sandbox user, for the isolation tests."""

from __future__ import annotations

import asyncio

import pytest

from critpt_grader import codec
from critpt_grader.sandbox.base import Job, RunOutcome
from critpt_grader.sandbox.containment import bwrap_works
from critpt_grader.sandbox.identity import drop_prefix, sandbox_identity
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings

IDENTITY = sandbox_identity(Settings().local.sandbox_user)


# The marks of a test that runs jobs in the local sandbox as the sandbox user.
BWRAP_AS_SANDBOX_USER = [
    pytest.mark.sandbox,
    pytest.mark.skipif(
        IDENTITY is None or not bwrap_works("bwrap", tuple(drop_prefix(IDENTITY))),
        reason="bubblewrap does not run here as the sandbox user",
    ),
]


def value(outcome: RunOutcome):
    assert outcome.status == "ok", outcome.detail
    assert outcome.cases[0].kind == "value", outcome.cases[0].message
    return codec.decode(outcome.cases[0].value)


def run_all(*jobs: Job, warm: bool = True) -> list[RunOutcome]:
    async def go() -> list[RunOutcome]:
        settings = Settings(max_concurrent_sandboxes=1, warm_sandboxes=warm)
        async with LocalBackend(settings) as backend:
            return [await backend.run(each) for each in jobs]

    return asyncio.run(go())
