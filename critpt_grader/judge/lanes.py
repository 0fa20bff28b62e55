"""Who waits for a comparison worker, and in what order: slots shared fairly between clients.

A :class:`FairSlots` admits at most ``size`` holders at once, like a semaphore; when it is
full, waiters are served **round-robin by key**, first come first served within a key. A key
is whoever the work is for: the client of the server (:data:`client`, set by the server for
the row it grades), so a client with many rows waiting takes one turn in each round and
cannot push another client's row to the back of a long queue. Rows with no client (batch,
``grade()``) share one key and keep their order.

One instance per event loop (it is not thread-safe); a waiter that is cancelled leaves the
queue, and a slot handed to a waiter that is gone is passed on.

    slots = FairSlots(2)
    async with slots.slot("client-a"):
        ...  # at most two of these at once; waiters served a, b, a, b, ...
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextvars import ContextVar

# Whom the row being graded in this context is for (the server sets it per request; the
# preflight a row starts inherits it). "" when nobody said.
client: ContextVar[str] = ContextVar("critpt_grader_client", default="")


class FairSlots:
    """At most ``size`` holders; waiters served round-robin by key (module docstring)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("FairSlots needs at least one slot")
        self.size = size
        self._free = size
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @property
    def waiting(self) -> int:
        return sum(len(queue) for queue in self._waiting.values())

    @property
    def busy(self) -> int:
        return self.size - self._free

    async def acquire(self, key: str = "") -> None:
        if self._free and not self._waiting:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot came as this waiter left: pass it on
            else:
                self._forget(key, future)
            raise

    def release(self) -> None:
        """Hand the slot to the next waiter in round-robin order, or free it."""
        while self._waiting:
            key, queue = next(iter(self._waiting.items()))
            future = queue.popleft()
            del self._waiting[key]
            if queue:
                self._waiting[key] = queue  # its next waiter goes to the back of the round
            if not future.done():
                future.set_result(None)
                return
        self._free += 1

    def _forget(self, key: str, future: asyncio.Future[None]) -> None:
        queue = self._waiting.get(key)
        if queue is None:
            return
        with contextlib.suppress(ValueError):
            queue.remove(future)
        if not queue:
            del self._waiting[key]

    @contextlib.asynccontextmanager
    async def slot(self, key: str = "") -> AsyncIterator[None]:
        await self.acquire(key)
        try:
            yield
        finally:
            self.release()
