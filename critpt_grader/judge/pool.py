"""Run comparison jobs in warm worker processes that the grader can kill.

A comparison decodes and evaluates values that a candidate chose, on the grader's host. The
size checks before every conversion (:mod:`critpt_grader.compare.numbers`,
:mod:`critpt_grader.compare.legacy`) stop the hostile values we know of; this module bounds
the ones we do not. A job runs in a worker process under a :class:`Budget`:

* **memory**: the worker's address space is capped (``RLIMIT_AS``); running out there is a
  ``MemoryError`` inside the worker (or its death), never the grader's;
* **CPU**: the grader reads the worker's CPU time (``/proc/<pid>/stat``) while it waits and
  kills the worker once the job has used its seconds; ``RLIMIT_CPU`` is set a few seconds
  above as a second line;
* **wall**: a worker that gets too little CPU for too long (an overloaded host) is killed
  too, and that is reported apart (``overrun="wall"``): it says nothing about the values.

A killed worker is replaced by a fresh one at the next job. Workers are forked from a *zygote*:
one helper process per pool, started as a fresh interpreter (never a fork of the grader, which
runs threads) that imports a warm-up module once (its name passed in: for the grader,
:mod:`critpt_grader.judge.warmup`, SymPy and the comparator) and then only forks. A new worker
costs a fork, not an import; the grader's own main module is never re-imported (as
multiprocessing's spawn and forkserver would do). The zygote and its workers end with
:meth:`WorkerPool.close`, and also when the grader dies (their sockets close). Workers are
signalled through pidfds, so a reused pid is never hit.

A job is ``"module:function"`` plus picklable arguments, run as ``function(*args)`` in the
worker. A function that returns a generator streams: each yielded item reaches the caller as
it is produced (:attr:`JobOutcome.events`), so a job killed half way still reports what it
finished. Jobs and their arguments are the grader's own data, so pickle is used both ways;
nothing a candidate wrote is ever unpickled (candidate values arrive as wire envelopes).

:class:`WorkerPool` is synchronous and thread-safe: callers on an event loop run
:meth:`WorkerPool.run` in a thread. :class:`InlineRunner` runs the same jobs in the calling
thread with no budget, for unit tests (``compare_in_process``).

    pool = WorkerPool(Budget(cpu_seconds=10, memory_mb=1024), workers=2, warmup="my_pkg.warm")
    try:
        outcome = pool.run("critpt_grader.judge.row:judge_row", (items,))
    finally:
        pool.close()
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
import types
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Literal

Overrun = Literal["cpu", "memory", "wall", "crashed"]

# How often the grader looks at a busy worker's CPU time. Results arrive without waiting for
# this (the wait returns as soon as the worker writes), so it costs no latency.
_POLL_SECONDS = 0.02
_FORK = "!Ii"  # a fork request: the worker's memory limit (MiB) and its niceness
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True, slots=True)
class Budget:
    """What one job may use: ``cpu_seconds`` of CPU time and ``memory_mb`` of address space.
    The wall clock allows ``max(6 * cpu, cpu + 30)`` seconds before the job is abandoned as
    starved (see the module docstring): generous, since a busy host (sandboxes on every core)
    can leave a worker a small share of a CPU without anything being wrong with the values.
    ``nice``: the CPU priority of the worker that runs it (0, or higher for work that should
    yield the CPU to other jobs; a worker keeps its niceness, so a job goes to a worker of its
    own). It changes when a job finishes, never what it may use: budgets are CPU time."""

    cpu_seconds: float = 10.0
    memory_mb: int = 1024
    nice: int = 0

    @property
    def wall_seconds(self) -> float:
        return max(6 * self.cpu_seconds, self.cpu_seconds + 30.0)

    def text(self) -> str:
        return f"{self.cpu_seconds:g} s of CPU, {self.memory_mb} MiB"


@dataclass(slots=True)
class JobOutcome:
    """What became of one job. ``finished``: it returned ``value``. Otherwise ``overrun`` says
    why it was stopped: ``cpu`` (its CPU seconds ran out), ``memory`` (its address space ran
    out), ``wall`` (starved of CPU), ``crashed`` (the worker died some other way)."""

    events: list[Any] = field(default_factory=list)
    event_cpu_seconds: list[float] = field(default_factory=list)  # the job's CPU at each event
    value: Any = None
    finished: bool = False
    overrun: Overrun | None = None
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    peak_rss_kb: int = 0  # the worker's peak resident size, as far as it is known


class JobError(RuntimeError):
    """The job raised an exception it did not handle: a bug, reported with its traceback."""


def call_job(target: str, args: tuple) -> Any:
    """Resolve ``"module:function"`` and call it (in the current process)."""
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)(*args)


class InlineRunner:
    """Runs jobs in the calling thread: same results, no budget, no process. For tests."""

    def run(self, target: str, args: tuple, budget: Budget | None = None) -> JobOutcome:
        started = time.perf_counter()
        outcome = JobOutcome()
        try:
            result = call_job(target, args)
            if isinstance(result, types.GeneratorType):
                outcome.value = yield_all(result, outcome.events.append)
            else:
                outcome.value = result
        except MemoryError:
            outcome.overrun = "memory"
        else:
            outcome.finished = True
        outcome.wall_seconds = time.perf_counter() - started
        return outcome

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass


def yield_all(generator: types.GeneratorType, emit) -> Any:
    """Pass each item of ``generator`` to ``emit``; return the generator's return value."""
    while True:
        try:
            emit(next(generator))
        except StopIteration as stop:
            return stop.value


class _Worker:
    """The grader's handle on one worker: its socket, pid and pidfd."""

    def __init__(self, pid: int, pidfd: int, conn: Connection, nice: int = 0) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.conn = conn
        self.nice = nice
        self.retiring = False  # the worker asked not to be reused

    def cpu_seconds(self) -> float | None:
        """User + system CPU time of the worker, or None when /proc cannot say."""
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime

    def peak_rss_kb(self) -> int:
        try:
            with open(f"/proc/{self.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def exited(self, timeout: float = 0.0) -> bool:
        """Whether the worker has ended (its pidfd turns readable then)."""
        try:
            return bool(select.select([self.pidfd], [], [], timeout)[0])
        except (OSError, ValueError):
            return True

    def kill(self) -> None:
        """SIGKILL through the pidfd, and wait (briefly) until the process is gone."""
        if self.pidfd < 0:
            return
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        self.exited(5.0)
        os.close(self.pidfd)
        self.pidfd = -1
        self.conn.close()

    def stop(self) -> None:
        """Ask an idle worker to leave; kill it if it does not at once."""
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.exited(0.5)
        self.kill()


class _Zygote:
    """A warm interpreter that forks workers on request (see the module docstring)."""

    def __init__(self, warmup: str | None) -> None:
        host, child = socket.socketpair()
        code = (
            "import sys; sys.path[:0] = __import__('json').loads(sys.argv[2]); "
            "from critpt_grader.judge.pool import zygote_main; "
            "zygote_main(int(sys.argv[1]), sys.argv[3] or None)"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, str(child.fileno()), json.dumps(sys.path), warmup or ""],
            pass_fds=[child.fileno()],
            stdin=subprocess.DEVNULL,
        )
        child.close()
        self._control = host
        self._lock = threading.Lock()

    def fork(self, memory_mb: int, nice: int = 0) -> _Worker:
        with self._lock:
            try:
                self._control.sendall(struct.pack(_FORK, memory_mb, nice))
                message, fds, _, _ = socket.recv_fds(self._control, 64, 2)
            except OSError as exc:
                raise RuntimeError(f"the comparison zygote is gone: {exc}") from None
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            raise RuntimeError("the comparison zygote did not start a worker")
        conn_fd, pidfd = fds
        return _Worker(int(message), pidfd, Connection(conn_fd), nice)

    def close(self) -> None:
        self._control.close()  # the zygote reads EOF and leaves
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class WorkerPool:
    """Up to ``workers`` warm worker processes running jobs under ``budget``.

    Workers start on demand (:meth:`start` starts one ahead of need) and are reused job
    after job; a worker that overran, crashed or ran out of memory is killed and not reused.
    :meth:`run` may be called from many threads at once; it blocks until the job is done or
    stopped. :meth:`close` kills every worker; the pool cannot be used afterwards.
    """

    def __init__(self, budget: Budget, workers: int = 2, *, warmup: str | None = None) -> None:
        """``warmup``: a module the zygote imports once before it forks workers (the jobs'
        own modules, warm); None imports nothing ahead."""
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self.budget = budget
        self.size = workers
        self.warmup = warmup
        self.peak_rss_kb = 0  # the largest worker seen, for benchmarks and reports
        self.cpu_seconds = 0.0  # CPU time all jobs used in workers, likewise
        self._zygote: _Zygote | None = None
        self._zygote_lock = threading.Lock()
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._live = 0
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start one worker in the background if none is running, so the first job does not
        wait for the zygote's imports. Returns at once."""
        with self._cond:
            if self._closed or self._live:
                return
            self._live += 1
        threading.Thread(target=self._start_idle, name="critpt-judge-start", daemon=True).start()

    def _start_idle(self) -> None:
        try:
            worker = self._spawn()
        except Exception:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            return
        self._release(worker)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, busy = list(self._idle), list(self._busy)
            self._idle.clear()
            self._cond.notify_all()
        for worker in busy:
            worker.kill()  # its caller sees the worker die and reports it
        for worker in idle:
            worker.stop()
        with self._zygote_lock:
            if self._zygote is not None:
                self._zygote.close()
                self._zygote = None

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- running a job --------------------------------------------------------------------

    def run(self, target: str, args: tuple, budget: Budget | None = None) -> JobOutcome:
        """Run ``target(*args)`` in a worker under ``budget`` (the pool's by default)."""
        budget = budget or self.budget
        worker = self._acquire(budget.nice)
        outcome = JobOutcome()
        started = time.monotonic()
        cpu_start = worker.cpu_seconds()
        try:
            worker.conn.send((target, args, budget.cpu_seconds))
            self._wait(worker, budget, outcome, started, cpu_start)
        except (OSError, EOFError):  # the worker died (or was killed by close())
            outcome.overrun = outcome.overrun or "crashed"
        finally:
            outcome.wall_seconds = time.monotonic() - started
            if outcome.finished and not worker.retiring:
                self._release(worker)
            elif outcome.finished:
                self._retire(worker)
            else:
                outcome.peak_rss_kb = max(outcome.peak_rss_kb, worker.peak_rss_kb())
                if outcome.overrun is None and not self._closed:
                    outcome.overrun = "crashed"
                self._retire(worker)
            with self._cond:
                self.peak_rss_kb = max(self.peak_rss_kb, outcome.peak_rss_kb)
                self.cpu_seconds += outcome.cpu_seconds
        if outcome.finished and isinstance(outcome.value, JobError):
            raise outcome.value
        return outcome

    def _wait(
        self,
        worker: _Worker,
        budget: Budget,
        outcome: JobOutcome,
        started: float,
        cpu_start: float | None,
    ) -> None:
        while True:
            if worker.conn.poll(_POLL_SECONDS):
                kind, payload = worker.conn.recv()
                if kind == "event":
                    outcome.events.append(payload)
                    self._account_cpu(worker, outcome, cpu_start)
                    outcome.event_cpu_seconds.append(outcome.cpu_seconds)
                    continue
                if kind == "done":
                    outcome.value, outcome.peak_rss_kb, retire = payload
                    outcome.finished = True
                    if retire:
                        worker.retiring = True
                elif kind == "error":
                    outcome.value, outcome.peak_rss_kb = JobError(payload[0]), payload[1]
                    outcome.finished = True
                else:  # "memory": the worker ran out of address space and leaves
                    outcome.overrun = "memory"
                    outcome.peak_rss_kb = payload
                self._account_cpu(worker, outcome, cpu_start)
                return
            used = self._account_cpu(worker, outcome, cpu_start)
            if used is not None and used > budget.cpu_seconds:
                outcome.overrun = "cpu"
                return
            if time.monotonic() - started > budget.wall_seconds:
                outcome.overrun = "wall"
                return
            if worker.exited() and not worker.conn.poll(0):
                # gone without a word: the RLIMIT_CPU backstop, or a crash
                over = used is not None and used >= budget.cpu_seconds
                outcome.overrun = "cpu" if over else "crashed"
                return

    @staticmethod
    def _account_cpu(worker: _Worker, outcome: JobOutcome, cpu_start: float | None):
        now = worker.cpu_seconds()
        if now is None or cpu_start is None:
            return None
        outcome.cpu_seconds = now - cpu_start
        return outcome.cpu_seconds

    # -- workers --------------------------------------------------------------------------

    def _acquire(self, nice: int = 0) -> _Worker:
        """An idle worker of this niceness, else a new one (an idle worker of another
        niceness makes room when the pool is full)."""
        other: _Worker | None = None
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("the worker pool is closed")
                mine = next((w for w in reversed(self._idle) if w.nice == nice), None)
                if mine is not None:
                    self._idle.remove(mine)
                    self._busy.add(mine)
                    return mine
                if self._live < self.size:
                    self._live += 1
                    break
                if self._idle:  # full, with idle workers of another niceness only
                    other = self._idle.pop(0)
                    break  # it leaves below; its place in _live is this job's
                self._cond.wait()
        if other is not None:
            other.stop()
        try:
            worker = self._spawn(nice)
        except BaseException:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._busy.add(worker)
        return worker

    def _release(self, worker: _Worker) -> None:
        with self._cond:
            self._busy.discard(worker)
            if self._closed:
                self._live -= 1
            else:
                self._idle.append(worker)
            self._cond.notify()
        if self._closed:
            worker.stop()

    def _retire(self, worker: _Worker) -> None:
        worker.kill()
        with self._cond:
            self._busy.discard(worker)
            self._live -= 1
            self._cond.notify()

    def _spawn(self, nice: int = 0) -> _Worker:
        with self._zygote_lock:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            if self._zygote is None:
                self._zygote = _Zygote(self.warmup)
            zygote = self._zygote
        return zygote.fork(self.budget.memory_mb, nice)


# --- inside the zygote and the workers --------------------------------------------------------


# How long the comparison zygote waits, idle after its first fork, before the warm-up that
# can wait (the pint registry): past a one-shot grade's first verdict.
_LATER_AFTER_IDLE = 1.0


def zygote_main(control_fd: int, warmup: str | None) -> None:
    """Import ``warmup`` once, then fork one worker per request until the grader closes the
    socket; once it has forked a worker and then sat idle for ``_LATER_AFTER_IDLE`` seconds,
    run the module's ``after_first_worker()`` if it has one (warm-up the first worker need
    not wait for). The entry point of the zygote's interpreter."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the grader ends us, not a terminal's ^C
    later = None
    if warmup:
        module = importlib.import_module(warmup)  # imports, a parse, gc.freeze
        later = getattr(module, "after_first_worker", None)  # warm-up that can wait

    def reap(*_: object) -> None:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass

    signal.signal(signal.SIGCHLD, reap)
    control = socket.socket(fileno=control_fd)
    forked = False
    while True:
        size = struct.calcsize(_FORK)
        if later is not None and forked:
            # The deferred warm-up runs once the zygote has been idle a moment: not while a
            # cold start's first verdict still needs the CPU (a one-shot grade never pays it).
            with contextlib.suppress(OSError, ValueError):
                if not select.select([control], [], [], _LATER_AFTER_IDLE)[0]:
                    with contextlib.suppress(Exception):
                        later()
                    later = None
        try:
            request = control.recv(size, socket.MSG_WAITALL)
        except OSError:
            break
        if len(request) < size:
            break  # the grader closed the pool, or is gone
        memory_mb, nice = struct.unpack(_FORK, request)
        mine, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                control.close()
                mine.close()
                if nice > 0:
                    os.nice(nice)  # for good: a process cannot take priority back
                _serve(Connection(theirs.detach()), memory_mb)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        pidfd = os.pidfd_open(pid)  # before any reaping can let the pid be reused
        try:
            socket.send_fds(control, [str(pid).encode()], [mine.fileno(), pidfd])
        except OSError:
            os.kill(pid, signal.SIGKILL)
            break
        finally:
            mine.close()
            os.close(pidfd)
        forked = True
    os._exit(0)


def _serve(conn: Any, memory_mb: int) -> None:
    """A worker's life: limits first, then jobs until the grader says stop or goes away."""
    limit = memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        target, args, cpu_seconds = request
        _arm_cpu_backstop(cpu_seconds)
        try:
            result = call_job(target, args)
            if isinstance(result, types.GeneratorType):
                value = yield_all(result, lambda item: conn.send(("event", item)))
            else:
                value = result
            conn.send(("done", (value, _peak_rss_kb(), _retire_requested)))
            if _retire_requested:
                return
        except MemoryError:
            # The heap may be left fragmented or half-built: report and leave (not reused).
            _send_quietly(conn, ("memory", _peak_rss_kb()))
            return
        except Exception:
            _send_quietly(conn, ("error", (traceback.format_exc(limit=30), _peak_rss_kb())))


_retire_requested = False


def request_retirement() -> None:
    """Called by a job that recovered from a MemoryError: the worker reports its result, then
    leaves rather than serve another job from a heap that once ran dry."""
    global _retire_requested
    _retire_requested = True


def _arm_cpu_backstop(cpu_seconds: float) -> None:
    """RLIMIT_CPU a few seconds past the job's budget: SIGXCPU ends the worker even if the
    grader's own watch failed. The grader normally kills it first."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    soft = math.ceil(spent + cpu_seconds) + 3
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]  # left alone: a lowered one cannot rise
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _peak_rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _send_quietly(conn: Any, message: Any) -> None:
    # The report itself may fail (memory, a closed pipe): the worker's exit says it then.
    with contextlib.suppress(Exception):
        conn.send(message)
