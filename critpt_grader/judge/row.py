"""Judge a row within its comparison budget, and decide who pays for a value too costly to
compare.

The grader compares on its own host, with values a candidate chose. Every conversion checks
sizes before it works (:mod:`critpt_grader.compare.numbers`), and :class:`RowJudge` runs the
comparison of a row in a killable worker (:mod:`critpt_grader.judge.pool`) under the row's
budget: ``compare_seconds`` of CPU (default 10 s) and ``compare_memory_mb`` of address space
(default 1024 MiB). The rules:

* **Cases in order, each reported as it finishes.** A case the comparator decides keeps its
  verdict, even if a later case runs out of budget.
**Blame follows the value.** When the comparison of a case cannot finish, each value of the
case is *probed alone*: read as the comparator reads it, every constant evaluated, and every
expression with symbols evaluated at a seeded sample point of its own (fixed precision, under
the step's CPU cap), never compared with anything. The expected value is probed first:
if it cannot be had, the row is unscorable, whatever the candidate. If it can and the
candidate's cannot, the candidate scores 0. If both can, the pair was merely slow to decide:
unscorable, never the candidate's 0.

* **A value too costly to compare** (an ``OversizeValue`` the comparator let through, a
  ``MemoryError``, a ``RecursionError``) inside a case: the expected value is probed alone;
  too costly → ``comparator_uncertain`` (the task's value; unscorable, never the candidate's
  0). Otherwise the candidate's value alone: too costly → ``candidate_mismatch``, scored 0
  ("the candidate's value is too costly to compare"). Otherwise the pair →
  ``comparator_uncertain``.
* **A case that spends the row's budget** (the worker is killed): the two values of that case
  are probed alone, each in a fresh worker with half the share of the budget kept for probing
  (:data:`PROBE_SHARE`, 20 %: the comparison gets 8 s, each probe 1 s, so a row costs at most
  its budget). The expected value's probe failing (too costly, or past its budget) →
  ``comparator_uncertain``; then the candidate's failing → ``candidate_mismatch``; otherwise
  ``comparator_uncertain``: an unproved comparison that ran long (many undecided proofs) is
  not the candidate's fault. Later cases are ``not_run``. A worker starved of CPU by an
  overloaded host is ``provider_unavailable`` (retry), since it proves nothing about the
  values.
* **The row**: the first proven fault among its cases decides it (scored 0); otherwise any
  doubt makes it ``comparator_uncertain``; otherwise it passed.
* **The reference preflight** compares the stored expectations with the reference's values
  under the same budget; a value too costly there, or an overrun, makes the task unscorable
  (``comparator_uncertain``).

**Two lanes, so that no row waits behind a costly one.** Workers are few (one per core) and a
hostile row may keep one busy for its whole budget; with one queue, a few such rows in flight
held an honest row, whose comparison takes milliseconds, for tens of seconds. So every
comparison (a row's cases, a reference check) first runs in the **fast lane**
(``compare_workers`` workers) with a short CPU slice, ``compare_first_pass_seconds`` (0.5 s):
nearly every row is decided there. A job that needs more is stopped and goes on in the **slow
lane** (``compare_slow_workers``, by default half as many, so costly work never holds every
core; its workers run at a lower CPU priority, niceness :data:`SLOW_NICE`): a row starts again
at the case it was on, the cases already decided kept, with the row's budget less the CPU
those cases used, so the case gets exactly the budget it would have had in one lane, and
lanes never change a verdict, only when it arrives (a costly row pays at most one slice more
CPU). In each lane, rows waiting for a worker are served round-robin by client, then by task
(:mod:`critpt_grader.judge.lanes`), and one client's task holds at most all fast workers but
one, so a burst of costly rows of one task leaves a fast worker for the others.
``compare_first_pass_seconds=0`` is one lane of ``compare_workers``, as before.

With ``compare_in_process`` the same jobs run in a thread of the grader, with the size checks
but no budget: for unit tests only.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from critpt_grader import codec
from critpt_grader.codec.values import WireSet
from critpt_grader.compare import Policy
from critpt_grader.errors import CodecError
from critpt_grader.judge import case, reference
from critpt_grader.judge.case import Verdict
from critpt_grader.judge.lanes import FairSlots, client
from critpt_grader.judge.pool import (
    Budget,
    InlineRunner,
    JobOutcome,
    WorkerPool,
    request_retirement,
)
from critpt_grader.judge.reference import Preflight
from critpt_grader.policy.context import CaseContext
from critpt_grader.result import CaseReport
from critpt_grader.sandbox.base import CaseOutcome, RunOutcome
from critpt_grader.settings import Settings
from critpt_grader.symbolic.cpu_cap import CpuCapReached, run_with_cpu_cap
from critpt_grader.tasks import Expectation, Task
from critpt_grader.verdict import DISPOSITIONS, Category

# The share of a row's budget kept back for probing the candidate's value alone after the
# comparison ran out of it.
PROBE_SHARE = 0.2
# The niceness of slow-lane workers: beside a fast-lane worker (niceness 0) in the same
# scheduling group they get about a tenth of a core (weights 110 : 1024).
SLOW_NICE = 10
_JOBS = "critpt_grader.judge.row"
# What the comparison workers import before they fork: the jobs below, warm.
WARMUP = "critpt_grader.judge.warmup"


@dataclass(frozen=True, slots=True)
class CaseItem:
    """Everything one case's comparison needs, as plain picklable data."""

    index: int
    expectation: Expectation
    expected: Any  # the decoded expected value
    outcome: CaseOutcome
    policy: Policy


class RowJudge:
    """Judges rows for one :class:`~critpt_grader.pipeline.Grader`: owns the worker pool (or
    the in-process runner) and applies the rules of the module docstring.

    Coroutines may run concurrently on one event loop; :meth:`aclose` kills every worker.
    """

    def __init__(self, settings: Settings) -> None:
        memory = settings.compare_memory_mb
        first = settings.compare_first_pass_seconds
        self.two_lanes = first > 0
        nice = SLOW_NICE if self.two_lanes else 0  # the slow lane's (or the one lane's)
        probe = settings.compare_seconds * PROBE_SHARE
        self.budget = Budget(settings.compare_seconds, memory, nice)
        self.row_budget = Budget(settings.compare_seconds - probe, memory, nice)
        # One probe for each value of the stopped case: the expected value's, the candidate's.
        self.probe_budget = Budget(probe / 2, memory, nice)
        self.first_budget = Budget(min(first, self.row_budget.cpu_seconds) or 1.0, memory)
        fast = settings.compare_workers
        slow = settings.compare_slow_workers or max(1, fast // 2)
        self._sizes = (fast, slow) if self.two_lanes else (fast,)
        self.runner: WorkerPool | InlineRunner = (
            InlineRunner()
            if settings.compare_in_process
            else WorkerPool(self.budget, sum(self._sizes), warmup=WARMUP)
        )
        self._lanes: list[FairSlots] = []  # made on the event loop, at first use

    def start(self) -> None:
        """Warm one worker in the background (non-blocking; a no-op once one runs)."""
        self.runner.start()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.runner.close)

    def lane_counts(self) -> dict[str, dict[str, int]]:
        """Per lane (``fast`` and ``slow``, or ``one``): its workers, the comparisons running
        in them and those waiting for one (for ``/metrics``)."""
        names = ("fast", "slow") if self.two_lanes else ("one",)
        lanes = self._lanes or [FairSlots(size) for size in self._sizes]
        return {
            name: {"workers": lane.size, "busy": lane.busy, "waiting": lane.waiting}
            for name, lane in zip(names, lanes, strict=True)
        }

    def _lane(self, slow: bool) -> FairSlots:
        if not self._lanes:
            self._lanes = [FairSlots(size) for size in self._sizes]
            if self.two_lanes:  # one client's task never holds every fast worker
                self._lanes[0] = FairSlots(self._sizes[0], max(1, self._sizes[0] - 1))
        return self._lanes[-1 if slow else 0]

    async def _call(self, slow: bool, task: Task, fn, *args):
        # At most one waiting thread per worker of the lane: the others wait here, on the
        # loop, served round-robin by client, then by task.
        async with self._lane(slow).slot(client.get(), task.problem_id or ""):
            return await asyncio.to_thread(fn, *args)

    # -- the candidate's row --------------------------------------------------------------

    async def judge(
        self, task: Task, preflight: Preflight, run: RunOutcome
    ) -> tuple[Category, str, list[CaseReport]]:
        """The row's category, reason and per-case reports."""
        items = [
            CaseItem(
                index,
                expectation,
                expected,
                outcome,
                case.case_policy(task, index, preflight.symbols),
            )
            for index, (expectation, expected, outcome) in enumerate(
                zip(preflight.expectations, preflight.expected_values, run.cases, strict=True)
            )
        ]
        if not self.two_lanes:
            return await self._call(True, task, self._judge, items)
        target = f"{_JOBS}:judge_row"
        job = await self._call(False, task, self.runner.run, target, (items,), self.first_budget)
        done: list[Verdict] = [tuple(event) for event in job.events]  # type: ignore[misc]
        if job.finished:
            return row_verdict(done)
        if job.overrun in ("cpu", "wall"):
            # On in the slow lane from the case it was on, with what the row has left.
            rest = items[len(done) :]
            if not rest:  # stopped after its last case
                return row_verdict(done)
            spent = job.event_cpu_seconds[len(done) - 1] if done else 0.0
            left = max(self.row_budget.cpu_seconds - spent, 0.01)
            budget = replace(self.row_budget, cpu_seconds=left)
            return await self._call(True, task, self._judge, rest, budget, done)
        # Out of memory, or crashed: the values decide, as in one lane (the probe is slow work).
        return await self._call(True, task, self._finish, items, job, [], self.first_budget)

    def _judge(
        self, items: list[CaseItem], budget: Budget | None = None, done: list[Verdict] = ()
    ) -> tuple[Category, str, list[CaseReport]]:
        """Judge ``items`` in one job under ``budget`` (the row's), after the ``done`` cases."""
        budget = budget or self.row_budget
        job = self.runner.run(f"{_JOBS}:judge_row", (items,), budget)
        return self._finish(items, job, list(done), budget)

    def _finish(
        self, items: list[CaseItem], job: JobOutcome, done: list[Verdict], budget: Budget
    ) -> tuple[Category, str, list[CaseReport]]:
        verdicts = [*done, *(tuple(event) for event in job.events)]
        if not job.finished:
            left = items[len(job.events) :]
            verdicts.append(self._stopped_case(left[0], job, budget))
            detail = "not compared: the row's comparison budget was spent on an earlier case"
            for item in left[1:]:
                verdicts.append(_case(Category.COMPARATOR_UNCERTAIN, item, "not_run", detail))
        return row_verdict(verdicts)  # type: ignore[arg-type]

    def _stopped_case(self, item: CaseItem, job: JobOutcome, budget: Budget) -> Verdict:
        if job.overrun == "wall":
            detail = (
                f"the comparison got too little CPU time in {budget.wall_seconds:g} s "
                "of wall time (an overloaded host); retry"
            )
            return _case(Category.PROVIDER_UNAVAILABLE, item, "uncertain", detail)
        spent = f"{job.overrun}: {job.cpu_seconds:.1f} s of CPU" if job.overrun else "stopped"
        alone = f"reading and evaluating it alone needs more than {self.probe_budget.text()}"
        expected = self.runner.run(f"{_JOBS}:probe_expected", (item,), self.probe_budget)
        why = _probe_failure(expected, alone)
        if why is not None:
            detail = f"the expected value is too costly to compare ({why})"
            return _case(Category.COMPARATOR_UNCERTAIN, item, "uncertain", detail)
        probe = self.runner.run(f"{_JOBS}:probe_candidate", (item,), self.probe_budget)
        why = _probe_failure(probe, alone)
        if why is not None:
            return _too_costly(item, why)
        detail = (
            f"comparing it needed more than the row's budget ({self.row_budget.text()}; {spent}) "
            "though each value alone is cheap to evaluate"
        )
        return _case(Category.COMPARATOR_UNCERTAIN, item, "uncertain", detail)

    # -- the reference preflight ----------------------------------------------------------

    async def check_reference(self, task: Task, run: RunOutcome) -> Preflight:
        """The pipeline's reference check, run under the budget (a first pass in the fast
        lane, then, if it needs more, the whole check again in the slow lane)."""
        if not self.two_lanes:
            return await self._call(True, task, self._check_reference, task, run)
        target = f"{_JOBS}:check_reference"
        job = await self._call(False, task, self.runner.run, target, (task, run), self.first_budget)
        if job.finished:
            return job.value
        if job.overrun in ("cpu", "wall"):
            return await self._call(True, task, self._check_reference, task, run)
        return self._reference_stopped(job, self.first_budget)

    def _check_reference(self, task: Task, run: RunOutcome) -> Preflight:
        job = self.runner.run(f"{_JOBS}:check_reference", (task, run), self.budget)
        if job.finished:
            return job.value
        return self._reference_stopped(job, self.budget)

    @staticmethod
    def _reference_stopped(job: JobOutcome, budget: Budget) -> Preflight:
        if job.overrun == "wall":
            reason = "reference preflight: the comparison got too little CPU time; retry"
            return Preflight(Category.PROVIDER_UNAVAILABLE, reason)
        reason = (
            "reference preflight: comparing the reference's values with the expectations "
            f"needed more than the budget ({budget.text()}; {job.overrun})"
        )
        return Preflight(Category.COMPARATOR_UNCERTAIN, reason)


def row_verdict(verdicts: list[Verdict]) -> tuple[Category, str, list[CaseReport]]:
    """A proven candidate fault anywhere decides the row (0); otherwise any other verdict
    (a doubt, an unreadable expectation) makes it unscorable; otherwise it passed. The first
    of each kind in case order gives the reason."""
    reports = [report for _, _, report in verdicts]
    for category, reason, _ in verdicts:
        if DISPOSITIONS[category].outcome == "scored" and category is not Category.PASSED:
            return category, reason, reports
    for category, reason, _ in verdicts:
        if category is not Category.PASSED:
            return category, reason, reports
    return Category.PASSED, "every case matched", reports


# --- jobs: run in a worker (or in-process) ----------------------------------------------------


def judge_row(items: list[CaseItem]):
    """Yield ``(category, reason, report)`` for each case, in order."""
    for item in items:
        yield judge_item(item)


def judge_item(item: CaseItem) -> Verdict:
    """:func:`critpt_grader.judge.case.judge_case`, with a value too costly to compare
    attributed to whoever's value it is."""
    try:
        return case.judge_case(
            item.index, item.expectation, item.expected, item.outcome, item.policy
        )
    except _costly() as exc:
        if isinstance(exc, MemoryError):
            request_retirement()
        return _attribute(item, exc)


def _probe_failure(probe: JobOutcome, alone: str) -> str | None:
    """Why a probe job shows its value too costly: it said so, or it ran out of its budget."""
    if probe.finished:
        return probe.value
    if probe.overrun in ("cpu", "memory", "crashed"):
        return alone
    return None  # starved of CPU: it shows nothing about the value


def _attribute(item: CaseItem, exc: BaseException) -> Verdict:
    """Whose value made the comparison too costly: the expected alone (unscorable), the
    candidate's alone (0), or only the two together (unscorable)."""
    expected = probe_expected(item)
    if expected is not None:
        detail = f"the expected value is too costly to compare ({expected})"
        return _case(Category.COMPARATOR_UNCERTAIN, item, "uncertain", detail)
    candidate = probe_candidate(item)
    if candidate is not None:
        return _too_costly(item, candidate)
    detail = f"comparing the values is too costly ({_why(exc)})"
    return _case(Category.COMPARATOR_UNCERTAIN, item, "uncertain", detail)


def check_reference(task: Task, run: RunOutcome) -> Preflight:
    """:func:`critpt_grader.judge.reference.check_reference`, a value too costly to compare
    making the task unscorable."""
    try:
        return reference.check_reference(task, run)
    except _costly() as exc:
        if isinstance(exc, MemoryError):
            request_retirement()
        reason = f"reference preflight: a value is too costly to compare ({_why(exc)})"
        return Preflight(Category.COMPARATOR_UNCERTAIN, reason)


def probe_expected(item: CaseItem) -> str | None:
    """Why the expected value of this case is too costly to read and evaluate on its own, or
    None when it is not."""
    return probe_value(item.expected, item.expected, item.policy, candidate=False)


def probe_candidate(item: CaseItem) -> str | None:
    """Why the candidate's value of this case is too costly to read and evaluate on its own,
    or None when it is not (or is no value: the comparator reports that itself)."""
    if item.outcome.kind != "value":
        return None
    try:
        observed = codec.decode(item.outcome.value)
    except CodecError:
        return None
    except _costly() as exc:
        return _why(exc)
    return probe_value(observed, item.expected, item.policy, candidate=True)


def probe_value(value: Any, expected_root: Any, policy: Policy, *, candidate: bool) -> str | None:
    """Read every leaf of ``value`` as the comparator would, evaluate each constant
    expression to a number and each expression with symbols at a sample point of its own
    (:func:`~critpt_grader.symbolic.sampling.cost_at_a_point`); say why that is too costly, or
    None. A candidate's string is also read as mathematics, as the comparator reads it against
    a mathematical expectation. Any other failure (unreadable text, no finite value) is the
    comparator's to judge, not a cost."""
    from critpt_grader.compare.reading import (
        Categorical,
        Expr,
        as_number,
        expression_names,
        read_value,
        string_as_math,
    )
    from critpt_grader.symbolic.sampling import cost_at_a_point

    try:
        ctx = CaseContext(policy, expected_root)
        names = expression_names(expected_root)
    except _costly() as exc:
        return None if candidate else _why(exc)
    except Exception:
        return None
    seconds = policy.proof_step_cpu_seconds
    seen: set = set()  # expressions with symbols already evaluated
    for leaf in _leaves(value):
        try:
            read = read_value(ctx, leaf, names)
            if candidate and isinstance(read, Categorical):
                read = string_as_math(ctx, read.text)
            for part in _leaves(read):
                if isinstance(part, Expr) and not part.free and part.expr.is_number:
                    run_with_cpu_cap(lambda p=part: as_number(p), seconds)
                elif isinstance(part, Expr) and part.free and part.expr not in seen:
                    seen.add(part.expr)
                    costly = cost_at_a_point(part.expr, seconds)
                    if costly is not None:
                        return costly
        except _costly() as exc:
            if isinstance(exc, MemoryError):
                request_retirement()
            return _why(exc)
        except CpuCapReached:
            return f"evaluating it takes more than {seconds:g} s of CPU"
        except Exception:
            continue
    return None


def _costly() -> tuple[type[BaseException], ...]:
    """What makes a value too costly to compare. The comparator (and SymPy under it) loads
    only where comparisons run: the workers, never the grader process just for this."""
    from critpt_grader.compare.numbers import OversizeValue

    return (OversizeValue, MemoryError, RecursionError)


def _leaves(value: Any):
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(reversed(item))
        elif isinstance(item, WireSet):
            stack.extend(reversed(item.items))
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        else:
            yield item


def _why(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "it ran out of memory"
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return str(exc) or type(exc).__name__


def _too_costly(item: CaseItem, why: str) -> Verdict:
    detail = f"the candidate's value is too costly to compare ({why})"
    return _case(Category.CANDIDATE_MISMATCH, item, "mismatch", detail)


def _case(category: Category, item: CaseItem, status: str, detail: str) -> Verdict:
    report = CaseReport(
        index=item.index,
        status=status,
        outcome=item.outcome.kind,
        detail=detail,  # type: ignore[arg-type]
    )
    return category, f"case {item.index}: {detail}", report
