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
multiplication, ``time.sleep``) is interrupted only when it returns to Python, and code that
swallows ``BaseException`` can absorb the interrupt (SymPy catches ``Exception`` only, and the
interrupt derives from ``BaseException`` for that reason). The watchdog fires at most once per
call, so a stray interrupt can never leak out of :func:`run_timeboxed` after it returns.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc


class TimeBoxExceeded(Exception):
    """The callable did not finish within its bound."""


class _Interrupt(BaseException):
    """Raised inside the bounded thread. A ``BaseException`` so that ``except Exception`` in
    library code does not swallow it; each call raises its own subclass, so nested bounds
    never mistake each other's interrupt for their own."""


class _Entry:
    __slots__ = ("deadline", "exc_type", "state", "thread_id")

    def __init__(self, thread_id: int, deadline: float, exc_type: type[_Interrupt]) -> None:
        self.thread_id = thread_id
        self.deadline = deadline
        self.exc_type = exc_type
        self.state = "armed"  # armed -> fired | disarmed


class _Watchdog:
    """One daemon thread that raises each entry's interrupt once its deadline passes."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _Entry]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, thread_id: int, deadline: float) -> _Entry:
        entry = _Entry(thread_id, deadline, type("_CallInterrupt", (_Interrupt,), {}))
        with self._cond:
            heapq.heappush(self._heap, (deadline, next(self._order), entry))
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
                # Clear the interrupt if the thread has not taken delivery yet.
                _set_async_exc(ctypes.c_ulong(entry.thread_id), None)
            entry.state = "disarmed"

    def _loop(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][2].state != "armed":
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                deadline, _, entry = self._heap[0]
                delay = deadline - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                heapq.heappop(self._heap)
                entry.state = "fired"
                _set_async_exc(ctypes.c_ulong(entry.thread_id), ctypes.py_object(entry.exc_type))


_WATCHDOG = _Watchdog()


def run_timeboxed(fn: Callable[[], T], seconds: float) -> T:
    """Return ``fn()``, or raise :class:`TimeBoxExceeded` once ``seconds`` have passed.

    Exceptions raised by ``fn`` propagate unchanged. A non-positive bound times out at once.
    """
    if seconds <= 0:
        raise TimeBoxExceeded("no time left")
    entry = _WATCHDOG.arm(threading.get_ident(), time.monotonic() + seconds)
    try:
        try:
            return fn()
        finally:
            _WATCHDOG.disarm(entry)
    except entry.exc_type:
        raise TimeBoxExceeded(f"did not finish within {seconds:.3g} s") from None
