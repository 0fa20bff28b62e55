"""Batch rows on a Ray cluster: one actor per worker slot, each with its own Grader.

**Workers.** ``workers`` Ray actors (default: the cluster's CPU count), one CPU each. Every
actor keeps one :class:`~critpt_grader.pipeline.Grader` for its lifetime: its warm local
sandboxes and its preflight cache. Each node needs this package (same version) installed in
the interpreter Ray runs workers with, and bubblewrap, as for a local run.

**Affinity.** A row goes to the actor its task hashes to (problem id and reference source),
so a task's reference runs once per actor that sees it; when that actor already has its
window of rows in flight, the least loaded actor takes the row instead.

**Faults.** Actors restart when their process dies (``max_restarts=-1``), and an actor call
runs at most once (``max_task_retries=0``): a row whose actor died mid-row fails here with a
Ray actor error, and the driver sends it to another actor, up to :data:`ATTEMPTS` times
(after that its OUT row is a retryable ``provider_unavailable``). A row's OUT row is built
from the one attempt that returned, so a row is never lost and never answered twice (an
attempt that finished on an actor that died before replying is simply graded again).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import zlib
from typing import Any

from critpt_grader.batch.rows import Ready, graded
from critpt_grader.result import GradeResult
from critpt_grader.settings import Settings
from critpt_grader.verdict import Category

ATTEMPTS = 3
ROWS_PER_WORKER = 2  # in flight per actor: one compares on the host while one runs


class GradeWorker:
    """The actor: one Grader on its own event loop (Ray's async actor loop)."""

    def __init__(self, settings: Settings) -> None:
        from critpt_grader.batch import LocalEngine

        self.engine = LocalEngine(settings, settings.max_concurrent_sandboxes)

    async def pid(self) -> int:
        return os.getpid()

    async def grade(self, ready: Ready) -> dict[str, Any]:
        return await self.engine.grade(ready)

    async def close(self) -> None:
        await self.engine.aclose()


class RayEngine:
    """The driver's side: routes rows to actors, retries rows whose actor died."""

    def __init__(
        self, address: str | None, settings: Settings, *, workers: int | None = None
    ) -> None:
        import ray

        self.ray = ray
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            ray.init(address=address, logging_level="warning", configure_logging=True)
        count = workers or max(int(ray.cluster_resources().get("CPU", 1)), 1)
        worker_settings = settings.model_copy(
            update={"max_concurrent_sandboxes": 1, "compare_workers": 1}
        )
        actor = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(GradeWorker)
        self.actors = [
            actor.options(max_concurrency=4 * ROWS_PER_WORKER).remote(worker_settings)
            for _ in range(count)
        ]
        self.in_flight = [0] * count
        self.window = count * ROWS_PER_WORKER
        self.retried = 0  # rows sent again after their actor died

    def _route(self, ready: Ready, avoid: set[int]) -> int:
        key = f"{ready.task.problem_id}\0{ready.task.reference_source}".encode()
        preferred = zlib.crc32(key) % len(self.actors)
        if preferred not in avoid and self.in_flight[preferred] < ROWS_PER_WORKER:
            return preferred
        candidates = [i for i in range(len(self.actors)) if i not in avoid] or list(
            range(len(self.actors))
        )
        return min(
            candidates, key=lambda i: (self.in_flight[i], (i - preferred) % len(self.actors))
        )

    async def grade(self, ready: Ready) -> dict[str, Any]:
        errors = self.ray.exceptions
        lost = (errors.RayActorError, errors.ActorUnavailableError, errors.WorkerCrashedError)
        avoid: set[int] = set()
        last = ""
        for attempt in range(ATTEMPTS):
            index = self._route(ready, avoid)
            self.in_flight[index] += 1
            try:
                return await self.actors[index].grade.remote(ready)
            except lost as exc:
                avoid.add(index)
                self.retried += 1
                last = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
                await asyncio.sleep(0.2 * attempt)
            finally:
                self.in_flight[index] -= 1
        result = GradeResult.of(
            Category.PROVIDER_UNAVAILABLE,
            problem_id=ready.task.problem_id,
            reason=f"the Ray worker grading this row died {ATTEMPTS} times ({last}); retry",
        )
        return graded(ready.index, ready.body, result)

    async def pids(self) -> list[int]:
        return list(await asyncio.gather(*(a.pid.remote() for a in self.actors)))

    async def aclose(self) -> None:
        closing = [actor.close.remote() for actor in self.actors]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), 60)
        for actor in self.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(actor, no_restart=True)
        if self._owns_ray:
            self.ray.shutdown()
