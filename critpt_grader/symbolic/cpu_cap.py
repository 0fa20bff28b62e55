"""Run a callable under a cap on the CPU time of its own thread.

Why CPU time: a verdict must be a function of the values compared, never of how busy the
machine is. Wall time stretches with every other process on the host; the CPU time a thread
spends on a piece of work does not (it varies by a few tens of percent with cache and
frequency effects). The caps the grader sets are also far above what ordinary values cost, so
that only a costly value reaches one, and every reason that names a cap says so. A thread
that gets no CPU at all is the row's concern: the comparison worker's wall-clock guard makes
that row a retry (``provider_unavailable``), never a verdict.

SymPy cannot be cancelled from outside: its work is plain Python. The call is interrupted by
an *asynchronous exception* (CPython's ``PyThreadState_SetAsyncExc``) that a watchdog thread
raises in the capped thread. It works on every thread (servers grade from worker threads),
needs no pickling and costs microseconds. Its limits are those of ``SIGALRM``: a long call into
C (one huge big-integer multiplication) is interrupted only when it returns to Python.

The watchdog reads the capped thread's CPU clock (``pthread_getcpuclockid``). CPU time cannot
run faster than wall time, so after a check it sleeps for the CPU time still left, then looks
again: a call that waits costs the watchdog nothing.

An interrupt can be swallowed: one that lands in a garbage-collector callback or a ``__del__``
is reported as "unraisable" and dropped. So the watchdog repeats it every few milliseconds for
as long as the thread is still inside the capped call, which it checks by finding the call's
frame on the thread's stack. Once the call has returned, nothing more is raised, so no stray
interrupt escapes :func:`run_with_cpu_cap`. The interrupt derives from ``BaseException`` so
that ``except Exception`` in library code lets it through.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import TypeVar

T = TypeVar("T")

# The grader's cap on one step of work on a candidate's value: a proof step, or one side's
# value at one sample point. Ordinary values take milliseconds (the slowest step on the
# benchmark corpus and the public tasks is well under a second); only a costly value
# reaches this.
STEP_CPU_SECONDS = 4.0

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_REPEAT_SECONDS = 0.02


class CpuCapReached(Exception):
    """The callable used up its CPU time before it finished."""


class _Interrupt(BaseException):
    """Raised inside the capped thread. Each call raises its own subclass, so nested caps
    never mistake each other's interrupt for their own."""


def _thread_clock(thread_id: int) -> Callable[[], float]:
    """A reader of ``thread_id``'s CPU time, usable from any thread."""
    try:
        clock = time.pthread_getcpuclockid(thread_id)
    except (AttributeError, OSError):  # no per-thread clocks here: the process's CPU time
        return time.process_time
    return lambda: time.clock_gettime(clock)


class _Entry:
    __slots__ = ("clock", "exc_type", "frame", "limit", "state", "thread_id")

    def __init__(self, thread_id: int, seconds: float) -> None:
        self.thread_id = thread_id
        self.clock = _thread_clock(thread_id)
        self.limit = self.clock() + seconds  # the thread's CPU time at which to interrupt
        self.exc_type: type[_Interrupt] = type("_CallInterrupt", (_Interrupt,), {})
        self.frame: FrameType | None = None  # the frame of _enter while the call runs
        self.state = "armed"  # armed -> fired (repeatedly) -> done

    def cpu_left(self) -> float | None:
        """CPU seconds left before the cap; None when the thread is gone."""
        try:
            return self.limit - self.clock()
        except OSError:
            return None


class _Watchdog:
    """One daemon thread that interrupts each call still running past its CPU cap."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _Entry]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, thread_id: int, seconds: float) -> _Entry:
        entry = _Entry(thread_id, seconds)
        with self._cond:
            self._push(entry, time.monotonic() + seconds)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="critpt-cpu-cap", daemon=True
                )
                self._thread.start()
            self._cond.notify()
        return entry

    def disarm(self, entry: _Entry) -> None:
        """After this returns no interrupt of ``entry`` is pending or can still be raised."""
        with self._cond:
            if entry.state == "fired":
                _set_async_exc(ctypes.c_ulong(entry.thread_id), None)  # drop an undelivered one
            entry.state = "done"
            entry.frame = None

    def _push(self, entry: _Entry, when: float) -> None:
        heapq.heappush(self._heap, (when, next(self._order), entry))

    def _loop(self) -> None:
        with self._cond:
            while True:
                if not self._heap:
                    self._cond.wait()
                    continue
                when, _, entry = self._heap[0]
                delay = when - time.monotonic()
                if entry.state != "done" and delay > 0:
                    self._cond.wait(delay)
                    continue
                heapq.heappop(self._heap)
                if entry.state == "done":
                    continue
                if entry.state == "armed":
                    left = entry.cpu_left()
                    if left is None:
                        entry.state, entry.frame = "done", None
                        continue
                    if left > 0:  # CPU time runs no faster than wall time: look again then
                        self._push(entry, time.monotonic() + left)
                        continue
                if entry.frame is not None and not _on_stack(entry.thread_id, entry.frame):
                    entry.state, entry.frame = "done", None  # the call has already returned
                    continue
                if entry.frame is not None:
                    entry.state = "fired"
                    _set_async_exc(
                        ctypes.c_ulong(entry.thread_id), ctypes.py_object(entry.exc_type)
                    )
                self._push(entry, time.monotonic() + _REPEAT_SECONDS)


def _on_stack(thread_id: int, frame: FrameType) -> bool:
    current = sys._current_frames().get(thread_id)
    while current is not None:
        if current is frame:
            return True
        current = current.f_back
    return False


_WATCHDOG = _Watchdog()


def _enter(entry: _Entry, fn: Callable[[], T]) -> T:
    # This frame marks "inside the capped call" for the watchdog.
    entry.frame = sys._getframe()
    return fn()


def run_with_cpu_cap(fn: Callable[[], T], seconds: float) -> T:
    """Return ``fn()``, or raise :class:`CpuCapReached` once the calling thread has spent
    ``seconds`` of CPU time in it.

    Exceptions raised by ``fn`` propagate unchanged. A non-positive cap is reached at once.
    """
    if seconds <= 0:
        raise CpuCapReached("no CPU time allowed")
    entry = _WATCHDOG.arm(threading.get_ident(), seconds)
    try:
        try:
            return _enter(entry, fn)
        finally:
            _WATCHDOG.disarm(entry)
    except entry.exc_type:
        raise CpuCapReached(f"used its cap of {seconds:.3g} s of CPU time") from None
