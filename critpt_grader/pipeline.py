"""``grade(task, response)``: the pipeline from a model response to a verdict.

    response ─► extract ─► reference preflight ─► candidate run ─► decode ─► compare ─► verdict
                 code       sandbox A, checks       sandbox B       codec     per leaf   GradeResult
                            stored expectations     (only if A ok)

The candidate's sandbox gets only the candidate source and the test inputs: never the
reference, the expectations or the task file. Preflights are cached per task, so a batch
of responses to one task runs its reference once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from critpt_grader import codec, raised
from critpt_grader.compare import CaseVerdict, Policy, compare_expectation, compare_values
from critpt_grader.errors import CodecError, GraderClosed, GraderError
from critpt_grader.extract import extract
from critpt_grader.result import CaseReport, GradeResult, LeafReport
from critpt_grader.row_judge import RowJudge
from critpt_grader.sandbox import make_backend
from critpt_grader.sandbox.base import CaseOutcome, Job, RunOutcome, SandboxBackend
from critpt_grader.settings import Settings
from critpt_grader.tasks import Expectation, LeafTolerance, Task, load_task
from critpt_grader.verdict import Category

# What a candidate's case outcome means when a value was due.
_CASE_FAULTS = {
    "exception": Category.CANDIDATE_EXCEPTION,
    "timeout": Category.CANDIDATE_TIMEOUT,
    "memory": Category.CANDIDATE_MEMORY,
    # An unencodable value is not an answer of any declared type: a candidate fault,
    # scored 0, rather than "uncertain" (which would let odd return types dodge a score).
    "encode_error": Category.CANDIDATE_INVALID_OUTPUT,
    "crashed": Category.CANDIDATE_INVALID_OUTPUT,
    # The run stopped at an earlier decisive case (a timeout, out of memory), which decides
    # the row; a case left unrun is never a pass.
    "not_run": Category.CANDIDATE_INVALID_OUTPUT,
}
# What a candidate run that did not finish means.
_RUN_FAULTS = {
    "source_error": Category.CANDIDATE_SOURCE_ERROR,
    "timeout": Category.CANDIDATE_TIMEOUT,
    "memory": Category.CANDIDATE_MEMORY,
    "output_limit": Category.CANDIDATE_INVALID_OUTPUT,
    "no_result": Category.CANDIDATE_INVALID_OUTPUT,
}
_STREAM_EXCERPT = 4096


@dataclass(slots=True)
class Preflight:
    """The reference's verdict on its own task, shared by every response to that task."""

    category: Category | None  # None: the task is scorable
    reason: str = ""
    expectations: list[Expectation] = field(default_factory=list)
    expected_values: list[Any] = field(default_factory=list)  # decoded, per case
    symbols: dict[str, dict[str, bool]] = field(default_factory=dict)
    cases: list[CaseReport] = field(default_factory=list)
    containment: str = ""
    seconds: float = 0.0
    # The failure may be the machine's, not the task's (a timeout or no sandbox under load):
    # retried at once, and never cached.
    transient: bool = False


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
        # Comparisons run in killable workers under the row budget (row_judge.py).
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

    async def grade(self, task: Any, response: Any) -> GradeResult:
        """Grade one response to one task (a row dict, a challenge holding one problem, or a
        :class:`~critpt_grader.tasks.Task`). Raises :class:`GraderClosed` after ``aclose()``
        and :class:`RuntimeError` on a second event loop; every other problem is a result."""
        self._check_loop()
        started = time.perf_counter()
        self.judging.start()  # a comparison worker warms up while the sandboxes run
        try:
            task = load_task(task)
        except GraderError as exc:
            return GradeResult.of(Category.TASK_INVALID, reason=str(exc))
        result = await self._grade(task, response)
        timings = {**result.timings, "total": time.perf_counter() - started}
        return result.model_copy(update={"timings": timings})

    async def _grade(self, task: Task, response: Any) -> GradeResult:
        pid = task.problem_id
        extraction = extract(
            response,
            max_bytes=self.settings.source_bytes,
            entrypoint=task.entrypoint,
            fence=self.settings.fence,
        )
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
        preflight, cached = await self._preflight(task)
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

        started = time.perf_counter()
        run = await self.backend.run(self._job(task, extraction.source, "candidate"))
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
                _RUN_FAULTS[run.status], reason=run.detail or run.status, timings=timings, **common
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

    async def _preflight(self, task: Task) -> tuple[Preflight, bool]:
        key = _preflight_key(task)
        running = self._preflights.get(key)
        cached = running is not None
        if running is None:
            running = asyncio.get_running_loop().create_task(self._owned_preflight(task, key))
            running.add_done_callback(_retrieve)
            self._preflights[key] = running
            self._evict()
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
        preflight.transient = _transient(preflight, run)
        return preflight

    def _job(self, task: Task, source: str, role: str) -> Job:
        reference = role == "reference"
        return Job(
            source=source,
            entrypoint=task.reference_entrypoint if reference else task.entrypoint,
            cases=tuple(_case_inputs(case) for case in task.cases),
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


def _transient(preflight: Preflight, run: RunOutcome) -> bool:
    """Whether a failed preflight may be the machine's doing rather than the task's: no
    sandbox, a comparison starved of CPU, or the reference running out of time."""
    if preflight.category is None:
        return False
    if preflight.category is Category.PROVIDER_UNAVAILABLE:
        return True
    return run.status == "timeout" or any(case.kind == "timeout" for case in run.cases)


def _judge_case(
    index: int, expectation: Expectation, expected: Any, outcome: CaseOutcome, policy: Policy
) -> tuple[Category, str, CaseReport]:
    def report(status: str, detail: str, verdict: CaseVerdict | None = None) -> CaseReport:
        leaves = [_leaf_report(leaf) for leaf in verdict.leaves] if verdict else []
        return CaseReport(
            index=index, status=status, outcome=outcome.kind, detail=detail, leaves=leaves
        )

    where = f"case {index}"
    if outcome.kind == "not_run":
        detail = outcome.message or "not run: an earlier case decided the row"
        return _CASE_FAULTS["not_run"], f"{where}: {detail}", report("not_run", detail)
    if expectation.kind == "exception":
        if outcome.kind == "exception":
            # Only the expected builtin type or a builtin subclass of it (raised.py).
            verdict = compare_expectation(
                "exception", expectation.error_type, "exception", raised.Raised.of(outcome)
            )
            reason = verdict.leaves[0].reason
            if verdict.status == "equal":
                return Category.PASSED, "", report("equal", reason, verdict)
            detail = f"{reason}: {(outcome.message or '')[:200]}"
            return (
                Category.CANDIDATE_MISMATCH,
                f"{where}: {reason}",
                report("mismatch", detail, verdict),
            )
        if outcome.kind == "value":
            detail = "returned a value where an exception is expected"
            return Category.CANDIDATE_MISMATCH, f"{where}: {detail}", report("mismatch", detail)
    if outcome.kind != "value":
        detail = _outcome_detail(outcome)
        return _CASE_FAULTS[outcome.kind], f"{where}: {detail}", report("mismatch", detail)
    try:
        observed = codec.decode(outcome.value)
    except CodecError as exc:
        detail = f"the value does not decode: {exc}"
        return Category.CANDIDATE_INVALID_OUTPUT, f"{where}: {detail}", report("invalid", detail)
    verdict = compare_values(expected, observed, policy)
    status = verdict.status
    if status == "equal":
        return Category.PASSED, "", report("equal", "", verdict)
    first = verdict.first_difference()
    detail = f"{first.path or '/'}: {first.reason}" if first else status
    if status == "uncertain":
        return Category.COMPARATOR_UNCERTAIN, f"{where}: {detail}", report(status, detail, verdict)
    if status == "invalid":  # the expectation itself cannot be read: the task's fault, never 0
        return Category.TASK_INVALID, f"{where}: {detail}", report(status, detail, verdict)
    return Category.CANDIDATE_MISMATCH, f"{where}: {detail}", report(status, detail, verdict)


def _check_reference(task: Task, run: RunOutcome) -> Preflight:
    """Does the reference reproduce the stored expectations? Supplies them when absent."""
    if run.status == "unavailable":
        return Preflight(Category.PROVIDER_UNAVAILABLE, f"reference sandbox: {run.detail}")
    if run.status != "ok":
        return Preflight(
            Category.REFERENCE_ERROR, f"the reference did not run: {run.detail or run.status}"
        )
    if len(run.cases) != len(task.cases):
        return Preflight(Category.REFERENCE_ERROR, "the reference returned too few cases")
    preflight = Preflight(None, symbols=dict(run.symbols))
    for index, (case, outcome) in enumerate(zip(task.cases, run.cases, strict=True)):
        where = f"reference, case {index}"
        stored = case.expected
        if stored is not None and stored.kind == "exception":
            if outcome.kind != "exception":
                return Preflight(
                    Category.REFERENCE_MISMATCH,
                    f"{where}: an exception is expected, got {outcome.kind}",
                )
            failed = _reference_raise(stored, outcome, where)
            if failed is not None:
                return failed
            # The expectation is the type the row states, else the one the reference raised.
            expectation = Expectation(
                "exception",
                message=stored.message,
                error_type=stored.error_type or raised.Raised.of(outcome).qualname,
            )
            preflight.expectations.append(expectation)
            preflight.expected_values.append(None)
            continue
        if outcome.kind != "value":
            return Preflight(Category.REFERENCE_ERROR, f"{where}: {_outcome_detail(outcome)}")
        try:
            produced = codec.decode(outcome.value)
        except CodecError as exc:
            return Preflight(Category.REFERENCE_ERROR, f"{where}: {exc}")
        if stored is None:
            preflight.expectations.append(Expectation("value", value=outcome.value))
            preflight.expected_values.append(produced)
            continue
        try:
            expected = codec.decode(stored.value)
        except CodecError as exc:
            return Preflight(Category.TASK_INVALID, f"{where}: stored value: {exc}")
        verdict = compare_values(expected, produced, _policy(task, index, preflight.symbols))
        if verdict.status != "equal":
            first = verdict.first_difference()
            detail = f"{first.path or '/'}: {first.reason}" if first else verdict.status
            category = {
                "uncertain": Category.COMPARATOR_UNCERTAIN,
                "invalid": Category.TASK_INVALID,
            }.get(verdict.status, Category.REFERENCE_MISMATCH)
            leaves = [_leaf_report(leaf) for leaf in verdict.leaves]
            report = CaseReport(
                index=index, status=verdict.status, outcome="value", detail=detail, leaves=leaves
            )
            return Preflight(category, f"{where}: {detail}", cases=[report])
        preflight.expectations.append(stored)
        preflight.expected_values.append(expected)
    return preflight


def _reference_raise(stored: Expectation, outcome: CaseOutcome, where: str) -> Preflight | None:
    """The reference's raise judged by the rule candidates face: it must be able to meet
    its own expectation, or the task is at fault (never a candidate's 0)."""
    raise_ = raised.Raised.of(outcome)
    said = f"the reference raised {raise_.name}: {(outcome.message or '')[:200]}"
    why = raised.never_passes(raise_)
    if why is not None and raise_.builtin:
        # NameError, SystemExit, ...: the reference itself is broken.
        return Preflight(
            Category.REFERENCE_ERROR, f"{where}: {said} ({why}; no answer can match it)"
        )
    if stored.error_type is not None:
        met, reason = raised.judge(stored.error_type, raise_)
        if not met:
            return Preflight(
                Category.REFERENCE_MISMATCH, f"{where}: the row's error_type is not met: {reason}"
            )
        return None
    if why is not None:  # a class of its own or a library's: no answer could match it either
        return Preflight(
            Category.REFERENCE_ERROR,
            f"{where}: {said} ({why}); exception expectations are builtin types only",
        )
    return None


def _outcome_detail(outcome: CaseOutcome) -> str:
    if outcome.kind == "exception":
        return f"raised {raised.Raised.of(outcome).name}: {(outcome.message or '')[:200]}"
    if outcome.kind == "encode_error":
        return f"returned a value that cannot be encoded ({outcome.error_type})"
    return {"timeout": "ran out of time", "memory": "ran out of memory"}.get(
        outcome.kind, outcome.message or f"ended without a result ({outcome.kind})"
    )


def _case_inputs(case: Any) -> dict[str, Any]:
    if case.names is not None:
        return {"names": list(case.names)}
    return {"args": list(case.args), "kwargs": dict(case.kwargs)}


def _policy(task: Task, index: int, symbols: dict[str, dict[str, bool]]) -> Policy:
    # A case's leaf entry replaces the task's entry for the same path as a whole.
    leaves: dict[str, LeafTolerance] = {leaf.path: leaf for leaf in task.tolerances}
    leaves.update({leaf.path: leaf for leaf in task.cases[index].tolerances})
    return Policy(
        problem=task.problem,
        output_doc=task.output_doc,
        task_rtol=task.rtol,
        task_atol=task.atol,
        leaf_tolerances=tuple(leaves.values()),
        symbols=symbols,
    )


def _leaf_report(leaf: Any) -> LeafReport:
    tolerance = leaf.tolerance
    return LeafReport(
        path=leaf.path,
        kind=leaf.kind,
        status=leaf.status,
        reason=leaf.reason,
        tolerance=tolerance.text if tolerance else None,
        tolerance_source=tolerance.source if tolerance else None,
        expected=leaf.expected,
        observed=leaf.observed,
    )


def _preflight_key(task: Task) -> str:
    material = {
        "source": task.reference_source,
        "entry": task.reference_entrypoint,
        "setup": task.setup_source,
        "conversions": task.input_conversions,
        "cases": [
            [
                _case_inputs(c),
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
