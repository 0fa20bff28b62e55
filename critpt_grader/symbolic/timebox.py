"""Run a callable under a wall-clock bound, on any thread.

SymPy cannot be cancelled from outside: its work is plain Python. Three ways to bound it exist:

* ``signal.setitimer`` + ``SIGALRM`` interrupts Python code between bytecodes, but only on the
  main thread, and it competes with anything else in the process that uses ``SIGALRM``;
* a process pool can be killed at any moment, but every expression must be pickled across, a
  worker pays SymPy's import cost, and a pool restarted after each timeout is slow;
* an *asynchronous exception* (CPython's ``PyThreadState_SetAsyncExc``) raised in the calling
  thread by a watchdog thread interrupts exactly where ``SIGALRM`` would, works on every thread
  (servers grade from worker threads), needs no pickling and costs microseconds.

We use the third. Its limits are those of ``SIGALRM``: a long call into C (one huge big-integer
multiplication, ``time.sleep``) is interrupted only when it returns to Python.

An interrupt can be swallowed: one that lands in a garbage-collector callback or a ``__del__``
is reported as "unraisable" and dropped. So the watchdog repeats it every few milliseconds for
as long as the thread is still inside the bounded call, which it checks by finding the call's
frame on the thread's stack. Once the call has returned, nothing more is raised, so no stray
interrupt escapes :func:`run_timeboxed`. The interrupt derives from ``BaseException`` so that
``except Exception`` in library code lets it through.
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

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_REPEAT_SECONDS = 0.02


class TimeBoxExceeded(Exception):
    """The callable did not finish within its bound."""


class _Interrupt(BaseException):
    """Raised inside the bounded thread. Each call raises its own subclass, so nested bounds
    never mistake each other's interrupt for their own."""


class _Entry:
    __slots__ = ("deadline", "exc_type", "frame", "state", "thread_id")

    def __init__(self, thread_id: int, deadline: float) -> None:
        self.thread_id = thread_id
        self.deadline = deadline
        self.exc_type: type[_Interrupt] = type("_CallInterrupt", (_Interrupt,), {})
        self.frame: FrameType | None = None  # the frame of _enter while the call runs
        self.state = "armed"  # armed -> fired (repeatedly) -> done


class _Watchdog:
    """One daemon thread that interrupts each call still running past its deadline."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _Entry]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, thread_id: int, deadline: float) -> _Entry:
        entry = _Entry(thread_id, deadline)
        with self._cond:
            self._push(entry, deadline)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="critpt-timebox", daemon=True
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
    # This frame marks "inside the bounded call" for the watchdog.
    entry.frame = sys._getframe()
    return fn()


def run_timeboxed(fn: Callable[[], T], seconds: float) -> T:
    """Return ``fn()``, or raise :class:`TimeBoxExceeded` once ``seconds`` have passed.

    Exceptions raised by ``fn`` propagate unchanged. A non-positive bound times out at once.
    """
    if seconds <= 0:
        raise TimeBoxExceeded("no time left")
    entry = _WATCHDOG.arm(threading.get_ident(), time.monotonic() + seconds)
    try:
        try:
            return _enter(entry, fn)
        finally:
            _WATCHDOG.disarm(entry)
    except entry.exc_type:
        raise TimeBoxExceeded(f"did not finish within {seconds:.3g} s") from None
