"""The forked child inside the sandbox: the only process that runs the program.

The zygote (:mod:`critpt_grader.runner.zygote`) forks it and hands it four descriptors: a
sealed memfd holding the job, its report pipe and its two capture pipes. It reads the job from
the memfd, takes on the job's rlimits, puts back the signal dispositions the runner ignores
and keeps only its capture pipes and its report pipe, then loads the program and runs the
cases from ``first`` on, reporting each outcome as a framed message. A process the program
forks returns through this code too; only the child itself reports, every other copy leaves
silently.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import sys
from typing import Any

from critpt_grader.runner import protocol, signals
from critpt_grader.runner.limits import apply_rlimits
from critpt_grader.runner.program import SourceError, load_program, run_case


def child_main(  # pragma: no cover - runs in a forked child
    job_fd: int, reports: int, out_w: int, err_w: int, *, first: int, value_budget: int
) -> None:
    """Run cases ``first..`` of the job in ``job_fd`` and report each; never returns normally."""
    os.setpgid(0, 0)
    signals.restore_defaults()
    job = read_job(job_fd)
    # The job's limits bind this process and what it starts, never the supervisor.
    apply_rlimits(job["limits"])
    # Under memory pressure the kernel should pick the program, never the supervisor.
    with contextlib.suppress(OSError):
        score = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(score, b"1000")
        finally:
            os.close(score)
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


def read_job(fd: int) -> dict[str, Any]:  # pragma: no cover - runs in a forked child
    """The job from its memfd (read from offset 0: a child after a timeout reads it again)."""
    size = os.fstat(fd).st_size
    data = bytearray()
    while len(data) < size:
        chunk = os.pread(fd, size - len(data), len(data))
        if not chunk:
            break
        data += chunk
    os.close(fd)
    return protocol.parse_job(bytes(data))


def _unbuffered_text(fd: int) -> io.TextIOWrapper:
    raw = open(fd, "wb", buffering=0, closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True)
