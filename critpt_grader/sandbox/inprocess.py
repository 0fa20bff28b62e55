"""Run jobs inside the grader's own process — for fast pipeline tests only. UNSAFE.

The program runs in a worker thread of this process with no containment at all: it can read
and write every file the grader can, open sockets, exit the process, loop forever (nothing
can stop a thread) and exhaust memory. No limit except the output bounds is enforced. Use it
for trusted sources in unit tests; grade untrusted code only with a real sandbox.

It shares the sandboxed runner's logic (:mod:`critpt_grader.runner.program`), so loading,
entry point resolution, inputs and encoding behave exactly as in a sandbox. The job goes
through the same JSON form the runner receives. Runs are serialized, because capturing
``sys.stdout`` is process-wide.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import threading
import time

from critpt_grader.runner.program import SourceError, load_program, run_case
from critpt_grader.runner.protocol import json_size
from critpt_grader.runner.supervisor import BoundedCapture
from critpt_grader.sandbox.base import CaseOutcome, Job, RunOutcome, SandboxBackend
from critpt_grader.settings import Settings

CONTAINMENT = "in-process"


class _StreamCapture(io.TextIOBase):
    """A text stream that keeps only the first bytes, as the sandbox's capture does."""

    def __init__(self, limit: int) -> None:
        self.capture = BoundedCapture(limit)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.capture.add(text.encode("utf-8", "backslashreplace"))
        return len(text)


class InProcessBackend(SandboxBackend):
    """A :class:`~critpt_grader.sandbox.base.SandboxBackend` without a sandbox (see above)."""

    name = "in-process"

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._closed = False

    async def aclose(self) -> None:
        self._closed = True

    async def run(self, job: Job) -> RunOutcome:
        if self._closed:
            return RunOutcome(
                status="unavailable",
                detail="the sandbox backend is closed",
                containment=CONTAINMENT,
            )
        return await asyncio.to_thread(self.run_sync, job)

    def run_sync(self, job: Job) -> RunOutcome:
        payload = json.loads(json.dumps(job.to_json()))  # exactly what a runner would receive
        limit = job.limits.output_bytes
        stdout, stderr = _StreamCapture(limit), _StreamCapture(limit)
        started = time.perf_counter()
        with self._lock, contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                program = load_program(payload)
            except Exception as exc:  # SourceError, or a job the runner cannot use at all
                detail = (
                    str(exc) if isinstance(exc, SourceError) else f"the job cannot be run: {exc!r}"
                )
                return RunOutcome(
                    status="source_error",
                    detail=detail,
                    stdout=stdout.capture.text(),
                    stderr=stderr.capture.text(),
                    containment=CONTAINMENT,
                )
            cases = []
            budget = limit
            for index in range(len(job.cases)):
                outcome = run_case(program, index, value_bytes=max(budget, 0))
                if outcome["kind"] == "value":
                    budget -= json_size(outcome["value"])
                cases.append(CaseOutcome(**outcome))
        return RunOutcome(
            status="ok",
            cases=cases,
            stdout=stdout.capture.text(),
            stderr=stderr.capture.text(),
            containment=CONTAINMENT,
            symbols=program.symbols,
            timings={"run": time.perf_counter() - started},
        )
