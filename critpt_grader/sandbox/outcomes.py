"""From what a sandbox run left behind to a :class:`RunOutcome`, checked field by field.

The runner inside is untrusted territory: its framed result is validated before anything
of it is believed, and a run that ended without one is classified as a timeout, an output
overflow, a sandbox that never started (``unavailable``, retryable) or ``no_result``.
Nothing here knows how a backend starts its sandboxes: whether a run never started is the
backend's call (``never_started``), e.g. the local backend's launcher exit code.
"""

from __future__ import annotations

import time
from typing import Any

from critpt_grader.runner import protocol
from critpt_grader.sandbox.base import CaseOutcome, Job, Limits, RunOutcome

# "unavailable": the runner could not give the job a world of its own (runner/world.py).
_STATUSES_FROM_RUNNER = frozenset({"ok", "source_error", "timeout", "unavailable"})


def unavailable(detail: str, containment: str = "") -> RunOutcome:
    return RunOutcome(status="unavailable", detail=detail, containment=containment)


def frame_limit(limits: Limits) -> int:
    return 16 * limits.output_bytes + (1 << 20)  # escaped text can grow sixfold


def interpret(
    payload: dict[str, Any] | None,
    ended: str,
    job: Job,
    started: float,
    *,
    returncode: int | None,
    stderr: bytes,
    never_started: bool = False,
) -> RunOutcome:
    """The outcome of one sandbox run from its framed result and how the run ended."""
    total = time.time() - started
    if ended == "timeout":
        return RunOutcome(
            status="timeout",
            detail=f"the sandbox ran past the wall clock of {job.limits.wall_seconds:g} s",
            timings={"total": total},
        )
    if ended == "overflow":
        return RunOutcome(
            status="output_limit",
            detail=f"the runner's output exceeded {frame_limit(job.limits)} bytes",
            timings={"total": total},
        )
    if payload is None:
        return without_result(returncode, stderr, total, never_started=never_started)
    outcome = outcome_from_payload(payload, len(job.cases))
    outcome.timings = run_timings(payload, started, total)
    return outcome


def attribute_kills_to_memory(outcome: RunOutcome) -> None:
    """The memory cgroup killed something: a call whose process died by SIGKILL ran out of
    memory (the runner cannot see the cgroup from inside)."""
    for case in outcome.cases:
        if case.kind == "crashed" and "SIGKILL" in (case.message or ""):
            case.kind = "memory"
            case.message = "the sandbox's memory limit was reached; " + (case.message or "")


def without_result(
    returncode: int | None, stderr: bytes, total: float, *, never_started: bool = False
) -> RunOutcome:
    """No valid frame: infrastructure when the sandbox never started, else no_result."""
    text = stderr.decode("utf-8", "replace").strip()
    last = text.splitlines()[-1][:300] if text else ""
    if never_started:
        return unavailable(f"the sandbox did not start: {last or f'exit code {returncode}'}")
    how = "" if returncode is None else f" (exit code {returncode})"
    return RunOutcome(
        status="no_result",
        detail=f"the runner ended without a result{how}" + (f": {last}" if last else ""),
        timings={"total": total},
    )


def outcome_from_payload(payload: dict[str, Any], case_count: int) -> RunOutcome:
    """Check the runner's framed result field by field; anything off is ``no_result``."""
    try:
        status = payload["status"]
        if status not in _STATUSES_FROM_RUNNER:
            raise protocol.ProtocolError(f"unknown status {str(status)[:40]!r}")
        if status == "unavailable":  # written by the supervisor only, never by a job
            return unavailable(f"the sandbox could not run the job: {payload.get('detail')}"[:500])
        raw_cases = payload["cases"]
        if not isinstance(raw_cases, list) or len(raw_cases) != case_count:
            raise protocol.ProtocolError("wrong number of case outcomes")
        cases = []
        if status != "source_error":
            if any(case is None for case in raw_cases):
                raise protocol.ProtocolError("a case has no outcome")
            cases = [CaseOutcome(**protocol.validated_outcome(case)) for case in raw_cases]
        symbols = payload.get("symbols", {})
        if not isinstance(symbols, dict) or not all(
            isinstance(facts, dict) and all(isinstance(v, bool) for v in facts.values())
            for facts in symbols.values()
        ):
            raise protocol.ProtocolError("malformed symbols")
        texts = [payload.get(key, "") for key in ("detail", "stdout", "stderr")]
        if not all(isinstance(text, str) for text in texts):
            raise protocol.ProtocolError("malformed text fields")
    except (KeyError, TypeError, protocol.ProtocolError) as exc:
        return RunOutcome(status="no_result", detail=f"the runner's result is malformed: {exc}")
    detail, stdout, stderr = texts
    return RunOutcome(
        status=status, cases=cases, detail=detail, stdout=stdout, stderr=stderr, symbols=symbols
    )


def run_timings(payload: dict[str, Any], started: float, total: float) -> dict[str, float]:
    reported = payload.get("timings")
    if not isinstance(reported, dict):
        return {"total": total}
    numbers = {k: float(v) for k, v in reported.items() if isinstance(v, int | float)}
    timings = {"total": total}
    if "runner_started" in numbers:
        timings["start"] = max(numbers["runner_started"] - started, 0.0)
    for key in ("imports", "run"):
        if key in numbers:
            timings[key] = numbers[key]
    return timings
