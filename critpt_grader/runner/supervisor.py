"""The trusted parent inside the sandbox: one forked child at a time, under its eye.

By the time it runs, :mod:`critpt_grader.runner.job` has set the limits, imported the
libraries, frozen the heap and made the process non-dumpable, so a child can neither read
its memory or file descriptors through ``/proc`` nor (when the parent is the sandbox's
PID 1) signal it. The parent never forks a child itself — its memory holds this job's and
earlier jobs' data — but has the zygote (:mod:`critpt_grader.runner.zygote`) fork one
(:mod:`critpt_grader.runner.child`), handing it the job in a sealed memfd. The child loads
the program and runs the cases in order, reporting each outcome over a private pipe. The
parent enforces the per-case time limit (a timed-out child is killed and a fresh one
continues with the next case) and the suite deadline, captures the child's stdout/stderr
through pipes it bounds, and returns the result for the one nonce-framed line written to
stdout at the end. The child never holds that stdout.

Child failures map to case outcomes: killed on time → ``timeout``; out of CPU time (its
RLIMIT_CPU: SIGXCPU, or SIGKILL after the CPU time ran out) → ``timeout`` too, then a fresh
child continues; ``MemoryError`` → ``memory``; dying without a report (``os._exit``, another
signal), a malformed report or a closed report pipe → the current and every remaining case
``crashed``; so does a case that cannot start because the zygote is gone (only a job's own
processes can end it). A report nested deeper than the wire allows is the case's
``encode_error``. Loading that exceeds the case limit times out every remaining case.

**A candidate stops at its first decisive fault.** In a candidate job that asks for it
(``stop_on_fault``, as the pipeline's candidate jobs do), a case that times out or runs out
of memory already decides the row (scored 0), so the run ends there: every later case is
``not_run`` and a hanging candidate costs one case limit, not one per case. A reference job
runs every case (the preflight reports each one). A child never reports ``not_run`` itself:
only this parent writes it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from dataclasses import dataclass, field
from typing import Any

from critpt_grader.runner import protocol
from critpt_grader.runner.limits import cpu_seconds
from critpt_grader.runner.namespace import kill_others
from critpt_grader.runner.program import truncate
from critpt_grader.runner.zygote import Zygote, ZygoteGone

REPORT_OVERHEAD = 64 * 1024  # room for a report's own fields beyond the value budget
MAX_SYMBOLS = 512
NOT_RUN = "not_run"
# A candidate's case that ends this way decides its row (scored 0): later cases do not run.
DECISIVE_KINDS = frozenset({"timeout", "memory"})


class BoundedCapture:
    """Keeps the first ``limit`` bytes of a stream, drops and counts the rest."""

    MARKER = "\n[output truncated]"

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        self.data += chunk[: max(room, 0)]
        self.dropped += max(len(chunk) - room, 0)

    def text(self) -> str:
        if not self.dropped:
            return self.data.decode("utf-8", "replace")
        keep = max(self.limit - len(self.MARKER.encode()), 0)
        return self.data[:keep].decode("utf-8", "replace") + self.MARKER


@dataclass(slots=True)
class Child:
    pid: int
    reports: int  # read end of the report pipe
    reader: protocol.MessageReader
    loaded: bool = False
    current: int = 0
    deadline: float = 0.0
    ended: str | None = None  # how the process ended, once it was stopped
    out_of_cpu: bool = False  # it ended because its CPU time ran out


@dataclass
class Supervisor:
    job: dict[str, Any]
    job_fd: int  # a sealed memfd holding the job's JSON: what each child reads
    zygote: Zygote  # forks the children
    limits: dict[str, Any]
    deadline: float  # monotonic end of the suite
    # True only inside a sandbox's own PID namespace, where kill(-1) reaches nothing else.
    owns_namespace: bool = False
    outcomes: list[dict[str, Any] | None] = field(default_factory=list)
    symbols: dict[str, dict[str, bool]] = field(default_factory=dict)
    status: str = "ok"
    detail: str = ""
    value_budget: int = 0
    stop_on_fault: bool = False  # a candidate job: its first timeout or memory case decides

    def __post_init__(self) -> None:
        self.outcomes = [None] * len(self.job["cases"])
        self.stop_on_fault = (
            self.job.get("stop_on_fault") is True and self.job.get("role") != "reference"
        )
        self.value_budget = int(self.limits["output_bytes"])
        self.stdout = BoundedCapture(int(self.limits["output_bytes"]))
        self.stderr = BoundedCapture(int(self.limits["output_bytes"]))
        self._out_r, self._out_w = os.pipe()
        self._err_r, self._err_w = os.pipe()
        for fd in (self._out_r, self._err_r):
            os.set_blocking(fd, False)

    # --- the parent's loop ------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        first = 0
        try:
            while True:  # at least once: a job without cases still loads its program
                child = self._spawn(first)
                if child is None:
                    break
                first = self._watch(child)
                self._stop(child)
                if self.zygote.refused:  # the process never ran the job: not the job's doing
                    self.status, self.detail = "unavailable", truncate(self.zygote.refused)
                    break
                if first >= len(self.outcomes) or self.status != "ok":
                    break
            self._drain_captures()
        finally:
            # A warm sandbox's init supervises job after job: nothing of this one stays open.
            for fd in (self._out_r, self._out_w, self._err_r, self._err_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
        return {
            "status": self.status,
            "detail": self.detail,
            "cases": self.outcomes,
            "stdout": self.stdout.text(),
            "stderr": self.stderr.text(),
            "symbols": self.symbols,
        }

    def _watch(self, child: Child) -> int:
        """Follow ``child`` until it ends; return the index of the next case to run."""
        case_seconds = float(self.limits["case_seconds"])
        child.deadline = min(time.monotonic() + case_seconds, self.deadline)
        while True:
            now = time.monotonic()
            if now >= child.deadline:
                return self._on_deadline(child, now, case_seconds)
            ready, _, _ = select.select(
                [child.reports, self._out_r, self._err_r], [], [], child.deadline - now
            )
            self._drain_captures(ready)
            if child.reports not in ready:
                continue
            chunk = os.read(child.reports, 1 << 16)
            if not chunk:
                return self._on_silence(child, "closed its report channel")
            try:
                for message in child.reader.feed(chunk):
                    if self._on_message(child, message, case_seconds):
                        return len(self.outcomes)
            except protocol.ProtocolError as exc:
                return self._on_silence(child, f"sent a malformed report ({exc})")

    def _on_message(self, child: Child, message: dict[str, Any], case_seconds: float) -> bool:
        """Apply one report; True when the child has nothing more to say."""
        kind = message.get("t")
        if kind == protocol.TOO_DEEP and child.loaded:  # a report no child of ours writes
            message = {"t": "case", "i": child.current, "outcome": protocol.too_deep_outcome()}
            kind = "case"
        if kind == "source_error" and not child.loaded:
            self.status, self.detail = "source_error", truncate(str(message.get("detail", "")))
            return True
        if kind == "loaded" and not child.loaded:
            child.loaded = True
            child.deadline = min(time.monotonic() + case_seconds, self.deadline)
            return False
        if kind == "case" and child.loaded and message.get("i") == child.current:
            outcome = protocol.validated_outcome(message.get("outcome"))
            if outcome["kind"] == NOT_RUN:
                raise protocol.ProtocolError("a child reported a case as not run")
            self._merge_symbols(message.get("symbols"))
            if outcome["kind"] == "value":
                self.value_budget -= protocol.json_size(outcome["value"])
                if self.value_budget < 0:  # only a child that ignores its budget gets here
                    outcome = over_budget_outcome(outcome["seconds"])
            self.outcomes[child.current] = outcome
            if self._decided(child.current):
                return True
            child.current += 1
            child.deadline = min(time.monotonic() + case_seconds, self.deadline)
            return child.current >= len(self.outcomes)
        raise protocol.ProtocolError(f"unexpected report {str(kind)[:40]!r}")

    def _on_deadline(self, child: Child, now: float, case_seconds: float) -> int:
        suite_over = now >= self.deadline
        if suite_over:
            self.status = "timeout"
            self.detail = f"the suite wall clock of {self.limits['wall_seconds']} s ran out"
        if not child.loaded:
            message = f"loading the program did not finish within {case_seconds:g} s"
            self._fill(child.current, "timeout", self.detail if suite_over else message)
            return len(self.outcomes)
        self.outcomes[child.current] = {
            "kind": "timeout",
            "message": f"the call did not finish within {case_seconds:g} s",
            "seconds": case_seconds,
        }
        if suite_over:
            self._fill(child.current + 1, "timeout", self.detail)
            return len(self.outcomes)
        if self._decided(child.current):
            return len(self.outcomes)
        return child.current + 1

    def _on_silence(self, child: Child, why: str) -> int:
        """The child stopped reporting before its last case: it crashed, or its CPU time ran
        out (a timeout of the current case; a fresh child goes on with the next)."""
        status = self._stop(child)
        if child.out_of_cpu and child.loaded:
            self.outcomes[child.current] = {
                "kind": "timeout",
                "message": f"the CPU time limit of {cpu_seconds(self.limits)} s ran out",
                "seconds": float(self.limits["case_seconds"]),
            }
            if self._decided(child.current):
                return len(self.outcomes)
            return child.current + 1
        if child.out_of_cpu:
            self._fill(child.current, "timeout", "the CPU time ran out while loading the program")
            return len(self.outcomes)
        self._fill(child.current, "crashed", f"the process {why}; {status}")
        return len(self.outcomes)

    def _decided(self, index: int) -> bool:
        """In a candidate job, a timeout or memory outcome at ``index`` decides the row: mark
        every later case not run and say so (True)."""
        kind = (self.outcomes[index] or {}).get("kind")
        if not self.stop_on_fault or kind not in DECISIVE_KINDS:
            return False
        self._fill(index + 1, NOT_RUN, f"not run: case {index} already decided the row ({kind})")
        return True

    def _fill(self, start: int, kind: str, message: str) -> None:
        for index in range(start, len(self.outcomes)):
            if self.outcomes[index] is None:
                self.outcomes[index] = {"kind": kind, "message": message, "seconds": 0.0}

    def _merge_symbols(self, symbols: Any) -> None:
        if not isinstance(symbols, dict):
            return
        for name, facts in list(symbols.items())[:MAX_SYMBOLS]:
            if (
                isinstance(name, str)
                and isinstance(facts, dict)
                and all(isinstance(k, str) and isinstance(v, bool) for k, v in facts.items())
            ):
                self.symbols.setdefault(name, dict(facts))

    def _drain_captures(self, ready: list[int] | None = None) -> None:
        """Read what the capture pipes hold: one chunk per ready pipe while a child runs (the
        reports must not starve), everything at the end — bounded, since a process that
        escaped the kill could write forever."""
        for fd, capture in ((self._out_r, self.stdout), (self._err_r, self.stderr)):
            if ready is not None and fd not in ready:
                continue
            reads = 1 if ready is not None else capture.limit // (1 << 16) + 2
            with contextlib.suppress(BlockingIOError):
                for _ in range(reads):
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break
                    capture.add(chunk)

    # --- child processes --------------------------------------------------------------

    def _spawn(self, first: int) -> Child | None:
        """A child running cases ``first..``; None (those cases crashed) when the zygote is
        gone."""
        reports_r, reports_w = os.pipe()
        fds = (self.job_fd, reports_w, self._out_w, self._err_w)
        try:
            # A fork answers in milliseconds; waiting past the suite's end changes nothing.
            wait = max(self.deadline - time.monotonic(), 0.0) + 1.0
            pid = self.zygote.spawn(fds, first, self.value_budget, wait)
        except ZygoteGone as exc:
            os.close(reports_r)
            os.close(reports_w)
            if exc.unavailable:  # the sandbox failed the job, not the job itself
                self.status, self.detail = "unavailable", truncate(str(exc))
                self._fill(first, "crashed", self.detail)
            elif time.monotonic() >= self.deadline:
                self.status = "timeout"
                self.detail = f"the suite wall clock of {self.limits['wall_seconds']} s ran out"
                self._fill(first, "timeout", self.detail)
            else:
                self._fill(first, "crashed", f"the case could not start: {exc}")
            return None
        os.close(reports_w)
        return Child(
            pid=pid,
            reports=reports_r,
            reader=protocol.MessageReader(max(self.value_budget, 0) * 2 + REPORT_OVERHEAD),
            current=first,
        )

    def _stop(self, child: Child) -> str:
        """Kill the child and everything it started; return how the child ended."""
        if child.ended is not None:
            return child.ended
        ended, cpu = self.zygote.wait(child.pid, 0.05)
        if self.owns_namespace:
            # Every process of the sandbox's PID namespace but init and the zygote: this also
            # reaches descendants that left the child's process group.
            kill_others(self.zygote)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
        if ended is None:  # it was still running: now it is killed, the zygote reaps it
            ended, cpu = self.zygote.wait(child.pid, 5.0)
        child.out_of_cpu = ran_out_of_cpu(ended, cpu, cpu_seconds(self.limits))
        os.close(child.reports)
        child.ended = describe_exit(ended)
        return child.ended


def ran_out_of_cpu(status: int | None, cpu: float, limit: int) -> bool:
    """SIGXCPU is the soft CPU limit; a SIGKILL after the CPU time reached that limit is the
    hard one (a program that ignored SIGXCPU), not the memory cgroup."""
    if status is None or status == -1 or not os.WIFSIGNALED(status):
        return False
    signal_number = os.WTERMSIG(status)
    return signal_number == signal.SIGXCPU or (
        signal_number == signal.SIGKILL and cpu >= limit - 0.05
    )


def describe_exit(status: int | None) -> str:
    if status is None:
        return "it could not be stopped"
    if status == -1:
        return "its exit status was lost"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        hint = {
            "SIGKILL": " (killed: possibly out of memory)",
            "SIGXCPU": " (CPU time limit)",
            "SIGXFSZ": " (file size limit)",
            "SIGSEGV": " (segmentation fault)",
        }.get(name, "")
        return f"it was ended by {name}{hint}"
    return f"it exited with code {os.WEXITSTATUS(status)}"


def over_budget_outcome(seconds: float) -> dict[str, Any]:
    return {
        "kind": "encode_error",
        "error_type": "output_limit",
        "message": "the values returned so far exceed the output limit",
        "seconds": seconds,
    }
