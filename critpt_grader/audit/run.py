"""Run an audit: every task's reference, probe inputs, mutants and reach probes through one
:class:`~critpt_grader.pipeline.Grader` and its warm sandboxes.

Per task, in order:

1. **Preflight.** The reference, graded as a candidate through the pipeline: its preflight
   must reproduce the stored expectations and it must then score 1. A task that fails is
   reported with the category and reason and audited no further (no mutant can be judged
   against it).
2. **Reference outputs.** The reference runs twice on the task's cases plus the probe inputs
   (:mod:`critpt_grader.audit.probes`); the probes where it leaves its domain are dropped, and
   a case whose two runs differ is noted (a reference that is not deterministic makes every
   "differs" below doubtful).
3. **Mutants** (:mod:`critpt_grader.audit.mutate`). Each is graded through the pipeline as
   any response is (the task's cached preflight, its tolerance, promises and conventions):
   not scored → **undecided**; scored 0 → **killed**. Scored 1, it runs on the cases and the
   probes: outcomes identical to the reference's everywhere → **equivalent**; equal under the
   strict oracle (:mod:`critpt_grader.audit.oracle`) at every case and probe → **equivalent**
   too (the same answer: proved equal, granted by a convention, or rounding); else a
   **survivor**, with the
   cases that did not tell it apart and what would: a probe input the task's rules reject it
   at, and the tolerance that would reject it at its largest difference.
4. **Reach probes** (:mod:`critpt_grader.audit.branches`) on the task's cases: the branches
   no case enters.

Before any task, the sandboxes start (:mod:`critpt_grader.audit.warmup`): that time is the
report's ``startup_seconds``, never a task's. A ``swap-parameters`` mutant that stays within
the task's rules at every case and probe is equivalent (the reference is symmetric in the two
up to rounding); inputs equal in every case are named by :mod:`critpt_grader.audit.diversity`
unless the swap proved the reference symmetric in them.

A task with a survivor is **weak**. Work is bounded by ``jobs``: at most that many tasks are
open at once (so their preflights stay cached) and that many sandbox runs in flight. The
verdicts do not depend on the order things finish in: every list is in the task's order.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from critpt_grader.audit import checks, diversity, oracle
from critpt_grader.audit.branches import Branch, branches
from critpt_grader.audit.findings import (
    AuditReport,
    CaseEvidence,
    Survivor,
    TaskAudit,
    TellingInput,
    TighterTolerance,
    Undecided,
    UnreachedBranch,
)
from critpt_grader.audit.mutate import Mutant, mutants, swap_description
from critpt_grader.audit.probes import PROBE_LIMIT, probe_cases, usable
from critpt_grader.audit.warmup import warm_up
from critpt_grader.pipeline import Grader
from critpt_grader.policy.tolerance import format_number
from critpt_grader.sandbox.base import CaseOutcome, Job, RunOutcome, SandboxBackend
from critpt_grader.settings import Settings
from critpt_grader.tasks import Task

MAX_MUTANTS = 200


@dataclass(frozen=True)
class AuditOptions:
    """``max_mutants`` per task (spread over the reference when it has more), ``probes`` per
    task at most, ``jobs``: tasks open and sandbox runs in flight at once (default: the
    sandbox limit of the settings)."""

    max_mutants: int = MAX_MUTANTS
    probes: int = PROBE_LIMIT
    jobs: int | None = None


Progress = Callable[[str, int], None]  # (problem id, units just finished)


@dataclass
class _Plan:
    task: Task
    mutants: list[Mutant] = field(default_factory=list)
    branches: list[Branch] = field(default_factory=list)
    error: str = ""

    @property
    def units(self) -> int:
        return 1 + len(self.mutants) + len(self.branches)


def plan(task: Task, options: AuditOptions) -> _Plan:
    """What will run for ``task`` (pure): its mutants and reach probes."""
    try:
        return _Plan(
            task,
            mutants(task.reference_source, options.max_mutants, task.reference_entrypoint),
            branches(task.reference_source, task.reference_entrypoint),
        )
    except SyntaxError as exc:
        return _Plan(task, error=f"the reference does not parse: {exc.msg} (line {exc.lineno})")


async def audit(
    tasks: list[Task],
    settings: Settings | None = None,
    options: AuditOptions | None = None,
    progress: Progress | None = None,
    *,
    on_plan: Callable[[int], None] | None = None,
    backend: SandboxBackend | None = None,
) -> AuditReport:
    """Audit ``tasks``; ``on_plan(total units)`` is called once before anything runs and
    ``progress`` as units finish. ``backend``: the sandboxes to use (default: the settings')."""
    settings = settings or Settings()
    options = options or AuditOptions()
    jobs = options.jobs or settings.max_concurrent_sandboxes
    plans = [plan(task, options) for task in tasks]
    if on_plan is not None:
        on_plan(sum(p.units for p in plans))
    started = time.perf_counter()
    async with Grader(settings, backend) as grader:
        # Start-up is timed apart, so no task's run_seconds carry it.
        startup = await warm_up(grader, jobs)
        auditor = _Auditor(grader, settings, options, jobs, progress or (lambda _id, _n: None))
        audits = await asyncio.gather(*(auditor.task(p) for p in plans))
    return AuditReport(
        list(audits),
        containment=auditor.containment,
        seconds=time.perf_counter() - started,
        startup_seconds=startup,
    )


@dataclass
class _Inputs:
    """A task's inputs for the audit and the reference's outcomes on them."""

    cases: list[dict[str, Any]]  # the task's own cases, job-shaped
    probes: list[tuple[int, dict[str, Any]]]  # (the case it came from, inputs)
    reference: list[CaseOutcome]  # on cases, then probes
    symbols: dict[str, dict[str, bool]]

    @property
    def all(self) -> list[dict[str, Any]]:
        return self.cases + [inputs for _, inputs in self.probes]


class _Auditor:
    def __init__(
        self, grader: Grader, settings: Settings, options: AuditOptions, jobs: int, progress
    ) -> None:
        self.grader = grader
        self.settings = settings
        self.options = options
        self.progress: Progress = progress
        self.open_tasks = asyncio.Semaphore(jobs)
        self.runs = asyncio.Semaphore(jobs)
        self.containment = ""

    @contextlib.asynccontextmanager
    async def _slot(self, found: TaskAudit) -> AsyncIterator[None]:
        """One of the ``jobs`` run slots, its time counted to the task that holds it (its
        wall ``seconds`` also count the waits behind other tasks)."""
        async with self.runs:
            started = time.perf_counter()
            try:
                yield
            finally:
                found.run_seconds += time.perf_counter() - started

    async def task(self, plan: _Plan) -> TaskAudit:
        async with self.open_tasks:
            started = time.perf_counter()
            found = await self._task(plan)
            found.seconds = time.perf_counter() - started
            return found

    async def _task(self, plan: _Plan) -> TaskAudit:
        task = plan.task
        cases = [case.job_inputs() for case in task.cases]
        found = TaskAudit(
            task.problem_id,
            task.origin,
            cases=len(cases),
            distinct_inputs=checks.distinct_inputs(cases),
            promises=checks.promises(task),
            looser_promises=checks.looser_promises(task),
        )
        names = diversity.parameter_names(task.reference_source, task.reference_entrypoint)
        found.indistinct_inputs = diversity.indistinct_inputs(cases, names)
        # A candidate's entry point is the task's; a mutant of the reference defines the
        # reference's (CritPt's ``real_answer``), so it is graded under that name.
        candidate_task = replace(task, entrypoint=task.reference_entrypoint)
        if plan.error:
            found.preflight, found.preflight_reason = "task_invalid", plan.error
            self.progress(task.problem_id, plan.units)
            return found
        async with self._slot(found):
            checked = await self.grader.grade(candidate_task, as_response(task.reference_source))
        self.containment = self.containment or checked.containment
        if checked.preflight == "failed" or checked.reward != 1:
            found.preflight = checked.category.value
            found.preflight_reason = checked.reason or "the reference does not pass as a candidate"
            self.progress(task.problem_id, plan.units)
            return found
        self.progress(task.problem_id, 1)

        inputs = await self._inputs(task, cases, found)
        if inputs is None:
            found.preflight = "provider_unavailable"
            found.preflight_reason = "the reference passed its preflight but could not run again"
            self.progress(task.problem_id, plan.units - 1)
            return found
        found.probes = len(inputs.probes)
        found.mutants = len(plan.mutants)
        outcomes = await asyncio.gather(
            *(self._mutant(candidate_task, inputs, m, found) for m in plan.mutants)
        )
        found.indistinct_inputs = _asymmetric(
            found.indistinct_inputs, plan.mutants, outcomes, inputs, names
        )
        for kind, detail in outcomes:
            if kind == "equivalent":
                found.equivalent += 1
            elif kind == "killed":
                found.killed += 1
            elif kind == "undecided":
                found.undecided.append(detail)
            else:
                found.survivors.append(detail)
        found.weak = bool(found.survivors)
        reached = await asyncio.gather(
            *(self._reached(task, inputs, b, found) for b in plan.branches)
        )
        found.branches = len(plan.branches)
        found.unreached_branches = [
            UnreachedBranch(b.line, b.what)
            for b, hit in zip(plan.branches, reached, strict=True)
            if not hit
        ]
        return found

    # -- the reference on cases and probes ---------------------------------------------------

    async def _inputs(self, task: Task, cases: list[dict], found: TaskAudit) -> _Inputs | None:
        """The inputs and the reference's outcomes on them; ``None`` when the reference,
        which just passed its preflight, cannot run again (no sandbox)."""
        candidates = probe_cases(cases, self.options.probes) if self.options.probes else []
        every = cases + [inputs for _, inputs in candidates]
        first, second = await asyncio.gather(
            self._reference_run(task, every, found), self._reference_run(task, every, found)
        )
        if first.status != "ok" or len(first.cases) != len(every):
            found.notes.append(f"no probe inputs: the reference's run on them ended {first.status}")
            again = await self._reference_run(task, cases, found)
            if again.status != "ok" or len(again.cases) != len(cases):
                return None
            return _Inputs(cases, [], list(again.cases), dict(again.symbols))
        if second.status != "ok" or len(second.cases) != len(every):
            found.notes.append(
                f"the reference's second run ended {second.status}: no check of its determinism"
            )
            second = first
        differs = [
            not oracle.identical(a, b) for a, b in zip(first.cases, second.cases, strict=True)
        ]
        unstable = [k for k in range(len(cases)) if differs[k]]
        if unstable:
            found.notes.append(
                "the reference is not deterministic: two runs differ at case "
                + ", ".join(map(str, unstable))
                + "; a mutant that differs there may not be wrong"
            )
        # A probe counts where the reference stays in its domain and gives one answer.
        kept = [
            (k, (origin, inputs))
            for k, (origin, inputs) in enumerate(candidates)
            if usable(first.cases[origin], first.cases[len(cases) + k])
            and not differs[len(cases) + k]
        ]
        if not candidates and cases and "names" in cases[0]:
            found.notes.append("no probe inputs: a CritPt task's inputs are the template's names")
        reference = first.cases[: len(cases)] + [first.cases[len(cases) + k] for k, _ in kept]
        return _Inputs(cases, [probe for _, probe in kept], reference, dict(first.symbols))

    async def _reference_run(self, task: Task, cases: list[dict], found: TaskAudit) -> RunOutcome:
        async with self._slot(found):
            return await self._run(task, task.reference_source, cases, "reference")

    # -- mutants -------------------------------------------------------------------------------

    async def _mutant(
        self, task: Task, inputs: _Inputs, mutant: Mutant, found: TaskAudit
    ) -> tuple[str, Any]:
        # Graded first, as any response is: most mutants are killed there, in one run.
        try:
            async with self._slot(found):
                result = await self.grader.grade(task, as_response(mutant.source))
                if result.outcome != "scored":
                    return "undecided", Undecided(
                        mutant.id, mutant.description, result.category.value, result.reason
                    )
                if result.reward != 1:
                    return "killed", None
                run = await self._run(task, mutant.source, inputs.all, "candidate")
            if _same_everywhere(run, inputs.reference):
                return "equivalent", None
            return await asyncio.to_thread(self._judge_survivor, task, inputs, mutant, run)
        finally:
            self.progress(task.problem_id, 1)

    def _judge_survivor(
        self, task: Task, inputs: _Inputs, mutant: Mutant, run: RunOutcome
    ) -> tuple[str, Any]:
        outcomes = list(run.cases) if run.status == "ok" else []
        outcomes += [CaseOutcome("not_run")] * (len(inputs.reference) - len(outcomes))
        n = len(inputs.cases)
        origins = list(range(n)) + [origin for origin, _ in inputs.probes]
        strict = oracle.strict_policy(task, inputs.symbols)
        differs = [
            k
            for k, (ref, out) in enumerate(zip(inputs.reference, outcomes, strict=True))
            if not oracle.judge(k, ref, out, strict).equal
        ]
        if not differs:
            return "equivalent", None
        judged = {
            k: oracle.judge(
                k,
                inputs.reference[k],
                outcomes[k],
                oracle.task_policy(task, origins[k], inputs.symbols),
            )
            for k in range(len(outcomes))
        }
        evidence = [
            CaseEvidence(
                k,
                oracle.inputs_text(inputs.cases[k]),
                oracle.shown(inputs.reference[k]),
                oracle.shown(outcomes[k]),
                _how(judged[k], k in differs, inputs.reference[k], outcomes[k]),
            )
            for k in range(n)
        ]
        telling = next((k for k in range(n, len(outcomes)) if not judged[k].equal), None)
        tells_apart = None
        if telling is not None:
            origin, probe = inputs.probes[telling - n]
            tells_apart = TellingInput(
                oracle.inputs_text(probe),
                origin,
                oracle.shown(inputs.reference[telling]),
                oracle.shown(outcomes[telling]),
                judged[telling].report.detail,
            )
        if mutant.operator == "swap-parameters" and tells_apart is None:
            # Swapped, it stays within the task's rules wherever the inputs were tried (a
            # reference symmetric in the two up to rounding): an answer the task accepts, not
            # a gap in its cases. Cases that never separate the two are the static check's.
            return "equivalent", None
        tighter = _tighter(differs, judged, inputs.reference, outcomes, n)
        return "survivor", Survivor(
            mutant.id,
            mutant.operator,
            mutant.description,
            mutant.line,
            mutant.diff(task.reference_source),
            "inputs" if tells_apart is not None else "tolerance",
            evidence,
            tells_apart,
            tighter,
            _advice(tells_apart, tighter),
        )

    # -- reach probes --------------------------------------------------------------------------

    async def _reached(self, task: Task, inputs: _Inputs, branch: Branch, found: TaskAudit) -> bool:
        try:
            async with self._slot(found):
                run = await self._run(task, branch.probe, inputs.cases, "candidate", stop=False)
        finally:
            self.progress(task.problem_id, 1)
        if run.status != "ok":
            return True  # the exit fired while the module loaded (or the run could not tell)
        return any(
            out.kind == "crashed" and ref.kind != "crashed"
            for ref, out in zip(inputs.reference, run.cases, strict=False)
        )

    async def _run(
        self, task: Task, source: str, cases: list[dict], role: str, *, stop: bool = True
    ) -> RunOutcome:
        job = Job(
            source=source,
            entrypoint=task.reference_entrypoint,
            cases=tuple(cases),
            limits=self.settings.limits(),
            setup_source=task.setup_source,
            input_conversions=task.input_conversions,
            role=role,  # type: ignore[arg-type]
            stop_on_fault=stop and role == "candidate",
        )
        return await self.grader.backend.run(job)


def as_response(source: str) -> str:
    """``source`` as a model's answer: one python fence longer than any backtick run in it."""
    longest, run = 0, 0
    for char in source:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}python\n{source}\n{fence}\n"


def _asymmetric(
    findings: list, planned: list[Mutant], outcomes: list, inputs: _Inputs, names: list[str]
) -> list:
    """The indistinct inputs a swap would matter for: a pair whose swap mutant came out
    equivalent while a probe gave the two different values is one the reference is symmetric
    in (a reduced mass in m1, m2), and no weakness."""
    kinds = {m.description: kind for m, (kind, _) in zip(planned, outcomes, strict=True)}
    probes = [probe for _, probe in inputs.probes]
    return [
        f
        for f in findings
        if not (
            kinds.get(swap_description(f.first, f.second)) == "equivalent"
            and diversity.differ_somewhere(probes, names, f.first, f.second)
        )
    ]


def _same_everywhere(run: RunOutcome, reference: list[CaseOutcome]) -> bool:
    return (
        run.status == "ok"
        and len(run.cases) == len(reference)
        and all(oracle.identical(r, o) for r, o in zip(reference, run.cases, strict=True))
    )


def _how(judged: oracle.Judged, differs: bool, reference: CaseOutcome, outcome: CaseOutcome) -> str:
    if oracle.identical(reference, outcome):
        return "identical"
    if not differs:
        return "the same answer (proved equal, or a freedom the statement grants)"
    tolerances = {
        leaf.tolerance for leaf in judged.report.leaves if leaf.tolerance and leaf.status == "equal"
    }
    if tolerances:
        return "within " + "; ".join(sorted(tolerances))
    return "equal under the task's rules"


def _tighter(
    differs: list[int],
    judged: dict[int, oracle.Judged],
    reference: list[CaseOutcome],
    outcomes: list[CaseOutcome],
    n: int,
) -> TighterTolerance | None:
    """At the largest relative difference among the task's cases (probes where there is none
    on a case) that the task's rules let pass: the tolerance that would catch it."""
    best: tuple[int, oracle.Difference] | None = None
    for k in [k for k in differs if k < n] or differs:
        if not judged[k].equal:
            continue
        difference = oracle.largest_difference(reference[k], outcomes[k])
        if difference is None:
            continue
        rank = (difference.relative is not None, difference.relative or difference.absolute)
        if best is None or rank > (
            best[1].relative is not None,
            best[1].relative or best[1].absolute,
        ):
            best = (k, difference)
    if best is None:
        return None
    k, difference = best
    path = "" if difference.path == "/" else difference.path
    leaf = next(
        (leaf for leaf in judged[k].report.leaves if leaf.path == path and leaf.tolerance), None
    )
    return TighterTolerance(
        k,
        difference.path,
        format_number(difference.relative) if difference.relative is not None else None,
        format_number(difference.absolute),
        leaf.tolerance if leaf is not None else "the task's rules",
        leaf.tolerance_source if leaf is not None else None,
        _in_force(leaf.tolerance, difference) if leaf is not None else "rtol",
    )


_WIDTH = re.compile(r"\b(rtol|atol)=([0-9.eE+-]+)")


def _in_force(text: str, difference: oracle.Difference) -> str:
    """Which width of a tolerance (its text: ``rtol=5e-12, atol=0.01 (task)``) decides at the
    leaf: the one that makes up all but 1% of ``atol + rtol·|value|`` there, else both."""
    widths = dict(_WIDTH.findall(text.split(" (", 1)[0]))
    if not widths:
        return "exact"
    scale = difference.absolute / difference.relative if difference.relative else Fraction(0)
    parts = {
        "rtol": Fraction(widths.get("rtol", "0")) * scale,
        "atol": Fraction(widths.get("atol", "0")),
    }
    total = sum(parts.values())
    if not total:
        return "rtol" if "rtol" in widths else "atol"
    deciding = [name for name, part in parts.items() if part > total / 100]
    return "+".join(deciding)


def _advice(tells_apart: TellingInput | None, tighter: TighterTolerance | None) -> str:
    said = []
    if tells_apart is not None:
        said.append(
            f"add a case at {_clip(tells_apart.inputs)} (if it is a physical input): "
            f"the reference gives {_clip(tells_apart.reference)}, "
            f"the mutant {_clip(tells_apart.mutant)}"
        )
    if tighter is not None:
        said.append(_tighter_advice(tighter))
    return "; ".join(said) or "no probe input told it apart: the task needs cases of another kind"


def _tighter_advice(tighter: TighterTolerance) -> str:
    # The width named is the one in force: an atol that lets a mutant pass is not narrowed
    # by an rtol (and an rtol has no meaning where the expected leaf is 0).
    if tighter.in_force == "atol" or tighter.relative is None:
        width = f"atol below {tighter.absolute}"
    elif tighter.in_force == "rtol+atol":
        width = f"atol + rtol·|value| below {tighter.absolute}"
    else:
        width = f"rtol below {tighter.relative}"
    where = f"case {tighter.case}" if tighter.path == "/" else f"case {tighter.case} {tighter.path}"
    if tighter.source == "promise":
        # A promise beats any stored tolerance: the statement is what to edit.
        return (
            f"the statement's promise admits it ({where}; now {tighter.allowed}): "
            f"if that accuracy is not meant, promise {width} in the statement (a stored "
            "tolerance would not apply: the promise rules)"
        )
    return f"a tolerance of {width} would reject it ({where}; now {tighter.allowed})"


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
