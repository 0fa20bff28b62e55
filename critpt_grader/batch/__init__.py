"""Batch grading: many ``/verify``-shaped rows, streamed, on this machine or a Ray cluster.

    from critpt_grader import grade_many
    async for out in grade_many(rows, tasks=["tasks.jsonl"], jobs=4):
        out["row"], out["category"], out["reward"]

``rows`` is an iterable (or async iterable) of ``/verify`` bodies (dicts, or their JSON text);
each result is the matching ``/verify`` response plus ``"row"``, the row's 0-based position,
and ``"input_hash"``, the SHA-256 of the row's canonical JSON
(:mod:`critpt_grader.batch.fingerprint`), yielded **in completion order**. Rows are read only
as grading slots free up, so memory holds the rows in flight, not the input. A row that cannot
be graded is still answered (:mod:`critpt_grader.batch.rows`).

**Where rows run.** Locally, one :class:`~critpt_grader.pipeline.Grader` runs up to ``jobs``
sandboxes at once (default: the ``max_concurrent_sandboxes`` setting, the CPU count) and keeps
each task's reference preflight cached. With ``ray=`` (``True`` or a cluster address) rows go
to Ray actors, one Grader each (:mod:`critpt_grader.batch.ray_pool`).

``critpt-grader batch IN.jsonl --out OUT.jsonl`` (:mod:`critpt_grader.commands.batch`) adds
resuming and a progress bar on top of :func:`grade_indexed`; resuming refuses an OUT file
written from another IN (:func:`critpt_grader.batch.outfile.resume`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Iterable
from pathlib import Path
from typing import Any, Protocol

from critpt_grader.batch.fingerprint import INPUT_HASH, input_hash
from critpt_grader.batch.rows import Ready, graded, grader_error, prepare
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.settings import Settings

__all__ = ["grade_indexed", "grade_many"]


class Engine(Protocol):
    """Grades prepared rows; ``window`` is how many rows it wants in flight."""

    window: int

    async def grade(self, ready: Ready) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class LocalEngine:
    """One Grader on this machine: ``jobs`` sandboxes at once, twice as many rows in flight
    (a row compares on the host while another's sandbox runs)."""

    def __init__(self, settings: Settings, jobs: int, backend: Any = None) -> None:
        from critpt_grader.pipeline import Grader

        self.grader = Grader(settings, backend)
        self.window = 2 * jobs

    async def grade(self, ready: Ready) -> dict[str, Any]:
        try:
            result = await self.grader.grade(ready.task, ready.row.response, ready.extraction)
        except Exception as exc:  # a grader bug shows on its row; the batch goes on
            return grader_error(ready.index, ready, f"{type(exc).__name__}: {exc}")
        return graded(ready.index, ready.body, result)

    async def aclose(self) -> None:
        await self.grader.aclose()


async def grade_many(
    rows: Iterable[Any] | AsyncIterable[Any],
    *,
    settings: Settings | None = None,
    tasks: TaskSets | Iterable[str | Path] = (),
    jobs: int | None = None,
    ray: bool | str | None = None,
    backend: Any = None,
) -> AsyncIterator[dict[str, Any]]:
    """Grade ``rows``; yield each OUT row as it finishes (see the module docstring).

    ``tasks``: task set paths (or a :class:`TaskSets`) for rows that carry only a
    ``problem_id``. ``ray``: ``True`` (a local Ray, or the one ``RAY_ADDRESS`` names) or a
    cluster address. ``backend``: a sandbox backend for the local Grader (tests)."""
    async for out in grade_indexed(
        _enumerate(rows), settings=settings, tasks=tasks, jobs=jobs, ray=ray, backend=backend
    ):
        yield out


async def grade_indexed(
    pairs: Iterable[tuple[int, Any]] | AsyncIterable[tuple[int, Any]],
    *,
    settings: Settings | None = None,
    tasks: TaskSets | Iterable[str | Path] = (),
    jobs: int | None = None,
    ray: bool | str | None = None,
    backend: Any = None,
    engine: Engine | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """:func:`grade_many` over ``(index, row)`` pairs: the index becomes the OUT ``"row"``.
    ``engine``: one the caller opened and closes (several batches share its warm sandboxes
    and preflight cache)."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    settings = settings or Settings()
    sets = tasks if isinstance(tasks, TaskSets) else TaskSets(tasks)
    owned = engine is None
    if engine is None and ray:
        from critpt_grader.batch.ray_pool import RayEngine

        engine = RayEngine(None if ray is True else str(ray), settings, workers=jobs)
    elif engine is None:
        if jobs is not None:
            settings = settings.model_copy(update={"max_concurrent_sandboxes": jobs})
        engine = LocalEngine(settings, settings.max_concurrent_sandboxes, backend)
    pending: set[asyncio.Task[dict[str, Any]]] = set()
    source = _aiter(pairs)
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < engine.window:
                try:
                    index, item = await anext(source)
                except StopAsyncIteration:
                    exhausted = True
                    break
                ready = prepare(index, item, sets, settings)
                if isinstance(ready, dict):
                    yield {**ready, INPUT_HASH: input_hash(item)}
                    continue
                # The intake's content hash is the row's input_hash: hashed once, not again.
                row_hash = ready.row.request_hash
                pending.add(asyncio.ensure_future(_stamped(engine.grade(ready), row_hash)))
            if not pending:
                return
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for finished in done:
                yield finished.result()
    finally:
        for running in pending:
            running.cancel()
        if pending:
            with contextlib.suppress(BaseException):
                await asyncio.gather(*pending, return_exceptions=True)
        if owned:
            await engine.aclose()


async def _stamped(grading: Awaitable[dict[str, Any]], row_hash: str) -> dict[str, Any]:
    """The OUT row ``grading`` gives, with its IN row's ``input_hash`` (over any echoed key)."""
    return {**await grading, INPUT_HASH: row_hash}


async def _enumerate(rows: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[tuple[int, Any]]:
    index = 0
    async for row in _aiter(rows):
        yield index, row
        index += 1


async def _aiter(items: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[Any]:
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item
