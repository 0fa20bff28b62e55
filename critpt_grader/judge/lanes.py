"""Who waits for a comparison worker, and in what order: slots shared fairly between clients,
then between tasks.

A :class:`FairSlots` admits at most ``size`` holders at once, like a semaphore; when it is
full, waiters are served **round-robin by client, and within a client round-robin by task**,
first come first served within a task. The client is whoever the work is for (:data:`client`,
set by the server for the row it grades: the peer's address), so a client with many rows
waiting takes one turn in each round and cannot push another client's row to the back of a
long queue; the task is the row's ``problem_id``, so one client's costly rows of one task do
not hold up its rows of another (a training loop is one client, with many tasks). A client
that spreads its rows over many tasks still gets one turn per round. Rows with no client
(batch, ``grade()``) share one client. A lane may also cap how many slots one client's task
holds at once (``per_group``): the fast lane keeps a worker free for other tasks, so a burst
of one task's rows, each running its first pass, never has every fast worker.

One instance per event loop (it is not thread-safe); a waiter that is cancelled leaves the
queue, and a slot handed to a waiter that is gone is passed on.

    slots = FairSlots(2)
    async with slots.slot("10.0.0.7", "task-a"):
        ...  # at most two of these at once; waiters served by client, then by task
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

# Whom the row being graded in this context is for (the server sets it per request; the
# preflight a row starts inherits it). "" when nobody said.
client: ContextVar[str] = ContextVar("critpt_grader_client", default="")


class FairSlots:
    """At most ``size`` holders, and at most ``per_group`` of them for one client's task;
    waiters served round-robin by client, then by task (module docstring)."""

    def __init__(self, size: int, per_group: int | None = None) -> None:
        if size < 1:
            raise ValueError("FairSlots needs at least one slot")
        self.size = size
        self.per_group = per_group or size
        self._free = size
        self._holding: Counter[tuple[str, str]] = Counter()
        # client -> task -> its waiters; both levels in round-robin order (next one first)
        self._waiting: OrderedDict[str, OrderedDict[str, deque[asyncio.Future[None]]]] = (
            OrderedDict()
        )

    @property
    def waiting(self) -> int:
        return sum(len(queue) for tasks in self._waiting.values() for queue in tasks.values())

    @property
    def busy(self) -> int:
        return self.size - self._free

    async def acquire(self, who: str = "", task: str = "") -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        tasks = self._waiting.setdefault(who, OrderedDict())
        tasks.setdefault(task, deque()).append(future)
        self._dispatch()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(who, task)  # the slot came as this waiter left: pass it on
            else:
                self._forget(who, task, future)
            raise

    def release(self, who: str = "", task: str = "") -> None:
        """Give back a slot ``who`` held for ``task``; the next waiter in round-robin order
        that may hold one gets it."""
        self._holding[who, task] -= 1
        if self._holding[who, task] <= 0:
            del self._holding[who, task]
        self._free += 1
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free slots to waiters: clients in turn, a client's tasks in turn, skipping a
        task that holds ``per_group`` slots already; whoever is served goes to the back."""
        while self._free:
            found = self._next_waiter()
            if found is None:
                return
            who, task, future = found
            self._free -= 1
            self._holding[who, task] += 1
            future.set_result(None)

    def _next_waiter(self) -> tuple[str, str, asyncio.Future[None]] | None:
        for who, tasks in list(self._waiting.items()):
            for task, queue in list(tasks.items()):
                while queue and queue[0].done():  # cancelled before its turn
                    queue.popleft()
                if queue and self._holding[who, task] < self.per_group:
                    future = queue.popleft()
                    _to_the_back(tasks, task, queue)
                    _to_the_back(self._waiting, who, tasks)
                    return who, task, future
                if not queue:
                    del tasks[task]
            if not tasks:
                del self._waiting[who]
        return None

    def _forget(self, who: str, task: str, future: asyncio.Future[None]) -> None:
        tasks = self._waiting.get(who, OrderedDict())
        queue = tasks.get(task, deque())
        with contextlib.suppress(ValueError):
            queue.remove(future)
        if not queue:
            tasks.pop(task, None)
        if not tasks:
            self._waiting.pop(who, None)

    @contextlib.asynccontextmanager
    async def slot(self, who: str = "", task: str = "") -> AsyncIterator[None]:
        await self.acquire(who, task)
        try:
            yield
        finally:
            self.release(who, task)


def _to_the_back(order: OrderedDict, key: str, rest: Any) -> None:
    """``key`` had its turn: to the end of the round while ``rest`` waits, else out."""
    del order[key]
    if rest:
        order[key] = rest
