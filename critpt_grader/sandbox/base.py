"""The seam between the grading pipeline and whatever runs untrusted code.

A backend takes one :class:`Job` (plain data: source text, wire-encoded inputs, limits) and
returns one :class:`RunOutcome` (plain data: per-case outcomes as wire envelopes, captured
output, what containment was used). The pipeline never touches processes, files or
network sessions itself; a backend never grades. That cut keeps ``grade()`` testable with
the in-process backend and lets remote backends (Daytona) drop in without touching it.

What a backend may assume:
  * the job is complete and self-contained; nothing else from the task travels with it
    (a candidate job never carries the reference, the expectations or the task file);
  * it is called concurrently from one event loop, so ``run`` must not block the loop.

What a backend must guarantee:
  * every limit in ``job.limits`` is enforced, and a breach is reported, not raised;
  * an outcome is only ``ok`` when the runner's nonce-framed result came back intact;
  * infrastructure trouble (cannot start, lost connection) is ``unavailable``, never a
    candidate fault, so the caller can retry it;
  * ``aclose()`` releases every sandbox it created and returns only once that is confirmed.

Usage::

    async with LocalBackend() as backend:
        outcome = await backend.run(job)
        if outcome.status == "ok":
            for case in outcome.cases: ...
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, Self

from critpt_grader.limits import Limits
from critpt_grader.runner import protocol

RunStatus = Literal[
    "ok",  # the runner finished and returned one outcome per case
    "source_error",  # syntax error, missing/ambiguous entry point, setup failure
    "timeout",  # the suite wall clock ran out (per-case timeouts are case outcomes)
    "memory",  # the process hit its memory limit outside a case
    "output_limit",  # the result channel overflowed its bound
    "no_result",  # the process ended without a valid, nonce-framed result
    "unavailable",  # the backend could not run the job at all (retryable)
]


@dataclass(frozen=True, slots=True)
class Job:
    """One run: load ``source``, build inputs, call ``entrypoint`` once per case.

    ``cases`` items are ``{"args": [envelope, ...], "kwargs": {name: envelope}}`` with
    ``critpt-value-v1`` envelopes, or ``{"names": [...]}`` for CritPt challenges, whose
    inputs are the named module-level values that ``setup_source`` (the template's
    preamble: imports, ``sp.symbols(...)``, constants) defines.
    ``input_conversions`` (one per positional arg: None/"symbol"/"function") turns a
    string argument into a SymPy Symbol/Function inside the sandbox.
    """

    source: str
    entrypoint: str | None
    cases: tuple[dict[str, Any], ...]
    limits: Limits = field(default_factory=Limits)
    setup_source: str | None = None
    input_conversions: tuple[str | None, ...] = ()
    role: Literal["reference", "candidate"] = "candidate"
    # When ``entrypoint`` is absent from the source, call the source's only public function
    # (CritPt candidates are asked for ``answer`` but sometimes rename it).
    entrypoint_fallback: bool = False
    # A candidate's first case that times out or runs out of memory decides its row: stop the
    # run there and report the later cases ``not_run`` (a reference job always runs them all).
    stop_on_fault: bool = False
    # ``cases`` as compact ASCII JSON, when the caller built it once for the task (the
    # pipeline does): the job's bytes then splice it in instead of encoding every row again.
    cases_json: str | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "cases_json"}
        data["limits"] = asdict(self.limits)
        return data

    def encoded(self, nonce: str) -> bytes:
        """The job as the runner reads it (``protocol.encode_job_input``)."""
        return protocol.encode_job_input(self.to_json(), nonce, self.cases_json)


@dataclass(slots=True)
class CaseOutcome:
    """What one call produced.

    ``kind``: ``value`` (``value`` holds the envelope), ``exception`` (``error_type``,
    ``message``), ``timeout``, ``memory``, ``encode_error`` (``error_type`` is the codec
    code, e.g. ``unsupported_type``), or ``crashed`` (the process running the call ended
    without reporting: ``os._exit``, a signal; ``message`` says how), or ``not_run`` (a
    candidate's run stopped at an earlier case that timed out or ran out of memory).

    For ``exception``, ``error_type`` is the class's bare name (``ValueError``), and the
    runner also reports its ``error_module`` and ``error_qualname``, whether it is a genuine
    builtin (``error_builtin``: the very class ``builtins`` held before the program ran) and
    the genuine builtins in its MRO (``error_builtin_mro``, most derived first). A backend
    that cannot tell leaves ``error_builtin`` false: such a raise never meets an expectation.
    """

    kind: Literal["value", "exception", "timeout", "memory", "encode_error", "crashed", "not_run"]
    value: dict[str, Any] | None = None
    error_type: str | None = None
    message: str | None = None
    seconds: float = 0.0
    error_module: str | None = None
    error_qualname: str | None = None
    error_builtin: bool = False
    error_builtin_mro: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RunOutcome:
    status: RunStatus
    cases: list[CaseOutcome] = field(default_factory=list)
    detail: str = ""  # one line: why the status is not ok
    stdout: str = ""  # captured, truncated, decoded with replacement
    stderr: str = ""
    containment: str = ""  # e.g. "bwrap+cgroup", "bwrap+rlimits", "rlimits-only", "in-process"
    symbols: dict[str, dict[str, bool]] = field(default_factory=dict)  # assumptions seen
    timings: dict[str, float] = field(default_factory=dict)  # start, imports, run (seconds)


class SandboxBackend:
    """Base class of every backend: one method to implement, ``run``, plus ``aclose``.

    Like httpx's transports, the cut sits where high-level objects end: ``run`` takes a
    :class:`Job` and returns a :class:`RunOutcome`, both plain data, and knows nothing of
    tasks, expectations or verdicts. This class owns the async context manager; a subclass
    implements ``run`` and, when it holds sandboxes, ``aclose`` (idempotent: a second call
    returns at once). A backend is built from the settings (``cls(settings)``); one
    instance serves many concurrent ``run`` calls on one event loop.

    A backend outside this package registers itself under the entry-point group
    ``critpt_grader.backends`` (``name = "package.module:Class"``); nothing here changes.
    """

    name: str = ""
    # Set by backends that use _run_owned/_cancel_runs (in their __init__).
    _running: set[asyncio.Task[RunOutcome]]
    _closing: bool

    async def run(self, job: Job) -> RunOutcome:
        """Run ``job`` to one outcome. Never raises for the job's or the sandbox's faults:
        those are statuses (``unavailable`` for infrastructure). Cancellation propagates
        after the sandbox is torn down."""
        raise NotImplementedError

    def prepare(self, job: Job) -> None:
        """A hint that ``job`` (or one like it: its role and limits) will run soon: a backend
        may start its sandbox now, in the background, without running anything in it. Never
        blocks, never raises; a sandbox started this way and never used is released by
        :meth:`aclose` like any other. The default does nothing."""
        return None

    async def aclose(self) -> None:
        """Release every sandbox this backend created; return once that is confirmed."""
        return None

    async def __aenter__(self) -> Self:
        return self

    # --- for backends that hold sandboxes: runs the backend owns --------------------------

    async def _run_owned(
        self, work: Coroutine[Any, Any, RunOutcome], containment: str = ""
    ) -> RunOutcome:
        """Run ``work`` as a task this backend owns (it needs ``self._running``, a set, and
        ``self._closing``). A caller that gives up cancels it and waits until its sandbox is
        torn down; a run cancelled by :meth:`_cancel_runs` is ``unavailable``, never a fault."""
        task = asyncio.create_task(work)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled() and self._closing:
                return RunOutcome(
                    status="unavailable",
                    detail="the sandbox backend was closed during the run",
                    containment=containment,
                )
            task.cancel()  # our caller gave up: the sandbox goes before we do
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise

    async def _cancel_runs(self) -> None:
        """Stop taking jobs, cancel the running ones and wait until each is torn down."""
        self._closing = True
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
