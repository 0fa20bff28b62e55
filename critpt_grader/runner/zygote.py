"""The zygote: the one process that forks a job's processes, and one that never holds job data.

A fork copies the parent's whole memory, freed blocks included. The supervisor (the sandbox's
PID 1) reads every job, every case report and every result, so a program forked from it could
read earlier jobs' sources, arguments and values back out of its own memory (``ctypes``
over ``/proc/self/maps``) and report them as its own. So the supervisor never forks a job's
process. The zygote does: forked from the supervisor right after the warm-up — before the
first job of a warm sandbox — it only forks on request. For each process the supervisor sends
it, over a private socket, the descriptors that process needs (a sealed memfd holding the job,
the report pipe, the two capture pipes) and two integers (the first case, the value budget);
the zygote forks, closes its copies, and answers with the pid and, later, the wait status and
CPU time. The supervisor sends it SIGCONT again every 50 ms while it waits for an answer, so a
job that stops the zygote after the last SIGCONT delays that answer by at most that much. A
new process runs no job code until its pid has been answered, so a job that kills the zygote
at once still has its result read. It never reads the memfd or any pipe: job input reaches
the job's process directly, and reports and results go only to the supervisor.

**Invariant.** What a job's process inherits is the warm-up's memory (libraries, the frozen
heap) and the zygote's bookkeeping (pids, exit statuses): never another job's source,
arguments, outputs, stdout or results. (A one-shot sandbox forks its zygote after its one job
arrived: the only job that sandbox ever sees.) A reference job and a candidate job never
share a sandbox, so never a memory lineage either.

With worlds (:mod:`critpt_grader.runner.world`, every warm sandbox) each process it starts
lives in PID, mount, IPC and network namespaces of its own, so a job sees neither the zygote
nor the supervisor and cannot signal them; the zygote is the init of a PID namespace of its
own and enters each job's namespaces only to start its processes, leaving before it
answers. Without worlds (a one-shot runner whose host grants none) the zygote is not the
namespace's init and a job (the same uid) can signal it. Either way it ignores every
catchable signal (:mod:`critpt_grader.runner.signals`); the supervisor sends it SIGCONT
before every request and wait, undoing a SIGSTOP; a SIGKILL ends it, which only a job's own
processes can do: that job's remaining cases crash, and a warm sandbox retires after the job.
It also cannot be read or traced: it is non-dumpable like the supervisor, and the seccomp
filter refuses ``ptrace`` and ``process_vm_*``.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import sys
import time
from dataclasses import dataclass
from typing import NoReturn

from critpt_grader.runner import signals, world
from critpt_grader.runner.child import child_main

_PR_SET_PDEATHSIG = 1
_MESSAGE_BYTES = 256
# How often a wait undoes a SIGSTOP: a job can stop the zygote at any moment (after the
# supervisor's last SIGCONT), and a stopped zygote would hold its answer until the deadline.
_RESUME_EVERY = 0.05
SPAWN_FDS = 4  # job memfd, report pipe, stdout pipe, stderr pipe (in that order)


class ZygoteGone(Exception):
    """The zygote died or stopped answering: no further process can be started.
    ``unavailable``: it could not give the process a world of its own (:mod:`.world`), an
    infrastructure fault that says nothing about the job."""

    def __init__(self, message: str, *, unavailable: bool = False) -> None:
        super().__init__(message)
        self.unavailable = unavailable


@dataclass(eq=False)
class Zygote:
    """The supervisor's handle on its zygote (see the module docstring). Not thread-safe; one
    request at a time: spawn, then wait for that process before the next spawn."""

    pid: int
    channel: socket.socket
    dead: bool = False
    requests: int = 0  # the id of the last request: every answer names the one it answers
    refused: str = ""  # why a process it started never ran the job (no world): unavailable

    @classmethod
    def start(cls, *, worlds: bool = False) -> Zygote:
        """Fork the zygote from the calling process, which must hold no job data it would
        not give to every job (a warm sandbox's init: right after its warm-up). ``worlds``:
        it gives every process a world of its own (:mod:`.world`); then it is the init of a
        PID namespace of its own, and when that cannot be had every spawn is unavailable."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        refused = ""
        if worlds:
            try:
                world.start_pid_namespace()
            except OSError as exc:
                refused = str(exc)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the zygote
            try:
                ours.close()
                _serve(theirs, parent, worlds=worlds, refused=refused)
            finally:
                os._exit(70)
        theirs.close()
        return cls(pid=pid, channel=ours)

    def spawn(self, fds: tuple[int, int, int, int], first: int, budget: int, seconds: float) -> int:
        """Start a job process on ``fds`` (see :data:`SPAWN_FDS`) from case ``first`` with
        ``budget`` value bytes; its pid. :class:`ZygoteGone` when no answer came within
        ``seconds`` or the zygote has ended (then it is not used again)."""
        if self.dead:
            raise ZygoteGone("the zygote has ended")
        self.resume()
        self.requests += 1
        request = {"id": self.requests, "first": first, "budget": budget}
        try:
            socket.send_fds(self.channel, [json.dumps(request).encode("ascii")], list(fds))
        except OSError as exc:
            self.dead = True
            raise ZygoteGone(f"the zygote cannot be reached ({exc.strerror})") from None
        reply = self._receive("pid", seconds)
        if reply is None:
            # Its answer may still come: the zygote is out of step, so it is not used again
            # (the reset ends it and the sandbox retires).
            self.dead = True
            raise ZygoteGone("the zygote did not answer")
        pid = reply.get("pid")
        if reply.get("unavailable") is True:
            self.dead = True  # it ends itself after a world it could not make
            why = str(reply.get("error"))[:300]
            raise ZygoteGone(f"no world of its own for the job: {why}", unavailable=True)
        if not isinstance(pid, int) or pid <= 1:
            raise ZygoteGone(f"the zygote could not fork: {str(reply.get('error'))[:200]}")
        return pid

    def wait(self, pid: int, seconds: float) -> tuple[int | None, float]:
        """The wait status of job process ``pid`` (None: still running after ``seconds``;
        -1: lost with the zygote) and the CPU seconds it and its reaped descendants used."""
        self.resume()
        reply = self._receive("exited", seconds)
        if reply is None:
            return (-1 if self.dead else None), 0.0
        if reply.get("unavailable") is True:  # it never ran the job, and it has ended
            self.dead = True
            self.refused = f"no world of its own for the job: {str(reply.get('error'))[:300]}"
        status, cpu = reply.get("status"), reply.get("cpu")
        if reply.get("exited") != pid or not isinstance(status, int):
            self.dead = True  # out of step: nothing it says can be matched any more
            return -1, 0.0
        return status, float(cpu) if isinstance(cpu, int | float) else 0.0

    def resume(self) -> None:
        """Undo a SIGSTOP a job may have sent (harmless when the zygote runs)."""
        if not self.dead:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGCONT)

    def alive(self) -> bool:
        """Whether the zygote still runs (the caller reaps orphans through :meth:`reaped`)."""
        if self.dead:
            return False
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            done = self.pid
        if done:
            self.dead = True
        return not self.dead

    def reaped(self, pid: int) -> None:
        """Note that ``pid`` was reaped by a wait for any child: it may be the zygote."""
        if pid == self.pid:
            self.dead = True

    def close(self) -> None:
        """End the zygote: it leaves when its channel closes; reap it."""
        with contextlib.suppress(OSError):
            self.channel.close()
        if not self.dead:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.dead = True

    def _receive(self, kind: str, seconds: float) -> dict | None:
        """The zygote's answer of ``kind`` (``pid`` or ``exited``) to the last request, or
        None after ``seconds`` or when the zygote has gone. A late answer to an earlier
        request is passed over: it can never be taken for this one."""
        deadline = time.monotonic() + max(seconds, 0.0)
        while not self.dead:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.channel], [], [], min(max(left, 0), _RESUME_EVERY))
            if not ready:
                if left <= _RESUME_EVERY:
                    return None
                self.resume()  # a job may have stopped it since the last SIGCONT
                continue
            try:
                data = self.channel.recv(_MESSAGE_BYTES)
            except OSError:
                data = b""
            try:
                message = json.loads(data) if data else None
            except ValueError:
                message = None
            if not isinstance(message, dict):
                self.dead = True  # closed (it died) or garbled: either way it is done
                return None
            if message.get("id") == self.requests and kind in message:
                return message
        return None


def _serve(
    channel: socket.socket, parent: int, *, worlds: bool, refused: str
) -> NoReturn:  # pragma: no cover - the zygote
    """Fork a job process per request; report its pid, then its exit; leave when the
    supervisor does."""
    signals.ignore_all()
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # In a PID namespace of its own the zygote's parent is outside it (getppid() is 0); the
    # supervisor is then the sandbox's init, whose end ends every process of the sandbox.
    if os.getppid() not in (parent, 0):
        os._exit(0)  # the supervisor died before the death signal was armed
    # The supervisor's job and result channels are not the zygote's to hold.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    maker: world.Worlds | None = None
    if worlds and not refused:
        try:
            maker = world.Worlds.prepare()
        except OSError as exc:
            refused = str(exc)
    while True:
        try:
            # Close-on-exec: a job's init is exec'd and must hold none of them.
            data, fds, _, _ = socket.recv_fds(
                channel, _MESSAGE_BYTES, SPAWN_FDS, socket.MSG_CMSG_CLOEXEC
            )
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)  # the supervisor closed the channel
        try:
            request = json.loads(data)
            ident, first, budget = request["id"], int(request["first"]), int(request["budget"])
            if len(fds) != SPAWN_FDS:
                raise ValueError(f"{len(fds)} descriptors")
        except (ValueError, KeyError, TypeError) as exc:
            _close(fds)
            _send(channel, {"id": None, "pid": None, "error": f"malformed request: {exc}"})
            continue
        if worlds and maker is None:
            _close(fds)
            _unavailable(channel, ident, refused)
        _spawn(channel, maker, ident, fds, first, budget)


def _spawn(
    channel: socket.socket,
    maker: world.Worlds | None,
    ident: object,
    fds: list[int],
    first: int,
    budget: int,
) -> None:  # pragma: no cover - the zygote
    """Start one job process (in a world of its own when ``maker``), answer with its pid,
    wait for it and answer with its exit."""
    init = 0
    if maker is not None:
        try:
            init = maker.enter()
        except OSError as exc:
            _close(fds)
            _back_home(channel, maker, ident)
            _unavailable(channel, ident, f"cannot make the job's namespaces: {exc}")
    # The new process waits at this gate until its pid has been answered: a job that
    # kills the zygote at once must not take the answer, and with it its own result, away.
    # Then, in a world, it settles there (its own /proc, no capabilities, the job's filter)
    # and says so on a pipe it closes before any of the job runs: a process that could not
    # settle never ran the job, and its exit is answered as unavailable, never as the job's.
    gate_r, gate_w = os.pipe()
    ready_r, ready_w = os.pipe()
    try:
        pid = os.fork()
    except OSError as exc:
        _close([*fds, gate_r, gate_w, ready_r, ready_w])
        if maker is not None:
            _back_home(channel, maker, ident)
            world.end(init)
        _send(channel, {"id": ident, "pid": None, "error": str(exc)})
        return
    if pid == 0:
        try:
            channel.close()
            os.close(gate_w)
            os.close(ready_r)
            os.read(gate_r, 1)  # a byte, or the zygote's end: either way the pid is out
            os.close(gate_r)
            if maker is not None:
                maker.settle()
            os.write(ready_w, b"r")
            os.close(ready_w)
            for fd in fds:  # received close-on-exec; the job's process had them inheritable
                os.set_inheritable(fd, True)
            child_main(*fds, first=first, value_budget=budget)
        finally:
            os._exit(70)
    _close([*fds, gate_r, ready_w])
    if maker is not None:
        _back_home(channel, maker, ident)
    _send(channel, {"id": ident, "pid": pid})
    os.write(gate_w, b"g")
    os.close(gate_w)
    _, status, usage = os.wait4(pid, 0)
    if init:
        world.end(init)  # and with it whatever the job left running
    settled = os.read(ready_r, 1) == b"r"  # the process has ended: "r" or end-of-file
    os.close(ready_r)
    cpu = usage.ru_utime + usage.ru_stime
    exited = {"id": ident, "exited": pid, "status": status, "cpu": cpu}
    if not settled:
        why = "the job's process could not settle in its world"
        _unavailable(channel, ident, why, exited)
    _send(channel, exited)


def _back_home(  # pragma: no cover - the zygote
    channel: socket.socket, maker: world.Worlds, ident: object
) -> None:
    """Leave a job's world; a zygote that cannot must not start anything more."""
    try:
        maker.leave()
    except OSError as exc:
        _unavailable(channel, ident, f"cannot leave the job's namespaces: {exc}")


def _unavailable(  # pragma: no cover - the zygote
    channel: socket.socket, ident: object, why: str, answer: dict | None = None
) -> NoReturn:
    """Say that no world could be made (in ``answer``, else as the pid answer), and end: the
    sandbox retires after this job."""
    _send(channel, {"id": ident, "pid": None, **(answer or {}), "error": why, "unavailable": True})
    os._exit(0)


def _send(channel: socket.socket, message: dict) -> None:  # pragma: no cover - the zygote
    try:
        channel.send(json.dumps(message).encode("ascii"))
    except OSError:
        os._exit(0)


def _close(fds: list[int]) -> None:  # pragma: no cover - the zygote
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
