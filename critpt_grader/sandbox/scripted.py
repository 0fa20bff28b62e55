"""A backend that runs no code: each job gets the outcome a test scripted for it.

The pipeline's decisions (every category, the preflight cache, ``unavailable`` and retries,
cancellation) depend only on the :class:`RunOutcome` a backend returns, so a test can drive
them in milliseconds without a sandbox — like httpx's ``MockTransport``. The script is:

* a callable ``script(job) -> RunOutcome`` (sync or async), or
* a mapping ``{"reference": ..., "candidate": ...}`` whose values are one outcome (used for
  every job of that role) or a list (one per job, in order), or
* one outcome or a list, for every job regardless of role.

A script item may also be :data:`HANG` (the run waits until cancelled or the backend
closes) or an exception (the backend turns it into ``unavailable``: a backend never raises
for a fault). ``jobs`` records every job received, so a test can check what travelled.

Usage::

    backend = ScriptedBackend(script={"reference": ok(value(2)), "candidate": ok(value(3))})
    async with Grader(settings, backend) as grader:
        result = await grader.grade(task, response)
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from critpt_grader import codec
from critpt_grader.sandbox.base import CaseOutcome, Job, RunOutcome, SandboxBackend

CONTAINMENT = "scripted"
HANG: Any = object()  # a script item: the run never finishes by itself

Script = Callable[[Job], Any] | Mapping[str, Any] | Sequence[Any] | RunOutcome | None


def value(python_value: Any) -> CaseOutcome:
    """A case that returned ``python_value`` (wire-encoded as the runner would)."""
    return CaseOutcome(kind="value", value=codec.encode(python_value))


def exception(error_type: str, message: str = "", *, builtin: bool = True) -> CaseOutcome:
    """A case that raised a builtin exception class called ``error_type``."""
    return CaseOutcome(
        kind="exception",
        error_type=error_type,
        message=message,
        error_module="builtins" if builtin else "__main__",
        error_qualname=error_type,
        error_builtin=builtin,
        error_builtin_mro=[error_type, "Exception", "BaseException"] if builtin else [],
    )


def ok(*cases: CaseOutcome, stdout: str = "") -> RunOutcome:
    """A finished run with one outcome per case."""
    return RunOutcome(status="ok", cases=list(cases), stdout=stdout)


def failed(status: str, detail: str = "scripted") -> RunOutcome:
    """A run that did not finish: ``source_error``, ``timeout``, ``unavailable``..."""
    return RunOutcome(status=status, detail=detail)  # type: ignore[arg-type]


class ScriptedBackend(SandboxBackend):
    """A :class:`~critpt_grader.sandbox.base.SandboxBackend` whose outcomes are scripted.

    Owns nothing but its waiting runs: ``aclose()`` ends them as ``unavailable`` (as a real
    backend does) and later runs are ``unavailable`` too. Not thread-safe; one event loop.
    """

    name = "scripted"

    def __init__(self, settings: Any = None, *, script: Script = None) -> None:
        self.settings = settings
        self.jobs: list[Job] = []
        self.closed = False
        self._script = script
        self._positions: dict[str, int] = {}
        self._waiting: set[asyncio.Future[None]] = set()

    async def run(self, job: Job) -> RunOutcome:
        if self.closed:
            return _unavailable("the sandbox backend is closed")
        self.jobs.append(job)
        try:
            item = self._next(job)
            if inspect.isawaitable(item):
                item = await item
        except Exception as exc:  # a script's fault reads as infrastructure, never a score
            item = exc
        if item is HANG:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.add(waiter)
            try:
                await waiter
            finally:
                self._waiting.discard(waiter)
            return _unavailable("the sandbox backend was closed during the run")
        if isinstance(item, BaseException):
            return _unavailable(f"scripted fault: {item!r}")
        if not isinstance(item, RunOutcome):
            return _unavailable(f"the script gave {type(item).__name__}, not a RunOutcome")
        return _copy(item)

    @property
    def in_flight(self) -> int:
        """Runs waiting on a :data:`HANG` item right now."""
        return len(self._waiting)

    async def aclose(self) -> None:
        self.closed = True
        for waiter in list(self._waiting):
            if not waiter.done():
                waiter.set_result(None)

    def _next(self, job: Job) -> Any:
        script = self._script
        if callable(script) and not isinstance(script, RunOutcome):
            return script(job)
        key = "*"
        if isinstance(script, Mapping):
            if job.role not in script:
                raise LookupError(f"nothing scripted for a {job.role} job")
            script, key = script[job.role], job.role
        if script is None:
            raise LookupError("nothing scripted")
        if isinstance(script, Sequence) and not isinstance(script, str):
            position = self._positions.get(key, 0)
            if position >= len(script):
                raise LookupError(f"the script has only {len(script)} {key} outcomes")
            self._positions[key] = position + 1
            return script[position]
        return script


def _unavailable(detail: str) -> RunOutcome:
    return RunOutcome(status="unavailable", detail=detail, containment=CONTAINMENT)


def _copy(outcome: RunOutcome) -> RunOutcome:
    """A fresh outcome per run (the pipeline may annotate it), labelled as scripted."""
    cases = [CaseOutcome(**{k: getattr(case, k) for k in case.__slots__}) for case in outcome.cases]
    return RunOutcome(
        status=outcome.status,
        cases=cases,
        detail=outcome.detail,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        containment=outcome.containment or CONTAINMENT,
        symbols=dict(outcome.symbols),
        timings=dict(outcome.timings),
    )
