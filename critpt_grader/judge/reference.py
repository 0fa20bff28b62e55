"""The reference rule: does the task's reference reproduce its stored expectations?

Pure, like :mod:`critpt_grader.judge.case`. The reference's run is judged by the same
comparator a candidate faces: a value that differs is ``reference_mismatch``, a raise the
reference itself could never meet is ``reference_error``, a stored value that does not decode
is ``task_invalid``, an undecided comparison ``comparator_uncertain`` — each makes the task
unscorable, so no candidate runs. Tasks without stored expectations (CritPt's own JSON) take
them from the reference's run. The verdict is a :class:`Preflight`, shared by every response
to the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from critpt_grader import codec, raised
from critpt_grader.compare import compare_values
from critpt_grader.errors import CodecError
from critpt_grader.judge.case import case_policy, leaf_report, outcome_detail
from critpt_grader.result import CaseReport
from critpt_grader.sandbox.base import CaseOutcome, RunOutcome
from critpt_grader.tasks import Expectation, Task
from critpt_grader.verdict import Category


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


def check_reference(task: Task, run: RunOutcome) -> Preflight:
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
            failed = reference_raise(stored, outcome, where)
            if failed is not None:
                return failed
            # The expectation is the type the row states, else the one the reference raised.
            expectation = Expectation(
                "exception",
                message=stored.message,
                error_type=stored.error_type or raised.Raised.of(outcome).builtin_type,
            )
            preflight.expectations.append(expectation)
            preflight.expected_values.append(None)
            continue
        if outcome.kind != "value":
            return Preflight(Category.REFERENCE_ERROR, f"{where}: {outcome_detail(outcome)}")
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
        verdict = compare_values(expected, produced, case_policy(task, index, preflight.symbols))
        if verdict.status != "equal":
            first = verdict.first_difference()
            detail = f"{first.path or '/'}: {first.reason}" if first else verdict.status
            category = {
                "uncertain": Category.COMPARATOR_UNCERTAIN,
                "invalid": Category.TASK_INVALID,
            }.get(verdict.status, Category.REFERENCE_MISMATCH)
            leaves = [leaf_report(leaf) for leaf in verdict.leaves]
            report = CaseReport(
                index=index, status=verdict.status, outcome="value", detail=detail, leaves=leaves
            )
            return Preflight(category, f"{where}: {detail}", cases=[report])
        preflight.expectations.append(stored)
        preflight.expected_values.append(expected)
    return preflight


def reference_raise(stored: Expectation, outcome: CaseOutcome, where: str) -> Preflight | None:
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
    if why is not None:  # a class of its own that is a never-pass type, or of unknown bases
        return Preflight(
            Category.REFERENCE_ERROR,
            f"{where}: {said} ({why}); exception expectations are builtin types only",
        )
    # A class of its own that passes stands for the most derived builtin it derives from.
    return None


def transient(preflight: Preflight, run: RunOutcome) -> bool:
    """Whether a failed preflight may be the machine's doing rather than the task's: no
    sandbox, a comparison starved of CPU, or the reference running out of time."""
    if preflight.category is None:
        return False
    if preflight.category is Category.PROVIDER_UNAVAILABLE:
        return True
    return run.status == "timeout" or any(case.kind == "timeout" for case in run.cases)
