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
(batch, ``grade()``) share one client.

One instance per event loop (it is not thread-safe); a waiter that is cancelled leaves the
queue, and a slot handed to a waiter that is gone is passed on.

    slots = FairSlots(2)
    async with slots.slot("10.0.0.7", "task-a"):
        ...  # at most two of these at once; waiters served by client, then by task
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

# Whom the row being graded in this context is for (the server sets it per request; the
# preflight a row starts inherits it). "" when nobody said.
client: ContextVar[str] = ContextVar("critpt_grader_client", default="")


class FairSlots:
    """At most ``size`` holders; waiters served round-robin by client, then by task (module
    docstring)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("FairSlots needs at least one slot")
        self.size = size
        self._free = size
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
        if self._free and not self._waiting:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        tasks = self._waiting.setdefault(who, OrderedDict())
        tasks.setdefault(task, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot came as this waiter left: pass it on
            else:
                self._forget(who, task, future)
            raise

    def release(self) -> None:
        """Hand the slot to the next waiter in round-robin order, or free it."""
        while self._waiting:
            who, tasks = next(iter(self._waiting.items()))
            task, queue = next(iter(tasks.items()))
            future = queue.popleft()
            _to_the_back(tasks, task, queue)
            _to_the_back(self._waiting, who, tasks)
            if not future.done():
                future.set_result(None)
                return
        self._free += 1

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
            self.release()


def _to_the_back(order: OrderedDict, key: str, rest: Any) -> None:
    """``key`` had its turn: to the end of the round while ``rest`` waits, else out."""
    del order[key]
    if rest:
        order[key] = rest
