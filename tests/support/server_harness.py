"""A real ``critpt-grader serve`` on loopback, in a subprocess the test owns and stops.

    with RunningServer("--backend", "in-process") as server:
        httpx.post(f"{server.url}/verify", json=row)

The server gets a free port on 127.0.0.1; ``start()`` waits for ``/healthz``; ``stop()`` sends
SIGTERM (then SIGKILL after a grace period) to the one process it started; ``kill()`` is
``kill -9``. Its output goes to a log file named in failures.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.support.paths import REPO


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def completed(text: str) -> dict:
    """A completed Responses API object whose one assistant message is ``text``."""
    return {
        "id": "resp-test",
        "object": "response",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
    }


def fenced(source: str) -> dict:
    return completed(f"Here is the code.\n\n```python\n{source}\n```\n")


class RunningServer:
    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.args = list(args)
        self.env = {**os.environ, **(env or {})}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(tempfile.mkstemp(prefix="critpt-serve-", suffix=".log")[1])
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 90.0) -> RunningServer:
        command = [sys.executable, "-m", "critpt_grader.cli", "serve", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--log-level", "warning", *self.args]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                command, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}): {self.output()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).json().get("status") == "ok":
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the server did not start in {timeout} s: {self.output()}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self, grace: float = 30.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()  # SIGKILL to this one process, as kill -9 would
        self.proc.wait(10)

    def __enter__(self) -> RunningServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        self.log.unlink(missing_ok=True)


def descendants(pid: int) -> set[int]:
    """Every live process whose parent chain reaches ``pid``."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    for child in parents:
        node, seen = child, set()
        while node in parents and node not in seen:
            seen.add(node)
            node = parents[node]
            if node == pid:
                found.add(child)
                break
    return found
