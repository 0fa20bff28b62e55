"""One ``/verify`` row from request to verdict: the server's logic, apart from HTTP.

    body ─► intake ────────────────────► admit ─► journal ─► wait for slot ─► grade ─► echo
            task (in the row or by          queue    before     bounded          Grader, with
            problem_id), extract once,      full →   any        concurrency      the intake's
            request key (rows/intake.py)    retry    sandbox                     extraction

**Where the task comes from.** In the row when it holds ``task_data`` or ``verifier_metadata``
(only those and ``responses_create_params`` are read; other keys are echoed) or task fields at
the top level (then the whole row is the task, strictly). Otherwise by its ``problem_id`` in the
task sets loaded at start, as the stock CritPt data rows carry it. A malformed task is refused
(422) naming the field; an unknown ``problem_id`` (404) naming it. Nothing is journaled for a
refused request: it was never accepted.

**Admission.** At most ``server_max_in_flight`` rows grade at once and ``server_max_queue``
wait; a row past both is answered at once with a retryable ``provider_unavailable`` row, and
a row that waited ``server_queue_seconds`` for a slot likewise: never a hang.

**Cancellation.** :meth:`VerifyService.verify` may be cancelled (a client that went away): the
row is marked ``cancelled`` in the journal, and only that row stops; other rows of the same task
keep waiting on the shared preflight (the :class:`~critpt_grader.pipeline.Grader` shields it).

**Idempotent, and a key names one request.** Every request has a key: the client's
``Idempotency-Key`` header exactly as sent, else ``sha256:`` and the SHA-256 of its canonical
body (:func:`~critpt_grader.rows.canonical.content_hash`: the same JSON whatever its white
space or key order); and a body hash, kept beside the key (in the journal, or for the
server's life without one). The same key with the same body: a copy being graded in this
process waits for that verdict; with a journal, a graded one gets its verdict back without
grading, and one an earlier, dead process left unfinished takes that row back (same row id)
instead of writing another. **The same key with another body** is refused (422
``idempotency_key_reused``, naming the key and where its first request stands: ``in_flight``,
``graded``, ``unfinished`` or ``from_before_restart``), before anything is graded or
journaled: a key is never a way to another request's verdict. ``GET /verdict/{key}`` reads
the journaled verdict by the key as the client sent it. The key is in every response
(``critpt_grader.request_key``).

One service per event loop; its coroutines run concurrently on that loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from critpt_grader.extract import Extraction
from critpt_grader.judge import lanes
from critpt_grader.pipeline import Grader
from critpt_grader.result import GradeResult
from critpt_grader.rows.intake import PreparedRow, prepare_row
from critpt_grader.rows.rejected import RowRejected
from critpt_grader.rows.resolve import as_response, echo, resolve_task
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.sandbox.base import SandboxBackend
from critpt_grader.server.journal import Journal, KeyedRow
from critpt_grader.server.metrics import LiveMetrics
from critpt_grader.server.owner import alive
from critpt_grader.server.reveal import client_reason, for_client
from critpt_grader.settings import Settings
from critpt_grader.tasks import Task
from critpt_grader.verdict import Category

log = logging.getLogger("critpt_grader.server")


# Keys remembered with their body hash when there is no journal (least recent out).
_SEEN_KEYS = 65_536


def key_reused(key: str, first: str) -> RowRejected:
    """The 422 for a key that already names another request."""
    where = {
        "in_flight": "is being graded now",
        "graded": "has been graded",
        "unfinished": "was accepted and has no lasting verdict (cancelled, failed or retried)",
        "from_before_restart": "was accepted by an earlier run of the server and has no "
        "verdict yet",
    }[first]
    return RowRejected(
        422,
        "idempotency_key_reused",
        f"the Idempotency-Key {key!r} names another request, with a different body, which "
        f"{where}; a key names one request: send a new key for a new request",
        field="Idempotency-Key",
        request_key=key,
        first_request=first,
    )


def _with_key(out: dict[str, Any], key: str) -> dict[str, Any]:
    out["critpt_grader"] = {**out["critpt_grader"], "request_key": key}
    return out


# What a row came to: its verdict and its journal row id (None without a journal).
Graded = tuple[GradeResult, str | None]


class Busy(Exception):
    """No grading slot: the queue is full, or the wait for a slot was too long."""


class VerifyService:
    """The server's state: one :class:`Grader`, the task sets, the journal, the counters and
    the admission bounds. ``await start()`` on the serving loop before the first row,
    ``await aclose()`` after the last."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        tasks: TaskSets | None = None,
        journal_dir: str | Path | None = None,
        backend: SandboxBackend | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.tasks = tasks or TaskSets()
        self.journal = Journal(journal_dir) if journal_dir is not None else None
        if self.journal is not None:
            self.journal.set_task_paths(self.tasks.paths)
        self.metrics = LiveMetrics()
        self._backend = backend
        self.grader: Grader | None = None
        self._slots: asyncio.Semaphore | None = None
        # key -> (its body hash, its verdict and row id): the requests being graded here
        self._grading: dict[str, tuple[str, asyncio.Future[Graded]]] = {}
        # key -> body hash of the keys graded here, when no journal keeps them
        self._seen: OrderedDict[str, str] = OrderedDict()
        self._orphans: asyncio.Future[None] | None = None  # re-grading a dead run's rows

    async def start(self) -> None:
        self.grader = Grader(self.settings, self._backend)
        self._slots = asyncio.Semaphore(self.settings.server_max_in_flight)
        if self.journal is not None:
            orphans = self.journal.pending()
            if orphans and self.settings.server_regrade_orphans:
                log.warning(
                    "journal %s: re-grading %d rows an earlier run left unfinished",
                    self.journal.path,
                    len(orphans),
                )
                self._orphans = asyncio.ensure_future(self._regrade_orphans(orphans))
            elif orphans:
                log.warning(
                    "journal %s: %d rows from an earlier run need re-verification "
                    "(critpt-grader reverify %s)",
                    self.journal.path,
                    len(orphans),
                    self.journal.path.parent,
                )

    async def _regrade_orphans(self, orphans: list) -> None:
        """Re-grade a dead server's unfinished rows, each claimed first, each taking a
        grading slot like any row (new rows are not starved)."""
        assert self.journal is not None
        for row in orphans:
            if not self.journal.claim(row):
                continue  # a reverify took it
            if row.task_row is not None:
                try:
                    task = resolve_task(row.task_row, self.tasks)[0]
                except RowRejected:
                    task = None
            else:
                task = self.tasks.get(row.task_key or "")
            if task is None:
                self.journal.mark(row.id, "error")
                continue
            answer = as_response(row.source) if row.source is not None else row.response
            result = await self._grade_admitted(task, answer)
            self.journal.finish(row.id, result.category.value, result.model_dump(mode="json"))

    async def aclose(self) -> None:
        if self._orphans is not None:
            self._orphans.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._orphans
        if self.grader is not None:
            await self.grader.aclose()
        if self.journal is not None:
            self.journal.close()

    # -- one row ----------------------------------------------------------------------

    def prepare(
        self, body: bytes | str | dict[str, Any], key: str | None = None, client: str = ""
    ) -> PreparedRow:
        """The row through the one intake (:func:`~critpt_grader.rows.intake.prepare_row`);
        raises :class:`RowRejected`. ``key``: the client's idempotency key, if it gave one;
        ``client``: who sent the row (comparison workers are shared round-robin between
        clients, :mod:`critpt_grader.judge.lanes`)."""
        return prepare_row(body, self.tasks, self.settings, key=key, client=client)

    async def verify(self, row: PreparedRow) -> dict[str, Any]:
        """Grade one prepared row, once per request key; the response body. Cancellable.
        Raises :class:`RowRejected` (422) when the key already names another request."""
        lanes.client.set(row.client)  # this row's context (its task), and what it starts
        key = row.request_key
        running = self._grading.get(key)
        if running is not None:  # the same key, being graded now
            first_hash, future = running
            if first_hash != row.request_hash:
                raise key_reused(key, "in_flight")
            try:
                result, row_id = await asyncio.shield(future)
            except Exception:  # that attempt was cancelled or failed: grade this one
                return await self.verify(row)
            return _with_key(self._echo(row.body, result, row_id), key)
        found = self.journal.by_key(key) if self.journal is not None else None
        if found is not None and found.request_hash != row.request_hash:
            # (a row journaled before bodies were bound has no hash: never matched either)
            raise key_reused(key, self._first_state(found))
        if self._seen.get(key, row.request_hash) != row.request_hash:
            raise key_reused(key, "graded")
        if found is not None and found.lasting and found.verdict is not None:
            result = GradeResult.model_validate(found.verdict)
            return _with_key(self._echo(row.body, result, found.id), key)
        reopened = None
        if found is not None and not found.lasting:
            # Its own row (cancelled, failed, provider_unavailable) or one a dead process left
            # unfinished: graded again under the same row id, never a second row.
            mine_or_orphan = found.owner == self.journal.owner or not alive(found.owner)
            if mine_or_orphan and self.journal.reopen(found.id, found.owner):
                reopened = found.id
        future: asyncio.Future[Graded] = asyncio.get_running_loop().create_future()
        self._grading[key] = (row.request_hash, future)
        try:
            graded = await self._verify(row, reopened)
        except BaseException as exc:
            future.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
            future.exception()  # retrieved: a waiter that is gone does not warn
            raise
        finally:
            self._grading.pop(key, None)
            if self.journal is None:
                self._remember(key, row.request_hash)
        future.set_result(graded)
        return _with_key(self._echo(row.body, *graded), key)

    def _remember(self, key: str, digest: str) -> None:
        self._seen[key] = digest
        self._seen.move_to_end(key)
        while len(self._seen) > _SEEN_KEYS:
            self._seen.popitem(last=False)

    def _first_state(self, found: KeyedRow) -> str:
        """Where the request that first used a key stands (for the 422)."""
        assert self.journal is not None
        if found.lasting:
            return "graded"
        if found.owner == self.journal.owner:
            return "in_flight" if found.state == "accepted" else "unfinished"
        if alive(found.owner):
            return "in_flight" if found.state == "accepted" else "unfinished"
        return "from_before_restart"

    async def _verify(self, row: PreparedRow, reopened: str | None) -> Graded:
        """The row's verdict and journal row id. The latency on ``/metrics`` is this span
        (slot wait included); the result's ``timings["total"]`` stays the grader's own."""
        started = time.perf_counter()
        settings = self.settings
        pid = row.task.problem_id
        if self.metrics.queued + self.metrics.in_flight >= (
            settings.server_max_in_flight + settings.server_max_queue
        ):
            self.metrics.refused += 1
            reason = (
                f"server busy: {self.metrics.in_flight} rows grading and "
                f"{self.metrics.queued} waiting; retry"
            )
            result = GradeResult.of(Category.PROVIDER_UNAVAILABLE, problem_id=pid, reason=reason)
            return result, None

        code = row.extraction.status == "code"
        row_id = reopened
        if self.journal is not None and row_id is None:
            row_id = self.journal.accept(
                problem_id=pid,
                task_row=row.task_row,
                task_key=row.task_key,
                source=row.extraction.source if code else None,
                response=None if code else row.response,
                request_key=row.request_key or None,
                request_hash=row.request_hash or None,
            )
        try:
            if row.extraction.status == "incomplete":
                # No sandbox will run (the grader answers response_incomplete at once), so
                # the row takes no grading slot and is never refused as busy.
                assert self.grader is not None, "start() first"
                result = await self.grader.grade(row.task, row.response, row.extraction)
            else:
                result = await self._grade_admitted(row.task, row.response, row.extraction)
        except asyncio.CancelledError:
            self.metrics.cancelled += 1
            if row_id is not None:
                self.journal.mark(row_id, "cancelled")
            raise
        except Exception:
            self.metrics.errors += 1
            if row_id is not None:
                self.journal.mark(row_id, "error")
            raise
        if row_id is not None:
            self.journal.finish(row_id, result.category.value, result.model_dump(mode="json"))
        self.metrics.graded(result.category.value, time.perf_counter() - started)
        return result, row_id

    def _echo(self, body: dict[str, Any], result: GradeResult, row_id: str | None) -> dict:
        """The response a client gets: the row echoed with the view of the verdict that
        ``server_reveal`` allows (:mod:`critpt_grader.server.reveal`). The echo shows the
        verdict's reason and never its cases, so only the reason of the view is built."""
        reveal = self.settings.server_reveal
        if reveal != "full":
            result = result.model_copy(update={"reason": client_reason(result, reveal)})
        return echo(body, result, row_id)

    def stored_verdict(self, key: str) -> dict[str, Any] | None:
        """What the journal holds for a request key (``GET /verdict/{key}``), or None; the
        verdict in the view ``server_reveal`` allows."""
        if self.journal is None:
            return None
        found = self.journal.by_key(key)
        if found is None:
            return None
        result = None
        if found.verdict:
            full = GradeResult.model_validate(found.verdict)
            result = for_client(full, self.settings.server_reveal).model_dump(mode="json")
        return {
            "request_key": key,
            "row_id": found.id,
            "state": found.state,
            "category": found.category,
            "result": result,
        }

    async def _grade_admitted(
        self, task: Task, response: Any, extraction: Extraction | None = None
    ) -> GradeResult:
        assert self.grader is not None and self._slots is not None, "start() first"
        waited = time.perf_counter()
        try:
            await self._acquire()
        except Busy as exc:
            return GradeResult.of(
                Category.PROVIDER_UNAVAILABLE, problem_id=task.problem_id, reason=str(exc)
            )
        queue = time.perf_counter() - waited
        self.metrics.in_flight += 1
        try:
            result = await self.grader.grade(task, response, extraction)
            return result.model_copy(update={"timings": {**result.timings, "queue": queue}})
        finally:
            self.metrics.in_flight -= 1
            self._slots.release()

    async def _acquire(self) -> None:
        self.metrics.queued += 1
        try:
            async with asyncio.timeout(self.settings.server_queue_seconds):
                await self._slots.acquire()
        except TimeoutError:
            raise Busy(
                f"waited {self.settings.server_queue_seconds:g} s for a grading slot; retry"
            ) from None
        finally:
            self.metrics.queued -= 1

    # -- re-verification --------------------------------------------------------------

    async def regrade(self, task: Task, source: str | None, response: Any) -> GradeResult:
        """Grade a journaled row again from its saved source (no model call)."""
        assert self.grader is not None, "start() first"
        answer = as_response(source) if source is not None else response
        return await self.grader.grade(task, answer)
