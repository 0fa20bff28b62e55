"""``grade(task, response)``: the pipeline from a model response to a verdict.

    response ─► extract ─► reference preflight ─► candidate run ─► decode ─► compare ─► verdict
                 code       sandbox A, checks       sandbox B       codec     per leaf   GradeResult
                            stored expectations     (only if A ok)

The candidate's sandbox gets only the candidate source and the test inputs: never the
reference, the expectations or the task file. Preflights are cached per task, so a batch
of responses to one task runs its reference once. The rules that judge a run live in
:mod:`critpt_grader.judge`; this module runs the steps in order and owns the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from typing import Any

from critpt_grader.errors import GraderClosed, GraderError
from critpt_grader.extract import Extraction, extract
from critpt_grader.judge.case import RUN_FAULTS
from critpt_grader.judge.reference import Preflight, transient
from critpt_grader.judge.row import RowJudge
from critpt_grader.result import GradeResult
from critpt_grader.sandbox import make_backend
from critpt_grader.sandbox.base import Job, SandboxBackend
from critpt_grader.settings import Settings
from critpt_grader.tasks import Task, load_task
from critpt_grader.verdict import Category

_STREAM_EXCERPT = 4096


class Grader:
    """Grades responses with one backend and a bounded preflight cache.

    Use it as an async context manager so the backend's sandboxes are released::

        async with Grader(settings) as grader:
            results = await asyncio.gather(*(grader.grade(task, r) for r in responses))

    **Concurrency.** Any number of ``grade()`` calls may run at once on one event loop. Each
    task's reference preflight runs once, as a task the Grader owns: every concurrent grade
    of that task awaits it through :func:`asyncio.shield`, so cancelling one caller (a client
    that went away) cancels only that caller's row, never the preflight the others wait on.

    **Loop affinity.** A Grader belongs to the event loop it is first used on (its backend,
    comparison workers and preflight tasks live there). Using it from a second loop raises
    :class:`RuntimeError` at once; give each loop (each thread) its own Grader. It is not
    thread-safe.

    **Cache.** Completed preflights are kept in an LRU of ``settings.preflight_cache_size``
    tasks. A preflight that failed for want of a sandbox or by running out of time (which a
    loaded machine causes as easily as a broken task) is retried once at once and never
    cached, so a later row of the task runs it again.

    **Lifecycle.** ``aclose()`` cancels running preflights and releases the backend (when the
    Grader made it) and the comparison workers; ``grade()`` afterwards raises
    :class:`~critpt_grader.errors.GraderClosed`, never a retryable ``provider_unavailable``.
    """

    def __init__(
        self, settings: Settings | None = None, backend: SandboxBackend | None = None
    ) -> None:
        self.settings = settings or Settings()
        self._own_backend = backend is None
        self.backend = backend or make_backend(self.settings.backend, self.settings)
        # Comparisons run in killable workers under the row budget (judge/row.py).
        self.judging = RowJudge(self.settings)
        self._preflights: OrderedDict[str, asyncio.Task[Preflight]] = OrderedDict()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    async def __aenter__(self) -> Grader:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        for running in list(self._preflights.values()):
            running.cancel()
        self._preflights.clear()
        await self.judging.aclose()
        if self._own_backend:
            await self.backend.aclose()

    async def grade(
        self, task: Any, response: Any, extraction: Extraction | None = None
    ) -> GradeResult:
        """Grade one response to one task (a row dict, a challenge holding one problem, or a
        :class:`~critpt_grader.tasks.Task`). ``extraction``: the code already taken out of
        ``response`` (:func:`~critpt_grader.rows.intake.prepare_row` does it once per row),
        else it is extracted here. Raises :class:`GraderClosed` after ``aclose()`` and
        :class:`RuntimeError` on a second event loop; every other problem is a result.

        ``timings["total"]`` is the grader's span of the row: from this call to its verdict
        (a server's wait for a grading slot is apart, ``queue``)."""
        self._check_loop()
        started = time.perf_counter()
        self.judging.start()  # a comparison worker warms up while the sandboxes run
        try:
            task = load_task(task)
        except GraderError as exc:
            return GradeResult.of(Category.TASK_INVALID, reason=str(exc))
        if extraction is None:
            extraction = extract(
                response,
                max_bytes=self.settings.source_bytes,
                entrypoint=task.entrypoint,
                fence=self.settings.fence,
            )
        result = await self._grade(task, extraction)
        timings = {**result.timings, "total": time.perf_counter() - started}
        return result.model_copy(update={"timings": timings})

    async def _grade(self, task: Task, extraction: Extraction) -> GradeResult:
        pid = task.problem_id
        if extraction.status == "incomplete":
            return GradeResult.of(
                Category.RESPONSE_INCOMPLETE, problem_id=pid, reason=extraction.reason
            )
        if task.unresolved_inputs:
            names = ", ".join(task.unresolved_inputs)
            return GradeResult.of(
                Category.TASK_INVALID,
                problem_id=pid,
                reason=f"no value for the template's inputs: {names}",
            )
        # On a task's first row the candidate's sandbox starts while the reference runs (it
        # only runs the candidate after the preflight passed; unused, aclose takes it down).
        code = extraction.status == "code"
        candidate = self._job(task, extraction.source, "candidate") if code else None
        preflight, cached = await self._preflight(task, candidate)
        if preflight.category is not None:
            return GradeResult.of(
                preflight.category,
                problem_id=pid,
                reason=preflight.reason,
                cases=preflight.cases,
                preflight="failed",
                containment=preflight.containment,
            )
        common = {"problem_id": pid, "preflight": "cached" if cached else "passed"}
        if extraction.status != "code":
            category = (
                Category.CANDIDATE_SOURCE_ERROR
                if extraction.status == "too_large"
                else Category.CANDIDATE_SOURCE_MISSING
            )
            return GradeResult.of(category, reason=extraction.reason, **common)

        assert candidate is not None
        started = time.perf_counter()
        run = await self.backend.run(candidate)
        timings = {**run.timings, "candidate_run": time.perf_counter() - started}
        if not cached:
            timings["preflight"] = preflight.seconds
        common.update(
            containment=run.containment,
            stdout=run.stdout[:_STREAM_EXCERPT],
            stderr=run.stderr[:_STREAM_EXCERPT],
        )
        if run.status == "unavailable":
            return GradeResult.of(
                Category.PROVIDER_UNAVAILABLE, reason=run.detail, timings=timings, **common
            )
        if run.status != "ok":
            return GradeResult.of(
                RUN_FAULTS[run.status], reason=run.detail or run.status, timings=timings, **common
            )
        if len(run.cases) != len(task.cases):
            return GradeResult.of(
                Category.CANDIDATE_INVALID_OUTPUT,
                timings=timings,
                reason="the run returned a different number of cases",
                **common,
            )

        started = time.perf_counter()
        category, reason, reports = await self.judging.judge(task, preflight, run)
        timings["compare"] = time.perf_counter() - started
        return GradeResult.of(category, reason=reason, cases=reports, timings=timings, **common)

    def _check_loop(self) -> None:
        if self._closed:
            raise GraderClosed("this Grader is closed (aclose() was called); open a new one")
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            raise RuntimeError(
                "this Grader belongs to the event loop it was first used on; "
                "create one Grader per event loop (per thread)"
            )

    # -- reference preflight ------------------------------------------------------------

    async def _preflight(self, task: Task, ahead: Job | None = None) -> tuple[Preflight, bool]:
        """The task's preflight, and whether it was cached. ``ahead``: the candidate job that
        follows a preflight that passes; when the preflight must run, the backend is told to
        start that job's sandbox meanwhile."""
        key = task.derived("preflight_key", _preflight_key)
        running = self._preflights.get(key)
        cached = running is not None
        if running is None:
            running = asyncio.get_running_loop().create_task(self._owned_preflight(task, key))
            running.add_done_callback(_retrieve)
            self._preflights[key] = running
            self._evict()
            # A backend given by the caller may only have run(): the hint is optional.
            prepare = getattr(self.backend, "prepare", None)
            if ahead is not None and prepare is not None:
                prepare(ahead)
        else:
            self._preflights.move_to_end(key)
        # Shielded: cancelling this caller leaves the preflight running for the others.
        return await asyncio.shield(running), cached

    async def _owned_preflight(self, task: Task, key: str) -> Preflight:
        """The preflight task the Grader owns; drops itself from the cache when its verdict
        is not a fact about the task."""
        try:
            preflight = await self._run_preflight(task)
            if preflight.transient:
                preflight = await self._run_preflight(task)  # once more, at once
        except BaseException:
            self._forget(key)
            raise
        if preflight.transient:
            self._forget(key)
        return preflight

    def _forget(self, key: str) -> None:
        if self._preflights.get(key) is asyncio.current_task():
            del self._preflights[key]

    def _evict(self) -> None:
        """Drop the least recently used finished preflights past the cache size (a running
        one stays: its waiters hold it)."""
        excess = len(self._preflights) - self.settings.preflight_cache_size
        for key in [k for k, t in self._preflights.items() if t.done()][: max(excess, 0)]:
            del self._preflights[key]

    async def _run_preflight(self, task: Task) -> Preflight:
        started = time.perf_counter()
        run = await self.backend.run(self._job(task, task.reference_source, "reference"))
        preflight = await self.judging.check_reference(task, run)
        preflight.containment = run.containment
        preflight.seconds = time.perf_counter() - started
        preflight.transient = transient(preflight, run)
        return preflight

    def _job(self, task: Task, source: str, role: str) -> Job:
        reference = role == "reference"
        cases, cases_json = task.derived("wire", task_wire)
        return Job(
            source=source,
            entrypoint=task.reference_entrypoint if reference else task.entrypoint,
            cases=cases,
            cases_json=cases_json,
            limits=self.settings.limits(),
            setup_source=task.setup_source,
            input_conversions=task.input_conversions,
            role=role,  # type: ignore[arg-type]
            # CritPt asks for ``answer``; a candidate that renamed its only function still runs.
            entrypoint_fallback=task.origin == "critpt" and not reference,
            # The first timeout or out-of-memory case decides a candidate's row: stop there.
            stop_on_fault=not reference,
        )


def _retrieve(task: asyncio.Task) -> None:
    # A preflight whose callers were all cancelled still ends: read its exception so asyncio
    # does not report it as never retrieved.
    if not task.cancelled():
        task.exception()


def task_wire(task: Task) -> tuple[tuple[dict[str, Any], ...], str]:
    """The task's cases as every job of it carries them to a sandbox, and their JSON text
    (compact ASCII, as the runner protocol frames a job): built once per task."""
    cases = tuple(case.job_inputs() for case in task.cases)
    return cases, json.dumps(list(cases), separators=(",", ":"), ensure_ascii=True)


def _preflight_key(task: Task) -> str:
    material = {
        "source": task.reference_source,
        "entry": task.reference_entrypoint,
        "setup": task.setup_source,
        "conversions": task.input_conversions,
        "cases": [
            [
                c.job_inputs(),
                c.expected and [c.expected.kind, c.expected.value, c.expected.error_type],
            ]
            for c in task.cases
        ],
        "policy": [
            task.problem,
            task.output_doc,
            task.rtol,
            task.atol,
            [[t.path, t.rtol, t.atol] for t in task.tolerances],
            [[[t.path, t.rtol, t.atol] for t in c.tolerances] for c in task.cases],
        ],
    }
    text = json.dumps(material, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


async def agrade(
    task: Any,
    response: Any,
    *,
    settings: Settings | None = None,
    backend: SandboxBackend | None = None,
) -> GradeResult:
    """Grade one response. For many, keep one :class:`Grader` open instead."""
    async with Grader(settings, backend) as grader:
        return await grader.grade(task, response)


def grade(
    task: Any,
    response: Any,
    *,
    settings: Settings | None = None,
    backend: SandboxBackend | None = None,
) -> GradeResult:
    """Synchronous :func:`agrade`. Inside a running event loop, await ``agrade`` instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(agrade(task, response, settings=settings, backend=backend))
    raise RuntimeError("grade() was called inside an event loop; await agrade() instead")
