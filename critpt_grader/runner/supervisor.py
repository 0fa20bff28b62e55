"""The trusted parent inside the sandbox: warm imports, limits, one forked child at a time.

The parent pre-imports the libraries, freezes its heap and makes itself non-dumpable, so a
child can neither read its memory or file descriptors through ``/proc`` nor (when the parent
is the sandbox's PID 1) signal it. It then forks a child that loads the program and runs the
cases in order, reporting each outcome over a private pipe. The parent enforces the per-case
time limit (a timed-out child is killed and a fresh one continues with the next case) and
the suite deadline, captures the child's stdout/stderr through pipes it bounds, and writes
one nonce-framed result to its own stdout at the end. The child never holds that stdout.

Child failures map to case outcomes: killed on time → ``timeout``; ``MemoryError`` →
``memory``; dying without a report (``os._exit``, a signal), a malformed report or a closed
report pipe → the current and every remaining case ``crashed``. Loading that exceeds the
case limit times out every remaining case.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import gc
import io
import math
import os
import resource
import select
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from critpt_grader.runner import protocol
from critpt_grader.runner.program import SourceError, load_program, run_case, truncate

REPORT_OVERHEAD = 64 * 1024  # room for a report's own fields beyond the value budget
MAX_SYMBOLS = 512
_PR_SET_DUMPABLE = 4


def apply_rlimits(limits: dict[str, Any]) -> None:
    """Limits every process of the sandbox inherits. RLIMIT_NPROC binds only non-root users;
    the host's cgroup covers root."""
    memory = int(limits["memory_mb"]) << 20
    cpu = math.ceil(float(limits["wall_seconds"])) + 1
    wanted = {
        resource.RLIMIT_AS: memory,
        resource.RLIMIT_CPU: cpu,
        resource.RLIMIT_FSIZE: int(limits["max_file_bytes"]),
        resource.RLIMIT_NOFILE: int(limits["max_open_files"]),
        resource.RLIMIT_NPROC: int(limits["max_processes"]),
        resource.RLIMIT_CORE: 0,
    }
    for which, value in wanted.items():
        _, hard = resource.getrlimit(which)
        capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (capped, capped))


def make_non_dumpable() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


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


@dataclass
class Supervisor:
    job: dict[str, Any]
    limits: dict[str, Any]
    deadline: float  # monotonic end of the suite
    # True only inside a sandbox's own PID namespace, where kill(-1) reaches nothing else.
    owns_namespace: bool = False
    outcomes: list[dict[str, Any] | None] = field(default_factory=list)
    symbols: dict[str, dict[str, bool]] = field(default_factory=dict)
    status: str = "ok"
    detail: str = ""
    value_budget: int = 0

    def __post_init__(self) -> None:
        self.outcomes = [None] * len(self.job["cases"])
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
        while True:  # at least once: a job without cases still loads its program
            child = self._spawn(first)
            first = self._watch(child)
            self._stop(child)
            if first >= len(self.outcomes) or self.status != "ok":
                break
        self._drain_captures()
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
        if kind == "source_error" and not child.loaded:
            self.status, self.detail = "source_error", truncate(str(message.get("detail", "")))
            return True
        if kind == "loaded" and not child.loaded:
            child.loaded = True
            child.deadline = min(time.monotonic() + case_seconds, self.deadline)
            return False
        if kind == "case" and child.loaded and message.get("i") == child.current:
            outcome = protocol.validated_outcome(message.get("outcome"))
            self._merge_symbols(message.get("symbols"))
            if outcome["kind"] == "value":
                self.value_budget -= protocol.json_size(outcome["value"])
                if self.value_budget < 0:  # only a child that ignores its budget gets here
                    outcome = over_budget_outcome(outcome["seconds"])
            self.outcomes[child.current] = outcome
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
        return child.current + 1

    def _on_silence(self, child: Child, why: str) -> int:
        """The child stopped reporting before its last case: it crashed."""
        status = self._stop(child)
        self._fill(child.current, "crashed", f"the process {why}; {status}")
        return len(self.outcomes)

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

    def _spawn(self, first: int) -> Child:
        reports_r, reports_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            try:
                os.close(reports_r)
                child_main(self.job, first, reports_w, self._out_w, self._err_w, self.value_budget)
            finally:
                os._exit(70)
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
        ended = _reap(child.pid, wait_seconds=0.05)
        if ended is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            ended = _reap(child.pid, wait_seconds=5.0)
        if self.owns_namespace:
            # Signal every other process in the sandbox's PID namespace (init excepted): this
            # also reaches descendants that left the child's process group.
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
            _reap_orphans()
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
        os.close(child.reports)
        child.ended = describe_exit(ended)
        return child.ended


def _reap(pid: int, wait_seconds: float) -> int | None:
    end = time.monotonic() + wait_seconds
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return -1
        if done:
            return status
        if time.monotonic() >= end:
            return None
        time.sleep(0.002)


def _reap_orphans() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


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


# --- the child ------------------------------------------------------------------------


def child_main(  # pragma: no cover - runs in a forked child
    job: dict[str, Any], first: int, reports: int, out_w: int, err_w: int, value_budget: int
) -> None:
    """Run cases ``first..`` and report each; never returns normally."""
    os.setpgid(0, 0)
    # Under memory pressure the kernel should pick the program, never the supervisor.
    with contextlib.suppress(OSError):
        Path("/proc/self/oom_score_adj").write_text("1000")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the nonce is still unread in the old stdin: drop it first
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.closerange(3, reports)
    os.closerange(reports + 1, 1 << 16)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process
    sys.stdout = _unbuffered_text(1)
    sys.stderr = _unbuffered_text(2)
    gc.enable()

    def send(message: dict[str, Any]) -> None:
        data = protocol.pack_message(message)
        while data:
            data = data[os.write(reports, data) :]

    me = os.getpid()

    def quit_if_forked() -> None:
        # A process the program forked returns through our code too: only we may report.
        if os.getpid() != me:
            os._exit(0)

    try:
        program = load_program(job)
    except SourceError as exc:
        quit_if_forked()
        send({"t": "source_error", "detail": str(exc)})
        os._exit(0)
    except Exception as exc:  # a malformed job: say so rather than die silently
        quit_if_forked()
        send({"t": "source_error", "detail": f"the job cannot be run: {exc!r}"[:2000]})
        os._exit(0)
    quit_if_forked()
    send({"t": "loaded"})
    for index in range(first, len(job["cases"])):
        try:
            outcome = run_case(program, index, value_bytes=max(value_budget, 0))
        except MemoryError:
            outcome = {"kind": "memory", "error_type": "MemoryError", "message": "out of memory"}
        quit_if_forked()
        if outcome["kind"] == "value":
            value_budget -= protocol.json_size(outcome["value"])
        send({"t": "case", "i": index, "outcome": outcome, "symbols": program.symbols})
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _unbuffered_text(fd: int) -> io.TextIOWrapper:
    raw = open(fd, "wb", buffering=0, closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True)


# --- entry ----------------------------------------------------------------------------


def warm_up() -> float:
    """Import what programs use, freeze the heap, become non-dumpable; return the seconds."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from critpt_grader.runner.program import preload_libraries

    started = time.monotonic()
    preload_libraries()
    imports = time.monotonic() - started
    gc.collect()
    gc.freeze()  # children share the warm heap copy-on-write
    make_non_dumpable()
    return imports


def run_job(*, warm: bool = False) -> int:
    """Read one job from stdin, run it, write the framed result to stdout.

    ``warm``: this process was forked by a warm sandbox's init (already warmed up), which
    owns the PID namespace; otherwise this process warms up itself, after the job's rlimits
    are in place, and owns the namespace only when it is its init (PID 1)."""
    started_wall = time.time()
    started = time.monotonic()
    job = protocol.read_job(0, max_bytes=64 << 20)
    limits = job["limits"]
    wall = float(limits["wall_seconds"])
    # Leave the host a margin to receive the frame before its own wall clock fires.
    deadline = started + max(wall - min(1.0, 0.1 * wall), 0.1)
    apply_rlimits(limits)
    imports = 0.0 if warm else warm_up()
    owns_namespace = os.getppid() == 1 if warm else os.getpid() == 1
    run_started = time.monotonic()
    result = Supervisor(job, limits, deadline, owns_namespace=owns_namespace).run()
    result["timings"] = {
        "runner_started": started_wall,
        "imports": imports,
        "run": time.monotonic() - run_started,
    }
    return 0 if write_all(1, protocol.format_frame(protocol.read_nonce(0), result)) else 1


def write_all(fd: int, data: bytes) -> bool:
    while data:
        try:
            data = data[os.write(fd, data) :]
        except InterruptedError:
            continue
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                return False
            raise
    return True
