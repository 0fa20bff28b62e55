"""The contract every sandbox backend meets, written once and run against each backend.

A backend's test module subclasses :class:`BackendContract`, says how to make the backend
(``make``), how to make one whose infrastructure fails (``make_faulty``), what of it is
still around after a run (``leftovers``), and which items do not apply (``not_applicable``:
the in-process backend contains nothing, so timeouts, memory, forged exits, leftovers and
an unprivileged user are not its to keep). Every check also holds the invariant no backend
may break: a run that did not finish carries no case outcomes, so nothing downstream can
score it.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any, ClassVar

import pytest

from critpt_grader import codec
from critpt_grader.sandbox.base import Job, Limits, RunOutcome, SandboxBackend

LIMITS = Limits(wall_seconds=30, case_seconds=3, output_bytes=64 * 1024)
CONTAINMENT_ITEMS = frozenset(
    {"timeout", "wall", "memory", "forged_exit", "leftovers", "unprivileged"}
)


def call(*args: Any) -> dict[str, Any]:
    return {"args": [codec.encode(arg) for arg in args]}


def job(source: str, *cases: dict[str, Any], limits: Limits = LIMITS, **kw: Any) -> Job:
    return Job(source=source, entrypoint="f", cases=cases, limits=limits, **kw)


def checked(outcome: RunOutcome, job: Job) -> RunOutcome:
    """The invariants: a finished run has one outcome per case; a run that did not finish
    says why, and whatever case outcomes it carries hold no value past its first fault
    (a run stopped at a decisive case reports the cases before it, never a pass after)."""
    assert isinstance(outcome, RunOutcome)
    if outcome.status == "ok":
        assert len(outcome.cases) == len(job.cases)
        return outcome
    assert outcome.detail, "a run that did not finish says why"
    assert outcome.cases == [] or len(outcome.cases) == len(job.cases)
    kinds = [case.kind for case in outcome.cases]
    faults = [i for i, kind in enumerate(kinds) if kind not in {"value", "exception"}]
    assert outcome.cases == [] or faults, f"a {outcome.status} run with only answers"
    if outcome.status in {"unavailable", "source_error", "no_result", "output_limit"}:
        assert outcome.cases == [], f"a {outcome.status} run carries case outcomes"
    return outcome


# The programs of the contract, by name, with the outcome each must have. The scripted
# backend answers from this table (it runs nothing), so it meets the same checks.
VALUES = "def f(x):\n    print('seen', x)\n    return x + 1\n"
RAISES = "def f(x):\n    if x:\n        raise ValueError('no')\n    return 0\n"
LOOPS = "def f(x):\n    while x:\n        pass\n    return 7\n"
GREEDY = "def f(x):\n    chunks = []\n    while x:\n        chunks.append(bytearray(64 << 20))\n"
VERBOSE = "def f(x):\n    return 'x' * x\n"
SYNTAX = "def f(:\n"
FORGED = (
    "import os, sys\n"
    "def f(x):\n"
    "    print('CRITPT-RESULT ' + '0' * 32 + ' {\"status\": \"ok\", \"cases\": []}', flush=True)\n"
    "    if x:\n"
    "        os._exit(0)\n"
    "    return x\n"
)


def leaves_a_process(marker: str) -> str:
    return (
        "import subprocess\n"
        "def f(x):\n"
        # sh stays up (a command follows the sleep), the marker in its command line
        f"    command = 'sleep 300; : {marker}'\n"
        "    subprocess.Popen(['/bin/sh', '-c', command], start_new_session=True)\n"
        "    return x\n"
    )


class BackendContract:
    not_applicable: ClassVar[frozenset[str]] = frozenset()

    def make(self) -> SandboxBackend:
        raise NotImplementedError

    def make_faulty(self) -> SandboxBackend | None:
        """A backend whose infrastructure fails (cannot start a sandbox); None: not shown."""
        return None

    def leftovers(self, marker: str) -> list[str]:
        """What this backend left behind: processes mentioning ``marker``, sandboxes..."""
        return []

    def underway(self, backend: SandboxBackend, marker: str) -> bool:
        """Whether a run of :func:`leaves_a_process` with ``marker`` is underway: by
        default, its process is up on this host."""
        return bool(processes_mentioning(marker))

    # --- helpers ----------------------------------------------------------------------

    def applies(self, item: str) -> None:
        if item in self.not_applicable:
            pytest.skip(f"not applicable to the {type(self).__name__} backend")

    def run(self, *jobs: Job, backend: SandboxBackend | None = None) -> list[RunOutcome]:
        async def go() -> list[RunOutcome]:
            async with backend or self.make() as used:
                return list(await asyncio.gather(*(used.run(j) for j in jobs)))

        outcomes = asyncio.run(go())
        return [checked(outcome, j) for outcome, j in zip(outcomes, jobs, strict=True)]

    # --- the contract -----------------------------------------------------------------

    def test_values_per_case_and_captured_output(self):
        (outcome,) = self.run(job(VALUES, call(1), call(2)))
        assert outcome.status == "ok"
        assert [codec.decode(case.value) for case in outcome.cases] == [2, 3]
        assert "seen 1" in outcome.stdout
        assert outcome.containment

    def test_exceptions_per_case(self):
        (outcome,) = self.run(job(RAISES, call(0), call(1)))
        assert outcome.status == "ok"
        assert outcome.cases[0].kind == "value"
        raised = outcome.cases[1]
        assert (raised.kind, raised.error_type, raised.error_builtin) == (
            "exception",
            "ValueError",
            True,
        )

    def test_source_error(self):
        (outcome,) = self.run(job(SYNTAX, call(1)))
        assert outcome.status == "source_error"

    def test_case_timeout_is_a_case_outcome(self):
        self.applies("timeout")
        (outcome,) = self.run(job(LOOPS, call(1), call(0)))
        # The run goes on to the next case, or stops there (the timeout decides the row).
        assert outcome.status in {"ok", "timeout"}
        assert outcome.cases[0].kind == "timeout"
        if outcome.status == "ok":
            assert outcome.cases[1].kind == "value"

    def test_wall_clock_ends_the_run(self):
        self.applies("wall")
        limits = Limits(wall_seconds=3, case_seconds=20)
        (outcome,) = self.run(job(LOOPS, call(1), limits=limits))
        assert outcome.status == "timeout"
        assert all(case.kind != "value" for case in outcome.cases)

    def test_memory_is_a_case_outcome(self):
        self.applies("memory")
        limits = Limits(wall_seconds=30, case_seconds=10, memory_mb=512)
        (outcome,) = self.run(job(GREEDY, call(1), limits=limits))
        assert outcome.status in {"ok", "memory"}
        assert all(case.kind == "memory" for case in outcome.cases)

    def test_output_over_the_limit_is_never_a_value(self):
        (outcome,) = self.run(job(VERBOSE, call(10), call(200_000)))
        assert outcome.status in {"ok", "output_limit"}
        if outcome.status == "ok":
            assert codec.decode(outcome.cases[0].value) == "x" * 10
            assert outcome.cases[1].kind == "encode_error"

    def test_forged_output_is_never_believed(self):
        (outcome,) = self.run(job(FORGED, call(0)))
        assert outcome.status == "ok"
        assert codec.decode(outcome.cases[0].value) == 0  # the real result, not the forgery

    def test_forged_output_then_exit_is_no_result(self):
        self.applies("forged_exit")
        (outcome,) = self.run(job(FORGED, call(1)))
        # The forged frame has the wrong nonce; the call's process died without reporting.
        assert outcome.status == "no_result" or outcome.cases[0].kind == "crashed"

    def test_no_leftovers(self):
        self.applies("leftovers")
        marker = f"critpt-contract-{uuid.uuid4().hex[:12]}"
        (outcome,) = self.run(job(leaves_a_process(marker), call(1)))
        assert outcome.status == "ok"
        assert self.leftovers(marker) == []

    def test_the_program_never_runs_as_root(self):
        """Neither uid nor gid 0, as the program sees them, even where the provider runs
        commands as root (Daytona does): the runner drops, and refuses otherwise."""
        self.applies("unprivileged")
        ids = "import os\ndef f(x):\n    return [*os.getresuid(), *os.getresgid()]\n"
        (outcome,) = self.run(job(ids, call(0)))
        assert outcome.status == "ok", outcome.detail
        assert 0 not in codec.decode(outcome.cases[0].value)

    def test_aclose_is_idempotent_and_later_runs_are_unavailable(self):
        async def go() -> tuple[RunOutcome, RunOutcome]:
            backend = self.make()
            first = await backend.run(job(VALUES, call(1)))
            await backend.aclose()
            await backend.aclose()
            return first, await backend.run(job(VALUES, call(1)))

        first, after = asyncio.run(go())
        assert first.status == "ok"
        assert after.status == "unavailable"
        assert self.leftovers("critpt-contract") == []

    def test_infrastructure_fault_is_unavailable(self):
        backend = self.make_faulty()
        if backend is None:
            pytest.skip(f"{type(self).__name__} shows no infrastructure fault")
        (outcome,) = self.run(job(VALUES, call(1)), backend=backend)
        assert outcome.status == "unavailable"

    def test_concurrent_jobs_keep_their_own_results(self):
        jobs = [job(VALUES, call(n)) for n in range(3)]
        outcomes = self.run(*jobs)
        assert [codec.decode(o.cases[0].value) for o in outcomes] == [1, 2, 3]

    def test_a_cancelled_run_leaves_nothing(self):
        self.applies("leftovers")
        marker = f"critpt-contract-{uuid.uuid4().hex[:12]}"
        source = leaves_a_process(marker).replace("return x", "while True:\n        pass")

        async def go() -> None:
            async with self.make() as backend:
                task = asyncio.ensure_future(backend.run(job(source, call(1))))
                await until(lambda: task.done() or self.underway(backend, marker))
                assert not task.done(), task.result()  # still running: it loops forever
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

        asyncio.run(go())
        assert self.leftovers(marker) == []


async def until(condition, seconds: float = 60.0) -> None:
    """Wait until ``condition()`` holds, checking every few milliseconds; fail past
    ``seconds``."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"not so within {seconds} s"
        await asyncio.sleep(0.01)


def processes_mentioning(marker: str) -> list[str]:
    """Host processes whose command line mentions ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if marker in command and int(pid) != os.getpid():
            found.append(f"{pid}: {command[:120]}")
    return found
