"""The backend contract (tests/support/backend_contract.py) for the built-in backends.

Local: real bubblewrap sandboxes, fresh and warm. In-process: what applies to a backend
that contains nothing. Scripted: runs no code; it answers from the contract's own table,
so what it shows is its lifecycle (closing, cancellation, faults as ``unavailable``).
"""

from __future__ import annotations

import shutil

import pytest

from critpt_grader import codec
from critpt_grader.sandbox.base import CaseOutcome, Job, RunOutcome
from critpt_grader.sandbox.containment import bwrap_works
from critpt_grader.sandbox.inprocess import InProcessBackend
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.sandbox.scripted import HANG, ScriptedBackend, exception, failed, ok, value
from critpt_grader.settings import Settings
from tests.support import backend_contract as contract
from tests.support.backend_contract import CONTAINMENT_ITEMS, BackendContract, processes_mentioning

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None or not bwrap_works(),
    reason="bubblewrap (bwrap) is not installed or cannot run here",
)


@needs_bwrap
@pytest.mark.sandbox
class TestLocalFresh(BackendContract):
    warm = False

    def make(self) -> LocalBackend:
        return LocalBackend(Settings(warm_sandboxes=self.warm))

    def make_faulty(self) -> LocalBackend:
        return LocalBackend(
            Settings(warm_sandboxes=self.warm, sandbox_python="/nonexistent/python3")
        )

    def leftovers(self, marker: str) -> list[str]:
        return processes_mentioning(marker)


class TestLocalWarm(TestLocalFresh):
    warm = True


class TestInProcess(BackendContract):
    not_applicable = CONTAINMENT_ITEMS

    def make(self) -> InProcessBackend:
        return InProcessBackend()


def oracle(job: Job) -> object:
    """What the contract's programs do, as a real backend reports it."""
    inputs = [codec.decode(case["args"][0]) for case in job.cases]
    first = inputs[0] if inputs else None
    if job.source == contract.VALUES:
        return ok(*(value(n + 1) for n in inputs), stdout="seen 1")
    if job.source == contract.RAISES:
        return ok(value(0), exception("ValueError", "no"))
    if job.source == contract.SYNTAX:
        return failed("source_error", "line 1: invalid syntax")
    if job.source == contract.VERBOSE:
        return ok(value("x" * 10), CaseOutcome(kind="encode_error", error_type="too_large"))
    if job.source == contract.FORGED and first == 0:
        return ok(value(0))
    if "while True" in job.source:
        return HANG
    if "subprocess.Popen" in job.source:
        return ok(value(first))
    raise LookupError("not in the contract's table")


class TestScripted(BackendContract):
    not_applicable = CONTAINMENT_ITEMS - {"leftovers"}

    def make(self) -> ScriptedBackend:
        return ScriptedBackend(script=oracle)

    def underway(self, backend: ScriptedBackend, marker: str) -> bool:
        return backend.in_flight > 0  # it runs nothing: the run waits on its HANG item

    def make_faulty(self) -> ScriptedBackend:
        return ScriptedBackend(script=[ConnectionError("the provider went away")])


def test_scripted_backend_scripts_by_role_in_order():
    import asyncio

    backend = ScriptedBackend(
        script={"reference": ok(value(1)), "candidate": [ok(value(2)), failed("timeout")]}
    )

    async def go() -> list[RunOutcome]:
        async with backend:
            jobs = [
                Job("", "f", (), role="reference"),
                Job("", "f", (), role="candidate"),
                Job("", "f", (), role="candidate"),
                Job("", "f", (), role="candidate"),
            ]
            return [await backend.run(j) for j in jobs]

    outcomes = asyncio.run(go())
    assert [o.status for o in outcomes] == ["ok", "ok", "timeout", "unavailable"]
    assert "only 2 candidate outcomes" in outcomes[3].detail
    assert len(backend.jobs) == 4 and backend.closed
