"""The host's handle on one warm sandbox: a bubblewrap sandbox whose runner serves many jobs.

The runner inside (``python -m critpt_grader.runner --serve``, see
:mod:`critpt_grader.runner.warm`) says ``CRITPT-IDLE`` once its libraries are imported —
only then is the sandbox handed its first job — supervises each job and resets the sandbox
afterwards, confirming with another ``CRITPT-IDLE`` line.
A sandbox goes back to the pool only after a framed result and that confirmation; a
timeout, an oversized or garbled answer, or a sandbox that died is torn down instead.

The handle uses plain blocking pipes, driven from worker threads: unlike asyncio's
subprocess transports they belong to no event loop, so one pool of warm sandboxes can
serve callers that each run their own loop (the synchronous ``grade`` does).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from critpt_grader.runner import protocol
from critpt_grader.sandbox.containment import Cgroup

STDERR_TAIL_BYTES = 64 * 1024

Ended = Literal["exited", "timeout", "overflow", "died"]


@dataclass(slots=True)
class Exchange:
    """What one job produced: the framed result (if any) and how the exchange ended.
    ``reusable`` only when the result came back and the sandbox confirmed it is clean."""

    payload: dict[str, Any] | None
    ended: Ended
    reusable: bool = False


@dataclass(eq=False)
class WarmSandbox:
    process: subprocess.Popen[bytes]
    cgroup: Cgroup | None
    containment: str
    jobs: int = 0
    _stderr: bytearray = field(default_factory=bytearray)
    _lock: threading.Lock = field(default_factory=threading.Lock)  # guards _stderr
    _busy: threading.Lock = field(default_factory=threading.Lock)  # held while a job runs
    _stderr_reader: threading.Thread | None = None

    @classmethod
    def start(
        cls,
        command: list[str],
        env: dict[str, str],
        cgroup: Cgroup | None,
        containment: str,
        pass_fds: tuple[int, ...] = (),
        ready_seconds: float = 120.0,
    ) -> WarmSandbox:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd="/",
            start_new_session=True,
            pass_fds=pass_fds,
        )
        sandbox = cls(process=process, cgroup=cgroup, containment=containment)
        sandbox._stderr_reader = threading.Thread(target=sandbox._keep_stderr_tail, daemon=True)
        sandbox._stderr_reader.start()
        sandbox._await_ready(ready_seconds)
        return sandbox

    def _await_ready(self, seconds: float) -> None:
        """Wait for the init's first idle line: its imports are done. A job's clock must not
        pay for them, and a sandbox that cannot start is infrastructure, never a job's fault
        (``OSError``; the caller reports it as unavailable)."""
        assert self.process.stdout is not None
        why = ""
        try:
            reader = _LineReader(self.process.stdout.fileno(), 4096, time.monotonic() + seconds)
            if reader.next().rstrip(b"\n") == protocol.IDLE_TAG:
                return
        except TimeoutError:
            why = f"it was not ready within {seconds:g} s"
        except (OverflowError, OSError):
            pass
        self.close()
        self._settle(0.5)
        last = self.stderr_tail().decode("utf-8", "replace").strip().splitlines()[-1:]
        raise OSError(f"the warm sandbox did not start: {why or (last[0][:300] if last else '')}")

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr_tail(self) -> bytes:
        with self._lock:
            return bytes(self._stderr)

    def oom_kills(self) -> int:
        return self.cgroup.oom_kills() if self.cgroup is not None else 0

    def run(self, job_input: bytes, nonce: str, wall_seconds: float, line_limit: int) -> Exchange:
        """Send one job; wait (at most ``wall_seconds``) for its frame (at most ``line_limit``
        bytes) and the idle line. Blocking: call it from a worker thread."""
        with self._busy:
            return self._run(job_input, nonce, wall_seconds, line_limit)

    def _run(self, job_input: bytes, nonce: str, wall_seconds: float, line_limit: int) -> Exchange:
        self.jobs += 1
        with self._lock:
            self._stderr.clear()  # the tail explains this job only
        deadline = time.monotonic() + wall_seconds
        assert self.process.stdin is not None and self.process.stdout is not None
        payload = None
        try:
            self.process.stdin.write(job_input)
            self.process.stdin.flush()
            lines = _LineReader(self.process.stdout.fileno(), line_limit, deadline)
            line = lines.next()
            if line.startswith(protocol.FRAME_TAG + b" "):
                payload = protocol.find_frame(line, nonce)
                line = lines.next()
        except TimeoutError:
            return Exchange(payload, "exited" if payload is not None else "timeout")
        except OverflowError:
            return Exchange(None, "overflow")
        except OSError:  # the sandbox is gone: broken pipe, closed stream
            self._settle()
            # The result came before the sandbox went (it retired itself after the reset,
            # e.g. a job changed its init): the result stands, the sandbox is not reused.
            return Exchange(payload, "exited" if payload is not None else "died")
        clean = line.rstrip(b"\n") == protocol.IDLE_TAG
        # Without a frame the job's process died early and may have left part of the job
        # unread on stdin: such a sandbox is not reused.
        ended: Ended = "exited" if clean or payload is not None else "died"
        return Exchange(payload, ended, reusable=clean and payload is not None)

    def _settle(self, seconds: float = 2.0) -> None:
        """After the sandbox went away: let it exit and its last words reach the stderr
        tail, so the caller can tell a sandbox that never started from a crash."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=seconds)
        if self._stderr_reader is not None:
            self._stderr_reader.join(timeout=seconds)

    def close(self) -> None:
        """Kill the sandbox and everything in its cgroup; remove the cgroup. Blocking."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill_all()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        # A job still being read sees end-of-file now; its pipes are closed only after it
        # returns, so a pipe's descriptor number is never reused under its feet.
        with self._busy:
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if self.cgroup is not None:
            self.cgroup.remove()

    def _keep_stderr_tail(self) -> None:
        """Drain the runner's own stderr (so it never blocks) and keep its last bytes."""
        stream = self.process.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError), stream:
            while chunk := stream.read1(1 << 16):
                with self._lock:
                    self._stderr += chunk
                    del self._stderr[:-STDERR_TAIL_BYTES]


class _LineReader:
    """Lines from a pipe, each at most ``limit`` bytes, all before ``deadline``."""

    def __init__(self, fd: int, limit: int, deadline: float) -> None:
        self._fd, self._limit, self._deadline = fd, limit, deadline
        self._buffer = bytearray()

    def next(self) -> bytes:
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > self._limit:
                raise OverflowError
            remaining = self._deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._fd], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise StreamClosed("the sandbox closed its stdout")
            self._buffer += chunk
        line = bytes(self._buffer[: end + 1])
        del self._buffer[: end + 1]
        return line


class StreamClosed(OSError):
    """The sandbox closed its stdout (an OSError: the caller treats it as a gone sandbox)."""
